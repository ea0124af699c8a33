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

/// Runs kernel `k` of object `obj` (arguments: buffer `o` of 5 i32, the u32 5) over
/// `grid` CTAs of 5 threads, strict; asserts success and returns the printed
/// buffer `o`.
fn run_k(obj: &str, grid: u32) -> String {
    let grid = grid.to_string();
    let args =
        ["run", obj, "--kernel", "k", "--grid", &grid, "--block", "5", "--arg", "buf:o=i32[5]", "--arg", "u32:5", "--out", "o", "--strict"];
    let o = ursa(&args);
    assert!(o.status.success(), "{}", stderr(&o));
    String::from_utf8_lossy(&o.stdout).trim().to_string()
}

#[test]
fn named_kernels_call_device_functions() {
    let src = write("dev.clif", DEV);
    let obj = tmp("dev.o");
    let obj = obj.to_str().unwrap();
    for args in [
        vec!["compile", "--kernel", "k", "--kernel=%k2", &src, "-o", obj],
        vec!["compile", &src, "--kernel", "k", "--kernel", "k2", "-o", obj],
    ] {
        let o = ursa(&args);
        assert!(o.status.success(), "{:?}: {}", args, stderr(&o));
        assert_eq!(kinds(obj), vec![("twice".into(), false), ("k".into(), true), ("k2".into(), true)]);
    }
    // The kernel calls the device function once per thread, over two CTAs.
    assert_eq!(run_k(obj, 2), "o = [0, 2, 4, 6, 8]");
    // A device function cannot be launched.
    let o = ursa(&["run", obj, "--kernel", "twice"]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("device function"), "{}", stderr(&o));
}

#[test]
fn bare_kernel_marks_every_function() {
    let src =
        write("all.clif", "function %k2(i64) {\nblock0(v0: i64):\n    return\n}\n\nfunction %k3(i64) {\nblock0(v0: i64):\n    return\n}\n");
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

/// A kernel that reverses `a` through dynamic shared memory (after the
/// file's static variable `flag`).
const DYN: &str = "
; ursa.shared %ursa_shared_flag 4
function %rev(i64) {
    gv0 = symbol %ursa_shared_dynamic
    gv1 = symbol %ursa_shared_flag
    fn0 = %ursa_tid_x() -> i32
    fn1 = %ursa_ntid_x() -> i32
    fn3 = %ursa_barrier()
block0(v0: i64):
    v2 = call fn0()
    v3 = call fn1()
    v4 = symbol_value.i64 gv0
    v5 = uextend.i64 v2
    v6 = iconst.i32 2
    v7 = ishl v5, v6
    v8 = iadd v4, v7
    v9 = iadd v0, v7
    v10 = load.i32 v9
    store v10, v8
    call fn3()
    v11 = iconst.i32 1
    v12 = isub v3, v11
    v13 = isub v12, v2
    v14 = uextend.i64 v13
    v15 = ishl v14, v6
    v16 = iadd v4, v15
    v17 = load.i32 v16
    store v17, v9
    return
}
";

#[test]
fn static_and_dynamic_shared_memory() {
    let src = write("dyn.clif", DYN);
    let obj = tmp("dyn.o");
    let obj = obj.to_str().unwrap();
    let o = ursa(&["compile", "--kernel", &src, "-o", obj, "-S", "--stats"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = String::from_utf8_lossy(&o.stdout);
    // The static variable takes bytes 0-3; the dynamic memory starts at 16.
    assert!(text.contains(".shared 16"), "{}", text);
    assert!(text.contains("STS [R") && text.contains("LDS R"), "{}", text);
    assert!(stderr(&o).contains("0 bytes stack, 16 bytes shared"), "{}", stderr(&o));
    let run = |shared: &str| {
        ursa(&[
            "run",
            obj,
            "--kernel",
            "rev",
            "--block",
            "6",
            "--shared",
            shared,
            "--arg",
            "buf:a=i32:1,2,3,4,5,6",
            "--out",
            "a",
            "--strict",
        ])
    };
    let o = run("24");
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(String::from_utf8_lossy(&o.stdout).trim(), "a = [6, 5, 4, 3, 2, 1]");
    // Too little dynamic memory for 6 threads: an out-of-bounds trap.
    let o = run("16");
    assert!(!o.status.success());
    assert!(stderr(&o).contains("out-of-bounds shared access"), "{}", stderr(&o));
    // More than a CTA can have: refused before running.
    let o = run("1000000");
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains("one CTA needs 1000016 bytes of shared memory (16 static + 1000000 dynamic), more than the 163840 bytes"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn shared_memory_errors() {
    // No directive for a variable.
    let src = write("nodir.clif", &DYN.replace("; ursa.shared %ursa_shared_flag 4\n", ""));
    let o = ursa(&["compile", "--kernel", &src]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("function %rev: unsupported: shared variable %ursa_shared_flag has no `; ursa.shared"), "{}", stderr(&o));
    // Over the static limit.
    let src = write("big.clif", &DYN.replace("%ursa_shared_flag 4", "%ursa_shared_flag 49153"));
    let o = ursa(&["compile", "--kernel", &src]);
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains(
            "line 2: %ursa_shared_flag ends at byte 49153: the file's static shared memory exceeds the limit of 49152 bytes per CTA"
        ),
        "{}",
        stderr(&o)
    );
    // Malformed directives.
    for (bad, want) in [
        ("%ursa_shared_flag", "is not a shared-memory directive"),
        ("%ursa_shared_flag 4 align 3", "alignment 3 is not a power of two"),
        ("%tile 4", "`%tile` is not a %ursa_shared_NAME symbol"),
        ("%ursa_shared_flag x", "`x` is not a number"),
        // Issue 25, item 11: this said "is not a number".
        ("%ursa_shared_flag 4294967296", "4294967296 is too large (at most 4294967295)"),
        ("%ursa_shared_dynamic 4", "is the dynamic shared memory"),
    ] {
        let src = write("bad.clif", &DYN.replace("%ursa_shared_flag 4", bad));
        let o = ursa(&["compile", "--kernel", &src]);
        assert!(!o.status.success(), "{}", bad);
        assert!(stderr(&o).contains(want), "{}: {}", bad, stderr(&o));
    }
    // Declared twice.
    let src = write("twice.clif", &format!("; ursa.shared %ursa_shared_flag 8\n{}", DYN));
    let o = ursa(&["compile", "--kernel", &src]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("is declared again (first at line 1)"), "{}", stderr(&o));
}

#[test]
fn kernel_shared_size_covers_its_device_functions() {
    let text = "
; ursa.shared %ursa_shared_a 64
; ursa.shared %ursa_shared_b 256 align 16
function %dev(i32) {
    gv0 = symbol %ursa_shared_b
block0(v0: i32):
    v1 = symbol_value.i64 gv0
    store v0, v1
    return
}

function %k(i32) {
    gv0 = symbol %ursa_shared_a
    fn0 = %dev(i32)
block0(v0: i32):
    v1 = symbol_value.i64 gv0
    store v0, v1
    call fn0(v0)
    return
}
";
    let src = write("prop.clif", text);
    let obj = tmp("prop.o");
    let o = ursa(&["compile", "--kernel", "k", &src, "-o", obj.to_str().unwrap(), "--stats"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let e = stderr(&o);
    // b is at 64..320; the kernel itself names only a (0..64).
    assert!(e.lines().any(|l| l.starts_with("%dev:") && l.contains("320 bytes shared")), "{}", e);
    assert!(e.lines().any(|l| l.starts_with("%k:") && l.contains("320 bytes shared")), "{}", e);
    let f = ursa_emit::elf::read(&std::fs::read(&obj).unwrap()).unwrap();
    assert_eq!(f.functions.iter().map(|f| (f.name.as_str(), f.shared_size)).collect::<Vec<_>>(), vec![("dev", 320), ("k", 320)]);
}

#[test]
fn unsupported_atomics_are_errors_naming_the_instruction() {
    for (body, want) in [("v2 = atomic_rmw.i32 add v4, v3", "an atomic needs a 64-bit (generic) address")] {
        let text = format!(
            "function %f(i64, i8) {{\nblock0(v0: i64, v1: i8):\n    v3 = iconst.i32 1\n    v4 = iconst.i32 0\n    {}\n    return\n}}\n",
            body
        );
        let src = write("atom.clif", &text);
        let o = ursa(&["compile", "--kernel", &src]);
        assert!(!o.status.success(), "{}", body);
        let e = stderr(&o);
        assert!(e.contains(want) && e.contains(&format!("`{}", body)), "{}: {}", body, e);
    }
}

/// A kernel whose device function calls another, each with a stack frame:
/// the kernel's local memory holds the deepest chain of frames, not only its
/// own (before, the inner call's stores trapped as out-of-bounds local
/// accesses).
const CHAIN: &str = "
function %inner(i32) -> i32 {
    ss0 = explicit_slot 16
block0(v0: i32):
    v1 = iconst.i32 3
    v2 = imul v0, v1
    v4 = stack_addr.i64 ss0+12
    store v2, v4
    v3 = load.i32 v4
    return v3
}

function %outer(i32) -> i32 {
    ss0 = explicit_slot 32
    fn0 = %inner(i32) -> i32
block0(v0: i32):
    v4 = stack_addr.i64 ss0+28
    store v0, v4
    v1 = call fn0(v0)
    v2 = load.i32 v4
    v3 = iadd v1, v2
    return v3
}

function %k(i64, i32) {
    fn0 = %outer(i32) -> i32
    fn1 = %ursa_tid_x() -> i32
block0(v0: i64, v1: i32):
    v2 = call fn1()
    v3 = icmp ult v2, v1
    brif v3, block1, block2
block1:
    v4 = call fn0(v2)
    v5 = uextend.i64 v2
    v8 = iconst.i64 2
    v6 = ishl v5, v8
    v7 = iadd v0, v6
    store aligned v4, v7
    jump block2
block2:
    return
}
";

#[test]
fn kernel_stack_holds_the_deepest_call_chain() {
    let src = write("chain.clif", CHAIN);
    let obj = tmp("chain.o");
    let obj = obj.to_str().unwrap();
    let o = ursa(&["compile", "--kernel", "k", &src, "-o", obj]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(run_k(obj, 1), "o = [0, 4, 8, 12, 16]");
}
