//! The Rust side of the ISLE terms: matching Cranelift IR (prelude) and the
//! machine-instruction constructors (delegated to [`crate::machine`]).

use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::immediates::{Imm64, Offset32};
use cranelift_codegen::ir::{types, Inst, InstructionData, MemFlags, Opcode, StackSlot, TrapCode, Type, Value, ValueDef};
use smallvec::smallvec;

use crate::lower::{CmpOp, Context, InstOutput, Lower, Pred, Reg, Signed, Width};
use crate::machine as m;

/// The operands of an instruction, by format: what the rules match on.
#[derive(Clone, Debug)]
pub enum InstData {
    Unary { opcode: Opcode, arg: Value },
    Binary { opcode: Opcode, a: Value, b: Value },
    Ternary { opcode: Opcode, a: Value, b: Value, c: Value },
    UnaryImm { opcode: Opcode, imm: Imm64 },
    IntCompare { cond: IntCC, a: Value, b: Value },
    Load { opcode: Opcode, flags: MemFlags, addr: Value, offset: Offset32 },
    Store { opcode: Opcode, flags: MemFlags, value: Value, addr: Value, offset: Offset32 },
    StackAddr { slot: StackSlot, offset: Offset32 },
    CondTrap { opcode: Opcode, arg: Value, code: TrapCode },
    IntAddTrap { a: Value, b: Value, code: TrapCode },
    Other { opcode: Opcode },
}

/// The raw bits of a constant value, if `v` is an `iconst`.
pub(crate) fn const_bits(cx: &Lower, v: Value) -> Option<u64> {
    let v = cx.f.dfg.resolve_aliases(v);
    let ValueDef::Result(inst, _) = cx.f.dfg.value_def(v) else { return None };
    match cx.f.dfg.insts[inst] {
        InstructionData::UnaryImm { opcode: Opcode::Iconst, imm } => {
            let ty = cx.f.dfg.value_type(v);
            let bits = imm.bits() as u64;
            Some(if ty.bits() >= 64 { bits } else { bits & ((1u64 << ty.bits()) - 1) })
        }
        _ => None,
    }
}

impl Context for Lower<'_> {
    // ---- matching IR ----
    fn def_inst(&mut self, v: Value) -> Option<Inst> {
        let v = self.f.dfg.resolve_aliases(v);
        match self.f.dfg.value_def(v) {
            ValueDef::Result(i, _) => Some(i),
            _ => None,
        }
    }
    fn value_type(&mut self, v: Value) -> Type {
        self.f.dfg.value_type(v)
    }
    fn has_type(&mut self, i: Inst) -> (Type, Inst) {
        let ty = self.f.dfg.inst_results(i).first().map(|&r| self.f.dfg.value_type(r)).unwrap_or(types::INVALID);
        (ty, i)
    }
    fn inst_data(&mut self, i: Inst) -> InstData {
        let f = self.f;
        match f.dfg.insts[i] {
            InstructionData::Unary { opcode, arg } => InstData::Unary { opcode, arg },
            InstructionData::Binary { opcode, args } => InstData::Binary { opcode, a: args[0], b: args[1] },
            InstructionData::Ternary { opcode, args } => InstData::Ternary { opcode, a: args[0], b: args[1], c: args[2] },
            InstructionData::UnaryImm { opcode, imm } => InstData::UnaryImm { opcode, imm },
            InstructionData::IntCompare { cond, args, .. } => InstData::IntCompare { cond, a: args[0], b: args[1] },
            InstructionData::Load { opcode, flags, arg, offset } => InstData::Load { opcode, flags, addr: arg, offset },
            InstructionData::Store { opcode, flags, args, offset } => InstData::Store { opcode, flags, value: args[0], addr: args[1], offset },
            InstructionData::StackAddr { stack_slot, offset, .. } => InstData::StackAddr { slot: stack_slot, offset },
            InstructionData::CondTrap { opcode, arg, code } => InstData::CondTrap { opcode, arg, code },
            InstructionData::IntAddTrap { args, code, .. } => InstData::IntAddTrap { a: args[0], b: args[1], code },
            ref d => InstData::Other { opcode: d.opcode() },
        }
    }
    fn width(&mut self, ty: Type) -> Width {
        match ty {
            types::I8 | types::I16 | types::I32 => Width::W32,
            types::I64 => Width::W64,
            _ => Width::Other,
        }
    }
    fn put_in_reg(&mut self, v: Value) -> Reg {
        self.use_value(v)
    }
    fn output_reg(&mut self, r: Reg) -> InstOutput {
        smallvec![r]
    }
    fn output_regs2(&mut self, a: Reg, b: Reg) -> InstOutput {
        smallvec![a, b]
    }
    fn output_none(&mut self) -> InstOutput {
        smallvec![]
    }
    fn u64_from_value(&mut self, v: Value) -> Option<u64> {
        const_bits(self, v)
    }
    fn simm32_value(&mut self, v: Value) -> Option<u32> {
        let bits = const_bits(self, v)?;
        let ty = self.f.dfg.value_type(v);
        if ty.bits() <= 32 {
            return Some(bits as u32);
        }
        // 64-bit: the immediate is sign-extended by the 64-bit sequences.
        let s = bits as i64;
        (s >= i32::MIN as i64 && s <= i32::MAX as i64).then_some(bits as u32)
    }
    fn imm64_u64(&mut self, k: Imm64) -> u64 {
        k.bits() as u64
    }
    fn u64_low32(&mut self, k: u64) -> u32 {
        k as u32
    }
    fn u64_high32(&mut self, k: u64) -> u32 {
        (k >> 32) as u32
    }
    fn ty_bits(&mut self, ty: Type) -> u32 {
        ty.bits()
    }
    fn u32_sub(&mut self, a: u32, b: u32) -> u32 {
        a.wrapping_sub(b)
    }
    fn u32_neg(&mut self, a: u32) -> u32 {
        a.wrapping_neg()
    }

    // ---- machine constructors ----
    fn mov_imm(&mut self, k: u32) -> Reg {
        m::mov_imm(self, k)
    }
    fn mov_imm64(&mut self, k: u64) -> Reg {
        m::mov_imm64(self, k)
    }
    fn lo32(&mut self, a: Reg) -> Reg {
        m::lo32(self, a)
    }
    fn hi32(&mut self, a: Reg) -> Reg {
        m::hi32(self, a)
    }
    fn pair(&mut self, lo: Reg, hi: Reg) -> Reg {
        m::pair(self, lo, hi)
    }
    fn iadd_rr(&mut self, a: Reg, b: Reg) -> Reg {
        m::iadd_rr(self, a, b)
    }
    fn iadd_ri(&mut self, a: Reg, k: u32) -> Reg {
        m::iadd_ri(self, a, k)
    }
    fn isub_rr(&mut self, a: Reg, b: Reg) -> Reg {
        m::isub_rr(self, a, b)
    }
    fn ineg_r(&mut self, a: Reg) -> Reg {
        m::ineg_r(self, a)
    }
    fn iadd64_rr(&mut self, a: Reg, b: Reg) -> Reg {
        m::iadd64_rr(self, a, b)
    }
    fn iadd64_ri(&mut self, a: Reg, k: u64) -> Reg {
        m::iadd64_ri(self, a, k)
    }
    fn isub64_rr(&mut self, a: Reg, b: Reg) -> Reg {
        m::isub64_rr(self, a, b)
    }
    fn isetp_rr(&mut self, op: &CmpOp, s: &Signed, a: Reg, b: Reg) -> Pred {
        m::isetp_rr(self, op, s, a, b)
    }
    fn isetp_ri(&mut self, op: &CmpOp, s: &Signed, a: Reg, k: u32) -> Pred {
        m::isetp_ri(self, op, s, a, k)
    }
    fn isetp64_rr(&mut self, op: &CmpOp, s: &Signed, a: Reg, b: Reg) -> Pred {
        m::isetp64_rr(self, op, s, a, b)
    }
    fn isetp64_ri(&mut self, op: &CmpOp, s: &Signed, a: Reg, k: u64) -> Pred {
        m::isetp64_ri(self, op, s, a, k)
    }
    fn sel_rr(&mut self, a: Reg, b: Reg, c: Pred) -> Reg {
        m::sel_rr(self, a, b, c)
    }
    fn sel_ri(&mut self, a: Reg, k: u32, c: Pred) -> Reg {
        m::sel_ri(self, a, k, c)
    }
    fn sel64_rr(&mut self, a: Reg, b: Reg, c: Pred) -> Reg {
        m::sel64_rr(self, a, b, c)
    }
    fn zext_bits(&mut self, a: Reg, n: u32) -> Reg {
        m::zext_bits(self, a, n)
    }
    fn sext_bits(&mut self, a: Reg, n: u32) -> Reg {
        m::sext_bits(self, a, n)
    }
    fn sshr_ri(&mut self, a: Reg, n: u32) -> Reg {
        m::sshr_ri(self, a, n)
    }
}
