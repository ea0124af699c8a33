//! What the SM timing model replays: per warp, the instructions the
//! interpreter issued in order, each with its executing lanes and what the
//! model needs of it — the 32-byte sectors of a global or local access, the
//! wavefronts (bank-conflict replays) of a shared access, the barrier
//! instance a BAR joins. Recorded by the interpreter (`exec.rs`) as a CTA
//! runs; docs/timing.md, "How it runs".

use crate::machine::{each_lane, lanes, Halves};
use crate::memory::{LOCAL_WINDOW, SHARED_WINDOW};
use crate::ops::{AddrSpace, Op};
use crate::regs::LANES;

/// The memory part of a [`Rec`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Access {
    /// Not a memory access, or one with no executing lane.
    None,
    /// Global or local memory: `count` sector indices at `start` in
    /// [`WarpTrace::sectors`].
    Sectors { start: u32, count: u16, store: bool, atomic: bool },
    /// Global memory, a load's or store's sectors as at most two ranges
    /// kept in the record itself (none in [`WarpTrace::sectors`]):
    /// `count[0]` sectors from `first`, then `count[1]` (maybe none) from
    /// `first + gap`, which is past the first range and not next to it
    /// (sorted and distinct, like a list). A full warp's access whose
    /// half-warps are each one range of bytes (`machine::Halves`).
    Ranges { first: u64, gap: u32, count: [u8; 2], store: bool },
    /// Shared memory: the wavefronts the access needs (1 without conflicts).
    Shared { wavefronts: u16 },
    /// A CTA barrier: barrier `id`, instance `gen`; `wait`: the warp's last
    /// arrival at that instance (it waits for the release after it).
    Bar { id: u8, gen: u32, wait: bool },
}

/// A run of issued warp-instructions: `len` instructions at consecutive
/// indices from `idx`, each executed by the same lanes (straight code
/// issues one record, not one per instruction).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Rec {
    /// Index of the first instruction in the program's code.
    pub idx: u32,
    /// Lanes that executed them.
    pub lanes: u32,
    /// Instructions in the run (at least 1).
    pub len: u32,
}

/// One warp's issues: every issue in `recs` (in runs); the issues of the
/// instructions [`has_access`] accepts also have their [`Access`] in
/// `accesses`, in the same order.
#[derive(Clone, Debug, Default)]
pub(crate) struct WarpTrace {
    pub recs: Vec<Rec>,
    pub accesses: Vec<Access>,
    pub sectors: Vec<u64>,
}

impl WarpTrace {
    /// Records the access of a full warp's global load or store (`store`)
    /// of `n` bytes per lane at the addresses of the shape `h` plus `ofs`
    /// from its half-warps' two ranges, as [`Recorder::access_shaped`]
    /// does; `shift`: log2 of the sector size. False, with nothing
    /// recorded, where the ranges do not give the sectors (a lane's access
    /// larger than a sector, a half that wraps around the address space).
    #[inline(always)]
    pub(crate) fn push_shaped(&mut self, h: Halves, ofs: i32, n: u32, shift: u32, store: bool) -> bool {
        match half_sectors(self, h, ofs, n, shift, store, false) {
            Some(access) => {
                self.accesses.push(access);
                true
            }
            None => false,
        }
    }
}

/// Records an issue of the instruction `idx` by the lanes `e` (without an
/// access) in a warp's runs `recs`: it extends the last run when it
/// follows it with the same lanes ([`Recorder::record_plain`]; the
/// interpreter's full-warp loop calls it with the warp's runs at hand).
#[inline(always)]
pub(crate) fn record_in(recs: &mut Vec<Rec>, idx: usize, e: u32) {
    if let Some(r) = recs.last_mut() {
        if r.lanes == e && r.idx.wrapping_add(r.len) == idx as u32 {
            r.len += 1;
            return;
        }
    }
    recs.push(Rec { idx: idx as u32, lanes: e, len: 1 });
}

/// Whether an issue of `op` has an entry in [`WarpTrace::accesses`]:
/// loads, stores, atomics and CTA barriers.
pub(crate) fn has_access(op: &Op) -> bool {
    matches!(op, Op::Load { .. } | Op::Store { .. } | Op::Atom { .. } | Op::Bar { .. })
}

/// Base of the address range local memory is mapped to for the caches:
/// above any global address the simulator allocates.
const LOCAL_BASE: u64 = 1 << 56;

/// The recorder of one CTA.
#[derive(Clone, Debug)]
pub(crate) struct Recorder {
    pub warps: Vec<WarpTrace>,
    /// log2 of the sector size; shared banks and their width.
    pub sector_shift: u32,
    pub banks: u32,
    pub bank_bytes: u32,
    /// A number unique to the CTA over the launch (its index), for local memory.
    pub cta: u64,
    pub local_size: u32,
    /// The most records, accesses and sectors a warp of the CTAs so far
    /// had: the next CTA's traces reserve as many (so that they seldom grow).
    hint: [usize; 3],
    /// Scratch space of shared accesses: bank words, and words per bank.
    words: Vec<u64>,
    per_bank: Vec<u16>,
}

impl Recorder {
    pub fn new(sector_bytes: u32, banks: u32, bank_bytes: u32, local_size: u32) -> Recorder {
        Recorder {
            warps: Vec::new(),
            sector_shift: sector_bytes.trailing_zeros(),
            banks,
            bank_bytes,
            cta: 0,
            local_size,
            hint: [0; 3],
            words: Vec::new(),
            per_bank: vec![0; banks as usize],
        }
    }

    /// Starts the trace of CTA `cta` with `nwarps` warps.
    pub fn start(&mut self, cta: u64, nwarps: usize) {
        self.cta = cta;
        let [recs, accesses, sectors] = self.hint;
        self.warps = (0..nwarps)
            .map(|_| WarpTrace {
                recs: Vec::with_capacity(recs),
                accesses: Vec::with_capacity(accesses),
                sectors: Vec::with_capacity(sectors),
            })
            .collect();
    }

    /// The traces of the CTA that ran.
    pub fn take(&mut self) -> Vec<WarpTrace> {
        for t in &self.warps {
            let h = &mut self.hint;
            (h[0], h[1], h[2]) = (h[0].max(t.recs.len()), h[1].max(t.accesses.len()), h[2].max(t.sectors.len()));
        }
        std::mem::take(&mut self.warps)
    }

    /// Records an issue of warp `w` of an instruction without an access
    /// (not [`has_access`]): it extends the warp's last run when it
    /// follows it with the same lanes.
    #[inline(always)]
    pub fn record_plain(&mut self, w: usize, idx: usize, e: u32) {
        record_in(&mut self.warps[w].recs, idx, e);
    }

    /// Records one issue of warp `w`. `bar_gen`: the current instance of
    /// the barrier a BAR names. The access of a load, store or atomic with
    /// executing lanes is not recorded here but by the access itself
    /// ([`Recorder::access`], called by `mem_ops::exec` with the lane
    /// addresses it reads anyway); it comes next in the warp's accesses.
    pub fn record(&mut self, w: usize, idx: usize, op: &Op, e: u32, bar_gen: u32) {
        if !has_access(op) {
            return self.record_plain(w, idx, e);
        }
        let access = match *op {
            _ if e == 0 => Access::None,
            Op::Bar { id, .. } => Access::Bar { id: id & 15, gen: bar_gen, wait: true },
            _ => return self.record_plain(w, idx, e),
        };
        let t = &mut self.warps[w];
        // An earlier arrival of the same warp at the same barrier instance
        // (divergent lanes arriving in two groups) does not wait.
        if let Access::Bar { id, gen, .. } = access {
            for a in t.accesses.iter_mut().rev() {
                if let Access::Bar { id: i, gen: g, wait } = a {
                    if *i == id {
                        if *g == gen {
                            *wait = false;
                        }
                        break;
                    }
                }
            }
        }
        t.accesses.push(access);
        self.record_plain(w, idx, e);
    }

    /// Records the access of warp `w`'s load, store or atomic `op` by the
    /// executing lanes `e` (not 0), whose address registers read `base`;
    /// `halves`: their shape, when [`Halves::of`] found one.
    pub fn access(&mut self, w: usize, op: &Op, base: &[u64; LANES], e: u32, halves: Option<Halves>) {
        // A global access of a simple shape (the coalesced one, two rows of
        // a 16-wide CTA's warp) straight from its two ranges, without
        // `addresses`' classification of the space.
        if let (Some(h), &Op::Load { space: AddrSpace::Global, ofs, ty, .. } | &Op::Store { space: AddrSpace::Global, ofs, ty, .. }) =
            (halves, op)
        {
            let t = &mut self.warps[w];
            if let Some(access) = half_sectors(t, h, ofs, ty.bytes(), self.sector_shift, matches!(op, Op::Store { .. }), false) {
                t.accesses.push(access);
                return;
            }
        }
        let access = match *op {
            Op::Load { space, ofs, ty, .. } => self.addresses(w, space, base, ofs, ty.bytes(), e, halves, false, false),
            Op::Store { space, ofs, ty, .. } => self.addresses(w, space, base, ofs, ty.bytes(), e, halves, true, false),
            Op::Atom { space, ofs, wide, .. } => self.addresses(w, space, base, ofs, if wide { 8 } else { 4 }, e, halves, true, true),
            _ => Access::None,
        };
        self.warps[w].accesses.push(access);
    }

    /// [`Recorder::access`] of a full warp whose addresses have the shape
    /// `h`, with its lanes' addresses made (`base`) only when its sectors
    /// are not those of the two ranges.
    pub fn access_shaped(&mut self, w: usize, op: &Op, h: Halves, base: impl FnOnce() -> [u64; LANES]) {
        if let &Op::Load { space: AddrSpace::Global, ofs, ty, .. } | &Op::Store { space: AddrSpace::Global, ofs, ty, .. } = op {
            if self.warps[w].push_shaped(h, ofs, ty.bytes(), self.sector_shift, matches!(op, Op::Store { .. })) {
                return;
            }
        }
        self.access(w, op, &base(), u32::MAX, Some(h));
    }

    /// The access of the executing lanes `e` at `base + ofs`, `n` bytes
    /// each; `halves`: their shape (each half-warp's bytes one range).
    #[allow(clippy::too_many_arguments)]
    fn addresses(
        &mut self,
        w: usize,
        space: AddrSpace,
        base: &[u64; LANES],
        ofs: i32,
        n: u32,
        e: u32,
        halves: Option<Halves>,
        store: bool,
        atomic: bool,
    ) -> Access {
        let at = |l: usize| match space {
            AddrSpace::Shared | AddrSpace::Local => (base[l] as u32).wrapping_add(ofs as u32) as u64,
            _ => base[l].wrapping_add(ofs as i64 as u64),
        };
        // A generic access is classified by its first executing lane.
        let first = at(e.trailing_zeros() as usize);
        let orig = space;
        let space = match space {
            AddrSpace::Generic => match first >> 32 {
                SHARED_WINDOW => AddrSpace::Shared,
                LOCAL_WINDOW => AddrSpace::Local,
                _ => AddrSpace::Global,
            },
            s => s,
        };
        let low = |a: u64| if (a >> 32) == SHARED_WINDOW || (a >> 32) == LOCAL_WINDOW { a & 0xffff_ffff } else { a };
        match space {
            AddrSpace::Shared => {
                // Distinct bank words per bank: the most any bank serves is
                // the number of wavefronts (one word read by many lanes is a
                // broadcast).
                let (words, per_bank) = (&mut self.words, &mut self.per_bank);
                words.clear();
                for l in lanes(e) {
                    let a = low(at(l));
                    let (lo, hi) = (a / self.bank_bytes as u64, (a + n as u64 - 1) / self.bank_bytes as u64);
                    words.extend(lo..=hi);
                }
                words.sort_unstable();
                words.dedup();
                per_bank.fill(0);
                for &wd in words.iter() {
                    per_bank[(wd % self.banks as u64) as usize] += 1;
                }
                Access::Shared { wavefronts: per_bank.iter().copied().max().unwrap_or(1).max(1) }
            }
            _ => {
                let local = space == AddrSpace::Local;
                // Local memory is interleaved across the lanes by word, in a
                // range of its own per warp.
                let region = (self.cta << 16 | w as u64).wrapping_mul((self.local_size as u64 * LANES as u64).next_multiple_of(128));
                let t = &mut self.warps[w];
                let start = t.sectors.len();
                if orig == AddrSpace::Global {
                    // A range of bytes touches every sector from its first
                    // byte's to its last byte's, and, when no lane's access
                    // is larger than a sector, each of those sectors holds
                    // some lane's first or last byte: a half-warp's
                    // sectors. The two halves' ranges of sectors, in order,
                    // as one where they meet or overlap.
                    if let Some(access) = halves.and_then(|h| half_sectors(t, h, ofs, n, self.sector_shift, store, atomic)) {
                        return access;
                    }
                    if let Some((first, bits)) = sector_window(base, ofs, n, e, self.sector_shift) {
                        t.sectors.reserve(bits.count_ones() as usize);
                        for b in set_bits(bits) {
                            t.sectors.push(first + b as u64);
                        }
                        return Access::Sectors { start: start as u32, count: bits.count_ones() as u16, store, atomic };
                    }
                }
                let mut sorted = true;
                let mut last = u64::MAX;
                let shift = self.sector_shift;
                // Pushes a sector unless it repeats the last one (repeats
                // are dropped below anyway).
                let mut push = |sector: u64| {
                    if sector != last {
                        sorted &= last == u64::MAX || sector > last;
                        last = sector;
                        t.sectors.push(sector);
                    }
                };
                if orig == AddrSpace::Global {
                    // No generic windows to look for: the addresses as they are.
                    each_lane(e, |l| {
                        let a = base[l].wrapping_add(ofs as i64 as u64);
                        push_ends(&mut push, a, a.wrapping_add(n as u64 - 1), shift);
                    });
                } else {
                    for l in lanes(e) {
                        let a = low(at(l));
                        let b = a + n as u64 - 1;
                        if local {
                            let g =
                                |b: u64| LOCAL_BASE.wrapping_add(region).wrapping_add((b / 4) * 4 * LANES as u64 + l as u64 * 4 + b % 4);
                            push(g(a) >> shift);
                            push(g(b) >> shift);
                        } else {
                            push_ends(&mut push, a, b, shift);
                        }
                    }
                }
                let part = &mut t.sectors[start..];
                if !sorted {
                    part.sort_unstable();
                }
                let mut k = 0;
                for i in 0..part.len() {
                    if i == 0 || part[i] != part[k - 1] {
                        part[k] = part[i];
                        k += 1;
                    }
                }
                t.sectors.truncate(start + k);
                Access::Sectors { start: start as u32, count: k as u16, store, atomic }
            }
        }
    }
}

/// The sectors of a global access of `n` bytes per lane whose half-warps
/// have the shape `h`, at `h`'s addresses plus `ofs`: a range of bytes
/// touches every sector from its first byte's to its last byte's, and,
/// when no lane's access is larger than a sector (else None), each of those
/// sectors holds some lane's first or last byte: a half-warp's sectors.
/// The two halves' ranges of sectors, in order, as one where they meet or
/// overlap: an [`Access::Ranges`] when they fit it, else added to `t`'s
/// sectors. None also when a half wraps around the address space.
#[inline(always)]
fn half_sectors(t: &mut WarpTrace, h: Halves, ofs: i32, n: u32, shift: u32, store: bool, atomic: bool) -> Option<Access> {
    if n > 1 << shift {
        return None;
    }
    let range = |k: usize| {
        let a = h.first[k].wrapping_add(ofs as i64 as u64);
        a.checked_add(h.bytes(k, n) - 1).map(|end| (a >> shift, end >> shift))
    };
    let (r0, r1) = (range(0)?, range(1)?);
    let (x, y) = if r0.0 <= r1.0 { (r0, r1) } else { (r1, r0) };
    let merged = y.0 <= x.1 + 1;
    // The first range's end, and the second's first sector and count (none when merged).
    let (end, second, n1) = if merged { (x.1.max(y.1), x.0, 0) } else { (x.1, y.0, y.1 - y.0 + 1) };
    let (n0, gap) = (end - x.0 + 1, second - x.0);
    // In the record when they fit it (an atomic's sectors stay a list).
    if !atomic && n0 <= u8::MAX as u64 && n1 <= u8::MAX as u64 && gap <= u32::MAX as u64 {
        return Some(Access::Ranges { first: x.0, gap: gap as u32, count: [n0 as u8, n1 as u8], store });
    }
    let start = t.sectors.len();
    t.sectors.extend(x.0..=end);
    t.sectors.extend(second..second + n1);
    let count = (t.sectors.len() - start) as u16;
    Some(Access::Sectors { start: start as u32, count, store, atomic })
}

/// The sectors of a global access by the executing lanes `e` at
/// `base + ofs`, `n` bytes each, as a window: its first sector and a bit
/// per sector from it, when no lane's access crosses a sector and all the
/// lanes' sectors are among the 64 from 32 below the first executing
/// lane's (with 32-byte sectors, within 1 KiB below and 1 KiB above it:
/// coalesced, broadcast, a few neighbouring rows); None otherwise. The
/// bits give the sorted distinct sectors, what the general path makes by
/// sorting, with a few operations per lane and no branch.
#[inline(always)]
fn sector_window(base: &[u64; LANES], ofs: i32, n: u32, e: u32, shift: u32) -> Option<(u64, u64)> {
    let (ofs, last_byte) = (ofs as i64 as u64, n as u64 - 1);
    // No wrap-around below 0, so bit order is the sectors' order.
    let first = (base[e.trailing_zeros() as usize].wrapping_add(ofs) >> shift).saturating_sub(32);
    // `outside` ORs the sectors' distances from `first` (below 64 when
    // all are), `crosses` the bits in which a lane's first and last bytes
    // differ (none at `shift` or above when no lane crosses).
    let (mut bits, mut outside, mut crosses) = (0u64, 0u64, 0u64);
    let mut lane = |a: u64| {
        let i = (a >> shift).wrapping_sub(first);
        outside |= i;
        crosses |= a ^ a.wrapping_add(last_byte);
        bits |= 1u64.wrapping_shl(i as u32);
    };
    if e == u32::MAX {
        // Two loops: the distances in vector code, the bits in scalar code
        // from a table (SSE2 has no per-lane variable shift: in one vector
        // loop each pair of bits took about six instructions; a table
        // lookup keeps the second loop from being vectorized that way).
        let mut dist = [0u64; LANES];
        for (d, &b) in dist.iter_mut().zip(base) {
            let a = b.wrapping_add(ofs);
            *d = (a >> shift).wrapping_sub(first);
            outside |= *d;
            crosses |= a ^ a.wrapping_add(last_byte);
        }
        for &d in &dist {
            bits |= BIT[d as usize % 64];
        }
    } else {
        for l in lanes(e) {
            lane(base[l].wrapping_add(ofs));
        }
    }
    (outside < 64 && crosses >> shift == 0).then_some((first, bits))
}

/// `BIT[i]` is bit `i`.
const BIT: [u64; 64] = {
    let mut t = [0u64; 64];
    let mut i = 0;
    while i < 64 {
        t[i] = 1 << i;
        i += 1;
    }
    t
};

/// The set bits of `m`, lowest first.
fn set_bits(m: u64) -> impl Iterator<Item = u32> {
    let mut m = m;
    std::iter::from_fn(move || {
        (m != 0).then(|| {
            let b = m.trailing_zeros();
            m &= m - 1;
            b
        })
    })
}

/// Pushes the sector of an access's first byte `a` and, when it is in
/// another sector, that of its last byte `b`.
#[inline(always)]
fn push_ends(push: &mut impl FnMut(u64), a: u64, b: u64, shift: u32) {
    push(a >> shift);
    if (b >> shift) != (a >> shift) {
        push(b >> shift);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The sectors the recorder gives a global access of lanes `e` at
    /// `base`, `n` bytes each, through the global path (its window when it
    /// fits) and through the generic one (always per lane, sorted after);
    /// an access of a simple shape ([`Halves::of`]) is also recorded with
    /// it and checked against the generic path.
    fn both_ways(base: &[u64; LANES], n: u32, e: u32) -> (Vec<u64>, Vec<u64>) {
        let mut r = Recorder::new(32, 32, 4, 0);
        r.start(0, 1);
        let mut get = |space, halves| match r.addresses(0, space, base, 0, n, e, halves, false, false) {
            Access::Sectors { start, count, .. } => r.warps[0].sectors[start as usize..][..count as usize].to_vec(),
            Access::Ranges { first, gap, count, .. } => {
                let second = first + gap as u64;
                (first..first + count[0] as u64).chain(second..second + count[1] as u64).collect()
            }
            a => panic!("not sectors: {a:?}"),
        };
        let (global, generic) = (get(AddrSpace::Global, None), get(AddrSpace::Generic, None));
        if let Some(h) = Halves::of(base, n, e) {
            assert_eq!(get(AddrSpace::Global, Some(h)), generic, "halves {h:x?} of {base:x?} n={n}");
        }
        (global, generic)
    }

    /// An access record with its two ranges is 16 bytes (docs/timing.md).
    #[test]
    fn an_access_is_16_bytes() {
        assert_eq!(std::mem::size_of::<Access>(), 16);
    }

    #[test]
    fn the_sector_window_gives_what_the_per_lane_path_gives() {
        let mut next = crate::test_rng::xorshift64(0x2545_f491_4f6c_dd1du64);
        for case in 0..8000 {
            let n = [1, 4, 8, 16][case % 4];
            let e = if case % 3 == 0 { u32::MAX } else { next() as u32 | 1 << (case % 32) };
            let origin = 0x7f00_0000_0000 + (next() % 4096) * n as u64;
            // Where the second half of a half-warp shape starts: below or
            // above, overlapping, adjacent or apart.
            let two = (next() % 64).wrapping_sub(32).wrapping_mul(n as u64);
            let base = crate::test_rng::lane_addresses(case / 4 % 10, origin, n as u64, two, &mut next);
            if e == u32::MAX && matches!(case / 4 % 10, 0 | 1 | 6 | 7 | 8) {
                assert!(Halves::of(&base, n, e).is_some(), "case {case}: {base:x?} n={n}");
            }
            let (global, generic) = both_ways(&base, n, e);
            assert_eq!(global, generic, "case {case}: {base:x?} n={n} e={e:#x}");
        }
    }
}
