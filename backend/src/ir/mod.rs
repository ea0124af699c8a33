//! The intermediate representations the passes share, and the analyses on them
//! that more than one pass reads.

pub mod cfg;
pub mod code;
