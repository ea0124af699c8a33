//! Compiles the functions of one CLIF file many times, for profiling the
//! compiler (`perf record target/release/examples/compile_loop FILE N [NAME]`).
//!
//!     cargo build --release -p ursa-backend --example compile_loop
//!     target/release/examples/compile_loop FILE.clif 2000 [NAME-SUBSTRING]
//!
//! Prints the mean time per compile of the set. `target` lines are ignored,
//! as the compile-time benchmark does.

use cranelift_reader::{parse_test, ParseOptions};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() < 3 {
        eprintln!("usage: compile_loop FILE.clif COUNT [NAME-SUBSTRING]");
        std::process::exit(2);
    }
    let text = match std::fs::read_to_string(&args[1]) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("{}: {}", args[1], e);
            std::process::exit(1);
        }
    };
    let text: String = text.lines().map(|l| if l.trim_start().starts_with("target") { "" } else { l }).collect::<Vec<_>>().join("\n");
    let tf = match parse_test(&text, ParseOptions::default()) {
        Ok(tf) => tf,
        Err(e) => {
            eprintln!("{}: {}", args[1], e);
            std::process::exit(1);
        }
    };
    let Ok(count) = args[2].parse::<u32>() else {
        eprintln!("COUNT must be a number, not `{}`", args[2]);
        std::process::exit(2);
    };
    let funcs: Vec<_> =
        tf.functions.into_iter().map(|(f, _)| f).filter(|f| args.get(3).is_none_or(|n| f.name.to_string().contains(n.as_str()))).collect();
    let t0 = std::time::Instant::now();
    for _ in 0..count {
        for f in &funcs {
            let _ = std::hint::black_box(ursa_backend::compile(f, &Default::default()));
        }
    }
    eprintln!("{} functions, {:.1} us per compile of the set", funcs.len(), t0.elapsed().as_secs_f64() * 1e6 / count.max(1) as f64);
}
