//! Registers assigned directly on the SSA code, without regalloc2, when the
//! values fit (`docs/regalloc.md`, *Two allocators*).
//!
//! Every virtual register gets one machine register for its whole life, in
//! the dense file: `R0`–`R254` for 32-bit values and even-aligned pairs alike
//! (never `R1` when the function touches the stack pointer), `P0`–`P5` for
//! predicates (`P6` is the scratch predicate). The code is SSA, so its
//! interference graph is chordal: walking the blocks in reverse postorder
//! (every block after its dominators) and giving each value, where it is
//! defined, a register no live value holds uses no more registers than are
//! live at once, with no interference graph and no iteration. Liveness is a
//! dense bit set per block (`liveness`: a backward fixed point over the blocks).
//!
//! What the walk handles:
//! - operand kinds: a use is read at the start, a def written at the end (it
//!   may take the register of a use that dies there), an early def and a
//!   scratch before the uses are read (never sharing with a use);
//! - ABI registers: a fixed def gets its register (it must be free there); a
//!   fixed use whose value lives elsewhere is copied there just before the
//!   instruction (a parallel copy: the instruction's other operands and the
//!   values live past it must not be in the way);
//! - block parameters: each gets a register at the block's entry; the branch
//!   arguments are copied into them on each edge (a parallel copy, cycles
//!   broken through a free register, `P6` for predicates) at the end of a
//!   predecessor that ends with a jump, else at the start of a successor with
//!   one predecessor (the lowering splits critical edges);
//! - preferences, so copies vanish: the register of a value a copy (`MOV`)
//!   reads when it dies there, the ABI register a value is later used in
//!   (carried back through copies and block arguments), the register of the
//!   block parameter a value is passed to, the argument's register for a
//!   block parameter; then the lowest free register, as `pack_regs` would (in
//!   a function that calls, the ABI hint first);
//! - values live across a call (which may write every register): each keeps
//!   its register, away from the registers the calls fix, is stored to the
//!   spill slot of that register (in local memory) after its definition, and
//!   is reloaded after a call that is followed by a read of it before the
//!   next call; a predicate goes through `R0`, which then holds no value.
//!
//! It gives up ("not handled": `Err` with the reason, a [`GiveUp`], and regalloc2 runs) when the values do
//! not fit, values live across calls would go above the ABI registers, a
//! fixed register is in the way, the code names registers chosen at run time or
//! hard-coded registers other than the stack pointer, or the shape is unusual
//! (an unreachable block, a critical edge with arguments, …).

use smallvec::SmallVec;
use ursa_emit::forms::{self, MOV_R};
use ursa_emit::{RegFile, RegRef, RegSlot};
use ursa_isel::bitset::BitSet;
use ursa_isel::vcode::{Class, MInst, OpKind, Pseudo, VCode, VReg};

use crate::regalloc::assignment::{Assignment, Loc, Move};
use crate::regalloc::liveness::ValueLiveness;
use ursa_isel::abi::{P_SCRATCH, SPILL_SCRATCH};

/// `R0`–`R254`.
const NREGS: u32 = 255;
/// `P0`–`P5` hold values (`P6` is scratch).
const NPREDS: u32 = P_SCRATCH;
/// The stack pointer.
const SP: u32 = 1;
const NONE: u32 = u32::MAX;
// `number` keeps the fields of a piece in a `u64`.
const _: () = assert!(ursa_emit::inst::MAX_FIELDS <= 64);

/// Why the walk leaves a function to regalloc2 (printed as the reason by
/// `URSA_TRACE_ALLOCATOR`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GiveUp {
    /// Regalloc2 was asked for (`Options::regalloc2`): the walk did not run.
    Asked,
    /// The function has no blocks.
    NoBlocks,
    /// An instruction selects registers at run time (`R[UR, imm]`).
    DynamicRegisters,
    /// An instruction names a register of its own other than the stack pointer.
    NamedRegister,
    /// An operand is a predicate fixed to an ABI register.
    FixedPredicate,
    /// A block is not reachable from the entry.
    UnreachableBlock,
    /// A value is live into the entry block.
    LiveIntoFunction,
    /// A block reads a value no dominating block defined.
    UseBeforeDef,
    /// More values are live at once than the file holds.
    Full,
    /// A fixed register is taken by a value still needed there.
    AbiRegisterInTheWay,
    /// A parallel copy has a cycle and no free register to break it.
    NoCycleRegister,
    /// A pair continued by a half write is still read after it.
    ContinuedInUse,
    /// A branch passes other arguments than its target's parameters.
    ArgsParamsDiffer,
    /// An edge from a block with several successors to one with several
    /// predecessors passes arguments.
    CriticalEdgeWithArgs,
    /// Values live across calls would be kept above the ABI registers.
    TooManyAcrossCalls,
}

impl std::fmt::Display for GiveUp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            GiveUp::Asked => "regalloc2 asked for",
            GiveUp::NoBlocks => "no blocks",
            GiveUp::DynamicRegisters => "registers chosen at run time",
            GiveUp::NamedRegister => "a register named by the instruction",
            GiveUp::FixedPredicate => "a fixed predicate",
            GiveUp::UnreachableBlock => "an unreachable block",
            GiveUp::LiveIntoFunction => "values live into the function",
            GiveUp::UseBeforeDef => "a value used before its definition",
            GiveUp::Full => "the registers are full",
            GiveUp::AbiRegisterInTheWay => "an ABI register in the way",
            GiveUp::NoCycleRegister => "no register for a cycle",
            GiveUp::ContinuedInUse => "a register to continue still in use",
            GiveUp::ArgsParamsDiffer => "branch arguments and parameters differ",
            GiveUp::CriticalEdgeWithArgs => "a critical edge with arguments",
            GiveUp::TooManyAcrossCalls => "too many values live across calls",
        })
    }
}

/// A set of registers of one file (256 bits, inline).
type RegBits = BitSet<u32, [u64; 4]>;

/// Registers of a class a value takes: 1, or 2 for a pair.
fn size(c: Class) -> u32 {
    (c == Class::RPair) as u32 + 1
}

/// A set of virtual registers, by number (its words on the heap: the
/// walk's loops test and add members for every operand).
type VSet = BitSet<u32, Vec<u64>>;
/// The liveness of the virtual registers, per block, and the tables
/// `block_liveness` fills it from.
#[derive(Default)]
pub struct VLiveness {
    pub sets: ValueLiveness,
    gen: Vec<(u32, u32)>,
    kill: Vec<(u32, u32)>,
    read: Vec<u32>,
    written: Vec<u32>,
}

thread_local! {
    /// The liveness sets, reused from one function to the next (most
    /// functions are small: allocating them per function cost more than
    /// solving).
    static LIVENESS: std::cell::RefCell<VLiveness> = std::cell::RefCell::default();
    /// The walk's own tables, reused likewise ([`Tables`]); boxed, so that
    /// taking and giving them back moves a pointer.
    static TABLES: std::cell::RefCell<Option<Box<Tables>>> = const { std::cell::RefCell::new(None) };
}

/// The walk's per-function tables whose storage is kept from one function
/// to the next (most functions are small: allocating them per function
/// cost more than filling them): taken by [`Walk::new`] from the thread,
/// given back by [`Walk::recycle`].
#[derive(Default)]
struct Tables {
    /// Flat index of each block's first instruction (the count at the end).
    first: Vec<usize>,
    rpo: Vec<usize>,
    hint: Vec<u32>,
    param_of: Vec<u32>,
    /// Per value: how many operands read it (at most 2: "more than one").
    reads: Vec<u8>,
    same: Vec<u32>,
    /// Per operand: its value dies there (a use read for the last time, a
    /// result nobody reads).
    dies: Vec<bool>,
    /// Per block parameter: live at its block's start.
    param_live: Vec<bool>,
    /// Per value: live across a call.
    crosses: Vec<bool>,
    /// Per group: a value of it is live across a call.
    cross_g: Vec<bool>,
    /// The register of each value, once placed.
    reg: Vec<u32>,
    /// The register the live values of each group hold.
    group_reg: Vec<u32>,
    /// Pairs that hold one of their two registers until an instruction
    /// ([`half_claim`]): `LOW` the first half of a pair a later instruction
    /// continues, `HIGH` a pair whose low half is read no more.
    partial: Vec<u8>,
    /// (program point, phase: 0 edge copies, 1 stores of block parameters,
    /// 2 operand copies; move).
    moves: Vec<(u32, u8, Move)>,
    // Scratch, reused from one instruction to the next.
    copies: Vec<(u32, u32)>,
    seq: Vec<(u32, u32)>,
    /// The live sets of [`Walk::find_deaths`].
    live: VSet,
    needed: VSet,
    /// The register state of the walk.
    state: Regs,
}

/// `v` made `n` copies of `x` (its storage kept).
fn refill<T: Clone>(v: &mut Vec<T>, n: usize, x: T) {
    v.clear();
    v.resize(n, x);
}

/// The register a plain copy `MOV Rd, Rb` reads: (operand, high half).
pub(crate) fn copy_source(m: &MInst) -> Option<(usize, bool)> {
    if m.pseudo != Pseudo::None || m.pieces.len() != 1 || m.pieces[0].form() != forms::MOV_R || m.pieces[0].is_guarded() {
        return None;
    }
    let rb = MOV_R::RB.index as u8;
    m.fixups.iter().find(|f| f.field == rb).map(|f| (f.opnd as usize, f.hi))
}

/// The moves of a parallel copy of 32-bit registers (or predicates):
/// `copies` (destination, source) with distinct destinations, made one at a
/// time; a cycle goes through `temp()`, a register no copy reads or writes
/// and no live value holds. None when a cycle finds no such register.
fn sequentialize(copies: &mut Vec<(u32, u32)>, temp: impl FnOnce() -> Option<u32>, out: &mut Vec<(u32, u32)>) -> Option<()> {
    copies.retain(|&(d, s)| d != s);
    let mut temp = Some(temp);
    let mut t = None;
    while !copies.is_empty() {
        // A copy whose destination no other copy still reads goes now.
        if let Some(k) = copies.iter().position(|&(d, _)| !copies.iter().any(|&(_, s)| s == d)) {
            out.push(copies.remove(k));
            continue;
        }
        // Only cycles are left: save one destination in the scratch register.
        if t.is_none() {
            t = temp.take().and_then(|f| f());
        }
        let t = t?;
        if copies.iter().any(|&(_, s)| s == t) {
            return None;
        }
        let d = copies[0].0;
        out.push((t, d));
        for c in copies.iter_mut().filter(|c| c.1 == d) {
            c.1 = t;
        }
    }
    Some(())
}

/// The register state of the walk: which value holds each register.
struct Regs {
    /// Value in each general register (NONE: free); inline, as the counts
    /// (no allocation per function).
    r: [u32; 256],
    r_bits: RegBits,
    p: [u32; 8],
    p_bits: RegBits,
    /// Live values holding each register (values of one group share).
    r_count: [u32; 256],
    p_count: [u32; 8],
    /// Registers never given to a value (`R1` when the stack pointer is used).
    reserved: RegBits,
}

impl Default for Regs {
    fn default() -> Regs {
        Regs::new(RegBits::default())
    }
}

impl Regs {
    fn new(reserved: RegBits) -> Regs {
        let mut regs = Regs {
            r: [NONE; 256],
            r_bits: RegBits::default(),
            p: [NONE; 8],
            p_bits: RegBits::default(),
            r_count: [0; 256],
            p_count: [0; 8],
            reserved,
        };
        regs.reset();
        regs
    }
    /// Every register free.
    fn reset(&mut self) {
        self.r.fill(NONE);
        self.r_bits = RegBits::default();
        self.p = [NONE; 8];
        self.r_count.fill(0);
        self.p_count = [0; 8];
        // Only P0-P5 are ever free.
        self.p_bits = RegBits::from_words([!0x3f, !0, !0, !0]);
    }
    /// The group of values (see `same`) holding `r`, or NONE.
    fn holder(&self, c: Class, r: u32) -> u32 {
        match c {
            Class::P => self.p.get(r as usize).copied().unwrap_or(NONE),
            _ => self.r.get(r as usize).copied().unwrap_or(NONE),
        }
    }
    /// One more live value of group `g` holds `r`.
    fn take(&mut self, c: Class, r: u32, g: u32) {
        match c {
            Class::P => {
                self.p[r as usize] = g;
                self.p_bits.insert(r);
                self.p_count[r as usize] += 1;
            }
            _ => {
                for x in r..r + size(c) {
                    self.r[x as usize] = g;
                    self.r_bits.insert(x);
                    self.r_count[x as usize] += 1;
                }
            }
        }
    }
    /// A value of group `g` holding `r` dies: the register is free once no
    /// value of the group holds it.
    fn free(&mut self, c: Class, r: u32, g: u32) {
        if self.holder(c, r) != g {
            return;
        }
        match c {
            Class::P => {
                self.p_count[r as usize] -= 1;
                if self.p_count[r as usize] == 0 {
                    self.p[r as usize] = NONE;
                    self.p_bits.remove(r);
                }
            }
            _ => {
                for x in r..r + size(c) {
                    self.r_count[x as usize] -= 1;
                    if self.r_count[x as usize] == 0 {
                        self.r[x as usize] = NONE;
                        self.r_bits.remove(x);
                    }
                }
            }
        }
    }
    /// Live values holding `r`.
    fn count(&self, c: Class, r: u32) -> u32 {
        match c {
            Class::P => self.p_count[r as usize],
            _ => self.r_count[r as usize],
        }
    }
    /// Whether a value of class `c` may take `r`, besides the registers in `avoid`.
    fn fits(&self, c: Class, r: u32, avoid: &Avoid) -> bool {
        match c {
            Class::P => r < NPREDS && !self.p_bits.contains(r) && !avoid.p.contains(r),
            _ => {
                let n = size(c);
                (c != Class::RPair || r % 2 == 0)
                    && r + n <= NREGS
                    && (r..r + n).all(|x| !self.r_bits.contains(x) && !self.reserved.contains(x) && !avoid.r.contains(x))
            }
        }
    }
    /// The lowest register a value of class `c` may take.
    fn lowest(&self, c: Class, avoid: &Avoid) -> Option<u32> {
        match c {
            Class::P => {
                let mut busy = self.p_bits;
                busy.union_with(&avoid.p);
                busy.lowest_absent(NPREDS as usize, false)
            }
            _ => {
                let mut busy = self.r_bits;
                busy.union_with(&self.reserved);
                busy.union_with(&avoid.r);
                busy.lowest_absent(NREGS as usize, c == Class::RPair)
            }
        }
    }
    /// Whether a quad `R[r:r+3]` (two pairs) may take `r`, a multiple of 4.
    fn fits_quad(&self, r: u32, avoid: &Avoid) -> bool {
        r % 4 == 0 && self.fits(Class::RPair, r, avoid) && self.fits(Class::RPair, r + 2, avoid)
    }
    /// The lowest register a quad may take.
    fn lowest_quad(&self, avoid: &Avoid) -> Option<u32> {
        (0..NREGS).step_by(4).find(|&r| self.fits_quad(r, avoid))
    }
    /// The lowest register a value of class `c` may take where `ok` agrees.
    fn lowest_where(&self, c: Class, avoid: &Avoid, ok: impl Fn(u32) -> bool) -> Option<u32> {
        let mut avoid = *avoid;
        loop {
            let r = self.lowest(c, &avoid)?;
            if ok(r) {
                return Some(r);
            }
            avoid.add(c, r);
        }
    }
}

/// Registers a choice must avoid besides the occupied ones, per file.
#[derive(Clone, Copy, Default)]
struct Avoid {
    r: RegBits,
    p: RegBits,
}

impl Avoid {
    /// Both sets.
    fn with(&self, other: &Avoid) -> Avoid {
        let mut a = *self;
        a.r.union_with(&other.r);
        a.p.union_with(&other.p);
        a
    }
    fn add(&mut self, c: Class, r: u32) {
        match c {
            Class::P => self.p.insert(r),
            _ => self.r.insert(r),
        };
    }
}

/// The first and last pieces of bundle `m` that name half `h` of operand
/// `k` (a pair's low half is named by a 64-bit field too), or None.
pub(crate) fn piece_span(m: &MInst, k: usize, h: u32) -> Option<(u8, u8)> {
    let mut span: Option<(u8, u8)> = None;
    for fx in m.fixups.iter().filter(|f| f.opnd as usize == k) {
        if m.names_half(fx, h) {
            widen(&mut span, fx.piece);
        }
    }
    span
}

/// `span` (first and last piece) grown to take in `piece`.
fn widen(span: &mut Option<(u8, u8)>, piece: u8) {
    *span = Some(span.map_or((piece, piece), |(a, b)| (a.min(piece), b.max(piece))));
}

/// [`piece_span`] of every operand and half of bundle `m` (indexed by
/// operand), in one pass over its fixups; a high half only where `pair(k)`
/// says operand `k` has one.
pub(crate) fn piece_spans(m: &MInst, pair: impl Fn(usize) -> bool, out: &mut Vec<[Option<(u8, u8)>; 2]>) {
    out.clear();
    out.resize(m.opnds.len(), [None; 2]);
    let low = m.low_fields();
    for fx in m.fixups.iter() {
        let k = fx.opnd as usize;
        for h in 0..1 + pair(k) as u32 {
            if m.names_half_of(fx, h, || low[fx.piece as usize] >> fx.field & 1 != 0) {
                widen(&mut out[k][h as usize], fx.piece);
            }
        }
    }
}

/// The pieces of bundle `m` that half `h` of result operand `k` spans: from
/// the first that names it to the last (a scratch register), or to the end
/// and past it (an early def, live after).
pub(crate) fn result_span(m: &MInst, k: usize, h: u32, kind: OpKind) -> (u8, u8) {
    span_of_result(piece_span(m, k, h), kind)
}

/// [`result_span`] from the operand half's [`piece_span`].
fn span_of_result(span: Option<(u8, u8)>, kind: OpKind) -> (u8, u8) {
    let (f, l) = span.unwrap_or((0, u8::MAX));
    (f, if kind == OpKind::Temp { l } else { u8::MAX })
}

/// In a bundle of several pieces, whether half `h` of result operand `d`
/// (an early def) may share register `x` with the uses `reads`: (file is P,
/// register, last piece reading it) — when each reads it no later than the
/// piece that first writes the half (a piece reads before it writes).
pub(crate) fn early_def_may_share(m: &MInst, d: usize, h: u32, p_file: bool, x: u32, reads: &[(bool, u32, u8)]) -> bool {
    reads_done_by(first_write(m, d, h), p_file, x, reads)
}

/// The piece that first writes half `h` of result operand `d` of bundle `m`
/// (0 when none names it).
fn first_write(m: &MInst, d: usize, h: u32) -> u8 {
    piece_span(m, d, h).map_or(0, |s| s.0)
}

/// [`early_def_may_share`] with the piece that first writes the half given
/// (`write`): whether every use of `reads` in register `x` is read no
/// later than that piece.
fn reads_done_by(write: u8, p_file: bool, x: u32, reads: &[(bool, u32, u8)]) -> bool {
    reads.iter().all(|&(isp, r, last)| isp != p_file || r != x || last <= write)
}

/// The values live across each call (`MInst::clobbers_all`) that are
/// reloaded after it: per call (flat instruction, first and end index of its
/// values in `vals`), sorted by instruction once all are found.
#[derive(Default)]
struct Reloads {
    calls: Vec<(u32, u32, u32)>,
    vals: Vec<u32>,
}

impl Reloads {
    /// The values to reload after flat instruction `i`.
    fn after(&self, i: u32) -> &[u32] {
        match self.calls.binary_search_by_key(&i, |c| c.0) {
            Ok(k) => &self.vals[self.calls[k].1 as usize..self.calls[k].2 as usize],
            Err(_) => &[],
        }
    }
}

/// The spill slot of the values in register `r` of class `c` (before
/// [`compact_slots`]): the slot belongs to the register, which no two values
/// live at once hold, so neither do their slots; units 0–255 for singles,
/// 256–511 for pairs (even), 512 up for predicates.
fn slot_key(c: Class, r: u32) -> u32 {
    match c {
        Class::R => r,
        Class::RPair => 256 + r,
        Class::P => 512 + r,
    }
}
const SLOT_KEYS: usize = 520;

/// The store of register `r` of class `c` into its slot.
fn spill(c: Class, r: u32) -> Move {
    Move { class: c, from: Loc::Reg(r), to: Loc::Slot(slot_key(c, r)) }
}

/// Renumbers the slots of `moves` densely (pairs first: two units each);
/// the number of units.
fn compact_slots(moves: &mut [Move]) -> usize {
    let mut key_unit = vec![NONE; SLOT_KEYS];
    for m in moves.iter() {
        if let Some(s) = m.from.slot().or(m.to.slot()) {
            key_unit[s as usize] = 0;
        }
    }
    let mut n = 0;
    for key in (256..512).chain(0..256).chain(512..SLOT_KEYS) {
        if key_unit[key] == 0 {
            key_unit[key] = n;
            n += if (256..512).contains(&key) { 2 } else { 1 };
        }
    }
    for m in moves.iter_mut() {
        for l in [&mut m.from, &mut m.to] {
            if let Loc::Slot(s) = l {
                *s = key_unit[*s as usize];
            }
        }
    }
    n as usize
}

/// Assigns the registers (see the module docs); the reason when the function
/// is left to regalloc2.
pub fn assign_regs_ssa(vcode: &VCode) -> Result<Assignment, GiveUp> {
    assign_regs_ssa_after(vcode, None)
}

/// [`assign_regs_ssa`] given the block liveness of `vcode` when a pass
/// before it computed it on the same code (`block_liveness`, as
/// `opt_instr_sched_prepass` does: reordering instructions within their
/// blocks changes no block's liveness).
pub fn assign_regs_ssa_after(vcode: &VCode, known: Option<VLiveness>) -> Result<Assignment, GiveUp> {
    let solved = known.is_some();
    let mut liveness = known.unwrap_or_else(take_liveness);
    let asg = assign_with(vcode, &mut liveness, solved);
    LIVENESS.with(|l| l.replace(liveness));
    asg
}

/// The thread's liveness tables, for [`block_liveness`] (their storage
/// reused; [`assign_regs_ssa_after`] gives them back).
pub(crate) fn take_liveness() -> VLiveness {
    LIVENESS.with(|l| l.take())
}

fn assign_with(vcode: &VCode, liveness: &mut VLiveness, solved: bool) -> Result<Assignment, GiveUp> {
    let mut walk = Walk::new(vcode, liveness, solved)?;
    for k in 0..walk.t.rpo.len() {
        let b = walk.t.rpo[k];
        walk.enter_block(b)?;
        for j in 0..vcode.blocks[b].insts.len() {
            walk.assign_inst(b, j)?;
        }
    }
    walk.edge_copies()?;
    let out = walk.finish();
    walk.recycle();
    out
}

/// The flat numbering of `vcode`'s instructions and operands: each block's
/// first instruction (and the count at the end), each instruction's first
/// operand (and the count at the end); whether the code touches the stack
/// pointer. Code the walk does not handle is refused here.
fn number(vcode: &VCode, first: &mut Vec<usize>) -> Result<(Vec<u32>, bool), GiveUp> {
    first.clear();
    let mut op_at = Vec::with_capacity(vcode.blocks.iter().map(|b| b.insts.len()).sum::<usize>() + 1);
    let mut nops = 0u32;
    let mut uses_sp = vcode.slots_size > 0 || vcode.incoming_bytes > 0 || vcode.makes_calls;
    let mut refs: Vec<RegRef> = Vec::with_capacity(16);
    let mut filled: Vec<u64> = Vec::new();
    for b in &vcode.blocks {
        first.push(op_at.len());
        for m in &b.insts {
            op_at.push(nops);
            nops += m.opnds.len() as u32;
            if matches!(m.pseudo, Pseudo::Ret | Pseudo::TailCall { .. } | Pseudo::Call | Pseudo::FrameRel { .. }) {
                uses_sp = true;
            }
            // In a bundle of several pieces, the fields an operand fills in
            // each, as bit sets (a form has at most `MAX_FIELDS` fields), from
            // one pass over the fixups.
            if m.pieces.len() > 1 {
                filled.clear();
                filled.resize(m.pieces.len(), 0);
                for fx in m.fixups.iter() {
                    filled[fx.piece as usize] |= 1 << fx.field;
                }
            }
            for (pi, p) in m.pieces.iter().enumerate() {
                if p.has_dynamic_regs() {
                    return Err(GiveUp::DynamicRegisters);
                }
                refs.clear();
                p.reg_refs_into(&mut refs);
                if refs.is_empty() {
                    continue;
                }
                let filled = match m.pieces.len() {
                    1 => m.fixups.iter().fold(0u64, |a, fx| a | 1 << fx.field),
                    _ => filled[pi],
                };
                // A register in a field no operand fills is named by the
                // instruction itself: the stack pointer, or the return
                // address a call writes (a call clobbers every register).
                for r in &refs {
                    let field = match r.slot {
                        RegSlot::Field(f) => f,
                        RegSlot::Guard => p.def().guard.unwrap_or(u16::MAX),
                    };
                    if field < 64 && filled >> field & 1 != 0 {
                        continue;
                    }
                    match r.file {
                        RegFile::R if r.num == SP && r.count == 1 => uses_sp = true,
                        RegFile::R if m.clobbers_all => {}
                        RegFile::R | RegFile::P => return Err(GiveUp::NamedRegister),
                        _ => {}
                    }
                }
            }
            if m.opnds.iter().any(|o| o.fixed.is_some() && vcode.class(o.vreg) == Class::P) {
                return Err(GiveUp::FixedPredicate);
            }
        }
    }
    let n = op_at.len();
    op_at.push(nops);
    first.push(n);
    Ok((op_at, uses_sp))
}

/// Into `rpo`, the blocks in reverse postorder from the entry.
fn reverse_postorder(vcode: &VCode, rpo: &mut Vec<usize>) -> Result<(), GiveUp> {
    let nb = vcode.blocks.len();
    rpo.clear();
    let mut seen = vec![false; nb];
    let mut stack: Vec<(usize, usize)> = vec![(0, 0)];
    seen[0] = true;
    while let Some(&mut (b, ref mut k)) = stack.last_mut() {
        if let Some(s) = vcode.blocks[b].succs.get(*k) {
            *k += 1;
            let s = s.0 as usize;
            if s < nb && !seen[s] {
                seen[s] = true;
                stack.push((s, 0));
            }
        } else {
            rpo.push(b);
            stack.pop();
        }
    }
    if rpo.len() != nb {
        return Err(GiveUp::UnreachableBlock);
    }
    rpo.reverse();
    Ok(())
}

/// Liveness of the virtual registers: upward-exposed uses and definitions
/// per block, then the sets ([`ValueLiveness`]).
pub(crate) fn block_liveness(vcode: &VCode, liveness: &mut VLiveness) {
    let VLiveness { sets, gen, kill, read, written } = liveness;
    let nv = vcode.classes.len();
    gen.clear();
    kill.clear();
    // Per value: the last block + 1 that read it before writing it, and
    // that wrote it.
    for m in [&mut *read, &mut *written] {
        m.clear();
        m.resize(nv, 0);
    }
    for (b, blk) in vcode.blocks.iter().enumerate() {
        let mark = b as u32 + 1;
        for v in blk.params.iter().map(|p| p.0) {
            if written[v as usize] != mark {
                written[v as usize] = mark;
                kill.push((v, b as u32));
            }
        }
        for m in &blk.insts {
            for v in m.opnds.iter().filter(|o| o.kind == OpKind::Use).map(|o| o.vreg.0).chain(m.args().iter().flatten().map(|a| a.0)) {
                if written[v as usize] != mark && read[v as usize] != mark {
                    read[v as usize] = mark;
                    gen.push((v, b as u32));
                }
            }
            for v in m.opnds.iter().filter(|o| o.kind != OpKind::Use).map(|o| o.vreg.0) {
                if written[v as usize] != mark {
                    written[v as usize] = mark;
                    kill.push((v, b as u32));
                }
            }
        }
    }
    sets.solve(vcode.blocks.len(), nv, gen, kill, |b| vcode.blocks[b].succs.iter().map(|s| s.0 as usize));
}

/// Preferred registers: the ABI register a value is used in, carried back
/// through copies and block arguments, and to the inputs read only by the
/// instruction that computes a value with one (`hint`); the block parameter
/// a value is passed to, carried back to the inputs of the instruction that
/// computes it (`param_of`). `reads`: working memory.
fn hints(vcode: &VCode, hint: &mut Vec<u32>, param_of: &mut Vec<u32>, reads: &mut Vec<u8>) {
    let nv = vcode.classes.len();
    let class = |v: u32| vcode.classes[v as usize];
    refill(hint, nv, NONE);
    refill(param_of, nv, NONE);
    refill(reads, nv, 0);
    for b in &vcode.blocks {
        for m in &b.insts {
            for o in m.opnds.iter().filter(|o| o.kind == OpKind::Use) {
                let n = &mut reads[o.vreg.0 as usize];
                *n = (*n + 1).min(2);
                if let (Some(r), NONE) = (o.fixed, hint[o.vreg.0 as usize]) {
                    hint[o.vreg.0 as usize] = r as u32;
                }
            }
            for (t, args) in m.targets().iter().zip(m.args().iter()) {
                for (a, p) in args.iter().zip(vcode.blocks[t.0 as usize].params.iter()) {
                    reads[a.0 as usize] = 2;
                    if param_of[a.0 as usize] == NONE {
                        param_of[a.0 as usize] = p.0;
                    }
                }
            }
        }
    }
    let quads = vcode.has_quads && !vcode.makes_calls;
    if quads {
        quad_hints(vcode, hint);
    }
    for b in vcode.blocks.iter().rev() {
        for m in b.insts.iter().rev() {
            for (t, args) in m.targets().iter().zip(m.args().iter()) {
                for (a, p) in args.iter().zip(vcode.blocks[t.0 as usize].params.iter()) {
                    if hint[a.0 as usize] == NONE && class(a.0) == class(p.0) {
                        hint[a.0 as usize] = hint[p.0 as usize];
                    }
                }
            }
            // A pair continued by a half write is that value's register.
            for o in m.opnds.iter() {
                if let OpKind::Reuse(u) = o.kind {
                    let s = m.opnds[u as usize].vreg.0;
                    if hint[s as usize] == NONE {
                        hint[s as usize] = hint[o.vreg.0 as usize];
                    }
                    if param_of[s as usize] == NONE {
                        param_of[s as usize] = param_of[o.vreg.0 as usize];
                    }
                }
            }
            // The block parameter a result is passed to is also preferred by
            // the inputs it is computed from (of its class, not fixed): one of
            // them that dies there leaves the register to the result, so a
            // chain of updates (a pointer stepped four times in an unrolled
            // loop) stays in the parameter's register and the back edge needs
            // no copy.
            let mut results = m.opnds.iter().filter(|o| o.kind != OpKind::Use);
            if let (Some(d), None) = (results.next(), results.next()) {
                let p = param_of[d.vreg.0 as usize];
                if d.kind == OpKind::Def && d.fixed.is_none() && p != NONE {
                    for o in m.opnds.iter().filter(|o| o.kind == OpKind::Use && o.fixed.is_none() && class(o.vreg.0) == class(d.vreg.0)) {
                        if param_of[o.vreg.0 as usize] == NONE {
                            param_of[o.vreg.0 as usize] = p;
                        }
                    }
                }
                // Likewise the ABI register a result goes to, for the
                // inputs nothing else reads (they die here): a chain of
                // lane arithmetic ending in a result register is computed
                // in it, and the return needs no copy. (Not with the
                // hints of stored quads, which the copies that pack the
                // lanes carry back themselves.)
                let h = hint[d.vreg.0 as usize];
                if !quads && d.kind == OpKind::Def && h != NONE && class(d.vreg.0) == Class::R && m.pseudo == Pseudo::None {
                    for o in m.opnds.iter().filter(|o| o.kind == OpKind::Use && o.fixed.is_none() && class(o.vreg.0) == Class::R) {
                        if hint[o.vreg.0 as usize] == NONE && reads[o.vreg.0 as usize] == 1 {
                            hint[o.vreg.0 as usize] = h;
                        }
                    }
                }
            }
            // (The rest concerns copies: most instructions are not.)
            let Some((k, hi)) = copy_source(m) else { continue };
            if let Some(d) = m.opnds.iter().find(|o| o.kind == OpKind::Def) {
                let s = m.opnds[k].vreg.0;
                let h = hint[d.vreg.0 as usize];
                if hint[s as usize] == NONE && h != NONE && !hi && (class(s) != Class::RPair || h % 2 == 0) {
                    hint[s as usize] = h;
                }
            }
            // A word copied into the high half of a pair (the second half
            // of a pair written half by half): the pair's high register.
            if let (false, Some(d)) = (hi, copy_dest_hi(m)) {
                let (s, h) = (m.opnds[k].vreg.0, hint[d as usize]);
                if hint[s as usize] == NONE && h != NONE && class(s) == Class::R && class(d) == Class::RPair {
                    hint[s as usize] = h + 1;
                }
            }
        }
    }
}

/// The first quad register the hints of stored quads take (downwards,
/// `quad_hints`), and how many quads they may take.
const QUAD_HINT_TOP: u32 = 248;
const QUAD_HINTS: u32 = 16;
/// The lowest register a quad hint names.
const QUAD_HINT_BOTTOM: u32 = QUAD_HINT_TOP + 4 - 4 * QUAD_HINTS;

/// The pairs a `.128` store reads (a quad, `MInst::quads`): each such store
/// its own quad as the hint, from the top of the file down, so the values
/// stored are computed in the quad's registers (the hints are carried back
/// through the copies that pack words into the pairs) and the store needs no
/// copy into a free quad. `pack_regs` then packs the registers densely (a
/// quad at a multiple of 4). Pairs with a hint (a fixed register) keep it.
fn quad_hints(vcode: &VCode, hint: &mut [u32]) {
    let mut quads = (0..QUAD_HINTS).map(|k| QUAD_HINT_TOP - 4 * k);
    for m in vcode.blocks.iter().flat_map(|b| b.insts.iter()) {
        for (lo, hi) in m.quads() {
            let (a, b) = (&m.opnds[lo], &m.opnds[hi]);
            let (va, vb) = (a.vreg.0 as usize, b.vreg.0 as usize);
            if a.kind != OpKind::Use || a.fixed.is_some() || b.fixed.is_some() || hint[va] != NONE || hint[vb] != NONE || va == vb {
                continue;
            }
            let Some(q) = quads.next() else { return };
            hint[va] = q;
            hint[vb] = q + 2;
        }
    }
}

/// The pair a `MOV` writes the high half of (its destination field bound
/// to the high half).
fn copy_dest_hi(m: &MInst) -> Option<u32> {
    let rd = MOV_R::RD.index as u8;
    m.fixups.iter().find(|f| f.field == rd && f.hi).map(|f| m.opnds[f.opnd as usize].vreg.0)
}

/// Values that hold one value (`same[v]`, the group's first value): a
/// 32-bit copy's result and its source; a block parameter and the one
/// value (or copies of it) every edge passes. In SSA code two such values
/// hold the same bits wherever both are live, so they may share a
/// register although both are live (the copy, or the edge's copy, then
/// vanishes).
fn same_value_groups(vcode: &VCode, rpo: &[usize], same: &mut Vec<u32>) {
    let nv = vcode.classes.len();
    let class = |v: u32| vcode.classes[v as usize];
    same.clear();
    same.extend(0..nv as u32);
    let find = |same: &[u32], mut v: u32| {
        while same[v as usize] != v {
            v = same[v as usize];
        }
        v
    };
    let mut changed = true;
    while changed {
        changed = false;
        for &b in rpo {
            let blk = &vcode.blocks[b];
            for (k, p) in blk.params.iter().enumerate() {
                let gp = find(same, p.0);
                let mut g = NONE;
                let mut one = true;
                for pred in &blk.preds {
                    let Some(t) = vcode.blocks[pred.0 as usize].insts.last() else { continue };
                    for (tb, args) in t.targets().iter().zip(t.args().iter()) {
                        if tb.0 as usize != b {
                            continue;
                        }
                        let Some(a) = args.get(k) else { continue };
                        let ga = find(same, a.0);
                        if ga == gp {
                            continue;
                        }
                        if class(a.0) != class(p.0) || (g != NONE && g != ga) {
                            one = false;
                        }
                        g = ga;
                    }
                }
                if one && g != NONE && g != gp {
                    same[gp as usize] = g;
                    changed = true;
                }
            }
            for m in &blk.insts {
                let Some((k, false)) = copy_source(m) else { continue };
                if let Some(d) = m.opnds.iter().find(|o| o.kind == OpKind::Def) {
                    let (gs, gd) = (find(same, m.opnds[k].vreg.0), find(same, d.vreg.0));
                    if gs != gd && class(m.opnds[k].vreg.0) == Class::R && class(d.vreg.0) == Class::R && gd == d.vreg.0 {
                        same[gd as usize] = gs;
                        changed = true;
                    }
                }
            }
        }
    }
    for v in 0..nv as u32 {
        same[v as usize] = find(same, v);
    }
}

/// The allocator's state: what the analyses found before the walk (fixed
/// from then on) and the registers and moves chosen so far.
struct Walk<'a> {
    vcode: &'a VCode,
    /// The tables kept from one function to the next ([`Tables`]).
    t: Box<Tables>,
    /// Each flat instruction's first operand (the count at the end).
    op_at: Vec<u32>,
    liveness: &'a mut VLiveness,
    /// Registers never given to a value.
    reserved: RegBits,
    reloads: Reloads,
    /// The registers calls fix (their arguments and results).
    call_fixed: Avoid,
    /// In a function that calls, values mostly flow into ABI registers:
    /// their hints come before the registers of copies' sources and of
    /// branch arguments.
    hint_first: bool,

    /// The register of each operand.
    regs: Vec<u32>,
    reads: SmallVec<[(bool, u32, u8); 8]>,
    placed: SmallVec<[(bool, u32, u8, u8); 8]>,
    /// In a bundle of several pieces, per operand and half: its
    /// [`piece_span`] ([`piece_spans`]).
    spans: Vec<[Option<(u8, u8)>; 2]>,
    stored_args: SmallVec<[u32; 4]>,
    copied_out: SmallVec<[(Class, u32, u32); 2]>,
}

impl<'a> Walk<'a> {
    /// The analyses: numbering, order, liveness (unless `solved`: already
    /// in `liveness`), hints, groups, deaths and calls.
    fn new(vcode: &'a VCode, liveness: &'a mut VLiveness, solved: bool) -> Result<Walk<'a>, GiveUp> {
        let nv = vcode.classes.len();
        if vcode.blocks.is_empty() {
            return Err(GiveUp::NoBlocks);
        }
        let mut t = TABLES.with(|t| t.borrow_mut().take()).unwrap_or_default();
        let (op_at, uses_sp) = number(vcode, &mut t.first)?;
        let mut reserved = RegBits::default();
        if uses_sp {
            reserved.insert(SP);
        }
        reverse_postorder(vcode, &mut t.rpo)?;
        if !solved {
            block_liveness(vcode, liveness);
        }
        if !liveness.sets.live_in(0).is_empty() {
            return Err(GiveUp::LiveIntoFunction);
        }
        hints(vcode, &mut t.hint, &mut t.param_of, &mut t.reads);
        same_value_groups(vcode, &t.rpo, &mut t.same);
        let nops = *op_at.last().unwrap() as usize;
        t.moves.clear();
        refill(&mut t.dies, nops, false);
        refill(&mut t.param_live, nv, false);
        refill(&mut t.crosses, nv, false);
        refill(&mut t.cross_g, nv, false);
        refill(&mut t.reg, nv, NONE);
        refill(&mut t.group_reg, nv, NONE);
        refill(&mut t.partial, nv, BOTH);
        t.state.reserved = reserved;
        t.state.reset();
        let mut walk = Walk {
            vcode,
            t,
            op_at,
            liveness,
            reserved,
            reloads: Reloads::default(),
            call_fixed: Avoid::default(),
            hint_first: vcode.makes_calls,
            regs: vec![NONE; nops],
            reads: SmallVec::new(),
            placed: SmallVec::new(),
            spans: Vec::new(),
            stored_args: SmallVec::new(),
            copied_out: SmallVec::new(),
        };
        walk.find_deaths();
        walk.keep_away_from_calls();
        walk.t.state.reserved = walk.reserved;
        Ok(walk)
    }

    #[inline]
    fn class(&self, v: u32) -> Class {
        self.vcode.classes[v as usize]
    }

    /// Backwards through each block: which operands see their value die,
    /// which parameters are live, and the values live across each call
    /// (`MInst::clobbers_all`): they are stored to a spill slot after their
    /// definition and reloaded after the call ([`Reloads`]).
    fn find_deaths(&mut self) {
        let nv = self.vcode.classes.len();
        let (same, dies, reloads) = (&self.t.same, &mut self.t.dies, &mut self.reloads);
        let (live, needed) = (&mut self.t.live, &mut self.t.needed);
        live.reset(nv);
        // Groups read before the next call (or live at the block's end).
        needed.reset(nv);
        for (b, blk) in self.vcode.blocks.iter().enumerate() {
            live.clear();
            needed.clear();
            for &v in self.liveness.sets.live_out(b) {
                live.insert(v);
                needed.insert(same[v as usize]);
            }
            for (j, m) in blk.insts.iter().enumerate().rev() {
                let i = self.t.first[b] + j;
                let ob = self.op_at[i] as usize;
                for a in m.args().iter().flatten() {
                    live.insert(a.0);
                    needed.insert(same[a.0 as usize]);
                }
                for (k, o) in m.opnds.iter().enumerate() {
                    if o.kind != OpKind::Use {
                        dies[ob + k] = !live.contains(o.vreg.0);
                        live.remove(o.vreg.0);
                    }
                }
                if m.clobbers_all {
                    let from = reloads.vals.len() as u32;
                    for v in live.iter() {
                        self.t.crosses[v as usize] = true;
                        // Reloaded here only when read before the next call:
                        // else that call's reload serves.
                        if needed.contains(same[v as usize]) {
                            reloads.vals.push(v);
                        }
                    }
                    reloads.calls.push((i as u32, from, reloads.vals.len() as u32));
                    needed.clear();
                }
                for (k, o) in m.opnds.iter().enumerate() {
                    if o.kind == OpKind::Use {
                        dies[ob + k] = !live.contains(o.vreg.0);
                        live.insert(o.vreg.0);
                        needed.insert(same[o.vreg.0 as usize]);
                    }
                }
            }
            for p in &blk.params {
                self.t.param_live[p.0 as usize] = live.contains(p.0);
            }
        }
    }

    /// Groups with a value live across a call keep away from the registers
    /// a call fixes (its arguments and results), which it would overwrite
    /// while they are live, and the spill code of a predicate needs a
    /// scratch register.
    fn keep_away_from_calls(&mut self) {
        self.reloads.calls.sort_unstable();
        if self.reloads.calls.is_empty() {
            return;
        }
        for v in 0..self.vcode.classes.len() {
            if self.t.crosses[v] {
                self.t.cross_g[self.t.same[v] as usize] = true;
                if self.class(v as u32) == Class::P {
                    self.reserved.insert(SPILL_SCRATCH);
                }
            }
        }
        for m in self.vcode.blocks.iter().flat_map(|b| b.insts.iter()).filter(|m| m.clobbers_all) {
            for o in m.opnds.iter() {
                if let Some(f) = o.fixed {
                    for x in 0..size(self.class(o.vreg.0)) {
                        self.call_fixed.r.insert(f as u32 + x);
                    }
                }
            }
        }
    }

    /// `avoid`, and for a value of a group live across a call the registers calls fix.
    #[inline]
    fn avoid_for(&self, v: u32, avoid: &Avoid) -> Avoid {
        if self.t.cross_g[self.t.same[v as usize] as usize] {
            avoid.with(&self.call_fixed)
        } else {
            *avoid
        }
    }

    /// `v` in register `r` (operand `at` when it is one), held by its group.
    #[inline]
    fn place(&mut self, v: u32, r: u32, at: Option<usize>) {
        self.t.reg[v as usize] = r;
        if let Some(at) = at {
            self.regs[at] = r;
        }
        let g = self.t.same[v as usize];
        self.t.state.take(self.class(v), r, g);
        self.t.group_reg[g as usize] = r;
    }

    /// The pair `v` placed in the low register `r` alone (operand `at`):
    /// [`LOW`] until it dies, or until an instruction continues it.
    #[inline]
    fn place_low(&mut self, v: u32, r: u32, at: usize) {
        let g = self.t.same[v as usize];
        self.t.partial[v as usize] = LOW;
        self.t.reg[v as usize] = r;
        self.regs[at] = r;
        self.t.state.take(Class::R, r, g);
        self.t.group_reg[g as usize] = r;
    }

    /// The register for a new value `v` of class `c`, avoiding `avoid` and
    /// where `ok` agrees: the copy's source register `copy` (a `MOV` whose source
    /// died), the hint, the register of the block parameter it is passed to,
    /// else the lowest free. With `hint_first` (in a function that calls, whose
    /// values mostly flow into ABI registers) the hint comes before the copy's
    /// source: the copy is made once, into the register the value goes to.
    #[inline]
    fn pick(&self, c: Class, v: u32, copy: Option<u32>, avoid: &Avoid, ok: impl Fn(u32) -> bool) -> Result<u32, GiveUp> {
        let p = self.t.param_of[v as usize];
        let (copy, h) = (copy.unwrap_or(NONE), self.t.hint[v as usize]);
        let (a, b) = if self.hint_first { (h, copy) } else { (copy, h) };
        let cands = [a, b, if p != NONE { self.t.reg[p as usize] } else { NONE }];
        cands
            .into_iter()
            .find(|&r| r != NONE && self.t.state.fits(c, r, avoid) && ok(r))
            .or_else(|| self.t.state.lowest_where(c, avoid, ok))
            .ok_or(GiveUp::Full)
    }

    /// Forwards into block `b`: the values live into it hold their
    /// registers; each live parameter gets one (stored to its slot when it
    /// is live across a call and its arguments are not stored already).
    #[inline]
    fn enter_block(&mut self, b: usize) -> Result<(), GiveUp> {
        let vcode = self.vcode;
        let class = |v: u32| vcode.classes[v as usize];
        let blk = &vcode.blocks[b];
        self.t.state.reset();
        for &v in self.liveness.sets.live_in(b) {
            if self.t.reg[v as usize] == NONE {
                return Err(GiveUp::UseBeforeDef);
            }
            self.t.state.take(class(v), self.t.reg[v as usize], self.t.same[v as usize]);
        }
        let none = Avoid::default();
        for (k, p) in blk.params.iter().enumerate() {
            if !self.t.param_live[p.0 as usize] {
                continue;
            }
            let c = class(p.0);
            let pav = self.avoid_for(p.0, &none);
            // The register of an argument already placed, else the hint.
            let mut choice = None;
            // The arguments: when every one is a value of its group in the
            // parameter's register, stored at its definition (not a
            // parameter), the slot holds the parameter already.
            self.stored_args.clear();
            for pred in &blk.preds {
                let pred = &vcode.blocks[pred.0 as usize];
                let Some(t) = pred.insts.last() else { continue };
                for (tb, args) in t.targets().iter().zip(t.args().iter()) {
                    if tb.0 as usize == b {
                        if let Some(a) = args.get(k) {
                            let r = self.t.reg[a.0 as usize];
                            if r != NONE && class(a.0) == c && self.t.state.fits(c, r, &pav) && choice.is_none() {
                                choice = Some(r);
                            }
                            self.stored_args.push(a.0);
                        }
                    }
                }
            }
            // A parameter holding a live value's bits shares its register.
            let g = self.t.same[p.0 as usize];
            let shares = g != p.0 && self.t.group_reg[g as usize] != NONE && self.t.state.holder(c, self.t.group_reg[g as usize]) == g;
            if shares {
                choice = Some(self.t.group_reg[g as usize]);
            }
            let h = self.t.hint[p.0 as usize];
            let h = (h != NONE && self.t.state.fits(c, h, &pav)).then_some(h);
            if self.hint_first && !shares {
                choice = h.or(choice);
            }
            let r = choice.or(h).or_else(|| self.t.state.lowest(c, &pav)).ok_or(GiveUp::Full)?;
            self.place(p.0, r, None);
            let (reg, same, crosses, param_live) = (&self.t.reg, &self.t.same, &self.t.crosses, &self.t.param_live);
            let args_stored = !self.stored_args.is_empty()
                && self
                    .stored_args
                    .iter()
                    .all(|&a| reg[a as usize] == r && same[a as usize] == g && crosses[a as usize] && !param_live[a as usize]);
            if crosses[p.0 as usize] && !args_stored {
                self.t.moves.push((2 * self.t.first[b] as u32, 1, spill(c, r)));
            }
        }
        Ok(())
    }

    /// Instruction `j` of block `b`: its operands' registers and the moves
    /// around it.
    #[inline]
    fn assign_inst(&mut self, b: usize, j: usize) -> Result<(), GiveUp> {
        let vcode = self.vcode;
        let m = &vcode.blocks[b].insts[j];
        let i = self.t.first[b] + j;
        let busy = self.copy_fixed_uses(i, m)?;
        self.place_early_results(i, m, busy)?;
        self.place_results(b, j)?;
        self.after_inst(i, m);
        Ok(())
    }

    /// The uses' registers; fixed uses whose value lives elsewhere: a
    /// parallel copy into the ABI registers just before the instruction.
    /// The registers the copy writes.
    #[inline]
    fn copy_fixed_uses(&mut self, i: usize, m: &MInst) -> Result<Avoid, GiveUp> {
        let ob = self.op_at[i] as usize;
        let ops = &m.opnds;
        let mut busy = Avoid::default();
        self.t.copies.clear();
        for (k, o) in ops.iter().enumerate() {
            let v = o.vreg.0;
            let c = self.class(v);
            if o.kind == OpKind::Use {
                let r = self.t.reg[v as usize];
                if r == NONE {
                    return Err(GiveUp::AbiRegisterInTheWay);
                }
                self.regs[ob + k] = r;
            }
            let (OpKind::Use, Some(f)) = (o.kind, o.fixed) else { continue };
            let (f, r) = (f as u32, self.t.reg[v as usize]);
            self.regs[ob + k] = f;
            if f == r {
                continue;
            }
            for x in 0..size(c) {
                let d = f + x;
                if d >= NREGS || self.t.state.reserved.contains(d) || busy.r.contains(d) {
                    return Err(GiveUp::AbiRegisterInTheWay);
                }
                busy.r.insert(d);
                // A value in the way must die here and be read only
                // through fixed uses (copied out before the writes).
                let w = self.t.state.holder(c, d);
                if w != NONE && w != self.t.same[v as usize] {
                    let same = &self.t.same;
                    let uses_of_w = || ops.iter().enumerate().filter(|(_, o2)| same[o2.vreg.0 as usize] == w && o2.kind == OpKind::Use);
                    let dying = uses_of_w().filter(|&(k2, _)| self.t.dies[ob + k2]).count() as u32;
                    if dying < self.t.state.count(c, d) || uses_of_w().any(|(_, o2)| o2.fixed.is_none()) {
                        return Err(GiveUp::AbiRegisterInTheWay);
                    }
                }
                self.t.copies.push((d, r + x));
            }
        }
        if self.vcode.has_quads {
            self.copy_quad_uses(ob, m, &mut busy)?;
        }
        if !self.t.copies.is_empty() {
            self.t.seq.clear();
            let srcs: Vec<u32> = self.t.copies.iter().map(|c| c.1).collect();
            let state = &self.t.state;
            let temp = || {
                let mut avoid = busy;
                for &s in &srcs {
                    avoid.r.insert(s);
                }
                state.lowest(Class::R, &avoid)
            };
            sequentialize(&mut self.t.copies, temp, &mut self.t.seq).ok_or(GiveUp::NoCycleRegister)?;
            let at = 2 * i as u32;
            self.t.moves.extend(self.t.seq.iter().map(|&(d, s)| (at, 2, Move { class: Class::R, from: Loc::Reg(s), to: Loc::Reg(d) })));
        }
        Ok(busy)
    }

    /// Early defs and scratch registers, away from the uses (`busy`: the
    /// registers of the copies into fixed uses). In a bundle of several
    /// pieces, an early def may take the register of a use that dies here
    /// once no later piece reads it. Then the uses that die here free their
    /// registers.
    #[inline]
    fn place_early_results(&mut self, i: usize, m: &MInst, busy: Avoid) -> Result<(), GiveUp> {
        let ob = self.op_at[i] as usize;
        let ops = &m.opnds;
        let multi = m.pieces.len() > 1;
        self.reads.clear();
        if multi {
            let classes = &self.vcode.classes;
            piece_spans(m, |k| classes[ops[k].vreg.0 as usize] == Class::RPair, &mut self.spans);
            for (k, o) in ops.iter().enumerate().filter(|(_, o)| o.kind == OpKind::Use) {
                let c = self.class(o.vreg.0);
                for h in 0..size(c) {
                    let last = if o.fixed.is_some() { u8::MAX } else { self.spans[k][h as usize].map_or(u8::MAX, |s| s.1) };
                    self.reads.push((c == Class::P, self.regs[ob + k] + h, last));
                }
            }
            self.free_dying_uses(m, ob);
        }
        // In a bundle, the pieces each result of this instruction spans
        // (an early def's to the end): two may share a register when
        // their spans do not meet; a scratch register holds no register
        // past the instruction.
        self.placed.clear();
        // Most instructions have no early result.
        if !multi && !ops.iter().any(|o| matches!(o.kind, OpKind::EarlyDef | OpKind::Temp)) {
            self.free_dying_uses(m, ob);
            return Ok(());
        }
        let mut uses = busy;
        if !multi {
            for (k, o) in ops.iter().enumerate().filter(|(_, o)| o.kind == OpKind::Use) {
                uses.add(self.class(o.vreg.0), self.regs[ob + k]);
            }
        }
        for fixed_pass in [true, false] {
            for (k, o) in ops.iter().enumerate() {
                if !matches!(o.kind, OpKind::EarlyDef | OpKind::Temp) || o.fixed.is_some() != fixed_pass {
                    continue;
                }
                let (v, c) = (o.vreg.0, self.class(o.vreg.0));
                // In a bundle, per half: the pieces it spans and the piece
                // that first writes it (the same whatever register it takes).
                let mut halves = [((0u8, 0u8), 0u8); 2];
                if multi {
                    for h in 0..size(c) {
                        let span = self.spans[k][h as usize];
                        halves[h as usize] = (span_of_result(span, o.kind), span.map_or(0, |s| s.0));
                    }
                }
                let halves = &halves[..size(c) as usize];
                // Scratch registers keep away from every use (in a
                // bundle: from the uses still to be read).
                let avoid = if o.kind == OpKind::Temp { &uses } else { &busy };
                let (reads, placed) = (&self.reads, &self.placed);
                let ok = |r: u32| {
                    !multi
                        || (0..).zip(halves).all(|(h, &((f, l), write))| {
                            reads_done_by(write, c == Class::P, r + h, reads)
                                && placed.iter().all(|&(isp, x, f2, l2)| isp != (c == Class::P) || x != r + h || l2 < f || l < f2)
                        })
                };
                let r = match o.fixed {
                    Some(f) => Some(f as u32).filter(|&f| self.t.state.fits(c, f, avoid) && ok(f)).ok_or(GiveUp::AbiRegisterInTheWay)?,
                    None => self.pick(c, v, None, &self.avoid_for(v, avoid), ok)?,
                };
                self.t.reg[v as usize] = r;
                self.regs[ob + k] = r;
                if multi {
                    for (h, &((f, l), _)) in (0..).zip(halves) {
                        self.placed.push((c == Class::P, r + h, f, l));
                    }
                }
                if !multi || o.kind == OpKind::EarlyDef {
                    self.place(v, r, None);
                }
            }
        }
        if !multi {
            self.free_dying_uses(m, ob);
        }
        Ok(())
    }

    /// The quads `m` reads from pairs that are not one (operands from `ob`):
    /// both pairs copied into a free quad before it (`busy`: the registers
    /// the copies write).
    #[inline(never)]
    fn copy_quad_uses(&mut self, ob: usize, m: &MInst, busy: &mut Avoid) -> Result<(), GiveUp> {
        for (lo, hi) in m.quads() {
            if m.opnds[lo].kind != OpKind::Use {
                continue;
            }
            let (ra, rb) = (self.regs[ob + lo], self.regs[ob + hi]);
            if ra % 4 == 0 && rb == ra + 2 {
                continue;
            }
            let q = self.t.state.lowest_quad(busy).ok_or(GiveUp::Full)?;
            for x in 0..2 {
                self.t.copies.push((q + x, ra + x));
                self.t.copies.push((q + 2 + x, rb + x));
            }
            for x in 0..4 {
                busy.r.insert(q + x);
            }
            self.regs[ob + lo] = q;
            self.regs[ob + hi] = q + 2;
        }
        Ok(())
    }

    /// The quads `m` writes (a `.128` load; operands from `ob`): the two
    /// pairs at a multiple of 4, the low pair's hint first. The operands
    /// placed, as a bit set.
    #[inline(never)]
    fn place_quad_defs(&mut self, ob: usize, m: &MInst) -> Result<u64, GiveUp> {
        let mut placed = 0u64;
        for (lo, hi) in m.quads() {
            let (a, b) = (&m.opnds[lo], &m.opnds[hi]);
            if a.kind != OpKind::Def || b.kind != OpKind::Def || a.fixed.is_some() || b.fixed.is_some() {
                continue;
            }
            let avoid = self.avoid_for(a.vreg.0, &self.avoid_for(b.vreg.0, &Avoid::default()));
            let h = self.t.hint[a.vreg.0 as usize];
            let r = match h {
                NONE => None,
                h => Some(h).filter(|&h| self.t.state.fits_quad(h, &avoid)),
            };
            let r = r.or_else(|| self.t.state.lowest_quad(&avoid)).ok_or(GiveUp::Full)?;
            self.place(a.vreg.0, r, Some(ob + lo));
            self.place(b.vreg.0, r + 2, Some(ob + hi));
            placed |= 1 << lo | 1 << hi;
        }
        Ok(placed)
    }

    /// The defs of instruction `j` of block `b`, the fixed ones first.
    #[inline]
    fn place_results(&mut self, b: usize, j: usize) -> Result<(), GiveUp> {
        let vcode = self.vcode;
        let m = &vcode.blocks[b].insts[j];
        let ob = self.op_at[self.t.first[b] + j] as usize;
        let copy = copy_source(m).map(|(k, hi)| self.regs[ob + k] + hi as u32);
        // Operands placed as a quad (bit k: operand k).
        let quad_defs = if vcode.has_quads { self.place_quad_defs(ob, m)? } else { 0 };
        // The first pass places fixed defs and continued pairs: most
        // instructions have neither.
        let first_pass = m.opnds.iter().any(|o| o.fixed.is_some() || matches!(o.kind, OpKind::Reuse(_)));
        for fixed_pass in [true, false] {
            if fixed_pass && !first_pass {
                continue;
            }
            for (k, o) in m.opnds.iter().enumerate() {
                if quad_defs >> k & 1 != 0 {
                    continue;
                }
                // The next version of a pair takes the register of the
                // version it continues, which dies here (with the fixed
                // defs: before a free def could take the register).
                if let (OpKind::Reuse(u), true) = (o.kind, fixed_pass) {
                    let (v, c, u) = (o.vreg.0, self.class(o.vreg.0), ob + u as usize);
                    let r = self.regs[u];
                    if o.fixed.is_some() || !self.t.dies[u] || !self.t.state.fits(c, r, &Avoid::default()) {
                        return Err(GiveUp::ContinuedInUse);
                    }
                    self.place(v, r, Some(ob + k));
                    continue;
                }
                if o.kind == OpKind::Def && o.fixed.is_some() == fixed_pass {
                    self.place_def(b, j, k, copy)?;
                }
            }
        }
        Ok(())
    }

    /// Def `k` of instruction `j` of block `b` (`copy`: the register a copy reads).
    #[inline]
    fn place_def(&mut self, b: usize, j: usize, k: usize, copy: Option<u32>) -> Result<(), GiveUp> {
        let vcode = self.vcode;
        let blk = &vcode.blocks[b];
        let i = self.t.first[b] + j;
        let ob = self.op_at[i] as usize;
        let o = &blk.insts[j].opnds[k];
        let (v, c) = (o.vreg.0, self.class(o.vreg.0));
        let g = self.t.same[v as usize];
        let none = Avoid::default();
        let r = match o.fixed {
            // A value live across a call, written where a call
            // reads or writes: copied out right after.
            Some(f) if self.t.cross_g[g as usize] && g == v && (f as u32..f as u32 + size(c)).any(|x| self.call_fixed.r.contains(x)) => {
                let f = Some(f as u32).filter(|&f| self.t.state.fits(c, f, &none)).ok_or(GiveUp::AbiRegisterInTheWay)?;
                self.t.state.take(c, f, g);
                let r = self.pick(c, v, None, &self.call_fixed, |_| true)?;
                self.copied_out.push((c, f, g));
                self.regs[ob + k] = f;
                for x in 0..size(c) {
                    self.t.moves.push((2 * i as u32 + 1, 0, Move { class: Class::R, from: Loc::Reg(f + x), to: Loc::Reg(r + x) }));
                }
                self.place(v, r, None);
                return Ok(());
            }
            Some(f) => Some(f as u32).filter(|&f| self.t.state.fits(c, f, &none)).ok_or(GiveUp::AbiRegisterInTheWay)?,
            // A copy of a value still live: its register.
            None if g != v && self.t.group_reg[g as usize] != NONE && self.t.state.holder(c, self.t.group_reg[g as usize]) == g => {
                self.t.group_reg[g as usize]
            }
            None if self.t.cross_g[g as usize] => self.pick(c, v, copy, &self.call_fixed, |_| true)?,
            // Only a pair's first half can claim a register half.
            None if c != Class::RPair => self.pick(c, v, copy, &none, |_| true)?,
            None => match half_claim(
                &self.t.state,
                vcode,
                blk,
                j,
                k,
                &self.t.hint,
                &self.t.param_of,
                &self.t.dies,
                &self.op_at[self.t.first[b]..],
                &self.t.same,
                &self.t.reg,
            ) {
                Some((r, x)) => {
                    if let Some(x) = x {
                        // The low register passes from x's pair to v.
                        self.t.state.free(Class::R, r, self.t.same[x as usize]);
                        self.t.partial[x as usize] = HIGH;
                    }
                    self.place_low(v, r, ob + k);
                    return Ok(());
                }
                None => self.pick(c, v, copy, &none, |_| true)?,
            },
        };
        self.place(v, r, Some(ob + k));
        Ok(())
    }

    /// After instruction `i`: scratch registers, values nobody reads and the
    /// ABI registers of results copied out are free again; after a call, the
    /// values live across it that are read before the next call come back
    /// from their slots; then the results live across a later call go to
    /// theirs.
    #[inline]
    fn after_inst(&mut self, i: usize, m: &MInst) {
        let ob = self.op_at[i] as usize;
        for (k, o) in m.opnds.iter().enumerate() {
            if o.kind != OpKind::Use && (o.kind == OpKind::Temp || self.t.dies[ob + k]) {
                let v = o.vreg.0;
                self.t.state.free(self.class(v), self.t.reg[v as usize], self.t.same[v as usize]);
            }
        }
        // (Most instructions copy nothing out: the test is cheaper than an
        // empty drain, 0.27 M instructions over the `simd` folder.)
        if !self.copied_out.is_empty() {
            for (c, f, g) in self.copied_out.drain(..) {
                self.t.state.free(c, f, g);
            }
        }
        let at = 2 * i as u32 + 1;
        if m.clobbers_all {
            for &v in self.reloads.after(i as u32) {
                // (Not in a register of the call's results: those
                // found theirs free.) One reload per group.
                let (c, rv) = (self.class(v), self.t.reg[v as usize]);
                let mv = Move { class: c, from: Loc::Slot(slot_key(c, rv)), to: Loc::Reg(rv) };
                if !self.t.moves.iter().rev().take_while(|x| x.0 == at).any(|x| x.2 == mv) {
                    self.t.moves.push((at, 0, mv));
                }
            }
        }
        for o in m.opnds.iter().filter(|o| matches!(o.kind, OpKind::Def | OpKind::EarlyDef | OpKind::Reuse(_))) {
            let v = o.vreg.0;
            if self.t.crosses[v as usize] {
                self.t.moves.push((at, 1, spill(self.class(v), self.t.reg[v as usize])));
            }
        }
    }

    /// Frees the registers of the uses of `m` (operands from `ob`) whose values die there.
    #[inline]
    fn free_dying_uses(&mut self, m: &MInst, ob: usize) {
        for (k, o) in m.opnds.iter().enumerate() {
            if o.kind == OpKind::Use && self.t.dies[ob + k] {
                let v = o.vreg.0;
                let (r, g) = (self.t.reg[v as usize], self.t.same[v as usize]);
                match self.t.partial[v as usize] {
                    LOW => self.t.state.free(Class::R, r, g),
                    HIGH => self.t.state.free(Class::R, r + 1, g),
                    _ => self.t.state.free(self.class(v), r, g),
                }
            }
        }
    }

    /// The block arguments: a parallel copy per edge.
    fn edge_copies(&mut self) -> Result<(), GiveUp> {
        let vcode = self.vcode;
        let mut pcopies: Vec<(u32, u32)> = Vec::new();
        for (b, blk) in vcode.blocks.iter().enumerate() {
            let Some(t) = blk.insts.last() else { continue };
            for (ti, tb) in t.targets().iter().enumerate() {
                let s = tb.0 as usize;
                let params = &vcode.blocks[s].params;
                let args: &[_] = t.args().get(ti).map_or(&[], |a| &a[..]);
                if args.len() != params.len() {
                    return Err(GiveUp::ArgsParamsDiffer);
                }
                self.t.copies.clear();
                pcopies.clear();
                for (a, p) in args.iter().zip(params.iter()) {
                    let (ra, rp) = (self.t.reg[a.0 as usize], self.t.reg[p.0 as usize]);
                    if rp == NONE {
                        continue;
                    }
                    let c = self.class(p.0);
                    if ra == NONE || self.class(a.0) != c {
                        return Err(GiveUp::ArgsParamsDiffer);
                    }
                    let list = if c == Class::P { &mut pcopies } else { &mut self.t.copies };
                    for x in 0..size(c) {
                        list.push((rp + x, ra + x));
                    }
                }
                if self.t.copies.iter().chain(pcopies.iter()).all(|&(d, s)| d == s) {
                    continue;
                }
                let at = if t.pseudo == Pseudo::Jump && t.targets().len() == 1 {
                    2 * (self.t.first[b + 1] - 1) as u32
                } else if vcode.blocks[s].preds.len() == 1 {
                    2 * self.t.first[s] as u32
                } else {
                    return Err(GiveUp::CriticalEdgeWithArgs);
                };
                self.edge_copy(s, at, &mut pcopies)?;
            }
        }
        Ok(())
    }

    /// The moves of the parallel copy `self.t.copies` (general registers) and
    /// `pcopies` (predicates) into block `s`, at program point `at`.
    fn edge_copy(&mut self, s: usize, at: u32, pcopies: &mut Vec<(u32, u32)>) -> Result<(), GiveUp> {
        let mut seq = std::mem::take(&mut self.t.seq);
        // A free register for a cycle: none of the values live there.
        let temp = || {
            let mut avoid = self.reserved;
            for &v in self.liveness.sets.live_in(s) {
                let c = self.class(v);
                if c != Class::P {
                    for x in 0..size(c) {
                        avoid.insert(self.t.reg[v as usize] + x);
                    }
                }
            }
            for &(d, s) in self.t.copies.iter() {
                avoid.insert(d);
                avoid.insert(s);
            }
            avoid.lowest_absent(NREGS as usize, false)
        };
        seq.clear();
        let mut rc = self.t.copies.clone();
        sequentialize(&mut rc, temp, &mut seq).ok_or(GiveUp::NoCycleRegister)?;
        self.t.moves.extend(seq.iter().map(|&(d, s)| (at, 0, Move { class: Class::R, from: Loc::Reg(s), to: Loc::Reg(d) })));
        seq.clear();
        sequentialize(pcopies, || Some(P_SCRATCH), &mut seq).ok_or(GiveUp::NoCycleRegister)?;
        self.t.moves.extend(seq.iter().map(|&(d, s)| (at, 0, Move { class: Class::P, from: Loc::Reg(s), to: Loc::Reg(d) })));
        self.t.seq = seq;
        Ok(())
    }

    /// The moves by program point, the spill slots numbered: the assignment.
    fn finish(&mut self) -> Result<Assignment, GiveUp> {
        let (vcode, op_at, regs) = (self.vcode, std::mem::take(&mut self.op_at), std::mem::take(&mut self.regs));
        let Walk { t, reloads, .. } = self;
        let Tables { moves, reg, crosses, .. } = &mut **t;
        let class = |v: u32| vcode.classes[v as usize];
        let n = op_at.len() - 1;
        moves.sort_by_key(|&(p, phase, _)| (p, phase));
        let mut move_at = Vec::with_capacity(2 * n + 1);
        move_at.push(0u32);
        let mut k = 0;
        for p in 0..2 * n as u32 {
            while k < moves.len() && moves[k].0 == p {
                k += 1;
            }
            move_at.push(k as u32);
        }
        // Values kept in registers across calls beyond the highest ABI register
        // the function names (the return address R[20:21] of a device
        // function) would make it use more registers than regalloc2, which
        // reloads them anywhere: leave those functions to it.
        if !reloads.calls.is_empty() {
            let abi_top = vcode.blocks.iter().flat_map(|b| b.insts.iter()).flat_map(|m| m.opnds.iter()).fold(0, |t, o| match o.fixed {
                Some(f) => t.max(f as u32 + size(class(o.vreg.0)) - 1),
                None => t,
            });
            if (0..vcode.classes.len() as u32)
                .any(|v| crosses[v as usize] && class(v) != Class::P && reg[v as usize] + size(class(v)) - 1 > abi_top)
            {
                return Err(GiveUp::TooManyAcrossCalls);
            }
        }
        let mut moves: Vec<Move> = moves.iter().map(|m| m.2).collect();
        let num_spillslots = if reloads.calls.is_empty() { 0 } else { compact_slots(&mut moves) };
        let dense = !regs.iter().any(|&r| (QUAD_HINT_BOTTOM..NREGS).contains(&r));
        Ok(Assignment { regs, op_at, moves, move_at, num_spillslots, ssa: true, dense, slots_in_memory: true })
    }
}

impl Walk<'_> {
    /// The tables' storage back to the thread, for the next function (a
    /// walk that gives up drops them: the next one makes new ones).
    fn recycle(self) {
        let t = self.t;
        TABLES.with(|c| {
            if let Ok(mut c) = c.try_borrow_mut() {
                *c = Some(t);
            }
        });
    }
}

/// How much of its register(s) a value holds (see `partial` in the walk).
const BOTH: u8 = 0;
const LOW: u8 = 1;
const HIGH: u8 = 2;

/// How far after the first half of a pair [`half_claim`] looks for the
/// instruction that continues it (the scheduler may put others between).
const CONTINUE_WINDOW: usize = 16;

/// The preferred register of the pair result `k` of instruction `j` of
/// `blk`, taken by its low half alone, when the instruction writes only that
/// half and a later instruction of the block continues the pair
/// (`OpKind::Reuse`) by writing the other, while the high register still
/// holds a value that instruction reads for the last time — a single
/// register, or the high half of a pair whose low half is read no more
/// (returned: its low register passes to the result now). The two share the
/// high register until the continuing instruction, as the pieces of the
/// bundle did; the continued pair then finds both registers free. The
/// instructions between (at most [`CONTINUE_WINDOW`] - 1, as the scheduler
/// placed them) read neither value, name no ABI register and do not call,
/// so the two registers stay as they are. `ops_at[j]` is instruction `j`'s
/// first operand in `dies`.
#[allow(clippy::too_many_arguments)]
fn half_claim(
    state: &Regs,
    vcode: &VCode,
    blk: &ursa_isel::vcode::VBlock,
    j: usize,
    k: usize,
    hint: &[u32],
    param_of: &[u32],
    dies: &[bool],
    ops_at: &[u32],
    same: &[u32],
    reg: &[u32],
) -> Option<(u32, Option<u32>)> {
    let m = &blk.insts[j];
    let v = m.opnds[k].vreg;
    if vcode.class(v) != Class::RPair || m.pieces.len() != 1 {
        return None;
    }
    // The continuing instruction: the next one to name `v`.
    let names = |i: &MInst, w: VReg| i.opnds.iter().any(|o| o.vreg == w) || i.args().iter().flatten().any(|&a| a == w);
    let jn = (j + 1..blk.insts.len().min(j + CONTINUE_WINDOW)).find(|&i| names(&blk.insts[i], v))?;
    let (next, between) = (&blk.insts[jn], &blk.insts[j + 1..jn]);
    if next.pieces.len() != 1 || between.iter().any(|i| i.clobbers_all || i.opnds.iter().any(|o| o.fixed.is_some())) {
        return None;
    }
    let low_only = m.fixups.iter().filter(|f| f.opnd as usize == k).all(|f| !m.names_half(f, 1));
    let continued = next.opnds.iter().any(|o| matches!(o.kind, OpKind::Reuse(u) if next.opnds[u as usize].vreg == v));
    // The ABI register it goes to, else that of the block parameter it is
    // passed to.
    let p = param_of[v.0 as usize];
    let r = match hint[v.0 as usize] {
        NONE if p != NONE => reg[p as usize],
        h => h,
    };
    if !low_only || !continued || r == NONE || r % 2 != 0 || r + 1 >= NREGS || state.reserved.contains(r) {
        return None;
    }
    let x = state.holder(Class::R, r + 1);
    if x == NONE || state.r_count[r as usize + 1] != 1 {
        return None;
    }
    // The value in the high register: not read before the continuing
    // instruction, which reads it for the last time (and, if it is the pair
    // at r, only through its high half).
    if between
        .iter()
        .any(|i| i.opnds.iter().any(|o| same[o.vreg.0 as usize] == x) || i.args().iter().flatten().any(|a| same[a.0 as usize] == x))
    {
        return None;
    }
    let ob = ops_at[jn] as usize;
    let mut last: Option<u32> = None;
    for (k2, o) in next.opnds.iter().enumerate() {
        let w = o.vreg.0;
        if same[w as usize] != x || o.kind != OpKind::Use {
            continue;
        }
        let single = vcode.class(o.vreg) == Class::R && reg[w as usize] == r + 1;
        let pair_hi = vcode.class(o.vreg) == Class::RPair
            && reg[w as usize] == r
            && next.fixups.iter().filter(|f| f.opnd as usize == k2).all(|f| !next.names_half(f, 0));
        if !dies[ob + k2] || !(single || pair_hi) {
            return None;
        }
        last = Some(w);
    }
    let w = last?;
    match state.holder(Class::R, r) {
        NONE if vcode.class(VReg(w)) == Class::R => Some((r, None)),
        h if h == x && vcode.class(VReg(w)) == Class::RPair && state.r_count[r as usize] == 1 && same[w as usize] == w => {
            Some((r, Some(w)))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::code::testing::text;
    use crate::regalloc::assignment::SlotHomes;
    use crate::regalloc::check_assignment::check_assignment;
    use ursa_emit::forms::{IADD_RR, ISETP_RI};
    use ursa_emit::mods;
    use ursa_isel::vcode::{BlockId, Bundle, MInst, VBlock, VReg};

    fn mov(d: VReg, s: VReg) -> MInst {
        Bundle::new().inst(forms::MOV_R).def(MOV_R::RD, d).use_(MOV_R::RB, s).build()
    }

    #[test]
    fn the_spans_found_in_one_pass_are_those_of_each_operand_half() {
        // The bundles of many pieces the lowering makes (the correctly
        // rounded divisions and square roots, with an operand read twice),
        // each operand half's pieces by `piece_spans` and by `piece_span`.
        let text = "function %f(f64, f64, f32, f32) -> f64, f64, f32, f32 {
block0(v0: f64, v1: f64, v2: f32, v3: f32):
    v4 = fdiv v0, v1
    v5 = sqrt v4
    v6 = fdiv v2, v2
    v7 = sqrt v3
    return v4, v5, v6, v7
}";
        let f = cranelift_reader::parse_functions(text).unwrap().remove(0);
        let (shared, data) = (Default::default(), Default::default());
        let vcode = ursa_isel::lower(&f, false, &shared, &data, true, Default::default()).unwrap();
        let mut spans = Vec::new();
        let mut bundles = 0;
        for m in vcode.blocks.iter().flat_map(|b| &b.insts).filter(|m| m.pieces.len() > 1) {
            bundles += 1;
            let pair = |k: usize| vcode.class(m.opnds[k].vreg) == Class::RPair;
            piece_spans(m, pair, &mut spans);
            for k in 0..m.opnds.len() {
                for h in 0..1 + pair(k) as u32 {
                    assert_eq!(
                        spans[k][h as usize],
                        piece_span(m, k, h),
                        "operand {} half {} of a bundle of {} pieces",
                        k,
                        h,
                        m.pieces.len()
                    );
                }
            }
        }
        assert_eq!(bundles, 4, "one bundle per division and square root");
    }
    fn add(d: VReg, a: VReg, b: VReg) -> MInst {
        Bundle::new().inst(forms::IADD_RR).def(IADD_RR::RD, d).use_(IADD_RR::RA, a).use_(IADD_RR::RB, b).build()
    }
    fn is_nonzero(p: VReg, a: VReg) -> MInst {
        Bundle::new()
            .inst(forms::ISETP_RI)
            .set(ISETP_RI::COMPOP, mods::CompOp::NE)
            .set(ISETP_RI::BOOLOP, mods::BoolOp::AND)
            .set(ISETP_RI::ITYPE, mods::IType::U32)
            .def(ISETP_RI::PU, p)
            .use_(ISETP_RI::RA, a)
            .build()
    }
    fn jump(to: u32, args: &[VReg]) -> MInst {
        let mut m = MInst::new(Pseudo::Jump);
        m.extra_mut().targets.push(BlockId(to));
        m.extra_mut().args.push(args.iter().copied().collect());
        m
    }
    fn block(params: &[VReg], insts: Vec<MInst>, succs: &[u32], preds: &[u32]) -> VBlock {
        VBlock {
            params: params.to_vec(),
            insts,
            succs: succs.iter().map(|&b| BlockId(b)).collect(),
            preds: preds.iter().map(|&b| BlockId(b)).collect(),
            clif: None,
        }
    }

    /// `f(a: i32, b: i32) -> i32`: a loop that adds `b` to `a` until the sum
    /// is zero, the two block parameters swapped on every turn.
    fn swapping_loop() -> VCode {
        let mut v = VCode::default();
        let (a, b, link) = (v.new_vreg(Class::RPair), v.new_vreg(Class::RPair), v.new_vreg(Class::RPair));
        let (x, y, px, py, s, p, r) = (
            v.new_vreg(Class::R),
            v.new_vreg(Class::R),
            v.new_vreg(Class::R),
            v.new_vreg(Class::R),
            v.new_vreg(Class::R),
            v.new_vreg(Class::P),
            v.new_vreg(Class::RPair),
        );
        let args = Bundle::pseudo(Pseudo::Args).fixed(a, OpKind::Def, 4).fixed(b, OpKind::Def, 6).fixed(link, OpKind::Def, 20).build();
        v.blocks.push(block(&[], vec![args, mov(x, a), mov(y, b), jump(1, &[x, y])], &[1], &[]));
        let mut brif = Bundle::pseudo(Pseudo::Brif { negate: false, uniform: None }).operand(p, OpKind::Use).build();
        brif.extra_mut().targets.extend([BlockId(2), BlockId(3)]);
        v.blocks.push(block(&[px, py], vec![add(s, px, py), is_nonzero(p, s), brif], &[2, 3], &[0, 2]));
        // The back edge swaps: px takes py's value, py the sum.
        v.blocks.push(block(&[], vec![jump(1, &[py, s])], &[1], &[1]));
        let ret = Bundle::pseudo(Pseudo::Ret).fixed(r, OpKind::Use, 4).fixed(link, OpKind::Use, 20).build();
        v.blocks.push(block(&[], vec![mov(r, s), ret], &[], &[1]));
        v
    }

    /// `f(a: i64, b: i64) -> i64 { a + b }` as `lower_bundles` leaves it:
    /// `IADD t.lo, c, a.lo, b.lo` then `IADD.X s.hi, a.hi, b.hi, c`
    /// continuing t (`Reuse`).
    fn split_add64() -> VCode {
        let mut v = VCode::default();
        let (a, b, link) = (v.new_vreg(Class::RPair), v.new_vreg(Class::RPair), v.new_vreg(Class::RPair));
        let (t, c, s) = (v.new_vreg(Class::RPair), v.new_vreg(Class::P), v.new_vreg(Class::RPair));
        let args = Bundle::pseudo(Pseudo::Args).fixed(a, OpKind::Def, 4).fixed(b, OpKind::Def, 6).fixed(link, OpKind::Def, 20).build();
        let lo =
            Bundle::new().inst(forms::IADD_RR).def(IADD_RR::RD, t).def(IADD_RR::PU, c).use_(IADD_RR::RA, a).use_(IADD_RR::RB, b).build();
        // The pair so far, read by no field; s continues it.
        let hi = Bundle::new()
            .inst(forms::IADD_RR)
            .set(IADD_RR::EXT, mods::IExt::X)
            .use_hi(IADD_RR::RA, a)
            .use_hi(IADD_RR::RB, b)
            .use_(IADD_RR::PP, c)
            .set(IADD_RR::PP_NOT, false)
            .def_hi(IADD_RR::RD, s)
            .reuse(s, t)
            .build();
        let ret = Bundle::pseudo(Pseudo::Ret).fixed(s, OpKind::Use, 4).fixed(link, OpKind::Use, 20).build();
        v.blocks.push(block(&[], vec![args, lo, hi, ret], &[], &[]));
        v
    }

    #[test]
    fn a_pair_written_half_by_half_takes_its_inputs_registers() {
        // t.lo may take R4 although a.hi, read by the next instruction, is
        // still in R5: the sum is made in place, with no copy.
        let v = split_add64();
        let asg = assign_regs_ssa(&v).unwrap();
        check_assignment(&v, &asg).unwrap();
        assert!(asg.moves.is_empty());
        let code = crate::emit::lower_vcode::lower_vcode(&v, &asg, &SlotHomes::memory(&asg)).unwrap();
        assert_eq!(text(&code), ["IADD R4, P0, R4, R6", "IADD.X R5, R5, R7, P0", "RET R[20:21]"]);
    }

    #[test]
    fn the_checker_rejects_a_continued_pair_in_another_register() {
        let v = split_add64();
        let mut asg = assign_regs_ssa(&v).unwrap();
        // The continuing instruction (flat index 2) writes s to R[8:9]
        // instead of t's R[4:5]: its low half would be garbage.
        let ops = v.blocks[0].insts[2].opnds.len();
        let d = v.blocks[0].insts[2].opnds.iter().position(|o| matches!(o.kind, OpKind::Reuse(_))).unwrap();
        assert_eq!(asg.operand_regs(2).len(), ops);
        let at = asg.op_at[2] as usize;
        asg.regs[at + d] = 8;
        assert!(check_assignment(&v, &asg).unwrap_err().message().contains("not the register of the value it continues"));
    }

    #[test]
    fn tables_kept_from_other_functions_and_a_given_liveness_change_no_assignment() {
        // On a fresh thread: nothing left from earlier functions.
        let fresh =
            std::thread::spawn(|| format!("{:?}", assign_regs_ssa(&swapping_loop()).unwrap())).join().expect("the assigning thread");
        // Here after other functions (one with a call: reloads, more
        // values), then with the liveness solved beforehand, as the
        // scheduler hands it over.
        assign_regs_ssa(&across_call(false)).unwrap();
        assign_regs_ssa(&split_add64()).unwrap();
        let v = swapping_loop();
        assert_eq!(format!("{:?}", assign_regs_ssa(&v).unwrap()), fresh);
        let mut live = take_liveness();
        block_liveness(&v, &mut live);
        assert_eq!(format!("{:?}", assign_regs_ssa_after(&v, Some(live)).unwrap()), fresh);
    }

    #[test]
    fn a_straight_function_needs_no_copies() {
        // The arguments arrive in R[4:5] and R[6:7]; the sum leaves in R4.
        let mut v = VCode::default();
        let (a, b, link) = (v.new_vreg(Class::RPair), v.new_vreg(Class::RPair), v.new_vreg(Class::RPair));
        let (x, y, s, r) = (v.new_vreg(Class::R), v.new_vreg(Class::R), v.new_vreg(Class::R), v.new_vreg(Class::RPair));
        let args = Bundle::pseudo(Pseudo::Args).fixed(a, OpKind::Def, 4).fixed(b, OpKind::Def, 6).fixed(link, OpKind::Def, 20).build();
        let ret = Bundle::pseudo(Pseudo::Ret).fixed(r, OpKind::Use, 4).fixed(link, OpKind::Use, 20).build();
        v.blocks.push(block(&[], vec![args, mov(x, a), mov(y, b), add(s, x, y), mov(r, s), ret], &[], &[]));
        let asg = assign_regs_ssa(&v).unwrap();
        check_assignment(&v, &asg).unwrap();
        assert!(asg.moves.is_empty());
        let code = crate::emit::lower_vcode::lower_vcode(&v, &asg, &SlotHomes::memory(&asg)).unwrap();
        assert_eq!(text(&code), ["IADD R4, R4, R6", "RET R[20:21]"]);
        assert_eq!(code.dropped_copies, 3);
    }

    #[test]
    fn swapped_block_arguments_go_through_a_free_register() {
        let v = swapping_loop();
        let asg = assign_regs_ssa(&v).unwrap();
        check_assignment(&v, &asg).unwrap();
        // The back edge's swap is a cycle of three 32-bit moves (or the sum
        // already sits in a parameter's register: two).
        let back = 2 * 7;
        assert!((2..=3).contains(&asg.moves_at(back).len()), "{:?}", asg.moves);
        // No value sits in the stack pointer, no pair on an odd register.
        assert!(asg.regs.iter().all(|&r| r != SP));
    }

    #[test]
    fn the_checker_rejects_a_wrong_assignment() {
        let v = swapping_loop();
        let good = assign_regs_ssa(&v).unwrap();
        // The add (flat instruction 4) reads its first operand from another register.
        let mut bad = good.clone();
        let k = bad.op_at[4] as usize + 1;
        bad.regs[k] += 2;
        assert!(check_assignment(&v, &bad).is_err());
        // The back edge's moves left out: the parameters hold stale values.
        let mut bad = good.clone();
        let (from, to) = (bad.move_at[14] as usize, bad.move_at[15] as usize);
        assert!(to > from);
        bad.moves.drain(from..to);
        for p in bad.move_at.iter_mut().skip(15) {
            *p -= (to - from) as u32;
        }
        assert!(check_assignment(&v, &bad).is_err());
        // A result in the register of a value still live.
        let mut bad = good;
        let (kd, ku) = (bad.op_at[4] as usize, bad.op_at[4] as usize + 2);
        bad.regs[kd] = bad.regs[ku];
        assert!(check_assignment(&v, &bad).is_err());
    }

    /// `f(a: i32) -> i32 { x = a; r = g(x); x + r }` with a predicate
    /// `x != 0` live across the call too when `pred`: x is passed in R4, the
    /// result comes back in R4, the return address R[20:21] and x (and the
    /// predicate) live across the call.
    fn across_call(pred: bool) -> VCode {
        let mut v = VCode::default();
        let (a, link, x, arg) = (v.new_vreg(Class::RPair), v.new_vreg(Class::RPair), v.new_vreg(Class::R), v.new_vreg(Class::RPair));
        let (res, y, s, r, p) =
            (v.new_vreg(Class::RPair), v.new_vreg(Class::R), v.new_vreg(Class::R), v.new_vreg(Class::RPair), v.new_vreg(Class::P));
        let args = Bundle::pseudo(Pseudo::Args).fixed(a, OpKind::Def, 4).fixed(link, OpKind::Def, 20).build();
        let to_arg = Bundle::new().inst(forms::MOV_R).def(MOV_R::RD, arg).use_(MOV_R::RB, x).build();
        let mut call = Bundle::pseudo(Pseudo::Call).fixed(arg, OpKind::Use, 4).fixed(res, OpKind::Def, 4).build();
        call.clobbers_all = true;
        v.makes_calls = true;
        let from_res = Bundle::new().inst(forms::MOV_R).def(MOV_R::RD, y).use_hi(MOV_R::RB, res).build();
        let ret = Bundle::pseudo(Pseudo::Ret).fixed(r, OpKind::Use, 4).fixed(link, OpKind::Use, 20).build();
        let mut insts = vec![args, mov(x, a)];
        if pred {
            insts.push(is_nonzero(p, x));
        }
        insts.extend([to_arg, call, from_res, add(s, x, y)]);
        let s = if pred {
            // A copy that also reads p.
            let t = v.new_vreg(Class::R);
            insts.push(Bundle::rewrite(mov(t, s)).operand(p, OpKind::Use).build());
            t
        } else {
            s
        };
        insts.extend([mov(r, s), ret]);
        v.blocks.push(block(&[], insts, &[], &[]));
        v
    }

    /// The flat index of the call in `v`.
    fn call_at(v: &VCode) -> usize {
        v.blocks[0].insts.iter().position(|m| m.clobbers_all).unwrap()
    }

    /// `asg` with the moves at program point `p` replaced by `new`.
    /// `LD.128` of the quad (q0, q1) from the pair argument, `ST.128` of
    /// (s0, s1) to it; with `swapped`, the stored quad is (q1, q0).
    fn quad_copy(swapped: bool) -> VCode {
        use ursa_emit::forms::{LD_RI, ST_RIR};
        let mut v = VCode::default();
        let (a, link, q0, q1) = (v.new_vreg(Class::RPair), v.new_vreg(Class::RPair), v.new_vreg(Class::RPair), v.new_vreg(Class::RPair));
        let args = Bundle::pseudo(Pseudo::Args).fixed(a, OpKind::Def, 4).fixed(link, OpKind::Def, 20).build();
        let ld =
            Bundle::new().inst(forms::LD_RI).use_(LD_RI::RA, a).set(LD_RI::DTYPE, mods::MEMDType::_128).def_quad(LD_RI::RD, q0, q1).build();
        let (s0, s1) = if swapped { (q1, q0) } else { (q0, q1) };
        let st = Bundle::new()
            .inst(forms::ST_RIR)
            .use_(ST_RIR::RA, a)
            .set(ST_RIR::DTYPE, mods::MEMDType::_128)
            .use_quad(ST_RIR::RB, s0, s1)
            .build();
        let ret = Bundle::pseudo(Pseudo::Ret).fixed(link, OpKind::Use, 20).build();
        v.blocks.push(block(&[], vec![args, ld, st, ret], &[], &[]));
        v.has_quads = true;
        v
    }

    /// Two i32 arguments returned exchanged: each argument and result a
    /// 32-bit value fixed in the low register of its slot (`R4`, `R6`).
    fn swapped_results() -> VCode {
        let mut v = VCode::default();
        let (a, b, link) = (v.new_vreg(Class::R), v.new_vreg(Class::R), v.new_vreg(Class::RPair));
        let (x, y) = (v.new_vreg(Class::R), v.new_vreg(Class::R));
        let mov = |d: VReg, s: VReg| Bundle::new().inst(forms::MOV_R).def(MOV_R::RD, d).use_(MOV_R::RB, s).build();
        let args = Bundle::pseudo(Pseudo::Args).fixed(a, OpKind::Def, 4).fixed(b, OpKind::Def, 6).fixed(link, OpKind::Def, 20).build();
        let ret = Bundle::pseudo(Pseudo::Ret).fixed(y, OpKind::Use, 4).fixed(x, OpKind::Use, 6).fixed(link, OpKind::Use, 20).build();
        v.blocks.push(block(&[], vec![args, mov(x, a), mov(y, b), ret], &[], &[]));
        v
    }

    #[test]
    fn a_32_bit_value_goes_into_its_abi_register_alone() {
        let v = swapped_results();
        let asg = assign_regs_ssa(&v).unwrap();
        check_assignment(&v, &asg).unwrap();
        // Exchanging two words takes three moves, none for a high half.
        let words = asg.moves.iter().filter(|m| m.class == Class::R).count();
        assert!(asg.moves.iter().all(|m| m.class == Class::R) && words <= 3, "{:?}", asg.moves);
    }

    #[test]
    fn a_loaded_quad_is_stored_from_its_registers() {
        let v = quad_copy(false);
        let asg = assign_regs_ssa(&v).unwrap();
        check_assignment(&v, &asg).unwrap();
        assert!(asg.moves.is_empty());
        let code = crate::emit::lower_vcode::lower_vcode(&v, &asg, &SlotHomes::memory(&asg)).unwrap();
        // A stored quad is given a quad of its own, counting down from
        // R[248:251] (`pack_regs` renumbers the registers afterwards).
        assert_eq!(text(&code), ["LD.128 R[248:251], [R[4:5]]", "ST.128 [R[4:5]], R[248:251]", "RET R[20:21]"]);
    }

    #[test]
    fn a_quad_of_pairs_placed_apart_is_copied_into_a_free_quad() {
        let v = quad_copy(true);
        let asg = assign_regs_ssa(&v).unwrap();
        check_assignment(&v, &asg).unwrap();
        let code = crate::emit::lower_vcode::lower_vcode(&v, &asg, &SlotHomes::memory(&asg)).unwrap();
        assert_eq!(
            text(&code),
            [
                "LD.128 R[8:11], [R[4:5]]",
                "MOV R12, R10",
                "MOV R14, R8",
                "MOV R13, R11",
                "MOV R15, R9",
                "ST.128 [R[4:5]], R[12:15]",
                "RET R[20:21]"
            ]
        );
    }

    #[test]
    fn the_checker_rejects_a_quad_off_a_multiple_of_four() {
        let v = quad_copy(false);
        let mut asg = assign_regs_ssa(&v).unwrap();
        // The load (flat index 1) writes its quad at R[10:13].
        let at = asg.op_at[1] as usize;
        let (lo, hi) = v.blocks[0].insts[1].quads().next().unwrap();
        asg.regs[at + lo] = 10;
        asg.regs[at + hi] = 12;
        assert!(check_assignment(&v, &asg).unwrap_err().message().contains("not R[4n:4n+3]"));
    }

    fn with_moves_at(asg: &Assignment, p: usize, new: &[Move]) -> Assignment {
        let mut bad = asg.clone();
        let (from, to) = (bad.move_at[p] as usize, bad.move_at[p + 1] as usize);
        bad.moves.splice(from..to, new.iter().copied());
        let d = new.len() as i64 - (to - from) as i64;
        for q in bad.move_at.iter_mut().skip(p + 1) {
            *q = (*q as i64 + d) as u32;
        }
        bad
    }

    #[test]
    fn a_value_live_across_a_call_is_stored_and_reloaded() {
        let v = across_call(false);
        let asg = assign_regs_ssa(&v).unwrap();
        check_assignment(&v, &asg).unwrap();
        let c = call_at(&v);
        // x stays away from R4-R5, which the call reads and writes.
        let x = asg.operand_regs(1)[0];
        assert!(!(4..6).contains(&x), "x in R{}", x);
        // Stored after its definition (the return address after the
        // arguments), reloaded after the call with the return address.
        assert_eq!(asg.moves_at(1), [Move { class: Class::RPair, from: Loc::Reg(20), to: Loc::Slot(0) }]);
        assert_eq!(asg.moves_at(3), [Move { class: Class::R, from: Loc::Reg(x), to: Loc::Slot(2) }]);
        let reloads = asg.moves_at(2 * c + 1);
        assert_eq!(reloads.len(), 2);
        assert!(reloads.iter().all(|m| m.to.slot().is_none() && m.from.slot().is_some()));
        let homes = SlotHomes::memory(&asg);
        assert_eq!(homes.memory_bytes(), 12);
        let code = crate::emit::lower_vcode::lower_vcode(&v, &asg, &homes).unwrap();
        assert_eq!(code.frame_size, 16);
        let t = text(&code);
        assert!(t.contains(&"STL.64 [R1], R[20:21]".to_string()), "{:?}", t);
        assert!(t.contains(&format!("LDL R{}, [R1+0x8]", x)), "{:?}", t);

        // Without the reloads, x and the return address are gone after the call.
        let bad = with_moves_at(&asg, 2 * c + 1, &[]);
        assert!(check_assignment(&v, &bad).is_err());
        // The store made after the call: the slot holds nothing of x.
        let mut bad = with_moves_at(&asg, 3, &[]);
        let store = Move { class: Class::R, from: Loc::Reg(x), to: Loc::Slot(2) };
        let late: Vec<Move> = std::iter::once(store).chain(reloads.iter().copied()).collect();
        bad = with_moves_at(&bad, 2 * c + 1, &late);
        assert!(check_assignment(&v, &bad).unwrap_err().message().contains("is not in register"));
        // A reload from the wrong slot.
        let swapped: Vec<Move> = reloads.iter().map(|m| Move { from: Loc::Slot(2 - m.from.slot().unwrap()), ..*m }).collect();
        assert!(check_assignment(&v, &with_moves_at(&asg, 2 * c + 1, &swapped)).is_err());
        // x reloaded into the call's result register R5: the result is lost.
        let mut clobber: Vec<Move> = reloads.to_vec();
        clobber.push(Move { class: Class::R, from: Loc::Slot(2), to: Loc::Reg(5) });
        assert!(check_assignment(&v, &with_moves_at(&asg, 2 * c + 1, &clobber)).is_err());
    }

    #[test]
    fn an_argument_live_across_a_call_that_returns_in_its_register_is_copied_out() {
        // f(a: i64) -> i64 { g(a) + a }: a arrives in R[4:5], is passed in
        // R[4:5] and the result comes back there.
        let mut v = VCode::default();
        let (a, link, res, s) = (v.new_vreg(Class::RPair), v.new_vreg(Class::RPair), v.new_vreg(Class::RPair), v.new_vreg(Class::RPair));
        let args = Bundle::pseudo(Pseudo::Args).fixed(a, OpKind::Def, 4).fixed(link, OpKind::Def, 20).build();
        let mut call = Bundle::pseudo(Pseudo::Call).fixed(a, OpKind::Use, 4).fixed(res, OpKind::Def, 4).build();
        call.clobbers_all = true;
        v.makes_calls = true;
        let sum = Bundle::new().inst(forms::IADD_RR).def(IADD_RR::RD, s).use_(IADD_RR::RA, res).use_(IADD_RR::RB, a).build();
        let ret = Bundle::pseudo(Pseudo::Ret).fixed(s, OpKind::Use, 4).fixed(link, OpKind::Use, 20).build();
        v.blocks.push(block(&[], vec![args, call, sum, ret], &[], &[]));
        let asg = assign_regs_ssa(&v).unwrap();
        check_assignment(&v, &asg).unwrap();
        // Written to R[4:5], copied out into a pair of its own, stored from there.
        assert_eq!(asg.operand_regs(0)[0], 4);
        let r = asg.operand_regs(2)[2];
        assert!(r % 2 == 0 && !(4..8).contains(&r), "a in R{}", r);
        let out = asg.moves_at(1);
        assert_eq!(out[..2], [4, 5].map(|x| Move { class: Class::R, from: Loc::Reg(x), to: Loc::Reg(x - 4 + r) }));
        // Without the copy, a is lost when the call writes R[4:5].
        let rest: Vec<Move> = out[2..].to_vec();
        assert!(check_assignment(&v, &with_moves_at(&asg, 1, &rest)).is_err());
    }

    #[test]
    fn a_predicate_live_across_a_call_keeps_r0_free() {
        let v = across_call(true);
        let asg = assign_regs_ssa(&v).unwrap();
        check_assignment(&v, &asg).unwrap();
        // R0 is the scratch register of the predicate's store and reload.
        let p = v.blocks[0].insts[2].opnds[0].vreg;
        assert_eq!(v.class(p), Class::P);
        for (i, m) in v.blocks[0].insts.iter().enumerate() {
            for (o, &r) in m.opnds.iter().zip(asg.operand_regs(i)) {
                assert!(r != 0 || o.vreg == p, "{} in R0", o.vreg);
            }
        }
        let c = call_at(&v);
        let code = crate::emit::lower_vcode::lower_vcode(&v, &asg, &SlotHomes::memory(&asg)).unwrap();
        let t = text(&code);
        assert!(t.iter().any(|l| l.starts_with("SEL R0, RZ, 0x1, !P")), "{:?}", t);
        assert!(t.iter().any(|l| l.starts_with("ISETP.NE.AND.U32 P") && l.contains("R0, 0x0")), "{:?}", t);
        // x moved into R0 just before the predicate's reload: the reload's
        // scratch register overwrites it.
        let x = asg.operand_regs(1)[0];
        let mut moves: Vec<Move> = asg.moves_at(2 * c + 1).iter().filter(|m| m.class != Class::P).copied().collect();
        moves.push(Move { class: Class::R, from: Loc::Reg(x), to: Loc::Reg(0) });
        moves.extend(asg.moves_at(2 * c + 1).iter().filter(|m| m.class == Class::P));
        moves.push(Move { class: Class::R, from: Loc::Reg(0), to: Loc::Reg(x) });
        assert!(check_assignment(&v, &with_moves_at(&asg, 2 * c + 1, &moves)).unwrap_err().message().contains("is not in register"));
    }

    #[test]
    fn a_function_without_blocks_is_left_to_regalloc2_with_its_reason() {
        let why = assign_regs_ssa(&VCode::default()).unwrap_err();
        assert_eq!(why, GiveUp::NoBlocks);
        assert_eq!(why.to_string(), "no blocks");
    }

    #[test]
    fn parallel_copies_break_cycles() {
        let mut out = Vec::new();
        let mut copies = vec![(1, 2), (2, 1), (3, 1)];
        sequentialize(&mut copies, || Some(9), &mut out).unwrap();
        // R3 takes R1 first; then the swap through R9.
        let mut regs = [0, 10, 20, 30, 0, 0, 0, 0, 0, 0];
        for &(d, s) in &out {
            regs[d as usize] = regs[s as usize];
        }
        assert_eq!((regs[1], regs[2], regs[3]), (20, 10, 10));
        assert!(sequentialize(&mut vec![(1, 2), (2, 1)], || None, &mut Vec::new()).is_none());
    }
}
