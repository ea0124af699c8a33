//! Constructors for `isle/lower/minmax.isle`: IMNMX.

use crate::lower::{Lower, Signed};
use crate::machine::signed_itype;
use crate::rules::ops::S;
use crate::vcode::{Bundle, Class, VReg};
use ursa_emit::forms::{self, IMNMX_RI, IMNMX_RR};
use ursa_emit::optypes::IMNMX;
use ursa_emit::typed::P;

impl Lower<'_> {
    /// `IMNMX.S32/U32 d, a, b, PT` (min) or `!PT` (max).
    fn imnmx(&mut self, s: &Signed, min: bool, a: VReg, b: S) -> VReg {
        let d = self.temp(Class::R);
        let form = if let S::Imm(_) = b { forms::IMNMX_RI } else { forms::IMNMX_RR };
        let bu = Bundle::new()
            .inst(form)
            .set(IMNMX::ITYPE, signed_itype(s))
            .def(IMNMX::RD, d)
            .use_(IMNMX::RA, a)
            .set(IMNMX::PP, P::T)
            .set(IMNMX::PP_NOT, !min);
        let bu = match b {
            S::Imm(k) => bu.set(IMNMX_RI::VB, k as u64),
            S::Lo(r) => bu.use_(IMNMX_RR::RB, r),
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
