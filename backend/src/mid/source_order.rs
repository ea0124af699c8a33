//! The order of the input restored inside each block after the e-graph
//! pass ([`super::opt_egraph`]), whose elaboration puts each pure value
//! just before its first use: that interleaves address arithmetic with the
//! loads that read it (`IMAD.WIDE; LDG; IMAD.WIDE; LDG`), and with no
//! scheduler after selection each load then waits for its address
//! (`docs/optimization.md`). Here the instructions of a block are
//! reordered, dependencies permitting, by their position in the input:
//! values the e-graph kept come back to where they were written, values
//! it made (folded constants, rewritten forms) come just before their
//! first reader in the block, and instructions with effects (memory,
//! calls, traps) keep their order among themselves.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use cranelift_codegen::entity::SecondaryMap;
use cranelift_codegen::ir::{Function, Inst, Opcode, Value};

/// Positions in the input: of each value's defining instruction, and of
/// each instruction (1-based; 0: not in the input).
pub struct SourceOrder {
    values: SecondaryMap<Value, u32>,
    insts: SecondaryMap<Inst, u32>,
}

impl SourceOrder {
    /// The positions of the instructions of `func`, in layout order.
    pub fn of(func: &Function) -> SourceOrder {
        let mut values = SecondaryMap::with_capacity(func.dfg.num_values());
        let mut insts = SecondaryMap::with_capacity(func.dfg.num_insts());
        let mut n = 0u32;
        for block in func.layout.blocks() {
            for inst in func.layout.block_insts(block) {
                n += 1;
                insts[inst] = n;
                for &r in func.dfg.inst_results(inst) {
                    values[r] = n;
                }
            }
        }
        SourceOrder { values, insts }
    }

    fn position(&self, func: &Function, inst: Inst) -> Option<u32> {
        let by_value = func.dfg.inst_results(inst).first().map_or(0, |&r| self.values[r]);
        let p = if by_value != 0 { by_value } else { self.insts[inst] };
        (p != 0).then_some(p)
    }
}

/// Whether `op` has an effect whose order matters (memory, control, traps).
fn has_effect(op: Opcode) -> bool {
    op.can_load() || op.can_store() || op.is_call() || op.can_trap() || op.other_side_effects() || op.is_terminator()
}

/// Reorders the instructions of every block of `func` by `order`.
pub fn restore(func: &mut Function, order: &SourceOrder) {
    let blocks: Vec<_> = func.layout.blocks().collect();
    let mut insts = Vec::new();
    // The index of an instruction in its block's body (valid for the block
    // being sorted: checked by the block).
    let mut local: SecondaryMap<Inst, u32> = SecondaryMap::with_capacity(func.dfg.num_insts());
    for block in blocks {
        insts.clear();
        insts.extend(func.layout.block_insts(block));
        let n = insts.len();
        if n < 3 {
            continue;
        }
        // The block's terminator stays last.
        let body = &insts[..n - 1];
        for (k, &i) in body.iter().enumerate() {
            local[i] = k as u32;
        }
        let index = |v: Value, func: &Function| -> Option<usize> {
            let d = func.dfg.value_def(v).inst()?;
            (func.layout.inst_block(d) == Some(block) && d != insts[n - 1]).then(|| local[d] as usize)
        };
        // Keys: 2 × the input position; a value new to the function
        // 2 × its first reader's key − 1 (filled backwards).
        let mut key: Vec<u64> = vec![u64::MAX; body.len()];
        let mut preds: Vec<Vec<usize>> = vec![Vec::new(); body.len()];
        let mut last_effect: Option<usize> = None;
        for (k, &inst) in body.iter().enumerate() {
            for v in func.dfg.inst_values(inst) {
                if let Some(j) = index(v, func) {
                    preds[k].push(j);
                }
            }
            if has_effect(func.dfg.insts[inst].opcode()) {
                if let Some(j) = last_effect {
                    preds[k].push(j);
                }
                last_effect = Some(k);
            }
            if let Some(p) = order.position(func, inst) {
                key[k] = 2 * u64::from(p);
            }
        }
        for k in (0..body.len()).rev() {
            if key[k] == u64::MAX {
                continue;
            }
            for &j in &preds[k] {
                if order.position(func, body[j]).is_none() {
                    key[j] = key[j].min(key[k].saturating_sub(1));
                }
            }
        }
        // Kahn's algorithm, the smallest key first.
        let mut waiting: Vec<usize> = preds.iter().map(Vec::len).collect();
        let mut succs: Vec<Vec<usize>> = vec![Vec::new(); body.len()];
        for (k, ps) in preds.iter().enumerate() {
            for &j in ps {
                succs[j].push(k);
            }
        }
        let mut ready: BinaryHeap<Reverse<(u64, usize)>> =
            (0..body.len()).filter(|&k| waiting[k] == 0).map(|k| Reverse((key[k], k))).collect();
        let mut sorted = Vec::with_capacity(body.len());
        while let Some(Reverse((_, k))) = ready.pop() {
            sorted.push(body[k]);
            for &s in &succs[k] {
                waiting[s] -= 1;
                if waiting[s] == 0 {
                    ready.push(Reverse((key[s], s)));
                }
            }
        }
        if sorted.len() != body.len() || sorted.iter().eq(body.iter()) {
            continue;
        }
        let term = insts[n - 1];
        for &inst in &sorted {
            func.layout.remove_inst(inst);
            func.layout.insert_inst(inst, term);
        }
    }
}
