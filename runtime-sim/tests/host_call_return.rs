//! A device function called from the host (`Gpu::call`) returns whatever
//! the number of instructions it ran before its `RET`, in particular when the
//! `RET` is the last instruction of a scheduling quantum (4096 instructions):
//! the return to the host ends the thread, which is progress, not a deadlock.
//! Found by the program generator (`ursa fuzz`, seed 1592592183).
mod common;
use common::*;

#[test]
fn return_to_host_at_any_instruction_count() {
    for n in (4090u32..=4100).chain(8190..=8194) {
        let body = "    IADD R4, R4, 0x1 ;\n".repeat(n as usize - 1);
        assert_eq!(call(&body, &[0], 1), vec![n - 1], "{} instructions before RET", n - 1);
    }
}
