//! Precise-output tests of the compiler's middle layer, in the spirit of
//! Cranelift's `precise-output` filetests: every function of
//! `tests/precise/*.clif` is compiled (kernels: files whose functions take no
//! results, with `--kernel`) and its code printed after `lower_bundles` (virtual
//! registers, what the allocator sees) and after `calc_instr_deps` (final); the text
//! must equal `tests/precise/NAME.out`. Each file is compiled as one module
//! (device functions get convergence barriers, as with `ursa compile`). A line
//! `; print-after: PASS…` in the file names other passes to print instead (to
//! show one pass at work: the pass before it and the pass itself); a line
//! `; opt-level: none` compiles it without the mid-end (default `speed`); a
//! line `; data: NAME SPACE SIZE, …` (SPACE `global` or `constant`) lays out
//! data objects as `UrsaModule` does, for `symbol_value` of `%NAME`.
//! `URSA_BLESS=1` rewrites the `.out` files instead (review the diff before
//! committing).

use std::path::PathBuf;

use ursa_backend::{compile, OptLevel, Options, Pass};

fn render(path: &std::path::Path) -> String {
    let text = std::fs::read_to_string(path).unwrap();
    let funcs = cranelift_reader::parse_functions(&text).unwrap_or_else(|e| panic!("{}: {}", path.display(), e));
    let mut out = String::new();
    let passes: Vec<Pass> = match text.lines().find_map(|l| l.strip_prefix("; print-after:")) {
        Some(list) => {
            list.split_whitespace().map(|p| Pass::from_name(p).unwrap_or_else(|| panic!("{}: no pass {}", path.display(), p))).collect()
        }
        None => vec![Pass::lower_bundles, Pass::calc_instr_deps],
    };
    let opt_level = match text.lines().find_map(|l| l.strip_prefix("; opt-level:")) {
        Some(l) => OptLevel::from_name(l.trim()).unwrap_or_else(|| panic!("{}: no opt level {}", path.display(), l)),
        None => OptLevel::default(),
    };
    let data = match text.lines().find_map(|l| l.strip_prefix("; data:")) {
        Some(list) => data_layout(list).unwrap_or_else(|| panic!("{}: bad `; data:` line", path.display())),
        None => Default::default(),
    };
    // The whole file is one module, as `ursa compile` sees it.
    let kernels: Vec<bool> = funcs.iter().map(|f| f.signature.returns.is_empty()).collect();
    let base = Options {
        check_regalloc: true,
        print_after: passes.clone(),
        shared: ursa_backend::module::shared_mem::parse(&text).unwrap_or_else(|e| panic!("{}: {}", path.display(), e)),
        opt_level,
        data,
        ..Default::default()
    }
    .for_module(&funcs, &kernels);
    for f in &funcs {
        let opts = Options { kernel: f.signature.returns.is_empty(), ..base.clone() };
        let c = compile(f, &opts).unwrap_or_else(|e| panic!("{}: {}: {}", path.display(), f.name, e));
        out.push_str(&c.printed);
    }
    out
}

/// The layout of the data objects of a `; data:` line (`NAME SPACE SIZE`,
/// comma-separated), as `UrsaModule::finish` makes it.
fn data_layout(list: &str) -> Option<ursa_backend::DataLayout> {
    use ursa_emit::elf::{layout_data, DataObject, DataSpace};
    let mut objs = Vec::new();
    for item in list.split(',') {
        let w: Vec<&str> = item.split_whitespace().collect();
        let [name, space, size] = w[..] else { return None };
        let space = match space {
            "global" => DataSpace::Global,
            "constant" => DataSpace::Constant,
            _ => return None,
        };
        let init = (space == DataSpace::Constant).then(Vec::new);
        objs.push(DataObject { name: name.into(), space, size: size.parse().ok()?, align: 8, init, ..Default::default() });
    }
    layout_data(&mut objs).ok()?;
    Some(ursa_backend::DataLayout {
        slots: objs.iter().enumerate().map(|(k, d)| (d.name.clone(), 8 * k as u32)).collect(),
        constants: objs.iter().filter(|d| d.space == DataSpace::Constant).map(|d| (d.name.clone(), d.offset)).collect(),
    })
}

#[test]
fn precise_output() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("precise");
    let bless = std::env::var_os("URSA_BLESS").is_some();
    let mut files: Vec<PathBuf> =
        std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()).filter(|p| p.extension().is_some_and(|x| x == "clif")).collect();
    files.sort();
    assert!(!files.is_empty());
    let mut failed = Vec::new();
    for clif in files {
        let got = render(&clif);
        let want_path = clif.with_extension("out");
        if bless {
            std::fs::write(&want_path, &got).unwrap();
            continue;
        }
        let want = std::fs::read_to_string(&want_path).unwrap_or_default();
        if got != want {
            let first = got.lines().zip(want.lines()).position(|(a, b)| a != b).unwrap_or(got.lines().count().min(want.lines().count()));
            failed.push(format!(
                "{}: output differs from {} at line {}:\n  got:  {}\n  want: {}",
                clif.display(),
                want_path.display(),
                first + 1,
                got.lines().nth(first).unwrap_or("<end>"),
                want.lines().nth(first).unwrap_or("<end>")
            ));
        }
    }
    assert!(failed.is_empty(), "{}\n(URSA_BLESS=1 regenerates the expected output)", failed.join("\n"));
}
