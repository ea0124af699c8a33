//! `ursa compile --kernel`: a bare `--kernel` makes every function a kernel,
//! `--kernel NAME` (repeatable) only the named ones, the others stay device
//! functions that the kernels call.

mod common;
use common::*;

const DEV: &str = "
function %twice(i32) -> i32 {
block0(v0: i32):
    v1 = iadd v0, v0
    return v1
}

function %k(i64, i32) {
    fn0 = %ursa_tid_x() -> i32
    fn1 = %twice(i32) -> i32
block0(v0: i64, v1: i32):
    v2 = call fn0()
    v3 = call fn1(v2)
    v4 = uextend.i64 v2
    v7 = iconst.i32 2
    v5 = ishl v4, v7
    v6 = iadd v0, v5
    store v3, v6
    return
}

function %k2(i64) {
block0(v0: i64):
    v1 = iconst.i32 7
    store v1, v0
    return
}
";

fn kinds(obj: &str) -> Vec<(String, bool)> {
    let o = ursa_emit::elf::read(&std::fs::read(obj).unwrap()).unwrap();
    o.functions.iter().map(|f| (f.name.clone(), f.kernel)).collect()
}

#[test]
fn named_kernels_call_device_functions() {
    let src = write("dev.clif", DEV);
    let obj = tmp("dev.o");
    let obj = obj.to_str().unwrap();
    for args in [vec!["compile", "--kernel", "k", "--kernel=%k2", &src, "-o", obj], vec!["compile", &src, "--kernel", "k", "--kernel", "k2", "-o", obj]] {
        let o = ursa(&args);
        assert!(o.status.success(), "{:?}: {}", args, stderr(&o));
        assert_eq!(kinds(obj), vec![("twice".into(), false), ("k".into(), true), ("k2".into(), true)]);
    }
    // The kernel calls the device function once per thread, over two CTAs.
    let o = ursa(&["run", obj, "--kernel", "k", "--grid", "2", "--block", "5", "--arg", "buf:o=i32[5]", "--arg", "u32:5", "--out", "o", "--strict"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(String::from_utf8_lossy(&o.stdout).trim(), "o = [0, 2, 4, 6, 8]");
    // A device function cannot be launched.
    let o = ursa(&["run", obj, "--kernel", "twice"]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("device function"), "{}", stderr(&o));
}

#[test]
fn bare_kernel_marks_every_function() {
    let src = write("all.clif", "function %k2(i64) {\nblock0(v0: i64):\n    return\n}\n\nfunction %k3(i64) {\nblock0(v0: i64):\n    return\n}\n");
    let obj = tmp("all.o");
    let obj = obj.to_str().unwrap();
    let o = ursa(&["compile", "--kernel", &src, "-o", obj]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(kinds(obj), vec![("k2".into(), true), ("k3".into(), true)]);
    let o = ursa(&["compile", &src, "-o", obj]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(kinds(obj), vec![("k2".into(), false), ("k3".into(), false)]);
}

#[test]
fn kernel_name_errors() {
    let src = write("err.clif", DEV);
    let o = ursa(&["compile", "--kernel", "nope", &src]);
    assert!(!o.status.success());
    let e = stderr(&o);
    assert!(e.contains("--kernel nope: the file defines no function %nope (its functions: %twice, %k, %k2)"), "{}", e);
    // A function returning values cannot be a kernel: named in the error.
    let o = ursa(&["compile", "--kernel", "twice", &src]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("function %twice: unsupported: a kernel cannot return values"), "{}", stderr(&o));
    // Bare and named together is ambiguous.
    let o = ursa(&["compile", "--kernel", "--kernel=k", &src]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("not both"), "{}", stderr(&o));
}
