//! Constructors for `isle/lower/memory.isle`.

#[allow(unused_imports)]
use crate::lower::Lower;

impl Lower<'_> {}
