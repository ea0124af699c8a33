//! Typed operand handles, generated from the ISA description.
//!
//! `build.rs` writes, next to every form's [`FormId`] constant in
//! [`crate::forms`], a module of the same name with one constant per field
//! that can be set (`forms::IADD_RR::RD`, `forms::IADD_RR::RB_NEG`,
//! `forms::IADD_RR::EXT`); [`crate::optypes`] has the fields every form of an
//! optype has at the same place (`optypes::ISETP::COMPOP`), [`crate::control`]
//! the scheduling control of group `ALL` (`control::STALL`), and
//! [`crate::mods`] one type per enumerated field type with one constant per
//! value (`mods::CompOp::LT`).
//!
//! A handle's type says what the field holds ([`Role`]): a register of a
//! given file read ([`Src`]), written ([`Dst`]) or both, an immediate
//! ([`Imm`]), a constant-bank address ([`CMem`]), a flag ([`Flag`]) or a
//! value of an enumerated type ([`Mod`]). So a misspelt field does not
//! compile, a register number of the wrong file does not compile
//! (`set(IADD_RR::PU, R(3))`), a modifier takes only its own type's values,
//! and an instruction builder can only `def` a field the description lists as
//! an output. What the type cannot say — that the handle belongs to the form
//! of the instruction it is applied to — is checked when it is applied, with
//! a message naming the field and both forms.

use std::marker::PhantomData;

use crate::inst::{Inst, InstError};
use crate::operands::RegFile;
use crate::tables::FormId;

/// Whose field a handle names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Owner {
    /// One form.
    Form(FormId),
    /// Every form of an optype (index into `ISA.optypes`): the field has the
    /// same place in all of them.
    Optype(u16),
    /// Every form (the scheduling control of group `ALL`).
    All,
    /// Every form that has a field of this name, wherever it sits there
    /// (a key of [`crate::fields`]): for code that reads instructions of
    /// any form, like the simulator's decoder.
    Named(u16),
}

/// A field of a form (or of every form of an optype), typed by its role.
pub struct Fld<K> {
    pub owner: Owner,
    /// Index in the form's field table.
    pub index: u8,
    /// The field's name in the description (for messages).
    pub name: &'static str,
    role: PhantomData<K>,
}

impl<K> Clone for Fld<K> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<K> Copy for Fld<K> {}

impl<K> std::fmt::Debug for Fld<K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.name)
    }
}

impl<K> Fld<K> {
    #[doc(hidden)]
    pub const fn new(owner: Owner, index: u8, name: &'static str) -> Fld<K> {
        Fld { owner, index, name, role: PhantomData }
    }

    /// Whether the handle names a field of `form`.
    pub fn belongs_to(&self, form: FormId) -> bool {
        match self.owner {
            Owner::Form(f) => f == form,
            Owner::Optype(o) => form.def().optype == o,
            Owner::All => true,
            Owner::Named(_) => self.place(form).is_some(),
        }
    }

    /// The field's index in `form`, or None if the handle is of another form.
    #[inline]
    pub fn place(&self, form: FormId) -> Option<usize> {
        match self.owner {
            Owner::Named(k) => match crate::tables::FIELD_PLACES[form.0 as usize * crate::tables::FIELD_KEYS + k as usize] {
                255 => None,
                i => Some(i as usize),
            },
            _ => self.belongs_to(form).then_some(self.index as usize),
        }
    }

    /// The modifier of a field named by name (`fields::RA` and `NEG` give
    /// `fields::RA_NEG`), if some form has it.
    pub fn modifier(&self, s: crate::tables::Suffix) -> Option<Fld<Raw>> {
        let Owner::Named(k) = self.owner else {
            return None;
        };
        match crate::tables::FIELD_MODIFIERS[k as usize][s as usize] {
            u16::MAX => None,
            m => Some(Fld::new(Owner::Named(m), 0, crate::tables::FIELD_NAMES[m as usize])),
        }
    }

    /// The handle with its role forgotten (the field's raw bits).
    pub fn raw(self) -> Fld<Raw> {
        Fld::new(self.owner, self.index, self.name)
    }

    fn owner_name(&self) -> String {
        match self.owner {
            Owner::Form(f) => f.name().to_string(),
            Owner::Optype(o) => format!("optype {}", crate::ISA.optypes[o as usize].name),
            Owner::All => "every form".to_string(),
            Owner::Named(_) => "any form".to_string(),
        }
    }

    /// The field's index in `form`; panics, naming both, if the handle is
    /// of another form (a bug in the code that built the instruction).
    #[inline]
    pub fn index_in(&self, form: FormId) -> usize {
        match self.place(form) {
            Some(i) => i,
            None => self.not_in(form),
        }
    }

    /// The panic of [`Fld::index_in`], out of line.
    #[cold]
    #[inline(never)]
    fn not_in(&self, form: FormId) -> ! {
        panic!("field `{}` of {} applied to an instruction of form {}", self.name, self.owner_name(), form.name())
    }
}

/// A field to apply to an instruction: one handle, or a choice of handles
/// of the same role for code that builds one of several forms
/// (`[LD_RI::RD, LDG_RI::RD, LDS_RI::RD, LDL_RI::RD]`): the one that belongs
/// to the instruction's form is used.
pub trait Handle<K>: Copy {
    /// The handle for `form`; panics, naming the fields and the form, if
    /// none belongs to it.
    fn resolve(self, form: FormId) -> Fld<K>;
}

impl<K> Handle<K> for Fld<K> {
    fn resolve(self, _form: FormId) -> Fld<K> {
        self
    }
}

impl<K, const N: usize> Handle<K> for [Fld<K>; N] {
    fn resolve(self, form: FormId) -> Fld<K> {
        match self.iter().find(|h| h.belongs_to(form)) {
            Some(h) => *h,
            None => panic!("none of the fields {:?} belongs to form {}", self, form.name()),
        }
    }
}

/// What a field holds, and the Rust type of its values.
pub trait Role {
    type Value: Copy;
    fn bits(v: Self::Value) -> u64;
}

/// A register file, as a type; its values are register numbers.
pub trait File {
    const FILE: RegFile;
    type Num: Copy;
    fn num(n: Self::Num) -> u64;
}

/// A role whose field is a register (any direction).
pub trait RegRole: Role {
    const FILE: RegFile;
}

/// A register field the instruction reads (in the description's `InList`).
pub trait Reads: RegRole {}
/// A register field the instruction writes (in the description's `OutList`).
pub trait Writes: RegRole {}

macro_rules! file {
    ($(#[$m:meta])* $t:ident, $f:ident, $zero:ident = $z:expr, $max:expr) => {
        $(#[$m])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub struct $t(pub u8);
        impl $t {
            /// The zero register (reads 0 / always true; writes are discarded).
            pub const $zero: $t = $t($z);
            /// The highest register number that names a real register.
            pub const MAX: u8 = $max;
        }
        impl File for $t {
            const FILE: RegFile = RegFile::$f;
            type Num = $t;
            fn num(n: $t) -> u64 {
                n.0 as u64
            }
        }
    };
}

file!(/// A general register `Rn` (`R::Z` = RZ).
    R, R, Z = crate::RZ, 254);
file!(/// A uniform register `URn` (`UR::Z` = URZ).
    UR, UR, Z = crate::URZ, 62);
file!(/// A predicate `Pn` (`P::T` = PT).
    P, P, T = crate::PT, 6);
file!(/// A uniform predicate `UPn` (`UP::T` = UPT).
    UP, UP, T = crate::PT, 6);

macro_rules! reg_role {
    ($(#[$m:meta])* $t:ident $(, $tr:ident)*) => {
        $(#[$m])*
        pub struct $t<F>(PhantomData<F>);
        impl<F: File> Role for $t<F> {
            type Value = F::Num;
            fn bits(v: F::Num) -> u64 {
                F::num(v)
            }
        }
        impl<F: File> RegRole for $t<F> {
            const FILE: RegFile = F::FILE;
        }
        $(impl<F: File> $tr for $t<F> {})*
    };
}

reg_role!(/// A register operand the instruction reads.
    Src, Reads);
reg_role!(/// A register operand the instruction writes.
    Dst, Writes);
reg_role!(/// A register operand the instruction reads and writes.
    SrcDst, Reads, Writes);
reg_role!(/// A register field in neither operand list.
    RegField);

/// An immediate (signed or unsigned integer, float bits, branch offset): the
/// field's bits.
pub struct Imm;
impl Role for Imm {
    type Value = u64;
    fn bits(v: u64) -> u64 {
        v
    }
}

/// A field's raw bits, whatever it holds (a handle by name whose field has
/// different kinds in different forms).
pub struct Raw;
impl Role for Raw {
    type Value = u64;
    fn bits(v: u64) -> u64 {
        v
    }
}

/// A constant-bank address: bank in bits 16–21, byte offset in bits 0–15.
pub struct CMem;
impl Role for CMem {
    type Value = u64;
    fn bits(v: u64) -> u64 {
        v
    }
}

/// A one-bit modifier whose values are `False`/`True` (`rb.neg`, `pg.not`).
pub struct Flag;
impl Role for Flag {
    type Value = bool;
    fn bits(v: bool) -> u64 {
        v as u64
    }
}

/// A value of an enumerated field type (a type of [`crate::mods`]).
pub struct Mod<E>(PhantomData<E>);
impl<E: ModValue> Role for Mod<E> {
    type Value = E;
    fn bits(v: E) -> u64 {
        v.bits()
    }
}

/// The generated modifier types.
pub trait ModValue: Copy {
    /// The type's index in `ISA.types` (the field kind `Kind::Enum(TYPE)`).
    const TYPE: u16;
    fn bits(self) -> u64;
    fn from_bits(bits: u64) -> Self;
}

impl Inst {
    /// The raw value of a field.
    pub fn get<K: Role>(&self, h: impl Handle<K>) -> u64 {
        self.get_at(h.resolve(self.form).index_in(self.form()))
    }

    /// The raw value of a field, or None if the instruction's form has no
    /// such field.
    #[inline]
    pub fn get_opt<K>(&self, h: Fld<K>) -> Option<u64> {
        h.place(self.form).map(|i| self.get_at(i))
    }

    /// The value of a modifier field, or None if the form has no such field.
    #[inline]
    pub fn get_mod<E: ModValue>(&self, h: Fld<Mod<E>>) -> Option<E> {
        self.get_opt(h).map(E::from_bits)
    }

    /// Sets a field; a value wider than the field is an error.
    pub fn try_set<K: Role>(&mut self, h: impl Handle<K>, v: K::Value) -> Result<&mut Self, InstError> {
        let i = h.resolve(self.form).index_in(self.form());
        let bits = K::bits(v);
        if bits > self.field_max(i) {
            return Err(InstError::ValueTooWide { form: self.form.name(), field: &self.def().fields[i].name, value: bits });
        }
        self.set_at(i, bits);
        Ok(self)
    }

    /// Sets a field whose value the caller knows fits (registers, modifiers,
    /// immediates the caller has range-checked); panics otherwise.
    pub fn set<K: Role>(&mut self, h: impl Handle<K>, v: K::Value) -> &mut Self {
        if let Err(e) = self.try_set(h, v) {
            panic!("built a bad instruction: {}", e);
        }
        self
    }

    /// Writes a register number into a register field without the width
    /// check: before `pack_regs` renames them, spill slots kept in registers
    /// are named above the file (`R256` up).
    pub fn set_reg_unchecked<K: RegRole>(&mut self, h: impl Handle<K>, r: u32) -> &mut Self {
        let i = h.resolve(self.form).index_in(self.form());
        self.set_at(i, r as u64);
        self
    }

    /// [`Inst::set`] for a new instruction: `Inst::new(MOV_I).with(MOV_I::VB, 5)`.
    pub fn with<K: Role>(mut self, h: impl Handle<K>, v: K::Value) -> Inst {
        self.set(h, v);
        self
    }
}
