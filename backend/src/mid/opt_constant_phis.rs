//! Block parameters that receive the same value on every incoming edge
//! replaced by that value (Cranelift's `remove_constant_phis`): the value
//! then needs no copy on the edges and no register of its own.

use crate::Error;
use cranelift_codegen::Context;

/// Removes the constant block parameters of `ctx.func`; `ctx`'s dominator
/// tree must be the function's.
pub fn opt_constant_phis(ctx: &mut Context) -> Result<(), Error> {
    ctx.remove_constant_phis(super::flags()).map_err(|e| Error::internal(format!("constant-phi removal failed: {}", e)))
}
