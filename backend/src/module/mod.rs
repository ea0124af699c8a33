//! Facts about a whole module that the compilation of each function reads.

pub mod call_graph;
pub mod call_stack;
pub mod shared_mem;
