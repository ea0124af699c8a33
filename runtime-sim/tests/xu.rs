//! XU semantics (vendor document 002, errata E58–E60, E75–E83): POPC, FLO,
//! BREV, BMSK, SGXT and MUFU with every special value of its tables.
mod common;
use common::*;

const QNAN: u32 = 0x7FFF_FFFF;
const PINF: u32 = 0x7F80_0000;
const NINF: u32 = 0xFF80_0000;
const NZERO: u32 = 0x8000_0000;
const ONE: u32 = 0x3F80_0000;
const NAN_IN: u32 = 0x7FC0_1234;

fn x(body: &str, v: u32) -> u32 {
    call(body, &[v], 1)[0]
}

#[test]
fn popc() {
    assert_eq!(x("POPC R4, R4 ;", 0xF0F0_F0F0), 16);
    assert_eq!(x("POPC R4, R4 ;", 0), 0);
    assert_eq!(x("POPC R4, R4 ;", 0xFFFF_FFFF), 32);
    assert_eq!(x("POPC R4, ~R4 ;", 0), 32);
    assert_eq!(x("POPC R4, ~R4 ;", 0x0000_00FF), 24);
}

#[test]
fn flo() {
    assert_eq!(x("FLO.U32 R4, R4 ;", 0x0001_0000), 16);
    assert_eq!(x("FLO.U32 R4, R4 ;", 0xFFFF_FFFF), 31);
    assert_eq!(x("FLO.U32 R4, R4 ;", 1), 0);
    assert_eq!(x("FLO.U32 R4, R4 ;", 0), 0xFFFF_FFFF);
    assert_eq!(x("FLO.U32.SH R4, R4 ;", 0x0001_0000), 15);
    assert_eq!(x("FLO.U32.SH R4, RZ ;", 0), 0xFFFF_FFFF);
    // .S32: negative values search the highest 0 bit (E60).
    assert_eq!(x("FLO R4, R4 ;", 0xFFFF_FFFF), 0xFFFF_FFFF);
    assert_eq!(x("FLO R4, R4 ;", 0xFFFF_0000), 15);
    assert_eq!(x("FLO R4, R4 ;", 0x7FFF_FFFF), 30);
    assert_eq!(x("FLO R4, R4 ;", 0x8000_0000), 30);
    assert_eq!(x("FLO R4, R4 ;", 1), 0);
    assert_eq!(x("FLO.U32 R4, ~R4 ;", 0xFFFF_FFFE), 0);
}

#[test]
fn brev_reverses_bits() {
    assert_eq!(x("BREV R4, R4 ;", 1), 0x8000_0000);
    assert_eq!(x("BREV R4, R4 ;", 0x1234_5678), 0x1E6A_2C48);
    assert_eq!(x("BREV R4, R4 ;", 0xFFFF_0000), 0x0000_FFFF);
}

#[test]
fn bmsk_clamp_and_wrap() {
    let m = |s: &str, a: u32, b: u32| call(s, &[a, b], 1)[0];
    let c = "BMSK R4, R4, R5 ;";
    let w = "BMSK.WRAP R4, R4, R5 ;";
    assert_eq!(m(c, 4, 8), 0x0000_0FF0);
    assert_eq!(m(c, 0, 32), 0xFFFF_FFFF);
    assert_eq!(m(c, 28, 8), 0xF000_0000);
    assert_eq!(m(c, 32, 1), 0);
    assert_eq!(m(c, 4, 32), 0xFFFF_FFF0);
    assert_eq!(m(c, 4, 0), 0);
    assert_eq!(m(c, 31, 1), 0x8000_0000);
    assert_eq!(m(w, 36, 8), 0x0000_0FF0);
    assert_eq!(m(w, 4, 33), 0x0000_0010);
    assert_eq!(m(w, 0, 32), 0);
}

#[test]
fn sgxt_clamp_and_wrap() {
    let s = |b: &str, a: u32, w: u32| call(b, &[a, w], 1)[0];
    assert_eq!(s("SGXT R4, R4, R5 ;", 5, 3), 0xFFFF_FFFD);
    assert_eq!(s("SGXT R4, R4, R5 ;", 3, 3), 3);
    assert_eq!(s("SGXT.U32 R4, R4, R5 ;", 0xABCD_1234, 16), 0x1234);
    assert_eq!(s("SGXT R4, R4, R5 ;", 0xABCD_1234, 0), 0);
    assert_eq!(s("SGXT R4, R4, R5 ;", 0xABCD_1234, 32), 0xABCD_1234);
    assert_eq!(s("SGXT R4, R4, R5 ;", 0xABCD_1234, 40), 0xABCD_1234);
    assert_eq!(s("SGXT.WRAP R4, R4, R5 ;", 0xABCD_1234, 32), 0);
    assert_eq!(s("SGXT.WRAP R4, R4, R5 ;", 1, 33), 0xFFFF_FFFF);
    assert_eq!(s("SGXT.WRAP.U32 R4, R4, R5 ;", 3, 33), 1);
}

fn mufu(f: &str, v: u32) -> u32 {
    x(&format!("MUFU.{} R4, R4 ;", f), v)
}

#[test]
fn mufu_cos_sin_specials() {
    for f in ["COS", "SIN"] {
        assert_eq!(mufu(f, PINF), QNAN, "{} +inf", f);
        assert_eq!(mufu(f, NINF), QNAN, "{} -inf", f);
        assert_eq!(mufu(f, NAN_IN), QNAN, "{} nan", f);
    }
    assert_eq!(mufu("SIN", NZERO), NZERO);
    assert_eq!(mufu("SIN", 0), 0);
    // E77: cos(±0) = 1.
    assert_eq!(mufu("COS", NZERO), ONE);
    assert_eq!(mufu("COS", 0), ONE);
}

#[test]
fn mufu_ex2_lg2_specials() {
    assert_eq!(mufu("EX2", NINF), 0);
    assert_eq!(mufu("EX2", 0), ONE);
    assert_eq!(mufu("EX2", NZERO), ONE);
    assert_eq!(mufu("EX2", PINF), PINF);
    assert_eq!(mufu("EX2", NAN_IN), QNAN);
    assert_eq!(mufu("EX2", 3.0f32.to_bits()), 8.0f32.to_bits());
    assert_eq!(mufu("EX2", (-1.0f32).to_bits()), 0.5f32.to_bits());
    assert_eq!(mufu("LG2", NINF), QNAN);
    assert_eq!(mufu("LG2", (-1.0f32).to_bits()), QNAN);
    assert_eq!(mufu("LG2", 0), NINF);
    assert_eq!(mufu("LG2", NZERO), NINF);
    assert_eq!(mufu("LG2", PINF), PINF);
    assert_eq!(mufu("LG2", NAN_IN), QNAN);
    assert_eq!(mufu("LG2", 8.0f32.to_bits()), 3.0f32.to_bits());
    // A subnormal input is flushed to zero (E78).
    assert_eq!(mufu("LG2", 1), NINF);
}

#[test]
fn mufu_rcp_rsq_sqrt_tanh_specials() {
    assert_eq!(mufu("RCP", NINF), NZERO);
    assert_eq!(mufu("RCP", NZERO), NINF);
    assert_eq!(mufu("RCP", 0), PINF);
    assert_eq!(mufu("RCP", PINF), 0);
    assert_eq!(mufu("RCP", NAN_IN), QNAN);
    assert_eq!(mufu("RCP", 4.0f32.to_bits()), 0.25f32.to_bits());
    assert_eq!(mufu("RCP", 1), PINF);
    assert_eq!(mufu("RSQ", NINF), QNAN);
    assert_eq!(mufu("RSQ", (-4.0f32).to_bits()), QNAN);
    assert_eq!(mufu("RSQ", NZERO), NINF);
    assert_eq!(mufu("RSQ", 0), PINF);
    assert_eq!(mufu("RSQ", PINF), 0);
    assert_eq!(mufu("RSQ", NAN_IN), QNAN);
    assert_eq!(mufu("RSQ", 4.0f32.to_bits()), 0.5f32.to_bits());
    assert_eq!(mufu("SQRT", NINF), QNAN);
    assert_eq!(mufu("SQRT", (-1.0f32).to_bits()), QNAN);
    assert_eq!(mufu("SQRT", NZERO), NZERO);
    assert_eq!(mufu("SQRT", 0), 0);
    assert_eq!(mufu("SQRT", PINF), PINF);
    assert_eq!(mufu("SQRT", NAN_IN), QNAN);
    assert_eq!(mufu("SQRT", 16.0f32.to_bits()), 4.0f32.to_bits());
    assert_eq!(mufu("TANH", NINF), 0xBF80_0000);
    assert_eq!(mufu("TANH", NZERO), NZERO);
    assert_eq!(mufu("TANH", 0), 0);
    assert_eq!(mufu("TANH", PINF), ONE);
    assert_eq!(mufu("TANH", NAN_IN), QNAN);
}

#[test]
fn mufu_modifiers_and_saturation() {
    // -|x| then RCP: -|−4| = -4 → -0.25.
    assert_eq!(x("MUFU.RCP R4, -|R4| ;", (-4.0f32).to_bits()), (-0.25f32).to_bits());
    assert_eq!(x("MUFU.SQRT.F32 R4, |R4| ;", (-16.0f32).to_bits()), 4.0f32.to_bits());
    // .SAT clamps to [+0, 1]; NaN becomes +0.
    assert_eq!(x("MUFU.EX2.SAT R4, R4 ;", 3.0f32.to_bits()), ONE);
    assert_eq!(x("MUFU.EX2.SAT R4, R4 ;", (-1.0f32).to_bits()), 0.5f32.to_bits());
    assert_eq!(x("MUFU.RCP.SAT R4, R4 ;", (-4.0f32).to_bits()), 0);
    assert_eq!(x("MUFU.LG2.SAT R4, R4 ;", (-1.0f32).to_bits()), 0);
}

#[test]
fn mufu_f64_high_word() {
    let f = |op: &str, hi: u32| x(&format!("MUFU.{}.F64 R4, R4 ;", op), hi);
    assert_eq!(f("RCP", 0x4010_0000), 0x3FD0_0000); // 4.0 -> 0.25
    assert_eq!(f("RCP", 0x8000_0001), 0xFFF0_0000); // -subnormal -> -Inf
    assert_eq!(f("RCP", 0x0000_0001), 0x7FF0_0000); // +subnormal -> +Inf
    assert_eq!(f("RCP", 0x8000_0000), 0xFFF0_0000);
    assert_eq!(f("RCP", 0), 0x7FF0_0000);
    assert_eq!(f("RCP", 0xFFF0_0000), 0x8000_0000);
    assert_eq!(f("RCP", 0x7FF0_0000), 0);
    assert_eq!(f("RCP", 0x7FF8_0000), QNAN);
    assert_eq!(f("RSQ", 0x4010_0000), 0x3FE0_0000); // 4.0 -> 0.5
    assert_eq!(f("RSQ", 0xC010_0000), QNAN);
    assert_eq!(f("RSQ", 0xFFF0_0000), QNAN);
    assert_eq!(f("RSQ", 0x8000_0000), 0xFFF0_0000);
    assert_eq!(f("RSQ", 0x8000_0001), 0xFFF0_0000);
    assert_eq!(f("RSQ", 0x0000_0001), 0x7FF0_0000);
    assert_eq!(f("RSQ", 0x7FF0_0000), 0);
    assert_eq!(f("RSQ", 0x7FF0_0001), QNAN);
}

#[test]
fn mufu_half_precision_forms() {
    // F16 with .H1: 3.0 (0x4200) -> 8.0 (0x4800); .H0: 1.0 -> 2.0.
    assert_eq!(x("MUFU.EX2.F16 R4, R4.H1 ;", 0x4200_0000), 0x4800);
    assert_eq!(x("MUFU.EX2.F16 R4, R4.H0 ;", 0x0000_3C00), 0x4000);
    // Packed: each half independently.
    assert_eq!(x("MUFU.EX2.F16_V2 R4, R4 ;", 0x4200_3C00), 0x4800_4000);
    assert_eq!(x("MUFU.EX2.F16_V2 R4, R4 ;", 0xFC00_7E00), 0x0000_7FFF);
    assert_eq!(x("MUFU.TANH.F16 R4, R4.H0 ;", 0xFC00), 0xBC00);
    assert_eq!(x("MUFU.TANH.F16_V2 R4, R4 ;", 0x8000_7C00), 0x8000_3C00);
    // BF16: 1.0 = 0x3F80 -> 2.0 = 0x4000; tanh(∓Inf) = ∓1.
    assert_eq!(x("MUFU.EX2.BF16 R4, R4.H0 ;", 0x3F80), 0x4000);
    assert_eq!(x("MUFU.TANH.BF16_V2 R4, R4 ;", 0xFF80_7F80), 0xBF80_3F80);
    assert_eq!(x("MUFU.EX2.BF16_V2 R4, R4 ;", 0x7FC0_FF80), 0x7FFF_0000);
}
