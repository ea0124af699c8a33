//! Address-space inference: which memory space (global, shared, local) a
//! 64-bit address value points into, so that a load or store can use
//! `LDG`/`STG`, `LDS`/`STS` or `LDL`/`STL` instead of the generic `LD`/`ST`
//! (`docs/kernels.md`, "Address spaces").
//!
//! CLIF has no pointer types, so the space of a value is derived from where
//! it comes from, by a forward dataflow analysis over the whole function
//! (iterated to a fixed point through block parameters):
//!
//! * a kernel's `i64` parameter is a **global** address (kernel pointer
//!   parameters point to global memory, as in CUDA);
//! * `global_value` of a shared-memory symbol (`%ursa_shared_NAME`) is a
//!   **shared** address (in the generic shared window);
//! * `stack_addr` (i64) is a **local** address (in the generic local window);
//! * `iadd`/`band`/`bor`/`bxor` of an address and a plain integer keep the
//!   address's space, and so does `isub` of an integer from an address;
//! * `select` and block parameters keep a space all their inputs share;
//! * every value read from memory or returned by a call, a device
//!   function's parameters, and anything mixing two spaces (or two
//!   addresses) are **unknown**: their accesses stay generic;
//! * the results of all other instructions (constants, multiplications,
//!   extensions, thread indices …) are plain integers.

use cranelift_codegen::entity::SecondaryMap;
use cranelift_codegen::ir::{self, types, Function, GlobalValueData, InstructionData, Opcode, Value};
use ursa_emit::forms::MOV_I;

/// What the analysis knows of a value.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Space {
    /// Not reached yet (the optimistic start of the fixed point).
    #[default]
    Undef,
    /// A plain integer, no address.
    Int,
    /// An address in global memory.
    Global,
    /// A generic address in the shared window.
    Shared,
    /// A generic address in the local window.
    Local,
    /// Possibly an address of any space.
    Unknown,
}

impl Space {
    fn is_addr(self) -> bool {
        matches!(self, Space::Global | Space::Shared | Space::Local)
    }
}

/// The reserved symbol prefix of a static shared-memory variable.
pub const SHARED_PREFIX: &str = "ursa_shared_";

/// The variable name (`tile` for `%ursa_shared_tile`) when `gv` is a symbol
/// global value naming a shared-memory variable.
pub fn shared_var(f: &Function, gv: ir::GlobalValue) -> Option<String> {
    symbol_name(f, gv)?.strip_prefix(SHARED_PREFIX).map(str::to_string)
}

/// The name a symbol global value refers to (`%x` as `x`), if it has one.
pub fn symbol_name(f: &Function, gv: ir::GlobalValue) -> Option<String> {
    let GlobalValueData::Symbol { name, .. } = &f.global_values[gv] else { return None };
    let text = match name {
        ir::ExternalName::User(r) => f.params.user_named_funcs().get(*r)?.to_string(),
        ir::ExternalName::TestCase(tc) => tc.to_string(),
        _ => return None,
    };
    Some(text.strip_prefix('%').map(str::to_string).unwrap_or(text))
}

/// `a + b` (also the bitwise operations, which keep an address's space when
/// masking or tagging it with an integer).
fn add(a: Space, b: Space) -> Space {
    match (a, b) {
        (Space::Undef, _) | (_, Space::Undef) => Space::Undef,
        (Space::Int, x) | (x, Space::Int) => x,
        _ => Space::Unknown,
    }
}

/// `a - b`.
fn sub(a: Space, b: Space) -> Space {
    match (a, b) {
        (Space::Undef, _) | (_, Space::Undef) => Space::Undef,
        (x, Space::Int) => x,
        // The distance between two addresses of one space.
        (x, y) if x == y && x.is_addr() => Space::Int,
        _ => Space::Unknown,
    }
}

/// A value that is one of `a` and `b` (select, block parameter).
fn merge(a: Space, b: Space) -> Space {
    match (a, b) {
        (Space::Undef, x) | (x, Space::Undef) => x,
        (x, y) if x == y => x,
        _ => Space::Unknown,
    }
}

/// The space of every value of `f`; `kernel`: `f` is a kernel (its `i64`
/// parameters are global addresses).
pub fn infer(f: &Function, kernel: bool) -> SecondaryMap<Value, Space> {
    let mut s: SecondaryMap<Value, Space> = SecondaryMap::new();
    let Some(entry) = f.layout.entry_block() else { return s };
    // Only loads and stores ask for a space (`Lower::mem_addr_space`):
    // without them the (default, `Undef`) empty table is never read.
    let accesses = f.layout.blocks().flat_map(|b| f.layout.block_insts(b)).any(|i| {
        let op = f.dfg.insts[i].opcode();
        op.can_load() || op.can_store()
    });
    if !accesses {
        return s;
    }
    let nvalues = f.dfg.num_values();
    s.resize(nvalues);
    for &p in f.dfg.block_params(entry) {
        s[p] = match (kernel, f.dfg.value_type(p)) {
            (true, types::I64) => Space::Global,
            (true, _) => Space::Int,
            (false, _) => Space::Unknown,
        };
    }
    // Each value only rises (Undef → a space → Unknown), so this ends.
    let mut changed = true;
    while changed {
        changed = false;
        let mut set = |s: &mut SecondaryMap<Value, Space>, v: Value, x: Space| {
            if s[v] != x {
                s[v] = x;
                changed = true;
            }
        };
        for b in f.layout.blocks() {
            for inst in f.layout.block_insts(b) {
                let data = &f.dfg.insts[inst];
                let args = f.dfg.inst_args(inst);
                let get = |s: &SecondaryMap<Value, Space>, i: usize| s[f.dfg.resolve_aliases(args[i])];
                let x = match (data, data.opcode()) {
                    (_, Opcode::Iadd | Opcode::Band | Opcode::Bor | Opcode::Bxor) => add(get(&s, 0), get(&s, 1)),
                    (_, Opcode::Isub) => sub(get(&s, 0), get(&s, 1)),
                    (_, Opcode::Select | Opcode::SelectSpectreGuard) => merge(get(&s, 1), get(&s, 2)),
                    (_, Opcode::Bitcast) => get(&s, 0),
                    (_, Opcode::StackAddr) => Space::Local,
                    (InstructionData::UnaryGlobalValue { global_value, .. }, _) => {
                        if shared_var(f, *global_value).is_some() {
                            Space::Shared
                        } else {
                            Space::Unknown
                        }
                    }
                    (_, op) if op.can_load() || op.is_call() => Space::Unknown,
                    _ => Space::Int,
                };
                for &r in f.dfg.inst_results(inst) {
                    set(&mut s, r, x);
                }
                // Edges: a block parameter merges the arguments it receives.
                for bc in data.branch_destination(&f.dfg.jump_tables, &f.dfg.exception_tables) {
                    let target = bc.block(&f.dfg.value_lists);
                    let params = f.dfg.block_params(target);
                    for (k, a) in bc.args(&f.dfg.value_lists).enumerate() {
                        let Some(&p) = params.get(k) else { continue };
                        let x = match a {
                            ir::BlockArg::Value(v) => s[f.dfg.resolve_aliases(v)],
                            _ => Space::Unknown,
                        };
                        let m = merge(s[p], x);
                        set(&mut s, p, m);
                    }
                }
            }
        }
    }
    s
}

/// The `LDG`/`STG` (or with `shared`, `LDS`/`STS`) form of a generic
/// `LD_RI`/`ST_RIR` form.
pub fn space_form(generic: ursa_emit::FormId, shared: bool) -> ursa_emit::FormId {
    use ursa_emit::forms;
    match (generic == forms::LD_RI, shared) {
        (true, false) => forms::LDG_RI,
        (true, true) => forms::LDS_RI,
        (false, false) => forms::STG_RIR,
        (false, true) => forms::STS_RIR,
    }
}

impl crate::lower::Lower<'_> {
    /// The inferred space of the address of the load or store being lowered.
    pub fn mem_addr_space(&self) -> Space {
        let Some(inst) = self.cur_inst else { return Space::Unknown };
        let addr = match self.f.dfg.insts[inst] {
            InstructionData::Load { arg, .. } => arg,
            InstructionData::Store { args, .. } => args[1],
            _ => return Space::Unknown,
        };
        self.spaces[self.f.dfg.resolve_aliases(addr)]
    }
}

impl crate::lower::Lower<'_> {
    /// `global_value.i64` of the shared variable `name`: its generic address
    /// (low word the shared offset, high word the shared window).
    pub fn shared_address(&mut self, inst: ir::Inst, gv: ir::GlobalValue, name: &str) -> Result<crate::vcode::VReg, crate::LowerError> {
        use crate::vcode::{Bundle, Class};
        let err = |m: String| crate::LowerError { inst: Some(self.f.dfg.display_inst(inst).to_string()), msg: m };
        let ty = self.f.dfg.value_type(self.f.dfg.first_result(inst));
        if ty != types::I64 {
            return Err(err(format!("the address of a shared variable is an i64 (a generic address), not {}", ty)));
        }
        // Shared memory belongs to the CTA, not to a thread: a thread-local
        // view of it has no address to give.
        let tls = matches!(self.f.global_values[gv], GlobalValueData::Symbol { tls: true, .. });
        if tls || self.f.dfg.insts[inst].opcode() == Opcode::TlsValue {
            return Err(err(format!(
                "shared variable %{}{} cannot be thread-local (`symbol tls`, `tls_value`): it is one for the whole CTA; \
                 declare it `symbol %{}{}` and take its address with `symbol_value.i64`",
                SHARED_PREFIX, name, SHARED_PREFIX, name
            )));
        }
        let Some(&base) = self.shared_offsets.get(name) else {
            return Err(err(format!("shared variable %{}{} has no `; ursa.shared` directive", SHARED_PREFIX, name)));
        };
        let GlobalValueData::Symbol { offset, .. } = self.f.global_values[gv] else { unreachable!("shared_var is a symbol") };
        let lo = (base as i64).wrapping_add(offset.bits()) as u32;
        let d = self.temp(Class::RPair);
        self.emit_b(
            Bundle::new()
                .inst(ursa_emit::forms::MOV_I)
                .def(MOV_I::RD, d)
                .set(MOV_I::VB, lo as u64)
                .inst(ursa_emit::forms::MOV_I)
                .def_hi(MOV_I::RD, d)
                .set(MOV_I::VB, SHARED_WINDOW_HI),
        );
        Ok(d)
    }
}

impl crate::lower::Lower<'_> {
    /// `symbol_value.i64` of a data object in global or constant memory
    /// whose address is entry `slot` (a byte offset) of the address table,
    /// constant bank 14: `MOV.64 R, c[0xe][slot]`, plus the symbol's offset.
    pub fn data_address(
        &mut self,
        inst: ir::Inst,
        gv: ir::GlobalValue,
        name: &str,
        slot: u32,
    ) -> Result<crate::vcode::VReg, crate::LowerError> {
        use crate::vcode::{Bundle, Class};
        use ursa_emit::forms::MOV_C;
        let err = |m: String| crate::LowerError { inst: Some(self.f.dfg.display_inst(inst).to_string()), msg: m };
        let ty = self.f.dfg.value_type(self.f.dfg.first_result(inst));
        let GlobalValueData::Symbol { offset, tls, .. } = self.f.global_values[gv] else { unreachable!("a data object is a symbol") };
        if ty != types::I64 {
            return Err(err(format!("the address of data object %{} is an i64 (a generic address), not {}", name, ty)));
        }
        if tls || self.f.dfg.insts[inst].opcode() == Opcode::TlsValue {
            return Err(err(format!("data object %{} cannot be thread-local: Ursa has no thread-local data objects", name)));
        }
        let d = self.temp(Class::RPair);
        let cmem = (u64::from(ursa_emit::elf::ADDRESS_BANK) << 16) | u64::from(slot);
        self.emit_b(
            Bundle::new()
                .inst(ursa_emit::forms::MOV_C)
                .def(MOV_C::RD, d)
                .set(MOV_C::VB, cmem)
                .set(MOV_C::WIDTH, ursa_emit::mods::MOVW::_64),
        );
        Ok(if offset.bits() == 0 { d } else { self.iadd64_ri(d, offset.bits() as u64) })
    }
}

impl crate::lower::Lower<'_> {
    /// The bank-3 offset of `v` when it is `symbol_value` of a read-only data
    /// object (plus the symbol's offset).
    fn constant_address(&self, v: Value) -> Option<i64> {
        let f = self.f;
        let ir::ValueDef::Result(i, 0) = f.dfg.value_def(f.dfg.resolve_aliases(v)) else { return None };
        let InstructionData::UnaryGlobalValue { opcode: Opcode::SymbolValue, global_value } = f.dfg.insts[i] else { return None };
        let GlobalValueData::Symbol { offset, tls: false, .. } = f.global_values[global_value] else { return None };
        let base = *self.data.constants.get(&symbol_name(f, global_value)?)?;
        i64::from(base).checked_add(offset.bits())
    }

    /// A 32- or 64-bit `load` from a read-only data object the compiler can
    /// see — at `symbol_value` (plus constant offsets: `MOV R, c[0x3][o]`,
    /// which `opt_fold_cmem` may fold into its users) or at `symbol_value`
    /// plus an index (`LDC R, c[0x3][Ri + o]`, the index's low word) — read
    /// from constant bank 3 instead of the object's copy in global memory
    /// (the same bytes: device code does not store to a read-only object,
    /// and each launch refills the bank). `None`: an ordinary load.
    pub fn constant_load(&mut self, inst: ir::Inst) -> Option<crate::lower::InstOutput> {
        use crate::vcode::{Bundle, Class};
        use ursa_emit::forms::{LDC_RC, MOV_C};
        use ursa_emit::mods::{MEMDType, MOVW};
        if self.data.constants.is_empty() {
            return None;
        }
        let f = self.f;
        let InstructionData::Load { opcode: Opcode::Load, arg, flags, offset } = f.dfg.insts[inst] else { return None };
        if f.dfg.mem_flags[flags].endianness(ir::Endianness::Little) == ir::Endianness::Big {
            return None;
        }
        let bytes: i64 = match f.dfg.value_type(f.dfg.first_result(inst)) {
            types::I32 | types::F32 => 4,
            types::I64 | types::F64 => 8,
            _ => return None,
        };
        let (base, index) = match self.constant_address(arg) {
            Some(b) => (b, None),
            None => {
                let ir::ValueDef::Result(i, 0) = f.dfg.value_def(f.dfg.resolve_aliases(arg)) else { return None };
                let InstructionData::Binary { opcode: Opcode::Iadd, args: [x, y] } = f.dfg.insts[i] else { return None };
                match (self.constant_address(x), self.constant_address(y)) {
                    (Some(b), _) => (b, Some(y)),
                    (None, Some(b)) => (b, Some(x)),
                    _ => return None,
                }
            }
        };
        let off = base.checked_add(i64::from(offset))?;
        if off < 0 || off + bytes > i64::from(ursa_emit::elf::BANK_BYTES) || off % bytes != 0 {
            return None;
        }
        let cmem = (u64::from(ursa_emit::elf::CONSTANT_BANK) << 16) | off as u64;
        let d = self.temp(if bytes == 8 { Class::RPair } else { Class::R });
        match index {
            None => {
                let mut b = Bundle::new().inst(ursa_emit::forms::MOV_C).def(MOV_C::RD, d).set(MOV_C::VB, cmem);
                if bytes == 8 {
                    b = b.set(MOV_C::WIDTH, MOVW::_64);
                }
                self.emit_b(b);
            }
            Some(i) => {
                let r = self.use_value(i);
                let lo = if self.vcode.class(r) == Class::RPair { self.lo32(r) } else { r };
                let dtype = if bytes == 8 { MEMDType::_64 } else { MEMDType::_32 };
                self.emit_b(
                    Bundle::new()
                        .inst(ursa_emit::forms::LDC_RC)
                        .def(LDC_RC::RD, d)
                        .use_(LDC_RC::RA, lo)
                        .set(LDC_RC::VB, cmem)
                        .set(LDC_RC::DTYPE, dtype),
                );
            }
        }
        Some(smallvec::smallvec![d])
    }
}

/// High word of a generic address in the shared window (`docs/isa-extensions.md` §4.3).
pub const SHARED_WINDOW_HI: u64 = 0x0001_0000;
