//! Atomics the machine has no instruction for, rewritten into compare-and-swap
//! loops in Cranelift IR before instruction selection
//! (`docs/isa-extensions.md` §7.5, `docs/kernels.md`):
//!
//! * `atomic_rmw nand` on i32/i64 (ATOM has no NAND);
//! * `atomic_rmw` (every operation) and `atomic_cas` on i8/i16 (ATOM is 32-
//!   or 64-bit): they work on the aligned 32-bit word that holds the value;
//! * `atomic_rmw` and `atomic_cas` of 16 bits or more with the `big` flag
//!   (ATOM works on little-endian memory): the loop byte-swaps the value.
//!
//! A big-endian `atomic_load`/`atomic_store` of 16 bits or more becomes the
//! little-endian access and a `bswap` of the value. No atomic of more than 8
//! bits leaves this pass with the `big` flag: the machine's accesses are
//! little-endian, and for a byte the order does not matter.
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
//! `extract(w)` is `ireduce (w >> sh)` for a narrow value and `w` itself
//! otherwise; `insert(w, n)` is `(w & ~mask) | ((uextend n << sh) & mask)`
//! (`n` itself for a full word). The word is read and written little-endian,
//! so `sh = (p & 3) * 8` holds for both byte orders; for a big-endian value
//! `extract` ends and `insert` begins with a `bswap` of the value (an i8 has
//! one byte and needs none). A narrow `atomic_cas` leaves the loop without storing when the
//! value differs from the expected one. The loads and CASes are CLIF atomics
//! themselves, so the whole operation is sequentially consistent.

use cranelift_codegen::cursor::{Cursor, FuncCursor};
use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{
    types, AtomicRmwOp, BlockArg, Endianness, Function, Inst, InstBuilder, InstructionData, MemFlags, MemFlagsData, Opcode, Type, Value,
};

/// Rewrites every atomic of `f` that needs a loop or a byte swap.
pub fn legalize_atomics(f: &mut Function) {
    let is_atomic = |op| matches!(op, Opcode::AtomicRmw | Opcode::AtomicCas | Opcode::AtomicLoad | Opcode::AtomicStore);
    if !super::may_have(f, is_atomic) {
        return;
    }
    let mut todo = Vec::new();
    let mut swaps = Vec::new();
    for b in f.layout.blocks() {
        for inst in f.layout.block_insts(b) {
            // Most instructions are no atomic access.
            if !is_atomic(f.dfg.insts[inst].opcode()) {
                continue;
            }
            // A 32-bit address is left to instruction selection, which
            // reports it (ATOM takes a 64-bit generic address).
            let addr = match f.dfg.insts[inst] {
                InstructionData::StoreNoOffset { args, .. } => Some(args[1]),
                _ => f.dfg.inst_args(inst).first().copied(),
            };
            let wide_addr = addr.is_some_and(|a| f.dfg.value_type(a) == types::I64);
            match f.dfg.insts[inst] {
                _ if !wide_addr => {}
                InstructionData::AtomicRmw { op, args, flags, .. } => {
                    let ty = f.dfg.value_type(args[1]);
                    if op == AtomicRmwOp::Nand || ty.bits() < 32 || swapped(f, flags, ty) {
                        todo.push(inst);
                    }
                }
                InstructionData::AtomicCas { args, flags, .. } => {
                    let ty = f.dfg.value_type(args[1]);
                    if ty.bits() < 32 || swapped(f, flags, ty) {
                        todo.push(inst);
                    }
                }
                InstructionData::LoadNoOffset { opcode: Opcode::AtomicLoad, flags, .. } => {
                    if swapped(f, flags, f.dfg.value_type(f.dfg.first_result(inst))) {
                        swaps.push(inst);
                    }
                }
                InstructionData::StoreNoOffset { opcode: Opcode::AtomicStore, args, flags } => {
                    if swapped(f, flags, f.dfg.value_type(args[0])) {
                        swaps.push(inst);
                    }
                }
                _ => {}
            }
        }
    }
    for inst in todo {
        rewrite(f, inst);
    }
    for inst in swaps {
        swap_load_store(f, inst);
    }
}

/// Whether an access of `ty` with `flags` is big-endian over more than one
/// byte (so its value is the byte-swapped little-endian one).
fn swapped(f: &Function, flags: MemFlags, ty: Type) -> bool {
    ty.bytes() > 1 && f.dfg.mem_flags[flags].explicit_endianness() == Some(Endianness::Big)
}

/// `d` with the `big` flag dropped (a flag can only be added, so the others
/// are copied into a fresh set).
fn little(d: MemFlagsData) -> MemFlagsData {
    if d.explicit_endianness() != Some(Endianness::Big) {
        return d;
    }
    let mut l = MemFlagsData::new().with_trap_code(d.trap_code()).with_alias_region(d.alias_region());
    if d.aligned() {
        l = l.with_aligned();
    }
    if d.readonly() {
        l = l.with_readonly();
    }
    if d.can_move() {
        l = l.with_can_move();
    }
    l
}

/// A big-endian `atomic_load`/`atomic_store`: the little-endian access of the
/// byte-swapped value.
fn swap_load_store(f: &mut Function, inst: Inst) {
    let data = f.dfg.insts[inst];
    let (InstructionData::LoadNoOffset { flags, .. } | InstructionData::StoreNoOffset { flags, .. }) = data else {
        unreachable!("only atomic loads and stores are collected")
    };
    let flags = little(f.dfg.mem_flags[flags]);
    let mut pos = FuncCursor::new(f).at_inst(inst);
    pos.use_srcloc(inst);
    match data {
        InstructionData::StoreNoOffset { args, .. } => {
            let v = pos.ins().bswap(args[0]);
            pos.ins().atomic_store(flags, v, args[1]);
        }
        InstructionData::LoadNoOffset { arg, .. } => {
            let result = pos.func.dfg.first_result(inst);
            let ty = pos.func.dfg.value_type(result);
            let v = pos.ins().atomic_load(ty, flags, arg);
            let v = pos.ins().bswap(v);
            pos.func.dfg.detach_inst_results(inst);
            pos.func.dfg.change_to_alias(result, v);
        }
        _ => unreachable!("only atomic loads and stores are collected"),
    }
    pos.func.layout.remove_inst(inst);
}

/// Where a value of type `ty` sits in the memory word the loop updates.
struct Word {
    /// Type of the word (i32 for a narrow value).
    wty: Type,
    /// Address of the word.
    addr: Value,
    /// Narrow values: (shift, mask) as i32 values.
    lane: Option<(Value, Value)>,
    /// The value is big-endian (and more than a byte): byte-swapped.
    swap: bool,
}

impl Word {
    fn extract(&self, pos: &mut FuncCursor, ty: Type, w: Value) -> Value {
        let v = match self.lane {
            None => w,
            Some((sh, _)) => {
                let s = pos.ins().ushr(w, sh);
                pos.ins().ireduce(ty, s)
            }
        };
        if self.swap {
            pos.ins().bswap(v)
        } else {
            v
        }
    }

    fn insert(&self, pos: &mut FuncCursor, w: Value, n: Value) -> Value {
        let n = if self.swap { pos.ins().bswap(n) } else { n };
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
        InstructionData::AtomicRmw { op, args, flags, .. } => (args[0], Some(op), args[1], None, flags),
        InstructionData::AtomicCas { args, flags, .. } => (args[0], None, args[1], Some(args[2]), flags),
        _ => unreachable!("only atomics are collected"),
    };
    let swap = swapped(f, flags, ty);
    let flags = little(f.dfg.mem_flags[flags]);
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
        Word { wty: types::I32, addr, lane: Some((sh, mask)), swap }
    } else {
        Word { wty: ty, addr: p, lane: None, swap }
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
