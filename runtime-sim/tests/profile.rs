//! `LaunchConfig::profile` / `timeline`: counts checked against a kernel
//! small enough to work them out by hand, and the timeline's Chrome trace
//! JSON checked against the format's schema.

mod common;

use common::load;
use ursa_sim::{Arg, Gpu, LaunchConfig, Program, Stats};

/// 40 threads: warp 0 has 32 lanes, warp 1 has 8. Lanes 0–3 branch past
/// the IADD, so warp 0 runs it with 28 lanes while 4 wait.
const KERNEL: &str = "
.kernel k
.param out, 8
    S2R R0, SR_TID_X &wsb=0 ;
    ISETP.LT.AND P0, PT, R0, 0x4, PT &req=1 &stall=3 ;
@P0 BRA L_skip ;
    IADD R5, R0, 0x1 ;
L_skip:
    MOV.64 R[2:3], c[0x0][0x160] ;
    IMAD.WIDE.U32 R[2:3], R0, 0x4, R[2:3] ;
    STG [R[2:3]], R0 ;
    BAR.SYNC 0x0 ;
    EXIT ;
";

fn run(cfg: LaunchConfig) -> (Program, Stats) {
    let prog = load(KERNEL);
    let mut gpu = Gpu::new();
    let out = gpu.alloc(4 * 40, 16);
    let cfg = LaunchConfig { block: [40, 1, 1], ..cfg };
    let stats = gpu.launch(&prog, "k", &cfg, &[Arg::Ptr(out)]).unwrap();
    (prog, stats)
}

#[test]
fn counts_worked_out_by_hand() {
    let (prog, stats) = run(LaunchConfig { profile: true, ..Default::default() });
    let p = stats.profile.as_ref().expect("profile");
    assert_eq!(p.insts.len(), 9);
    let col = |f: fn(&ursa_sim::InstProfile) -> u64| -> Vec<u64> { p.insts.iter().map(f).collect() };
    // Every instruction issues once per warp.
    assert_eq!(col(|i| i.issues), [2; 9]);
    // Lanes executed: the BRA's guard holds for lanes 0-3 only; the IADD
    // runs on the 28 + 8 lanes that fell through.
    assert_eq!(col(|i| i.lanes), [40, 40, 4, 36, 40, 40, 40, 40, 40]);
    assert_eq!(col(|i| i.active_lanes), [40, 40, 40, 36, 40, 40, 40, 40, 40]);
    // The 4 lanes of warp 0 waiting at L_skip while the IADD issues.
    assert_eq!(col(|i| i.divergence_idle_lanes), [0, 0, 0, 4, 0, 0, 0, 0, 0]);
    // S2R (variable latency, 10 cycles) sets SB0 at cycle 0; the ISETP may
    // issue at 1 but waits for SB0 until 10: 9 cycles per warp.
    assert_eq!(col(|i| i.scoreboard_stall), [0, 18, 0, 0, 0, 0, 0, 0, 0]);
    // The ISETP's &stall=3 keeps the warp 2 cycles past the minimum.
    assert_eq!(col(|i| i.fixed_stall), [0, 4, 0, 0, 0, 0, 0, 0, 0]);
    assert_eq!(col(|i| i.barrier_arrivals), [0, 0, 0, 0, 0, 0, 0, 2, 0]);
    // Per warp: issue cycles 0, 10, 13, 14, 15, 16, 17, 18, 19 -> 20 cycles.
    assert_eq!(stats.cycles, 20);
    assert_eq!(p.by_class.values().sum::<u64>(), 18);
    let mem = p.memory.get("global").expect("global accesses");
    assert_eq!((mem.accesses, mem.bytes), (40, 160));
    assert_eq!(p.memory.len(), 1);
    let text = p.report(&prog, &stats);
    // 320 lanes executed over 18 issues of 32 lanes (warp 1 has 8 lanes).
    assert!(text.contains("SIMT efficiency        55.6%"), "{}", text);
    assert!(text.contains("IPC                    0.900"), "{}", text);
    assert!(text.contains("STG"), "{}", text);
    // No profile unless asked for, and the same statistics either way.
    let (_, plain) = run(LaunchConfig::default());
    assert!(plain.profile.is_none());
    assert_eq!(Stats { profile: None, ..stats }, plain);
}

#[test]
fn timeline_is_chrome_trace_json() {
    let (prog, stats) = run(LaunchConfig { timeline: true, ..Default::default() });
    let p = stats.profile.as_ref().expect("profile");
    assert_eq!(p.timeline.len(), 18);
    let mut bytes = Vec::new();
    p.write_chrome_trace(&prog, [1, 1, 1], None, &mut bytes).unwrap();
    let text = String::from_utf8(bytes).unwrap();
    let v: serde_json::Value = serde_json::from_str(&text).expect("the timeline is JSON");
    // Written event by event, it is what serde_json prints for the whole
    // document as a value (compact, keys sorted), byte for byte: the format
    // of the timeline when it was built as one `serde_json::Value`.
    assert_eq!(serde_json::to_string(&v).unwrap(), text);
    let events = v["traceEvents"].as_array().expect("traceEvents array");
    let mut complete = 0;
    for e in events {
        assert!(e["name"].is_string(), "{}", e);
        assert!(e["pid"].is_u64() && e["tid"].is_u64(), "{}", e);
        match e["ph"].as_str() {
            Some("X") => {
                assert!(e["ts"].is_u64() && e["dur"].is_u64() && e["dur"].as_u64().unwrap() >= 1, "{}", e);
                assert!(e["args"]["lanes"].is_u64() && e["args"]["pc"].is_string(), "{}", e);
                complete += 1;
            }
            Some("M") => assert!(e["args"]["name"].is_string(), "{}", e),
            other => panic!("unexpected phase {:?}", other),
        }
    }
    assert_eq!(complete, 18);
    // Warp 1's ISETP issues at cycle 10 and lasts its 3 stall cycles.
    let isetp = events.iter().find(|e| e["tid"] == 1 && e["name"].as_str().unwrap().starts_with("ISETP")).unwrap();
    assert_eq!((isetp["ts"].as_u64(), isetp["dur"].as_u64()), (Some(10), Some(3)));
    assert_eq!(v["otherData"]["dropped_events"], 0);
}
