//! The dispatch of one pre-decoded instruction to its family's semantics
//! (`alu_int`, `xu`, `dalu`, `float32`, `alu_uniform`, `mem_ops`,
//! `collective`, `control`), shared by the interpreter's issue loop and
//! the translated code's calls back into the semantics (`jit`).

use crate::machine::Warp;
use crate::memory::{ConstBanks, Global};
use crate::ops::Op;
use crate::program::{Exec, Program};
use crate::site::{Flow, Site};
use crate::trap::{Fault, TrapKind};
use crate::{alu_int, alu_uniform, collective, control, dalu, float32, mem_ops, xu};

/// Runs a lane-parallel semantics function for the single lane of `e` (a
/// one-bit mask): an `N = 1` execution over that lane's column of the
/// register file, so a lone lane costs one lane's work, not 32. (A macro
/// rather than a function taking a closure: the closure was not inlined.)
macro_rules! one_lane {
    ($regs:expr, $e:expr, |$rf:ident| $body:expr) => {{
        let $rf: &mut crate::regs::Regs = $regs;
        $rf.lane = $e.trailing_zeros() as usize;
        let r = $body;
        $rf.lane = 0;
        r
    }};
}

/// Executes one instruction for the group `a` whose executing lanes are `e`.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
pub(crate) fn execute(
    ex: &Exec,
    warp: &mut Warp,
    site: &mut Site,
    cb: &ConstBanks,
    mem: &mut Global,
    a: u32,
    e: u32,
    pc: u64,
    idx: usize,
    prog: &Program,
) -> Result<Flow, Fault> {
    let op = &ex.op;
    if e == 0 {
        // No lane executes: no effect and no fault (the lanes of the group
        // just move on), except for bytes that never decoded.
        return match op {
            Op::Invalid => Err(TrapKind::Undecodable(prog.errors[idx].clone().unwrap_or_default()).into()),
            _ => Ok(Flow::Next),
        };
    }
    match op {
        Op::Nop | Op::Membar => {}
        Op::Iadd { .. }
        | Op::Imad { .. }
        | Op::ImadWide { .. }
        | Op::Idp { .. }
        | Op::Imul { .. }
        | Op::Lea { .. }
        | Op::Iabs { .. }
        | Op::Imnmx { .. }
        | Op::P2r { .. }
        | Op::R2p { .. }
        | Op::Isetp { .. }
        | Op::Iset { .. }
        | Op::Sel { .. }
        | Op::Lop3 { .. }
        | Op::Plop3 { .. }
        | Op::Shf { .. }
        | Op::Mov { .. }
        | Op::Mov64 { .. }
        | Op::Prmt { .. }
        | Op::I2i { .. }
        | Op::I2ip { .. }
        | Op::Popc { .. }
        | Op::Flo { .. }
        | Op::Brev { .. }
        | Op::Bmsk { .. }
        | Op::Sgxt { .. } => {
            if ex.uniform {
                alu_int::exec::<1>(op, &mut warp.regs, cb, 1)?;
            } else if e & (e - 1) == 0 {
                one_lane!(&mut warp.regs, e, |rf| alu_int::exec::<1>(op, rf, cb, 1))?;
            } else {
                alu_int::exec::<32>(op, &mut warp.regs, cb, e)?;
            }
        }
        Op::Mufu { .. } => {
            if e & (e - 1) == 0 {
                one_lane!(&mut warp.regs, e, |rf| xu::exec::<1>(op, rf, cb, 1))?
            } else {
                xu::exec::<32>(op, &mut warp.regs, cb, e)?
            }
        }
        Op::Dadd { .. } | Op::Dmul { .. } | Op::Dfma { .. } | Op::Dmnmx { .. } | Op::Dsetp { .. } => {
            if e & (e - 1) == 0 {
                one_lane!(&mut warp.regs, e, |rf| dalu::exec::<1>(op, rf, cb, 1))?
            } else {
                dalu::exec::<32>(op, &mut warp.regs, cb, e)?
            }
        }
        Op::Fadd { .. }
        | Op::Fmul { .. }
        | Op::Ffma { .. }
        | Op::Fmnmx { .. }
        | Op::Fsetp { .. }
        | Op::Frnd { .. }
        | Op::I2f { .. }
        | Op::F2i { .. }
        | Op::F2f { .. } => {
            if e & (e - 1) == 0 {
                one_lane!(&mut warp.regs, e, |rf| float32::exec::<1>(op, rf, cb, 1))?
            } else {
                float32::exec::<32>(op, &mut warp.regs, cb, e)?
            }
        }
        Op::R2ur { .. } | Op::Setgpr { .. } | Op::Getgpr { .. } | Op::Setugpr { .. } | Op::Getugpr { .. } | Op::Uldc { .. } => {
            alu_uniform::exec(op, &mut warp.regs, cb, e)?
        }
        Op::S2r { d, sr } => alu_uniform::s2r(warp, site, *d, *sr, e, ex.uniform)?,
        Op::Load { .. } | Op::Store { .. } | Op::Ldc { .. } | Op::Atom { .. } => {
            mem_ops::exec(op, warp, site.shared, mem, cb, e, site.record.as_deref_mut())?
        }
        Op::Vote { .. } | Op::Shfl { .. } => collective::exec(op, &mut warp.regs, cb, e)?,
        Op::Undefined(name) => return Err(TrapKind::SemanticsNotDefined(name).into()),
        Op::Invalid => {
            let msg = prog.errors[idx].clone().unwrap_or_else(|| "invalid instruction".into());
            return Err(TrapKind::Undecodable(msg).into());
        }
        // The rest are the control instructions (`Op::is_control`, the one
        // list the JIT's region discovery uses too).
        op => {
            debug_assert!(op.is_control(), "{:?} has no executor", op);
            return control::exec(op, warp, site, cb, a, e, pc);
        }
    }
    Ok(Flow::Next)
}
