//! The Rust side of the prelude's ISLE terms: matching Cranelift IR, values
//! in registers, constants. (Machine-instruction constructors are in
//! [`crate::machine`] and `src/rules/`; `build.rs` generates the `Context`
//! impl that forwards every term to the method of the same name.)

use cranelift_codegen::ir::condcodes::{FloatCC, IntCC};
use cranelift_codegen::ir::immediates::{Ieee32, Ieee64, Imm64, Offset32};
use cranelift_codegen::ir::{types, Inst, InstructionData, MemFlags, Opcode, StackSlot, TrapCode, Type, Value, ValueDef};
use smallvec::smallvec;

use crate::lower::{InstOutput, Lower, Reg, Signed, Width};

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
    UnaryIeee32 { imm: Ieee32 },
    UnaryIeee64 { imm: Ieee64 },
    FloatCompare { cond: FloatCC, a: Value, b: Value },
    LoadNoOffset { opcode: Opcode, flags: MemFlags, arg: Value },
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

impl Lower<'_> {
    // ---- matching IR ----
    pub fn def_inst(&mut self, v: Value) -> Option<Inst> {
        let v = self.f.dfg.resolve_aliases(v);
        match self.f.dfg.value_def(v) {
            ValueDef::Result(i, _) => Some(i),
            _ => None,
        }
    }
    pub fn value_type(&mut self, v: Value) -> Type {
        self.f.dfg.value_type(v)
    }
    pub fn has_type(&mut self, i: Inst) -> (Type, Inst) {
        let ty = self.f.dfg.inst_results(i).first().map(|&r| self.f.dfg.value_type(r)).unwrap_or(types::INVALID);
        (ty, i)
    }
    pub fn inst_data(&mut self, i: Inst) -> InstData {
        let f = self.f;
        match f.dfg.insts[i] {
            InstructionData::Unary { opcode, arg } => InstData::Unary { opcode, arg },
            InstructionData::Binary { opcode, args } => InstData::Binary { opcode, a: args[0], b: args[1] },
            InstructionData::Ternary { opcode, args } => InstData::Ternary { opcode, a: args[0], b: args[1], c: args[2] },
            InstructionData::UnaryImm { opcode, imm } => InstData::UnaryImm { opcode, imm },
            InstructionData::IntCompare { cond, args, .. } => InstData::IntCompare { cond, a: args[0], b: args[1] },
            InstructionData::Load { opcode, flags, arg, offset } => InstData::Load { opcode, flags, addr: arg, offset },
            InstructionData::Store { opcode, flags, args, offset } => {
                InstData::Store { opcode, flags, value: args[0], addr: args[1], offset }
            }
            InstructionData::StackAddr { stack_slot, offset, .. } => InstData::StackAddr { slot: stack_slot, offset },
            InstructionData::CondTrap { opcode, arg, code } => InstData::CondTrap { opcode, arg, code },
            InstructionData::IntAddTrap { args, code, .. } => InstData::IntAddTrap { a: args[0], b: args[1], code },
            InstructionData::UnaryIeee32 { imm, .. } => InstData::UnaryIeee32 { imm },
            InstructionData::UnaryIeee64 { imm, .. } => InstData::UnaryIeee64 { imm },
            InstructionData::FloatCompare { cond, args, .. } => InstData::FloatCompare { cond, a: args[0], b: args[1] },
            InstructionData::LoadNoOffset { opcode, flags, arg } => InstData::LoadNoOffset { opcode, flags, arg },
            ref d => InstData::Other { opcode: d.opcode() },
        }
    }
    pub fn width(&mut self, ty: Type) -> Width {
        match ty {
            types::I8 | types::I16 | types::I32 | types::F32 => Width::W32,
            types::I64 | types::F64 => Width::W64,
            _ => Width::Other,
        }
    }
    pub fn put_in_reg(&mut self, v: Value) -> Reg {
        self.use_value(v)
    }
    pub fn output_reg(&mut self, r: Reg) -> InstOutput {
        smallvec![r]
    }
    pub fn output_regs2(&mut self, a: Reg, b: Reg) -> InstOutput {
        smallvec![a, b]
    }
    pub fn output_none(&mut self) -> InstOutput {
        smallvec![]
    }
    pub fn u64_from_value(&mut self, v: Value) -> Option<u64> {
        const_bits(self, v)
    }
    pub fn simm32_value(&mut self, v: Value) -> Option<u32> {
        let bits = const_bits(self, v)?;
        let ty = self.f.dfg.value_type(v);
        if ty.bits() <= 32 {
            return Some(bits as u32);
        }
        // 64-bit: the immediate is sign-extended by the 64-bit sequences.
        let s = bits as i64;
        (s >= i32::MIN as i64 && s <= i32::MAX as i64).then_some(bits as u32)
    }
    pub fn narrow_const(&mut self, v: Value) -> Option<(u32, u64)> {
        let bits = self.f.dfg.value_type(v).bits();
        (bits < 32).then(|| const_bits(self, v).map(|k| (bits, k))).flatten()
    }
    pub fn ext_const(&mut self, s: &Signed, bits: u32, k: u64) -> u32 {
        let k = k as u32 & ((1u32 << bits) - 1);
        match s {
            Signed::U32 => k,
            Signed::S32 => ((k << (32 - bits)) as i32 >> (32 - bits)) as u32,
        }
    }
    pub fn imm64_u64(&mut self, k: Imm64) -> u64 {
        k.bits() as u64
    }
    pub fn u64_low32(&mut self, k: u64) -> u32 {
        k as u32
    }
    pub fn u64_high32(&mut self, k: u64) -> u32 {
        (k >> 32) as u32
    }
    /// The mask of an `i8` or `i16` type's bits (`None` for any other type).
    pub fn narrow_mask(&mut self, ty: Type) -> Option<u32> {
        matches!(ty, types::I8 | types::I16).then(|| (1u32 << ty.bits()) - 1)
    }
    /// `v` when it is no constant (`None` for a constant).
    pub fn non_constant(&mut self, v: Value) -> Option<Value> {
        const_bits(self, v).is_none().then_some(v)
    }
    /// The sign bit of an `i8` or `i16` type (`None` for any other type).
    pub fn narrow_sign(&mut self, ty: Type) -> Option<u32> {
        matches!(ty, types::I8 | types::I16).then(|| 1u32 << (ty.bits() - 1))
    }
    pub fn ty_bits(&mut self, ty: Type) -> u32 {
        ty.bits()
    }
    pub fn u32_sub(&mut self, a: u32, b: u32) -> u32 {
        a.wrapping_sub(b)
    }
}
