//! Constructors for `isle/lower/memory.isle`: loads, stores, stack addresses.

use cranelift_codegen::ir::immediates::Offset32;
use cranelift_codegen::ir::{self as ir, types, Endianness, InstructionData, MemFlags, Opcode, StackSlot, Type, Value, ValueDef};
use ursa_emit::{forms, FormId};

use crate::abi;
use crate::addr_space::Space;
use crate::lower::{InstOutput, Lower};
use crate::vcode::{Bundle, Class, MInst, VReg};
use crate::LowerError;
use ursa_emit::forms::{IADD_RI, MOV_I};
use ursa_emit::forms::{LDG_RI, LDL_RI, LDS_RI, LD_RI, STG_RIR, STL_RIR, STS_RIR, ST_RIR};
use ursa_emit::mods::MEMDType;
use ursa_emit::typed::R;
use ursa_emit::typed::{Dst, Fld, Imm, Mod, Src};

/// High word of a generic address in the local-memory window.
pub const LOCAL_WINDOW_HI: u64 = 0x0002_0000;
/// Offsets the memory forms' SImm24 field holds.
const OFS_MIN: i64 = -(1 << 23);
const OFS_MAX: i64 = (1 << 23) - 1;

/// Where a memory access goes.
#[derive(Clone, Copy)]
enum Base {
    /// Generic 64-bit address in a pair.
    Generic(VReg),
    /// Global 64-bit address in a pair (`addr_space`).
    Global(VReg),
    /// Generic address in the shared window (`addr_space`): its low word
    /// is the shared address.
    Shared(VReg),
    /// Local 32-bit address in a register.
    Local(VReg),
    /// `[R1 + ofs]`.
    Stack,
}

/// The address base, offset and data type of every load and store form
/// `mem_bundle` builds (generic, global, shared, local).
const MEM_RA: [Fld<Src<R>>; 8] = [LD_RI::RA, LDG_RI::RA, LDS_RI::RA, LDL_RI::RA, ST_RIR::RA, STG_RIR::RA, STS_RIR::RA, STL_RIR::RA];
const MEM_OFS: [Fld<Imm>; 8] = [LD_RI::OFS, LDG_RI::OFS, LDS_RI::OFS, LDL_RI::OFS, ST_RIR::OFS, STG_RIR::OFS, STS_RIR::OFS, STL_RIR::OFS];
const MEM_DTYPE: [Fld<Mod<MEMDType>>; 8] =
    [LD_RI::DTYPE, LDG_RI::DTYPE, LDS_RI::DTYPE, LDL_RI::DTYPE, ST_RIR::DTYPE, STG_RIR::DTYPE, STS_RIR::DTYPE, STL_RIR::DTYPE];
/// The loaded register of the load forms, the stored one of the store forms.
const LOAD_RD: [Fld<Dst<R>>; 4] = [LD_RI::RD, LDG_RI::RD, LDS_RI::RD, LDL_RI::RD];
const STORE_RB: [Fld<Src<R>>; 4] = [ST_RIR::RB, STG_RIR::RB, STS_RIR::RB, STL_RIR::RB];

/// The `dtype` of an access and whether the loaded value is sign-extended to 64 bits.
fn access(op: Opcode, ty: Type) -> Result<(MEMDType, u32), String> {
    Ok(match op {
        Opcode::Uload8 | Opcode::Istore8 => (MEMDType::U8, 8),
        Opcode::Sload8 => (MEMDType::S8, 8),
        Opcode::Uload16 | Opcode::Istore16 => (MEMDType::U16, 16),
        Opcode::Sload16 => (MEMDType::S16, 16),
        Opcode::Uload32 | Opcode::Sload32 | Opcode::Istore32 => (MEMDType::_32, 32),
        Opcode::Load | Opcode::Store => match ty {
            types::I8 => (MEMDType::U8, 8),
            types::I16 => (MEMDType::U16, 16),
            types::I32 | types::F32 => (MEMDType::_32, 32),
            types::I64 | types::F64 => (MEMDType::_64, 64),
            _ => return Err(format!("{} of type {} is not supported", op, ty)),
        },
        _ => return Err(format!("{} is not supported", op)),
    })
}

impl Lower<'_> {
    pub fn offset_i64(&mut self, o: Offset32) -> i64 {
        i64::from(o)
    }

    pub fn i64_add(&mut self, a: i64, b: i64) -> i64 {
        a.saturating_add(b)
    }

    fn slot_offset(&self, ss: StackSlot) -> i64 {
        self.vcode.slots[ss.as_u32() as usize].offset as i64
    }

    /// A base and an offset that fits the SImm24 field.
    fn fit(&mut self, base: Base, off: i64) -> (Base, i64) {
        if (OFS_MIN..=OFS_MAX).contains(&off) {
            return (base, off);
        }
        match base {
            Base::Generic(a) => (Base::Generic(self.iadd64_ri(a, off as u64)), 0),
            Base::Global(a) => (Base::Global(self.iadd64_ri(a, off as u64)), 0),
            Base::Shared(a) => (Base::Shared(self.iadd_ri(a, off as u32)), 0),
            Base::Local(a) => (Base::Local(self.iadd_ri(a, off as u32)), 0),
            Base::Stack => {
                let sp = self.temp(Class::R);
                self.emit_b(
                    Bundle::new()
                        .inst(forms::IADD_RI)
                        .def(IADD_RI::RD, sp)
                        .set(IADD_RI::RA, R(abi::SP as u8))
                        .set(IADD_RI::VB, off as u32 as u64),
                );
                (Base::Local(sp), 0)
            }
        }
    }

    fn mem_bundle(&mut self, form_g: FormId, form_l: FormId, base: Base, off: i64) -> Bundle {
        let (base, off) = self.fit(base, off);
        match base {
            Base::Generic(a) => Bundle::new().inst(form_g).use_(MEM_RA, a).set(MEM_OFS, off as u32 as u64 & 0xff_ffff),
            Base::Global(a) | Base::Shared(a) => {
                let form = crate::addr_space::space_form(form_g, matches!(base, Base::Shared(_)));
                Bundle::new().inst(form).use_(MEM_RA, a).set(MEM_OFS, off as u32 as u64 & 0xff_ffff)
            }
            Base::Local(a) => Bundle::new().inst(form_l).use_(MEM_RA, a).set(MEM_OFS, off as u32 as u64 & 0xff_ffff),
            Base::Stack => Bundle::new().inst(form_l).set(MEM_RA, R(abi::SP as u8)).set(MEM_OFS, off as u32 as u64 & 0xff_ffff),
        }
    }

    fn load(&mut self, op: &Opcode, ty: Type, flags: MemFlags, base: Base, off: i64) -> VReg {
        let (dtype, bits) = match access(*op, ty) {
            Ok(a) => a,
            Err(m) => return self.unsupported(m),
        };
        let wide = ty == types::I64 || ty == types::F64;
        let big = self.f.dfg.mem_flags[flags].endianness(Endianness::Little) == Endianness::Big;
        let b = self.mem_bundle(forms::LD_RI, forms::LDL_RI, base, off).set(MEM_DTYPE, dtype);
        if bits == 64 {
            let d = self.temp(Class::RPair);
            self.emit_b(b.def(LOAD_RD, d));
            return if big { self.bswap64(d) } else { d };
        }
        let lo = self.temp(Class::R);
        self.emit_b(b.def(LOAD_RD, lo));
        let signed = matches!(op, Opcode::Sload8 | Opcode::Sload16 | Opcode::Sload32);
        let lo = if big { self.bswap_bits(lo, bits, signed) } else { lo };
        if !wide {
            return lo;
        }
        // 64-bit result of a narrow load: extend into the high word.
        let hi = if signed { self.sshr_ri(lo, 31) } else { self.mov_imm(0) };
        self.pair(lo, hi)
    }

    /// A 64-bit address: global, shared, local or generic by its inferred space.
    fn base64(&mut self, addr: VReg) -> Base {
        match self.mem_addr_space() {
            Space::Global => Base::Global(addr),
            Space::Shared => Base::Shared(addr),
            Space::Local => Base::Local(addr),
            _ => Base::Generic(addr),
        }
    }

    pub fn load_generic(&mut self, op: &Opcode, ty: Type, flags: MemFlags, addr: VReg, off: i64) -> VReg {
        let base = self.base64(addr);
        self.load(op, ty, flags, base, off)
    }
    pub fn load_local(&mut self, op: &Opcode, ty: Type, flags: MemFlags, addr: VReg, off: i64) -> VReg {
        self.load(op, ty, flags, Base::Local(addr), off)
    }
    pub fn load_stack(&mut self, op: &Opcode, ty: Type, flags: MemFlags, ss: StackSlot, off: i64) -> VReg {
        let o = self.slot_offset(ss) + off;
        self.load(op, ty, flags, Base::Stack, o)
    }

    fn store(&mut self, op: &Opcode, flags: MemFlags, v: Value, base: Base, off: i64) -> InstOutput {
        let ty = self.f.dfg.value_type(v);
        let (dtype, bits) = match access(*op, ty) {
            Ok(a) => a,
            Err(m) => {
                self.unsupported(m);
                return InstOutput::new();
            }
        };
        let big = self.f.dfg.mem_flags[flags].endianness(Endianness::Little) == Endianness::Big;
        let mut r = self.use_value(v);
        if big {
            r = if bits == 64 {
                self.bswap64(r)
            } else if ty == types::I64 {
                let lo = self.lo32(r);
                self.bswap_bits(lo, bits, false)
            } else {
                self.bswap_bits(r, bits, false)
            };
        } else if ty == types::I64 && bits < 64 {
            r = self.lo32(r);
        }
        let b = self.mem_bundle(forms::ST_RIR, forms::STL_RIR, base, off).set(MEM_DTYPE, dtype).use_(STORE_RB, r);
        self.emit_b(b);
        InstOutput::new()
    }

    pub fn store_generic(&mut self, op: &Opcode, flags: MemFlags, v: Value, addr: VReg, off: i64) -> InstOutput {
        let base = self.base64(addr);
        self.store(op, flags, v, base, off)
    }
    pub fn store_local(&mut self, op: &Opcode, flags: MemFlags, v: Value, addr: VReg, off: i64) -> InstOutput {
        self.store(op, flags, v, Base::Local(addr), off)
    }
    pub fn store_stack(&mut self, op: &Opcode, flags: MemFlags, v: Value, ss: StackSlot, off: i64) -> InstOutput {
        let o = self.slot_offset(ss) + off;
        self.store(op, flags, v, Base::Stack, o)
    }

    /// The `i128` accesses `legalize_i128` keeps whole (aligned,
    /// little-endian): `load.i128` is one `.128` load into a register quad
    /// whose two pairs are the results of the `isplit` of its value (the
    /// only reader it has), and `store.i128` of an `iconcat` one `.128`
    /// store of the quad of the two halves (the allocator places them
    /// there: halves computed apart are computed in the quad's registers
    /// where it can, else copied into a free quad; the same pair as both
    /// halves is two `.64` stores). The `iconcat` is then
    /// read by nothing and not lowered. False for every other instruction.
    pub(crate) fn lower_quad(&mut self, inst: ir::Inst) -> Result<bool, LowerError> {
        let f = self.f;
        let is128 = |v: Value| f.dfg.value_type(v) == types::I128;
        match f.dfg.insts[inst] {
            InstructionData::Unary { opcode: Opcode::Isplit, arg } if is128(arg) => {
                let from_load = matches!(f.dfg.value_def(f.dfg.resolve_aliases(arg)), ValueDef::Result(i, 0)
                    if matches!(f.dfg.insts[i], InstructionData::Load { opcode: Opcode::Load, .. }));
                if !from_load {
                    return Err(self.err(inst, "an i128 split that is not a load's"));
                }
                let rs = f.dfg.inst_results(inst);
                let (lo, hi) = (self.value_vreg(rs[0]), self.value_vreg(rs[1]));
                self.quads.insert(f.dfg.resolve_aliases(arg), (lo, hi));
                Ok(true)
            }
            InstructionData::Load { opcode: Opcode::Load, flags, arg, offset } if is128(f.dfg.first_result(inst)) => {
                let v = f.dfg.first_result(inst);
                let (lo, hi) = match self.quads.remove(&v) {
                    Some(q) => q,
                    None => (self.temp(Class::RPair), self.temp(Class::RPair)),
                };
                self.check_quad_flags(inst, flags)?;
                let (base, off) = self.quad_base(arg, offset);
                let b = self.mem_bundle(forms::LD_RI, forms::LDL_RI, base, off).set(MEM_DTYPE, MEMDType::_128).def_quad(LOAD_RD, lo, hi);
                self.emit_b(b);
                self.vcode.has_quads = true;
                Ok(true)
            }
            InstructionData::Store { opcode: Opcode::Store, flags, args: [v, addr], offset } if is128(v) => {
                self.check_quad_flags(inst, flags)?;
                let def = match f.dfg.value_def(f.dfg.resolve_aliases(v)) {
                    ValueDef::Result(i, 0) => f.dfg.insts[i],
                    _ => return Err(self.err(inst, "an i128 stored that is not an iconcat")),
                };
                let InstructionData::Binary { opcode: Opcode::Iconcat, args: [a, b] } = def else {
                    return Err(self.err(inst, "an i128 stored that is not an iconcat"));
                };
                let (base, off) = self.quad_base(addr, offset);
                let (lo, hi) = (self.use_value(a), self.use_value(b));
                if lo == hi {
                    // One pair cannot be both halves of a quad: two `.64`
                    // stores of it.
                    self.store(&Opcode::Store, flags, a, base, off);
                    self.store(&Opcode::Store, flags, b, base, off + 8);
                    return Ok(true);
                }
                let b = self.mem_bundle(forms::ST_RIR, forms::STL_RIR, base, off).set(MEM_DTYPE, MEMDType::_128).use_quad(STORE_RB, lo, hi);
                self.emit_b(b);
                self.vcode.has_quads = true;
                Ok(true)
            }
            _ => Ok(false),
        }
    }

    /// `legalize_i128` keeps only aligned little-endian `i128` accesses.
    fn check_quad_flags(&self, inst: ir::Inst, flags: MemFlags) -> Result<(), LowerError> {
        let fd = &self.f.dfg.mem_flags[flags];
        if !fd.aligned() || fd.endianness(Endianness::Little) != Endianness::Little {
            return Err(self.err(inst, "an i128 access that is not aligned and little-endian"));
        }
        Ok(())
    }

    /// The base and offset of a `.128` access at `addr + offset`, as the
    /// rules of `memory.isle` choose them for the other widths.
    fn quad_base(&mut self, addr: Value, offset: Offset32) -> (Base, i64) {
        let f = self.f;
        let off = i64::from(offset);
        if let ValueDef::Result(i, 0) = f.dfg.value_def(f.dfg.resolve_aliases(addr)) {
            if let InstructionData::StackAddr { stack_slot, offset: so, .. } = f.dfg.insts[i] {
                return (Base::Stack, self.slot_offset(stack_slot) + i64::from(so) + off);
            }
        }
        let r = self.use_value(addr);
        if f.dfg.value_type(addr) == types::I64 {
            (self.base64(r), off)
        } else {
            (Base::Local(r), off)
        }
    }

    /// `stack_addr`: `R1 + offset` as a local address (i32) or as a generic
    /// address in the local window (i64).
    pub fn stack_slot_addr(&mut self, ty: Type, ss: StackSlot, off: i64) -> VReg {
        let o = self.slot_offset(ss) + off;
        self.sp_plus(ty, o)
    }

    /// `get_stack_pointer`: `R1` (after the prologue) as a local address
    /// (i32) or as a generic address in the local window (i64).
    pub fn stack_pointer(&mut self, ty: Type) -> VReg {
        self.sp_plus(ty, 0)
    }

    /// `R1 + o` as a local address (i32) or in the local window (i64).
    fn sp_plus(&mut self, ty: Type, o: i64) -> VReg {
        let o = o as u32 as u64;
        if ty == types::I64 {
            let d = self.temp(Class::RPair);
            self.emit_b(
                Bundle::new()
                    .inst(forms::IADD_RI)
                    .def(IADD_RI::RD, d)
                    .set(IADD_RI::RA, R(abi::SP as u8))
                    .set(IADD_RI::VB, o)
                    .inst(forms::MOV_I)
                    .def_hi(MOV_I::RD, d)
                    .set(MOV_I::VB, LOCAL_WINDOW_HI),
            );
            d
        } else {
            let d = self.temp(Class::R);
            self.emit_b(Bundle::new().inst(forms::IADD_RI).def(IADD_RI::RD, d).set(IADD_RI::RA, R(abi::SP as u8)).set(IADD_RI::VB, o));
            d
        }
    }

    /// Reverses the low `bits/8` bytes of `a` (PRMT), sign- or zero-extending
    /// the result from `bits`.
    fn bswap_bits(&mut self, a: VReg, bits: u32, signed: bool) -> VReg {
        let sel = match bits {
            8 => return a,
            16 => {
                if signed {
                    0x8801
                } else {
                    0x4401
                }
            }
            _ => 0x0123,
        };
        // PRMT d, a, RZ, sel: byte i of d = byte (nibble i of sel) of {RZ, a};
        // bit 3 of a nibble replicates the selected byte's sign.
        self.prmt_imm(a, sel)
    }
}

/// A `.128` access on a register quad (`Lower::lower_quad`) as two `.64`
/// accesses, one per pair, at its offset and 8 bytes above: for the
/// allocator that has no quads (regalloc2, `docs/regalloc.md`). None when
/// `m` is no such access or the upper offset does not fit the field.
pub fn split_quad(m: &MInst) -> Option<[MInst; 2]> {
    let (lo, hi) = m.quads().next()?;
    if m.pieces.len() != 1 {
        return None;
    }
    let ofs = m.pieces[0].get(MEM_OFS);
    // SImm24, sign-extended.
    let ofs = ((ofs as i64) << 40) >> 40;
    if ofs + 8 > OFS_MAX {
        return None;
    }
    let mut halves = [m.clone(), m.clone()];
    for (k, h) in halves.iter_mut().enumerate() {
        let (keep, drop) = if k == 0 { (lo, hi) } else { (hi, lo) };
        let at = h.fixups.iter().position(|f| f.opnd as usize == drop)?;
        h.unbind(at);
        if k == 1 {
            // The high pair's `.hi` fixup becomes a whole 64-bit operand.
            let at = h.fixups.iter().position(|f| f.opnd as usize == keep)?;
            let f = h.unbind(at);
            h.bind(f.piece, f.field, f.opnd, false);
            h.pieces[0].set(MEM_OFS, (ofs + 8) as u32 as u64 & 0xff_ffff);
        }
        h.pieces[0].set(MEM_DTYPE, MEMDType::_64);
        h.retain_operands(|j, _, _| j != drop);
    }
    Some(halves)
}
