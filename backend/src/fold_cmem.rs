//! Constant-bank operands: a value that is only a copy of a constant-bank word
//! (a kernel parameter, a launch dimension: `MOV Rv, c[b][o]`) is read by its
//! users straight from the bank, through the form of their instruction whose
//! B or C operand is a constant (`ISETP_RR` → `ISETP_RC`, `IMAD_RRR` →
//! `IMAD_RCR` / `IMAD_RRC`, …). A commutative instruction (IADD without
//! negations, IMAD, IMAD.WIDE) that has the value in A swaps A and B first.
//! The copy is deleted once nothing reads its register.
//!
//! This runs on the virtual-register code before allocation, so a folded
//! value never occupies a register. The twin form is found by name in the ISA
//! description (the operand letters of its name), and the result must pass
//! the encoder's validation or the instruction is left as it was.

use std::collections::HashMap;

use ursa_emit::model::Kind;
use ursa_emit::{forms, FormId, Inst, ISA};
use ursa_isel::vcode::{OpKind, Pseudo, VCode, VReg};

fn form_by_name(name: &str) -> Option<FormId> {
    ISA.forms.iter().position(|f| f.name == name).map(|i| FormId(i as u16))
}

/// The form like `form` with operand `pos` (0 = A, 1 = B, 2 = C) a constant.
fn const_twin(form: FormId, pos: usize) -> Option<FormId> {
    let name = form.name();
    let (op, stype) = name.rsplit_once('_')?;
    let mut letters: Vec<char> = stype.chars().collect();
    if letters.get(pos) != Some(&'R') {
        return None;
    }
    letters[pos] = 'C';
    form_by_name(&format!("{}_{}", op, letters.iter().collect::<String>()))
}

/// Whether A and B of `i` may be exchanged.
fn commutes(i: &Inst) -> bool {
    let name = i.form.optype().name.as_ref();
    let no_neg = |f: &str| i.get(f).is_none_or(|v| v == 0);
    match name {
        "IADD" => no_neg("ra.neg") && no_neg("rb.neg"),
        "IMAD" | "IMAD_WIDE" => true,
        _ => false,
    }
}

/// `from` re-expressed in form `to`, whose operand `from_field` is called
/// `to_field`: every field copied by name (`rb.neg` → `vb.neg` with the
/// operand). `None` if a field that matters has no counterpart.
fn convert(from: &Inst, to: FormId, from_field: &str, to_field: &str) -> Option<Inst> {
    let mut n = Inst::new(to);
    for (k, f) in from.def().fields.iter().enumerate() {
        if f.fixed.is_some() || f.name == from_field {
            continue;
        }
        let renamed = match f.name.strip_prefix(from_field) {
            Some(rest) => format!("{}{}", to_field, rest),
            None => f.name.to_string(),
        };
        match n.field_index(&renamed) {
            Some(j) if to.def().fields[j].fixed.is_none() => n.set_at(j, from.get_at(k)),
            _ if from.get_at(k) == f.unused_value() => {}
            _ => return None,
        }
    }
    Some(n)
}

/// Folds constant-bank copies into their readers; returns how many operands
/// were folded.
pub fn fold_cmem(vcode: &mut VCode) -> usize {
    // Definitions per vreg.
    let mut defs: HashMap<VReg, usize> = HashMap::new();
    for b in &vcode.blocks {
        for &p in &b.params {
            *defs.entry(p).or_default() += 1;
        }
        for m in &b.insts {
            for o in &m.opnds {
                if o.kind != OpKind::Use {
                    *defs.entry(o.vreg).or_default() += 1;
                }
            }
        }
    }
    // 32-bit copies of a constant-bank word, defined nowhere else.
    let mut cmem: HashMap<VReg, u64> = HashMap::new();
    for b in &vcode.blocks {
        for m in &b.insts {
            if m.pseudo != Pseudo::None || m.pieces.len() != 1 || m.opnds.len() != 1 || m.fixups.len() != 1 {
                continue;
            }
            let p = &m.pieces[0];
            let o = m.opnds[0];
            if p.form != forms::MOV_C || o.kind != OpKind::Def || o.fixed.is_some() || m.fixups[0].hi || p.is_guarded() {
                continue;
            }
            if p.def().bitwidth_of(p.field_index("rd").unwrap(), p.values()) != 32 {
                continue;
            }
            if defs.get(&o.vreg) == Some(&1) {
                cmem.insert(o.vreg, p.get("vb").unwrap());
            }
        }
    }
    if cmem.is_empty() {
        return 0;
    }

    let mut folded = 0;
    for b in vcode.blocks.iter_mut() {
        for m in b.insts.iter_mut() {
            if m.pseudo != Pseudo::None {
                continue;
            }
            for pi in 0..m.pieces.len() {
                'fix: for k in 0..m.fixups.len() {
                    let fx = m.fixups[k];
                    if fx.piece as usize != pi || fx.hi {
                        continue;
                    }
                    let o = m.opnds[fx.opnd as usize];
                    let Some(&c) = cmem.get(&o.vreg) else { continue };
                    if o.kind != OpKind::Use || o.fixed.is_some() {
                        continue;
                    }
                    let piece = &m.pieces[pi];
                    let fname = piece.def().fields[fx.field as usize].name.to_string();
                    if piece.def().bitwidth_of(fx.field as usize, piece.values()) != 32 {
                        continue;
                    }
                    // Operand position, swapping A into B where allowed.
                    let (mut inst, pos, swap) = match fname.as_str() {
                        "rb" => (piece.clone(), 1, false),
                        "rc" => (piece.clone(), 2, false),
                        "ra" if commutes(piece) && piece.field_index("rb").is_some() => (piece.clone(), 1, true),
                        _ => continue,
                    };
                    let Some(twin) = const_twin(inst.form, pos) else { continue };
                    let (from_field, to_field) = if pos == 1 { ("rb", "vb") } else { ("rc", "vc") };
                    if swap {
                        // Only when neither operand is negated (`commutes`).
                        let (a, bb) = (inst.field_index("ra").unwrap(), inst.field_index("rb").unwrap());
                        let (va, vb) = (inst.get_at(a), inst.get_at(bb));
                        inst.set_at(a, vb);
                        inst.set_at(bb, va);
                    }
                    let Some(mut n) = convert(&inst, twin, from_field, to_field) else { continue };
                    let Some(tf) = n.field_index(to_field) else { continue };
                    if twin.def().fields[tf].kind != Kind::CMem {
                        continue;
                    }
                    n.set_at(tf, c);
                    if n.validate().is_err() {
                        continue;
                    }
                    // Field indices of this piece's other fixups, by name in the twin.
                    let old = m.pieces[pi].clone();
                    let mut new_fixups = m.fixups.clone();
                    for (j, f) in new_fixups.iter_mut().enumerate() {
                        if f.piece as usize != pi || j == k {
                            continue;
                        }
                        let mut name = old.def().fields[f.field as usize].name.to_string();
                        if swap {
                            name = match name.as_str() {
                                "ra" => "rb".into(),
                                "rb" => "ra".into(),
                                _ => name,
                            };
                        }
                        let Some(idx) = n.field_index(&name) else { continue 'fix };
                        if name == from_field {
                            continue 'fix;
                        }
                        f.field = idx as u8;
                    }
                    new_fixups.remove(k);
                    m.pieces[pi] = n;
                    m.fixups = new_fixups;
                    folded += 1;
                    // Restart this piece's scan: indices moved.
                    break 'fix;
                }
            }
            // Operands no fixup names any more.
            let mut k = 0;
            while k < m.opnds.len() {
                let used = m.fixups.iter().any(|f| f.opnd as usize == k);
                if !used && m.opnds[k].kind == OpKind::Use && cmem.contains_key(&m.opnds[k].vreg) {
                    m.opnds.remove(k);
                    for f in m.fixups.iter_mut() {
                        if f.opnd as usize > k {
                            f.opnd -= 1;
                        }
                    }
                } else {
                    k += 1;
                }
            }
        }
    }

    // Copies nothing reads any more.
    let mut used: HashMap<VReg, bool> = HashMap::new();
    for b in &vcode.blocks {
        for m in &b.insts {
            for o in &m.opnds {
                if o.kind == OpKind::Use {
                    used.insert(o.vreg, true);
                }
            }
            for a in m.args.iter() {
                for v in a {
                    used.insert(*v, true);
                }
            }
        }
    }
    for b in vcode.blocks.iter_mut() {
        b.insts.retain(|m| {
            let dead_copy = m.pseudo == Pseudo::None
                && m.opnds.len() == 1
                && cmem.contains_key(&m.opnds[0].vreg)
                && m.opnds[0].kind == OpKind::Def
                && m.pieces.len() == 1
                && m.pieces[0].form == forms::MOV_C
                && !used.contains_key(&m.opnds[0].vreg);
            !dead_copy
        });
    }
    folded
}
