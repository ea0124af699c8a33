//! One machine instruction per allocator instruction: the multi-piece
//! [`MInst`]s that instruction selection builds for 64-bit operations
//! (`IADD` + `IADD.X`, `ISETP` + `ISETP.X`, the two halves of a 64-bit
//! `MOV`, `SEL`, `LOP3` or shift, the columns of a 64-bit multiply, …) are
//! split into one `MInst` per piece before register allocation, so the
//! allocator sees each machine instruction with its own uses and defs
//! instead of a unit whose defs are all written early.
//!
//! The passes before this one keep the pieces together because they decide
//! about a 64-bit value as a whole (`opt_narrow_pairs` drops the pieces of a high
//! word, `opt_fold_cmem`/`opt_uniform` move a value only if every piece can take
//! it); from here on every instruction is one machine instruction, except
//! the ones that stay whole (see `splittable`).
//!
//! A value that flows from one piece to a later one (a carry predicate, a
//! partial product, a temporary) becomes an ordinary virtual register. A
//! register pair written half by half stays one pair: the first half is
//! written into a fresh pair, and each later half write is an instruction
//! that reads the pair so far and defines the next version *in the same
//! register* ([`OpKind::Reuse`], regalloc2's reuse constraint) — the
//! allocator has no partial definitions. The last write of a bundle's result
//! defines the result's own virtual register, so later code is unchanged.

use smallvec::SmallVec;
use ursa_isel::vcode::{Class, Fixup, MInst, OpKind, Pseudo, VCode, VReg};

/// Splits every splittable bundle of `vcode`; returns how many were split.
pub fn lower_bundles(vcode: &mut VCode) -> usize {
    let mut count = 0;
    for bi in 0..vcode.blocks.len() {
        // The instructions splitting adds (at most), so the new list is
        // allocated once.
        let added: usize = vcode.blocks[bi].insts.iter().filter(|m| splittable(m)).map(|m| m.pieces.len() - 1).sum();
        if added == 0 {
            continue;
        }
        let old = std::mem::take(&mut vcode.blocks[bi].insts);
        let mut insts = Vec::with_capacity(old.len() + added);
        for m in old {
            if splittable(&m) && split(vcode, &m, &mut insts) {
                count += 1;
                continue;
            }
            insts.push(m);
        }
        vcode.blocks[bi].insts = insts;
    }
    count
}

/// Plain machine instructions of more than one piece. What stays whole:
/// pseudo-instructions (calls, control flow, frame-relative accesses), a
/// bundle with an out-of-line tail (`cold_from`: the pieces are two code
/// paths joined by branches), one that names a symbol, and one with an
/// operand fixed to an ABI register or bound to no field.
fn splittable(m: &MInst) -> bool {
    m.pseudo == Pseudo::None
        && m.pieces.len() > 1
        && m.cold_from.is_none()
        && m.sym().is_none()
        && !m.clobbers_all
        && m.opnds.iter().all(|o| o.fixed.is_none())
        && (0..m.opnds.len()).all(|k| m.fixups.iter().any(|f| f.opnd as usize == k))
}

/// Appends the pieces of `m` to `out` as instructions of their own; `false`
/// (and `out` as it was) when the bundle does not have the shape this pass
/// relies on (a value read before any piece writes it, a result no piece
/// writes).
fn split(vcode: &mut VCode, m: &MInst, out: &mut Vec<MInst>) -> bool {
    let start = out.len();
    let done = split_into(vcode, m, out).is_some();
    if !done {
        out.truncate(start);
    }
    done
}

/// [`split`], stopping at the first shape it does not handle (`None`).
fn split_into(vcode: &mut VCode, m: &MInst, out: &mut Vec<MInst>) -> Option<()> {
    let n = m.opnds.len();
    // The fixups with their roles (read, written), in piece order (stable:
    // a piece's own fixups keep their order).
    let mut by_piece: SmallVec<[(Fixup, bool, bool); 8]> = m
        .fixups
        .iter()
        .map(|&f| {
            let (r, w) = m.pieces[f.piece as usize].field_roles(f.field as usize);
            (f, r, w)
        })
        .collect();
    by_piece.sort_by_key(|x| x.0.piece);
    // The last piece writing each operand.
    let mut last_write: SmallVec<[Option<usize>; 8]> = smallvec::smallvec![None; n];
    for &(f, _, w) in &by_piece {
        if w {
            last_write[f.opnd as usize] = Some(f.piece as usize);
        }
    }
    // The version of each operand's value so far (a use reads the value
    // from before the bundle).
    let mut cur: SmallVec<[Option<VReg>; 8]> = m.opnds.iter().map(|o| (o.kind == OpKind::Use).then_some(o.vreg)).collect();
    for (k, o) in m.opnds.iter().enumerate() {
        if o.kind != OpKind::Use && o.kind != OpKind::Temp && last_write[k].is_none() {
            return None;
        }
    }
    let mut rest = &by_piece[..];
    for (j, p) in m.pieces.iter().enumerate() {
        let mut part = MInst::plain(p.clone());
        part.origin = m.origin;
        part.predicated = m.predicated;
        let here = rest.iter().take_while(|x| x.0.piece as usize == j).count();
        let (mine, after) = rest.split_at(here);
        rest = after;
        for &(f, _, _) in mine.iter().filter(|x| x.1) {
            let v = cur[f.opnd as usize]?;
            let i = part.use_operand(v);
            part.bind(0, f.field, i, f.hi);
        }
        // Writes, operand by operand.
        let mut done: SmallVec<[u8; 4]> = SmallVec::new();
        for &(f, _, _) in mine.iter().filter(|x| x.2) {
            let k = f.opnd as usize;
            if done.contains(&f.opnd) {
                continue;
            }
            done.push(f.opnd);
            let o = m.opnds[k];
            let class = vcode.class(o.vreg);
            let writes: SmallVec<[(Fixup, bool); 2]> =
                mine.iter().filter(|x| x.2 && x.0.opnd == f.opnd).map(|&(fx, rd, _)| (fx, rd)).collect();
            let whole = class != Class::RPair || (0..2).all(|h| writes.iter().any(|(fx, _)| m.names_half(fx, h)));
            let result = o.kind != OpKind::Temp && last_write[k] == Some(j);
            let v = if result { o.vreg } else { vcode.new_vreg(class) };
            // A half written after the other, or a field that is read and
            // written, would need the new version in the old one's register.
            let same_field = writes.iter().find(|(_, rd)| *rd).map(|(fx, _)| *fx);
            let kind = match (same_field, cur[k]) {
                (Some(fx), _) => OpKind::Reuse(part.fixups.iter().find(|g| g.field == fx.field)?.opnd),
                (None, Some(prev)) if !whole => OpKind::Reuse(part.use_operand(prev)),
                _ => OpKind::Def,
            };
            let i = part.add_operand(v, kind, None);
            for (fx, _) in &writes {
                part.bind(0, fx.field, i, fx.hi);
            }
            cur[k] = Some(v);
        }
        out.push(part);
    }
    Some(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use ursa_emit::forms::{self, IADD_RR, MOV_I};
    use ursa_emit::mods;
    use ursa_isel::vcode::{Bundle, Opnd, VBlock};

    fn vcode_with(classes: &[Class]) -> VCode {
        VCode { classes: classes.to_vec(), blocks: vec![VBlock::default()], ..Default::default() }
    }

    #[test]
    fn a_pair_constant_becomes_two_moves_the_second_reusing_the_first() {
        let mut vc = vcode_with(&[Class::RPair]);
        let v = VReg(0);
        let m = Bundle::new()
            .inst(forms::MOV_I)
            .def(MOV_I::RD, v)
            .set(MOV_I::VB, 5)
            .inst(forms::MOV_I)
            .def_hi(MOV_I::RD, v)
            .set(MOV_I::VB, 7)
            .build();
        vc.blocks[0].insts.push(m);
        assert_eq!(lower_bundles(&mut vc), 1);
        let insts = &vc.blocks[0].insts;
        assert_eq!(insts.len(), 2);
        // First: a fresh pair, low half.
        let t = insts[0].opnds[0].vreg;
        assert_ne!(t, v);
        assert_eq!(vc.class(t), Class::RPair);
        assert_eq!(insts[0].opnds[0].kind, OpKind::Def);
        // Second: reads the first version, defines v in its register.
        assert_eq!(insts[1].opnds[0], Opnd { vreg: t, kind: OpKind::Use, fixed: None });
        assert_eq!(insts[1].opnds[1], Opnd { vreg: v, kind: OpKind::Reuse(0), fixed: None });
        assert!(insts[1].fixups.iter().any(|f| f.hi && f.opnd == 1));
        for m in insts {
            vc.check_operands(m).unwrap();
        }
    }

    #[test]
    fn a_carry_becomes_an_ordinary_predicate_and_results_keep_their_names() {
        // v2 = v0 + v1 as IADD (carry out to P v3) + IADD.X reading it.
        let mut vc = vcode_with(&[Class::RPair, Class::RPair, Class::RPair, Class::P]);
        let (a, b, d, c) = (VReg(0), VReg(1), VReg(2), VReg(3));
        let m = Bundle::new()
            .inst(forms::IADD_RR)
            .def(IADD_RR::RD, d)
            .use_(IADD_RR::RA, a)
            .use_(IADD_RR::RB, b)
            .temp(IADD_RR::PU, c)
            .inst(forms::IADD_RR)
            .set(IADD_RR::EXT, mods::IExt::X)
            .def_hi(IADD_RR::RD, d)
            .use_hi(IADD_RR::RA, a)
            .use_hi(IADD_RR::RB, b)
            .use_(IADD_RR::PP, c)
            .set(IADD_RR::PP_NOT, false)
            .build();
        vc.blocks[0].insts.push(m);
        assert_eq!(lower_bundles(&mut vc), 1);
        let insts = &vc.blocks[0].insts;
        assert_eq!(insts.len(), 2);
        let defs = |m: &MInst| m.opnds.iter().filter(|o| o.kind != OpKind::Use).map(|o| o.vreg).collect::<Vec<_>>();
        let uses = |m: &MInst| m.opnds.iter().filter(|o| o.kind == OpKind::Use).map(|o| o.vreg).collect::<Vec<_>>();
        // The first piece defines a fresh low-half pair and a fresh carry.
        let d0 = defs(&insts[0]);
        assert_eq!(d0.len(), 2);
        assert!(!d0.contains(&d) && !d0.contains(&c));
        let carry = *d0.iter().find(|&&v| vc.class(v) == Class::P).unwrap();
        let lo = *d0.iter().find(|&&v| vc.class(v) == Class::RPair).unwrap();
        // The second reads a, b, the carry and the pair so far, and defines
        // d itself in the register of the pair so far.
        let u1 = uses(&insts[1]);
        for v in [a, b, carry, lo] {
            assert!(u1.contains(&v), "{:?} not read", v);
        }
        let reuse = insts[1].opnds.iter().find(|o| o.vreg == d).unwrap();
        match reuse.kind {
            OpKind::Reuse(k) => assert_eq!(insts[1].opnds[k as usize].vreg, lo),
            k => panic!("d defined as {:?}", k),
        }
        for m in insts {
            vc.check_operands(m).unwrap();
        }
    }

    #[test]
    fn single_pieces_and_pseudos_stay() {
        let mut vc = vcode_with(&[Class::R]);
        vc.blocks[0].insts.push(Bundle::new().inst(forms::MOV_I).def(MOV_I::RD, VReg(0)).set(MOV_I::VB, 1).build());
        vc.blocks[0].insts.push(Bundle::pseudo(Pseudo::Ret).fixed(VReg(0), OpKind::Use, 4).build());
        assert_eq!(lower_bundles(&mut vc), 0);
        assert_eq!(vc.blocks[0].insts.len(), 2);
    }
}
