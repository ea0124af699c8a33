//! Integer ALU semantics (IALU and the uniform datapath's twins).
//!
//! Each instruction's meaning is a plain scalar function written after the
//! document's `__Semantics` block and the errata decisions (docs/spec-errata.md,
//! cited as E-numbers). [`exec`] runs them over `N` lanes: 32 for a warp
//! instruction, 1 for a uniform one.

use crate::memory::ConstBanks;
use crate::ops::*;
use crate::regs::{all, pack_lanes, rows, Regs, P_DUMP};
use crate::trap::TrapKind;

const TWO32: u64 = 1 << 32;

/// What a 32-bit operand contributes to a wide (carry-producing) sum (E21):
/// `x`, `-x` as `2^32 - x` (so -0 contributes 2^32), or `~x` in `.X` mode.
#[inline(always)]
pub fn addend(x: u32, neg: bool, x_mode: bool) -> u64 {
    match (neg, x_mode) {
        (false, _) => x as u64,
        (true, false) => TWO32 - x as u64,
        (true, true) => !x as u64,
    }
}

/// The 64-bit twin of [`addend`].
#[inline(always)]
pub fn addend64(x: u64, neg: bool, x_mode: bool) -> u128 {
    match (neg, x_mode) {
        (false, _) => x as u128,
        (true, false) => (1u128 << 64) - x as u128,
        (true, true) => !x as u128,
    }
}

/// A wide sum reduced to (result, carry-out); carry = sum >= 2^32 (E18).
#[inline(always)]
pub fn split(t: u64) -> (u32, bool) {
    (t as u32, t >= TWO32)
}

/// IADD / UIADD: `Rd = Ra + SrcB (+ pp with .X)`, carry-out per E18/E21/E22.
#[inline(always)]
pub fn iadd(a: u32, b: u32, neg_a: bool, neg_b: bool, x: bool, cin: bool) -> (u32, bool) {
    split(addend(a, neg_a, x) + addend(b, neg_b, x) + (x && cin) as u64)
}

/// The 64-bit product of two 32-bit integers, as its two's-complement pattern.
#[inline(always)]
pub fn mul_wide(a: u32, b: u32, signed: bool) -> u64 {
    if signed {
        (a as i32 as i64).wrapping_mul(b as i32 as i64) as u64
    } else {
        a as u64 * b as u64
    }
}

/// IMAD.LO / IMAD.HI.X (E23): the low (or high) word of `Ra*SrcB` plus SrcC
/// (plus pp in .X mode).
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub fn imad(a: u32, b: u32, c: u32, neg_c: bool, hi: bool, x: bool, signed: bool, cin: bool) -> (u32, bool) {
    let p = mul_wide(a, b, signed);
    let t = if hi { p >> 32 } else { p & 0xffff_ffff };
    split(t + addend(c, neg_c, x) + (x && cin) as u64)
}

/// IMAD.WIDE(.X): 64-bit `P + SrcC (+ pp)`, carry = sum >= 2^64 (E24).
#[inline(always)]
pub fn imad_wide(a: u32, b: u32, c: u64, neg_c: bool, x: bool, signed: bool, cin: bool) -> (u64, bool) {
    let t = mul_wide(a, b, signed) as u128 + addend64(c, neg_c, x) + (x && cin) as u128;
    (t as u64, t >> 64 != 0)
}

/// IDP.2A / IDP.4A: dot product of packed elements plus SrcC and pp; SrcC
/// is unsigned, carry = d >= 2^32 (E19).
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub fn idp(a: u32, b: u32, c: u32, four: bool, a_signed: bool, b_signed: bool, hi: bool, cin: bool) -> (u32, bool) {
    let elem = |v: u32, i: u32, bits: u32, signed: bool| -> i64 {
        let raw = (v >> (i * bits)) & ((1u32 << bits) - 1);
        if signed {
            ((raw << (32 - bits)) as i32 >> (32 - bits)) as i64
        } else {
            raw as i64
        }
    };
    let mut d = c as i64 + cin as i64;
    if four {
        for i in 0..4 {
            d += elem(a, i, 8, a_signed) * elem(b, i, 8, b_signed);
        }
    } else {
        let sel = if hi { 2 } else { 0 };
        for i in 0..2 {
            d += elem(a, i, 16, a_signed) * elem(b, sel + i, 8, b_signed);
        }
    }
    (d as u32, d >= TWO32 as i64)
}

/// IMUL: the low or high word of the product; `-SrcB` negates first.
#[inline(always)]
pub fn imul(a: u32, b: u32, neg_b: bool, hi: bool, signed: bool) -> u32 {
    let b = if neg_b { b.wrapping_neg() } else { b };
    let p = mul_wide(a, b, signed);
    if hi {
        (p >> 32) as u32
    } else {
        p as u32
    }
}

/// LEA in its three modes (E32, E35).
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub fn lea(a: u32, b: u32, c: u32, neg_a: bool, neg_b: bool, mode: LeaMode, s: u8, cin: bool) -> (u32, bool) {
    let s = s as u32 & 31;
    match mode {
        LeaMode::Lo => {
            let a = if neg_a { a.wrapping_neg() } else { a };
            split((a << s) as u64 + addend(b, neg_b, false))
        }
        LeaMode::HiX | LeaMode::HiXSx32 => {
            let mut v = if mode == LeaMode::HiX { (c as u64) << 32 | a as u64 } else { a as i32 as i64 as u64 };
            if neg_a {
                v = if mode == LeaMode::HiX { !v } else { !a as i32 as i64 as u64 };
            }
            let hi = (v << s) >> 32;
            split(hi + addend(b, neg_b, true) + cin as u64)
        }
    }
}

/// IABS: `|SrcB|`, wrapping at INT_MIN (E36).
#[inline(always)]
pub fn iabs(b: u32, neg_b: bool) -> u32 {
    let b = if neg_b { b.wrapping_neg() } else { b };
    (b as i32).wrapping_abs() as u32
}

/// IMNMX: `pp ? min : max`, compared as S32 or U32 (E37).
#[inline(always)]
pub fn imnmx(a: u32, b: u32, signed: bool, min: bool) -> u32 {
    let a_less = if signed { (a as i32) < (b as i32) } else { a < b };
    if a_less == min {
        a
    } else {
        b
    }
}

/// Integer comparison as S32 or U32.
#[inline(always)]
pub fn icmp(a: u32, b: u32, signed: bool, cmp: Cmp) -> bool {
    let (a, b) = if signed { (a as i32 as i64, b as i32 as i64) } else { (a as i64, b as i64) };
    match cmp {
        Cmp::Eq => a == b,
        Cmp::Ne => a != b,
        Cmp::Lt => a < b,
        Cmp::Le => a <= b,
        Cmp::Gt => a > b,
        Cmp::Ge => a >= b,
    }
}

/// Combines lane masks with a boolean operation.
#[inline(always)]
pub fn bool_op(op: BoolOp, a: u32, b: u32) -> u32 {
    match op {
        BoolOp::And => a & b,
        BoolOp::Or => a | b,
        BoolOp::Xor => a ^ b,
    }
}

/// LOP3's truth table applied bitwise: `d[i] = lut[a[i]<<2 | b[i]<<1 | c[i]]`.
/// Branch-free (a multiplexer tree over the table's bits), so a warp's 32
/// lanes vectorize.
#[inline(always)]
pub fn lop3(a: u32, b: u32, c: u32, lut: u8) -> u32 {
    let bit = |i: u32| 0u32.wrapping_sub((lut as u32 >> i) & 1);
    // sel(x, p, q): p where x is 1, q where it is 0.
    let sel = |x: u32, p: u32, q: u32| q ^ (x & (p ^ q));
    let (t00, t01) = (sel(c, bit(1), bit(0)), sel(c, bit(3), bit(2)));
    let (t10, t11) = (sel(c, bit(5), bit(4)), sel(c, bit(7), bit(6)));
    sel(a, sel(b, t11, t10), sel(b, t01, t00))
}

/// The lanes (bit l) where `f(a[l], b[l])` holds; one loop per comparison
/// so that each is a plain vectorizable loop.
#[inline(always)]
pub(crate) fn cmp_mask<const N: usize>(va: &[u32; N], vb: &[u32; N], signed: bool, cmp: Cmp) -> u32 {
    #[inline(always)]
    fn each<const N: usize>(va: &[u32; N], vb: &[u32; N], f: impl Fn(u32, u32) -> bool) -> u32 {
        pack_lanes(rows::<u32, N>(|l| 0u32.wrapping_sub(f(va[l], vb[l]) as u32)))
    }
    match (cmp, signed) {
        (Cmp::Eq, _) => each(va, vb, |a, b| a == b),
        (Cmp::Ne, _) => each(va, vb, |a, b| a != b),
        (Cmp::Lt, false) => each(va, vb, |a, b| a < b),
        (Cmp::Le, false) => each(va, vb, |a, b| a <= b),
        (Cmp::Gt, false) => each(va, vb, |a, b| a > b),
        (Cmp::Ge, false) => each(va, vb, |a, b| a >= b),
        (Cmp::Lt, true) => each(va, vb, |a, b| (a as i32) < (b as i32)),
        (Cmp::Le, true) => each(va, vb, |a, b| (a as i32) <= (b as i32)),
        (Cmp::Gt, true) => each(va, vb, |a, b| (a as i32) > (b as i32)),
        (Cmp::Ge, true) => each(va, vb, |a, b| (a as i32) >= (b as i32)),
    }
}

/// SHF: funnel shift of `{SrcC, Ra}` (E53, E54).
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub fn shf(a: u32, b: u32, c: u32, right: bool, hi: bool, wrap: bool, signed: bool, wide: bool) -> u32 {
    shf_by(a, c, shf_amount(b, wrap, wide), right, hi, signed)
}

/// SHF's shift amount: SrcB wrapped or clamped to the operand width.
#[inline(always)]
pub fn shf_amount(b: u32, wrap: bool, wide: bool) -> u32 {
    let ub = if wide { 64 } else { 32 };
    if wrap {
        b % ub
    } else {
        b.min(ub)
    }
}

/// SHF by an amount from [`shf_amount`].
#[inline(always)]
pub fn shf_by(a: u32, c: u32, n: u32, right: bool, hi: bool, signed: bool) -> u32 {
    let t = (c as u64) << 32 | a as u64;
    let r = if !right {
        if n >= 64 {
            0
        } else {
            t << n
        }
    } else if signed {
        ((t as i64) >> n.min(63)) as u64
    } else if n >= 64 {
        0
    } else {
        t >> n
    };
    if hi {
        (r >> 32) as u32
    } else {
        r as u32
    }
}

/// PRMT: bytes of `{SrcB, Ra}` selected by SrcC (E62, E63).
#[inline(always)]
pub fn prmt(a: u32, b: u32, c: u32, mode: PrmtMode) -> u32 {
    let t = (b as u64) << 32 | a as u64;
    let byte = |k: u32| (t >> (8 * (k & 7))) as u8 as u32;
    let s = c & 3;
    let mut r = 0u32;
    for i in 0..4u32 {
        let v = match mode {
            PrmtMode::Idx => {
                let nib = c >> (4 * i) & 0xf;
                let v = byte(nib & 7);
                if nib & 8 != 0 {
                    if v & 0x80 != 0 {
                        0xff
                    } else {
                        0
                    }
                } else {
                    v
                }
            }
            PrmtMode::F4e => byte(i + s),
            PrmtMode::B4e => byte((s + 8 - i) % 8),
            PrmtMode::Rc8 => byte(s),
            PrmtMode::Ecl => byte(i.max(s)),
            PrmtMode::Ecr => byte(i.min(s)),
            PrmtMode::Rc16 => byte(2 * (s & 1) + (i & 1)),
        };
        r |= v << (8 * i);
    }
    r
}

/// The range of a `bits`-wide integer.
#[inline(always)]
fn range(bits: u8, signed: bool) -> (i64, i64) {
    if signed {
        (-(1i64 << (bits - 1)), (1i64 << (bits - 1)) - 1)
    } else {
        (0, (1i64 << bits) - 1)
    }
}

/// I2I: saturate a signed 32-bit SrcB, then sign-/zero-extend (E64).
#[inline(always)]
pub fn i2i(b: u32, bits: u8, signed: bool) -> u32 {
    let (lo, hi) = range(bits, signed);
    (b as i32 as i64).clamp(lo, hi) as i32 as u32
}

/// I2IP: saturate and pack two values, fill with Rc (E66).
#[inline(always)]
pub fn i2ip(a: u32, b: u32, c: u32, bits: u8, signed: bool, relu: bool) -> u32 {
    let (lo, hi) = range(bits, signed);
    let sat = |v: u32| {
        let t = (v as i32 as i64).clamp(lo, hi);
        if relu {
            t.max(0)
        } else {
            t
        }
    };
    let size = bits as u32;
    let msk = ((1u64 << size) - 1) as u32;
    let mut r = ((sat(a) as u32 & msk) << size) | (sat(b) as u32 & msk);
    if size < 16 {
        let rest = 32 - 2 * size;
        r |= (c & ((1u32 << rest) - 1)) << (2 * size);
    }
    r
}

/// FLO (E60).
#[inline(always)]
pub fn flo(b: u32, not: bool, signed: bool, sh: bool) -> u32 {
    let mut x = if not { !b } else { b };
    if signed && (x as i32) < 0 {
        x = !x;
    }
    if x == 0 {
        return u32::MAX;
    }
    let p = 31 - x.leading_zeros();
    if sh {
        31 - p
    } else {
        p
    }
}

/// BMSK, literally after the semantics block (E56).
#[inline(always)]
pub fn bmsk(a: u32, b: u32, wrap: bool) -> u32 {
    let a1 = a & 0x1f;
    let mut mask0 = u32::MAX << a1;
    let b1 = b & 0x1f;
    let sum = a1 + b1;
    let mut mask1 = if sum >= 32 { 0 } else { u32::MAX << sum };
    let sum_overflow = sum >= 32;
    let mut pos_overflow = false;
    let mut width_overflow = false;
    if !wrap {
        if a >= 32 {
            pos_overflow = true;
            mask0 = 0;
        }
        if b >= 32 {
            width_overflow = true;
        }
    }
    if sum_overflow || pos_overflow || width_overflow {
        mask1 = 0;
    } else if b1 == 0 {
        mask1 = u32::MAX;
    }
    mask0 & !mask1
}

/// SGXT: sign- or zero-extend the low SrcB bits of Ra (E55).
#[inline(always)]
pub fn sgxt(a: u32, b: u32, wrap: bool, signed: bool) -> u32 {
    let w = if wrap { b % 32 } else { b.min(32) };
    if w == 0 {
        0
    } else if w == 32 {
        a
    } else if signed {
        ((a << (32 - w)) as i32 >> (32 - w)) as u32
    } else {
        a & ((1u32 << w) - 1)
    }
}

macro_rules! lanes {
    ($n:expr, |$l:ident| $body:expr) => {{
        let mut o = [0u32; $n];
        for $l in 0..$n {
            o[$l] = $body;
        }
        o
    }};
}

/// Runs an integer op over `N` lanes (`mask` = lanes that execute).
#[inline(always)]
pub(crate) fn exec<const N: usize>(op: &Op, rf: &mut Regs, cb: &ConstBanks, mask: u32) -> Result<(), TrapKind> {
    match *op {
        Op::Iadd { d, a, b, neg_a, neg_b, x: false, pu: PDst { idx: P_DUMP, .. }, .. } => {
            // No carry wanted: a plain (vectorizable) wrapping add.
            let (va, vb) = (rf.get::<N>(a, cb)?, rf.get::<N>(b, cb)?);
            let r = lanes!(N, |l| {
                let x = if neg_a { va[l].wrapping_neg() } else { va[l] };
                let y = if neg_b { vb[l].wrapping_neg() } else { vb[l] };
                x.wrapping_add(y)
            });
            rf.put::<N>(d, &r, mask);
        }
        Op::Iadd { d, a, b, neg_a, neg_b, x, pp, pu } => {
            let (va, vb) = (rf.get::<N>(a, cb)?, rf.get::<N>(b, cb)?);
            let cin = rf.pin::<N>(pp);
            let mut carry = 0u32;
            let r = lanes!(N, |l| {
                let (v, c) = iadd(va[l], vb[l], neg_a, neg_b, x, cin >> l & 1 != 0);
                carry |= (c as u32) << l;
                v
            });
            rf.put::<N>(d, &r, mask);
            rf.pout::<N>(pu, carry, mask);
        }
        Op::Imad { d, a, b, c, neg_c, hi: false, x: false, pu: PDst { idx: P_DUMP, .. }, .. } => {
            // The low word without a carry-out does not depend on signedness.
            let (va, vb, vc) = (rf.get::<N>(a, cb)?, rf.get::<N>(b, cb)?, rf.get::<N>(c, cb)?);
            let r = lanes!(N, |l| {
                let z = if neg_c { vc[l].wrapping_neg() } else { vc[l] };
                va[l].wrapping_mul(vb[l]).wrapping_add(z)
            });
            rf.put::<N>(d, &r, mask);
        }
        Op::Imad { d, a, b, c, neg_c, hi, x, signed, pp, pu } => {
            let (va, vb, vc) = (rf.get::<N>(a, cb)?, rf.get::<N>(b, cb)?, rf.get::<N>(c, cb)?);
            let cin = rf.pin::<N>(pp);
            let mut carry = 0u32;
            let r = lanes!(N, |l| {
                let (v, cy) = imad(va[l], vb[l], vc[l], neg_c, hi, x, signed, cin >> l & 1 != 0);
                carry |= (cy as u32) << l;
                v
            });
            rf.put::<N>(d, &r, mask);
            rf.pout::<N>(pu, carry, mask);
        }
        Op::ImadWide { d, a, b, c, neg_c, x, signed, pp, pu } => {
            let (va, vb, vc) = (rf.get::<N>(a, cb)?, rf.get::<N>(b, cb)?, rf.get64::<N>(c, cb)?);
            let cin = rf.pin::<N>(pp);
            let mut carry = 0u32;
            let mut r = [0u64; N];
            for l in 0..N {
                let (v, cy) = imad_wide(va[l], vb[l], vc[l], neg_c, x, signed, cin >> l & 1 != 0);
                carry |= (cy as u32) << l;
                r[l] = v;
            }
            rf.put64::<N>(d, &r, mask);
            rf.pout::<N>(pu, carry, mask);
        }
        Op::Idp { d, a, b, c, four, a_signed, b_signed, hi, pp, pu } => {
            let (va, vb, vc) = (rf.get::<N>(a, cb)?, rf.get::<N>(b, cb)?, rf.get::<N>(c, cb)?);
            let cin = rf.pin::<N>(pp);
            let mut carry = 0u32;
            let r = lanes!(N, |l| {
                let (v, cy) = idp(va[l], vb[l], vc[l], four, a_signed, b_signed, hi, cin >> l & 1 != 0);
                carry |= (cy as u32) << l;
                v
            });
            rf.put::<N>(d, &r, mask);
            rf.pout::<N>(pu, carry, mask);
        }
        Op::Imul { d, a, b, neg_b, hi, signed } => {
            let (va, vb) = (rf.get::<N>(a, cb)?, rf.get::<N>(b, cb)?);
            let r = lanes!(N, |l| imul(va[l], vb[l], neg_b, hi, signed));
            rf.put::<N>(d, &r, mask);
        }
        Op::Lea { d, a, b, c, neg_a, neg_b, mode, shift, pp, pu } => {
            let (va, vb, vc) = (rf.get::<N>(a, cb)?, rf.get::<N>(b, cb)?, rf.get::<N>(c, cb)?);
            let cin = rf.pin::<N>(pp);
            let mut carry = 0u32;
            let r = lanes!(N, |l| {
                let (v, cy) = lea(va[l], vb[l], vc[l], neg_a, neg_b, mode, shift, cin >> l & 1 != 0);
                carry |= (cy as u32) << l;
                v
            });
            rf.put::<N>(d, &r, mask);
            rf.pout::<N>(pu, carry, mask);
        }
        Op::Iabs { d, b, neg_b } => {
            let vb = rf.get::<N>(b, cb)?;
            let r = lanes!(N, |l| iabs(vb[l], neg_b));
            rf.put::<N>(d, &r, mask);
        }
        Op::Imnmx { d, a, b, neg_a, neg_b, signed, pp } => {
            let (va, vb) = (rf.get::<N>(a, cb)?, rf.get::<N>(b, cb)?);
            let min = rf.pin::<N>(pp);
            let r = lanes!(N, |l| {
                let x = if neg_a { va[l].wrapping_neg() } else { va[l] };
                let y = if neg_b { vb[l].wrapping_neg() } else { vb[l] };
                imnmx(x, y, signed, min >> l & 1 != 0)
            });
            rf.put::<N>(d, &r, mask);
        }
        Op::P2r { d, a, b, byte, uniform_preds } => {
            let (va, vb) = (rf.get::<N>(a, cb)?, rf.get::<N>(b, cb)?);
            let sh = 8 * byte as u32;
            let r = lanes!(N, |l| {
                let pr = rf.pack_preds(uniform_preds, l);
                let m = vb[l] & 0xff;
                let old = va[l] >> sh & 0xff;
                let nb = (m & pr) | (!m & old & 0xff);
                (va[l] & !(0xff << sh)) | (nb << sh)
            });
            rf.put::<N>(d, &r, mask);
        }
        Op::R2p { a, b, byte, uniform_preds } => {
            let (va, vb) = (rf.get::<N>(a, cb)?, rf.get::<N>(b, cb)?);
            let sh = 8 * byte as u32;
            for i in 0..7u32 {
                let mut set = 0u32;
                let mut val = 0u32;
                for l in 0..N {
                    if vb[l] >> i & 1 != 0 {
                        set |= 1 << l;
                        val |= (va[l] >> (sh + i) & 1) << l;
                    }
                }
                let p = PDst { uniform: uniform_preds, idx: i as u8 };
                rf.pout::<N>(p, val, mask & set);
            }
        }
        Op::Isetp { a, b, signed, x: false, cmp, bop, pp, pq: _, pu, pv } => {
            let (va, vb) = (rf.get::<N>(a, cb)?, rf.get::<N>(b, cb)?);
            let p = rf.pin::<N>(pp);
            let t = cmp_mask::<N>(&va, &vb, signed, cmp);
            rf.pout::<N>(pu, bool_op(bop, t, p), mask);
            rf.pout::<N>(pv, bool_op(bop, !t & all::<N>(), p), mask);
        }
        Op::Isetp { a, b, signed, x, cmp, bop, pp, pq, pu, pv } => {
            let (va, vb) = (rf.get::<N>(a, cb)?, rf.get::<N>(b, cb)?);
            let (p, q) = (rf.pin::<N>(pp), rf.pin::<N>(pq));
            let mut t = 0u32;
            for l in 0..N {
                let bit = if x && va[l] == vb[l] { q >> l & 1 != 0 } else { icmp(va[l], vb[l], signed, cmp) };
                t |= (bit as u32) << l;
            }
            rf.pout::<N>(pu, bool_op(bop, t, p), mask);
            rf.pout::<N>(pv, bool_op(bop, !t & all::<N>(), p), mask);
        }
        Op::Iset { d, a, b, signed, x, cmp, bop, float, pp, pq } => {
            let (va, vb) = (rf.get::<N>(a, cb)?, rf.get::<N>(b, cb)?);
            let (p, q) = (rf.pin::<N>(pp), rf.pin::<N>(pq));
            let one = if float { 0x3F80_0000 } else { u32::MAX };
            let r = lanes!(N, |l| {
                let t = if x && va[l] == vb[l] { q >> l & 1 != 0 } else { icmp(va[l], vb[l], signed, cmp) };
                if bool_op(bop, t as u32, p >> l & 1) & 1 != 0 {
                    one
                } else {
                    0
                }
            });
            rf.put::<N>(d, &r, mask);
        }
        Op::Sel { d, a, b, pp } => {
            let (va, vb) = (rf.get::<N>(a, cb)?, rf.get::<N>(b, cb)?);
            let p = rf.pin::<N>(pp);
            let r = lanes!(N, |l| if p >> l & 1 != 0 { va[l] } else { vb[l] });
            rf.put::<N>(d, &r, mask);
        }
        Op::Lop3 { d, a, b, c, lut, pu: PDst { idx: P_DUMP, .. }, .. } => {
            // No predicate output: no per-lane non-zero test.
            let (va, vb, vc) = (rf.get::<N>(a, cb)?, rf.get::<N>(b, cb)?, rf.get::<N>(c, cb)?);
            let r = lanes!(N, |l| lop3(va[l], vb[l], vc[l], lut));
            rf.put::<N>(d, &r, mask);
        }
        Op::Lop3 { d, a, b, c, lut, pand, pp, pu } => {
            let (va, vb, vc) = (rf.get::<N>(a, cb)?, rf.get::<N>(b, cb)?, rf.get::<N>(c, cb)?);
            let p = rf.pin::<N>(pp);
            let mut nz = 0u32;
            let r = lanes!(N, |l| {
                let v = lop3(va[l], vb[l], vc[l], lut);
                nz |= ((v != 0) as u32) << l;
                v
            });
            rf.put::<N>(d, &r, mask);
            rf.pout::<N>(pu, if pand { nz & p } else { nz | p }, mask);
        }
        Op::Plop3 { pu, pa, pb, pc, lut } => {
            let r = lop3(rf.pin::<N>(pa), rf.pin::<N>(pb), rf.pin::<N>(pc), lut) & all::<N>();
            rf.pout::<N>(pu, r, mask);
        }
        Op::Shf { d, a, b, c, right, hi, wrap, signed, wide } => {
            let (va, vb, vc) = (rf.get::<N>(a, cb)?, rf.get::<N>(b, cb)?, rf.get::<N>(c, cb)?);
            let r = lanes!(N, |l| shf(va[l], vb[l], vc[l], right, hi, wrap, signed, wide));
            rf.put::<N>(d, &r, mask);
        }
        Op::Mov { d, s } => {
            let v = rf.get::<N>(s, cb)?;
            rf.put::<N>(d, &v, mask);
        }
        Op::Mov64 { d, s } => {
            let v = rf.get64::<N>(s, cb)?;
            rf.put64::<N>(d, &v, mask);
        }
        Op::Prmt { d, a, b, c, mode } => {
            let (va, vb, vc) = (rf.get::<N>(a, cb)?, rf.get::<N>(b, cb)?, rf.get::<N>(c, cb)?);
            let r = lanes!(N, |l| prmt(va[l], vb[l], vc[l], mode));
            rf.put::<N>(d, &r, mask);
        }
        Op::I2i { d, b, bits, signed } => {
            let vb = rf.get::<N>(b, cb)?;
            let r = lanes!(N, |l| i2i(vb[l], bits, signed));
            rf.put::<N>(d, &r, mask);
        }
        Op::I2ip { d, a, b, c, bits, signed, relu } => {
            let (va, vb, vc) = (rf.get::<N>(a, cb)?, rf.get::<N>(b, cb)?, rf.get::<N>(c, cb)?);
            let r = lanes!(N, |l| i2ip(va[l], vb[l], vc[l], bits, signed, relu));
            rf.put::<N>(d, &r, mask);
        }
        Op::Popc { d, b, not } => {
            let vb = rf.get::<N>(b, cb)?;
            let r = lanes!(N, |l| if not { (!vb[l]).count_ones() } else { vb[l].count_ones() });
            rf.put::<N>(d, &r, mask);
        }
        Op::Flo { d, b, not, signed, sh } => {
            let vb = rf.get::<N>(b, cb)?;
            let r = lanes!(N, |l| flo(vb[l], not, signed, sh));
            rf.put::<N>(d, &r, mask);
        }
        Op::Brev { d, b } => {
            let vb = rf.get::<N>(b, cb)?;
            let r = lanes!(N, |l| vb[l].reverse_bits());
            rf.put::<N>(d, &r, mask);
        }
        Op::Bmsk { d, a, b, wrap } => {
            let (va, vb) = (rf.get::<N>(a, cb)?, rf.get::<N>(b, cb)?);
            let r = lanes!(N, |l| bmsk(va[l], vb[l], wrap));
            rf.put::<N>(d, &r, mask);
        }
        Op::Sgxt { d, a, b, wrap, signed } => {
            let (va, vb) = (rf.get::<N>(a, cb)?, rf.get::<N>(b, cb)?);
            let r = lanes!(N, |l| sgxt(va[l], vb[l], wrap, signed));
            rf.put::<N>(d, &r, mask);
        }
        _ => unreachable!("not an integer op: {:?}", op),
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    /// The truth table read literally, one bit position at a time.
    fn lop3_by_bits(a: u32, b: u32, c: u32, lut: u8) -> u32 {
        (0..32).map(|i| ((lut >> ((a >> i & 1) << 2 | (b >> i & 1) << 1 | (c >> i & 1))) as u32 & 1) << i).sum()
    }

    #[test]
    fn lop3_matches_the_truth_table_for_every_lut() {
        let vals = [0u32, u32::MAX, 0xF0F0_F0F0, 0xCCCC_CCCC, 0xAAAA_AAAA, 0x1234_5678, 0x8000_0001];
        for lut in 0..=255u8 {
            for &a in &vals {
                for &b in &vals {
                    for &c in &vals {
                        assert_eq!(super::lop3(a, b, c, lut), lop3_by_bits(a, b, c, lut), "lut {:#x}", lut);
                    }
                }
            }
        }
    }
}
