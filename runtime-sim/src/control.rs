//! SIMT control flow: branches, calls and returns, EXIT, traps, the
//! convergence barriers (BSSY/BSYNC/BREAK/BMOV) and the CTA barrier
//! (docs/isa-extensions.md, sections 3 and 6.1–6.11, 6.18).

use crate::machine::{lanes, Warp};
use crate::memory::ConstBanks;
use crate::ops::{Dst64, Op, Src64};
use crate::site::{Flow, Site};
use crate::trap::{Fault, TrapKind};

/// Puts every lane of the group at `next` in the per-lane PC array and
/// marks the group for recomputation (statuses are about to change).
fn settle(warp: &mut Warp, a: u32, next: u64) {
    warp.sync_pcs();
    for l in lanes(a) {
        warp.pc[l] = next;
    }
    warp.dirty = true;
}

/// Sends each executing lane to its own target; a uniform target keeps the
/// group together.
fn jump_lanes(warp: &mut Warp, a: u32, e: u32, next: u64, targets: &[u64; 32]) -> Flow {
    if e == 0 {
        return Flow::Next;
    }
    let first = targets[e.trailing_zeros() as usize];
    if lanes(e).all(|l| targets[l] == first) {
        return Flow::Jump(first);
    }
    warp.diverge(lanes(e).map(|l| (l, targets[l])), a & !e, next);
    Flow::Regroup
}

fn write_link(warp: &mut Warp, d: Dst64, value: u64, e: u32) {
    warp.regs.put64::<32>(d, &[value; 32], e);
}

pub(crate) fn exec(op: &Op, warp: &mut Warp, site: &mut Site, cb: &ConstBanks, a: u32, e: u32, pc: u64) -> Result<Flow, Fault> {
    let next = pc.wrapping_add(16);
    let targets_of = |warp: &Warp, s: Src64| warp.regs.get64::<32>(s, cb);
    Ok(match *op {
        Op::Bra { target } => Flow::Jump(target),
        Op::BraR { a: s } | Op::Ret { a: s } => {
            let t = targets_of(warp, s)?;
            jump_lanes(warp, a, e, next, &t)
        }
        Op::Call { d, target } => {
            write_link(warp, d, next, e);
            Flow::Jump(target)
        }
        Op::CallR { d, a: s } => {
            let t = targets_of(warp, s)?;
            write_link(warp, d, next, e);
            jump_lanes(warp, a, e, next, &t)
        }
        Op::Lepc { d, target } => {
            write_link(warp, d, target, e);
            Flow::Next
        }
        Op::Exit => {
            if e == 0 {
                return Ok(Flow::Next);
            }
            settle(warp, a, next);
            warp.ready &= !e;
            warp.exited |= e;
            warp.update_convergence();
            Flow::Regroup
        }
        Op::Bpt { code } => {
            if e == 0 {
                return Ok(Flow::Next);
            }
            let what = format!("{} (BPT.TRAP 0x{:x})", ursa_emit::traps::trap_code_name(code as u64), code);
            return Err(Fault::at(TrapKind::Explicit(what), e.trailing_zeros() as usize));
        }
        Op::Bssy { b, target } => {
            if e == 0 {
                return Ok(Flow::Next);
            }
            for l in lanes(e) {
                warp.b[b as usize][l] = e;
            }
            warp.bssy_target[b as usize] = target;
            release(warp, a, next)
        }
        Op::Break { b } => {
            // The executing lanes leave the instances they are in: every
            // lane whose view is one of theirs loses them.
            let views = &mut warp.b[b as usize];
            let mut theirs = [0u32; 32];
            let mut n = 0;
            for l in lanes(e) {
                if !theirs[..n].contains(&views[l]) {
                    theirs[n] = views[l];
                    n += 1;
                }
            }
            for v in views.iter_mut() {
                if theirs[..n].contains(v) {
                    *v &= !e;
                }
            }
            release(warp, a, next)
        }
        Op::BmovToB { b, s } => {
            if e == 0 {
                return Ok(Flow::Next);
            }
            let v = warp.regs.get::<32>(s, cb)?;
            for l in lanes(e) {
                warp.b[b as usize][l] = v[l];
            }
            release(warp, a, next)
        }
        Op::BmovToR { d, b, clear } => {
            let views = &mut warp.b[b as usize];
            warp.regs.put::<32>(d, views, e);
            if clear {
                for l in lanes(e) {
                    views[l] = 0;
                }
            }
            Flow::Next
        }
        Op::Bsync { b } => {
            let views = &warp.b[b as usize];
            let waiting = lanes(e).filter(|&l| views[l] >> l & 1 != 0).fold(0u32, |m, l| m | 1 << l);
            if waiting == 0 {
                return Ok(Flow::Next);
            }
            settle(warp, a, next);
            warp.ready &= !waiting;
            warp.wait_bsync |= waiting;
            for l in lanes(waiting) {
                warp.wait_id[l] = b;
            }
            warp.update_convergence();
            Flow::Regroup
        }
        Op::Bar { id, count } => {
            if e == 0 {
                return Ok(Flow::Next);
            }
            settle(warp, a, next);
            warp.ready &= !e;
            warp.wait_bar |= e;
            for l in lanes(e) {
                warp.wait_id[l] = id;
            }
            let bar = &mut site.bars[id as usize & 15];
            bar.arrived += e.count_ones();
            bar.count = count as u32;
            Flow::Regroup
        }
        _ => unreachable!("not a control op: {:?}", op),
    })
}

/// Re-checks the convergence barriers after B was written.
fn release(warp: &mut Warp, a: u32, next: u64) -> Flow {
    if warp.wait_bsync == 0 {
        return Flow::Next;
    }
    settle(warp, a, next);
    warp.update_convergence();
    Flow::Regroup
}
