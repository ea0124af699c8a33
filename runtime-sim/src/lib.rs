//! ursa-sim: a SIMT simulator for Ursa ELF programs.
//!
//! A [`Program`] is loaded from ELF bytes: functions are laid out in one code
//! space, relocated, and every instruction is decoded once (with
//! `ursa_emit::Inst::decode`) into a compact executable op. A [`Gpu`] owns
//! global memory and launches kernels over a grid of CTAs; each warp executes
//! its 32 lanes over a structure-of-arrays register file. Faults are
//! [`Trap`] reports, never panics.
//!
//! Module map: machine state (`regs`, `machine`), memory (`memory`),
//! decode-to-ops (`ops`, `decode`, `decode_ext`, `program`), semantics by
//! family (`alu_int`, `alu_uniform`, `xu`, `dalu`, `float32`, `control`,
//! `mem_ops`, `collective`), the interpreter loop (`exec`) and its full-warp threaded code (`threaded`), timing and
//! hazards (`timing`), faults (`trap`) and the host API (`launch`).

// `Trap` is a complete fault report by design; returning it by value is the API.
#![allow(clippy::result_large_err)]

mod alu_int;
mod alu_uniform;
mod collective;
mod control;
mod dalu;
mod decode;
mod decode_ext;
mod exec;
mod float32;
mod fpconv;
mod jit;
mod launch;
mod machine;
mod mem_ops;
pub mod memory;
mod ops;
pub mod profile;
mod program;
mod regs;
mod threaded;
pub mod timing;
mod trap;
mod xu;

pub use jit::JitStats;
pub use launch::{
    abi, Arg, FastPaths, Gpu, LaunchConfig, Stats, DEFAULT_MEMORY_LIMIT, DEFAULT_STEP_LIMIT, MAX_SHARED_PER_CTA, RETURN_SENTINEL,
};
pub use mem_ops::{LOCAL_WINDOW, SHARED_WINDOW};
pub use profile::{InstProfile, MemCount, Profile, TimelineEvent};
pub use program::{FunctionInfo, Program, CODE_BASE};
pub use trap::{LoadError, Space, Trap, TrapKind};
