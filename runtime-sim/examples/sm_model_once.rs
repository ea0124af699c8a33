//! One SM-model launch of each workload of the `interp` bench's
//! `sm_model` groups (or of those named on the command line), on one
//! thread, printing its warp-instructions: run under
//! `valgrind --tool=callgrind` for instructions per warp-instruction, a
//! figure that does not depend on the machine's load (docs/performance.md 4.3).

#[path = "../benches/support/workloads.rs"]
mod workloads;

fn main() {
    let only: Vec<String> = std::env::args().skip(1).collect();
    let pool = rayon::ThreadPoolBuilder::new().num_threads(1).build().expect("pool");
    for (name, prog, mut gpu, kernel, cfg, args) in workloads::sm_workloads() {
        if !only.is_empty() && !only.iter().any(|o| name.starts_with(o.as_str())) {
            continue;
        }
        let stats = pool.install(|| gpu.launch(&prog, kernel, &cfg, &args)).expect("launch");
        let cycles = stats.sm.as_ref().map(|s| s.cycles).unwrap_or(0);
        println!("{} {} warp-instructions {} cycles", name, stats.instructions, cycles);
    }
}
