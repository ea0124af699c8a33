//! Copies whose source was computed only for them: the instruction that
//! computes the source writes the copy's destination instead, and the copy
//! goes (backward copy propagation, on the allocated code).
//!
//! `assign_regs_ssa` gives a value the register its hint names (an ABI
//! register of a return or call, a block parameter's register) when that
//! register is free where the value is defined. When another value still
//! holds it there, the value goes elsewhere and a `MOV` brings it over
//! later: `SEL R0, …; …; MOV R10, R0`. Where nothing between the two names
//! `R10` or `R0`, and `R0` is read by nothing after the copy before it is
//! written again, the `SEL` may write `R10` itself.
//!
//! The rule, within a block, for each plain copy `MOV Rd, Rs` (32-bit,
//! unguarded; neither register the stack pointer), in order:
//!
//! - the nearest instruction before it that names `Rs` or `Rd` writes `Rs`,
//!   and only there among the general registers: one 32-bit field of its
//!   own (not also read: a field read and written keeps bits of the old
//!   value), unguarded, no call and no ABI register written by convention;
//! - nothing between the two is a call (which may write `Rd`) or a branch;
//! - `Rs` is dead after the copy: the next instruction of the block that
//!   names it writes it unguarded without reading it, or none does and it
//!   is not live out of the block.
//!
//! Then the definition writes `Rd` and the copy is deleted. Copies are taken
//! in order, so a chain `Rs → Rt → Rd` ends in one definition of `Rd`; a copy
//! that so becomes `MOV Rd, Rd` goes too. Nothing else moves, so the block
//! boundaries and every block's live registers stay as they were; the
//! control bits are computed afterwards (`calc_instr_deps`).

use smallvec::SmallVec;
use ursa_emit::forms::{self, MOV_R};
use ursa_emit::{optypes, RegFile, RegSlot};

use ursa_isel::bitset::BitSet;

use crate::emit::lower_vcode::is_self_copy;
use crate::ir::code::{Code, Item};
use crate::regalloc::liveness::Liveness;

/// The stack pointer: never given to a copy's definition here.
const SP: u32 = ursa_isel::abi::SP as u32;
/// `RZ`.
const RZ: u32 = ursa_emit::RZ as u32;

/// A set of general registers (`R0`–`R254`).
type Regs = BitSet<u32, [u64; 4]>;

/// The general registers an item reads and writes (a guarded write, which
/// may leave the old value, also counts as a read).
#[derive(Clone, Copy)]
struct Uses {
    reads: Regs,
    writes: Regs,
    /// The writes happen: unguarded, not `predicated`.
    sure: bool,
}

/// Runs the rule over `code`; how many copies were deleted.
pub fn opt_copy_prop_backward(code: &mut Code) -> usize {
    // Most functions have no copy at all.
    if !code.items.iter().any(|it| it.inst.form() == forms::MOV_R) || code.items.iter().any(|it| it.inst.has_dynamic_regs()) {
        return 0;
    }
    // Each item's registers, found when a scan first reaches it.
    let mut uses = UsesOf { cache: vec![None; code.items.len()] };
    let mut ranges = Vec::new();
    let mut succs: Vec<SmallVec<[usize; 2]>> = Vec::new();
    code.blocks(&mut ranges, &mut succs);
    // The registers live out of each block, solved when a copy first asks.
    let mut live: Option<Liveness<u32, [u64; 4]>> = None;
    let mut removed = vec![false; code.items.len()];
    let mut deleted = 0;
    for (b, &(s, e)) in ranges.iter().enumerate() {
        for j in s..e {
            let Some((d, src)) = plain_copy(code, j) else { continue };
            let Some(k) = definition(code, &mut uses, &removed, s, j, d, src) else { continue };
            let dead = match dead_in_block(code, &mut uses, &removed, j, e, src) {
                Some(dead) => dead,
                None => !live.get_or_insert_with(|| liveness(code, &mut uses, &removed, &ranges, &succs)).live_out[b].contains(src),
            };
            if !dead {
                continue;
            }
            let Some(field) = sole_r_write(code, k, src) else { continue };
            code.items[k].inst.set_at(field, d as u64);
            let u = uses.get(code, k);
            u.writes.remove(src);
            u.writes.insert(d);
            removed[j] = true;
            deleted += 1;
            if is_self_copy(&code.items[k].inst) {
                removed[k] = true;
                deleted += 1;
            }
        }
    }
    if deleted > 0 {
        compact(code, &removed);
    }
    deleted
}

/// [`Uses`] per item, found at the first ask.
struct UsesOf {
    cache: Vec<Option<Uses>>,
}

impl UsesOf {
    fn get(&mut self, code: &Code, i: usize) -> &mut Uses {
        self.cache[i].get_or_insert_with(|| uses_of(&code.items[i]))
    }
}

/// The registers live into and out of each block (`ranges`, `succs`) of
/// the code as it is now (the copies `removed` gone), by
/// [`Liveness::solve`].
fn liveness(
    code: &Code,
    uses: &mut UsesOf,
    removed: &[bool],
    ranges: &[(usize, usize)],
    succs: &[SmallVec<[usize; 2]>],
) -> Liveness<u32, [u64; 4]> {
    let nb = ranges.len();
    let mut live = Liveness::default();
    live.reset(nb, 256);
    for (b, &(s, e)) in ranges.iter().enumerate() {
        let (gen, kill) = (&mut live.gen[b], &mut live.kill[b]);
        for i in (s..e).rev().filter(|&i| !removed[i]) {
            let u = *uses.get(code, i);
            if u.sure {
                kill.union_with(&u.writes);
                for (g, w) in gen.words_mut().iter_mut().zip(u.writes.words()) {
                    *g &= !w;
                }
            }
            gen.union_with(&u.reads);
        }
    }
    live.solve((0..nb).rev(), |b| succs[b].iter().copied());
    live
}

/// Item `j` as a plain 32-bit copy (destination, source) between general
/// registers other than the stack pointer and `RZ`, unguarded.
fn plain_copy(code: &Code, j: usize) -> Option<(u32, u32)> {
    let it = &code.items[j];
    if it.inst.form() != forms::MOV_R || it.predicated || it.inst.is_guarded() {
        return None;
    }
    let d = it.inst.get_at(MOV_R::RD.index as usize) as u32;
    let s = it.inst.get_at(MOV_R::RB.index as usize) as u32;
    (d != SP && s != SP && d != RZ && s != RZ).then_some((d, s))
}

/// The item before copy `j` (from `start`, the block's first) that writes
/// its source `src`, if nothing between names `src` or `d` and none of them
/// is a call or a branch; the item itself must not write `d`.
fn definition(code: &Code, uses: &mut UsesOf, removed: &[bool], start: usize, j: usize, d: u32, src: u32) -> Option<usize> {
    for k in (start..j).rev().filter(|&k| !removed[k]) {
        let it = &code.items[k];
        if it.target.is_some() || it.call.is_some() || it.inst.def().optype == optypes::CALL::ID {
            return None;
        }
        let u = uses.get(code, k);
        if u.writes.contains(src) {
            return (!u.writes.contains(d)).then_some(k);
        }
        if u.reads.contains(src) || u.reads.contains(d) || u.writes.contains(d) {
            return None;
        }
    }
    None
}

/// Whether `src` is dead after copy `j` as far as its block (ending before
/// `end`) tells: `Some(false)` read before written again, `Some(true)`
/// written first, `None` neither (then the block's live-out registers tell).
fn dead_in_block(code: &Code, uses: &mut UsesOf, removed: &[bool], j: usize, end: usize, src: u32) -> Option<bool> {
    for m in (j + 1..end).filter(|&m| !removed[m]) {
        let u = uses.get(code, m);
        if u.reads.contains(src) {
            return Some(false);
        }
        if u.writes.contains(src) && u.sure {
            return Some(true);
        }
    }
    None
}

/// The field of item `k` that writes `src`, if that is its only general
/// register written: a 32-bit field not also read, the item unguarded and
/// writing no ABI register by convention.
fn sole_r_write(code: &Code, k: usize, src: u32) -> Option<usize> {
    let it = &code.items[k];
    if it.inst.is_guarded() || it.predicated || !it.implicit.writes.is_empty() {
        return None;
    }
    let writes: SmallVec<[_; 4]> = it.inst.reg_writes().into_iter().filter(|r| r.file == RegFile::R).collect();
    let [w] = writes.as_slice() else { return None };
    let RegSlot::Field(f) = w.slot else { return None };
    let read_too = it.inst.reg_reads().iter().any(|r| r.slot == w.slot);
    (w.num == src && w.count == 1 && !read_too).then_some(f as usize)
}

/// The general registers item `it` reads and writes, its ABI registers
/// included.
fn uses_of(it: &Item) -> Uses {
    let mut u = Uses { reads: Regs::default(), writes: Regs::default(), sure: !it.inst.is_guarded() && !it.predicated };
    it.inst.for_each_reg_ref(|file, num, count, written| {
        if file == RegFile::R {
            for r in (num..num + count).filter(|&r| r != RZ) {
                if written {
                    u.writes.insert(r);
                } else {
                    u.reads.insert(r);
                }
            }
        }
    });
    for &r in &it.implicit.reads {
        u.reads.insert(r);
    }
    for &r in &it.implicit.writes {
        u.writes.insert(r);
    }
    if !u.sure {
        // A write that may not happen keeps the old value: read too.
        let w = u.writes;
        u.reads.union_with(&w);
    }
    u
}

/// `code` without the items `removed` marks, the block starts moved to match.
fn compact(code: &mut Code, removed: &[bool]) {
    // New index of each old item (the first kept one from there on).
    let mut new_at = Vec::with_capacity(removed.len() + 1);
    let mut n = 0;
    for &r in removed {
        new_at.push(n);
        n += usize::from(!r);
    }
    new_at.push(n);
    for s in code.block_start.iter_mut() {
        *s = new_at[*s];
    }
    let mut k = 0;
    code.items.retain(|_| {
        k += 1;
        !removed[k - 1]
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::code::testing::{code, text};

    /// Each code of `cases` left as it is.
    fn unchanged(cases: &[&[&str]]) {
        for &lines in cases {
            let mut c = code(lines);
            assert_eq!(opt_copy_prop_backward(&mut c), 0, "{:?}", lines);
            assert_eq!(text(&c), lines);
        }
    }

    #[test]
    fn a_definition_writes_the_copy_destination() {
        let mut c = code(&["IADD R0, R2, R3", "ISETP.NE.AND P0, R5, RZ, PT", "MOV R10, R0", "EXIT"]);
        assert_eq!(opt_copy_prop_backward(&mut c), 1);
        assert_eq!(text(&c), ["IADD R10, R2, R3", "ISETP.NE.AND P0, R5, RZ, PT", "EXIT"]);
    }

    #[test]
    fn a_chain_of_copies_ends_in_one_definition() {
        let mut c = code(&["IADD R0, R2, R3", "MOV R7, R0", "MOV R10, R7", "EXIT"]);
        assert_eq!(opt_copy_prop_backward(&mut c), 2);
        assert_eq!(text(&c), ["IADD R10, R2, R3", "EXIT"]);
    }

    #[test]
    fn the_source_read_between_or_after_keeps_the_copy() {
        // R0 read between the definition and the copy; R0 read after the
        // copy; the destination's old value read between.
        let between = ["IADD R0, R2, R3", "IADD R4, R0, R0", "MOV R10, R0", "EXIT"];
        let after = ["IADD R0, R2, R3", "MOV R10, R0", "IADD R4, R0, R10", "EXIT"];
        let dest = ["IADD R0, R2, R3", "IADD R4, R10, R2", "MOV R10, R0", "EXIT"];
        unchanged(&[&between, &after, &dest]);
    }

    #[test]
    fn guarded_or_wide_definitions_keep_the_copy() {
        let guarded = ["@P0 IADD R0, R2, R3", "MOV R10, R0", "EXIT"];
        let pair = ["IMAD.WIDE R[0:1], R2, R3, R[4:5]", "MOV R10, R0", "EXIT"];
        let guarded_copy = ["IADD R0, R2, R3", "@P0 MOV R10, R0", "EXIT"];
        unchanged(&[&guarded, &pair, &guarded_copy]);
    }

    #[test]
    fn a_source_live_out_of_the_block_keeps_the_copy() {
        // Block 0 falls into block 1, which reads R0.
        let mut c = code(&["IADD R0, R2, R3", "MOV R10, R0", ">IADD R4, R0, R10", "EXIT"]);
        assert_eq!(opt_copy_prop_backward(&mut c), 0);
        // Written again in the next block before any read: dead.
        let mut c = code(&["IADD R0, R2, R3", "MOV R10, R0", ">IADD R0, R10, R10", "EXIT"]);
        assert_eq!(opt_copy_prop_backward(&mut c), 1);
        assert_eq!(text(&c), ["IADD R10, R2, R3", "IADD R0, R10, R10", "EXIT"]);
        assert_eq!(c.block_start, [0, 1]);
    }
}
