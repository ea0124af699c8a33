//! `ursa fuzz`: random CLIF programs run differentially.
//!
//! Each case is a random [`ast::Program`] (seeded: case `i` of `--seed S`
//! uses seed `S + i`, so any case replays alone), built into CLIF functions,
//! compiled with Ursa and run on the simulator and in cranelift-interpreter —
//! both through the test runner's own steps ([`crate::filetest`]'s
//! `compile_guarded`, `link_for_test`, `simulate`, `interpret`) — with a few
//! edge-biased argument vectors. A compile error (of any kind: the generator
//! only emits what the compiler supports), a different result, a trap on one
//! side only, or a panic is a failure; it is delta-reduced ([`reduce`]) and
//! printed as a `test run` filetest. A case the reference cannot run (the
//! interpreter panics or runs out of fuel) is counted as skipped.

pub mod ast;
pub mod build;
pub mod gen;
pub mod reduce;
pub mod vectors;

use std::fmt::Write as _;
use std::panic::{catch_unwind, AssertUnwindSafe};

use cranelift_codegen::data_value::DataValue;
use cranelift_codegen::ir::Type;
use cranelift_interpreter::environment::FunctionStore;
use rand::rngs::SmallRng;
use rand::SeedableRng;

use crate::filetest::{compile_guarded_in, interpret, link_for_test, module_options, show, simulate};
use ursa_backend::{symbol_name, Error};

/// Argument vectors run per program.
pub const ARGS_PER_CASE: usize = 3;

/// The kind of a failure; reduction keeps the kind.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FailKind {
    /// The compiler rejected or failed on a generated function ("unsupported",
    /// "verifier", "internal"; a compiler panic is "internal").
    Compile(&'static str),
    /// The compiled functions do not link or load.
    Link,
    /// Different results, or a trap on one side only.
    Mismatch,
    /// A panic outside the compiler (generator, simulator).
    Panic,
}

#[derive(Clone, Debug)]
pub struct Failure {
    pub kind: FailKind,
    pub message: String,
    /// The argument vector that shows it (none for compile/link failures).
    pub args: Option<Vec<u64>>,
}

/// The result of one case.
#[derive(Clone, Debug)]
pub enum Outcome {
    /// Both agree on every argument vector: how many of the runs returned
    /// values (the others trapped on both sides).
    Pass {
        returned: usize,
        trapped: usize,
    },
    /// The reference could not run it (why).
    Skip(String),
    Fail(Failure),
}

/// The generator's types are the integers the runner converts.
fn data_value(ty: Type, bits: u64) -> DataValue {
    crate::filetest::data_value(ty, bits).expect("an integer type")
}

fn panic_message(p: &(dyn std::any::Any + Send)) -> String {
    p.downcast_ref::<String>().cloned().or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string())).unwrap_or_else(|| "(no message)".into())
}

/// Runs one program with the given argument vectors.
pub fn check(p: &ast::Program, argsets: &[Vec<u64>]) -> Outcome {
    match catch_unwind(AssertUnwindSafe(|| check_inner(p, argsets))) {
        Ok(o) => o,
        Err(e) => Outcome::Fail(Failure { kind: FailKind::Panic, message: format!("panic: {}", panic_message(&*e)), args: None }),
    }
}

fn check_inner(p: &ast::Program, argsets: &[Vec<u64>]) -> Outcome {
    let funcs = build::build(p);
    let opts = module_options(&funcs, &Default::default(), crate::env_options().opt_level);
    let mut compiled = Vec::new();
    for f in &funcs {
        match compile_guarded_in(f, &opts) {
            Ok(ef) => compiled.push(ef),
            Err(e) => {
                let kind = match e {
                    Error::Unsupported(_) => "unsupported",
                    Error::Verifier(_) => "verifier",
                    Error::Internal(_) => "internal",
                };
                return Outcome::Fail(Failure {
                    kind: FailKind::Compile(kind),
                    message: format!("%{}: {}", symbol_name(f), e),
                    args: None,
                });
            }
        }
    }
    let program = match link_for_test(compiled) {
        Ok(pr) => pr,
        Err(e) => {
            return Outcome::Fail(Failure { kind: FailKind::Link, message: format!("compiled object does not load: {}", e), args: None })
        }
    };
    let reference = build::build_reference(p);
    let mut store = FunctionStore::default();
    for f in &reference {
        store.add(f.name.to_string(), f);
    }
    let main = &funcs[0];
    let mut skip = None;
    let (mut returned, mut trapped) = (0, 0);
    for args in argsets {
        let dv: Vec<DataValue> = main.signature.params.iter().zip(args).map(|(a, &b)| data_value(a.value_type, b)).collect();
        let ours = simulate(&program, main, &dv);
        let theirs = match interpret(&store, &reference[0], &dv) {
            None => {
                skip = Some("cranelift-interpreter panicked".to_string());
                continue;
            }
            Some(Err(e)) if e.starts_with("interpreter error") => {
                skip = Some(e);
                continue;
            }
            Some(r) => r,
        };
        if ours.is_ok() {
            returned += 1;
        } else {
            trapped += 1;
        }
        let bad = match (&ours, &theirs) {
            (Ok(a), Ok(b)) if a == b => None,
            (Ok(a), Ok(b)) if show(a) == show(b) => Some(format!("simulator gives {:?}, cranelift-interpreter gives {:?}", a, b)),
            (Ok(a), Ok(b)) => Some(format!("simulator gives {}, cranelift-interpreter gives {}", show(a), show(b))),
            (Ok(a), Err(e)) => Some(format!("simulator gives {}, cranelift-interpreter: {}", show(a), e)),
            (Err(e), Ok(b)) => Some(format!("{}; cranelift-interpreter gives {}", e, show(b))),
            // Both trap: the simulator's must be a trap instruction, not a
            // fault (bad address, hazard, step limit).
            (Err(e), Err(_)) if e.explicit => None,
            (Err(e), Err(t)) => Some(format!("{}; cranelift-interpreter: {}", e, t)),
        };
        if let Some(m) = bad {
            return Outcome::Fail(Failure { kind: FailKind::Mismatch, message: m, args: Some(args.clone()) });
        }
    }
    match skip {
        Some(s) => Outcome::Skip(s),
        None => Outcome::Pass { returned, trapped },
    }
}

/// A `test run` filetest of a (reduced) failing program: the functions, the
/// failure as a comment, and a run line whose expected value is
/// cranelift-interpreter's (or a note when the reference traps, which a run
/// line cannot express).
pub fn filetest(p: &ast::Program, f: &Failure, origin: &str) -> String {
    let funcs = build::build(p);
    let mut s = String::new();
    let _ = writeln!(s, "test run\n");
    let _ = writeln!(s, ";; Found by the program generator ({}).", origin);
    for l in f.message.lines() {
        let _ = writeln!(s, ";; {}", l);
    }
    let _ = writeln!(s);
    // Callees first, the function run last.
    for func in funcs.iter().rev() {
        let _ = writeln!(s, "{}", func.display());
    }
    if let Some(args) = &f.args {
        let main = &funcs[0];
        let dv: Vec<DataValue> = main.signature.params.iter().zip(args).map(|(a, &b)| data_value(a.value_type, b)).collect();
        let call = format!("%{}({})", symbol_name(main), dv.iter().map(|v| v.to_string()).collect::<Vec<_>>().join(", "));
        let reference = build::build_reference(p);
        let mut store = FunctionStore::default();
        for func in &reference {
            store.add(func.name.to_string(), func);
        }
        match interpret(&store, &reference[0], &dv) {
            Some(Ok(v)) => {
                let _ = writeln!(s, "; run: {} == {}", call, show(&v));
            }
            Some(Err(e)) => {
                let _ = writeln!(s, ";; cranelift-interpreter: {} (a run line cannot expect a trap)\n; print: {}", e, call);
            }
            None => {
                let _ = writeln!(s, ";; cranelift-interpreter panics on this call\n; print: {}", call);
            }
        }
    }
    s
}

/// Mixed into a case's seed for its vector statements' random stream.
const VECTOR_STREAM: u64 = 0x7ec7_0125_0000_0000;

/// Case `i` of seed `s`: its program and arguments.
pub fn case(seed: u64, lim: &gen::Limits) -> (ast::Program, Vec<Vec<u64>>) {
    let mut r = SmallRng::seed_from_u64(seed);
    // The vector statements' own stream: the scalar ones draw from `r` as
    // they did before there were vectors.
    let mut rv = SmallRng::seed_from_u64(seed ^ VECTOR_STREAM);
    let p = gen::generate(&mut r, &mut rv, lim);
    let args = gen::gen_args(&mut r, &p, ARGS_PER_CASE);
    (p, args)
}

/// Counts of a fuzz run.
#[derive(Clone, Debug, Default)]
pub struct Summary {
    pub passed: u64,
    pub failed: u64,
    pub skipped: u64,
    /// Runs (one per argument vector) of passing programs that returned
    /// values, and that trapped on both sides.
    pub returned: u64,
    pub trapped: u64,
    /// One report (a filetest) per failure.
    pub reports: Vec<String>,
}

impl std::fmt::Display for Summary {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} passed, {} failed, {} skipped (runs: {} returned, {} trapped on both sides)",
            self.passed, self.failed, self.skipped, self.returned, self.trapped
        )
    }
}

/// The counts of a run of generated cases ([`run_cases`]).
pub(crate) trait Tally: Default + Send {
    type Outcome;
    /// Counts one case.
    fn add(&mut self, o: &Self::Outcome);
    /// How many cases are counted.
    fn cases(&self) -> u64;
    fn reports(&mut self) -> &mut Vec<String>;
}

/// Runs cases `seed .. seed+count`, case `i` on thread `i % jobs`: `case`
/// runs one seed and gives its outcome and, for a failure, its report.
/// `report` is called with each report as soon as it is found, and with
/// `None` after every 1000th case (progress); it gets the counts so far.
pub(crate) fn run_cases<T: Tally>(
    seed: u64,
    count: u64,
    jobs: usize,
    case: &(dyn Fn(u64) -> (T::Outcome, Option<String>) + Sync),
    report: &(dyn Fn(Option<&str>, &T) + Sync),
) -> T {
    let jobs = jobs.max(1) as u64;
    let total = std::sync::Mutex::new(T::default());
    let one = |j: u64| {
        let mut i = j;
        while i < count {
            let (outcome, failure) = case(seed.wrapping_add(i));
            let mut t = total.lock().unwrap_or_else(|e| e.into_inner());
            t.add(&outcome);
            if let Some(r) = failure {
                report(Some(&r), &t);
                t.reports().push(r);
            }
            if t.cases() % 1000 == 0 {
                report(None, &t);
            }
            drop(t);
            i += jobs;
        }
    };
    if jobs == 1 {
        one(0);
    } else {
        std::thread::scope(|sc| {
            for j in 0..jobs {
                sc.spawn(move || one(j));
            }
        });
    }
    total.into_inner().unwrap_or_else(|e| e.into_inner())
}

impl Tally for Summary {
    type Outcome = Outcome;
    fn add(&mut self, o: &Outcome) {
        match o {
            Outcome::Pass { returned, trapped } => {
                self.passed += 1;
                self.returned += *returned as u64;
                self.trapped += *trapped as u64;
            }
            Outcome::Skip(_) => self.skipped += 1,
            Outcome::Fail(_) => self.failed += 1,
        }
    }
    fn cases(&self) -> u64 {
        self.passed + self.failed + self.skipped
    }
    fn reports(&mut self) -> &mut Vec<String> {
        &mut self.reports
    }
}

/// Runs cases `seed .. seed+count` (split over `jobs` threads); failures are
/// reduced (when `minimize`) and reported as filetests. `report` is called
/// with each failure's filetest as soon as it is found, and with `None` after
/// every 1000th case (progress); it gets the counts so far.
pub fn run(seed: u64, count: u64, jobs: usize, minimize: bool, report: &(dyn Fn(Option<&str>, &Summary) + Sync)) -> Summary {
    let lim = gen::Limits::default();
    let one = |s: u64| {
        let (p, args) = case(s, &lim);
        let outcome = check(&p, &args);
        let failure = match outcome {
            Outcome::Fail(ref f) => {
                let (p, f) = if minimize { reduce::reduce(p, f.clone()) } else { (p, f.clone()) };
                Some(filetest(&p, &f, &format!("`ursa fuzz --seed {} --count 1`", s)))
            }
            _ => None,
        };
        (outcome, failure)
    };
    run_cases(seed, count, jobs, &one, report)
}
