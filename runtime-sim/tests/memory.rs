//! Loads, stores, LDC and atomics over the global, shared, local and
//! generic spaces (docs/isa-extensions.md section 4, 6.12–6.15).
mod common;
use common::*;
use ursa_sim::{Arg, Gpu, LaunchConfig};

fn run(body: &str, threads: u32, words: usize) -> Vec<u32> {
    run_kernel(&format!("{}{}", PROLOGUE, body), [threads, 1, 1], [1, 1, 1], words, &[]).unwrap_or_else(|t| panic!("trap: {}", t)).0
}

#[test]
fn global_subword_and_wide_accesses() {
    let out = run(
        "
    MOV R4, 0x8180ff7f ;
    STG [R[2:3]], R4 ;
    LDG.S8 R5, [R[2:3]+0x1] ;
    LDG.U8 R6, [R[2:3]+0x1] ;
    LDG.S16 R7, [R[2:3]+0x2] ;
    LDG.U16 R8, [R[2:3]+0x2] ;
    STG.U8 [R[2:3]+0x4], R4 ;
    STG.U16 [R[2:3]+0x6], R4 ;
    MOV R16, 0x11 ;
    MOV R17, 0x22 ;
    MOV R18, 0x33 ;
    MOV R19, 0x44 ;
    STG.128 [R[2:3]+0x10], R[16:19] ;
    LDG.64 R[14:15], [R[2:3]+0x18] ;
    STG [R[2:3]+0x20], R5 ;
    STG [R[2:3]+0x24], R6 ;
    STG [R[2:3]+0x28], R7 ;
    STG [R[2:3]+0x2c], R8 ;
    STG.64 [R[2:3]+0x30], R[14:15] ;
    EXIT ;
",
        1,
        16,
    );
    assert_eq!(out[0], 0x8180_FF7F);
    assert_eq!(out[1], 0xFF7F_007F);
    assert_eq!(&out[4..8], &[0x11, 0x22, 0x33, 0x44]);
    assert_eq!(out[8], 0xFFFF_FFFF); // S8 of 0xFF
    assert_eq!(out[9], 0xFF);
    assert_eq!(out[10], 0xFFFF_8180); // S16 of 0x8180
    assert_eq!(out[11], 0x8180);
    assert_eq!(&out[12..14], &[0x33, 0x44]);
}

#[test]
fn shared_local_and_generic_windows() {
    let src = "
.kernel k
.param out, 8
.shared 64
.local 16
    S2R R0, SR_TID_X ;
    MOV.64 R[2:3], c[0x0][0x160] ;
    IMAD.WIDE.U32 R[2:3], R0, 0x4, R[2:3] ;
    SHF.L.U32 R5, R0, 0x2, RZ ;
    STL [RZ+0x8], R0 ;
    STS [R5], R0 ;
    MOV R6, R5 ;
    MOV R7, 0x10000 ;
    LD R8, [R[6:7]] ;
    MOV R6, 0x8 ;
    MOV R7, 0x20000 ;
    LD R9, [R[6:7]] ;
    IADD R10, R0, 0x64 ;
    ST [R[6:7]+0x4], R10 ;
    LDL R11, [RZ+0xc] ;
    LD R12, [R[2:3]] ;
    IADD R8, R8, R9 ;
    IADD R8, R8, R11 ;
    STG [R[2:3]], R8 ;
    EXIT ;
";
    let (out, _) = run_kernel(src, [8, 1, 1], [1, 1, 1], 8, &[]).unwrap();
    for t in 0..8u32 {
        assert_eq!(out[t as usize], t + t + (t + 100));
    }
}

#[test]
fn same_byte_store_conflict_highest_lane_wins() {
    let out = run("    STG [R[2:3]], R0 ;\n    EXIT ;", 32, 1);
    assert_eq!(out[0], 31);
}

#[test]
fn atomics_in_lane_order() {
    let out = run(
        "
    IMAD.WIDE.U32 R[8:9], R0, 0x4, R[2:3] ;
    ATOM.ADD R4, [R[2:3]+0x100], R0 ;
    STG [R[8:9]], R4 ;
    ATOM.MAX R5, [R[2:3]+0x104], R0 ;
    ATOM.MIN.U32 R5, [R[2:3]+0x108], R0 ;
    MOV R6, 0x5 ;
    ATOM.CAS R7, [R[2:3]+0x10c], RZ, R6 ;
    ATOM.EXCH R7, [R[2:3]+0x110], R0 ;
    ATOM.OR R7, [R[2:3]+0x114], R6 ;
    MOV R12, 0xffffffff ;
    MOV R13, 0xffffffff ;
    ATOM.ADD.U64 R[10:11], [R[2:3]+0x118], R[12:13] ;
    EXIT ;
",
        32,
        72,
    );
    // Lane l sees the sum of the lanes before it.
    for l in 0..32u32 {
        assert_eq!(out[l as usize], l * (l.wrapping_sub(1)) / 2, "lane {}", l);
    }
    assert_eq!(out[64], 496);
    assert_eq!(out[65], 31);
    assert_eq!(out[66], 0);
    assert_eq!(out[67], 5); // only lane 0's CAS of 0 -> 5 succeeds
    assert_eq!(out[68], 31);
    assert_eq!(out[69], 5);
    // 32 × (2^64 - 1) mod 2^64 = -32.
    assert_eq!(join64(out[70], out[71]), 32u64.wrapping_neg());
}

#[test]
fn ldc_with_register_offset_and_user_bank() {
    let src = "
.kernel k
.param out, 8
    MOV.64 R[2:3], c[0x0][0x160] ;
    MOV R4, 0x4 ;
    LDC R5, c[0x1][R4+0x4] ;
    LDC.S8 R6, c[0x1][R4-0x1] ;
    LDC.U16 R7, c[0x1][R4-0x2] ;
    LDC.64 R[8:9], c[0x1][R4+0x4] ;
    STG [R[2:3]], R5 ;
    STG [R[2:3]+0x4], R6 ;
    STG [R[2:3]+0x8], R7 ;
    STG.64 [R[2:3]+0x10], R[8:9] ;
    EXIT ;
";
    let prog = load(src);
    let mut gpu = Gpu::new();
    let out = gpu.alloc(32, 16);
    let bank: Vec<u8> = (0u8..16).map(|i| i * 0x11).collect();
    let cfg = LaunchConfig { const_banks: vec![(1, bank)], ..Default::default() };
    gpu.launch(&prog, "k", &cfg, &[Arg::Ptr(out)]).unwrap();
    let b = gpu.read(out, 24).unwrap();
    let w = |i: usize| u32::from_le_bytes(b[4 * i..4 * i + 4].try_into().unwrap());
    assert_eq!(w(0), 0xBBAA_9988);
    assert_eq!(w(1), 0x33);
    assert_eq!(w(2), 0x3322);
    assert_eq!(w(4), 0xBBAA_9988);
    assert_eq!(w(5), 0xFFEE_DDCC);
}

#[test]
fn kernel_parameters_and_host_memory() {
    let src = "
.kernel k
.param out, 8
.param a, 4
.param b, 8
    MOV.64 R[2:3], c[0x0][0x160] ;
    MOV R4, c[0x0][0x168] ;
    MOV.64 R[10:11], c[0x0][0x170] ;
    MOV R7, c[0x0][0x18] ;
    MOV R8, c[0x0][0x1c] ;
    STG [R[2:3]], R4 ;
    STG [R[2:3]+0x4], R10 ;
    STG [R[2:3]+0x8], R11 ;
    STG [R[2:3]+0xc], R7 ;
    STG [R[2:3]+0x10], R8 ;
    STG [R[2:3]+0x14], R1 ;
    EXIT ;
";
    let prog = load(src);
    let mut gpu = Gpu::new();
    let out = gpu.alloc(24, 16);
    gpu.write(out, &[0xAA; 24]).unwrap();
    let cfg = LaunchConfig { shared_size: 48, local_size: 256, ..Default::default() };
    gpu.launch(&prog, "k", &cfg, &[Arg::Ptr(out), Arg::I32(-2), Arg::U64(0x1122_3344_5566_7788)]).unwrap();
    let b = gpu.read(out, 24).unwrap();
    let w = |i: usize| u32::from_le_bytes(b[4 * i..4 * i + 4].try_into().unwrap());
    assert_eq!(w(0), 0xFFFF_FFFE);
    assert_eq!(w(1), 0x5566_7788);
    assert_eq!(w(2), 0x1122_3344);
    assert_eq!(w(3), 48, "SHMEM_SIZE");
    assert_eq!(w(4), 256, "LOCAL_SIZE");
    assert_eq!(w(5), 256, "R1 starts at LOCAL_SIZE");
}
