//! Uniform-datapath semantics (vendor document 000): each twin of an IALU
//! instruction, run on values moved into UR4.. with R2UR, results read back
//! with MOV.
mod common;
use common::*;

/// Moves R4..R7 into UR4..UR7, runs `body`, returns R4 after `MOV R4, UR8`.
fn u(body: &str, args: &[u32]) -> u32 {
    let src = format!("R2UR UR4, R4 ;\n R2UR UR5, R5 ;\n R2UR UR6, R6 ;\n R2UR UR7, R7 ;\n {}\n MOV R4, UR8 ;", body);
    let mut a = args.to_vec();
    a.resize(4, 0);
    call(&src, &a, 1)[0]
}

/// The uniform predicates UP0..UP6 packed (UPT as bit 7).
fn up(body: &str, args: &[u32]) -> u32 {
    u(&format!("{}\n UP2UR UR8, UPR, URZ, 0xff ;", body), args)
}

#[test]
fn uiadd_with_carry_chain() {
    assert_eq!(u("UIADD UR8, UR4, UR5 ;", &[1, 2]), 3);
    assert_eq!(u("UIADD UR8, UR4, -UR5 ;", &[1, 2]), 0xFFFF_FFFF);
    assert_eq!(up("UIADD UR9, UP0, UR4, UR5 ;", &[0xFFFF_FFFF, 1]), 0x81);
    // 64-bit: UR[4:5] + UR[6:7] = 0x1_FFFFFFFF + 1.
    assert_eq!(u("UIADD UR8, UP0, UR4, UR6 ;\n UIADD.X UR8, UR5, UR7, UP0 ;", &[0xFFFF_FFFF, 1, 1, 0]), 2);
    assert_eq!(u("UIADD UR8, UR4, 0x10 ;", &[5]), 0x15);
}

#[test]
fn uimad_uimul_uimad_wide() {
    assert_eq!(u("UIMAD UR8, UR4, UR5, UR6 ;", &[3, 4, 5]), 17);
    assert_eq!(u("UIMAD.HI.X.U32 UR8, UR4, UR5, URZ ;", &[0xFFFF_FFFE, 3]), 2);
    assert_eq!(u("UIMUL.HI UR8, UR4, UR5 ;", &[0xFFFF_FFFF, 1]), 0xFFFF_FFFF);
    assert_eq!(u("UIMUL UR8, UR4, -UR5 ;", &[3, 4]), 0xFFFF_FFF4);
    // -2 * 3 + 10 = 4 (low word), carry out of 2^64 + 4.
    assert_eq!(u("UIMAD.WIDE UR[8:9], UR4, UR5, UR[6:7] ;", &[0xFFFF_FFFE, 3, 10, 0]), 4);
    assert_eq!(up("UIMAD.WIDE UR[8:9], UP1, UR4, UR5, UR[6:7] ;", &[0xFFFF_FFFE, 3, 10, 0]), 0x82);
    assert_eq!(u("UIMAD.WIDE.U32 UR[10:11], UR4, UR5, URZ ;\n UMOV UR8, UR11 ;", &[0xFFFF_FFFF, 0xFFFF_FFFF]), 0xFFFF_FFFE);
}

#[test]
fn ulea_uiabs_uimnmx() {
    assert_eq!(u("ULEA UR8, UR4, UR5, 0x4 ;", &[3, 100]), 148);
    assert_eq!(u("ULEA.HI.X UR8, UR4, UR5, UR6, 0x4 ;", &[0xF000_0000, 0x100, 1]), 0x11F);
    assert_eq!(u("ULEA.HI.X.SX32 UR8, UR4, UR5, 0x4 ;", &[0xFFFF_FFF0, 2]), 1);
    assert_eq!(u("UIABS UR8, UR4 ;", &[(-9i32) as u32]), 9);
    assert_eq!(u("UIABS UR8, 0xFFFFFFFF ;", &[]), 1);
    assert_eq!(u("UIMNMX UR8, UR4, UR5, UPT ;", &[0xFFFF_FFFF, 1]), 0xFFFF_FFFF);
    assert_eq!(u("UIMNMX.U32 UR8, UR4, UR5, UPT ;", &[0xFFFF_FFFF, 1]), 1);
    assert_eq!(u("UIMNMX UR8, UR4, UR5, !UPT ;", &[0xFFFF_FFFF, 1]), 1);
}

#[test]
fn up2ur_ur2up_uisetp_usel() {
    assert_eq!(up("UR2UP UPR, UR4, 0x7f ;", &[0x55]), 0xD5);
    assert_eq!(up("UR2UP UPR, UR5, 0x7f ;\n UR2UP UPR, UR4, 0x0f ;", &[0, 0x7f]), 0xF0);
    assert_eq!(up("UR2UP UPR, UR4.B1, 0xff ;", &[0x0300]), 0x83);
    assert_eq!(u("UR2UP UPR, UR6, 0x7f ;\n UP2UR.B2 UR8, UPR, UR5, 0x0f ;", &[0, 0xAABB_CCDD, 1]), 0xAAB1_CCDD);
    assert_eq!(up("UISETP.LT.AND UP0, UP1, UR4, UR5, UPT ;", &[0xFFFF_FFFF, 1]), 0x81);
    assert_eq!(up("UISETP.LT.U32.AND UP0, UP1, UR4, UR5, UPT ;", &[0xFFFF_FFFF, 1]), 0x82);
    let lt64 = "UISETP.LT.U32.AND UP0, UPT, UR4, UR6, UPT ;\n UISETP.LT.AND.X UP1, UPT, UR5, UR7, UPT, UP0 ;";
    assert_eq!(up(lt64, &[5, 1, 7, 1]) & 2, 2);
    assert_eq!(up(lt64, &[5, 1, 3, 1]) & 2, 0);
    assert_eq!(u("USEL UR8, UR4, UR5, UPT ;", &[1, 2]), 1);
    assert_eq!(u("USEL UR8, UR4, UR5, !UPT ;", &[1, 2]), 2);
}

#[test]
fn ulop3_uplop3() {
    let (a, b, c) = (0x1234_5678, 0xFF00_FF00, 0x0F0F_0F0F);
    assert_eq!(u("ULOP3.LUT UR8, UR4, UR5, UR6, 0x1a, !UPT ;", &[a, b, c]), 0x0D3B_0977);
    assert_eq!(up("ULOP3.PAND UP2, UR8, UR4, UR5, UR6, 0x80, UPT ;", &[a, b, c]), 0x84);
    assert_eq!(up("UR2UP UPR, UR4, 0x7f ;\n UPLOP3 UP0, UP1, !UP2, UP3, 0x80 ;", &[0b1010]) & 1, 1);
}

#[test]
fn ushf_umov_uprmt() {
    assert_eq!(u("USHF.R.S32.HI UR8, URZ, 0x4, UR5 ;", &[0, 0x8000_0000]), 0xF800_0000);
    assert_eq!(u("USHF.L.U64.HI UR8, UR4, UR6, UR5 ;", &[1, 0, 63]), 0x8000_0000);
    assert_eq!(u("USHF.R.WRAP.U32.HI UR8, URZ, UR6, UR5 ;", &[0, 0x8000_0000, 33]), 0x4000_0000);
    assert_eq!(u("UMOV UR8, 0x114514 ;", &[]), 0x114514);
    assert_eq!(u("UMOV.64 UR[8:9], UR[6:7] ;", &[0, 0, 0xAB, 0xCD]), 0xAB);
    // E61: an 8-byte constant (NCTAID.y at 0x10, NCTAID.z at 0x14).
    assert_eq!(u("UMOV.64 UR[10:11], c[0x0][0x10] ;\n UIADD UR8, UR10, UR11 ;", &[]), 2);
    assert_eq!(u("UPRMT.B4E UR8, UR4, UR5, UR6 ;", &[0x3322_1100, 0x7766_5544, 0]), 0x5566_7700);
    assert_eq!(u("UPRMT UR8, UR4, UR5, UR6 ;", &[0x3322_1100, 0x7766_5544, 0x0123]), 0x0011_2233);
}

#[test]
fn upopc_uflo_ubrev_ubmsk_usgxt() {
    assert_eq!(u("UPOPC UR8, UR4 ;", &[0xF0F0_F0F0]), 16);
    assert_eq!(u("UPOPC UR8, ~UR4 ;", &[0]), 32);
    assert_eq!(u("UFLO.U32 UR8, UR4 ;", &[0x0001_0000]), 16);
    assert_eq!(u("UFLO.U32.SH UR8, URZ ;", &[]), 0xFFFF_FFFF);
    assert_eq!(u("UBREV UR8, UR4 ;", &[0x1234_5678]), 0x1E6A_2C48);
    assert_eq!(u("UBMSK UR8, UR4, UR5 ;", &[4, 8]), 0xFF0);
    assert_eq!(u("USGXT UR8, UR4, 0x3 ;", &[5]), 0xFFFF_FFFD);
    assert_eq!(u("USGXT.U32 UR8, UR4, 0x10 ;", &[0xABCD_1234]), 0x1234);
}

#[test]
fn setugpr_getugpr_uldc() {
    // UR[UR4+1] with UR4 = 5 reads UR6.
    assert_eq!(u("GETUGPR UR8, UR[UR4+0x1] ;", &[5, 0, 0x77]), 0x77);
    // SETUGPR UR[UR4], UR5 with UR4 = 8 writes UR8.
    assert_eq!(u("SETUGPR UR[UR4], UR5 ;", &[8, 0x99]), 0x99);
    // ULDC from bank 0: NTID.x = 1, NCTAID.y = 1; sub-word loads extend.
    assert_eq!(u("ULDC UR8, c[0x0][0x0] ;", &[]), 1);
    assert_eq!(u("ULDC.64 UR[8:9], c[0x0][0x8] ;", &[]), 1);
    assert_eq!(u("ULDC.U8 UR8, c[0x0][UR4+0x1] ;", &[0x0B]), 1);
    assert_eq!(u("ULDC.U8 UR8, c[0x0][UR4+0x1] ;", &[0x0]), 0);
    assert_eq!(u("ULDC UR8, c[0x0][UR4-0x4] ;", &[0x10]), 1);
}

#[test]
fn uniform_guard_predicate() {
    assert_eq!(u("UMOV UR8, 0x1 ;\n @!UPT UMOV UR8, 0x2 ;", &[]), 1);
    assert_eq!(u("UMOV UR8, 0x1 ;\n UISETP.EQ.AND UP3, UPT, UR4, 0x5, UPT ;\n @UP3 UMOV UR8, 0x2 ;", &[5]), 2);
}
