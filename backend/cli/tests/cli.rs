//! The `ursa` command line: the assemble/disassemble round trip and clear
//! errors with a non-zero exit on bad input.

mod common;
use common::*;

#[test]
fn asm_disasm_asm_gives_identical_objects() {
    let src = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/saxpy_int.s");
    let (a, s, b) = (tmp("a.o"), tmp("a.s"), tmp("b.o"));
    let o = ursa(&["asm", src, "-o", a.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let o = ursa(&["disasm", a.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    std::fs::write(&s, &o.stdout).unwrap();
    let o = ursa(&["asm", s.to_str().unwrap(), "-o", b.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(std::fs::read(&a).unwrap(), std::fs::read(&b).unwrap());
}

#[test]
fn disasm_hex_words() {
    // IADD R0, R1, R2 (see emit/tests/hand_encoded.rs).
    let o = ursa(&["disasm", "--hex", "0x01007520", "00000002", "0", "0x00E01C3C"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(String::from_utf8_lossy(&o.stdout).trim(), "IADD R0, R1, R2 ;");
}

#[test]
fn bad_inputs_fail_cleanly() {
    let bad = tmp("bad.s");
    std::fs::write(&bad, "IADD R0, R1\nFOO R1\n").unwrap();
    let o = ursa(&["asm", bad.to_str().unwrap()]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("bad.s:1:"), "{}", stderr(&o));

    let notelf = tmp("x.o");
    std::fs::write(&notelf, b"garbage").unwrap();
    let o = ursa(&["disasm", notelf.to_str().unwrap()]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("invalid object"), "{}", stderr(&o));

    let o = ursa(&["disasm", "--hex", "ff", "0", "0", "0"]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("unknown optype"), "{}", stderr(&o));

    let o = ursa(&["disasm", "--hex", "zz"]);
    assert!(!o.status.success());
    let o = ursa(&["isa", "NOPE_RR"]);
    assert!(!o.status.success());
    let o = ursa(&["disasm", "/nonexistent/file.o"]);
    assert!(!o.status.success());
}

#[test]
fn isa_lists_every_form() {
    let o = ursa(&["isa"]);
    assert!(o.status.success());
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.lines().count() >= 222);
    assert!(text.lines().any(|l| l.starts_with("IADD_RR ")));
    let o = ursa(&["isa", "IADD_RR"]);
    assert!(String::from_utf8_lossy(&o.stdout).contains("[ 39: 32] rb"));
}

#[test]
fn run_vector_add_kernel() {
    let obj = vadd_object("vadd.o");
    let o = run_vadd(&obj, &["--out", "out", "--stats"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("out = [11, 22, 33, 44, 55, 66, -63]"), "{}", out);
    assert!(out.contains("instructions issued:"), "{}", out);

    // An out-of-bounds access is a trap report and a failing exit, not a panic.
    let o = ursa(&[
        "run",
        obj.to_str().unwrap(),
        "--kernel",
        "vadd",
        "--block",
        "8",
        "--arg",
        "buf:a=i32[2]",
        "--arg",
        "buf:b=i32[2]",
        "--arg",
        "buf:out=i32[2]",
        "--arg",
        "u32:8",
    ]);
    assert!(!o.status.success());
    let e = stderr(&o);
    assert!(e.contains("out-of-bounds") && e.contains("lane 2") && e.contains("LDG"), "{}", e);

    let o = ursa(&["run", obj.to_str().unwrap(), "--kernel", "vadd", "--grid", "0"]);
    assert!(!o.status.success());
}

/// The figure before `name` in a `--stats` line (`..., 51 spills, ...`).
fn stat(line: &str, name: &str) -> u32 {
    let at = line.find(&format!(" {}", name)).unwrap_or_else(|| panic!("no `{}` in {}", name, line));
    line[..at].rsplit(|c: char| !c.is_ascii_digit()).next().unwrap().parse().unwrap()
}

#[test]
fn high_pressure_uses_the_whole_register_file() {
    // regalloc2 has 63 registers per class; spill slots become registers
    // while the values fit in R0-R254 (docs/regalloc.md). At `none`, so the
    // values stay live together as written (at `speed` the scheduler
    // interleaves the chains and needs fewer registers).
    let src = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/filetests/memory/whole_file.clif");
    let o = ursa(&["compile", "--opt-level", "none", "--stats", src, "-o", tmp("whole_file.o").to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let e = stderr(&o);
    let line = |f: &str| e.lines().find(|l| l.starts_with(f)).unwrap_or_else(|| panic!("no {} in {}", f, e)).to_string();
    // 110 live i64 values (220 registers): no local memory at all.
    let l = line("%live_110_i64:");
    assert_eq!((stat(&l, "spills"), stat(&l, "reloads"), stat(&l, "bytes stack")), (0, 0, 0), "{}", l);
    assert!(stat(&l, "registers") > 220, "{}", l);
    // 300 live i32 values exceed the file: at least 300 - 253 must stay in
    // memory (239 did with regalloc2's 63 registers alone), not many more.
    let l = line("%live_300_i32:");
    let spills = stat(&l, "spills");
    assert!((47..=60).contains(&spills), "{}", l);
    assert!(stat(&l, "registers") <= 255, "{}", l);
    // Beside the count (highest R + 1), ptxas -v's figure for such code
    // (highest R + 3, docs/performance.md section 3).
    for f in ["%live_110_i64:", "%live_300_i32:"] {
        let l = line(f);
        let regs = stat(&l, "registers");
        assert!(l.contains(&format!("(R0-R{}; ptxas -v would say {})", regs - 1, regs + 2)), "{}", l);
    }
}

/// `ursa asm --auto-control`: hand-written assembly without control bits
/// runs under `--strict` once the compiler's `calc_instr_deps` filled them
/// (and traps on a hazard without them).
#[test]
fn auto_control_output_passes_strict_mode() {
    let src = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/vadd.s");
    let (bare, auto) = (tmp("vadd_bare.o"), tmp("vadd_auto.o"));
    let run = |obj: &std::path::Path| {
        ursa(&[
            "run",
            obj.to_str().unwrap(),
            "--kernel",
            "vadd",
            "--grid",
            "2",
            "--block",
            "32",
            "--arg",
            "buf:a=i32:1,2,3,4,5,6,7,8,9,10",
            "--arg",
            "buf:b=i32:10,20,30,40,50,60,70,80,90,100",
            "--arg",
            "buf:out=i32[10]",
            "--arg",
            "i32:10",
            "--out",
            "out",
            "--strict",
        ])
    };
    let o = ursa(&["asm", src, "-o", bare.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let o = run(&bare);
    assert!(!o.status.success(), "without control bits the strict run should find a hazard");
    let o = ursa(&["asm", "--auto-control", src, "-o", auto.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let o = run(&auto);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(String::from_utf8_lossy(&o.stdout).trim(), "out = [11, 22, 33, 44, 55, 66, 77, 88, 99, 110]");
}

/// `--fminmax-nan` chooses the NaN of `fmin`/`fmax` (docs/float.md); a
/// file's `; ursa.fminmax_nan` line wins; an unknown rule is refused with
/// the line named.
#[test]
fn fminmax_nan_rule_from_flag_and_file() {
    let src = "function %f(f32, f32) -> f32 {\nblock0(v0: f32, v1: f32):\n    v2 = fmin v0, v1\n    return v2\n}\n";
    let (clif, obj) = (tmp("fminmax.clif"), tmp("fminmax.o"));
    let compile = |text: &str, flags: &[&str]| {
        std::fs::write(&clif, text).unwrap();
        let mut args = vec!["compile", clif.to_str().unwrap(), "-o", obj.to_str().unwrap(), "-S"];
        args.extend_from_slice(flags);
        ursa(&args)
    };
    let disasm = |o: &std::process::Output| String::from_utf8_lossy(&o.stdout).into_owned();
    let o = compile(src, &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(disasm(&o).contains("SEL") && !disasm(&o).contains("FMNMX.NAN"), "{}", disasm(&o));
    let o = compile(src, &["--fminmax-nan", "first-operand"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(disasm(&o).contains("FMNMX.NAN") && !disasm(&o).contains("SEL"), "{}", disasm(&o));
    let o = compile(&format!("; ursa.fminmax_nan first-operand\n{}", src), &["--fminmax-nan", "canonical"]);
    assert!(o.status.success() && disasm(&o).contains("FMNMX.NAN"), "{}", disasm(&o));
    let o = compile(&format!("\n; ursa.fminmax_nan arm\n{}", src), &[]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("fminmax.clif:2: `ursa.fminmax_nan arm`: no such rule"), "{}", stderr(&o));
    let o = compile(src, &["--fminmax-nan", "arm"]);
    assert!(!o.status.success());
}

/// `ursa compile` reads a Cranelift runtest as `ursa test` does: its
/// `target` lines are set aside, so a `set` between two of them is a flag,
/// not the reader's "dangling 'set'" error, and an error later in the file
/// still names its own line.
#[test]
fn compile_reads_runtest_headers_as_test_does() {
    let header = "test run\ntarget x86_64\nset enable_multi_ret_implicit_sret\ntarget aarch64\n\n";
    let src = format!("{}function %f(i32) -> i32 {{\nblock0(v0: i32):\n    v1 = iadd v0, v0\n    return v1\n}}\n", header);
    let (clif, obj) = (tmp("runtest_header.clif"), tmp("runtest_header.o"));
    std::fs::write(&clif, &src).unwrap();
    let o = ursa(&["compile", clif.to_str().unwrap(), "-o", obj.to_str().unwrap(), "-S"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(String::from_utf8_lossy(&o.stdout).contains("IADD"), "{}", String::from_utf8_lossy(&o.stdout));
    let o = ursa(&["test", clif.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let bad = format!("{}function %g(i32) -> i32 {{\nblock0(v0: i32):\n    v1 = frobnicate v0\n    return v1\n}}\n", header);
    std::fs::write(&clif, bad).unwrap();
    let o = ursa(&["compile", clif.to_str().unwrap(), "-o", obj.to_str().unwrap()]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("runtest_header.clif:8:"), "{}", stderr(&o));
}

#[test]
fn dash_output_is_standard_output() {
    // `-o -` writes the object to standard output (the bytes a file gets),
    // and no file named `-`; beside `-S` (text on standard output too) it
    // is refused.
    let src =
        write("dash.clif", "function %f(i32) -> i32 {\nblock0(v0: i32):\n    v1 = iconst.i32 1\n    v2 = iadd v0, v1\n    return v2\n}\n");
    let dir = std::path::Path::new(&src).parent().unwrap().to_path_buf();
    let file = tmp("dash_file.o");
    let o = ursa(&["compile", &src, "-o", file.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_ursa")).current_dir(&dir).args(["compile", &src, "-o", "-"]).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(o.stdout, std::fs::read(&file).unwrap());
    assert!(!dir.join("-").exists(), "a file named `-` was written");
    let o = ursa(&["compile", &src, "-o", "-", "-S"]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("-o - writes the object to standard output"), "{}", stderr(&o));

    let asm = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/saxpy_int.s");
    let a = tmp("dash_asm.o");
    let o = ursa(&["asm", asm, "-o", a.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let o = ursa(&["asm", asm, "-o", "-"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(o.stdout, std::fs::read(&a).unwrap());
}
