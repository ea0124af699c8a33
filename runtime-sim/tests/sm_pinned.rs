//! The SM timing model's figures pinned for fixed code and fixed inputs:
//! five example kernels compiled once and kept as assembly
//! (`sm_kernels/*.s`, so a change of the compiler does not move them) and
//! the benchmark loops of `benches/support/workloads.rs`, on the shipped machine, on
//! one SM (CTAs queue) and with the LRR policy. For each launch: cycles,
//! every `SmStats` counter, the stall cycles by reason, the output buffers
//! and — with `--profile`-style profiling and a timeline — the stall cycles
//! of every instruction and the timeline's events (digests). A plain
//! launch, a profiled one and one profiled without a timeline must agree,
//! on one thread and on two.
//! `sm_kernels/expected.txt` holds the figures; `URSA_BLESS=1` rewrites it
//! (only for an intended and explained change of the model).
#![allow(clippy::result_large_err)]
mod common;
use std::fmt::Write as _;
use std::path::PathBuf;
use std::sync::Arc;
use ursa_sim::machine_desc::{MachineDesc, Policy};
use ursa_sim::{Arg, Gpu, LaunchConfig, Program, Stats};

/// FNV-1a over 64-bit words.
struct Digest(u64);
impl Digest {
    fn new() -> Digest {
        Digest(0xcbf2_9ce4_8422_2325)
    }
    fn add(&mut self, v: u64) {
        for b in v.to_le_bytes() {
            self.0 = (self.0 ^ b as u64).wrapping_mul(0x100_0000_01b3);
        }
    }
}

fn dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/sm_kernels")
}

fn kernel(file: &str) -> Program {
    let src = std::fs::read_to_string(dir().join(file)).expect("kernel file");
    common::load(&src)
}

/// Deterministic words (an LCG) for inputs.
fn words(n: usize, seed: u32) -> Vec<u8> {
    let mut x = seed;
    let mut out = Vec::with_capacity(4 * n);
    for _ in 0..n {
        x = x.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
        out.extend_from_slice(&(x >> 3).to_le_bytes());
    }
    out
}

struct Case {
    name: &'static str,
    prog: Program,
    kernel: &'static str,
    grid: [u32; 3],
    block: [u32; 3],
    /// Builds the device memory and the arguments; returns them and the
    /// output buffers (address, bytes).
    setup: fn(&mut Gpu) -> (Vec<Arg>, Vec<(u64, u64)>),
}

fn upload(gpu: &mut Gpu, bytes: &[u8]) -> u64 {
    let p = gpu.alloc(bytes.len() as u64, 128);
    gpu.write(p, bytes).unwrap();
    p
}

fn cases() -> Vec<Case> {
    let bench = |name: &str| common::load(&common::bench_kernel(name));
    vec![
        Case {
            name: "matmul_i32 n=40",
            prog: kernel("matmul_i32.s"),
            kernel: "matmul_i32",
            grid: [3, 3, 1],
            block: [16, 16, 1],
            setup: |gpu| {
                let n = 40;
                let (a, b) = (upload(gpu, &words(n * n, 1)), upload(gpu, &words(n * n, 2)));
                let c = upload(gpu, &vec![0; 4 * n * n]);
                (vec![Arg::Ptr(a), Arg::Ptr(b), Arg::Ptr(c), Arg::I32(n as i32)], vec![(c, 4 * (n * n) as u64)])
            },
        },
        Case {
            name: "block_reduce_i32 n=3000",
            prog: kernel("block_reduce_i32.s"),
            kernel: "block_reduce_i32",
            grid: [12, 1, 1],
            block: [256, 1, 1],
            setup: |gpu| {
                let a = upload(gpu, &words(3000, 3));
                let o = upload(gpu, &[0; 4 * 12]);
                (vec![Arg::Ptr(a), Arg::Ptr(o), Arg::I32(3000)], vec![(o, 48)])
            },
        },
        Case {
            name: "divergent_loop n=1000",
            prog: kernel("divergent_loop.s"),
            kernel: "divergent_loop",
            grid: [8, 1, 1],
            block: [128, 1, 1],
            setup: |gpu| {
                let a = upload(gpu, &words(1000, 4));
                let o = upload(gpu, &[0; 4 * 1000]);
                (vec![Arg::Ptr(o), Arg::Ptr(a), Arg::I32(1000)], vec![(o, 4000)])
            },
        },
        Case {
            name: "histogram_i32 n=2000",
            prog: kernel("histogram_i32.s"),
            kernel: "histogram_i32",
            grid: [16, 1, 1],
            block: [128, 1, 1],
            setup: |gpu| {
                let a = upload(gpu, &words(2000, 5));
                let o = upload(gpu, &[0; 64]);
                (vec![Arg::Ptr(a), Arg::Ptr(o), Arg::I32(2000)], vec![(o, 64)])
            },
        },
        Case {
            name: "sum_i64_loop m=64 n=300",
            prog: kernel("sum_i64_loop.s"),
            kernel: "sum_i64_loop",
            grid: [5, 1, 1],
            block: [64, 1, 1],
            setup: |gpu| {
                let a = upload(gpu, &words(2 * 64 * 300, 6));
                let o = upload(gpu, &[0; 8 * 300]);
                (vec![Arg::Ptr(a), Arg::Ptr(o), Arg::I32(64), Arg::I32(300)], vec![(o, 2400)])
            },
        },
        Case {
            name: "bench hash loop",
            prog: bench("KERNEL"),
            kernel: "k",
            grid: [8, 1, 1],
            block: [256, 1, 1],
            setup: |gpu| {
                let o = upload(gpu, &[0; 4 * 2048]);
                (vec![Arg::Ptr(o), Arg::U32(64)], vec![(o, 4 * 2048)])
            },
        },
        Case {
            name: "bench memory loop",
            prog: bench("MEMORY_KERNEL"),
            kernel: "k",
            grid: [8, 1, 1],
            block: [256, 1, 1],
            setup: |gpu| {
                let i = upload(gpu, &words(2048 * 16, 7));
                let o = upload(gpu, &vec![0; 4 * 2048 * 16]);
                (vec![Arg::Ptr(o), Arg::Ptr(i), Arg::U32(16)], vec![(o, 4 * 2048 * 16)])
            },
        },
    ]
}

fn machines() -> Vec<(&'static str, MachineDesc)> {
    let full = MachineDesc::default();
    let one = MachineDesc { sms: 1, ..MachineDesc::default() };
    let lrr = MachineDesc { sms: 2, scheduler: Policy::Lrr, ..MachineDesc::default() };
    vec![("sm80", full), ("1 SM", one), ("2 SMs lrr", lrr)]
}

/// One launch: its statistics and the output buffers' digest.
fn launch(case: &Case, m: &MachineDesc, profile: bool, timeline: bool) -> (Stats, u64) {
    let mut gpu = Gpu::new();
    let (args, outs) = (case.setup)(&mut gpu);
    let cfg =
        LaunchConfig { grid: case.grid, block: case.block, machine: Some(Arc::new(m.clone())), profile, timeline, ..Default::default() };
    let s = gpu.launch(&case.prog, case.kernel, &cfg, &args).unwrap_or_else(|t| panic!("{}: {}", case.name, t));
    let mut d = Digest::new();
    for (at, n) in outs {
        for b in gpu.read(at, n).unwrap() {
            d.add(b as u64);
        }
    }
    (s, d.0)
}

fn figures() -> String {
    let mut out = String::new();
    for case in cases() {
        for (mname, m) in machines() {
            let (plain, outs) = launch(&case, &m, false, false);
            let (prof, pouts) = launch(&case, &m, true, true);
            // Profiled without a timeline (whose event order keeps the model
            // from running a sub-partition ahead of the others, `run_ahead`):
            // the same statistics and per-instruction stall cycles.
            let (pnt, _) = launch(&case, &m, true, false);
            assert_eq!(format!("{:?}", pnt.sm), format!("{:?}", prof.sm), "{} on {}: the timeline changed the model", case.name, mname);
            let stalls = |s: &Stats| s.profile.as_deref().expect("profile").insts.iter().map(|ip| (ip.pc, ip.stalls)).collect::<Vec<_>>();
            assert_eq!(stalls(&pnt), stalls(&prof), "{} on {}: per-instruction stalls with and without a timeline", case.name, mname);
            let sm = plain.sm.as_deref().expect("SM statistics");
            let psm = prof.sm.as_deref().expect("SM statistics");
            assert_eq!(format!("{:?}", sm), format!("{:?}", psm), "{} on {}: profiling changed the model", case.name, mname);
            assert_eq!((plain.cycles, plain.instructions, outs), (prof.cycles, prof.instructions, pouts), "{} on {}", case.name, mname);
            let _ = writeln!(
                out,
                "{} on {}: cycles {} issued {} ctas {} active-sm-cycles {} resident-warp-cycles {} warp-cycles {} outputs {:016x}",
                case.name, mname, sm.cycles, sm.issued, sm.ctas_placed, sm.active_sm_cycles, sm.resident_warp_cycles, sm.warp_cycles, outs
            );
            let _ = writeln!(
                out,
                "  memory: sectors {} lines {} l1 {}/{} l2 {}/{} shared {}/{}",
                sm.sectors, sm.lines, sm.l1_hits, sm.l1_misses, sm.l2_hits, sm.l2_misses, sm.shared_accesses, sm.shared_wavefronts
            );
            let reasons: Vec<String> =
                ursa_sim::StallReason::ALL.iter().map(|r| format!("{} {}", r.name(), sm.stall_cycles[*r as usize])).collect();
            let _ = writeln!(out, "  stalls: {}", reasons.join(", "));
            let p = prof.profile.as_deref().expect("profile");
            let mut per_inst = Digest::new();
            for ip in &p.insts {
                per_inst.add(ip.pc);
                ip.stalls.iter().for_each(|&c| per_inst.add(c));
            }
            let mut tl = Digest::new();
            for e in &p.timeline {
                for v in [e.cta, e.warp as u64, e.pc, e.cycle, e.cycles as u64, e.lanes as u64, e.sm.map_or(u64::MAX, |s| s as u64)] {
                    tl.add(v);
                }
                tl.add(e.stall.map_or(u64::MAX, |r| r as u64));
            }
            let _ = writeln!(
                out,
                "  profile: per-instruction stalls {:016x}; timeline {} events, {} dropped, {:016x}",
                per_inst.0,
                p.timeline.len(),
                p.timeline_dropped,
                tl.0
            );
        }
    }
    out
}

#[test]
fn sm_model_figures_are_pinned() {
    // On one thread, and on two (the interpreter runs ahead of the model).
    let on = |threads: usize| rayon::ThreadPoolBuilder::new().num_threads(threads).build().expect("pool").install(figures);
    let got = on(1);
    assert_eq!(got, on(2), "two threads gave other figures than one");
    let path = dir().join("expected.txt");
    if std::env::var_os("URSA_BLESS").is_some() {
        std::fs::write(&path, &got).unwrap();
        return;
    }
    let want = std::fs::read_to_string(&path).expect("expected.txt (URSA_BLESS=1 writes it)");
    if got != want {
        let diff: Vec<String> =
            got.lines().zip(want.lines()).filter(|(g, w)| g != w).map(|(g, w)| format!("got:  {}\nwant: {}", g, w)).collect();
        panic!("the SM model's figures changed:\n{}", diff.join("\n"));
    }
}
