//! Adjacent 32-bit loads and stores through the same base merged into one
//! 64-bit access, adjacent 64-bit ones into one 128-bit access, where its
//! alignment is proven (`docs/optimization.md`,
//! "Wider memory accesses").
//!
//! Two `load.i32` (or `f32`) at `b+o` and `b+o+4` of one block, with
//! `b+o` known to be a multiple of 8, become
//!
//! ```text
//! w = load.i64 aligned b+o       ; where the first of the two was
//! lo, hi = isplit w              ; the two words: the pair's registers
//! ```
//!
//! and two such stores `store.i64 aligned w, b+o` where the second was, when
//! `w` costs nothing: the stored words are two constants (`w` one i64
//! constant) or the two words of one merged load, in order (`w` its value: a
//! copy of 8 bytes). The lowering turns `isplit` of an i64 into the two
//! registers of the pair, so the merged access costs one `LDG.64`/`STG.64`
//! (`LDS`, `LDL`, `LD` alike) and nothing else. Other stored words, and
//! loaded words that are returned or passed to a call (fixed ABI
//! registers), are left apart: the allocator would copy them into or out of
//! the pair's halves.
//!
//! *Addresses*: an address is a root value plus a constant — the access's
//! offset, plus the constants of `iadd`/`isub` with an `iconst` it is built
//! from — so `load v1+4` and `load (iadd v1, 4)` are the same place.
//!
//! *Alignment*: `Align`, the known trailing zero bits of a value: an
//! `iconst`'s own; `iadd`/`isub`/`bor` the smaller of their operands',
//! `band` the larger, `imul` the sum, `ishl` by a constant `k` plus `k`;
//! extensions and `ireduce` keep it; a `stack_addr` its slot's alignment
//! (`ursa_isel::lower::slot_alignment`) with its offset; a shared-memory
//! symbol the alignment its directive declares (16 for the dynamic shared
//! memory) with the symbol's offset. Everything else — block parameters,
//! function and kernel parameters (CUDA promises nothing for an arbitrary
//! pointer), loaded values — is known to be a multiple of 1 only. An
//! access of `n` bytes flagged `aligned` earlier in the block (or one of the
//! merged accesses itself) through the same root says `root+o'` is a
//! multiple of `n`, so `root+o` is one of `min(n, 2^tz(o-o'))`.
//!
//! *Exactness*: both accesses have the same memory flags (trap code,
//! `notrap`, `aligned`, endianness — little only, since the halves of a
//! big-endian word swap — and the rest), the same width, and touch exactly
//! the merged 8 bytes. A load moves up to the first of the two: between them
//! may only be instructions that neither write memory (stores, atomics,
//! calls, fences) nor trap other than by a memory fault (a load may: the
//! program then faults either way). A store moves down to the second: between
//! them nothing may read or write memory, call or trap. An access proven
//! aligned for its own width that is not merged gets the `aligned` flag
//! (so `legalize_memory` adds no run-time check to it).
//!
//! *128 bits*: the same rule, a second time, on 8-byte accesses: two
//! adjacent `i64`/`f64` loads (those just merged from words included) at a
//! multiple of 16 become `w = load.i128 aligned; lo, hi = isplit w`, two
//! such stores `store.i128 aligned w` when the stored halves are the two
//! halves of one merged load (no `i128` constants). `legalize_i128` keeps
//! the aligned `i128` access whole, and it becomes one `.128` access on a
//! register quad (`docs/regalloc.md`), the `isplit` halves its two pairs.
//! So four words at a multiple of 16 are one `LDG.128`; at a multiple of 8
//! only, two `LDG.64`.

use std::collections::{HashMap, HashSet};

use cranelift_codegen::cursor::{Cursor, FuncCursor};
use cranelift_codegen::ir::immediates::Offset32;
use cranelift_codegen::ir::{
    types, Block, Endianness, Function, GlobalValueData, Inst, InstBuilder, InstructionData, MemFlagsData, Opcode, Type, Value, ValueDef,
};
use ursa_isel::addr_space::shared_var;

use crate::module::shared_mem::{SharedLayout, DYNAMIC};
use crate::Error;

/// Known trailing zero bits, at most this many (64-byte alignment is more
/// than any access needs).
const MAX_TZ: u32 = 6;
/// How deep the alignment of a value is followed through its definitions.
const MAX_DEPTH: u32 = 12;

/// Merges the adjacent accesses of `f` (module docs).
pub fn opt_merge_accesses(f: &mut Function, shared: &SharedLayout) -> Result<(), Error> {
    if !super::may_access_memory(f) {
        return Ok(());
    }
    let mut align = Align { shared, memo: HashMap::new() };
    // Per block: is there anything to do for loads (and the `aligned` flags),
    // for stores? Most blocks have no access, most functions none at all.
    let mut work: Vec<(Block, bool, bool)> = Vec::new();
    // The calls and returns.
    let mut abi_insts = Vec::new();
    for b in f.layout.blocks() {
        let (mut loads, mut stores) = (false, false);
        for i in f.layout.block_insts(b) {
            match f.dfg.insts[i] {
                InstructionData::Load { .. } => loads = true,
                InstructionData::Store { .. } => (loads, stores) = (true, true),
                _ if f.dfg.insts[i].opcode().is_call() || f.dfg.insts[i].opcode().is_return() => abi_insts.push(i),
                _ => {}
            }
        }
        if loads || stores {
            work.push((b, loads, stores));
        }
    }
    if work.is_empty() {
        return Ok(());
    }
    // Values passed to a call or returned: they go to fixed ABI registers, so
    // as the halves of a pair they would cost copies.
    let abi: HashSet<Value> = abi_insts.iter().flat_map(|&i| f.dfg.inst_args(i).iter().map(|&v| f.dfg.resolve_aliases(v))).collect();
    for (b, loads, stores) in work {
        // Loads first (with the flags): a store of words loaded by a merged
        // load stores its i64. Words into i64s first, then i64s (merged or
        // not) into i128s.
        // (The second round only where the first leaves two 8-byte accesses.)
        if loads && merge_block(f, b, &mut align, &abi, false, 4)? >= 2 {
            merge_block(f, b, &mut align, &abi, false, 8)?;
        }
        if stores && merge_block(f, b, &mut align, &abi, true, 4)? >= 2 {
            merge_block(f, b, &mut align, &abi, true, 8)?;
        }
    }
    Ok(())
}

/// Can `lo` and `hi` be the halves of a merged access without copies: for
/// loads, results that are not ABI values; for stores, two 32-bit constants
/// (one i64 constant) or the two halves of one merged load, in order (its
/// value). Other stored halves would have to be copied into the halves of a
/// pair (a quad), which costs more than the second store.
fn pairable(f: &Function, lo: Value, hi: Value, store: bool, abi: &HashSet<Value>) -> bool {
    let (lo, hi) = (f.dfg.resolve_aliases(lo), f.dfg.resolve_aliases(hi));
    if !store {
        return !abi.contains(&lo) && !abi.contains(&hi);
    }
    let words = f.dfg.value_type(lo).bytes() == 4;
    (words && iconst(f, lo).is_some() && iconst(f, hi).is_some()) || split_of(f, lo, 0).is_some_and(|w| split_of(f, hi, 1) == Some(w))
}

/// The known alignment of values (trailing zero bits), memoized.
struct Align<'a> {
    shared: &'a SharedLayout,
    memo: HashMap<Value, u32>,
}

impl Align<'_> {
    /// Trailing zero bits `v` is known to have (`MAX_TZ` at most).
    fn tz(&mut self, f: &Function, v: Value) -> u32 {
        self.tz_at(f, v, 0)
    }

    fn tz_at(&mut self, f: &Function, v: Value, depth: u32) -> u32 {
        let v = f.dfg.resolve_aliases(v);
        if let Some(&k) = self.memo.get(&v) {
            return k;
        }
        if depth > MAX_DEPTH {
            return 0;
        }
        let k = self.compute(f, v, depth + 1).min(MAX_TZ);
        self.memo.insert(v, k);
        k
    }

    fn compute(&mut self, f: &Function, v: Value, d: u32) -> u32 {
        let ValueDef::Result(inst, 0) = f.dfg.value_def(v) else { return 0 };
        match f.dfg.insts[inst] {
            InstructionData::UnaryImm { opcode: Opcode::Iconst, imm } => const_tz(imm.bits()),
            InstructionData::Binary { opcode, args: [a, b] } => match opcode {
                Opcode::Iadd | Opcode::Isub | Opcode::Bor => self.tz_at(f, a, d).min(self.tz_at(f, b, d)),
                Opcode::Band => self.tz_at(f, a, d).max(self.tz_at(f, b, d)),
                Opcode::Imul => self.tz_at(f, a, d) + self.tz_at(f, b, d),
                Opcode::Ishl => match iconst(f, b) {
                    // The shift amount is taken modulo the width.
                    Some(k) => self.tz_at(f, a, d) + (k as u64 % u64::from(f.dfg.value_type(v).bits())) as u32,
                    None => 0,
                },
                _ => 0,
            },
            InstructionData::Unary { opcode: Opcode::Uextend | Opcode::Sextend | Opcode::Ireduce, arg } => self.tz_at(f, arg, d),
            InstructionData::StackAddr { stack_slot, offset, .. } => {
                let slot = ursa_isel::lower::slot_alignment(&f.sized_stack_slots[stack_slot]).trailing_zeros();
                slot.min(const_tz(i64::from(offset)))
            }
            InstructionData::UnaryGlobalValue { opcode: Opcode::SymbolValue, global_value } => {
                let GlobalValueData::Symbol { offset, .. } = f.global_values[global_value] else { return 0 };
                let Some(name) = shared_var(f, global_value) else { return 0 };
                let declared = if name == DYNAMIC {
                    16
                } else {
                    match self.shared.vars.iter().find(|x| x.name == name) {
                        Some(x) => x.align,
                        None => return 0,
                    }
                };
                declared.trailing_zeros().min(const_tz(offset.bits()))
            }
            _ => 0,
        }
    }
}

fn const_tz(k: i64) -> u32 {
    k.trailing_zeros().min(MAX_TZ)
}

/// The constant `v` is, if an `iconst` defines it.
fn iconst(f: &Function, v: Value) -> Option<i64> {
    match f.dfg.value_def(f.dfg.resolve_aliases(v)) {
        ValueDef::Result(inst, _) => match f.dfg.insts[inst] {
            InstructionData::UnaryImm { opcode: Opcode::Iconst, imm } => Some(imm.bits()),
            _ => None,
        },
        _ => None,
    }
}

/// `v` as a root value plus a constant (through `iadd`/`isub` with an `iconst`).
fn root(f: &Function, v: Value) -> (Value, i64) {
    let mut v = f.dfg.resolve_aliases(v);
    let mut k = 0i64;
    for _ in 0..MAX_DEPTH {
        let ValueDef::Result(inst, 0) = f.dfg.value_def(v) else { break };
        let InstructionData::Binary { opcode, args: [a, b] } = f.dfg.insts[inst] else { break };
        let step = match (opcode, iconst(f, a), iconst(f, b)) {
            (Opcode::Iadd, _, Some(c)) => Some((a, c)),
            (Opcode::Iadd, Some(c), _) => Some((b, c)),
            (Opcode::Isub, _, Some(c)) => Some((a, c.wrapping_neg())),
            _ => None,
        };
        let Some((next, c)) = step else { break };
        k = k.wrapping_add(c);
        v = f.dfg.resolve_aliases(next);
    }
    (v, k)
}

/// A load or store (the facts of `aligned`; a candidate for merging when `plain`).
#[derive(Clone, Copy)]
struct Access {
    inst: Inst,
    /// Position in the block.
    pos: usize,
    store: bool,
    /// Bytes accessed.
    size: u32,
    root: Value,
    /// Byte offset from `root` (access offset included).
    at: i64,
    /// A candidate for merging: a plain `load`/`store` of `i32`/`f32`/`i64`/`f64`.
    plain: bool,
}

fn access(f: &Function, inst: Inst, pos: usize) -> Option<Access> {
    let (opcode, addr, offset, store) = match f.dfg.insts[inst] {
        InstructionData::Load { opcode, arg, offset, .. } => (opcode, arg, offset, false),
        InstructionData::Store { opcode, args, offset, .. } => (opcode, args[1], offset, true),
        _ => return None,
    };
    let ty = if store { f.dfg.value_type(f.dfg.inst_args(inst)[0]) } else { f.dfg.value_type(f.dfg.first_result(inst)) };
    let size = match opcode {
        Opcode::Load | Opcode::Store => ty.bytes(),
        Opcode::Uload8 | Opcode::Sload8 | Opcode::Istore8 => 1,
        Opcode::Uload16 | Opcode::Sload16 | Opcode::Istore16 => 2,
        Opcode::Uload32 | Opcode::Sload32 | Opcode::Istore32 => 4,
        _ => return None,
    };
    let (root, k) = root(f, addr);
    let plain = matches!(opcode, Opcode::Load | Opcode::Store) && matches!(ty, types::I32 | types::F32 | types::I64 | types::F64);
    Some(Access { inst, pos, store, size, root, at: k.wrapping_add(i64::from(offset)), plain })
}

fn flags(f: &Function, inst: Inst) -> Option<&MemFlagsData> {
    match f.dfg.insts[inst] {
        InstructionData::Load { flags, .. } | InstructionData::Store { flags, .. } => Some(&f.dfg.mem_flags[flags]),
        _ => None,
    }
}

/// What may sit between two merged accesses (module docs).
fn may_sit_between(op: Opcode, store: bool) -> bool {
    let memory_or_effect = op.can_store() || op.is_call() || op.other_side_effects() || op.is_terminator();
    if store {
        !(memory_or_effect || op.can_load() || op.can_trap())
    } else {
        !(memory_or_effect || (op.can_trap() && !op.can_load()))
    }
}

/// Log2 of the alignment of `root + at` known from the root's own alignment
/// and from the accesses flagged `aligned` in `facts` (root, offset, size).
fn known_tz(f: &Function, align: &mut Align, facts: &[(Value, i64, u32)], root: Value, at: i64) -> u32 {
    let mut tz = align.tz(f, root).min(const_tz(at));
    for &(r, o, n) in facts {
        if r == root {
            tz = tz.max(n.trailing_zeros().min(const_tz(at.wrapping_sub(o))));
        }
    }
    tz
}

/// Merges the pairs of adjacent `n`-byte loads (or stores) of block `b` into
/// `2n`-byte ones; how many plain `2n`-byte loads (stores) the block then has.
fn merge_block(f: &mut Function, b: Block, align: &mut Align, abi: &HashSet<Value>, stores: bool, n: u32) -> Result<usize, Error> {
    let step = i64::from(n);
    let insts: Vec<Inst> = f.layout.block_insts(b).collect();
    let mut accesses = Vec::new();
    // Facts of the accesses flagged `aligned`, in block order.
    let mut facts: Vec<(Value, i64, u32)> = Vec::new();
    // Per access, how many facts there are up to it, its own included.
    let mut facts_through = Vec::new();
    for (pos, &inst) in insts.iter().enumerate() {
        if let Some(a) = access(f, inst, pos) {
            if flags(f, inst).is_some_and(|d| d.aligned()) && a.size.is_power_of_two() {
                facts.push((a.root, a.at, a.size));
            }
            facts_through.push(facts.len());
            accesses.push(a);
        }
    }
    let mut merged = vec![false; accesses.len()];
    let mut pairs = Vec::new();
    for i in 0..accesses.len() {
        let a = accesses[i];
        if merged[i] || !a.plain || a.size != n || a.store != stores {
            continue;
        }
        let Some(fa) = flags(f, a.inst) else { continue };
        if fa.endianness(Endianness::Little) != Endianness::Little {
            continue;
        }
        // The partner: the same kind, size, root and flags, n bytes away, in the block.
        let partner = (0..accesses.len()).find(|&j| {
            let c = accesses[j];
            j != i
                && !merged[j]
                && c.plain
                && c.size == n
                && c.store == a.store
                && c.root == a.root
                && (c.at == a.at.wrapping_add(step) || c.at == a.at.wrapping_sub(step))
                && flags(f, c.inst) == Some(fa)
        });
        let Some(j) = partner else { continue };
        let c = accesses[j];
        let (lo, hi) = if c.at > a.at { (a, c) } else { (c, a) };
        if i32::try_from(lo.at).is_err() {
            continue;
        }
        // The facts of the accesses up to the later of the two.
        if known_tz(f, align, &facts[..facts_through[i.max(j)]], a.root, lo.at) < (2 * n).trailing_zeros() {
            continue;
        }
        let word = |x: &Access| if x.store { f.dfg.inst_args(x.inst)[0] } else { f.dfg.first_result(x.inst) };
        if !pairable(f, word(&lo), word(&hi), a.store, abi) {
            continue;
        }
        let (first, last) = if a.pos < c.pos { (a.pos, c.pos) } else { (c.pos, a.pos) };
        if !insts[first + 1..last].iter().all(|&x| may_sit_between(f.dfg.insts[x].opcode(), a.store)) {
            continue;
        }
        merged[i] = true;
        merged[j] = true;
        pairs.push((lo, hi, insts[first], insts[last]));
    }
    // Accesses proven aligned for their own width get the flag (once, with the loads).
    for (i, a) in accesses.iter().enumerate() {
        if stores || n != 4 || merged[i] || a.size <= 1 || !a.size.is_power_of_two() {
            continue;
        }
        let Some(fd) = flags(f, a.inst).cloned() else { continue };
        if fd.aligned() {
            continue;
        }
        if known_tz(f, align, &facts[..facts_through[i]], a.root, a.at) >= a.size.trailing_zeros() {
            let flagged = f.dfg.mem_flags.insert(fd.with_aligned()).map_err(|_| Error::unsupported("too many memory flag sets"))?;
            match &mut f.dfg.insts[a.inst] {
                InstructionData::Load { flags, .. } | InstructionData::Store { flags, .. } => *flags = flagged,
                _ => {}
            }
        }
    }
    let wide = accesses.iter().filter(|a| a.plain && a.size == 2 * n && a.store == stores).count() + pairs.len();
    for (lo, hi, first, last) in pairs {
        if lo.store {
            merge_stores(f, lo, hi, last, n)?;
        } else {
            merge_loads(f, lo, hi, first, n)?;
        }
    }
    Ok(wide)
}

/// The merged access's flags: the accesses' own, `aligned`.
fn merged_flags(f: &Function, inst: Inst) -> MemFlagsData {
    flags(f, inst).cloned().unwrap_or_else(MemFlagsData::new).with_aligned()
}

/// The value (i64, i128) that `v` is half `k` of, if `v` is that result of an `isplit`.
fn split_of(f: &Function, v: Value, k: usize) -> Option<Value> {
    match f.dfg.value_def(v) {
        ValueDef::Result(inst, n) if n == k => match f.dfg.insts[inst] {
            InstructionData::Unary { opcode: Opcode::Isplit, arg } => Some(f.dfg.resolve_aliases(arg)),
            _ => None,
        },
        _ => None,
    }
}

/// The integer type of `n` bytes.
fn int_type(n: u32) -> Type {
    match n {
        4 => types::I32,
        8 => types::I64,
        _ => types::I128,
    }
}

/// `w = load.i64 root+lo.at` (`i128` for two `n` = 8 loads) before `first`;
/// each load's result becomes its half.
fn merge_loads(f: &mut Function, lo: Access, hi: Access, first: Inst, n: u32) -> Result<(), Error> {
    let fd = merged_flags(f, lo.inst);
    let mut pos = FuncCursor::new(f).at_inst(first);
    let w = pos.ins().load(int_type(2 * n), fd, lo.root, Offset32::new(lo.at as i32));
    let (wl, wh) = pos.ins().isplit(w);
    // Both words (bitcast for floats) before `first`, which is one of the
    // two loads, is deleted.
    let words = [(lo, wl), (hi, wh)].map(|(a, word)| {
        let old = pos.func.dfg.first_result(a.inst);
        let ty: Type = pos.func.dfg.value_type(old);
        (a.inst, old, if ty.is_float() { pos.ins().bitcast(ty, MemFlagsData::new(), word) } else { word })
    });
    for (inst, old, new) in words {
        pos.func.layout.remove_inst(inst);
        pos.func.dfg.clear_results(inst);
        pos.func.dfg.change_to_alias(old, new);
    }
    Ok(())
}

/// `store.i64 w, root+lo.at` (`i128` for two `n` = 8 stores) before `last`
/// (`pairable`'s `w`), the two stores deleted.
fn merge_stores(f: &mut Function, lo: Access, hi: Access, last: Inst, n: u32) -> Result<(), Error> {
    let fd = merged_flags(f, lo.inst);
    let mut pos = FuncCursor::new(f).at_inst(last);
    let words = [lo, hi].map(|a| pos.func.dfg.resolve_aliases(pos.func.dfg.inst_args(a.inst)[0]));
    // `pairable`: two 32-bit constants, or the two halves of one merged load.
    let w = match (iconst(pos.func, words[0]), iconst(pos.func, words[1]), split_of(pos.func, words[0], 0)) {
        (Some(l), Some(h), _) if n == 4 => pos.ins().iconst(types::I64, (l as u32 as i64) | (h << 32)),
        (.., Some(x)) => x,
        _ => {
            return Err(
                Error::internal("merged store words that are neither constants nor one load's").at(pos.func.dfg.display_inst(lo.inst))
            )
        }
    };
    pos.ins().store(fd, w, lo.root, Offset32::new(lo.at as i32));
    pos.func.layout.remove_inst(lo.inst);
    pos.func.layout.remove_inst(hi.inst);
    Ok(())
}
