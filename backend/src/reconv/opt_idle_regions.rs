//! Convergence regions with no branch left in them are deleted.
//!
//! `insert_reconvergence` plans its `BSSY Bk, J` … `BSYNC Bk` regions on
//! CLIF, before instruction selection; `opt_if_convert` may then turn the
//! divergent branch of a region into guarded instructions, and
//! `opt_branches` removes what is left of it. A region whose code from the
//! `BSSY` to its join is one straight line — no branch, exit, call or
//! convergence-barrier instruction in it, and no branch from elsewhere
//! landing in it — splits no warp: every lane that executes the `BSSY`
//! reaches the `BSYNC` with the others, so both (and the `BREAK Bk` that
//! may follow the `BSYNC`) do nothing and go; so do the saves and restores
//! of a barrier register that no `BSSY` sets any more.

use crate::ir::code::{Code, Item};
use ursa_emit::{fields, forms, optypes as o};

/// Transfers control or touches a convergence barrier.
fn is_control(it: &Item) -> bool {
    it.target.is_some()
        || it.call.is_some()
        || [o::BRA::ID, o::UBRA::ID, o::EXIT::ID, o::RET::ID, o::BPT::ID, o::CALL::ID, o::BSSY::ID, o::BSYNC::ID, o::BREAK::ID, o::BMOV::ID]
            .contains(&it.inst.def().optype)
}

/// Deletes the idle regions; returns how many.
pub fn opt_idle_regions(code: &mut Code) -> usize {
    // Most functions have no region at all.
    if !code.items.iter().any(|it| it.inst.form() == forms::BSSY_I) {
        return 0;
    }
    let n = code.items.len();
    // Item indices where the blocks that branches go to start.
    let landings: Vec<usize> = code.items.iter().filter_map(|it| it.target).map(|t| code.block_start[t.0 as usize]).collect();
    let mut dead = vec![false; n];
    let mut dropped = 0;
    for i in 0..n {
        let it = &code.items[i];
        let (true, Some(j)) = (it.inst.form() == forms::BSSY_I, it.label) else { continue };
        let Some(k) = it.inst.get_opt(fields::BD) else { continue };
        let js = code.block_start[j.0 as usize];
        if js <= i || code.items[i + 1..js].iter().any(is_control) || landings.iter().any(|&t| t > i && t <= js) {
            continue;
        }
        // The join starts with the BSYNCs (and BREAKs) of the regions ending there.
        let mut sync = None;
        let mut brk = None;
        for (y, x) in code.items.iter().enumerate().skip(js) {
            if x.inst.form() == forms::BSYNC_X {
                if x.inst.get_opt(fields::BB) == Some(k) {
                    sync = Some(y);
                }
            } else if x.inst.form() == forms::BREAK_X {
                if x.inst.get_opt(fields::BD) == Some(k) {
                    brk = Some(y);
                }
            } else {
                break;
            }
        }
        let Some(y) = sync else { continue };
        dead[i] = true;
        dead[y] = true;
        if let Some(b) = brk {
            dead[b] = true;
        }
        dropped += 1;
    }
    if dropped == 0 {
        return 0;
    }
    // A register no `BSSY` sets any more needs no save and restore
    // (`insert_breg_saves`): its `BMOV`s go too (a spill of the saved value stays,
    // dead).
    let mut set = 0u32;
    for (it, d) in code.items.iter().zip(&dead) {
        if it.inst.form() == forms::BSSY_I && !d {
            set |= it.inst.get_opt(fields::BD).map_or(u32::MAX, |k| 1 << k);
        }
    }
    for (it, d) in code.items.iter().zip(dead.iter_mut()) {
        let k = match it.inst.form() {
            f if f == forms::BMOV_X => it.inst.get_opt(fields::BB),
            f if f == forms::BMOV_R => it.inst.get_opt(fields::BD),
            _ => continue,
        };
        if k.is_some_and(|k| set >> k & 1 == 0) {
            *d = true;
        }
    }
    // Renumber: a block starts at the count of live items before it.
    let mut before = vec![0usize; n + 1];
    for i in 0..n {
        before[i + 1] = before[i] + !dead[i] as usize;
    }
    for s in code.block_start.iter_mut() {
        *s = before[*s];
    }
    let items = std::mem::take(&mut code.items);
    code.items = items.into_iter().zip(dead).filter(|(_, d)| !d).map(|(it, _)| it).collect();
    dropped
}
