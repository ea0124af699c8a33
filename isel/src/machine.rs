//! Constructors of machine instructions, called by the ISLE rules through
//! the `Context` glue (`context.rs`). Each pushes one allocator-level
//! instruction onto the current lowering and returns its result register.
//! Field names are those of the ISA description (`ursa isa FORM` lists them).

use ursa_emit::forms;

use crate::lower::{CmpOp, Lower, Signed};
use crate::vcode::{Bundle, Class, MInst, VReg};
use ursa_emit::forms::{IADD_RI, IADD_RR, ISETP_RI, ISETP_RR, LOP3_RIR, MOV_I, MOV_R, SEL_RI, SEL_RR, SGXT_RI, SHF_RIR};
use ursa_emit::mods;
use ursa_emit::optypes::ISETP;
use ursa_emit::typed::{P, R};

/// LOP3 truth-table inputs: the tables of `a`, `b` and `c` themselves.
pub const LUT_A: u8 = 0xF0;
pub const LUT_B: u8 = 0xCC;
pub const LUT_C: u8 = 0xAA;

impl Lower<'_> {
    /// Pushes a finished bundle onto the current lowering.
    pub fn emit_b(&mut self, b: Bundle) {
        self.push_boxed(b.build_boxed());
    }
}

/// ISETP's `.compop` for a comparison.
pub(crate) fn compop(op: &CmpOp) -> mods::CompOp {
    match op {
        CmpOp::EQ => mods::CompOp::EQ,
        CmpOp::NE => mods::CompOp::NE,
        CmpOp::LT => mods::CompOp::LT,
        CmpOp::LE => mods::CompOp::LE,
        CmpOp::GT => mods::CompOp::GT,
        CmpOp::GE => mods::CompOp::GE,
    }
}

/// `.S32` / `.U32`.
pub(crate) fn signed_itype(s: &Signed) -> mods::IType {
    match s {
        Signed::S32 => mods::IType::S32,
        Signed::U32 => mods::IType::U32,
    }
}

impl Lower<'_> {
    // ---- moves and constants ------------------------------------------------

    pub fn mov_imm(&mut self, k: u32) -> VReg {
        let d = self.temp(Class::R);
        self.emit_b(Bundle::new().inst(forms::MOV_I).def(MOV_I::RD, d).set(MOV_I::VB, k as u64));
        d
    }

    pub fn mov_imm64(&mut self, k: u64) -> VReg {
        let d = self.temp(Class::RPair);
        self.emit_b(
            Bundle::new()
                .inst(forms::MOV_I)
                .def(MOV_I::RD, d)
                .set(MOV_I::VB, k & 0xffff_ffff)
                .inst(forms::MOV_I)
                .def_hi(MOV_I::RD, d)
                .set(MOV_I::VB, k >> 32),
        );
        d
    }

    pub fn lo32(&mut self, a: VReg) -> VReg {
        let d = self.temp(Class::R);
        let m = self.lo32_into(a, d);
        self.push(m);
        d
    }

    /// `MOV d, a.lo` as an instruction (for callers that own `d`).
    pub fn lo32_into(&self, a: VReg, d: VReg) -> MInst {
        Bundle::new().inst(forms::MOV_R).def(MOV_R::RD, d).use_(MOV_R::RB, a).build()
    }

    pub fn hi32(&mut self, a: VReg) -> VReg {
        let d = self.temp(Class::R);
        self.emit_b(Bundle::new().inst(forms::MOV_R).def(MOV_R::RD, d).use_hi(MOV_R::RB, a));
        d
    }

    pub fn pair(&mut self, lo: VReg, hi: VReg) -> VReg {
        let d = self.temp(Class::RPair);
        self.emit_b(
            Bundle::new()
                .inst(forms::MOV_R)
                .def(MOV_R::RD, d)
                .use_(MOV_R::RB, lo)
                .inst(forms::MOV_R)
                .def_hi(MOV_R::RD, d)
                .use_(MOV_R::RB, hi),
        );
        d
    }

    // ---- integer ALU ----------------------------------------------------------

    pub fn iadd_rr(&mut self, a: VReg, b: VReg) -> VReg {
        let d = self.temp(Class::R);
        self.emit_b(Bundle::new().inst(forms::IADD_RR).def(IADD_RR::RD, d).use_(IADD_RR::RA, a).use_(IADD_RR::RB, b));
        d
    }

    pub fn iadd_ri(&mut self, a: VReg, k: u32) -> VReg {
        let d = self.temp(Class::R);
        self.emit_b(Bundle::new().inst(forms::IADD_RI).def(IADD_RI::RD, d).use_(IADD_RI::RA, a).set(IADD_RI::VB, k as u64));
        d
    }

    pub fn isub_rr(&mut self, a: VReg, b: VReg) -> VReg {
        let d = self.temp(Class::R);
        self.emit_b(
            Bundle::new().inst(forms::IADD_RR).def(IADD_RR::RD, d).use_(IADD_RR::RA, a).use_(IADD_RR::RB, b).set(IADD_RR::RB_NEG, true),
        );
        d
    }

    pub fn ineg_r(&mut self, a: VReg) -> VReg {
        let d = self.temp(Class::R);
        self.emit_b(
            Bundle::new().inst(forms::IADD_RR).def(IADD_RR::RD, d).set(IADD_RR::RA, R::Z).use_(IADD_RR::RB, a).set(IADD_RR::RB_NEG, true),
        );
        d
    }

    /// 64-bit `a ± b`: `IADD d.lo, c, a.lo, ±b.lo` + `IADD.X d.hi, a.hi, ±b.hi, c`.
    fn add64(&mut self, a: VReg, b: VReg, neg: bool) -> VReg {
        let d = self.temp(Class::RPair);
        let c = self.temp(Class::P);
        self.emit_b(
            Bundle::new()
                .inst(forms::IADD_RR)
                .def(IADD_RR::RD, d)
                .temp(IADD_RR::PU, c)
                .use_(IADD_RR::RA, a)
                .use_(IADD_RR::RB, b)
                .set(IADD_RR::RB_NEG, neg)
                .inst(forms::IADD_RR)
                .set(IADD_RR::EXT, mods::IExt::X)
                .def_hi(IADD_RR::RD, d)
                .use_hi(IADD_RR::RA, a)
                .use_hi(IADD_RR::RB, b)
                .set(IADD_RR::RB_NEG, neg)
                .use_(IADD_RR::PP, c)
                .set(IADD_RR::PP_NOT, false),
        );
        d
    }

    pub fn iadd64_rr(&mut self, a: VReg, b: VReg) -> VReg {
        self.add64(a, b, false)
    }

    pub fn isub64_rr(&mut self, a: VReg, b: VReg) -> VReg {
        self.add64(a, b, true)
    }

    pub fn iadd64_ri(&mut self, a: VReg, k: u64) -> VReg {
        let d = self.temp(Class::RPair);
        let c = self.temp(Class::P);
        self.emit_b(
            Bundle::new()
                .inst(forms::IADD_RI)
                .def(IADD_RI::RD, d)
                .temp(IADD_RI::PU, c)
                .use_(IADD_RI::RA, a)
                .set(IADD_RI::VB, k & 0xffff_ffff)
                .inst(forms::IADD_RI)
                .set(IADD_RI::EXT, mods::IExt::X)
                .def_hi(IADD_RI::RD, d)
                .use_hi(IADD_RI::RA, a)
                .set(IADD_RI::VB, k >> 32)
                .use_(IADD_RI::PP, c)
                .set(IADD_RI::PP_NOT, false),
        );
        d
    }

    fn isetp_base(b: Bundle, op: &CmpOp, s: &Signed) -> Bundle {
        b.set(ISETP::COMPOP, compop(op)).set(ISETP::BOOLOP, mods::BoolOp::AND).set(ISETP::ITYPE, signed_itype(s)).set(ISETP::PP, P::T)
    }

    pub fn isetp_rr(&mut self, op: &CmpOp, s: &Signed, a: VReg, b: VReg) -> VReg {
        let d = self.temp(Class::P);
        let bu =
            Self::isetp_base(Bundle::new().inst(forms::ISETP_RR), op, s).def(ISETP_RR::PU, d).use_(ISETP_RR::RA, a).use_(ISETP_RR::RB, b);
        self.emit_b(bu);
        d
    }

    pub fn isetp_ri(&mut self, op: &CmpOp, s: &Signed, a: VReg, k: u32) -> VReg {
        let d = self.temp(Class::P);
        let bu = Self::isetp_base(Bundle::new().inst(forms::ISETP_RI), op, s)
            .def(ISETP_RI::PU, d)
            .use_(ISETP_RI::RA, a)
            .set(ISETP_RI::VB, k as u64);
        self.emit_b(bu);
        d
    }

    /// 64-bit compare: the low words unsigned, then `.X` on the high words,
    /// which takes the low result where the high words are equal.
    pub fn isetp64_rr(&mut self, op: &CmpOp, s: &Signed, a: VReg, b: VReg) -> VReg {
        let d = self.temp(Class::P);
        let t = self.temp(Class::P);
        let b1 = Self::isetp_base(Bundle::new().inst(forms::ISETP_RR), op, &Signed::U32)
            .temp(ISETP_RR::PU, t)
            .use_(ISETP_RR::RA, a)
            .use_(ISETP_RR::RB, b);
        let b2 = Self::isetp_base(b1.inst(forms::ISETP_RR), op, s)
            .set(ISETP_RR::EXT, mods::IExt::X)
            .def(ISETP_RR::PU, d)
            .use_hi(ISETP_RR::RA, a)
            .use_hi(ISETP_RR::RB, b)
            .use_(ISETP_RR::PQ, t)
            .set(ISETP_RR::PQ_NOT, false);
        self.emit_b(b2);
        d
    }

    pub fn isetp64_ri(&mut self, op: &CmpOp, s: &Signed, a: VReg, k: u64) -> VReg {
        let d = self.temp(Class::P);
        let t = self.temp(Class::P);
        let b1 = Self::isetp_base(Bundle::new().inst(forms::ISETP_RI), op, &Signed::U32)
            .temp(ISETP_RI::PU, t)
            .use_(ISETP_RI::RA, a)
            .set(ISETP_RI::VB, k & 0xffff_ffff);
        let b2 = Self::isetp_base(b1.inst(forms::ISETP_RI), op, s)
            .set(ISETP_RI::EXT, mods::IExt::X)
            .def(ISETP_RI::PU, d)
            .use_hi(ISETP_RI::RA, a)
            .set(ISETP_RI::VB, k >> 32)
            .use_(ISETP_RI::PQ, t)
            .set(ISETP_RI::PQ_NOT, false);
        self.emit_b(b2);
        d
    }

    pub fn sel_rr(&mut self, a: VReg, b: VReg, c: VReg) -> VReg {
        let d = self.temp(Class::R);
        self.emit_b(Bundle::new().inst(forms::SEL_RR).def(SEL_RR::RD, d).use_(SEL_RR::RA, a).use_(SEL_RR::RB, b).use_(SEL_RR::PP, c));
        d
    }

    pub fn sel_ri(&mut self, a: VReg, k: u32, c: VReg) -> VReg {
        let d = self.temp(Class::R);
        self.emit_b(Bundle::new().inst(forms::SEL_RI).def(SEL_RI::RD, d).use_(SEL_RI::RA, a).set(SEL_RI::VB, k as u64).use_(SEL_RI::PP, c));
        d
    }

    pub fn sel64_rr(&mut self, a: VReg, b: VReg, c: VReg) -> VReg {
        let d = self.temp(Class::RPair);
        self.emit_b(
            Bundle::new()
                .inst(forms::SEL_RR)
                .def(SEL_RR::RD, d)
                .use_(SEL_RR::RA, a)
                .use_(SEL_RR::RB, b)
                .use_(SEL_RR::PP, c)
                .inst(forms::SEL_RR)
                .def_hi(SEL_RR::RD, d)
                .use_hi(SEL_RR::RA, a)
                .use_hi(SEL_RR::RB, b)
                .use_(SEL_RR::PP, c),
        );
        d
    }

    /// LOP3 with one register, an immediate and RZ: `d = lut(a, k, 0)`.
    pub fn lop3_ri(&mut self, a: VReg, k: u32, lut: u8) -> VReg {
        let d = self.temp(Class::R);
        self.emit_b(
            Bundle::new()
                .inst(forms::LOP3_RIR)
                .def(LOP3_RIR::RD, d)
                .use_(LOP3_RIR::RA, a)
                .set(LOP3_RIR::VB, k as u64)
                .set(LOP3_RIR::RC, R::Z)
                .set(LOP3_RIR::LUT, lut as u64)
                .set(LOP3_RIR::PP, P::T),
        );
        d
    }

    pub fn zext_bits(&mut self, a: VReg, n: u32) -> VReg {
        if n >= 32 {
            return a;
        }
        self.lop3_ri(a, ((1u64 << n) - 1) as u32, LUT_A & LUT_B)
    }

    pub fn sext_bits(&mut self, a: VReg, n: u32) -> VReg {
        if n >= 32 {
            return a;
        }
        let d = self.temp(Class::R);
        self.emit_b(Bundle::new().inst(forms::SGXT_RI).def(SGXT_RI::RD, d).use_(SGXT_RI::RA, a).set(SGXT_RI::VB, n as u64));
        d
    }

    pub fn sshr_ri(&mut self, a: VReg, n: u32) -> VReg {
        let d = self.temp(Class::R);
        self.emit_b(
            Bundle::new()
                .inst(forms::SHF_RIR)
                .set(SHF_RIR::DIRECTION, mods::SHFDir::R)
                .set(SHF_RIR::LOHI, mods::LOHI::HI)
                .set(SHF_RIR::ITYPE, mods::SHFDType::S32)
                .def(SHF_RIR::RD, d)
                .set(SHF_RIR::RA, R::Z)
                .set(SHF_RIR::VB, n as u64)
                .use_(SHF_RIR::RC, a),
        );
        d
    }

    /// A 64-bit table index as 32 bits, saturated to 0xFFFFFFFF when the high
    /// word is nonzero (no table has that many entries).
    pub fn clamp_index64(&mut self, a: VReg) -> VReg {
        let lo = self.lo32(a);
        let hi = self.hi32(a);
        let big = self.isetp_ri(&CmpOp::NE, &Signed::U32, hi, 0);
        let m1 = self.mov_imm(u32::MAX);
        self.sel_rr(m1, lo, big)
    }
}
