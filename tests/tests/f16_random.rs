//! `f16` through the compiler (`legalize_f16`: bits in an `i16`,
//! arithmetic through `f32`, `fma` and `f64` → `f16` rounded through
//! round-to-odd) on the simulator, against rustc_apfloat's IEEE half
//! precision (correctly rounded to nearest even; cranelift-interpreter has
//! no `f16` arithmetic). Every `f16` for the one-operand operations, seeded
//! random and edge-biased operands (rounding midpoints and the cases where
//! rounding twice would go wrong) for the others; bitwise, any NaN for a NaN
//! except the sign operations.

mod common;

use cranelift_codegen::data_value::DataValue;
use cranelift_codegen::ir::immediates::{Ieee16, Ieee32, Ieee64};
use proptest::prelude::RngExt;
use proptest::test_runner::{RngAlgorithm, TestRng};
use rustc_apfloat::ieee::{Double, Half, Single};
use rustc_apfloat::{Float, FloatConvert};
use ursa_cli::filetest::{compile_guarded, link_for_test, simulate};

const RUNS: usize = 4000;

fn half(h: u16) -> Half {
    Half::from_bits(h as u128)
}

fn to_f64(h: u16) -> f64 {
    let mut loses = false;
    let d: Double = half(h).convert(&mut loses).value;
    f64::from_bits(d.to_bits() as u64)
}

/// The `f16` nearest to `x` (to even on a tie).
fn from_f64(x: f64) -> u16 {
    let mut loses = false;
    let h: Half = Double::from_bits(x.to_bits() as u128).convert(&mut loses).value;
    h.to_bits() as u16
}

fn from_f32(x: u32) -> u16 {
    let mut loses = false;
    let h: Half = Single::from_bits(x as u128).convert(&mut loses).value;
    h.to_bits() as u16
}

fn is_nan16(h: u16) -> bool {
    h & 0x7fff > 0x7c00
}

fn dv(ty: &str, bits: u64) -> DataValue {
    match ty {
        "f16" => DataValue::F16(Ieee16::with_bits(bits as u16)),
        "f32" => DataValue::F32(Ieee32::with_bits(bits as u32)),
        "f64" => DataValue::F64(Ieee64::with_bits(bits)),
        "i8" => DataValue::I8(bits as i8),
        "i16" => DataValue::I16(bits as i16),
        "i32" => DataValue::I32(bits as i32),
        "i64" => DataValue::I64(bits as i64),
        _ => unreachable!(),
    }
}

fn bits(v: &DataValue) -> (u64, bool) {
    match v {
        DataValue::F16(x) => (x.bits() as u64, x.is_nan()),
        DataValue::F32(x) => (x.bits() as u64, x.is_nan()),
        DataValue::F64(x) => (x.bits(), x.is_nan()),
        DataValue::I8(x) => (*x as u8 as u64, false),
        DataValue::I16(x) => (*x as u16 as u64, false),
        DataValue::I32(x) => (*x as u32 as u64, false),
        DataValue::I64(x) => (*x as u64, false),
        _ => unreachable!(),
    }
}

/// Compiles `body` (CLIF on v0.., result v9) as `%f(params) -> ret` and
/// checks every argument list `args` yields against `want` (argument bits
/// → result bits, and whether a NaN result must have exactly those bits).
fn check(params: &[&str], ret: &str, body: &str, args: &mut dyn Iterator<Item = Vec<u64>>, want: &dyn Fn(&[u64]) -> (u64, bool)) {
    let ps: Vec<String> = params.iter().enumerate().map(|(i, t)| format!("v{}: {}", i, t)).collect();
    let text = format!("function %f({}) -> {} {{\nblock0({}):\n    {}\n    return v9\n}}\n", params.join(", "), ret, ps.join(", "), body);
    let f = cranelift_reader::parse_functions(&text).unwrap_or_else(|e| panic!("{}: {}", text, e)).remove(0);
    let program = link_for_test(vec![compile_guarded(&f).unwrap_or_else(|e| panic!("{}: {}", body, e))]).unwrap();
    for a in args {
        let dvs: Vec<DataValue> = params.iter().zip(&a).map(|(t, &b)| dv(t, b)).collect();
        let got = simulate(&program, &f, &dvs).unwrap_or_else(|e| panic!("{} on {:x?}: {}", body, a, e));
        let (w, exact) = want(&a);
        let (g, g_nan) = bits(&got[0]);
        let (_, w_nan) = bits(&dv(ret, w));
        assert!(g == w || (!exact && g_nan && w_nan), "{} on {:x?}: got {:#x}, want {:#x}", body, a, g, w);
    }
}

const EDGE16: &[u16] = &[
    0x0000, 0x8000, 0x0001, 0x8001, 0x03ff, 0x0400, 0x0401, 0x3c00, 0xbc00, 0x3c01, 0x3bff, 0x7bff, 0xfbff, 0x7c00, 0xfc00, 0x7e00, 0xfe00,
    0x7c01, 0x7dff, 0x3555, 0x4248, 0x5800, 0x6800, 0x1400, 0x0200,
];

fn f16_bits(r: &mut TestRng) -> u16 {
    match r.random_range(0..4) {
        0 => EDGE16[r.random_range(0..EDGE16.len())],
        // Numbers of modest size, where sums and products round.
        1 => r.random_range(0x2c00..0x5400u16) | (r.random::<u16>() & 0x8000),
        _ => r.random(),
    }
}

fn random(seed: u8, n: usize, arity: usize) -> impl Iterator<Item = Vec<u64>> {
    let mut r = TestRng::from_seed(RngAlgorithm::ChaCha, &[seed; 32]);
    (0..n).map(move |_| (0..arity).map(|_| f16_bits(&mut r) as u64).collect())
}

fn every_f16() -> impl Iterator<Item = Vec<u64>> {
    (0..=0xffffu64).map(|h| vec![h])
}

/// An `f16` operation's result from its `f64` value (exact or rounded once
/// at 53 bits, which is innocuous for +, −, ×, ÷, √ of `f16` operands).
fn via64(x: f64) -> (u64, bool) {
    (from_f64(x) as u64, false)
}

#[test]
fn f16_arithmetic() {
    let h = |a: &[u64], i: usize| to_f64(a[i] as u16);
    let f2 = ["f16", "f16"];
    check(&f2, "f16", "v9 = fadd v0, v1", &mut random(1, RUNS, 2), &|a| via64(h(a, 0) + h(a, 1)));
    check(&f2, "f16", "v9 = fsub v0, v1", &mut random(2, RUNS, 2), &|a| via64(h(a, 0) - h(a, 1)));
    check(&f2, "f16", "v9 = fmul v0, v1", &mut random(3, RUNS, 2), &|a| via64(h(a, 0) * h(a, 1)));
    check(&f2, "f16", "v9 = fdiv v0, v1", &mut random(4, RUNS, 2), &|a| via64(h(a, 0) / h(a, 1)));
    let canon =
        |x: f64, a: &[u64]| if is_nan16(a[0] as u16) || is_nan16(a[1] as u16) { (0x7e00, true) } else { (from_f64(x) as u64, true) };
    // NaN operands are `canon`'s; -0 is below +0.
    let min = |a: f64, b: f64| if a < b || (a == b && a.is_sign_negative()) { a } else { b };
    let max = |a: f64, b: f64| if a > b || (a == b && a.is_sign_positive()) { a } else { b };
    check(&f2, "f16", "v9 = fmin v0, v1", &mut random(5, RUNS, 2), &|a| canon(min(h(a, 0), h(a, 1)), a));
    check(&f2, "f16", "v9 = fmax v0, v1", &mut random(6, RUNS, 2), &|a| canon(max(h(a, 0), h(a, 1)), a));
    check(&f2, "f16", "v9 = fcopysign v0, v1", &mut random(7, RUNS, 2), &|a| ((a[0] & 0x7fff) | (a[1] & 0x8000), true));
    check(&["f16"], "f16", "v9 = sqrt v0", &mut every_f16(), &|a| via64(h(a, 0).sqrt()));
    check(&["f16"], "f16", "v9 = ceil v0", &mut every_f16(), &|a| via64(h(a, 0).ceil()));
    check(&["f16"], "f16", "v9 = floor v0", &mut every_f16(), &|a| via64(h(a, 0).floor()));
    check(&["f16"], "f16", "v9 = trunc v0", &mut every_f16(), &|a| via64(h(a, 0).trunc()));
    check(&["f16"], "f16", "v9 = nearest v0", &mut every_f16(), &|a| via64(h(a, 0).round_ties_even()));
    check(&["f16"], "f16", "v9 = fneg v0", &mut every_f16(), &|a| (a[0] ^ 0x8000, true));
    check(&["f16"], "f16", "v9 = fabs v0", &mut every_f16(), &|a| (a[0] & 0x7fff, true));
}

/// Operand triples whose exact `a·b + c` lies next to a rounding midpoint
/// of `f16`, where an `f32` (or a plain `f64`) sum rounded again fails.
fn fma_hard(seed: u8, n: usize) -> impl Iterator<Item = Vec<u64>> {
    let mut r = TestRng::from_seed(RngAlgorithm::ChaCha, &[seed; 32]);
    (0..n).map(move |_| {
        loop {
            let (a, b) = (f16_bits(&mut r), f16_bits(&mut r));
            let p = to_f64(a) * to_f64(b);
            if !p.is_finite() || p == 0.0 {
                continue;
            }
            // c: an f16 far below p (a few ulps of p's f16 unit down to
            // beyond f32's reach), of either sign.
            let e = p.abs().log2().floor() as i32;
            let ce = e - r.random_range(11..50);
            let mant = 1.0 + r.random_range(0..1024) as f64 / 1024.0;
            let c = from_f64(mant * 2f64.powi(ce)) | if r.random_bool(0.5) { 0x8000 } else { 0 };
            return vec![a as u64, b as u64, c as u64];
        }
    })
}

#[test]
fn f16_fma() {
    let want = |a: &[u64]| {
        let r = half(a[0] as u16).mul_add(half(a[1] as u16), half(a[2] as u16)).value;
        (r.to_bits() as u64, false)
    };
    check(&["f16"; 3], "f16", "v9 = fma v0, v1, v2", &mut random(8, RUNS, 3), &want);
    check(&["f16"; 3], "f16", "v9 = fma v0, v1, v2", &mut fma_hard(9, RUNS), &want);
}

#[test]
fn f16_compares() {
    let idx = common::ordering_index;
    for (k, (cc, t)) in common::FCMP_CONDS.into_iter().enumerate() {
        let body = format!("v9 = fcmp {} v0, v1", cc);
        check(&["f16", "f16"], "i8", &body, &mut random(20 + k as u8, 500, 2), &|a| {
            (t[idx(to_f64(a[0] as u16).partial_cmp(&to_f64(a[1] as u16)))] as u64, true)
        });
    }
}

/// `f32` (`f64`) numbers at and around the `f16` rounding midpoints, and random ones.
fn demote_args(seed: u8, wide: bool) -> impl Iterator<Item = Vec<u64>> {
    let mut r = TestRng::from_seed(RngAlgorithm::ChaCha, &[seed; 32]);
    (0..RUNS * 4).map(move |_| {
        let h = f16_bits(&mut r);
        let x = to_f64(h);
        if !x.is_finite() {
            return vec![if wide { x.to_bits() } else { (x as f32).to_bits() as u64 }];
        }
        // The midpoint above h (its magnitude), nudged by a little.
        let next = to_f64(h.wrapping_add(1) & 0x7fff | (h & 0x8000));
        let mid = if next.is_finite() { (x + next) / 2.0 } else { x + (x - to_f64(h - 1)) / 2.0 };
        let nudge = match r.random_range(0..4) {
            0 => 0.0,
            1 => mid.abs() * 2f64.powi(-r.random_range(25..52)),
            2 => -mid.abs() * 2f64.powi(-r.random_range(25..52)),
            _ => mid.abs() * 2f64.powi(-r.random_range(12..24)) * if r.random_bool(0.5) { 1.0 } else { -1.0 },
        };
        let y = mid + nudge;
        if wide {
            vec![if r.random_range(0..8) == 0 { r.random::<u64>() } else { y.to_bits() }]
        } else {
            vec![if r.random_range(0..8) == 0 { r.random::<u32>() as u64 } else { (y as f32).to_bits() as u64 }]
        }
    })
}

#[test]
fn f16_conversions() {
    check(&["f16"], "f32", "v9 = fpromote.f32 v0", &mut every_f16(), &|a| ((to_f64(a[0] as u16) as f32).to_bits() as u64, false));
    check(&["f16"], "f64", "v9 = fpromote.f64 v0", &mut every_f16(), &|a| (to_f64(a[0] as u16).to_bits(), false));
    check(&["f32"], "f16", "v9 = fdemote.f16 v0", &mut demote_args(30, false), &|a| (from_f32(a[0] as u32) as u64, false));
    check(&["f64"], "f16", "v9 = fdemote.f16 v0", &mut demote_args(31, true), &|a| (from_f64(f64::from_bits(a[0])) as u64, false));
    let ints = |seed: u8| {
        let mut r = TestRng::from_seed(RngAlgorithm::ChaCha, &[seed; 32]);
        (0..RUNS).map(move |_| vec![(r.random::<i64>() >> r.random_range(0..64)) as u64])
    };
    let from_int = |x: i128| (Half::from_i128(x).value.to_bits() as u64, true);
    check(&["i8"], "f16", "v9 = fcvt_from_sint.f16 v0", &mut ints(32), &|a| from_int(a[0] as i8 as i128));
    check(&["i16"], "f16", "v9 = fcvt_from_uint.f16 v0", &mut ints(33), &|a| from_int(a[0] as u16 as i128));
    check(&["i32"], "f16", "v9 = fcvt_from_sint.f16 v0", &mut ints(34), &|a| from_int(a[0] as i32 as i128));
    check(&["i32"], "f16", "v9 = fcvt_from_uint.f16 v0", &mut ints(35), &|a| from_int(a[0] as u32 as i128));
    check(&["i64"], "f16", "v9 = fcvt_from_sint.f16 v0", &mut ints(36), &|a| from_int(a[0] as i64 as i128));
    check(&["i64"], "f16", "v9 = fcvt_from_uint.f16 v0", &mut ints(37), &|a| from_int(a[0] as i128));
    // Rust's `as` from float to integer is CLIF's _sat: truncate, saturate, NaN -> 0.
    check(&["f16"], "i8", "v9 = fcvt_to_sint_sat.i8 v0", &mut every_f16(), &|a| ((to_f64(a[0] as u16) as i8) as u8 as u64, true));
    check(&["f16"], "i16", "v9 = fcvt_to_uint_sat.i16 v0", &mut every_f16(), &|a| ((to_f64(a[0] as u16) as u16) as u64, true));
    check(&["f16"], "i32", "v9 = fcvt_to_sint_sat.i32 v0", &mut every_f16(), &|a| ((to_f64(a[0] as u16) as i32) as u32 as u64, true));
    check(&["f16"], "i64", "v9 = fcvt_to_uint_sat.i64 v0", &mut every_f16(), &|a| (to_f64(a[0] as u16) as u64, true));
}
