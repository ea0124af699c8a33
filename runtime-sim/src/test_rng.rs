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

/// The lane addresses of a warp's access of `n`-byte elements from `origin`,
/// of shape `kind`: 0 coalesced, 1 broadcast, 2 two rows, 3 scattered near,
/// 4 scattered far, 5 contiguous but unaligned, 6 a broadcast per half-warp
/// (the second `two` bytes from the first), 7 one row read by both halves,
/// 8 a broadcast and a row, 9 unaligned and crossing elements, 10 scattered
/// over four elements. `next` draws the scattered ones.
pub(crate) fn lane_addresses(kind: usize, origin: u64, n: u64, two: u64, next: &mut impl FnMut() -> u64) -> [u64; crate::regs::LANES] {
    std::array::from_fn(|l| {
        let l = l as u64;
        match kind {
            0 => origin + l * n,
            1 => origin,
            2 => origin + (l % 16) * 4 + l / 16 * 512,
            3 => origin + (next() % 64) * n,
            4 => origin + (next() % 4096) * n,
            5 => origin + 1 + l * n,
            6 => origin + l / 16 * two,
            7 => origin + (l % 16) * n,
            8 => origin + (l % 16) * n * (l / 16) + l / 16 * two,
            9 => origin + l * 3 + next() % 3,
            _ => origin + (next() % 4) * n,
        }
    })
}
