//! Helpers shared by the simulator's tests: assemble text with the project
//! assembler, load it, and run it.
#![allow(dead_code, clippy::result_large_err)]

use ursa_sim::{Arg, Gpu, LaunchConfig, Program, Stats, Trap};

/// Kernel prologue: parameter 0 is `out`; R0 = thread index, R[2:3] = &out.
pub const PROLOGUE: &str = "
.kernel k
.param out, 8
    S2R R0, SR_TID_X ;
    MOV.64 R[2:3], c[0x0][0x160] ;
";

/// The source of a benchmark kernel of `benches/support/workloads.rs` by its
/// constant's name (`KERNEL`, `FLOAT_KERNEL`, `MEMORY_KERNEL`).
pub fn bench_kernel(name: &str) -> String {
    let bench = include_str!("../../benches/support/workloads.rs");
    let head = format!("pub const {}: &str = \"", name);
    let start = bench.find(&head).expect("kernel") + head.len();
    let len = bench[start..].find("\";").expect("end");
    bench[start..start + len].to_string()
}

/// Assembles a source file and loads it.
pub fn load(src: &str) -> Program {
    let obj = ursa_emit::asm::assemble(src, "test.s").unwrap_or_else(|e| panic!("assembly failed: {}\n{}", e, src));
    let bytes = ursa_emit::elf::write(&obj);
    Program::load(&bytes).expect("load")
}

/// Runs `body` as a device function: arguments in R4, R5, …; returns
/// R4 … R(4+nret-1). The body must not touch R20/R21 (the link register).
pub fn call(body: &str, args: &[u32], nret: usize) -> Vec<u32> {
    let src = format!(".func f\n{}\n    RET R[20:21] ;\n", body);
    let prog = load(&src);
    let mut gpu = Gpu::new();
    gpu.call(&prog, "f", args, nret).unwrap_or_else(|t| panic!("trap: {}\n{}", t, src))
}

/// Like [`call`] but returns the trap.
pub fn call_trap(body: &str, args: &[u32]) -> Trap {
    let src = format!(".func f\n{}\n    RET R[20:21] ;\n", body);
    let prog = load(&src);
    let mut gpu = Gpu::new();
    gpu.call(&prog, "f", args, 0).expect_err("expected a trap")
}

/// A 64-bit value split into (low, high) words.
pub fn split64(v: u64) -> [u32; 2] {
    [v as u32, (v >> 32) as u32]
}

pub fn join64(lo: u32, hi: u32) -> u64 {
    lo as u64 | (hi as u64) << 32
}

/// Launches kernel `k` of `src` with `threads` threads in one CTA and an
/// output buffer of `out_words` u32 as its first argument; returns the buffer.
pub fn run_kernel(src: &str, block: [u32; 3], grid: [u32; 3], out_words: usize, extra: &[Arg]) -> Result<(Vec<u32>, Stats), Trap> {
    let prog = load(src);
    let mut gpu = Gpu::new();
    let out = gpu.alloc(out_words as u64 * 4, 16);
    let mut args = vec![Arg::Ptr(out)];
    args.extend_from_slice(extra);
    let cfg = LaunchConfig { grid, block, ..Default::default() };
    let stats = gpu.launch(&prog, "k", &cfg, &args)?;
    let bytes = gpu.read(out, out_words as u64 * 4)?;
    Ok((bytes.chunks(4).map(|c| u32::from_le_bytes(c.try_into().unwrap())).collect(), stats))
}
