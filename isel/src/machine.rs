//! Constructors of machine instructions, called by the ISLE rules through
//! the `Context` glue (`context.rs`). Each pushes one allocator-level
//! instruction onto the current lowering and returns its result register.
//! Field names are those of the ISA description (`ursa isa FORM` lists them).

use ursa_emit::{forms, PT, RZ};

use crate::lower::{CmpOp, Lower, Signed};
use crate::vcode::{Bundle, Class, MInst, VReg};

pub(crate) const PT_: u64 = PT as u64;
pub(crate) const RZ_: u64 = RZ as u64;

/// LOP3 truth-table inputs: the tables of `a`, `b` and `c` themselves.
pub const LUT_A: u8 = 0xF0;
pub const LUT_B: u8 = 0xCC;
pub const LUT_C: u8 = 0xAA;

impl Lower<'_> {
    /// Pushes a finished bundle onto the current lowering.
    pub fn emit_b(&mut self, b: Bundle) {
        self.push(b.build());
    }
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

impl Lower<'_> {
    // ---- moves and constants ------------------------------------------------

    pub fn mov_imm(&mut self, k: u32) -> VReg {
        let d = self.temp(Class::R);
        self.emit_b(Bundle::new().inst(forms::MOV_I).def("rd", d).set("vb", k as u64));
        d
    }

    pub fn mov_imm64(&mut self, k: u64) -> VReg {
        let d = self.temp(Class::RPair);
        self.emit_b(
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

    pub fn lo32(&mut self, a: VReg) -> VReg {
        let d = self.temp(Class::R);
        let m = self.lo32_into(a, d);
        self.push(m);
        d
    }

    /// `MOV d, a.lo` as an instruction (for callers that own `d`).
    pub fn lo32_into(&self, a: VReg, d: VReg) -> MInst {
        Bundle::new().inst(forms::MOV_R).def("rd", d).use_("rb", a).build()
    }

    pub fn hi32(&mut self, a: VReg) -> VReg {
        let d = self.temp(Class::R);
        self.emit_b(Bundle::new().inst(forms::MOV_R).def("rd", d).use_hi("rb", a));
        d
    }

    pub fn pair(&mut self, lo: VReg, hi: VReg) -> VReg {
        let d = self.temp(Class::RPair);
        self.emit_b(Bundle::new().inst(forms::MOV_R).def("rd", d).use_("rb", lo).inst(forms::MOV_R).def_hi("rd", d).use_("rb", hi));
        d
    }

    // ---- integer ALU ----------------------------------------------------------

    pub fn iadd_rr(&mut self, a: VReg, b: VReg) -> VReg {
        let d = self.temp(Class::R);
        self.emit_b(Bundle::new().inst(forms::IADD_RR).def("rd", d).use_("ra", a).use_("rb", b));
        d
    }

    pub fn iadd_ri(&mut self, a: VReg, k: u32) -> VReg {
        let d = self.temp(Class::R);
        self.emit_b(Bundle::new().inst(forms::IADD_RI).def("rd", d).use_("ra", a).set("vb", k as u64));
        d
    }

    pub fn isub_rr(&mut self, a: VReg, b: VReg) -> VReg {
        let d = self.temp(Class::R);
        self.emit_b(Bundle::new().inst(forms::IADD_RR).def("rd", d).use_("ra", a).use_("rb", b).set("rb.neg", 1));
        d
    }

    pub fn ineg_r(&mut self, a: VReg) -> VReg {
        let d = self.temp(Class::R);
        self.emit_b(Bundle::new().inst(forms::IADD_RR).def("rd", d).set("ra", RZ_).use_("rb", a).set("rb.neg", 1));
        d
    }

    /// 64-bit `a ± b`: `IADD d.lo, c, a.lo, ±b.lo` + `IADD.X d.hi, a.hi, ±b.hi, c`.
    fn add64(&mut self, a: VReg, b: VReg, neg: bool) -> VReg {
        let d = self.temp(Class::RPair);
        let c = self.temp(Class::P);
        self.emit_b(
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

    pub fn isetp_rr(&mut self, op: &CmpOp, s: &Signed, a: VReg, b: VReg) -> VReg {
        let d = self.temp(Class::P);
        let bu = Self::isetp_base(Bundle::new().inst(forms::ISETP_RR), op, s).def("pu", d).use_("ra", a).use_("rb", b);
        self.emit_b(bu);
        d
    }

    pub fn isetp_ri(&mut self, op: &CmpOp, s: &Signed, a: VReg, k: u32) -> VReg {
        let d = self.temp(Class::P);
        let bu = Self::isetp_base(Bundle::new().inst(forms::ISETP_RI), op, s).def("pu", d).use_("ra", a).set("vb", k as u64);
        self.emit_b(bu);
        d
    }

    /// 64-bit compare: the low words unsigned, then `.X` on the high words,
    /// which takes the low result where the high words are equal.
    pub fn isetp64_rr(&mut self, op: &CmpOp, s: &Signed, a: VReg, b: VReg) -> VReg {
        let d = self.temp(Class::P);
        let t = self.temp(Class::P);
        let b1 = Self::isetp_base(Bundle::new().inst(forms::ISETP_RR), op, &Signed::U32).temp("pu", t).use_("ra", a).use_("rb", b);
        let b2 = Self::isetp_base(b1.inst(forms::ISETP_RR), op, s)
            .named("ext", "X")
            .def("pu", d)
            .use_hi("ra", a)
            .use_hi("rb", b)
            .use_("pq", t)
            .set("pq.not", 0);
        self.emit_b(b2);
        d
    }

    pub fn isetp64_ri(&mut self, op: &CmpOp, s: &Signed, a: VReg, k: u64) -> VReg {
        let d = self.temp(Class::P);
        let t = self.temp(Class::P);
        let b1 = Self::isetp_base(Bundle::new().inst(forms::ISETP_RI), op, &Signed::U32).temp("pu", t).use_("ra", a).set("vb", k & 0xffff_ffff);
        let b2 = Self::isetp_base(b1.inst(forms::ISETP_RI), op, s)
            .named("ext", "X")
            .def("pu", d)
            .use_hi("ra", a)
            .set("vb", k >> 32)
            .use_("pq", t)
            .set("pq.not", 0);
        self.emit_b(b2);
        d
    }

    pub fn sel_rr(&mut self, a: VReg, b: VReg, c: VReg) -> VReg {
        let d = self.temp(Class::R);
        self.emit_b(Bundle::new().inst(forms::SEL_RR).def("rd", d).use_("ra", a).use_("rb", b).use_("pp", c));
        d
    }

    pub fn sel_ri(&mut self, a: VReg, k: u32, c: VReg) -> VReg {
        let d = self.temp(Class::R);
        self.emit_b(Bundle::new().inst(forms::SEL_RI).def("rd", d).use_("ra", a).set("vb", k as u64).use_("pp", c));
        d
    }

    pub fn sel64_rr(&mut self, a: VReg, b: VReg, c: VReg) -> VReg {
        let d = self.temp(Class::RPair);
        self.emit_b(
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
    pub fn lop3_ri(&mut self, a: VReg, k: u32, lut: u8) -> VReg {
        let d = self.temp(Class::R);
        self.emit_b(
            Bundle::new().inst(forms::LOP3_RIR).def("rd", d).use_("ra", a).set("vb", k as u64).set("rc", RZ_).set("lut", lut as u64).set("pp", PT_),
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
        self.emit_b(Bundle::new().inst(forms::SGXT_RI).def("rd", d).use_("ra", a).set("vb", n as u64));
        d
    }

    pub fn sshr_ri(&mut self, a: VReg, n: u32) -> VReg {
        let d = self.temp(Class::R);
        self.emit_b(
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
    pub fn clamp_index64(&mut self, a: VReg) -> VReg {
        let lo = self.lo32(a);
        let hi = self.hi32(a);
        let big = self.isetp_ri(&CmpOp::NE, &Signed::U32, hi, 0);
        let m1 = self.mov_imm(u32::MAX);
        self.sel_rr(m1, lo, big)
    }
}
