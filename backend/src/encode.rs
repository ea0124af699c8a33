//! From allocated VCode to machine instructions: register numbers written
//! into the operand fields, the allocator's moves, spills and reloads made
//! real, pseudo-instructions expanded (prologue, epilogue, branches, jump
//! tables, traps), and finally branch offsets resolved and every instruction
//! encoded with the one encoder (`ursa_emit::Inst::encode`).

use regalloc2::{Allocation, Edit, InstOrEdit, RegClass};
use ursa_emit::elf::Reloc;
use ursa_emit::{forms, Inst, FormId, INST_BYTES, PT, RZ};
use ursa_isel::abi;
use ursa_isel::vcode::{BlockId, Class, OpKind, Pseudo};

use crate::assign_regs::{preg_number, Assignment, RaFunc, P_SCRATCH, SPILL_SCRATCH};

/// One machine instruction of the final sequence.
#[derive(Clone, Debug)]
pub struct Item {
    pub inst: Inst,
    /// Branch target (BRA_I `target` field), resolved at the end.
    pub target: Option<BlockId>,
    /// A block address the instruction names without branching there (the
    /// `target` field of `BSSY`): resolved like a branch target, but not an
    /// edge of the control flow for the passes that follow branches.
    pub label: Option<BlockId>,
    /// Symbol for a call relocation (CALL_I `target` field).
    pub call: Option<String>,
    /// General registers the instruction reads or writes without naming them
    /// in a field: the ABI registers of a call's arguments and results, a
    /// return's results. `pack_regs` keeps them where they are.
    pub implicit: Implicit,
    /// A guarded instruction whose results only readers under the same
    /// guard read (`MInst::predicated`): its writes start new values.
    pub predicated: bool,
}

/// Registers an instruction uses by convention rather than by field.
#[derive(Clone, Debug, Default)]
pub struct Implicit {
    pub reads: Vec<u32>,
    pub writes: Vec<u32>,
}

/// The machine code of one function before branch resolution.
pub struct Code {
    pub items: Vec<Item>,
    /// Index of the first item of each block.
    pub block_start: Vec<usize>,
    /// The block of this code where each VCode block starts (join points and
    /// cold blocks of out-of-line bundle parts make them differ); empty:
    /// the same numbers.
    pub vblocks: Vec<usize>,
    pub frame_size: u32,
}

fn inst(form: FormId) -> Inst {
    Inst::new(form)
}

pub(crate) fn set(i: &mut Inst, name: &str, v: u64) {
    if let Err(e) = i.set(name, v) {
        panic!("encode built a bad {}: {}", i.form.name(), e);
    }
}

fn named(i: &mut Inst, name: &str, v: &str) {
    if let Err(e) = i.set_named(name, v) {
        panic!("encode built a bad {}: {}", i.form.name(), e);
    }
}

pub(crate) fn item(i: Inst) -> Item {
    Item { inst: i, target: None, label: None, call: None, implicit: Implicit::default(), predicated: false }
}

/// The general registers of the fixed (ABI) operands of `m`: (reads, writes).
fn fixed_regs(vcode: &ursa_isel::vcode::VCode, m: &ursa_isel::vcode::MInst) -> Implicit {
    let mut imp = Implicit::default();
    for o in m.opnds.iter() {
        let Some(n) = o.fixed else { continue };
        let regs: &[u32] = match vcode.class(o.vreg) {
            Class::R => &[n as u32],
            Class::RPair => &[n as u32, n as u32 + 1],
            Class::P => &[],
        };
        match o.kind {
            OpKind::Use => imp.reads.extend_from_slice(regs),
            OpKind::Def | OpKind::EarlyDef | OpKind::Temp => imp.writes.extend_from_slice(regs),
        }
    }
    imp
}

/// A `BRA` out of the function: a tail call's jump (direct, with a call
/// relocation, or through a register). Branches inside the function have a
/// block target.
pub fn is_tail_jump(it: &Item) -> bool {
    it.target.is_none() && it.inst.form.optype().name.as_ref() == "BRA"
}

fn iadd_imm(d: u32, a: u32, k: i64) -> Inst {
    let mut i = inst(forms::IADD_RI);
    set(&mut i, "rd", d as u64);
    set(&mut i, "ra", a as u64);
    set(&mut i, "vb", k as u32 as u64);
    i
}

fn mov(d: u32, s: u32) -> Inst {
    let mut i = inst(forms::MOV_R);
    set(&mut i, "rd", d as u64);
    set(&mut i, "rb", s as u64);
    i
}

/// `ISETP.<compop>.U32.AND pu, PT, ra, k, PT`.
fn isetp_u32_imm(compop: &str, pu: u32, ra: u32, k: u32) -> Inst {
    let mut s = inst(forms::ISETP_RI);
    named(&mut s, "compop", compop);
    named(&mut s, "boolop", "AND");
    named(&mut s, "itype", "U32");
    set(&mut s, "pu", pu as u64);
    set(&mut s, "ra", ra as u64);
    set(&mut s, "vb", k as u64);
    set(&mut s, "pp", PT as u64);
    s
}

fn bra(target: BlockId, guard: Option<(u32, bool)>) -> Item {
    let mut i = inst(forms::BRA_I);
    if let Some((p, neg)) = guard {
        set(&mut i, "pg", p as u64);
        set(&mut i, "pg.not", neg as u64);
    }
    Item { inst: i, target: Some(target), label: None, call: None, implicit: Implicit::default(), predicated: false }
}

/// Local-memory slot address of spill slot `slot`.
fn spill_offset(code_slots: u32, slot: usize) -> u32 {
    code_slots + 4 * slot as u32
}

/// The instructions of one allocator move.
fn emit_move(out: &mut Vec<Item>, from: Allocation, to: Allocation, slots_size: u32) -> Result<(), String> {
    let class = from.as_reg().map(|r| r.class()).or(to.as_reg().map(|r| r.class())).ok_or("stack-to-stack move")?;
    match (from.as_reg(), to.as_reg()) {
        (Some(f), Some(t)) => {
            let (f, t) = (preg_number(f), preg_number(t));
            match class {
                RegClass::Int => out.push(item(mov(t, f))),
                RegClass::Float => {
                    out.push(item(mov(t, f)));
                    out.push(item(mov(t + 1, f + 1)));
                }
                RegClass::Vector => {
                    let mut i = inst(forms::PLOP3_X);
                    set(&mut i, "pu", t as u64);
                    set(&mut i, "pa", f as u64);
                    set(&mut i, "pb", PT as u64);
                    set(&mut i, "pc", PT as u64);
                    set(&mut i, "lut", 0xF0);
                    out.push(item(i));
                }
            }
        }
        (Some(f), None) => {
            let off = spill_offset(slots_size, to.as_stack().unwrap().index());
            let f = preg_number(f);
            let src = if class == RegClass::Vector {
                // R0 = P ? 1 : 0
                let mut s = inst(forms::SEL_RI);
                set(&mut s, "rd", SPILL_SCRATCH as u64);
                set(&mut s, "ra", RZ as u64);
                set(&mut s, "vb", 1);
                set(&mut s, "pp", f as u64);
                set(&mut s, "pp.not", 1);
                out.push(item(s));
                SPILL_SCRATCH
            } else {
                f
            };
            let mut i = inst(forms::STL_RIR);
            set(&mut i, "ra", abi::SP as u64);
            set(&mut i, "ofs", off as u64);
            set(&mut i, "rb", src as u64);
            if class == RegClass::Float {
                named(&mut i, "dtype", "64");
            }
            out.push(item(i));
        }
        (None, Some(t)) => {
            let off = spill_offset(slots_size, from.as_stack().unwrap().index());
            let t = preg_number(t);
            let mut i = inst(forms::LDL_RI);
            set(&mut i, "rd", if class == RegClass::Vector { SPILL_SCRATCH } else { t } as u64);
            set(&mut i, "ra", abi::SP as u64);
            set(&mut i, "ofs", off as u64);
            if class == RegClass::Float {
                named(&mut i, "dtype", "64");
            }
            out.push(item(i));
            if class == RegClass::Vector {
                out.push(item(isetp_u32_imm("NE", t, SPILL_SCRATCH, 0)));
            }
        }
        (None, None) => return Err("stack-to-stack move".into()),
    }
    Ok(())
}

/// Lays out the allocated function as machine instructions.
pub fn lay_out(func: &RaFunc, asg: &Assignment) -> Result<Code, String> {
    let vcode = func.vcode;
    let spill_bytes = 4 * asg.output.num_spillslots as u32;
    // The incoming stack arguments sit at the top of the frame, just below
    // the stack pointer at entry (`docs/abi.md`).
    let frame_size = ((vcode.slots_size + spill_bytes + 15) & !15) + ((vcode.incoming_bytes + 15) & !15);
    let slots_size = vcode.slots_size;
    let mut items: Vec<Item> = Vec::new();
    let nblocks = vcode.blocks.len();
    // Block starts as (item index, label): labels below `nblocks` are the
    // VCode blocks, the others join points and cold blocks of out-of-line
    // bundle parts (renumbered in layout order at the end).
    let mut starts: Vec<(usize, u32)> = Vec::new();
    let mut next_label = nblocks as u32;
    let mut cold: Vec<(u32, Vec<Inst>, u32)> = Vec::new();
    for b in 0..nblocks {
        starts.push((items.len(), b as u32));
        let next = BlockId(b as u32 + 1);
        for ioe in asg.output.block_insts_and_edits(func, regalloc2::Block::new(b)) {
            match ioe {
                InstOrEdit::Edit(Edit::Move { from, to }) => emit_move(&mut items, *from, *to, slots_size)?,
                InstOrEdit::Inst(i) => {
                    let m = func.minst(i);
                    let allocs = asg.allocs(i.index());
                    let reg_of = |k: usize| -> Result<u32, String> {
                        allocs[k].as_reg().map(preg_number).ok_or_else(|| "operand not in a register".to_string())
                    };
                    match &m.pseudo {
                        Pseudo::None | Pseudo::Call | Pseudo::FrameRel { .. } => {
                            let mut pieces: Vec<Inst> = m.pieces.to_vec();
                            if let Pseudo::FrameRel { offset } = m.pseudo {
                                set(&mut pieces[0], "ofs", abi::ofs_field(frame_size as i64 + offset as i64));
                            }
                            for fx in m.fixups.iter() {
                                let r = reg_of(fx.opnd as usize)? + fx.hi as u32;
                                pieces[fx.piece as usize].set_at(fx.field as usize, r as u64);
                            }
                            let last = pieces.len().saturating_sub(1);
                            if let Some(k) = m.cold_from {
                                // Inline part, then the guarded branch to the cold
                                // block; the join point starts a new block.
                                let k = k as usize;
                                let (cold_id, join_id) = (next_label, next_label + 1);
                                next_label += 2;
                                let rest = pieces.split_off(k);
                                let enter = pieces.pop().ok_or("out-of-line part without its branch")?;
                                items.extend(pieces.into_iter().map(item));
                                items.push(Item { inst: enter, target: Some(BlockId(cold_id)), label: None, call: None, implicit: Implicit::default(), predicated: false });
                                starts.push((items.len(), join_id));
                                cold.push((cold_id, rest, join_id));
                                continue;
                            }
                            for (k, p) in pieces.into_iter().enumerate() {
                                let call = m.sym.as_ref().filter(|s| s.piece as usize == k).map(|s| s.symbol.clone());
                                let implicit = if m.pseudo == Pseudo::Call && k == last { fixed_regs(vcode, m) } else { Implicit::default() };
                                items.push(Item { inst: p, target: None, label: None, call, implicit, predicated: m.predicated });
                            }
                        }
                        Pseudo::Args => {
                            if frame_size > 0 {
                                items.push(item(iadd_imm(abi::SP as u32, abi::SP as u32, -(frame_size as i64))));
                            }
                        }
                        Pseudo::Ret => {
                            if frame_size > 0 {
                                items.push(item(iadd_imm(abi::SP as u32, abi::SP as u32, frame_size as i64)));
                            }
                            let mut r = inst(forms::RET_R);
                            set(&mut r, "ra", abi::LINK as u64);
                            let mut ret = item(r);
                            ret.implicit = fixed_regs(vcode, m);
                            ret.implicit.reads.push(abi::SP as u32);
                            items.push(ret);
                        }
                        Pseudo::TailCall { stack, indirect } => {
                            // Stack arguments (all in registers now) into the
                            // callee's area below the entry stack pointer,
                            // the frame freed, then the jump.
                            let n = m.opnds.len();
                            let stack = *stack as usize;
                            let first = n - stack - *indirect as usize;
                            for j in 0..stack {
                                let r = reg_of(first + j)?;
                                let mut s = inst(forms::STL_RIR);
                                set(&mut s, "ra", abi::SP as u64);
                                let ofs = frame_size as i64 + abi::stack_arg_offset(j, stack) as i64;
                                set(&mut s, "ofs", abi::ofs_field(ofs));
                                set(&mut s, "rb", r as u64);
                                if vcode.class(m.opnds[first + j].vreg) == Class::RPair {
                                    named(&mut s, "dtype", "64");
                                }
                                items.push(item(s));
                            }
                            if frame_size > 0 {
                                items.push(item(iadd_imm(abi::SP as u32, abi::SP as u32, frame_size as i64)));
                            }
                            let mut implicit = fixed_regs(vcode, m);
                            implicit.reads.push(abi::SP as u32);
                            if *indirect {
                                let mut b = inst(forms::BRA_R);
                                set(&mut b, "ra", reg_of(n - 1)? as u64);
                                items.push(Item { inst: b, target: None, label: None, call: None, implicit, predicated: false });
                            } else {
                                let sym = m.sym.as_ref().ok_or("tail call without a callee")?.symbol.clone();
                                items.push(Item { inst: inst(forms::BRA_I), target: None, label: None, call: Some(sym), implicit, predicated: false });
                            }
                        }
                        Pseudo::Exit => {
                            if frame_size > 0 {
                                items.push(item(iadd_imm(abi::SP as u32, abi::SP as u32, frame_size as i64)));
                            }
                            items.push(item(inst(forms::EXIT_X)));
                        }
                        Pseudo::Trap { code } => {
                            let mut t = inst(forms::BPT_I);
                            named(&mut t, "mode", "TRAP");
                            set(&mut t, "code", *code as u64);
                            items.push(item(t));
                        }
                        Pseudo::Jump => {
                            if m.targets[0] != next {
                                items.push(bra(m.targets[0], None));
                            }
                        }
                        Pseudo::Brif { negate } => {
                            let p = reg_of(0)?;
                            let (t, e) = (m.targets[0], m.targets[1]);
                            if t == next {
                                items.push(bra(e, Some((p, !negate))));
                            } else {
                                items.push(bra(t, Some((p, *negate))));
                                if e != next {
                                    items.push(bra(e, None));
                                }
                            }
                        }
                        Pseudo::Table => {
                            // targets[0] is the default, targets[1 + k] entry k
                            // (Cranelift's order of a jump table's branches).
                            let idx = reg_of(0)?;
                            let n = m.targets.len() - 1;
                            for k in 0..n {
                                items.push(item(isetp_u32_imm("EQ", P_SCRATCH, idx, k as u32)));
                                items.push(bra(m.targets[1 + k], Some((P_SCRATCH, false))));
                            }
                            if m.targets[0] != next {
                                items.push(bra(m.targets[0], None));
                            }
                        }
                    }
                }
            }
        }
    }
    // The cold blocks after the last block, each ending with its branch back.
    for (id, pieces, join) in cold {
        starts.push((items.len(), id));
        items.extend(pieces.into_iter().map(item));
        items.push(bra(BlockId(join), None));
    }
    if next_label as usize == nblocks {
        let block_start = starts.into_iter().map(|(s, _)| s).collect();
        return Ok(Code { items, block_start, vblocks: Vec::new(), frame_size });
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
    Ok(Code { items, block_start, vblocks, frame_size })
}

/// The laid-out code as assembly text, blocks as labels `.LB<n>:` (register
/// numbers as the last pass left them).
impl std::fmt::Display for Code {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut starts = self.block_start.iter().enumerate().peekable();
        for (k, it) in self.items.iter().enumerate() {
            while let Some(&(b, &s)) = starts.peek() {
                if s != k {
                    break;
                }
                writeln!(f, ".LB{}:", b)?;
                starts.next();
            }
            let text = ursa_emit::format_inst(&it.inst, None, &ursa_emit::NoLabels)
                .map(|t| t.trim_end_matches(" ;").to_string())
                .unwrap_or_else(|e| format!("<{}: {}>", it.inst.form.name(), e));
            let target = it.target.or(it.label).map(|t| format!(" -> .LB{}", t.0)).unwrap_or_default();
            let call = it.call.as_ref().map(|c| format!(" -> %{}", c)).unwrap_or_default();
            writeln!(f, "    {}{}{}", text, target, call)?;
        }
        Ok(())
    }
}

/// Resolves branch targets and call relocations; encodes every instruction.
pub fn resolve(code: &Code) -> Result<(Vec<u8>, Vec<Reloc>), String> {
    let mut bytes = Vec::with_capacity(code.items.len() * INST_BYTES);
    let mut relocs = Vec::new();
    for (k, it) in code.items.iter().enumerate() {
        let mut i = it.inst.clone();
        let pc = (k * INST_BYTES) as i64;
        if let Some(t) = it.target.or(it.label) {
            let dest = (code.block_start[t.0 as usize] * INST_BYTES) as i64;
            set(&mut i, "target", (dest - (pc + INST_BYTES as i64)) as u32 as u64);
        }
        if let Some(sym) = &it.call {
            let fi = i.field_index("target").ok_or("call without target field")?;
            let fo = (i.field_def(fi).lo / 8) as u64;
            relocs.push(Reloc { offset: pc as u64 + fo, symbol: sym.clone(), addend: fo as i64 - INST_BYTES as i64 });
        }
        let b = i.encode().map_err(|e| format!("instruction {} does not encode: {}", k, e))?;
        bytes.extend_from_slice(&b);
    }
    Ok((bytes, relocs))
}
