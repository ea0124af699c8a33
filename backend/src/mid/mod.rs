//! Passes on Cranelift IR before instruction selection, and the analyses they share.

pub mod divergence;
pub mod legalize_atomics;
pub mod legalize_div;
pub mod legalize_i128;
pub mod legalize_memory;
