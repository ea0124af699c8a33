//! Constructors for `isle/lower/bitops.isle`.

#[allow(unused_imports)]
use crate::lower::Lower;

impl Lower<'_> {}
