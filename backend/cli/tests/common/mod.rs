//! Helpers shared by the command-line tests (`mod common;` in each).
#![allow(dead_code)]

use std::path::PathBuf;
use std::process::{Command, Output};

/// Runs the `ursa` binary under test.
pub fn ursa(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ursa")).args(args).output().expect("run ursa")
}

/// A path in a scratch folder of this test binary and process.
pub fn tmp(name: &str) -> PathBuf {
    let exe = std::env::current_exe().ok().and_then(|p| p.file_stem().map(|s| s.to_string_lossy().into_owned())).unwrap_or_default();
    let d = std::env::temp_dir().join(format!("ursa-{}-{}", exe, std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d.join(name)
}

/// Writes `text` to a scratch file; its path.
pub fn write(name: &str, text: &str) -> String {
    let p = tmp(name);
    std::fs::write(&p, text).unwrap();
    p.to_str().unwrap().to_string()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}
