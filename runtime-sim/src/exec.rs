//! The interpreter: the scheduling of a CTA's warps and the issue loop of a
//! warp (lowest-PC group, guard, control bits, step limit, strict hazards,
//! statistics), with its fast paths (full-warp threaded code, translated
//! one-lane code). One instruction runs through `dispatch::execute`.

use crate::dispatch::execute;
use crate::jit;
use crate::machine::{lanes, Cta, CtaBarrier, Warp};
use crate::mem_ops;
use crate::memory::{ConstBanks, Global};
use crate::ops::Op;
use crate::profile::{Profile, TimelineEvent, TIMELINE_LIMIT};
use crate::program::{Exec, Program, RETURN_SENTINEL};
use crate::regs::Regs;
use crate::site::{Flow, Site};
use crate::sm_trace::{record_in, WarpTrace};
use crate::threaded::Fast;
use crate::trap::{Trap, TrapKind};

/// Launch-wide context of the interpreter.
pub(crate) struct Ctx<'a> {
    pub prog: &'a Program,
    pub cb: &'a ConstBanks,
    /// Full-warp fast forms by instruction index (empty: none).
    pub threaded: &'a [Option<Fast>],
    /// Run full warps' threaded code in the issue loop's inner loop.
    pub issue_loop: bool,
    pub mem: Global<'a>,
    pub kernel: &'a str,
    pub grid: [u32; 3],
    pub block: [u32; 3],
    pub trace: bool,
    pub steps: u64,
    pub step_limit: u64,
    /// Counters.
    pub issued: u64,
    pub lane_insts: u64,
    /// Warp-instructions per opcode form (index into `ursa_emit::ISA.forms`).
    pub per_form: Vec<u64>,
    /// Cycles of the CTAs already finished (the clock base of this CTA).
    pub clock_base: u64,
    /// Per-instruction profile, when asked for.
    pub profile: Option<Box<Profile>>,
    /// Record a timeline event per issue (needs `profile`).
    pub timeline: bool,
    /// Linear index of the CTA being run (for the timeline).
    pub cta_index: u64,
    /// Translation to host code is on (jit/): the per-run counters of
    /// translated block executions, and the arrivals at an entry that
    /// translate its region (`LaunchConfig::jit_threshold`).
    pub jit: Option<(Vec<u64>, u32)>,
    /// The SM timing model is on: the trace of the CTA being run.
    pub record: Option<Box<crate::sm_trace::Recorder>>,
}

/// Instructions a warp may issue before the scheduler moves to the next one.
const QUANTUM: u32 = 4096;

impl Ctx<'_> {
    pub(crate) fn trap(&self, kind: TrapKind, cta: [u32; 3], warp: u32, lane: Option<u32>, pc: u64) -> Trap {
        Trap {
            kind,
            kernel: self.kernel.to_string(),
            cta: Some(cta),
            warp: Some(warp),
            lane,
            pc: Some(pc),
            function: self.prog.locate(pc).map(|(f, off)| (f.name.clone(), off)),
            inst: self.prog.disassemble_at(pc),
            source: self.prog.source_line(pc),
        }
    }

    /// Runs a CTA to completion.
    pub fn run_cta(&mut self, cta: &mut Cta) -> Result<u64, Trap> {
        loop {
            let mut progress = false;
            let mut done = true;
            for w in 0..cta.warps.len() {
                if cta.warps[w].finished() {
                    continue;
                }
                done = false;
                let (n, barrier_event) = self.run_warp(cta, w)?;
                // A barrier event without an issued instruction is lanes that
                // returned to the host (RETURN_SENTINEL) and ended: progress
                // too, e.g. after a RET that closed the previous quantum.
                if n > 0 || barrier_event {
                    progress = true;
                }
                if barrier_event {
                    cta.update_barriers();
                }
            }
            if done {
                return Ok(cta.warps.iter().map(|w| w.clock.next_issue).max().unwrap_or(0));
            }
            if !progress {
                cta.update_barriers();
                if cta.warps.iter().any(|w| w.ready != 0) {
                    continue;
                }
                return Err(self.deadlock(cta));
            }
        }
    }

    fn deadlock(&self, cta: &Cta) -> Trap {
        // Group the waiting lanes of each warp by what they wait for and where
        // (a waiting lane's PC is already past its BSYNC / BAR.SYNC).
        let mut parts = Vec::new();
        for w in &cta.warps {
            let mut groups: Vec<(bool, u8, u64, u32)> = Vec::new();
            for (bar, mask) in [(false, w.wait_bsync), (true, w.wait_bar)] {
                for l in lanes(mask) {
                    let key = (bar, w.wait_id[l], w.pc[l].wrapping_sub(16));
                    match groups.iter_mut().find(|g| (g.0, g.1, g.2) == key) {
                        Some(g) => g.3 |= 1 << l,
                        None => groups.push((key.0, key.1, key.2, 1 << l)),
                    }
                }
            }
            for (bar, id, pc, mask) in groups {
                let b = id as usize;
                parts.push(if bar {
                    format!("warp {} lanes {:08x} wait at BAR.SYNC {} (0x{:x}; {} threads arrived)", w.id, mask, b, pc, cta.bars[b].arrived)
                } else {
                    format!(
                        "warp {} lanes {:08x} wait at BSYNC B{} (0x{:x}; members {:08x} in their view, region closing at 0x{:x})",
                        w.id,
                        mask,
                        b,
                        pc,
                        w.b[b][mask.trailing_zeros() as usize],
                        w.bssy_target[b]
                    )
                });
            }
        }
        let first = cta.warps.iter().find(|w| w.wait_bsync | w.wait_bar != 0);
        let (warp, lane, pc) = match first {
            Some(w) => {
                let l = (w.wait_bsync | w.wait_bar).trailing_zeros() as usize;
                (Some(w.id), Some(l as u32), Some(w.pc[l].wrapping_sub(16)))
            }
            None => (None, None, None),
        };
        let shown: Vec<String> = parts.iter().take(16).cloned().collect();
        let more = if parts.len() > 16 { format!("; and {} more groups", parts.len() - 16) } else { String::new() };
        Trap {
            kind: TrapKind::Deadlock(format!("no thread can make progress: {}{}", shown.join("; "), more)),
            kernel: self.kernel.to_string(),
            cta: Some(cta.id),
            warp,
            lane,
            pc,
            function: pc.and_then(|pc| self.prog.locate(pc).map(|(f, off)| (f.name.clone(), off))),
            inst: pc.and_then(|pc| self.prog.disassemble_at(pc)),
            source: pc.and_then(|pc| self.prog.source_line(pc)),
        }
    }

    /// Whether warp `warp` of a CTA with `nwarps` warps may run in
    /// translated code now (translation on and `jit::ready`).
    #[inline(always)]
    fn jit_ready(&self, nwarps: usize, warp: &Warp, steps: u64) -> bool {
        self.jit.is_some() && jit::ready(nwarps, warp, steps, self.step_limit)
    }

    /// Runs the lane of `warp` in translated code (`jit::run`).
    fn jit_run(
        &mut self,
        cta: [u32; 3],
        warp: &mut Warp,
        shared: &mut Vec<u8>,
        bars: &mut [CtaBarrier; 16],
        steps: u64,
    ) -> Result<(u64, u64), Trap> {
        let (counts, threshold) = self.jit.as_mut().expect("checked by jit_ready");
        let site = Site { grid: self.grid, block: self.block, cta, clock: self.clock_base, shared, bars, record: None };
        match jit::run(self.prog, self.cb, &mut self.mem, site, counts, *threshold, warp, steps, self.step_limit) {
            Ok(r) => Ok(r),
            Err((f, pc)) => Err(self.trap(f.kind, cta, warp.id, f.lane, pc)),
        }
    }

    /// Warp-instructions per opcode form, with those of translated blocks.
    pub(crate) fn take_per_form(&mut self) -> Vec<u64> {
        if let Some((counts, _)) = self.jit.as_mut() {
            jit::add_block_counts(self.prog, counts, &mut self.per_form);
        }
        std::mem::take(&mut self.per_form)
    }

    /// Issues instructions of warp `w` until it blocks, exits, yields or
    /// uses its quantum. Returns the number issued and whether a CTA barrier
    /// may have to be re-checked.
    fn run_warp(&mut self, cta: &mut Cta, w: usize) -> Result<(u32, bool), Trap> {
        let Cta { id, warps, shared, bars, .. } = cta;
        let nwarps = warps.len();
        let warp = &mut warps[w];
        let prog = self.prog;
        let mut n = 0u32;
        let mut barrier_event = false;
        // The counters live in locals for the loop (they stay in registers)
        // and are written back on every way out.
        let (mut steps, mut issued, mut lane_insts) = (self.steps, 0u64, 0u64);
        macro_rules! flush {
            () => {
                self.steps = steps;
                self.issued += issued;
                self.lane_insts += lane_insts;
            };
        }
        // After translated code returns, the interpreter runs at least one
        // instruction (the one the code left to it) before it is entered again.
        let mut interpret_next = false;
        // Nothing is observed per issue (no profile, trace or hazard check):
        // a full warp may run its threaded code in the inner loop below.
        // (The SM model's trace records these issues too: none has an access.)
        let plain = self.profile.is_none() && !self.trace && warp.hazards.is_none() && self.issue_loop;
        while n < QUANTUM {
            if warp.dirty && !warp.regroup() {
                break;
            }
            if !interpret_next && self.jit_ready(nwarps, warp, steps) {
                let (ran, lanes) = match self.jit_run(*id, warp, shared, bars, steps) {
                    Ok(r) => r,
                    Err(t) => {
                        flush!();
                        return Err(t);
                    }
                };
                steps += ran;
                issued += ran;
                lane_insts += lanes;
                n = n.saturating_add(ran.min(QUANTUM as u64) as u32);
                interpret_next = true;
                continue;
            }
            interpret_next = false;
            if plain && warp.group == u32::MAX {
                // All 32 lanes at one PC (so no other lane is ready and the
                // group stays whole along straight code and uniform
                // branches): issue instructions with threaded forms whose
                // guard is true or false for the whole warp, with the
                // bookkeeping of the general path below. Anything else
                // leaves the loop and takes the general path.
                let mut pc = warp.group_pc;
                let mut yielded = false;
                // The warp's trace in the SM model, looked up once for the
                // loop, not at every issue (and the log2 of its sector size).
                let shift = self.record.as_ref().map_or(0, |r| r.sector_shift);
                let mut trace = self.record.as_deref_mut().map(|r| &mut r.warps[w]);
                // One counter in the loop, `steps`: it stops at the step
                // limit (the general path below then traps) or at the end
                // of the quantum; the issues and lanes follow from it and
                // the issues whose guard is false for every lane (`skipped`).
                let (first, stop) = (steps, self.step_limit.min(steps.saturating_add((QUANTUM - n) as u64)));
                let mut skipped = 0u64;
                while steps < stop {
                    let Some(i) = prog.index(pc) else { break };
                    let Some(f) = self.threaded.get(i).and_then(Option::as_ref) else {
                        // A 32-bit global load or store of the whole warp,
                        // here when it completes in `global_word`, with the
                        // bookkeeping of the general path.
                        let e = &prog.code[i];
                        if !global_word(&mut self.mem, e, &mut warp.regs, trace.as_deref_mut(), shift) {
                            break;
                        }
                        steps += 1;
                        warp.clock.issue(e.ctrl, e.lat, e.variable);
                        if let Some(c) = self.per_form.get_mut(e.form as usize) {
                            *c += 1;
                        }
                        if let Some(t) = trace.as_deref_mut() {
                            record_in(&mut t.recs, i, u32::MAX);
                        }
                        pc += 16;
                        if e.ctrl.yield_ {
                            yielded = true;
                            break;
                        }
                        continue;
                    };
                    let g = if f.unguarded { u32::MAX } else { warp.regs.pin::<32>(f.guard) };
                    if g != u32::MAX && g != 0 {
                        break;
                    }
                    steps += 1;
                    if f.clock_step != 0 {
                        // (`WarpClock::issue` without scoreboards.)
                        warp.clock.next_issue += f.clock_step as u64;
                    } else {
                        warp.clock.issue(f.ctrl, f.lat, f.variable);
                    }
                    if let Some(c) = self.per_form.get_mut(f.form as usize) {
                        *c += 1;
                    }
                    if let Some(t) = trace.as_deref_mut() {
                        record_in(&mut t.recs, i, g);
                    }
                    pc = if g == 0 {
                        skipped += 1;
                        pc + 16
                    } else {
                        match f.jump {
                            Some(target) => target,
                            None => {
                                (f.run)(&mut warp.regs, f);
                                pc + 16
                            }
                        }
                    };
                    if f.ctrl.yield_ {
                        yielded = true;
                        break;
                    }
                }
                let ran = steps - first;
                n += ran as u32;
                issued += ran;
                lane_insts += 32 * (ran - skipped);
                warp.group_pc = pc;
                if yielded || n >= QUANTUM {
                    break;
                }
            }
            let pc = warp.group_pc;
            let Some(idx) = prog.index(pc) else {
                if pc == RETURN_SENTINEL {
                    // A device-function call returned to the host: the lanes end.
                    let g = warp.group;
                    warp.ready &= !g;
                    warp.exited |= g;
                    warp.dirty = true;
                    barrier_event = true;
                    continue;
                }
                let lane = warp.group.trailing_zeros();
                flush!();
                return Err(self.trap(TrapKind::BadPc(pc), *id, warp.id, Some(lane), pc));
            };
            let e: &Exec = &prog.code[idx];
            steps += 1;
            if steps > self.step_limit {
                let lane = warp.group.trailing_zeros();
                flush!();
                return Err(self.trap(TrapKind::StepLimit(self.step_limit), *id, warp.id, Some(lane), pc));
            }
            n += 1;
            let ready = warp.clock.next_issue;
            let t = warp.clock.issue(e.ctrl, e.lat, e.variable);
            if let Some(h) = warp.hazards.as_mut() {
                let u = &prog.uses[idx];
                let dynamic = u.dynamic.and_then(|d| d.resolve(warp.regs.ur[d.base as usize]));
                if let Err(hazard) = h.check(u, dynamic, e.ctrl, t, e.lat, e.variable, pc) {
                    flush!();
                    return Err(self.trap(TrapKind::Hazard(hazard), *id, warp.id, None, pc));
                }
            }
            let a = warp.group;
            let g = warp.regs.pin::<32>(e.guard);
            let exec_mask = if e.uniform {
                if g & 1 != 0 {
                    a
                } else {
                    0
                }
            } else {
                a & g
            };
            if let Some(p) = self.profile.as_deref_mut() {
                let ip = &mut p.insts[idx];
                ip.issues += 1;
                ip.lanes += exec_mask.count_ones() as u64;
                ip.active_lanes += a.count_ones() as u64;
                ip.scoreboard_stall += t - ready;
                ip.fixed_stall += e.ctrl.stall.max(1) as u64 - 1;
                ip.divergence_idle_lanes += (warp.exists & !warp.exited & !a).count_ones() as u64;
                if self.timeline {
                    if p.timeline.len() < TIMELINE_LIMIT {
                        p.timeline.push(TimelineEvent {
                            cta: self.cta_index,
                            warp: warp.id,
                            pc,
                            cycle: t,
                            cycles: e.ctrl.stall.max(1) as u32,
                            lanes: exec_mask.count_ones(),
                            sm: None,
                            stall: None,
                        });
                    } else {
                        p.timeline_dropped += 1;
                    }
                }
            }
            if self.trace {
                eprintln!(
                    "[cta {:?} warp {} cycle {}] {:#x} A={:08x} E={:08x}: {}",
                    id,
                    warp.id,
                    t,
                    pc,
                    a,
                    exec_mask,
                    prog.disassemble_at(pc).unwrap_or_default()
                );
            }
            issued += 1;
            // Full warps and lone lanes without a population count.
            lane_insts += if exec_mask == u32::MAX {
                32
            } else if exec_mask & exec_mask.wrapping_sub(1) == 0 {
                (exec_mask != 0) as u64
            } else {
                exec_mask.count_ones() as u64
            };
            if let Some(c) = self.per_form.get_mut(e.form as usize) {
                *c += 1;
            }
            if let Some(r) = self.record.as_deref_mut() {
                let gen = if let Op::Bar { id, .. } = e.op { bars[id as usize & 15].gen } else { 0 };
                r.record(w, idx, &e.op, exec_mask, gen);
            }
            let record = self.record.as_deref_mut();
            let mut site = Site { grid: self.grid, block: self.block, cta: *id, clock: self.clock_base + t, shared, bars, record };
            let fast = if exec_mask == u32::MAX { self.threaded.get(idx).and_then(Option::as_ref) } else { None };
            let result = match fast {
                Some(Fast { jump: Some(target), .. }) => Ok(Flow::Jump(*target)),
                Some(f) => {
                    (f.run)(&mut warp.regs, f);
                    Ok(Flow::Next)
                }
                None => execute(e, warp, &mut site, self.cb, &mut self.mem, a, exec_mask, pc, idx, prog),
            };
            let flow = match result {
                Ok(f) => f,
                Err(f) => {
                    flush!();
                    return Err(self.trap(f.kind, *id, warp.id, f.lane, pc));
                }
            };
            match flow {
                Flow::Next => warp.advance(pc + 16),
                Flow::Jump(target) => {
                    if exec_mask == a {
                        warp.advance(target);
                    } else if exec_mask == 0 {
                        warp.advance(pc + 16);
                    } else {
                        warp.diverge(lanes(exec_mask).map(|l| (l, target)), a & !exec_mask, pc + 16);
                    }
                }
                Flow::Regroup => {
                    warp.dirty = true;
                    if matches!(e.op, Op::Bar { .. } | Op::Exit) {
                        barrier_event = true;
                    }
                }
            }
            if e.ctrl.yield_ {
                break;
            }
        }
        flush!();
        Ok((n, barrier_event))
    }
}

/// The full-warp loop's 32-bit global load or store: runs the instruction
/// `e` when its guard is true for all 32 lanes and it completes in
/// `mem_ops::word_shaped` (an address register pair of a simple shape,
/// no fault), its access recorded in the warp's trace `trace` (`shift`:
/// log2 of the sector size) under the SM model. False, with nothing
/// changed, otherwise (the general path runs it). Out of line: the loop's
/// other instructions keep their registers.
#[inline(never)]
fn global_word(mem: &mut Global, e: &Exec, regs: &mut Regs, trace: Option<&mut WarpTrace>, shift: u32) -> bool {
    if e.uniform || regs.pin::<32>(e.guard) != u32::MAX {
        return false;
    }
    let Global::Own(global) = mem else { return false };
    mem_ops::word_shaped(&e.op, regs, global, trace.map(|t| (t, shift)))
}
