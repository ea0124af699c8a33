//! Every `__Examples` line of the descriptions assembles and round-trips
//! asm -> bytes -> disasm -> asm -> identical bytes, except the lines the
//! errata list as invalid (docs/spec-errata.md, section "Invalid examples").

use ursa_emit::asm::{assemble, disassemble};
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
        // Valid lines are assembled together, so examples may use labels.
        let mut block = String::new();
        for (ex, line) in ot.examples.iter() {
            let text = ex.trim_end_matches(';').trim();
            count += 1;
            if INVALID.iter().any(|(o, t)| *o == &*ot.name && *t == text) {
                if parse_inst(text, 1, None, &NoLabels)
                    .and_then(|i| i.encode().map_err(|e| ursa_emit::TextError { col: 0, msg: e.to_string() }))
                    .is_ok()
                {
                    failures.push(format!("{}:{}: `{}` is listed invalid but assembles", ot.file, line, text));
                }
                continue;
            }
            block.push_str(&format!("{} // {}:{}\n", ex, ot.file, line));
        }
        if block.is_empty() {
            continue;
        }
        let r = (|| -> Result<(), String> {
            let obj = assemble(&block, &format!("{}-examples", ot.name)).map_err(|e| {
                let src = block.lines().nth(e.line - 1).unwrap_or("");
                format!("`{}`: col {}: {}", src, e.col, e.msg)
            })?;
            let text = disassemble(&obj).map_err(|e| e.to_string())?;
            let again = assemble(&text, "reassembled").map_err(|e| format!("reassembling:\n{}\n{}", text, e))?;
            if again != obj {
                return Err(format!("disassembly reassembles to other bytes:\n{}", text));
            }
            for f in &obj.functions {
                for chunk in f.code.chunks(16) {
                    let inst = Inst::decode(chunk.try_into().unwrap()).map_err(|e| e.to_string())?;
                    let one = format_inst(&inst, None, &NoLabels).map_err(|e| e.to_string())?;
                    let _ = one;
                }
            }
            Ok(())
        })();
        if let Err(e) = r {
            failures.push(format!("{} examples: {}", ot.name, e));
        }
    }
    assert!(count > 100, "only {} examples found", count);
    assert!(failures.is_empty(), "{} failures among {} examples:\n{}", failures.len(), count, failures.join("\n"));
}
