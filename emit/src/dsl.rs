//! Parser of the ISA description language used by the vendor documents
//! (`__DefBitFieldType`, `__DefGroup`, `__DefOptype`, `__DefOpcode`), and of
//! the project's own addition, `__DefLatency` (latency classes, below).
//!
//! This module is compiled twice: by `build.rs`, which turns the files in
//! `emit/spec/` into Rust tables, and into the library, so that tools and tests
//! can read description files at run time. It reads both the project's
//! transcriptions and raw vendor documents: prose sections (`__Description`,
//! `__ModifierInfo`, `__Semantics`, `__Simulation`) and prose lines inside
//! `__OperandInfo` are skipped; everything that looks like a definition must
//! parse, or the file is rejected with its line number.

use std::fmt;

/// A place in a description file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Loc {
    pub file: String,
    pub line: usize,
}

impl fmt::Display for Loc {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.file, self.line)
    }
}

/// A malformed definition.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DslError {
    pub loc: Loc,
    pub msg: String,
}

impl fmt::Display for DslError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.loc, self.msg)
    }
}

impl std::error::Error for DslError {}

fn err<T>(loc: &Loc, msg: impl Into<String>) -> Result<T, DslError> {
    Err(DslError { loc: loc.clone(), msg: msg.into() })
}

/// `__DefBitFieldType Name<bits>` with its values.
#[derive(Clone, Debug)]
pub struct BitFieldType {
    pub name: String,
    pub width: u32,
    pub values: Vec<(String, u64)>,
    pub loc: Loc,
}

/// `__DefLatency Name<cycles> fixed|variable`, then the optypes of the class,
/// one per line (`IADD;`). A project definition (docs/latencies.md): the
/// vendor documents give no timing. `fixed`: results are written `cycles`
/// after issue; `variable`: they are signalled through a write scoreboard
/// (the syntax lines carry `$wsb`), `cycles` being the simulator's figure.
#[derive(Clone, Debug)]
pub struct LatencyDecl {
    pub name: String,
    pub cycles: u32,
    pub variable: bool,
    pub optypes: Vec<(String, Loc)>,
    pub loc: Loc,
}

/// How a field's value is given in its declaration.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FieldInit {
    /// No value: the operand must be written.
    None,
    /// `= value`: the value when the operand or modifier is omitted.
    Default(String),
    /// `== value`: a constant that identifies the optype or form.
    Fixed(String),
}

/// `field<start, width> Type name ...;`
#[derive(Clone, Debug)]
pub struct FieldDecl {
    pub start: u32,
    pub width: u32,
    pub ty: String,
    pub name: String,
    pub init: FieldInit,
    pub loc: Loc,
}

/// An entry of `InList`, `OutList` or `Order`: a field name, a pseudo-operand
/// (`PR`), or a composite such as `C[vb, ura]` or `UR[urb, uridx]`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum OperandRef {
    Name(String),
    Composite { kind: String, parts: Vec<String> },
}

impl fmt::Display for OperandRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            OperandRef::Name(n) => f.write_str(n),
            OperandRef::Composite { kind, parts } => write!(f, "{}[{}]", kind, parts.join(", ")),
        }
    }
}

/// Expressions of `Bitwidth<…> = …` and `EncodingError<…> = …`.
#[derive(Clone, Debug, PartialEq)]
pub enum Expr {
    Num(i64),
    Ident(String),
    Str(String),
    Not(Box<Expr>),
    Bin(BinOp, Box<Expr>, Box<Expr>),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BinOp {
    Add,
    Sub,
    Mul,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    And,
    Or,
}

/// Directives of `__OperandInfo`.
#[derive(Clone, Debug)]
pub enum Directive {
    InList(Vec<OperandRef>),
    OutList(Vec<OperandRef>),
    Order(Vec<OperandRef>),
    Bitwidth(String, Expr),
    AsmFormat(String, String),
    ModiOrder(Vec<String>),
}

/// `EncodingError<Kind, "message"> = condition;`
#[derive(Clone, Debug)]
pub struct ExceptionDecl {
    pub kind: String,
    pub message: String,
    pub cond: Expr,
    pub loc: Loc,
}

/// A modifier placeholder list in a `__Syntax` block: `.itype = {.S32*, .U32}`.
#[derive(Clone, Debug)]
pub struct PlaceholderDef {
    pub name: String,
    /// Value names in the order written, and which one carries `*`.
    pub values: Vec<String>,
    pub default: Option<String>,
    pub loc: Loc,
}

/// One of the four definition kinds.
#[derive(Clone, Debug)]
pub struct Def {
    pub kind: DefKind,
    pub name: String,
    pub parent: Option<String>,
    pub fields: Vec<FieldDecl>,
    pub syntax: Vec<(String, Loc)>,
    pub placeholders: Vec<PlaceholderDef>,
    pub directives: Vec<(Directive, Loc)>,
    pub exceptions: Vec<ExceptionDecl>,
    pub examples: Vec<(String, Loc)>,
    pub loc: Loc,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DefKind {
    Group,
    Optype,
    Opcode,
}

/// Everything one file defines.
#[derive(Clone, Debug, Default)]
pub struct SpecFile {
    pub types: Vec<BitFieldType>,
    pub defs: Vec<Def>,
    pub latencies: Vec<LatencyDecl>,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Section {
    None,
    Encoding,
    Syntax,
    OperandInfo,
    Exception,
    Examples,
    Prose,
}

/// Removes a `//` comment.
pub fn strip_comment(line: &str) -> &str {
    match line.find("//") {
        Some(i) => &line[..i],
        None => line,
    }
}

/// Parses one description file.
pub fn parse_file(file: &str, text: &str) -> Result<SpecFile, DslError> {
    let mut out = SpecFile::default();
    let mut cur_type: Option<BitFieldType> = None;
    let mut cur_def: Option<Def> = None;
    let mut cur_lat: Option<LatencyDecl> = None;
    let mut section = Section::None;
    let mut in_code = false;

    let flush = |out: &mut SpecFile, t: &mut Option<BitFieldType>, d: &mut Option<Def>, l: &mut Option<LatencyDecl>| {
        if let Some(t) = t.take() {
            out.types.push(t);
        }
        if let Some(d) = d.take() {
            out.defs.push(d);
        }
        if let Some(l) = l.take() {
            out.latencies.push(l);
        }
    };

    for (idx, raw) in text.lines().enumerate() {
        let loc = Loc { file: file.to_string(), line: idx + 1 };
        let trimmed = raw.trim();
        if let Some(rest) = trimmed.strip_prefix("__Def") {
            flush(&mut out, &mut cur_type, &mut cur_def, &mut cur_lat);
            section = Section::None;
            in_code = false;
            let line = strip_comment(rest).trim();
            if let Some(rest) = line.strip_prefix("Latency") {
                cur_lat = Some(parse_latency_header(rest.trim(), &loc)?);
            } else if let Some(rest) = line.strip_prefix("BitFieldType") {
                let (name, width) = parse_name_width(rest.trim(), &loc)?;
                cur_type = Some(BitFieldType { name, width, values: Vec::new(), loc });
            } else {
                let (kind, rest) = if let Some(r) = line.strip_prefix("Group") {
                    (DefKind::Group, r)
                } else if let Some(r) = line.strip_prefix("Optype") {
                    (DefKind::Optype, r)
                } else if let Some(r) = line.strip_prefix("Opcode") {
                    (DefKind::Opcode, r)
                } else {
                    return err(&loc, format!("unknown definition `__Def{}`", line));
                };
                let (name, parent) = parse_def_header(rest.trim(), &loc)?;
                if kind != DefKind::Group && parent.is_none() {
                    return err(&loc, format!("`{}` needs a parent in `: [Parent]`", name));
                }
                cur_def = Some(Def {
                    kind,
                    name,
                    parent,
                    fields: Vec::new(),
                    syntax: Vec::new(),
                    placeholders: Vec::new(),
                    directives: Vec::new(),
                    exceptions: Vec::new(),
                    examples: Vec::new(),
                    loc,
                });
            }
            continue;
        }
        if trimmed.starts_with("__") && !in_code {
            let name = strip_comment(trimmed).trim();
            section = match name {
                "__Encoding" => Section::Encoding,
                "__Syntax" => Section::Syntax,
                "__OperandInfo" => Section::OperandInfo,
                "__Exception" => Section::Exception,
                "__Examples" => Section::Examples,
                "__Description" | "__ModifierInfo" | "__Semantics" | "__Simulation" => Section::Prose,
                _ => return err(&loc, format!("unknown section `{}`", name)),
            };
            if cur_def.is_none() {
                return err(&loc, format!("section `{}` outside a definition", name));
            }
            continue;
        }
        if trimmed.starts_with("```") {
            in_code = !in_code;
            continue;
        }
        if let Some(l) = cur_lat.as_mut() {
            let Some(name) = list_item(trimmed, &loc, "an optype of a latency class")? else { continue };
            if !is_ident(name) {
                return err(&loc, format!("bad optype name `{}` in latency class `{}`", name, l.name));
            }
            l.optypes.push((name.to_string(), loc));
            continue;
        }
        if let Some(t) = cur_type.as_mut() {
            let Some(line) = list_item(trimmed, &loc, "a bit-field value")? else { continue };
            let (name, value) = match line.split_once('=') {
                Some((n, v)) => (n.trim(), Some(parse_int(v.trim(), &loc)?)),
                None => (line, None),
            };
            if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
                return err(&loc, format!("bad bit-field value name `{}`", name));
            }
            let value = value.unwrap_or_else(|| t.values.last().map(|v| v.1 + 1).unwrap_or(0));
            if t.values.iter().any(|v| v.0 == name) {
                return err(&loc, format!("value `{}` defined twice in `{}`", name, t.name));
            }
            t.values.push((name.to_string(), value));
            continue;
        }
        let Some(def) = cur_def.as_mut() else {
            if strip_comment(trimmed).trim().is_empty() {
                continue;
            }
            return err(&loc, "text outside any definition");
        };
        match section {
            Section::None => {
                if !strip_comment(trimmed).trim().is_empty() {
                    return err(&loc, "expected a section such as `__Encoding`");
                }
            }
            Section::Prose => {}
            Section::Encoding => {
                let line = strip_comment(trimmed).trim();
                if line.is_empty() {
                    continue;
                }
                def.fields.push(parse_field(line, &loc)?);
            }
            Section::Syntax => {
                if !in_code {
                    continue;
                }
                let line = strip_comment(trimmed).trim();
                if line.is_empty() {
                    continue;
                }
                if let Some(p) = parse_placeholder_def(line, &loc)? {
                    def.placeholders.push(p);
                } else {
                    def.syntax.push((line.to_string(), loc));
                }
            }
            Section::Examples => {
                if !in_code {
                    continue;
                }
                let line = strip_comment(trimmed).trim();
                if !line.is_empty() {
                    def.examples.push((line.to_string(), loc));
                }
            }
            Section::OperandInfo | Section::Exception => {
                let line = strip_comment(trimmed).trim();
                if let Some(d) = parse_directive(line, &loc)? {
                    match d {
                        Parsed::Directive(d) => def.directives.push((d, loc)),
                        Parsed::Exception(e) => def.exceptions.push(e),
                    }
                }
            }
        }
    }
    flush(&mut out, &mut cur_type, &mut cur_def, &mut cur_lat);
    Ok(out)
}

fn parse_name_width(s: &str, loc: &Loc) -> Result<(String, u32), DslError> {
    let (name, rest) =
        s.split_once('<').ok_or_else(|| DslError { loc: loc.clone(), msg: format!("expected `Name<bits>`, found `{}`", s) })?;
    let width = rest.strip_suffix('>').ok_or_else(|| DslError { loc: loc.clone(), msg: "expected `>` after the width".into() })?;
    let width = parse_int(width.trim(), loc)? as u32;
    let name = name.trim();
    if !is_ident(name) {
        return err(loc, format!("bad type name `{}`", name));
    }
    if width == 0 || width > 32 {
        return err(loc, format!("width {} of `{}` is not in 1..=32", width, name));
    }
    Ok((name.to_string(), width))
}

/// One `item;` line of a `__DefBitFieldType` or `__DefLatency` body, without
/// its comment and `;`; `None` for a blank line.
fn list_item<'t>(line: &'t str, loc: &Loc, what: &str) -> Result<Option<&'t str>, DslError> {
    let line = strip_comment(line).trim();
    if line.is_empty() {
        return Ok(None);
    }
    match line.strip_suffix(';') {
        Some(item) => Ok(Some(item.trim())),
        None => err(loc, format!("expected `;` after {}", what)),
    }
}

/// The description files under `dir`: every `*.isa` file, recursively, in
/// name order.
pub fn description_files(dir: &std::path::Path) -> std::io::Result<Vec<std::path::PathBuf>> {
    let mut entries = std::fs::read_dir(dir)?.map(|e| e.map(|e| e.path())).collect::<Result<Vec<_>, _>>()?;
    entries.sort();
    let mut out = Vec::new();
    for p in entries {
        if p.is_dir() {
            out.extend(description_files(&p)?);
        } else if p.extension().is_some_and(|e| e == "isa") {
            out.push(p);
        }
    }
    Ok(out)
}

/// `Name<cycles> fixed|variable` after `__DefLatency`.
fn parse_latency_header(s: &str, loc: &Loc) -> Result<LatencyDecl, DslError> {
    let (head, kind) = s
        .rsplit_once('>')
        .map(|(h, k)| (format!("{}>", h), k.trim()))
        .ok_or_else(|| DslError { loc: loc.clone(), msg: format!("expected `Name<cycles> fixed|variable`, found `{}`", s) })?;
    let (name, cycles) = head.split_once('<').unwrap_or((&head, ""));
    let name = name.trim();
    if !is_ident(name) {
        return err(loc, format!("bad latency class name `{}`", name));
    }
    let cycles = parse_int(cycles.trim_end_matches('>').trim(), loc)?;
    if cycles == 0 || cycles > u16::MAX as u64 {
        return err(loc, format!("latency {} of `{}` is not in 1..=65535 cycles", cycles, name));
    }
    let variable = match kind {
        "fixed" => false,
        "variable" => true,
        _ => return err(loc, format!("expected `fixed` or `variable` after `{}<{}>`, found `{}`", name, cycles, kind)),
    };
    Ok(LatencyDecl { name: name.to_string(), cycles: cycles as u32, variable, optypes: Vec::new(), loc: loc.clone() })
}

fn parse_def_header(s: &str, loc: &Loc) -> Result<(String, Option<String>), DslError> {
    let (name, parent) = match s.split_once(':') {
        Some((n, p)) => {
            let p = p.trim();
            let p = p
                .strip_prefix('[')
                .and_then(|p| p.strip_suffix(']'))
                .ok_or_else(|| DslError { loc: loc.clone(), msg: format!("expected `[Parent]`, found `{}`", p) })?
                .trim();
            (n.trim(), Some(p.to_string()))
        }
        None => (s.trim(), None),
    };
    if !is_ident(name) {
        return err(loc, format!("bad definition name `{}`", name));
    }
    if let Some(p) = &parent {
        if !is_ident(p) {
            return err(loc, format!("bad parent name `{}`", p));
        }
    }
    Ok((name.to_string(), parent))
}

/// `field<start, width> Type name[.sub] [= default | == fixed];`
fn parse_field(line: &str, loc: &Loc) -> Result<FieldDecl, DslError> {
    let body =
        line.strip_suffix(';').ok_or_else(|| DslError { loc: loc.clone(), msg: "expected `;` at the end of the field".into() })?.trim();
    let rest = body
        .strip_prefix("field")
        .ok_or_else(|| DslError { loc: loc.clone(), msg: format!("expected `field<start, width> Type name;`, found `{}`", line) })?
        .trim_start();
    let rest = rest.strip_prefix('<').ok_or_else(|| DslError { loc: loc.clone(), msg: "expected `<` after `field`".into() })?;
    let (pos, rest) =
        rest.split_once('>').ok_or_else(|| DslError { loc: loc.clone(), msg: "expected `>` closing the bit range".into() })?;
    let (start, width) = pos.split_once(',').ok_or_else(|| DslError { loc: loc.clone(), msg: "expected `start, width`".into() })?;
    let start = parse_int(start.trim(), loc)? as u32;
    let width = parse_int(width.trim(), loc)? as u32;
    if width == 0 || width > 64 || start + width > 128 {
        return err(loc, format!("bit range <{}, {}> is outside the 128-bit instruction", start, width));
    }
    let (decl, init) = if let Some((d, v)) = rest.split_once("==") {
        (d, FieldInit::Fixed(v.trim().to_string()))
    } else if let Some((d, v)) = rest.split_once('=') {
        (d, FieldInit::Default(v.trim().to_string()))
    } else {
        (rest, FieldInit::None)
    };
    match &init {
        FieldInit::Fixed(v) | FieldInit::Default(v) if v.is_empty() => return err(loc, "missing value after `=`"),
        _ => {}
    }
    let mut words = decl.split_whitespace();
    let ty = words.next().ok_or_else(|| DslError { loc: loc.clone(), msg: "missing field type".into() })?;
    let name = words.next().ok_or_else(|| DslError { loc: loc.clone(), msg: "missing field name".into() })?;
    if let Some(extra) = words.next() {
        return err(loc, format!("unexpected `{}` after the field name", extra));
    }
    if !is_ident(ty) {
        return err(loc, format!("bad field type `{}`", ty));
    }
    if !name.split('.').all(is_ident) {
        return err(loc, format!("bad field name `{}`", name));
    }
    Ok(FieldDecl { start, width, ty: ty.to_string(), name: name.to_string(), init, loc: loc.clone() })
}

/// `.name = {.A*, .B}` (the leading dot is sometimes missing in the documents).
fn parse_placeholder_def(line: &str, loc: &Loc) -> Result<Option<PlaceholderDef>, DslError> {
    let Some((lhs, rhs)) = line.split_once('=') else { return Ok(None) };
    let lhs = lhs.trim();
    let name = lhs.strip_prefix('.').unwrap_or(lhs);
    if !is_ident(name) || !rhs.trim_start().starts_with('{') {
        return Ok(None);
    }
    let rhs = rhs.trim().trim_end_matches(';').trim();
    let inner = rhs
        .strip_prefix('{')
        .and_then(|r| r.strip_suffix('}'))
        .ok_or_else(|| DslError { loc: loc.clone(), msg: format!("expected `{{.A, .B}}` after `{} =`", lhs) })?;
    let mut values = Vec::new();
    let mut default = None;
    for v in inner.split(',') {
        let v = v.trim();
        let v = v.strip_prefix('.').unwrap_or(v);
        let (v, star) = match v.strip_suffix('*') {
            Some(v) => (v.trim(), true),
            None => (v, false),
        };
        if v.is_empty() || !v.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            return err(loc, format!("bad modifier value `{}` in `{}`", v, lhs));
        }
        if star {
            if default.is_some() {
                return err(loc, format!("two defaults marked with `*` in `{}`", lhs));
            }
            default = Some(v.to_string());
        }
        values.push(v.to_string());
    }
    Ok(Some(PlaceholderDef { name: name.to_string(), values, default, loc: loc.clone() }))
}

enum Parsed {
    Directive(Directive),
    Exception(ExceptionDecl),
}

const DIRECTIVES: &[&str] = &["InList", "OutList", "Order", "Bitwidth", "AsmFormat", "ModiOrder", "EncodingError"];

fn parse_directive(line: &str, loc: &Loc) -> Result<Option<Parsed>, DslError> {
    let Some(lt) = line.find('<') else { return Ok(None) };
    let kw = line[..lt].trim();
    if !is_ident(kw) {
        return Ok(None); // prose
    }
    if !DIRECTIVES.contains(&kw) {
        if line.ends_with(';') {
            return err(loc, format!("unknown directive `{}`", kw));
        }
        return Ok(None);
    }
    let body = line.strip_suffix(';').ok_or_else(|| DslError { loc: loc.clone(), msg: format!("expected `;` after `{}<…>`", kw) })?;
    let close = matching_angle(body, lt).ok_or_else(|| DslError { loc: loc.clone(), msg: format!("unclosed `<` in `{}`", kw) })?;
    let args = &body[lt + 1..close];
    let rhs = body[close + 1..].trim();
    let rhs = if rhs.is_empty() {
        None
    } else {
        Some(
            rhs.strip_prefix('=')
                .ok_or_else(|| DslError { loc: loc.clone(), msg: format!("expected `=` or `;` after `{}<…>`", kw) })?
                .trim(),
        )
    };
    fn need_rhs<'s>(rhs: Option<&'s str>, kw: &str, loc: &Loc) -> Result<&'s str, DslError> {
        rhs.ok_or_else(|| DslError { loc: loc.clone(), msg: format!("`{}` needs `= value`", kw) })
    }
    let no_rhs = |rhs: Option<&str>| -> Result<(), DslError> {
        if rhs.is_some() {
            return err(loc, format!("`{}` takes no `= value`", kw));
        }
        Ok(())
    };
    let d = match kw {
        "InList" | "OutList" | "Order" => {
            no_rhs(rhs)?;
            let list = parse_operand_list(args, loc)?;
            match kw {
                "InList" => Directive::InList(list),
                "OutList" => Directive::OutList(list),
                _ => Directive::Order(list),
            }
        }
        "Bitwidth" => {
            let name = args.trim();
            if !name.split('.').all(is_ident) {
                return err(loc, format!("bad operand name `{}` in Bitwidth", name));
            }
            Directive::Bitwidth(name.to_string(), parse_expr(need_rhs(rhs, kw, loc)?, loc)?)
        }
        "AsmFormat" => Directive::AsmFormat(args.trim().to_string(), need_rhs(rhs, kw, loc)?.to_string()),
        "ModiOrder" => {
            no_rhs(rhs)?;
            Directive::ModiOrder(args.split(',').map(|s| s.trim().to_string()).collect())
        }
        _ => {
            let (kind, msg) = args
                .split_once(',')
                .ok_or_else(|| DslError { loc: loc.clone(), msg: "expected `EncodingError<Kind, \"message\">`".into() })?;
            let msg = msg.trim();
            let msg = msg
                .strip_prefix('"')
                .and_then(|m| m.strip_suffix('"'))
                .ok_or_else(|| DslError { loc: loc.clone(), msg: "the EncodingError message must be a quoted string".into() })?;
            return Ok(Some(Parsed::Exception(ExceptionDecl {
                kind: kind.trim().to_string(),
                message: msg.to_string(),
                cond: parse_expr(need_rhs(rhs, kw, loc)?, loc)?,
                loc: loc.clone(),
            })));
        }
    };
    Ok(Some(Parsed::Directive(d)))
}

fn matching_angle(s: &str, open: usize) -> Option<usize> {
    let mut depth = 0;
    for (i, c) in s.char_indices().skip_while(|(i, _)| *i < open) {
        match c {
            '<' => depth += 1,
            '>' => {
                depth -= 1;
                if depth == 0 {
                    return Some(i);
                }
            }
            _ => {}
        }
    }
    None
}

fn parse_operand_list(s: &str, loc: &Loc) -> Result<Vec<OperandRef>, DslError> {
    let mut out = Vec::new();
    let mut depth = 0;
    let mut start = 0;
    let bytes: Vec<char> = s.chars().collect();
    let mut items = Vec::new();
    for (i, c) in bytes.iter().enumerate() {
        match c {
            '[' => depth += 1,
            ']' => depth -= 1,
            ',' if depth == 0 => {
                items.push(bytes[start..i].iter().collect::<String>());
                start = i + 1;
            }
            _ => {}
        }
    }
    let last: String = bytes[start..].iter().collect();
    if !last.trim().is_empty() || !items.is_empty() {
        items.push(last);
    }
    for item in items {
        let item = item.trim();
        if let Some(open) = item.find('[') {
            let kind = item[..open].trim();
            let inner = item[open + 1..]
                .strip_suffix(']')
                .ok_or_else(|| DslError { loc: loc.clone(), msg: format!("unclosed `[` in `{}`", item) })?;
            let parts: Vec<String> = inner.split(',').map(|p| p.trim().to_string()).collect();
            if !(kind.is_empty() || is_ident(kind)) || parts.iter().any(|p| !p.split('.').all(is_ident)) {
                return err(loc, format!("bad composite operand `{}`", item));
            }
            out.push(OperandRef::Composite { kind: kind.to_string(), parts });
        } else {
            if !item.split('.').all(is_ident) {
                return err(loc, format!("bad operand name `{}`", item));
            }
            out.push(OperandRef::Name(item.to_string()));
        }
    }
    Ok(out)
}

/// Integer literal: decimal or `0x` hex.
pub fn parse_int(s: &str, loc: &Loc) -> Result<u64, DslError> {
    let r = if let Some(h) = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) { u64::from_str_radix(h, 16) } else { s.parse::<u64>() };
    r.map_err(|_| DslError { loc: loc.clone(), msg: format!("expected a number, found `{}`", s) })
}

fn is_ident(s: &str) -> bool {
    let mut chars = s.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_') && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

// ---- expressions -------------------------------------------------------

#[derive(Clone, Debug, PartialEq)]
enum Tok {
    Num(i64),
    Ident(String),
    Str(String),
    Op(&'static str),
}

fn lex_expr(s: &str, loc: &Loc) -> Result<Vec<Tok>, DslError> {
    let chars: Vec<char> = s.chars().collect();
    let mut i = 0;
    let mut out = Vec::new();
    const OPS: &[&str] = &["==", "!=", "<=", ">=", "&&", "||", "+", "-", "*", "(", ")", "<", ">", "!"];
    while i < chars.len() {
        let c = chars[i];
        if c.is_whitespace() {
            i += 1;
        } else if c.is_ascii_digit() {
            let st = i;
            while i < chars.len() && chars[i].is_ascii_alphanumeric() {
                i += 1;
            }
            let t: String = chars[st..i].iter().collect();
            out.push(Tok::Num(parse_int(&t, loc)? as i64));
        } else if c.is_ascii_alphabetic() || c == '_' {
            let st = i;
            while i < chars.len() && (chars[i].is_ascii_alphanumeric() || chars[i] == '_' || chars[i] == '.') {
                i += 1;
            }
            let t: String = chars[st..i].iter().collect();
            out.push(match t.as_str() {
                "and" => Tok::Op("&&"),
                "or" => Tok::Op("||"),
                "not" => Tok::Op("!"),
                _ => Tok::Ident(t),
            });
        } else if c == '"' {
            let st = i + 1;
            i += 1;
            while i < chars.len() && chars[i] != '"' {
                i += 1;
            }
            if i >= chars.len() {
                return err(loc, "unterminated string in expression");
            }
            out.push(Tok::Str(chars[st..i].iter().collect()));
            i += 1;
        } else {
            let rest: String = chars[i..].iter().collect();
            let Some(op) = OPS.iter().find(|o| rest.starts_with(**o)) else {
                return err(loc, format!("unexpected `{}` in expression", c));
            };
            out.push(Tok::Op(op));
            i += op.len();
        }
    }
    Ok(out)
}

/// Parses a condition or width expression: `32 + (width=="64")*32`,
/// `(dtype=="F64H") and (mufuop!="RCP")`.
pub fn parse_expr(s: &str, loc: &Loc) -> Result<Expr, DslError> {
    let toks = lex_expr(s, loc)?;
    let mut p = ExprParser { toks, pos: 0, loc };
    let e = p.or()?;
    if p.pos != p.toks.len() {
        return err(loc, format!("unexpected `{:?}` in expression `{}`", p.toks[p.pos], s));
    }
    Ok(e)
}

struct ExprParser<'a> {
    toks: Vec<Tok>,
    pos: usize,
    loc: &'a Loc,
}

impl ExprParser<'_> {
    fn eat(&mut self, op: &str) -> bool {
        if matches!(self.toks.get(self.pos), Some(Tok::Op(o)) if *o == op) {
            self.pos += 1;
            true
        } else {
            false
        }
    }
    fn or(&mut self) -> Result<Expr, DslError> {
        let mut l = self.and()?;
        while self.eat("||") {
            l = Expr::Bin(BinOp::Or, Box::new(l), Box::new(self.and()?));
        }
        Ok(l)
    }
    fn and(&mut self) -> Result<Expr, DslError> {
        let mut l = self.cmp()?;
        while self.eat("&&") {
            l = Expr::Bin(BinOp::And, Box::new(l), Box::new(self.cmp()?));
        }
        Ok(l)
    }
    fn cmp(&mut self) -> Result<Expr, DslError> {
        let l = self.add()?;
        for (s, op) in [("==", BinOp::Eq), ("!=", BinOp::Ne), ("<=", BinOp::Le), (">=", BinOp::Ge), ("<", BinOp::Lt), (">", BinOp::Gt)] {
            if self.eat(s) {
                return Ok(Expr::Bin(op, Box::new(l), Box::new(self.add()?)));
            }
        }
        Ok(l)
    }
    fn add(&mut self) -> Result<Expr, DslError> {
        let mut l = self.mul()?;
        loop {
            if self.eat("+") {
                l = Expr::Bin(BinOp::Add, Box::new(l), Box::new(self.mul()?));
            } else if self.eat("-") {
                l = Expr::Bin(BinOp::Sub, Box::new(l), Box::new(self.mul()?));
            } else {
                return Ok(l);
            }
        }
    }
    fn mul(&mut self) -> Result<Expr, DslError> {
        let mut l = self.unary()?;
        while self.eat("*") {
            l = Expr::Bin(BinOp::Mul, Box::new(l), Box::new(self.unary()?));
        }
        Ok(l)
    }
    fn unary(&mut self) -> Result<Expr, DslError> {
        if self.eat("!") {
            return Ok(Expr::Not(Box::new(self.unary()?)));
        }
        if self.eat("(") {
            let e = self.or()?;
            if !self.eat(")") {
                return err(self.loc, "expected `)` in expression");
            }
            return Ok(e);
        }
        let t = self.toks.get(self.pos).cloned();
        self.pos += 1;
        match t {
            Some(Tok::Num(n)) => Ok(Expr::Num(n)),
            Some(Tok::Ident(s)) => Ok(Expr::Ident(s)),
            Some(Tok::Str(s)) => Ok(Expr::Str(s)),
            other => err(self.loc, format!("expected a value in expression, found {:?}", other)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_types_and_defs() {
        let text = "__DefBitFieldType IType<1>\n    S32 = 0x0;\n    U32;\n\n__DefOptype X : [G]\n  __Encoding\n    field<0, 8> Optype optype == X; // c\n  __Description\nprose <not> parsed;\n  __OperandInfo\n    InList<pg, C[vb, ura]>;\n    Bitwidth<rd> = 32 + (width==\"64\")*32;\n";
        let f = parse_file("t.isa", text).unwrap();
        assert_eq!(f.types[0].values, vec![("S32".to_string(), 0), ("U32".to_string(), 1)]);
        let d = &f.defs[0];
        assert_eq!(d.fields[0].init, FieldInit::Fixed("X".into()));
        assert_eq!(d.directives.len(), 2);
    }

    #[test]
    fn reports_line_of_malformed_field() {
        let text = "__DefOptype X : [G]\n  __Encoding\n    field<0, 8 Optype optype;\n";
        let e = parse_file("bad.isa", text).unwrap_err();
        assert_eq!(e.loc.line, 3);
        assert!(e.to_string().starts_with("bad.isa:3:"), "{}", e);
    }

    #[test]
    fn field_outside_instruction_is_rejected() {
        let text = "__DefOptype X : [G]\n  __Encoding\n    field<120, 9> Reg r;\n";
        assert!(parse_file("b.isa", text).unwrap_err().msg.contains("outside"));
    }
}
