//! Piece builders shared by the integer families (`bitops`, `shifts`, `mul`,
//! `minmax`, `overflow`, `bits`): one call adds one machine instruction to a
//! [`Bundle`], with its operands given as [`S`] sources and a [`D`]
//! destination, so that multi-piece sequences (64-bit pairs, carry chains)
//! read like the assembly they produce.

use ursa_emit::forms;

use crate::machine::{PT_, RZ_};
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
    fn src(self, field: &str, s: S) -> Self;
    fn dst(self, field: &str, d: D) -> Self;

    /// `LOP3.LUT d, a, b, c, lut, !PT` (LOP3_RIR when `b` is an immediate).
    fn lop3(self, d: D, a: S, b: S, c: S, lut: u8) -> Self;

    /// `SHF.dir{.HI}{.WRAP}.itype d, a, b, c` (b or c may be immediate).
    #[allow(clippy::too_many_arguments)]
    fn shf(self, left: bool, hi: bool, wrap: bool, itype: &str, d: D, a: S, b: S, c: S) -> Self;

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

    /// `ISETP.cmp.boolop.itype pu, a, b, pp` with the predicate operands set
    /// by the caller (`pp` defaults to PT).
    fn isetp(self, cmp: &str, signed: bool, a: S, b: S) -> Self;

    /// `SEL d, a, b, p` (`b` may be immediate; `!p` with `negate`).
    fn sel(self, d: D, a: S, b: S, p: VReg, negate: bool) -> Self;

    /// `MOV d, a` (`a` register or immediate).
    fn mov(self, d: D, a: S) -> Self;

    /// A one-source XU operation: `POPC`, `BREV` (form `_R`).
    fn xu1(self, op: &str, d: D, b: S) -> Self;

    /// `FLO.itype d, b`: the index of the highest 1 bit (of `~b` for a
    /// negative `b` with `.S32`), 0xFFFFFFFF where there is none.
    fn flo(self, signed: bool, d: D, b: S) -> Self;

    /// `PRMT d, a, b, selector` (selector immediate).
    fn prmt(self, d: D, a: S, b: S, sel: u32) -> Self;
}

impl Pieces for Bundle {
    fn src(self, field: &str, s: S) -> Bundle {
        match s {
            S::Lo(v) => self.use_(field, v),
            S::Hi(v) => self.use_hi(field, v),
            S::Z => self.set(field, RZ_),
            S::Imm(k) => self.set(field, k as u64),
        }
    }

    fn dst(self, field: &str, d: D) -> Bundle {
        match d {
            D::Lo(v) => self.def(field, v),
            D::Hi(v) => self.def_hi(field, v),
            D::T(v) => self.temp(field, v),
            D::TH(v) => self.temp_hi(field, v),
            D::Z => self.set(field, RZ_),
        }
    }

    fn lop3(self, d: D, a: S, b: S, c: S, lut: u8) -> Bundle {
        let (form, bf) = if b.is_imm() { (forms::LOP3_RIR, "vb") } else { (forms::LOP3_RRR, "rb") };
        self.inst(form).dst("rd", d).src("ra", a).src(bf, b).src("rc", c).set("lut", lut as u64).set("pp", PT_).set("pp.not", 1)
    }

    fn shf(self, left: bool, hi: bool, wrap: bool, itype: &str, d: D, a: S, b: S, c: S) -> Bundle {
        let (form, bf, cf) = if b.is_imm() {
            (forms::SHF_RIR, "vb", "rc")
        } else if c.is_imm() {
            (forms::SHF_RRI, "rb", "vc")
        } else {
            (forms::SHF_RRR, "rb", "rc")
        };
        self.inst(form)
            .named("direction", if left { "L" } else { "R" })
            .named("lohi", if hi { "HI" } else { "LO" })
            .named("cwmod", if wrap { "WRAP" } else { "CLAMP" })
            .named("itype", itype)
            .dst("rd", d)
            .src("ra", a)
            .src(bf, b)
            .src(cf, c)
    }

    fn imad(self, hi: bool, signed: bool, d: D, a: S, b: S, c: S) -> Bundle {
        let (form, bf, cf) = if b.is_imm() {
            (forms::IMAD_RIR, "vb", "rc")
        } else if c.is_imm() {
            (forms::IMAD_RRI, "rb", "vc")
        } else {
            (forms::IMAD_RRR, "rb", "rc")
        };
        let mut bu = self.inst(form).named("itype", if signed { "S32" } else { "U32" });
        if hi {
            bu = bu.named("lohi", "HI").named("ext", "X");
        }
        bu.dst("rd", d).src("ra", a).src(bf, b).src(cf, c)
    }

    fn imad_wide(self, signed: bool, d: D, a: S, b: S, c: S) -> Bundle {
        let (form, bf) = if b.is_imm() { (forms::IMAD_WIDE_RIR, "vb") } else { (forms::IMAD_WIDE_RRR, "rb") };
        self.inst(form).named("itype", if signed { "S32" } else { "U32" }).dst("rd", d).src("ra", a).src(bf, b).src("rc", c)
    }

    fn imul_hi(self, signed: bool, d: D, a: S, b: S) -> Bundle {
        let (form, bf) = if b.is_imm() { (forms::IMUL_RI, "vb") } else { (forms::IMUL_RR, "rb") };
        self.inst(form).named("lohi", "HI").named("itype", if signed { "S32" } else { "U32" }).dst("rd", d).src("ra", a).src(bf, b)
    }

    fn iadd(self, x: bool, d: D, a: S, neg_a: bool, b: S, neg_b: bool) -> Bundle {
        let (form, bf) = if b.is_imm() { (forms::IADD_RI, "vb") } else { (forms::IADD_RR, "rb") };
        let mut bu = self.inst(form);
        if x {
            bu = bu.named("ext", "X");
        }
        bu = bu.dst("rd", d).src("ra", a).set("ra.neg", neg_a as u64).src(bf, b);
        if neg_b {
            bu = bu.set("rb.neg", 1);
        }
        bu
    }

    fn isetp(self, cmp: &str, signed: bool, a: S, b: S) -> Bundle {
        let (form, bf) = if b.is_imm() { (forms::ISETP_RI, "vb") } else { (forms::ISETP_RR, "rb") };
        self.inst(form)
            .named("compop", cmp)
            .named("boolop", "AND")
            .named("itype", if signed { "S32" } else { "U32" })
            .set("pp", PT_)
            .src("ra", a)
            .src(bf, b)
    }

    fn sel(self, d: D, a: S, b: S, p: VReg, negate: bool) -> Bundle {
        let (form, bf) = if b.is_imm() { (forms::SEL_RI, "vb") } else { (forms::SEL_RR, "rb") };
        self.inst(form).dst("rd", d).src("ra", a).src(bf, b).use_("pp", p).set("pp.not", negate as u64)
    }

    fn mov(self, d: D, a: S) -> Bundle {
        let (form, f) = if a.is_imm() { (forms::MOV_I, "vb") } else { (forms::MOV_R, "rb") };
        self.inst(form).dst("rd", d).src(f, a)
    }

    fn xu1(self, op: &str, d: D, b: S) -> Bundle {
        let form = match op {
            "POPC" => forms::POPC_R,
            "BREV" => forms::BREV_R,
            _ => panic!("xu1: {}", op),
        };
        self.inst(form).dst("rd", d).src("rb", b)
    }

    fn flo(self, signed: bool, d: D, b: S) -> Bundle {
        self.inst(forms::FLO_R).named("itype", if signed { "S32" } else { "U32" }).dst("rd", d).src("rb", b)
    }

    fn prmt(self, d: D, a: S, b: S, sel: u32) -> Bundle {
        self.inst(forms::PRMT_RRI).named("mode", "IDX").dst("rd", d).src("ra", a).src("rb", b).set("vc", sel as u64)
    }
}
