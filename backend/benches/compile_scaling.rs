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

const FAMILIES: [&str; 4] = ["params", "live", "blocks", "insts"];

/// The CLIF text of family `kind` at size `n`.
fn source(kind: &str, n: usize) -> String {
    let mut o = vec!["function %f(i32) -> i32 {".to_string(), "block0(v0: i32):".into(), "    v999999 = iconst.i32 7".into()];
    match kind {
        "params" => {
            for i in 1..=n {
                o.push(format!("    v{} = iadd v{}, v999999", i, i - 1));
            }
            let args: Vec<String> = (1..=n).map(|i| format!("v{}", i)).collect();
            o.push(format!("    jump block1({})", args.join(", ")));
            let base = n + 1;
            let params: Vec<String> = (0..n).map(|i| format!("v{}: i32", base + i)).collect();
            o.push(format!("block1({}):", params.join(", ")));
            let mut acc = base;
            for i in 1..n {
                o.push(format!("    v{} = iadd v{}, v{}", base + n + i, acc, base + i));
                acc = base + n + i;
            }
            o.push(format!("    return v{}", acc));
        }
        "live" => {
            for i in 1..=n {
                o.push(format!("    v{} = imul v0, v{}", i, i - 1));
            }
            let mut acc = n;
            for i in (1..n).rev() {
                o.push(format!("    v{} = iadd v{}, v{}", 2 * n - i, acc, i));
                acc = 2 * n - i;
            }
            o.push(format!("    return v{}", acc));
        }
        "blocks" => {
            for b in 0..n {
                o.push(format!("    v{} = iadd v{}, v999999", b + 1, b));
                o.push(format!("    jump block{}", b + 1));
                o.push(format!("block{}:", b + 1));
            }
            o.push(format!("    return v{}", n));
        }
        _ => {
            for i in 0..n {
                let op = if i % 2 == 1 { format!("iadd v{}, v999999", i) } else { format!("imul v{}, v{}", i, i) };
                o.push(format!("    v{} = {}", i + 1, op));
            }
            o.push(format!("    return v{}", n));
        }
    }
    o.push("}".into());
    o.join("\n")
}

fn function(kind: &str, n: usize) -> Function {
    let mut funcs = cranelift_reader::parse_functions(&source(kind, n)).expect("generated CLIF parses");
    funcs.remove(0)
}

fn sizes() -> Vec<usize> {
    let max: usize = std::env::var("URSA_SCALING_MAX").ok().and_then(|s| s.parse().ok()).unwrap_or(4000);
    std::iter::successors(Some(1000), |n| Some(n * 2)).take_while(|&n| n <= max).collect()
}

fn opts() -> Options {
    Options { opt_level: OptLevel::None, ..Options::default() }
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
