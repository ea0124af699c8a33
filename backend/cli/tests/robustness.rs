//! Issue 12: bad or unusual input gets a clear error and a non-zero exit —
//! never a hang, an abort or a silent wrong answer. Each test here failed
//! before its fix (the comment says how).

mod common;
use common::*;

const KERNEL: &str = "function %k(i64, i32, i32) {
block0(v0: i64, v1: i32, v2: i32):
    v3 = iadd v1, v2
    store v3, v0
    return
}
";

fn kernel_object() -> String {
    let src = write("k.clif", KERNEL);
    let obj = tmp("k.o");
    let o = ursa(&["compile", "--kernel", &src, "-o", obj.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    obj.to_str().unwrap().to_string()
}

#[test]
fn buffer_arguments_are_bounded() {
    let obj = kernel_object();
    // Before: read /dev/zero forever.
    let o = ursa(&["run", &obj, "--kernel", "k", "--arg", "buf:x=file:/dev/zero", "--arg", "i32:1", "--arg", "i32:2"]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("buffer limit"), "{}", stderr(&o));
    // Before: wrapped to an 8-byte buffer and "succeeded".
    let o =
        ursa(&["run", &obj, "--kernel", "k", "--arg", "buf:x=i32[4611686018427387906]", "--arg", "i32:1", "--arg", "i32:2", "--out", "x"]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("buffer limit"), "{}", stderr(&o));
    // Before: aborted allocating 400 GB.
    let o = ursa(&["run", &obj, "--kernel", "k", "--arg", "buf:x=i32[99999999999]", "--arg", "i32:1", "--arg", "i32:2"]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("buffer limit"), "{}", stderr(&o));
    // A normal run still works.
    let o = ursa(&["run", &obj, "--kernel", "k", "--arg", "buf:x=i32[2]", "--arg", "i32:1", "--arg", "i32:2", "--out", "x"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(String::from_utf8_lossy(&o.stdout).contains("x = [3, 0]"));
}

#[test]
fn compiled_kernels_check_their_arguments() {
    let obj = kernel_object();
    let o = ursa(&["disasm", &obj]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(String::from_utf8_lossy(&o.stdout).contains(".param v1, 4"));
    // Before: an i64 for the i32 parameter shifted the rest silently.
    let o = ursa(&["run", &obj, "--kernel", "k", "--arg", "buf:x=i32[2]", "--arg", "i64:1", "--arg", "i32:2", "--out", "x"]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("parameter `v1` of `k` is 4 bytes"), "{}", stderr(&o));
    let o = ursa(&["run", &obj, "--kernel", "k", "--arg", "buf:x=i32[2]", "--arg", "i32:1"]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("takes 3 arguments"), "{}", stderr(&o));
}

#[test]
fn compile_refuses_two_functions_with_one_name() {
    let f = "function %f() -> i32 {\nblock0:\n    v0 = iconst.i32 1\n    return v0\n}\n";
    let src = write("dup.clif", &format!("{}{}", f, f));
    let o = ursa(&["compile", &src, "-o", tmp("dup.o").to_str().unwrap()]);
    assert!(!o.status.success());
    let e = stderr(&o);
    assert!(e.contains("%f is defined twice") && e.contains("dup.clif:1") && e.contains("dup.clif:6"), "{}", e);
}

#[test]
fn odd_names_give_objects_that_reassemble() {
    // Before: `u0:1` and `%1` became symbols `.func` rejects; `1.s` became `.kernel 1`.
    let src = write("1.clif", "function u0:1() -> i32 {\nblock0:\n    v0 = iconst.i32 1\n    return v0\n}\nfunction %2() -> i32 {\nblock0:\n    v0 = iconst.i32 2\n    return v0\n}\n");
    let obj = tmp("1.o");
    let o = ursa(&["compile", &src, "-o", obj.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let dis = ursa(&["disasm", obj.to_str().unwrap()]);
    assert!(dis.status.success(), "{}", stderr(&dis));
    let text = String::from_utf8_lossy(&dis.stdout).into_owned();
    assert!(text.contains(".func u0_1") && text.contains(".func _2"), "{}", text);
    let s = write("re.s", &text);
    let o = ursa(&["asm", &s, "-o", tmp("re.o").to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));

    let s = write("1.s", "EXIT ;\n");
    let o1 = tmp("1s.o");
    let o = ursa(&["asm", &s, "-o", o1.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let dis = ursa(&["disasm", o1.to_str().unwrap()]);
    assert!(String::from_utf8_lossy(&dis.stdout).contains(".kernel _1"));
}

#[test]
fn empty_function_body_is_a_clear_error() {
    // Before: "internal compiler error: register allocation failed".
    let src = write("empty.clif", "function %e() {\n}\n");
    let o = ursa(&["compile", &src, "-o", tmp("e.o").to_str().unwrap()]);
    assert!(!o.status.success());
    let e = stderr(&o);
    assert!(e.contains("body is empty") && !e.contains("internal"), "{}", e);
}

#[test]
fn traps_are_named_once() {
    // Before: "trap: trap: debug trap (BPT.TRAP 0x0)" for every trap code.
    let src = write(
        "sdiv.clif",
        "function %q(i64, i32, i32) {\nblock0(v0: i64, v1: i32, v2: i32):\n    v3 = sdiv v1, v2\n    store v3, v0\n    return\n}\n",
    );
    let obj = tmp("sdiv.o");
    let o = ursa(&["compile", "--kernel", &src, "-o", obj.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let obj = obj.to_str().unwrap();
    let o = ursa(&["run", obj, "--kernel", "q", "--arg", "buf:x=i32[1]", "--arg", "i32:-2147483648", "--arg", "i32:-1"]);
    assert!(!o.status.success());
    let e = stderr(&o);
    assert!(e.contains("integer overflow (int_ovf)") && !e.contains("trap: trap:"), "{}", e);
    let o = ursa(&["run", obj, "--kernel", "q", "--arg", "buf:x=i32[1]", "--arg", "i32:1", "--arg", "i32:0"]);
    assert!(stderr(&o).contains("integer division by zero (int_divz)"), "{}", stderr(&o));
    let src = write("user.clif", "function %u(i64) {\nblock0(v0: i64):\n    trap user7\n}\n");
    let obj = tmp("user.o");
    assert!(ursa(&["compile", "--kernel", &src, "-o", obj.to_str().unwrap()]).status.success());
    let o = ursa(&["run", obj.to_str().unwrap(), "--kernel", "u", "--arg", "buf:x=i32[1]"]);
    let e = stderr(&o);
    assert!(e.contains("user trap (user7)") && !e.contains("trap: trap:"), "{}", e);
}

#[test]
fn asm_refuses_what_disasm_could_not_print_back() {
    let s = write("bra.s", "BRA 0x5 ;\nEXIT ;\n");
    let o = ursa(&["asm", &s, "-o", tmp("bra.o").to_str().unwrap()]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("not on an instruction boundary"), "{}", stderr(&o));
    let s = write("imm.s", "IADD R0, R1, 0x123456789012 ;\n");
    let o = ursa(&["asm", &s, "-o", tmp("imm.o").to_str().unwrap()]);
    assert!(stderr(&o).contains("does not fit"), "{}", stderr(&o));
}

#[test]
fn test_runner_tally_and_line_numbers() {
    // Two identical failing run lines: each reported at its own line (before:
    // both at the first). A line the interpreter cannot run (it panics on a
    // load below its stack) passes on its expected value but says so, and the
    // tally counts it.
    let src = write(
        "lines.clif",
        "test run
function %one() -> i32 {
block0:
    v0 = iconst.i32 1
    return v0
}
; run: %one() == 2
; run: %one() == 1
; run: %one() == 2

function %below() -> i32 {
    ss0 = explicit_slot 4
block0:
    v0 = stack_addr.i64 ss0
    v1 = iconst.i64 -64
    v2 = iadd v0, v1
    v3 = load.i32 v2
    v4 = iconst.i32 0
    v5 = imul v3, v4
    return v5
}
; run: %below() == 0
",
    );
    let o = ursa(&["test", &src]);
    assert!(!o.status.success());
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(out.contains("lines.clif:7: run: %one() == 2"), "{}", out);
    assert!(out.contains("lines.clif:9: run: %one() == 2"), "{}", out);
    assert!(
        out.contains("PASS ") && out.contains("lines.clif:22") && out.contains("(not checked against the interpreter: it panicked"),
        "{}",
        out
    );
    let last = out.lines().last().unwrap();
    assert_eq!(last, "2 passed, 2 failed, 0 skipped (1 of the passed not checked against the interpreter)");
    // The counts stay readable as `N passed, N failed` (shared/conformance/run).
    assert!(last.split(" (").next().unwrap().ends_with("0 skipped"));
}

#[test]
fn test_runner_bounds_runaway_lines() {
    // Before: deep recursion overflowed the host stack inside
    // cranelift-interpreter (process killed); a line that never ends cost
    // ~10 s of interpreter fuel after the simulator's step limit.
    let src = write(
        "runaway.clif",
        "test run
function %rec(i64) -> i64 {
    fn0 = %rec(i64) -> i64
block0(v0: i64):
    brif v0, block1, block2
block1:
    v9 = iconst.i64 -1
    v1 = iadd v0, v9
    v2 = call fn0(v1)
    v8 = iconst.i64 1
    v3 = iadd v2, v8
    return v3
block2:
    return v0
}
; run: %rec(1000) == 1000
; run: %rec(10000000) == 10000000

function %spin(i32) -> i32 {
block0(v0: i32):
    jump block1(v0)
block1(v1: i32):
    v7 = iconst.i32 1
    v2 = iadd v1, v7
    jump block1(v2)
}
; run: %spin(1) == 0
",
    );
    let o = ursa(&["test", &src]);
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    assert_eq!(o.status.code(), Some(1), "{}\n{}", out, stderr(&o));
    assert!(out.contains("runaway.clif:17") && out.contains("stack) fault"), "{}", out);
    assert!(out.contains("runaway.clif:27") && out.contains("step limit"), "{}", out);
    assert!(out.ends_with("1 passed, 2 failed, 0 skipped\n"), "{}", out);
}

#[test]
fn test_runner_compares_trap_codes_with_the_interpreter() {
    // Both sides trap with the same code: the line fails (a run line expects
    // values) on the trap itself, named, with no disagreement reported.
    let src = write(
        "traps.clif",
        "test run
function %t(i32) -> i32 {
block0(v0: i32):
    trapnz v0, user9
    return v0
}
; run: %t(0) == 0
; run: %t(1) == 1

function %d(i32, i32) -> i32 {
block0(v0: i32, v1: i32):
    v2 = sdiv v0, v1
    return v2
}
; run: %d(-2147483648, -1) == 0
",
    );
    let o = ursa(&["test", &src]);
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(out.contains("traps.clif:8") && out.contains("user trap (user9)"), "{}", out);
    assert!(out.contains("traps.clif:15") && out.contains("integer overflow (int_ovf)"), "{}", out);
    assert!(!out.contains("traps with"), "{}", out);
    assert!(out.ends_with("1 passed, 2 failed, 0 skipped\n"), "{}", out);
}

/// A call to a function the file does not define is a compile error naming
/// the caller and the callee (issue: kernels), not an object `run` refuses.
#[test]
fn undefined_callee_is_a_compile_error() {
    let src = write(
        "undef.clif",
        "function %f(i32) -> i32 {\n    fn0 = %g(i32) -> i32\nblock0(v0: i32):\n    v1 = call fn0(v0)\n    return v1\n}\n",
    );
    let out = tmp("undef.o");
    let o = ursa(&["compile", &src, "-o", out.to_str().unwrap()]);
    assert!(!o.status.success());
    let e = stderr(&o);
    assert!(e.contains("undef.clif:1: function %f calls %g, which is neither defined in this file nor an intrinsic"), "{}", e);
    assert!(!out.exists(), "no object is written");
}
