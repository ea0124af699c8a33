//! Calls of device functions replaced by the callee's body (Cranelift's
//! inliner, `Context::inline`), by this cost rule (`docs/optimization.md`):
//!
//! - **never** a kernel, a function that may call itself (directly or
//!   through others: [`CallGraph::recursive`]), a function the module does
//!   not define or that is not valid CLIF, one with a `vmctx` global value
//!   (it names its own `vmctx` parameter), a call whose declaration differs
//!   from the callee's signature, an indirect call, a `try_call`, or a call
//!   of an intrinsic;
//! - **always** a callee with one call site in the module, or a small one
//!   (at most [`SMALL`] CLIF instructions) — as CUDA inlines device functions
//!   by default;
//! - while the caller has at most [`CALLER_LIMIT`] instructions.
//!
//! The calls of an inlined body are considered in turn by the same rule
//! (the rule admits no recursion, so this ends). The callee's body is the
//! function as written, before its legalization: the caller legalizes it
//! with its own code. Every device function is still compiled on its own
//! too (other modules' calls and `func_addr` may need it).

use crate::Error;
use std::borrow::Cow;
use std::collections::HashMap;

use cranelift_codegen::inline::{Inline, InlineCommand};
use cranelift_codegen::ir::{self, Function, Opcode};

use crate::module::call_graph::CallGraph;

/// A callee of at most this many CLIF instructions is inlined at every call.
pub const SMALL: usize = 64;
/// No call is inlined into a caller that has grown beyond this many CLIF
/// instructions.
pub const CALLER_LIMIT: usize = 4000;

/// The device functions of a module that calls may inline, by object symbol.
#[derive(Debug, Default)]
pub struct Callees {
    bodies: HashMap<String, Function>,
}

impl Callees {
    /// The functions of `funcs` (`kernels[i]`: is `funcs[i]` a kernel) the
    /// cost rule lets calls inline.
    pub fn new(funcs: &[Function], kernels: &[bool]) -> Callees {
        let graph = CallGraph::new(funcs);
        let flags = cranelift_codegen::settings::Flags::new(cranelift_codegen::settings::builder());
        let mut bodies = HashMap::new();
        for (i, f) in funcs.iter().enumerate() {
            let small = size(f) <= SMALL;
            if kernels.get(i).copied().unwrap_or(true)
                || graph.recursive(i)
                || !(small || graph.call_sites[i] == 1)
                || f.layout.entry_block().is_none()
                || uses_vmctx(f)
                || cranelift_codegen::verifier::verify_function(f, &flags).is_err()
            {
                continue;
            }
            bodies.insert(graph.syms[i].clone(), f.clone());
        }
        Callees { bodies }
    }

    /// Whether no call can be inlined.
    pub fn is_empty(&self) -> bool {
        self.bodies.is_empty()
    }
}

/// Whether `f` has a `vmctx` global value: it names the `vmctx` parameter
/// of the function it is in, which a caller need not have.
fn uses_vmctx(f: &Function) -> bool {
    f.global_values.values().any(|gv| matches!(gv, ir::GlobalValueData::VMContext))
}

/// The number of instructions of `f`.
fn size(f: &Function) -> usize {
    f.layout.blocks().map(|b| f.layout.block_insts(b).count()).sum()
}

struct Inliner<'a> {
    callees: &'a Callees,
}

impl Inline for Inliner<'_> {
    fn inline(
        &mut self,
        caller: &Function,
        _inst: ir::Inst,
        opcode: Opcode,
        callee: ir::FuncRef,
        _args: &[ir::Value],
    ) -> InlineCommand<'_> {
        if !matches!(opcode, Opcode::Call | Opcode::ReturnCall) || caller.dfg.num_insts() > CALLER_LIMIT {
            return InlineCommand::KeepCall;
        }
        let Some(body) = ursa_isel::lower::callee_symbol(caller, callee).and_then(|s| self.callees.bodies.get(&s)) else {
            return InlineCommand::KeepCall;
        };
        // Cranelift's inliner requires the declaration to be the callee's
        // signature exactly.
        if caller.dfg.signatures[caller.dfg.ext_funcs[callee].signature] != body.signature {
            return InlineCommand::KeepCall;
        }
        InlineCommand::Inline { callee: Cow::Borrowed(body), visit_callee: true }
    }
}

/// Inlines the calls of `func` that `callees` allows; whether any was.
pub fn opt_inline(func: &mut Function, callees: &Callees) -> Result<bool, Error> {
    if callees.is_empty() || func.dfg.ext_funcs.is_empty() {
        return Ok(false);
    }
    super::with_context(func, |ctx| ctx.inline(Inliner { callees })).map_err(|e| Error::internal(format!("inlining failed: {}", e)))
}
