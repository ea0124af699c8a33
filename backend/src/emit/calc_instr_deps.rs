//! Fills the scheduling control bits (`stall`, `yield`, `wsb`, `req`) so that
//! every instruction reads and writes registers only once their producers
//! are done, under the rules of `docs/latencies.md` (which the simulator's
//! strict mode checks). The policy is described there ("The compiler's
//! policy"); in short:
//!
//! * A fixed-latency result becomes ready `latency` cycles after its
//!   producer issues; the stall of the instruction before a reader or
//!   overwriter is raised until it issues no earlier. Fixed-latency results
//!   are settled at the end of a block and before a control instruction.
//! * A variable-latency result gets a write scoreboard; the first
//!   instruction that reads or overwrites it waits on that board (`req`).
//!   Which registers are still pending on which boards is carried along the
//!   control flow by dataflow (joined over predecessors, loop back-edges
//!   included, to a fixed point), so a block start or a branch waits only
//!   for what it touches.
//! * Boards are shared: a result joins a board whose pending results are
//!   first needed by the same instruction, else takes a free board, else
//!   the board whose first needed release is soonest at or after its own
//!   (no extra wait), else the board needed last.
//! * The warp can switch between lane groups (divergence, lowest PC first)
//!   at a branch or a convergence instruction, so an instruction such a
//!   switch can land on also receives what any switch point leaves pending.
//!   Calls, returns, exits, traps, BSYNC, BREAK, BMOV and BAR wait for
//!   everything: a switch into another function's code happens only there.
//! * A branch back to an earlier instruction (a loop's back-edge) has the
//!   `yield` bit.

use ursa_emit::latency::{class_of_form, LatencyClass};
use ursa_emit::{control, forms, optypes, ControlAt, Inst, RegFile};

use crate::ir::code::{is_tail_jump, Code, Item};

/// Scoreboards the compiler uses.
const SCOREBOARDS: u8 = 6;
const MAX_STALL: u64 = 15;
/// No instruction of the block touches the register (after this point).
const NEVER: u32 = u32::MAX;

/// The control fields (group `ALL`) sit at the same index and bits in every
/// form: read and written there, without resolving a handle each time.
const STALL: ControlAt = control::STALL_AT;
const YIELD: ControlAt = control::YIELD_AT;
const WSB: ControlAt = control::WSB_AT;
const REQ: ControlAt = control::REQ_AT;

/// A register a dependence can be carried by, as a dense index: the four
/// files interleaved (number × 4 + file), so the registers of a
/// multi-register reference near the top of a file stay distinct from
/// every other file's.
fn dense(file: RegFile, n: u32) -> u32 {
    n * 4
        + match file {
            RegFile::R => 0,
            RegFile::UR => 1,
            RegFile::P => 2,
            RegFile::UP => 3,
        }
}

/// Appends the registers `i` reads (inputs, the guard included), then those
/// it writes, to `flat` as dense indices; returns where the writes start.
fn locs(i: &Inst, flat: &mut Vec<u32>) -> usize {
    let mut mid = None;
    i.for_each_reg_ref(|file, num, count, written| {
        if written && mid.is_none() {
            mid = Some(flat.len());
        }
        // `dense` of each register: the file's part once, outside the loop.
        let tag = dense(file, 0);
        for n in num..num + count {
            flat.push(n * 4 + tag);
        }
    });
    mid.unwrap_or(flat.len())
}

/// What an instruction does to the flow of the warp.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Flow {
    Plain,
    /// A branch to the item at this index.
    Branch(usize),
    /// A lane group may be switched after it (BSSY releases waiting lanes).
    Switch,
    /// Waits for everything outstanding: calls, returns, exits, traps,
    /// jumps out of the function, BSYNC, BREAK, BMOV, BAR.
    Drain,
}

fn flow(it: &Item, block_start: &[usize], n: usize) -> Flow {
    let op = it.inst.def().optype;
    if let Some(b) = it.target {
        if let Some(&p) = block_start.get(b.0 as usize).filter(|&&p| p < n) {
            return Flow::Branch(p);
        }
    }
    if is_tail_jump(it)
        || [
            optypes::UBRA::ID,
            optypes::CALL::ID,
            optypes::RET::ID,
            optypes::EXIT::ID,
            optypes::BPT::ID,
            optypes::BSYNC::ID,
            optypes::BREAK::ID,
            optypes::BMOV::ID,
            optypes::BAR::ID,
        ]
        .contains(&op)
    {
        return Flow::Drain;
    }
    if op == optypes::BSSY::ID {
        return Flow::Switch;
    }
    Flow::Plain
}

/// Nothing after it runs on the fall-through path (an unguarded branch,
/// jump out, EXIT, RET or trap).
fn ends_flow(it: &Item, f: Flow) -> bool {
    let op = it.inst.def().optype;
    let transfer =
        matches!(f, Flow::Branch(_)) || is_tail_jump(it) || [optypes::EXIT::ID, optypes::RET::ID, optypes::BPT::ID].contains(&op);
    transfer && !it.inst.is_guarded()
}

/// What is outstanding on one register.
#[derive(Clone, Copy)]
struct Pending {
    /// A fixed-latency result is ready at this cycle of the block (results
    /// ready at or before the current cycle are no longer pending).
    fixed: u64,
    /// Scoreboards one of which (depending on the path) holds its
    /// variable-latency result: waiting on all of them releases it.
    boards: u8,
    /// The first instruction of the block that touches it (`NEVER`).
    consumer: u32,
}

/// The outstanding results by register: a dense table plus the list of
/// occupied slots (what a hash map did, without hashing; the order of the
/// entries never matters here).
#[derive(Default)]
struct PendingMap {
    slot: Vec<Option<Pending>>,
    keys: Vec<u32>,
}

impl PendingMap {
    /// Emptied, keeping the storage; the table is grown on demand (after
    /// `pack_regs` the registers are few and low).
    fn clear(&mut self) {
        for &i in &self.keys {
            self.slot[i as usize] = None;
        }
        self.keys.clear();
    }
    fn get(&self, l: u32) -> Option<&Pending> {
        self.slot.get(l as usize).and_then(|p| p.as_ref())
    }
    fn insert(&mut self, l: u32, p: Pending) {
        let i = l as usize;
        if i >= self.slot.len() {
            self.slot.resize(i + 1, None);
        }
        if self.slot[i].is_none() {
            self.keys.push(l);
        }
        self.slot[i] = Some(p);
    }
    /// Adds boards to a register's (from a joined state).
    fn add_boards(&mut self, l: u32, boards: u8, consumer: u32) {
        match self.slot.get_mut(l as usize).and_then(|p| p.as_mut()) {
            Some(p) => {
                p.boards |= boards;
                p.consumer = p.consumer.min(consumer);
            }
            None => self.insert(l, Pending { fixed: 0, boards, consumer }),
        }
    }
    fn values(&self) -> impl Iterator<Item = &Pending> + '_ {
        self.keys.iter().filter_map(|&i| self.slot[i as usize].as_ref())
    }
    /// Waits on the boards of `req` at cycle `t`: they are released, and
    /// whatever is left with no board and a fixed result ready is dropped.
    fn release(&mut self, req: u8, t: u64) {
        let slot = &mut self.slot;
        self.keys.retain(|&i| match &mut slot[i as usize] {
            Some(p) => {
                p.boards &= !req;
                if p.boards != 0 || p.fixed > t {
                    true
                } else {
                    slot[i as usize] = None;
                    false
                }
            }
            None => false,
        });
    }
    /// The registers still waiting for a board, with their boards, sorted.
    fn board_state(&self, out: &mut Vec<(u32, u8)>) {
        out.clear();
        out.extend(self.keys.iter().filter_map(|&i| self.slot[i as usize].as_ref().filter(|p| p.boards != 0).map(|p| (i, p.boards))));
        out.sort_unstable();
    }
}

/// `acc := acc ∪ add` over sorted (register, boards) lists; whether `acc`
/// grew.
fn join_into(acc: &mut Vec<(u32, u8)>, add: &[(u32, u8)], tmp: &mut Vec<(u32, u8)>) -> bool {
    if add.is_empty() {
        return false;
    }
    tmp.clear();
    let (mut i, mut j, mut grew) = (0, 0, false);
    while i < acc.len() || j < add.len() {
        match (acc.get(i), add.get(j)) {
            (Some(&a), Some(&b)) if a.0 == b.0 => {
                grew |= b.1 & !a.1 != 0;
                tmp.push((a.0, a.1 | b.1));
                i += 1;
                j += 1;
            }
            (Some(&a), Some(&b)) if a.0 < b.0 => {
                tmp.push(a);
                i += 1;
            }
            (Some(&a), None) => {
                tmp.push(a);
                i += 1;
            }
            (_, Some(&b)) => {
                grew = true;
                tmp.push(b);
                j += 1;
            }
            (None, None) => unreachable!(),
        }
    }
    if grew {
        std::mem::swap(acc, tmp);
    }
    grew
}

/// The tables of [`calc_instr_deps`], kept per thread and reused from one
/// function to the next (cleared, never shrunk), as `pack_regs` keeps its own.
#[derive(Default)]
struct Scratch {
    pending: PendingMap,
    /// The registers of every instruction: item `k` reads
    /// `flat[off[k]..mid[k]]` and writes `flat[mid[k]..off[k + 1]]`.
    flat: Vec<u32>,
    off: Vec<u32>,
    mid: Vec<u32>,
    /// Per item: the first later instruction of its block touching one of
    /// its results (`NEVER`).
    consumer: Vec<u32>,
    /// Per register index: the next instruction touching it (backward scan).
    next_touch: Vec<u32>,
    state: Vec<(u32, u8)>,
    tmp: Vec<(u32, u8)>,
    /// The per-function tables of [`calc_with`], kept for their storage.
    flows: Vec<Flow>,
    is_start: Vec<bool>,
    parked: Vec<bool>,
    seg_at: Vec<u32>,
    orig: Vec<u64>,
    segs: Vec<Seg>,
    /// `Seg::first_touch` ranges index into it.
    first_touch: Vec<(u32, u32)>,
    acc_in: Vec<Vec<(u32, u8)>>,
    dirty: Vec<bool>,
    walked: Vec<bool>,
    switched: Vec<(u32, u8)>,
    switch_out: Vec<(u32, u8)>,
    /// NOPs to insert: (block, item, NOP).
    nops: Vec<(u32, usize, Inst)>,
}

thread_local! {
    static SCRATCH: std::cell::RefCell<Scratch> = std::cell::RefCell::default();
}

/// Sets the control bits of every instruction of `code` (inserting NOPs
/// where a wait is longer than one stall field can hold). Returns the
/// general registers the code uses, one past the highest (`RZ` is none):
/// what [`ursa_emit::elf::registers_of`] counts, read from the register
/// table this pass builds anyway (the NOPs it inserts name no register).
pub fn calc_instr_deps(code: &mut Code) -> u32 {
    SCRATCH.with(|s| calc_with(code, &mut s.borrow_mut())).1
}

/// [`calc_instr_deps`], returning the indices (before insertion) of the
/// items NOPs went in front of, one entry per NOP.
pub fn calc_instr_deps_at(code: &mut Code) -> Vec<usize> {
    SCRATCH.with(|s| calc_with(code, &mut s.borrow_mut())).0
}

/// One block of the walk: the items `start..end`.
struct Seg {
    start: usize,
    end: usize,
    /// A lane group can be resumed at its first instruction or inside it.
    switched_into: bool,
    /// The first instruction touching each register, sorted by register:
    /// `Scratch::first_touch[first_touch.0..first_touch.1]`.
    first_touch: (u32, u32),
}

fn calc_with(code: &mut Code, s: &mut Scratch) -> (Vec<usize>, u32) {
    let n = code.items.len();
    if n == 0 {
        return (Vec::new(), 0);
    }
    // Registers and flow of every instruction, once.
    s.flat.clear();
    s.off.clear();
    s.mid.clear();
    let mut flows = std::mem::take(&mut s.flows);
    flows.clear();
    for it in &code.items {
        s.off.push(s.flat.len() as u32);
        let mid = locs(&it.inst, &mut s.flat);
        s.mid.push(mid as u32);
        flows.push(flow(it, &code.block_start, n));
    }
    s.off.push(s.flat.len() as u32);
    // One past the highest general register (dense indices of `R` are
    // multiples of four).
    let r_end = s.flat.iter().filter(|&&l| l % 4 == dense(RegFile::R, 0)).map(|&l| l / 4 + 1).max().unwrap_or(0).min(RegFile::R.zero());
    // Blocks: every block start, and after every instruction that ends the
    // flow; `seg_at[k]` is the block starting at item k.
    let mut is_start = std::mem::take(&mut s.is_start);
    is_start.clear();
    is_start.resize(n + 1, false);
    is_start[0] = true;
    for &b in &code.block_start {
        if b < n {
            is_start[b] = true;
        }
    }
    // Where a lane group can be resumed after a switch: branch targets and
    // the instruction after a switch point the warp can continue past
    // (always a block start: a switch point ends its block).
    let mut parked = std::mem::take(&mut s.parked);
    parked.clear();
    parked.resize(n + 1, false);
    for (k, it) in code.items.iter().enumerate() {
        let f = flows[k];
        if let Flow::Branch(p) = f {
            parked[p] = true;
            is_start[p] = true;
        }
        if f != Flow::Plain {
            is_start[k + 1] = true;
            if !ends_flow(it, f) {
                parked[k + 1] = true;
            }
        }
    }
    let mut segs = std::mem::take(&mut s.segs);
    segs.clear();
    let mut seg_at = std::mem::take(&mut s.seg_at);
    seg_at.clear();
    seg_at.resize(n + 1, u32::MAX);
    for k in 0..n {
        if is_start[k] {
            seg_at[k] = segs.len() as u32;
            segs.push(Seg { start: k, end: k + 1, switched_into: false, first_touch: (0, 0) });
        }
        let last = segs.last_mut().expect("item 0 starts a block");
        last.end = k + 1;
        last.switched_into |= parked[k];
    }
    // Consumers by a backward scan of each block.
    let max_loc = s.flat.iter().copied().max().map_or(0, |m| m as usize + 1);
    s.next_touch.clear();
    s.next_touch.resize(max_loc, NEVER);
    s.consumer.clear();
    s.consumer.resize(n, NEVER);
    s.first_touch.clear();
    for seg in segs.iter_mut() {
        for k in (seg.start..seg.end).rev() {
            let (a, m, e) = (s.off[k] as usize, s.mid[k] as usize, s.off[k + 1] as usize);
            s.consumer[k] = s.flat[m..e].iter().map(|&l| s.next_touch[l as usize]).min().unwrap_or(NEVER);
            for &l in &s.flat[a..e] {
                s.next_touch[l as usize] = k as u32;
            }
        }
        let from = s.first_touch.len();
        for k in seg.start..seg.end {
            for &l in &s.flat[s.off[k] as usize..s.off[k + 1] as usize] {
                let t = &mut s.next_touch[l as usize];
                if *t != NEVER {
                    s.first_touch.push((l, *t));
                    *t = NEVER;
                }
            }
        }
        s.first_touch[from..].sort_unstable();
        seg.first_touch = (from as u32, s.first_touch.len() as u32);
    }
    // The original control fields, restored before each walk of a block.
    let mut orig = std::mem::take(&mut s.orig);
    orig.clear();
    orig.extend(code.items.iter().map(|it| it.inst.get_control(STALL)));
    // The dataflow: boards pending at each block start (joined over the
    // edges into it) and at any switch point; blocks are walked again
    // until nothing grows.
    let nseg = segs.len();
    let mut acc_in = std::mem::take(&mut s.acc_in);
    for a in acc_in.iter_mut() {
        a.clear();
    }
    if acc_in.len() < nseg {
        acc_in.resize_with(nseg, Vec::new);
    }
    let mut switched = std::mem::take(&mut s.switched);
    switched.clear();
    let mut dirty = std::mem::take(&mut s.dirty);
    dirty.clear();
    dirty.resize(nseg, true);
    let mut walked = std::mem::take(&mut s.walked);
    walked.clear();
    walked.resize(nseg, false);
    let mut nops = std::mem::take(&mut s.nops);
    nops.clear();
    let mut switch_out = std::mem::take(&mut s.switch_out);
    loop {
        let mut any = false;
        for si in 0..nseg {
            if !dirty[si] {
                continue;
            }
            dirty[si] = false;
            any = true;
            switch_out.clear();
            if nops.iter().any(|x| x.0 == si as u32) {
                nops.retain(|x| x.0 != si as u32);
            }
            let again = std::mem::replace(&mut walked[si], true);
            let w = Walk { segs: &segs, flows: &flows, seg_at: &seg_at, orig: &orig, switched: &switched, again };
            walk(code, s, &w, si, &mut acc_in, &mut dirty, &mut nops, &mut switch_out);
            if join_into(&mut switched, &switch_out, &mut s.tmp) {
                for (d, g) in dirty.iter_mut().zip(&segs) {
                    *d |= g.switched_into;
                }
            }
        }
        if !any {
            break;
        }
    }
    let at: Vec<usize> = nops.iter().map(|&(_, k, _)| k).collect();
    if !nops.is_empty() {
        nops.sort_by_key(|x| x.1);
        insert_nops(code, nops.drain(..).map(|(_, k, nop)| (k, nop)).collect());
    }
    // The tables go back for the next function.
    (s.flows, s.is_start, s.parked, s.seg_at, s.orig, s.segs) = (flows, is_start, parked, seg_at, orig, segs);
    (s.acc_in, s.switched, s.dirty, s.walked, s.nops, s.switch_out) = (acc_in, switched, dirty, walked, nops, switch_out);
    (at, r_end)
}

/// What [`walk`] reads of the function.
struct Walk<'a> {
    segs: &'a [Seg],
    flows: &'a [Flow],
    seg_at: &'a [u32],
    /// The stall of each item before the pass.
    orig: &'a [u64],
    /// What a switch may leave pending where a lane group can be resumed.
    switched: &'a [(u32, u8)],
    /// The block was walked before: its control fields are restored first.
    again: bool,
}

/// Walks block `si` from its joined entry state `acc_in[si]` (and what a
/// switch may leave pending, where a lane group can be resumed): sets the
/// control bits of its items, joins the boards pending on each edge out
/// into the entry state of its target (marking it `dirty` when it grows)
/// and those at its switch points into `switch_out`.
#[allow(clippy::too_many_arguments)]
fn walk(
    code: &mut Code,
    s: &mut Scratch,
    w: &Walk,
    si: usize,
    acc_in: &mut [Vec<(u32, u8)>],
    dirty: &mut [bool],
    nops: &mut Vec<(u32, usize, Inst)>,
    switch_out: &mut Vec<(u32, u8)>,
) {
    let (segs, flows, seg_at, orig) = (w.segs, w.flows, w.seg_at, w.orig);
    let seg = &segs[si];
    let ft = &s.first_touch[seg.first_touch.0 as usize..seg.first_touch.1 as usize];
    let first_touch = |l: u32| ft.binary_search_by_key(&l, |x| x.0).map_or(NEVER, |i| ft[i].1);
    let pending = &mut s.pending;
    pending.clear();
    for &(l, b) in &acc_in[si] {
        pending.add_boards(l, b, first_touch(l));
    }
    if seg.switched_into {
        for &(l, b) in w.switched {
            pending.add_boards(l, b, first_touch(l));
        }
    }
    if w.again {
        // Only stalls are raised from later instructions; `req` is set for
        // every instruction, `wsb` for every variable-latency one, and
        // `yield` does not depend on the state.
        for k in seg.start..seg.end {
            code.items[k].inst.set_control(STALL, orig[k]);
        }
    }
    let mut t: u64 = 0;
    for k in seg.start..seg.end {
        let (a, m, e) = (s.off[k] as usize, s.mid[k] as usize, s.off[k + 1] as usize);
        let f = flows[k];
        let mut req: u8 = 0;
        let mut need = t;
        if f == Flow::Drain {
            for p in pending.values() {
                req |= p.boards;
                need = need.max(p.fixed);
            }
        } else {
            for &l in &s.flat[a..e] {
                if let Some(p) = pending.get(l) {
                    req |= p.boards;
                    need = need.max(p.fixed);
                }
            }
            if f != Flow::Plain {
                // A switch point settles the fixed-latency results: the
                // lane group it may switch to does not know them.
                for p in pending.values() {
                    need = need.max(p.fixed);
                }
            }
        }
        // Delay issue by raising the previous instruction's stall (or NOPs).
        if need > t {
            let mut extra = need - t;
            if k > seg.start {
                let prev = &mut code.items[k - 1].inst;
                let st = prev.get_control(STALL).max(1);
                let add = extra.min(MAX_STALL.saturating_sub(st));
                prev.set_control(STALL, st + add);
                extra -= add;
            }
            while extra > 0 {
                let mut nop = Inst::new(forms::NOP_X);
                let st = extra.min(MAX_STALL);
                nop.set(control::STALL, st);
                nops.push((si as u32, k, nop));
                extra -= st;
            }
            t = need;
        }
        if req != 0 || f != Flow::Plain {
            pending.release(req, t);
        }
        // Record this instruction's results.
        let it = &mut code.items[k];
        let class = class_of_form(it.inst.form());
        let issue = t;
        if class.variable() {
            let consumer = s.consumer[k];
            let b = choose_board(pending, consumer);
            it.inst.set_control(WSB, b as u64);
            for &l in &s.flat[m..e] {
                pending.insert(l, Pending { fixed: 0, boards: 1 << b, consumer });
            }
        } else {
            let ready = issue + latency(class);
            for &l in &s.flat[m..e] {
                pending.insert(l, Pending { fixed: ready, boards: 0, consumer: NEVER });
            }
        }
        it.inst.set_control(REQ, req as u64);
        // Its stall is still the original: only this step and the next
        // instruction's (later) change it, and a walk again restores it.
        debug_assert_eq!(it.inst.get_control(STALL), orig[k]);
        let mut stall = orig[k].max(1);
        if f == Flow::Drain && !class.variable() && m < e {
            // A call's own results (the return address) are read on the
            // other side of the transfer, where nothing is tracked: be done
            // before the next instruction issues.
            stall = stall.max(latency(class));
        }
        it.inst.set_control(STALL, stall);
        if let Flow::Branch(p) = f {
            if p <= k {
                // A loop's back-edge: let another warp issue.
                it.inst.set_control(YIELD, 1);
            }
        }
        t = issue + stall;
        if f != Flow::Plain {
            pending.board_state(&mut s.state);
            if let Flow::Branch(p) = f {
                let t = seg_at[p] as usize;
                dirty[t] |= join_into(&mut acc_in[t], &s.state, &mut s.tmp);
            }
            join_into(switch_out, &s.state, &mut s.tmp);
        }
    }
    // Falling into the next block: settle the fixed-latency results with
    // the last instruction's stall (no fixed latency exceeds a stall field).
    let last = seg.end - 1;
    if !ends_flow(&code.items[last], flows[last]) && seg.end < code.items.len() {
        let need = pending.values().map(|p| p.fixed).max().unwrap_or(0);
        if need > t {
            let inst = &mut code.items[last].inst;
            let st = inst.get_control(STALL).max(1);
            inst.set_control(STALL, (st + (need - t)).min(MAX_STALL));
        }
        pending.board_state(&mut s.state);
        let t = seg_at[seg.end] as usize;
        dirty[t] |= join_into(&mut acc_in[t], &s.state, &mut s.tmp);
    }
}

/// The board for a variable-latency result first needed by instruction
/// `consumer` (`NEVER`: not in this block), see the module documentation.
fn choose_board(pending: &PendingMap, consumer: u32) -> u8 {
    let mut busy = [false; SCOREBOARDS as usize];
    let mut first = [NEVER; SCOREBOARDS as usize];
    for p in pending.values() {
        // The boards it is on (most pending results are on none).
        let mut bits = p.boards & ((1 << SCOREBOARDS) - 1);
        while bits != 0 {
            let b = bits.trailing_zeros() as usize;
            bits &= bits - 1;
            busy[b] = true;
            first[b] = first[b].min(p.consumer);
        }
    }
    let boards = 0..SCOREBOARDS as usize;
    // Consumed together: released by the same wait.
    if consumer != NEVER {
        if let Some(b) = boards.clone().find(|&b| busy[b] && first[b] == consumer) {
            return b as u8;
        }
    }
    if let Some(b) = boards.clone().find(|&b| !busy[b]) {
        return b as u8;
    }
    // Released no earlier than it would be anyway: the one needed soonest.
    if let Some(b) = boards.clone().filter(|&b| first[b] >= consumer).min_by_key(|&b| first[b]) {
        return b as u8;
    }
    // Its first wait is delayed to this result's: the one needed last.
    boards.max_by_key(|&b| (first[b], std::cmp::Reverse(b))).unwrap_or(0) as u8
}

/// Inserts each NOP before its item; a block starting at that item starts
/// at its NOPs.
fn insert_nops(code: &mut Code, nops: Vec<(usize, Inst)>) {
    let n = code.items.len();
    // Per item: its index once the NOPs before it are in.
    let mut new_index = Vec::with_capacity(n + 1);
    let mut out: Vec<Item> = Vec::with_capacity(n + nops.len());
    let mut nops = nops.into_iter().peekable();
    for (k, it) in std::mem::take(&mut code.items).into_iter().enumerate() {
        new_index.push(out.len());
        while let Some((_, nop)) = nops.next_if(|&(at, _)| at == k) {
            out.push(Item::new(nop));
        }
        out.push(it);
    }
    new_index.push(out.len());
    for s in code.block_start.iter_mut() {
        *s = new_index[*s];
    }
    code.items = out;
}

fn latency(c: LatencyClass) -> u64 {
    c.latency() as u64
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::code::testing::{code, text};

    fn deps(lines: &[&str]) -> Vec<String> {
        let mut c = code(lines);
        calc_instr_deps(&mut c);
        text(&c)
    }

    #[test]
    fn the_general_registers_counted_are_those_the_encoder_names() {
        // Pairs and quads count all their registers, `RZ` and the other
        // files none, and the NOPs a long wait needs add none.
        for lines in [
            &["IADD R0, R1, R2 ;", "IADD R3, R0, R0 ;"][..],
            &["LDL.64 R[6:7], [R1] ;", "IADD R2, R6, RZ ;"],
            &["LDG.128 R[8:11], [R[2:3]] ;", "MUFU.RCP R5, R8 ;", "MUFU.RCP R4, R5 ;", "MUFU.RCP R3, R4 ;"],
            &["ISETP.EQ.AND P0, PT, R3, RZ, PT ;", "UMOV UR9, 0x1 ;"],
            &["BPT.TRAP 0x1 ;"],
        ] {
            let mut c = code(lines);
            let counted = calc_instr_deps(&mut c);
            assert_eq!(counted, ursa_emit::elf::registers_of(c.items.iter().map(|it| &it.inst)), "{:?}", lines);
        }
        assert_eq!(calc_instr_deps(&mut code(&["LDG.128 R[8:11], [R[2:3]] ;"])), 12);
        assert_eq!(calc_instr_deps(&mut code(&["UMOV UR9, 0x1 ;"])), 0);
    }

    #[test]
    fn a_fixed_latency_result_is_waited_for_with_the_stall_before_its_reader() {
        // IADD has 4 cycles of latency (docs/latencies.md): its reader issues
        // 4 cycles after it; independent instructions issue back to back.
        assert_eq!(
            deps(&["IADD R0, R1, R2 ;", "IADD R3, R0, R0 ;", "IADD R5, R6, R7 ;"]),
            ["IADD R0, R1, R2 &stall=4", "IADD R3, R0, R0 &stall=1", "IADD R5, R6, R7 &stall=1"]
        );
        // One independent instruction in between covers one of the cycles;
        // IMAD's 5 cycles are waited for in full.
        assert_eq!(
            deps(&["IMAD R0, R1, R2, RZ ;", "IADD R5, R6, R7 ;", "IADD R3, R0, R0 ;"]),
            ["IMAD R0, R1, R2, RZ &stall=1", "IADD R5, R6, R7 &stall=4", "IADD R3, R0, R0 &stall=1"]
        );
        // A write after a read needs no wait; a write after a write does.
        assert_eq!(deps(&["IADD R0, R1, R2 ;", "IADD R0, R3, R3 ;"]), ["IADD R0, R1, R2 &stall=4", "IADD R0, R3, R3 &stall=1"]);
    }

    #[test]
    fn a_variable_latency_result_gets_a_scoreboard_its_reader_waits_on() {
        assert_eq!(
            deps(&["LDL R0, [R1] ;", "IADD R2, R3, R4 ;", "IADD R5, R0, R0 ;", "IADD R6, R0, R0 ;"]),
            [
                "LDL R0, [R1] &stall=1 &wsb=0",
                "IADD R2, R3, R4 &stall=1",
                // The first reader waits on board 0, the second need not.
                "IADD R5, R0, R0 &stall=1 &req=1",
                "IADD R6, R0, R0 &stall=1",
            ]
        );
    }

    #[test]
    fn loads_consumed_together_share_a_board_released_at_the_latest() {
        // Both loads are first needed by the IADD: one board, one wait,
        // which the simulator releases when the later load is done.
        assert_eq!(
            deps(&["LDL R8, [R1] ;", "LDL R9, [R1+0x4] ;", "IADD R4, R8, R9 ;"]),
            ["LDL R8, [R1] &stall=1 &wsb=0", "LDL R9, [R1+0x4] &stall=1 &wsb=0", "IADD R4, R8, R9 &stall=1 &req=1"]
        );
        // Eight loads consumed in pairs (an unrolled loop): four boards,
        // and no load waits for an earlier one.
        let mut lines: Vec<String> = (0..8).map(|k| format!("LDL R{}, [R1+0x{:x}] ;", 10 + k, 4 * k)).collect();
        lines.extend((0..4).map(|k| format!("IADD R{}, R{}, R{} ;", 30 + k, 10 + 2 * k, 11 + 2 * k)));
        let t = deps(&lines.iter().map(|s| s.as_str()).collect::<Vec<_>>());
        for (k, l) in t.iter().enumerate().take(8) {
            assert!(l.ends_with(&format!("&stall=1 &wsb={}", k / 2)), "{}", l);
        }
        for (k, l) in t.iter().enumerate().skip(8) {
            assert!(l.ends_with(&format!("&req={}", 1 << (k - 8))), "{}", l);
        }
    }

    #[test]
    fn when_boards_run_out_a_load_shares_the_board_needed_last() {
        // Seven loads, each needed by its own reader in load order: the
        // seventh shares the sixth's board (whose reader comes last)
        // instead of waiting for the first load to be done.
        let mut lines: Vec<String> = (0..7).map(|k| format!("LDL R{}, [R1+0x{:x}] ;", 10 + k, 4 * k)).collect();
        lines.extend((0..7).map(|k| format!("IADD R{}, R{}, R{} ;", 30 + k, 10 + k, 10 + k)));
        let t = deps(&lines.iter().map(|s| s.as_str()).collect::<Vec<_>>());
        for (k, l) in t.iter().enumerate().take(6) {
            assert!(l.ends_with(&format!("&stall=1 &wsb={}", k)), "{}", l);
        }
        assert_eq!(t[6], "LDL R16, [R1+0x18] &stall=1 &wsb=5");
        assert_eq!(t[12], "IADD R35, R15, R15 &stall=1 &req=32");
        // The seventh result was released by the same wait.
        assert_eq!(t[13], "IADD R36, R16, R16 &stall=1");
    }

    #[test]
    fn a_load_before_a_branch_is_waited_for_only_where_it_is_read() {
        let t = deps(&[
            "LDL R8, [R1] ;",
            "ISETP.NE.AND.U32 P0, R0, 0x0, PT ;",
            "@P0 BRA TARGET ; -> 2",
            ">IADD R3, R3, R3 ;",
            ">IADD R4, R8, R8 ;",
            "EXIT ;",
        ]);
        assert_eq!(
            t,
            [
                "LDL R8, [R1] &stall=1 &wsb=0",
                // The branch waits for its predicate only.
                "ISETP.NE.AND.U32 P0, R0, 0x0, PT &stall=4",
                "@P0 BRA 0x0 &stall=1",
                // A block that falls through settles its fixed-latency results.
                "IADD R3, R3, R3 &stall=4",
                // Reached from both: the load is pending on either edge.
                "IADD R4, R8, R8 &stall=4 &req=1",
                "EXIT &stall=1",
            ]
        );
    }

    #[test]
    fn a_load_issued_before_a_back_edge_is_waited_for_in_the_next_iteration() {
        let t = deps(&[
            "MOV R8, RZ ;",
            ">IADD R4, R8, R4 ;",
            "LDL R8, [R1] ;",
            "ISETP.NE.AND.U32 P0, R4, 0x0, PT ;",
            "@P0 BRA TARGET ; -> 1",
            ">EXIT ;",
        ]);
        assert_eq!(
            t,
            [
                // The fall-through settles MOV's 4 cycles before the loop.
                "MOV R8, RZ &stall=4",
                // On the back-edge the load is still in flight: its reader at
                // the top of the loop waits for it.
                "IADD R4, R8, R4 &stall=1 &req=1",
                "LDL R8, [R1] &stall=3 &wsb=0",
                "ISETP.NE.AND.U32 P0, R4, 0x0, PT &stall=4",
                // A back-edge yields.
                "@P0 BRA 0x0 &stall=1 &yield=1",
                // EXIT waits for everything outstanding.
                "EXIT &stall=1 &req=1",
            ]
        );
    }

    #[test]
    fn a_join_waits_on_the_boards_of_every_path() {
        let t = deps(&["LDL R8, [R1] ;", "@P0 BRA TARGET ; -> 2", ">LDL R9, [R1+0x4] ;", ">IADD R4, R8, R9 ;", "EXIT ;"]);
        assert_eq!(t[0], "LDL R8, [R1] &stall=1 &wsb=0");
        assert_eq!(t[2], "LDL R9, [R1+0x4] &stall=1 &wsb=1");
        // R8 on board 0 from both paths, R9 on board 1 from one.
        assert_eq!(t[3], "IADD R4, R8, R9 &stall=4 &req=3");
    }

    #[test]
    fn a_lane_group_switch_carries_what_the_other_group_left_pending() {
        // Lowest PC first: lanes falling through run block 1 first, and its
        // branch to block 3 lets the lanes parked at block 2 run, with the
        // load of block 1 in flight although no edge leads from 1 to 2.
        let t =
            deps(&["@P0 BRA TARGET ; -> 2", ">LDL R8, [R1] ;", "BRA TARGET ; -> 3", ">IADD R8, R2, R2 ;", ">IADD R5, R8, R8 ;", "EXIT ;"]);
        assert_eq!(t[3], "IADD R8, R2, R2 &stall=4 &req=1");
    }

    #[test]
    fn fixed_latencies_fit_a_stall_field() {
        // A block's fall-through settles its fixed-latency results with the
        // stall of its last instruction alone.
        for c in LatencyClass::ALL {
            assert!(c.variable() || latency(c) <= MAX_STALL, "{:?}", c);
        }
    }

    #[test]
    fn nops_go_before_their_item_and_start_its_block() {
        // No wait of the current latency classes is long enough to need a
        // NOP (a stall field holds 15 cycles): the insertion is tested alone.
        let mut c = code(&["IADD R0, R1, R2 ;", "IADD R3, R0, R0 ;", ">IADD R4, R0, R3 ;"]);
        let nop = |s: u64| {
            let mut n = Inst::new(forms::NOP_X);
            n.set(control::STALL, s);
            n
        };
        insert_nops(&mut c, vec![(1, nop(15)), (2, nop(3)), (2, nop(2))]);
        assert_eq!(text(&c), ["IADD R0, R1, R2", "NOP &stall=15", "IADD R3, R0, R0", "NOP &stall=3", "NOP &stall=2", "IADD R4, R0, R3"]);
        assert_eq!(c.block_start, [0, 3]);
    }

    #[test]
    fn calls_returns_and_exits_wait_for_everything_outstanding() {
        let t = deps(&[
            "LDL R8, [R1] ;",
            "IADD R0, R2, R2 ;",
            "ISETP.NE.AND.U32 P0, R0, 0x0, PT ;",
            "@P0 BRA TARGET ; -> 1",
            ">IADD R3, R3, R3 ;",
            "RET R[20:21] ;",
        ]);
        assert_eq!(t[1], "IADD R0, R2, R2 &stall=4");
        // The branch waits for its predicate, not for the load.
        assert_eq!(t[2], "ISETP.NE.AND.U32 P0, R0, 0x0, PT &stall=4");
        assert_eq!(t[3], "@P0 BRA 0x0 &stall=1");
        assert_eq!(t[4], "IADD R3, R3, R3 &stall=4");
        // The return waits for the load (board 0).
        assert_eq!(t[5], "RET R[20:21] &stall=1 &req=1");
    }
}
