//! Constructors for `isle/lower/shifts.isle`.

#[allow(unused_imports)]
use crate::lower::Lower;

impl Lower<'_> {}
