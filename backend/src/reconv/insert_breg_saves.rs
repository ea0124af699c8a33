//! Saves and restores of convergence-barrier registers (`docs/kernels.md`,
//! "Reconvergence"; `docs/abi.md`, "Convergence barriers"), put into the
//! machine code before register allocation so that the saved views live in
//! ordinary R registers (allocated, spilled and counted like any value):
//!
//! - a device function's saved registers ([`Plan::saved`]):
//!   `BMOV.CLEAR Rn, Bk` at entry, `BMOV Bk, Rn` before each `RET` (and
//!   tail call);
//! - a region that borrows its register (`Region::borrow`):
//!   `BMOV.CLEAR Rn, Bk` at the start of its setup block, `BMOV Bk, Rn` at
//!   the start of its join.
//!
//! At a block start the restores come first, then the saves;
//! [`crate::reconv::insert_reconvergence::insert_reconvergence`] then puts the `BSYNC`s (and
//! `BREAK`s) before them and the `BSSY`s after them. Each lane saves and
//! restores its own view of the barrier (`docs/isa-extensions.md` 3.4), so
//! no convergence is needed at either point.

use ursa_emit::forms::{self, BMOV_R, BMOV_X};
use ursa_emit::mods::{BReg, BmovMode};
use ursa_isel::vcode::{Bundle, Class, MInst, Pseudo, VCode, VReg};

use crate::reconv::plan::{vcode_block, Plan};

fn save(k: u8, v: VReg) -> MInst {
    Bundle::new().inst(forms::BMOV_X).def(BMOV_X::RD, v).set(BMOV_X::BB, BReg(k as u32)).set(BMOV_X::MODE, BmovMode::CLEAR).build()
}

fn restore(k: u8, v: VReg) -> MInst {
    Bundle::new().inst(forms::BMOV_R).use_(BMOV_R::RB, v).set(BMOV_R::BD, BReg(k as u32)).build()
}

fn has_form(m: &MInst, form: ursa_emit::FormId) -> bool {
    m.pieces.first().is_some_and(|p| p.form() == form)
}

/// Index in `insts` after the `Args` pseudo and the leading instructions of
/// `forms`.
fn lead(insts: &[MInst], forms: &[ursa_emit::FormId]) -> usize {
    let mut i = insts.iter().take_while(|m| m.pseudo == Pseudo::Args).count();
    while insts.get(i).is_some_and(|m| forms.iter().any(|&f| has_form(m, f))) {
        i += 1;
    }
    i
}

/// Puts the plan's saves and restores into `vcode`; returns how many.
pub fn insert_breg_saves(vcode: &mut VCode, plan: &Plan) -> usize {
    // Most functions save no convergence barrier register.
    if plan.saved == 0 && !plan.regions.iter().any(|r| r.borrow) {
        return 0;
    }
    let is_exit = |m: &MInst| matches!(m.pseudo, Pseudo::Ret | Pseudo::TailCall { .. });
    let mut at_exits = Vec::new();
    let mut at_starts = Vec::new();
    let mut saves = Vec::new();
    let entry = plan.entry.and_then(|e| vcode_block(vcode, plan, e));
    for k in (0..16u8).filter(|k| plan.saved >> k & 1 != 0) {
        let Some(entry) = entry else { break };
        let v = vcode.new_vreg(Class::R);
        saves.push((entry, save(k, v)));
        for (b, vb) in vcode.blocks.iter().enumerate() {
            if vb.insts.iter().any(is_exit) {
                at_exits.push((b, restore(k, v)));
            }
        }
    }
    for r in plan.regions.iter().filter(|r| r.borrow) {
        let (Some(p), Some(j)) = (vcode_block(vcode, plan, r.setup), vcode_block(vcode, plan, r.joins[0])) else { continue };
        let v = vcode.new_vreg(Class::R);
        saves.push((p, save(r.breg, v)));
        at_starts.push((j, restore(r.breg, v)));
    }
    let n = saves.len() + at_exits.len() + at_starts.len();
    for (b, m) in at_exits {
        let insts = &mut vcode.blocks[b].insts;
        let at = insts.iter().position(is_exit).unwrap_or(insts.len());
        insts.insert(at, m);
    }
    for (b, m) in at_starts {
        let insts = &mut vcode.blocks[b.0 as usize].insts;
        let at = lead(insts, &[forms::BMOV_R]);
        insts.insert(at, m);
    }
    for (b, m) in saves {
        let insts = &mut vcode.blocks[b.0 as usize].insts;
        let at = lead(insts, &[forms::BMOV_R, forms::BMOV_X]);
        insts.insert(at, m);
    }
    n
}
