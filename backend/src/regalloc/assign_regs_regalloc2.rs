//! Register allocation with `regalloc2` (see `docs/regalloc.md`).
//!
//! regalloc2 has three register classes of at most 64 registers each and no
//! register pairs. Ursa maps its files onto them as disjoint regions of the
//! machine's registers:
//!
//! | regalloc2 class | Ursa class | allocatable | scratch |
//! |---|---|---|---|
//! | `Int` | 32-bit `R` | `R132`–`R194` | `R195` |
//! | `Float` | 64-bit pair `R[n:n+1]` | `R[4:5]`–`R[128:129]` | `R[130:131]` |
//! | `Vector` | predicate `P` | `P0`–`P5` | `P6` |
//!
//! `R0` (spill scratch for predicates), `R1` (stack pointer), `R2`–`R3` and
//! `R196`–`R254` are never allocated.
//!
//! regalloc2 has no class for a register quad either (a fourth class, or
//! pairs of its `Float` registers kept adjacent, it cannot express): before
//! it runs, [`split_quads`] turns each `.128` access on a quad into two
//! `.64` accesses, one per pair (the address is a multiple of 16, so each
//! half is aligned).
//!
//! regalloc2's default algorithm (Ion: live ranges, bundles, splitting)
//! gives the better code, but its time grows with the square of the
//! function where many long-lived values spill (each spilled bundle is
//! tried against every register over its whole range,
//! `try_allocating_regs_for_spilled_bundles`): 8k simultaneously live
//! values took 23 s. A function of [`LINEAR_FROM`] instructions or more is
//! allocated by regalloc2's single pass instead (`Algorithm::Fastalloc`:
//! each value spilled around the places it does not fit, in time linear in
//! the code), and every spill slot of it is placed in local memory
//! ([`Assignment::slots_in_memory`]), which makes the rest of the pipeline
//! linear too (`place_spill_slots`, `docs/regalloc.md`).

use ra::{Allocation, Edit, InstRange, MachineEnv, Operand, PReg, PRegSet, RegClass, RegallocOptions};
use regalloc2 as ra;
use ursa_isel::vcode::{Bundle, Class, OpKind, Pseudo, VCode};

use crate::regalloc::assignment::{Assignment, Loc, Move, NO_REG};
use crate::Error;
use ursa_isel::abi::P_SCRATCH;

/// First register of the 32-bit region.
pub const R_BASE: u32 = 132;
/// First register of the pair region.
pub const PAIR_BASE: u32 = 4;
/// Registers per regalloc2 class that may be allocated (the 64th is scratch).
pub const ALLOCATABLE: usize = 63;
pub const P_ALLOCATABLE: usize = 6;

/// Every `.128` access of `vcode` as two `.64` accesses
/// ([`ursa_isel::rules::memory::split_quad`]), for regalloc2.
pub fn split_quads(vcode: &mut VCode) -> Result<(), Error> {
    if !vcode.has_quads {
        return Ok(());
    }
    for b in vcode.blocks.iter_mut() {
        if !b.insts.iter().any(|m| m.has_quad()) {
            continue;
        }
        let mut out = Vec::with_capacity(b.insts.len() + 2);
        for m in b.insts.drain(..) {
            if !m.has_quad() {
                out.push(m);
                continue;
            }
            let halves = ursa_isel::rules::memory::split_quad(&m)
                .ok_or_else(|| Error::unsupported(format!("a 128-bit access regalloc2 cannot split: {:?}", m.pieces[0].form().name())))?;
            out.extend(halves);
        }
        b.insts = out;
    }
    vcode.has_quads = false;
    Ok(())
}

/// Every 32-bit value an ABI operand fixes (an argument, a result, a
/// call's argument or result, in the low register of its slot's pair)
/// passed through a pair of its own: regalloc2 allocates pairs and single
/// registers in separate regions of the register file ([`PAIR_BASE`],
/// [`R_BASE`]), so a single register cannot be fixed where a slot is. A
/// fixed use reads a fresh pair written by a `MOV` into its low half just
/// before the instruction (the pair listed in [`VCode::abi_low_pairs`]:
/// nothing writes its high half); a fixed def writes a fresh pair, whose
/// low half a `MOV` after the instruction copies into the value. (The SSA
/// allocator takes the single registers as they are.)
pub fn pair_abi_values(vcode: &mut VCode) {
    use ursa_emit::forms::{self, MOV_R};
    for b in 0..vcode.blocks.len() {
        let insts = std::mem::take(&mut vcode.blocks[b].insts);
        let mut out = Vec::with_capacity(insts.len());
        for mut m in insts {
            let mut after = Vec::new();
            for k in 0..m.opnds.len() {
                let o = m.opnds[k];
                if o.fixed.is_none() || vcode.class(o.vreg) != Class::R || !matches!(o.kind, OpKind::Use | OpKind::Def) {
                    continue;
                }
                let p = vcode.new_vreg(Class::RPair);
                if o.kind == OpKind::Use {
                    out.push(Bundle::new().inst(forms::MOV_R).def(MOV_R::RD, p).use_(MOV_R::RB, o.vreg).build());
                    vcode.abi_low_pairs.push(p);
                } else {
                    after.push(Bundle::new().inst(forms::MOV_R).def(MOV_R::RD, o.vreg).use_(MOV_R::RB, p).build());
                }
                m.set_operand_vreg(k, p);
            }
            out.push(m);
            out.extend(after);
        }
        vcode.blocks[b].insts = out;
    }
}

pub fn rc(c: Class) -> RegClass {
    match c {
        Class::R => RegClass::Int,
        Class::RPair => RegClass::Float,
        Class::P => RegClass::Vector,
    }
}

/// The machine register number of an allocated physical register (the low
/// register of a pair).
pub fn preg_number(p: PReg) -> u32 {
    match p.class() {
        RegClass::Int => R_BASE + p.hw_enc() as u32,
        RegClass::Float => PAIR_BASE + 2 * p.hw_enc() as u32,
        RegClass::Vector => p.hw_enc() as u32,
    }
}

/// The physical register for a fixed ABI register number of a class.
pub fn preg_of(c: Class, n: u8) -> PReg {
    let n = n as usize;
    match c {
        Class::R => PReg::new(n - R_BASE as usize, RegClass::Int),
        Class::RPair => PReg::new((n - PAIR_BASE as usize) / 2, RegClass::Float),
        Class::P => PReg::new(n, RegClass::Vector),
    }
}

pub fn machine_env() -> MachineEnv {
    let mut pref = [PRegSet::empty(), PRegSet::empty(), PRegSet::empty()];
    for i in 0..ALLOCATABLE {
        pref[0].add(PReg::new(i, RegClass::Int));
        pref[1].add(PReg::new(i, RegClass::Float));
    }
    for i in 0..P_ALLOCATABLE {
        pref[2].add(PReg::new(i, RegClass::Vector));
    }
    MachineEnv {
        preferred_regs_by_class: pref,
        non_preferred_regs_by_class: [PRegSet::empty(), PRegSet::empty(), PRegSet::empty()],
        scratch_by_class: [
            Some(PReg::new(63, RegClass::Int)),
            Some(PReg::new(63, RegClass::Float)),
            Some(PReg::new(P_SCRATCH as usize, RegClass::Vector)),
        ],
        fixed_stack_slots: Vec::new(),
    }
}

/// All allocatable registers: what a call clobbers.
fn all_allocatable() -> PRegSet {
    let env = machine_env();
    let mut s = PRegSet::empty();
    for c in env.preferred_regs_by_class.iter() {
        s.union_from(*c);
    }
    s
}

/// The VCode seen through regalloc2's `Function` trait.
pub struct RaFunc<'a> {
    pub vcode: &'a VCode,
    /// (block, index in block) of each flat instruction.
    pub insts: Vec<(u32, u32)>,
    ranges: Vec<InstRange>,
    /// Instruction i's operands are `operands[op_at[i]..op_at[i + 1]]`.
    operands: Vec<Operand>,
    op_at: Vec<u32>,
    clobbers: Vec<PRegSet>,
    /// Block b's successors are `succs[succ_at[b]..succ_at[b + 1]]`, and
    /// likewise its predecessors and parameters (flat tables, not a vector
    /// per block).
    succs: Vec<ra::Block>,
    succ_at: Vec<u32>,
    preds: Vec<ra::Block>,
    pred_at: Vec<u32>,
    params: Vec<ra::VReg>,
    param_at: Vec<u32>,
    /// The arguments instruction i passes to its successor k are
    /// `branch_args[arg_at[j]..arg_at[j + 1]]` with j = `args_of[i] + k`.
    branch_args: Vec<ra::VReg>,
    arg_at: Vec<u32>,
    args_of: Vec<u32>,
}

fn vreg(vcode: &VCode, v: ursa_isel::vcode::VReg) -> ra::VReg {
    ra::VReg::new(v.0 as usize, rc(vcode.class(v)))
}

impl<'a> RaFunc<'a> {
    pub fn new(vcode: &'a VCode) -> RaFunc<'a> {
        let clobber_all = all_allocatable();
        let n: usize = vcode.blocks.iter().map(|b| b.insts.len()).sum();
        let nb = vcode.blocks.len();
        let mut f = RaFunc {
            vcode,
            insts: Vec::with_capacity(n),
            ranges: Vec::with_capacity(nb),
            operands: Vec::with_capacity(3 * n),
            op_at: Vec::with_capacity(n + 1),
            clobbers: Vec::with_capacity(n),
            succs: Vec::with_capacity(2 * nb),
            succ_at: Vec::with_capacity(nb + 1),
            preds: Vec::with_capacity(2 * nb),
            pred_at: Vec::with_capacity(nb + 1),
            params: Vec::new(),
            param_at: Vec::with_capacity(nb + 1),
            branch_args: Vec::new(),
            arg_at: vec![0],
            args_of: Vec::with_capacity(n),
        };
        for (bi, b) in vcode.blocks.iter().enumerate() {
            let start = f.insts.len();
            for (ii, m) in b.insts.iter().enumerate() {
                f.insts.push((bi as u32, ii as u32));
                f.op_at.push(f.operands.len() as u32);
                let ops = &mut f.operands;
                let mut fixed_defs = PRegSet::empty();
                for o in m.opnds.iter() {
                    let v = vreg(vcode, o.vreg);
                    let class = vcode.class(o.vreg);
                    let op = match (o.kind, o.fixed) {
                        (OpKind::Use, None) => Operand::reg_use(v),
                        (OpKind::Use, Some(n)) => Operand::reg_fixed_use(v, preg_of(class, n)),
                        (OpKind::Def, None) => Operand::reg_def(v),
                        (OpKind::Def, Some(n)) | (OpKind::EarlyDef, Some(n)) => {
                            fixed_defs.add(preg_of(class, n));
                            Operand::reg_fixed_def(v, preg_of(class, n))
                        }
                        (OpKind::EarlyDef, None) => Operand::reg_def_at_start(v),
                        (OpKind::Temp, None) => Operand::reg_temp(v),
                        (OpKind::Temp, Some(n)) => Operand::reg_fixed_def_at_start(v, preg_of(class, n)),
                        (OpKind::Reuse(k), None) => Operand::reg_reuse_def(v, k as usize),
                        (OpKind::Reuse(_), Some(n)) => Operand::reg_fixed_def(v, preg_of(class, n)),
                    };
                    ops.push(op);
                }
                let mut cl = PRegSet::empty();
                if m.clobbers_all {
                    cl = clobber_all;
                    for p in fixed_defs {
                        cl.remove(p);
                    }
                }
                f.clobbers.push(cl);
                f.args_of.push(f.arg_at.len() as u32 - 1);
                for a in m.args().iter() {
                    f.branch_args.extend(a.iter().map(|&v| vreg(vcode, v)));
                    f.arg_at.push(f.branch_args.len() as u32);
                }
            }
            f.ranges.push(InstRange::new(ra::Inst::new(start), ra::Inst::new(f.insts.len())));
            f.succ_at.push(f.succs.len() as u32);
            f.succs.extend(b.succs.iter().map(|s| ra::Block::new(s.0 as usize)));
            f.pred_at.push(f.preds.len() as u32);
            f.preds.extend(b.preds.iter().map(|s| ra::Block::new(s.0 as usize)));
            f.param_at.push(f.params.len() as u32);
            f.params.extend(b.params.iter().map(|&v| vreg(vcode, v)));
        }
        f.op_at.push(f.operands.len() as u32);
        f.succ_at.push(f.succs.len() as u32);
        f.pred_at.push(f.preds.len() as u32);
        f.param_at.push(f.params.len() as u32);
        f
    }

    pub fn minst(&self, i: ra::Inst) -> &ursa_isel::vcode::MInst {
        let (b, k) = self.insts[i.index()];
        &self.vcode.blocks[b as usize].insts[k as usize]
    }
}

impl ra::Function for RaFunc<'_> {
    fn num_insts(&self) -> usize {
        self.insts.len()
    }
    fn num_blocks(&self) -> usize {
        self.vcode.blocks.len()
    }
    fn entry_block(&self) -> ra::Block {
        ra::Block::new(0)
    }
    fn block_insns(&self, block: ra::Block) -> InstRange {
        self.ranges[block.index()]
    }
    fn block_succs(&self, block: ra::Block) -> &[ra::Block] {
        let b = block.index();
        &self.succs[self.succ_at[b] as usize..self.succ_at[b + 1] as usize]
    }
    fn block_preds(&self, block: ra::Block) -> &[ra::Block] {
        let b = block.index();
        &self.preds[self.pred_at[b] as usize..self.pred_at[b + 1] as usize]
    }
    fn block_params(&self, block: ra::Block) -> &[ra::VReg] {
        let b = block.index();
        &self.params[self.param_at[b] as usize..self.param_at[b + 1] as usize]
    }
    fn is_ret(&self, insn: ra::Inst) -> bool {
        matches!(self.minst(insn).pseudo, Pseudo::Ret | Pseudo::Exit | Pseudo::Trap { .. } | Pseudo::TailCall { .. })
    }
    fn is_branch(&self, insn: ra::Inst) -> bool {
        matches!(self.minst(insn).pseudo, Pseudo::Jump | Pseudo::Brif { .. } | Pseudo::Table)
    }
    fn branch_blockparams(&self, _block: ra::Block, insn: ra::Inst, succ_idx: usize) -> &[ra::VReg] {
        let i = insn.index();
        let j = self.args_of[i] as usize + succ_idx;
        // A successor without an argument list passes nothing.
        let end = self.args_of.get(i + 1).map_or(self.arg_at.len() - 1, |&e| e as usize);
        if j >= end {
            return &[];
        }
        &self.branch_args[self.arg_at[j] as usize..self.arg_at[j + 1] as usize]
    }
    fn inst_operands(&self, insn: ra::Inst) -> &[Operand] {
        let i = insn.index();
        &self.operands[self.op_at[i] as usize..self.op_at[i + 1] as usize]
    }
    fn inst_clobbers(&self, insn: ra::Inst) -> PRegSet {
        self.clobbers[insn.index()]
    }
    fn num_vregs(&self) -> usize {
        self.vcode.classes.len()
    }
    fn spillslot_size(&self, regclass: RegClass) -> usize {
        match regclass {
            RegClass::Float => 2,
            _ => 1,
        }
    }
}

/// Instructions from which a function is allocated in linear time, its
/// spill slots in memory (see the module's text). Far above any function
/// of the conformance tests and examples, whose code this leaves alone.
pub const LINEAR_FROM: usize = 4096;

/// Allocates; with `check`, regalloc2's checker verifies the result.
pub fn assign_regs_regalloc2(func: &RaFunc, check: bool) -> Result<Assignment, Error> {
    let env = machine_env();
    let linear = func.insts.len() >= LINEAR_FROM;
    let algorithm = if linear { ra::Algorithm::Fastalloc } else { ra::Algorithm::Ion };
    let opts = RegallocOptions { verbose_log: false, validate_ssa: cfg!(debug_assertions) || check, algorithm };
    // regalloc2's working tables are kept per thread and reused, as
    // Cranelift keeps them in its `Context` (the output is read there).
    thread_local! {
        static CTX: std::cell::RefCell<ra::Ctx> = std::cell::RefCell::new(ra::Ctx::default());
    }
    CTX.with(|ctx| {
        let mut ctx = ctx.borrow_mut();
        ra::run_with_ctx(func, &env, &opts, &mut ctx).map_err(|e| Error::internal(format!("register allocation failed: {:?}", e)))?;
        if check {
            let mut checker = ra::checker::Checker::new(func, &env);
            checker.prepare(&ctx.output);
            checker.run().map_err(|e| Error::internal(format!("regalloc2's checker rejects the allocation: {:?}", e)))?;
        }
        Ok(Assignment { slots_in_memory: linear, ..assignment(func, &ctx.output) })
    })
}

/// regalloc2's result as an [`Assignment`]: operand registers by machine
/// number, each edit a move at its program point.
fn assignment(func: &RaFunc, output: &ra::Output) -> Assignment {
    let n = func.insts.len();
    let mut a = Assignment {
        regs: Vec::with_capacity(output.allocs.len()),
        op_at: Vec::with_capacity(n + 1),
        moves: Vec::with_capacity(output.edits.len()),
        move_at: Vec::with_capacity(2 * n + 1),
        num_spillslots: output.num_spillslots,
        ssa: false,
        dense: false,
        slots_in_memory: false,
    };
    for i in 0..n {
        a.op_at.push(a.regs.len() as u32);
        a.regs.extend(output.inst_allocs(ra::Inst::new(i)).iter().map(|al| al.as_reg().map_or(NO_REG, preg_number)));
    }
    a.op_at.push(a.regs.len() as u32);
    let loc = |al: Allocation| match (al.as_reg(), al.as_stack()) {
        (Some(r), _) => Loc::Reg(preg_number(r)),
        (None, Some(s)) => Loc::Slot(s.index() as u32),
        (None, None) => Loc::Reg(NO_REG),
    };
    let class = |al: Allocation| match al.as_reg()?.class() {
        RegClass::Int => Some(Class::R),
        RegClass::Float => Some(Class::RPair),
        RegClass::Vector => Some(Class::P),
    };
    // The edits are sorted by program point.
    let mut edits = output.edits.iter().peekable();
    a.move_at.push(0);
    for p in 0..2 * n {
        while let Some((pp, Edit::Move { from, to })) = edits.next_if(|(pp, _)| point(*pp) == p) {
            let _ = pp;
            let c = class(*from).or(class(*to)).unwrap_or(Class::R);
            a.moves.push(Move { class: c, from: loc(*from), to: loc(*to) });
        }
        a.move_at.push(a.moves.len() as u32);
    }
    a
}

/// The number of a program point: 2i before instruction i, 2i + 1 after it.
fn point(p: ra::ProgPoint) -> usize {
    2 * p.inst().index() + (p.pos() == ra::InstPosition::After) as usize
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::regalloc::check_assignment::check_assignment;
    use ursa_emit::forms::{self, MOV_R};
    use ursa_isel::vcode::{BlockId, MInst, VBlock, VReg};

    fn block(insts: Vec<MInst>) -> VBlock {
        VBlock { params: Vec::new(), insts, succs: Vec::<BlockId>::new().into(), preds: Vec::<BlockId>::new().into(), clif: None }
    }

    fn mov(d: VReg, s: VReg) -> MInst {
        Bundle::new().inst(forms::MOV_R).def(MOV_R::RD, d).use_(MOV_R::RB, s).build()
    }

    /// Two i32 arguments returned exchanged, each a 32-bit value fixed in
    /// the low register of its slot.
    fn swapped_results() -> VCode {
        let mut v = VCode::default();
        let (a, b, link) = (v.new_vreg(Class::R), v.new_vreg(Class::R), v.new_vreg(Class::RPair));
        let (x, y) = (v.new_vreg(Class::R), v.new_vreg(Class::R));
        let args = Bundle::pseudo(Pseudo::Args).fixed(a, OpKind::Def, 4).fixed(b, OpKind::Def, 6).fixed(link, OpKind::Def, 20).build();
        let ret = Bundle::pseudo(Pseudo::Ret).fixed(y, OpKind::Use, 4).fixed(x, OpKind::Use, 6).fixed(link, OpKind::Use, 20).build();
        v.blocks.push(block(vec![args, mov(x, a), mov(y, b), ret]));
        v
    }

    #[test]
    fn a_32_bit_abi_value_reaches_regalloc2_through_a_pair() {
        let mut v = swapped_results();
        pair_abi_values(&mut v);
        // Every fixed operand a pair; the results' pairs listed.
        let fixed: Vec<Class> =
            v.blocks[0].insts.iter().flat_map(|m| m.opnds.iter()).filter(|o| o.fixed.is_some()).map(|o| v.class(o.vreg)).collect();
        assert!(fixed.iter().all(|&c| c == Class::RPair), "{:?}", fixed);
        assert_eq!(v.abi_low_pairs.len(), 2);
        assert_eq!(v.blocks[0].insts.len(), 4 + 4, "a MOV per 32-bit ABI operand");
        let asg = assign_regs_regalloc2(&RaFunc::new(&v), true).unwrap();
        check_assignment(&v, &asg).unwrap();
    }

    #[test]
    fn a_listed_pair_whose_high_half_is_written_is_refused() {
        let mut v = swapped_results();
        pair_abi_values(&mut v);
        // The first result's MOV into its pair also writes the high half.
        let p = v.abi_low_pairs[0];
        let insts = &mut v.blocks[0].insts;
        let at = insts.iter().position(|m| m.opnds.iter().any(|o| o.vreg == p && o.kind == OpKind::Def)).unwrap();
        let src = insts[at].opnds.iter().find(|o| o.kind == OpKind::Use).unwrap().vreg;
        insts[at] = Bundle::new()
            .inst(forms::MOV_R)
            .def(MOV_R::RD, p)
            .use_(MOV_R::RB, src)
            .inst(forms::MOV_R)
            .def_hi(MOV_R::RD, p)
            .use_(MOV_R::RB, src)
            .build();
        let asg = assign_regs_regalloc2(&RaFunc::new(&v), true).unwrap();
        let e = check_assignment(&v, &asg).unwrap_err().to_string();
        assert!(e.contains("carries a 32-bit ABI value, but an instruction writes its high half"), "{}", e);
    }
}
