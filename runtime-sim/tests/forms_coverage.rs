//! Every vendor opcode form (emit/spec/{udp,ialu,xu,dalu}.isa) executed with
//! edge values, and a coverage check that the suite below executed all of
//! them.
//!
//! Expected values are worked out by hand from the vendor documents'
//! `__Semantics` blocks (shared/spec/000–003) as amended by
//! docs/spec-errata.md (cited as E-numbers), never from the simulator's
//! code. Each family function covers every operand form of one optype
//! (`_RR`, `_RU`, `_RI`, `_RC`, …) and is run twice: by its own `#[test]`
//! and by `every_vendor_form_is_executed`, which collects the forms the
//! simulator reports in `Stats::per_form` over all families.
//!
//! Conventions: arguments arrive in R4, R5, …; results are returned in R4,
//! R5, …; `c[0x1][…]` is a constant bank filled per case (word i at byte
//! offset 4·i). Uniform cases move their arguments into UR4, UR5, … with
//! R2UR first (see [`Runner::u`]).
#![allow(clippy::unusual_byte_groupings)]

mod common;

use std::collections::BTreeSet;
use ursa_sim::{Gpu, LaunchConfig};

/// Runs cases and remembers which forms the simulator executed.
#[derive(Default)]
struct Runner {
    forms: BTreeSet<String>,
}

/// Packs P0–P6 into R4 (bit i = Pi, bit 7 = PT = 1).
const PREDS: &str = "\n    P2R R4, PR, RZ, 0xff ;";
/// Packs UP0–UP6 into R4 (bit i = UPi, bit 7 = UPT = 1).
const UPREDS: &str = "\n    UP2UR UR16, UPR, URZ, 0xff ;\n    MOV R4, UR16 ;";

fn f64b(x: f64) -> u64 {
    x.to_bits()
}

fn lo(x: u64) -> u32 {
    x as u32
}

fn hi(x: u64) -> u32 {
    (x >> 32) as u32
}

impl Runner {
    /// Runs `body` as a device function with R4.. = `args` and bank 1 =
    /// `consts`; returns R4 … R(4+nret-1).
    fn run(&mut self, body: &str, args: &[u32], consts: &[u32], nret: usize) -> Vec<u32> {
        let src = format!(".func f\n{}\n    RET R[20:21] ;\n", body);
        let prog = common::load(&src);
        let bank: Vec<u8> = consts.iter().flat_map(|w| w.to_le_bytes()).collect();
        let cfg = LaunchConfig { const_banks: if bank.is_empty() { vec![] } else { vec![(1, bank)] }, ..Default::default() };
        let (r, stats) = Gpu::new().call_with(&prog, "f", args, nret, &cfg).unwrap_or_else(|t| panic!("trap: {}\n{}", t, src));
        self.forms.extend(stats.forms().map(|(name, _)| name.to_string()));
        r
    }

    /// Asserts that `body` returns `expected` in R4, R5, ….
    #[track_caller]
    fn t(&mut self, body: &str, args: &[u32], expected: &[u32]) {
        self.tc(body, args, &[], expected)
    }

    /// [`Runner::t`] with a constant bank 1.
    #[track_caller]
    fn tc(&mut self, body: &str, args: &[u32], consts: &[u32], expected: &[u32]) {
        let got = self.run(body, args, consts, expected.len());
        assert_eq!(got, expected, "\n{}\nargs {:x?} consts {:x?}\n got {:x?}\nwant {:x?}", body, args, consts, got, expected);
    }

    /// Uniform datapath: `args` go to UR4, UR5, … (through R4, R5, … and
    /// R2UR), then `body` runs; the result is read from UR16, UR17, ….
    #[track_caller]
    fn u(&mut self, body: &str, args: &[u32], consts: &[u32], expected: &[u32]) {
        let mut src = String::new();
        for i in 0..args.len() {
            src.push_str(&format!("    R2UR UR{}, R{} ;\n", 4 + i, 4 + i));
        }
        src.push_str(body);
        for i in 0..expected.len() {
            src.push_str(&format!("\n    MOV R{}, UR{} ;", 4 + i, 16 + i));
        }
        self.tc(&src, args, consts, expected)
    }
}

// ---- IALU (vendor document 001) -------------------------------------------

fn iadd(r: &mut Runner) {
    let c = "\n    P2R R5, PR, RZ, 0x1 ;";
    // RR: INT_MAX + 1 wraps to INT_MIN without a carry (t = 2^31 < 2^32).
    r.t(&format!("IADD R4, P0, R4, R5 ;{}", c), &[0x7FFF_FFFF, 1], &[0x8000_0000, 0]);
    // -INT_MIN contributes 2^32 - 2^31 = 2^31 (E21); + 2^31 = 2^32: 0, carry.
    r.t(&format!("IADD R4, P0, -R4, R5 ;{}", c), &[0x8000_0000, 0x8000_0000], &[0, 1]);
    // RU: -UR4 with UR4 = 0 contributes 2^32 (E21): 7 + 2^32 carries.
    r.t(&format!("R2UR UR4, R5 ;\n    IADD R4, P0, R4, -UR4 ;{}", c), &[7, 0], &[7, 1]);
    // 7 - 1: 7 + 2^32 - 1 >= 2^32: 6 with a carry; 0 - 1 does not carry.
    r.t(&format!("R2UR UR4, R5 ;\n    IADD R4, P0, R4, -UR4 ;{}", c), &[7, 1], &[6, 1]);
    r.t(&format!("R2UR UR4, R5 ;\n    IADD R4, P0, R4, -UR4 ;{}", c), &[0, 1], &[0xFFFF_FFFF, 0]);
    // RI: 0x80000000 + 0x80000000 = 2^32; the folded -0x1 is 0xFFFFFFFF (E8).
    r.t(&format!("IADD R4, P0, R4, 0x80000000 ;{}", c), &[0x8000_0000], &[0, 1]);
    r.t(&format!("IADD R4, P0, R4, -0x1 ;{}", c), &[1], &[0, 1]);
    r.t(&format!("IADD R4, P0, R4, -0x1 ;{}", c), &[0], &[0xFFFF_FFFF, 0]);
    // RC: 1 + 0xFFFFFFFF = 2^32; -c with c = 0 contributes 2^32.
    r.tc(&format!("IADD R4, P0, R4, c[0x1][0x0] ;{}", c), &[1], &[0xFFFF_FFFF], &[0, 1]);
    r.tc(&format!("IADD R4, P0, R4, -c[0x1][0x0] ;{}", c), &[5], &[0], &[5, 1]);
    // .X with ~c: 5 + (2^32 - 1 - 5) + 1 = 2^32: 0, carry.
    r.tc(&format!("IADD.X R4, P0, R4, ~c[0x1][0x4], PT ;{}", c), &[5], &[0, 5], &[0, 1]);
    // .X with the carry-in false: 5 + ~5 = 0xFFFFFFFF, no carry.
    r.tc(&format!("IADD.X R4, P0, R4, ~c[0x1][0x4], !PT ;{}", c), &[5], &[0, 5], &[0xFFFF_FFFF, 0]);
    // .X from a uniform register, carry-in from a computed predicate:
    // 0xFFFFFFFF + 0 + 1 = 2^32.
    let x = "R2UR UR4, R6 ;\n    ISETP.EQ.AND P1, PT, RZ, RZ, PT ;\n    IADD.X R4, P0, R4, UR4, P1 ;\n    P2R R5, PR, RZ, 0x1 ;";
    r.t(x, &[0xFFFF_FFFF, 0, 0], &[0, 1]);
}

fn imad(r: &mut Runner) {
    let c = "\n    P2R R5, PR, RZ, 0x1 ;";
    // RRR: 0x10000 * 0x10000 = 2^32 has low word 0; -R6 with R6 = 0 adds 2^32 (E21).
    r.t(&format!("IMAD R4, P0, R4, R5, -R6 ;{}", c), &[0x1_0000, 0x1_0000, 0], &[0, 1]);
    // RRI: 1 * 1 + 0xFFFFFFFF = 2^32.
    r.t(&format!("IMAD R4, P0, R4, R5, 0xffffffff ;{}", c), &[1, 1], &[0, 1]);
    // RIR: INT_MIN * INT_MIN = 2^62: high word 0x40000000; + 0xBFFFFFFF + 1 = 2^32.
    r.t(&format!("IMAD.HI.X R4, P0, R4, 0x80000000, R5, PT ;{}", c), &[0x8000_0000, 0xBFFF_FFFF], &[0, 1]);
    // -1 * INT_MIN = 2^31 (signed): high word 0; unsigned 0xFFFFFFFF * 2^31 = 0x7FFFFFFF_80000000.
    r.t("IMAD.HI.X R4, R4, 0x80000000, RZ ;", &[0xFFFF_FFFF], &[0]);
    r.t("IMAD.HI.X.U32 R4, R4, 0x80000000, RZ ;", &[0xFFFF_FFFF], &[0x7FFF_FFFF]);
    // RRC: (-1) * (-1) = 1; 1 + (2^32 - 2) = 0xFFFFFFFF, no carry.
    r.tc(&format!("IMAD R4, P0, R4, R5, -c[0x1][0x0] ;{}", c), &[0xFFFF_FFFF, 0xFFFF_FFFF], &[2], &[0xFFFF_FFFF, 0]);
    // RCR: unsigned 0x10000 * 0x10000 = 2^32: high word 1; + 7 + pp (default !PT) = 8.
    r.tc("IMAD.HI.X.U32 R4, R4, c[0x1][0x0], R5 ;", &[0x1_0000, 7], &[0x1_0000], &[8]);
    // RRU: 3 * -5 = -15 (low 0xFFFFFFF1); -UR4 with UR4 = 0 adds 2^32: carry.
    r.t(&format!("R2UR UR4, R6 ;\n    IMAD R4, P0, R4, R5, -UR4 ;{}", c), &[3, (-5i32) as u32, 0], &[0xFFFF_FFF1, 1]);
    // RUR: (-1) * (-1) = 1: high word 0; + ~0 + 1 = 2^32 (E21 in .X mode).
    r.t(&format!("R2UR UR4, R6 ;\n    IMAD.HI.X R4, P0, R4, UR4, ~R5, PT ;{}", c), &[0xFFFF_FFFF, 0, 0xFFFF_FFFF], &[0, 1]);
}

fn imad_wide(r: &mut Runner) {
    let out = "\n    MOV R4, R8 ;\n    MOV R5, R9 ;\n    P2R R6, PR, RZ, 0x1 ;";
    // RRR: 2 * 3 = 6; ~R[6:7] with 6 adds 2^64 - 7; + 1 = 2^64: 0, carry.
    r.t(&format!("IMAD.WIDE.X.U32 R[8:9], P0, R4, R5, ~R[6:7], PT ;{}", out), &[2, 3, 6, 0], &[0, 0, 1]);
    // RIR: 0xFFFFFFFF is -1 (.S32): 1 + 0xFFFFFFFF_FFFFFFFF = 2^64.
    r.t(&format!("IMAD.WIDE R[8:9], P0, R4, 0xffffffff, R[6:7] ;{}", out), &[0xFFFF_FFFF, 0, 0xFFFF_FFFF, 0xFFFF_FFFF], &[0, 0, 1]);
    // .U32: 0xFFFFFFFF^2 = 0xFFFFFFFE_00000001.
    r.t(&format!("IMAD.WIDE.U32 R[8:9], P0, R4, 0xffffffff, RZ ;{}", out), &[0xFFFF_FFFF], &[1, 0xFFFF_FFFE, 0]);
    // RRC (8-byte constant, E26 sibling): 0xFFFFFFFE_00000001 + 0x1_FFFFFFFF = 2^64.
    r.tc(
        &format!("IMAD.WIDE.U32 R[8:9], P0, R4, R5, c[0x1][0x8] ;{}", out),
        &[0xFFFF_FFFF, 0xFFFF_FFFF],
        &[0, 0, 0xFFFF_FFFF, 1],
        &[0, 0, 1],
    );
    // RCR: INT_MIN * -1 = +2^31 (signed, E24); -R[6:7] with 0 adds 2^64: carry.
    r.tc(
        &format!("IMAD.WIDE R[8:9], P0, R4, c[0x1][0x0], -R[6:7] ;{}", out),
        &[0x8000_0000, 0, 0, 0],
        &[0xFFFF_FFFF],
        &[0x8000_0000, 0, 1],
    );
    // RRU: INT_MIN^2 = 2^62 = 0x40000000_00000000; + 0xC0000000_00000000 = 2^64.
    let u = format!("R2UR UR4, R10 ;\n    R2UR UR5, R11 ;\n    IMAD.WIDE R[8:9], P0, R4, R5, UR[4:5] ;{}", out);
    r.t(&u, &[0x8000_0000, 0x8000_0000, 0, 0, 0, 0, 0, 0xC000_0000], &[0, 0, 1]);
    // RUR: -1 * 1 = 0xFFFFFFFF_FFFFFFFF as a pattern (E24); + 0 + 1 = 2^64.
    let u = format!("R2UR UR4, R10 ;\n    IMAD.WIDE.X R[8:9], P0, R4, UR4, R[6:7], PT ;{}", out);
    r.t(&u, &[0xFFFF_FFFF, 0, 0, 0, 0, 0, 1], &[0, 0, 1]);
    // .U32 reads 0xFFFFFFFF unsigned: 0xFFFFFFFF * 1 + 0 + 1 = 2^32.
    let u = format!("R2UR UR4, R10 ;\n    IMAD.WIDE.X.U32 R[8:9], P0, R4, UR4, R[6:7], PT ;{}", out);
    r.t(&u, &[0xFFFF_FFFF, 0, 0, 0, 0, 0, 1], &[0, 1, 0]);
}

fn idp2a(r: &mut Runner) {
    let c = "\n    P2R R5, PR, RZ, 0x1 ;";
    // d = SrcC + pp + Σ va[i]·vb[sel+i]; Rd = d mod 2^32; pu = d >= 2^32 (E19).
    // RRR: Ra = [1, -1] (S16), SrcB bytes [-1, 1] (S8): -1 - 1 = -2; + 0 → 0xFFFFFFFE, no carry.
    r.t(&format!("IDP.2A.S16.S8 R4, P0, R4, R5, RZ ;{}", c), &[0xFFFF_0001, 0x0000_01FF], &[0xFFFF_FFFE, 0]);
    // RRI: Ra = [-32768, 32767], SrcB bytes [-128, 127]: 4194304 + 4161409 = 0x7F7F81;
    // + 0xFFFFFFFF = 2^32 + 0x7F7F80: carry.
    r.t(&format!("IDP.2A.S16.S8 R4, P0, R4, R5, 0xffffffff ;{}", c), &[0x7FFF_8000, 0x0000_7F80], &[0x007F_7F80, 1]);
    // RIR: .HI selects bytes 2, 3 of 0xAABBCCDD = 0xBB, 0xAA (U8); Ra = [1, 65535] (U16):
    // 187 + 65535 * 170 = 11141137 = 0xAA0011.
    r.t("IDP.2A.HI.U16.U8 R4, R4, 0xaabbccdd, R5 ;", &[0xFFFF_0001, 0], &[0x00AA_0011]);
    // RRC: SrcC = 0xFFFFFFFF, pp = PT, Ra = [-1, -1], SrcB bytes [1, 0] (U8):
    // 0xFFFFFFFF + 1 - 1 = 0xFFFFFFFF: a negative product keeps d below 2^32.
    r.tc(&format!("IDP.2A.S16.U8 R4, P0, R4, R5, c[0x1][0x0], PT ;{}", c), &[0xFFFF_FFFF, 1], &[0xFFFF_FFFF], &[0xFFFF_FFFF, 0]);
    // RCR: Ra = [3, 2] (U16), SrcB bytes [-1, -2] (S8): -3 - 4 = -7 → 0xFFFFFFF9.
    r.tc("IDP.2A.U16.S8 R4, R4, c[0x1][0x0], RZ ;", &[0x0002_0003], &[0x0000_FEFF], &[0xFFFF_FFF9]);
    // RRU: .HI bytes 2, 3 of 0x807F0000 = [127, -128]; Ra = [-1, 1]: -127 - 128 = -255; + 300 = 45.
    r.t("R2UR UR4, R6 ;\n    IDP.2A.HI.S16.S8 R4, R4, R5, UR4 ;", &[0x0001_FFFF, 0x807F_0000, 300], &[45]);
    // RUR: Ra = [65535, 65535] (U16), bytes [255, 255] (U8): 2 * 65535 * 255 = 33422850.
    r.t("R2UR UR4, R6 ;\n    IDP.2A.U16.U8 R4, R4, UR4, R5 ;", &[0xFFFF_FFFF, 0, 0x0000_FFFF], &[2 * 65535 * 255]);
}

fn idp4a(r: &mut Runner) {
    let c = "\n    P2R R5, PR, RZ, 0x1 ;";
    // RRR: four (-128)·(-128) = 65536; + 0x7FFFFFFF = 0x8000FFFF, no carry.
    r.t(&format!("IDP.4A.S8.S8 R4, P0, R4, R5, R6 ;{}", c), &[0x8080_8080, 0x8080_8080, 0x7FFF_FFFF], &[0x8000_FFFF, 0]);
    // RRI: the same with the addend as an immediate.
    r.t(&format!("IDP.4A.S8.S8 R4, P0, R4, R5, 0x7fffffff ;{}", c), &[0x8080_8080, 0x8080_8080], &[0x8000_FFFF, 0]);
    // RIR: Ra bytes all 1 (U8), SrcB = 0xAABBCCDD signed bytes -35 - 52 - 69 - 86 = -242; + 242 = 0.
    r.t("IDP.4A.U8.S8 R4, R4, 0xaabbccdd, R5 ;", &[0x0101_0101, 242], &[0]);
    // RRC: 4 * 255 * 255 = 260100 = 0x3F804; SrcC = 0xFFFFFFFF - 0x3F804, pp = PT: d = 2^32.
    r.tc(&format!("IDP.4A.U8.U8 R4, P0, R4, R5, c[0x1][0x0], PT ;{}", c), &[0xFFFF_FFFF, 0xFFFF_FFFF], &[0xFFFC_07FB], &[0, 1]);
    // RCR: Ra bytes [1, -1, -128, 127] (S8), SrcB bytes [4, 3, 2, 1] (U8):
    // 4 - 3 - 256 + 127 = -128 → 0xFFFFFF80.
    r.tc("IDP.4A.S8.U8 R4, R4, c[0x1][0x0], R5 ;", &[0x7F80_FF01, 0], &[0x0102_0304], &[0xFFFF_FF80]);
    // RRU: Ra bytes [-1, -1, -1, -1], SrcB bytes [1, 2, 3, 4] (S8): -10; + UR4 = 10 → 0.
    r.t(&format!("R2UR UR4, R6 ;\n    IDP.4A.S8.S8 R4, P0, R4, R5, UR4 ;{}", c), &[0xFFFF_FFFF, 0x0403_0201, 10], &[0, 0]);
    // RUR: Ra bytes 255 (U8), SrcB bytes -1 (S8): -1020; + 1020 → 0.
    r.t("R2UR UR4, R6 ;\n    IDP.4A.U8.S8 R4, R4, UR4, R5 ;", &[0xFFFF_FFFF, 1020, 0xFFFF_FFFF], &[0]);
}

fn imul(r: &mut Runner) {
    // RR: INT_MIN * -1: the 64-bit product 2^31 has low word 0x80000000, high word 0.
    r.t("IMUL R4, R4, R5 ;\n    IMUL.HI R5, R6, R7 ;", &[0x8000_0000, 0xFFFF_FFFF, 0x8000_0000, 0xFFFF_FFFF], &[0x8000_0000, 0]);
    // RI: 0xFFFFFFFF^2 = 0xFFFFFFFE_00000001 (.U32); as .S32 (-1)^2 = 1.
    r.t("IMUL.HI.U32 R4, R4, 0xffffffff ;", &[0xFFFF_FFFF], &[0xFFFF_FFFE]);
    r.t("IMUL.HI R4, R4, 0xffffffff ;", &[0xFFFF_FFFF], &[0]);
    r.t("IMUL.LO.U32 R4, R4, 0xffffffff ;", &[0xFFFF_FFFF], &[1]);
    // RC: -c with c = 1 is -1; INT_MIN * -1 = 2^31: high word 0.
    r.tc("IMUL.HI R4, R4, -c[0x1][0x0] ;", &[0x8000_0000], &[1], &[0]);
    r.tc("IMUL R4, R4, -c[0x1][0x0] ;", &[0x8000_0000], &[1], &[0x8000_0000]);
    // RU: -UR4 with UR4 = 1 is 0xFFFFFFFF; unsigned 2 * 0xFFFFFFFF = 0x1_FFFFFFFE.
    r.t("R2UR UR4, R5 ;\n    IMUL.HI.U32 R4, R4, -UR4 ;", &[2, 1], &[1]);
    r.t("R2UR UR4, R5 ;\n    IMUL.HI R4, R4, -UR4 ;", &[2, 1], &[0xFFFF_FFFF]);
}

fn lea(r: &mut Runner) {
    let c = "\n    P2R R5, PR, RZ, 0x1 ;";
    // RRR: (3 << 31) mod 2^32 = 0x80000000; + 0x80000000 = 2^32.
    r.t(&format!("LEA R4, P0, R4, R5, 0x1f ;{}", c), &[3, 0x8000_0000], &[0, 1]);
    // RIR: (1 << 31) + 0x80000000 = 2^32.
    r.t(&format!("LEA R4, P0, R4, 0x80000000, 0x1f ;{}", c), &[1], &[0, 1]);
    // RCR, HI.X: {1, 0x80000000} << 31 mod 2^64 = 0xC0000000_00000000; high word
    // 0xC0000000 + 0x40000000 + 1 = 2^32 + 1 (E32).
    r.tc(&format!("LEA.HI.X R4, P0, R4, c[0x1][0x0], R5, 0x1f, PT ;{}", c), &[0x8000_0000, 1], &[0x4000_0000], &[1, 1]);
    // RUR, HI.X.SX32: ~0x7FFFFFFF = INT_MIN sign-extended, << 31 = -2^62:
    // high word 0xC0000000; + 0x40000000 = 2^32 (E32).
    r.t(&format!("R2UR UR4, R6 ;\n    LEA.HI.X.SX32 R4, P0, ~R4, UR4, 0x1f ;{}", c), &[0x7FFF_FFFF, 0, 0x4000_0000], &[0, 1]);
    // Shift 0 in LO mode: -0 is (2^32 - 0) mod 2^32 = 0 (E35, unlike IADD): 0 + 5, no carry.
    r.t(&format!("R2UR UR4, R6 ;\n    LEA R4, P0, -R4, UR4, 0x0 ;{}", c), &[0, 0, 5], &[5, 0]);
    // Shift 0 in HI.X mode gives Rc + SrcB.
    r.tc("LEA.HI.X R4, R4, c[0x1][0x0], R5, 0x0 ;", &[0xDEAD_BEEF, 0x10], &[0x20], &[0x30]);
}

fn iabs(r: &mut Runner) {
    // R: |INT_MIN| wraps to INT_MIN (E36); |-1| = 1; |0| = 0.
    r.t("IABS R4, R4 ;\n    IABS R5, R5 ;\n    IABS R6, R6 ;", &[0x8000_0000, 0xFFFF_FFFF, 0], &[0x8000_0000, 1, 0]);
    // U: |0x80000001| = 0x7FFFFFFF.
    r.t("R2UR UR4, R4 ;\n    IABS R4, UR4 ;", &[0x8000_0001], &[0x7FFF_FFFF]);
    // I: -0x80000000 folds to 0x80000000 (E8) → 0x80000000; 0x7FFFFFFF stays.
    r.t("IABS R4, -0x80000000 ;\n    IABS R5, 0x7fffffff ;", &[], &[0x8000_0000, 0x7FFF_FFFF]);
    // C.
    r.tc("IABS R4, c[0x1][0x0] ;\n    IABS R5, c[0x1][0x4] ;", &[], &[0xFFFF_FFFB, 5], &[5, 5]);
}

fn imnmx(r: &mut Runner) {
    // pp true → min, false → max; .S32 / .U32 comparison (E37).
    // RR.
    r.t("IMNMX R4, R4, R5, PT ;", &[0x8000_0000, 0x7FFF_FFFF], &[0x8000_0000]);
    r.t("IMNMX.U32 R4, R4, R5, PT ;", &[0x8000_0000, 0x7FFF_FFFF], &[0x7FFF_FFFF]);
    // RU.
    r.t("R2UR UR4, R5 ;\n    IMNMX R4, R4, UR4, !PT ;", &[0xFFFF_FFFF, 0], &[0]);
    r.t("R2UR UR4, R5 ;\n    IMNMX.U32 R4, R4, UR4, !PT ;", &[0xFFFF_FFFF, 0], &[0xFFFF_FFFF]);
    // RI: the folded -0x1 is 0xFFFFFFFF.
    r.t("IMNMX R4, R4, -0x1, PT ;", &[0], &[0xFFFF_FFFF]);
    r.t("IMNMX.U32 R4, R4, -0x1, PT ;", &[0], &[0]);
    // RC: equal values, and a predicate register as pp.
    r.tc("IMNMX R4, R4, c[0x1][0x0], !PT ;", &[0x8000_0000], &[0x7FFF_FFFF], &[0x7FFF_FFFF]);
    r.tc("ISETP.EQ.AND P3, PT, RZ, RZ, PT ;\n    IMNMX.U32 R4, R4, c[0x1][0x0], P3 ;", &[0x8000_0000], &[0x7FFF_FFFF], &[0x7FFF_FFFF]);
    r.tc("IMNMX R4, R4, c[0x1][0x0], PT ;", &[7], &[7], &[7]);
}

/// Sets P0–P6 from the low 7 bits of R7.
const SETP: &str = "    R2P PR, R7, 0x7f ;\n";

fn p2r(r: &mut Runner) {
    // Packed pr: bit i = Pi, bit 7 = PT = 1 (E40); P0–P6 = 0b1010101 → pr = 0xD5.
    // Rd = Ra with byte .bsel = (mask & pr) | (~mask & Ra.byte), mask = SbMsk[7:0].
    // RR: mask 0xFFFFFF0F → 0x0F; byte 3 of 0xAABBCCDD: 0x05 | 0xA0 = 0xA5.
    r.t(&format!("{}    P2R.B3 R4, PR, R4, R5 ;", SETP), &[0xAABB_CCDD, 0xFFFF_FF0F, 0, 0x55], &[0xA5BB_CCDD]);
    // RU: mask 0x180 → 0x80 (bit 8 is ignored): byte 1 = 0x80.
    r.t(&format!("{}    R2UR UR4, R5 ;\n    P2R.B1 R4, PR, R4, UR4 ;", SETP), &[0, 0x180, 0, 0x55], &[0x0000_8000]);
    // RI: mask 0x0 copies Ra; mask 0xff replaces the byte with pr.
    r.t(
        &format!("{}    P2R.B2 R4, PR, R4, 0x0 ;\n    P2R.B2 R5, PR, R5, 0xff ;", SETP),
        &[0x1234_5678, 0x1234_5678, 0, 0x55],
        &[0x1234_5678, 0x12D5_5678],
    );
    // RC: mask 0xFFFFFFFF → 0xFF; every predicate false: pr = 0x80.
    r.tc(&format!("{}    P2R R4, PR, R4, c[0x1][0x0] ;", SETP), &[0xFFFF_FFFF, 0, 0, 0], &[0xFFFF_FFFF], &[0xFFFF_FF80]);
}

fn r2p(r: &mut Runner) {
    // Pi = (mask bit i) ? selected byte bit i : Pi (E41); bit 7 ignored.
    // RR: all set first, then mask 0x1F0 → 0xF0: P4–P6 from byte 2 (0x0F → 0).
    r.t(&format!("{}    R2P PR, R4.B2, R5 ;{}", SETP, PREDS), &[0x000F_0000, 0x1F0, 0, 0x7F], &[0x8F]);
    // RU: mask 0x7f, byte 0 = 0x2A → P1, P3, P5.
    r.t(&format!("    R2UR UR4, R5 ;\n    R2P PR, R4, UR4 ;{}", PREDS), &[0x2A, 0x7F], &[0xAA]);
    // RI: mask 0x0 changes nothing.
    r.t(&format!("{}    R2P PR, R4.B1, 0x0 ;{}", SETP, PREDS), &[0xFFFF_FFFF, 0, 0, 0x15], &[0x95]);
    // RC: mask 0xFF; byte 3 = 0xFF sets P0–P6 (bit 7 cannot write PT).
    r.tc(&format!("    R2P PR, R4.B3, c[0x1][0x0] ;{}", PREDS), &[0xFF00_0000], &[0xFF], &[0xFF]);
}

fn isetp(r: &mut Runner) {
    // pu = t op pp, pv = !t op pp.
    // RR: INT_MIN < INT_MAX signed; not unsigned.
    r.t(&format!("ISETP.LT.AND P0, P1, R4, R5, PT ;{}", PREDS), &[0x8000_0000, 0x7FFF_FFFF], &[0x81]);
    r.t(&format!("ISETP.LT.U32.AND P0, P1, R4, R5, PT ;{}", PREDS), &[0x8000_0000, 0x7FFF_FFFF], &[0x82]);
    // RU: GE unsigned with XOR !PT (= identity).
    r.t(&format!("R2UR UR4, R5 ;\n    ISETP.GE.U32.XOR P2, P3, R4, UR4, !PT ;{}", PREDS), &[0x8000_0000, 0x7FFF_FFFF], &[0x84]);
    // RI: NE with OR of a false pp; 0xFFFFFFFF != -0x1 (folded) is false.
    r.t(&format!("ISETP.NE.OR P0, P1, R4, -0x1, !PT ;{}", PREDS), &[0xFFFF_FFFF], &[0x82]);
    // RC, .X: high words equal → pu = pq op pp (the low-word result).
    // 64-bit 0x1_00000000 > 0x0_FFFFFFFF: low words 0 > 0xFFFFFFFF (U32) false,
    // high words 1 > 0 true.
    let x =
        "ISETP.GT.U32.AND P0, PT, R4, c[0x1][0x0], PT ;\n    ISETP.GT.AND.X P1, P2, R5, c[0x1][0x4], PT, P0 ;\n    P2R R4, PR, RZ, 0x6 ;";
    r.tc(x, &[0, 1], &[0xFFFF_FFFF, 0], &[0x2]);
    // Equal high words: t comes from the low words (pq); pv = !pq.
    r.tc(x, &[5, 7], &[4, 7], &[0x2]);
    r.tc(x, &[4, 7], &[4, 7], &[0x4]);
    // INT_MIN vs INT_MAX in the high word is a signed compare.
    r.tc(x, &[0, 0x8000_0000], &[0, 0x7FFF_FFFF], &[0x4]);
}

fn iset(r: &mut Runner) {
    // RR: GT signed false → 0; .BF with unsigned true → 1.0f.
    r.t("ISET.GT R4, R4, R5 ;", &[0x8000_0000, 0x7FFF_FFFF], &[0]);
    r.t("ISET.GT.U32.BF R4, R4, R5 ;", &[0x8000_0000, 0x7FFF_FFFF], &[0x3F80_0000]);
    // RU: NE XOR PT inverts: 5 != 5 false → true.
    r.t("R2UR UR4, R5 ;\n    ISET.NE.XOR R4, R4, UR4, PT ;", &[5, 5], &[0xFFFF_FFFF]);
    // RI: LE with the default pp = PT (E43) and .AND.
    r.t("ISET.LE R4, R4, 0x7fffffff ;", &[0x7FFF_FFFF], &[0xFFFF_FFFF]);
    r.t("ISET.LE.U32 R4, R4, 0x7fffffff ;", &[0x8000_0000], &[0]);
    // RC, .X: equal words take pq; pq default !PT makes EQ.X false.
    r.tc("ISET.EQ.AND.BF.X R4, R4, c[0x1][0x0], PT, PT ;", &[9], &[9], &[0x3F80_0000]);
    r.tc("ISET.EQ.AND.X R4, R4, c[0x1][0x0], PT ;", &[9], &[9], &[0]);
    r.tc("ISET.LT.OR.X R4, R4, c[0x1][0x0], !PT, PT ;", &[8], &[9], &[0xFFFF_FFFF]);
}

fn sel(r: &mut Runner) {
    r.t("SEL R4, R4, R5, !PT ;", &[1, 2], &[2]);
    r.t("R2UR UR4, R5 ;\n    SEL R4, R4, UR4, !PT ;\n    SEL R5, R6, UR4, PT ;", &[1, 2, 3], &[2, 3]);
    r.t("SEL R4, R4, 0x80000000, !PT ;", &[1], &[0x8000_0000]);
    r.tc("ISETP.NE.AND P5, PT, R5, RZ, PT ;\n    SEL R4, R4, c[0x1][0x0], !P5 ;", &[1, 1], &[0xC0], &[0xC0]);
}

fn lop3(r: &mut Runner) {
    // d[i] = lut[(a[i] << 2) | (b[i] << 1) | c[i]]; pu = (Rd != 0) op pp (E51).
    let (a, b, c) = (0xF0F0_FF00u32, 0xCCCC_F0F0u32, 0xAAAA_CCCCu32);
    // RRR: 0x96 = a ^ b ^ c; .PAND with pp: Rd != 0 and PT → P0.
    r.t("LOP3.LUT.PAND P0, R4, R4, R5, R6, 0x96, PT ;\n    P2R R5, PR, RZ, 0x1 ;", &[a, b, c], &[a ^ b ^ c, 1]);
    // A zero result with PAND: false; with POR and !PT: false; with POR and PT: true.
    r.t("LOP3.PAND P0, R4, R4, R5, R6, 0x0, PT ;\n    P2R R5, PR, RZ, 0x1 ;", &[a, b, c], &[0, 0]);
    r.t("LOP3 P0, R4, R4, R5, R6, 0x0, !PT ;\n    P2R R5, PR, RZ, 0x1 ;", &[a, b, c], &[0, 0]);
    r.t("LOP3.POR P0, R4, R4, R5, R6, 0x0, PT ;\n    P2R R5, PR, RZ, 0x1 ;", &[a, b, c], &[0, 1]);
    // RIR: 0x1a = (a & b | c) ^ a with b = 0xFFFF0000.
    r.t("LOP3.LUT R4, R4, 0xffff0000, R5, 0x1a, !PT ;", &[a, c], &[((a & 0xFFFF_0000) | c) ^ a]);
    // RCR: 0x40 = a & b & ~c.
    r.tc("LOP3 R4, R4, c[0x1][0x0], R5, 0x40, !PT ;", &[a, c], &[b], &[a & b & !c]);
    // RUR: 0xfe = a | b | c; 0x01 = ~(a | b | c).
    r.t(
        "R2UR UR4, R6 ;\n    LOP3 R4, R4, UR4, R5, 0xfe, !PT ;\n    LOP3 R5, R4, UR4, RZ, 0x1, !PT ;",
        &[a, c, b],
        &[a | b | c, !(a | b | c)],
    );
}

fn plop3(r: &mut Runner) {
    // X: P0 = P1 & !P2 & P3 (0x80 with the ! applied to the operand).
    r.t(&format!("{}    PLOP3 P0, P1, !P2, P3, 0x80 ;\n    P2R R4, PR, RZ, 0x1 ;", SETP), &[0, 0, 0, 0b1010], &[1]);
    // 0x1a = (a & b | c) ^ a on PT, !PT, P6.
    r.t(&format!("{}    PLOP3 P0, PT, !PT, P6, 0x1a ;\n    P2R R4, PR, RZ, 0x1 ;", SETP), &[0, 0, 0, 0x40], &[0]);
    r.t(&format!("{}    PLOP3 P0, PT, !PT, P6, 0x1a ;\n    P2R R4, PR, RZ, 0x1 ;", SETP), &[0, 0, 0, 0], &[1]);
    // U: the third input is a uniform predicate (E47): UP2 = 1, !UP2 = 0.
    let u = "    UISETP.EQ.AND UP2, UPT, URZ, URZ, UPT ;\n    PLOP3 P0, PT, PT, !UP2, 0xaa ;\n    PLOP3 P1, PT, PT, UP2, 0xaa ;\n    P2R R4, PR, RZ, 0x3 ;";
    r.t(u, &[], &[0b10]);
}

fn shf(r: &mut Runner) {
    // b = SrcB as u32; N = 64 for .S64/.U64 else 32; CLAMP n = min(b, N),
    // WRAP n = b mod N (E53); right shifts act on {SrcC, Ra}, arithmetic for
    // S types (E54); .LO/.HI pick the halves.
    // RRR: counts 0, 31, 32, 33, 64, 0xFFFFFFFF with .L.U64.
    let l = "SHF.L.U64 R4, R4, R6, R5 ;\n    SHF.L.U64.HI R5, R7, R6, R5 ;";
    for (n, want) in [(0u32, [1u32, 0x8000_0000]), (31, [0x8000_0000, 0]), (32, [0, 1]), (33, [0, 2]), (64, [0, 0]), (0xFFFF_FFFF, [0, 0])]
    {
        r.t(l, &[1, 0x8000_0000, n, 1], &want);
    }
    // 32-bit types, t = {0x00000003, 0x80000001}: .L.U32 with counts 0, 31,
    // 32, 33, 64, 100 in CLAMP (min(b, 32)) and WRAP (b mod 32) mode; [LO, HI].
    let l32 = "SHF.L{} R4, R4, R6, R5 ;\n    SHF.L.HI{} R5, R7, R6, R5 ;";
    let clamp = [[0x8000_0001, 0x3], [0x8000_0000, 0xC000_0000], [0, 0x8000_0001], [0, 0x8000_0001], [0, 0x8000_0001], [0, 0x8000_0001]];
    let wrap = [[0x8000_0001, 0x3], [0x8000_0000, 0xC000_0000], [0x8000_0001, 0x3], [2, 0x7], [0x8000_0001, 0x3], [0x10, 0x38]];
    for (i, n) in [0u32, 31, 32, 33, 64, 100].into_iter().enumerate() {
        r.t(&l32.replace("{}", ".U32"), &[0x8000_0001, 3, n, 0x8000_0001], &clamp[i]);
        r.t(&l32.replace("{}", ".WRAP.U32"), &[0x8000_0001, 3, n, 0x8000_0001], &wrap[i]);
    }
    // .R.S32 of t = {0x80000003, 0x00000001} (arithmetic on 64 bits, E54).
    let r32 = "SHF.R{} R4, R4, R6, R5 ;\n    SHF.R.HI{} R5, R7, R6, R5 ;";
    let clamp = [
        [1, 0x8000_0003],
        [6, 0xFFFF_FFFF],
        [0x8000_0003, 0xFFFF_FFFF],
        [0x8000_0003, 0xFFFF_FFFF],
        [0x8000_0003, 0xFFFF_FFFF],
        [0x8000_0003, 0xFFFF_FFFF],
    ];
    let wrap =
        [[1, 0x8000_0003], [6, 0xFFFF_FFFF], [1, 0x8000_0003], [0x8000_0000, 0xC000_0001], [1, 0x8000_0003], [0x3000_0000, 0xF800_0000]];
    for (i, n) in [0u32, 31, 32, 33, 64, 100].into_iter().enumerate() {
        r.t(&r32.replace("{}", ".S32"), &[1, 0x8000_0003, n, 1], &clamp[i]);
        r.t(&r32.replace("{}", ".WRAP.S32"), &[1, 0x8000_0003, n, 1], &wrap[i]);
    }
    // .R.U64 of t = {0x80000000, 0x00000001}: counts 63, 64, 65, 100.
    let r64 = "SHF.R{} R4, R4, R6, R5 ;\n    SHF.R.HI{} R5, R7, R6, R5 ;";
    let clamp = [[1, 0], [0, 0], [0, 0], [0, 0]];
    let wrap = [[1, 0], [1, 0x8000_0000], [0, 0x4000_0000], [0x0800_0000, 0]];
    for (i, n) in [63u32, 64, 65, 100].into_iter().enumerate() {
        r.t(&r64.replace("{}", ".U64"), &[1, 0x8000_0000, n, 1], &clamp[i]);
        r.t(&r64.replace("{}", ".WRAP.U64"), &[1, 0x8000_0000, n, 1], &wrap[i]);
    }
    // RRI: .R.S64 of {0x80000000, 0}: 63 → all ones; 64 (clamped) → all ones;
    // WRAP 65 → 1: 0xC0000000_00000000.
    r.t("SHF.R.S64 R4, R4, R5, 0x80000000 ;", &[0, 63], &[0xFFFF_FFFF]);
    r.t("SHF.R.S64.HI R4, R4, R5, 0x80000000 ;", &[0, 64], &[0xFFFF_FFFF]);
    r.t("SHF.R.WRAP.S64.HI R4, R4, R5, 0x80000000 ;\n    SHF.R.WRAP.S64 R5, RZ, R5, 0x80000000 ;", &[0, 65], &[0xC000_0000, 0]);
    // RIR: .R.U32 with count 32 (clamp): {SrcC, Ra} >> 32 = SrcC in LO, 0 in HI.
    r.t("SHF.R.U32 R4, R4, 0x20, R5 ;\n    SHF.R.U32.HI R5, R6, 0x20, R5 ;", &[0x1111_1111, 0x8000_0000, 0], &[0x8000_0000, 0]);
    // .S32 replicates bit 31 of SrcC (E54): HI = 0xFFFFFFFF, LO = SrcC.
    r.t("SHF.R.S32.HI R4, R4, 0x21, R5 ;\n    SHF.R.S32 R5, R6, 0x21, R5 ;", &[0, 0x8000_0000, 0], &[0xFFFF_FFFF, 0x8000_0000]);
    // RRC: .L.WRAP.U32: 32 wraps to 0 (LO = Ra), 33 to 1.
    r.tc("SHF.L.WRAP.U32 R4, R4, R5, c[0x1][0x0] ;", &[0x8000_0001, 32], &[0xFFFF_FFFF], &[0x8000_0001]);
    r.tc("SHF.L.WRAP.U32.HI R4, R4, R5, c[0x1][0x0] ;", &[0x8000_0001, 33], &[0], &[1]);
    // RCR: count from the constant bank; 31 with .L.HI moves Ra's bits 31..1 into HI.
    r.tc("SHF.L.HI.U32 R4, R4, c[0x1][0x0], R5 ;", &[0x8000_0003, 0], &[31], &[0x4000_0001]);
    // Shift 0 right: LO = Ra, HI = SrcC.
    r.tc("SHF.R.S32 R4, R4, c[0x1][0x0], R5 ;", &[0x1234_5678, 0xFFFF_FFFF], &[0], &[0x1234_5678]);
    // RRU: SrcC from UR: .R.U64 by 36 of {0x12345678, 0x9ABCDEF0}.
    r.t("R2UR UR4, R6 ;\n    SHF.R.U64 R4, R4, R5, UR4 ;", &[0x9ABC_DEF0, 36, 0x1234_5678], &[0x0123_4567]);
    // RUR: count from UR: .L.S64 by 64 (clamp) → 0; WRAP 64 → 0 bits: Ra unchanged.
    r.t("R2UR UR4, R6 ;\n    SHF.L.S64 R4, R4, UR4, R5 ;", &[0xFFFF_FFFF, 0xFFFF_FFFF, 64], &[0]);
    r.t("R2UR UR4, R6 ;\n    SHF.L.WRAP.S64 R4, R4, UR4, R5 ;", &[0xFFFF_FFFF, 0, 64], &[0xFFFF_FFFF]);
}

fn mov(r: &mut Runner) {
    // R, U, I, C, and .64 from a pair, a uniform pair and a constant (E61).
    r.t("MOV R4, R5 ;", &[0, 0xDEAD_BEEF], &[0xDEAD_BEEF]);
    r.t("MOV.64 R[4:5], R[6:7] ;", &[0, 0, 0x8000_0000, 0xFFFF_FFFF], &[0x8000_0000, 0xFFFF_FFFF]);
    r.t("R2UR UR4, R6 ;\n    R2UR UR5, R7 ;\n    MOV R4, UR5 ;\n    MOV.64 R[6:7], UR[4:5] ;\n    MOV R5, R6 ;", &[0, 0, 1, 2], &[2, 1]);
    r.t("MOV R4, 0xffffffff ;\n    MOV.32 R5, -0x80000000 ;", &[], &[0xFFFF_FFFF, 0x8000_0000]);
    r.tc("MOV R4, c[0x1][0x4] ;\n    MOV.64 R[6:7], c[0x1][0x8] ;\n    MOV R5, R6 ;\n    MOV R6, R7 ;", &[], &[0, 1, 2, 3], &[1, 2, 3]);
}

fn prmt(r: &mut Runner) {
    // Bytes b0–b3 of Ra = 0x33221100, b4–b7 of SrcB = 0xF7665544 (b7 negative).
    // Table rows list Rd.b3 … Rd.b0 (E62); IDX uses SrcC[15:0] (E63).
    let (a, b) = (0x3322_1100u32, 0xF766_5544u32);
    // RRR: IDX: nibbles 0x7654 copy b4–b7; 0xF replicates the sign of b7; bits above 15 ignored.
    r.t("PRMT R4, R4, R5, R6 ;", &[a, b, 0xFFFF_7654], &[0xF766_5544]);
    r.t("PRMT R4, R4, R5, R6 ;", &[a, b, 0x0000_FB73], &[0xFF00_F733]);
    // RRI: the selector as an immediate; F4E with selector bits above 1 ignored.
    r.t("PRMT.F4E R4, R4, R5, 0xfffffffe ;", &[a, b], &[0x5544_3322]);
    r.t("PRMT.B4E R4, R4, R5, 0x2 ;", &[a, b], &[0xF700_1122]);
    // RIR: SrcB immediate, RC8 / ECL.
    r.t("PRMT.RC8 R4, R4, 0xf7665544, R5 ;", &[a, 1], &[0x1111_1111]);
    r.t("PRMT.ECL R4, R4, 0xf7665544, R5 ;", &[a, 2], &[0x3322_2222]);
    // RRC: selector in the constant bank; ECR / RC16.
    r.tc("PRMT.ECR R4, R4, R5, c[0x1][0x0] ;", &[a, b], &[1], &[0x1111_1100]);
    r.tc("PRMT.RC16 R4, R4, R5, c[0x1][0x0] ;", &[a, b], &[3], &[0x3322_3322]);
    // RCR: SrcB from the bank; B4E selector 3 reverses Ra; F4E 3 = b6 b5 b4 b3.
    r.tc("PRMT.B4E R4, R4, c[0x1][0x0], R5 ;", &[a, 3], &[b], &[0x0011_2233]);
    r.tc("PRMT.F4E R4, R4, c[0x1][0x0], R5 ;", &[a, 3], &[b], &[0x6655_4433]);
    // RRU: selector from UR; IDX mixing both words and a sign fill of b3 (positive).
    r.t("R2UR UR4, R6 ;\n    PRMT R4, R4, R5, UR4 ;", &[a, b, 0x0000_B470], &[0x0044_F700]);
    // RUR: SrcB from UR; ECR 0 = b0 everywhere, RC16 2 = low half twice.
    r.t("R2UR UR4, R5 ;\n    PRMT.ECR R4, R4, UR4, R6 ;", &[a, b, 0], &[0]);
    r.t("R2UR UR4, R5 ;\n    PRMT.RC16 R4, R4, UR4, R6 ;", &[a, b, 2], &[0x1100_1100]);
}

fn i2i(r: &mut Runner) {
    // Saturate the signed 32-bit SrcB; .S8/.S16 sign-extend, .U8/.U16 zero-extend (E64).
    r.t("I2I.S8 R4, R4 ;\n    I2I.U8 R5, R5 ;", &[0x8000_0000, 0x7FFF_FFFF], &[0xFFFF_FF80, 0xFF]);
    r.t("R2UR UR4, R4 ;\n    R2UR UR5, R5 ;\n    I2I.S16 R4, UR4 ;\n    I2I.U16 R5, UR5 ;", &[0x8000, 0xFFFF_FFFF], &[0x7FFF, 0]);
    r.t("I2I.S16 R4, -0x8000 ;\n    I2I.U8 R5, 0xff ;\n    I2I.S8 R6, -0x81 ;", &[], &[0xFFFF_8000, 0xFF, 0xFFFF_FF80]);
    r.tc("I2I.U16 R4, c[0x1][0x0] ;\n    I2I.S8 R5, c[0x1][0x4] ;", &[], &[0x1_0000, 0x7F], &[0xFFFF, 0x7F]);
}

fn i2ip(r: &mut Runner) {
    // ta = clamp(Ra), tb = clamp(SrcB); .SATRELU maps negatives to 0;
    // Rd = (ta & msk) << size | (tb & msk), rest from Rc (E66).
    // RRR: S16: INT_MAX → 0x7FFF, INT_MIN → 0x8000.
    r.t("I2IP.S16 R4, R4, R5, RZ ;", &[0x7FFF_FFFF, 0x8000_0000], &[0x7FFF_8000]);
    // RIR: SrcB immediate, U16: -1 → 0, 70000 → 0xFFFF.
    r.t("I2IP.U16 R4, R4, 0xffffffff, RZ ;", &[70000], &[0xFFFF_0000]);
    // RCR: U4.SATRELU: ta = 9, tb = 0 (negative); Rc low 24 bits fill bits 8–31.
    r.tc("I2IP.U4.SATRELU R4, R4, c[0x1][0x0], R5 ;", &[9, 0xAB12_3456], &[0x8000_0000], &[0x1234_5690]);
    // RUR: S2: range -2…1: 5 → 1, -7 → -2 (0b10); Rc fills 28 bits.
    r.t("R2UR UR4, R6 ;\n    I2IP.S2 R4, R4, UR4, R5 ;", &[5, 0, (-7i32) as u32], &[0b0110]);
    r.t("R2UR UR4, R6 ;\n    I2IP.S2 R4, R4, UR4, R5 ;", &[5, 0xFFFF_FFFF, (-7i32) as u32], &[0xFFFF_FFF6]);
}

fn r2ur_setgpr_getgpr(r: &mut Runner) {
    // R2UR: one lane runs, so the value is its Rb.
    r.t("R2UR UR4, R4 ;\n    MOV R4, UR4 ;", &[0x8000_0000], &[0x8000_0000]);
    // SETGPR R[URb+SImm9] = Ra; GETGPR Rd = R[URb+SImm9] (negative offsets, E72).
    // UR4 = 0x109: R[UR4-0x100] is R9.
    r.t("R2UR UR4, R4 ;\n    SETGPR R[UR4-0x100], R5 ;\n    GETGPR R4, R[UR4-0x100] ;\n    MOV R5, R9 ;", &[0x109, 0xAB], &[0xAB, 0xAB]);
    // UR4 = 0: the largest offset 0xff is R255 = RZ; 0xfe is R254.
    r.t("R2UR UR4, R4 ;\n    SETGPR R[UR4+0xfe], R5 ;\n    GETGPR R4, R[UR4+0xfe] ;\n    GETGPR R5, R[UR4+0xff] ;", &[0, 0xCD], &[0xCD, 0]);
    // Index 255 (RZ): reads 0, writes are discarded.
    r.t("R2UR UR4, R4 ;\n    SETGPR R[UR4], R5 ;\n    GETGPR R4, R[UR4] ;", &[255, 7], &[0]);
}

// ---- UDP (vendor document 000) --------------------------------------------
// The uniform twins follow the IALU semantics above; `Runner::u` puts the
// arguments in UR4, UR5, … and returns UR16, UR17, ….

/// Appends the uniform carry UP0 as the next result register UR<n>.
fn ucarry(n: u32) -> String {
    format!("\n    UP2UR UR{}, UPR, URZ, 0x1 ;", n)
}

fn uldc(r: &mut Runner) {
    // Sub-word loads extend by type (000:35); .64/.128 fill register tuples (E69);
    // the address is URa + SImm (E68).
    let bank = [0x8000_7F80, 0x1122_3344, 0x5566_7788, 0x99AA_BBCC, 0xDDEE_FF00, 0x0102_0304, 0x0506_0708, 0x090A_0B0C];
    r.u(
        "ULDC.S8 UR16, c[0x1][UR4+0x3] ;\n    ULDC.U8 UR17, c[0x1][UR4+0x3] ;\n    ULDC.S8 UR18, c[0x1][UR4+0x1] ;",
        &[0],
        &bank,
        &[0xFFFF_FF80, 0x80, 0x7F],
    );
    r.u("ULDC.S16 UR16, c[0x1][UR4+0x2] ;\n    ULDC.U16 UR17, c[0x1][UR4+0x2] ;", &[0], &bank, &[0xFFFF_8000, 0x8000]);
    r.u("ULDC.S8 UR16, c[0x1][UR4-0x1] ;", &[1], &bank, &[0xFFFF_FF80]);
    r.u(
        "ULDC UR16, c[0x1][0x4] ;\n    ULDC.64 UR[18:19], c[0x1][UR4-0x8] ;\n    UMOV UR17, UR19 ;",
        &[0x10],
        &bank,
        &[0x1122_3344, 0x99AA_BBCC],
    );
    // The effective address must be aligned to the size (E70): UR4 + 0x8 = 0x10.
    r.u("ULDC.128 UR[16:19], c[0x1][UR4+0x8] ;", &[8], &bank, &[0xDDEE_FF00, 0x0102_0304, 0x0506_0708, 0x090A_0B0C]);
}

fn uiadd(r: &mut Runner) {
    // UU: -UR5 with UR5 = 0 contributes 2^32 (E21).
    r.u(&format!("UIADD UR16, UP0, UR4, -UR5 ;{}", ucarry(17)), &[7, 0], &[], &[7, 1]);
    r.u(&format!("UIADD UR16, UP0, UR4, -UR5 ;{}", ucarry(17)), &[0, 1], &[], &[0xFFFF_FFFF, 0]);
    // UI: 2^31 + 2^31 = 2^32.
    r.u(&format!("UIADD UR16, UP0, UR4, 0x80000000 ;{}", ucarry(17)), &[0x8000_0000], &[], &[0, 1]);
    // UC: .X with ~c: 5 + ~5 + 1 = 2^32; -INT_MIN + INT_MIN = 2^32.
    r.u(&format!("UIADD.X UR16, UP0, UR4, ~c[0x1][0x0], UPT ;{}", ucarry(17)), &[5], &[5], &[0, 1]);
    r.u(&format!("UIADD UR16, UP0, -UR4, c[0x1][0x0] ;{}", ucarry(17)), &[0x8000_0000], &[0x8000_0000], &[0, 1]);
}

fn uimad(r: &mut Runner) {
    r.u(&format!("UIMAD UR16, UP0, UR4, UR5, -UR6 ;{}", ucarry(17)), &[0x1_0000, 0x1_0000, 0], &[], &[0, 1]);
    r.u(&format!("UIMAD UR16, UP0, UR4, UR5, 0xffffffff ;{}", ucarry(17)), &[1, 1], &[], &[0, 1]);
    r.u(&format!("UIMAD.HI.X UR16, UP0, UR4, 0x80000000, UR5, UPT ;{}", ucarry(17)), &[0x8000_0000, 0xBFFF_FFFF], &[], &[0, 1]);
    r.u(&format!("UIMAD UR16, UP0, UR4, UR5, -c[0x1][0x0] ;{}", ucarry(17)), &[0xFFFF_FFFF, 0xFFFF_FFFF], &[2], &[0xFFFF_FFFF, 0]);
    r.u("UIMAD.HI.X.U32 UR16, UR4, c[0x1][0x0], UR5 ;", &[0x1_0000, 7], &[0x1_0000], &[8]);
}

fn uimad_wide(r: &mut Runner) {
    r.u(&format!("UIMAD.WIDE.X.U32 UR[16:17], UP0, UR4, UR5, ~UR[6:7], UPT ;{}", ucarry(18)), &[2, 3, 6, 0], &[], &[0, 0, 1]);
    r.u(
        &format!("UIMAD.WIDE UR[16:17], UP0, UR4, 0xffffffff, UR[6:7] ;{}", ucarry(18)),
        &[0xFFFF_FFFF, 0, 0xFFFF_FFFF, 0xFFFF_FFFF],
        &[],
        &[0, 0, 1],
    );
    // UUC: E26 makes SrcC and URd 64-bit (emit/spec/udp.isa declares them so):
    // the simulator reads 8 bytes and writes UR16 and UR17.
    r.u(
        &format!("UIMAD.WIDE.U32 UR[16:17], UP0, UR4, UR5, c[0x1][0x8] ;{}", ucarry(18)),
        &[0xFFFF_FFFF, 0xFFFF_FFFF],
        &[0, 0, 0xFFFF_FFFF, 1],
        &[0, 0, 1],
    );
    r.u("UIMAD.WIDE UR[16:17], UR4, UR5, -c[0x1][0x8] ;", &[2, 3], &[0, 0, 7, 0], &[0xFFFF_FFFF, 0xFFFF_FFFF]);
    r.u(
        &format!("UIMAD.WIDE UR[16:17], UP0, UR4, c[0x1][0x0], -UR[6:7] ;{}", ucarry(18)),
        &[0x8000_0000, 0, 0, 0],
        &[0xFFFF_FFFF],
        &[0x8000_0000, 0, 1],
    );
}

fn uimul(r: &mut Runner) {
    r.u("UIMUL.HI UR16, UR4, UR5 ;\n    UIMUL UR17, UR4, UR5 ;", &[0x8000_0000, 0xFFFF_FFFF], &[], &[0, 0x8000_0000]);
    r.u("UIMUL.HI.U32 UR16, UR4, 0xffffffff ;\n    UIMUL.HI UR17, UR4, 0xffffffff ;", &[0xFFFF_FFFF], &[], &[0xFFFF_FFFE, 0]);
    r.u("UIMUL.HI.U32 UR16, UR4, -c[0x1][0x0] ;\n    UIMUL.HI UR17, UR4, -c[0x1][0x0] ;", &[2], &[1], &[1, 0xFFFF_FFFF]);
}

fn ulea(r: &mut Runner) {
    r.u(&format!("ULEA.HI.X UR16, UP0, UR4, UR5, UR6, 0x1f, UPT ;{}", ucarry(17)), &[0x8000_0000, 0x4000_0000, 1], &[], &[1, 1]);
    r.u(&format!("ULEA UR16, UP0, UR4, 0x80000000, 0x1f ;{}", ucarry(17)), &[1], &[], &[0, 1]);
    r.u(&format!("ULEA.HI.X.SX32 UR16, UP0, ~UR4, c[0x1][0x0], 0x1f ;{}", ucarry(17)), &[0x7FFF_FFFF], &[0x4000_0000], &[0, 1]);
    // -0 in LO mode is 0 (E35): no carry.
    r.u(&format!("ULEA UR16, UP0, -UR4, UR5, 0x0 ;{}", ucarry(17)), &[0, 5], &[], &[5, 0]);
}

fn uiabs_uimnmx(r: &mut Runner) {
    r.u("UIABS UR16, UR4 ;\n    UIABS UR17, UR5 ;", &[0x8000_0000, 0x8000_0001], &[], &[0x8000_0000, 0x7FFF_FFFF]);
    r.u("UIABS UR16, 0xffffffff ;\n    UIABS UR17, -0x80000000 ;", &[], &[], &[1, 0x8000_0000]);
    r.u("UIABS UR16, c[0x1][0x0] ;", &[], &[0xFFFF_FFFB], &[5]);
    r.u(
        "UIMNMX UR16, UR4, UR5, UPT ;\n    UIMNMX.U32 UR17, UR4, UR5, UPT ;",
        &[0x8000_0000, 0x7FFF_FFFF],
        &[],
        &[0x8000_0000, 0x7FFF_FFFF],
    );
    r.u("UIMNMX UR16, UR4, -0x1, !UPT ;\n    UIMNMX.U32 UR17, UR4, -0x1, !UPT ;", &[0], &[], &[0, 0xFFFF_FFFF]);
    let c = "UISETP.NE.AND UP3, UPT, UR5, URZ, UPT ;\n    UIMNMX UR16, UR4, c[0x1][0x0], !UP3 ;";
    r.u(c, &[0x8000_0000, 1], &[0x7FFF_FFFF], &[0x7FFF_FFFF]);
    r.u(c, &[0x8000_0000, 0], &[0x7FFF_FFFF], &[0x8000_0000]);
}

/// Sets UP0–UP6 from the low 7 bits of UR7.
const USETP: &str = "    UR2UP UPR, UR7, 0x7f ;\n";

fn up2ur_ur2up(r: &mut Runner) {
    // UP2UR: as P2R (E40): pr = 0xD5 for UP0–UP6 = 0b1010101.
    r.u(&format!("{}    UP2UR.B3 UR16, UPR, UR4, UR5 ;", USETP), &[0xAABB_CCDD, 0xFFFF_FF0F, 0, 0x55], &[], &[0xA5BB_CCDD]);
    r.u(
        &format!("{}    UP2UR.B2 UR16, UPR, UR4, 0xff ;\n    UP2UR.B1 UR17, UPR, UR4, 0x0 ;", USETP),
        &[0x1234_5678, 0, 0, 0x55],
        &[],
        &[0x12D5_5678, 0x1234_5678],
    );
    r.u(&format!("{}    UP2UR UR16, UPR, UR4, c[0x1][0x0] ;", USETP), &[0xFFFF_FFFF, 0, 0, 0], &[0xFFFF_FFFF], &[0xFFFF_FF80]);
    // UR2UP: as R2P (E41); UPREDS packs UP0–UP6 and UPT into UR16.
    r.u(&format!("{}    UR2UP UPR, UR4.B2, UR5 ;{}", USETP, UPREDS), &[0x000F_0000, 0x1F0, 0, 0x7F], &[], &[0x8F]);
    r.u(&format!("{}    UR2UP UPR, UR4.B1, 0x0 ;{}", USETP, UPREDS), &[0xFFFF_FFFF, 0, 0, 0x15], &[], &[0x95]);
    r.u(&format!("    UR2UP UPR, UR4.B3, c[0x1][0x0] ;{}", UPREDS), &[0xFF00_0000], &[0xFF], &[0xFF]);
}

fn uisetp_usel(r: &mut Runner) {
    r.u(&format!("UISETP.LT.AND UP0, UP1, UR4, UR5, UPT ;{}", UPREDS), &[0x8000_0000, 0x7FFF_FFFF], &[], &[0x81]);
    r.u(&format!("UISETP.GE.U32.XOR UP2, UP3, UR4, 0x7fffffff, !UPT ;{}", UPREDS), &[0x8000_0000], &[], &[0x84]);
    // .X: equal high words take upq (the low-word result).
    let x = "UISETP.GT.U32.AND UP0, UPT, UR4, c[0x1][0x0], UPT ;\n    UISETP.GT.AND.X UP1, UP2, UR5, c[0x1][0x4], UPT, UP0 ;\n    UP2UR UR16, UPR, URZ, 0x6 ;";
    r.u(x, &[0, 1], &[0xFFFF_FFFF, 0], &[0x2]);
    r.u(x, &[5, 7], &[4, 7], &[0x2]);
    r.u(x, &[4, 7], &[4, 7], &[0x4]);
    r.u(x, &[0, 0x8000_0000], &[0, 0x7FFF_FFFF], &[0x4]);
    r.u("USEL UR16, UR4, UR5, !UPT ;\n    USEL UR17, UR4, UR5, UPT ;", &[1, 2], &[], &[2, 1]);
    r.u("USEL UR16, UR4, 0x80000000, !UPT ;", &[1], &[], &[0x8000_0000]);
    r.u("UISETP.NE.AND UP5, UPT, UR5, URZ, UPT ;\n    USEL UR16, UR4, c[0x1][0x0], !UP5 ;", &[1, 1], &[0xC0], &[0xC0]);
}

fn ulop3_uplop3(r: &mut Runner) {
    let (a, b, c) = (0xF0F0_FF00u32, 0xCCCC_F0F0u32, 0xAAAA_CCCCu32);
    // Order: the optional predicate first, as in the syntax (E50).
    r.u(&format!("ULOP3.LUT.PAND UP0, UR16, UR4, UR5, UR6, 0x96, UPT ;{}", ucarry(17)), &[a, b, c], &[], &[a ^ b ^ c, 1]);
    r.u(&format!("ULOP3 UP0, UR16, UR4, UR5, UR6, 0x0, UPT ;{}", ucarry(17)), &[a, b, c], &[], &[0, 1]);
    r.u(&format!("ULOP3.PAND UP0, UR16, UR4, UR5, UR6, 0x0, UPT ;{}", ucarry(17)), &[a, b, c], &[], &[0, 0]);
    r.u("ULOP3.LUT UR16, UR4, 0xffff0000, UR5, 0x1a, !UPT ;", &[a, c], &[], &[((a & 0xFFFF_0000) | c) ^ a]);
    r.u("ULOP3 UR16, UR4, c[0x1][0x0], UR5, 0x40, !UPT ;", &[a, c], &[b], &[a & b & !c]);
    // UPLOP3: UP0 = UP1 & !UP2 & UP3; 0x1a on UPT, !UPT, UP6 is !UP6.
    r.u(&format!("{}    UPLOP3 UP0, UP1, !UP2, UP3, 0x80 ;\n    UP2UR UR16, UPR, URZ, 0x1 ;", USETP), &[0, 0, 0, 0b1010], &[], &[1]);
    r.u(&format!("{}    UPLOP3 UP0, UPT, !UPT, UP6, 0x1a ;\n    UP2UR UR16, UPR, URZ, 0x1 ;", USETP), &[0, 0, 0, 0x40], &[], &[0]);
}

fn ushf(r: &mut Runner) {
    // UUU: .L.U64 by 31 and 0xFFFFFFFF (clamped to 64) of {0x80000000, 1}.
    r.u("USHF.L.U64 UR16, UR4, UR6, UR5 ;\n    USHF.L.U64.HI UR17, UR4, UR6, UR5 ;", &[1, 0x8000_0000, 31], &[], &[0x8000_0000, 0]);
    r.u("USHF.L.U64 UR16, UR4, UR6, UR5 ;\n    USHF.L.U64.HI UR17, UR4, UR6, UR5 ;", &[1, 0x8000_0000, 0xFFFF_FFFF], &[], &[0, 0]);
    // UIU: count immediate 33 with .R.S32.HI (clamped to 32, sign fill, E54).
    r.u("USHF.R.S32.HI UR16, UR4, 0x21, UR5 ;\n    USHF.R.S32 UR17, UR4, 0x21, UR5 ;", &[0, 0x8000_0000], &[], &[0xFFFF_FFFF, 0x8000_0000]);
    // UUI: SrcC immediate; WRAP.S64 by 65 → 1.
    r.u(
        "USHF.R.WRAP.S64.HI UR16, UR4, UR5, 0x80000000 ;\n    USHF.R.WRAP.S64 UR17, UR4, UR5, 0x80000000 ;",
        &[0, 65],
        &[],
        &[0xC000_0000, 0],
    );
    // UUC: SrcC from the bank; WRAP.U32 by 32 → 0.
    r.u("USHF.L.WRAP.U32 UR16, UR4, UR5, c[0x1][0x0] ;", &[0x8000_0001, 32], &[0xFFFF_FFFF], &[0x8000_0001]);
    // UCU: count from the bank: .L.HI.U32 by 31.
    r.u("USHF.L.HI.U32 UR16, UR4, c[0x1][0x0], UR5 ;", &[0x8000_0003, 0], &[31], &[0x4000_0001]);
}

fn umov_uprmt(r: &mut Runner) {
    r.u("UMOV UR16, UR5 ;\n    UMOV UR17, 0xffffffff ;", &[0, 0xDEAD_BEEF], &[], &[0xDEAD_BEEF, 0xFFFF_FFFF]);
    r.u("UMOV UR16, c[0x1][0x4] ;\n    UMOV.64 UR[18:19], c[0x1][0x8] ;\n    UMOV UR17, UR19 ;", &[], &[0, 1, 2, 3], &[1, 3]);
    r.u("UMOV.64 UR[16:17], UR[4:5] ;", &[0x8000_0000, 0xFFFF_FFFF], &[], &[0x8000_0000, 0xFFFF_FFFF]);
    let (a, b) = (0x3322_1100u32, 0xF766_5544u32);
    r.u("UPRMT UR16, UR4, UR5, UR6 ;", &[a, b, 0x0000_FB73], &[], &[0xFF00_F733]);
    r.u("UPRMT.B4E UR16, UR4, UR5, 0x2 ;\n    UPRMT.F4E UR17, UR4, UR5, 0xfffffffe ;", &[a, b], &[], &[0xF700_1122, 0x5544_3322]);
    r.u("UPRMT.RC8 UR16, UR4, 0xf7665544, UR5 ;\n    UPRMT.ECL UR17, UR4, 0xf7665544, UR6 ;", &[a, 1, 2], &[], &[0x1111_1111, 0x3322_2222]);
    r.u(
        "UPRMT.ECR UR16, UR4, UR5, c[0x1][0x0] ;\n    UPRMT.RC16 UR17, UR4, UR5, c[0x1][0x4] ;",
        &[a, b],
        &[1, 3],
        &[0x1111_1100, 0x3322_3322],
    );
    r.u("UPRMT.IDX UR16, UR4, c[0x1][0x0], UR5 ;", &[a, 0x0000_B470], &[b], &[0x0044_F700]);
}

fn ubits(r: &mut Runner) {
    // UPOPC (E59), UFLO (E60), UBREV (E58), UBMSK (E56, E57), USGXT (E55).
    r.u("UPOPC UR16, UR4 ;\n    UPOPC UR17, ~UR4 ;", &[0x8000_0001], &[], &[2, 30]);
    r.u("UPOPC UR16, 0xffffffff ;\n    UPOPC UR17, 0x7fff0000 ;", &[], &[], &[32, 15]);
    r.u("UPOPC UR16, c[0x1][0x0] ;", &[], &[0x0F0F_0000], &[8]);
    r.u("UFLO UR16, UR4 ;\n    UFLO.SH UR17, UR4 ;", &[0xFFFF_FFFF], &[], &[0xFFFF_FFFF, 0xFFFF_FFFF]);
    r.u("UFLO UR16, 0x80000000 ;\n    UFLO.U32.SH UR17, 0x80000000 ;", &[], &[], &[30, 0]);
    r.u("UFLO.U32 UR16, ~c[0x1][0x0] ;\n    UFLO.U32 UR17, c[0x1][0x0] ;", &[], &[0xFFFF_FFFF], &[0xFFFF_FFFF, 31]);
    r.u("UBREV UR16, UR4 ;", &[0xF000_0001], &[], &[0x8000_000F]);
    r.u("UBREV UR16, 0x1 ;", &[], &[], &[0x8000_0000]);
    r.u("UBREV UR16, c[0x1][0x0] ;", &[], &[0xFFFF_0000], &[0x0000_FFFF]);
    r.u("UBMSK UR16, UR4, UR5 ;\n    UBMSK.WRAP UR17, UR4, UR5 ;", &[33, 1], &[], &[0, 2]);
    r.u("UBMSK UR16, UR4, 0x24 ;\n    UBMSK.WRAP UR17, UR5, 0x2 ;", &[4, 31], &[], &[0xFFFF_FFF0, 0x8000_0000]);
    r.u("UBMSK.WRAP UR16, UR4, c[0x1][0x0] ;\n    UBMSK UR17, UR4, c[0x1][0x0] ;", &[31], &[2], &[0x8000_0000, 0x8000_0000]);
    r.u("USGXT UR16, UR4, UR5 ;\n    USGXT.U32 UR17, UR4, UR5 ;", &[1, 1], &[], &[0xFFFF_FFFF, 1]);
    r.u("USGXT.WRAP UR16, UR4, 0x40 ;\n    USGXT UR17, UR4, 0x40 ;", &[0x8765_4321], &[], &[0, 0x8765_4321]);
    r.u("USGXT.WRAP UR16, UR4, c[0x1][0x0] ;\n    USGXT.WRAP.U32 UR17, UR4, c[0x1][0x0] ;", &[0x0000_8000], &[48], &[0xFFFF_8000, 0x8000]);
}

fn setugpr_getugpr(r: &mut Runner) {
    // SETUGPR UR[URx±imm], URy (E71); index 63 is URZ (E72).
    // UR4 = 0: +0x3e is UR62, the last writable one; +0x3f is URZ.
    r.u(
        "SETUGPR UR[UR4+0x3e], UR5 ;\n    SETUGPR UR[UR4+0x3f], UR5 ;\n    GETUGPR UR16, UR[UR4+0x3e] ;\n    GETUGPR UR17, UR[UR4+0x3f] ;",
        &[0, 0xAB],
        &[],
        &[0xAB, 0],
    );
    r.u("SETUGPR UR[UR4-0x40], UR5 ;\n    UMOV UR16, UR30 ;", &[94, 0xCD], &[], &[0xCD]);
    r.u("GETUGPR UR16, UR[UR4] ;\n    GETUGPR UR17, UR[UR4-0x3a] ;", &[63, 0x77], &[], &[0, 0x77]);
}

// ---- XU (vendor document 002) ---------------------------------------------

const QNAN: u32 = 0x7FFF_FFFF;
const PINF: u32 = 0x7F80_0000;
const NINF: u32 = 0xFF80_0000;
const NZERO: u32 = 0x8000_0000;
const ONE: u32 = 0x3F80_0000;
const SNAN: u32 = 0x7F80_0001;
const DENORM: u32 = 0x0000_0001;
const NDENORM: u32 = 0x8000_0001;

/// (function, input, expected) for MUFU .F32: the tables of 002:92–182 with
/// E75–E78 (COS(±0) = 1; subnormal inputs and results flushed to zero of the
/// same sign), plus inputs whose results are exact.
const MUFU_F32: &[(&str, u32, u32)] = &[
    ("COS", PINF, QNAN),
    ("COS", NINF, QNAN),
    ("COS", SNAN, QNAN),
    ("COS", 0, ONE),
    ("COS", NZERO, ONE),
    ("COS", NDENORM, ONE),
    ("SIN", PINF, QNAN),
    ("SIN", NINF, QNAN),
    ("SIN", 0x7FC0_0000, QNAN),
    ("SIN", 0, 0),
    ("SIN", NZERO, NZERO),
    ("SIN", NDENORM, NZERO),
    ("EX2", NINF, 0),
    ("EX2", 0, ONE),
    ("EX2", NZERO, ONE),
    ("EX2", DENORM, ONE),
    ("EX2", PINF, PINF),
    ("EX2", SNAN, QNAN),
    ("EX2", 0x4040_0000, 0x4100_0000), // 3 → 8
    ("EX2", 0xC2FC_0000, 0x0080_0000), // -126 → 2^-126, the smallest normal
    ("EX2", 0xC2FE_0000, 0),           // -127 → 2^-127 is subnormal: flushed
    ("EX2", 0x4300_0000, PINF),        // 128 → 2^128 overflows
    ("LG2", NINF, QNAN),
    ("LG2", 0xBF80_0000, QNAN), // -1
    ("LG2", 0, NINF),
    ("LG2", NZERO, NINF),
    ("LG2", NDENORM, NINF),
    ("LG2", DENORM, NINF),
    ("LG2", PINF, PINF),
    ("LG2", SNAN, QNAN),
    ("LG2", 0x0080_0000, 0xC2FC_0000), // 2^-126 → -126
    ("LG2", ONE, 0),
    ("RCP", NINF, NZERO),
    ("RCP", NZERO, NINF),
    ("RCP", 0, PINF),
    ("RCP", PINF, 0),
    ("RCP", SNAN, QNAN),
    ("RCP", DENORM, PINF),
    ("RCP", NDENORM, NINF),
    ("RCP", 0x0080_0000, 0x7E80_0000), // 2^-126 → 2^126
    ("RCP", 0x7F00_0000, 0),           // 2^127 → 2^-127: flushed
    ("RCP", 0xFF00_0000, NZERO),       // -2^127 → -0
    ("RSQ", NINF, QNAN),
    ("RSQ", 0xC080_0000, QNAN), // -4
    ("RSQ", NZERO, NINF),
    ("RSQ", 0, PINF),
    ("RSQ", NDENORM, NINF),
    ("RSQ", PINF, 0),
    ("RSQ", SNAN, QNAN),
    ("RSQ", 0x3E80_0000, 0x4000_0000), // 0.25 → 2
    ("SQRT", NINF, QNAN),
    ("SQRT", 0xBF80_0000, QNAN),
    ("SQRT", NZERO, NZERO),
    ("SQRT", 0, 0),
    ("SQRT", NDENORM, NZERO),
    ("SQRT", PINF, PINF),
    ("SQRT", SNAN, QNAN),
    ("SQRT", 0x4180_0000, 0x4080_0000), // 16 → 4
    ("TANH", NINF, 0xBF80_0000),
    ("TANH", NZERO, NZERO),
    ("TANH", 0, 0),
    ("TANH", DENORM, 0),
    ("TANH", PINF, ONE),
    ("TANH", SNAN, QNAN),
];

fn mufu_f32(r: &mut Runner) {
    // Every row through every source form: R, I (raw bits, E9), C and U.
    for &(f, x, want) in MUFU_F32 {
        r.t(&format!("MUFU.{} R4, R4 ;", f), &[x], &[want]);
        r.t(&format!("MUFU.{}.F32 R4, 0x{:x} ;", f, x), &[], &[want]);
        r.tc(&format!("MUFU.{} R4, c[0x1][0x4] ;", f), &[], &[0, x], &[want]);
        r.t(&format!("R2UR UR9, R4 ;\n    MUFU.{} R4, UR9 ;", f), &[x], &[want]);
    }
}

fn mufu_modifiers_sat_f64_f16(r: &mut Runner) {
    // -|x| and |x| before the function (F32/F64 only, E83).
    r.t("MUFU.SQRT R4, -R4 ;", &[0xC080_0000], &[0x4000_0000]);
    r.t("MUFU.RSQ R4, |R4| ;", &[NZERO], &[PINF]);
    r.tc("MUFU.LG2 R4, -|c[0x1][0x0]| ;", &[], &[ONE], &[QNAN]);
    r.t("R2UR UR4, R4 ;\n    MUFU.RCP R4, -|UR4| ;", &[0x4080_0000], &[0xBE80_0000]);
    // .SAT clamps to [+0, 1] and maps NaN to +0 (002:89).
    r.t("MUFU.TANH.SAT R4, R4 ;", &[NINF], &[0]);
    r.t("MUFU.EX2.SAT R4, R4 ;", &[PINF], &[ONE]);
    r.t("MUFU.SQRT.SAT R4, R4 ;", &[0xBF80_0000], &[0]);
    r.t("MUFU.RCP.F32.SAT R4, 0.5 ;", &[], &[ONE]);
    r.tc("MUFU.LG2.SAT R4, c[0x1][0x0] ;", &[], &[0x3FC0_0000], &[0x3F15_C01A]);
    // .F64: high words of binary64 (E79); QNAN is 0x7FFFFFFF in Rd.
    let f64s: &[(&str, u32, u32)] = &[
        ("RCP", 0x4000_0000, 0x3FE0_0000), // 2 → 0.5
        ("RCP", 0xFFF0_0000, 0x8000_0000), // -Inf → -0
        ("RCP", 0x8000_0001, 0xFFF0_0000), // -subnormal → -Inf
        ("RCP", 0x7FF8_0000, QNAN),
        ("RSQ", 0x3FD0_0000, 0x4000_0000), // 0.25 → 2
        ("RSQ", 0xC010_0000, QNAN),        // -4 → QNAN (E78)
        ("RSQ", 0x0000_0001, 0x7FF0_0000), // +subnormal → +Inf
        ("RSQ", 0x7FF0_0000, 0),
    ];
    for &(f, x, want) in f64s {
        r.t(&format!("MUFU.{}.F64 R4, R4 ;", f), &[x], &[want]);
        r.t(&format!("MUFU.{}.F64 R4, 0x{:x} ;", f, x), &[], &[want]);
        r.tc(&format!("MUFU.{}.F64 R4, c[0x1][0x0] ;", f), &[], &[x], &[want]);
        r.t(&format!("R2UR UR5, R4 ;\n    MUFU.{}.F64 R4, UR5 ;", f), &[x], &[want]);
    }
    r.t("MUFU.RSQ.F64 R4, |R4| ;", &[0xC010_0000], &[0x3FE0_0000]);
    r.t("MUFU.RCP.F64 R4, -R4 ;", &[0x4000_0000], &[0xBFE0_0000]);
    // Half precision: .hsel picks a half of a register / UR / constant; an
    // immediate holds the input in its low 16 bits (E9, E83); the upper 16
    // bits of Rd are 0 (002:45). F16: 3 = 0x4200 → 8 = 0x4800; -15 = 0xCB80 →
    // 2^-15 is subnormal in F16: flushed (E78). BF16: -127 = 0xC2FE → 0.
    r.t("MUFU.EX2.F16 R4, R4.H1 ;", &[0x4200_0000], &[0x4800]);
    r.t("MUFU.EX2.F16 R4, 0x4200 ;\n    MUFU.EX2.F16 R5, 0xcb80 ;", &[], &[0x4800, 0]);
    r.tc("MUFU.TANH.F16 R4, c[0x1][0x0].H0 ;\n    MUFU.TANH.F16 R5, c[0x1][0x0].H1 ;", &[], &[0xFC00_8000], &[0x8000, 0xBC00]);
    r.t("R2UR UR4, R4 ;\n    MUFU.EX2.BF16 R4, UR4.H1 ;\n    MUFU.EX2.BF16 R5, UR4.H0 ;", &[0xC2FE_3F80], &[0, 0x4000]);
    // Packed pairs: each half independently; F16 QNAN 0x7FFF.
    r.t("MUFU.EX2.F16_V2 R4, 0xcb803c00 ;", &[], &[0x0000_4000]);
    r.tc("MUFU.TANH.BF16_V2 R4, c[0x1][0x0] ;", &[], &[0xFF80_7FC0], &[0xBF80_7FFF]);
    r.t("R2UR UR4, R4 ;\n    MUFU.TANH.F16_V2 R4, UR4 ;", &[0x7C00_FC00], &[0x3C00_BC00]);
    r.t("MUFU.EX2.BF16_V2 R4, R4 ;", &[0x7F80_FF80], &[0x7F80_0000]);
}

fn popc_flo_brev(r: &mut Runner) {
    r.t("POPC R4, R4 ;\n    POPC R5, ~R5 ;", &[0x8000_0001, 0x8000_0001], &[2, 30]);
    r.t("POPC R4, 0xffffffff ;\n    POPC R5, 0x7fff0000 ;", &[], &[32, 15]);
    r.t("R2UR UR4, R4 ;\n    POPC R4, ~UR4 ;", &[0x8000_0000], &[31]);
    r.tc("POPC R4, c[0x1][0x0] ;\n    POPC R5, ~c[0x1][0x0] ;", &[], &[0x0F0F_0000], &[8, 24]);
    // FLO (E60): x = (~)SrcB; .S32 negative → ~x; 0 → 0xFFFFFFFF; .SH → 31 - p.
    r.t("FLO R4, R4 ;\n    FLO.SH R5, R5 ;", &[0xFFFF_FFFF, 0xFFFF_FFFF], &[0xFFFF_FFFF, 0xFFFF_FFFF]);
    r.t("FLO R4, 0x80000000 ;\n    FLO.U32.SH R5, 0x80000000 ;\n    FLO.U32 R6, 0x80000000 ;", &[], &[30, 0, 31]);
    r.t("R2UR UR4, R4 ;\n    FLO.SH R4, UR4 ;\n    FLO.U32 R5, ~UR4 ;", &[0x0000_0001], &[31, 31]);
    r.tc("FLO.U32 R4, ~c[0x1][0x0] ;\n    FLO.U32.SH R5, c[0x1][0x0] ;", &[], &[0xFFFF_FFFF], &[0xFFFF_FFFF, 0]);
    // BREV (E58): Rd[i] = SrcB[31 - i].
    r.t("BREV R4, R4 ;", &[0xF000_0001], &[0x8000_000F]);
    r.t("BREV R4, 0x1 ;\n    BREV R5, 0x0 ;", &[], &[0x8000_0000, 0]);
    r.t("R2UR UR4, R4 ;\n    BREV R4, UR4 ;", &[0x1234_5678], &[0x1E6A_2C48]);
    r.tc("BREV R4, c[0x1][0x0] ;", &[], &[0xFFFF_0000], &[0x0000_FFFF]);
}

fn bmsk_sgxt(r: &mut Runner) {
    // BMSK (E56): ones at bits Ra … Ra+SrcB-1, clipped at 31. CLAMP: Ra >= 32
    // → 0, SrcB >= 32 → ones from Ra up; WRAP: both mod 32.
    r.t("BMSK R4, R4, R5 ;\n    BMSK.WRAP R5, R6, R5 ;", &[33, 1, 33], &[0, 2]);
    r.t("BMSK R4, R4, 0x24 ;\n    BMSK.WRAP R5, R6, 0x2 ;", &[4, 0, 31], &[0xFFFF_FFF0, 0x8000_0000]);
    r.t("R2UR UR4, R5 ;\n    BMSK R4, R4, UR4 ;\n    BMSK.WRAP R5, R6, UR4 ;", &[0, 32, 0], &[0xFFFF_FFFF, 0]);
    r.tc("BMSK R4, R4, c[0x1][0x0] ;\n    BMSK.WRAP R5, R5, c[0x1][0x0] ;", &[31, 63], &[0], &[0, 0]);
    r.tc("BMSK R4, R4, c[0x1][0x0] ;", &[30], &[8], &[0xC000_0000]);
    // SGXT (E55): CLAMP width min(SrcB, 32); WRAP width SrcB mod 32; width 0 → 0.
    r.t("SGXT R4, R4, R5 ;\n    SGXT.U32 R5, R6, R5 ;", &[1, 1, 1], &[0xFFFF_FFFF, 1]);
    r.t("SGXT.WRAP R4, R4, 0x40 ;\n    SGXT R5, R5, 0x40 ;", &[0x8765_4321, 0x8765_4321], &[0, 0x8765_4321]);
    r.t("R2UR UR4, R5 ;\n    SGXT R4, R4, UR4 ;\n    SGXT.U32 R5, R6, UR4 ;", &[0x0000_0080, 8, 0xFFFF_FF80], &[0xFFFF_FF80, 0x80]);
    r.tc(
        "SGXT.WRAP R4, R4, c[0x1][0x0] ;\n    SGXT.WRAP.U32 R5, R5, c[0x1][0x4] ;",
        &[0x0000_8000, 0xFFFF_FFFF],
        &[48, 0xFFFF_FFFF],
        &[0xFFFF_8000, 0x7FFF_FFFF],
    );
}

// ---- DALU (vendor document 003) -------------------------------------------
// IEEE binary64 with subnormals; .RN ties to even (E84), .RZ, .RP, .RM;
// F64Imm is the high word of a binary64 (E9).

const RND: [&str; 4] = [".RN", ".RZ", ".RP", ".RM"];

/// 1 + 3·2^-52 (three ulps above 1).
const ONE_3: u64 = 0x3FF0_0000_0000_0003;
/// 1.5·2^-53 = 0.75 ulp of 1.
const Q75: u64 = 0x3CA8_0000_0000_0000;
const NEG: u64 = 1 << 63;

/// Runs a double op with a in R[4:5], b in R[6:7], c in R[8:9] and bank 1 =
/// `consts`; returns R[4:5].
fn dd(r: &mut Runner, body: &str, a: u64, b: u64, c: u64, consts: &[u32], want: u64) {
    r.tc(body, &[lo(a), hi(a), lo(b), hi(b), lo(c), hi(c)], consts, &[lo(want), hi(want)]);
}

/// Moves R[6:7] into UR[6:7] (for the RU / RUR / RRU forms).
const UR67: &str = "R2UR UR6, R6 ;\n    R2UR UR7, R7 ;\n    ";
const UR89: &str = "R2UR UR8, R8 ;\n    R2UR UR9, R9 ;\n    ";

fn dadd(r: &mut Runner) {
    // 1 + 0.75 ulp: RN and RP round up, RZ and RM down; -(1 + 0.75 ulp):
    // RN and RM away from zero, RZ and RP toward.
    let one = f64b(1.0);
    let pos = [one + 1, one, one + 1, one];
    let neg = [NEG | (one + 1), NEG | one, NEG | one, NEG | (one + 1)];
    let cq = [lo(Q75), hi(Q75)];
    let cnq = [lo(NEG | Q75), hi(NEG | Q75)];
    for (i, m) in RND.iter().enumerate() {
        dd(r, &format!("DADD{} R[4:5], R[4:5], R[6:7] ;", m), one, Q75, 0, &[], pos[i]);
        dd(r, &format!("DADD{} R[4:5], -R[4:5], -R[6:7] ;", m), one, Q75, 0, &[], neg[i]);
        dd(r, &format!("{}DADD{} R[4:5], R[4:5], UR[6:7] ;", UR67, m), one, Q75, 0, &[], pos[i]);
        dd(r, &format!("{}DADD{} R[4:5], -R[4:5], -UR[6:7] ;", UR67, m), one, Q75, 0, &[], neg[i]);
        dd(r, &format!("DADD{} R[4:5], R[4:5], 0x3ca80000 ;", m), one, 0, 0, &[], pos[i]);
        dd(r, &format!("DADD{} R[4:5], -R[4:5], 0xbca80000 ;", m), one, 0, 0, &[], neg[i]);
        dd(r, &format!("DADD{} R[4:5], R[4:5], c[0x1][0x0] ;", m), one, 0, 0, &cq, pos[i]);
        dd(r, &format!("DADD{} R[4:5], -|R[4:5]|, c[0x1][0x0] ;", m), NEG | one, 0, 0, &cnq, neg[i]);
    }
    // x + (-x) is -0 only under .RM (E17), also through a constant.
    dd(r, "DADD.RM R[4:5], R[4:5], -c[0x1][0x0] ;", one, 0, 0, &[lo(one), hi(one)], NEG);
    dd(r, "DADD.RZ R[4:5], R[4:5], -c[0x1][0x0] ;", one, 0, 0, &[lo(one), hi(one)], 0);
}

fn dmul(r: &mut Runner) {
    // (1 + 3·2^-52) · 1.25 = 1.25 + 3.75 ulp: RN/RP → +4 ulp, RZ/RM → +3 ulp.
    let b = f64b(1.25);
    let pos = [b + 4, b + 3, b + 4, b + 3];
    let neg = [NEG | (b + 4), NEG | (b + 3), NEG | (b + 3), NEG | (b + 4)];
    let cb = [lo(b), hi(b)];
    for (i, m) in RND.iter().enumerate() {
        dd(r, &format!("DMUL{} R[4:5], R[4:5], R[6:7] ;", m), ONE_3, b, 0, &[], pos[i]);
        dd(r, &format!("DMUL{} R[4:5], R[4:5], -R[6:7] ;", m), ONE_3, b, 0, &[], neg[i]);
        dd(r, &format!("{}DMUL{} R[4:5], R[4:5], UR[6:7] ;", UR67, m), ONE_3, b, 0, &[], pos[i]);
        dd(r, &format!("{}DMUL{} R[4:5], -R[4:5], |UR[6:7]| ;", UR67, m), ONE_3, NEG | b, 0, &[], neg[i]);
        dd(r, &format!("DMUL{} R[4:5], R[4:5], 1.25 ;", m), ONE_3, 0, 0, &[], pos[i]);
        dd(r, &format!("DMUL{} R[4:5], R[4:5], -1.25 ;", m), ONE_3, 0, 0, &[], neg[i]);
        dd(r, &format!("DMUL{} R[4:5], R[4:5], c[0x1][0x8] ;", m), ONE_3, 0, 0, &[0, 0, cb[0], cb[1]], pos[i]);
        dd(r, &format!("DMUL{} R[4:5], |R[4:5]|, -c[0x1][0x8] ;", m), NEG | ONE_3, 0, 0, &[0, 0, cb[0], cb[1]], neg[i]);
    }
}

fn dmul_subnormal_and_overflow(r: &mut Runner) {
    // 2^-1074 · 0.75 = 0.75 of the smallest subnormal: RN/RP → 2^-1074,
    // RZ/RM → +0; negated: RN/RM → -2^-1074, RZ/RP → -0.
    let pos = [1u64, 0, 1, 0];
    let neg = [NEG | 1, NEG, NEG, NEG | 1];
    // MAX · 2: RN/RP → +Inf, RZ/RM → MAX; negated: RN/RM → -Inf, RZ/RP → -MAX.
    let max = 0x7FEF_FFFF_FFFF_FFFFu64;
    let inf = 0x7FF0_0000_0000_0000u64;
    let opos = [inf, max, inf, max];
    let oneg = [NEG | inf, NEG | max, NEG | max, NEG | inf];
    for (i, m) in RND.iter().enumerate() {
        dd(r, &format!("DMUL{} R[4:5], R[4:5], 0.75 ;", m), 1, 0, 0, &[], pos[i]);
        dd(r, &format!("DMUL{} R[4:5], R[4:5], -0.75 ;", m), 1, 0, 0, &[], neg[i]);
        dd(r, &format!("DMUL{} R[4:5], R[4:5], 2.0 ;", m), max, 0, 0, &[], opos[i]);
        dd(r, &format!("DMUL{} R[4:5], -R[4:5], 2.0 ;", m), max, 0, 0, &[], oneg[i]);
    }
}

fn dfma(r: &mut Runner) {
    // (1 + 3·2^-52) · 1.25 + 1 = 2.25 + 1.875 ulp (ulp 2^-51): RN/RP → +2,
    // RZ/RM → +1; the negated sum rounds the other way for RP/RM.
    let (b, c) = (f64b(1.25), f64b(1.0));
    let base = f64b(2.25);
    let pos = [base + 2, base + 1, base + 2, base + 1];
    let neg = [NEG | (base + 2), NEG | (base + 1), NEG | (base + 1), NEG | (base + 2)];
    let cb = [lo(b), hi(b)];
    let cc = [lo(c), hi(c)];
    for (i, m) in RND.iter().enumerate() {
        // RRR, RRI, RIR, RRU, RUR, RRC, RCR.
        dd(r, &format!("DFMA{} R[4:5], R[4:5], R[6:7], R[8:9] ;", m), ONE_3, b, c, &[], pos[i]);
        dd(r, &format!("DFMA{} R[4:5], -R[4:5], R[6:7], -R[8:9] ;", m), ONE_3, b, c, &[], neg[i]);
        dd(r, &format!("DFMA{} R[4:5], R[4:5], R[6:7], 1 ;", m), ONE_3, b, 0, &[], pos[i]);
        dd(r, &format!("DFMA{} R[4:5], R[4:5], -R[6:7], -1 ;", m), ONE_3, b, 0, &[], neg[i]);
        dd(r, &format!("DFMA{} R[4:5], R[4:5], 1.25, R[8:9] ;", m), ONE_3, 0, c, &[], pos[i]);
        dd(r, &format!("DFMA{} R[4:5], -R[4:5], 1.25, -R[8:9] ;", m), ONE_3, 0, c, &[], neg[i]);
        dd(r, &format!("{}DFMA{} R[4:5], R[4:5], R[6:7], UR[8:9] ;", UR89, m), ONE_3, b, c, &[], pos[i]);
        dd(r, &format!("{}DFMA{} R[4:5], R[4:5], R[6:7], -|UR[8:9]| ;", UR89, m), NEG | ONE_3, b, c, &[], neg[i]);
        dd(r, &format!("{}DFMA{} R[4:5], R[4:5], UR[6:7], R[8:9] ;", UR67, m), ONE_3, b, c, &[], pos[i]);
        dd(r, &format!("{}DFMA{} R[4:5], -|R[4:5]|, UR[6:7], -R[8:9] ;", UR67, m), NEG | ONE_3, b, c, &[], neg[i]);
        dd(r, &format!("DFMA{} R[4:5], R[4:5], R[6:7], c[0x1][0x0] ;", m), ONE_3, b, 0, &cc, pos[i]);
        dd(r, &format!("DFMA{} R[4:5], R[4:5], -R[6:7], -c[0x1][0x0] ;", m), ONE_3, b, 0, &cc, neg[i]);
        dd(r, &format!("DFMA{} R[4:5], R[4:5], c[0x1][0x0], R[8:9] ;", m), ONE_3, 0, c, &cb, pos[i]);
        dd(r, &format!("DFMA{} R[4:5], R[4:5], -c[0x1][0x0], -R[8:9] ;", m), ONE_3, 0, c, &cb, neg[i]);
    }
    // Fused: (1 + 3·2^-52)·1.25 - 1.25 = 3.75·2^-52 exactly (an unfused
    // product would round to 1.25 + 4 ulp first and give 4·2^-52).
    dd(r, "DFMA R[4:5], R[4:5], R[6:7], -R[8:9] ;", ONE_3, b, b, &[], 0x3CCE_0000_0000_0000);
    // NaN priority SrcB, SrcC, Ra (003:317, E17), through a constant and an immediate.
    dd(r, "DFMA R[4:5], R[4:5], R[6:7], c[0x1][0x0] ;", 0x7FF0_0000_0000_0001, c, 0, &[2, 0xFFF0_0000], 0xFFF8_0000_0000_0002);
    dd(r, "DFMA R[4:5], R[4:5], 0x7ff00003, R[8:9] ;", 0x7FF0_0000_0000_0001, 0, 0x7FF0_0000_0000_0002, &[], 0x7FF8_0003_0000_0000);
}

fn dmnmx(r: &mut Runner) {
    // pp true → min (E38); one NaN → the other operand after its modifiers;
    // two NaNs → SrcB made quiet (E39); +0 > -0.
    let qnan = 0x7FF8_0000_0000_0005u64;
    let (two, one) = (f64b(2.0), f64b(1.0));
    dd(r, "DMNMX R[4:5], R[4:5], R[6:7], PT ;", qnan, two, 0, &[], two);
    dd(r, "DMNMX R[4:5], R[4:5], R[6:7], PT ;", NEG, 0, 0, &[], NEG);
    dd(r, "DMNMX R[4:5], R[4:5], R[6:7], !PT ;", NEG, 0, 0, &[], 0);
    dd(r, "DMNMX R[4:5], R[4:5], R[6:7], PT ;", qnan, 0xFFF0_0000_0000_0002, 0, &[], 0xFFF8_0000_0000_0002);
    // RU.
    dd(r, &format!("{}DMNMX R[4:5], -R[4:5], UR[6:7], !PT ;", UR67), one, qnan, 0, &[], NEG | one);
    dd(r, &format!("{}DMNMX R[4:5], R[4:5], -UR[6:7], !PT ;", UR67), qnan, 0x7FF0_0000_0000_0009, 0, &[], 0xFFF8_0000_0000_0009);
    // RI: the immediate 0x7ff00001 is the signalling NaN 0x7FF00001_00000000.
    dd(r, "DMNMX R[4:5], R[4:5], 0x7ff00001, PT ;", qnan, 0, 0, &[], 0x7FF8_0001_0000_0000);
    dd(r, "DMNMX R[4:5], R[4:5], 0x7ff00001, PT ;", f64b(3.0), 0, 0, &[], f64b(3.0));
    dd(r, "DMNMX R[4:5], R[4:5], -2.0, !PT ;", f64b(-3.0), 0, 0, &[], f64b(-2.0));
    // RC.
    let c7 = [lo(f64b(7.0)), hi(f64b(7.0))];
    dd(r, "DMNMX R[4:5], |R[4:5]|, -c[0x1][0x0], !PT ;", f64b(-5.0), 0, 0, &c7, f64b(5.0));
    dd(r, "DMNMX R[4:5], |R[4:5]|, -c[0x1][0x0], PT ;", NEG, 0, 0, &[0, 0], NEG);
    dd(r, "DMNMX R[4:5], |R[4:5]|, -c[0x1][0x0], !PT ;", NEG, 0, 0, &[0, 0], 0);
    dd(r, "DMNMX R[4:5], R[4:5], c[0x1][0x0], !PT ;", f64b(-1.0), 0, 0, &[0, 0x7FF8_0000], f64b(-1.0));
}

fn dsetp(r: &mut Runner) {
    // Ordered compares are false with a NaN, unordered true; NAN / NUM; ±0
    // equal (E49); pu = t op pp, pv = !t op pp.
    let nan = 0x7FF8_0000_0000_0000u64;
    let p = |r: &mut Runner, body: &str, a: u64, b: u64, consts: &[u32], want: u32| {
        r.tc(&format!("{}\n    P2R R4, PR, RZ, 0x3 ;", body), &[lo(a), hi(a), lo(b), hi(b)], consts, &[want]);
    };
    let (one, two) = (f64b(1.0), f64b(2.0));
    // RR.
    p(r, "DSETP.LE.AND P0, P1, R[4:5], R[6:7], PT ;", nan, one, &[], 0b10);
    p(r, "DSETP.LEU.AND P0, P1, R[4:5], R[6:7], PT ;", nan, one, &[], 0b01);
    p(r, "DSETP.EQ.AND P0, P1, R[4:5], R[6:7], PT ;", 0, NEG, &[], 0b01);
    // RU.
    p(r, &format!("{}DSETP.LTU.OR P0, P1, R[4:5], UR[6:7], !PT ;", UR67), two, nan, &[], 0b01);
    p(r, &format!("{}DSETP.LTU.OR P0, P1, R[4:5], UR[6:7], !PT ;", UR67), two, one, &[], 0b10);
    p(r, &format!("{}DSETP.NE.AND P0, P1, R[4:5], -UR[6:7], PT ;", UR67), NEG, 0, &[], 0b10);
    // RI: -0 as raw high word 0x80000000; a NaN immediate.
    p(r, "DSETP.EQ.XOR P0, P1, R[4:5], 0x80000000, PT ;", 0, 0, &[], 0b10);
    p(r, "DSETP.NUM.AND P0, P1, R[4:5], 0x7ff80000, PT ;", one, 0, &[], 0b10);
    p(r, "DSETP.NAN.AND P0, P1, R[4:5], 0x7ff80000, PT ;", one, 0, &[], 0b01);
    p(r, "DSETP.GT P0, P1, R[4:5], -1 ;", 0, 0, &[], 0b01);
    // RC: modifiers on Ra; the default .AND with pp = PT.
    p(r, "DSETP.GEU P0, P1, -|R[4:5]|, c[0x1][0x0] ;", one, 0, &[lo(f64b(-1.0)), hi(f64b(-1.0))], 0b01);
    p(r, "DSETP.GT P0, P1, -|R[4:5]|, c[0x1][0x0] ;", one, 0, &[lo(f64b(-1.0)), hi(f64b(-1.0))], 0b10);
    p(r, "DSETP.NE P0, P1, R[4:5], c[0x1][0x0] ;", one, 0, &[0, 0x7FF8_0000], 0b10);
    p(r, "DSETP.NEU P0, P1, R[4:5], c[0x1][0x0] ;", one, 0, &[0, 0x7FF8_0000], 0b01);
}

// ---- running the families and the coverage check --------------------------

macro_rules! families {
    ($($f:ident),* $(,)?) => {
        $(
            #[test]
            fn $f() {
                super::$f(&mut super::Runner::default());
            }
        )*
        pub const ALL: &[(&str, fn(&mut super::Runner))] = &[$((stringify!($f), super::$f)),*];
    };
}

mod family {
    families!(
        iadd,
        imad,
        imad_wide,
        idp2a,
        idp4a,
        imul,
        lea,
        iabs,
        imnmx,
        p2r,
        r2p,
        isetp,
        iset,
        sel,
        lop3,
        plop3,
        shf,
        mov,
        prmt,
        i2i,
        i2ip,
        r2ur_setgpr_getgpr,
        uldc,
        uiadd,
        uimad,
        uimad_wide,
        uimul,
        ulea,
        uiabs_uimnmx,
        up2ur_ur2up,
        uisetp_usel,
        ulop3_uplop3,
        ushf,
        umov_uprmt,
        ubits,
        setugpr_getugpr,
        mufu_f32,
        mufu_modifiers_sat_f64_f16,
        popc_flo_brev,
        bmsk_sgxt,
        dadd,
        dmul,
        dmul_subnormal_and_overflow,
        dfma,
        dmnmx,
        dsetp,
    );
}

/// Vendor forms that cannot be executed, with the reason.
const EXCLUDED: &[(&str, &str)] = &[
    (
        "UF2FP_UUU",
        "UF2FP has no syntax and no semantics (E74): it cannot be assembled, and executing its encoding traps with SemanticsNotDefined",
    ),
    (
        "UF2FP_UCU",
        "UF2FP has no syntax and no semantics (E74): it cannot be assembled, and executing its encoding traps with SemanticsNotDefined",
    ),
];

#[test]
fn every_vendor_form_is_executed() {
    let mut r = Runner::default();
    for (_, f) in family::ALL {
        f(&mut r);
    }
    let vendor: Vec<&str> = ursa_emit::ISA
        .forms
        .iter()
        .filter(|f| ["udp.isa", "ialu.isa", "xu.isa", "dalu.isa"].iter().any(|n| f.file.ends_with(n)))
        .map(|f| f.name.as_ref())
        .collect();
    assert_eq!(vendor.len(), 222, "the vendor documents define 222 opcode forms");
    for (x, _) in EXCLUDED {
        assert!(vendor.contains(x), "excluded form {} is not a vendor form", x);
        assert!(!r.forms.contains(*x), "excluded form {} was executed; remove it from EXCLUDED", x);
    }
    let missing: Vec<&str> = vendor.iter().copied().filter(|f| !r.forms.contains(*f) && !EXCLUDED.iter().any(|(x, _)| x == f)).collect();
    assert!(missing.is_empty(), "{} vendor forms are never executed: {}", missing.len(), missing.join(" "));
}

#[test]
fn uf2fp_traps_as_not_defined() {
    // The excluded forms: their encodings load, and executing either is a
    // SemanticsNotDefined trap (E74).
    let op = ursa_emit::ISA.optypes.iter().find(|o| o.name == "UF2FP").expect("UF2FP optype");
    assert_eq!(op.forms.len(), EXCLUDED.len());
    for &fi in op.forms.iter() {
        let form = ursa_emit::FormId(fi);
        let mut obj = ursa_emit::asm::assemble(".func f\n    NOP ;\n    RET R[20:21] ;\n", "t.s").unwrap();
        obj.functions[0].code[..16].copy_from_slice(&ursa_emit::Inst::new(form).encode_unchecked().to_le_bytes());
        let prog = ursa_sim::Program::load(&ursa_emit::elf::write(&obj)).expect("load");
        let t = Gpu::new().call(&prog, "f", &[], 0).expect_err("UF2FP must trap");
        assert_eq!(t.kind, ursa_sim::TrapKind::SemanticsNotDefined("UF2FP"), "{}", form.name());
    }
}
