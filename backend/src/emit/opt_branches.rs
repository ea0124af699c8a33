//! Branch clean-up on the laid-out code, after registers are packed (so
//! edge blocks whose copies `pack_regs` deleted are empty):
//!
//! - **Jump threading.** A branch to a block that only jumps on (an edge
//!   block left by critical-edge splitting with no moves in it, or an empty
//!   block) goes straight to the final target.
//! - **Branch over a jump.** `@P BRA next; BRA Y` (the jump alone in a block
//!   reached only by falling through) becomes `@!P BRA Y`.
//! - **Early exit.** A branch to a block that starts with `EXIT` or `RET`
//!   becomes that instruction under the branch's guard (`@P EXIT`), the way
//!   ptxas ends the threads of `if (i >= n) return;`.
//! - **Branches to the next instruction** are deleted, and blocks that can no
//!   longer be reached are emptied.

use ursa_emit::{forms, optypes, Inst};

use crate::ir::code::{Code, Item};

fn is_bra(it: &Item) -> bool {
    it.target.is_some()
}

/// The guard predicate and its negation flag (for a form that can be negated).
fn guard(i: &Inst) -> Option<(u64, u64)> {
    let def = i.def();
    Some((i.get_at(def.guard? as usize), i.get_at(def.guard_not? as usize)))
}

/// The register file of the guard (`P` or `UP`).
fn guard_kind(i: &Inst) -> Option<ursa_emit::model::Kind> {
    let def = i.def();
    Some(def.fields[def.guard? as usize].kind)
}

fn set_guard(i: &mut Inst, g: (u64, u64)) {
    let def = i.def();
    let (Some(p), Some(n)) = (def.guard, def.guard_not) else { panic!("{} has no negatable guard", i.form().name()) };
    i.set_at(p as usize, g.0);
    i.set_at(n as usize, g.1);
}

/// Ends the block: nothing after it runs (an unguarded BRA, EXIT, RET or trap).
fn ends_flow(it: &Item) -> bool {
    let op = it.inst.def().optype;
    (is_bra(it) || crate::ir::code::is_tail_jump(it) || [optypes::EXIT::ID, optypes::RET::ID, optypes::BPT::ID].contains(&op))
        && !it.inst.is_guarded()
}

fn is_exit_like(it: &Item) -> bool {
    (it.inst.form() == forms::EXIT_X || it.inst.form() == forms::RET_R) && !it.inst.is_guarded()
}

/// The block execution really continues in when it enters `b`: through empty
/// blocks and blocks that are a single unguarded jump.
fn resolve(blocks: &Blocks, mut b: usize) -> usize {
    for _ in 0..blocks.len() {
        match blocks[b].first() {
            None if b + 1 < blocks.len() => b += 1,
            Some(it) if is_bra(it) && !it.inst.is_guarded() => {
                let t = it.target.unwrap().0 as usize;
                if t == b {
                    break;
                }
                b = t;
            }
            _ => break,
        }
    }
    b
}

/// The first non-empty block at or after `b` (where falling into `b` lands).
fn landing(blocks: &Blocks, mut b: usize) -> usize {
    while b + 1 < blocks.len() && blocks[b].is_empty() {
        b += 1;
    }
    b
}

fn reachable(blocks: &Blocks) -> Vec<bool> {
    let mut seen = vec![false; blocks.len()];
    let mut stack = vec![0usize];
    while let Some(b) = stack.pop() {
        if b >= blocks.len() || seen[b] {
            continue;
        }
        seen[b] = true;
        let mut falls = true;
        for it in &blocks[b] {
            if let Some(t) = it.target {
                stack.push(t.0 as usize);
            }
            if ends_flow(it) {
                falls = false;
                break;
            }
        }
        if falls {
            stack.push(b + 1);
        }
    }
    seen
}

/// Number of ways into each block (branches and falling through), counting
/// only reachable blocks.
fn entries(blocks: &Blocks, live: &[bool]) -> Vec<usize> {
    let mut n = vec![0usize; blocks.len() + 1];
    for b in 0..blocks.len() {
        if !live[b] {
            continue;
        }
        let mut falls = true;
        for it in &blocks[b] {
            if let Some(t) = it.target {
                n[t.0 as usize] += 1;
            }
            if ends_flow(it) {
                falls = false;
                break;
            }
        }
        if falls {
            n[b + 1] += 1;
        }
    }
    n
}

/// The items of the code by block, edited in place. The passes below delete
/// only at the end of a block (a branch popped, a block emptied), so each
/// block is the live front of its original range; the items are compacted
/// once at the end.
struct Blocks<'a> {
    items: &'a mut [Item],
    /// Per block: its first item and the end of its live items.
    at: Vec<(usize, usize)>,
}

impl Blocks<'_> {
    fn len(&self) -> usize {
        self.at.len()
    }
    fn pop(&mut self, b: usize) {
        self.at[b].1 -= 1;
    }
    fn clear(&mut self, b: usize) {
        self.at[b].1 = self.at[b].0;
    }
}

impl std::ops::Index<usize> for Blocks<'_> {
    type Output = [Item];
    fn index(&self, b: usize) -> &[Item] {
        &self.items[self.at[b].0..self.at[b].1]
    }
}

impl std::ops::IndexMut<usize> for Blocks<'_> {
    fn index_mut(&mut self, b: usize) -> &mut [Item] {
        &mut self.items[self.at[b].0..self.at[b].1]
    }
}

pub fn opt_branches(code: &mut Code) {
    let nb = code.block_start.len();
    let n = code.items.len();
    // One block without a branch: nothing to thread, turn or delete.
    if nb == 1 && code.items.iter().all(|it| it.target.is_none()) {
        return;
    }
    let at = (0..nb).map(|b| (code.block_start[b], if b + 1 < nb { code.block_start[b + 1] } else { n })).collect();
    let mut blocks = Blocks { items: &mut code.items, at };

    for _round in 0..4 {
        let mut changed = false;
        // Jump threading.
        for b in 0..nb {
            for k in 0..blocks[b].len() {
                if let Some(t) = blocks[b][k].target {
                    let r = resolve(&blocks, t.0 as usize);
                    if r != t.0 as usize {
                        blocks[b][k].target = Some(ursa_isel::vcode::BlockId(r as u32));
                        changed = true;
                    }
                }
            }
        }
        // Branch over a jump.
        let live = reachable(&blocks);
        let ins = entries(&blocks, &live);
        for b in 0..nb.saturating_sub(1) {
            let Some(last) = blocks[b].last() else { continue };
            let (Some(x), true) = (last.target, last.inst.is_guarded()) else { continue };
            let j = b + 1;
            if blocks[j].len() != 1 || !is_bra(&blocks[j][0]) || blocks[j][0].inst.is_guarded() || ins[j] != 1 {
                continue;
            }
            if j + 1 >= nb || landing(&blocks, j + 1) != landing(&blocks, x.0 as usize) {
                continue;
            }
            let y = blocks[j][0].target;
            let bra = blocks[b].last_mut().unwrap();
            let Some((p, neg)) = guard(&bra.inst) else { continue };
            set_guard(&mut bra.inst, (p, neg ^ 1));
            bra.target = y;
            blocks.clear(j);
            changed = true;
        }
        // Early exit: a branch to EXIT / RET is that instruction, guarded.
        for b in 0..nb {
            for k in 0..blocks[b].len() {
                let Some(t) = blocks[b][k].target else { continue };
                let t = landing(&blocks, t.0 as usize);
                let Some(first) = blocks[t].first() else { continue };
                if !is_exit_like(first) {
                    continue;
                }
                let mut e = first.clone();
                // A uniform branch (`@UP0 UBRA`) stays: EXIT and RET take
                // only a per-lane guard.
                if guard_kind(&blocks[b][k].inst) != guard_kind(&e.inst) {
                    continue;
                }
                if let Some(g) = guard(&blocks[b][k].inst) {
                    set_guard(&mut e.inst, g);
                }
                blocks[b][k] = e;
                changed = true;
            }
        }
        // Branches to where execution would go anyway.
        for b in 0..nb {
            let Some(last) = blocks[b].last() else { continue };
            let Some(t) = last.target else { continue };
            if b + 1 < nb && landing(&blocks, b + 1) == landing(&blocks, t.0 as usize) {
                blocks.pop(b);
                changed = true;
            }
        }
        // Unreachable blocks.
        let live = reachable(&blocks);
        for b in 0..nb {
            if !live[b] && !blocks[b].is_empty() {
                blocks.clear(b);
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }

    let at = blocks.at;
    let mut keep = vec![false; n];
    let mut kept = 0;
    for (b, &(s, e)) in at.iter().enumerate() {
        code.block_start[b] = kept;
        keep[s..e].fill(true);
        kept += e - s;
    }
    if kept < n {
        let mut k = 0;
        code.items.retain(|_| {
            k += 1;
            keep[k - 1]
        });
    }
}
