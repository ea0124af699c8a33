//! Functions past every size limit of the compiler's quadratic paths (issue
//! 25): one jump passing 32k values to 32k block parameters, and 32k values
//! live at once. They go to the linear register allocation with every spill
//! slot in local memory (`assign_regs_regalloc2::LINEAR_FROM`), the
//! verifier's split copy (`mid::verifier_report`) and the sparse liveness
//! (`liveness::ValueLiveness`). Each is compiled with the register
//! allocator's checker on, run on the simulator and compared with the sum
//! computed on the host. Time is measured by the `compile_scaling` bench,
//! not here.

use cranelift_codegen::data_value::DataValue;
use ursa_backend::{compile, OptLevel, Options};
use ursa_cli::filetest::simulate;
use ursa_emit::elf;
use ursa_sim::Program;

const N: usize = 32_000;

/// `f(x)`: v_i = v_(i-1) + 7 for i = 1..=n (v_0 = x) passed to n block
/// parameters, which the next block sums.
fn params(n: usize) -> String {
    let mut o = vec!["function %f(i32) -> i32 {".to_string(), "block0(v0: i32):".into(), "    v999999 = iconst.i32 7".into()];
    for i in 1..=n {
        o.push(format!("    v{} = iadd v{}, v999999", i, i - 1));
    }
    let args: Vec<String> = (1..=n).map(|i| format!("v{}", i)).collect();
    o.push(format!("    jump block1({})", args.join(", ")));
    let base = n + 1;
    let params: Vec<String> = (0..n).map(|i| format!("v{}: i32", base + i)).collect();
    o.push(format!("block1({}):", params.join(", ")));
    let mut acc = base;
    for i in 1..n {
        o.push(format!("    v{} = iadd v{}, v{}", base + n + i, acc, base + i));
        acc = base + n + i;
    }
    o.push(format!("    return v{}\n}}", acc));
    o.join("\n")
}

/// `f(x)`: v_i = x * v_(i-1) for i = 1..=n (v_0 = x), all live until summed
/// in reverse order.
fn live(n: usize) -> String {
    let mut o = vec!["function %f(i32) -> i32 {".to_string(), "block0(v0: i32):".into()];
    for i in 1..=n {
        o.push(format!("    v{} = imul v0, v{}", i, i - 1));
    }
    let mut acc = n;
    for i in (1..n).rev() {
        o.push(format!("    v{} = iadd v{}, v{}", 2 * n - i, acc, i));
        acc = 2 * n - i;
    }
    o.push(format!("    return v{}\n}}", acc));
    o.join("\n")
}

/// Compiles `src` at `level` (allocation checked) and runs it on `x`.
fn run(src: &str, level: OptLevel, x: i32) -> i32 {
    let funcs = cranelift_reader::parse_functions(src).expect("generated CLIF parses");
    let opts = Options { opt_level: level, check_regalloc: true, ..Options::default() };
    let c = compile(&funcs[0], &opts).expect("compiles");
    // The function's own frame (its spill slots), not the test runner's stack size.
    let program = Program::load(&elf::write(&elf::Object { functions: vec![c.function], ..Default::default() })).expect("loads");
    match simulate(&program, &funcs[0], &[DataValue::I32(x)]).expect("runs").as_slice() {
        [DataValue::I32(r)] => *r,
        other => panic!("unexpected results {:?}", other),
    }
}

#[test]
fn a_jump_to_32k_block_parameters() {
    for x in [3, -1_000_003] {
        let want = (1..=N as i32).fold(0i32, |s, i| s.wrapping_add(x.wrapping_add(7i32.wrapping_mul(i))));
        assert_eq!(run(&params(N), OptLevel::None, x), want, "x = {}", x);
    }
}

#[test]
fn values_32k_live_at_once() {
    for x in [3, -5] {
        let (mut p, mut want) = (x, 0i32);
        for _ in 1..=N {
            p = p.wrapping_mul(x);
            want = want.wrapping_add(p);
        }
        assert_eq!(run(&live(N), OptLevel::None, x), want, "x = {}", x);
    }
}
