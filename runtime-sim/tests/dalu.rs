//! Double-precision semantics (vendor document 003, errata E17, E38, E39,
//! E49, E84): every rounding mode on values where the modes differ, NaN
//! propagation, invalid operations, DMNMX and DSETP NaN and zero rules.
mod common;
use common::*;

const ONE: u64 = 0x3FF0_0000_0000_0000;
const NEG_ONE: u64 = 0xBFF0_0000_0000_0000;
const DEFAULT_NAN: u64 = 0x7FFF_FFFF_0000_0000;
const MAX: u64 = 0x7FEF_FFFF_FFFF_FFFF;
const PINF: u64 = 0x7FF0_0000_0000_0000;

fn f(x: f64) -> u64 {
    x.to_bits()
}

/// Runs `body` with a in R[4:5], b in R[6:7], c in R[8:9]; returns R[4:5].
fn d(body: &str, a: u64, b: u64, c: u64) -> u64 {
    let [a0, a1] = split64(a);
    let [b0, b1] = split64(b);
    let [c0, c1] = split64(c);
    let r = call(body, &[a0, a1, b0, b1, c0, c1], 2);
    join64(r[0], r[1])
}

fn add(rnd: &str, a: u64, b: u64) -> u64 {
    d(&format!("DADD{} R[4:5], R[4:5], R[6:7] ;", rnd), a, b, 0)
}

fn mul(rnd: &str, a: u64, b: u64) -> u64 {
    d(&format!("DMUL{} R[4:5], R[4:5], R[6:7] ;", rnd), a, b, 0)
}

fn fma(rnd: &str, a: u64, b: u64, c: u64) -> u64 {
    d(&format!("DFMA{} R[4:5], R[4:5], R[6:7], R[8:9] ;", rnd), a, b, c)
}

#[test]
fn dadd_rounding_modes() {
    // 1 + 2^-60: below half an ulp of 1 (2^-53).
    let tiny = f(2f64.powi(-60));
    assert_eq!(add("", ONE, tiny), ONE);
    assert_eq!(add(".RN", ONE, tiny), ONE);
    assert_eq!(add(".RP", ONE, tiny), ONE + 1);
    assert_eq!(add(".RM", ONE, tiny), ONE);
    assert_eq!(add(".RZ", ONE, tiny), ONE);
    // -1 - 2^-60: RM moves away from zero, RP and RZ toward.
    let ntiny = tiny | 1 << 63;
    assert_eq!(add(".RN", NEG_ONE, ntiny), NEG_ONE);
    assert_eq!(add(".RP", NEG_ONE, ntiny), NEG_ONE);
    assert_eq!(add(".RM", NEG_ONE, ntiny), NEG_ONE + 1);
    assert_eq!(add(".RZ", NEG_ONE, ntiny), NEG_ONE);
    // Ties to even: 1 + 2^-53 stays 1; 1 + 3·2^-53 goes to 1 + 2^-51.
    assert_eq!(add(".RN", ONE, f(2f64.powi(-53))), ONE);
    assert_eq!(add(".RN", ONE, f(3.0 * 2f64.powi(-53))), ONE + 2);
    assert_eq!(add(".RZ", ONE, f(3.0 * 2f64.powi(-53))), ONE + 1);
    // x + (-x) is +0, or -0 under RM.
    assert_eq!(add(".RN", ONE, NEG_ONE), 0);
    assert_eq!(add(".RM", ONE, NEG_ONE), 1 << 63);
    assert_eq!(add(".RP", ONE, NEG_ONE), 0);
    // Overflow: RN/RP give +Inf, RZ/RM the largest finite value.
    assert_eq!(add(".RN", MAX, MAX), PINF);
    assert_eq!(add(".RP", MAX, MAX), PINF);
    assert_eq!(add(".RZ", MAX, MAX), MAX);
    assert_eq!(add(".RM", MAX, MAX), MAX);
    // Subnormals are exact: min subnormal + min subnormal.
    assert_eq!(add("", 1, 1), 2);
}

#[test]
fn dmul_and_dfma_rounding() {
    // (1 + 2^-52)^2 = 1 + 2^-51 + 2^-104.
    let a = ONE + 1;
    assert_eq!(mul(".RN", a, a), ONE + 2);
    assert_eq!(mul(".RP", a, a), ONE + 3);
    assert_eq!(mul(".RM", a, a), ONE + 2);
    assert_eq!(mul(".RZ", a, a), ONE + 2);
    assert_eq!(mul(".RZ", f(-1.5), f(3.0)), f(-4.5));
    // Fused: (1 + 2^-52)^2 - (1 + 2^-51) = 2^-104 exactly.
    assert_eq!(fma("", a, a, (ONE + 2) | 1 << 63), f(2f64.powi(-104)));
    // + 1 = 2 + 2^-51 + 2^-104, where the ulp is 2^-51.
    assert_eq!(fma(".RP", a, a, f(1.0)), f(2.0) + 2);
    assert_eq!(fma(".RN", a, a, f(1.0)), f(2.0) + 1);
    assert_eq!(fma(".RZ", a, a, f(1.0)), f(2.0) + 1);
    assert_eq!(fma(".RM", f(2.0), f(3.0), f(-6.0)), 1 << 63);
    assert_eq!(fma(".RN", f(2.0), f(3.0), f(-6.0)), 0);
}

#[test]
fn operand_modifiers() {
    assert_eq!(d("DADD R[4:5], -R[4:5], |R[6:7]| ;", f(1.0), f(-3.0), 0), f(2.0));
    assert_eq!(d("DMUL R[4:5], -|R[4:5]|, R[6:7] ;", f(-2.0), f(3.0), 0), f(-6.0));
    assert_eq!(d("DFMA R[4:5], R[4:5], R[6:7], -R[8:9] ;", f(2.0), f(3.0), f(1.0)), f(5.0));
    assert_eq!(d("DADD R[4:5], R[4:5], 0.5 ;", f(1.0), 0, 0), f(1.5));
}

#[test]
fn nan_propagation_and_invalid_operations() {
    let snan = 0x7FF0_0000_0000_0001u64;
    let qnan2 = 0x7FF8_0000_0000_0002u64;
    let nnan = 0xFFF0_0000_0000_0003u64;
    // The first NaN (SrcB, then Ra: erratum E17) made quiet, sign and
    // payload kept.
    assert_eq!(add("", snan, ONE), 0x7FF8_0000_0000_0001);
    assert_eq!(add("", ONE, qnan2), qnan2);
    assert_eq!(add("", snan, qnan2), qnan2);
    assert_eq!(add("", qnan2, snan), 0x7FF8_0000_0000_0001);
    assert_eq!(mul("", snan, nnan), 0xFFF8_0000_0000_0003);
    assert_eq!(mul("", nnan, ONE), 0xFFF8_0000_0000_0003);
    // DFMA priority SrcB, SrcC, Ra.
    assert_eq!(fma("", snan, qnan2, nnan), qnan2);
    assert_eq!(fma("", snan, ONE, nnan), 0xFFF8_0000_0000_0003);
    assert_eq!(fma("", snan, ONE, ONE), 0x7FF8_0000_0000_0001);
    // Modifiers apply before NaN selection: -NaN flips the sign.
    assert_eq!(d("DADD R[4:5], -R[4:5], R[6:7] ;", snan, ONE, 0), 0xFFF8_0000_0000_0001);
    // Invalid operations give the default NaN.
    assert_eq!(add("", PINF, PINF | 1 << 63), DEFAULT_NAN);
    assert_eq!(mul("", 0, PINF), DEFAULT_NAN);
    assert_eq!(fma("", 0, PINF, ONE), DEFAULT_NAN);
    assert_eq!(fma("", ONE, PINF, PINF | 1 << 63), DEFAULT_NAN);
}

#[test]
fn dmnmx_polarity_nan_and_zero() {
    let mn = |a: u64, b: u64| d("DMNMX R[4:5], R[4:5], R[6:7], PT ;", a, b, 0);
    let mx = |a: u64, b: u64| d("DMNMX R[4:5], R[4:5], R[6:7], !PT ;", a, b, 0);
    // E38: pp true selects the minimum.
    assert_eq!(mn(f(1.0), f(2.0)), f(1.0));
    assert_eq!(mx(f(1.0), f(2.0)), f(2.0));
    assert_eq!(mn(f(-3.0), f(2.0)), f(-3.0));
    // A single NaN is ignored; two NaNs give SrcB made quiet.
    let nan = 0x7FF0_0000_0000_0001u64;
    assert_eq!(mn(nan, f(2.0)), f(2.0));
    assert_eq!(mx(f(1.0), nan), f(1.0));
    assert_eq!(mn(nan, 0x7FF0_0000_0000_0002), 0x7FF8_0000_0000_0002);
    // -0 < +0.
    assert_eq!(mn(0, 1 << 63), 1 << 63);
    assert_eq!(mx(0, 1 << 63), 0);
    assert_eq!(mx(1 << 63, 0), 0);
    // Modifiers: -|x|.
    assert_eq!(d("DMNMX R[4:5], -|R[4:5]|, R[6:7], PT ;", f(5.0), f(1.0), 0), f(-5.0));
}

#[test]
fn dsetp_ordered_unordered_and_bool_ops() {
    let p = |cmp: &str, a: u64, b: u64| -> u32 {
        let [a0, a1] = split64(a);
        let [b0, b1] = split64(b);
        call(&format!("DSETP.{}.AND P0, P1, R[4:5], R[6:7], PT ;\n P2R R4, PR, RZ, 0x3 ;", cmp), &[a0, a1, b0, b1], 1)[0]
    };
    let nan = 0x7FF8_0000_0000_0000u64;
    let (one, two) = (f(1.0), f(2.0));
    // pu = t, pv = !t.
    assert_eq!(p("LT", one, two), 0b01);
    assert_eq!(p("LT", two, one), 0b10);
    assert_eq!(p("EQ", 0, 1 << 63), 0b01);
    for (cmp, with_nan) in [
        ("EQ", false),
        ("NE", false),
        ("LT", false),
        ("LE", false),
        ("GT", false),
        ("GE", false),
        ("EQU", true),
        ("NEU", true),
        ("LTU", true),
        ("LEU", true),
        ("GTU", true),
        ("GEU", true),
        ("NAN", true),
        ("NUM", false),
    ] {
        assert_eq!(p(cmp, nan, one) & 1 == 1, with_nan, "{} with a NaN", cmp);
        assert_eq!(p(cmp, one, nan) & 1 == 1, with_nan, "{} with a NaN in SrcB", cmp);
    }
    assert_eq!(p("NE", one, two) & 1, 1);
    assert_eq!(p("NEU", one, one) & 1, 0);
    assert_eq!(p("NUM", one, two) & 1, 1);
    assert_eq!(p("GEU", two, one) & 1, 1);
    // Boolean combination with pp; the default .AND and pp = PT.
    let [a0, a1] = split64(one);
    let [b0, b1] = split64(two);
    let r = call("DSETP.GT.OR P0, P1, R[4:5], R[6:7], PT ;\n P2R R4, PR, RZ, 0x3 ;", &[a0, a1, b0, b1], 1)[0];
    assert_eq!(r, 0b11);
    let r = call("DSETP.GT.XOR P0, P1, R[4:5], R[6:7], PT ;\n P2R R4, PR, RZ, 0x3 ;", &[a0, a1, b0, b1], 1)[0];
    assert_eq!(r, 0b01);
    let r = call("DSETP.LT P0, R[4:5], R[6:7] ;\n P2R R4, PR, RZ, 0x1 ;", &[a0, a1, b0, b1], 1)[0];
    assert_eq!(r, 1);
}

#[test]
fn immediate_uniform_and_constant_sources() {
    // F64Imm holds the upper 32 bits of a binary64: 2.0 and 0.5 are exact.
    assert_eq!(d("DFMA R[4:5], R[4:5], 2.0, R[6:7] ;", f(3.0), f(1.0), 0), f(7.0));
    assert_eq!(d("DFMA R[4:5], R[4:5], R[6:7], 0.5 ;", f(3.0), f(1.0), 0), f(3.5));
    assert_eq!(d("R2UR UR8, R6 ;\n R2UR UR9, R7 ;\n DMUL R[4:5], R[4:5], UR[8:9] ;", f(3.0), f(-2.0), 0), f(-6.0));
    assert_eq!(d("DADD R[4:5], R[4:5], -1 ;", f(3.0), 0, 0), f(2.0));
}
