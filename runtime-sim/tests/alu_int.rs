//! Integer ALU semantics (vendor document 001 and errata E18–E66), one test
//! per instruction form family, with expected values worked out by hand.
mod common;
use common::*;

/// Packs P0–P6 (and PT as bit 7) into R4 after `body`.
fn preds(body: &str, args: &[u32]) -> u32 {
    call(&format!("{}\n    P2R R4, PR, RZ, 0x7f ;", body), args, 1)[0]
}

#[test]
fn iadd_plain_and_negated() {
    assert_eq!(call("IADD R4, R4, R5 ;", &[1, 2], 1), [3]);
    assert_eq!(call("IADD R4, R4, -R5 ;", &[5, 7], 1), [0xFFFF_FFFE]);
    assert_eq!(call("IADD R4, -R4, R5 ;", &[5, 7], 1), [2]);
    // Folded negative immediate: 0x200000 - 0x114514.
    assert_eq!(call("IADD R4, R4, -0x114514 ;", &[0x20_0000], 1), [0xEBAEC]);
}

#[test]
fn iadd_carry_out_at_2_pow_32() {
    // 0xFFFFFFFF + 1 = 2^32: result 0, carry (E18: >= 2^32).
    assert_eq!(call("IADD R4, P0, R4, R5 ;\n P2R R5, PR, RZ, 0x1 ;", &[0xFFFF_FFFF, 1], 2), [0, 1]);
    assert_eq!(call("IADD R4, P0, R4, R5 ;\n P2R R5, PR, RZ, 0x1 ;", &[0xFFFF_FFFF, 0], 2), [0xFFFF_FFFF, 0]);
    assert_eq!(call("IADD R4, P0, R4, R5 ;\n P2R R5, PR, RZ, 0x1 ;", &[0x8000_0000, 0x8000_0000], 2), [0, 1]);
    // Negation contributes 2^32 - x (E21): 7 - 5 carries, 5 - 7 does not, x - 0 carries.
    assert_eq!(call("IADD R4, P0, R4, -R5 ;\n P2R R5, PR, RZ, 0x1 ;", &[7, 5], 2), [2, 1]);
    assert_eq!(call("IADD R4, P0, R4, -R5 ;\n P2R R5, PR, RZ, 0x1 ;", &[5, 7], 2), [0xFFFF_FFFE, 0]);
    assert_eq!(call("IADD R4, P0, R4, -R5 ;\n P2R R5, PR, RZ, 0x1 ;", &[9, 0], 2), [9, 1]);
    // -1 + -1 = 2^33 - 2: result 0xFFFFFFFE with a carry.
    assert_eq!(call("IADD R4, P0, -R4, -R5 ;\n P2R R5, PR, RZ, 0x1 ;", &[1, 1], 2), [0xFFFF_FFFE, 1]);
}

#[test]
fn iadd_x_chains_64_bit_add_and_sub() {
    // 0x1_FFFFFFFF + 1 = 0x2_00000000.
    let add = "IADD R4, P0, R4, R6 ;\n IADD.X R5, R5, R7, P0 ;";
    assert_eq!(call(add, &[0xFFFF_FFFF, 1, 1, 0], 2), [0, 2]);
    // 0x5_00000000 - 0x1_00000000: low part -0 carries (E21), high 5 + ~1 + 1.
    let sub = "IADD R4, P0, R4, -R6 ;\n IADD.X R5, R5, ~R7, P0 ;";
    assert_eq!(call(sub, &[0, 5, 0, 1], 2), [0, 4]);
    // 3 - 5 = -2 as 64 bits.
    assert_eq!(call(sub, &[3, 0, 5, 0], 2), [0xFFFF_FFFE, 0xFFFF_FFFF]);
    // .X with the default carry-in !PT adds nothing; carry-out of 0xFFFFFFFF + 0 + 1.
    assert_eq!(call("IADD.X R4, R4, R5 ;", &[10, 20], 1), [30]);
    assert_eq!(call("IADD.X R4, P1, R4, R5, PT ;\n P2R R5, PR, RZ, 0x2 ;", &[0xFFFF_FFFF, 0], 2), [0, 2]);
    // ~x in .X mode contributes 2^32 - 1 - x: 1 + ~0 + 1 = 2^32 + 1.
    assert_eq!(call("IADD.X R4, P0, R4, ~R5, PT ;\n P2R R5, PR, RZ, 0x1 ;", &[1, 0], 2), [1, 1]);
}

#[test]
fn imad_lo_and_hi_x() {
    assert_eq!(call("IMAD R4, R4, R5, R6 ;", &[3, 4, 5], 1), [17]);
    // Signed high word of -2 * 3 = -6 is 0xFFFFFFFF; unsigned 0xFFFFFFFE * 3 = 0x2_FFFFFFFA.
    assert_eq!(call("IMAD.HI.X R4, R4, R5, RZ ;", &[0xFFFF_FFFE, 3], 1), [0xFFFF_FFFF]);
    assert_eq!(call("IMAD.HI.X.U32 R4, R4, R5, RZ ;", &[0xFFFF_FFFE, 3], 1), [2]);
    // Low word -1 plus 1 = 2^32: carry.
    assert_eq!(call("IMAD R4, P0, R4, R5, R6 ;\n P2R R5, PR, RZ, 0x1 ;", &[0xFFFF_FFFF, 1, 1], 2), [0, 1]);
    assert_eq!(call("IMAD R4, P0, R4, R5, R6 ;\n P2R R5, PR, RZ, 0x1 ;", &[0x1_0000, 0x1_0000, 5], 2), [5, 0]);
}

#[test]
fn imad_64_bit_multiply_add_and_subtract_idioms() {
    // R[8:9] = R4 * R5 + R[6:7]: 0xFFFFFFFE_00000001 + 0x1_00000001 = 0xFFFFFFFF_00000002.
    let madd = "IMAD.U32 R8, P0, R4, R5, R6 ;\n IMAD.HI.X.U32 R9, R4, R5, R7, P0 ;\n MOV R4, R8 ;\n MOV R5, R9 ;";
    assert_eq!(call(madd, &[0xFFFF_FFFF, 0xFFFF_FFFF, 1, 1], 2), [2, 0xFFFF_FFFF]);
    // R[8:9] = R4 * R5 - R[6:7] with the -SrcC / ~SrcC pair (E21).
    let msub = "IMAD R8, P0, R4, R5, -R6 ;\n IMAD.HI.X R9, R4, R5, ~R7, P0 ;\n MOV R4, R8 ;\n MOV R5, R9 ;";
    assert_eq!(call(msub, &[3, 4, 0, 0], 2), [12, 0]);
    assert_eq!(call(msub, &[3, 4, 13, 0], 2), [0xFFFF_FFFF, 0xFFFF_FFFF]);
}

#[test]
fn imad_wide_and_wide_x() {
    // -2 * 3 = 0xFFFFFFFF_FFFFFFFA; + 10 = 2^64 + 4: result 4, carry (E24).
    let w = "IMAD.WIDE R[8:9], P0, R4, R5, R[6:7] ;\n MOV R4, R8 ;\n MOV R5, R9 ;\n P2R R6, PR, RZ, 0x1 ;";
    assert_eq!(call(w, &[0xFFFF_FFFE, 3, 10, 0], 3), [4, 0, 1]);
    let wu = "IMAD.WIDE.U32 R[8:9], P0, R4, R5, R[6:7] ;\n MOV R4, R8 ;\n MOV R5, R9 ;\n P2R R6, PR, RZ, 0x1 ;";
    assert_eq!(call(wu, &[0xFFFF_FFFF, 0xFFFF_FFFF, 0, 0], 3), [1, 0xFFFF_FFFE, 0]);
    // -SrcC: 6 - 0 carries (2^64 + 6), 6 - 7 does not.
    let neg = "IMAD.WIDE.U32 R[8:9], P0, R4, R5, -R[6:7] ;\n MOV R4, R8 ;\n MOV R5, R9 ;\n P2R R6, PR, RZ, 0x1 ;";
    assert_eq!(call(neg, &[2, 3, 0, 0], 3), [6, 0, 1]);
    assert_eq!(call(neg, &[2, 3, 7, 0], 3), [0xFFFF_FFFF, 0xFFFF_FFFF, 0]);
    // .X adds the carry-in: 2 * 3 + 1 + 1.
    let x = "R2P PR, R10, 0x1 ;\n IMAD.WIDE.X R[8:9], R4, R5, R[6:7], P0 ;\n MOV R4, R8 ;\n MOV R5, R9 ;";
    let mut args = [0u32; 7];
    args[..4].copy_from_slice(&[2, 3, 1, 0]);
    args[6] = 1; // R10
    assert_eq!(call(x, &args, 2), [8, 0]);
}

#[test]
fn idp_2a_and_4a() {
    // Bytes of a: [3, 2, -1, 1], of b: [5, 4, 3, 2]: 15 + 8 - 3 + 2 = 22, + 100.
    assert_eq!(call("IDP.4A.S8.S8 R4, R4, R5, R6 ;", &[0x01FF_0203, 0x0203_0405, 100], 1), [122]);
    // Unsigned: 0xFF counts 255: 15 + 8 + 765 + 2 = 790, + 100.
    assert_eq!(call("IDP.4A.U8.U8 R4, R4, R5, R6 ;", &[0x01FF_0203, 0x0203_0405, 100], 1), [890]);
    // Mixed: a signed, b unsigned; -1 * 255 = -255.
    assert_eq!(call("IDP.4A.S8.U8 R4, R4, R5, RZ ;", &[0xFF, 0xFF], 1), [(-255i32) as u32]);
    // 4 * 255 * 255 + 0xFFFFFFFF = 2^32 + 260099: carry (E19).
    let c = "IDP.4A.U8.U8 R4, P0, R4, R5, R6 ;\n P2R R5, PR, RZ, 0x1 ;";
    assert_eq!(call(c, &[0xFFFF_FFFF, 0xFFFF_FFFF, 0xFFFF_FFFF], 2), [0x3F803, 1]);
    // A negative sum does not carry.
    assert_eq!(call("IDP.4A.S8.S8 R4, P0, R4, R5, RZ ;\n P2R R5, PR, RZ, 0x1 ;", &[0xFF, 1], 2), [0xFFFF_FFFF, 0]);
    // 2A: a = [3, -2] (16-bit), b bytes [1, 2, 3, 4]; LO: 3*1 - 2*2 = -1; HI: 3*3 - 2*4 = 1.
    assert_eq!(call("IDP.2A.S16.S8 R4, R4, R5, R6 ;", &[0xFFFE_0003, 0x0403_0201, 10], 1), [9]);
    assert_eq!(call("IDP.2A.HI.S16.S8 R4, R4, R5, R6 ;", &[0xFFFE_0003, 0x0403_0201, 10], 1), [11]);
    // Unsigned 16-bit elements: 0xFFFE = 65534.
    assert_eq!(call("IDP.2A.U16.U8 R4, R4, R5, RZ ;", &[0xFFFE_0000, 0x0000_0100], 1), [65534]);
    // Carry-in pp.
    assert_eq!(call("IDP.4A.U8.U8 R4, R4, R5, R6, PT ;", &[1, 1, 1], 1), [3]);
}

#[test]
fn imul_lo_hi_signed_unsigned() {
    assert_eq!(call("IMUL R4, R4, R5 ;", &[0x1_0000, 0x1_0001], 1), [0x1_0000]);
    assert_eq!(call("IMUL.HI R4, R4, R5 ;", &[0xFFFF_FFFF, 1], 1), [0xFFFF_FFFF]);
    assert_eq!(call("IMUL.HI.U32 R4, R4, R5 ;", &[0xFFFF_FFFF, 1], 1), [0]);
    assert_eq!(call("IMUL.HI.U32 R4, R4, R5 ;", &[0xFFFF_FFFF, 0xFFFF_FFFF], 1), [0xFFFF_FFFE]);
    assert_eq!(call("IMUL R4, R4, -R5 ;", &[3, 4], 1), [0xFFFF_FFF4]);
    // INT_MIN * -1 wraps to INT_MIN in the low word; the high word is 0.
    assert_eq!(call("IMUL R4, R4, R5 ;", &[0x8000_0000, 0xFFFF_FFFF], 1), [0x8000_0000]);
    assert_eq!(call("IMUL.HI R4, R4, R5 ;", &[0x8000_0000, 0xFFFF_FFFF], 1), [0]);
}

#[test]
fn lea_three_modes() {
    assert_eq!(call("LEA R4, R4, R5, 0x4 ;", &[3, 100], 1), [148]);
    // 0xC0000000 << 1 = 0x80000000 (mod 2^32) + 0x80000000 = 2^32: carry.
    let c = "LEA R4, P0, R4, R5, 0x1 ;\n P2R R5, PR, RZ, 0x1 ;";
    assert_eq!(call(c, &[0xC000_0000, 0x8000_0000], 2), [0, 1]);
    assert_eq!(call(c, &[0x8000_0000, 5], 2), [5, 0]);
    // -Ra is negated before the shift (E35): -1 << 2 = 0xFFFFFFFC, + 8 = 4 with carry.
    assert_eq!(call("LEA R4, P0, -R4, R5, 0x2 ;\n P2R R5, PR, RZ, 0x1 ;", &[1, 8], 2), [4, 1]);
    // HI.X: ({1, 0xF0000000} << 4) >> 32 = 0x1F, + 0x100.
    assert_eq!(call("LEA.HI.X R4, R4, R5, R6, 0x4 ;", &[0xF000_0000, 0x100, 1], 1), [0x11F]);
    // 64-bit: (0x1_80000000 << 3) + 0xC0000000 = 0xC_C0000000.
    let w = "LEA R8, P0, R4, R6, 0x3 ;\n LEA.HI.X R9, R4, R7, R5, 0x3, P0 ;\n MOV R4, R8 ;\n MOV R5, R9 ;";
    assert_eq!(call(w, &[0x8000_0000, 1, 0xC000_0000, 0], 2), [0xC000_0000, 0xC]);
    // Shift 0 in HI mode yields Rc.
    assert_eq!(call("LEA.HI.X R4, R4, RZ, R5, 0x0 ;", &[0x1234, 0x5678], 1), [0x5678]);
    // SX32: sext(-16) << 4 = -256, high word 0xFFFFFFFF, + 2 = 1 with carry.
    let sx = "LEA.HI.X.SX32 R4, P0, R4, R5, 0x4 ;\n P2R R5, PR, RZ, 0x1 ;";
    assert_eq!(call(sx, &[0xFFFF_FFF0, 2], 2), [1, 1]);
    // ~Ra in SX32 mode: ~5 = -6, shift 0: high word 0xFFFFFFFF + 1 = 0, carry.
    assert_eq!(call("LEA.HI.X.SX32 R4, P0, ~R4, R5, 0x0 ;\n P2R R5, PR, RZ, 0x1 ;", &[5, 1], 2), [0, 1]);
    // ~{Rc, Ra} in HI.X mode: ~{0, 0} << 0 >> 32 = 0xFFFFFFFF.
    assert_eq!(call("LEA.HI.X R4, ~R4, RZ, R5, 0x0 ;", &[0, 0], 1), [0xFFFF_FFFF]);
}

#[test]
fn iabs_and_imnmx() {
    assert_eq!(call("IABS R4, R4 ;", &[(-5i32) as u32], 1), [5]);
    assert_eq!(call("IABS R4, R4 ;", &[0x8000_0000], 1), [0x8000_0000]);
    assert_eq!(call("IABS R4, -0x1 ;", &[], 1), [1]);
    assert_eq!(call("IMNMX R4, R4, R5, PT ;", &[0xFFFF_FFFF, 1], 1), [0xFFFF_FFFF]);
    assert_eq!(call("IMNMX.U32 R4, R4, R5, PT ;", &[0xFFFF_FFFF, 1], 1), [1]);
    assert_eq!(call("IMNMX R4, R4, R5, !PT ;", &[0xFFFF_FFFF, 1], 1), [1]);
    assert_eq!(call("IMNMX.U32 R4, R4, R5, !PT ;", &[0xFFFF_FFFF, 1], 1), [0xFFFF_FFFF]);
    assert_eq!(call("IMNMX R4, R4, 0x7fffffff, !PT ;", &[0x8000_0000], 1), [0x7FFF_FFFF]);
}

#[test]
fn p2r_and_r2p() {
    // R2P sets P0..P6 from bits 0..6; P2R packs them back with PT as bit 7 (E40).
    assert_eq!(call("R2P PR, R4, 0x7f ;\n P2R R4, PR, RZ, 0xff ;", &[0x55], 1), [0xD5]);
    // Only selected predicates change (E41).
    assert_eq!(preds("R2P PR, R5, 0x7f ;\n R2P PR, R4, 0x0f ;", &[0, 0x7f]), 0x70);
    assert_eq!(preds("R2P PR, R4.B1, 0xff ;", &[0x0300]), 0x03);
    // P2R.B2 replaces byte 2 of Ra: (0x0f & 0x81) | (0xf0 & 0xBB) = 0xB1.
    assert_eq!(call("R2P PR, R6, 0x7f ;\n P2R.B2 R4, PR, R5, 0x0f ;", &[0, 0xAABB_CCDD, 1], 1), [0xAAB1_CCDD]);
    // P2R mask bit 7 copies PT (1).
    assert_eq!(call("P2R.B3 R4, PR, RZ, 0x80 ;", &[], 1), [0x8000_0000]);
}

#[test]
fn isetp_compare_bool_and_both_outputs() {
    assert_eq!(preds("ISETP.LT.AND P0, P1, R4, R5, PT ;", &[0xFFFF_FFFF, 1]), 0b01);
    assert_eq!(preds("ISETP.LT.U32.AND P0, P1, R4, R5, PT ;", &[0xFFFF_FFFF, 1]), 0b10);
    for (cmp, a, b, t) in [
        ("EQ", 5u32, 5u32, true),
        ("NE", 5, 5, false),
        ("LE", 5, 5, true),
        ("GT", 5, 5, false),
        ("GE", 4, 5, false),
        ("GT", 0x8000_0000, 0x7FFF_FFFF, false),
    ] {
        let body = format!("ISETP.{}.AND P2, PT, R4, R5, PT ;", cmp);
        assert_eq!(preds(&body, &[a, b]) >> 2 & 1 == 1, t, "{} {} {}", cmp, a, b);
    }
    // OR with pp true is always true; XOR with pp true inverts; pv = !t op pp.
    assert_eq!(preds("ISETP.EQ.OR P0, P1, R4, R5, PT ;", &[1, 2]), 0b11);
    assert_eq!(preds("ISETP.EQ.XOR P0, P1, R4, R5, PT ;", &[1, 2]), 0b01);
    assert_eq!(preds("ISETP.EQ.AND P0, P1, R4, R5, !PT ;", &[1, 1]), 0b00);
}

#[test]
fn isetp_x_compares_64_bit_values() {
    // R[4:5] < R[6:7]: low words compared unsigned, high words signed with .X.
    let lt = "ISETP.LT.U32.AND P0, PT, R4, R6, PT ;\n ISETP.LT.AND.X P1, PT, R5, R7, PT, P0 ;\n P2R R4, PR, RZ, 0x2 ;";
    assert_eq!(call(lt, &[5, 1, 7, 1], 1), [2]);
    assert_eq!(call(lt, &[5, 1, 3, 1], 1), [0]);
    assert_eq!(call(lt, &[9, 0xFFFF_FFFF, 0, 1], 1), [2]);
    // Equality across both words.
    let eq = "ISETP.EQ.U32.AND P0, PT, R4, R6, PT ;\n ISETP.EQ.AND.X P1, PT, R5, R7, PT, P0 ;\n P2R R4, PR, RZ, 0x2 ;";
    assert_eq!(call(eq, &[5, 1, 5, 1], 1), [2]);
    assert_eq!(call(eq, &[5, 1, 6, 1], 1), [0]);
    // Default pq is !PT (E42): equal high words then give false.
    assert_eq!(call("ISETP.EQ.AND.X P1, PT, R4, R5, PT ;\n P2R R4, PR, RZ, 0x2 ;", &[1, 1], 1), [0]);
}

#[test]
fn iset_bm_bf_and_x() {
    assert_eq!(call("ISET.LT R4, R4, R5 ;", &[1, 2], 1), [0xFFFF_FFFF]);
    assert_eq!(call("ISET.LT.BF R4, R4, R5 ;", &[1, 2], 1), [0x3F80_0000]);
    assert_eq!(call("ISET.LT R4, R4, R5 ;", &[2, 1], 1), [0]);
    assert_eq!(call("ISET.LT.U32 R4, R4, R5 ;", &[0xFFFF_FFFF, 1], 1), [0]);
    assert_eq!(call("ISET.GE.OR R4, R4, R5, PT ;", &[0, 1], 1), [0xFFFF_FFFF]);
    assert_eq!(call("ISET.EQ.AND.X R4, R4, R5, PT, PT ;", &[3, 3], 1), [0xFFFF_FFFF]);
    assert_eq!(call("ISET.EQ.AND.X R4, R4, R5, PT, !PT ;", &[3, 3], 1), [0]);
}

#[test]
fn sel_lop3_plop3() {
    assert_eq!(call("SEL R4, R4, R5, PT ;", &[1, 2], 1), [1]);
    assert_eq!(call("SEL R4, R4, R5, !PT ;", &[1, 2], 1), [2]);
    let (a, b, c) = (0x1234_5678, 0xFF00_FF00, 0x0F0F_0F0F);
    assert_eq!(call("LOP3.LUT R4, R4, R5, R6, 0x80, !PT ;", &[a, b, c], 1), [0x0200_0600]);
    assert_eq!(call("LOP3.LUT R4, R4, R5, R6, 0xfe, !PT ;", &[a, b, c], 1), [0xFF3F_FF7F]);
    assert_eq!(call("LOP3 R4, R4, R5, R6, 0x1a, !PT ;", &[a, b, c], 1), [0x0D3B_0977]);
    assert_eq!(call("LOP3.LUT R4, R4, R5, R6, 0x96, !PT ;", &[a, b, c], 1), [a ^ b ^ c]);
    assert_eq!(call("LOP3 R4, R4, R5, R6, 0x0, !PT ;", &[a, b, c], 1), [0]);
    assert_eq!(call("LOP3.LUT R4, R4, R5, R6, 0xff, !PT ;", &[a, b, c], 1), [0xFFFF_FFFF]);
    // Predicate output: PAND with pp, POR with pp (the default, E51).
    assert_eq!(preds("LOP3.PAND P0, R4, R4, R5, R6, 0x80, PT ;", &[a, b, c]), 1);
    assert_eq!(preds("LOP3.PAND P0, R4, R4, R5, R6, 0x80, !PT ;", &[a, b, c]), 0);
    assert_eq!(preds("LOP3.LUT P0, R4, R4, R5, R6, 0x00, PT ;", &[a, b, c]), 1);
    assert_eq!(preds("LOP3 P0, R4, R4, R5, R6, 0x00, !PT ;", &[a, b, c]), 0);
    // PLOP3 P0 = P1 & !P2 & P3.
    assert_eq!(preds("R2P PR, R4, 0x7f ;\n PLOP3 P0, P1, !P2, P3, 0x80 ;", &[0b1010]) & 1, 1);
    assert_eq!(preds("R2P PR, R4, 0x7f ;\n PLOP3 P0, P1, !P2, P3, 0x80 ;", &[0b1110]) & 1, 0);
    // Truth-table order: lut bit (a<<2 | b<<1 | c); 0xF0 = a.
    assert_eq!(preds("R2P PR, R4, 0x7f ;\n PLOP3 P0, P1, P2, P3, 0xf0 ;", &[0b0010]) & 1, 1);
    assert_eq!(preds("R2P PR, R4, 0x7f ;\n PLOP3 P0, P1, P2, P3, 0xaa ;", &[0b0010]) & 1, 0);
}

#[test]
fn shf_funnel_shifts() {
    assert_eq!(call("SHF.L.U32 R4, R4, 0x4, RZ ;", &[0x8000_0001], 1), [0x10]);
    assert_eq!(call("SHF.L.HI.U32 R4, R4, 0x4, R5 ;", &[0xF000_0000, 1], 1), [0x1F]);
    assert_eq!(call("SHF.R.S32.HI R4, RZ, 0x4, R5 ;", &[0, 0x8000_0000], 1), [0xF800_0000]);
    assert_eq!(call("SHF.R.U32.HI R4, RZ, 0x4, R5 ;", &[0, 0x8000_0000], 1), [0x0800_0000]);
    // Counts 0, 31, 32, 33 with CLAMP (N = 32) and WRAP.
    let hi = "SHF.R.S32.HI R4, RZ, R6, R5 ;";
    assert_eq!(call(hi, &[0, 0x8000_0000, 0], 1), [0x8000_0000]);
    assert_eq!(call(hi, &[0, 0x8000_0000, 31], 1), [0xFFFF_FFFF]);
    assert_eq!(call(hi, &[0, 0x8000_0000, 32], 1), [0xFFFF_FFFF]);
    assert_eq!(call(hi, &[0, 0x4000_0000, 32], 1), [0]);
    assert_eq!(call(hi, &[0, 0x4000_0000, 33], 1), [0]);
    let wrap = "SHF.R.WRAP.U32.HI R4, RZ, R6, R5 ;";
    assert_eq!(call(wrap, &[0, 0x8000_0000, 32], 1), [0x8000_0000]);
    assert_eq!(call(wrap, &[0, 0x8000_0000, 33], 1), [0x4000_0000]);
    // LO of a right funnel: bits of SrcC enter from the top.
    assert_eq!(call("SHF.R.U32 R4, R4, 0x8, R5 ;", &[0x1122_3344, 0x5566_7788], 1), [0x8811_2233]);
    // 64-bit: 0x12345678_9ABCDEF0 >> 36 = 0x01234567.
    assert_eq!(call("SHF.R.U64 R4, R4, 0x24, R5 ;", &[0x9ABC_DEF0, 0x1234_5678], 1), [0x0123_4567]);
    let l64 = "SHF.L.U64.HI R4, R4, R6, R5 ;";
    assert_eq!(call(l64, &[1, 0, 63], 1), [0x8000_0000]);
    assert_eq!(call(l64, &[1, 0, 64], 1), [0]);
    assert_eq!(call(l64, &[1, 0, 100], 1), [0]);
    assert_eq!(call("SHF.L.WRAP.U64.HI R4, R4, R6, R5 ;", &[1, 0, 65], 1), [0]);
    assert_eq!(call("SHF.L.WRAP.U64 R4, R4, R6, R5 ;", &[1, 0, 65], 1), [2]);
    assert_eq!(call("SHF.R.S64 R4, R4, R6, R5 ;", &[0, 0x8000_0000, 64], 1), [0xFFFF_FFFF]);
    // The document's example: count 0x24 clamps to 32, so .HI returns Ra.
    assert_eq!(call("SHF.L.HI.S32 R4, R4, 0x24, R5 ;", &[0xDEAD_BEEF, 7], 1), [0xDEAD_BEEF]);
}

#[test]
fn mov_32_64_and_constant() {
    assert_eq!(call("MOV R4, 0x114514 ;", &[], 1), [0x114514]);
    assert_eq!(call("MOV.64 R[4:5], R[6:7] ;", &[0, 0, 0xAAAA, 0xBBBB], 2), [0xAAAA, 0xBBBB]);
    // c[0x0][0x0] is NTID.x (docs/abi.md): 1 for a call.
    assert_eq!(call("MOV R4, c[0x0][0x0] ;", &[], 1), [1]);
    assert_eq!(call("MOV.64 R[4:5], RZ ;", &[5, 6], 2), [0, 0]);
    // E61: a uniform pair and an 8-byte constant (NTID.x, NTID.y = 1, 1).
    assert_eq!(call("R2UR UR6, R6 ;\n R2UR UR7, R7 ;\n MOV.64 R[4:5], UR[6:7] ;", &[0, 0, 0xAAAA, 0xBBBB], 2), [0xAAAA, 0xBBBB]);
    assert_eq!(call("MOV.64 R[4:5], c[0x0][0x0] ;", &[7, 7], 2), [1, 1]);
}

#[test]
fn prmt_every_mode() {
    let (a, b) = (0x3322_1100u32, 0x7766_5544u32);
    let p = |mode: &str, sel: u32| call(&format!("PRMT{} R4, R4, R5, R6 ;", mode), &[a, b, sel], 1)[0];
    assert_eq!(p("", 0x3210), 0x3322_1100);
    assert_eq!(p("", 0x7654), 0x7766_5544);
    assert_eq!(p("", 0x0123), 0x0011_2233);
    assert_eq!(p(".IDX", 0x4444), 0x4444_4444);
    assert_eq!(p(".F4E", 0), 0x3322_1100);
    assert_eq!(p(".F4E", 1), 0x4433_2211);
    assert_eq!(p(".F4E", 3), 0x6655_4433);
    assert_eq!(p(".F4E", 0xFFFF_FFFC), 0x3322_1100);
    assert_eq!(p(".B4E", 0), 0x5566_7700);
    assert_eq!(p(".B4E", 1), 0x6677_0011);
    assert_eq!(p(".B4E", 3), 0x0011_2233);
    assert_eq!(p(".RC8", 0), 0x0000_0000);
    assert_eq!(p(".RC8", 2), 0x2222_2222);
    assert_eq!(p(".RC8", 3), 0x3333_3333);
    assert_eq!(p(".ECL", 0), 0x3322_1100);
    assert_eq!(p(".ECL", 1), 0x3322_1111);
    assert_eq!(p(".ECL", 2), 0x3322_2222);
    assert_eq!(p(".ECL", 3), 0x3333_3333);
    assert_eq!(p(".ECR", 0), 0x0000_0000);
    assert_eq!(p(".ECR", 1), 0x1111_1100);
    assert_eq!(p(".ECR", 2), 0x2222_1100);
    assert_eq!(p(".ECR", 3), 0x3322_1100);
    assert_eq!(p(".RC16", 0), 0x1100_1100);
    assert_eq!(p(".RC16", 1), 0x3322_3322);
    assert_eq!(p(".RC16", 2), 0x1100_1100);
    assert_eq!(p(".RC16", 3), 0x3322_3322);
    // IDX sign replication: nibble bit 3 copies the sign of the selected byte.
    let s = |a: u32, b: u32, c: u32| call("PRMT R4, R4, R5, R6 ;", &[a, b, c], 1)[0];
    assert_eq!(s(0x3322_1100, 0xF766_5544, 0x000F), 0x0000_00FF);
    assert_eq!(s(0x3322_1100, 0x7766_5544, 0x000F), 0x0000_0000);
    assert_eq!(s(0x8080_0000, 0x0000_FF7F, 0xABCD), 0xFFFF_00FF);
}

#[test]
fn i2i_saturates() {
    let c = |t: &str, v: i32| call(&format!("I2I.{} R4, R4 ;", t), &[v as u32], 1)[0];
    assert_eq!(c("S8", 200), 0x7F);
    assert_eq!(c("S8", -200), 0xFFFF_FF80);
    assert_eq!(c("S8", -5), 0xFFFF_FFFB);
    assert_eq!(c("U8", -5), 0);
    assert_eq!(c("U8", 300), 0xFF);
    assert_eq!(c("S16", 32768), 0x7FFF);
    assert_eq!(c("S16", i32::MIN), 0xFFFF_8000);
    assert_eq!(c("U16", 65535), 0xFFFF);
    assert_eq!(call("I2I.U16 R4, 0x114514 ;", &[], 1), [0xFFFF]);
}

#[test]
fn i2ip_packs_with_fill() {
    // S8: 300 -> 127, -300 -> -128; Rc fills the upper 16 bits.
    assert_eq!(call("I2IP.S8 R4, R4, R5, R6 ;", &[300, (-300i32) as u32, 0xABCD_1234], 1), [0x1234_7F80]);
    assert_eq!(call("I2IP.S8.SATRELU R4, R4, R5, RZ ;", &[(-5i32) as u32, 5], 1), [0x0005]);
    assert_eq!(call("I2IP.S4.SATRELU R4, R4, R5, RZ ;", &[3, 100], 1), [0x37]);
    assert_eq!(call("I2IP.U16 R4, R4, R5, R6 ;", &[70000, (-1i32) as u32, 0xFFFF_FFFF], 1), [0xFFFF_0000]);
    assert_eq!(call("I2IP.U2 R4, R4, R5, R6 ;", &[5, 1, 0xFFFF_FFFF], 1), [0xFFFF_FFFD]);
    assert_eq!(call("I2IP.S2 R4, R4, R5, RZ ;", &[(-7i32) as u32, 1], 1), [0b1001]);
}

#[test]
fn setgpr_getgpr_dynamic_index() {
    // R[UR4+1] with UR4 = 5 reads R6.
    assert_eq!(call("R2UR UR4, R4 ;\n GETGPR R4, R[UR4+0x1] ;", &[5, 0, 0xAAA], 1), [0xAAA]);
    // SETGPR R[UR4] with UR4 = 5 writes R5.
    assert_eq!(call("R2UR UR4, R4 ;\n SETGPR R[UR4], R6 ;", &[5, 0, 0xBBB], 2), [5, 0xBBB]);
    // A negative offset.
    assert_eq!(call("R2UR UR4, R4 ;\n GETGPR R4, R[UR4-0x2] ;", &[7, 0x42], 1), [0x42]);
    // Index 255 is RZ: reads 0, writes are dropped.
    assert_eq!(call("R2UR UR4, R4 ;\n GETGPR R4, R[UR4] ;", &[255], 1), [0]);
}

#[test]
fn every_source_kind_of_the_operand_slots() {
    // SrcB / SrcC from a register, a uniform register, an immediate and the
    // constant bank (c[0x0][0x0] = NTID.x = 1 in a call).
    let r = |body: &str, args: &[u32]| call(&format!("R2UR UR6, R6 ;\n {}", body), args, 1)[0];
    assert_eq!(r("IADD R4, R4, UR6 ;", &[5, 0, 7]), 12);
    assert_eq!(r("IADD R4, R4, -UR6 ;", &[5, 0, 7]), 0xFFFF_FFFE);
    assert_eq!(r("IADD R4, R4, c[0x0][0x0] ;", &[5]), 6);
    assert_eq!(r("IADD R4, R4, -c[0x0][0x0] ;", &[5]), 4);
    assert_eq!(r("IMAD R4, R4, 0x3, R5 ;", &[5, 2]), 17);
    assert_eq!(r("IMAD R4, R4, R5, 0x7 ;", &[5, 2]), 17);
    assert_eq!(r("IMAD R4, R4, c[0x0][0x0], R5 ;", &[5, 2]), 7);
    assert_eq!(r("IMAD R4, R4, R5, c[0x0][0x0] ;", &[5, 2]), 11);
    assert_eq!(r("IMAD R4, R4, R5, -c[0x0][0x0] ;", &[5, 2]), 9);
    assert_eq!(r("IMAD R4, R4, UR6, R5 ;", &[5, 2, 3]), 17);
    assert_eq!(r("IMAD R4, R4, R5, UR6 ;", &[5, 2, 3]), 13);
    assert_eq!(r("SHF.L.U32 R4, R4, UR6, RZ ;", &[1, 0, 4]), 16);
    assert_eq!(r("SHF.L.U32 R4, R4, R5, c[0x0][0x0] ;", &[1, 32]), 0);
    assert_eq!(r("SHF.L.U32.HI R4, R4, R5, c[0x0][0x0] ;", &[0x8000_0000, 1]), 3);
    assert_eq!(r("PRMT R4, R4, 0x77665544, R5 ;", &[0x3322_1100, 0x0123]), 0x0011_2233);
    assert_eq!(r("PRMT R4, R4, R5, 0x4567 ;", &[0x3322_1100, 0x7766_5544]), 0x4455_6677);
    assert_eq!(r("LOP3.LUT R4, R4, UR6, R5, 0xfe, !PT ;", &[1, 2, 4]), 7);
    assert_eq!(r("LOP3.LUT R4, R4, c[0x0][0x0], R5, 0xfe, !PT ;", &[8, 2]), 11);
    assert_eq!(r("SEL R4, R4, c[0x0][0x0], !PT ;", &[8]), 1);
    assert_eq!(r("ISETP.EQ.AND P0, PT, R4, c[0x0][0x0], PT ;\n P2R R4, PR, RZ, 0x1 ;", &[1]), 1);
    assert_eq!(r("IMNMX R4, R4, UR6, !PT ;", &[5, 0, 9]), 9);
}

#[test]
fn guard_predicates_select_lanes_and_skip() {
    assert_eq!(call("MOV R4, 0x1 ;\n @!PT MOV R4, 0x2 ;", &[], 1), [1]);
    assert_eq!(call("MOV R4, 0x1 ;\n @PT MOV R4, 0x2 ;", &[], 1), [2]);
    assert_eq!(call("R2P PR, R5, 0x7f ;\n MOV R4, 0x1 ;\n @P3 MOV R4, 0x2 ;", &[0, 0b1000], 1), [2]);
    assert_eq!(call("R2P PR, R5, 0x7f ;\n MOV R4, 0x1 ;\n @!P3 MOV R4, 0x2 ;", &[0, 0b1000], 1), [1]);
    // A false guard also suppresses predicate outputs.
    assert_eq!(call("@!PT ISETP.EQ.AND P0, PT, RZ, RZ, PT ;\n P2R R4, PR, RZ, 0x1 ;", &[], 1), [0]);
}
