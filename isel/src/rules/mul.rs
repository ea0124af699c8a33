//! Constructors for `isle/lower/mul.isle`.

#[allow(unused_imports)]
use crate::lower::Lower;

impl Lower<'_> {}
