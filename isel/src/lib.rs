//! Instruction selection: prioritized lowering rules (ISLE, in `isle/`) from
//! Cranelift IR to machine instructions with virtual registers ([`vcode`]).
//!
//! * `isle/prelude.isle` — types and Cranelift-IR extractors;
//! * `isle/inst.isle` — constructors of machine instructions ([`machine`]);
//! * `isle/lower/*.isle` — the rules, one file per family of opcodes;
//! * [`mod@lower`] — the driver that walks the function and calls the rules.

extern crate alloc;

pub mod abi;
pub mod addr_space;
pub mod bitset;
pub mod context;
pub mod intrinsics;
pub mod lower;
pub mod machine;
pub mod order;
pub mod rules;
pub mod vcode;

use std::fmt;

/// Why a function cannot be lowered.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LowerError {
    /// The instruction, as CLIF text, when the error is about one.
    pub inst: Option<String>,
    pub msg: String,
}

impl fmt::Display for LowerError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.inst {
            Some(i) => write!(f, "{}: `{}`", self.msg, i),
            None => write!(f, "{}", self.msg),
        }
    }
}

impl std::error::Error for LowerError {}

/// Where the module's data objects in global and constant memory are, as
/// the compiled code reads them (`docs/module.md`, "Data objects").
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DataLayout {
    /// The byte offset of each object's address in the address table
    /// (constant bank 14), by name.
    pub slots: std::collections::HashMap<String, u32>,
    /// The byte offset of each read-only object in constant bank 3, by name.
    pub constants: std::collections::HashMap<String, u32>,
}

/// Lowers a verified function to machine code with virtual registers.
/// A `kernel` takes its parameters from the launch's parameter block
/// (`c[0x0][0x160]`, `docs/abi.md`) and ends with `EXIT`; other functions
/// follow the device-function calling convention.
/// `shared` gives the offset of each static shared-memory variable
/// (`%ursa_shared_NAME` → offset of `NAME`); `data` where the data objects
/// in global and constant memory are. `speed` enables the rules
/// that only `opt_level=speed` uses (so that `none` stays the compiler
/// without its optimizations): the widening multiply. `fminmax_nan` is the
/// NaN `fmin`/`fmax` return.
pub fn lower<'f>(
    f: &'f cranelift_codegen::ir::Function,
    kernel: bool,
    shared: &'f std::collections::HashMap<String, u32>,
    data: &'f DataLayout,
    speed: bool,
    fminmax_nan: lower::FminmaxNan,
) -> Result<vcode::VCode, LowerError> {
    let mut l = lower::Lower::new(f, shared, data);
    l.kernel = kernel;
    l.speed = speed;
    l.fminmax_nan = fminmax_nan;
    l.spaces = addr_space::infer(f, kernel);
    l.run()
}
