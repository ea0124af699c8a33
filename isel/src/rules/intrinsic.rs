//! The kernel intrinsics that are more than one instruction of their own
//! (`crate::intrinsics`, `docs/kernels.md` "Intrinsics"): shuffles by the
//! word, the 64-bit clock read and the fast-math functions on MUFU.

use cranelift_codegen::ir::{types, Value};
use ursa_emit::forms;
use ursa_emit::forms::{MUFU_R, S2R_X, SHFL_RI};
use ursa_emit::mods;
use ursa_emit::optypes::SHFL;

use crate::intrinsics::FastMath;
use crate::lower::{CmpOp, Lower, Signed};
use crate::vcode::{Bundle, Class, VReg};

impl Lower<'_> {
    /// `SHFL.mode d, v(.hi), b, c` over the full warp: clamp 31 (0 for UP),
    /// no segments (isa-extensions, SHFL); `b` an immediate when constant.
    pub(crate) fn shfl(&mut self, mode: mods::ShflMode, lane: Value, v: VReg, hi: bool, d: VReg) {
        let c = if mode == mods::ShflMode::UP { 0 } else { 0x1f };
        let b = match crate::context::const_bits(self, lane) {
            Some(k) if k < 32 => Bundle::new().inst(forms::SHFL_RI).set(SHFL_RI::VB, k),
            _ => {
                let r = self.use_value(lane);
                Bundle::new().inst(forms::SHFL_RR).use_(ursa_emit::forms::SHFL_RR::RB, r)
            }
        };
        let b = b.set(SHFL::MODE, mode).def(SHFL::RD, d).set(SHFL::VC, c);
        let b = if hi { b.use_hi(SHFL::RA, v) } else { b.use_(SHFL::RA, v) };
        self.push(b.build());
    }

    /// `S2R d, sr`.
    fn s2r(&mut self, sr: mods::SReg) -> VReg {
        let d = self.temp(Class::R);
        self.emit_b(Bundle::new().inst(forms::S2R_X).def(S2R_X::RD, d).set(S2R_X::SR, sr));
        d
    }

    /// The cycle counter: `S2R SR_CLOCKLO`; 64 bits read the high word
    /// before and after the low one, and when the two differ (the low word
    /// wrapped in between) give the second high word with a zero low word,
    /// a value between the two reads.
    pub(crate) fn clock(&mut self, wide: bool) -> VReg {
        if !wide {
            return self.s2r(mods::SReg::SR_CLOCKLO);
        }
        let hi0 = self.s2r(mods::SReg::SR_CLOCKHI);
        let lo = self.s2r(mods::SReg::SR_CLOCKLO);
        let hi = self.s2r(mods::SReg::SR_CLOCKHI);
        let same = self.isetp_rr(&CmpOp::EQ, &Signed::U32, hi0, hi);
        let lo = self.sel_ri(lo, 0, same);
        self.pair(lo, hi)
    }

    /// `MUFU.op.F32 d, x`.
    fn mufu(&mut self, op: mods::MUFUOp, x: VReg) -> VReg {
        let d = self.temp(Class::R);
        self.emit_b(
            Bundle::new()
                .inst(forms::MUFU_R)
                .set(MUFU_R::MUFUOP, op)
                .set(MUFU_R::DTYPE, mods::MUFUDType::F32)
                .def(MUFU_R::RD, d)
                .use_(MUFU_R::RB, x),
        );
        d
    }

    /// A fast-math function of `x` (and `y`): MUFU with at most an `FMUL`
    /// around it (docs/kernels.md, "Fast math").
    pub(crate) fn fast_math(&mut self, m: FastMath, x: VReg, y: Option<VReg>) -> VReg {
        let f32 = types::F32;
        match m {
            FastMath::Mufu(op) => self.mufu(op, x),
            FastMath::Ex2Scaled(k) => {
                let t = self.fmul_ri(f32, x, k);
                self.mufu(mods::MUFUOp::EX2, t)
            }
            FastMath::Lg2Scaled(k) => {
                let t = self.mufu(mods::MUFUOp::LG2, x);
                self.fmul_ri(f32, t, k)
            }
            FastMath::Tan => {
                let s = self.mufu(mods::MUFUOp::SIN, x);
                let c = self.mufu(mods::MUFUOp::COS, x);
                let r = self.mufu(mods::MUFUOp::RCP, c);
                self.fmul_rr(f32, s, r)
            }
            FastMath::Pow => {
                let l = self.mufu(mods::MUFUOp::LG2, x);
                let t = self.fmul_rr(f32, y.expect("pow has two arguments"), l);
                self.mufu(mods::MUFUOp::EX2, t)
            }
            FastMath::Div => {
                let r = self.mufu(mods::MUFUOp::RCP, y.expect("div has two arguments"));
                self.fmul_rr(f32, x, r)
            }
        }
    }
}
