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

use crate::lower::{Lower, Pred, Rnd, Signed};
use crate::machine::{LUT_A, LUT_B, LUT_C, PT_, RZ_};
use crate::vcode::{Bundle, Class, VReg};

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

fn ftype(ty: Type) -> &'static str {
    if is64(ty) {
        "F64"
    } else {
        "F32"
    }
}

/// The `itype` of I2F / F2I for an integer of type `ty` (32 or 64 bits after
/// extension) and signedness `s`.
fn int_type(ty: Type, s: &Signed) -> &'static str {
    match (is64(ty), s) {
        (false, Signed::S32) => "S32",
        (false, Signed::U32) => "U32",
        (true, Signed::S32) => "S64",
        (true, Signed::U32) => "U64",
    }
}

fn rnd_name(r: &Rnd) -> &'static str {
    match r {
        Rnd::RN => "RN",
        Rnd::RM => "RM",
        Rnd::RP => "RP",
        Rnd::RZ => "RZ",
    }
}

/// The FSETP/DSETP operator of a CLIF float condition. `ne` is unordered
/// (`.NEU`); `one` is the ordered `.NE`.
pub fn fcmp_name(cc: FloatCC) -> &'static str {
    match cc {
        FloatCC::Ordered => "NUM",
        FloatCC::Unordered => "NAN",
        FloatCC::Equal => "EQ",
        FloatCC::NotEqual => "NEU",
        FloatCC::OrderedNotEqual => "NE",
        FloatCC::UnorderedOrEqual => "EQU",
        FloatCC::LessThan => "LT",
        FloatCC::LessThanOrEqual => "LE",
        FloatCC::GreaterThan => "GT",
        FloatCC::GreaterThanOrEqual => "GE",
        FloatCC::UnorderedOrLessThan => "LTU",
        FloatCC::UnorderedOrLessThanOrEqual => "LEU",
        FloatCC::UnorderedOrGreaterThan => "GTU",
        FloatCC::UnorderedOrGreaterThanOrEqual => "GEU",
    }
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
        self.emit_b(Bundle::new().inst(form).def("rd", d).use_("ra", a).use_("rb", b).set("rb.neg", negb as u64));
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
        self.emit_b(Bundle::new().inst(form).def("rd", d).use_("ra", a).set("vb", k as u64));
        d
    }

    pub fn fmul_ri(&mut self, ty: Type, a: VReg, k: u32) -> VReg {
        let d = self.temp(class(ty));
        let form = if is64(ty) { forms::DMUL_RI } else { forms::FMUL_RI };
        self.emit_b(Bundle::new().inst(form).def("rd", d).use_("ra", a).set("vb", k as u64));
        d
    }

    pub fn ffma_rri(&mut self, ty: Type, a: VReg, b: VReg, k: u32) -> VReg {
        let d = self.temp(class(ty));
        let form = if is64(ty) { forms::DFMA_RRI } else { forms::FFMA_RRI };
        self.emit_b(Bundle::new().inst(form).def("rd", d).use_("ra", a).use_("rb", b).set("vc", k as u64));
        d
    }

    pub fn ffma_rir(&mut self, ty: Type, a: VReg, k: u32, c: VReg) -> VReg {
        let d = self.temp(class(ty));
        let form = if is64(ty) { forms::DFMA_RIR } else { forms::FFMA_RIR };
        self.emit_b(Bundle::new().inst(form).def("rd", d).use_("ra", a).set("vb", k as u64).use_("rc", c));
        d
    }

    pub fn fmul_rr(&mut self, ty: Type, a: VReg, b: VReg) -> VReg {
        self.fbin(ty, forms::FMUL_RR, forms::DMUL_RR, a, b, false)
    }

    pub fn ffma_rrr(&mut self, ty: Type, a: VReg, b: VReg, c: VReg) -> VReg {
        let d = self.temp(class(ty));
        let form = if is64(ty) { forms::DFMA_RRR } else { forms::FFMA_RRR };
        self.emit_b(Bundle::new().inst(form).def("rd", d).use_("ra", a).use_("rb", b).use_("rc", c));
        d
    }

    /// `LOP3 d, a, SIGN, c, lut` on the word holding the sign (the high word
    /// of an f64, whose low word is copied).
    fn sign_op(&mut self, ty: Type, a: VReg, c: Option<VReg>, lut: u8) -> VReg {
        let d = self.temp(class(ty));
        let b = if is64(ty) {
            let b = Bundle::new().inst(forms::MOV_R).def("rd", d).use_("rb", a).inst(forms::LOP3_RIR).def_hi("rd", d).use_hi("ra", a);
            match c {
                Some(c) => b.use_hi("rc", c),
                None => b.set("rc", RZ_),
            }
        } else {
            let b = Bundle::new().inst(forms::LOP3_RIR).def("rd", d).use_("ra", a);
            match c {
                Some(c) => b.use_("rc", c),
                None => b.set("rc", RZ_),
            }
        };
        self.emit_b(b.set("vb", SIGN).set("lut", lut as u64).set("pp", PT_));
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
    fn fsetp(&mut self, ty: Type, cmp: &str, a: VReg, b: FSrc, lop: Option<(&str, Pred)>) -> Pred {
        let p = self.temp(Class::P);
        let mut bu = Bundle::new();
        match b {
            FSrc::Reg(r) => {
                bu = bu.inst(if is64(ty) { forms::DSETP_RR } else { forms::FSETP_RR }).use_("rb", r);
            }
            FSrc::Const(k) if !is64(ty) => {
                bu = bu.inst(forms::FSETP_RI).set("vb", (k as f32).to_bits() as u64);
            }
            FSrc::Const(k) if k.to_bits() & 0xffff_ffff == 0 => {
                // F64Imm holds the high word (erratum E9).
                bu = bu.inst(forms::DSETP_RI).set("vb", k.to_bits() >> 32);
            }
            FSrc::Const(k) => {
                let r = self.mov_imm64(k.to_bits());
                bu = bu.inst(forms::DSETP_RR).use_("rb", r);
            }
        }
        bu = bu.named("cmp", cmp).def("pu", p).use_("ra", a);
        bu = match lop {
            None => bu.named("lop", "AND").set("pp", PT_),
            Some((op, q)) => bu.named("lop", op).use_("pp", q),
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
        self.emit_b(Bundle::new().inst(form).named("cmp", fcmp_name(*cc)).named("lop", "AND").set("pp", PT_).def("pu", p).use_("ra", a).set("vb", k as u64));
        p
    }

    pub fn fsetp_rr(&mut self, ty: Type, cc: &FloatCC, a: VReg, b: VReg) -> Pred {
        self.float_ok(ty);
        self.fsetp(ty, fcmp_name(*cc), a, FSrc::Reg(b), None)
    }

    pub fn fminmax_rr(&mut self, ty: Type, min: bool, a: VReg, b: VReg) -> VReg {
        // Unordered inputs give the canonical NaN (CLIF); otherwise the
        // min/max, with -0 < +0 (FMNMX, DMNMX: erratum E39).
        let nan = self.fsetp(ty, "NAN", a, FSrc::Reg(b), None);
        let m = self.temp(class(ty));
        let form = if is64(ty) { forms::DMNMX_RR } else { forms::FMNMX_RR };
        self.emit_b(Bundle::new().inst(form).def("rd", m).use_("ra", a).use_("rb", b).set("pp", PT_).set("pp.not", (!min) as u64));
        self.canonical_if(ty, nan, m)
    }

    /// The same with the immediate field `k` of a constant (`fimm`).
    pub fn fminmax_ri(&mut self, ty: Type, min: bool, a: VReg, k: u32) -> VReg {
        let nan = self.fsetp_ri(ty, &FloatCC::Unordered, a, k);
        let m = self.temp(class(ty));
        let form = if is64(ty) { forms::DMNMX_RI } else { forms::FMNMX_RI };
        self.emit_b(Bundle::new().inst(form).def("rd", m).use_("ra", a).set("vb", k as u64).set("pp", PT_).set("pp.not", (!min) as u64));
        self.canonical_if(ty, nan, m)
    }

    /// `nan ? canonical NaN : m`.
    fn canonical_if(&mut self, ty: Type, nan: Pred, m: VReg) -> VReg {
        let d = self.temp(class(ty));
        let b = if is64(ty) {
            Bundle::new()
                .inst(forms::SEL_RI)
                .def("rd", d)
                .use_("ra", m)
                .set("vb", 0)
                .use_("pp", nan)
                .set("pp.not", 1)
                .inst(forms::SEL_RI)
                .def_hi("rd", d)
                .use_hi("ra", m)
                .set("vb", CANON_NAN64_HI)
                .use_("pp", nan)
                .set("pp.not", 1)
        } else {
            Bundle::new().inst(forms::SEL_RI).def("rd", d).use_("ra", m).set("vb", CANON_NAN32).use_("pp", nan).set("pp.not", 1)
        };
        self.emit_b(b);
        d
    }

    pub fn frnd_r(&mut self, ty: Type, rnd: &Rnd, a: VReg) -> VReg {
        let d = self.temp(class(ty));
        self.emit_b(Bundle::new().inst(forms::FRND_R).named("ftype", ftype(ty)).named("rnd", rnd_name(rnd)).def("rd", d).use_("rb", a));
        d
    }

    pub fn f2f(&mut self, to: Type, from: Type, a: VReg) -> VReg {
        self.float_ok(from);
        let d = self.temp(class(to));
        self.emit_b(Bundle::new().inst(forms::F2F_R).named("rnd", "RN").named("dtype", ftype(to)).named("srctype", ftype(from)).def("rd", d).use_("rb", a));
        d
    }

    pub fn i2f(&mut self, to: Type, from: Type, s: &Signed, a: VReg) -> VReg {
        let d = self.temp(class(to));
        let itype = int_type(from, s);
        self.emit_b(Bundle::new().inst(forms::I2F_R).named("rnd", "RN").named("ftype", ftype(to)).named("itype", itype).def("rd", d).use_("rb", a));
        d
    }

    /// `F2I.RZ` into an integer of 32 or 64 bits (saturating, NaN → 0).
    fn f2i(&mut self, to: Type, s: &Signed, from: Type, a: VReg) -> VReg {
        self.float_ok(from);
        let d = self.temp(class(to));
        let itype = int_type(to, s);
        self.emit_b(Bundle::new().inst(forms::F2I_R).named("rnd", "RZ").named("itype", itype).named("ftype", ftype(from)).def("rd", d).use_("rb", a));
        d
    }

    pub fn f2i_sat(&mut self, to: Type, s: &Signed, from: Type, a: VReg) -> VReg {
        let r = self.f2i(to, s, from, a);
        let bits = to.bits();
        if bits >= 32 {
            return r;
        }
        // i8 / i16: F2I saturates to 32 bits; clamp to the narrow range.
        match s {
            Signed::S32 => {
                let hi = self.imnmx_ri(&Signed::S32, true, r, ((1u32 << (bits - 1)) - 1) as u32);
                self.imnmx_ri(&Signed::S32, false, hi, (-(1i32 << (bits - 1))) as u32)
            }
            Signed::U32 => self.imnmx_ri(&Signed::U32, true, r, ((1u64 << bits) - 1) as u32),
        }
    }

    /// `@p BPT.TRAP code`.
    fn trap_on(&mut self, p: Pred, code: TrapCode) {
        self.emit_b(Bundle::new().inst(forms::BPT_I).named("mode", "TRAP").set("code", code.as_raw().get() as u64).use_("pg", p));
    }

    pub fn f2i_trap(&mut self, to: Type, s: &Signed, from: Type, a: VReg) -> VReg {
        if !self.float_ok(from) {
            return a;
        }
        // NaN: bad_toint.
        let nan = self.fsetp(from, "NAN", a, FSrc::Reg(a), None);
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
        let low = if exact { self.fsetp(from, "LE", a, FSrc::Const(lo_excl as f64), None) } else { self.fsetp(from, "LT", a, FSrc::Const(min as f64), None) };
        let ovf = self.fsetp(from, "GE", a, FSrc::Const(hi_excl as f64), Some(("OR", low)));
        self.trap_on(ovf, TrapCode::INTEGER_OVERFLOW);
        self.f2i(to, s, from, a)
    }
}
