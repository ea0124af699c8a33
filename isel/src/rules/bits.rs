//! Constructors for `isle/lower/bits.isle`: counts and bit/byte reversal
//! with the XU instructions (FLO, POPC, BREV) and PRMT.
//!
//! `FLO.U32 x` is the index of the highest 1 bit of `x`, or -1 (0xFFFFFFFF)
//! for 0, so `clz = 31 - FLO.U32(x)` (32 for 0). `FLO.S32` looks at `~x` for
//! a negative `x`, so `cls = 30 - FLO.S32(x)` (31 for 0 and -1).
//! `ctz = POPC((x - 1) & ~x)`: the ones below the lowest 1 bit (all of them
//! for 0); masked to the type's bits for narrow values.

use crate::lower::Lower;
use crate::machine::{LUT_A, LUT_B, LUT_C};
use crate::rules::ops::Xu1;
use crate::rules::ops::{Pieces, D, S};
use crate::vcode::{Bundle, Class, VReg};
use ursa_emit::forms::{self, PRMT_RRR};
use ursa_emit::mods::SHFDType;
use ursa_emit::mods::{CompOp, PRMTMode};
use ursa_emit::optypes::{IADD, ISETP};

impl Lower<'_> {
    /// `n - 1 - FLO.U32(x)` for a zero-extended `x` of `n` bits.
    pub fn clz32(&mut self, x: VReg, n: u32) -> VReg {
        let d = self.temp(Class::R);
        let f = self.temp(Class::R);
        self.emit_b(Bundle::new().flo(false, D::T(f), S::Lo(x)).iadd(false, D::Lo(d), S::Lo(f), true, S::Imm(n - 1), false));
        d
    }

    /// `hi != 0 ? 31 - FLO(hi) : 63 - FLO(lo)`; the high word of the result is 0.
    pub fn clz64(&mut self, x: VReg) -> VReg {
        let d = self.temp(Class::RPair);
        let (fh, fl, rh, rl) = (self.temp(Class::R), self.temp(Class::R), self.temp(Class::R), self.temp(Class::R));
        let p = self.temp(Class::P);
        let bu = Bundle::new()
            .flo(false, D::T(fh), S::Hi(x))
            .flo(false, D::T(fl), S::Lo(x))
            .isetp(CompOp::NE, false, S::Hi(x), S::Z)
            .temp(ISETP::PU, p)
            .iadd(false, D::T(rh), S::Lo(fh), true, S::Imm(31), false)
            .iadd(false, D::T(rl), S::Lo(fl), true, S::Imm(63), false)
            .sel(D::Lo(d), S::Lo(rh), S::Lo(rl), p, false)
            .mov(D::Hi(d), S::Z);
        self.emit_b(bu);
        d
    }

    /// `n - 2 - FLO.S32(x)` for a sign-extended `x` of `n` bits.
    pub fn cls32(&mut self, x: VReg, n: u32) -> VReg {
        let d = self.temp(Class::R);
        let f = self.temp(Class::R);
        self.emit_b(Bundle::new().flo(true, D::T(f), S::Lo(x)).iadd(false, D::Lo(d), S::Lo(f), true, S::Imm(n - 2), false));
        d
    }

    /// The high word decides unless it is all sign bits; then the low word,
    /// xored with the sign, continues the count: `62 - FLO.U32(lo ^ s)`.
    pub fn cls64(&mut self, x: VReg) -> VReg {
        let d = self.temp(Class::RPair);
        let (s, l, ph, pl, rh, rl) =
            (self.temp(Class::R), self.temp(Class::R), self.temp(Class::R), self.temp(Class::R), self.temp(Class::R), self.temp(Class::R));
        let p = self.temp(Class::P);
        let bu = Bundle::new()
            .shf(false, true, false, SHFDType::S32, D::T(s), S::Z, S::Imm(31), S::Hi(x))
            .lop3(D::T(l), S::Lo(x), S::Z, S::Lo(s), LUT_A ^ LUT_C)
            .flo(true, D::T(ph), S::Hi(x))
            .flo(false, D::T(pl), S::Lo(l))
            .isetp(CompOp::NE, false, S::Hi(x), S::Lo(s))
            .temp(ISETP::PU, p)
            .iadd(false, D::T(rh), S::Lo(ph), true, S::Imm(30), false)
            .iadd(false, D::T(rl), S::Lo(pl), true, S::Imm(62), false)
            .sel(D::Lo(d), S::Lo(rh), S::Lo(rl), p, false)
            .mov(D::Hi(d), S::Z);
        self.emit_b(bu);
        d
    }

    /// `POPC((x - 1) & mask & ~x)`.
    pub fn ctz32(&mut self, x: VReg, mask: u32) -> VReg {
        let d = self.temp(Class::R);
        let (t, u) = (self.temp(Class::R), self.temp(Class::R));
        let (m, lut) = if mask == u32::MAX { (S::Z, LUT_A & !LUT_C) } else { (S::Imm(mask), LUT_A & LUT_B & !LUT_C) };
        let bu = Bundle::new()
            .iadd(false, D::T(t), S::Lo(x), false, S::Imm(u32::MAX), false)
            .lop3(D::T(u), S::Lo(t), m, S::Lo(x), lut)
            .xu1(Xu1::Popc, D::Lo(d), S::Lo(u));
        self.emit_b(bu);
        d
    }

    /// `POPC` of both words of `(x - 1) & ~x`, added.
    pub fn ctz64(&mut self, x: VReg) -> VReg {
        let d = self.temp(Class::RPair);
        let (t0, t1, c0, c1) = (self.temp(Class::R), self.temp(Class::R), self.temp(Class::R), self.temp(Class::R));
        let c = self.temp(Class::P);
        let andn = LUT_A & !LUT_C;
        let bu = Bundle::new()
            .iadd(false, D::T(t0), S::Lo(x), false, S::Imm(u32::MAX), false)
            .temp(IADD::PU, c)
            .iadd(true, D::T(t1), S::Hi(x), false, S::Imm(u32::MAX), false)
            .use_(IADD::PP, c)
            .set(IADD::PP_NOT, false)
            .lop3(D::T(t0), S::Lo(t0), S::Z, S::Lo(x), andn)
            .lop3(D::T(t1), S::Lo(t1), S::Z, S::Hi(x), andn)
            .xu1(Xu1::Popc, D::T(c0), S::Lo(t0))
            .xu1(Xu1::Popc, D::T(c1), S::Lo(t1))
            .iadd(false, D::Lo(d), S::Lo(c0), false, S::Lo(c1), false)
            .mov(D::Hi(d), S::Z);
        self.emit_b(bu);
        d
    }

    pub fn popc32(&mut self, x: VReg) -> VReg {
        let d = self.temp(Class::R);
        self.emit_b(Bundle::new().xu1(Xu1::Popc, D::Lo(d), S::Lo(x)));
        d
    }

    pub fn popc64(&mut self, x: VReg) -> VReg {
        let d = self.temp(Class::RPair);
        let (c0, c1) = (self.temp(Class::R), self.temp(Class::R));
        let bu = Bundle::new()
            .xu1(Xu1::Popc, D::T(c0), S::Lo(x))
            .xu1(Xu1::Popc, D::T(c1), S::Hi(x))
            .iadd(false, D::Lo(d), S::Lo(c0), false, S::Lo(c1), false)
            .mov(D::Hi(d), S::Z);
        self.emit_b(bu);
        d
    }

    pub fn brev32(&mut self, x: VReg) -> VReg {
        let d = self.temp(Class::R);
        self.emit_b(Bundle::new().xu1(Xu1::Brev, D::Lo(d), S::Lo(x)));
        d
    }

    /// Each word reversed into the other.
    pub fn brev64(&mut self, x: VReg) -> VReg {
        let d = self.temp(Class::RPair);
        self.emit_b(Bundle::new().xu1(Xu1::Brev, D::Lo(d), S::Hi(x)).xu1(Xu1::Brev, D::Hi(d), S::Lo(x)));
        d
    }

    /// `PRMT d, x, RZ, sel`.
    pub fn prmt_imm(&mut self, x: VReg, sel: u32) -> VReg {
        let d = self.temp(Class::R);
        self.emit_b(Bundle::new().prmt(D::Lo(d), S::Lo(x), S::Z, sel));
        d
    }

    /// Byte `i & 7` of the eight bytes `b:a` (`a` the low word), in the low
    /// byte: `LOP3 s, i, 0x7` and `PRMT d, a, b, s` (a selector nibble of
    /// at most 7 picks a byte without replicating its sign).
    pub fn byte_of_pair(&mut self, a: VReg, b: VReg, i: VReg) -> VReg {
        let s = self.lop3_ri(i, 7, LUT_A & LUT_B);
        let d = self.temp(Class::R);
        self.emit_b(
            Bundle::new()
                .inst(forms::PRMT_RRR)
                .set(PRMT_RRR::MODE, PRMTMode::IDX)
                .def(PRMT_RRR::RD, d)
                .use_(PRMT_RRR::RA, a)
                .use_(PRMT_RRR::RB, b)
                .use_(PRMT_RRR::RC, s),
        );
        d
    }

    /// Each word byte-swapped into the other.
    pub fn bswap64(&mut self, x: VReg) -> VReg {
        let d = self.temp(Class::RPair);
        self.emit_b(Bundle::new().prmt(D::Lo(d), S::Hi(x), S::Z, 0x0123).prmt(D::Hi(d), S::Lo(x), S::Z, 0x0123));
        d
    }
}
