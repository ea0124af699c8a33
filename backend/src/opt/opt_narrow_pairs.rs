//! 64-bit values of which only the low word is ever read are computed in 32
//! bits: a register pair becomes a single register, the pieces that only
//! write its high word are deleted, and a piece that writes it whole takes
//! its 32-bit twin (`IMAD.WIDE` → `IMAD`, `MOV.64` → `MOV`).
//!
//! The typical case is a shared-memory address: CLIF computes it as an
//! `i64` in the generic window (`symbol_value` + index), while `LDS`/`STS`
//! read only its low word (the shared address), so the high word (the window,
//! `0x10000`) and the carries into it are dead work and a register each.
//!
//! The analysis is a backward fixed point over the whole function on the
//! virtual-register code: a pair needs its high word if a kept piece reads
//! it (the high half, or the pair as a 64-bit operand), if a
//! pseudo-instruction or a branch argument reads the pair, or if its
//! defining instruction cannot be narrowed. Pieces are deleted only when
//! they are integer-ALU instructions (no memory access, no side effect) and
//! write nothing else that is read.

use smallvec::SmallVec;
use ursa_emit::model::Operand;
use ursa_emit::typed::{Fld, Raw};
use ursa_emit::{fields, Group, Inst};
use ursa_isel::vcode::{Class, MInst, OpKind, Pseudo, VCode, VReg, VRegSet as VSet};

use crate::opt::opt_fold_cmem::{convert, def_counts};

/// What becomes of one piece when the pairs in `narrow` lose their high
/// word.
enum Fate {
    Keep,
    Delete,
    /// Its 32-bit twin (it wrote a narrowed pair whole).
    Twin(Box<Inst>),
}

/// The fate of each piece of one instruction (no piece is copied to plan).
type Plan = SmallVec<[Fate; 4]>;

/// Piece `pi` of `m` as `pl` keeps it (None if deleted).
fn kept<'a>(pl: &'a Plan, m: &'a MInst, pi: usize) -> Option<&'a Inst> {
    match &pl[pi] {
        Fate::Keep => Some(&m.pieces[pi]),
        Fate::Delete => None,
        Fate::Twin(n) => Some(n),
    }
}

/// Is field `f` of `p` written by it?
fn is_output(p: &Inst, f: usize) -> bool {
    p.def().outputs.iter().any(|o| matches!(o, Operand::Field(i) if *i as usize == f))
}

/// An integer-ALU piece without memory access or side effect: deleting it
/// changes nothing but its results.
pub(crate) fn pure_alu(p: &Inst) -> bool {
    let def = p.def();
    p.form().group() == Group::IALU
        && !def.inputs.iter().chain(def.outputs.iter()).any(|o| matches!(o, Operand::RegIndexed { .. } | Operand::Pseudo(_)))
}

/// The 32-bit twin of a piece whose 64-bit result `rd` only has its low
/// word read: `MOV.64` → `MOV`, `X_WIDE_…` → `X_…` (the twin table's `narrow`, fields carried over by its map;
/// a 64-bit addend becomes its low word, which gives the same low word of
/// the result). None where there is none or the result would differ (a
/// carry in or out).
fn narrow_twin(p: &Inst) -> Option<Inst> {
    if !pure_alu(p) {
        return None;
    }
    let def = p.def();
    let rd = fields::RD.place(p.form())?;
    if let Some(w) = fields::WIDTH.place(p.form()) {
        // `MOV{.32}`: the width field's default.
        let mut n = p.clone();
        n.set_at(w, def.fields[w].unused_value());
        return (n.def().bitwidth_of(rd, n.values()) == 32 && n.validate().is_ok()).then_some(n);
    }
    let tw = p.form().twins().narrow.as_ref()?;
    // No carry in (`.X`) and no carry out.
    let at_default = |h: Fld<Raw>| h.place(p.form()).is_none_or(|k| p.get_at(k) == def.fields[k].unused_value());
    if !at_default(fields::EXT.raw()) || !at_default(fields::PU) {
        return None;
    }
    let n = convert(p, tw, None)?;
    (n.def().bitwidth_of(fields::RD.place(n.form())?, n.values()) == 32 && n.validate().is_ok()).then_some(n)
}

/// The index in `p` (`orig` itself or its 32-bit twin) of field `f` of
/// `orig`.
fn field_in(orig: &Inst, p: &Inst, f: usize) -> Option<usize> {
    if p.form() == orig.form() {
        return Some(f);
    }
    let t = orig.form().twins().narrow.as_ref().filter(|t| t.form == p.form())?;
    t.fields[f].map(usize::from)
}

/// An instruction that keeps every piece (and so the high word of every
/// pair it writes) whatever is narrowed.
fn unplannable(m: &MInst) -> bool {
    m.pseudo != Pseudo::None || m.cold_from.is_some() || m.clobbers_all || m.sym().is_some()
}

/// The plan for `m` when the pairs in `narrow` lose their high word; None
/// if `m` writes one of them in a way that cannot be narrowed.
fn plan(m: &MInst, narrow: &VSet) -> Option<Plan> {
    let writes_narrow = m.opnds.iter().any(|o| o.kind != OpKind::Use && narrow.contains(&o.vreg));
    let mut out: Plan = m.pieces.iter().map(|_| Fate::Keep).collect();
    if !writes_narrow {
        return Some(out);
    }
    if unplannable(m) {
        return None;
    }
    // Whether each fixup names a field its piece writes.
    let outs: SmallVec<[bool; 8]> = m.fixups.iter().map(|f| is_output(&m.pieces[f.piece as usize], f.field as usize)).collect();
    // Twins for the pieces that write a narrowed pair whole.
    for (k, fx) in m.fixups.iter().enumerate() {
        let p = &m.pieces[fx.piece as usize];
        let o = m.opnds[fx.opnd as usize];
        if !outs[k] || !narrow.contains(&o.vreg) || fx.hi {
            continue;
        }
        if p.def().bitwidth_of(fx.field as usize, p.values()) >= 64 {
            let twin = narrow_twin(kept(&out, m, fx.piece as usize)?)?;
            out[fx.piece as usize] = Fate::Twin(Box::new(twin));
        }
    }
    // Delete the pieces whose every output is the high word of a narrowed
    // pair or a scratch register that only deleted pieces read, until none
    // changes.
    let pure: SmallVec<[bool; 4]> = (0..m.pieces.len()).map(|pi| kept(&out, m, pi).is_some_and(pure_alu)).collect();
    loop {
        let mut changed = false;
        for pi in 0..m.pieces.len() {
            if !pure[pi] || matches!(out[pi], Fate::Delete) {
                continue;
            }
            let mut written = m.fixups.iter().enumerate().filter(|&(k, f)| f.piece as usize == pi && outs[k]).peekable();
            if written.peek().is_none() {
                continue;
            }
            let dead = written.all(|(_, f)| {
                let o = m.opnds[f.opnd as usize];
                let hi_of_narrow = f.hi && narrow.contains(&o.vreg);
                let unread_temp = o.kind == OpKind::Temp
                    && m.fixups.iter().enumerate().all(|(j, g)| {
                        g.opnd != f.opnd || g.piece as usize == pi || matches!(out[g.piece as usize], Fate::Delete) || outs[j]
                    });
                hi_of_narrow || unread_temp
            });
            if dead {
                out[pi] = Fate::Delete;
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }
    // Every narrowed pair this instruction writes must now be written in
    // 32 bits only.
    for (k, fx) in m.fixups.iter().enumerate() {
        let o = m.opnds[fx.opnd as usize];
        if !matches!(out[fx.piece as usize], Fate::Delete) && narrow.contains(&o.vreg) && outs[k] && fx.hi {
            return None;
        }
    }
    Some(out)
}

/// The plans made so far, by instruction number (in block order, sorted):
/// which of its operands were in the narrow set, and the plan for that set.
/// A plan reads the set only through its instruction's operands, so it
/// stands for any set that agrees with it there (the fixed point's later
/// rounds mostly do).
#[derive(Default)]
struct Plans(Vec<(usize, SmallVec<[bool; 8]>, Option<Plan>)>);

impl Plans {
    /// [`plan`]`(m, narrow)` for instruction number `at`.
    fn plan(&mut self, at: usize, m: &MInst, narrow: &VSet) -> Option<&Plan> {
        let key: SmallVec<[bool; 8]> = m.opnds.iter().map(|o| narrow.contains(&o.vreg)).collect();
        let k = match self.0.binary_search_by_key(&at, |e| e.0) {
            Ok(k) => {
                if self.0[k].1 != key {
                    self.0[k] = (at, key, plan(m, narrow));
                }
                k
            }
            Err(k) => {
                // The first round numbers them in order: a push.
                self.0.insert(k, (at, key, plan(m, narrow)));
                k
            }
        };
        self.0[k].2.as_ref()
    }
}

/// Adds to `wide` the pairs whose high word the kept code reads, given
/// `narrow`, and those written by an instruction that cannot be narrowed.
///
/// What an instruction adds depends only on which of its operands are in
/// `narrow` (its block arguments are always wide): `high_read` is one
/// instruction's part, `at` its number in the function.
fn high_read(vcode: &VCode, at: usize, m: &MInst, narrow: &VSet, wide: &mut VSet, plans: &mut Plans) {
    for a in m.args().iter().flatten() {
        wide.insert(*a);
    }
    // Only candidates made wide matter to the caller: an instruction
    // naming none adds nothing else that counts.
    if !m.opnds.iter().any(|o| narrow.contains(&o.vreg)) {
        return;
    }
    // An instruction that writes no candidate keeps every piece.
    let writes_narrow = m.opnds.iter().any(|o| o.kind != OpKind::Use && narrow.contains(&o.vreg));
    // `pl`: the plan where it writes one (None: every piece kept).
    let pl: Option<&Plan> = if writes_narrow { plans.plan(at, m, narrow) } else { None };
    if writes_narrow && pl.is_none() {
        wide.extend(m.opnds.iter().filter(|o| o.kind != OpKind::Use).map(|o| o.vreg));
        // Kept whole: read as it is.
        wide.extend(m.opnds.iter().filter(|o| o.kind == OpKind::Use && vcode.class(o.vreg) == Class::RPair).map(|o| o.vreg));
        return;
    }
    // Operands without a field (fixed ABI operands) and everything a
    // pseudo-instruction reads: whole.
    for (k, o) in m.opnds.iter().enumerate() {
        if vcode.class(o.vreg) == Class::RPair
            && o.kind == OpKind::Use
            && (m.pseudo != Pseudo::None || !m.fixups.iter().any(|f| f.opnd as usize == k))
        {
            wide.insert(o.vreg);
        }
    }
    // Register fields read by kept pieces (a value written by one
    // piece of a bundle and read by a later one included).
    for f in &m.fixups {
        let o = m.opnds[f.opnd as usize];
        let orig = &m.pieces[f.piece as usize];
        // Only a candidate not yet known wide can change the outcome
        // (the bit width below is the costly part).
        if !narrow.contains(&o.vreg) || wide.contains(&o.vreg) || vcode.class(o.vreg) != Class::RPair || is_output(orig, f.field as usize) {
            continue;
        }
        // The field in the kept piece (through the twin map).
        let (p, fi) = match pl {
            Some(pl) => match kept(pl, m, f.piece as usize) {
                Some(p) => match field_in(orig, p, f.field as usize) {
                    Some(fi) => (p, fi),
                    None => continue,
                },
                None => continue,
            },
            None => (orig, f.field as usize),
        };
        if f.hi || p.def().bitwidth_of(fi, p.values()) >= 64 {
            wide.insert(o.vreg);
        }
    }
}

/// A superset of the candidates the fixed point of [`opt::opt_narrow_pairs`] keeps
/// narrow, found without planning any instruction.
///
/// At the fixed point `N` (no member of `N` is in `high_reads(N)`), a
/// candidate `v` in `N` is not read by a branch argument, a
/// pseudo-instruction or a fixed operand (those are wide whatever `N` is),
/// is not written by an instruction that cannot be planned (its plan fails
/// as soon as it writes a member of `N`, which makes that member wide), and every instruction whose original pieces read `v` in 64 bits (or its
/// high word) writes some member of `N` — an instruction writing none keeps
/// its pieces as they are, and such a read makes `v` wide. The set returned
/// is the largest subset of `cand` with these two properties (a greatest
/// fixed point of a monotone condition), so it contains `N`; where it is
/// empty, so is `N`. It is only a bound: the pass itself still runs the
/// exact (not monotone) fixed point from every candidate.
fn survivors_bound(vcode: &VCode, cand: &VSet) -> VSet {
    let mut s = cand.clone();
    // (candidate read wide, the candidates its reader writes).
    let mut edges: Vec<(VReg, SmallVec<[VReg; 2]>)> = Vec::new();
    for b in &vcode.blocks {
        for m in &b.insts {
            for a in m.args().iter().flatten() {
                s.remove(*a);
            }
            // Most instructions name no candidate.
            if !m.opnds.iter().any(|o| s.contains(&o.vreg)) {
                continue;
            }
            for (k, o) in m.opnds.iter().enumerate() {
                if o.kind == OpKind::Use
                    && s.contains(&o.vreg)
                    && (m.pseudo != Pseudo::None || !m.fixups.iter().any(|f| f.opnd as usize == k))
                {
                    s.remove(o.vreg);
                }
            }
            let writes: SmallVec<[VReg; 2]> =
                m.opnds.iter().filter(|o| o.kind != OpKind::Use && cand.contains(&o.vreg)).map(|o| o.vreg).collect();
            if unplannable(m) {
                for w in &writes {
                    s.remove(*w);
                }
            }
            for f in &m.fixups {
                let v = m.opnds[f.opnd as usize].vreg;
                let p = &m.pieces[f.piece as usize];
                if !s.contains(&v) || is_output(p, f.field as usize) {
                    continue;
                }
                if f.hi || p.def().bitwidth_of(f.field as usize, p.values()) >= 64 {
                    if writes.is_empty() {
                        s.remove(v);
                    } else {
                        edges.push((v, writes.clone()));
                    }
                }
            }
        }
    }
    loop {
        let before = s.len();
        edges.retain(|(v, ws)| {
            if !s.contains(v) {
                return false;
            }
            if ws.iter().any(|w| s.contains(w)) {
                return true;
            }
            s.remove(*v);
            false
        });
        if s.is_empty() || s.len() == before {
            return s;
        }
    }
}

/// The instructions (by number in the function) naming each candidate
/// among their operands, in order: `at[first[v]..first[v + 1]]` (an
/// instruction naming it twice is there twice).
struct Namers {
    first: Vec<u32>,
    at: Vec<u32>,
}

impl Namers {
    fn new(insts: &[&MInst], cand: &VSet) -> Namers {
        let n = cand.iter().map(|v| v.0 as usize + 1).max().unwrap_or(0);
        let pairs = || (0u32..).zip(insts).flat_map(|(i, m)| m.opnds.iter().filter(|o| cand.contains(&o.vreg)).map(move |o| (o.vreg.0, i)));
        let (mut first, mut at) = (Vec::new(), Vec::new());
        crate::ir::group_by_key(n, pairs, &mut first, &mut at);
        Namers { first, at }
    }

    fn of(&self, v: VReg) -> &[u32] {
        match self.first.get(v.0 as usize..v.0 as usize + 2) {
            Some(&[a, b]) => &self.at[a as usize..b as usize],
            _ => &[],
        }
    }
}

/// Narrows the pairs of `vcode` whose high word is never read; returns how
/// many.
pub fn opt_narrow_pairs(vcode: &mut VCode) -> usize {
    // Nothing to do without a pair an instruction that could be narrowed
    // writes (the pairs of the arguments and the return address are the
    // entry's, which no plan changes).
    let narrowable = |m: &MInst| !unplannable(m) && m.opnds.iter().any(|o| o.kind != OpKind::Use && vcode.class(o.vreg) == Class::RPair);
    if !vcode.blocks.iter().any(|b| b.insts.iter().any(narrowable)) {
        return 0;
    }
    let defs = def_counts(vcode);
    let nv = vcode.classes.len();
    let mut params = VSet::new(nv);
    for b in &vcode.blocks {
        params.extend(b.params.iter().copied());
    }
    let mut narrow = VSet::new(nv);
    narrow.extend((0..nv as u32).map(VReg).filter(|&v| vcode.class(v) == Class::RPair && defs.once(v) && !params.contains(&v)));
    // Most functions have nothing to narrow: skip the fixed point (and its
    // plans) when even the cheap bound says so.
    if narrow.is_empty() || survivors_bound(vcode, &narrow).is_empty() {
        return 0;
    }
    // The fixed point: candidates whose high word is read, given the others,
    // leave the set until none does. The first round looks at every
    // instruction; a later one only at those naming a candidate the round
    // before took out (what the others add depends only on their operands,
    // so it was taken out already).
    let insts: Vec<&MInst> = vcode.blocks.iter().flat_map(|b| b.insts.iter()).collect();
    let namers = Namers::new(&insts, &narrow);
    let mut plans = Plans::default();
    let mut wide = VSet::new(nv);
    for (at, m) in insts.iter().enumerate() {
        high_read(vcode, at, m, &narrow, &mut wide, &mut plans);
    }
    let mut visit: Vec<u32> = Vec::new();
    loop {
        let out: SmallVec<[VReg; 16]> = wide.iter().filter(|v| narrow.contains(v)).collect();
        if out.is_empty() {
            break;
        }
        visit.clear();
        for &v in &out {
            narrow.remove(v);
            visit.extend_from_slice(namers.of(v));
        }
        if narrow.is_empty() {
            break;
        }
        visit.sort_unstable();
        visit.dedup();
        wide.clear();
        for &at in &visit {
            high_read(vcode, at as usize, insts[at as usize], &narrow, &mut wide, &mut plans);
        }
    }
    if narrow.is_empty() {
        return 0;
    }
    // Numbered as `high_reads` numbers them, so the plans made there serve.
    for (at, m) in vcode.blocks.iter_mut().flat_map(|b| b.insts.iter_mut()).enumerate() {
        if !m.opnds.iter().any(|o| o.kind != OpKind::Use && narrow.contains(&o.vreg)) {
            continue;
        }
        let pl = plans.plan(at, m, &narrow).expect("narrowable by the fixed point");
        *m = rebuild(m, pl, &narrow);
    }
    for v in narrow.iter() {
        vcode.classes[v.0 as usize] = Class::R;
    }
    narrow.len()
}

/// `m` with the plan applied: deleted pieces and their fixups gone, fields
/// of twins found through the twin map, scratch outputs nobody reads any more set to
/// their unused value, operands no fixup names removed.
fn rebuild(m: &MInst, pl: &Plan, narrow: &VSet) -> MInst {
    let mut pieces: SmallVec<[Inst; 2]> = SmallVec::new();
    let mut new_index = vec![None; m.pieces.len()];
    for (pi, slot) in new_index.iter_mut().enumerate() {
        if let Some(p) = kept(pl, m, pi) {
            *slot = Some(pieces.len() as u8);
            pieces.push(p.clone());
        }
    }
    // Where each fixup goes: (piece, field, high half), or nowhere.
    let mut to: SmallVec<[Option<(u8, u8, bool)>; 8]> = SmallVec::with_capacity(m.fixups.len());
    for f in &m.fixups {
        let Some(np) = new_index[f.piece as usize] else {
            to.push(None);
            continue;
        };
        let orig = &m.pieces[f.piece as usize];
        let piece = &mut pieces[np as usize];
        let fi = field_in(orig, piece, f.field as usize).expect("the twin has every register field");
        let o = m.opnds[f.opnd as usize];
        // A scratch output that no kept piece reads any more.
        let read_elsewhere = m.fixups.iter().any(|g| {
            g.opnd == f.opnd && new_index[g.piece as usize].is_some() && !is_output(&m.pieces[g.piece as usize], g.field as usize)
        });
        if o.kind == OpKind::Temp && is_output(orig, f.field as usize) && !read_elsewhere {
            let unused = piece.def().fields[fi].unused_value();
            piece.set_at(fi, unused);
            to.push(None);
            continue;
        }
        to.push(Some((np, fi as u8, f.hi && !narrow.contains(&o.vreg))));
    }
    // Operands that only deleted fixups named go (fixed operands have none and stay).
    let mut n = m.clone();
    n.reshape(pieces, |j| to[j]);
    n
}
