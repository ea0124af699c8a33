//! Which registers an instruction reads and writes.
//!
//! One answer for every tool: the compiler's register packing and scheduling
//! passes and any checker ask [`Inst::reg_reads`] / [`Inst::reg_writes`]
//! rather than walking a form's fields themselves. The answer comes from the
//! description's `InList` / `OutList` and `Bitwidth` (a 64-bit operand names an
//! aligned pair, a 128-bit one four registers); the zero registers (RZ, URZ,
//! PT, UPT) are never reported.

use crate::inst::Inst;
use crate::model::{Kind, Operand};
use crate::{PT, RZ, URZ};

/// A register file.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RegFile {
    /// Per-lane general registers `R0`–`R254`.
    R,
    /// Uniform registers `UR0`–`UR62`.
    UR,
    /// Per-lane predicates `P0`–`P6`.
    P,
    /// Uniform predicates `UP0`–`UP6`.
    UP,
}

impl RegFile {
    fn of(kind: Kind) -> Option<RegFile> {
        match kind {
            Kind::Reg => Some(RegFile::R),
            Kind::UReg => Some(RegFile::UR),
            Kind::Pred => Some(RegFile::P),
            Kind::UPred => Some(RegFile::UP),
            _ => None,
        }
    }

    fn zero(self) -> u32 {
        match self {
            RegFile::R => RZ as u32,
            RegFile::UR => URZ as u32,
            RegFile::P | RegFile::UP => PT as u32,
        }
    }
}

/// Where in the instruction a register reference sits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RegSlot {
    /// The operand field with this index in the form's field table.
    Field(u16),
    /// The guard predicate (`@P0`): a read.
    Guard,
}

/// `count` consecutive registers of `file` starting at `num` (`count` is 2
/// for a 64-bit pair, 4 for a 128-bit quad; the first is aligned to `count`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RegRef {
    pub file: RegFile,
    pub num: u32,
    pub count: u32,
    pub slot: RegSlot,
}

impl RegRef {
    /// The registers named, one by one.
    pub fn regs(&self) -> impl Iterator<Item = u32> {
        self.num..self.num + self.count
    }
}

impl Inst {
    fn reg_refs(&self, list: &[Operand], out: &mut Vec<RegRef>) {
        let def = self.def();
        let mut push = |f: usize| {
            let fd = &def.fields[f];
            let Some(file) = RegFile::of(fd.kind) else { return };
            let num = self.get_at(f) as u32;
            if num == file.zero() {
                return;
            }
            let count = match file {
                RegFile::R | RegFile::UR => def.bitwidth_of(f, self.values()).div_ceil(32).max(1),
                RegFile::P | RegFile::UP => 1,
            };
            out.push(RegRef { file, num, count, slot: RegSlot::Field(f as u16) });
        };
        for o in list {
            match o {
                Operand::Field(i) => push(*i as usize),
                Operand::CMemIndexed { reg, .. } => push(*reg as usize),
                Operand::RegIndexed { index, offset, .. } => {
                    push(*index as usize);
                    push(*offset as usize);
                }
                Operand::Address { base, offset } => {
                    push(*base as usize);
                    if let Some(o) = offset {
                        push(*o as usize);
                    }
                }
                Operand::Pseudo(_) => {}
            }
        }
    }

    /// The registers this instruction reads, its guard predicate included.
    pub fn reg_reads(&self) -> Vec<RegRef> {
        let mut out = Vec::new();
        self.reg_reads_into(&mut out);
        out
    }

    /// [`Inst::reg_reads`], appended to `out` (no allocation when `out` has room).
    pub fn reg_reads_into(&self, out: &mut Vec<RegRef>) {
        self.reg_refs(&self.def().inputs, out);
        if let Some(g) = self.def().guard {
            let g = g as usize;
            if let Some(file) = RegFile::of(self.def().fields[g].kind) {
                let num = self.get_at(g) as u32;
                if num != file.zero() {
                    out.push(RegRef { file, num, count: 1, slot: RegSlot::Guard });
                }
            }
        }
    }

    /// The registers this instruction writes (when its guard holds).
    pub fn reg_writes(&self) -> Vec<RegRef> {
        let mut out = Vec::new();
        self.reg_writes_into(&mut out);
        out
    }

    /// [`Inst::reg_writes`], appended to `out`.
    pub fn reg_writes_into(&self, out: &mut Vec<RegRef>) {
        self.reg_refs(&self.def().outputs, out);
    }

    /// Whether the instruction is conditional: a guard other than `@PT`
    /// (so its writes may not happen).
    pub fn is_guarded(&self) -> bool {
        let def = self.def();
        let Some(g) = def.guard else { return false };
        self.get_at(g as usize) != PT as u64 || def.guard_not.is_some_and(|n| self.get_at(n as usize) != 0)
    }

    /// Whether the instruction reads or writes a register chosen at run
    /// time (`R[UR, imm]` operands), which [`Inst::reg_reads`] cannot name.
    pub fn has_dynamic_regs(&self) -> bool {
        let def = self.def();
        def.inputs.iter().chain(def.outputs.iter()).any(|o| matches!(o, Operand::RegIndexed { .. }))
    }
}
