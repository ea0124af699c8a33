//! Constructors for `isle/lower/mul.isle`: multiplication (IMAD, IMUL.HI,
//! IMAD.WIDE), the 64×64→128 product, and `iabs`.

use cranelift_codegen::ir::{types, InstructionData, Opcode, Type, Value};

use crate::lower::{InstOutput, Lower, Signed};
use crate::rules::ops::{Pieces, D, S};
use crate::vcode::{Bundle, Class, VReg};
use ursa_emit::forms::{self, IABS_R, LEA_RRR};
use ursa_emit::mods;
use ursa_emit::mods::SHFDType;
use ursa_emit::optypes::{IADD, IMAD, LOP3};

impl Lower<'_> {
    /// `IMAD d, a, b, RZ`: the low 32 bits of the product (any signedness).
    pub fn imul32(&mut self, a: VReg, b: VReg) -> VReg {
        let d = self.temp(Class::R);
        self.emit_b(Bundle::new().imad(false, true, D::Lo(d), S::Lo(a), S::Lo(b), S::Z));
        d
    }

    /// `IMUL.HI.S32/U32 d, a, b`: the high 32 bits of the 64-bit product.
    pub fn mulhi32(&mut self, signed: bool, a: VReg, b: VReg) -> VReg {
        let d = self.temp(Class::R);
        self.emit_b(Bundle::new().imul_hi(signed, D::Lo(d), S::Lo(a), S::Lo(b)));
        d
    }

    /// 64-bit `a * b mod 2^64`: the cross terms `a.lo*b.hi + a.hi*b.lo` with
    /// IMAD, the full `a.lo*b.lo` with IMAD.WIDE.U32, the cross terms added to
    /// its high word.
    fn imul64_src(&mut self, a: VReg, b_lo: S, b_hi: S) -> VReg {
        let d = self.temp(Class::RPair);
        let t = self.temp(Class::R);
        let mut bu = Bundle::new().imad(false, false, D::T(t), S::Hi(a), b_lo, S::Z);
        if b_hi != S::Imm(0) {
            bu = bu.imad(false, false, D::T(t), S::Lo(a), b_hi, S::Lo(t));
        }
        bu = bu.imad_wide(false, D::Lo(d), S::Lo(a), b_lo, S::Z).iadd(false, D::Hi(d), S::Hi(d), false, S::Lo(t), false);
        self.emit_b(bu);
        d
    }

    pub fn imul64(&mut self, a: VReg, b: VReg) -> VReg {
        self.imul64_src(a, S::Lo(b), S::Hi(b))
    }

    pub fn imul64_imm(&mut self, a: VReg, k: u64) -> VReg {
        self.imul64_src(a, S::Imm(k as u32), S::Imm((k >> 32) as u32))
    }

    /// The full unsigned 128-bit product of two pairs, as (low, high) pairs,
    /// by 32-bit columns with carry chains (one predicate, two scratch
    /// registers; `L` = a.lo*b.lo by IMAD.WIDE.U32):
    ///
    /// ```text
    /// IMAD.WIDE.U32   L, a0, b0, RZ          ; r0 = L.lo, h0 = L.hi
    /// IMAD.U32        T1, k, a0, b1, L.hi    ; lo(a0 b1) + h0
    /// IMAD.HI.X.U32   T2, a0, b1, RZ, k      ; hi(a0 b1) + carry
    /// IMAD.U32        L.hi, k, a1, b0, T1    ; r1
    /// IMAD.HI.X.U32   T2, k, a1, b0, T2, k   ; hi(a1 b0) + ... (carry k)
    /// IADD.X          T1, RZ, RZ, k          ; that carry as a number
    /// IMAD.U32        H.lo, k, a1, b1, T2    ; r2
    /// IMAD.HI.X.U32   H.hi, a1, b1, T1, k    ; r3
    /// ```
    fn mul128(&mut self, a: VReg, b: VReg, want_lo: bool) -> (VReg, VReg) {
        let l = self.temp(Class::RPair);
        let h = self.temp(Class::RPair);
        let (t1, t2) = (self.temp(Class::R), self.temp(Class::R));
        let k = self.temp(Class::P);
        let (l_lo, l_hi) = if want_lo { (D::Lo(l), D::Hi(l)) } else { (D::T(l), D::TH(l)) };
        let (a0, a1, b0, b1) = (S::Lo(a), S::Hi(a), S::Lo(b), S::Hi(b));
        let bu = Bundle::new()
            .imad_wide(false, l_lo, a0, b0, S::Z)
            .imad(false, false, D::T(t1), a0, b1, S::Hi(l))
            .temp(IMAD::PU, k)
            .imad(true, false, D::T(t2), a0, b1, S::Z)
            .use_(IMAD::PP, k)
            .set(IMAD::PP_NOT, false)
            .imad(false, false, l_hi, a1, b0, S::Lo(t1))
            .temp(IMAD::PU, k)
            .imad(true, false, D::T(t2), a1, b0, S::Lo(t2))
            .use_(IMAD::PP, k)
            .set(IMAD::PP_NOT, false)
            .temp(IMAD::PU, k)
            .iadd(true, D::T(t1), S::Z, false, S::Z, false)
            .use_(IADD::PP, k)
            .set(IADD::PP_NOT, false)
            .imad(false, false, D::Lo(h), a1, b1, S::Lo(t2))
            .temp(IMAD::PU, k)
            .imad(true, false, D::Hi(h), a1, b1, S::Lo(t1))
            .use_(IMAD::PP, k)
            .set(IMAD::PP_NOT, false);
        self.emit_b(bu);
        (l, h)
    }

    /// The signed high 64 bits from the unsigned ones:
    /// `hs = hu - (a < 0 ? b : 0) - (b < 0 ? a : 0)`.
    fn signed_hi64(&mut self, a: VReg, b: VReg, hu: VReg) -> VReg {
        let d = self.temp(Class::RPair);
        let (sa, sb) = (self.temp(Class::R), self.temp(Class::R));
        let (x0, x1, y0, y1) = (self.temp(Class::R), self.temp(Class::R), self.temp(Class::R), self.temp(Class::R));
        let (c1, c2) = (self.temp(Class::P), self.temp(Class::P));
        use crate::machine::{LUT_A, LUT_C};
        let and = LUT_A & LUT_C;
        let bu = Bundle::new()
            .shf(false, true, false, SHFDType::S32, D::T(sa), S::Z, S::Imm(31), S::Hi(a))
            .shf(false, true, false, SHFDType::S32, D::T(sb), S::Z, S::Imm(31), S::Hi(b))
            .lop3(D::T(x0), S::Lo(b), S::Z, S::Lo(sa), and)
            .lop3(D::T(x1), S::Hi(b), S::Z, S::Lo(sa), and)
            .lop3(D::T(y0), S::Lo(a), S::Z, S::Lo(sb), and)
            .lop3(D::T(y1), S::Hi(a), S::Z, S::Lo(sb), and)
            // d = hu - x, then d -= y
            .iadd64(d, [S::Lo(hu), S::Hi(hu)], [S::Lo(x0), S::Lo(x1)], true, c1)
            .iadd64(d, [S::Lo(d), S::Hi(d)], [S::Lo(y0), S::Lo(y1)], true, c2);
        self.emit_b(bu);
        d
    }

    /// `smulhi.i64 a, b` where `b` is the constant `k` (its register feeds
    /// only the product, where `opt_fold_imm` makes it immediates): `k`'s
    /// sign is known, so the term `(k < 0 ? a : 0)` of the general correction
    /// is `a` or nothing, and `(a < 0 ? k : 0)` is `a`'s sign mask ANDed
    /// with immediates — 5 instructions after the product (3 for `k >= 0`)
    /// where two registers take 10. The magic-number divisions by a
    /// constant (`legalize_div`) are its users.
    pub fn smulhi64_imm(&mut self, a: VReg, b: VReg, k: u64) -> VReg {
        self.smulhi64_imm_with(a, b, k, false)
    }

    /// `iadd a, (smulhi.i64 a, b)` where `b` is the constant `k` (the
    /// signed magic-number division Cranelift's mid-end and
    /// `legalize_div` write, whose magic numbers are negative): the product's
    /// correction `- (k < 0 ? a : 0)` and the `+ a` cancel for `k < 0`, so
    /// it costs the product, the sign term and one 64-bit subtraction.
    pub fn smulhi64_imm_add(&mut self, a: VReg, b: VReg, k: u64) -> VReg {
        self.smulhi64_imm_with(a, b, k, true)
    }

    /// `smulhi.i64 a, k` (`plus_a`: with `a` added).
    fn smulhi64_imm_with(&mut self, a: VReg, b: VReg, k: u64, plus_a: bool) -> VReg {
        let hu = self.mul128(a, b, false).1;
        let d = self.temp(Class::RPair);
        let (sa, x0, x1) = (self.temp(Class::R), self.temp(Class::R), self.temp(Class::R));
        let c1 = self.temp(Class::P);
        use crate::machine::{LUT_A, LUT_B};
        let mut bu = Bundle::new()
            .shf(false, true, false, SHFDType::S32, D::T(sa), S::Z, S::Imm(31), S::Hi(a))
            .lop3(D::T(x0), S::Lo(sa), S::Imm(k as u32), S::Z, LUT_A & LUT_B)
            .lop3(D::T(x1), S::Lo(sa), S::Imm((k >> 32) as u32), S::Z, LUT_A & LUT_B)
            // d = hu - (a < 0 ? k : 0)
            .iadd64(d, [S::Lo(hu), S::Hi(hu)], [S::Lo(x0), S::Lo(x1)], true, c1);
        // The term `- (k < 0 ? a : 0)`, and `+ a` for `plus_a`: `-a`, `+a`
        // or nothing.
        if ((k as i64) < 0) != plus_a {
            let c2 = self.temp(Class::P);
            bu = bu.iadd64(d, [S::Lo(d), S::Hi(d)], [S::Lo(a), S::Hi(a)], !plus_a, c2);
        }
        self.emit_b(bu);
        d
    }

    pub fn umulhi64(&mut self, a: VReg, b: VReg) -> VReg {
        self.mul128(a, b, false).1
    }

    pub fn smulhi64(&mut self, a: VReg, b: VReg) -> VReg {
        let hu = self.mul128(a, b, false).1;
        self.signed_hi64(a, b, hu)
    }

    /// `umul_overflow.i64`: the low 64 bits, and whether the high 64 are nonzero.
    pub fn umul_overflow64(&mut self, a: VReg, b: VReg) -> InstOutput {
        let (l, h) = self.mul128(a, b, true);
        let p = self.temp(Class::P);
        let f = self.temp(Class::R);
        self.emit_b(
            Bundle::new().lop3(D::Z, S::Lo(h), S::Z, S::Hi(h), crate::machine::LUT_A | crate::machine::LUT_C).temp(LOP3::PU, p).sel(
                D::Lo(f),
                S::Z,
                S::Imm(1),
                p,
                true,
            ),
        );
        smallvec::smallvec![l, f]
    }

    /// `smul_overflow.i64`: the low 64 bits, and whether the signed high 64
    /// bits differ from the sign of the low ones.
    pub fn smul_overflow64(&mut self, a: VReg, b: VReg) -> InstOutput {
        let (l, hu) = self.mul128(a, b, true);
        let h = self.signed_hi64(a, b, hu);
        let s = self.temp(Class::R);
        let p = self.temp(Class::P);
        let f = self.temp(Class::R);
        use crate::machine::{LUT_A, LUT_B, LUT_C};
        self.emit_b(
            Bundle::new()
                .shf(false, true, false, SHFDType::S32, D::T(s), S::Z, S::Imm(31), S::Hi(l))
                .lop3(D::Z, S::Lo(h), S::Hi(h), S::Lo(s), (LUT_A ^ LUT_C) | (LUT_B ^ LUT_C))
                .temp(LOP3::PU, p)
                .sel(D::Lo(f), S::Z, S::Imm(1), p, true),
        );
        smallvec::smallvec![l, f]
    }

    /// `IABS d, a` (INT_MIN stays INT_MIN, as CLIF wants).
    pub fn iabs32(&mut self, a: VReg) -> VReg {
        let d = self.temp(Class::R);
        self.emit_b(Bundle::new().inst(ursa_emit::forms::IABS_R).def(IABS_R::RD, d).use_(IABS_R::RB, a));
        d
    }

    /// 64-bit `|a|` = `(a ^ s) - s` with `s` the sign replicated.
    pub fn iabs64(&mut self, a: VReg) -> VReg {
        let d = self.temp(Class::RPair);
        let s = self.temp(Class::R);
        let (u0, u1) = (self.temp(Class::R), self.temp(Class::R));
        let c = self.temp(Class::P);
        use crate::machine::{LUT_A, LUT_C};
        let xor = LUT_A ^ LUT_C;
        self.emit_b(
            Bundle::new()
                .shf(false, true, false, SHFDType::S32, D::T(s), S::Z, S::Imm(31), S::Hi(a))
                .lop3(D::T(u0), S::Lo(a), S::Z, S::Lo(s), xor)
                .lop3(D::T(u1), S::Hi(a), S::Z, S::Lo(s), xor)
                .iadd64(d, [S::Lo(u0), S::Lo(u1)], [S::Lo(s), S::Lo(s)], true, c),
        );
        d
    }
}

impl Lower<'_> {
    /// `IMAD.WIDE(.U32) d, i, scale, base`: `base + ext(i) * scale` in one
    /// instruction (`isle/lower/address.isle`).
    pub fn imad_wide_addr(&mut self, s: &Signed, i: VReg, scale: u32, base: VReg) -> VReg {
        let d = self.temp(Class::RPair);
        self.emit_b(Bundle::new().imad_wide(*s == Signed::S32, D::Lo(d), S::Lo(i), S::Imm(scale), S::Lo(base)));
        d
    }

    /// Lowering at `opt_level=speed`?
    pub fn at_speed(&mut self) -> Option<()> {
        self.speed.then_some(())
    }

    /// `IMAD.WIDE(.U32) d, a, b, RZ`: the exact 64-bit product of two
    /// 32-bit values, sign- or zero-extended.
    pub fn imul_wide(&mut self, s: &Signed, a: VReg, b: VReg) -> VReg {
        let d = self.temp(Class::RPair);
        self.emit_b(Bundle::new().imad_wide(*s == Signed::S32, D::Lo(d), S::Lo(a), S::Lo(b), S::Z));
        d
    }

    /// `LEA d, x, a, k`: `(x << k) + a`.
    pub fn lea32(&mut self, x: VReg, k: u32, a: VReg) -> VReg {
        let d = self.temp(Class::R);
        self.emit_b(
            Bundle::new()
                .inst(forms::LEA_RRR)
                .def(LEA_RRR::RD, d)
                .use_(LEA_RRR::RA, x)
                .use_(LEA_RRR::RB, a)
                .set(LEA_RRR::SHIFTAMT, k as u64),
        );
        d
    }

    /// `LEA d.lo, c, x.lo, base.lo, k` + `LEA.HI.X d.hi, x.lo, base.hi,
    /// x.hi, k, c`: `base + (x << k)` for 64-bit values, k below 32.
    pub fn lea64(&mut self, x: VReg, k: u32, base: VReg) -> VReg {
        let d = self.temp(Class::RPair);
        let c = self.temp(Class::P);
        self.emit_b(
            Bundle::new()
                .inst(forms::LEA_RRR)
                .def(LEA_RRR::RD, d)
                .temp(LEA_RRR::PU, c)
                .use_(LEA_RRR::RA, x)
                .use_(LEA_RRR::RB, base)
                .set(LEA_RRR::SHIFTAMT, k as u64)
                .inst(forms::LEA_RRR)
                .set(LEA_RRR::LOHI, mods::LOHI::HI)
                .set(LEA_RRR::EXT, mods::IExt::X)
                .def_hi(LEA_RRR::RD, d)
                .use_(LEA_RRR::RA, x)
                .use_hi(LEA_RRR::RB, base)
                .use_hi(LEA_RRR::RC, x)
                .set(LEA_RRR::SHIFTAMT, k as u64)
                .use_(LEA_RRR::PP, c)
                .set(LEA_RRR::PP_NOT, false),
        );
        d
    }

    pub fn lea_shift32(&mut self, ty: Type, k: u64) -> u32 {
        (k % ty.bits() as u64) as u32
    }

    pub fn lea_shift64(&mut self, k: u64) -> Option<u32> {
        let k = k % 64;
        (k < 32).then_some(k as u32)
    }

    pub fn shl_scale(&mut self, k: u64) -> Option<u32> {
        let k = k % 64;
        (k <= 30).then(|| 1u32 << k)
    }

    pub fn mul_scale(&mut self, c: u64) -> Option<u32> {
        (c > 0 && c < 1 << 31).then_some(c as u32)
    }
}

impl Lower<'_> {
    /// `v = sextend.i64 x` → (S32, x), `v = uextend.i64 x` → (U32, x), for
    /// an i32 `x`.
    pub fn ext_index(&mut self, v: Value) -> Option<(Signed, Value)> {
        let i = self.def_inst(v)?;
        let InstructionData::Unary { opcode, arg } = self.f.dfg.insts[i] else { return None };
        if self.f.dfg.value_type(arg) != types::I32 {
            return None;
        }
        match opcode {
            Opcode::Sextend => Some((Signed::S32, arg)),
            Opcode::Uextend => Some((Signed::U32, arg)),
            _ => None,
        }
    }
}

impl Lower<'_> {
    /// `IMAD d, a, b, c`: a*b + c, low 32 bits.
    pub fn imad32(&mut self, a: VReg, b: VReg, c: VReg) -> VReg {
        let d = self.temp(Class::R);
        self.emit_b(Bundle::new().imad(false, true, D::Lo(d), S::Lo(a), S::Lo(b), S::Lo(c)));
        d
    }
}
