//! The simulator's translation to host code against its interpreter, on
//! every `; run:` line of the filetests and on generated programs: `--jit-check`
//! runs each call both ways (without strict mode) and fails where results,
//! statistics, traps or memory differ.
use std::process::Command;

fn ursa(args: &[&str]) -> String {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");
    let out = Command::new(env!("CARGO_BIN_EXE_ursa")).current_dir(root).args(args).output().expect("run ursa");
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(
        out.status.success(),
        "ursa {:?} failed:\n{}",
        args,
        text.lines().filter(|l| !l.starts_with("PASS")).collect::<Vec<_>>().join("\n")
    );
    text
}

/// The closing tally line (`N passed, M failed, K skipped ...`).
fn tally(text: &str) -> (u64, u64, u64) {
    let line = text.lines().rev().find(|l| l.contains(" passed, ")).expect("a tally line");
    let num = |word: &str| -> u64 {
        let i = line.find(word).expect("count");
        line[..i].trim_end().rsplit([' ', ':']).next().unwrap().parse().expect("a number")
    };
    (num(" passed"), num(" failed"), num(" skipped"))
}

#[test]
fn every_filetest_run_line_agrees_between_jit_and_interpreter() {
    let (passed, failed, _) = tally(&ursa(&["test", "--jit-check", "tests/filetests"]));
    assert_eq!(failed, 0);
    assert!(passed > 10_000, "only {} run lines", passed);
}

#[test]
fn generated_programs_agree_between_jit_and_interpreter() {
    let (passed, failed, skipped) = tally(&ursa(&["fuzz", "--jit-check", "--count", "300", "--seed", "7700000", "--no-reduce"]));
    assert_eq!((passed + skipped, failed), (300, 0));
    // A program is skipped only where cranelift-interpreter cannot run it
    // (some vector constructs): a few, not most.
    assert!(passed >= 270, "only {} of 300 passed ({} skipped)", passed, skipped);
}
