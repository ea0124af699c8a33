//! Assembly syntax: the `__Syntax` lines of an optype compiled, per opcode
//! form, into [`Pattern`]s that drive both the assembler and the disassembler.
//!
//! A pattern says which modifiers follow the mnemonic (literal `.X` that fixes
//! a field, placeholders like `.itype` that name a field's value), and which
//! operands follow in which order, each with its prefixes (`-`, `~`, `!`,
//! `|…|`) and suffix (`.bsel`). The operand *values* come from the form's
//! `Order<…>` list; the syntax line is aligned onto it by operand names and
//! kinds. Fields a syntax line does not mention are pinned to their default
//! (or to RZ/PT/0) in that line's mode.

use crate::dsl::{Def, DslError, Loc};
use crate::model::{Field, FieldValues, Isa, Kind, List, Operand, Str, ToRust};

/// A modifier item after the mnemonic.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Mod {
    /// Part of the mnemonic with no field (`.WIDE`, `.2A`); an optional one
    /// (`{.LUT}`) is an accepted spelling that encodes nothing and is not printed.
    Lit { text: Str, optional: bool },
    /// A literal that fixes a field (`.X`, `{.LO}`); when optional its absence
    /// means the field's default.
    Fixed { field: u16, value: u64, text: Str, optional: bool },
    /// A placeholder (`.itype`): one of `allowed`; `omit` is the value that
    /// may be left out.
    Var { field: u16, allowed: List<u64>, omit: Option<u64> },
}

/// How a `-` prefix is shown.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NegStyle {
    Minus,
    /// `AsmFormat<x.neg> = CvtINegX(x.neg, ext)`: shown as `~` while the field
    /// `ext` holds `value` (.X mode).
    TildeWhen {
        field: u16,
        value: u64,
    },
}

/// One operand position of a pattern.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Slot {
    pub optional: bool,
    pub operand: Operand,
    pub neg: Option<(u16, NegStyle)>,
    pub bitnot: Option<u16>,
    pub not: Option<u16>,
    pub abs: Option<u16>,
    pub suffix: Option<u16>,
}

/// One syntax line of an optype as it applies to one form.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pattern {
    /// Index of the line in the optype's syntax list.
    pub line: u16,
    pub mnemonic: Str,
    pub mods: List<Mod>,
    pub slots: List<Slot>,
    /// Whether the line carries `$wsb` (the instruction has variable latency
    /// and may set a write scoreboard).
    pub wsb: bool,
    /// Fields the line does not express, with the value they must hold.
    pub pinned: List<(u16, u64)>,
}

impl Pattern {
    /// Whether `vals` is expressible by this pattern.
    pub fn accepts(&self, fields: &[Field], vals: impl FieldValues) -> bool {
        for m in self.mods.iter() {
            match m {
                Mod::Lit { .. } => {}
                Mod::Fixed { field, value, optional, .. } => {
                    let v = vals.value(*field as usize);
                    let f = &fields[*field as usize];
                    if v != *value && !(*optional && Some(v) == f.default.or(f.fixed)) {
                        return false;
                    }
                }
                Mod::Var { field, allowed, .. } => {
                    if !allowed.contains(&vals.value(*field as usize)) {
                        return false;
                    }
                }
            }
        }
        self.pinned.iter().all(|(f, v)| vals.value(*f as usize) == *v)
    }
}

// ---- compiling syntax lines ----------------------------------------------

#[derive(Debug)]
struct SynOperand {
    optional: bool,
    core: String,
    neg: bool,
    tilde: bool,
    not: bool,
    abs: bool,
    suffix: Option<String>,
}

#[derive(Debug)]
struct SynLine {
    mnemonic: String,
    mods: Vec<(String, bool)>,
    operands: Vec<SynOperand>,
    wsb: bool,
}

fn err<T>(loc: &Loc, msg: impl Into<String>) -> Result<T, DslError> {
    Err(DslError { loc: loc.clone(), msg: msg.into() })
}

fn parse_line(text: &str, loc: &Loc) -> Result<SynLine, DslError> {
    let text = text.trim().trim_end_matches(';').trim();
    let (body, sched) = match text.find('$') {
        Some(i) => (&text[..i], &text[i..]),
        None => return err(loc, "syntax line lacks the `$sched $req` control placeholders"),
    };
    let wsb = sched.split_whitespace().any(|w| w == "$wsb");
    for w in sched.split_whitespace() {
        if !matches!(w, "$sched" | "$req" | "$wsb") {
            return err(loc, format!("unknown control placeholder `{}`", w));
        }
    }
    // Mnemonic: up to the first blank outside braces.
    let chars: Vec<char> = body.trim().chars().collect();
    let mut i = 0;
    let mut depth = 0;
    while i < chars.len() && (depth > 0 || !chars[i].is_whitespace()) {
        match chars[i] {
            '{' => depth += 1,
            '}' => depth -= 1,
            _ => {}
        }
        i += 1;
    }
    let mn: String = chars[..i].iter().collect();
    let rest: String = chars[i..].iter().collect();
    let base_end = mn.find(['.', '{']).unwrap_or(mn.len());
    let mnemonic = mn[..base_end].to_string();
    if mnemonic.is_empty() || !mnemonic.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
        return err(loc, format!("bad mnemonic `{}`", mn));
    }
    let mut mods = Vec::new();
    let mut s = &mn[base_end..];
    while !s.is_empty() {
        if let Some(r) = s.strip_prefix("{.") {
            let end = r.find('}').ok_or_else(|| DslError { loc: loc.clone(), msg: format!("unclosed `{{` in `{}`", mn) })?;
            mods.push((r[..end].to_string(), true));
            s = &r[end + 1..];
        } else if let Some(r) = s.strip_prefix('.') {
            let end = r.find(['.', '{']).unwrap_or(r.len());
            mods.push((r[..end].to_string(), false));
            s = &r[end..];
        } else {
            return err(loc, format!("cannot read modifiers `{}`", s));
        }
    }
    for (m, _) in &mods {
        if m.is_empty() || !m.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            return err(loc, format!("bad modifier `{}` in `{}`", m, mn));
        }
    }
    Ok(SynLine { mnemonic, mods, operands: parse_operands(&rest, loc)?, wsb })
}

/// Splits the operand part of a syntax line into operands. A `{…}` group that
/// holds a comma or a whole operand is an optional operand; other groups are
/// decorations (`{-}`, `{!}`, `{|}`, `{~}`, `{.hsel}`, `{+SImm9}`).
fn parse_operands(s: &str, loc: &Loc) -> Result<Vec<SynOperand>, DslError> {
    let chars: Vec<char> = s.chars().collect();
    // Cut into top-level pieces at commas outside brackets and braces, except
    // that an optional group `{, x}` or `{x, }` is its own piece.
    let mut pieces: Vec<(String, bool)> = Vec::new();
    let mut cur = String::new();
    let mut i = 0;
    let mut bracket = 0;
    while i < chars.len() {
        let c = chars[i];
        if c == '{' && bracket == 0 {
            // Find the matching brace.
            let mut d = 0;
            let mut j = i;
            loop {
                if j >= chars.len() {
                    return err(loc, "unclosed `{` in syntax operands");
                }
                match chars[j] {
                    '{' => d += 1,
                    '}' => {
                        d -= 1;
                        if d == 0 {
                            break;
                        }
                    }
                    _ => {}
                }
                j += 1;
            }
            let inner: String = chars[i + 1..j].iter().collect();
            if inner.contains(',') {
                if !cur.trim().is_empty() {
                    pieces.push((std::mem::take(&mut cur), false));
                }
                cur.clear();
                let inner = inner.replace(',', " ");
                pieces.push((inner.trim().to_string(), true));
            } else {
                cur.push('{');
                cur.push_str(&inner);
                cur.push('}');
            }
            i = j + 1;
            continue;
        }
        match c {
            '[' => bracket += 1,
            ']' => bracket -= 1,
            _ => {}
        }
        if c == ',' && bracket == 0 {
            if !cur.trim().is_empty() {
                pieces.push((std::mem::take(&mut cur), false));
            }
            cur.clear();
        } else {
            cur.push(c);
        }
        i += 1;
    }
    if !cur.trim().is_empty() {
        pieces.push((cur, false));
    }
    let mut out = Vec::new();
    for (p, optional) in pieces {
        out.push(parse_operand(p.trim(), optional, loc)?);
    }
    Ok(out)
}

fn parse_operand(p: &str, optional: bool, loc: &Loc) -> Result<SynOperand, DslError> {
    let mut op = SynOperand { optional, core: String::new(), neg: false, tilde: false, not: false, abs: false, suffix: None };
    let mut s = p.trim();
    loop {
        let before = s;
        for (pre, flag) in [("{-}", 0), ("{~}", 1), ("{!}", 2), ("{|}", 3), ("-", 0), ("~", 1), ("!", 2), ("|", 3)] {
            if let Some(r) = s.strip_prefix(pre) {
                match flag {
                    0 => op.neg = true,
                    1 => op.tilde = true,
                    2 => op.not = true,
                    _ => op.abs = true,
                }
                s = r.trim_start();
                break;
            }
        }
        if s == before {
            break;
        }
    }
    for post in ["{|}", "|"] {
        if let Some(r) = s.strip_suffix(post) {
            s = r.trim_end();
        }
    }
    // A suffix modifier `{.bsel}` or `.hsel` after a plain name.
    if let Some(i) = s.find("{.") {
        if s.ends_with('}') && !s[..i].contains('[') {
            op.suffix = Some(s[i + 2..s.len() - 1].to_string());
            s = s[..i].trim_end();
        }
    } else if let Some(i) = s.find('.') {
        if !s.contains('[') {
            op.suffix = Some(s[i + 1..].to_string());
            s = &s[..i];
        }
    }
    if s.is_empty() {
        return err(loc, format!("empty operand in `{}`", p));
    }
    op.core = s.to_string();
    Ok(op)
}

/// How well a syntax operand fits an `Order` entry: `None` if it cannot.
fn fit(isa_fields: &[Field], syn: &str, o: &Operand) -> Option<u32> {
    let lower = syn.to_ascii_lowercase();
    let is = |pfx: &str| syn.starts_with(pfx);
    let bare = |p: &str| syn.strip_prefix(p).map(|r| r.len() == 1 && r.chars().all(|c| c.is_ascii_lowercase())).unwrap_or(false);
    match o {
        Operand::Pseudo(n) => (syn == &**n).then_some(3),
        Operand::CMemIndexed { .. } => syn.starts_with("c[").then_some(3).or(is("Src").then_some(1)),
        Operand::RegIndexed { file, .. } => (syn.starts_with(&format!("{}[", file))).then_some(3),
        Operand::Address { .. } => syn.starts_with('[').then_some(3),
        Operand::Field(i) => {
            let f = &isa_fields[*i as usize];
            if lower == *f.name {
                return Some(3);
            }
            if syn.contains('[') {
                return (syn.starts_with("c[") && f.kind == Kind::CMem).then_some(2);
            }
            let k = f.kind;
            let source = matches!(k, Kind::Reg | Kind::UReg | Kind::CMem) || k.is_immediate();
            if is("UImm") || is("SImm") || is("Imm") {
                return k.is_immediate().then_some(1);
            }
            // A register name also fits the other file's register where a
            // form takes that source from the uniform file (PLOP3_U's `upc`).
            if bare("R") || bare("UR") {
                return matches!(k, Kind::Reg | Kind::UReg).then_some(1);
            }
            if bare("up") || bare("p") {
                return matches!(k, Kind::Pred | Kind::UPred).then_some(1);
            }
            if syn.chars().next().is_some_and(|c| c.is_ascii_uppercase()) && !syn.chars().all(|c| c.is_ascii_uppercase()) {
                return source.then_some(1);
            }
            None
        }
    }
}

/// Aligns syntax operands onto order entries: every syntax operand gets an
/// entry, in order, maximizing the fit; ties go to the earliest entry.
fn align(fields: &[Field], syn: &[SynOperand], order: &[Operand]) -> Option<Vec<usize>> {
    let (n, m) = (syn.len(), order.len());
    // best[i][j]: best score placing syn[i..] into order[j..].
    let mut best = vec![vec![None::<u32>; m + 1]; n + 1];
    for j in 0..=m {
        best[n][j] = Some(0);
    }
    for i in (0..n).rev() {
        for j in (0..m).rev() {
            let skip = best[i][j + 1];
            let take = fit(fields, &syn[i].core, &order[j]).and_then(|s| best[i + 1][j + 1].map(|b| b + s));
            best[i][j] = match (skip, take) {
                (Some(a), Some(b)) => Some(a.max(b)),
                (a, b) => a.or(b),
            };
        }
    }
    best[0][0]?;
    let mut out = Vec::new();
    let mut j = 0;
    for i in 0..n {
        let target = best[i][j]?;
        loop {
            if let Some(s) = fit(fields, &syn[i].core, &order[j]) {
                if best[i + 1][j + 1].map(|b| b + s) == Some(target) {
                    out.push(j);
                    j += 1;
                    break;
                }
            }
            j += 1;
            if j >= m {
                return None;
            }
        }
    }
    Some(out)
}

/// The field whose name carries an operand's decorations (`rb` for `rb.neg`).
fn decor_base(o: &Operand) -> Option<u16> {
    match o {
        Operand::Field(i) => Some(*i),
        Operand::CMemIndexed { cmem, .. } => Some(*cmem),
        Operand::Address { base, .. } => Some(*base),
        _ => None,
    }
}

/// Compiles the syntax lines of `od` for form `fi` of `isa`.
pub fn compile_form(isa: &Isa, fi: usize, od: &Def, fd: &Def) -> Result<Vec<Pattern>, DslError> {
    let form = &isa.forms[fi];
    let fields = &form.fields;
    let form_loc = Loc { file: form.file.to_string(), line: form.line as usize };
    let find = |n: &str| fields.iter().position(|f| f.name == n).map(|i| i as u16);
    // Operand order without the guard.
    let order: Vec<Operand> = form.order.iter().filter(|o| !matches!(o, Operand::Field(i) if Some(*i) == form.guard)).cloned().collect();
    // Lines: the optype's, or one derived from Order when it has none.
    let mut lines: Vec<(String, Loc)> = od.syntax.clone();
    if lines.is_empty() {
        let ops: Vec<String> = order
            .iter()
            .map(|o| match o {
                Operand::Field(i) => fields[*i as usize].name.to_string(),
                other => format!("{:?}", other),
            })
            .collect();
        lines.push((format!("{} {} $sched $req ;", od.name, ops.join(", ")), od.loc.clone()));
    }
    // AsmFormat<x.neg> = CvtINegX(x.neg, ext)
    let mut tilde_when: Vec<(u16, u16, u64)> = Vec::new();
    for d in [od, fd] {
        for (dir, loc) in &d.directives {
            if let crate::dsl::Directive::AsmFormat(target, how) = dir {
                if let Some(args) = how.strip_prefix("CvtINegX(").and_then(|r| r.strip_suffix(')')) {
                    let parts: Vec<&str> = args.split(',').map(|s| s.trim()).collect();
                    if let (Some(t), Some(ext)) = (find(target), parts.get(1).and_then(|e| find(e))) {
                        let Kind::Enum(ti) = fields[ext as usize].kind else {
                            return err(loc, "CvtINegX needs an enumerated extension field");
                        };
                        let Some(x) = isa.types[ti as usize].value("X") else {
                            return err(loc, "CvtINegX: extension type has no value X");
                        };
                        tilde_when.push((t, ext, x as u64));
                    }
                }
            }
        }
    }
    let mut pats = Vec::new();
    let mut rejected = Vec::new();
    for (li, (text, loc)) in lines.iter().enumerate() {
        let line = parse_line(text, loc)?;
        // Modifiers.
        let mut used: Vec<bool> = vec![false; fields.len()];
        let mut mods = Vec::new();
        let mut claimed: Vec<u16> = Vec::new();
        // Placeholders first, so literals are resolved against the rest.
        let mut resolved: Vec<Option<Mod>> = vec![None; line.mods.len()];
        for (mi, (name, optional)) in line.mods.iter().enumerate() {
            let ph = od.placeholders.iter().find(|p| p.name == *name);
            let field = find(name).filter(|f| matches!(fields[*f as usize].kind, Kind::Enum(_)));
            if ph.is_none() && field.is_none() {
                continue;
            }
            let field = match field {
                Some(f) => f,
                None => {
                    // A placeholder named unlike its field: the enumerated field whose type has all its values.
                    let ph = ph.unwrap();
                    let cands: Vec<u16> = (0..fields.len() as u16)
                        .filter(|f| {
                            matches!(fields[*f as usize].kind, Kind::Enum(t) if ph.values.iter().all(|v| isa.types[t as usize].value(v).is_some()))
                                && !fields[*f as usize].control
                        })
                        .collect();
                    match cands.as_slice() {
                        [f] => *f,
                        _ => return err(loc, format!("placeholder `.{}` matches no single field of `{}`", name, form.name)),
                    }
                }
            };
            let Kind::Enum(t) = fields[field as usize].kind else { unreachable!() };
            let ty = &isa.types[t as usize];
            let f = &fields[field as usize];
            let (allowed, omit) = match ph {
                Some(ph) => {
                    let mut allowed = Vec::new();
                    for v in &ph.values {
                        match ty.value(v) {
                            Some(x) => allowed.push(x as u64),
                            None => return err(&ph.loc, format!("`.{}` is not a value of `{}` (field `{}`)", v, ty.name, f.name)),
                        }
                    }
                    let omit = match &ph.default {
                        Some(d) => Some(ty.value(d).unwrap() as u64),
                        None if *optional => f.default,
                        None => None,
                    };
                    (allowed, omit)
                }
                None => (ty.values.iter().map(|v| v.1 as u64).collect(), if *optional { f.default } else { None }),
            };
            let allowed: Vec<u64> = match f.fixed {
                Some(x) => allowed.into_iter().filter(|v| *v == x).collect(),
                None => allowed,
            };
            if let (Some(o), Some(d)) = (omit, f.default.or(f.fixed)) {
                if o != d {
                    return err(loc, format!("the omittable value of `.{}` differs from the default of field `{}`", name, f.name));
                }
            }
            used[field as usize] = true;
            claimed.push(field);
            resolved[mi] = Some(Mod::Var { field, allowed: allowed.into(), omit });
        }
        for (mi, (name, optional)) in line.mods.iter().enumerate() {
            if resolved[mi].is_some() {
                continue;
            }
            let cands: Vec<(u16, u64)> = (0..fields.len() as u16)
                .filter(|f| !claimed.contains(f) && !fields[*f as usize].control && fields[*f as usize].fixed.is_none())
                .filter_map(|f| match fields[f as usize].kind {
                    Kind::Enum(t) => isa.types[t as usize].value(name).map(|v| (f, v as u64)),
                    _ => None,
                })
                .collect();
            resolved[mi] = Some(match cands.as_slice() {
                [] => Mod::Lit { text: name.clone().into(), optional: *optional },
                [(f, v)] => {
                    used[*f as usize] = true;
                    claimed.push(*f);
                    let fd = &fields[*f as usize];
                    if *optional && fd.default.or(fd.fixed).is_none() {
                        return err(loc, format!("optional `.{}` sets field `{}`, which has no default", name, fd.name));
                    }
                    Mod::Fixed { field: *f, value: *v, text: name.clone().into(), optional: *optional }
                }
                _ => return err(loc, format!("modifier `.{}` could set several fields of `{}`", name, form.name)),
            });
        }
        mods.extend(resolved.into_iter().map(|m| m.unwrap()));

        // Operands.
        // A line whose operands cannot be placed on this form's Order does not
        // apply to it (`MOV.64 Rd, Ra` has no immediate form).
        let Some(map) = align(fields, &line.operands, &order) else {
            rejected.push(format!("`{}`", text));
            continue;
        };
        let mut slots = Vec::new();
        for (so, oi) in line.operands.iter().zip(map) {
            let operand = order[oi].clone();
            for f in operand.fields() {
                used[f as usize] = true;
            }
            let base = decor_base(&operand).map(|b| fields[b as usize].name.to_string());
            let deco = |suffix: &str| base.as_ref().and_then(|b| find(&format!("{}.{}", b, suffix)));
            let mut slot =
                Slot { optional: so.optional, operand: operand.clone(), neg: None, bitnot: None, not: None, abs: None, suffix: None };
            if so.neg || so.tilde {
                if let Some(n) = deco("neg") {
                    let style = match tilde_when.iter().find(|t| t.0 == n) {
                        Some(&(_, ext, x)) => NegStyle::TildeWhen { field: ext, value: x },
                        None => NegStyle::Minus,
                    };
                    slot.neg = Some((n, style));
                }
            }
            if so.tilde {
                slot.bitnot = deco("bitnot").or(deco("not").filter(|_| !is_pred(fields, &operand)));
            }
            if so.not {
                slot.not = deco("not");
            }
            if so.abs {
                slot.abs = deco("abs");
            }
            if let Some(sfx) = &so.suffix {
                slot.suffix = deco(sfx);
            }
            for f in [slot.neg.map(|n| n.0), slot.bitnot, slot.not, slot.abs, slot.suffix].into_iter().flatten() {
                used[f as usize] = true;
            }
            slots.push(slot);
        }
        let mut pinned = Vec::new();
        for (i, f) in fields.iter().enumerate() {
            if used[i]
                || f.control
                || f.fixed.is_some()
                || Some(i as u16) == form.guard
                || f.name.ends_with(".not") && is_guard_not(form, i)
            {
                continue;
            }
            pinned.push((i as u16, f.unused_value()));
        }
        pats.push(Pattern {
            line: li as u16,
            mnemonic: line.mnemonic.into(),
            mods: mods.into(),
            slots: slots.into(),
            wsb: line.wsb,
            pinned: pinned.into(),
        });
    }
    if pats.is_empty() {
        return err(
            &form_loc,
            format!(
                "no syntax line fits the operands Order<{}> of `{}` (tried {})",
                order.iter().map(|o| describe(fields, o)).collect::<Vec<_>>().join(", "),
                form.name,
                rejected.join(", ")
            ),
        );
    }
    Ok(pats)
}

fn is_pred(fields: &[Field], o: &Operand) -> bool {
    matches!(o, Operand::Field(i) if matches!(fields[*i as usize].kind, Kind::Pred | Kind::UPred))
}

fn is_guard_not(form: &crate::model::Form, i: usize) -> bool {
    form.guard_not == Some(i as u16)
}

fn describe(fields: &[Field], o: &Operand) -> String {
    match o {
        Operand::Field(i) => fields[*i as usize].name.to_string(),
        Operand::Pseudo(s) => s.to_string(),
        Operand::CMemIndexed { cmem, reg } => format!("C[{}, {}]", fields[*cmem as usize].name, fields[*reg as usize].name),
        Operand::RegIndexed { file, index, offset } => {
            format!("{}[{}, {}]", file, fields[*index as usize].name, fields[*offset as usize].name)
        }
        Operand::Address { base, offset } => match offset {
            Some(o) => format!("[{}, {}]", fields[*base as usize].name, fields[*o as usize].name),
            None => format!("[{}]", fields[*base as usize].name),
        },
    }
}

// ---- Rust output -----------------------------------------------------------

impl ToRust for NegStyle {
    fn rs(&self, out: &mut String) {
        match self {
            NegStyle::Minus => out.push_str("NegStyle::Minus"),
            NegStyle::TildeWhen { field, value } => out.push_str(&format!("NegStyle::TildeWhen{{field:{},value:{}}}", field, value)),
        }
    }
}

impl ToRust for Mod {
    fn rs(&self, out: &mut String) {
        match self {
            Mod::Lit { text, optional } => {
                out.push_str(&format!("Mod::Lit{{optional:{},text:", optional));
                text.rs(out);
                out.push('}');
            }
            Mod::Fixed { field, value, text, optional } => {
                out.push_str(&format!("Mod::Fixed{{field:{},value:{},optional:{},text:", field, value, optional));
                text.rs(out);
                out.push('}');
            }
            Mod::Var { field, allowed, omit } => {
                out.push_str(&format!("Mod::Var{{field:{},allowed:", field));
                allowed.rs(out);
                out.push_str(",omit:");
                omit.rs(out);
                out.push('}');
            }
        }
    }
}

crate::to_rust_struct!(Slot { optional, operand, neg, bitnot, not, abs, suffix });
crate::to_rust_struct!(Pattern { line, mnemonic, mods, slots, wsb, pinned });
