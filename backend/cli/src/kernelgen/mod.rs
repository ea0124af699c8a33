//! `ursa fuzz --kernels`: random kernels run differentially.
//!
//! Each case is a random [`ast::Kernel`] with its launch (seeded: case `i`
//! of `--seed S` uses seed `S + i`), built into one CLIF kernel
//! ([`build`]), compiled at both optimization levels with both register
//! allocators, and launched over its grid on the simulator's engines. Every
//! run must write the same bytes into the output and atomic buffers as the
//! first; the runs of one compiled program must also agree on the
//! statistics (instructions, lane instructions, cycles); and a kernel without
//! cross-lane statements is also run thread by thread in
//! cranelift-interpreter ([`mod@reference`]). A compile error, a trap, a
//! difference or a panic is a failure: it is delta-reduced ([`reduce`]) and
//! printed as a `.clif` file with the commands that launch it.

pub mod ast;
pub mod build;
pub mod gen;
pub mod reduce;
pub mod reference;

use std::fmt::Write as _;
use std::panic::{catch_unwind, AssertUnwindSafe};

use cranelift_codegen::ir::Function;
use rand::rngs::SmallRng;
use rand::SeedableRng;
use ursa_backend::{Error, OptLevel, Options};
use ursa_emit::elf;
use ursa_sim::{Arg, Engine, Gpu, LaunchConfig, Program};

use crate::filetest::compile_guarded_in;
use ast::*;

/// The compilations every kernel gets: (optimization level, regalloc2 for
/// every function).
pub const CONFIGS: [(OptLevel, bool); 4] =
    [(OptLevel::Speed, false), (OptLevel::None, false), (OptLevel::Speed, true), (OptLevel::None, true)];

/// The engines the first compilation runs on (non-strict), after its strict
/// run on the interpreter.
pub const ENGINES: [Engine; 4] = [Engine::Interpreter, Engine::Threaded, Engine::IssueLoop, Engine::Jit];

/// Warp-instructions a launch may issue.
pub const STEP_LIMIT: u64 = 4_000_000;

/// How many times [`STEP_LIMIT`] a configuration may need where the
/// unoptimized kernel needs less than [`STEP_LIMIT`]: optimized code may
/// issue more (a divergent loop unrolled, a remainder loop), so a run that
/// reaches the limit is run again with this much room before it counts as a
/// failure (a loop that never ends).
pub const STEP_ROOM: u64 = 4;

fn config_name((opt, ra2): (OptLevel, bool)) -> String {
    format!("--opt-level {}{}", if opt == OptLevel::Speed { "speed" } else { "none" }, if ra2 { " with regalloc2" } else { "" })
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FailKind {
    /// The compiler rejected or failed on the kernel.
    Compile(&'static str),
    /// Two runs differ, a run traps, or the reference differs.
    Mismatch,
    /// A panic outside the compiler.
    Panic,
}

#[derive(Clone, Debug)]
pub struct Failure {
    pub kind: FailKind,
    pub message: String,
}

/// What a launch leaves: the output buffer, the atomic words, and the
/// statistics that every engine must reproduce.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RunOut {
    pub out: Vec<u8>,
    pub atom: Vec<u8>,
    pub stats: (u64, u64, u64),
}

/// The result of one case.
#[derive(Clone, Debug)]
pub enum Outcome {
    /// Every run agreed; `reference`: the thread-by-thread reference ran too.
    Pass {
        reference: bool,
    },
    /// The kernel needs more than [`STEP_LIMIT`] warp-instructions unoptimized
    /// too (legitimately long, e.g. `i128` divisions in a long loop).
    Skip,
    /// A configuration refused to compile it: a CTA barrier in divergent
    /// control flow (an unsupported program, reported as such, not a pass;
    /// the generator's top-level barriers are accepted, so this is not
    /// expected).
    Refused(String),
    Fail(Failure),
}

/// The value the output buffer is filled with before a launch (a slot no
/// thread writes keeps it).
pub const SENTINEL: u8 = 0xa5;

/// Initial value of atomic word `w`.
pub fn atom_init(k: &Kernel, w: usize) -> u64 {
    let v = k.input[(IN_ELEMS as usize - 1 - w) % k.input.len().max(1)];
    if k.atom64 {
        v
    } else {
        v & 0xffff_ffff
    }
}

/// The bytes of `in`.
pub fn input_bytes(k: &Kernel) -> Vec<u8> {
    let mut b = Vec::new();
    for &v in &k.input {
        if k.elem64 {
            b.extend_from_slice(&v.to_le_bytes());
        } else {
            b.extend_from_slice(&(v as u32).to_le_bytes());
        }
    }
    b
}

fn atom_bytes(k: &Kernel) -> Vec<u8> {
    (0..ATOM_WORDS as usize).flat_map(|w| atom_init(k, w).to_le_bytes()).collect()
}

fn out_len(k: &Kernel) -> usize {
    k.launch.threads() as usize * k.outs.len() * 8
}

/// The options of a compilation of `f`.
fn options(f: &Function, (opt, ra2): (OptLevel, bool)) -> Options {
    let shared = ursa_backend::module::shared_mem::parse(&build::shared_directive()).expect("the generator's shared directive");
    let base = Options { kernel: true, check_regalloc: true, shared, opt_level: opt, regalloc2: ra2, ..Default::default() };
    base.for_module(std::slice::from_ref(f), &[true])
}

/// Compiles `f` with `cfg` and loads it.
pub fn compile(f: &Function, cfg: (OptLevel, bool)) -> Result<Program, Failure> {
    let ef = compile_guarded_in(f, &options(f, cfg)).map_err(|e| Failure {
        kind: FailKind::Compile(match e {
            Error::Unsupported(_) => "unsupported",
            Error::Verifier(_) => "verifier",
            Error::Internal(_) => "internal",
        }),
        message: format!("{}: {}", config_name(cfg), e),
    })?;
    let mut obj = elf::Object { functions: vec![ef], ..Default::default() };
    ursa_backend::link_runtime(&mut obj)
        .map_err(|e| Failure { kind: FailKind::Compile("internal"), message: format!("{}: {}", config_name(cfg), e) })?;
    ursa_backend::propagate_callee_needs(&mut obj);
    Program::load(&elf::write(&obj)).map_err(|e| Failure {
        kind: FailKind::Compile("internal"),
        message: format!("{}: the object does not load: {}", config_name(cfg), e),
    })
}

/// Launches the kernel of `prog` as `k` says, on `engine`, within [`STEP_LIMIT`].
pub fn launch(k: &Kernel, prog: &Program, engine: Engine, strict: bool) -> Result<RunOut, String> {
    launch_within(k, prog, engine, strict, STEP_LIMIT)
}

/// [`launch`] with at most `step_limit` warp-instructions.
pub fn launch_within(k: &Kernel, prog: &Program, engine: Engine, strict: bool, step_limit: u64) -> Result<RunOut, String> {
    let mut gpu = Gpu::new();
    let inb = input_bytes(k);
    let pin = gpu.alloc(inb.len() as u64, 8);
    gpu.write(pin, &inb).map_err(|t| t.to_string())?;
    let n = out_len(k);
    let pout = gpu.alloc(n.max(8) as u64, 8);
    gpu.write(pout, &vec![SENTINEL; n]).map_err(|t| t.to_string())?;
    let ab = atom_bytes(k);
    let patom = gpu.alloc(ab.len() as u64, 8);
    gpu.write(patom, &ab).map_err(|t| t.to_string())?;
    let cfg = LaunchConfig {
        grid: k.launch.grid,
        block: k.launch.block,
        strict,
        engine,
        step_limit: Some(step_limit),
        jit_threshold: 1,
        ..Default::default()
    };
    let s = gpu
        .launch(prog, build::KERNEL_NAME, &cfg, &[Arg::Ptr(pin), Arg::Ptr(pout), Arg::Ptr(patom), Arg::I32(k.n)])
        .map_err(|t| format!("trap: {}", t.to_string().lines().next().unwrap_or_default()))?;
    let out = gpu.read(pout, n as u64).map_err(|t| t.to_string())?;
    let atom = gpu.read(patom, ab.len() as u64).map_err(|t| t.to_string())?;
    Ok(RunOut { out, atom, stats: (s.instructions, s.lane_instructions, s.cycles) })
}

fn panic_message(p: &(dyn std::any::Any + Send)) -> String {
    p.downcast_ref::<String>().cloned().or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string())).unwrap_or_else(|| "(no message)".into())
}

/// Runs one kernel: every compilation and engine, and the reference.
pub fn check(k: &Kernel) -> Outcome {
    check_with_limit(k, STEP_LIMIT)
}

/// [`check`] with `step_limit` in place of [`STEP_LIMIT`] (for the tests of
/// the limit's rules).
pub fn check_with_limit(k: &Kernel, step_limit: u64) -> Outcome {
    match catch_unwind(AssertUnwindSafe(|| check_inner(k, step_limit))) {
        Ok(o) => o,
        Err(e) => Outcome::Fail(Failure { kind: FailKind::Panic, message: format!("panic: {}", panic_message(&*e)) }),
    }
}

/// The first difference of two runs, described with both values.
pub fn describe_diff(k: &Kernel, a: &RunOut, b: &RunOut, an: &str, bn: &str) -> Option<String> {
    let nouts = k.outs.len();
    let word = |v: &[u8], i: usize| u64::from_le_bytes(v[8 * i..8 * i + 8].try_into().unwrap());
    for i in 0..a.out.len() / 8 {
        if word(&a.out, i) != word(&b.out, i) {
            let diffs = (0..a.out.len() / 8).filter(|&j| word(&a.out, j) != word(&b.out, j)).count();
            return Some(format!(
                "out[{}] (thread {}, output {}): {} gives {:#x}, {} gives {:#x} ({} of {} output words differ)",
                i,
                i / nouts,
                i % nouts,
                an,
                word(&a.out, i),
                bn,
                word(&b.out, i),
                diffs,
                a.out.len() / 8
            ));
        }
    }
    for w in 0..ATOM_WORDS as usize {
        if word(&a.atom, w) != word(&b.atom, w) {
            return Some(format!(
                "atom[{}] ({:?}): {} gives {:#x}, {} gives {:#x}",
                w,
                AtomOp::ALL[w],
                an,
                word(&a.atom, w),
                bn,
                word(&b.atom, w)
            ));
        }
    }
    None
}

/// Does the unoptimized kernel (SSA assignment, strict interpreter) reach
/// `step_limit` too? Then a run that reached it is not a failure.
fn too_long(k: &Kernel, f: &Function, step_limit: u64) -> bool {
    compile(f, (OptLevel::None, false))
        .is_ok_and(|p| launch_within(k, &p, Engine::Interpreter, true, step_limit).is_err_and(|e| e.contains("step limit")))
}

fn check_inner(k: &Kernel, step_limit: u64) -> Outcome {
    let f = build::build(k);
    match check_within(k, &f, step_limit) {
        // Legitimately long: the unoptimized kernel needs as much.
        StepLimited(_) if too_long(k, &f, step_limit) => Outcome::Skip,
        // Some configuration issues more than the unoptimized code: with
        // room for that, a limit still reached is a loop that does not end.
        StepLimited(_) => match check_within(k, &f, STEP_ROOM * step_limit) {
            StepLimited(m) => Outcome::Fail(Failure { kind: FailKind::Mismatch, message: m }),
            Done(o) => o,
        },
        Done(o) => o,
    }
}

/// What [`check_within`] found: an outcome, or a run that reached its step
/// limit (named, with the message).
enum Checked {
    Done(Outcome),
    StepLimited(String),
}
use Checked::{Done, StepLimited};

/// Every compilation and engine, and the reference, each run within
/// `step_limit` warp-instructions.
fn check_within(k: &Kernel, f: &Function, step_limit: u64) -> Checked {
    let mut first: Option<(RunOut, String)> = None;
    let mismatch = |m: String| Done(Outcome::Fail(Failure { kind: FailKind::Mismatch, message: m }));
    for (ci, &cfg) in CONFIGS.iter().enumerate() {
        let prog = match compile(f, cfg) {
            Ok(p) => p,
            // A barrier in divergent control flow is an unsupported program
            // (a clean error, no code): reported as refused, whichever
            // configuration said so.
            Err(e) if e.message.contains("inside divergent control flow") => return Done(Outcome::Refused(e.message)),
            Err(e) => return Done(Outcome::Fail(e)),
        };
        let mut runs: Vec<(Engine, bool)> = vec![(Engine::Interpreter, true)];
        if ci == 0 {
            runs.extend(ENGINES.iter().map(|&e| (e, false)));
        }
        let mut stats: Option<(u64, u64, u64)> = None;
        for (engine, strict) in runs {
            let name = format!("{} on {:?}{}", config_name(cfg), engine, if strict { " (strict)" } else { "" });
            let r = match launch_within(k, &prog, engine, strict, step_limit) {
                Ok(r) => r,
                Err(e) if e.contains("step limit") => return StepLimited(format!("{}: {}", name, e)),
                Err(e) => return mismatch(format!("{}: {}", name, e)),
            };
            match &stats {
                None => stats = Some(r.stats),
                Some(s) if *s != r.stats => {
                    return mismatch(format!(
                        "{}: statistics (instructions, lane instructions, cycles) {:?}, the strict interpreter's {:?}",
                        name, r.stats, s
                    ))
                }
                _ => {}
            }
            match &first {
                None => first = Some((r, name)),
                Some((a, an)) => {
                    if let Some(d) = describe_diff(k, a, &r, an, &name) {
                        return mismatch(d);
                    }
                }
            }
        }
    }
    let Some((base, base_name)) = first else { unreachable!("CONFIGS is not empty") };
    if k.cross_lane() {
        return Done(Outcome::Pass { reference: false });
    }
    match reference::run(k) {
        Ok(r) => match describe_diff(k, &r, &base, "cranelift-interpreter (thread by thread)", &base_name) {
            Some(d) => mismatch(d),
            None => Done(Outcome::Pass { reference: true }),
        },
        // The reference cannot run this kernel (it says why): the
        // simulator's runs agreed, which is all that is checked.
        Err(_) => Done(Outcome::Pass { reference: false }),
    }
}

/// Case `seed`: its kernel.
pub fn case(seed: u64, lim: &gen::Limits) -> Kernel {
    let mut r = SmallRng::seed_from_u64(seed);
    gen::generate(&mut r, lim)
}

fn list<T: std::fmt::Display>(v: impl Iterator<Item = T>) -> String {
    v.map(|x| x.to_string()).collect::<Vec<_>>().join(",")
}

/// The `ursa compile` and `ursa run` lines that launch `k` from `FILE.clif`.
pub fn launch_lines(k: &Kernel) -> String {
    let ety = if k.elem64 { "u64" } else { "u32" };
    let inv: Vec<u64> = k.input.iter().map(|&v| if k.elem64 { v } else { v & 0xffff_ffff }).collect();
    let l = &k.launch;
    format!(
        "ursa compile --kernel FILE.clif -o k.o   # --opt-level none; URSA_REGALLOC2=1 for regalloc2\n\
         ursa run k.o --kernel {} --grid {} --block {} --arg buf:in={}:{} --arg buf:out=u64[{}] --arg buf:atom=u64:{} --arg i32:{} --out out --out atom",
        build::KERNEL_NAME,
        list(l.grid.iter()),
        list(l.block.iter()),
        ety,
        list(inv.iter()),
        out_len(k) / 8,
        list((0..ATOM_WORDS as usize).map(|w| atom_init(k, w))),
        k.n
    )
}

/// A `.clif` file of a (reduced) failing kernel: the failure and the
/// commands that launch it as comments, the shared-memory directive, the
/// kernel.
pub fn clif_file(k: &Kernel, f: &Failure, origin: &str) -> String {
    let mut s = String::new();
    let _ = writeln!(s, ";; Found by the kernel generator ({}).", origin);
    for l in f.message.lines() {
        let _ = writeln!(s, ";; {}", l);
    }
    let _ = writeln!(
        s,
        ";; Launch (out: {} u64 slots per thread, in global thread order; atom: one 64-bit slot per operation, {}):",
        k.outs.len(),
        list(AtomOp::ALL.iter().map(|o| format!("{:?}", o).to_lowercase()))
    );
    for l in launch_lines(k).lines() {
        let _ = writeln!(s, ";;   {}", l);
    }
    let _ = writeln!(s, "{}\n", build::shared_directive());
    let _ = writeln!(s, "{}", build::build(k).display());
    s
}

/// Counts of a run.
#[derive(Clone, Debug, Default)]
pub struct Summary {
    pub passed: u64,
    pub failed: u64,
    /// Kernels too long to run within the step limit even unoptimized.
    pub skipped: u64,
    /// Kernels a configuration refused (a CTA barrier in divergent control
    /// flow): unsupported, not passed.
    pub refused: u64,
    /// Passing kernels also checked thread by thread against cranelift-interpreter.
    pub referenced: u64,
    pub reports: Vec<String>,
}

impl std::fmt::Display for Summary {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} passed, {} failed, {} skipped, {} refused by the compiler ({} of the passed also checked thread by thread against cranelift-interpreter)",
            self.passed, self.failed, self.skipped, self.refused, self.referenced
        )
    }
}

impl crate::fuzzgen::Tally for Summary {
    type Outcome = Outcome;
    fn add(&mut self, o: &Outcome) {
        match o {
            Outcome::Pass { reference } => {
                self.passed += 1;
                self.referenced += *reference as u64;
            }
            Outcome::Skip => self.skipped += 1,
            Outcome::Refused(_) => self.refused += 1,
            Outcome::Fail(_) => self.failed += 1,
        }
    }
    fn cases(&self) -> u64 {
        self.passed + self.failed + self.skipped + self.refused
    }
    fn reports(&mut self) -> &mut Vec<String> {
        &mut self.reports
    }
}

/// Runs cases `seed .. seed+count` over `jobs` threads; failures are reduced
/// (when `minimize`) and reported as `.clif` files. `report` gets each
/// failure's file as soon as it is found, and `None` after every 1000th
/// case, with the counts so far.
pub fn run(seed: u64, count: u64, jobs: usize, minimize: bool, report: &(dyn Fn(Option<&str>, &Summary) + Sync)) -> Summary {
    let lim = gen::Limits::default();
    let one = |s: u64| {
        let k = case(s, &lim);
        let outcome = check(&k);
        let failure = match outcome {
            Outcome::Fail(ref f) => {
                let (k, f) = if minimize { reduce::reduce(k, f.clone()) } else { (k, f.clone()) };
                Some(clif_file(&k, &f, &format!("`ursa fuzz --kernels --seed {} --count 1`", s)))
            }
            _ => None,
        };
        (outcome, failure)
    };
    crate::fuzzgen::run_cases(seed, count, jobs, &one, report)
}

/// How `opt_unroll_loops` treats the generated counted loops.
#[derive(Clone, Copy, Debug, Default)]
pub struct UnrollShare {
    /// `LoadLoop` statements generated.
    pub generated: u64,
    /// Single-block loops with a load in the code after `opt_egraph` (what
    /// the unroller looks at).
    pub candidates: u64,
    /// Of those, the loops unrolled (each leaves an unrolled block and the
    /// remainder loop, both looping on themselves).
    pub unrolled: u64,
}

/// Single-block loops holding a load in a printed CLIF function: blocks that
/// branch to themselves.
fn self_loops_with_load(text: &str) -> u64 {
    let mut n = 0;
    let mut cur = String::new();
    let mut load = false;
    for line in text.lines() {
        let t = line.trim_start();
        if !line.starts_with(' ') && t.starts_with("block") {
            cur = t.split(['(', ':']).next().unwrap_or_default().to_string();
            load = false;
            continue;
        }
        load |= t.contains("= load.");
        if (t.starts_with("brif ") || t.starts_with("jump ")) && t.split([' ', ',', '(']).any(|w| w == cur) && load {
            n += 1;
        }
    }
    n
}

/// Compiles cases `seed .. seed+count` at `speed` and counts how many of their
/// counted loops `opt_unroll_loops` unrolls (`ursa fuzz --kernels --unroll-share`).
pub fn unroll_share(seed: u64, count: u64) -> UnrollShare {
    use ursa_backend::Pass;
    let lim = gen::Limits::default();
    let mut u = UnrollShare::default();
    for i in 0..count {
        let k = case(seed.wrapping_add(i), &lim);
        fn loops(b: &[KStmt]) -> u64 {
            b.iter().map(|s| matches!(s, KStmt::LoadLoop { .. }) as u64 + children_ref(s).iter().map(|c| loops(c)).sum::<u64>()).sum()
        }
        u.generated += loops(&k.body);
        let f = build::build(&k);
        let opts = Options { print_after: vec![Pass::opt_egraph, Pass::opt_unroll_loops], ..options(&f, CONFIGS[0]) };
        let Ok(c) = catch_unwind(AssertUnwindSafe(|| ursa_backend::compile(&f, &opts))) else { continue };
        let Ok(c) = c else { continue };
        let mut parts = c.printed.split("; after ").filter(|p| !p.is_empty());
        let (Some(before), Some(after)) = (parts.next(), parts.next()) else { continue };
        let (b, a) = (self_loops_with_load(before), self_loops_with_load(after));
        u.candidates += b;
        u.unrolled += a.saturating_sub(b);
    }
    u
}
