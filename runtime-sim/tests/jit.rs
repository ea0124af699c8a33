//! The translation of one-lane code to host code (runtime-sim/src/jit/)
//! against the interpreter: per translated instruction family, random
//! operands through both must give the same registers, predicates,
//! statistics and traps.
mod common;
use common::*;

use ursa_sim::{Engine, Gpu, LaunchConfig, Program, Stats};

/// A small deterministic generator (xorshift64*).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u32 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 32) as u32
    }

    /// Mostly random words, with the edge values carries and shifts care about.
    fn word(&mut self) -> u32 {
        const EDGES: [u32; 8] = [0, 1, 2, 31, 32, 0x7fff_ffff, 0x8000_0000, 0xffff_ffff];
        match self.next() % 4 {
            0 => EDGES[self.next() as usize % EDGES.len()],
            _ => self.next(),
        }
    }
}

/// The default engine (translation on) or the one below it (the interpreter
/// with its full-warp fast paths).
fn engine(jit: bool) -> Engine {
    if jit {
        Engine::Jit
    } else {
        Engine::IssueLoop
    }
}

fn cfg(jit: bool) -> LaunchConfig {
    LaunchConfig { engine: engine(jit), local_size: 256, jit_threshold: 1, ..Default::default() }
}

type Outcome = Result<(Vec<u32>, Stats), String>;

fn run(prog: &Program, args: &[u32], jit: bool) -> Outcome {
    Gpu::new().call_with(prog, "f", args, 16, &cfg(jit)).map_err(|t| t.to_string())
}

/// Runs `body` (a device function body: arguments in R4–R11, P0–P6 set from
/// R12 first; R4–R19 and the predicates packed into R19 come back) on
/// `cases` random argument vectors through the JIT and the interpreter.
fn agree(body: &str, cases: usize) -> ursa_sim::JitStats {
    let src = format!(".func f\n    R2P PR, R12, 0x7f ;\n{}\n    P2R R19, PR, RZ, 0x7f ;\n    RET R[20:21] ;\n", body);
    let prog = load(&src);
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15 ^ body.len() as u64);
    for _ in 0..cases {
        let args: Vec<u32> = (0..9).map(|_| rng.word()).collect();
        let (jit, interp) = (run(&prog, &args, true), run(&prog, &args, false));
        assert_eq!(jit, interp, "JIT and interpreter disagree on {:x?}:\n{}", args, src);
    }
    let stats = prog.jit_stats();
    assert!(stats.regions > 0, "nothing was translated:\n{}", src);
    stats
}

#[test]
fn iadd_family() {
    agree("IADD R4, R4, R5 ;\n IADD R6, -R6, R7 ;\n IADD R8, R8, -0x114514 ;", 200);
    agree("IADD R4, P0, R4, -R5 ;\n IADD.X R6, P1, R6, ~R7, P0 ;\n IADD R8, P2, -R8, -R9 ;", 300);
    agree("IADD R4, P0, R4, R6 ;\n IADD.X R5, R5, R7, P0 ;\n IADD.X R8, P3, R8, R9, P4 ;", 300);
}

#[test]
fn imad_and_imul_family() {
    agree("IMAD R4, R4, R5, R6 ;\n IMAD R7, R7, 0x3, -R8 ;", 200);
    agree("IMAD R4, P0, R4, R5, -R6 ;\n IMAD.HI.X R7, R4, R5, ~R7, P0 ;\n IMAD.HI.X.U32 R8, P1, R8, R9, R10, P2 ;", 300);
    agree("IMAD.WIDE R[8:9], P0, R4, R5, R[6:7] ;\n IMAD.WIDE.U32 R[10:11], P1, R4, R5, -R[6:7] ;", 300);
    agree("IMAD.WIDE.X R[8:9], P2, R4, R5, R[6:7], P0 ;\n IMAD.WIDE.U32 R[10:11], R10, 0x4, R[8:9] ;", 300);
    agree("IMUL R4, R4, -R5 ;\n IMUL.HI R6, R6, R7 ;\n IMUL.HI.U32 R8, R8, R9 ;", 200);
}

#[test]
fn lea_iabs_imnmx_sel_family() {
    agree("LEA R4, P0, -R4, R5, 0x2 ;\n LEA R6, R6, R7, 0x1f ;\n LEA R8, P3, -R8, R9, 0x0 ;", 200);
    agree("IABS R4, R4 ;\n IABS R5, -0x7 ;\n IMNMX R6, R6, R7, P1 ;\n IMNMX.U32 R8, R8, R9, !P2 ;", 200);
    agree("SEL R4, R4, R5, P0 ;\n SEL R6, R6, 0x7, !P5 ;", 100);
}

#[test]
fn isetp_family() {
    for cmp in ["EQ", "NE", "LT", "LE", "GT", "GE"] {
        for (ty, bop) in [("", "AND"), (".U32", "OR"), ("", "XOR")] {
            agree(
                &format!(
                    "ISETP.{c}{t}.{b} P0, P1, R4, R5, P2 ;\n ISETP.{c}{t}.{b}.X P3, P4, R6, R7, !P5, P0 ;\n ISETP.{c}{t}.{b} P5, PT, R8, 0x7, PT ;",
                    c = cmp,
                    t = ty,
                    b = bop
                ),
                40,
            );
        }
    }
}

#[test]
fn lop3_plop3_family() {
    for lut in [0x00, 0xff, 0xc0, 0xfc, 0x3c, 0x96, 0xfe, 0x80, 0x1a, 0x0f, 0xe8, 0x6a] {
        agree(
            &format!(
                "LOP3 R4, R4, R5, R6, {:#x}, !PT ;\n LOP3 P0, R7, R7, R8, R9, {:#x}, P3 ;\n LOP3.PAND P1, R10, R10, 0xff, R11, {:#x}, P4 ;",
                lut, lut, lut
            ),
            40,
        );
        agree(&format!("PLOP3 P0, P1, !P2, P3, {:#x} ;\n PLOP3 P4, P4, P5, P6, {:#x} ;", lut, lut), 20);
    }
}

#[test]
fn shf_family() {
    for ty in ["U32", "S32", "U64", "S64"] {
        for dir in ["L", "R"] {
            for wrap in ["", ".WRAP"] {
                agree(
                    &format!(
                        "SHF.{d}{w}.{t} R4, R4, R5, R6 ;\n SHF.{d}.HI{w}.{t} R7, R7, R8, R9 ;\n SHF.{d}{w}.{t} R10, R10, 0x21, R11 ;\n SHF.{d}.HI{w}.{t} R11, R4, 0x3, R6 ;",
                        d = dir,
                        w = wrap,
                        t = ty
                    ),
                    60,
                );
            }
        }
    }
}

#[test]
fn mov_and_guards() {
    agree("MOV R4, R5 ;\n MOV.64 R[6:7], R[8:9] ;\n MOV.64 R[10:11], RZ ;\n MOV R5, 0x1234 ;", 50);
    agree(
        "@P0 IADD R4, R4, R5 ;\n @!P1 MOV R6, R7 ;\n @P2 ISETP.LT.AND P3, PT, R8, R9, PT ;\n @!P3 LOP3 R10, R10, R11, RZ, 0x3c, !PT ;",
        200,
    );
}

#[test]
fn branches_loops_and_calls() {
    // A counted loop on R4 (low 6 bits), summing into R5, with a guarded branch out.
    let body = "
    LOP3 R4, R4, 0x3f, RZ, 0xc0, !PT ;
    MOV R5, 0x0 ;
.L_loop:
    ISETP.EQ.AND P0, PT, R4, RZ, PT ;
    @P0 BRA .L_done ;
    IADD R5, R5, R4 ;
    IADD R4, R4, -0x1 ;
    BRA .L_loop ;
.L_done:
    MOV R6, R5 ;";
    agree(body, 100);
}

#[test]
fn uniform_branch_loop() {
    // A loop counted up in UR5 to R4's low 6 bits, its back edge a uniform
    // compare and `@UP0 UBRA` (`@!UPT UBRA` never branches): the whole loop
    // is one translated region.
    let body = "
    LOP3 R4, R4, 0x3f, RZ, 0xc0, !PT ;
    R2UR UR4, R4 ;
    UMOV UR5, 0x0 ;
    MOV R5, 0x0 ;
.L_up:
    IADD R5, R5, UR5 ;
    UIADD UR5, UR5, 0x1 ;
    UISETP.LT.U32.AND UP0, UPT, UR5, UR4, UPT ;
    @UP0 UBRA .L_up ;
    @!UPT UBRA .L_up ;
    MOV R6, UR5 ;";
    let stats = agree(body, 100);
    assert_eq!((stats.regions, stats.failures), (1, 0), "{:?}", stats);
}

#[test]
fn convergence_barriers_run_in_translated_code() {
    // A loop with an if/else region per iteration (BSSY, a guarded branch,
    // BSYNC and BREAK at the join), as the compiler emits in device
    // functions, with B0 saved at entry (BMOV.CLEAR) and restored before the
    // end, as a function compiled alone does: with one live lane the
    // barriers never hold it.
    let body = "
    BMOV.CLEAR R9, B0 ;
    LOP3 R4, R4, 0x1f, RZ, 0xc0, !PT ;
    MOV R5, 0x0 ;
.L_loop:
    ISETP.EQ.AND P0, PT, R4, RZ, PT ;
    @P0 BRA .L_done ;
    BSSY B0, .L_join ;
    LOP3 R6, R4, 0x1, RZ, 0xc0, !PT ;
    ISETP.NE.AND P1, PT, R6, RZ, PT ;
    @P1 BRA .L_odd ;
    IADD R5, R5, R4 ;
    BRA .L_join ;
.L_odd:
    IADD R5, R5, -R4 ;
.L_join:
    BSYNC B0 ;
    BREAK B0 ;
    IADD R4, R4, -0x1 ;
    BRA .L_loop ;
.L_done:
    BMOV B0, R9 ;
    BMOV R7, B0 ;
    MOV R6, R5 ;";
    // The whole function stays one region: the barrier instructions run in
    // place instead of handing the lane back to the interpreter.
    assert_eq!(agree(body, 100).regions, 1);
}

#[test]
fn guarded_convergence_barrier_instructions() {
    // BSSY, BREAK and BSYNC under random guards (a false guard: no lane
    // executes, nothing changes); BMOV, which the interpreter runs, shows
    // the barriers the translated code left.
    let body = "
    BSSY B1, .L_x ;
    @P2 BSSY B1, .L_x ;
    BMOV R7, B1 ;
    BSSY B2, .L_x ;
    @P3 BREAK B2 ;
    BMOV R8, B2 ;
    @P4 BSYNC B2 ;
    BMOV R9, B2 ;
    @!P2 BSYNC B1 ;
.L_x:
    MOV R10, R7 ;";
    agree(body, 64);
}

#[test]
fn local_loads_and_stores() {
    // R4 = an offset in the 256-byte stack (aligned or not, inside or not).
    let body = "
    LOP3 R4, R4, 0x1ff, RZ, 0xc0, !PT ;
    MOV R13, 0x0 ;
    STL [R4], R5 ;
    LDL R6, [R4] ;
    STL.U8 [R4+0x1], R7 ;
    LDL.S8 R7, [R4+0x1] ;
    LDL.U16 R8, [R4] ;
    STL.64 [R4+0x8], R[8:9] ;
    LDL.64 R[10:11], [R4+0x8] ;";
    agree(body, 400);
}

/// Issue 25, item 6: long straight-line code was one region of up to 2,048
/// instructions, and Cranelift's time and memory for a region grow faster
/// than its size (9,674 instructions with spill code: 75 s and 1.68 GB
/// under `ursa test --jit-check`). Regions now stop at 512 instructions:
/// 3,000 instructions with local stores and loads (spill code) become at
/// least 6 regions, and the results are the interpreter's across every
/// boundary between them.
#[test]
fn long_straight_line_code_is_cut_into_short_regions() {
    let mut body = String::from("    LOP3 R4, R4, 0x7c, RZ, 0xc0, !PT ;\n");
    for i in 0..500 {
        body += &format!(
            "    IADD R5, R5, 0x{:x} ;\n    STL [R4+0x{:x}], R5 ;\n    LDL R6, [R4+0x{:x}] ;\n    IMAD R7, R6, 0x3, R7 ;\n    LOP3 R8, R8, R7, R5, 0x96, !PT ;\n    SHF.L.U32 R9, R8, 0x{:x}, RZ ;\n",
            i + 1,
            4 * (i % 32),
            4 * ((i + 5) % 32),
            i % 32
        );
    }
    let stats = agree(&body, 4);
    assert!(stats.regions >= 6, "{:?}", stats);
    assert!(stats.instructions <= 512 * stats.regions, "{:?}", stats);
}

#[test]
fn regions_are_translated_once_their_entry_is_hot() {
    // A loop of R4 (low 8 bits) iterations after straight-line code.
    let src = ".func f
    LOP3 R4, R4, 0xff, RZ, 0xc0, !PT ;
    IADD R6, R6, 0x5 ;
    IMAD R6, R6, 0x3, R7 ;
    MOV R5, 0x0 ;
.L_loop:
    ISETP.EQ.AND P0, PT, R4, RZ, PT ;
    @P0 BRA .L_done ;
    IADD R5, R5, R4 ;
    IADD R4, R4, -0x1 ;
    BRA .L_loop ;
.L_done:
    RET R[20:21] ;
";
    let call = |prog: &Program, trips: u32, threshold: u32| {
        let cfg = LaunchConfig { jit_threshold: threshold, ..Default::default() };
        let r = Gpu::new().call_with(prog, "f", &[trips, 0, 9, 4], 4, &cfg).map_err(|t| t.to_string());
        let interp = Gpu::new().call_with(prog, "f", &[trips, 0, 9, 4], 4, &cfg_interp()).map_err(|t| t.to_string());
        assert_eq!(r, interp, "{} trips, threshold {}", trips, threshold);
        prog.jit_stats().regions
    };
    // Below the threshold nothing is translated: the loop's PCs are reached
    // 10 times, the straight-line code once.
    let prog = load(src);
    assert_eq!(call(&prog, 10, 64), 0);
    // The loop's 64th iteration translates the region of the first PC that
    // gets there; the code before the loop, run once, is not translated.
    assert_eq!(call(&prog, 200, 64), 1);
    // The translation is the program's: the next call enters it at the
    // loop's first PC, and the code before the loop (reached twice now)
    // stays interpreted.
    assert_eq!(call(&prog, 200, 64), 1);
    // Threshold 1: every region on first use, the entry's included.
    let fresh = load(src);
    assert!(call(&fresh, 3, 1) >= 1);
}

fn cfg_interp() -> LaunchConfig {
    LaunchConfig { engine: Engine::IssueLoop, ..Default::default() }
}

#[test]
fn helpers_float_and_memory_spaces() {
    // Float and conversion run in place through the interpreter's semantics.
    agree("FADD R4, R4, -R5 ;\n FFMA R6, R6, R7, R8 ;\n I2F.F64 R[8:9], R9 ;\n F2I.RZ R10, R10 ;\n POPC R11, R11 ;", 100);
}

#[test]
fn step_limit_stops_at_the_same_instruction() {
    let src = ".func f\n.L_0:\n    IADD R4, R4, 0x1 ;\n    IADD R5, R5, R4 ;\n    BRA .L_0 ;\n";
    let prog = load(src);
    for limit in [10_000u64, 10_001, 10_002, 65_537] {
        let run = |jit: bool| {
            let cfg = LaunchConfig { engine: engine(jit), step_limit: Some(limit), jit_threshold: 1, ..Default::default() };
            Gpu::new().call_with(&prog, "f", &[0, 0], 2, &cfg).map_err(|t| t.to_string())
        };
        let (a, b) = (run(true), run(false));
        assert!(a.is_err(), "the loop must hit the step limit");
        assert_eq!(a, b);
    }
}

#[test]
fn faults_report_the_same_place() {
    // An out-of-bounds local store after a translated loop.
    let src = ".func f\n    IADD R4, R4, 0x10 ;\n    STL [R4+0x1000], R5 ;\n    RET R[20:21] ;\n";
    let prog = load(src);
    let run = |jit: bool| Gpu::new().call_with(&prog, "f", &[0, 7], 1, &cfg(jit)).map_err(|t| format!("{:?}", t));
    let (a, b) = (run(true), run(false));
    assert!(a.is_err());
    assert_eq!(a, b);
}

#[test]
fn recursion_returns_through_translated_code() {
    // fib(R4) with the stack in local memory.
    let src = "
.func f
    .local 32
    IADD R1, R1, -0x20 ;
    STL.64 [R1+0x8], R[20:21] ;
    ISETP.LT.AND P0, PT, R4, 0x2, PT ;
    @P0 BRA .L_leaf ;
    STL [R1], R4 ;
    IADD R4, R4, -0x1 ;
    CALL R[20:21], f ;
    LDL R0, [R1] ;
    STL [R1+0x10], R4 ;
    IADD R4, R0, -0x2 ;
    CALL R[20:21], f ;
    LDL R0, [R1+0x10] ;
    IADD R4, R0, R4 ;
.L_leaf:
    LDL.64 R[20:21], [R1+0x8] ;
    IADD R1, R1, 0x20 ;
    RET R[20:21] ;
";
    let prog = load(src);
    for n in [0u32, 1, 2, 10, 15] {
        let run = |jit: bool| {
            let cfg = LaunchConfig { engine: engine(jit), local_size: 4096, jit_threshold: 1, ..Default::default() };
            Gpu::new().call_with(&prog, "f", &[n], 1, &cfg).map_err(|t| t.to_string())
        };
        let (a, b) = (run(true), run(false));
        assert_eq!(a, b);
        let fib = |n: u32| (0..n).fold((0u32, 1u32), |(a, b), _| (b, a + b)).0;
        assert_eq!(a.unwrap().0[0], fib(n));
    }
}
