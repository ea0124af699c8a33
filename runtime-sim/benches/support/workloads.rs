//! The kernels and launches of the `interp` bench, shared with the
//! `sm_model_once` example (one launch of each SM-model workload, for
//! callgrind) and the tests that run the bench's kernels.

#![allow(dead_code)]

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

pub fn setup() -> (Program, Gpu, u64) {
    setup_with(KERNEL)
}

pub fn setup_with(src: &str) -> (Program, Gpu, u64) {
    let obj = ursa_emit::asm::assemble(src, "bench.s").expect("assemble");
    let prog = Program::load(&ursa_emit::elf::write(&obj)).expect("load");
    let mut gpu = Gpu::new();
    let out = gpu.alloc(4 * 2048, 16);
    (prog, gpu, out)
}

/// The memory loop's program and device: 2048 threads stream 64 words
/// each through 512 KiB in and out.
pub fn memory_setup() -> (Program, Gpu, [Arg; 3]) {
    let (prog, mut gpu, _) = setup_with(MEMORY_KERNEL);
    let (input, out) = (gpu.alloc(4 * 2048 * 64, 16), gpu.alloc(4 * 2048 * 64, 16));
    (prog, gpu, [Arg::Ptr(out), Arg::Ptr(input), Arg::U32(64)])
}

/// `matmul_i32` of `examples/kernels/` as compiled at 3fc04d4 (the fixed
/// assembly of `tests/sm_kernels/`), n = 128 over 8 × 8 CTAs of 16 × 16.
pub fn matmul_setup() -> (Program, Gpu, [Arg; 4]) {
    let src = include_str!("../../tests/sm_kernels/matmul_i32.s");
    let prog = Program::load(&ursa_emit::elf::write(&ursa_emit::asm::assemble(src, "matmul_i32.s").expect("assemble"))).expect("load");
    let mut gpu = Gpu::new();
    let n = 128u64;
    let (a, b, c) = (gpu.alloc(4 * n * n, 16), gpu.alloc(4 * n * n, 16), gpu.alloc(4 * n * n, 16));
    let words: Vec<u8> = (0..n * n).flat_map(|i| ((i * 2_654_435_761) as u32 >> 7).to_le_bytes()).collect();
    gpu.write(a, &words).unwrap();
    gpu.write(b, &words).unwrap();
    (prog, gpu, [Arg::Ptr(a), Arg::Ptr(b), Arg::Ptr(c), Arg::I32(n as i32)])
}

/// One SM-model workload: its name, program, device, kernel, launch and arguments.
pub type SmWorkload = (&'static str, Program, Gpu, &'static str, LaunchConfig, Vec<Arg>);

/// The SM timing model's workloads (docs/timing.md, docs/performance.md
/// 4.3): the hash loop, the memory loop and `matmul_i32`, on the default
/// machine.
pub fn sm_workloads() -> Vec<SmWorkload> {
    let machine = Some(std::sync::Arc::new(ursa_sim::machine_desc::MachineDesc::default()));
    let cfg = LaunchConfig { grid: [8, 1, 1], block: [256, 1, 1], machine: machine.clone(), ..Default::default() };
    let (prog, gpu, out) = setup();
    let args = vec![Arg::Ptr(out), Arg::U32(1024)];
    let (mprog, mgpu, margs) = memory_setup();
    let (xprog, xgpu, xargs) = matmul_setup();
    let xcfg = LaunchConfig { grid: [8, 8, 1], block: [16, 16, 1], machine, ..Default::default() };
    vec![
        ("int_hash_loop_2048_threads", prog, gpu, "k", cfg.clone(), args),
        ("memory_loop_2048_threads", mprog, mgpu, "k", cfg, margs.to_vec()),
        ("matmul_i32_n128", xprog, xgpu, "matmul_i32", xcfg, xargs.to_vec()),
    ]
}
