//! Every `__Examples` line of the descriptions assembles and round-trips
//! asm -> bytes -> disasm -> asm -> identical bytes, except the lines the
//! errata list as invalid (docs/spec-errata.md, section "Invalid examples").

use ursa_emit::{format_inst, parse_inst, Inst, NoLabels, ISA};

/// Example lines the errata declare invalid, as (optype, text).
const INVALID: &[(&str, &str)] = &[
    ("DMNMX", "DMNMX R[0:1], -|R[2:3]|, -|R2|, !PT"),
    ("IADD", "IADD.X R0, P0, R2, -R4"),
    ("IMAD", "IMAD.U32      R0, P0, R2, 0x114514, R4,"),
    ("LEA", "LEA R0, R1, 0x10, R3"),
    ("LEA", "LEA      R0, P0, R2, c[0x0][0x160], R7, RZ"),
    ("LEA", "LEA.HI.X R1,     R2, c[0x0][0x160], R7, RZ, P0"),
    ("LEA", "LEA           R0, P0, -R2, R3, R4"),
    ("LEA", "LEA.HI.X.SX32 R1,     ~R2, R3, R5, P0"),
    ("UIMAD", "UIMAD.U32      UR0, UP0, UR2, 0x114514, UR4,"),
    ("UIMAD", "UIMAD      UR0, P0, UR2, UR3, -UR4"),
    ("ULEA", "ULEA UR0, UR1, 0x10, UR3"),
    ("ULEA", "ULEA      UR0, UP0, UR2, cmem[0x0][0x160], UR7, URZ"),
    ("ULEA", "ULEA.HI.X UR1,      UR2, cmem[0x0][0x160], UR7, URZ, UP0"),
    ("ULEA", "ULEA           UR0, UP0, -UR2, UR3, UR4"),
    ("ULEA", "ULEA.HI.X.SX32 UR1,      ~UR2, UR3, UR5, UP0"),
];

#[test]
fn every_example_round_trips() {
    let mut failures = Vec::new();
    let mut count = 0;
    for ot in ISA.optypes.iter() {
        for (ex, line) in ot.examples.iter() {
            let text = ex.trim_end_matches(';').trim();
            let invalid = INVALID.iter().any(|(o, t)| *o == &*ot.name && *t == text);
            count += 1;
            let r = (|| -> Result<(), String> {
                let inst = parse_inst(text, 1, None, &NoLabels).map_err(|e| format!("col {}: {}", e.col, e.msg))?;
                let bytes = inst.encode().map_err(|e| e.to_string())?;
                let back = Inst::decode(&bytes).map_err(|e| format!("decode: {}", e))?;
                let printed = format_inst(&back, None, &NoLabels).map_err(|e| e.to_string())?;
                let again = parse_inst(&printed, 1, None, &NoLabels).map_err(|e| format!("reassembling `{}`: col {}: {}", printed, e.col, e.msg))?;
                let bytes2 = again.encode().map_err(|e| e.to_string())?;
                if bytes != bytes2 {
                    return Err(format!("`{}` reassembles to other bytes", printed));
                }
                Ok(())
            })();
            match (r, invalid) {
                (Ok(()), false) | (Err(_), true) => {}
                (Ok(()), true) => failures.push(format!("{}:{}: `{}` is listed invalid but assembles", ot.file, line, text)),
                (Err(e), false) => failures.push(format!("{}:{}: `{}`: {}", ot.file, line, text, e)),
            }
        }
    }
    assert!(count > 100, "only {} examples found", count);
    assert!(failures.is_empty(), "{} of {} examples fail:\n{}", failures.len(), count, failures.join("\n"));
}
