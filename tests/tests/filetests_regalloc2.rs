//! The filetests again with every function allocated by regalloc2 and
//! `pack_regs` (`URSA_REGALLOC2=1`), the path `assign_regs_ssa` falls back
//! to (a value live across a call, more values than registers): most
//! functions never take it otherwise. Its own test binary, so the variable,
//! read once per process, is set before anything compiles. Expected values
//! only (the differential run against cranelift-interpreter is the other
//! test's job).

use std::path::PathBuf;

use ursa_cli::filetest::{collect, run_files, TestOptions};

#[test]
fn filetests_through_regalloc2() {
    std::env::set_var("URSA_REGALLOC2", "1");
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("filetests");
    let files = collect(&[dir]).expect("filetests directory");
    let mut log = String::new();
    let tally = run_files(&files, &TestOptions { differential: false, verbose: false, ..Default::default() }, &mut log);
    assert_eq!(tally.failed, 0, "filetests failed through regalloc2:\n{}", log);
    assert!(tally.passed > 50_000, "{}", tally);
}
