//! Double-precision ALU: DADD, DMUL, DFMA with all four rounding modes
//! computed exactly (directed modes by a soft-float, rustc_apfloat; the
//! default round-to-nearest-even by the host's IEEE arithmetic), and DMNMX
//! and DSETP with their NaN rules (errata E17, E38, E39, E49, E84).

use rustc_apfloat::ieee::Double;
use rustc_apfloat::{Float, Round};

use crate::alu_int::bool_op;
use crate::memory::ConstBanks;
use crate::ops::{FCmp, FMod, Op, Rnd};
use crate::regs::{all, Regs};
use crate::trap::TrapKind;

/// The default NaN of an invalid binary64 operation (E17).
pub const DEFAULT_NAN64: u64 = 0x7FFF_FFFF_0000_0000;
const SIGN64: u64 = 1 << 63;
const QUIET64: u64 = 1 << 51;

pub fn round_of(r: Rnd) -> Round {
    match r {
        Rnd::Rn => Round::NearestTiesToEven,
        Rnd::Rp => Round::TowardPositive,
        Rnd::Rm => Round::TowardNegative,
        Rnd::Rz => Round::TowardZero,
    }
}

/// Applies `|…|` then `-` to a binary64 bit pattern.
#[inline(always)]
pub fn fmod64(x: u64, m: FMod) -> u64 {
    let x = if m.abs { x & !SIGN64 } else { x };
    if m.neg {
        x ^ SIGN64
    } else {
        x
    }
}

#[inline(always)]
pub fn is_nan64(x: u64) -> bool {
    x & !SIGN64 > 0x7FF0_0000_0000_0000
}

/// The first NaN of `xs` made quiet, if any (E17).
fn nan_in(xs: &[u64]) -> Option<u64> {
    xs.iter().copied().find(|&x| is_nan64(x)).map(|x| x | QUIET64)
}

/// A host result in round-to-nearest-even (IEEE-exact for that mode); an
/// invalid operation gives the default NaN.
fn host(r: f64) -> u64 {
    if r.is_nan() {
        DEFAULT_NAN64
    } else {
        r.to_bits()
    }
}

fn finish(r: Double) -> u64 {
    if r.is_nan() {
        DEFAULT_NAN64
    } else {
        r.to_bits() as u64
    }
}

/// `a + b`; NaN priority SrcB, Ra (E17).
pub fn dadd(a: u64, b: u64, rnd: Rnd) -> u64 {
    if let Some(n) = nan_in(&[b, a]) {
        return n;
    }
    if rnd == Rnd::Rn {
        return host(f64::from_bits(a) + f64::from_bits(b));
    }
    finish(Double::from_bits(a as u128).add_r(Double::from_bits(b as u128), round_of(rnd)).value)
}

/// `a * b`; NaN priority SrcB, Ra (E17).
pub fn dmul(a: u64, b: u64, rnd: Rnd) -> u64 {
    if let Some(n) = nan_in(&[b, a]) {
        return n;
    }
    if rnd == Rnd::Rn {
        return host(f64::from_bits(a) * f64::from_bits(b));
    }
    finish(Double::from_bits(a as u128).mul_r(Double::from_bits(b as u128), round_of(rnd)).value)
}

/// `a * b + c` with one rounding; NaN priority SrcB, SrcC, Ra.
pub fn dfma(a: u64, b: u64, c: u64, rnd: Rnd) -> u64 {
    if let Some(n) = nan_in(&[b, c, a]) {
        return n;
    }
    if rnd == Rnd::Rn {
        return host(f64::from_bits(a).mul_add(f64::from_bits(b), f64::from_bits(c)));
    }
    let (fa, fb, fc) = (Double::from_bits(a as u128), Double::from_bits(b as u128), Double::from_bits(c as u128));
    finish(fa.mul_add_r(fb, fc, round_of(rnd)).value)
}

/// Total order used by DMNMX on non-NaN values: -0 < +0.
fn less64(a: u64, b: u64) -> bool {
    let (x, y) = (f64::from_bits(a), f64::from_bits(b));
    if x == y {
        // Only ±0 pairs (or equal values) get here: negative zero is smaller.
        a & SIGN64 != 0 && b & SIGN64 == 0
    } else {
        x < y
    }
}

/// DMNMX: `pp ? min : max` (E38), NaN rules of E39.
pub fn dmnmx(a: u64, b: u64, min: bool) -> u64 {
    match (is_nan64(a), is_nan64(b)) {
        (true, true) => b | QUIET64,
        (true, false) => b,
        (false, true) => a,
        (false, false) => {
            if less64(a, b) == min {
                a
            } else {
                b
            }
        }
    }
}

/// A floating-point comparison with the ordered/unordered rules (E49).
pub fn fcmp(cmp: FCmp, x: f64, y: f64) -> bool {
    let unordered = x.is_nan() || y.is_nan();
    match cmp {
        FCmp::Eq => x == y,
        FCmp::Ne => !unordered && x != y,
        FCmp::Lt => x < y,
        FCmp::Le => x <= y,
        FCmp::Gt => x > y,
        FCmp::Ge => x >= y,
        FCmp::Equ => unordered || x == y,
        FCmp::Neu => x != y,
        FCmp::Ltu => unordered || x < y,
        FCmp::Leu => unordered || x <= y,
        FCmp::Gtu => unordered || x > y,
        FCmp::Geu => unordered || x >= y,
        FCmp::Nan => unordered,
        FCmp::Num => !unordered,
    }
}

/// Runs a DALU op over the 32 lanes.
pub(crate) fn exec<const N: usize>(op: &Op, rf: &mut Regs, cb: &ConstBanks, mask: u32) -> Result<(), TrapKind> {
    match *op {
        Op::Dadd { d, a, b, ma, mb, rnd } | Op::Dmul { d, a, b, ma, mb, rnd } => {
            let (va, vb) = (rf.get64::<N>(a, cb)?, rf.get64::<N>(b, cb)?);
            let add = matches!(op, Op::Dadd { .. });
            let mut r = [0u64; N];
            for l in 0..N {
                if mask >> l & 1 != 0 {
                    let (x, y) = (fmod64(va[l], ma), fmod64(vb[l], mb));
                    r[l] = if add { dadd(x, y, rnd) } else { dmul(x, y, rnd) };
                }
            }
            rf.put64::<N>(d, &r, mask);
        }
        Op::Dfma { d, a, b, c, ma, mb, mc, rnd } => {
            let (va, vb, vc) = (rf.get64::<N>(a, cb)?, rf.get64::<N>(b, cb)?, rf.get64::<N>(c, cb)?);
            let mut r = [0u64; N];
            for l in 0..N {
                if mask >> l & 1 != 0 {
                    r[l] = dfma(fmod64(va[l], ma), fmod64(vb[l], mb), fmod64(vc[l], mc), rnd);
                }
            }
            rf.put64::<N>(d, &r, mask);
        }
        Op::Dmnmx { d, a, b, ma, mb, pp } => {
            let (va, vb) = (rf.get64::<N>(a, cb)?, rf.get64::<N>(b, cb)?);
            let p = rf.pin::<N>(pp);
            let mut r = [0u64; N];
            for l in 0..N {
                r[l] = dmnmx(fmod64(va[l], ma), fmod64(vb[l], mb), p >> l & 1 != 0);
            }
            rf.put64::<N>(d, &r, mask);
        }
        Op::Dsetp { a, b, ma, mb, cmp, bop, pp, pu, pv } => {
            let (va, vb) = (rf.get64::<N>(a, cb)?, rf.get64::<N>(b, cb)?);
            let p = rf.pin::<N>(pp);
            let mut t = 0u32;
            for l in 0..N {
                let (x, y) = (f64::from_bits(fmod64(va[l], ma)), f64::from_bits(fmod64(vb[l], mb)));
                t |= (fcmp(cmp, x, y) as u32) << l;
            }
            rf.pout::<N>(pu, bool_op(bop, t, p), mask);
            rf.pout::<N>(pv, bool_op(bop, !t & all::<N>(), p), mask);
        }
        _ => unreachable!("not a DALU op: {:?}", op),
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The host fast path and the soft-float agree in round-to-nearest-even.
    #[test]
    fn host_nearest_even_matches_the_soft_float() {
        let mut next = crate::test_rng::xorshift64(0x9E37_79B9_7F4A_7C15u64);
        for _ in 0..20000 {
            let (a, b, c) = (next(), next(), next());
            if [a, b, c].iter().any(|&v| is_nan64(v)) {
                continue;
            }
            let soft = |r: Double| finish(r);
            let (fa, fb, fc) = (Double::from_bits(a as u128), Double::from_bits(b as u128), Double::from_bits(c as u128));
            let rn = Round::NearestTiesToEven;
            assert_eq!(dadd(a, b, Rnd::Rn), soft(fa.add_r(fb, rn).value), "{:x} + {:x}", a, b);
            assert_eq!(dmul(a, b, Rnd::Rn), soft(fa.mul_r(fb, rn).value), "{:x} * {:x}", a, b);
            assert_eq!(dfma(a, b, c, Rnd::Rn), soft(fa.mul_add_r(fb, fc, rn).value), "fma {:x} {:x} {:x}", a, b, c);
        }
    }
}
