//! Differential test of the interpreter's fast paths (`LaunchConfig::engine`:
//! full-warp threaded code, the issue loop's inner loop for full warps, and
//! translation to host code, which applies to one-lane CTAs only).
//! Generated programs (random ALU instructions over per-lane data, guards
//! and predicates that split warps, forward branches that diverge, uniform
//! loops, random stall counts and yields) and the benchmark kernels run with
//! every engine, with and without a profile; memory,
//! traps and statistics (cycles, per-form counts, the profile) must be
//! identical. The compiled example kernels get the same treatment in
//! `tests/tests/fast_paths_kernels.rs`.

mod common;

use common::{bench_kernel, load};
use ursa_sim::{Arg, Engine, Gpu, LaunchConfig, Program, Stats, Trap};

/// The engines compared: the interpreter alone (the reference), then each
/// fast path added to the ones before (the last is the default).
const MODES: [Engine; 4] = [Engine::Interpreter, Engine::Threaded, Engine::IssueLoop, Engine::Jit];

/// xorshift64*: a small deterministic generator for the programs.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    fn pick<'a>(&mut self, xs: &[&'a str]) -> &'a str {
        xs[self.below(xs.len() as u64) as usize]
    }
    fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }
}

/// Data registers of the generated programs (R16 counts loops).
const REGS: std::ops::Range<u64> = 4..16;

fn reg(r: &mut Rng) -> String {
    format!("R{}", REGS.start + r.below(REGS.end - REGS.start))
}

/// A 64-bit register pair of the data registers.
fn pair(r: &mut Rng) -> String {
    let lo = REGS.start + 2 * r.below((REGS.end - REGS.start) / 2);
    format!("R[{}:{}]", lo, lo + 1)
}

/// A predicate the body may read or write (P4 belongs to the loops).
fn pred(r: &mut Rng) -> String {
    format!("P{}", r.below(4))
}

fn not_pred(r: &mut Rng) -> String {
    format!("{}{}", if r.chance(30) { "!" } else { "" }, pred(r))
}

/// A 32-bit value: small, an edge, a float pattern or any bits.
fn imm(r: &mut Rng) -> String {
    let v = match r.below(5) {
        0 => r.below(40) as u32,
        1 => *[0u32, 1, 31, 32, 0x7fff_ffff, 0x8000_0000, 0xffff_ffff].get(r.below(7) as usize).unwrap(),
        2 => *[0x3f80_0000u32, 0xbf80_0000, 0x7f80_0000, 0xff80_0000, 0x7fc0_0000, 0x0000_0001, 0x8000_0000, 0x4049_0fdb]
            .get(r.below(8) as usize)
            .unwrap(),
        _ => r.next() as u32,
    };
    format!("0x{:x}", v)
}

/// SrcB: a register, RZ, an immediate or a constant of bank 0 (launch
/// dimensions).
fn src(r: &mut Rng) -> String {
    match r.below(6) {
        0 => "RZ".into(),
        1 | 2 => imm(r),
        3 => format!("c[0x0][0x{:x}]", 4 * r.below(7)),
        _ => reg(r),
    }
}

/// Random sign modifiers on a register operand (immediates take none).
fn fmods(r: &mut Rng, x: String) -> String {
    if !x.starts_with('R') {
        return x;
    }
    let x = if r.chance(20) { format!("|{}|", x) } else { x };
    if r.chance(25) {
        format!("-{}", x)
    } else {
        x
    }
}

/// A float SrcB with random sign modifiers.
fn fsrc(r: &mut Rng) -> String {
    let x = src(r);
    fmods(r, x)
}

fn rnd(r: &mut Rng) -> &'static str {
    if r.chance(80) {
        ""
    } else {
        r.pick(&[".RZ", ".RM", ".RP", ".RN"])
    }
}

/// One random ALU instruction (without guard or control bits).
fn alu(r: &mut Rng) -> String {
    // A negation, sometimes (of registers: wide immediates cannot be negated).
    let n = |r: &mut Rng, x: String| if x.starts_with('R') && r.chance(25) { format!("-{}", x) } else { x };
    let (d, a) = (reg(r), reg(r));
    match r.below(17) {
        0 | 1 => {
            let (a, b) = (n(r, a), src(r));
            format!("IADD {}, {}, {}", d, a, n(r, b))
        }
        2 => {
            let (p, a, b) = (pred(r), n(r, a), src(r));
            format!("IADD {}, {}, {}, {}", d, p, a, n(r, b))
        }
        3 => format!("IADD.X {}, {}, {}, {}, {}", d, pred(r), a, reg(r), pred(r)),
        4 | 5 => {
            let u = if r.chance(50) { ".U32" } else { "" };
            // One of SrcB, SrcC may be other than a register.
            let (b, c) = if r.chance(50) { (src(r), reg(r)) } else { (reg(r), src(r)) };
            format!("IMAD{} {}, {}, {}, {}", u, d, a, b, n(r, c))
        }
        6 => {
            let u = if r.chance(50) { ".U32" } else { "" };
            let (dd, b, c) = (pair(r), src(r), pair(r));
            format!("IMAD.WIDE{} {}, {}, {}, {}", u, dd, a, b, n(r, c))
        }
        7 => format!("LOP3.LUT {}, {}, {}, {}, 0x{:x}, !PT", d, a, src(r), reg(r), r.below(256)),
        8 => format!("LOP3.LUT {}, {}, {}, {}, {}, 0x{:x}, PT", pred(r), d, a, src(r), reg(r), r.below(256)),
        9 => {
            let dir = if r.chance(50) { ".L" } else { ".R" };
            let ty = if dir == ".L" { r.pick(&[".U32", ".U64"]) } else { r.pick(&[".U32", ".S32", ".U64", ".S64"]) };
            let hi = if r.chance(50) { ".HI" } else { "" };
            let w = if r.chance(30) { ".W" } else { "" };
            let b = if r.chance(70) { format!("0x{:x}", r.below(70)) } else { reg(r) };
            format!("SHF{}{}{}{} {}, {}, {}, {}", dir, w, ty, hi, d, a, b, reg(r))
        }
        10 => format!("MOV {}, {}", d, src(r)),
        11 => {
            let cmp = r.pick(&["EQ", "NE", "LT", "LE", "GT", "GE"]);
            let u = if r.chance(50) { ".U32" } else { "" };
            let bop = r.pick(&["AND", "OR", "XOR"]);
            format!("ISETP.{}{}.{} {}, {}, {}, {}, {}", cmp, u, bop, pred(r), pred(r), a, src(r), not_pred(r))
        }
        12 => format!("SEL {}, {}, {}, {}", d, a, src(r), not_pred(r)),
        13 => format!("IMNMX{} {}, {}, {}, {}", if r.chance(50) { ".U32" } else { "" }, d, a, src(r), not_pred(r)),
        14 => {
            let op = r.pick(&["FADD", "FMUL"]);
            format!("{}{} {}, {}, {}", op, rnd(r), d, fmods(r, a), fsrc(r))
        }
        15 => {
            let (b, c) = if r.chance(50) { (src(r), reg(r)) } else { (reg(r), src(r)) };
            format!("FFMA{} {}, {}, {}, {}", rnd(r), d, fmods(r, a), fmods(r, b), fmods(r, c))
        }
        _ => {
            if r.chance(50) {
                let nan = if r.chance(50) { ".NAN" } else { "" };
                format!("FMNMX{} {}, {}, {}, {}", nan, d, fmods(r, a), fsrc(r), not_pred(r))
            } else {
                let cmp = r.pick(&["EQ", "NE", "LT", "LE", "GT", "GE", "EQU", "NEU", "LTU", "LEU", "GTU", "GEU", "NAN", "NUM"]);
                let bop = r.pick(&["AND", "OR", "XOR"]);
                format!("FSETP.{}.{} {}, {}, {}, {}, {}", cmp, bop, pred(r), pred(r), fmods(r, a), fsrc(r), not_pred(r))
            }
        }
    }
}

/// An ALU instruction line, sometimes guarded, with random control bits.
fn line(r: &mut Rng) -> String {
    let guard = if r.chance(25) { format!("@{} ", not_pred(r)) } else { String::new() };
    let stall = if r.chance(50) { format!(" &stall={}", r.below(16)) } else { String::new() };
    let y = if r.chance(5) { " &yield" } else { "" };
    format!("{}{}{}{} ;\n", guard, alu(r), stall, y)
}

/// A kernel of random blocks; each thread stores R4–R15 and P0–P3.
fn program(seed: u64) -> String {
    let mut r = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
    let mut s = String::from(".kernel k\n.param out, 8\n    S2R R0, SR_TID_X ;\n    S2R R1, SR_CTAID_X ;\n");
    for x in REGS {
        s += &format!("    MOV R{0}, {1} ;\n    IMAD R{0}, R0, {2}, R{0} ;\n", x, imm(&mut r), imm(&mut r));
        if r.chance(40) {
            // Moderate floats: clear the top exponent bit.
            s += &format!("    LOP3.LUT R{0}, R{0}, 0xbfffffff, RZ, 0xc0, !PT ;\n", x);
        }
    }
    for p in 0..4 {
        s += &format!("    ISETP.LT.U32.AND P{}, PT, {}, {}, PT ;\n", p, reg(&mut r), reg(&mut r));
    }
    let mut label = 0;
    for _ in 0..3 + r.below(4) {
        match r.below(4) {
            0 => {
                // A forward branch: some lanes skip a few instructions.
                s += &format!("@{} BRA L_{} ;\n", not_pred(&mut r), label);
                for _ in 0..1 + r.below(5) {
                    s += &line(&mut r);
                }
                s += &format!("L_{}:\n", label);
                label += 1;
            }
            1 => {
                // A uniform loop.
                s += &format!("    MOV R16, 0x{:x} ;\nL_{}:\n", 1 + r.below(6), label);
                for _ in 0..2 + r.below(8) {
                    s += &line(&mut r);
                }
                s += &format!("    IADD R16, R16, -0x1 ;\n    ISETP.NE.AND P4, PT, R16, RZ, PT ;\n@P4 BRA L_{} ;\n", label);
                label += 1;
            }
            _ => {
                for _ in 0..2 + r.below(10) {
                    s += &line(&mut r);
                }
            }
        }
    }
    s += "    IMAD R17, R1, c[0x0][0x0], R0 ;\n    MOV.64 R[2:3], c[0x0][0x160] ;\n    IMAD.WIDE.U32 R[2:3], R17, 0x40, R[2:3] ;\n";
    for (i, x) in REGS.enumerate() {
        s += &format!("    STG [R[2:3]+0x{:x}], R{} ;\n", 4 * i, x);
    }
    for p in 0..4 {
        s += &format!("    SEL R18, RZ, 0x1, !P{} ;\n    STG [R[2:3]+0x{:x}], R18 ;\n", p, 4 * (12 + p));
    }
    s + "    EXIT ;\n"
}

/// What a launch did: its result and the output buffer.
type Outcome = (Result<Stats, Trap>, Vec<u8>);

/// The arguments after `out`, given the address of an input buffer of
/// `out_bytes` bytes holding a pattern.
type Extra<'a> = &'a (dyn Fn(u64) -> Vec<Arg> + Sync);

fn launch(prog: &Program, cfg: &LaunchConfig, out_bytes: u64, extra: Extra) -> Outcome {
    let mut gpu = Gpu::new();
    let out = gpu.alloc(out_bytes, 16);
    let input = gpu.alloc(out_bytes, 16);
    let pattern: Vec<u8> = (0..out_bytes).map(|i| (i * 7 + 3) as u8).collect();
    gpu.write(input, &pattern).expect("write");
    let mut args = vec![Arg::Ptr(out)];
    args.extend(extra(input));
    let res = gpu.launch(prog, "k", cfg, &args);
    (res, gpu.read(out, out_bytes).expect("read"))
}

/// Runs `prog` in every mode, with and without a profile, and checks that
/// each outcome equals the reference's (the interpreter alone).
fn compare(what: &str, src: &str, prog: &Program, cfg: &LaunchConfig, out_bytes: u64, extra: Extra) {
    for profile in [false, true] {
        let run = |engine| launch(prog, &LaunchConfig { engine, profile, ..cfg.clone() }, out_bytes, extra);
        let reference = run(MODES[0]);
        for &mode in &MODES[1..] {
            let got = run(mode);
            assert!(got.1 == reference.1, "{}: memory differs with {:?} (profile {})\n{}", what, mode, profile, src);
            assert_eq!(got.0, reference.0, "{}: result differs with {:?} (profile {})\n{}", what, mode, profile, src);
        }
    }
}

#[test]
fn generated_programs_agree_with_and_without_fast_paths() {
    // Two CTAs of 80 threads: two full warps and a partial one each.
    let cfg = LaunchConfig { grid: [2, 1, 1], block: [80, 1, 1], jit_threshold: 1, ..Default::default() };
    let mut issued = 0;
    let mut full = 0;
    for seed in 0..200 {
        let src = program(seed);
        let prog = load(&src);
        compare(&format!("program {}", seed), &src, &prog, &cfg, 160 * 64, &|_| vec![]);
        let s = launch(&prog, &cfg, 160 * 64, &|_| vec![]).0.unwrap_or_else(|t| panic!("program {} traps: {}\n{}", seed, t, src));
        issued += s.instructions;
        full += s.lane_instructions;
    }
    // The programs must exercise both full and split warps.
    eprintln!("{} lane-instructions in {} issues", full, issued);
    assert!(full > 20 * issued && full < 31 * issued, "lane-instructions {} of {} issues", full, issued);
}

/// The benchmark kernels, and a step limit that strikes in the middle of a
/// full warp's run of threaded code.
#[test]
fn bench_kernels_and_step_limits_agree() {
    // Three CTAs of 96 threads; the memory kernel steps its addresses by
    // 8 KiB per iteration.
    let cfg = LaunchConfig { grid: [3, 1, 1], block: [96, 1, 1], jit_threshold: 1, ..Default::default() };
    let iters = |_| vec![Arg::U32(37)];
    let memory = |input| vec![Arg::Ptr(input), Arg::U32(5)];
    for (name, extra) in [("KERNEL", &iters as Extra), ("FLOAT_KERNEL", &iters), ("MEMORY_KERNEL", &memory)] {
        let src = bench_kernel(name);
        let prog = load(&src);
        let bytes = 48 << 10;
        compare(name, &src, &prog, &cfg, bytes, extra);
        // A launch stopped by the step limit leaves global memory as the CTAs
        // run so far left it; with CTAs on several threads, later CTAs of the
        // round may have run too (docs/performance.md, "All cores"), so
        // memory is compared on one thread, where it is deterministic.
        let one = rayon::ThreadPoolBuilder::new().num_threads(1).build().expect("pool");
        for limit in [1, 50, 777, 2_000] {
            let cfg = LaunchConfig { step_limit: Some(limit), ..cfg.clone() };
            one.install(|| compare(&format!("{} with step limit {}", name, limit), &src, &prog, &cfg, bytes, extra));
        }
    }
}
