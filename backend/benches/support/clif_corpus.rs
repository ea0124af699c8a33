//! Reading CLIF files for compile-time measurements, shared by the
//! `compile_time` benchmark and the `compile_loop` example (each includes it
//! with `#[path]`).

use std::path::{Path, PathBuf};

use cranelift_codegen::ir::Function;
use cranelift_reader::{parse_test, ParseOptions};

/// The `.clif` files under `dir`, sorted by path.
pub fn clif_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else { continue };
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                todo.push(p);
            } else if p.extension().is_some_and(|x| x == "clif") {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

/// The functions of CLIF file `path`. `target` lines name machines this build
/// may not have, so they are blanked (keeping line numbers) before parsing.
pub fn parse_clif(path: &Path) -> Result<Vec<Function>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {}", path.display(), e))?;
    let text: String = text.lines().map(|l| if l.trim_start().starts_with("target") { "" } else { l }).collect::<Vec<_>>().join("\n");
    let tf = parse_test(&text, ParseOptions::default()).map_err(|e| format!("{}: {}", path.display(), e))?;
    Ok(tf.functions.into_iter().map(|(f, _)| f).collect())
}
