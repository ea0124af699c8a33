//! Counted single-block loops unrolled four times, with the original loop
//! kept as the remainder; in the unrolled body the loads of the four
//! iterations come first, and a copy's address that is the first copy's
//! address plus a constant becomes that address with an immediate offset.
//!
//! **The loops.** The counted loops of [`super::induction`]: a block `L`
//! that branches to itself, with an induction variable `i` stepped by a
//! constant `s > 0` while `i + s < n` (signed or unsigned). Every other
//! parameter is carried as it is.
//!
//! **The rewrite.** The edges that enter `L` from outside go to a new
//! dispatch block `D`, which computes `lim = n - 3s` (saturated at the
//! type's minimum: `MIN`, or 0 when unsigned) and branches to the unrolled
//! block `U` when `i < lim`, else to `L`. `U` holds four copies of `L`'s
//! body (the second copy's parameters are the first copy's back-edge
//! arguments, and so on); it loops while `i + 4s < lim` (the fourth copy's
//! induction value), else goes to a block `X` holding `L`'s own branch as
//! the fourth copy computes it (on to `L`, now the remainder loop, or out).
//!
//! **Why it is exact.** `i < lim` means `i + 3s < n` with no wraparound
//! (`lim` is saturated, and `i + 3s < n <= MAX`), so `i + s`, `i + 2s` and
//! `i + 3s` do not wrap and each is `< n`: the original loop runs the
//! iterations at `i`, `i + s`, `i + 2s` and `i + 3s`, exactly what `U`
//! runs without the three tests between. The fourth test, and every
//! iteration after the last group of four, are the original ones. So the
//! loop runs the same iterations in the same order, on any input
//! (a negative or huge `n`, wrapping steps included).
//!
//! **Offsets.** For `k = 1..3`, the values of copy `k` that are copy 0's
//! value plus a known constant are tracked: the induction variable
//! (`+ k·s`), a parameter stepped by a constant `t` like it (the pointers
//! of `opt_step_pointers`: `+ k·t`), constants and values from outside the loop (`+ 0`), `iadd`,
//! `isub`, `ishl` and `imul` by constants (exact in wrapping arithmetic),
//! and the extension of the induction variable itself when it cannot wrap:
//! `sextend i` for a signed loop, `uextend i` for an unsigned one (shown
//! above: `i + k·s` does not wrap in the loop's own signedness). A load or
//! store of copy `k` whose 64-bit address is copy 0's address plus `d`
//! addresses copy 0's address with its offset increased by `d` (when the
//! sum fits the machine's signed 24-bit offset), so one address serves
//! four accesses (`LDG R, [R+0x8]`).
//!
//! **Steps.** In `U`, `(x + k1) + k2` becomes `x + (k1 + k2)` (exact in
//! wrapping arithmetic) and the pure instructions nothing uses are deleted:
//! the copies' counter and constant-step pointer updates become one add
//! each from copy 0's value, and those only the next copy read go.
//!
//! **Order.** When the body has no store, call, atomic or trapping
//! instruction besides its loads, `U` is emitted as: the loads of the four
//! copies and what their addresses need, in copy order, then everything
//! else, in copy order. The loads keep their relative order, so a
//! faulting load is still the first to fault, and the four iterations'
//! loads are in flight together.
//!
//! **Cost rule.** Only at `opt_level=speed`; a loop is unrolled when it is
//! not cold (the original copy of a loop `opt_step_pointers` versioned), its
//! body (without the branch) has a load (the gain is the loads' latency
//! overlapped), at most [`MAX_BODY`] instructions, at most
//! [`MAX_PARAMS`] block parameters, no calls or atomics, and the four copies'
//! loads need at most [`MAX_LOAD_WORDS`] 32-bit registers (the loaded values
//! of the four iterations are live together); the induction type is `i32`
//! or `i64` and `3s` fits it.

use std::collections::HashMap;

use cranelift_codegen::cursor::{Cursor, FuncCursor};
use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::immediates::Offset32;
use cranelift_codegen::ir::{types, Block, BlockArg, Function, Inst, InstBuilder, InstructionData, Opcode, Type, Value, ValueDef};

use super::induction::{call_args, def_block, escaping, iconst, imm, plain_entries, preds, redirect_entries, wrap, CountedLoop};
use crate::Error;

/// The most instructions a body may have (its branch not counted).
pub const MAX_BODY: usize = 24;
/// The most block parameters the loop may have.
pub const MAX_PARAMS: usize = 8;
/// The most 32-bit words the four copies' loads may produce together.
pub const MAX_LOAD_WORDS: u32 = 16;
/// How many copies of the body the unrolled block holds.
const FACTOR: i64 = 4;
/// The machine's memory offsets (`SImm24`).
const OFS_MIN: i64 = -(1 << 23);
const OFS_MAX: i64 = (1 << 23) - 1;

/// Unrolls every loop of `func` that the cost rule admits.
pub fn opt_unroll_loops(func: &mut Function) -> Result<(), Error> {
    if !super::induction::has_single_block_loop(func) {
        return Ok(());
    }
    let blocks: Vec<Block> = func.layout.blocks().collect();
    for l in blocks {
        if let Some(lp) = Loop::find(func, l) {
            lp.unroll(func);
        }
    }
    Ok(())
}

/// A loop the pass unrolls, as [`Loop::find`] recognized it.
struct Loop {
    block: Block,
    /// The index of the induction variable among the block's parameters.
    iv: usize,
    step: i64,
    ty: Type,
    signed: bool,
    bound: Value,
    /// The bound, when it is a constant (the e-graph puts constants in the
    /// block that uses them, so `D` makes its own).
    bound_const: Option<i64>,
    /// Do the loads go first (no other memory access or trap in the body)?
    loads_first: bool,
}

impl Loop {
    /// Recognizes `l` as a loop the pass unrolls.
    fn find(f: &Function, l: Block) -> Option<Loop> {
        // The original copy of a loop `opt_step_pointers` versioned is cold: it stays as it is.
        if f.layout.is_cold(l) {
            return None;
        }
        let CountedLoop { block: _, iv, step, ty, signed, bound, bound_const, back } = CountedLoop::find(f, l)?;
        if f.dfg.block_params(l).len() > MAX_PARAMS {
            return None;
        }
        let term = f.layout.last_inst(l)?;
        let InstructionData::Brif { blocks, .. } = f.dfg.insts[term] else { return None };
        // `3s` must fit the type, as a positive number.
        let max = if ty == types::I32 {
            if signed {
                i64::from(i32::MAX)
            } else {
                i64::from(u32::MAX)
            }
        } else {
            i64::MAX
        };
        if step.checked_mul(FACTOR - 1).is_none_or(|x| x > max) {
            return None;
        }
        // The body: size, no calls or atomics, the loads' registers.
        let mut count = 0;
        let mut words = 0;
        let mut loads_first = true;
        for inst in f.layout.block_insts(l) {
            let op = f.dfg.insts[inst].opcode();
            if inst == term {
                continue;
            }
            count += 1;
            if op.is_call()
                || op.is_branch()
                || op.is_terminator()
                || op == Opcode::AtomicRmw
                || op == Opcode::AtomicCas
                || op == Opcode::Fence
            {
                return None;
            }
            if matches!(f.dfg.insts[inst], InstructionData::Load { .. }) {
                let ty = f.dfg.value_type(f.dfg.first_result(inst));
                if ty.is_vector() {
                    return None;
                }
                words += ty.bytes().div_ceil(4);
            } else if op.can_store() || op.can_trap() || op.can_load() || op.other_side_effects() {
                loads_first = false;
            }
        }
        // Without a load there is no latency to overlap: the loop stays as it is
        // (and keeps its counter on the uniform datapath where it has one).
        if words == 0 || count > MAX_BODY || words * FACTOR as u32 > MAX_LOAD_WORDS {
            return None;
        }
        // Every edge into `L` from outside is a plain jump or brif with value arguments.
        if !plain_entries(f, l) {
            return None;
        }
        // Values of `L` used after the loop reach those uses through the exit
        // block, which then must have no other predecessor.
        let exit = blocks[1 - back].block(&f.dfg.value_lists);
        if !escaping(f, l).is_empty() && preds(f, exit) != 1 {
            return None;
        }
        Some(Loop { block: l, iv, step, ty, signed, bound, bound_const, loads_first })
    }

    /// Rewrites the loop as the module documentation describes.
    fn unroll(&self, f: &mut Function) {
        let l = self.block;
        let term = f.layout.last_inst(l).expect("a loop block has a branch");
        let body: Vec<Inst> = f.layout.block_insts(l).filter(|&i| i != term).collect();
        let params: Vec<Value> = f.dfg.block_params(l).to_vec();
        let InstructionData::Brif { blocks, .. } = f.dfg.insts[term] else { unreachable!("Loop::find saw a brif") };
        let back_idx = if blocks[0].block(&f.dfg.value_lists) == l { 0 } else { 1 };
        // A value of `L` used after the loop becomes a parameter of the exit
        // block (which the unrolled block's exit then passes too).
        let escaping = escaping(f, l);
        if !escaping.is_empty() {
            let exit = blocks[1 - back_idx].block(&f.dfg.value_lists);
            let renamed: Vec<(Value, Value)> = escaping
                .iter()
                .map(|&v| {
                    let ty = f.dfg.value_type(v);
                    (v, f.dfg.append_block_param(exit, ty))
                })
                .collect();
            let others: Vec<Block> = f.layout.blocks().filter(|&b| b != l).collect();
            for b in others {
                let insts: Vec<Inst> = f.layout.block_insts(b).collect();
                for inst in insts {
                    f.dfg.map_inst_values(inst, |v| renamed.iter().find(|r| r.0 == v).map_or(v, |r| r.1));
                }
            }
            let dfg = &mut f.dfg;
            if let InstructionData::Brif { blocks, .. } = &mut dfg.insts[term] {
                blocks[1 - back_idx].extend(escaping.iter().copied(), &mut dfg.value_lists);
            }
        }
        let back_args = call_args(f, &blocks[back_idx]).expect("Loop::find saw value arguments");

        // The blocks: dispatch, unrolled, exit test; before `L` in the layout.
        let d = f.dfg.make_block();
        let u = f.dfg.make_block();
        let x = f.dfg.make_block();
        for b in [d, u, x] {
            f.layout.insert_block(b, l);
        }
        let types: Vec<Type> = params.iter().map(|&p| f.dfg.value_type(p)).collect();
        let d_params: Vec<Value> = types.iter().map(|&t| f.dfg.append_block_param(d, t)).collect();
        let u_params: Vec<Value> = types.iter().map(|&t| f.dfg.append_block_param(u, t)).collect();

        // Outside edges into `L` now go to `D`.
        redirect_entries(f, l, d, &[u, x]);

        // D: lim = n - 3s, saturated; brif i < lim, U, L.
        let ty = self.ty;
        let span = self.step * (FACTOR - 1);
        let mut pos = FuncCursor::new(f).at_bottom(d);
        let n = match self.bound_const {
            Some(c) => pos.ins().iconst(ty, c),
            None => self.bound,
        };
        let lim = if self.signed {
            let min = wrap(ty, 1i64 << (ty.bits() - 1));
            let neg = pos.ins().iconst(ty, imm(ty, -span));
            let diff = pos.ins().iadd(n, neg);
            let floor = pos.ins().iconst(ty, imm(ty, min + span));
            let ok = pos.ins().icmp(IntCC::SignedGreaterThanOrEqual, n, floor);
            let minv = pos.ins().iconst(ty, imm(ty, min));
            pos.ins().select(ok, diff, minv)
        } else {
            let neg = pos.ins().iconst(ty, imm(ty, -span));
            let diff = pos.ins().iadd(n, neg);
            let spanv = pos.ins().iconst(ty, imm(ty, span));
            let ok = pos.ins().icmp(IntCC::UnsignedGreaterThanOrEqual, n, spanv);
            let zero = pos.ins().iconst(ty, 0);
            pos.ins().select(ok, diff, zero)
        };
        let lt = if self.signed { IntCC::SignedLessThan } else { IntCC::UnsignedLessThan };
        let go = pos.ins().icmp(lt, d_params[self.iv], lim);
        let d_args: Vec<BlockArg> = d_params.iter().map(|&v| BlockArg::Value(v)).collect();
        pos.ins().brif(go, u, &d_args, l, &d_args);

        // The order of U: (copy, instruction).
        let slice = if self.loads_first { self.load_slice(f, &body, &params, &back_args) } else { vec![true; body.len()] };
        let mut order: Vec<(usize, usize)> = Vec::new();
        for k in 0..FACTOR as usize {
            order.extend((0..body.len()).filter(|&j| slice[j]).map(|j| (k, j)));
        }
        for k in 0..FACTOR as usize {
            order.extend((0..body.len()).filter(|&j| !slice[j]).map(|j| (k, j)));
        }

        // Copy k's value of an original value, and its offset from copy 0's.
        let mut map: Vec<HashMap<Value, Value>> = vec![HashMap::new(); FACTOR as usize];
        let mut offs: Vec<HashMap<Value, i64>> = vec![HashMap::new(); FACTOR as usize];
        fn resolve(map: &[HashMap<Value, Value>], params: &[Value], back: &[Value], u_params: &[Value], k: usize, v: Value) -> Value {
            if let Some(j) = params.iter().position(|&p| p == v) {
                return if k == 0 { u_params[j] } else { resolve(map, params, back, u_params, k - 1, back[j]) };
            }
            *map[k].get(&v).unwrap_or(&v)
        }
        for &(k, j) in &order {
            let inst = body[j];
            let new = f.dfg.clone_inst(inst);
            let (m, p, b, up) = (&map, &params, &back_args, &u_params);
            f.dfg.map_inst_values(new, |v| resolve(m, p, b, up, k, v));
            // An access at copy 0's address plus a constant.
            if k > 0 {
                self.fold_offset(f, new, inst, k, &offs, &map, &params, &back_args, &u_params);
            }
            f.layout.append_inst(new, u);
            for (&old, &nv) in f.dfg.inst_results(inst).to_vec().iter().zip(f.dfg.inst_results(new).to_vec().iter()) {
                map[k].insert(old, nv);
            }
            if k > 0 {
                if let Some(o) = self.offset_of_result(f, inst, k, &offs, &params, &back_args) {
                    offs[k].insert(f.dfg.first_result(inst), o);
                }
            }
        }

        // U's back edge: brif i + 4s < lim, U(args of copy 3), X.
        let last = FACTOR as usize - 1;
        let args4: Vec<BlockArg> =
            back_args.iter().map(|&v| BlockArg::Value(resolve(&map, &params, &back_args, &u_params, last, v))).collect();
        let i4 = match args4[self.iv] {
            BlockArg::Value(v) => v,
            _ => unreachable!(),
        };
        let mut pos = FuncCursor::new(f).at_bottom(u);
        let again = pos.ins().icmp(lt, i4, lim);
        pos.ins().brif(again, u, &args4, x, &[]);

        // X: L's branch as copy 3 computes it.
        let new = f.dfg.clone_inst(term);
        let (m, p, b, up) = (&map, &params, &back_args, &u_params);
        f.dfg.map_inst_values(new, |v| resolve(m, p, b, up, last, v));
        f.layout.append_inst(new, x);
        fold_steps(f, u);
        super::delete_dead(f, u);
    }

    /// Which body instructions the loads need (the loads, their operands'
    /// definitions in the body, through the back edge for parameters).
    fn load_slice(&self, f: &Function, body: &[Inst], params: &[Value], back: &[Value]) -> Vec<bool> {
        let mut inside = vec![false; body.len()];
        let mut work: Vec<Value> = Vec::new();
        for (j, &inst) in body.iter().enumerate() {
            if matches!(f.dfg.insts[inst], InstructionData::Load { .. }) {
                inside[j] = true;
                work.extend_from_slice(f.dfg.inst_args(inst));
            }
        }
        let mut seen_params = vec![false; params.len()];
        while let Some(v) = work.pop() {
            if let Some(pj) = params.iter().position(|&p| p == v) {
                if !seen_params[pj] {
                    seen_params[pj] = true;
                    work.push(back[pj]);
                }
                continue;
            }
            let ValueDef::Result(inst, _) = f.dfg.value_def(v) else { continue };
            if let Some(j) = body.iter().position(|&b| b == inst) {
                if !inside[j] {
                    inside[j] = true;
                    work.extend_from_slice(f.dfg.inst_args(inst));
                }
            }
        }
        inside
    }

    /// The offset of copy `k`'s value of `v` from copy 0's (`None`: not a
    /// known constant).
    #[allow(clippy::too_many_arguments)]
    fn offset(&self, f: &Function, k: usize, v: Value, offs: &[HashMap<Value, i64>], params: &[Value], back: &[Value]) -> Option<i64> {
        if let Some(j) = params.iter().position(|&p| p == v) {
            if j == self.iv {
                return Some(wrap(self.ty, self.step * k as i64));
            }
            // A parameter carried unchanged is the same in every copy; one
            // stepped by a constant (a pointer of `opt_step_pointers`) is
            // `k` steps further (exact in wrapping arithmetic).
            if back[j] == v {
                return Some(0);
            }
            let ValueDef::Result(si, _) = f.dfg.value_def(back[j]) else { return None };
            let InstructionData::Binary { opcode: Opcode::Iadd, args } = f.dfg.insts[si] else { return None };
            let ty = f.dfg.value_type(v);
            return match (args[0] == v, args[1] == v) {
                (true, _) => iconst(f, args[1]),
                (_, true) => iconst(f, args[0]),
                _ => None,
            }
            .map(|s| wrap(ty, s.wrapping_mul(k as i64)));
        }
        if def_block(f, v) != Some(self.block) || iconst(f, v).is_some() {
            return Some(0);
        }
        offs[k].get(&v).copied()
    }

    /// The offset of copy `k`'s result of `inst` from copy 0's.
    #[allow(clippy::too_many_arguments)]
    fn offset_of_result(
        &self,
        f: &Function,
        inst: Inst,
        k: usize,
        offs: &[HashMap<Value, i64>],
        params: &[Value],
        back: &[Value],
    ) -> Option<i64> {
        let results = f.dfg.inst_results(inst);
        if results.len() != 1 {
            return None;
        }
        let ty = f.dfg.value_type(results[0]);
        if !ty.is_int() || ty.is_vector() || ty.bits() > 64 {
            return None;
        }
        let off = |v: Value| self.offset(f, k, v, offs, params, back);
        let data = &f.dfg.insts[inst];
        let o = match *data {
            InstructionData::Binary { opcode: Opcode::Iadd, args } => off(args[0])?.wrapping_add(off(args[1])?),
            InstructionData::Binary { opcode: Opcode::Isub, args } => off(args[0])?.wrapping_sub(off(args[1])?),
            InstructionData::Binary { opcode: Opcode::Ishl, args } => {
                let s = iconst(f, args[1])? as u32 & (ty.bits() - 1);
                off(args[0])?.wrapping_shl(s)
            }
            InstructionData::Binary { opcode: Opcode::Imul, args } => match (iconst(f, args[0]), iconst(f, args[1])) {
                (_, Some(c)) => off(args[0])?.wrapping_mul(c),
                (Some(c), _) => off(args[1])?.wrapping_mul(c),
                _ => return None,
            },
            InstructionData::Unary { opcode: Opcode::Sextend, arg } | InstructionData::Unary { opcode: Opcode::Uextend, arg } => {
                let ext_signed = data.opcode() == Opcode::Sextend;
                let is_iv = params.iter().position(|&p| p == arg) == Some(self.iv);
                // The extension of the induction variable, which does not wrap in the loop's signedness.
                if is_iv && ext_signed == self.signed {
                    self.step * k as i64
                } else if off(arg)? == 0 {
                    0
                } else {
                    return None;
                }
            }
            _ => {
                // Any other pure instruction of unchanged operands is unchanged.
                let op = data.opcode();
                if op.can_load() || op.can_store() || op.can_trap() || op.other_side_effects() || op.is_call() {
                    return None;
                }
                for &a in f.dfg.inst_args(inst) {
                    if off(a)? != 0 {
                        return None;
                    }
                }
                0
            }
        };
        Some(wrap(ty, o))
    }

    /// Copy `k`'s access `new` (of the body's `old`) at copy 0's address
    /// plus a constant: addressed from copy 0's address with the offset.
    #[allow(clippy::too_many_arguments)]
    fn fold_offset(
        &self,
        f: &mut Function,
        new: Inst,
        old: Inst,
        k: usize,
        offs: &[HashMap<Value, i64>],
        map: &[HashMap<Value, Value>],
        params: &[Value],
        back: &[Value],
        u_params: &[Value],
    ) {
        let (addr, offset) = match f.dfg.insts[old] {
            InstructionData::Load { arg, offset, .. } => (arg, offset),
            InstructionData::Store { args, offset, .. } => (args[1], offset),
            _ => return,
        };
        if f.dfg.value_type(addr) != types::I64 {
            return;
        }
        let Some(d) = self.offset(f, k, addr, offs, params, back) else { return };
        let total = i64::from(offset).checked_add(d);
        let Some(total) = total.filter(|t| d != 0 && (OFS_MIN..=OFS_MAX).contains(t)) else { return };
        let base = {
            fn resolve0(map: &[HashMap<Value, Value>], params: &[Value], u_params: &[Value], v: Value) -> Value {
                match params.iter().position(|&p| p == v) {
                    Some(j) => u_params[j],
                    None => *map[0].get(&v).unwrap_or(&v),
                }
            }
            resolve0(map, params, u_params, addr)
        };
        match &mut f.dfg.insts[new] {
            InstructionData::Load { arg, offset, .. } => {
                *arg = base;
                *offset = Offset32::new(total as i32);
            }
            InstructionData::Store { args, offset, .. } => {
                args[1] = base;
                *offset = Offset32::new(total as i32);
            }
            _ => {}
        }
    }
}

/// In `u`, `(x + k1) + k2` becomes `x + (k1 + k2)` (exact in wrapping
/// arithmetic): the four copies' steps of a counter or pointer then each
/// start from copy 0's value, and those only the next copy read go.
fn fold_steps(f: &mut Function, u: Block) {
    let step = |f: &Function, inst: Inst| match f.dfg.insts[inst] {
        InstructionData::Binary { opcode: Opcode::Iadd, args } => match (iconst(f, args[0]), iconst(f, args[1])) {
            (None, Some(k)) => Some((args[0], k)),
            (Some(k), None) => Some((args[1], k)),
            _ => None,
        },
        _ => None,
    };
    let insts: Vec<Inst> = f.layout.block_insts(u).collect();
    for inst in insts {
        let Some((y, k2)) = step(f, inst) else { continue };
        let ValueDef::Result(yi, _) = f.dfg.value_def(y) else { continue };
        if f.layout.inst_block(yi) != Some(u) {
            continue;
        }
        let Some((x, k1)) = step(f, yi) else { continue };
        let ty = f.dfg.value_type(y);
        let k = FuncCursor::new(f).at_inst(inst).ins().iconst(ty, imm(ty, wrap(ty, k1.wrapping_add(k2))));
        f.dfg.insts[inst] = InstructionData::Binary { opcode: Opcode::Iadd, args: [x, k] };
    }
}
