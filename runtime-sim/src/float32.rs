//! 32-bit float arithmetic and conversions: FADD, FMUL, FFMA, FMNMX, FSETP,
//! FRND (F32/F64), I2F, F2I, F2F (docs/isa-extensions.md, sections 5 and
//! 6.19–6.26). Directed rounding modes use a soft-float (rustc_apfloat);
//! round-to-nearest-even uses the host's IEEE arithmetic, which is exact for
//! that mode (NaN and invalid cases are decided before either runs; the
//! forms fused over lanes, `add_mul_rn`, `ffma_rn`, `fmnmx_rows`, compute
//! every lane first and redo the lanes that need these rules).

use rustc_apfloat::ieee::{Double, Single};
use rustc_apfloat::{Float, FloatConvert};

use crate::alu_int::bool_op;
use crate::dalu::{fcmp, fmod64, is_nan64, round_of};
use crate::memory::ConstBanks;
use crate::ops::{FMod, IntTy, Op, Rnd};
use crate::regs::{all, bit_of, rows, Regs};
use crate::trap::TrapKind;

/// The default NaN of an invalid F32 operation.
pub const DEFAULT_NAN32: u32 = 0x7FFF_FFFF;
const SIGN32: u32 = 1 << 31;
const QUIET32: u32 = 1 << 22;

#[inline(always)]
pub fn fmod32(x: u32, m: FMod) -> u32 {
    let x = if m.abs { x & !SIGN32 } else { x };
    if m.neg {
        x ^ SIGN32
    } else {
        x
    }
}

#[inline(always)]
pub fn is_nan32(x: u32) -> bool {
    x & !SIGN32 > 0x7F80_0000
}

fn is_inf32(x: u32) -> bool {
    x & !SIGN32 == 0x7F80_0000
}

fn is_zero32(x: u32) -> bool {
    x & !SIGN32 == 0
}

fn sf(x: u32) -> Single {
    Single::from_bits(x as u128)
}

/// FADD: NaN order SrcB, Ra; ∞−∞ gives the default NaN.
pub fn fadd(a: u32, b: u32, rnd: Rnd) -> u32 {
    if is_nan32(b) {
        return b | QUIET32;
    }
    if is_nan32(a) {
        return a | QUIET32;
    }
    if is_inf32(a) && is_inf32(b) && (a ^ b) & SIGN32 != 0 {
        return DEFAULT_NAN32;
    }
    if rnd == Rnd::Rn {
        // Host binary32 addition is IEEE round-to-nearest-even: exact here.
        return (f32::from_bits(a) + f32::from_bits(b)).to_bits();
    }
    sf(a).add_r(sf(b), round_of(rnd)).value.to_bits() as u32
}

/// FMUL: NaN order SrcB, Ra; 0×∞ gives the default NaN.
pub fn fmul(a: u32, b: u32, rnd: Rnd) -> u32 {
    if is_nan32(b) {
        return b | QUIET32;
    }
    if is_nan32(a) {
        return a | QUIET32;
    }
    if (is_zero32(a) && is_inf32(b)) || (is_inf32(a) && is_zero32(b)) {
        return DEFAULT_NAN32;
    }
    if rnd == Rnd::Rn {
        return (f32::from_bits(a) * f32::from_bits(b)).to_bits();
    }
    sf(a).mul_r(sf(b), round_of(rnd)).value.to_bits() as u32
}

/// FFMA: one rounding; NaN order SrcB, SrcC, Ra.
pub fn ffma(a: u32, b: u32, c: u32, rnd: Rnd) -> u32 {
    for x in [b, c, a] {
        if is_nan32(x) {
            return x | QUIET32;
        }
    }
    if (is_zero32(a) && is_inf32(b)) || (is_inf32(a) && is_zero32(b)) {
        return DEFAULT_NAN32;
    }
    let prod_inf = is_inf32(a) || is_inf32(b);
    let prod_sign = (a ^ b) & SIGN32;
    if prod_inf && is_inf32(c) && prod_sign != c & SIGN32 {
        return DEFAULT_NAN32;
    }
    if rnd == Rnd::Rn {
        // `mul_add` is a fused multiply-add rounded once to nearest-even.
        return f32::from_bits(a).mul_add(f32::from_bits(b), f32::from_bits(c)).to_bits();
    }
    sf(a).mul_add_r(sf(b), sf(c), round_of(rnd)).value.to_bits() as u32
}

/// FMNMX: `pp ? min : max` (the DMNMX polarity of erratum E38, as
/// isa-extensions.md §6.21 states), `.NUM` or `.NAN` behaviour.
pub fn fmnmx(a: u32, b: u32, min: bool, nan_mode: bool) -> u32 {
    let (na, nb) = (is_nan32(a), is_nan32(b));
    if na || nb {
        return if nan_mode {
            if nb {
                b | QUIET32
            } else {
                a | QUIET32
            }
        } else if !na {
            a
        } else if !nb {
            b
        } else {
            b | QUIET32
        };
    }
    let (x, y) = (f32::from_bits(a), f32::from_bits(b));
    // -0 < +0 for the selection.
    let a_less = if x == y { a & SIGN32 != 0 && b & SIGN32 == 0 } else { x < y };
    if a_less == min {
        a
    } else {
        b
    }
}

/// Rounds to an integral value in the given mode, keeping the sign of zero.
fn round_integral(x: f64, rnd: Rnd) -> f64 {
    let r = match rnd {
        Rnd::Rn => x.round_ties_even(),
        Rnd::Rp => x.ceil(),
        Rnd::Rm => x.floor(),
        Rnd::Rz => x.trunc(),
    };
    r.copysign(x)
}

/// FRND on a binary32 pattern.
pub fn frnd32(x: u32, rnd: Rnd) -> u32 {
    if is_nan32(x) {
        return x | QUIET32;
    }
    (round_integral(f32::from_bits(x) as f64, rnd) as f32).to_bits()
}

/// FRND on a binary64 pattern.
pub fn frnd64(x: u64, rnd: Rnd) -> u64 {
    if is_nan64(x) {
        return x | 1 << 51;
    }
    round_integral(f64::from_bits(x), rnd).to_bits()
}

/// I2F: the integer rounded once to F32 or F64 (zero is +0).
pub fn i2f(v: u64, from: IntTy, to_f64: bool, rnd: Rnd) -> u64 {
    let n: i128 = match from {
        IntTy::S32 => v as u32 as i32 as i128,
        IntTy::U32 => v as u32 as i128,
        IntTy::S64 => v as i64 as i128,
        IntTy::U64 => v as i128,
    };
    if n == 0 {
        return 0;
    }
    let r = round_of(rnd);
    if to_f64 {
        Double::from_i128_r(n, r).value.to_bits() as u64
    } else {
        Single::from_i128_r(n, r).value.to_bits() as u64
    }
}

/// F2I: round, then saturate; NaN gives 0.
pub fn f2i(v: u64, from_f64: bool, to: IntTy, rnd: Rnd) -> u64 {
    let x = if from_f64 { f64::from_bits(v) } else { f32::from_bits(v as u32) as f64 };
    if x.is_nan() {
        return 0;
    }
    let r = round_integral(x, rnd);
    // Rust's float-to-integer casts saturate.
    match to {
        IntTy::S32 => r as i32 as u32 as u64,
        IntTy::U32 => r as u32 as u64,
        IntTy::S64 => r as i64 as u64,
        IntTy::U64 => r as u64,
    }
}

/// F2F between F32 and F64.
pub fn f2f(v: u64, to_f64: bool, rnd: Rnd) -> u64 {
    if to_f64 {
        let x = v as u32;
        if is_nan32(x) {
            let sign = ((x >> 31) as u64) << 63;
            return sign | 0x7FF8_0000_0000_0000 | ((x as u64 & 0x7F_FFFF) << 29);
        }
        (f32::from_bits(x) as f64).to_bits()
    } else {
        if is_nan64(v) {
            let sign = ((v >> 63) as u32) << 31;
            return (sign | 0x7FC0_0000 | ((v & 0xF_FFFF_FFFF_FFFF) >> 29) as u32) as u64;
        }
        let mut loses = false;
        let r: Single = Double::from_bits(v as u128).convert_r(round_of(rnd), &mut loses).value;
        r.to_bits() as u64
    }
}

/// FADD (`ADD`) or FMUL rounded to nearest-even over `N` lanes of modified
/// operands (`x(l)`, `y(l)`), in one pass the compiler vectorises: host
/// binary32 arithmetic on every lane, and a flag of whether any result is a
/// NaN. A non-NaN host result has no NaN input and no invalid operation, so
/// it is already exact; NaN lanes (rare) are redone by the full rule (NaN
/// priority, default NaN) in a second pass.
#[inline(always)]
pub(crate) fn add_mul_rn<const N: usize, const ADD: bool>(x: impl Fn(usize) -> u32, y: impl Fn(usize) -> u32) -> [u32; N] {
    let host = |l: usize| {
        let (p, q) = (f32::from_bits(x(l)), f32::from_bits(y(l)));
        if ADD { p + q } else { p * q }.to_bits()
    };
    let mut r = [0u32; N];
    let mut nan = 0u32;
    for (l, v) in r.iter_mut().enumerate() {
        *v = host(l);
        nan |= is_nan32(*v) as u32;
    }
    if nan != 0 {
        for (l, v) in r.iter_mut().enumerate() {
            if is_nan32(*v) {
                *v = if ADD { fadd(x(l), y(l), Rnd::Rn) } else { fmul(x(l), y(l), Rnd::Rn) };
            }
        }
    }
    r
}

/// FFMA rounded to nearest-even on one lane, computed in binary64 (which
/// vectorises; `f32::mul_add` is a library call per lane): the result, and
/// whether it must be redone by [`ffma`] instead.
///
/// The product of two binary32 values is exact in binary64, so the binary64
/// sum `s` is the exact `x·y + z` rounded once. Every rounding boundary of
/// binary32 in the normal range (a midpoint between two binary32 values, or
/// the overflow threshold) is a binary64 number, so the exact sum and `s`
/// lie on the same side of each, and rounding `s` to binary32 gives FFMA's
/// single rounding — unless `s` is such a boundary itself (its 29 low
/// mantissa bits are 1 followed by zeros: the exact sum may lie just off
/// it), or `s` is non-zero and below 2^-125 (binary32's subnormal range,
/// whose boundaries lie elsewhere), or the result is a NaN (NaN operands
/// and invalid operations, decided by the full rule). Those lanes are
/// redone; zero sums are exact, with the sign IEEE gives both formats.
#[inline(always)]
fn ffma_rn_lane(x: u32, y: u32, z: u32) -> (u32, bool) {
    let wide = |v: u32| f32::from_bits(v) as f64;
    let s = wide(x) * wide(y) + wide(z);
    let v = (s as f32).to_bits();
    let boundary = s.to_bits() as u32 & 0x1FFF_FFFF == 0x1000_0000;
    let tiny = (s.abs() < f64::from_bits((1023 - 125) << 52)) & (s != 0.0);
    (v, boundary | tiny | is_nan32(v))
}

/// FFMA rounded to nearest-even over `N` lanes of modified operands:
/// [`ffma_rn_lane`] on every lane in one vectorised pass, then, if any lane
/// needs it, [`ffma`] (NaN rules, `f32::mul_add`) on those lanes.
#[inline(always)]
pub(crate) fn ffma_rn<const N: usize>(x: impl Fn(usize) -> u32, y: impl Fn(usize) -> u32, z: impl Fn(usize) -> u32) -> [u32; N] {
    let mut r = [0u32; N];
    let mut hard = 0u32;
    for (l, v) in r.iter_mut().enumerate() {
        let (w, h) = ffma_rn_lane(x(l), y(l), z(l));
        *v = w;
        hard |= h as u32;
    }
    if hard != 0 {
        for (l, v) in r.iter_mut().enumerate() {
            if ffma_rn_lane(x(l), y(l), z(l)).1 {
                *v = ffma(x(l), y(l), z(l), Rnd::Rn);
            }
        }
    }
    r
}

/// The value order of a non-NaN binary32 pattern as a signed integer, with
/// -0 below +0: positive patterns keep their bits, negative ones have their
/// magnitude bits inverted.
#[inline(always)]
fn order_key(v: u32) -> i32 {
    (v ^ ((v as i32 >> 31) as u32 >> 1)) as i32
}

/// FMNMX over `N` lanes (lane `l` takes the minimum where bit `l` of `min`
/// is set): in one vectorised pass, the selection by [`order_key`] (what
/// [`fmnmx`] decides for non-NaN operands) and whether any operand is a
/// NaN; lanes with a NaN operand are redone by [`fmnmx`].
#[inline(always)]
pub(crate) fn fmnmx_rows<const N: usize>(x: impl Fn(usize) -> u32, y: impl Fn(usize) -> u32, min: u32, nan_mode: bool) -> [u32; N] {
    let mut r = [0u32; N];
    let mut nan = 0u32;
    for (l, v) in r.iter_mut().enumerate() {
        let (a, b) = (x(l), y(l));
        let a_less = order_key(a) < order_key(b);
        *v = if a_less == bit_of(min, l) { a } else { b };
        nan |= (is_nan32(a) | is_nan32(b)) as u32;
    }
    if nan != 0 {
        for (l, v) in r.iter_mut().enumerate() {
            let (a, b) = (x(l), y(l));
            if is_nan32(a) | is_nan32(b) {
                *v = fmnmx(a, b, bit_of(min, l), nan_mode);
            }
        }
    }
    r
}

macro_rules! lanes {
    ($n:expr, $mask:expr, |$l:ident| $body:expr) => {{
        let mut o = [0u32; $n];
        for $l in 0..$n {
            if $mask >> $l & 1 != 0 {
                o[$l] = $body;
            }
        }
        o
    }};
}

pub(crate) fn exec<const N: usize>(op: &Op, rf: &mut Regs, cb: &ConstBanks, mask: u32) -> Result<(), TrapKind> {
    match *op {
        Op::Fadd { d, a, b, ma, mb, rnd } | Op::Fmul { d, a, b, ma, mb, rnd } => {
            let (va, vb) = (rf.get::<N>(a, cb)?, rf.get::<N>(b, cb)?);
            let add = matches!(op, Op::Fadd { .. });
            let x: [u32; N] = rows(|l| fmod32(va[l], ma));
            let y: [u32; N] = rows(|l| fmod32(vb[l], mb));
            let r = if rnd == Rnd::Rn {
                if add {
                    add_mul_rn::<N, true>(|l| x[l], |l| y[l])
                } else {
                    add_mul_rn::<N, false>(|l| x[l], |l| y[l])
                }
            } else {
                lanes!(N, mask, |l| if add { fadd(x[l], y[l], rnd) } else { fmul(x[l], y[l], rnd) })
            };
            rf.put::<N>(d, &r, mask);
        }
        Op::Ffma { d, a, b, c, ma, mb, mc, rnd } => {
            let (va, vb, vc) = (rf.get::<N>(a, cb)?, rf.get::<N>(b, cb)?, rf.get::<N>(c, cb)?);
            let x: [u32; N] = rows(|l| fmod32(va[l], ma));
            let y: [u32; N] = rows(|l| fmod32(vb[l], mb));
            let z: [u32; N] = rows(|l| fmod32(vc[l], mc));
            let r = if rnd == Rnd::Rn { ffma_rn(|l| x[l], |l| y[l], |l| z[l]) } else { lanes!(N, mask, |l| ffma(x[l], y[l], z[l], rnd)) };
            rf.put::<N>(d, &r, mask);
        }
        Op::Fmnmx { d, a, b, ma, mb, nan, pp } => {
            let (va, vb) = (rf.get::<N>(a, cb)?, rf.get::<N>(b, cb)?);
            let p = rf.pin::<N>(pp);
            let r = fmnmx_rows::<N>(|l| fmod32(va[l], ma), |l| fmod32(vb[l], mb), p, nan);
            rf.put::<N>(d, &r, mask);
        }
        Op::Fsetp { a, b, ma, mb, cmp, bop, pp, pu, pv } => {
            let (va, vb) = (rf.get::<N>(a, cb)?, rf.get::<N>(b, cb)?);
            let p = rf.pin::<N>(pp);
            let mut t = 0u32;
            for l in 0..N {
                let (x, y) = (f32::from_bits(fmod32(va[l], ma)), f32::from_bits(fmod32(vb[l], mb)));
                t |= (fcmp(cmp, x as f64, y as f64) as u32) << l;
            }
            rf.pout::<N>(pu, bool_op(bop, t, p), mask);
            rf.pout::<N>(pv, bool_op(bop, !t & all::<N>(), p), mask);
        }
        Op::Frnd { d, b, m, rnd, f64 } => {
            let vb = rf.get64::<N>(b, cb)?;
            let mut r = [0u64; N];
            for l in 0..N {
                if mask >> l & 1 != 0 {
                    r[l] = if f64 { frnd64(fmod64(vb[l], m), rnd) } else { frnd32(fmod32(vb[l] as u32, m), rnd) as u64 };
                }
            }
            rf.put64::<N>(d, &r, mask);
        }
        Op::I2f { d, b, rnd, to_f64, from } => {
            let vb = rf.get64::<N>(b, cb)?;
            let mut r = [0u64; N];
            for l in 0..N {
                if mask >> l & 1 != 0 {
                    r[l] = i2f(vb[l], from, to_f64, rnd);
                }
            }
            rf.put64::<N>(d, &r, mask);
        }
        Op::F2i { d, b, rnd, from_f64, to } => {
            let vb = rf.get64::<N>(b, cb)?;
            let mut r = [0u64; N];
            for l in 0..N {
                if mask >> l & 1 != 0 {
                    r[l] = f2i(vb[l], from_f64, to, rnd);
                }
            }
            rf.put64::<N>(d, &r, mask);
        }
        Op::F2f { d, b, rnd, to_f64 } => {
            let vb = rf.get64::<N>(b, cb)?;
            let mut r = [0u64; N];
            for l in 0..N {
                if mask >> l & 1 != 0 {
                    r[l] = f2f(vb[l], to_f64, rnd);
                }
            }
            rf.put64::<N>(d, &r, mask);
        }
        _ => unreachable!("not an F32/conversion op: {:?}", op),
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::{fadd, ffma, fmnmx, Rnd};

    /// Binary32 patterns where the fused forms could part from the scalar
    /// rules: NaNs (quiet and signalling, payloads, both signs), ±0,
    /// subnormals, the normal/subnormal edge, ±∞, the largest finite
    /// values, and ordinary numbers.
    #[rustfmt::skip]
    const EDGE: [u32; 30] = [
        0x0000_0000, 0x8000_0000, 0x0000_0001, 0x8000_0001, 0x007F_FFFF, 0x807F_FFFF, 0x0080_0000, 0x8080_0000,
        0x0040_0000, 0x3F80_0000, 0xBF80_0000, 0x3F80_0001, 0x3FC0_0000, 0x4B80_0001, 0x3380_0000, 0x7F7F_FFFF,
        0xFF7F_FFFF, 0x7F00_0000, 0x7F80_0000, 0xFF80_0000, 0x7FC0_0000, 0xFFC0_0000, 0x7F80_0001, 0xFF80_0001,
        0x7FA0_1234, 0x7FFF_FFFF, 0xFFC0_4321, 0x1F80_0000, 0x2000_0001, 0xC2C8_0000,
    ];

    /// Double rounding in the subnormal range (what the boundary check of
    /// the normal range does not see): `x·y` = 2^-150·(1 − 2^-40) and `z` a
    /// subnormal with an odd last bit, at least 2^-137; the exact sum lies
    /// just below the midpoint z + 2^-150 and rounds down to `z`, while its
    /// binary64 sum is that midpoint, which ties to even, upwards.
    #[test]
    fn ffma_rn_subnormal_midpoints() {
        let (x, y) = (0x1A00_0008u32, 0x19FF_FFF0u32);
        for m in [0x8_0001u32, 0x1001, 0x40_0001, 0x7F_FFFF, 0x2A_AAAB, 0x55_5555] {
            for sign in [0, 1u32 << 31] {
                let (x, z) = (x ^ sign, m ^ sign);
                let s = f32::from_bits(x) as f64 * f32::from_bits(y) as f64 + f32::from_bits(z) as f64;
                assert_ne!((s as f32).to_bits(), z, "the binary64 sum of ({:#x}, {:#x}, {:#x}) must round away from z", x, y, z);
                assert_eq!(ffma(x, y, z, Rnd::Rn), z);
                assert_eq!(super::ffma_rn::<1>(|_| x, |_| y, |_| z)[0], z, "ffma({:#x}, {:#x}, {:#x})", x, y, z);
                let row = super::ffma_rn::<32>(|l| if l % 2 == 0 { x } else { 0x3F80_0000 }, |_| y, |_| z);
                assert_eq!(row[0], z);
            }
        }
    }

    /// Runs the fused form over the cases 32 lanes at a time (so NaN and
    /// ordinary lanes share a pass) and one lane at a time, comparing every
    /// lane with `scalar` (given the case and its lane). Returns the number
    /// of cases.
    fn check<const K: usize>(
        cases: &[[u32; K]],
        fused32: impl Fn(&[[u32; K]; 32]) -> [u32; 32],
        fused1: impl Fn(&[u32; K]) -> u32,
        scalar: impl Fn(&[u32; K], usize) -> u32,
        what: &str,
    ) -> usize {
        for chunk in cases.chunks(32) {
            let mut lanes = [[0u32; K]; 32];
            for (l, v) in lanes.iter_mut().enumerate() {
                *v = chunk[l % chunk.len()];
            }
            let got = fused32(&lanes);
            for l in 0..32 {
                assert_eq!(got[l], scalar(&lanes[l], l), "{} {:x?} (32 lanes, lane {})", what, lanes[l], l);
            }
        }
        for c in cases {
            assert_eq!(fused1(c), scalar(c, 0), "{} {:x?} (one lane)", what, c);
        }
        cases.len()
    }

    /// FADD, FMUL, FFMA and FMNMX fused over lanes agree bit for bit with
    /// the scalar rules on every pair (triple) of edge values, at the
    /// positions of 32 lanes and alone; FMNMX with mixed min/max lanes and
    /// both NaN modes.
    #[test]
    fn fused_forms_match_the_scalar_rules_on_edge_values() {
        let pairs: Vec<[u32; 2]> = EDGE.iter().flat_map(|&a| EDGE.iter().map(move |&b| [a, b])).collect();
        let triples: Vec<[u32; 3]> = pairs.iter().flat_map(|&[a, b]| EDGE.iter().map(move |&c| [a, b, c])).collect();
        let mut n = 0;
        n += check(
            &pairs,
            |v| super::add_mul_rn::<32, true>(|l| v[l][0], |l| v[l][1]),
            |c| super::add_mul_rn::<1, true>(|_| c[0], |_| c[1])[0],
            |c, _| fadd(c[0], c[1], Rnd::Rn),
            "fadd",
        );
        n += check(
            &pairs,
            |v| super::add_mul_rn::<32, false>(|l| v[l][0], |l| v[l][1]),
            |c| super::add_mul_rn::<1, false>(|_| c[0], |_| c[1])[0],
            |c, _| super::fmul(c[0], c[1], Rnd::Rn),
            "fmul",
        );
        n += check(
            &triples,
            |v| super::ffma_rn::<32>(|l| v[l][0], |l| v[l][1], |l| v[l][2]),
            |c| super::ffma_rn::<1>(|_| c[0], |_| c[1], |_| c[2])[0],
            |c, _| ffma(c[0], c[1], c[2], Rnd::Rn),
            "ffma",
        );
        for nan_mode in [false, true] {
            for min in [0u32, u32::MAX, 0x5555_5555, 0x0F0F_3C3C] {
                n += check(
                    &pairs,
                    |v| super::fmnmx_rows::<32>(|l| v[l][0], |l| v[l][1], min, nan_mode),
                    |c| super::fmnmx_rows::<1>(|_| c[0], |_| c[1], min & 1, nan_mode)[0],
                    |c, l| fmnmx(c[0], c[1], min >> l & 1 != 0, nan_mode),
                    "fmnmx",
                );
            }
        }
        assert_eq!(n, 900 * 2 + 27_000 + 900 * 8);
    }

    /// `ffma_rn` (binary64 with a fallback) against `f32::mul_add` on
    /// operands whose exponents are close (so the sums cancel and land on
    /// rounding boundaries), on any bits, and near the subnormal and overflow
    /// ranges.
    #[test]
    fn ffma_rn_rounds_once() {
        let mut next = crate::test_rng::xorshift64(0x9E37_79B9_7F4A_7C15);
        let (mut checked, mut boundary) = (0u64, 0u64);
        for round in 0..200_000 {
            let mut x = [0u32; 32];
            let mut y = [0u32; 32];
            let mut z = [0u32; 32];
            for l in 0..32 {
                let r = next();
                let exp = match round % 4 {
                    0 => 120 + (r >> 40) as u32 % 16,
                    1 => (r >> 40) as u32 % 256,
                    2 => (r >> 40) as u32 % 40,
                    _ => 200 + (r >> 40) as u32 % 56,
                };
                let m = |k: u32| (r >> k) as u32 & 0x7F_FFFF;
                // Short mantissas make exact midpoints likely.
                let short = |v: u32| if round % 3 == 0 { v & 0x7F_F000 } else { v };
                x[l] = (r as u32 & 1) << 31 | exp << 23 | short(m(1));
                y[l] = (r >> 2) as u32 & 1 << 31 | (254 - exp.min(250) / 2 + (r >> 50) as u32 % 8).min(254) << 23 | short(m(9));
                let p = f32::from_bits(x[l]) * f32::from_bits(y[l]);
                let pe = (p.to_bits() >> 23) & 0xFF;
                z[l] = (r >> 3) as u32 & 1 << 31 | (pe + (r >> 56) as u32 % 5).saturating_sub(2).min(254) << 23 | short(m(20));
            }
            let got = super::ffma_rn::<32>(|l| x[l], |l| y[l], |l| z[l]);
            for l in 0..32 {
                let want = f32::from_bits(x[l]).mul_add(f32::from_bits(y[l]), f32::from_bits(z[l]));
                if want.is_nan() {
                    continue;
                }
                assert_eq!(got[l], want.to_bits(), "ffma({:#x}, {:#x}, {:#x})", x[l], y[l], z[l]);
                let s = f32::from_bits(x[l]) as f64 * f32::from_bits(y[l]) as f64 + f32::from_bits(z[l]) as f64;
                boundary += (s.to_bits() & 0x1FFF_FFFF == 0x1000_0000) as u64;
                checked += 1;
            }
        }
        // The boundary case must have been met (else the test proves little).
        assert!(checked > 5_000_000 && boundary > 100, "{} checked, {} on a boundary", checked, boundary);
    }

    /// Sums that round in binary64 onto a binary32 midpoint: `x·y` is
    /// 2^-24·(1 − 2^-30) and `z` = 1 + 2^-23, so the exact sum lies a quarter
    /// binary64 ulp below the midpoint 1 + 3·2^-24 and rounds down to `z`,
    /// while rounding its binary64 value again would tie to even, upwards.
    /// Scaled by powers of two down into the subnormal range, with signs.
    #[test]
    fn ffma_rn_never_rounds_twice() {
        let (x0, y0, z0) = (103u32 << 23 | 0x100, 126u32 << 23 | 0x7F_FE00, 0x3F80_0001u32);
        let mut cases = 0;
        for k in 0..140u32 {
            for sign in [0, 1u32 << 31] {
                let x = [(x0 - (k << 23).min(102 << 23)) ^ sign; 1];
                let z = if k <= 126 { [(z0 - (k << 23)) ^ sign; 1] } else { [((0x80_0001u32 >> (k - 126)) | 1) ^ sign; 1] };
                let y = [y0 - if k > 102 { (k - 102) << 23 } else { 0 }; 1];
                let want = f32::from_bits(x[0]).mul_add(f32::from_bits(y[0]), f32::from_bits(z[0]));
                assert_eq!(
                    super::ffma_rn::<1>(|_| x[0], |_| y[0], |_| z[0])[0],
                    want.to_bits(),
                    "ffma({:#x}, {:#x}, {:#x})",
                    x[0],
                    y[0],
                    z[0]
                );
                cases += 1;
            }
        }
        assert_eq!(super::ffma_rn::<1>(|_| x0, |_| y0, |_| z0)[0], z0, "the unscaled case rounds down to z");
        assert_eq!(cases, 280);
    }
}
