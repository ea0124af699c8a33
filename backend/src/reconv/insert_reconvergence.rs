//! Reconvergence instructions: the `BSSY Bk, J` / `BSYNC Bk` (and `BREAK Bk`)
//! of the regions `plan_reconvergence` planned on CLIF, put into the
//! laid-out code after `lower_vcode` (`docs/kernels.md`, "Reconvergence";
//! the protocol of `docs/isa-extensions.md` 3.4–3.5).

use cranelift_codegen::ir::Block;
use ursa_emit::mods::BReg;
use ursa_emit::typed::{Fld, Mod};
use ursa_emit::{forms, Inst};
use ursa_isel::vcode::{BlockId, VCode};

use crate::ir::code::{Code, Item};
use crate::reconv::plan::{vcode_block, Plan};

fn breg_inst(form: ursa_emit::FormId, field: Fld<Mod<BReg>>, k: u8) -> Inst {
    Inst::new(form).with(field, BReg(k as u32))
}

/// Puts the planned instructions into the laid-out code: at the start of
/// each join block its `BSYNC` (and `BREAK`), then in each setup block its
/// `BSSY Bk, J` (the target resolved like a branch's), at the start or
/// after the barrier saves and restores of [`crate::reconv::insert_breg_saves`] there.
pub fn insert_reconvergence(code: &mut Code, vcode: &VCode, plan: &Plan) {
    if plan.regions.is_empty() {
        return;
    }
    let nb = code.block_start.len();
    // VCode block -> block of the laid-out code.
    let vblock = |b: Block| vcode_block(vcode, plan, b).map(|v| BlockId(code.vblocks.get(v.0 as usize).map_or(v.0, |&c| c as u32)));
    let mut prefix: Vec<Vec<Item>> = vec![Vec::new(); nb];
    let mut setups: Vec<Vec<Item>> = vec![Vec::new(); nb];
    for r in &plan.regions {
        if vblock(r.setup).is_none() {
            continue;
        }
        for j in r.joins.iter().filter_map(|&j| vblock(j)) {
            prefix[j.0 as usize].push(Item::new(breg_inst(forms::BSYNC_X, forms::BSYNC_X::BB, r.breg)));
            if r.rearm {
                prefix[j.0 as usize].push(Item::new(breg_inst(forms::BREAK_X, forms::BREAK_X::BD, r.breg)));
            }
        }
    }
    for r in &plan.regions {
        let (Some(j), Some(p)) = (vblock(r.joins[0]), vblock(r.setup)) else { continue };
        setups[p.0 as usize].push(Item::new(breg_inst(forms::BSSY_I, forms::BSSY_I::BD, r.breg)).labelled(j));
    }
    let n = code.items.len();
    let is_bmov = |it: &Item| it.inst.form() == forms::BMOV_X || it.inst.form() == forms::BMOV_R;
    let mut items = std::mem::take(&mut code.items).into_iter();
    let mut out = Vec::with_capacity(n + 3 * plan.regions.len());
    for (b, (pre, set)) in prefix.into_iter().zip(setups).enumerate() {
        let end = if b + 1 < nb { code.block_start[b + 1] } else { n };
        let len = end - code.block_start[b];
        code.block_start[b] = out.len();
        out.extend(pre);
        let block: Vec<Item> = items.by_ref().take(len).collect();
        // The `BSSY`s after the block's saves and restores (a device
        // function's restores before `RET` end a block no region starts in).
        let at = if set.is_empty() { 0 } else { block.iter().rposition(is_bmov).map_or(0, |i| i + 1) };
        let mut block = block.into_iter();
        out.extend(block.by_ref().take(at));
        out.extend(set);
        out.extend(block);
    }
    code.items = out;
}
