//! Constructors for `isle/lower/shifts.isle`: SHF funnel shifts.
//!
//! `SHF.dir.lohi.cwmod.itype d, a, b, c` shifts the 64-bit `{c, a}` by `b`
//! (`.WRAP`: `b mod 32`, or `mod 64` with `.U64/.S64`) and keeps its low or
//! high word. So for 32 bits `x << n` is `SHF.L.W.U32 d, x, n, RZ`, `x >> n`
//! `SHF.R.W.U32 d, x, n, RZ` (logical) or `SHF.R.W.S32.HI d, RZ, n, x`
//! (arithmetic), and a rotate funnels a value with itself. For 64 bits the
//! `.U64/.S64` funnel of `{hi, lo}` gives each word of the shifted pair in
//! one instruction. Amount registers are read as 32 bits (the low word of an
//! i64 amount; the garbage above an i8/i16 amount is beyond the bits any
//! shift looks at).

use cranelift_codegen::ir::{types, Type};

use crate::lower::Lower;
use crate::rules::ops::{Pieces, D, S};
use crate::vcode::{Bundle, Class, VReg};
use ursa_emit::mods::SHFDType;
use ursa_emit::optypes::LOP3;

/// How the 32-bit shifts of this file use SHF: (left, hi, itype, a, c) for
/// a value `x`.
fn shape32(op: Op32, x: VReg) -> (bool, bool, SHFDType, S, S) {
    match op {
        Op32::Shl => (true, false, SHFDType::U32, S::Lo(x), S::Z),
        Op32::Ushr => (false, false, SHFDType::U32, S::Lo(x), S::Z),
        Op32::Sshr => (false, true, SHFDType::S32, S::Z, S::Lo(x)),
        Op32::Rotl => (true, true, SHFDType::U32, S::Lo(x), S::Lo(x)),
        Op32::Rotr => (false, false, SHFDType::U32, S::Lo(x), S::Lo(x)),
    }
}

#[derive(Clone, Copy)]
enum Op32 {
    Shl,
    Ushr,
    Sshr,
    Rotl,
    Rotr,
}

#[derive(Clone, Copy)]
enum Op64 {
    Shl,
    Ushr,
    Sshr,
}

impl Lower<'_> {
    fn shf32(&mut self, op: Op32, x: VReg, n: S) -> VReg {
        let d = self.temp(Class::R);
        let (left, hi, itype, a, c) = shape32(op, x);
        self.emit_b(Bundle::new().shf(left, hi, true, itype, D::Lo(d), a, n, c));
        d
    }

    pub fn shl32(&mut self, x: VReg, n: VReg) -> VReg {
        self.shf32(Op32::Shl, x, S::Lo(n))
    }
    pub fn shl32_imm(&mut self, x: VReg, k: u32) -> VReg {
        self.shf32(Op32::Shl, x, S::Imm(k))
    }
    pub fn ushr32(&mut self, x: VReg, n: VReg) -> VReg {
        self.shf32(Op32::Ushr, x, S::Lo(n))
    }
    pub fn ushr32_imm(&mut self, x: VReg, k: u32) -> VReg {
        self.shf32(Op32::Ushr, x, S::Imm(k))
    }
    pub fn sshr32(&mut self, x: VReg, n: VReg) -> VReg {
        self.shf32(Op32::Sshr, x, S::Lo(n))
    }
    pub fn sshr32_imm(&mut self, x: VReg, k: u32) -> VReg {
        self.shf32(Op32::Sshr, x, S::Imm(k))
    }
    pub fn rotl32(&mut self, x: VReg, n: VReg) -> VReg {
        self.shf32(Op32::Rotl, x, S::Lo(n))
    }
    pub fn rotl32_imm(&mut self, x: VReg, k: u32) -> VReg {
        self.shf32(Op32::Rotl, x, S::Imm(k))
    }
    pub fn rotr32(&mut self, x: VReg, n: VReg) -> VReg {
        self.shf32(Op32::Rotr, x, S::Lo(n))
    }
    pub fn rotr32_imm(&mut self, x: VReg, k: u32) -> VReg {
        self.shf32(Op32::Rotr, x, S::Imm(k))
    }

    /// A narrow value repeated over the whole register (PRMT), so that a
    /// 32-bit rotate rotates every copy, by the amount mod the copy's width.
    pub fn replicate(&mut self, x: VReg, ty: Type) -> VReg {
        let d = self.temp(Class::R);
        let sel = if ty == types::I8 { 0x0000 } else { 0x1010 };
        self.emit_b(Bundle::new().prmt(D::Lo(d), S::Lo(x), S::Z, sel));
        d
    }

    /// 64-bit shift: the two words of the `.U64/.S64` funnel of `{x.hi, x.lo}`.
    fn shf64(&mut self, op: Op64, x: VReg, n: S) -> VReg {
        let d = self.temp(Class::RPair);
        let (left, itype) = match op {
            Op64::Shl => (true, SHFDType::U64),
            Op64::Ushr => (false, SHFDType::U64),
            Op64::Sshr => (false, SHFDType::S64),
        };
        self.emit_b(Bundle::new().shf(left, false, true, itype, D::Lo(d), S::Lo(x), n, S::Hi(x)).shf(
            left,
            true,
            true,
            itype,
            D::Hi(d),
            S::Lo(x),
            n,
            S::Hi(x),
        ));
        d
    }

    pub fn shl64(&mut self, x: VReg, n: VReg) -> VReg {
        self.shf64(Op64::Shl, x, S::Lo(n))
    }
    pub fn shl64_imm(&mut self, x: VReg, k: u32) -> VReg {
        self.shf64(Op64::Shl, x, S::Imm(k))
    }
    pub fn ushr64(&mut self, x: VReg, n: VReg) -> VReg {
        self.shf64(Op64::Ushr, x, S::Lo(n))
    }
    pub fn ushr64_imm(&mut self, x: VReg, k: u32) -> VReg {
        self.shf64(Op64::Ushr, x, S::Imm(k))
    }
    pub fn sshr64(&mut self, x: VReg, n: VReg) -> VReg {
        self.shf64(Op64::Sshr, x, S::Lo(n))
    }
    pub fn sshr64_imm(&mut self, x: VReg, k: u32) -> VReg {
        self.shf64(Op64::Sshr, x, S::Imm(k))
    }

    /// 64-bit rotate of the words `(lo, hi)` by `n mod 32` (32-bit funnels):
    /// left: `hi' = SHF.L.HI(lo, n, hi)`, `lo' = SHF.L.HI(hi, n, lo)`;
    /// right: `lo' = SHF.R.LO(lo, n, hi)`, `hi' = SHF.R.LO(hi, n, lo)`.
    fn rot64_pieces(b: Bundle, left: bool, d: VReg, lo: S, hi: S, n: S) -> Bundle {
        if left {
            b.shf(true, true, true, SHFDType::U32, D::Lo(d), hi, n, lo).shf(true, true, true, SHFDType::U32, D::Hi(d), lo, n, hi)
        } else {
            b.shf(false, false, true, SHFDType::U32, D::Lo(d), lo, n, hi).shf(false, false, true, SHFDType::U32, D::Hi(d), hi, n, lo)
        }
    }

    /// 64-bit rotate by a register: the words are swapped first when bit 5
    /// of the amount is set (a rotate by 32), then rotated by `n mod 32`.
    fn rot64(&mut self, left: bool, x: VReg, n: VReg) -> VReg {
        let d = self.temp(Class::RPair);
        let p = self.temp(Class::P);
        let (t0, t1) = (self.temp(Class::R), self.temp(Class::R));
        let b = Bundle::new()
            .lop3(D::Z, S::Lo(n), S::Imm(32), S::Z, crate::machine::LUT_A & crate::machine::LUT_B)
            .temp(LOP3::PU, p)
            .sel(D::T(t0), S::Hi(x), S::Lo(x), p, false)
            .sel(D::T(t1), S::Lo(x), S::Hi(x), p, false);
        self.emit_b(Self::rot64_pieces(b, left, d, S::Lo(t0), S::Lo(t1), S::Lo(n)));
        d
    }

    /// 64-bit rotate by a constant: the swap is static.
    fn rot64_imm(&mut self, left: bool, x: VReg, k: u32) -> VReg {
        let d = self.temp(Class::RPair);
        let k = k & 63;
        let (lo, hi) = if k >= 32 { (S::Hi(x), S::Lo(x)) } else { (S::Lo(x), S::Hi(x)) };
        self.emit_b(Self::rot64_pieces(Bundle::new(), left, d, lo, hi, S::Imm(k & 31)));
        d
    }

    pub fn rotl64(&mut self, x: VReg, n: VReg) -> VReg {
        self.rot64(true, x, n)
    }
    pub fn rotr64(&mut self, x: VReg, n: VReg) -> VReg {
        self.rot64(false, x, n)
    }
    pub fn rotl64_imm(&mut self, x: VReg, k: u32) -> VReg {
        self.rot64_imm(true, x, k)
    }
    pub fn rotr64_imm(&mut self, x: VReg, k: u32) -> VReg {
        self.rot64_imm(false, x, k)
    }

    // ---- helpers on numbers (pure) ----

    /// log2 of a type's width: the bits of a shift amount that count.
    pub fn ty_log2(&mut self, ty: Type) -> u32 {
        ty.bits().trailing_zeros()
    }
    pub fn u32_and(&mut self, a: u32, b: u32) -> u32 {
        a & b
    }
}
