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

use ursa_isel::vcode::Class;

use crate::regalloc::assignment::Assignment;
use crate::regalloc::pack_regs::PackError;
use crate::Error;

/// The register name of spill slot 0 (slot `s` is `SLOT_REG_BASE + s`; a
/// pair's slot is even, so its register pair is aligned).
pub const SLOT_REG_BASE: u32 = 256;

/// Where each spill slot (4-byte unit of regalloc2's spill area) lives.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SlotHomes {
    /// Per slot unit: in a register.
    in_reg: Vec<bool>,
    /// Per slot unit: the units of the slot it starts (1 or 2), 0 for none.
    size: Vec<u8>,
    /// Per slot unit: its byte offset in the spill area, for slots in memory
    /// (packed densely, a pair's slot 8-byte aligned).
    ofs: Vec<u32>,
    /// Bytes of the spill area in local memory.
    bytes: u32,
}

impl SlotHomes {
    /// Every slot of `asg` in local memory.
    pub fn memory(asg: &Assignment) -> SlotHomes {
        let mut size = vec![0u8; asg.num_spillslots];
        for m in asg.moves.iter() {
            if let Some(s) = m.from.slot().or(m.to.slot()) {
                size[s as usize] = if m.class == Class::RPair { 2 } else { 1 };
            }
        }
        SlotHomes::new(size, |_| false)
    }

    /// Slots of the given sizes (per 4-byte unit: the units of the slot it
    /// starts, 0 for none), each in a register where `in_reg` says so.
    pub fn new(size: Vec<u8>, in_reg: impl Fn(usize) -> bool) -> SlotHomes {
        let n = size.len();
        SlotHomes { in_reg: vec![false; n], size, ofs: vec![0; n], bytes: 0 }.with(in_reg)
    }

    /// The register of slot `s`, if it lives in one.
    pub fn reg(&self, s: usize) -> Option<u32> {
        self.in_reg.get(s).copied().unwrap_or(false).then_some(SLOT_REG_BASE + s as u32)
    }

    /// The byte offset of slot `s` in the spill area (a slot in memory).
    pub fn offset(&self, s: usize) -> u32 {
        self.ofs.get(s).copied().unwrap_or(0)
    }

    /// Bytes of local memory the spill slots need.
    pub fn memory_bytes(&self) -> u32 {
        self.bytes
    }

    /// How many slot units live in registers.
    pub fn in_registers(&self) -> usize {
        self.in_reg.iter().filter(|&&r| r).count()
    }

    fn set(&mut self, slot: usize, in_reg: bool) {
        let size = (self.size[slot] as usize).max(1);
        for k in slot..(slot + size).min(self.in_reg.len()) {
            self.in_reg[k] = in_reg;
        }
    }

    fn lay_out_memory(&mut self) {
        let mut at = 0u32;
        for s in 0..self.in_reg.len() {
            let size = self.size[s] as u32;
            if size > 0 && !self.in_reg[s] {
                at = at.next_multiple_of(4 * size);
                self.ofs[s] = at;
                at += 4 * size;
            }
        }
        self.bytes = at;
    }

    fn with(&self, in_reg: impl Fn(usize) -> bool) -> SlotHomes {
        let mut h = self.clone();
        for s in 0..h.in_reg.len() {
            if h.size[s] > 0 {
                h.set(s, in_reg(s));
            }
        }
        h.lay_out_memory();
        h
    }
}

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
