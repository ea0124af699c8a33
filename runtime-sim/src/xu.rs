//! The transcendental unit: MUFU over every function and type, with the
//! special-value tables of the document and errata E75–E83.
//!
//! Values are computed in binary64 and rounded once to the result type.
//! Subnormal inputs and results are flushed to zero of the same sign (E78);
//! every NaN result is the type's canonical quiet NaN.

use crate::fpconv::{bf16_to_f64, f16_to_f64, f64_to_bf16, f64_to_f16};
use crate::memory::ConstBanks;
use crate::ops::{FMod, MufuFn, MufuTy, Op};
use crate::regs::Regs;
use crate::trap::TrapKind;

/// Canonical quiet NaNs of the result types.
pub const QNAN_F32: u32 = 0x7FFF_FFFF;
pub const QNAN_F16: u16 = 0x7FFF;
/// The F64 QNAN `0x7FFFFFFF_00000000` as the high word that MUFU.F64 writes.
pub const QNAN_F64_HI: u32 = 0x7FFF_FFFF;

/// The function itself, on binary64, following the special-value tables.
pub fn mufu_f64(f: MufuFn, x: f64) -> f64 {
    match f {
        MufuFn::Cos => x.cos(),
        MufuFn::Sin => x.sin(),
        MufuFn::Ex2 => x.exp2(),
        MufuFn::Lg2 => {
            if x == 0.0 {
                f64::NEG_INFINITY
            } else {
                x.log2()
            }
        }
        MufuFn::Rcp => 1.0 / x,
        MufuFn::Rsq => {
            if x == 0.0 {
                1.0 / x
            } else {
                1.0 / x.sqrt()
            }
        }
        MufuFn::Sqrt => x.sqrt(),
        MufuFn::Tanh => x.tanh(),
    }
}

fn apply_mod(x: f64, m: FMod) -> f64 {
    let x = if m.abs { x.abs() } else { x };
    if m.neg {
        -x
    } else {
        x
    }
}

/// Flushes a value that is subnormal in a format whose smallest normal
/// magnitude is `min_normal`.
fn ftz(x: f64, min_normal: f64) -> f64 {
    if x != 0.0 && x.abs() < min_normal {
        0.0f64.copysign(x)
    } else {
        x
    }
}

const F32_MIN_NORMAL: f64 = 1.1754943508222875e-38;
const F16_MIN_NORMAL: f64 = 6.103515625e-05;

/// MUFU on one 32-bit source word.
pub fn mufu(f: MufuFn, ty: MufuTy, m: FMod, hsel: bool, sat: bool, b: u32) -> u32 {
    let half = |h: u16, bf: bool| -> u16 {
        let (x, min) = if bf { (bf16_to_f64(h), F32_MIN_NORMAL) } else { (f16_to_f64(h), F16_MIN_NORMAL) };
        let y = ftz(mufu_f64(f, ftz(apply_mod(x, m), min)), min);
        let r = if bf { f64_to_bf16(y, QNAN_F16) } else { f64_to_f16(y, QNAN_F16) };
        // Results that round into the subnormal range are flushed too.
        let back = if bf { bf16_to_f64(r) } else { f16_to_f64(r) };
        if back != 0.0 && back.abs() < min {
            r & 0x8000
        } else {
            r
        }
    };
    match ty {
        MufuTy::F32 => {
            let x = ftz(apply_mod(f32::from_bits(b) as f64, m), F32_MIN_NORMAL);
            let mut y = mufu_f64(f, x) as f32 as f64;
            y = ftz(y, F32_MIN_NORMAL);
            if sat {
                y = if y.is_nan() { 0.0 } else { y.clamp(0.0, 1.0) };
                // clamp keeps -0.0; saturation yields +0.0.
                if y == 0.0 {
                    y = 0.0;
                }
            }
            if y.is_nan() {
                QNAN_F32
            } else {
                (y as f32).to_bits()
            }
        }
        MufuTy::F64 | MufuTy::F64H => {
            let x = ftz(apply_mod(f64::from_bits((b as u64) << 32), m), f64::MIN_POSITIVE);
            let y = ftz(mufu_f64(f, x), f64::MIN_POSITIVE);
            if y.is_nan() {
                QNAN_F64_HI
            } else {
                (y.to_bits() >> 32) as u32
            }
        }
        MufuTy::F16 | MufuTy::Bf16 => {
            let h = if hsel { (b >> 16) as u16 } else { b as u16 };
            half(h, ty == MufuTy::Bf16) as u32
        }
        MufuTy::F16x2 | MufuTy::Bf16x2 => {
            let bf = ty == MufuTy::Bf16x2;
            let lo = half(b as u16, bf) as u32;
            let hi = half((b >> 16) as u16, bf) as u32;
            hi << 16 | lo
        }
    }
}

/// Runs MUFU over `N` lanes.
pub(crate) fn exec<const N: usize>(op: &Op, rf: &mut Regs, cb: &ConstBanks, mask: u32) -> Result<(), TrapKind> {
    let Op::Mufu { d, b, m, hsel, f, ty, sat } = *op else { unreachable!() };
    let vb = rf.get::<N>(b, cb)?;
    let mut r = [0u32; N];
    for l in 0..N {
        if mask >> l & 1 != 0 {
            r[l] = mufu(f, ty, m, hsel, sat, vb[l]);
        }
    }
    rf.put::<N>(d, &r, mask);
    Ok(())
}
