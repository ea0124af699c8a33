//! The Rust side of the rule families: machine-instruction constructors
//! (inherent methods of [`crate::lower::Lower`], called by name from the
//! ISLE terms of `isle/lower/<family>.isle`).

pub mod atomic;
pub mod bitops;
pub mod bits;
pub mod control;
pub mod div;
pub mod fdiv;
pub mod float;
pub mod intrinsic;
pub mod memory;
pub mod minmax;
pub mod mul;
pub mod ops;
pub mod overflow;
pub mod preds;
pub mod shifts;
