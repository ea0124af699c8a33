//! Machine state: warps with per-lane PCs and statuses, the active group,
//! convergence barriers, and CTAs with shared memory and CTA barriers
//! (docs/isa-extensions.md, section 3); the shape of a warp's lane
//! addresses that the memory instructions and the SM model's trace take
//! without per-lane work ([`Halves`]).

use crate::regs::{Regs, LANES};
use crate::timing::{HazardState, WarpClock};

/// Iterates over the set bits of a lane mask.
#[inline(always)]
pub fn lanes(mut m: u32) -> impl Iterator<Item = usize> {
    std::iter::from_fn(move || {
        if m == 0 {
            None
        } else {
            let l = m.trailing_zeros() as usize;
            m &= m - 1;
            Some(l)
        }
    })
}

/// Calls `f` with each set bit of a lane mask, in increasing order; a
/// full mask as a plain loop over the lanes (which the compiler unrolls).
#[inline(always)]
pub fn each_lane(m: u32, f: impl FnMut(usize)) {
    if m == u32::MAX {
        (0..LANES).for_each(f);
    } else {
        lanes(m).for_each(f);
    }
}

/// One warp: registers, per-lane control state and timing.
pub struct Warp {
    pub regs: Regs,
    /// Index of the warp in its CTA.
    pub id: u32,
    /// Per-lane PCs. Lanes of the active group are at `group_pc` even if
    /// their entry here is stale (it is written back on regrouping).
    pub pc: [u64; LANES],
    /// Lanes that exist (the last warp of a CTA may be partial).
    pub exists: u32,
    pub ready: u32,
    pub exited: u32,
    /// Lanes waiting at `BSYNC`, and the barrier each one waits for.
    pub wait_bsync: u32,
    /// Lanes waiting at `BAR.SYNC`.
    pub wait_bar: u32,
    pub wait_id: [u8; LANES],
    /// Convergence-barrier registers B0–B15: each lane's own view
    /// (`b[x][l]`, the member mask of the barrier instance lane `l` is in,
    /// isa-extensions 3.4), and the target of the last BSSY of each.
    pub b: [[u32; LANES]; 16],
    pub bssy_target: [u64; 16],
    /// The active group: READY lanes at the lowest PC.
    pub group: u32,
    pub group_pc: u64,
    /// Lowest PC of the READY lanes outside the group (u64::MAX if none).
    pub others_min: u64,
    /// The group must be recomputed before the next issue.
    pub dirty: bool,
    pub clock: WarpClock,
    pub hazards: Option<Box<HazardState>>,
    /// Local memory of the 32 lanes, `local_size` bytes each, lane-major;
    /// empty until the warp's first local access (most warps never make
    /// one, and a kernel may declare far more than it touches).
    pub local: Vec<u8>,
    pub local_size: u32,
}

impl Warp {
    /// A warp about to start at `entry`, on the fresh register file `regs`.
    pub fn with_regs(regs: Regs, id: u32, exists: u32, entry: u64, local_size: u32, strict: bool) -> Warp {
        Warp {
            regs,
            id,
            pc: [entry; LANES],
            exists,
            ready: exists,
            exited: !exists,
            wait_bsync: 0,
            wait_bar: 0,
            wait_id: [0; LANES],
            b: [[0; LANES]; 16],
            bssy_target: [0; 16],
            group: 0,
            group_pc: entry,
            others_min: u64::MAX,
            dirty: true,
            clock: WarpClock::default(),
            hazards: strict.then(Box::default),
            local: Vec::new(),
            local_size,
        }
    }

    /// All lanes have exited.
    #[inline]
    pub fn finished(&self) -> bool {
        self.exited == u32::MAX
    }

    /// Writes the group's PC back into the per-lane array.
    #[inline]
    pub fn sync_pcs(&mut self) {
        if !self.dirty {
            for l in lanes(self.group) {
                self.pc[l] = self.group_pc;
            }
        }
    }

    /// Recomputes the active group by the lowest-PC rule; false if no lane
    /// is READY.
    pub fn regroup(&mut self) -> bool {
        self.sync_pcs();
        self.dirty = true;
        if self.ready == 0 {
            self.group = 0;
            return false;
        }
        let mut min = u64::MAX;
        for l in lanes(self.ready) {
            min = min.min(self.pc[l]);
        }
        let mut group = 0u32;
        let mut others = u64::MAX;
        for l in lanes(self.ready) {
            if self.pc[l] == min {
                group |= 1 << l;
            } else {
                others = others.min(self.pc[l]);
            }
        }
        self.group = group;
        self.group_pc = min;
        self.others_min = others;
        self.dirty = false;
        true
    }

    /// Moves the group to `pc`, keeping it if it stays the lowest.
    #[inline(always)]
    pub fn advance(&mut self, pc: u64) {
        self.group_pc = pc;
        if pc >= self.others_min {
            self.regroup();
        }
    }

    /// Sets the PC of some lanes individually (divergence) and regroups.
    pub fn diverge(&mut self, lanes_to: impl Iterator<Item = (usize, u64)>, rest: u32, rest_pc: u64) {
        self.sync_pcs();
        for l in lanes(rest) {
            self.pc[l] = rest_pc;
        }
        for (l, pc) in lanes_to {
            self.pc[l] = pc;
        }
        self.dirty = true;
    }

    /// Releases convergence-barrier instances whose members have all
    /// arrived or exited (isa-extensions 3.4): the lanes waiting on `Bx`
    /// with one view `M` are released when every lane of `M` waits on `Bx`
    /// with the view `M` or has exited. Returns true if lanes were released.
    pub fn update_convergence(&mut self) -> bool {
        let mut released = false;
        if self.wait_bsync == 0 {
            return false;
        }
        let mut on = [0u32; 16];
        for l in lanes(self.wait_bsync) {
            on[self.wait_id[l] as usize & 15] |= 1 << l;
        }
        for (x, &waiting) in on.iter().enumerate() {
            let mut pending = waiting;
            while pending != 0 {
                let view = self.b[x][pending.trailing_zeros() as usize];
                let same = lanes(pending).filter(|&l| self.b[x][l] == view).fold(0u32, |m, l| m | 1 << l);
                pending &= !same;
                if view & !(same | self.exited) == 0 {
                    self.wait_bsync &= !same;
                    self.ready |= same;
                    released = true;
                }
            }
        }
        if released {
            self.sync_pcs();
            self.dirty = true;
        }
        released
    }
}

/// One of the 16 CTA barriers.
#[derive(Clone, Copy, Debug, Default)]
pub struct CtaBarrier {
    pub arrived: u32,
    pub count: u32,
    /// Releases so far: the instance a new arrival joins (the SM timing
    /// model matches arrivals by it, sm_trace.rs).
    pub gen: u32,
}

/// A CTA being executed.
pub struct Cta {
    pub id: [u32; 3],
    pub warps: Vec<Warp>,
    pub shared: Vec<u8>,
    pub bars: [CtaBarrier; 16],
}

impl Cta {
    /// Threads that have not exited.
    pub fn live_threads(&self) -> u32 {
        self.warps.iter().map(|w| (w.exists & !w.exited).count_ones()).sum()
    }

    /// Releases CTA barriers that are complete (isa-extensions 3.6).
    pub fn update_barriers(&mut self) {
        let live = self.live_threads();
        for b in 0..16 {
            let bar = self.bars[b];
            let expected = if bar.count == 0 { live } else { bar.count };
            if bar.arrived > 0 && bar.arrived >= expected {
                for w in self.warps.iter_mut() {
                    let mut rel = 0u32;
                    for l in lanes(w.wait_bar) {
                        if w.wait_id[l] as usize == b {
                            rel |= 1 << l;
                        }
                    }
                    if rel != 0 {
                        w.wait_bar &= !rel;
                        w.ready |= rel;
                        w.sync_pcs();
                        w.dirty = true;
                    }
                }
                self.bars[b].arrived = 0;
                self.bars[b].gen = self.bars[b].gen.wrapping_add(1);
            }
        }
    }
}

/// Lanes in a half-warp.
pub(crate) const HALF: usize = LANES / 2;

/// Whether a half-warp's address words `l` (low) and `u` (high), `HALF`
/// each, differ from the shape `Halves::of_pair` checks: lane j's low word
/// `l[0] + j * step`, its high word `u[0]` (`step`: 0 or `n`, which the
/// caller checked). On x86-64, four lanes at a time in SSE2 registers, the
/// differences OR-ed in a register (no array of them written and read
/// back: a vector read of smaller stores stalls).
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn off_shape(l: &[u32], u: &[u32], n: u32, step: u32) -> bool {
    use std::arch::x86_64::*;
    assert!(l.len() == HALF && u.len() == HALF);
    // SAFETY: SSE2 is part of the x86-64 baseline; each unaligned 16-byte
    // load reads the four `u32`s at `4 * c..4 * c + 4`, c < HALF / 4, of a
    // slice of `HALF` of them (asserted above).
    unsafe {
        // Lanes 0-3's steps from lane 0: `0, step, 2 * step, 3 * step` as
        // `0, n, 2n, 3n` (a constant) masked by whether `step` is not 0
        // (the caller found it 0 or `n`), not four scalar products.
        let on = _mm_set1_epi32(-((step != 0) as i32));
        let ramp = _mm_set_epi32(3 * n as i32, 2 * n as i32, n as i32, 0);
        let mut want = _mm_add_epi32(_mm_set1_epi32(l[0] as i32), _mm_and_si128(ramp, on));
        let four = _mm_and_si128(_mm_set1_epi32(4 * n as i32), on);
        let high = _mm_set1_epi32(u[0] as i32);
        let mut acc = _mm_setzero_si128();
        for c in 0..HALF / 4 {
            let lw = _mm_loadu_si128(l.as_ptr().add(4 * c) as *const __m128i);
            let uw = _mm_loadu_si128(u.as_ptr().add(4 * c) as *const __m128i);
            acc = _mm_or_si128(acc, _mm_or_si128(_mm_xor_si128(lw, want), _mm_xor_si128(uw, high)));
            want = _mm_add_epi32(want, four);
        }
        _mm_movemask_epi8(_mm_cmpeq_epi32(acc, _mm_setzero_si128())) != 0xffff
    }
}

/// [`off_shape`] elsewhere: the differences OR-ed lane by lane.
#[cfg(not(target_arch = "x86_64"))]
#[inline(always)]
fn off_shape(l: &[u32], u: &[u32], _n: u32, step: u32) -> bool {
    (0..HALF).fold(0, |a, j| a | (l[j] ^ l[0].wrapping_add(j as u32 * step)) | (u[j] ^ u[0])) != 0
}

/// The shape of a full warp's access of `n` bytes per lane when it is a
/// simple one: per half-warp (lanes 0–15 and 16–31), its first lane's
/// address and the step from lane to lane, either 0 (every lane of the
/// half at one address: a broadcast) or `n` (contiguous addresses). The
/// coalesced access (the whole warp contiguous) is the most common; the
/// accesses of a 16-wide CTA's warp (two rows: two broadcasts, or one row
/// of a matrix read by both halves) are others. Each half's bytes are then
/// one range: their bounds, their words and (for the SM model's trace)
/// their sectors need no per-lane work.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Halves {
    /// Address registers' values (before the instruction's offset).
    pub first: [u64; 2],
    pub step: [u64; 2],
}

impl Halves {
    /// The shape of the addresses `base` of the executing lanes `e`, `n`
    /// bytes each, if a full warp's and simple. Three lanes per half are
    /// compared first, so that most other accesses are turned down at once.
    #[inline(always)]
    pub(crate) fn of(base: &[u64; LANES], n: u32, e: u32) -> Option<Halves> {
        if e != u32::MAX {
            return None;
        }
        let n = n as u64;
        let mut h = Halves { first: [base[0], base[HALF]], step: [0; 2] };
        for k in 0..2 {
            let lanes = &base[k * HALF..][..HALF];
            let step = lanes[1].wrapping_sub(lanes[0]);
            if (step != 0 && step != n) || lanes[HALF - 1].wrapping_sub(lanes[0]) != (HALF as u64 - 1) * step {
                return None;
            }
            h.step[k] = step;
        }
        let mut diff = 0;
        for k in 0..2 {
            let (first, step) = (h.first[k], h.step[k]);
            for (j, &b) in base[k * HALF..][..HALF].iter().enumerate() {
                diff |= b ^ first.wrapping_add(j as u64 * step);
            }
        }
        (diff == 0).then_some(h)
    }

    /// [`Halves::of`] from the rows of a register pair `lo`, `hi` (the low
    /// and high words of the 64-bit addresses), without making the 64-bit
    /// lanes: each half's high words one value, its low words its first
    /// lane's plus `j` steps, with no carry into the high word (a half
    /// whose low words carry is None here, and a shape for `of`: a caller
    /// that finds None makes the lanes and asks it). The words' differences
    /// from the shape are OR-ed (`off_shape`: vector code on x86-64, where
    /// a comparison per lane is a chain of branches).
    #[inline(always)]
    pub(crate) fn of_pair(lo: &[u32; LANES], hi: &[u32; LANES], n: u32, e: u32) -> Option<Halves> {
        if e != u32::MAX || !n.is_power_of_two() {
            return None;
        }
        let mut h = Halves { first: [0; 2], step: [0; 2] };
        for k in 0..2 {
            let (l, u) = (&lo[k * HALF..][..HALF], &hi[k * HALF..][..HALF]);
            let step = l[1].wrapping_sub(l[0]);
            // (Every lane's words checked by `off_shape` below.)
            // (0 or `n`, a power of two: no bit but `n`'s.)
            if step | n != n {
                return None;
            }
            // No carry out of the last lane's low word (so none before it).
            l[0].checked_add((HALF as u32 - 1) * step)?;
            if off_shape(l, u, n, step) {
                return None;
            }
            h.first[k] = (u[0] as u64) << 32 | l[0] as u64;
            h.step[k] = step as u64;
        }
        Some(h)
    }

    /// Bytes from half `k`'s first lane's address to the end of its last
    /// lane's access.
    #[inline(always)]
    pub(crate) fn bytes(&self, k: usize, n: u32) -> u64 {
        (HALF as u64 - 1) * self.step[k] + n as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// [`Halves::of_pair`] on the rows of a register pair gives what
    /// [`Halves::of`] gives on their 64-bit lanes, but None for a half whose
    /// low words carry into the high word: coalesced, broadcast and
    /// two-row shapes, near a 2^32 boundary of the low words and not, full
    /// warps and partial ones.
    #[test]
    fn the_shape_of_a_register_pair_is_that_of_its_lanes() {
        let mut next = crate::test_rng::xorshift64(0x9e37_79b9_7f4a_7c15);
        let mut shapes = [0; 2];
        for case in 0..6000 {
            let n = [1, 4, 8, 16][case % 4];
            let e = if case % 5 == 0 { u32::MAX >> 1 } else { u32::MAX };
            let near = if case % 3 == 0 { 0x7f00_ffff_ff00 } else { 0x7f00_0000_0000 };
            let origin = near + (next() % 64) * n as u64;
            let two = (next() % 64).wrapping_sub(32).wrapping_mul(n as u64);
            // Coalesced, broadcast, a broadcast per half, one row read by
            // both halves, a broadcast and a row, scattered over four.
            let kind = [0, 1, 6, 7, 8, 10][case / 4 % 6];
            let base = crate::test_rng::lane_addresses(kind, origin, n as u64, two, &mut next);
            let (lo, hi) = (base.map(|b| b as u32), base.map(|b| (b >> 32) as u32));
            let carries = (0..2).any(|k| hi[k * HALF] != hi[k * HALF + HALF - 1]);
            match (Halves::of_pair(&lo, &hi, n, e), Halves::of(&base, n, e)) {
                (None, Some(h)) => {
                    assert!(carries, "case {case}: {h:x?} of {base:x?} n={n}");
                    shapes[1] += 1;
                }
                (p, h) => {
                    assert_eq!(p, h, "case {case}: {base:x?} n={n}");
                    shapes[0] += p.is_some() as usize;
                }
            }
        }
        // Both outcomes occur.
        assert!(shapes[0] > 1000 && shapes[1] > 50, "{shapes:?}");
    }
}
