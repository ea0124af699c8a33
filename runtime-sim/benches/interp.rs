//! Interpreter throughput on a compute-heavy kernel: an integer hash loop
//! (IMAD, LOP3, SHF, IADD, ISETP, BRA) run by every lane, an F32 loop and a
//! memory-bound loop. Reports simulated lane-instructions per second
//! (criterion "elements"): group `interp` in wall-clock time, group
//! `interp_cpu` in CPU time of the process (what a shared machine's load
//! does not inflate; run with `RAYON_NUM_THREADS=1` for one core).

use criterion::measurement::{Measurement, ValueFormatter};
use criterion::{criterion_group, criterion_main, BenchmarkGroup, Criterion, Throughput};
use ursa_sim::{Arg, Gpu, LaunchConfig, Program};

pub const KERNEL: &str = "
.kernel k
.param out, 8
.param iters, 4
    S2R R0, SR_TID_X ;
    S2R R12, SR_CTAID_X ;
    MOV R5, R0 ;
    MOV R6, c[0x0][0x168] ;
    MOV R7, 0x19660d ;
    MOV R8, 0x3c6ef35f ;
    MOV R9, RZ ;
    MOV R10, RZ ;
    MOV R11, RZ ;
L_loop:
    IMAD R5, R5, R7, R8 ;
    LOP3.LUT R9, R5, R9, R10, 0x96, !PT ;
    SHF.R.U32.HI R10, RZ, 0x3, R5 ;
    IADD R11, R11, R9 ;
    IADD R6, R6, -0x1 ;
    ISETP.NE.AND P0, PT, R6, RZ, PT ;
@P0 BRA L_loop ;
    S2R R13, SR_NTID_X ;
    IMAD R0, R12, R13, R0 ;
    MOV.64 R[2:3], c[0x0][0x160] ;
    IMAD.WIDE.U32 R[2:3], R0, 0x4, R[2:3] ;
    STG [R[2:3]], R11 ;
    EXIT ;
";

/// An F32 loop (FFMA, FMUL, FADD, FMNMX) with the same control structure.
pub const FLOAT_KERNEL: &str = "
.kernel k
.param out, 8
.param iters, 4
    S2R R0, SR_TID_X ;
    I2F R5, R0 ;
    MOV R6, c[0x0][0x168] ;
    MOV R7, 0x3f7ff000 ;
    MOV R8, 0x3c000000 ;
    MOV R9, RZ ;
L_loop:
    FFMA R5, R5, R7, R8 ;
    FMUL R10, R5, R5 ;
    FADD R9, R9, R10 ;
    FMNMX R9, R9, R5, !PT ;
    IADD R6, R6, -0x1 ;
    ISETP.NE.AND P0, PT, R6, RZ, PT ;
@P0 BRA L_loop ;
    MOV.64 R[2:3], c[0x0][0x160] ;
    IMAD.WIDE.U32 R[2:3], R0, 0x4, R[2:3] ;
    STG [R[2:3]], R9 ;
    EXIT ;
";

/// A memory-bound loop: each thread loads a word, accumulates it and stores
/// the sum, then steps both addresses by the grid's stride (coalesced
/// global accesses; three of the six loop instructions are LDG, STG and the
/// address update).
pub const MEMORY_KERNEL: &str = "
.kernel k
.param out, 8
.param input, 8
.param iters, 4
    S2R R0, SR_TID_X ;
    S2R R12, SR_CTAID_X ;
    S2R R13, SR_NTID_X ;
    IMAD R0, R12, R13, R0 ;
    MOV R6, c[0x0][0x170] ;
    MOV.64 R[2:3], c[0x0][0x168] ;
    IMAD.WIDE.U32 R[2:3], R0, 0x4, R[2:3] ;
    MOV.64 R[4:5], c[0x0][0x160] ;
    IMAD.WIDE.U32 R[4:5], R0, 0x4, R[4:5] ;
    MOV R8, 0x2000 ;
    MOV R9, RZ ;
L_loop:
    LDG R7, [R[2:3]] ;
    IADD R9, R9, R7 ;
    STG [R[4:5]], R9 ;
    IMAD.WIDE.U32 R[2:3], R8, 0x1, R[2:3] ;
    IADD R6, R6, -0x1 ;
    ISETP.NE.AND P0, PT, R6, RZ, PT ;
    IMAD.WIDE.U32 R[4:5], R8, 0x1, R[4:5] ;
@P0 BRA L_loop ;
    EXIT ;
";

fn setup() -> (Program, Gpu, u64) {
    setup_with(KERNEL)
}

fn setup_with(src: &str) -> (Program, Gpu, u64) {
    let obj = ursa_emit::asm::assemble(src, "bench.s").expect("assemble");
    let prog = Program::load(&ursa_emit::elf::write(&obj)).expect("load");
    let mut gpu = Gpu::new();
    let out = gpu.alloc(4 * 2048, 16);
    (prog, gpu, out)
}

/// The memory loop's program and device: 2048 threads stream 64 words
/// each through 512 KiB in and out.
fn memory_setup() -> (Program, Gpu, [Arg; 3]) {
    let (prog, mut gpu, _) = setup_with(MEMORY_KERNEL);
    let (input, out) = (gpu.alloc(4 * 2048 * 64, 16), gpu.alloc(4 * 2048 * 64, 16));
    (prog, gpu, [Arg::Ptr(out), Arg::Ptr(input), Arg::U32(64)])
}

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

/// `matmul_i32` of `examples/kernels/` as compiled at 3fc04d4 (the fixed
/// assembly of `tests/sm_kernels/`), n = 128 over 8 × 8 CTAs of 16 × 16.
fn matmul_setup() -> (Program, Gpu, [Arg; 4]) {
    let src = include_str!("../tests/sm_kernels/matmul_i32.s");
    let prog = Program::load(&ursa_emit::elf::write(&ursa_emit::asm::assemble(src, "matmul_i32.s").expect("assemble"))).expect("load");
    let mut gpu = Gpu::new();
    let n = 128u64;
    let (a, b, c) = (gpu.alloc(4 * n * n, 16), gpu.alloc(4 * n * n, 16), gpu.alloc(4 * n * n, 16));
    let words: Vec<u8> = (0..n * n).flat_map(|i| ((i * 2_654_435_761) as u32 >> 7).to_le_bytes()).collect();
    gpu.write(a, &words).unwrap();
    gpu.write(b, &words).unwrap();
    (prog, gpu, [Arg::Ptr(a), Arg::Ptr(b), Arg::Ptr(c), Arg::I32(n as i32)])
}

/// The SM timing model (docs/timing.md) on the hash loop, the memory loop
/// and `matmul_i32`, throughput in warp-instructions per second (the
/// interpreter's run of each CTA included, as `ursa run --timing sm` does),
/// in rayon pools of `threads` threads (with two, the interpreter runs
/// ahead of the model on the second).
fn sm_model_workloads<M: Measurement>(g: &mut BenchmarkGroup<M>, threads: &[usize]) {
    g.sample_size(10);
    let machine = Some(std::sync::Arc::new(ursa_sim::machine_desc::MachineDesc::default()));
    let cfg = LaunchConfig { grid: [8, 1, 1], block: [256, 1, 1], machine: machine.clone(), ..Default::default() };
    let (prog, gpu, out) = setup();
    let args = vec![Arg::Ptr(out), Arg::U32(1024)];
    let (mprog, mgpu, margs) = memory_setup();
    let (xprog, xgpu, xargs) = matmul_setup();
    let xcfg = LaunchConfig { grid: [8, 8, 1], block: [16, 16, 1], machine, ..Default::default() };
    let mut work = [
        ("int_hash_loop_2048_threads", prog, gpu, "k", cfg.clone(), args),
        ("memory_loop_2048_threads", mprog, mgpu, "k", cfg, margs.to_vec()),
        ("matmul_i32_n128", xprog, xgpu, "matmul_i32", xcfg, xargs.to_vec()),
    ];
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
