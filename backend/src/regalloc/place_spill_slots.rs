//! Spill slots in registers: the whole register file for high-pressure code.
//!
//! regalloc2 hands out at most 64 registers per class (`assign_regs`), so a
//! function with more simultaneously live values than that spills, although a
//! thread has 253 general registers. This pass decides where each of
//! regalloc2's spill slots lives:
//!
//! - **in a register** (the default): slot `s` is named `R(256 + s)` — above
//!   the machine's registers — by `encode`, which turns spills and reloads of
//!   it into `MOV`s (for a predicate `SEL Rs, RZ, 0x1, !P` / `ISETP.NE`), and
//!   `pack_regs` renames it into the real file like any other value, deleting
//!   the `MOV`s whose two sides get one register;
//! - **in local memory** (`STL`/`LDL` at `[R1 + offset]`) when that cannot be
//!   done: the slot is live across a call (a callee may write every register),
//!   the code names registers chosen at run time (`pack_regs` renames
//!   nothing), or the file is full. For a full file, the slots most often
//!   moved stay in registers: a binary search finds how many of them fit.
//!
//! Every attempt lays the code out and packs it anew; the layout with no
//! slot in a register always packs (pack_regs keeps the original registers if
//! it cannot do better), so the search ends with valid code.
//!
//! After `assign_ssa_regs` the registers are final and its slots hold values
//! live across calls: all of them are in memory, one layout.

use crate::error::Error;
use crate::regalloc::assignment::{Assignment, SlotHomes, SLOT_REG_BASE};
use crate::regalloc::pack_regs::PackError;

/// The spill slots of `asg` (first units), most often moved first.
fn slots_by_use(asg: &Assignment) -> Vec<usize> {
    let mut uses = vec![0usize; asg.num_spillslots];
    for m in asg.moves.iter() {
        if let Some(s) = m.from.slot().or(m.to.slot()) {
            uses[s as usize] += 1;
        }
    }
    let mut slots: Vec<usize> = (0..uses.len()).filter(|&s| uses[s] > 0).collect();
    slots.sort_by_key(|&s| (std::cmp::Reverse(uses[s]), s));
    slots
}

/// Chooses the spill slots' homes. `attempt` lays the code out with the
/// given homes and packs it: `Ok(Ok(result))` when the registers fit,
/// `Ok(Err(why))` when they do not, `Err` for a compiler error (returned).
pub fn place_spill_slots<T>(
    asg: &Assignment,
    mut attempt: impl FnMut(&SlotHomes) -> Result<Result<T, PackError>, Error>,
) -> Result<(T, SlotHomes), Error> {
    let memory = SlotHomes::memory(asg);
    // After `assign_ssa_regs` the registers are final: its slots (values
    // live across calls) are all in memory.
    if asg.ssa {
        return match attempt(&memory)? {
            Ok(t) => Ok((t, memory)),
            Err(why) => Err(Error::Internal(format!("the SSA assignment does not pack: {:?}", why))),
        };
    }
    let slots = slots_by_use(asg);
    let mut homes = memory.with(|s| memory.size[s] > 0);
    loop {
        match attempt(&homes)? {
            Ok(t) => return Ok((t, homes)),
            Err(PackError::LiveAcrossCall(regs)) => {
                // The slots of these registers (a pair's high half names the
                // unit above its slot's first) go to memory.
                let first = |r: u32| {
                    let u = (r - SLOT_REG_BASE) as usize;
                    if homes.size[u] == 0 && u > 0 {
                        u - 1
                    } else {
                        u
                    }
                };
                let out: Vec<usize> = regs.into_iter().map(first).collect();
                homes = homes.with(|s| homes.reg(s).is_some() && !out.contains(&s));
            }
            Err(PackError::NoRenaming) => homes = memory.clone(),
            Err(PackError::Full) => break,
        }
    }
    // The file is full: keep the first k slots (most moved) in registers,
    // for the largest k found to fit.
    let cand: Vec<usize> = slots.iter().copied().filter(|&s| homes.reg(s).is_some()).collect();
    let (mut lo, mut hi) = (0, cand.len());
    let mut best = None;
    while hi - lo > 1 {
        let mid = (lo + hi) / 2;
        let mut keep = vec![false; homes.in_reg.len()];
        for &s in &cand[..mid] {
            keep[s] = true;
        }
        let h = memory.with(|s| keep[s]);
        match attempt(&h)? {
            Ok(t) => {
                lo = mid;
                best = Some((t, h));
            }
            Err(_) => hi = mid,
        }
    }
    if let Some(b) = best {
        return Ok(b);
    }
    // No register slot fits: all in memory, which always packs.
    match attempt(&memory)? {
        Ok(t) => Ok((t, memory)),
        Err(why) => Err(Error::Internal(format!("code with every spill slot in memory does not pack: {:?}", why))),
    }
}
