//! The import graph of a crate's source files, and its circles.
//!
//! A file imports another when its code (not its comments, not its
//! `#[cfg(test)]` tail) names a path into the other's module: `use
//! crate::a::b::{X, Y}`, `crate::a::b::f(…)`, or the same through `super::`.
//! A path is charged to the deepest module of the crate it names that has a
//! file of its own (`a/b.rs`, `a/b/mod.rs`); a module's declarations of its
//! children (`pub mod x;`) are not imports. The graph is read from the text,
//! without running the compiler, so it sees every file the crate has.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// One file of the crate: its module path (`["reconv", "plan"]` for
/// `src/reconv/plan.rs`) and the files it imports (module paths).
#[derive(Debug)]
struct File {
    module: Vec<String>,
    imports: BTreeSet<Vec<String>>,
}

/// The module path of `rel`, a path relative to the crate's `src/`.
fn module_of(rel: &Path) -> Vec<String> {
    let mut parts: Vec<String> = rel.iter().map(|p| p.to_string_lossy().into_owned()).collect();
    let last = parts.pop().unwrap_or_default();
    let stem = last.trim_end_matches(".rs");
    if !matches!(stem, "lib" | "main" | "mod") {
        parts.push(stem.to_string());
    }
    parts
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) -> std::io::Result<()> {
    for e in std::fs::read_dir(dir)? {
        let p = e?.path();
        if p.is_dir() {
            rust_files(&p, out)?;
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
    Ok(())
}

/// The code of a file that counts: comments removed, and everything from the
/// first top-level `#[cfg(test)]` on (the unit tests and their helpers) left out.
fn code_of(text: &str) -> String {
    let mut out = String::new();
    for line in text.lines() {
        if line.starts_with("#[cfg(test)]") {
            break;
        }
        let code = match line.find("//") {
            Some(k) => &line[..k],
            None => line,
        };
        out.push_str(code);
        out.push('\n');
    }
    out
}

/// The paths a piece of code names from `start` (`crate`, `super`): each
/// `start::a::b` or `start::a::{b, c::d}` as the segment lists after it.
fn paths_from(code: &str, start: &str) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    let pat = format!("{}::", start);
    let bytes = code.as_bytes();
    let mut at = 0;
    while let Some(k) = code[at..].find(&pat) {
        let s = at + k;
        at = s + pat.len();
        // `start` must begin a path, not end an identifier (`mycrate::`).
        if s > 0 && (bytes[s - 1].is_ascii_alphanumeric() || bytes[s - 1] == b'_' || bytes[s - 1] == b':') {
            continue;
        }
        expand(&code[at..], Vec::new(), &mut out);
    }
    out
}

/// Reads one path (possibly with a `{…}` group) at the start of `rest`, with
/// the segments in `prefix` before it.
fn expand(rest: &str, mut prefix: Vec<String>, out: &mut Vec<Vec<String>>) {
    let mut rest = rest;
    loop {
        let trimmed = rest.trim_start();
        if let Some(group) = trimmed.strip_prefix('{') {
            // Split the group at its top-level commas.
            let mut depth = 0;
            let mut item = 0;
            for (i, c) in group.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' if depth == 0 => {
                        expand(&group[item..i], prefix.clone(), out);
                        return;
                    }
                    '}' => depth -= 1,
                    ',' if depth == 0 => {
                        expand(&group[item..i], prefix.clone(), out);
                        item = i + 1;
                    }
                    _ => {}
                }
            }
            return;
        }
        let end = trimmed.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).unwrap_or(trimmed.len());
        if end == 0 {
            break;
        }
        prefix.push(trimmed[..end].to_string());
        rest = &trimmed[end..];
        match rest.strip_prefix("::") {
            Some(r) => rest = r,
            None => break,
        }
    }
    if !prefix.is_empty() {
        out.push(prefix);
    }
}

/// The import graph of the crate whose sources are in `src`.
fn graph(src: &Path) -> std::io::Result<Vec<File>> {
    let mut paths = Vec::new();
    rust_files(src, &mut paths)?;
    paths.sort();
    let mut texts = Vec::new();
    for p in &paths {
        let rel = p.strip_prefix(src).unwrap_or(p);
        texts.push((module_of(rel), std::fs::read_to_string(p)?));
    }
    let modules: BTreeSet<Vec<String>> = texts.iter().map(|(m, _)| m.clone()).collect();
    let mut files = Vec::new();
    for (module, text) in &texts {
        let code = code_of(text);
        // `super` of `a/b.rs` and of `a/b/mod.rs` is `a`.
        let parent: Vec<String> = module[..module.len().saturating_sub(1)].to_vec();
        let mut named: Vec<Vec<String>> = paths_from(&code, "crate");
        for p in paths_from(&code, "super") {
            named.push(parent.iter().cloned().chain(p).collect());
        }
        let mut imports = BTreeSet::new();
        for p in named {
            // The deepest module with a file of its own.
            let target = (0..=p.len()).rev().map(|n| p[..n].to_vec()).find(|m| modules.contains(m));
            if let Some(t) = target {
                if &t != module {
                    imports.insert(t);
                }
            }
        }
        files.push(File { module: module.clone(), imports });
    }
    Ok(files)
}

/// The import circles of the crate in `src`: each strongly connected set of
/// two or more files, as `a/b -> c -> a/b` lines naming one cycle through it.
pub fn circles(src: &Path) -> std::io::Result<Vec<String>> {
    let files = graph(src)?;
    let index: BTreeMap<&Vec<String>, usize> = files.iter().enumerate().map(|(i, f)| (&f.module, i)).collect();
    let succ: Vec<Vec<usize>> = files.iter().map(|f| f.imports.iter().filter_map(|m| index.get(m).copied()).collect()).collect();
    let n = files.len();
    // Reachability by depth-first search from each file (the crates are small).
    let reach = |from: usize| {
        let mut seen = vec![false; n];
        let mut stack = succ[from].clone();
        while let Some(v) = stack.pop() {
            if !std::mem::replace(&mut seen[v], true) {
                stack.extend(succ[v].iter().copied());
            }
        }
        seen
    };
    let reaches: Vec<Vec<bool>> = (0..n).map(reach).collect();
    let mut done = vec![false; n];
    let mut out = Vec::new();
    let name = |i: usize| if files[i].module.is_empty() { "lib".to_string() } else { files[i].module.join("/") };
    for a in 0..n {
        if done[a] || !reaches[a][a] {
            continue;
        }
        let members: Vec<usize> = (0..n).filter(|&b| reaches[a][b] && reaches[b][a]).collect();
        if members.len() < 2 {
            continue;
        }
        for &m in &members {
            done[m] = true;
        }
        // One cycle through `a`: a shortest path back to it by breadth-first search.
        let mut prev = vec![usize::MAX; n];
        let mut queue = std::collections::VecDeque::from([a]);
        'bfs: while let Some(v) = queue.pop_front() {
            for &w in &succ[v] {
                if w == a {
                    prev[a] = v;
                    break 'bfs;
                }
                if prev[w] == usize::MAX && members.contains(&w) {
                    prev[w] = v;
                    queue.push_back(w);
                }
            }
        }
        let mut cycle = vec![a];
        let mut v = prev[a];
        while v != a && v != usize::MAX {
            cycle.push(v);
            v = prev[v];
        }
        cycle.push(a);
        cycle.reverse();
        let names: Vec<String> = members.iter().map(|&m| name(m)).collect();
        out.push(format!(
            "{} files [{}], e.g. {}",
            members.len(),
            names.join(", "),
            cycle.iter().map(|&m| name(m)).collect::<Vec<_>>().join(" -> ")
        ));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::{expand, paths_from};

    #[test]
    fn paths_are_read_with_their_groups() {
        let code = "use crate::a::{b::{C, d}, E};\nlet x = crate::f::g(1); mycrate::h; super::k::L;";
        let p = paths_from(code, "crate");
        assert_eq!(p, vec![vec!["a", "b", "C"], vec!["a", "b", "d"], vec!["a", "E"], vec!["f", "g"]]);
        assert_eq!(paths_from(code, "super"), vec![vec!["k", "L"]]);
        let mut out = Vec::new();
        expand("x::y", Vec::new(), &mut out);
        assert_eq!(out, vec![vec!["x", "y"]]);
    }
}
