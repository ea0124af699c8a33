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

/// A kernel with a store on a known line of its `.clif` file, and a trap
/// when `n` is 0.
const LINES_CLIF: &str = "\
; line 1
function %lines(i64, i32) {
block0(v0: i64, v1: i32):
    v2 = iadd v1, v1
    store.i32 notrap aligned v2, v0
    trapz v1, user7
    v3 = imul v1, v2
    store.i32 notrap aligned v3, v0+4
    return
}
";

/// The CLIF lines of a compiled kernel reach the object (`.ursa.lines`) and
/// the simulator: `--profile` names each instruction's `file:line`, a trap
/// report names the trapping one's, the timeline has them as `args.line`
/// (docs/binary-format.md).
#[test]
fn profile_and_traps_name_clif_lines() {
    let src = write("lines.clif", LINES_CLIF);
    let obj = tmp("lines.o");
    let o = ursa(&["compile", "--kernel", &src, "-o", obj.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let run = |n: &str, extra: &[&str]| {
        let mut args = vec!["run", obj.to_str().unwrap(), "--kernel", "lines", "--arg", "buf:out=i32[2]", "--arg", n, "--out", "out"];
        args.extend_from_slice(extra);
        ursa(&args)
    };
    let json = tmp("lines.json");
    let o = run("i32:2", &["--profile", "--timeline", json.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("out = [4, 8]"), "{}", out);
    // Every instruction of the listing names a line of the function, and
    // each store its own.
    let listing: Vec<&str> = out.lines().skip_while(|l| !l.starts_with(".kernel lines")).skip(1).collect();
    assert!(!listing.is_empty(), "{}", out);
    for l in &listing {
        let line: u32 = l.rsplit(':').next().and_then(|n| n.trim().parse().ok()).unwrap_or_else(|| panic!("no line in `{}`", l));
        assert!(l.contains(&format!("{}:", src)) && (2..=10).contains(&line), "{}", l);
    }
    let stores: Vec<&&str> = listing.iter().filter(|l| l.contains("ST")).collect();
    assert_eq!(stores.len(), 2, "{}", out);
    assert!(stores[0].ends_with(&format!("{}:5", src)), "{}", stores[0]);
    assert!(stores[1].ends_with(&format!("{}:8", src)), "{}", stores[1]);
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).expect("timeline JSON");
    let issues: Vec<&serde_json::Value> = v["traceEvents"].as_array().unwrap().iter().filter(|e| e["ph"] == "X").collect();
    assert!(!issues.is_empty());
    assert!(issues.iter().all(|e| e["args"]["line"].as_str().is_some_and(|l| l.starts_with(&src))), "{:?}", issues[0]);
    // The trap report names line 6 (`trapz`).
    let o = run("i32:0", &[]);
    assert!(!o.status.success());
    let e = stderr(&o);
    assert!(e.contains(&format!("{}:6)", src)), "{}", e);
}

/// An object without a line table (assembled) runs and profiles as before:
/// no line column, no `line` in the timeline.
#[test]
fn objects_without_lines_still_load() {
    let obj = vadd_object("vadd_nolines.o");
    let json = tmp("nolines.json");
    let o = run_vadd(&obj, &["--out", "out", "--profile", "--timeline", json.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(!out.contains(".s:"), "{}", out);
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    assert!(v["traceEvents"].as_array().unwrap().iter().all(|e| e["args"].get("line").is_none()));
}
