//! Property tests: every opcode form round-trips encode -> decode and
//! text -> bytes for random operand and modifier values; random bytes never
//! panic the decoder.

use proptest::prelude::*;
use ursa_emit::model::Kind;
use ursa_emit::syntax::Mod;
use ursa_emit::{format_inst, parse_inst, FormId, Inst, NoLabels, ISA};

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

fn random_value(rng: &mut Rng, inst: &Inst, fi: usize) -> u64 {
    let f = inst.field_def(fi);
    let width = inst.def().bitwidth_of(fi, inst.values()) as u64;
    let regs = |rng: &mut Rng, zero: u64| {
        let n = (width / 32).max(1);
        if rng.below(8) == 0 {
            zero
        } else {
            (rng.below(zero) / n) * n % (zero + 1 - n)
        }
    };
    match f.kind {
        Kind::Reg => regs(rng, 255),
        Kind::UReg => regs(rng, 63),
        Kind::Pred | Kind::UPred => rng.below(8),
        Kind::Enum(t) => {
            let ty = &ISA.types[t as usize];
            ty.values[rng.below(ty.values.len() as u64) as usize].1 as u64
        }
        _ => rng.next() & f.max(),
    }
}

/// A random valid instruction of `form`, or None if rejection sampling fails.
fn random_inst(form: FormId, rng: &mut Rng) -> Option<Inst> {
    let def = form.def();
    for _ in 0..200 {
        let pat = &def.patterns[rng.below(def.patterns.len() as u64) as usize];
        let mut inst = Inst::new(form);
        for m in pat.mods.iter() {
            match m {
                Mod::Lit { .. } => {}
                Mod::Fixed { field, value, optional, .. } => {
                    if !*optional || rng.below(2) == 0 {
                        inst.set_at(*field as usize, *value);
                    }
                }
                Mod::Var { field, allowed, .. } => inst.set_at(*field as usize, allowed[rng.below(allowed.len() as u64) as usize]),
            }
        }
        let pinned: Vec<u16> = pat.pinned.iter().map(|p| p.0).collect();
        for (i, f) in def.fields.iter().enumerate() {
            let is_mod = pat.mods.iter().any(|m| matches!(m, Mod::Fixed { field, .. } | Mod::Var { field, .. } if *field as usize == i));
            if f.fixed.is_some() || is_mod || pinned.contains(&(i as u16)) {
                continue;
            }
            let v = match &*f.name {
                "wsb" => {
                    if pat.wsb {
                        [0, 1, 2, 3, 4, 5, 7][rng.below(7) as usize]
                    } else {
                        7
                    }
                }
                _ => random_value(rng, &inst, i),
            };
            inst.set_at(i, v);
        }
        // Registers whose width depends on modifiers are drawn after them.
        for (i, f) in def.fields.iter().enumerate() {
            if matches!(f.kind, Kind::Reg | Kind::UReg) && !pinned.contains(&(i as u16)) {
                inst.set_at(i, random_value(rng, &inst, i));
            }
        }
        if inst.validate().is_ok() {
            return Some(inst);
        }
    }
    None
}

fn check_form(form: FormId, seed: u64) -> Result<(), String> {
    let mut rng = Rng(seed | 1);
    for _ in 0..8 {
        let Some(inst) = random_inst(form, &mut rng) else {
            return Err(format!("{}: could not draw a valid instruction", form.name()));
        };
        let bytes = inst.encode().map_err(|e| format!("{:?}: {}", inst, e))?;
        let back = Inst::decode(&bytes).map_err(|e| format!("{:?}: decode: {}", inst, e))?;
        if back != inst {
            return Err(format!("decode differs:\n  {:?}\n  {:?}", inst, back));
        }
        let text = format_inst(&inst, None, &NoLabels).map_err(|e| e.to_string())?;
        let again = parse_inst(&text, 1, None, &NoLabels).map_err(|e| format!("`{}`: col {}: {}", text, e.col, e.msg))?;
        let bytes2 = again.encode().map_err(|e| e.to_string())?;
        if bytes2 != bytes {
            return Err(format!("`{}` reassembles differently:\n  {:?}\n  {:?}", text, inst, again));
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, .. ProptestConfig::default() })]

    #[test]
    fn every_form_round_trips(seed in any::<u64>()) {
        let mut failures = Vec::new();
        for i in 0..ISA.forms.len() {
            if let Err(e) = check_form(FormId(i as u16), seed.wrapping_add(i as u64 * 0x9E37_79B9)) {
                failures.push(e);
            }
        }
        prop_assert!(failures.is_empty(), "{} forms fail:\n{}", failures.len(), failures.join("\n"));
    }

    #[test]
    fn random_bytes_never_panic(bytes in any::<[u8; 16]>()) {
        if let Ok(inst) = Inst::decode(&bytes) {
            // Whatever decodes also prints and re-encodes to the same bytes.
            let text = format_inst(&inst, None, &NoLabels).unwrap();
            prop_assert_eq!(inst.encode().unwrap(), bytes);
            let again = parse_inst(&text, 1, None, &NoLabels).map_err(|e| TestCaseError::fail(format!("{}: {}", text, e.msg)))?;
            prop_assert_eq!(again.encode().unwrap(), bytes);
        }
    }

    #[test]
    fn bytes_with_a_known_form_never_panic(optype in 0usize..64, stype in 0u8..16, rest in any::<[u8; 16]>()) {
        // Random bits under a valid optype and stype reach the field checks.
        let ot = &ISA.optypes[optype % ISA.optypes.len()];
        let mut b = rest;
        b[0] = ot.value;
        b[1] = (b[1] & 0xf0) | stype;
        if let Ok(inst) = Inst::decode(&b) {
            prop_assert_eq!(inst.encode().unwrap(), b);
        }
    }
}

#[test]
fn there_are_222_vendor_forms_and_60_optypes() {
    let vendor = |f: &str| !f.contains("ext/") && !f.contains("project");
    assert_eq!(ISA.forms.iter().filter(|f| vendor(&f.file)).count(), 222);
    assert_eq!(ISA.optypes.iter().filter(|o| vendor(&o.file)).count(), 60);
}
