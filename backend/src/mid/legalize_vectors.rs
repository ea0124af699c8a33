//! Vector types: every CLIF vector value (`i8x16` … `f64x2`, and the 64-,
//! 32- and 16-bit vectors `i32x2` … `i8x2`) becomes its lanes, one scalar
//! CLIF value per lane, before the other legalizations (so every scalar
//! rule, the `i128` legalizer and `opt_merge_accesses` handle the result).
//! `docs/vectors.md` is the manual; in short:
//!
//! * lane order is Cranelift's: lane 0 first, lane 0 the least significant
//!   (little-endian) when a vector is seen as bits (`bitcast`, memory);
//! * signatures (the function's own and every `SigRef`): a vector parameter
//!   or result becomes its lanes, lane 0 first (`docs/abi.md`); block
//!   parameters and branch arguments likewise;
//! * lane-wise instructions (`iadd`, `fmul`, `ishl` with its scalar amount,
//!   `fma`, `fcvt_*`, …) become the same instruction on each lane;
//!   bitwise ones on float lanes go through the lane's integer bits;
//! * `icmp`/`fcmp` give lane masks (`bmask` of the scalar compare), `select`
//!   takes one scalar condition;
//! * an `aligned` 64- or 128-bit `load`/`store` stays one access (of an
//!   `i64`, or an `i128`, which `legalize_i128` keeps whole: `.128`), its
//!   lanes packed into or sliced from 64-bit words as a `bitcast` does
//!   (32-bit lanes: the halves of each word's pair); other accesses (and
//!   `uload8x8` …) become one access per lane at its offset; a big-endian
//!   access reverses the vector's bytes as a whole (lane k of n at lane
//!   slot n−1−k), as cranelift-interpreter does;
//! * `bitcast` between vectors, or a vector and a scalar, re-slices the
//!   lanes' integers (`Split::reslice`): a narrower lane is a slice of one
//!   wider, a wider one the narrower side by side, and slices of one integer
//!   that come together again in order are that integer;
//! * lane moves (`splat`, `extractlane`, `insertlane`, `shuffle`,
//!   `scalar_to_vector`) pick values; `swizzle` picks a byte of one of the
//!   four 32-bit words by the run-time index (0 when the index is ≥ 16);
//! * reductions (`vany_true`, `vall_true`, `vhigh_bits`), widening and
//!   narrowing (saturating), saturating arithmetic through a wider type or
//!   the overflow flags, `avg_round`, `iadd_pairwise`, `sqmul_round_sat`.
//!
//! * dynamic vectors are first made fixed: the dynamic scale is 1, so
//!   `TxN*gv` is `TxN` and `extract_vector x, 0` is `x`.
//!
//! An instruction without side effects is made once per block
//! (`LaneCursor`): the same constant in every lane, or the same operation
//! on the lanes of a `splat`, is one instruction. Those a vector instruction
//! needs are placed step by step (every lane's first, then every lane's
//! second, …; [`Steps`]), so that its lanes' machine code issues without
//! stalls in that order.
//!
//! A vector instruction this pass does not know is an "unsupported" error
//! naming it. Blocks are rewritten in reverse
//! postorder so that the lanes of every operand exist when its user is
//! rewritten; unreachable blocks that touch vectors become a `trap`.

use rustc_hash::FxHashMap as HashMap;
use smallvec::{smallvec, SmallVec};

use crate::Error;

use cranelift_codegen::cursor::{Cursor, FuncCursor};
use cranelift_codegen::ir::condcodes::{CondCode, IntCC};
use cranelift_codegen::ir::immediates::{Ieee32, Ieee64, Imm64, Offset32};
use cranelift_codegen::ir::types::{F128, F16, F32, F64, I128, I16, I32, I64, I8};
use cranelift_codegen::ir::{
    Block, BlockArg, DataFlowGraph, Endianness, Function, InsertBuilder, Inst, InstBuilder, InstBuilderBase, InstructionData, MemFlagsData,
    Opcode, Type, Value,
};

/// (At most 16 lanes: kept inline, no allocation per vector.)
type Lanes = SmallVec<[Value; 16]>;

/// A lane not made yet: bits `lo ..` of the integer `root`, as an integer
/// of type `t` (`root` itself when `lo` is 0 and `t` its type).
#[derive(Clone, Copy)]
struct Slice {
    root: Value,
    lo: u32,
    t: Type,
}

/// The lanes of a vector that only moves lanes or bits so far
/// ([`Split::virt`]).
type Slices = SmallVec<[Slice; 16]>;

/// What an old result becomes: the lanes of a vector, or one scalar value.
type Rewritten = Result<Lanes, Value>;

/// What each old result of one instruction becomes (most have one).
type Out = SmallVec<[Rewritten; 1]>;

/// Splits every vector value of `f` into its lanes (in place); whether
/// `f` had any.
pub fn legalize_vectors(f: &mut Function) -> Result<bool, Error> {
    // (Scanned once where nothing is dynamic, as in most functions: fixing
    // dynamic vectors leaves fixed ones, so it scans again.)
    let mut vectors = mentions_vectors(f);
    if !f.dfg.dynamic_types.is_empty() || !f.dynamic_stack_slots.is_empty() || vectors && has_dynamic_types(f) {
        fix_dynamic_vectors(f)?;
        vectors = mentions_vectors(f);
    }
    if !vectors {
        return Ok(false);
    }
    // (The scan of the values also finds whether the input has aliases.)
    let mut aliases = false;
    let sig_types = f.signature.params.iter().chain(&f.signature.returns).map(|p| p.value_type);
    if let Some(t) = f
        .dfg
        .values()
        .map(|v| {
            aliases |= f.dfg.value_is_alias(v);
            f.dfg.value_type(v)
        })
        .chain(sig_types)
        .find(|t| t.is_vector() && !matches!(t.lane_type(), I8 | I16 | I32 | I64 | F16 | F32 | F64))
    {
        return Err(Error::unsupported(format!("vector type {} is not supported (its lanes are {})", t, t.lane_type())));
    }
    let Tables { mut map, slices, halves, made, virt, steps } = TABLES.with(|t| std::mem::take(&mut *t.borrow_mut()));
    super::split_signatures_and_params(f, lanes_of, |p, lanes| {
        map.insert(p, Lanes::from_vec(lanes));
    });
    let mut s = Split { map, slices, halves, made, made_in: None, aliases, virt, steps };
    super::rewrite_in_rpo(f, inst_mentions_vectors, |f, inst| s.inst(f, inst))?;
    if s.aliases {
        f.dfg.resolve_all_aliases();
    }
    let Split { mut map, mut slices, mut halves, mut made, mut virt, steps, .. } = s;
    if made.capacity() <= MAX_KEPT {
        map.clear();
        slices.clear();
        halves.clear();
        made.clear();
        virt.clear();
        TABLES.with(|t| *t.borrow_mut() = Tables { map, slices, halves, made, virt, steps });
    }
    super::verify_in_debug(f)?;
    Ok(true)
}

/// The tables of [`Split`], empty, kept from function to function on a
/// thread: maps made anew for every function would rehash at every doubling
/// of their size. (Only looked up, never iterated: their capacity changes
/// nothing in the output.)
#[derive(Default)]
struct Tables {
    map: HashMap<Value, Lanes>,
    slices: HashMap<Value, (Value, u32)>,
    halves: HashMap<(Value, Block), (Value, Value)>,
    made: Made,
    virt: HashMap<Value, Slices>,
    steps: Steps,
}

/// The number of instructions of one block beyond which [`Tables`] are not
/// kept (clearing `made` at every block costs as much as its size).
const MAX_KEPT: usize = 1 << 12;

thread_local! {
    static TABLES: std::cell::RefCell<Tables> = std::cell::RefCell::new(Tables::default());
}

/// Ursa's dynamic scale (`dyn_scale_target_const`): a dynamic vector
/// `TxN*gv` is one fixed `TxN`, as on a fixed-width target whose vectors are
/// the base type's size.
pub const DYNAMIC_SCALE: u32 = 1;

/// The pure instructions made so far in the block being rewritten, by
/// their data and controlling type ([`LaneCursor`]).
type Made = HashMap<(InstructionData, Type), Inst>;

/// The cursor the lanes are made with: an instruction without effects
/// (beyond its results) that repeats one made earlier in the block is that
/// one, not made again, so the same constant in every lane, or the same
/// operation on the lanes of a `splat`, is one instruction.
///
/// The pure instructions it makes wait in [`Steps`] and are placed when the
/// instruction they replace is done ([`LaneCursor::place`]; an instruction
/// with effects places them first): ordered by their step, the lanes of a
/// vector instruction come out one step at a time (every lane's first
/// instruction, then every lane's second, …), not one lane after the other,
/// so that no instruction sits right after the one it waits for and the
/// machine code of the lanes issues without stalls, in the order the
/// pre-allocation scheduler would otherwise have to find.
struct LaneCursor<'f> {
    cur: FuncCursor<'f>,
    made: Made,
    steps: Steps,
}

impl<'f> LaneCursor<'f> {
    fn ins(&mut self) -> SharingBuilder<'_, 'f> {
        SharingBuilder { cur: &mut self.cur, made: &mut self.made, steps: &mut self.steps }
    }

    /// Places the waiting instructions before the cursor, by step (in the
    /// order they were made within a step).
    fn place(&mut self) {
        self.steps.place(&mut self.cur);
    }
}

/// The pure instructions made and not placed yet, each with its step: one
/// more than the latest step of the waiting instructions it reads (0 if it
/// reads none).
struct Steps {
    waiting: Vec<(u32, Inst)>,
    /// By value number: the placing round (`round`) the instruction that
    /// computes it waited in and its step then (a table, not a map: it is
    /// read for every operand of every instruction made; kept from function
    /// to function with the other tables).
    step: Vec<(u32, u32)>,
    round: u32,
}

impl Default for Steps {
    fn default() -> Self {
        // (Round 0 is that of the table's unused entries.)
        Steps { waiting: Vec::new(), step: Vec::new(), round: 1 }
    }
}

impl Steps {
    /// Records `inst`, just made, as waiting.
    fn wait(&mut self, dfg: &DataFlowGraph, inst: Inst) {
        let (round, table) = (self.round, &self.step);
        let of = |a: Value| match table.get(a.as_u32() as usize) {
            Some(&(r, k)) if r == round => Some(k + 1),
            _ => None,
        };
        let step = dfg.inst_args(inst).iter().filter_map(|&a| of(a)).max().unwrap_or(0);
        self.waiting.push((step, inst));
        for &r in dfg.inst_results(inst) {
            let i = r.as_u32() as usize;
            if self.step.len() <= i {
                self.step.resize(dfg.num_values().max(i + 1), (0, 0));
            }
            self.step[i] = (round, step);
        }
    }

    fn place(&mut self, cur: &mut FuncCursor) {
        if self.waiting.is_empty() {
            return;
        }
        // (Stable: within a step, the order they were made in.)
        self.waiting.sort_by_key(|&(k, _)| k);
        let loc = cur.srcloc();
        for &(_, inst) in &self.waiting {
            cur.insert_inst(inst);
            if !loc.is_default() {
                cur.func.set_srcloc(inst, loc);
            }
        }
        self.waiting.clear();
        // A new round: the steps recorded so far are stale.
        self.round = self.round.wrapping_add(1);
        if self.round == 0 {
            self.step.iter_mut().for_each(|e| *e = (0, 0));
            self.round = 1;
        }
    }
}

impl<'f> std::ops::Deref for LaneCursor<'f> {
    type Target = FuncCursor<'f>;
    fn deref(&self) -> &FuncCursor<'f> {
        &self.cur
    }
}

impl<'f> std::ops::DerefMut for LaneCursor<'f> {
    fn deref_mut(&mut self) -> &mut FuncCursor<'f> {
        &mut self.cur
    }
}

/// The instruction builder of [`LaneCursor::ins`].
struct SharingBuilder<'c, 'f> {
    cur: &'c mut FuncCursor<'f>,
    made: &'c mut Made,
    steps: &'c mut Steps,
}

impl<'c, 'f> InstBuilderBase<'c> for SharingBuilder<'c, 'f> {
    fn data_flow_graph(&self) -> &DataFlowGraph {
        &self.cur.func.dfg
    }

    fn data_flow_graph_mut(&mut self) -> &mut DataFlowGraph {
        &mut self.cur.func.dfg
    }

    fn build(mut self, data: InstructionData, ctrl_typevar: Type) -> (Inst, &'c mut DataFlowGraph) {
        let inst = self.build_aux_inst(data, ctrl_typevar);
        (inst, &mut self.cur.func.dfg)
    }

    fn build_aux_inst(&mut self, data: InstructionData, ctrl_typevar: Type) -> Inst {
        let cur = &mut *self.cur;
        if super::has_effect(data.opcode()) {
            // After the pure instructions made before it.
            self.steps.place(cur);
            return InsertBuilder::new(cur).build_aux_inst(data, ctrl_typevar);
        }
        // A lane computed from constants is the constant.
        let (data, ctrl_typevar) = match super::const_eval::eval(&cur.func.dfg, &data, ctrl_typevar) {
            Some((t, bits)) => (InstructionData::UnaryImm { opcode: Opcode::Iconst, imm: Imm64::new(bits as i64) }, t),
            None => (data, ctrl_typevar),
        };
        let steps = &mut *self.steps;
        *self.made.entry((data, ctrl_typevar)).or_insert_with(|| {
            let dfg = &mut cur.func.dfg;
            let inst = dfg.make_inst(data);
            dfg.make_inst_results(inst, ctrl_typevar);
            steps.wait(dfg, inst);
            inst
        })
    }
}

/// Does a value or signature of `f` have a dynamic vector type?
fn has_dynamic_types(f: &Function) -> bool {
    let sigs = std::iter::once(&f.signature).chain(f.dfg.signatures.values());
    super::value_table_has(f, |t| t.is_dynamic_vector())
        || sigs.flat_map(|s| s.params.iter().chain(&s.returns)).any(|p| p.value_type.is_dynamic_vector())
}

/// Dynamic vectors made fixed ([`DYNAMIC_SCALE`] is 1): every value of a
/// dynamic type `TxN*gv` becomes one of `TxN`, `extract_vector x, 0` is `x`,
/// a dynamic stack slot is an explicit slot of `TxN`'s size (aligned to it,
/// at most 16) and `dynamic_stack_addr` its `stack_addr`. A scale other than
/// `dyn_scale_target_const`, and `extract_vector` of a part beyond 0, are
/// "unsupported" errors.
fn fix_dynamic_vectors(f: &mut Function) -> Result<(), Error> {
    use cranelift_codegen::ir::{GlobalValueData, StackSlotData, StackSlotKind};
    for d in f.dfg.dynamic_types.values() {
        if !matches!(f.global_values[d.dynamic_scale], GlobalValueData::DynScaleTargetConst { .. }) {
            return Err(Error::unsupported(format!(
                "the dynamic vector type {}*{} is not supported (its scale is not a `dyn_scale_target_const`)",
                d.base_vector_ty, d.dynamic_scale
            )));
        }
    }
    let sigs = std::iter::once(&f.signature).chain(f.dfg.signatures.values());
    let mut dynamic: Vec<Type> = Vec::new();
    for t in f.dfg.values().map(|v| f.dfg.value_type(v)).chain(sigs.flat_map(|s| s.params.iter().chain(&s.returns)).map(|p| p.value_type)) {
        if t.is_dynamic_vector() && !dynamic.contains(&t) {
            dynamic.push(t);
        }
    }
    for t in dynamic {
        let fixed = t.dynamic_to_vector().ok_or_else(|| Error::unsupported(format!("the dynamic vector type {} is not supported", t)))?;
        super::retype_values(f, t, fixed);
    }
    let slots: Vec<_> = f.dynamic_stack_slots.iter().map(|(s, d)| (s, d.dyn_ty)).collect();
    let mut fixed_slots = HashMap::default();
    for (dss, dt) in slots {
        let Some(t) = f.get_concrete_dynamic_ty(dt).and_then(|t| t.dynamic_to_vector()) else {
            return Err(Error::unsupported(format!("the dynamic stack slot {} of {} is not supported", dss, dt)));
        };
        let size = t.bytes() * DYNAMIC_SCALE;
        let ss = f.create_sized_stack_slot(StackSlotData::new(StackSlotKind::ExplicitSlot, size, size.min(16).trailing_zeros() as u8));
        fixed_slots.insert(dss, ss);
    }
    let blocks: Vec<_> = f.layout.blocks().collect();
    for b in blocks {
        let insts: Vec<Inst> = f.layout.block_insts(b).collect();
        for inst in insts {
            match f.dfg.insts[inst] {
                InstructionData::BinaryImm8 { opcode: Opcode::ExtractVector, arg, imm } => {
                    if u32::from(imm) >= DYNAMIC_SCALE {
                        return Err(unsupported(f, inst, "`extract_vector` of a part beyond the dynamic scale (1)"));
                    }
                    let r = f.dfg.first_result(inst);
                    f.dfg.clear_results(inst);
                    f.layout.remove_inst(inst);
                    f.dfg.change_to_alias(r, arg);
                }
                InstructionData::DynamicStackAddr { opcode: Opcode::DynamicStackAddr, dynamic_stack_slot } => {
                    let ty = f.dfg.ctrl_typevar(inst);
                    let ss = fixed_slots[&dynamic_stack_slot];
                    f.replace(inst).stack_addr(ty, ss, 0);
                }
                _ => {}
            }
        }
    }
    // Every `dynamic_stack_addr` now names its fixed slot.
    f.dynamic_stack_slots.clear();
    f.dfg.resolve_all_aliases();
    Ok(())
}

fn is_vec(t: Type) -> bool {
    t.is_vector() || t.is_dynamic_vector()
}

/// Does `f` name a vector type anywhere (its signature, a `SigRef`, a value)?
pub fn mentions_vectors(f: &Function) -> bool {
    super::mentions(f, is_vec)
}

fn inst_mentions_vectors(f: &Function, inst: Inst) -> bool {
    let dfg = &f.dfg;
    dfg.inst_args(inst).iter().chain(dfg.inst_results(inst)).any(|&v| is_vec(dfg.value_type(v)))
        || dfg.insts[inst]
            .branch_destination(&dfg.jump_tables, &dfg.exception_tables)
            .iter()
            .any(|bc| bc.args(&dfg.value_lists).any(|a| matches!(a, BlockArg::Value(v) if is_vec(dfg.value_type(v)))))
}

/// A vector value (parameter, result) becomes its lanes, lane 0 first.
fn lanes_of(t: Type) -> Option<(Type, usize)> {
    t.is_vector().then(|| (t.lane_type(), t.lane_count() as usize))
}

struct Split {
    map: HashMap<Value, Lanes>,
    /// The integers this pass made as bits of another: `v` ↦ `(x, lo)` when
    /// `v` is bits `lo ..` of the integer `x` (as wide as `v`'s type), `x`
    /// itself not such a slice. Packing consecutive slices of one integer
    /// gives that integer back (`Split::pack`), so a `bitcast` to narrower
    /// lanes, lane moves and a `bitcast` back cost no instruction where the
    /// lanes come back together.
    slices: HashMap<Value, (Value, u32)>,
    /// The halves of a 64-bit integer narrower slices were taken from, in a
    /// block (`Split::half`).
    halves: HashMap<(Value, Block), (Value, Value)>,
    /// The pure instructions made in `made_in`, the block being rewritten.
    made: Made,
    made_in: Option<Block>,
    /// Whether some value is an alias (of the input, or an old result
    /// that became one value): they are resolved at the end.
    aliases: bool,
    /// Vectors whose lanes are slices not made yet: a `bitcast` between
    /// integer lanes and a `shuffle` of such vectors only say which bits
    /// each lane is; any other instruction that reads the vector makes its
    /// lanes first, in its own block ([`Split::make_lanes`]). A `bitcast`
    /// to narrower lanes, a shuffle of whole groups and a `bitcast` back
    /// then make no lane at all.
    virt: HashMap<Value, Slices>,
    /// The waiting instructions of the [`LaneCursor`] (kept between
    /// cursors for its tables).
    steps: Steps,
}

/// The lanes of the vector `v` (an operand of `inst`) in `map`.
fn lanes_in<'m>(map: &'m HashMap<Value, Lanes>, f: &Function, inst: Inst, v: Value) -> Result<&'m [Value], Error> {
    let v = f.dfg.resolve_aliases(v);
    map.get(&v).map(|l| &l[..]).ok_or_else(|| Error::internal(format!("the lanes of {} are not known yet", v)).at(f.dfg.display_inst(inst)))
}

fn unsupported(f: &Function, inst: Inst, what: &str) -> Error {
    Error::unsupported(format!("{} is not supported", what)).at(f.dfg.display_inst(inst))
}

/// The integer type of `t`'s width (`t` itself for an integer).
fn int_of(t: Type) -> Type {
    Type::int_with_byte_size(t.bytes() as u16).unwrap_or(t)
}

/// `x`'s bits as an integer of its width.
fn as_int(pos: &mut LaneCursor, x: Value) -> Value {
    let t = pos.func.dfg.value_type(x);
    if t.is_float() {
        pos.ins().bitcast(int_of(t), MemFlagsData::new(), x)
    } else {
        x
    }
}

/// The integer `x` as a value of `t` (of the same width).
fn from_int(pos: &mut LaneCursor, x: Value, t: Type) -> Value {
    if t.is_float() {
        pos.ins().bitcast(t, MemFlagsData::new(), x)
    } else {
        x
    }
}

/// The constant `k` of the integer type `t` (truncated to its width).
fn iconst(pos: &mut LaneCursor, t: Type, k: i64) -> Value {
    let bits = t.bits();
    let k = if bits < 64 { k & ((1i64 << bits) - 1) } else { k };
    pos.ins().iconst(t, k)
}

/// The value of type `t` with the little-endian bytes `b`.
fn const_of(pos: &mut LaneCursor, t: Type, b: &[u8]) -> Value {
    let mut w = [0u8; 8];
    w[..b.len()].copy_from_slice(b);
    let bits = u64::from_le_bytes(w);
    match t {
        F32 => pos.ins().f32const(Ieee32::with_bits(bits as u32)),
        F64 => pos.ins().f64const(Ieee64::with_bits(bits)),
        // An f16 lane by its bits (`legalize_f16` keeps it so).
        F16 => {
            let k = iconst(pos, I16, bits as i64);
            pos.ins().bitcast(F16, MemFlagsData::new(), k)
        }
        _ => iconst(pos, t, bits as i64),
    }
}

/// The largest and smallest value of the integer type `t`, signed or not.
fn bounds(t: Type, signed: bool) -> (i64, i64) {
    let b = t.bits();
    if signed {
        (-(1i64 << (b - 1)), ((1u64 << (b - 1)) - 1) as i64)
    } else {
        (0, if b == 64 { -1 } else { (1i64 << b) - 1 })
    }
}

/// `x` (of a wider type) clamped to `[lo, hi]`, signed or unsigned
/// (a maximum and a minimum; no maximum with an unsigned 0).
fn clamp(pos: &mut LaneCursor, x: Value, lo: i64, hi: i64, signed: bool) -> Value {
    let t = pos.func.dfg.value_type(x);
    let hi_v = iconst(pos, t, hi);
    if signed {
        let lo_v = iconst(pos, t, lo);
        let x = pos.ins().smax(x, lo_v);
        pos.ins().smin(x, hi_v)
    } else {
        let x = if lo == 0 {
            x
        } else {
            let lo_v = iconst(pos, t, lo);
            pos.ins().umax(x, lo_v)
        };
        pos.ins().umin(x, hi_v)
    }
}

/// `x` or-ed into the integer `acc` (`x` itself when there is none yet).
fn or_into(pos: &mut LaneCursor, acc: Option<Value>, x: Value) -> Value {
    match acc {
        None => x,
        Some(a) => pos.ins().bor(a, x),
    }
}

/// `x` extended (signed or not) to `t`, or kept if already `t`.
fn extend(pos: &mut LaneCursor, x: Value, t: Type, signed: bool) -> Value {
    if pos.func.dfg.value_type(x) == t {
        x
    } else if signed {
        pos.ins().sextend(t, x)
    } else {
        pos.ins().uextend(t, x)
    }
}

/// `x` reduced to `t`, or kept if already `t`.
fn reduce(pos: &mut LaneCursor, x: Value, t: Type) -> Value {
    if pos.func.dfg.value_type(x) == t {
        x
    } else {
        pos.ins().ireduce(t, x)
    }
}

/// The opcodes that act on each lane as the same opcode on a scalar.
fn lane_wise(op: Opcode) -> bool {
    use Opcode::*;
    matches!(
        op,
        Iadd | Isub
            | Imul
            | Ineg
            | Iabs
            | Smin
            | Smax
            | Umin
            | Umax
            | Umulhi
            | Smulhi
            | Ishl
            | Ushr
            | Sshr
            | Rotl
            | Rotr
            | Popcnt
            | Clz
            | Ctz
            | Cls
            | Bitrev
            | Fadd
            | Fsub
            | Fmul
            | Fdiv
            | Fmin
            | Fmax
            | Fneg
            | Fabs
            | Fcopysign
            | Sqrt
            | Fma
            | Ceil
            | Floor
            | Trunc
            | Nearest
            | FcvtFromSint
            | FcvtFromUint
            | FcvtToSintSat
            | FcvtToUintSat
    )
}

/// Bitwise opcodes: lane-wise on the lanes' integer bits.
fn bitwise(op: Opcode) -> bool {
    use Opcode::*;
    matches!(op, Band | Bor | Bxor | Bnot | Bitselect)
}

impl Split {
    fn lanes(&self, f: &Function, inst: Inst, v: Value) -> Result<Lanes, Error> {
        self.lanes_ref(f, inst, v).map(Lanes::from_slice)
    }

    /// [`Split::lanes`], borrowed.
    fn lanes_ref(&self, f: &Function, inst: Inst, v: Value) -> Result<&[Value], Error> {
        lanes_in(&self.map, f, inst, v)
    }

    /// Each argument's lanes in its place (scalars kept).
    fn expand(&self, f: &Function, inst: Inst, args: &[Value]) -> Result<Vec<Value>, Error> {
        super::expand_args(f, args, |t| t.is_vector(), |a| self.lanes_ref(f, inst, a).map(|l| l.iter().copied()))
    }

    /// The integers `pieces` (of one width, the first the least
    /// significant) seen as `n` integers of type `t`, of the same width in
    /// all: each a slice of one piece, or pieces side by side.
    fn reslice(&mut self, pos: &mut LaneCursor, pieces: &[Value], t: Type, n: u32) -> Lanes {
        let from = pos.func.dfg.value_type(pieces[0]).bits();
        let to = t.bits();
        (0..n)
            .map(|j| {
                if to <= from {
                    let lo = j * to;
                    self.slice(pos, pieces[(lo / from) as usize], lo % from, t)
                } else {
                    let per = (to / from) as usize;
                    self.pack(pos, &pieces[j as usize * per..(j as usize + 1) * per], t)
                }
            })
            .collect()
    }

    /// Bits `lo ..` of the integer `x`, as an integer of type `t` (`x`
    /// itself when that is all of it), recorded as a slice. Narrow slices of
    /// a 64-bit integer are taken from its 32-bit half (a shift of one word,
    /// not of a pair), and a 32-bit slice at bit 0 or 32 is that half.
    fn slice(&mut self, pos: &mut LaneCursor, x: Value, lo: u32, t: Type) -> Value {
        let xt = pos.func.dfg.value_type(x);
        if lo == 0 && xt == t {
            return x;
        }
        if xt.bits() == 64 && t.bits() <= 32 && (t.bits() < 32 || lo % 32 == 0) {
            let half = self.half(pos, x, lo >= 32);
            return self.slice(pos, half, lo & 31, t);
        }
        let shifted = if lo > 0 { pos.ins().ushr_imm_u(x, lo as i64) } else { x };
        let v = reduce(pos, shifted, t);
        let (root, base) = self.slices.get(&x).copied().unwrap_or((x, 0));
        self.slices.insert(v, (root, base + lo));
        v
    }

    /// The low or high 32-bit half of the 64-bit integer `x` (`isplit`: the
    /// pair's register, no instruction), once per `x` in a block, recorded as
    /// a slice.
    fn half(&mut self, pos: &mut LaneCursor, x: Value, high: bool) -> Value {
        let key = (x, pos.current_block().expect("the cursor is at an instruction"));
        let (lo, hi) = match self.halves.get(&key) {
            Some(&h) => h,
            None => {
                let (lo, hi) = pos.ins().isplit(x);
                let (root, base) = self.slices.get(&x).copied().unwrap_or((x, 0));
                self.slices.insert(lo, (root, base));
                self.slices.insert(hi, (root, base + 32));
                self.halves.insert(key, (lo, hi));
                (lo, hi)
            }
        };
        if high {
            hi
        } else {
            lo
        }
    }

    /// The integers `part` (of one width, the first the least significant)
    /// side by side as one integer of type `t`: a 64-bit integer of narrower
    /// parts is its two 32-bit halves' pair (`iconcat`, no instruction when
    /// the allocator places them in the pair's registers; both halves
    /// consecutive slices of one integer: that integer), a 32-bit one
    /// [`Split::pack_word`]'s; a 16-bit one takes runs of consecutive slices
    /// of one integer (`Split::slices`) as one slice each (all of `part` one
    /// integer's bits: that integer) and shifts the rest into place.
    fn pack(&mut self, pos: &mut LaneCursor, part: &[Value], t: Type) -> Value {
        let w = pos.func.dfg.value_type(part[0]).bits();
        if t.bits() == 64 && w < 64 {
            let (low, high) = part.split_at(part.len() / 2);
            let low = self.pack_or_keep(pos, low, I32);
            let high = self.pack_or_keep(pos, high, I32);
            if let (Some(&(root, base)), Some(&(hroot, hbase))) = (self.slices.get(&low), self.slices.get(&high)) {
                if root == hroot && hbase == base + 32 {
                    return self.slice(pos, root, base, t);
                }
            }
            return pos.ins().iconcat(low, high);
        }
        if t == I32 {
            return self.pack_word(pos, part);
        }
        let mut acc: Option<Value> = None;
        let mut k = 0;
        while k < part.len() {
            // The longest run from `k` whose width is a power of two.
            let mut run = 1;
            if let Some(&(root, base)) = self.slices.get(&part[k]) {
                while k + run < part.len() && self.slices.get(&part[k + run]) == Some(&(root, base + run as u32 * w)) {
                    run += 1;
                }
                run = 1 << run.ilog2();
            }
            let piece = if run == 1 {
                part[k]
            } else {
                let (root, base) = self.slices[&part[k]];
                self.slice(pos, root, base, Type::int_with_byte_size((run as u32 * w / 8) as u16).unwrap())
            };
            if run == part.len() {
                return piece;
            }
            let mut x = pos.ins().uextend(t, piece);
            if k > 0 {
                x = pos.ins().ishl_imm_u(x, (k as u32 * w) as i64);
            }
            acc = Some(or_into(pos, acc, x));
            k += run;
        }
        acc.unwrap()
    }

    /// The 8- or 16-bit integers `part` side by side as an `i32`. Parts that
    /// are slices of one 32-bit integer (or 32-bit half of a 64-bit one)
    /// moved by the same distance are that integer shifted once and masked
    /// (no mask where the shift leaves only their bits; all of it in place:
    /// the integer itself); other parts are extended, shifted and or-ed.
    fn pack_word(&mut self, pos: &mut LaneCursor, part: &[Value]) -> Value {
        let w = pos.func.dfg.value_type(part[0]).bits();
        // (source word, destination bit − source bit, destination bits)
        let mut moved: Vec<(Value, i32, u32)> = Vec::with_capacity(part.len());
        let mut others: Vec<(u32, Value)> = Vec::new();
        for (k, &q) in (0u32..).zip(part) {
            let at = k * w;
            let source = match self.slices.get(&q).copied() {
                Some((root, base)) => match pos.func.dfg.value_type(root).bits() {
                    32 => Some((root, base)),
                    64 if base % 32 + w <= 32 => Some((self.half(pos, root, base >= 32), base % 32)),
                    _ => None,
                },
                None => None,
            };
            let Some((word, from)) = source else {
                others.push((at, q));
                continue;
            };
            let dist = at as i32 - from as i32;
            let bits = (((1u64 << w) - 1) << at) as u32;
            match moved.iter_mut().find(|m| m.0 == word && m.1 == dist) {
                Some(m) => m.2 |= bits,
                None => moved.push((word, dist, bits)),
            }
        }
        let mut acc: Option<Value> = None;
        for (word, dist, bits) in moved {
            let (x, kept) = match dist {
                0 => (word, u32::MAX),
                d if d > 0 => (pos.ins().ishl_imm_u(word, d as i64), u32::MAX << d),
                d => (pos.ins().ushr_imm_u(word, -d as i64), u32::MAX >> -d),
            };
            let x = if bits == kept { x } else { pos.ins().band_imm_u(x, bits as i64) };
            acc = Some(or_into(pos, acc, x));
        }
        for (at, q) in others {
            let mut x = pos.ins().uextend(I32, q);
            if at > 0 {
                x = pos.ins().ishl_imm_u(x, at as i64);
            }
            acc = Some(or_into(pos, acc, x));
        }
        acc.expect("a word has parts")
    }

    /// `part` packed as one integer of type `t`, or its only member.
    fn pack_or_keep(&mut self, pos: &mut LaneCursor, part: &[Value], t: Type) -> Value {
        if part.len() == 1 {
            part[0]
        } else {
            self.pack(pos, part, t)
        }
    }

    /// Rewrites one instruction that names a vector value.
    fn inst(&mut self, f: &mut Function, inst: Inst) -> Result<(), Error> {
        if !inst_mentions_vectors(f, inst) {
            return Ok(());
        }
        let op = f.dfg.insts[inst].opcode();
        if op.is_branch() {
            if !self.virt.is_empty() {
                let mut pos = self.cursor(f, inst);
                self.make_lanes(&mut pos, inst);
                self.done(&mut pos);
            }
            return self.branch(f, inst);
        }
        let args: SmallVec<[Value; 4]> = f.dfg.inst_args(inst).into();
        let results: SmallVec<[Value; 2]> = f.dfg.inst_results(inst).into();
        let data = f.dfg.insts[inst];
        let mut pos = self.cursor(f, inst);
        if op == Opcode::Bitcast || !self.virt.is_empty() {
            if let Some(lanes) = self.moved_lanes(&mut pos, inst, op, data, &args, &results) {
                self.done(&mut pos);
                let f = pos.cur.func;
                f.dfg.clear_results(inst);
                f.layout.remove_inst(inst);
                self.virt.insert(results[0], lanes);
                return Ok(());
            }
            self.make_lanes(&mut pos, inst);
        }
        let out = self.rewrite(&mut pos, inst, op, data, &args, &results)?;
        self.done(&mut pos);
        self.aliases |= out.iter().any(|r| r.is_err());
        super::replace_results(pos.cur.func, inst, &results, out, &mut self.map)
    }

    /// The lanes of the result of `inst` as slices not made yet, when it
    /// is a `bitcast` between vectors of integer lanes (to wider lanes only
    /// where each is slices of one integer side by side) or a `shuffle` one
    /// of whose operands has such lanes.
    fn moved_lanes(
        &self,
        pos: &mut LaneCursor,
        inst: Inst,
        op: Opcode,
        data: InstructionData,
        args: &[Value],
        results: &[Value],
    ) -> Option<Slices> {
        let &[r] = results else { return None };
        let rt = pos.func.dfg.value_type(r);
        if !rt.is_vector() || !rt.lane_type().is_int() || op != Opcode::Bitcast && !args.iter().any(|a| self.virt.contains_key(a)) {
            return None;
        }
        let of = |v: Value, f: &Function| -> Option<Slices> {
            match self.virt.get(&v) {
                Some(l) => Some(l.clone()),
                None => lanes_in(&self.map, f, inst, v)
                    .ok()
                    .map(|l| l.iter().map(|&x| Slice { root: x, lo: 0, t: f.dfg.value_type(x) }).collect()),
            }
        };
        let t = rt.lane_type();
        match (op, data) {
            (Opcode::Bitcast, InstructionData::LoadNoOffset { .. }) => {
                let from = pos.func.dfg.value_type(args[0]);
                if !from.is_vector() || !from.lane_type().is_int() {
                    return None;
                }
                let pieces = of(args[0], pos.func)?;
                let (fw, tw) = (from.lane_bits(), t.bits());
                (0..rt.lane_count())
                    .map(|j| {
                        if tw <= fw {
                            let p = pieces[(j * tw / fw) as usize];
                            Some(Slice { root: p.root, lo: p.lo + j * tw % fw, t })
                        } else {
                            // Pieces side by side: consecutive bits of one integer.
                            let per = tw / fw;
                            let group = &pieces[(j * per) as usize..((j + 1) * per) as usize];
                            let first = group[0];
                            (0..per as usize)
                                .all(|k| group[k].root == first.root && group[k].lo == first.lo + k as u32 * fw)
                                .then_some(Slice { root: first.root, lo: first.lo, t })
                        }
                    })
                    .collect()
            }
            (Opcode::Shuffle, InstructionData::Shuffle { imm, .. }) => {
                let mask = pos.func.dfg.immediates.get(imm).map(|c| c.as_slice().to_vec()).unwrap_or_default();
                let mut both = of(args[0], pos.func)?;
                both.extend(of(args[1], pos.func)?);
                let mut zero = None;
                Some(
                    (0..rt.lane_count() as usize)
                        .map(|k| match mask.get(k).and_then(|&m| both.get(m as usize)) {
                            Some(&l) => l,
                            None => *zero.get_or_insert_with(|| Slice { root: const_of(pos, t, &[]), lo: 0, t }),
                        })
                        .collect(),
                )
            }
            _ => None,
        }
    }

    /// The lanes of every vector `inst` reads whose lanes are not made yet,
    /// made before it (in its block: another block that reads the vector
    /// makes them again) and recorded in `map`.
    fn make_lanes(&mut self, pos: &mut LaneCursor, inst: Inst) {
        let vals: SmallVec<[Value; 8]> = pos.func.dfg.inst_values(inst).filter(|v| self.virt.contains_key(v)).collect();
        for v in vals {
            let lanes: Lanes = self.virt[&v].clone().iter().map(|l| self.slice(pos, l.root, l.lo, l.t)).collect();
            self.map.insert(v, lanes);
        }
    }

    /// A cursor before `inst` that makes pure instructions once in its
    /// block (the block's `made`, taken: put it back in `self.made` after).
    fn cursor<'f>(&mut self, f: &'f mut Function, inst: Inst) -> LaneCursor<'f> {
        let block = f.layout.inst_block(inst);
        if self.made_in != block {
            self.made.clear();
            self.made_in = block;
        }
        let mut pos = LaneCursor {
            cur: FuncCursor::new(f).at_inst(inst),
            made: std::mem::take(&mut self.made),
            steps: std::mem::take(&mut self.steps),
        };
        pos.use_srcloc(inst);
        pos
    }

    /// The end of `pos` ([`Split::cursor`]): its waiting instructions
    /// placed, its tables given back.
    fn done(&mut self, pos: &mut LaneCursor) {
        pos.place();
        self.made = std::mem::take(&mut pos.made);
        self.steps = std::mem::take(&mut pos.steps);
    }

    fn branch(&mut self, f: &mut Function, inst: Inst) -> Result<(), Error> {
        if matches!(f.dfg.insts[inst], InstructionData::TryCall { .. } | InstructionData::TryCallIndirect { .. }) {
            // (`legalize_try_calls` has made every one a call.)
            return Err(Error::internal("a try_call reached legalize_vectors").at(f.dfg.display_inst(inst)));
        }
        if f.dfg.inst_args(inst).iter().any(|&a| f.dfg.value_type(a).is_vector()) {
            return Err(unsupported(f, inst, "a vector branch condition"));
        }
        let map = &self.map;
        super::split_branch_args(f, inst, |t| t.is_vector(), |f, v| lanes_in(map, f, inst, v).map(|l| l.iter().copied()))
    }

    /// The new code of one instruction and what each old result becomes.
    fn rewrite(
        &mut self,
        pos: &mut LaneCursor,
        inst: Inst,
        op: Opcode,
        data: InstructionData,
        args: &[Value],
        results: &[Value],
    ) -> Result<Out, Error> {
        let ty = |pos: &LaneCursor, v: Value| pos.func.dfg.value_type(v);
        let rty = results.first().map(|&r| ty(pos, r));
        let rlane = rty.map(|t| t.lane_type());
        let n = rty.map_or(0, |t| t.lane_count());
        let one = |lanes: Lanes| -> Result<Out, Error> { Ok(smallvec![Ok(lanes)]) };
        if op == Opcode::Return {
            let vals = self.expand(pos.func, inst, args)?;
            pos.ins().return_(&vals);
            return Ok(Out::new());
        }
        if matches!(op, Opcode::Call | Opcode::CallIndirect | Opcode::ReturnCall | Opcode::ReturnCallIndirect) {
            pos.place();
            return self.call(&mut pos.cur, inst, args, results);
        }
        if lane_wise(op) || (bitwise(op) && rlane.is_some_and(|t| t.is_int())) {
            let (t, n) = (rlane.unwrap(), n);
            let vecs: SmallVec<[Option<&[Value]>; 3]> = args
                .iter()
                .map(|&a| if ty(pos, a).is_vector() { self.lanes_ref(pos.func, inst, a).map(Some) } else { Ok(None) })
                .collect::<Result<_, _>>()?;
            let mut out = Lanes::new();
            for k in 0..n as usize {
                let mut d = data;
                for (slot, (arg, lanes)) in d.arguments_mut(&mut pos.func.dfg.value_lists).iter_mut().zip(args.iter().zip(&vecs)) {
                    *slot = lanes.as_ref().map_or(*arg, |l| l[k]);
                }
                let (i, dfg) = pos.ins().build(d, t);
                out.push(dfg.first_result(i));
            }
            return one(out);
        }
        if bitwise(op) {
            // Float lanes: the same operation on their integer bits.
            let t = rlane.unwrap();
            let vecs: SmallVec<[&[Value]; 3]> = args.iter().map(|&a| self.lanes_ref(pos.func, inst, a)).collect::<Result<_, _>>()?;
            let mut out = Lanes::new();
            for k in 0..n as usize {
                let mut d = data;
                let ints: SmallVec<[Value; 3]> = vecs.iter().map(|l| as_int(pos, l[k])).collect();
                for (slot, &v) in d.arguments_mut(&mut pos.func.dfg.value_lists).iter_mut().zip(&ints) {
                    *slot = v;
                }
                let (i, dfg) = pos.ins().build(d, int_of(t));
                let r = dfg.first_result(i);
                out.push(from_int(pos, r, t));
            }
            return one(out);
        }
        match (op, data) {
            (Opcode::Vconst, InstructionData::UnaryConst { constant_handle, .. }) => {
                let bytes = pos.func.dfg.constants.get(constant_handle).as_slice().to_vec();
                let t = rlane.unwrap();
                let lb = t.bytes() as usize;
                let lanes = (0..n as usize).map(|k| const_of(pos, t, &bytes[k * lb..(k + 1) * lb])).collect();
                one(lanes)
            }
            (Opcode::Splat, _) => one(smallvec![args[0]; n as usize]),
            (Opcode::ScalarToVector, _) => {
                let t = rlane.unwrap();
                let z = const_of(pos, t, &[]);
                let mut lanes: Lanes = smallvec![z; n as usize];
                lanes[0] = args[0];
                one(lanes)
            }
            (Opcode::Extractlane, InstructionData::BinaryImm8 { imm, .. }) => {
                let lanes = self.lanes(pos.func, inst, args[0])?;
                let v = *lanes.get(u8::from(imm) as usize).ok_or_else(|| unsupported(pos.func, inst, "a lane index out of range"))?;
                Ok(smallvec![Err(v)])
            }
            (Opcode::Insertlane, InstructionData::TernaryImm8 { imm, .. }) => {
                let mut lanes = self.lanes(pos.func, inst, args[0])?;
                let k = u8::from(imm) as usize;
                if k >= lanes.len() {
                    return Err(unsupported(pos.func, inst, "a lane index out of range"));
                }
                lanes[k] = args[1];
                one(lanes)
            }
            (Opcode::Shuffle, InstructionData::Shuffle { imm, .. }) => {
                let mask = pos.func.dfg.immediates.get(imm).map(|c| c.as_slice().to_vec()).unwrap_or_default();
                let mut both = self.lanes(pos.func, inst, args[0])?;
                both.extend(self.lanes(pos.func, inst, args[1])?);
                let t = rlane.unwrap();
                let z = const_of(pos, t, &[]);
                one((0..n as usize).map(|k| mask.get(k).and_then(|&m| both.get(m as usize)).copied().unwrap_or(z)).collect())
            }
            (Opcode::Swizzle, _) => {
                // Byte `i` of the four 32-bit words: of the low or the high
                // eight bytes by bit 3 of `i`, each the byte `i & 7` of two
                // words (the word by bit 2, the byte by a shift, which
                // selection makes one `PRMT`); 0 from 16 on.
                let x = self.lanes(pos.func, inst, args[0])?;
                let idx = self.lanes(pos.func, inst, args[1])?;
                let words = self.reslice(pos, &x, I32, 4);
                let zero = iconst(pos, I8, 0);
                let mut out = Lanes::new();
                for &i in &idx {
                    let i = pos.ins().uextend(I32, i);
                    let b2 = pos.ins().band_imm_u(i, 4);
                    let byte = pos.ins().band_imm_u(i, 3);
                    let sh = pos.ins().ishl_imm_u(byte, 3);
                    let half = |pos: &mut LaneCursor, lo: Value, hi: Value| {
                        let w = pos.ins().select(b2, hi, lo);
                        let v = pos.ins().ushr(w, sh);
                        pos.ins().ireduce(I8, v)
                    };
                    let low = half(pos, words[0], words[1]);
                    let high = half(pos, words[2], words[3]);
                    let b3 = pos.ins().band_imm_u(i, 8);
                    let v = pos.ins().select(b3, high, low);
                    let inside = pos.ins().icmp_imm_u(IntCC::UnsignedLessThan, i, 16);
                    out.push(pos.ins().select(inside, v, zero));
                }
                one(out)
            }
            (Opcode::Icmp | Opcode::Fcmp, _) => {
                // The scalar compare of each pair of lanes (the same data, lane
                // operands), as a lane mask.
                let (x, y) = (self.lanes_ref(pos.func, inst, args[0])?, self.lanes_ref(pos.func, inst, args[1])?);
                let (t, at) = (rlane.unwrap(), ty(pos, args[0]).lane_type());
                one(x
                    .iter()
                    .zip(y)
                    .map(|(&a, &b)| {
                        // A constant on the left goes to the right (the
                        // e-graph's canonical form, so the lanes need not
                        // go through it for that).
                        let constant =
                            |v: Value| pos.func.dfg.value_def(v).inst().is_some_and(|d| pos.func.dfg.insts[d].opcode() == Opcode::Iconst);
                        let mut d = data;
                        let (a, b) = match &mut d {
                            InstructionData::IntCompare { cond, .. } if constant(a) && !constant(b) => {
                                *cond = cond.swap_args();
                                (b, a)
                            }
                            _ => (a, b),
                        };
                        d.arguments_mut(&mut pos.func.dfg.value_lists).copy_from_slice(&[a, b]);
                        let (i, dfg) = pos.ins().build(d, at);
                        let c = dfg.first_result(i);
                        pos.ins().bmask(t, c)
                    })
                    .collect())
            }
            (Opcode::Select | Opcode::SelectSpectreGuard, _) => {
                if ty(pos, args[0]).is_vector() || ty(pos, args[0]) == I128 {
                    return Err(unsupported(pos.func, inst, &format!("`{}` with a condition of type {}", op, ty(pos, args[0]))));
                }
                let (x, y) = (self.lanes_ref(pos.func, inst, args[1])?, self.lanes_ref(pos.func, inst, args[2])?);
                one(x.iter().zip(y).map(|(&a, &b)| pos.ins().select(args[0], a, b)).collect())
            }
            (Opcode::VanyTrue, _) => {
                // Some lane is nonzero: the lanes' bits or-ed are.
                let x = self.lanes(pos.func, inst, args[0])?;
                let mut acc = as_int(pos, x[0]);
                for &l in &x[1..] {
                    let i = as_int(pos, l);
                    acc = pos.ins().bor(acc, i);
                }
                Ok(smallvec![Err(pos.ins().icmp_imm_u(IntCC::NotEqual, acc, 0))])
            }
            (Opcode::VallTrue, _) => {
                let x = self.lanes(pos.func, inst, args[0])?;
                let mut acc = None;
                for &l in &x {
                    let i = as_int(pos, l);
                    let nz = pos.ins().icmp_imm_u(IntCC::NotEqual, i, 0);
                    acc = Some(match acc {
                        None => nz,
                        Some(a) => pos.ins().band(a, nz),
                    });
                }
                Ok(smallvec![Err(acc.unwrap())])
            }
            (Opcode::VhighBits, _) => {
                let x = self.lanes(pos.func, inst, args[0])?;
                // At most 16 lanes: the bits gathered in an i32.
                let r = rty.unwrap();
                let mut acc = None;
                for (k, &l) in x.iter().enumerate() {
                    let i = as_int(pos, l);
                    let b = int_of(ty(pos, i)).bits();
                    // A narrow lane extended first: the shift of the
                    // zero-extended lane leaves 0 or 1 (an extension after
                    // the shift would mask it again).
                    let top = if b > 32 {
                        let t = pos.ins().ushr_imm_u(i, (b - 1) as i64);
                        reduce(pos, t, I32)
                    } else {
                        let t = extend(pos, i, I32, false);
                        pos.ins().ushr_imm_u(t, (b - 1) as i64)
                    };
                    // (Lane b - 1 of a narrow vector keeps its bit where it is.)
                    let bit = match k {
                        0 => top,
                        _ if k as u32 == b - 1 && b <= 32 => {
                            let t = extend(pos, i, I32, false);
                            pos.ins().band_imm_u(t, 1 << (b - 1))
                        }
                        _ => pos.ins().ishl_imm_u(top, k as i64),
                    };
                    acc = Some(or_into(pos, acc, bit));
                }
                let acc = acc.unwrap();
                let v = if r.bits() > 32 { pos.ins().uextend(r, acc) } else { reduce(pos, acc, r) };
                Ok(smallvec![Err(v)])
            }
            (Opcode::SwidenLow | Opcode::SwidenHigh | Opcode::UwidenLow | Opcode::UwidenHigh, _) => {
                let x = self.lanes(pos.func, inst, args[0])?;
                let t = rlane.unwrap();
                let base = if matches!(op, Opcode::SwidenHigh | Opcode::UwidenHigh) { x.len() / 2 } else { 0 };
                let signed = matches!(op, Opcode::SwidenLow | Opcode::SwidenHigh);
                one((0..n as usize).map(|k| extend(pos, x[base + k], t, signed)).collect())
            }
            (Opcode::Snarrow | Opcode::Unarrow | Opcode::Uunarrow, _) => {
                let mut x = self.lanes(pos.func, inst, args[0])?;
                x.extend(self.lanes(pos.func, inst, args[1])?);
                let t = rlane.unwrap();
                let (lo, hi) = bounds(t, op == Opcode::Snarrow);
                let signed_input = op != Opcode::Uunarrow;
                one(x
                    .iter()
                    .map(|&l| {
                        let c = clamp(pos, l, lo, hi, signed_input);
                        reduce(pos, c, t)
                    })
                    .collect())
            }
            (Opcode::Fvdemote, _) => {
                let x = self.lanes(pos.func, inst, args[0])?;
                let z = pos.ins().f32const(Ieee32::with_bits(0));
                one((0..n as usize).map(|k| if k < x.len() { pos.ins().fdemote(F32, x[k]) } else { z }).collect())
            }
            (Opcode::FvpromoteLow, _) => {
                let x = self.lanes(pos.func, inst, args[0])?;
                one((0..n as usize).map(|k| pos.ins().fpromote(F64, x[k])).collect())
            }
            (Opcode::UaddSat | Opcode::SaddSat | Opcode::UsubSat | Opcode::SsubSat, _) => {
                let (x, y) = (self.lanes(pos.func, inst, args[0])?, self.lanes(pos.func, inst, args[1])?);
                let t = rlane.unwrap();
                one((0..n as usize).map(|k| sat(pos, op, t, x[k], y[k])).collect())
            }
            (Opcode::AvgRound, _) => {
                let (x, y) = (self.lanes(pos.func, inst, args[0])?, self.lanes(pos.func, inst, args[1])?);
                let t = rlane.unwrap();
                one((0..n as usize)
                    .map(|k| {
                        if t.bits() <= 16 {
                            // Narrow lanes: the sum of the zero-extended
                            // lanes plus one fits in 32 bits, halved (an
                            // extension a lane loaded from memory already
                            // has, one add of three, a shift).
                            let a = pos.ins().uextend(I32, x[k]);
                            let b = pos.ins().uextend(I32, y[k]);
                            let s = pos.ins().iadd(a, b);
                            let s = pos.ins().iadd_imm_u(s, 1);
                            let h = pos.ins().ushr_imm_u(s, 1);
                            pos.ins().ireduce(t, h)
                        } else {
                            let o = pos.ins().bor(x[k], y[k]);
                            let e = pos.ins().bxor(x[k], y[k]);
                            let h = pos.ins().ushr_imm_u(e, 1);
                            pos.ins().isub(o, h)
                        }
                    })
                    .collect())
            }
            (Opcode::IaddPairwise, _) => {
                let mut x = self.lanes(pos.func, inst, args[0])?;
                x.extend(self.lanes(pos.func, inst, args[1])?);
                one(x.chunks(2).map(|p| pos.ins().iadd(p[0], p[1])).collect())
            }
            (Opcode::SqmulRoundSat, _) => {
                let (x, y) = (self.lanes(pos.func, inst, args[0])?, self.lanes(pos.func, inst, args[1])?);
                let t = rlane.unwrap();
                let b = t.bits();
                let (lo, hi) = bounds(t, true);
                one((0..n as usize)
                    .map(|k| {
                        let a = pos.ins().sextend(I64, x[k]);
                        let c = pos.ins().sextend(I64, y[k]);
                        let p = pos.ins().imul(a, c);
                        let p = pos.ins().iadd_imm_u(p, 1i64 << (b - 2));
                        let p = pos.ins().sshr_imm_u(p, (b - 1) as i64);
                        let p = clamp(pos, p, lo, hi, true);
                        pos.ins().ireduce(t, p)
                    })
                    .collect())
            }
            (Opcode::Bitcast, InstructionData::LoadNoOffset { .. }) => {
                // A big-endian `bitcast` is the same: a store and a load, both
                // big-endian, reverse the bytes twice (docs/vectors.md).
                let from = ty(pos, args[0]);
                let to = rty.unwrap();
                if from.bits() > 128 || to.bits() > 128 {
                    return Err(unsupported(pos.func, inst, &format!("`bitcast` from {} to {}", from, to)));
                }
                let pieces: Lanes = if from.is_vector() {
                    let x = self.lanes(pos.func, inst, args[0])?;
                    x.iter().map(|&l| as_int(pos, l)).collect()
                } else if from == I128 || from == F128 {
                    // An `f128` by its bits (`legalize_f128` keeps it so).
                    let bits = if from == F128 { pos.ins().bitcast(I128, MemFlagsData::new(), args[0]) } else { args[0] };
                    let (lo, hi) = pos.ins().isplit(bits);
                    smallvec![lo, hi]
                } else {
                    smallvec![as_int(pos, args[0])]
                };
                let (lane, n) = if to.is_vector() {
                    (to.lane_type(), to.lane_count())
                } else if to.bits() == 128 {
                    (I64, 2)
                } else {
                    (to, 1)
                };
                let ints = self.reslice(pos, &pieces, int_of(lane), n);
                if to.is_vector() {
                    one(ints.iter().map(|&i| from_int(pos, i, lane)).collect())
                } else if to.bits() == 128 {
                    let bits = pos.ins().iconcat(ints[0], ints[1]);
                    Ok(smallvec![Err(if to == F128 { pos.ins().bitcast(F128, MemFlagsData::new(), bits) } else { bits })])
                } else {
                    Ok(smallvec![Err(from_int(pos, ints[0], to))])
                }
            }
            (
                Opcode::Load
                | Opcode::Uload8x8
                | Opcode::Sload8x8
                | Opcode::Uload16x4
                | Opcode::Sload16x4
                | Opcode::Uload32x2
                | Opcode::Sload32x2,
                InstructionData::Load { flags, offset, arg, .. },
            ) => {
                let fd = pos.func.dfg.mem_flags[flags].clone();
                let big = fd.endianness(Endianness::Little) == Endianness::Big;
                if big && op != Opcode::Load {
                    return Err(unsupported(pos.func, inst, "a big-endian extending vector load"));
                }
                let t = rlane.unwrap();
                let bits = rty.unwrap().bits();
                if op == Opcode::Load && fd.aligned() && (bits == 64 || bits == 128) {
                    // One access of the whole vector (`.64`/`.128`), its lanes
                    // unpacked from the 64-bit words.
                    let words: SmallVec<[Value; 2]> = if bits == 128 {
                        let (i, dfg) = pos.ins().Load(Opcode::Load, I128, flags, offset, arg);
                        let w = dfg.first_result(i);
                        let (lo, hi) = pos.ins().isplit(w);
                        smallvec![lo, hi]
                    } else {
                        let (i, dfg) = pos.ins().Load(Opcode::Load, I64, flags, offset, arg);
                        smallvec![dfg.first_result(i)]
                    };
                    if t.bits() == 32 {
                        // The halves of each pair (`isplit`: its registers, no instruction).
                        let mut lanes = Lanes::new();
                        for &w in &words {
                            let (lo, hi) = pos.ins().isplit(w);
                            lanes.extend([from_int(pos, lo, t), from_int(pos, hi, t)]);
                        }
                        return one(lanes);
                    }
                    let ints = self.reslice(pos, &words, int_of(t), n);
                    return one(ints.iter().map(|&i| from_int(pos, i, t)).collect());
                }
                let (lop, mem_bytes) = match op {
                    Opcode::Uload8x8 => (Opcode::Uload8, 1),
                    Opcode::Sload8x8 => (Opcode::Sload8, 1),
                    Opcode::Uload16x4 => (Opcode::Uload16, 2),
                    Opcode::Sload16x4 => (Opcode::Sload16, 2),
                    Opcode::Uload32x2 => (Opcode::Uload32, 4),
                    Opcode::Sload32x2 => (Opcode::Sload32, 4),
                    _ => (Opcode::Load, t.bytes() as i32),
                };
                let mut out = Lanes::new();
                for k in 0..n as i32 {
                    let off = lane_offset(pos.func, inst, offset, mem_slot(big, n, k) * mem_bytes)?;
                    let (i, dfg) = pos.ins().Load(lop, t, flags, off, arg);
                    out.push(dfg.first_result(i));
                }
                one(out)
            }
            (Opcode::Store, InstructionData::Store { flags, offset, .. }) => {
                let fd = pos.func.dfg.mem_flags[flags].clone();
                let big = fd.endianness(Endianness::Little) == Endianness::Big;
                let x = self.lanes(pos.func, inst, args[0])?;
                let bits = ty(pos, args[0]).bits();
                if fd.aligned() && (bits == 64 || bits == 128) {
                    // One access of the whole vector, packed into 64-bit words.
                    let ints: Lanes = x.iter().map(|&l| as_int(pos, l)).collect();
                    let words = self.reslice(pos, &ints, I64, bits / 64);
                    let (w, wt) = if bits == 128 { (pos.ins().iconcat(words[0], words[1]), I128) } else { (words[0], I64) };
                    pos.ins().Store(Opcode::Store, wt, flags, offset, w, args[1]);
                    return Ok(Out::new());
                }
                for (k, &l) in x.iter().enumerate() {
                    let lt = ty(pos, l);
                    let off = lane_offset(pos.func, inst, offset, mem_slot(big, x.len() as u32, k as i32) * lt.bytes() as i32)?;
                    pos.ins().Store(Opcode::Store, lt, flags, off, l, args[1]);
                }
                Ok(Out::new())
            }
            _ => Err(unsupported(pos.func, inst, &format!("`{}` on vectors", op))),
        }
    }

    /// Calls: vector arguments and results as their lanes.
    fn call(&self, pos: &mut FuncCursor, inst: Inst, args: &[Value], results: &[Value]) -> Result<Out, Error> {
        let out = super::remake_call(pos, inst, "this call form with vectors", args, results, lanes_of, |f, a| self.expand(f, inst, a))?;
        Ok(out.into_iter().map(|r| r.map(Lanes::from_vec)).collect())
    }
}

/// Where lane `k` of `n` is in memory, in lanes from the access's address:
/// `k` little-endian; `n − 1 − k` big-endian, where the vector's bytes are
/// reversed as a whole (each lane then big-endian itself), as
/// cranelift-interpreter stores a vector.
fn mem_slot(big: bool, n: u32, k: i32) -> i32 {
    if big {
        n as i32 - 1 - k
    } else {
        k
    }
}

/// The offset of a lane `delta` bytes into an access at `offset`.
fn lane_offset(f: &Function, inst: Inst, offset: Offset32, delta: i32) -> Result<Offset32, Error> {
    i32::from(offset)
        .checked_add(delta)
        .map(Offset32::new)
        .ok_or_else(|| unsupported(f, inst, "a vector access whose lane offset overflows 32 bits"))
}

/// A saturating add or subtract of two lanes of type `t`: through `i32`
/// for lanes of 8 and 16 bits; for 32-bit lanes an unsigned difference is
/// `umax(x, y) - y` and an unsigned sum `x + umin(y, !x)` (no wider type);
/// the overflow flags for signed 32-bit lanes and for 64-bit lanes.
fn sat(pos: &mut LaneCursor, op: Opcode, t: Type, x: Value, y: Value) -> Value {
    let signed = matches!(op, Opcode::SaddSat | Opcode::SsubSat);
    let add = matches!(op, Opcode::UaddSat | Opcode::SaddSat);
    if t.bits() == 32 && op == Opcode::UsubSat {
        // x - y when x >= y, else y - y.
        let m = pos.ins().umax(x, y);
        return pos.ins().isub(m, y);
    }
    if t.bits() == 32 && op == Opcode::UaddSat {
        // !x is the most that can be added to x: y when y fits, else x + !x
        // = MAX.
        let room = pos.ins().bnot(x);
        let m = pos.ins().umin(y, room);
        return pos.ins().iadd(x, m);
    }
    if t.bits() <= 16 {
        // The exact sum or difference fits in i32.
        let wide = I32;
        let a = extend(pos, x, wide, signed);
        let b = extend(pos, y, wide, signed);
        let s = if add { pos.ins().iadd(a, b) } else { pos.ins().isub(a, b) };
        // An unsigned sum can only be too large, an unsigned difference
        // only below zero (negative in the wider type); signed ones either.
        let c = match op {
            Opcode::UaddSat => {
                let hi = iconst(pos, wide, bounds(t, false).1);
                pos.ins().umin(s, hi)
            }
            Opcode::UsubSat => {
                let zero = iconst(pos, wide, 0);
                pos.ins().smax(s, zero)
            }
            _ => {
                let (lo, hi) = bounds(t, true);
                clamp(pos, s, lo, hi, true)
            }
        };
        return pos.ins().ireduce(t, c);
    }
    let (s, of) = match op {
        Opcode::UaddSat => pos.ins().uadd_overflow(x, y),
        Opcode::UsubSat => pos.ins().usub_overflow(x, y),
        Opcode::SaddSat => pos.ins().sadd_overflow(x, y),
        _ => pos.ins().ssub_overflow(x, y),
    };
    let limit = match op {
        Opcode::UaddSat => iconst(pos, t, -1),
        Opcode::UsubSat => iconst(pos, t, 0),
        _ => {
            // The overflow's direction is the sign of `x`: MIN if negative, else MAX.
            let sign = pos.ins().sshr_imm_u(x, i64::from(t.bits()) - 1);
            pos.ins().bxor_imm_u(sign, bounds(t, true).1)
        }
    };
    pos.ins().select(of, limit, s)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn legalized(text: &str) -> Function {
        let mut f = cranelift_reader::parse_functions(text).unwrap().remove(0);
        legalize_vectors(&mut f).unwrap();
        assert!(crate::mid::verifier_report(&f).is_none(), "{}", f.display());
        f
    }

    fn count(f: &Function, op: Opcode) -> usize {
        f.layout.blocks().flat_map(|b| f.layout.block_insts(b)).filter(|&i| f.dfg.insts[i].opcode() == op).count()
    }

    #[test]
    fn whole_words_through_bytes_make_no_lane() {
        // pshufd through bytes and back: each result lane is a parameter.
        let f = legalized(
            "function %f(i32x4, i32x4) -> i32x4 {\nblock0(v0: i32x4, v1: i32x4):\n    v2 = bitcast.i8x16 little v0\n    v3 = bitcast.i8x16 little v1\n    v4 = shuffle v2, v3, [0 1 2 3 0 1 2 3 24 25 26 27 8 9 10 11]\n    v5 = bitcast.i32x4 little v4\n    return v5\n}\n",
        );
        let insts: Vec<Inst> = f.layout.block_insts(f.layout.entry_block().unwrap()).collect();
        assert_eq!(insts.len(), 1, "{}", f.display());
        let params = f.dfg.block_params(f.layout.entry_block().unwrap()).to_vec();
        let ret: Vec<Value> = f.dfg.inst_args(insts[0]).iter().map(|&v| f.dfg.resolve_aliases(v)).collect();
        assert_eq!(ret, [params[0], params[0], params[6], params[2]]);
    }

    #[test]
    fn words_of_a_64_bit_lane_are_its_halves() {
        // Through 16-bit lanes and back to 32: the halves of each pair.
        let f = legalized(
            "function %f(i64x2) -> i32x4 {\nblock0(v0: i64x2):\n    v1 = bitcast.i16x8 little v0\n    v2 = bitcast.i32x4 little v1\n    return v2\n}\n",
        );
        assert_eq!(count(&f, Opcode::Isplit), 2, "{}", f.display());
        assert_eq!(count(&f, Opcode::Ushr) + count(&f, Opcode::Ireduce), 0, "{}", f.display());
    }

    #[test]
    fn lanes_read_in_two_blocks_are_made_in_each() {
        // The bytes of `v1` are read by an add on each side of a branch:
        // each side makes its own (the other's would not dominate it).
        let f = legalized(
            "function %f(i32x4, i8) -> i8x16 {\nblock0(v0: i32x4, v9: i8):\n    v1 = bitcast.i8x16 little v0\n    brif v9, block1, block2\nblock1:\n    v2 = iadd v1, v1\n    return v2\nblock2:\n    v3 = isub v1, v1\n    return v3\n}\n",
        );
        let in_block = |b: Block| f.layout.block_insts(b).filter(|&i| f.dfg.insts[i].opcode() == Opcode::Ireduce).count();
        let blocks: Vec<Block> = f.layout.blocks().collect();
        assert_eq!(in_block(blocks[0]), 0, "{}", f.display());
        assert!(in_block(blocks[1]) > 0 && in_block(blocks[2]) > 0, "{}", f.display());
    }

    #[test]
    fn the_lanes_of_a_vector_instruction_come_out_step_by_step() {
        // Each lane of an i8x16 usub_sat is uextend, uextend, isub, smax,
        // ireduce: every lane's extensions come first, then every lane's
        // isub, and so on, not one lane after the other.
        let f =
            legalized("function %f(i8x16, i8x16) -> i8x16 {\nblock0(v0: i8x16, v1: i8x16):\n    v2 = usub_sat v0, v1\n    return v2\n}\n");
        let ops: Vec<Opcode> = f.layout.block_insts(f.layout.entry_block().unwrap()).map(|i| f.dfg.insts[i].opcode()).collect();
        let first = |op: Opcode| ops.iter().position(|&o| o == op).unwrap();
        let last = |op: Opcode| ops.iter().rposition(|&o| o == op).unwrap();
        assert_eq!(count(&f, Opcode::Isub), 16, "{}", f.display());
        assert!(last(Opcode::Uextend) < first(Opcode::Isub), "{}", f.display());
        assert!(last(Opcode::Isub) < first(Opcode::Smax), "{}", f.display());
        assert!(last(Opcode::Smax) < first(Opcode::Ireduce), "{}", f.display());
    }

    #[test]
    fn an_instruction_with_effects_comes_after_the_lanes_it_reads() {
        // The bytes of the words are made for the store (they wait to be
        // placed); the first byte store places them, so every store comes
        // after the byte it stores (the verifier of `legalized` checks it),
        // and the stores keep their order (the store is not `aligned`: one
        // per byte).
        let f = legalized(
            "function %f(i32x4, i64) {\nblock0(v0: i32x4, v1: i64):\n    v2 = bitcast.i8x16 little v0\n    store v2, v1\n    return\n}\n",
        );
        let insts: Vec<Inst> = f.layout.block_insts(f.layout.entry_block().unwrap()).collect();
        let offsets: Vec<i32> = insts
            .iter()
            .filter_map(|&i| match f.dfg.insts[i] {
                InstructionData::Store { offset, .. } => Some(offset.into()),
                _ => None,
            })
            .collect();
        assert_eq!(offsets, (0..16).collect::<Vec<i32>>(), "{}", f.display());
    }
}
