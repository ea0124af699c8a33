//! How compile time grows with function size (issue 25): four families of
//! generated functions, each at 1k, 2k and 4k of the quantity it scales,
//! compiled with `ursa_backend::compile` at `opt_level=none` (the mid-end
//! would fold the generated chains):
//!
//! - `params`: one jump passing n values to n block parameters;
//! - `live`: n values live at once (a product chain summed in reverse);
//! - `blocks`: n blocks in a chain, a value carried through all;
//! - `insts`: n dependent instructions in one block.
//!
//! After criterion's figures it prints, per family, the growth exponent
//! between successive sizes (log2 of the time ratio of a doubling: 1 is
//! linear, 2 quadratic), from one timed compile per size.
//!
//!     cargo bench -p ursa-backend --bench compile_scaling
//!
//! `URSA_SCALING_MAX=32000` extends the sizes (doubling from 1k).

use std::time::Instant;

use cranelift_codegen::ir::Function;
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use ursa_backend::{compile, OptLevel, Options};

#[allow(dead_code)]
#[path = "support/scaling_families.rs"]
mod scaling_families;
use scaling_families::{sizes, source, FAMILIES};

fn function(kind: &str, n: usize) -> Function {
    let mut funcs = cranelift_reader::parse_functions(&source(kind, n)).expect("generated CLIF parses");
    funcs.remove(0)
}

/// `opt_level=none`, or the level `$URSA_OPT_LEVEL` names.
fn opts() -> Options {
    let level = std::env::var("URSA_OPT_LEVEL").ok().and_then(|v| OptLevel::from_name(&v)).unwrap_or(OptLevel::None);
    Options { opt_level: level, ..Options::default() }
}

fn bench(c: &mut Criterion) {
    let opts = opts();
    let funcs: Vec<(&str, Vec<(usize, Function)>)> =
        FAMILIES.iter().map(|&kind| (kind, sizes().into_iter().map(|n| (n, function(kind, n))).collect())).collect();
    for (kind, fs) in &funcs {
        let mut g = c.benchmark_group(format!("compile_scaling/{}", kind));
        g.sample_size(10);
        for (n, f) in fs {
            g.bench_with_input(BenchmarkId::from_parameter(n), f, |b, f| b.iter(|| compile(f, &opts).expect("compiles")));
        }
        g.finish();
    }
    println!("growth exponents (log2 of the time ratio per doubling; 1 = linear):");
    for (kind, fs) in &funcs {
        let times: Vec<(usize, f64)> = fs
            .iter()
            .map(|(n, f)| {
                let t = Instant::now();
                compile(f, &opts).expect("compiles");
                (*n, t.elapsed().as_secs_f64())
            })
            .collect();
        let steps: Vec<String> = times.windows(2).map(|w| format!("{}->{}: {:.2}", w[0].0, w[1].0, (w[1].1 / w[0].1).log2())).collect();
        let last = times.last().map(|&(n, t)| format!("{} in {:.3} s", n, t)).unwrap_or_default();
        println!("  {:<7} {}  ({})", kind, steps.join(", "), last);
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
