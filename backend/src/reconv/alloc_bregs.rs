//! Convergence-barrier registers for the regions of one function
//! (`docs/kernels.md`, "Reconvergence"), by interference: two regions need
//! different `Bk` only if lanes of one warp can be inside both at once —
//! one nested in the other, or the two reached by lanes that a divergent
//! branch sent different ways and that have not met again. Regions that
//! follow each other share registers.
//!
//! **Where lanes can be at once.** The analysis works on points: the head of
//! a block (its `BSYNC`s, where lanes wait) and its body (from the `BSSY`s
//! on). Lanes of a warp are at different points only after a divergent
//! branch `D` sent them to different successors; from successor `s` they can
//! get anywhere reachable from `s`, but no further than the head of a join
//! of `D`'s region while that region holds them (all lanes reaching `D` are
//! members of its barrier: `D` is its setup block, or cannot be reached from
//! the join again without passing the setup). A branch into a cold block
//! (a possibly misaligned access) is bounded by its immediate
//! post-dominator: the cold blocks are laid out last, so by the lowest-PC
//! rule the lanes there run only when every other lane of the warp waits
//! or has ended, and then follow the same path. Any other divergent branch
//! without a region bounds nothing.
//!
//! A region is **live** at the points reachable from its setup block's body
//! up to the heads of its joins (blocks that end the function excluded:
//! lanes there touch no barrier). Two regions interfere when their live
//! points overlap, or when one is live at a point reachable from one
//! successor of a divergent branch and the other at a point reachable from
//! another successor. Registers are then given greedily in layout order of
//! the setup blocks, lowest first, never one that a caller may hold while
//! this function runs (device functions: [`crate::module::call_graph`]). A region
//! left without a free register gets none and is reported.
//!
//! **Saved registers.** A device function whose regions need more than the
//! registers no caller holds (a function compiled alone, or one that lanes
//! of a warp may run twice at once: its callers may hold any) takes one a
//! caller may hold and saves it: `BMOV.CLEAR Rn, Bk` at entry, `BMOV Bk,
//! Rn` before each return ([`crate::reconv::insert_breg_saves`]). Each lane saves and
//! restores its own view of `Bk` (`docs/isa-extensions.md` 3.4), so the
//! caller's lanes that wait at their own `BSYNC Bk` meanwhile keep waiting
//! for the caller's instance.
//!
//! **Borrowing.** A region for which every register clashes (more than 16
//! live at once) borrows one instead, when each lane that reaches its join
//! has passed its setup block since its last visit to the join: the lanes
//! save their view at the setup (`BMOV.CLEAR`, before the `BSSY`) and
//! restore it right after the join's `BSYNC` (and `BREAK`). The register
//! must not be one whose other regions have a setup or a join where the
//! borrower is live. A region that cannot borrow gets none and is reported.
//!
//! **Stale members.** A lane stays a member of `Bk` after its `BSYNC Bk`
//! releases it. If it can then reach a `BSYNC Bk` of a region (this one
//! again, or another with the same register) without passing that region's
//! `BSSY`, it would wait there for lanes that are not coming; so `BREAK Bk`
//! follows the `BSYNC` in that case, in every region of a device function
//! (the caller may reach its own joins after the return), and in a kernel
//! region after whose join a call to a function with regions can follow.

use cranelift_codegen::entity::EntityRef;
use cranelift_codegen::ir::{Block, Function};

use crate::ir::cfg::Cfg;
use crate::mid::divergence::Divergence;
use crate::reconv::plan::{Group, ModuleFacts, Plan, Region, NUM_BREGS};

/// A set of points (two per block: head `2b`, body `2b + 1`).
type Points = ursa_isel::bitset::BitSet<usize>;

fn head(b: Block) -> usize {
    2 * b.index()
}

fn body(b: Block) -> usize {
    2 * b.index() + 1
}

/// Points reachable from `start`, not past the heads of the blocks in
/// `stop`; `skip_ends`: not into the bodies of blocks without successors.
fn reach(cfg: &Cfg, start: usize, stop: &[bool], skip_ends: bool) -> Points {
    let mut seen = Points::new(2 * cfg.num_blocks());
    let mut stack = vec![start];
    while let Some(p) = stack.pop() {
        if !seen.insert(p) {
            continue;
        }
        let b = Block::new(p / 2);
        if p % 2 == 0 {
            if !stop[b.index()] && !(skip_ends && cfg.succs[b.index()].is_empty()) {
                stack.push(body(b));
            }
        } else {
            stack.extend(cfg.succs[b.index()].iter().map(|&s| head(s)));
        }
    }
    seen
}

/// For every divergent branch: the points reachable from each of its
/// distinct successors.
fn splits(f: &Function, cfg: &Cfg, div: &Divergence, groups: &[Group]) -> Vec<Vec<Points>> {
    let ipdoms = cfg.ipdoms();
    let none = vec![false; cfg.num_blocks()];
    let mut out = Vec::new();
    for &d in cfg.rpo.iter().filter(|d| div.branches[d.index()]) {
        let held = groups.iter().find(|g| {
            g.branches.contains(&d) && {
                let stop = cfg.mask(Some(g.setup));
                d == g.setup || !g.joins.iter().any(|&j| cfg.succs[j.index()].iter().any(|&s| cfg.reach_until_any(s, &stop)[d.index()]))
            }
        });
        let bound = match held {
            Some(g) => cfg.mask_of(&g.joins),
            None if cfg.succs[d.index()].iter().any(|&s| f.layout.is_cold(s)) => cfg.mask(ipdoms[d.index()].flatten()),
            None => none.clone(),
        };
        let mut succs: Vec<Block> = cfg.succs[d.index()].to_vec();
        succs.dedup();
        succs.sort();
        succs.dedup();
        out.push(succs.iter().map(|&s| reach(cfg, head(s), &bound, false)).collect());
    }
    out
}

/// Gives the groups registers (dropping those that get none, and then
/// starting again: a dropped region no longer holds its lanes), and fills
/// in the plan's regions, the busy registers of its calls and which calls
/// may run at once.
#[allow(clippy::too_many_arguments)]
pub fn allocate(
    f: &Function,
    cfg: &Cfg,
    div: &Divergence,
    kernel: bool,
    mut groups: Vec<Group>,
    avoid: u16,
    facts: Option<&ModuleFacts>,
    out: &mut Plan,
) {
    // No region to give a register and no call to mark: nothing to plan
    // (and the post-dominators `splits` asks for are not needed).
    if groups.is_empty() && out.calls.is_empty() {
        out.saved = 0;
        return;
    }
    let pos = |b: Block| cfg.rpo.iter().position(|&x| x == b).unwrap_or(usize::MAX);
    groups.sort_by_key(|g| (pos(g.setup), std::cmp::Reverse(pos(g.joins[0]))));
    loop {
        let splits = splits(f, cfg, div, &groups);
        let live: Vec<Points> = groups.iter().map(|g| reach(cfg, body(g.setup), &cfg.mask_of(&g.joins), true)).collect();
        let n = groups.len();
        let mut clash = vec![vec![false; n]; n];
        for a in 0..n {
            for b in a + 1..n {
                if live[a].intersects(&live[b]) {
                    clash[a][b] = true;
                    clash[b][a] = true;
                }
            }
        }
        for sides in &splits {
            let touch: Vec<Vec<usize>> = sides.iter().map(|s| (0..n).filter(|&a| live[a].intersects(s)).collect()).collect();
            for i in 0..sides.len() {
                for j in i + 1..sides.len() {
                    for &a in &touch[i] {
                        for &b in &touch[j] {
                            if a != b {
                                clash[a][b] = true;
                                clash[b][a] = true;
                            }
                        }
                    }
                }
            }
        }
        let mut color: Vec<Option<u8>> = vec![None; n];
        let mut borrow = vec![false; n];
        let mut saved = 0u16;
        let mut failed = None;
        for a in 0..n {
            let used = (0..n).filter(|&b| clash[a][b]).filter_map(|b| color[b]).fold(0u16, |m, k| m | 1 << k);
            let free = |m: u16| (0..NUM_BREGS as u8).find(|&k| m >> k & 1 == 0);
            if let Some(k) = free(used | avoid) {
                color[a] = Some(k);
            } else if let (false, Some(k)) = (kernel, free(used)) {
                // A register a caller may hold: saved at entry, restored at
                // every return.
                color[a] = Some(k);
                saved |= 1 << k;
            } else if let Some(k) = borrowable(cfg, &groups, &color, &live, a) {
                color[a] = Some(k);
                borrow[a] = true;
            } else {
                failed = Some(a);
                break;
            }
        }
        if let Some(a) = failed {
            let g = groups.remove(a);
            out.skipped.push(format!(
                "region {} .. {}: no free convergence barrier register ({} are live at once here) and none it can borrow (it must have one join, its setup block must dominate the join, and every path from the join back to it must pass the setup)",
                g.setup, g.joins[0], NUM_BREGS
            ));
            continue;
        }
        out.saved = saved;
        // The calls: registers busy while the callee runs, and which calls
        // may run at once.
        let point_splits = |p: usize| -> Vec<(usize, usize)> {
            splits
                .iter()
                .enumerate()
                .flat_map(|(d, sides)| sides.iter().enumerate().filter(move |(_, s)| s.contains(p)).map(move |(i, _)| (d, i)))
                .collect()
        };
        let site_pts: Vec<usize> = out.calls.iter().map(|c| body(c.block)).collect();
        let site_in: Vec<Vec<(usize, usize)>> = site_pts.iter().map(|&p| point_splits(p)).collect();
        for (c, &p) in site_pts.iter().enumerate() {
            let mut busy = 0u16;
            for a in 0..n {
                let concurrent =
                    site_in[c].iter().any(|&(d, i)| splits[d].iter().enumerate().any(|(j, s)| j != i && live[a].intersects(s)));
                if live[a].contains(p) || concurrent {
                    busy |= 1 << color[a].unwrap();
                }
            }
            out.calls[c].busy = busy;
        }
        for s in 0..site_pts.len() {
            for t in s..site_pts.len() {
                let mhp = site_in[s].iter().any(|&(d, i)| site_in[t].iter().any(|&(e, j)| d == e && i != j));
                if mhp {
                    out.concurrent_calls.push((s, t));
                }
            }
        }
        for (a, g) in groups.iter().enumerate() {
            // A device function's lanes restore a saved register before
            // they return: stale members only matter inside it, as in a kernel.
            let saved_here = !kernel && saved >> color[a].unwrap() & 1 != 0;
            let rearm = (!kernel && !saved_here) || stale_members(cfg, &groups, &color, a, facts, out);
            out.regions.push(Region { setup: g.setup, joins: g.joins.clone(), breg: color[a].unwrap(), rearm, borrow: borrow[a] });
        }
        return;
    }
}

/// A register region `a` can borrow when all 16 clash with it (see the
/// module comment, "Borrowing"): `a` has one join `J`, its setup block `P`
/// dominates `J` and every path from `J` back to `J` passes `P` (each lane
/// restores at `J` exactly the view it saved at `P`); the lowest register
/// whose other regions have neither a setup nor a join where `a` is live (a
/// lane of `a` never meets their `BSSY` or `BSYNC` while its view is
/// `a`'s).
fn borrowable(cfg: &Cfg, groups: &[Group], color: &[Option<u8>], live: &[Points], a: usize) -> Option<u8> {
    let g = &groups[a];
    let [j] = g.joins[..] else { return None };
    let idoms = cfg.idoms();
    let mut d = Some(j);
    while d.is_some_and(|x| x != g.setup) {
        d = idoms[d?.index()];
    }
    if d.is_none() || cfg.cycles_avoiding(j, g.setup) {
        return None;
    }
    (0..NUM_BREGS as u8).find(|&k| {
        groups.iter().zip(color).enumerate().all(|(b, (h, &c))| {
            b == a || c != Some(k) || (!live[a].contains(body(h.setup)) && h.joins.iter().all(|&hj| !live[a].contains(head(hj))))
        })
    })
}

/// Must kernel region `a`'s lanes leave its barrier after the `BSYNC` (see
/// the module comment, "Stale members")?
fn stale_members(cfg: &Cfg, groups: &[Group], color: &[Option<u8>], a: usize, facts: Option<&ModuleFacts>, out: &Plan) -> bool {
    let g = &groups[a];
    for h in groups.iter().zip(color).filter(|(_, &c)| c == color[a]).map(|(h, _)| h) {
        let stop = cfg.mask(Some(h.setup));
        // A join that is also `h`'s setup passes its `BSSY` right after the `BSYNC`.
        let again = g.joins.iter().filter(|&&j| j != h.setup).flat_map(|&j| cfg.succs[j.index()].iter()).any(|&s| {
            let r = cfg.reach_until_any(s, &stop);
            h.joins.iter().any(|j| r[j.index()])
        });
        if again {
            return true;
        }
    }
    // A call after the join (before the setup again) into code with regions.
    let stop = cfg.mask(Some(g.setup));
    let mut after = vec![false; cfg.num_blocks()];
    for &j in &g.joins {
        for (x, y) in after.iter_mut().zip(cfg.reach_until_any(j, &stop)) {
            *x |= y;
        }
    }
    out.calls.iter().any(|c| after[c.block.index()] && facts.is_none_or(|m| m.reaches_regions(&c.callee)))
}

#[cfg(test)]
mod tests {
    use crate::reconv::plan_reconvergence::plan;

    /// (setup, first join, register) of each region of kernel `src`.
    fn regions(src: &str) -> Vec<(String, String, u8)> {
        let f = cranelift_reader::parse_functions(src).unwrap().remove(0);
        let p = plan(&f, true, None).unwrap();
        assert!(p.skipped.is_empty(), "{:?}", p.skipped);
        p.regions.iter().map(|r| (r.setup.to_string(), r.joins[0].to_string(), r.breg)).collect()
    }

    const HEAD: &str = "function %k(i64) {\n    fn0 = %ursa_tid_x() -> i32\nblock0(v0: i64):\n    v1 = call fn0()\n    v2 = iconst.i32 1\n    v3 = band v1, v2\n    v4 = iconst.i32 2\n    v5 = band v1, v4\n";

    #[test]
    fn regions_that_follow_each_other_share_a_register() {
        let src = format!(
            "{}    brif v3, block1, block2\nblock1:\n    jump block2\nblock2:\n    brif v5, block3, block4\nblock3:\n    jump block4\nblock4:\n    store v1, v0\n    return\n}}",
            HEAD
        );
        assert_eq!(regions(&src), vec![("block0".into(), "block2".into(), 0), ("block2".into(), "block4".into(), 0)]);
    }

    #[test]
    fn nested_regions_and_regions_on_two_sides_of_a_split_do_not() {
        // block0 splits the lanes; the then side has region block1..block4,
        // the else side block2..block6: lanes can be in both at once.
        let src = format!(
            "{}    brif v3, block1, block2\nblock1:\n    brif v5, block3, block4\nblock3:\n    jump block4\nblock4:\n    jump block7\nblock2:\n    brif v5, block5, block6\nblock5:\n    jump block6\nblock6:\n    jump block7\nblock7:\n    store v1, v0\n    return\n}}",
            HEAD
        );
        let r = regions(&src);
        assert_eq!(r.len(), 3, "{:?}", r);
        let reg = |s: &str| r.iter().find(|x| x.0 == s).unwrap().2;
        assert_eq!(reg("block0"), 0);
        assert_ne!(reg("block1"), reg("block2"), "{:?}", r);
        assert!(reg("block1") != 0 && reg("block2") != 0, "{:?}", r);
    }
}
