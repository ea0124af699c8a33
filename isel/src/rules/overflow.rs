//! Constructors for `isle/lower/overflow.isle`: additions, subtractions and
//! multiplications that also produce an overflow flag (an i8 0 or 1).
//!
//! Unsigned carries come from IADD's carry-out `pu` (a subtraction's carry
//! is "no borrow", E21); signed overflow from the sign bits of the operands
//! and the result: `(a ^ r) & (b ^ r)` for a sum, `(a ^ b) & (a ^ r)` for a
//! difference, one LOP3. A flag register is `SEL f, RZ, 1, !p`.
//!
//! `sadd_overflow_cin` / `ssub_overflow_bin` follow cranelift-interpreter,
//! the only implementation of these opcodes in Cranelift: the flag is the
//! overflow of `x + y` OR the overflow of adding the carry to that wrapped
//! sum (`x - y`, then the borrow). This differs from the overflow of the
//! exact `x + y + c_in` in one case per width: `x + y = MIN - 1` with
//! `c_in = 1` (the result MIN is exact, but the interpreter reports
//! overflow), and `x - y = MAX + 1` with `b_in = 1`. Both equal "exact
//! overflow, or carry-in and result == MIN (MAX for the subtraction)".

use cranelift_codegen::ir::{types, Opcode, Value, ValueDef};

use crate::lower::{CmpOp, InstOutput, Lower, Pred, Signed};
use crate::machine::{LUT_A, LUT_B, LUT_C};
use crate::rules::ops::{Pieces, D, S};
use crate::vcode::{Bundle, Class, VReg};
use ursa_emit::mods;
use ursa_emit::mods::CompOp;
use ursa_emit::mods::SHFDType;
use ursa_emit::optypes::{IADD, ISETP, LOP3};

/// Signed overflow of a sum `r = a + b`: the sign bit of this LOP3.
const ADD_OVF: u8 = (LUT_A ^ LUT_C) & (LUT_B ^ LUT_C);
/// Signed overflow of a difference `r = a - b`.
const SUB_OVF: u8 = (LUT_A ^ LUT_B) & (LUT_A ^ LUT_C);

fn out2(a: VReg, b: VReg) -> InstOutput {
    smallvec::smallvec![a, b]
}

impl Lower<'_> {
    /// `SEL f, RZ, 1, !p`: 1 where `p` holds, else 0.
    pub fn flag_of(&mut self, p: Pred) -> VReg {
        let f = self.temp(Class::R);
        self.emit_b(Bundle::new().sel(D::Lo(f), S::Z, S::Imm(1), p, true));
        f
    }

    /// `LOP3 RZ, p, a, mask, RZ`: the predicate "a & mask != 0".
    pub fn nz_pred(&mut self, a: VReg, mask: u32) -> Pred {
        let p = self.temp(Class::P);
        self.emit_b(Bundle::new().lop3(D::Z, S::Lo(a), S::Imm(mask), S::Z, LUT_A & LUT_B).def(LOP3::PU, p));
        p
    }

    /// `ISETP.cmp.OR p, a, k, q`: the comparison or `q`.
    pub fn isetp_ri_or(&mut self, op: &CmpOp, s: &Signed, a: VReg, k: u32, q: Pred) -> Pred {
        let p = self.temp(Class::P);
        let (cmp, signed) = (crate::machine::compop(op), matches!(s, Signed::S32));
        self.emit_b(
            Bundle::new().isetp(cmp, signed, S::Lo(a), S::Imm(k)).set(ISETP::BOOLOP, mods::BoolOp::OR).use_(ISETP::PP, q).def(ISETP::PU, p),
        );
        p
    }

    /// `IADD.X d, a, b, p`: `a + b + p`.
    pub fn iadd_cin(&mut self, a: VReg, b: VReg, p: Pred) -> VReg {
        let d = self.temp(Class::R);
        self.emit_b(Bundle::new().iadd(true, D::Lo(d), S::Lo(a), false, S::Lo(b), false).use_(IADD::PP, p).set(IADD::PP_NOT, false));
        d
    }

    /// `IADD.X d, a, -b, !p`: `a + ~b + !p` = `a - b - p`.
    pub fn isub_bin(&mut self, a: VReg, b: VReg, p: Pred) -> VReg {
        let d = self.temp(Class::R);
        self.emit_b(Bundle::new().iadd(true, D::Lo(d), S::Lo(a), false, S::Lo(b), true).use_(IADD::PP, p).set(IADD::PP_NOT, true));
        d
    }

    /// The readers of the flag (second result) of the instruction being
    /// lowered, which were lowered before it: the predicate one of them
    /// asked the flag in (`fused_carry`), and whether any reads the flag
    /// register.
    fn flag_readers(&self) -> (Option<Pred>, bool) {
        let flag = self.cur_inst.map(|i| self.f.dfg.inst_results(i)[1]);
        (flag.and_then(|v| self.fused_carry.get(&v).copied()), flag.is_none_or(|v| self.is_used(v)))
    }

    // ---- unsigned, 32 bits ----

    /// `IADD d, c, a, ±b` + the carry as a flag (`!c` for a subtraction: no
    /// borrow). The carry predicate is a bundle temporary, or, when a later
    /// instruction reads this flag as a predicate (`fused_carry`: a carry-in,
    /// a branch, a select, a trap), the predicate it reads; the flag
    /// register (`SEL`) is only written if some instruction reads it.
    fn carry32(&mut self, a: VReg, b: VReg, sub: bool, cin: Option<Pred>) -> InstOutput {
        let d = self.temp(Class::R);
        let f = self.temp(Class::R);
        let (fused, flag_read) = self.flag_readers();
        let mut bu = Bundle::new().iadd(cin.is_some(), D::Lo(d), S::Lo(a), false, S::Lo(b), sub);
        let c = match fused {
            Some(p) => {
                bu = bu.def(IADD::PU, p);
                p
            }
            None => {
                let c = self.temp(Class::P);
                bu = bu.temp(IADD::PU, c);
                c
            }
        };
        if let Some(p) = cin {
            bu = bu.use_(IADD::PP, p).set(IADD::PP_NOT, sub);
        }
        if flag_read {
            bu = bu.sel(D::Lo(f), S::Z, S::Imm(1), c, !sub);
        }
        self.emit_b(bu);
        out2(d, f)
    }

    pub fn uadd_ovf32(&mut self, a: VReg, b: VReg) -> InstOutput {
        self.carry32(a, b, false, None)
    }
    pub fn usub_ovf32(&mut self, a: VReg, b: VReg) -> InstOutput {
        self.carry32(a, b, true, None)
    }
    pub fn uadd_cin32(&mut self, a: VReg, b: VReg, p: Pred) -> InstOutput {
        self.carry32(a, b, false, Some(p))
    }
    pub fn usub_bin32(&mut self, a: VReg, b: VReg, p: Pred) -> InstOutput {
        self.carry32(a, b, true, Some(p))
    }

    // ---- unsigned, 64 bits ----

    /// `cin`: the carry-in predicate, and whether it holds the borrow
    /// (`usub_overflow_bin`'s i8 input) rather than the carry IADD.X adds.
    /// The carry-out predicate is a bundle temporary, or, when a later
    /// carry-in reads this flag (`fused_carry`), the predicate it reads; the
    /// flag register (`SEL`) is only written if some instruction reads it.
    fn carry64(&mut self, a: VReg, b: VReg, sub: bool, cin: Option<(Pred, bool)>) -> InstOutput {
        let d = self.temp(Class::RPair);
        let f = self.temp(Class::R);
        let (c1, c2) = (self.temp(Class::P), self.temp(Class::P));
        let mut bu = Bundle::new().iadd(cin.is_some(), D::Lo(d), S::Lo(a), false, S::Lo(b), sub).temp(IADD::PU, c1);
        if let Some((p, borrow)) = cin {
            bu = bu.use_(IADD::PP, p).set(IADD::PP_NOT, borrow);
        }
        let (fused, flag_read) = self.flag_readers();
        bu = bu.iadd(true, D::Hi(d), S::Hi(a), false, S::Hi(b), sub).use_(IADD::PP, c1).set(IADD::PP_NOT, false);
        bu = match fused {
            Some(p) => bu.def(IADD::PU, p),
            None => bu.temp(IADD::PU, c2),
        };
        let c2 = fused.unwrap_or(c2);
        // An unread flag needs no register (the i128 add's last carry).
        if flag_read {
            bu = bu.sel(D::Lo(f), S::Z, S::Imm(1), c2, !sub);
        }
        self.emit_b(bu);
        out2(d, f)
    }

    pub fn uadd_ovf64(&mut self, a: VReg, b: VReg) -> InstOutput {
        self.carry64(a, b, false, None)
    }
    pub fn usub_ovf64(&mut self, a: VReg, b: VReg) -> InstOutput {
        self.carry64(a, b, true, None)
    }
    pub fn uadd_cin64(&mut self, a: VReg, b: VReg, p: Pred) -> InstOutput {
        self.carry64(a, b, false, Some((p, false)))
    }
    pub fn usub_bin64(&mut self, a: VReg, b: VReg, p: Pred) -> InstOutput {
        self.carry64(a, b, true, Some((p, true)))
    }
    /// `usub_overflow_bin` whose borrow-in is a fused carry predicate
    /// (`fused_carry_sub`: the carry, i.e. "no borrow", of the subtraction
    /// that produced it).
    pub fn usub_bin64_carry(&mut self, a: VReg, b: VReg, p: Pred) -> InstOutput {
        self.carry64(a, b, true, Some((p, false)))
    }

    /// The carry-out predicate of the i64 `uadd_overflow`/`uadd_overflow_cin`
    /// (`sub`: `usub_overflow`/`usub_overflow_bin`) of this block whose flag
    /// is `c`, for a carry-in (borrow-in) reading it: the defining `IADD.X`
    /// writes it (`carry64`); for an addition also of i32 (`carry32`), whose
    /// carry is its flag, for any reader of the flag as a predicate. `None`
    /// when `c` is anything else.
    fn fused_carry_of(&mut self, c: Value, sub: bool) -> Option<Pred> {
        let ops = if sub { [Opcode::UsubOverflow, Opcode::UsubOverflowBin] } else { [Opcode::UaddOverflow, Opcode::UaddOverflowCin] };
        self.fused_flag_of(c, &ops)
    }

    /// The predicate for a reader of flag `c` in its block, when `c` is the
    /// flag of an i32/i64 instruction of one of `ops` there: made on the
    /// first request and kept in `fused_carry`, where the defining bundle
    /// finds it ([`Lower::flag_readers`]). `None` otherwise.
    fn fused_flag_of(&mut self, c: Value, ops: &[Opcode]) -> Option<Pred> {
        let f = self.f;
        let c = f.dfg.resolve_aliases(c);
        let ValueDef::Result(def, 1) = f.dfg.value_def(c) else { return None };
        let ty = f.dfg.value_type(f.dfg.inst_results(def)[0]);
        if !ops.contains(&f.dfg.insts[def].opcode()) || !(ty == types::I64 || ty == types::I32) {
            return None;
        }
        let here = self.cur_inst.and_then(|i| f.layout.inst_block(i));
        if here.is_none() || f.layout.inst_block(def) != here {
            return None;
        }
        if let Some(&p) = self.fused_carry.get(&c) {
            return Some(p);
        }
        let p = self.temp(Class::P);
        self.fused_carry.insert(c, p);
        Some(p)
    }

    pub fn fused_carry_add(&mut self, c: Value) -> Option<Pred> {
        self.fused_carry_of(c, false)
    }
    pub fn fused_carry_sub(&mut self, c: Value) -> Option<Pred> {
        self.fused_carry_of(c, true)
    }

    /// The borrow of the i32/i64 `usub_overflow`/`usub_overflow_bin` of this
    /// block whose flag is `c`, for a reader of the flag as a predicate: the
    /// complement of the carry the subtraction writes (`PLOP3`). `None` when
    /// `c` is anything else.
    pub fn fused_borrow(&mut self, c: Value) -> Option<Pred> {
        let carry = self.fused_carry_of(c, true)?;
        let d = self.temp(Class::P);
        self.emit_b(Bundle::new().plop3(d, carry, None, !LUT_A));
        Some(d)
    }

    // ---- signed ----

    /// The flag of the signed i32/i64 `sadd_overflow`/`ssub_overflow` of
    /// this block whose flag is `c`, for a reader of it as a predicate: the
    /// sign of the overflow LOP3, which the defining bundle tests with an
    /// `ISETP` into this predicate (`sovf32`, `sovf64`). `None` when `c` is
    /// anything else.
    pub fn fused_signed_flag(&mut self, c: Value) -> Option<Pred> {
        self.fused_flag_of(c, &[Opcode::SaddOverflow, Opcode::SsubOverflow])
    }

    /// The sign of overflow word `t` into the predicate a reader of this
    /// instruction's flag asked for (`fused_signed_flag`), and the flag
    /// register (`SHF` of the sign) only if something reads it.
    fn signed_flag(&mut self, bu: Bundle, t: VReg, f: VReg) -> Bundle {
        let (fused, flag_read) = self.flag_readers();
        let mut bu = bu;
        if let Some(p) = fused {
            bu = bu.isetp(CompOp::LT, true, S::Lo(t), S::Z).def(ISETP::PU, p);
        }
        if flag_read {
            bu = bu.shf(false, false, false, SHFDType::U32, D::Lo(f), S::Lo(t), S::Imm(31), S::Z);
        }
        bu
    }

    /// `r = a ± b` on 32 bits (or the low word of narrower values), and the
    /// flag = bit `bit` of the overflow LOP3.
    fn sovf32(&mut self, a: VReg, b: VReg, sub: bool, bit: u32) -> InstOutput {
        let d = self.temp(Class::R);
        let f = self.temp(Class::R);
        let t = self.temp(Class::R);
        let lut = if sub { SUB_OVF } else { ADD_OVF };
        let mut bu = Bundle::new().iadd(false, D::Lo(d), S::Lo(a), false, S::Lo(b), sub).lop3(D::T(t), S::Lo(a), S::Lo(b), S::Lo(d), lut);
        if bit == 31 {
            bu = self.signed_flag(bu, t, f);
        } else {
            let p = self.temp(Class::P);
            bu = bu.lop3(D::Z, S::Lo(t), S::Imm(1 << bit), S::Z, LUT_A & LUT_B).temp(LOP3::PU, p).sel(D::Lo(f), S::Z, S::Imm(1), p, true);
        }
        self.emit_b(bu);
        out2(d, f)
    }

    pub fn sadd_ovf32(&mut self, a: VReg, b: VReg, bit: u32) -> InstOutput {
        self.sovf32(a, b, false, bit)
    }
    pub fn ssub_ovf32(&mut self, a: VReg, b: VReg, bit: u32) -> InstOutput {
        self.sovf32(a, b, true, bit)
    }

    fn sovf64(&mut self, a: VReg, b: VReg, sub: bool) -> InstOutput {
        let d = self.temp(Class::RPair);
        let f = self.temp(Class::R);
        let t = self.temp(Class::R);
        let c = self.temp(Class::P);
        let lut = if sub { SUB_OVF } else { ADD_OVF };
        let bu = Bundle::new()
            .iadd(false, D::Lo(d), S::Lo(a), false, S::Lo(b), sub)
            .temp(IADD::PU, c)
            .iadd(true, D::Hi(d), S::Hi(a), false, S::Hi(b), sub)
            .use_(IADD::PP, c)
            .set(IADD::PP_NOT, false)
            .lop3(D::T(t), S::Hi(a), S::Hi(b), S::Hi(d), lut);
        let bu = self.signed_flag(bu, t, f);
        self.emit_b(bu);
        out2(d, f)
    }

    pub fn sadd_ovf64(&mut self, a: VReg, b: VReg) -> InstOutput {
        self.sovf64(a, b, false)
    }
    pub fn ssub_ovf64(&mut self, a: VReg, b: VReg) -> InstOutput {
        self.sovf64(a, b, true)
    }

    /// i32 `sadd_overflow_cin` / `ssub_overflow_bin` (interpreter semantics,
    /// see the module doc): `r = a + b + p` (`a + ~b + !p`), flag = sign of
    /// the overflow LOP3, or `p` and `r == MIN` (`MAX`).
    fn sovf_c32(&mut self, a: VReg, b: VReg, p: Pred, sub: bool) -> InstOutput {
        let d = self.temp(Class::R);
        let f = self.temp(Class::R);
        let t = self.temp(Class::R);
        let (q1, q2) = (self.temp(Class::P), self.temp(Class::P));
        let (lut, edge) = if sub { (SUB_OVF, 0x7FFF_FFFF) } else { (ADD_OVF, 0x8000_0000) };
        let bu = Bundle::new()
            .iadd(true, D::Lo(d), S::Lo(a), false, S::Lo(b), sub)
            .use_(IADD::PP, p)
            .set(IADD::PP_NOT, sub)
            .lop3(D::T(t), S::Lo(a), S::Lo(b), S::Lo(d), lut)
            .isetp(CompOp::EQ, false, S::Lo(d), S::Imm(edge))
            .use_(ISETP::PP, p)
            .temp(ISETP::PU, q1)
            .isetp(CompOp::LT, true, S::Lo(t), S::Z)
            .set(ISETP::BOOLOP, mods::BoolOp::OR)
            .use_(ISETP::PP, q1)
            .temp(ISETP::PU, q2)
            .sel(D::Lo(f), S::Z, S::Imm(1), q2, true);
        self.emit_b(bu);
        out2(d, f)
    }

    pub fn sadd_cin32(&mut self, a: VReg, b: VReg, p: Pred) -> InstOutput {
        self.sovf_c32(a, b, p, false)
    }
    pub fn ssub_bin32(&mut self, a: VReg, b: VReg, p: Pred) -> InstOutput {
        self.sovf_c32(a, b, p, true)
    }

    /// The i64 twin of [`Self::sovf_c32`]: `r == MIN` is checked on both words.
    fn sovf_c64(&mut self, a: VReg, b: VReg, p: Pred, sub: bool) -> InstOutput {
        let d = self.temp(Class::RPair);
        let f = self.temp(Class::R);
        let t = self.temp(Class::R);
        let c = self.temp(Class::P);
        let q = self.temp(Class::P);
        let (lut, edge_lo, edge_hi) = if sub { (SUB_OVF, 0xFFFF_FFFF, 0x7FFF_FFFF) } else { (ADD_OVF, 0, 0x8000_0000) };
        let bu = Bundle::new()
            .iadd(true, D::Lo(d), S::Lo(a), false, S::Lo(b), sub)
            .use_(IADD::PP, p)
            .set(IADD::PP_NOT, sub)
            .temp(IADD::PU, c)
            .iadd(true, D::Hi(d), S::Hi(a), false, S::Hi(b), sub)
            .use_(IADD::PP, c)
            .set(IADD::PP_NOT, false)
            .lop3(D::T(t), S::Hi(a), S::Hi(b), S::Hi(d), lut)
            .isetp(CompOp::EQ, false, S::Lo(d), S::Imm(edge_lo))
            .use_(ISETP::PP, p)
            .temp(ISETP::PU, q)
            .isetp(CompOp::EQ, false, S::Hi(d), S::Imm(edge_hi))
            .use_(ISETP::PP, q)
            .temp(ISETP::PU, q)
            .isetp(CompOp::LT, true, S::Lo(t), S::Z)
            .set(ISETP::BOOLOP, mods::BoolOp::OR)
            .use_(ISETP::PP, q)
            .temp(ISETP::PU, q)
            .sel(D::Lo(f), S::Z, S::Imm(1), q, true);
        self.emit_b(bu);
        out2(d, f)
    }

    pub fn sadd_cin64(&mut self, a: VReg, b: VReg, p: Pred) -> InstOutput {
        self.sovf_c64(a, b, p, false)
    }
    pub fn ssub_bin64(&mut self, a: VReg, b: VReg, p: Pred) -> InstOutput {
        self.sovf_c64(a, b, p, true)
    }

    // ---- uadd_overflow_trap ----

    /// `IADD d, P, a, b` (+ `IADD.X` for i64), then `@P BPT.TRAP`.
    pub fn uadd_trap(&mut self, a: VReg, b: VReg, wide: bool) -> VReg {
        let d = self.temp(if wide { Class::RPair } else { Class::R });
        let c = self.temp(Class::P);
        let mut bu = Bundle::new().iadd(false, D::Lo(d), S::Lo(a), false, S::Lo(b), false);
        if wide {
            let c1 = self.temp(Class::P);
            bu = bu.temp(IADD::PU, c1).iadd(true, D::Hi(d), S::Hi(a), false, S::Hi(b), false).use_(IADD::PP, c1).set(IADD::PP_NOT, false);
        }
        self.emit_b(bu.def(IADD::PU, c));
        self.trap_if(c, false);
        d
    }

    // ---- pure helpers ----

    /// The largest unsigned value of a type of at most 32 bits.
    pub fn ty_umax(&mut self, ty: cranelift_codegen::ir::Type) -> u32 {
        (u64::MAX >> (64 - ty.bits())) as u32
    }
    /// The largest signed value.
    pub fn ty_smax(&mut self, ty: cranelift_codegen::ir::Type) -> u32 {
        (u64::MAX >> (65 - ty.bits())) as u32
    }
    /// The smallest signed value, sign-extended to 32 bits.
    pub fn ty_smin(&mut self, ty: cranelift_codegen::ir::Type) -> u32 {
        !(u64::MAX >> (65 - ty.bits())) as u32
    }
}
