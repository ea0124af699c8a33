//! End-to-end tests of the Ursa toolchain live in `tests/` of this crate; this library holds shared test helpers.

pub mod imports;
pub mod kernels;
