//! Warp-uniform arithmetic on the uniform datapath (`docs/uniformity.md`).
//!
//! A value is *uniform* when every lane of a warp holds the same one. Here the
//! sources of uniformity are copies of constant-bank words (kernel parameters,
//! launch dimensions) and constants; an ALU instruction all of whose register
//! inputs are uniform computes a uniform value. Such an instruction runs once
//! per warp on the uniform datapath (its `U` twin: `IMAD_RCR` → `UIMAD_UCU`),
//! with its inputs and result in UR registers, when that pays:
//!
//! **Cost rule.** An instruction is moved to the uniform datapath only if each
//! reader of its result is itself moved, or is a per-lane instruction with a
//! form that reads a UR operand in that place (`IADD_RU`, `IMAD_RRU`, …), so no
//! `MOV R, UR` is ever added. A constant-bank word or constant read by a moved
//! instruction gets a uniform copy (`UMOV URn, c[b][o]` / `UMOV URn, imm`).
//!
//! UR values never cross a call (the pass does nothing in a function that
//! calls), are numbered one per value here (at most 63, else nothing is
//! moved) and packed densely after layout by `pack_regs`.

use std::collections::{HashMap, HashSet};

use ursa_emit::{forms, Inst};
use ursa_isel::vcode::{Class, MInst, OpKind, Pseudo, VCode, VReg};

use crate::fold_cmem::{def_counts, drop_unnamed_uses, fold_operand, form_by_name, remove_unread_copies, Source};

/// UR registers numbered by this pass (UR0–UR62; UR63 is URZ).
const UREGS: usize = 63;

/// Where a uniform input comes from.
#[derive(Clone, Copy, Debug)]
enum Origin {
    /// `MOV Rv, c[b][o]`.
    Const(u64),
    /// `MOV Rv, imm`.
    Imm(u64),
}

/// The uniform-datapath field for a per-lane one: `rd` → `urd`, `ra.neg` →
/// `ura.neg`, `pg` → `upg`, immediates and constants unchanged.
fn uniform_field(name: &str) -> String {
    let b = name.as_bytes();
    if (b.len() >= 2 && b[0] == b'r' && b"abcd".contains(&b[1])) || matches!(name.split('.').next(), Some("pg" | "pp" | "pu")) {
        format!("u{}", name)
    } else {
        name.to_string()
    }
}

/// `i` as its uniform twin (`IADD_RI` → `UIADD_UI`), fields copied by name,
/// register fields zero (to be filled in); `None` if there is no twin or a
/// field that matters has no counterpart.
fn to_uniform(i: &Inst) -> Option<Inst> {
    let (tw, map) = uniform_twin(i.form)?;
    let mut n = Inst::new(*tw);
    for (k, f) in i.def().fields.iter().enumerate() {
        if f.fixed.is_some() {
            continue;
        }
        match map[k] {
            Some(j) => {
                let v = i.get_at(k);
                // PT and RZ keep their meaning: UPT = 7 like PT; URZ differs from RZ.
                let v = if f.kind == ursa_emit::model::Kind::Reg && v == ursa_emit::RZ as u64 { ursa_emit::URZ as u64 } else { v };
                n.set_at(j as usize, v);
            }
            None if i.get_at(k) == f.unused_value() => {}
            None => return None,
        }
    }
    Some(n)
}

/// Whether [`to_uniform`] succeeds on `i`, without building the twin.
fn has_uniform_twin(i: &Inst) -> bool {
    let Some((_, map)) = uniform_twin(i.form) else { return false };
    i.def().fields.iter().enumerate().all(|(k, f)| f.fixed.is_some() || map[k].is_some() || i.get_at(k) == f.unused_value())
}

/// The uniform twin of a form (`IADD_RI` → `UIADD_UI`) and, per field of the
/// form, the twin's field that takes its value (by name, `uniform_field`;
/// None where the twin has no such field or fixes it). One table for all
/// forms, built on first use.
fn uniform_twin(form: ursa_emit::FormId) -> Option<&'static (ursa_emit::FormId, Vec<Option<u16>>)> {
    type Twin = Option<(ursa_emit::FormId, Vec<Option<u16>>)>;
    static TABLE: std::sync::OnceLock<Vec<Twin>> = std::sync::OnceLock::new();
    let build = |i: usize| -> Twin {
        let def = &ursa_emit::ISA.forms[i];
        let (op, stype) = def.name.rsplit_once('_')?;
        let tw = form_by_name(&format!("U{}_{}", op, stype.replace('R', "U")))?;
        let map = def
            .fields
            .iter()
            .map(|f| match tw.def().field_index(&uniform_field(&f.name)) {
                Some(j) if tw.def().fields[j].fixed.is_none() => Some(j as u16),
                _ => None,
            })
            .collect();
        Some((tw, map))
    };
    TABLE.get_or_init(|| (0..ursa_emit::ISA.forms.len()).map(build).collect())[form.0 as usize].as_ref()
}

/// An instruction that could run on the uniform datapath if its inputs are
/// uniform: one plain piece, one 32-bit result, register inputs only through
/// fixups, no guard, predicates unused.
fn convertible(vcode: &VCode, m: &MInst) -> Option<(VReg, Vec<VReg>)> {
    if m.pseudo != Pseudo::None || m.pieces.len() != 1 || m.clobbers_all || m.sym.is_some() {
        return None;
    }
    let p = &m.pieces[0];
    if p.is_guarded() || p.form == forms::MOV_C || p.form == forms::MOV_I {
        return None;
    }
    let mut def = None;
    let mut uses = Vec::new();
    for o in &m.opnds {
        if o.fixed.is_some() || vcode.class(o.vreg) != Class::R {
            return None;
        }
        match o.kind {
            OpKind::Def if def.is_none() => def = Some(o.vreg),
            OpKind::Use => uses.push(o.vreg),
            _ => return None,
        }
    }
    if m.fixups.iter().any(|f| f.hi) || uses.is_empty() {
        return None;
    }
    if !has_uniform_twin(p) {
        return None;
    }
    Some((def?, uses))
}

/// Moves uniform arithmetic to the uniform datapath; returns how many
/// instructions were moved.
pub fn opt_uniform(vcode: &mut VCode) -> usize {
    if vcode.makes_calls {
        return 0;
    }
    // Single definitions, and where the sources are.
    let ndefs = def_counts(vcode);
    let single = |v: &VReg| ndefs.get(v) == Some(&1);
    let mut origin: HashMap<VReg, (Origin, usize, usize)> = HashMap::new();
    let mut cands: HashMap<VReg, (usize, usize, Vec<VReg>)> = HashMap::new();
    for (bi, b) in vcode.blocks.iter().enumerate() {
        for (ii, m) in b.insts.iter().enumerate() {
            if m.pseudo == Pseudo::None && m.pieces.len() == 1 && m.opnds.len() == 1 && m.fixups.len() == 1 && !m.pieces[0].is_guarded() {
                let (p, o) = (&m.pieces[0], m.opnds[0]);
                if o.kind == OpKind::Def && o.fixed.is_none() && vcode.class(o.vreg) == Class::R && single(&o.vreg) && !m.fixups[0].hi {
                    if p.form == forms::MOV_C && p.def().bitwidth_of(p.field_index("rd").unwrap(), p.values()) == 32 {
                        origin.insert(o.vreg, (Origin::Const(p.get("vb").unwrap()), bi, ii));
                    } else if p.form == forms::MOV_I {
                        origin.insert(o.vreg, (Origin::Imm(p.get("vb").unwrap()), bi, ii));
                    }
                }
            }
            if let Some((d, uses)) = convertible(vcode, m) {
                if single(&d) {
                    cands.insert(d, (bi, ii, uses));
                }
            }
        }
    }
    // Uniform: inputs all sources or uniform candidates (to a fixed point).
    let mut uniform: HashSet<VReg> = HashSet::new();
    loop {
        let before = uniform.len();
        for (&d, (_, _, uses)) in cands.iter() {
            if !uniform.contains(&d) && uses.iter().all(|u| origin.contains_key(u) || uniform.contains(u)) {
                uniform.insert(d);
            }
        }
        if uniform.len() == before {
            break;
        }
    }
    // Values read where no UR operand can go (pseudo-instructions, ABI
    // registers, branch arguments).
    let mut escapes: HashSet<VReg> = HashSet::new();
    for b in vcode.blocks.iter() {
        for m in b.insts.iter() {
            for o in m.opnds.iter().filter(|o| o.kind == OpKind::Use) {
                if m.pseudo != Pseudo::None || o.fixed.is_some() {
                    escapes.insert(o.vreg);
                }
            }
            for a in m.args.iter() {
                escapes.extend(a.iter().copied());
            }
        }
    }
    let at: HashMap<(usize, usize), VReg> = cands.iter().map(|(&d, &(bi, ii, _))| ((bi, ii), d)).collect();
    // The cost rule, to a fixed point (with the inputs rule: an instruction
    // stays only while all its inputs are sources or stay themselves).
    loop {
        let mut drop: HashSet<VReg> = HashSet::new();
        for &d in uniform.iter() {
            if escapes.contains(&d) || !cands[&d].2.iter().all(|u| origin.contains_key(u) || uniform.contains(u)) {
                drop.insert(d);
            }
        }
        // Each per-lane reader must take all the uniform values it reads as
        // UR operands at once (a form has at most one).
        for (bi, b) in vcode.blocks.iter().enumerate() {
            for (ii, m) in b.insts.iter().enumerate() {
                if at.get(&(bi, ii)).is_some_and(|d| uniform.contains(d)) {
                    continue;
                }
                let reads: Vec<VReg> = m.opnds.iter().filter(|o| o.kind == OpKind::Use && uniform.contains(&o.vreg)).map(|o| o.vreg).collect();
                if reads.is_empty() {
                    continue;
                }
                let mut trial = m.clone();
                let ok = m.pseudo == Pseudo::None
                    && loop {
                        let Some(k) = trial.fixups.iter().position(|f| uniform.contains(&trial.opnds[f.opnd as usize].vreg)) else { break true };
                        if !fold_operand(&mut trial, k, Source::Uniform, 0, 32) {
                            break false;
                        }
                    };
                if !ok {
                    drop.extend(reads);
                }
            }
        }
        if drop.is_empty() {
            break;
        }
        for d in drop {
            uniform.remove(&d);
        }
    }
    if uniform.is_empty() {
        return 0;
    }
    // UR numbers: moved results, then the sources they read.
    let mut ur: HashMap<VReg, u64> = HashMap::new();
    let mut moved: Vec<VReg> = uniform.iter().copied().collect();
    moved.sort();
    for &d in &moved {
        let n = ur.len() as u64;
        ur.insert(d, n);
    }
    let mut copies: Vec<VReg> = moved.iter().flat_map(|d| cands[d].2.iter().copied()).filter(|u| origin.contains_key(u)).collect();
    copies.sort();
    copies.dedup();
    for &s in &copies {
        let n = ur.len() as u64;
        ur.insert(s, n);
    }
    if ur.len() > UREGS {
        return 0;
    }

    // Rewrite the moved instructions.
    for &d in &moved {
        let (bi, ii, _) = cands[&d];
        let m = &mut vcode.blocks[bi].insts[ii];
        let mut n = to_uniform(&m.pieces[0]).expect("checked by convertible");
        for fx in m.fixups.iter() {
            let v = m.opnds[fx.opnd as usize].vreg;
            let name = uniform_field(&m.pieces[0].def().fields[fx.field as usize].name);
            let j = n.field_index(&name).expect("twin has the register field");
            n.set_at(j, ur[&v]);
        }
        let mut u = MInst::new(Pseudo::None);
        u.pieces.push(n);
        u.origin = m.origin;
        *m = u;
    }
    // Per-lane readers take the UR operand.
    for b in vcode.blocks.iter_mut() {
        for m in b.insts.iter_mut() {
            if m.pseudo != Pseudo::None {
                continue;
            }
            while let Some(k) = m.fixups.iter().position(|f| m.opnds[f.opnd as usize].kind == OpKind::Use && uniform.contains(&m.opnds[f.opnd as usize].vreg)) {
                let v = m.opnds[m.fixups[k].opnd as usize].vreg;
                let done = fold_operand(m, k, Source::Uniform, ur[&v], 32);
                assert!(done, "opt_uniform: a reader checked by the cost rule refused its UR operand");
            }
            drop_unnamed_uses(m, |v| uniform.contains(&v));
        }
    }
    // Uniform copies of the sources, right after their definitions.
    let mut inserts: Vec<(usize, usize, MInst)> = Vec::new();
    for &s in &copies {
        let (o, bi, ii) = origin[&s];
        let mut i = match o {
            Origin::Const(c) => {
                let mut i = Inst::new(forms::UMOV_C);
                i.set("vb", c).expect("UMOV_C has vb");
                i
            }
            Origin::Imm(k) => {
                let mut i = Inst::new(forms::UMOV_I);
                i.set("vb", k).expect("UMOV_I has vb");
                i
            }
        };
        i.set("urd", ur[&s]).expect("UMOV has urd");
        let mut m = MInst::new(Pseudo::None);
        m.pieces.push(i);
        m.origin = vcode.blocks[bi].insts[ii].origin;
        inserts.push((bi, ii + 1, m));
    }
    inserts.sort_by(|a, b| (b.0, b.1).cmp(&(a.0, a.1)));
    for (bi, at, m) in inserts {
        vcode.blocks[bi].insts.insert(at, m);
    }
    // Per-lane sources nothing reads any more.
    remove_unread_copies(vcode, |v| origin.contains_key(&v));
    moved.len()
}
