//! Constructors for `isle/lower/bitops.isle`: trees of bitwise operations
//! folded into one LOP3 (per 32-bit half), and `bmask`.
//!
//! A tree is grown from the root instruction through the operands that are
//! themselves results of bitwise operations (`band`, `bor`, `bxor`, `bnot`,
//! `bitselect`) of the same type: of the (at most `MAX_FOLDED`) operations
//! reachable, the largest set that keeps at most three distinct leaves (the
//! three LOP3 inputs) is folded. The truth table is then the tree evaluated on the tables of the
//! inputs (`LUT_A`, `LUT_B`, `LUT_C`). One constant leaf becomes the
//! immediate operand (LOP3_RIR's `SrcB`); inputs the table does not depend
//! on are dropped (RZ). Folding an operand that has other users duplicates
//! no work: the other users lower it themselves, and each tree is still one
//! LOP3.
//!
//! (`band_not`, `bor_not` and `bxor_not` are no longer CLIF opcodes in
//! Cranelift 0.135: the builder emits `bnot` + `band`/`bor`/`bxor`, which
//! folds into the same single LOP3.)

use cranelift_codegen::ir::{types, Inst, Opcode, Type, Value, ValueDef};
use smallvec::SmallVec;

use crate::context::const_bits;
use crate::lower::{Lower, Pred};
use crate::machine::{LUT_A, LUT_B, LUT_C};
use crate::rules::ops::{hi_of, Pieces, D, S};
use crate::vcode::{Bundle, Class, VReg};
use ursa_emit::forms::LOP3_RIR;
use ursa_emit::typed::{P, R};

/// Operations considered for one tree at most (the search over which to
/// fold is exhaustive: every subset reached from the root, at most
/// 2^MAX_FOLDED).
const MAX_FOLDED: usize = 10;

/// The truth tables of the values a tree evaluation has met.
type Memo = SmallVec<[(Value, u8); 16]>;

fn is_bitop(op: Opcode) -> bool {
    matches!(op, Opcode::Band | Opcode::Bor | Opcode::Bxor | Opcode::Bnot | Opcode::Bitselect)
}

/// Does the truth table depend on the input whose own table is `t`?
pub(crate) fn lut_depends(lut: u8, t: u8) -> bool {
    // Shift distance between the halves where the input is 1 and 0.
    let sh = match t {
        LUT_A => 4,
        LUT_B => 2,
        _ => 1,
    };
    ((lut & t) >> sh) != (lut & !t)
}

/// The operations to fold of a tree of `n` candidate operations and its
/// root (node `n`), as a bit mask (bit k: candidate k), given per node its
/// candidate and other arguments (`cand_args`, `outside_args`): of the subsets whose
/// operations are all reached from the root through folded ones and that
/// leave at most three leaves, the one with the most operations, then the
/// fewest leaves, then the least as a number. Only the reached subsets are
/// visited, each once: grown from the root by adding a candidate argument
/// of the set, each candidate either taken or ruled out for the rest of
/// that branch (a chain of ten operations has ten such subsets, not 1,023).
fn best_fold(n: usize, cand_args: &[u32], outside_args: &[u64]) -> u32 {
    struct Search<'a> {
        cand_args: &'a [u32],
        outside_args: &'a [u64],
        n: usize,
        best: (usize, usize, u32),
    }
    impl Search<'_> {
        /// `set` (reached from the root), its leaves so far (`c`, `o`), and
        /// the candidates that may still join (`frontier`, not in `out`).
        fn grow(&mut self, set: u32, c: u32, o: u64, frontier: u32, out: u32) {
            if set != 0 {
                let inside = set.count_ones() as usize;
                let nleaves = (c & !set).count_ones() as usize + o.count_ones() as usize;
                let (bi, bl, bs) = self.best;
                if nleaves <= 3 && (inside > bi || inside == bi && (nleaves < bl || nleaves == bl && set < bs)) {
                    self.best = (inside, nleaves, set);
                }
            }
            let mut out = out;
            let mut bits = frontier;
            while bits != 0 {
                let k = bits.trailing_zeros() as usize;
                bits &= bits - 1;
                let with = set | 1 << k;
                let next = (frontier | self.cand_args[k]) & !with & !out & !(1u32 << self.n);
                self.grow(with, c | self.cand_args[k], o | self.outside_args[k], next, out);
                // The sets without k: k out for the rest of this level.
                out |= 1 << k;
            }
        }
    }
    let root_args = cand_args[n] & !(1u32 << n);
    let mut search = Search { cand_args, outside_args, n, best: (0, usize::MAX, 0) };
    search.grow(0, cand_args[n], outside_args[n], root_args, 0);
    search.best.2
}

impl Lower<'_> {
    fn bitop_args(&self, i: Inst) -> SmallVec<[Value; 3]> {
        self.f.dfg.inst_args(i).iter().map(|&a| self.f.dfg.resolve_aliases(a)).collect()
    }

    /// The bitwise instruction of type `ty` defining `v`, if any.
    fn bitop_def(&self, v: Value, ty: Type) -> Option<Inst> {
        if self.f.dfg.value_type(v) != ty {
            return None;
        }
        match self.f.dfg.value_def(v) {
            ValueDef::Result(i, 0) if is_bitop(self.f.dfg.insts[i].opcode()) => Some(i),
            _ => None,
        }
    }

    /// The distinct leaves of the tree at `root` with `folded` expanded.
    fn tree_leaves(&self, root: Inst, folded: &[Value]) -> SmallVec<[Value; 4]> {
        let mut out = SmallVec::new();
        let mut seen: SmallVec<[Value; MAX_FOLDED]> = SmallVec::new();
        let mut stack: SmallVec<[Value; 16]> = self.bitop_args(root).into_iter().rev().collect();
        while let Some(v) = stack.pop() {
            if folded.contains(&v) {
                if seen.contains(&v) {
                    continue;
                }
                seen.push(v);
                let ValueDef::Result(i, _) = self.f.dfg.value_def(v) else { unreachable!() };
                stack.extend(self.bitop_args(i).into_iter().rev());
            } else if !out.contains(&v) {
                out.push(v);
            }
        }
        out
    }

    /// The truth table of instruction `i` given the tables of the leaves.
    /// (`tables` and `memo` are short lists: a tree has at most three
    /// leaves and `MAX_FOLDED` operations.)
    fn tree_eval(&self, i: Inst, folded: &[Value], tables: &[(Value, u8)], memo: &mut Memo) -> u8 {
        let args = self.bitop_args(i);
        let e = |v: Value, memo: &mut Memo| -> u8 {
            if let Some(&(_, t)) = memo.iter().find(|&&(w, _)| w == v) {
                return t;
            }
            let t = if folded.contains(&v) {
                let ValueDef::Result(j, _) = self.f.dfg.value_def(v) else { unreachable!() };
                self.tree_eval(j, folded, tables, memo)
            } else {
                tables.iter().find(|&&(w, _)| w == v).expect("a leaf has a table").1
            };
            memo.push((v, t));
            t
        };
        match self.f.dfg.insts[i].opcode() {
            Opcode::Band => e(args[0], memo) & e(args[1], memo),
            Opcode::Bor => e(args[0], memo) | e(args[1], memo),
            Opcode::Bxor => e(args[0], memo) ^ e(args[1], memo),
            Opcode::Bnot => !e(args[0], memo),
            Opcode::Bitselect => {
                let c = e(args[0], memo);
                let x = e(args[1], memo);
                let y = e(args[2], memo);
                (c & x) | (!c & y)
            }
            op => unreachable!("not a bitwise op: {}", op),
        }
    }

    /// The whole bitwise tree at `root` as one LOP3 (two for i64).
    pub fn lop3_tree(&mut self, root: Inst) -> VReg {
        let root_val = self.f.dfg.first_result(root);
        let ty = self.f.dfg.value_type(root_val);
        let wide = ty == types::I64 || ty == types::F64;
        let tabs = [LUT_A, LUT_B, LUT_C];
        let (slot, imm_leaf, lut) = match self.lone_bitop(root, ty) {
            Some(lone) => lone,
            None => self.folded_tree(root, ty),
        };
        // Constant result.
        if slot.iter().all(|s| s.is_none()) {
            let k = if lut & 1 != 0 { u64::MAX } else { 0 };
            return if wide { self.mov_imm64(k) } else { self.mov_imm(k as u32) };
        }
        // The tree is one of its register leaves.
        for k in 0..3 {
            if let Some(v) = slot[k] {
                if lut == tabs[k] && Some(v) != imm_leaf {
                    return self.put_in_reg(v);
                }
            }
        }

        let mut srcs = [S::Z; 3];
        let mut kh = [0u32; 3];
        for k in 0..3 {
            if let Some(v) = slot[k] {
                if Some(v) == imm_leaf {
                    let bits = const_bits(self, v).unwrap();
                    srcs[k] = S::Imm(bits as u32);
                    kh[k] = (bits >> 32) as u32;
                } else {
                    srcs[k] = S::Lo(match self.ireduce_of_pair(v) {
                        // The low word of the pair itself: no copy for the ireduce.
                        Some(x) if !wide => self.put_in_reg(x),
                        _ => self.put_in_reg(v),
                    });
                }
            }
        }
        let d = self.temp(if wide { Class::RPair } else { Class::R });
        let mut b = Bundle::new().lop3(D::Lo(d), srcs[0], srcs[1], srcs[2], lut);
        if wide {
            b = b.lop3(D::Hi(d), hi_of(srcs[0], kh[0]), hi_of(srcs[1], kh[1]), hi_of(srcs[2], kh[2]), lut);
        }
        self.emit_b(b);
        d
    }

    /// [`Lower::lop3_tree`]'s search: the subset of the bitwise operations
    /// under `root` to fold with it, its leaves in the LOP3's slots (a
    /// constant leaf as the immediate `B`) and the table.
    fn folded_tree(&self, root: Inst, ty: Type) -> ([Option<Value>; 3], Option<Value>, u8) {
        // The bitwise operations reachable from the root (breadth first, at
        // most MAX_FOLDED), then the subset of them to fold with the most
        // operations in the tree and at most three leaves (ties: fewer
        // leaves). Exhaustive: a greedy growth can get stuck, e.g. on the
        // majority function, whose partial trees have four leaves.
        // (Breadth first through a list and a read position: the order a
        // queue gives, without allocating for the small trees.)
        let mut cands: SmallVec<[Value; MAX_FOLDED]> = SmallVec::new();
        let mut queue: SmallVec<[Value; 32]> = self.bitop_args(root).into_iter().collect();
        let mut head = 0;
        while let Some(&v) = queue.get(head) {
            head += 1;
            if cands.len() >= MAX_FOLDED {
                break;
            }
            if cands.contains(&v) {
                continue;
            }
            if let Some(i) = self.bitop_def(v, ty) {
                cands.push(v);
                queue.extend(self.bitop_args(i));
            }
        }
        // Each subset as a bit mask (bit k: `cands[k]` folded), the tree's
        // nodes by number (`cands`, then the root as node `n`): per node the
        // candidates among its arguments and its other arguments (by number
        // in `outside`).
        let n = cands.len();
        let mut cand_args = [0u32; MAX_FOLDED + 1];
        let mut outside_args = [0u64; MAX_FOLDED + 1];
        let mut outside: SmallVec<[Value; 16]> = SmallVec::new();
        for node in 0..=n {
            let inst = if node == n { root } else { self.bitop_def(cands[node], ty).expect("a candidate is a bitwise result") };
            for a in self.bitop_args(inst) {
                if let Some(k) = cands.iter().position(|&c| c == a) {
                    cand_args[node] |= 1 << k;
                } else {
                    let e = outside.iter().position(|&o| o == a).unwrap_or_else(|| {
                        outside.push(a);
                        outside.len() - 1
                    });
                    outside_args[node] |= 1 << e;
                }
            }
        }
        let best_set = best_fold(n, &cand_args, &outside_args);
        let folded: SmallVec<[Value; MAX_FOLDED]> = (0..n).filter(|&k| best_set >> k & 1 != 0).map(|k| cands[k]).collect();
        let leaves = self.tree_leaves(root, &folded);

        // Slots: registers in A, B, C; a constant leaf as the immediate SrcB
        // (then the registers are in A and C).
        let imm_leaf = leaves.iter().copied().find(|&v| const_bits(self, v).is_some());
        let regs: SmallVec<[Value; 3]> = leaves.iter().copied().filter(|&v| Some(v) != imm_leaf).collect();
        let mut slot: [Option<Value>; 3] = [None; 3];
        let order: &[usize] = if imm_leaf.is_some() { &[0, 2] } else { &[0, 1, 2] };
        for (k, &v) in regs.iter().enumerate() {
            slot[order[k]] = Some(v);
        }
        if imm_leaf.is_some() {
            slot[1] = imm_leaf;
        }
        let tabs = [LUT_A, LUT_B, LUT_C];
        // The leaves' tables (at most three, each leaf in one slot).
        let mut tables: SmallVec<[(Value, u8); 3]> = SmallVec::new();
        for (k, s) in slot.iter().enumerate() {
            if let Some(v) = s {
                tables.push((*v, tabs[k]));
            }
        }
        let lut = self.tree_eval(root, &folded, &tables, &mut SmallVec::new());
        // Drop the inputs the table does not depend on.
        for k in 0..3 {
            if !lut_depends(lut, tabs[k]) {
                slot[k] = None;
            }
        }

        (slot, imm_leaf, lut)
    }

    /// The common tree of nothing to fold: a `band`, `bor` or `bxor` of two
    /// distinct non-constant values neither of which is a bitwise result of
    /// the same type. Its slots and table without the search
    /// ([`Lower::folded_tree`] gives the same).
    fn lone_bitop(&self, root: Inst, ty: Type) -> Option<([Option<Value>; 3], Option<Value>, u8)> {
        let [a, b] = *self.f.dfg.inst_args(root) else { return None };
        let (a, b) = (self.f.dfg.resolve_aliases(a), self.f.dfg.resolve_aliases(b));
        if a == b || [a, b].iter().any(|&v| self.bitop_def(v, ty).is_some() || const_bits(self, v).is_some()) {
            return None;
        }
        let lut = match self.f.dfg.insts[root].opcode() {
            Opcode::Band => LUT_A & LUT_B,
            Opcode::Bor => LUT_A | LUT_B,
            Opcode::Bxor => LUT_A ^ LUT_B,
            _ => return None,
        };
        Some(([Some(a), Some(b), None], None, lut))
    }

    /// `x` when `v` is `ireduce x` of an i64 `x` (its low word is `v`'s
    /// register content).
    pub(crate) fn ireduce_of_pair(&self, v: Value) -> Option<Value> {
        match self.f.dfg.value_def(v) {
            ValueDef::Result(i, 0) if self.f.dfg.insts[i].opcode() == Opcode::Ireduce => {
                let x = self.f.dfg.resolve_aliases(self.f.dfg.inst_args(i)[0]);
                (self.f.dfg.value_type(x) == types::I64).then_some(x)
            }
            _ => None,
        }
    }

    /// The predicate `(x & k) != 0` of an i32 `x`: `LOP3 P, RZ, x, k, RZ,
    /// 0xc0, !PT` (its predicate output is "result nonzero", or-ed with the
    /// false `!PT`). An `ireduce`d pair is read in place.
    pub fn lop3_nz(&mut self, x: Value, k: u32) -> Pred {
        self.lop3_pred(x, k, None, 0xc0)
    }

    /// The predicate "some bit of `k` is clear in `x`" (for a single bit,
    /// `x & k == 0`): the predicate output of one LOP3 of `!x & k`.
    pub fn lop3_z(&mut self, x: Value, k: u32) -> Pred {
        self.lop3_pred(x, k, None, 0x0c)
    }

    /// The predicate "`x` and `y` differ in the bits of `k`" (a narrow
    /// inequality): the predicate output of one LOP3 of `(x ^ y) & k`.
    pub fn lop3_ne(&mut self, x: Value, y: Value, k: u32) -> Pred {
        let r = self.use_value(y);
        self.lop3_pred(x, k, Some(r), 0x48)
    }

    /// `P = lut(x, k, c) != 0` by one LOP3 with a predicate output (`c`
    /// `None`: `RZ`).
    fn lop3_pred(&mut self, x: Value, k: u32, c: Option<VReg>, lut: u8) -> Pred {
        let r = match self.ireduce_of_pair(x) {
            Some(pair) => self.use_value(pair),
            None => self.use_value(x),
        };
        let p = self.temp(Class::P);
        let b = Bundle::new()
            .inst(ursa_emit::forms::LOP3_RIR)
            .def(LOP3_RIR::PU, p)
            .set(LOP3_RIR::RD, R::Z)
            .use_(LOP3_RIR::RA, r)
            .set(LOP3_RIR::VB, k as u64);
        let b = match c {
            Some(c) => b.use_(LOP3_RIR::RC, c),
            None => b.set(LOP3_RIR::RC, R::Z),
        };
        self.emit_b(b.set(LOP3_RIR::LUT, lut as u64).set(LOP3_RIR::PP, P::T).set(LOP3_RIR::PP_NOT, true));
        p
    }

    /// `bmask`: all ones where the predicate holds, else 0 (`SEL d, RZ, -1, !p`).
    pub fn bmask_from_pred(&mut self, ty: Type, p: Pred) -> VReg {
        self.bmask_of(ty, p, true)
    }

    /// All ones where `p` does not hold, zero where it does: `SEL d, RZ,
    /// -1, p` (two for an i64).
    pub fn bmask_from_not_pred(&mut self, ty: Type, p: Pred) -> VReg {
        self.bmask_of(ty, p, false)
    }

    /// `SEL d, RZ, -1` on `!p` (`not`) or `p`, for each word of `ty`.
    fn bmask_of(&mut self, ty: Type, p: Pred, not: bool) -> VReg {
        let wide = ty == types::I64 || ty == types::F64;
        let d = self.temp(if wide { Class::RPair } else { Class::R });
        let mut b = Bundle::new().sel(D::Lo(d), S::Z, S::Imm(u32::MAX), p, not);
        if wide {
            b = b.sel(D::Hi(d), S::Z, S::Imm(u32::MAX), p, not);
        }
        self.emit_b(b);
        d
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn depends() {
        assert!(lut_depends(LUT_A, LUT_A));
        assert!(!lut_depends(LUT_A, LUT_B));
        assert!(!lut_depends(LUT_A, LUT_C));
        assert!(lut_depends(LUT_A ^ LUT_C, LUT_C));
        assert!(!lut_depends(LUT_A & LUT_B, LUT_C));
        assert!(!lut_depends(0xFF, LUT_A) && !lut_depends(0, LUT_B));
    }

    /// The choice of [`best_fold`] by the plain search: every subset in
    /// order, its reachability from the root first, a strictly better one
    /// replacing the best.
    fn best_fold_plain(n: usize, parents: &[u32], cand_args: &[u32], outside_args: &[u64]) -> u32 {
        let root_bit = 1u32 << n;
        let (mut best_set, mut best) = (0u32, (0usize, usize::MAX));
        for set in 1u32..root_bit {
            let mut reached = root_bit;
            loop {
                let next = (0..n).filter(|&k| set >> k & 1 != 0 && parents[k] & reached != 0).fold(reached, |r, k| r | 1 << k);
                if next == reached {
                    break;
                }
                reached = next;
            }
            if reached != set | root_bit {
                continue;
            }
            let (mut c, mut o) = (cand_args[n], outside_args[n]);
            for k in (0..n).filter(|&k| set >> k & 1 != 0) {
                c |= cand_args[k];
                o |= outside_args[k];
            }
            let nleaves = (c & !set).count_ones() as usize + o.count_ones() as usize;
            let inside = set.count_ones() as usize;
            if nleaves <= 3 && (inside, usize::MAX - nleaves) > (best.0, usize::MAX - best.1) {
                best = (inside, nleaves);
                best_set = set;
            }
        }
        best_set
    }

    #[test]
    fn the_fold_is_the_plain_search_s_choice() {
        let mut state = 7u64;
        let mut next = |m: u64| {
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (state >> 33) % m
        };
        for _ in 0..3000 {
            let n = 1 + next(MAX_FOLDED as u64) as usize;
            // Random trees and graphs (cycles too): each node's arguments
            // among the candidates and outside.
            let mut parents = [0u32; MAX_FOLDED];
            let mut cand_args = [0u32; MAX_FOLDED + 1];
            let mut outside_args = [0u64; MAX_FOLDED + 1];
            for node in 0..=n {
                for _ in 0..1 + next(3) {
                    if next(3) == 0 {
                        outside_args[node] |= 1 << next(6);
                    } else {
                        let k = next(n as u64) as usize;
                        parents[k] |= 1 << node;
                        cand_args[node] |= 1 << k;
                    }
                }
            }
            assert_eq!(
                best_fold(n, &cand_args, &outside_args),
                best_fold_plain(n, &parents, &cand_args, &outside_args),
                "{:?} {:?} {:?}",
                parents,
                cand_args,
                outside_args
            );
        }
    }
}
