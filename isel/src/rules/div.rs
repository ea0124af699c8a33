//! Constructors for `isle/lower/div.isle`: unsigned and signed division and
//! remainder of i32 and i64 by the reciprocal method, as straight-line code.
//!
//! `backend/src/legalize.rs` has already emitted CLIF's traps (a zero
//! divisor, `sdiv INT_MIN, -1`), turned i8/i16 into i32, divided by
//! constants with multiply-high, and split i64 into a 32-bit fast path and
//! this 64-bit one; so the divisor here is nonzero and the quotient fits.
//! The error bounds the correction steps rely on are derived in
//! `docs/division.md`.
//!
//! 32 bits (`d` nonzero):
//!
//! ```text
//! I2F.RP.F32.U32   f, d            ; f >= d, rounded up
//! MUFU.RCP         f, f            ; ~1/f
//! IADD             f, f, 0xffffffe ; × 2^32, minus 2 ulps: below 2^32/d
//! F2I.RZ.U32       y, f            ; y < 2^32/d
//! IADD             n, RZ, -d
//! IMAD             e, n, y, RZ     ; e = 2^32 - d*y
//! IMAD.HI          y, y, e, y      ; y += hi(y*e): one Newton step
//! IMAD.HI          q, x, y, RZ     ; q = hi(x*y), q <= x/d < q + 3
//! IMAD             r, q, n, x      ; r = x - q*d
//! ISETP.GE.U32     p, r, d         ; twice: q += 1, r -= d where r >= d
//! ...
//! ```
//!
//! 64 bits: the same estimate from `I2F.RP.F32.U64` / `F2I.RZ.U64.F32`
//! (`0x1ffffffe` scales by 2^64), two Newton steps on 64-bit values
//! (`y += umulhi(y, -d*y)`), `q = umulhi(x, y)`, and the same two
//! corrections with 64-bit compares and selects.
//!
//! Signed operations divide the magnitudes (`IABS`; `INT_MIN` stays
//! `2^(N-1)` read unsigned) and negate the quotient when the signs differ,
//! the remainder when the dividend is negative.

use ursa_emit::forms;

use crate::lower::{CmpOp, Lower, Signed};
use crate::rules::ops::{Pieces, D, S};
use crate::vcode::{Bundle, Class, VReg};
use ursa_emit::forms::{F2I_R, I2F_R, MUFU_R};
use ursa_emit::mods;
use ursa_emit::mods::CompOp;
use ursa_emit::optypes::{IADD, ISETP};

impl Lower<'_> {
    /// The reciprocal estimate `trunc(2^N / d · (1 - ε))` with `N` = 32
    /// (`d` a register) or 64 (`d` a pair): I2F with upward rounding,
    /// MUFU.RCP, the exponent raised by `N` and the mantissa lowered by two
    /// units, F2I truncating.
    fn recip_estimate(&mut self, d: VReg, wide: bool) -> VReg {
        let f = self.temp(Class::R);
        let r = self.temp(Class::R);
        let y = self.temp(if wide { Class::RPair } else { Class::R });
        let it = if wide { mods::IntType::U64 } else { mods::IntType::U32 };
        self.emit_b(
            Bundle::new()
                .inst(forms::I2F_R)
                .set(I2F_R::RND, mods::FPRound::RP)
                .set(I2F_R::FTYPE, mods::FType::F32)
                .set(I2F_R::ITYPE, it)
                .def(I2F_R::RD, f)
                .use_(I2F_R::RB, d),
        );
        self.emit_b(
            Bundle::new()
                .inst(forms::MUFU_R)
                .set(MUFU_R::MUFUOP, mods::MUFUOp::RCP)
                .set(MUFU_R::DTYPE, mods::MUFUDType::F32)
                .def(MUFU_R::RD, r)
                .use_(MUFU_R::RB, f),
        );
        let s = self.iadd_ri(r, if wide { 0x1fff_fffe } else { 0x0fff_fffe });
        self.emit_b(
            Bundle::new()
                .inst(forms::F2I_R)
                .set(F2I_R::RND, mods::FPRound::RZ)
                .set(F2I_R::FTYPE, mods::FType::F32)
                .set(F2I_R::ITYPE, it)
                .def(F2I_R::RD, y)
                .use_(F2I_R::RB, s),
        );
        y
    }

    /// `IMAD.HI d, a, b, c`: `hi(a*b) + c` (mod 2^32).
    fn imad_hi(&mut self, a: VReg, b: VReg, c: S) -> VReg {
        let d = self.temp(Class::R);
        self.emit_b(Bundle::new().imad(true, false, D::Lo(d), S::Lo(a), S::Lo(b), c));
        d
    }

    /// `a + p` (p a predicate, 0 or 1): `IADD.X d, a, RZ, p`.
    fn inc_if(&mut self, a: VReg, p: VReg) -> VReg {
        let d = self.temp(Class::R);
        self.emit_b(Bundle::new().iadd(true, D::Lo(d), S::Lo(a), false, S::Z, false).use_(IADD::PP, p).set(IADD::PP_NOT, false));
        d
    }

    /// 64-bit `a + p`: `IADD.X d.lo, c, a.lo, RZ, p` + `IADD.X d.hi, a.hi, RZ, c`.
    fn inc_if64(&mut self, a: VReg, p: VReg) -> VReg {
        let d = self.temp(Class::RPair);
        let c = self.temp(Class::P);
        self.emit_b(
            Bundle::new()
                .iadd(true, D::Lo(d), S::Lo(a), false, S::Z, false)
                .temp(IADD::PU, c)
                .use_(IADD::PP, p)
                .set(IADD::PP_NOT, false)
                .iadd(true, D::Hi(d), S::Hi(a), false, S::Z, false)
                .use_(IADD::PP, c)
                .set(IADD::PP_NOT, false),
        );
        d
    }

    /// 64-bit `-a`: `IADD d.lo, c, RZ, -a.lo` + `IADD.X d.hi, RZ, ~a.hi, c`.
    fn neg64(&mut self, a: VReg) -> VReg {
        let d = self.temp(Class::RPair);
        let c = self.temp(Class::P);
        self.emit_b(
            Bundle::new()
                .iadd(false, D::Lo(d), S::Z, false, S::Lo(a), true)
                .temp(IADD::PU, c)
                .iadd(true, D::Hi(d), S::Z, false, S::Hi(a), true)
                .use_(IADD::PP, c)
                .set(IADD::PP_NOT, false),
        );
        d
    }

    /// Unsigned 32-bit `x / d` or `x % d`, `d` nonzero.
    fn udiv32_core(&mut self, x: VReg, d: VReg, rem: bool) -> VReg {
        let y0 = self.recip_estimate(d, false);
        let n = self.ineg_r(d);
        let e = self.imul32(n, y0);
        let y = self.imad_hi(y0, e, S::Lo(y0));
        let q = self.imad_hi(x, y, S::Z);
        let r = self.imad32(q, n, x);
        // Two corrections: q <= x/d < q + 3 (docs/division.md).
        let p0 = self.isetp_rr(&CmpOp::GE, &Signed::U32, r, d);
        let r0d = self.iadd_rr(r, n);
        let r1 = self.sel_rr(r0d, r, p0);
        let p1 = self.isetp_rr(&CmpOp::GE, &Signed::U32, r1, d);
        if rem {
            let r1d = self.iadd_rr(r1, n);
            return self.sel_rr(r1d, r1, p1);
        }
        let q1 = self.inc_if(q, p0);
        self.inc_if(q1, p1)
    }

    /// Unsigned 64-bit `x / d` or `x % d`, `d` nonzero.
    fn udiv64_core(&mut self, x: VReg, d: VReg, rem: bool) -> VReg {
        let mut y = self.recip_estimate(d, true);
        let n = self.neg64(d);
        for _ in 0..2 {
            let e = self.imul64(n, y);
            let h = self.umulhi64(y, e);
            y = self.iadd64_rr(y, h);
        }
        let q = self.umulhi64(x, y);
        let qn = self.imul64(q, n);
        let r = self.iadd64_rr(x, qn);
        let p0 = self.isetp64_rr(&CmpOp::GE, &Signed::U32, r, d);
        let r0d = self.iadd64_rr(r, n);
        let r1 = self.sel64_rr(r0d, r, p0);
        let p1 = self.isetp64_rr(&CmpOp::GE, &Signed::U32, r1, d);
        if rem {
            let r1d = self.iadd64_rr(r1, n);
            return self.sel64_rr(r1d, r1, p1);
        }
        let q1 = self.inc_if64(q, p0);
        self.inc_if64(q1, p1)
    }

    /// `udiv`/`urem`/`sdiv`/`srem` of i32 (divisor nonzero, no overflow).
    pub fn div32(&mut self, signed: bool, rem: bool, x: VReg, d: VReg) -> VReg {
        if !signed {
            return self.udiv32_core(x, d, rem);
        }
        let ax = self.iabs32(x);
        let ad = self.iabs32(d);
        let v = self.udiv32_core(ax, ad, rem);
        // The result is negative when the dividend is (srem) or when the
        // signs differ (sdiv: the sign bit of x ^ d).
        let s = if rem { x } else { self.lop3_rr(x, d, crate::machine::LUT_A ^ crate::machine::LUT_B) };
        let neg = self.isetp_ri(&CmpOp::LT, &Signed::S32, s, 0);
        let nv = self.ineg_r(v);
        self.sel_rr(nv, v, neg)
    }

    /// `udiv`/`urem`/`sdiv`/`srem` of i64 (divisor nonzero, no overflow).
    pub fn div64(&mut self, signed: bool, rem: bool, x: VReg, d: VReg) -> VReg {
        if !signed {
            return self.udiv64_core(x, d, rem);
        }
        let ax = self.iabs64(x);
        let ad = self.iabs64(d);
        let v = self.udiv64_core(ax, ad, rem);
        // The sign test on the high words.
        let neg = self.temp(Class::P);
        let bu = if rem {
            Bundle::new().isetp(CompOp::LT, true, S::Hi(x), S::Z).def(ISETP::PU, neg)
        } else {
            let t = self.temp(Class::R);
            Bundle::new()
                .lop3(D::T(t), S::Hi(x), S::Hi(d), S::Z, crate::machine::LUT_A ^ crate::machine::LUT_B)
                .isetp(CompOp::LT, true, S::Lo(t), S::Z)
                .def(ISETP::PU, neg)
        };
        self.emit_b(bu);
        let nv = self.neg64(v);
        self.sel64_rr(nv, v, neg)
    }

    /// `LOP3.LUT d, a, b, RZ, lut`.
    fn lop3_rr(&mut self, a: VReg, b: VReg, lut: u8) -> VReg {
        let d = self.temp(Class::R);
        self.emit_b(Bundle::new().lop3(D::Lo(d), S::Lo(a), S::Lo(b), S::Z, lut));
        d
    }
}
