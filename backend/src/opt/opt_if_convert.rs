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
//! A diamond is converted too: `S` and `E` each the only successor of
//! `A` on their side (one of them may be an empty edge block), both ending
//! in `jump J(…)` with arguments. Both bodies move into `A` under opposite
//! guards and each argument the two jumps pass differently is joined by
//! `SEL t, s, e, p` (two for a pair; the `E` side's copy of a constant read
//! as SEL's immediate or `RZ`, its `MOV` deleted when nothing else reads
//! it): `x = c ? load(p) : 0` is `@P0 LD R0, [R4]; SEL R0, R0, RZ, P0`
//! where the branch was BSSY, `@!P0 BRA`, LD, BSYNC and a MOV. A value a
//! body defines may then be read by those SELs (outside the guard) but by
//! nothing else: where the guard skipped its definition, the SEL takes the
//! other side. The cost rule: the guarded pieces of both bodies plus the
//! SELs are at most [`MAX_PIECES`].
//!
//! A block whose join only ends the function is left alone: the branch
//! around it becomes an early exit (`@!P0 EXIT`, `docs/kernels.md`).
//!
//! Correct because a guarded instruction whose guard is false does nothing
//! (no result, no memory access, no fault: the simulator runs an
//! instruction on the lanes of its active mask and its guard only, so a
//! guarded-off load reads no memory and cannot fault,
//! `runtime-sim/src/exec.rs`), and every value `S` defines is
//! read only inside `S` (it dominates no other block), so no instruction
//! runs on a value that was not computed. Warp-synchronous instructions
//! (barriers, shuffles, votes), atomics, fences, calls, traps and
//! instructions already guarded are never moved; `S` with any of them stays
//! a branch.

use rustc_hash::FxHashSet as HashSet;

use smallvec::SmallVec;
use ursa_emit::forms::{MOV_I, SEL_RI, SEL_RR};
use ursa_emit::optypes::SEL;
use ursa_emit::typed::R;
use ursa_emit::{forms, optypes, Group, Inst};
use ursa_isel::vcode::{BlockId, Bundle, Class, MInst, OpKind, Pseudo, VCode, VReg};

use crate::opt::opt_fold_cmem::{def_counts, remove_unread_copies, single_copies};

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
        Group::EXT_MEM => ![optypes::ATOM::ID, optypes::ATOMS::ID, optypes::RED::ID].contains(&def.optype),
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

/// A side of a branch that can be guarded: a block of no parameters and
/// one predecessor (`a`) ending in `jump J(args)`: its body, `J` and the
/// arguments.
fn side(vcode: &VCode, a: usize, s: BlockId) -> Option<(&[MInst], BlockId, &[VReg])> {
    let sb = &vcode.blocks[s.0 as usize];
    if s.0 as usize == a || sb.preds.len() != 1 || !sb.params.is_empty() {
        return None;
    }
    let last = sb.insts.last()?;
    if last.pseudo != Pseudo::Jump {
        return None;
    }
    let args = last.args().first().map_or(&[][..], |x| x.as_slice());
    Some((&sb.insts[..sb.insts.len() - 1], last.targets()[0], args))
}

/// The values defined in `body`.
fn defined_in(body: &[MInst]) -> HashSet<VReg> {
    body.iter().flat_map(|m| m.opnds.iter().filter(|o| o.kind != OpKind::Use).map(|o| o.vreg)).collect()
}

/// Converts every block that qualifies; returns how many.
pub fn opt_if_convert(vcode: &mut VCode) -> usize {
    let mut done = 0;
    let mut dead: HashSet<usize> = HashSet::default();
    let mut folded: HashSet<VReg> = HashSet::default();
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
        for side_i in 0..2 {
            let (s, e) = (targets[side_i], targets[1 - side_i]);
            if dead.contains(&(s.0 as usize)) || dead.contains(&(e.0 as usize)) {
                continue;
            }
            let Some((body, j, s_args)) = side(vcode, a, s) else { continue };
            if body.is_empty() {
                continue;
            }
            // `E` is `J` itself (no arguments to join) or another guardable side to `J`.
            let edge = e != j;
            let (e_body, e_args): (&[MInst], &[VReg]) = if edge {
                match side(vcode, a, e) {
                    Some((eb, ej, ea)) if ej == j && e != s => (eb, ea),
                    _ => continue,
                }
            } else if s_args.is_empty() {
                (&[], &[])
            } else {
                continue;
            };
            // A branch around a block that leads straight to the end stays:
            // it becomes an early `@P EXIT` / `@P RET` (`opt_branches`).
            // (Not when the sides pass `J` values: the end needs them.)
            if ends_function(vcode, j) && s_args.is_empty() {
                continue;
            }
            if j.0 as usize == a || j == s || s_args.len() != e_args.len() {
                continue;
            }
            let sels: usize =
                s_args.iter().zip(e_args).filter(|(x, y)| x != y).map(|(x, _)| if vcode.class(*x) == Class::RPair { 2 } else { 1 }).sum();
            let pieces = body.iter().chain(e_body).map(|m| m.pieces.len()).sum::<usize>();
            if pieces + sels > MAX_PIECES || !body.iter().chain(e_body).all(convertible) {
                continue;
            }
            // The values the bodies define are read only in their body (and
            // by the joined arguments).
            let defs = def_counts(vcode);
            let (s_defs, e_defs) = (defined_in(body), defined_in(e_body));
            if s_defs.iter().chain(&e_defs).any(|&v| !defs.once(v))
                || read_outside(vcode, s.0 as usize, &s_defs)
                || (edge && read_outside(vcode, e.0 as usize, &e_defs))
            {
                continue;
            }
            // Taken to targets[0] when the predicate (xor negate) holds.
            let not = (side_i == 0) == negate;
            let mut moved: Vec<MInst> = body.to_vec();
            for m in moved.iter_mut() {
                m.guard(pred, not);
            }
            let mut e_moved: Vec<MInst> = e_body.to_vec();
            for m in e_moved.iter_mut() {
                m.guard(pred, !not);
            }
            let (s_args, e_args) = (s_args.to_vec(), e_args.to_vec());
            let consts: Vec<(VReg, u64)> = single_copies(vcode, forms::MOV_I, |_| true)
                .filter(|(v, _)| e_args.contains(v) && vcode.class(*v) == Class::R)
                .map(|(v, p)| (v, p.get(MOV_I::VB)))
                .collect();
            let mut args: SmallVec<[VReg; 4]> = SmallVec::new();
            let mut sel_insts = Vec::new();
            for (&x, &y) in s_args.iter().zip(&e_args) {
                if x == y {
                    args.push(x);
                    continue;
                }
                let t = vcode.new_vreg(vcode.class(x));
                sel_insts.push(join(vcode, t, x, y, pred, not, consts.iter().find(|c| c.0 == y).map(|c| c.1)));
                args.push(t);
            }
            let ab = &mut vcode.blocks[a];
            let t = ab.insts.pop().unwrap();
            ab.insts.extend(moved);
            ab.insts.extend(e_moved);
            ab.insts.extend(sel_insts);
            let mut jump = MInst::new(Pseudo::Jump);
            jump.extra_mut().targets.push(j);
            jump.extra_mut().args.push(args);
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
            folded.extend(consts.iter().map(|c| c.0));
            break;
        }
    }
    if !dead.is_empty() {
        remove_blocks(vcode, &dead);
    }
    // The copies of constants the SELs read as immediates, once the edge
    // blocks that passed them are gone.
    if !folded.is_empty() {
        remove_unread_copies(vcode, |v| folded.contains(&v));
    }
    done
}

/// Is any of `vals` read outside block `s` (its jump's arguments are
/// joined by SELs)?
fn read_outside(vcode: &VCode, s: usize, vals: &HashSet<VReg>) -> bool {
    !vals.is_empty()
        && vcode.blocks.iter().enumerate().filter(|&(bi, _)| bi != s).any(|(_, b)| {
            b.insts.iter().any(|m| {
                m.opnds.iter().any(|o| o.kind == OpKind::Use && vals.contains(&o.vreg))
                    || m.args().iter().flatten().any(|v| vals.contains(v))
            })
        })
}

/// `t = p' ? x : y` (`p' = p`, `!p` with `not`): `SEL t, x, y, p'`, one
/// per half of a pair; `y` a copy of the constant `k`: `SEL t, x, k, p'`
/// (`RZ` for 0).
fn join(vcode: &VCode, t: VReg, x: VReg, y: VReg, p: VReg, not: bool, k: Option<u64>) -> MInst {
    let mut b = Bundle::new();
    let halves: &[bool] = if vcode.class(x) == Class::RPair { &[false, true] } else { &[false] };
    for &hi in halves {
        b = match k {
            Some(0) => b.inst(forms::SEL_RR).set(SEL_RR::RB, R::Z),
            Some(k) => b.inst(forms::SEL_RI).set(SEL_RI::VB, k),
            None if hi => b.inst(forms::SEL_RR).use_hi(SEL_RR::RB, y),
            None => b.inst(forms::SEL_RR).use_(SEL_RR::RB, y),
        };
        b = if hi { b.def_hi(SEL::RD, t).use_hi(SEL::RA, x) } else { b.def(SEL::RD, t).use_(SEL::RA, x) };
        b = b.use_(SEL::PP, p).set(SEL::PP_NOT, not);
    }
    b.build()
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
