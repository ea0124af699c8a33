//! Immediate operands: a value that is only a copy of a constant (`MOV Rv,
//! 0x5`, or for a 64-bit value the two `MOV`s of its pair) is read by its
//! users as an immediate, through the form of their instruction whose B or C
//! operand is one (`IADD_RR` → `IADD_RI`, `IMAD_RRR` → `IMAD_RIR`,
//! `ISETP_RR` → `ISETP_RI`; a pair by halves: each piece of
//! `IADD` + `IADD.X` takes its word). A commutative instruction with the
//! value in A swaps A and B first (a `SEL` also negates its predicate:
//! `SEL d, k, x, p` is `SEL d, x, k, !p`); a negated B of a plain `IADD` (`a - k`,
//! no carry in or out) takes the negated immediate. The copy is deleted
//! once nothing reads its register.
//!
//! So instruction selection emits the register form and this pass chooses
//! the immediate one, as `opt_fold_zero`, `opt_fold_cmem` and `opt_uniform` choose
//! the RZ, constant-bank and uniform forms. It runs after `opt_fold_zero` (zero
//! is read as `RZ`, ptxas's form, wherever a register operand takes it; what
//! `opt_fold_zero` leaves, such as a 64-bit zero, comes here) and before
//! `opt_fold_cmem` (which may trade an immediate B for a register to read C
//! from the constant bank, `fold_beside_immediate`). The twin forms and the
//! correspondence of their fields are generated from the ISA description
//! (`FormTwins::imm`); whether a value fits the twin's field (its width and
//! signedness) is the encoder's `validate`'s call, as in `opt_fold_cmem`.

use ursa_emit::{forms, mods, FormId, PT};
use ursa_isel::vcode::{Class, MInst, OpKind, Pseudo, VCode};

use crate::opt::opt_fold_cmem::{drop_unnamed_uses, fold_operand, remove_unread_copies, LazyDefCounts, Source};

/// The constants: per virtual register (a dense table), its value and width
/// (32, or 64 for a pair) where it is defined once, by an unguarded `MOV`
/// of an immediate (a pair: two, one per half) and nothing else.
fn constants(vcode: &VCode) -> Vec<Option<(u64, u32)>> {
    let defs = LazyDefCounts::new(vcode);
    // The table is made at the first constant (most functions have none).
    let mut out = Vec::new();
    for m in vcode.blocks.iter().flat_map(|b| b.insts.iter()) {
        let [o] = m.opnds.as_slice() else { continue };
        let moves = m.pieces.iter().all(|p| p.form() == forms::MOV_I && !p.is_guarded());
        if m.pseudo != Pseudo::None
            || !matches!(o.kind, OpKind::Def | OpKind::EarlyDef)
            || o.fixed.is_some()
            || !moves
            || !defs.once(o.vreg)
        {
            continue;
        }
        let k = |piece: u8| m.pieces[piece as usize].get(forms::MOV_I::VB);
        let c = match (vcode.class(o.vreg), m.fixups.as_slice()) {
            (Class::R, [f]) if !f.hi => (k(f.piece), 32),
            (Class::RPair, [a, b]) if !a.hi && b.hi => (k(a.piece) | k(b.piece) << 32, 64),
            (Class::RPair, [b, a]) if !a.hi && b.hi => (k(a.piece) | k(b.piece) << 32, 64),
            _ => continue,
        };
        out.resize(vcode.classes.len(), None);
        out[o.vreg.0 as usize] = Some(c);
    }
    out
}

/// Is fixup `k` of `m` the B of a plain `IADD_RR` that negates it (`a - b`:
/// no `.X`, no carry out), so that `a + (-k)` is the same sum?
fn negated_plain_add(m: &MInst, k: usize) -> bool {
    use forms::IADD_RR;
    let f = m.fixups[k];
    let p = &m.pieces[f.piece as usize];
    p.form() == forms::IADD_RR
        && f.field as usize == IADD_RR::RB.index as usize
        && p.get(IADD_RR::RB_NEG) != 0
        && p.get_mod(IADD_RR::EXT) == Some(mods::IExt::NoX)
        && p.get_at(IADD_RR::PU.index as usize) == PT as u64
}

/// Reads copies of constants as immediates; returns how many operands were
/// folded.
pub fn opt_fold_imm(vcode: &mut VCode) -> usize {
    let consts = constants(vcode);
    if consts.is_empty() {
        return 0;
    }
    let constant = |v: ursa_isel::vcode::VReg| consts.get(v.0 as usize).copied().flatten();
    let mut folded = 0;
    for b in vcode.blocks.iter_mut() {
        for m in b.insts.iter_mut() {
            if m.pseudo != Pseudo::None || !m.opnds.iter().any(|o| o.kind == OpKind::Use && constant(o.vreg).is_some()) {
                continue;
            }
            // One immediate per piece: after a fold the piece's fixups moved.
            // B and C are tried before A, which reaches the immediate only
            // by an exchange with B (so a constant B stays where it is).
            for pi in 0..m.pieces.len() {
                let form = m.pieces[pi].form();
                if !has_imm_twin(form) {
                    continue;
                }
                let ra = form.twins().sources[0].map(usize::from);
                'piece: for a_pass in [false, true] {
                    for k in 0..m.fixups.len() {
                        let fx = m.fixups[k];
                        if fx.piece as usize != pi || (Some(fx.field as usize) == ra) != a_pass {
                            continue;
                        }
                        let Some((value, width)) = constant(m.opnds[fx.opnd as usize].vreg) else { continue };
                        if fold_operand(m, k, Source::Imm, value, width) || (width == 32 && fold_negated(m, k, value)) {
                            folded += 1;
                            break 'piece;
                        }
                    }
                }
            }
            drop_unnamed_uses(m, |v| constant(v).is_some());
        }
    }
    remove_unread_copies(vcode, |v| constant(v).is_some());
    folded
}

/// Whether `form` has a twin with an immediate B or C.
fn has_imm_twin(form: FormId) -> bool {
    form.twins().imm.iter().any(Option::is_some)
}

/// `a - k` as `a + (-k)`: the `IADD_RR` of [`negated_plain_add`] with B not
/// negated, folded with the negated value (on a copy of `m`, kept only if
/// the fold succeeds).
fn fold_negated(m: &mut MInst, k: usize, value: u64) -> bool {
    if !negated_plain_add(m, k) {
        return false;
    }
    let mut trial = m.clone();
    let pi = m.fixups[k].piece as usize;
    trial.pieces[pi].set(forms::IADD_RR::RB_NEG, false);
    if !fold_operand(&mut trial, k, Source::Imm, (value as u32).wrapping_neg() as u64, 32) {
        return false;
    }
    *m = trial;
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use ursa_emit::forms::{IADD_RR, IMAD_RRR, MOV_I};
    use ursa_isel::vcode::{Bundle, VBlock, VReg};

    fn vcode(insts: Vec<MInst>, classes: Vec<Class>) -> VCode {
        VCode { blocks: vec![VBlock { insts, ..Default::default() }], classes, ..Default::default() }
    }

    fn mov(d: VReg, k: u32) -> MInst {
        Bundle::new().inst(forms::MOV_I).def(MOV_I::RD, d).set(MOV_I::VB, k as u64).build()
    }

    #[test]
    fn a_constant_in_b_or_a_becomes_the_immediate() {
        use Class::R as C;
        let (x, k, s, t) = (VReg(0), VReg(1), VReg(2), VReg(3));
        let add = Bundle::new().inst(forms::IADD_RR).def(IADD_RR::RD, s).use_(IADD_RR::RA, x).use_(IADD_RR::RB, k).build();
        // k * x + s: k in A, swapped into B.
        let mad = Bundle::new()
            .inst(forms::IMAD_RRR)
            .def(IMAD_RRR::RD, t)
            .use_(IMAD_RRR::RA, k)
            .use_(IMAD_RRR::RB, x)
            .use_(IMAD_RRR::RC, s)
            .build();
        let mut v = vcode(vec![mov(k, 40), add, mad], vec![C, C, C, C]);
        assert_eq!(opt_fold_imm(&mut v), 2);
        let text = v.to_string();
        assert!(text.contains("IADD v2, v0, 0x28"), "{}", text);
        assert!(text.contains("IMAD v3, v0, 0x28, v2"), "{}", text);
        assert!(!text.contains("MOV"), "the copy is deleted:\n{}", text);
    }

    #[test]
    fn a_subtraction_takes_the_negated_immediate_and_a_pair_goes_by_halves() {
        let (x, k, s, p, y, z, c) = (VReg(0), VReg(1), VReg(2), VReg(3), VReg(4), VReg(5), VReg(6));
        let sub = Bundle::new()
            .inst(forms::IADD_RR)
            .def(IADD_RR::RD, s)
            .use_(IADD_RR::RA, x)
            .use_(IADD_RR::RB, k)
            .set(IADD_RR::RB_NEG, true)
            .build();
        let pair = Bundle::new()
            .inst(forms::MOV_I)
            .def(MOV_I::RD, p)
            .set(MOV_I::VB, 7)
            .inst(forms::MOV_I)
            .def_hi(MOV_I::RD, p)
            .set(MOV_I::VB, 9)
            .build();
        // z = y + p (64 bits): IADD + IADD.X, each piece takes its word.
        let add64 = Bundle::new()
            .inst(forms::IADD_RR)
            .def(IADD_RR::RD, z)
            .temp(IADD_RR::PU, c)
            .use_(IADD_RR::RA, y)
            .use_(IADD_RR::RB, p)
            .inst(forms::IADD_RR)
            .set(IADD_RR::EXT, mods::IExt::X)
            .def_hi(IADD_RR::RD, z)
            .use_hi(IADD_RR::RA, y)
            .use_hi(IADD_RR::RB, p)
            .use_(IADD_RR::PP, c)
            .set(IADD_RR::PP_NOT, false)
            .build();
        let classes = vec![Class::R, Class::R, Class::R, Class::RPair, Class::RPair, Class::RPair, Class::P];
        let mut v = vcode(vec![mov(k, 3), sub, pair, add64], classes);
        assert_eq!(opt_fold_imm(&mut v), 3, "{}", v);
        let text = v.to_string();
        assert!(text.contains("IADD v2, v0, -0x3"), "{}", text);
        assert!(text.contains("v4.lo, 0x7"), "{}", text);
        assert!(text.contains("v4.hi, 0x9"), "{}", text);
        assert!(!text.contains("MOV"), "the copies are deleted:\n{}", text);
    }

    #[test]
    fn a_constant_first_arm_of_sel_swaps_the_arms_and_negates_the_predicate() {
        use forms::SEL_RR;
        // d = p ? k : x becomes d = !p ? x : k, with k as SEL's immediate B.
        let (x, k, p, d) = (VReg(0), VReg(1), VReg(2), VReg(3));
        let sel = Bundle::new()
            .inst(forms::SEL_RR)
            .def(SEL_RR::RD, d)
            .use_(SEL_RR::RA, k)
            .use_(SEL_RR::RB, x)
            .use_(SEL_RR::PP, p)
            .set(SEL_RR::PP_NOT, false)
            .build();
        let mut v = vcode(vec![mov(k, 0x7fff_ffff), sel], vec![Class::R, Class::R, Class::P, Class::R]);
        assert_eq!(opt_fold_imm(&mut v), 1, "{}", v);
        let text = v.to_string();
        assert!(text.contains("SEL v3, v0, 0x7fffffff, !v2"), "{}", text);
        assert!(!text.contains("MOV"), "the copy is deleted:\n{}", text);
    }

    #[test]
    fn a_value_too_wide_for_the_field_stays_in_its_register() {
        use forms::SHFL_RR;
        // SHFL_RI's B is 5 bits unsigned: 3 fits, 0x20 does not.
        let (x, k, d, q, w, e) = (VReg(0), VReg(1), VReg(2), VReg(3), VReg(4), VReg(5));
        let shfl = |k: VReg, d: VReg, q: VReg| {
            Bundle::new().inst(forms::SHFL_RR).def(SHFL_RR::RD, d).def(SHFL_RR::PU, q).use_(SHFL_RR::RA, x).use_(SHFL_RR::RB, k).build()
        };
        let classes = vec![Class::R, Class::R, Class::R, Class::P, Class::R, Class::R];
        let mut v = vcode(vec![mov(k, 0x20), shfl(k, d, q), mov(w, 3), shfl(w, e, q)], classes);
        assert_eq!(opt_fold_imm(&mut v), 1, "{}", v);
        let text = v.to_string();
        assert!(text.contains("MOV v1, 0x20"), "{}", text);
        assert!(!text.contains("MOV v4"), "{}", text);
    }
}
