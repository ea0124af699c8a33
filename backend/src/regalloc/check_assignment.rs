//! Checks an [`Assignment`] against the virtual-register code by symbolic
//! execution, independently of the allocator that made it (`Options::check_regalloc`).
//!
//! The state says, for every machine location (`R0`–`R254`, `P0`–`P6`, the
//! spill slots), which values it holds: a set of (virtual register, half),
//! since a copy leaves a value in two places. Moves copy sets; a def puts its
//! value in its register and removes older copies of it (a loop's previous
//! iteration); a call empties the registers (the stack pointer excepted);
//! `br_table` writes `P6`. On an edge, every location holding a branch
//! argument also holds the block parameter it is passed to. A block's state
//! is what all its predecessors agree on (intersection), to a fixed point.
//! Every use must find its value in the operand's register (an ABI operand in
//! its fixed register), an early def or a scratch register must not be a
//! register one of the instruction's uses reads, two results of one
//! instruction must not share a register, pairs must be even-aligned (the
//! two pairs of a quad at `R[4n]` and `R[4n+2]`), no
//! value may be put in `R1` where the stack pointer lives, nor in `P6`.

use crate::Error;
use smallvec::SmallVec;
use ursa_emit::RegFile;
use ursa_isel::vcode::{Class, MInst, OpKind, Pseudo, VCode};

use crate::regalloc::assign_regs_ssa::{copy_source, early_def_may_share, piece_span, result_span};
use crate::regalloc::assignment::{Assignment, Loc, Move, NO_REG};
use ursa_isel::abi::{P_SCRATCH, SPILL_SCRATCH};

/// Locations: R0–R254, then P0–P7, then the spill slot units.
const P_BASE: usize = 255;
const SLOT_BASE: usize = P_BASE + 8;
const SP: u32 = 1;

/// The values each location holds (virtual register × 2 + half).
type State = Vec<SmallVec<[u32; 2]>>;

fn loc(class: Class, at: Loc, half: u32) -> Result<usize, String> {
    let i = match (class, at) {
        (Class::P, Loc::Reg(n)) if n < 8 => P_BASE + n as usize,
        (_, Loc::Reg(n)) if n != NO_REG && n + half < 255 => (n + half) as usize,
        (_, Loc::Slot(s)) => SLOT_BASE + (s + half) as usize,
        _ => return Err(format!("{:?} is no register of class {:?}", at, class)),
    };
    Ok(i)
}

fn halves(c: Class) -> u32 {
    if c == Class::RPair {
        2
    } else {
        1
    }
}

/// Whether the code touches the stack pointer: a frame, a call, a return, or
/// an instruction naming `R1`.
fn uses_sp(vcode: &VCode) -> bool {
    if vcode.slots_size > 0 || vcode.incoming_bytes > 0 || vcode.makes_calls {
        return true;
    }
    let mut refs = Vec::new();
    vcode.blocks.iter().flat_map(|b| b.insts.iter()).any(|m| {
        matches!(m.pseudo, Pseudo::Ret | Pseudo::TailCall { .. } | Pseudo::Call | Pseudo::FrameRel { .. })
            || m.pieces.iter().any(|p| {
                refs.clear();
                p.reg_refs_into(&mut refs);
                refs.iter().any(|r| r.file == RegFile::R && r.num <= SP && SP < r.num + r.count)
            })
    })
}

/// Runs the check; the error (an internal one: the allocator is wrong)
/// names the block, instruction and value.
pub fn check_assignment(vcode: &VCode, asg: &Assignment) -> Result<(), Error> {
    check(vcode, asg).map_err(|e| Error::internal(format!("the register assignment is wrong: {}", e)))
}

fn check(vcode: &VCode, asg: &Assignment) -> Result<(), String> {
    let nb = vcode.blocks.len();
    let total: usize = vcode.blocks.iter().map(|b| b.insts.len()).sum();
    if asg.num_insts() != total || asg.move_at.len() != 2 * total + 1 {
        return Err(format!("the assignment covers {} instructions, the code has {}", asg.num_insts(), total));
    }
    let sp = uses_sp(vcode);
    let nlocs = SLOT_BASE + asg.num_spillslots + 2;
    let mut first = Vec::with_capacity(nb);
    let mut k = 0;
    for b in &vcode.blocks {
        first.push(k);
        k += b.insts.len();
    }
    // A half no instruction writes holds no value: reading it reads nothing.
    // The pairs made for regalloc2's ABI operands must each be such a pair.
    let undef_hi = undefined_high_halves(vcode);
    if let Some(p) = vcode.abi_low_pairs.iter().find(|p| !undef_hi[p.0 as usize]) {
        return Err(format!("{} carries a 32-bit ABI value, but an instruction writes its high half", p));
    }
    let mut entry: Vec<Option<State>> = vec![None; nb];
    entry[0] = Some(vec![SmallVec::new(); nlocs]);
    let mut work: Vec<usize> = vec![0];
    let mut queued = vec![false; nb];
    queued[0] = true;
    while let Some(b) = work.pop() {
        queued[b] = false;
        let mut st = entry[b].clone().unwrap();
        let blk = &vcode.blocks[b];
        let at = |j: usize, what: String| format!("block{} instruction {}: {}", b, j, what);
        for (j, m) in blk.insts.iter().enumerate() {
            let i = first[b] + j;
            for mv in asg.moves_at(2 * i) {
                do_move(&mut st, mv, sp).map_err(|e| at(j, e))?;
            }
            let regs = asg.operand_regs(i);
            if regs.len() != m.opnds.len() {
                return Err(at(j, "operand count differs".into()));
            }
            for (lo, hi) in vcode.has_quads.then(|| m.quads()).into_iter().flatten() {
                if regs[lo] % 4 != 0 || regs[hi] != regs[lo] + 2 {
                    return Err(at(
                        j,
                        format!(
                            "the quad of {} and {} is in {} and {}, not R[4n:4n+3]",
                            m.opnds[lo].vreg, m.opnds[hi].vreg, regs[lo], regs[hi]
                        ),
                    ));
                }
            }
            // Uses read their values.
            for (k, o) in m.opnds.iter().enumerate().filter(|(_, o)| o.kind == OpKind::Use) {
                let c = vcode.class(o.vreg);
                if o.fixed.is_some_and(|f| f as u32 != regs[k]) {
                    return Err(at(j, format!("{} is read in {:?}, not its ABI register {:?}", o.vreg, regs[k], o.fixed)));
                }
                for h in (0..halves(c)).filter(|&h| reads_half(m, k, h) && !(h == 1 && undef_hi[o.vreg.0 as usize])) {
                    let l = loc(c, Loc::Reg(regs[k]), h).map_err(|e| at(j, e))?;
                    if !st[l].contains(&(2 * o.vreg.0 + h)) {
                        return Err(at(
                            j,
                            format!("{} (half {}) is not in register {} (location {}) where it is read", o.vreg, h, regs[k], l),
                        ));
                    }
                }
            }
            // Results: their registers valid, distinct, early ones away from the uses.
            // (location, first and last piece it is held: results of a bundle
            // share when their pieces do not meet).
            let multi = m.pieces.len() > 1;
            let mut written: SmallVec<[(usize, u8, u8); 8]> = SmallVec::new();
            for (k, o) in m.opnds.iter().enumerate().filter(|(_, o)| o.kind != OpKind::Use) {
                let c = vcode.class(o.vreg);
                if o.fixed.is_some_and(|f| f as u32 != regs[k]) {
                    return Err(at(j, format!("{} is written to {}, not its ABI register {:?}", o.vreg, regs[k], o.fixed)));
                }
                if c == Class::RPair && regs[k] % 2 != 0 {
                    return Err(at(j, format!("pair {} in odd register {}", o.vreg, regs[k])));
                }
                // The instruction writes only part of it: the rest is the
                // reused value's, so it must be that register.
                if let OpKind::Reuse(u) = o.kind {
                    if regs.get(u as usize) != Some(&regs[k]) {
                        return Err(at(j, format!("{} is written to {}, not the register of the value it continues", o.vreg, regs[k])));
                    }
                }
                if c == Class::P && regs[k] >= P_SCRATCH {
                    return Err(at(j, format!("{} in the scratch predicate", o.vreg)));
                }
                for h in 0..halves(c) {
                    let l = loc(c, Loc::Reg(regs[k]), h).map_err(|e| at(j, e))?;
                    if sp && l == SP as usize && o.fixed.is_none() {
                        return Err(at(j, format!("{} in the stack pointer R1", o.vreg)));
                    }
                    let (f, last) = if multi { result_span(m, k, h, o.kind) } else { (0, u8::MAX) };
                    if written.iter().any(|&(l2, f2, last2)| l2 == l && !(last2 < f || last < f2)) {
                        return Err(at(j, format!("two results in location {}", l)));
                    }
                    written.push((l, f, last));
                    // In a bundle of several pieces, an early def may share
                    // with a use no later piece reads.
                    let shares = |r: &[(bool, u32, u8)]| multi && early_def_may_share(m, k, h, c == Class::P, regs[k] + h, r);
                    if matches!(o.kind, OpKind::EarlyDef | OpKind::Temp) {
                        for (k2, u) in m.opnds.iter().enumerate().filter(|(_, u)| u.kind == OpKind::Use) {
                            let cu = vcode.class(u.vreg);
                            for hu in 0..halves(cu) {
                                let last = if u.fixed.is_some() { u8::MAX } else { piece_span(m, k2, hu).map_or(u8::MAX, |s| s.1) };
                                if loc(cu, Loc::Reg(regs[k2]), hu).ok() == Some(l) && !shares(&[(cu == Class::P, regs[k2] + hu, last)]) {
                                    return Err(at(j, format!("{} is written early into a register {} reads", o.vreg, u.vreg)));
                                }
                            }
                        }
                    }
                }
            }
            if m.clobbers_all {
                for (l, s) in st.iter_mut().enumerate().take(SLOT_BASE) {
                    if l != SP as usize {
                        s.clear();
                    }
                }
            }
            // A 32-bit copy's result holds whatever its source register held.
            let copied = match copy_source(m) {
                Some((ks, false)) if vcode.class(m.opnds[ks].vreg) == Class::R => {
                    Some(st[loc(Class::R, Loc::Reg(regs[ks]), 0).map_err(|e| at(j, e))?].clone())
                }
                _ => None,
            };
            // Scratch registers first: a result sharing one writes it later.
            let mut results: SmallVec<[usize; 8]> = (0..m.opnds.len()).filter(|&k| m.opnds[k].kind == OpKind::Temp).collect();
            results.extend((0..m.opnds.len()).filter(|&k| matches!(m.opnds[k].kind, OpKind::Def | OpKind::EarlyDef)));
            results.extend((0..m.opnds.len()).filter(|&k| matches!(m.opnds[k].kind, OpKind::Reuse(_))));
            for (k, o) in results.into_iter().map(|k| (k, &m.opnds[k])) {
                let c = vcode.class(o.vreg);
                for h in 0..halves(c) {
                    let val = 2 * o.vreg.0 + h;
                    for s in st.iter_mut() {
                        s.retain(|x| *x != val);
                    }
                }
                for h in 0..halves(c) {
                    let l = loc(c, Loc::Reg(regs[k]), h).map_err(|e| at(j, e))?;
                    if c == Class::RPair && m.pseudo == Pseudo::None && !names_half(m, k, h) {
                        let val = 2 * o.vreg.0 + h;
                        match o.kind {
                            // The next version of a pair: a half it leaves
                            // holds it where that half held the version it
                            // continues (the same register, checked above).
                            OpKind::Reuse(u) if st[l].contains(&(2 * m.opnds[u as usize].vreg.0 + h)) => st[l] = smallvec::smallvec![val],
                            OpKind::Reuse(_) => st[l].clear(),
                            // A half of a pair no field writes keeps what its
                            // register held (the value's half there is
                            // undefined: anything).
                            _ => st[l].push(val),
                        }
                        continue;
                    }
                    st[l] = match (&copied, c) {
                        (Some(src), Class::R) => src.iter().copied().filter(|&x| x / 2 != o.vreg.0).chain([2 * o.vreg.0]).collect(),
                        _ => smallvec::smallvec![2 * o.vreg.0 + h],
                    };
                }
            }
            if m.pseudo == Pseudo::Table {
                st[P_BASE + P_SCRATCH as usize].clear();
            }
            for mv in asg.moves_at(2 * i + 1) {
                do_move(&mut st, mv, sp).map_err(|e| at(j, e))?;
            }
            // Edges: the parameters are where their arguments are.
            for (ti, t) in m.targets().iter().enumerate() {
                let s = t.0 as usize;
                let params = &vcode.blocks[s].params;
                let args: &[_] = m.args().get(ti).map_or(&[], |a| &a[..]);
                if args.len() != params.len() {
                    return Err(at(j, format!("{} arguments for the {} parameters of block{}", args.len(), params.len(), s)));
                }
                let mut out = st.clone();
                for p in params {
                    for x in out.iter_mut() {
                        x.retain(|v| *v / 2 != p.0);
                    }
                }
                for (l, x) in st.iter().enumerate() {
                    for (a, p) in args.iter().zip(params.iter()) {
                        for h in 0..2 {
                            if x.contains(&(2 * a.0 + h)) {
                                out[l].push(2 * p.0 + h);
                            }
                        }
                    }
                }
                let changed = match &mut entry[s] {
                    e @ None => {
                        *e = Some(out);
                        true
                    }
                    Some(e) => {
                        let mut changed = false;
                        for (x, y) in e.iter_mut().zip(out.iter()) {
                            let before = x.len();
                            x.retain(|v| y.contains(v));
                            changed |= x.len() != before;
                        }
                        changed
                    }
                };
                if changed && !queued[s] {
                    queued[s] = true;
                    work.push(s);
                }
            }
        }
    }
    Ok(())
}

fn do_move(st: &mut State, mv: &Move, sp: bool) -> Result<(), String> {
    for h in 0..halves(mv.class) {
        let (f, t) = (loc(mv.class, mv.from, h)?, loc(mv.class, mv.to, h)?);
        if sp && t == SP as usize {
            return Err("a move writes the stack pointer R1".into());
        }
        st[t] = st[f].clone();
    }
    // A predicate goes to and from memory through the scratch register.
    if mv.class == Class::P && (mv.from.slot().is_some() || mv.to.slot().is_some()) {
        st[SPILL_SCRATCH as usize].clear();
    }
    Ok(())
}

/// Whether `m` reads half `h` of use `k`: through its fields where it has
/// any (a 64-bit field reads both halves); the input of a `Reuse` def, the
/// halves the def does not write (they carry over); otherwise every half.
fn reads_half(m: &MInst, k: usize, h: u32) -> bool {
    if m.pseudo == Pseudo::None && m.fixups.iter().any(|f| f.opnd as usize == k) {
        return names_half(m, k, h);
    }
    match m.opnds.iter().position(|o| o.kind == OpKind::Reuse(k as u8)) {
        Some(d) => !names_half(m, d, h),
        None => true,
    }
}

/// Per virtual register: a pair whose high half no instruction writes (a
/// 32-bit value in the low word of an ABI pair,
/// `assign_regs_regalloc2::pair_abi_values`). That
/// half holds nothing: a read of it reads no value.
fn undefined_high_halves(vcode: &VCode) -> Vec<bool> {
    // Per register: 1 some def leaves the high half unwritten, 2 some def
    // writes it.
    let mut seen = vec![0u8; vcode.classes.len()];
    for m in vcode.blocks.iter().flat_map(|b| &b.insts) {
        for (k, o) in m.opnds.iter().enumerate() {
            if o.kind == OpKind::Use || vcode.class(o.vreg) != Class::RPair {
                continue;
            }
            let part = m.pseudo == Pseudo::None && matches!(o.kind, OpKind::Def | OpKind::EarlyDef) && !names_half(m, k, 1);
            seen[o.vreg.0 as usize] |= if part { 1 } else { 2 };
        }
    }
    seen.iter().map(|&x| x == 1).collect()
}

/// Whether a field of `m` names half `h` of operand `k` (reads it for a
/// use, writes it for a def).
fn names_half(m: &MInst, k: usize, h: u32) -> bool {
    m.fixups.iter().any(|f| f.opnd as usize == k && m.names_half(f, h))
}
