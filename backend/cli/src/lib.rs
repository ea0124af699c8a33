//! The parts of the `ursa` tool that other crates reuse: the Cranelift filetest
//! runner (`ursa test`), which runs every `; run:` line on the simulator and
//! checks it against cranelift-interpreter.
//!
//! This crate sits above the compiler library (`ursa-backend`), which depends on
//! neither the simulator, the interpreter, filecheck nor clap.

pub mod argsfile;
pub mod cli_run;
pub mod clif_limits;
pub mod filetest;
mod filetest_calls;
pub mod fuzz_props;
pub mod fuzzgen;
pub mod input;
pub mod kernelgen;
pub mod output;

/// The compiler options every compilation of the tool starts from: what the
/// environment asks for. `URSA_REGALLOC2` (set to anything but `0`) sends every
/// function through regalloc2 ([`ursa_backend::Options::regalloc2`]);
/// `URSA_TRACE_ALLOCATOR` names on stderr each function left to regalloc2 and
/// why; `URSA_OPT_LEVEL` (`none` or `speed`) sets the optimization level
/// ([`ursa_backend::Options::opt_level`]; an `--opt-level` flag wins; any
/// other value leaves the default, `speed`). The compiler library itself reads
/// no environment.
pub fn env_options() -> ursa_backend::Options {
    ursa_backend::Options {
        opt_level: std::env::var("URSA_OPT_LEVEL").ok().and_then(|v| ursa_backend::OptLevel::from_name(&v)).unwrap_or_default(),
        regalloc2: std::env::var_os("URSA_REGALLOC2").is_some_and(|v| v != "0"),
        trace_allocator: std::env::var_os("URSA_TRACE_ALLOCATOR").is_some(),
        ..Default::default()
    }
}
