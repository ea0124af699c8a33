//! `opt_step_pointers` (stepped pointers, the loop versioned on a no-wrap
//! check) against the code without the mid-end: kernels whose loops index
//! an array by `ext(c + a·k)` are launched with trip counts 0, 1, 3, 4, 5
//! and 9, negative and run-time strides, and indices that wrap in `i32`
//! near `i32::MAX` (where the check must pick the original loop, which then
//! faults at the wrapped address exactly as the unoptimized code does).
//! Outputs, or the fault, must be the same at both opt levels.

use ursa_backend::{compile, OptLevel, Options};
use ursa_emit::elf;
use ursa_sim::{Arg, Gpu, LaunchConfig, Program};

/// `out[0] = sum over k in k0..n of src[ext(c + a·k)]` (i32 counter, do-while
/// behind an `n > k0` guard), and `dst[sext(k - k0)] = src[ext(c + a·k)]`
/// for each `k` (a store in the loop too). `%divergent_versions`: each lane
/// sums `src[c + k + tid]` for `k` below `n` (even lanes) or `i32::MIN`
/// (odd lanes: `n - 1` wraps, the check fails and the original loop runs
/// once), so the lanes of one warp take both versions.
const KERNELS: &str = "
function %gather_sext(i64, i64, i32, i32, i32, i32) {
block0(v0: i64, v1: i64, v2: i32, v3: i32, v4: i32, v5: i32):
    v6 = iconst.i32 0
    v7 = icmp sgt v5, v4
    brif v7, block1(v4, v6), block2(v6)
block1(v10: i32, v11: i32):
    v12 = imul v10, v3
    v13 = iadd v2, v12
    v14 = sextend.i64 v13
    v15 = iconst.i32 2
    v16 = ishl v14, v15
    v17 = iadd v0, v16
    v18 = load.i32 aligned v17
    v19 = iadd v11, v18
    v20 = isub v10, v4
    v21 = sextend.i64 v20
    v22 = ishl v21, v15
    v23 = iadd v1, v22
    v40 = iconst.i64 8
    v41 = iadd v23, v40
    store aligned v18, v41
    v24 = iconst.i32 1
    v25 = iadd v10, v24
    v26 = icmp slt v25, v5
    brif v26, block1(v25, v19), block2(v19)
block2(v30: i32):
    store aligned v30, v1
    return
}

function %gather_uext(i64, i64, i32, i32, i32, i32) {
block0(v0: i64, v1: i64, v2: i32, v3: i32, v4: i32, v5: i32):
    v6 = iconst.i32 0
    v7 = icmp ugt v5, v4
    brif v7, block1(v4, v6), block2(v6)
block1(v10: i32, v11: i32):
    v12 = imul v3, v10
    v13 = iadd v12, v2
    v14 = uextend.i64 v13
    v15 = iconst.i64 4
    v16 = imul v14, v15
    v17 = iadd v16, v0
    v18 = load.i32 aligned v17
    v19 = iadd v11, v18
    v24 = iconst.i32 1
    v25 = iadd v10, v24
    v26 = icmp ult v25, v5
    brif v26, block1(v25, v19), block2(v19)
block2(v30: i32):
    store aligned v30, v1
    return
}

function %gather_i64(i64, i64, i64, i64, i64, i64) {
block0(v0: i64, v1: i64, v2: i64, v3: i64, v4: i64, v5: i64):
    v6 = iconst.i32 0
    v7 = icmp sgt v5, v4
    brif v7, block1(v4, v6), block2(v6)
block1(v10: i64, v11: i32):
    v12 = imul v10, v3
    v13 = iadd v2, v12
    v15 = iconst.i64 2
    v16 = ishl v13, v15
    v17 = iadd v0, v16
    v18 = load.i32 aligned v17
    v19 = iadd v11, v18
    v24 = iconst.i64 2
    v25 = iadd v10, v24
    v26 = icmp slt v25, v5
    brif v26, block1(v25, v19), block2(v19)
block2(v30: i32):
    store aligned v30, v1
    return
}

function %divergent_versions(i64, i64, i32, i32) {
    fn0 = %ursa_tid_x() -> i32
block0(v0: i64, v1: i64, v2: i32, v3: i32):
    v4 = call fn0()
    v5 = iconst.i32 1
    v6 = band v4, v5
    v7 = iconst.i32 -2147483648
    v8 = select v6, v7, v3
    v9 = iconst.i32 0
    jump block1(v9, v9)
block1(v10: i32, v11: i32):
    v12 = iadd v2, v10
    v13 = iadd v12, v4
    v14 = sextend.i64 v13
    v15 = iconst.i32 2
    v16 = ishl v14, v15
    v17 = iadd v0, v16
    v18 = load.i32 aligned v17
    v19 = iadd v11, v18
    v20 = iconst.i32 1
    v21 = iadd v10, v20
    v22 = icmp slt v21, v8
    brif v22, block1(v21, v19), block2(v19)
block2(v30: i32):
    v31 = uextend.i64 v4
    v32 = iconst.i32 2
    v33 = ishl v31, v32
    v34 = iadd v1, v33
    store aligned v30, v34
    return
}
";

fn program(level: OptLevel) -> Program {
    let funcs = cranelift_reader::parse_functions(KERNELS).unwrap();
    let obj = elf::Object {
        functions: funcs
            .iter()
            .map(|f| {
                compile(f, &Options { kernel: true, check_regalloc: true, opt_level: level, ..Default::default() })
                    .expect("compiles")
                    .function
            })
            .collect(),
        ..Default::default()
    };
    let mut obj = obj;
    ursa_backend::link_runtime(&mut obj).unwrap();
    Program::load(&elf::write(&obj)).unwrap()
}

/// The source array (64 words), at `base`; `origin` is the element index 0
/// is placed at (the kernel's pointer is `base - 4·origin`, wrapping).
const LEN: u64 = 64;

/// Runs `kernel` with the index parameters; the output words or the fault.
fn run(prog: &Program, kernel: &str, origin: i64, params: &[i64]) -> Result<Vec<u8>, String> {
    run_threads(prog, kernel, origin, params, 1)
}

fn run_threads(prog: &Program, kernel: &str, origin: i64, params: &[i64], threads: u32) -> Result<Vec<u8>, String> {
    let mut gpu = Gpu::new();
    let src = gpu.alloc(4 * LEN, 8);
    let words: Vec<u8> = (0..LEN as i32).flat_map(|i| (i * 7 + 3).to_le_bytes()).collect();
    gpu.write(src, &words).unwrap();
    let dst = gpu.alloc(8 + 4 * LEN, 8);
    gpu.write(dst, &vec![0xee; 8 + 4 * LEN as usize]).unwrap();
    let base = src.wrapping_sub((origin as u64).wrapping_mul(4));
    let mut args = vec![Arg::Ptr(base), Arg::Ptr(dst)];
    let wide = kernel.ends_with("i64");
    args.extend(params.iter().map(|&p| if wide { Arg::I64(p) } else { Arg::I32(p as i32) }));
    let cfg = LaunchConfig { grid: [1, 1, 1], block: [threads, 1, 1], strict: true, ..Default::default() };
    match gpu.launch(prog, kernel, &cfg, &args) {
        Ok(_) => Ok(gpu.read(dst, 8 + 4 * LEN).unwrap()),
        Err(t) => Err(t.kind.to_string()),
    }
}

/// (kernel, origin, [c, a, k0, n]) launches: both opt levels must agree.
fn cases() -> Vec<(&'static str, i64, [i64; 4])> {
    let mut out = Vec::new();
    for n in [0, 1, 3, 4, 5, 9] {
        // Forward, backward (negative stride), stride 3, a start past 0.
        out.push(("gather_sext", 0, [0, 1, 0, n]));
        out.push(("gather_sext", 0, [n.max(1) - 1, -1, 0, n]));
        out.push(("gather_sext", 0, [1, 3, 0, n]));
        out.push(("gather_sext", 0, [-5, 1, 7, 7 + n]));
        out.push(("gather_uext", 0, [2, 1, 0, n]));
        out.push(("gather_uext", 0, [40, -2, 0, n]));
        out.push(("gather_i64", 0, [0, 1, 0, 2 * n]));
        out.push(("gather_i64", 0, [60, -3, 0, 2 * n]));
    }
    let max = i64::from(i32::MAX);
    // Near i32::MAX without a wrap: the stepped loop.
    out.push(("gather_sext", max - 4, [max - 4, 1, 0, 5]));
    out.push(("gather_sext", 0, [-(max - 9), 1, max - 9, max]));
    out.push(("gather_sext", 0, [-(max - 3), 1, max - 3, max]));
    // Wrapping: c + k passes i32::MAX (sextend) or u32::MAX (uextend) in
    // the third iteration; the original loop runs and faults there.
    out.push(("gather_sext", max - 1, [max - 1, 1, 0, 5]));
    out.push(("gather_sext", max - 1, [max - 1, 1, 0, 2]));
    out.push(("gather_sext", i64::from(i32::MIN) + 2, [i64::from(i32::MIN) + 2, -1, 0, 5]));
    out.push(("gather_uext", 0xffff_fffe, [0xffff_fffe, 1, 0, 5]));
    out.push(("gather_uext", 0xffff_fffe, [0xffff_fffe, 1, 0, 2]));
    // The product a·k wraps but c + a·k does not (an exact index).
    out.push(("gather_sext", 0, [-(1 << 30) * 2 + 8, 1 << 30, 2, 3]));
    out
}

#[test]
fn step_pointers_agree_with_the_unoptimized_code() {
    let (fast, plain) = (program(OptLevel::Speed), program(OptLevel::None));
    let mut faults = 0;
    for (kernel, origin, p) in cases() {
        let a = run(&fast, kernel, origin, &p);
        let b = run(&plain, kernel, origin, &p);
        assert_eq!(a, b, "{} origin {} params {:?}", kernel, origin, p);
        faults += usize::from(a.is_err());
    }
    // The wrapping launches fault (the test would not see a wrong version choice otherwise).
    assert_eq!(faults, 3);
}

#[test]
fn lanes_of_one_warp_take_both_versions() {
    let (fast, plain) = (program(OptLevel::Speed), program(OptLevel::None));
    for (c, n) in [(0, 5), (3, 1), (0, 9)] {
        let a = run_threads(&fast, "divergent_versions", 0, &[c, n], 32);
        assert_eq!(a, run_threads(&plain, "divergent_versions", 0, &[c, n], 32), "c {} n {}", c, n);
        // Lane 0 summed n elements, lane 1 one.
        let w = a.expect("runs");
        let word = |k: usize| i32::from_le_bytes(w[4 * k..4 * k + 4].try_into().unwrap());
        let src = |i: i64| (i * 7 + 3) as i32;
        assert_eq!(word(0), (c..c + n).map(src).sum::<i32>());
        assert_eq!(word(1), src(c + 1));
    }
}
