//! Register allocation: instructions split for the allocator, the two allocators, their liveness analysis, the assignment they produce, its checker, dense packing and spill-slot placement.

pub mod assign_regs_regalloc2;
pub mod assign_regs_ssa;
pub mod assignment;
pub mod check_assignment;
pub mod liveness;
pub mod lower_bundles;
pub mod pack_regs;
pub mod place_spill_slots;
