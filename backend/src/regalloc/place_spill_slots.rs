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
//! After `assign_regs_ssa` the registers are final and its slots hold values
//! live across calls: all of them are in memory, one layout. So are the
//! slots of a function large enough to be allocated in linear time
//! (`assign_regs_regalloc2::LINEAR_FROM`): every attempt of the search packs
//! the whole function, in time that grows with the names live at once.

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

/// What to do with an attempt's code, once it is laid out and packed with
/// [`SlotSearch::homes`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// It is the result.
    Accept,
    /// It fits: keep it (in place of any kept before) and try the next homes.
    Keep,
    /// It does not fit: drop it and try the next homes.
    Discard,
    /// It does not fit, and the search is over: the kept attempt is the result.
    UseKept,
}

/// The search for spill-slot homes, run by the pipeline: lay the code out
/// and pack it with [`SlotSearch::homes`], then tell [`SlotSearch::outcome`]
/// whether it packed, until the verdict is `Accept` or `UseKept`.
///
/// After `assign_regs_ssa` every slot is in memory (one attempt). After
/// regalloc2 every slot starts in a register; a slot live across a call goes
/// to memory, code naming registers chosen at run time puts all of them
/// there; when the file is full, a binary search finds how many of the most
/// moved slots fit; with none, all are in memory, which always packs.
pub struct SlotSearch {
    memory: SlotHomes,
    homes: SlotHomes,
    phase: Phase,
    ssa: bool,
    /// Slots most often moved first.
    slots: Vec<usize>,
}

enum Phase {
    /// Every slot in a register that may be, until the file is full.
    Registers,
    /// Keeping the first `mid` of `cand` in registers; `lo` of them fit, `hi` do not.
    Bisect { cand: Vec<usize>, lo: usize, hi: usize, mid: usize, kept: bool },
    /// Every slot in memory: the last resort.
    Memory,
}

impl SlotSearch {
    pub fn new(asg: &Assignment) -> SlotSearch {
        let memory = SlotHomes::memory(asg);
        if asg.slots_in_memory {
            return SlotSearch { homes: memory.clone(), memory, phase: Phase::Memory, ssa: asg.ssa, slots: Vec::new() };
        }
        let homes = memory.with(|s| memory.size[s] > 0);
        SlotSearch { homes, memory, phase: Phase::Registers, ssa: false, slots: slots_by_use(asg) }
    }

    /// The homes to try next.
    pub fn homes(&self) -> &SlotHomes {
        &self.homes
    }

    /// The verdict on the attempt with [`SlotSearch::homes`]: `Ok` if its
    /// code packed, else why not. An error when the code does not pack with
    /// every slot in memory (a compiler bug).
    pub fn outcome(&mut self, packed: Result<(), PackError>) -> Result<Verdict, Error> {
        match std::mem::replace(&mut self.phase, Phase::Memory) {
            Phase::Memory => match packed {
                Ok(()) => Ok(Verdict::Accept),
                Err(why) if self.ssa => Err(Error::internal(format!("the SSA assignment does not pack: {:?}", why))),
                Err(why) => Err(Error::internal(format!("code with every spill slot in memory does not pack: {:?}", why))),
            },
            Phase::Registers => match packed {
                Ok(()) => Ok(Verdict::Accept),
                Err(PackError::LiveAcrossCall(regs)) => {
                    // The slots of these registers (a pair's high half names
                    // the unit above its slot's first) go to memory.
                    let homes = &self.homes;
                    let first = |r: u32| {
                        let u = (r - SLOT_REG_BASE) as usize;
                        if homes.size[u] == 0 && u > 0 {
                            u - 1
                        } else {
                            u
                        }
                    };
                    let out: Vec<usize> = regs.into_iter().map(first).collect();
                    self.homes = homes.with(|s| homes.reg(s).is_some() && !out.contains(&s));
                    self.phase = Phase::Registers;
                    Ok(Verdict::Discard)
                }
                Err(PackError::NoRenaming) => {
                    self.homes = self.memory.clone();
                    self.phase = Phase::Registers;
                    Ok(Verdict::Discard)
                }
                Err(PackError::Full) => {
                    // The file is full: keep the first k slots (most moved)
                    // in registers, for the largest k found to fit.
                    let cand: Vec<usize> = self.slots.iter().copied().filter(|&s| self.homes.reg(s).is_some()).collect();
                    // The search looks only at the 2 x 255 most moved
                    // slots: beyond that the values in registers already
                    // fill the file in any code seen, and each attempt
                    // costs a packing of the whole function (keeping fewer
                    // slots in registers is still valid code).
                    let hi = cand.len().min(2 * crate::regalloc::pack_regs::NREGS + 1);
                    Ok(self.bisect(cand, 0, hi, false))
                }
            },
            Phase::Bisect { cand, lo, hi, mid, kept } => Ok(match packed {
                Ok(()) if hi - mid <= 1 => Verdict::Accept,
                Ok(()) => {
                    self.bisect(cand, mid, hi, true);
                    Verdict::Keep
                }
                Err(_) => self.bisect(cand, lo, mid, kept),
            }),
        }
    }

    /// The next step of the binary search between `lo` (fits) and `hi`
    /// (does not), `kept` telling whether an attempt that fits was kept.
    fn bisect(&mut self, cand: Vec<usize>, lo: usize, hi: usize, kept: bool) -> Verdict {
        if hi - lo > 1 {
            let mid = (lo + hi) / 2;
            let mut keep = vec![false; self.homes.in_reg.len()];
            for &s in &cand[..mid] {
                keep[s] = true;
            }
            self.homes = self.memory.with(|s| keep[s]);
            self.phase = Phase::Bisect { cand, lo, hi, mid, kept };
            Verdict::Discard
        } else if kept {
            Verdict::UseKept
        } else {
            // No register slot fits: all in memory.
            self.homes = self.memory.clone();
            self.phase = Phase::Memory;
            Verdict::Discard
        }
    }
}
