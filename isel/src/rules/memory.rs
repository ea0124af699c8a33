//! Constructors for `isle/lower/memory.isle`: loads, stores, stack addresses.

use cranelift_codegen::ir::immediates::Offset32;
use cranelift_codegen::ir::{types, Endianness, MemFlags, Opcode, StackSlot, Type, Value};
use ursa_emit::{forms, FormId};

use crate::abi;
use crate::addr_space::Space;
use crate::lower::{InstOutput, Lower};
use crate::vcode::{Bundle, Class, VReg};

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

/// The `dtype` of an access and whether the loaded value is sign-extended to 64 bits.
fn access(op: Opcode, ty: Type) -> Result<(&'static str, u32), String> {
    Ok(match op {
        Opcode::Uload8 | Opcode::Istore8 => ("U8", 8),
        Opcode::Sload8 => ("S8", 8),
        Opcode::Uload16 | Opcode::Istore16 => ("U16", 16),
        Opcode::Sload16 => ("S16", 16),
        Opcode::Uload32 | Opcode::Sload32 | Opcode::Istore32 => ("32", 32),
        Opcode::Load | Opcode::Store => match ty {
            types::I8 => ("U8", 8),
            types::I16 => ("U16", 16),
            types::I32 | types::F32 => ("32", 32),
            types::I64 | types::F64 => ("64", 64),
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
                self.emit_b(Bundle::new().inst(forms::IADD_RI).def("rd", sp).set("ra", abi::SP as u64).set("vb", off as u32 as u64));
                (Base::Local(sp), 0)
            }
        }
    }

    fn mem_bundle(&mut self, form_g: FormId, form_l: FormId, base: Base, off: i64) -> Bundle {
        let (base, off) = self.fit(base, off);
        match base {
            Base::Generic(a) => Bundle::new().inst(form_g).use_("ra", a).set("ofs", off as u32 as u64 & 0xff_ffff),
            Base::Global(a) | Base::Shared(a) => {
                let form = crate::addr_space::space_form(form_g, matches!(base, Base::Shared(_)));
                Bundle::new().inst(form).use_("ra", a).set("ofs", off as u32 as u64 & 0xff_ffff)
            }
            Base::Local(a) => Bundle::new().inst(form_l).use_("ra", a).set("ofs", off as u32 as u64 & 0xff_ffff),
            Base::Stack => Bundle::new().inst(form_l).set("ra", abi::SP as u64).set("ofs", off as u32 as u64 & 0xff_ffff),
        }
    }

    fn load(&mut self, op: &Opcode, ty: Type, flags: MemFlags, base: Base, off: i64) -> VReg {
        let (dtype, bits) = match access(*op, ty) {
            Ok(a) => a,
            Err(m) => return self.unsupported(m),
        };
        let wide = ty == types::I64 || ty == types::F64;
        let big = self.f.dfg.mem_flags[flags].endianness(Endianness::Little) == Endianness::Big;
        let b = self.mem_bundle(forms::LD_RI, forms::LDL_RI, base, off).named("dtype", dtype);
        if bits == 64 {
            let d = self.temp(Class::RPair);
            self.emit_b(b.def("rd", d));
            return if big { self.bswap64(d) } else { d };
        }
        let lo = self.temp(Class::R);
        self.emit_b(b.def("rd", lo));
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
            r = if bits == 64 { self.bswap64(r) } else if ty == types::I64 { let lo = self.lo32(r); self.bswap_bits(lo, bits, false) } else { self.bswap_bits(r, bits, false) };
        } else if ty == types::I64 && bits < 64 {
            r = self.lo32(r);
        }
        let b = self.mem_bundle(forms::ST_RIR, forms::STL_RIR, base, off).named("dtype", dtype).use_("rb", r);
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
                    .def("rd", d)
                    .set("ra", abi::SP as u64)
                    .set("vb", o)
                    .inst(forms::MOV_I)
                    .def_hi("rd", d)
                    .set("vb", LOCAL_WINDOW_HI),
            );
            d
        } else {
            let d = self.temp(Class::R);
            self.emit_b(Bundle::new().inst(forms::IADD_RI).def("rd", d).set("ra", abi::SP as u64).set("vb", o));
            d
        }
    }

    /// Reverses the low `bits/8` bytes of `a` (PRMT), sign- or zero-extending
    /// the result from `bits`.
    fn bswap_bits(&mut self, a: VReg, bits: u32, signed: bool) -> VReg {
        let sel = match bits {
            8 => return a,
            16 => if signed { 0x8801 } else { 0x4401 },
            _ => 0x0123,
        };
        // PRMT d, a, RZ, sel: byte i of d = byte (nibble i of sel) of {RZ, a};
        // bit 3 of a nibble replicates the selected byte's sign.
        self.prmt_imm(a, sel)
    }
}
