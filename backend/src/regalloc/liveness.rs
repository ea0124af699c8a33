//! Which values are live into and out of each block: the liveness analyses
//! of the register allocation. [`Liveness`] (dense sets) runs on machine
//! registers in `pack_regs` and `opt_copy_prop_backward` (on the laid-out
//! `Code`); [`ValueLiveness`] (sorted lists) on the virtual registers of the
//! `VCode` in `assign_regs_ssa` and `opt_instr_sched_prepass`.
//!
//! The caller describes each block by two sets: `gen`, the values it reads
//! before writing them, and `kill`, the values it writes (over-writes: a
//! write that may leave the old value in place kills nothing). Both find
//! the least fixed point of the backward dataflow equations
//!
//! ```text
//! live_out(b) = ∪ live_in(s) over the successors s of b
//! live_in(b)  = gen(b) ∪ (live_out(b) − kill(b))
//! ```
//!
//! [`Liveness::solve`] visits the blocks in the order given, round after
//! round, until nothing changes (postorder, every block before its
//! predecessors but across back edges, converges in few rounds); its sets
//! take blocks × values bits, fine for registers (a few hundred names).
//! Virtual registers grow with the function, and so do its blocks: there
//! dense sets would take memory and time in the square of the function's
//! size (32k blocks of one value each: 4 × 128 MB), so [`ValueLiveness`]
//! follows each value backwards from its reads, through predecessors,
//! until a block that writes it, and keeps per block only the values live
//! there: time and memory in the size of the function plus the size of the
//! live sets.

use smallvec::SmallVec;
use ursa_isel::bitset::{BitSet, Member, Words};

/// The per-block sets of one liveness problem and its solution. Kept by the
/// caller and refilled ([`Liveness::reset`]), its storage reused.
pub struct Liveness<I = u32, W = SmallVec<[u64; 4]>> {
    /// Per block: values read before any write in the block.
    pub gen: Vec<BitSet<I, W>>,
    /// Per block: values the block writes.
    pub kill: Vec<BitSet<I, W>>,
    /// Per block: values live at its start and at its end (after [`Liveness::solve`]).
    pub live_in: Vec<BitSet<I, W>>,
    pub live_out: Vec<BitSet<I, W>>,
}

impl<I, W> Default for Liveness<I, W> {
    fn default() -> Self {
        Liveness { gen: Vec::new(), kill: Vec::new(), live_in: Vec::new(), live_out: Vec::new() }
    }
}

impl<I: Member, W: Words> Liveness<I, W> {
    /// `blocks` blocks with empty sets of room for values below `n` (the
    /// sets of earlier problems reused).
    pub fn reset(&mut self, blocks: usize, n: usize) {
        for sets in [&mut self.gen, &mut self.kill, &mut self.live_in, &mut self.live_out] {
            sets.truncate(blocks);
            for s in sets.iter_mut() {
                s.reset(n);
            }
            sets.resize_with(blocks, || BitSet::new(n));
        }
    }

    /// The fixed point from `gen` and `kill`: `order` lists the blocks as
    /// each round visits them, `succs(b)` the successors of block `b`.
    pub fn solve<S: IntoIterator<Item = usize>>(&mut self, order: impl Iterator<Item = usize> + Clone, succs: impl Fn(usize) -> S) {
        let Some(n) = self.live_in.first().map(|s| s.words().len()) else { return };
        let mut out = BitSet::<I, W>::new(64 * n);
        let mut changed = true;
        while changed {
            changed = false;
            for b in order.clone() {
                out.clear();
                for s in succs(b) {
                    out.union_with(&self.live_in[s]);
                }
                let (g, k, o) = (self.gen[b].words(), self.kill[b].words(), out.words());
                for (w, x) in self.live_in[b].words_mut().iter_mut().enumerate() {
                    let new = g[w] | (o[w] & !k[w]);
                    changed |= new != *x;
                    *x = new;
                }
                self.live_out[b].clone_from(&out);
            }
        }
    }
}

/// Liveness of values numbered densely (virtual registers) as sorted lists
/// per block, found value by value ([`ValueLiveness::solve`]). Kept by the
/// caller and refilled, its storage reused.
#[derive(Default)]
pub struct ValueLiveness {
    live_in: Lists,
    live_out: Lists,
    /// (block, value) pairs, in increasing value order, before they are
    /// sorted into the lists.
    ins: Vec<(u32, u32)>,
    outs: Vec<(u32, u32)>,
    /// `gen` and `kill` by value, and the predecessors by block.
    gen_of: Lists,
    kill_of: Lists,
    preds: Lists,
    /// Per block: the last value + 1 marked live in, live out, written.
    in_mark: Vec<u32>,
    out_mark: Vec<u32>,
    kill_mark: Vec<u32>,
    work: Vec<u32>,
}

impl ValueLiveness {
    /// The values live into block `b`, in increasing order.
    pub fn live_in(&self, b: usize) -> &[u32] {
        self.live_in.get(b)
    }

    /// The values live out of block `b`, in increasing order.
    pub fn live_out(&self, b: usize) -> &[u32] {
        self.live_out.get(b)
    }

    /// The least fixed point for `nb` blocks and values below `nv`, from
    /// `gen` and `kill` given as (value, block) pairs (repeats allowed);
    /// `succs(b)` lists the successors of block `b`. Each value is followed
    /// from the blocks that read it before writing it backwards through
    /// their predecessors, each (block, value) pair visited once.
    pub fn solve<S: IntoIterator<Item = usize>>(
        &mut self,
        nb: usize,
        nv: usize,
        gen: &[(u32, u32)],
        kill: &[(u32, u32)],
        succs: impl Fn(usize) -> S,
    ) {
        let ValueLiveness { live_in, live_out, ins, outs, gen_of, kill_of, preds, in_mark, out_mark, kill_mark, work } = self;
        // Without edges (most often a function of one block) a block's
        // live-in values are those it reads before writing them, and
        // nothing is live out.
        if (0..nb).all(|b| succs(b).into_iter().next().is_none()) {
            ins.clear();
            ins.extend(gen.iter().map(|&(v, b)| (b, v)));
            ins.sort_unstable_by_key(|&(b, v)| (v, b));
            ins.dedup();
            live_in.fill(nb, ins);
            outs.clear();
            live_out.fill(nb, outs);
            return;
        }
        gen_of.fill(nv, gen);
        kill_of.fill(nv, kill);
        // The edges, (successor, block), gathered in `ins` for the moment.
        ins.clear();
        ins.extend((0..nb).flat_map(|b| succs(b).into_iter().map(move |s| (s as u32, b as u32))));
        preds.fill(nb, ins);
        for m in [&mut *in_mark, &mut *out_mark, &mut *kill_mark] {
            m.clear();
            m.resize(nb, 0);
        }
        ins.clear();
        outs.clear();
        for v in 0..nv as u32 {
            let mark = v + 1;
            for &b in kill_of.get(v as usize) {
                kill_mark[b as usize] = mark;
            }
            work.clear();
            for &b in gen_of.get(v as usize) {
                if in_mark[b as usize] != mark {
                    in_mark[b as usize] = mark;
                    ins.push((b, v));
                    work.push(b);
                }
            }
            while let Some(b) = work.pop() {
                for &p in preds.get(b as usize) {
                    let pu = p as usize;
                    if out_mark[pu] == mark {
                        continue;
                    }
                    out_mark[pu] = mark;
                    outs.push((p, v));
                    if kill_mark[pu] != mark && in_mark[pu] != mark {
                        in_mark[pu] = mark;
                        ins.push((p, v));
                        work.push(p);
                    }
                }
            }
        }
        // The pairs come in increasing value order, and the lists keep it.
        live_in.fill(nb, ins);
        live_out.fill(nb, outs);
    }
}

/// Lists by index in one flat vector, filled from (index, item) pairs; each
/// list keeps its pairs' order.
#[derive(Default)]
struct Lists {
    start: Vec<u32>,
    items: Vec<u32>,
}

impl Lists {
    fn fill(&mut self, n: usize, pairs: &[(u32, u32)]) {
        let Lists { start, items } = self;
        start.clear();
        start.resize(n + 1, 0);
        for &(k, _) in pairs {
            start[k as usize + 1] += 1;
        }
        for k in 1..=n {
            start[k] += start[k - 1];
        }
        items.clear();
        items.resize(start[n] as usize, 0);
        // start[k] is where list k's next item goes, then where list k + 1 begins.
        for &(k, x) in pairs {
            items[start[k as usize] as usize] = x;
            start[k as usize] += 1;
        }
        for k in (1..=n).rev() {
            start[k] = start[k - 1];
        }
        start[0] = 0;
    }

    fn get(&self, k: usize) -> &[u32] {
        &self.items[self.start[k] as usize..self.start[k + 1] as usize]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_value_live_around_a_loop() {
        // 0 -> 1 -> 2, 1 -> 1: block 0 writes 5, block 1 reads 5 and writes
        // 6, block 2 reads 6.
        let mut l: Liveness<u32> = Liveness::default();
        l.reset(3, 10);
        l.kill[0].insert(5);
        l.gen[1].insert(5);
        l.kill[1].insert(6);
        l.gen[2].insert(6);
        let succs = [vec![1], vec![1, 2], vec![]];
        l.solve((0..3).rev(), |b| succs[b].iter().copied());
        let ins: Vec<Vec<u32>> = l.live_in.iter().map(|s| s.iter().collect()).collect();
        let outs: Vec<Vec<u32>> = l.live_out.iter().map(|s| s.iter().collect()).collect();
        assert_eq!(ins, [vec![], vec![5], vec![6]]);
        assert_eq!(outs, [vec![5], vec![5, 6], vec![]]);
    }

    /// The dense sets for `nb` blocks and `nv` values from (value, block)
    /// pairs, solved with `succs`.
    fn dense(nb: usize, nv: usize, gen: &[(u32, u32)], kill: &[(u32, u32)], succs: impl Fn(usize) -> Vec<usize>) -> Liveness<u32> {
        let mut dense: Liveness<u32> = Liveness::default();
        dense.reset(nb, nv);
        for &(v, b) in gen {
            dense.gen[b as usize].insert(v);
        }
        for &(v, b) in kill {
            dense.kill[b as usize].insert(v);
        }
        dense.solve((0..nb).rev(), succs);
        dense
    }

    #[test]
    fn value_liveness_agrees_with_the_dense_sets() {
        // 0 -> 1 -> 2 -> 3, 2 -> 1, 1 -> 3: block 0 writes 1 and 2, block 1
        // reads 1 and writes 3, block 2 reads 3 and 2 and writes 1 (around
        // the loop), block 3 reads 3; 4 is read in block 2 and never written.
        let succs = [vec![1], vec![2, 3], vec![1, 3], vec![]];
        let gen = [(1, 1), (3, 2), (2, 2), (4, 2), (3, 3)];
        let kill = [(1, 0), (2, 0), (3, 1), (1, 2)];
        let dense = dense(4, 5, &gen, &kill, |b| succs[b].clone());
        let mut sparse = ValueLiveness::default();
        sparse.solve(4, 5, &gen, &kill, |b| succs[b].iter().copied());
        for b in 0..4 {
            assert_eq!(sparse.live_in(b), dense.live_in[b].iter().collect::<Vec<_>>(), "live in {}", b);
            assert_eq!(sparse.live_out(b), dense.live_out[b].iter().collect::<Vec<_>>(), "live out {}", b);
        }
        assert_eq!(sparse.live_in(1), [1, 2, 4]);
        assert_eq!(sparse.live_in(0), [4]);
    }

    #[test]
    fn blocks_without_edges_keep_what_they_read_before_writing() {
        // Two blocks, no edge: reads out of value order, repeated, and a
        // value written before it is read (not in `gen`: `kill` only).
        let gen = [(7, 0), (2, 0), (7, 0), (5, 1), (2, 1)];
        let kill = [(3, 0), (9, 1)];
        let dense = dense(2, 10, &gen, &kill, |_| Vec::new());
        let mut sparse = ValueLiveness::default();
        sparse.solve(2, 10, &gen, &kill, |_| std::iter::empty());
        for b in 0..2 {
            assert_eq!(sparse.live_in(b), dense.live_in[b].iter().collect::<Vec<_>>(), "live in {}", b);
            assert!(sparse.live_out(b).is_empty());
        }
        assert_eq!(sparse.live_in(0), [2, 7]);
    }
}
