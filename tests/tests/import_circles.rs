//! No import circles between the files of the compiler's passes or of the
//! simulator (`docs/architecture.md`, "Layout"): a shared type lives in a
//! module below the passes that use it, never in one of them.

use std::path::Path;

fn assert_no_circles(krate: &str) {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(krate).join("src");
    let circles = ursa_tests::imports::circles(&src).unwrap_or_else(|e| panic!("reading {}: {}", src.display(), e));
    assert!(circles.is_empty(), "import circles in {}:\n{}", krate, circles.join("\n"));
}

#[test]
fn backend_has_no_import_circles() {
    assert_no_circles("backend");
}

#[test]
fn simulator_has_no_import_circles() {
    assert_no_circles("runtime-sim");
}
