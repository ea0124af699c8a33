mod common;
use common::*;

#[test]
fn iadd_in_a_device_function() {
    assert_eq!(call("    IADD R4, R4, R5 ;", &[1, 2], 1), vec![3]);
}
