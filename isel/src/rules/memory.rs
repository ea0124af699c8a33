//! Constructors for `isle/lower/memory.isle`: loads, stores, stack addresses.

use cranelift_codegen::ir::immediates::Offset32;
use cranelift_codegen::ir::{types, Endianness, MemFlags, Opcode, StackSlot, Type, Value};
use ursa_emit::{forms, FormId};

use crate::abi;
use crate::addr_space::Space;
use crate::lower::{InstOutput, Lower};
use crate::vcode::{Bundle, Class, VReg};
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

    /// `stack_addr`: `R1 + offset` as a local address (i32) or as a generic
    /// address in the local window (i64).
    pub fn stack_slot_addr(&mut self, ty: Type, ss: StackSlot, off: i64) -> VReg {
        let o = (self.slot_offset(ss) + off) as u32 as u64;
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
