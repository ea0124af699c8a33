//! Divergence analysis on CLIF: which values may differ between the lanes of
//! a warp, and so which branches may send the lanes of one warp different
//! ways (`docs/uniformity.md`, "Divergence analysis"). Also the control-flow
//! graph facts the reconvergence pass needs: reachable blocks, successors,
//! dominators and post-dominators.
//!
//! A value is **uniform** when it is the same in every lane that computes it
//! together. Sources of uniformity: constants, kernel parameters, the launch
//! dimensions and the CTA index (`%ursa_ntid_*`, `%ursa_nctaid_*`,
//! `%ursa_ctaid_*`), addresses of globals and stack slots (the same offset in
//! every lane's frame). Everything else is **divergent** at its source: the
//! thread and lane index, every load and atomic, results of calls, shuffles
//! and votes, and the parameters of a device function (its callers may pass
//! per-lane values). The analysis then runs to a fixed point:
//!
//! - a pure instruction with a divergent argument has divergent results;
//! - a block parameter is divergent if a branch passes it a divergent
//!   argument;
//! - **sync dependence:** a block parameter is divergent if its block is a
//!   join of a divergent branch: reachable from two of the branch's
//!   successor edges before the branch's immediate post-dominator (that
//!   block included) — lanes arrive from different sides with different
//!   values;
//! - **temporal divergence:** if a divergent branch lies on a cycle, lanes
//!   leave the cycle in different iterations, so every value defined on the
//!   cycle and used outside it is divergent.
//!
//! A branch (`brif`, `br_table`) is divergent when its condition or index is.

use std::cell::OnceCell;

use smallvec::SmallVec;

use cranelift_codegen::entity::EntityRef;
use cranelift_codegen::ir::{Block, Function, InstructionData, Value};
use ursa_emit::mods::SReg;
use ursa_isel::intrinsics::{self, Intrinsic};

/// The blocks at the ends of one block's edges: most blocks have one or
/// two, kept inline.
pub type Edges = SmallVec<[Block; 2]>;

/// The control-flow graph of the reachable blocks.
pub struct Cfg {
    /// Reverse postorder from the entry (the lowering's block order).
    pub rpo: Vec<Block>,
    /// Successor edges of each block, in branch order (a block can appear
    /// twice: `brif v, b(1), b(2)`), indexed by `Block::index()`.
    pub succs: Vec<Edges>,
    pub preds: Vec<Edges>,
    pub reachable: Vec<bool>,
    /// [`Cfg::idoms`] and [`Cfg::ipdoms`], computed on first use: the
    /// divergence analysis, the region planning and the barrier allocation
    /// all ask for them.
    idoms: OnceCell<Vec<Option<Block>>>,
    ipdoms: OnceCell<Vec<Option<Option<Block>>>>,
}

impl Cfg {
    pub fn new(f: &Function) -> Cfg {
        let n = f.dfg.num_blocks();
        let mut succs = vec![Edges::new(); n];
        for b in f.layout.blocks() {
            if let Some(t) = f.layout.last_inst(b) {
                for bc in f.dfg.insts[t].branch_destination(&f.dfg.jump_tables, &f.dfg.exception_tables) {
                    succs[b.index()].push(bc.block(&f.dfg.value_lists));
                }
            }
        }
        let mut reachable = vec![false; n];
        let mut post = Vec::new();
        if let Some(entry) = f.layout.entry_block() {
            post = reverse_postorder(entry.index(), n, |x, i| succs[x].get(i).map(|b: &Block| b.index()))
                .into_iter()
                .map(Block::new)
                .collect();
            for b in &post {
                reachable[b.index()] = true;
            }
        }
        let mut preds = vec![Edges::new(); n];
        for &b in &post {
            for &s in &succs[b.index()] {
                if !preds[s.index()].contains(&b) {
                    preds[s.index()].push(b);
                }
            }
        }
        Cfg { rpo: post, succs, preds, reachable, idoms: OnceCell::new(), ipdoms: OnceCell::new() }
    }

    pub fn num_blocks(&self) -> usize {
        self.succs.len()
    }

    /// Blocks reachable from `from` (included) without entering `stop`
    /// (`stop` itself is included when reached).
    pub fn reach_until(&self, from: Block, stop: Option<Block>) -> Vec<bool> {
        self.reach_until_any(from, &self.mask(stop))
    }

    /// `stop` (if any) as a mask over the blocks.
    pub fn mask(&self, stop: Option<Block>) -> Vec<bool> {
        self.mask_of(stop.as_slice())
    }

    /// `blocks` as a mask over the blocks.
    pub fn mask_of(&self, blocks: &[Block]) -> Vec<bool> {
        let mut m = vec![false; self.num_blocks()];
        for b in blocks {
            m[b.index()] = true;
        }
        m
    }

    /// Is there a path of at least one edge from `b` back to `b` that does
    /// not pass through `avoid`?
    pub fn cycles_avoiding(&self, b: Block, avoid: Block) -> bool {
        self.cycles_avoiding_any(b, &self.mask(Some(avoid)))
    }

    /// Is there a path of at least one edge from `b` back to `b` that does
    /// not pass through a block marked in `avoid`?
    pub fn cycles_avoiding_any(&self, b: Block, avoid: &[bool]) -> bool {
        let mut seen = vec![false; self.num_blocks()];
        let mut stack: Vec<Block> = self.succs[b.index()].to_vec();
        while let Some(x) = stack.pop() {
            if x == b {
                return true;
            }
            if avoid[x.index()] || seen[x.index()] {
                continue;
            }
            seen[x.index()] = true;
            stack.extend(self.succs[x.index()].iter().copied());
        }
        false
    }

    /// Immediate dominators (`None` for the entry and unreachable blocks).
    pub fn idoms(&self) -> &[Option<Block>] {
        self.idoms.get_or_init(|| self.compute_idoms())
    }

    fn compute_idoms(&self) -> Vec<Option<Block>> {
        let n = self.num_blocks();
        let mut order = vec![usize::MAX; n];
        for (k, b) in self.rpo.iter().enumerate() {
            order[b.index()] = k;
        }
        let nodes: Vec<usize> = self.rpo.iter().map(|b| b.index()).collect();
        let Some(&root) = nodes.first() else { return vec![None; n] };
        let doms = iterate_doms(n, root, &nodes, |x, i| self.preds[x].get(i).map(|b| b.index()), &order);
        (0..n).map(|i| doms[i].filter(|&d| d != i).map(|d| self.rpo[order[d]])).collect()
    }

    /// Immediate post-dominators over the graph with a virtual exit node
    /// after every block that ends the function (return, trap, tail call):
    /// `Some(Some(j))` a block, `Some(None)` the virtual exit, `None` for a
    /// block that cannot reach an exit (an endless loop) or is unreachable.
    pub fn ipdoms(&self) -> &[Option<Option<Block>>] {
        self.ipdoms.get_or_init(|| self.compute_ipdoms())
    }

    fn compute_ipdoms(&self) -> Vec<Option<Option<Block>>> {
        let n = self.num_blocks();
        let exit = n;
        // The reverse graph, without building it: node x's successors there
        // are its predecessors (each once, in reverse postorder), the exit's
        // are the blocks without a successor; node x's predecessors there are
        // its successors (a block named twice by one branch changes no
        // intersection), the exit's for a block without one.
        let exits: Vec<usize> = self.rpo.iter().filter(|b| self.succs[b.index()].is_empty()).map(|b| b.index()).collect();
        let rsucc = |x: usize, i: usize| if x == exit { exits.get(i).copied() } else { self.preds[x].get(i).map(|b| b.index()) };
        let rpred = |x: usize, i: usize| match self.succs.get(x).map(|ss| &ss[..]) {
            Some([]) => (i == 0).then_some(exit),
            Some(ss) => ss.get(i).map(|b| b.index()),
            None => None,
        };
        // Reverse postorder of the reverse graph from the exit.
        let post = reverse_postorder(exit, n + 1, rsucc);
        let mut order = vec![usize::MAX; n + 1];
        for (k, &x) in post.iter().enumerate() {
            order[x] = k;
        }
        let doms = iterate_doms(n + 1, exit, &post, rpred, &order);
        (0..n)
            .map(|i| match doms[i] {
                Some(d) if d == exit => Some(None),
                Some(d) if d != i => Some(Some(Block::new(d))),
                _ => None,
            })
            .collect()
    }
}

impl Cfg {
    /// The nearest block through which every path from `b` to `target`
    /// passes, ignoring paths that enter a block marked in `skip`: the
    /// immediate post-dominator of `b` in the graph whose only exit is
    /// `target`. `None` when `b` cannot reach `target` that way. (`target`
    /// itself can be the answer.)
    pub fn ipdom_towards(&self, b: Block, target: Block, skip: &[bool]) -> Option<Block> {
        let n = self.num_blocks();
        // Blocks reachable from b without entering a skipped block; target
        // ends every path.
        let mut nodes = vec![false; n];
        let mut stack = vec![b];
        while let Some(x) = stack.pop() {
            if nodes[x.index()] || (skip[x.index()] && x != target) {
                continue;
            }
            nodes[x.index()] = true;
            if x != target {
                stack.extend(self.succs[x.index()].iter().copied());
            }
        }
        if !nodes[target.index()] || b == target {
            return None;
        }
        // The reverse graph restricted to those blocks, from target.
        let mut rsuccs: Vec<Vec<usize>> = vec![Vec::new(); n];
        let mut rpreds: Vec<Vec<usize>> = vec![Vec::new(); n];
        for x in (0..n).filter(|&x| nodes[x] && x != target.index()) {
            for s in &self.succs[x] {
                if nodes[s.index()] && !rsuccs[s.index()].contains(&x) {
                    rsuccs[s.index()].push(x);
                    rpreds[x].push(s.index());
                }
            }
        }
        let post = reverse_postorder(target.index(), n, |x, i| rsuccs[x].get(i).copied());
        let mut order = vec![usize::MAX; n];
        for (k, &x) in post.iter().enumerate() {
            order[x] = k;
        }
        if order[b.index()] == usize::MAX {
            return None;
        }
        let doms = iterate_doms(n, target.index(), &post, |x, i| rpreds[x].get(i).copied(), &order);
        doms[b.index()].filter(|&d| d != b.index()).map(Block::new)
    }

    /// Blocks from which `to` can be reached (`to` included).
    pub fn reaching(&self, to: Block) -> Vec<bool> {
        let mut seen = vec![false; self.num_blocks()];
        let mut stack = vec![to];
        while let Some(x) = stack.pop() {
            if !seen[x.index()] {
                seen[x.index()] = true;
                stack.extend(self.preds[x.index()].iter().copied());
            }
        }
        seen
    }

    /// Blocks reachable from `from` (included) without entering any block
    /// marked in `stop` (those are included when reached).
    pub fn reach_until_any(&self, from: Block, stop: &[bool]) -> Vec<bool> {
        let mut seen = vec![false; self.num_blocks()];
        let mut stack = vec![from];
        while let Some(b) = stack.pop() {
            if seen[b.index()] {
                continue;
            }
            seen[b.index()] = true;
            if stop[b.index()] {
                continue;
            }
            stack.extend(self.succs[b.index()].iter().copied());
        }
        seen
    }
}

/// The nodes (below `n`) reachable from `root` in reverse postorder (depth
/// first, successors in order; `succ(x, i)` is the `i`th successor of `x`).
fn reverse_postorder(root: usize, n: usize, succ: impl Fn(usize, usize) -> Option<usize>) -> Vec<usize> {
    let mut seen = vec![false; n];
    let mut post = Vec::new();
    let mut stack = vec![(root, 0usize)];
    seen[root] = true;
    while let Some((x, i)) = stack.pop() {
        if let Some(s) = succ(x, i) {
            stack.push((x, i + 1));
            if !seen[s] {
                seen[s] = true;
                stack.push((s, 0));
            }
        } else {
            post.push(x);
        }
    }
    post.reverse();
    post
}

/// Cooper, Harvey and Kennedy's iterative dominator algorithm over node
/// indices: `nodes` in reverse postorder from `root`, `order` their position,
/// `pred(x, i)` the `i`th predecessor of `x`.
fn iterate_doms(
    n: usize,
    root: usize,
    nodes: &[usize],
    pred: impl Fn(usize, usize) -> Option<usize>,
    order: &[usize],
) -> Vec<Option<usize>> {
    let mut dom: Vec<Option<usize>> = vec![None; n];
    dom[root] = Some(root);
    let intersect = |dom: &[Option<usize>], mut a: usize, mut b: usize| {
        while a != b {
            while order[a] > order[b] {
                a = dom[a].expect("processed");
            }
            while order[b] > order[a] {
                b = dom[b].expect("processed");
            }
        }
        a
    };
    let mut changed = true;
    while changed {
        changed = false;
        for &x in nodes.iter().skip(1) {
            let mut new: Option<usize> = None;
            for p in (0..).map_while(|i| pred(x, i)) {
                if order[p] == usize::MAX || dom[p].is_none() {
                    continue;
                }
                new = Some(match new {
                    None => p,
                    Some(q) => intersect(&dom, p, q),
                });
            }
            if new.is_some() && dom[x] != new {
                dom[x] = new;
                changed = true;
            }
        }
    }
    dom
}

/// The intrinsic a call instruction calls, if any.
pub fn intrinsic_of(f: &Function, inst: cranelift_codegen::ir::Inst) -> Option<Intrinsic> {
    let InstructionData::Call { func_ref, .. } = f.dfg.insts[inst] else { return None };
    let name = ursa_isel::lower::callee_symbol(f, func_ref)?;
    let sig = &f.dfg.signatures[f.dfg.ext_funcs[func_ref].signature];
    intrinsics::lookup(&name, sig).ok().flatten()
}

/// The result of the analysis.
pub struct Divergence {
    /// Divergent values, by `Value::index()`.
    pub values: Vec<bool>,
    /// Blocks ending in a divergent `brif` / `br_table`, by `Block::index()`.
    pub branches: Vec<bool>,
}

impl Divergence {
    /// No divergent branch and no value known uniform (for a function
    /// without conditional branches, when only its branches are asked about).
    pub fn without_branches(cfg: &Cfg) -> Divergence {
        Divergence { values: Vec::new(), branches: vec![false; cfg.num_blocks()] }
    }
    pub fn is_divergent(&self, v: Value) -> bool {
        self.values.get(v.index()).copied().unwrap_or(true)
    }
}

/// Runs the analysis. `kernel`: the entry block's parameters are kernel
/// parameters (uniform); otherwise they are a device function's arguments.
pub fn analyze(f: &Function, cfg: &Cfg, kernel: bool) -> Divergence {
    let nv = f.dfg.num_values();
    let mut div = vec![false; nv];
    let mut branches = vec![false; cfg.num_blocks()];
    if !kernel {
        if let Some(entry) = f.layout.entry_block() {
            for &p in f.dfg.block_params(entry) {
                div[p.index()] = true;
            }
        }
    }
    let ipdoms = cfg.ipdoms();
    let mut done_branch = vec![false; cfg.num_blocks()];
    loop {
        let mut changed = false;
        let mark = |div: &mut Vec<bool>, v: Value, changed: &mut bool| {
            if !div[v.index()] {
                div[v.index()] = true;
                *changed = true;
            }
        };
        // Data dependence.
        for &b in &cfg.rpo {
            for inst in f.layout.block_insts(b) {
                let op = f.dfg.insts[inst].opcode();
                let source = if op.is_call() {
                    !matches!(
                        intrinsic_of(f, inst),
                        Some(Intrinsic::Const0(_))
                            | Some(Intrinsic::Special(SReg::SR_CTAID_X | SReg::SR_CTAID_Y | SReg::SR_CTAID_Z))
                            | Some(Intrinsic::Barrier)
                    )
                } else {
                    op.can_load() || op.other_side_effects() || op.can_store()
                };
                let from_args = f.dfg.inst_args(inst).iter().any(|a| div[a.index()]);
                if source || from_args {
                    for &r in f.dfg.inst_results(inst) {
                        mark(&mut div, r, &mut changed);
                    }
                }
                if op.is_branch() {
                    let cond_div = match f.dfg.insts[inst] {
                        InstructionData::Brif { arg, .. } | InstructionData::BranchTable { arg, .. } => div[arg.index()],
                        _ => false,
                    };
                    if cond_div && !branches[b.index()] {
                        branches[b.index()] = true;
                        changed = true;
                    }
                    for bc in f.dfg.insts[inst].branch_destination(&f.dfg.jump_tables, &f.dfg.exception_tables) {
                        let dest = bc.block(&f.dfg.value_lists);
                        let params = f.dfg.block_params(dest).to_vec();
                        for (k, a) in bc.args(&f.dfg.value_lists).enumerate() {
                            let a_div = match a {
                                cranelift_codegen::ir::BlockArg::Value(v) => div[v.index()],
                                _ => true,
                            };
                            if a_div {
                                if let Some(&p) = params.get(k) {
                                    mark(&mut div, p, &mut changed);
                                }
                            }
                        }
                    }
                }
            }
        }
        // Sync and temporal dependence of newly divergent branches.
        for &b in &cfg.rpo {
            if !branches[b.index()] || done_branch[b.index()] {
                continue;
            }
            done_branch[b.index()] = true;
            changed = true;
            let stop = match ipdoms[b.index()] {
                Some(Some(j)) => Some(j),
                _ => None,
            };
            let mut count = vec![0u32; cfg.num_blocks()];
            for &s in &cfg.succs[b.index()] {
                let r = cfg.reach_until(s, stop);
                for (i, &x) in r.iter().enumerate() {
                    if x {
                        count[i] += 1;
                    }
                }
            }
            for (i, &c) in count.iter().enumerate() {
                if c >= 2 {
                    for &p in f.dfg.block_params(Block::new(i)) {
                        div[p.index()] = true;
                    }
                }
            }
            // Temporal: the blocks on a cycle through b.
            let fwd = cfg.reach_until(b, None);
            let bwd = cfg.reaching(b);
            let on_cycle: Vec<bool> = (0..cfg.num_blocks()).map(|i| fwd[i] && bwd[i]).collect();
            if !cfg.preds[b.index()].iter().any(|p| fwd[p.index()]) {
                continue;
            }
            let mut defined_in = vec![false; nv];
            for &x in &cfg.rpo {
                if !on_cycle[x.index()] {
                    continue;
                }
                for &p in f.dfg.block_params(x) {
                    defined_in[p.index()] = true;
                }
                for inst in f.layout.block_insts(x) {
                    for &r in f.dfg.inst_results(inst) {
                        defined_in[r.index()] = true;
                    }
                }
            }
            for &x in &cfg.rpo {
                let outside = !on_cycle[x.index()];
                for inst in f.layout.block_insts(x) {
                    let mut used: Vec<Value> = f.dfg.inst_args(inst).to_vec();
                    for bc in f.dfg.insts[inst].branch_destination(&f.dfg.jump_tables, &f.dfg.exception_tables) {
                        let dest = bc.block(&f.dfg.value_lists);
                        // A use is outside the cycle if the block using it or
                        // the edge's destination is.
                        if outside || !on_cycle[dest.index()] {
                            for a in bc.args(&f.dfg.value_lists) {
                                if let cranelift_codegen::ir::BlockArg::Value(v) = a {
                                    used.push(v);
                                }
                            }
                        }
                    }
                    if outside || op_is_branch(f, inst) {
                        for v in used {
                            if defined_in[v.index()] && (outside || !f.dfg.inst_args(inst).contains(&v)) {
                                div[v.index()] = true;
                            }
                        }
                    }
                }
            }
        }
        if !changed {
            break;
        }
    }
    Divergence { values: div, branches }
}

fn op_is_branch(f: &Function, inst: cranelift_codegen::ir::Inst) -> bool {
    f.dfg.insts[inst].opcode().is_branch()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn func(src: &str) -> Function {
        cranelift_reader::parse_functions(src).unwrap().remove(0)
    }

    /// The blocks (by number) ending in a divergent branch.
    fn divergent_branches(src: &str, kernel: bool) -> Vec<usize> {
        let f = func(src);
        let cfg = Cfg::new(&f);
        let d = analyze(&f, &cfg, kernel);
        d.branches.iter().enumerate().filter(|(_, &x)| x).map(|(i, _)| i).collect()
    }

    const LOOP: &str = "function %k(i64, i32) {
    fn0 = %ursa_tid_x() -> i32
    fn1 = %ursa_ctaid_x() -> i32
block0(v0: i64, v1: i32):
    v2 = call fn0()
    v3 = call fn1()
    v4 = iconst.i32 0
    jump block1(v4)
block1(v5: i32):
    v6 = icmp slt v5, BOUND
    brif v6, block2, block3
block2:
    v7 = iconst.i32 1
    v8 = iadd v5, v7
    jump block1(v8)
block3:
    brif v5, block4, block5
block4:
    jump block5
block5:
    return
}";

    #[test]
    fn uniform_sources_give_uniform_branches() {
        // Bound: a kernel parameter, the CTA index.
        assert_eq!(divergent_branches(&LOOP.replace("BOUND", "v1"), true), Vec::<usize>::new());
        assert_eq!(divergent_branches(&LOOP.replace("BOUND", "v3"), true), Vec::<usize>::new());
        // The same parameter in a device function is a per-lane argument.
        assert_eq!(divergent_branches(&LOOP.replace("BOUND", "v1"), false), vec![1, 3]);
    }

    #[test]
    fn temporal_divergence_after_a_divergent_loop_exit() {
        // Bound: the thread index. The counter is uniform among the lanes
        // still in the loop, but lanes leave in different iterations, so
        // its value after the loop (block3's branch) is divergent.
        assert_eq!(divergent_branches(&LOOP.replace("BOUND", "v2"), true), vec![1, 3]);
    }

    #[test]
    fn sync_dependence_at_a_join() {
        // Both arms pass constants, but which one a lane gets depends on the
        // thread index: the join's parameter is divergent.
        let src = "function %k(i64) {
    fn0 = %ursa_tid_x() -> i32
block0(v0: i64):
    v1 = call fn0()
    brif v1, block1, block2
block1:
    v2 = iconst.i32 1
    jump block3(v2)
block2:
    v3 = iconst.i32 2
    jump block3(v3)
block3(v4: i32):
    brif v4, block4, block5
block4:
    jump block5
block5:
    return
}";
        assert_eq!(divergent_branches(src, true), vec![0, 3]);
        // The same shape on a constant: nothing diverges.
        let uni = src.replace("v1 = call fn0()", "v1 = iconst.i32 7");
        assert_eq!(divergent_branches(&uni, true), Vec::<usize>::new());
    }

    #[test]
    fn post_dominators_with_a_virtual_exit() {
        let f = func(&LOOP.replace("BOUND", "v2"));
        let cfg = Cfg::new(&f);
        let ip = cfg.ipdoms();
        let b = |n: u32| Block::from_u32(n);
        assert_eq!(ip[1], Some(Some(b(3))));
        assert_eq!(ip[3], Some(Some(b(5))));
        assert_eq!(ip[5], Some(None));
        assert!(cfg.cycles_avoiding(b(1), b(3)));
        assert!(!cfg.cycles_avoiding(b(3), b(1)));
    }

    #[test]
    fn post_dominator_towards_one_exit() {
        // block3 returns early from the loop; towards block5's return every
        // path from the loop header passes block5 itself, towards block3's
        // it passes block2.
        let src = "function %k(i32) {
block0(v0: i32):
    jump block1
block1:
    brif v0, block2, block5
block2:
    brif v0, block3, block4
block3:
    return
block4:
    jump block1
block5:
    return
}";
        let f = func(src);
        let cfg = Cfg::new(&f);
        let b = |n: u32| Block::from_u32(n);
        assert_eq!(cfg.ipdoms()[1], Some(None));
        let mut skip = cfg.mask(Some(b(3)));
        assert_eq!(cfg.ipdom_towards(b(1), b(5), &skip), Some(b(5)));
        skip = cfg.mask(Some(b(5)));
        assert_eq!(cfg.ipdom_towards(b(1), b(3), &skip), Some(b(2)));
        assert_eq!(cfg.ipdom_towards(b(5), b(3), &skip), None);
    }
}
