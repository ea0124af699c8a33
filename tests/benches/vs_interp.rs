//! Side by side: loop-heavy CLIF functions (tests/benches/vs_interp.clif)
//! compiled by ursa and called on one simulator lane (what `ursa test` does
//! for a `; run:` line), against cranelift-interpreter running the same
//! function on the same input. Both results are checked equal before timing.
//!
//! The simulator runs each function three ways: translated to host code
//! (the default for a one-lane call, `jit-sim`), in its interpreter
//! (`Engine::IssueLoop`, `interp-sim`) and in strict mode (always
//! interpreted). Results and statistics of the JIT and the interpreter are
//! checked equal too.
//!
//! `cargo bench -p ursa-tests --bench vs_interp` prints criterion's times
//! for each engine and, at the end, a table of the ratios
//! (cranelift-interpreter time / simulator time), simulated instructions per
//! second and the translation cost (paid once per loaded program, outside
//! the timed calls).

use std::time::{Duration, Instant};

use cranelift_codegen::data_value::DataValue;
use cranelift_codegen::ir::Function;
use cranelift_interpreter::environment::FunctionStore;
use cranelift_interpreter::interpreter::{Interpreter, InterpreterState};
use cranelift_interpreter::step::ControlFlow;
use criterion::{criterion_group, Criterion};
use ursa_sim::{Gpu, LaunchConfig, Program, Stats};

const SOURCE: &str = include_str!("vs_interp.clif");

/// (function, arguments) of each workload.
fn workloads() -> Vec<(&'static str, Vec<DataValue>)> {
    vec![
        ("sum_i64", vec![DataValue::I64(20_000)]),
        ("xorshift", vec![DataValue::I64(0x2545_f491_4f6c_dd1d), DataValue::I32(10_000)]),
        ("gcd", vec![DataValue::I64(1_000_003), DataValue::I64(1_234)]),
        ("collatz", vec![DataValue::I64(837_799)]),
        ("stack_mem", vec![DataValue::I32(10_000)]),
        ("fib", vec![DataValue::I32(18)]),
    ]
}

struct Setup {
    funcs: Vec<Function>,
    program: Program,
}

fn setup() -> Setup {
    let funcs = cranelift_reader::parse_functions(SOURCE).expect("parse vs_interp.clif");
    let obj = ursa_backend::compile_module(&funcs, &ursa_backend::Options::default()).expect("compile vs_interp.clif");
    let program = Program::load(&ursa_emit::elf::write(&obj)).expect("load");
    Setup { funcs, program }
}

fn words(args: &[DataValue]) -> Vec<u32> {
    let mut w = Vec::new();
    for a in args {
        let b = match a {
            DataValue::I32(x) => *x as u32 as u64,
            DataValue::I64(x) => *x as u64,
            _ => unreachable!("integer arguments only"),
        };
        w.push(b as u32);
        w.push((b >> 32) as u32);
    }
    w
}

/// How the simulator runs a call.
#[derive(Clone, Copy, PartialEq)]
enum Engine {
    Jit,
    Interp,
    Strict,
}

fn sim_cfg(e: Engine) -> LaunchConfig {
    LaunchConfig {
        strict: e == Engine::Strict,
        engine: if e == Engine::Jit { ursa_sim::Engine::Jit } else { ursa_sim::Engine::IssueLoop },
        step_limit: Some(1 << 40),
        local_size: 64 * 1024,
        ..Default::default()
    }
}

/// Runs on the simulator; returns the low 64 bits of the first result and
/// the statistics.
fn run_sim(s: &Setup, name: &str, args: &[u32], e: Engine) -> (u64, Stats) {
    let mut gpu = Gpu::new();
    let (r, stats) = gpu.call_with(&s.program, name, args, 2, &sim_cfg(e)).expect("simulator run");
    (r[0] as u64 | (r[1] as u64) << 32, stats)
}

fn run_interp(store: &FunctionStore, name: &str, args: &[DataValue]) -> u64 {
    let mut i = Interpreter::new(InterpreterState::default().with_function_store(store.clone()));
    match i.call_by_name(&format!("%{}", name), args).expect("interpreter run") {
        ControlFlow::Return(v) => match v[0] {
            DataValue::I32(x) => x as u32 as u64,
            DataValue::I64(x) => x as u64,
            ref o => panic!("unexpected result {}", o),
        },
        _ => panic!("interpreter did not return"),
    }
}

fn store_of(funcs: &[Function]) -> FunctionStore<'_> {
    let mut store = FunctionStore::default();
    for f in funcs {
        store.add(f.name.to_string(), f);
    }
    store
}

/// Mean time of one call, by running it for at least `at_least`.
fn time(mut f: impl FnMut(), at_least: Duration) -> Duration {
    f();
    let start = Instant::now();
    let mut n = 0u32;
    while start.elapsed() < at_least {
        f();
        n += 1;
    }
    start.elapsed() / n
}

/// The three simulator runs agree with each other (results and statistics)
/// and with cranelift-interpreter.
fn check(s: &Setup, store: &FunctionStore, name: &str, args: &[DataValue]) {
    let w = words(args);
    let (ours, jit_stats) = run_sim(s, name, &w, Engine::Jit);
    let (interp, interp_stats) = run_sim(s, name, &w, Engine::Interp);
    let (strict, _) = run_sim(s, name, &w, Engine::Strict);
    assert_eq!((ours, &jit_stats), (interp, &interp_stats), "{}: JIT and interpreter disagree", name);
    assert_eq!(ours, strict, "{}: strict mode disagrees", name);
    let theirs = run_interp(store, name, args);
    let i32_result = s.funcs.iter().any(|f| f.name.to_string() == format!("%{}", name) && f.signature.returns[0].value_type.bits() == 32);
    let mask = if i32_result { 0xffff_ffff } else { u64::MAX };
    assert_eq!(ours & mask, theirs & mask, "{}: simulator and cranelift-interpreter disagree", name);
}

fn bench(c: &mut Criterion) {
    let s = setup();
    let store = store_of(&s.funcs);
    let mut g = c.benchmark_group("vs_interp");
    g.sample_size(10);
    for (name, args) in workloads() {
        let w = words(&args);
        check(&s, &store, name, &args);
        g.bench_function(format!("{}/ursa_jit_sim", name), |b| b.iter(|| run_sim(&s, name, &w, Engine::Jit)));
        g.bench_function(format!("{}/ursa_interp_sim", name), |b| b.iter(|| run_sim(&s, name, &w, Engine::Interp)));
        g.bench_function(format!("{}/ursa_sim_strict", name), |b| b.iter(|| run_sim(&s, name, &w, Engine::Strict)));
        g.bench_function(format!("{}/cranelift_interpreter", name), |b| b.iter(|| run_interp(&store, name, &args)));
    }
    g.finish();
}

/// The ratio table: each engine timed for 1 s per workload in this run.
/// "clif" is cranelift-interpreter; the ratios are its time over ours.
fn ratios() {
    // A freshly loaded program: its translation cost is measured here.
    let s = setup();
    let store = store_of(&s.funcs);
    println!("\nworkload     sim insts  jit (µs)  interp-sim (µs)  strict (µs)  clif (µs)  clif/jit  clif/interp-sim  clif/strict  jit M inst/s  interp-sim M inst/s");
    let mut g = [0.0f64; 3];
    let mut n = 0;
    for (name, args) in workloads() {
        let w = words(&args);
        let before = s.program.jit_stats().time;
        let (_, stats) = run_sim(&s, name, &w, Engine::Jit);
        let first = s.program.jit_stats().time - before;
        let insts = stats.instructions;
        let t_jit = time(
            || {
                let _ = run_sim(&s, name, &w, Engine::Jit);
            },
            Duration::from_secs(1),
        );
        let t_sim = time(
            || {
                let _ = run_sim(&s, name, &w, Engine::Interp);
            },
            Duration::from_secs(1),
        );
        let t_strict = time(
            || {
                let _ = run_sim(&s, name, &w, Engine::Strict);
            },
            Duration::from_secs(1),
        );
        let t_int = time(
            || {
                let _ = run_interp(&store, name, &args);
            },
            Duration::from_secs(1),
        );
        let r = [t_jit, t_sim, t_strict].map(|t| t_int.as_secs_f64() / t.as_secs_f64());
        for k in 0..3 {
            g[k] += r[k].ln();
        }
        n += 1;
        println!(
            "{:<12} {:>9} {:>9.1} {:>16.1} {:>12.1} {:>10.1} {:>8.1}× {:>15.1}× {:>11.1}× {:>13.0} {:>20.0}   (translation {:.1} ms)",
            name,
            insts,
            t_jit.as_secs_f64() * 1e6,
            t_sim.as_secs_f64() * 1e6,
            t_strict.as_secs_f64() * 1e6,
            t_int.as_secs_f64() * 1e6,
            r[0],
            r[1],
            r[2],
            insts as f64 / t_jit.as_secs_f64() / 1e6,
            insts as f64 / t_sim.as_secs_f64() / 1e6,
            first.as_secs_f64() * 1e3,
        );
    }
    let j = s.program.jit_stats();
    println!(
        "geomean clif/jit {:.1}×, clif/interp-sim {:.1}×, clif/strict {:.1}×",
        (g[0] / n as f64).exp(),
        (g[1] / n as f64).exp(),
        (g[2] / n as f64).exp()
    );
    println!(
        "translation: {} regions, {} instructions, {:.1} ms in all ({} failed)",
        j.regions,
        j.instructions,
        j.time.as_secs_f64() * 1e3,
        j.failures
    );
}

criterion_group!(benches, bench);

fn main() {
    benches();
    Criterion::default().configure_from_args().final_summary();
    // `cargo test --benches` runs bench targets without `--bench`, and
    // `--profile-time` is for profiling one engine: no table then.
    let args: Vec<String> = std::env::args().collect();
    if args.iter().any(|a| a == "--bench") && !args.iter().any(|a| a == "--profile-time") {
        ratios();
    }
}
