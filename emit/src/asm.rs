//! The assembler and disassembler of whole files.
//!
//! A file holds functions. Directives:
//!
//! ```text
//! .kernel NAME            start a kernel (launchable entry point)
//! .func NAME              start a device function (called only)
//! .param NAME, TYPE       next kernel parameter of TYPE (i8, i16, i32, i64,
//!                         i128, f32, f64 or ptr), placed at the next offset
//!                         aligned to min(its size, 8)
//! .param NAME, SIZE       a parameter of SIZE bytes of no type (only the
//!                         size of its argument is checked)
//! .shared SIZE            bytes of shared memory per CTA
//! .local SIZE             bytes of local memory (stack) per thread
//! .regs N                 R registers per thread to record (at least what
//!                         the code uses, which is the default)
//! LABEL:                  a label, local to its function
//! ```
//!
//! A file with instructions but no `.kernel`/`.func` is one kernel named
//! after the file. `//` starts a comment. Branch and call operands name a
//! label of the same function or another function of the file; calls into
//! another function become `R_URSA_REL32` relocations.

use std::cell::RefCell;
use std::collections::{BTreeMap, HashMap};
use std::fmt;

use crate::elf::{Function, Object, Param, ParamKind, Reloc};
use crate::inst::{Inst, INST_BYTES};
use crate::model::Kind;
use crate::text::{format_inst, parse_inst, Labels};

/// An assembly error at a line and column (1-based).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AsmError {
    pub file: String,
    pub line: usize,
    pub col: usize,
    pub msg: String,
}

impl fmt::Display for AsmError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}:{}: {}", self.file, self.line, self.col, self.msg)
    }
}

impl std::error::Error for AsmError {}

struct Line<'a> {
    no: usize,
    col: usize,
    text: &'a str,
}

struct FuncSrc<'a> {
    func: Function,
    line: usize,
    labels: HashMap<String, u64>,
    insts: Vec<Line<'a>>,
    next_param: u32,
    /// The `.shared` and `.local` directives given so far.
    sizes_given: Vec<&'a str>,
}

/// Label lookup while assembling one function: local labels resolve to
/// addresses; other functions' names are recorded for a relocation.
struct FnLabels<'a> {
    local: &'a HashMap<String, u64>,
    functions: &'a [String],
    external: RefCell<Option<String>>,
}

impl Labels for FnLabels<'_> {
    fn address(&self, name: &str) -> Option<u64> {
        if let Some(a) = self.local.get(name) {
            return Some(*a);
        }
        if self.functions.iter().any(|f| f == name) {
            *self.external.borrow_mut() = Some(name.to_string());
            return Some(0);
        }
        None
    }
    fn name(&self, _: u64) -> Option<String> {
        None
    }
}

fn is_ident(s: &str) -> bool {
    let mut c = s.chars();
    matches!(c.next(), Some(x) if x.is_ascii_alphabetic() || x == '_' || x == '.' || x == '$')
        && c.all(|x| x.is_ascii_alphanumeric() || x == '_' || x == '.' || x == '$')
}

/// The name of the kernel of a file without `.kernel`/`.func`: its file
/// stem, with characters a name cannot hold replaced by `_`, and `_` in front
/// when it would not start with a letter (`1.s` → `_1`), so that its
/// disassembly reassembles.
pub fn default_function_name(file_name: &str) -> String {
    let stem = std::path::Path::new(file_name).file_stem().and_then(|s| s.to_str()).unwrap_or("");
    let mut name = stem.replace(|c: char| !(c.is_ascii_alphanumeric() || c == '_'), "_");
    if name.is_empty() {
        name = "main".into();
    }
    if !name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_') {
        name.insert(0, '_');
    }
    name
}

/// Is `s` usable as a function, parameter or label name in assembly text?
pub fn is_name(s: &str) -> bool {
    is_ident(s) && !s.starts_with('.')
}

/// The function being assembled; code before any `.kernel`/`.func` starts a
/// kernel named after the file.
fn current<'f, 'a>(funcs: &'f mut Vec<FuncSrc<'a>>, default_name: &str, line: usize) -> &'f mut FuncSrc<'a> {
    if funcs.is_empty() {
        funcs.push(FuncSrc {
            func: Function { name: default_name.to_string(), kernel: true, ..Default::default() },
            line,
            labels: HashMap::new(),
            insts: Vec::new(),
            next_param: 0,
            sizes_given: Vec::new(),
        });
    }
    funcs.last_mut().unwrap()
}

/// Assembles a file. `file_name` names errors and, for a file without
/// function directives, the function.
pub fn assemble(text: &str, file_name: &str) -> Result<Object, AsmError> {
    let err = |line: usize, col: usize, msg: String| AsmError { file: file_name.to_string(), line, col, msg };
    let mut funcs: Vec<FuncSrc> = Vec::new();
    let default_name = default_function_name(file_name);
    for (i, raw) in text.lines().enumerate() {
        let no = i + 1;
        let code = match raw.find("//") {
            Some(c) => &raw[..c],
            None => raw,
        };
        let mut rest = code.trim_end();
        let mut col = rest.len() - rest.trim_start().len() + 1;
        rest = rest.trim_start();
        if rest.is_empty() {
            continue;
        }
        // Labels.
        while let Some(c) = rest.find(':') {
            let name = rest[..c].trim();
            if !is_ident(name) || name.contains('[') {
                break;
            }
            let f = current(&mut funcs, &default_name, no);
            let addr = (f.insts.len() * INST_BYTES) as u64;
            if f.labels.insert(name.to_string(), addr).is_some() {
                return Err(err(no, col, format!("label `{}` is defined twice", name)));
            }
            let after = &rest[c + 1..];
            col += c + 1 + (after.len() - after.trim_start().len());
            rest = after.trim_start();
        }
        if rest.is_empty() {
            continue;
        }
        if let Some(d) = rest.strip_prefix('.') {
            let (kw, args) = d.split_once(char::is_whitespace).unwrap_or((d, ""));
            let args = args.trim();
            match kw {
                "kernel" | "func" => {
                    if !is_ident(args) {
                        return Err(err(no, col, format!("expected a function name after `.{}`", kw)));
                    }
                    if funcs.iter().any(|f| f.func.name == args) {
                        return Err(err(no, col, format!("function `{}` is defined twice", args)));
                    }
                    funcs.push(FuncSrc {
                        func: Function { name: args.to_string(), kernel: kw == "kernel", ..Default::default() },
                        line: no,
                        labels: HashMap::new(),
                        insts: Vec::new(),
                        next_param: 0,
                        sizes_given: Vec::new(),
                    });
                }
                "param" | "shared" | "local" | "regs" => {
                    let Some(f) = funcs.last_mut() else {
                        return Err(err(no, col, format!("`.{}` outside a function", kw)));
                    };
                    let num = |s: &str| crate::text::parse_int(s).filter(|v| *v >= 0 && *v <= u32::MAX as i128).map(|v| v as u32);
                    match kw {
                        "param" => {
                            if !f.func.kernel {
                                return Err(err(no, col, "`.param` is only for kernels".into()));
                            }
                            let (name, ty) = args
                                .split_once(',')
                                .ok_or_else(|| err(no, col, "expected `.param NAME, TYPE` or `.param NAME, SIZE`".into()))?;
                            let ty = ty.trim();
                            let (kind, size) = match ParamKind::parse_type(ty) {
                                Some(typed) => typed,
                                None => num(ty).filter(|s| *s > 0).map(|s| (ParamKind::Bytes, s)).ok_or_else(|| {
                                    err(
                                        no,
                                        col,
                                        format!("bad parameter type `{}` (i8, i16, i32, i64, i128, f32, f64, ptr or a size in bytes)", ty),
                                    )
                                })?,
                            };
                            let name = name.trim();
                            if !is_ident(name) {
                                return Err(err(no, col, format!("bad parameter name `{}`", name)));
                            }
                            if f.func.params.iter().any(|p| p.name == name) {
                                return Err(err(no, col, format!("parameter `{}` is declared twice", name)));
                            }
                            let align = size.clamp(1, 8).next_power_of_two().min(8);
                            let offset = f.next_param.checked_next_multiple_of(align).unwrap_or(u32::MAX);
                            crate::elf::param_room(offset, size).map_err(|m| err(no, col, format!("parameter `{}`: {}", name, m)))?;
                            f.next_param = offset + size;
                            f.func.params.push(Param { name: name.to_string(), offset, size, kind });
                        }
                        _ => {
                            if f.sizes_given.contains(&kw) {
                                return Err(err(no, col, format!("`.{}` is given twice for `{}`", kw, f.func.name)));
                            }
                            f.sizes_given.push(kw);
                            let size = num(args).ok_or_else(|| err(no, col, format!("bad size `{}`", args)))?;
                            if kw == "shared" {
                                f.func.shared_size = size;
                            } else if kw == "regs" {
                                if size == 0 || size > crate::RegFile::R.zero() {
                                    return Err(err(no, col, format!("`.regs` must be 1 to {}, not {}", crate::RegFile::R.zero(), size)));
                                }
                                f.func.registers = size;
                            } else {
                                f.func.local_size = size;
                            }
                        }
                    }
                }
                _ => return Err(err(no, col, format!("unknown directive `.{}`", kw))),
            }
            continue;
        }
        if rest.is_empty() {
            continue;
        }
        current(&mut funcs, &default_name, no).insts.push(Line { no, col, text: rest });
    }
    let names: Vec<String> = funcs.iter().map(|f| f.func.name.clone()).collect();
    let mut obj = Object::default();
    for mut fs in funcs {
        if fs.insts.is_empty() {
            return Err(err(fs.line, 1, format!("function `{}` has no instructions", fs.func.name)));
        }
        let code_len = (fs.insts.len() * INST_BYTES) as i64;
        for (i, l) in fs.insts.iter().enumerate() {
            let pc = (i * INST_BYTES) as u64;
            let labels = FnLabels { local: &fs.labels, functions: &names, external: RefCell::new(None) };
            let inst = parse_inst(l.text, l.col, Some(pc), &labels).map_err(|e| err(l.no, e.col, e.msg))?;
            let bytes = inst.encode().map_err(|e| err(l.no, l.col, e.to_string()))?;
            if labels.external.borrow().is_none() {
                // A branch within the function must land on one of its instructions.
                for t in branch_targets(&inst, pc) {
                    if t % INST_BYTES as i64 != 0 {
                        return Err(err(
                            l.no,
                            l.col,
                            format!(
                                "branch target {} is not on an instruction boundary (offsets are multiples of {} bytes)",
                                hex_addr(t),
                                INST_BYTES
                            ),
                        ));
                    }
                    if t < 0 || t >= code_len {
                        return Err(err(
                            l.no,
                            l.col,
                            format!(
                                "branch target {} is outside function `{}` (its code is 0x0..0x{:x})",
                                hex_addr(t),
                                fs.func.name,
                                code_len
                            ),
                        ));
                    }
                }
            }
            fs.func.code.extend_from_slice(&bytes);
            if let Some(sym) = labels.external.into_inner() {
                let Some(fi) = inst.def().fields.iter().position(|f| f.kind == Kind::PCRel32) else { unreachable!() };
                let f = &inst.def().fields[fi];
                if f.lo % 8 != 0 {
                    return Err(err(l.no, l.col, "call target field is not byte-aligned; cannot relocate".into()));
                }
                let fo = (f.lo / 8) as u64;
                // S + A - P = S - (pc + 16)  with P = pc + fo.
                fs.func.relocs.push(Reloc { offset: pc + fo, symbol: sym, addend: fo as i64 - INST_BYTES as i64 });
                // The encoded offset stays 0 until the loader patches it.
                let start = pc as usize + fo as usize;
                fs.func.code[start..start + 4].copy_from_slice(&[0; 4]);
            }
        }
        if fs.sizes_given.contains(&"regs") {
            let used = crate::elf::registers_in_code(&fs.func.code);
            if fs.func.registers < used {
                return Err(err(
                    fs.line,
                    1,
                    format!("`.regs {}` for `{}`, whose code uses {} registers", fs.func.registers, fs.func.name, used),
                ));
            }
        } else {
            fs.func.registers = crate::elf::registers_in_code(&fs.func.code);
        }
        obj.functions.push(fs.func);
    }
    if obj.functions.is_empty() {
        return Err(err(1, 1, "no instructions".into()));
    }
    Ok(obj)
}

fn hex_addr(a: i64) -> String {
    if a < 0 {
        format!("-0x{:x}", (a as i128).unsigned_abs())
    } else {
        format!("0x{:x}", a)
    }
}

/// The byte addresses (in its function) that an instruction at `pc` branches
/// to through its PC-relative fields.
fn branch_targets(inst: &Inst, pc: u64) -> Vec<i64> {
    inst.def()
        .fields
        .iter()
        .enumerate()
        .filter(|(_, fd)| fd.kind == Kind::PCRel32)
        .map(|(fi, _)| pc as i64 + INST_BYTES as i64 + inst.get_at(fi) as u32 as i32 as i64)
        .collect()
}

/// Labels for disassembly: `.L_<hex>` at every branch target.
struct TargetLabels<'a> {
    targets: &'a BTreeMap<u64, String>,
}

impl Labels for TargetLabels<'_> {
    fn address(&self, name: &str) -> Option<u64> {
        self.targets.iter().find(|t| t.1 == name).map(|t| *t.0)
    }
    fn name(&self, addr: u64) -> Option<String> {
        self.targets.get(&addr).cloned()
    }
}

struct CallLabel<'a> {
    at: u64,
    symbol: &'a str,
}

impl Labels for CallLabel<'_> {
    fn address(&self, _: &str) -> Option<u64> {
        None
    }
    fn name(&self, addr: u64) -> Option<String> {
        (addr == self.at).then(|| self.symbol.to_string())
    }
}

/// Why an object cannot be disassembled (into text that reassembles to it).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DisasmError {
    /// The function concerned, if one.
    pub function: Option<String>,
    /// The byte offset of the instruction concerned in the function.
    pub offset: Option<u64>,
    pub message: String,
}

impl DisasmError {
    fn object(message: impl Into<String>) -> DisasmError {
        DisasmError { function: None, offset: None, message: message.into() }
    }
    fn function(f: &Function, offset: Option<u64>, message: impl Into<String>) -> DisasmError {
        DisasmError { function: Some(f.name.clone()), offset, message: message.into() }
    }
}

impl fmt::Display for DisasmError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (&self.function, self.offset) {
            (Some(name), Some(o)) => write!(f, "{}+0x{:x}: {}", name, o, self.message),
            (Some(name), None) => write!(f, "{}: {}", name, self.message),
            _ => write!(f, "{}", self.message),
        }
    }
}

impl std::error::Error for DisasmError {}

/// Disassembles one function's code into canonical text with labels; the
/// output reassembles to the same bytes. Undecodable instructions are
/// reported with their offset.
pub fn disassemble_function(f: &Function) -> Result<String, DisasmError> {
    if !is_name(&f.name) {
        return Err(DisasmError::object(format!(
            "function name `{}` cannot be written in assembly (a letter, `_` or `$`, then letters, digits, `_`, `.`, `$`)",
            f.name.escape_debug()
        )));
    }
    if f.code.is_empty() {
        return Err(DisasmError::function(f, None, "the function has no instructions"));
    }
    for p in &f.params {
        if !is_name(&p.name) {
            return Err(DisasmError::function(
                f,
                None,
                format!("parameter name `{}` cannot be written in assembly", p.name.escape_debug()),
            ));
        }
    }
    let mut insts = Vec::new();
    for (i, chunk) in f.code.chunks(INST_BYTES).enumerate() {
        let arr: [u8; INST_BYTES] =
            chunk.try_into().map_err(|_| DisasmError::function(f, None, format!("trailing {} bytes", chunk.len())))?;
        let inst = Inst::decode(&arr).map_err(|e| DisasmError::function(f, Some((i * INST_BYTES) as u64), e.to_string()))?;
        insts.push(inst);
    }
    let reloc_at: HashMap<u64, &Reloc> = f.relocs.iter().map(|r| (r.offset, r)).collect();
    // Every relocation must patch the target field of a call-like instruction
    // and name a function.
    let reloc_fields: Vec<u64> = insts
        .iter()
        .enumerate()
        .flat_map(|(i, inst)| {
            inst.def()
                .fields
                .iter()
                .filter(|fd| fd.kind == Kind::PCRel32)
                .map(move |fd| (i * INST_BYTES) as u64 + fd.lo as u64 / 8)
                .collect::<Vec<_>>()
        })
        .collect();
    for r in &f.relocs {
        if !reloc_fields.contains(&r.offset) {
            return Err(DisasmError::function(
                f,
                None,
                format!("relocation at offset 0x{:x} does not patch a branch or call target", r.offset),
            ));
        }
        if !is_name(&r.symbol) {
            return Err(DisasmError::function(
                f,
                None,
                format!("relocation at offset 0x{:x} names `{}`, which is not a function name", r.offset, r.symbol.escape_debug()),
            ));
        }
    }
    let code_len = f.code.len() as i64;
    let mut targets = BTreeMap::new();
    for (i, inst) in insts.iter().enumerate() {
        for (fi, fd) in inst.def().fields.iter().enumerate() {
            if fd.kind == Kind::PCRel32 && !reloc_at.contains_key(&((i * INST_BYTES) as u64 + fd.lo as u64 / 8)) {
                let off = inst.get_at(fi) as u32 as i32 as i64;
                let t = (i * INST_BYTES) as i64 + INST_BYTES as i64 + off;
                if t < 0 || t >= code_len || t % INST_BYTES as i64 != 0 {
                    return Err(DisasmError::function(
                        f,
                        Some((i * INST_BYTES) as u64),
                        format!("branch target {} is not an instruction of the function (its code is 0x0..0x{:x})", hex_addr(t), code_len),
                    ));
                }
                targets.insert(t as u64, format!(".L_{:x}", t));
            }
        }
    }
    let mut out = String::new();
    out.push_str(&format!("{} {}\n", if f.kernel { ".kernel" } else { ".func" }, f.name));
    for p in &f.params {
        match p.kind {
            ParamKind::Bytes => out.push_str(&format!("    .param {}, {}\n", p.name, p.size)),
            _ => out.push_str(&format!("    .param {}, {}\n", p.name, p.type_name())),
        }
    }
    if f.shared_size != 0 {
        out.push_str(&format!("    .shared {}\n", f.shared_size));
    }
    if f.local_size != 0 {
        out.push_str(&format!("    .local {}\n", f.local_size));
    }
    // The register count only where it is not what the code uses (the
    // assembler's default): a padded budget, or 0 from a version-1 object.
    if f.registers != crate::elf::registers_in_code(&f.code) && f.registers != 0 {
        out.push_str(&format!("    .regs {}\n", f.registers));
    }
    let labels = TargetLabels { targets: &targets };
    for (i, inst) in insts.iter().enumerate() {
        let pc = (i * INST_BYTES) as u64;
        if let Some(l) = targets.get(&pc) {
            out.push_str(&format!("{}:\n", l));
        }
        // A relocated call holds offset 0 (target pc + 16) and prints its symbol.
        let reloc = inst.def().fields.iter().find(|fd| fd.kind == Kind::PCRel32).and_then(|fd| reloc_at.get(&(pc + fd.lo as u64 / 8)));
        let text = match reloc {
            Some(r) => format_inst(inst, Some(pc), &CallLabel { at: pc + INST_BYTES as u64, symbol: &r.symbol }),
            None => format_inst(inst, Some(pc), &labels),
        }
        .map_err(|e| DisasmError::function(f, Some(pc), e.to_string()))?;
        out.push_str(&format!("    {:<60} // {:04x}\n", text, pc));
    }
    Ok(out)
}

/// Disassembles a whole object. The text is assembled again and compared
/// with the object: anything the text cannot express (a relocation to a
/// function the object does not define, a non-zero relocated field, a
/// parameter layout `.param` would not give, …) is an error naming it, so
/// printed text always reassembles to the same object.
pub fn disassemble(obj: &Object) -> Result<String, DisasmError> {
    let mut out = String::new();
    for (i, f) in obj.functions.iter().enumerate() {
        if obj.functions[..i].iter().any(|g| g.name == f.name) {
            return Err(DisasmError::object(format!("function `{}` is defined twice", f.name)));
        }
        for r in &f.relocs {
            if obj.function(&r.symbol).is_none() && is_name(&r.symbol) {
                return Err(DisasmError::function(
                    f,
                    None,
                    format!("relocation at offset 0x{:x} names `{}`, which the object does not define", r.offset, r.symbol),
                ));
            }
        }
        if i > 0 {
            out.push('\n');
        }
        out.push_str(&disassemble_function(f)?);
    }
    if obj.functions.is_empty() {
        return Err(DisasmError::object("the object has no functions"));
    }
    let back = assemble(&out, "<disassembly>").map_err(|e| DisasmError::object(format!("the disassembly does not reassemble: {}", e)))?;
    if let Some(d) = first_difference(obj, &back) {
        return Err(DisasmError::object(format!("the disassembly does not reassemble to the same object: {}", d)));
    }
    Ok(out)
}

/// The first way `b` differs from `a`, function by function.
fn first_difference(a: &Object, b: &Object) -> Option<String> {
    if a.functions.len() != b.functions.len() {
        return Some(format!("{} functions, reassembled {}", a.functions.len(), b.functions.len()));
    }
    for (x, y) in a.functions.iter().zip(&b.functions) {
        let n = &x.name;
        if x.name != y.name || x.kernel != y.kernel {
            return Some(format!("function `{}` comes back as `{}`", n, y.name));
        }
        if x.params != y.params {
            return Some(format!("{}: the parameter layout {:?} is not what `.param` gives ({:?})", n, x.params, y.params));
        }
        if (x.shared_size, x.local_size) != (y.shared_size, y.local_size) {
            return Some(format!("{}: memory sizes differ", n));
        }
        let mut rx = x.relocs.clone();
        rx.sort_by_key(|r| r.offset);
        let mut ry = y.relocs.clone();
        ry.sort_by_key(|r| r.offset);
        if rx != ry {
            let bad = rx.iter().find(|r| !ry.contains(r)).or(ry.first());
            return Some(match bad {
                Some(r) => format!(
                    "{}: relocation at offset 0x{:x} to `{}` (addend {}) cannot be expressed in assembly",
                    n, r.offset, r.symbol, r.addend
                ),
                None => format!("{}: relocations differ", n),
            });
        }
        if x.code != y.code {
            let at = x.code.iter().zip(&y.code).position(|(p, q)| p != q).unwrap_or(0) / INST_BYTES * INST_BYTES;
            return Some(format!("{}+0x{:x}: the instruction's bytes differ from its text's encoding", n, at));
        }
    }
    None
}
