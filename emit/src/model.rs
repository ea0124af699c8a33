//! The resolved instruction-set model: every opcode form with all of its
//! fields (group, optype and form fields merged), operand lists, bit widths,
//! exception rules and compiled assembly syntax.
//!
//! `build.rs` builds an [`Isa`] from the description files and writes it out
//! as Rust statics (see [`ToRust`]); the library uses the same types over
//! borrowed static data. The types use `Cow` so that one definition serves
//! both sides.

use std::borrow::Cow;
use std::collections::HashMap;

use crate::dsl::{self, BinOp, Def, DefKind, DslError, Expr, FieldInit, Loc, OperandRef, SpecFile};
use crate::syntax::{self, Pattern};

pub type Str = Cow<'static, str>;

/// The zero register of the R file (reads as 0, writes are discarded).
pub const RZ: u8 = 255;
/// The zero register of the UR file.
pub const URZ: u8 = 63;
/// The true predicate (P and UP files).
pub const PT: u8 = 7;
pub type List<T> = Cow<'static, [T]>;

/// The kind of value a field holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Kind {
    /// An enumerated `__DefBitFieldType`, by index into [`Isa::types`].
    Enum(u16),
    /// A general-purpose register R0–R254, 255 = RZ.
    Reg,
    /// A uniform register UR0–UR62, 63 = URZ.
    UReg,
    /// A predicate P0–P6, 7 = PT.
    Pred,
    /// A uniform predicate UP0–UP6, 7 = UPT.
    UPred,
    /// A constant-bank address: bits 0–15 byte offset, bits 16–21 bank.
    CMem,
    /// A signed immediate of the given width.
    SImm(u8),
    /// An unsigned immediate of the given width.
    UImm(u8),
    /// The bits of an IEEE binary32 value.
    F32Imm,
    /// The upper 32 bits of an IEEE binary64 value (the lower 32 are zero).
    F64Imm,
    /// A signed byte offset from the next instruction (branch and call targets).
    PCRel32,
}

impl Kind {
    /// The width the kind has in every encoding, where it is fixed.
    pub fn natural_width(self) -> Option<u32> {
        match self {
            Kind::Enum(_) => None,
            Kind::Reg => Some(8),
            Kind::UReg => Some(6),
            Kind::Pred | Kind::UPred => Some(3),
            Kind::CMem => Some(22),
            Kind::SImm(n) | Kind::UImm(n) => Some(n as u32),
            Kind::F32Imm | Kind::F64Imm | Kind::PCRel32 => Some(32),
        }
    }

    /// Whether the field names a register of some file.
    pub fn is_register(self) -> bool {
        matches!(self, Kind::Reg | Kind::UReg | Kind::Pred | Kind::UPred)
    }

    /// Whether the field is an immediate operand.
    pub fn is_immediate(self) -> bool {
        matches!(self, Kind::SImm(_) | Kind::UImm(_) | Kind::F32Imm | Kind::F64Imm | Kind::PCRel32)
    }

    /// The value that means "no register" (RZ, URZ, PT, UPT).
    pub fn zero_register(self) -> Option<u64> {
        match self {
            Kind::Reg => Some(RZ as u64),
            Kind::UReg => Some(URZ as u64),
            Kind::Pred | Kind::UPred => Some(PT as u64),
            _ => None,
        }
    }
}

/// An enumerated field type.
#[derive(Clone, Debug)]
pub struct EnumType {
    pub name: Str,
    pub width: u8,
    pub values: List<(Str, u32)>,
}

impl EnumType {
    pub fn value(&self, name: &str) -> Option<u32> {
        self.values.iter().find(|v| v.0 == name).map(|v| v.1)
    }
    pub fn name_of(&self, value: u64) -> Option<&str> {
        self.values.iter().find(|v| v.1 as u64 == value).map(|v| &*v.0)
    }
}

/// One field of a form.
#[derive(Clone, Debug)]
pub struct Field {
    pub name: Str,
    pub lo: u8,
    pub width: u8,
    pub kind: Kind,
    /// `= value`: used when the operand or modifier is omitted.
    pub default: Option<u64>,
    /// `== value`: constant for the form.
    pub fixed: Option<u64>,
    /// Whether the field belongs to the scheduling control (group `ALL`).
    pub control: bool,
}

impl Field {
    pub fn mask(&self) -> u128 {
        (if self.width >= 128 { u128::MAX } else { (1u128 << self.width) - 1 }) << self.lo
    }
    pub fn max(&self) -> u64 {
        if self.width >= 64 {
            u64::MAX
        } else {
            (1u64 << self.width) - 1
        }
    }
    /// The value the field takes where the chosen syntax does not mention it.
    pub fn unused_value(&self) -> u64 {
        self.fixed.or(self.default).or(self.kind.zero_register()).unwrap_or(0)
    }
}

/// An operand of `InList`/`OutList`/`Order`, resolved to field indices.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Operand {
    Field(u16),
    /// A fixed operand written literally, such as `PR` (all predicates).
    Pseudo(Str),
    /// `C[cmem, reg]`: constant bank address plus a uniform register offset.
    CMemIndexed {
        cmem: u16,
        reg: u16,
    },
    /// `R[ureg, imm]` / `UR[ureg, imm]`: a register selected by index.
    RegIndexed {
        file: Str,
        index: u16,
        offset: u16,
    },
    /// `[reg, imm]`: a memory address, register plus signed offset.
    Address {
        base: u16,
        offset: Option<u16>,
    },
}

impl Operand {
    /// The fields the operand is made of (none for a literal `Pseudo`).
    pub fn fields(&self) -> impl Iterator<Item = u16> {
        let (a, b) = match *self {
            Operand::Field(i) => (Some(i), None),
            Operand::Pseudo(_) => (None, None),
            Operand::CMemIndexed { cmem, reg } => (Some(cmem), Some(reg)),
            Operand::RegIndexed { index, offset, .. } => (Some(index), Some(offset)),
            Operand::Address { base, offset } => (Some(base), offset),
        };
        a.into_iter().chain(b)
    }
}

/// Expression in reverse Polish notation over a form's fields.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExprOp {
    Num(i64),
    Field(u16),
    Not,
    Bin(BinOp),
}

/// The field values an expression or a syntax pattern reads, by field index:
/// a slice of values, or an instruction's packed word (`Inst::values`).
pub trait FieldValues: Copy {
    fn value(self, field: usize) -> u64;
}

impl FieldValues for &[u64] {
    #[inline]
    fn value(self, field: usize) -> u64 {
        self[field]
    }
}

pub fn eval(expr: &[ExprOp], vals: impl FieldValues) -> i64 {
    // This runs for every register operand of every instruction
    // (`bitwidth_of`), where most expressions are a constant: those and a
    // lone field are read without the stack machine. Otherwise the stack
    // lives on the stack unless the expression is long (its depth never
    // exceeds its length).
    match expr {
        [ExprOp::Num(v)] => return *v,
        [ExprOp::Field(i)] => return vals.value(*i as usize) as i64,
        _ => {}
    }
    if expr.len() <= 32 {
        eval_in(expr, vals, &mut [0; 32])
    } else {
        eval_in(expr, vals, &mut vec![0; expr.len()])
    }
}

fn eval_in(expr: &[ExprOp], vals: impl FieldValues, st: &mut [i64]) -> i64 {
    fn push(st: &mut [i64], n: &mut usize, v: i64) {
        st[*n] = v;
        *n += 1;
    }
    fn pop(st: &[i64], n: &mut usize) -> i64 {
        if *n == 0 {
            return 0;
        }
        *n -= 1;
        st[*n]
    }
    let mut sp = 0usize;
    for op in expr {
        match *op {
            ExprOp::Num(v) => push(st, &mut sp, v),
            ExprOp::Field(i) => push(st, &mut sp, vals.value(i as usize) as i64),
            ExprOp::Not => {
                let a = pop(st, &mut sp);
                push(st, &mut sp, (a == 0) as i64)
            }
            ExprOp::Bin(b) => {
                let r = pop(st, &mut sp);
                let l = pop(st, &mut sp);
                push(
                    st,
                    &mut sp,
                    match b {
                        BinOp::Add => l.wrapping_add(r),
                        BinOp::Sub => l.wrapping_sub(r),
                        BinOp::Mul => l.wrapping_mul(r),
                        BinOp::Eq => (l == r) as i64,
                        BinOp::Ne => (l != r) as i64,
                        BinOp::Lt => (l < r) as i64,
                        BinOp::Le => (l <= r) as i64,
                        BinOp::Gt => (l > r) as i64,
                        BinOp::Ge => (l >= r) as i64,
                        BinOp::And => (l != 0 && r != 0) as i64,
                        BinOp::Or => (l != 0 || r != 0) as i64,
                    },
                )
            }
        }
    }
    pop(st, &mut sp)
}

/// An `EncodingError` rule.
#[derive(Clone, Debug)]
pub struct Exception {
    pub kind: Str,
    pub message: Str,
    pub cond: List<ExprOp>,
}

/// One opcode form (`IADD_RR`).
#[derive(Clone, Debug)]
pub struct Form {
    pub name: Str,
    pub optype: u16,
    pub group: Str,
    pub fields: List<Field>,
    pub inputs: List<Operand>,
    pub outputs: List<Operand>,
    /// Operands in assembly order, guard first.
    pub order: List<Operand>,
    /// Bit width of register operands, by field index.
    pub bitwidth: List<(u16, List<ExprOp>)>,
    pub exceptions: List<Exception>,
    /// The assembly patterns, one per syntax line of the optype that this
    /// form can express.
    pub patterns: List<Pattern>,
    /// Bits that identify the form, and their values.
    pub fixed_mask: u128,
    pub fixed_bits: u128,
    /// Index of the guard predicate field, if any.
    pub guard: Option<u16>,
    /// Index of the guard's negation flag (`pg.not`), if any.
    pub guard_not: Option<u16>,
    pub file: Str,
    pub line: u32,
}

impl Form {
    pub fn field_index(&self, name: &str) -> Option<usize> {
        self.fields.iter().position(|f| f.name == name)
    }
    pub fn bitwidth_of(&self, field: usize, vals: impl FieldValues) -> u32 {
        self.bitwidth.iter().find(|b| b.0 as usize == field).map(|b| eval(&b.1, vals) as u32).unwrap_or(32)
    }
}

/// One operation (`IADD`), with its syntax lines and examples.
#[derive(Clone, Debug)]
pub struct Optype {
    pub name: Str,
    pub value: u8,
    pub syntax: List<Str>,
    pub examples: List<(Str, u32)>,
    pub forms: List<u16>,
    /// The optype's latency class, by index into [`Isa::latencies`].
    pub latency: u16,
    pub file: Str,
    pub line: u32,
}

/// A latency class (`__DefLatency`, docs/latencies.md).
#[derive(Clone, Debug)]
pub struct Latency {
    pub name: Str,
    /// Cycles from issue until the results can be read.
    pub cycles: u16,
    /// Whether results are signalled through a write scoreboard (`$wsb`).
    pub variable: bool,
}

/// The whole instruction set.
#[derive(Clone, Debug)]
pub struct Isa {
    pub types: List<EnumType>,
    pub optypes: List<Optype>,
    pub forms: List<Form>,
    pub latencies: List<Latency>,
}

const BUILTIN_TYPES: &[(&str, Kind)] = &[
    ("Reg", Kind::Reg),
    ("UReg", Kind::UReg),
    ("Pred", Kind::Pred),
    ("UPred", Kind::UPred),
    ("CMem", Kind::CMem),
    ("F32Imm", Kind::F32Imm),
    ("F64Imm", Kind::F64Imm),
    ("PCRel32", Kind::PCRel32),
];

fn builtin_kind(ty: &str) -> Option<Kind> {
    if let Some(k) = BUILTIN_TYPES.iter().find(|b| b.0 == ty) {
        return Some(k.1);
    }
    for (prefix, signed) in [("SImm", true), ("UImm", false)] {
        if let Some(n) = ty.strip_prefix(prefix) {
            if let Ok(n) = n.parse::<u8>() {
                if (1..=64).contains(&n) {
                    return Some(if signed { Kind::SImm(n) } else { Kind::UImm(n) });
                }
            }
        }
    }
    None
}

fn e<T>(loc: &Loc, msg: impl Into<String>) -> Result<T, DslError> {
    Err(DslError { loc: loc.clone(), msg: msg.into() })
}

/// Parses the text of a value for a field of the given kind: an enumerated
/// value name, a register name, or a number.
pub fn parse_value(types: &[EnumType], kind: Kind, text: &str) -> Option<u64> {
    let t = text.trim();
    let num = |s: &str| -> Option<i128> {
        let (neg, s) = match s.strip_prefix('-') {
            Some(r) => (true, r),
            None => (false, s),
        };
        let v = if let Some(h) = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
            i128::from_str_radix(h, 16).ok()?
        } else {
            s.parse::<i128>().ok()?
        };
        Some(if neg { -v } else { v })
    };
    let reg = |prefix: &str, zero: &str, zval: u64, max: u64| -> Option<u64> {
        if t == zero {
            return Some(zval);
        }
        let n: u64 = t.strip_prefix(prefix)?.parse().ok()?;
        (n <= max).then_some(n)
    };
    match kind {
        Kind::Enum(i) => types[i as usize].value(t).map(|v| v as u64).or_else(|| {
            let v = num(t)?;
            (v >= 0 && v < (1i128 << types[i as usize].width)).then_some(v as u64)
        }),
        Kind::Reg => reg("R", "RZ", RZ as u64, 254),
        Kind::UReg => reg("UR", "URZ", URZ as u64, 62),
        Kind::Pred => reg("P", "PT", PT as u64, 6),
        Kind::UPred => reg("UP", "UPT", PT as u64, 6),
        Kind::SImm(w) | Kind::UImm(w) => {
            let v = num(t)?;
            let w = w as u32;
            let lo = if matches!(kind, Kind::SImm(_)) { -(1i128 << (w - 1)) } else { 0 };
            let hi = (1i128 << w) - 1;
            (v >= lo && v <= hi).then(|| (v as u128 & ((1u128 << w) - 1)) as u64)
        }
        _ => {
            let v = num(t)?;
            (0..=u32::MAX as i128).contains(&v).then_some(v as u64)
        }
    }
}

struct Ctx<'a> {
    types: Vec<EnumType>,
    type_index: HashMap<String, u16>,
    defs: HashMap<String, &'a Def>,
}

impl<'a> Ctx<'a> {
    fn kind_of(&self, ty: &str, loc: &Loc) -> Result<Kind, DslError> {
        if let Some(k) = builtin_kind(ty) {
            return Ok(k);
        }
        match self.type_index.get(ty) {
            Some(i) => Ok(Kind::Enum(*i)),
            None => e(loc, format!("field type `{}` is neither built in nor defined by `__DefBitFieldType`", ty)),
        }
    }

    fn chain(&self, def: &'a Def) -> Result<Vec<&'a Def>, DslError> {
        let mut chain = vec![def];
        let mut cur = def;
        while let Some(p) = &cur.parent {
            let Some(pd) = self.defs.get(p) else {
                return e(&cur.loc, format!("parent `{}` of `{}` is not defined", p, cur.name));
            };
            if chain.len() > 16 || chain.iter().any(|d| std::ptr::eq(*d, *pd)) {
                return e(&cur.loc, format!("definition `{}` has a cyclic parent chain", def.name));
            }
            chain.push(pd);
            cur = pd;
        }
        chain.reverse();
        Ok(chain)
    }
}

/// The latency classes of the files (`__DefLatency`), and each optype's:
/// every optype must be in exactly one class.
fn assign_latencies(files: &[SpecFile], optypes: &mut [Optype]) -> Result<Vec<Latency>, DslError> {
    let mut classes: Vec<(Latency, &Loc)> = Vec::new();
    for d in files.iter().flat_map(|f| f.latencies.iter()) {
        if let Some((_, at)) = classes.iter().find(|c| c.0.name == d.name.as_str()) {
            return e(&d.loc, format!("latency class `{}` is already defined at {}", d.name, at));
        }
        let ci = classes.len() as u16;
        classes.push((Latency { name: d.name.clone().into(), cycles: d.cycles as u16, variable: d.variable }, &d.loc));
        for (name, loc) in &d.optypes {
            let Some(o) = optypes.iter_mut().find(|o| o.name == name.as_str()) else {
                return e(loc, format!("latency class `{}` lists `{}`, which is not an optype", d.name, name));
            };
            if o.latency != u16::MAX {
                return e(loc, format!("optype `{}` is already in latency class `{}`", name, classes[o.latency as usize].0.name));
            }
            o.latency = ci;
        }
    }
    if let Some(o) = optypes.iter().find(|o| o.latency == u16::MAX) {
        return e(
            &Loc { file: o.file.to_string(), line: o.line as usize },
            format!("optype `{}` is in no latency class (add it to a `__DefLatency` of emit/spec/project.isa)", o.name),
        );
    }
    Ok(classes.into_iter().map(|c| c.0).collect())
}

/// A class is `variable` exactly when the syntax lines of its optypes carry
/// `$wsb` (forms without syntax, such as UF2FP, say nothing).
fn check_latency_syntax(files: &[SpecFile], isa: &Isa) -> Result<(), DslError> {
    for f in isa.forms.iter() {
        let o = &isa.optypes[f.optype as usize];
        let class = &isa.latencies[o.latency as usize];
        if let Some(p) = f.patterns.iter().find(|p| p.wsb != class.variable) {
            let at = files
                .iter()
                .flat_map(|f| f.latencies.iter())
                .flat_map(|d| d.optypes.iter())
                .find(|x| x.0 == o.name.as_ref())
                .map(|x| x.1.clone());
            return e(
                &at.unwrap_or(Loc { file: f.file.to_string(), line: f.line as usize }),
                format!(
                    "optype `{}` is in the {} latency class `{}`, but a syntax line of form `{}` ({}) {} `$wsb`",
                    o.name,
                    if class.variable { "variable" } else { "fixed" },
                    class.name,
                    f.name,
                    p.line,
                    if p.wsb { "has" } else { "lacks" }
                ),
            );
        }
    }
    Ok(())
}

impl Isa {
    /// Resolves the definitions of several files into one instruction set.
    pub fn build(files: &[SpecFile]) -> Result<Isa, DslError> {
        let mut ctx = Ctx { types: Vec::new(), type_index: HashMap::new(), defs: HashMap::new() };
        for f in files {
            for t in &f.types {
                if ctx.type_index.contains_key(&t.name) {
                    return e(&t.loc, format!("bit-field type `{}` is defined twice", t.name));
                }
                if builtin_kind(&t.name).is_some() {
                    return e(&t.loc, format!("`{}` is a built-in field type and cannot be redefined", t.name));
                }
                for (n, v) in &t.values {
                    if *v >= 1u64 << t.width {
                        return e(&t.loc, format!("value `{}` = {} of `{}` does not fit in {} bits", n, v, t.name, t.width));
                    }
                }
                ctx.type_index.insert(t.name.clone(), ctx.types.len() as u16);
                ctx.types.push(EnumType {
                    name: t.name.clone().into(),
                    width: t.width as u8,
                    values: t.values.iter().map(|(n, v)| (Str::from(n.clone()), *v as u32)).collect(),
                });
            }
            for d in &f.defs {
                if let Some(prev) = ctx.defs.insert(d.name.clone(), d) {
                    return e(&d.loc, format!("`{}` is already defined at {}", d.name, prev.loc));
                }
            }
        }
        let Some(&optype_ty) = ctx.type_index.get("Optype") else {
            return e(&Loc { file: "<spec>".into(), line: 0 }, "the `Optype` bit-field type is not defined");
        };

        // Optypes, numbered by the Optype table; unlisted ones get the lowest free numbers.
        let mut optype_defs: Vec<&Def> = Vec::new();
        for f in files {
            for d in &f.defs {
                if d.kind == DefKind::Optype {
                    optype_defs.push(d);
                }
            }
        }
        {
            let ot = &mut ctx.types[optype_ty as usize];
            let mut values: Vec<(Str, u32)> = ot.values.to_vec();
            let mut used: Vec<bool> = vec![false; 1 << ot.width];
            for v in &values {
                used[v.1 as usize] = true;
            }
            for d in &optype_defs {
                if !values.iter().any(|v| v.0 == d.name.as_str()) {
                    let Some(free) = (1..used.len()).find(|i| !used[*i]) else {
                        return e(&d.loc, "no free Optype value left");
                    };
                    used[free] = true;
                    values.push((d.name.clone().into(), free as u32));
                }
            }
            ot.values = values.into();
        }

        let mut optypes: Vec<Optype> = Vec::new();
        let mut forms: Vec<Form> = Vec::new();
        for od in &optype_defs {
            let value = ctx.types[optype_ty as usize].value(&od.name).unwrap() as u8;
            optypes.push(Optype {
                name: od.name.clone().into(),
                value,
                syntax: od.syntax.iter().map(|s| Str::from(s.0.clone())).collect(),
                examples: od.examples.iter().map(|x| (Str::from(x.0.clone()), x.1.line as u32)).collect(),
                forms: List::Owned(Vec::new()),
                latency: u16::MAX,
                file: od.loc.file.clone().into(),
                line: od.loc.line as u32,
            });
        }
        let latencies = assign_latencies(files, &mut optypes)?;
        for f in files {
            for d in &f.defs {
                if d.kind != DefKind::Opcode {
                    continue;
                }
                let form = build_form(&ctx, d, &optypes)?;
                let oi = form.optype as usize;
                let mut fl = optypes[oi].forms.to_vec();
                fl.push(forms.len() as u16);
                optypes[oi].forms = fl.into();
                forms.push(form);
            }
        }
        let isa_types: List<EnumType> = ctx.types.clone().into();
        // Forms must be told apart by their fixed bits.
        for i in 0..forms.len() {
            for j in i + 1..forms.len() {
                let (a, b) = (&forms[i], &forms[j]);
                let common = a.fixed_mask & b.fixed_mask;
                if (a.fixed_bits & common) == (b.fixed_bits & common) {
                    return e(
                        &Loc { file: b.file.to_string(), line: b.line as usize },
                        format!("forms `{}` and `{}` have the same identifying bits (optype and stype)", a.name, b.name),
                    );
                }
            }
        }
        for o in &optypes {
            if o.forms.is_empty() {
                return e(&Loc { file: o.file.to_string(), line: o.line as usize }, format!("optype `{}` has no opcode form", o.name));
            }
        }
        let mut isa = Isa { types: isa_types, optypes: optypes.into(), forms: forms.into(), latencies: latencies.into() };
        // Compile the syntax lines of every form.
        let mut all_patterns = Vec::new();
        for (fi, form) in isa.forms.iter().enumerate() {
            let od = ctx.defs[&*isa.optypes[form.optype as usize].name];
            let fd = ctx.defs[&*form.name];
            let pats = syntax::compile_form(&isa, fi, od, fd)?;
            all_patterns.push(pats);
        }
        let mut forms = isa.forms.to_vec();
        for (f, p) in forms.iter_mut().zip(all_patterns) {
            f.patterns = p.into();
        }
        isa.forms = forms.into();
        check_latency_syntax(files, &isa)?;
        Ok(isa)
    }

    pub fn form_by_name(&self, name: &str) -> Option<usize> {
        self.forms.iter().position(|f| f.name == name)
    }

    pub fn optype_by_name(&self, name: &str) -> Option<usize> {
        self.optypes.iter().position(|f| f.name == name)
    }
}

fn build_form(ctx: &Ctx, d: &Def, optypes: &[Optype]) -> Result<Form, DslError> {
    let chain = ctx.chain(d)?;
    let od = chain[chain.len() - 2];
    if od.kind != DefKind::Optype {
        return e(&d.loc, format!("the parent of opcode `{}` must be an optype", d.name));
    }
    if chain[..chain.len() - 2].iter().any(|g| g.kind != DefKind::Group) {
        return e(&od.loc, format!("the parent of optype `{}` must be a group", od.name));
    }
    let optype = optypes.iter().position(|o| o.name == od.name.as_str()).unwrap() as u16;
    // Merge fields: group chain, then optype, then form; a later declaration of
    // the same name replaces an earlier one at the same bits.
    let mut decls: Vec<(&dsl::FieldDecl, bool)> = Vec::new();
    for def in &chain {
        let control = def.kind == DefKind::Group && def.name == "ALL";
        for fd in &def.fields {
            if let Some(prev) = decls.iter_mut().find(|p| p.0.name == fd.name) {
                if prev.0.start != fd.start || prev.0.width != fd.width {
                    return e(&fd.loc, format!("field `{}` redeclared at other bits than at {}", fd.name, prev.0.loc));
                }
                *prev = (fd, control);
            } else {
                decls.push((fd, control));
            }
        }
    }
    let mut fields: Vec<Field> = Vec::new();
    for (fd, control) in &decls {
        let kind = ctx.kind_of(&fd.ty, &fd.loc)?;
        let width = match kind {
            Kind::Enum(i) => ctx.types[i as usize].width as u32,
            k => k.natural_width().unwrap(),
        };
        if width != fd.width {
            return e(&fd.loc, format!("field `{}` is {} bits wide but its type `{}` has {} bits", fd.name, fd.width, fd.ty, width));
        }
        let val = |text: &str| -> Result<u64, DslError> {
            parse_value(&ctx.types, kind, text).ok_or_else(|| DslError {
                loc: fd.loc.clone(),
                msg: format!("`{}` is not a value of type `{}` (field `{}`)", text, fd.ty, fd.name),
            })
        };
        let (default, fixed) = match &fd.init {
            FieldInit::None => (None, None),
            FieldInit::Default(v) => (Some(val(v)?), None),
            FieldInit::Fixed(v) => (None, Some(val(v)?)),
        };
        fields.push(Field {
            name: fd.name.clone().into(),
            lo: fd.start as u8,
            width: fd.width as u8,
            kind,
            default,
            fixed,
            control: *control,
        });
    }
    for i in 0..fields.len() {
        for j in i + 1..fields.len() {
            if fields[i].mask() & fields[j].mask() != 0 {
                return e(
                    &decls[j].0.loc,
                    format!(
                        "in `{}`, field `{}` overlaps field `{}` (declared at {})",
                        d.name, fields[j].name, fields[i].name, decls[i].0.loc
                    ),
                );
            }
        }
    }
    let find = |name: &str, loc: &Loc| -> Result<u16, DslError> {
        fields
            .iter()
            .position(|f| f.name == name)
            .map(|i| i as u16)
            .ok_or_else(|| DslError { loc: loc.clone(), msg: format!("`{}` is not a field of `{}`", name, d.name) })
    };
    if !fields.iter().any(|f| f.name == "optype" && f.fixed.is_some()) {
        return e(&d.loc, format!("`{}` has no fixed `optype` field", d.name));
    }
    let ov = fields.iter().find(|f| f.name == "optype").unwrap();
    if let Kind::Enum(t) = ov.kind {
        if ctx.types[t as usize].name_of(ov.fixed.unwrap()) != Some(od.name.as_str()) {
            return e(&d.loc, format!("the optype field of `{}` names another optype", d.name));
        }
    }
    if !fields.iter().any(|f| f.name == "stype" && f.fixed.is_some()) {
        return e(&d.loc, format!("`{}` has no fixed `stype` field", d.name));
    }
    let resolve_ref = |r: &OperandRef, loc: &Loc| -> Result<Operand, DslError> {
        Ok(match r {
            OperandRef::Name(n) => match fields.iter().position(|f| f.name == n.as_str()) {
                Some(i) => Operand::Field(i as u16),
                None if n.chars().all(|c| c.is_ascii_uppercase()) => Operand::Pseudo(n.clone().into()),
                None => return e(loc, format!("`{}` is not a field of `{}`", n, d.name)),
            },
            OperandRef::Composite { kind, parts } => {
                let idx: Vec<u16> = parts.iter().map(|p| find(p, loc)).collect::<Result<_, _>>()?;
                match (kind.as_str(), idx.as_slice()) {
                    ("C", [c, r]) => Operand::CMemIndexed { cmem: *c, reg: *r },
                    ("R" | "UR", [i, o]) => Operand::RegIndexed { file: kind.clone().into(), index: *i, offset: *o },
                    ("", [b]) => Operand::Address { base: *b, offset: None },
                    ("", [b, o]) => Operand::Address { base: *b, offset: Some(*o) },
                    _ => return e(loc, format!("unknown composite operand `{}`", r)),
                }
            }
        })
    };
    let mut inputs = Vec::new();
    let mut outputs = Vec::new();
    let mut order = Vec::new();
    let mut bitwidth: Vec<(u16, List<ExprOp>)> = Vec::new();
    for def in [od, d] {
        for (dir, loc) in &def.directives {
            match dir {
                dsl::Directive::InList(l) => inputs = l.iter().map(|r| resolve_ref(r, loc)).collect::<Result<_, _>>()?,
                dsl::Directive::OutList(l) => outputs = l.iter().map(|r| resolve_ref(r, loc)).collect::<Result<_, _>>()?,
                dsl::Directive::Order(l) => order = l.iter().map(|r| resolve_ref(r, loc)).collect::<Result<_, _>>()?,
                dsl::Directive::Bitwidth(n, x) => {
                    let fi = find(n, loc)?;
                    let ops = compile_expr(&ctx.types, &fields, x, loc)?;
                    bitwidth.retain(|b| b.0 != fi);
                    bitwidth.push((fi, ops.into()));
                }
                _ => {}
            }
        }
    }
    if order.is_empty() {
        return e(&d.loc, format!("`{}` has no `Order<…>`", d.name));
    }
    let mut exceptions = Vec::new();
    for def in [od, d] {
        for x in &def.exceptions {
            exceptions.push(Exception {
                kind: x.kind.clone().into(),
                message: x.message.clone().into(),
                cond: compile_expr(&ctx.types, &fields, &x.cond, &x.loc)?.into(),
            });
        }
    }
    let mut fixed_mask = 0u128;
    let mut fixed_bits = 0u128;
    for f in &fields {
        if let Some(v) = f.fixed {
            fixed_mask |= f.mask();
            fixed_bits |= (v as u128) << f.lo;
        }
    }
    let guard = fields.iter().position(|f| (f.name == "pg" || f.name == "upg") && f.kind.is_register()).map(|i| i as u16);
    let guard_not = guard.and_then(|g| {
        let not = format!("{}.not", fields[g as usize].name);
        fields.iter().position(|f| f.name == not).map(|i| i as u16)
    });
    Ok(Form {
        name: d.name.clone().into(),
        optype,
        group: chain[chain.len() - 3].name.clone().into(),
        fields: fields.into(),
        inputs: inputs.into(),
        outputs: outputs.into(),
        order: order.into(),
        bitwidth: bitwidth.into(),
        exceptions: exceptions.into(),
        patterns: List::Owned(Vec::new()),
        fixed_mask,
        fixed_bits,
        guard,
        guard_not,
        file: d.loc.file.clone().into(),
        line: d.loc.line as u32,
    })
}

/// Compiles a DSL expression; `field == "NAME"` compares with the value of
/// `NAME` in the field's enumerated type.
fn compile_expr(types: &[EnumType], fields: &[Field], x: &Expr, loc: &Loc) -> Result<Vec<ExprOp>, DslError> {
    let mut out = Vec::new();
    fn go(
        types: &[EnumType],
        fields: &[Field],
        x: &Expr,
        loc: &Loc,
        ctx_field: Option<usize>,
        out: &mut Vec<ExprOp>,
    ) -> Result<(), DslError> {
        match x {
            Expr::Num(n) => out.push(ExprOp::Num(*n)),
            Expr::Ident(n) => match fields.iter().position(|f| f.name == n.as_str()) {
                Some(i) => out.push(ExprOp::Field(i as u16)),
                None => match ctx_field.and_then(|cf| parse_value(types, fields[cf].kind, n)) {
                    Some(v) => out.push(ExprOp::Num(v as i64)),
                    None => match n.as_str() {
                        "True" | "true" => out.push(ExprOp::Num(1)),
                        "False" | "false" => out.push(ExprOp::Num(0)),
                        _ => return e(loc, format!("`{}` is not a field", n)),
                    },
                },
            },
            Expr::Str(s) => {
                let Some(cf) = ctx_field else { return e(loc, format!("string \"{}\" must be compared with a field", s)) };
                match parse_value(types, fields[cf].kind, s) {
                    Some(v) => out.push(ExprOp::Num(v as i64)),
                    None => return e(loc, format!("\"{}\" is not a value of field `{}`", s, fields[cf].name)),
                }
            }
            Expr::Not(a) => {
                go(types, fields, a, loc, ctx_field, out)?;
                out.push(ExprOp::Not);
            }
            Expr::Bin(op, a, b) => {
                let field_of = |x: &Expr| match x {
                    Expr::Ident(n) => fields.iter().position(|f| f.name == n.as_str()),
                    _ => None,
                };
                let cf = match op {
                    BinOp::Eq | BinOp::Ne => field_of(a).or_else(|| field_of(b)),
                    _ => None,
                };
                go(types, fields, a, loc, cf, out)?;
                go(types, fields, b, loc, cf, out)?;
                out.push(ExprOp::Bin(*op));
            }
        }
        Ok(())
    }
    go(types, fields, x, loc, None, &mut out)?;
    Ok(out)
}

// ---- writing the model as Rust source -------------------------------------

/// Writes a value as a Rust constant expression over the model's types.
pub trait ToRust {
    fn rs(&self, out: &mut String);
}

macro_rules! to_rust_num {
    ($($t:ty),*) => {$(impl ToRust for $t { fn rs(&self, out: &mut String) { out.push_str(&format!("{}", self)); } })*};
}
to_rust_num!(u8, u16, u32, u64, i64, bool);

impl ToRust for u128 {
    fn rs(&self, out: &mut String) {
        out.push_str(&format!("0x{:x}", self));
    }
}

impl ToRust for Str {
    fn rs(&self, out: &mut String) {
        out.push_str(&format!("Cow::Borrowed({:?})", &**self));
    }
}

impl<T: ToRust + Clone> ToRust for List<T> {
    fn rs(&self, out: &mut String) {
        out.push_str("Cow::Borrowed(&[");
        for x in self.iter() {
            x.rs(out);
            out.push(',');
        }
        out.push_str("])");
    }
}

impl<T: ToRust> ToRust for Option<T> {
    fn rs(&self, out: &mut String) {
        match self {
            None => out.push_str("None"),
            Some(x) => {
                out.push_str("Some(");
                x.rs(out);
                out.push(')');
            }
        }
    }
}

impl<A: ToRust, B: ToRust> ToRust for (A, B) {
    fn rs(&self, out: &mut String) {
        out.push('(');
        self.0.rs(out);
        out.push(',');
        self.1.rs(out);
        out.push(')');
    }
}

/// Writes `Name { a: .., b: .. }` for a struct.
#[macro_export]
macro_rules! to_rust_struct {
    ($t:ident { $($f:ident),* }) => {
        impl ToRust for $t {
            fn rs(&self, out: &mut String) {
                out.push_str(concat!(stringify!($t), "{"));
                $( out.push_str(concat!(stringify!($f), ":")); self.$f.rs(out); out.push(','); )*
                out.push('}');
            }
        }
    };
}

impl ToRust for Kind {
    fn rs(&self, out: &mut String) {
        out.push_str(&format!("Kind::{:?}", self));
    }
}

impl ToRust for BinOp {
    fn rs(&self, out: &mut String) {
        out.push_str(&format!("BinOp::{:?}", self));
    }
}

impl ToRust for ExprOp {
    fn rs(&self, out: &mut String) {
        match self {
            ExprOp::Num(n) => out.push_str(&format!("ExprOp::Num({})", n)),
            ExprOp::Field(n) => out.push_str(&format!("ExprOp::Field({})", n)),
            ExprOp::Not => out.push_str("ExprOp::Not"),
            ExprOp::Bin(b) => {
                out.push_str("ExprOp::Bin(");
                b.rs(out);
                out.push(')');
            }
        }
    }
}

impl ToRust for Operand {
    fn rs(&self, out: &mut String) {
        match self {
            Operand::Field(i) => out.push_str(&format!("Operand::Field({})", i)),
            Operand::Pseudo(s) => {
                out.push_str("Operand::Pseudo(");
                s.rs(out);
                out.push(')');
            }
            Operand::CMemIndexed { cmem, reg } => out.push_str(&format!("Operand::CMemIndexed{{cmem:{},reg:{}}}", cmem, reg)),
            Operand::RegIndexed { file, index, offset } => {
                out.push_str("Operand::RegIndexed{file:");
                file.rs(out);
                out.push_str(&format!(",index:{},offset:{}}}", index, offset));
            }
            Operand::Address { base, offset } => {
                out.push_str(&format!("Operand::Address{{base:{},offset:", base));
                offset.rs(out);
                out.push('}');
            }
        }
    }
}

to_rust_struct!(EnumType { name, width, values });
to_rust_struct!(Field { name, lo, width, kind, default, fixed, control });
to_rust_struct!(Exception { kind, message, cond });
to_rust_struct!(Form {
    name,
    optype,
    group,
    fields,
    inputs,
    outputs,
    order,
    bitwidth,
    exceptions,
    patterns,
    fixed_mask,
    fixed_bits,
    guard,
    guard_not,
    file,
    line
});
to_rust_struct!(Optype { name, value, syntax, examples, forms, latency, file, line });
to_rust_struct!(Latency { name, cycles, variable });
to_rust_struct!(Isa { types, optypes, forms, latencies });
