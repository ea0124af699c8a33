//! The compile-scaling families at 32k (issue 25; generator and host
//! results shared with the benchmarks): one jump passing 32k values to 32k
//! block parameters, 32k values live at once, a chain of 32k blocks and 32k
//! dependent instructions. They pass every size limit of the compiler's
//! quadratic paths: the linear register allocation with every spill slot in
//! local memory (`assign_regs_regalloc2::LINEAR_FROM`), the verifier's split
//! copy (`mid::verifier_report`) and the sparse liveness
//! (`liveness::ValueLiveness`). Each is compiled with the register
//! allocator's checker on, run on the simulator and compared with the result
//! computed on the host. Time is measured by the `compile_scaling` bench,
//! not here.

use cranelift_codegen::data_value::DataValue;
use ursa_backend::{compile, OptLevel, Options};
use ursa_cli::filetest::simulate;
use ursa_emit::elf;
use ursa_sim::Program;

#[allow(dead_code)]
#[path = "../../backend/benches/support/scaling_families.rs"]
mod scaling_families;
use scaling_families::{expected, source};

const N: usize = 32_000;

/// Compiles family `kind` at size N (allocation checked) at `opt_level=none`
/// and runs it on each of `xs` against the host's result.
fn check(kind: &str, xs: &[i32]) {
    check_at(kind, OptLevel::None, xs)
}

/// [`check`] at `level`. At `speed` the mid-end runs too, except the e-graph
/// pass, which a function of this size skips (`mid::opt_egraph::EGRAPH_MAX_INSTS`).
fn check_at(kind: &str, level: OptLevel, xs: &[i32]) {
    let src = source(kind, N);
    let funcs = cranelift_reader::parse_functions(&src).expect("generated CLIF parses");
    let opts = Options { opt_level: level, check_regalloc: true, ..Options::default() };
    let c = compile(&funcs[0], &opts).expect("compiles");
    // The function's own frame (its spill slots), not the test runner's stack size.
    let program = Program::load(&elf::write(&{
        let mut obj = elf::Object { functions: vec![c.function], ..Default::default() };
        ursa_backend::link_runtime(&mut obj).unwrap();
        obj
    }))
    .expect("loads");
    for &x in xs {
        let got = simulate(&program, &funcs[0], &[DataValue::I32(x)]).expect("runs");
        assert_eq!(got, [DataValue::I32(expected(kind, N, x))], "{} at {}, x = {}", kind, N, x);
    }
}

#[test]
fn a_jump_to_32k_block_parameters() {
    check("params", &[3, -1_000_003]);
}

#[test]
fn values_32k_live_at_once() {
    check("live", &[3, -5]);
}

#[test]
fn a_chain_of_32k_blocks() {
    check("blocks", &[11]);
}

#[test]
fn dependent_instructions_32k() {
    check("insts", &[2]);
}

#[test]
fn every_family_at_opt_level_speed() {
    for (kind, x) in [("params", 3), ("live", -5), ("blocks", 11), ("insts", 2)] {
        check_at(kind, OptLevel::Speed, &[x]);
    }
}
