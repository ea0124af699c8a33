//! Helpers shared by the command-line tests (`mod common;` in each).
#![allow(dead_code)]

use std::path::{Path, PathBuf};
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

/// Assembly `src` written to the scratch file `NAME.s` and assembled into
/// `NAME.o`; the object's path.
pub fn asm_object(name: &str, src: &str) -> String {
    let s = write(&format!("{}.s", name), src);
    let obj = tmp(&format!("{}.o", name)).to_str().unwrap().to_string();
    let o = ursa(&["asm", &s, "-o", &obj]);
    assert!(o.status.success(), "{}", stderr(&o));
    obj
}

/// `examples/vadd.s` assembled into the scratch object `name`; its path.
pub fn vadd_object(name: &str) -> PathBuf {
    let obj = tmp(name);
    let src = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/vadd.s");
    let o = ursa(&["asm", src, "-o", obj.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    obj
}

/// The launch of `vadd` the tests count by hand: 2 CTAs of 4 threads over 7
/// elements (`out[i] = a[i] + b[i]`, the last lane idle).
pub const VADD_LAUNCH: &[&str] = &[
    "--kernel",
    "vadd",
    "--grid",
    "2",
    "--block",
    "4",
    "--arg",
    "buf:a=i32:1,2,3,4,5,6,7",
    "--arg",
    "buf:b=i32:10,20,30,40,50,60,-70",
    "--arg",
    "buf:out=i32[7]",
    "--arg",
    "u32:7",
];

/// `ursa run OBJ` with [`VADD_LAUNCH`] and then `extra`.
pub fn run_vadd(obj: &Path, extra: &[&str]) -> Output {
    let mut args = vec!["run", obj.to_str().unwrap()];
    args.extend_from_slice(VADD_LAUNCH);
    args.extend_from_slice(extra);
    ursa(&args)
}
