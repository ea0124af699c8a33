//! Every fault kind is reported as a Trap naming kernel, CTA, warp, lane, PC
//! and the disassembled instruction — never a panic.
mod common;
use common::*;
use ursa_sim::{Arg, Gpu, LaunchConfig, Program, Space, TrapKind};

fn trap_of(body: &str, threads: u32) -> ursa_sim::Trap {
    run_kernel(&format!("{}{}", PROLOGUE, body), [threads, 1, 1], [1, 1, 1], 32, &[]).expect_err("expected a trap")
}

#[test]
fn out_of_bounds_global_access_names_the_lane() {
    // Only lane 5 reads past the 128-byte buffer.
    let t = trap_of(
        "
    ISETP.EQ.AND P0, PT, R0, 0x5, PT ;
@P0 LDG R4, [R[2:3]+0x1000] ;
    EXIT ;
",
        32,
    );
    assert!(matches!(t.kind, TrapKind::OutOfBounds { space: Space::Global, size: 4, .. }), "{:?}", t.kind);
    assert_eq!(t.lane, Some(5));
    assert_eq!(t.warp, Some(0));
    assert_eq!(t.cta, Some([0, 0, 0]));
    assert_eq!(t.kernel, "k");
    assert_eq!(t.function, Some(("k".to_string(), 0x30)));
    assert_eq!(t.inst.as_deref(), Some("@P0 LDG R4, [R[2:3]+0x1000] ;"));
    assert!(t.to_string().contains("lane 5"), "{}", t);
}

#[test]
fn a_faulting_store_has_no_effect_in_any_lane() {
    let (prog, mut gpu) = (
        load(&format!(
            "{}{}",
            PROLOGUE,
            "
    IMAD.WIDE.U32 R[4:5], R0, 0x4, R[2:3] ;
    ISETP.EQ.AND P0, PT, R0, 0x1f, PT ;
@P0 IADD R4, R4, 0x10000 ;
    STG [R[4:5]], R0 ;
    EXIT ;
"
        )),
        Gpu::new(),
    );
    let out = gpu.alloc(128, 16);
    gpu.write(out, &[0xEE; 128]).unwrap();
    let cfg = LaunchConfig { block: [32, 1, 1], ..Default::default() };
    let t = gpu.launch(&prog, "k", &cfg, &[Arg::Ptr(out)]).unwrap_err();
    assert_eq!(t.lane, Some(31));
    assert!(gpu.read(out, 128).unwrap().iter().all(|&b| b == 0xEE));
}

#[test]
fn misaligned_accesses() {
    let t = trap_of("    LDG.64 R[4:5], [R[2:3]+0x4] ;\n    EXIT ;", 1);
    assert!(matches!(t.kind, TrapKind::Misaligned { space: Space::Global, size: 8, .. }), "{:?}", t.kind);
    let t = trap_of("    MOV R4, 0x2 ;\n    STS [R4], R0 ;\n    EXIT ;", 1);
    assert!(matches!(t.kind, TrapKind::Misaligned { space: Space::Shared, size: 4, .. }), "{:?}", t.kind);
    let t = trap_of("    MOV R4, 0x1 ;\n    LDC R5, c[0x0][R4] ;\n    EXIT ;", 1);
    assert!(matches!(t.kind, TrapKind::Misaligned { space: Space::Constant, .. }), "{:?}", t.kind);
}

#[test]
fn out_of_bounds_shared_local_constant_and_generic() {
    let t = trap_of("    LDS R4, [RZ+0x100] ;\n    EXIT ;", 1);
    assert!(matches!(t.kind, TrapKind::OutOfBounds { space: Space::Shared, addr: 0x100, .. }), "{:?}", t.kind);
    let t = trap_of("    STL [RZ], R0 ;\n    EXIT ;", 1);
    assert!(matches!(t.kind, TrapKind::OutOfBounds { space: Space::Local, .. }), "{:?}", t.kind);
    let t = trap_of("    MOV R4, c[0x0][0x8000] ;\n    EXIT ;", 1);
    assert!(matches!(t.kind, TrapKind::OutOfBounds { space: Space::Constant, .. }), "{:?}", t.kind);
    let t = trap_of("    MOV R4, c[0x3][0x0] ;\n    EXIT ;", 1);
    assert!(matches!(t.kind, TrapKind::OutOfBounds { space: Space::Constant, .. }), "{:?}", t.kind);
    // A null pointer and an address in the unmapped part of the windows.
    let t = trap_of("    LD R4, [RZ+0x10] ;\n    EXIT ;", 1);
    assert!(matches!(t.kind, TrapKind::OutOfBounds { space: Space::Global, addr: 0x10, .. }), "{:?}", t.kind);
    let t = trap_of("    MOV R4, RZ ;\n    MOV R5, 0x10001 ;\n    LD R6, [R[4:5]] ;\n    EXIT ;", 1);
    assert!(matches!(t.kind, TrapKind::OutOfBounds { space: Space::Global, .. }), "{:?}", t.kind);
}

fn program_with_raw(first: &[u8; 16], rest: &str) -> Program {
    let mut obj = ursa_emit::asm::assemble(&format!(".kernel k\n    EXIT ;\n{}", rest), "t.s").unwrap();
    obj.functions[0].code[..16].copy_from_slice(first);
    Program::load(&ursa_emit::elf::write(&obj)).unwrap()
}

#[test]
fn undecodable_instruction_traps_only_when_executed() {
    let garbage = [0xFFu8; 16];
    // Never reached: fine.
    let mut obj = ursa_emit::asm::assemble(".kernel k\n    EXIT ;\n    EXIT ;", "t.s").unwrap();
    obj.functions[0].code[16..32].copy_from_slice(&garbage);
    let prog = Program::load(&ursa_emit::elf::write(&obj)).unwrap();
    Gpu::new().launch(&prog, "k", &LaunchConfig::default(), &[]).unwrap();
    // Executed: a trap with the decoder's message.
    let prog = program_with_raw(&garbage, "");
    let t = Gpu::new().launch(&prog, "k", &LaunchConfig::default(), &[]).unwrap_err();
    assert!(matches!(t.kind, TrapKind::Undecodable(_)), "{:?}", t.kind);
    assert_eq!(t.pc, Some(ursa_sim::CODE_BASE));
    assert!(t.inst.as_deref().unwrap_or("").contains("undecodable"), "{:?}", t.inst);
}

#[test]
fn uf2fp_has_no_semantics() {
    let form = ursa_emit::FormId::by_name("UF2FP_UUU").unwrap();
    let inst = ursa_emit::Inst::new(form);
    let bytes = inst.encode_unchecked().to_le_bytes();
    let t = Gpu::new().launch(&program_with_raw(&bytes, ""), "k", &LaunchConfig::default(), &[]).unwrap_err();
    assert_eq!(t.kind, TrapKind::SemanticsNotDefined("UF2FP"));
}

#[test]
fn register_index_out_of_range() {
    let t = call_trap("    R2UR UR4, R4 ;\n    GETGPR R5, R[UR4+0x10] ;", &[250]);
    assert_eq!(t.kind, TrapKind::RegisterIndex { file: "R", index: 266 });
    let t = call_trap("    R2UR UR4, R4 ;\n    SETGPR R[UR4-0x10], R5 ;", &[3]);
    assert_eq!(t.kind, TrapKind::RegisterIndex { file: "R", index: -13 });
    let t = call_trap("    R2UR UR4, R4 ;\n    GETUGPR UR5, UR[UR4+0x1] ;", &[63]);
    assert_eq!(t.kind, TrapKind::RegisterIndex { file: "UR", index: 64 });
}

#[test]
fn deadlock_at_a_cta_barrier() {
    // Warp 0 waits at barrier 0, warp 1 at barrier 1: neither completes.
    let t = trap_of(
        "
    ISETP.LT.AND P0, PT, R0, 0x20, PT ;
@P0 BAR.SYNC 0x0 ;
@!P0 BAR.SYNC 0x1 ;
    EXIT ;
",
        64,
    );
    assert!(matches!(&t.kind, TrapKind::Deadlock(m) if m.contains("BAR.SYNC")), "{:?}", t.kind);
}

#[test]
fn deadlock_at_convergence_barriers() {
    let t = trap_of(
        "
    ISETP.LT.AND P0, PT, R0, 0x10, PT ;
    BSSY B0, L1 ;
    BSSY B1, L2 ;
@P0 BRA L2 ;
L1:
    BSYNC B0 ;
L2:
    BSYNC B1 ;
    EXIT ;
",
        32,
    );
    match &t.kind {
        TrapKind::Deadlock(m) => assert!(m.contains("BSYNC B0") && m.contains("BSYNC B1"), "{}", m),
        k => panic!("{:?}", k),
    }
}

#[test]
fn step_limit() {
    let prog = load(".kernel k\nL:\n    BRA L ;\n");
    let cfg = LaunchConfig { step_limit: Some(1000), ..Default::default() };
    let t = Gpu::new().launch(&prog, "k", &cfg, &[]).unwrap_err();
    assert_eq!(t.kind, TrapKind::StepLimit(1000));
    // The default configuration has a limit too.
    assert!(LaunchConfig::default().step_limit.is_some());
}

#[test]
fn bad_pc_and_explicit_trap() {
    let t = trap_of("    MOV R4, 0x4 ;\n    MOV R5, RZ ;\n    BRA R[4:5] ;", 1);
    assert_eq!(t.kind, TrapKind::BadPc(4));
    let t = trap_of("    ISETP.EQ.AND P0, PT, R0, 0x3, PT ;\n@P0 BPT.TRAP 0x7 ;\n    EXIT ;", 32);
    assert!(matches!(&t.kind, TrapKind::Explicit(m) if m.contains("0x7")), "{:?}", t.kind);
    assert_eq!(t.lane, Some(3));
    // Running off the end of the code.
    let prog = load(".kernel k\n    NOP ;\n");
    let t = Gpu::new().launch(&prog, "k", &LaunchConfig::default(), &[]).unwrap_err();
    assert!(matches!(t.kind, TrapKind::BadPc(_)));
}

#[test]
fn launch_and_host_errors() {
    let prog = load(".kernel k\n.param a, 4\n    EXIT ;\n.func f\n    RET R[20:21] ;\n");
    let mut gpu = Gpu::new();
    let cfg = LaunchConfig::default();
    assert!(matches!(gpu.launch(&prog, "nope", &cfg, &[]).unwrap_err().kind, TrapKind::Launch(_)));
    assert!(matches!(gpu.launch(&prog, "f", &cfg, &[]).unwrap_err().kind, TrapKind::Launch(_)));
    assert!(matches!(gpu.launch(&prog, "k", &cfg, &[]).unwrap_err().kind, TrapKind::Launch(_)));
    assert!(matches!(gpu.launch(&prog, "k", &cfg, &[Arg::U64(1)]).unwrap_err().kind, TrapKind::Launch(_)));
    let big = LaunchConfig { block: [1025, 1, 1], ..Default::default() };
    assert!(matches!(gpu.launch(&prog, "k", &big, &[Arg::U32(1)]).unwrap_err().kind, TrapKind::Launch(_)));
    gpu.launch(&prog, "k", &cfg, &[Arg::U32(1)]).unwrap();
    assert!(gpu.read(0x10, 4).is_err());
    let p = gpu.alloc(8, 8);
    assert!(gpu.write(p + 4, &[0; 8]).is_err());
    assert!(gpu.read(p, 8).is_ok());
}

#[test]
fn load_errors() {
    assert!(Program::load(b"not an elf").is_err());
    let mut obj = ursa_emit::asm::assemble(".kernel k\n    EXIT ;", "t.s").unwrap();
    obj.functions[0].relocs.push(ursa_emit::elf::Reloc { offset: 4, symbol: "missing".into(), addend: 0 });
    assert!(matches!(Program::from_functions(&obj.functions), Err(ursa_sim::LoadError::UndefinedSymbol { .. })));
}
