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
    // Per opcode form as well (indexed by FormId; `forms()` names them).
    let forms: std::collections::BTreeMap<&str, u64> = s.forms().collect();
    assert_eq!(forms, [("EXIT_X", 1), ("NOP_X", 2)].into_iter().collect());
    assert_eq!(s.per_form[ursa_emit::forms::NOP_X.0 as usize], 2);
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
            TrapKind::Hazard(h) => h.to_string(),
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

#[test]
fn strict_mode_tracks_the_dynamically_indexed_register() {
    // SETGPR R[UR4] with UR4 = 9 writes R9 (ALU latency 4): reading R9 one
    // cycle later is a hazard, four cycles later it is not.
    let set = |stall: u8| {
        format!(".kernel k\n    UMOV UR4, 0x9 &stall=2 ;\n    SETGPR R[UR4], RZ &stall={} ;\n    IADD R6, R9, 0x1 ;\n    EXIT ;\n", stall)
    };
    let m = hazard(&set(1));
    assert!(m.contains("R9 is read before it is ready"), "{}", m);
    launch(&set(4), true).unwrap();
    // Without strict mode nothing is checked.
    launch(&set(1), false).unwrap();
    // GETGPR R[UR4+0x1] reads R9 while an IADD's write to it is pending.
    let get = ".kernel k\n    UMOV UR4, 0x8 &stall=2 ;\n    IADD R9, RZ, 0x1 ;\n    GETGPR R6, R[UR4+0x1] ;\n    EXIT ;\n";
    let m = hazard(get);
    assert!(m.contains("R9 (R[UR4+0x1]) is read before it is ready"), "{}", m);
    launch(".kernel k\n    UMOV UR4, 0x8 &stall=2 ;\n    IADD R9, RZ, 0x1 &stall=4 ;\n    GETGPR R6, R[UR4+0x1] ;\n    EXIT ;\n", true)
        .unwrap();
    // Another register is not affected: R[UR4-0x1] is R7.
    launch(".kernel k\n    UMOV UR4, 0x8 &stall=2 ;\n    IADD R9, RZ, 0x1 ;\n    GETGPR R6, R[UR4-0x1] ;\n    EXIT ;\n", true).unwrap();
    // SETGPR overwriting a pending variable-latency result.
    let waw = ".kernel k\n    UMOV UR4, 0x9 &stall=2 ;\n    S2R R9, SR_TID_X &wsb=0 ;\n    SETGPR R[UR4], RZ ;\n    EXIT ;\n";
    let m = hazard(waw);
    assert!(m.contains("R9 (R[UR4]) is overwritten while an earlier write is pending"), "{}", m);
    launch(".kernel k\n    UMOV UR4, 0x9 &stall=2 ;\n    S2R R9, SR_TID_X &wsb=0 ;\n    SETGPR R[UR4], RZ &req=1 ;\n    EXIT ;\n", true)
        .unwrap();
    // A pending index register is reported as itself.
    let m = hazard(".kernel k\n    UMOV UR4, 0x9 ;\n    SETGPR R[UR4], RZ ;\n    EXIT ;\n");
    assert!(m.contains("UR4 is read before it is ready"), "{}", m);
}

#[test]
fn strict_mode_tracks_setugpr_and_getugpr() {
    // SETUGPR has variable latency: UR10 written through UR[UR4+0x2] must be
    // waited for on its scoreboard.
    let no_wait =
        ".kernel k\n    UMOV UR4, 0x8 &stall=2 ;\n    SETUGPR UR[UR4+0x2], URZ &wsb=1 ;\n    UIADD UR5, UR10, 0x1 ;\n    EXIT ;\n";
    let m = hazard(no_wait);
    assert!(m.contains("UR10 is read before it is ready") && m.contains("scoreboard 1"), "{}", m);
    launch(
        ".kernel k\n    UMOV UR4, 0x8 &stall=2 ;\n    SETUGPR UR[UR4+0x2], URZ &wsb=1 ;\n    UIADD UR5, UR10, 0x1 &req=2 ;\n    EXIT ;\n",
        true,
    )
    .unwrap();
    // GETUGPR reading UR[UR4] while an R2UR into it is pending.
    let m = hazard(".kernel k\n    UMOV UR4, 0xc &stall=2 ;\n    R2UR UR12, RZ &wsb=0 ;\n    GETUGPR UR5, UR[UR4] &wsb=1 ;\n    EXIT ;\n");
    assert!(m.contains("UR12 (UR[UR4]) is read before it is ready"), "{}", m);
    launch(
        ".kernel k\n    UMOV UR4, 0xc &stall=2 ;\n    R2UR UR12, RZ &wsb=0 ;\n    GETUGPR UR5, UR[UR4] &req=1 &wsb=1 ;\n    EXIT ;\n",
        true,
    )
    .unwrap();
    // Writes through URZ are discarded and not tracked.
    launch(".kernel k\n    UMOV UR4, 0x3f &stall=2 ;\n    SETUGPR UR[UR4], URZ &wsb=1 ;\n    UIADD UR5, URZ, 0x1 ;\n    EXIT ;\n", true)
        .unwrap();
}
