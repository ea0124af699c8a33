//! Constructors for `isle/lower/minmax.isle`: IMNMX.

use crate::lower::{Lower, Signed};
use crate::machine::signed_itype;
use crate::rules::ops::S;
use crate::vcode::{Bundle, Class, VReg};
use cranelift_codegen::ir::Type;
use ursa_emit::forms::{self, I2I_R, IMNMX_RI, IMNMX_RR};
use ursa_emit::mods::I2IDType;
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

    /// The I2I type whose range is `[lo, hi]` (the bits of two constants
    /// of type `ty`, read as signed).
    pub fn i2i_range(&mut self, ty: Type, lo: u32, hi: u32) -> Option<I2IDType> {
        let signed = |k: u32| {
            let sh = 32 - ty.bits().min(32);
            ((k << sh) as i32) >> sh
        };
        match (signed(lo), signed(hi)) {
            (-0x80, 0x7f) => Some(I2IDType::S8),
            (0, 0xff) => Some(I2IDType::U8),
            (-0x8000, 0x7fff) => Some(I2IDType::S16),
            (0, 0xffff) => Some(I2IDType::U16),
            _ => None,
        }
    }

    /// `I2I.dtype d, a`: `a` (a signed 32-bit integer) saturated to the
    /// range of the 8- or 16-bit type `t`.
    pub fn i2i(&mut self, t: &I2IDType, a: VReg) -> VReg {
        let d = self.temp(Class::R);
        self.emit_b(Bundle::new().inst(forms::I2I_R).set(I2I_R::DTYPE, *t).def(I2I_R::RD, d).use_(I2I_R::RB, a));
        d
    }

    pub fn imnmx_rr(&mut self, s: &Signed, min: bool, a: VReg, b: VReg) -> VReg {
        self.imnmx(s, min, a, S::Lo(b))
    }

    pub fn imnmx_ri(&mut self, s: &Signed, min: bool, a: VReg, k: u32) -> VReg {
        self.imnmx(s, min, a, S::Imm(k))
    }
}
