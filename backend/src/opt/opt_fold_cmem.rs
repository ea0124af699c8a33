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

use rustc_hash::FxHashMap as HashMap;

use ursa_emit::twins::{OperandTwin, Twin};
use ursa_emit::{fields, forms, optypes, FormId, Inst};
use ursa_isel::vcode::{Bundle, Class, MInst, OpKind, Pseudo, VCode, VReg, VRegSet};

/// What an operand is read from instead of a per-lane register.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Source {
    /// A constant-bank word (`c[b][o]`, the field holds bank and offset).
    Const,
    /// A uniform register `URn`.
    Uniform,
    /// An immediate (`opt_fold_imm`): the value itself.
    Imm,
}

/// The form like `form` with operand `pos` (1 = B, 2 = C) read from `src`
/// (the generated twin table, `ursa_emit::twins`).
fn twin(form: FormId, pos: usize, src: Source) -> Option<&'static OperandTwin> {
    let t = form.twins();
    let twins = match src {
        Source::Const => &t.cmem,
        Source::Uniform => &t.ureg,
        Source::Imm => &t.imm,
    };
    twins.get(pos.checked_sub(1)?)?.as_ref()
}

/// Whether A and B of `i` may be exchanged.
fn commutes(i: &Inst) -> bool {
    let t = i.form().twins();
    let unmodified = || t.modifiers[..2].iter().flat_map(|m| m.iter()).all(|&k| i.get_at(k as usize) == 0);
    match i.def().optype {
        o if o == optypes::IADD::ID => unmodified(),
        o if o == optypes::IMAD::ID || o == optypes::IMAD_WIDE::ID => true,
        // min(a, b), max(a, b): exchanging A and B changes nothing.
        o if o == optypes::IMNMX::ID => true,
        // a + b, a * b, a * b + c: exchanging A and B can only change which
        // of two NaN inputs is passed on, which CLIF leaves unspecified
        // (docs/float.md). Modifiers stay with their field, so none may be set.
        o if o == optypes::FADD::ID || o == optypes::FMUL::ID || o == optypes::FFMA::ID => unmodified(),
        // SEL a, b, p is SEL b, a, !p (`fold_operand` negates the predicate).
        _ => i.form() == forms::SEL_RR,
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
pub(crate) fn def_counts(vcode: &VCode) -> DefCounts {
    let mut defs = vec![0u32; vcode.classes.len()];
    let mut count = |v: VReg| {
        let i = v.0 as usize;
        if i >= defs.len() {
            defs.resize(i + 1, 0);
        }
        defs[i] = defs[i].saturating_add(1);
    };
    for b in &vcode.blocks {
        for &p in &b.params {
            count(p);
        }
        for m in &b.insts {
            for o in m.opnds.iter().filter(|o| o.kind != OpKind::Use) {
                count(o.vreg);
            }
        }
    }
    DefCounts(defs)
}

/// [`def_counts`]: the definitions of each virtual register, by number.
pub(crate) struct DefCounts(Vec<u32>);

impl DefCounts {
    /// Is `v` defined exactly once?
    pub(crate) fn once(&self, v: VReg) -> bool {
        self.0.get(v.0 as usize) == Some(&1)
    }
}

/// [`def_counts`] of `vcode`, counted the first time a value is asked about
/// (a pass that finds nothing to ask never walks the function for them).
pub(crate) struct LazyDefCounts<'a> {
    vcode: &'a VCode,
    counts: std::cell::OnceCell<DefCounts>,
}

impl<'a> LazyDefCounts<'a> {
    pub(crate) fn new(vcode: &'a VCode) -> Self {
        LazyDefCounts { vcode, counts: std::cell::OnceCell::new() }
    }

    /// Is `v` defined exactly once?
    pub(crate) fn once(&self, v: VReg) -> bool {
        self.counts.get_or_init(|| def_counts(self.vcode)).once(v)
    }
}

/// The values defined once, each by a single unguarded instruction of form
/// `form` that has no other operand (a copy of a constant) and that `keep`
/// accepts, with that instruction. The definition counts are taken only
/// once such a copy is found (most functions have none of a given kind).
pub(crate) fn single_copies(vcode: &VCode, form: FormId, keep: impl Fn(&Inst) -> bool) -> impl Iterator<Item = (VReg, &Inst)> {
    let defs = LazyDefCounts::new(vcode);
    vcode.blocks.iter().flat_map(|b| b.insts.iter()).filter_map(move |m| {
        let single = m.pseudo == Pseudo::None && m.pieces.len() == 1 && m.opnds.len() == 1 && m.fixups.len() == 1;
        let (p, o) = (m.pieces.first()?, *m.opnds.first()?);
        let copy = single && p.form() == form && o.kind == OpKind::Def && o.fixed.is_none() && !m.fixups[0].hi && !p.is_guarded();
        (copy && keep(p) && defs.once(o.vreg)).then_some((o.vreg, p))
    })
}

/// Deletes the instructions whose only operand defines a value `is_copy`
/// names (a copy defined once; a pair's two `MOV`s write it early) that
/// nothing reads any more.
pub(crate) fn remove_unread_copies(vcode: &mut VCode, is_copy: impl Fn(VReg) -> bool) {
    let mut used = VRegSet::new(vcode.classes.len());
    for b in &vcode.blocks {
        for m in &b.insts {
            used.extend(m.opnds.iter().filter(|o| o.kind == OpKind::Use).map(|o| o.vreg));
            for a in m.args().iter() {
                used.extend(a.iter().copied());
            }
        }
    }
    for b in vcode.blocks.iter_mut() {
        b.insts.retain(|m| {
            let o = m.opnds.first();
            let dead = m.pseudo == Pseudo::None
                && m.opnds.len() == 1
                && o.is_some_and(|o| matches!(o.kind, OpKind::Def | OpKind::EarlyDef) && is_copy(o.vreg) && !used.contains(&o.vreg));
            !dead
        });
    }
}

/// Folds constant-bank copies into their readers; returns how many operands
/// were folded.
pub fn opt_fold_cmem(vcode: &mut VCode) -> usize {
    // Copies of a constant-bank word (32 bits) or of two consecutive words
    // (`MOV.64`, a 64-bit kernel parameter), defined nowhere else: the
    // bank address and the width.
    let cmem: HashMap<VReg, (u64, u32)> = single_copies(vcode, forms::MOV_C, |_| true)
        .map(|(v, p)| (v, (p.get(forms::MOV_C::VB), p.def().bitwidth_of(forms::MOV_C::RD.index_in(p.form()), p.values()))))
        .collect();
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
                    if fx.piece as usize != pi {
                        continue;
                    }
                    let Some(&(c, width)) = cmem.get(&m.opnds[fx.opnd as usize].vreg) else { continue };
                    if fold_operand(m, k, Source::Const, c, width) {
                        folded += 1;
                        // Indices moved: one constant operand per instruction anyway.
                        break;
                    }
                }
            }
            drop_unnamed_uses(m, |v| cmem.contains_key(&v));
        }
    }

    folded += fold_beside_immediate(vcode, &cmem);

    remove_unread_copies(vcode, |v| cmem.contains_key(&v));
    folded
}

/// A reader of a copy that takes the copy in C and an immediate in B
/// (`IMAD.WIDE Rd, Ra, 0x8, R[c:c+1]`) has no form with both a constant
/// and an immediate, but has one with a constant C and a register B
/// (`IMAD.WIDE Rd, Ra, Rs, c[0x0][0x160]`). This moves the immediate into a
/// register (`MOV Rs, 0x8`) shared by the readers of one block — ptxas's
/// idiom for several `a[i]` addresses — when every reader of the copy can
/// do so and the copies deleted are at least as many as the `MOV`s added,
/// so the code never grows and a long-lived copy (a pair, for a 64-bit
/// parameter) becomes a short-lived single register. Returns how many
/// operands were folded.
fn fold_beside_immediate(vcode: &mut VCode, cmem: &HashMap<VReg, (u64, u32)>) -> usize {
    // Per copy still read: its readers (block, instruction, fixup) and the
    // twin of each, or None if some reader cannot take it.
    type Reader = (usize, usize, usize, Inst, u32);
    let mut readers: HashMap<VReg, Option<Vec<Reader>>> = HashMap::default();
    for (bi, b) in vcode.blocks.iter().enumerate() {
        for (ii, m) in b.insts.iter().enumerate() {
            for (oi, o) in m.opnds.iter().enumerate() {
                let Some(&(c, width)) = cmem.get(&o.vreg) else { continue };
                if o.kind != OpKind::Use {
                    continue;
                }
                let ks: Vec<usize> = (0..m.fixups.len()).filter(|&k| m.fixups[k].opnd as usize == oi).collect();
                let twin = match ks.as_slice() {
                    [k] if m.pseudo == Pseudo::None => immediate_to_register(m, *k, c, width),
                    _ => None,
                };
                let entry = readers.entry(o.vreg).or_insert_with(|| Some(Vec::new()));
                match (entry.as_mut(), twin) {
                    (Some(list), Some((n, imm))) => list.push((bi, ii, ks[0], n, imm)),
                    _ => *entry = None,
                }
            }
            for a in m.args().iter().flatten() {
                if cmem.contains_key(a) {
                    readers.insert(*a, None);
                }
            }
        }
    }
    // Accept copies in order while the MOVs needed stay within the copies deleted.
    let mut copies: Vec<(VReg, Vec<Reader>)> = readers.into_iter().filter_map(|(v, r)| Some((v, r?))).collect();
    copies.sort_by_key(|(v, _)| *v);
    let mut movs: Vec<(usize, u32)> = Vec::new();
    let mut accepted: Vec<Reader> = Vec::new();
    let mut deleted = 0;
    for (_, rs) in copies {
        let mut more = movs.clone();
        for r in &rs {
            if !more.contains(&(r.0, r.4)) {
                more.push((r.0, r.4));
            }
        }
        if more.len() <= deleted + 1 {
            movs = more;
            deleted += 1;
            accepted.extend(rs);
        }
    }
    if accepted.is_empty() {
        return 0;
    }
    // One register per (block, immediate), set just before its first reader.
    let regs: HashMap<(usize, u32), VReg> = movs.iter().map(|&key| (key, vcode.new_vreg(Class::R))).collect();
    for &(bi, ii, k, ref n, imm) in &accepted {
        let m = &mut vcode.blocks[bi].insts[ii];
        let fx = m.fixups[k];
        // The piece's other fixups, through the twin's field map; the
        // folded one becomes the scale register's.
        let tw = m.pieces[fx.piece as usize].form().twins().cmem_beside_imm.as_ref().expect("checked by immediate_to_register");
        let mapped = m.replace_piece(fx.piece as usize, n.clone(), Some(k), |f| tw.twin.fields[f as usize]);
        assert!(mapped, "checked by immediate_to_register");
        let r = m.add_operand(regs[&(bi, imm)], OpKind::Use, None);
        let rb = n.form().twins().sources[1].expect("checked by immediate_to_register");
        m.bind(fx.piece, rb, r, false);
        drop_unnamed_uses(m, |v| cmem.contains_key(&v));
    }
    let mut at: Vec<(usize, usize, VReg, u32)> = movs
        .iter()
        .map(|&(bi, imm)| {
            let first = accepted.iter().filter(|r| r.0 == bi && r.4 == imm).map(|r| r.1).min().unwrap();
            (bi, first, regs[&(bi, imm)], imm)
        })
        .collect();
    // From the last position back, so earlier positions stay valid.
    at.sort_by_key(|&(bi, ii, _, _)| std::cmp::Reverse((bi, ii)));
    for (bi, ii, r, imm) in at {
        let mov = Bundle::new().inst(forms::MOV_I).set(forms::MOV_I::VB, imm as u64).def(forms::MOV_I::RD, r).build();
        vcode.blocks[bi].insts.insert(ii, mov);
    }
    accepted.len()
}

/// The twin of the piece of `m` that reads fixup `k`'s operand in C beside
/// an immediate B (`X_RIR`): `X_RRC` reading `c` in C (the B register is
/// set by the caller's fixup), and the immediate.
fn immediate_to_register(m: &MInst, k: usize, c: u64, width: u32) -> Option<(Inst, u32)> {
    let fx = m.fixups[k];
    let p = &m.pieces[fx.piece as usize];
    let t = p.form().twins();
    if fx.hi || t.sources[2] != Some(fx.field) || p.def().bitwidth_of(fx.field as usize, p.values()) != width {
        return None;
    }
    let tw = t.cmem_beside_imm.as_ref()?;
    let mut from = p.clone();
    let vb = fields::VB.place(p.form())?;
    let imm = u32::try_from(from.get_at(vb)).ok()?;
    from.set_at(vb, from.def().fields[vb].unused_value());
    let mut n = convert(&from, &tw.twin, Some(fx.field as usize))?;
    let vc = tw.operand as usize;
    n.set_at(vc, c);
    let rb = n.form().twins().sources[1]? as usize;
    if n.def().bitwidth_of(vc, n.values()) != width || n.def().bitwidth_of(rb, n.values()) != 32 {
        return None;
    }
    n.validate().ok()?;
    // The piece's other register operands have a field in the twin.
    let mapped = m.fixups.iter().enumerate().all(|(j, f)| j == k || f.piece != fx.piece || tw.twin.fields[f.field as usize].is_some());
    mapped.then_some((n, imm))
}

/// Reads the register operand of fixup `k` of `m` from `src` (`value`: the
/// constant-bank address, the UR number or the immediate; `width`: the bits
/// the source holds) by switching its piece to the twin form; A is swapped
/// into B for commutative instructions. A 64-bit constant-bank value (two
/// consecutive words) is read whole by a 64-bit operand, or by halves by
/// 32-bit operands (the high half of the pair: the word at `value + 4`); a
/// 64-bit immediate only by halves (`value >> 32` for the high one). The fixup is removed (the
/// operand stays until [`drop_unnamed_uses`]). `false`, with
/// `m` unchanged, where no twin form takes it.
pub(crate) fn fold_operand(m: &mut MInst, k: usize, src: Source, value: u64, width: u32) -> bool {
    let fx = m.fixups[k];
    let pi = fx.piece as usize;
    let o = m.opnds[fx.opnd as usize];
    if o.kind != OpKind::Use || o.fixed.is_some() {
        return false;
    }
    let piece = &m.pieces[pi];
    let field_width = piece.def().bitwidth_of(fx.field as usize, piece.values());
    let value = match (src, width, field_width, fx.hi) {
        (_, 32, 32, false) => value,
        (Source::Const, 64, 64, false) => value,
        (Source::Const, 64, 32, hi) => value + if hi { 4 } else { 0 },
        (Source::Imm, 64, 32, hi) => {
            if hi {
                value >> 32
            } else {
                value & 0xffff_ffff
            }
        }
        _ => return false,
    };
    // Operand position, swapping A into B where allowed.
    let [ra, rb, rc] = piece.form().twins().sources.map(|s| s.map(usize::from));
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
    let Some(tw) = twin(inst.form(), pos, src) else { return false };
    let from_field = if pos == 1 { rb } else { rc };
    if let (true, Some(a), Some(b)) = (swap, ra, rb) {
        // Only when neither operand is modified (`commutes`).
        let (va, vb) = (inst.get_at(a), inst.get_at(b));
        inst.set_at(a, vb);
        inst.set_at(b, va);
        if inst.form() == forms::SEL_RR {
            let not = inst.get(forms::SEL_RR::PP_NOT) != 0;
            inst.set(forms::SEL_RR::PP_NOT, !not);
        }
    }
    let Some(mut n) = convert(&inst, &tw.twin, from_field) else { return false };
    n.set_at(tw.operand as usize, value);
    if n.def().bitwidth_of(tw.operand as usize, n.values()) != field_width {
        return false;
    }
    if n.validate().is_err() {
        return false;
    }
    // Field indices of this piece's other fixups, through the twin's map.
    m.replace_piece(pi, n, Some(k), |field| {
        let mut old = Some(field as usize);
        if swap {
            old = if old == ra {
                rb
            } else if old == rb {
                ra
            } else {
                old
            };
        }
        if old == from_field {
            return None;
        }
        old.and_then(|o| tw.twin.fields[o])
    })
}

/// Removes the use operands of `m` that no fixup names any more and that
/// `folded` says were folded away.
pub(crate) fn drop_unnamed_uses(m: &mut MInst, folded: impl Fn(VReg) -> bool) {
    m.retain_operands(|_, o, named| named || o.kind != OpKind::Use || o.fixed.is_some() || !folded(o.vreg));
}
