//! `ursa fuzz`: the program generator's command (see `ursa_backend::fuzzgen`).

use std::time::Instant;

use ursa_cli::fuzzgen;

pub fn fuzz(seed: u64, count: u64, jobs: usize, reduce: bool, show: bool) -> Result<(), String> {
    if show {
        for i in 0..count {
            let s = seed.wrapping_add(i);
            let (p, args) = fuzzgen::case(s, &fuzzgen::gen::Limits::default());
            let f = fuzzgen::Failure {
                kind: fuzzgen::FailKind::Mismatch,
                message: "generated program (not a failure)".into(),
                args: args.first().cloned(),
            };
            println!("{}", fuzzgen::filetest(&p, &f, &format!("`ursa fuzz --seed {} --count 1 --show`", s)));
        }
        return Ok(());
    }
    // Panics inside cranelift-interpreter are expected (a case it cannot run
    // is skipped) and every other panic is caught and reported as a failure
    // with its message: keep the default hook from printing each one.
    std::panic::set_hook(Box::new(|_| {}));
    let t0 = Instant::now();
    let report = |failure: Option<&str>, sum: &fuzzgen::Summary| match failure {
        Some(f) => println!("{}", f),
        None => {
            eprintln!("fuzz: {} / {} programs: {} ({:.0} s)", sum.passed + sum.failed + sum.skipped, count, sum, t0.elapsed().as_secs_f64())
        }
    };
    let sum = fuzzgen::run(seed, count, jobs, reduce, &report);
    println!("fuzz: seeds {}..{}: {} ({:.1} s)", seed, seed.wrapping_add(count), sum, t0.elapsed().as_secs_f64());
    if sum.failed > 0 {
        Err(format!("{} of {} programs failed", sum.failed, count))
    } else {
        Ok(())
    }
}

/// `ursa fuzz --kernels`: the kernel generator's command (see `ursa_cli::kernelgen`).
pub fn fuzz_kernels(seed: u64, count: u64, jobs: usize, reduce: bool, show: bool) -> Result<(), String> {
    use ursa_cli::kernelgen;
    if show {
        for i in 0..count {
            let s = seed.wrapping_add(i);
            let k = kernelgen::case(s, &kernelgen::gen::Limits::default());
            let f = kernelgen::Failure { kind: kernelgen::FailKind::Mismatch, message: "generated kernel (not a failure)".into() };
            println!("{}", kernelgen::clif_file(&k, &f, &format!("`ursa fuzz --kernels --seed {} --count 1 --show`", s)));
        }
        return Ok(());
    }
    std::panic::set_hook(Box::new(|_| {}));
    let t0 = Instant::now();
    let report = |failure: Option<&str>, sum: &kernelgen::Summary| match failure {
        Some(f) => println!("{}", f),
        None => {
            eprintln!("fuzz: {} / {} kernels: {} ({:.0} s)", sum.passed + sum.failed + sum.skipped, count, sum, t0.elapsed().as_secs_f64())
        }
    };
    let sum = kernelgen::run(seed, count, jobs, reduce, &report);
    println!("fuzz: kernels of seeds {}..{}: {} ({:.1} s)", seed, seed.wrapping_add(count), sum, t0.elapsed().as_secs_f64());
    if sum.failed > 0 {
        Err(format!("{} of {} kernels failed", sum.failed, count))
    } else {
        Ok(())
    }
}

/// `ursa fuzz --kernels --unroll-share`.
pub fn unroll_share(seed: u64, count: u64) -> Result<(), String> {
    let u = ursa_cli::kernelgen::unroll_share(seed, count);
    let pct = |a: u64, b: u64| if b == 0 { 0.0 } else { 100.0 * a as f64 / b as f64 };
    println!(
        "kernels of seeds {}..{}: {} counted loops generated; after opt_egraph {} single-block loops with a load, of which opt_unroll_loops unrolled {} ({:.1} %; {:.1} % of the generated)",
        seed,
        seed.wrapping_add(count),
        u.generated,
        u.candidates,
        u.unrolled,
        pct(u.unrolled, u.candidates),
        pct(u.unrolled, u.generated)
    );
    Ok(())
}
