//! If-conversion: a short conditional block runs predicated instead of
//! being branched over.
//!
//! A block `A` ending in `brif p, S, E` (either order), where `S` has `A`
//! as its only predecessor, takes no parameters, holds at most
//! [`MAX_PIECES`] machine instructions that can all be guarded, and ends in
//! `jump J` without arguments, while `E` is `J` itself or an empty block
//! that only does `jump J` without arguments: `S`'s instructions move to
//! the end of `A` under the guard `@p` (`@!p` for the other side), `A` ends
//! in `jump J`, and `S` (and `E` if it was the empty edge) are deleted.
//! ptxas does the same for the body of `if (tid < s) sdata[tid] += …` in
//! a reduction: `@!P0 LDS … @!P0 STS` instead of `@P0 BRA` over them.
//!
//! A block whose join only ends the function is left alone: the branch
//! around it becomes an early exit (`@!P0 EXIT`, `docs/kernels.md`).
//!
//! Correct because a guarded instruction whose guard is false does nothing
//! (no result, no memory access, no fault), and every value `S` defines is
//! read only inside `S` (it dominates no other block), so no instruction
//! runs on a value that was not computed. Warp-synchronous instructions
//! (barriers, shuffles, votes), atomics, fences, calls, traps and
//! instructions already guarded are never moved; `S` with any of them stays
//! a branch.

use rustc_hash::FxHashSet as HashSet;

use ursa_emit::{optypes, Group, Inst};
use ursa_isel::vcode::{BlockId, MInst, OpKind, Pseudo, VCode, VReg};

use crate::opt::opt_fold_cmem::def_counts;

/// Longest block converted, in machine instructions: above this, lanes of a
/// warp that all skip the block would issue more instructions than the
/// branch saves.
pub const MAX_PIECES: usize = 8;

/// Can `p` run under a guard with the same effect as under a branch?
fn guardable(p: &Inst) -> bool {
    let def = p.def();
    if def.guard.is_none() || p.is_guarded() || def.optype == optypes::R2UR::ID {
        return false;
    }
    match p.form().group() {
        Group::IALU | Group::XU | Group::DALU | Group::D_ARITH | Group::EXT_FARITH => true,
        Group::EXT_MEM => def.optype != optypes::ATOM::ID,
        Group::EXT => [
            optypes::F2F::ID,
            optypes::F2I::ID,
            optypes::FMNMX::ID,
            optypes::FRND::ID,
            optypes::FSETP::ID,
            optypes::I2F::ID,
            optypes::LDC::ID,
        ]
        .contains(&def.optype),
        _ => false,
    }
}

fn convertible(m: &MInst) -> bool {
    m.pseudo == Pseudo::None
        && m.cold_from.is_none()
        && !m.clobbers_all
        && m.sym().is_none()
        && m.opnds.iter().all(|o| o.fixed.is_none())
        && m.pieces.iter().all(guardable)
}

/// Does block `j` only end the function?
fn ends_function(vcode: &VCode, j: BlockId) -> bool {
    let insts = &vcode.blocks[j.0 as usize].insts;
    insts.len() == 1 && matches!(insts[0].pseudo, Pseudo::Exit | Pseudo::Ret)
}

/// Is `b` a block that only jumps to `j` without arguments?
fn only_jumps_to(vcode: &VCode, b: BlockId, j: BlockId) -> bool {
    let blk = &vcode.blocks[b.0 as usize];
    blk.params.is_empty()
        && blk.insts.len() == 1
        && blk.insts[0].pseudo == Pseudo::Jump
        && blk.insts[0].targets()[0] == j
        && blk.insts[0].args().iter().all(|a| a.is_empty())
}

/// Converts every block that qualifies; returns how many.
pub fn opt_if_convert(vcode: &mut VCode) -> usize {
    let mut done = 0;
    let mut dead: HashSet<usize> = HashSet::default();
    for a in 0..vcode.blocks.len() {
        if dead.contains(&a) {
            continue;
        }
        let Some(term) = vcode.blocks[a].insts.last() else { continue };
        let Pseudo::Brif { negate, uniform: None } = term.pseudo else { continue };
        if term.args().iter().any(|x| !x.is_empty()) || term.targets().len() != 2 {
            continue;
        }
        let pred = term.opnds[0].vreg;
        let targets = [term.targets()[0], term.targets()[1]];
        for side in 0..2 {
            let (s, e) = (targets[side], targets[1 - side]);
            let sb = &vcode.blocks[s.0 as usize];
            if s.0 as usize == a || sb.preds.len() != 1 || !sb.params.is_empty() || dead.contains(&(s.0 as usize)) {
                continue;
            }
            let Some(last) = sb.insts.last() else { continue };
            if last.pseudo != Pseudo::Jump || last.args().iter().any(|x| !x.is_empty()) {
                continue;
            }
            let j = last.targets()[0];
            let edge = e != j;
            // A branch around a block that leads straight to the end stays:
            // it becomes an early `@P EXIT` / `@P RET` (`opt_branches`).
            if ends_function(vcode, j) {
                continue;
            }
            if j.0 as usize == a || j == s || (edge && (!only_jumps_to(vcode, e, j) || vcode.blocks[e.0 as usize].preds.len() != 1)) {
                continue;
            }
            let body = &sb.insts[..sb.insts.len() - 1];
            if body.is_empty()
                || body.len() > MAX_PIECES
                || body.iter().map(|m| m.pieces.len()).sum::<usize>() > MAX_PIECES
                || !body.iter().all(convertible)
            {
                continue;
            }
            // The values the body defines are read only in the body.
            let defs = def_counts(vcode);
            let defined: HashSet<VReg> =
                body.iter().flat_map(|m| m.opnds.iter().filter(|o| o.kind != OpKind::Use).map(|o| o.vreg)).collect();
            if defined.iter().any(|&v| !defs.once(v)) || read_outside(vcode, s.0 as usize, &defined) {
                continue;
            }
            // Taken to targets[0] when the predicate (xor negate) holds.
            let not = (side == 0) == negate;
            let mut moved: Vec<MInst> = body.to_vec();
            for m in moved.iter_mut() {
                m.guard(pred, not);
            }
            let ab = &mut vcode.blocks[a];
            let t = ab.insts.pop().unwrap();
            ab.insts.extend(moved);
            let mut jump = MInst::new(Pseudo::Jump);
            jump.extra_mut().targets.push(j);
            jump.extra_mut().args.push(Default::default());
            jump.origin = t.origin;
            ab.insts.push(jump);
            ab.succs = vec![j];
            dead.insert(s.0 as usize);
            if edge {
                dead.insert(e.0 as usize);
            }
            let jb = &mut vcode.blocks[j.0 as usize];
            jb.preds.retain(|&p| p != s && p != e);
            jb.preds.push(BlockId(a as u32));
            done += 1;
            break;
        }
    }
    if !dead.is_empty() {
        remove_blocks(vcode, &dead);
    }
    done
}

/// Is any of `vals` read outside block `s`?
fn read_outside(vcode: &VCode, s: usize, vals: &HashSet<VReg>) -> bool {
    vcode.blocks.iter().enumerate().filter(|&(bi, _)| bi != s).any(|(_, b)| {
        b.insts.iter().any(|m| {
            m.opnds.iter().any(|o| o.kind == OpKind::Use && vals.contains(&o.vreg)) || m.args().iter().flatten().any(|v| vals.contains(v))
        })
    }) || vcode.blocks[s].insts.iter().any(|m| m.args().iter().flatten().any(|v| vals.contains(v)))
}

/// Deletes the blocks in `dead` (unreachable now), renumbering the others.
fn remove_blocks(vcode: &mut VCode, dead: &HashSet<usize>) {
    let mut map = vec![None; vcode.blocks.len()];
    let mut n = 0u32;
    for (i, slot) in map.iter_mut().enumerate() {
        if !dead.contains(&i) {
            *slot = Some(BlockId(n));
            n += 1;
        }
    }
    let renum = |b: &BlockId| map[b.0 as usize].expect("a live block refers only to live blocks");
    let blocks = std::mem::take(&mut vcode.blocks);
    for (i, mut b) in blocks.into_iter().enumerate() {
        if dead.contains(&i) {
            continue;
        }
        b.succs = b.succs.iter().map(renum).collect();
        b.preds = b.preds.iter().filter(|p| !dead.contains(&(p.0 as usize))).map(renum).collect();
        for m in b.insts.iter_mut() {
            for t in m.targets_mut().iter_mut() {
                *t = renum(t);
            }
        }
        vcode.blocks.push(b);
    }
}
