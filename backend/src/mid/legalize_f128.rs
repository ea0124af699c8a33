//! `f128` as bits: every quad-precision value becomes the `i128` of its bit
//! pattern, which `legalize_i128` then splits into two `i64` halves
//! (`docs/float.md`, "f16 and f128").
//!
//! `load`, `store`, `select`, calls, returns and branches keep their
//! opcodes on the new type (an `f128` is passed as an `i128`,
//! `docs/abi.md`); `bitcast` between `f128` and `i128` disappears;
//! `f128const` becomes the `iconcat` of its two 64-bit halves; `fneg`,
//! `fabs` and `fcopysign` are bit operations on the sign bit. `f128`
//! arithmetic, comparisons and conversions (for which Cranelift calls
//! library routines) are an "unsupported" error naming the instruction,
//! checked before anything is rewritten.

use cranelift_codegen::cursor::{Cursor, FuncCursor};
use cranelift_codegen::ir::types::{F128, I128, I64};
use cranelift_codegen::ir::{Function, Inst, InstBuilder, InstructionData, Opcode, Value};

use crate::Error;

/// Rewrites every `f128` value of `f` as an `i128` (in place).
pub fn legalize_f128(f: &mut Function) -> Result<(), Error> {
    if !super::mentions_type(f, F128) {
        return Ok(());
    }
    let insts = super::insts_mentioning(f, F128);
    if let Some(&bad) = insts.iter().find(|&&i| !supported(f, i)) {
        let what = format!("`{}` on f128 is not supported", f.dfg.insts[bad].opcode());
        return Err(Error::unsupported(what).at(f.dfg.display_inst(bad)));
    }
    super::retype_values(f, F128, I128);
    for inst in insts {
        rewrite(f, inst);
    }
    f.dfg.resolve_all_aliases();
    super::verify_in_debug(f)
}

fn supported(f: &Function, inst: Inst) -> bool {
    match f.dfg.insts[inst].opcode() {
        Opcode::Bitcast => {
            let (a, r) = (f.dfg.inst_args(inst)[0], f.dfg.inst_results(inst)[0]);
            [f.dfg.value_type(a), f.dfg.value_type(r)].iter().all(|&t| t == F128 || t == I128)
        }
        Opcode::F128const | Opcode::Fneg | Opcode::Fabs | Opcode::Fcopysign => true,
        op => super::legalize_f16::moves(op),
    }
}

/// Replaces `inst` (its `f128` values already `i128`) by code on the bits.
fn rewrite(f: &mut Function, inst: Inst) {
    let op = f.dfg.insts[inst].opcode();
    if super::legalize_f16::moves(op) {
        return;
    }
    let args = f.dfg.inst_args(inst).to_vec();
    let result = f.dfg.inst_results(inst)[0];
    let data = f.dfg.insts[inst];
    let mut pos = FuncCursor::new(f).at_inst(inst);
    pos.use_srcloc(inst);
    let p = &mut pos;
    let new = match op {
        Opcode::Bitcast => args[0],
        Opcode::F128const => {
            let InstructionData::UnaryConst { constant_handle, .. } = data else { unreachable!("f128const has a constant") };
            let bytes = p.func.dfg.constants.get(constant_handle).as_slice();
            let bits = u128::from_le_bytes(bytes.try_into().expect("an f128 constant has 16 bytes"));
            halves(p, bits)
        }
        Opcode::Fneg => {
            let sign = halves(p, 1 << 127);
            p.ins().bxor(args[0], sign)
        }
        Opcode::Fabs => {
            let mag = halves(p, !(1 << 127));
            p.ins().band(args[0], mag)
        }
        Opcode::Fcopysign => {
            let (s, m) = (halves(p, 1 << 127), halves(p, !(1 << 127)));
            let mag = p.ins().band(args[0], m);
            let sign = p.ins().band(args[1], s);
            p.ins().bor(mag, sign)
        }
        _ => unreachable!("`supported` admits only the opcodes above"),
    };
    let f = pos.func;
    f.dfg.clear_results(inst);
    f.layout.remove_inst(inst);
    f.dfg.change_to_alias(result, new);
}

/// The `i128` constant `bits`, as `legalize_i128` takes it: the `iconcat` of its halves.
fn halves(p: &mut FuncCursor, bits: u128) -> Value {
    let lo = p.ins().iconst(I64, bits as u64 as i64);
    let hi = p.ins().iconst(I64, (bits >> 64) as u64 as i64);
    p.ins().iconcat(lo, hi)
}
