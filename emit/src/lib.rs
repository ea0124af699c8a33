//! The ISA as data.
//!
//! The instruction set is described in the vendor documents' own language in
//! `emit/spec/`; `build.rs` turns it into the static tables in [`tables`].
//! On top of them this crate provides the instruction model ([`Inst`]), the
//! one encoder and decoder, the assembler and disassembler, and the ELF
//! object format shared by the compiler, the assembler and the simulator,
//! and the latency table ([`latency`]) shared by the simulator's timing model
//! and the compiler's scheduler.

pub mod asm;
pub mod dsl;
pub mod elf;
pub mod inst;
pub mod latency;
pub mod model;
pub mod operands;
pub mod syntax;
pub mod tables;
pub mod text;
pub mod traps;
pub mod twins;
pub mod typed;

pub use inst::{ControlAt, Inst, InstError, INST_BYTES};
pub use model::{PT, RZ, URZ};
pub use operands::{RegFile, RegRef, RegSlot};
pub use tables::{control, fields, forms, mods, optypes, FormId, Group, Suffix, ISA};
pub use text::{format_inst, parse_inst, Labels, NoLabels, TextError};
