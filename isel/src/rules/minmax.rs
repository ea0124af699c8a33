//! Constructors for `isle/lower/minmax.isle`: IMNMX.

use crate::lower::{Lower, Signed};
use crate::machine::PT_;
use crate::rules::ops::S;
use crate::vcode::{Bundle, Class, VReg};

impl Lower<'_> {
    /// `IMNMX.S32/U32 d, a, b, PT` (min) or `!PT` (max).
    fn imnmx(&mut self, s: &Signed, min: bool, a: VReg, b: S) -> VReg {
        let d = self.temp(Class::R);
        let (form, bf) = if let S::Imm(_) = b { (ursa_emit::forms::IMNMX_RI, "vb") } else { (ursa_emit::forms::IMNMX_RR, "rb") };
        let bu = Bundle::new()
            .inst(form)
            .named("itype", if matches!(s, Signed::S32) { "S32" } else { "U32" })
            .def("rd", d)
            .use_("ra", a)
            .set("pp", PT_)
            .set("pp.not", (!min) as u64);
        let bu = match b {
            S::Imm(k) => bu.set(bf, k as u64),
            S::Lo(r) => bu.use_(bf, r),
            _ => unreachable!(),
        };
        self.emit_b(bu);
        d
    }

    pub fn imnmx_rr(&mut self, s: &Signed, min: bool, a: VReg, b: VReg) -> VReg {
        self.imnmx(s, min, a, S::Lo(b))
    }

    pub fn imnmx_ri(&mut self, s: &Signed, min: bool, a: VReg, k: u32) -> VReg {
        self.imnmx(s, min, a, S::Imm(k))
    }
}
