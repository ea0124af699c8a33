//! Translation to host code for the one-lane case (a device-function call,
//! or any single-warp CTA whose warp has one READY lane): regions of the
//! simulator's pre-decoded instructions become host functions through
//! Cranelift's JIT, the way GPU Ocelot translated PTX to host code.
//!
//! - `region.rs` finds what a region holds (basic blocks reachable from an
//!   entry by direct branches and calls) and classifies each instruction;
//! - `translate.rs` emits the Cranelift IR;
//! - `state.rs` is the interface of the generated code (its state, its type);
//! - `cache.rs` keeps the translations of a [`Program`];
//! - this file translates a region once a lane has reached its entry PC
//!   `LaunchConfig::jit_threshold` times, and runs
//!   it for the interpreter loop (`exec.rs`), with the calls back into the
//!   interpreter's semantics (`dispatch.rs`).
//!
//! The translated code works on the warp's own register file (the lane's
//! column), runs the issue-clock model and counts steps per block, and
//! leaves to the interpreter at any instruction it does not handle, at the
//! step limit and on a fault; instructions outside its integer core run in
//! place through the interpreter's own semantics (`run_one`), so results,
//! traps and statistics are those of the interpreter. See
//! docs/sim-translation.md.

pub(crate) mod cache;
mod region;
mod state;
mod translate;

use std::ffi::c_void;
use std::time::Instant;

use cranelift_codegen::ir::{types, AbiParam, UserFuncName};
use cranelift_jit::{JITBuilder, JITModule};
use cranelift_module::{Linkage, Module};

use crate::dispatch::execute;
use crate::machine::{CtaBarrier, Warp};
use crate::memory::{ConstBanks, Global};
use crate::program::Program;
use crate::site::{Flow, Site};
use crate::trap::{Fault, TrapKind};
use cache::Inner;
use state::{RegionFn, State};

/// What `run_one` needs to run an instruction with the interpreter's semantics.
struct Env {
    prog: *const Program,
    warp: *mut Warp,
    shared: *mut Vec<u8>,
    bars: *mut [CtaBarrier; 16],
    cb: *const ConstBanks,
    mem: *mut Global<'static>,
    grid: [u32; 3],
    block: [u32; 3],
    cta: [u32; 3],
    clock_base: u64,
    fault: Option<Fault>,
}

/// The translation of the region at `entry`, made when a lane reaches
/// `entry` for the `threshold`-th time (None before, and where translation
/// failed), and the number of blocks known (for the per-run counters).
fn region_fn(prog: &Program, entry: usize, threshold: u32) -> (Option<RegionFn>, usize) {
    let mut g = prog.jit.lock();
    if let Some(f) = g.entries.get(&entry) {
        return (*f, g.block_forms.len());
    }
    if threshold > 1 {
        let n = g.arrivals.entry(entry).or_insert(0);
        *n += 1;
        if *n < threshold {
            return (None, g.block_forms.len());
        }
        g.arrivals.remove(&entry);
    }
    let start = Instant::now();
    let f = g.compile(prog, entry);
    g.stats.time += start.elapsed();
    if f.is_none() {
        g.stats.failures += 1;
    }
    g.entries.insert(entry, f);
    (f, g.block_forms.len())
}

impl Inner {
    fn compile(&mut self, prog: &Program, entry: usize) -> Option<RegionFn> {
        if self.module.is_none() {
            let b = JITBuilder::with_flags(&[("opt_level", "speed")], cranelift_module::default_libcall_names()).ok()?;
            self.module = Some(JITModule::new(b));
        }
        let module = self.module.as_mut()?;
        let region = region::discover(prog, entry);
        let first_block = self.block_forms.len();
        let mut sig = module.make_signature();
        sig.params.push(AbiParam::new(types::I64));
        sig.returns.push(AbiParam::new(types::I64));
        let name = format!("r{}", self.stats.regions + self.stats.failures);
        let id = module.declare_function(&name, Linkage::Local, &sig).ok()?;
        let mut ctx = module.make_context();
        ctx.func.signature = sig;
        ctx.func.name = UserFuncName::user(0, id.as_u32());
        translate::build(&mut ctx.func, module.target_config(), prog, &region, entry, first_block, run_one as *const () as usize);
        module.define_function(id, &mut ctx).ok()?;
        module.finalize_definitions().ok()?;
        let code = module.get_finalized_function(id);
        for blk in &region.blocks {
            self.block_forms.push((blk.start..blk.start + blk.len).map(|i| prog.code[i].form).collect());
        }
        self.stats.regions += 1;
        self.stats.instructions += region.blocks.iter().map(|b| b.len as u64).sum::<u64>();
        // SAFETY: the function was built with this signature.
        Some(unsafe { std::mem::transmute::<*const u8, RegionFn>(code) })
    }
}

/// Steps the interpreter keeps for itself before the step limit: the
/// translated code is not entered closer to it than this.
const LIMIT_MARGIN: u64 = region::MAX_REGION as u64 + 1;

/// Whether translated code may run `warp` now: one warp in the CTA, one
/// READY lane, not near the step limit.
#[inline(always)]
pub(crate) fn ready(nwarps: usize, warp: &Warp, steps: u64, step_limit: u64) -> bool {
    // No other lane waits at a convergence or CTA barrier: the lane is
    // the warp's only live one, so the convergence-barrier instructions
    // change no one's flow and run in host code (`Tx::convergence`).
    nwarps == 1
        && warp.group == warp.ready
        && warp.ready.is_power_of_two()
        && warp.wait_bsync == 0
        && warp.wait_bar == 0
        && step_limit.saturating_sub(steps) > LIMIT_MARGIN
}

/// Runs the lane of `warp` in translated code from its PC, with `steps`
/// warp-instructions issued so far; returns the instructions it issued and
/// the lane-instructions (issues with a true guard). The warp's PC is then
/// where the interpreter goes on. `site.clock` is the clock base of the
/// CTA; `counts` are the per-run counters of block executions;
/// `threshold` is the launch's `jit_threshold` (where the region at the PC
/// is not translated yet, nothing runs: `Ok((0, 0))`). A fault comes back
/// with its lane and PC.
#[allow(clippy::too_many_arguments)]
pub(crate) fn run(
    prog: &Program,
    cb: &ConstBanks,
    mem: &mut Global,
    site: Site,
    counts: &mut Vec<u64>,
    threshold: u32,
    warp: &mut Warp,
    steps: u64,
    step_limit: u64,
) -> Result<(u64, u64), (Fault, u64)> {
    let Some(entry) = prog.index(warp.group_pc) else { return Ok((0, 0)) };
    let (f, nblocks) = region_fn(prog, entry, threshold);
    let Some(f) = f else { return Ok((0, 0)) };
    if counts.len() < nblocks {
        counts.resize(nblocks, 0);
    }
    let lane = warp.group.trailing_zeros() as usize;
    let size = warp.local_size as usize;
    let local = if warp.local.is_empty() { std::ptr::null_mut() } else { warp.local[lane * size..].as_mut_ptr() };
    let mut env = Env {
        prog,
        warp,
        shared: site.shared,
        bars: site.bars,
        cb,
        mem: mem as *mut Global as *mut Global<'static>,
        grid: site.grid,
        block: site.block,
        cta: site.cta,
        clock_base: site.clock,
        fault: None,
    };
    // Every pointer below comes from `env.warp`, the one handle on the
    // warp while the translated code runs.
    let w = env.warp;
    let mut st = unsafe {
        State {
            r: (*w).regs.r.as_mut_ptr().cast::<u32>().add(lane),
            p: (*w).regs.p.as_mut_ptr(),
            ur: (*w).regs.ur.as_mut_ptr(),
            up: (*w).regs.up.as_mut_ptr(),
            b: (*w).b.as_mut_ptr().cast::<u32>().add(lane),
            bssy_target: (*w).bssy_target.as_mut_ptr(),
            exited: &mut (*w).exited,
            counts: counts.as_mut_ptr(),
            env: (&mut env as *mut Env).cast::<c_void>(),
            local,
            local_size: size as u64,
            lane: lane as u64,
            steps,
            limit: step_limit,
            skipped: 0,
            next_issue: (*w).clock.next_issue,
            sb: (*w).clock.sb_ready,
        }
    };
    // SAFETY: the state's pointers are valid for the call; the code
    // only touches the lane's registers, its local memory and `st`.
    let pc = unsafe { f(&mut st) };
    let warp = unsafe { &mut *w };
    let ran = st.steps - steps;
    if let Some(mut fault) = env.fault.take() {
        fault.lane = fault.lane.or(Some(lane as u32));
        return Err((fault, pc));
    }
    warp.clock.next_issue = st.next_issue;
    warp.clock.sb_ready = st.sb;
    warp.group_pc = pc;
    Ok((ran, ran - st.skipped))
}

/// Adds the executions of translated blocks in `counts` (cleared) to the
/// warp-instructions per opcode form.
pub(crate) fn add_block_counts(prog: &Program, counts: &mut [u64], per_form: &mut [u64]) {
    let g = prog.jit.lock();
    for (b, n) in counts.iter_mut().enumerate() {
        if *n > 0 {
            for &f in &g.block_forms[b] {
                if let Some(c) = per_form.get_mut(f as usize) {
                    *c += *n;
                }
            }
            *n = 0;
        }
    }
}

/// Runs instruction `idx` for the lane with the interpreter's semantics
/// (called from translated code when the guard is true). Returns 0, or 1
/// after a fault (kept in the environment for the trap report).
extern "C" fn run_one(state: *mut State, idx: u64, t: u64) -> u32 {
    // SAFETY: called by translated code with the state `jit_run` built.
    let st = unsafe { &mut *state };
    let env = unsafe { &mut *st.env.cast::<Env>() };
    let (prog, warp, cb, mem) = unsafe { (&*env.prog, &mut *env.warp, &*env.cb, &mut *env.mem) };
    let idx = idx as usize;
    let pc = region::pc_of(idx);
    let e = 1u32 << st.lane;
    let mut site = Site {
        grid: env.grid,
        block: env.block,
        cta: env.cta,
        clock: env.clock_base + t,
        shared: unsafe { &mut *env.shared },
        bars: unsafe { &mut *env.bars },
        record: None,
    };
    let r = execute(&prog.code[idx], warp, &mut site, cb, mem, e, e, pc, idx, prog);
    if !warp.local.is_empty() {
        let size = warp.local_size as usize;
        st.local = warp.local[st.lane as usize * size..].as_mut_ptr();
    }
    match r {
        Ok(Flow::Next) => 0,
        Ok(_) => {
            env.fault = Some(Fault::from(TrapKind::Launch(format!(
                "internal error: the translator ran a control instruction at {:#x} in place",
                pc
            ))));
            1
        }
        Err(f) => {
            env.fault = Some(f);
            1
        }
    }
}
