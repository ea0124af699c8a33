//! The trapping float-to-integer conversions (`fcvt_to_sint`,
//! `fcvt_to_uint`) for every float and integer type (i8 … i128), at and around the
//! bounds of each integer type (the float neighbours of MIN − 1, MIN, MAX,
//! MAX + 1 and 0), on the simulator, against the host: a NaN traps with
//! `bad_toint`, a value whose truncation is outside the integer type traps
//! with `int_ovf`, everything else converts by truncation. Also the
//! saturating forms on the same inputs.

use cranelift_codegen::data_value::DataValue;
use cranelift_codegen::ir::immediates::{Ieee32, Ieee64};
use ursa_cli::filetest::{compile_guarded, link_for_test, simulate};

/// The float values next to `x` in f32 or f64 (and `x` rounded itself).
fn around(x: f64, f32_: bool) -> Vec<f64> {
    if f32_ {
        let r = x as f32;
        let up = |v: f32| if v == f32::INFINITY { v } else { f32::from_bits(if v >= 0.0 { v.to_bits() + 1 } else { v.to_bits() - 1 }) };
        let down = |v: f32| -up(-v);
        vec![r as f64, up(r) as f64, down(r) as f64, up(up(r)) as f64, down(down(r)) as f64]
    } else {
        let up = |v: f64| {
            if v == f64::INFINITY {
                v
            } else if v == 0.0 {
                f64::from_bits(1)
            } else {
                f64::from_bits(if v > 0.0 { v.to_bits() + 1 } else { v.to_bits() - 1 })
            }
        };
        let down = |v: f64| -up(-v);
        vec![x, up(x), down(x), up(up(x)), down(down(x))]
    }
}

#[test]
fn trapping_and_saturating_conversions_at_the_bounds() {
    let mut checked = 0;
    for fty in ["f32", "f64"] {
        for ity in ["i8", "i16", "i32", "i64", "i128"] {
            for signed in [true, false] {
                let bits: i32 = ity[1..].parse().unwrap();
                // The valid truncations are min_f <= t < lim_f (exact in f64
                // for every width); as bit patterns, min and max.
                let (min_f, lim_f) = if signed { (-(2f64.powi(bits - 1)), 2f64.powi(bits - 1)) } else { (0.0, 2f64.powi(bits)) };
                let ones = |n: i32| if n == 128 { u128::MAX } else { (1u128 << n) - 1 };
                let (min, max): (u128, u128) = if signed { (!ones(bits - 1), ones(bits - 1)) } else { (0, ones(bits)) };
                let to_bits = |t: f64| if t < 0.0 { (t as i128) as u128 } else { t as u128 };
                let s = if signed { "sint" } else { "uint" };
                let text = format!(
                    "function %t({fty}) -> {ity} {{\nblock0(v0: {fty}):\n    v1 = fcvt_to_{s}.{ity} v0\n    return v1\n}}\n\
                     function %s({fty}) -> {ity} {{\nblock0(v0: {fty}):\n    v1 = fcvt_to_{s}_sat.{ity} v0\n    return v1\n}}\n",
                );
                let funcs = cranelift_reader::parse_functions(&text).expect("parses");
                let compiled: Vec<_> = funcs.iter().map(|f| compile_guarded(f).expect("compiles")).collect();
                let program = link_for_test(compiled).expect("links");
                let mut inputs: Vec<f64> = vec![f64::NAN, -f64::NAN, f64::INFINITY, f64::NEG_INFINITY, 0.0, -0.0, 0.5, -0.5, -0.99];
                for b in [min_f - 1.0, min_f, lim_f - 1.0, lim_f, 0.0] {
                    inputs.extend(around(b, fty == "f32"));
                }
                for x in inputs {
                    let x = if fty == "f32" { x as f32 as f64 } else { x };
                    let arg = if fty == "f32" {
                        DataValue::F32(Ieee32::with_bits((x as f32).to_bits()))
                    } else {
                        DataValue::F64(Ieee64::with_bits(x.to_bits()))
                    };
                    let t = x.trunc();
                    let want: Result<u128, &str> = if x.is_nan() {
                        Err("bad_toint")
                    } else if t < min_f || t >= lim_f {
                        Err("int_ovf")
                    } else {
                        Ok(to_bits(t))
                    };
                    let sat: u128 = if x.is_nan() {
                        0
                    } else if t < min_f {
                        min
                    } else if t >= lim_f {
                        max
                    } else {
                        to_bits(t)
                    };
                    let as_dv = |v: u128| match bits {
                        8 => DataValue::I8(v as i8),
                        16 => DataValue::I16(v as i16),
                        32 => DataValue::I32(v as i32),
                        64 => DataValue::I64(v as i64),
                        _ => DataValue::I128(v as i128),
                    };
                    let got = simulate(&program, &funcs[0], std::slice::from_ref(&arg));
                    match (&want, &got) {
                        (Ok(v), Ok(r)) => assert_eq!(r, &vec![as_dv(*v)], "fcvt_to_{s}.{ity} of {fty} {x:e}"),
                        (Err(code), Err(stop)) => {
                            assert!(
                                stop.explicit && stop.message.contains(&format!("({code})")),
                                "fcvt_to_{s}.{ity} of {fty} {x:e}: {stop}, want {code}"
                            )
                        }
                        _ => panic!("fcvt_to_{s}.{ity} of {fty} {x:e}: got {got:?}, want {want:?}"),
                    }
                    let got = simulate(&program, &funcs[1], std::slice::from_ref(&arg)).expect("the saturating form does not trap");
                    assert_eq!(got, vec![as_dv(sat)], "fcvt_to_{s}_sat.{ity} of {fty} {x:e}");
                    checked += 1;
                }
            }
        }
    }
    assert!(checked > 500, "{checked}");
}

/// f128 arithmetic (a software type whose arithmetic Ursa does not
/// implement: `docs/float.md`, "f16 and f128") is refused with an error
/// naming the instruction, never lowered as if it were another type:
/// compares (as a value and fused into brif), fpromote/fdemote and the
/// conversions to integers. (f16 arithmetic is supported: `f16_random.rs`.)
#[test]
fn f128_operands_are_unsupported_errors() {
    let text = "function %a(i128, i128) -> i8 {\nblock0(v8: i128, v9: i128):\n    v0 = bitcast.f128 v8\n    v1 = bitcast.f128 v9\n    v2 = fcmp lt v0, v1\n    return v2\n}\n\
function %b(i128) -> i32 {\nblock0(v8: i128):\n    v0 = bitcast.f128 v8\n    v1 = fcmp uno v0, v0\n    brif v1, block1, block2\nblock1:\n    v3 = iconst.i32 1\n    return v3\nblock2:\n    v4 = iconst.i32 0\n    return v4\n}\n\
function %c(i128) -> f64 {\nblock0(v8: i128):\n    v0 = bitcast.f128 v8\n    v1 = fdemote.f64 v0\n    return v1\n}\n\
function %d(i128) -> i32 {\nblock0(v8: i128):\n    v0 = bitcast.f128 v8\n    v1 = fcvt_to_sint.i32 v0\n    return v1\n}\n\
function %e(i128) -> i64 {\nblock0(v8: i128):\n    v0 = bitcast.f128 v8\n    v1 = fcvt_to_uint_sat.i64 v0\n    return v1\n}\n\
function %f(f64) -> i128 {\nblock0(v8: f64):\n    v0 = fpromote.f128 v8\n    v1 = bitcast.i128 v0\n    return v1\n}\n";
    for f in cranelift_reader::parse_functions(text).expect("parses") {
        match compile_guarded(&f) {
            Err(ursa_backend::Error::Unsupported(m)) => assert!(m.message.contains("on f128 is not supported"), "{}: {}", f.name, m),
            other => panic!("{}: {:?}", f.name, other.map(|_| "compiled")),
        }
    }
}
