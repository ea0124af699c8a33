//! The SM timing model (docs/timing.md): the CTAs of a launch placed on the
//! SMs of a [`MachineDesc`] as their resources allow, each SM's warps
//! divided among its sub-partitions, whose schedulers issue at most one
//! warp-instruction per cycle by a policy (greedy-then-oldest or loose
//! round robin), a warp being ready when its stall count has elapsed, the
//! scoreboards it waits for are released, the pipe of its next instruction
//! accepts it and it does not wait at a CTA barrier. Memory accesses take
//! the LSU for one cycle per line (global, local) or wavefront (shared),
//! and their results arrive when the sectored L1 / L2 / DRAM model has
//! served them. Every cycle of every resident warp is attributed to one
//! [`StallReason`].
//!
//! The model replays what the interpreter did: the CTAs run (functionally,
//! with the interpreter, in CTA order: the order the model places them in,
//! on another thread when there is one), and their per-warp traces
//! (`sm_trace`) are what the model schedules. So results,
//! traps and instruction counts are those of the plain run; the model
//! decides only when each instruction issues.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};

use crate::machine_desc::{MachineDesc, Policy};
use crate::occupancy::Occupancy;
use crate::ops::Op;
use crate::profile::{SmStats, StallReason, TimelineEvent, STALL_REASONS, TIMELINE_LIMIT};
use crate::program::Program;
use crate::sm_trace::{Access, WarpTrace};
use crate::timing::{Class, SCOREBOARDS};
use strength_reduce::StrengthReducedU32;

/// The pipes of a sub-partition (the LSU is per SM).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Pipe {
    Alu,
    Fma,
    Fp64,
    Xu,
    Shfl,
    Uniform,
    Cbu,
    /// Loads, stores, atomics: the SM's LSU.
    Lsu,
}
const PIPES: usize = 8;

/// What the model needs of one instruction of the program.
#[derive(Clone, Copy, Debug)]
struct InstInfo {
    pipe: Pipe,
    interval: u32,
    /// Latency from the table (variable-latency results not from memory).
    lat: u32,
    variable: bool,
    stall: u32,
    wsb: u8,
    req: u8,
    yield_: bool,
    /// Its issues have an entry in the trace's accesses (`sm_trace::has_access`).
    access: bool,
    /// Not an access and not on the LSU's pipe (see [`is_local`]).
    local: bool,
    /// A branch or convergence instruction (BRA, CALL, RET, EXIT, BSSY,
    /// BSYNC, BREAK): the wait after it is `StallReason::Branch`.
    branch: bool,
}

fn inst_info(m: &MachineDesc, prog: &Program) -> Vec<InstInfo> {
    let isa = &ursa_emit::ISA;
    prog.code
        .iter()
        .map(|e| {
            let class = isa.forms.get(e.form as usize).map(|f| crate::timing::class_of_optype(f.optype));
            let mem = matches!(e.op, Op::Load { .. } | Op::Store { .. } | Op::Atom { .. });
            let (pipe, rate) = match class {
                _ if mem => (Pipe::Lsu, 0),
                Some(Class::Alu) => (Pipe::Alu, m.rate_alu),
                Some(Class::Mul | Class::Fp32) => (Pipe::Fma, m.rate_fma),
                Some(Class::XuFixed | Class::Mufu | Class::Conv) => (Pipe::Xu, m.rate_xu),
                Some(Class::Dfma | Class::Dcmp) => (Pipe::Fp64, m.rate_fp64),
                Some(Class::Shuffle) => (Pipe::Shfl, m.rate_shfl),
                Some(Class::Control) => (Pipe::Cbu, m.rate_cbu),
                _ => (Pipe::Uniform, m.rate_uniform),
            };
            let membar = matches!(e.op, Op::Membar);
            let access = crate::sm_trace::has_access(&e.op);
            InstInfo {
                pipe,
                interval: if pipe == Pipe::Lsu { 1 } else { m.interval(rate) },
                lat: e.lat as u32,
                variable: e.variable,
                stall: e.ctrl.stall.max(1) as u32,
                wsb: e.ctrl.wsb,
                req: if membar { (1 << SCOREBOARDS) - 1 } else { e.ctrl.req },
                yield_: e.ctrl.yield_,
                access,
                local: !access && pipe != Pipe::Lsu,
                branch: e.op.is_control()
                    && !matches!(e.op, Op::Bpt { .. } | Op::Lepc { .. } | Op::BmovToR { .. } | Op::BmovToB { .. } | Op::Bar { .. }),
            }
        })
        .collect()
}

/// A sectored, set-associative LRU cache: each entry is one sector; a set
/// is chosen by the sector's line and holds `ways` lines' worth of sectors.
/// A set's entries are kept in the order of their last use, the most
/// recent first (a hit moves its entry to the front, a miss puts the new
/// sector there and, in a full set, drops the last: the least recently
/// used), so a set is its tags alone, with no last-use times to write and
/// search. A set's entries are made when it is first touched (a 40 MiB L2
/// costs nothing until used), so that a set that is not full is searched
/// only as far as it is filled. A set starts with a small block of
/// [`SMALL`] entries (one host cache line of tags) and moves to a block of
/// all `ways` when it fills that: a streaming launch touches thousands of
/// sets and fills few entries of each, whose blocks are then packed
/// together instead of 512 bytes apart. Tags are stored plus one (an entry
/// emptied by an invalidation is 0 and keeps its place in the order). A
/// block's entries past its set's fill are never read (a full set's are
/// all written), so arrays reused from an earlier cache are not cleared.
/// A small cache (an L1: [`FLAT_MAX`] entries at most) is instead one
/// array of all its sets' entries, zero (empty) at first, made at its
/// first lookup, a set at a place its index gives: a lookup reads no head
/// first, and searches all `ways` entries (the empty ones at its end never
/// match, and a miss drops the last entry, an empty one while the set is
/// not full).
struct Cache {
    /// A small cache's entry count (0: blocks).
    flat_len: usize,
    /// Its entries, once looked up: set `s` at `s * ways`.
    flat: Vec<u64>,
    /// Per set, where its entries are (one array: a lookup's first read).
    heads: Vec<Head>,
    small: Blocks,
    big: Blocks,
    sets: u64,
    /// How a line's set is found: a mask, or the remainder by `sets`
    /// without a division (see [`SetIndex`]).
    index: SetIndex,
    ways: usize,
    /// log2 of the sectors per line (a power of two: `MachineDesc::validate`).
    line_shift: u32,
}

/// A line's set: `line % sets` without a division on the path of every
/// lookup (a 64-bit division takes tens of cycles; the L1's 56 and the
/// L2's 20 480 sets are not powers of two).
#[derive(Clone, Copy)]
enum SetIndex {
    /// `sets - 1`, when `sets` is a power of two.
    Mask(u64),
    /// When `sets` is below 2^32: the remainder of a 32-bit line by
    /// multiplication (`strength_reduce`'s reciprocal, exact for every
    /// 32-bit line). A line of 2^32 or more (an address of 2^39 or more: a
    /// local one, `sm_trace`'s `LOCAL_BASE`) is divided.
    Reciprocal(StrengthReducedU32),
    /// Neither: a division.
    Divide,
}

impl SetIndex {
    fn new(sets: u64) -> SetIndex {
        if sets.is_power_of_two() {
            SetIndex::Mask(sets - 1)
        } else if let Ok(sets) = u32::try_from(sets) {
            SetIndex::Reciprocal(StrengthReducedU32::new(sets))
        } else {
            SetIndex::Divide
        }
    }

    /// `line % sets`.
    #[inline(always)]
    fn of(self, line: u64, sets: u64) -> u64 {
        match (self, u32::try_from(line)) {
            (SetIndex::Mask(m), _) => line & m,
            (SetIndex::Reciprocal(r), Ok(line)) => u64::from(line % r),
            _ => line % sets,
        }
    }
}

#[derive(Clone, Copy, Default)]
struct Head {
    /// The set's block, plus one (0: no entries yet): an index into
    /// `Cache::small`, or with [`BIG`] set into `Cache::big`.
    block: u32,
    /// How many of its entries have been filled (the first ones).
    fill: u32,
}

/// The most entries of a cache kept as one flat array (64 KiB).
const FLAT_MAX: usize = 8192;

/// Entries of a set's first block: 64 bytes of tags, one host cache line.
const SMALL: usize = 8;
/// In `Cache::block`, a block of `Cache::big`.
const BIG: u32 = 1 << 31;

/// Blocks of `width` entries (tags, most recently used first).
#[derive(Default)]
struct Blocks {
    tags: Vec<u64>,
    width: usize,
    /// Blocks handed out (the first ones of the arrays).
    count: usize,
    /// Blocks given back (a set that moved to a big block), reused first.
    free: Vec<u32>,
}

impl Blocks {
    /// Arrays reused from an earlier cache (not cleared: see [`Cache`]).
    fn reusing(mut self, width: usize) -> Blocks {
        self.width = width;
        self.count = 0;
        self.free.clear();
        self
    }

    /// A new block's index.
    fn alloc(&mut self) -> u32 {
        if let Some(b) = self.free.pop() {
            return b;
        }
        let b = self.count;
        self.count += 1;
        let end = self.count * self.width;
        if self.tags.len() < end {
            if self.width == SMALL && self.tags.len() + SMALL == end {
                // (A fixed size: a few stores, no library call.)
                self.tags.extend_from_slice(&[0; SMALL]);
            } else {
                self.tags.resize(end, 0);
            }
        }
        b as u32
    }

    #[inline(always)]
    fn entries(&mut self, b: u32) -> &mut [u64] {
        let start = b as usize * self.width;
        &mut self.tags[start..][..self.width]
    }
}

thread_local! {
    /// The entry arrays of the last L2 a model on this thread dropped:
    /// the next one reuses their memory (a fresh allocation of megabytes
    /// costs page faults on every launch).
    static SPARE: std::cell::RefCell<(Blocks, Blocks)> = std::cell::RefCell::new(Default::default());
}

impl Cache {
    /// A cache of its own memory: one flat array when it is small.
    fn new(bytes: u64, line: u32, sector: u32, ways: u32) -> Cache {
        let mut c = Cache::with_blocks(bytes, line, sector, ways, Blocks::default(), Blocks::default());
        let entries = c.sets as usize * c.ways;
        if entries <= FLAT_MAX {
            c.flat_len = entries;
            c.heads = Vec::new();
        }
        c
    }

    fn with_blocks(bytes: u64, line: u32, sector: u32, ways: u32, small: Blocks, big: Blocks) -> Cache {
        let spl = (line / sector).max(1) as u64;
        let sets = (bytes / line as u64 / ways as u64).max(1);
        let ways = ways as usize * spl as usize;
        let mut small = small.reusing(SMALL.min(ways));
        // Every set touched takes a small block: room for all of them from
        // the start (not grown by doubling, copying the blocks each time;
        // the memory is not touched until a set takes its block).
        let room = sets as usize * small.width;
        small.tags.reserve(room.saturating_sub(small.tags.len()));
        Cache {
            flat_len: 0,
            flat: Vec::new(),
            heads: vec![Head::default(); sets as usize],
            small,
            big: big.reusing(ways),
            sets,
            index: SetIndex::new(sets),
            ways,
            line_shift: spl.trailing_zeros(),
        }
    }

    /// A cache whose entry arrays reuse the memory [`Cache::recycle`] gave back.
    fn reusing(bytes: u64, line: u32, sector: u32, ways: u32) -> Cache {
        let (small, big) = SPARE.with(|s| std::mem::take(&mut *s.borrow_mut()));
        Cache::with_blocks(bytes, line, sector, ways, small, big)
    }

    /// Gives the entry arrays' memory to the next [`Cache::reusing`].
    fn recycle(self) {
        SPARE.with(|s| *s.borrow_mut() = (self.small, self.big));
    }

    /// The set of `sector`: its line modulo the sets (no division for the
    /// line, a shift, nor for the set: [`SetIndex`]).
    #[inline(always)]
    fn set(&self, sector: u64) -> usize {
        self.index.of(sector >> self.line_shift, self.sets) as usize
    }

    /// The entries of a set's block (`b`: its `block`, not 0).
    #[inline(always)]
    fn entries(&mut self, b: u32) -> &mut [u64] {
        if b & BIG != 0 {
            self.big.entries((b & !BIG) - 1)
        } else {
            self.small.entries(b - 1)
        }
    }

    /// Looks a sector up; a miss fills it (evicting the least recently
    /// used sector of the set). True on a hit. The set's entries stay in
    /// the order of their last use, the most recent first.
    #[inline]
    fn access(&mut self, sector: u64) -> bool {
        let set = self.set(sector);
        if self.flat_len != 0 {
            if self.flat.is_empty() {
                self.make_flat();
            }
            let tag = sector.wrapping_add(1);
            let tags = &mut self.flat[set * self.ways..][..self.ways];
            if let Some(i) = position(tags, tag) {
                to_front(&mut tags[..=i], tag);
                return true;
            }
            to_front(tags, tag);
            return false;
        }
        let Head { block: mut b, fill } = self.heads[set];
        if b == 0 {
            b = self.first_block(set);
        }
        let fill = fill as usize;
        let tag = sector.wrapping_add(1);
        let ways = self.ways;
        // The block's entries through its array alone (not `entries`, which
        // borrows the whole cache), so that a fill writes them and the
        // set's head without looking the block up again.
        let tags = if b & BIG != 0 { self.big.entries((b & !BIG) - 1) } else { self.small.entries(b - 1) };
        if fill == ways {
            // A full set: a miss moves all its entries, in one move, and
            // the last one, the least recently used, drops out.
            if let Some(i) = tags[..ways].iter().position(|&t| t == tag) {
                to_front(&mut tags[..=i], tag);
                return true;
            }
            to_front(&mut tags[..ways], tag);
            return false;
        }
        let Err(last) = find_to_front(&mut tags[..fill], tag) else {
            return true;
        };
        // A miss in a set not full: its entries moved back one place, and
        // the last one takes the next unfilled entry (never used).
        if fill < tags.len() {
            tags[fill] = last;
        } else {
            b = self.grow(set, b);
            self.entries(b)[fill] = last;
        }
        self.heads[set].fill += 1;
        false
    }

    /// The flat array of an L1's entries, empty, at its first lookup (out
    /// of line: the lookups' code keeps its registers for the search).
    #[cold]
    #[inline(never)]
    fn make_flat(&mut self) {
        self.flat = vec![0; self.flat_len];
    }

    /// Gives set `set`, at its first lookup, a small block; returns its
    /// `block` (out of line, as `make_flat`).
    #[cold]
    #[inline(never)]
    fn first_block(&mut self, set: usize) -> u32 {
        let b = self.small.alloc() + 1;
        self.heads[set].block = b;
        b
    }

    /// Moves a set whose small block is full to a big one (same entries,
    /// same order); returns its new `block`.
    #[cold]
    fn grow(&mut self, set: usize, small: u32) -> u32 {
        let big = self.big.alloc();
        let n = self.small.width;
        let from = (small as usize - 1) * n;
        let at = big as usize * self.big.width;
        self.big.tags[at..][..n].copy_from_slice(&self.small.tags[from..][..n]);
        self.small.free.push(small - 1);
        let b = (big + 1) | BIG;
        self.heads[set].block = b;
        b
    }

    /// Drops a sector if present (a store writes through around the L1).
    fn invalidate(&mut self, sector: u64) {
        let set = self.set(sector);
        if self.flat_len != 0 {
            if self.flat.is_empty() {
                return; // (nothing to drop before the first lookup)
            }
            let tag = sector.wrapping_add(1);
            let tags = &mut self.flat[set * self.ways..][..self.ways];
            // (A set holds a sector at most once.)
            if let Some(i) = position(tags, tag) {
                tags[i] = 0;
            }
            return;
        }
        let Head { block: b, fill } = self.heads[set];
        if b == 0 {
            return;
        }
        let fill = fill as usize;
        let tag = sector.wrapping_add(1);
        for t in &mut self.entries(b)[..fill] {
            if *t == tag {
                *t = 0;
            }
        }
    }

    /// Looks up the sectors `base + i` for the bits `i` of `want` (`n` of
    /// them, not 0), which are all in one line (one set), in increasing
    /// order: the hits
    /// (as bits of `want`) and the set's entries afterwards are those of
    /// [`Cache::access`] of each in turn, found in one pass over the set.
    /// Where no lookup can hit (none of the sectors is in the set) every
    /// one is a miss: the sectors go in front, the last first, and the
    /// others move back as many places (in a full set, the last ones
    /// drop). Where some hit, and no miss before a hit can push its entry
    /// out of the set, the looked-up sectors go in front and the other
    /// entries keep their order behind them. Otherwise (a set filling up
    /// or one with hits near its end) one lookup after another.
    #[inline(always)]
    fn access_line(&mut self, base: u64, want: u64, n: usize) -> (u64, usize) {
        if n == 1 {
            // One sector: its lookup (no pass for hits first).
            let i = want.trailing_zeros();
            let hit = self.access(base + i as u64);
            return ((hit as u64) << i, hit as usize);
        }
        self.access_lines(base, want, n)
    }

    /// [`Cache::access_line`] of more than one sector.
    #[inline(never)]
    fn access_lines(&mut self, base: u64, want: u64, n: usize) -> (u64, usize) {
        let set = self.set(base);
        let lo = base.wrapping_add(1);
        if self.flat_len != 0 {
            if self.flat.is_empty() {
                self.make_flat();
            }
            let ways = self.ways;
            let tags = &mut self.flat[set * ways..][..ways];
            return match line_front(tags, ways, lo, want, n) {
                Some(found) => found,
                None => self.access_each(base, want),
            };
        }
        let Head { block: mut b, fill } = self.heads[set];
        if b == 0 {
            b = self.first_block(set);
        }
        let fill = fill as usize;
        let ways = self.ways;
        let tags = if b & BIG != 0 { self.big.entries((b & !BIG) - 1) } else { self.small.entries(b - 1) };
        if fill == ways {
            return match line_front(&mut tags[..ways], ways, lo, want, n) {
                Some(found) => found,
                None => self.access_each(base, want),
            };
        }
        let (hits, k, end) = line_hits(&tags[..fill], lo, want, n);
        let new_fill = fill + n - k;
        if new_fill > ways {
            // The set fills up during the lookups.
            return self.access_each(base, want);
        }
        // Not full before or after: nothing drops out. A small block the
        // misses overflow moves to a big one first (as the first miss
        // past its end would move it).
        let tags = if new_fill > tags.len() {
            b = self.grow(set, b);
            self.entries(b)
        } else {
            tags
        };
        to_front_line(&mut tags[..new_fill], fill, lo, want, (hits, k, end), n);
        self.heads[set].fill = new_fill as u32;
        (hits, k)
    }

    /// [`Cache::access_line`] one sector at a time.
    #[cold]
    #[inline(never)]
    fn access_each(&mut self, base: u64, mut want: u64) -> (u64, usize) {
        let (mut hits, mut k) = (0, 0);
        while want != 0 {
            let i = want.trailing_zeros();
            want &= want - 1;
            if self.access(base + i as u64) {
                hits |= 1 << i;
                k += 1;
            }
        }
        (hits, k)
    }

    /// Drops the sectors `base + i` for the bits `i` of `want` (in one
    /// line) where present: [`Cache::invalidate`] of each, in one pass
    /// over the set.
    fn invalidate_line(&mut self, base: u64, want: u64) {
        let set = self.set(base);
        let lo = base.wrapping_add(1);
        let tags = if self.flat_len != 0 {
            if self.flat.is_empty() {
                return;
            }
            &mut self.flat[set * self.ways..][..self.ways]
        } else {
            let Head { block: b, fill } = self.heads[set];
            if b == 0 {
                return;
            }
            &mut self.entries(b)[..fill as usize]
        };
        for t in tags {
            if wanted(*t, lo, want) {
                *t = 0;
            }
        }
    }
}

/// Whether entry `t` is the tag of one of the sectors `lo - 1 + i`, `i` a
/// bit of `want` (tags are sectors plus one; an empty entry, 0, is none).
#[inline(always)]
fn wanted(t: u64, lo: u64, want: u64) -> bool {
    let d = t.wrapping_sub(lo);
    d < 64 && want >> d & 1 != 0
}

/// The entries of `tags` among the `n` sectors of `want` (tags from
/// `lo`, as [`wanted`]), as bits of `want`, how many, and the place after
/// the last of them (0: none).
#[inline(always)]
fn line_hits(tags: &[u64], lo: u64, want: u64, n: usize) -> (u64, usize, usize) {
    let mut hits = 0u64;
    let (mut k, mut end) = (0, 0);
    // First whether any entry is near the sectors at all, with no branch
    // per entry (a streaming access finds none).
    if !tags.iter().fold(false, |any, &t| any | (t.wrapping_sub(lo) < 64)) {
        return (0, 0, 0);
    }
    for (p, &t) in tags.iter().enumerate() {
        let d = t.wrapping_sub(lo);
        if d < 64 && want >> d & 1 != 0 {
            hits |= 1 << d;
            k += 1;
            end = p + 1;
            if k == n {
                break; // (all found: a set holds a sector once)
            }
        }
    }
    (hits, k, end)
}

/// [`Cache::access_line`] in a full set (or an L1's: its empty entries
/// count as entries), `tags` its `ways` entries: the hits, or None where
/// a miss could push a sector looked up later out of the set (or all are
/// looked up: `n`, the bits of `want`, not below `ways`).
#[inline(always)]
fn line_front(tags: &mut [u64], ways: usize, lo: u64, want: u64, n: usize) -> Option<(u64, usize)> {
    if n >= ways {
        return None;
    }
    let (hits, k, end) = line_hits(tags, lo, want, n);
    // An entry at place `p` moves back at most one place per lookup before
    // its own, and drops out only from the last place: none does when the
    // hits' last place plus the lookups stays within the set.
    if end + n > ways {
        return None;
    }
    to_front_line(tags, ways, lo, want, (hits, k, end), n);
    Some((hits, k))
}

/// The entries after the lookups of the `n` sectors of `want` (tags
/// from `lo`), `found` of them (as bits of `want`, how many, the place
/// after the last) among the first `fill` entries of `tags`: the `n`
/// sectors first, the last one looked up first, then the other entries
/// in their order, as many as `tags` holds (a full set's last ones drop).
#[inline(always)]
fn to_front_line(tags: &mut [u64], fill: usize, lo: u64, mut want: u64, found: (u64, usize, usize), n: usize) {
    let (hits, k, end) = found;
    let len = tags.len();
    // The entries after the last hit move back by the misses (none when
    // all hit), first, since those before it move into their places.
    if k < n {
        let keep = fill.min(len - (n - k));
        if keep > end {
            tags.copy_within(end..keep, end + n - k);
        }
    }
    // Those before it, from the last: one that stays moves back by `n`
    // less the hits before it (never forward, so in place).
    let mut before = k;
    for p in (0..end).rev() {
        let t = tags[p];
        if wanted(t, lo, hits) {
            before -= 1;
            continue;
        }
        tags[p + n - before] = t;
    }
    let mut j = n;
    while want != 0 {
        let i = want.trailing_zeros() as u64;
        want &= want - 1;
        j -= 1;
        tags[j] = lo + i;
    }
}

/// Where `tag` is in an L1 set's entries `tags`. The A100's sets of 16
/// entries (4 ways of 4 sectors) are searched as an array of 16: a compare
/// and a branch per entry, without the index and bound of a loop over a
/// slice.
#[inline(always)]
fn position(tags: &[u64], tag: u64) -> Option<usize> {
    match <&[u64; 16]>::try_from(tags) {
        Ok(set16) => set16.iter().position(|&t| t == tag),
        Err(_) => tags.iter().position(|&t| t == tag),
    }
}

/// Looks `tag` up in `tags` and puts it first, the entries before it
/// moved one place back, in one pass (each entry read is written one place
/// later; no search and then a move, which is a library call). Ok on a
/// hit; on a miss every entry moved back and the last one, which no longer
/// fits, is the error (`tag` itself when `tags` is empty).
#[inline(always)]
fn find_to_front(tags: &mut [u64], tag: u64) -> Result<(), u64> {
    let mut carried = tag;
    for t in tags.iter_mut() {
        let here = std::mem::replace(t, carried);
        if here == tag {
            return Ok(());
        }
        carried = here;
    }
    Err(carried)
}

/// Puts `tag` first in `tags`, moving the others one place back (the
/// last one drops out).
#[inline(always)]
fn to_front(tags: &mut [u64], tag: u64) {
    let n = tags.len();
    tags.copy_within(..n - 1, 1);
    tags[0] = tag;
}

/// The sectors of a range from which an access looks the caches up a
/// line at a time ([`Cache::access_line`], a pass over the set for all
/// the line's sectors), not a sector at a time: a line op's fixed cost
/// pays for itself over three sectors or more.
const LINE_LOOKUP: u64 = 3;

/// Resident warps from which a visit prefetches the next one's warps
/// (their hot lines, 64 bytes each, then exceed what the host's 32 KiB
/// first-level cache keeps along with the rest).
const PREFETCH_FROM: usize = 192;

/// Prefetches the first two warps of each sub-partition whose bit is set
/// in `due`, word `word` of the agenda's bit set.
#[inline(never)]
fn prefetch_warps(subs: &[Sub], word: usize, mut due: u64) {
    while due != 0 {
        let w = &subs[word * 64 + due.trailing_zeros() as usize].warps;
        due &= due - 1;
        prefetch(w.as_ptr());
        prefetch(w.as_ptr().wrapping_add(1));
    }
}

/// Asks the host CPU to bring the cache line at `p` into its caches (a
/// hint: no effect on what the program computes).
#[inline(always)]
fn prefetch<T>(p: *const T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: `prefetcht0` never faults, whatever the address (valid,
    // dangling or past an allocation), and reads nothing into the
    // program's state; SSE is part of the x86-64 baseline.
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(p as *const i8)
    };
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

/// A bandwidth-limited server: `rate` sectors per cycle, first come first
/// served. Returns when a sector arriving at `t` is through it.
struct Server {
    /// Time the server is next free, in 1/rate cycles.
    free: u64,
    rate: u64,
}

impl Server {
    fn serve(&mut self, t: u64) -> u64 {
        let start = self.free.max(t * self.rate);
        self.free = start + 1;
        start.div_ceil(self.rate)
    }
}

/// A warp's state that only an issue reaching the end of a run or making
/// an access, a barrier and the timeline read; what every visit and issue
/// read is its [`Resident`] in its sub-partition's list.
struct Warp {
    trace: WarpTrace,
    /// The record of the current run: `trace.recs[pos]` (its next
    /// instruction and how many follow are in the [`Resident`]).
    pos: usize,
    /// The lanes of the current run (for the timeline).
    lanes: u32,
    /// The next entry of `trace.accesses`.
    acc: usize,
    cta: usize,
    /// Index of the warp in its CTA (for the timeline).
    id: u32,
    /// Its SM and sub-partition.
    sm: u32,
    sub: u32,
    /// Waiting at this barrier instance.
    bar: Option<(u8, u32)>,
    /// Timeline: the current stall span (reason, start).
    span: Option<(StallReason, u64)>,
    /// Resident (false: it left, and its slot waits for another warp).
    live: bool,
}

/// A resident warp in its sub-partition's list: the state a visit reads
/// (its wake time, its verdict's inputs) and an issue writes, kept in the
/// list itself, so that a visit reads its warps in one run of memory
/// instead of through their slots (the rest, [`Warp`], is read seldom).
/// What a look reads is in its first 64 bytes, a host cache line (the
/// fields in declaration order): its next instruction's scoreboard waits
/// and pipe are made when it issues the one before (its scoreboards
/// change only then), not at every look.
#[derive(Clone, Copy)]
#[repr(C, align(64))]
struct Resident {
    /// The cycle the warp is next looked at (its verdict cannot change earlier).
    wake: u64,
    next_issue: u64,
    /// When the scoreboards its next instruction waits for are released
    /// (0: none): the latest of those last set by a global or local
    /// access (long scoreboard), and of the others ([`sb_waits`]).
    long_at: u64,
    short_at: u64,
    /// The cycle from which its cycles are not yet counted
    /// (`stall_cycles`, the profile) for its last verdict, `reason`.
    since: u64,
    /// Its next instruction, and how many more of its run follow it.
    idx: u32,
    left: u32,
    /// Its slot in the model's warps.
    slot: u32,
    /// Its next instruction's pipe.
    pipe: Pipe,
    reason: StallReason,
    /// Its last issue was a branch or convergence instruction.
    after_branch: bool,
    /// Waiting at a barrier (its `Warp::bar`).
    at_bar: bool,
    /// Its next instruction's issue reads and writes nothing outside its
    /// sub-partition, and its verdict nothing outside the warp and the
    /// sub-partition's pipes: not an access (a load, store, atomic or
    /// barrier), not on the LSU's pipe, not its trace's last instruction
    /// (see [`run_ahead`]).
    local: bool,
    /// Its current run is its trace's last.
    last_run: bool,
    /// Per scoreboard, when its last writer's result arrives.
    sb: [u64; SCOREBOARDS],
    /// Scoreboards last set by a global/local memory access (long scoreboard).
    sb_long: u8,
}

/// A sub-partition. All of them are in one array (indexed by SM and
/// sub-partition), each with one list of its warps' [`Resident`] states:
/// a visit reads them with no pointer to follow through its SM or a slot.
struct Sub {
    /// The earliest of the warps' `wake` (u64::MAX: none).
    next: u64,
    /// The resident warps, oldest first.
    warps: Vec<Resident>,
    /// The index in `warps` of the last issuer (GTO's greedy warp) until
    /// it yields or leaves: an index, not a slot, so that a visit need
    /// not search for it.
    greedy: Option<usize>,
    /// The index in `warps` of the last issuer (LRR starts after it).
    last: usize,
    /// Its SM.
    sm: u32,
    pipe_free: [u64; PIPES],
}

impl Sub {
    fn update_next(&mut self) {
        self.next = self.warps.iter().map(|r| r.wake).min().unwrap_or(u64::MAX);
    }

    /// Where LRR's round starts: after the last issuer (`last` < `n`
    /// when there are warps; the division only guards that).
    #[inline(always)]
    fn lrr_start(&self, n: usize) -> usize {
        let s = self.last + 1;
        if s < n {
            s
        } else {
            s % n
        }
    }

    /// Removes the warp at index `i`, keeping `greedy` on the same warp.
    fn remove(&mut self, i: usize) -> usize {
        let slot = self.warps.remove(i).slot as usize;
        self.greedy = match self.greedy {
            Some(g) if g == i => None,
            Some(g) if g > i => Some(g - 1),
            g => g,
        };
        slot
    }
}

/// An SM (its LSU's time is in the model's own array, read by every
/// visit).
struct Sm {
    l1: Cache,
    ctas: u32,
    warps: u32,
    /// The cycle from which `active_sm_cycles` and `resident_warp_cycles`
    /// are not yet counted.
    since: u64,
    next_sub: usize,
}

impl Sm {
    /// Counts the SM's cycles up to `t` (before its resident warps change).
    fn count(&mut self, stats: &mut SmStats, t: u64) {
        if self.warps > 0 {
            stats.active_sm_cycles += t - self.since;
            stats.resident_warp_cycles += self.warps as u64 * (t - self.since);
        }
        self.since = t;
    }
}

struct CtaRun {
    index: u64,
    sm: usize,
    live: u32,
    expect: HashMap<(u8, u32), u32>,
    arrived: HashMap<(u8, u32), u32>,
    warps: Vec<usize>,
}

/// What the model adds to a launch's profile: stall cycles per
/// instruction by reason, and timeline events.
pub(crate) struct SmProfile {
    pub stalls: Vec<[u64; STALL_REASONS]>,
    pub timeline: Vec<TimelineEvent>,
    pub timeline_dropped: u64,
}

/// Counts warp `r`'s cycles from its `since` to `now` for its current
/// verdict (the instruction it waits to issue).
fn count_warp(stats: &mut SmStats, prof: &mut Option<SmProfile>, r: &mut Resident, now: u64) {
    let d = now - r.since;
    if d > 0 {
        stats.stall_cycles[r.reason as usize] += d;
        if let Some(p) = prof.as_mut() {
            p.stalls[r.idx as usize][r.reason as usize] += d;
        }
    }
    r.since = now;
}

/// Whether an instruction is local (`Resident::local`) at a warp's
/// next issue, `left` more of its run following it, in its trace's last
/// run or not.
#[inline(always)]
fn is_local(inf: &InstInfo, left: u32, last_run: bool) -> bool {
    inf.local && (left > 0 || !last_run)
}

/// A visit's look at sub-partition `sub` at cycle `now`: the verdicts of
/// its warps due (`wake` <= `now`) in the policy's order, their cycles
/// counted when a verdict's reason changes, the policy's choice (the
/// first that can issue, returned: its index in the list) and the
/// sub-partition's next wake time. `lsu_free`: when the SM's LSU is free,
/// as it was before the cycle's issues. `LOCAL`: every warp due is local
/// and none waits at a barrier (the run ahead's visits, [`run_local`]).
#[inline(always)]
fn look<const LOCAL: bool>(
    sub: &mut Sub,
    policy: Policy,
    now: u64,
    lsu_free: u64,
    stats: &mut SmStats,
    prof: &mut Option<SmProfile>,
) -> Option<usize> {
    let n = sub.warps.len();
    let mut chosen: Option<usize> = None;
    let start = match policy {
        Policy::Gto => 0,
        Policy::Lrr => sub.lrr_start(n),
    };
    let greedy = sub.greedy.unwrap_or(0);
    // The earliest wake time, made as the loop passes every warp (what
    // `update_next` would find after it).
    let mut next = u64::MAX;
    for k in 0..n {
        let i = policy_index(policy, k, n, greedy, start);
        let r = &mut sub.warps[i];
        if r.wake > now {
            next = next.min(r.wake);
            continue;
        }
        let ready = match verdict::<LOCAL>(r, now, lsu_free, &sub.pipe_free) {
            Some(wait) => wait,
            None if chosen.is_none() => {
                chosen = Some(i);
                (StallReason::Selected, now + 1)
            }
            None => (StallReason::NotSelected, now + 1),
        };
        if r.reason != ready.0 {
            count_warp(stats, prof, r, now);
            r.reason = ready.0;
        }
        r.wake = ready.1;
        next = next.min(ready.1);
    }
    if let Some(i) = chosen {
        sub.last = i;
        sub.greedy = Some(i);
    }
    sub.next = next;
    chosen
}

/// The start of warp `r`'s issue of `inf` at cycle `now`: its cycles
/// counted up to the issue's end, its stall. Returns when its result is
/// ready by the latency (an access's issue makes it that of the access).
/// The caller counts the issue (`SmStats::issued`).
#[inline(always)]
fn issue_start(r: &mut Resident, inf: &InstInfo, now: u64, stats: &mut SmStats, prof: &mut Option<SmProfile>) -> u64 {
    count_warp(stats, prof, r, now + 1);
    r.next_issue = now + inf.stall as u64;
    r.after_branch = inf.branch;
    now + inf.lat as u64
}

/// The rest of warp `i`'s issue of `inf` at cycle `now` (after its
/// access, if any), whose result is ready at `ready` (`long`: from a
/// global or local access): the pipe's time, the scoreboard, a yield,
/// the warp's next instruction (its pipe, scoreboard waits, whether it
/// is local) and, when its stall outlasts the next cycle, its wake time
/// and the sub-partition's. False when that was its trace's last
/// instruction (it leaves at the end of the cycle; its state is left as
/// it is). `LOCAL`: `inf` is local and the warp not at a barrier.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn issue_end<const LOCAL: bool>(
    sub: &mut Sub,
    i: usize,
    warps: &mut [Warp],
    info: &[InstInfo],
    inf: &InstInfo,
    now: u64,
    ready: u64,
    long: bool,
    timeline: bool,
) -> bool {
    debug_assert!(!LOCAL || inf.local);
    if LOCAL || inf.pipe != Pipe::Lsu {
        sub.pipe_free[inf.pipe as usize] = now + inf.interval as u64;
    }
    if inf.yield_ {
        sub.greedy = None;
    }
    let r = &mut sub.warps[i];
    if inf.variable && (inf.wsb as usize) < SCOREBOARDS {
        let s = inf.wsb as usize;
        if ready > r.sb[s] {
            r.sb[s] = ready;
            r.sb_long = r.sb_long & !(1 << s) | (long as u8) << s;
        }
    }
    if r.left > 0 {
        r.left -= 1;
        r.idx += 1;
    } else {
        let w = &mut warps[r.slot as usize];
        w.pos += 1;
        let Some(&rec) = w.trace.recs.get(w.pos) else { return false };
        r.idx = rec.idx;
        r.left = rec.len - 1;
        r.last_run = w.pos + 1 == w.trace.recs.len();
        w.lanes = rec.lanes;
    }
    let next_inf = &info[r.idx as usize];
    r.pipe = next_inf.pipe;
    r.local = is_local(next_inf, r.left, r.last_run);
    (r.long_at, r.short_at) = sb_waits(&r.sb, r.sb_long, next_inf.req);
    // A warp whose stall count outlasts the next cycle: its verdict from
    // then until the stall elapses is known now (nothing else changes
    // it), so it is not looked at before.
    if (LOCAL || !r.at_bar) && r.next_issue > now + 1 {
        r.reason = if r.after_branch { StallReason::Branch } else { StallReason::Wait };
        if timeline {
            warps[r.slot as usize].span = Some((r.reason, now + 1));
        }
        r.wake = r.next_issue;
        sub.update_next();
    }
    true
}

/// Runs sub-partition `sub` ahead of the model's step, on its own, from
/// its next wake time: visit after visit (the look and the chosen warp's
/// issue, as a step would make them) for as long as every warp due at the
/// visit's cycle is local (`Resident::local`). It then stops with
/// `sub.next` that cycle, for a step to visit it as it would have.
///
/// Exact when the caller has made sure that nothing outside the
/// sub-partition changes it from the current step on (no CTA waits to be
/// placed, which could add a warp to it) and that no event order is
/// recorded (no timeline): then a local warp's verdict reads only its
/// own state and the sub-partition's pipes (not the SM's LSU), its issue
/// writes only those, its stall counts and the statistics (sums, in any
/// order), and it does not leave; with no warp of the sub-partition at a
/// barrier (checked here) no release changes one, and local issues put
/// none there. So each visit is the one the step at its cycle would make.
///
/// The visits stop at the first wake time of a warp that is not local: a
/// warp's `local` changes only when it issues, and the wake time of one
/// that is not local only when it is looked at, which is then too late.
/// (`GTO` and `PROF` as in [`run_local`].)
#[inline(always)]
fn run_ahead<const GTO: bool, const PROF: bool>(
    sub: &mut Sub,
    info: &[InstInfo],
    warps: &mut [Warp],
    stats: &mut SmStats,
    prof: &mut Option<SmProfile>,
) {
    let mut stop = u64::MAX;
    for r in &sub.warps {
        if r.at_bar {
            return;
        }
        if !r.local {
            stop = stop.min(r.wake);
        }
    }
    if sub.next < stop {
        debug_assert_eq!(PROF, prof.is_some());
        run_local::<GTO, PROF>(sub, stop, info, warps, stats, prof);
    }
}

/// `run_ahead`'s visits, before cycle `stop` (GTO or LRR; `PROF`: with
/// a profile, `prof` not None).
#[inline(never)]
fn run_local<const GTO: bool, const PROF: bool>(
    sub: &mut Sub,
    mut stop: u64,
    info: &[InstInfo],
    warps: &mut [Warp],
    stats: &mut SmStats,
    prof: &mut Option<SmProfile>,
) {
    let policy = if GTO { Policy::Gto } else { Policy::Lrr };
    // Without a profile, one the compiler knows is None (no check at
    // each count).
    let mut none = None;
    let prof = if PROF { prof } else { &mut none };
    // The issues counted here and added at the end (a count in a register,
    // not one in `stats` read and written back at each issue).
    let mut issued = 0;
    while sub.next < stop {
        let now = sub.next;
        // (No due warp is on the LSU's pipe: its time is not read.)
        if let Some(i) = look::<true>(sub, policy, now, 0, stats, prof) {
            let r = &mut sub.warps[i];
            let inf = &info[r.idx as usize];
            let ready = issue_start(r, inf, now, stats, prof);
            issued += 1;
            let more = issue_end::<true>(sub, i, warps, info, inf, now, ready, false, false);
            debug_assert!(more, "a local instruction is not a trace's last");
            let r = &sub.warps[i];
            if !r.local {
                stop = stop.min(r.wake);
            }
        }
    }
    stats.issued += issued;
}

/// The `k`-th of the `n` warps of a sub-partition (its index in the
/// list) a visit looks at, in the policy's order: GTO the greedy warp `g`
/// first, then the others oldest first (placement order; with no greedy
/// warp, `g` = 0 gives that order); LRR all in turn from `start`.
#[inline(always)]
fn policy_index(policy: Policy, k: usize, n: usize, g: usize, start: usize) -> usize {
    match policy {
        Policy::Gto if k == 0 => g,
        Policy::Gto if k <= g => k - 1,
        Policy::Gto => k,
        Policy::Lrr if start + k < n => start + k,
        Policy::Lrr => start + k - n,
    }
}

/// Why warp `w` cannot issue its next instruction at cycle `now` and the
/// cycle its verdict may change (None: it can issue). The SM's LSU is
/// free from `lsu_free`, the sub-partition's pipes from `pipe_free`.
/// `LOCAL`: the warp is local (not on the LSU's pipe) and not at a
/// barrier, so neither is checked.
#[inline(always)]
fn verdict<const LOCAL: bool>(w: &Resident, now: u64, lsu_free: u64, pipe_free: &[u64; PIPES]) -> Option<(StallReason, u64)> {
    debug_assert!(!LOCAL || (w.local && !w.at_bar));
    if !LOCAL && w.at_bar {
        return Some((StallReason::Barrier, u64::MAX));
    }
    if w.next_issue > now {
        return Some((if w.after_branch { StallReason::Branch } else { StallReason::Wait }, w.next_issue));
    }
    let t = w.long_at.max(w.short_at);
    if t > now {
        Some((if w.long_at > now { StallReason::LongScoreboard } else { StallReason::ShortScoreboard }, t))
    } else if !LOCAL && w.pipe == Pipe::Lsu && lsu_free > now {
        Some((StallReason::MemPipe, lsu_free))
    } else if (LOCAL || w.pipe != Pipe::Lsu) && pipe_free[w.pipe as usize] > now {
        Some((StallReason::MathPipe, pipe_free[w.pipe as usize]))
    } else {
        None
    }
}

/// When the scoreboards `req` names are released, those of `long` (set
/// by a global or local access) and the others: the latest of their
/// times in `sb` (0: none). The warp waits until both have passed, for a
/// long scoreboard as long as the first has not.
fn sb_waits(sb: &[u64; SCOREBOARDS], long: u8, mut req: u8) -> (u64, u64) {
    let (mut long_at, mut short_at) = (0, 0);
    while req != 0 {
        let s = req.trailing_zeros() as usize;
        req &= req - 1;
        if s < SCOREBOARDS {
            if long >> s & 1 != 0 {
                long_at = long_at.max(sb[s]);
            } else {
                short_at = short_at.max(sb[s]);
            }
        }
    }
    (long_at, short_at)
}

/// The cycles sub-partitions are looked at next: the next cycle's
/// sub-partitions (most entries) as a bit set over the global
/// sub-partition indices, those of the following [`WHEEL`] cycles as a
/// bit set per cycle (a timing wheel: one array, a cycle's set where the
/// cycle modulo `WHEEL` puts it, with a bit per cycle for the sets not
/// empty), later ones in a queue of (cycle, index). Entries whose
/// sub-partition's `next` has changed since are stale.
struct Agenda {
    soon: Vec<u64>,
    any_soon: bool,
    /// The wheel's bit sets, `soon.len()` words each.
    wheel: Vec<u64>,
    /// Per cycle of the wheel, whether its set has any bit.
    filled: [u64; WHEEL as usize / 64],
    later: BinaryHeap<Reverse<(u64, u32)>>,
}

/// Cycles ahead the agenda keeps in buckets (a power of two, a multiple of 64).
const WHEEL: u64 = 1024;

impl Agenda {
    fn new(subs: usize) -> Agenda {
        let words = subs.div_ceil(64);
        Agenda {
            soon: vec![0; words],
            any_soon: false,
            wheel: vec![0; words * WHEEL as usize],
            filled: [0; WHEEL as usize / 64],
            later: BinaryHeap::new(),
        }
    }

    #[inline]
    fn add(&mut self, now: u64, t: u64, g: usize) {
        if t == now + 1 {
            self.soon[g / 64] |= 1 << (g % 64);
            self.any_soon = true;
        } else if t.wrapping_sub(now) < WHEEL {
            let c = (t % WHEEL) as usize;
            self.wheel[c * self.soon.len() + g / 64] |= 1 << (g % 64);
            self.filled[c / 64] |= 1 << (c % 64);
        } else if t != u64::MAX {
            self.later.push(Reverse((t, g as u32)));
        }
    }

    /// The first cycle from `from` (the cycle after the last step) with
    /// an entry, if any.
    fn next(&self, from: u64) -> Option<u64> {
        if self.any_soon {
            return Some(from);
        }
        let limit = self.later.peek().map_or(u64::MAX, |r| r.0 .0);
        // The wheel's first filled cycle from `from` on (its cycles in
        // turn from `from`'s place, round once).
        let start = (from % WHEEL) as usize;
        let words = self.filled.len();
        for k in 0..=words {
            let w = (start / 64 + k) % words;
            let mut bits = self.filled[w];
            if k == 0 {
                bits &= u64::MAX << (start % 64);
            } else if k == words {
                bits &= !(u64::MAX << (start % 64));
            }
            if bits != 0 {
                let c = (w * 64 + bits.trailing_zeros() as usize) as u64;
                let t = from + (c + WHEEL - start as u64) % WHEEL;
                return Some(t.min(limit));
            }
        }
        (limit != u64::MAX).then_some(limit)
    }

    /// Moves the entries of cycle `now` to `soon` (each once), whose words
    /// the step then takes: the next cycle's entries start empty.
    fn gather(&mut self, now: u64) {
        let c = (now % WHEEL) as usize;
        if self.filled[c / 64] >> (c % 64) & 1 != 0 {
            self.filled[c / 64] &= !(1 << (c % 64));
            let words = self.soon.len();
            for (s, w) in self.soon.iter_mut().zip(&mut self.wheel[c * words..][..words]) {
                *s |= std::mem::take(w);
            }
        }
        while let Some(&Reverse((t, g))) = self.later.peek() {
            if t != now {
                break;
            }
            self.later.pop();
            self.soon[g as usize / 64] |= 1 << (g % 64);
        }
        self.any_soon = false;
    }
}

/// Runs the model. `next_cta(i)` runs CTA `i` on the interpreter and
/// returns its warps' traces (None: it trapped; the model stops).
///
/// Event-driven: a warp's verdict is looked at again only at the cycle it
/// can change (its `wake`); a step visits the sub-partitions with a warp to
/// look at, in SM and sub-partition order, and time jumps to the next such
/// cycle. Every verdict is the one a scan of every warp at every cycle
/// would give, and cycles are counted per warp and SM when they change.
pub(crate) fn run(
    m: &MachineDesc,
    prog: &Program,
    occ: &Occupancy,
    ncta: u64,
    profile: bool,
    timeline: bool,
    next_cta: &mut dyn FnMut(u64) -> Option<Vec<WarpTrace>>,
) -> (SmStats, Option<SmProfile>) {
    match (m.scheduler, profile) {
        (Policy::Gto, false) => run_with::<true, false>(m, prog, occ, ncta, timeline, next_cta),
        (Policy::Gto, true) => run_with::<true, true>(m, prog, occ, ncta, timeline, next_cta),
        (Policy::Lrr, false) => run_with::<false, false>(m, prog, occ, ncta, timeline, next_cta),
        (Policy::Lrr, true) => run_with::<false, true>(m, prog, occ, ncta, timeline, next_cta),
    }
}

/// [`run`] for one policy (`GTO`: greedy-then-oldest, else loose round
/// robin) with a profile or without (`PROF`): the step's looks and issues
/// then test neither at each warp.
fn run_with<const GTO: bool, const PROF: bool>(
    m: &MachineDesc,
    prog: &Program,
    occ: &Occupancy,
    ncta: u64,
    timeline: bool,
    next_cta: &mut dyn FnMut(u64) -> Option<Vec<WarpTrace>>,
) -> (SmStats, Option<SmProfile>) {
    let profile = PROF;
    let policy = if GTO { Policy::Gto } else { Policy::Lrr };
    // The profile the step's looks and issues count into: without one, a
    // None the compiler sees (no check at each count).
    let mut none: Option<SmProfile> = None;
    let info = inst_info(m, prog);
    let mut stats = SmStats {
        occupancy: occ.clone(),
        theoretical_occupancy: occ.theoretical(m),
        sms: m.sms,
        max_warps: m.max_warps,
        ..Default::default()
    };
    let mut prof =
        profile.then(|| SmProfile { stalls: vec![[0; STALL_REASONS]; prog.code.len()], timeline: Vec::new(), timeline_dropped: 0 });
    let nsub = m.subpartitions as usize;
    // Sub-partition `ui` of SM `si` is `subs[si * nsub + ui]`.
    let mut subs: Vec<Sub> = (0..m.sms as usize * nsub)
        .map(|g| Sub { warps: Vec::new(), next: u64::MAX, greedy: None, last: 0, sm: (g / nsub) as u32, pipe_free: [0; PIPES] })
        .collect();
    let mut sms: Vec<Sm> = (0..m.sms)
        .map(|_| Sm { l1: Cache::new(m.l1_bytes, m.line_bytes, m.sector_bytes, m.l1_ways), ctas: 0, warps: 0, since: 0, next_sub: 0 })
        .collect();
    // Per SM, the cycle its LSU is next free.
    let mut lsu_free_at: Vec<u64> = vec![0; m.sms as usize];
    let mut l2 = Cache::reusing(m.l2_bytes, m.line_bytes, m.sector_bytes, m.l2_ways);
    let mut l2_bw = Server { free: 0, rate: m.l2_sectors_per_cycle as u64 };
    let mut dram_bw = Server { free: 0, rate: m.dram_sectors_per_cycle as u64 };
    // Slots of warps, resident or left (`Warp::live`): a slot is reused.
    let mut warps: Vec<Warp> = Vec::new();
    let mut free_slots: Vec<usize> = Vec::new();
    let mut ctas: Vec<Option<CtaRun>> = Vec::new();
    let mut agenda = Agenda::new(m.sms as usize * nsub);
    let mut next: u64 = 0;
    let mut stopped = false;
    // The cycle being simulated; `at` is when new CTAs are placed.
    let mut now: u64 = 0;
    let mut resident = 0usize;
    let line_shift = (m.line_bytes / m.sector_bytes).trailing_zeros();
    // log2 of the sectors the caches look up at once: a line's, at most 64.
    let group_shift = line_shift.min(6);
    let (lat_l1, lat_l2, lat_dram) = (m.lat_l1 as u64, m.lat_l2 as u64, m.lat_dram as u64);
    let per_cta = occ.ctas_per_sm;

    // Places the next CTA on SM `s` (in CTA order) at cycle `at`: the
    // interpreter runs it.
    macro_rules! place_one {
        ($s:expr, $at:expr) => {{
            let (s, at): (usize, u64) = ($s, $at);
            if !stopped && next < ncta && sms[s].ctas < per_cta {
                let idx = next;
                next += 1;
                match next_cta(idx) {
                    None => stopped = true,
                    Some(traces) => {
                        let ci = ctas.len();
                        let mut run =
                            CtaRun { index: idx, sm: s, live: 0, expect: HashMap::new(), arrived: HashMap::new(), warps: Vec::new() };
                        sms[s].count(&mut stats, at);
                        for (wid, t) in traces.into_iter().enumerate() {
                            for a in &t.accesses {
                                if let Access::Bar { id, gen, wait: true } = *a {
                                    *run.expect.entry((id, gen)).or_insert(0) += 1;
                                }
                            }
                            if t.recs.is_empty() {
                                continue;
                            }
                            let sm = &mut sms[s];
                            let sub = sm.next_sub;
                            sm.next_sub = (sm.next_sub + 1) % nsub;
                            let first = t.recs[0];
                            let single = t.recs.len() == 1;
                            let w = Warp {
                                lanes: first.lanes,
                                trace: t,
                                pos: 0,
                                acc: 0,
                                cta: ci,
                                id: wid as u32,
                                sm: s as u32,
                                sub: sub as u32,
                                bar: None,
                                span: None,
                                live: true,
                            };
                            let slot = match free_slots.pop() {
                                Some(i) => {
                                    warps[i] = w;
                                    i
                                }
                                None => {
                                    warps.push(w);
                                    warps.len() - 1
                                }
                            };
                            let u = &mut subs[s * nsub + sub];
                            u.warps.push(Resident {
                                wake: at,
                                next_issue: at,
                                long_at: 0,
                                short_at: 0,
                                since: at,
                                idx: first.idx,
                                left: first.len - 1,
                                slot: slot as u32,
                                pipe: info[first.idx as usize].pipe,
                                reason: StallReason::Selected,
                                after_branch: false,
                                at_bar: false,
                                local: is_local(&info[first.idx as usize], first.len - 1, single),
                                last_run: single,
                                sb: [0; SCOREBOARDS],
                                sb_long: 0,
                            });
                            if at < u.next {
                                u.next = at;
                                agenda.add(now, at, s * nsub + sub);
                            }
                            sm.warps += 1;
                            run.warps.push(slot);
                            run.live += 1;
                            resident += 1;
                        }
                        sms[s].ctas += 1;
                        ctas.push(Some(run));
                        stats.ctas_placed += 1;
                    }
                }
                true
            } else {
                false
            }
        }};
    }
    // Breadth first: one CTA per SM in turn, as long as any fits.
    loop {
        let mut placed = false;
        for s in 0..sms.len() {
            placed |= place_one!(s, 0);
        }
        if !placed {
            break;
        }
    }
    let mut finished_ctas: Vec<usize> = Vec::new();
    let mut arrivals: Vec<(usize, u8, u32)> = Vec::new();
    let mut done_warps: Vec<(usize, usize)> = Vec::new();
    // The cycle after the last step (the launch's duration).
    let mut end: u64 = 0;
    while resident > 0 {
        // The next cycle with a verdict to look at.
        let t = match agenda.next(end) {
            Some(t) => t,
            None => {
                // Only barrier waits: cannot happen for a trace the
                // interpreter completed (it would have deadlocked); end
                // rather than spin.
                for r in subs.iter_mut().flat_map(|u| &mut u.warps) {
                    count_warp(&mut stats, &mut prof, r, end);
                }
                for sm in &mut sms {
                    sm.count(&mut stats, end);
                }
                break;
            }
        };
        now = t;
        agenda.gather(now);
        // Each due sub-partition in turn: the verdicts of its warps due now,
        // its choice, and the chosen warp's issue. The verdicts of a cycle
        // see the LSU as it was before the cycle's issues: the due
        // sub-partitions are visited in SM order (the bits of `soon`, word
        // by word), so the first of an SM takes the SM's LSU time for the
        // others.
        let mut lsu_sm = usize::MAX;
        let mut lsu_free = 0;
        // No CTA waits to be placed (which could put a warp on any
        // sub-partition of an SM whose CTA ends) and no timeline (whose
        // events are in the order of the cycles): a visited sub-partition
        // may run ahead on its own (`run_ahead`).
        let isolated = !timeline && (stopped || next >= ncta);
        let ahead = resident >= PREFETCH_FROM;
        for word in 0..agenda.soon.len() {
            // The word's due sub-partitions, taken whole before they are visited
            // (a visit that puts its sub-partition on the agenda for the next
            // cycle sets its bit anew; no list of the cycle's sub-partitions is
            // made first).
            let mut due = std::mem::take(&mut agenda.soon[word]);
            // The word's due sub-partitions' warps asked for ahead of their
            // visits when there are too many warps for the host's
            // first-level cache to keep them from one step to the next.
            if ahead {
                prefetch_warps(&subs, word, due);
            }
            'visit: while due != 0 {
                let g = word * 64 + due.trailing_zeros() as usize;
                due &= due - 1;
                let sub = &mut subs[g];
                if sub.next != now {
                    continue; // stale
                }
                let si = sub.sm as usize;
                if si != lsu_sm {
                    (lsu_sm, lsu_free) = (si, lsu_free_at[si]);
                }
                let chosen = look::<false>(sub, policy, now, lsu_free, &mut stats, if PROF { &mut prof } else { &mut none });
                if let (Some(p), true) = (prof.as_mut(), timeline) {
                    for r in &sub.warps {
                        let w = &mut warps[r.slot as usize];
                        let cta = ctas[w.cta].as_ref().map(|c| c.index).unwrap_or(0);
                        timeline_step(p, w, r.reason, si as u32, cta, r.idx, now);
                    }
                }
                // The chosen warp's issue.
                let mut then_local = false;
                if let Some(i) = chosen {
                    let (lsu_free, l1) = (&mut lsu_free_at[si], &mut sms[si].l1);
                    let r = &mut sub.warps[i];
                    let w = &mut warps[r.slot as usize];
                    let inf = &info[r.idx as usize];
                    let mut ready = issue_start(r, inf, now, &mut stats, if PROF { &mut prof } else { &mut none });
                    stats.issued += 1;
                    let mut long = false;
                    let access = if inf.access {
                        w.acc += 1;
                        // The warp's accesses a host line ahead (each read once,
                        // long after the interpreter wrote it).
                        prefetch(w.trace.accesses.as_ptr().wrapping_add(w.acc + 3));
                        w.trace.accesses[w.acc - 1]
                    } else {
                        Access::None
                    };
                    match access {
                        Access::Sectors { .. } | Access::Ranges { .. } => {
                            // The sectors: a list in the trace, or two ranges
                            // in the record (the second maybe empty).
                            let (list, ranges, store, atomic): (&[u64], _, _, _) = match access {
                                Access::Sectors { start, count, store, atomic } => {
                                    (&w.trace.sectors[start as usize..start as usize + count as usize], [(0, 0); 2], store, atomic)
                                }
                                Access::Ranges { first, gap, count, store } => {
                                    let second = first + gap as u64;
                                    (&[], [(first, count[0] as u64), (second, count[1] as u64)], store, false)
                                }
                                _ => unreachable!("an access with sectors"),
                            };
                            // Lines: the changes of line along the sorted sectors.
                            let mut lines = 0u64;
                            let mut prev = u64::MAX;
                            for &sct in list {
                                if sct >> line_shift != prev {
                                    lines += 1;
                                    prev = sct >> line_shift;
                                }
                            }
                            for (first, n) in ranges.into_iter().filter(|r| r.1 > 0) {
                                let (a, b) = (first >> line_shift, (first + n - 1) >> line_shift);
                                lines += b - a + (a != prev) as u64;
                                prev = b;
                            }
                            let count = list.len() as u64 + ranges[0].1 + ranges[1].1;
                            let begin = now.max(*lsu_free);
                            let occupy = lines.div_ceil(m.lsu_lines_per_cycle as u64).max(1);
                            *lsu_free = begin + occupy;
                            stats.sectors += count;
                            stats.lines += lines;
                            let mut done = begin + occupy;
                            // A sector's request: when its data is back (a macro, so that
                            // it is inlined in both loops below).
                            macro_rules! serve {
                                ($sct:expr) => {{
                                    let sct: u64 = $sct;
                                    if atomic {
                                        let a = l2_bw.serve(begin);
                                        l2.access(sct);
                                        a + m.lat_atomic as u64
                                    } else if store {
                                        l1.invalidate(sct);
                                        let a = l2_bw.serve(begin);
                                        if !l2.access(sct) {
                                            stats.l2_misses += 1;
                                        }
                                        a
                                    } else if l1.access(sct) {
                                        stats.l1_hits += 1;
                                        begin + lat_l1
                                    } else {
                                        stats.l1_misses += 1;
                                        let a = l2_bw.serve(begin);
                                        if l2.access(sct) {
                                            stats.l2_hits += 1;
                                            a + lat_l2
                                        } else {
                                            stats.l2_misses += 1;
                                            dram_bw.serve(a) + lat_dram
                                        }
                                    }
                                }};
                            }
                            // The requests of the `n` sectors `base + i`, `i` the bits of
                            // `want`, in one line: the caches looked up once for them
                            // all (`Cache::access_line`), the servers taken sector by
                            // sector in order, as `serve` one after another would.
                            macro_rules! serve_line {
                                ($base:expr, $want:expr, $n:expr) => {{
                                    let (base, want, n): (u64, u64, usize) = ($base, $want, $n);
                                    if atomic {
                                        for _ in 0..n {
                                            done = done.max(l2_bw.serve(begin) + m.lat_atomic as u64);
                                        }
                                        l2.access_line(base, want, n);
                                    } else if store {
                                        l1.invalidate_line(base, want);
                                        let (_, k) = l2.access_line(base, want, n);
                                        stats.l2_misses += (n - k) as u64;
                                        for _ in 0..n {
                                            done = done.max(l2_bw.serve(begin));
                                        }
                                    } else {
                                        let (hits, k) = l1.access_line(base, want, n);
                                        stats.l1_hits += k as u64;
                                        stats.l1_misses += (n - k) as u64;
                                        if k != 0 {
                                            done = done.max(begin + lat_l1);
                                        }
                                        if k < n {
                                            let mut miss = want & !hits;
                                            let (l2_hits, l2_k) = l2.access_line(base, miss, n - k);
                                            stats.l2_hits += l2_k as u64;
                                            stats.l2_misses += (n - k - l2_k) as u64;
                                            while miss != 0 {
                                                let i = miss.trailing_zeros();
                                                miss &= miss - 1;
                                                let a = l2_bw.serve(begin);
                                                done =
                                                    done.max(if l2_hits >> i & 1 != 0 { a + lat_l2 } else { dram_bw.serve(a) + lat_dram });
                                            }
                                        }
                                    }
                                }};
                            }
                            for &sct in list {
                                done = done.max(serve!(sct));
                            }
                            for (first, n) in ranges {
                                if n < LINE_LOOKUP {
                                    for sct in first..first + n {
                                        done = done.max(serve!(sct));
                                    }
                                    continue;
                                }
                                // A line's sectors at a time (at most 64: a group's first
                                // sector's bits below `group_shift` are 0).
                                let (mut s, end) = (first, first + n);
                                while s < end {
                                    let base = s >> group_shift << group_shift;
                                    let to = end.min(base + (1 << group_shift));
                                    let want = (u64::MAX >> (64 - (to - s))) << (s - base);
                                    serve_line!(base, want, (to - s) as usize);
                                    s = to;
                                }
                            }
                            ready = done;
                            long = true;
                        }
                        Access::Shared { wavefronts } => {
                            let begin = now.max(*lsu_free);
                            *lsu_free = begin + wavefronts as u64;
                            stats.shared_wavefronts += wavefronts as u64;
                            stats.shared_accesses += 1;
                            ready = begin + wavefronts as u64 + m.lat_shared as u64;
                        }
                        Access::Bar { id, gen, wait } => {
                            if wait {
                                w.bar = Some((id, gen));
                                r.at_bar = true;
                                arrivals.push((w.cta, id, gen));
                            }
                        }
                        Access::None => {
                            if inf.pipe == Pipe::Lsu {
                                // No executing lane: an issue, no round trip.
                                ready = now + 1;
                            }
                        }
                    }
                    if !issue_end::<false>(sub, i, &mut warps, &info, inf, now, ready, long, timeline) {
                        done_warps.push((g, i));
                        continue 'visit;
                    }
                    then_local = sub.warps[i].local;
                }
                // The sub-partition alone for as long as nothing else can
                // change it or read what it changes.
                if isolated && then_local {
                    run_ahead::<GTO, PROF>(sub, &info, &mut warps, &mut stats, &mut prof);
                }
                agenda.add(now, sub.next, g);
            }
        }
        // Barrier arrivals; the last one of an instance releases its warps.
        for (ci, id, gen) in arrivals.drain(..) {
            let Some(c) = ctas[ci].as_mut() else { continue };
            let a = c.arrived.entry((id, gen)).or_insert(0);
            *a += 1;
            if *a >= c.expect.get(&(id, gen)).copied().unwrap_or(0) {
                for &o in &c.warps {
                    let ow = &mut warps[o];
                    if ow.live && ow.bar == Some((id, gen)) && ow.cta == ci {
                        ow.bar = None;
                        let (s, u) = (ow.sm as usize, ow.sub as usize);
                        let sub = &mut subs[s * nsub + u];
                        if let Some(r) = sub.warps.iter_mut().find(|r| r.slot as usize == o) {
                            r.at_bar = false;
                            r.next_issue = r.next_issue.max(now + 1);
                            r.wake = now + 1;
                            if now + 1 < sub.next {
                                sub.next = now + 1;
                                agenda.add(now, now + 1, s * nsub + u);
                            }
                        }
                    }
                }
            }
        }
        // Warps that issued their last instruction leave.
        for &(g, i) in done_warps.iter().rev() {
            let sub = &mut subs[g];
            let si = sub.sm as usize;
            sms[si].count(&mut stats, now + 1);
            let slot = sub.remove(i);
            sub.update_next();
            agenda.add(now, sub.next, g);
            if sub.last >= sub.warps.len() {
                sub.last = 0;
            }
            sms[si].warps -= 1;
            let w = &mut warps[slot];
            if let (Some(p), true) = (prof.as_mut(), timeline) {
                let cta = ctas[w.cta].as_ref().map(|c| c.index).unwrap_or(0);
                close_span(p, w, si as u32, cta, 0, now + 1);
            }
            w.live = false;
            w.trace = WarpTrace::default();
            if let Some(c) = ctas[w.cta].as_mut() {
                c.live -= 1;
                if c.live == 0 {
                    finished_ctas.push(w.cta);
                }
            }
            free_slots.push(slot);
            resident -= 1;
        }
        done_warps.clear();
        end = now + 1;
        // CTAs with no live warps free their SM; the next ones start next cycle.
        for ci in finished_ctas.drain(..) {
            if let Some(run) = ctas[ci].take() {
                sms[run.sm].ctas -= 1;
                while place_one!(run.sm, end) {}
            }
        }
    }
    l2.recycle();
    stats.cycles = end;
    stats.warp_cycles = stats.stall_cycles.iter().sum();
    (stats, prof)
}

/// Extends or closes the warp's stall span for its verdict `reason` at
/// its next instruction `idx`, and records an issue.
fn timeline_step(p: &mut SmProfile, w: &mut Warp, reason: StallReason, sm: u32, cta: u64, idx: u32, now: u64) {
    let pc = crate::program::CODE_BASE + 16 * idx as u64;
    if reason == StallReason::Selected {
        close_span(p, w, sm, cta, idx, now);
        w.span = None;
        push(p, TimelineEvent { cta, warp: w.id, pc, cycle: now, cycles: 1, lanes: w.lanes.count_ones(), sm: Some(sm), stall: None });
        return;
    }
    match w.span {
        Some((r, _)) if r == reason => {}
        _ => {
            close_span(p, w, sm, cta, idx, now);
            w.span = Some((reason, now));
        }
    }
}

/// Closes the warp's stall span at `now`; `idx`: its next instruction (0
/// when it left).
fn close_span(p: &mut SmProfile, w: &Warp, sm: u32, cta: u64, idx: u32, now: u64) {
    if let Some((r, start)) = w.span {
        if now > start {
            let pc = crate::program::CODE_BASE + 16 * idx as u64;
            push(
                p,
                TimelineEvent { cta, warp: w.id, pc, cycle: start, cycles: (now - start) as u32, lanes: 0, sm: Some(sm), stall: Some(r) },
            );
        }
    }
}

fn push(p: &mut SmProfile, e: TimelineEvent) {
    if p.timeline.len() < TIMELINE_LIMIT {
        p.timeline.push(e);
    } else {
        p.timeline_dropped += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::{Cache, SetIndex};

    /// The set index against `%`: for the L1's and L2's sets of the A100
    /// (56, 20 480) every line below 2^26 (the addresses below 2^33: global
    /// memory starts at 2^32), for other divisors every line below 2^20;
    /// for all, the lines around multiples of the divisor up to 2^40 and
    /// around 2^32 (past it a division).
    #[test]
    fn set_index_is_the_remainder() {
        for sets in [56u64, 20_480, 3, 7, 1000, 1 << 12, 1, (1 << 32) - 1, 1 << 32, (1 << 32) + 5] {
            let index = SetIndex::new(sets);
            let check = |line: u64| assert_eq!(index.of(line, sets), line % sets, "{line} % {sets}");
            let all = if sets == 56 || sets == 20_480 { 1u64 << 26 } else { 1 << 20 };
            (0..all).for_each(check);
            let mut k = 1u64;
            while k * sets < 1 << 40 {
                for m in [k * sets, (k | 1) * sets, u32::MAX as u64 / sets * sets] {
                    (m.saturating_sub(2)..m + 2).for_each(check);
                }
                k *= 3;
            }
            ((u32::MAX as u64 - 1000)..(u32::MAX as u64 + 1000)).for_each(check);
            (0..1000).chain((0..64).map(|i| 1u64 << i)).for_each(check);
        }
    }

    /// The cache against a plain LRU (per set, its entries from least to
    /// most recently used; an invalidated one stays in its place, empty) on
    /// a pseudo-random stream of lookups and invalidations that fills sets
    /// past their small block and evicts: the same hits, in blocks (also
    /// with arrays reused from an earlier cache) and as one flat array,
    /// with a power of two of sets and not.
    #[test]
    fn cache_is_a_sectored_lru() {
        for round in 0..4 {
            // 4 (or 3) sets of 4 lines of 4 sectors.
            let sets = if round < 2 { 4 } else { 3 };
            // Rounds 0 and 2 blocks, 1 and 3 one flat array.
            let mut c = if round % 2 == 0 { Cache::reusing(sets * 4 * 128, 128, 32, 4) } else { Cache::new(sets * 4 * 128, 128, 32, 4) };
            assert_eq!(c.flat_len == 0, round % 2 == 0);
            let mut model: Vec<Vec<Option<u64>>> = vec![Vec::new(); sets as usize];
            // A lookup in the plain LRU: a hit.
            let lru = |set: &mut Vec<Option<u64>>, sct: u64| {
                let found = set.iter().position(|&s| s == Some(sct));
                match found {
                    Some(i) => {
                        set.remove(i);
                    }
                    None if set.len() == 16 => {
                        set.remove(0);
                    }
                    None => {}
                }
                set.push(Some(sct));
                found.is_some()
            };
            let mut x = 12345u64 + round;
            for _ in 0..20_000 {
                x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                let sct = (x >> 33) % 160;
                let set = &mut model[((sct / 4) % sets) as usize];
                let found = set.iter().position(|&s| s == Some(sct));
                if (x >> 20).is_multiple_of(8) {
                    c.invalidate(sct);
                    if let Some(i) = found {
                        set[i] = None;
                    }
                    continue;
                }
                if (x >> 24).is_multiple_of(3) {
                    // A line's lookups at once (or invalidations), some of
                    // its four sectors.
                    let (base, want) = (sct / 4 * 4, (x >> 40) % 15 + 1);
                    if (x >> 50).is_multiple_of(4) {
                        c.invalidate_line(base, want);
                    } else {
                        let mut hits = 0u64;
                        for i in (0..4).filter(|i| want >> i & 1 != 0) {
                            if lru(set, base + i) {
                                hits |= 1 << i;
                            }
                        }
                        let n = (0..4).filter(|i| want >> i & 1 != 0).count();
                        assert_eq!(c.access_line(base, want, n), (hits, hits.count_ones() as usize), "line {base} {want:b}");
                        continue;
                    }
                    for i in (0..4).filter(|i| want >> i & 1 != 0) {
                        if let Some(e) = set.iter_mut().find(|e| **e == Some(base + i)) {
                            *e = None;
                        }
                    }
                    continue;
                }
                assert_eq!(c.access(sct), lru(set, sct), "sector {sct}");
            }
            if c.flat_len == 0 {
                c.recycle();
            }
        }
    }
}
