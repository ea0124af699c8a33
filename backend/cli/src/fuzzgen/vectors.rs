//! Vector statements of the program generator: their form ([`VStmt`]), their
//! generation ([`VecGen`], from a second random stream so that a seed's
//! scalar statements and arguments stay what they were) and their CLIF
//! (`B::vstmt`).
//!
//! Float vectors never pass their bits to an integer: CLIF leaves a NaN's
//! sign and payload open and cranelift-interpreter computes with the host's
//! (which Ursa's canonical NaN need not match), so a float lane reaches the
//! integers only through `fcvt_to_sint_sat` and `fcmp` (the same for every
//! NaN); float vectors are not stored, returned, passed, bit-cast to
//! integers, `bitselect`ed, `fcopysign`ed or reduced (`vhigh_bits`).

use cranelift_codegen::ir::condcodes::{FloatCC, IntCC};
use cranelift_codegen::ir::types::*;
use cranelift_codegen::ir::{Endianness, InstBuilder, MemFlagsData, Opcode, Type, Value};
use rand::rngs::SmallRng;
use rand::RngExt;

use super::ast::{Addr, Var, SLOT_SIZE};
use super::build::B;

/// The generator's vector types: every 128-bit one, and three 64-bit ones.
pub const VTYPES: [Type; 9] = [I8X16, I16X8, I32X4, I64X2, F32X4, F64X2, I8X8, I16X4, I32X2];

/// The vector types a signature (parameters, results) may have: the integer ones.
pub fn passable(t: Type) -> bool {
    t.is_vector() && t.lane_type().is_int()
}

/// A vector statement.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum VStmt {
    /// `dst = op args`: the result type is `dst`'s. Lane-wise operations,
    /// shifts (the amount a scalar), `splat`/`scalar_to_vector` (a float
    /// lane from an integer's bits), `select` (a scalar condition),
    /// `bitselect`, widening, narrowing, conversions, `swizzle`,
    /// reductions to a scalar and `bitcast`s.
    Op {
        op: Opcode,
        dst: Var,
        args: Vec<Var>,
    },
    Icmp {
        cc: IntCC,
        dst: Var,
        a: Var,
        b: Var,
    },
    Fcmp {
        cc: FloatCC,
        dst: Var,
        a: Var,
        b: Var,
    },
    /// `extractlane` into a scalar (a float lane through `fcvt_to_sint_sat`).
    Extract {
        dst: Var,
        a: Var,
        lane: u8,
    },
    /// `dst = insertlane a, x, lane` (a float lane from an integer's bits).
    Insert {
        dst: Var,
        a: Var,
        x: Var,
        lane: u8,
    },
    Shuffle {
        dst: Var,
        a: Var,
        b: Var,
        mask: [u8; 16],
    },
    /// A load (`store` false) into `v` or a store of `v`, in the stack slot.
    Mem {
        store: bool,
        v: Var,
        addr: Addr,
        big: bool,
        aligned: bool,
    },
}

impl VStmt {
    /// Applies `f` to every variable the statement reads or writes.
    pub fn each_var(&mut self, f: &mut dyn FnMut(&mut Var)) {
        match self {
            VStmt::Op { dst, args, .. } => {
                f(dst);
                args.iter_mut().for_each(f);
            }
            VStmt::Icmp { dst, a, b, .. } | VStmt::Fcmp { dst, a, b, .. } | VStmt::Shuffle { dst, a, b, .. } => {
                f(dst);
                f(a);
                f(b);
            }
            VStmt::Extract { dst, a, .. } => {
                f(dst);
                f(a);
            }
            VStmt::Insert { dst, a, x, .. } => {
                f(dst);
                f(a);
                f(x);
            }
            VStmt::Mem { v, addr, .. } => {
                f(v);
                if let Some(i) = &mut addr.index {
                    f(i);
                }
            }
        }
    }
}

const FLOAT_CCS: [FloatCC; 14] = [
    FloatCC::Ordered,
    FloatCC::Unordered,
    FloatCC::Equal,
    FloatCC::NotEqual,
    FloatCC::OrderedNotEqual,
    FloatCC::UnorderedOrEqual,
    FloatCC::LessThan,
    FloatCC::LessThanOrEqual,
    FloatCC::GreaterThan,
    FloatCC::GreaterThanOrEqual,
    FloatCC::UnorderedOrLessThan,
    FloatCC::UnorderedOrLessThanOrEqual,
    FloatCC::UnorderedOrGreaterThan,
    FloatCC::UnorderedOrGreaterThanOrEqual,
];

/// The integer vector of `t`'s lane width and count (a compare's result).
fn int_vec(t: Type) -> Type {
    t.as_int()
}

/// The integer scalar of `t`'s lane width.
fn lane_int(t: Type) -> Type {
    t.lane_type().as_int()
}

/// Draws vector statements over the variables `vars` of a function.
pub struct VecGen<'a> {
    pub r: &'a mut SmallRng,
    pub vars: &'a [Type],
}

impl VecGen<'_> {
    fn pick(&mut self, ok: impl Fn(Type) -> bool) -> Option<Var> {
        let c: Vec<Var> = (0..self.vars.len()).filter(|&v| ok(self.vars[v])).collect();
        (!c.is_empty()).then(|| c[self.r.random_range(0..c.len())])
    }
    /// A variable of type `t` (every function has one of each type).
    fn of(&mut self, t: Type) -> Var {
        self.pick(|u| u == t).expect("a variable of every type")
    }
    fn vtype(&mut self, ok: impl Fn(Type) -> bool) -> Type {
        let c: Vec<Type> = VTYPES.into_iter().filter(|&t| ok(t)).collect();
        c[self.r.random_range(0..c.len())]
    }
    fn one<T: Copy>(&mut self, xs: &[T]) -> T {
        xs[self.r.random_range(0..xs.len())]
    }

    /// One vector statement (a memory access: in the function's stack slot).
    pub fn stmt(&mut self) -> VStmt {
        use Opcode::*;
        let t = self.vtype(|_| true);
        let fl = t.lane_type().is_float();
        let wide = t.bits() == 128;
        match self.r.random_range(0..100u32) {
            0..=29 => {
                // Lane-wise.
                let lb = t.lane_bits();
                let (op, n) = if fl {
                    let ops: [(Opcode, usize); 13] = [
                        (Fadd, 2),
                        (Fsub, 2),
                        (Fmul, 2),
                        (Fdiv, 2),
                        (Fmin, 2),
                        (Fmax, 2),
                        (Fneg, 1),
                        (Fabs, 1),
                        (Sqrt, 1),
                        (Ceil, 1),
                        (Floor, 1),
                        (Trunc, 1),
                        (Nearest, 1),
                    ];
                    if self.r.random_bool(0.1) {
                        (Fma, 3)
                    } else {
                        self.one(&ops)
                    }
                } else {
                    let mut ops: Vec<(Opcode, usize)> = vec![
                        (Iadd, 2),
                        (Isub, 2),
                        (Imul, 2),
                        (Umin, 2),
                        (Umax, 2),
                        (Smin, 2),
                        (Smax, 2),
                        (Band, 2),
                        (Bor, 2),
                        (Bxor, 2),
                        (Ineg, 1),
                        (Iabs, 1),
                        (Bnot, 1),
                        (Popcnt, 1),
                        (Bitselect, 3),
                    ];
                    if lb <= 16 {
                        ops.extend([(UaddSat, 2), (SaddSat, 2), (UsubSat, 2), (SsubSat, 2), (AvgRound, 2)]);
                    }
                    if wide && (lb == 16 || lb == 32) {
                        ops.push((SqmulRoundSat, 2));
                    }
                    if wide && lb <= 32 {
                        ops.push((IaddPairwise, 2));
                    }
                    self.one(&ops)
                };
                let args = (0..n).map(|_| self.of(t)).collect();
                VStmt::Op { op, dst: self.of(t), args }
            }
            30..=36 if !fl => {
                let op = self.one(&[Ishl, Ushr, Sshr]);
                let amt = self.pick(|u| u.is_int() && !u.is_vector()).unwrap();
                VStmt::Op { op, dst: self.of(t), args: vec![self.of(t), amt] }
            }
            37..=44 => {
                let (a, b) = (self.of(t), self.of(t));
                let dst = self.of(int_vec(t));
                if fl {
                    VStmt::Fcmp { cc: self.one(&FLOAT_CCS), dst, a, b }
                } else {
                    VStmt::Icmp { cc: self.one(&super::gen::CCS), dst, a, b }
                }
            }
            45..=48 => {
                let c = self.pick(|u| u.is_int() && !u.is_vector() && u != I128).unwrap();
                VStmt::Op { op: Select, dst: self.of(t), args: vec![c, self.of(t), self.of(t)] }
            }
            49..=54 => {
                // A scalar into lanes.
                let x = self.of(lane_int(t));
                match self.r.random_range(0..3u32) {
                    0 => VStmt::Op { op: Splat, dst: self.of(t), args: vec![x] },
                    1 => VStmt::Op { op: ScalarToVector, dst: self.of(t), args: vec![x] },
                    _ => {
                        let lane = self.r.random_range(0..t.lane_count()) as u8;
                        VStmt::Insert { dst: self.of(t), a: self.of(t), x, lane }
                    }
                }
            }
            55..=61 => {
                let lane = self.r.random_range(0..t.lane_count()) as u8;
                // A float lane: through `fcvt_to_sint_sat` to the integer of its width.
                let dt = lane_int(t);
                VStmt::Extract { dst: self.of(dt), a: self.of(t), lane }
            }
            62..=66 => {
                // Reductions of integer vectors.
                let t = self.vtype(passable);
                match self.r.random_range(0..3u32) {
                    0 => VStmt::Op { op: VanyTrue, dst: self.of(I8), args: vec![self.of(t)] },
                    1 => VStmt::Op { op: VallTrue, dst: self.of(I8), args: vec![self.of(t)] },
                    _ => {
                        let d = self.pick(|u| u.is_int() && !u.is_vector() && u != I128).unwrap();
                        VStmt::Op { op: VhighBits, dst: d, args: vec![self.of(t)] }
                    }
                }
            }
            67..=70 => {
                let (a, b) = (self.of(I8X16), self.of(I8X16));
                if self.r.random_bool(0.5) {
                    let mut mask = [0u8; 16];
                    for m in &mut mask {
                        *m = self.r.random_range(0..32u8);
                    }
                    VStmt::Shuffle { dst: self.of(I8X16), a, b, mask }
                } else {
                    VStmt::Op { op: Swizzle, dst: self.of(I8X16), args: vec![a, b] }
                }
            }
            71..=78 => {
                // Widths and conversions (128-bit).
                let (op, from, to): (Opcode, Type, Type) = match self.r.random_range(0..6u32) {
                    0 => {
                        let (f, t) = self.one(&[(I8X16, I16X8), (I16X8, I32X4), (I32X4, I64X2)]);
                        (self.one(&[SwidenLow, SwidenHigh, UwidenLow, UwidenHigh]), f, t)
                    }
                    1 => {
                        let (f, t) = self.one(&[(I16X8, I8X16), (I32X4, I16X8), (I64X2, I32X4)]);
                        let op = self.one(&[Snarrow, Unarrow, Uunarrow]);
                        return VStmt::Op { op, dst: self.of(t), args: vec![self.of(f), self.of(f)] };
                    }
                    2 => self.one(&[(Fvdemote, F64X2, F32X4), (FvpromoteLow, F32X4, F64X2)]),
                    3 => {
                        let (f, t) = self.one(&[(I32X4, F32X4), (I64X2, F64X2)]);
                        (self.one(&[FcvtFromSint, FcvtFromUint]), f, t)
                    }
                    _ => {
                        let (f, t) = self.one(&[(F32X4, I32X4), (F64X2, I64X2)]);
                        (self.one(&[FcvtToSintSat, FcvtToUintSat]), f, t)
                    }
                };
                VStmt::Op { op, dst: self.of(to), args: vec![self.of(from)] }
            }
            79..=84 => {
                // Bits of an integer vector as another type of its width
                // (a float vector only from integer bits).
                let from = self.vtype(passable);
                let cands: Vec<Type> = VTYPES.into_iter().chain([I128, I64]).filter(|u| u.bits() == from.bits() && *u != from).collect();
                let to = self.one(&cands);
                if self.r.random_bool(0.3) {
                    // And back: a scalar of the width into a vector.
                    // (Not from an i64: cranelift-interpreter 0.135 cannot.)
                    if from.bits() == 128 {
                        let s = I128;
                        return VStmt::Op { op: Bitcast, dst: self.of(from), args: vec![self.of(s)] };
                    }
                }
                VStmt::Op { op: Bitcast, dst: self.of(to), args: vec![self.of(from)] }
            }
            85..=99 => {
                let store = self.r.random_bool(0.5);
                let t = if store { self.vtype(passable) } else { t };
                let size = t.bytes();
                let off = self.r.random_range(0..(SLOT_SIZE / 2) / size) * size;
                let index = if self.r.random_bool(0.3) { self.pick(|u| u.is_int() && !u.is_vector()) } else { None };
                let aligned = index.is_none() && self.r.random_bool(0.5);
                let addr = Addr { wide: self.r.random_bool(0.5), off, index };
                VStmt::Mem { store, v: self.of(t), addr, big: self.r.random_bool(0.25), aligned }
            }
            _ => VStmt::Op { op: Iadd, dst: self.of(I32X4), args: vec![self.of(I32X4), self.of(I32X4)] },
        }
    }
}

/// The vector constant of type `t` with the (low) bits `bits`.
pub fn vconst(b: &mut cranelift_frontend::FunctionBuilder, t: Type, bits: u128) -> Value {
    let bytes = bits.to_le_bytes()[..t.bytes() as usize].to_vec();
    let c = b.func.dfg.constants.insert(bytes.into());
    b.ins().vconst(t, c)
}

impl B<'_, '_> {
    /// `x`'s bits as a value of `t` (of the same width), or `x`.
    fn as_type(&mut self, x: Value, t: Type) -> Value {
        self.as_type_with(x, t, MemFlagsData::new())
    }

    /// `x`'s bits as a value of `t` by a `bitcast` with the flags `fl`, or `x`.
    fn as_type_with(&mut self, x: Value, t: Type, fl: MemFlagsData) -> Value {
        if self.b.func.dfg.value_type(x) == t {
            x
        } else {
            self.b.ins().bitcast(t, fl, x)
        }
    }

    /// The CLIF of one vector statement.
    pub(crate) fn vstmt(&mut self, s: &VStmt) {
        use Opcode::*;
        match s {
            VStmt::Op { op: Bitcast, dst, args } if self.reference && (self.tys[*dst] == I128 || self.tys[args[0]] == I128) => {
                // cranelift-interpreter 0.135 cannot bitcast between a vector
                // and an i128 (it takes the i128 for a lane): its copy goes
                // through the two i64 lanes of an i64x2.
                let ty = self.tys[*dst];
                let fl = MemFlagsData::new().with_endianness(Endianness::Little);
                let a = self.get(args[0]);
                let x = if ty == I128 {
                    let w = self.as_type_with(a, I64X2, fl);
                    let lo = self.b.ins().extractlane(w, 0);
                    let hi = self.b.ins().extractlane(w, 1);
                    self.b.ins().iconcat(lo, hi)
                } else {
                    let (lo, hi) = self.b.ins().isplit(a);
                    let w = self.b.ins().scalar_to_vector(I64X2, lo);
                    let w = self.b.ins().insertlane(w, hi, 1);
                    self.as_type_with(w, ty, fl)
                };
                self.set(*dst, x);
            }
            VStmt::Op { op, dst, args } => {
                let ty = self.tys[*dst];
                let mut a: Vec<Value> = args.iter().map(|&v| self.get(v)).collect();
                if matches!(op, Splat | ScalarToVector) {
                    a[0] = self.as_type(a[0], ty.lane_type());
                }
                let i = self.b.ins();
                let x = match op {
                    Fma | Bitselect => {
                        if *op == Fma {
                            i.fma(a[0], a[1], a[2])
                        } else {
                            i.bitselect(a[0], a[1], a[2])
                        }
                    }
                    Select => i.select(a[0], a[1], a[2]),
                    Splat => i.splat(ty, a[0]),
                    ScalarToVector => i.scalar_to_vector(ty, a[0]),
                    Bitcast => i.bitcast(ty, MemFlagsData::new().with_endianness(Endianness::Little), a[0]),
                    VanyTrue => i.vany_true(a[0]),
                    VallTrue => i.vall_true(a[0]),
                    VhighBits => i.vhigh_bits(ty, a[0]),
                    SwidenLow => i.swiden_low(a[0]),
                    SwidenHigh => i.swiden_high(a[0]),
                    UwidenLow => i.uwiden_low(a[0]),
                    UwidenHigh => i.uwiden_high(a[0]),
                    Fvdemote => i.fvdemote(a[0]),
                    FvpromoteLow => i.fvpromote_low(a[0]),
                    FcvtFromSint => i.fcvt_from_sint(ty, a[0]),
                    FcvtFromUint => i.fcvt_from_uint(ty, a[0]),
                    FcvtToSintSat => i.fcvt_to_sint_sat(ty, a[0]),
                    FcvtToUintSat => i.fcvt_to_uint_sat(ty, a[0]),
                    Fneg => i.fneg(a[0]),
                    Fabs => i.fabs(a[0]),
                    Sqrt => i.sqrt(a[0]),
                    Ceil => i.ceil(a[0]),
                    Floor => i.floor(a[0]),
                    Trunc => i.trunc(a[0]),
                    Nearest => i.nearest(a[0]),
                    Ineg => i.ineg(a[0]),
                    Iabs => i.iabs(a[0]),
                    Bnot => i.bnot(a[0]),
                    Popcnt => i.popcnt(a[0]),
                    Fadd => i.fadd(a[0], a[1]),
                    Fsub => i.fsub(a[0], a[1]),
                    Fmul => i.fmul(a[0], a[1]),
                    Fdiv => i.fdiv(a[0], a[1]),
                    Fmin => i.fmin(a[0], a[1]),
                    Fmax => i.fmax(a[0], a[1]),
                    Iadd => i.iadd(a[0], a[1]),
                    Isub => i.isub(a[0], a[1]),
                    Imul => i.imul(a[0], a[1]),
                    Umin => i.umin(a[0], a[1]),
                    Umax => i.umax(a[0], a[1]),
                    Smin => i.smin(a[0], a[1]),
                    Smax => i.smax(a[0], a[1]),
                    Band => i.band(a[0], a[1]),
                    Bor => i.bor(a[0], a[1]),
                    Bxor => i.bxor(a[0], a[1]),
                    UaddSat => i.uadd_sat(a[0], a[1]),
                    SaddSat => i.sadd_sat(a[0], a[1]),
                    UsubSat => i.usub_sat(a[0], a[1]),
                    SsubSat => i.ssub_sat(a[0], a[1]),
                    AvgRound => i.avg_round(a[0], a[1]),
                    SqmulRoundSat => i.sqmul_round_sat(a[0], a[1]),
                    IaddPairwise => i.iadd_pairwise(a[0], a[1]),
                    Ishl => i.ishl(a[0], a[1]),
                    Ushr => i.ushr(a[0], a[1]),
                    Sshr => i.sshr(a[0], a[1]),
                    Swizzle => i.swizzle(a[0], a[1]),
                    Snarrow => i.snarrow(a[0], a[1]),
                    Unarrow => i.unarrow(a[0], a[1]),
                    Uunarrow => i.uunarrow(a[0], a[1]),
                    _ => unreachable!("the generator makes no vector `{}`", op),
                };
                self.set(*dst, x);
            }
            VStmt::Icmp { cc, dst, a, b } => {
                let (a, b) = (self.get(*a), self.get(*b));
                let x = self.b.ins().icmp(*cc, a, b);
                self.set(*dst, x);
            }
            VStmt::Fcmp { cc, dst, a, b } => {
                let (a, b) = (self.get(*a), self.get(*b));
                let x = self.b.ins().fcmp(*cc, a, b);
                self.set(*dst, x);
            }
            VStmt::Extract { dst, a, lane } => {
                let a = self.get(*a);
                let mut x = self.b.ins().extractlane(a, *lane);
                if self.b.func.dfg.value_type(x).is_float() {
                    x = self.b.ins().fcvt_to_sint_sat(self.tys[*dst], x);
                }
                self.set(*dst, x);
            }
            VStmt::Insert { dst, a, x, lane } => {
                let ty = self.tys[*dst];
                let (a, x) = (self.get(*a), self.get(*x));
                let x = self.as_type(x, ty.lane_type());
                let v = self.b.ins().insertlane(a, x, *lane);
                self.set(*dst, v);
            }
            VStmt::Shuffle { dst, a, b, mask } => {
                let (a, b) = (self.get(*a), self.get(*b));
                let m = self.b.func.dfg.immediates.push(mask.to_vec().into());
                let x = self.b.ins().shuffle(a, b, m);
                self.set(*dst, x);
            }
            VStmt::Mem { store, v, addr, big, aligned } => {
                let ty = self.tys[*v];
                let p = self.addr(addr, false);
                let mut fl = Self::flags(*big);
                if *aligned {
                    fl = fl.with_aligned();
                }
                if *store {
                    let x = self.get(*v);
                    self.b.ins().store(fl, x, p, 0);
                } else {
                    let x = self.b.ins().load(ty, fl, p, 0);
                    self.set(*v, x);
                }
            }
        }
    }
}
