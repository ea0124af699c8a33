//! Reconvergence planning: where the `BSSY Bk, J` / `BSYNC Bk` regions around the
//! divergent branches of a kernel or a device function go (`docs/kernels.md`, "Reconvergence"; the protocol of
//! `docs/isa-extensions.md` 3.4–3.5).
//!
//! The regions are planned on CLIF ([`plan`], before instruction selection,
//! with the divergence analysis of [`crate::mid::divergence`]) and the
//! instructions put into the laid-out code after `encode` (`insert`):
//!
//! - For a divergent `brif` / `br_table` in block `b`, the join `J` is the
//!   immediate post-dominator of `b`; no region when `J` only ends the
//!   kernel. When it is the virtual exit (lanes leave by different
//!   `return`s), a kernel's join is found past the exit tails
//!   (`exit_join`: the lanes that end on the way count as arrived), and a
//!   device function's lanes meet at every return block (one region from
//!   the entry). An intended early exit (`if (i >= n) return;`) needs none.
//! - The `BSSY` goes at the start of a block `P` executed once per entry into
//!   the region: `b` itself, or — when `b` can be reached again from itself
//!   without passing `J` (a loop whose exit is divergent) — the nearest
//!   dominator of `b` that cannot (the loop's preheader). Every path from `P`
//!   must meet `J` or run into an exit tail; a branch for which no such `P`
//!   exists gets no region and is reported in [`Plan::skipped`].
//! - A branch into a cold block (`Layout::is_cold`: the byte-wise path of a
//!   possibly misaligned access) gets no region: it is almost never taken.
//! - Divergent branches with the same joins share one region, set up at the
//!   nearest common dominator of their blocks.
//! - `BSYNC Bk` is the first instruction of each join (after the `BSYNC` of a
//!   region that ends there, before the `BSSY` of one that starts there),
//!   followed by `BREAK Bk` when a lane could otherwise meet a `BSYNC Bk`
//!   again as a stale member.
//! - **Barrier registers** by interference ([`crate::reconv::alloc_bregs`]);
//!   a device function avoids the registers its callers may hold
//!   ([`crate::module::call_graph`]) or saves them at entry and restores them at
//!   return; a region nested deeper than the 16 registers borrows one
//!   (saves and restores around it: [`crate::reconv::insert_breg_saves`]).
//!
//! It also rejects a CTA barrier (`%ursa_barrier`, or a call that reaches
//! one) in divergent control flow ([`check_barriers`]).

use cranelift_codegen::entity::EntityRef;
use cranelift_codegen::ir::{self, Block, Function, InstructionData, Opcode};
use ursa_isel::intrinsics::{self, Intrinsic};

use crate::ir::cfg::Cfg;
use crate::mid::divergence::{self, Divergence};
use crate::reconv::alloc_bregs;
use crate::reconv::plan::{CallSite, Callee, Group, ModuleFacts, Plan};
use crate::Error;

/// Does `j` only end the kernel (a `return`, possibly behind argument-free
/// jumps)?
fn only_exits(f: &Function, j: Block) -> bool {
    let mut b = j;
    for _ in 0..8 {
        let mut insts = f.layout.block_insts(b);
        let Some(first) = insts.next() else { return false };
        if insts.next().is_some() {
            return false;
        }
        match f.dfg.insts[first].opcode() {
            Opcode::Return => return true,
            Opcode::Jump => {
                let dests = f.dfg.insts[first].branch_destination(&f.dfg.jump_tables, &f.dfg.exception_tables);
                let bc = dests[0];
                if bc.args(&f.dfg.value_lists).next().is_some() || !f.dfg.block_params(b).is_empty() {
                    return false;
                }
                b = bc.block(&f.dfg.value_lists);
            }
            _ => return false,
        }
    }
    false
}

/// The calls of `f` to functions that are not intrinsics.
pub fn call_sites(f: &Function) -> Vec<CallSite> {
    let mut out = Vec::new();
    for b in f.layout.blocks() {
        for inst in f.layout.block_insts(b) {
            let callee = match f.dfg.insts[inst] {
                // (A `try_call` is a call: the module's call graph is made
                // from the functions as written, before `legalize_try_calls`.)
                InstructionData::Call { func_ref, .. } | InstructionData::TryCall { func_ref, .. } => {
                    match ursa_isel::lower::callee_symbol(f, func_ref) {
                        Some(name) if !name.starts_with(intrinsics::PREFIX) => Callee::Direct(name),
                        _ => continue,
                    }
                }
                InstructionData::CallIndirect { .. } | InstructionData::TryCallIndirect { .. } => Callee::Indirect,
                _ => continue,
            };
            out.push(CallSite { block: b, inst, callee, busy: 0 });
        }
    }
    out
}

/// The CTA barrier `inst` executes, if any: `Some(vec![])` for
/// `%ursa_barrier` itself, `Some(chain)` for a call that reaches one (the
/// functions from the callee down to the one that calls `%ursa_barrier`).
fn barrier_of(f: &Function, inst: ir::Inst, facts: Option<&ModuleFacts>) -> Option<Vec<String>> {
    let op = f.dfg.insts[inst].opcode();
    if !op.is_call() {
        return None;
    }
    if divergence::intrinsic_of(f, inst) == Some(Intrinsic::Barrier) {
        return Some(Vec::new());
    }
    let facts = facts?;
    match f.dfg.insts[inst] {
        InstructionData::Call { func_ref, .. } => facts.barrier_chains.get(&ursa_isel::lower::callee_symbol(f, func_ref)?).cloned(),
        InstructionData::CallIndirect { .. } => facts.indirect_barrier.clone(),
        _ => None,
    }
}

/// The first instruction of `b` that executes a CTA barrier, with the chain.
fn block_barrier(f: &Function, b: Block, facts: Option<&ModuleFacts>) -> Option<(ir::Inst, Vec<String>)> {
    f.layout.block_insts(b).find_map(|i| barrier_of(f, i, facts).map(|c| (i, c)))
}

/// Rejects a CTA barrier in divergent control flow: `%ursa_barrier`, or a
/// call to a device function that reaches one (directly or through other
/// calls), in a block that some lanes of a warp may reach while others of
/// the same warp, after a divergent branch, do not reach it and do not end
/// the kernel first (they would wait at the region's `BSYNC`, at another
/// barrier, or return to a caller: a deadlock or a barrier matched with the
/// wrong one). A barrier after an early exit (`if (i >= n) return;`) is
/// accepted: exited threads count as arrived (`docs/isa-extensions.md` 3.6).
/// For a kernel's branch whose lanes have no join, [`one_first_barrier`]
/// decides (once per branch, whatever the barrier).
pub fn check_barriers(f: &Function, cfg: &Cfg, div: &Divergence, kernel: bool, facts: Option<&ModuleFacts>) -> Result<(), Error> {
    let ipdoms = cfg.ipdoms();
    let mut first_barrier: Vec<Option<Result<(), &'static str>>> = vec![None; cfg.num_blocks()];
    for &bb in &cfg.rpo {
        let Some((call, chain)) = block_barrier(f, bb, facts) else { continue };
        for &b in &cfg.rpo {
            if !div.branches[b.index()] {
                continue;
            }
            let raw_join = ipdoms[b.index()].flatten();
            let join = raw_join.filter(|&j| !(kernel && only_exits(f, j)));
            // Is the barrier block inside the region of b (before its join)?
            let inside = cfg.succs[b.index()].iter().any(|&s| cfg.reach_until(s, raw_join)[bb.index()]) && Some(bb) != raw_join;
            if !inside {
                continue;
            }
            // Every lane that does not reach the barrier must end the kernel
            // without meeting the join or another barrier instance first.
            let why = if !kernel {
                Some("lanes that do not reach it return to the caller first")
            } else if join.is_some() {
                Some("lanes that do not reach it wait at the branch's join instead")
            } else {
                first_barrier[b.index()].get_or_insert_with(|| one_first_barrier(f, cfg, b, facts)).err()
            };
            if let Some(why) = why {
                let what = if chain.is_empty() {
                    format!("the CTA barrier `{}` ({} in {})", f.dfg.display_inst(call), call, bb)
                } else {
                    let path: Vec<String> = chain.iter().map(|g| format!("%{}", g)).collect();
                    format!(
                        "the call `{}` ({} in {}) reaches a CTA barrier ({} -> %ursa_barrier) and",
                        f.dfg.display_inst(call),
                        call,
                        bb,
                        path.join(" -> ")
                    )
                };
                return Err(Error::unsupported(format!(
                    "{} is inside divergent control flow: the branch ending {} depends on a per-thread value and {} (docs/kernels.md, \"Reconvergence\")",
                    what, b, why
                )));
            }
        }
    }
    Ok(())
}

/// For a divergent branch ending `b` in a kernel whose lanes do not meet at
/// a join: that the lanes that go on meet one barrier instance first, or
/// why they may not. Every path from the branch either ends the kernel
/// without a barrier (those lanes count as arrived) or meets its first
/// barrier in one and the same block `x`; and no path from the branch to
/// `x` passes the back edge of a loop that holds `x` (other than an edge
/// into `x` itself), which lanes that skip `x` in one pass of that loop
/// would take to meet it in the next, when the others are at it already.
/// (Loops that do not hold `x`, such as a loop that lanes leave in
/// different passes on their way to `x`, and a back edge into `x` that
/// every staying lane takes, keep one instance.) From `x` on the lanes that
/// stay run the same code, and the later divergent branches are checked on
/// their own.
fn one_first_barrier(f: &Function, cfg: &Cfg, b: Block, facts: Option<&ModuleFacts>) -> Result<(), &'static str> {
    let order = cfg.rpo_order();
    let mut seen = vec![false; cfg.num_blocks()];
    let mut first: Option<Block> = None;
    // The edges followed that go back in the block order (a loop's back
    // edge, in a reducible graph).
    let mut back: Vec<(Block, Block)> = Vec::new();
    let mut stack: Vec<(Block, Block)> = cfg.succs[b.index()].iter().map(|&s| (b, s)).collect();
    while let Some((u, x)) = stack.pop() {
        if order[x.index()] <= order[u.index()] {
            back.push((u, x));
        }
        if seen[x.index()] {
            continue;
        }
        seen[x.index()] = true;
        if block_barrier(f, x, facts).is_some() {
            if first.is_some_and(|y| y != x) {
                return Err("lanes that do not reach it can meet another barrier before they exit");
            }
            first = Some(x);
            continue;
        }
        stack.extend(cfg.succs[x.index()].iter().map(|&s| (x, s)));
    }
    let Some(x) = first else { return Ok(()) };
    if back.iter().any(|&(u, h)| h != x && in_loop(cfg, u, h, x)) {
        return Err("lanes that pass a loop without it can reach it in a later pass than the others");
    }
    Ok(())
}

/// Whether block `x` is in the loop of the back edge `u -> h`: `h` itself,
/// or a block from which `u` is reached without passing `h`.
fn in_loop(cfg: &Cfg, u: Block, h: Block, x: Block) -> bool {
    x == h || (u != h && cfg.reach_until(x, Some(h))[u.index()])
}

/// The blocks from which every path runs straight (no branch, no call but
/// intrinsics other than the barrier) into a block that ends the lanes: a
/// `return` of a kernel or a trap. Lanes there just end; a region may let
/// them go without meeting at its join (they count as arrived).
fn exit_tails(f: &Function, cfg: &Cfg, kernel: bool) -> Vec<bool> {
    let n = cfg.num_blocks();
    let mut out = vec![false; n];
    for &b in &cfg.rpo {
        let mut x = b;
        let mut ok = false;
        for _ in 0..n {
            let calls = f.layout.block_insts(x).any(|i| {
                f.dfg.insts[i].opcode().is_call() && !matches!(divergence::intrinsic_of(f, i), Some(k) if k != Intrinsic::Barrier)
            });
            if calls {
                break;
            }
            match cfg.succs[x.index()].as_slice() {
                [] => {
                    let last = f.layout.last_inst(x).map(|i| f.dfg.insts[i].opcode());
                    ok = matches!(last, Some(Opcode::Trap)) || (kernel && matches!(last, Some(Opcode::Return)));
                    break;
                }
                [s] => x = *s,
                _ => break,
            }
        }
        out[b.index()] = ok;
    }
    out
}

/// Every path from `p` meets a block of `joins` or runs into an exit tail:
/// each block reachable from `p` before the joins is a tail or can still
/// reach a join.
fn covers(cfg: &Cfg, p: Block, joins: &[Block], tails: &[bool]) -> bool {
    let stop = cfg.mask_of(joins);
    let mut can = vec![false; cfg.num_blocks()];
    for &j in joins {
        for (i, r) in cfg.reaching(j).into_iter().enumerate() {
            can[i] |= r;
        }
    }
    let r = cfg.reach_until_any(p, &stop);
    (0..cfg.num_blocks()).all(|i| !r[i] || stop[i] || tails[i] || can[i]) && !tails[p.index()]
}

/// For a divergent branch in `b` of a kernel whose paths end at different
/// `return`s (its immediate post-dominator is the virtual exit): the block
/// where the lanes that stay meet, the others ending in exit tails on the
/// way (an early `return` from a loop). For each block that ends the
/// function or is a tail (or was, before it led into a join of an earlier
/// region), the nearest block through which every path from `b` to it
/// passes is a candidate; it is valid when every other path from `b` runs
/// into a tail, and it is not a tail that an earlier region lets its lanes
/// leave by (`early`). Of the valid ones, the one with the largest region.
/// `Err(why)` when none is needed (the lanes that do not stay together go
/// straight to a `return` or to such a tail) or none exists.
fn exit_join(f: &Function, cfg: &Cfg, b: Block, tails: &[bool], first_tails: &[bool], early: &[bool]) -> Result<Block, Option<String>> {
    let staying: Vec<Block> = cfg.succs[b.index()].iter().copied().filter(|&s| !early[s.index()] && !only_exits(f, s)).collect();
    if staying.iter().all(|&s| s == staying[0]) {
        return Err(Some(format!(
            "divergent branch ending {}: an early exit (the lanes that leave end the kernel straight away, the others stay together)",
            b
        )));
    }
    let reach = cfg.reach_until(b, None);
    let mut best: Option<(usize, Block)> = None;
    // The targets: the blocks that end the function, and the tails (also
    // former tails that now lead into a join).
    let target = |t: Block| first_tails[t.index()] || cfg.succs[t.index()].is_empty();
    for &t in cfg.rpo.iter().filter(|&&t| reach[t.index()] && target(t) && !early[t.index()]) {
        // Paths into other tails are ignored, not those into t's own chain.
        let lead = cfg.reaching(t);
        let skip: Vec<bool> = (0..cfg.num_blocks()).map(|i| tails[i] && !lead[i]).collect();
        let Some(j) = cfg.ipdom_towards(b, t, &skip) else { continue };
        if early[j.index()] || !covers(cfg, b, &[j], tails) {
            continue;
        }
        let size = cfg.reach_until(b, Some(j)).iter().enumerate().filter(|&(i, &x)| x && !tails[i]).count();
        if best.is_none_or(|(s, _)| size > s) {
            best = Some((size, j));
        }
    }
    let Some((_, j)) = best else {
        return Err(Some(format!("divergent branch ending {}: some paths from it neither meet again nor end the kernel straight away", b)));
    };
    if only_exits(f, j) {
        return Err(None);
    }
    if cfg.succs[b.index()].iter().all(|&s| s == j || tails[s.index()]) {
        return Err(Some(format!(
            "divergent branch ending {}: an early exit (the lanes that leave end the kernel straight away, the others stay together)",
            b
        )));
    }
    Ok(j)
}

/// Plans the regions of `f` (legalized CLIF); also checks barriers.
/// `facts`: what the module tells about the other functions (callers,
/// callees); without them a device function saves every barrier register
/// its regions use (any caller may hold it).
pub fn plan(f: &Function, kernel: bool, facts: Option<&ModuleFacts>) -> Result<Plan, Error> {
    plan_reconvergence(f, &Cfg::new(f), kernel, facts).map(|(p, _)| p)
}

/// [`plan`] on the control-flow graph `cfg` of `f`, which the caller shares
/// with later passes; also returns the divergence analysis when it was run
/// (the function has a conditional branch or a barrier).
pub fn plan_reconvergence(f: &Function, cfg: &Cfg, kernel: bool, facts: Option<&ModuleFacts>) -> Result<(Plan, Option<Divergence>), Error> {
    // Calls and barriers (a barrier is a call) are looked for only where
    // there may be a call.
    let may_call = crate::mid::may_have(f, |op| op.is_call());
    let mut out = Plan { entry: f.layout.entry_block(), calls: if may_call { call_sites(f) } else { Vec::new() }, ..Plan::default() };
    // Without a barrier there is nothing to check.
    let has_barrier = may_call && cfg.rpo.iter().any(|&b| block_barrier(f, b, facts).is_some());
    // Only a conditional branch can diverge: without one (and without a
    // barrier to check) the analysis would find nothing.
    let conditional = cfg.rpo.iter().any(|&b| {
        f.layout.last_inst(b).is_some_and(|i| matches!(f.dfg.insts[i], InstructionData::Brif { .. } | InstructionData::BranchTable { .. }))
    });
    let analyzed = (has_barrier || conditional).then(|| divergence::analyze(f, cfg, kernel));
    let without;
    let div = match &analyzed {
        Some(d) => d,
        None => {
            without = Divergence::without_branches(cfg);
            &without
        }
    };
    if has_barrier {
        check_barriers(f, cfg, div, kernel, facts)?;
    }
    // The registers callers may hold while a device function runs: all of
    // them when it is compiled alone or may run twice at once (then those
    // it uses are saved).
    let avoid = if kernel {
        0
    } else {
        match facts.and_then(|m| m.device.get(&crate::module::symbol_name(f))) {
            Some(d) if d.runs_twice.is_none() => d.avoid,
            _ => u16::MAX,
        }
    };
    // Regions start only at divergent branches.
    let groups = if div.branches.contains(&true) { groups(f, cfg, div, kernel, facts, &mut out.skipped) } else { Vec::new() };
    alloc_bregs::allocate(f, cfg, div, kernel, groups, avoid, facts, &mut out);
    Ok((out, analyzed))
}

/// The regions before register allocation: divergent branches grouped by
/// the blocks where their lanes meet, each with its setup block.
fn groups(f: &Function, cfg: &Cfg, div: &Divergence, kernel: bool, facts: Option<&ModuleFacts>, skipped: &mut Vec<String>) -> Vec<Group> {
    let ipdoms = cfg.ipdoms();
    let idoms = cfg.idoms();
    // Exit tails, less those that lead into a join (lanes there wait), and
    // the tails that regions let their lanes leave by (never a join).
    let first_tails = exit_tails(f, cfg, kernel);
    let mut tails = first_tails.clone();
    let mut early = vec![false; cfg.num_blocks()];
    let returns: Vec<Block> =
        cfg.rpo.iter().copied().filter(|&b| f.layout.last_inst(b).is_some_and(|i| f.dfg.insts[i].opcode() == Opcode::Return)).collect();
    let depth = |mut b: Block| {
        let mut d = 0;
        while let Some(p) = idoms[b.index()] {
            b = p;
            d += 1;
        }
        d
    };
    let common_dom = |mut a: Block, mut b: Block| -> Option<Block> {
        let (mut da, mut db) = (depth(a), depth(b));
        while da > db {
            a = idoms[a.index()]?;
            da -= 1;
        }
        while db > da {
            b = idoms[b.index()]?;
            db -= 1;
        }
        while a != b {
            a = idoms[a.index()]?;
            b = idoms[b.index()]?;
        }
        Some(a)
    };
    // A setup block for the joins at or above `start`: executed once per
    // entry into the region, every path from it meeting a join or ending.
    // And no lane that met a join may come back to the branch without
    // passing the setup again: it would wait at the join for lanes that
    // went round an enclosing loop the other way (and may wait at another
    // region's join for it), a deadlock.
    let setup_for = |start: Block, joins: &[Block], tails: &[bool]| -> Option<Block> {
        let stop = cfg.mask_of(joins);
        let mut p = start;
        loop {
            if stop[p.index()] {
                return None;
            }
            if !cfg.cycles_avoiding_any(p, &stop) {
                let returns = joins.iter().any(|&j| cfg.reach_until(j, Some(p))[start.index()] && start != p);
                return (covers(cfg, p, joins, tails) && !returns).then_some(p);
            }
            p = idoms[p.index()]?;
        }
    };
    let mut groups: Vec<Group> = Vec::new();
    for &b in &cfg.rpo {
        if !div.branches[b.index()] {
            continue;
        }
        // A branch into a cold block (the byte-wise path of a possibly
        // misaligned access) is almost never taken: no region for it.
        if cfg.succs[b.index()].iter().any(|&s| f.layout.is_cold(s)) {
            continue;
        }
        let joins = match ipdoms[b.index()] {
            Some(Some(j)) if kernel && only_exits(f, j) => continue,
            Some(Some(j)) => vec![j],
            Some(None) if kernel => match exit_join(f, cfg, b, &tails, &first_tails, &early) {
                Ok(j) => vec![j],
                Err(why) => {
                    skipped.extend(why);
                    continue;
                }
            },
            // A device function whose lanes leave by different returns:
            // they meet at the returns (the function's own region).
            Some(None) if !returns.is_empty() => returns.clone(),
            _ => {
                skipped.push(format!("divergent branch ending {}: no path from it leaves the function", b));
                continue;
            }
        };
        let existing = groups.iter().position(|g| g.joins == joins);
        let start = match existing {
            Some(k) => common_dom(groups[k].setup, b),
            None => Some(b),
        };
        let Some(p) = start.and_then(|s| setup_for(s, &joins, &tails)) else {
            let names: Vec<String> = joins.iter().map(|j| j.to_string()).collect();
            skipped.push(format!(
                "divergent branch ending {}: no block that runs once per entry into the region and whose every path meets {} or ends",
                b,
                names.join("/")
            ));
            continue;
        };
        if kernel {
            // The tails this region's lanes may leave by stay exits; those
            // leading into its join are no longer tails.
            let stop = cfg.mask_of(&joins);
            let inside = cfg.reach_until_any(b, &stop);
            for &j in &joins {
                for (i, r) in cfg.reaching(j).into_iter().enumerate() {
                    if r && tails[i] {
                        tails[i] = false;
                    } else if inside[i] && tails[i] {
                        early[i] = true;
                    }
                }
            }
        }
        match existing {
            Some(k) => {
                groups[k].setup = p;
                groups[k].branches.push(b);
            }
            None => groups.push(Group { setup: p, joins, branches: vec![b] }),
        }
    }
    // A region whose lanes may leave by an exit tail must not hold a CTA
    // barrier: lanes waiting at the join would never let the others pass it.
    groups.retain(|g| {
        if !kernel || g.joins.iter().all(|&j| g.branches.iter().all(|&b| ipdoms[b.index()] == Some(Some(j)))) {
            return true;
        }
        let stop = cfg.mask_of(&g.joins);
        let inside = g.branches.iter().flat_map(|&b| cfg.succs[b.index()].iter().map(|&s| cfg.reach_until_any(s, &stop))).fold(
            vec![false; cfg.num_blocks()],
            |mut acc, r| {
                for (a, x) in acc.iter_mut().zip(r) {
                    *a |= x;
                }
                acc
            },
        );
        let barrier = cfg.rpo.iter().find(|x| inside[x.index()] && !stop[x.index()] && block_barrier(f, **x, facts).is_some());
        if let Some(x) = barrier {
            skipped.push(format!(
                "region {} .. {}: a CTA barrier in {} that lanes leaving by an early return would never reach",
                g.setup, g.joins[0], x
            ));
        }
        barrier.is_none()
    });
    groups
}
