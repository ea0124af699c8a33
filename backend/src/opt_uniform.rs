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

use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};

use ursa_emit::model::Kind;
use ursa_emit::typed::UR;
use ursa_emit::{forms, Inst, RZ, URZ};
use ursa_isel::vcode::{Class, MInst, OpKind, Pseudo, VCode, VReg};

use crate::fold_cmem::{convert, def_counts, drop_unnamed_uses, fold_operand, remove_unread_copies, Source};

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

/// `i` as its uniform twin (`IADD_RI` → `UIADD_UI`, from the generated twin
/// table), fields carried over by the twin's field map (RZ becomes URZ; PT
/// and UPT are both 7); `None` if there is no twin or a field that matters
/// has no counterpart.
fn to_uniform(i: &Inst) -> Option<Inst> {
    let tw = i.form.twins().uniform.as_ref()?;
    let mut n = convert(i, tw, None)?;
    for (k, f) in i.def().fields.iter().enumerate() {
        if let (Kind::Reg, Some(j)) = (f.kind, tw.fields[k]) {
            if i.get_at(k) == RZ as u64 {
                n.set_at(j as usize, URZ as u64);
            }
        }
    }
    Some(n)
}

/// Whether [`to_uniform`] succeeds on `i`, without building the twin.
fn has_uniform_twin(i: &Inst) -> bool {
    let Some(tw) = i.form.twins().uniform.as_ref() else { return false };
    i.def().fields.iter().enumerate().all(|(k, f)| f.fixed.is_some() || tw.fields[k].is_some() || i.get_at(k) == f.unused_value())
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
    let single = |v: &VReg| ndefs.once(*v);
    let mut origin: HashMap<VReg, (Origin, usize, usize)> = HashMap::default();
    let mut cands: HashMap<VReg, (usize, usize, Vec<VReg>)> = HashMap::default();
    for (bi, b) in vcode.blocks.iter().enumerate() {
        for (ii, m) in b.insts.iter().enumerate() {
            if m.pseudo == Pseudo::None && m.pieces.len() == 1 && m.opnds.len() == 1 && m.fixups.len() == 1 && !m.pieces[0].is_guarded() {
                let (p, o) = (&m.pieces[0], m.opnds[0]);
                if o.kind == OpKind::Def && o.fixed.is_none() && vcode.class(o.vreg) == Class::R && single(&o.vreg) && !m.fixups[0].hi {
                    if p.form == forms::MOV_C && p.def().bitwidth_of(forms::MOV_C::RD.index as usize, p.values()) == 32 {
                        origin.insert(o.vreg, (Origin::Const(p.get(forms::MOV_C::VB)), bi, ii));
                    } else if p.form == forms::MOV_I {
                        origin.insert(o.vreg, (Origin::Imm(p.get(forms::MOV_I::VB)), bi, ii));
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
    let mut uniform: HashSet<VReg> = HashSet::default();
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
    let mut escapes: HashSet<VReg> = HashSet::default();
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
        let mut drop: HashSet<VReg> = HashSet::default();
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
    let mut ur: HashMap<VReg, u64> = HashMap::default();
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
        let map = m.pieces[0].form.twins().uniform.as_ref().expect("checked by convertible").fields;
        for fx in m.fixups.iter() {
            let v = m.opnds[fx.opnd as usize].vreg;
            let j = map[fx.field as usize].expect("twin has the register field");
            n.set_at(j as usize, ur[&v]);
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
                i.set(forms::UMOV_C::VB, c);
                i
            }
            Origin::Imm(k) => {
                let mut i = Inst::new(forms::UMOV_I);
                i.set(forms::UMOV_I::VB, k);
                i
            }
        };
        i.set([forms::UMOV_C::URD, forms::UMOV_I::URD], UR(ur[&s] as u8));
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
