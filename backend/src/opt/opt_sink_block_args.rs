//! A value passed as a block argument is computed after the last read, in
//! its block, of the block parameter it becomes.
//!
//! The loop update of `for (s = 128; s > 1; s >>= 1)` lowers to
//! `SHF s' = s >> 1 ; ISETP p = s > 1 ; @p BRA loop(s')`: `s` is still
//! read after `s'` is written, so the two cannot share a register and the
//! back edge needs a copy (`MOV s, s'`), which also keeps a block on the edge
//! (a `BRA` over it). Computing `s'` after the compare ends `s` where `s'`
//! begins, the allocator gives both one register, the copy disappears and
//! the branch goes straight back (ptxas's `ISETP ; SHF ; @P0 BRA`). The
//! instruction moves only as far as that last read, so the live ranges of
//! its inputs do not grow.
//!
//! Only integer-ALU instructions without memory access or side effect move
//! (`opt_narrow_pairs::pure_alu`), only past instructions that neither read nor
//! write what they write, nor write what they read.

use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};

use ursa_isel::vcode::{MInst, OpKind, Pseudo, VCode, VReg};

use crate::opt::opt_narrow_pairs::pure_alu;

/// Moves the computations of block arguments down; returns how many.
pub fn opt_sink_block_args(vcode: &mut VCode) -> usize {
    // The block parameters each value is passed to (from any block).
    let mut params_of: HashMap<VReg, Vec<VReg>> = HashMap::default();
    for b in &vcode.blocks {
        for m in b.insts.iter().filter(|m| m.is_terminator()) {
            for (t, args) in m.targets().iter().zip(m.args().iter()) {
                for (a, p) in args.iter().zip(vcode.blocks[t.0 as usize].params.iter()) {
                    params_of.entry(*a).or_default().push(*p);
                }
            }
        }
    }
    // No block arguments: nothing to sink.
    if params_of.is_empty() {
        return 0;
    }
    let movable = |m: &MInst| {
        m.pseudo == Pseudo::None
            && m.cold_from.is_none()
            && !m.clobbers_all
            && m.sym().is_none()
            && m.pieces.iter().all(pure_alu)
            && m.opnds.iter().all(|o| o.fixed.is_none())
    };
    let mut moved = 0;
    // The values read in the block (moving instructions within it does not
    // change them): a block that reads none of an argument's parameters has
    // nothing to scan for (a jump with n arguments into n parameters read
    // only by the next block would otherwise cost n scans of its block).
    let mut read: HashSet<VReg> = HashSet::default();
    for b in vcode.blocks.iter_mut() {
        let Some(term) = b.insts.iter().position(|m| m.is_terminator()) else { continue };
        read.clear();
        read.extend(b.insts[..term].iter().flat_map(|m| m.opnds.iter().filter(|o| o.kind == OpKind::Use).map(|o| o.vreg)));
        let mut i = term;
        while i > 0 {
            i -= 1;
            let m = &b.insts[i];
            // Only an instruction that writes a block argument (cheap to
            // ask first), and one that may move.
            if !m.opnds.iter().any(|o| o.kind != OpKind::Use && params_of.contains_key(&o.vreg)) || !movable(m) {
                continue;
            }
            let writes: Vec<VReg> = m.opnds.iter().filter(|o| o.kind != OpKind::Use).map(|o| o.vreg).collect();
            let reads: Vec<VReg> = m.opnds.iter().filter(|o| o.kind == OpKind::Use).map(|o| o.vreg).collect();
            let params: HashSet<VReg> =
                writes.iter().filter_map(|w| params_of.get(w)).flatten().copied().filter(|p| read.contains(p)).collect();
            if params.is_empty() {
                continue;
            }
            // The last instruction of the block before its terminator that
            // reads one of those parameters.
            let Some(last) =
                (i + 1..term).rev().find(|&k| b.insts[k].opnds.iter().any(|o| o.kind == OpKind::Use && params.contains(&o.vreg)))
            else {
                continue;
            };
            let blocked = b.insts[i + 1..=last].iter().any(|n| {
                n.clobbers_all || n.opnds.iter().any(|o| writes.contains(&o.vreg) || (o.kind != OpKind::Use && reads.contains(&o.vreg)))
            });
            if blocked {
                continue;
            }
            let m = b.insts.remove(i);
            b.insts.insert(last, m);
            moved += 1;
        }
    }
    moved
}
