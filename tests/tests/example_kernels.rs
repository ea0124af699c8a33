//! Every example kernel of `examples/kernels/` compiled and launched on the
//! simulator (strict hazard mode) over a multi-CTA grid whose last CTA is
//! partial, with seeded random inputs that include edge values; every output
//! element is compared with a host computation, and the elements past the end
//! must be untouched. Also checks the figures `kernel-table` prints.

use proptest::prelude::RngExt;
use proptest::test_runner::{RngAlgorithm, TestRng};
use ursa_emit::elf;
use ursa_sim::{Arg, Gpu, LaunchConfig, Program};
use ursa_tests::kernels::{
    compile_file, example_files, examples_dir, geometric_mean, parse_ptxas_csv, render_table, static_counts, TableRow,
};

/// Extra elements after every output buffer, which no thread may write.
const PAD: usize = 5;

trait Elem: Copy + PartialEq + std::fmt::Debug {
    const SIZE: usize;
    /// The value the output buffers are filled with before a launch.
    const SENTINEL: Self;
    fn put(self, out: &mut Vec<u8>);
    fn get(b: &[u8]) -> Self;
}

macro_rules! elem {
    ($t:ty, $s:expr) => {
        impl Elem for $t {
            const SIZE: usize = std::mem::size_of::<$t>();
            const SENTINEL: Self = $s;
            fn put(self, out: &mut Vec<u8>) {
                out.extend_from_slice(&self.to_le_bytes());
            }
            fn get(b: &[u8]) -> Self {
                <$t>::from_le_bytes(b.try_into().unwrap())
            }
        }
    };
}
elem!(i32, 0x5a5a_5a5a);
elem!(u32, 0xa5a5_a5a5);
elem!(i64, 0x5a5a_5a5a_5a5a_5a5a);
elem!(u64, 0xa5a5_a5a5_a5a5_a5a5);

fn rng(seed: u8) -> TestRng {
    TestRng::from_seed(RngAlgorithm::ChaCha, &[seed; 32])
}

fn program(file: &str) -> Program {
    let kernels = compile_file(&examples_dir().join(file)).unwrap();
    let functions = kernels.into_iter().map(|k| k.result.unwrap_or_else(|e| panic!("{}: %{}: {}", file, k.name, e))).collect();
    let mut obj = elf::Object { functions, ..Default::default() };
    ursa_backend::link_runtime(&mut obj).unwrap();
    Program::load(&elf::write(&obj)).unwrap()
}

fn upload<T: Elem>(gpu: &mut Gpu, v: &[T]) -> u64 {
    let mut bytes = Vec::with_capacity(v.len() * T::SIZE);
    v.iter().for_each(|x| x.put(&mut bytes));
    let p = gpu.alloc(bytes.len().max(1) as u64, 8);
    gpu.write(p, &bytes).unwrap();
    p
}

/// An output buffer of `n + PAD` sentinels.
fn output<T: Elem>(gpu: &mut Gpu, n: usize) -> u64 {
    upload(gpu, &vec![T::SENTINEL; n + PAD])
}

/// Reads the `n + PAD` elements of an output buffer and checks them against
/// `want` (its first `n` elements) and the sentinel (the rest).
fn check<T: Elem>(gpu: &mut Gpu, at: u64, want: &[T], what: &str) {
    let n = want.len();
    let got: Vec<T> = gpu.read(at, ((n + PAD) * T::SIZE) as u64).unwrap().chunks(T::SIZE).map(T::get).collect();
    for i in 0..n {
        assert_eq!(got[i], want[i], "{}[{}]", what, i);
    }
    for (i, g) in got.iter().enumerate().skip(n) {
        assert_eq!(*g, T::SENTINEL, "{}[{}] is past n = {} and was written", what, i, n);
    }
}

/// 1-D launch of `n` threads' worth of CTAs of `block` threads, the last one
/// partial.
fn cfg_1d(n: usize, block: u32) -> LaunchConfig {
    let grid = (n as u32).div_ceil(block).max(1);
    assert!(n as u32 % block != 0, "the last CTA must be partial");
    LaunchConfig { grid: [grid, 1, 1], block: [block, 1, 1], strict: true, ..Default::default() }
}

const N: usize = 300;
const BLOCK: u32 = 128;

/// `n` values from `gen`, with `edges` written at the start and again at the
/// end (so they also run in the partial CTA).
fn with_edges<T: Copy>(n: usize, edges: &[T], mut gen: impl FnMut() -> T) -> Vec<T> {
    let mut v: Vec<T> = (0..n).map(|_| gen()).collect();
    for (i, &e) in edges.iter().enumerate() {
        v[i] = e;
        v[n - 1 - i] = e;
    }
    v
}

/// Pairs (a, b) with every combination of the two edge lists at the start and
/// at the end, random values (from `gen`) elsewhere.
fn pairs_with_edges<T: Copy>(n: usize, ea: &[T], eb: &[T], mut gen: impl FnMut() -> (T, T)) -> (Vec<T>, Vec<T>) {
    let (mut a, mut b): (Vec<T>, Vec<T>) = (0..n).map(|_| gen()).unzip();
    let combos: Vec<(T, T)> = ea.iter().flat_map(|&x| eb.iter().map(move |&y| (x, y))).collect();
    assert!(2 * combos.len() <= n);
    for (i, &(x, y)) in combos.iter().enumerate() {
        (a[i], b[i]) = (x, y);
        (a[n - 1 - i], b[n - 1 - i]) = (x, y);
    }
    (a, b)
}

/// A random i32: a small value a quarter of the time, else any.
fn any_i32(r: &mut TestRng) -> i32 {
    if r.random_range(0..4) == 0 {
        r.random_range(-300..300)
    } else {
        r.random()
    }
}

/// A random i64 of random magnitude (any bit width up to 64).
fn any_i64(r: &mut TestRng) -> i64 {
    r.random::<i64>() >> r.random_range(0..64)
}

const EDGES_I32: &[i32] = &[0, 1, -1, 2, i32::MAX, i32::MIN, i32::MIN + 1, 0x0001_0000, -0x8000];
const EDGES_I64: &[i64] = &[0, 1, -1, i64::MAX, i64::MIN, i64::MIN + 1, i32::MAX as i64, i32::MIN as i64, 1 << 32, u32::MAX as i64];

/// With n <= 0 (the bound check is a signed compare) no thread writes.
fn launch_nothing(gpu: &mut Gpu, prog: &Program, name: &str, args: impl Fn(i32) -> Vec<Arg>, outs: &[u64], elem: usize) {
    for n in [0, -1, i32::MIN] {
        let before: Vec<Vec<u8>> = outs.iter().map(|&o| gpu.read(o, ((N + PAD) * elem) as u64).unwrap()).collect();
        gpu.launch(prog, name, &cfg_1d(N, BLOCK), &args(n)).unwrap_or_else(|t| panic!("{} with n = {}: {}", name, n, t));
        for (o, b) in outs.iter().zip(before) {
            assert_eq!(gpu.read(*o, ((N + PAD) * elem) as u64).unwrap(), b, "{} with n = {} wrote memory", name, n);
        }
    }
}

#[test]
fn vadd_i32() {
    let prog = program("vadd_i32.clif");
    let mut r = rng(1);
    let (a, b) = pairs_with_edges(N, EDGES_I32, &[0, -1, i32::MAX, i32::MIN], || (any_i32(&mut r), any_i32(&mut r)));
    let mut gpu = Gpu::new();
    let (pa, pb, pc) = (upload(&mut gpu, &a), upload(&mut gpu, &b), output::<i32>(&mut gpu, N));
    let args = |n: i32| vec![Arg::Ptr(pa), Arg::Ptr(pb), Arg::Ptr(pc), Arg::I32(n)];
    gpu.launch(&prog, "vadd_i32", &cfg_1d(N, BLOCK), &args(N as i32)).expect("runs");
    let want: Vec<i32> = (0..N).map(|i| a[i].wrapping_add(b[i])).collect();
    check(&mut gpu, pc, &want, "c");
    launch_nothing(&mut gpu, &prog, "vadd_i32", args, &[pc], 4);
}

#[test]
fn uniform_math() {
    let prog = program("uniform_math.clif");
    let mut r = rng(2);
    let a = with_edges(N, EDGES_I32, || any_i32(&mut r));
    let mut gpu = Gpu::new();
    let pa = upload(&mut gpu, &a);
    // Scalars: edge triples (p*q and the sums wrap) and seeded random ones.
    let mut scalars = vec![(0, 0, 0), (i32::MAX, 2, 1), (i32::MIN, -1, -1), (-7, 65537, i32::MAX), (1, 1, i32::MIN)];
    scalars.extend((0..3).map(|_| (any_i32(&mut r), any_i32(&mut r), any_i32(&mut r))));
    for (p, q, s) in scalars {
        let po = output::<i32>(&mut gpu, N);
        let args = |n: i32| vec![Arg::Ptr(pa), Arg::Ptr(po), Arg::I32(p), Arg::I32(q), Arg::I32(s), Arg::I32(n)];
        gpu.launch(&prog, "uniform_math", &cfg_1d(N, BLOCK), &args(N as i32)).expect("runs");
        let u = p.wrapping_mul(q).wrapping_add(s);
        let want: Vec<i32> = a.iter().map(|&x| x.wrapping_add(u)).collect();
        check(&mut gpu, po, &want, &format!("out (p={} q={} r={})", p, q, s));
        launch_nothing(&mut gpu, &prog, "uniform_math", args, &[po], 4);
    }
}

#[test]
fn i64_mix() {
    let prog = program("i64_mix.clif");
    let mut r = rng(3);
    let (a, b) = pairs_with_edges(N, &EDGES_I64[..7], &EDGES_I64[..7], || (any_i64(&mut r), any_i64(&mut r)));
    let mut gpu = Gpu::new();
    let (pa, pb, po) = (upload(&mut gpu, &a), upload(&mut gpu, &b), output::<i64>(&mut gpu, N));
    let args = |n: i32| vec![Arg::Ptr(pa), Arg::Ptr(pb), Arg::Ptr(po), Arg::I32(n)];
    gpu.launch(&prog, "i64_mix", &cfg_1d(N, BLOCK), &args(N as i32)).expect("runs");
    let want: Vec<i64> = (0..N).map(|i| (a[i].wrapping_mul(b[i]) >> 13).wrapping_add(if a[i] < b[i] { a[i] } else { b[i] })).collect();
    check(&mut gpu, po, &want, "out");
    launch_nothing(&mut gpu, &prog, "i64_mix", args, &[po], 8);
}

#[test]
fn bitops_i32() {
    let prog = program("bitops_i32.clif");
    let mut r = rng(4);
    let edges: &[u32] = &[0, 1, u32::MAX, 0x8000_0000, 0x7fff_ffff, 0x5555_5555, 0xaaaa_aaaa, 0x0000_ff00, 0x0100_0000];
    let a = with_edges(N, edges, || if r.random_range(0..4) == 0 { r.random::<u32>() >> r.random_range(0..32) } else { r.random() });
    let mut gpu = Gpu::new();
    let (pa, po) = (upload(&mut gpu, &a), output::<u32>(&mut gpu, N));
    let args = |n: i32| vec![Arg::Ptr(pa), Arg::Ptr(po), Arg::I32(n)];
    gpu.launch(&prog, "bitops_i32", &cfg_1d(N, BLOCK), &args(N as i32)).expect("runs");
    let want: Vec<u32> =
        a.iter().map(|&x| (x.count_ones().wrapping_add(x.leading_zeros()).wrapping_add(x.reverse_bits())) ^ x.rotate_left(7)).collect();
    check(&mut gpu, po, &want, "out");
    launch_nothing(&mut gpu, &prog, "bitops_i32", args, &[po], 4);
}

#[test]
fn sum_i64_loop() {
    let prog = program("sum_i64_loop.clif");
    let mut r = rng(5);
    // m <= 0: the loop does not run and every sum is 0 (and `a` is not read).
    for m in [13i32, 1, 4, 0, -3] {
        let len = N * m.max(0) as usize;
        let a = if len == 0 { Vec::new() } else { with_edges(len, EDGES_I64, || any_i64(&mut r)) };
        let mut gpu = Gpu::new();
        let (pa, po) = (upload(&mut gpu, &a), output::<i64>(&mut gpu, N));
        let args = |n: i32| vec![Arg::Ptr(pa), Arg::Ptr(po), Arg::I32(m), Arg::I32(n)];
        gpu.launch(&prog, "sum_i64_loop", &cfg_1d(N, BLOCK), &args(N as i32)).expect("runs");
        let m = m.max(0) as usize;
        let want: Vec<i64> = (0..N).map(|i| a[i * m..(i + 1) * m].iter().fold(0i64, |s, &x| s.wrapping_add(x))).collect();
        check(&mut gpu, po, &want, &format!("out (m = {})", m));
        launch_nothing(&mut gpu, &prog, "sum_i64_loop", args, &[po], 8);
    }
}

#[test]
fn matmul_i32() {
    let prog = program("matmul_i32.clif");
    let mut r = rng(6);
    // 16 x 8 threads per CTA; n = 37 leaves the last CTA column and row
    // partial, and one more CTA column lies wholly past n.
    for n in [37usize, 1] {
        let a = if n > 1 { with_edges(n * n, EDGES_I32, || any_i32(&mut r)) } else { vec![i32::MIN + 3] };
        let b = if n > 1 { with_edges(n * n, &EDGES_I32[2..], || any_i32(&mut r)) } else { vec![-5] };
        let mut gpu = Gpu::new();
        let (pa, pb, pc) = (upload(&mut gpu, &a), upload(&mut gpu, &b), output::<i32>(&mut gpu, n * n));
        let block = [16u32, 8, 1];
        let grid = [(n as u32).div_ceil(block[0]) + 1, (n as u32).div_ceil(block[1]), 1];
        let cfg = LaunchConfig { grid, block, strict: true, ..Default::default() };
        gpu.launch(&prog, "matmul_i32", &cfg, &[Arg::Ptr(pa), Arg::Ptr(pb), Arg::Ptr(pc), Arg::I32(n as i32)]).expect("runs");
        // The IR's i32 arithmetic is `nsw`; CLIF's wraps, and so does this.
        let want: Vec<i32> = (0..n * n)
            .map(|e| {
                let (row, col) = (e / n, e % n);
                (0..n).fold(0i32, |acc, k| acc.wrapping_add(a[row * n + k].wrapping_mul(b[k * n + col])))
            })
            .collect();
        check(&mut gpu, pc, &want, &format!("C (n = {})", n));
    }
}

#[test]
fn udiv_i32() {
    let prog = program("udiv_i32.clif");
    let mut r = rng(7);
    let ea: &[u32] = &[0, 1, 2, 7, 0x7fff_ffff, 0x8000_0000, u32::MAX - 1, u32::MAX];
    let eb: &[u32] = &[1, 2, 3, 0xffff, 0x8000_0000, 0x8000_0001, u32::MAX];
    let mut gen = || {
        let a = r.random::<u32>() >> r.random_range(0..32);
        // Divisor of random magnitude, never 0 (CLIF's udiv traps on it).
        let b = (r.random::<u32>() >> r.random_range(0..32)).max(1);
        (a, b)
    };
    let (a, b) = pairs_with_edges(N, ea, eb, &mut gen);
    let mut gpu = Gpu::new();
    let (pa, pb) = (upload(&mut gpu, &a), upload(&mut gpu, &b));
    let (pq, pr) = (output::<u32>(&mut gpu, N), output::<u32>(&mut gpu, N));
    let args = |n: i32| vec![Arg::Ptr(pa), Arg::Ptr(pb), Arg::Ptr(pq), Arg::Ptr(pr), Arg::I32(n)];
    gpu.launch(&prog, "udiv_i32", &cfg_1d(N, BLOCK), &args(N as i32)).expect("runs");
    check(&mut gpu, pq, &(0..N).map(|i| a[i] / b[i]).collect::<Vec<u32>>(), "q");
    check(&mut gpu, pr, &(0..N).map(|i| a[i] % b[i]).collect::<Vec<u32>>(), "r");
    launch_nothing(&mut gpu, &prog, "udiv_i32", args, &[pq, pr], 4);
}

#[test]
fn sdiv_i64() {
    let prog = program("sdiv_i64.clif");
    let mut r = rng(8);
    let ea: &[i64] = &[0, 1, -1, 7, -7, i64::MAX, i64::MIN, i64::MIN + 1, u32::MAX as i64, i32::MIN as i64];
    let eb: &[i64] = &[1, -1, 2, -2, 7, -7, i64::MAX, i64::MIN, 1 << 32, u32::MAX as i64, i32::MIN as i64];
    let mut gen = || {
        let a = any_i64(&mut r);
        let b = any_i64(&mut r);
        (a, if b == 0 { 3 } else { b })
    };
    let (a, mut b) = pairs_with_edges(N, ea, eb, &mut gen);
    // CLIF's sdiv traps on 0 and on INT64_MIN / -1; keep those out.
    for i in 0..N {
        if b[i] == 0 || (a[i] == i64::MIN && b[i] == -1) {
            b[i] = -3;
        }
    }
    let mut gpu = Gpu::new();
    let (pa, pb, pq) = (upload(&mut gpu, &a), upload(&mut gpu, &b), output::<i64>(&mut gpu, N));
    let args = |n: i32| vec![Arg::Ptr(pa), Arg::Ptr(pb), Arg::Ptr(pq), Arg::I32(n)];
    gpu.launch(&prog, "sdiv_i64", &cfg_1d(N, BLOCK), &args(N as i32)).expect("runs");
    check(&mut gpu, pq, &(0..N).map(|i| a[i] / b[i]).collect::<Vec<i64>>(), "q");
    launch_nothing(&mut gpu, &prog, "sdiv_i64", args, &[pq], 8);
}

/// f32 edge values as bits: zeros, denormals, max/min normal, infinities,
/// NaNs with payloads.
const EDGES_F32: &[u32] = &[
    0,
    0x8000_0000,
    1,
    0x807f_ffff,
    0x0080_0000,
    0x7f7f_ffff,
    0xff7f_ffff,
    0x7f80_0000,
    0xff80_0000,
    0x7fc0_0000,
    0x7f80_0001,
    0x3f80_0000,
];
const EDGES_F64: &[u64] = &[
    0,
    1 << 63,
    1,
    0x8010_0000_0000_0000,
    0x7fef_ffff_ffff_ffff,
    0x7ff0_0000_0000_0000,
    0xfff0_0000_0000_0000,
    0x7ff8_0000_0000_0000,
    0x7ff0_0000_0000_0001,
    0x3ff0_0000_0000_0000,
];

/// A random float of any exponent, as bits.
fn any_f32(r: &mut TestRng) -> u32 {
    r.random()
}
fn any_f64(r: &mut TestRng) -> u64 {
    r.random()
}

/// Equal as results of IEEE arithmetic: the same bits, or both NaN (a NaN
/// result's payload is the simulator's NaN rule, tested in runtime-sim).
fn same_f32(a: u32, b: u32) -> bool {
    a == b || (f32::from_bits(a).is_nan() && f32::from_bits(b).is_nan())
}
fn same_f64(a: u64, b: u64) -> bool {
    a == b || (f64::from_bits(a).is_nan() && f64::from_bits(b).is_nan())
}

/// `kernel` (saxpy_f32 / daxpy_f64: y[i] = a * x[i] + y[i]) launched once per
/// scalar `a` of `scalars` on `x`, `y` (element bits), checked with
/// `want(a, x, y)` and `same`; y is followed by PAD sentinels no thread may write.
fn axpy<T: Elem, F: Copy + std::fmt::LowerExp>(
    kernel: &str,
    x: &[T],
    y: &[T],
    scalars: &[F],
    arg: impl Fn(F) -> Arg,
    want: impl Fn(F, T, T) -> T,
    same: impl Fn(T, T) -> bool,
) {
    let prog = program(&format!("{}.clif", kernel));
    let mut gpu = Gpu::new();
    for &a in scalars {
        let padded: Vec<T> = y.iter().copied().chain(std::iter::repeat_n(T::SENTINEL, PAD)).collect();
        let (px, py) = (upload(&mut gpu, x), upload(&mut gpu, &padded));
        let args = |n: i32| vec![Arg::Ptr(px), Arg::Ptr(py), arg(a), Arg::I32(n)];
        gpu.launch(&prog, kernel, &cfg_1d(N, BLOCK), &args(N as i32)).expect("runs");
        let got: Vec<T> = gpu.read(py, ((N + PAD) * T::SIZE) as u64).unwrap().chunks(T::SIZE).map(T::get).collect();
        assert!(got[N..].iter().all(|&g| g == T::SENTINEL), "y written past n");
        for i in 0..N {
            let w = want(a, x[i], y[i]);
            assert!(same(got[i], w), "y[{}] with a = {:e}: {:?}, want {:?}", i, a, got[i], w);
        }
        launch_nothing(&mut gpu, &prog, kernel, args, &[py], T::SIZE);
    }
}

#[test]
fn saxpy_f32() {
    let mut r = rng(9);
    let (x, y) = pairs_with_edges(N, EDGES_F32, &EDGES_F32[..6], || (any_f32(&mut r), any_f32(&mut r)));
    let scalars = [1.5f32, -0.0, f32::MAX, f32::from_bits(1), f32::from_bits(any_f32(&mut r))];
    axpy("saxpy_f32", &x, &y, &scalars, Arg::F32, |a, x: u32, y: u32| a.mul_add(f32::from_bits(x), f32::from_bits(y)).to_bits(), same_f32);
}

#[test]
fn daxpy_f64() {
    let mut r = rng(10);
    let (x, y) = pairs_with_edges(N, EDGES_F64, &EDGES_F64[..6], || (any_f64(&mut r), any_f64(&mut r)));
    let scalars = [1.5f64, -0.0, f64::MAX, f64::from_bits(1), f64::from_bits(any_f64(&mut r))];
    axpy("daxpy_f64", &x, &y, &scalars, Arg::F64, |a, x: u64, y: u64| a.mul_add(f64::from_bits(x), f64::from_bits(y)).to_bits(), same_f64);
}

/// `kernel` (float4_copy / copy_f32: y[i] = x[i]) over `N` threads, each
/// copying `lanes` floats: every bit pattern (NaNs, signed zeros,
/// subnormals) arrives unchanged, nothing past the end is written.
fn copy_floats(kernel: &str, lanes: usize, seed: u8) {
    let prog = program(&format!("{}.clif", kernel));
    let mut r = rng(seed);
    let x = with_edges(N * lanes, EDGES_F32, || any_f32(&mut r));
    let mut gpu = Gpu::new();
    let (px, py) = (upload(&mut gpu, &x), output::<u32>(&mut gpu, N * lanes));
    let args = |n: i32| vec![Arg::Ptr(px), Arg::Ptr(py), Arg::I32(n)];
    gpu.launch(&prog, kernel, &cfg_1d(N, BLOCK), &args(N as i32)).expect("runs");
    check(&mut gpu, py, &x, "y");
    launch_nothing(&mut gpu, &prog, kernel, args, &[py], 4);
}

#[test]
fn float4_copy() {
    copy_floats("float4_copy", 4, 20);
}

#[test]
fn copy_f32() {
    copy_floats("copy_f32", 1, 21);
}

#[test]
fn horner_f64() {
    let prog = program("horner_f64.clif");
    let mut r = rng(11);
    let x =
        with_edges(N, EDGES_F64, || if r.random_range(0..2) == 0 { (r.random_range(-20.0..20.0f64)).to_bits() } else { any_f64(&mut r) });
    let mut gpu = Gpu::new();
    let (px, po) = (upload(&mut gpu, &x), output::<u64>(&mut gpu, N));
    let args = |n: i32| vec![Arg::Ptr(px), Arg::Ptr(po), Arg::I32(n)];
    gpu.launch(&prog, "horner_f64", &cfg_1d(N, BLOCK), &args(N as i32)).expect("runs");
    let c = [1.0 / 40320.0, 1.0 / 5040.0, 1.0 / 720.0, 1.0 / 120.0, 1.0 / 24.0, 1.0 / 6.0, 0.5, 1.0, 1.0];
    let c: Vec<f64> = c.iter().map(|&k: &f64| f64::from_bits(k.to_bits())).collect();
    let coeff = [
        f64::from_bits(0x3EFA01A01A01A01A),
        f64::from_bits(0x3F2A01A01A01A01A),
        f64::from_bits(0x3F56C16C16C16C17),
        f64::from_bits(0x3F81111111111111),
        f64::from_bits(0x3FA5555555555555),
        f64::from_bits(0x3FC5555555555555),
        c[6],
        c[7],
        c[8],
    ];
    let got: Vec<u64> = gpu.read(po, ((N + PAD) * 8) as u64).unwrap().chunks(8).map(u64::get).collect();
    for i in 0..N {
        let v = f64::from_bits(x[i]);
        let mut acc = coeff[0];
        for &k in &coeff[1..] {
            acc = acc.mul_add(v, k);
        }
        assert!(same_f64(got[i], acc.to_bits()), "out[{}] at x = {:e}: {:#x}, want {:#x}", i, v, got[i], acc.to_bits());
    }
    for g in &got[N..] {
        assert_eq!(*g, u64::SENTINEL, "written past n");
    }
    launch_nothing(&mut gpu, &prog, "horner_f64", args, &[po], 8);
}

#[test]
fn block_reduce_i32() {
    // Block size 256 (the shared array's size); 1000 elements: 4 CTAs, the
    // last with 232 live threads, the rest reading 0.
    let prog = program("block_reduce_i32.clif");
    let f = prog.function("block_reduce_i32").expect("kernel");
    assert_eq!(f.shared_size, 1024, "static shared memory recorded in the object");
    let mut r = rng(9);
    let n = 1000;
    let a = with_edges(n, EDGES_I32, || any_i32(&mut r));
    let mut gpu = Gpu::new();
    let pa = upload(&mut gpu, &a);
    let ctas = n.div_ceil(256);
    let po = output::<i32>(&mut gpu, ctas);
    gpu.launch(&prog, "block_reduce_i32", &cfg_1d(n, 256), &[Arg::Ptr(pa), Arg::Ptr(po), Arg::I32(n as i32)]).expect("runs");
    let want: Vec<i32> = a.chunks(256).map(|c| c.iter().fold(0i32, |s, &x| s.wrapping_add(x))).collect();
    check(&mut gpu, po, &want, "out");
}

/// Launches `name(a, out, n)` over blocks of 128 threads for each `n` of
/// `sizes` (inputs with edge values, seeded), `out` starting as `outs`
/// zeros followed by PAD zeros that must stay zero; checks `out` against
/// `host(a)`.
fn launch_accumulating(file: &str, name: &str, seed: u8, sizes: &[usize], outs: usize, host: impl Fn(&[i32]) -> Vec<i32>) {
    let prog = program(file);
    let mut r = rng(seed);
    for &n in sizes {
        let a = with_edges(n.max(2 * EDGES_I32.len()), EDGES_I32, || any_i32(&mut r));
        let a = &a[..n];
        let mut gpu = Gpu::new();
        let pa = upload(&mut gpu, a);
        let po = upload(&mut gpu, &vec![0i32; outs + PAD]);
        let cfg = LaunchConfig { grid: [(n as u32).div_ceil(128), 1, 1], block: [128, 1, 1], strict: true, ..Default::default() };
        gpu.launch(&prog, name, &cfg, &[Arg::Ptr(pa), Arg::Ptr(po), Arg::I32(n as i32)]).expect("runs");
        let got: Vec<i32> = gpu.read(po, ((outs + PAD) * 4) as u64).unwrap().chunks(4).map(i32::get).collect();
        assert_eq!(&got[..outs], &host(a)[..], "{} over {} elements", name, n);
        assert!(got[outs..].iter().all(|&x| x == 0), "{} wrote past its {} outputs", name, outs);
    }
}

#[test]
fn histogram_i32() {
    // Shared-memory atomics per CTA, then global atomics across 8 CTAs
    // (run in parallel by the simulator); 1000 elements, blocks of 128.
    assert_eq!(program("histogram_i32.clif").function("histogram_i32").expect("kernel").shared_size, 64);
    launch_accumulating("histogram_i32.clif", "histogram_i32", 10, &[1000, 1, 129], 16, |a| {
        let mut h = vec![0i32; 16];
        a.iter().for_each(|&x| h[(x & 15) as usize] += 1);
        h
    });
}

#[test]
fn histogram_relaxed_i32() {
    // histogram_i32 with relaxed intrinsics: ATOMS into the shared bins,
    // RED into the global ones, no fences.
    launch_accumulating("histogram_relaxed_i32.clif", "histogram_relaxed_i32", 10, &[1000, 1, 129], 16, |a| {
        let mut h = vec![0i32; 16];
        a.iter().for_each(|&x| h[(x & 15) as usize] += 1);
        h
    });
}

#[test]
fn warp_reduce_f32() {
    // f32 shuffles and one RED.ADD.F32 per warp, 8 CTAs of 128 threads. The
    // inputs are integers below 2^12, so every partial sum is exact and the
    // order of the additions does not matter.
    let prog = program("warp_reduce_f32.clif");
    let mut r = rng(13);
    for n in [1000usize, 1, 33] {
        let a: Vec<f32> = (0..n).map(|_| (any_i32(&mut r) & 0xfff) as f32 - 2048.0).collect();
        let mut gpu = Gpu::new();
        let pa = upload(&mut gpu, &a.iter().map(|x| x.to_bits()).collect::<Vec<u32>>());
        let po = upload(&mut gpu, &vec![0u32; 1 + PAD]);
        let cfg = LaunchConfig { grid: [(n as u32).div_ceil(128), 1, 1], block: [128, 1, 1], strict: true, ..Default::default() };
        gpu.launch(&prog, "warp_reduce_f32", &cfg, &[Arg::Ptr(pa), Arg::Ptr(po), Arg::I32(n as i32)]).expect("runs");
        let got: Vec<f32> =
            gpu.read(po, ((1 + PAD) * 4) as u64).unwrap().chunks(4).map(|c| f32::from_le_bytes(c.try_into().unwrap())).collect();
        assert_eq!(got[0], a.iter().sum::<f32>(), "sum over {} elements", n);
        assert!(got[1..].iter().all(|&x| x == 0.0), "wrote past its output");
    }
}

#[test]
fn warp_reduce_i32() {
    // Butterfly shuffles within each warp, one global atomic per warp, over
    // 8 CTAs of 128 threads with 1000 elements (the last CTA partly idle).
    launch_accumulating("warp_reduce_i32.clif", "warp_reduce_i32", 11, &[1000, 1, 33], 1, |a| {
        vec![a.iter().fold(0i32, |s, &x| s.wrapping_add(x))]
    });
}

/// `fdiv_f64`: correctly rounded, canonical NaN (the large sweep is
/// tests/tests/fdiv_sweep.rs).
#[test]
fn fdiv_f64() {
    let prog = program("fdiv_f64.clif");
    let mut r = rng(12);
    let (a, b) = pairs_with_edges(N, EDGES_F64, EDGES_F64, || (any_f64(&mut r), any_f64(&mut r)));
    let mut gpu = Gpu::new();
    let (pa, pb, po) = (upload(&mut gpu, &a), upload(&mut gpu, &b), output::<u64>(&mut gpu, N));
    let args = |n: i32| vec![Arg::Ptr(pa), Arg::Ptr(pb), Arg::Ptr(po), Arg::I32(n)];
    gpu.launch(&prog, "fdiv_f64", &cfg_1d(N, BLOCK), &args(N as i32)).expect("runs");
    let want: Vec<u64> = (0..N)
        .map(|i| {
            let q = f64::from_bits(a[i]) / f64::from_bits(b[i]);
            if q.is_nan() {
                0x7ff8_0000_0000_0000
            } else {
                q.to_bits()
            }
        })
        .collect();
    check(&mut gpu, po, &want, "out");
    launch_nothing(&mut gpu, &prog, "fdiv_f64", args, &[po], 8);
}

/// `sqrt_f64`: correctly rounded, canonical NaN, sqrt(-0) = -0.
#[test]
fn sqrt_f64() {
    let prog = program("sqrt_f64.clif");
    let mut r = rng(13);
    let a = with_edges(N, EDGES_F64, || any_f64(&mut r));
    let mut gpu = Gpu::new();
    let (pa, po) = (upload(&mut gpu, &a), output::<u64>(&mut gpu, N));
    let args = |n: i32| vec![Arg::Ptr(pa), Arg::Ptr(po), Arg::I32(n)];
    gpu.launch(&prog, "sqrt_f64", &cfg_1d(N, BLOCK), &args(N as i32)).expect("runs");
    let want: Vec<u64> = (0..N)
        .map(|i| {
            let q = f64::from_bits(a[i]).sqrt();
            if q.is_nan() {
                0x7ff8_0000_0000_0000
            } else {
                q.to_bits()
            }
        })
        .collect();
    check(&mut gpu, po, &want, "out");
    launch_nothing(&mut gpu, &prog, "sqrt_f64", args, &[po], 8);
}

/// `divergent_loop`: a trip count per thread (from the data and the thread
/// index), reconverged before the tail (`docs/kernels.md`, "Reconvergence";
/// the issue counts are checked in `backend/cli/tests/reconvergence.rs`).
#[test]
fn divergent_loop() {
    let prog = program("divergent_loop.clif");
    let mut r = rng(14);
    let a = with_edges(N, EDGES_I32, || any_i32(&mut r));
    let mut gpu = Gpu::new();
    let (pa, po) = (upload(&mut gpu, &a), output::<i32>(&mut gpu, N));
    gpu.launch(&prog, "divergent_loop", &cfg_1d(N, BLOCK), &[Arg::Ptr(po), Arg::Ptr(pa), Arg::I32(N as i32)]).expect("runs");
    let want: Vec<i32> = (0..N)
        .map(|i| {
            let tid = (i as u32 % BLOCK) as i32;
            let t = ((a[i] & 15) + (tid & 7)) as u32;
            let acc = (0..t).fold(0i32, |s, k| s.wrapping_add((k as i32).wrapping_mul(a[i]).wrapping_add(i as i32)));
            acc.wrapping_mul(3).wrapping_add(i as i32)
        })
        .collect();
    check(&mut gpu, po, &want, "out");
}

/// Every example file is covered by a test above.
#[test]
fn every_example_kernel_is_tested() {
    let tested = [
        "vadd_i32",
        "uniform_math",
        "i64_mix",
        "bitops_i32",
        "sum_i64_loop",
        "matmul_i32",
        "udiv_i32",
        "sdiv_i64",
        "saxpy_f32",
        "daxpy_f64",
        "float4_copy",
        "copy_f32",
        "horner_f64",
        "fdiv_f64",
        "sqrt_f64",
        "block_reduce_i32",
        "histogram_i32",
        "histogram_relaxed_i32",
        "warp_reduce_i32",
        "warp_reduce_f32",
        "divergent_loop",
    ];
    for f in example_files(&examples_dir()).unwrap() {
        let stem = f.file_stem().unwrap().to_string_lossy().to_string();
        assert!(tested.contains(&stem.as_str()), "{} has no test in tests/tests/example_kernels.rs", f.display());
    }
}

/// The counts agree with the assembler's view of a hand-written function.
#[test]
fn static_counts_of_assembled_code() {
    let src = ".kernel k\n    IMAD.WIDE.U32 R[4:5], R0, 0x10, R[6:7] ;\n    ISETP.GE.AND P3, R3, 0x100, PT ;\n    @P3 IADD R9, R3, -0x100 ;\n    ISETP.LT.AND P1, R3, R2, PT ;\n    EXIT ;\n";
    let obj = ursa_emit::asm::assemble(src, "k.s").unwrap();
    let c = static_counts(&obj.functions[0].code).unwrap();
    assert_eq!(c.instructions, 5);
    assert_eq!(c.r_regs, 10, "R9 is the highest register");
    assert_eq!((c.ur_regs, c.p_regs, c.up_regs), (0, 2, 0));
    let src = ".kernel k\n    IMAD.WIDE.U32 R[4:5], R0, 0x10, R[6:7] ;\n    EXIT ;\n";
    let c = static_counts(&ursa_emit::asm::assemble(src, "k.s").unwrap().functions[0].code).unwrap();
    assert_eq!(c.r_regs, 8, "the odd half R7 of the pair R[6:7] counts");
    assert!(static_counts(&[0u8; 20]).unwrap_err().contains("not a multiple of 16"));
}

#[test]
fn table_lists_every_kernel_and_the_geometric_mean() {
    let csv = std::fs::read_to_string(examples_dir().join("ptxas.csv")).unwrap();
    let ptxas = parse_ptxas_csv(&csv).unwrap();
    assert_eq!(ptxas.len(), 14, "ptxas.md lists fourteen kernels");
    let vadd = ptxas.iter().find(|p| p.kernel == "vadd_i32").unwrap();
    assert_eq!((vadd.sass_instructions, vadd.registers, vadd.highest_r_plus_1), (16, 12, 10));
    let rows: Vec<TableRow> = vec![
        TableRow {
            kernel: "vadd_i32".into(),
            counts: Ok(ursa_tests::kernels::StaticCounts { instructions: 32, r_regs: 5, ..Default::default() }),
        },
        TableRow {
            kernel: "i64_mix".into(),
            counts: Ok(ursa_tests::kernels::StaticCounts { instructions: 13, r_regs: 12, ..Default::default() }),
        },
        TableRow {
            kernel: "saxpy_f32".into(),
            counts: Ok(ursa_tests::kernels::StaticCounts { instructions: 150, r_regs: 8, ..Default::default() }),
        },
        TableRow { kernel: "mine".into(), counts: Err("unsupported: x".into()) },
    ];
    let t = render_table(&rows, &ptxas);
    assert!(t.contains("| vadd_i32 | 32 | 16 | 2.00 | 5 | 10 | 0.50 | 12 |"), "{}", t);
    assert!(t.contains("| i64_mix | 13 | 26 | 0.50 | 12 | 12 | 1.00 | 14 |"), "{}", t);
    assert!(t.contains("| mine | error: unsupported: x |"), "{}", t);
    // Float kernels are left out of the mean: sqrt(2.00 * 0.50) = 1.
    assert!(t.contains("over the 2 integer kernels: **1.00**"), "{}", t);
    assert!(t.contains("without an Ursa example (skipped): daxpy_f64"), "{}", t);
    assert!((geometric_mean(&[2.0, 8.0]).unwrap() - 4.0).abs() < 1e-12);
    assert!(parse_ptxas_csv("kernel,kind\n").is_err());
    assert!(parse_ptxas_csv("kernel,kind,sass_instructions,registers,highest_r_plus_1\nk,int,x,1,1\n").unwrap_err().contains("line 2"));
}

/// The table command's counts for the real examples: every kernel compiles
/// and every row has figures counted from its code.
#[test]
fn every_example_kernel_compiles_and_is_counted() {
    for f in example_files(&examples_dir()).unwrap() {
        for k in compile_file(&f).unwrap() {
            let code = k.result.unwrap_or_else(|e| panic!("{}: {}", f.display(), e));
            let c = static_counts(&code.code).unwrap();
            assert_eq!(c.instructions * ursa_emit::INST_BYTES, code.code.len());
            assert!(c.r_regs > 0 && c.p_regs > 0, "{}: {:?}", k.name, c);
        }
    }
}
