//! The filetest runner's handling of run lines (`ursa_cli::filetest`): a run
//! line calls the function it follows under `test run` and the function it
//! names under `test interpret` alone, as Cranelift's two runners; functions with stack-passed
//! arguments or results run through a generated caller; a line where
//! cranelift-interpreter disagrees with the file and the simulator agrees
//! passes with a note and its own count.

use std::path::PathBuf;

use ursa_cli::filetest::{run_file, Tally, TestOptions};

fn run(name: &str, text: &str) -> (Tally, String) {
    let dir = std::env::temp_dir().join(format!("ursa-runner-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p: PathBuf = dir.join(name);
    std::fs::write(&p, text).unwrap();
    let mut log = String::new();
    let t = run_file(&p, &TestOptions { differential: true, verbose: true, ..Default::default() }, &mut log);
    (t, log)
}

#[test]
fn under_test_run_a_run_line_calls_the_function_it_follows() {
    // As Cranelift's `test run`: the line after %double calls %double and
    // is parsed with its signature, whatever name it writes (a runner that
    // looked the name up would call %triple and get 63, 6).
    let (t, log) = run(
        "follows.clif",
        "test run\n\
         function %triple(i32) -> i32 {\nblock0(v0: i32):\n    v1 = iconst.i32 3\n    v2 = imul v0, v1\n    return v2\n}\n\
         ; run: %triple(5) == 15\n\
         function %double(i32) -> i32 {\nblock0(v0: i32):\n    v1 = iadd v0, v0\n    return v1\n}\n\
         ; run: %triple(21) == 42\n\
         ; run: %double(2) == 4\n\
         ; run: %nope(3) == 6\n\
         ; run: %double(2) == 5\n",
    );
    assert_eq!((t.passed, t.failed, t.skipped), (4, 1, 0), "{}", log);
    assert!(log.contains("expected == 5, got 4"), "{}", log);
}

#[test]
fn under_test_interpret_alone_a_run_line_calls_the_function_it_names() {
    // As cranelift-interpreter's `test interpret`: any function of the file,
    // by name, its arguments parsed with that function's signature.
    let (t, log) = run(
        "any.clif",
        "test interpret\n\
         function %double(i32) -> i32 {\nblock0(v0: i32):\n    v1 = iadd v0, v0\n    return v1\n}\n\
         function %pair(i64, i8) -> i64, i8 {\nblock0(v0: i64, v1: i8):\n    return v0, v1\n}\n\
         ; run: %double(21) == 42\n\
         ; run: %pair(-5, 7) == [-5, 7]\n\
         ; run: %double(2) == 5\n\
         ; run: %nope(1) == 1\n",
    );
    assert_eq!((t.passed, t.failed, t.skipped), (2, 2, 0), "{}", log);
    assert!(log.contains("PASS") && log.contains("%double(21) == 42"), "{}", log);
    assert!(log.contains("expected == 5, got 4"), "{}", log);
    assert!(log.contains("calls %nope, which is not a function of this file"), "{}", log);
}

#[test]
fn stack_passed_arguments_and_results_run_through_a_generated_caller() {
    let params = "i64, i8, i16, i32, i64, i8, i16, i32, i64, i32, i8";
    let rets = "i8, i64, i32, i16, i8, i64, i32, i16, i8, i64";
    let text = format!(
        "test run\n\
         function %wide({params}) -> {rets} {{\n\
         block0(v0: i64, v1: i8, v2: i16, v3: i32, v4: i64, v5: i8, v6: i16, v7: i32, v8: i64, v9: i32, v10: i8):\n\
         \x20   v11 = iadd v8, v0\n\
         \x20   return v10, v11, v9, v6, v5, v4, v3, v2, v1, v8\n}}\n\
         ; run: %wide(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11) == [11, 10, 10, 7, 6, 5, 4, 3, 2, 9]\n\
         ; run: %wide(-1, -2, -3, -4, -5, -6, -7, -8, 0x7fffffffffffffff, -10, -11) == [-11, 0x7ffffffffffffffe, -10, -7, -6, -5, -4, -3, -2, 0x7fffffffffffffff]\n\
         ; run: %wide(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11) == [11, 10, 10, 7, 6, 5, 4, 3, 2, 8]\n\
         function %caller() -> i64 {{\n\
         \x20   fn0 = %wide({params}) -> {rets}\n\
         block0:\n\
         \x20   v0 = iconst.i64 100\n\
         \x20   v1 = iconst.i8 1\n\
         \x20   v2 = iconst.i16 2\n\
         \x20   v3 = iconst.i32 3\n\
         \x20   v4, v5, v6, v7, v8, v9, v10, v11, v12, v13 = call fn0(v0, v1, v2, v3, v0, v1, v2, v3, v0, v3, v1)\n\
         \x20   v14 = iadd v5, v13\n\
         \x20   return v14\n}}\n\
         ; run: %caller() == 300\n"
    );
    let (t, log) = run("wide.clif", &text);
    // The third line expects a wrong last result: the results are really read back.
    assert_eq!((t.passed, t.failed, t.skipped), (3, 1, 0), "{}", log);
    assert!(log.contains("got [11, 10, 10, 7, 6, 5, 4, 3, 2, 9]"), "{}", log);
    assert!(!log.contains("at most"), "{}", log);
}

#[test]
fn interpreter_disagreeing_with_the_file_is_a_noted_pass() {
    // cranelift-interpreter 0.135 traps on `srem INT_MIN, -1`; CLIF defines 0.
    let (t, log) = run(
        "srem.clif",
        "test run\n\
         function %srem(i32, i32) -> i32 {\nblock0(v0: i32, v1: i32):\n    v2 = srem v0, v1\n    return v2\n}\n\
         ; run: %srem(-2147483648, -1) == 0\n\
         ; run: %srem(7, 2) == 1\n\
         ; run: %srem(-2147483648, -1) == 1\n",
    );
    assert_eq!((t.passed, t.failed, t.skipped, t.interp_disagrees), (2, 1, 0, 1), "{}", log);
    assert!(log.contains("cranelift-interpreter traps"), "{}", log);
    assert!(t.to_string().contains("1 of the passed where cranelift-interpreter disagrees with the file"), "{}", t);
    // The tally's first counts keep their spelling for scripts.
    assert!(t.to_string().starts_with("2 passed, 1 failed, 0 skipped"), "{}", t);
}

/// A `try_call` runs as a call (nothing throws: there is no unwinder) and
/// is reported as not checked against cranelift-interpreter, which cannot
/// run it; frame introspection, what an unwinder is built on, is skipped
/// with its reason.
#[test]
fn try_call_runs_and_frame_introspection_is_skipped_with_its_reason() {
    let (t, log) = run(
        "try.clif",
        "test run\n\
         function %callee(i64) -> i64 tail {\nblock0(v0: i64):\n    return v0\n}\n\
         function %catcher(i64) -> i64 tail {\n    sig0 = (i64) -> i64 tail\n    fn0 = %callee sig0\n\
         block0(v0: i64):\n    try_call fn0(v0), sig0, block1(ret0), []\n\
         block1(v1: i64):\n    return v1\n}\n\
         ; run: %catcher(3) == 3\n\
         function %fp() -> i64 tail {\nblock0:\n    v0 = get_frame_pointer.i64\n    return v0\n}\n\
         ; run: %fp() == 0\n",
    );
    assert_eq!((t.passed, t.failed, t.skipped), (1, 0, 1), "{}", log);
    assert!(log.contains("%catcher(3) == 3 (not checked against the interpreter"), "{}", log);
    assert!(log.contains("frame introspection (used by exception handling) is not supported"), "{}", log);
}

#[test]
fn a_panic_inside_the_interpreter_is_reported_on_its_line_only() {
    // cranelift-interpreter 0.135 panics on umulhi.i128: the line passes
    // against the file, says it was not checked, and no panic message or
    // backtrace hint reaches stderr.
    let dir = std::env::temp_dir().join(format!("ursa-runner-panic-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join("umulhi128.clif");
    std::fs::write(
        &p,
        "test run\nfunction %hi(i128, i128) -> i128 {\nblock0(v0: i128, v1: i128):\n    v2 = umulhi v0, v1\n    return v2\n}\n\
         ; run: %hi(-1, -1) == -2\n",
    )
    .unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_ursa")).arg("test").arg(&p).output().unwrap();
    let (so, se) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "{}{}", so, se);
    assert!(format!("{}{}", so, se).contains("not checked against the interpreter: it panicked"), "{}{}", so, se);
    assert!(!se.contains("panicked at") && !so.contains("panicked at"), "{}{}", so, se);
}

#[test]
fn i128_values_go_through_the_generated_caller() {
    // Five i128 parameters are ten slots: more than the eight registers.
    let (t, log) = run(
        "wide128.clif",
        "test run\n\
         function %sum5(i128, i128, i128, i128, i128) -> i128, i64 {\n\
         block0(v0: i128, v1: i128, v2: i128, v3: i128, v4: i128):\n\
             v5 = iadd v0, v1\n    v6 = iadd v5, v2\n    v7 = iadd v6, v3\n    v8 = iadd v7, v4\n    v9 = ireduce.i64 v4\n    return v8, v9\n}\n\
         ; run: %sum5(1, 2, 3, 0x10000000000000000, -1) == [0x10000000000000005, -1]\n",
    );
    assert_eq!((t.passed, t.failed, t.skipped), (1, 0, 0), "{}", log);
}
