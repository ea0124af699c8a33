//! The parts of the `ursa` tool that other crates reuse: the Cranelift filetest
//! runner (`ursa test`), which runs every `; run:` line on the simulator and
//! checks it against cranelift-interpreter.
//!
//! This crate sits above the compiler library (`ursa-backend`), which depends on
//! neither the simulator, the interpreter, filecheck nor clap.

pub mod cli_run;
pub mod clif_limits;
pub mod filetest;
mod filetest_calls;
pub mod fuzz_props;
pub mod fuzzgen;
pub mod input;
