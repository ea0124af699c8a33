//! What a register allocator hands to `lower_vcode::lower_vcode`: a machine register
//! for every operand and the moves to make at each program point.
//!
//! Both allocators produce it: `assign_regs_regalloc2` (regalloc2, converted from its
//! `Output`) and `assign_regs_ssa` (registers chosen directly on the SSA
//! code). Registers are machine numbers: `Rn` (the low register of a pair)
//! or `Pn`, by the operand's class; a spill slot is a 4-byte unit of the
//! spill area (`place_spill_slots` decides where it lives).

use ursa_isel::vcode::Class;

/// Where a move reads or writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Loc {
    /// Machine register `Rn` / the pair `R[n:n+1]` / `Pn`, by the move's class.
    Reg(u32),
    /// Spill slot (first 4-byte unit).
    Slot(u32),
}

impl Loc {
    pub fn slot(self) -> Option<u32> {
        match self {
            Loc::Slot(s) => Some(s),
            Loc::Reg(_) => None,
        }
    }
}

/// One move the allocator adds: a value of class `class` copied from `from` to `to`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Move {
    pub class: Class,
    pub from: Loc,
    pub to: Loc,
}

/// An operand with no register (regalloc2 left it on the stack: never asked for).
pub const NO_REG: u32 = u32::MAX;

/// The allocation of one function. Instructions are numbered in the order of
/// the `VCode`'s blocks and of the instructions in each block ("flat" numbers).
#[derive(Clone, Debug, Default)]
pub struct Assignment {
    /// Operand k of flat instruction i is in `regs[op_at[i] + k]`.
    pub regs: Vec<u32>,
    pub op_at: Vec<u32>,
    /// The moves at program point p (2i: before flat instruction i, 2i + 1:
    /// after it) are `moves[move_at[p]..move_at[p + 1]]`, made one after the
    /// other in that order.
    pub moves: Vec<Move>,
    pub move_at: Vec<u32>,
    /// Spill slot units used (slots are named `Loc::Slot(0..num_spillslots)`).
    pub num_spillslots: usize,
    /// Registers were chosen on the SSA code (`assign_regs_ssa`): they are
    /// final, so `lower_vcode` drops a copy whose two sides got one register and
    /// `pack_regs` leaves the general registers alone (when `dense`).
    pub ssa: bool,
    /// The SSA assignment's general registers are dense (as `pack_regs`
    /// would choose them): false when it placed stored quads at their hints
    /// at the top of the file (`assign_regs_ssa`), so `pack_regs` packs them.
    pub dense: bool,
    /// Every spill slot lives in local memory (`place_spill_slots` keeps none
    /// in a register): the SSA assignment's slots, and those of a function
    /// allocated in linear time (`assign_regs_regalloc2::LINEAR_FROM`).
    pub slots_in_memory: bool,
}

impl Assignment {
    /// The registers of the operands of flat instruction `i`.
    pub fn operand_regs(&self, i: usize) -> &[u32] {
        &self.regs[self.op_at[i] as usize..self.op_at[i + 1] as usize]
    }

    /// The moves at program point `p` (see [`Assignment::moves`]).
    pub fn moves_at(&self, p: usize) -> &[Move] {
        &self.moves[self.move_at[p] as usize..self.move_at[p + 1] as usize]
    }

    /// Flat instructions.
    pub fn num_insts(&self) -> usize {
        self.op_at.len().saturating_sub(1)
    }
}

/// Counts of what the allocator added, for `--stats` and `docs/regalloc.md`.
#[derive(Clone, Copy, Debug, Default)]
pub struct RegallocStats {
    pub moves: usize,
    pub spills: usize,
    pub reloads: usize,
    pub spill_slots: usize,
}

impl Assignment {
    /// What the allocator added, with the spill slots where `homes` put them:
    /// a spill or reload of a slot kept in a register is a move.
    pub fn stats(&self, homes: &SlotHomes) -> RegallocStats {
        let mut s = RegallocStats { spill_slots: self.num_spillslots - homes.in_registers(), ..Default::default() };
        let in_memory = |a: Loc| a.slot().is_some_and(|k| homes.reg(k as usize).is_none());
        for m in &self.moves {
            match (in_memory(m.from), in_memory(m.to)) {
                (false, true) => s.spills += 1,
                (true, false) => s.reloads += 1,
                _ => s.moves += 1,
            }
        }
        s
    }
}

/// The register name of spill slot 0 (slot `s` is `SLOT_REG_BASE + s`; a
/// pair's slot is even, so its register pair is aligned).
pub const SLOT_REG_BASE: u32 = 256;

/// Where each spill slot (4-byte unit of regalloc2's spill area) lives.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SlotHomes {
    /// Per slot unit: in a register.
    pub(crate) in_reg: Vec<bool>,
    /// Per slot unit: the units of the slot it starts (1 or 2), 0 for none.
    pub(crate) size: Vec<u8>,
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

    pub(crate) fn with(&self, in_reg: impl Fn(usize) -> bool) -> SlotHomes {
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

/// The assignment as `--print-after assign_regs_*` shows it: per flat
/// instruction the machine register of each operand (`-` for none), then the
/// moves before and after it.
impl std::fmt::Display for Assignment {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let loc = |l: Loc| match l {
            Loc::Reg(r) => format!("{}", r),
            Loc::Slot(s) => format!("slot{}", s),
        };
        let moves = |p: usize| -> String {
            let ms: Vec<String> = self.moves_at(p).iter().map(|m| format!("{:?} {} -> {}", m.class, loc(m.from), loc(m.to))).collect();
            ms.join("; ")
        };
        writeln!(f, "{} allocator, {} spill slot units", if self.ssa { "SSA" } else { "regalloc2" }, self.num_spillslots)?;
        for i in 0..self.num_insts() {
            let before = if self.move_at.len() > 2 * i + 1 { moves(2 * i) } else { String::new() };
            if !before.is_empty() {
                writeln!(f, "      before: {}", before)?;
            }
            let regs: Vec<String> =
                self.operand_regs(i).iter().map(|&r| if r == NO_REG { "-".to_string() } else { r.to_string() }).collect();
            writeln!(f, "  i{}: {}", i, regs.join(" "))?;
            let after = if self.move_at.len() > 2 * i + 2 { moves(2 * i + 1) } else { String::new() };
            if !after.is_empty() {
                writeln!(f, "      after: {}", after)?;
            }
        }
        Ok(())
    }
}

/// The homes as `--print-after place_spill_slots` shows them.
impl std::fmt::Display for SlotHomes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut any = false;
        for s in 0..self.size.len() {
            if self.size[s] == 0 {
                continue;
            }
            any = true;
            match self.reg(s) {
                Some(r) => writeln!(f, "slot{} ({} bytes): register R{}", s, 4 * self.size[s], r)?,
                None => writeln!(f, "slot{} ({} bytes): local memory at spill area + {:#x}", s, 4 * self.size[s], self.offset(s))?,
            }
        }
        if !any {
            writeln!(f, "no spill slots")?;
        }
        Ok(())
    }
}
