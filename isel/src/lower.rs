//! The lowering driver: walks a Cranelift function and asks the ISLE rules
//! (`isel/isle/`) for the machine instructions of each instruction.
//!
//! Blocks are lowered in reverse postorder's reverse, and the instructions of
//! a block from last to first, so that when an instruction is reached we know
//! whether any lowered instruction still needs its results: a pure
//! instruction whose results nobody put in a register (because the rules
//! folded it into its users, e.g. an `icmp` into a `brif`) is not lowered.
//! Values get their virtual register when first used; the register an
//! instruction's lowering produces is then made an alias of it.

use rustc_hash::FxHashMap as HashMap;

use cranelift_codegen::entity::SecondaryMap;
use cranelift_codegen::ir::{self, types, Block, Function, InstructionData, Opcode, Type, Value};
use smallvec::{smallvec, SmallVec};

use crate::abi;
use crate::intrinsics;
use crate::vcode::*;
use crate::LowerError;
use ursa_emit::forms::{BAR_I, CALL_I, CALL_R, LDL_RI, LEPC_I, MOV_C, S2R_X, SEL_RI, STL_RIR, VOTE_X};
use ursa_emit::mods;
use ursa_emit::typed::{P, R};

pub type Reg = VReg;
pub type Pred = VReg;
pub use crate::rules::bits::BytePlan;

/// The NaN that `fmin` and `fmax` return when an operand is a NaN, which
/// CLIF leaves open (a compile setting: `docs/float.md`, "NaN and
/// signed-zero rules"). Other results do not depend on it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum FminmaxNan {
    /// The canonical NaN (quiet, positive, zero payload), as RISC-V's
    /// `fmin`/`fmax` give.
    #[default]
    Canonical,
    /// The first operand that is a NaN, made quiet, sign and payload kept,
    /// as AArch64's and s390x's vector `fmin`/`fmax` give.
    FirstOperand,
    /// What Cranelift's x86-64 lowering gives (two SSE `minpd`/`maxpd` and
    /// bit operations): `fmin` the canonical NaN made negative, `fmax` the
    /// canonical NaN with the OR of both operands' sign bits.
    X86,
}

impl FminmaxNan {
    /// The setting's names, as `--fminmax-nan` takes them.
    pub const NAMES: [(&'static str, FminmaxNan); 3] =
        [("canonical", FminmaxNan::Canonical), ("first-operand", FminmaxNan::FirstOperand), ("x86", FminmaxNan::X86)];

    /// The rule called `name` in [`FminmaxNan::NAMES`].
    pub fn from_name(name: &str) -> Option<FminmaxNan> {
        Self::NAMES.iter().find(|(n, _)| *n == name).map(|&(_, v)| v)
    }
}

pub type Unit = ();
pub type InstOutput = SmallVec<[VReg; 2]>;

#[allow(unused_imports, unused_variables, unreachable_patterns, dead_code, clippy::all)]
pub(crate) mod generated {
    use super::*;
    use crate::context::InstData;
    use cranelift_codegen::ir::condcodes::{FloatCC, IntCC};
    use cranelift_codegen::ir::immediates::{Ieee32, Ieee64, Imm64, Offset32};
    use cranelift_codegen::ir::types::*;
    use cranelift_codegen::ir::{FuncRef, Inst, MemFlags, Opcode, SigRef, StackSlot, TrapCode, Type, Value};
    use ursa_emit::mods::I2IDType;
    include!(concat!(env!("OUT_DIR"), "/isle_lower.rs"));
    include!(concat!(env!("OUT_DIR"), "/isle_glue.rs"));
}
pub use generated::{CmpOp, Rnd, Signed, Width};

thread_local! {
    /// The storage of [`Lower::cur`], kept from one function's lowering to
    /// the next on the thread (it is taken empty and given back empty).
    static SPARE_CUR: std::cell::RefCell<Vec<MInst>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// The most instructions `cur` keeps room for between functions.
const KEEP_CUR: usize = 4096;

/// State of lowering one function.
pub struct Lower<'f> {
    pub f: &'f Function,
    pub vcode: VCode,
    /// The register of each value, created at its first use.
    value_reg: SecondaryMap<Value, Option<VReg>>,
    /// Values whose register some lowered instruction reads.
    used: SecondaryMap<Value, bool>,
    /// `alias[v] = w`: vreg `v` is the same register as `w` (`u32::MAX`:
    /// none; a dense table by register number, as every operand is looked
    /// up at the end).
    alias: Vec<u32>,
    /// Machine instructions of the CLIF instruction being lowered, in order.
    pub cur: Vec<MInst>,
    pub cur_inst: Option<ir::Inst>,
    block_map: SecondaryMap<Block, Option<BlockId>>,
    link: Option<VReg>,
    /// Set by a constructor that meets something it cannot lower.
    error: Option<String>,
    /// Lowering a kernel (parameters from constant bank 0, `EXIT`).
    pub kernel: bool,
    /// Lowering at `opt_level=speed` (the rules only it uses are enabled).
    pub speed: bool,
    /// The NaN `fmin`/`fmax` return.
    pub fminmax_nan: FminmaxNan,
    /// The memory space of each address value (`addr_space`).
    pub spaces: SecondaryMap<Value, crate::addr_space::Space>,
    /// Offsets of the static shared-memory variables by name (the
    /// module's table, borrowed: not copied for each function).
    pub shared_offsets: &'f std::collections::HashMap<String, u32>,
    /// Where the data objects in global and constant memory are (borrowed too).
    pub data: &'f crate::DataLayout,
    /// Overflow flags (result 1 of an i32/i64 `uadd_overflow`,
    /// `usub_overflow`, `sadd_overflow`…) that a later instruction of the
    /// same block reads as a predicate (a carry-in, a branch, a select, a
    /// trap): the predicate the defining bundle writes, the carry of an
    /// unsigned one, the flag itself of a signed one (`rules/overflow.rs`).
    pub fused_carry: HashMap<Value, VReg>,
    /// The pairs of an `i128` loaded whole (`rules/memory.rs`,
    /// [`Lower::lower_quad`]): set where its `isplit` is lowered, which
    /// comes first (the lowering goes backwards), read by the load.
    pub(crate) quads: HashMap<Value, (VReg, VReg)>,
    /// How many instructions read each value, counted when a rule first
    /// asks (`rules/preds.rs`).
    pub(crate) use_counts: Option<SecondaryMap<Value, u32>>,
    /// The narrow arguments passed on the stack that a rule asked for
    /// extended to 32 bits, with the extension the first one asked for
    /// ([`Lower::extended_stack_arg`]): set where their uses are lowered,
    /// which come first, read by `lower_args`, which loads them so.
    pub(crate) stack_arg_ext: HashMap<Value, Signed>,
    /// The shift-amount masks made in the block being lowered, as
    /// `(mask register, amount register, bits)` ([`Lower::shift_mask`]):
    /// the block's masks of one amount are made one ([`merge_masks`]).
    pub(crate) block_masks: Vec<(VReg, VReg, u32)>,
}

fn class_of_type(ty: Type) -> Option<Class> {
    match ty {
        types::I8 | types::I16 | types::I32 | types::F32 => Some(Class::R),
        types::I64 | types::F64 => Some(Class::RPair),
        _ => None,
    }
}

impl<'f> Lower<'f> {
    /// Lowering `f` in a module whose static shared-memory variables are at
    /// `shared_offsets` and data objects at `data`.
    pub fn new(f: &'f Function, shared_offsets: &'f std::collections::HashMap<String, u32>, data: &'f crate::DataLayout) -> Lower<'f> {
        // The per-value tables at their final size, so that filling them
        // never reallocates.
        let nvalues = f.dfg.num_values();
        let mut value_reg = SecondaryMap::with_capacity(nvalues);
        value_reg.resize(nvalues);
        let mut used = SecondaryMap::with_capacity(nvalues);
        used.resize(nvalues);
        let classes = Vec::with_capacity(nvalues + nvalues / 2);
        Lower {
            f,
            vcode: VCode { name: clif_name(&f.name), classes, ..Default::default() },
            value_reg,
            used,
            alias: Vec::new(),
            cur: SPARE_CUR.with(|c| c.try_borrow_mut().map(|mut c| std::mem::take(&mut *c)).unwrap_or_default()),
            cur_inst: None,
            block_map: SecondaryMap::new(),
            link: None,
            error: None,
            kernel: false,
            speed: false,
            fminmax_nan: FminmaxNan::Canonical,
            spaces: SecondaryMap::new(),
            shared_offsets,
            data,
            fused_carry: HashMap::default(),
            quads: HashMap::default(),
            use_counts: None,
            stack_arg_ext: HashMap::default(),
            block_masks: Vec::new(),
        }
    }

    pub(crate) fn err(&self, inst: ir::Inst, msg: impl Into<String>) -> LowerError {
        LowerError { inst: Some(self.f.dfg.display_inst(inst).to_string()), msg: msg.into() }
    }

    pub fn ty_err(&self, ty: Type) -> LowerError {
        LowerError { inst: self.cur_inst.map(|i| self.f.dfg.display_inst(i).to_string()), msg: format!("type {} is not supported", ty) }
    }

    /// The virtual register of `v` (created on first request).
    pub fn value_vreg(&mut self, v: Value) -> VReg {
        let v = self.f.dfg.resolve_aliases(v);
        self.resolved_vreg(v)
    }

    /// [`Lower::value_vreg`] of a value that is no alias.
    #[inline]
    fn resolved_vreg(&mut self, v: Value) -> VReg {
        if let Some(r) = self.value_reg[v] {
            return r;
        }
        let ty = self.f.dfg.value_type(v);
        let class = class_of_type(ty).unwrap_or(Class::R);
        let r = self.vcode.new_vreg(class);
        self.value_reg[v] = Some(r);
        r
    }

    /// Does some lowered instruction read `v`? (Its users are lowered first.)
    pub fn is_used(&self, v: Value) -> bool {
        self.used[self.f.dfg.resolve_aliases(v)]
    }

    /// Marks `v` as needed in a register and returns that register.
    pub fn use_value(&mut self, v: Value) -> VReg {
        let v = self.f.dfg.resolve_aliases(v);
        self.used[v] = true;
        self.resolved_vreg(v)
    }

    pub fn push(&mut self, mut m: MInst) {
        self.check_and_tag(&mut m);
        self.cur.push(m);
    }

    /// [`Lower::push`] of a boxed instruction (a finished [`Bundle`]),
    /// moved once, from the box into the list.
    pub fn push_boxed(&mut self, mut m: Box<MInst>) {
        self.check_and_tag(&mut m);
        self.cur.push(*m);
    }

    /// [`Lower::push`] of a copy of an instruction pushed before, its
    /// registers renamed to ones of the same classes: the operand check
    /// holds as it did for the original, and the origin is the original's.
    fn push_copy(&mut self, m: MInst) {
        debug_assert!(self.vcode.check_operands(&m).is_ok() && m.origin == self.cur_inst.map(|i| i.as_u32()));
        self.cur.push(m);
    }

    /// Checks the operands of an instruction about to be pushed and records
    /// the CLIF instruction it comes from.
    fn check_and_tag(&self, m: &mut MInst) {
        if let Err(e) = self.vcode.check_operands(m) {
            panic!("lowering built a bad instruction: {}", e);
        }
        m.origin = self.cur_inst.map(|i| i.as_u32());
    }

    /// A fresh register of `class`.
    pub fn temp(&mut self, class: Class) -> VReg {
        self.vcode.new_vreg(class)
    }

    fn resolve(&self, r: VReg) -> VReg {
        resolve_alias(&self.alias, r)
    }

    /// An operand of a type no register class holds (an `i128` the
    /// narrowing pass did not rewrite, a vector) is an error, reported
    /// before any rule could fail to match on it.
    fn check_operand_types(&self, inst: ir::Inst) -> Result<(), LowerError> {
        for &a in self.f.dfg.inst_args(inst) {
            let ty = self.f.dfg.value_type(a);
            if class_of_type(ty).is_none() {
                return Err(self.err(inst, format!("operand type {} is not supported", ty)));
            }
        }
        Ok(())
    }

    /// Lowers the whole function.
    pub fn run(mut self) -> Result<VCode, LowerError> {
        let f = self.f;
        // A reserved object symbol starts with `ursa` in CLIF too (the
        // mapping only replaces characters or puts `_` in front), so only
        // such a name is mapped before it is checked.
        let clif_name = self.vcode.name.strip_prefix('%').unwrap_or(&self.vcode.name);
        // (The runtime's routines are defined under their reserved names:
        // `compile` refuses those names in the functions it is given.)
        if clif_name.starts_with(&intrinsics::PREFIX[..4]) && !intrinsics::is_runtime_routine(clif_name) {
            intrinsics::check_definition(&object_symbol(clif_name)).map_err(|e| LowerError { inst: None, msg: e.to_string() })?;
        }
        for p in f.signature.params.iter().chain(f.signature.returns.iter()) {
            if class_of_type(p.value_type).is_none() {
                return Err(LowerError { inst: None, msg: format!("signature type {} is not supported", p.value_type) });
            }
        }
        // The area for the stack-passed results of calls at the bottom of
        // the frame (stack-passed arguments go below the stack pointer), then
        // the stack slots. Tail calls return nothing to this frame.
        // (The same walk finds the longest block, for the room `cur` needs.)
        let mut out_words = 0usize;
        let mut longest = 0usize;
        for b in f.layout.blocks() {
            let mut n = 0usize;
            for inst in f.layout.block_insts(b) {
                n += 1;
                let op = f.dfg.insts[inst].opcode();
                if op.is_call() && !op.is_terminator() {
                    let r = f.dfg.inst_results(inst).len();
                    out_words = out_words.max(r.saturating_sub(abi::MAX_REG_ARGS));
                }
            }
            longest = longest.max(n);
        }
        // An instruction lowers to about three machine instructions on
        // average; room for that from the start saves growing (and moving)
        // `cur` in steps.
        self.cur.reserve(3 * longest + 8);
        if !self.kernel {
            self.vcode.incoming_bytes = f.signature.params.len().saturating_sub(abi::MAX_REG_ARGS) as u32 * abi::STACK_ARG_BYTES;
        }
        let mut off = out_words as u32 * abi::STACK_ARG_BYTES;
        off = (off + 15) & !15;
        for (_, ss) in f.sized_stack_slots.iter() {
            let align = slot_alignment(ss);
            off = (off + align - 1) & !(align - 1);
            self.vcode.slots.push(SlotLayout { offset: off, size: ss.size });
            off += ss.size;
        }
        if !f.dynamic_stack_slots.is_empty() {
            return Err(LowerError { inst: None, msg: "dynamic stack slots are not supported".into() });
        }
        self.vcode.slots_size = (off + 15) & !15;

        // Block order: reverse postorder of the reachable blocks; edge-split
        // blocks follow the block whose edge they split.
        let order = cold_last(f, rpo(f));
        // (The block tables at their final size: filling them never grows them.)
        let nblocks = f.dfg.num_blocks();
        let mut npreds: SecondaryMap<Block, u32> = SecondaryMap::with_capacity(nblocks);
        npreds.resize(nblocks);
        self.block_map.resize(nblocks);
        for &b in &order {
            for s in succs(f, b) {
                npreds[s] += 1;
            }
        }
        struct Edge {
            from: Block,
            idx: usize,
        }
        // (Room for a split edge per block: most functions have fewer.)
        let mut layout: Vec<(Option<Block>, Option<Edge>)> = Vec::with_capacity(2 * order.len());
        for &b in &order {
            layout.push((Some(b), None));
            let ss = succs(f, b);
            // regalloc2 needs critical edges split, and also every edge from
            // a branch that has operands (brif's condition, br_table's index)
            // into a block with several predecessors.
            let plain_jump = matches!(f.layout.last_inst(b).map(|t| f.dfg.insts[t].opcode()), Some(Opcode::Jump));
            if ss.len() > 1 || !plain_jump {
                for (i, s) in ss.iter().enumerate() {
                    if npreds[*s] > 1 {
                        layout.push((None, Some(Edge { from: b, idx: i })));
                    }
                }
            }
        }
        for (i, (b, _)) in layout.iter().enumerate() {
            if let Some(b) = b {
                self.block_map[*b] = Some(BlockId(i as u32));
            }
        }
        self.vcode.blocks = (0..layout.len()).map(|_| VBlock::default()).collect();
        // Split blocks: a jump to the real target carrying the edge's arguments.
        let mut split_of: HashMap<(Block, usize), BlockId> = HashMap::default();
        for (i, (_, e)) in layout.iter().enumerate() {
            if let Some(e) = e {
                split_of.insert((e.from, e.idx), BlockId(i as u32));
            }
        }
        // Block params.
        for &b in &order {
            let id = self.block_map[b].unwrap();
            if b == f.layout.entry_block().unwrap() {
                continue;
            }
            let params: Vec<VReg> = f.dfg.block_params(b).iter().map(|&p| self.value_vreg(p)).collect();
            for &p in f.dfg.block_params(b) {
                if class_of_type(f.dfg.value_type(p)).is_none() {
                    return Err(LowerError {
                        inst: None,
                        msg: format!("block parameter of type {} is not supported", f.dfg.value_type(p)),
                    });
                }
            }
            self.vcode.blocks[id.0 as usize].params = params;
            self.vcode.blocks[id.0 as usize].clif = Some(b.as_u32());
        }

        // Lower, last block first.
        let mut starts: Vec<usize> = Vec::with_capacity(longest + 1);
        for li in (0..layout.len()).rev() {
            let (b, e) = &layout[li];
            if let Some(e) = e {
                // Split edge: jump with the edge's block arguments.
                let term = f.layout.last_inst(e.from).unwrap();
                let (target, args) = self.edge(term, e.idx);
                let mut m = MInst::new(Pseudo::Jump);
                let e = m.extra_mut();
                e.targets.push(target);
                e.args.push(args);
                self.vcode.blocks[li].insts = vec![m];
                continue;
            }
            let b = b.unwrap();
            // The machine instructions of the whole block go into `cur`, one
            // group per CLIF instruction in the order they are lowered (last
            // first); `starts` keeps where each group begins, and the groups
            // are then moved into the block once, first group last.
            self.cur.clear();
            starts.clear();
            let mut next = f.layout.last_inst(b);
            while let Some(inst) = next {
                next = f.layout.prev_inst(inst);
                starts.push(self.cur.len());
                self.cur_inst = Some(inst);
                let data = &f.dfg.insts[inst];
                if data.opcode().is_terminator() {
                    self.check_operand_types(inst)?;
                    self.lower_terminator(inst, b, &split_of)?;
                } else {
                    let results = f.dfg.inst_results(inst);
                    let pure = !has_side_effect(f, inst);
                    if pure && results.iter().all(|r| !self.used[*r] && !self.fused_carry.contains_key(r)) {
                        continue;
                    }
                    if self.lower_quad(inst)? {
                        continue;
                    }
                    self.check_operand_types(inst)?;
                    for &r in results {
                        let ty = f.dfg.value_type(r);
                        if class_of_type(ty).is_none() {
                            return Err(self.err(inst, format!("type {} is not supported", ty)));
                        }
                    }
                    let out = match self.lower_special(inst)? {
                        Some(o) => o,
                        None => match generated::constructor_lower(&mut self, inst) {
                            Some(o) => o,
                            None => return Err(self.err(inst, "no lowering rule matches this instruction")),
                        },
                    };
                    if let Some(m) = self.error.take() {
                        return Err(self.err(inst, m));
                    }
                    if out.len() != results.len() {
                        return Err(self.err(inst, "lowering produced the wrong number of results"));
                    }
                    for (i, &r) in results.iter().enumerate() {
                        let want = self.value_vreg(r);
                        let got = self.resolve(out[i]);
                        if want != got {
                            set_alias(&mut self.alias, self.vcode.classes.len(), want, got);
                        }
                    }
                }
            }
            if b == f.layout.entry_block().unwrap() {
                starts.push(self.cur.len());
                self.cur_inst = None;
                self.lower_args(b);
            }
            let mut list: Vec<MInst> = Vec::with_capacity(self.cur.len());
            for &s in starts.iter().rev() {
                list.extend(self.cur.drain(s..));
            }
            if self.block_masks.len() > 1 {
                merge_masks(&mut list, &self.block_masks, &mut self.alias, self.vcode.classes.len());
            }
            self.block_masks.clear();
            self.vcode.blocks[li].insts = list;
        }

        // Successors and predecessors.
        for i in 0..self.vcode.blocks.len() {
            let t: Vec<BlockId> = self.vcode.blocks[i].insts.last().map(|m| m.targets().to_vec()).unwrap_or_default();
            for s in &t {
                self.vcode.blocks[s.0 as usize].preds.push(BlockId(i as u32));
            }
            self.vcode.blocks[i].succs = t;
        }
        // Resolve aliases everywhere.
        let alias = std::mem::take(&mut self.alias);
        let res = |r: VReg| resolve_alias(&alias, r);
        for b in self.vcode.blocks.iter_mut() {
            for p in b.params.iter_mut() {
                *p = res(*p);
            }
            for m in b.insts.iter_mut() {
                m.rename(res);
                for a in m.args_mut() {
                    for v in a.iter_mut() {
                        *v = res(*v);
                    }
                }
            }
        }
        // `cur` (empty now) keeps its room for the next function, unless a
        // huge block made it large.
        let cur = std::mem::take(&mut self.cur);
        if cur.capacity() <= KEEP_CUR {
            SPARE_CUR.with(|c| {
                if let Ok(mut c) = c.try_borrow_mut() {
                    *c = cur;
                }
            });
        }
        Ok(self.vcode)
    }

    /// The amount register `a` of a shift of a narrow type masked to its
    /// low `n` bits ([`Lower::zext_bits`]), recorded for [`merge_masks`].
    pub fn shift_mask(&mut self, a: VReg, n: u32) -> VReg {
        let d = self.zext_bits(a, n);
        if d != a {
            self.block_masks.push((d, a, n));
        }
        d
    }

    /// Target block and arguments of edge `idx` of terminator `term`.
    fn edge(&mut self, term: ir::Inst, idx: usize) -> (BlockId, SmallVec<[VReg; 4]>) {
        let f = self.f;
        let dests = f.dfg.insts[term].branch_destination(&f.dfg.jump_tables, &f.dfg.exception_tables);
        let bc = dests[idx];
        let target = bc.block(&f.dfg.value_lists);
        let mut args = SmallVec::new();
        for a in bc.args(&f.dfg.value_lists) {
            if let ir::BlockArg::Value(v) = a {
                args.push(self.use_value(v));
            }
        }
        (self.block_map[target].expect("branch to an unreachable block"), args)
    }

    fn lower_terminator(&mut self, inst: ir::Inst, b: Block, split_of: &HashMap<(Block, usize), BlockId>) -> Result<(), LowerError> {
        let f = self.f;
        let data = f.dfg.insts[inst];
        let ndest = f.dfg.insts[inst].branch_destination(&f.dfg.jump_tables, &f.dfg.exception_tables).len();
        let mut targets: SmallVec<[BlockId; 2]> = SmallVec::new();
        let mut args: SmallVec<[SmallVec<[VReg; 4]>; 2]> = SmallVec::new();
        for i in 0..ndest {
            if let Some(&s) = split_of.get(&(b, i)) {
                targets.push(s);
                args.push(SmallVec::new());
            } else {
                let (t, a) = self.edge(inst, i);
                targets.push(t);
                args.push(a);
            }
        }
        match data {
            InstructionData::Jump { .. } => {
                let mut m = MInst::new(Pseudo::Jump);
                *m.extra_mut() = Extra { targets, args, sym: None };
                self.push(m);
            }
            InstructionData::Brif { arg, .. } => {
                let p = generated::constructor_cond_pred(self, arg);
                let mut m = Bundle::pseudo(Pseudo::Brif { negate: false, uniform: None }).operand(p, OpKind::Use).build();
                *m.extra_mut() = Extra { targets, args, sym: None };
                self.push(m);
            }
            InstructionData::BranchTable { arg, .. } => {
                let ty = f.dfg.value_type(arg);
                let idx = if ty == types::I64 {
                    // Indices past 2^32 all take the default: clamp with the high word.
                    let r = self.use_value(arg);
                    self.clamp_index64(r)
                } else {
                    let r = self.use_value(arg);
                    self.zext_bits(r, ty.bits())
                };
                let t = self.temp(Class::P);
                let mut m = Bundle::pseudo(Pseudo::Table).operand(idx, OpKind::Use).operand(t, OpKind::Temp).build();
                *m.extra_mut() = Extra { targets, args, sym: None };
                self.push(m);
            }
            InstructionData::MultiAry { opcode: Opcode::Return, .. } if self.kernel => {
                if !f.dfg.inst_args(inst).is_empty() {
                    return Err(self.err(inst, "a kernel cannot return values"));
                }
                self.push(MInst::new(Pseudo::Exit));
            }
            InstructionData::MultiAry { opcode: Opcode::Return, .. } => {
                let vals: Vec<Value> = f.dfg.inst_args(inst).to_vec();
                let mut bundle = Bundle::pseudo(Pseudo::Ret);
                let mut fixed_regs = Vec::new();
                let mut first_store = FirstOfKind::default();
                for (k, &v) in vals.iter().enumerate() {
                    let r = self.use_value(v);
                    if k >= abi::MAX_REG_ARGS {
                        let ofs = (k - abi::MAX_REG_ARGS) as i32 * abi::STACK_ARG_BYTES as i32;
                        self.push_stack_arg(r, ofs, true, true, None, &mut first_store);
                        continue;
                    }
                    fixed_regs.push((r, abi::arg_reg(k)));
                }
                for (r, reg) in fixed_regs {
                    bundle = bundle.fixed(r, OpKind::Use, reg);
                }
                let link = self.link_vreg();
                bundle = bundle.fixed(link, OpKind::Use, abi::LINK);
                self.push(bundle.build());
            }
            InstructionData::Trap { code, .. } => {
                self.push(MInst::new(Pseudo::Trap { code: code.as_raw().get() as u16 }));
            }
            InstructionData::Call { opcode: Opcode::ReturnCall, .. }
            | InstructionData::CallIndirect { opcode: Opcode::ReturnCallIndirect, .. } => {
                self.lower_tail_call(inst)?;
            }
            InstructionData::TryCall { .. } | InstructionData::TryCallIndirect { .. } => {
                return Err(self.err(inst, "a try_call reached instruction selection (legalize_try_calls makes every one a call first)"));
            }
            _ => return Err(self.err(inst, "this control-flow instruction is not supported")),
        }
        Ok(())
    }

    /// `return_call` / `return_call_indirect`: the arguments into the
    /// callee's ABI places and a jump that leaves the return address as it
    /// came (`docs/abi.md`, "Tail calls").
    fn lower_tail_call(&mut self, inst: ir::Inst) -> Result<(), LowerError> {
        let f = self.f;
        if self.kernel {
            return Err(self.err(inst, "a kernel cannot make a tail call"));
        }
        let (callee, args): (Callee, Vec<Value>) = match f.dfg.insts[inst] {
            InstructionData::Call { func_ref, .. } => {
                let name = self
                    .func_name(func_ref)
                    .ok_or_else(|| self.err(inst, "tail call of an external (non-user) function is not supported"))?;
                if intrinsics::is_reserved(&name) {
                    return Err(self.err(inst, "a tail call of a kernel intrinsic is not supported"));
                }
                (Callee::Direct(name), f.dfg.inst_args(inst).to_vec())
            }
            _ => {
                let a = f.dfg.inst_args(inst);
                (Callee::Indirect(a[0]), a[1..].to_vec())
            }
        };
        for &v in &args {
            if class_of_type(f.dfg.value_type(v)).is_none() {
                return Err(self.err(inst, format!("type {} is not supported", f.dfg.value_type(v))));
            }
        }
        let nstack = args.len().saturating_sub(abi::MAX_REG_ARGS);
        if nstack > abi::MAX_TAIL_STACK_ARGS {
            return Err(self.err(
                inst,
                format!("a tail call with more than {} arguments is not supported", abi::MAX_REG_ARGS + abi::MAX_TAIL_STACK_ARGS),
            ));
        }
        let mut fixed = Vec::new();
        let mut stack = Vec::new();
        for (k, &v) in args.iter().enumerate() {
            let r = self.use_value(v);
            if k >= abi::MAX_REG_ARGS {
                stack.push(r);
            } else {
                fixed.push((r, abi::arg_reg(k)));
            }
        }
        let mut b = Bundle::pseudo(Pseudo::TailCall { stack: nstack as u16, indirect: matches!(callee, Callee::Indirect(_)) });
        for (r, reg) in fixed {
            b = b.fixed(r, OpKind::Use, reg);
        }
        let link = self.link_vreg();
        b = b.fixed(link, OpKind::Use, abi::LINK);
        for r in stack {
            b = b.operand(r, OpKind::Use);
        }
        let sym = match callee {
            Callee::Direct(name) => Some(SymRef { piece: 0, symbol: name }),
            Callee::Indirect(a) => {
                let r = self.use_value(a);
                if self.vcode.class(r) != Class::RPair {
                    return Err(self.err(inst, "return_call_indirect through a 32-bit address is not supported"));
                }
                b = b.operand(r, OpKind::Use);
                None
            }
        };
        let mut m = b.build();
        if sym.is_some() {
            m.extra_mut().sym = sym;
        }
        self.push(m);
        Ok(())
    }

    /// Instructions lowered in Rust rather than by rules (calls, whose
    /// operands are fixed by the ABI). `None`: use the rules.
    fn lower_special(&mut self, inst: ir::Inst) -> Result<Option<InstOutput>, LowerError> {
        let f = self.f;
        if let Some(out) = self.lower_atomic(inst)? {
            return Ok(Some(out));
        }
        if let Some(out) = self.constant_load(inst) {
            return Ok(Some(out));
        }
        let (callee, args): (Callee, Vec<Value>) = match f.dfg.insts[inst] {
            InstructionData::Call { func_ref, .. } => {
                let name =
                    self.func_name(func_ref).ok_or_else(|| self.err(inst, "call of an external (non-user) function is not supported"))?;
                let sig = &f.dfg.signatures[f.dfg.ext_funcs[func_ref].signature];
                if let Some(intr) = intrinsics::lookup(&name, sig).map_err(|e| self.err(inst, e.to_string()))? {
                    let args: Vec<Value> = f.dfg.inst_args(inst).to_vec();
                    return self.lower_intrinsic(inst, intr, &args).map(Some);
                }
                (Callee::Direct(name), f.dfg.inst_args(inst).to_vec())
            }
            InstructionData::CallIndirect { .. } => {
                let a = f.dfg.inst_args(inst);
                (Callee::Indirect(a[0]), a[1..].to_vec())
            }
            InstructionData::UnaryGlobalValue { global_value, .. } => {
                if let Some(name) = crate::addr_space::shared_var(f, global_value) {
                    return self.shared_address(inst, global_value, &name).map(|r| Some(smallvec![r]));
                }
                let Some(name) = crate::addr_space::symbol_name(f, global_value) else { return Ok(None) };
                let Some(&slot) = self.data.slots.get(&name) else { return Ok(None) };
                return self.data_address(inst, global_value, &name, slot).map(|r| Some(smallvec![r]));
            }
            InstructionData::FuncAddr { func_ref, .. } => {
                let name = self
                    .func_name(func_ref)
                    .ok_or_else(|| self.err(inst, "address of an external (non-user) function is not supported"))?;
                intrinsics::check_function_name(&name)
                    .map_err(|m| self.err(inst, format!("cannot take the address of %{}: {}", name, m)))?;
                let d = self.temp(Class::RPair);
                let mut m = Bundle::new().inst(ursa_emit::forms::LEPC_I).def(LEPC_I::RD, d).build();
                m.extra_mut().sym = Some(SymRef { piece: 0, symbol: name });
                self.push(m);
                return Ok(Some(smallvec![d]));
            }
            // A bitcast between equal integer types is the value itself.
            InstructionData::LoadNoOffset { opcode: ir::Opcode::Bitcast, arg, .. }
                if f.dfg.value_type(arg) == f.dfg.value_type(f.dfg.first_result(inst)) && f.dfg.value_type(arg).is_int() =>
            {
                return Ok(Some(smallvec![self.use_value(arg)]));
            }
            _ => return Ok(None),
        };
        let results: Vec<Value> = f.dfg.inst_results(inst).to_vec();
        for &v in args.iter().chain(results.iter()) {
            if class_of_type(f.dfg.value_type(v)).is_none() {
                return Err(self.err(inst, format!("type {} is not supported", f.dfg.value_type(v))));
            }
        }
        // Arguments into their ABI pairs.
        let mut fixed = Vec::new();
        let nstack = args.len().saturating_sub(abi::MAX_REG_ARGS);
        let mut first_store = FirstOfKind::default();
        for (k, &v) in args.iter().enumerate() {
            let r = self.use_value(v);
            if k >= abi::MAX_REG_ARGS {
                self.push_stack_arg(r, abi::stack_arg_offset(k - abi::MAX_REG_ARGS, nstack), true, false, None, &mut first_store);
                continue;
            }
            fixed.push((r, abi::arg_reg(k)));
        }
        let mut b = Bundle::pseudo(Pseudo::Call);
        b = match &callee {
            Callee::Direct(_) => b.inst(ursa_emit::forms::CALL_I).set(CALL_I::RD, R(abi::LINK as u8)),
            Callee::Indirect(a) => {
                let r = self.use_value(*a);
                if self.vcode.class(r) != Class::RPair {
                    return Err(self.err(inst, "call_indirect through a 32-bit address is not supported"));
                }
                b.inst(ursa_emit::forms::CALL_R).set(CALL_R::RD, R(abi::LINK as u8)).use_(CALL_R::RA, r)
            }
        };
        for (r, reg) in fixed {
            b = b.fixed(r, OpKind::Use, reg);
        }
        let mut outs = Vec::new();
        let mut stack_results = Vec::new();
        for (k, &v) in results.iter().enumerate() {
            if k >= abi::MAX_REG_ARGS {
                let class = class_of_type(f.dfg.value_type(v)).unwrap();
                let d = self.temp(class);
                stack_results.push((d, (k - abi::MAX_REG_ARGS) as i32 * abi::STACK_ARG_BYTES as i32));
                outs.push(d);
                continue;
            }
            let d = self.temp(class_of_type(f.dfg.value_type(v)).unwrap());
            b = b.fixed(d, OpKind::Def, abi::arg_reg(k));
            outs.push(d);
        }
        let mut m = b.build();
        m.clobbers_all = true;
        if let Callee::Direct(name) = callee {
            m.extra_mut().sym = Some(SymRef { piece: 0, symbol: name });
        }
        self.vcode.makes_calls = true;
        self.push(m);
        let mut first_load = FirstOfKind::default();
        for (d, ofs) in stack_results {
            self.push_stack_arg(d, ofs, false, false, None, &mut first_load);
        }
        Ok(Some(SmallVec::from_vec(outs)))
    }

    /// A store (`store`) or load of a stack-passed argument or result at
    /// `ofs` from the stack pointer at the call: the caller's `[R1 + ofs]`,
    /// or for the callee (`incoming`) `[R1 + ofs]` of its entry `R1`
    /// (`lower_vcode` adds how far `R1` has moved since).
    /// `dtype`: the width of a load (`None`: 32 bits, or 64 for a pair;
    /// the extending ones for a narrow argument, [`Lower::extended_stack_arg`]).
    fn stack_arg(&mut self, r: VReg, ofs: i32, store: bool, incoming: bool, dtype: Option<mods::MEMDType>) -> MInst {
        use ursa_emit::forms;
        let pair = self.vcode.class(r) == Class::RPair;
        let b = if incoming { Bundle::pseudo(Pseudo::FrameRel { offset: ofs }) } else { Bundle::new() };
        let b = if store { b.inst(forms::STL_RIR).use_(STL_RIR::RB, r) } else { b.inst(forms::LDL_RI).def(LDL_RI::RD, r) };
        let b = b.set([LDL_RI::RA, STL_RIR::RA], R(abi::SP as u8)).set([LDL_RI::OFS, STL_RIR::OFS], abi::ofs_field(ofs as i64));
        let dtype = if pair { Some(mods::MEMDType::_64) } else { dtype };
        let b = match dtype {
            Some(d) => b.set([LDL_RI::DTYPE, STL_RIR::DTYPE], d),
            None => b,
        };
        b.build()
    }

    /// Pushes [`Lower::stack_arg`]: the first of each kind (`first`, by
    /// [`stack_arg_kind`]) built, the next ones copies of it (the
    /// stack-passed lanes of a vector repeat one instruction).
    fn push_stack_arg(&mut self, r: VReg, ofs: i32, store: bool, incoming: bool, dtype: Option<mods::MEMDType>, first: &mut FirstOfKind) {
        let first = &mut first[stack_arg_kind(self.vcode.class(r), dtype)];
        match *first {
            Some(at) => {
                let m = restack(&self.cur[at], r, ofs);
                self.push_copy(m);
            }
            None => {
                *first = Some(self.cur.len());
                let m = self.stack_arg(r, ofs, store, incoming, dtype);
                self.push(m);
            }
        }
    }

    /// `v` (alias resolved) if it is a narrow (`i8`, `i16`) argument of a
    /// device function passed on the stack and not yet asked for with the
    /// other extension than `s` ([`Lower::extended_stack_arg`]).
    pub fn stack_arg_extendable(&mut self, s: &Signed, v: Value) -> Option<Value> {
        let f = self.f;
        let v = f.dfg.resolve_aliases(v);
        let ir::ValueDef::Param(b, k) = f.dfg.value_def(v) else { return None };
        let narrow = matches!(f.dfg.value_type(v), types::I8 | types::I16);
        let free = self.stack_arg_ext.get(&v).is_none_or(|e| e == s);
        (!self.kernel && narrow && free && k >= abi::MAX_REG_ARGS && Some(b) == f.layout.entry_block()).then_some(v)
    }

    /// Stack argument `v` ([`Lower::stack_arg_extendable`]) extended to 32
    /// bits as `s` asks: its own register, which `lower_args` loads with the
    /// extending `LDL` (`.S8`, `.U8`, `.S16`, `.U16`) of the first extension
    /// asked for. As the lowering goes backwards, every use is lowered before
    /// the load; the other extension, asked for later, extends the loaded
    /// register by its usual rule (the low bits are the argument's).
    pub fn extended_stack_arg(&mut self, s: &Signed, v: Value) -> VReg {
        self.stack_arg_ext.insert(v, *s);
        self.use_value(v)
    }

    /// A kernel intrinsic's machine instructions; its result (if any) in a
    /// fresh register (a pair for 64-bit types).
    fn lower_intrinsic(&mut self, inst: ir::Inst, intr: intrinsics::Intrinsic, args: &[Value]) -> Result<InstOutput, LowerError> {
        use intrinsics::Intrinsic as I;
        use ursa_emit::forms;
        let d = match intr {
            I::Special(sr) => {
                let d = self.temp(Class::R);
                self.push(Bundle::new().inst(forms::S2R_X).def(S2R_X::RD, d).set(S2R_X::SR, sr).build());
                d
            }
            I::Const0(ofs) => {
                let d = self.temp(Class::R);
                self.push(Bundle::new().inst(forms::MOV_C).def(MOV_C::RD, d).set(MOV_C::VB, ofs as u64).build());
                d
            }
            I::Barrier => {
                self.push(Bundle::new().inst(forms::BAR_I).set(BAR_I::MODE, mods::BarMode::SYNC).set(BAR_I::BARID, 0).build());
                return Ok(smallvec![]);
            }
            I::Clock { wide } => self.clock(wide),
            I::Shuffle(mode, ty) => {
                let v = self.use_value(args[0]);
                if ty.bits() == 64 {
                    // One SHFL per word, with the same lane operand.
                    let (lo, hi) = (self.temp(Class::R), self.temp(Class::R));
                    self.shfl(mode, args[1], v, false, lo);
                    self.shfl(mode, args[1], v, true, hi);
                    self.pair(lo, hi)
                } else {
                    let d = self.temp(Class::R);
                    self.shfl(mode, args[1], v, false, d);
                    d
                }
            }
            I::Vote(_, _) | I::Ballot(_) => {
                let d = self.temp(Class::R);
                // The argument as a predicate: non-zero (a comparison or a
                // tree of them read in its predicate, `cond_pred`).
                let p = generated::constructor_cond_pred(self, args[0]);
                let m = match intr {
                    I::Ballot(_) => Bundle::new()
                        .inst(forms::VOTE_X)
                        .set(VOTE_X::MODE, mods::VoteMode::ANY)
                        .def(VOTE_X::RD, d)
                        .set(VOTE_X::PU, P(ursa_emit::PT as u8))
                        .use_(VOTE_X::PP, p)
                        .build(),
                    I::Vote(mode, _) => {
                        let q = self.temp(Class::P);
                        self.push(
                            Bundle::new()
                                .inst(forms::VOTE_X)
                                .set(VOTE_X::MODE, mode)
                                .set(VOTE_X::RD, R(ursa_emit::RZ as u8))
                                .def(VOTE_X::PU, q)
                                .use_(VOTE_X::PP, p)
                                .build(),
                        );
                        Bundle::new()
                            .inst(forms::SEL_RI)
                            .def(SEL_RI::RD, d)
                            .set(SEL_RI::RA, R(ursa_emit::RZ as u8))
                            .set(SEL_RI::VB, 1)
                            .use_(SEL_RI::PP, q)
                            .set(SEL_RI::PP_NOT, true)
                            .build()
                    }
                    _ => unreachable!(),
                };
                self.push(m);
                d
            }
            I::Fast(m) => {
                let x = self.use_value(args[0]);
                let y = args.get(1).map(|&v| self.use_value(v));
                self.fast_math(m, x, y)
            }
            I::Atomic(what, _) => {
                let used = self.is_used(self.f.dfg.first_result(inst));
                self.relaxed_atomic(what, args[0], &args[1..], used).map_err(|m| self.err(inst, m))?
            }
        };
        Ok(smallvec![d])
    }

    fn func_name(&self, fr: ir::FuncRef) -> Option<String> {
        callee_symbol(self.f, fr)
    }

    /// Records that the current instruction cannot be lowered (reported as
    /// unsupported once its lowering returns); gives a placeholder register.
    pub fn unsupported(&mut self, msg: String) -> VReg {
        self.error.get_or_insert(msg);
        self.temp(Class::R)
    }

    /// The vreg holding the return address (defined by the entry `Args`).
    pub fn link_vreg(&mut self) -> VReg {
        if let Some(r) = self.link {
            return r;
        }
        let r = self.vcode.new_vreg(Class::RPair);
        self.link = Some(r);
        r
    }

    fn lower_args(&mut self, entry: Block) {
        let f = self.f;
        // (Borrowed from the function, which outlives `self`'s borrows.)
        let params: &'f [Value] = f.dfg.block_params(entry);
        if self.kernel {
            // Parameters from the parameter block, laid out like `.param`:
            // each at the next offset aligned to its size (at most 8).
            self.push(MInst::new(Pseudo::Args));
            let mut ofs = 0u64;
            for &p in params {
                let want = self.value_vreg(p);
                let size = (f.dfg.value_type(p).bytes() as u64).max(1);
                let align = size.min(8);
                ofs = ofs.div_ceil(align) * align;
                let cmem = |o: u64| (PARAM_BASE + o) & 0xffff;
                let mut b = Bundle::new().inst(ursa_emit::forms::MOV_C).def(MOV_C::RD, want).set(MOV_C::VB, cmem(ofs));
                if self.vcode.class(want) == Class::RPair {
                    // MOV.64 R[n:n+1], c[0x0][ofs] (erratum E61).
                    b = b.set(MOV_C::WIDTH, mods::MOVW::_64);
                }
                self.push(b.build());
                ofs += size;
            }
            return;
        }
        let mut bundle = Bundle::pseudo(Pseudo::Args);
        let nstack = params.len().saturating_sub(abi::MAX_REG_ARGS);
        let mut stack_params = Vec::with_capacity(nstack);
        for (k, &p) in params.iter().enumerate() {
            let want = self.value_vreg(p);
            if k >= abi::MAX_REG_ARGS {
                // An argument no instruction reads is not loaded (the
                // lowering went backwards: every reader is lowered).
                if self.is_used(p) {
                    stack_params.push((want, abi::stack_arg_offset(k - abi::MAX_REG_ARGS, nstack), p));
                }
                continue;
            }
            // A value of 32 bits or fewer is the slot's low register.
            bundle = bundle.fixed(want, OpKind::Def, abi::arg_reg(k));
        }
        let link = self.link_vreg();
        bundle = bundle.fixed(link, OpKind::Def, abi::LINK);
        self.push(bundle.build());
        // The lanes of a split vector argument repeat one instruction: the
        // loads of each kind are built once, and the other lanes copy the
        // first one pushed (their registers renamed, `push_stack_arg`).
        let mut first_load = FirstOfKind::default();
        for (want, ofs, p) in stack_params {
            let dtype = self.stack_arg_ext.get(&p).map(|s| match (f.dfg.value_type(p) == types::I8, s) {
                (true, Signed::S32) => mods::MEMDType::S8,
                (true, Signed::U32) => mods::MEMDType::U8,
                (false, Signed::S32) => mods::MEMDType::S16,
                (false, Signed::U32) => mods::MEMDType::U16,
            });
            self.push_stack_arg(want, ofs, false, true, dtype, &mut first_load);
        }
    }
}

/// The first stack argument or result load or store of each kind pushed
/// (by [`stack_arg_kind`]), which the next ones of that kind copy.
type FirstOfKind = [Option<usize>; 6];

/// The kind of a stack argument access: a 32-bit register, a pair, or a
/// narrow load extending to 32 bits (`.U8`, `.S8`, `.U16`, `.S16`).
fn stack_arg_kind(class: Class, dtype: Option<mods::MEMDType>) -> usize {
    match (class, dtype) {
        (Class::RPair, _) => 1,
        (_, Some(mods::MEMDType::U8)) => 2,
        (_, Some(mods::MEMDType::S8)) => 3,
        (_, Some(mods::MEMDType::U16)) => 4,
        (_, Some(mods::MEMDType::S16)) => 5,
        _ => 0,
    }
}

/// `m`, a [`Lower::stack_arg`], for register `r` (of the class it
/// stores or loads) at offset `ofs`.
fn restack(m: &MInst, r: VReg, ofs: i32) -> MInst {
    let mut m = m.clone();
    m.rename(|_| r);
    if let Pseudo::FrameRel { offset } = &mut m.pseudo {
        *offset = ofs;
    }
    if let Err(e) = m.pieces[0].try_set([LDL_RI::OFS, STL_RIR::OFS], abi::ofs_field(ofs as i64)) {
        panic!("lowering built a bad instruction: {}", e);
    }
    m
}

/// One mask per amount register and width in a block: each shift of a
/// narrow type masks its amount itself (`shift_amt` in `shifts.isle`), so
/// the lanes of a vector shifted by one scalar amount would mask it once
/// per lane. In `list` (a block, in order), a mask of `masks` whose amount
/// and width an earlier one of the block already masked is dropped, and
/// its register made an alias of the earlier one (`alias`, resolved when
/// the function is lowered; `nregs`, the registers so far). (A mask's
/// register is a fresh one: the only instruction that writes it is the mask.)
fn merge_masks(list: &mut Vec<MInst>, masks: &[(VReg, VReg, u32)], alias: &mut Vec<u32>, nregs: usize) {
    let of: HashMap<VReg, (VReg, u32)> = masks.iter().map(|&(d, a, n)| (d, (a, n))).collect();
    let mut first: HashMap<(VReg, u32), VReg> = HashMap::default();
    let mut dropped = false;
    for o in list.iter().flat_map(|m| m.opnds.iter()).filter(|o| o.kind == OpKind::Def) {
        let Some(&key) = of.get(&o.vreg) else { continue };
        match first.get(&key) {
            Some(&e) => {
                set_alias(alias, nregs, o.vreg, e);
                dropped = true;
            }
            None => {
                first.insert(key, o.vreg);
            }
        }
    }
    if dropped {
        let kept = |v: VReg| of.get(&v).is_none_or(|key| first[key] == v);
        list.retain(|m| m.opnds.iter().all(|o| o.kind != OpKind::Def || kept(o.vreg)));
    }
}

/// Makes register `v` an alias of `w` (`alias`, resolved when the function
/// is lowered; made room for every register so far, `nregs`, at once).
fn set_alias(alias: &mut Vec<u32>, nregs: usize, v: VReg, w: VReg) {
    let i = v.0 as usize;
    if i >= alias.len() {
        alias.resize(nregs.max(i + 1), u32::MAX);
    }
    alias[i] = w.0;
}

/// The alignment a stack slot gets in the frame (the frame itself is
/// 16-byte aligned): the requested one (at most 16), and at least the natural
/// alignment of the widest access that fits (at most 8), so an access at an
/// offset that is a multiple of its size is aligned (`docs/abi.md`).
pub fn slot_alignment(ss: &ir::StackSlotData) -> u32 {
    let natural = ss.size.max(1).next_power_of_two().min(8);
    (1u32 << ss.align_shift.min(4)).max(natural)
}

/// Offset of the kernel parameter block in constant bank 0.
const PARAM_BASE: u64 = 0x160;

/// The symbol a called function has in the object file (see
/// [`object_symbol`]); `None` for functions outside the module (libcalls,
/// known symbols).
pub fn callee_symbol(f: &Function, fr: ir::FuncRef) -> Option<String> {
    let name = match &f.dfg.ext_funcs[fr].name {
        ir::ExternalName::User(r) => f.params.user_named_funcs().get(*r)?.to_string(),
        ir::ExternalName::TestCase(tc) => tc.to_string(),
        _ => return None,
    };
    Some(object_symbol(&name))
}

/// A function's name as CLIF text writes it (`%name`, `u0:1`): what its
/// `Display` gives, without the formatter for the usual test-case name.
pub fn clif_name(name: &ir::UserFuncName) -> String {
    if let ir::UserFuncName::Testcase(t) = name {
        if let Ok(s) = std::str::from_utf8(t.raw()) {
            let mut n = String::with_capacity(s.len() + 1);
            n.push('%');
            n.push_str(s);
            return n;
        }
    }
    name.to_string()
}

/// The object-file symbol of a CLIF function name: `%name` → `name`, and a
/// name assembly can hold (`docs/abi.md`): characters other than letters,
/// digits, `_`, `.` and `$` become `_` (`u0:1` → `u0_1`), and a name that
/// does not start with a letter, `_` or `$` gets `_` in front (`%1` → `_1`).
pub fn object_symbol(clif_name: &str) -> String {
    let s = clif_name.strip_prefix('%').unwrap_or(clif_name);
    // Most names are already symbols: copied as they are.
    let plain = |b: u8| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'$');
    if s.bytes().all(plain) && s.bytes().next().is_some_and(|b| b.is_ascii_alphabetic() || b == b'_' || b == b'$') {
        return s.to_owned();
    }
    let map = |c: char| if c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '$') { c } else { '_' };
    // Written once into room for all of it (not grown character by character).
    let mut out = String::with_capacity(s.len() + 1);
    if !s.chars().next().map(map).is_some_and(|c| c.is_ascii_alphabetic() || c == '_' || c == '$') {
        out.push('_');
    }
    out.extend(s.chars().map(map));
    out
}

enum Callee {
    Direct(String),
    Indirect(Value),
}

/// The register `r` is an alias of, following the chain (`Lower::alias`).
fn resolve_alias(alias: &[u32], mut r: VReg) -> VReg {
    while let Some(&n) = alias.get(r.0 as usize).filter(|&&n| n != u32::MAX) {
        r = VReg(n);
    }
    r
}

/// Does the instruction have effects beyond its results (so it must be
/// lowered even if its results are unused)?
fn has_side_effect(f: &Function, inst: ir::Inst) -> bool {
    let op = f.dfg.insts[inst].opcode();
    // A division reaching instruction selection cannot trap: legalize has
    // emitted its traps as separate instructions (`trapz`, `trapnz`).
    let div = matches!(op, Opcode::Udiv | Opcode::Sdiv | Opcode::Urem | Opcode::Srem);
    op.can_store() || op.can_load() || (op.can_trap() && !div) || op.is_call() || op.other_side_effects()
}

fn succs(f: &Function, b: Block) -> SmallVec<[Block; 2]> {
    let mut out = SmallVec::new();
    if let Some(t) = f.layout.last_inst(b) {
        for bc in f.dfg.insts[t].branch_destination(&f.dfg.jump_tables, &f.dfg.exception_tables) {
            out.push(bc.block(&f.dfg.value_lists));
        }
    }
    out
}

/// `order` with the cold blocks (`Layout::is_cold`: the byte-wise paths of
/// possibly misaligned accesses, or blocks the input marks `cold`) moved to
/// the end in their order, so the hot path falls through; only those that
/// dominate no other block (the backward lowering walk must meet every use
/// of a value before its definition).
fn cold_last(f: &Function, order: Vec<Block>) -> Vec<Block> {
    if !order.iter().any(|&b| f.layout.is_cold(b)) {
        return order;
    }
    let cfg = cranelift_codegen::flowgraph::ControlFlowGraph::with_function(f);
    let dt = cranelift_codegen::dominator_tree::DominatorTree::with_function(f, &cfg);
    let movable = |c: Block| f.layout.is_cold(c) && !order.iter().any(|&b| b != c && dt.dominates(c, b, &f.layout));
    let (cold, hot): (Vec<Block>, Vec<Block>) = order.iter().partition(|&&b| movable(b));
    hot.into_iter().chain(cold).collect()
}

/// Reverse postorder of the blocks reachable from the entry.
fn rpo(f: &Function) -> Vec<Block> {
    let Some(entry) = f.layout.entry_block() else { return Vec::new() };
    // (Every table at its final size at once.)
    let n = f.dfg.num_blocks();
    let mut seen: SecondaryMap<Block, bool> = SecondaryMap::with_capacity(n);
    seen.resize(n);
    let mut post = Vec::with_capacity(n);
    crate::order::reverse_postorder_into(entry, |b, i| succs(f, b).get(i).copied(), |b| !std::mem::replace(&mut seen[b], true), &mut post);
    post
}

pub use generated::constructor_cond_pred;
pub use generated::constructor_lower;
pub use generated::Context;

#[cfg(test)]
mod tests {
    use super::object_symbol;

    #[test]
    fn clif_names_are_what_display_writes() {
        use cranelift_codegen::ir::UserFuncName;
        for name in
            [UserFuncName::testcase("add_i32"), UserFuncName::testcase(""), UserFuncName::user(0, 7), UserFuncName::user(3, 4_000_000_000)]
        {
            assert_eq!(super::clif_name(&name), name.to_string());
        }
    }

    #[test]
    fn object_symbols_of_clif_names() {
        for (clif, symbol) in [
            ("%foo", "foo"),
            ("%a.b$c_9", "a.b$c_9"),
            ("%_x", "_x"),
            ("%$x", "$x"),
            ("%u0:1", "u0_1"),
            ("%1", "_1"),
            ("%.x", "_.x"),
            ("%a-b", "a_b"),
            ("%é1", "_1"),
            ("%", "_"),
            ("bare", "bare"),
        ] {
            assert_eq!(object_symbol(clif), symbol, "{}", clif);
        }
    }
}
