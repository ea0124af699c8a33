//! The latency classes declared in the description (`__DefLatency` in
//! emit/spec/project.isa): the checks `Isa::build` makes on them, run on the
//! real description files with one declaration changed.

use std::path::Path;

use ursa_emit::dsl::{self, SpecFile};
use ursa_emit::model::Isa;

/// The description with `edit` applied to the text of project.isa.
fn build_with(edit: impl Fn(&str) -> String) -> Result<Isa, dsl::DslError> {
    let paths = dsl::description_files(&Path::new(env!("CARGO_MANIFEST_DIR")).join("spec")).unwrap();
    let files: Vec<SpecFile> = paths
        .iter()
        .map(|p| {
            let text = std::fs::read_to_string(p).unwrap();
            let name = p.file_name().unwrap().to_string_lossy().to_string();
            let text = if name == "project.isa" { edit(&text) } else { text };
            dsl::parse_file(&name, &text).unwrap()
        })
        .collect();
    Isa::build(&files)
}

#[test]
fn the_description_builds_and_every_optype_has_its_class() {
    let isa = build_with(|t| t.to_string()).unwrap();
    assert_eq!(isa.latencies.len(), ursa_emit::ISA.latencies.len());
    for (a, b) in isa.optypes.iter().zip(ursa_emit::ISA.optypes.iter()) {
        assert_eq!(isa.latencies[a.latency as usize].name, ursa_emit::ISA.latencies[b.latency as usize].name);
    }
}

/// Each broken edit of the latency classes of project.isa, and the message.
#[test]
fn broken_classes_are_errors_naming_the_place() {
    let shuffle = "__DefLatency Shuffle<12> variable\n    SHFL;\n";
    for (edited, want) in [
        ("__DefLatency Shuffle<12> variable\n", "optype `SHFL` is in no latency class"),
        ("__DefLatency Shuffle<12> variable\n    SHFL;\n    LDC;\n", "optype `LDC` is already in latency class `ConstMem`"),
        ("__DefLatency Shuffle<12> variable\n    SHFL;\n    SHFLX;\n", "lists `SHFLX`, which is not an optype"),
        (
            "__DefLatency Shuffle<12> fixed\n    SHFL;\n",
            "optype `SHFL` is in the fixed latency class `Shuffle`, but a syntax line of form `SHFL_",
        ),
        ("__DefLatency Shuffle<12> variable\n    SHFL;\n__DefLatency Shuffle<3> fixed\n", "latency class `Shuffle` is already defined"),
    ] {
        let e = build_with(|t| {
            assert!(t.contains(shuffle));
            t.replace(shuffle, edited)
        })
        .unwrap_err();
        assert!(e.msg.contains(want), "{:?}: {}", edited, e);
        assert!(e.loc.line > 0, "{}", e);
    }
}

#[test]
fn malformed_declarations_name_their_line() {
    for (text, want) in [
        ("__DefLatency Alu<4>\n    IADD;\n", "expected `fixed` or `variable`"),
        ("__DefLatency Alu<0> fixed\n", "not in 1..=65535"),
        ("__DefLatency Alu 4 fixed\n", "expected `Name<cycles> fixed|variable`"),
        ("__DefLatency Alu<4> fixed\n    IADD\n", "expected `;`"),
        ("__DefLatency Alu<4> fixed\n    I-ADD;\n", "bad optype name"),
    ] {
        let e = dsl::parse_file("l.isa", text).unwrap_err();
        assert!(e.msg.contains(want), "{:?}: {}", text, e);
        assert!(e.loc.line >= 1 && e.loc.line <= 2);
    }
    let f = dsl::parse_file("l.isa", "__DefLatency Mem<200> variable\n    LDG; // global\n\n    LD;\n").unwrap();
    assert_eq!(f.latencies[0].name, "Mem");
    assert_eq!(f.latencies[0].cycles, 200);
    assert!(f.latencies[0].variable);
    assert_eq!(f.latencies[0].optypes.iter().map(|o| o.0.as_str()).collect::<Vec<_>>(), ["LDG", "LD"]);
}
