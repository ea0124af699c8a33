//! Control bits, issue cycles, statistics and the strict hazard checker
//! (docs/latencies.md).
#![allow(clippy::result_large_err)]
mod common;
use common::*;
use ursa_sim::{Gpu, LaunchConfig, TrapKind};

fn launch(src: &str, strict: bool) -> Result<ursa_sim::Stats, ursa_sim::Trap> {
    let prog = load(src);
    let cfg = LaunchConfig { strict, ..Default::default() };
    Gpu::new().launch(&prog, "k", &cfg, &[])
}

#[test]
fn stall_counts_issue_cycles() {
    // Issue at 0 (stall 2), 2 (stall 3), 5 (stall 0 counts as 1): 6 cycles.
    let s = launch(".kernel k\n    NOP &stall=2 ;\n    NOP &stall=3 ;\n    EXIT ;\n", false).unwrap();
    assert_eq!(s.cycles, 6);
    assert_eq!(s.instructions, 3);
    assert_eq!(s.lane_instructions, 3);
    assert_eq!(s.per_opcode.get("NOP"), Some(&2));
    assert_eq!(s.per_opcode.get("EXIT"), Some(&1));
}

#[test]
fn req_waits_for_the_scoreboard() {
    // S2R (variable, 10 cycles) sets SB0 at cycle 0; the consumer waits until 10.
    let src = ".kernel k\n    S2R R4, SR_TID_X &wsb=0 ;\n    IADD R4, R4, 0x1 &req=1 ;\n    EXIT ;\n";
    assert_eq!(launch(src, false).unwrap().cycles, 12);
    // Without the wait the warp keeps issuing every cycle.
    let src = ".kernel k\n    S2R R4, SR_TID_X &wsb=0 ;\n    IADD R5, R6, 0x1 ;\n    EXIT ;\n";
    assert_eq!(launch(src, false).unwrap().cycles, 3);
}

#[test]
fn lane_instructions_count_executing_lanes() {
    let prog = load(".kernel k\n    S2R R0, SR_TID_X ;\n    ISETP.LT.AND P0, PT, R0, 0x4, PT ;\n@P0 NOP ;\n    EXIT ;\n");
    let cfg = LaunchConfig { block: [40, 1, 1], ..Default::default() };
    let s = Gpu::new().launch(&prog, "k", &cfg, &[]).unwrap();
    assert_eq!(s.instructions, 8);
    assert_eq!(s.lane_instructions, 40 * 3 + 4);
    assert_eq!(s.warps, 2);
}

fn hazard(src: &str) -> String {
    match launch(src, true) {
        Err(t) => match t.kind {
            TrapKind::Hazard(m) => m,
            k => panic!("expected a hazard, got {:?}", k),
        },
        Ok(_) => panic!("expected a hazard in\n{}", src),
    }
}

#[test]
fn strict_mode_fixed_latency() {
    let bad = ".kernel k\n    IADD R4, RZ, 0x1 ;\n    IADD R5, R4, 0x1 ;\n    EXIT ;\n";
    assert!(hazard(bad).contains("R4 is read before it is ready"));
    // Off by default.
    launch(bad, false).unwrap();
    // The ALU latency is 4: stall 4 covers it, stall 3 does not.
    launch(".kernel k\n    IADD R4, RZ, 0x1 &stall=4 ;\n    IADD R5, R4, 0x1 ;\n    EXIT ;\n", true).unwrap();
    hazard(".kernel k\n    IADD R4, RZ, 0x1 &stall=3 ;\n    IADD R5, R4, 0x1 ;\n    EXIT ;\n");
    // Independent instructions in between count.
    launch(".kernel k\n    IADD R4, RZ, 0x1 &stall=2 ;\n    NOP &stall=2 ;\n    IADD R5, R4, 0x1 ;\n    EXIT ;\n", true).unwrap();
    // Predicates are registers too.
    let p = ".kernel k\n    ISETP.EQ.AND P0, PT, RZ, RZ, PT ;\n@P0 NOP ;\n    EXIT ;\n";
    assert!(hazard(p).contains("P0"));
}

#[test]
fn strict_mode_variable_latency() {
    let no_wait = ".kernel k\n    S2R R4, SR_TID_X &wsb=0 ;\n    IADD R5, R4, 0x1 ;\n    EXIT ;\n";
    assert!(hazard(no_wait).contains("scoreboard 0"));
    launch(".kernel k\n    S2R R4, SR_TID_X &wsb=0 ;\n    IADD R5, R4, 0x1 &req=1 ;\n    EXIT ;\n", true).unwrap();
    // Waiting on the wrong scoreboard does not help.
    hazard(".kernel k\n    S2R R4, SR_TID_X &wsb=0 ;\n    IADD R5, R4, 0x1 &req=2 ;\n    EXIT ;\n");
    // No scoreboard at all: the result can never be read safely.
    assert!(hazard(".kernel k\n    S2R R4, SR_TID_X &stall=15 ;\n    IADD R5, R4, 0x1 ;\n    EXIT ;\n").contains("no scoreboard"));
    // Overwriting a pending result is a hazard as well.
    assert!(hazard(".kernel k\n    S2R R4, SR_TID_X &wsb=1 ;\n    MOV R4, 0x1 ;\n    EXIT ;\n").contains("overwritten"));
    // A wait on an earlier instruction covers later reads.
    launch(".kernel k\n    S2R R4, SR_TID_X &wsb=2 ;\n    NOP &req=4 ;\n    IADD R5, R4, 0x1 ;\n    EXIT ;\n", true).unwrap();
}

#[test]
fn membar_waits_for_every_scoreboard() {
    // S2R at 0 sets SB3 (released at 10); MEMBAR issues at 10 and covers
    // the read; IADD at 11, EXIT at 12: 13 cycles.
    let src = ".kernel k\n    S2R R4, SR_TID_X &wsb=3 ;\n    MEMBAR.GPU ;\n    IADD R5, R4, 0x1 ;\n    EXIT ;\n";
    assert_eq!(launch(src, true).unwrap().cycles, 13);
}
