//! Instruction text: printing an [`Inst`] in the documents' syntax, and
//! parsing one line of it back. Both walk the same [`Pattern`]s.
//!
//! Canonical form: `@!P0 IADD.X R1, PT, R3, ~R5, P0 &stall=2 ;` — guard only
//! when not PT, modifiers and operands at their omittable default left out,
//! scheduling control as `&name=value` items for fields not at their default.

use std::fmt::Write;

use crate::inst::{Inst, InstError};
use crate::model::{Field, Kind, Operand, PT, RZ, URZ};
use crate::syntax::{Mod, NegStyle, Pattern, Slot};
use crate::tables::{FormId, ISA};

/// Resolves label names to addresses and addresses to names.
pub trait Labels {
    /// The byte address of a label, if defined.
    fn address(&self, name: &str) -> Option<u64>;
    /// A name for an address, if one should be printed.
    fn name(&self, addr: u64) -> Option<String>;
    /// Text to print for register field `field` in place of its value:
    /// the compiler names the virtual register an operand is bound to
    /// (`v12`) before registers are allocated. None prints the register.
    fn register(&self, _field: usize) -> Option<String> {
        None
    }
}

/// No labels: branch targets print and parse as numeric offsets.
pub struct NoLabels;

impl Labels for NoLabels {
    fn address(&self, _: &str) -> Option<u64> {
        None
    }
    fn name(&self, _: u64) -> Option<String> {
        None
    }
}

fn hex_signed(v: i64) -> String {
    if v < 0 {
        format!("-0x{:x}", (v as i128).unsigned_abs())
    } else {
        format!("0x{:x}", v)
    }
}

fn sign_extend(v: u64, bits: u32) -> i64 {
    let s = 64 - bits;
    ((v << s) as i64) >> s
}

fn fmt_f32(bits: u32) -> String {
    let x = f32::from_bits(bits);
    if x.is_nan() {
        format!("0x{:08x}", bits)
    } else if x.is_infinite() {
        if x > 0.0 {
            "+INF".into()
        } else {
            "-INF".into()
        }
    } else {
        format!("{:?}", x)
    }
}

fn fmt_f64(bits: u64) -> String {
    let x = f64::from_bits(bits);
    if x.is_nan() {
        format!("0x{:08x}", bits >> 32)
    } else if x.is_infinite() {
        if x > 0.0 {
            "+INF".into()
        } else {
            "-INF".into()
        }
    } else {
        format!("{:?}", x)
    }
}

fn reg_text(prefix: &str, zero: u64, zname: &str, v: u64, width: u32) -> String {
    if v == zero {
        return zname.to_string();
    }
    if width > 32 {
        format!("{}[{}:{}]", prefix, v, v + (width / 32) as u64 - 1)
    } else {
        format!("{}{}", prefix, v)
    }
}

/// Prints one field value as an operand.
fn value_text(inst: &Inst, fi: usize, pc: Option<u64>, labels: &dyn Labels) -> String {
    let f = inst.field_def(fi);
    if f.kind.is_register() {
        if let Some(name) = labels.register(fi) {
            return name;
        }
    }
    let v = inst.get_at(fi);
    let w = inst.def().bitwidth_of(fi, inst.values());
    match f.kind {
        Kind::Reg => reg_text("R", RZ as u64, "RZ", v, w),
        Kind::UReg => reg_text("UR", URZ as u64, "URZ", v, w),
        Kind::Pred => {
            if v == PT as u64 {
                "PT".into()
            } else {
                format!("P{}", v)
            }
        }
        Kind::UPred => {
            if v == PT as u64 {
                "UPT".into()
            } else {
                format!("UP{}", v)
            }
        }
        Kind::SImm(n) => hex_signed(sign_extend(v, n as u32)),
        Kind::UImm(_) => format!("0x{:x}", v),
        Kind::F32Imm => fmt_f32(v as u32),
        Kind::F64Imm => fmt_f64(v << 32),
        Kind::CMem => format!("c[0x{:x}][0x{:x}]", v >> 16, v & 0xffff),
        Kind::PCRel32 => {
            let off = sign_extend(v, 32);
            match pc.and_then(|pc| labels.name((pc as i64 + 16 + off) as u64)) {
                Some(n) => n,
                None => hex_signed(off),
            }
        }
        Kind::Enum(t) => ISA.types[t as usize].name_of(v).unwrap_or("?").to_string(),
    }
}

fn is_default(f: &Field, v: u64) -> bool {
    v == f.unused_value()
}

fn slot_is_default(inst: &Inst, s: &Slot) -> bool {
    let def = inst.def();
    let mut fields: Vec<u16> = s.operand.fields().collect();
    fields.extend([s.neg.map(|n| n.0), s.bitnot, s.not, s.abs, s.suffix].into_iter().flatten());
    fields.iter().all(|&f| is_default(&def.fields[f as usize], inst.get_at(f as usize)))
}

/// Prints an instruction in canonical text. `pc` is its byte address, used
/// with `labels` to name branch targets.
pub fn format_inst(inst: &Inst, pc: Option<u64>, labels: &dyn Labels) -> Result<String, InstError> {
    let pat = inst.validate()?;
    let def = inst.def();
    let mut s = String::new();
    if let Some(g) = def.guard {
        let gv = inst.get_at(g as usize);
        let not = def.guard_not.map(|i| inst.get_at(i as usize)).unwrap_or(0);
        if gv != PT as u64 || not != 0 {
            s.push('@');
            if not != 0 {
                s.push('!');
            }
            s.push_str(&value_text(inst, g as usize, pc, labels));
            s.push(' ');
        }
    }
    s.push_str(&pat.mnemonic);
    for m in pat.mods.iter() {
        match m {
            Mod::Lit { text, optional } => {
                if !*optional {
                    s.push('.');
                    s.push_str(text);
                }
            }
            Mod::Fixed { field, value, text, optional } => {
                let v = inst.get_at(*field as usize);
                if !*optional || (v == *value && Some(v) != def.fields[*field as usize].default) {
                    s.push('.');
                    s.push_str(text);
                }
            }
            Mod::Var { field, omit, .. } => {
                let v = inst.get_at(*field as usize);
                if *omit != Some(v) {
                    s.push('.');
                    s.push_str(&value_text(inst, *field as usize, pc, labels));
                }
            }
        }
    }
    // An optional operand at its default is left out, unless the next
    // operand written is of the same kind and would be read in its place
    // (ISET's `{, {!}pp}{, {!}pq}`).
    let kind_of = |s: &Slot| match s.operand {
        Operand::Field(i) => Some(def.fields[i as usize].kind),
        _ => None,
    };
    let mut ops = Vec::new();
    let mut next_kind: Option<Kind> = None;
    for slot in pat.slots.iter().rev() {
        if slot.optional && slot_is_default(inst, slot) && (next_kind.is_none() || next_kind != kind_of(slot)) {
            continue;
        }
        next_kind = kind_of(slot);
        ops.push(slot_text(inst, slot, pc, labels));
    }
    ops.reverse();
    if !ops.is_empty() {
        s.push(' ');
        s.push_str(&ops.join(", "));
    }
    for (i, f) in def.fields.iter().enumerate() {
        if f.control && f.fixed.is_none() && !is_default(f, inst.get_at(i)) {
            let _ = write!(s, " &{}={}", f.name, inst.get_at(i));
        }
    }
    s.push_str(" ;");
    Ok(s)
}

fn slot_text(inst: &Inst, slot: &Slot, pc: Option<u64>, labels: &dyn Labels) -> String {
    let mut s = String::new();
    if let Some((n, style)) = slot.neg {
        if inst.get_at(n as usize) != 0 {
            s.push(match style {
                NegStyle::TildeWhen { field, value } if inst.get_at(field as usize) == value => '~',
                _ => '-',
            });
        }
    }
    if let Some(b) = slot.bitnot {
        if inst.get_at(b as usize) != 0 {
            s.push('~');
        }
    }
    if let Some(n) = slot.not {
        if inst.get_at(n as usize) != 0 {
            s.push('!');
        }
    }
    let abs = slot.abs.map(|a| inst.get_at(a as usize) != 0).unwrap_or(false);
    if abs {
        s.push('|');
    }
    let off_text = |f: u16| -> String {
        let fd = inst.field_def(f as usize);
        let v = inst.get_at(f as usize);
        let sv = match fd.kind {
            Kind::SImm(n) => sign_extend(v, n as u32),
            _ => v as i64,
        };
        if sv == 0 {
            String::new()
        } else if sv < 0 {
            format!("-0x{:x}", (sv as i128).unsigned_abs())
        } else {
            format!("+0x{:x}", sv)
        }
    };
    match &slot.operand {
        Operand::Field(i) => s.push_str(&value_text(inst, *i as usize, pc, labels)),
        Operand::Pseudo(p) => s.push_str(p),
        Operand::CMemIndexed { cmem, reg } => {
            // With a register the 16-bit offset is signed; without, unsigned.
            let v = inst.get_at(*cmem as usize);
            let r = inst.get_at(*reg as usize);
            if r == inst.field_def(*reg as usize).kind.zero_register().unwrap_or(u64::MAX) {
                let _ = write!(s, "c[0x{:x}][0x{:x}]", v >> 16, v & 0xffff);
            } else {
                let off = sign_extend(v & 0xffff, 16);
                let _ = write!(s, "c[0x{:x}][{}", v >> 16, value_text(inst, *reg as usize, pc, labels));
                if off != 0 {
                    s.push_str(&if off < 0 { format!("-0x{:x}", -off) } else { format!("+0x{:x}", off) });
                }
                s.push(']');
            }
        }
        Operand::RegIndexed { file, index, offset } => {
            let _ = write!(s, "{}[{}{}]", file, value_text(inst, *index as usize, pc, labels), off_text(*offset));
        }
        Operand::Address { base, offset } => {
            let _ = write!(s, "[{}{}]", value_text(inst, *base as usize, pc, labels), offset.map(off_text).unwrap_or_default());
        }
    }
    if let Some(sf) = slot.suffix {
        let f = inst.field_def(sf as usize);
        let v = inst.get_at(sf as usize);
        if !is_default(f, v) {
            let _ = write!(s, ".{}", value_text(inst, sf as usize, pc, labels));
        }
    }
    if abs {
        s.push('|');
    }
    s
}

// ---- parsing ------------------------------------------------------------

/// A parse error at a column (1-based) of the instruction text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TextError {
    pub col: usize,
    pub msg: String,
}

fn terr<T>(col: usize, msg: impl Into<String>) -> Result<T, TextError> {
    Err(TextError { col, msg: msg.into() })
}

/// A piece of the line with its starting column.
#[derive(Clone, Copy, Debug)]
struct Piece<'a> {
    text: &'a str,
    col: usize,
}

fn trim_piece(p: Piece) -> Piece {
    let lead = p.text.len() - p.text.trim_start().len();
    Piece { text: p.text.trim(), col: p.col + lead }
}

/// Splits at top-level commas (outside `[]`).
fn split_commas(p: Piece) -> Vec<Piece> {
    let mut out = Vec::new();
    let mut depth = 0i32;
    let mut start = 0;
    for (i, c) in p.text.char_indices() {
        match c {
            '[' => depth += 1,
            ']' => depth -= 1,
            ',' if depth == 0 => {
                out.push(trim_piece(Piece { text: &p.text[start..i], col: p.col + start }));
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(trim_piece(Piece { text: &p.text[start..], col: p.col + start }));
    out
}

/// Parses an integer literal: an optional sign, then decimal digits or `0x`
/// and hex digits. `_` may separate digits (`1_000`, `0xffff_ffff`) but never
/// starts the number, so `_90` is a name (a label), not ninety.
pub fn parse_int(s: &str) -> Option<i128> {
    let s = s.trim();
    let (neg, r) = match s.strip_prefix('-') {
        Some(r) => (true, r.trim_start()),
        None => (false, s.strip_prefix('+').unwrap_or(s)),
    };
    let v = if let Some(h) = r.strip_prefix("0x").or_else(|| r.strip_prefix("0X")) {
        if !h.starts_with(|c: char| c.is_ascii_hexdigit()) || !h.chars().all(|c| c.is_ascii_hexdigit() || c == '_') {
            return None;
        }
        i128::from_str_radix(&h.replace('_', ""), 16).ok()?
    } else if r.starts_with(|c: char| c.is_ascii_digit()) && r.chars().all(|c| c.is_ascii_digit() || c == '_') {
        r.replace('_', "").parse::<i128>().ok()?
    } else {
        return None;
    };
    Some(if neg { -v } else { v })
}

/// `Some(true)` for an infinity written as such (`INF`, `+INF`, `-INF`).
fn is_inf_text(t: &str) -> bool {
    matches!(t.trim().to_ascii_uppercase().as_str(), "INF" | "+INF" | "-INF")
}

fn parse_float(s: &str) -> Option<f64> {
    let t = s.trim();
    match t.to_ascii_uppercase().as_str() {
        "INF" | "+INF" => return Some(f64::INFINITY),
        "-INF" => return Some(f64::NEG_INFINITY),
        _ => {}
    }
    if t.starts_with("0x") || t.starts_with("-0x") {
        return None;
    }
    // Rust's float parser also takes words (`infinity`, `nan`); only the
    // spellings above are floats here.
    if !t.trim_start_matches(['+', '-']).starts_with(|c: char| c.is_ascii_digit() || c == '.') {
        return None;
    }
    t.parse::<f64>().ok()
}

struct Ctx<'a> {
    inst: Inst,
    pc: Option<u64>,
    labels: &'a dyn Labels,
}

fn expect_reg(text: &str, kind: Kind, width: u32) -> Result<u64, String> {
    let (prefix, zname, zero, max) = match kind {
        Kind::Reg => ("R", "RZ", RZ as u64, 254u64),
        Kind::UReg => ("UR", "URZ", URZ as u64, 62),
        Kind::Pred => ("P", "PT", PT as u64, 6),
        _ => ("UP", "UPT", PT as u64, 6),
    };
    let what = match kind {
        Kind::Reg => "a register",
        Kind::UReg => "a uniform register",
        Kind::Pred => "a predicate",
        _ => "a uniform predicate",
    };
    if text == zname {
        return Ok(zero);
    }
    let n = (width / 32).max(1) as u64;
    if let Some(r) = text.strip_prefix(prefix) {
        if let Some(inner) = r.strip_prefix('[').and_then(|x| x.strip_suffix(']')) {
            if matches!(kind, Kind::Reg | Kind::UReg) {
                if let Some((a, b)) = inner.split_once(':') {
                    if let (Ok(a), Ok(b)) = (a.trim().parse::<u64>(), b.trim().parse::<u64>()) {
                        if b + 1 != a + n || n == 1 {
                            return Err(format!("expected {} register(s) here, `{}` names {}", n, text, (b + 1).saturating_sub(a)));
                        }
                        if a > max {
                            return Err(format!("register `{}` does not exist", text));
                        }
                        return Ok(a);
                    }
                }
            }
        } else if let Ok(v) = r.parse::<u64>() {
            if !r.starts_with('+') && !r.starts_with('-') {
                if v > max {
                    return Err(format!("register `{}` does not exist (last is {}{})", text, prefix, max));
                }
                if n > 1 {
                    return Err(format!("expected a {}-bit register group `{}[{}:{}]`, found `{}`", width, prefix, v, v + n - 1, text));
                }
                return Ok(v);
            }
        }
    }
    if n > 1 && matches!(kind, Kind::Reg | Kind::UReg) {
        Err(format!("expected {} group like `{}[0:{}]` or `{}`, found `{}`", what, prefix, n - 1, zname, text))
    } else {
        Err(format!("expected {} like `{}0` or `{}`, found `{}`", what, prefix, zname, text))
    }
}

impl Ctx<'_> {
    fn set(&mut self, i: u16, v: u64) {
        self.inst.set_at(i as usize, v);
    }

    /// Parses a value for field `fi` from text.
    fn value(&mut self, fi: u16, text: &str) -> Result<u64, String> {
        let f = self.inst.field_def(fi as usize);
        let width = self.inst.def().bitwidth_of(fi as usize, self.inst.values());
        match f.kind {
            Kind::Reg | Kind::UReg | Kind::Pred | Kind::UPred => expect_reg(text, f.kind, width),
            Kind::CMem => {
                let inner = text
                    .strip_prefix("c[")
                    .and_then(|r| r.strip_suffix(']'))
                    .ok_or_else(|| format!("expected a constant `c[bank][offset]`, found `{}`", text))?;
                let (bank, off) = inner.split_once("][").ok_or_else(|| format!("expected `c[bank][offset]`, found `{}`", text))?;
                let bank = parse_int(bank).ok_or_else(|| format!("bad constant bank `{}`", bank))?;
                let off = parse_int(off).ok_or_else(|| format!("bad constant offset `{}`", off))?;
                if !(0..64).contains(&bank) {
                    return Err(format!("constant bank {} is out of range 0..=63", bank));
                }
                if !(0..0x10000).contains(&off) {
                    return Err(format!("constant offset 0x{:x} is out of range 0..=0xffff", off));
                }
                Ok(((bank as u64) << 16) | off as u64)
            }
            Kind::SImm(n) | Kind::UImm(n) => {
                let v = parse_int(text).ok_or_else(|| format!("expected an integer, found `{}`", text))?;
                let n = n as u32;
                let (lo, hi) = if matches!(f.kind, Kind::SImm(_)) {
                    // Signed fields also accept the unsigned spelling of the bits.
                    (-(1i128 << (n - 1)), (1i128 << n) - 1)
                } else {
                    (0, (1i128 << n) - 1)
                };
                if v < lo || v > hi {
                    return Err(format!("immediate {} does not fit the {}-bit field `{}`", text, n, f.name));
                }
                Ok((v as u128 & ((1u128 << n) - 1)) as u64)
            }
            Kind::F32Imm => {
                if let Some(x) = parse_float(text) {
                    // Parse as f32 directly: going through f64 could round twice.
                    let y = if x.is_infinite() { x as f32 } else { text.trim().parse::<f32>().unwrap_or(x as f32) };
                    if y.is_infinite() && !is_inf_text(text) {
                        return Err(format!("`{}` is out of range for an f32 immediate (write +INF or -INF for an infinity)", text));
                    }
                    return Ok(y.to_bits() as u64);
                }
                match parse_int(text) {
                    Some(v) if (0..=u32::MAX as i128).contains(&v) => Ok(v as u64),
                    _ => Err(format!("expected a float or its bits in hex, found `{}`", text)),
                }
            }
            Kind::F64Imm => {
                if let Some(x) = parse_float(text) {
                    if x.is_infinite() && !is_inf_text(text) {
                        return Err(format!("`{}` is out of range for an f64 immediate (write +INF or -INF for an infinity)", text));
                    }
                    let b = x.to_bits();
                    if b & 0xffff_ffff != 0 {
                        return Err(format!("`{}` is out of range for an f64 immediate: only values whose low 32 bits are zero can be written (the instruction holds the upper 32 bits)", text));
                    }
                    return Ok(b >> 32);
                }
                match parse_int(text) {
                    Some(v) if (0..=u32::MAX as i128).contains(&v) => Ok(v as u64),
                    _ => Err(format!("expected a float or the upper 32 bits in hex, found `{}`", text)),
                }
            }
            Kind::PCRel32 => {
                if let Some(v) = parse_int(text) {
                    if v < i32::MIN as i128 || v > i32::MAX as i128 {
                        return Err(format!("branch offset {} out of range", text));
                    }
                    return Ok(v as i32 as u32 as u64);
                }
                let Some(addr) = self.labels.address(text) else {
                    return Err(format!("undefined label `{}`", text));
                };
                let Some(pc) = self.pc else { return Err(format!("label `{}` needs an address", text)) };
                let off = addr as i128 - (pc as i128 + 16);
                if off < i32::MIN as i128 || off > i32::MAX as i128 {
                    return Err(format!("label `{}` is out of branch range", text));
                }
                Ok(off as i32 as u32 as u64)
            }
            Kind::Enum(t) => ISA.types[t as usize]
                .value(text)
                .map(|v| v as u64)
                .ok_or_else(|| format!("`{}` is not a value of `{}`", text, ISA.types[t as usize].name)),
        }
    }

    /// Parses `reg[+/-imm]` inside brackets into two fields.
    fn reg_plus_off(&mut self, reg: u16, off: Option<u16>, inner: &str) -> Result<(), String> {
        let inner = inner.trim();
        let cut = inner.char_indices().skip(1).find(|(_, c)| *c == '+' || *c == '-').map(|(i, _)| i);
        let (r, o) = match cut {
            Some(i) if !inner[..i].ends_with('[') => (inner[..i].trim(), Some(inner[i..].trim())),
            _ => (inner, None),
        };
        // A bare number is an offset from the zero register.
        let (r, o) = if parse_int(r).is_some() && o.is_none() { ("", Some(r)) } else { (r, o) };
        let rv = if r.is_empty() { self.inst.field_def(reg as usize).unused_value() } else { self.value(reg, r)? };
        self.set(reg, rv);
        match (off, o) {
            (Some(of), Some(o)) => {
                let o = o.strip_prefix('+').map(str::trim).unwrap_or(o);
                let v = self.value(of, &o.replace(' ', ""))?;
                self.set(of, v);
            }
            (Some(of), None) => self.set(of, 0),
            (None, Some(o)) => return Err(format!("this operand takes no offset (`{}`)", o)),
            (None, None) => {}
        }
        Ok(())
    }

    fn slot(&mut self, slot: &Slot, p: Piece) -> Result<(), TextError> {
        let mut t = p.text;
        let mut col = p.col;
        let take = |t: &mut &str, c: char, col: &mut usize| -> bool {
            if let Some(r) = t.strip_prefix(c) {
                *t = r.trim_start();
                *col += 1;
                true
            } else {
                false
            }
        };
        // Prefixes; a written operand without a prefix clears it.
        for f in [slot.neg.map(|n| n.0), slot.bitnot, slot.not, slot.abs].into_iter().flatten() {
            self.set(f, 0);
        }
        if let Some((n, style)) = slot.neg {
            let tilde_mode = matches!(style, NegStyle::TildeWhen { field, value } if self.inst.get_at(field as usize) == value);
            let c = if tilde_mode { '~' } else { '-' };
            if take(&mut t, c, &mut col) {
                self.set(n, 1);
            } else if tilde_mode && t.starts_with('-') {
                return terr(col, "in .X mode the operand can only be inverted with `~`, not negated with `-`");
            } else if !tilde_mode && t.starts_with('~') && slot.bitnot.is_none() {
                return terr(col, "`~` is only allowed here in .X mode; use `-`");
            }
        }
        if let Some(b) = slot.bitnot {
            if take(&mut t, '~', &mut col) {
                self.set(b, 1);
            }
        }
        if let Some(n) = slot.not {
            if take(&mut t, '!', &mut col) {
                self.set(n, 1);
            }
        }
        let mut abs = false;
        if let Some(a) = slot.abs {
            if take(&mut t, '|', &mut col) {
                abs = true;
                self.set(a, 1);
            }
        }
        let mut body = t;
        if abs {
            body = body.trim_end().strip_suffix('|').ok_or(TextError { col, msg: "missing closing `|`".into() })?.trim_end();
        }
        // Suffix `.B1` / `.H1`.
        if let Some(sf) = slot.suffix {
            if let Some(dot) = body.rfind('.') {
                let cand = &body[dot + 1..];
                if dot > 0 && cand.starts_with(|c: char| c.is_ascii_alphabetic()) {
                    let v = self.value(sf, cand).map_err(|m| TextError { col: col + dot + 1, msg: m })?;
                    self.set(sf, v);
                    body = &body[..dot];
                }
            }
        }
        if body.is_empty() {
            return terr(col, "missing operand");
        }
        let r: Result<(), String> = match &slot.operand {
            Operand::Field(i) => {
                // A leading `-` on an immediate without a negate field is its sign.
                self.value(*i, body).map(|v| self.set(*i, v))
            }
            Operand::Pseudo(name) => {
                if body == &**name {
                    Ok(())
                } else {
                    Err(format!("expected `{}`, found `{}`", name, body))
                }
            }
            Operand::CMemIndexed { cmem, reg } => (|| {
                let inner = body.strip_prefix("c[").ok_or_else(|| format!("expected `c[bank][URa+offset]`, found `{}`", body))?;
                let (bank, rest) = inner.split_once("][").ok_or_else(|| format!("expected `c[bank][URa+offset]`, found `{}`", body))?;
                let rest = rest.strip_suffix(']').ok_or("missing `]`")?.trim();
                let bank = parse_int(bank).filter(|b| (0..64).contains(b)).ok_or_else(|| format!("bad constant bank `{}`", bank))?;
                // `URa`, `URa+off`, `URa-off` or a bare offset.
                let (r, off) = if rest.starts_with(|c: char| c.is_ascii_alphabetic()) {
                    match rest.find(['+', '-']) {
                        Some(i) => (&rest[..i], parse_int(&rest[i..]).ok_or_else(|| format!("bad offset in `{}`", rest))?),
                        None => (rest, 0),
                    }
                } else {
                    ("", parse_int(rest).ok_or_else(|| format!("bad constant offset `{}`", rest))?)
                };
                let rv = if r.is_empty() { self.inst.field_def(*reg as usize).unused_value() } else { self.value(*reg, r.trim())? };
                self.set(*reg, rv);
                if !(-0x8000..0x10000).contains(&off) {
                    return Err(format!("constant offset {} does not fit 16 bits", off));
                }
                self.set(*cmem, ((bank as u64) << 16) | (off as u64 & 0xffff));
                Ok(())
            })(),
            Operand::RegIndexed { file, index, offset } => (|| {
                let inner = body
                    .strip_prefix(&**file)
                    .and_then(|r| r.strip_prefix('['))
                    .and_then(|r| r.strip_suffix(']'))
                    .ok_or_else(|| format!("expected `{}[URa+offset]`, found `{}`", file, body))?;
                self.reg_plus_off(*index, Some(*offset), inner)
            })(),
            Operand::Address { base, offset } => (|| {
                let inner = body
                    .strip_prefix('[')
                    .and_then(|r| r.strip_suffix(']'))
                    .ok_or_else(|| format!("expected an address `[Ra+offset]`, found `{}`", body))?;
                self.reg_plus_off(*base, *offset, inner)
            })(),
        };
        r.map_err(|msg| TextError { col, msg })
    }
}

/// Matches modifier words against pattern items and fills their fields.
/// Each word goes to the first item, in syntax order, that takes it and is
/// still free, so `.LE.U32.AND` and `.LE.AND.U32` both work while two items
/// of one type (`IDP.4A.afmt.bfmt`) are filled in order. Items left out take
/// their omittable value.
fn match_mods(inst: &mut Inst, mods: &[Mod], words: &[&str]) -> bool {
    let mut filled = vec![false; mods.len()];
    for w in words {
        let mut hit = false;
        for (i, m) in mods.iter().enumerate() {
            if filled[i] {
                continue;
            }
            let v = match m {
                Mod::Lit { text, .. } => (**text == **w).then_some(None),
                Mod::Fixed { field, value, text, .. } => (**text == **w).then_some(Some((*field, *value))),
                Mod::Var { field, allowed, .. } => match inst.field_def(*field as usize).kind {
                    Kind::Enum(t) => {
                        ISA.types[t as usize].value(w).map(|v| v as u64).filter(|v| allowed.contains(v)).map(|v| Some((*field, v)))
                    }
                    _ => None,
                },
            };
            if let Some(set) = v {
                if let Some((f, v)) = set {
                    inst.set_at(f as usize, v);
                }
                filled[i] = true;
                hit = true;
                break;
            }
        }
        if !hit {
            return false;
        }
    }
    for (i, m) in mods.iter().enumerate() {
        if filled[i] {
            continue;
        }
        match m {
            Mod::Lit { optional, .. } => {
                if !*optional {
                    return false;
                }
            }
            Mod::Fixed { optional, .. } => {
                if !*optional {
                    return false;
                }
            }
            Mod::Var { field, omit, .. } => match omit {
                Some(o) => inst.set_at(*field as usize, *o),
                None => return false,
            },
        }
    }
    true
}

/// Result of trying one pattern: how far it got, for error reporting.
struct Attempt {
    progress: usize,
    err: TextError,
}

fn match_slots(ctx: &mut Ctx, slots: &[Slot], ops: &[Piece], depth: usize, best: &mut Option<Attempt>) -> bool {
    let Some((s, rest)) = slots.split_first() else {
        if let Some(p) = ops.first() {
            note(best, depth + 1, TextError { col: p.col, msg: format!("unexpected operand `{}`", p.text) });
            return false;
        }
        return true;
    };
    if let Some(p) = ops.first() {
        let saved = ctx.inst.clone();
        match ctx.slot(s, *p) {
            Ok(()) => {
                if match_slots(ctx, rest, &ops[1..], depth + 1, best) {
                    return true;
                }
            }
            Err(e) => note(best, depth, e),
        }
        ctx.inst = saved;
    }
    if s.optional {
        return match_slots(ctx, rest, ops, depth, best);
    }
    if ops.is_empty() {
        note(best, depth, TextError { col: usize::MAX, msg: "too few operands".into() });
    }
    false
}

/// Keeps the error of the attempt that got furthest. Among attempts that got
/// equally far, an error about the operand's value (an immediate out of range)
/// beats one saying the operand is of another kind ("expected a register…"):
/// the form whose kind matched is the one the writer meant.
fn note(best: &mut Option<Attempt>, progress: usize, err: TextError) {
    let kind_mismatch = |e: &TextError| e.msg.starts_with("expected ");
    let better = match best.as_ref() {
        None => true,
        Some(b) => progress > b.progress || (progress == b.progress && kind_mismatch(&b.err) && !kind_mismatch(&err)),
    };
    if better {
        *best = Some(Attempt { progress, err });
    }
}

/// Parses one instruction (without label or trailing comment). `col0` is the
/// column of `text` in its line; `pc` its address for label references.
pub fn parse_inst(text: &str, col0: usize, pc: Option<u64>, labels: &dyn Labels) -> Result<Inst, TextError> {
    let full = Piece { text, col: col0 };
    let mut p = trim_piece(full);
    if let Some(r) = p.text.strip_suffix(';') {
        p.text = r.trim_end();
    }
    let end_col = p.col + p.text.len();
    // Guard.
    let mut guard: Option<(bool, &str, usize)> = None;
    if let Some(r) = p.text.strip_prefix('@') {
        let (neg, r2) = match r.strip_prefix('!') {
            Some(x) => (true, x),
            None => (false, r),
        };
        let end = r2.find(char::is_whitespace).unwrap_or(r2.len());
        guard = Some((neg, &r2[..end], p.col + 1 + (r.len() - r2.len())));
        let consumed = p.text.len() - r2[end..].len();
        p = trim_piece(Piece { text: &p.text[consumed..], col: p.col + consumed });
    }
    // Mnemonic and modifiers.
    let mend = p.text.find(char::is_whitespace).unwrap_or(p.text.len());
    let mn = &p.text[..mend];
    let mn_col = p.col;
    let mut parts = mn.split('.');
    let base = parts.next().unwrap_or("");
    let words: Vec<&str> = parts.collect();
    if base.is_empty() {
        return terr(mn_col, "expected an instruction mnemonic");
    }
    let mut rest = trim_piece(Piece { text: &p.text[mend..], col: p.col + mend });
    // Control items.
    let mut controls: Vec<Piece> = Vec::new();
    if let Some(amp) = rest.text.find('&') {
        let ctl = Piece { text: &rest.text[amp..], col: rest.col + amp };
        rest = trim_piece(Piece { text: &rest.text[..amp], col: rest.col });
        let mut off = 0;
        for item in ctl.text.split_whitespace() {
            let at = ctl.text[off..].find(item).unwrap() + off;
            controls.push(Piece { text: item, col: ctl.col + at });
            off = at + item.len();
        }
    }
    let ops: Vec<Piece> = if rest.text.is_empty() { Vec::new() } else { split_commas(rest) };
    for o in &ops {
        if o.text.is_empty() {
            return terr(o.col, "empty operand");
        }
    }
    let mut best: Option<Attempt> = None;
    let mut known = false;
    let mut mods_ok = false;
    for ot in ISA.optypes.iter() {
        for &fi in ot.forms.iter() {
            let form = FormId(fi);
            for pat in form.def().patterns.iter() {
                if pat.mnemonic != base {
                    continue;
                }
                known = true;
                let mut inst = Inst::new(form);
                if !match_mods(&mut inst, &pat.mods, &words) {
                    continue;
                }
                mods_ok = true;
                let mut ctx = Ctx { inst, pc, labels };
                if !match_slots(&mut ctx, &pat.slots, &ops, 0, &mut best) {
                    continue;
                }
                let mut inst = ctx.inst;
                if !pat.accepts(&form.def().fields, inst.values()) {
                    continue;
                }
                finish(&mut inst, guard, &controls, pat)?;
                match inst.validate() {
                    Ok(_) => return Ok(inst),
                    Err(e) => note(&mut best, usize::MAX - 1, TextError { col: mn_col, msg: e.to_string() }),
                }
            }
        }
    }
    if !known {
        return terr(mn_col, format!("unknown instruction `{}`", base));
    }
    if !mods_ok {
        return terr(mn_col, format!("`{}` does not take the modifiers `{}`", base, mn));
    }
    let mut e = best.map(|b| b.err).unwrap_or(TextError { col: mn_col, msg: "operands do not match any form".into() });
    if e.col == usize::MAX {
        e.col = end_col;
    }
    Err(e)
}

fn finish(inst: &mut Inst, guard: Option<(bool, &str, usize)>, controls: &[Piece], pat: &Pattern) -> Result<(), TextError> {
    let def = inst.def();
    if let Some((neg, g, col)) = guard {
        let Some(gi) = def.guard else { return terr(col, "this instruction cannot be predicated") };
        let kind = def.fields[gi as usize].kind;
        let v = expect_reg(g, kind, 32).map_err(|m| TextError { col, msg: format!("guard: {}", m) })?;
        inst.set_at(gi as usize, v);
        if let Some(ni) = def.guard_not {
            inst.set_at(ni as usize, neg as u64);
        } else if neg {
            return terr(col, "this guard cannot be negated");
        }
    }
    for c in controls {
        let item = c.text.strip_prefix('&').unwrap_or(c.text);
        let (name, val) = item.split_once('=').unwrap_or((item, "1"));
        let Some(i) = def.fields.iter().position(|f| f.control && f.fixed.is_none() && f.name == name) else {
            let names: Vec<&str> = def.fields.iter().filter(|f| f.control && f.fixed.is_none()).map(|f| &*f.name).collect();
            return terr(c.col, format!("unknown control item `{}` (expected one of {})", name, names.join(", ")));
        };
        let f = &def.fields[i];
        let v = parse_int(val)
            .filter(|v| *v >= 0 && (*v as u128) <= f.max() as u128)
            .ok_or_else(|| TextError { col: c.col, msg: format!("control `{}` takes 0..={}, found `{}`", name, f.max(), val) })?;
        if name == "wsb" && !pat.wsb && v as u64 != f.unused_value() {
            return terr(c.col, "only variable-latency instructions (`$wsb` in their syntax) may set a write scoreboard");
        }
        inst.set_at(i, v as u64);
    }
    Ok(())
}
