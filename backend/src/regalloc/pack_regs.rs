//! Packs the allocated general registers into one dense file from `R0` up.
//!
//! Only after regalloc2 (`assign_regs`): where `assign_regs_ssa` assigned the
//! registers they are dense already, and only the uniform files are packed
//! ([`pack_uniform_regs`]).
//!
//! `assign_regs` gives each regalloc2 class its own region of the register
//! file (`docs/regalloc.md`), so a function that needs eight registers may
//! touch `R132`–`R140` and `R[4:5]`. On a GPU the highest register a thread
//! touches decides how many warps fit on a multiprocessor, so this pass
//! renames every register of the laid-out code:
//!
//! 1. **Webs.** Every definition of a general register starts a value; uses
//!    join the definitions that reach them, across blocks, into *webs* (a
//!    guarded write joins the value it may leave in place, unless
//!    only readers under the same guard read it: `opt_if_convert`). A web is the unit
//!    that gets a new register.
//! 2. **Tuples.** A 64-bit operand names an aligned pair and a 128-bit one an
//!    aligned quad; the webs of their halves are tied into a *group* with fixed
//!    offsets, placed together.
//! 3. **Fixed webs.** Webs live into the function (its arguments, the stack
//!    pointer, the return address), webs that meet a call's or a return's ABI
//!    registers, and webs of the stack pointer `R1` keep their register.
//! 4. **Interference** comes from liveness (`liveness`): a web written while another is live
//!    may not share its register.
//! 5. **Colouring.** Groups are placed in order of their first appearance at
//!    the lowest base that fits (pairs on an even register, quads on a multiple
//!    of four), preferring the register of a web the value is copied from or
//!    to, else that of such a web's own copy partner (a value copied into a
//!    copy that is copied into an ABI register); a copy whose two sides end
//!    up in one register is deleted.
//!
//! The uniform registers (`UR`) and uniform predicates (`UP`, guards
//! included) that `opt_uniform` numbered are packed the same way, each file
//! on its own.
//!
//! If the code reads a register chosen at run time (`R[UR, imm]`), nothing is
//! renamed.
//!
//! Spill slots that `place_spill_slots` keeps in registers arrive named above
//! the file (`R256` up); they are renamed like any other value. Code with
//! such names that cannot be packed is refused ([`PackError`]), and the caller
//! moves slots to local memory.

use smallvec::SmallVec;
use ursa_emit::model::Kind;
use ursa_emit::{forms, optypes, FormId, Inst, RegFile, RegSlot};
use ursa_isel::bitset::BitSet;

use crate::ir::code::Code;
use crate::regalloc::liveness::Liveness;

/// The stack pointer (never renamed; given to other values only in a function
/// that neither touches it nor calls).
const SP: u32 = 1;
/// Registers `R0`–`R254`.
pub(crate) const NREGS: usize = 255;

/// Register names live at once beyond which code naming registers above the
/// file is taken to be full without building its interference graph (whose
/// size grows with the square of the names live at once). A register holds
/// one value, and a value is held at once by few names (its register, its
/// spill slot, a reload), so code with this many names live does not fit;
/// where it might have, the slot search keeps fewer slots in registers,
/// which is still valid code.
const MAX_LIVE_NAMES: usize = 4 * NREGS;
/// Register names from here up are spill slots to be given a register
/// (`assignment::SLOT_REG_BASE`).
const ABOVE_FILE: u32 = crate::regalloc::assignment::SLOT_REG_BASE;

/// Why code naming registers above the file could not be packed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PackError {
    /// These registers above the file are live across a call, which may
    /// write every register.
    LiveAcrossCall(Vec<u32>),
    /// The code selects registers at run time: nothing may be renamed.
    NoRenaming,
    /// The values do not fit in the file.
    Full,
}

/// What the pass did, for `--stats`. After `assign_regs_ssa` the counts are
/// taken only when asked ([`pack_uniform_regs`]); all zero otherwise.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PackStats {
    /// Highest general register touched + 1, before and after.
    pub regs_before: u32,
    pub regs_after: u32,
    /// Copies deleted because both sides got one register.
    pub copies_removed: usize,
    /// Highest uniform register touched + 1, after.
    pub uregs_after: u32,
}

/// A set of register names (R0–R254, and names above the file).
type RegSet = BitSet<u32>;

/// One register reference of an instruction: `count` registers from `num`,
/// in field `field` (None: fixed by the ABI, or the guard, which is no R).
#[derive(Clone, Copy)]
struct Ref {
    num: u32,
    count: u32,
    field: Option<u16>,
}

struct Access {
    reads: SmallVec<[Ref; 4]>,
    writes: SmallVec<[Ref; 4]>,
    /// Writes may not happen (guarded), or a field is read and written: the
    /// written registers keep the web of their old value.
    merge_writes: bool,
}

/// Every item's register references (`Inst::reg_reads`, `reg_writes`) in one
/// vector: item i reads `all[at[i]..at[i] + nr[i]]`, writes the rest up to `at[i + 1]`.
#[derive(Default)]
struct Refs {
    all: Vec<ursa_emit::RegRef>,
    at: Vec<usize>,
    nr: Vec<usize>,
}

impl Refs {
    fn reads(&self, i: usize) -> &[ursa_emit::RegRef] {
        &self.all[self.at[i]..self.at[i] + self.nr[i]]
    }
    fn writes(&self, i: usize) -> &[ursa_emit::RegRef] {
        &self.all[self.at[i] + self.nr[i]..self.at[i + 1]]
    }
}

fn access(code: &Code, i: usize, file: RegFile, refs: &Refs) -> Access {
    let it = &code.items[i];
    let to_ref = |r: &ursa_emit::RegRef| Ref {
        num: r.num,
        count: r.count,
        field: match r.slot {
            RegSlot::Field(f) => Some(f),
            // The guard is renamed like a field (a uniform predicate).
            RegSlot::Guard => it.inst.def().guard.map(|g| g as u16),
        },
    };
    let mut reads: SmallVec<[Ref; 4]> = refs.reads(i).iter().filter(|r| r.file == file).map(to_ref).collect();
    let mut writes: SmallVec<[Ref; 4]> = refs.writes(i).iter().filter(|r| r.file == file).map(to_ref).collect();
    let in_place = writes.iter().any(|w| reads.iter().any(|r| r.field.is_some() && r.field == w.field));
    // A call writes the callee's return address where the callee's `RET`
    // reads it, and a return reads it there: ABI registers, not renamable.
    if [optypes::CALL::ID, optypes::RET::ID].contains(&it.inst.def().optype) {
        for r in reads.iter_mut().chain(writes.iter_mut()) {
            r.field = None;
        }
    }
    if file == RegFile::R {
        reads.extend(it.implicit.reads.iter().map(|&n| Ref { num: n, count: 1, field: None }));
        writes.extend(it.implicit.writes.iter().map(|&n| Ref { num: n, count: 1, field: None }));
    }
    // A guarded write keeps the old value where the guard skips it, unless
    // nothing reads that value (`Item::predicated`).
    Access { reads, writes, merge_writes: in_place || (it.inst.is_guarded() && !it.predicated) }
}

/// The nodes of an item's references: each reference with its registers'
/// nodes (`flat` holds them in order, `count` per reference).
fn chunks<'a>(refs: &'a [Ref], flat: &'a [u32]) -> impl Iterator<Item = (Ref, &'a [u32])> + 'a {
    let mut k = 0;
    refs.iter().map(move |r| {
        let v = &flat[k..k + r.count as usize];
        k += r.count as usize;
        (*r, v)
    })
}

/// Interference between webs: a bit matrix while it stays small (no
/// per-web lists to sort), sorted neighbour lists otherwise.
enum Interference {
    Matrix { words: usize, bits: Vec<u64> },
    Lists(Vec<Vec<u32>>),
}

/// Webs up to which the matrix is used (2 MiB of bits).
const MATRIX_MAX: usize = 4096;

impl Interference {
    /// `bits`: the matrix's storage (reused; [`Interference::into_bits`]).
    fn new(nw: usize, mut bits: Vec<u64>) -> Self {
        if nw <= MATRIX_MAX {
            let words = nw.div_ceil(64);
            reset(&mut bits, words * nw, 0);
            Interference::Matrix { words, bits }
        } else {
            Interference::Lists(vec![Vec::new(); nw])
        }
    }
    fn add(&mut self, a: u32, b: u32) {
        if a == b {
            return;
        }
        match self {
            Interference::Matrix { words, bits } => {
                let (a, b) = (a as usize, b as usize);
                bits[a * *words + b / 64] |= 1 << (b % 64);
                bits[b * *words + a / 64] |= 1 << (a % 64);
            }
            Interference::Lists(adj) => {
                adj[a as usize].push(b);
                adj[b as usize].push(a);
            }
        }
    }
    /// The matrix's storage, for the next function.
    fn into_bits(self) -> Vec<u64> {
        match self {
            Interference::Matrix { bits, .. } => bits,
            Interference::Lists(_) => Vec::new(),
        }
    }
    fn finish(&mut self) {
        if let Interference::Lists(adj) = self {
            for l in adj.iter_mut() {
                l.sort_unstable();
                l.dedup();
            }
        }
    }
    /// The webs interfering with `w`, in increasing order.
    fn neighbours(&self, w: u32) -> Neighbours<'_> {
        match self {
            Interference::Matrix { words, bits } => {
                let row = &bits[w as usize * words..(w as usize + 1) * words];
                Neighbours::Row { row, k: 0, cur: row.first().copied().unwrap_or(0) }
            }
            Interference::Lists(adj) => Neighbours::List(adj[w as usize].iter()),
        }
    }
}

enum Neighbours<'a> {
    Row { row: &'a [u64], k: usize, cur: u64 },
    List(std::slice::Iter<'a, u32>),
}

impl Iterator for Neighbours<'_> {
    type Item = u32;
    fn next(&mut self) -> Option<u32> {
        match self {
            Neighbours::Row { row, k, cur } => loop {
                if *cur != 0 {
                    let b = cur.trailing_zeros();
                    *cur &= *cur - 1;
                    return Some((64 * *k) as u32 + b);
                }
                *k += 1;
                if *k >= row.len() {
                    return None;
                }
                *cur = row[*k];
            },
            Neighbours::List(it) => it.next().copied(),
        }
    }
}

/// Lists by index in one flat vector (no vector per list), built from
/// (index, value) pairs; each list keeps its pairs' order. Kept in
/// [`Scratch`] and refilled (its storage reused).
struct Lists<T> {
    start: Vec<u32>,
    items: Vec<T>,
}

impl<T> Default for Lists<T> {
    fn default() -> Self {
        Lists { start: Vec::new(), items: Vec::new() }
    }
}

impl<T: Copy> Lists<T> {
    /// The lists of `n` indices from `pairs`, replacing the contents.
    fn fill(&mut self, n: usize, pairs: &[(u32, T)]) {
        let (start, items) = (&mut self.start, &mut self.items);
        // Counts, then each list's end: start[k] is where list k ends once
        // filled backwards, and where it begins after.
        reset(start, n + 1, 0);
        for &(k, _) in pairs {
            start[k as usize] += 1;
        }
        for k in 1..=n {
            start[k] += start[k - 1];
        }
        items.clear();
        let Some(&(_, any)) = pairs.first() else { return };
        items.resize(pairs.len(), any);
        for &(k, v) in pairs.iter().rev() {
            start[k as usize] -= 1;
            items[start[k as usize] as usize] = v;
        }
        start[n] = pairs.len() as u32;
    }
}

impl<T> std::ops::Index<usize> for Lists<T> {
    type Output = [T];
    fn index(&self, k: usize) -> &[T] {
        &self.items[self.start[k] as usize..self.start[k + 1] as usize]
    }
}

/// Union-find over web nodes.
struct Webs<'a> {
    parent: &'a mut Vec<u32>,
}

impl Webs<'_> {
    fn add(&mut self) -> u32 {
        self.parent.push(self.parent.len() as u32);
        self.parent.len() as u32 - 1
    }
    fn find(&mut self, mut x: u32) -> u32 {
        while self.parent[x as usize] != x {
            let p = self.parent[x as usize];
            self.parent[x as usize] = self.parent[p as usize];
            x = p;
        }
        x
    }
    fn union(&mut self, a: u32, b: u32) {
        let (a, b) = (self.find(a), self.find(b));
        if a != b {
            self.parent[b as usize] = a;
        }
    }
}

/// Union-find with offsets: `off(x)` is x's register minus its group root's.
struct Groups<'a> {
    parent: &'a mut Vec<u32>,
    off: &'a mut Vec<i32>,
    /// The group cannot be placed consistently: it keeps its registers.
    broken: &'a mut Vec<bool>,
}

impl Groups<'_> {
    fn find(&mut self, x: u32) -> (u32, i32) {
        let mut root = x;
        let mut off = 0;
        while self.parent[root as usize] != root {
            off += self.off[root as usize];
            root = self.parent[root as usize];
        }
        // Path compression.
        let (mut y, mut oy) = (x, off);
        while self.parent[y as usize] != y {
            let next = self.parent[y as usize];
            let step = self.off[y as usize];
            self.parent[y as usize] = root;
            self.off[y as usize] = oy;
            oy -= step;
            y = next;
        }
        (root, off)
    }
    /// Requires `reg(b) = reg(a) + delta`.
    fn tie(&mut self, a: u32, b: u32, delta: i32) {
        let (ra, oa) = self.find(a);
        let (rb, ob) = self.find(b);
        if ra == rb {
            if ob - oa != delta {
                self.broken[ra as usize] = true;
            }
            return;
        }
        // off(b) = off(a) + delta: hang rb under ra.
        self.parent[rb as usize] = ra;
        self.off[rb as usize] = oa + delta - ob;
        if self.broken[rb as usize] {
            self.broken[ra as usize] = true;
        }
    }
}

/// Highest register of `file` touched + 1.
fn highest_reg(refs: &Refs, file: RegFile) -> u32 {
    refs.all.iter().filter(|r| r.file == file).map(|r| r.num + r.count).max().unwrap_or(0)
}

/// The references of every item of `code` into `refs` (its storage reused).
fn all_refs(code: &Code, refs: &mut Refs) {
    refs.all.clear();
    refs.at.clear();
    refs.nr.clear();
    for it in &code.items {
        refs.at.push(refs.all.len());
        let nr = it.inst.reg_refs_into(&mut refs.all);
        refs.nr.push(nr);
    }
    refs.at.push(refs.all.len());
}

/// `v` emptied, then `n` times `x` (keeping its storage).
fn reset<T: Clone>(v: &mut Vec<T>, n: usize, x: T) {
    v.clear();
    v.resize(n, x);
}

/// The tables of [`pack_file`], kept per thread and reused from one function
/// to the next (cleared, never shrunk), as `assign_regs` keeps regalloc2's
/// context: most functions are small, and allocating and freeing some thirty
/// vectors per register file was a large part of the pass.
#[derive(Default)]
struct Scratch {
    acc: Vec<Access>,
    liveness: Liveness,
    parent: Vec<u32>,
    orig_reg: Vec<u32>,
    in_base: Vec<u32>,
    rnodes: Vec<u32>,
    wnodes: Vec<u32>,
    rstart: Vec<usize>,
    wstart: Vec<usize>,
    end_cur: Vec<u32>,
    end_at: Vec<usize>,
    fixed_nodes: Vec<u32>,
    cur: Vec<u32>,
    web_of: Vec<u32>,
    web_reg: Vec<u32>,
    fixed: Vec<bool>,
    aligned: Vec<(u32, u32)>,
    bits: Vec<u64>,
    live: Vec<u32>,
    pairs: Vec<(u32, u32)>,
    first: Vec<usize>,
    color: Vec<Option<u32>>,
    align_of: Vec<u32>,
    residue: Vec<(u32, u32)>,
    keep: Vec<bool>,
    refs: Refs,
    ranges: Vec<(usize, usize)>,
    succs: Vec<SmallVec<[usize; 2]>>,
    group_parent: Vec<u32>,
    group_off: Vec<i32>,
    broken: Vec<bool>,
    affine: Lists<u32>,
    by_root: Vec<(u32, (u32, i32))>,
    members: Lists<(u32, i32)>,
    order: Vec<u32>,
    group_first: Vec<usize>,
}

thread_local! {
    static SCRATCH: std::cell::RefCell<Scratch> = std::cell::RefCell::default();
}

/// Renames the general and the uniform registers of `code` densely (see the
/// module docs). Fails only for code that names registers above the file
/// (spill slots in registers), which is then left in an unusable state.
pub fn pack_regs(code: &mut Code) -> Result<PackStats, PackError> {
    SCRATCH.with(|s| pack_regs_with(code, &mut s.borrow_mut(), true))
}

/// Packs the uniform files only: the general registers were chosen densely
/// already (`assign_regs_ssa`) and stay as they are. `stats`: fill in the
/// [`PackStats`]; without it, code that names no uniform register (most
/// functions) is left as it is without listing its register references.
pub fn pack_uniform_regs(code: &mut Code, stats: bool) -> Result<PackStats, PackError> {
    if !stats && !code.items.iter().any(|it| it.inst.has_dynamic_regs() || may_name_uniform(&it.inst)) {
        return Ok(PackStats::default());
    }
    SCRATCH.with(|s| pack_regs_with(code, &mut s.borrow_mut(), false))
}

/// Whether a field of `i` of a uniform register or predicate kind holds
/// other than `URZ` / `UPT` (whether or not the field is an operand: a
/// superset of the UR and UP references).
fn may_name_uniform(i: &Inst) -> bool {
    form_has_uniform_fields(i.form())
        && i.def().fields.iter().enumerate().any(|(k, f)| match f.kind {
            Kind::UReg => i.get_at(k) != RegFile::UR.zero() as u64,
            Kind::UPred => i.get_at(k) != RegFile::UP.zero() as u64,
            _ => false,
        })
}

/// Whether `form` has a field of a uniform register or predicate kind (most
/// have none), found out once per form and process: 0 not yet asked, 1 no,
/// 2 yes.
fn form_has_uniform_fields(form: FormId) -> bool {
    use std::sync::atomic::{AtomicU8, Ordering::Relaxed};
    static KNOWN: std::sync::OnceLock<Vec<AtomicU8>> = std::sync::OnceLock::new();
    let known = KNOWN.get_or_init(|| (0..ursa_emit::ISA.forms.len()).map(|_| AtomicU8::new(0)).collect());
    let flag = &known[form.0 as usize];
    match flag.load(Relaxed) {
        0 => {
            let has = form.def().fields.iter().any(|f| matches!(f.kind, Kind::UReg | Kind::UPred));
            flag.store(1 + has as u8, Relaxed);
            has
        }
        v => v == 2,
    }
}

fn pack_regs_with(code: &mut Code, s: &mut Scratch, general: bool) -> Result<PackStats, PackError> {
    // The references live in the scratch too, taken out while the passes
    // borrow the rest of it.
    let mut refs = std::mem::take(&mut s.refs);
    let stats = pack_with_refs(code, s, &mut refs, general);
    s.refs = refs;
    stats
}

fn pack_with_refs(code: &mut Code, s: &mut Scratch, refs: &mut Refs, general: bool) -> Result<PackStats, PackError> {
    all_refs(code, refs);
    let regs_before = highest_reg(refs, RegFile::R);
    let mut stats = PackStats { regs_before, regs_after: regs_before, copies_removed: 0, uregs_after: highest_reg(refs, RegFile::UR) };
    if code.items.iter().any(|it| it.inst.has_dynamic_regs()) {
        return if regs_before > ABOVE_FILE { Err(PackError::NoRenaming) } else { Ok(stats) };
    }
    // The UR pass first. The references are listed per instruction, so when
    // it deletes copies they are taken again before the UP and R passes.
    let ur = pack_file(code, RegFile::UR, refs, s)?;
    if ur.copies > 0 {
        all_refs(code, refs);
    }
    // The UP pass deletes nothing.
    pack_file(code, RegFile::UP, refs, s)?;
    if !general {
        (stats.copies_removed, stats.uregs_after) = (ur.copies, ur.high);
        return Ok(stats);
    }
    let r = pack_file(code, RegFile::R, refs, s)?;
    // The R pass deletes only `MOV` copies, which name no UR: the UR
    // pass's count stands.
    (stats.copies_removed, stats.regs_after, stats.uregs_after) = (ur.copies + r.copies, r.high, ur.high);
    Ok(stats)
}

/// What [`pack_file`] did to one register file.
struct Packed {
    /// Copies deleted.
    copies: usize,
    /// Highest register of the file the code names afterwards + 1.
    high: u32,
}

/// The destination and source fields of the copy form of `file`.
fn copy_fields(file: RegFile) -> (usize, usize) {
    if file == RegFile::UR {
        (forms::UMOV_U::URD.index as usize, forms::UMOV_U::URB.index as usize)
    } else {
        (forms::MOV_R::RD.index as usize, forms::MOV_R::RB.index as usize)
    }
}

/// The facts about one register file that the steps of [`pack_file`] share.
#[derive(Clone, Copy)]
struct FileCtx {
    file: RegFile,
    /// Registers below this may be given out: R0–R254 (RZ is 255),
    /// UR0–UR62 (URZ is 63), UP0–UP6 (UPT is 7).
    limit: u32,
    /// Names below `nregs` occur; names from ABOVE_FILE up must be renamed.
    nregs: usize,
    above_file: bool,
    /// A register never given out (the stack pointer), or u32::MAX.
    reserved: u32,
    /// Blocks.
    nb: usize,
    /// Webs (once found).
    nw: usize,
}

/// The plain 32-bit copy form of `file` (`MOV Rd, Rb`, `UMOV URd, URb`).
fn copy_form(file: RegFile) -> FormId {
    if file == RegFile::UR {
        forms::UMOV_U
    } else {
        forms::MOV_R
    }
}

/// Whether item `i` is a plain copy of `file`.
fn is_copy(code: &Code, acc: &[Access], file: RegFile, i: usize) -> bool {
    code.items[i].inst.form() == copy_form(file) && !acc[i].merge_writes && acc[i].writes.len() == 1 && acc[i].reads.len() == 1
}

/// Renames the registers of one file.
fn pack_file(code: &mut Code, file: RegFile, refs: &Refs, s: &mut Scratch) -> Result<Packed, PackError> {
    // Nothing renamed: the registers as they are.
    let unchanged = Packed { copies: 0, high: highest_reg(refs, file) };
    // No reference of the file at all (implicit ABI operands are R only).
    if file != RegFile::R && unchanged.high == 0 {
        return Ok(unchanged);
    }
    let Some(f) = s.accesses(code, file, refs) else { return Ok(unchanged) };
    s.solve_liveness(f);
    s.find_webs(f);
    let f = s.number_webs(f);
    s.tie_tuples(f);
    let adj = s.interference(code, f)?;
    s.order_groups(code, f);
    let coloured = s.colour(f, &adj);
    s.bits = adj.into_bits();
    if !coloured {
        // Where the colouring cannot do better than the original registers:
        // keep them, unless they lie above the file.
        return if f.above_file { Err(PackError::Full) } else { Ok(unchanged) };
    }
    Ok(s.rewrite(code, f))
}

/// The steps of [`pack_file`], each on the tables it needs.
impl Scratch {
    /// The register accesses of every item of `code` in `file`, and the
    /// blocks; None when the code names no register of the file.
    fn accesses(&mut self, code: &Code, file: RegFile, refs: &Refs) -> Option<FileCtx> {
        let Scratch { acc, ranges, succs, .. } = self;
        let limit: u32 = match file {
            RegFile::R => NREGS as u32,
            RegFile::UR => ursa_emit::URZ as u32,
            _ => ursa_emit::PT as u32,
        };
        acc.clear();
        acc.extend((0..code.items.len()).map(|i| access(code, i, file, refs)));
        let acc: &[Access] = acc;
        if acc.iter().all(|a| a.reads.is_empty() && a.writes.is_empty()) {
            return None;
        }
        let nregs = acc
            .iter()
            .flat_map(|a| a.reads.iter().chain(a.writes.iter()))
            .map(|r| (r.num + r.count) as usize)
            .max()
            .unwrap_or(0)
            .max(NREGS);
        let above_file = file == RegFile::R && nregs > ABOVE_FILE as usize;
        let is_call = |i: usize| code.items[i].inst.def().optype == optypes::CALL::ID;
        // A function that never touches the stack pointer and calls nobody (a
        // kernel without a frame) may use R1 like any other register.
        let sp_free = !acc.iter().any(|a| a.reads.iter().chain(a.writes.iter()).any(|r| r.num <= SP && SP < r.num + r.count))
            && !(0..code.items.len()).any(is_call);
        let reserved = if file != RegFile::R || sp_free { u32::MAX } else { SP };
        code.blocks(ranges, succs);
        Some(FileCtx { file, limit, nregs, above_file, reserved, nb: ranges.len(), nw: 0 })
    }

    /// Liveness per block.
    fn solve_liveness(&mut self, f: FileCtx) {
        let Scratch { acc, liveness, ranges, succs, .. } = self;
        let FileCtx { nb, nregs, .. } = f;
        liveness.reset(nb, nregs);
        for b in 0..nb {
            let (s, e) = ranges[b];
            let (gen, kill) = (&mut liveness.gen[b], &mut liveness.kill[b]);
            for a in acc[s..e].iter().rev() {
                if !a.merge_writes {
                    for w in &a.writes {
                        for r in w.num..w.num + w.count {
                            kill.insert(r);
                            gen.remove(r);
                        }
                    }
                }
                for u in a.reads.iter().chain(if a.merge_writes { a.writes.iter() } else { [].iter() }) {
                    for r in u.num..u.num + u.count {
                        gen.insert(r);
                    }
                }
            }
        }
        liveness.solve((0..nb).rev(), |b| succs[b].iter().copied());
    }

    /// Web nodes: one per definition and per (block, live-in register),
    /// joined into webs.
    fn find_webs(&mut self, f: FileCtx) {
        let Scratch {
            acc,
            liveness,
            parent,
            orig_reg,
            in_base,
            rnodes,
            wnodes,
            rstart,
            wstart,
            end_cur,
            end_at,
            fixed_nodes,
            cur,
            ranges,
            succs,
            ..
        } = self;
        let FileCtx { nregs, nb, .. } = f;
        let (live_in, live_out): (&[RegSet], &[RegSet]) = (&liveness.live_in, &liveness.live_out);
        parent.clear();
        let mut webs = Webs { parent };
        orig_reg.clear();
        // The node of (block b, live-in register r) is in_base[b] + rank of r.
        in_base.clear();
        for li in live_in.iter() {
            in_base.push(webs.parent.len() as u32);
            for r in li.iter() {
                webs.add();
                orig_reg.push(r);
            }
        }
        let node_in = |b: usize, r: u32| in_base[b] + live_in[b].rank(r) as u32;
        // Per item: the node of each read and written register (first register
        // of each reference; the rest follow through the groups).
        // Flat: item i's read nodes are rnodes[rstart[i]..rstart[i + 1]], one
        // per register of each reference in order (writes likewise).
        rnodes.clear();
        wnodes.clear();
        rstart.clear();
        wstart.clear();
        // Per block: the node in each register of live_out (by rank), or MAX:
        // block b's are `end_cur[end_at[b]..end_at[b + 1]]`.
        end_cur.clear();
        end_at.clear();
        fixed_nodes.clear();
        // The current node of each register (u32::MAX: none), reset after each
        // block only where the block wrote it (`touched`).
        reset(cur, nregs, u32::MAX);
        let mut touched = RegSet::new(nregs);
        for b in 0..nb {
            let (s, e) = ranges[b];
            for r in touched.iter() {
                cur[r as usize] = u32::MAX;
            }
            touched.clone_from(&live_in[b]);
            for r in live_in[b].iter() {
                cur[r as usize] = node_in(b, r);
            }
            for i in s..e {
                let a = &acc[i];
                rstart.push(rnodes.len());
                wstart.push(wnodes.len());
                for u in &a.reads {
                    for r in u.num..u.num + u.count {
                        let n = match cur[r as usize] {
                            n if n != u32::MAX => n,
                            // Read before any write on this path: an undefined
                            // value (liveness makes it live-in otherwise).
                            _ => {
                                let n = webs.add();
                                orig_reg.push(r);
                                cur[r as usize] = n;
                                touched.insert(r);
                                n
                            }
                        };
                        if u.field.is_none() {
                            fixed_nodes.push(n);
                        }
                        rnodes.push(n);
                    }
                }
                for w in &a.writes {
                    for r in w.num..w.num + w.count {
                        let n = webs.add();
                        orig_reg.push(r);
                        if a.merge_writes && cur[r as usize] != u32::MAX {
                            webs.union(cur[r as usize], n);
                        }
                        cur[r as usize] = n;
                        touched.insert(r);
                        if w.field.is_none() {
                            fixed_nodes.push(n);
                        }
                        wnodes.push(n);
                    }
                }
            }
            end_at.push(end_cur.len());
            end_cur.extend(live_out[b].iter().map(|r| cur[r as usize]));
        }
        end_at.push(end_cur.len());
        let end_cur = |b: usize| &end_cur[end_at[b]..end_at[b + 1]];
        rstart.push(rnodes.len());
        wstart.push(wnodes.len());
        for b in 0..nb {
            for &s in &succs[b] {
                // live_in[s] is part of live_out[b].
                for r in live_in[s].iter() {
                    let n = end_cur(b)[live_out[b].rank(r)];
                    if n != u32::MAX {
                        webs.union(n, node_in(s, r));
                    }
                }
            }
        }
    }

    /// The webs as dense ids, and which keep their registers.
    fn number_webs(&mut self, mut f: FileCtx) -> FileCtx {
        let Scratch { liveness, parent, orig_reg, in_base, fixed_nodes, web_of, web_reg, fixed, .. } = self;
        let live_in: &[RegSet] = &liveness.live_in;
        let node_in = |b: usize, r: u32| in_base[b] + live_in[b].rank(r) as u32;
        let mut webs = Webs { parent };
        let nnodes = webs.parent.len();
        reset(web_of, nnodes, u32::MAX);
        let mut nwebs = 0u32;
        web_reg.clear();
        for n in 0..nnodes as u32 {
            let r = webs.find(n);
            if web_of[r as usize] == u32::MAX {
                web_of[r as usize] = nwebs;
                web_reg.push(orig_reg[r as usize]);
                nwebs += 1;
            }
            web_of[n as usize] = web_of[r as usize];
        }
        let nw = nwebs as usize;
        reset(fixed, nw, false);
        for &n in fixed_nodes.iter() {
            fixed[web_of[n as usize] as usize] = true;
        }
        for r in live_in[0].iter() {
            fixed[web_of[node_in(0, r) as usize] as usize] = true;
        }
        for w in 0..nw {
            if f.file == RegFile::R && web_reg[w] == SP {
                fixed[w] = true;
            }
        }
        f.nw = nw;
        f
    }

    /// Groups of tuple halves, with alignments.
    fn tie_tuples(&mut self, f: FileCtx) {
        let Scratch { acc, rnodes, wnodes, rstart, wstart, web_of, aligned, group_parent, group_off, broken, .. } = self;
        let (nw, nwebs) = (f.nw, f.nw as u32);
        let read_nodes = |i: usize| &rnodes[rstart[i]..rstart[i + 1]];
        let write_nodes = |i: usize| &wnodes[wstart[i]..wstart[i + 1]];
        group_parent.clear();
        group_parent.extend(0..nwebs);
        reset(group_off, nw, 0);
        reset(broken, nw, false);
        let mut groups = Groups { parent: group_parent, off: group_off, broken };
        // (web, alignment): the web's register must be a multiple of `alignment`.
        aligned.clear();
        for i in 0..acc.len() {
            let (rn, wn) = (read_nodes(i), write_nodes(i));
            for v in chunks(&acc[i].reads, rn).map(|(_, v)| v).chain(chunks(&acc[i].writes, wn).map(|(_, v)| v)) {
                if v.len() > 1 {
                    let base = web_of[v[0] as usize];
                    aligned.push((base, v.len() as u32));
                    for (k, &n) in v.iter().enumerate().skip(1) {
                        groups.tie(base, web_of[n as usize], k as i32);
                    }
                }
            }
        }
    }

    /// Interference between the webs (LiveAcrossCall when registers above
    /// the file are live across a call).
    fn interference(&mut self, code: &Code, f: FileCtx) -> Result<Interference, PackError> {
        let Scratch { acc, liveness, rnodes, wnodes, rstart, wstart, end_cur, end_at, web_of, bits, live, ranges, .. } = self;
        let FileCtx { file, nregs, nb, nw, above_file, .. } = f;
        let live_out: &[RegSet] = &liveness.live_out;
        let end_cur = |b: usize| &end_cur[end_at[b]..end_at[b + 1]];
        let is_call = |i: usize| code.items[i].inst.def().optype == optypes::CALL::ID;
        let read_nodes = |i: usize| &rnodes[rstart[i]..rstart[i + 1]];
        let write_nodes = |i: usize| &wnodes[wstart[i]..wstart[i + 1]];
        let mut adj = Interference::new(nw, std::mem::take(bits));
        // Registers above the file live across a call.
        let mut across_call: Vec<u32> = Vec::new();
        {
            let mut add = |a: u32, b: u32| adj.add(a, b);
            // The web in each register of `live_set` (other entries are stale
            // and never read).
            reset(live, nregs, u32::MAX);
            for b in 0..nb {
                let (s, e) = ranges[b];
                let mut live_set = RegSet::new(nregs);
                // Members of `live_set`, counted as they come and go.
                let mut nlive = 0usize;
                for (r, &n) in live_out[b].iter().zip(end_cur(b).iter()) {
                    if n != u32::MAX {
                        live[r as usize] = web_of[n as usize];
                        nlive += live_set.insert(r) as usize;
                    }
                }
                for i in (s..e).rev() {
                    if above_file && nlive > MAX_LIVE_NAMES {
                        return Err(PackError::Full);
                    }
                    let a = &acc[i];
                    if above_file && is_call(i) {
                        across_call.extend(live_set.iter().filter(|&r| r >= ABOVE_FILE));
                    }
                    let mut defs: SmallVec<[(u32, u32); 8]> = SmallVec::new();
                    let wn = write_nodes(i);
                    for (w, v) in chunks(&a.writes, wn) {
                        for (k, &n) in v.iter().enumerate() {
                            defs.push((w.num + k as u32, web_of[n as usize]));
                        }
                    }
                    // A copy's result holds its source's value: the two do not
                    // interfere there (Chaitin's rule), so the copy can vanish
                    // even when both stay live; a later write of either, while
                    // the other is live, makes them interfere as usual.
                    let copy_src = is_copy(code, acc, file, i).then(|| a.reads[0].num);
                    for &(r, dw) in &defs {
                        for r2 in live_set.iter() {
                            if r2 != r && Some(r2) != copy_src {
                                add(dw, live[r2 as usize]);
                            }
                        }
                    }
                    for x in 0..defs.len() {
                        for y in x + 1..defs.len() {
                            add(defs[x].1, defs[y].1);
                        }
                    }
                    if !a.merge_writes {
                        for &(r, _) in &defs {
                            nlive -= live_set.remove(r) as usize;
                        }
                    }
                    let rn = read_nodes(i);
                    for (u, v) in chunks(&a.reads, rn) {
                        for (k, &n) in v.iter().enumerate() {
                            live[(u.num + k as u32) as usize] = web_of[n as usize];
                            nlive += live_set.insert(u.num + k as u32) as usize;
                        }
                    }
                    if a.merge_writes {
                        for &(r, dw) in &defs {
                            live[r as usize] = dw;
                            nlive += live_set.insert(r) as usize;
                        }
                    }
                }
            }
        }
        adj.finish();
        if !across_call.is_empty() {
            across_call.sort_unstable();
            across_call.dedup();
            return Err(PackError::LiveAcrossCall(across_call));
        }
        Ok(adj)
    }

    /// The order in which the groups are coloured (first appearance), their
    /// copy partners and alignments; fixed and broken groups keep their registers.
    fn order_groups(&mut self, code: &Code, f: FileCtx) {
        let Scratch {
            acc,
            rnodes,
            wnodes,
            rstart,
            wstart,
            web_of,
            web_reg,
            fixed,
            aligned,
            pairs,
            first,
            color,
            align_of,
            residue,
            group_parent,
            group_off,
            broken,
            affine,
            by_root,
            members,
            order,
            group_first,
            ..
        } = self;
        let FileCtx { file, nw, .. } = f;
        let nwebs = nw as u32;
        let mut groups = Groups { parent: group_parent, off: group_off, broken };
        let read_nodes = |i: usize| &rnodes[rstart[i]..rstart[i + 1]];
        let write_nodes = |i: usize| &wnodes[wstart[i]..wstart[i + 1]];
        // Copy affinities (MOV Rd, Rb).
        pairs.clear();
        for i in 0..acc.len() {
            if is_copy(code, acc, file, i) {
                let d = web_of[write_nodes(i)[0] as usize];
                let s = web_of[read_nodes(i)[0] as usize];
                pairs.push((d, s));
                pairs.push((s, d));
            }
        }
        affine.fill(nw, pairs);

        // Groups: members with offsets from the lowest, fixed or not.
        by_root.clear();
        by_root.extend((0..nwebs).map(|w| {
            let (root, off) = groups.find(w);
            (root, (w, off))
        }));
        members.fill(nw, by_root);
        let members: &Lists<(u32, i32)> = members;
        order.clear();
        order.extend((0..nwebs).filter(|&r| !members[r as usize].is_empty()));
        // First appearance of each web in program order.
        reset(first, nw, usize::MAX);
        for i in 0..acc.len() {
            for &n in read_nodes(i).iter().chain(write_nodes(i).iter()) {
                let w = web_of[n as usize] as usize;
                first[w] = first[w].min(i);
            }
        }
        group_first.clear();
        group_first.extend((0..nw).map(|r| members[r].iter().map(|&(w, _)| first[w as usize]).min().unwrap_or(usize::MAX)));
        order.sort_by_key(|&r| (group_first[r as usize], r));

        reset(color, nw, None);
        reset(align_of, nw, 1);
        for &(w, a) in aligned.iter() {
            align_of[w as usize] = align_of[w as usize].max(a);
        }
        // The residue an aligned group needs of each member: (modulus, residue),
        // so a copy partner can be placed where the copy can later vanish.
        reset(residue, nw, (1, 0));
        for ms in (0..nw).map(|r| &members[r]).filter(|ms| !ms.is_empty()) {
            let Some(&(m, moff)) = ms.iter().max_by_key(|&&(w, _)| align_of[w as usize]) else { continue };
            let a = align_of[m as usize];
            if a > 1 {
                for &(w, off) in ms {
                    residue[w as usize] = (a, (off - moff).rem_euclid(a as i32) as u32);
                }
            }
        }
        // Fixed and broken groups keep their registers.
        for root in order.iter() {
            let ms = &members[*root as usize];
            if groups.broken[*root as usize] || ms.iter().any(|&(w, _)| fixed[w as usize]) {
                for &(w, _) in ms {
                    color[w as usize] = Some(web_reg[w as usize]);
                }
            }
        }
    }

    /// Colours the groups in order; false when one finds no room or a
    /// fixed web ends up sharing a register with a neighbour.
    fn colour(&mut self, f: FileCtx, adj: &Interference) -> bool {
        let Scratch { color, align_of, residue, affine, members, order, .. } = self;
        let FileCtx { limit, nregs, reserved, nw, .. } = f;
        let (affine, members): (&Lists<u32>, &Lists<(u32, i32)>) = (affine, members);
        for root in order.iter() {
            let ms = &members[*root as usize];
            if color[ms[0].0 as usize].is_some() {
                continue;
            }
            let lo = ms.iter().map(|m| m.1).min().unwrap();
            let span = (ms.iter().map(|m| m.1).max().unwrap() - lo) as u32;
            let mut forbidden: SmallVec<[RegSet; 4]> = SmallVec::with_capacity(ms.len());
            for &(w, _) in ms {
                let mut f = RegSet::new(nregs);
                for n in adj.neighbours(w) {
                    if let Some(c) = color[n as usize] {
                        f.insert(c);
                    }
                }
                forbidden.push(f);
            }
            let fits = |base: u32| -> bool {
                if base + span >= limit {
                    return false;
                }
                ms.iter().zip(forbidden.iter()).all(|(&(w, off), f)| {
                    let r = base + (off - lo) as u32;
                    r != reserved && !f.contains(r) && r % align_of[w as usize] == 0
                })
            };
            // Prefer a copy partner's register, else that of a partner's partner
            // (a value copied into a copy that is then copied into an ABI
            // register), so both copies can vanish.
            let at = |c: u32, off: i32| {
                let rel = (off - lo) as u32;
                (c >= rel && fits(c - rel)).then(|| c - rel)
            };
            let partner = |w: u32, off: i32| affine[w as usize].iter().find_map(|&p| color[p as usize].and_then(|c| at(c, off)));
            let mut choice = ms.iter().find_map(|&(w, off)| partner(w, off)).or_else(|| {
                ms.iter().find_map(|&(w, off)| {
                    affine[w as usize].iter().filter(|&&p| color[p as usize].is_none()).find_map(|&p| partner(p, off))
                })
            });
            if choice.is_none() {
                // Prefer a base where every still-unplaced copy partner that is
                // part of an aligned pair or quad could later take this register.
                let hinted = |base: u32| {
                    ms.iter().all(|&(w, off)| {
                        let r = base + (off - lo) as u32;
                        affine[w as usize].iter().all(|&p| {
                            let (a, res) = residue[p as usize];
                            color[p as usize].is_some() || a == 1 || r % a == res
                        })
                    })
                };
                choice = (0..limit).find(|&b| fits(b) && hinted(b)).or_else(|| (0..limit).find(|&b| fits(b)));
            }
            let Some(base) = choice else {
                // No room: more than the file's registers are live.
                return false;
            };
            for &(w, off) in ms {
                color[w as usize] = Some(base + (off - lo) as u32);
            }
        }

        // A fixed web above the file (live into the function) cannot stay; a
        // placement that broke a fixed web's neighbour would be a bug: keep the
        // original code rather than emit it.
        for w in 0..nw {
            let c = color[w].unwrap();
            if c >= limit || adj.neighbours(w as u32).any(|n| color[n as usize] == Some(c)) {
                return false;
            }
        }
        true
    }

    /// Rewrites the fields with the colours and deletes the copies that
    /// became `MOV Rn, Rn` (`UMOV URn, URn`).
    fn rewrite(&mut self, code: &mut Code, f: FileCtx) -> Packed {
        let Scratch { acc, rnodes, wnodes, rstart, wstart, web_of, color, keep, .. } = self;
        let file = f.file;
        let read_nodes = |i: usize| &rnodes[rstart[i]..rstart[i + 1]];
        let write_nodes = |i: usize| &wnodes[wstart[i]..wstart[i + 1]];
        for i in 0..acc.len() {
            let a = &acc[i];
            let inst: &mut Inst = &mut code.items[i].inst;
            let (rn, wn) = (read_nodes(i), write_nodes(i));
            for (r, v) in chunks(&a.reads, rn).chain(chunks(&a.writes, wn)) {
                if let Some(f) = r.field {
                    inst.set_at(f as usize, color[web_of[v[0] as usize] as usize].unwrap() as u64);
                }
            }
        }

        // Delete copies that became `MOV Rn, Rn` (`UMOV URn, URn`).
        let mut copies_removed = 0;
        reset(keep, code.items.len(), true);
        for (i, it) in code.items.iter().enumerate() {
            if matches!(file, RegFile::R | RegFile::UR) && it.inst.form() == copy_form(file) && !it.inst.is_guarded() {
                let (d, s) = (it.inst.get_at(copy_fields(file).0), it.inst.get_at(copy_fields(file).1));
                if d == s {
                    keep[i] = false;
                    copies_removed += 1;
                }
            }
        }
        if copies_removed > 0 {
            let mut new_index = Vec::with_capacity(keep.len() + 1);
            let mut k = 0;
            for &kp in keep.iter() {
                new_index.push(k);
                if kp {
                    k += 1;
                }
            }
            new_index.push(k);
            for s in code.block_start.iter_mut() {
                *s = new_index[*s];
            }
        }
        // The highest register named by the instructions that stay (implicit
        // ABI registers are not counted, as `highest_reg` does not count them).
        let mut high = 0;
        for (i, a) in acc.iter().enumerate().filter(|&(i, _)| keep[i]) {
            let it = &code.items[i];
            let (nr, nw) = match file {
                RegFile::R => (a.reads.len() - it.implicit.reads.len(), a.writes.len() - it.implicit.writes.len()),
                _ => (a.reads.len(), a.writes.len()),
            };
            for r in a.reads[..nr].iter().chain(a.writes[..nw].iter()) {
                let num = r.field.map_or(r.num, |f| it.inst.get_at(f as usize) as u32);
                high = high.max(num + r.count);
            }
        }
        if copies_removed > 0 {
            let mut idx = 0;
            code.items.retain(|_| {
                idx += 1;
                keep[idx - 1]
            });
        }
        Packed { copies: copies_removed, high }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::code::testing::{code, text};
    use crate::ir::code::Implicit;

    #[test]
    fn singles_and_pairs_share_one_dense_file() {
        let mut c = code(&[
            "MOV R150, 0x7 ;",
            "IMAD.WIDE.U32 R[100:101], R150, 0x3, RZ ;",
            "IADD R160, R150, R101 ;",
            "IADD R170, R160, R100 ;",
            "MOV R4, R170 ;",
            "RET R[20:21] ;",
        ]);
        c.items[5].implicit = Implicit { reads: vec![4, 5, 1], writes: vec![] };
        let s = pack_regs(&mut c).unwrap();
        assert_eq!(s.regs_before, 171);
        // R4 (a result), R[20:21] (the return address) stay; everything else
        // packs below them, the pair on an even register.
        assert_eq!(text(&c), ["MOV R0, 0x7", "IMAD.WIDE.U32 R[2:3], R0, 0x3, RZ", "IADD R0, R0, R3", "IADD R4, R0, R2", "RET R[20:21]"]);
        assert_eq!(s.copies_removed, 1);
        assert_eq!(s.regs_after, 22);
    }

    #[test]
    fn values_live_around_a_loop_keep_distinct_registers() {
        // R200 counts down, R210 accumulates; both live around the back edge.
        let mut c = code(&[
            "MOV R200, 0xa ;",
            "MOV R210, RZ ;",
            ">IADD R210, R210, R200 ;",
            "IADD R200, R200, -0x1 ;",
            "ISETP.NE.AND.U32 P0, R200, 0x0, PT ;",
            "@P0 BRA TARGET ; -> 1",
            ">MOV R4, R210 ;",
            "RET R[20:21] ;",
        ]);
        c.items[7].implicit = Implicit { reads: vec![4, 5, 1], writes: vec![] };
        pack_regs(&mut c).unwrap();
        let t = text(&c);
        assert_eq!(t[0], "MOV R0, 0xa");
        // The accumulator is copied into R4 at the end: it gets R4 itself and
        // the copy disappears; the counter keeps a register of its own.
        assert_eq!(t[1], "MOV R4, RZ");
        assert_eq!(t[2], "IADD R4, R4, R0");
        assert_eq!(t[3], "IADD R0, R0, -0x1");
        assert_eq!(t.len(), 7);
    }

    #[test]
    fn a_guarded_write_keeps_the_old_value_s_register() {
        let mut c =
            code(&["MOV R100, 0x1 ;", "ISETP.NE.AND.U32 P0, R30, 0x0, PT ;", "@P0 MOV R100, 0x2 ;", "MOV R4, R100 ;", "RET R[20:21] ;"]);
        c.items[4].implicit = Implicit { reads: vec![4, 5, 1], writes: vec![] };
        pack_regs(&mut c).unwrap();
        let t = text(&c);
        // R30 is live in (an argument): it stays. Both writes of R100 are one value.
        assert_eq!(t[1], "ISETP.NE.AND.U32 P0, R30, 0x0, PT");
        assert_eq!(t[0], "MOV R4, 0x1");
        assert_eq!(t[2], "@P0 MOV R4, 0x2");
        assert_eq!(t.len(), 4);
    }
}
