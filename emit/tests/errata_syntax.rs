//! Syntax decided by the errata (docs/spec-errata.md) beyond the documents' lines.

use ursa_emit::{format_inst, parse_inst, NoLabels};

fn canon(text: &str) -> Result<String, String> {
    let i = parse_inst(text, 1, None, &NoLabels).map_err(|e| e.msg)?;
    format_inst(&i, None, &NoLabels).map_err(|e| e.to_string())
}

#[test]
fn lop3_lut_spelling_and_default_exbool() {
    // E51: `.LUT` is accepted and ignored; `.exbool` defaults to `.POR`.
    assert_eq!(canon("LOP3.LUT R0, R1, R2, R3, 0x96, !PT").unwrap(), "LOP3 R0, R1, R2, R3, 0x96, !PT ;");
    assert_eq!(canon("LOP3.LUT.PAND P0, R0, R1, R2, R3, 0xf0, PT").unwrap(), "LOP3.PAND P0, R0, R1, R2, R3, 0xf0, PT ;");
    assert_eq!(canon("ULOP3.LUT UR0, UR1, UR2, UR3, 0x80, !UPT").unwrap(), "ULOP3 UR0, UR1, UR2, UR3, 0x80, !UPT ;");
}

#[test]
fn mufu_dtype_defaults_to_f32() {
    // E81.
    assert_eq!(canon("MUFU.RCP R4, R4").unwrap(), "MUFU.RCP R4, R4 ;");
    assert_eq!(canon("MUFU.RCP.F32 R4, R4").unwrap(), "MUFU.RCP R4, R4 ;");
}

#[test]
fn mov64_sources() {
    // E61: a register pair, a uniform pair or a constant; never an immediate.
    assert_eq!(canon("MOV.64 R[2:3], R[4:5]").unwrap(), "MOV.64 R[2:3], R[4:5] ;");
    assert_eq!(canon("MOV.64 R[2:3], UR[4:5]").unwrap(), "MOV.64 R[2:3], UR[4:5] ;");
    assert_eq!(canon("MOV.64 R[2:3], c[0x0][0x168]").unwrap(), "MOV.64 R[2:3], c[0x0][0x168] ;");
    assert_eq!(canon("UMOV.64 UR[2:3], c[0x0][0x168]").unwrap(), "UMOV.64 UR[2:3], c[0x0][0x168] ;");
    let e = canon("MOV.64 R[2:3], 0x1").unwrap_err();
    assert!(e.contains(".64"), "{}", e);
}

#[test]
fn cwmode_c_and_w_aliases() {
    // E52: `.C`/`.W` are aliases of `.CLAMP`/`.WRAP`; the long names are printed.
    assert_eq!(canon("SHF.L.W.U32 R20, R8, 0x25, R10").unwrap(), canon("SHF.L.WRAP.U32 R20, R8, 0x25, R10").unwrap());
    assert!(canon("SHF.L.W.U32 R20, R8, 0x25, R10").unwrap().contains(".WRAP"));
    assert_eq!(canon("BMSK.C R20, R8, R9").unwrap(), canon("BMSK R20, R8, R9").unwrap());
    assert_eq!(canon("BMSK.W R20, R8, R9").unwrap(), "BMSK.WRAP R20, R8, R9 ;");
}

#[test]
fn uimad_wide_u32_constant_form_is_64_bit() {
    // E26: the UUC form's destination and constant source are 64-bit.
    assert_eq!(canon("UIMAD.WIDE.U32 UR[20:21], UR8, UR9, c[0x0][0x168]").unwrap(), "UIMAD.WIDE.U32 UR[20:21], UR8, UR9, c[0x0][0x168] ;");
    assert!(canon("UIMAD.WIDE.U32 UR20, UR8, UR9, c[0x0][0x168]").is_err());
}
