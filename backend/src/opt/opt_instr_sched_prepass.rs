//! Instructions reordered within their block before register assignment, so
//! that long latencies overlap (at `opt_level=speed`; `docs/optimization.md`,
//! "Instruction scheduling").
//!
//! A block is cut into *regions* at every instruction that keeps its place
//! (`Role::Fixed`: pseudo-instructions — arguments, calls, frame accesses,
//! terminators —, out-of-line bundles, instructions with an ABI-fixed
//! operand, barriers, fences, votes, shuffles, convergence-barrier
//! instructions, clock reads, indexed register accesses, anything the pass
//! does not know). Inside a region the order is free up to a dependence graph:
//!
//! - **registers**: a read after the write it reads (latency of the writer,
//!   `ursa_emit::latency`), a write after every earlier read and write of the
//!   same virtual register, and the same for the physical UR/UP (and any
//!   unbound R/P) registers the fields name; an instruction that writes into
//!   the register of one of its uses (`OpKind::Reuse`) counts as a write of
//!   that use;
//! - **memory**: loads may pass loads; a store or atomic is passed by no
//!   memory access it may alias, and passes none. Two accesses are
//!   *provably independent* when they are in different state spaces (global,
//!   shared, local; a generic `LD`/`ST` may be any) or read the same base
//!   value at disjoint `[offset, offset + width)` ranges; an atomic is
//!   ordered with every access. `LDC`/`ULDC` read the constant bank, which no
//!   instruction writes: they are ordinary values;
//! - **block arguments**: a value passed to a block parameter stays after the
//!   reads of that parameter that came before it (what `opt_sink_block_args`
//!   arranged: the loop update shares the register of the value it replaces).
//!
//! Then a top-down list scheduler: each cycle the ready instruction whose
//! inputs are available and whose path to the end of the region is longest
//! (latencies summed: a 200-cycle global load first, so independent loads are
//! issued together, and chains of fixed-latency work interleave), ties by the
//! original order; when nothing is available, the one available soonest.
//! A constant (an instruction computing from immediates and the constant
//! bank alone) is taken only once a reader of it has nothing else left to
//! wait for, or when nothing else is ready: taken early it would hold a
//! register for nothing.
//!
//! **Short regions.** A region of fewer than eight instructions (`SHORT_REGION`)
//! in a block on no cycle of the control flow, with no instruction of
//! variable latency and no copy whose source a later instruction of the
//! region reads, keeps its order without being looked at: what a reordering
//! there can win is a few cycles of fixed-latency stalls, once per run of
//! the code, and building its dependence graph costs more compile time than
//! any other step of the pass on small functions (`docs/optimization.md`,
//! "Instruction scheduling", has the measured trade). A longer such region
//! keeps its order too when it already issues one instruction per cycle
//! (every register it reads written at least its writer's latency before,
//! [`issues_without_stall`]): no order finishes it sooner (and on the
//! conformance runtests and filetests the list schedule of every such region
//! was its order). Loads, long-latency work, loops and copies that could
//! share their source's register are always scheduled.
//!
//! **Register budget.** The pressure (32-bit registers live, a pair counting
//! two, and predicates on their own) is tracked while scheduling. The budget
//! of general registers is the highest pressure of the function in its
//! original order: the allocator needs about that many registers whatever
//! the order, so staying below it anywhere costs none. That of predicates is
//! the same, or four (`PREDICATE_BUDGET`) where the original order needs
//! fewer: a thread has its predicate registers whether it uses them or not,
//! so lanes compared one after the other (a compare, then the `SEL` or
//! branch that waits for it) may overlap. A choice that would exceed it gives way to
//! the ready instruction within the budget that is available soonest, then
//! raises the pressure least (when none stays within it: the least raising,
//! then the soonest; ties by the original order). A region whose schedule
//! still exceeds the budget keeps the longest beginning of it (of the last
//! sixteen, `KEPT_PREFIXES`) that, with the rest of the region after it in
//! its original order, stays within the budget; without one, its original
//! order.

use smallvec::SmallVec;
use std::cell::RefCell;
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::sync::OnceLock;

use ursa_emit::latency::{class_of_form, LatencyClass};
use ursa_emit::mods::SReg;
use ursa_emit::{fields, RegFile, ISA, PT, RZ, URZ};
use ursa_isel::vcode::{Class, MInst, OpKind, Pseudo, VBlock, VCode, VReg};

use crate::regalloc::assign_regs_ssa::{block_liveness, copy_source, take_liveness, VLiveness};
use ursa_isel::bitset::BitSet;

/// Regions longer than this are scheduled in windows of this many
/// instructions (the list scheduler is quadratic in a region's length).
const WINDOW: usize = 256;

/// Regions of this many instructions or more keep each ready instruction's
/// effect on the pressure while the schedule is over the budget (smaller
/// ones recompute it: the bookkeeping would cost more).
const CACHE_EFFECTS_FROM: usize = 64;

/// The predicates a schedule may keep live at once, whatever the original
/// order needed: a thread has its predicate registers whether it uses them
/// or not (they cost no occupancy). Four of the allocators' six (`P0`–`P5`).
const PREDICATE_BUDGET: i32 = 4;

/// How many beginnings of a schedule that went over the budget are tried,
/// longest first, with the rest of the region in its original order
/// ([`Region::keep_what_fits`]).
const KEPT_PREFIXES: usize = 16;

/// Regions shorter than this, outside loops and with no instruction of
/// variable latency, keep their order (the module's text).
const SHORT_REGION: usize = 8;

/// Regions of this many instructions or more find the most urgent ready
/// instruction in heaps ([`Region::least_ready`]) rather than by a scan of
/// all ready instructions at every step (the same choice either way).
const HEAPS_FROM: usize = 16;

/// Regions of this many instructions or more get one try at a schedule
/// within the budget, not three: their retries with a lowered budget cost a
/// whole quadratic schedule each and almost never succeed where the first
/// failed (`docs/optimization.md`, "Instruction scheduling").
const ONE_TRY_FROM: usize = 128;

/// A state space of memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Space {
    Global,
    Shared,
    Local,
    /// `LD`/`ST`/`ATOM`: a generic address, any of the others.
    Generic,
}

/// What an instruction is to the scheduler.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Role {
    /// Reads and writes registers only.
    Pure,
    Load(Space),
    Store(Space),
    /// Ordered with every memory access.
    Atomic,
    /// Keeps its place: nothing moves across it.
    Fixed,
}

/// The role of an optype by name (`ursa_emit::ISA.optypes`): the optypes
/// listed as pure or as memory accesses; every other one is fixed.
pub(crate) fn optype_role(name: &str) -> Role {
    match name {
        "LDG" => Role::Load(Space::Global),
        "LDS" => Role::Load(Space::Shared),
        "LDL" => Role::Load(Space::Local),
        "LD" => Role::Load(Space::Generic),
        "STG" => Role::Store(Space::Global),
        "STS" => Role::Store(Space::Shared),
        "STL" => Role::Store(Space::Local),
        "ST" => Role::Store(Space::Generic),
        "ATOM" | "ATOMS" | "RED" => Role::Atomic,
        // Integer, multiply, bit and float arithmetic, conversions, moves,
        // compares, the uniform datapath's ALU, constant-bank reads, special
        // registers (a clock read is fixed: `role`).
        "IADD" | "IMAD" | "IMAD_WIDE" | "IDP2A" | "IDP4A" | "IMUL" | "LEA" | "IABS" | "IMNMX" | "P2R" | "R2P" | "ISETP" | "ISET"
        | "SEL" | "LOP3" | "PLOP3" | "SHF" | "MOV" | "PRMT" | "I2I" | "I2IP" | "R2UR" | "MUFU" | "POPC" | "FLO" | "BREV" | "BMSK"
        | "SGXT" | "DADD" | "DMUL" | "DFMA" | "DMNMX" | "DSETP" | "FADD" | "FMUL" | "FFMA" | "FMNMX" | "FSETP" | "FRND" | "I2F" | "F2I"
        | "F2F" | "LDC" | "S2R" | "S2UR" | "ULDC" | "UIADD" | "UIMAD" | "UIMAD_WIDE" | "UIMUL" | "ULEA" | "UIABS" | "UIMNMX" | "UP2UR"
        | "UR2UP" | "UISETP" | "USEL" | "ULOP3" | "UPLOP3" | "USHF" | "UMOV" | "UPRMT" | "UPOPC" | "UFLO" | "UBREV" | "UBMSK" | "USGXT"
        | "UF2FP" => Role::Pure,
        _ => Role::Fixed,
    }
}

/// [`optype_role`] of every optype, by index.
fn optype_roles() -> &'static [Role] {
    static ROLES: OnceLock<Vec<Role>> = OnceLock::new();
    ROLES.get_or_init(|| ISA.optypes.iter().map(|o| optype_role(&o.name)).collect())
}

/// The role of an instruction of the VCode.
pub(crate) fn role(m: &MInst) -> Role {
    if m.pseudo != Pseudo::None
        || m.clobbers_all
        || m.cold_from.is_some()
        || m.sym().is_some()
        || m.pieces.len() != 1
        || m.opnds.iter().any(|o| o.fixed.is_some())
    {
        return Role::Fixed;
    }
    let p = &m.pieces[0];
    if p.has_dynamic_regs() {
        return Role::Fixed;
    }
    let r = optype_roles()[p.def().optype as usize];
    if r == Role::Pure {
        if let Some(k) = fields::SR.place(p.form()) {
            let sr = p.get_at(k);
            if sr == SReg::SR_CLOCKLO.0 as u64 || sr == SReg::SR_CLOCKHI.0 as u64 {
                return Role::Fixed;
            }
        }
    }
    r
}

/// A memory access: its space, the value its address is relative to (the
/// operand of field `ra`, with the instruction that last wrote it in the
/// region, or none for an absolute address) and its byte range from there.
#[derive(Clone, Copy, Debug)]
struct Access {
    space: Space,
    atomic: bool,
    store: bool,
    base: Option<(VReg, bool, u32)>,
    lo: i64,
    hi: i64,
}

impl Access {
    /// May the two touch the same byte, with one of them a write?
    fn conflicts(&self, o: &Access) -> bool {
        if !(self.store || o.store || self.atomic || o.atomic) {
            return false;
        }
        if self.atomic || o.atomic {
            return true;
        }
        if self.space != o.space && self.space != Space::Generic && o.space != Space::Generic {
            return false;
        }
        !(self.base == o.base && (self.hi <= o.lo || o.hi <= self.lo))
    }
}

/// The virtual registers an instruction reads and writes (each once; a
/// `Reuse` writes the register of its use too), and its physical ones.
#[derive(Default)]
struct Node {
    reads: SmallVec<[VReg; 4]>,
    writes: SmallVec<[VReg; 3]>,
    /// Writes that are no early def or scratch (may share a dying use's register).
    late_writes: bool,
    preg_reads: SmallVec<[(RegFile, u32); 2]>,
    preg_writes: SmallVec<[(RegFile, u32); 2]>,
    lat: u32,
    /// Computes from immediates and the constant bank alone ([`constant`]).
    constant: bool,
}

/// Fills `n` (its storage reused) with what `m`, of role `role`, reads and
/// writes, in one pass over its operands and one over its register fields
/// (no list of references).
fn node(m: &MInst, role: Role, n: &mut Node) {
    n.reads.clear();
    n.writes.clear();
    n.preg_reads.clear();
    n.preg_writes.clear();
    n.late_writes = true;
    let class = class_of_form(m.pieces[0].form());
    n.lat = class.latency() as u32;
    for o in m.opnds.iter() {
        match o.kind {
            OpKind::Use => {
                if !n.reads.contains(&o.vreg) {
                    n.reads.push(o.vreg);
                }
            }
            kind => {
                if matches!(kind, OpKind::EarlyDef | OpKind::Temp) {
                    n.late_writes = false;
                }
                if !n.writes.contains(&o.vreg) {
                    n.writes.push(o.vreg);
                }
                if let OpKind::Reuse(k) = kind {
                    let v = m.opnds[k as usize].vreg;
                    if !n.writes.contains(&v) {
                        n.writes.push(v);
                    }
                }
            }
        }
    }
    let mut no_pregs = true;
    let (preg_reads, preg_writes) = (&mut n.preg_reads, &mut n.preg_writes);
    m.pieces[0].for_each_reg_ref(|file, num, count, written| {
        no_pregs = false;
        let none = match file {
            RegFile::R => RZ as u32,
            RegFile::UR => URZ as u32,
            RegFile::P | RegFile::UP => PT as u32,
        };
        let list = if written { &mut *preg_writes } else { &mut *preg_reads };
        for x in (num..num + count).filter(|&x| x < none) {
            list.push((file, x));
        }
    });
    n.constant = constant(m, role, class, no_pregs);
}

/// Does instruction `m` of role `role` (pure) compute from immediates and
/// the constant bank alone: fixed latency, no register read but the one it
/// writes in place (the high half of a pair written into the register of
/// its low half, `OpKind::Reuse`), no physical register (`no_pregs`)?
/// (`class`: the latency class of its form.)
fn constant(m: &MInst, role: Role, class: LatencyClass, no_pregs: bool) -> bool {
    if role != Role::Pure || !no_pregs || class.variable() {
        return false;
    }
    m.opnds.iter().any(|o| o.kind != OpKind::Use)
        && m.opnds.iter().enumerate().all(|(k, o)| o.kind != OpKind::Use || m.opnds.iter().any(|w| w.kind == OpKind::Reuse(k as u8)))
}

/// Register pressure: 32-bit registers and predicates.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Pressure {
    pub(crate) r: i32,
    pub(crate) p: i32,
}

impl Pressure {
    pub(crate) fn of(class: Class) -> Pressure {
        match class {
            Class::R => Pressure { r: 1, p: 0 },
            Class::RPair => Pressure { r: 2, p: 0 },
            Class::P => Pressure { r: 0, p: 1 },
        }
    }
    pub(crate) fn add(&mut self, o: Pressure) {
        self.r += o.r;
        self.p += o.p;
    }
    pub(crate) fn sub(&mut self, o: Pressure) {
        self.r -= o.r;
        self.p -= o.p;
    }
    pub(crate) fn max(self, o: Pressure) -> Pressure {
        Pressure { r: self.r.max(o.r), p: self.p.max(o.p) }
    }
    pub(crate) fn exceeds(self, budget: Pressure) -> bool {
        self.r > budget.r || self.p > budget.p
    }
}

/// One region's dependence graph and the facts its pressure needs; the
/// virtual registers it names are numbered densely (`local`). Its storage
/// is reused from one region to the next ([`Scratch`]).
#[derive(Default)]
struct Region {
    nodes: Vec<Node>,
    /// Per node: the registers it reads and writes, by local number (a
    /// register both read and written, the old version a `Reuse` writes
    /// over, only among the reads).
    reads: Vec<SmallVec<[u32; 4]>>,
    writes: Vec<SmallVec<[u32; 3]>>,
    /// Successors with the latency of the edge.
    succs: Vec<SmallVec<[(u32, u32); 4]>>,
    npreds: Vec<u32>,
    /// Per node: the longest latency path from it to the end of the region.
    height: Vec<u32>,
    /// Per local register: its size, its reads in the region (one per
    /// instruction) and whether it is live after the region.
    size: Vec<Pressure>,
    uses: Vec<u32>,
    live_after: Vec<bool>,
    /// Registers live at the start of the region.
    start: Pressure,
}

impl Region {
    /// Whether every instruction depends on the one before it: then only
    /// one is ever ready and any list schedule is the original order.
    fn is_chain(&self) -> bool {
        (1..self.nodes.len()).all(|j| self.succs[j - 1].iter().any(|&(s, _)| s as usize == j))
    }

    /// The instruction's effect on the pressure when `left` holds the reads
    /// still to come of each register: the pressure while it executes and
    /// after it.
    fn step(&self, i: usize, left: &[u32], cur: Pressure) -> (Pressure, Pressure) {
        self.apply(i, self.effect(i, left), cur)
    }

    /// What instruction `i` frees and takes, given `left` (see [`Effect`]).
    fn effect(&self, i: usize, left: &[u32]) -> Effect {
        let mut dying = Pressure::default();
        for &v in &self.reads[i] {
            if left[v as usize] == 1 && !self.live_after[v as usize] {
                dying.add(self.size[v as usize]);
            }
        }
        let (mut defs, mut live_defs) = (Pressure::default(), Pressure::default());
        for &v in &self.writes[i] {
            let p = self.size[v as usize];
            defs.add(p);
            if left[v as usize] > 0 || self.live_after[v as usize] {
                live_defs.add(p);
            }
        }
        Effect { dying, defs, live_defs }
    }

    /// The pressure while instruction `i` of effect `e` executes from
    /// pressure `cur`, and after it.
    fn apply(&self, i: usize, e: Effect, cur: Pressure) -> (Pressure, Pressure) {
        // Written registers beside those read, or in place of those that
        // die (a plain def may take a dying use's register).
        let mut during = cur;
        during.add(e.defs);
        if self.nodes[i].late_writes {
            during.sub(e.dying);
            during = during.max(cur);
        }
        let mut after = cur;
        after.sub(e.dying);
        after.add(e.live_defs);
        (during, after)
    }

    /// After a schedule went over `limit` (`order`, the part made before
    /// that), the longest of its last `KEPT_PREFIXES` beginnings that, with
    /// the other instructions after it in their original order, stays within
    /// `limit`, into `order`; whether there is one. (Such an order is valid:
    /// every dependence goes forward in the original order, and a beginning
    /// of a list schedule holds the predecessors of each of its
    /// instructions.)
    fn keep_what_fits(&self, order: &mut Vec<u32>, limit: Pressure, ls: &mut ListState) -> bool {
        let made: Vec<u32> = std::mem::take(order);
        for l in (1..=made.len()).rev().take(KEPT_PREFIXES) {
            order.clear();
            order.extend_from_slice(&made[..l]);
            self.finish_in_order(order, &mut ls.done);
            if self.fits(order, limit, &mut ls.left) {
                #[cfg(test)]
                tests::KEPT_HERE.set(tests::KEPT_HERE.get() + 1);
                return true;
            }
        }
        false
    }

    /// `order` (a beginning of a schedule) followed by the other
    /// instructions in their original order.
    fn finish_in_order(&self, order: &mut Vec<u32>, placed: &mut Vec<bool>) {
        placed.clear();
        placed.resize(self.nodes.len(), false);
        for &i in order.iter() {
            placed[i as usize] = true;
        }
        order.extend((0..self.nodes.len() as u32).filter(|&i| !placed[i as usize]));
    }

    /// Into `order`, the instructions by their earliest cycle (the longest
    /// latency path to them), ties in the original order; whether they
    /// issue in that order one per cycle, without a stall (`at`: working
    /// memory).
    fn stall_free_steps(&self, order: &mut Vec<u32>, at: &mut Vec<u32>) -> bool {
        let n = self.nodes.len();
        at.clear();
        at.resize(n, 0);
        // (Every dependence goes forward in the original order.)
        for i in 0..n {
            for &(s, lat) in &self.succs[i] {
                at[s as usize] = at[s as usize].max(at[i] + lat);
            }
        }
        order.clear();
        order.extend(0..n as u32);
        order.sort_by_key(|&i| at[i as usize]);
        // Issued in `order`, instruction k at cycle k: each must find its
        // operands ready by then (`at` now the cycle each is ready at).
        at.fill(0);
        order.iter().enumerate().all(|(k, &i)| {
            let k = k as u32;
            if at[i as usize] > k {
                return false;
            }
            for &(s, lat) in &self.succs[i as usize] {
                at[s as usize] = at[s as usize].max(k + lat);
            }
            true
        })
    }

    /// Whether the pressure stays within `limit` all along `order` (`left`:
    /// working memory).
    fn fits(&self, order: &[u32], limit: Pressure, left: &mut Vec<u32>) -> bool {
        left.clone_from(&self.uses);
        let mut cur = self.start;
        for &i in order {
            let (during, after) = self.step(i as usize, left, cur);
            if during.exceeds(limit) || after.exceeds(limit) {
                return false;
            }
            self.consume(i as usize, left);
            cur = after;
        }
        true
    }

    fn consume(&self, i: usize, left: &mut [u32]) {
        for &v in &self.reads[i] {
            left[v as usize] -= 1;
        }
    }

    /// Into `out`, per local register the instructions that read or write
    /// it: those of register `v` are `out.1[out.0[v]..out.0[v + 1]]`.
    fn referrers(&self, out: &mut (Vec<u32>, Vec<u32>)) {
        let (start, list) = out;
        let pairs =
            || (0u32..).zip(self.reads.iter().zip(&self.writes)).flat_map(|(j, (r, w))| r.iter().chain(w.iter()).map(move |&v| (v, j)));
        crate::ir::group_by_key(self.size.len(), pairs, start, list);
    }

    /// The ready instruction of least `key` at time `t`, from the heaps of
    /// [`ListState`] (`done`: scheduled, their entries dropped as met). The
    /// available instructions that are no constants all have `t` for their
    /// time, so the heap of those orders by height and then place; when none
    /// is available, the pending one available soonest; the constants, whose
    /// key changes as their readers become ready, are compared one by one.
    fn least_ready(
        &self,
        t: u32,
        key: &impl Fn(u32) -> u128,
        avail: &mut BinaryHeap<(u32, Reverse<u32>)>,
        pending: &mut BinaryHeap<Reverse<(u32, Reverse<u32>, u32)>>,
        consts: &mut Vec<u32>,
        done: &[bool],
    ) -> u32 {
        while let Some(&Reverse((e, h, i))) = pending.peek() {
            if e > t {
                break;
            }
            pending.pop();
            if !done[i as usize] {
                avail.push((h.0, Reverse(i)));
            }
        }
        while avail.peek().is_some_and(|&(_, Reverse(i))| done[i as usize]) {
            avail.pop();
        }
        while pending.peek().is_some_and(|&Reverse((_, _, i))| done[i as usize]) {
            pending.pop();
        }
        let mut best = match (avail.peek(), pending.peek()) {
            (Some(&(_, Reverse(i))), _) | (None, Some(&Reverse((_, _, i)))) => Some(i),
            (None, None) => None,
        };
        consts.retain(|&c| !done[c as usize]);
        for &c in consts.iter() {
            if best.is_none_or(|b| key(c) < key(b)) {
                best = Some(c);
            }
        }
        best.expect("a ready instruction")
    }

    /// Into `order`, the list schedule under `budget` (`ls`: working
    /// memory); whether the pressure stays within `limit` all along. It
    /// stops at the first instruction that takes the pressure above `limit`
    /// (`order` is then incomplete: such a schedule is not used).
    fn schedule(&self, budget: Pressure, limit: Pressure, ls: &mut ListState, order: &mut Vec<u32>) -> bool {
        let n = self.nodes.len();
        let ListState { npreds, earliest, ready, slot, left, others, effects, referrers, avail, pending, consts, done } = ls;
        let mut cached = false;
        npreds.clone_from(&self.npreds);
        earliest.clear();
        earliest.resize(n, 0);
        let heaps = n >= heaps_from();
        if heaps {
            done.clear();
            done.resize(n, false);
            slot.clear();
            slot.resize(n, 0);
            avail.clear();
            pending.clear();
            consts.clear();
        }
        ready.clear();
        left.clone_from(&self.uses);
        let mut cur = self.start;
        if cur.exceeds(limit) {
            return false;
        }
        let mut t = 0u32;
        order.clear();
        // Per instruction: its predecessors still to schedule that are no
        // constants. A constant waits until a reader needs nothing else
        // (it would hold a register for nothing before).
        others.clear();
        others.resize(n, 0);
        for (i, nd) in self.nodes.iter().enumerate() {
            if !nd.constant {
                for &(s, _) in &self.succs[i] {
                    others[s as usize] += 1;
                }
            }
        }
        fn wanted(r: &Region, others: &[u32], c: usize, depth: u32) -> bool {
            r.succs[c].is_empty()
                || r.succs[c].iter().any(|&(s, _)| {
                    let s = s as usize;
                    if r.nodes[s].constant {
                        depth < 4 && wanted(r, others, s, depth + 1)
                    } else {
                        others[s] == 0
                    }
                })
        }
        // A ready instruction enters `ready` (every choice) and, in a region
        // that uses the heaps, those of `least_ready` (its `earliest` is
        // final once it is ready).
        let enter = |i: u32,
                     ready: &mut Vec<u32>,
                     slot: &mut [u32],
                     pending: &mut BinaryHeap<Reverse<(u32, Reverse<u32>, u32)>>,
                     consts: &mut Vec<u32>,
                     earliest: &[u32]| {
            if heaps {
                slot[i as usize] = ready.len() as u32;
            }
            ready.push(i);
            if heaps && self.nodes[i as usize].constant {
                consts.push(i);
            } else if heaps {
                pending.push(Reverse((earliest[i as usize], Reverse(self.height[i as usize]), i)));
            }
        };
        for i in 0..n as u32 {
            if npreds[i as usize] == 0 {
                enter(i, ready, slot, pending, consts, earliest);
            }
        }
        while !ready.is_empty() {
            let lazy = |i: u32| self.nodes[i as usize].constant && !wanted(self, others, i as usize, 0);
            // Available first, then the longest path, then the original
            // order; a constant no reader wants yet after everything else.
            let key = |i: u32| urgency(lazy(i), earliest[i as usize].max(t), self.height[i as usize], i);
            let mut pick = if heaps {
                let chosen = self.least_ready(t, &key, avail, pending, consts, done);
                slot[chosen as usize] as usize
            } else {
                (0..ready.len()).min_by_key(|&k| key(ready[k])).expect("a ready instruction")
            };
            let mut stepped = self.step(ready[pick] as usize, left, cur);
            if stepped.0.exceeds(budget) || stepped.1.exceeds(budget) {
                // Over the budget: among the choices within it, the one
                // available soonest, then the one that raises the pressure
                // least; when every choice exceeds it, the one that raises
                // the pressure least, then the soonest. Ties by the original
                // order. (In a long region each ready instruction's effect
                // is kept until a register it names loses a read.)
                if !cached && n >= CACHE_EFFECTS_FROM {
                    cached = true;
                    self.referrers(referrers);
                    effects.clear();
                    effects.resize(n, None);
                }
                pick = (0..ready.len())
                    .min_by_key(|&k| {
                        let i = ready[k];
                        let (during, after) = if cached {
                            let e = *effects[i as usize].get_or_insert_with(|| self.effect(i as usize, left));
                            self.apply(i as usize, e, cur)
                        } else {
                            self.step(i as usize, left, cur)
                        };
                        let over = during.exceeds(budget) || after.exceeds(budget);
                        let soon = earliest[i as usize].max(t);
                        let rise = (after.r - cur.r) + (after.p - cur.p);
                        if over {
                            over_budget_key(true, lazy(i), rise, soon, i)
                        } else {
                            over_budget_key(false, lazy(i), soon, rise, i)
                        }
                    })
                    .expect("a ready instruction");
                stepped = self.step(ready[pick] as usize, left, cur);
            }
            let i = ready.swap_remove(pick);
            if heaps {
                done[i as usize] = true;
                if let Some(&moved) = ready.get(pick) {
                    slot[moved as usize] = pick as u32;
                }
            }
            if stepped.0.exceeds(limit) || stepped.1.exceeds(limit) {
                return false;
            }
            cur = stepped.1;
            self.consume(i as usize, left);
            if cached {
                for &v in &self.reads[i as usize] {
                    let (from, to) = (referrers.0[v as usize] as usize, referrers.0[v as usize + 1] as usize);
                    for &j in &referrers.1[from..to] {
                        effects[j as usize] = None;
                    }
                }
            }
            let at = earliest[i as usize].max(t);
            t = at + 1;
            order.push(i);
            let constant = self.nodes[i as usize].constant;
            for &(s, lat) in &self.succs[i as usize] {
                let s = s as usize;
                if !constant {
                    others[s] -= 1;
                }
                earliest[s] = earliest[s].max(at + lat);
                npreds[s] -= 1;
                if npreds[s] == 0 {
                    enter(s as u32, ready, slot, pending, consts, earliest);
                }
            }
        }
        debug_assert_eq!(order.len(), n, "the dependence graph has a cycle");
        true
    }
}

/// The order of the list scheduler's choice, least first: a constant no
/// reader wants yet (`lazy`) after everything else, then the soonest
/// available (`at`), then the greatest `height`, then the original place
/// `i` — the tuple `(lazy, at, Reverse(height), i)` packed into one integer,
/// which orders alike and compares in one step.
fn urgency(lazy: bool, at: u32, height: u32, i: u32) -> u128 {
    (u128::from(lazy) << 96) | (u128::from(at) << 64) | (u128::from(u32::MAX - height) << 32) | u128::from(i)
}

/// The order of a choice over the budget, least first: the tuple `(over,
/// lazy, a, b, i)`, `a` and `b` being the time it is available and the
/// pressure's rise (the rise first when the choice is over the budget),
/// packed into one integer that orders alike and compares in one step (`a`
/// and `b`, any `i32` or `u32`, offset into 44 unsigned bits each).
fn over_budget_key(over: bool, lazy: bool, a: impl Into<i64>, b: impl Into<i64>, i: u32) -> u128 {
    let field = |x: i64| ((x + (1 << 43)) as u128) & ((1 << 44) - 1);
    (u128::from(over) << 121) | (u128::from(lazy) << 120) | (field(a.into()) << 76) | (field(b.into()) << 32) | u128::from(i)
}

/// [`HEAPS_FROM`]; tests may set another threshold for their thread.
fn heaps_from() -> usize {
    #[cfg(test)]
    if let Some(n) = tests::HEAPS_FROM_HERE.get() {
        return n;
    }
    HEAPS_FROM
}

/// The working memory of [`Region::schedule`], reused from one region to the next.
#[derive(Default)]
struct ListState {
    npreds: Vec<u32>,
    earliest: Vec<u32>,
    ready: Vec<u32>,
    /// Per ready instruction, its place in `ready` (kept in a region that
    /// uses the heaps, which name their choice by instruction).
    slot: Vec<u32>,
    left: Vec<u32>,
    others: Vec<u32>,
    /// Per instruction, its [`Effect`] while no register it names has lost
    /// a read since (filled once the schedule first meets the budget).
    effects: Vec<Option<Effect>>,
    /// [`Region::referrers`].
    referrers: (Vec<u32>, Vec<u32>),
    /// The ready instructions that are no constants: those available at
    /// the current time, the most urgent (height, then place) on top, and
    /// those not yet available, the soonest on top (entries of scheduled
    /// instructions are dropped as they reach the top).
    avail: BinaryHeap<(u32, Reverse<u32>)>,
    pending: BinaryHeap<Reverse<(u32, Reverse<u32>, u32)>>,
    /// The ready constants (few: their key changes as readers become ready).
    consts: Vec<u32>,
    /// Per instruction: scheduled.
    done: Vec<bool>,
}

/// What an instruction does to the pressure: the registers whose last read
/// it is, those it writes, and those of them read later or live after the region.
#[derive(Clone, Copy, Debug)]
struct Effect {
    dying: Pressure,
    defs: Pressure,
    live_defs: Pressure,
}

/// Per register, while the graph is built: the last writer and the readers since.
#[derive(Default)]
struct Last {
    writer: Option<usize>,
    readers: SmallVec<[usize; 4]>,
    /// Every reader in the region so far (for the block-argument rule).
    all_readers: SmallVec<[usize; 4]>,
}

impl Last {
    /// Node `j` reads the register: after its writer, by the writer's latency.
    fn read(&mut self, j: usize, nodes: &[Node], edge: &mut impl FnMut(usize, usize, u32)) {
        if let Some(w) = self.writer {
            edge(w, j, nodes[w].lat);
        }
        self.readers.push(j);
    }

    /// Node `j` writes the register: after its last writer and its readers since.
    fn write(&mut self, j: usize, edge: &mut impl FnMut(usize, usize, u32)) {
        if let Some(w) = self.writer {
            edge(w, j, 1);
        }
        for &i in &self.readers {
            edge(i, j, 0);
        }
        self.writer = Some(j);
        self.readers.clear();
    }

    fn clear(&mut self) {
        self.writer = None;
        self.readers.clear();
        self.all_readers.clear();
    }
}

/// Physical registers below RZ/URZ/PT, one slot each in a dense table.
const PREG_FILE: usize = 256;

fn preg_slot((file, x): (RegFile, u32)) -> usize {
    let f = match file {
        RegFile::R => 0,
        RegFile::UR => 1,
        RegFile::P => 2,
        RegFile::UP => 3,
    };
    f * PREG_FILE + x as usize
}

/// Sentinel of the dense per-register tables: no entry.
const NONE: u32 = u32::MAX;

/// The working memory of the pass, kept per thread and reused from one
/// region, block and function to the next: every table is indexed densely
/// (by virtual register, local register number or physical register slot)
/// and reset only where the previous use wrote it.
#[derive(Default)]
struct Scratch {
    /// The live set of the backward pressure scan.
    live_set: BitSet<u32, Vec<u64>>,
    /// Per block, the offset of its instructions in `before`; per
    /// instruction, the pressure before it in the original order.
    first: Vec<usize>,
    before: Vec<Pressure>,
    /// Per virtual register: `(epoch, index)` of its last read in the block
    /// being scheduled (valid when `epoch` is the block's).
    last_read: Vec<(u32, u32)>,
    epoch: u32,
    /// The block's block arguments with the parameters they become, sorted by argument.
    args: Vec<(VReg, VReg)>,
    roles: Vec<Role>,
    graph: Graph,
    region: Region,
    list: ListState,
    /// The schedule of the region.
    order: Vec<u32>,
    /// Per block: it may lie on a cycle ([`cyclic_blocks`]).
    on_cycle: Vec<bool>,
    /// Per virtual register: `(stamp, cycle)` its value is ready at in the
    /// region [`issues_without_stall`] looks at (valid when `stamp` is its).
    ready_at: Vec<(u32, u32)>,
    stamp: u32,
}

/// Whether a region of fixed-latency work (`only_fixed_latency_work`)
/// issues one instruction per cycle in its own order: every register an
/// instruction reads, when written earlier in the region, written at least
/// that write's latency before (`docs/latencies.md`; values from before the
/// region are ready), the dependences the scheduler's graph has with a
/// latency. No order finishes it sooner. An instruction that names a
/// physical register (dependences this look does not follow) makes it
/// false. `ready_at` and `stamp`: [`Scratch`]'s.
fn issues_without_stall(insts: &[MInst], ready_at: &mut Vec<(u32, u32)>, stamp: &mut u32) -> bool {
    *stamp = stamp.wrapping_add(1);
    if *stamp == 0 {
        ready_at.iter_mut().for_each(|e| *e = (0, 0));
        *stamp = 1;
    }
    let stamp = *stamp;
    for (k, m) in insts.iter().enumerate() {
        let k = k as u32;
        let mut names_register = false;
        m.pieces[0].for_each_reg_ref(|_, _, _, _| names_register = true);
        if names_register {
            return false;
        }
        for o in m.opnds.iter().filter(|o| o.kind == OpKind::Use) {
            if let Some(&(st, at)) = ready_at.get(o.vreg.0 as usize) {
                if st == stamp && at > k {
                    return false;
                }
            }
        }
        let ready = k + class_of_form(m.pieces[0].form()).latency() as u32;
        for o in m.opnds.iter().filter(|o| o.kind != OpKind::Use) {
            let mut put = |v: VReg| {
                let i = v.0 as usize;
                if i >= ready_at.len() {
                    ready_at.resize(i + 1, (0, 0));
                }
                ready_at[i] = (stamp, ready);
            };
            put(o.vreg);
            if let OpKind::Reuse(u) = o.kind {
                put(m.opnds[u as usize].vreg);
            }
        }
    }
    true
}

/// Whether `insts` (a region) has no instruction of variable latency and
/// no copy whose source a later instruction of the region reads (moved
/// after those reads, the copy can share its source's register).
fn only_fixed_latency_work(insts: &[MInst]) -> bool {
    insts.iter().enumerate().all(|(k, m)| {
        !class_of_form(m.pieces[0].form()).variable()
            && copy_source(m).is_none_or(|(o, _)| {
                let src = m.opnds[o].vreg;
                !insts[k + 1..].iter().any(|n| n.opnds.iter().any(|p| p.kind == OpKind::Use && p.vreg == src))
            })
    })
}

/// Into `on_cycle`, per block, whether it may lie on a cycle of the control
/// flow: every block between the target and the source of an edge that
/// does not go forward in the block order. (Any cycle has such edges, and
/// their spans cover it: walking down from the cycle's last block to its
/// first, every block in between is passed by some backward step.)
fn cyclic_blocks(blocks: &[VBlock], on_cycle: &mut Vec<bool>) {
    let n = blocks.len();
    on_cycle.clear();
    on_cycle.resize(n, false);
    // Most functions have no backward edge.
    if !crate::ir::cfg::has_backward_edge(blocks) {
        return;
    }
    // Spans as a difference array: +1 where one starts, -1 after it ends.
    let mut depth = vec![0i32; n + 1];
    for (b, blk) in blocks.iter().enumerate() {
        for s in blk.succs.iter().map(|s| s.0 as usize).filter(|&s| s <= b) {
            depth[s] += 1;
            depth[b + 1] -= 1;
        }
    }
    let mut d = 0;
    for (b, c) in on_cycle.iter_mut().enumerate() {
        d += depth[b];
        *c = d > 0;
    }
}

/// The tables of the dependence-graph construction.
#[derive(Default)]
struct Graph {
    /// Per virtual register: its local number in the region, or [`NONE`].
    local: Vec<u32>,
    /// Per local register: the virtual register, its last writer and readers.
    vregs: Vec<VReg>,
    vlast: Vec<Last>,
    /// Per physical register slot (`preg_slot`): its last writer and
    /// readers, valid when `pstamp` holds the region's stamp.
    plast: Vec<Last>,
    pstamp: Vec<u32>,
    stamp: u32,
    mem: Vec<(usize, Access)>,
}

impl Graph {
    /// The local number of `v`, numbered on first sight.
    fn id(&mut self, v: VReg) -> u32 {
        let slot = &mut self.local[v.0 as usize];
        if *slot == NONE {
            *slot = self.vregs.len() as u32;
            self.vregs.push(v);
            if self.vlast.len() < self.vregs.len() {
                self.vlast.push(Last::default());
            } else {
                self.vlast[self.vregs.len() - 1].clear();
            }
        }
        *slot
    }

    fn plast(&mut self, x: (RegFile, u32)) -> &mut Last {
        let k = preg_slot(x);
        if self.pstamp[k] != self.stamp {
            self.pstamp[k] = self.stamp;
            self.plast[k].clear();
        }
        &mut self.plast[k]
    }
}

/// Empties `v` and makes it `n` long, keeping the storage of its elements.
fn refill<T: Default>(v: &mut Vec<T>, n: usize, clear: impl Fn(&mut T)) {
    v.truncate(n);
    v.iter_mut().for_each(clear);
    v.resize_with(n, T::default);
}

/// Builds into `reg` the dependence graph of `insts` (a region: no fixed
/// instruction). `params` lists the values this block passes as block
/// arguments with the parameters they become, sorted by value.
#[allow(clippy::too_many_arguments)]
fn region(
    g: &mut Graph,
    reg: &mut Region,
    classes: &[Class],
    insts: &[MInst],
    roles: &[Role],
    params: &[(VReg, VReg)],
    start: Pressure,
    live_after: impl Fn(VReg) -> bool,
) {
    let n = insts.len();
    if g.local.len() < classes.len() {
        g.local.resize(classes.len(), NONE);
    }
    if g.plast.is_empty() {
        g.plast.resize_with(4 * PREG_FILE, Last::default);
        g.pstamp.resize(4 * PREG_FILE, 0);
    }
    g.stamp = g.stamp.wrapping_add(1);
    if g.stamp == 0 {
        g.pstamp.iter_mut().for_each(|s| *s = NONE);
        g.stamp = 1;
    }
    for &v in &g.vregs {
        g.local[v.0 as usize] = NONE;
    }
    g.vregs.clear();
    g.mem.clear();
    let Region { nodes, reads, writes, succs, npreds, height, size, uses, live_after: after, start: reg_start } = reg;
    *reg_start = start;
    nodes.truncate(n);
    nodes.resize_with(n, Node::default);
    refill(reads, n, |r| r.clear());
    refill(writes, n, |w| w.clear());
    // Each node, its registers' local numbers (first seen first) and the
    // reads of each register, in one pass.
    uses.clear();
    for (j, ((m, &r), nd)) in insts.iter().zip(roles).zip(nodes.iter_mut()).enumerate() {
        node(m, r, nd);
        for &v in &nd.reads {
            let id = g.id(v);
            if id as usize == uses.len() {
                uses.push(0);
            }
            uses[id as usize] += 1;
            reads[j].push(id);
        }
        for &v in nd.writes.iter().filter(|v| !nd.reads.contains(v)) {
            let id = g.id(v);
            if id as usize == uses.len() {
                uses.push(0);
            }
            writes[j].push(id);
        }
    }
    refill(succs, n, |s| s.clear());
    npreds.clear();
    npreds.resize(n, 0);
    let mut edge = |a: usize, b: usize, lat: u32| {
        if a != b {
            succs[a].push((b as u32, lat));
            npreds[b] += 1;
        }
    };
    for (j, nd) in nodes.iter().enumerate() {
        for &id in &reads[j] {
            let l = &mut g.vlast[id as usize];
            l.read(j, nodes, &mut edge);
            // (Only the block-argument rule reads them.)
            if !params.is_empty() {
                l.all_readers.push(j);
            }
        }
        for &x in &nd.preg_reads {
            g.plast(x).read(j, nodes, &mut edge);
        }
        // Memory order (the base's version read before this instruction's writes).
        let (m, r) = (&insts[j], roles[j]);
        if let Role::Load(space) | Role::Store(space) = r {
            let acc = access(m, space, r, g);
            for &(i, ref a) in &g.mem {
                if a.conflicts(&acc) {
                    edge(i, j, 1);
                }
            }
            g.mem.push((j, acc));
        } else if r == Role::Atomic {
            let acc = Access { space: Space::Generic, atomic: true, store: true, base: None, lo: 0, hi: 0 };
            for &(i, _) in &g.mem {
                edge(i, j, 1);
            }
            g.mem.push((j, acc));
        }
        for &v in &nd.writes {
            // After the reads of the parameters this value becomes.
            let from = params.partition_point(|&(a, _)| a < v);
            for &(_, p) in params[from..].iter().take_while(|&&(a, _)| a == v) {
                let lp = g.local.get(p.0 as usize).copied().unwrap_or(NONE);
                if lp != NONE {
                    for &i in &g.vlast[lp as usize].all_readers {
                        edge(i, j, 0);
                    }
                }
            }
            let id = g.local[v.0 as usize];
            g.vlast[id as usize].write(j, &mut edge);
        }
        for &x in &nd.preg_writes {
            g.plast(x).write(j, &mut edge);
        }
    }
    // Heights, from the end (edges only go forward).
    height.clear();
    height.resize(n, 0);
    for i in (0..n).rev() {
        let mut h = nodes[i].lat;
        for &(s, lat) in &succs[i] {
            h = h.max(lat + height[s as usize]);
        }
        height[i] = h;
    }
    size.clear();
    size.extend(g.vregs.iter().map(|v| Pressure::of(classes[v.0 as usize])));
    after.clear();
    after.extend(g.vregs.iter().map(|&v| live_after(v)));
}

/// The access of load or store `m`.
fn access(m: &MInst, space: Space, r: Role, g: &Graph) -> Access {
    let p = &m.pieces[0];
    let form = p.form();
    let base = fields::RA.place(form).and_then(|ra| {
        m.fixups.iter().find(|f| f.piece == 0 && f.field as usize == ra).map(|f| {
            let v = m.opnds[f.opnd as usize].vreg;
            let version = match g.local.get(v.0 as usize) {
                Some(&id) if id != NONE => g.vlast[id as usize].writer.map_or(0, |w| w as u32 + 1),
                _ => 0,
            };
            (v, f.hi, version)
        })
    });
    // An address field holding a physical register other than RZ: unknown.
    let unknown = base.is_none() && fields::RA.place(form).is_some_and(|ra| p.get_at(ra) != RZ as u64);
    let ofs = fields::OFS.place(form).map_or(0, |k| crate::mid::sign_extend(p.get_at(k), p.def().fields[k].width as u32));
    let data = if matches!(r, Role::Load(_)) { fields::RD.place(form) } else { fields::RB.place(form) };
    let bytes = data.map_or(16, |k| p.def().bitwidth_of(k, p.values()) as i64 / 8).max(1);
    let store = matches!(r, Role::Store(_));
    if unknown {
        return Access { space, atomic: false, store, base: Some((VReg(u32::MAX), false, u32::MAX)), lo: i64::MIN / 2, hi: i64::MAX / 2 };
    }
    Access { space, atomic: false, store, base, lo: ofs, hi: ofs + bytes }
}

/// Reorders the instructions of every block (see the module's text);
/// returns how many regions changed order.
pub fn opt_instr_sched_prepass(vcode: &mut VCode) -> usize {
    opt_instr_sched_prepass_live(vcode).0
}

/// [`opt_instr_sched_prepass`], also returning the block liveness of the
/// code (the same before and after: instructions move only within their
/// block, after what they depend on), for `assign_regs_ssa_after`.
pub fn opt_instr_sched_prepass_live(vcode: &mut VCode) -> (usize, VLiveness) {
    thread_local! {
        static SCRATCH: RefCell<Scratch> = RefCell::default();
    }
    let mut live = take_liveness();
    block_liveness(vcode, &mut live);
    let changed = SCRATCH.with(|s| match s.try_borrow_mut() {
        Ok(mut s) => schedule_function(vcode, &live, &mut s),
        Err(_) => schedule_function(vcode, &live, &mut Scratch::default()),
    });
    (changed, live)
}

fn schedule_function(vcode: &mut VCode, live: &VLiveness, sc: &mut Scratch) -> usize {
    let nb = vcode.blocks.len();
    let nv = vcode.classes.len();
    let Scratch { live_set, first, before, last_read, epoch, args, roles, graph, region: reg, list, order, on_cycle, ready_at, stamp } = sc;
    let VCode { blocks, classes, .. } = vcode;
    let classes: &[Class] = classes;
    if last_read.len() < nv {
        last_read.resize(nv, (0, 0));
    }
    cyclic_blocks(blocks, on_cycle);
    // The pressure tables, made when a first region is to be scheduled
    // (before any block changed).
    let mut budget = None;
    let mut changed = 0;
    for bi in 0..nb {
        // The block's regions to schedule.
        roles.clear();
        roles.extend(blocks[bi].insts.iter().map(role));
        let insts = &blocks[bi].insts;
        let mut spans: SmallVec<[(usize, usize, bool); 8]> = SmallVec::new();
        let mut s = 0;
        while s < insts.len() {
            if roles[s] == Role::Fixed {
                s += 1;
                continue;
            }
            let end = (s..insts.len()).find(|&k| roles[k] == Role::Fixed).unwrap_or(insts.len()).min(s + WINDOW);
            // (A short region of fixed-latency work outside loops keeps
            // its order, and so does one that issues without a stall: see
            // the module's text.)
            let fixed = only_fixed_latency_work(&insts[s..end]);
            let keeps = !on_cycle[bi] && fixed && (end - s < SHORT_REGION || issues_without_stall(&insts[s..end], ready_at, stamp));
            if end - s >= 2 && !keeps {
                spans.push((s, end, fixed));
            }
            s = end;
        }
        if spans.is_empty() {
            continue;
        }
        let budget = *budget.get_or_insert_with(|| {
            let b = pressure_before(blocks, classes, live, live_set, first, before);
            Pressure { r: b.r, p: b.p.max(PREDICATE_BUDGET) }
        });
        block_arg_params(blocks, bi, args);
        let b = &mut blocks[bi];
        // The last read of each register in the block, in the original order.
        *epoch = epoch.wrapping_add(1);
        if *epoch == 0 {
            last_read.iter_mut().for_each(|e| *e = (0, 0));
            *epoch = 1;
        }
        for (i, m) in b.insts.iter().enumerate() {
            for v in m.opnds.iter().filter(|o| o.kind == OpKind::Use).map(|o| o.vreg).chain(m.args().iter().flatten().copied()) {
                last_read[v.0 as usize] = (*epoch, i as u32);
            }
        }
        let before = &before[first[bi]..];
        let live_out = live.sets.live_out(bi);
        for (s, end, fixed) in spans {
            let (last_read, epoch) = (&*last_read, *epoch);
            let live_after = |v: VReg| {
                live_out.binary_search(&v.0).is_ok() || {
                    let (e, k) = last_read[v.0 as usize];
                    e == epoch && k as usize >= end
                }
            };
            region(graph, reg, classes, &b.insts[s..end], &roles[s..end], args, before[s], live_after);
            if reg.is_chain() {
                // One instruction ready at a time: the schedule is the
                // original order.
                continue;
            }
            // Fixed-latency work in the order of each instruction's earliest
            // cycle (the lanes of vector code step by step: every lane's
            // first instruction, then every lane's second, …) that issues
            // without a stall and stays within the budget is a best
            // schedule, found without the list scheduler's search.
            if fixed && reg.stall_free_steps(order, &mut list.earliest) && reg.fits(order, budget, &mut list.left) {
                if permute(&mut b.insts[s..end], order) {
                    changed += 1;
                }
                continue;
            }
            // A greedy schedule may corner itself above the budget: tried
            // again with the budget lowered, so that the scheduler turns
            // to pressure-reducing choices sooner (below `ONE_TRY_FROM`).
            let tries = if end - s >= ONE_TRY_FROM { 0 } else { 2 };
            let found = (0..=tries).any(|margin| reg.schedule(Pressure { r: budget.r - margin, p: budget.p }, budget, list, order))
                || reg.keep_what_fits(order, budget, list);
            if found && permute(&mut b.insts[s..end], order) {
                changed += 1;
            }
        }
    }
    changed
}

/// Per block, backward: the pressure before each instruction in the current
/// order (`before`, block `b`'s from `first[b]`; `live_set` working memory,
/// reset to the function's registers). Returns the function's highest
/// pressure, also counting the results an instruction writes beside what is
/// live across it.
pub(crate) fn pressure_before(
    blocks: &[VBlock],
    classes: &[Class],
    live: &VLiveness,
    live_set: &mut BitSet<u32, Vec<u64>>,
    first: &mut Vec<usize>,
    before: &mut Vec<Pressure>,
) -> Pressure {
    live_set.reset(classes.len());
    let mut budget = Pressure::default();
    first.clear();
    before.clear();
    for (bi, b) in blocks.iter().enumerate() {
        live_set.clear();
        let mut cur = Pressure::default();
        for &v in live.sets.live_out(bi) {
            live_set.insert(v);
            cur.add(Pressure::of(classes[v as usize]));
        }
        budget = budget.max(cur);
        first.push(before.len());
        before.resize(before.len() + b.insts.len(), Pressure::default());
        let mine = &mut before[first[bi]..];
        for (i, m) in b.insts.iter().enumerate().rev() {
            let mut during = cur;
            for o in m.opnds.iter().filter(|o| o.kind != OpKind::Use) {
                if !live_set.contains(o.vreg.0) {
                    during.add(Pressure::of(classes[o.vreg.0 as usize]));
                }
            }
            for o in m.opnds.iter().filter(|o| o.kind != OpKind::Use) {
                if live_set.remove(o.vreg.0) {
                    cur.sub(Pressure::of(classes[o.vreg.0 as usize]));
                }
            }
            for v in m.opnds.iter().filter(|o| o.kind == OpKind::Use).map(|o| o.vreg).chain(m.args().iter().flatten().copied()) {
                if live_set.insert(v.0) {
                    cur.add(Pressure::of(classes[v.0 as usize]));
                }
            }
            budget = budget.max(during).max(cur);
            mine[i] = cur;
        }
    }
    budget
}

/// Puts `order[k]`'s instruction at place `k` by swaps along the cycles of
/// the permutation; returns whether anything moved.
fn permute(insts: &mut [MInst], order: &[u32]) -> bool {
    if order.iter().enumerate().all(|(k, &i)| k == i as usize) {
        return false;
    }
    let mut moved = false;
    let mut done = vec![false; order.len()];
    for k in 0..order.len() {
        if done[k] || order[k] as usize == k {
            continue;
        }
        moved = true;
        let mut cur = k;
        loop {
            done[cur] = true;
            let next = order[cur] as usize;
            if next == k {
                break;
            }
            insts.swap(cur, next);
            cur = next;
        }
    }
    moved
}

/// Into `out`: the values block `b` passes as block arguments, with the
/// parameters they become, sorted by value.
fn block_arg_params(blocks: &[VBlock], b: usize, out: &mut Vec<(VReg, VReg)>) {
    out.clear();
    for m in blocks[b].insts.iter().filter(|m| m.is_terminator()) {
        for (t, args) in m.targets().iter().zip(m.args().iter()) {
            for (a, p) in args.iter().zip(blocks[t.0 as usize].params.iter()) {
                out.push((*a, *p));
            }
        }
    }
    out.sort_by_key(|&(a, _)| a.0);
}

#[cfg(test)]
mod tests {
    use super::*;
    use ursa_emit::forms::{self, IADD_RR, LDG_RI, LDS_RI, MOV_I, STG_RIR};
    use ursa_isel::vcode::{BlockId, Bundle};

    thread_local! {
        /// A threshold for [`heaps_from`] on this thread.
        pub(super) static HEAPS_FROM_HERE: std::cell::Cell<Option<usize>> = const { std::cell::Cell::new(None) };
        /// How many schedules over the budget kept a beginning on this thread
        /// ([`Region::keep_what_fits`]).
        pub(super) static KEPT_HERE: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
    }

    fn vcode(insts: Vec<MInst>, classes: Vec<Class>) -> VCode {
        let mut insts = insts;
        insts.push(Bundle::pseudo(Pseudo::Exit).build());
        VCode { blocks: vec![VBlock { insts, ..Default::default() }], classes, ..Default::default() }
    }

    /// `vcode` behind a call that reads `n` more values (numbered from
    /// `first`) for the last time: the function's highest pressure is
    /// before the call, so the code after it has registers to spare.
    fn with_slack(insts: Vec<MInst>, mut classes: Vec<Class>, n: u32) -> VCode {
        let first = classes.len() as u32;
        classes.extend((0..n).map(|_| Class::R));
        let mut call = Bundle::pseudo(Pseudo::Call);
        for k in 0..n {
            call = call.fixed(VReg(first + k), OpKind::Use, 4 + k as u8);
        }
        let mut all = vec![call.build()];
        all.extend(insts);
        vcode(all, classes)
    }

    fn add(d: VReg, a: VReg, b: VReg) -> MInst {
        Bundle::new().inst(forms::IADD_RR).def(IADD_RR::RD, d).use_(IADD_RR::RA, a).use_(IADD_RR::RB, b).build()
    }

    fn ldg(d: VReg, p: VReg, ofs: u64) -> MInst {
        Bundle::new().inst(forms::LDG_RI).def(LDG_RI::RD, d).use_(LDG_RI::RA, p).set(LDG_RI::OFS, ofs).build()
    }

    fn lds(d: VReg, p: VReg) -> MInst {
        Bundle::new().inst(forms::LDS_RI).def(LDS_RI::RD, d).use_(LDS_RI::RA, p).build()
    }

    fn stg(p: VReg, ofs: u64, x: VReg) -> MInst {
        Bundle::new().inst(forms::STG_RIR).use_(STG_RIR::RA, p).set(STG_RIR::OFS, ofs).use_(STG_RIR::RB, x).build()
    }

    /// The mnemonic lines of the block, in order.
    fn lines(v: &VCode) -> Vec<String> {
        v.to_string().lines().filter(|l| l.starts_with("    ") && !l.starts_with("    ;")).map(|l| l.trim().to_string()).collect()
    }

    fn first(lines: &[String], what: &str) -> usize {
        lines.iter().position(|l| l.starts_with(what)).unwrap_or_else(|| panic!("no {} in {:?}", what, lines))
    }

    #[test]
    fn independent_loads_go_above_alu_work() {
        let mut v = loads_and_chain();
        assert_eq!(opt_instr_sched_prepass(&mut v), 1, "{}", v);
        let l = lines(&v);
        assert_eq!(first(&l, "LDG"), 0, "{:?}", l);
        assert_eq!(l[1].split_whitespace().next(), Some("LDG"), "the loads are issued together: {:?}", l);
        // The sum of the loads waits for them: after the ALU chain.
        assert!(first(&l, "IADD v9") > first(&l, "IADD v6"), "{:?}", l);
    }

    #[test]
    fn a_load_does_not_pass_a_store_it_may_alias() {
        use Class::{RPair as W, R};
        let (x, p, q, l1, l2, l3, s, t, u) = (VReg(0), VReg(1), VReg(2), VReg(3), VReg(4), VReg(5), VReg(6), VReg(7), VReg(8));
        // x + x, stored through p, then loads through q (may alias), through
        // p 8 bytes on (disjoint) and from shared memory (another space).
        let code = vec![add(s, x, x), stg(p, 0, s), ldg(l1, q, 0), ldg(l2, p, 8), lds(l3, x), add(t, l1, l2), add(u, t, l3), stg(q, 0, u)];
        let mut v = with_slack(code, vec![R, W, W, R, R, R, R, R, R], 4);
        opt_instr_sched_prepass(&mut v);
        let l = lines(&v);
        let store = first(&l, "STG");
        assert!(first(&l, "LDG v3") > store, "a load through another base stays after the store: {:?}", l);
        assert!(first(&l, "LDG v4") < store, "a disjoint load through the same base passes it: {:?}", l);
        assert!(first(&l, "LDS") < store, "a shared load passes a global store: {:?}", l);
    }

    #[test]
    fn a_schedule_over_the_register_budget_keeps_the_original_order() {
        use Class::{RPair as W, R};
        // acc = ((x + [p]) + [p+4]) + [p+8]: each load used at once and dead
        // after. Issuing the loads together would keep three values live
        // where the original order keeps one.
        let (x, p, l1, l2, l3, a1, a2, a3) = (VReg(0), VReg(1), VReg(2), VReg(3), VReg(4), VReg(5), VReg(6), VReg(7));
        let code = vec![ldg(l1, p, 0), add(a1, x, l1), ldg(l2, p, 4), add(a2, a1, l2), ldg(l3, p, 8), add(a3, a2, l3), stg(p, 12, a3)];
        let mut v = vcode(code, vec![R, W, R, R, R, R, R, R]);
        let before = lines(&v);
        assert_eq!(opt_instr_sched_prepass(&mut v), 0, "{}", v);
        assert_eq!(lines(&v), before);
    }

    /// A chain a, b, c of ALU work, then two loads summed; all stored.
    fn loads_and_chain() -> VCode {
        use Class::{RPair as W, R};
        let (x, y, p, q, a, b, c, l1, l2, s) = (VReg(0), VReg(1), VReg(2), VReg(3), VReg(4), VReg(5), VReg(6), VReg(7), VReg(8), VReg(9));
        let code = vec![add(a, x, y), add(b, a, y), add(c, b, a), ldg(l1, p, 0), ldg(l2, q, 0), add(s, l1, l2), stg(p, 0, s), stg(q, 0, c)];
        with_slack(code, vec![R, R, W, W, R, R, R, R, R, R], 4)
    }

    #[test]
    fn the_working_memory_kept_from_other_functions_changes_no_schedule() {
        use Class::R;
        // Scheduled on a fresh thread: nothing left from earlier functions.
        let fresh = std::thread::spawn(|| {
            let mut v = loads_and_chain();
            opt_instr_sched_prepass(&mut v);
            lines(&v)
        })
        .join()
        .expect("the scheduling thread");
        // Here after a function with more registers, whose tables (local
        // numbers, last readers, the physical registers' entries) the pass
        // keeps; then the same function twice.
        let big: Vec<MInst> = (0..40).map(|k| add(VReg(40 + k), VReg(k), VReg(k + 1))).collect();
        let mut other = with_slack(big, vec![R; 80], 2);
        opt_instr_sched_prepass(&mut other);
        for _ in 0..2 {
            let mut v = loads_and_chain();
            opt_instr_sched_prepass(&mut v);
            assert_eq!(lines(&v), fresh);
        }
    }

    fn mov(d: VReg, k: u64) -> MInst {
        Bundle::new().inst(forms::MOV_I).def(MOV_I::RD, d).set(MOV_I::VB, k).build()
    }

    /// A long region of loads, constants and sums over earlier values,
    /// drawn from `seed`, with a tight or a loose register budget.
    fn random_region(seed: u64, len: usize, slack: u32) -> VCode {
        use Class::{RPair as W, R};
        let mut state = seed;
        let mut next = |m: u64| {
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (state >> 33) % m
        };
        // v0: a pointer; v1..=4: values live in.
        let mut classes = vec![W, R, R, R, R];
        let mut code = Vec::new();
        for _ in 0..len {
            let d = VReg(classes.len() as u32);
            classes.push(R);
            let pick = |k: u64| VReg(1 + k as u32);
            let avail = d.0 as u64 - 1;
            code.push(match next(4) {
                0 => ldg(d, VReg(0), 4 * next(64)),
                1 => mov(d, next(1000)),
                _ => add(d, pick(next(avail)), pick(next(avail))),
            });
        }
        let last = VReg(classes.len() as u32 - 1);
        code.push(stg(VReg(0), 0, last));
        with_slack(code, classes, slack)
    }

    #[test]
    fn the_heaps_choose_what_the_scan_of_the_ready_list_chooses() {
        let mut reordered = 0;
        for seed in 0..40 {
            for (len, slack) in [(40, 0), (120, 2), (300, 8)] {
                let schedule = |from: usize| {
                    HEAPS_FROM_HERE.set(Some(from));
                    let mut v = random_region(seed, len, slack);
                    let changed = opt_instr_sched_prepass(&mut v);
                    HEAPS_FROM_HERE.set(None);
                    (changed, lines(&v))
                };
                let (scan, heaps) = (schedule(usize::MAX), schedule(0));
                assert_eq!(scan, heaps, "seed {} length {}", seed, len);
                reordered += usize::from(scan.0 > 0);
            }
        }
        assert!(reordered > 60, "most of the regions are reordered: {}", reordered);
    }

    /// The highest pressure of `v`'s code in its order.
    fn highest_pressure(v: &VCode) -> Pressure {
        let mut live = VLiveness::default();
        block_liveness(v, &mut live);
        let (mut set, mut first, mut before) = (BitSet::default(), Vec::new(), Vec::new());
        pressure_before(&v.blocks, &v.classes, &live, &mut set, &mut first, &mut before)
    }

    #[test]
    fn the_packed_choice_over_the_budget_orders_as_its_tuple() {
        // Rises and times at their extremes and around zero, both flags and
        // both places: the packed keys order exactly as the tuples do.
        let ints = [i32::MIN, -70000, -3, -1, 0, 1, 2, 65536, i32::MAX];
        let times = [0u32, 1, 7, 1 << 31, u32::MAX];
        let mut keys = Vec::new();
        for over in [false, true] {
            for lazy in [false, true] {
                for &rise in &ints {
                    for &soon in &times {
                        for i in [0u32, 5, u32::MAX] {
                            let (a, b) = if over { (i64::from(rise), i64::from(soon)) } else { (i64::from(soon), i64::from(rise)) };
                            keys.push(((over, lazy, a, b, i), over_budget_key(over, lazy, a, b, i)));
                        }
                    }
                }
            }
        }
        for x in &keys {
            for y in &keys {
                assert_eq!(x.0.cmp(&y.0), x.1.cmp(&y.1), "{:?} against {:?}", x.0, y.0);
            }
        }
    }

    #[test]
    fn a_schedule_over_the_budget_keeps_a_beginning_that_fits() {
        // `smulhi.i64`: the list schedule of its product goes over the
        // budget; a beginning of it with the rest in order stays within it
        // and is kept (`tests/filetests/mul/mulhi.clif` runs the code).
        let f = cranelift_reader::parse_functions(
            "function %smulhi_i64(i64, i64) -> i64 {\nblock0(v0: i64, v1: i64):\n    v2 = smulhi v0, v1\n    return v2\n}",
        )
        .unwrap()
        .remove(0);
        KEPT_HERE.set(0);
        crate::compile(&f, &crate::Options::default()).expect("smulhi.i64 compiles");
        assert!(KEPT_HERE.get() > 0, "no schedule kept a beginning");
        // And where the random regions of the heaps test go over it, what is
        // kept writes every register before it is read and does not raise
        // the highest pressure.
        for seed in 0..40 {
            for (len, slack) in [(24, 0), (40, 0), (80, 1)] {
                let mut v = random_region(seed, len, slack);
                let highest = highest_pressure(&v);
                opt_instr_sched_prepass(&mut v);
                let after = highest_pressure(&v);
                assert!(after.r <= highest.r && after.p <= highest.p, "seed {} length {}: {:?} -> {:?}", seed, len, highest, after);
            }
        }
    }

    fn copy(d: VReg, a: VReg) -> MInst {
        Bundle::new().inst(forms::MOV_R).def(forms::MOV_R::RD, d).use_(forms::MOV_R::RB, a).build()
    }

    /// Two chains of two adds, one after the other, their ends read by a
    /// call (`first`: instructions before them): the list scheduler
    /// interleaves the chains.
    fn two_chains(first: Vec<MInst>) -> VCode {
        use Class::{RPair as W, R};
        let (x, y, p, a1, a2, b1, b2) = (VReg(0), VReg(1), VReg(2), VReg(3), VReg(4), VReg(5), VReg(6));
        let mut code = first;
        code.extend([add(a1, x, y), add(a2, a1, y), add(b1, y, y), add(b2, b1, b1)]);
        let mut v = with_slack(code, vec![R, R, W, R, R, R, R, R], 6);
        // The chains' ends go to a call (an instruction that keeps its place).
        let end = Bundle::pseudo(Pseudo::Call).fixed(a2, OpKind::Use, 4).fixed(b2, OpKind::Use, 5).fixed(p, OpKind::Use, 6).build();
        let exit = v.blocks[0].insts.len() - 1;
        v.blocks[0].insts.insert(exit, end);
        v
    }

    #[test]
    fn a_short_region_of_fixed_latency_work_keeps_its_order_outside_loops() {
        let mut v = two_chains(Vec::new());
        let before = lines(&v);
        assert_eq!(opt_instr_sched_prepass(&mut v), 0, "{}", v);
        assert_eq!(lines(&v), before);
        // The same block on a cycle (a branch back to itself): scheduled.
        let mut v = two_chains(Vec::new());
        v.blocks[0].succs = vec![BlockId(0)];
        v.blocks[0].preds = vec![BlockId(0)];
        assert_eq!(opt_instr_sched_prepass(&mut v), 1, "{}", v);
        let l = lines(&v);
        assert!(first(&l, "IADD v5") < first(&l, "IADD v4"), "the chains interleave: {:?}", l);
        // A copy whose source is read after it: scheduled too (the copy
        // can go after the reads and share its source's register).
        let mut v = two_chains(vec![copy(VReg(7), VReg(1))]);
        v.classes.push(Class::R);
        assert_eq!(opt_instr_sched_prepass(&mut v), 1, "{}", v);
    }

    /// Five chains of two adds (ten instructions, a region longer than
    /// `SHORT_REGION`) outside loops, their ends read by a call: chain by
    /// chain, or the five first adds before the five second ones.
    fn five_chains(interleaved: bool) -> VCode {
        let (x, y) = (VReg(0), VReg(1));
        let firsts: Vec<VReg> = (0..5).map(|k| VReg(2 + k)).collect();
        let seconds: Vec<VReg> = (0..5).map(|k| VReg(7 + k)).collect();
        let mut code = Vec::new();
        if interleaved {
            code.extend((0..5).map(|k| add(firsts[k], x, y)));
            code.extend((0..5).map(|k| add(seconds[k], firsts[k], y)));
        } else {
            code.extend((0..5).flat_map(|k| [add(firsts[k], x, y), add(seconds[k], firsts[k], y)]));
        }
        let mut v = with_slack(code, vec![Class::R; 12], 6);
        read_at_the_end(&mut v, &seconds);
        v
    }

    /// A call before the block's exit that reads `values` (in `R4`, `R5`, …).
    fn read_at_the_end(v: &mut VCode, values: &[VReg]) {
        let mut end = Bundle::pseudo(Pseudo::Call);
        for (k, &d) in values.iter().enumerate() {
            end = end.fixed(d, OpKind::Use, 4 + k as u8);
        }
        let exit = v.blocks[0].insts.len() - 1;
        v.blocks[0].insts.insert(exit, end.build());
    }

    #[test]
    fn a_region_that_issues_without_a_stall_keeps_its_order() {
        // The five first adds (4 cycles of latency each) before the five
        // second ones: every operand is ready when its reader issues.
        let mut v = five_chains(true);
        let before = lines(&v);
        let (mut ready_at, mut stamp) = (Vec::new(), 0);
        let region = &v.blocks[0].insts[1..11];
        assert!(issues_without_stall(region, &mut ready_at, &mut stamp));
        assert_eq!(opt_instr_sched_prepass(&mut v), 0, "{}", v);
        assert_eq!(lines(&v), before);
        // Chain by chain, each second add waits for its first: the region
        // is scheduled, and the chains interleave.
        let mut v = five_chains(false);
        assert!(!issues_without_stall(&v.blocks[0].insts[1..11], &mut ready_at, &mut stamp));
        assert_eq!(opt_instr_sched_prepass(&mut v), 1, "{}", v);
        let l = lines(&v);
        assert!(first(&l, "IADD v3") < first(&l, "IADD v7"), "the chains interleave: {:?}", l);
    }

    #[test]
    fn fixed_latency_chains_go_step_by_step_where_that_issues_without_a_stall() {
        // Chain by chain in; out, every chain's first add, then every
        // chain's second: the order of each instruction's earliest cycle,
        // which issues without a stall and fits the budget.
        let mut v = five_chains(false);
        assert_eq!(opt_instr_sched_prepass(&mut v), 1, "{}", v);
        assert_eq!(lines(&v), lines(&five_chains(true)));
        // Four single adds, then four chains of two, chain by chain: the
        // single adds stay first (the list scheduler would put the chains'
        // first adds, on the longer paths, before them).
        let (x, y) = (VReg(0), VReg(1));
        let single: Vec<VReg> = (2..6).map(VReg).collect();
        let firsts: Vec<VReg> = (6..10).map(VReg).collect();
        let seconds: Vec<VReg> = (10..14).map(VReg).collect();
        let mut code: Vec<MInst> = single.iter().map(|&d| add(d, x, y)).collect();
        code.extend((0..4).flat_map(|k| [add(firsts[k], x, y), add(seconds[k], firsts[k], y)]));
        let mut v = with_slack(code, vec![Class::R; 14], 8);
        read_at_the_end(&mut v, &[&single[..], &seconds[..]].concat());
        assert_eq!(opt_instr_sched_prepass(&mut v), 1, "{}", v);
        let l = lines(&v);
        let at = |d: VReg| first(&l, &format!("IADD {}", d));
        assert!(at(single[3]) < at(firsts[0]) && at(firsts[3]) < at(seconds[0]), "{:?}", l);
    }

    /// Lane by lane, `a_k == b_k` into a predicate and a SEL of it: one
    /// predicate live at a time in this order.
    fn compare_lanes(n: u32) -> VCode {
        use ursa_emit::forms::{ISETP_RR, SEL_RI};
        use ursa_emit::typed::P;
        let x = VReg(0);
        let mut classes = vec![Class::R];
        let mut code = Vec::new();
        let mut results = Vec::new();
        for k in 0..n {
            let (a, p, d) = (VReg(1 + 3 * k), VReg(2 + 3 * k), VReg(3 + 3 * k));
            classes.extend([Class::R, Class::P, Class::R]);
            code.push(add(a, x, x));
            code.push(
                Bundle::new()
                    .inst(forms::ISETP_RR)
                    .set(ursa_emit::optypes::ISETP::COMPOP, ursa_emit::mods::CompOp::EQ)
                    .set(ursa_emit::optypes::ISETP::BOOLOP, ursa_emit::mods::BoolOp::AND)
                    .set(ursa_emit::optypes::ISETP::PP, P::T)
                    .def(ISETP_RR::PU, p)
                    .use_(ISETP_RR::RA, a)
                    .use_(ISETP_RR::RB, x)
                    .build(),
            );
            code.push(
                Bundle::new().inst(forms::SEL_RI).def(SEL_RI::RD, d).use_(SEL_RI::RA, x).set(SEL_RI::VB, 1).use_(SEL_RI::PP, p).build(),
            );
            results.push(d);
        }
        let mut v = with_slack(code, classes, 8);
        read_at_the_end(&mut v, &results);
        v
    }

    #[test]
    fn compares_of_several_lanes_keep_several_predicates_live() {
        // Written lane by lane the code needs one predicate; the schedule may
        // keep up to `PREDICATE_BUDGET` live, so the second lane's compare
        // comes before the first lane's SEL (which waits for its compare).
        let mut v = compare_lanes(3);
        assert_eq!(opt_instr_sched_prepass(&mut v), 1, "{}", v);
        let l = lines(&v);
        let compares: Vec<usize> = l.iter().enumerate().filter(|(_, x)| x.starts_with("ISETP")).map(|(i, _)| i).collect();
        assert!(compares[1] < first(&l, "SEL"), "{:?}", l);
    }

    #[test]
    fn blocks_between_a_backward_edge_s_ends_may_lie_on_a_cycle() {
        let block = |succs: &[u32]| VBlock { succs: succs.iter().map(|&s| BlockId(s)).collect(), ..Default::default() };
        let mut out = Vec::new();
        // 0 -> 1 -> 2 -> 3 -> 1 (a loop of 1..=3), 3 -> 4; and 4 -> 4.
        cyclic_blocks(&[block(&[1]), block(&[2]), block(&[3]), block(&[1, 4]), block(&[4, 5]), block(&[])], &mut out);
        assert_eq!(out, [false, true, true, true, true, false]);
        cyclic_blocks(&[block(&[1]), block(&[2]), block(&[])], &mut out);
        assert_eq!(out, [false; 3]);
    }

    #[test]
    fn every_optype_has_a_role_and_unknown_ones_stay_fixed() {
        let roles: Vec<(String, Role)> = ISA.optypes.iter().map(|o| (o.name.to_string(), optype_role(&o.name))).collect();
        for name in ["BAR", "MEMBAR", "VOTE", "SHFL", "BSSY", "BSYNC", "BMOV", "CALL", "SETGPR", "GETUGPR", "NOP"] {
            assert!(roles.iter().any(|(n, r)| n == name && *r == Role::Fixed), "{} is fixed", name);
        }
        assert_eq!(optype_role("no such optype"), Role::Fixed);
        // Memory accesses are loads, stores or atomics, by name.
        for (n, r) in &roles {
            let memory = matches!(r, Role::Load(_) | Role::Store(_) | Role::Atomic);
            assert_eq!(
                memory,
                ["LDG", "LDS", "LDL", "LD", "STG", "STS", "STL", "ST", "ATOM", "ATOMS", "RED"].contains(&n.as_str()),
                "{}",
                n
            );
        }
    }
}
