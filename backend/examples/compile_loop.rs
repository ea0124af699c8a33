//! Compiles the functions of one CLIF file (or of every `.clif` file under a
//! directory) many times, for profiling the compiler
//! (`perf record target/release/examples/compile_loop FILE N [NAME]`).
//!
//!     cargo build --release -p ursa-backend --example compile_loop
//!     target/release/examples/compile_loop FILE.clif 2000 [NAME-SUBSTRING]
//!
//! `URSA_OPT_LEVEL=none` (or `speed`, the default) sets the optimization
//! level, as for the `ursa` command.
//!
//! Prints the mean time per compile of the set. `target` lines are ignored,
//! as the compile-time benchmark does; a file that does not parse is skipped
//! (and named) when a directory is given. With a directory and a count of 1,
//! `valgrind --tool=callgrind --toggle-collect='ursa_backend::compile'` gives
//! instruction counts that do not depend on the machine's load.
//!
//! With `URSA_VS_CRANELIFT=1` it keeps only the functions that both Ursa and
//! Cranelift's x86-64 backend compile (as the `compile_time` benchmark does)
//! and compiles each with both, at the same optimization level, in
//! `ursa_side` and `cranelift_side`: under callgrind, the inclusive counts
//! of those two functions compare the compilers instruction for instruction.
//!
//! With `URSA_EACH=1` as well, after one round over the set it compiles each
//! function alone (`COUNT` times on each side) and names it on stderr, with
//! the lane count of the widest vector type it uses (1 for none):
//! `tests/perf/per_function.sh` turns a callgrind run of this mode
//! (`--dump-after` of both sides) into one line per function, the largest
//! excess over Cranelift first, and the totals by lane count.

#[path = "../benches/support/clif_corpus.rs"]
mod clif_corpus;
use clif_corpus::{clif_files, parse_clif};
#[path = "../benches/support/cranelift_x64.rs"]
mod cranelift_x64;

use cranelift_codegen::ir::Function;
use cranelift_codegen::isa::OwnedTargetIsa;

/// The most lanes of any vector type `f` uses (its signature, its values);
/// 1 when it uses none.
fn widest_lanes(f: &Function) -> u32 {
    let sig = f.signature.params.iter().chain(&f.signature.returns).map(|p| p.value_type);
    f.dfg.values().map(|v| f.dfg.value_type(v)).chain(sig).filter(|t| t.is_vector()).map(|t| t.lane_count()).max().unwrap_or(1)
}

#[inline(never)]
fn ursa_side(funcs: &[Function], opts: &ursa_backend::Options) {
    for f in funcs {
        let _ = std::hint::black_box(ursa_backend::compile(f, opts));
    }
}

#[inline(never)]
fn cranelift_side(funcs: &[Function], isa: &OwnedTargetIsa) {
    for f in funcs {
        std::hint::black_box(cranelift_x64::cranelift_compile(isa, f));
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() < 3 {
        eprintln!("usage: compile_loop FILE.clif|DIR COUNT [NAME-SUBSTRING]");
        std::process::exit(2);
    }
    let path = std::path::Path::new(&args[1]);
    let files = if path.is_dir() { clif_files(path) } else { vec![path.to_path_buf()] };
    let mut all = Vec::new();
    for file in &files {
        match parse_clif(file) {
            Ok(funcs) => all.extend(funcs),
            Err(e) if path.is_dir() => eprintln!("skipped {}", e),
            Err(e) => {
                eprintln!("{}", e);
                std::process::exit(1);
            }
        }
    }
    let Ok(count) = args[2].parse::<u32>() else {
        eprintln!("COUNT must be a number, not `{}`", args[2]);
        std::process::exit(2);
    };
    let funcs: Vec<_> = all.into_iter().filter(|f| args.get(3).is_none_or(|n| f.name.to_string().contains(n.as_str()))).collect();
    let level = std::env::var("URSA_OPT_LEVEL").ok().and_then(|v| ursa_backend::OptLevel::from_name(&v)).unwrap_or_default();
    let opts = ursa_backend::Options { opt_level: level, ..Default::default() };
    if std::env::var_os("URSA_VS_CRANELIFT").is_some() {
        let isa = cranelift_x64::x64(level);
        let hook = std::panic::take_hook();
        std::panic::set_hook(Box::new(|_| {}));
        let funcs: Vec<_> = funcs.into_iter().filter(|f| cranelift_x64::both_compile(&isa, f, &opts)).collect();
        std::panic::set_hook(hook);
        if std::env::var_os("URSA_EACH").is_some() {
            // One round over the set (first uses), then each function alone
            // on both sides, named on stderr in order.
            ursa_side(&funcs, &opts);
            cranelift_side(&funcs, &isa);
            for f in &funcs {
                eprintln!("{} {}", f.name, widest_lanes(f));
                for _ in 0..count {
                    ursa_side(std::slice::from_ref(f), &opts);
                }
                for _ in 0..count {
                    cranelift_side(std::slice::from_ref(f), &isa);
                }
            }
            return;
        }
        // Each round's two times are kept: the mean is what the set costs,
        // the median of the rounds' ratios what a round costs when neither
        // side was interrupted (other jobs on the host hit single rounds).
        let mut rounds: Vec<(f64, f64)> = Vec::with_capacity(count as usize);
        for _ in 0..count {
            let t0 = std::time::Instant::now();
            ursa_side(&funcs, &opts);
            let u = t0.elapsed().as_secs_f64();
            let t0 = std::time::Instant::now();
            cranelift_side(&funcs, &isa);
            rounds.push((u, t0.elapsed().as_secs_f64()));
        }
        let (tu, tc) = rounds.iter().fold((0f64, 0f64), |(a, b), &(u, c)| (a + u, b + c));
        let mut ratios: Vec<f64> = rounds.iter().map(|&(u, c)| u / c).collect();
        let median = cranelift_x64::median(&mut ratios);
        let per = |t: f64| t * 1e6 / count.max(1) as f64;
        eprintln!(
            "{} functions, per compile of the set: ursa {:.1} us, cranelift x86-64 {:.1} us, ratio {:.2} (median of the rounds' ratios {:.3})",
            funcs.len(),
            per(tu),
            per(tc),
            tu / tc,
            median
        );
        return;
    }
    let t0 = std::time::Instant::now();
    for _ in 0..count {
        ursa_side(&funcs, &opts);
    }
    eprintln!("{} functions, {:.1} us per compile of the set", funcs.len(), t0.elapsed().as_secs_f64() * 1e6 / count.max(1) as f64);
}
