//! Launch limits (issue 12): the step limit's trap names where it stopped,
//! grids that cannot finish within the step limit and CTAs that need more
//! memory than the memory limit are refused with a clear error, and a huge
//! `.local` declaration costs nothing until it is used.

mod common;

use std::time::Instant;

use common::load;
use ursa_sim::{Gpu, LaunchConfig, TrapKind, DEFAULT_MEMORY_LIMIT};

#[test]
fn step_limit_trap_names_kernel_cta_warp_lane_pc() {
    let prog = load(".kernel k\n    S2R R0, SR_TID_X ;\n    ISETP.NE.AND P0, PT, R0, 0x3, PT ;\n@P0 EXIT ;\nL:\n    BRA L ;\n");
    let cfg = LaunchConfig { block: [40, 1, 1], grid: [2, 1, 1], step_limit: Some(500), ..Default::default() };
    let t = Gpu::new().launch(&prog, "k", &cfg, &[]).unwrap_err();
    assert_eq!(t.kind, TrapKind::StepLimit(500));
    assert_eq!(t.kernel, "k");
    assert_eq!(t.cta, Some([0, 0, 0]));
    assert_eq!(t.warp, Some(0));
    assert_eq!(t.lane, Some(3));
    assert_eq!(t.pc, Some(ursa_sim::CODE_BASE + 0x30));
    assert!(t.to_string().contains("lane 3"), "{}", t);
}

#[test]
fn grid_too_big_for_the_step_limit_is_refused_at_once() {
    let prog = load(".kernel k\n    EXIT ;\n");
    let start = Instant::now();
    for grid in [[65536, 65536, 1], [u32::MAX, u32::MAX, u32::MAX]] {
        let cfg = LaunchConfig { grid, ..Default::default() };
        let t = Gpu::new().launch(&prog, "k", &cfg, &[]).unwrap_err();
        match &t.kind {
            TrapKind::Launch(m) => assert!(m.contains("step limit"), "{}", m),
            k => panic!("{:?}", k),
        }
    }
    // Refused before any CTA runs (the grids above would take minutes).
    assert!(start.elapsed().as_secs() < 5);
    // A grid within the limit still runs, and so does any grid without a limit.
    let cfg = LaunchConfig { grid: [64, 64, 1], step_limit: Some(4096), ..Default::default() };
    assert_eq!(Gpu::new().launch(&prog, "k", &cfg, &[]).unwrap().ctas, 4096);
    let cfg = LaunchConfig { grid: [64, 64, 1], step_limit: Some(4095), ..Default::default() };
    assert!(matches!(Gpu::new().launch(&prog, "k", &cfg, &[]).unwrap_err().kind, TrapKind::Launch(_)));
}

#[test]
fn huge_local_declaration_is_refused_or_lazy() {
    // 4 GiB - 1 of stack per thread: 32 lanes would need 128 GiB.
    let prog = load(".kernel k\n.local 0xffffffff\n    EXIT ;\n");
    let t = Gpu::new().launch(&prog, "k", &LaunchConfig::default(), &[]).unwrap_err();
    match &t.kind {
        TrapKind::Launch(m) => assert!(m.contains("memory limit") && m.contains("4294967295 local"), "{}", m),
        k => panic!("{:?}", k),
    }
    // Under the limit, a declared stack that is never touched is never allocated:
    // 1 GiB per thread for 1024 threads would not fit in this machine.
    let prog = load(".kernel k\n.local 0x40000000\n    EXIT ;\n");
    let cfg = LaunchConfig { block: [1024, 1, 1], memory_limit: None, ..Default::default() };
    Gpu::new().launch(&prog, "k", &cfg, &[]).unwrap();
    assert_eq!(LaunchConfig::default().memory_limit, Some(DEFAULT_MEMORY_LIMIT));
}

#[test]
fn local_memory_is_allocated_on_first_use() {
    let src = "
.kernel k
.param out, 8
.local 64
    S2R R0, SR_TID_X ;
    MOV.64 R[2:3], c[0x0][0x160] ;
    STL [RZ+0x8], R0 ;
    LDL R5, [RZ+0x8] ;
    IMAD.WIDE.U32 R[2:3], R0, 0x4, R[2:3] ;
    STG [R[2:3]], R5 ;
    EXIT ;
";
    let (out, _) = common::run_kernel(src, [40, 1, 1], [1, 1, 1], 40, &[]).unwrap();
    assert_eq!(out, (0..40).collect::<Vec<u32>>());
    // A shared-memory request over the limit is refused as well.
    let prog = load(".kernel k\n    EXIT ;\n");
    let cfg = LaunchConfig { shared_size: 4096, memory_limit: Some(4095), ..Default::default() };
    assert!(matches!(Gpu::new().launch(&prog, "k", &cfg, &[]).unwrap_err().kind, TrapKind::Launch(_)));
}

#[test]
fn local_memory_the_host_cannot_give_is_a_trap() {
    // 4 GiB - 1 per thread, with no memory limit: the warp's first local
    // access needs 32 x that, 137438953440 bytes. Allocating it used to
    // abort the process; a host that refuses it (overcommit permitting)
    // now gives a trap naming the size.
    let prog = load(".kernel k\n.local 0xffffffff\n    STL [RZ+0x8], RZ ;\n    EXIT ;\n");
    for limit in [None, Some(u64::MAX)] {
        let cfg = LaunchConfig { memory_limit: limit, ..Default::default() };
        if let Err(t) = Gpu::new().launch(&prog, "k", &cfg, &[]) {
            assert_eq!(t.kind, TrapKind::HostMemory { space: ursa_sim::Space::Local, bytes: 137438953440, limit });
            assert_eq!((t.warp, t.lane), (Some(0), Some(0)));
            assert!(t.to_string().contains("cannot allocate the 137438953440 bytes of local memory"), "{}", t);
        }
    }
    // A global allocation the host cannot make, or that leaves the 64-bit
    // address space, is an error too.
    let mut gpu = Gpu::new();
    for size in [u64::MAX, u64::MAX - (1 << 40)] {
        match gpu.try_alloc(size, 16).unwrap_err().kind {
            TrapKind::HostMemory { bytes, .. } => assert_eq!(bytes, size),
            k => panic!("{:?}", k),
        }
    }
    assert!(gpu.try_alloc(16, 16).is_ok());
    // `GlobalMemory::alloc` has no panicking form: it gives the same error.
    assert!(matches!(gpu.mem.alloc(u64::MAX, 16), Err(TrapKind::HostMemory { bytes: u64::MAX, .. })));
}
