//! Random and edge-biased operands through the compiled float operations on
//! the simulator, against the host's IEEE arithmetic (Rust `f32`/`f64`,
//! correctly rounded to nearest even): bitwise for non-NaN results, any NaN
//! for a NaN (the payload rules are pinned by the filetests), and the
//! canonical NaN exactly for fmin/fmax. Seeded: the same values every run.

mod common;

use cranelift_codegen::data_value::DataValue;
use cranelift_codegen::ir::immediates::{Ieee32, Ieee64};
use proptest::prelude::RngExt;
use proptest::test_runner::{RngAlgorithm, TestRng};
use ursa_cli::filetest::{compile_guarded, link_for_test, simulate};

const RUNS: usize = 300;

const EDGE32: &[u32] = &[
    0,
    0x8000_0000,
    1,
    0x8000_0001,
    0x007f_ffff,
    0x0080_0000,
    0x7f7f_ffff,
    0xff7f_ffff,
    0x7f80_0000,
    0xff80_0000,
    0x7fc0_0000,
    0x7f80_0001,
    0x3f80_0000,
    0x3fc0_0000,
    0x4b00_0000,
    0x4f00_0000,
    0xcf00_0000,
    0x5f00_0000,
];
const EDGE64: &[u64] = &[
    0,
    1 << 63,
    1,
    0x000f_ffff_ffff_ffff,
    0x0010_0000_0000_0000,
    0x7fef_ffff_ffff_ffff,
    0x7ff0_0000_0000_0000,
    0xfff0_0000_0000_0000,
    0x7ff8_0000_0000_0000,
    0x7ff0_0000_0000_0001,
    0x3ff0_0000_0000_0000,
    0x3ff8_0000_0000_0000,
    0x4330_0000_0000_0000,
    0x41e0_0000_0000_0000,
    0xc3e0_0000_0000_0000,
    0x43f0_0000_0000_0000,
];

fn f32_bits(r: &mut TestRng) -> u32 {
    match r.random_range(0..4) {
        0 => EDGE32[r.random_range(0..EDGE32.len())],
        1 => (r.random_range(-1.0e6..1.0e6f32)).to_bits(),
        2 => ((r.random_range(-64..64) as f32) * 0.5).to_bits(),
        _ => r.random(),
    }
}

fn f64_bits(r: &mut TestRng) -> u64 {
    match r.random_range(0..4) {
        0 => EDGE64[r.random_range(0..EDGE64.len())],
        1 => (r.random_range(-1.0e15..1.0e15f64)).to_bits(),
        2 => ((r.random_range(-64..64) as f64) * 0.5).to_bits(),
        _ => r.random(),
    }
}

fn dv(ty: &str, bits: u64) -> DataValue {
    match ty {
        "f32" => DataValue::F32(Ieee32::with_bits(bits as u32)),
        "f64" => DataValue::F64(Ieee64::with_bits(bits)),
        "i8" => DataValue::I8(bits as i8),
        "i32" => DataValue::I32(bits as i32),
        "i64" => DataValue::I64(bits as i64),
        _ => unreachable!(),
    }
}

fn bits(v: &DataValue) -> (u64, bool) {
    match v {
        DataValue::F32(x) => (x.bits() as u64, x.is_nan()),
        DataValue::F64(x) => (x.bits(), x.is_nan()),
        DataValue::I8(x) => (*x as u8 as u64, false),
        DataValue::I32(x) => (*x as u32 as u64, false),
        DataValue::I64(x) => (*x as u64, false),
        _ => unreachable!(),
    }
}

/// Compiles `body` (a CLIF instruction on v0.., result v9) as `%f(params) -> ret`
/// and checks `n` random argument lists against `host` (argument bits ->
/// result bits, and whether the result must be the exact bits even if NaN).
fn check(params: &[&str], ret: &str, body: &str, gen: &mut dyn FnMut(&mut TestRng, &str) -> u64, host: &dyn Fn(&[u64]) -> (u64, bool)) {
    let ps: Vec<String> = params.iter().enumerate().map(|(i, t)| format!("v{}: {}", i, t)).collect();
    let text = format!("function %f({}) -> {} {{\nblock0({}):\n    {}\n    return v9\n}}\n", params.join(", "), ret, ps.join(", "), body);
    let f = cranelift_reader::parse_functions(&text).unwrap_or_else(|e| panic!("{}: {}", text, e)).remove(0);
    let program = link_for_test(vec![compile_guarded(&f).unwrap_or_else(|e| panic!("{}: {}", body, e))]).unwrap();
    let mut r = TestRng::from_seed(RngAlgorithm::ChaCha, &[body.len() as u8; 32]);
    for _ in 0..RUNS {
        let args: Vec<u64> = params.iter().map(|t| gen(&mut r, t)).collect();
        let dvs: Vec<DataValue> = params.iter().zip(&args).map(|(t, &b)| dv(t, b)).collect();
        let got = simulate(&program, &f, &dvs).unwrap_or_else(|e| panic!("{} on {:x?}: {}", body, args, e));
        let (want, exact) = host(&args);
        let (g, g_nan) = bits(&got[0]);
        let (_, w_nan) = bits(&dv(ret, want));
        let ok = g == want || (!exact && g_nan && w_nan);
        assert!(ok, "{} on {:x?}: got {:#x}, want {:#x}", body, args, g, want);
    }
}

fn gen(r: &mut TestRng, ty: &str) -> u64 {
    match ty {
        "f32" => f32_bits(r) as u64,
        "f64" => f64_bits(r),
        "i32" => (r.random::<i32>() >> r.random_range(0..32)) as u32 as u64,
        "i64" => (r.random::<i64>() >> r.random_range(0..64)) as u64,
        _ => unreachable!(),
    }
}

fn h32(a: u64) -> f32 {
    f32::from_bits(a as u32)
}
fn h64(a: u64) -> f64 {
    f64::from_bits(a)
}

#[test]
fn f32_arithmetic_and_rounding() {
    let f2 = ["f32", "f32"];
    let g = &mut gen;
    check(&f2, "f32", "v9 = fadd v0, v1", g, &|a| ((h32(a[0]) + h32(a[1])).to_bits() as u64, false));
    check(&f2, "f32", "v9 = fsub v0, v1", g, &|a| ((h32(a[0]) - h32(a[1])).to_bits() as u64, false));
    check(&f2, "f32", "v9 = fmul v0, v1", g, &|a| ((h32(a[0]) * h32(a[1])).to_bits() as u64, false));
    check(&["f32"; 3], "f32", "v9 = fma v0, v1, v2", g, &|a| (h32(a[0]).mul_add(h32(a[1]), h32(a[2])).to_bits() as u64, false));
    let canon = |x: f32, a: f32, b: f32| if a.is_nan() || b.is_nan() { 0x7fc0_0000 } else { x.to_bits() as u64 };
    let min = |a: f32, b: f32| {
        if a == b {
            if a.is_sign_negative() {
                a
            } else {
                b
            }
        } else {
            a.min(b)
        }
    };
    let max = |a: f32, b: f32| {
        if a == b {
            if a.is_sign_positive() {
                a
            } else {
                b
            }
        } else {
            a.max(b)
        }
    };
    check(&f2, "f32", "v9 = fmin v0, v1", g, &|a| (canon(min(h32(a[0]), h32(a[1])), h32(a[0]), h32(a[1])), true));
    check(&f2, "f32", "v9 = fmax v0, v1", g, &|a| (canon(max(h32(a[0]), h32(a[1])), h32(a[0]), h32(a[1])), true));
    check(&["f32"], "f32", "v9 = ceil v0", g, &|a| (h32(a[0]).ceil().to_bits() as u64, false));
    check(&["f32"], "f32", "v9 = floor v0", g, &|a| (h32(a[0]).floor().to_bits() as u64, false));
    check(&["f32"], "f32", "v9 = trunc v0", g, &|a| (h32(a[0]).trunc().to_bits() as u64, false));
    check(&["f32"], "f32", "v9 = nearest v0", g, &|a| (h32(a[0]).round_ties_even().to_bits() as u64, false));
    check(&["f32"], "f32", "v9 = fneg v0", g, &|a| (a[0] ^ 0x8000_0000, true));
    check(&["f32"], "f32", "v9 = fabs v0", g, &|a| (a[0] & 0x7fff_ffff, true));
    check(&f2, "f32", "v9 = fcopysign v0, v1", g, &|a| ((a[0] & 0x7fff_ffff) | (a[1] & 0x8000_0000), true));
}

#[test]
fn f64_arithmetic_and_rounding() {
    let f2 = ["f64", "f64"];
    let g = &mut gen;
    check(&f2, "f64", "v9 = fadd v0, v1", g, &|a| ((h64(a[0]) + h64(a[1])).to_bits(), false));
    check(&f2, "f64", "v9 = fsub v0, v1", g, &|a| ((h64(a[0]) - h64(a[1])).to_bits(), false));
    check(&f2, "f64", "v9 = fmul v0, v1", g, &|a| ((h64(a[0]) * h64(a[1])).to_bits(), false));
    check(&["f64"; 3], "f64", "v9 = fma v0, v1, v2", g, &|a| (h64(a[0]).mul_add(h64(a[1]), h64(a[2])).to_bits(), false));
    let canon = |x: f64, a: f64, b: f64| if a.is_nan() || b.is_nan() { 0x7ff8_0000_0000_0000 } else { x.to_bits() };
    let min = |a: f64, b: f64| {
        if a == b {
            if a.is_sign_negative() {
                a
            } else {
                b
            }
        } else {
            a.min(b)
        }
    };
    let max = |a: f64, b: f64| {
        if a == b {
            if a.is_sign_positive() {
                a
            } else {
                b
            }
        } else {
            a.max(b)
        }
    };
    check(&f2, "f64", "v9 = fmin v0, v1", g, &|a| (canon(min(h64(a[0]), h64(a[1])), h64(a[0]), h64(a[1])), true));
    check(&f2, "f64", "v9 = fmax v0, v1", g, &|a| (canon(max(h64(a[0]), h64(a[1])), h64(a[0]), h64(a[1])), true));
    check(&["f64"], "f64", "v9 = ceil v0", g, &|a| (h64(a[0]).ceil().to_bits(), false));
    check(&["f64"], "f64", "v9 = floor v0", g, &|a| (h64(a[0]).floor().to_bits(), false));
    check(&["f64"], "f64", "v9 = trunc v0", g, &|a| (h64(a[0]).trunc().to_bits(), false));
    check(&["f64"], "f64", "v9 = nearest v0", g, &|a| (h64(a[0]).round_ties_even().to_bits(), false));
    check(&f2, "f64", "v9 = fcopysign v0, v1", g, &|a| ((a[0] & !(1 << 63)) | (a[1] & (1 << 63)), true));
}

#[test]
fn compares_and_conversions() {
    let g = &mut gen;
    let idx = common::ordering_index;
    for (cc, t) in common::FCMP_CONDS {
        check(&["f32", "f32"], "i8", &format!("v9 = fcmp {} v0, v1", cc), g, &|a| (t[idx(h32(a[0]).partial_cmp(&h32(a[1])))] as u64, true));
        check(&["f64", "f64"], "i8", &format!("v9 = fcmp {} v0, v1", cc), g, &|a| (t[idx(h64(a[0]).partial_cmp(&h64(a[1])))] as u64, true));
    }
    check(&["f32"], "f64", "v9 = fpromote.f64 v0", g, &|a| ((h32(a[0]) as f64).to_bits(), false));
    check(&["f64"], "f32", "v9 = fdemote.f32 v0", g, &|a| ((h64(a[0]) as f32).to_bits() as u64, false));
    check(&["i32"], "f32", "v9 = fcvt_from_sint.f32 v0", g, &|a| (((a[0] as i32) as f32).to_bits() as u64, true));
    check(&["i32"], "f32", "v9 = fcvt_from_uint.f32 v0", g, &|a| (((a[0] as u32) as f32).to_bits() as u64, true));
    check(&["i64"], "f32", "v9 = fcvt_from_sint.f32 v0", g, &|a| (((a[0] as i64) as f32).to_bits() as u64, true));
    check(&["i64"], "f64", "v9 = fcvt_from_uint.f64 v0", g, &|a| ((a[0] as f64).to_bits(), true));
    check(&["i32"], "f64", "v9 = fcvt_from_uint.f64 v0", g, &|a| (((a[0] as u32) as f64).to_bits(), true));
    check(&["i64"], "f64", "v9 = fcvt_from_sint.f64 v0", g, &|a| (((a[0] as i64) as f64).to_bits(), true));
    // Rust's `as` from float to integer is CLIF's _sat: truncate, saturate, NaN -> 0.
    check(&["f32"], "i32", "v9 = fcvt_to_sint_sat.i32 v0", g, &|a| ((h32(a[0]) as i32) as u32 as u64, true));
    check(&["f32"], "i64", "v9 = fcvt_to_uint_sat.i64 v0", g, &|a| (h32(a[0]) as u64, true));
    check(&["f64"], "i64", "v9 = fcvt_to_sint_sat.i64 v0", g, &|a| ((h64(a[0]) as i64) as u64, true));
    check(&["f64"], "i32", "v9 = fcvt_to_uint_sat.i32 v0", g, &|a| ((h64(a[0]) as u32) as u64, true));
    check(&["f64"], "i8", "v9 = fcvt_to_sint_sat.i8 v0", g, &|a| ((h64(a[0]) as i8) as u8 as u64, true));
}
