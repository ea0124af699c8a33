//! The unit tests' pseudo-random numbers: Marsaglia's xorshift64, seeded, so
//! that every run draws the same cases.

/// A generator of 64-bit numbers starting from `seed` (not zero).
pub(crate) fn xorshift64(mut seed: u64) -> impl FnMut() -> u64 {
    move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    }
}
