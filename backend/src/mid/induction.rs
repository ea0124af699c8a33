//! Induction-variable analysis on Cranelift IR: counted single-block loops
//! ([`CountedLoop`]) and the values of such a loop that are affine in its
//! induction variable ([`affine`]). `opt_step_pointers` and
//! `opt_unroll_loops` read loops through it.
//!
//! **Counted loops.** A block `L` that branches to itself (`brif c, L(..),
//! E(..)` or `brif c, E(..), L(..)`), where one block parameter `i` is an
//! induction variable: its back-edge argument is `i + s` (an `iadd` in `L`
//! of `i` and a constant step `s > 0`: at most the type's signed maximum for
//! a signed loop, any non-zero unsigned value for an unsigned one), and the
//! loop goes on while `i + s < n` — signed or unsigned, in any of the
//! spellings (`icmp slt (i+s), n`, `icmp sgt n, (i+s)`, or `icmp sge (i+s),
//! n` with `L` the false target, …) — with `n` defined outside `L` or a
//! constant. The induction type is `i32` or `i64`.
//!
//! **The values `i` takes.** The body runs first with the entry value `i0`
//! (whatever `n` is), then with every `i + s` that is `< n`. When no `i + s`
//! wraps, these are values from `i0` up to `max(i0, n - 1)` (in the loop's
//! signedness); no `i + s` wraps exactly when `max(i0, n - 1) + s` is at
//! most the type's maximum (`CountedLoop::hi`).
//!
//! **Affine values.** The analysis sees why the loop works on machine
//! integers, not mathematical ones: a value `e` of the induction type is
//! affine when `e ≡ c + a·i (mod 2^bits)` for loop-invariant `a` and `c`,
//! built from `i` itself, values defined outside the loop, constants, and
//! `iadd`, `isub`, `ineg`, `imul` by an invariant and `ishl` by a constant
//! (all exact modulo `2^bits`). The congruence is all it promises: whether
//! an extension of `e` to 64 bits is affine too depends on the range of
//! `c + a·i` over the values `i` takes, which the pass that uses it checks.

use cranelift_codegen::cursor::FuncCursor;
use cranelift_codegen::ir::condcodes::{CondCode, IntCC};
use cranelift_codegen::ir::{types, Block, BlockCall, Function, InstBuilder, InstructionData, Opcode, Type, Value, ValueDef};

/// The constant `v` is, if an `iconst` defines it.
pub fn iconst(f: &Function, v: Value) -> Option<i64> {
    match f.dfg.value_def(v) {
        ValueDef::Result(inst, _) => match f.dfg.insts[inst] {
            InstructionData::UnaryImm { opcode: Opcode::Iconst, imm } => Some(imm.bits()),
            _ => None,
        },
        _ => None,
    }
}

/// The block that defines `v`.
pub fn def_block(f: &Function, v: Value) -> Option<Block> {
    match f.dfg.value_def(v) {
        ValueDef::Result(inst, _) => f.layout.inst_block(inst),
        ValueDef::Param(b, _) => Some(b),
        _ => None,
    }
}

/// The value arguments of a block call (`None` if one is not a value).
pub fn call_args(f: &Function, call: &BlockCall) -> Option<Vec<Value>> {
    call.args(&f.dfg.value_lists).map(|a| a.as_value()).collect()
}

/// `x` wrapped to the width of `ty`, sign-extended back to 64 bits.
pub fn wrap(ty: Type, x: i64) -> i64 {
    let bits = ty.bits();
    if bits >= 64 {
        x
    } else {
        (x << (64 - bits)) >> (64 - bits)
    }
}

/// `x` as an `iconst` of type `ty` holds it (zero-extended from the type's width).
pub fn imm(ty: Type, x: i64) -> i64 {
    let bits = ty.bits();
    if bits >= 64 {
        x
    } else {
        x & ((1i64 << bits) - 1)
    }
}

/// The values defined in `l` (its parameters and results) that instructions
/// of other blocks use.
pub fn escaping(f: &Function, l: Block) -> Vec<Value> {
    let mut out = Vec::new();
    for b in f.layout.blocks().filter(|&b| b != l) {
        for inst in f.layout.block_insts(b) {
            for v in f.dfg.inst_values(inst) {
                if def_block(f, v) == Some(l) && !out.contains(&v) {
                    out.push(v);
                }
            }
        }
    }
    out
}

/// How many branch edges lead to `b`.
pub fn preds(f: &Function, b: Block) -> usize {
    let mut n = 0;
    for blk in f.layout.blocks() {
        if let Some(t) = f.layout.last_inst(blk) {
            n += f.dfg.insts[t]
                .branch_destination(&f.dfg.jump_tables, &f.dfg.exception_tables)
                .iter()
                .filter(|c| c.block(&f.dfg.value_lists) == b)
                .count();
        }
    }
    n
}

/// Does every edge into `l` from another block pass plain values (a `jump`
/// or `brif`)?
pub fn plain_entries(f: &Function, l: Block) -> bool {
    for b in f.layout.blocks().filter(|&b| b != l) {
        let Some(t) = f.layout.last_inst(b) else { return false };
        let data = &f.dfg.insts[t];
        for call in data.branch_destination(&f.dfg.jump_tables, &f.dfg.exception_tables) {
            if call.block(&f.dfg.value_lists) == l
                && (!matches!(data.opcode(), Opcode::Jump | Opcode::Brif) || call_args(f, call).is_none())
            {
                return false;
            }
        }
    }
    true
}

/// Every edge into `l` from a block other than `l` and those of `except`
/// sent to `to` instead (with the same arguments).
pub fn redirect_entries(f: &mut Function, l: Block, to: Block, except: &[Block]) {
    let outside: Vec<Block> = f.layout.blocks().filter(|&b| b != l && b != to && !except.contains(&b)).collect();
    for b in outside {
        let Some(t) = f.layout.last_inst(b) else { continue };
        let dfg = &mut f.dfg;
        for call in dfg.insts[t].branch_destination_mut(&mut dfg.jump_tables, &mut dfg.exception_tables) {
            if call.block(&dfg.value_lists) == l {
                call.set_block(to, &mut dfg.value_lists);
            }
        }
    }
}

/// A counted single-block loop (module documentation).
#[derive(Clone, Debug)]
pub struct CountedLoop {
    pub block: Block,
    /// The index of the induction variable among the block's parameters.
    pub iv: usize,
    /// The step, positive (for an `i32` loop its unsigned value).
    pub step: i64,
    pub ty: Type,
    pub signed: bool,
    pub bound: Value,
    /// The bound, when it is a constant.
    pub bound_const: Option<i64>,
    /// Which target of the loop's `brif` is the back edge (0 or 1).
    pub back: usize,
}

/// Whether some block of `f` ends in a `brif` back to itself (what
/// [`CountedLoop::find`] looks for first): most functions have none.
pub fn has_single_block_loop(f: &Function) -> bool {
    f.layout.blocks().any(|l| {
        f.layout.last_inst(l).is_some_and(|t| match f.dfg.insts[t] {
            InstructionData::Brif { blocks, .. } => blocks.iter().any(|b| b.block(&f.dfg.value_lists) == l),
            _ => false,
        })
    })
}

impl CountedLoop {
    /// Recognizes `l` as a counted loop.
    pub fn find(f: &Function, l: Block) -> Option<CountedLoop> {
        let term = f.layout.last_inst(l)?;
        let InstructionData::Brif { arg: cond, blocks, .. } = f.dfg.insts[term] else { return None };
        let (t0, t1) = (blocks[0].block(&f.dfg.value_lists), blocks[1].block(&f.dfg.value_lists));
        // Which target is the back edge: the loop goes on when the condition is `on_true`.
        let (back, on_true) = match (t0 == l, t1 == l) {
            (true, false) => (0, true),
            (false, true) => (1, false),
            _ => return None,
        };
        if f.layout.entry_block() == Some(l) {
            return None;
        }
        let params = f.dfg.block_params(l);
        let back_args = call_args(f, &blocks[back])?;
        // The condition: an `icmp` in `L` of the next induction value and an outside bound.
        let ValueDef::Result(ci, _) = f.dfg.value_def(cond) else { return None };
        let InstructionData::IntCompare { opcode: Opcode::Icmp, cond: cc, args } = f.dfg.insts[ci] else { return None };
        if f.layout.inst_block(ci) != Some(l) {
            return None;
        }
        let cc = if on_true { cc } else { cc.complement() };
        let outside = |v: Value| def_block(f, v).is_some_and(|b| b != l) || iconst(f, v).is_some();
        let (next, bound, cc) = if outside(args[1]) {
            (args[0], args[1], cc)
        } else if outside(args[0]) {
            (args[1], args[0], cc.swap_args())
        } else {
            return None;
        };
        let signed = match cc {
            IntCC::SignedLessThan => true,
            IntCC::UnsignedLessThan => false,
            _ => return None,
        };
        // `next` is `i + s`, the back-edge argument of the parameter `i`.
        let ValueDef::Result(ni, _) = f.dfg.value_def(next) else { return None };
        let InstructionData::Binary { opcode: Opcode::Iadd, args: nargs } = f.dfg.insts[ni] else { return None };
        if f.layout.inst_block(ni) != Some(l) {
            return None;
        }
        let (iv_val, step) = match (iconst(f, nargs[0]), iconst(f, nargs[1])) {
            (None, Some(s)) => (nargs[0], s),
            (Some(s), None) => (nargs[1], s),
            _ => return None,
        };
        let iv = params.iter().position(|&p| p == iv_val)?;
        if back_args[iv] != next {
            return None;
        }
        let ty = f.dfg.value_type(iv_val);
        if ty != types::I32 && ty != types::I64 {
            return None;
        }
        let step = if ty == types::I32 { i64::from(step as u32) } else { step };
        let positive = if signed { wrap(ty, step) > 0 } else { step != 0 };
        if !positive || step < 0 {
            return None;
        }
        Some(CountedLoop { block: l, iv, step, ty, signed, bound, bound_const: iconst(f, bound), back })
    }

    /// The largest value of the induction type in the loop's signedness
    /// (as a 128-bit number).
    pub fn max(&self) -> i128 {
        match (self.ty.bits(), self.signed) {
            (32, true) => i128::from(i32::MAX),
            (32, false) => i128::from(u32::MAX),
            (_, true) => i128::from(i64::MAX),
            (_, false) => i128::from(u64::MAX),
        }
    }

    /// The smallest value of the induction type in the loop's signedness.
    pub fn min(&self) -> i128 {
        match (self.ty.bits(), self.signed) {
            (32, true) => i128::from(i32::MIN),
            (64, true) => i128::from(i64::MIN),
            _ => 0,
        }
    }

    /// `x`, a constant of the induction type, as a number in the loop's signedness.
    pub fn num(&self, x: i64) -> i128 {
        match (self.ty.bits(), self.signed) {
            (32, true) => i128::from(x as i32),
            (32, false) => i128::from(x as u32),
            (_, true) => i128::from(x),
            (_, false) => i128::from(x as u64),
        }
    }

    /// The range the largest value of `i` (`max(i0, n - 1)`) lies in, given
    /// the range of `i0`: with a constant bound exact, else up to the type's
    /// maximum less one (or `i0`'s).
    pub fn hi_range(&self, i0: (i128, i128)) -> (i128, i128) {
        match self.bound_const {
            Some(n) => {
                let n1 = self.num(n) - 1;
                (i0.0.max(n1), i0.1.max(n1))
            }
            // `n - 1` is below the maximum.
            None => (i0.0, i0.1.max(self.max() - 1)),
        }
    }
}

/// A loop-invariant value of the induction type, as an expression the
/// pass can evaluate at the pre-header.
#[derive(Clone, Debug, PartialEq)]
pub enum Inv {
    Const(i64),
    Val(Value),
    Add(Box<Inv>, Box<Inv>),
    Sub(Box<Inv>, Box<Inv>),
    Mul(Box<Inv>, Box<Inv>),
}

impl Inv {
    fn add(self, o: Inv, ty: Type) -> Inv {
        match (self, o) {
            (Inv::Const(a), Inv::Const(b)) => Inv::Const(wrap(ty, a.wrapping_add(b))),
            (Inv::Const(0), x) | (x, Inv::Const(0)) => x,
            (a, b) => Inv::Add(Box::new(a), Box::new(b)),
        }
    }

    fn sub(self, o: Inv, ty: Type) -> Inv {
        match (self, o) {
            (Inv::Const(a), Inv::Const(b)) => Inv::Const(wrap(ty, a.wrapping_sub(b))),
            (x, Inv::Const(0)) => x,
            (a, b) => Inv::Sub(Box::new(a), Box::new(b)),
        }
    }

    fn mul(self, o: Inv, ty: Type) -> Inv {
        match (self, o) {
            (Inv::Const(a), Inv::Const(b)) => Inv::Const(wrap(ty, a.wrapping_mul(b))),
            (Inv::Const(0), _) | (_, Inv::Const(0)) => Inv::Const(0),
            (Inv::Const(1), x) | (x, Inv::Const(1)) => x,
            (a, b) => Inv::Mul(Box::new(a), Box::new(b)),
        }
    }

    /// The constant this is, if it is one.
    pub fn konst(&self) -> Option<i64> {
        match *self {
            Inv::Const(c) => Some(c),
            _ => None,
        }
    }

    /// The value at `pos` (of type `ty`; the values it names must be valid there).
    pub fn emit(&self, pos: &mut FuncCursor, ty: Type) -> Value {
        match self {
            Inv::Const(c) => pos.ins().iconst(ty, imm(ty, *c)),
            Inv::Val(v) => *v,
            Inv::Add(a, b) => {
                let (a, b) = (a.emit(pos, ty), b.emit(pos, ty));
                pos.ins().iadd(a, b)
            }
            Inv::Sub(a, b) => {
                let (a, b) = (a.emit(pos, ty), b.emit(pos, ty));
                pos.ins().isub(a, b)
            }
            Inv::Mul(a, b) => {
                let (a, b) = (a.emit(pos, ty), b.emit(pos, ty));
                pos.ins().imul(a, b)
            }
        }
    }
}

/// `e ≡ c + a·i (mod 2^bits)`.
#[derive(Clone, Debug, PartialEq)]
pub struct Affine {
    pub a: Inv,
    pub c: Inv,
}

/// How deep [`affine`] looks through a value's definitions.
const MAX_DEPTH: u32 = 12;

/// `v` (of the induction type of `lp`) as an affine function of the
/// induction variable, when it is one (module documentation).
pub fn affine(f: &Function, lp: &CountedLoop, v: Value) -> Option<Affine> {
    affine_at(f, lp, v, 0)
}

fn affine_at(f: &Function, lp: &CountedLoop, v: Value, depth: u32) -> Option<Affine> {
    let ty = lp.ty;
    if f.dfg.value_type(v) != ty || depth > MAX_DEPTH {
        return None;
    }
    if let Some(k) = iconst(f, v) {
        return Some(Affine { a: Inv::Const(0), c: Inv::Const(wrap(ty, k)) });
    }
    let l = lp.block;
    if def_block(f, v) != Some(l) {
        return Some(Affine { a: Inv::Const(0), c: Inv::Val(v) });
    }
    let ValueDef::Result(inst, _) = f.dfg.value_def(v) else {
        // A parameter of the loop: the induction variable only.
        return (f.dfg.block_params(l)[lp.iv] == v).then_some(Affine { a: Inv::Const(1), c: Inv::Const(0) });
    };
    let sub = |x: Value| affine_at(f, lp, x, depth + 1);
    match f.dfg.insts[inst] {
        InstructionData::Binary { opcode: Opcode::Iadd, args } => {
            let (x, y) = (sub(args[0])?, sub(args[1])?);
            Some(Affine { a: x.a.add(y.a, ty), c: x.c.add(y.c, ty) })
        }
        InstructionData::Binary { opcode: Opcode::Isub, args } => {
            let (x, y) = (sub(args[0])?, sub(args[1])?);
            Some(Affine { a: x.a.sub(y.a, ty), c: x.c.sub(y.c, ty) })
        }
        InstructionData::Unary { opcode: Opcode::Ineg, arg } => {
            let x = sub(arg)?;
            Some(Affine { a: Inv::Const(0).sub(x.a, ty), c: Inv::Const(0).sub(x.c, ty) })
        }
        InstructionData::Binary { opcode: Opcode::Imul, args } => {
            let (x, y) = (sub(args[0])?, sub(args[1])?);
            // One side must be invariant (its coefficient zero).
            let (var, k) = if y.a == Inv::Const(0) {
                (x, y.c)
            } else if x.a == Inv::Const(0) {
                (y, x.c)
            } else {
                return None;
            };
            Some(Affine { a: var.a.mul(k.clone(), ty), c: var.c.mul(k, ty) })
        }
        InstructionData::Binary { opcode: Opcode::Ishl, args } => {
            let s = iconst(f, args[1])? as u32 & (ty.bits() - 1);
            let x = sub(args[0])?;
            let k = Inv::Const(wrap(ty, 1i64 << s));
            Some(Affine { a: x.a.mul(k.clone(), ty), c: x.c.mul(k, ty) })
        }
        _ => None,
    }
}

/// The range of `c + a·i` over `i` in `[lo, hi]`, in integers.
pub fn affine_range(a: i64, c: i128, lo: i128, hi: i128) -> (i128, i128) {
    let (x, y) = (c + i128::from(a) * lo, c + i128::from(a) * hi);
    (x.min(y), x.max(y))
}
