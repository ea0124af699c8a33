//! The latency classes declared in the description (`__DefLatency` in
//! emit/spec/project.isa): the checks `Isa::build` makes on them, run on the
//! real description files with one declaration changed.

use std::path::{Path, PathBuf};

use ursa_emit::dsl::{self, SpecFile};
use ursa_emit::model::Isa;

fn spec_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            spec_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "isa") {
            out.push(p);
        }
    }
}

/// The description with `edit` applied to the text of project.isa.
fn build_with(edit: impl Fn(&str) -> String) -> Result<Isa, dsl::DslError> {
    let mut paths = Vec::new();
    spec_files(&Path::new(env!("CARGO_MANIFEST_DIR")).join("spec"), &mut paths);
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

#[test]
fn an_optype_in_no_class_is_an_error() {
    let e = build_with(|t| t.replace("variable\n    SHFL;\n", "variable\n")).unwrap_err();
    assert!(e.msg.contains("optype `SHFL` is in no latency class"), "{}", e);
}

#[test]
fn an_optype_in_two_classes_is_an_error() {
    let e = build_with(|t| t.replace("variable\n    SHFL;\n", "variable\n    SHFL;\n    LDC;\n")).unwrap_err();
    assert!(e.msg.contains("optype `LDC` is already in latency class `ConstMem`"), "{}", e);
    assert_eq!(e.loc.file, "project.isa");
}

#[test]
fn an_unknown_optype_is_an_error() {
    let e = build_with(|t| t.replace("variable\n    SHFL;\n", "variable\n    SHFL;\n    SHFLX;\n")).unwrap_err();
    assert!(e.msg.contains("lists `SHFLX`, which is not an optype"), "{}", e);
}

#[test]
fn a_class_that_disagrees_with_wsb_is_an_error() {
    let e = build_with(|t| t.replace("__DefLatency Shuffle<12> variable", "__DefLatency Shuffle<12> fixed")).unwrap_err();
    assert!(e.msg.contains("optype `SHFL` is in the fixed latency class `Shuffle`") && e.msg.contains("has `$wsb`"), "{}", e);
}

#[test]
fn a_class_defined_twice_is_an_error() {
    let e = build_with(|t| t.replace("__DefLatency Shuffle<12> variable\n    SHFL;", "__DefLatency Shuffle<12> variable\n    SHFL;\n__DefLatency Shuffle<3> fixed\n")).unwrap_err();
    assert!(e.msg.contains("latency class `Shuffle` is already defined"), "{}", e);
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
