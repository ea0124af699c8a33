//! Reconvergence of divergent warps (`docs/kernels.md`, "Reconvergence"):
//! kernels compiled with `ursa compile --kernel` and launched with `ursa run
//! --strict --profile --stats`; the per-instruction issue counts show that
//! the code after a divergent region runs once per warp.

mod common;
use common::*;

/// Compiles `tests/reconv/NAME.clif` with `--kernel`; the object's path.
fn kernel(name: &str) -> String {
    compile_file(&format!("{}/../../tests/reconv/{}.clif", env!("CARGO_MANIFEST_DIR"), name))
}

/// Compiles the CLIF file `src` with `--kernel`; the object's path.
fn compile_file(src: &str) -> String {
    let name = std::path::Path::new(src).file_stem().unwrap().to_string_lossy().to_string();
    let obj = tmp(&format!("{}.o", name));
    let o = ursa(&["compile", "--kernel", src, "-o", obj.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    obj.to_str().unwrap().to_string()
}

/// (issues, lanes, disassembly) of every instruction of the `--profile` table.
fn profile_rows(out: &str) -> Vec<(u64, u64, String)> {
    out.lines()
        .skip_while(|l| !l.starts_with(".kernel"))
        .skip(1)
        .filter_map(|l| {
            let w: Vec<&str> = l.split_whitespace().collect();
            let issues = w.first()?.parse().ok()?;
            let lanes = w.get(1)?.parse().ok()?;
            Some((issues, lanes, w.get(7..)?.join(" ")))
        })
        .collect()
}

/// Asserts that every row after `rows[from]` up to the first one starting
/// with `end` (included) issued `want` times.
fn assert_issues_after(rows: &[(u64, u64, String)], from: usize, end: &str, want: u64, text: &str) {
    let last =
        rows[from..].iter().position(|r| r.2.starts_with(end)).unwrap_or_else(|| panic!("no {} after row {}:\n{}", end, from, text)) + from;
    for r in &rows[from + 1..=last] {
        assert_eq!(r.0, want, "instruction `{}` after `{}`:\n{}", r.2, rows[from].2, text);
    }
}

/// Runs `kernel` of object `obj` over `ctas` CTAs of `block` threads with
/// the launch arguments `args` (each after `--arg`), strict, printing buffer
/// `out`, with the further flags `flags` (`--profile`, `--stats`); asserts
/// that it succeeds and returns the output.
fn launch(obj: &str, kernel: &str, ctas: u32, block: u32, args: &[&str], flags: &[&str]) -> String {
    let (ctas, block) = (ctas.to_string(), block.to_string());
    let mut cmd = vec!["run", obj, "--kernel", kernel, "--grid", &ctas, "--block", &block];
    for a in args {
        cmd.extend(["--arg", a]);
    }
    cmd.extend(["--out", "out", "--strict"]);
    cmd.extend(flags);
    let o = ursa(&cmd);
    assert!(o.status.success(), "{}", stderr(&o));
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// Launches `kernel` of object `obj` over `ctas` CTAs of `block` threads
/// with arguments (`out`: i32[n + 1], `n`: i32), strict and profiled; the
/// output.
fn launch_out_n(obj: &str, kernel: &str, ctas: u32, block: u32, n: usize) -> String {
    launch(obj, kernel, ctas, block, &[&format!("buf:out=i32[{}]", n + 1), &format!("i32:{}", n)], &["--profile"])
}

/// Launches `kernel` of object `obj` over `ctas` CTAs of `block` threads
/// with one argument, `out`: i32[ctas * block], strict, profiled, with
/// statistics; the output.
fn launch_out(obj: &str, kernel: &str, ctas: u32, block: u32) -> String {
    launch(obj, kernel, ctas, block, &[&format!("buf:out=i32[{}]", ctas * block)], &["--profile", "--stats"])
}

fn out_values(out: &str, name: &str) -> Vec<i64> {
    let line = out.lines().find(|l| l.starts_with(&format!("{} = [", name))).unwrap_or_else(|| panic!("no {} in {}", name, out));
    let inner = line.split_once('[').unwrap().1.trim_end_matches(']');
    inner.split(", ").map(|v| v.parse().unwrap()).collect()
}

/// A divergent if/else on the thread index, then a common tail, over full
/// warps: every instruction from the join's `BSYNC` on issues once per warp
/// with all 32 lanes.
#[test]
fn divergent_if_else_tail_runs_once_per_warp() {
    let obj = kernel("ifelse_tail");
    let (ctas, block) = (3u32, 64u32);
    let n = (ctas * block) as usize;
    let text = launch_out(&obj, "ifelse_tail", ctas, block);
    let got = out_values(&text, "out");
    for i in 0..n as i64 {
        let tid = i % block as i64;
        let x = i as i32;
        let f = if tid & 1 != 0 {
            (0..5).fold(x.wrapping_mul(3), |a, _| a.wrapping_mul(a) ^ x)
        } else {
            (0..5).fold(x.wrapping_add(100), |b, _| b.wrapping_mul(b).wrapping_add(x))
        };
        let want = f.wrapping_mul(7).wrapping_add((i as i32) ^ 5).wrapping_sub(3);
        assert_eq!(got[i as usize], want as i64, "out[{}]", i);
    }
    let warps = (n / 32) as u64;
    let rows = profile_rows(&text);
    let join = rows.iter().position(|r| r.2.starts_with("BSYNC B0")).unwrap_or_else(|| panic!("no BSYNC in\n{}", text));
    assert!(rows.iter().any(|r| r.2.starts_with("BSSY B0")), "{}", text);
    let exit = rows[join..].iter().position(|r| r.2.starts_with("EXIT")).unwrap() + join;
    assert!(exit - join >= 6, "the tail is the rest of the kernel:\n{}", text);
    for r in &rows[join..=exit] {
        assert_eq!((r.0, r.1), (warps, 32 * warps), "tail instruction `{}` issued per lane group:\n{}", r.2, text);
    }
}

/// A divergent `br_table` (four ways on `tid & 3`), then a common tail.
#[test]
fn divergent_br_table_tail_runs_once_per_warp() {
    let obj = kernel("switch_tail");
    let text = launch(&obj, "switch_tail", 1, 96, &["buf:out=i32[96]"], &["--profile"]);
    let got = out_values(&text, "out");
    for t in 0..96i64 {
        let case = [t * t, 20, 30, 40][(t & 3) as usize];
        assert_eq!(got[t as usize], case + t, "out[{}]", t);
    }
    let rows = profile_rows(&text);
    let join = rows.iter().position(|r| r.2.starts_with("BSYNC B0")).unwrap_or_else(|| panic!("no BSYNC in\n{}", text));
    let exit = rows[join..].iter().position(|r| r.2.starts_with("EXIT")).unwrap() + join;
    for r in &rows[join..=exit] {
        assert_eq!((r.0, r.1), (3, 96), "tail instruction `{}`:\n{}", r.2, text);
    }
}

/// A loop whose trip count depends on the thread (and on loaded data), laid
/// out with its exit before its body, over several CTAs and a size that is
/// not a multiple of the block: results against a host reference in strict
/// mode, and the tail after the loop issued once per warp (without the
/// convergence barrier each group of lanes leaving the loop in a different
/// iteration ran the tail on its own: 179 issues instead of 10 here).
#[test]
fn divergent_loop_matches_host_and_reconverges() {
    let obj = compile_file(&format!("{}/../../examples/kernels/divergent_loop.clif", env!("CARGO_MANIFEST_DIR")));
    let (ctas, block, n) = (5u32, 64u32, 300usize);
    let a: Vec<i32> = (0..n as i32).map(|i| (i * 37) % 101 - 20).collect();
    let a_arg = format!("buf:a=i32:{}", a.iter().map(|v| v.to_string()).collect::<Vec<_>>().join(","));
    let (out_arg, n_arg) = (format!("buf:out=i32[{}]", n + 1), format!("i32:{}", n));
    let text = launch(&obj, "divergent_loop", ctas, block, &[&out_arg, &a_arg, &n_arg], &["--profile"]);
    let got = out_values(&text, "out");
    for i in 0..n {
        let tid = (i as u32 % block) as i32;
        let t = ((a[i] & 15) + (tid & 7)) as u32;
        let mut acc = 0i32;
        for k in 0..t {
            acc = acc.wrapping_add((k as i32).wrapping_mul(a[i]).wrapping_add(i as i32));
        }
        assert_eq!(got[i], acc.wrapping_mul(3).wrapping_add(i as i32) as i64, "out[{}]", i);
    }
    assert_eq!(got[n], 0, "a thread past n wrote");
    // The early exit (block0) is reported as left without a barrier.
    let src = format!("{}/../../examples/kernels/divergent_loop.clif", env!("CARGO_MANIFEST_DIR"));
    let p = ursa(&["compile", "--kernel", &src, "--print-after", "insert_reconvergence", "-o", tmp("dl2.o").to_str().unwrap()]);
    let printed = String::from_utf8_lossy(&p.stdout);
    assert!(printed.contains("; no convergence barrier: divergent branch ending block0: an early exit"), "{}", printed);
    assert!(!printed.contains("ending block2"), "{}", printed);
    let rows = profile_rows(&text);
    let join = rows.iter().position(|r| r.2.starts_with("BSYNC B0")).unwrap_or_else(|| panic!("no BSYNC in\n{}", text));
    // Warps with at least one thread below n: 10 (the last CTA's second warp has none).
    let live_warps = (0..ctas as usize * block as usize / 32).filter(|w| w * 32 < n).count() as u64;
    let exit = rows[join..].iter().position(|r| r.2.starts_with("EXIT")).unwrap() + join;
    for r in &rows[join + 1..=exit] {
        assert_eq!(r.0, live_warps, "tail instruction `{}`:\n{}", r.2, text);
    }
}

/// An if/else whose join is the header of a divergent loop: two barriers
/// (`B0` for the loop, `B1` for the if), `BREAK B1` after the `BSYNC B1` on
/// the loop's cycle; results against a host reference, no deadlock, and the
/// tail once per warp.
#[test]
fn nested_regions_with_join_on_a_loop() {
    let obj = kernel("nested");
    let (ctas, block, n) = (3u32, 64u32, 170usize);
    let text = launch_out_n(&obj, "nested", ctas, block, n);
    let got = out_values(&text, "out");
    for i in 0..n as i32 {
        let tid = i % block as i32;
        let b = if tid & 1 != 0 { i + i } else { i + 5 };
        let mut acc = b;
        while ((acc - b) as u32) < (tid & 7) as u32 {
            acc += (acc - b) + 1;
        }
        assert_eq!(got[i as usize], acc as i64, "out[{}]", i);
    }
    assert_eq!(got[n], 0, "a thread past n wrote");
    let rows = profile_rows(&text);
    for want in ["BSSY B0", "BSSY B1", "BSYNC B1", "BREAK B1", "BSYNC B0"] {
        assert!(rows.iter().any(|r| r.2.starts_with(want)), "no {} in\n{}", want, text);
    }
    let join = rows.iter().position(|r| r.2.starts_with("BSYNC B0")).unwrap();
    let live_warps = (0..ctas as usize * block as usize / 32).filter(|w| w * 32 < n).count() as u64;
    assert_issues_after(&rows, join, "EXIT", live_warps, &text);
}

/// `ursa run --stats` on a hand-counted launch (`examples/vadd.s`, 2 CTAs of
/// 4 threads, n = 7): CTA 0 issues 16 instructions with 4 lanes, except
/// `@P0 EXIT` with none; CTA 1 issues 4 with 4 lanes, `@P0 EXIT` with 1
/// (thread 7), and 11 with 3. So 32 warp instructions, 15*4 + 4*4 + 1 + 11*3
/// = 110 lane instructions, 110 / (32 * 32) = 10.7% SIMT efficiency.
#[test]
fn run_stats_hand_counted() {
    let obj = vadd_object("vadd_stats.o");
    let o = run_vadd(&obj, &["--stats"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("launch:              2 CTAs, 2 warps"), "{}", text);
    assert!(text.contains("instructions issued: 32\n"), "{}", text);
    assert!(text.contains("lane-instructions:   110\n"), "{}", text);
    assert!(text.contains("SIMT efficiency:     10.7%"), "{}", text);
    let cycles: u64 = text.lines().find_map(|l| l.strip_prefix("cycles:")).expect("cycles line").trim().parse().unwrap();
    assert!(cycles >= 16, "a CTA issues at most one instruction per cycle: {}", text);
}

/// A CTA barrier inside a divergent if is a compile error naming the call; one
/// after an early exit (`if (i >= n) return;`) is accepted.
#[test]
fn barrier_in_divergent_flow() {
    let bad = write(
        "barrier_div.clif",
        "function %k(i64) {\n    fn0 = %ursa_tid_x() -> i32\n    fn1 = %ursa_barrier()\nblock0(v0: i64):\n    v1 = call fn0()\n    v2 = iconst.i32 16\n    v3 = icmp ult v1, v2\n    brif v3, block1, block2\nblock1:\n    call fn1()\n    jump block2\nblock2:\n    store v1, v0\n    return\n}\n",
    );
    let o = ursa(&["compile", "--kernel", &bad, "-o", tmp("bad.o").to_str().unwrap()]);
    assert!(!o.status.success());
    let e = stderr(&o);
    assert!(e.contains("CTA barrier `call fn1()`") && e.contains("inside divergent control flow") && e.contains("block1"), "{}", e);
    let ok = write(
        "barrier_exit.clif",
        "function %k(i64, i32) {\n    fn0 = %ursa_tid_x() -> i32\n    fn1 = %ursa_barrier()\nblock0(v0: i64, v1: i32):\n    v2 = call fn0()\n    v3 = icmp uge v2, v1\n    brif v3, block2, block1\nblock1:\n    call fn1()\n    store v2, v0\n    jump block2\nblock2:\n    return\n}\n",
    );
    let o = ursa(&["compile", "--kernel", &ok, "-o", tmp("ok.o").to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    // A uniform condition (a kernel parameter) is not divergent.
    let uni = write(
        "barrier_uniform.clif",
        "function %k(i64, i32) {\n    fn1 = %ursa_barrier()\nblock0(v0: i64, v1: i32):\n    brif v1, block1, block2\nblock1:\n    call fn1()\n    jump block2\nblock2:\n    store v1, v0\n    return\n}\n",
    );
    let o = ursa(&["compile", "--kernel", &uni, "-o", tmp("uni.o").to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
}

/// Barriers after a divergent loop that some lanes leave by returning, and a
/// barrier at the top of a loop whose body lets lanes return, are accepted
/// at both optimization levels (the lanes that stay meet the same instances
/// of them) and run; a barrier that lanes skip in one pass of a loop and
/// meet in the next, and one at the top of an inner loop that lanes leave
/// to meet it again in the outer loop's next pass, are rejected.
#[test]
fn barriers_after_divergent_loop_exits() {
    let src = |name: &str| format!("{}/../../tests/reconv/{}.clif", env!("CARGO_MANIFEST_DIR"), name);
    let accepted: [(&str, fn(i64) -> i64); 2] = [
        ("barrier_after_loop_exit", |t| if t % 4 == 3 { 0 } else { 100 + (t + 32) % 64 }),
        ("barrier_loop_top_exit", |t| if t % 8 < 5 { t % 8 } else { 104 }),
    ];
    for (name, want) in accepted {
        for level in ["none", "speed"] {
            let obj = tmp(&format!("{}_{}.o", name, level));
            let o = ursa(&["compile", "--kernel", "--opt-level", level, &src(name), "-o", obj.to_str().unwrap()]);
            assert!(o.status.success(), "{} at {}: {}", name, level, stderr(&o));
            let out = launch(obj.to_str().unwrap(), name, 1, 64, &["buf:out=i32[64]", "i32:5"], &[]);
            let want: Vec<i64> = (0..64).map(want).collect();
            assert_eq!(out_values(&out, "out"), want, "{} at {}", name, level);
        }
    }
    for (name, block) in [("barrier_skipped_in_loop", "block2"), ("barrier_inner_loop_top", "block2")] {
        for level in ["none", "speed"] {
            let o = ursa(&["compile", "--kernel", "--opt-level", level, &src(name), "-o", tmp(&format!("{}.o", name)).to_str().unwrap()]);
            assert!(!o.status.success(), "{} compiled at {}", name, level);
            let e = stderr(&o);
            assert!(
                e.contains("CTA barrier `call fn1()`")
                    && e.contains(&format!("in {})", block))
                    && e.contains("in a later pass than the others"),
                "{} at {}: {}",
                name,
                level,
                e
            );
        }
    }
}

/// (issues, lanes, disassembly) of every instruction of function `name`
/// (`.kernel NAME` or `.func NAME`) in the `--profile` table.
fn function_rows(out: &str, name: &str) -> Vec<(u64, u64, String)> {
    let body: String = out
        .lines()
        .skip_while(|l| *l != format!(".kernel {}", name) && *l != format!(".func {}", name))
        .skip(1)
        .take_while(|l| !l.starts_with('.'))
        .map(|l| format!("{}\n", l))
        .collect();
    profile_rows(&format!(".kernel\n{}", body))
}

/// The `--print-after insert_reconvergence` text of `src` compiled with `kernel_args`.
fn reconv_listing(src: &str, kernel_args: &[&str]) -> String {
    let obj = tmp("listing.o");
    let mut args = vec!["compile"];
    args.extend_from_slice(kernel_args);
    args.extend_from_slice(&[src, "--print-after", "insert_reconvergence", "-o", obj.to_str().unwrap()]);
    let o = ursa(&args);
    assert!(o.status.success(), "{}", stderr(&o));
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn reconv_src(name: &str) -> String {
    format!("{}/../../tests/reconv/{}.clif", env!("CARGO_MANIFEST_DIR"), name)
}

/// Twenty divergent loops one after the other, more than the 16 barrier
/// registers: every loop gets a barrier (before, the 4 smallest got none),
/// the ones that follow each other sharing `B0`; results against a host
/// reference, and the tail after the last loop issued once per warp (96
/// times instead of 6 before: the lanes leaving a loop without a barrier
/// ran everything after it alone).
#[test]
fn more_regions_than_barrier_registers() {
    let listing = reconv_listing(&reconv_src("many_regions"), &["--kernel"]);
    assert_eq!(listing.matches("BSSY B").count(), 20, "{}", listing);
    assert_eq!(listing.matches("BSYNC B").count(), 20, "{}", listing);
    assert!(!listing.contains("no convergence barrier"), "{}", listing);
    let obj = kernel("many_regions");
    let (ctas, block) = (3u32, 64u32);
    let n = (ctas * block) as usize;
    let text = launch(&obj, "many_regions", ctas, block, &[&format!("buf:out=i32[{}]", n)], &["--profile"]);
    let got = out_values(&text, "out");
    for i in 0..n {
        let tid = (i as u32 % block) as i32;
        let mut x = i as i32;
        for r in 0..20i32 {
            for k in 0..((tid >> (r % 5)) & 3) {
                x = x.wrapping_mul(3).wrapping_add(k + r);
            }
            x ^= r;
        }
        assert_eq!(got[i], x as i64, "out[{}]", i);
    }
    let rows = profile_rows(&text);
    let last = rows.iter().rposition(|r| r.2.starts_with("BSYNC")).unwrap();
    assert_issues_after(&rows, last, "EXIT", (n / 32) as u64, &text);
}

/// A divergent loop with an early `return` inside it: the lanes that stay
/// meet at the loop's exit (the returned ones count as arrived), so the
/// tail runs once per warp (18 issues instead of 6 before, when such a
/// region got no barrier); the early exit `if (i >= n) return;` stays a
/// predicated `EXIT` without a barrier.
#[test]
fn early_return_inside_a_divergent_loop() {
    let listing = reconv_listing(&reconv_src("early_return_loop"), &["--kernel"]);
    assert!(listing.contains("; no convergence barrier: divergent branch ending block0: an early exit"), "{}", listing);
    assert_eq!(listing.matches("BSSY B").count(), 1, "{}", listing);
    let obj = kernel("early_return_loop");
    let (ctas, block, n) = (3u32, 64u32, 170usize);
    let text = launch_out_n(&obj, "early_return_loop", ctas, block, n);
    let got = out_values(&text, "out");
    let mut tail_warps = std::collections::BTreeSet::new();
    for i in 0..n {
        let tid = (i as u32 % block) as i32;
        let (mut acc, mut k, mut early) = (0i32, 0i32, None);
        while k < (tid & 7) {
            acc = acc.wrapping_add(k).wrapping_add(i as i32);
            if acc & 3 == 3 {
                early = Some(acc.wrapping_neg());
                break;
            }
            k += 1;
        }
        let want = early.unwrap_or_else(|| {
            tail_warps.insert(i / 32);
            (acc.wrapping_mul(3).wrapping_add(i as i32) ^ tid).wrapping_add(k)
        });
        assert_eq!(got[i], want as i64, "out[{}]", i);
    }
    assert_eq!(got[n], 0, "a thread past n wrote");
    assert!(text.contains("@P0 EXIT"), "{}", text);
    let rows = profile_rows(&text);
    let join = rows.iter().position(|r| r.2.starts_with("BSYNC B0")).unwrap_or_else(|| panic!("no BSYNC in\n{}", text));
    assert_issues_after(&rows, join, "EXIT", tail_warps.len() as u64, &text);
}

/// A device function with a divergent loop, called by a kernel: the device
/// function gets its own barrier (`B0`, not held by the caller around the
/// call), leaves it with `BREAK` after the `BSYNC`, and its tail and `RET`
/// issue once per warp (48 times instead of 6 before, when device functions
/// got no barriers); results against a host reference.
/// At `--opt-level none`: the mid-end would inline the device functions.
#[test]
fn divergent_loop_in_a_device_function() {
    let src = reconv_src("device_loop");
    let listing = reconv_listing(&src, &["--opt-level", "none", "--kernel", "call_dev"]);
    assert!(listing.contains("BSSY B0") && listing.contains("BREAK B0"), "{}", listing);
    let obj = tmp("device_loop.o");
    let o = ursa(&["compile", "--opt-level", "none", "--kernel", "call_dev", &src, "-o", obj.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    launch_device_loop(obj.to_str().unwrap());
}

/// Launches `call_dev` of `tests/reconv/device_loop.clif` compiled into
/// `obj` (3 CTAs of 64 threads, n = 170); checks the results against a
/// host reference and that `dev_loop`'s code from its `BSYNC B0` to its
/// `RET` issues once per live warp.
fn launch_device_loop(obj: &str) {
    let (ctas, block, n) = (3u32, 64u32, 170usize);
    let text = launch_out_n(obj, "call_dev", ctas, block, n);
    let got = out_values(&text, "out");
    for i in 0..n {
        let t = (i as u32 % block) as i32;
        let x = i as i32;
        let acc = (0..(t & 7)).fold(0i32, |a, k| a.wrapping_add(k.wrapping_mul(x)));
        assert_eq!(got[i], ((acc.wrapping_mul(3).wrapping_add(x) ^ t).wrapping_add(11)) as i64, "out[{}]", i);
    }
    assert_eq!(got[n], 0, "a thread past n wrote");
    let rows = function_rows(&text, "dev_loop");
    let join = rows.iter().position(|r| r.2.starts_with("BSYNC B0")).unwrap_or_else(|| panic!("no BSYNC in\n{}", text));
    let live_warps = (0..ctas as usize * block as usize / 32).filter(|w| w * 32 < n).count() as u64;
    assert_issues_after(&rows, join, "RET", live_warps, &text);
}

/// A device function that lanes of one warp may run in two groups at once
/// (called on both sides of a divergent branch) gets its barrier all the
/// same (before, it got none): its callers may hold any register, so it
/// saves the one it uses at entry and restores it before `RET`; each lane
/// group has its own instance of the barrier. The kernel's own region keeps
/// `B0` and the results are right.
/// At `--opt-level none`: the mid-end would inline the device functions.
#[test]
fn device_function_run_twice_at_once_saves_its_barrier() {
    let dev = std::fs::read_to_string(reconv_src("device_loop")).unwrap();
    let dev_fn = &dev[dev.find("function %dev_loop").unwrap()..dev.find("function %call_dev").unwrap()];
    let src = write(
        "twice.clif",
        &format!(
            "{}\nfunction %twice(i64) {{\n    fn0 = %ursa_tid_x() -> i32\n    fn3 = %dev_loop(i32, i32) -> i32\nblock0(v0: i64):\n    v1 = call fn0()\n    v2 = iconst.i32 1\n    v3 = band v1, v2\n    brif v3, block1, block2\nblock1:\n    v4 = call fn3(v1, v1)\n    jump block3(v4)\nblock2:\n    v5 = iconst.i32 5\n    v6 = call fn3(v5, v1)\n    jump block3(v6)\nblock3(v7: i32):\n    v8 = uextend.i64 v1\n    v9 = iconst.i64 2\n    v10 = ishl v8, v9\n    v11 = iadd v0, v10\n    store aligned v7, v11\n    return\n}}\n",
            dev_fn
        ),
    );
    let listing = reconv_listing(&src, &["--opt-level", "none", "--kernel", "twice"]);
    assert!(!listing.contains("no convergence barrier: divergent branch ending block1"), "{}", listing);
    assert_eq!(listing.matches("BSSY B").count(), 2, "the kernel's region and the device function's:\n{}", listing);
    assert_eq!(listing.matches("BMOV.CLEAR R").count(), 1, "{}", listing);
    let obj = tmp("twice.o");
    let o = ursa(&["compile", "--opt-level", "none", "--kernel", "twice", &src, "-o", obj.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let got = out_values(&launch(obj.to_str().unwrap(), "twice", 1, 64, &["buf:out=i32[64]"], &[]), "out");
    for t in 0..64i32 {
        let x = if t & 1 != 0 { t } else { 5 };
        let acc = (0..(t & 7)).fold(0i32, |a, k| a.wrapping_add(k.wrapping_mul(x)));
        assert_eq!(got[t as usize], ((acc.wrapping_mul(3).wrapping_add(x) ^ t).wrapping_add(11)) as i64, "out[{}]", t);
    }
}

/// A CTA barrier reached through calls (kernel -> %outer -> %inner ->
/// %ursa_barrier) from divergent control flow (the lanes that skip the call
/// go on to the join: before, this compiled and could deadlock) is a compile
/// error naming the call and the chain; the same call under a uniform branch
/// compiles and runs.
/// At `--opt-level none`: the mid-end would inline the device functions.
#[test]
fn barrier_through_calls_in_divergent_flow() {
    let callees = "function %inner(i64, i32) {\n    fn0 = %ursa_barrier()\nblock0(v0: i64, v1: i32):\n    call fn0()\n    store aligned v1, v0\n    return\n}\n\nfunction %outer(i64, i32) {\n    fn0 = %inner(i64, i32)\nblock0(v0: i64, v1: i32):\n    call fn0(v0, v1)\n    return\n}\n\n";
    let kernel_text = |cond: &str| {
        format!(
            "{}function %k(i64, i32) {{\n    fn0 = %ursa_tid_x() -> i32\n    fn1 = %outer(i64, i32)\nblock0(v0: i64, v1: i32):\n    v2 = call fn0()\n    v3 = iconst.i32 16\n    v4 = icmp ult {}, v3\n    brif v4, block1, block2\nblock1:\n    v5 = uextend.i64 v2\n    v6 = iconst.i64 2\n    v7 = ishl v5, v6\n    v8 = iadd v0, v7\n    call fn1(v8, v2)\n    jump block2\nblock2:\n    v9 = uextend.i64 v2\n    v10 = iconst.i64 2\n    v11 = ishl v9, v10\n    v12 = iadd v0, v11\n    v13 = iconst.i32 1000\n    v14 = iadd v2, v13\n    store aligned v14, v12+256\n    return\n}}\n",
            callees, cond
        )
    };
    let bad = write("barrier_call_div.clif", &kernel_text("v2"));
    // Inlined (the default level), the barrier is the kernel's own and is
    // refused all the same.
    let o = ursa(&["compile", "--kernel", "k", &bad, "-o", tmp("bad_call_inlined.o").to_str().unwrap()]);
    assert!(!o.status.success() && stderr(&o).contains("inside divergent control flow"), "{}", stderr(&o));
    let o = ursa(&["compile", "--opt-level", "none", "--kernel", "k", &bad, "-o", tmp("bad_call.o").to_str().unwrap()]);
    assert!(!o.status.success(), "a barrier reached through calls from divergent flow compiled");
    let e = stderr(&o);
    assert!(e.contains("function %k") && e.contains("the call `call fn1(v8, v2)`") && e.contains("block1"), "{}", e);
    assert!(
        e.contains("reaches a CTA barrier (%outer -> %inner -> %ursa_barrier)") && e.contains("inside divergent control flow"),
        "{}",
        e
    );
    // A device function that calls %outer from divergent flow is rejected
    // the same way (its lanes that skip it return to the caller).
    let dev = write(
        "barrier_call_dev.clif",
        &format!("{}function %mid(i64, i32) {{\n    fn1 = %outer(i64, i32)\nblock0(v0: i64, v1: i32):\n    brif v1, block1, block2\nblock1:\n    call fn1(v0, v1)\n    jump block2\nblock2:\n    return\n}}\n", callees),
    );
    let o = ursa(&["compile", "--opt-level", "none", &dev, "-o", tmp("bad_dev.o").to_str().unwrap()]);
    assert!(!o.status.success());
    let e = stderr(&o);
    assert!(e.contains("function %mid") && e.contains("(%outer -> %inner -> %ursa_barrier)"), "{}", e);
    // On a kernel parameter (uniform), the call is fine. (Not launched: a
    // kernel calling a device function that itself calls needs the callee's
    // frame, which the launch does not reserve yet.)
    let ok = write("barrier_call_uni.clif", &kernel_text("v1"));
    let o = ursa(&["compile", "--opt-level", "none", "--kernel", "k", &ok, "-o", tmp("ok_call.o").to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
}

/// The rows of `rows` from each `BSYNC` on: the first instruction after it
/// (and after the `BREAK`, `BMOV` and `BSSY` that may follow it) with its
/// issue count.
fn after_joins(rows: &[(u64, u64, String)]) -> Vec<(u64, String)> {
    let mut out = Vec::new();
    for (i, r) in rows.iter().enumerate().filter(|(_, r)| r.2.starts_with("BSYNC")) {
        let next = rows[i + 1..].iter().find(|x| !["BSYNC", "BREAK", "BMOV", "BSSY"].iter().any(|p| x.2.starts_with(p)));
        if let Some(x) = next {
            out.push((x.0, format!("{} (after {})", x.2, r.2)));
        }
    }
    out
}

/// Eighteen nested divergent loops (`tests/reconv/deep_nest.clif`), two more
/// than the barrier registers: every loop gets a region, the two innermost
/// borrowing `B0` (`BMOV.CLEAR` at the setup, `BMOV` back after the join;
/// before, they got none); results against a host reference, and every
/// instruction after a join (each loop exit's `x * 3 + r`) issues once per
/// warp (before, the innermost exits issued 8 and 12 times for 4 warps: the
/// lanes leaving those loops ran on one group at a time).
#[test]
fn more_than_sixteen_nested_regions_borrow_a_register() {
    let src = reconv_src("deep_nest");
    let listing = reconv_listing(&src, &["--kernel"]);
    assert!(!listing.contains("no convergence barrier"), "{}", listing);
    assert_eq!(listing.matches("BSSY B").count(), 18, "{}", listing);
    assert_eq!(listing.matches("BMOV.CLEAR R").count(), 2, "{}", listing);
    assert_eq!(listing.matches("BMOV B0, R").count(), 2, "{}", listing);
    let obj = kernel("deep_nest");
    let (ctas, block) = (2u32, 64u32);
    let n = (ctas * block) as usize;
    let text = launch_out(&obj, "deep_nest", ctas, block);
    let got = out_values(&text, "out");
    fn level(r: i32, m: i32, x: i32) -> i32 {
        let x = if m > r {
            if r == 17 {
                x.wrapping_add(1000)
            } else {
                level(r + 1, m, x)
            }
        } else {
            x
        };
        x.wrapping_mul(3).wrapping_add(r)
    }
    for i in 0..n {
        let tid = (i as u32 % block) as i32;
        assert_eq!(got[i], (level(0, tid & 31, tid) ^ 0x55) as i64, "out[{}]", i);
    }
    let rows = profile_rows(&text);
    let warps = (n / 32) as u64;
    let joins = after_joins(&rows);
    assert_eq!(joins.len(), 18, "{}", text);
    for (issues, what) in &joins {
        assert_eq!(*issues, warps, "`{}`:\n{}", what, text);
    }
}

/// A recursive device function with a divergent loop
/// (`tests/reconv/recursive.clif`; before, a function that calls itself got
/// no barriers): it saves `B0` at entry and restores it before `RET`, and
/// every instruction after its joins issues once per warp and activation
/// (6 warps, 4 activations each: 24; before, the loop's tail issued 138
/// times and the `RET` 192); results against a host reference.
#[test]
fn recursive_device_function_reconverges() {
    let src = reconv_src("recursive");
    let listing = reconv_listing(&src, &["--kernel", "call_rec"]);
    let rec = &listing[..listing
        .find("; after insert_reconvergence\n; no convergence barrier: divergent branch ending block0: an early exit")
        .unwrap_or(listing.len())];
    assert!(!rec.contains("no convergence barrier"), "{}", listing);
    assert_eq!(rec.matches("BSSY B0").count(), 2, "{}", listing);
    assert!(rec.contains("BMOV.CLEAR R") && rec.contains("BMOV B0, R"), "{}", listing);
    let obj = tmp("recursive.o");
    let o = ursa(&["compile", "--kernel", "call_rec", &src, "-o", obj.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let (ctas, block, n) = (3u32, 64u32, 170usize);
    let text = launch_out_n(obj.to_str().unwrap(), "call_rec", ctas, block, n);
    let got = out_values(&text, "out");
    fn host(x: i32, t: i32, d: i32) -> i32 {
        let acc = (0..(t & 7)).fold(0i32, |a, k| a.wrapping_add(k.wrapping_mul(x)));
        let r = (acc.wrapping_mul(3).wrapping_add(x)) ^ t;
        if d > 0 {
            r.wrapping_add(host(r, t, d - 1))
        } else {
            r
        }
    }
    for i in 0..n {
        let t = (i as u32 % block) as i32;
        assert_eq!(got[i], host(i as i32, t, 3) as i64, "out[{}]", i);
    }
    assert_eq!(got[n], 0, "a thread past n wrote");
    let rows = function_rows(&text, "rec");
    let live_warps = (0..ctas as usize * block as usize / 32).filter(|w| w * 32 < n).count() as u64;
    let joins = after_joins(&rows);
    assert_eq!(joins.len(), 2, "{}", text);
    for (issues, what) in &joins {
        assert_eq!(*issues, 4 * live_warps, "`{}`:\n{}", what, text);
    }
    let ret = rows.iter().find(|r| r.2.starts_with("RET")).unwrap();
    assert_eq!(ret.0, 4 * live_warps, "{}", text);
}

/// A device function compiled alone (the compile API without the module's
/// facts, as `ursa test` does): it gets its region all the same (before, it
/// got none), saving the register it uses since any caller may hold it; the
/// kernel compiled alone too and both put in one object, the device
/// function's tail and `RET` issue once per warp.
#[test]
fn device_function_compiled_alone_gets_regions() {
    let text = std::fs::read_to_string(reconv_src("device_loop")).unwrap();
    let funcs = cranelift_reader::parse_functions(&text).unwrap();
    let mut obj = ursa_emit::elf::Object::default();
    let mut listing = String::new();
    for f in &funcs {
        let kernel = f.name.to_string() == "%call_dev";
        let opts = ursa_backend::Options { kernel, print_after: vec![ursa_backend::Pass::insert_reconvergence], ..Default::default() };
        assert!(opts.module.is_none());
        let c = ursa_backend::compile(f, &opts).unwrap();
        if !kernel {
            listing = c.printed.clone();
        }
        obj.functions.push(c.function);
    }
    assert!(!listing.contains("no convergence barrier"), "{}", listing);
    assert!(
        listing.contains("BMOV.CLEAR R") && listing.contains("BSSY B0") && listing.contains("BSYNC B0") && listing.contains("BMOV B0, R"),
        "{}",
        listing
    );
    let path = tmp("device_alone.o");
    std::fs::write(&path, ursa_emit::elf::write(&obj)).unwrap();
    launch_device_loop(path.to_str().unwrap());
}
