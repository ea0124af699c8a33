//! The generated instruction-set tables.

use std::borrow::Cow;

pub use crate::dsl::BinOp;
#[allow(unused_imports)]
pub(crate) use crate::inst::PatternWord;
pub use crate::model::{EnumType, Exception, ExprOp, Field, Form, Isa, Kind, Latency, Operand, Optype};
#[allow(unused_imports)]
pub(crate) use crate::operands::{RegFile, RegOperand, RegSlot, Width};
pub use crate::syntax::{Mod, NegStyle, Pattern, Slot};

/// Index of an opcode form in [`ISA`]`.forms`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct FormId(pub u16);

impl FormId {
    pub fn def(self) -> &'static Form {
        &ISA.forms[self.0 as usize]
    }
    pub fn name(self) -> &'static str {
        &ISA.forms[self.0 as usize].name
    }
    pub fn optype(self) -> &'static Optype {
        &ISA.optypes[ISA.forms[self.0 as usize].optype as usize]
    }
    /// Whether the form executes once per warp on the uniform datapath (its
    /// guard is a uniform predicate: groups UDP and EXTU; generated).
    pub fn uniform(self) -> bool {
        UNIFORM[self.0 as usize]
    }
    /// The group the form's optype is declared in (generated).
    pub fn group(self) -> Group {
        GROUPS[self.0 as usize]
    }
    /// Looks a form up by its name (`IADD_RR`).
    pub fn by_name(name: &str) -> Option<FormId> {
        ISA.form_by_name(name).map(|i| FormId(i as u16))
    }
}

include!(concat!(env!("OUT_DIR"), "/tables.rs"));
