//! `ursa run --profile` and `--timeline FILE.json` on the vector-add example,
//! and the launch limits as the command line reports them.

mod common;
use common::*;

#[test]
fn profile_and_timeline() {
    let obj = vadd_object("vadd.o");
    let json = tmp("t.json");
    let o = run_vadd(&obj, &["--out", "out", "--profile", "--timeline", json.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("out = [11, 22, 33, 44, 55, 66, -63]"), "{}", out);
    for want in ["profile: 2 CTAs, 2 warps", "IPC", "SIMT efficiency", "global ", ".kernel vadd", "LDG", "EXIT"] {
        assert!(out.contains(want), "missing `{}` in\n{}", want, out);
    }
    // 7 threads load a and b and store out: 14 loads + 7 stores of 4 bytes.
    assert!(out.contains("global     21 accesses, 84 bytes"), "{}", out);
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).expect("timeline JSON");
    let events = v["traceEvents"].as_array().unwrap();
    assert!(events.iter().any(|e| e["ph"] == "X" && e["pid"] == 1));
    assert!(events.iter().all(|e| e["ph"] == "X" || e["ph"] == "M"));
}

#[test]
fn limits_are_clear_errors() {
    let obj = vadd_object("vadd_limits.o");
    let o = ursa(&[
        "run",
        obj.to_str().unwrap(),
        "--kernel",
        "vadd",
        "--grid",
        "2147483647,65535",
        "--arg",
        "buf:a=i32[1]",
        "--arg",
        "buf:b=i32[1]",
        "--arg",
        "buf:out=i32[1]",
        "--arg",
        "u32:0",
    ]);
    assert!(!o.status.success());
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(e.contains("step limit") && e.contains("vadd"), "{}", e);
    // vadd uses no shared or local memory: a zero memory limit still runs it.
    let o = ursa(&[
        "run",
        obj.to_str().unwrap(),
        "--kernel",
        "vadd",
        "--memory-limit",
        "0",
        "--arg",
        "buf:a=i32[1]",
        "--arg",
        "buf:b=i32[1]",
        "--arg",
        "buf:out=i32[1]",
        "--arg",
        "u32:1",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}

/// The SM timing model from the command line: `--timing sm` and
/// `--machine FILE` give the same outputs with the model's statistics,
/// stall reasons and an SM timeline; bad choices are clear errors.
#[test]
fn sm_timing_model() {
    let obj = vadd_object("vadd_sm.o");
    let json = tmp("sm.json");
    let o = run_vadd(&obj, &["--out", "out", "--stats", "--profile", "--timing", "sm", "--timeline", json.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("out = [11, 22, 33, 44, 55, 66, -63]"), "{}", out);
    for want in
        ["occupancy:           theoretical", "limited by", "achieved occupancy:", "warp cycles by reason", "long scoreboard", "sm-cycles"]
    {
        assert!(out.contains(want), "missing `{}` in\n{}", want, out);
    }
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).expect("timeline JSON");
    let events = v["traceEvents"].as_array().unwrap();
    assert!(events.iter().any(|e| e["cat"] == "stall"), "no stall spans");
    assert!(events.iter().any(|e| e["ph"] == "M" && e["args"]["name"] == "SM 0"));
    // A one-SM machine: both CTAs on SM 0.
    let m = tmp("one.machine");
    std::fs::write(&m, "sms = 1\n").unwrap();
    let o = run_vadd(&obj, &["--stats", "--machine", m.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(String::from_utf8_lossy(&o.stdout).contains("achieved occupancy"));
    let o = run_vadd(&obj, &["--timing", "fast"]);
    assert!(String::from_utf8_lossy(&o.stderr).contains("--timing is `warp` or `sm`"));
    std::fs::write(&m, "sms = none\n").unwrap();
    let o = run_vadd(&obj, &["--machine", m.to_str().unwrap()]);
    assert!(String::from_utf8_lossy(&o.stderr).contains("line 1: `sms` needs a number"), "{}", String::from_utf8_lossy(&o.stderr));
}
