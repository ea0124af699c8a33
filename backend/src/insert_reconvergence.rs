//! Reconvergence: `BSSY Bk, J` / `BSYNC Bk` around every divergent region of
//! a kernel (`docs/kernels.md`, "Reconvergence"; the protocol of
//! `docs/isa-extensions.md` 3.4–3.5).
//!
//! The regions are planned on CLIF ([`plan`], before instruction selection,
//! with the divergence analysis of [`crate::divergence`]) and the
//! instructions put into the laid-out code after `encode` ([`insert`]):
//!
//! - For a divergent `brif` / `br_table` in block `b`, the join `J` is the
//!   immediate post-dominator of `b`. If there is none (some lanes leave the
//!   function on the way) or `J` only ends the kernel, the branch needs no
//!   region: exited lanes need no reconvergence.
//! - The `BSSY` goes at the start of a block `P` executed once per entry into
//!   the region: `b` itself, or — when `b` can be reached again from itself
//!   without passing `J` (a loop whose exit is divergent) — the nearest
//!   dominator of `b` that cannot (the loop's preheader). `J` must
//!   post-dominate `P`, so every path from the `BSSY` reaches the `BSYNC`
//!   (or ends the kernel: exited lanes count as arrived); a branch for which
//!   no such `P` exists gets no region and is reported in [`Plan::skipped`].
//! - A branch into a cold block (`Layout::is_cold`: the byte-wise path of a
//!   possibly misaligned access) gets no region: it is almost never taken.
//! - Divergent branches with the same `J` share one region, set up at the
//!   nearest common dominator of their blocks: the one `BSYNC` at `J` gathers
//!   all of them.
//! - `BSYNC Bk` is the first instruction of `J` (after the `BSYNC` of a
//!   region that ends there, before the `BSSY` of one that starts there).
//!   When `J` can be reached again from itself without passing `P` (a join
//!   inside a loop whose setup is outside it), `BREAK Bk` follows the
//!   `BSYNC`: once the lanes are released it empties the barrier, so lanes
//!   that come round again are not held for members that left the loop.
//! - **Barrier registers:** every region of a function gets its own `Bk`,
//!   in order of the regions' setup blocks (`B0` first), so no region can
//!   overwrite a barrier that lanes of another region wait on, however the
//!   lane groups are scheduled. A function with more than 16 regions keeps
//!   the 16 largest (by blocks) and reports the others as skipped (their
//!   lanes still reconverge by the lowest-PC rule where the layout allows).
//! - **Device functions** get no regions: the barrier registers are
//!   callee-saved (`docs/isa-extensions.md` 7.1), and leaving them alone is
//!   the cheapest way to keep them; a device function's lanes reconverge by
//!   the lowest-PC-first rule, and lanes that called it together are
//!   gathered again by the caller's region around the call.
//!
//! It also rejects a CTA barrier (`%ursa_barrier`) in divergent control
//! flow ([`check_barriers`]).

use cranelift_codegen::entity::EntityRef;
use cranelift_codegen::ir::{Block, Function, Opcode};
use ursa_emit::{forms, Inst};
use ursa_isel::intrinsics::Intrinsic;
use ursa_isel::vcode::{BlockId, VCode};

use crate::divergence::{self, Cfg, Divergence};
use crate::encode::{item, Code, Item};
use ursa_emit::mods::BReg;
use ursa_emit::typed::{Fld, Mod};

/// Number of convergence-barrier registers (`B0`–`B15`).
pub const NUM_BREGS: usize = 16;

/// One reconvergence region.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Region {
    /// The CLIF block that starts with `BSSY Bk, J`.
    pub setup: Block,
    /// The CLIF block that starts with `BSYNC Bk`.
    pub join: Block,
    /// `k`.
    pub breg: u8,
    /// `BREAK Bk` right after the `BSYNC` (the join is on a cycle that
    /// avoids the setup block).
    pub rearm: bool,
}

/// The regions of one function.
#[derive(Clone, Debug, Default)]
pub struct Plan {
    pub regions: Vec<Region>,
    /// Divergent branches that got no region, with the reason.
    pub skipped: Vec<String>,
    /// The entry block (always the first block of the code; the lowering
    /// does not record it in `VBlock::clif`).
    pub entry: Option<Block>,
}

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

/// The join of a divergent branch in `b` that matters for reconvergence:
/// `None` when lanes leave the function before meeting again, or meet only
/// to end a kernel.
fn effective_join(f: &Function, ipdoms: &[Option<Option<Block>>], b: Block, kernel: bool) -> Option<Block> {
    let j = ipdoms[b.index()]??;
    if kernel && only_exits(f, j) {
        return None;
    }
    Some(j)
}

/// Rejects a `%ursa_barrier` call inside divergent control flow: in a block
/// that some lanes of a warp may reach while others of the same warp, after a
/// divergent branch, do not reach it and do not end the kernel first (they
/// would wait at the region's `BSYNC`, at another barrier, or return to a
/// caller: a deadlock or a barrier matched with the wrong one). A barrier
/// after an early exit (`if (i >= n) return;`) is accepted: exited threads
/// count as arrived (`docs/isa-extensions.md` 3.6).
pub fn check_barriers(f: &Function, cfg: &Cfg, div: &Divergence, kernel: bool) -> Result<(), String> {
    let ipdoms = cfg.ipdoms();
    let has_barrier = |b: Block| f.layout.block_insts(b).any(|i| f.dfg.insts[i].opcode().is_call() && divergence::intrinsic_of(f, i) == Some(Intrinsic::Barrier));
    for &bb in &cfg.rpo {
        let Some(call) = f.layout.block_insts(bb).find(|&i| f.dfg.insts[i].opcode().is_call() && divergence::intrinsic_of(f, i) == Some(Intrinsic::Barrier)) else {
            continue;
        };
        for &b in &cfg.rpo {
            if !div.branches[b.index()] {
                continue;
            }
            let join = effective_join(f, &ipdoms, b, kernel);
            // Is the barrier block inside the region of b (before its join)?
            let raw_join = ipdoms[b.index()].flatten();
            let inside = cfg.succs[b.index()].iter().any(|&s| cfg.reach_until(s, raw_join)[bb.index()]) && Some(bb) != raw_join;
            if !inside {
                continue;
            }
            // Every lane that does not reach the barrier must end the kernel
            // without meeting the join or another barrier.
            let mut bad = join.is_some() || !kernel;
            if !bad {
                let mut seen = vec![false; cfg.num_blocks()];
                let mut stack: Vec<Block> = cfg.succs[b.index()].clone();
                while let Some(x) = stack.pop() {
                    if x == bb || seen[x.index()] {
                        continue;
                    }
                    seen[x.index()] = true;
                    if has_barrier(x) {
                        bad = true;
                        break;
                    }
                    stack.extend(cfg.succs[x.index()].iter().copied());
                }
            }
            if bad {
                let why = if !kernel {
                    "lanes that do not reach it return to the caller first"
                } else if join.is_some() {
                    "lanes that do not reach it wait at the branch's join instead"
                } else {
                    "lanes that do not reach it can meet another barrier before they exit"
                };
                return Err(format!(
                    "the CTA barrier `{}` ({} in {}) is inside divergent control flow: the branch ending {} depends on a per-thread value and {} (docs/kernels.md, \"Reconvergence\")",
                    f.dfg.display_inst(call),
                    call,
                    bb,
                    b,
                    why
                ));
            }
        }
    }
    Ok(())
}

/// Plans the regions of `f` (legalized CLIF); also checks barriers.
pub fn plan(f: &Function, kernel: bool) -> Result<Plan, String> {
    // Outside a kernel nothing is planned, and the divergence analysis only
    // serves the barrier check, which has nothing to check without a barrier.
    let is_barrier = |i: cranelift_codegen::ir::Inst| f.dfg.insts[i].opcode().is_call() && divergence::intrinsic_of(f, i) == Some(Intrinsic::Barrier);
    if !kernel && !f.layout.blocks().any(|b| f.layout.block_insts(b).any(|i| is_barrier(i))) {
        return Ok(Plan { entry: f.layout.entry_block(), ..Plan::default() });
    }
    let cfg = Cfg::new(f);
    let div = divergence::analyze(f, &cfg, kernel);
    check_barriers(f, &cfg, &div, kernel)?;
    let mut out = Plan { entry: f.layout.entry_block(), ..Plan::default() };
    if !kernel {
        return Ok(out);
    }
    let ipdoms = cfg.ipdoms();
    let idoms = cfg.idoms();
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
    let post_dominates = |j: Block, mut p: Block| -> bool {
        loop {
            match ipdoms[p.index()] {
                Some(Some(x)) if x == j => return true,
                Some(Some(x)) => p = x,
                _ => return false,
            }
        }
    };
    // A setup block for join j at or above `start`: executed once per entry.
    let setup_for = |start: Block, j: Block| -> Option<Block> {
        let mut p = start;
        loop {
            if p == j {
                return None;
            }
            if !cfg.cycles_avoiding(p, j) {
                return post_dominates(j, p).then_some(p);
            }
            p = idoms[p.index()]?;
        }
    };
    // join -> setup, in order of first appearance.
    let mut joins: Vec<(Block, Block)> = Vec::new();
    for &b in &cfg.rpo {
        if !div.branches[b.index()] {
            continue;
        }
        // A branch into a cold block (the byte-wise path of a possibly
        // misaligned access) is almost never taken: no region for it.
        if cfg.succs[b.index()].iter().any(|&s| f.layout.is_cold(s)) {
            continue;
        }
        let Some(j) = effective_join(f, &ipdoms, b, kernel) else {
            if ipdoms[b.index()] == Some(None) {
                out.skipped.push(format!("divergent branch ending {}: some paths from it end the kernel before the lanes meet again", b));
            }
            continue;
        };
        let start = match joins.iter().find(|(jj, _)| *jj == j) {
            Some(&(_, p)) => common_dom(p, b),
            None => Some(b),
        };
        match start.and_then(|s| setup_for(s, j)) {
            Some(p) => match joins.iter_mut().find(|(jj, _)| *jj == j) {
                Some(e) => e.1 = p,
                None => joins.push((j, p)),
            },
            None => out.skipped.push(format!("divergent branch ending {}: no block that runs once per entry into the region and that {} post-dominates", b, j)),
        }
    }
    if joins.len() > NUM_BREGS {
        let size = |&(j, p): &(Block, Block)| cfg.reach_until(p, Some(j)).iter().filter(|&&x| x).count();
        let mut by_size: Vec<(Block, Block)> = joins.clone();
        by_size.sort_by_key(|e| std::cmp::Reverse(size(e)));
        for &(j, p) in &by_size[NUM_BREGS..] {
            out.skipped.push(format!("region {} .. {}: more than {} convergence barriers in the function", p, j, NUM_BREGS));
        }
        by_size.truncate(NUM_BREGS);
        joins.retain(|e| by_size.contains(e));
    }
    // Registers in order of the setup blocks in the layout.
    let pos = |b: Block| cfg.rpo.iter().position(|&x| x == b).unwrap_or(usize::MAX);
    joins.sort_by_key(|&(j, p)| (pos(p), std::cmp::Reverse(pos(j))));
    for (k, &(j, p)) in joins.iter().enumerate() {
        out.regions.push(Region { setup: p, join: j, breg: k as u8, rearm: cfg.cycles_avoiding(j, p) });
    }
    Ok(out)
}

fn breg_inst(form: ursa_emit::FormId, field: Fld<Mod<BReg>>, k: u8) -> Inst {
    Inst::new(form).with(field, BReg(k as u32))
}

/// Puts the planned instructions into the laid-out code: at the start of
/// each join block its `BSYNC` (and `BREAK`), then at the start of each
/// setup block its `BSSY Bk, J` (the target resolved like a branch's).
pub fn insert(code: &mut Code, vcode: &VCode, plan: &Plan) {
    if plan.regions.is_empty() {
        return;
    }
    let vblock = |b: Block| -> Option<BlockId> {
        if Some(b) == plan.entry {
            // The block that defines the arguments (the first one).
            let k = vcode.blocks.iter().position(|vb| vb.insts.first().is_some_and(|m| m.pseudo == ursa_isel::vcode::Pseudo::Args)).unwrap_or(0);
            return Some(BlockId(k as u32));
        }
        vcode.blocks.iter().position(|vb| vb.clif == Some(b.as_u32())).map(|i| BlockId(i as u32))
    };
    let nb = code.block_start.len();
    // VCode block -> block of the laid-out code.
    let vblock = |b: Block| vblock(b).map(|v| BlockId(code.vblocks.get(v.0 as usize).map_or(v.0, |&c| c as u32)));
    let mut prefix: Vec<Vec<Item>> = vec![Vec::new(); nb];
    for r in &plan.regions {
        let (Some(j), Some(_)) = (vblock(r.join), vblock(r.setup)) else { continue };
        prefix[j.0 as usize].push(item(breg_inst(forms::BSYNC_X, forms::BSYNC_X::BB, r.breg)));
        if r.rearm {
            prefix[j.0 as usize].push(item(breg_inst(forms::BREAK_X, forms::BREAK_X::BD, r.breg)));
        }
    }
    for r in &plan.regions {
        let (Some(j), Some(p)) = (vblock(r.join), vblock(r.setup)) else { continue };
        let mut it = item(breg_inst(forms::BSSY_I, forms::BSSY_I::BD, r.breg));
        it.label = Some(j);
        prefix[p.0 as usize].push(it);
    }
    let n = code.items.len();
    let mut items = std::mem::take(&mut code.items).into_iter();
    let mut out = Vec::with_capacity(n + 3 * plan.regions.len());
    for (b, pre) in prefix.into_iter().enumerate() {
        let end = if b + 1 < nb { code.block_start[b + 1] } else { n };
        let len = end - code.block_start[b];
        code.block_start[b] = out.len();
        out.extend(pre);
        out.extend(items.by_ref().take(len));
    }
    code.items = out;
}
