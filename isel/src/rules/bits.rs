//! Constructors for `isle/lower/bits.isle`: counts and bit/byte reversal
//! with the XU instructions (FLO, POPC, BREV) and PRMT.
//!
//! `FLO.U32 x` is the index of the highest 1 bit of `x`, or -1 (0xFFFFFFFF)
//! for 0, so `clz = 31 - FLO.U32(x)` (32 for 0). `FLO.S32` looks at `~x` for
//! a negative `x`, so `cls = 30 - FLO.S32(x)` (31 for 0 and -1).
//! `ctz = POPC((x - 1) & ~x)`: the ones below the lowest 1 bit (all of them
//! for 0); masked to the type's bits for narrow values.

use crate::lower::Lower;
use crate::machine::{LUT_A, LUT_B, LUT_C};
use crate::rules::ops::Xu1;
use crate::rules::ops::{Pieces, D, S};
use crate::vcode::{Bundle, Class, VReg};
use cranelift_codegen::ir::{types, Inst, InstructionData, Opcode, Value, ValueDef};
use ursa_emit::forms::{self, PRMT_RRR};
use ursa_emit::mods::SHFDType;
use ursa_emit::mods::{CompOp, PRMTMode};
use ursa_emit::optypes::{IADD, ISETP};

impl Lower<'_> {
    /// `n - 1 - FLO.U32(x)` for a zero-extended `x` of `n` bits.
    pub fn clz32(&mut self, x: VReg, n: u32) -> VReg {
        let d = self.temp(Class::R);
        let f = self.temp(Class::R);
        self.emit_b(Bundle::new().flo(false, D::T(f), S::Lo(x)).iadd(false, D::Lo(d), S::Lo(f), true, S::Imm(n - 1), false));
        d
    }

    /// `hi != 0 ? 31 - FLO(hi) : 63 - FLO(lo)`; the high word of the result is 0.
    pub fn clz64(&mut self, x: VReg) -> VReg {
        let d = self.temp(Class::RPair);
        let (fh, fl, rh, rl) = (self.temp(Class::R), self.temp(Class::R), self.temp(Class::R), self.temp(Class::R));
        let p = self.temp(Class::P);
        let bu = Bundle::new()
            .flo(false, D::T(fh), S::Hi(x))
            .flo(false, D::T(fl), S::Lo(x))
            .isetp(CompOp::NE, false, S::Hi(x), S::Z)
            .temp(ISETP::PU, p)
            .iadd(false, D::T(rh), S::Lo(fh), true, S::Imm(31), false)
            .iadd(false, D::T(rl), S::Lo(fl), true, S::Imm(63), false)
            .sel(D::Lo(d), S::Lo(rh), S::Lo(rl), p, false)
            .mov(D::Hi(d), S::Z);
        self.emit_b(bu);
        d
    }

    /// `n - 2 - FLO.S32(x)` for a sign-extended `x` of `n` bits.
    pub fn cls32(&mut self, x: VReg, n: u32) -> VReg {
        let d = self.temp(Class::R);
        let f = self.temp(Class::R);
        self.emit_b(Bundle::new().flo(true, D::T(f), S::Lo(x)).iadd(false, D::Lo(d), S::Lo(f), true, S::Imm(n - 2), false));
        d
    }

    /// The high word decides unless it is all sign bits; then the low word,
    /// xored with the sign, continues the count: `62 - FLO.U32(lo ^ s)`.
    pub fn cls64(&mut self, x: VReg) -> VReg {
        let d = self.temp(Class::RPair);
        let (s, l, ph, pl, rh, rl) =
            (self.temp(Class::R), self.temp(Class::R), self.temp(Class::R), self.temp(Class::R), self.temp(Class::R), self.temp(Class::R));
        let p = self.temp(Class::P);
        let bu = Bundle::new()
            .shf(false, true, false, SHFDType::S32, D::T(s), S::Z, S::Imm(31), S::Hi(x))
            .lop3(D::T(l), S::Lo(x), S::Z, S::Lo(s), LUT_A ^ LUT_C)
            .flo(true, D::T(ph), S::Hi(x))
            .flo(false, D::T(pl), S::Lo(l))
            .isetp(CompOp::NE, false, S::Hi(x), S::Lo(s))
            .temp(ISETP::PU, p)
            .iadd(false, D::T(rh), S::Lo(ph), true, S::Imm(30), false)
            .iadd(false, D::T(rl), S::Lo(pl), true, S::Imm(62), false)
            .sel(D::Lo(d), S::Lo(rh), S::Lo(rl), p, false)
            .mov(D::Hi(d), S::Z);
        self.emit_b(bu);
        d
    }

    /// `POPC((x - 1) & mask & ~x)`.
    pub fn ctz32(&mut self, x: VReg, mask: u32) -> VReg {
        let d = self.temp(Class::R);
        let (t, u) = (self.temp(Class::R), self.temp(Class::R));
        let (m, lut) = if mask == u32::MAX { (S::Z, LUT_A & !LUT_C) } else { (S::Imm(mask), LUT_A & LUT_B & !LUT_C) };
        let bu = Bundle::new()
            .iadd(false, D::T(t), S::Lo(x), false, S::Imm(u32::MAX), false)
            .lop3(D::T(u), S::Lo(t), m, S::Lo(x), lut)
            .xu1(Xu1::Popc, D::Lo(d), S::Lo(u));
        self.emit_b(bu);
        d
    }

    /// `POPC` of both words of `(x - 1) & ~x`, added.
    pub fn ctz64(&mut self, x: VReg) -> VReg {
        let d = self.temp(Class::RPair);
        let (t0, t1, c0, c1) = (self.temp(Class::R), self.temp(Class::R), self.temp(Class::R), self.temp(Class::R));
        let c = self.temp(Class::P);
        let andn = LUT_A & !LUT_C;
        let bu = Bundle::new()
            .iadd(false, D::T(t0), S::Lo(x), false, S::Imm(u32::MAX), false)
            .temp(IADD::PU, c)
            .iadd(true, D::T(t1), S::Hi(x), false, S::Imm(u32::MAX), false)
            .use_(IADD::PP, c)
            .set(IADD::PP_NOT, false)
            .lop3(D::T(t0), S::Lo(t0), S::Z, S::Lo(x), andn)
            .lop3(D::T(t1), S::Lo(t1), S::Z, S::Hi(x), andn)
            .xu1(Xu1::Popc, D::T(c0), S::Lo(t0))
            .xu1(Xu1::Popc, D::T(c1), S::Lo(t1))
            .iadd(false, D::Lo(d), S::Lo(c0), false, S::Lo(c1), false)
            .mov(D::Hi(d), S::Z);
        self.emit_b(bu);
        d
    }

    pub fn popc32(&mut self, x: VReg) -> VReg {
        let d = self.temp(Class::R);
        self.emit_b(Bundle::new().xu1(Xu1::Popc, D::Lo(d), S::Lo(x)));
        d
    }

    pub fn popc64(&mut self, x: VReg) -> VReg {
        let d = self.temp(Class::RPair);
        let (c0, c1) = (self.temp(Class::R), self.temp(Class::R));
        let bu = Bundle::new()
            .xu1(Xu1::Popc, D::T(c0), S::Lo(x))
            .xu1(Xu1::Popc, D::T(c1), S::Hi(x))
            .iadd(false, D::Lo(d), S::Lo(c0), false, S::Lo(c1), false)
            .mov(D::Hi(d), S::Z);
        self.emit_b(bu);
        d
    }

    pub fn brev32(&mut self, x: VReg) -> VReg {
        let d = self.temp(Class::R);
        self.emit_b(Bundle::new().xu1(Xu1::Brev, D::Lo(d), S::Lo(x)));
        d
    }

    /// Each word reversed into the other.
    pub fn brev64(&mut self, x: VReg) -> VReg {
        let d = self.temp(Class::RPair);
        self.emit_b(Bundle::new().xu1(Xu1::Brev, D::Lo(d), S::Hi(x)).xu1(Xu1::Brev, D::Hi(d), S::Lo(x)));
        d
    }

    /// `PRMT d, x, RZ, sel`.
    pub fn prmt_imm(&mut self, x: VReg, sel: u32) -> VReg {
        let d = self.temp(Class::R);
        self.emit_b(Bundle::new().prmt(D::Lo(d), S::Lo(x), S::Z, sel));
        d
    }

    /// The byte of the eight bytes `b:a` (`a` the low word) that the low
    /// nibble of `i` selects, in the low byte: `PRMT d, a, b, i` (a nibble of
    /// 8 or more replicates a sign: only for an `i` whose bit 3 is clear).
    pub fn byte_of_pair_raw(&mut self, a: VReg, b: VReg, i: VReg) -> VReg {
        let d = self.temp(Class::R);
        self.emit_b(
            Bundle::new()
                .inst(forms::PRMT_RRR)
                .set(PRMT_RRR::MODE, PRMTMode::IDX)
                .def(PRMT_RRR::RD, d)
                .use_(PRMT_RRR::RA, a)
                .use_(PRMT_RRR::RB, b)
                .use_(PRMT_RRR::RC, i),
        );
        d
    }

    /// Byte `i & 7` of the eight bytes `b:a` (`a` the low word), in the low
    /// byte: `LOP3 s, i, 0x7` and `PRMT d, a, b, s` (a selector nibble of
    /// at most 7 picks a byte without replicating its sign).
    pub fn byte_of_pair(&mut self, a: VReg, b: VReg, i: VReg) -> VReg {
        let s = self.lop3_ri(i, 7, LUT_A & LUT_B);
        self.byte_of_pair_raw(a, b, s)
    }

    /// Each word byte-swapped into the other.
    pub fn bswap64(&mut self, x: VReg) -> VReg {
        let d = self.temp(Class::RPair);
        self.emit_b(Bundle::new().prmt(D::Lo(d), S::Hi(x), S::Z, 0x0123).prmt(D::Hi(d), S::Lo(x), S::Z, 0x0123));
        d
    }
}

/// A byte of a value the byte gather of [`Lower::byte_plan`] follows: zero,
/// byte `k` of a source value, or undefined (above a narrow value's width).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Byte {
    Zero,
    Of(Value, u8),
    Undef,
}

/// The bytes of a 32-bit register holding a value, lowest first.
type Bytes = [Byte; 4];

/// How deep [`Lower::byte_plan`] follows operands from the `bor` it plans.
const GATHER_DEPTH: u32 = 8;

/// The plan of a byte gather: its sources (at most four) and, per byte of
/// the result, the index of its source and the byte in it, or `None` (zero
/// within the result's width, anything above it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BytePlan {
    srcs: [Option<Value>; 4],
    bytes: [Option<(u8, u8)>; 4],
    /// The result's width in bytes (2 or 4).
    width: u8,
}

impl Lower<'_> {
    /// The plan of `root`, an `i16` or `i32` `bor`, as a gather of bytes
    /// PRMT makes (see `bits.isle`): `None` where an operand does something
    /// else than move whole bytes, where two operands give the same byte,
    /// or where the sources are more than PRMTs of two can take.
    pub fn byte_plan(&mut self, root: Inst) -> Option<BytePlan> {
        let v = self.f.dfg.first_result(root);
        let ty = self.f.dfg.value_type(v);
        if ty != types::I16 && ty != types::I32 {
            return None;
        }
        let width = ty.bytes() as usize;
        let bytes = self.bytes_of(v, GATHER_DEPTH)?;
        let mut srcs: [Option<Value>; 4] = [None; 4];
        let mut plan = [None; 4];
        let mut zeros = false;
        for p in 0..width {
            match bytes[p] {
                Byte::Of(s, k) => {
                    let i = match srcs.iter().position(|&x| x == Some(s)) {
                        Some(i) => i,
                        None => {
                            let i = srcs.iter().position(|x| x.is_none())?;
                            srcs[i] = Some(s);
                            i
                        }
                    };
                    plan[p] = Some((i as u8, k));
                }
                Byte::Zero => zeros = true,
                Byte::Undef => return None,
            }
        }
        let n = srcs.iter().flatten().count();
        // A zero byte comes from RZ as the second source; three or four
        // sources leave none free.
        if n == 0 || (zeros && n > 1) {
            return None;
        }
        Some(BytePlan { srcs, bytes: plan, width: width as u8 })
    }

    /// The bytes of `v` (the low `v`'s width of them defined) in terms of the
    /// values they are moved from; `None` where that is not a move of whole
    /// bytes (`depth`: how many more definitions to follow).
    fn bytes_of(&mut self, v: Value, depth: u32) -> Option<Bytes> {
        let f = self.f;
        let v = f.dfg.resolve_aliases(v);
        let ty = f.dfg.value_type(v);
        if !ty.is_int() || ty.bits() > 32 {
            return None;
        }
        let width = ty.bytes() as usize;
        let own = || {
            let mut b = [Byte::Undef; 4];
            for (k, x) in b.iter_mut().enumerate().take(width) {
                *x = Byte::Of(v, k as u8);
            }
            b
        };
        // A constant: zero bytes if it is 0; any other is an immediate of
        // the LOP3s, no source register.
        if let Some(k) = crate::context::const_bits(self, v) {
            return (k == 0).then_some([Byte::Zero; 4]);
        }
        let ValueDef::Result(inst, _) = f.dfg.value_def(v) else { return Some(own()) };
        if depth == 0 {
            return Some(own());
        }
        let shift =
            |x: Value| crate::context::const_bits(self, x).filter(|k| k % 8 == 0 && *k < 8 * width as u64).map(|k| (k / 8) as usize);
        let mut out = [Byte::Undef; 4];
        match f.dfg.insts[inst] {
            InstructionData::Binary { opcode: Opcode::Bor, args } => {
                let a = self.bytes_of(args[0], depth - 1)?;
                let b = self.bytes_of(args[1], depth - 1)?;
                for p in 0..width {
                    out[p] = match (a[p], b[p]) {
                        (Byte::Zero, x) | (x, Byte::Zero) => x,
                        _ => return None,
                    };
                }
            }
            InstructionData::Binary { opcode: Opcode::Ishl, args } => {
                let Some(k) = shift(args[1]) else { return Some(own()) };
                let a = self.bytes_of(args[0], depth - 1)?;
                for p in 0..width {
                    out[p] = if p < k { Byte::Zero } else { a[p - k] };
                }
            }
            InstructionData::Binary { opcode: Opcode::Ushr, args } => {
                let Some(k) = shift(args[1]) else { return Some(own()) };
                let a = self.bytes_of(args[0], depth - 1)?;
                for p in 0..width {
                    out[p] = if p + k < width { a[p + k] } else { Byte::Zero };
                }
            }
            InstructionData::Binary { opcode: Opcode::Band, args } => {
                let (x, mask) = match (crate::context::const_bits(self, args[0]), crate::context::const_bits(self, args[1])) {
                    (None, Some(m)) => (args[0], m),
                    (Some(m), None) => (args[1], m),
                    _ => return Some(own()),
                };
                let byte_mask = (0..width).all(|p| matches!((mask >> (8 * p)) & 0xff, 0 | 0xff));
                if !byte_mask {
                    return Some(own());
                }
                let a = self.bytes_of(x, depth - 1)?;
                for p in 0..width {
                    out[p] = if (mask >> (8 * p)) & 0xff == 0xff { a[p] } else { Byte::Zero };
                }
            }
            InstructionData::Unary { opcode: Opcode::Uextend, arg } => {
                let a = self.bytes_of(arg, depth - 1)?;
                let from = f.dfg.value_type(arg).bytes() as usize;
                for p in 0..width {
                    out[p] = if p < from { a[p] } else { Byte::Zero };
                }
            }
            InstructionData::Unary { opcode: Opcode::Ireduce, arg } => {
                let a = self.bytes_of(arg, depth - 1)?;
                out[..width].copy_from_slice(&a[..width]);
            }
            _ => return Some(own()),
        }
        // A byte of the value is never undefined: each comes from a source
        // byte or is zero, within the width of what it is taken from.
        out[..width].iter().all(|b| *b != Byte::Undef).then_some(out)
    }

    /// The PRMTs of `plan`: one of its two sources (or of its source and
    /// RZ), or two of pairs of sources and one that merges them.
    pub fn gather_bytes(&mut self, plan: BytePlan) -> VReg {
        let mut regs = [None; 4];
        for (r, s) in regs.iter_mut().zip(plan.srcs) {
            *r = s.map(|v| self.put_in_reg(v));
        }
        // Selector of the bytes whose source index is in `pair` (the first
        // of the pair the low word), other bytes zero from RZ (nibble 4),
        // which only a one-source gather needs (bytes above the result's
        // width have no source in the plan).
        let selector = |pair: [usize; 2]| {
            let mut sel = 0u32;
            for p in 0..4 {
                let nibble = match plan.bytes[p] {
                    Some((i, k)) if i as usize == pair[0] => k as u32,
                    Some((i, k)) if i as usize == pair[1] => 4 + k as u32,
                    _ => 4,
                };
                sel |= nibble << (4 * p);
            }
            sel
        };
        let src = |i: usize| regs[i].map_or(S::Z, S::Lo);
        let d = self.temp(Class::R);
        // (The plan fills its source slots in order: two sources or fewer
        // leave the third empty.)
        if regs[2].is_none() {
            self.emit_b(Bundle::new().prmt(D::Lo(d), src(0), src(1), selector([0, 1])));
            return d;
        }
        let (lo, hi) = (self.temp(Class::R), self.temp(Class::R));
        self.emit_b(Bundle::new().prmt(D::Lo(lo), src(0), src(1), selector([0, 1])));
        self.emit_b(Bundle::new().prmt(D::Lo(hi), src(2), src(3), selector([2, 3])));
        // Byte p from `lo` where sources 0 or 1 give it, else from `hi`.
        let mut sel = 0u32;
        for p in 0..4 {
            let from_hi = matches!(plan.bytes[p], Some((i, _)) if i >= 2);
            sel |= (if from_hi { 4 + p as u32 } else { p as u32 }) << (4 * p);
        }
        self.emit_b(Bundle::new().prmt(D::Lo(d), S::Lo(lo), S::Lo(hi), sel));
        d
    }
}
