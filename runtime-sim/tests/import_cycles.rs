//! No import circles among the simulator's modules: every `src/` file names
//! only modules below it, so that each can be read (and changed) without the
//! ones that use it.

mod module_graph;

use std::path::Path;

#[test]
fn no_import_circles_in_src() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let graph = module_graph::read(&src).unwrap_or_else(|e| panic!("reading {}: {}", src.display(), e));
    let cycles = graph.cycles();
    // The graph, for `cargo test --test import_cycles -- --nocapture`.
    println!("{}", graph.listing());
    assert!(cycles.is_empty(), "import circles in {}:\n{:#?}\nmodule graph:\n{}", src.display(), cycles, graph.listing());
}

/// The reader finds a circle it is shown, through `super::`, an inline path
/// and a grouped `use`, and skips comments, strings and test modules.
#[test]
fn the_reader_sees_circles_and_skips_tests_and_comments() {
    let dir = std::env::temp_dir().join(format!("ursa-sim-module-graph-{}", std::process::id()));
    let write = |name: &str, text: &str| {
        let p = dir.join(name);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    };
    write("lib.rs", "mod a;\nmod b;\nmod c;\nmod d;\npub use a::Thing;\n");
    write("a.rs", "use crate::{b::B, c};\npub struct Thing;\n");
    write("b.rs", "pub struct B;\nfn f() -> crate::Thing { crate::a::Thing }\n");
    write(
        "c.rs",
        "// use crate::d;\nconst S: &str = \"crate::d::X\";\n#[cfg(test)]\nmod tests {\n    use super::*;\n    use crate::d;\n}\n",
    );
    write("d.rs", "use crate::c;\n");
    write("d/e.rs", "pub fn g() { super::super::a::Thing; }\n");
    let graph = module_graph::read(&dir).unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(graph.cycles(), vec![vec!["a".to_string(), "b".to_string()]], "{}", graph.listing());
    assert_eq!(graph.listing(), "a -> b, c\nb -> a\nc -> \ncrate -> \nd -> c\nd::e -> a\n");
}
