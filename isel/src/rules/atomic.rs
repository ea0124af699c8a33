//! Atomics and fences (`docs/kernels.md`, "Atomics and fences";
//! `docs/isa-extensions.md` §6.15, §6.16, §7.5), lowered in Rust from the
//! driver like calls, because CLIF's atomic formats carry no operand the
//! rule families match on:
//!
//! | CLIF | machine code |
//! |---|---|
//! | `atomic_rmw add/and/or/xor/xchg/umin/umax/smin/smax` (i32, i64) | `MEMBAR.GPU`; `ATOM.ADD/AND/OR/XOR/EXCH/MIN/MAX.{U32,S32,U64,S64} Rd, [Ra], Rb`; `MEMBAR.GPU` |
//! | `atomic_rmw sub` | the same with `ATOM.ADD` of the negated operand |
//! | `atomic_cas` | `MEMBAR.GPU`; `ATOM.CAS Rd, [Ra], Rexpected, Rnew`; `MEMBAR.GPU` |
//! | `atomic_load` | `MEMBAR.GPU`; `LD Rd, [Ra]`; `MEMBAR.GPU` |
//! | `atomic_store` | `MEMBAR.GPU`; `ST [Ra], Rv`; `MEMBAR.GPU` |
//! | `fence` | `MEMBAR.GPU` |
//!
//! CLIF's atomics are sequentially consistent; `ATOM` and single-copy-atomic
//! loads and stores are relaxed (§4.5), so each is fenced on both sides.
//! `ATOM` takes a generic 64-bit address, which reaches global, shared and
//! local memory alike, so atomics need no address-space inference. 8- and
//! 16-bit `atomic_rmw`/`atomic_cas` and `nand` arrive here already rewritten
//! into CAS loops (`ursa_backend::legalize_atomics`); 8- and 16-bit atomic
//! loads and stores are `LD.U8/U16`, `ST.U8/U16`.

use cranelift_codegen::ir::{self, types, AtomicRmwOp, InstructionData, Opcode, Type, Value};
use smallvec::smallvec;
use ursa_emit::forms;

use crate::lower::{InstOutput, Lower};
use crate::vcode::{Bundle, Class, VReg};
use crate::LowerError;
use ursa_emit::forms::{ATOM_RIR, LD_RI, MEMBAR_X, ST_RIR};
use ursa_emit::mods;
use ursa_emit::mods::{AtomOp, IntType, MEMDType};
use ursa_emit::typed::R;

impl Lower<'_> {
    /// The machine code of an atomic or a fence; `None` for other instructions.
    pub fn lower_atomic(&mut self, inst: ir::Inst) -> Result<Option<InstOutput>, LowerError> {
        let f = self.f;
        let err = |m: String| LowerError { inst: Some(f.dfg.display_inst(inst).to_string()), msg: m };
        let data = f.dfg.insts[inst];
        match data {
            InstructionData::NullAry { opcode: Opcode::Fence } => {
                self.membar();
                Ok(Some(smallvec![]))
            }
            InstructionData::AtomicRmw { op, args, .. } => {
                let ty = f.dfg.value_type(args[1]);
                let itype = itype(ty, matches!(op, AtomicRmwOp::Smin | AtomicRmwOp::Smax)).ok_or_else(|| err(width_msg(ty)))?;
                let mode = match op {
                    AtomicRmwOp::Add | AtomicRmwOp::Sub => AtomOp::ADD,
                    AtomicRmwOp::And => AtomOp::AND,
                    AtomicRmwOp::Or => AtomOp::OR,
                    AtomicRmwOp::Xor => AtomOp::XOR,
                    AtomicRmwOp::Xchg => AtomOp::EXCH,
                    AtomicRmwOp::Umin | AtomicRmwOp::Smin => AtomOp::MIN,
                    AtomicRmwOp::Umax | AtomicRmwOp::Smax => AtomOp::MAX,
                    AtomicRmwOp::Nand => return Err(err("atomic_rmw nand is not supported (ATOM has no NAND)".into())),
                };
                let addr = self.atomic_addr(args[0]).ok_or_else(|| err(addr_msg()))?;
                let mut x = self.use_value(args[1]);
                if op == AtomicRmwOp::Sub {
                    x = if ty == types::I64 {
                        let z = self.mov_imm64(0);
                        self.isub64_rr(z, x)
                    } else {
                        self.ineg_r(x)
                    };
                }
                let d = self.temp(class(ty));
                self.membar();
                let b = Bundle::new()
                    .inst(forms::ATOM_RIR)
                    .set(ATOM_RIR::OP, mode)
                    .set(ATOM_RIR::ITYPE, itype)
                    .use_(ATOM_RIR::RA, addr)
                    .use_(ATOM_RIR::RB, x);
                // An old value nobody reads goes to RZ (ATOM RZ, [Ra], Rb).
                let b = if self.is_used(f.dfg.first_result(inst)) {
                    b.def(ATOM_RIR::RD, d)
                } else {
                    b.set(ATOM_RIR::RD, R(ursa_emit::RZ as u8))
                };
                self.emit_b(b);
                self.membar();
                Ok(Some(smallvec![d]))
            }
            InstructionData::AtomicCas { args, .. } => {
                let ty = f.dfg.value_type(args[1]);
                let itype = itype(ty, false).ok_or_else(|| err(width_msg(ty)))?;
                let addr = self.atomic_addr(args[0]).ok_or_else(|| err(addr_msg()))?;
                let (e, n) = (self.use_value(args[1]), self.use_value(args[2]));
                let d = self.temp(class(ty));
                self.membar();
                self.emit_b(
                    Bundle::new()
                        .inst(forms::ATOM_RIR)
                        .set(ATOM_RIR::OP, mods::AtomOp::CAS)
                        .set(ATOM_RIR::ITYPE, itype)
                        .def(ATOM_RIR::RD, d)
                        .use_(ATOM_RIR::RA, addr)
                        .use_(ATOM_RIR::RB, e)
                        .use_(ATOM_RIR::RC, n),
                );
                self.membar();
                Ok(Some(smallvec![d]))
            }
            InstructionData::LoadNoOffset { opcode: Opcode::AtomicLoad, arg, .. } => {
                let ty = f.dfg.value_type(f.dfg.first_result(inst));
                let dtype = dtype(ty).ok_or_else(|| err(width_msg(ty)))?;
                let addr = self.atomic_addr(arg).ok_or_else(|| err(addr_msg()))?;
                let d = self.temp(class(ty));
                self.membar();
                self.emit_b(
                    Bundle::new().inst(forms::LD_RI).set(LD_RI::DTYPE, dtype).def(LD_RI::RD, d).use_(LD_RI::RA, addr).set(LD_RI::OFS, 0),
                );
                self.membar();
                Ok(Some(smallvec![d]))
            }
            InstructionData::StoreNoOffset { opcode: Opcode::AtomicStore, args, .. } => {
                let ty = f.dfg.value_type(args[0]);
                let dtype = dtype(ty).ok_or_else(|| err(width_msg(ty)))?;
                let addr = self.atomic_addr(args[1]).ok_or_else(|| err(addr_msg()))?;
                let v = self.use_value(args[0]);
                self.membar();
                self.emit_b(
                    Bundle::new()
                        .inst(forms::ST_RIR)
                        .set(ST_RIR::DTYPE, dtype)
                        .use_(ST_RIR::RA, addr)
                        .set(ST_RIR::OFS, 0)
                        .use_(ST_RIR::RB, v),
                );
                self.membar();
                Ok(Some(smallvec![]))
            }
            _ => Ok(None),
        }
    }

    fn membar(&mut self) {
        self.emit_b(Bundle::new().inst(forms::MEMBAR_X).set(MEMBAR_X::SCOPE, mods::MembarScope::GPU));
    }

    /// The address of an atomic: a 64-bit generic address (`None` for a
    /// 32-bit one, which ATOM cannot take).
    fn atomic_addr(&mut self, v: Value) -> Option<VReg> {
        (self.f.dfg.value_type(v) == types::I64).then(|| self.use_value(v))
    }
}

fn class(ty: Type) -> Class {
    if ty == types::I64 {
        Class::RPair
    } else {
        Class::R
    }
}

/// ATOM's `.itype` for `ty` (`None`: not 32 or 64 bits).
fn itype(ty: Type, signed: bool) -> Option<IntType> {
    Some(match (ty, signed) {
        (types::I32, false) => IntType::U32,
        (types::I32, true) => IntType::S32,
        (types::I64, false) => IntType::U64,
        (types::I64, true) => IntType::S64,
        _ => return None,
    })
}

/// The load/store `.dtype` of an atomic load or store of `ty` (8- and
/// 16-bit accesses are single-copy atomic too).
fn dtype(ty: Type) -> Option<MEMDType> {
    Some(match ty {
        types::I8 => MEMDType::U8,
        types::I16 => MEMDType::U16,
        types::I32 => MEMDType::_32,
        types::I64 => MEMDType::_64,
        _ => return None,
    })
}

fn width_msg(ty: Type) -> String {
    format!("atomics on {} are not supported (ATOM and atomic loads/stores are 32- or 64-bit)", ty)
}

fn addr_msg() -> String {
    "an atomic needs a 64-bit (generic) address, not a 32-bit local one".into()
}
