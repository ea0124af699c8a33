//! Zero operands: a value that is only a copy of zero (`MOV Rv, 0x0`) is
//! read by its users as `RZ`, in every 32-bit register operand of a machine
//! instruction, and the copy is deleted once nothing reads its register
//! (branch arguments, pseudo-instruction operands and 64-bit operands keep
//! it; for an ABI operand as a copy of `RZ`, `MOV Rv, RZ`). Such copies come from `iconst 0` operands that no rule folded and
//! from `opt_narrow_pairs` (the low word of a 64-bit constant whose high word
//! was dropped, such as a shared-memory base at offset 0).

use ursa_emit::forms::MOV_R;
use ursa_emit::model::{Kind, Operand};
use ursa_emit::typed::R;
use ursa_emit::{fields, forms, RZ};
use ursa_isel::vcode::{Bundle, Class, OpKind, Pseudo, VCode, VRegSet};

use crate::opt::opt_fold_cmem::{drop_unnamed_uses, remove_unread_copies, single_copies};

/// Reads copies of zero as `RZ`; returns how many operands were folded.
pub fn opt_fold_zero(vcode: &mut VCode) -> usize {
    let mut zeros = VRegSet::new(vcode.classes.len());
    zeros.extend(
        single_copies(vcode, forms::MOV_I, |p| p.get_opt(fields::VB) == Some(0))
            .filter(|&(v, _)| vcode.class(v) == Class::R)
            .map(|(v, _)| v),
    );
    if zeros.is_empty() {
        return 0;
    }
    let mut folded = 0;
    for b in vcode.blocks.iter_mut() {
        for m in b.insts.iter_mut() {
            // Only a use of a copy of zero is folded or dropped.
            if m.pseudo != Pseudo::None || !m.opnds.iter().any(|o| o.kind == OpKind::Use && zeros.contains(&o.vreg)) {
                continue;
            }
            let mut k = 0;
            while k < m.fixups.len() {
                let f = m.fixups[k];
                let o = m.opnds[f.opnd as usize];
                let p = &mut m.pieces[f.piece as usize];
                let fi = f.field as usize;
                let input = || {
                    p.def().inputs.iter().any(|x| matches!(x, Operand::Field(i) if *i as usize == fi))
                        || p.def().inputs.iter().any(|x| matches!(x, Operand::Address { base, .. } if *base as usize == fi))
                };
                let fold = o.kind == OpKind::Use
                    && zeros.contains(&o.vreg)
                    && !f.hi
                    && input()
                    && p.def().fields[fi].kind == Kind::Reg
                    && p.def().bitwidth_of(fi, p.values()) == 32;
                let before = p.get_at(fi);
                if fold {
                    p.set_at(fi, RZ as u64);
                    if p.validate().is_ok() {
                        m.unbind(k);
                        folded += 1;
                        continue;
                    }
                    p.set_at(fi, before);
                }
                k += 1;
            }
            drop_unnamed_uses(m, |v| zeros.contains(&v));
        }
    }
    remove_unread_copies(vcode, |v| zeros.contains(&v));
    // A copy of zero an ABI operand reads (a result, a call's argument)
    // copies `RZ`, the zero register. (Other readers keep the constant,
    // which `opt_if_convert` reads as an immediate or `RZ` of a `SEL`.)
    let mut abi = VRegSet::new(vcode.classes.len());
    for m in vcode.blocks.iter().flat_map(|b| &b.insts) {
        abi.extend(m.opnds.iter().filter(|o| o.kind == OpKind::Use && o.fixed.is_some() && zeros.contains(&o.vreg)).map(|o| o.vreg));
    }
    if abi.is_empty() {
        return folded;
    }
    for m in vcode.blocks.iter_mut().flat_map(|b| b.insts.iter_mut()) {
        if m.pseudo == Pseudo::None && m.pieces.len() == 1 && m.pieces[0].form() == forms::MOV_I {
            if let Some(d) = m.opnds.first().filter(|o| o.kind == OpKind::Def && abi.contains(&o.vreg)).map(|o| o.vreg) {
                *m = Bundle::new().inst(forms::MOV_R).def(MOV_R::RD, d).set(MOV_R::RB, R::Z).build();
            }
        }
    }
    folded
}
