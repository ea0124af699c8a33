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
    assert!(String::from_utf8_lossy(&o.stdout).contains(".param v1, i32"));
    // Before: an i64 for the i32 parameter shifted the rest silently.
    let o = ursa(&["run", &obj, "--kernel", "k", "--arg", "buf:x=i32[2]", "--arg", "i64:1", "--arg", "i32:2", "--out", "x"]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("argument 2 (`i64:1`) is i64, but parameter `v1` of `k` is i32"), "{}", stderr(&o));
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

/// Issue 25, item 1: a function defined under a reserved `%ursa_` name was
/// compiled, and a kernel calling it silently got the intrinsic instead
/// (`o = [7]` for `--block 7`); `ursa test` panicked in cranelift-interpreter
/// (the name twice in its function store, exit 101).
#[test]
fn reserved_names_are_not_functions() {
    let body = |name: &str| {
        format!(
            "test run\nfunction %{}() -> i32 {{\nblock0:\n    v0 = iconst.i32 42\n    return v0\n}}\n; run: %{}() == 42\n\n\
             function %k(i64) {{\n    fn0 = %{}() -> i32\nblock0(v0: i64):\n    v1 = call fn0()\n    store v1, v0\n    return\n}}\n",
            name, name, name
        )
    };
    for (name, why) in [
        ("ursa_ntid_x", "%ursa_ntid_x is a kernel intrinsic, not a function"),
        ("ursa_foo", "names starting with %ursa_ are reserved for kernel intrinsics, and %ursa_foo is none of them"),
        ("ursa_rt_udiv64", "%ursa_rt_udiv64 is a routine of Ursa's runtime library, which only the compiler defines and calls"),
    ] {
        let src = write(&format!("{}.clif", name), &body(name));
        let want = format!("a function cannot be named %{}: {} (rename it)", name, why);
        let out = tmp(&format!("{}.o", name));
        let o = ursa(&["compile", "--kernel", "k", &src, "-o", out.to_str().unwrap()]);
        assert!(!o.status.success() && stderr(&o).contains(&want), "{}", stderr(&o));
        assert!(!out.exists(), "no object is written");
        let o = ursa(&["test", &src]);
        let text = String::from_utf8_lossy(&o.stdout).into_owned() + &stderr(&o);
        assert_eq!(o.status.code(), Some(1), "{}", text);
        assert!(text.contains(&format!("{}.clif:2: {}", name, want)), "{}", text);
    }
}

/// The runtime's routines (`%ursa_rt_*`, 64-bit division) are called by
/// the compiler only: an input that calls one, or takes its address, is
/// refused, though every object that divides defines them.
#[test]
fn runtime_routines_are_the_compilers_own() {
    let why = "%ursa_rt_sdiv64 is a routine of Ursa's runtime library, which only the compiler defines and calls";
    for (file, inst) in [("rtcall", "v2 = call fn0(v0, v1)"), ("rtaddr", "v2 = func_addr.i64 fn0")] {
        let src = write(
            &format!("{}.clif", file),
            &format!(
                "function %f(i64, i64) -> i64 {{\n    fn0 = %ursa_rt_sdiv64(i64, i64) -> i64\nblock0(v0: i64, v1: i64):\n    {}\n    return v2\n}}\n",
                inst
            ),
        );
        let o = ursa(&["compile", &src, "-o", tmp(&format!("{}.o", file)).to_str().unwrap()]);
        assert!(!o.status.success());
        assert!(stderr(&o).contains(why), "{}", stderr(&o));
    }
    // A division that needs the routine links it into the object.
    let src = write("rtlink.clif", "function %f(i64, i64) -> i64 {\nblock0(v0: i64, v1: i64):\n    v2 = sdiv v0, v1\n    return v2\n}\n");
    let o = ursa(&["compile", &src, "-S", "-o", tmp("rtlink.o").to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("CALL R[20:21], ursa_rt_sdiv64") && text.contains(".func ursa_rt_sdiv64"), "{}", text);
}

/// Issue 25, items 1 and 11: `func_addr` of an intrinsic said the callee was
/// "neither defined in this file nor an intrinsic".
#[test]
fn an_intrinsic_has_no_address() {
    let src = write(
        "addr.clif",
        "function %f() -> i64 {\n    fn0 = %ursa_tid_x() -> i32\nblock0:\n    v0 = func_addr.i64 fn0\n    return v0\n}\n",
    );
    let o = ursa(&["compile", &src, "-o", tmp("addr.o").to_str().unwrap()]);
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains("cannot take the address of %ursa_tid_x: %ursa_tid_x is a kernel intrinsic, not a function"),
        "{}",
        stderr(&o)
    );
}

/// Issue 25, item 4: `tls_value` of a shared-memory symbol compiled to the
/// shared address; a thread-local view of CTA memory has no address.
#[test]
fn shared_memory_is_not_thread_local() {
    let src = write(
        "tls.clif",
        "; ursa.shared %ursa_shared_x 16\nfunction %k(i64) {\n    gv0 = symbol tls %ursa_shared_x\nblock0(v0: i64):\n    \
         v1 = tls_value.i64 gv0\n    store v1, v0\n    return\n}\n",
    );
    let o = ursa(&["compile", "--kernel", &src, "-o", tmp("tls.o").to_str().unwrap()]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("shared variable %ursa_shared_x cannot be thread-local"), "{}", stderr(&o));
}

/// Issue 25, item 5: an object whose `.param` offset is patched to
/// 0xfffffff0 took 12-18 s and 8.4 GB before the launch refused it; now
/// loading it fails at once.
#[test]
fn a_parameter_offset_past_the_bank_is_refused_at_load() {
    let obj = asm_object("pq", ".kernel k\n.param pqr, 4\nEXIT ;\n");
    let mut bytes = std::fs::read(&obj).unwrap();
    // The parameter record: name length, name, offset, size.
    let rec = [3, 0, 0, 0, b'p', b'q', b'r', 0, 0, 0, 0, 4, 0, 0, 0];
    let at = bytes.windows(rec.len()).position(|w| w == rec).expect("the parameter record");
    bytes[at + 7..at + 11].copy_from_slice(&0xfffffff0u32.to_le_bytes());
    std::fs::write(&obj, &bytes).unwrap();
    let want = "parameter `pqr`: a parameter of 4 bytes at offset 4294967280 ends past the 65184 bytes";
    let o = ursa(&["run", &obj, "--kernel", "k", "--arg", "i32:1"]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains(want), "{}", stderr(&o));
    let o = ursa(&["disasm", &obj]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains(want), "{}", stderr(&o));
}

/// Issue 25, item 8: `test`, `compile`, `asm`, `disasm` and `run` read an
/// endless input (5.5-7.5 GB in 10 s) where a `buf:NAME=file:` argument
/// was already capped.
#[test]
fn every_input_file_is_bounded() {
    let out = tmp("zero.o");
    let out = out.to_str().unwrap();
    for args in [
        vec!["test", "/dev/zero"],
        vec!["compile", "/dev/zero", "-o", out],
        vec!["asm", "/dev/zero", "-o", out],
        vec!["disasm", "/dev/zero"],
        vec!["run", "/dev/zero", "--kernel", "k"],
    ] {
        let o = ursa(&args);
        let text = String::from_utf8_lossy(&o.stdout).into_owned() + &stderr(&o);
        assert!(!o.status.success(), "{:?}", args);
        assert!(text.contains("/dev/zero: longer than the input limit of 268435456 bytes (256 MiB)"), "{:?}: {}", args, text);
    }
}

/// Issue 25, item 12: `run` took `u32:-1` and `f32:1e40` (infinity), empty
/// and duplicate buffer names, a CTA or grid beyond CUDA's limits, and a
/// `--timeline` file that is the input object (overwritten); item 11: a
/// number too large for `--grid` said it was "not a number", a device
/// function given as the kernel said "… not a kernel in kernel `dev`".
#[test]
fn run_checks_values_names_and_dimensions() {
    let obj = &asm_object("args", ".kernel k\n.param a, 4\n.param p, 8\n.param q, 8\nEXIT ;\n.func dev\nRET R[20:21] ;\n");
    let run = |extra: &[&str]| {
        let mut args = vec!["run", obj];
        args.extend_from_slice(extra);
        ursa(&args)
    };
    for (extra, want) in [
        (
            &["--kernel", "k", "--arg", "u32:-1", "--arg", "buf:x=i32[1]", "--arg", "buf:y=i32[1]"][..],
            "argument 1 (`u32:-1`): `-1` is outside the range of u32 (0 to 4294967295)",
        ),
        (
            &["--kernel", "k", "--arg", "i32:2147483648", "--arg", "buf:x=i32[1]", "--arg", "buf:y=i32[1]"],
            "`2147483648` is outside the range of i32 (-2147483648 to 2147483647)",
        ),
        (
            &["--kernel", "k", "--arg", "f32:1e40", "--arg", "buf:x=i32[1]", "--arg", "buf:y=i32[1]"],
            "argument 1 (`f32:1e40`): `1e40` is beyond the range of f32",
        ),
        (&["--kernel", "k", "--arg", "i32:x", "--arg", "buf:x=i32[1]", "--arg", "buf:y=i32[1]"], "`x` is not a value of type i32"),
        (
            &["--kernel", "k", "--arg", "i32:1", "--arg", "buf:=i32[1]", "--arg", "buf:y=i32[1]"],
            "argument 2 (`buf:=i32[1]`): the buffer has no name",
        ),
        (
            &["--kernel", "k", "--arg", "i32:1", "--arg", "buf:x=i32[1]", "--arg", "buf:x=i32[1]"],
            "argument 3 (`buf:x=i32[1]`): a buffer named `x` is given twice",
        ),
        (
            &["--kernel", "k", "--arg", "i32:1", "--arg", "buf:x=i32[1]", "--arg", "buf:y=i32[1]", "--grid", "4294967296"],
            "--grid: X = 4294967296 is outside 1 to 2147483647 (CUDA's limit)",
        ),
        (
            &["--kernel", "k", "--arg", "i32:1", "--arg", "buf:x=i32[1]", "--arg", "buf:y=i32[1]", "--grid", "1,65536"],
            "--grid: Y = 65536 is outside 1 to 65535",
        ),
        (
            &["--kernel", "k", "--arg", "i32:1", "--arg", "buf:x=i32[1]", "--arg", "buf:y=i32[1]", "--block", "1,1,65"],
            "--block: Z = 65 is outside 1 to 64",
        ),
        (
            &["--kernel", "k", "--arg", "i32:1", "--arg", "buf:x=i32[1]", "--arg", "buf:y=i32[1]", "--block", "32,32,2"],
            "a CTA must have 1 to 1024 threads, not 2048",
        ),
        (
            &["--kernel", "k", "--arg", "i32:1", "--arg", "buf:x=i32[1]", "--arg", "buf:y=i32[1]", "--block", "x"],
            "--block: X = `x` is not a positive integer",
        ),
        (
            &["--kernel", "k", "--arg", "i32:1", "--arg", "buf:x=i32[1]", "--arg", "buf:y=i32[1]", "--timeline", obj],
            "that is the input object",
        ),
        (&["--kernel", "dev"], "--kernel dev: a device function, not a kernel (the kernels of"),
        (&["--kernel", "nope"], "--kernel nope: no function of that name"),
    ] {
        let o = run(extra);
        assert!(!o.status.success(), "{:?}", extra);
        assert!(stderr(&o).contains(want), "{:?}: {}", extra, stderr(&o));
    }
    assert!(std::fs::read(obj).unwrap().starts_with(b"\x7fELF"), "the object is intact");
    let o = run(&[
        "--kernel",
        "k",
        "--arg",
        "i32:-2147483648",
        "--arg",
        "buf:x=f32:inf,-1e38",
        "--arg",
        "buf:y=i32[1]",
        "--out",
        "x",
        "--block",
        "4,2,64",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(String::from_utf8_lossy(&o.stdout).contains("x = [inf, -1e38]"), "{}", String::from_utf8_lossy(&o.stdout));
}

/// Issue 25, item 13: `--kernel A.clif B.clif` said "defines no function
/// %…/A.clif"; `--kernel ''` meant a bare `--kernel` (every function).
#[test]
fn compile_kernel_names_are_checked() {
    let a = write("ka.clif", KERNEL);
    let b = write("kb.clif", KERNEL);
    let o = ursa(&["compile", "--kernel", &a, &b, "-o", tmp("kab.o").to_str().unwrap()]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("ka.clif: a file, not a function name; `compile` takes one input file"), "{}", stderr(&o));
    let o = ursa(&["compile", "--kernel", "", &a, "-o", tmp("ke.o").to_str().unwrap()]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("--kernel ``: no function name"), "{}", stderr(&o));
    // A bare --kernel still makes every function a kernel.
    let o = ursa(&["compile", "--kernel", &a, "-o", tmp("kb.o").to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
}

/// Issue 25, items 11 and 13: `--help` describes every argument and gives
/// the defaults; `disasm --hex` counts words in the singular too.
#[test]
fn help_describes_every_argument() {
    let help = |cmd: &str| String::from_utf8_lossy(&ursa(&[cmd, "--help"]).stdout).into_owned();
    let asm = help("asm");
    assert!(asm.contains("The assembly source") && asm.contains("the input with the extension .o"), "{}", asm);
    let compile = help("compile");
    assert!(compile.contains("the input with the extension .o"), "{}", compile);
    for pass in ursa_backend::Pass::ALL {
        assert!([",", "]", "\n"].iter().any(|end| compile.contains(&format!(" {}{}", pass, end))), "--print-after {}: {}", pass, compile);
    }
    assert!(help("test").contains("Filetests (`.clif`) and directories"));
    let run = help("run");
    assert!(run.contains("The kernel to launch"), "{}", run);
    assert!(run.contains("[default: 200000000]") && run.contains("[default: 4294967296]"), "{}", run);
    let o = ursa(&["disasm", "--hex", "0"]);
    assert!(stderr(&o).contains("1 word given; an instruction is 4 words"), "{}", stderr(&o));
}

/// Issue 25, item 12: a kernel with an `i128` parameter compiled but could
/// not be launched (there was no `i128` argument type).
#[test]
fn i128_arguments() {
    let src = write(
        "wide.clif",
        "function %k(i64, i128, i64) {\nblock0(v0: i64, v1: i128, v2: i64):\n    v3 = iconst.i64 1\n    \
         v4 = uextend.i128 v3\n    v5 = iadd v1, v4\n    store v5, v0\n    store v2, v0+16\n    return\n}\n",
    );
    let obj = tmp("wide.o");
    let obj = obj.to_str().unwrap();
    let o = ursa(&["compile", "--kernel", &src, "-o", obj]);
    assert!(o.status.success(), "{}", stderr(&o));
    for (buf, x, y, want) in [
        ("buf:o=i128[2]", "i128:-170141183460469231731687303715884105727", "i64:5", "o = [-170141183460469231731687303715884105726, 5]"),
        ("buf:o=u128[2]", "u128:0xfffffffffffffffffffffffffffffffe", "i64:0", "o = [340282366920938463463374607431768211455, 0]"),
    ] {
        let o = ursa(&["run", obj, "--kernel", "k", "--arg", buf, "--arg", x, "--arg", y, "--out", "o"]);
        assert!(o.status.success(), "{}", stderr(&o));
        assert!(String::from_utf8_lossy(&o.stdout).contains(want), "{}", String::from_utf8_lossy(&o.stdout));
    }
    let o = ursa(&["run", obj, "--kernel", "k", "--arg", "buf:o=u128[2]", "--arg", "i64:1", "--arg", "i64:0"]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("argument 2 (`i64:1`) is i64, but parameter `v1` of `k` is i128"), "{}", stderr(&o));
}

/// Issue 25, item 12: the `.param` table had sizes only, so `--arg f32:7`
/// for an `i32` parameter (or `i32:7` for an `f32`, a buffer for an `f64`)
/// was taken and the kernel read the wrong bits. Now the table is typed —
/// by `compile` from the CLIF signature, by `asm` from `.param NAME, TYPE`
/// — and `run` checks each argument's type.
#[test]
fn arguments_are_checked_against_parameter_types() {
    let src = write(
        "typed.clif",
        "function %k(i64, i32, f32, f64, i8) {
block0(v0: i64, v1: i32, v2: f32, v3: f64, v4: i8):
             v5 = fcvt_from_sint.f32 v1
    v6 = fadd v5, v2
    store v6, v0
    store v4, v0+4
    return
}
",
    );
    let obj = tmp("typed.o");
    let obj = obj.to_str().unwrap();
    let o = ursa(&["compile", "--kernel", &src, "-o", obj]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = String::from_utf8_lossy(&ursa(&["disasm", obj]).stdout).into_owned();
    for line in [".param v0, i64", ".param v1, i32", ".param v2, f32", ".param v3, f64", ".param v4, i8"] {
        assert!(text.contains(line), "{}: {}", line, text);
    }
    let run = |args: [&str; 5]| {
        let mut v = vec!["run", obj, "--kernel", "k", "--out", "o"];
        for a in args {
            v.extend(["--arg", a]);
        }
        ursa(&v)
    };
    for (args, want) in [
        (["buf:o=i32[2]", "f32:7", "f32:0.5", "f64:1", "i8:1"], "argument 2 (`f32:7`) is f32, but parameter `v1` of `k` is i32"),
        (["buf:o=i32[2]", "i32:7", "i32:1", "f64:1", "i8:1"], "argument 3 (`i32:1`) is i32, but parameter `v2` of `k` is f32"),
        (
            ["buf:o=i32[2]", "i32:7", "f32:1", "buf:d=f64[1]", "i8:1"],
            "argument 4 (`buf:d=f64[1]`) is a buffer (a pointer), but parameter `v3` of `k` is f64",
        ),
        (["buf:o=i32[2]", "i32:7", "f32:1", "i64:1", "i8:1"], "argument 4 (`i64:1`) is i64, but parameter `v3` of `k` is f64"),
        (["f64:0", "i32:7", "f32:1", "f64:1", "i8:1"], "argument 1 (`f64:0`) is f64, but parameter `v0` of `k` is i64"),
    ] {
        let o = run(args);
        assert!(!o.status.success(), "{:?}", args);
        assert!(stderr(&o).contains(want), "{:?}: {}", args, stderr(&o));
    }
    // Integers are signless (`u32:` or `i32:` for an i32), and a buffer is
    // an i64 (CLIF has no pointer type).
    let o = run(["buf:o=f32:0,0", "u32:7", "f32:0.5", "f64:1", "u8:255"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(String::from_utf8_lossy(&o.stdout).contains("o = [7.5, 3.57e-43]"), "{}", String::from_utf8_lossy(&o.stdout));

    // Assembly: `.param NAME, TYPE` is typed, `.param NAME, SIZE` is not;
    // a pointer takes a buffer or an address written as a 64-bit integer.
    let obj = &asm_object(
        "typed_asm",
        ".kernel k
.param p, ptr
.param n, i32
.param raw, 4
.param x, f64
EXIT ;
",
    );
    let text = String::from_utf8_lossy(&ursa(&["disasm", obj]).stdout).into_owned();
    assert!(text.contains(".param p, ptr\n    .param n, i32\n    .param raw, 4\n    .param x, f64\n"), "{}", text);
    let run = |args: &[&str]| {
        let mut v = vec!["run", obj, "--kernel", "k"];
        for a in args {
            v.extend(["--arg", a]);
        }
        ursa(&v)
    };
    for ok in [&["buf:b=i32[1]", "i32:1", "f32:1", "f64:1"], &["u64:0", "u32:1", "i32:1", "f64:-0.5"]] {
        let o = run(ok);
        assert!(o.status.success(), "{:?}: {}", ok, stderr(&o));
    }
    let o = run(&["f64:1", "i32:1", "f32:1", "f64:1"]);
    assert!(stderr(&o).contains("argument 1 (`f64:1`) is f64, but parameter `p` of `k` is ptr"), "{}", stderr(&o));
    let o = run(&["buf:b=i32[1]", "i32:1", "i32:1", "f32:1"]);
    assert!(stderr(&o).contains("argument 4 (`f32:1`) is f32, but parameter `x` of `k` is f64"), "{}", stderr(&o));
    let o = run(&["buf:b=i32[1]", "i32:1"]);
    assert!(stderr(&o).contains("takes 4 arguments (p (ptr), n (i32), raw (4 bytes), x (f64)), 2 given"), "{}", stderr(&o));
    let s = write(
        "badtype.s",
        ".kernel k
.param n, u32
EXIT ;
",
    );
    let o = ursa(&["asm", &s, "-o", tmp("badtype.o").to_str().unwrap()]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("bad parameter type `u32` (i8, i16, i32, i64, i128, f32, f64, ptr or a size in bytes)"), "{}", stderr(&o));
}

/// Output into a pipe whose reader is gone (`ursa isa | head -1`) panicked
/// ("failed printing to stdout: Broken pipe", exit 101); it now ends quietly,
/// by SIGPIPE, as other Unix tools do. The pipe's read end is closed before
/// `ursa` starts, so its first write always meets a closed pipe.
#[cfg(unix)]
#[test]
fn closed_stdout_ends_quietly() {
    use std::os::fd::{FromRawFd, OwnedFd};
    use std::os::unix::process::ExitStatusExt;
    let obj = vadd_object("vadd_pipe.o");
    for args in [&["isa"][..], &["disasm", obj.to_str().unwrap()], &["compile", "--help"]] {
        let mut fds = [0i32; 2];
        // SAFETY: `fds` has room for the two descriptors pipe() writes.
        assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
        // SAFETY: both descriptors are fresh and owned here alone.
        let (read, write) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
        drop(read);
        let o = std::process::Command::new(env!("CARGO_BIN_EXE_ursa"))
            .args(args)
            .stdout(write)
            .stderr(std::process::Stdio::piped())
            .output()
            .expect("run ursa");
        let e = stderr(&o);
        assert!(!e.contains("panicked") && !e.contains("Broken pipe"), "{:?}: {}", args, e);
        assert!(o.status.code() != Some(101), "{:?}: {:?}", args, o.status);
        assert!(o.status.success() || o.status.signal() == Some(libc::SIGPIPE), "{:?}: {:?} {}", args, o.status, e);
    }
}

/// Issue 25, item 3: with the memory limit lifted, a kernel whose threads
/// declare 4 GiB - 1 of `.local` each aborted the process at its first local
/// access ("memory allocation of 137438953440 bytes failed", SIGABRT). The
/// allocation is fallible now: where the host refuses it (as this machine's
/// does, overcommit permitting) the run ends with an error naming the size
/// and the limit; where it grants it, zeroed pages are only mapped as used.
#[test]
fn local_memory_the_host_cannot_give_is_an_error() {
    let obj = &asm_object("bigl", ".kernel k\n.local 0xffffffff\n    STL [RZ+0x8], RZ ;\n    EXIT ;\n");
    let o = ursa(&["run", obj, "--kernel", "k", "--memory-limit", "18446744073709551615"]);
    assert!(o.status.code().is_some(), "killed by a signal: {:?} {}", o.status, stderr(&o));
    if !o.status.success() {
        let e = stderr(&o);
        assert!(
            e.contains("cannot allocate the 137438953440 bytes of local memory")
                && e.contains("memory limit of 18446744073709551615 bytes")
                && e.contains("in kernel `k`"),
            "{}",
            e
        );
    }
    // The default limit refuses the launch before it starts.
    let o = ursa(&["run", obj, "--kernel", "k"]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("more than the memory limit of 4294967296 bytes"), "{}", stderr(&o));
}

/// Issue 25, item 10: `--profile` and `--timeline` on a run that traps
/// printed only the trap. Now the profile of what ran is printed, the
/// timeline is written and records the trap, and the trap is the error.
#[test]
fn a_trap_keeps_the_profile_and_the_timeline() {
    let obj = vadd_object("vadd_trap.o");
    let json = tmp("trap.json");
    // `out` holds one element of the seven the kernel stores: the store of
    // thread 1 is out of bounds.
    let mut args: Vec<&str> = vec!["run", obj.to_str().unwrap()];
    args.extend_from_slice(&VADD_LAUNCH[..VADD_LAUNCH.len() - 4]);
    args.extend_from_slice(&[
        "--arg",
        "buf:out=i32[1]",
        "--arg",
        "u32:7",
        "--out",
        "out",
        "--profile",
        "--timeline",
        json.to_str().unwrap(),
    ]);
    let o = ursa(&args);
    assert!(!o.status.success());
    let e = stderr(&o);
    assert!(e.contains("error: trap: out-of-bounds global access") && e.contains("in kernel `vadd`"), "{}", e);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(!out.contains("out = ["), "no output buffer after a trap: {}", out);
    // The first CTA trapped: one CTA and its warp ran, up to its STG.
    assert!(out.contains("profile: 1 CTAs, 1 warps"), "{}", out);
    for want in [".kernel vadd", "LDG", "STG"] {
        assert!(out.contains(want), "missing `{}` in\n{}", want, out);
    }
    let text = std::fs::read_to_string(&json).expect("the timeline is written");
    let v: serde_json::Value = serde_json::from_str(&text).expect("timeline JSON");
    assert!(v["otherData"]["trap"].as_str().is_some_and(|t| t.contains("out-of-bounds global access")), "{}", v["otherData"]);
    let events = v["traceEvents"].as_array().unwrap();
    assert!(events.iter().any(|e| e["ph"] == "X" && e["name"].as_str().is_some_and(|n| n.starts_with("STG"))), "{}", text);
    assert_eq!(serde_json::to_string(&v).unwrap(), text, "compact, keys sorted");
}
