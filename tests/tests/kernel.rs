//! A CLIF function compiled as a kernel and launched on the simulator with
//! several threads, in strict hazard mode.

use ursa_backend::{compile, Options};
use ursa_emit::elf;
use ursa_sim::{Arg, Gpu, LaunchConfig, Program};

#[test]
fn compiled_kernel_runs() {
    let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../examples/store_kernel.clif")).unwrap();
    let funcs = cranelift_reader::parse_functions(&text).unwrap();
    let c = compile(&funcs[0], &Options { kernel: true }).expect("compiles");
    assert!(c.function.kernel);
    let bytes = elf::write(&elf::Object { functions: vec![c.function] });
    let prog = Program::load(&bytes).unwrap();
    let mut gpu = Gpu::new();
    let out = gpu.alloc(8, 8);
    let cfg = LaunchConfig { grid: [2, 1, 1], block: [3, 1, 1], strict: true, ..Default::default() };
    gpu.launch(&prog, "store2", &cfg, &[Arg::Ptr(out), Arg::I32(-7), Arg::I32(5)]).expect("runs");
    let b = gpu.read(out, 8).unwrap();
    assert_eq!(i32::from_le_bytes(b[0..4].try_into().unwrap()), -2);
    assert_eq!(i32::from_le_bytes(b[4..8].try_into().unwrap()), -12);
}

#[test]
fn kernel_returning_values_is_rejected() {
    let funcs = cranelift_reader::parse_functions("function %k(i32) -> i32 {\nblock0(v0: i32):\n    return v0\n}\n").unwrap();
    let e = compile(&funcs[0], &Options { kernel: true }).unwrap_err();
    assert!(e.to_string().contains("kernel cannot return values"), "{}", e);
}
