//! Values passed only as block arguments are computed last in their block,
//! just before its terminator (after the compare the branch reads).
//!
//! The loop update of `for (s = 128; s > 1; s >>= 1)` lowers to
//! `SHF s' = s >> 1 ; ISETP p = s > 1 ; @p BRA loop(s')`: `s` is still
//! read after `s'` is written, so the two cannot share a register and the
//! back edge needs a copy (`MOV s, s'`), which also keeps a block on the edge
//! (a `BRA` over it). Computing `s'` after the compare ends `s` where `s'`
//! begins, the allocator gives both one register, the copy disappears and
//! the branch goes straight back (ptxas's `ISETP ; SHF ; @P0 BRA`).
//!
//! Only integer-ALU instructions without memory access or side effect move
//! (`narrow_pairs::pure_alu`), only past instructions that neither read nor
//! write what they write, nor write what they read.

use std::collections::HashSet;

use ursa_isel::vcode::{MInst, OpKind, Pseudo, VCode, VReg};

use crate::narrow_pairs::pure_alu;

/// Moves the block-argument-only computations down; returns how many.
pub fn sink_block_args(vcode: &mut VCode) -> usize {
    // Registers read other than as block arguments.
    let mut read: HashSet<VReg> = HashSet::new();
    for b in &vcode.blocks {
        for m in &b.insts {
            read.extend(m.opnds.iter().filter(|o| o.kind == OpKind::Use).map(|o| o.vreg));
        }
    }
    let movable = |m: &MInst| {
        m.pseudo == Pseudo::None
            && m.cold_from.is_none()
            && !m.clobbers_all
            && m.sym.is_none()
            && m.pieces.iter().all(pure_alu)
            && m.opnds.iter().all(|o| o.fixed.is_none())
            && m.opnds.iter().any(|o| o.kind != OpKind::Use)
            && m.opnds.iter().filter(|o| o.kind == OpKind::Def || o.kind == OpKind::EarlyDef).all(|o| !read.contains(&o.vreg))
    };
    let mut moved = 0;
    for b in vcode.blocks.iter_mut() {
        let Some(term) = b.insts.iter().position(|m| m.is_terminator()) else { continue };
        // From the bottom up, so an instruction moved leaves the ones above
        // it free to follow.
        let mut end = term;
        let mut i = term;
        while i > 0 {
            i -= 1;
            if !movable(&b.insts[i]) {
                continue;
            }
            let m = &b.insts[i];
            let writes: Vec<VReg> = m.opnds.iter().filter(|o| o.kind != OpKind::Use).map(|o| o.vreg).collect();
            let reads: Vec<VReg> = m.opnds.iter().filter(|o| o.kind == OpKind::Use).map(|o| o.vreg).collect();
            let blocked = b.insts[i + 1..end].iter().any(|n| {
                n.opnds.iter().any(|o| writes.contains(&o.vreg) || (o.kind != OpKind::Use && reads.contains(&o.vreg))) || n.clobbers_all
            });
            if blocked || i + 1 == end {
                if i + 1 == end {
                    end = i;
                }
                continue;
            }
            let m = b.insts.remove(i);
            b.insts.insert(end - 1, m);
            end -= 1;
            moved += 1;
        }
    }
    moved
}
