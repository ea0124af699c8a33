//! Reconvergence: convergence regions planned on CLIF, barrier registers, and their instructions in the code.

pub mod alloc_bregs;
pub mod insert_breg_saves;
pub mod insert_reconvergence;
pub mod opt_idle_regions;
pub mod plan;
pub mod plan_reconvergence;
