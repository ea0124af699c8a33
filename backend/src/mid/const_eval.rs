//! The value of an integer instruction without effects whose operands are
//! all constants (`iconst`), as CLIF defines it. `legalize_vectors` makes
//! such a lane an `iconst` as it builds it (a vector constant compared,
//! masked, shifted, reduced to a truth value), so the lane code of a
//! vector function built on constants needs no e-graph pass to fold it.
//!
//! Evaluated: `iadd`, `isub`, `imul`, `ineg`, the bitwise operations
//! (`band`, `bor`, `bxor`, `bnot`, `bitselect`), the
//! shifts and rotates (the amount taken modulo the width, as CLIF does),
//! the minimum and maximum, `icmp` (1 or 0 in an `i8`), `bmask`,
//! `select`, the extensions and `ireduce`, and the divisions and
//! remainders that do not trap; of scalar integers of at most 64 bits.
//! Anything else is `None` (left for the e-graph).

use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{types, DataFlowGraph, InstructionData, Opcode, Type, Value};

use super::{iconst_bits, sign_extend, width_mask};

/// A scalar integer type of at most 64 bits.
fn plain_int(t: Type) -> bool {
    t.is_int() && !t.is_vector() && t.bits() <= 64
}

/// The result type and value (zero-extended bits) of the instruction
/// `data` with controlling type `ctrl` in `dfg`, if it is one this module
/// evaluates and every operand is an `iconst`.
pub(crate) fn eval(dfg: &DataFlowGraph, data: &InstructionData, ctrl: Type) -> Option<(Type, u64)> {
    use Opcode::*;
    // The opcode first: most instructions are no candidates.
    let op = data.opcode();
    let candidate = matches!(
        op,
        Iadd | Isub
            | Imul
            | Ineg
            | Band
            | Bor
            | Bxor
            | Bnot
            | Bitselect
            | Ishl
            | Ushr
            | Sshr
            | Rotl
            | Rotr
            | Umin
            | Umax
            | Smin
            | Smax
            | Icmp
            | Bmask
            | Select
            | Uextend
            | Sextend
            | Ireduce
            | Udiv
            | Sdiv
            | Urem
            | Srem
    );
    if !candidate || !plain_int(ctrl) {
        return None;
    }
    // Every operand an `iconst` (looked at before anything is computed:
    // most operands are none).
    let args: &[Value] = match data {
        InstructionData::Unary { arg, .. } => std::slice::from_ref(arg),
        InstructionData::Binary { args, .. } | InstructionData::IntCompare { args, .. } => args,
        InstructionData::Ternary { args, .. } => args,
        _ => return None,
    };
    let mut bits = [0u64; 3];
    for (k, &v) in args.iter().enumerate() {
        bits[k] = iconst_bits(dfg, v)?;
    }
    let [a, b, c] = bits;
    let w = ctrl.bits();
    let mask = width_mask(w);
    let value = match *data {
        InstructionData::Unary { arg, .. } => match op {
            Bnot => !a,
            Ineg => a.wrapping_neg(),
            Bmask => {
                if a != 0 {
                    u64::MAX
                } else {
                    0
                }
            }
            Uextend | Ireduce => a,
            Sextend => sign_extend(a, dfg.value_type(arg).bits()) as u64,
            _ => return None,
        },
        InstructionData::Binary { .. } => {
            let amount = (b % u64::from(w)) as u32;
            let (sa, sb) = (sign_extend(a, w), sign_extend(b, w));
            match op {
                Iadd => a.wrapping_add(b),
                Isub => a.wrapping_sub(b),
                Imul => a.wrapping_mul(b),
                Band => a & b,
                Bor => a | b,
                Bxor => a ^ b,
                Ishl => a << amount,
                Ushr => a >> amount,
                Sshr => (sa >> amount) as u64,
                Rotl => (a << amount) | (a >> ((w - amount) % w)),
                Rotr => (a >> amount) | (a << ((w - amount) % w)),
                Umin => a.min(b),
                Umax => a.max(b),
                Smin => sa.min(sb) as u64,
                Smax => sa.max(sb) as u64,
                // A division that would trap (by zero, or the signed
                // minimum by -1) stays.
                Udiv | Urem if b == 0 => return None,
                Sdiv | Srem if b == 0 || sb == -1 && sa == sign_extend(1 << (w - 1), w) => return None,
                Udiv | Urem | Sdiv | Srem => div_rem(ctrl, a, b, matches!(op, Sdiv | Srem), matches!(op, Urem | Srem)),
                _ => return None,
            }
        }
        InstructionData::IntCompare { cond, .. } => {
            let (sa, sb) = (sign_extend(a, w), sign_extend(b, w));
            let holds = match cond {
                IntCC::Equal => a == b,
                IntCC::NotEqual => a != b,
                IntCC::UnsignedLessThan => a < b,
                IntCC::UnsignedLessThanOrEqual => a <= b,
                IntCC::UnsignedGreaterThan => a > b,
                IntCC::UnsignedGreaterThanOrEqual => a >= b,
                IntCC::SignedLessThan => sa < sb,
                IntCC::SignedLessThanOrEqual => sa <= sb,
                IntCC::SignedGreaterThan => sa > sb,
                IntCC::SignedGreaterThanOrEqual => sa >= sb,
            };
            return Some((types::I8, u64::from(holds)));
        }
        InstructionData::Ternary { .. } => {
            // The condition first.
            let (c, a, b) = (a, b, c);
            match op {
                Select => {
                    if c != 0 {
                        a
                    } else {
                        b
                    }
                }
                Bitselect => (c & a) | (!c & b),
                _ => return None,
            }
        }
        _ => return None,
    };
    Some((ctrl, value & mask))
}

/// `a / k` or `a % k` of two `ty` constants (their bits, zero-extended),
/// as CLIF defines them: truncating, the remainder with the dividend's sign.
/// `k` is not zero, and not `-1` with `a = INT_MIN` for a signed quotient.
pub(crate) fn div_rem(ty: Type, a: u64, k: u64, signed: bool, rem: bool) -> u64 {
    let r = if signed {
        let (a, k) = (sign_extend(a, ty.bits()), sign_extend(k, ty.bits()));
        (if rem { a.wrapping_rem(k) } else { a.wrapping_div(k) }) as u64
    } else if rem {
        a % k
    } else {
        a / k
    };
    r & width_mask(ty.bits())
}

#[cfg(test)]
mod tests {
    use super::*;
    use cranelift_codegen::cursor::{Cursor, FuncCursor};
    use cranelift_codegen::ir::types::*;
    use cranelift_codegen::ir::{AbiParam, Block, Function, InstBuilder, Signature, UserFuncName, Value};
    use cranelift_codegen::isa::CallConv;
    use cranelift_interpreter::environment::FunctionStore;
    use cranelift_interpreter::interpreter::{Interpreter, InterpreterState};
    use cranelift_interpreter::step::ControlFlow;
    use cranelift_interpreter::value::DataValueExt;
    use proptest::prelude::*;

    const BINARY: [Opcode; 15] = [
        Opcode::Iadd,
        Opcode::Isub,
        Opcode::Imul,
        Opcode::Band,
        Opcode::Bor,
        Opcode::Bxor,
        Opcode::Ishl,
        Opcode::Ushr,
        Opcode::Sshr,
        Opcode::Rotl,
        Opcode::Rotr,
        Opcode::Umin,
        Opcode::Umax,
        Opcode::Smin,
        Opcode::Smax,
    ];
    const TYPES: [Type; 4] = [I8, I16, I32, I64];

    /// A function `%f` returning `ret`, with its entry block laid out, and
    /// that block.
    fn function(ret: Option<Type>) -> (Function, Block) {
        let mut f = Function::with_name_signature(UserFuncName::testcase("f"), Signature::new(CallConv::SystemV));
        f.signature.returns.extend(ret.map(AbiParam::new));
        let b = f.dfg.make_block();
        f.layout.append_block(b);
        (f, b)
    }

    /// A function of no parameters that computes one instruction `make`
    /// builds from constants and returns it; the folded value beside the
    /// interpreter's.
    fn both(ret: Type, make: impl FnOnce(&mut FuncCursor) -> Value) -> (Option<u64>, u64) {
        let (mut f, b) = function(Some(ret));
        let mut pos = FuncCursor::new(&mut f).at_bottom(b);
        let v = make(&mut pos);
        pos.ins().return_(&[v]);
        let inst = f.dfg.value_def(v).inst().unwrap();
        let folded = eval(&f.dfg, &f.dfg.insts[inst], f.dfg.ctrl_typevar(inst)).map(|(t, k)| {
            assert_eq!(t, ret, "{}", f.display());
            k
        });
        let mut store = FunctionStore::default();
        store.add("f".to_string(), &f);
        let mut interp = Interpreter::new(InterpreterState::default().with_function_store(store));
        let ControlFlow::Return(r) = interp.call_by_name("f", &[]).expect("the interpreter runs it") else { panic!("no return") };
        let bits = r[0].clone().into_int_unsigned().expect("an integer") as u64 & width_mask(ret.bits());
        (folded, bits)
    }

    /// [`both`] of the binary operation `op` of type `t` on constants `a`, `b`.
    fn binary(op: Opcode, t: Type, a: u64, b: u64) -> (Option<u64>, u64) {
        both(t, |pos| {
            let (x, y) = (k(pos, t, a), k(pos, t, b));
            let (inst, dfg) = pos.ins().Binary(op, t, x, y);
            dfg.first_result(inst)
        })
    }

    fn k(pos: &mut FuncCursor, t: Type, bits: u64) -> Value {
        pos.ins().iconst(t, (bits & width_mask(t.bits())) as i64)
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]

        #[test]
        fn binary_operations_fold_as_the_interpreter_computes(op in 0..BINARY.len(), t in 0..4usize, a: u64, b in prop_oneof![any::<u64>(), 0..80u64]) {
            let (op, t) = (BINARY[op], TYPES[t]);
            let (folded, run) = binary(op, t, a, b);
            prop_assert_eq!(folded, Some(run));
        }

        #[test]
        fn compares_fold_as_the_interpreter_computes(cond in 0..10usize, t in 0..4usize, a: u64, b in prop_oneof![any::<u64>(), Just(0u64), Just(u64::MAX)], same: bool) {
            let cond = IntCC::all()[cond];
            let t = TYPES[t];
            let b = if same { a } else { b };
            let (folded, run) = both(I8, |pos| {
                let (x, y) = (k(pos, t, a), k(pos, t, b));
                pos.ins().icmp(cond, x, y)
            });
            prop_assert_eq!(folded, Some(run));
        }

        #[test]
        fn conversions_and_selections_fold_as_the_interpreter_computes(from in 0..4usize, to in 0..4usize, a: u64, b: u64, c in prop_oneof![Just(0u64), any::<u64>()]) {
            let (from, to) = (TYPES[from], TYPES[to]);
            let (wide, narrow) = if from.bits() >= to.bits() { (from, to) } else { (to, from) };
            for (ret, which) in [(to, 0), (from, 1), (narrow, 2), (wide, 3), (wide, 4), (from, 5), (from, 6), (from, 7), (from, 8)] {
                let (folded, run) = both(ret, |pos| match which {
                    0 => { let x = k(pos, from, a); pos.ins().bmask(to, x) }
                    1 => { let (c, x, y) = (k(pos, to, c), k(pos, from, a), k(pos, from, b)); pos.ins().select(c, x, y) }
                    2 => { let x = k(pos, wide, a); if wide == narrow { pos.ins().bnot(x) } else { pos.ins().ireduce(narrow, x) } }
                    3 => { let x = k(pos, narrow, a); if wide == narrow { pos.ins().ineg(x) } else { pos.ins().uextend(wide, x) } }
                    4 => { let x = k(pos, narrow, a); if wide == narrow { pos.ins().bnot(x) } else { pos.ins().sextend(wide, x) } }
                    5 => { let x = k(pos, from, a); pos.ins().ineg(x) }
                    6 => { let x = k(pos, from, a); pos.ins().bnot(x) }
                    7 => { let (c, x, y) = (k(pos, from, c), k(pos, from, a), k(pos, from, b)); pos.ins().bitselect(c, x, y) }
                    _ => { let (c, x, y) = (k(pos, from, c), k(pos, from, a), k(pos, from, b)); pos.ins().select(c, x, y) }
                });
                prop_assert_eq!(folded, Some(run), "case {} of {} -> {}", which, from, to);
            }
        }

        #[test]
        fn divisions_fold_as_the_interpreter_computes_unless_they_trap(op in 0..4usize, t in 0..4usize, a in prop_oneof![any::<u64>(), Just(1u64 << 63), Just(0x80), Just(0x8000), Just(0x8000_0000)], b in prop_oneof![any::<u64>(), 0..20u64, Just(u64::MAX)]) {
            let (op, t) = ([Opcode::Udiv, Opcode::Sdiv, Opcode::Urem, Opcode::Srem][op], TYPES[t]);
            let w = t.bits();
            let (a, b) = (a & width_mask(w), b & width_mask(w));
            let traps = b == 0 || matches!(op, Opcode::Sdiv | Opcode::Srem) && b == width_mask(w) && a == 1 << (w - 1);
            if traps {
                let (mut f, blk) = function(None);
                let mut pos = FuncCursor::new(&mut f).at_bottom(blk);
                let (x, y) = (k(&mut pos, t, a), k(&mut pos, t, b));
                let (inst, _) = pos.ins().Binary(op, t, x, y);
                prop_assert_eq!(eval(&f.dfg, &f.dfg.insts[inst], t), None);
            } else {
                let (folded, run) = binary(op, t, a, b);
                prop_assert_eq!(folded, Some(run));
            }
        }
    }

    #[test]
    fn an_operand_that_is_no_constant_or_an_unknown_operation_is_not_evaluated() {
        let (mut f, b) = function(None);
        f.signature.params.push(AbiParam::new(I32));
        let p = f.dfg.append_block_param(b, I32);
        let mut pos = FuncCursor::new(&mut f).at_bottom(b);
        let one = pos.ins().iconst(I32, 1);
        let sum = pos.ins().iadd(p, one);
        let div = pos.ins().udiv(p, one);
        let wide = pos.ins().iconst(I64, 3);
        let pair = pos.ins().iconcat(wide, wide);
        for v in [sum, div, pair] {
            let inst = f.dfg.value_def(v).inst().unwrap();
            assert_eq!(eval(&f.dfg, &f.dfg.insts[inst], f.dfg.ctrl_typevar(inst)), None, "{}", f.dfg.display_inst(inst));
        }
    }
}
