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
/// over four elements. `next` draws the scattered ones. Addresses wrap
/// around the 64-bit space (an origin near its top is a case of its own).
pub(crate) fn lane_addresses(kind: usize, origin: u64, n: u64, two: u64, next: &mut impl FnMut() -> u64) -> [u64; crate::regs::LANES] {
    use std::num::Wrapping as W;
    let (n, two) = (W(n), W(two));
    std::array::from_fn(|l| {
        let l = W(l as u64);
        let mut next = || W(next());
        let offset = match kind {
            0 => l * n,
            1 => W(0),
            2 => (l % W(16)) * W(4) + l / W(16) * W(512),
            3 => (next() % W(64)) * n,
            4 => (next() % W(4096)) * n,
            5 => W(1) + l * n,
            6 => l / W(16) * two,
            7 => (l % W(16)) * n,
            8 => (l % W(16)) * n * (l / W(16)) + l / W(16) * two,
            9 => l * W(3) + next() % W(3),
            _ => (next() % W(4)) * n,
        };
        (W(origin) + offset).0
    })
}
