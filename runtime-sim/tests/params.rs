//! A launch's arguments against the kernel's typed `.param` table
//! (`Gpu::launch`, docs/abi.md): sizes and kinds must match, an 8-byte
//! integer and a pointer stand for each other, raw bytes have no type.
mod common;
use common::*;

use ursa_sim::{Arg, Gpu, LaunchConfig, Program};

/// `out[0] = n` for a kernel `k(out: ptr, n: i32, x: f32, raw: 4 bytes, wide: i64)`.
fn typed_kernel() -> Program {
    load(
        ".kernel k
.param out, ptr
.param n, i32
.param x, f32
.param raw, 4
.param wide, i64
    MOV.64 R[2:3], c[0x0][0x160] ;
    MOV R4, c[0x0][0x168] ;
    STG [R[2:3]], R4 ;
    EXIT ;
",
    )
}

fn launch(prog: &Program, gpu: &mut Gpu, args: &[Arg]) -> Result<(), String> {
    gpu.launch(prog, "k", &LaunchConfig::default(), args).map(|_| ()).map_err(|t| t.to_string())
}

#[test]
fn arguments_of_the_parameter_types_are_taken() {
    let prog = typed_kernel();
    let mut gpu = Gpu::new();
    let out = gpu.alloc(4, 16);
    for args in [
        vec![Arg::Ptr(out), Arg::I32(-7), Arg::F32(1.5), Arg::F32(2.0), Arg::I64(1)],
        // Signless integers, an address as a number, a pointer for an i64,
        // untyped bytes for anything of their size.
        vec![Arg::U64(out), Arg::U32(7), Arg::Bytes(vec![0; 4]), Arg::U32(3), Arg::Ptr(out)],
    ] {
        launch(&prog, &mut gpu, &args).unwrap_or_else(|e| panic!("{:?}: {}", args, e));
        let n = match args[1] {
            Arg::I32(v) => v as u32,
            Arg::U32(v) => v,
            _ => unreachable!(),
        };
        assert_eq!(gpu.read(out, 4).unwrap(), n.to_le_bytes());
    }
}

#[test]
fn arguments_of_another_type_are_refused() {
    let prog = typed_kernel();
    let mut gpu = Gpu::new();
    let out = gpu.alloc(4, 16);
    let ok = || vec![Arg::Ptr(out), Arg::I32(1), Arg::F32(1.0), Arg::U32(0), Arg::I64(0)];
    for (i, arg, want) in [
        (1, Arg::F32(7.0), "argument 2 (F32(7.0)) is f32, but parameter `n` of `k` is i32"),
        (2, Arg::I32(1), "argument 3 (I32(1)) is i32, but parameter `x` of `k` is f32"),
        (0, Arg::F64(0.0), "argument 1 (F64(0.0)) is f64, but parameter `out` of `k` is ptr"),
        (4, Arg::F64(1.0), "argument 5 (F64(1.0)) is f64, but parameter `wide` of `k` is i64"),
        (1, Arg::I64(1), "argument 2 (I64(1)) is i64, but parameter `n` of `k` is i32"),
        (3, Arg::F64(1.0), "argument 4 (F64(1.0)) is f64, but parameter `raw` of `k` is 4 bytes"),
    ] {
        let mut args = ok();
        args[i] = arg;
        let e = launch(&prog, &mut gpu, &args).unwrap_err();
        assert!(e.contains(want), "{:?}: {}", args, e);
    }
    assert_eq!(gpu.read(out, 4).unwrap(), [0; 4], "nothing ran");
}

/// Parameters without a kind (`.param NAME, SIZE`, or any parameter of an
/// object older than `.ursa.info` version 3) take any argument of their size.
#[test]
fn untyped_tables_check_sizes_only() {
    let prog = load(".kernel k\n.param out, 8\n.param n, 4\n    EXIT ;\n");
    let mut gpu = Gpu::new();
    assert!(launch(&prog, &mut gpu, &[Arg::F64(1.0), Arg::F32(1.0)]).is_ok());
    let e = launch(&prog, &mut gpu, &[Arg::F64(1.0), Arg::U64(1)]).unwrap_err();
    assert!(e.contains("argument 2 (U64(1)) is i64, but parameter `n` of `k` is 4 bytes"), "{}", e);
}
