//! Which values are live into and out of each block: the one liveness
//! analysis of the register allocation, used on virtual registers by
//! `assign_regs_ssa` (on the `VCode`) and on machine registers by
//! `pack_regs` (on the laid-out `Code`).
//!
//! The caller describes each block by two sets: `gen`, the values it reads
//! before writing them, and `kill`, the values it writes (over-writes: a
//! write that may leave the old value in place kills nothing). [`Liveness::solve`]
//! then finds the least fixed point of the backward dataflow equations
//!
//! ```text
//! live_out(b) = ∪ live_in(s) over the successors s of b
//! live_in(b)  = gen(b) ∪ (live_out(b) − kill(b))
//! ```
//!
//! visiting the blocks in the order given, round after round, until nothing
//! changes (postorder, every block before its predecessors but across back
//! edges, converges in few rounds).

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
}
