//! Encodings computed by hand from the field tables of the documents and
//! docs/encoding.md (optype and stype numbers, PT = 7, control defaults
//! wsb = 7 at bits 117-119). Words are 32-bit, lowest first.

use ursa_emit::{parse_inst, Inst, NoLabels};

fn words(text: &str) -> [u32; 4] {
    let inst = parse_inst(text, 1, None, &NoLabels).unwrap_or_else(|e| panic!("{}: {}", text, e.msg));
    let b = inst.encode().unwrap();
    let back = Inst::decode(&b).unwrap();
    assert_eq!(back, inst);
    [0, 1, 2, 3].map(|i| u32::from_le_bytes(b[i * 4..i * 4 + 4].try_into().unwrap()))
}

// Every IALU instruction: guard PT = 7 << 12 = 0x7000 in word 0; wsb = 7 << 21 in word 3.
const W3_WSB_NONE: u32 = 7 << 21;
// IADD's defaults: pp = PT at 98 (7 << 2), pp.not = True at 101 (1 << 5), pu = PT at 106 (7 << 10).
const W3_IADD_DEFAULTS: u32 = (7 << 2) | (1 << 5) | (7 << 10) | W3_WSB_NONE;

#[test]
fn iadd_rr() {
    // optype 0x20, stype RR = 5, rd = 0 @16, ra = 1 @24, rb = 2 @32.
    assert_eq!(words("IADD R0, R1, R2 ;"), [0x0100_7520, 0x0000_0002, 0, W3_IADD_DEFAULTS]);
    assert_eq!(W3_IADD_DEFAULTS, 0x00E0_1C3C);
}

#[test]
fn iadd_ri_negated_register() {
    // stype RI = 7; rd = 5, ra = 6; vb = 0x114514 in bits 32-63; ra.neg @72 = word 2 bit 8.
    assert_eq!(words("IADD R5, -R6, 0x114514 ;"), [0x0605_7720, 0x0011_4514, 0x100, 0x00E0_1C3C]);
}

#[test]
fn iadd_x_with_guard_and_carries() {
    // @!P2: pg = 2 @12, pg.not @15 -> 0xA000. ext = X @76 -> word 2 bit 12.
    // rb.neg @97 -> word 3 bit 1; pp = P0, pp.not = 0; pu = P3 @106 -> 3 << 10.
    assert_eq!(words("@!P2 IADD.X R1, P3, R3, ~R5, P0 ;"), [0x0301_A520, 5, 0x1000, 0x00E0_0C02]);
}

#[test]
fn iadd_rc_negated_constant() {
    // stype RC = 8; vb = c[0x0][0x160] = 0x160 @32; vb.neg @97.
    assert_eq!(words("IADD R2, R3, -c[0x0][0x160] ;"), [0x0302_7820, 0x160, 0, 0x00E0_1C3E]);
}

#[test]
fn mov_immediate_with_stall() {
    // MOV = 0x31, stype I = 3, rd = 7; width = 32 (value 0) @80; stall = 3 @112 -> word 3 bits 16-19.
    assert_eq!(words("MOV R7, 0x2a &stall=3 ;"), [0x0007_7331, 0x2a, 0, 0x00E3_0000]);
}

#[test]
fn iabs_negative_immediate() {
    // IABS = 0x27, stype I = 3, rd = 0, vb = -1 = 0xffffffff.
    assert_eq!(words("IABS R0, -0x1 ;"), [0x0000_7327, 0xFFFF_FFFF, 0, W3_WSB_NONE]);
}

#[test]
fn isetp_unsigned() {
    // ISETP = 0x2B, RR; ra = 4 @24, rb = 6 @32; itype U32 = 1 @77 (word 2 bit 13);
    // compop GE = 5 @79 (5 << 15); boolop AND = 0; pp = PT @98, pq = PT @102 (7 << 6) with
    // pq.not = True @105 (erratum E42: default !PT), pu = P1 @106 (1 << 10), pv = PT @109 (7 << 13).
    assert_eq!(words("ISETP.GE.U32.AND P1, PT, R4, R6, PT ;"), [0x0400_752B, 6, 0x0002_A000, 0x00E0_E7DC]);
}

#[test]
fn shf_funnel_right() {
    // SHF = 0x30, RRR = 9; rd 1, ra 2, rb 3, rc 4 @64; lohi HI @75 (bit 11 of word 2);
    // itype U32 = 3 @77 (3 << 13); cwmod WRAP = 1 @80 (bit 16); direction R = 1 @81 (bit 17).
    assert_eq!(words("SHF.R.HI.WRAP.U32 R1, R2, R3, R4 ;"), [0x0201_7930, 3, 0x0003_6804, W3_WSB_NONE]);
}

#[test]
fn dadd_round_down_with_modifiers() {
    // DADD = 0x50, RR; rd 2, ra 4, rb 6; ra.neg @72 (word 2 bit 8); rnd RM = 2 @78 (2 << 14);
    // rb.abs @97 (word 3 bit 1).
    assert_eq!(words("DADD.RM R[2:3], -R[4:5], |R[6:7]| ;"), [0x0402_7550, 6, 0x8100, 0x00E0_0002]);
}

#[test]
fn mufu_with_scoreboard() {
    // MUFU = 0x40, stype R = 1; rd 3, rb 4; mufuop RSQ = 5 @78 (5 << 14); dtype F32 = 0;
    // rb.neg @96, rb.abs @97; wsb = 2 @117 (2 << 21).
    assert_eq!(words("MUFU.RSQ.F32 R3, -|R4| &wsb=2 ;"), [0x0003_7140, 4, 0x0001_4000, 0x0040_0003]);
}

#[test]
fn uiadd_uniform_immediate() {
    // UIADD = 0x02, USType UI = 5, upg = UPT @12; urd 1 @16, ura 2 @24, vb = 0x10;
    // upp = UPT @98, upp.not = True @101, upu = UPT @106.
    assert_eq!(words("UIADD UR1, UR2, 0x10 ;"), [0x0201_7502, 0x10, 0, 0x00E0_1C3C]);
}

#[test]
fn uldc_64_indexed() {
    // ULDC = 0x01, USType U = 1; urd 4 @16, ura 6 @24; vb = bank 3 << 16 | 0x10 @32;
    // dtype 64 = 5 @80 (5 << 16 in word 2).
    assert_eq!(words("ULDC.64 UR[4:5], c[0x3][UR6+0x10] ;"), [0x0604_7101, 0x0003_0010, 0x0005_0000, W3_WSB_NONE]);
}

#[test]
fn flo_unsigned_shift() {
    // FLO = 0x42, stype R = 1; rd 1, rb = RZ = 0xff @32; itype U32 @80, sh SH @81.
    assert_eq!(words("FLO.U32.SH R1, RZ ;"), [0x0001_7142, 0xFF, 0x0003_0000, W3_WSB_NONE]);
}
