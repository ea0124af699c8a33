//! Runs every filetest under `tests/filetests/` (as `ursa test` does) and
//! fails on any failure. Skipped tests are listed, not failed: a skip is an
//! unsupported feature reported as such, and the count is printed.

use std::path::PathBuf;

use ursa_cli::filetest::{collect, run_files, TestOptions};

#[test]
fn filetests() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("filetests");
    let files = collect(&[dir]).expect("filetests directory");
    assert!(!files.is_empty(), "no filetests found");
    let mut log = String::new();
    let tally = run_files(&files, &TestOptions::default(), &mut log);
    println!("{}\n{}", log, tally);
    assert_eq!(tally.failed, 0, "filetests failed:\n{}", log);
    assert!(tally.passed > 0);
}

/// The shipped examples (`examples/*.clif`, the README's demo) pass too.
#[test]
fn examples() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../examples");
    let files: Vec<PathBuf> = collect(&[dir]).expect("examples directory");
    assert!(!files.is_empty(), "no .clif examples");
    let mut log = String::new();
    let tally = run_files(&files, &TestOptions::default(), &mut log);
    assert_eq!(tally.failed, 0, "examples failed:\n{}", log);
    assert_eq!(tally.skipped, 0, "examples skipped:\n{}", log);
    assert!(tally.passed > 0);
}
