//! Passes on Cranelift IR before instruction selection, and the analyses they share.

pub mod divergence;
pub mod legalize_atomics;
pub mod legalize_div;
pub mod legalize_i128;
pub mod legalize_memory;

use cranelift_codegen::ir::Function;

use crate::Error;

/// In a debug build, the function a CLIF pass produced checked by
/// Cranelift's verifier (an error there is a bug of the pass).
pub(crate) fn verify_in_debug(f: &Function) -> Result<(), Error> {
    if cfg!(debug_assertions) {
        let flags = cranelift_codegen::settings::Flags::new(cranelift_codegen::settings::builder());
        if let Err(errs) = cranelift_codegen::verifier::verify_function(f, &flags) {
            let text = cranelift_codegen::print_errors::pretty_verifier_error(f, None, errs);
            return Err(Error::internal(format!("the rewritten function does not verify:\n{}", text)));
        }
    }
    Ok(())
}
