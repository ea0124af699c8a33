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
        // At their final size: filling them never grows them.
        let mut values = SecondaryMap::with_capacity(func.dfg.num_values());
        values.resize(func.dfg.num_values());
        let mut insts = SecondaryMap::with_capacity(func.dfg.num_insts());
        insts.resize(func.dfg.num_insts());
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
    local.resize(func.dfg.num_insts());
    // Per block, reused: the keys, the dependence edges `(reader, read)` in
    // the order of their readers, the edges by what they read (`succ_at`
    // indexing `succs`, [`crate::ir::group_by_key`]), the count of unplaced
    // predecessors, the ready set.
    let mut key: Vec<u64> = Vec::new();
    let mut edges: Vec<(u32, u32)> = Vec::new();
    let mut succ_at: Vec<u32> = Vec::new();
    let mut succs: Vec<u32> = Vec::new();
    let mut waiting: Vec<u32> = Vec::new();
    let mut ready: BinaryHeap<Reverse<(u64, usize)>> = BinaryHeap::new();
    let mut sorted = Vec::new();
    for block in blocks {
        insts.clear();
        insts.extend(func.layout.block_insts(block));
        let n = insts.len();
        if n < 3 {
            continue;
        }
        // The block's terminator stays last.
        let body = &insts[..n - 1];
        // Keys: 2 × the input position; a value new to the function
        // 2 × its first reader's key − 1 (filled backwards).
        key.clear();
        key.resize(body.len(), u64::MAX);
        let mut fresh = false;
        for (k, &inst) in body.iter().enumerate() {
            match order.position(func, inst) {
                Some(p) => key[k] = 2 * u64::from(p),
                None => fresh = true,
            }
        }
        // Nothing new and nothing out of order (as in most blocks): the
        // body stays as it is.
        if !fresh && key.windows(2).all(|w| w[0] <= w[1]) {
            continue;
        }
        for (k, &i) in body.iter().enumerate() {
            local[i] = k as u32;
        }
        let index = |v: Value, func: &Function| -> Option<usize> {
            let d = func.dfg.value_def(v).inst()?;
            (func.layout.inst_block(d) == Some(block) && d != insts[n - 1]).then(|| local[d] as usize)
        };
        edges.clear();
        let mut last_effect: Option<usize> = None;
        for (k, &inst) in body.iter().enumerate() {
            for v in func.dfg.inst_values(inst) {
                if let Some(j) = index(v, func) {
                    edges.push((k as u32, j as u32));
                }
            }
            if has_effect(func.dfg.insts[inst].opcode()) {
                if let Some(j) = last_effect {
                    edges.push((k as u32, j as u32));
                }
                last_effect = Some(k);
            }
        }
        for &(k, j) in edges.iter().rev() {
            let (k, j) = (k as usize, j as usize);
            if key[k] != u64::MAX && order.position(func, body[j]).is_none() {
                key[j] = key[j].min(key[k].saturating_sub(1));
            }
        }
        // The body is a valid order; if its keys do not decrease, the sort
        // below (the smallest key first, ties by place) keeps it.
        if key.windows(2).all(|w| w[0] <= w[1]) {
            continue;
        }
        // Kahn's algorithm, the smallest key first.
        waiting.clear();
        waiting.resize(body.len(), 0);
        for &(k, _) in edges.iter() {
            waiting[k as usize] += 1;
        }
        crate::ir::group_by_key(body.len(), || edges.iter().map(|&(k, j)| (j, k)), &mut succ_at, &mut succs);
        ready.clear();
        ready.extend((0..body.len()).filter(|&k| waiting[k] == 0).map(|k| Reverse((key[k], k))));
        sorted.clear();
        while let Some(Reverse((_, k))) = ready.pop() {
            sorted.push(body[k]);
            for &s in &succs[succ_at[k] as usize..succ_at[k + 1] as usize] {
                let s = s as usize;
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
