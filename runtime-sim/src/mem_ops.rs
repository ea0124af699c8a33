//! Memory instructions: loads, stores, LDC and ATOM over the global, shared,
//! local and generic spaces (docs/isa-extensions.md, section 4 and 6.12–6.15).
//!
//! Every lane of an instruction is checked (alignment, bounds) before any
//! effect happens, so a faulting instruction changes nothing.

use crate::machine::{each_lane, lanes, Halves, Warp, HALF};
use crate::memory::{check_align, le_load, le_store, window, zeroed, ConstBanks, Global, GlobalMemory, LOCAL_WINDOW, SHARED_WINDOW};
use crate::ops::{AddrSpace, AtomOp, MemTy, Op, Src64};
use crate::regs::{Regs, LANES};
use crate::sm_trace::{Recorder, WarpTrace};
use crate::trap::{Fault, Space, TrapKind};

/// The memories one instruction may touch.
struct Spaces<'a> {
    global: &'a mut GlobalMemory,
    shared: &'a mut [u8],
    local: &'a mut Vec<u8>,
    local_size: u32,
}

impl Spaces<'_> {
    /// The bytes of an access by lane `l`, after the generic decode.
    fn bytes(&mut self, space: AddrSpace, addr: u64, n: u32, l: usize) -> Result<&mut [u8], TrapKind> {
        let (space, addr) = match space {
            AddrSpace::Generic => match addr >> 32 {
                SHARED_WINDOW => (AddrSpace::Shared, addr & 0xffff_ffff),
                LOCAL_WINDOW => (AddrSpace::Local, addr & 0xffff_ffff),
                _ => (AddrSpace::Global, addr),
            },
            s => (s, addr),
        };
        match space {
            AddrSpace::Global => {
                check_align(Space::Global, addr, n)?;
                self.global.bytes(addr, n as u64)
            }
            AddrSpace::Shared => {
                check_align(Space::Shared, addr, n)?;
                window(self.shared, Space::Shared, addr, n)
            }
            _ => {
                check_align(Space::Local, addr, n)?;
                let size = self.local_size as usize;
                if self.local.is_empty() {
                    // The launch checked that 32 × local_size fits its memory
                    // limit; the host may still not have that much.
                    let bytes = size * LANES;
                    *self.local = zeroed(bytes).ok_or(TrapKind::HostMemory { space: Space::Local, bytes: bytes as u64, limit: None })?;
                }
                window(&mut self.local[l * size..(l + 1) * size], Space::Local, addr, n)
            }
        }
    }
}

/// The registers' worth of one lane's loaded bytes: a sub-word value
/// extended to 32 bits, or up to four little-endian words.
#[inline(always)]
fn load_words(ty: MemTy, b: &[u8]) -> [u32; 4] {
    let mut w = [0u32; 4];
    if b.len() < 4 {
        w[0] = ty.extend(le_load(b));
    } else {
        for (k, word) in w.iter_mut().enumerate().take(b.len() / 4) {
            *word = le_load(&b[4 * k..4 * k + 4]) as u32;
        }
    }
    w
}

/// Writes loaded words to the destination registers of the executing lanes.
fn write_rows(regs: &mut Regs, d: [u16; 4], ty: MemTy, data: &[[u32; 4]; LANES], e: u32) {
    for (k, row) in d.iter().enumerate().take(ty.regs()) {
        let r = &mut regs.r[*row as usize];
        for l in lanes(e) {
            r[l] = data[l][k];
        }
    }
}

fn address(space: AddrSpace, base: u64, ofs: i32) -> u64 {
    match space {
        AddrSpace::Shared | AddrSpace::Local => (base as u32).wrapping_add(ofs as u32) as u64,
        _ => base.wrapping_add(ofs as i64 as u64),
    }
}

/// The 32 lanes' address registers `a` (`Regs::get64`), or the fault of
/// reading them returned; a register pair is read straight into the array
/// ([`Regs::pair64`]: an array returned through a `Result` is copied once
/// more, a `memcpy` of 256 bytes per load).
macro_rules! address_rows {
    ($regs:expr, $a:expr, $cb:expr) => {
        match $a {
            Src64::R(lo, hi) => $regs.pair64(lo, hi),
            a => $regs.get64::<32>(a, $cb)?,
        }
    };
}

/// Executes a memory instruction for the executing lanes `e`; under the
/// SM model, `record` gets the access of a load, store or atomic.
pub(crate) fn exec(
    op: &Op,
    warp: &mut Warp,
    shared: &mut [u8],
    mem: &mut Global,
    cb: &ConstBanks,
    e: u32,
    mut record: Option<&mut Recorder>,
) -> Result<(), Fault> {
    if e == 0 {
        return Ok(());
    }
    // Shared and local accesses and LDC never touch global memory: only the
    // others take the lock of a parallel launch.
    let touches_global = match *op {
        Op::Load { space, .. } | Op::Store { space, .. } => matches!(space, AddrSpace::Global | AddrSpace::Generic),
        Op::Atom { space, .. } => space != AddrSpace::Shared,
        _ => false,
    };
    let mut unused = GlobalMemory::new();
    let mut guard;
    let global: &mut GlobalMemory = match mem {
        Global::Own(m) => m,
        Global::Shared(m) if touches_global => {
            guard = m.lock().unwrap_or_else(|p| p.into_inner());
            &mut guard
        }
        Global::Shared(_) => &mut unused,
    };
    let Warp { regs, local, local_size, id, .. } = warp;
    let id = *id as usize;
    // The common case first: a 32-bit global load or store of a full warp
    // whose address register pair has a simple shape (`Halves::of_pair`):
    // no 64-bit lane addresses are made. Anything else, and an access that
    // faults, goes on below (its record taken here, if it was made).
    match *op {
        Op::Load { space: AddrSpace::Global, d, a: Src64::R(lo, hi), ofs, ty: MemTy::B32 }
        | Op::Store { space: AddrSpace::Global, s: d, a: Src64::R(lo, hi), ofs, ty: MemTy::B32 } => {
            if let Some(h) = Halves::of_pair(&regs.r[lo as usize], &regs.r[hi as usize], 4, e) {
                if let Some(r) = record.take() {
                    r.access_shaped(id, op, h, || regs.pair64(lo, hi));
                }
                if let Some((at, bytes)) = halves_span(global, &h, ofs, 4) {
                    if matches!(op, Op::Load { .. }) {
                        load_halves(&mut regs.r[d[0] as usize], bytes, at, &h, ofs);
                    } else {
                        store_halves(bytes, at, &regs.r[d[0] as usize], &h, ofs);
                    }
                    return Ok(());
                }
            }
        }
        _ => {}
    }
    match *op {
        Op::Load { space, d, a, ofs, ty } if touches_global => {
            let base = address_rows!(regs, a, cb);
            let halves = Halves::of(&base, ty.bytes(), e);
            trace(&mut record, id, op, &base, e, halves);
            if let Some((at, bytes)) = global_span(global, space, &base, ofs, ty.bytes(), e, halves) {
                if ty == MemTy::B32 {
                    load_row(&mut regs.r[d[0] as usize], bytes, at, &base, ofs, e, halves);
                    return Ok(());
                }
                let n = ty.bytes() as usize;
                let mut data = [[0u32; 4]; LANES];
                for l in lanes(e) {
                    let o = (base[l].wrapping_add(ofs as i64 as u64) - at) as usize;
                    data[l] = load_words(ty, &bytes[o..o + n]);
                }
                write_rows(regs, d, ty, &data, e);
                return Ok(());
            }
        }
        Op::Store { space, s, a, ofs, ty } if touches_global => {
            let base = address_rows!(regs, a, cb);
            let halves = Halves::of(&base, ty.bytes(), e);
            trace(&mut record, id, op, &base, e, halves);
            if let Some((at, bytes)) = global_span(global, space, &base, ofs, ty.bytes(), e, halves) {
                if ty == MemTy::B32 {
                    store_row(bytes, at, &regs.r[s[0] as usize], &base, ofs, e, halves);
                    return Ok(());
                }
                let n = ty.bytes() as usize;
                for l in lanes(e) {
                    let o = (base[l].wrapping_add(ofs as i64 as u64) - at) as usize;
                    store_lane(&mut bytes[o..o + n], regs, s, l);
                }
                return Ok(());
            }
        }
        _ => {}
    }
    let mut sp = Spaces { global, shared, local, local_size: *local_size };
    match *op {
        Op::Load { space, d, a, ofs, ty } => {
            let base = address_rows!(regs, a, cb);
            trace(&mut record, id, op, &base, e, None);
            let n = ty.bytes();
            let mut data = [[0u32; 4]; LANES];
            for l in lanes(e) {
                let b = sp.bytes(space, address(space, base[l], ofs), n, l).map_err(|k| Fault::at(k, l))?;
                data[l] = load_words(ty, b);
            }
            write_rows(regs, d, ty, &data, e);
        }
        Op::Store { space, s, a, ofs, ty } => {
            let base = address_rows!(regs, a, cb);
            trace(&mut record, id, op, &base, e, None);
            let n = ty.bytes();
            for l in lanes(e) {
                sp.bytes(space, address(space, base[l], ofs), n, l).map_err(|k| Fault::at(k, l))?;
            }
            for l in lanes(e) {
                let b = sp.bytes(space, address(space, base[l], ofs), n, l).map_err(|k| Fault::at(k, l))?;
                store_lane(b, regs, s, l);
            }
        }
        Op::Ldc { d, a, bank, off, ty } => {
            let base = regs.get::<32>(a, cb)?;
            let n = ty.bytes();
            let mut data = [[0u32; 4]; LANES];
            for l in lanes(e) {
                let addr = base[l].wrapping_add(off as u32) as u64;
                let full = (bank as u64) << 32 | addr;
                if !addr.is_multiple_of(n as u64) {
                    return Err(Fault::at(TrapKind::Misaligned { space: Space::Constant, addr: full, size: n }, l));
                }
                if addr > 0xffff {
                    return Err(Fault::at(TrapKind::OutOfBounds { space: Space::Constant, addr: full, size: n }, l));
                }
                let b = cb.read(bank, addr, n).map_err(|k| Fault::at(k, l))?;
                data[l] = load_words(ty, b);
            }
            write_rows(regs, d, ty, &data, e);
        }
        Op::Atom { space, d, a, ofs, b, c, op: aop, wide, signed } => {
            let base = address_rows!(regs, a, cb);
            trace(&mut record, id, op, &base, e, None);
            let (vb, vc) = (regs.get64::<32>(b, cb)?, regs.get64::<32>(c, cb)?);
            let n = if wide { 8 } else { 4 };
            for l in lanes(e) {
                sp.bytes(space, address(space, base[l], ofs), n, l).map_err(|k| Fault::at(k, l))?;
            }
            let mut old = [0u64; LANES];
            for l in lanes(e) {
                let m = sp.bytes(space, address(space, base[l], ofs), n, l).map_err(|k| Fault::at(k, l))?;
                let o = le_load(m);
                old[l] = o;
                le_store(m, atom(aop, o, vb[l], vc[l], wide, signed));
            }
            regs.put64::<32>(d, &old, e);
        }
        _ => unreachable!("not a memory op: {:?}", op),
    }
    Ok(())
}

/// The full-warp issue loop's form (`exec.rs`) of a 32-bit global load
/// or store: [`exec`]'s first case when it completes there, an address
/// register pair of a simple shape ([`Halves::of_pair`]) with every lane's
/// word aligned and inside one allocation, its access recorded in the
/// warp's trace `t` (`shift`: log2 of the sector size) when the SM model
/// is on. False, with nothing changed, for anything else (another
/// instruction or shape, an access that would fault): the general path
/// (`exec`) runs it then.
#[inline(always)]
pub(crate) fn word_shaped(op: &Op, regs: &mut Regs, global: &mut GlobalMemory, trace: Option<(&mut WarpTrace, u32)>) -> bool {
    let (Op::Load { space: AddrSpace::Global, d, a: Src64::R(lo, hi), ofs, ty: MemTy::B32 }
    | Op::Store { space: AddrSpace::Global, s: d, a: Src64::R(lo, hi), ofs, ty: MemTy::B32 }) = *op
    else {
        return false;
    };
    let Some(h) = Halves::of_pair(&regs.r[lo as usize], &regs.r[hi as usize], 4, u32::MAX) else {
        return false;
    };
    let Some((at, bytes)) = halves_span(global, &h, ofs, 4) else {
        return false;
    };
    let store = matches!(op, Op::Store { .. });
    // (The bounds above hold the ranges' sectors: not refused here.)
    if let Some((t, shift)) = trace {
        if !t.push_shaped(h, ofs, 4, shift, store) {
            return false;
        }
    }
    if store {
        store_halves(bytes, at, &regs.r[d[0] as usize], &h, ofs);
    } else {
        load_halves(&mut regs.r[d[0] as usize], bytes, at, &h, ofs);
    }
    true
}

/// Records a load's, store's or atomic's access in the SM model's trace
/// from the lane addresses `base` it read (`halves`: their shape, when
/// [`Halves::of`] found one): once, whichever path then runs it (`record`
/// is emptied).
#[inline(always)]
fn trace(record: &mut Option<&mut Recorder>, warp: usize, op: &Op, base: &[u64; LANES], e: u32, halves: Option<Halves>) {
    if let Some(r) = record.take() {
        r.access(warp, op, base, e, halves);
    }
}

/// Writes lane `l`'s words of the registers `s` to its bytes `b`.
#[inline(always)]
fn store_lane(b: &mut [u8], regs: &Regs, s: [u16; 4], l: usize) {
    if b.len() <= 4 {
        le_store(b, regs.r[s[0] as usize][l] as u64);
    } else {
        for k in 0..b.len() / 4 {
            le_store(&mut b[4 * k..4 * k + 4], regs.r[s[k] as usize][l] as u64);
        }
    }
}

/// The fast path of a global access: when the addresses `base + ofs` of
/// the executing lanes `e` (`n` bytes each) are all global (not in a
/// generic window), aligned and inside one allocation, that allocation's
/// base and bytes. None sends the access to the per-lane path, which finds
/// the first faulting lane.
#[inline(always)]
fn global_span<'m>(
    global: &'m mut GlobalMemory,
    space: AddrSpace,
    base: &[u64; LANES],
    ofs: i32,
    n: u32,
    e: u32,
    halves: Option<Halves>,
) -> Option<(u64, &'m mut [u8])> {
    let (lo, hi, bits) = match halves {
        Some(h) => halves_bounds(&h, ofs, n)?,
        None => lane_bounds(base, ofs, e),
    };
    if bits & (n as u64 - 1) != 0 || (space == AddrSpace::Generic && any_in_window(base, ofs, e)) {
        return None;
    }
    let len = hi.checked_add(n as u64)? - lo;
    let (at, bytes) = global.allocation(lo, len)?;
    Some((at, bytes))
}

/// [`global_span`] of a global access (no generic windows to look for) of
/// the shape `h`.
#[inline(always)]
fn halves_span<'m>(global: &'m mut GlobalMemory, h: &Halves, ofs: i32, n: u32) -> Option<(u64, &'m mut [u8])> {
    let (lo, hi, bits) = halves_bounds(h, ofs, n)?;
    if bits & (n as u64 - 1) != 0 {
        return None;
    }
    let len = hi.checked_add(n as u64)? - lo;
    global.allocation(lo, len)
}

/// The lowest and highest of the addresses of the shape `h` plus `ofs`,
/// and their bitwise OR (for the alignment check): each half's first and
/// last lane's. None for a half that wraps around the address space (it
/// takes the per-lane path).
#[inline(always)]
fn halves_bounds(h: &Halves, ofs: i32, n: u32) -> Option<(u64, u64, u64)> {
    let (mut lo, mut hi, mut bits) = (u64::MAX, 0u64, 0u64);
    for k in 0..2 {
        let a = h.first[k].wrapping_add(ofs as i64 as u64);
        let last = a.checked_add(h.bytes(k, n) - n as u64)?;
        (lo, hi, bits) = (lo.min(a), hi.max(last), bits | a);
    }
    Some((lo, hi, bits))
}

/// A 32-bit load's fast path: each executing lane's word at
/// `base + ofs`, in `bytes` (which start at address `at`), straight into
/// the destination row; with `halves`, each half's words in one copy (or
/// one word for all its lanes). Plain loops rather than [`each_lane`]'s,
/// whose per-lane closure the compiler left as a call here.
#[inline(always)]
fn load_row(row: &mut [u32; LANES], bytes: &[u8], at: u64, base: &[u64; LANES], ofs: i32, e: u32, halves: Option<Halves>) {
    if let Some(h) = halves {
        return load_halves(row, bytes, at, &h, ofs);
    }
    let last = bytes.len().checked_sub(4).expect("global_span found a word in the allocation");
    let word = |o: usize| u32::from_le_bytes(bytes[o..o + 4].try_into().expect("four bytes"));
    let lane = |l: usize| word(word_at(base[l], ofs, at, last));
    if e == u32::MAX {
        for (l, r) in row.iter_mut().enumerate() {
            *r = lane(l);
        }
    } else {
        for l in lanes(e) {
            row[l] = lane(l);
        }
    }
}

/// [`load_row`] of the shape `h`: each half's words in one copy (or one
/// word for all its lanes).
#[inline(always)]
fn load_halves(row: &mut [u32; LANES], bytes: &[u8], at: u64, h: &Halves, ofs: i32) {
    let last = bytes.len().checked_sub(4).expect("global_span found a word in the allocation");
    for (k, half) in row.chunks_exact_mut(HALF).enumerate() {
        let o = word_at(h.first[k], ofs, at, last);
        if h.step[k] == 0 {
            half.fill(u32::from_le_bytes(bytes[o..o + 4].try_into().expect("four bytes")));
        } else {
            // All the words read into an array before any is written: the
            // compiler then copies the 64 bytes in vector moves (reads and
            // writes interleaved, it moved them a word at a time, not
            // knowing the row and the memory apart).
            let words: &[u8; 4 * HALF] = bytes[o..o + 4 * HALF].try_into().expect("a half-warp's words");
            let v: [u32; HALF] =
                std::array::from_fn(|j| u32::from_le_bytes([words[4 * j], words[4 * j + 1], words[4 * j + 2], words[4 * j + 3]]));
            half.copy_from_slice(&v);
        }
    }
}

/// The offset in its allocation's bytes (which start at `at`) of a lane's
/// word at `base + ofs`, at most `last` (the last word's offset). The
/// bound never changes the offset ([`global_span`] found every executing
/// lane's word inside the allocation); it tells the compiler so, which
/// drops the two checks per lane of indexing the word.
#[inline(always)]
fn word_at(base: u64, ofs: i32, at: u64, last: usize) -> usize {
    ((base.wrapping_add(ofs as i64 as u64) - at) as usize).min(last)
}

/// A 32-bit store's fast path, [`load_row`]'s mirror: each executing
/// lane's word of `row` to its `base + ofs` in `bytes`, lanes in order (of
/// two lanes at one address the higher one's word is what stays: with
/// `halves`, the second half's after the first's, and of a half at one
/// address its last lane's).
#[inline(always)]
fn store_row(bytes: &mut [u8], at: u64, row: &[u32; LANES], base: &[u64; LANES], ofs: i32, e: u32, halves: Option<Halves>) {
    if let Some(h) = halves {
        return store_halves(bytes, at, row, &h, ofs);
    }
    let last = bytes.len().checked_sub(4).expect("global_span found a word in the allocation");
    let mut word = |l: usize| {
        let o = word_at(base[l], ofs, at, last);
        bytes[o..o + 4].copy_from_slice(&row[l].to_le_bytes());
    };
    if e == u32::MAX {
        for l in 0..LANES {
            word(l);
        }
    } else {
        for l in lanes(e) {
            word(l);
        }
    }
}

/// [`store_row`] of the shape `h`: each half's words in one copy (of a
/// half at one address, its last lane's word).
#[inline(always)]
fn store_halves(bytes: &mut [u8], at: u64, row: &[u32; LANES], h: &Halves, ofs: i32) {
    let last = bytes.len().checked_sub(4).expect("global_span found a word in the allocation");
    for (k, half) in row.chunks_exact(HALF).enumerate() {
        let o = word_at(h.first[k], ofs, at, last);
        if h.step[k] == 0 {
            bytes[o..o + 4].copy_from_slice(&half[HALF - 1].to_le_bytes());
        } else {
            // All the words read before any is written, as in `load_halves`.
            let v: [u32; HALF] = half.try_into().expect("a half-warp's words");
            let words: &mut [u8; 4 * HALF] = (&mut bytes[o..o + 4 * HALF]).try_into().expect("a half-warp's words");
            for (j, r) in v.iter().enumerate() {
                words[4 * j..4 * j + 4].copy_from_slice(&r.to_le_bytes());
            }
        }
    }
}

/// The lowest and highest of the addresses `base + ofs` of the executing
/// lanes `e`, and their bitwise OR (for the alignment check).
#[inline(always)]
fn lane_bounds(base: &[u64; LANES], ofs: i32, e: u32) -> (u64, u64, u64) {
    let (mut lo, mut hi, mut bits) = (u64::MAX, 0u64, 0u64);
    each_lane(e, |l| {
        let a = base[l].wrapping_add(ofs as i64 as u64);
        lo = lo.min(a);
        hi = hi.max(a);
        bits |= a;
    });
    (lo, hi, bits)
}

/// Whether an address `base + ofs` of the executing lanes `e` is in a
/// generic window. A loop of its own, run only for generic accesses:
/// folded into [`lane_bounds`]'s it keeps that loop from being the cheap
/// vector loop it is alone (it made a global load's lane scan 4× slower).
#[inline(always)]
fn any_in_window(base: &[u64; LANES], ofs: i32, e: u32) -> bool {
    let mut window = false;
    each_lane(e, |l| {
        let a = base[l].wrapping_add(ofs as i64 as u64);
        window |= matches!(a >> 32, SHARED_WINDOW | LOCAL_WINDOW);
    });
    window
}

/// The new value of an atomic read-modify-write.
fn atom(op: AtomOp, old: u64, b: u64, c: u64, wide: bool, signed: bool) -> u64 {
    let mask = if wide { u64::MAX } else { 0xffff_ffff };
    let (old, b, c) = (old & mask, b & mask, c & mask);
    let as_signed = |x: u64| if wide { x as i64 } else { x as u32 as i32 as i64 };
    let less = |x: u64, y: u64| if signed { as_signed(x) < as_signed(y) } else { x < y };
    let r = match op {
        AtomOp::Add => old.wrapping_add(b),
        AtomOp::Min => {
            if less(b, old) {
                b
            } else {
                old
            }
        }
        AtomOp::Max => {
            if less(old, b) {
                b
            } else {
                old
            }
        }
        AtomOp::And => old & b,
        AtomOp::Or => old | b,
        AtomOp::Xor => old ^ b,
        AtomOp::Exch => b,
        AtomOp::Cas => {
            if old == b {
                c
            } else {
                old
            }
        }
        AtomOp::Fadd if wide => crate::dalu::dadd(old, b, crate::ops::Rnd::Rn),
        AtomOp::Fadd => crate::float32::fadd(old as u32, b as u32, crate::ops::Rnd::Rn) as u64,
    };
    r & mask
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Full-warp 32-bit loads and stores whose half-warps are broadcasts or
    /// contiguous: [`Halves::of`] finds the shape (and no shape once one
    /// lane moves), and the half-warp copies give the words the per-lane
    /// path gives, for loads and, with overlapping halves, stores.
    #[test]
    fn half_warp_copies_give_the_per_lane_words() {
        let mut next = crate::test_rng::xorshift64(0x9e37_79b9_7f4a_7c15u64);
        let at = 0x10_0000u64;
        let mem: Vec<u8> = (0..1024).map(|_| next() as u8).collect();
        for case in 0..4000 {
            let step = [(case & 1) as u64 * 4, (case >> 1 & 1) as u64 * 4];
            let ofs = (next() % 32) as i32 * 4 - 64;
            // Both halves' words inside the memory, the offset applied.
            let first = [0, 1].map(|_| (at + 64 + (next() % 200) * 4).wrapping_sub(ofs as i64 as u64));
            let mut base = [0u64; LANES];
            for (l, b) in base.iter_mut().enumerate() {
                *b = first[l / HALF] + (l % HALF) as u64 * step[l / HALF];
            }
            let h = Halves::of(&base, 4, u32::MAX).expect("a half-warp shape");
            assert_eq!(h, Halves { first, step });
            let mut moved = base;
            moved[next() as usize % LANES] += 8;
            assert_eq!(Halves::of(&moved, 4, u32::MAX), None, "{moved:x?}");
            assert_eq!(Halves::of(&base, 4, u32::MAX >> 1), None);

            let (mut fast, mut slow) = ([0u32; LANES], [0u32; LANES]);
            load_row(&mut fast, &mem, at, &base, ofs, u32::MAX, Some(h));
            load_row(&mut slow, &mem, at, &base, ofs, u32::MAX, None);
            assert_eq!(fast, slow, "load {h:x?} ofs {ofs}");

            let row: [u32; LANES] = std::array::from_fn(|_| next() as u32);
            let (mut fast, mut slow) = (mem.clone(), mem.clone());
            store_row(&mut fast, at, &row, &base, ofs, u32::MAX, Some(h));
            store_row(&mut slow, at, &row, &base, ofs, u32::MAX, None);
            assert!(fast == slow, "store {h:x?} ofs {ofs}");
        }
    }
}
