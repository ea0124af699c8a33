//! Interpreter throughput on a compute-heavy kernel: an integer hash loop
//! (IMAD, LOP3, SHF, IADD, ISETP, BRA) run by every lane, an F32 loop and a
//! memory-bound loop. Reports simulated lane-instructions per second
//! (criterion "elements"): group `interp` in wall-clock time, group
//! `interp_cpu` in CPU time of the process (what a shared machine's load
//! does not inflate; run with `RAYON_NUM_THREADS=1` for one core).

use criterion::measurement::{Measurement, ValueFormatter};
use criterion::{criterion_group, criterion_main, BenchmarkGroup, Criterion, Throughput};
use ursa_sim::{Arg, LaunchConfig, Program};

#[path = "support/workloads.rs"]
mod workloads;
use workloads::*;

/// The full-warp kernels of group `interp` (and `interp_cpu`).
fn full_warps<M: Measurement>(g: &mut BenchmarkGroup<M>) {
    // Load time: the ELF read and every instruction decoded into its op once.
    let elf = ursa_emit::elf::write(&ursa_emit::asm::assemble(KERNEL, "bench.s").expect("assemble"));
    g.throughput(Throughput::Elements(1));
    g.bench_function("program_load", |b| b.iter(|| Program::load(&elf).unwrap()));
    let (prog, mut gpu, out) = setup();
    let cfg = LaunchConfig { grid: [8, 1, 1], block: [256, 1, 1], ..Default::default() };
    let args = [Arg::Ptr(out), Arg::U32(1024)];
    let lane_insts = gpu.launch(&prog, "k", &cfg, &args).expect("launch").lane_instructions;
    g.throughput(Throughput::Elements(lane_insts));
    g.sample_size(10);
    g.bench_function("int_hash_loop_2048_threads", |b| b.iter(|| gpu.launch(&prog, "k", &cfg, &args).unwrap()));
    let one = LaunchConfig::default();
    let args1 = [Arg::Ptr(out), Arg::U32(1)];
    g.throughput(Throughput::Elements(1));
    g.bench_function("one_thread_launch", |b| b.iter(|| gpu.launch(&prog, "k", &one, &args1).unwrap()));
    let (fprog, mut fgpu, fout) = setup_with(FLOAT_KERNEL);
    let fargs = [Arg::Ptr(fout), Arg::U32(1024)];
    let lane_insts = fgpu.launch(&fprog, "k", &cfg, &fargs).expect("launch").lane_instructions;
    g.throughput(Throughput::Elements(lane_insts));
    g.bench_function("f32_loop_2048_threads", |b| b.iter(|| fgpu.launch(&fprog, "k", &cfg, &fargs).unwrap()));
    let (mprog, mut mgpu, margs) = memory_setup();
    let lane_insts = mgpu.launch(&mprog, "k", &cfg, &margs).expect("launch").lane_instructions;
    g.throughput(Throughput::Elements(lane_insts));
    g.bench_function("memory_loop_2048_threads", |b| b.iter(|| mgpu.launch(&mprog, "k", &cfg, &margs).unwrap()));
}

/// The SM timing model (docs/timing.md) on the hash loop, the memory loop
/// and `matmul_i32`, throughput in warp-instructions per second (the
/// interpreter's run of each CTA included, as `ursa run --timing sm` does),
/// in rayon pools of `threads` threads (with two, the interpreter runs
/// ahead of the model on the second).
fn sm_model_workloads<M: Measurement>(g: &mut BenchmarkGroup<M>, threads: &[usize]) {
    g.sample_size(10);
    let mut work = sm_workloads();
    for (name, prog, gpu, kernel, cfg, args) in &mut work {
        let warp_insts = gpu.launch(prog, kernel, cfg, args).expect("launch").instructions;
        g.throughput(Throughput::Elements(warp_insts));
        for &t in threads {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(t).build().expect("pool");
            g.bench_function(format!("{}_{}_threads", name, t), |b| {
                b.iter(|| pool.install(|| gpu.launch(prog, kernel, cfg, args).unwrap()))
            });
        }
    }
}

/// Group `sm_model` in wall-clock time, one and two threads.
fn sm_model(c: &mut Criterion) {
    let mut g = c.benchmark_group("sm_model");
    sm_model_workloads(&mut g, &[1, 2]);
    g.finish();
}

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("interp");
    full_warps(&mut g);
    g.finish();
    sm_model(c);
}

/// The same kernels timed in CPU time of the process (the SM model on one
/// thread: group `sm_model_cpu`).
fn bench_cpu(c: &mut Criterion<ProcessCpu>) {
    let mut g = c.benchmark_group("interp_cpu");
    full_warps(&mut g);
    g.finish();
    let mut g = c.benchmark_group("sm_model_cpu");
    sm_model_workloads(&mut g, &[1]);
    g.finish();
}

/// CPU time of this process in nanoseconds: the sum over its threads of
/// the first field of `/proc/self/task/*/schedstat` (Linux; 0 elsewhere).
fn process_cpu_ns() -> u64 {
    let Ok(dir) = std::fs::read_dir("/proc/self/task") else { return 0 };
    dir.filter_map(|t| std::fs::read_to_string(t.ok()?.path().join("schedstat")).ok())
        .filter_map(|s| s.split_whitespace().next()?.parse::<u64>().ok())
        .sum()
}

/// A criterion measurement in CPU time of the process, not wall-clock time:
/// on a machine shared with other work, wall-clock time also counts the
/// time the benchmark waited for a core.
struct ProcessCpu;

impl Measurement for ProcessCpu {
    type Intermediate = u64;
    type Value = u64;
    fn start(&self) -> u64 {
        process_cpu_ns()
    }
    fn end(&self, start: u64) -> u64 {
        process_cpu_ns().saturating_sub(start)
    }
    fn add(&self, a: &u64, b: &u64) -> u64 {
        a + b
    }
    fn zero(&self) -> u64 {
        0
    }
    fn to_f64(&self, v: &u64) -> f64 {
        *v as f64
    }
    fn formatter(&self) -> &dyn ValueFormatter {
        &CpuFormatter
    }
}

/// Formats CPU nanoseconds as "cpu-ms" and throughputs per CPU second.
struct CpuFormatter;

impl ValueFormatter for CpuFormatter {
    fn scale_values(&self, typical: f64, values: &mut [f64]) -> &'static str {
        let (div, unit) = if typical < 1e6 { (1e3, "cpu-µs") } else { (1e6, "cpu-ms") };
        values.iter_mut().for_each(|v| *v /= div);
        unit
    }
    fn scale_throughputs(&self, _typical: f64, t: &Throughput, values: &mut [f64]) -> &'static str {
        let n = match t {
            Throughput::Elements(n) | Throughput::Bytes(n) | Throughput::BytesDecimal(n) => *n as f64,
        };
        // Millions per CPU second.
        values.iter_mut().for_each(|v| *v = n * 1e3 / *v);
        "M/cpu-s"
    }
    fn scale_for_machines(&self, _values: &mut [f64]) -> &'static str {
        "ns"
    }
}

/// The integer loop over 64 CTAs of 128 threads, in rayon pools of 1 and 2
/// threads: the multi-core speed-up is the ratio of the two times.
fn cores(c: &mut Criterion) {
    let (prog, mut gpu, _) = setup();
    let out = gpu.alloc(4 * 64 * 128, 16);
    let cfg = LaunchConfig { grid: [64, 1, 1], block: [128, 1, 1], ..Default::default() };
    let args = [Arg::Ptr(out), Arg::U32(256)];
    let lane_insts = gpu.launch(&prog, "k", &cfg, &args).expect("launch").lane_instructions;
    let mut g = c.benchmark_group("cores");
    g.throughput(Throughput::Elements(lane_insts));
    g.sample_size(10);
    for threads in [1, 2] {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().expect("pool");
        g.bench_function(format!("int_hash_64_ctas_{}_threads", threads), |b| {
            b.iter(|| pool.install(|| gpu.launch(&prog, "k", &cfg, &args).unwrap()))
        });
    }
    g.finish();
}

criterion_group!(benches, bench, cores);
criterion_group! {
    name = cpu;
    config = Criterion::default().with_measurement(ProcessCpu);
    targets = bench_cpu
}
criterion_main!(benches, cpu);
