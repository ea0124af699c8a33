//! Register files of one warp, stored structure-of-arrays: one row of 32
//! lane values per GPR, one lane mask per predicate.
//!
//! Row 255 (RZ) is never written and reads as zero; writes to RZ go to the
//! dump rows 256/257 that nothing reads. The uniform file works the same way
//! with URZ = 63 and dumps 64/65. Predicates are lane masks (`p[i]` bit l =
//! Pi of lane l); PT (7) is all ones and writes to it land in slot 8.
//! Uniform predicates hold 0 or 1.

use crate::memory::ConstBanks;
use crate::ops::{Dst, Dst64, PDst, PIn, Src, Src64};
use crate::trap::TrapKind;

pub const LANES: usize = 32;
pub const ZERO_ROW: u16 = 255;
pub const DUMP_ROW: u16 = 256;
pub const DUMP_ROW_HI: u16 = 257;
pub const GPR_ROWS: usize = 258;
pub const UR_ZERO: u8 = 63;
pub const UR_DUMP: u8 = 64;
pub const UR_DUMP_HI: u8 = 65;
pub const UR_SLOTS: usize = 66;
pub const PT: u8 = 7;
pub const P_DUMP: u8 = 8;

/// `LANE_BIT[l]` is `1 << l`. Lane masks built or tested with an AND
/// against this table vectorise (the x86-64 baseline has no per-lane shift).
pub const LANE_BIT: [u32; LANES] = {
    let mut t = [0u32; LANES];
    let mut l = 0;
    while l < LANES {
        t[l] = 1 << l;
        l += 1;
    }
    t
};

/// Whether lane `l` is set in `mask`.
#[inline(always)]
pub fn bit_of(mask: u32, l: usize) -> bool {
    mask & LANE_BIT[l] != 0
}

/// Lane `l`'s bit of a mask, set if `b`.
#[inline(always)]
pub fn bit_if(b: bool, l: usize) -> u32 {
    0u32.wrapping_sub(b as u32) & LANE_BIT[l]
}

/// The lane mask of `N` lanes (at most 32) that are each 0 or all ones.
/// The lanes are kept in memory (`black_box`) before they are combined:
/// otherwise the compiler merges the two steps into per-lane shifts that
/// it does not vectorise, while this way the comparison that produced them
/// is a few vector instructions. On x86-64 they are then combined four at
/// a time by their sign bits (SSE2 `movmskps`), elsewhere by an AND with
/// their lane bits and an OR reduction (also vector code).
#[inline(always)]
pub fn pack_lanes<const N: usize>(mut m: [u32; N]) -> u32 {
    debug_assert!(N <= 32 && m.iter().all(|&x| x == 0 || x == u32::MAX));
    std::hint::black_box(&mut m);
    #[cfg(target_arch = "x86_64")]
    if N.is_multiple_of(4) {
        use std::arch::x86_64::*;
        let mut bits = 0u32;
        for c in 0..N / 4 {
            // SAFETY: SSE2 is part of the x86-64 baseline; the unaligned
            // 16-byte load reads `m[4 * c..4 * c + 4]`, inside the array
            // (4 * c + 4 <= N).
            let four = unsafe { _mm_movemask_ps(_mm_castsi128_ps(_mm_loadu_si128(m.as_ptr().add(4 * c) as *const __m128i))) };
            bits |= (four as u32) << (4 * c);
        }
        return bits;
    }
    rows::<u32, N>(|l| m[l] & LANE_BIT[l]).iter().fold(0, |a, &x| a | x)
}

/// `N` values computed lane by lane: a plain loop, always inlined, which
/// the compiler vectorises (`std::array::from_fn` was not always inlined).
#[inline(always)]
pub fn rows<T: Copy + Default, const N: usize>(mut f: impl FnMut(usize) -> T) -> [T; N] {
    let mut o = [T::default(); N];
    for (l, v) in o.iter_mut().enumerate() {
        *v = f(l);
    }
    o
}

/// The "all lanes" mask of an `N`-wide execution (32 lanes or 1 uniform value).
#[inline(always)]
pub const fn all<const N: usize>() -> u32 {
    if N >= 32 {
        u32::MAX
    } else {
        (1u32 << N) - 1
    }
}

/// The register state of one warp.
#[derive(Clone)]
pub struct Regs {
    pub r: Box<[[u32; LANES]]>,
    pub p: [u32; 9],
    pub ur: [u32; UR_SLOTS],
    pub up: [u32; 9],
    /// The lane a one-lane (`N == 1`) execution of a warp instruction works
    /// on: its GPR reads and writes use column `lane`, its predicates bit
    /// `lane`. Zero for full-warp and uniform executions.
    pub lane: usize,
}

impl Default for Regs {
    fn default() -> Self {
        Self::new()
    }
}

impl Regs {
    pub fn new() -> Regs {
        Regs::with_rows(vec![[0u32; LANES]; GPR_ROWS].into_boxed_slice())
    }

    /// A fresh register file on the GPR rows of an earlier one (`r`, of
    /// [`GPR_ROWS`] rows), of which only the first `dirty` can be other
    /// than zero: those are cleared, not the whole file (a new file of 258
    /// rows is 33 KiB to clear per warp).
    pub fn reusing(mut r: Box<[[u32; LANES]]>, dirty: usize) -> Regs {
        assert_eq!(r.len(), GPR_ROWS, "the rows of a register file");
        r[..dirty.min(GPR_ROWS)].fill([0; LANES]);
        Regs::with_rows(r)
    }

    fn with_rows(r: Box<[[u32; LANES]]>) -> Regs {
        let mut p = [0u32; 9];
        p[PT as usize] = u32::MAX;
        let mut up = [0u32; 9];
        up[PT as usize] = 1;
        Regs { r, p, ur: [0; UR_SLOTS], up, lane: 0 }
    }

    /// First column of an `N`-lane access: 0 for a full warp, `lane` otherwise.
    #[inline(always)]
    fn base<const N: usize>(&self) -> usize {
        if N >= LANES {
            0
        } else {
            self.lane
        }
    }

    /// Reads a 32-bit source for `N` lanes.
    #[inline(always)]
    pub fn get<const N: usize>(&self, s: Src, cb: &ConstBanks) -> Result<[u32; N], TrapKind> {
        Ok(match s {
            Src::R(r) => {
                let b = self.base::<N>();
                let mut o = [0u32; N];
                o.copy_from_slice(&self.r[r as usize][b..b + N]);
                o
            }
            Src::U(u) => [self.ur[u as usize]; N],
            Src::Imm(v) => [v; N],
            Src::C(c) => [cb.u32(c.bank, c.off)?; N],
        })
    }

    /// Reads a 64-bit source for `N` lanes.
    #[inline(always)]
    pub fn get64<const N: usize>(&self, s: Src64, cb: &ConstBanks) -> Result<[u64; N], TrapKind> {
        Ok(match s {
            Src64::R(lo, hi) => {
                let b = self.base::<N>();
                let (l, h) = (&self.r[lo as usize][b..b + N], &self.r[hi as usize][b..b + N]);
                let mut o = [0u64; N];
                for i in 0..N {
                    o[i] = l[i] as u64 | (h[i] as u64) << 32;
                }
                o
            }
            Src64::U(lo, hi) => [self.ur[lo as usize] as u64 | (self.ur[hi as usize] as u64) << 32; N],
            Src64::Imm(v) => [v; N],
            Src64::C(c) => [cb.u64(c.bank, c.off)?; N],
            Src64::C32(c) => [cb.u32(c.bank, c.off)? as u64; N],
        })
    }

    /// The 32 lanes' 64-bit values of the register pair `lo`, `hi`: what
    /// [`Regs::get64`] gives for `Src64::R`, not through a `Result` (for a
    /// memory instruction's address: the array returned through the
    /// `Result` is copied once more, a `memcpy` of 256 bytes per load).
    #[inline(always)]
    pub fn pair64(&self, lo: u16, hi: u16) -> [u64; LANES] {
        let (l, h) = (&self.r[lo as usize], &self.r[hi as usize]);
        rows(|i| l[i] as u64 | (h[i] as u64) << 32)
    }

    /// Writes the lanes of `mask`.
    #[inline(always)]
    pub fn put<const N: usize>(&mut self, d: Dst, v: &[u32; N], mask: u32) {
        match d {
            Dst::R(r) => {
                let b = self.base::<N>();
                let row = &mut self.r[r as usize][b..b + N];
                if mask == all::<N>() {
                    row.copy_from_slice(v);
                } else {
                    for i in 0..N {
                        if mask >> i & 1 != 0 {
                            row[i] = v[i];
                        }
                    }
                }
            }
            Dst::U(u) => {
                if mask & 1 != 0 {
                    self.ur[u as usize] = v[0];
                }
            }
        }
    }

    #[inline(always)]
    pub fn put64<const N: usize>(&mut self, d: Dst64, v: &[u64; N], mask: u32) {
        let mut lo = [0u32; N];
        let mut hi = [0u32; N];
        for i in 0..N {
            lo[i] = v[i] as u32;
            hi[i] = (v[i] >> 32) as u32;
        }
        match d {
            Dst64::R(l, h) => {
                self.put::<N>(Dst::R(l), &lo, mask);
                self.put::<N>(Dst::R(h), &hi, mask);
            }
            Dst64::U(l, h) => {
                self.put::<N>(Dst::U(l), &lo, mask);
                self.put::<N>(Dst::U(h), &hi, mask);
            }
        }
    }

    /// A predicate input as a lane mask (bit 0 for a uniform execution).
    #[inline(always)]
    pub fn pin<const N: usize>(&self, p: PIn) -> u32 {
        let v = if p.uniform {
            if self.up[p.idx as usize] & 1 != 0 {
                all::<N>()
            } else {
                0
            }
        } else {
            (self.p[p.idx as usize] >> self.base::<N>()) & all::<N>()
        };
        if p.not {
            !v & all::<N>()
        } else {
            v
        }
    }

    /// Writes a predicate for the lanes of `mask`.
    #[inline(always)]
    pub fn pout<const N: usize>(&mut self, d: PDst, v: u32, mask: u32) {
        if d.uniform {
            if mask & 1 != 0 {
                self.up[d.idx as usize] = v & 1;
            }
        } else {
            let b = self.base::<N>();
            let mask = mask & all::<N>();
            let p = &mut self.p[d.idx as usize];
            *p = (*p & !(mask << b)) | ((v & mask) << b);
        }
    }

    /// Packs P0–P6 of lane `l` (or UP0–UP6) with bit 7 = PT into a byte.
    #[inline(always)]
    pub fn pack_preds(&self, uniform: bool, l: usize) -> u32 {
        let mut b = 0x80u32;
        for i in 0..7 {
            let bit = if uniform { self.up[i] & 1 } else { self.p[i] >> (self.lane + l) & 1 };
            b |= bit << i;
        }
        b
    }
}
