//! Compiles the ISLE lowering rules (`isle/*.isle`, `isle/lower/*.isle`) into
//! Rust, `include!`d by `src/lower.rs`. A rule error fails the build with the
//! file and line.

use std::path::{Path, PathBuf};

fn main() {
    let root = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap());
    let mut files: Vec<PathBuf> = Vec::new();
    for dir in ["isle", "isle/lower"] {
        let mut here: Vec<PathBuf> = std::fs::read_dir(root.join(dir))
            .unwrap_or_else(|e| panic!("cannot read {}: {}", dir, e))
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "isle"))
            .collect();
        here.sort();
        files.extend(here);
    }
    println!("cargo:rerun-if-changed=isle");
    println!("cargo:rerun-if-changed=isle/lower");
    for f in &files {
        println!("cargo:rerun-if-changed={}", f.display());
    }
    let mut opts = cranelift_isle::codegen::CodegenOptions::default();
    opts.exclude_global_allow_pragmas = true;
    opts.prefixes.push(cranelift_isle::codegen::Prefix { prefix: root.display().to_string(), name: "isel".into() });
    let code = match cranelift_isle::compile::from_files(&files, &opts) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("ISLE errors:\n{}", e);
            std::process::exit(1);
        }
    };
    let out = Path::new(&std::env::var("OUT_DIR").unwrap()).join("isle_lower.rs");
    std::fs::write(out, code).unwrap();
}
