//! `f16` as bits: every half-precision value becomes the `i16` of its bit
//! pattern before instruction selection, and its arithmetic is computed
//! through `f32` (the machine has no half-precision instruction:
//! `docs/float.md`, "f16 and f128").
//!
//! The rewrite is CLIF → CLIF:
//!
//! * every `f16` value (signatures, block parameters, results) becomes an
//!   `i16`; `load`, `store`, `select`, calls, returns and branches keep
//!   their opcodes on the new type (an `f16` is passed as an `i16`,
//!   `docs/abi.md`); `bitcast` between `f16` and `i16` disappears;
//!   `f16const` becomes `iconst.i16` of its bits;
//! * `fneg`, `fabs`, `fcopysign` are bit operations on the sign bit;
//! * `fadd`, `fsub`, `fmul`, `fdiv`, `sqrt`, `fmin`, `fmax`, `ceil`,
//!   `floor`, `trunc`, `nearest`: the operands widened to `f32` (exact),
//!   the `f32` operation, its result rounded once to `f16`. That is the
//!   correctly rounded `f16` result: `f32` keeps 24 ≥ 2·11 + 2 significant
//!   bits, so rounding the `f32` result again cannot differ from rounding
//!   the exact value (the double rounding of +, −, ×, ÷ and √ is innocuous
//!   at that width); the rounding functions and min/max are exact in `f32`;
//! * `fcmp` and `fcvt_to_*`: on the widened operands (exact);
//! * `fpromote` to `f32`/`f64`: the widening below; `fdemote` from `f32`:
//!   the rounding below; from `f64`: first rounded to `f32` *to odd* (the
//!   nearest `f32`, moved one unit toward the exact value where that one is
//!   not exact and its last bit is even), then to `f16` — a round-to-odd
//!   result at ≥ 2 more bits rounds to nearest like the exact value;
//! * `fcvt_from_sint`/`fcvt_from_uint`: integers of 32 bits and more
//!   clamped to ±2^16 first (every magnitude from 65520 up rounds to
//!   infinity; below 2^16 the `f32` conversion is exact), then converted to
//!   `f32` and rounded to `f16`;
//! * `fma`: not correctly rounded through `f32`. The product of two `f16`
//!   is exact in `f64`; the sum with the third operand is taken in `f64`
//!   with its exact error (Knuth's TwoSum), the sum made round-to-odd from
//!   the error's sign, and that `f64` rounded to `f16` as `fdemote` does
//!   (round-to-odd composes: odd at 53 bits, then odd at 24, then nearest
//!   at 11 is the nearest `f16` to the exact `a·b + c`).
//!
//! Widening (`f16` bits `h` → `f32`): `(h & 0x7fff) << 13` read as an
//! `f32` and multiplied by 2^112 is the exact magnitude of a finite `h`
//! (subnormals included); infinities and NaNs get the all-ones exponent
//! (a NaN quieted, its payload kept); then the sign.
//! Rounding (`f32` bits `u` → `f16`, to nearest even): on `a = u & 0x7fffffff`,
//! NaN → quiet NaN with the payload's top 9 bits; `a` ≥ 65520 → ∞; a normal
//! result `(a + 0xfff + lsb) >> 13` rebiased (the carry of a round-up moves
//! into the exponent); below 2^-14 the `f32` sum `a + 0.5`, whose unit in
//! the last place is 2^-24, the subnormal `f16`'s unit, does the rounding.
//! An arithmetic NaN is thus Cranelift's canonical `f16` NaN `0x7e00`.
//!
//! Any other instruction with an `f16` operand or result is an
//! "unsupported" error naming it (checked before anything is rewritten).

use cranelift_codegen::cursor::FuncCursor;
use cranelift_codegen::ir::condcodes::{FloatCC, IntCC};
use cranelift_codegen::ir::immediates::{Ieee32, Ieee64};
use cranelift_codegen::ir::types::{F16, F32, F64, I16, I32, I64};
use cranelift_codegen::ir::{Function, Inst, InstBuilder, InstructionData, MemFlagsData, Opcode, Value};

use crate::Error;

/// Rewrites every `f16` value of `f` as an `i16` (in place).
pub fn legalize_f16(f: &mut Function) -> Result<(), Error> {
    super::legalize_as_bits(f, F16, I16, computes, compute)
}

fn computes(op: Opcode) -> bool {
    use Opcode::*;
    matches!(
        op,
        F16const
            | Fneg
            | Fabs
            | Fcopysign
            | Fadd
            | Fsub
            | Fmul
            | Fdiv
            | Sqrt
            | Fmin
            | Fmax
            | Ceil
            | Floor
            | Trunc
            | Nearest
            | Fma
            | Fcmp
            | Fpromote
            | Fdemote
            | FcvtToSint
            | FcvtToUint
            | FcvtToSintSat
            | FcvtToUintSat
            | FcvtFromSint
            | FcvtFromUint
    )
}

/// The `i16` bits (or the compare or integer) that replace `inst`, its
/// `f16` operands already `i16`.
fn compute(p: &mut FuncCursor, inst: Inst) -> Value {
    let op = p.func.dfg.insts[inst].opcode();
    let args = p.func.dfg.inst_args(inst).to_vec();
    let rty = p.func.dfg.value_type(p.func.dfg.inst_results(inst)[0]);
    let data = p.func.dfg.insts[inst];
    match op {
        Opcode::F16const => {
            let InstructionData::UnaryIeee16 { imm, .. } = data else { unreachable!("f16const has an Ieee16") };
            p.ins().iconst(I16, imm.bits() as i64)
        }
        Opcode::Fneg => p.ins().bxor_imm_u(args[0], 0x8000),
        Opcode::Fabs => p.ins().band_imm_u(args[0], 0x7fff),
        Opcode::Fcopysign => {
            let mag = p.ins().band_imm_u(args[0], 0x7fff);
            let sign = p.ins().band_imm_u(args[1], 0x8000);
            p.ins().bor(mag, sign)
        }
        Opcode::Fadd | Opcode::Fsub | Opcode::Fmul | Opcode::Fdiv | Opcode::Fmin | Opcode::Fmax => {
            let (x, y) = (widen(p, args[0]), widen(p, args[1]));
            let r = match op {
                Opcode::Fadd => p.ins().fadd(x, y),
                Opcode::Fsub => p.ins().fsub(x, y),
                Opcode::Fmul => p.ins().fmul(x, y),
                Opcode::Fdiv => p.ins().fdiv(x, y),
                Opcode::Fmin => p.ins().fmin(x, y),
                _ => p.ins().fmax(x, y),
            };
            round_f32(p, r)
        }
        Opcode::Sqrt | Opcode::Ceil | Opcode::Floor | Opcode::Trunc | Opcode::Nearest => {
            let x = widen(p, args[0]);
            let r = match op {
                Opcode::Sqrt => p.ins().sqrt(x),
                Opcode::Ceil => p.ins().ceil(x),
                Opcode::Floor => p.ins().floor(x),
                Opcode::Trunc => p.ins().trunc(x),
                _ => p.ins().nearest(x),
            };
            round_f32(p, r)
        }
        Opcode::Fma => fma(p, args[0], args[1], args[2]),
        Opcode::Fcmp => {
            let InstructionData::FloatCompare { cond, .. } = data else { unreachable!("fcmp is a FloatCompare") };
            let (x, y) = (widen(p, args[0]), widen(p, args[1]));
            p.ins().fcmp(cond, x, y)
        }
        Opcode::Fpromote => {
            let x = widen(p, args[0]);
            if rty == F32 {
                x
            } else {
                p.ins().fpromote(F64, x)
            }
        }
        Opcode::Fdemote if p.func.dfg.value_type(args[0]) == F64 => round_f64(p, args[0]),
        Opcode::Fdemote => round_f32(p, args[0]),
        Opcode::FcvtToSint | Opcode::FcvtToUint | Opcode::FcvtToSintSat | Opcode::FcvtToUintSat => {
            let x = widen(p, args[0]);
            match op {
                Opcode::FcvtToSint => p.ins().fcvt_to_sint(rty, x),
                Opcode::FcvtToUint => p.ins().fcvt_to_uint(rty, x),
                Opcode::FcvtToSintSat => p.ins().fcvt_to_sint_sat(rty, x),
                _ => p.ins().fcvt_to_uint_sat(rty, x),
            }
        }
        Opcode::FcvtFromSint | Opcode::FcvtFromUint => from_int(p, args[0], op == Opcode::FcvtFromSint),
        _ => unreachable!("`computes` admits only the opcodes above"),
    }
}

fn bits_as(p: &mut FuncCursor, ty: cranelift_codegen::ir::Type, x: Value) -> Value {
    p.ins().bitcast(ty, MemFlagsData::new(), x)
}

/// The `f32` of the `f16` bits `h` (exact).
fn widen(p: &mut FuncCursor, h: Value) -> Value {
    let x = p.ins().uextend(I32, h);
    let mag = p.ins().band_imm_u(x, 0x7fff);
    let m = p.ins().ishl_imm_u(mag, 13);
    let sign = p.ins().band_imm_u(x, 0x8000);
    let sign = p.ins().ishl_imm_u(sign, 16);
    // A finite magnitude: m is that number times 2^-112.
    let small = bits_as(p, F32, m);
    let scale = p.ins().f32const(Ieee32::with_bits(0x7780_0000)); // 2^112
    let finite = p.ins().fmul(small, scale);
    let finite = bits_as(p, I32, finite);
    let inf = p.ins().bor_imm_u(m, 0x7f80_0000);
    let nan = p.ins().bor_imm_u(m, 0x7fc0_0000);
    let is_inf = p.ins().icmp_imm_s(IntCC::Equal, mag, 0x7c00);
    let is_nan = p.ins().icmp_imm_s(IntCC::UnsignedGreaterThan, mag, 0x7c00);
    let r = p.ins().select(is_inf, inf, finite);
    let r = p.ins().select(is_nan, nan, r);
    let r = p.ins().bor(r, sign);
    bits_as(p, F32, r)
}

/// The `f16` bits of the `f32` `x` rounded to nearest even.
fn round_f32(p: &mut FuncCursor, x: Value) -> Value {
    let u = bits_as(p, I32, x);
    round_f32_bits(p, u)
}

/// The `f16` bits of the `f32` with bits `u`, rounded to nearest even.
fn round_f32_bits(p: &mut FuncCursor, u: Value) -> Value {
    let sign = p.ins().ushr_imm_u(u, 16);
    let sign = p.ins().band_imm_u(sign, 0x8000);
    let a = p.ins().band_imm_u(u, 0x7fff_ffff);
    let t = p.ins().ushr_imm_u(a, 13);
    let nan = p.ins().band_imm_u(t, 0x3ff);
    let nan = p.ins().bor_imm_u(nan, 0x7e00);
    // Normal: round at bit 13, then rebias the exponent (127 − 15 = 112).
    let lsb = p.ins().band_imm_u(t, 1);
    let n = p.ins().iadd_imm_s(a, 0xfff);
    let n = p.ins().iadd(n, lsb);
    let n = p.ins().ushr_imm_u(n, 13);
    let normal = p.ins().iadd_imm_s(n, -(112 << 10));
    // Subnormal (or zero): 0.5 + a rounds a to a multiple of 2^-24.
    let af = bits_as(p, F32, a);
    let half = p.ins().f32const(Ieee32::with_bits(0x3f00_0000));
    let s = p.ins().fadd(af, half);
    let s = bits_as(p, I32, s);
    let sub = p.ins().iadd_imm_s(s, -0x3f00_0000);
    let tiny = p.ins().icmp_imm_s(IntCC::UnsignedLessThan, a, 0x3880_0000); // 2^-14
    let r = p.ins().select(tiny, sub, normal);
    let big = p.ins().icmp_imm_s(IntCC::UnsignedGreaterThanOrEqual, a, 0x477f_f000); // 65520
    let inf = p.ins().iconst(I32, 0x7c00);
    let r = p.ins().select(big, inf, r);
    let is_nan = p.ins().icmp_imm_s(IntCC::UnsignedGreaterThan, a, 0x7f80_0000);
    let r = p.ins().select(is_nan, nan, r);
    let r = p.ins().bor(r, sign);
    p.ins().ireduce(I16, r)
}

/// The `f16` bits of the `f64` `x` rounded to nearest even: through the
/// `f32` rounded to odd.
fn round_f64(p: &mut FuncCursor, x: Value) -> Value {
    let t = p.ins().fdemote(F32, x);
    let back = p.ins().fpromote(F64, t);
    let exact = p.ins().fcmp(FloatCC::UnorderedOrEqual, back, x);
    let (tm, xm) = (p.ins().fabs(back), p.ins().fabs(x));
    let above = p.ins().fcmp(FloatCC::GreaterThan, tm, xm);
    let tb = bits_as(p, I32, t);
    let u = to_odd(p, tb, above, exact);
    round_f32_bits(p, u)
}

/// Round-to-odd from a rounded `b` (float bits): `b` where `exact`, else the
/// neighbour toward zero (`b` − 1 where `b` is `above` the exact value in
/// magnitude) with its last bit set.
fn to_odd(p: &mut FuncCursor, b: Value, above: Value, exact: Value) -> Value {
    let below = p.ins().iadd_imm_s(b, -1);
    let trunc = p.ins().select(above, below, b);
    let odd = p.ins().bor_imm_u(trunc, 1);
    p.ins().select(exact, b, odd)
}

/// `a·b + c` on `f16` bits, rounded once (see the module docs).
fn fma(p: &mut FuncCursor, a: Value, b: Value, c: Value) -> Value {
    let [a, b, c] = [a, b, c].map(|h| {
        let x = widen(p, h);
        p.ins().fpromote(F64, x)
    });
    let prod = p.ins().fmul(a, b);
    let s = p.ins().fadd(prod, c);
    // TwoSum: e = (prod + c) − s exactly.
    let bv = p.ins().fsub(s, prod);
    let av = p.ins().fsub(s, bv);
    let ea = p.ins().fsub(prod, av);
    let eb = p.ins().fsub(c, bv);
    let e = p.ins().fadd(ea, eb);
    let zero = p.ins().f64const(Ieee64::with_bits(0));
    // Infinite or NaN sums have a NaN error: kept as they are.
    let exact = p.ins().fcmp(FloatCC::UnorderedOrEqual, e, zero);
    let sb = bits_as(p, I64, s);
    let ebits = bits_as(p, I64, e);
    let signs = p.ins().bxor(sb, ebits);
    let above = p.ins().icmp_imm_s(IntCC::SignedLessThan, signs, 0);
    let odd = to_odd(p, sb, above, exact);
    let s = bits_as(p, F64, odd);
    round_f64(p, s)
}

/// The `f16` bits of the integer `x` converted (signed or unsigned).
fn from_int(p: &mut FuncCursor, x: Value, signed: bool) -> Value {
    let ty = p.func.dfg.value_type(x);
    let x32 = if ty.bits() < 32 {
        if signed {
            p.ins().sextend(I32, x)
        } else {
            p.ins().uextend(I32, x)
        }
    } else {
        // Every magnitude from 65520 up rounds to infinity, and 2^16 does.
        let hi = p.ins().iconst(ty, 1 << 16);
        let c = if signed {
            // The immediate of a 32-bit iconst is its bits, zero-extended.
            let lo = p.ins().iconst(ty, if ty == I32 { -(1i64 << 16) as u32 as i64 } else { -(1 << 16) });
            let c = p.ins().smin(x, hi);
            p.ins().smax(c, lo)
        } else {
            p.ins().umin(x, hi)
        };
        if ty == I32 {
            c
        } else {
            p.ins().ireduce(I32, c)
        }
    };
    let r = if signed { p.ins().fcvt_from_sint(F32, x32) } else { p.ins().fcvt_from_uint(F32, x32) };
    round_f32(p, r)
}
