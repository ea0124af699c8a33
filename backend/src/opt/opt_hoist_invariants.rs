//! Loop-invariant machine instructions moved to the loop's pre-header (at
//! `opt_level=speed`; `docs/optimization.md`, "After the mid-end").
//!
//! Cranelift's e-graph already places every pure CLIF value outside the
//! loops it does not depend on, but it *rematerializes* constants in the
//! block that uses them, and what comes after it is not seen by it: the
//! legalizations (compare-and-swap loops, masks of narrow values), and the
//! registers instruction selection must fill because an instruction has no
//! form for two constants (`FFMA R, R, 3.0, R(0.625)`, `IMAD R, R, 0x12345,
//! R(0x12345)`): a `MOV R, imm` in every iteration (and in every copy of an
//! unrolled body). This pass runs on the virtual-register code just before
//! the scheduler, where each instruction is one machine instruction:
//!
//! - **Loops**: natural loops of the VCode graph (a back edge to a block that
//!   dominates its source), innermost first, so what leaves an inner loop
//!   can leave the outer one too. A loop is considered when its header has
//!   one predecessor outside it and that block ends with a jump to the header
//!   (the pre-header: the lowering splits critical edges, so a loop entered
//!   from a two-way branch has one), and the loop calls nothing (a value
//!   live across a call is stored and reloaded).
//! - **Invariant**: a pure instruction (the scheduler's `role`: no memory
//!   access, no side effect, no clock read, one machine instruction, no ABI
//!   register), not guarded, naming no physical register (`R1`, the uniform
//!   registers `opt_uniform` numbered), whose every input is defined outside
//!   the loop or by an instruction hoisted before it. A pair written half by
//!   half (`OpKind::Reuse`) moves whole or not at all. An instruction whose
//!   results are only passed as block arguments stays (in the loop it is
//!   computed into the parameter's register; hoisted it would need a
//!   register of its own and a copy on the edge).
//! - **Register budget**: a hoisted value is live across the whole loop (every
//!   block of a natural loop reaches its back edge). At every point of the
//!   loop and at the end of the pre-header, the pressure of the current order
//!   (32-bit registers, a pair two, predicates apart; the scheduler's
//!   measure, `pressure_before`) plus the values hoisted that were not live
//!   there must stay at or below the function's highest pressure: the
//!   allocator, which needs about that many registers anyway, needs no more
//!   for the hoisting. An instruction that would go over stays (and what
//!   reads it). At most [`MAX_HOISTED`] instructions leave one loop.
//! - **Equal constants**: an invariant instruction that computes the same
//!   value as one hoisted already (the same machine instruction, the same
//!   inputs, one result — the `MOV R, 0x12345` of four unrolled copies) is
//!   dropped and its readers read the earlier one's result, which is live
//!   across the loop anyway (so it costs no register).
//!
//! Cost: one pass over the blocks for the back edges; functions with a loop
//! build dominators and the loops' blocks; only a loop with an invariant
//! instruction asks for liveness and pressure (once per loop that hoisted
//! something: what it moved changes the pressure of the loop around it).

use smallvec::SmallVec;

use ursa_isel::bitset::BitSet;
use ursa_isel::vcode::{MInst, OpKind, Pseudo, VCode, VReg};

use crate::ir::cfg::{has_backward_edge, iterate_doms, reverse_postorder};
use crate::opt::opt_instr_sched_prepass::{pressure_before, role, Pressure, Role};
use crate::regalloc::assign_regs_ssa::{block_liveness, VLiveness};

/// At most this many instructions leave one loop (each pressure check scans
/// the loop once per value hoisted so far).
pub const MAX_HOISTED: usize = 16;

const NONE: u32 = u32::MAX;

/// Moves loop-invariant instructions to their loops' pre-headers; returns
/// how many moved (an instruction merged into an equal one counts).
pub fn opt_hoist_invariants(vcode: &mut VCode) -> usize {
    let n = vcode.blocks.len();
    // No cycle (most functions): left here, before any table is made.
    if !has_backward_edge(&vcode.blocks) {
        return 0;
    }
    let succ = |x: usize, i: usize| vcode.blocks[x].succs.get(i).map(|b| b.0 as usize);
    let rpo = reverse_postorder(0, n, succ);
    let mut order = vec![usize::MAX; n];
    for (k, &b) in rpo.iter().enumerate() {
        order[b] = k;
    }
    // A retreating edge is needed for a loop; most functions have none.
    let retreats = |b: usize| vcode.blocks[b].succs.iter().any(|s| order[s.0 as usize] <= order[b]);
    if !rpo.iter().any(|&b| retreats(b)) {
        return 0;
    }
    let doms = iterate_doms(n, 0, &rpo, |x, i| vcode.blocks[x].preds.get(i).map(|b| b.0 as usize), &order);
    let dominates = |h: usize, mut b: usize| loop {
        if b == h {
            return true;
        }
        match doms[b] {
            Some(d) if d != b && order[d] >= order[h] => b = d,
            _ => return false,
        }
    };
    // Headers, innermost (latest in reverse postorder) first.
    let mut headers: Vec<usize> = Vec::new();
    for &b in rpo.iter().rev() {
        if vcode.blocks[b].preds.iter().any(|p| order[p.0 as usize] != usize::MAX && dominates(b, p.0 as usize)) {
            headers.push(b);
        }
    }
    let mut st = State::new(vcode);
    let mut hoisted = 0;
    for h in headers {
        hoisted += st.hoist_loop(vcode, h, &order, &dominates);
    }
    LIVENESS.with(|l| l.replace(std::mem::take(&mut st.live)));
    hoisted
}

thread_local! {
    /// Liveness storage, kept from one function to the next.
    static LIVENESS: std::cell::RefCell<VLiveness> = std::cell::RefCell::default();
}

/// What the pass knows of the function, kept current as instructions move.
struct State {
    /// Per value: the block that defines it (parameter or instruction).
    def_block: Vec<u32>,
    /// Per value: its reads as an operand (a branch's condition included),
    /// and its reads of any kind (block arguments too).
    op_reads: Vec<u32>,
    reads: Vec<u32>,
    /// Per value: a later instruction continues the pair in its register.
    continued: Vec<bool>,
    /// Liveness and pressure of the current code (`fresh`: not changed since).
    live: VLiveness,
    fresh: bool,
    first: Vec<usize>,
    before: Vec<Pressure>,
    /// The function's highest pressure before the pass (once `measured`).
    budget: Pressure,
    measured: bool,
    live_set: BitSet<u32, Vec<u64>>,
    /// Per block: the loop being looked at holds it (the loop's stamp).
    in_loop: Vec<u32>,
    stamp: u32,
    /// Per value: hoisted from the loop being looked at (its stamp).
    moved: Vec<u32>,
    refs: Vec<ursa_emit::RegRef>,
}

impl State {
    fn new(vcode: &VCode) -> State {
        let nv = vcode.classes.len();
        let mut def_block = vec![NONE; nv];
        let mut op_reads = vec![0u32; nv];
        let mut reads = vec![0u32; nv];
        let mut continued = vec![false; nv];
        for (b, blk) in vcode.blocks.iter().enumerate() {
            for p in &blk.params {
                def_block[p.0 as usize] = b as u32;
            }
            for m in &blk.insts {
                for o in m.opnds.iter() {
                    let v = o.vreg.0 as usize;
                    match o.kind {
                        OpKind::Use => {
                            reads[v] += 1;
                            op_reads[v] += 1;
                        }
                        kind => {
                            def_block[v] = b as u32;
                            if let OpKind::Reuse(u) = kind {
                                continued[m.opnds[u as usize].vreg.0 as usize] = true;
                            }
                        }
                    }
                }
                for a in m.args().iter().flatten() {
                    reads[a.0 as usize] += 1;
                }
            }
        }
        State {
            def_block,
            op_reads,
            reads,
            continued,
            live: LIVENESS.with(|l| l.take()),
            fresh: false,
            first: Vec::new(),
            before: Vec::new(),
            budget: Pressure::default(),
            measured: false,
            live_set: BitSet::default(),
            in_loop: vec![0; vcode.blocks.len()],
            stamp: 0,
            moved: vec![0; nv],
            refs: Vec::new(),
        }
    }

    /// Could `m` leave the loop: pure, unguarded, no physical register, every
    /// input from outside the loop or hoisted already?
    fn invariant(&mut self, m: &MInst) -> bool {
        if role(m) != Role::Pure || m.predicated || m.pseudo != Pseudo::None {
            return false;
        }
        self.refs.clear();
        m.pieces[0].reg_refs_into(&mut self.refs);
        if !self.refs.is_empty() {
            return false;
        }
        m.opnds.iter().filter(|o| o.kind == OpKind::Use).all(|o| {
            let v = o.vreg.0 as usize;
            self.moved[v] == self.stamp || self.in_loop.get(self.def_block[v] as usize) != Some(&self.stamp)
        })
    }

    /// The loop of header `h`: its invariant instructions moved to the end
    /// of its pre-header, within the register budget. Returns how many.
    fn hoist_loop(&mut self, vcode: &mut VCode, h: usize, order: &[usize], dominates: &impl Fn(usize, usize) -> bool) -> usize {
        self.stamp += 1;
        let stamp = self.stamp;
        // The loop's blocks: from each back edge's source back to h.
        let mut blocks = vec![h];
        self.in_loop[h] = stamp;
        let mut stack: Vec<usize> =
            vcode.blocks[h].preds.iter().map(|p| p.0 as usize).filter(|&p| order[p] != usize::MAX && dominates(h, p)).collect();
        while let Some(b) = stack.pop() {
            if self.in_loop[b] == stamp {
                continue;
            }
            self.in_loop[b] = stamp;
            blocks.push(b);
            stack.extend(vcode.blocks[b].preds.iter().map(|p| p.0 as usize).filter(|&p| order[p] != usize::MAX));
        }
        blocks.sort_unstable_by_key(|&b| order[b]);
        // One pre-header, ending with a jump to h.
        let mut outside = vcode.blocks[h].preds.iter().map(|p| p.0 as usize).filter(|&p| self.in_loop[p] != stamp);
        let (Some(pre), None) = (outside.next(), outside.next()) else { return 0 };
        let jumps = |m: &MInst| m.pseudo == Pseudo::Jump && m.targets().len() == 1;
        if !vcode.blocks[pre].insts.last().is_some_and(jumps) {
            return 0;
        }
        if blocks.iter().any(|&b| vcode.blocks[b].insts.iter().any(|m| m.clobbers_all || m.pseudo == Pseudo::Call)) {
            return 0;
        }
        // The units that may move, in order: an instruction with the
        // instructions that continue its pairs in their registers.
        // (block, index, the earlier hoisted value it equals).
        let mut chosen: Vec<(usize, usize, Option<VReg>)> = Vec::new();
        let mut through: Vec<VReg> = Vec::new();
        let mut unit: SmallVec<[usize; 2]> = SmallVec::new();
        for &b in &blocks {
            let mut i = 0;
            while i < vcode.blocks[b].insts.len() && chosen.len() < MAX_HOISTED {
                let m = &vcode.blocks[b].insts[i];
                i += 1;
                if m.opnds.iter().any(|o| matches!(o.kind, OpKind::Reuse(_))) || !self.invariant(m) {
                    continue;
                }
                // Equal to an instruction hoisted already: merged into it
                // (its value is live across the loop anyway).
                let twin = chosen.iter().find(|c| c.2.is_none() && equal(vcode, &vcode.blocks[c.0].insts[c.1], m));
                if let (Some(&(tb, tk, _)), Some(d)) = (twin, single_def(m)) {
                    let to = single_def(&vcode.blocks[tb].insts[tk]).expect("an equal instruction");
                    self.moved[d.0 as usize] = stamp;
                    self.reads[to.0 as usize] += self.reads[d.0 as usize];
                    self.op_reads[to.0 as usize] += self.op_reads[d.0 as usize];
                    chosen.push((b, i - 1, Some(to)));
                    continue;
                }
                unit.clear();
                unit.push(i - 1);
                let ok = self.take_unit(vcode, b, &mut unit);
                for &k in &unit {
                    for o in vcode.blocks[b].insts[k].opnds.iter().filter(|o| o.kind != OpKind::Use) {
                        self.moved[o.vreg.0 as usize] = 0;
                    }
                }
                if !ok || !self.worth_it(vcode, b, &unit) {
                    continue;
                }
                if !self.fits(vcode, &blocks, pre, b, &unit, &chosen, &mut through) {
                    continue;
                }
                for &k in &unit {
                    for o in vcode.blocks[b].insts[k].opnds.iter().filter(|o| o.kind != OpKind::Use) {
                        self.moved[o.vreg.0 as usize] = stamp;
                    }
                    chosen.push((b, k, None));
                }
            }
        }
        if chosen.is_empty() {
            return 0;
        }
        self.fresh = false;
        // Block by block in reverse postorder, each in its order: every
        // input before its reader.
        let pos = |b: usize| blocks.iter().position(|&x| x == b).unwrap_or(usize::MAX);
        chosen.sort_unstable_by_key(|&(b, k, _)| (pos(b), k));
        // Out of their blocks (from the back, so indices hold), into the
        // pre-header in their order (every input before its reader); the
        // merged ones dropped, their readers renamed.
        let mut taken: Vec<MInst> = Vec::with_capacity(chosen.len());
        let mut rename: Vec<(VReg, VReg)> = Vec::new();
        for &(b, k, twin) in chosen.iter().rev() {
            let m = vcode.blocks[b].insts.remove(k);
            match twin {
                Some(to) => rename.push((single_def(&m).expect("one result"), to)),
                None => taken.push(m),
            }
        }
        taken.reverse();
        let count = chosen.len();
        if !rename.is_empty() {
            let map = |v: VReg| rename.iter().find(|r| r.0 == v).map_or(v, |r| r.1);
            for m in vcode.blocks.iter_mut().flat_map(|b| b.insts.iter_mut()).chain(taken.iter_mut()) {
                m.rename(map);
                for a in m.args_mut().iter_mut().flatten() {
                    *a = map(*a);
                }
            }
        }
        for m in &taken {
            for o in m.opnds.iter().filter(|o| o.kind != OpKind::Use) {
                self.def_block[o.vreg.0 as usize] = pre as u32;
            }
        }
        let insts = &mut vcode.blocks[pre].insts;
        let at = insts.len() - 1;
        insts.splice(at..at, taken);
        count
    }

    /// Completes `unit` (its first instruction given, the values it writes
    /// marked as moving) with the instructions of block `b` that continue
    /// its pairs, each invariant once those are; false when one is not.
    fn take_unit(&mut self, vcode: &VCode, b: usize, unit: &mut SmallVec<[usize; 2]>) -> bool {
        let insts = &vcode.blocks[b].insts;
        let mut k = unit[0];
        loop {
            let m = &insts[k];
            let mut open: Option<VReg> = None;
            for o in m.opnds.iter().filter(|o| o.kind != OpKind::Use) {
                self.moved[o.vreg.0 as usize] = self.stamp;
                if self.continued[o.vreg.0 as usize] {
                    open = Some(o.vreg);
                }
            }
            let Some(v) = open else { return true };
            // The continuation is in the same block (the pieces of one bundle).
            let next = (k + 1..insts.len())
                .find(|&j| insts[j].opnds.iter().any(|o| matches!(o.kind, OpKind::Reuse(u) if insts[j].opnds[u as usize].vreg == v)));
            match next {
                Some(j) if self.invariant(&insts[j]) => {
                    unit.push(j);
                    k = j;
                }
                _ => return false,
            }
        }
    }

    /// Does moving `unit` save work in the loop: is a value it leaves
    /// (one no instruction of the unit continues) read by an instruction
    /// other than a branch?
    fn worth_it(&self, vcode: &VCode, b: usize, unit: &[usize]) -> bool {
        let insts = &vcode.blocks[b].insts;
        unit.iter().flat_map(|&k| insts[k].opnds.iter().filter(|o| o.kind != OpKind::Use)).any(|o| {
            let v = o.vreg.0 as usize;
            !self.continued[v] && self.op_reads[v] > 0
        })
    }

    /// Within the register budget with `unit` (of block `b`) hoisted
    /// besides `chosen`? `through` gets the values that would be live
    /// across the loop.
    #[allow(clippy::too_many_arguments)]
    fn fits(
        &mut self,
        vcode: &VCode,
        blocks: &[usize],
        pre: usize,
        b: usize,
        unit: &[usize],
        chosen: &[(usize, usize, Option<VReg>)],
        through: &mut Vec<VReg>,
    ) -> bool {
        if !self.fresh {
            block_liveness(vcode, &mut self.live);
            let peak = pressure_before(&vcode.blocks, &vcode.classes, &self.live, &mut self.live_set, &mut self.first, &mut self.before);
            // The budget is the function's peak before any hoisting.
            if !self.measured {
                self.budget = peak;
                self.measured = true;
            }
            self.fresh = true;
        }
        // The values hoisted (with the unit's) that something left in the
        // loop or after it still reads.
        let mut read_by_moved: SmallVec<[(VReg, u32); 8]> = SmallVec::new();
        let all = chosen.iter().filter(|c| c.2.is_none()).map(|c| (c.0, c.1)).chain(unit.iter().map(|&k| (b, k)));
        for (cb, k) in all.clone() {
            for o in vcode.blocks[cb].insts[k].opnds.iter().filter(|o| o.kind == OpKind::Use) {
                match read_by_moved.iter_mut().find(|x| x.0 == o.vreg) {
                    Some(x) => x.1 += 1,
                    None => read_by_moved.push((o.vreg, 1)),
                }
            }
        }
        through.clear();
        for (cb, k) in all {
            for o in vcode.blocks[cb].insts[k].opnds.iter().filter(|o| o.kind != OpKind::Use) {
                let inside = read_by_moved.iter().find(|x| x.0 == o.vreg).map_or(0, |x| x.1);
                if self.reads[o.vreg.0 as usize] > inside && !through.contains(&o.vreg) {
                    through.push(o.vreg);
                }
            }
        }
        let size = |v: VReg| Pressure::of(vcode.classes[v.0 as usize]);
        let mut all_through = Pressure::default();
        for &v in through.iter() {
            all_through.add(size(v));
        }
        // The end of the pre-header: before its jump, plus every value.
        let mut at_pre = self.before[self.first[pre] + vcode.blocks[pre].insts.len() - 1];
        at_pre.add(all_through);
        if at_pre.exceeds(self.budget) {
            return false;
        }
        // Every point of the loop: plus the values not live there now.
        let mut live: SmallVec<[bool; 8]> = SmallVec::new();
        for &lb in blocks {
            let out = self.live.sets.live_out(lb);
            live.clear();
            live.extend(through.iter().map(|v| out.binary_search(&v.0).is_ok()));
            for (i, m) in vcode.blocks[lb].insts.iter().enumerate().rev() {
                for (t, v) in through.iter().enumerate() {
                    if m.opnds.iter().any(|o| o.vreg == *v && o.kind != OpKind::Use) {
                        live[t] = false;
                    }
                    if m.opnds.iter().any(|o| o.vreg == *v && o.kind == OpKind::Use) || m.args().iter().flatten().any(|a| a == v) {
                        live[t] = true;
                    }
                }
                let mut p = self.before[self.first[lb] + i];
                for (t, &v) in through.iter().enumerate() {
                    if !live[t] {
                        p.add(size(v));
                    }
                }
                if p.exceeds(self.budget) {
                    return false;
                }
            }
        }
        true
    }
}

/// The one result of `m`, a plain def (no pair continued, nothing else written).
fn single_def(m: &MInst) -> Option<VReg> {
    let mut defs = m.opnds.iter().filter(|o| o.kind != OpKind::Use);
    match (defs.next(), defs.next()) {
        (Some(d), None) if d.kind == OpKind::Def => Some(d.vreg),
        _ => None,
    }
}

/// Do `a` and `b` compute the same value: one result each, the same machine
/// instruction, fields and inputs?
fn equal(vcode: &VCode, a: &MInst, b: &MInst) -> bool {
    single_def(a).is_some()
        && single_def(b).is_some()
        && a.pieces == b.pieces
        && a.fixups.as_slice() == b.fixups.as_slice()
        && a.opnds.len() == b.opnds.len()
        && a.opnds.iter().zip(b.opnds.iter()).all(|(x, y)| {
            x.kind == y.kind
                && x.fixed == y.fixed
                && if x.kind == OpKind::Use {
                    x.vreg == y.vreg
                } else {
                    vcode.classes[x.vreg.0 as usize] == vcode.classes[y.vreg.0 as usize]
                }
        })
}
