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
    let out_dir = std::env::var("OUT_DIR").unwrap();
    std::fs::write(Path::new(&out_dir).join("isle_glue.rs"), glue(&code)).unwrap();
    std::fs::write(Path::new(&out_dir).join("isle_lower.rs"), code).unwrap();
}

/// `impl Context for Lower` with every method forwarding to the inherent
/// method of the same name, so the Rust side of each rule family can live
/// in its own file (`src/rules/*.rs`). A missing inherent method makes the
/// forwarder recurse into itself, which `unconditional_recursion` (denied)
/// turns into a build error.
fn glue(code: &str) -> String {
    let start = code.find("pub trait Context {").expect("no Context trait in ISLE output");
    let body = &code[start..];
    let end = body.find("\n}").unwrap();
    let mut out = String::from("#[deny(unconditional_recursion)]\nimpl Context for Lower<'_> {\n");
    for line in body[..end].lines().skip(1) {
        let l = line.trim();
        let Some(sig) = l.strip_prefix("fn ").and_then(|x| x.strip_suffix(';')) else { continue };
        let name = &sig[..sig.find('(').unwrap()];
        let params = &sig[sig.find('(').unwrap() + 1..sig.find(')').unwrap()];
        let args: Vec<&str> = params
            .split(',')
            .map(|a| a.trim())
            .filter(|a| !a.is_empty() && !a.starts_with("&mut self"))
            .map(|a| a.split(':').next().unwrap().trim())
            .collect();
        out.push_str(&format!("    fn {} {{ Lower::{}(self, {}) }}\n", sig, name, args.join(", ")));
    }
    out.push_str("}\n");
    out
}
