//! CTAs run on every thread of the rayon pool: results, statistics and traps
//! must not depend on the number of threads.

mod common;

use common::load;
use ursa_sim::{Arg, Gpu, LaunchConfig, Program, Stats, Trap};

/// Each thread hashes its global index for a CTA-dependent number of
/// iterations, stores the hash at out[1 + index], and adds it to out[0]
/// with ATOM.
const KERNEL: &str = "
.kernel k
.param out, 8
.param n, 4
    S2R R0, SR_TID_X ;
    S2R R12, SR_CTAID_X ;
    S2R R13, SR_NTID_X ;
    IMAD R0, R12, R13, R0 ;
    MOV R5, R0 ;
    LOP3.LUT R6, R12, 0x7, RZ, 0xc0, !PT ;
    IADD R6, R6, 0x3 ;
    MOV R7, 0x19660d ;
L_loop:
    IMAD R5, R5, R7, 0x3c6ef35f ;
    SHF.R.U32.HI R8, RZ, 0x7, R5 ;
    LOP3.LUT R5, R5, R8, RZ, 0x3c, !PT ;
    IADD R6, R6, -0x1 ;
    ISETP.NE.AND P0, PT, R6, RZ, PT ;
@P0 BRA L_loop ;
    ISETP.EQ.AND P1, PT, R12, c[0x0][0x168], PT ;
    MOV.64 R[2:3], c[0x0][0x160] ;
    IMAD.WIDE.U32 R[10:11], R0, 0x4, R[2:3] ;
@P1 IADD R10, R10, 0x40000 ;
    STG [R[10:11]+0x4], R5 ;
    ATOM.ADD R9, [R[2:3]], R5 ;
    EXIT ;
";

const CTAS: u32 = 37;
const THREADS: u32 = 64;

/// Runs the kernel in a pool of `threads` threads; `bad_cta` stores out of bounds.
fn run(prog: &Program, threads: usize, bad_cta: u32, limit: u64) -> (Result<Stats, Trap>, Vec<u8>) {
    let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
    pool.install(|| {
        let mut gpu = Gpu::new();
        let n = (CTAS * THREADS + 1) as u64 * 4;
        let out = gpu.alloc(n, 16);
        let cfg = LaunchConfig { grid: [CTAS, 1, 1], block: [THREADS, 1, 1], step_limit: Some(limit), ..Default::default() };
        let r = gpu.launch(prog, "k", &cfg, &[Arg::Ptr(out), Arg::U32(bad_cta)]);
        (r, gpu.read(out, n).unwrap())
    })
}

#[test]
fn results_and_stats_do_not_depend_on_the_thread_count() {
    let prog = load(KERNEL);
    let (one, mem1) = run(&prog, 1, u32::MAX, 1 << 30);
    let one = one.unwrap();
    assert_eq!(one.ctas, CTAS as u64);
    for threads in [2, 3, 4] {
        let (r, mem) = run(&prog, threads, u32::MAX, 1 << 30);
        assert_eq!(r.unwrap(), one, "{} threads", threads);
        assert_eq!(mem, mem1, "{} threads", threads);
    }
    // The ATOM.ADD total is the sum of the stored hashes: no update was lost.
    let words: Vec<u32> = mem1.chunks(4).map(|c| u32::from_le_bytes(c.try_into().unwrap())).collect();
    let sum = words[1..].iter().fold(0u32, |a, &w| a.wrapping_add(w));
    assert_eq!(words[0], sum);
    assert!(words[1..].iter().all(|&w| w != 0));
}

#[test]
fn the_first_trapping_cta_is_reported_whatever_the_thread_count() {
    let prog = load(KERNEL);
    let (one, _) = run(&prog, 1, 20, 1 << 30);
    let t1 = one.unwrap_err();
    assert_eq!(t1.cta, Some([20, 0, 0]));
    for threads in [2, 4] {
        assert_eq!(run(&prog, threads, 20, 1 << 30).0.unwrap_err(), t1, "{} threads", threads);
    }
}

#[test]
fn the_step_limit_strikes_at_the_same_place_whatever_the_thread_count() {
    let prog = load(KERNEL);
    let full = run(&prog, 1, u32::MAX, 1 << 30).0.unwrap().instructions;
    for limit in [full / 3, full / 2 + 7, full - 1] {
        let t1 = run(&prog, 1, u32::MAX, limit).0.unwrap_err();
        assert!(matches!(t1.kind, ursa_sim::TrapKind::StepLimit(_)));
        for threads in [2, 4] {
            assert_eq!(run(&prog, threads, u32::MAX, limit).0.unwrap_err(), t1, "limit {} {} threads", limit, threads);
        }
    }
    assert!(run(&prog, 2, u32::MAX, full).0.is_ok());
}

#[test]
fn profiles_do_not_depend_on_the_thread_count() {
    let prog = load(KERNEL);
    let profile = |threads: usize| {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
        pool.install(|| {
            let mut gpu = Gpu::new();
            let out = gpu.alloc((CTAS * THREADS + 1) as u64 * 4, 16);
            let cfg = LaunchConfig { grid: [CTAS, 1, 1], block: [THREADS, 1, 1], profile: true, ..Default::default() };
            gpu.launch(&prog, "k", &cfg, &[Arg::Ptr(out), Arg::U32(u32::MAX)]).unwrap()
        })
    };
    let one = profile(1);
    assert!(one.profile.as_ref().unwrap().insts.iter().map(|i| i.issues).sum::<u64>() == one.instructions);
    assert_eq!(profile(2), one);
    assert_eq!(profile(3), one);
}

/// A thread reads R20, R21 and (through GETGPR, in the second kernel) R100
/// before writing them, then leaves other values in them: a CTA that took
/// the register files of the CTA before (the sequential and SM-model
/// launches reuse them, clearing the rows the program names) would see
/// those values if a row were not cleared. R21 is the highest row the first
/// kernel names. Each thread stores what it read plus its global index.
/// Both kernels start with `STALE_PROLOGUE`: R0 the thread's global index,
/// R[2:3] its word of `out`.
const STALE_PROLOGUE: &str = "
.kernel k
.param out, 8
    S2R R0, SR_TID_X ;
    S2R R12, SR_CTAID_X ;
    S2R R13, SR_NTID_X ;
    IMAD R0, R12, R13, R0 ;
    MOV.64 R[2:3], c[0x0][0x160] ;
    IMAD.WIDE.U32 R[2:3], R0, 0x4, R[2:3] ;
";

const STALE: &str = "
    IADD R8, R20, R21 ;
    IADD R8, R8, R0 ;
    STG [R[2:3]], R8 ;
    MOV R20, 0xdead ;
    IADD R21, R0, 0x1 ;
    EXIT ;
";

const STALE_DYNAMIC: &str = "
    MOV R4, 0x64 ;
    R2UR UR4, R4 ;
    GETGPR R8, R[UR4] ;
    IADD R8, R8, R0 ;
    STG [R[2:3]], R8 ;
    IADD R9, R0, 0x1 ;
    SETGPR R[UR4], R9 ;
    EXIT ;
";

#[test]
fn reused_register_files_start_like_fresh_ones() {
    use std::sync::Arc;
    use ursa_sim::machine_desc::MachineDesc;
    use ursa_sim::Engine;
    const CTAS: u32 = 9;
    for body in [STALE, STALE_DYNAMIC] {
        let prog = load(&format!("{}{}", STALE_PROLOGUE, body));
        // Every register a thread reads first is zero in a fresh file.
        let expected: Vec<u8> = (0..CTAS * THREADS).flat_map(|i| i.to_le_bytes()).collect();
        for threads in [1, 2] {
            for sm in [false, true] {
                for engine in [Engine::Interpreter, Engine::Threaded, Engine::default()] {
                    let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
                    let got = pool.install(|| {
                        let mut gpu = Gpu::new();
                        let n = (CTAS * THREADS) as u64 * 4;
                        let out = gpu.alloc(n, 16);
                        let machine = sm.then(|| Arc::new(MachineDesc::default()));
                        let cfg = LaunchConfig { grid: [CTAS, 1, 1], block: [THREADS, 1, 1], machine, engine, ..Default::default() };
                        gpu.launch(&prog, "k", &cfg, &[Arg::Ptr(out)]).unwrap();
                        gpu.read(out, n).unwrap()
                    });
                    // (Two threads without the SM model run the CTAs in parallel,
                    // each on fresh register files.)
                    assert!(got == expected, "{} threads, SM model {}, {:?}", threads, sm, engine);
                }
            }
        }
    }
}
