//! Blocks no path from the entry reaches deleted (Cranelift's
//! `eliminate_unreachable_code`), with their instructions: lowering,
//! divergence analysis and register allocation never see them.

use crate::Error;
use cranelift_codegen::Context;

/// Deletes the unreachable blocks of `ctx.func`; `ctx`'s control-flow graph
/// and dominator tree must be those of the function (`Context::flowgraph`).
pub fn opt_unreachable_code(ctx: &mut Context) -> Result<(), Error> {
    ctx.eliminate_unreachable_code(super::flags()).map_err(|e| Error::internal(format!("unreachable-code elimination failed: {}", e)))
}
