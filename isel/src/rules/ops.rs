//! Piece builders shared by the integer families (`bitops`, `shifts`, `mul`,
//! `minmax`, `overflow`, `bits`): one call adds one machine instruction to a
//! [`Bundle`], with its operands given as [`S`] sources and a [`D`]
//! destination, so that multi-piece sequences (64-bit pairs, carry chains)
//! read like the assembly they produce.

use ursa_emit::forms::{
    self, BREV_R, FLO_R, IADD_RI, IADD_RR, IMAD_RIR, IMAD_RRI, IMAD_RRR, IMAD_WIDE_RIR, IMAD_WIDE_RRR, IMUL_RI, IMUL_RR, ISETP_RI, ISETP_RR,
};
use ursa_emit::forms::{LOP3_RIR, LOP3_RRR, MOV_I, MOV_R, PLOP3_X, POPC_R, PRMT_RRI, SEL_RI, SEL_RR, SHF_RIR, SHF_RRI, SHF_RRR};
use ursa_emit::mods::{BoolOp, CWMode, CompOp, IExt, IType, PRMTMode, SHFDType, SHFDir, LOHI};
use ursa_emit::optypes::{IADD, IMAD, IMAD_WIDE, IMUL, ISETP, LOP3, MOV, SEL, SHF};
use ursa_emit::typed::{Dst, Handle, Imm, Src, P, R};
use ursa_emit::FormId;

use crate::vcode::{Bundle, VReg};

/// A source operand.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum S {
    /// A 32-bit register, or the low word of a pair.
    Lo(VReg),
    /// The high word of a pair.
    Hi(VReg),
    /// `RZ`.
    Z,
    /// An immediate (only where the form has one: the caller picks the form).
    Imm(u32),
}

impl S {
    pub fn is_imm(self) -> bool {
        matches!(self, S::Imm(_))
    }
}

/// A destination operand.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum D {
    /// A result register (or the low word of a result pair).
    Lo(VReg),
    /// The high word of a result pair.
    Hi(VReg),
    /// A scratch register of the bundle (low word of a scratch pair).
    T(VReg),
    /// The high word of a scratch pair.
    TH(VReg),
    /// `RZ`: the result is discarded.
    Z,
}

/// The one-source XU operations [`Pieces::xu1`] builds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Xu1 {
    Popc,
    Brev,
}

/// The same source, high word (for the second piece of a 64-bit operation):
/// `Lo(p)` becomes `Hi(p)`, an immediate its high word, `RZ` stays.
pub fn hi_of(s: S, k_hi: u32) -> S {
    match s {
        S::Lo(v) => S::Hi(v),
        S::Imm(_) => S::Imm(k_hi),
        o => o,
    }
}

pub trait Pieces: Sized {
    /// Register field `field` reads `s` (`RZ` for [`S::Z`]); an immediate
    /// goes to `imm`, the immediate field of the form the caller chose for it.
    fn src_or(self, field: impl Handle<Src<R>>, imm: impl Handle<Imm>, s: S) -> Self;
    /// Register field `field` reads `s` (never an immediate).
    fn src(self, field: impl Handle<Src<R>>, s: S) -> Self;
    fn dst(self, field: impl Handle<Dst<R>>, d: D) -> Self;

    /// `LOP3.LUT d, a, b, c, lut, !PT` (LOP3_RIR when `b` is an immediate).
    fn lop3(self, d: D, a: S, b: S, c: S, lut: u8) -> Self;

    /// `SHF.dir{.HI}{.WRAP}.itype d, a, b, c` (b or c may be immediate).
    #[allow(clippy::too_many_arguments)]
    fn shf(self, left: bool, hi: bool, wrap: bool, itype: SHFDType, d: D, a: S, b: S, c: S) -> Self;

    /// `IMAD{.HI.X}.itype d, a, b, c` (LO; `hi` gives HI.X, whose carry-in
    /// the caller sets with `pp`/`pp.not`; the default `!PT` adds 0).
    #[allow(clippy::too_many_arguments)]
    fn imad(self, hi: bool, signed: bool, d: D, a: S, b: S, c: S) -> Self;

    /// `IMAD.WIDE.itype d, a, b, c` (`c` a pair or RZ).
    fn imad_wide(self, signed: bool, d: D, a: S, b: S, c: S) -> Self;

    /// `IMUL.HI.itype d, a, b`.
    fn imul_hi(self, signed: bool, d: D, a: S, b: S) -> Self;

    /// `IADD d, ±a, ±b` (`.X` with `x`; carry in/out set by the caller).
    #[allow(clippy::too_many_arguments)]
    fn iadd(self, x: bool, d: D, a: S, neg_a: bool, b: S, neg_b: bool) -> Self;

    /// The pair `d = a ± b` from words (`[low, high]`): `IADD d.lo, c, a0,
    /// ±b0` then `IADD.X d.hi, a1, ±b1, c`, the carry in the scratch
    /// predicate `c`.
    fn iadd64(self, d: VReg, a: [S; 2], b: [S; 2], neg_b: bool, c: VReg) -> Self;

    /// `ISETP.cmp.boolop.itype pu, a, b, pp` with the predicate operands set
    /// by the caller (`pp` defaults to PT).
    fn isetp(self, cmp: CompOp, signed: bool, a: S, b: S) -> Self;

    /// `SEL d, a, b, p` (`b` may be immediate; `!p` with `negate`).
    fn sel(self, d: D, a: S, b: S, p: VReg, negate: bool) -> Self;

    /// `PLOP3 d, a, b, PT, lut` (`b` PT when `None`): predicate `d` defined.
    fn plop3(self, d: VReg, a: VReg, b: Option<VReg>, lut: u8) -> Self;

    /// `MOV d, a` (`a` register or immediate).
    fn mov(self, d: D, a: S) -> Self;

    /// A one-source XU operation: `POPC`, `BREV` (form `_R`).
    fn xu1(self, op: Xu1, d: D, b: S) -> Self;

    /// `FLO.itype d, b`: the index of the highest 1 bit (of `~b` for a
    /// negative `b` with `.S32`), 0xFFFFFFFF where there is none.
    fn flo(self, signed: bool, d: D, b: S) -> Self;

    /// `PRMT d, a, b, selector` (selector immediate).
    fn prmt(self, d: D, a: S, b: S, sel: u32) -> Self;
}

/// The form of a family for the operand kinds of B and C: `rrr` when both
/// are registers, `rir` when B is an immediate, `rri` when C is.
fn by_imm(b: S, c: S, rrr: FormId, rir: FormId, rri: FormId) -> FormId {
    if b.is_imm() {
        rir
    } else if c.is_imm() {
        rri
    } else {
        rrr
    }
}

impl Pieces for Bundle {
    fn src_or(self, field: impl Handle<Src<R>>, imm: impl Handle<Imm>, s: S) -> Bundle {
        match s {
            S::Imm(k) => self.set(imm, k as u64),
            s => self.src(field, s),
        }
    }

    fn src(self, field: impl Handle<Src<R>>, s: S) -> Bundle {
        match s {
            S::Lo(v) => self.use_(field, v),
            S::Hi(v) => self.use_hi(field, v),
            S::Z => self.set(field, R::Z),
            S::Imm(k) => panic!("immediate 0x{:x} for a register-only operand", k),
        }
    }

    fn dst(self, field: impl Handle<Dst<R>>, d: D) -> Bundle {
        match d {
            D::Lo(v) => self.def(field, v),
            D::Hi(v) => self.def_hi(field, v),
            D::T(v) => self.temp(field, v),
            D::TH(v) => self.temp_hi(field, v),
            D::Z => self.set(field, R::Z),
        }
    }

    fn lop3(self, d: D, a: S, b: S, c: S, lut: u8) -> Bundle {
        self.inst(by_imm(b, S::Z, forms::LOP3_RRR, forms::LOP3_RIR, forms::LOP3_RRR))
            .dst(LOP3::RD, d)
            .src(LOP3::RA, a)
            .src_or(LOP3_RRR::RB, LOP3_RIR::VB, b)
            .src(LOP3::RC, c)
            .set(LOP3::LUT, lut as u64)
            .set(LOP3::PP, P::T)
            .set(LOP3::PP_NOT, true)
    }

    fn shf(self, left: bool, hi: bool, wrap: bool, itype: SHFDType, d: D, a: S, b: S, c: S) -> Bundle {
        self.inst(by_imm(b, c, forms::SHF_RRR, forms::SHF_RIR, forms::SHF_RRI))
            .set(SHF::DIRECTION, if left { SHFDir::L } else { SHFDir::R })
            .set(SHF::LOHI, if hi { LOHI::HI } else { LOHI::LO })
            .set(SHF::CWMOD, if wrap { CWMode::WRAP } else { CWMode::CLAMP })
            .set(SHF::ITYPE, itype)
            .dst(SHF::RD, d)
            .src(SHF::RA, a)
            .src_or([SHF_RRR::RB, SHF_RRI::RB], SHF_RIR::VB, b)
            .src_or([SHF_RRR::RC, SHF_RIR::RC], SHF_RRI::VC, c)
    }

    fn imad(self, hi: bool, signed: bool, d: D, a: S, b: S, c: S) -> Bundle {
        let mut bu = self.inst(by_imm(b, c, forms::IMAD_RRR, forms::IMAD_RIR, forms::IMAD_RRI)).set(IMAD::ITYPE, itype(signed));
        if hi {
            bu = bu.set(IMAD::LOHI, LOHI::HI).set(IMAD::EXT, IExt::X);
        }
        bu.dst(IMAD::RD, d).src(IMAD::RA, a).src_or([IMAD_RRR::RB, IMAD_RRI::RB], IMAD_RIR::VB, b).src_or(
            [IMAD_RRR::RC, IMAD_RIR::RC],
            IMAD_RRI::VC,
            c,
        )
    }

    fn imad_wide(self, signed: bool, d: D, a: S, b: S, c: S) -> Bundle {
        self.inst(by_imm(b, S::Z, forms::IMAD_WIDE_RRR, forms::IMAD_WIDE_RIR, forms::IMAD_WIDE_RRR))
            .set(IMAD_WIDE::ITYPE, itype(signed))
            .dst(IMAD_WIDE::RD, d)
            .src(IMAD_WIDE::RA, a)
            .src_or(IMAD_WIDE_RRR::RB, IMAD_WIDE_RIR::VB, b)
            .src([IMAD_WIDE_RRR::RC, IMAD_WIDE_RIR::RC], c)
    }

    fn imul_hi(self, signed: bool, d: D, a: S, b: S) -> Bundle {
        self.inst(by_imm(b, S::Z, forms::IMUL_RR, forms::IMUL_RI, forms::IMUL_RR))
            .set(IMUL::LOHI, LOHI::HI)
            .set(IMUL::ITYPE, itype(signed))
            .dst(IMUL::RD, d)
            .src(IMUL::RA, a)
            .src_or(IMUL_RR::RB, IMUL_RI::VB, b)
    }

    fn iadd(self, x: bool, d: D, a: S, neg_a: bool, b: S, neg_b: bool) -> Bundle {
        let mut bu = self.inst(by_imm(b, S::Z, forms::IADD_RR, forms::IADD_RI, forms::IADD_RR));
        if x {
            bu = bu.set(IADD::EXT, IExt::X);
        }
        bu = bu.dst(IADD::RD, d).src(IADD::RA, a).set(IADD::RA_NEG, neg_a).src_or(IADD_RR::RB, IADD_RI::VB, b);
        if neg_b {
            bu = bu.set(IADD_RR::RB_NEG, true);
        }
        bu
    }

    fn iadd64(self, d: VReg, a: [S; 2], b: [S; 2], neg_b: bool, c: VReg) -> Bundle {
        self.iadd(false, D::Lo(d), a[0], false, b[0], neg_b)
            .temp(IADD::PU, c)
            .iadd(true, D::Hi(d), a[1], false, b[1], neg_b)
            .use_(IADD::PP, c)
            .set(IADD::PP_NOT, false)
    }

    fn isetp(self, cmp: CompOp, signed: bool, a: S, b: S) -> Bundle {
        self.inst(by_imm(b, S::Z, forms::ISETP_RR, forms::ISETP_RI, forms::ISETP_RR))
            .set(ISETP::COMPOP, cmp)
            .set(ISETP::BOOLOP, BoolOp::AND)
            .set(ISETP::ITYPE, itype(signed))
            .set(ISETP::PP, P::T)
            .src(ISETP::RA, a)
            .src_or(ISETP_RR::RB, ISETP_RI::VB, b)
    }

    fn sel(self, d: D, a: S, b: S, p: VReg, negate: bool) -> Bundle {
        self.inst(by_imm(b, S::Z, forms::SEL_RR, forms::SEL_RI, forms::SEL_RR))
            .dst(SEL::RD, d)
            .src(SEL::RA, a)
            .src_or(SEL_RR::RB, SEL_RI::VB, b)
            .use_(SEL::PP, p)
            .set(SEL::PP_NOT, negate)
    }

    fn plop3(self, d: VReg, a: VReg, b: Option<VReg>, lut: u8) -> Bundle {
        let bu =
            self.inst(forms::PLOP3_X).def(PLOP3_X::PU, d).use_(PLOP3_X::PA, a).set(PLOP3_X::PC, P::T).set(PLOP3_X::LUT, u64::from(lut));
        match b {
            Some(b) => bu.use_(PLOP3_X::PB, b),
            None => bu.set(PLOP3_X::PB, P::T),
        }
    }

    fn mov(self, d: D, a: S) -> Bundle {
        self.inst(if a.is_imm() { forms::MOV_I } else { forms::MOV_R }).dst(MOV::RD, d).src_or(MOV_R::RB, MOV_I::VB, a)
    }

    fn xu1(self, op: Xu1, d: D, b: S) -> Bundle {
        match op {
            Xu1::Popc => self.inst(forms::POPC_R).dst(POPC_R::RD, d).src(POPC_R::RB, b),
            Xu1::Brev => self.inst(forms::BREV_R).dst(BREV_R::RD, d).src(BREV_R::RB, b),
        }
    }

    fn flo(self, signed: bool, d: D, b: S) -> Bundle {
        self.inst(forms::FLO_R).set(FLO_R::ITYPE, itype(signed)).dst(FLO_R::RD, d).src(FLO_R::RB, b)
    }

    fn prmt(self, d: D, a: S, b: S, sel: u32) -> Bundle {
        self.inst(forms::PRMT_RRI)
            .set(PRMT_RRI::MODE, PRMTMode::IDX)
            .dst(PRMT_RRI::RD, d)
            .src(PRMT_RRI::RA, a)
            .src(PRMT_RRI::RB, b)
            .set(PRMT_RRI::VC, sel as u64)
    }
}

/// `.S32` / `.U32`.
pub fn itype(signed: bool) -> IType {
    if signed {
        IType::S32
    } else {
        IType::U32
    }
}
