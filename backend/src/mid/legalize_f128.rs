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

use cranelift_codegen::cursor::FuncCursor;
use cranelift_codegen::ir::types::{F128, I128, I64};
use cranelift_codegen::ir::{Function, Inst, InstBuilder, InstructionData, Opcode, Value};

use crate::Error;

/// Rewrites every `f128` value of `f` as an `i128` (in place).
pub fn legalize_f128(f: &mut Function) -> Result<(), Error> {
    super::legalize_as_bits(f, F128, I128, |op| matches!(op, Opcode::F128const | Opcode::Fneg | Opcode::Fabs | Opcode::Fcopysign), compute)
}

/// The `i128` bits that replace `inst`, its `f128` operands already `i128`.
fn compute(p: &mut FuncCursor, inst: Inst) -> Value {
    let args = p.func.dfg.inst_args(inst).to_vec();
    match p.func.dfg.insts[inst] {
        InstructionData::UnaryConst { constant_handle, .. } => {
            let bytes = p.func.dfg.constants.get(constant_handle).as_slice();
            halves(p, u128::from_le_bytes(bytes.try_into().expect("an f128 constant has 16 bytes")))
        }
        data => match data.opcode() {
            Opcode::Fneg => {
                let sign = halves(p, 1 << 127);
                p.ins().bxor(args[0], sign)
            }
            Opcode::Fabs => {
                let mag = halves(p, !(1 << 127));
                p.ins().band(args[0], mag)
            }
            _ => {
                let (s, m) = (halves(p, 1 << 127), halves(p, !(1 << 127)));
                let mag = p.ins().band(args[0], m);
                let sign = p.ins().band(args[1], s);
                p.ins().bor(mag, sign)
            }
        },
    }
}

/// The `i128` constant `bits`, as `legalize_i128` takes it: the `iconcat` of its halves.
fn halves(p: &mut FuncCursor, bits: u128) -> Value {
    let lo = p.ins().iconst(I64, bits as u64 as i64);
    let hi = p.ins().iconst(I64, (bits >> 64) as u64 as i64);
    p.ins().iconcat(lo, hi)
}
