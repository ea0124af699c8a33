//! The module graph of a crate, read from its `src/` files: which module
//! names which other module through a `crate::`, `super::` or `self::` path
//! (in a `use` or inline), and the import circles in that graph.
//!
//! Self-contained (std only) so that any crate's tests can include it with
//! `#[path = ".../module_graph/mod.rs"] mod module_graph;`. It is a reader
//! of well-formatted Rust, not a parser: it skips comments, string literals
//! and inline `#[cfg(test)] mod … { … }` blocks (whose `super::` means the
//! file itself), and it resolves a name the crate root or a `mod.rs`
//! re-exports (`pub use child::Name`) to the module that defines it. The
//! crate root (`lib.rs`/`main.rs`) is the façade and has no edges.
#![allow(dead_code)]

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

/// A module path from the crate root, e.g. `["jit", "translate"]`; the root is `[]`.
pub type ModPath = Vec<String>;

/// Modules of a crate with the modules each one names.
pub struct Graph {
    /// module → modules it refers to (itself and the root excluded)
    pub edges: BTreeMap<String, BTreeSet<String>>,
}

/// Reads every `.rs` file under `src` and builds the graph.
pub fn read(src: &Path) -> Result<Graph, String> {
    let mut files = Vec::new();
    collect(src, &mut files)?;
    let mut modules: BTreeMap<ModPath, String> = BTreeMap::new();
    for f in &files {
        let text = fs::read_to_string(f).map_err(|e| format!("{}: {}", f.display(), e))?;
        modules.insert(mod_path(src, f), strip(&text));
    }
    // Names re-exported by a module: `pub use a::b::{X, Y}` maps X, Y to the module path a::b.
    let mut reexports: BTreeMap<ModPath, BTreeMap<String, ModPath>> = BTreeMap::new();
    for (m, text) in &modules {
        let mut map = BTreeMap::new();
        for (vis, path) in use_paths(text) {
            if vis {
                let (last, prefix) = path.split_last().expect("use paths are non-empty");
                let from = absolute(m, prefix, &modules);
                if let Some(from) = from {
                    map.insert(last.clone(), from);
                }
            }
        }
        reexports.insert(m.clone(), map);
    }
    let mut edges = BTreeMap::new();
    for (m, text) in &modules {
        let mut to = BTreeSet::new();
        if !m.is_empty() {
            for path in all_paths(text, &child_modules(m, &modules)) {
                if let Some(target) = resolve(m, &path, &modules, &reexports) {
                    if &target != m && !target.is_empty() {
                        to.insert(target.join("::"));
                    }
                }
            }
        }
        edges.insert(name(m), to);
    }
    Ok(Graph { edges })
}

impl Graph {
    /// Strongly connected components with more than one module, each sorted.
    pub fn cycles(&self) -> Vec<Vec<String>> {
        // Tarjan's algorithm, iteratively small enough to write recursively here.
        struct St<'a> {
            g: &'a BTreeMap<String, BTreeSet<String>>,
            index: BTreeMap<&'a str, usize>,
            low: BTreeMap<&'a str, usize>,
            stack: Vec<&'a str>,
            on: BTreeSet<&'a str>,
            out: Vec<Vec<String>>,
        }
        fn visit<'a>(s: &mut St<'a>, v: &'a str) {
            let i = s.index.len();
            s.index.insert(v, i);
            s.low.insert(v, i);
            s.stack.push(v);
            s.on.insert(v);
            let g = s.g;
            for w in g.get(v).into_iter().flatten() {
                let w = w.as_str();
                if !g.contains_key(w) {
                    continue;
                }
                if !s.index.contains_key(w) {
                    visit(s, w);
                    let lw = s.low[w];
                    let lv = s.low.get_mut(v).unwrap();
                    *lv = (*lv).min(lw);
                } else if s.on.contains(w) {
                    let iw = s.index[w];
                    let lv = s.low.get_mut(v).unwrap();
                    *lv = (*lv).min(iw);
                }
            }
            if s.low[v] == s.index[v] {
                let mut comp = Vec::new();
                loop {
                    let w = s.stack.pop().unwrap();
                    s.on.remove(w);
                    comp.push(w.to_string());
                    if w == v {
                        break;
                    }
                }
                if comp.len() > 1 {
                    comp.sort();
                    s.out.push(comp);
                }
            }
        }
        let mut s =
            St { g: &self.edges, index: BTreeMap::new(), low: BTreeMap::new(), stack: Vec::new(), on: BTreeSet::new(), out: Vec::new() };
        for v in self.edges.keys() {
            if !s.index.contains_key(v.as_str()) {
                visit(&mut s, v);
            }
        }
        s.out.sort();
        s.out
    }

    /// One line per module: `module -> a, b, c`.
    pub fn listing(&self) -> String {
        self.edges.iter().map(|(m, to)| format!("{} -> {}\n", m, to.iter().cloned().collect::<Vec<_>>().join(", "))).collect()
    }
}

fn collect(dir: &Path, out: &mut Vec<PathBuf>) -> Result<(), String> {
    let mut entries: Vec<_> =
        fs::read_dir(dir).map_err(|e| format!("{}: {}", dir.display(), e))?.filter_map(|e| e.ok()).map(|e| e.path()).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            collect(&p, out)?;
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
    Ok(())
}

fn mod_path(src: &Path, file: &Path) -> ModPath {
    let rel = file.strip_prefix(src).expect("file under src");
    let mut parts: Vec<String> = rel.iter().map(|c| c.to_string_lossy().into_owned()).collect();
    let last = parts.pop().expect("file name");
    let stem = last.trim_end_matches(".rs");
    if !matches!(stem, "mod" | "lib" | "main") {
        parts.push(stem.to_string());
    }
    parts
}

fn name(m: &ModPath) -> String {
    if m.is_empty() {
        "crate".to_string()
    } else {
        m.join("::")
    }
}

/// The source with comments and string/char literals blanked and inline
/// `#[cfg(test)] mod name { … }` blocks removed.
fn strip(text: &str) -> String {
    let b = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < b.len() {
        if text[i..].starts_with("//") {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
        } else if text[i..].starts_with("/*") {
            let end = text[i + 2..].find("*/").map_or(b.len(), |e| i + 2 + e + 2);
            i = end;
            out.push(' ');
        } else if b[i] == b'"' {
            i += 1;
            while i < b.len() && b[i] != b'"' {
                i += if b[i] == b'\\' { 2 } else { 1 };
            }
            i += 1;
            out.push_str("\"\"");
        } else if b[i] == b'\'' && is_char_literal(&b[i..]) {
            i += 1;
            while i < b.len() && b[i] != b'\'' {
                i += if b[i] == b'\\' { 2 } else { 1 };
            }
            i += 1;
            out.push_str("' '");
        } else {
            let c = text[i..].chars().next().unwrap();
            out.push(c);
            i += c.len_utf8();
        }
    }
    drop_test_modules(&out)
}

/// `'x'`, `'\n'`, `'\u{..}'` — as opposed to a lifetime `'a`.
fn is_char_literal(b: &[u8]) -> bool {
    match b.get(1) {
        Some(b'\\') => true,
        Some(_) => {
            let s = std::str::from_utf8(&b[1..b.len().min(6)]).unwrap_or("");
            s.chars().nth(1) == Some('\'')
        }
        None => false,
    }
}

fn drop_test_modules(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(at) = rest.find("#[cfg(test)]") {
        let after = &rest[at + "#[cfg(test)]".len()..];
        let item = after.trim_start();
        let open = item.find(['{', ';']);
        let is_inline_mod = item.starts_with("mod ") && open.is_some_and(|o| item.as_bytes()[o] == b'{');
        if !is_inline_mod {
            out.push_str(&rest[..at + "#[cfg(test)]".len()]);
            rest = after;
            continue;
        }
        out.push_str(&rest[..at]);
        let body = &item[open.unwrap()..];
        let mut depth = 0usize;
        let mut end = body.len();
        for (k, c) in body.char_indices() {
            match c {
                '{' => depth += 1,
                '}' => {
                    depth -= 1;
                    if depth == 0 {
                        end = k + 1;
                        break;
                    }
                }
                _ => {}
            }
        }
        rest = &body[end..];
    }
    out.push_str(rest);
    out
}

fn is_ident_byte(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_'
}

/// Reads `a::b::c` at `text[i..]`; returns the segments and the end offset.
fn read_path(text: &str, mut i: usize) -> (Vec<String>, usize) {
    let b = text.as_bytes();
    let mut segs = Vec::new();
    loop {
        let start = i;
        while i < b.len() && is_ident_byte(b[i]) {
            i += 1;
        }
        if i == start {
            break;
        }
        segs.push(text[start..i].to_string());
        let j = skip_ws(text, i);
        if text[j..].starts_with("::") {
            let k = skip_ws(text, j + 2);
            if k < b.len() && is_ident_byte(b[k]) {
                i = k;
                continue;
            }
            i = j;
        }
        break;
    }
    (segs, i)
}

fn skip_ws(text: &str, mut i: usize) -> usize {
    let b = text.as_bytes();
    while i < b.len() && b[i].is_ascii_whitespace() {
        i += 1;
    }
    i
}

/// Expands the use tree at `text[i..]` (after a `::`) under `prefix`.
fn expand_tree(text: &str, i: usize, prefix: &[String], out: &mut Vec<Vec<String>>) -> usize {
    let i = skip_ws(text, i);
    if text[i..].starts_with('{') {
        let mut i = i + 1;
        loop {
            i = skip_ws(text, i);
            if text[i..].starts_with('}') {
                return i + 1;
            }
            if text[i..].starts_with(',') {
                i += 1;
                continue;
            }
            let (segs, end) = read_path(text, i);
            let mut full = prefix.to_vec();
            full.extend(segs.iter().cloned());
            let j = skip_ws(text, end);
            if text[j..].starts_with("::") {
                i = expand_tree(text, j + 2, &full, out);
            } else {
                if !segs.is_empty() && segs != ["self"] {
                    out.push(full);
                } else if segs == ["self"] {
                    out.push(prefix.to_vec());
                }
                i = if end == i { end + 1 } else { end };
            }
        }
    }
    if text[i..].starts_with('*') {
        out.push(prefix.iter().cloned().chain(["*".to_string()]).collect());
        return i + 1;
    }
    let (segs, end) = read_path(text, i);
    let mut full = prefix.to_vec();
    full.extend(segs);
    let j = skip_ws(text, end);
    if text[j..].starts_with("::") {
        return expand_tree(text, j + 2, &full, out);
    }
    out.push(full);
    end
}

/// Paths in `use` items: (is `pub`/`pub(..)`, path), group trees expanded.
fn use_paths(text: &str) -> Vec<(bool, Vec<String>)> {
    let mut out = Vec::new();
    for (at, _) in text.match_indices("use ") {
        if at > 0 && is_ident_byte(text.as_bytes()[at - 1]) {
            continue;
        }
        let before = text[..at].trim_end();
        let public = before.ends_with("pub") || before.ends_with(')') && before.rfind("pub(").is_some_and(|p| !before[p..].contains('\n'));
        let mut paths = Vec::new();
        expand_tree(text, at + 4, &[], &mut paths);
        out.extend(paths.into_iter().filter(|p| !p.is_empty()).map(|p| (public, p)));
    }
    out
}

/// Every path that can name a module: inline and `use` paths starting with
/// `crate`, `super`, `self` or a child module declared in this file.
fn all_paths(text: &str, children: &BTreeSet<String>) -> Vec<Vec<String>> {
    let mut out: Vec<Vec<String>> = use_paths(text).into_iter().map(|(_, p)| p).collect();
    let b = text.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if is_ident_byte(b[i]) && (i == 0 || !is_ident_byte(b[i - 1])) {
            let preceded_by_colons = text[..i].trim_end().ends_with("::") || text[..i].trim_end().ends_with('$');
            let (segs, end) = read_path(text, i);
            let j = skip_ws(text, end);
            let root = segs[0].as_str();
            if !preceded_by_colons && (matches!(root, "crate" | "super" | "self") || children.contains(root)) {
                if text[j..].starts_with("::") {
                    let mut more = Vec::new();
                    expand_tree(text, j + 2, &segs, &mut more);
                    out.extend(more);
                } else if segs.len() > 1 {
                    out.push(segs);
                }
            }
            i = end.max(i + 1);
        } else {
            i += 1;
        }
    }
    out
}

fn child_modules(m: &ModPath, modules: &BTreeMap<ModPath, String>) -> BTreeSet<String> {
    modules.keys().filter(|k| k.len() == m.len() + 1 && k.starts_with(m)).map(|k| k.last().unwrap().clone()).collect()
}

/// The module path a use path's prefix names, if it is a module of this crate.
fn absolute(m: &ModPath, path: &[String], modules: &BTreeMap<ModPath, String>) -> Option<ModPath> {
    let mut cur: ModPath = match path.first().map(String::as_str) {
        Some("crate") => Vec::new(),
        Some("super") => m[..m.len().saturating_sub(1)].to_vec(),
        Some("self") => m.clone(),
        Some(first) if modules.contains_key(&[m.clone(), vec![first.to_string()]].concat()) => {
            let mut c = m.clone();
            c.push(first.to_string());
            c
        }
        _ => return None,
    };
    for seg in &path[1..] {
        match seg.as_str() {
            "super" => {
                cur.pop();
            }
            s => {
                let mut next = cur.clone();
                next.push(s.to_string());
                if modules.contains_key(&next) {
                    cur = next;
                } else {
                    break;
                }
            }
        }
    }
    Some(cur)
}

/// The module that defines what `path` (as written in module `m`) names.
fn resolve(
    m: &ModPath,
    path: &[String],
    modules: &BTreeMap<ModPath, String>,
    reexports: &BTreeMap<ModPath, BTreeMap<String, ModPath>>,
) -> Option<ModPath> {
    let target = absolute(m, path, modules)?;
    // The first segment after the module part: a re-exported name resolves to its source.
    let consumed = {
        let mut n = 1;
        let mut cur = absolute(m, &path[..1], modules)?;
        while n < path.len() {
            if path[n] == "super" {
                cur.pop();
                n += 1;
                continue;
            }
            let mut next = cur.clone();
            next.push(path[n].clone());
            if modules.contains_key(&next) {
                cur = next;
                n += 1;
            } else {
                break;
            }
        }
        n
    };
    match path.get(consumed) {
        Some(item) => Some(reexports.get(&target).and_then(|r| r.get(item)).cloned().unwrap_or(target)),
        None => Some(target),
    }
}
