//! Integer division against the host, on the simulator: one kernel per
//! operation and type (`c[i] = a[i] OP b[i]`), launched over many threads,
//! each thread a different operand pair, compared with Rust's
//! `wrapping_div`/`wrapping_rem`.
//!
//! * i8: every dividend/divisor pair, all four operations;
//! * i16: every divisor with sampled dividends; and every pair checked
//!   inside a kernel against a floating-point reference (each thread one
//!   divisor, looping over all 65 536 dividends: edge and sampled divisors
//!   in `cargo test`, all 65 535 nonzero divisors with `URSA_DIV_I16_ALL=1`);
//! * i32, i64: edge values crossed with edge values, plus random pairs of
//!   random widths (`URSA_DIV_SAMPLES`, default 20 000 per operation).
//!
//! The pairs that trap (divisor 0, `sdiv MIN, -1`) are left out here and
//! covered by the filetests (`tests/filetests/div/`). The large run is
//! documented in `docs/testing.md`.

mod common;
use common::elementwise_kernel;
use proptest::prelude::Rng as _;
use proptest::test_runner::{RngAlgorithm, TestRng};
use ursa_backend::{compile, Options};
use ursa_emit::elf;
use ursa_sim::{Arg, Gpu, LaunchConfig, Program};

const OPS: [&str; 4] = ["udiv", "sdiv", "urem", "srem"];

fn kernel(ty: &str, op: &str) -> Program {
    let src = elementwise_kernel("k", ty, &format!("v17 = {} v15, v16", op));
    let funcs = cranelift_reader::parse_functions(&src).unwrap();
    let c = compile(&funcs[0], &Options { kernel: true, check_regalloc: true, ..Default::default() }).expect("compiles");
    Program::load(&elf::write(&{
        let mut obj = elf::Object { functions: vec![c.function], ..Default::default() };
        ursa_backend::link_runtime(&mut obj).unwrap();
        obj
    }))
    .unwrap()
}

fn bits(ty: &str) -> u32 {
    ty[1..].parse().unwrap()
}

fn mask(b: u32) -> u64 {
    u64::MAX >> (64 - b)
}

/// The host's answer, or None for the pairs that trap.
fn host(b: u32, op: &str, x: u64, d: u64) -> Option<u64> {
    let m = mask(b);
    let (x, d) = (x & m, d & m);
    if d == 0 {
        return None;
    }
    let s = |v: u64| ((v << (64 - b)) as i64) >> (64 - b);
    let r = match op {
        "udiv" => x / d,
        "urem" => x % d,
        "sdiv" => {
            if s(x) == i64::MIN >> (64 - b) && s(d) == -1 {
                return None;
            }
            s(x).wrapping_div(s(d)) as u64
        }
        "srem" => s(x).wrapping_rem(s(d)) as u64,
        _ => unreachable!(),
    };
    Some(r & m)
}

/// Runs `op` over the pairs (in chunks of at most 2^20 threads) and checks
/// every result; returns the number of pairs checked.
fn check(ty: &str, op: &str, prog: &Program, pairs: &[(u64, u64)]) -> usize {
    let b = bits(ty);
    let size = (b / 8) as usize;
    let pairs: Vec<(u64, u64)> = pairs.iter().copied().filter(|&(x, d)| host(b, op, x, d).is_some()).collect();
    for chunk in pairs.chunks(1 << 20) {
        let mut gpu = Gpu::new();
        let n = chunk.len();
        let enc = |f: &dyn Fn(&(u64, u64)) -> u64| -> Vec<u8> { chunk.iter().flat_map(|p| f(p).to_le_bytes()[..size].to_vec()).collect() };
        let pa = gpu.alloc((n * size) as u64, 8);
        let pb = gpu.alloc((n * size) as u64, 8);
        let pc = gpu.alloc((n * size) as u64, 8);
        gpu.write(pa, &enc(&|p| p.0)).unwrap();
        gpu.write(pb, &enc(&|p| p.1)).unwrap();
        let block = 256u32;
        let cfg = LaunchConfig { grid: [(n as u32).div_ceil(block), 1, 1], block: [block, 1, 1], strict: true, ..Default::default() };
        gpu.launch(prog, "k", &cfg, &[Arg::Ptr(pa), Arg::Ptr(pb), Arg::Ptr(pc), Arg::I32(n as i32)])
            .unwrap_or_else(|t| panic!("{op}.{ty}: {t}"));
        let out = gpu.read(pc, (n * size) as u64).unwrap();
        for (i, &(x, d)) in chunk.iter().enumerate() {
            let mut w = [0u8; 8];
            w[..size].copy_from_slice(&out[i * size..(i + 1) * size]);
            let got = u64::from_le_bytes(w);
            let want = host(b, op, x, d).unwrap();
            assert_eq!(got, want, "{op}.{ty} {x:#x}, {d:#x}: got {got:#x}, want {want:#x}");
        }
    }
    pairs.len()
}

/// Deterministic operands: proptest's XorShift generator from a fixed seed.
struct Rng(TestRng);
impl Rng {
    fn new(seed: u64) -> Rng {
        let mut s = [0u8; 16];
        s[..8].copy_from_slice(&seed.to_le_bytes());
        s[8..].copy_from_slice(&(!seed).to_le_bytes());
        Rng(TestRng::from_seed(RngAlgorithm::XorShift, &s))
    }
    fn next(&mut self) -> u64 {
        self.0.next_u64()
    }
    /// A value of random width (so small and large magnitudes both occur),
    /// negated half of the time.
    fn operand(&mut self, b: u32) -> u64 {
        let v = self.next();
        let w = 1 + (self.next() % b as u64) as u32;
        let v = v & mask(w);
        let v = if self.next() & 1 != 0 { v.wrapping_neg() } else { v };
        v & mask(b)
    }
}

/// Edge values of a `b`-bit type: 0, ±1, ±2, MIN, MAX and their neighbours,
/// powers of two and their neighbours, values near 2^32 for i64.
fn edges(b: u32) -> Vec<u64> {
    let m = mask(b);
    let mut v = vec![0, 1, 2, 3, 5, 7, 10, m, m - 1, m - 2];
    for s in 1..b {
        let p = 1u64 << s;
        v.extend([p - 1, p, p + 1, p.wrapping_neg() & m, (p + 1).wrapping_neg() & m, (p - 1).wrapping_neg() & m]);
    }
    v.extend([0x5555_5555_5555_5555 & m, 0xaaaa_aaaa_aaaa_aaaa & m, 0x1234_5678_9abc_def0 & m]);
    v.sort();
    v.dedup();
    v
}

fn samples() -> usize {
    std::env::var("URSA_DIV_SAMPLES").ok().and_then(|s| s.parse().ok()).unwrap_or(20_000)
}

#[test]
fn i8_every_pair() {
    let pairs: Vec<(u64, u64)> = (0..1u64 << 16).map(|i| (i & 0xff, i >> 8)).collect();
    for op in OPS {
        let n = check("i8", op, &kernel("i8", op), &pairs);
        assert!(n >= 65536 - 257, "{op}: {n} pairs");
    }
}

#[test]
fn i16_every_divisor() {
    let all = std::env::var("URSA_DIV_I16_ALL").is_ok_and(|v| v == "1");
    let mut rng = Rng::new(0x1616_1616_1616_1616);
    for op in OPS {
        let prog = kernel("i16", op);
        if all {
            for x in 0..1u64 << 16 {
                let pairs: Vec<(u64, u64)> = (0..1u64 << 16).map(|d| (x, d)).collect();
                check("i16", op, &prog, &pairs);
            }
            continue;
        }
        let xs = edges(16);
        let mut pairs = Vec::new();
        for d in 0..1u64 << 16 {
            pairs.push((xs[(d as usize) % xs.len()], d));
            for _ in 0..3 {
                pairs.push((rng.next() & 0xffff, d));
            }
        }
        check("i16", op, &prog, &pairs);
    }
}

/// The kernel `%k(divisors, fails, n)` for the i16 `op`: thread `i < n`
/// divides every i16 dividend by `divisors[i]` (an i32 holding the i16) and
/// counts in `fails[i]` the results that differ from a reference computed
/// another way: the quotient `trunc(f64(x) / f64(d))` (exact: for 16-bit
/// operands no quotient lies within 2^-32 of an integer it is not equal to,
/// far above f64's rounding error), the remainder `x - q*d`. `sdiv MIN, -1`
/// (which traps) is skipped.
fn i16_kernel(op: &str) -> Program {
    let signed = op.starts_with('s');
    let (cvt, rem) = (if signed { "fcvt_from_sint" } else { "fcvt_from_uint" }, op.ends_with("rem"));
    let skip = if op == "sdiv" {
        "    v50 = iconst.i16 -32768\n    v51 = icmp eq v23, v50\n    v52 = iconst.i16 -1\n    v53 = icmp eq v14, v52\n    v54 = band v51, v53\n    brif v54, block3(v22), block6\n"
    } else {
        "    jump block6\n"
    };
    let refv = if rem { "v31" } else { "v29" };
    let rem_ref = if rem { "    v30 = imul v29, v14\n    v31 = isub v23, v30\n" } else { "" };
    let src = format!(
        "function %k(i64, i64, i32) {{
    fn0 = %ursa_tid_x() -> i32
    fn1 = %ursa_ctaid_x() -> i32
    fn2 = %ursa_ntid_x() -> i32
block0(v0: i64, v1: i64, v2: i32):
    v4 = call fn0()
    v5 = call fn1()
    v6 = call fn2()
    v7 = imul v5, v6
    v8 = iadd v7, v4
    v9 = icmp ult v8, v2
    brif v9, block1, block4
block1:
    v10 = uextend.i64 v8
    v60 = iconst.i64 2
    v11 = ishl v10, v60
    v12 = iadd v0, v11
    v13 = load.i32 aligned v12
    v14 = ireduce.i16 v13
    v15 = {cvt}.f64 v14
    v20 = iconst.i32 0
    jump block2(v20, v20)
block2(v21: i32, v22: i32):
    v23 = ireduce.i16 v21
{skip}block6:
    v24 = {op} v23, v14
    v25 = {cvt}.f64 v23
    v26 = fdiv v25, v15
    v27 = trunc v26
    v28 = fcvt_to_sint.i32 v27
    v29 = ireduce.i16 v28
{rem_ref}    v32 = icmp ne v24, {refv}
    v33 = uextend.i32 v32
    v34 = iadd v22, v33
    jump block3(v34)
block3(v35: i32):
    v36 = iconst.i32 1
    v37 = iadd v21, v36
    v38 = iconst.i32 65536
    v39 = icmp ult v37, v38
    brif v39, block2(v37, v35), block5(v35)
block5(v40: i32):
    v41 = iadd v1, v11
    store aligned v40, v41
    jump block4
block4:
    return
}}
"
    );
    let funcs = cranelift_reader::parse_functions(&src).unwrap_or_else(|e| panic!("{e}\n{src}"));
    let c = compile(&funcs[0], &Options { kernel: true, ..Default::default() }).expect("compiles");
    Program::load(&elf::write(&{
        let mut obj = elf::Object { functions: vec![c.function], ..Default::default() };
        ursa_backend::link_runtime(&mut obj).unwrap();
        obj
    }))
    .unwrap()
}

/// Every i16 dividend against each divisor of `divisors` (nonzero), for
/// every operation, checked in the kernel (`i16_kernel`); returns the pairs
/// checked per operation.
fn i16_all_dividends(divisors: &[u16]) -> u64 {
    let n = divisors.len();
    // `URSA_DIV_OPS=srem,urem` restricts the (long) exhaustive run to some
    // operations; unset, all four run.
    let only = std::env::var("URSA_DIV_OPS").ok();
    for op in OPS.into_iter().filter(|op| only.as_deref().is_none_or(|l| l.split(',').any(|o| o == *op))) {
        let prog = i16_kernel(op);
        let mut gpu = Gpu::new();
        let pd = gpu.alloc((4 * n) as u64, 8);
        gpu.write(pd, &divisors.iter().flat_map(|&d| (d as i16 as i32).to_le_bytes()).collect::<Vec<u8>>()).unwrap();
        let pf = gpu.alloc((4 * n) as u64, 8);
        gpu.write(pf, &vec![0xffu8; 4 * n]).unwrap();
        let block = 64u32;
        let cfg = LaunchConfig { grid: [(n as u32).div_ceil(block), 1, 1], block: [block, 1, 1], step_limit: None, ..Default::default() };
        gpu.launch(&prog, "k", &cfg, &[Arg::Ptr(pd), Arg::Ptr(pf), Arg::I32(n as i32)]).unwrap_or_else(|t| panic!("{op}.i16: {t}"));
        let fails = gpu.read(pf, (4 * n) as u64).unwrap();
        for (i, w) in fails.chunks(4).enumerate() {
            let f = u32::from_le_bytes(w.try_into().unwrap());
            assert_eq!(f, 0, "{op}.i16 by {:#x}: {f} of the 65536 dividends give a wrong result", divisors[i]);
        }
        eprintln!("{op}.i16: {} divisors x 65536 dividends, 0 wrong", n);
    }
    n as u64 * 65536
}

#[test]
fn i16_every_dividend_in_kernel() {
    let divisors: Vec<u16> = if std::env::var("URSA_DIV_I16_ALL").is_ok_and(|v| v == "1") {
        (1..=u16::MAX).collect()
    } else {
        let mut rng = Rng::new(0x1616_0000_1616_0000);
        let mut d: Vec<u16> = edges(16).into_iter().map(|x| x as u16).filter(|&x| x != 0).collect();
        d.extend((0..32).map(|_| (rng.next() as u16).max(1)));
        d
    };
    let n = i16_all_dividends(&divisors);
    eprintln!("i16: {n} pairs per operation, checked in the kernel");
}

fn sampled(ty: &str, seed: u64) {
    let b = bits(ty);
    let e = edges(b);
    let mut rng = Rng::new(seed);
    for op in OPS {
        let prog = kernel(ty, op);
        let mut pairs: Vec<(u64, u64)> = Vec::new();
        for &x in &e {
            for &d in &e {
                pairs.push((x, d));
            }
        }
        for _ in 0..samples() {
            pairs.push((rng.operand(b), rng.operand(b)));
            // Dividends near multiples of the divisor, where a quotient
            // estimate that is one off shows.
            let d = rng.operand(b);
            if d != 0 {
                let q = rng.next() % (mask(b) / d).max(1);
                let x = q.wrapping_mul(d);
                pairs.push((x & mask(b), d));
                pairs.push((x.wrapping_sub(1) & mask(b), d));
            }
        }
        let n = check(ty, op, &prog, &pairs);
        eprintln!("{op}.{ty}: {n} pairs");
    }
}

#[test]
fn i32_sampled() {
    sampled("i32", 0x3232_3232_0bad_cafe);
}

#[test]
fn i64_sampled() {
    sampled("i64", 0x6464_6464_0bad_cafe);
}

/// The reciprocal of `isel/src/rules/div.rs` modelled in Rust, step by
/// step, for an `n`-bit divisor `d` (n = 32 or 64), with MUFU.RCP's result
/// moved by `ulps` units in the last place (0 is the simulator's correctly
/// rounded reciprocal; ±1 stands for a hardware unit with one ulp of
/// error). Returns the final `y` (after one Newton step for 32 bits, two for
/// 64).
fn model_recip(n: u32, d: u64, ulps: i32) -> u64 {
    let m = mask(n);
    // I2F.RP.F32: round to nearest, then up if that fell below d.
    let mut f = d as f32;
    if (f as f64 as u128) < d as u128 {
        f = f32::from_bits(f.to_bits() + 1);
    }
    // MUFU.RCP: binary64 1/f rounded once to F32, then perturbed.
    let r = ((1.0f64 / f as f64) as f32).to_bits().wrapping_add_signed(ulps);
    // IADD 0x0ffffffe / 0x1ffffffe: exponent + n, mantissa - 2.
    let s = f32::from_bits(r.wrapping_add(if n == 32 { 0x0fff_fffe } else { 0x1fff_fffe }));
    // F2I.RZ.U32/U64 (saturating).
    let mut y = if n == 32 { s as u32 as u64 } else { s as u64 };
    let nd = d.wrapping_neg() & m;
    for _ in 0..(n / 32) {
        let e = nd.wrapping_mul(y) & m;
        let hi = ((y as u128 * e as u128) >> n) as u64;
        y = y.wrapping_add(hi) & m;
    }
    y
}

/// The bound the two corrections need: `0 <= 2^n - d*y < 2d`, i.e.
/// `2^n/d - 2 < y <= 2^n/d`. Then for every `n`-bit dividend `x`,
/// `q = hi(x*y)` satisfies `q <= x/d < q + 3` (docs/division.md), and two
/// conditional increments give the exact quotient.
fn recip_ok(n: u32, d: u64, y: u64) -> bool {
    let p = d as u128 * y as u128;
    p <= 1u128 << n && (1u128 << n) - p < 2 * d as u128
}

fn check_recip(n: u32, d: u64) {
    for ulps in [-1, 0, 1] {
        let y = model_recip(n, d, ulps);
        assert!(recip_ok(n, d, y), "{n}-bit reciprocal of {d:#x} (RCP {ulps:+} ulp): y = {y:#x}");
    }
}

/// Divisors tested: every one below 2^20, every one within 1000 of a power
/// of two, and random ones (every one of the 2^32 with
/// `URSA_DIV_RCP_ALL=1`).
#[test]
fn reciprocal_bound_32() {
    if std::env::var("URSA_DIV_RCP_ALL").is_ok_and(|v| v == "1") {
        for d in 1..=u32::MAX as u64 {
            check_recip(32, d);
        }
        return;
    }
    for d in 1..1u64 << 20 {
        check_recip(32, d);
    }
    for s in 20..=32 {
        let p = 1u64 << s;
        for k in 0..1000 {
            for d in [p - k, p + k] {
                if (1..=u32::MAX as u64).contains(&d) {
                    check_recip(32, d);
                }
            }
        }
    }
    let mut rng = Rng::new(0x3232_1111_2222_3333);
    for _ in 0..1_000_000 {
        let d = rng.next() & mask(32);
        if d != 0 {
            check_recip(32, d);
        }
    }
}

#[test]
fn reciprocal_bound_64() {
    for d in 1..1u64 << 16 {
        check_recip(64, d);
    }
    for s in 16..64 {
        let p = 1u64 << s;
        for k in 0..300 {
            check_recip(64, p - k);
            check_recip(64, p + k);
        }
    }
    for k in 0..300 {
        check_recip(64, u64::MAX - k);
    }
    let mut rng = Rng::new(0x6464_1111_2222_3333);
    for _ in 0..1_000_000 {
        let d = rng.operand(64);
        if d != 0 {
            check_recip(64, d);
        }
    }
}

/// The model itself can fail: without the Newton step (or with an estimate
/// that is too large) the bound does not hold.
#[test]
fn reciprocal_bound_is_not_vacuous() {
    // No Newton step: trunc(2^32/d · (1-ε)) is far below 2^32/d for small d.
    let d = 3u64;
    let f = 3.0f32;
    let s = f32::from_bits(((1.0f64 / f as f64) as f32).to_bits() + 0x0fff_fffe);
    assert!(!recip_ok(32, d, s as u32 as u64));
    // An estimate above 2^n/d breaks the other side.
    assert!(!recip_ok(32, 3, 0x5555_5556));
    assert!(recip_ok(32, 3, 0x5555_5555));
}
