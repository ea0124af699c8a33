//! F32 arithmetic and conversions (docs/isa-extensions.md 5, 6.19–6.26).
mod common;
use common::*;

const QNAN: u32 = 0x7FFF_FFFF;
const PINF: u32 = 0x7F80_0000;
const NINF: u32 = 0xFF80_0000;
const ONE: u32 = 0x3F80_0000;

fn b(x: f32) -> u32 {
    x.to_bits()
}

fn f3(body: &str, a: u32, bb: u32, c: u32) -> u32 {
    call(body, &[a, bb, c], 1)[0]
}

#[test]
fn fadd_rounding_and_specials() {
    let tiny = b(2f32.powi(-30));
    let add = |r: &str, x: u32, y: u32| f3(&format!("FADD{} R4, R4, R5 ;", r), x, y, 0);
    assert_eq!(add("", ONE, tiny), ONE);
    assert_eq!(add(".RP", ONE, tiny), ONE + 1);
    assert_eq!(add(".RM", ONE, tiny), ONE);
    assert_eq!(add(".RZ", ONE, tiny), ONE);
    assert_eq!(add(".RM", ONE | 1 << 31, tiny | 1 << 31), (ONE + 1) | 1 << 31);
    assert_eq!(add("", b(1.5), b(2.25)), b(3.75));
    assert_eq!(add(".RM", ONE, ONE | 1 << 31), 1 << 31);
    assert_eq!(add("", ONE, ONE | 1 << 31), 0);
    assert_eq!(add("", PINF, NINF), QNAN);
    assert_eq!(add("", PINF, PINF), PINF);
    // NaN priority SrcB, then Ra; made quiet.
    assert_eq!(add("", 0x7F80_0001, 0x7F80_0002), 0x7FC0_0002);
    assert_eq!(add("", 0x7F80_0001, ONE), 0x7FC0_0001);
    // Overflow by rounding mode.
    let max = 0x7F7F_FFFF;
    assert_eq!(add("", max, max), PINF);
    assert_eq!(add(".RZ", max, max), max);
    // Subtraction through the modifier, and |x|.
    assert_eq!(f3("FADD R4, R4, -R5 ;", b(1.0), b(3.0), 0), b(-2.0));
    assert_eq!(f3("FADD R4, |R4|, -|R5| ;", b(-1.0), b(-3.0), 0), b(-2.0));
    // Subnormal results are kept.
    assert_eq!(add("", 1, 1), 2);
}

#[test]
fn fmul_ffma() {
    let mul = |r: &str, x: u32, y: u32| f3(&format!("FMUL{} R4, R4, R5 ;", r), x, y, 0);
    assert_eq!(mul("", b(1.5), b(-2.0)), b(-3.0));
    assert_eq!(mul("", 0, PINF), QNAN);
    assert_eq!(mul("", 1 << 31, b(3.0)), 1 << 31);
    let a = ONE + 1; // 1 + 2^-23
    assert_eq!(mul("", a, a), ONE + 2);
    assert_eq!(mul(".RP", a, a), ONE + 3);
    // Fused: (1 + 2^-23)^2 - (1 + 2^-22) = 2^-46.
    assert_eq!(f3("FFMA R4, R4, R5, -R6 ;", a, a, ONE + 2), b(2f32.powi(-46)));
    assert_eq!(f3("FFMA R4, R4, R5, R6 ;", 0, PINF, ONE), QNAN);
    assert_eq!(f3("FFMA R4, R4, R5, R6 ;", ONE, PINF, NINF), QNAN);
    assert_eq!(f3("FFMA R4, R4, R5, R6 ;", 0x7F80_0001, 0x7F80_0002, 0x7F80_0003), 0x7FC0_0002);
    assert_eq!(f3("FFMA R4, R4, R5, R6 ;", 0x7F80_0001, ONE, 0x7F80_0003), 0x7FC0_0003);
    assert_eq!(f3("FFMA.RM R4, R4, R5, R6 ;", b(2.0), b(3.0), b(-6.0)), 1 << 31);
    assert_eq!(f3("FFMA R4, R4, R5, R6 ;", b(2.0), b(3.0), b(1.0)), b(7.0));
}

#[test]
fn fmnmx_and_fsetp() {
    let m = |s: &str, x: u32, y: u32| f3(s, x, y, 0);
    // pp true = min (DMNMX polarity, erratum E38; isa-extensions §6.21).
    assert_eq!(m("FMNMX R4, R4, R5, PT ;", b(1.0), b(2.0)), b(1.0));
    assert_eq!(m("FMNMX R4, R4, R5, !PT ;", b(1.0), b(2.0)), b(2.0));
    assert_eq!(m("FMNMX R4, R4, R5, PT ;", 0, 1 << 31), 1 << 31);
    assert_eq!(m("FMNMX R4, R4, R5, !PT ;", 0, 1 << 31), 0);
    assert_eq!(m("FMNMX R4, R4, R5, !PT ;", 1 << 31, 0), 0);
    assert_eq!(m("FMNMX R4, R4, R5, PT ;", 0x7FC0_0000, b(2.0)), b(2.0));
    assert_eq!(m("FMNMX.NAN R4, R4, R5, PT ;", 0x7F80_0001, b(2.0)), 0x7FC0_0001);
    assert_eq!(m("FMNMX.NAN R4, R4, R5, PT ;", 0x7F80_0001, 0x7F80_0002), 0x7FC0_0002);
    assert_eq!(m("FMNMX R4, R4, R5, PT ;", 0x7F80_0001, 0x7F80_0002), 0x7FC0_0002);
    let p = |c: &str, x: u32, y: u32| call(&format!("FSETP.{}.AND P0, P1, R4, R5, PT ;\n P2R R4, PR, RZ, 0x3 ;", c), &[x, y], 1)[0];
    assert_eq!(p("LT", b(1.0), b(2.0)), 0b01);
    assert_eq!(p("EQ", 0, 1 << 31), 0b01);
    assert_eq!(p("NE", 0x7FC0_0000, b(2.0)), 0b10);
    assert_eq!(p("NEU", 0x7FC0_0000, b(2.0)), 0b01);
    assert_eq!(p("NAN", b(1.0), 0x7FC0_0000), 0b01);
    assert_eq!(p("NUM", b(1.0), b(1.0)), 0b01);
    assert_eq!(p("GEU", b(1.0), b(2.0)), 0b10);
}

#[test]
fn frnd_f32_and_f64() {
    let r = |m: &str, x: f32| f3(&format!("FRND{} R4, R4 ;", m), b(x), 0, 0);
    assert_eq!(r("", 2.5), b(2.0));
    assert_eq!(r("", 3.5), b(4.0));
    assert_eq!(r("", -0.4), 1 << 31);
    assert_eq!(r(".RP", -0.4), 1 << 31);
    assert_eq!(r(".RM", 0.4), 0);
    assert_eq!(r(".RP", 2.5), b(3.0));
    assert_eq!(r(".RM", -2.5), b(-3.0));
    assert_eq!(r(".RZ", -2.7), b(-2.0));
    assert_eq!(f3("FRND R4, R4 ;", 0x7F80_0001, 0, 0), 0x7FC0_0001);
    assert_eq!(f3("FRND R4, R4 ;", NINF, 0, 0), NINF);
    assert_eq!(f3("FRND R4, -R4 ;", b(1.5), 0, 0), b(-2.0));
    let r64 = call("FRND.F64.RM R[4:5], R[4:5] ;", &split64((-2.5f64).to_bits()), 2);
    assert_eq!(join64(r64[0], r64[1]), (-3.0f64).to_bits());
}

#[test]
fn i2f_conversions() {
    let c = |m: &str, v: u32| f3(&format!("I2F{} R4, R4 ;", m), v, 0, 0);
    assert_eq!(c("", (-1i32) as u32), b(-1.0));
    assert_eq!(c("", 0), 0);
    assert_eq!(c("", (1 << 24) + 1), 0x4B80_0000);
    assert_eq!(c(".RP", (1 << 24) + 1), 0x4B80_0001);
    assert_eq!(c(".U32", 0xFFFF_FFFF), 0x4F80_0000);
    assert_eq!(c(".RZ.U32", 0xFFFF_FFFF), 0x4F7F_FFFF);
    assert_eq!(c(".RM", ((-(1i32 << 24)) - 1) as u32), 0xCB80_0001);
    let r = call("I2F.F64.S64 R[4:5], R[4:5] ;", &split64((-3i64) as u64), 2);
    assert_eq!(join64(r[0], r[1]), (-3.0f64).to_bits());
    let r = call("I2F.F64 R[6:7], R4 ;\n MOV.64 R[4:5], R[6:7] ;", &[(-7i32) as u32], 2);
    assert_eq!(join64(r[0], r[1]), (-7.0f64).to_bits());
}

#[test]
fn f2i_saturating_conversions() {
    let c = |m: &str, x: f32| f3(&format!("F2I{} R4, R4 ;", m), b(x), 0, 0);
    assert_eq!(c(".RZ", -2.7), (-2i32) as u32);
    assert_eq!(c(".RN", 2.5), 2);
    assert_eq!(c(".RN", 3.5), 4);
    assert_eq!(c(".RM", -0.5), (-1i32) as u32);
    assert_eq!(c(".RP", 0.1), 1);
    assert_eq!(c(".RZ.U32", -1.0), 0);
    assert_eq!(c(".RZ.U32", -0.9), 0);
    assert_eq!(c(".RZ", 3e9), 0x7FFF_FFFF);
    assert_eq!(c(".RZ", -3e9), 0x8000_0000);
    assert_eq!(c(".RZ.U32", 5e9), 0xFFFF_FFFF);
    assert_eq!(f3("F2I.RZ R4, R4 ;", 0x7FC0_0000, 0, 0), 0);
    assert_eq!(f3("F2I.RZ R4, R4 ;", PINF, 0, 0), 0x7FFF_FFFF);
    let r = call("F2I.RZ.S64 R[4:5], R4 ;", &[b(1e19)], 2);
    assert_eq!(join64(r[0], r[1]), i64::MAX as u64);
    let r = call("F2I.RN.S32.F64 R4, R[4:5] ;", &split64(2147483647.5f64.to_bits()), 1);
    assert_eq!(r[0], 0x7FFF_FFFF);
}

#[test]
fn f2f_widen_and_narrow() {
    let r = call("F2F.F64.F32 R[6:7], R4 ;\n MOV.64 R[4:5], R[6:7] ;", &[b(1.5)], 2);
    assert_eq!(join64(r[0], r[1]), 1.5f64.to_bits());
    let r = call("F2F.F64.F32 R[6:7], R4 ;\n MOV.64 R[4:5], R[6:7] ;", &[0x7F80_0001], 2);
    assert_eq!(join64(r[0], r[1]), 0x7FF8_0000_2000_0000);
    let n = |m: &str, v: u64| call(&format!("F2F{}.F32.F64 R4, R[4:5] ;", m), &split64(v), 1)[0];
    let x = (1.0 + 2f64.powi(-30)).to_bits();
    assert_eq!(n("", x), ONE);
    assert_eq!(n(".RP", x), ONE + 1);
    assert_eq!(n(".RZ", 1e300f64.to_bits()), 0x7F7F_FFFF);
    assert_eq!(n("", 1e300f64.to_bits()), PINF);
    assert_eq!(n("", 0x7FF0_0000_2000_0000), 0x7FC0_0001);
    assert_eq!(n("", 0xFFF8_0000_0000_0000), 0xFFC0_0000);
}
