//! How the simulator's one-lane run grows with the size of the code (issue
//! 25): the functions of `compile_scaling` (block parameters, live values,
//! blocks, instructions; `backend/benches/support/scaling_families.rs`),
//! compiled once at `opt_level=none`, each called on one lane
//! (`Gpu::call_with`, what `ursa test` does for a `; run:` line) on a freshly
//! loaded program three ways: translated to host code from the first
//! arrival at each region (`Engine::Jit` with `jit_threshold` 1, so the call
//! pays the translation of every region it reaches: the translator's own
//! scaling), with the default configuration (`Engine::Jit`, regions
//! translated once they are hot: straight-line code stays interpreted), and
//! on the interpreter alone (`Engine::IssueLoop`). Every call's result is
//! checked against the family's own arithmetic.
//!
//!     cargo bench -p ursa-tests --bench sim_scaling
//!
//! Criterion samples each family at its smallest size (1k). After its
//! figures the benchmark prints, timed once per family and size, the machine
//! instructions, the translation time, the peak heap of a translated call
//! (all bytes allocated and not yet freed during it, by this benchmark's
//! counting allocator) in total and per machine instruction, and the growth
//! exponent of the translated call's time per doubling (1 linear, 2
//! quadratic). `URSA_SCALING_MAX=32000` extends the sizes.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use criterion::{criterion_group, criterion_main, BatchSize, BenchmarkId, Criterion};
use ursa_backend::{OptLevel, Options};
use ursa_sim::{Engine, Gpu, LaunchConfig, Program};

#[path = "../../backend/benches/support/scaling_families.rs"]
mod scaling_families;
use scaling_families::{expected, sizes, source, FAMILIES};

/// The system allocator, counting the bytes live and their peak.
struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded unchanged to the system allocator.
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            let now = LIVE.fetch_add(layout.size(), Ordering::Relaxed) + layout.size();
            PEAK.fetch_max(now, Ordering::Relaxed);
        }
        p
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: forwarded unchanged to the system allocator.
        unsafe { System.dealloc(ptr, layout) };
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
    }
}

#[global_allocator]
static ALLOC: Counting = Counting;

/// The argument every call gets.
const X: i32 = 3;

struct Case {
    kind: &'static str,
    n: usize,
    elf: Vec<u8>,
}

fn cases() -> Vec<Case> {
    let opts = Options { opt_level: OptLevel::None, ..Options::default() };
    let mut out = Vec::new();
    for &kind in &FAMILIES {
        for n in sizes() {
            let funcs = cranelift_reader::parse_functions(&source(kind, n)).expect("generated CLIF parses");
            let obj = ursa_backend::compile_module(&funcs, &opts).expect("compiles");
            out.push(Case { kind, n, elf: ursa_emit::elf::write(&obj) });
        }
    }
    out
}

/// The three ways a call runs.
#[derive(Clone, Copy)]
enum Way {
    /// Every region translated on first use.
    Translated,
    /// The default configuration.
    Default,
    /// The interpreter alone.
    Interpreted,
}

fn config(way: Way) -> LaunchConfig {
    let base = LaunchConfig { step_limit: Some(1 << 32), ..LaunchConfig::default() };
    match way {
        Way::Translated => LaunchConfig { engine: Engine::Jit, jit_threshold: 1, ..base },
        Way::Default => base,
        Way::Interpreted => LaunchConfig { engine: Engine::IssueLoop, ..base },
    }
}

/// Calls `%f(X)` on `prog` (the program of `case`); checks the result.
fn call(case: &Case, prog: &Program, way: Way) {
    let mut gpu = Gpu::new();
    let (r, _) = gpu.call_with(prog, "f", &[X as u32], 1, &config(way)).expect("runs");
    assert_eq!(r[0] as i32, expected(case.kind, case.n, X), "{} at {}: wrong result", case.kind, case.n);
}

fn load(case: &Case) -> Program {
    Program::load(&case.elf).expect("loads")
}

fn bench(c: &mut Criterion) {
    let cases = cases();
    for (way, name) in [(Way::Translated, "translated"), (Way::Default, "default"), (Way::Interpreted, "interp")] {
        for &kind in &FAMILIES {
            let mut g = c.benchmark_group(format!("sim_scaling/{}/{}", name, kind));
            g.sample_size(10);
            // Criterion samples the smallest size (a translated call of the
            // larger `params` and `live` takes seconds); the table below
            // times every size once.
            for case in cases.iter().filter(|c| c.kind == kind).take(1) {
                g.bench_with_input(BenchmarkId::from_parameter(case.n), case, |b, case| {
                    b.iter_batched(|| load(case), |prog| call(case, &prog, way), BatchSize::LargeInput)
                });
            }
            g.finish();
        }
    }
    println!("one-lane calls on a fresh program, per family and size (translated: every region on first use):");
    println!(
        "  {:<7} {:>6} {:>7} {:>11} {:>10} {:>12} {:>9} {:>9} {:>10} {:>10}",
        "family", "n", "insts", "translated", "translate", "peak heap", "B/inst", "exponent", "default", "interp"
    );
    for &kind in &FAMILIES {
        let mut last: Option<f64> = None;
        for case in cases.iter().filter(|c| c.kind == kind) {
            let prog = load(case);
            let base = LIVE.load(Ordering::Relaxed);
            PEAK.store(base, Ordering::Relaxed);
            let t = Instant::now();
            call(case, &prog, Way::Translated);
            let jit = t.elapsed().as_secs_f64();
            let peak = PEAK.load(Ordering::Relaxed).saturating_sub(base);
            let translate = prog.jit_stats().time.as_secs_f64();
            let timed = |way| {
                let fresh = load(case);
                let t = Instant::now();
                call(case, &fresh, way);
                t.elapsed().as_secs_f64()
            };
            let (default, interp) = (timed(Way::Default), timed(Way::Interpreted));
            let insts = prog.len();
            let exponent = last.map(|l| format!("{:.2}", (jit / l).log2())).unwrap_or_else(|| "-".into());
            last = Some(jit);
            println!(
                "  {:<7} {:>6} {:>7} {:>9.1}ms {:>8.1}ms {:>10.1}MB {:>9.0} {:>9} {:>8.2}ms {:>8.2}ms",
                kind,
                case.n,
                insts,
                jit * 1e3,
                translate * 1e3,
                peak as f64 / 1e6,
                peak as f64 / insts as f64,
                exponent,
                default * 1e3,
                interp * 1e3
            );
        }
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
