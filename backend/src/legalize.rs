//! Rewrites of Cranelift IR before instruction selection.

use cranelift_codegen::ir::Function;

/// Legalizes `f` in place.
pub fn legalize(f: &mut Function) -> Result<(), String> {
    let _ = f;
    Ok(())
}
