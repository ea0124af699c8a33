//! ursa-sim: a SIMT simulator for Ursa ELF programs.
//!
//! A [`Program`] is loaded from ELF bytes: functions are laid out in one code
//! space, relocated, and every instruction is decoded once (with
//! `ursa_emit::Inst::decode`) into a compact executable op. A [`Gpu`] owns
//! global memory and launches kernels over a grid of CTAs; each warp executes
//! its 32 lanes over a structure-of-arrays register file. Faults are
//! [`Trap`] reports, never panics.
//!
//! Module map, each module using only those listed before it: pre-decoded
//! ops (`ops`), timing and hazards (`timing`), faults (`trap`), memory
//! (`memory`), machine state (`regs`, `machine`), the interface of the
//! semantics (`site`), decode-to-ops and the loaded program (`decode`,
//! `decode_ext`, `program`, which keeps its translations in `jit::cache`),
//! semantics by family (`fpconv`, `alu_int`, `dalu`, `float32`, `xu`,
//! `alu_uniform`, `collective`, `control`, `mem_ops`) and the dispatch of
//! one instruction to them (`dispatch`), full-warp threaded code
//! (`threaded`), translation to host code (`jit`), measurements
//! (`profile`), the interpreter loop (`exec`), the raw host API (`launch`:
//! [`Gpu`], [`Program`], [`Arg`]) and the typed host API on it (`host`:
//! [`host::Device`], [`host::DeviceBuffer`], [`host::Kernel`]).
//! The SM timing model (docs/timing.md): its machine description
//! (`machine_desc`), the occupancy calculator (`occupancy`), the traces the
//! interpreter records for it (`sm_trace`) and the model (`sm_model`).
//! The workspace's import-circle test (`ursa_tests::imports`) checks that
//! no module imports one that imports it back.

// `Trap` is a complete fault report by design; returning it by value is the API.
#![allow(clippy::result_large_err)]

mod alu_int;
mod alu_uniform;
mod collective;
mod control;
mod dalu;
mod decode;
mod decode_ext;
mod dispatch;
mod exec;
mod float32;
mod fpconv;
pub mod host;
mod jit;
mod launch;
mod machine;
pub mod machine_desc;
mod mem_ops;
pub mod memory;
pub mod occupancy;
mod ops;
pub mod profile;
mod program;
mod regs;
mod site;
mod sm_model;
mod sm_trace;
#[cfg(test)]
mod test_rng;
mod threaded;
pub mod timing;
mod trap;
mod xu;

pub use jit::cache::JitStats;
pub use launch::{
    abi, Arg, Engine, Gpu, LaunchConfig, DEFAULT_JIT_THRESHOLD, DEFAULT_MEMORY_LIMIT, DEFAULT_STEP_LIMIT, MAX_SHARED_PER_CTA,
};
pub use memory::{LOCAL_WINDOW, SHARED_WINDOW};
pub use profile::{InstProfile, MemCount, Profile, SmStats, StallReason, Stats, TimelineEvent, STALL_REASONS};
pub use program::{FunctionInfo, Program, CODE_BASE, RETURN_SENTINEL};
pub use trap::{LoadError, Space, Trap, TrapKind};
