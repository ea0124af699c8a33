//! `ursa isa`: the opcode forms from the generated tables.

use ursa_emit::model::{Form, Kind, Operand};
use ursa_emit::ISA;

fn kind_name(k: Kind) -> String {
    match k {
        Kind::Enum(t) => ISA.types[t as usize].name.to_string(),
        Kind::SImm(n) => format!("SImm{}", n),
        Kind::UImm(n) => format!("UImm{}", n),
        other => format!("{:?}", other),
    }
}

fn operand_name(f: &Form, o: &Operand) -> String {
    let n = |i: &u16| f.fields[*i as usize].name.to_string();
    match o {
        Operand::Field(i) => n(i),
        Operand::Pseudo(p) => p.to_string(),
        Operand::CMemIndexed { cmem, reg } => format!("C[{}, {}]", n(cmem), n(reg)),
        Operand::RegIndexed { file, index, offset } => format!("{}[{}, {}]", file, n(index), n(offset)),
        Operand::Address { base, offset } => match offset {
            Some(o) => format!("[{}, {}]", n(base), n(o)),
            None => format!("[{}]", n(base)),
        },
    }
}

fn list(f: &Form, l: &[Operand]) -> String {
    l.iter().map(|o| operand_name(f, o)).collect::<Vec<_>>().join(", ")
}

pub fn run(form: Option<&str>) -> Result<(), String> {
    match form {
        None => {
            for f in ISA.forms.iter() {
                let ot = &ISA.optypes[f.optype as usize];
                let syntax = f
                    .patterns
                    .first()
                    .map(|p| ot.syntax.get(p.line as usize).map(|s| s.to_string()).unwrap_or_default())
                    .unwrap_or_default();
                println!("{:<16} {:<10} optype=0x{:02x} {}", f.name, ot.name, ot.value, syntax);
            }
            Ok(())
        }
        Some(name) => {
            let Some(fi) = ISA.form_by_name(name) else {
                let near: Vec<&str> =
                    ISA.forms.iter().filter(|f| f.name.starts_with(name.split('_').next().unwrap_or(name))).map(|f| &*f.name).collect();
                return Err(if near.is_empty() {
                    format!("no opcode form `{}` (see `ursa isa` for the list)", name)
                } else {
                    format!("no opcode form `{}`; did you mean one of: {}", name, near.join(", "))
                });
            };
            let f = &ISA.forms[fi];
            let ot = &ISA.optypes[f.optype as usize];
            println!("{}  (optype {} = 0x{:02x}, group {}, defined at {}:{})", f.name, ot.name, ot.value, f.group, f.file, f.line);
            println!("syntax:");
            for p in f.patterns.iter() {
                println!(
                    "  {}",
                    ot.syntax.get(p.line as usize).map(|s| s.to_string()).unwrap_or_else(|| format!("{} (derived from Order)", p.mnemonic))
                );
            }
            println!("operands: order <{}>  in <{}>  out <{}>", list(f, &f.order), list(f, &f.inputs), list(f, &f.outputs));
            println!("fields:");
            let mut idx: Vec<usize> = (0..f.fields.len()).collect();
            idx.sort_by_key(|i| f.fields[*i].lo);
            for i in idx {
                let fd = &f.fields[i];
                let init = match (fd.fixed, fd.default) {
                    (Some(v), _) => format!("== {}", value_name(fd.kind, v)),
                    (None, Some(v)) => format!("= {}", value_name(fd.kind, v)),
                    _ => String::new(),
                };
                println!("  [{:>3}:{:>3}] {:<10} {:<10} {}", fd.lo as u32 + fd.width as u32 - 1, fd.lo, fd.name, kind_name(fd.kind), init);
            }
            for x in f.exceptions.iter() {
                println!("exception: {} \"{}\"", x.kind, x.message);
            }
            println!("identifying bits: mask 0x{:032x} value 0x{:032x}", f.fixed_mask, f.fixed_bits);
            Ok(())
        }
    }
}

fn value_name(k: Kind, v: u64) -> String {
    match k {
        Kind::Enum(t) => ISA.types[t as usize].name_of(v).map(|s| s.to_string()).unwrap_or_else(|| v.to_string()),
        Kind::Reg if v == 255 => "RZ".into(),
        Kind::UReg if v == 63 => "URZ".into(),
        Kind::Pred if v == 7 => "PT".into(),
        Kind::UPred if v == 7 => "UPT".into(),
        _ => format!("{}", v),
    }
}
