//! Passes on the virtual-register code (VCode) between instruction selection and register allocation.

pub mod opt_fold_cmem;
pub mod opt_fold_imm;
pub mod opt_fold_zero;
pub mod opt_hoist_invariants;
pub mod opt_if_convert;
pub mod opt_instr_sched_prepass;
pub mod opt_narrow_pairs;
pub mod opt_sink_block_args;
pub mod opt_uniform;
