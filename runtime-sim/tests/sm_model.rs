//! Validation of the SM timing model (docs/timing.md): microbenchmark
//! kernels whose simulated figures are asserted against the machine
//! description, and the model's promise that results and counts are those
//! of the plain run.
#![allow(clippy::result_large_err)]
mod common;
use common::*;
use std::sync::Arc;
use ursa_sim::machine_desc::MachineDesc;
use ursa_sim::{Arg, Gpu, LaunchConfig, Program, SmStats, StallReason, Stats};

fn sm_cfg(m: MachineDesc, grid: u32, block: u32) -> LaunchConfig {
    LaunchConfig { grid: [grid, 1, 1], block: [block, 1, 1], machine: Some(Arc::new(m)), ..Default::default() }
}

fn run_sm(prog: &Program, cfg: &LaunchConfig, args: &[Arg], gpu: &mut Gpu) -> (Stats, SmStats) {
    let s = gpu.launch(prog, "k", cfg, args).unwrap_or_else(|t| panic!("trap: {}", t));
    let sm = *s.sm.clone().expect("SM model statistics");
    (s, sm)
}

/// A chain of `n` 8-byte pointers, one per 256-byte block, the last
/// pointing back to the first; returns its address.
fn chain(gpu: &mut Gpu, n: u64) -> u64 {
    let base = gpu.alloc(256 * n, 256);
    for i in 0..n {
        gpu.write(base + 256 * i, &(base + 256 * ((i + 1) % n)).to_le_bytes()).unwrap();
    }
    base
}

/// `loads` dependent loads following the chain from parameter 0.
fn chase_kernel(loads: usize) -> Program {
    let mut s = String::from(".kernel k\n.param p, 8\n    MOV.64 R[2:3], c[0x0][0x160] ;\n");
    for _ in 0..loads {
        s.push_str("    LDG.64 R[2:3], [R[2:3]] &wsb=0 &req=1 ;\n");
    }
    s.push_str("    IADD R4, R2, 0x0 &req=1 ;\n    EXIT ;\n");
    load(&s)
}

fn chase_cycles(m: &MachineDesc, loads: usize, distinct: u64) -> u64 {
    let mut gpu = Gpu::new();
    let head = chain(&mut gpu, distinct);
    run_sm(&chase_kernel(loads), &sm_cfg(m.clone(), 1, 1), &[Arg::Ptr(head)], &mut gpu).1.cycles
}

#[test]
fn pointer_chase_latency_per_level() {
    let m = MachineDesc::default();
    // 16 loads over 16 lines: all from DRAM; over 8 lines: 8 from DRAM, 8 L1 hits.
    let cold = chase_cycles(&m, 16, 16);
    let half = chase_cycles(&m, 16, 8);
    assert_eq!(cold - half, 8 * (m.lat_dram - m.lat_l1) as u64, "cold {} half {}", cold, half);
    // The rest of the kernel is a few cycles of issue.
    let body = cold - 16 * m.lat_dram as u64;
    assert!(body < 16, "{} cycles besides the loads", body);
    // With an L1 of one line the second round hits the L2.
    let tiny_l1 = MachineDesc::parse("l1_bytes = 128\nl1_ways = 1\n").unwrap();
    let cold = chase_cycles(&tiny_l1, 16, 16);
    let half = chase_cycles(&tiny_l1, 16, 8);
    assert_eq!(cold - half, 8 * (m.lat_dram - m.lat_l2) as u64);
}

/// Each of the CTA's threads loads the word at `stride` × thread index and
/// stores it at the same place in `out`.
fn copy_kernel(stride: u32) -> Program {
    load(&format!(
        ".kernel k
.param src, 8
.param dst, 8
    S2R R0, SR_TID_X ;
    S2R R1, SR_CTAID_X &wsb=1 ;
    IMAD R0, R1, 0x400, R0 &req=3 &stall=5 ;
    MOV.64 R[2:3], c[0x0][0x160] ;
    MOV.64 R[4:5], c[0x0][0x168] ;
    IMAD.WIDE.U32 R[2:3], R0, {s:#x}, R[2:3] &stall=5 ;
    IMAD.WIDE.U32 R[4:5], R0, {s:#x}, R[4:5] &stall=5 ;
    LDG R6, [R[2:3]] &wsb=0 ;
    STG [R[4:5]], R6 &req=1 ;
    EXIT ;
",
        s = stride
    ))
}

#[test]
fn coalesced_and_strided_copies() {
    let m = MachineDesc::default();
    let mut results = Vec::new();
    // stride (bytes), sectors per warp access, lines per warp access
    for (stride, sectors, lines) in [(4u32, 4u64, 1u64), (32, 32, 8), (128, 32, 32)] {
        let mut gpu = Gpu::new();
        let ctas = 8u64;
        let n = ctas * 1024 * stride as u64;
        let (src, dst) = (gpu.alloc(n, 256), gpu.alloc(n, 256));
        let (s, sm) = run_sm(&copy_kernel(stride), &sm_cfg(m.clone(), ctas as u32, 1024), &[Arg::Ptr(src), Arg::Ptr(dst)], &mut gpu);
        let accesses = 2 * ctas * 32; // a load and a store per warp
        assert_eq!(sm.sectors, accesses * sectors, "stride {}", stride);
        assert_eq!(sm.lines, accesses * lines, "stride {}", stride);
        assert_eq!(sm.l1_hits, 0);
        results.push((stride, s.cycles));
    }
    // More lines per access: the LSU and the memory take longer.
    assert!(results[0].1 < results[1].1 && results[1].1 < results[2].1, "{:?}", results);
}

#[test]
fn shared_bank_conflicts() {
    let m = MachineDesc::default();
    // stride in words -> wavefronts per access
    for (stride, wavefronts) in [(1u32, 1u64), (2, 2), (32, 32), (33, 1), (0, 1)] {
        let prog = load(&format!(
            ".kernel k
.shared 8192
    S2R R0, SR_TID_X ;
    IMAD R1, R0, {b:#x}, RZ &stall=5 ;
    STS [R1], R0 ;
    LDS R2, [R1] &wsb=0 ;
    IADD R3, R2, 0x1 &req=1 ;
    EXIT ;
",
            b = stride * 4
        ));
        let (_, sm) = run_sm(&prog, &sm_cfg(m.clone(), 1, 32), &[], &mut Gpu::new());
        assert_eq!(sm.shared_accesses, 2, "stride {}", stride);
        assert_eq!(sm.shared_wavefronts, 2 * wavefronts, "stride {}", stride);
    }
}

/// `n` IADDs per warp, each dependent on the one before (stall 4, the ALU
/// latency) or independent (stall 1).
fn alu_kernel(n: usize, dependent: bool) -> Program {
    let mut s = String::from(".kernel k\n");
    for i in 0..n {
        if dependent {
            s.push_str("    IADD R1, R1, 0x1 &stall=4 ;\n");
        } else {
            s.push_str(&format!("    IADD R{}, R20, 0x1 &stall=1 ;\n", 1 + i % 16));
        }
    }
    s.push_str("    EXIT ;\n");
    load(&s)
}

#[test]
fn alu_issue_rates() {
    let m = MachineDesc::default();
    let n = 256u64;
    let alu = m.interval(m.rate_alu) as u64; // 2 cycles per warp-instruction and sub-partition
    let cycles = |dependent: bool, warps: u32| {
        let (_, sm) = run_sm(&alu_kernel(n as usize, dependent), &sm_cfg(m.clone(), 1, 32 * warps), &[], &mut Gpu::new());
        sm.cycles
    };
    let near = |got: u64, want: u64| got >= want && got <= want + 8;
    // One warp: dependent at the latency, independent at the pipe's rate.
    assert!(near(cycles(true, 1), 4 * n), "{}", cycles(true, 1));
    assert!(near(cycles(false, 1), alu * n), "{}", cycles(false, 1));
    // Four warps, one per sub-partition: the same time.
    assert!(near(cycles(true, 4), 4 * n), "{}", cycles(true, 4));
    assert!(near(cycles(false, 4), alu * n), "{}", cycles(false, 4));
    // 32 warps, 8 per sub-partition: the ALU pipe is the limit either way.
    assert!(near(cycles(true, 32), 8 * alu * n), "{}", cycles(true, 32));
    assert!(near(cycles(false, 32), 8 * alu * n), "{}", cycles(false, 32));
}

#[test]
fn occupancy_changes_cycles() {
    // A latency-bound kernel: more resident warps hide more of it.
    let src = |regs: u32| {
        format!(
            ".kernel k\n.regs {}\n.param p, 8\n    MOV.64 R[2:3], c[0x0][0x160] ;\n    LDG R4, [R[2:3]] &wsb=0 ;\n    IADD R5, R4, 0x1 &req=1 ;\n    EXIT ;\n",
            regs
        )
    };
    let m = MachineDesc::parse("sms = 1").unwrap();
    let mut cycles = Vec::new();
    for regs in [32, 128, 255] {
        let mut gpu = Gpu::new();
        let p = gpu.alloc(64, 64);
        let (_, sm) = run_sm(&load(&src(regs)), &sm_cfg(m.clone(), 64, 256), &[Arg::Ptr(p)], &mut gpu);
        cycles.push((regs, sm.occupancy.ctas_per_sm, sm.cycles));
    }
    assert_eq!(cycles.iter().map(|c| c.1).collect::<Vec<_>>(), [8, 2, 1], "{:?}", cycles);
    assert!(cycles[0].2 < cycles[1].2 && cycles[1].2 < cycles[2].2, "{:?}", cycles);
}

#[test]
fn results_and_counts_are_those_of_the_plain_run() {
    // Threads exchange through shared memory across a barrier, then store.
    let prog = load(
        ".kernel k
.param out, 8
.shared 1024
    S2R R0, SR_TID_X ;
    MOV.64 R[2:3], c[0x0][0x160] ;
    IMAD R5, R0, 0x4, RZ &stall=5 ;
    IADD R6, RZ, -R0 &stall=4 ;
    IADD R6, R6, 0xff &stall=4 ;
    IMAD R6, R6, 0x4, RZ &stall=5 ;
    STS [R5], R0 ;
    BAR.SYNC 0x0 ;
    LDS R1, [R6] &wsb=0 ;
    IMAD.WIDE.U32 R[2:3], R0, 0x4, R[2:3] &stall=5 ;
    STG [R[2:3]], R1 &req=1 ;
    EXIT ;
",
    );
    let mut outs = Vec::new();
    for machine in [None, Some(Arc::new(MachineDesc::default()))] {
        let mut gpu = Gpu::new();
        let out = gpu.alloc(4 * 256 * 3, 16);
        let cfg = LaunchConfig { grid: [3, 1, 1], block: [256, 1, 1], machine: machine.clone(), ..Default::default() };
        let s = gpu.launch(&prog, "k", &cfg, &[Arg::Ptr(out)]).unwrap();
        let data = gpu.read(out, 4 * 256).unwrap();
        outs.push((data, s.instructions, s.lane_instructions, s.per_form.clone(), s.sm.is_some()));
    }
    assert_eq!(outs[0].0, outs[1].0);
    assert_eq!((outs[0].1, outs[0].2, &outs[0].3), (outs[1].1, outs[1].2, &outs[1].3));
    assert_eq!((outs[0].4, outs[1].4), (false, true));
    let first: Vec<u32> = outs[0].0.chunks(4).take(4).map(|c| u32::from_le_bytes(c.try_into().unwrap())).collect();
    assert_eq!(first, [255, 254, 253, 252]);
}

#[test]
fn stall_reasons_add_up_to_the_warps_cycles() {
    let prog = load(
        ".kernel k
.param out, 8
.shared 1024
    S2R R0, SR_TID_X &wsb=2 ;
    MOV.64 R[2:3], c[0x0][0x160] ;
    IMAD R5, R0, 0x4, RZ &req=4 &stall=5 ;
    STS [R5], R0 ;
    BAR.SYNC 0x0 ;
    LDS R1, [R5] &wsb=0 ;
    IMAD.WIDE.U32 R[2:3], R0, 0x4, R[2:3] &stall=5 ;
    LDG R7, [R[2:3]] &wsb=1 ;
    IADD R1, R1, R7 &req=3 &stall=4 ;
    STG [R[2:3]], R1 ;
    EXIT ;
",
    );
    let mut gpu = Gpu::new();
    let out = gpu.alloc(4 * 256, 16);
    let cfg = LaunchConfig { profile: true, ..sm_cfg(MachineDesc::default(), 2, 256) };
    let s = gpu.launch(&prog, "k", &cfg, &[Arg::Ptr(out)]).unwrap();
    let sm = s.sm.as_ref().unwrap();
    let p = s.profile.as_ref().unwrap();
    let totals = p.stall_totals();
    assert_eq!(totals, sm.stall_cycles);
    assert_eq!(totals.iter().sum::<u64>(), sm.warp_cycles);
    assert_eq!(totals[StallReason::Selected as usize], s.instructions);
    for r in [StallReason::LongScoreboard, StallReason::Barrier, StallReason::NotSelected] {
        assert!(totals[r as usize] > 0, "no {:?} cycles: {:?}", r, totals);
    }
    // Every warp is resident from its placement to its last issue: the
    // warp cycles are at most warps x launch cycles.
    assert!(sm.warp_cycles <= s.warps * sm.cycles);
    let report = p.report(&prog, &s);
    assert!(report.contains("long scoreboard"), "{}", report);
}

/// The wait after a branch or convergence instruction is `Branch`: a
/// divergent `BSSY`/`BRA`/`BSYNC` region whose control instructions carry
/// stall counts; the reasons still add up, and the same code with the
/// waits on ordinary instructions has none.
#[test]
fn branch_waits_are_their_own_reason() {
    let src = |bra: u32, after: u32| {
        format!(
            ".kernel k
.param out, 8
    S2R R0, SR_TID_X &wsb=0 ;
    MOV.64 R[2:3], c[0x0][0x160] &req=1 ;
    LOP3 R1, R0, 0x1, RZ, 0xc0, !PT ;
    ISETP.NE.AND P0, R1, RZ, PT &stall=4 ;
    BSSY B0, L_join &stall={bra} ;
    MOV R4, RZ &stall={after} ;
@P0 BRA L_odd &stall={bra} ;
    MOV R4, 0x2 &stall={after} ;
    BRA L_join &stall={bra} ;
L_odd:
    MOV R4, 0x1 &stall={after} ;
L_join:
    BSYNC B0 &stall={bra} ;
    MOV R5, RZ &stall={after} ;
    IMAD.WIDE.U32 R[2:3], R0, 0x4, R[2:3] &stall=5 ;
    STG [R[2:3]], R4 ;
    EXIT ;
"
        )
    };
    let run = |bra, after| {
        let prog = load(&src(bra, after));
        let mut gpu = Gpu::new();
        let out = gpu.alloc(4 * 64, 16);
        let cfg = LaunchConfig { profile: true, ..sm_cfg(MachineDesc::default(), 1, 64) };
        let s = gpu.launch(&prog, "k", &cfg, &[Arg::Ptr(out)]).unwrap();
        let got: Vec<u32> = gpu.read(out, 4 * 64).unwrap().chunks(4).map(|b| u32::from_le_bytes(b.try_into().unwrap())).collect();
        assert_eq!(got, (0..64).map(|t| if t % 2 == 1 { 1 } else { 2 }).collect::<Vec<u32>>());
        let sm = *s.sm.clone().unwrap();
        let totals = s.profile.as_ref().unwrap().stall_totals();
        assert_eq!(totals, sm.stall_cycles);
        assert_eq!(totals.iter().sum::<u64>(), sm.warp_cycles);
        sm
    };
    let on_branches = run(6, 1);
    let elsewhere = run(1, 6);
    let (b, w) = (StallReason::Branch as usize, StallReason::Wait as usize);
    // Each issue of BSSY, BRA or BSYNC waits 5 cycles beyond the minimum
    // (the instructions after them read nothing they wait for).
    let branch = on_branches.stall_cycles[b];
    assert!(branch > 0 && branch % 5 == 0, "{:?}", on_branches.stall_cycles);
    assert_eq!(elsewhere.stall_cycles[b], 0);
    assert!(elsewhere.stall_cycles[w] > 0);
}
