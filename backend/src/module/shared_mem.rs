//! Static shared memory (`docs/kernels.md`, "Shared memory"): the
//! `; ursa.shared` directives of a CLIF file, the file-wide layout of the
//! shared variables they declare, and each function's shared size.
//!
//! A variable is a `symbol` global value with the reserved name
//! `%ursa_shared_NAME`; its size (and alignment) is given once per file by a
//! comment line, which cranelift-reader skips like any comment:
//!
//! ```text
//! ; ursa.shared %ursa_shared_tile 1024 align 16
//! ```
//!
//! The variables are laid out in the order of their directives, each at the
//! next offset aligned to its alignment (default 8). A function's shared size
//! is the end of the last variable it names; a kernel's also covers the
//! device functions it calls ([`propagate`]), since every function of the
//! file addresses the variables at the same offsets.

use std::collections::{HashMap, HashSet};
use std::fmt;

use crate::Error;

use cranelift_codegen::ir::Function;
use ursa_emit::elf;
use ursa_isel::addr_space::{shared_var, SHARED_PREFIX};

/// Most bytes of static shared memory a kernel may use (the 48 KiB CUDA
/// gives statically allocated shared memory).
pub const STATIC_LIMIT: u32 = 48 * 1024;

/// The name of the dynamic shared memory (`%ursa_shared_dynamic`), which
/// needs no directive: `ursa run --shared BYTES` sizes it per launch.
pub const DYNAMIC: &str = "dynamic";

/// The alignment of a variable that names none.
pub const DEFAULT_ALIGN: u32 = 8;

/// One declared variable.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SharedVar {
    /// `tile` for `%ursa_shared_tile`.
    pub name: String,
    pub size: u32,
    pub align: u32,
    /// Byte offset in the CTA's shared memory.
    pub offset: u32,
    /// 1-based line of the directive (0: declared through
    /// [`crate::module::ursa_module::UrsaModule`]).
    pub line: usize,
}

/// The shared variables of a file.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SharedLayout {
    pub vars: Vec<SharedVar>,
}

impl SharedLayout {
    /// Adds the variable `name` (`tile` for `%ursa_shared_tile`) of `size`
    /// bytes at the next offset aligned to `align`, declared at `line` (0:
    /// through [`crate::module::ursa_module::UrsaModule`], not a directive).
    /// `Err` says why it cannot be: size 0, an alignment that is not a power
    /// of two up to 256, the dynamic shared memory's name, a name declared
    /// already, or an end past [`STATIC_LIMIT`].
    pub fn declare(&mut self, name: &str, size: u32, align: u32, line: usize) -> Result<&SharedVar, String> {
        if size == 0 {
            return Err(format!("%{}{} has size 0", SHARED_PREFIX, name));
        }
        if !align.is_power_of_two() || align > 256 {
            return Err(format!("alignment {} is not a power of two up to 256", align));
        }
        if name == DYNAMIC {
            return Err(format!(
                "%{}{} is the dynamic shared memory, sized at launch (`ursa run --shared BYTES`), not by a directive",
                SHARED_PREFIX, DYNAMIC
            ));
        }
        if let Some(prev) = self.vars.iter().find(|v| v.name == name) {
            return Err(match prev.line {
                0 => format!("%{}{} is declared twice", SHARED_PREFIX, name),
                line => format!("%{}{} is declared again (first at line {})", SHARED_PREFIX, name, line),
            });
        }
        let offset = self.vars.iter().map(|v| v.offset as u64 + v.size as u64).max().unwrap_or(0);
        let start = offset.next_multiple_of(align as u64);
        let end = start + size as u64;
        if end > STATIC_LIMIT as u64 {
            return Err(format!(
                "%{}{} ends at byte {}: the file's static shared memory exceeds the limit of {} bytes per CTA",
                SHARED_PREFIX, name, end, STATIC_LIMIT
            ));
        }
        self.vars.push(SharedVar { name: name.to_string(), size, align, offset: start as u32, line });
        Ok(self.vars.last().expect("just pushed"))
    }

    /// Name → offset, for instruction selection; `dynamic` (the dynamic
    /// shared memory sized at launch) starts after the static variables.
    pub fn offsets(&self) -> HashMap<String, u32> {
        let mut m: HashMap<String, u32> = self.vars.iter().map(|v| (v.name.clone(), v.offset)).collect();
        m.insert(DYNAMIC.to_string(), self.dynamic_base());
        m
    }

    /// Where the dynamic shared memory starts: after every static variable
    /// of the file, 16-byte aligned.
    pub fn dynamic_base(&self) -> u32 {
        self.vars.iter().map(|v| v.offset + v.size).max().unwrap_or(0).next_multiple_of(16)
    }

    /// The shared bytes `f` uses: the end of the last variable it names.
    /// `Err` names a variable without a directive.
    pub fn function_size(&self, f: &Function) -> Result<u32, Error> {
        let mut end = 0;
        for gv in f.global_values.keys() {
            if let Some(n) = shared_var(f, gv) {
                if n == DYNAMIC {
                    end = end.max(self.dynamic_base());
                    continue;
                }
                let v = self.vars.iter().find(|v| v.name == n).ok_or_else(|| {
                    Error::unsupported(format!(
                        "shared variable %{}{} has no `; ursa.shared %{}{} SIZE [align N]` directive in the file",
                        SHARED_PREFIX, n, SHARED_PREFIX, n
                    ))
                })?;
                end = end.max(v.offset + v.size);
            }
        }
        Ok(end)
    }
}

/// A malformed `; ursa.shared` directive.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DirectiveError {
    /// The line of the directive (from 1).
    pub line: usize,
    pub message: String,
}

impl fmt::Display for DirectiveError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}: {} (the directive is `; ursa.shared %{}NAME SIZE [align N]`)", self.line, self.message, SHARED_PREFIX)
    }
}

impl std::error::Error for DirectiveError {}

/// Parses the `; ursa.shared` directives of a CLIF file's text.
pub fn parse(text: &str) -> Result<SharedLayout, DirectiveError> {
    let mut layout = SharedLayout::default();
    for (i, line) in text.lines().enumerate() {
        let t = line.trim_start();
        if !t.starts_with(';') {
            continue;
        }
        let t = t.trim_start_matches(';').trim();
        let Some(rest) = t.strip_prefix("ursa.shared") else { continue };
        let at = i + 1;
        let bad = |message: String| DirectiveError { line: at, message };
        let words: Vec<&str> = rest.split_whitespace().collect();
        let (sym, size, align) = match words.as_slice() {
            [s, z] => (*s, *z, None),
            [s, z, "align", a] => (*s, *z, Some(*a)),
            _ => return Err(bad(format!("`{}` is not a shared-memory directive", t))),
        };
        let name = sym.strip_prefix('%').and_then(|s| s.strip_prefix(SHARED_PREFIX)).filter(|n| !n.is_empty());
        let name = name.ok_or_else(|| bad(format!("`{}` is not a %{}NAME symbol", sym, SHARED_PREFIX)))?;
        let num = |s: &str| -> Result<u32, DirectiveError> {
            let r = if let Some(h) = s.strip_prefix("0x") { u128::from_str_radix(h, 16) } else { s.parse::<u128>() };
            let n = r.map_err(|_| bad(format!("`{}` is not a number", s)))?;
            u32::try_from(n).map_err(|_| bad(format!("{} is too large (at most {})", s, u32::MAX)))
        };
        let size = num(size)?;
        let align = match align {
            Some(a) => num(a)?,
            None => DEFAULT_ALIGN,
        };
        layout.declare(name, size, align, at).map_err(bad)?;
    }
    Ok(layout)
}

/// A kernel's shared size also covers every function it calls, directly or
/// through other functions of the object.
pub fn propagate(obj: &mut elf::Object) {
    let own: HashMap<String, u32> = obj.functions.iter().map(|f| (f.name.clone(), f.shared_size)).collect();
    let calls: HashMap<String, Vec<String>> =
        obj.functions.iter().map(|f| (f.name.clone(), f.relocs.iter().map(|r| r.symbol.clone()).collect())).collect();
    for f in obj.functions.iter_mut().filter(|f| f.kernel) {
        let mut seen = HashSet::new();
        let mut stack = vec![f.name.clone()];
        let mut size = 0;
        while let Some(n) = stack.pop() {
            if !seen.insert(n.clone()) {
                continue;
            }
            size = size.max(own.get(&n).copied().unwrap_or(0));
            stack.extend(calls.get(&n).into_iter().flatten().cloned());
        }
        f.shared_size = size;
    }
}
