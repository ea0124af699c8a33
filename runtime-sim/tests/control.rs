//! SIMT control flow in assembly: divergence and reconvergence with the
//! convergence barriers, loops with lane-dependent trip counts, early exit,
//! calls and returns, CTA barriers; results checked per lane.
mod common;
use common::*;

/// Prologue: R0 = thread index, R[2:3] = &out[tid] (out is parameter 0).
fn pro() -> String {
    format!("{}    IMAD.WIDE.U32 R[2:3], R0, 0x4, R[2:3] ;\n", PROLOGUE)
}

fn kernel(body: &str) -> String {
    format!("{}{}", pro(), body)
}

fn run32(body: &str, words: usize) -> Vec<u32> {
    run_kernel(&kernel(body), [32, 1, 1], [1, 1, 1], words, &[]).unwrap_or_else(|t| panic!("trap: {}", t)).0
}

#[test]
fn if_else_reconverges_at_bsync() {
    let out = run32(
        "
    ISETP.LT.AND P0, PT, R0, 0x10, PT ;
    BSSY B0, L_join ;
@!P0 BRA L_else ;
    MOV R1, 0x1 ;
    BRA L_join ;
L_else:
    MOV R1, 0x2 ;
L_join:
    BSYNC B0 ;
    VOTE.ANY R4, PT, PT ;
    STG [R[2:3]], R1 ;
    STG [R[2:3]+0x80], R4 ;
    EXIT ;
",
        64,
    );
    for t in 0..32 {
        assert_eq!(out[t], if t < 16 { 1 } else { 2 }, "lane {}", t);
        assert_eq!(out[32 + t], 0xFFFF_FFFF, "lane {} sees the whole warp after BSYNC", t);
    }
}

#[test]
fn nested_divergence() {
    // R1 = (t < 16 ? (t even ? 10 : 11) : (t < 24 ? 20 : 21)) + t.
    let out = run32(
        "
    LOP3.LUT R5, R0, 0x1, RZ, 0xc0, !PT ;
    ISETP.EQ.AND P1, PT, R5, RZ, PT ;
    ISETP.LT.AND P0, PT, R0, 0x10, PT ;
    BSSY B0, L_join ;
@!P0 BRA L_hi ;
    BSSY B1, L_join_lo ;
@!P1 BRA L_odd ;
    MOV R1, 0xa ;
    BRA L_join_lo ;
L_odd:
    MOV R1, 0xb ;
L_join_lo:
    BSYNC B1 ;
    BRA L_join ;
L_hi:
    ISETP.LT.AND P2, PT, R0, 0x18, PT ;
    SEL R1, R5, 0x15, P2 ;
@P2 MOV R1, 0x14 ;
L_join:
    BSYNC B0 ;
    IADD R1, R1, R0 ;
    VOTE.ANY R4, PT, PT ;
    STG [R[2:3]], R1 ;
    STG [R[2:3]+0x80], R4 ;
    EXIT ;
",
        64,
    );
    for t in 0..32u32 {
        let base = if t < 16 {
            if t % 2 == 0 {
                10
            } else {
                11
            }
        } else if t < 24 {
            20
        } else {
            21
        };
        assert_eq!(out[t as usize], base + t, "lane {}", t);
        assert_eq!(out[32 + t as usize], 0xFFFF_FFFF);
    }
}

#[test]
fn loop_with_lane_dependent_trip_count() {
    // R1 = sum of 0..=t; the loop runs t+1 times in lane t.
    let out = run32(
        "
    MOV R1, RZ ;
    MOV R5, RZ ;
    BSSY B0, L_exit ;
L_loop:
    IADD R1, R1, R5 ;
    IADD R5, R5, 0x1 ;
    ISETP.LE.AND P0, PT, R5, R0, PT ;
@P0 BRA L_loop ;
L_exit:
    BSYNC B0 ;
    VOTE.ANY R4, PT, PT ;
    STG [R[2:3]], R1 ;
    STG [R[2:3]+0x80], R4 ;
    EXIT ;
",
        64,
    );
    for t in 0..32u32 {
        assert_eq!(out[t as usize], t * (t + 1) / 2, "lane {}", t);
        assert_eq!(out[32 + t as usize], 0xFFFF_FFFF);
    }
}

#[test]
fn loop_with_break_leaves_the_region() {
    // Each lane counts up to 100 but breaks out at t + 3; BREAK B0 removes
    // leaving lanes from the loop barrier, B1 closes the outer region.
    let out = run32(
        "
    MOV R1, RZ ;
    IADD R6, R0, 0x3 ;
    BSSY B1, L_done ;
    BSSY B0, L_exit ;
L_loop:
    ISETP.EQ.AND P1, PT, R1, R6, PT ;
@P1 BREAK B0 ;
@P1 BRA L_done ;
    IADD R1, R1, 0x1 ;
    ISETP.LT.AND P0, PT, R1, 0x64, PT ;
@P0 BRA L_loop ;
L_exit:
    BSYNC B0 ;
    MOV R1, 0x3e7 ;
L_done:
    BSYNC B1 ;
    VOTE.ANY R4, PT, PT ;
    STG [R[2:3]], R1 ;
    STG [R[2:3]+0x80], R4 ;
    EXIT ;
",
        64,
    );
    for t in 0..32u32 {
        assert_eq!(out[t as usize], t + 3, "lane {}", t);
        assert_eq!(out[32 + t as usize], 0xFFFF_FFFF);
    }
}

#[test]
fn early_exit_of_some_lanes() {
    // Odd lanes exit first; the even lanes' barrier still completes and the
    // vote sees only the 16 live lanes.
    let out = run32(
        "
    LOP3.LUT R5, R0, 0x1, RZ, 0xc0, !PT ;
    ISETP.NE.AND P0, PT, R5, RZ, PT ;
    MOV R1, 0x7 ;
    STG [R[2:3]], R1 ;
    BSSY B0, L_join ;
@P0 EXIT ;
    MOV R1, 0x8 ;
L_join:
    BSYNC B0 ;
    VOTE.ANY R4, PT, PT ;
    STG [R[2:3]], R1 ;
    STG [R[2:3]+0x80], R4 ;
    EXIT ;
",
        64,
    );
    for t in 0..32 {
        if t % 2 == 1 {
            assert_eq!(out[t], 7);
            assert_eq!(out[32 + t], 0);
        } else {
            assert_eq!(out[t], 8);
            assert_eq!(out[32 + t], 0x5555_5555);
        }
    }
}

#[test]
fn calls_and_returns_per_lane() {
    // f(x) = 3x + 1 called by every lane; g doubles and calls f (nested call
    // with the link register saved in R10/R11).
    let out = run32(
        "
    MOV R4, R0 ;
    CALL R[20:21], L_f ;
    MOV R1, R4 ;
    MOV R4, R0 ;
    ISETP.LT.AND P0, PT, R0, 0x8, PT ;
@P0 CALL R[20:21], L_g ;
    STG [R[2:3]], R1 ;
    STG [R[2:3]+0x80], R4 ;
    EXIT ;
L_f:
    IMAD R4, R4, 0x3, RZ ;
    IADD R4, R4, 0x1 ;
    RET R[20:21] ;
L_g:
    MOV R10, R20 ;
    MOV R11, R21 ;
    IADD R4, R4, R4 ;
    CALL R[20:21], L_f ;
    RET R[10:11] ;
",
        64,
    );
    for t in 0..32u32 {
        assert_eq!(out[t as usize], 3 * t + 1);
        assert_eq!(out[32 + t as usize], if t < 8 { 6 * t + 1 } else { t });
    }
}

#[test]
fn call_to_another_function_and_indirect_branch() {
    let src = format!(
        "{}
    MOV R4, R0 ;
    CALL R[20:21], twice ;
    LEPC R[6:7], L_table ;
    LOP3.LUT R5, R0, 0x1, RZ, 0xc0, !PT ;
    IMAD.WIDE.U32 R[6:7], R5, 0x10, R[6:7] ;
    BRA R[6:7] ;
L_table:
    BRA L_even ;
    BRA L_odd ;
L_even:
    IADD R4, R4, 0x100 ;
    BRA L_out ;
L_odd:
    IADD R4, R4, 0x200 ;
L_out:
    STG [R[2:3]], R4 ;
    EXIT ;
.func twice
    IADD R4, R4, R4 ;
    RET R[20:21] ;
",
        pro()
    );
    let (out, _) = run_kernel(&src, [32, 1, 1], [1, 1, 1], 32, &[]).unwrap();
    for t in 0..32u32 {
        assert_eq!(out[t as usize], 2 * t + if t % 2 == 0 { 0x100 } else { 0x200 });
    }
}

#[test]
fn cta_barrier_orders_shared_memory_across_warps() {
    // 64 threads: each stores its index to shared[t], BAR.SYNC, then reads
    // shared[63 - t].
    let src = "
.kernel k
.param out, 8
.shared 256
    S2R R0, SR_TID_X ;
    MOV.64 R[2:3], c[0x0][0x160] ;
    IMAD.WIDE.U32 R[2:3], R0, 0x4, R[2:3] ;
    SHF.L.U32 R5, R0, 0x2, RZ ;
    STS [R5], R0 ;
    BAR.SYNC 0x0 ;
    IADD R6, -R0, 0x3f ;
    SHF.L.U32 R6, R6, 0x2, RZ ;
    LDS R1, [R6] ;
    STG [R[2:3]], R1 ;
    EXIT ;
";
    let (out, stats) = run_kernel(src, [64, 1, 1], [1, 1, 1], 64, &[]).unwrap();
    for t in 0..64u32 {
        assert_eq!(out[t as usize], 63 - t);
    }
    assert_eq!(stats.warps, 2);
}

#[test]
fn barrier_counts_exited_threads_out() {
    // Thread 0 exits early; the other 63 still pass BAR.SYNC 0 (count 0).
    let src = "
.kernel k
.param out, 8
    S2R R0, SR_TID_X ;
    MOV.64 R[2:3], c[0x0][0x160] ;
    IMAD.WIDE.U32 R[2:3], R0, 0x4, R[2:3] ;
    ISETP.EQ.AND P0, PT, R0, RZ, PT ;
@P0 EXIT ;
    BAR.SYNC 0x0 ;
    MOV R1, 0x1 ;
    STG [R[2:3]], R1 ;
    EXIT ;
";
    let (out, _) = run_kernel(src, [64, 1, 1], [1, 1, 1], 64, &[]).unwrap();
    assert_eq!(out[0], 0);
    assert!(out[1..].iter().all(|&v| v == 1));
}

#[test]
fn grid_of_ctas_and_special_registers() {
    // out[ctaid.x * 4 + tid] = ctaid.x * 100 + tid.x + 10 * tid.y, block (2, 2).
    let src = "
.kernel k
.param out, 8
    S2R R0, SR_TID_X ;
    S2R R1, SR_TID_Y ;
    S2R R4, SR_CTAID_X ;
    S2UR UR4, SR_NTID_X ;
    S2R R7, SR_LANEID ;
    IMAD R5, R1, UR4, R0 ;
    LEA R6, R4, R5, 0x2 ;
    MOV.64 R[2:3], c[0x0][0x160] ;
    IMAD.WIDE.U32 R[2:3], R6, 0x4, R[2:3] ;
    IMAD R8, R4, 0x64, R0 ;
    IMAD R8, R1, 0xa, R8 ;
    STG [R[2:3]], R8 ;
    EXIT ;
";
    let (out, stats) = run_kernel(src, [2, 2, 1], [3, 1, 1], 12, &[]).unwrap();
    for c in 0..3u32 {
        for y in 0..2u32 {
            for x in 0..2u32 {
                assert_eq!(out[(c * 4 + y * 2 + x) as usize], c * 100 + x + 10 * y);
            }
        }
    }
    assert_eq!(stats.ctas, 3);
}

#[test]
fn r2ur_takes_the_lowest_active_lane_with_a_true_guard() {
    let out = run32(
        "
    ISETP.GE.AND P0, PT, R0, 0x3, PT ;
    MOV R5, 0x64 ;
    IADD R5, R5, R0 ;
@P0 R2UR UR4, R5 ;
    MOV R1, UR4 ;
    STG [R[2:3]], R1 ;
    EXIT ;
",
        32,
    );
    assert!(out.iter().all(|&v| v == 103), "{:?}", out);
}

#[test]
fn vote_and_shfl() {
    let out = run32(
        "
    ISETP.LT.AND P0, PT, R0, 0x5, PT ;
    VOTE.ALL R4, P1, P0 ;
    VOTE.ANY R5, P2, P0 ;
    P2R R6, PR, RZ, 0x6 ;
    SHFL.BFLY P3, R7, R0, 0x1, 0x1f ;
    SHFL.DOWN P4, R8, R0, 0x4, 0x1f ;
    STG [R[2:3]], R4 ;
    STG [R[2:3]+0x80], R6 ;
    STG [R[2:3]+0x100], R7 ;
    STG [R[2:3]+0x180], R8 ;
    EXIT ;
",
        128,
    );
    for t in 0..32u32 {
        assert_eq!(out[t as usize], 0x1F, "ballot");
        assert_eq!(out[32 + t as usize], 0b100, "all = false, any = true");
        assert_eq!(out[64 + t as usize], t ^ 1);
        assert_eq!(out[96 + t as usize], if t + 4 < 32 { t + 4 } else { t });
    }
}

#[test]
fn bmov_saves_and_restores_barriers_around_a_call() {
    // The callee saves B0, uses it for its own region, restores it before
    // RET; the caller's region on B0 still reconverges all 32 lanes.
    let out = run32(
        "
    ISETP.LT.AND P0, PT, R0, 0xc, PT ;
    BSSY B0, L_join ;
@P0 BRA L_skip ;
    MOV R4, R0 ;
    CALL R[20:21], L_f ;
    MOV R1, R4 ;
    BRA L_join ;
L_skip:
    MOV R1, 0x63 ;
L_join:
    BSYNC B0 ;
    VOTE.ANY R5, PT, PT ;
    BMOV R6, B0 ;
    STG [R[2:3]], R1 ;
    STG [R[2:3]+0x80], R5 ;
    STG [R[2:3]+0x100], R6 ;
    EXIT ;
L_f:
    BMOV R16, B0 ;
    BSSY B0, L_ret ;
    LOP3.LUT R7, R4, 0x1, RZ, 0xc0, !PT ;
    ISETP.EQ.AND P1, PT, R7, RZ, PT ;
@P1 IADD R4, R4, 0x1000 ;
@!P1 BRA L_ret ;
    IADD R4, R4, 0x2000 ;
L_ret:
    BSYNC B0 ;
    BMOV B0, R16 ;
    RET R[20:21] ;
",
        96,
    );
    for t in 0..32u32 {
        let expect = if t < 12 {
            0x63
        } else if t % 2 == 0 {
            t + 0x3000
        } else {
            t
        };
        assert_eq!(out[t as usize], expect, "lane {}", t);
        assert_eq!(out[32 + t as usize], 0xFFFF_FFFF);
        assert_eq!(out[64 + t as usize], 0xFFFF_FFFF, "B0 restored to the caller's mask");
    }
}

/// A callee borrows the caller's B0 (saved with `BMOV.CLEAR`, restored
/// before `RET`) while the caller's other lanes reach the caller's
/// `BSYNC B0`: they keep waiting for the caller's instance (their own view
/// of B0) instead of passing as non-members of the callee's. The callee's
/// odd lanes branch past the caller's join, so the caller's lanes 0-11 run
/// their `BSYNC B0` while B0 is borrowed. With one warp-wide mask per
/// barrier (no per-lane views) lanes 0-11 would pass, VOTE would see only
/// them, and the `BAR.SYNC` after the join would deadlock against the
/// callee's lanes waiting at the restored B0.
const BORROWED_BARRIER: &str = "
    ISETP.LT.AND P0, PT, R0, 0xc, PT ;
    BSSY B0, L_join ;
@P0 BRA L_skip ;
    MOV R4, R0 ;
    CALL R[20:21], L_f ;
    BRA L_join ;
L_f:
    BMOV.CLEAR R16, B0 ;
    BSSY B0, L_ret ;
    LOP3.LUT R7, R4, 0x1, RZ, 0xc0, !PT ;
    ISETP.EQ.AND P1, PT, R7, RZ, PT ;
@!P1 BRA L_odd ;
L_ret:
    BSYNC B0 ;
    BMOV B0, R16 ;
    RET R[20:21] ;
L_skip:
    MOV R4, 0x63 ;
L_join:
    BSYNC B0 ;
    VOTE.ANY R5, PT, PT ;
    BAR.SYNC 0x0 ;
    BMOV R6, B0 ;
    STG [R[2:3]], R4 ;
    STG [R[2:3]+0x80], R5 ;
    STG [R[2:3]+0x100], R6 ;
    EXIT ;
L_odd:
    IADD R4, R4, 0x1000 ;
    BRA L_ret ;
";

#[test]
fn lanes_reaching_a_borrowed_barrier_wait_for_their_own_instance() {
    let out = run32(BORROWED_BARRIER, 96);
    for t in 0..32u32 {
        let expect = if t < 12 {
            0x63
        } else if t % 2 == 1 {
            t + 0x1000
        } else {
            t
        };
        assert_eq!(out[t as usize], expect, "lane {}", t);
        assert_eq!(out[32 + t as usize], 0xFFFF_FFFF, "lane {}: all 32 lanes reconverge at the caller's join", t);
        assert_eq!(out[64 + t as usize], 0xFFFF_FFFF, "lane {}: its view of B0 is the caller's instance again", t);
    }
}

#[test]
fn a_cleared_view_passes_bsync_and_breaks_touch_only_their_instance() {
    // Lanes 0-15 and 16-31 each set up their own instance of B1 (two lane
    // groups in one region at once); lanes 16-31 BREAK out of theirs, which
    // leaves lanes 0-15's view alone: they still wait for each other.
    // A lane whose view was cleared by BMOV.CLEAR passes BSYNC.
    let out = run32(
        "
    ISETP.LT.AND P0, PT, R0, 0x10, PT ;
    BSSY B0, L_join ;
@!P0 BRA L_hi ;
    BSSY B1, L_lo_sync ;
    LOP3.LUT R7, R0, 0x1, RZ, 0xc0, !PT ;
    ISETP.EQ.AND P1, PT, R7, RZ, PT ;
@P1 BRA L_lo_sync ;
    NOP ;
L_lo_sync:
    BSYNC B1 ;
    VOTE.ANY R5, PT, PT ;
    BRA L_join ;
L_hi:
    BSSY B1, L_hi_end ;
    BREAK B1 ;
    BMOV R6, B1 ;
    BMOV.CLEAR R8, B1 ;
    BSYNC B1 ;
    MOV R5, R6 ;
L_hi_end:
L_join:
    BSYNC B0 ;
    STG [R[2:3]], R5 ;
    EXIT ;
",
        32,
    );
    for t in 0..32 {
        assert_eq!(out[t], if t < 16 { 0x0000_FFFF } else { 0 }, "lane {}", t);
    }
}

#[test]
fn break_releases_the_waiting_lanes() {
    // Lanes 0-15 wait at BSYNC B0 while lanes 16-31 BREAK out of it; the
    // break completes the barrier.
    let out = run32(
        "
    ISETP.LT.AND P0, PT, R0, 0x10, PT ;
    BSSY B0, L_sync ;
@!P0 BRA L_other ;
L_sync:
    BSYNC B0 ;
    MOV R1, 0x1 ;
    STG [R[2:3]], R1 ;
    EXIT ;
L_other:
    BREAK B0 ;
    MOV R1, 0x2 ;
    STG [R[2:3]], R1 ;
    EXIT ;
",
        32,
    );
    for t in 0..32 {
        assert_eq!(out[t], if t < 16 { 1 } else { 2 });
    }
}

#[test]
fn guarded_off_instructions_have_no_effect_and_no_fault() {
    let out = run32(
        "
    MOV R1, 0x5 ;
@!PT MOV R1, c[0x0][0x8000] ;
@!PT LDG R1, [RZ] ;
    ISETP.LT.AND P0, PT, R0, 0x4, PT ;
    MOV R4, 0x7 ;
    R2UR UR5, R4 ;
    ISETP.GT.AND P1, PT, R0, 0x40, PT ;
@P1 R2UR UR5, R0 ;
@P0 MOV R1, UR5 ;
    STG [R[2:3]], R1 ;
    EXIT ;
",
        32,
    );
    for t in 0..32 {
        assert_eq!(out[t], if t < 4 { 7 } else { 5 });
    }
}

#[test]
fn uniform_instructions_in_divergent_code() {
    // Each half of the warp runs its own UIADD on UR4; the uniform guard
    // !UPT disables an instruction entirely.
    let out = run32(
        "
    UMOV UR4, 0x10 ;
    ISETP.LT.AND P0, PT, R0, 0x10, PT ;
    BSSY B0, L_join ;
@P0 BRA L_a ;
    UIADD UR4, UR4, 0x100 ;
    BRA L_join ;
L_a:
    UIADD UR4, UR4, 0x1 ;
L_join:
    BSYNC B0 ;
@!UPT UIADD UR4, UR4, 0x1000 ;
    MOV R1, UR4 ;
    STG [R[2:3]], R1 ;
    EXIT ;
",
        32,
    );
    assert!(out.iter().all(|&v| v == 0x111), "{:x?}", out);
}

#[test]
fn cta_barrier_with_a_thread_count() {
    // Barrier 1 expects 32 threads: warp 1's arrival alone completes it,
    // before warp 0 even arrives at barrier 0.
    let src = "
.kernel k
.param out, 8
.shared 8
    S2R R0, SR_TID_X ;
    MOV.64 R[2:3], c[0x0][0x160] ;
    IMAD.WIDE.U32 R[2:3], R0, 0x4, R[2:3] ;
    ISETP.GE.AND P0, PT, R0, 0x20, PT ;
@P0 BAR.SYNC 0x1, 0x20 ;
@P0 MOV R1, 0x2 ;
@!P0 MOV R1, 0x1 ;
    STG [R[2:3]], R1 ;
    BAR.SYNC 0x0 ;
    EXIT ;
";
    let (out, _) = run_kernel(src, [64, 1, 1], [1, 1, 1], 64, &[]).unwrap();
    for t in 0..64 {
        assert_eq!(out[t], if t < 32 { 1 } else { 2 });
    }
}

#[test]
fn atomics_on_shared_memory_through_the_generic_window() {
    let src = "
.kernel k
.param out, 8
.shared 16
    S2R R0, SR_TID_X ;
    MOV.64 R[2:3], c[0x0][0x160] ;
    MOV R4, 0x4 ;
    MOV R5, 0x10000 ;
    ATOM.ADD R6, [R[4:5]], R0 ;
    BAR.SYNC 0x0 ;
    LDS R7, [RZ+0x4] ;
    STG [R[2:3]], R7 ;
    EXIT ;
";
    let (out, _) = run_kernel(src, [64, 1, 1], [1, 1, 1], 1, &[]).unwrap();
    assert_eq!(out[0], 63 * 64 / 2);
}

#[test]
fn trace_and_yield_do_not_change_results() {
    let src = format!("{}    IADD R1, R0, 0x1 &yield=1 ;\n    STG [R[2:3]], R1 ;\n    EXIT ;\n", pro());
    let prog = load(&src);
    let mut gpu = ursa_sim::Gpu::new();
    let out = gpu.alloc(4 * 64, 16);
    let cfg = ursa_sim::LaunchConfig { block: [64, 1, 1], trace: true, ..Default::default() };
    gpu.launch(&prog, "k", &cfg, &[ursa_sim::Arg::Ptr(out)]).unwrap();
    let b = gpu.read(out, 4 * 64).unwrap();
    for t in 0..64u32 {
        assert_eq!(u32::from_le_bytes(b[4 * t as usize..4 * t as usize + 4].try_into().unwrap()), t + 1);
    }
}

#[test]
fn uniform_branch_keeps_the_group_whole() {
    // The lanes below 16 run a loop counted in UR4 whose back edge is the
    // uniform branch `@UP0 UBRA` (the group of 16 branches as one and never
    // splits: VOTE inside the loop sees exactly those lanes); the others wait
    // at the BSYNC. An unguarded UBRA always branches, `@!UPT` never.
    let out = run32(
        "
    MOV R1, RZ ;
    ISETP.LT.AND P0, PT, R0, 0x10, PT ;
    BSSY B0, L_join ;
@!P0 BRA L_join ;
    UMOV UR4, 0x0 ;
L_loop:
    IADD R1, R1, UR4 ;
    VOTE.ANY R4, PT, PT ;
    UIADD UR4, UR4, 0x1 ;
    UISETP.LT.AND UP0, UPT, UR4, 0x5, UPT ;
@UP0 UBRA L_loop ;
@!UPT UBRA L_bad ;
    UBRA L_join ;
L_bad:
    MOV R1, 0xbad ;
L_join:
    BSYNC B0 ;
@!P0 MOV R4, RZ ;
    STG [R[2:3]+0x80], R4 ;
    STG [R[2:3]], R1 ;
    EXIT ;
",
        64,
    );
    let sums: Vec<u32> = (0..32).map(|t| if t < 16 { 10 } else { 0 }).collect();
    let votes: Vec<u32> = (0..32).map(|t| if t < 16 { 0xFFFF } else { 0 }).collect();
    assert_eq!(out[..32], sums[..], "0 + 1 + 2 + 3 + 4 in the lanes that ran the loop");
    assert_eq!(out[32..], votes[..], "the loop ran with the 16 lanes together");
}
