//! Convergence regions with no branch left in them are deleted.
//!
//! `insert_reconvergence` plans its `BSSY Bk, J` … `BSYNC Bk` regions on
//! CLIF, before instruction selection; `if_convert` may then turn the
//! divergent branch of a region into guarded instructions, and
//! `opt_branches` removes what is left of it. A region whose code from the
//! `BSSY` to its join is one straight line — no branch, exit, call or
//! convergence-barrier instruction in it, and no branch from elsewhere
//! landing in it — splits no warp: every lane that executes the `BSSY`
//! reaches the `BSYNC` with the others, so both (and the `BREAK Bk` that
//! may follow the `BSYNC`) do nothing and go.

use crate::encode::{Code, Item};
use ursa_emit::{fields, forms};

/// Transfers control or touches a convergence barrier.
fn is_control(it: &Item) -> bool {
    it.target.is_some()
        || it.call.is_some()
        || matches!(it.inst.form.optype().name.as_ref(), "BRA" | "EXIT" | "RET" | "BPT" | "CALL" | "BSSY" | "BSYNC" | "BREAK" | "BMOV")
}

/// Deletes the idle regions; returns how many.
pub fn drop_idle_regions(code: &mut Code) -> usize {
    let n = code.items.len();
    // Item indices where the blocks that branches go to start.
    let landings: Vec<usize> = code.items.iter().filter_map(|it| it.target).map(|t| code.block_start[t.0 as usize]).collect();
    let mut dead = vec![false; n];
    let mut dropped = 0;
    for i in 0..n {
        let it = &code.items[i];
        let (true, Some(j)) = (it.inst.form == forms::BSSY_I, it.label) else { continue };
        let Some(k) = it.inst.get_opt(fields::BD) else { continue };
        let js = code.block_start[j.0 as usize];
        if js <= i || code.items[i + 1..js].iter().any(is_control) || landings.iter().any(|&t| t > i && t <= js) {
            continue;
        }
        // The join starts with the BSYNCs (and BREAKs) of the regions ending there.
        let mut sync = None;
        let mut brk = None;
        for (y, x) in code.items.iter().enumerate().skip(js) {
            if x.inst.form == forms::BSYNC_X {
                if x.inst.get_opt(fields::BB) == Some(k) {
                    sync = Some(y);
                }
            } else if x.inst.form == forms::BREAK_X {
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
