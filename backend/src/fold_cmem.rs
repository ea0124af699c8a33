//! Constant-bank operands: a value that is only a copy of a constant-bank word
//! (a kernel parameter, a launch dimension: `MOV Rv, c[b][o]`) is read by its
//! users straight from the bank, through the form of their instruction whose
//! B or C operand is a constant (`ISETP_RR` → `ISETP_RC`, `IMAD_RRR` →
//! `IMAD_RCR` / `IMAD_RRC`, …). A commutative instruction (IADD without
//! negations, IMAD, IMAD.WIDE, FADD/FMUL/FFMA without modifiers) that has the
//! value in A swaps A and B first.
//! The copy is deleted once nothing reads its register.
//!
//! This runs on the virtual-register code before allocation, so a folded
//! value never occupies a register. The twin form and the correspondence of
//! its fields come from the tables generated from the ISA description
//! (`ursa_emit::twins`), and the result must pass the encoder's validation
//! or the instruction is left as it was.

use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};

use ursa_emit::twins::{OperandTwin, Twin};
use ursa_emit::{forms, optypes, FormId, Inst};
use ursa_isel::vcode::{MInst, OpKind, Pseudo, VCode, VReg};

/// What an operand is read from instead of a per-lane register.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Source {
    /// A constant-bank word (`c[b][o]`, the field holds bank and offset).
    Const,
    /// A uniform register `URn`.
    Uniform,
}

/// The form like `form` with operand `pos` (1 = B, 2 = C) read from `src`
/// (the generated twin table, `ursa_emit::twins`).
fn twin(form: FormId, pos: usize, src: Source) -> Option<&'static OperandTwin> {
    let t = form.twins();
    let twins = match src {
        Source::Const => &t.cmem,
        Source::Uniform => &t.ureg,
    };
    twins.get(pos.checked_sub(1)?)?.as_ref()
}

/// Whether A and B of `i` may be exchanged.
fn commutes(i: &Inst) -> bool {
    let t = i.form.twins();
    let unmodified = || t.modifiers[..2].iter().flat_map(|m| m.iter()).all(|&k| i.get_at(k as usize) == 0);
    match i.def().optype {
        o if o == optypes::IADD::ID => unmodified(),
        o if o == optypes::IMAD::ID || o == optypes::IMAD_WIDE::ID => true,
        // a + b, a * b, a * b + c: exchanging A and B can only change which
        // of two NaN inputs is passed on, which CLIF leaves unspecified
        // (docs/float.md). Modifiers stay with their field, so none may be set.
        o if o == optypes::FADD::ID || o == optypes::FMUL::ID || o == optypes::FFMA::ID => unmodified(),
        _ => false,
    }
}

/// `from` re-expressed in the twin form `to`, every field but `replaced`
/// (the operand the twin reads from elsewhere) carried over by the twin's
/// field map. `None` if a field that matters has no counterpart.
pub(crate) fn convert(from: &Inst, to: &Twin, replaced: Option<usize>) -> Option<Inst> {
    let mut n = Inst::new(to.form);
    for (k, f) in from.def().fields.iter().enumerate() {
        if f.fixed.is_some() || Some(k) == replaced {
            continue;
        }
        match to.fields[k] {
            Some(j) => n.set_at(j as usize, from.get_at(k)),
            None if from.get_at(k) == f.unused_value() => {}
            None => return None,
        }
    }
    Some(n)
}

/// How many times each virtual register is defined (block parameters count
/// as a definition): the passes here only touch values defined once.
pub(crate) fn def_counts(vcode: &VCode) -> HashMap<VReg, usize> {
    let mut defs: HashMap<VReg, usize> = HashMap::default();
    for b in &vcode.blocks {
        for &p in &b.params {
            *defs.entry(p).or_default() += 1;
        }
        for m in &b.insts {
            for o in m.opnds.iter().filter(|o| o.kind != OpKind::Use) {
                *defs.entry(o.vreg).or_default() += 1;
            }
        }
    }
    defs
}

/// Deletes the instructions whose only operand defines a value `is_copy`
/// names (a copy defined once) that nothing reads any more.
pub(crate) fn remove_unread_copies(vcode: &mut VCode, is_copy: impl Fn(VReg) -> bool) {
    let mut used: HashSet<VReg> = HashSet::default();
    for b in &vcode.blocks {
        for m in &b.insts {
            used.extend(m.opnds.iter().filter(|o| o.kind == OpKind::Use).map(|o| o.vreg));
            for a in m.args.iter() {
                used.extend(a.iter().copied());
            }
        }
    }
    for b in vcode.blocks.iter_mut() {
        b.insts.retain(|m| {
            let o = m.opnds.first();
            let dead = m.pseudo == Pseudo::None
                && m.opnds.len() == 1
                && o.is_some_and(|o| o.kind == OpKind::Def && is_copy(o.vreg) && !used.contains(&o.vreg));
            !dead
        });
    }
}

/// Folds constant-bank copies into their readers; returns how many operands
/// were folded.
pub fn fold_cmem(vcode: &mut VCode) -> usize {
    let defs = def_counts(vcode);
    // 32-bit copies of a constant-bank word, defined nowhere else.
    let mut cmem: HashMap<VReg, u64> = HashMap::default();
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
            if p.def().bitwidth_of(forms::MOV_C::RD.index as usize, p.values()) != 32 {
                continue;
            }
            if defs.get(&o.vreg) == Some(&1) {
                cmem.insert(o.vreg, p.get(forms::MOV_C::VB));
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
                for k in 0..m.fixups.len() {
                    let fx = m.fixups[k];
                    if fx.piece as usize != pi || fx.hi {
                        continue;
                    }
                    let Some(&c) = cmem.get(&m.opnds[fx.opnd as usize].vreg) else { continue };
                    if fold_operand(m, k, Source::Const, c) {
                        folded += 1;
                        // Indices moved: one constant operand per instruction anyway.
                        break;
                    }
                }
            }
            drop_unnamed_uses(m, |v| cmem.contains_key(&v));
        }
    }

    remove_unread_copies(vcode, |v| cmem.contains_key(&v));
    folded
}

/// Reads the register operand of fixup `k` of `m` from `src` (`value`: the
/// constant-bank address or the UR number) by switching its piece to the twin
/// form; A is swapped into B for commutative instructions. The fixup is
/// removed (the operand stays in `m.opnds` until [`drop_unnamed_uses`]).
/// `false`, with `m` unchanged, where no twin form takes it.
pub(crate) fn fold_operand(m: &mut MInst, k: usize, src: Source, value: u64) -> bool {
    let fx = m.fixups[k];
    let pi = fx.piece as usize;
    let o = m.opnds[fx.opnd as usize];
    if fx.hi || o.kind != OpKind::Use || o.fixed.is_some() {
        return false;
    }
    let piece = &m.pieces[pi];
    if piece.def().bitwidth_of(fx.field as usize, piece.values()) != 32 {
        return false;
    }
    // Operand position, swapping A into B where allowed.
    let [ra, rb, rc] = piece.form.twins().sources.map(|s| s.map(usize::from));
    let field = Some(fx.field as usize);
    let (mut inst, pos, swap) = if field == rb {
        (piece.clone(), 1, false)
    } else if field == rc {
        (piece.clone(), 2, false)
    } else if field == ra && rb.is_some() && commutes(piece) {
        (piece.clone(), 1, true)
    } else {
        return false;
    };
    let Some(tw) = twin(inst.form, pos, src) else { return false };
    let from_field = if pos == 1 { rb } else { rc };
    if let (true, Some(a), Some(b)) = (swap, ra, rb) {
        // Only when neither operand is modified (`commutes`).
        let (va, vb) = (inst.get_at(a), inst.get_at(b));
        inst.set_at(a, vb);
        inst.set_at(b, va);
    }
    let Some(mut n) = convert(&inst, &tw.twin, from_field) else { return false };
    n.set_at(tw.operand as usize, value);
    if n.validate().is_err() {
        return false;
    }
    // Field indices of this piece's other fixups, through the twin's map.
    let mut new_fixups = m.fixups.clone();
    for (j, f) in new_fixups.iter_mut().enumerate() {
        if f.piece as usize != pi || j == k {
            continue;
        }
        let mut old = Some(f.field as usize);
        if swap {
            old = if old == ra { rb } else if old == rb { ra } else { old };
        }
        if old == from_field {
            return false;
        }
        let Some(idx) = old.and_then(|o| tw.twin.fields[o]) else { return false };
        f.field = idx;
    }
    new_fixups.remove(k);
    m.pieces[pi] = n;
    m.fixups = new_fixups;
    true
}

/// Removes the use operands of `m` that no fixup names any more and that
/// `folded` says were folded away.
pub(crate) fn drop_unnamed_uses(m: &mut MInst, folded: impl Fn(VReg) -> bool) {
    let mut k = 0;
    while k < m.opnds.len() {
        let named = m.fixups.iter().any(|f| f.opnd as usize == k);
        if !named && m.opnds[k].kind == OpKind::Use && m.opnds[k].fixed.is_none() && folded(m.opnds[k].vreg) {
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
