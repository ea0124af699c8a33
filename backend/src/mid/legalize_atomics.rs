//! Atomics the machine has no instruction for, rewritten into compare-and-swap
//! loops in Cranelift IR before instruction selection
//! (`docs/isa-extensions.md` §7.5, `docs/kernels.md`):
//!
//! * `atomic_rmw nand` on i32/i64 (ATOM has no NAND);
//! * `atomic_rmw` (every operation) and `atomic_cas` on i8/i16 (ATOM is 32-
//!   or 64-bit): they work on the aligned 32-bit word that holds the value.
//!
//! ```text
//! B:    [narrow: atomic_load.T p (faults if p is misaligned)
//!        wa = p & ~3 ; sh = (p & 3) * 8 ; mask = (2^bits - 1) << sh]
//!       w0 = atomic_load.W wa ; jump L(w0)
//! L(w): old = extract(w) ; new = op(old, x) ; w' = insert(w, new)
//!       got = atomic_cas.W wa, w, w' ; brif (got == w), E(old), L(got)
//! E(v): ...                                    ; v is the result
//! ```
//!
//! `extract(w)` is `ireduce (w >> sh)` for a narrow value (little-endian) and
//! `w` itself otherwise; `insert(w, n)` is `(w & ~mask) | ((uextend n << sh) &
//! mask)`. A narrow `atomic_cas` leaves the loop without storing when the
//! value differs from the expected one. The loads and CASes are CLIF atomics
//! themselves, so the whole operation is sequentially consistent.

use cranelift_codegen::cursor::{Cursor, FuncCursor};
use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{types, AtomicRmwOp, BlockArg, Function, Inst, InstBuilder, InstructionData, Type, Value};

/// Rewrites every atomic of `f` that needs a loop.
pub fn legalize_atomics(f: &mut Function) {
    let mut todo = Vec::new();
    for b in f.layout.blocks() {
        for inst in f.layout.block_insts(b) {
            // A 32-bit address is left to instruction selection, which
            // reports it (ATOM takes a 64-bit generic address).
            let wide_addr = f.dfg.inst_args(inst).first().is_some_and(|&a| f.dfg.value_type(a) == types::I64);
            match f.dfg.insts[inst] {
                _ if !wide_addr => {}
                InstructionData::AtomicRmw { op, args, .. } => {
                    let ty = f.dfg.value_type(args[1]);
                    if op == AtomicRmwOp::Nand && (ty == types::I32 || ty == types::I64) || ty == types::I8 || ty == types::I16 {
                        todo.push(inst);
                    }
                }
                InstructionData::AtomicCas { args, .. } => {
                    let ty = f.dfg.value_type(args[1]);
                    if ty == types::I8 || ty == types::I16 {
                        todo.push(inst);
                    }
                }
                _ => {}
            }
        }
    }
    for inst in todo {
        rewrite(f, inst);
    }
}

/// Where a value of type `ty` sits in the memory word the loop updates.
struct Word {
    /// Type of the word (i32 for a narrow value).
    wty: Type,
    /// Address of the word.
    addr: Value,
    /// Narrow values: (shift, mask) as i32 values.
    lane: Option<(Value, Value)>,
}

impl Word {
    fn extract(&self, pos: &mut FuncCursor, ty: Type, w: Value) -> Value {
        match self.lane {
            None => w,
            Some((sh, _)) => {
                let s = pos.ins().ushr(w, sh);
                pos.ins().ireduce(ty, s)
            }
        }
    }

    fn insert(&self, pos: &mut FuncCursor, w: Value, n: Value) -> Value {
        match self.lane {
            None => n,
            Some((sh, mask)) => {
                let keep = pos.ins().band_not(w, mask);
                let wide = pos.ins().uextend(types::I32, n);
                let moved = pos.ins().ishl(wide, sh);
                let part = pos.ins().band(moved, mask);
                pos.ins().bor(keep, part)
            }
        }
    }
}

fn rewrite(f: &mut Function, inst: Inst) {
    let block = f.layout.inst_block(inst).expect("inst in layout");
    let result = f.dfg.first_result(inst);
    let ty = f.dfg.value_type(result);
    let data = f.dfg.insts[inst];
    let (p, op, x, cas, flags) = match data {
        InstructionData::AtomicRmw { op, args, flags, .. } => (args[0], Some(op), args[1], None, f.dfg.mem_flags[flags]),
        InstructionData::AtomicCas { args, flags, .. } => (args[0], None, args[1], Some(args[2]), f.dfg.mem_flags[flags]),
        _ => unreachable!("only atomics are collected"),
    };
    let mut pos = FuncCursor::new(f).at_inst(inst);
    pos.use_srcloc(inst);
    let word = if ty.bits() < 32 {
        // A misaligned address faults here (MISALIGNED_ADDRESS), as the
        // access itself would, instead of touching the wrong bytes.
        pos.ins().atomic_load(ty, flags, p);
        let down = pos.ins().iconst(types::I64, -4);
        let addr = pos.ins().band(p, down);
        let three = pos.ins().iconst(types::I64, 3);
        let byte = pos.ins().band(p, three);
        let byte = pos.ins().ireduce(types::I32, byte);
        let three32 = pos.ins().iconst(types::I32, 3);
        let sh = pos.ins().ishl(byte, three32);
        let ones = pos.ins().iconst(types::I32, (1i64 << ty.bits()) - 1);
        let mask = pos.ins().ishl(ones, sh);
        Word { wty: types::I32, addr, lane: Some((sh, mask)) }
    } else {
        Word { wty: ty, addr: p, lane: None }
    };
    let w0 = pos.ins().atomic_load(word.wty, flags, word.addr);

    let exit = pos.func.dfg.make_block();
    let lp = pos.func.dfg.make_block();
    pos.func.layout.split_block(exit, inst);
    pos.func.layout.insert_block(lp, exit);
    pos.goto_bottom(block);
    pos.ins().jump(lp, &[BlockArg::Value(w0)]);

    let w = pos.func.dfg.append_block_param(lp, word.wty);
    pos.goto_bottom(lp);
    let old = word.extract(&mut pos, ty, w);
    let new = match (op, cas) {
        (Some(op), _) => match op {
            AtomicRmwOp::Add => pos.ins().iadd(old, x),
            AtomicRmwOp::Sub => pos.ins().isub(old, x),
            AtomicRmwOp::And => pos.ins().band(old, x),
            AtomicRmwOp::Nand => {
                let a = pos.ins().band(old, x);
                pos.ins().bnot(a)
            }
            AtomicRmwOp::Or => pos.ins().bor(old, x),
            AtomicRmwOp::Xor => pos.ins().bxor(old, x),
            AtomicRmwOp::Xchg => x,
            AtomicRmwOp::Umin => pos.ins().umin(old, x),
            AtomicRmwOp::Umax => pos.ins().umax(old, x),
            AtomicRmwOp::Smin => pos.ins().smin(old, x),
            AtomicRmwOp::Smax => pos.ins().smax(old, x),
        },
        (None, Some(replacement)) => {
            // atomic_cas: leave without storing when the value differs.
            let store = pos.func.dfg.make_block();
            pos.func.layout.insert_block(store, exit);
            let differs = pos.ins().icmp(IntCC::NotEqual, old, x);
            pos.ins().brif(differs, exit, &[BlockArg::Value(old)], store, &[]);
            pos.goto_bottom(store);
            replacement
        }
        (None, None) => unreachable!("rmw or cas"),
    };
    let w2 = word.insert(&mut pos, w, new);
    let got = pos.ins().atomic_cas(flags, word.addr, w, w2);
    let done = pos.ins().icmp(IntCC::Equal, got, w);
    pos.ins().brif(done, exit, &[BlockArg::Value(old)], lp, &[BlockArg::Value(got)]);

    let v = pos.func.dfg.append_block_param(exit, ty);
    pos.func.dfg.detach_inst_results(inst);
    pos.func.layout.remove_inst(inst);
    pos.func.dfg.change_to_alias(result, v);
}
