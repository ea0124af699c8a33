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

#[path = "../benches/support/clif_corpus.rs"]
mod clif_corpus;
use clif_corpus::{clif_files, parse_clif};

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
    let t0 = std::time::Instant::now();
    for _ in 0..count {
        for f in &funcs {
            let _ = std::hint::black_box(ursa_backend::compile(f, &opts));
        }
    }
    eprintln!("{} functions, {:.1} us per compile of the set", funcs.len(), t0.elapsed().as_secs_f64() * 1e6 / count.max(1) as f64);
}
