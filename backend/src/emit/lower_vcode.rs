//! From allocated VCode to machine instructions: register numbers written
//! into the operand fields, the allocator's moves, spills and reloads made
//! real, pseudo-instructions expanded (prologue, epilogue, branches, jump
//! tables, traps), the whole function laid out as [`Code`].

use ursa_emit::{forms, FormId, Inst};
use ursa_isel::abi;
use ursa_isel::vcode::{BlockId, Class, MInst, OpKind, Pseudo, VCode};

use crate::ir::code::{Code, Implicit, Item};
use crate::regalloc::assignment::SlotHomes;
use crate::regalloc::assignment::{Assignment, Loc, Move, NO_REG};
use crate::Error;
use ursa_emit::forms::{BPT_I, BRA_I, BRA_R, IADD_RI, ISETP_RI, LDL_RI, MOV_R, PLOP3_X, RET_R, SEL_RI, STL_RIR, UBRA_I};
use ursa_emit::mods;
use ursa_emit::typed::{P, R, UP};
use ursa_isel::abi::{P_SCRATCH, SPILL_SCRATCH};

fn inst(form: FormId) -> Inst {
    Inst::new(form)
}

/// The general registers of the fixed (ABI) operands of `m`: (reads, writes).
fn fixed_regs(vcode: &VCode, m: &MInst) -> Implicit {
    let mut imp = Implicit::default();
    // Room for every fixed register read (a return of sixteen lanes names
    // dozens), at most two each.
    imp.reads.reserve(2 * m.opnds.iter().filter(|o| o.fixed.is_some() && o.kind == OpKind::Use).count());
    for o in m.opnds.iter() {
        let Some(n) = o.fixed else { continue };
        let regs: &[u32] = match vcode.class(o.vreg) {
            Class::R => &[n as u32],
            Class::RPair => &[n as u32, n as u32 + 1],
            Class::P => &[],
        };
        match o.kind {
            OpKind::Use => imp.reads.extend_from_slice(regs),
            OpKind::Def | OpKind::EarlyDef | OpKind::Temp | OpKind::Reuse(_) => imp.writes.extend_from_slice(regs),
        }
    }
    imp
}

fn iadd_imm(d: u32, a: u32, k: i64) -> Inst {
    let mut i = inst(forms::IADD_RI);
    i.set(IADD_RI::RD, R(d as u8));
    i.set(IADD_RI::RA, R(a as u8));
    i.set(IADD_RI::VB, k as u32 as u64);
    i
}

fn mov(d: u32, s: u32) -> Inst {
    let mut i = inst(forms::MOV_R);
    i.set_reg_unchecked(MOV_R::RD, d);
    i.set_reg_unchecked(MOV_R::RB, s);
    i
}

/// `ISETP.<compop>.U32.AND pu, PT, ra, k, PT`.
fn isetp_u32_imm(compop: mods::CompOp, pu: u32, ra: u32, k: u32) -> Inst {
    let mut s = inst(forms::ISETP_RI);
    s.set(ISETP_RI::COMPOP, compop);
    s.set(ISETP_RI::BOOLOP, mods::BoolOp::AND);
    s.set(ISETP_RI::ITYPE, mods::IType::U32);
    s.set(ISETP_RI::PU, P(pu as u8));
    s.set_reg_unchecked(ISETP_RI::RA, ra);
    s.set(ISETP_RI::VB, k as u64);
    s.set(ISETP_RI::PP, P::T);
    s
}

fn bra(target: BlockId, guard: Option<(u32, bool)>) -> Item {
    let mut i = inst(forms::BRA_I);
    if let Some((p, neg)) = guard {
        i.set(BRA_I::PG, P(p as u8));
        i.set(BRA_I::PG_NOT, neg);
    }
    Item::new(i).to(target)
}

/// `@{!}UPn UBRA target`: the branch on a uniform predicate.
fn ubra(target: BlockId, (p, neg): (u32, bool)) -> Item {
    let mut i = inst(forms::UBRA_I);
    i.set(UBRA_I::UPG, UP(p as u8));
    i.set(UBRA_I::UPG_NOT, neg);
    Item::new(i).to(target)
}

/// Local-memory address of spill slot `slot` (in memory), after the
/// function's own stack slots.
fn spill_offset(code_slots: u32, slot: usize, homes: &SlotHomes) -> u32 {
    code_slots + homes.offset(slot)
}

/// `SEL rd, RZ, 0x1, !p`: a predicate as 0 or 1 in a general register.
fn pred_to_reg(rd: u32, p: u32) -> Inst {
    let mut s = inst(forms::SEL_RI);
    s.set_reg_unchecked(SEL_RI::RD, rd);
    s.set(SEL_RI::RA, R::Z);
    s.set(SEL_RI::VB, 1);
    s.set(SEL_RI::PP, P(p as u8));
    s.set(SEL_RI::PP_NOT, true);
    s
}

/// The instructions of one allocator move. A spill slot is a register
/// (`SlotHomes`: a move) or local memory (a store or a load).
fn emit_move(out: &mut Vec<Item>, mv: &Move, slots_size: u32, homes: &SlotHomes) -> Result<(), Error> {
    let Move { class, from, to } = *mv;
    // A slot's register, or the register itself.
    let reg = |a: Loc| match a {
        Loc::Reg(n) => Some(n),
        Loc::Slot(s) => homes.reg(s as usize),
    };
    if let (Some(f), Some(t)) = (reg(from), reg(to)) {
        match class {
            Class::R => out.push(Item::new(mov(t, f))),
            Class::RPair => {
                out.push(Item::new(mov(t, f)));
                out.push(Item::new(mov(t + 1, f + 1)));
            }
            // A predicate kept in a general register is 0 or 1.
            Class::P if to.slot().is_some() => out.push(Item::new(pred_to_reg(t, f))),
            Class::P if from.slot().is_some() => out.push(Item::new(isetp_u32_imm(mods::CompOp::NE, t, f, 0))),
            Class::P => {
                let mut i = inst(forms::PLOP3_X);
                i.set(PLOP3_X::PU, P(t as u8));
                i.set(PLOP3_X::PA, P(f as u8));
                i.set(PLOP3_X::PB, P::T);
                i.set(PLOP3_X::PC, P::T);
                i.set(PLOP3_X::LUT, 0xF0);
                out.push(Item::new(i));
            }
        }
        return Ok(());
    }
    match (from, to) {
        (Loc::Reg(f), Loc::Slot(slot)) => {
            let off = spill_offset(slots_size, slot as usize, homes);
            let src = if class == Class::P {
                out.push(Item::new(pred_to_reg(SPILL_SCRATCH, f)));
                SPILL_SCRATCH
            } else {
                f
            };
            let mut i = inst(forms::STL_RIR);
            i.set(STL_RIR::RA, R(abi::SP as u8));
            i.set(STL_RIR::OFS, off as u64);
            i.set(STL_RIR::RB, R(src as u8));
            if class == Class::RPair {
                i.set(STL_RIR::DTYPE, mods::MEMDType::_64);
            }
            out.push(Item::new(i));
        }
        (Loc::Slot(slot), Loc::Reg(t)) => {
            let off = spill_offset(slots_size, slot as usize, homes);
            let mut i = inst(forms::LDL_RI);
            i.set(LDL_RI::RD, R(if class == Class::P { SPILL_SCRATCH } else { t } as u8));
            i.set(LDL_RI::RA, R(abi::SP as u8));
            i.set(LDL_RI::OFS, off as u64);
            if class == Class::RPair {
                i.set(LDL_RI::DTYPE, mods::MEMDType::_64);
            }
            out.push(Item::new(i));
            if class == Class::P {
                out.push(Item::new(isetp_u32_imm(mods::CompOp::NE, t, SPILL_SCRATCH, 0)));
            }
        }
        _ => return Err(Error::internal(format!("a move from one spill slot to another ({:?})", mv))),
    }
    Ok(())
}

/// A plain copy `MOV Rd, Rb` whose two registers are one (after an
/// allocation on SSA code gave a copy's two sides one register).
pub(crate) fn is_self_copy(i: &Inst) -> bool {
    i.form() == forms::MOV_R && i.get_at(MOV_R::RD.index as usize) == i.get_at(MOV_R::RB.index as usize) && !i.is_guarded()
}

/// Lays out the allocated function as machine instructions, each spill slot
/// where `homes` puts it.
pub fn lower_vcode(vcode: &VCode, asg: &Assignment, homes: &SlotHomes) -> Result<Code, Error> {
    let mut l = Layout::new(vcode, asg, homes);
    let mut flat = 0usize;
    for b in 0..vcode.blocks.len() {
        l.starts.push((l.items.len(), b as u32));
        let next = BlockId(b as u32 + 1);
        for m in vcode.blocks[b].insts.iter() {
            l.moves(2 * flat)?;
            let first = l.items.len();
            l.inst(m, flat, b, next)?;
            if m.origin.is_some() {
                // What the instruction became inline (its out-of-line part
                // keeps the origin in `cold`).
                for it in l.items.iter_mut().skip(first) {
                    it.origin = m.origin;
                }
            }
            l.moves(2 * flat + 1)?;
            flat += 1;
        }
    }
    Ok(l.finish())
}

/// The state of laying out one function.
struct Layout<'a> {
    vcode: &'a VCode,
    asg: &'a Assignment,
    homes: &'a SlotHomes,
    frame_size: u32,
    /// How far `R1` moves down at the entry (and back at the exits): the
    /// frame, or 0 where the function calls nothing and has no stack slot
    /// or spill slot in memory. Its only frame-relative accesses, of the
    /// stack-passed arguments and results, are then made from the entry
    /// `R1` (`docs/abi.md`).
    sp_delta: u32,
    items: Vec<Item>,
    /// Block starts as (item index, label): labels below the number of VCode
    /// blocks are those blocks, the others join points and cold blocks of
    /// out-of-line bundle parts (renumbered in layout order at the end).
    starts: Vec<(usize, u32)>,
    next_label: u32,
    /// The out-of-line parts, laid out after the last block: (cold block
    /// label, pieces, join label, the CLIF instruction they come from).
    cold: Vec<(u32, Vec<Inst>, u32, Option<u32>)>,
    dropped_copies: usize,
}

/// The register allocated to operand `k` of the `i`th instruction (in
/// block `b`), of its registers `allocs`.
fn reg_of(allocs: &[u32], k: usize, (i, b): (usize, usize)) -> Result<u32, Error> {
    allocs
        .get(k)
        .copied()
        .filter(|&r| r != NO_REG)
        .ok_or_else(|| Error::internal(format!("operand {} of instruction {} (in block{}) is not in a register", k, i, b)))
}

impl<'a> Layout<'a> {
    fn new(vcode: &'a VCode, asg: &'a Assignment, homes: &'a SlotHomes) -> Self {
        // The incoming stack arguments sit at the top of the frame, just below
        // the stack pointer at entry (`docs/abi.md`).
        let own = (vcode.slots_size + homes.memory_bytes() + 15) & !15;
        let frame_size = own + ((vcode.incoming_bytes + 15) & !15);
        let sp_delta = if own == 0 && !vcode.makes_calls { 0 } else { frame_size };
        Layout {
            vcode,
            asg,
            homes,
            frame_size,
            sp_delta,
            // Room for every piece, two per move (a pair's words) and a
            // branch per block: laying out seldom grows (and moves) `items`.
            items: Vec::with_capacity(
                vcode.blocks.iter().map(|b| b.insts.iter().map(|m| m.pieces.len()).sum::<usize>() + 1).sum::<usize>() + 2 * asg.moves.len(),
            ),
            starts: Vec::with_capacity(vcode.blocks.len() + 1),
            next_label: vcode.blocks.len() as u32,
            cold: Vec::new(),
            dropped_copies: 0,
        }
    }

    /// The allocator's moves at program point `p` (most points have none).
    #[inline(always)]
    fn moves(&mut self, p: usize) -> Result<(), Error> {
        for mv in self.asg.moves_at(p) {
            emit_move(&mut self.items, mv, self.vcode.slots_size, self.homes)?;
        }
        Ok(())
    }

    /// Instruction `m`, the `i`th of the function, in block `b` followed by `next`.
    #[inline]
    fn inst(&mut self, m: &MInst, i: usize, b: usize, next: BlockId) -> Result<(), Error> {
        let allocs = self.asg.operand_regs(i);
        let at = (i, b);
        match &m.pseudo {
            Pseudo::None | Pseudo::Call | Pseudo::FrameRel { .. } => self.pieces(m, allocs, at)?,
            Pseudo::Args => self.move_sp(-(self.sp_delta as i64)),
            Pseudo::Ret => {
                self.move_sp(self.sp_delta as i64);
                let mut r = inst(forms::RET_R);
                r.set(RET_R::RA, R(abi::LINK as u8));
                let mut implicit = fixed_regs(self.vcode, m);
                implicit.reads.push(abi::SP as u32);
                self.items.push(Item::new(r).using(implicit));
            }
            Pseudo::TailCall { stack, indirect } => self.tail_call(m, allocs, at, *stack as usize, *indirect)?,
            Pseudo::Exit => {
                self.move_sp(self.sp_delta as i64);
                self.items.push(Item::new(inst(forms::EXIT_X)));
            }
            Pseudo::Trap { code } => {
                let mut t = inst(forms::BPT_I);
                t.set(BPT_I::MODE, mods::BptMode::TRAP);
                t.set(BPT_I::CODE, *code as u64);
                self.items.push(Item::new(t));
            }
            Pseudo::Jump => self.jump(m.targets()[0], next),
            Pseudo::Brif { negate, uniform } => {
                // A per-lane `@P BRA` or a uniform `@UP UBRA`.
                let cond = |g: (u32, bool), to: BlockId| match uniform {
                    Some(_) => ubra(to, g),
                    None => bra(to, Some(g)),
                };
                let p = match uniform {
                    Some(u) => *u as u32,
                    None => reg_of(allocs, 0, at)?,
                };
                let (t, e) = (m.targets()[0], m.targets()[1]);
                if t == next {
                    self.items.push(cond((p, !negate), e));
                } else {
                    self.items.push(cond((p, *negate), t));
                    self.jump(e, next);
                }
            }
            Pseudo::Table => {
                // targets[0] is the default, targets[1 + k] entry k
                // (Cranelift's order of a jump table's branches).
                let idx = reg_of(allocs, 0, at)?;
                for (k, &t) in m.targets()[1..].iter().enumerate() {
                    self.items.push(Item::new(isetp_u32_imm(mods::CompOp::EQ, P_SCRATCH, idx, k as u32)));
                    self.items.push(bra(t, Some((P_SCRATCH, false))));
                }
                self.jump(m.targets()[0], next);
            }
        }
        Ok(())
    }

    /// `IADD R1, R1, delta` where `R1` moves ([`Layout::sp_delta`]).
    fn move_sp(&mut self, delta: i64) {
        if self.sp_delta > 0 {
            self.items.push(Item::new(iadd_imm(abi::SP as u32, abi::SP as u32, delta)));
        }
    }

    /// A `BRA` to `to` unless it is the block that follows.
    fn jump(&mut self, to: BlockId, next: BlockId) {
        if to != next {
            self.items.push(bra(to, None));
        }
    }

    /// The pieces of a plain instruction, a call or a frame-relative access,
    /// their register fields (and frame offset) filled in; a copy whose two
    /// sides got one register dropped; an out-of-line tail set aside.
    #[inline]
    fn pieces(&mut self, m: &MInst, allocs: &[u32], at: (usize, usize)) -> Result<(), Error> {
        // The pieces go straight into `items` and are patched there.
        let base = self.items.len();
        let last = m.pieces.len().saturating_sub(1);
        for (k, p) in m.pieces.iter().enumerate() {
            self.items.push(Item::new(p.clone()));
            if m.cold_from.is_none() {
                let it = self.items.last_mut().unwrap();
                it.call = m.sym().filter(|s| s.piece as usize == k).map(|s| s.symbol.clone());
                it.predicated = m.predicated;
                if m.pseudo == Pseudo::Call && k == last {
                    it.implicit = fixed_regs(self.vcode, m);
                }
            }
        }
        let placed = &mut self.items[base..];
        if let Pseudo::FrameRel { offset } = m.pseudo {
            placed[0].inst.set([LDL_RI::OFS, STL_RIR::OFS], abi::ofs_field(self.sp_delta as i64 + offset as i64));
        }
        for fx in m.fixups.iter() {
            if fx.hi && self.vcode.has_quads && m.is_quad_hi(fx) {
                // The field holds the quad's base, the low pair's register.
                continue;
            }
            let r = reg_of(allocs, fx.opnd as usize, at)? + fx.hi as u32;
            placed[fx.piece as usize].inst.set_at(fx.field as usize, r as u64);
        }
        if self.asg.ssa && placed.len() == 1 && m.pseudo == Pseudo::None && is_self_copy(&placed[0].inst) {
            self.items.pop();
            self.dropped_copies += 1;
        }
        if let Some(k) = m.cold_from {
            self.out_of_line(base + k as usize, base, m.origin)?;
        }
        Ok(())
    }

    /// The items from `k` on (of an instruction starting at `base`) go out
    /// of line: the inline part ends with the guarded branch to the cold
    /// block, and the join point starts a new block.
    fn out_of_line(&mut self, k: usize, base: usize, origin: Option<u32>) -> Result<(), Error> {
        let (cold_id, join_id) = (self.next_label, self.next_label + 1);
        self.next_label += 2;
        let rest: Vec<Inst> = self.items.drain(k..).map(|it| it.inst).collect();
        if self.items.len() == base {
            return Err(Error::internal("an out-of-line part without its branch"));
        }
        self.items.last_mut().unwrap().target = Some(BlockId(cold_id));
        self.starts.push((self.items.len(), join_id));
        self.cold.push((cold_id, rest, join_id, origin));
        Ok(())
    }

    /// A tail call: the stack arguments (all in registers now) into the
    /// callee's area below the entry stack pointer, the frame freed, then
    /// the jump.
    fn tail_call(&mut self, m: &MInst, allocs: &[u32], at: (usize, usize), stack: usize, indirect: bool) -> Result<(), Error> {
        let n = m.opnds.len();
        let first = n - stack - indirect as usize;
        for j in 0..stack {
            let r = reg_of(allocs, first + j, at)?;
            let mut s = inst(forms::STL_RIR);
            s.set(STL_RIR::RA, R(abi::SP as u8));
            let ofs = self.sp_delta as i64 + abi::stack_arg_offset(j, stack) as i64;
            s.set(STL_RIR::OFS, abi::ofs_field(ofs));
            s.set(STL_RIR::RB, R(r as u8));
            if self.vcode.class(m.opnds[first + j].vreg) == Class::RPair {
                s.set(STL_RIR::DTYPE, mods::MEMDType::_64);
            }
            self.items.push(Item::new(s));
        }
        self.move_sp(self.sp_delta as i64);
        let mut implicit = fixed_regs(self.vcode, m);
        implicit.reads.push(abi::SP as u32);
        let jump = if indirect {
            let mut b = inst(forms::BRA_R);
            b.set(BRA_R::RA, R(reg_of(allocs, n - 1, at)? as u8));
            Item::new(b)
        } else {
            let sym = m.sym().ok_or_else(|| Error::internal("a tail call without a callee"))?.symbol.clone();
            Item::new(inst(forms::BRA_I)).calling(Some(sym))
        };
        self.items.push(jump.using(implicit));
        Ok(())
    }

    /// The code: the cold blocks after the last block, each ending with its
    /// branch back; the blocks numbered in layout order.
    fn finish(mut self) -> Code {
        let nblocks = self.vcode.blocks.len();
        for (id, pieces, join, origin) in std::mem::take(&mut self.cold) {
            self.starts.push((self.items.len(), id));
            self.items.extend(pieces.into_iter().map(|p| Item::new(p).from_clif(origin)));
            self.items.push(bra(BlockId(join), None).from_clif(origin));
        }
        let Layout { frame_size, mut items, mut starts, next_label, dropped_copies, .. } = self;
        if next_label as usize == nblocks {
            let block_start = starts.into_iter().map(|(s, _)| s).collect();
            return Code { items, block_start, vblocks: Vec::new(), frame_size, dropped_copies };
        }
        starts.sort_by_key(|&(s, _)| s);
        let mut new_id = vec![0u32; next_label as usize];
        for (k, &(_, label)) in starts.iter().enumerate() {
            new_id[label as usize] = k as u32;
        }
        for it in items.iter_mut() {
            if let Some(t) = it.target {
                it.target = Some(BlockId(new_id[t.0 as usize]));
            }
        }
        let block_start = starts.into_iter().map(|(s, _)| s).collect();
        let vblocks = (0..nblocks).map(|b| new_id[b] as usize).collect();
        Code { items, block_start, vblocks, frame_size, dropped_copies }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::code::testing::text;
    use crate::regalloc::assign_regs_regalloc2::{assign_regs_regalloc2, RaFunc};
    use ursa_isel::vcode::{Bundle, VBlock};

    /// regalloc2's register k of a class, by machine number (Int: R(132 + k),
    /// Float: R(4 + 2k), Vector: Pk).
    #[derive(Clone, Copy)]
    enum RegClass {
        Int,
        Float,
        Vector,
    }
    fn reg(k: usize, c: RegClass) -> (Option<Class>, Loc) {
        match c {
            RegClass::Int => (Some(Class::R), Loc::Reg(132 + k as u32)),
            RegClass::Float => (Some(Class::RPair), Loc::Reg(4 + 2 * k as u32)),
            RegClass::Vector => (Some(Class::P), Loc::Reg(k as u32)),
        }
    }
    fn slot(s: usize) -> (Option<Class>, Loc) {
        (None, Loc::Slot(s as u32))
    }
    /// The code of one allocator move, the function's own slots taking 16 bytes.
    fn lower_move(from: (Option<Class>, Loc), to: (Option<Class>, Loc), homes: &SlotHomes) -> Code {
        let mut items = Vec::new();
        let class = from.0.or(to.0).unwrap();
        emit_move(&mut items, &Move { class, from: from.1, to: to.1 }, 16, homes).unwrap();
        Code { items, block_start: vec![0], vblocks: Vec::new(), frame_size: 0, dropped_copies: 0 }
    }
    /// A register field of the only instruction of `c`.
    fn field(c: &Code, k: usize, name: &str) -> u64 {
        let i = &c.items[k].inst;
        i.get_at(i.def().field_index(name).unwrap())
    }

    #[test]
    fn moves_between_registers_of_each_class() {
        let none = SlotHomes::new(Vec::new(), |_| false);
        // Int register k is R(132 + k); Float register k the pair R[4+2k : 5+2k].
        assert_eq!(text(&lower_move(reg(0, RegClass::Int), reg(3, RegClass::Int), &none)), ["MOV R135, R132"]);
        assert_eq!(text(&lower_move(reg(1, RegClass::Float), reg(0, RegClass::Float), &none)), ["MOV R4, R6", "MOV R5, R7"]);
        let p = lower_move(reg(2, RegClass::Vector), reg(5, RegClass::Vector), &none);
        assert_eq!(p.items.len(), 1);
        assert_eq!(p.items[0].inst.form(), forms::PLOP3_X);
        assert_eq!((field(&p, 0, "pu"), field(&p, 0, "pa"), field(&p, 0, "lut")), (5, 2, 0xF0));
    }

    #[test]
    fn spills_and_reloads_through_local_memory() {
        // Slot 0: a 32-bit value, slots 2-3: a pair, slot 4: a predicate; all
        // in memory after the function's own 16 bytes.
        let homes = SlotHomes::new(vec![1, 0, 2, 0, 1], |_| false);
        assert_eq!(homes.memory_bytes(), 20);
        assert_eq!(text(&lower_move(reg(0, RegClass::Int), slot(0), &homes)), ["STL [R1+0x10], R132"]);
        assert_eq!(text(&lower_move(slot(0), reg(1, RegClass::Int), &homes)), ["LDL R133, [R1+0x10]"]);
        assert_eq!(text(&lower_move(reg(0, RegClass::Float), slot(2), &homes)), ["STL.64 [R1+0x18], R[4:5]"]);
        assert_eq!(text(&lower_move(slot(2), reg(2, RegClass::Float), &homes)), ["LDL.64 R[8:9], [R1+0x18]"]);
        // A predicate goes through R0 as 0 or 1.
        assert_eq!(text(&lower_move(reg(3, RegClass::Vector), slot(4), &homes)), ["SEL R0, RZ, 0x1, !P3", "STL [R1+0x20], R0"]);
        assert_eq!(text(&lower_move(slot(4), reg(1, RegClass::Vector), &homes)), ["LDL R0, [R1+0x20]", "ISETP.NE.AND.U32 P1, R0, 0x0, PT"]);
    }

    #[test]
    fn spill_slots_in_registers_are_moves() {
        // Slot 0 (32-bit) and slots 2-3 (a pair) in registers R256 and
        // R[258:259]; slot 4 (a predicate) in R260. No local memory.
        let homes = SlotHomes::new(vec![1, 0, 2, 0, 1], |_| true);
        assert_eq!(homes.memory_bytes(), 0);
        let regs = |c: &Code, k: usize, a: &str, b: &str| (field(c, k, a), field(c, k, b));
        let c = lower_move(reg(0, RegClass::Int), slot(0), &homes);
        assert_eq!((c.items[0].inst.form(), regs(&c, 0, "rd", "rb")), (forms::MOV_R, (256, 132)));
        let c = lower_move(slot(0), reg(1, RegClass::Int), &homes);
        assert_eq!((c.items[0].inst.form(), regs(&c, 0, "rd", "rb")), (forms::MOV_R, (133, 256)));
        let c = lower_move(reg(1, RegClass::Float), slot(2), &homes);
        assert_eq!((regs(&c, 0, "rd", "rb"), regs(&c, 1, "rd", "rb")), ((258, 6), (259, 7)));
        let c = lower_move(reg(3, RegClass::Vector), slot(4), &homes);
        assert_eq!((c.items.len(), c.items[0].inst.form(), regs(&c, 0, "rd", "pp")), (1, forms::SEL_RI, (260, 3)));
        let c = lower_move(slot(4), reg(1, RegClass::Vector), &homes);
        assert_eq!((c.items.len(), c.items[0].inst.form(), regs(&c, 0, "pu", "ra")), (1, forms::ISETP_RI, (1, 260)));
        // Only the slot kept in memory takes frame bytes, packed densely.
        let homes = SlotHomes::new(vec![1, 0, 2, 0, 1], |s| s != 4);
        assert_eq!(homes.memory_bytes(), 4);
        assert_eq!(text(&lower_move(reg(0, RegClass::Int), slot(4), &homes)), ["STL [R1+0x10], R132"]);
    }

    /// `add(a: i32, b: i32) -> i32` built as the lowering would: the
    /// arguments arrive in the ABI pairs R[4:5] and R[6:7], the result leaves
    /// in R4, the return address stays in R[20:21].
    fn add_function() -> VCode {
        let mut v = VCode::default();
        let (a, b, link) = (v.new_vreg(Class::RPair), v.new_vreg(Class::RPair), v.new_vreg(Class::RPair));
        let (x, y, s, r) = (v.new_vreg(Class::R), v.new_vreg(Class::R), v.new_vreg(Class::R), v.new_vreg(Class::RPair));
        let insts = vec![
            Bundle::pseudo(Pseudo::Args).fixed(a, OpKind::Def, 4).fixed(b, OpKind::Def, 6).fixed(link, OpKind::Def, 20).build(),
            Bundle::new().inst(forms::MOV_R).def(MOV_R::RD, x).use_(MOV_R::RB, a).build(),
            Bundle::new().inst(forms::MOV_R).def(MOV_R::RD, y).use_(MOV_R::RB, b).build(),
            Bundle::new().inst(forms::IADD_RR).def(forms::IADD_RR::RD, s).use_(forms::IADD_RR::RA, x).use_(forms::IADD_RR::RB, y).build(),
            Bundle::new().inst(forms::MOV_R).def(MOV_R::RD, r).use_(MOV_R::RB, s).build(),
            Bundle::pseudo(Pseudo::Ret).fixed(r, OpKind::Use, 4).fixed(link, OpKind::Use, 20).build(),
        ];
        v.blocks.push(VBlock { insts, ..Default::default() });
        v
    }

    #[test]
    fn allocation_of_a_hand_built_function() {
        let v = add_function();
        let f = RaFunc::new(&v);
        // regalloc2's checker verifies the allocation.
        let asg = assign_regs_regalloc2(&f, true).unwrap();
        assert_eq!(asg.num_spillslots, 0);
        let homes = SlotHomes::memory(&asg);
        let mut code = lower_vcode(&v, &asg, &homes).unwrap();
        // The ABI operands: the return reads R4-R5 (its result) and the
        // return address, implicitly; nothing is written for `Args`.
        let ret = code.items.last().unwrap();
        assert_eq!(ret.inst.form(), forms::RET_R);
        assert_eq!(ret.implicit.reads, [4, 5, 20, 21, 1]);
        // Packing coalesces every copy into the ABI registers.
        crate::regalloc::pack_regs::pack_regs(&mut code).unwrap();
        assert_eq!(text(&code), ["IADD R4, R4, R6", "RET R[20:21]"]);
    }
}
