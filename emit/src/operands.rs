//! Which registers an instruction reads and writes.
//!
//! One answer for every tool: the compiler's register packing and scheduling
//! passes and any checker ask [`Inst::reg_reads`] / [`Inst::reg_writes`]
//! rather than walking a form's fields themselves. The answer comes from the
//! description's `InList` / `OutList` and `Bitwidth` (a 64-bit operand names an
//! aligned pair, a 128-bit one four registers); the zero registers (RZ, URZ,
//! PT, UPT) are never reported.

use crate::inst::Inst;
#[cfg(test)]
use crate::model::Kind;
use crate::tables::{DYNAMIC_REGS, REG_OPERANDS, REG_ZERO_WORDS};
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
    #[cfg(test)]
    fn of(kind: Kind) -> Option<RegFile> {
        match kind {
            Kind::Reg => Some(RegFile::R),
            Kind::UReg => Some(RegFile::UR),
            Kind::Pred => Some(RegFile::P),
            Kind::UPred => Some(RegFile::UP),
            _ => None,
        }
    }

    /// The number of the file's zero register (RZ, URZ, PT, UPT); the real
    /// registers are numbered below it.
    pub fn zero(self) -> u32 {
        match self {
            RegFile::R => RZ as u32,
            RegFile::UR => URZ as u32,
            RegFile::P | RegFile::UP => PT as u32,
        }
    }

    /// The assembly name of register `n` of the file (`R5`, `UP2`), the
    /// zero register not treated specially.
    pub fn name(self, n: u32) -> String {
        let prefix = match self {
            RegFile::R => "R",
            RegFile::UR => "UR",
            RegFile::P => "P",
            RegFile::UP => "UP",
        };
        format!("{}{}", prefix, n)
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

/// How the bit width of a register field is found (generated per operand
/// from the form's `Bitwidth`, emit/build.rs).
#[derive(Clone, Copy, Debug)]
pub(crate) enum Width {
    /// A constant (32 where the description gives none; predicates).
    Bits(u16),
    /// The `Bitwidth` expression reads only field `.0`: the width for each
    /// of its values (a value past the table is evaluated).
    ByField(u8, &'static [u16]),
    /// The expression, evaluated on the instruction's values (no
    /// `Bitwidth` of the present description needs it).
    #[allow(dead_code)]
    Eval,
}

/// A register field of a form's operand list (generated).
#[derive(Clone, Copy, Debug)]
pub(crate) struct RegOperand {
    pub field: u8,
    /// The field's place in the instruction word (as `FIELD_POS` has it).
    pub lo: u8,
    pub bits: u8,
    pub file: RegFile,
    pub slot: RegSlot,
    pub width: Width,
}

impl Inst {
    /// The bit width of register field `field` by its generated rule.
    #[inline(always)]
    pub(crate) fn width_bits(&self, field: u8, w: Width) -> u32 {
        match w {
            Width::Bits(b) => b as u32,
            Width::ByField(k, table) => match table.get(self.get_at(k as usize) as usize) {
                Some(&b) => b as u32,
                None => self.def().bitwidth_of(field as usize, self.values()),
            },
            Width::Eval => self.def().bitwidth_of(field as usize, self.values()),
        }
    }

    /// The bit width of register field `field`, by the generated rule of its
    /// entry in the form's operand lists (the model evaluated for a field
    /// in neither list): what [`crate::model::Form::bitwidth_of`] gives.
    pub fn reg_field_bits(&self, field: usize) -> u32 {
        let [reads, writes] = REG_OPERANDS[self.form.0 as usize];
        match reads.iter().chain(writes).find(|op| op.field as usize == field) {
            Some(op) => self.width_bits(op.field, op.width),
            None => self.def().bitwidth_of(field, self.values()),
        }
    }

    /// Whether register field `field` names more than one register (its
    /// width beyond 32 bits, [`Inst::reg_field_bits`] `> 32`): evaluated only
    /// for the few fields whose width can exceed 32 bits.
    #[inline]
    pub fn reg_field_is_wide(&self, field: usize) -> bool {
        crate::tables::WIDE_REG_FIELDS[self.form.0 as usize].iter().any(|&(f, w)| f as usize == field && self.width_bits(f, w) > 32)
    }

    /// Whether every register field names its file's zero register, so that
    /// the instruction reports no register (most pieces of the code before
    /// register assignment, whose operands' fields are still at RZ/PT):
    /// one test of the word.
    #[inline(always)]
    fn names_no_register(&self) -> bool {
        let (mask, zeros) = REG_ZERO_WORDS[self.form.0 as usize];
        self.word_is(mask, zeros)
    }

    /// The register references of the fields of `list` (0: inputs and the
    /// guard, 1: outputs), in the order of the description's operand list.
    #[inline]
    fn reg_refs(&self, list: usize, out: &mut Vec<RegRef>) {
        if self.names_no_register() {
            return;
        }
        let ops = REG_OPERANDS[self.form.0 as usize][list];
        out.reserve(ops.len());
        self.push_refs(ops, out);
    }

    /// The first register and the register count operand `op` names;
    /// None for its file's zero register (which names none).
    #[inline(always)]
    fn placed_ref(&self, op: &RegOperand) -> Option<(u32, u32)> {
        let num = self.get_placed(op.field, op.lo, op.bits) as u32;
        (num != op.file.zero()).then(|| (num, self.width_bits(op.field, op.width).div_ceil(32).max(1)))
    }

    /// The references of the register operands `ops` of this instruction's form.
    #[inline(always)]
    fn push_refs(&self, ops: &[RegOperand], out: &mut Vec<RegRef>) {
        for op in ops {
            if let Some((num, count)) = self.placed_ref(op) {
                out.push(RegRef { file: op.file, num, count, slot: op.slot });
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
        self.reg_refs(0, out);
    }

    /// [`Inst::reg_reads_into`] then [`Inst::reg_writes_into`] in one call;
    /// returns how many of the references appended are reads.
    pub fn reg_refs_into(&self, out: &mut Vec<RegRef>) -> usize {
        if self.names_no_register() {
            return 0;
        }
        let start = out.len();
        let [reads, writes] = REG_OPERANDS[self.form.0 as usize];
        out.reserve(reads.len() + writes.len());
        self.push_refs(reads, out);
        let nr = out.len() - start;
        self.push_refs(writes, out);
        nr
    }

    /// What [`Inst::reg_refs_into`] appends, without the list: `f(file,
    /// first register, count, written)` for each reference, the reads
    /// first.
    #[inline]
    pub fn for_each_reg_ref(&self, mut f: impl FnMut(RegFile, u32, u32, bool)) {
        if self.names_no_register() {
            return;
        }
        let [reads, writes] = REG_OPERANDS[self.form.0 as usize];
        for (ops, written) in [(reads, false), (writes, true)] {
            for op in ops {
                if let Some((num, count)) = self.placed_ref(op) {
                    f(op.file, num, count, written);
                }
            }
        }
    }

    /// One past the highest general register (`R`) the instruction reads or
    /// writes, a pair or quad counting all its registers; 0 for none (`RZ`
    /// is none). What [`Inst::reg_refs_into`] names, without the list.
    pub fn r_regs_end(&self) -> u32 {
        if self.names_no_register() {
            return 0;
        }
        let [reads, writes] = REG_OPERANDS[self.form.0 as usize];
        let mut end = 0;
        for op in reads.iter().chain(writes).filter(|op| op.file == RegFile::R) {
            if let Some((num, count)) = self.placed_ref(op) {
                end = end.max(num + count);
            }
        }
        end
    }

    /// The registers this instruction writes (when its guard holds).
    pub fn reg_writes(&self) -> Vec<RegRef> {
        let mut out = Vec::new();
        self.reg_writes_into(&mut out);
        out
    }

    /// [`Inst::reg_writes`], appended to `out`.
    pub fn reg_writes_into(&self, out: &mut Vec<RegRef>) {
        self.reg_refs(1, out);
    }

    /// Whether the instruction is conditional: a guard other than `@PT`
    /// (so its writes may not happen).
    #[inline]
    pub fn is_guarded(&self) -> bool {
        let def = self.def();
        let Some(g) = def.guard else { return false };
        self.get_at(g as usize) != PT as u64 || def.guard_not.is_some_and(|n| self.get_at(n as usize) != 0)
    }

    /// Whether the instruction reads or writes a register chosen at run
    /// time (`R[UR, imm]` operands), which [`Inst::reg_reads`] cannot name.
    pub fn has_dynamic_regs(&self) -> bool {
        DYNAMIC_REGS[self.form.0 as usize]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Operand;
    use crate::tables::ISA;
    use crate::FormId;

    /// The references read from the description's operand lists directly,
    /// as the generated tables should give them.
    fn from_description(inst: &Inst, list: &[Operand]) -> Vec<RegRef> {
        let def = inst.def();
        let mut out = Vec::new();
        let mut push = |f: usize| {
            let Some(file) = RegFile::of(def.fields[f].kind) else { return };
            let num = inst.get_at(f) as u32;
            if num != file.zero() {
                let count = match file {
                    RegFile::R | RegFile::UR => def.bitwidth_of(f, inst.values()).div_ceil(32).max(1),
                    _ => 1,
                };
                out.push(RegRef { file, num, count, slot: RegSlot::Field(f as u16) });
            }
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
                    offset.map(|o| push(o as usize));
                }
                Operand::Pseudo(_) => {}
            }
        }
        out
    }

    #[test]
    fn generated_width_rules_agree_with_the_bitwidth_expressions() {
        use crate::tables::WIDE_REG_FIELDS;
        let mut by_field = 0;
        for fi in 0..ISA.forms.len() {
            let form = FormId(fi as u16);
            let ops = REG_OPERANDS[fi].iter().flat_map(|l| l.iter()).filter(|o| matches!(o.file, RegFile::R | RegFile::UR));
            for (field, w) in ops.map(|o| (o.field, o.width)).chain(WIDE_REG_FIELDS[fi].iter().copied()) {
                let Width::ByField(k, table) = w else {
                    let i = Inst::new(form);
                    assert_eq!(i.width_bits(field, w), form.def().bitwidth_of(field as usize, i.values()), "{}", form.name());
                    continue;
                };
                by_field += 1;
                // Every value of the key field, and one past the table
                // (kept beside the word, evaluated).
                for v in (0..table.len() as u64).chain([table.len() as u64 + 300]) {
                    let mut i = Inst::new(form);
                    i.set_at(k as usize, v);
                    assert_eq!(i.width_bits(field, w), form.def().bitwidth_of(field as usize, i.values()), "{} value {}", form.name(), v);
                }
            }
        }
        assert!(by_field > 0);
    }

    /// An instruction of `form` with registers 4, 8, ... in its register
    /// fields and every other field at 1 where it fits (so modifiers that
    /// widen operands are on).
    fn sample_inst(form: FormId) -> Inst {
        let mut inst = Inst::new(form);
        for (k, f) in form.def().fields.iter().enumerate() {
            if f.fixed.is_none() {
                inst.set_at(k, if RegFile::of(f.kind).is_some() { 4 * (k as u64 % 5) } else { 1 & f.max() });
            }
        }
        inst
    }

    #[test]
    fn the_zero_word_test_sees_every_register_field() {
        for fi in 0..ISA.forms.len() {
            let form = FormId(fi as u16);
            let fields: Vec<usize> = REG_OPERANDS[fi].iter().flat_map(|l| l.iter()).map(|o| o.field as usize).collect();
            // Every register field at its zero register: nothing to report.
            let mut zero = Inst::new(form);
            for &k in &fields {
                zero.set_at(k, RegFile::of(form.def().fields[k].kind).unwrap().zero() as u64);
            }
            assert!(zero.names_no_register(), "{}", form.name());
            assert!(zero.reg_reads().is_empty() && zero.reg_writes().is_empty(), "{}", form.name());
            // Any one of them naming a register: the test fails.
            for &k in &fields {
                let mut one = zero.clone();
                one.set_at(k, 1);
                assert!(!one.names_no_register(), "{} field {}", form.name(), k);
                assert!(!one.reg_reads().is_empty() || !one.reg_writes().is_empty(), "{} field {}", form.name(), k);
            }
        }
    }

    #[test]
    fn register_field_widths_agree_with_the_model() {
        for fi in 0..ISA.forms.len() {
            let form = FormId(fi as u16);
            for i in [Inst::new(form), sample_inst(form)] {
                for (k, f) in form.def().fields.iter().enumerate() {
                    if f.kind == Kind::Reg {
                        assert_eq!(i.reg_field_bits(k), form.def().bitwidth_of(k, i.values()), "{} field {}", form.name(), f.name);
                    }
                }
            }
        }
    }

    #[test]
    fn generated_operand_tables_match_the_description() {
        for fi in 0..ISA.forms.len() {
            let form = FormId(fi as u16);
            let inst = sample_inst(form);
            for i in [Inst::new(form), inst] {
                let mut reads = from_description(&i, &i.def().inputs);
                if let Some(g) = i.def().guard {
                    if i.get_at(g as usize) != PT as u64 {
                        reads.push(RegRef {
                            file: RegFile::of(i.field_def(g as usize).kind).unwrap(),
                            num: i.get_at(g as usize) as u32,
                            count: 1,
                            slot: RegSlot::Guard,
                        });
                    }
                }
                assert_eq!(i.reg_reads(), reads, "{}", form.name());
                assert_eq!(i.reg_writes(), from_description(&i, &i.def().outputs), "{}", form.name());
                let mut both = vec![RegRef { file: RegFile::R, num: 0, count: 1, slot: RegSlot::Guard }];
                assert_eq!(i.reg_refs_into(&mut both), reads.len(), "{}", form.name());
                assert_eq!(both[1..], [reads, i.reg_writes()].concat(), "{}", form.name());
                let end = both[1..].iter().filter(|r| r.file == RegFile::R).map(|r| r.num + r.count).max().unwrap_or(0);
                assert_eq!(i.r_regs_end(), end, "{}", form.name());
                let mut visited = Vec::new();
                i.for_each_reg_ref(|file, num, count, written| visited.push((file, num, count, written)));
                let nr = both.len() - 1 - i.reg_writes().len();
                let listed: Vec<_> = both[1..].iter().enumerate().map(|(k, r)| (r.file, r.num, r.count, k >= nr)).collect();
                assert_eq!(visited, listed, "{}", form.name());
                let dynamic = i.def().inputs.iter().chain(i.def().outputs.iter()).any(|o| matches!(o, Operand::RegIndexed { .. }));
                assert_eq!(i.has_dynamic_regs(), dynamic, "{}", form.name());
            }
        }
    }
}
