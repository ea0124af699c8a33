//! `try_call` and `try_call_indirect` made an ordinary call and a jump to
//! the normal-return block (`docs/abi.md`, "Exceptions").
//!
//! An exception is raised only by an unwinder, which walks the frames
//! above it and resumes at a handler of their calls' exception tables
//! (Cranelift's runtimes do it in `__cranelift_throw`, through frame
//! pointers). Ursa has no unwinder: it provides no such routine, and the
//! frame introspection one is built on (`get_frame_pointer`,
//! `get_return_address`) is an "unsupported" error. So every call returns
//! normally, and a `try_call` is its call followed by the normal-return
//! edge: the call's results take the places of `ret0`, `ret1`, … among the
//! edge's arguments. The handler edges are never taken and are dropped; a
//! handler block that nothing else reaches is unreachable code.
//!
//! The pass runs after the inliner, which leaves `try_call`s as they are,
//! and before the other legalizations, which then see plain calls.

use cranelift_codegen::cursor::{Cursor, FuncCursor};
use cranelift_codegen::ir::{BlockArg, Function, InstBuilder, InstructionData, Opcode};

use crate::Error;

/// Rewrites every `try_call` and `try_call_indirect` of `f` (in place).
pub fn legalize_try_calls(f: &mut Function) -> Result<(), Error> {
    if !super::may_have(f, |op| matches!(op, Opcode::TryCall | Opcode::TryCallIndirect)) {
        return Ok(());
    }
    // Each with its exception table and, for a direct one, its callee.
    let tries: Vec<_> = f
        .layout
        .blocks()
        .flat_map(|b| f.layout.block_insts(b))
        .filter_map(|i| match f.dfg.insts[i] {
            InstructionData::TryCall { exception, func_ref, .. } => Some((i, exception, Some(func_ref))),
            InstructionData::TryCallIndirect { exception, .. } => Some((i, exception, None)),
            _ => None,
        })
        .collect();
    for (inst, table, callee) in tries {
        let sig = f.dfg.exception_tables[table].signature();
        let normal = *f.dfg.exception_tables[table].normal_return();
        let dest = normal.block(&f.dfg.value_lists);
        let edge: Vec<BlockArg> = normal.args(&f.dfg.value_lists).collect();
        let args = f.dfg.inst_args(inst).to_vec();
        let mut pos = FuncCursor::new(f).at_inst(inst);
        pos.use_srcloc(inst);
        let call = match callee {
            Some(func_ref) => pos.ins().call(func_ref, &args),
            None => pos.ins().call_indirect(sig, args[0], &args[1..]),
        };
        let results = pos.func.dfg.inst_results(call).to_vec();
        let mut jump_args = Vec::with_capacity(edge.len());
        for a in edge {
            jump_args.push(match a {
                BlockArg::Value(v) => BlockArg::Value(v),
                BlockArg::TryCallRet(k) => match results.get(k as usize) {
                    Some(&r) => BlockArg::Value(r),
                    None => {
                        return Err(Error::unsupported(format!("`ret{}` of a call with {} results", k, results.len()))
                            .at(pos.func.dfg.display_inst(inst)))
                    }
                },
                // The verifier allows exception payloads on handler edges only.
                BlockArg::TryCallExn(k) => {
                    return Err(Error::unsupported(format!("`exn{}` on the normal-return edge", k)).at(pos.func.dfg.display_inst(inst)))
                }
            });
        }
        pos.ins().jump(dest, &jump_args);
        pos.func.layout.remove_inst(inst);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn legalized(src: &str) -> String {
        let mut f = cranelift_reader::parse_functions(src).unwrap().remove(0);
        legalize_try_calls(&mut f).unwrap();
        assert!(crate::mid::verifier_report(&f).is_none(), "{}", f.display());
        f.display().to_string()
    }

    #[test]
    fn results_and_values_reach_the_normal_block_and_handlers_are_dropped() {
        let text = legalized(
            "function %f(i64) -> i64 {
                sig0 = (i64) -> i64, i32 tail
                fn0 = %g(i64) -> i64, i32 tail
            block0(v0: i64):
                try_call fn0(v0), sig0, block1(ret1, v0, ret0), [ tag1: block2(exn0), default: block2(exn1) ]
            block1(v1: i32, v2: i64, v3: i64):
                v4 = iadd v2, v3
                return v4
            block2(v5: i64):
                return v5
            }",
        );
        assert!(text.contains("v6, v7 = call fn0(v0)"), "{}", text);
        assert!(text.contains("jump block1(v7, v0, v6)"), "{}", text);
        assert!(!text.contains("try_call"), "{}", text);
    }

    #[test]
    fn an_indirect_try_call_becomes_call_indirect() {
        let text = legalized(
            "function %f(i64) -> i64 {
                sig0 = (i64) -> i64 tail
                fn0 = %g(i64) -> i64 tail
            block0(v0: i64):
                v1 = func_addr.i64 fn0
                try_call_indirect v1(v0), sig0, block1(ret0), []
            block1(v2: i64):
                return v2
            }",
        );
        assert!(text.contains("v3 = call_indirect sig0, v1(v0)"), "{}", text);
        assert!(text.contains("jump block1(v3)"), "{}", text);
    }
}
