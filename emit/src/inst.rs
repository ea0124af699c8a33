//! The instruction model, the encoder and the decoder.
//!
//! An [`Inst`] is an opcode form plus one value per field of that form (guard
//! predicate, operands, modifiers and scheduling control included). Encoding
//! places every field at the bits the description gives it; decoding finds
//! the form from the identifying bits and reads the fields back. Both check
//! the same rules: values fit and are defined, the field combination has a
//! syntax line, and no `__Exception` rule fires.
//!
//! Byte order: the 128-bit word is stored little-endian; bit *n* of the
//! instruction is bit `n % 8` of byte `n / 8`.

use std::fmt;

use crate::model::{Field, FieldValues, Form, Kind, Operand};
use crate::syntax::Pattern;
use crate::tables::{FormId, ENUM_DEFINED, ENUM_FIELDS, FIELD_POS, FIXED_BITS, ISA, PATTERN_WORDS, TEMPLATES, USED_BITS, WIDE_REG_FIELDS};

/// Size of one instruction in bytes.
pub const INST_BYTES: usize = 16;

/// Most fields any form has (from the description, at build time).
pub use crate::tables::MAX_FIELDS;

/// An instruction: a form and the value of each of its fields, in the order of
/// the form's field table.
///
/// The values live packed in the instruction's own 128-bit word: every field
/// of a form is a contiguous `<lo, width>` range and no two overlap (checked
/// when the description is built), so reading or writing one is a shift and
/// a mask, and encoding is the word itself. A value wider than its field (the
/// assembler stores what it parsed and lets [`Inst::validate`] reject it; the
/// compiler names spill slots kept in registers `R256` up until `pack_regs`
/// renames them) keeps its low bits in the word and its whole value in a
/// small side list, so [`Inst::get_at`] returns it unchanged and validation
/// reports it as before.
#[derive(Clone, PartialEq, Eq)]
pub struct Inst {
    word: u128,
    /// Not public: the word is laid out for this form, so changing it alone
    /// would misplace every field (a new form is a new `Inst`).
    pub(crate) form: FormId,
    wide: Option<Box<Wide>>,
}

/// Values wider than their field, by field index (sorted; none that fits).
#[derive(Clone, PartialEq, Eq)]
struct Wide(Vec<(u8, u64)>);

/// The field values of an instruction, for [`crate::model::eval`] and
/// [`Pattern::accepts`].
#[derive(Clone, Copy)]
pub struct Values<'a>(&'a Inst);

/// Where a field of the scheduling control sits: the same index, bits and
/// width in every form (the build checks it; `control::STALL_AT` …).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ControlAt {
    pub index: u8,
    pub lo: u8,
    pub width: u8,
}

impl FieldValues for Values<'_> {
    #[inline]
    fn value(self, field: usize) -> u64 {
        self.0.get_at(field)
    }
}

/// Whether `v` is in a generated bit set of the values below 256.
#[inline]
fn in_set(set: &[u64; 4], v: u64) -> bool {
    v < 256 && set[(v / 64) as usize] >> (v % 64) & 1 != 0
}

/// A syntax pattern's test on the word of an instruction that keeps no value
/// beside it (generated per form and pattern from `Pattern::accepts`).
#[derive(Debug)]
pub(crate) struct PatternWord {
    /// The bits the pattern's pinned fields and literal modifiers fix.
    pub mask: u128,
    pub bits: u128,
    /// Per placeholder and optional literal: the field's place (lo, width,
    /// at most 8 bits) and the values it may hold, as a bit set.
    pub sets: &'static [(u8, u8, [u64; 4])],
    /// The pattern cannot be tested on the word: `Pattern::accepts` decides.
    pub full: bool,
}

/// The low `width` bits.
#[inline]
fn low_mask(width: u8) -> u64 {
    if width >= 64 {
        u64::MAX
    } else {
        (1u64 << width) - 1
    }
}

/// What is wrong with an instruction or with bytes that should hold one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum InstError {
    UnknownOptype(u8),
    UnknownForm { optype: String, stype: u64 },
    NoSuchField { form: &'static str, field: String },
    ValueTooWide { form: &'static str, field: &'static str, value: u64 },
    UndefinedValue { form: &'static str, field: &'static str, value: u64 },
    FixedField { form: &'static str, field: &'static str, value: u64, expected: u64 },
    RegisterRange { form: &'static str, field: &'static str, reg: u64, width: u32 },
    Misaligned { form: &'static str, field: &'static str, reg: u64, width: u32 },
    NoSyntax { form: &'static str },
    Exception { form: &'static str, message: &'static str },
    WsbNotAllowed { form: &'static str },
    StrayBits { form: &'static str, bit: u32 },
}

impl fmt::Display for InstError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            InstError::UnknownOptype(o) => write!(f, "unknown optype 0x{:02x}", o),
            InstError::UnknownForm { optype, stype } => write!(f, "optype {} has no form with stype {}", optype, stype),
            InstError::NoSuchField { form, field } => write!(f, "{} has no field `{}`", form, field),
            InstError::ValueTooWide { form, field, value } => write!(f, "{}: value 0x{:x} does not fit field `{}`", form, value, field),
            InstError::UndefinedValue { form, field, value } => {
                write!(f, "{}: {} is not a defined value of field `{}`", form, value, field)
            }
            InstError::FixedField { form, field, value, expected } => {
                write!(f, "{}: field `{}` must be {} (found {})", form, field, expected, value)
            }
            InstError::RegisterRange { form, field, reg, width } => {
                write!(f, "{}: a {}-bit operand `{}` starting at register {} runs past the last register", form, width, field, reg)
            }
            InstError::Misaligned { form, field, reg, width } => {
                write!(f, "{}: {}-bit register operand `{}` must start at a multiple of {} (found {})", form, width, field, width / 32, reg)
            }
            InstError::NoSyntax { form } => write!(f, "{}: this combination of field values is not a valid instruction", form),
            InstError::Exception { form, message } => write!(f, "{}: {}", form, message),
            InstError::StrayBits { form, bit } => write!(f, "{}: bit {} is set but belongs to no field", form, bit),
            InstError::WsbNotAllowed { form } => write!(f, "{}: only variable-latency instructions may set a write scoreboard", form),
        }
    }
}

impl std::error::Error for InstError {}

impl fmt::Debug for Inst {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {{", self.form.name())?;
        for (i, fd) in self.def().fields.iter().enumerate() {
            write!(f, " {}={}", fd.name, self.get_at(i))?;
        }
        write!(f, " }}")
    }
}

impl Inst {
    /// The instruction's form.
    #[inline]
    pub fn form(&self) -> FormId {
        self.form
    }

    /// A new instruction of `form` with every field at its default (fixed
    /// fields at their value, registers without default at RZ/PT, others 0):
    /// the form's template word, generated at build time.
    #[inline]
    pub fn new(form: FormId) -> Inst {
        Inst { word: TEMPLATES[form.0 as usize], form, wide: None }
    }

    pub fn def(&self) -> &'static Form {
        self.form.def()
    }

    /// Field values, by index in the form's field table.
    #[inline]
    pub fn values(&self) -> Values<'_> {
        Values(self)
    }

    #[inline]
    pub fn get_at(&self, i: usize) -> u64 {
        if let Some(w) = &self.wide {
            if let Ok(k) = w.0.binary_search_by_key(&(i as u8), |e| e.0) {
                return w.0[k].1;
            }
        }
        let (lo, width) = FIELD_POS[self.form.0 as usize][i];
        ((self.word >> lo) as u64) & low_mask(width)
    }

    /// [`Inst::get_at`] for field `i` whose place in the word the caller
    /// has from a generated table (`lo`, `width`), saving the look-up.
    #[inline(always)]
    pub(crate) fn get_placed(&self, i: u8, lo: u8, width: u8) -> u64 {
        if self.wide.is_some() {
            return self.get_at(i as usize);
        }
        debug_assert_eq!(FIELD_POS[self.form.0 as usize][i as usize], (lo, width));
        ((self.word >> lo) as u64) & low_mask(width)
    }

    /// Whether the word, under `mask`, equals `bits`, with no value held
    /// in the side list (a generated per-form test of several fields at once).
    #[inline(always)]
    pub(crate) fn word_is(&self, mask: u128, bits: u128) -> bool {
        self.wide.is_none() && self.word & mask == bits
    }

    /// The largest value field `i` holds.
    #[inline]
    pub(crate) fn field_max(&self, i: usize) -> u64 {
        low_mask(FIELD_POS[self.form.0 as usize][i].1)
    }

    /// Sets field `i`. A value wider than the field is kept as it is (and
    /// reported by [`Inst::validate`]).
    #[inline]
    pub fn set_at(&mut self, i: usize, v: u64) {
        let (lo, width) = FIELD_POS[self.form.0 as usize][i];
        self.set_placed(i, lo, width, v);
    }

    /// [`Inst::set_at`] for field `i` whose place in the word (`lo`,
    /// `width`) the caller has, saving the look-up.
    #[inline(always)]
    fn set_placed(&mut self, i: usize, lo: u8, width: u8, v: u64) {
        debug_assert_eq!(FIELD_POS[self.form.0 as usize][i], (lo, width));
        let m = low_mask(width);
        self.word = (self.word & !((m as u128) << lo)) | (((v & m) as u128) << lo);
        if v > m || self.wide.is_some() {
            self.set_wide(i, v, v > m);
        }
    }

    /// Field `at` of the scheduling control, read from its bits without the
    /// form's field table (they are the same in every form).
    #[inline(always)]
    pub fn get_control(&self, at: ControlAt) -> u64 {
        self.get_placed(at.index, at.lo, at.width)
    }

    /// [`Inst::set_at`] of control field `at`, without the form's field table.
    #[inline(always)]
    pub fn set_control(&mut self, at: ControlAt, v: u64) {
        self.set_placed(at.index as usize, at.lo, at.width, v);
    }

    /// Records (or forgets) the whole value of field `i` in the side list.
    #[cold]
    fn set_wide(&mut self, i: usize, v: u64, wide: bool) {
        let list = &mut self.wide.get_or_insert_with(|| Box::new(Wide(Vec::new()))).0;
        match (list.binary_search_by_key(&(i as u8), |e| e.0), wide) {
            (Ok(k), true) => list[k].1 = v,
            (Err(k), true) => list.insert(k, (i as u8, v)),
            (Ok(k), false) => {
                list.remove(k);
            }
            (Err(_), false) => {}
        }
        if list.is_empty() {
            self.wide = None;
        }
    }

    /// The first syntax pattern that can express this instruction.
    pub fn pattern(&self) -> Option<&'static Pattern> {
        let def = self.def();
        if self.wide.is_some() {
            return def.patterns.iter().find(|p| p.accepts(&def.fields, self.values()));
        }
        // Each pattern's test compiled to the word (generated).
        let words = PATTERN_WORDS[self.form.0 as usize];
        def.patterns.iter().zip(words).find_map(|(p, w)| {
            let ok = if w.full {
                p.accepts(&def.fields, self.values())
            } else {
                self.word & w.mask == w.bits
                    && w.sets.iter().all(|&(lo, width, set)| in_set(&set, ((self.word >> lo) as u64) & low_mask(width)))
            };
            ok.then_some(p)
        })
    }

    /// Checks every rule an encodable instruction obeys.
    pub fn validate(&self) -> Result<&'static Pattern, InstError> {
        let def = self.def();
        let form = self.form.name();
        // Every value fits (no side list), every fixed field holds its value
        // and every enumerated field a defined one: checked on the word at
        // once; otherwise field by field, reporting the first in field order.
        if !self.fields_plainly_valid() {
            self.check_fields()?;
        }
        self.check_registers()?;
        let pat = self.pattern().ok_or(InstError::NoSyntax { form })?;
        for x in def.exceptions.iter() {
            if crate::model::eval(&x.cond, self.values()) != 0 {
                return Err(InstError::Exception { form, message: &x.message });
            }
        }
        if !pat.wsb {
            let w = crate::control::WSB.index as usize;
            if self.get_at(w) != def.fields[w].default.unwrap_or(7) {
                return Err(InstError::WsbNotAllowed { form });
            }
        }
        Ok(pat)
    }

    /// Whether no field value is too wide, undefined or off its fixed value
    /// (the fast test of the word; [`Inst::check_fields`] names the fault).
    #[inline]
    fn fields_plainly_valid(&self) -> bool {
        let fi = self.form.0 as usize;
        let (mask, bits) = FIXED_BITS[fi];
        if self.wide.is_some() || self.word & mask != bits {
            return false;
        }
        ENUM_FIELDS[fi].iter().all(|&(i, t)| {
            let v = self.get_at(i as usize);
            match &ENUM_DEFINED[t as usize] {
                Some(set) => in_set(set, v),
                None => ISA.types[t as usize].name_of(v).is_some(),
            }
        })
    }

    fn check_fields(&self) -> Result<(), InstError> {
        let form = self.form.name();
        for (i, f) in self.def().fields.iter().enumerate() {
            let v = self.get_at(i);
            if v > f.max() {
                return Err(InstError::ValueTooWide { form, field: &f.name, value: v });
            }
            if let Some(x) = f.fixed {
                if v != x {
                    return Err(InstError::FixedField { form, field: &f.name, value: v, expected: x });
                }
            }
            if let Kind::Enum(t) = f.kind {
                if ISA.types[t as usize].name_of(v).is_none() {
                    return Err(InstError::UndefinedValue { form, field: &f.name, value: v });
                }
            }
        }
        Ok(())
    }

    fn check_registers(&self) -> Result<(), InstError> {
        let def = self.def();
        // Only the fields whose bit width can exceed 32 (generated).
        for &(field, width) in WIDE_REG_FIELDS[self.form.0 as usize] {
            let w = self.width_bits(field, width);
            let i = field as usize;
            let f = &def.fields[i];
            let v = self.get_at(i);
            let zero = f.kind.zero_register().unwrap();
            if w <= 32 || v == zero {
                continue;
            }
            let n = (w / 32) as u64;
            if v % n != 0 {
                return Err(InstError::Misaligned { form: self.form.name(), field: &f.name, reg: v, width: w });
            }
            if v + n > zero {
                return Err(InstError::RegisterRange { form: self.form.name(), field: &f.name, reg: v, width: w });
            }
        }
        Ok(())
    }

    /// Encodes to 16 bytes after validating.
    pub fn encode(&self) -> Result<[u8; INST_BYTES], InstError> {
        self.validate()?;
        Ok(self.encode_unchecked().to_le_bytes())
    }

    /// Places the fields without checking them (values are masked): the word.
    #[inline]
    pub fn encode_unchecked(&self) -> u128 {
        self.word
    }

    /// Decodes 16 bytes; rejects anything [`Inst::encode`] would not produce.
    pub fn decode(bytes: &[u8; INST_BYTES]) -> Result<Inst, InstError> {
        let w = u128::from_le_bytes(*bytes);
        let form = find_form(w)?;
        let stray = w & !USED_BITS[form.0 as usize];
        if stray != 0 {
            return Err(InstError::StrayBits { form: form.name(), bit: stray.trailing_zeros() });
        }
        let inst = Inst { word: w, form, wide: None };
        inst.validate()?;
        Ok(inst)
    }

    /// Register operands this instruction reads or writes, for tools.
    pub fn operand_fields(&self, outputs: bool) -> Vec<usize> {
        let list = if outputs { &self.def().outputs } else { &self.def().inputs };
        list.iter().flat_map(Operand::fields).map(usize::from).collect()
    }

    /// Whether field `field` is read (an input, or the guard) and whether it
    /// is written (an output), without building the lists.
    pub fn field_roles(&self, field: usize) -> (bool, bool) {
        let def = self.def();
        let names = |list: &[Operand]| list.iter().any(|o| o.fields().any(|f| usize::from(f) == field));
        (names(&def.inputs) || def.guard.map(usize::from) == Some(field), names(&def.outputs))
    }

    pub fn field_def(&self, i: usize) -> &'static Field {
        &self.def().fields[i]
    }
}

/// The form whose identifying bits match `w`.
fn find_form(w: u128) -> Result<FormId, InstError> {
    let optype = (w & 0xff) as u8;
    let Some(ot) = ISA.optypes.iter().find(|o| o.value == optype) else {
        return Err(InstError::UnknownOptype(optype));
    };
    for &fi in ot.forms.iter() {
        let f = &ISA.forms[fi as usize];
        if w & f.fixed_mask == f.fixed_bits {
            return Ok(FormId(fi));
        }
    }
    Err(InstError::UnknownForm { optype: ot.name.to_string(), stype: ((w >> 8) & 0xf) as u64 })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A value for every field of `form` that fits it, varied by `seed`.
    fn fitting_values(form: FormId, seed: u64) -> Vec<u64> {
        let mut x = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
        form.def()
            .fields
            .iter()
            .map(|f| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                x & f.max()
            })
            .collect()
    }

    #[test]
    fn an_instruction_is_small() {
        assert!(std::mem::size_of::<Inst>() <= 32, "{} bytes", std::mem::size_of::<Inst>());
    }

    #[test]
    fn new_holds_every_fields_unused_value() {
        for fi in 0..ISA.forms.len() {
            let form = FormId(fi as u16);
            let i = Inst::new(form);
            for (k, f) in form.def().fields.iter().enumerate() {
                assert_eq!(i.get_at(k), f.unused_value(), "{} field {}", form.name(), f.name);
            }
        }
    }

    #[test]
    fn fields_read_back_and_encode_where_the_description_places_them() {
        for fi in 0..ISA.forms.len() {
            let form = FormId(fi as u16);
            for seed in 1..4 {
                let vals = fitting_values(form, seed * 1000 + fi as u64);
                let mut i = Inst::new(form);
                let mut word = 0u128;
                for (k, (f, &v)) in form.def().fields.iter().zip(&vals).enumerate() {
                    i.set_at(k, v);
                    word |= (v as u128) << f.lo;
                }
                for (k, &v) in vals.iter().enumerate() {
                    assert_eq!(i.get_at(k), v, "{} field {}", form.name(), k);
                }
                assert_eq!(i.encode_unchecked(), word, "{}", form.name());
            }
        }
    }

    /// Runs `check` (which tells whether the instruction passed) on new
    /// instructions of every form and on instructions with random values in
    /// the fields `pick` chooses; both outcomes must occur.
    fn on_random_insts(salt: u64, pick: impl Fn(&Field, u64) -> bool, mut check: impl FnMut(&Inst) -> bool) {
        let mut seen = [0usize; 2];
        for fi in 0..ISA.forms.len() {
            let form = FormId(fi as u16);
            for seed in 0..8 {
                let mut i = Inst::new(form);
                if seed > 0 {
                    for (k, v) in fitting_values(form, seed * salt + fi as u64).into_iter().enumerate() {
                        if pick(&form.def().fields[k], v) {
                            i.set_at(k, v);
                        }
                    }
                }
                seen[check(&i) as usize] += 1;
            }
        }
        assert!(seen[0] > 0 && seen[1] > 0, "{:?}", seen);
    }

    #[test]
    fn the_word_test_of_fields_agrees_with_the_field_by_field_check() {
        // Random values in about a third of the fields, fixed and enumerated
        // ones included.
        on_random_insts(
            7919,
            |_, v| (v >> 3) % 3 == 0,
            |i| {
                let ok = i.check_fields().is_ok();
                assert_eq!(i.fields_plainly_valid(), ok, "{:?}", i);
                ok
            },
        );
    }

    #[test]
    fn the_word_test_of_patterns_agrees_with_the_patterns() {
        let generic = |i: &Inst| i.def().patterns.iter().find(|p| p.accepts(&i.def().fields, i.values())).map(|p| p.line);
        // Every value of each field of at most 8 bits, one field at a time.
        for fi in 0..ISA.forms.len() {
            let form = FormId(fi as u16);
            for (k, f) in form.def().fields.iter().enumerate().filter(|(_, f)| f.fixed.is_none() && f.width <= 8) {
                for v in 0..=f.max() {
                    let mut i = Inst::new(form);
                    i.set_at(k, v);
                    assert_eq!(i.pattern().map(|p| p.line), generic(&i), "{:?}", i);
                }
            }
        }
        // Random values in a quarter of the fields that are not fixed, so
        // that some instructions still have a syntax.
        on_random_insts(
            3571,
            |f, v| f.fixed.is_none() && (v >> 5) % 4 == 0,
            |i| {
                let def = i.def();
                let want = def.patterns.iter().find(|p| p.accepts(&def.fields, i.values()));
                assert_eq!(i.pattern().map(|p| p.line), want.map(|p| p.line), "{:?}", i);
                want.is_some()
            },
        );
    }

    /// The register check over every field, as the description states it.
    fn check_every_register(i: &Inst) -> Result<(), (usize, u32)> {
        for (k, f) in i.def().fields.iter().enumerate() {
            if let Some(zero) = f.kind.zero_register().filter(|_| matches!(f.kind, Kind::Reg | Kind::UReg)) {
                let (w, v) = (i.def().bitwidth_of(k, i.values()), i.get_at(k));
                if w > 32 && v != zero && (v % (w / 32) as u64 != 0 || v + (w / 32) as u64 > zero) {
                    return Err((k, w));
                }
            }
        }
        Ok(())
    }

    #[test]
    fn the_register_check_of_generated_wide_fields_agrees_with_every_field() {
        on_random_insts(
            104_729,
            |f, _| f.fixed.is_none(),
            |i| {
                let want = check_every_register(i);
                let got = i.check_registers().map_err(|e| match e {
                    InstError::Misaligned { field, width, .. } | InstError::RegisterRange { field, width, .. } => {
                        (i.def().field_index(field).unwrap(), width)
                    }
                    e => panic!("{}", e),
                });
                assert_eq!(got, want, "{:?}", i);
                want.is_ok()
            },
        );
    }

    #[test]
    fn a_value_wider_than_its_field_is_kept_and_rejected() {
        let mut i = Inst::new(crate::forms::MOV_R);
        let rd = crate::forms::MOV_R::RD.index as usize;
        let fresh = i.clone();
        i.set_at(rd, 256 + 7);
        assert_eq!(i.get_at(rd), 263);
        assert_ne!(i, fresh);
        match i.validate() {
            Err(InstError::ValueTooWide { field, value: 263, .. }) => assert_eq!(field, "rd"),
            other => panic!("{:?}", other.map(|p| p.line)),
        }
        // Renamed into the file: the side list goes, and the instruction is
        // the same as one built with that register from the start.
        i.set_at(rd, 3);
        let mut j = fresh.clone();
        j.set_at(rd, 3);
        assert_eq!(i, j);
        assert!(i.validate().is_ok());
    }
}
