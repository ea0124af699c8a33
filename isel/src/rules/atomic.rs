//! Atomics and fences (`docs/kernels.md`, "Atomics and fences";
//! `docs/isa-extensions.md` §6.15, §6.15a, §6.15b, §6.16, §7.5), lowered in
//! Rust from the driver like calls, because CLIF's atomic formats carry no
//! operand the rule families match on:
//!
//! | CLIF | machine code |
//! |---|---|
//! | `atomic_rmw add/and/or/xor/xchg/umin/umax/smin/smax` (i32, i64) | `MEMBAR.GPU`; `ATOM.ADD/AND/OR/XOR/EXCH/MIN/MAX.{U32,S32,U64,S64} Rd, [Ra], Rb`; `MEMBAR.GPU` |
//! | `atomic_rmw sub` | the same with `ATOM.ADD` of the negated operand |
//! | `atomic_cas` | `MEMBAR.GPU`; `ATOM.CAS Rd, [Ra], Rexpected, Rnew`; `MEMBAR.GPU` |
//! | `atomic_load` | `MEMBAR.GPU`; `LD Rd, [Ra]`; `MEMBAR.GPU` |
//! | `atomic_store` | `MEMBAR.GPU`; `ST [Ra], Rv`; `MEMBAR.GPU` |
//! | `fence` | `MEMBAR.GPU` |
//! | `%ursa_atomic_OP_relaxed_T`, `%ursa_atomic_cas_relaxed_T`, `%ursa_atomic_fadd_F` | the `ATOM` alone, no fences (`.F32`/`.F64` for `fadd`) |
//!
//! Which instruction (all three: `ATOM` for what the others cannot do):
//! an address the inference (`addr_space`) knows to be shared takes
//! `ATOMS` on its low word (`RZ` destination when the old value is unused);
//! any other address whose old value is unused takes `RED` (not for `EXCH`
//! and `CAS`, which have no `RED`); the rest `ATOM` on the generic address,
//! which reaches global, shared and local memory alike.
//!
//! CLIF's atomics are sequentially consistent; `ATOM` and single-copy-atomic
//! loads and stores are relaxed (§4.5), so each is fenced on both sides.
//! 8- and 16-bit `atomic_rmw`/`atomic_cas` and `nand` arrive here already
//! rewritten into CAS loops (`ursa_backend::legalize_atomics`); 8- and
//! 16-bit atomic loads and stores are `LD.U8/U16`, `ST.U8/U16`.

use cranelift_codegen::ir::{self, types, AtomicRmwOp, InstructionData, Opcode, Type, Value};
use smallvec::smallvec;
use ursa_emit::forms;

use crate::addr_space::Space;
use crate::intrinsics::AtomicIntr;
use crate::lower::{InstOutput, Lower};
use crate::vcode::{Bundle, Class, VReg};
use crate::LowerError;
use ursa_emit::forms::{ATOMS_RIR, ATOM_RIR, LD_RI, MEMBAR_X, RED_RIR, ST_RIR};
use ursa_emit::mods;
use ursa_emit::mods::{AtomOp, AtomType, MEMDType};
use ursa_emit::typed::R;

/// One read-modify-write, before the instruction is chosen.
struct Rmw {
    addr: Value,
    op: AtomOp,
    ty: AtomType,
    b: VReg,
    /// The CAS swap value.
    c: Option<VReg>,
    /// Whether the old value is read.
    used: bool,
}

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
                if op == AtomicRmwOp::Nand {
                    return Err(err("atomic_rmw nand is not supported (ATOM has no NAND)".into()));
                }
                let used = self.is_used(f.dfg.first_result(inst));
                let d = self.rmw_atomic(AtomicIntr::Rmw(op), args[0], &args[1..], used).map_err(err)?;
                Ok(Some(smallvec![d]))
            }
            InstructionData::AtomicCas { args, .. } => {
                let used = self.is_used(f.dfg.first_result(inst));
                let d = self.rmw_atomic(AtomicIntr::Cas, args[0], &args[1..], used).map_err(err)?;
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

    /// A sequentially consistent read-modify-write of CLIF (`atomic_rmw`,
    /// `atomic_cas`): the atomic between two `MEMBAR.GPU`s. `vals`: the
    /// operand (and for CAS the swap value). The old value in a fresh
    /// register.
    fn rmw_atomic(&mut self, what: AtomicIntr, addr: Value, vals: &[Value], used: bool) -> Result<VReg, String> {
        self.read_modify_write(what, addr, vals, used, true)
    }

    /// A relaxed read-modify-write (an `%ursa_atomic_…` intrinsic): `ATOMS`,
    /// `RED` or `ATOM` without fences.
    pub(crate) fn relaxed_atomic(&mut self, what: AtomicIntr, addr: Value, vals: &[Value], used: bool) -> Result<VReg, String> {
        self.read_modify_write(what, addr, vals, used, false)
    }

    /// The operands of a read-modify-write, then its instruction, between
    /// two `MEMBAR.GPU`s when `fenced`.
    fn read_modify_write(&mut self, what: AtomicIntr, addr: Value, vals: &[Value], used: bool, fenced: bool) -> Result<VReg, String> {
        let ty = self.f.dfg.value_type(vals[0]);
        if self.f.dfg.value_type(addr) != types::I64 {
            return Err(addr_msg());
        }
        let (op, signed) = match what {
            AtomicIntr::Rmw(op) => (
                match op {
                    AtomicRmwOp::Add | AtomicRmwOp::Sub => AtomOp::ADD,
                    AtomicRmwOp::And => AtomOp::AND,
                    AtomicRmwOp::Or => AtomOp::OR,
                    AtomicRmwOp::Xor => AtomOp::XOR,
                    AtomicRmwOp::Xchg => AtomOp::EXCH,
                    AtomicRmwOp::Umin | AtomicRmwOp::Smin => AtomOp::MIN,
                    AtomicRmwOp::Umax | AtomicRmwOp::Smax => AtomOp::MAX,
                    AtomicRmwOp::Nand => return Err("atomic_rmw nand is not supported (ATOM has no NAND)".into()),
                },
                matches!(op, AtomicRmwOp::Smin | AtomicRmwOp::Smax),
            ),
            AtomicIntr::Cas => (AtomOp::CAS, false),
            AtomicIntr::Fadd => (AtomOp::ADD, false),
        };
        let aty = atom_type(ty, signed).ok_or_else(|| width_msg(ty))?;
        let mut b = self.use_value(vals[0]);
        if what == AtomicIntr::Rmw(AtomicRmwOp::Sub) {
            b = if ty == types::I64 {
                let z = self.mov_imm64(0);
                self.isub64_rr(z, b)
            } else {
                self.ineg_r(b)
            };
        }
        let c = vals.get(1).map(|&v| self.use_value(v));
        if fenced {
            self.membar();
        }
        let d = self.atom(Rmw { addr, op, ty: aty, b, c, used });
        if fenced {
            self.membar();
        }
        Ok(d)
    }

    /// Emits the instruction of `rmw`: `ATOMS` on a shared address, `RED`
    /// when the old value is unused (and the operation has a `RED`), else
    /// `ATOM`. The old value in a fresh register (unwritten when unused).
    fn atom(&mut self, rmw: Rmw) -> VReg {
        let wide = matches!(rmw.ty, AtomType::S64 | AtomType::U64 | AtomType::F64);
        let d = self.temp(if wide { Class::RPair } else { Class::R });
        let a = self.use_value(rmw.addr);
        let shared = self.spaces[self.f.dfg.resolve_aliases(rmw.addr)] == Space::Shared;
        let has_red = !matches!(rmw.op, AtomOp::EXCH | AtomOp::CAS);
        let b = if !shared && !rmw.used && has_red {
            Bundle::new().inst(forms::RED_RIR).set(RED_RIR::OFS, 0).use_(RED_RIR::RA, a).use_(RED_RIR::RB, rmw.b)
        } else {
            let b = if shared {
                // The shared window's low word is the shared address.
                Bundle::new().inst(forms::ATOMS_RIR)
            } else {
                Bundle::new().inst(forms::ATOM_RIR)
            };
            let b =
                b.set([ATOM_RIR::OFS, ATOMS_RIR::OFS], 0).use_([ATOM_RIR::RA, ATOMS_RIR::RA], a).use_([ATOM_RIR::RB, ATOMS_RIR::RB], rmw.b);
            let b = match rmw.c {
                Some(c) => b.use_([ATOM_RIR::RC, ATOMS_RIR::RC], c),
                None => b,
            };
            // An old value nobody reads goes to RZ (ATOM RZ, [Ra], Rb).
            if rmw.used {
                b.def([ATOM_RIR::RD, ATOMS_RIR::RD], d)
            } else {
                b.set([ATOM_RIR::RD, ATOMS_RIR::RD], R(ursa_emit::RZ as u8))
            }
        };
        self.emit_b(
            b.set([ATOM_RIR::OP, ATOMS_RIR::OP, RED_RIR::OP], rmw.op).set([ATOM_RIR::ITYPE, ATOMS_RIR::ITYPE, RED_RIR::ITYPE], rmw.ty),
        );
        d
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
    if ty == types::I64 || ty == types::F64 {
        Class::RPair
    } else {
        Class::R
    }
}

/// ATOM's `.itype` for `ty` (`None`: not 32 or 64 bits).
fn atom_type(ty: Type, signed: bool) -> Option<AtomType> {
    Some(match (ty, signed) {
        (types::I32, false) => AtomType::U32,
        (types::I32, true) => AtomType::S32,
        (types::I64, false) => AtomType::U64,
        (types::I64, true) => AtomType::S64,
        (types::F32, _) => AtomType::F32,
        (types::F64, _) => AtomType::F64,
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
