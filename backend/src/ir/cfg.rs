//! The control-flow graph of a CLIF function as the backend's analyses read
//! it: reachable blocks, successors and predecessors, reverse postorder,
//! dominators and post-dominators (computed on demand). One graph is built
//! per function and shared by the divergence analysis, reconvergence
//! planning, barrier-register allocation and the uniform-value pass.

use std::cell::OnceCell;

use smallvec::SmallVec;

use cranelift_codegen::entity::EntityRef;
use cranelift_codegen::ir::{Block, Function};
pub(crate) use ursa_isel::order::reverse_postorder_into;

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
        // Reverse postorder from the entry, `reachable` its visited set.
        let mut reachable = vec![false; n];
        let mut post = Vec::with_capacity(n);
        if let Some(entry) = f.layout.entry_block() {
            reverse_postorder_into(
                entry,
                |x, i| succs[x.index()].get(i).copied(),
                |b| !std::mem::replace(&mut reachable[b.index()], true),
                &mut post,
            );
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

    /// Each block's place in [`Cfg::rpo`] (`usize::MAX` for an unreachable
    /// block), indexed by `Block::index()`.
    pub fn rpo_order(&self) -> Vec<usize> {
        let mut order = vec![usize::MAX; self.num_blocks()];
        for (k, b) in self.rpo.iter().enumerate() {
            order[b.index()] = k;
        }
        order
    }

    fn compute_idoms(&self) -> Vec<Option<Block>> {
        let n = self.num_blocks();
        let order = self.rpo_order();
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
pub(crate) fn reverse_postorder(root: usize, n: usize, succ: impl Fn(usize, usize) -> Option<usize>) -> Vec<usize> {
    let mut seen = vec![false; n];
    let mut post = Vec::new();
    reverse_postorder_into(root, succ, |x| !std::mem::replace(&mut seen[x], true), &mut post);
    post
}

/// Whether some edge of `blocks` does not go forward in their order (to the
/// block itself or an earlier one). Without such an edge there is no cycle:
/// any cycle has one in any order of its blocks.
pub(crate) fn has_backward_edge(blocks: &[ursa_isel::vcode::VBlock]) -> bool {
    blocks.iter().enumerate().any(|(b, blk)| blk.succs.iter().any(|s| s.0 as usize <= b))
}

/// Cooper, Harvey and Kennedy's iterative dominator algorithm over node
/// indices: `nodes` in reverse postorder from `root`, `order` their position,
/// `pred(x, i)` the `i`th predecessor of `x`.
pub(crate) fn iterate_doms(
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
