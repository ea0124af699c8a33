//! Divergence analysis on CLIF: which values may differ between the lanes of
//! a warp, and so which branches may send the lanes of one warp different
//! ways (`docs/uniformity.md`, "Divergence analysis").
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

use cranelift_codegen::entity::EntityRef;
use cranelift_codegen::ir::{Block, Function, InstructionData, Value};
use ursa_emit::mods::SReg;
use ursa_isel::intrinsics::{self, Intrinsic};

use crate::ir::cfg::Cfg;

/// The intrinsic a call instruction calls, if any.
pub fn intrinsic_of(f: &Function, inst: cranelift_codegen::ir::Inst) -> Option<Intrinsic> {
    // (A `try_call` of an intrinsic, in a function as written, is its call.)
    let (InstructionData::Call { func_ref, .. } | InstructionData::TryCall { func_ref, .. }) = f.dfg.insts[inst] else { return None };
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
