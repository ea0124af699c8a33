//! Compile time: Ursa against Cranelift's own x86-64 backend, side by side,
//! on the same functions in one run (issue 12).
//!
//! The functions are those of Cranelift's conformance runtests
//! (`$URSA_CONFORMANCE`, default `../shared/conformance/runtests` beside the
//! repository) that both compilers accept; without that folder, the project's
//! own `tests/filetests`. Both sides start from the parsed CLIF function and
//! end with machine code: Ursa's `compile` (verifier, legalization, ISLE
//! lowering, regalloc2, encoding, scheduling bits), Cranelift's
//! `Context::compile` for x86-64 with default settings but `opt_level`,
//! which is the same on both sides: `speed` (Ursa's default: both run the
//! e-graph pass), or `none` with `URSA_OPT_LEVEL=none`.
//!
//! The verifier runs once on each side: Ursa's `compile` verifies its input
//! once; Cranelift's `Context::compile` with `enable_verifier` (its default)
//! verifies the function four times (before and inside `optimize`, after
//! removing unreachable code and constant phis), so it gets
//! `enable_verifier=false` and one explicit `verify_function` before
//! `compile` instead.
//!
//! Both sides reuse their allocators' working memory between functions:
//! Cranelift's side one `Context` per thread (cleared before each function,
//! which keeps its regalloc2 context), Ursa its per-thread regalloc2 context
//! (`assign_regs`).
//!
//! Each iteration of either benchmark of a category compiles the whole set
//! on both sides, one right after the other (which goes first alternates),
//! so each pair of timings was taken in the same seconds of the host: a
//! slower spell of the machine slows both sides of its pairs alike. The
//! `ursa` benchmark reports Ursa's time of its pairs to criterion,
//! `cranelift_x64` Cranelift's; both add their pairs to the category's
//! totals. The table printed at the end gives, per category, the scalar
//! categories and in total, the mean time per compile of the set on each
//! side, their ratio, and the median of the pairs' ratios.
//!
//!     cargo bench -p ursa-backend --bench compile_time
//!
//! With `URSA_PER_FUNCTION=1` it instead times each function alone (200
//! compiles on each side, alternating per function) and prints one line per
//! function, largest Ursa excess first: where compile time goes.

use std::cell::RefCell;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use cranelift_codegen::ir::Function;
use cranelift_codegen::isa::OwnedTargetIsa;
use criterion::{criterion_group, criterion_main, Criterion};
use ursa_backend::{compile, OptLevel, Options};

#[path = "support/clif_corpus.rs"]
mod clif_corpus;
use clif_corpus::{clif_files, parse_clif};
#[path = "support/cranelift_x64.rs"]
mod cranelift_x64;
use cranelift_x64::{both_compile, cranelift_compile, median};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn corpus() -> (PathBuf, &'static str) {
    if let Some(p) = std::env::var_os("URSA_CONFORMANCE") {
        return (PathBuf::from(p), "$URSA_CONFORMANCE");
    }
    let shared = root().join("../shared/conformance/runtests");
    if shared.is_dir() {
        return (shared, "the conformance runtests (shared/conformance/runtests)");
    }
    (root().join("tests/filetests"), "tests/filetests (no conformance folder found)")
}

/// The optimization level of both compilers: `$URSA_OPT_LEVEL`, default `speed`.
fn level() -> OptLevel {
    std::env::var("URSA_OPT_LEVEL").ok().and_then(|v| OptLevel::from_name(&v)).unwrap_or_default()
}

fn opts() -> Options {
    Options { opt_level: level(), ..Default::default() }
}

fn x64() -> OwnedTargetIsa {
    cranelift_x64::x64(level())
}

/// Functions per category (the first folder under the corpus root) that both
/// compilers compile.
fn load(isa: &OwnedTargetIsa) -> Vec<(String, Vec<Function>)> {
    let (dir, what) = corpus();
    let files = clif_files(&dir);
    let mut cats: Vec<(String, Vec<Function>)> = Vec::new();
    let (mut total, mut kept) = (0, 0);
    let hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    for p in &files {
        let cat = p
            .strip_prefix(&dir)
            .ok()
            .and_then(|r| r.components().next())
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .unwrap_or_default();
        let cat = if cat.ends_with(".clif") { "(top)".to_string() } else { cat };
        for f in parse_clif(p).unwrap_or_default() {
            total += 1;
            if both_compile(isa, &f, &opts()) {
                kept += 1;
                match cats.iter_mut().find(|c| c.0 == cat) {
                    Some(c) => c.1.push(f),
                    None => cats.push((cat.clone(), vec![f])),
                }
            }
        }
    }
    std::panic::set_hook(hook);
    eprintln!("compile_time: {} of {} functions from {} ({}) compile with both", kept, total, what, dir.display());
    cats
}

/// The paired timings of one category: every iteration of either benchmark
/// of the category compiles the set on both sides, one right after the
/// other, the side going first alternating, so that both sides of a pair
/// ran in the same seconds of the host.
#[derive(Default)]
struct Pairs {
    ursa: Duration,
    cranelift: Duration,
    /// Ursa time / Cranelift time of each pair.
    ratios: Vec<f64>,
}

thread_local! {
    static TOTALS: RefCell<Vec<(String, Pairs)>> = const { RefCell::new(Vec::new()) };
}

/// `iters` pairs of compiles of `funcs` (the set once on each side), added to
/// `cat`'s totals; returns the time of the side criterion measures (`ursa`
/// or not).
fn paired(cat: &str, funcs: &[Function], isa: &OwnedTargetIsa, iters: u64, ursa: bool) -> Duration {
    let run_ursa = || {
        let t0 = Instant::now();
        for f in funcs {
            std::hint::black_box(compile(f, &opts()).is_ok());
        }
        t0.elapsed()
    };
    let run_cranelift = || {
        let t0 = Instant::now();
        for f in funcs {
            std::hint::black_box(cranelift_compile(isa, f));
        }
        t0.elapsed()
    };
    let mut mine = Duration::ZERO;
    TOTALS.with(|t| {
        let mut t = t.borrow_mut();
        let i = match t.iter().position(|e| e.0 == cat) {
            Some(i) => i,
            None => {
                t.push((cat.to_string(), Pairs::default()));
                t.len() - 1
            }
        };
        let p = &mut t[i].1;
        for k in 0..iters {
            let (u, c) = if k % 2 == 0 {
                let u = run_ursa();
                (u, run_cranelift())
            } else {
                let c = run_cranelift();
                (run_ursa(), c)
            };
            p.ursa += u;
            p.cranelift += c;
            p.ratios.push(u.as_secs_f64() / c.as_secs_f64());
            mine += if ursa { u } else { c };
        }
    });
    mine
}

fn bench(c: &mut Criterion) {
    let isa = x64();
    let cats = load(&isa);
    if std::env::var_os("URSA_PER_FUNCTION").is_some() {
        per_function(&isa, &cats);
        return;
    }
    for (cat, funcs) in &cats {
        let mut g = c.benchmark_group(format!("compile/{}", cat));
        // Each reports its own side's time of the pairs it runs; both add
        // their pairs to the category's totals.
        g.bench_function("ursa", |b| b.iter_custom(|iters| paired(cat, funcs, &isa, iters, true)));
        g.bench_function("cranelift_x64", |b| b.iter_custom(|iters| paired(cat, funcs, &isa, iters, false)));
        g.finish();
    }
    println!("\nUrsa / Cranelift x86-64 compile time (same functions, both sides timed in pairs, mean per compile of the set;");
    println!("median: of the ratios of the pairs, what a pair costs when neither side was interrupted):");
    println!("{:<12} {:>6} {:>12} {:>12} {:>7} {:>7}", "category", "funcs", "ursa", "cranelift", "ratio", "median");
    let line = |name: &str, n: usize, u: f64, c: f64, m: f64| {
        println!("{:<12} {:>6} {:>10.3}ms {:>10.3}ms {:>6.2}x {:>6.3}x", name, n, u * 1e3, c * 1e3, u / c, m)
    };
    // The total, and the total of the scalar categories (every one but
    // `simd`, whose vectors Ursa lowers lane by lane: docs/vectors.md). The
    // categories' pairs were timed apart, so the median of a sum has no
    // pairs of its own: its figure is each category's Cranelift time at
    // that category's median ratio, summed, over the Cranelift total.
    let (mut su, mut sc, mut scalar_u, mut scalar_c) = (0f64, 0f64, 0f64, 0f64);
    let (mut med_tot, mut med_scalar) = (0f64, 0f64);
    TOTALS.with(|t| {
        for (cat, p) in t.borrow_mut().iter_mut() {
            let n = cats.iter().find(|c| &c.0 == cat).map_or(0, |c| c.1.len());
            let pairs = p.ratios.len().max(1) as f64;
            let (u, cl) = (p.ursa.as_secs_f64() / pairs, p.cranelift.as_secs_f64() / pairs);
            let m = median(&mut p.ratios);
            su += u;
            sc += cl;
            med_tot += m * cl;
            if cat != "simd" {
                scalar_u += u;
                scalar_c += cl;
                med_scalar += m * cl;
            }
            line(cat, n, u, cl, m);
        }
    });
    line("scalar", cats.iter().filter(|c| c.0 != "simd").map(|c| c.1.len()).sum(), scalar_u, scalar_c, med_scalar / scalar_c);
    line("total", cats.iter().map(|c| c.1.len()).sum(), su, sc, med_tot / sc);
}

/// One line per function: Ursa's and Cranelift's time per compile, their
/// ratio, category, name and CLIF instruction count; sorted by Ursa's excess.
fn per_function(isa: &OwnedTargetIsa, cats: &[(String, Vec<Function>)]) {
    const N: u32 = 200;
    let time = |f: &dyn Fn()| {
        let t0 = Instant::now();
        for _ in 0..N {
            f();
        }
        t0.elapsed().as_secs_f64() / N as f64
    };
    let mut rows = Vec::new();
    for (cat, funcs) in cats {
        for f in funcs {
            let u = time(&|| {
                std::hint::black_box(compile(f, &opts()).is_ok());
            });
            let c = time(&|| {
                std::hint::black_box(cranelift_compile(isa, f));
            });
            rows.push((u, c, format!("{} {} ({} CLIF instructions)", cat, f.name, f.dfg.num_insts())));
        }
    }
    rows.sort_by(|a, b| (b.0 - b.1).total_cmp(&(a.0 - a.1)));
    let (tu, tc) = rows.iter().fold((0.0, 0.0), |(u, c), r| (u + r.0, c + r.1));
    println!("{:>10} {:>10} {:>7}  function", "ursa", "cranelift", "ratio");
    for (u, c, what) in &rows {
        println!("{:>8.1}us {:>8.1}us {:>6.2}x  {}", u * 1e6, c * 1e6, u / c, what);
    }
    println!("{:>8.3}ms {:>8.3}ms {:>6.2}x  total of {} functions", tu * 1e3, tc * 1e3, tu / tc, rows.len());
}

criterion_group!(benches, bench);
criterion_main!(benches);
