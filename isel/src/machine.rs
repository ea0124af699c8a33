//! Constructors of machine instructions, called by the ISLE rules through
//! the `Context` glue (`context.rs`). Each pushes one allocator-level
//! instruction onto the current lowering and returns its result register.
//! Field names are those of the ISA description (`ursa isa FORM` lists them).

use ursa_emit::{forms, FormId, PT, RZ};

use crate::lower::{CmpOp, Lower, Signed};
use crate::vcode::{Bundle, Class, MInst, VReg};

pub(crate) const PT_: u64 = PT as u64;
pub(crate) const RZ_: u64 = RZ as u64;

/// LOP3 truth-table inputs: the tables of `a`, `b` and `c` themselves.
pub const LUT_A: u8 = 0xF0;
pub const LUT_B: u8 = 0xCC;
pub const LUT_C: u8 = 0xAA;

fn r(cx: &mut Lower) -> VReg {
    cx.temp(Class::R)
}
fn pair_reg(cx: &mut Lower) -> VReg {
    cx.temp(Class::RPair)
}
fn p(cx: &mut Lower) -> VReg {
    cx.temp(Class::P)
}

fn emit(cx: &mut Lower, b: Bundle) {
    cx.push(b.build());
}

fn cmp_name(op: &CmpOp) -> &'static str {
    match op {
        CmpOp::EQ => "EQ",
        CmpOp::NE => "NE",
        CmpOp::LT => "LT",
        CmpOp::LE => "LE",
        CmpOp::GT => "GT",
        CmpOp::GE => "GE",
    }
}

fn signed_name(s: &Signed) -> &'static str {
    match s {
        Signed::S32 => "S32",
        Signed::U32 => "U32",
    }
}

// ---- moves and constants ------------------------------------------------

pub fn mov_imm(cx: &mut Lower, k: u32) -> VReg {
    let d = r(cx);
    emit(cx, Bundle::new().inst(forms::MOV_I).def("rd", d).set("vb", k as u64));
    d
}

pub fn mov_imm64(cx: &mut Lower, k: u64) -> VReg {
    let d = pair_reg(cx);
    emit(
        cx,
        Bundle::new()
            .inst(forms::MOV_I)
            .def("rd", d)
            .set("vb", k & 0xffff_ffff)
            .inst(forms::MOV_I)
            .def_hi("rd", d)
            .set("vb", k >> 32),
    );
    d
}

pub fn lo32(cx: &mut Lower, a: VReg) -> VReg {
    let d = r(cx);
    let m = lo32_into(cx, a, d);
    cx.push(m);
    d
}

/// `MOV d, a.lo` as an instruction (for callers that own `d`).
pub fn lo32_into(_cx: &mut Lower, a: VReg, d: VReg) -> MInst {
    Bundle::new().inst(forms::MOV_R).def("rd", d).use_("rb", a).build()
}

pub fn hi32(cx: &mut Lower, a: VReg) -> VReg {
    let d = r(cx);
    emit(cx, Bundle::new().inst(forms::MOV_R).def("rd", d).use_hi("rb", a));
    d
}

pub fn pair(cx: &mut Lower, lo: VReg, hi: VReg) -> VReg {
    let d = pair_reg(cx);
    emit(cx, Bundle::new().inst(forms::MOV_R).def("rd", d).use_("rb", lo).inst(forms::MOV_R).def_hi("rd", d).use_("rb", hi));
    d
}

// ---- integer ALU ----------------------------------------------------------

pub fn iadd_rr(cx: &mut Lower, a: VReg, b: VReg) -> VReg {
    let d = r(cx);
    emit(cx, Bundle::new().inst(forms::IADD_RR).def("rd", d).use_("ra", a).use_("rb", b));
    d
}

pub fn iadd_ri(cx: &mut Lower, a: VReg, k: u32) -> VReg {
    let d = r(cx);
    emit(cx, Bundle::new().inst(forms::IADD_RI).def("rd", d).use_("ra", a).set("vb", k as u64));
    d
}

pub fn isub_rr(cx: &mut Lower, a: VReg, b: VReg) -> VReg {
    let d = r(cx);
    emit(cx, Bundle::new().inst(forms::IADD_RR).def("rd", d).use_("ra", a).use_("rb", b).set("rb.neg", 1));
    d
}

pub fn ineg_r(cx: &mut Lower, a: VReg) -> VReg {
    let d = r(cx);
    emit(cx, Bundle::new().inst(forms::IADD_RR).def("rd", d).set("ra", RZ_).use_("rb", a).set("rb.neg", 1));
    d
}

/// 64-bit `a ± b`: `IADD d.lo, c, a.lo, ±b.lo` + `IADD.X d.hi, a.hi, ±b.hi, c`.
fn add64(cx: &mut Lower, a: VReg, b: VReg, neg: bool) -> VReg {
    let d = pair_reg(cx);
    let c = p(cx);
    emit(
        cx,
        Bundle::new()
            .inst(forms::IADD_RR)
            .def("rd", d)
            .temp("pu", c)
            .use_("ra", a)
            .use_("rb", b)
            .set("rb.neg", neg as u64)
            .inst(forms::IADD_RR)
            .named("ext", "X")
            .def_hi("rd", d)
            .use_hi("ra", a)
            .use_hi("rb", b)
            .set("rb.neg", neg as u64)
            .use_("pp", c)
            .set("pp.not", 0),
    );
    d
}

pub fn iadd64_rr(cx: &mut Lower, a: VReg, b: VReg) -> VReg {
    add64(cx, a, b, false)
}

pub fn isub64_rr(cx: &mut Lower, a: VReg, b: VReg) -> VReg {
    add64(cx, a, b, true)
}

pub fn iadd64_ri(cx: &mut Lower, a: VReg, k: u64) -> VReg {
    let d = pair_reg(cx);
    let c = p(cx);
    emit(
        cx,
        Bundle::new()
            .inst(forms::IADD_RI)
            .def("rd", d)
            .temp("pu", c)
            .use_("ra", a)
            .set("vb", k & 0xffff_ffff)
            .inst(forms::IADD_RI)
            .named("ext", "X")
            .def_hi("rd", d)
            .use_hi("ra", a)
            .set("vb", k >> 32)
            .use_("pp", c)
            .set("pp.not", 0),
    );
    d
}

fn isetp_base(b: Bundle, op: &CmpOp, s: &Signed) -> Bundle {
    b.named("compop", cmp_name(op)).named("boolop", "AND").named("itype", signed_name(s)).set("pp", PT_)
}

pub fn isetp_rr(cx: &mut Lower, op: &CmpOp, s: &Signed, a: VReg, b: VReg) -> VReg {
    let d = p(cx);
    let bu = isetp_base(Bundle::new().inst(forms::ISETP_RR), op, s).def("pu", d).use_("ra", a).use_("rb", b);
    emit(cx, bu);
    d
}

pub fn isetp_ri(cx: &mut Lower, op: &CmpOp, s: &Signed, a: VReg, k: u32) -> VReg {
    let d = p(cx);
    let bu = isetp_base(Bundle::new().inst(forms::ISETP_RI), op, s).def("pu", d).use_("ra", a).set("vb", k as u64);
    emit(cx, bu);
    d
}

/// 64-bit compare: the low words unsigned, then `.X` on the high words,
/// which takes the low result where the high words are equal.
pub fn isetp64_rr(cx: &mut Lower, op: &CmpOp, s: &Signed, a: VReg, b: VReg) -> VReg {
    let d = p(cx);
    let t = p(cx);
    let b1 = isetp_base(Bundle::new().inst(forms::ISETP_RR), op, &Signed::U32).temp("pu", t).use_("ra", a).use_("rb", b);
    let b2 = isetp_base(b1.inst(forms::ISETP_RR), op, s)
        .named("ext", "X")
        .def("pu", d)
        .use_hi("ra", a)
        .use_hi("rb", b)
        .use_("pq", t)
        .set("pq.not", 0);
    emit(cx, b2);
    d
}

pub fn isetp64_ri(cx: &mut Lower, op: &CmpOp, s: &Signed, a: VReg, k: u64) -> VReg {
    let d = p(cx);
    let t = p(cx);
    let b1 = isetp_base(Bundle::new().inst(forms::ISETP_RI), op, &Signed::U32).temp("pu", t).use_("ra", a).set("vb", k & 0xffff_ffff);
    let b2 = isetp_base(b1.inst(forms::ISETP_RI), op, s)
        .named("ext", "X")
        .def("pu", d)
        .use_hi("ra", a)
        .set("vb", k >> 32)
        .use_("pq", t)
        .set("pq.not", 0);
    emit(cx, b2);
    d
}

pub fn sel_rr(cx: &mut Lower, a: VReg, b: VReg, c: VReg) -> VReg {
    let d = r(cx);
    emit(cx, Bundle::new().inst(forms::SEL_RR).def("rd", d).use_("ra", a).use_("rb", b).use_("pp", c));
    d
}

pub fn sel_ri(cx: &mut Lower, a: VReg, k: u32, c: VReg) -> VReg {
    let d = r(cx);
    emit(cx, Bundle::new().inst(forms::SEL_RI).def("rd", d).use_("ra", a).set("vb", k as u64).use_("pp", c));
    d
}

pub fn sel64_rr(cx: &mut Lower, a: VReg, b: VReg, c: VReg) -> VReg {
    let d = pair_reg(cx);
    emit(
        cx,
        Bundle::new()
            .inst(forms::SEL_RR)
            .def("rd", d)
            .use_("ra", a)
            .use_("rb", b)
            .use_("pp", c)
            .inst(forms::SEL_RR)
            .def_hi("rd", d)
            .use_hi("ra", a)
            .use_hi("rb", b)
            .use_("pp", c),
    );
    d
}

/// LOP3 with one register, an immediate and RZ: `d = lut(a, k, 0)`.
pub fn lop3_ri(cx: &mut Lower, a: VReg, k: u32, lut: u8) -> VReg {
    let d = r(cx);
    emit(
        cx,
        Bundle::new().inst(forms::LOP3_RIR).def("rd", d).use_("ra", a).set("vb", k as u64).set("rc", RZ_).set("lut", lut as u64).set("pp", PT_),
    );
    d
}

pub fn zext_bits(cx: &mut Lower, a: VReg, n: u32) -> VReg {
    if n >= 32 {
        return a;
    }
    lop3_ri(cx, a, ((1u64 << n) - 1) as u32, LUT_A & LUT_B)
}

pub fn sext_bits(cx: &mut Lower, a: VReg, n: u32) -> VReg {
    if n >= 32 {
        return a;
    }
    let d = r(cx);
    emit(cx, Bundle::new().inst(forms::SGXT_RI).def("rd", d).use_("ra", a).set("vb", n as u64));
    d
}

pub fn sshr_ri(cx: &mut Lower, a: VReg, n: u32) -> VReg {
    let d = r(cx);
    emit(
        cx,
        Bundle::new()
            .inst(forms::SHF_RIR)
            .named("direction", "R")
            .named("lohi", "HI")
            .named("itype", "S32")
            .def("rd", d)
            .set("ra", RZ_)
            .set("vb", n as u64)
            .use_("rc", a),
    );
    d
}

/// A 64-bit table index as 32 bits, saturated to 0xFFFFFFFF when the high
/// word is nonzero (no table has that many entries).
pub fn clamp_index64(cx: &mut Lower, a: VReg) -> VReg {
    let lo = lo32(cx, a);
    let hi = hi32(cx, a);
    let big = isetp_ri(cx, &CmpOp::NE, &Signed::U32, hi, 0);
    let m1 = mov_imm(cx, u32::MAX);
    sel_rr(cx, m1, lo, big)
}

/// Forms by name, for constructors that choose a form at run time.
pub fn form(name: &str) -> FormId {
    FormId::by_name(name).unwrap_or_else(|| panic!("no form {}", name))
}
