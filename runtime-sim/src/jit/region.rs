//! Region discovery for the translator: from an entry instruction, the
//! instructions reachable through direct branches and calls, cut into basic
//! blocks. Works only on the simulator's own pre-decoded instructions
//! ([`Exec`]); every instruction is classified once here.

use std::collections::{BTreeSet, HashSet};

use crate::ops::{AddrSpace, Dst64, LeaMode, Op, PIn, Src, Src64};
use crate::program::{Exec, Program, CODE_BASE};

/// Most instructions one region takes in. Cranelift's time and memory for
/// one region grow faster than its size (liveness over its blocks and
/// values): a function of 1,259 instructions with spill code took 3.7 s to
/// translate as one region, one of 507 took 0.34 s. Longer code becomes
/// several regions, so translation stays linear in the code's length
/// (docs/sim-translation.md).
pub(crate) const MAX_REGION: usize = 512;
/// Most basic blocks one region takes in.
pub(crate) const MAX_BLOCKS: usize = 128;

/// How the translator treats one instruction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Class {
    /// Translated to host code (integer ALU, local loads and stores).
    Native,
    /// Executed in place by a call into the interpreter's own semantics
    /// (every non-control instruction the translator does not handle).
    Helper,
    /// `BRA target` or `UBRA target` (guarded or not).
    Bra(usize),
    /// `CALL target`: writes the link pair, jumps.
    Call(usize),
    /// `RET Rpair`: back to a call site of the region, or out of it.
    Ret,
    /// Not handled: the region ends before it and the interpreter runs it.
    Leave,
}

/// A basic block: the `len` instructions from `start` that it executes. If
/// the last is a BRA, CALL or RET, that is its end; otherwise control goes on
/// at `start + len` (another block, or out of the region to the interpreter).
#[derive(Clone, Debug)]
pub(crate) struct Block {
    pub start: usize,
    pub len: usize,
}

/// A translated region's shape.
pub(crate) struct Region {
    pub blocks: Vec<Block>,
    /// Instruction indices right after a CALL of the region (where RET may land).
    pub return_points: Vec<usize>,
    /// Starts of the blocks with one way in, from inside the region: one
    /// branch, call or fall-through, not the entry or a return point. What
    /// is known where that way leaves holds at the block's start.
    pub one_way_in: HashSet<usize>,
}

pub(crate) fn pc_of(idx: usize) -> u64 {
    CODE_BASE + 16 * idx as u64
}

/// Whether a guard can be evaluated for the one executing lane: any guard of
/// a warp instruction; for a uniform-datapath instruction, a uniform
/// predicate or PT (a lane predicate there means lane 0's bit).
fn guard_ok(e: &Exec) -> bool {
    !e.uniform || e.guard.uniform || e.guard == PIn::TRUE
}

/// Whether an op (of a warp instruction) is translated to host code rather
/// than run by a call into the interpreter's semantics.
pub(crate) fn native(op: &Op, uniform: bool) -> bool {
    if uniform {
        return false;
    }
    let plain = |s: &Src| !matches!(s, Src::C(_));
    let plain64 = |s: &Src64| !matches!(s, Src64::C(_) | Src64::C32(_));
    match op {
        Op::Nop => true,
        Op::Iadd { a, b, .. } | Op::Imul { a, b, .. } | Op::Imnmx { a, b, .. } | Op::Isetp { a, b, .. } | Op::Sel { a, b, .. } => {
            plain(a) && plain(b)
        }
        Op::Imad { a, b, c, .. } | Op::Lop3 { a, b, c, .. } | Op::Shf { a, b, c, .. } => plain(a) && plain(b) && plain(c),
        Op::Lea { a, b, mode: LeaMode::Lo, .. } => plain(a) && plain(b),
        Op::ImadWide { a, b, c, .. } => plain(a) && plain(b) && plain64(c),
        Op::Iabs { b, .. } => plain(b),
        Op::Mov { s, .. } => plain(s),
        Op::Mov64 { s, .. } => plain64(s),
        Op::Plop3 { .. } => true,
        Op::Load { space: AddrSpace::Local, a, .. } | Op::Store { space: AddrSpace::Local, a, .. } => plain64(a),
        // With the lane the warp's only live one (`jit_ready`) they never
        // change the flow: see `Tx::convergence`.
        Op::Bssy { .. } | Op::Bsync { .. } | Op::Break { .. } | Op::BmovToR { .. } => true,
        Op::BmovToB { s, .. } => plain(s),
        _ => false,
    }
}

/// Classifies one instruction.
pub(crate) fn classify(prog: &Program, idx: usize) -> Class {
    let e = &prog.code[idx];
    if !guard_ok(e) {
        return Class::Leave;
    }
    let target = |t: u64| prog.index(t);
    match &e.op {
        // A uniform branch (`@UPn UBRA`, guard checked above) is a branch of
        // the one lane.
        Op::Bra { target: t } => target(*t).map_or(Class::Leave, Class::Bra),
        Op::Call { target: t, d: Dst64::R(..) } if !e.uniform => target(*t).map_or(Class::Leave, Class::Call),
        Op::Ret { a: Src64::R(..) | Src64::U(..) | Src64::Imm(_) } if !e.uniform => Class::Ret,
        Op::Undefined(_) | Op::Invalid => Class::Leave,
        // The other control instructions leave translated code, except the
        // convergence-barrier ones, which are host code (`Tx::convergence`).
        op if op.is_control() && !native(op, e.uniform) => Class::Leave,
        op => {
            if native(op, e.uniform) {
                Class::Native
            } else {
                Class::Helper
            }
        }
    }
}

/// Finds the region of `entry`: instructions reachable by falling through,
/// direct branches and calls, up to [`MAX_REGION`] instructions.
pub(crate) fn discover(prog: &Program, entry: usize) -> Region {
    let n = prog.code.len();
    let mut leaders = BTreeSet::new();
    let mut seen: HashSet<usize> = HashSet::new();
    let mut return_points = Vec::new();
    let mut work = vec![entry];
    leaders.insert(entry);
    // Pass 1: the block starts and the reachable instructions.
    while let Some(start) = work.pop() {
        let mut i = start;
        loop {
            if i >= n || !seen.insert(i) {
                break;
            }
            let add = |t: usize, work: &mut Vec<usize>, leaders: &mut BTreeSet<usize>| {
                if t < n && leaders.len() < MAX_BLOCKS && leaders.insert(t) {
                    work.push(t);
                }
            };
            match classify(prog, i) {
                Class::Native | Class::Helper => {
                    if seen.len() >= MAX_REGION {
                        break;
                    }
                    i += 1;
                }
                Class::Bra(t) => {
                    add(t, &mut work, &mut leaders);
                    if prog.code[i].guard != PIn::TRUE {
                        add(i + 1, &mut work, &mut leaders);
                    }
                    break;
                }
                Class::Call(t) => {
                    add(t, &mut work, &mut leaders);
                    add(i + 1, &mut work, &mut leaders);
                    if leaders.contains(&(i + 1)) {
                        return_points.push(i + 1);
                    }
                    break;
                }
                Class::Ret => {
                    if prog.code[i].guard != PIn::TRUE {
                        add(i + 1, &mut work, &mut leaders);
                    }
                    break;
                }
                Class::Leave => break,
            }
        }
    }
    // Pass 2: each leader runs to its block's terminator or the next leader.
    let mut blocks = Vec::new();
    for &start in &leaders {
        let mut len = 0;
        let mut i = start;
        while i < n && seen.contains(&i) {
            let c = classify(prog, i);
            if c == Class::Leave {
                break;
            }
            len += 1;
            i += 1;
            if !matches!(c, Class::Native | Class::Helper) || leaders.contains(&i) {
                break;
            }
        }
        blocks.push(Block { start, len });
    }
    return_points.sort_unstable();
    return_points.dedup();
    let one_way_in = one_way_in(prog, &blocks, entry, &return_points);
    Region { blocks, return_points, one_way_in }
}

/// [`Region::one_way_in`]: counts the ways into each block.
fn one_way_in(prog: &Program, blocks: &[Block], entry: usize, return_points: &[usize]) -> HashSet<usize> {
    let mut ways: std::collections::HashMap<usize, u32> = std::collections::HashMap::new();
    // The entry and the return points are also entered from outside.
    for &i in return_points.iter().chain([&entry]) {
        *ways.entry(i).or_default() += 2;
    }
    for blk in blocks {
        if blk.len == 0 {
            continue;
        }
        let last = blk.start + blk.len - 1;
        let guarded = prog.code[last].guard != PIn::TRUE;
        let (target, falls) = match classify(prog, last) {
            Class::Bra(t) => (Some(t), guarded),
            Class::Call(t) => (Some(t), false),
            Class::Ret => (None, guarded),
            Class::Native | Class::Helper => (None, true),
            Class::Leave => (None, false),
        };
        if let Some(t) = target {
            *ways.entry(t).or_default() += 1;
        }
        if falls {
            *ways.entry(last + 1).or_default() += 1;
        }
    }
    blocks.iter().map(|b| b.start).filter(|s| ways.get(s) == Some(&1)).collect()
}
