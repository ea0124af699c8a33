//! The host API: a device with global memory, kernel launches with their
//! configuration (the [`Engine`] among it) and arguments (laid out per
//! docs/abi.md). What a launch measured ([`Stats`]) is in `profile`.

use crate::exec::Ctx;
use crate::machine::{Cta, CtaBarrier, Warp};
use crate::machine_desc::MachineDesc;
use crate::memory::{ConstBanks, Global, GlobalMemory};
use crate::profile::{Profile, Stats};
use crate::program::{FunctionInfo, Program, RETURN_SENTINEL};
use crate::regs::LANES;
use crate::trap::{Trap, TrapKind};
use ursa_emit::elf;

/// Offsets in constant bank 0 (docs/abi.md).
pub mod abi {
    /// NTID.x, .y, .z (u32 each).
    pub const NTID: u16 = 0x000;
    /// NCTAID.x, .y, .z (u32 each).
    pub const NCTAID: u16 = 0x00C;
    /// Shared memory bytes per CTA (u32).
    pub const SHMEM_SIZE: u16 = 0x018;
    /// Local memory bytes per thread (u32).
    pub const LOCAL_SIZE: u16 = 0x01C;
    /// Start of the kernel parameters.
    pub const PARAMS: u16 = 0x160;
    /// The stack pointer register, set to LOCAL_SIZE at kernel entry.
    pub const SP: usize = 1;
    /// First argument / return register of a device-function call.
    pub const ARG0: usize = 4;
    /// Link register pair of a device-function call.
    pub const LINK: usize = 20;
}

/// Default limit on warp-instructions per launch.
pub const DEFAULT_STEP_LIMIT: u64 = 200_000_000;

/// Most shared memory one CTA can have, static and dynamic (bytes; the
/// 163 KiB of an sm_80 CTA, rounded down to 160 KiB).
pub const MAX_SHARED_PER_CTA: u32 = 160 * 1024;

/// Default limit on the memory one CTA of a launch may use: its shared
/// memory plus the local memory (stack) of its threads, in bytes.
pub const DEFAULT_MEMORY_LIMIT: u64 = 4 << 30;

/// How to run a kernel.
#[derive(Clone, Debug)]
pub struct LaunchConfig {
    /// CTAs in the grid (x, y, z).
    pub grid: [u32; 3],
    /// Threads per CTA (x, y, z).
    pub block: [u32; 3],
    /// Stop with a StepLimit trap after this many warp-instructions (None: no limit).
    pub step_limit: Option<u64>,
    /// Report a Hazard trap when the control bits do not cover a dependence.
    pub strict: bool,
    /// Print every issued instruction to stderr.
    pub trace: bool,
    /// Dynamic shared memory added to the kernel's own (bytes per CTA).
    pub shared_size: u32,
    /// Minimum local memory (stack) per thread; the kernel's own size is used if larger.
    pub local_size: u32,
    /// Contents of constant banks 1–63, if any.
    pub const_banks: Vec<(u8, Vec<u8>)>,
    /// Refuse the launch if one CTA needs more than this many bytes of shared
    /// plus local memory (None: no limit). Local memory is allocated on a
    /// warp's first local access, so the limit bounds what a launch can take.
    pub memory_limit: Option<u64>,
    /// Collect a per-instruction [`Profile`](crate::Profile) into
    /// [`Stats::profile`]. CTAs then run one after another, so that a trap
    /// comes with the profile of exactly what ran before it
    /// ([`Gpu::launch_profiled`]).
    pub profile: bool,
    /// Also record a per-warp timeline of issues in the profile (implies
    /// `profile`; CTAs then run one after another).
    pub timeline: bool,
    /// How instructions are executed (all fast paths on by default; the
    /// translation to host code is described in docs/sim-translation.md).
    pub engine: Engine,
    /// Time the launch with the SM timing model of this machine
    /// (docs/timing.md) instead of the per-warp issue model
    /// (docs/latencies.md); `Stats::cycles` is then its launch duration and
    /// `Stats::sm` its measurements. CTAs then run one after another on the
    /// interpreter, as the model places them.
    pub machine: Option<std::sync::Arc<MachineDesc>>,
    /// With [`Engine::Jit`]: the number of times a lane must reach an
    /// instruction (from the interpreter) before the region starting there is
    /// translated to host code. Translating costs far more than interpreting
    /// code once (docs/performance.md, 5.1.2), so cold code stays
    /// interpreted; 1 translates every region on first use (what the
    /// differential tests use to run as much code as possible translated).
    /// Counts belong to the [`Program`] and persist across launches.
    pub jit_threshold: u32,
}

/// [`LaunchConfig::jit_threshold`]'s default: a loop is translated in its
/// 64th iteration.
pub const DEFAULT_JIT_THRESHOLD: u32 = 64;

/// How the simulator executes instructions: the interpreter and, one on top
/// of the other, its fast paths. A fast path never changes results, traps or
/// statistics, only speed; a slower engine is for measuring a fast path and
/// for the differential tests (`runtime-sim/tests/fast_paths.rs`,
/// `runtime-sim/tests/jit.rs`, `ursa test --jit-check`), which run programs
/// both ways.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
pub enum Engine {
    /// The general semantics of every instruction, for the lanes of a group.
    Interpreter,
    /// Plus full-warp threaded code (`threaded.rs`): an instruction all 32
    /// lanes execute runs a function chosen for it at launch, with its
    /// operands resolved, instead of the general semantics.
    Threaded,
    /// Plus the issue loop's inner loop for full warps (`exec.rs`): while all
    /// 32 lanes are at one PC and no profile, trace or strict check is asked
    /// for, instructions with threaded forms whose guard is all true or all
    /// false are issued back to back (the same step count, cycles and
    /// statistics), without recomputing the group.
    IssueLoop,
    /// Plus translation to host code (`jit/`; docs/performance.md, "One
    /// lane") for single-lane, single-warp CTAs (a device-function call).
    /// Only when no strict checking, trace or profile is asked for: those
    /// stay on the interpreter.
    #[default]
    Jit,
}

impl Default for LaunchConfig {
    fn default() -> Self {
        LaunchConfig {
            grid: [1, 1, 1],
            block: [1, 1, 1],
            step_limit: Some(DEFAULT_STEP_LIMIT),
            strict: false,
            trace: false,
            shared_size: 0,
            local_size: 0,
            const_banks: Vec::new(),
            memory_limit: Some(DEFAULT_MEMORY_LIMIT),
            profile: false,
            timeline: false,
            engine: Engine::default(),
            machine: None,
            jit_threshold: DEFAULT_JIT_THRESHOLD,
        }
    }
}

/// A kernel argument.
#[derive(Clone, Debug, PartialEq)]
pub enum Arg {
    U32(u32),
    U64(u64),
    I32(i32),
    I64(i64),
    F32(f32),
    F64(f64),
    /// A global-memory address.
    Ptr(u64),
    /// Raw bytes (a by-value struct).
    Bytes(Vec<u8>),
}

impl Arg {
    /// The little-endian bytes of the argument.
    pub fn bytes(&self) -> Vec<u8> {
        match self {
            Arg::U32(v) => v.to_le_bytes().to_vec(),
            Arg::I32(v) => v.to_le_bytes().to_vec(),
            Arg::F32(v) => v.to_le_bytes().to_vec(),
            Arg::U64(v) | Arg::Ptr(v) => v.to_le_bytes().to_vec(),
            Arg::I64(v) => v.to_le_bytes().to_vec(),
            Arg::F64(v) => v.to_le_bytes().to_vec(),
            Arg::Bytes(b) => b.clone(),
        }
    }

    /// What the argument holds, to match a typed parameter
    /// ([`elf::Param::accepts`]); raw bytes have no type.
    pub fn kind(&self) -> elf::ParamKind {
        match self {
            Arg::U32(_) | Arg::I32(_) | Arg::U64(_) | Arg::I64(_) => elf::ParamKind::Int,
            Arg::F32(_) | Arg::F64(_) => elf::ParamKind::Float,
            Arg::Ptr(_) => elf::ParamKind::Ptr,
            Arg::Bytes(_) => elf::ParamKind::Bytes,
        }
    }

    /// Alignment when no parameter table is given: `min(size, 8)` rounded up
    /// to a power of two (the assembler's `.param` rule).
    pub fn align(&self) -> usize {
        param_align(self.bytes().len())
    }
}

/// Alignment of an argument of `size` bytes when no parameter table is
/// given: `min(size, 8)` rounded up to a power of two.
fn param_align(size: usize) -> usize {
    size.clamp(1, 8).next_power_of_two()
}

/// A simulated device.
#[derive(Clone, Default)]
pub struct Gpu {
    pub mem: GlobalMemory,
}

impl Gpu {
    pub fn new() -> Gpu {
        Gpu { mem: GlobalMemory::new() }
    }

    /// Allocates zeroed global memory for sizes the caller fixes (tests,
    /// benchmarks); returns its address. Panics where [`Gpu::try_alloc`]
    /// fails: a size that comes from input goes through `try_alloc`.
    pub fn alloc(&mut self, size: u64, align: u64) -> u64 {
        self.try_alloc(size, align).unwrap_or_else(|t| panic!("{}", t))
    }

    /// Allocates zeroed global memory; its address, or a trap
    /// ([`TrapKind::HostMemory`]) naming the size where the host cannot
    /// allocate it.
    pub fn try_alloc(&mut self, size: u64, align: u64) -> Result<u64, Trap> {
        self.mem.alloc(size, align).map_err(Trap::new)
    }

    /// Frees an allocation by its address; false if there is none.
    pub fn free(&mut self, addr: u64) -> bool {
        self.mem.free(addr)
    }

    /// Copies bytes into global memory.
    pub fn write(&mut self, addr: u64, data: &[u8]) -> Result<(), Trap> {
        self.mem.bytes(addr, data.len() as u64).map_err(Trap::new)?.copy_from_slice(data);
        Ok(())
    }

    /// Copies bytes out of global memory.
    pub fn read(&mut self, addr: u64, len: u64) -> Result<Vec<u8>, Trap> {
        Ok(self.mem.bytes(addr, len).map_err(Trap::new)?.to_vec())
    }

    /// Runs a kernel to completion.
    pub fn launch(&mut self, program: &Program, kernel: &str, cfg: &LaunchConfig, args: &[Arg]) -> Result<Stats, Trap> {
        self.launch_profiled(program, kernel, cfg, args).map_err(|(t, _)| t)
    }

    /// [`Gpu::launch`] that, where the run traps and a profile or a timeline
    /// was asked for (`LaunchConfig::profile`, `timeline`), also returns
    /// what it did before the trap: the statistics of the CTAs that started
    /// and the profile up to the trapping instruction.
    #[allow(clippy::type_complexity)]
    pub fn launch_profiled(
        &mut self,
        program: &Program,
        kernel: &str,
        cfg: &LaunchConfig,
        args: &[Arg],
    ) -> Result<Stats, (Trap, Option<Box<Stats>>)> {
        let bad = |m: String| {
            let mut t = Trap::new(TrapKind::Launch(m));
            t.kernel = kernel.to_string();
            t
        };
        let f = program.function(kernel).ok_or_else(|| (bad(format!("no function named `{}`", kernel)), None))?;
        if !f.kernel {
            return Err((bad(format!("`{}` is a device function, not a kernel", kernel)), None));
        }
        let params = layout_params(f, args.iter().map(|a| (a.kind(), a.bytes()))).map_err(|m| {
            let m = match m {
                ArgMismatch::Count => format!("`{}` takes {} parameters, {} arguments given", f.name, f.params.len(), args.len()),
                ArgMismatch::Type { index } => {
                    let (a, p) = (&args[index], &f.params[index]);
                    let is = a.kind().type_name(a.bytes().len() as u32);
                    format!("argument {} ({:?}) is {}, but parameter `{}` of `{}` is {}", index + 1, a, is, p.name, f.name, p.type_name())
                }
            };
            (bad(m), None)
        })?;
        self.launch_block(program, f, cfg, &params)
    }

    /// Runs kernel `f` of `program` with its parameter block already laid
    /// out (`layout_params`): [`Gpu::launch_profiled`] after its checks of
    /// the arguments, which the typed host API (`host`) makes its own way.
    pub(crate) fn launch_block(
        &mut self,
        program: &Program,
        f: &FunctionInfo,
        cfg: &LaunchConfig,
        params: &[u8],
    ) -> Result<Stats, (Trap, Option<Box<Stats>>)> {
        let mut before = None;
        self.run(program, &f.name, f.address, cfg, params, None, &mut before).map(|(s, _)| s).map_err(|t| (t, before))
    }

    /// Calls a device function in one thread with 32-bit arguments in
    /// R4, R5, … and returns R4 … R(4+nret-1) after it returns (docs/abi.md).
    pub fn call(&mut self, program: &Program, function: &str, args: &[u32], nret: usize) -> Result<Vec<u32>, Trap> {
        self.call_with(program, function, args, nret, &LaunchConfig::default()).map(|(r, _)| r)
    }

    /// [`Gpu::call`] with a launch configuration (strict mode, step limit,
    /// stack size; grid and block are ignored: one thread runs). Also returns
    /// the run's statistics.
    pub fn call_with(
        &mut self,
        program: &Program,
        function: &str,
        args: &[u32],
        nret: usize,
        cfg: &LaunchConfig,
    ) -> Result<(Vec<u32>, Stats), Trap> {
        let f = program.function(function).ok_or_else(|| Trap::new(TrapKind::Launch(format!("no function named `{}`", function))))?;
        if abi::ARG0 + args.len().max(nret) > abi::LINK {
            return Err(Trap::new(TrapKind::Launch("too many argument or return registers".into())));
        }
        let cfg = LaunchConfig { grid: [1, 1, 1], block: [1, 1, 1], ..cfg.clone() };
        let (stats, regs) = self.run(program, function, f.address, &cfg, &[], Some(args), &mut None)?;
        Ok((regs[abi::ARG0..abi::ARG0 + nret].to_vec(), stats))
    }

    /// Runs every CTA of a grid. With `call_args`, a single thread starts as
    /// a device-function call and its final R0–R31 are returned. Where a
    /// profiled run traps, `before` receives what it did until then.
    #[allow(clippy::too_many_arguments)]
    fn run(
        &mut self,
        program: &Program,
        name: &str,
        entry: u64,
        cfg: &LaunchConfig,
        params: &[u8],
        call_args: Option<&[u32]>,
        before: &mut Option<Box<Stats>>,
    ) -> Result<(Stats, Vec<u32>), Trap> {
        let bad = |m: String| {
            let mut t = Trap::new(TrapKind::Launch(m));
            t.kernel = name.to_string();
            t
        };
        let f = program.function(name).expect("checked by the caller");
        let (grid, block) = if call_args.is_some() { ([1; 3], [1; 3]) } else { (cfg.grid, cfg.block) };
        let threads: u64 = block.iter().map(|&x| x as u64).product();
        if threads == 0 || threads > 1024 {
            return Err(bad(format!("a CTA must have 1 to 1024 threads, not {}", threads)));
        }
        if grid.contains(&0) {
            return Err(bad("every grid dimension must be at least 1".into()));
        }
        let shmem = f.shared_size.checked_add(cfg.shared_size).ok_or_else(|| bad("shared memory size overflows".into()))?;
        if shmem > MAX_SHARED_PER_CTA {
            return Err(bad(format!(
                "one CTA needs {} bytes of shared memory ({} static + {} dynamic), more than the {} bytes a CTA can have",
                shmem, f.shared_size, cfg.shared_size, MAX_SHARED_PER_CTA
            )));
        }
        let local = f.local_size.max(cfg.local_size);
        let nwarps = threads.div_ceil(LANES as u64);
        // Every warp issues at least one instruction (its EXIT), so a grid
        // with more warps than the step limit can only end in a StepLimit
        // trap: refuse it before creating a single CTA.
        let ctas: u128 = grid.iter().map(|&x| x as u128).product();
        if let Some(limit) = cfg.step_limit {
            if ctas * nwarps as u128 > limit as u128 {
                return Err(bad(format!(
                    "the grid has {} CTAs of {} warps; each warp issues at least one instruction, so it cannot finish within the step limit of {} warp-instructions (raise the step limit to run it)",
                    ctas, nwarps, limit
                )));
            }
        }
        if let Some(limit) = cfg.memory_limit {
            let need = shmem as u128 + local as u128 * nwarps as u128 * LANES as u128;
            if need > limit as u128 {
                return Err(bad(format!(
                    "one CTA needs {} bytes of memory ({} shared + {} local per thread × {} threads of {} warps), more than the memory limit of {} bytes",
                    need,
                    shmem,
                    local,
                    nwarps * LANES as u64,
                    nwarps,
                    limit
                )));
            }
        }
        let mut cb = ConstBanks::new();
        let mut bank0 = vec![0u8; abi::PARAMS as usize + params.len()];
        for i in 0..3 {
            put_u32(&mut bank0, abi::NTID as usize + 4 * i, block[i]);
            put_u32(&mut bank0, abi::NCTAID as usize + 4 * i, grid[i]);
        }
        put_u32(&mut bank0, abi::SHMEM_SIZE as usize, shmem);
        put_u32(&mut bank0, abi::LOCAL_SIZE as usize, local);
        bank0[abi::PARAMS as usize..].copy_from_slice(params);
        if bank0.len() > 0x10000 {
            return Err(bad("kernel parameters do not fit in constant bank 0".into()));
        }
        cb.banks[0] = bank0;
        for (b, data) in &cfg.const_banks {
            if *b == 0 || *b >= 64 || data.len() > 0x10000 {
                return Err(bad(format!("constant bank {} cannot be set (1–63, at most 64 KiB)", b)));
            }
            cb.banks[*b as usize] = data.clone();
        }
        if !program.addresses.is_empty() && !cfg.const_banks.iter().any(|(b, _)| *b == ursa_emit::elf::ADDRESS_BANK) {
            return Err(bad(format!(
                "the program has data objects ({}…), which only a module loaded with `ursa_sim::host::Device::load_module` places in memory",
                program.addresses[0]
            )));
        }
        let nwarps = nwarps as u32;
        let ncta: u64 = u64::try_from(ctas).map_err(|_| bad(format!("a grid of {} CTAs is too large", ctas)))?;
        let limit = cfg.step_limit.unwrap_or(u64::MAX);
        // The GPR rows a CTA's run can leave other than zero: those its
        // instructions name, and those set below.
        let dirty_rows = program.gpr_rows_named().max(abi::SP + 1).max(match call_args {
            Some(args) => (abi::LINK + 2).max(abi::ARG0 + args.len()),
            None => 0,
        });
        // A CTA, its warps' register files made on those `spare` holds
        // (of CTAs that have run: only their dirty rows are cleared).
        let make_cta_from = |idx: u64, spare: &mut Vec<Box<[[u32; LANES]]>>| -> Cta {
            let x = (idx % grid[0] as u64) as u32;
            let y = (idx / grid[0] as u64 % grid[1] as u64) as u32;
            let z = (idx / (grid[0] as u64 * grid[1] as u64)) as u32;
            let mut warps = Vec::with_capacity(nwarps as usize);
            for w in 0..nwarps {
                let in_warp = (threads - w as u64 * 32).min(32) as u32;
                let exists = if in_warp == 32 { u32::MAX } else { (1u32 << in_warp) - 1 };
                let regs = match spare.pop() {
                    Some(r) => crate::regs::Regs::reusing(r, dirty_rows),
                    None => crate::regs::Regs::new(),
                };
                let mut warp = Warp::with_regs(regs, w, exists, entry, local, cfg.strict);
                warp.regs.r[abi::SP] = [local; LANES];
                if let Some(args) = call_args {
                    for (i, a) in args.iter().enumerate() {
                        warp.regs.r[abi::ARG0 + i][0] = *a;
                    }
                    warp.regs.r[abi::LINK][0] = RETURN_SENTINEL as u32;
                    warp.regs.r[abi::LINK + 1][0] = (RETURN_SENTINEL >> 32) as u32;
                }
                warps.push(warp);
            }
            Cta { id: [x, y, z], warps, shared: vec![0; shmem as usize], bars: [CtaBarrier::default(); 16] }
        };
        let make_cta = |idx: u64| make_cta_from(idx, &mut Vec::new());
        // The register files of a CTA that has run, for the next one.
        let give_back = |cta: Cta, spare: &mut Vec<Box<[[u32; LANES]]>>| spare.extend(cta.warps.into_iter().map(|w| w.regs.r));
        let profiling = cfg.profile || cfg.timeline;
        // The SM model: the occupancy of the launch, checked before any CTA runs.
        let sm_model = match &cfg.machine {
            Some(m) => {
                // A kernel's register count, or a device function's it may call if larger.
                let registers = program.functions.iter().filter(|g| g.name == name || !g.kernel).map(|g| g.registers).max().unwrap_or(0);
                let needs = crate::occupancy::CtaNeeds { threads: threads as u32, registers, shared: shmem };
                Some((m.clone(), crate::occupancy::occupancy(m, needs).map_err(bad)?))
            }
            None => None,
        };
        let jit = (cfg.engine >= Engine::Jit && !cfg.strict && !cfg.trace && !profiling && sm_model.is_none())
            .then_some(cfg.jit_threshold.max(1));
        // Threaded code pays off only where a warp can have all 32 lanes.
        let threaded =
            if cfg.engine >= Engine::Threaded && threads >= LANES as u64 { crate::threaded::build(program, &cb) } else { Vec::new() };
        let new_ctx = CtxMaker {
            prog: program,
            cb: &cb,
            threaded: &threaded,
            issue_loop: cfg.engine >= Engine::IssueLoop,
            kernel: name,
            grid,
            block,
            trace: cfg.trace,
            limit,
            profile: profiling,
            timeline: cfg.timeline,
            jit,
        };
        let mut stats = Stats::default();
        let mut final_regs = Vec::new();
        // CTAs run on the threads of the current rayon pool, except when
        // there is one CTA or one thread, when tracing or profiling (one
        // ordered stream; the profile of a trap is of the CTAs before it)
        // and when the kernel reads the clock (a CTA's clock starts where
        // the previous CTA's ended, a sequential notion).
        let parallel = ncta > 1
            && call_args.is_none()
            && !cfg.trace
            && !profiling
            && sm_model.is_none()
            && rayon::current_num_threads() > 1
            && !reads_clock(program);
        // The CTAs that started, and the trap that ended the launch early.
        let mut started = ncta;
        let mut trap = None;
        let (issued, lane_insts, cycles, per_form, profile) = if parallel {
            let lock = std::sync::Mutex::new(std::mem::take(&mut self.mem));
            let r = run_parallel(ncta, limit, &lock, &make_cta, &new_ctx);
            self.mem = lock.into_inner().unwrap_or_else(|p| p.into_inner());
            let (issued, lane_insts, cycles, per_form) = r.map_err(|t| with_memory_limit(t, cfg.memory_limit))?;
            (issued, lane_insts, cycles, per_form, None)
        } else if let Some((m, occ)) = &sm_model {
            // CTAs run on the interpreter in CTA order (the model asks for
            // them in that order, as it places them); the model times their
            // traces. With more than one thread in the pool the interpreter
            // runs ahead on a thread of its own, handing the traces over in
            // order: the same CTAs in the same order, so the same results.
            let mut ctx = new_ctx.make(Global::Own(&mut self.mem));
            ctx.record = Some(Box::new(crate::sm_trace::Recorder::new(m.sector_bytes, m.shared_banks, m.shared_bank_bytes, local)));
            let mut spare = Vec::new();
            let mut run_one = |ctx: &mut crate::exec::Ctx, idx: u64| -> Result<Vec<crate::sm_trace::WarpTrace>, Trap> {
                ctx.cta_index = idx;
                let mut cta = make_cta_from(idx, &mut spare);
                if let Some(r) = ctx.record.as_deref_mut() {
                    r.start(idx, cta.warps.len());
                }
                ctx.clock_base += ctx.run_cta(&mut cta)?;
                if call_args.is_some() {
                    final_regs = (0..32).map(|r| cta.warps[0].regs.r[r][0]).collect();
                }
                give_back(cta, &mut spare);
                Ok(ctx.record.as_deref_mut().map(|r| r.take()).unwrap_or_default())
            };
            let (sm_stats, sm_prof) = if rayon::current_num_threads() > 1 && ncta > 1 {
                let (tx, rx) = std::sync::mpsc::sync_channel(PIPELINE_CTAS);
                std::thread::scope(|scope| {
                    let ctx = &mut ctx;
                    let producer = scope.spawn(move || {
                        for idx in 0..ncta {
                            let r = run_one(ctx, idx);
                            let end = r.is_err();
                            if tx.send(r).is_err() || end {
                                break;
                            }
                        }
                    });
                    let mut next_cta = |idx: u64| -> Option<Vec<crate::sm_trace::WarpTrace>> {
                        match rx.recv() {
                            Ok(Ok(t)) => Some(t),
                            Ok(Err(t)) => {
                                (started, trap) = (idx + 1, Some(t));
                                None
                            }
                            Err(_) => None,
                        }
                    };
                    let r = crate::sm_model::run(m, program, occ, ncta, profiling, cfg.timeline, &mut next_cta);
                    drop(rx);
                    if let Err(p) = producer.join() {
                        std::panic::resume_unwind(p);
                    }
                    r
                })
            } else {
                let mut next_cta = |idx: u64| -> Option<Vec<crate::sm_trace::WarpTrace>> {
                    match run_one(&mut ctx, idx) {
                        Ok(t) => Some(t),
                        Err(t) => {
                            (started, trap) = (idx + 1, Some(t));
                            None
                        }
                    }
                };
                crate::sm_model::run(m, program, occ, ncta, profiling, cfg.timeline, &mut next_cta)
            };
            let mut profile = ctx.profile.take();
            if let (Some(p), Some(sp)) = (profile.as_deref_mut(), sm_prof) {
                for (ip, st) in p.insts.iter_mut().zip(sp.stalls) {
                    ip.stalls = st;
                }
                p.timeline = sp.timeline;
                p.timeline_dropped = sp.timeline_dropped;
            }
            let cycles = sm_stats.cycles;
            stats.sm = Some(Box::new(sm_stats));
            (ctx.issued, ctx.lane_insts, cycles, ctx.take_per_form(), profile)
        } else {
            let mut ctx = new_ctx.make(Global::Own(&mut self.mem));
            let mut spare = Vec::new();
            for idx in 0..ncta {
                ctx.cta_index = idx;
                let mut cta = make_cta_from(idx, &mut spare);
                match ctx.run_cta(&mut cta) {
                    Ok(cycles) => ctx.clock_base += cycles,
                    Err(t) => {
                        (started, trap) = (idx + 1, Some(t));
                        break;
                    }
                }
                if call_args.is_some() {
                    final_regs = (0..32).map(|r| cta.warps[0].regs.r[r][0]).collect();
                }
                give_back(cta, &mut spare);
            }
            (ctx.issued, ctx.lane_insts, ctx.clock_base, ctx.take_per_form(), ctx.profile.take())
        };
        stats.profile = profile.map(|mut p| {
            p.finish(program);
            p
        });
        stats.ctas = started;
        stats.warps = started * nwarps as u64;
        stats.instructions = issued;
        stats.lane_instructions = lane_insts;
        stats.cycles = cycles;
        let mut ctx_per_form = per_form;
        // Forms of one optype are adjacent in the table: sum runs of them and
        // insert each optype once (the map work of a per-optype counter).
        let isa = &ursa_emit::ISA;
        let mut run: Option<(usize, u64)> = None;
        let mut flush = |run: Option<(usize, u64)>| {
            if let Some((o, n)) = run {
                *stats.per_opcode.entry(isa.optypes[o].name.to_string()).or_insert(0) += n;
            }
        };
        for (f, &n) in ctx_per_form.iter().enumerate() {
            if n == 0 {
                continue;
            }
            let o = isa.forms[f].optype as usize;
            match &mut run {
                Some((ro, c)) if *ro == o => *c += n,
                _ => flush(run.replace((o, n))),
            }
        }
        flush(run);
        stats.per_form = std::mem::take(&mut ctx_per_form);
        if let Some(t) = trap {
            if profiling {
                *before = Some(Box::new(stats));
            }
            return Err(with_memory_limit(t, cfg.memory_limit));
        }
        Ok((stats, final_regs))
    }
}

/// A trap that names the launch's memory limit if it is about memory.
fn with_memory_limit(mut t: Trap, memory_limit: Option<u64>) -> Trap {
    if let TrapKind::HostMemory { limit, .. } = &mut t.kind {
        *limit = memory_limit;
    }
    t
}

fn put_u32(b: &mut [u8], off: usize, v: u32) {
    b[off..off + 4].copy_from_slice(&v.to_le_bytes());
}

/// How launch arguments fail to match a kernel's `.param` table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ArgMismatch {
    /// Not as many arguments as parameters.
    Count,
    /// Argument `index` (from 0) has the wrong kind or size for its parameter.
    Type { index: usize },
}

/// Lays arguments, each what it holds and its little-endian bytes, out in
/// the parameter block (docs/abi.md): at the offsets of the kernel's
/// `.param` table, checked against it (number, sizes, kinds:
/// [`elf::Param::accepts`]); without a table, one after another, each
/// aligned to its size (at most 8; the assembler's `.param` rule).
pub(crate) fn layout_params(
    f: &FunctionInfo,
    args: impl ExactSizeIterator<Item = (elf::ParamKind, Vec<u8>)>,
) -> Result<Vec<u8>, ArgMismatch> {
    let mut block = Vec::new();
    if f.params.is_empty() {
        for (_, b) in args {
            let off = block.len().next_multiple_of(param_align(b.len()));
            block.resize(off, 0);
            block.extend_from_slice(&b);
        }
    } else {
        if args.len() != f.params.len() {
            return Err(ArgMismatch::Count);
        }
        for (index, (p, (kind, b))) in f.params.iter().zip(args).enumerate() {
            if !p.accepts(kind, b.len() as u32) {
                return Err(ArgMismatch::Type { index });
            }
            let end = p.offset as usize + b.len();
            if block.len() < end {
                block.resize(end, 0);
            }
            block[p.offset as usize..end].copy_from_slice(&b);
        }
    }
    block.resize(block.len().next_multiple_of(4), 0);
    Ok(block)
}

/// Whether the program reads the clock special registers (S2R SR_CLOCKLO/HI).
fn reads_clock(program: &Program) -> bool {
    program.code.iter().any(|e| matches!(e.op, crate::ops::Op::S2r { sr: 0x50 | 0x51, .. }))
}

/// CTAs per round of a parallel launch: the results of a round are merged
/// in CTA order before the next round starts.
const ROUND: u64 = 1024;

/// The launch-wide part of an interpreter context.
struct CtxMaker<'a> {
    prog: &'a Program,
    cb: &'a ConstBanks,
    threaded: &'a [Option<crate::threaded::Fast>],
    issue_loop: bool,
    kernel: &'a str,
    grid: [u32; 3],
    block: [u32; 3],
    trace: bool,
    limit: u64,
    profile: bool,
    timeline: bool,
    /// Translation on, with its threshold.
    jit: Option<u32>,
}

impl<'a> CtxMaker<'a> {
    /// A fresh context (counters at zero) over global memory `mem`.
    fn make<'m>(&self, mem: Global<'m>) -> Ctx<'m>
    where
        'a: 'm,
    {
        Ctx {
            prog: self.prog,
            cb: self.cb,
            threaded: self.threaded,
            issue_loop: self.issue_loop,
            mem,
            kernel: self.kernel,
            grid: self.grid,
            block: self.block,
            trace: self.trace,
            steps: 0,
            step_limit: self.limit,
            issued: 0,
            lane_insts: 0,
            per_form: vec![0; ursa_emit::ISA.forms.len()],
            clock_base: 0,
            profile: self.profile.then(|| Box::new(Profile::new(self.prog))),
            timeline: self.timeline,
            cta_index: 0,
            jit: self.jit.map(|threshold| (Vec::new(), threshold)),
            record: None,
        }
    }
}

/// What the CTAs of a parallel launch did: warp-instructions,
/// lane-instructions, cycles and warp-instructions per form (a profiled
/// launch runs its CTAs one after another, never in parallel).
type Totals = (u64, u64, u64, Vec<u64>);

/// What one CTA of a parallel launch did.
struct CtaRun {
    steps: u64,
    cycles: u64,
    result: Result<(), Trap>,
}

/// Runs the CTAs of a launch on the threads of the current rayon pool with
/// the same results, traps and statistics as running them one after another:
/// every CTA counts its own steps against the whole limit; the runs are then
/// walked in CTA order, and where the sequential step count would pass the
/// limit (or the first CTA that trapped is reached) that trap is reported.
/// A CTA that the sequential run would stop in the middle of is run again
/// alone to find where the limit strikes (global memory after a trap is
/// unspecified).
/// CTAs whose traces the interpreter's thread may have ready ahead of the
/// SM model (`--timing sm` on more than one thread).
const PIPELINE_CTAS: usize = 64;

fn run_parallel(
    ncta: u64,
    limit: u64,
    lock: &std::sync::Mutex<GlobalMemory>,
    make_cta: &(dyn Fn(u64) -> Cta + Sync),
    new_ctx: &CtxMaker,
) -> Result<Totals, Trap> {
    use rayon::prelude::*;
    use std::sync::atomic::{AtomicU64, Ordering};
    let first_trap = AtomicU64::new(u64::MAX);
    let (mut issued, mut lane_insts, mut cycles, mut steps) = (0u64, 0u64, 0u64, 0u64);
    let mut per_form = vec![0u64; ursa_emit::ISA.forms.len()];
    let mut start = 0;
    while start < ncta {
        let end = ncta.min(start + ROUND);
        let parts: Vec<(Vec<u64>, u64, u64, Vec<(u64, CtaRun)>)> = (start..end)
            .into_par_iter()
            .fold(
                || (new_ctx.make(Global::Shared(lock)), Vec::new()),
                |(mut ctx, mut runs), idx| {
                    // CTAs after one that trapped would not run sequentially.
                    if idx < first_trap.load(Ordering::Relaxed) {
                        ctx.steps = 0;
                        let mut cta = make_cta(idx);
                        let result = ctx.run_cta(&mut cta);
                        let (cy, result) = match result {
                            Ok(c) => (c, Ok(())),
                            Err(t) => {
                                first_trap.fetch_min(idx, Ordering::Relaxed);
                                (0, Err(t))
                            }
                        };
                        runs.push((idx, CtaRun { steps: ctx.steps, cycles: cy, result }));
                    }
                    (ctx, runs)
                },
            )
            .map(|(mut ctx, runs)| (ctx.take_per_form(), ctx.issued, ctx.lane_insts, runs))
            .collect();
        let mut runs: Vec<(u64, CtaRun)> = Vec::with_capacity((end - start) as usize);
        for (pf, i, l, r) in parts {
            for (k, n) in pf.iter().enumerate() {
                per_form[k] += n;
            }
            issued += i;
            lane_insts += l;
            runs.extend(r);
        }
        runs.sort_by_key(|r| r.0);
        for (idx, run) in runs {
            let before = steps;
            steps = steps.saturating_add(run.steps);
            let over = steps > limit || matches!(&run.result, Err(t) if matches!(t.kind, TrapKind::StepLimit(_)));
            if over {
                // Run this CTA again alone, from the sequential step count.
                let mut g = lock.lock().unwrap_or_else(|p| p.into_inner());
                let mut ctx = new_ctx.make(Global::Own(&mut g));
                ctx.steps = before;
                let mut cta = make_cta(idx);
                return Err(match ctx.run_cta(&mut cta) {
                    Err(t) => t,
                    Ok(_) => {
                        let mut t = Trap::new(TrapKind::StepLimit(limit));
                        t.kernel = ctx.kernel.to_string();
                        t.cta = Some(cta.id);
                        t
                    }
                });
            }
            run.result?;
            cycles += run.cycles;
        }
        start = end;
    }
    Ok((issued, lane_insts, cycles, per_form))
}
