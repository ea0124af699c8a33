//! Constructors for `isle/lower/float.isle`, `fcmp.isle` and `fconv.isle`:
//! f32 and f64 constants, arithmetic, comparisons and conversions
//! (docs/float.md). f32 values are single registers and go through the
//! extension ISA's FADD/FMUL/FFMA/FMNMX/FSETP; f64 values are pairs and go
//! through the DALU (DADD/DMUL/DFMA/DMNMX/DSETP). FRND, F2F, I2F and F2I
//! take both, selected by their `.ftype`.

use cranelift_codegen::ir::condcodes::FloatCC;
use cranelift_codegen::ir::immediates::{Ieee32, Ieee64};
use cranelift_codegen::ir::{types, InstructionData, TrapCode, Type, Value, ValueDef};
use ursa_emit::{forms, FormId};

use crate::lower::{FminmaxNan, Lower, Pred, Rnd, Signed};
use crate::machine::{LUT_A, LUT_B, LUT_C};
use crate::rules::ops::{Pieces, D, S};
use crate::vcode::{Bundle, Class, VReg};
use ursa_emit::forms::{BPT_I, F2F_R, F2I_R, FRND_R, I2F_R, LOP3_RIR, MOV_R, SEL_RI, SEL_RR};
use ursa_emit::forms::{DADD_RI, DADD_RR, DFMA_RIR, DFMA_RRI, DFMA_RRR, DMNMX_RI, DMNMX_RR, DMUL_RI, DMUL_RR, DSETP_RI, DSETP_RR};
use ursa_emit::forms::{FADD_RI, FADD_RR, FFMA_RIR, FFMA_RRI, FFMA_RRR, FMNMX_RI, FMNMX_RR, FMUL_RI, FMUL_RR, FSETP_RI, FSETP_RR};
use ursa_emit::mods;
use ursa_emit::mods::{FCMPOp, FPRound, FType, I2IDType, IntType, LOPOp};
use ursa_emit::optypes::{DADD, DFMA, DMNMX, DMUL, DSETP, FADD, FFMA, FMNMX, FMUL, FSETP, SEL};
use ursa_emit::typed::{Dst, Flag, Fld, Imm, Mod, Src};
use ursa_emit::typed::{P, R};

/// The fields of the two-source float forms these constructors choose
/// between (F* for f32, D* for f64).
const RD: [Fld<Dst<R>>; 8] = [FADD::RD, DADD::RD, FMUL::RD, DMUL::RD, FFMA::RD, DFMA::RD, FMNMX::RD, DMNMX::RD];
const RA: [Fld<Src<R>>; 8] = [FADD::RA, DADD::RA, FMUL::RA, DMUL::RA, FFMA::RA, DFMA::RA, FMNMX::RA, DMNMX::RA];
const RB: [Fld<Src<R>>; 10] = [
    FADD_RR::RB,
    DADD_RR::RB,
    FMUL_RR::RB,
    DMUL_RR::RB,
    FFMA_RRR::RB,
    DFMA_RRR::RB,
    FFMA_RRI::RB,
    DFMA_RRI::RB,
    FMNMX_RR::RB,
    DMNMX_RR::RB,
];
const RB_NEG: [Fld<Flag>; 4] = [FADD_RR::RB_NEG, DADD_RR::RB_NEG, FMUL_RR::RB_NEG, DMUL_RR::RB_NEG];
const RC: [Fld<Src<R>>; 4] = [FFMA_RRR::RC, DFMA_RRR::RC, FFMA_RIR::RC, DFMA_RIR::RC];
const VB: [Fld<Imm>; 8] = [FADD_RI::VB, DADD_RI::VB, FMUL_RI::VB, DMUL_RI::VB, FFMA_RIR::VB, DFMA_RIR::VB, FMNMX_RI::VB, DMNMX_RI::VB];
const VC: [Fld<Imm>; 2] = [FFMA_RRI::VC, DFMA_RRI::VC];
const MNMX_PP: [Fld<Src<P>>; 2] = [FMNMX::PP, DMNMX::PP];
const MNMX_PP_NOT: [Fld<Flag>; 2] = [FMNMX::PP_NOT, DMNMX::PP_NOT];
/// FSETP / DSETP.
const SETP_CMP: [Fld<Mod<FCMPOp>>; 2] = [FSETP::CMP, DSETP::CMP];
pub(crate) const SETP_LOP: [Fld<Mod<LOPOp>>; 2] = [FSETP::LOP, DSETP::LOP];
const SETP_PU: [Fld<Dst<P>>; 2] = [FSETP::PU, DSETP::PU];
const SETP_RA: [Fld<Src<R>>; 2] = [FSETP::RA, DSETP::RA];
pub(crate) const SETP_PP: [Fld<Src<P>>; 2] = [FSETP::PP, DSETP::PP];
pub(crate) const SETP_PP_NOT: [Fld<Flag>; 2] = [FSETP::PP_NOT, DSETP::PP_NOT];
const SETP_RB: [Fld<Src<R>>; 2] = [FSETP_RR::RB, DSETP_RR::RB];
const SETP_VB: [Fld<Imm>; 2] = [FSETP_RI::VB, DSETP_RI::VB];

/// The sign bit of an f32, and of the high word of an f64.
const SIGN: u64 = 0x8000_0000;
/// The canonical NaNs (quiet, positive, zero payload).
const CANON_NAN32: u64 = 0x7FC0_0000;
const CANON_NAN64_HI: u64 = 0x7FF8_0000;

fn is64(ty: Type) -> bool {
    ty == types::F64 || ty == types::I64
}

fn class(ty: Type) -> Class {
    if is64(ty) {
        Class::RPair
    } else {
        Class::R
    }
}

fn ftype(ty: Type) -> FType {
    if is64(ty) {
        FType::F64
    } else {
        FType::F32
    }
}

/// The `itype` of I2F / F2I for an integer of type `ty` (32 or 64 bits after
/// extension) and signedness `s`.
fn int_type(ty: Type, s: &Signed) -> IntType {
    match (is64(ty), s) {
        (false, Signed::S32) => IntType::S32,
        (false, Signed::U32) => IntType::U32,
        (true, Signed::S32) => IntType::S64,
        (true, Signed::U32) => IntType::U64,
    }
}

fn rnd_mode(r: &Rnd) -> FPRound {
    match r {
        Rnd::RN => FPRound::RN,
        Rnd::RM => FPRound::RM,
        Rnd::RP => FPRound::RP,
        Rnd::RZ => FPRound::RZ,
    }
}

/// The FSETP/DSETP operator of a CLIF float condition. `ne` is unordered
/// (`.NEU`); `one` is the ordered `.NE`.
pub fn fcmp_op(cc: FloatCC) -> FCMPOp {
    match cc {
        FloatCC::Ordered => FCMPOp::NUM,
        FloatCC::Unordered => FCMPOp::NAN,
        FloatCC::Equal => FCMPOp::EQ,
        FloatCC::NotEqual => FCMPOp::NEU,
        FloatCC::OrderedNotEqual => FCMPOp::NE,
        FloatCC::UnorderedOrEqual => FCMPOp::EQU,
        FloatCC::LessThan => FCMPOp::LT,
        FloatCC::LessThanOrEqual => FCMPOp::LE,
        FloatCC::GreaterThan => FCMPOp::GT,
        FloatCC::GreaterThanOrEqual => FCMPOp::GE,
        FloatCC::UnorderedOrLessThan => FCMPOp::LTU,
        FloatCC::UnorderedOrLessThanOrEqual => FCMPOp::LEU,
        FloatCC::UnorderedOrGreaterThan => FCMPOp::GTU,
        FloatCC::UnorderedOrGreaterThanOrEqual => FCMPOp::GEU,
    }
}

/// The second operand of FMNMX / DMNMX.
#[derive(Clone, Copy)]
enum MnmxB {
    Reg(VReg),
    /// The immediate field (`fimm`).
    Imm(u32),
}

/// What a NaN result of `fmin`/`fmax` is ([`Lower::nan_if`]).
enum NanResult {
    /// These bits (f32) or this high word with a zero low word (f64).
    Const(u64),
    /// The canonical NaN with the sign bit of this register.
    Signed(VReg),
}

/// A comparison's second operand.
enum FSrc {
    Reg(VReg),
    /// A value exactly representable in the compared type.
    Const(f64),
}

impl Lower<'_> {
    pub fn ieee32_bits(&mut self, k: Ieee32) -> u32 {
        k.bits()
    }
    pub fn ieee64_bits(&mut self, k: Ieee64) -> u64 {
        k.bits()
    }

    /// A two-source float instruction `form32`/`form64` on `a`, `b`.
    fn fbin(&mut self, ty: Type, f32_form: FormId, f64_form: FormId, a: VReg, b: VReg, negb: bool) -> VReg {
        let d = self.temp(class(ty));
        let form = if is64(ty) { f64_form } else { f32_form };
        self.emit_b(Bundle::new().inst(form).def(RD, d).use_(RA, a).use_(RB, b).set(RB_NEG, negb));
        d
    }

    pub fn fadd_rr(&mut self, ty: Type, a: VReg, b: VReg, neg: bool) -> VReg {
        self.fbin(ty, forms::FADD_RR, forms::DADD_RR, a, b, neg)
    }

    /// The immediate field of a float constant (`fimm` in float.isle).
    pub fn fimm(&mut self, v: Value) -> Option<u32> {
        let v = self.f.dfg.resolve_aliases(v);
        let ValueDef::Result(inst, _) = self.f.dfg.value_def(v) else { return None };
        match self.f.dfg.insts[inst] {
            InstructionData::UnaryIeee32 { imm, .. } => Some(imm.bits()),
            InstructionData::UnaryIeee64 { imm, .. } if imm.bits() & 0xffff_ffff == 0 => Some((imm.bits() >> 32) as u32),
            _ => None,
        }
    }

    pub fn fimm_neg(&mut self, _ty: Type, k: u32) -> u32 {
        k ^ SIGN as u32
    }

    pub fn fadd_ri(&mut self, ty: Type, a: VReg, k: u32) -> VReg {
        let d = self.temp(class(ty));
        let form = if is64(ty) { forms::DADD_RI } else { forms::FADD_RI };
        self.emit_b(Bundle::new().inst(form).def(RD, d).use_(RA, a).set(VB, k as u64));
        d
    }

    pub fn fmul_ri(&mut self, ty: Type, a: VReg, k: u32) -> VReg {
        let d = self.temp(class(ty));
        let form = if is64(ty) { forms::DMUL_RI } else { forms::FMUL_RI };
        self.emit_b(Bundle::new().inst(form).def(RD, d).use_(RA, a).set(VB, k as u64));
        d
    }

    pub fn ffma_rri(&mut self, ty: Type, a: VReg, b: VReg, k: u32) -> VReg {
        let d = self.temp(class(ty));
        let form = if is64(ty) { forms::DFMA_RRI } else { forms::FFMA_RRI };
        self.emit_b(Bundle::new().inst(form).def(RD, d).use_(RA, a).use_(RB, b).set(VC, k as u64));
        d
    }

    pub fn ffma_rir(&mut self, ty: Type, a: VReg, k: u32, c: VReg) -> VReg {
        let d = self.temp(class(ty));
        let form = if is64(ty) { forms::DFMA_RIR } else { forms::FFMA_RIR };
        self.emit_b(Bundle::new().inst(form).def(RD, d).use_(RA, a).set(VB, k as u64).use_(RC, c));
        d
    }

    pub fn fmul_rr(&mut self, ty: Type, a: VReg, b: VReg) -> VReg {
        self.fbin(ty, forms::FMUL_RR, forms::DMUL_RR, a, b, false)
    }

    pub fn ffma_rrr(&mut self, ty: Type, a: VReg, b: VReg, c: VReg) -> VReg {
        let d = self.temp(class(ty));
        let form = if is64(ty) { forms::DFMA_RRR } else { forms::FFMA_RRR };
        self.emit_b(Bundle::new().inst(form).def(RD, d).use_(RA, a).use_(RB, b).use_(RC, c));
        d
    }

    /// `LOP3 d, a, SIGN, c, lut` on the word holding the sign (the high word
    /// of an f64, whose low word is copied).
    fn sign_op(&mut self, ty: Type, a: VReg, c: Option<VReg>, lut: u8) -> VReg {
        let d = self.temp(class(ty));
        let b = if is64(ty) {
            let b = Bundle::new()
                .inst(forms::MOV_R)
                .def(MOV_R::RD, d)
                .use_(MOV_R::RB, a)
                .inst(forms::LOP3_RIR)
                .def_hi(LOP3_RIR::RD, d)
                .use_hi(LOP3_RIR::RA, a);
            match c {
                Some(c) => b.use_hi(LOP3_RIR::RC, c),
                None => b.set(LOP3_RIR::RC, R::Z),
            }
        } else {
            let b = Bundle::new().inst(forms::LOP3_RIR).def(LOP3_RIR::RD, d).use_(LOP3_RIR::RA, a);
            match c {
                Some(c) => b.use_(LOP3_RIR::RC, c),
                None => b.set(LOP3_RIR::RC, R::Z),
            }
        };
        self.emit_b(b.set(LOP3_RIR::VB, SIGN).set(LOP3_RIR::LUT, lut as u64).set(LOP3_RIR::PP, P::T));
        d
    }

    pub fn fneg_r(&mut self, ty: Type, a: VReg) -> VReg {
        self.sign_op(ty, a, None, LUT_A ^ LUT_B)
    }

    pub fn fabs_r(&mut self, ty: Type, a: VReg) -> VReg {
        self.sign_op(ty, a, None, LUT_A & !LUT_B)
    }

    pub fn fcopysign_rr(&mut self, ty: Type, a: VReg, b: VReg) -> VReg {
        self.sign_op(ty, a, Some(b), (LUT_A & !LUT_B) | (LUT_C & LUT_B))
    }

    /// FSETP/DSETP `pu = (a cmp b) lop pp`.
    fn fsetp(&mut self, ty: Type, cmp: FCMPOp, a: VReg, b: FSrc, lop: Option<(LOPOp, Pred)>) -> Pred {
        let p = self.temp(Class::P);
        let mut bu = Bundle::new();
        match b {
            FSrc::Reg(r) => {
                bu = bu.inst(if is64(ty) { forms::DSETP_RR } else { forms::FSETP_RR }).use_(SETP_RB, r);
            }
            FSrc::Const(k) if !is64(ty) => {
                bu = bu.inst(forms::FSETP_RI).set(SETP_VB, (k as f32).to_bits() as u64);
            }
            FSrc::Const(k) if k.to_bits() & 0xffff_ffff == 0 => {
                // F64Imm holds the high word (erratum E9).
                bu = bu.inst(forms::DSETP_RI).set(SETP_VB, k.to_bits() >> 32);
            }
            FSrc::Const(k) => {
                let r = self.mov_imm64(k.to_bits());
                bu = bu.inst(forms::DSETP_RR).use_(SETP_RB, r);
            }
        }
        bu = bu.set(SETP_CMP, cmp).def(SETP_PU, p).use_(SETP_RA, a);
        bu = match lop {
            None => bu.set(SETP_LOP, LOPOp::AND).set(SETP_PP, P::T),
            Some((op, q)) => bu.set(SETP_LOP, op).use_(SETP_PP, q),
        };
        self.emit_b(bu);
        p
    }

    /// Records an unsupported float type (f16, f128: operands only; results
    /// of those types are refused by the driver) so that no rule emits code
    /// for it; `true` if `ty` is f32 or f64.
    fn float_ok(&mut self, ty: Type) -> bool {
        if ty == types::F32 || ty == types::F64 {
            return true;
        }
        self.unsupported(format!("type {} is not supported", ty));
        false
    }

    pub fn fsetp_ri(&mut self, ty: Type, cc: &FloatCC, a: VReg, k: u32) -> Pred {
        self.float_ok(ty);
        let p = self.temp(Class::P);
        let form = if is64(ty) { forms::DSETP_RI } else { forms::FSETP_RI };
        self.emit_b(
            Bundle::new()
                .inst(form)
                .set(SETP_CMP, fcmp_op(*cc))
                .set(SETP_LOP, LOPOp::AND)
                .set(SETP_PP, P::T)
                .def(SETP_PU, p)
                .use_(SETP_RA, a)
                .set(SETP_VB, k as u64),
        );
        p
    }

    pub fn fsetp_rr(&mut self, ty: Type, cc: &FloatCC, a: VReg, b: VReg) -> Pred {
        self.float_ok(ty);
        self.fsetp(ty, fcmp_op(*cc), a, FSrc::Reg(b), None)
    }

    /// `fmin` (`min`) / `fmax` of `a` and `b` (`docs/float.md`, "NaN and
    /// signed-zero rules"). Without a NaN input: FMNMX / DMNMX, which order
    /// -0 < +0 (erratum E39). With one, the result follows the compile
    /// setting [`FminmaxNan`].
    pub fn fminmax_rr(&mut self, ty: Type, min: bool, a: VReg, b: VReg) -> VReg {
        self.fminmax(ty, min, a, MnmxB::Reg(b))
    }

    /// The same with the immediate field `k` of a constant (`fimm`); with
    /// [`FminmaxNan::FirstOperand`] the rules use it only where `k` is not a
    /// NaN ([`Lower::fimm_minmax`]), so its place in the CLIF operands does
    /// not matter.
    pub fn fminmax_ri(&mut self, ty: Type, min: bool, a: VReg, k: u32) -> VReg {
        self.fminmax(ty, min, a, MnmxB::Imm(k))
    }

    /// `fimm` for the operand of `fmin`/`fmax`: any constant when a NaN
    /// result does not depend on the operands' order, else only one that is
    /// not a NaN.
    pub fn fimm_minmax(&mut self, v: Value) -> Option<u32> {
        let k = self.fimm(v)?;
        let nan = if self.f.dfg.value_type(v) == types::F64 {
            k & 0x7FF0_0000 == 0x7FF0_0000 && k & 0x000F_FFFF != 0
        } else {
            k & 0x7F80_0000 == 0x7F80_0000 && k & 0x007F_FFFF != 0
        };
        (self.fminmax_nan != FminmaxNan::FirstOperand || !nan).then_some(k)
    }

    fn fminmax(&mut self, ty: Type, min: bool, a: VReg, b: MnmxB) -> VReg {
        let wide = is64(ty);
        if !wide && self.fminmax_nan == FminmaxNan::FirstOperand {
            // FMNMX.NAN returns SrcB quieted if it is a NaN, else Ra quieted:
            // CLIF's first operand goes to SrcB. (An immediate is not a NaN.)
            let d = self.temp(Class::R);
            let bu = match b {
                MnmxB::Reg(b) => Bundle::new().inst(forms::FMNMX_RR).use_(FMNMX::RA, b).use_(FMNMX_RR::RB, a),
                MnmxB::Imm(k) => Bundle::new().inst(forms::FMNMX_RI).use_(FMNMX::RA, a).set(FMNMX_RI::VB, k as u64),
            };
            self.emit_b(bu.def(FMNMX::RD, d).set(FMNMX::NANMODE, mods::FMnMxNaN::NAN).set(FMNMX::PP, P::T).set(FMNMX::PP_NOT, !min));
            return d;
        }
        let nan = match b {
            MnmxB::Reg(b) => self.fsetp(ty, FCMPOp::NAN, a, FSrc::Reg(b), None),
            MnmxB::Imm(k) => self.fsetp_ri(ty, &FloatCC::Unordered, a, k),
        };
        let m = self.temp(class(ty));
        let bu = match b {
            MnmxB::Reg(b) => Bundle::new().inst(if wide { forms::DMNMX_RR } else { forms::FMNMX_RR }).use_(RB, b),
            MnmxB::Imm(k) => Bundle::new().inst(if wide { forms::DMNMX_RI } else { forms::FMNMX_RI }).set(VB, k as u64),
        };
        self.emit_b(bu.def(RD, m).use_(RA, a).set(MNMX_PP, P::T).set(MNMX_PP_NOT, !min));
        match self.fminmax_nan {
            FminmaxNan::Canonical => self.nan_if(ty, nan, m, NanResult::Const(if wide { CANON_NAN64_HI } else { CANON_NAN32 })),
            FminmaxNan::FirstOperand => {
                // DADD's NaN order is SrcB, then Ra (erratum E17): the sum is
                // CLIF's first NaN operand, quieted, whenever one is a NaN.
                let q = self.temp(Class::RPair);
                let bu = match b {
                    MnmxB::Reg(b) => Bundle::new().inst(forms::DADD_RR).use_(DADD::RA, b).use_(DADD_RR::RB, a),
                    MnmxB::Imm(k) => Bundle::new().inst(forms::DADD_RI).use_(DADD::RA, a).set(DADD_RI::VB, k as u64),
                };
                self.emit_b(bu.def(DADD::RD, q));
                self.sel64_rr(q, m, nan)
            }
            FminmaxNan::X86 if min => {
                self.nan_if(ty, nan, m, NanResult::Const(if wide { CANON_NAN64_HI | SIGN } else { CANON_NAN32 | SIGN }))
            }
            FminmaxNan::X86 => {
                // The canonical NaN with the OR of both operands' signs:
                // (a | b) & SIGN on the (high) words; a constant's sign is
                // known.
                let s = self.temp(Class::R);
                let word = |v: VReg| if wide { S::Hi(v) } else { S::Lo(v) };
                let (c, lut) = match b {
                    MnmxB::Reg(b) => (word(b), (LUT_A | LUT_C) & LUT_B),
                    MnmxB::Imm(k) if k & SIGN as u32 != 0 => (S::Z, LUT_B),
                    MnmxB::Imm(_) => (S::Z, LUT_A & LUT_B),
                };
                self.emit_b(Bundle::new().lop3(D::Lo(s), word(a), S::Imm(SIGN as u32), c, lut));
                self.nan_if(ty, nan, m, NanResult::Signed(s))
            }
        }
    }

    /// `nan ? r : m`, with `r` a NaN: a constant, or the canonical NaN with
    /// the sign bit of a register (whose other bits are zero).
    fn nan_if(&mut self, ty: Type, nan: Pred, m: VReg, r: NanResult) -> VReg {
        let wide = is64(ty);
        let d = self.temp(class(ty));
        let mut bu = Bundle::new();
        if wide {
            bu = bu
                .inst(forms::SEL_RI)
                .def(SEL_RI::RD, d)
                .use_(SEL_RI::RA, m)
                .set(SEL_RI::VB, 0)
                .use_(SEL_RI::PP, nan)
                .set(SEL_RI::PP_NOT, true);
        }
        bu = match r {
            NanResult::Const(k) => {
                let bu = bu.inst(forms::SEL_RI);
                let bu = if wide { bu.def_hi(SEL_RI::RD, d).use_hi(SEL_RI::RA, m) } else { bu.def(SEL_RI::RD, d).use_(SEL_RI::RA, m) };
                bu.set(SEL_RI::VB, k)
            }
            NanResult::Signed(s) => {
                let canon = if wide { CANON_NAN64_HI } else { CANON_NAN32 };
                let u = self.temp(Class::R);
                self.emit_b(Bundle::new().lop3(D::Lo(u), S::Lo(s), S::Imm(canon as u32), S::Z, LUT_A | LUT_B));
                let bu = bu.inst(forms::SEL_RR);
                let bu = if wide { bu.def_hi(SEL_RR::RD, d).use_hi(SEL_RR::RA, m) } else { bu.def(SEL_RR::RD, d).use_(SEL_RR::RA, m) };
                bu.use_(SEL_RR::RB, u)
            }
        };
        self.emit_b(bu.use_(SEL::PP, nan).set(SEL::PP_NOT, true));
        d
    }

    pub fn frnd_r(&mut self, ty: Type, rnd: &Rnd, a: VReg) -> VReg {
        let d = self.temp(class(ty));
        self.emit_b(
            Bundle::new()
                .inst(forms::FRND_R)
                .set(FRND_R::FTYPE, ftype(ty))
                .set(FRND_R::RND, rnd_mode(rnd))
                .def(FRND_R::RD, d)
                .use_(FRND_R::RB, a),
        );
        d
    }

    pub fn f2f(&mut self, to: Type, from: Type, a: VReg) -> VReg {
        self.float_ok(from);
        let d = self.temp(class(to));
        self.emit_b(
            Bundle::new()
                .inst(forms::F2F_R)
                .set(F2F_R::RND, mods::FPRound::RN)
                .set(F2F_R::DTYPE, ftype(to))
                .set(F2F_R::SRCTYPE, ftype(from))
                .def(F2F_R::RD, d)
                .use_(F2F_R::RB, a),
        );
        d
    }

    pub fn i2f(&mut self, to: Type, from: Type, s: &Signed, a: VReg) -> VReg {
        let d = self.temp(class(to));
        let itype = int_type(from, s);
        self.emit_b(
            Bundle::new()
                .inst(forms::I2F_R)
                .set(I2F_R::RND, mods::FPRound::RN)
                .set(I2F_R::FTYPE, ftype(to))
                .set(I2F_R::ITYPE, itype)
                .def(I2F_R::RD, d)
                .use_(I2F_R::RB, a),
        );
        d
    }

    /// `F2I.RZ` into an integer of 32 or 64 bits (saturating, NaN → 0).
    fn f2i(&mut self, to: Type, s: &Signed, from: Type, a: VReg) -> VReg {
        self.float_ok(from);
        let d = self.temp(class(to));
        let itype = int_type(to, s);
        self.emit_b(
            Bundle::new()
                .inst(forms::F2I_R)
                .set(F2I_R::RND, mods::FPRound::RZ)
                .set(F2I_R::ITYPE, itype)
                .set(F2I_R::FTYPE, ftype(from))
                .def(F2I_R::RD, d)
                .use_(F2I_R::RB, a),
        );
        d
    }

    pub fn f2i_sat(&mut self, to: Type, s: &Signed, from: Type, a: VReg) -> VReg {
        let r = self.f2i(to, s, from, a);
        let bits = to.bits();
        if bits >= 32 {
            return r;
        }
        // i8 / i16: F2I saturates to 32 bits; clamp to the narrow range
        // (signed: one I2I.S8/.S16; unsigned: a minimum, as I2I would read
        // a result of 2^31 or more as negative).
        match s {
            Signed::S32 => self.i2i(if bits == 8 { &I2IDType::S8 } else { &I2IDType::S16 }, r),
            Signed::U32 => self.imnmx_ri(&Signed::U32, true, r, ((1u64 << bits) - 1) as u32),
        }
    }

    /// `@p BPT.TRAP code`.
    fn trap_on(&mut self, p: Pred, code: TrapCode) {
        self.emit_b(
            Bundle::new()
                .inst(forms::BPT_I)
                .set(BPT_I::MODE, mods::BptMode::TRAP)
                .set(BPT_I::CODE, code.as_raw().get() as u64)
                .use_(BPT_I::PG, p),
        );
    }

    pub fn f2i_trap(&mut self, to: Type, s: &Signed, from: Type, a: VReg) -> VReg {
        if !self.float_ok(from) {
            return a;
        }
        // NaN: bad_toint.
        let nan = self.fsetp(from, FCMPOp::NAN, a, FSrc::Reg(a), None);
        self.trap_on(nan, TrapCode::BAD_CONVERSION_TO_INTEGER);
        // Out of range: trunc(a) < MIN or > MAX, i.e. a <= MIN - 1 (or
        // a < MIN where MIN - 1 is not representable: then no value lies
        // between them) or a >= MAX + 1. Both bounds are powers of two or
        // exact small integers.
        let n = to.bits();
        let (min, hi_excl): (i128, i128) = match s {
            Signed::S32 => (-(1i128 << (n - 1)), 1i128 << (n - 1)),
            Signed::U32 => (0, 1i128 << n),
        };
        let lo_excl = min - 1;
        let exact = if is64(from) { (lo_excl as f64) as i128 == lo_excl } else { (lo_excl as f32) as i128 == lo_excl };
        let low = if exact {
            self.fsetp(from, FCMPOp::LE, a, FSrc::Const(lo_excl as f64), None)
        } else {
            self.fsetp(from, FCMPOp::LT, a, FSrc::Const(min as f64), None)
        };
        let ovf = self.fsetp(from, FCMPOp::GE, a, FSrc::Const(hi_excl as f64), Some((LOPOp::OR, low)));
        self.trap_on(ovf, TrapCode::INTEGER_OVERFLOW);
        self.f2i(to, s, from, a)
    }
}
