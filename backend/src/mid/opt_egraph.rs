//! Cranelift's e-graph optimizer (`Context::egraph_pass`): global value
//! numbering, loop-invariant code motion, constant folding and algebraic
//! rewrites (Cranelift's `opts/*.isle` rules), alias analysis with
//! redundant-load elimination and store-to-load forwarding, and
//! branch folding on constant conditions; the blocks a folded branch no
//! longer reaches are deleted. Then each block's instructions
//! go back to the order of the input where dependencies allow
//! ([`super::source_order`]).
//!
//! **Intrinsics.** A call is a side effect to the e-graph (and a memory
//! fence to its alias analysis), so calls of intrinsics stay where they are
//! and as many as written. The intrinsics that read a value fixed for the
//! whole thread — the special registers (`%ursa_tid_x`, `%ursa_ctaid_x`,
//! `%ursa_laneid`, …) and the launch dimensions (`%ursa_ntid_x`,
//! `%ursa_nctaid_x`, …) — are pure, and the pass lets the e-graph treat them
//! so: before it runs, every call of such an intrinsic becomes a parameter
//! of the entry block (one per intrinsic, however many calls), an opaque
//! value defined everywhere, which the e-graph can share and use in
//! hoisted code; after it, each parameter still used becomes one call again
//! at the top of the entry block (where ptxas reads its special registers,
//! rather than at a use inside a loop). Shuffles, votes, ballots and the
//! barrier depend on the other lanes and stay calls.
//!
//! Loads are not volatile: the alias analysis may reuse a value loaded or
//! stored earlier in the same thread when no store, call or atomic
//! between could have changed it (waiting for another thread's store is
//! done with atomics or across `%ursa_barrier`, a call).

use super::{has_effect, width_mask};
use crate::Error;
use cranelift_codegen::control::ControlPlane;
use cranelift_codegen::cursor::{Cursor, FuncCursor};
use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{AbiParam, DataFlowGraph, FuncRef, Function, Inst, InstBuilder, InstructionData, Opcode, Type, Value};
use cranelift_codegen::Context;
use smallvec::SmallVec;
use ursa_isel::intrinsics::Intrinsic;

/// A pure intrinsic turned into an entry-block parameter.
struct PureRead {
    /// The declaration the calls used (the restored call uses it again).
    func_ref: FuncRef,
    param: Value,
}

/// Instructions from which a function is left to the later passes as
/// written. The e-graph pass is superlinear on long chains of dependent
/// arithmetic with constants (each `iadd v, 7` of a chain is reassociated
/// with all before it: 8,000 such instructions take 2.6 s in Ursa and 2.9 s in
/// Cranelift's own x86-64 backend, which runs the same pass); huge functions
/// therefore keep their code as written (the register allocator turns
/// linear at the same number of machine instructions, `LINEAR_FROM`).
pub const EGRAPH_MAX_INSTS: usize = 4096;

/// Runs the e-graph pass on `ctx.func`, unless it has [`EGRAPH_MAX_INSTS`]
/// instructions or more; `ctx`'s control-flow graph and dominator tree must
/// be the function's.
pub fn opt_egraph(ctx: &mut Context) -> Result<(), Error> {
    let f = &ctx.func;
    if f.layout.blocks().flat_map(|b| f.layout.block_insts(b)).nth(EGRAPH_MAX_INSTS - 1).is_some() {
        return Ok(());
    }
    let reads = pure_calls_to_params(&mut ctx.func);
    // The e-graph reads no aliases (constant-phi removal and the inliner
    // leave some, and so does the step above).
    ctx.func.dfg.resolve_all_aliases();
    let order = super::source_order::SourceOrder::of(&ctx.func);
    ctx.egraph_pass(super::flags(), &mut ControlPlane::default())
        .map_err(|e| Error::internal(format!("the e-graph pass failed: {}", e)))?;
    // A branch on a constant became a jump: the blocks only it reached go
    // (the legalizations take no unreachable code the e-graph left behind).
    ctx.eliminate_unreachable_code(super::flags()).map_err(|e| Error::internal(format!("unreachable-code elimination failed: {}", e)))?;
    super::source_order::restore(&mut ctx.func, &order);
    params_to_calls(&mut ctx.func, &reads);
    ctx.func.dfg.resolve_all_aliases();
    forget_removed(&mut ctx.func);
    Ok(())
}

/// Whether the e-graph pass would leave `f` as it is, or change it in no
/// way that pays (so it need not run): one block (no loop to hoist from,
/// no branch to fold), no call (pure intrinsics are shared), no load of an
/// offset and type an earlier load or store has at what may be the same
/// address (one value, or two of one pure opcode: redundant loads, stores
/// forwarded to loads) and none after an access of another kind (atomics,
/// extending loads), no division
/// or remainder by a constant the e-graph rewrites ([`divisor_rewritten`]:
/// multiplications, shifts, masks), and in every instruction without effects but an `fcmp`, an
/// `isplit` and a `bitselect` of two different values (no rule rewrites
/// one) and a `select` no rule rewrites ([`select_kept`]) no
/// operand twice (`x - x`), no constant operand (folding) but the amount of
/// a shift, the right side of a compare or the right bound of a minimum or
/// maximum (the e-graph moves a constant there), either side of an `isub`
/// whose other side is no computed value, neither one of the values the
/// e-graph's rules single out ([`special_constant`]), a 0 an equality
/// compares with ([`zero_equality`]), the right side of a `band` or `iadd`
/// no rule folds ([`mask_or_addend_kept`]), the one float constant of float
/// arithmetic (the rules fold only constants with constants) and the
/// operand of a `bitcast`; and no operand another
/// instruction without effects computes (`bnot` of a `bnot`, extensions of
/// extensions) but the pairs [`nests_kept`] allows; and no two instructions
/// without effects that compute the same (the e-graph makes them one). In
/// the lane code `legalize_vectors` made of a vector function (`lanes`)
/// they are already one (it makes each once per block), and that check is
/// skipped. The unused instructions instruction selection drops.
pub fn without_work(f: &Function, lanes: bool) -> bool {
    shapes_without_work(f) && (lanes || pure_insts_distinct(f))
}

/// Whether the e-graph pass has work in `f` ([`without_work`]), after the
/// integer instructions of a one-block function whose operands are all
/// constants are made constants in place ([`super::const_eval`]: folding
/// the e-graph would do, at a fraction of its cost), which is often all
/// the work there was.
pub fn has_work(f: &mut Function, lanes: bool) -> bool {
    !without_work(f, lanes) && (!fold_constants(f) || !without_work(f, lanes))
}

/// Makes each instruction of a one-block `f` that [`super::const_eval`]
/// evaluates the `iconst` of its value (in order, so a constant made feeds
/// the next), or, where an `iconst` of that type and value comes before it,
/// that constant (the e-graph would make the two one); whether it made any.
fn fold_constants(f: &mut Function) -> bool {
    let Some(entry) = f.layout.entry_block() else { return false };
    if f.layout.next_block(entry).is_some() {
        return false;
    }
    let (mut folded, mut aliased) = (false, false);
    // The constants met so far, by type and bits (made at the first fold).
    let mut seen: Option<rustc_hash::FxHashMap<(Type, u64), Value>> = None;
    let mut next = f.layout.first_inst(entry);
    while let Some(inst) = next {
        next = f.layout.next_inst(inst);
        let Some((t, bits)) = super::const_eval::eval(&f.dfg, &f.dfg.insts[inst], f.dfg.ctrl_typevar(inst)) else { continue };
        folded = true;
        let seen = seen.get_or_insert_with(|| {
            let mut m = rustc_hash::FxHashMap::default();
            for i in f.layout.block_insts(entry).take_while(|&i| i != inst) {
                if f.dfg.insts[i].opcode() == Opcode::Iconst {
                    let r = f.dfg.first_result(i);
                    if let Some(k) = super::iconst_bits(&f.dfg, r) {
                        m.entry((f.dfg.value_type(r), k)).or_insert(r);
                    }
                }
            }
            m
        });
        let result = f.dfg.first_result(inst);
        match seen.get(&(t, bits)) {
            Some(&earlier) => {
                f.layout.remove_inst(inst);
                f.dfg.clear_results(inst);
                f.dfg.change_to_alias(result, earlier);
                aliased = true;
            }
            None => {
                f.replace(inst).iconst(t, bits as i64);
                seen.insert((t, bits), result);
            }
        }
    }
    if aliased {
        f.dfg.resolve_all_aliases();
    }
    folded
}

/// Whether no two instructions without effects of `f`'s entry block have
/// the same data and controlling type. (Instructions whose operands are a
/// value list compare by the list's handle, so duplicates among them are
/// not found; no instruction without effects has one.)
fn pure_insts_distinct(f: &Function) -> bool {
    let Some(entry) = f.layout.entry_block() else { return true };
    let dfg = &f.dfg;
    let mut seen = rustc_hash::FxHashSet::default();
    f.layout.block_insts(entry).all(|inst| {
        let data = &dfg.insts[inst];
        has_effect(data.opcode()) || seen.insert((*data, dfg.ctrl_typevar(inst)))
    })
}

/// [`without_work`] but for the identical instructions.
fn shapes_without_work(f: &Function) -> bool {
    let Some(entry) = f.layout.entry_block() else { return true };
    if f.layout.next_block(entry).is_some() {
        return false;
    }
    let dfg = &f.dfg;
    let def_op = |v: Value| dfg.value_def(v).inst().map(|d| (d, dfg.insts[d].opcode()));
    // Two addresses may be the same where they are one value or both
    // computed by instructions of one opcode without effects (which the
    // e-graph may find equal: `stack_addr ss0` twice).
    let may_match = |a: Value, b: Value| {
        a == b
            || match (def_op(a), def_op(b)) {
                (Some((_, x)), Some((_, y))) => x == y && !has_effect(x),
                _ => false,
            }
    };
    // The plain loads and stores so far, by address, offset and type; and
    // whether another access came before.
    let mut accesses: SmallVec<[(Value, i32, Type); 8]> = SmallVec::new();
    let mut opaque = false;
    for inst in f.layout.block_insts(entry) {
        let op = dfg.insts[inst].opcode();
        if op.is_call() {
            return false;
        }
        if op.can_load() || op.can_store() {
            // The e-graph forwards a stored value to a load, or a loaded
            // one to a second load, of the same address, offset and type.
            match dfg.insts[inst] {
                InstructionData::Load { opcode: Opcode::Load, arg, offset, .. } => {
                    let key = (arg, i32::from(offset), dfg.ctrl_typevar(inst));
                    if opaque || accesses.iter().any(|&(a, o, t)| o == key.1 && t == key.2 && may_match(a, arg)) {
                        return false;
                    }
                    accesses.push(key);
                }
                InstructionData::Store { opcode: Opcode::Store, args, offset, .. } => {
                    accesses.push((args[1], i32::from(offset), dfg.value_type(args[0])));
                }
                _ => {
                    if op.can_load() && (opaque || !accesses.is_empty()) {
                        return false;
                    }
                    opaque = true;
                }
            }
        }
        let args = dfg.inst_args(inst);
        // A division by a constant is pure to the e-graph (it cannot trap),
        // which rewrites it into multiplications and shifts.
        if matches!(op, Opcode::Udiv | Opcode::Sdiv | Opcode::Urem | Opcode::Srem) && divisor_rewritten(dfg, args) {
            return false;
        }
        // (No rule rewrites an `fcmp`, an `isplit` or a `bitselect` of
        // two different values: whatever they read, they stay.)
        if has_effect(op)
            || is_constant(op)
            || matches!(op, Opcode::Fcmp | Opcode::Isplit)
            || op == Opcode::Bitselect && args[1] != args[2]
            || op == Opcode::Select && select_kept(dfg, args)
        {
            continue;
        }
        // Each operand's instruction, looked up once.
        let defs: SmallVec<[Option<(Inst, Opcode)>; 4]> = args.iter().map(|&a| def_op(a)).collect();
        // (With no plain operation below it, the tree is the operands,
        // which the loop below checks.)
        if plain(op) && defs.iter().any(|d| d.is_some_and(|(_, o)| plain(o))) && !plain_tree_apart(dfg, inst) {
            return false;
        }
        let constants = defs.iter().filter(|d| d.is_some_and(|(_, o)| is_constant(o))).count();
        for (k, &a) in args.iter().enumerate() {
            if args[..k].contains(&a) {
                return false;
            }
            let Some((def, dop)) = defs[k] else { continue };
            let kept = if is_constant(dop) {
                use Opcode::*;
                let bits = dfg.value_type(args[0]).bits();
                let special = |role| special_constant(dfg, def, bits, role);
                let role = match dfg.insts[inst] {
                    InstructionData::IntCompare { cond, .. } => ConstRole::Compared(cond),
                    _ => ConstRole::ShiftAmount,
                };
                op == Bitcast
                    || constants == 1
                        && (k == 1 && matches!(op, Ishl | Ushr | Sshr | Rotl | Rotr | Icmp) && !special(role)
                            || op == Isub
                                && !special(if k == 0 { ConstRole::Minuend } else { ConstRole::Subtrahend })
                                && !defs[1 - k].is_some_and(|(_, o)| !has_effect(o))
                            || k == 1 && zero_equality(dfg, inst)
                            || k == 1 && mask_or_addend_kept(dfg, op, def, defs[0])
                            || k == 1 && op == Fcmp
                            || k == 1 && matches!(op, Smin | Smax | Umin | Umax)
                            || matches!(op, Fadd | Fsub | Fmul | Fdiv | Fmin | Fmax | Fcopysign) && dop != Iconst)
            } else {
                has_effect(dop) || nests_kept(dfg, inst, op, args, k, def, dop)
            };
            if !kept {
                return false;
            }
        }
    }
    true
}

/// Whether the tree of plain arithmetic ([`plain`]) rooted at `inst`, three
/// levels deep, reads each value once (a `bnot` as the value it inverts),
/// and at most one constant in the
/// operations of the root's kind: the rules of Cranelift that combine plain
/// operations (`(x + y) - (x + z)`, `x + (y + (z - x))`, `(x ^ y ^ z) | x`,
/// …) all need a value twice, and its reassociation of constants (`(a + 5)
/// + (b + 7)`) two constants under one operation.
fn plain_tree_apart(dfg: &DataFlowGraph, inst: Inst) -> bool {
    fn leaves(dfg: &DataFlowGraph, inst: Inst, root: Opcode, depth: u32, out: &mut SmallVec<[Value; 8]>, constants: &mut u32) {
        let op = dfg.insts[inst].opcode();
        for &a in dfg.inst_args(inst) {
            match dfg.value_def(a).inst() {
                Some(d) if depth < 3 && plain(dfg.insts[d].opcode()) => leaves(dfg, d, root, depth + 1, out, constants),
                // A `bnot` counts as the value it inverts (`(x & !y) | (!x &
                // y)` reads `x` twice: the e-graph makes it `x ^ y`).
                Some(d) if dfg.insts[d].opcode() == Opcode::Bnot => out.push(dfg.inst_args(d)[0]),
                d => {
                    *constants += u32::from(op == root && d.is_some_and(|d| is_constant(dfg.insts[d].opcode())));
                    out.push(a);
                }
            }
        }
    }
    let (mut out, mut constants) = (SmallVec::new(), 0);
    leaves(dfg, inst, dfg.insts[inst].opcode(), 1, &mut out, &mut constants);
    constants <= 1 && out.iter().enumerate().all(|(i, v)| !out[..i].contains(v))
}

/// Whether the e-graph rewrites a division or remainder with operands
/// `args` for its constant divisor: any divisor of a 32- or 64-bit
/// division (multiplications by magic numbers), and of narrower ones 0, 1,
/// all ones and (negated) powers of two (shifts and masks). A constant
/// dividend too is folded before the e-graph runs (`has_work`) when the
/// division cannot trap.
fn divisor_rewritten(dfg: &DataFlowGraph, args: &[Value]) -> bool {
    let Some(d) = args.get(1).and_then(|&d| super::iconst_bits(dfg, d)) else { return false };
    let bits = dfg.value_type(args[1]).bits();
    let negated = d.wrapping_neg() & width_mask(bits);
    bits >= 32 || d <= 1 || d == width_mask(bits) || d.is_power_of_two() || negated.is_power_of_two()
}

/// Whether no rule of the e-graph rewrites instruction `inst` (of `op`,
/// operands `args`) reading in operand `k` the result of `def` (of `dop`;
/// both without effects) into better code. Allowed: plain arithmetic
/// ([`plain`]) on plain arithmetic or on a sign or zero extension (but a
/// `band`, `bor` or `bxor` of two zero extensions, which the e-graph makes
/// narrow), and a
/// minimum or maximum on plain arithmetic, another minimum or maximum, a
/// `bnot` or a shift, and plain arithmetic on one minimum or maximum (the
/// rules that combine them need both operands a minimum or maximum of the
/// same values), with operands `apart` (reassociation needs constants, `(x
/// + y) - y` a shared operand); a `band`, `bor` or `bxor` of a `bnot`
/// whose other operand is no bitwise operation (`!x & !y` is `!(x | y)`,
/// `(x & y) | !x` is `y | !x`) and no operand of the `bnot`; `ireduce` of plain arithmetic, of a minimum or
/// maximum, or of a right shift (the slices of a `bitcast`); the shifted
/// value (not the amount) of a shift a zero extension; a right shift of a
/// `bxor` or of a sum or difference (no rule looks into the shifted value
/// of a right shift but for shifts, products and masks; `avg_round`'s
/// lanes); a subtraction of a right shift; an `bor` of a
/// shift, or a `band` of a right shift, whose other operand is no shift of
/// the same value (rotates, byte swaps); a `band` or `bor` of a compare
/// whose other operand is no compare sharing a variable with it (`x == y |
/// x < y` is `x <= y`); a compare of a `bor` with operands `apart`; the
/// sign or zero extension of integer arithmetic, of a shift or of an
/// `fcmp` (the extension rules look through extensions, `icmp`s and
/// `bmask`s), the zero extension of an `ireduce`; a sum or difference with
/// a left shift whose other operand is no left shift (`(x << z) + (y <<
/// z)` is one shift); an `fma` of a negated factor or addend, unless both
/// factors are negated; a pair
/// built of anything but a sign (`iconcat x (sshr x 63)`); the halves of a
/// pair (`isplit`, `iconcat`) read by anything (a shift by an `iconcat` is
/// one by its low half, which selection reads anyway);
/// anything read by or reading a `bitcast` (no rule looks through one);
/// `bmask` of a compare, which the e-graph makes the `ineg` of the compare
/// (or of its extension), the same instructions after selection — but for
/// `bmask (ne x 0)`, which is `bmask x`; a left shift of a right shift by
/// another constant amount (`(x >> k) << k` is a mask), of a `band` with a
/// mask below 256 (the byte swaps shift wider masks); a `band` of a left
/// shift whose other operand is no left shift; a shift of a
/// `select`; a shift amount computed by anything but an extension, an
/// `ireduce` or an `iconcat` (the amounts the rules look through); and an
/// unsigned-order compare of a zero extension of no compare
/// ([`unsigned_order`]).
fn nests_kept(dfg: &DataFlowGraph, inst: Inst, op: Opcode, args: &[Value], k: usize, def: Inst, dop: Opcode) -> bool {
    use Opcode::*;
    let min_max = |o: Opcode| matches!(o, Smin | Smax | Umin | Umax);
    let shift = |o: Opcode| matches!(o, Ishl | Ushr | Sshr | Rotl | Rotr);
    let apart = || dfg.inst_args(def).iter().all(|d| !args.contains(d));
    // The other operand's instruction, if it has one without effects.
    let other = || {
        let v = *args.get(1 - k)?;
        let d = dfg.value_def(v).inst()?;
        (!has_effect(dfg.insts[d].opcode())).then_some(d)
    };
    // `band`, `bor`, `bxor` of two zero extensions (from one type: the
    // e-graph narrows the operation).
    let both_zero_extended =
        || matches!(op, Band | Bor | Bxor) && dop == Uextend && other().is_some_and(|o| dfg.insts[o].opcode() == Uextend);
    let shifts_same_value = || other().is_some_and(|o| shift(dfg.insts[o].opcode()) && dfg.inst_args(o)[0] == dfg.inst_args(def)[0]);
    let compares_share_a_variable = || {
        other().is_some_and(|o| {
            dfg.insts[o].opcode() == Icmp
                && dfg
                    .inst_args(def)
                    .iter()
                    .any(|a| dfg.inst_args(o).contains(a) && !dfg.value_def(*a).inst().is_some_and(|c| is_constant(dfg.insts[c].opcode())))
        })
    };
    matches!(dop, Isplit | Iconcat)
        || op == Iconcat && dop != Sshr
        || op == Bitcast
        || dop == Bitcast
        || op == Bmask && matches!(dop, Icmp | Fcmp) && !ne_zero(dfg, def)
        || op == Ishl && k == 0 && dop == Ushr && amounts_differ(dfg, args[1], dfg.inst_args(def)[1])
        || op == Ireduce && (plain(dop) || min_max(dop) || matches!(dop, Ushr | Sshr))
        || matches!(op, Ishl | Ushr | Sshr) && k == 0 && matches!(dop, Uextend | Select | Ireduce)
        || matches!(op, Ushr | Sshr) && k == 0 && matches!(dop, Iadd | Isub)
        || op == Ishl && k == 0 && dop == Band && low_byte_mask(dfg, def)
        || matches!(op, Ishl | Ushr | Sshr) && k == 1 && !matches!(dop, Ireduce | Uextend | Sextend | Iconcat)
        || op == Icmp && dop == Uextend && unsigned_order(dfg, inst) && !reads_compare(dfg, def)
        || op == Ushr && dop == Bxor
        || op == Isub && matches!(dop, Ushr | Sshr)
        || op == Bor && matches!(dop, Ishl | Ushr) && !shifts_same_value()
        || op == Band && dop == Ushr && !shifts_same_value()
        || op == Band && dop == Ishl && !other().is_some_and(|o| dfg.insts[o].opcode() == Ishl)
        || matches!(op, Band | Bor) && dop == Icmp && !compares_share_a_variable()
        || op == Icmp && dop == Bor && apart()
        || matches!(op, Uextend | Sextend) && matches!(dop, Iadd | Isub | Imul | Band | Bor | Bxor | Ishl | Ushr | Sshr | Fcmp)
        || matches!(op, Iadd | Isub) && dop == Ishl && !other().is_some_and(|o| dfg.insts[o].opcode() == Ishl)
        || op == Fma
            && dop == Fneg
            && (k == 2 || !args[..2].iter().all(|&a| dfg.value_def(a).inst().is_some_and(|d| dfg.insts[d].opcode() == Fneg)))
        || op == Uextend && dop == Ireduce
        || plain(op) && (plain(dop) || matches!(dop, Sextend | Uextend)) && apart() && !both_zero_extended()
        || min_max(op) && (plain(dop) || min_max(dop)) && apart()
        || plain(op) && min_max(dop) && !other().is_some_and(|o| min_max(dfg.insts[o].opcode()))
        || plain(op) && dop == Ireduce
        || min_max(op) && matches!(dop, Bnot | Ishl | Ushr | Sshr) && apart()
        || matches!(op, Band | Bor | Bxor)
            && dop == Bnot
            && apart()
            && !other().is_some_and(|o| matches!(dfg.insts[o].opcode(), Band | Bor | Bxor | Bnot))
}

/// Whether no rule of the e-graph rewrites `select c, a, b` (operands
/// `args`): the arms differ, the first is no constant where `c` is an
/// `icmp` (zeros go to the right, `c ? 1 : 0` is an extension of `c`, the
/// `<=>` forms) or the second an `bor` (`c ? 1 : (c | y)` is `c ? 1 : y`),
/// neither is
/// a compare (`c ? (y == z) : (y == k)`, 128-bit compares), they are not
/// two extensions of one kind (lifted out) and neither is a `select` on
/// `c` itself; `c` is no constant, nothing that keeps only whether it is 0
/// (an extension, `bmask`, `ineg`, a byte or bit reversal, `popcnt`, a
/// rotate, a `select`, `c != 0`) and no `bor` (`(x | y != z) ? y : z`); and
/// if `c` is a compare, neither arm is one of its operands (minimum,
/// maximum, `x == y ? x : y`), a negation (`iabs`) or an `bor`, `band` or
/// `isub` (the forms of `selects.isle` that a compare decides).
fn select_kept(dfg: &DataFlowGraph, args: &[Value]) -> bool {
    use Opcode::*;
    let &[c, a, b] = args else { return false };
    let def = |v: Value| dfg.value_def(v).inst().filter(|&d| !has_effect(dfg.insts[d].opcode()));
    let op = |v: Value| def(v).map(|d| dfg.insts[d].opcode());
    let arms = [op(a), op(b)];
    if a == b
        || c == a
        || c == b
        || arms[0].is_some_and(is_constant) && (op(c) == Some(Icmp) || arms[1] == Some(Bor))
        || arms.iter().any(|o| matches!(o, Some(Icmp | Fcmp)))
        || arms[0] == arms[1] && matches!(arms[0], Some(Uextend | Sextend))
        || [a, b].iter().any(|&v| def(v).is_some_and(|d| dfg.insts[d].opcode() == Select && dfg.inst_args(d)[0] == c))
    {
        return false;
    }
    let Some(cd) = def(c) else { return true };
    match dfg.insts[cd].opcode() {
        o if is_constant(o) => false,
        Sextend | Uextend | Bmask | Ineg | Bswap | Bitrev | Popcnt | Rotl | Rotr | Select | Bor => false,
        Icmp | Fcmp => {
            let operands = dfg.inst_args(cd);
            !ne_zero(dfg, cd)
                && [a, b].iter().all(|v| !operands.contains(v))
                && arms.iter().all(|o| !matches!(o, Some(Ineg | Bor | Band | Isub)))
        }
        _ => true,
    }
}

/// Whether `band` instruction `def` masks with a constant below 256 (the
/// byte-swap forms the e-graph recognizes shift `x & 0xff00` and wider
/// masks left).
fn low_byte_mask(dfg: &DataFlowGraph, def: Inst) -> bool {
    super::iconst_bits(dfg, dfg.inst_args(def)[1]).is_some_and(|k| k < 256)
}

/// Whether `inst` is an integer compare in an unsigned order (`<`, `<=`,
/// `>`, `>=` unsigned: no rule looks through a zero extension for those;
/// `x != 0` does, and `x <s 0` of a 32-bit value extended to 64 bits).
fn unsigned_order(dfg: &DataFlowGraph, inst: Inst) -> bool {
    matches!(
        dfg.insts[inst],
        InstructionData::IntCompare {
            cond: IntCC::UnsignedLessThan | IntCC::UnsignedLessThanOrEqual | IntCC::UnsignedGreaterThan | IntCC::UnsignedGreaterThanOrEqual,
            ..
        }
    )
}

/// Whether the operand of extension `def` is a compare's result.
fn reads_compare(dfg: &DataFlowGraph, def: Inst) -> bool {
    dfg.value_def(dfg.inst_args(def)[0]).inst().is_some_and(|c| matches!(dfg.insts[c].opcode(), Opcode::Icmp | Opcode::Fcmp))
}

/// What an integer constant is to the instruction reading it, for
/// [`special_constant`].
#[derive(Clone, Copy)]
enum ConstRole {
    /// The amount of a shift or rotate.
    ShiftAmount,
    /// The right side of a compare of this condition.
    Compared(IntCC),
    /// The left side of an `isub`.
    Minuend,
    /// The right side of an `isub`.
    Subtrahend,
}

/// Whether integer constant `def` (of `bits` bits) is one the e-graph's
/// rules single out in its `role`: as a shift amount, 0 (a shift by
/// nothing) and the width `bits` or more (the amount is taken modulo it);
/// as a compare's right side, 1 (`x < 1` is `x <= 0`), all ones, the signed
/// minimum and maximum (compares that are always true or false, or an
/// equality), and 0 but in a signed order (`x <u 0` is false, `x <=u 0` is
/// `x == 0`; no rule rewrites `x <s 0` of a variable); as the left side of
/// an `isub`, 0 (`0 - x` is `-x`) and all ones (`-1 - x` is `!x`); as its
/// right side, 0 and the negative values (`x - k` is `x + -k` when `-k` is
/// smaller unsigned). Not an integer constant: special, to be safe.
fn special_constant(dfg: &DataFlowGraph, def: Inst, bits: u32, role: ConstRole) -> bool {
    let InstructionData::UnaryImm { imm, .. } = dfg.insts[def] else { return true };
    let mask = width_mask(bits);
    let k = imm.bits() as u64 & mask;
    let smin = 1u64 << (bits.clamp(1, 64) - 1);
    match role {
        ConstRole::ShiftAmount => k == 0 || k >= u64::from(bits),
        ConstRole::Compared(cc) => {
            let signed_order = matches!(
                cc,
                IntCC::SignedLessThan | IntCC::SignedLessThanOrEqual | IntCC::SignedGreaterThan | IntCC::SignedGreaterThanOrEqual
            );
            k == 0 && !signed_order || [1, mask, smin, smin - 1].contains(&k)
        }
        ConstRole::Minuend => k == 0 || k == mask,
        ConstRole::Subtrahend => k == 0 || k & smin != 0,
    }
}

/// Whether `inst` is an integer equality (`eq`, `ne`) with the constant 0
/// on its right. The e-graph's rules for such a compare need a left side
/// computed by a compare or an extension (which the check of the left
/// operand counts as work), and of its readers only a `bmask` has one
/// (`bmask (ne x 0)` is `bmask x`, [`ne_zero`]) that [`nests_kept`] would let pass.
fn zero_equality(dfg: &DataFlowGraph, inst: Inst) -> bool {
    compares_with_zero(dfg, inst).is_some_and(|cond| matches!(cond, IntCC::Equal | IntCC::NotEqual))
}

/// Whether `inst` is `icmp ne x, 0`.
fn ne_zero(dfg: &DataFlowGraph, inst: Inst) -> bool {
    compares_with_zero(dfg, inst) == Some(IntCC::NotEqual)
}

/// The condition of `inst` if it is an integer compare with the constant
/// 0 on its right.
fn compares_with_zero(dfg: &DataFlowGraph, inst: Inst) -> Option<IntCC> {
    let InstructionData::IntCompare { cond, args, .. } = dfg.insts[inst] else { return None };
    (super::iconst_bits(dfg, args[1]) == Some(0)).then_some(cond)
}

/// Whether shift amounts `a` and `b` are integer constants of different
/// values (`(x >> a) << b` is a mask only where they are the same).
fn amounts_differ(dfg: &DataFlowGraph, a: Value, b: Value) -> bool {
    matches!((super::iconst_bits(dfg, a), super::iconst_bits(dfg, b)), (Some(x), Some(y)) if x != y)
}

/// Whether `op` (a `band` or an `iadd`) with integer constant `def` on its
/// right and a left side computed by `left` (`None`: an argument, or a
/// value with effects) is one no rule of the e-graph rewrites: not the
/// identity of the operation (all ones for `band`, 0 for `iadd`) nor 0 for
/// `band`, and no left side a rule combines with the constant: for `band`
/// another `band` (constants folded together), a compare (a mask of 1), a
/// zero extension the mask keeps whole or a sign extension masked to its
/// width (the extension itself, or a zero one); for `iadd` another `iadd`
/// with a constant operand, an `isub`, `bor` or `select` (constants folded
/// in), or a `bnot` (`!x + 1` is `-x`). (An `iadd` of two computed values
/// plus a constant, as `avg_round`'s lanes are, has no rule: the e-graph's
/// reassociation moves constants only. An `isub` of a constant is not
/// here: the e-graph may make it the `iadd` of the negated constant.)
fn mask_or_addend_kept(dfg: &DataFlowGraph, op: Opcode, def: Inst, left: Option<(Inst, Opcode)>) -> bool {
    use Opcode::*;
    let InstructionData::UnaryImm { opcode: Iconst, imm } = dfg.insts[def] else { return false };
    let mask = width_mask(dfg.ctrl_typevar(def).bits());
    let k = imm.bits() as u64 & mask;
    match (op, left) {
        (Band | Iadd, _) if k == 0 => false,
        (Band, None) => k != mask,
        (Band, Some((l, lop))) => {
            let narrow = || width_mask(dfg.value_type(dfg.inst_args(l)[0]).bits());
            k != mask
                && match lop {
                    Band | Icmp => false,
                    Uextend => k & narrow() != narrow(),
                    Sextend => k != narrow(),
                    _ => true,
                }
        }
        (Iadd, Some((l, Iadd))) => !dfg.inst_args(l).iter().any(|&a| super::iconst_bits(dfg, a).is_some()),
        (Iadd, left) => !left.is_some_and(|(_, o)| matches!(o, Isub | Bor | Select | Bnot)),
        _ => false,
    }
}

fn is_constant(op: Opcode) -> bool {
    matches!(op, Opcode::Iconst | Opcode::F16const | Opcode::F32const | Opcode::F64const | Opcode::F128const | Opcode::Vconst)
}

/// The arithmetic no rule of the e-graph rewrites when it reads the result
/// of another such instruction with operands of its own.
fn plain(op: Opcode) -> bool {
    use Opcode::*;
    matches!(op, Iadd | Isub | Imul | Band | Bor | Bxor | Fadd | Fsub | Fmul | Fdiv | Fma | Sqrt)
}

/// Makes every instruction no longer in the layout a `nop`: the e-graph
/// leaves the data of the instructions it replaced (a folded `br_table`
/// with block calls whose argument lists are gone), which the later passes'
/// `resolve_all_aliases` would read.
fn forget_removed(func: &mut Function) {
    use cranelift_codegen::entity::EntityRef;
    let removed: Vec<_> =
        (0..func.dfg.num_insts()).map(cranelift_codegen::ir::Inst::new).filter(|&i| func.layout.inst_block(i).is_none()).collect();
    for inst in removed {
        func.dfg.insts[inst] = InstructionData::NullAry { opcode: cranelift_codegen::ir::Opcode::Nop };
    }
}

/// Whether `i` reads a value fixed for the thread's lifetime.
fn is_pure(i: Intrinsic) -> bool {
    matches!(i, Intrinsic::Special(_) | Intrinsic::Const0(_))
}

/// Replaces every call of a pure intrinsic with an entry-block parameter
/// (appended to the signature too, so the function stays consistent).
fn pure_calls_to_params(func: &mut Function) -> Vec<PureRead> {
    let mut reads: Vec<(String, PureRead)> = Vec::new();
    let Some(entry) = func.layout.entry_block() else { return Vec::new() };
    if func.dfg.ext_funcs.is_empty() {
        return Vec::new();
    }
    let mut calls = Vec::new();
    for block in func.layout.blocks() {
        for inst in func.layout.block_insts(block) {
            if let Some(i) = super::divergence::intrinsic_of(func, inst) {
                if is_pure(i) {
                    calls.push(inst);
                }
            }
        }
    }
    for inst in calls {
        let InstructionData::Call { func_ref, .. } = func.dfg.insts[inst] else { continue };
        let Some(name) = ursa_isel::lower::callee_symbol(func, func_ref) else { continue };
        let result = func.dfg.first_result(inst);
        let param = match reads.iter().find(|(n, _)| *n == name) {
            Some((_, r)) => r.param,
            None => {
                let ty = func.dfg.value_type(result);
                let param = func.dfg.append_block_param(entry, ty);
                func.signature.params.push(AbiParam::new(ty));
                reads.push((name, PureRead { func_ref, param }));
                param
            }
        };
        func.dfg.clear_results(inst);
        func.dfg.change_to_alias(result, param);
        func.layout.remove_inst(inst);
    }
    reads.into_iter().map(|(_, r)| r).collect()
}

/// Undoes [`pure_calls_to_params`]: each parameter still used becomes a call
/// at the top of the entry block; the parameters leave the block and the
/// signature (their uses are left as aliases of the calls' results).
fn params_to_calls(func: &mut Function, reads: &[PureRead]) {
    let Some(entry) = func.layout.entry_block() else { return };
    if reads.is_empty() {
        return;
    }
    let mut used = vec![false; reads.len()];
    for block in func.layout.blocks() {
        for inst in func.layout.block_insts(block) {
            for v in func.dfg.inst_values(inst) {
                if let Some(k) = reads.iter().position(|r| r.param == v) {
                    used[k] = true;
                }
            }
        }
    }
    let mut pos = FuncCursor::new(func).at_first_insertion_point(entry);
    for (r, &used) in reads.iter().zip(&used) {
        let call = used.then(|| {
            let inst = pos.ins().call(r.func_ref, &[]);
            pos.func.dfg.first_result(inst)
        });
        pos.func.dfg.remove_block_param(r.param);
        pos.func.signature.params.pop();
        if let Some(v) = call {
            pos.func.dfg.change_to_alias(r.param, v);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A function of `n` instructions: `iconst 1 + iconst 2` (which the
    /// e-graph folds to `iconst 3`), added to `v0`, then `v0` added again
    /// and again.
    fn function(n: usize) -> Function {
        let mut text = String::from(
            "function %f(i32) -> i32 {\nblock0(v0: i32):\n    v1 = iconst.i32 1\n    v2 = iconst.i32 2\n    v3 = iadd v1, v2\n",
        );
        text.push_str("    v4 = iadd v0, v3\n");
        for i in 5..n + 1 {
            text.push_str(&format!("    v{} = iadd v{}, v0\n", i, i - 1));
        }
        text.push_str(&format!("    return v{}\n}}\n", n));
        cranelift_reader::parse_functions(&text).unwrap().remove(0)
    }

    fn optimized(n: usize) -> Function {
        let mut f = function(n);
        crate::mid::with_context(&mut f, |ctx| {
            ctx.flowgraph();
            opt_egraph(ctx).unwrap()
        });
        f
    }

    fn folded(f: &Function) -> bool {
        let entry = f.layout.entry_block().unwrap();
        f.layout.block_insts(entry).any(|i| matches!(f.dfg.insts[i], InstructionData::UnaryImm { imm, .. } if imm.bits() == 3))
    }

    fn parsed(text: &str) -> Function {
        let f = cranelift_reader::parse_functions(text).unwrap().remove(0);
        assert_eq!(crate::mid::verifier_report(&f), None, "{}", text);
        f
    }

    #[test]
    fn lane_code_without_work_skips_the_pass() {
        // Lane-wise arithmetic on the parameters, and on its own results.
        let plain = "function %f(i32, i32, i32) -> i32, i32 {\nblock0(v0: i32, v1: i32, v2: i32):\n    v3 = iadd v0, v1\n    v4 = imul v3, v2\n    return v3, v4\n}\n";
        assert!(without_work(&parsed(plain), true));
        // Loads after stores of other offsets, types or addresses: nothing
        // to forward.
        let apart = "function %f(i64, i64, i32) -> i32, i64 {\nblock0(v0: i64, v1: i64, v2: i32):\n    store v2, v0\n    v3 = load.i32 v0+4\n    v4 = load.i64 v0\n    v5 = load.i32 v1\n    v6 = iadd v3, v5\n    return v6, v4\n}\n";
        assert!(without_work(&parsed(apart), true));
        // A constant operand the e-graph folds, an operand twice, an
        // extension of an extension, a load after a store.
        for work in [
            "function %f(i32) -> i32 {\nblock0(v0: i32):\n    v1 = iconst.i32 0\n    v2 = iadd v0, v1\n    return v2\n}\n",
            "function %f(i32) -> i32 {\nblock0(v0: i32):\n    v1 = isub v0, v0\n    return v1\n}\n",
            "function %f(i8) -> i64 {\nblock0(v0: i8):\n    v1 = sextend.i32 v0\n    v2 = sextend.i64 v1\n    return v2\n}\n",
            "function %f(i64, i32) -> i32 {\nblock0(v0: i64, v1: i32):\n    store v1, v0\n    v2 = load.i32 v0\n    return v2\n}\n",
            // The same address, offset and type loaded twice (also through
            // two `stack_addr`s of one slot); a load after an extending one.
            "function %f(i64) -> i32 {\nblock0(v0: i64):\n    v1 = load.i32 v0+4\n    v2 = load.i32 v0+4\n    v3 = iadd v1, v2\n    return v3\n}\n",
            "function %f(i8) -> i8 {\n    ss0 = explicit_slot 8\nblock0(v0: i8):\n    v1 = stack_addr.i32 ss0\n    store.i8 notrap v0, v1\n    v2 = stack_addr.i32 ss0\n    v3 = load.i8 notrap v2\n    return v3\n}\n",
            "function %f(i64) -> i32 {\nblock0(v0: i64):\n    v1 = uload8.i32 v0\n    v2 = load.i32 v0+4\n    v3 = iadd v1, v2\n    return v3\n}\n",
            // A division by a constant (multiplications and shifts), a
            // shift by the width or more (taken modulo it), a constant left
            // bound of a minimum (moved to the right).
            "function %f(i32) -> i32 {\nblock0(v0: i32):\n    v1 = iconst.i32 3\n    v2 = udiv v0, v1\n    return v2\n}\n",
            "function %f(i32) -> i32 {\nblock0(v0: i32):\n    v1 = iconst.i32 -7\n    v2 = srem v0, v1\n    return v2\n}\n",
            "function %f(i32) -> i32 {\nblock0(v0: i32):\n    v1 = iconst.i32 32\n    v2 = ishl v0, v1\n    return v2\n}\n",
            "function %f(i32) -> i32 {\nblock0(v0: i32):\n    v1 = iconst.i64 33\n    v2 = ushr v0, v1\n    return v2\n}\n",
            "function %f(i64) -> i64 {\nblock0(v0: i64):\n    v1 = iconst.i64 5\n    v2 = umin v1, v0\n    return v2\n}\n",
            // A rotate, compares of one variable combined, `bmask` of a
            // test against 0, a mask that keeps an extension whole, `!x + 1`,
            // a shift by an extended amount.
            "function %f(i32) -> i32 {\nblock0(v0: i32):\n    v1 = iconst.i32 8\n    v2 = ishl v0, v1\n    v3 = iconst.i32 24\n    v4 = ushr v0, v3\n    v5 = bor v2, v4\n    return v5\n}\n",
            "function %f(i32, i32) -> i8 {\nblock0(v0: i32, v1: i32):\n    v2 = icmp ult v0, v1\n    v3 = icmp eq v0, v1\n    v4 = bor v2, v3\n    return v4\n}\n",
            "function %f(i32) -> i32 {\nblock0(v0: i32):\n    v1 = iconst.i32 0\n    v2 = icmp ne v0, v1\n    v3 = bmask.i32 v2\n    return v3\n}\n",
            "function %f(i8) -> i32 {\nblock0(v0: i8):\n    v1 = uextend.i32 v0\n    v2 = iconst.i32 0x1ff\n    v3 = band v1, v2\n    return v3\n}\n",
            "function %f(i32) -> i32 {\nblock0(v0: i32):\n    v1 = bnot v0\n    v2 = iconst.i32 1\n    v3 = iadd v1, v2\n    return v3\n}\n",
            "function %f(i32, i8) -> i32 {\nblock0(v0: i32, v1: i8):\n    v2 = uextend.i32 v1\n    v3 = ishl v0, v2\n    return v3\n}\n",
            // A byte swap written out (its `x & 0xff00` shifted left), a
            // sign test of a 32-bit value extended to 64 bits, a zero
            // extension tested against 0, `(x >> 7) << 7` (a mask).
            "function %f(i32) -> i32 {\nblock0(v0: i32):\n    v1 = iconst.i32 24\n    v2 = ishl v0, v1\n    v3 = iconst.i32 0xff00\n    v4 = band v0, v3\n    v5 = iconst.i32 8\n    v6 = ishl v4, v5\n    v7 = bor v2, v6\n    v8 = ushr v0, v5\n    v9 = band v8, v3\n    v10 = ushr v0, v1\n    v11 = bor v9, v10\n    v12 = bor v7, v11\n    return v12\n}\n",
            "function %f(i32) -> i8 {\nblock0(v0: i32):\n    v1 = uextend.i64 v0\n    v2 = iconst.i64 0\n    v3 = icmp slt v1, v2\n    return v3\n}\n",
            "function %f(i8) -> i8 {\nblock0(v0: i8):\n    v1 = uextend.i32 v0\n    v2 = iconst.i32 0\n    v3 = icmp ne v1, v2\n    return v3\n}\n",
            "function %f(i32) -> i32 {\nblock0(v0: i32):\n    v1 = iconst.i32 7\n    v2 = ushr v0, v1\n    v3 = ishl v2, v1\n    return v3\n}\n",
            // `0 - x`, `-1 - x`, `x - -3`, a constant minus a sum with a
            // constant (folded together).
            "function %f(i32) -> i32 {\nblock0(v0: i32):\n    v1 = iconst.i32 0\n    v2 = isub v1, v0\n    return v2\n}\n",
            "function %f(i32) -> i32 {\nblock0(v0: i32):\n    v1 = iconst.i32 -1\n    v2 = isub v1, v0\n    return v2\n}\n",
            "function %f(i32) -> i32 {\nblock0(v0: i32):\n    v1 = iconst.i32 -3\n    v2 = isub v0, v1\n    return v2\n}\n",
            "function %f(i32) -> i32 {\nblock0(v0: i32):\n    v1 = iconst.i32 2\n    v2 = iadd v0, v1\n    v3 = iconst.i32 9\n    v4 = isub v3, v2\n    return v4\n}\n",
            // Selects: of equal arms, a minimum, a constant first arm, an
            // extended condition, a select on the same condition inside,
            // arms that are compares, two zero extensions.
            "function %f(i8, i32) -> i32 {\nblock0(v0: i8, v1: i32):\n    v2 = select v0, v1, v1\n    return v2\n}\n",
            "function %f(i32, i32) -> i32 {\nblock0(v0: i32, v1: i32):\n    v2 = icmp slt v0, v1\n    v3 = select v2, v0, v1\n    return v3\n}\n",
            "function %f(i32, i32) -> i32 {\nblock0(v0: i32, v1: i32):\n    v2 = icmp eq v0, v1\n    v3 = iconst.i32 0\n    v4 = iconst.i32 5\n    v5 = select v2, v3, v4\n    return v5\n}\n",
            "function %f(i8, i32, i32) -> i32 {\nblock0(v0: i8, v1: i32, v2: i32):\n    v3 = uextend.i32 v0\n    v4 = select v3, v1, v2\n    return v4\n}\n",
            "function %f(i8, i32, i32, i32) -> i32 {\nblock0(v0: i8, v1: i32, v2: i32, v3: i32):\n    v4 = select v0, v1, v2\n    v5 = select v0, v4, v3\n    return v5\n}\n",
            "function %f(i8, i32, i32) -> i8 {\nblock0(v0: i8, v1: i32, v2: i32):\n    v3 = icmp eq v1, v2\n    v4 = iconst.i32 3\n    v5 = icmp eq v2, v4\n    v6 = select v0, v3, v5\n    return v6\n}\n",
            "function %f(i8, i8, i8) -> i32 {\nblock0(v0: i8, v1: i8, v2: i8):\n    v3 = uextend.i32 v1\n    v4 = uextend.i32 v2\n    v5 = select v0, v3, v4\n    return v5\n}\n",
            // Two values shifted by one amount and-ed (one shift of the
            // `band`), a `bitselect` of one value twice.
            "function %f(i32, i32, i32) -> i32 {\nblock0(v0: i32, v1: i32, v2: i32):\n    v3 = ishl v0, v2\n    v4 = ishl v1, v2\n    v5 = band v3, v4\n    return v5\n}\n",
            "function %f(i32, i32) -> i32 {\nblock0(v0: i32, v1: i32):\n    v2 = bitselect v0, v1, v1\n    return v2\n}\n",
            // Two zero extensions from one type and-ed (the `band` made
            // narrow), a select of constants compared with one of them, an
            // `fma` of two negated factors, divisions of narrow types by a
            // power of two, by 1 and by -1, of a 64-bit type by 7.
            "function %f(i8, i8) -> i32 {\nblock0(v0: i8, v1: i8):\n    v2 = uextend.i32 v0\n    v3 = uextend.i32 v1\n    v4 = band v2, v3\n    return v4\n}\n",
            "function %f(i8) -> i8 {\nblock0(v0: i8):\n    v1 = iconst.i32 3\n    v2 = iconst.i32 4\n    v3 = select v0, v1, v2\n    v4 = icmp eq v3, v1\n    return v4\n}\n",
            "function %f(f32, f32, f32) -> f32 {\nblock0(v0: f32, v1: f32, v2: f32):\n    v3 = fneg v0\n    v4 = fneg v1\n    v5 = fma v3, v4, v2\n    return v5\n}\n",
            "function %f(i16) -> i16 {\nblock0(v0: i16):\n    v1 = iconst.i16 8\n    v2 = sdiv v0, v1\n    return v2\n}\n",
            "function %f(i8) -> i8 {\nblock0(v0: i8):\n    v1 = iconst.i8 -4\n    v2 = srem v0, v1\n    return v2\n}\n",
            "function %f(i8) -> i8 {\nblock0(v0: i8):\n    v1 = iconst.i8 1\n    v2 = udiv v0, v1\n    return v2\n}\n",
            "function %f(i16) -> i16 {\nblock0(v0: i16):\n    v1 = iconst.i16 -1\n    v2 = srem v0, v1\n    return v2\n}\n",
            "function %f(i64) -> i64 {\nblock0(v0: i64):\n    v1 = iconst.i64 7\n    v2 = urem v0, v1\n    return v2\n}\n",
            // Plain arithmetic that reads a value twice or two constants
            // across its operands: `(x + y) - (x + z)`, `x + (y + (z -
            // x))`, `(a + 5) + (b + 7)`.
            "function %f(i32, i32, i32) -> i32 {\nblock0(v0: i32, v1: i32, v2: i32):\n    v3 = iadd v0, v1\n    v4 = iadd v0, v2\n    v5 = isub v3, v4\n    return v5\n}\n",
            "function %f(i32, i32, i32) -> i32 {\nblock0(v0: i32, v1: i32, v2: i32):\n    v3 = isub v2, v0\n    v4 = iadd v1, v3\n    v5 = iadd v0, v4\n    return v5\n}\n",
            "function %f(i32, i32) -> i32 {\nblock0(v0: i32, v1: i32):\n    v2 = iconst.i32 5\n    v3 = iadd v0, v2\n    v4 = iconst.i32 7\n    v5 = iadd v1, v4\n    v6 = iadd v3, v5\n    return v6\n}\n",
            // `!x & !y` (one `bnot` of an `bor`), `(x & y) | !x` (`y | !x`),
            // `umin(x, y) + umax(x, y)` (`x + y`).
            "function %f(i32, i32) -> i32 {\nblock0(v0: i32, v1: i32):\n    v2 = bnot v0\n    v3 = bnot v1\n    v4 = band v2, v3\n    return v4\n}\n",
            "function %f(i32, i32) -> i32 {\nblock0(v0: i32, v1: i32):\n    v2 = band v0, v1\n    v3 = bnot v0\n    v4 = bor v2, v3\n    return v4\n}\n",
            "function %f(i32, i32) -> i32 {\nblock0(v0: i32, v1: i32):\n    v2 = umin v0, v1\n    v3 = umax v0, v1\n    v4 = iadd v2, v3\n    return v4\n}\n",
            // `(x & !y) | (!x & y)` (`x ^ y`).
            "function %f(i32, i32) -> i32 {\nblock0(v0: i32, v1: i32):\n    v2 = bnot v1\n    v3 = band v0, v2\n    v4 = bnot v0\n    v5 = band v4, v1\n    v6 = bor v3, v5\n    return v6\n}\n",
            // `(x + 5) + 7`: the two constants folded together.
            "function %f(i32) -> i32 {\nblock0(v0: i32):\n    v1 = iconst.i32 5\n    v2 = iadd v0, v1\n    v3 = iconst.i32 7\n    v4 = iadd v2, v3\n    return v4\n}\n",
        ] {
            assert!(!without_work(&parsed(work), true), "{}", work);
        }
        // Constants the e-graph's rules single out: a shift by 0; unsigned
        // below 0 or 1, signed below the minimum, at most the maximum, equal
        // to all ones.
        for (op, k) in [("ishl", "0"), ("icmp ult", "0"), ("icmp ult", "1"), ("icmp slt", "-128"), ("icmp sle", "127"), ("icmp eq", "-1")] {
            let work =
                format!("function %f(i8) -> i8 {{\nblock0(v0: i8):\n    v1 = iconst.i8 {}\n    v2 = {} v0, v1\n    return v2\n}}\n", k, op);
            assert!(!without_work(&parsed(&work), true), "{}", work);
        }
        for (op, k) in [
            ("ishl", "3"),
            ("ushr", "1"),
            ("icmp ult", "2"),
            ("icmp slt", "-127"),
            ("icmp sle", "126"),
            ("icmp slt", "0"),
            ("icmp sge", "0"),
            ("isub", "5"),
        ] {
            let keep =
                format!("function %f(i8) -> i8 {{\nblock0(v0: i8):\n    v1 = iconst.i8 {}\n    v2 = {} v0, v1\n    return v2\n}}\n", k, op);
            assert!(without_work(&parsed(&keep), true), "{}", keep);
        }
    }

    #[test]
    fn constants_are_folded_before_the_gate_and_a_repeated_one_is_the_first() {
        // `5 % 10` is 5, the `iconst` before it (behind a store, which has
        // no result), and `5 + 10` a new constant: nothing is left for the
        // e-graph, and the function still verifies.
        let text = "function %f(i64) -> i64, i64 {\nblock0(v0: i64):\n    v1 = iconst.i64 5\n    store v1, v0\n    v2 = iconst.i64 10\n    v3 = srem v1, v2\n    v4 = iadd v1, v2\n    return v3, v4\n}\n";
        let mut f = parsed(text);
        assert!(!has_work(&mut f, false), "{}", f.display());
        assert_eq!(crate::mid::verifier_report(&f), None, "{}", f.display());
        let ret = f.layout.last_inst(f.layout.entry_block().unwrap()).unwrap();
        let (v3, v4) = (f.dfg.inst_args(ret)[0], f.dfg.inst_args(ret)[1]);
        assert_eq!(v3.as_u32(), 1, "{}", f.display());
        assert_eq!(crate::mid::iconst_bits(&f.dfg, v4), Some(15), "{}", f.display());
    }

    #[test]
    fn identical_instructions_are_work_outside_lane_code() {
        // Two `iadd`s of the same operands, two equal constants: the e-graph
        // makes each pair one. Lane code has none (`legalize_vectors` makes
        // each instruction once), so there the check is skipped.
        for text in [
            "function %f(i32, i32) -> i32, i32 {\nblock0(v0: i32, v1: i32):\n    v2 = iadd v0, v1\n    v3 = iadd v0, v1\n    return v2, v3\n}\n",
            "function %f(i32) -> i32, i32 {\nblock0(v0: i32):\n    v1 = iconst.i32 5\n    v2 = iconst.i32 5\n    v3 = ishl v0, v1\n    v4 = ushr v0, v2\n    return v3, v4\n}\n",
        ] {
            let f = parsed(text);
            assert!(!without_work(&f, false), "{}", text);
            assert!(without_work(&f, true), "{}", text);
            let mut after = f.clone();
            crate::mid::with_context(&mut after, |ctx| {
                ctx.flowgraph();
                opt_egraph(ctx).unwrap()
            });
            assert!(count(&after) < count(&f), "the e-graph leaves\n{}", after.display());
        }
        // Equal data of another type computes something else.
        let typed = "function %f(i32, i64) -> i32, i64 {\nblock0(v0: i32, v1: i64):\n    v2 = iconst.i32 5\n    v3 = iconst.i64 5\n    v4 = ishl v0, v2\n    v5 = ishl v1, v3\n    return v4, v5\n}\n";
        assert!(without_work(&parsed(typed), false));
    }

    /// The instructions of `f`'s entry block.
    fn count(f: &Function) -> usize {
        f.layout.block_insts(f.layout.entry_block().unwrap()).count()
    }

    #[test]
    fn the_shapes_kept_are_ones_the_egraph_does_not_shorten() {
        // One function per shape `without_work` lets through; the
        // e-graph itself must make none of them shorter (a new rule of a
        // later Cranelift would fail here, not silently lose a fold).
        let body = |params: &str, ret: &str, code: &str, out: &str| {
            let types: Vec<&str> = params.split(", ").map(|p| p.split(": ").nth(1).unwrap()).collect();
            format!("function %f({}) -> {} {{\nblock0({}):\n{}    return {}\n}}\n", types.join(", "), ret, params, code, out)
        };
        let (p3, p2f) = ("v0: i32, v1: i32, v2: i32", "v0: f32, v1: f32, v2: f32");
        let shapes = [
            body(
                p3,
                "i32, i32, i32, i32, i32",
                "    v3 = iconst.i32 5\n    v4 = ishl v0, v3\n    v5 = ushr v1, v3\n    v6 = sshr v2, v3\n    v7 = rotl v0, v3\n    v8 = rotr v1, v3\n",
                "v4, v5, v6, v7, v8",
            ),
            body(p3, "i8", "    v3 = iconst.i32 9\n    v4 = icmp slt v0, v3\n", "v4"),
            body(p2f, "i8", "    v3 = f32const 0x1.0p0\n    v4 = fcmp lt v0, v3\n", "v4"),
            body(p3, "i32", "    v3 = iconst.i32 -128\n    v4 = smax v0, v3\n    v5 = iconst.i32 127\n    v6 = smin v4, v5\n", "v6"),
            body("v0: i64, v1: i32", "i32", "    v2, v3 = isplit v0\n    v4 = bxor v2, v3\n    v5 = iadd v4, v1\n", "v5"),
            body(p3, "i32", "    v3 = icmp ult v0, v1\n    v4 = bmask.i32 v3\n", "v4"),
            body(p2f, "f32", "    v3 = fcmp lt v0, v1\n    v4 = bmask.i32 v3\n    v5 = bitcast.f32 v4\n", "v5"),
            body(p3, "i8", "    v3 = iadd v0, v1\n    v4 = ireduce.i8 v3\n", "v4"),
            body(p3, "i8", "    v3 = iconst.i32 8\n    v4 = ushr v0, v3\n    v5 = ireduce.i8 v4\n", "v5"),
            body("v0: i8, v1: i8", "i16", "    v2 = uextend.i16 v0\n    v3 = iconst.i16 8\n    v4 = ishl v2, v3\n", "v4"),
            body(p3, "i32", "    v3 = bxor v0, v1\n    v4 = iconst.i32 1\n    v5 = ushr v3, v4\n", "v5"),
            body(p3, "i32", "    v3 = imul v0, v1\n    v4 = iadd v3, v2\n", "v4"),
            body(p2f, "f32", "    v3 = fmul v0, v1\n    v4 = fadd v3, v2\n", "v4"),
            body("v0: i8, v1: i32", "i32", "    v2 = sextend.i32 v0\n    v3 = isub v2, v1\n", "v3"),
            body(p3, "i32", "    v3 = iadd v0, v1\n    v4 = smin v3, v2\n", "v4"),
            body("v0: i32, v1: i32, v2: i32, v3: i32", "i32", "    v4 = umin v0, v1\n    v5 = umax v4, v2\n    v6 = smax v5, v3\n", "v6"),
            // Shifts read by an `bor`, `band` or `isub` (not of one value
            // shifted both ways), a compare of an `bor`, compares of
            // different variables combined, a product extended, a value
            // reduced and extended again, a pair of anything, a `bitcast`
            // of a `bitcast`, an equality with 0, masks and addends.
            body(p3, "i32", "    v3 = iconst.i32 8\n    v4 = ishl v1, v3\n    v5 = bor v0, v4\n", "v5"),
            body(p3, "i32, i32, i32", "    v3 = iconst.i32 8\n    v4 = ushr v1, v3\n    v5 = bor v4, v0\n    v6 = band v4, v2\n    v7 = isub v2, v4\n", "v5, v6, v7"),
            body(p3, "i8", "    v3 = bor v0, v1\n    v4 = icmp ult v3, v2\n", "v4"),
            body("v0: i32, v1: i32, v2: i32, v3: i32", "i8", "    v4 = icmp ult v0, v1\n    v5 = icmp eq v2, v3\n    v6 = band v4, v5\n", "v6"),
            body(p3, "i64", "    v3 = imul v0, v1\n    v4 = sextend.i64 v3\n", "v4"),
            body(p3, "i32", "    v3 = ireduce.i8 v0\n    v4 = uextend.i32 v3\n", "v4"),
            body("v0: i64, v1: i64, v2: i64", "i128", "    v3 = bor v0, v1\n    v4 = iconcat v3, v2\n", "v4"),
            body(p2f, "i32", "    v3 = bitcast.i32 v0\n    v4 = bitcast.f32 v3\n    v5 = bitcast.i32 v4\n    v6 = bor v5, v3\n", "v6"),
            body(p3, "i8", "    v3 = iconst.i32 0\n    v4 = icmp ne v0, v3\n", "v4"),
            body("v0: i8, v1: i32", "i32", "    v2 = uextend.i32 v0\n    v3 = iconst.i32 4\n    v4 = band v2, v3\n    v5 = iconst.i32 7\n    v6 = iadd v1, v5\n    v7 = bxor v4, v6\n", "v7"),
            body("v0: i8, v1: i32", "i32", "    v2 = uextend.i32 v0\n    v3 = iconst.i32 3\n    v4 = ushr v2, v3\n", "v4"),
            // A constant minus a variable or a variable minus a positive
            // constant; a sign test; `bmask` of a zero test; shifts of a
            // right shift by another amount, of a low mask, of a select, by
            // a computed amount; an unsigned compare of a zero extension;
            // compares of floats with anything.
            body(p3, "i32, i32", "    v3 = iconst.i32 5\n    v4 = isub v3, v0\n    v5 = isub v1, v3\n", "v4, v5"),
            body(p3, "i8, i8", "    v3 = iconst.i32 0\n    v4 = icmp slt v0, v3\n    v5 = icmp sge v1, v3\n", "v4, v5"),
            body(p3, "i32", "    v3 = iconst.i32 0\n    v4 = icmp eq v0, v3\n    v5 = bmask.i32 v4\n", "v5"),
            body(p3, "i32", "    v3 = iconst.i32 7\n    v4 = ushr v0, v3\n    v5 = iconst.i32 3\n    v6 = ishl v4, v5\n", "v6"),
            body(p3, "i32", "    v3 = iconst.i32 3\n    v4 = band v0, v3\n    v5 = ishl v4, v3\n    v6 = ushr v1, v5\n", "v6"),
            body(p3, "i32", "    v3 = iconst.i32 4\n    v4 = band v0, v3\n    v5 = select v4, v1, v2\n    v6 = iconst.i32 8\n    v7 = ushr v5, v6\n", "v7"),
            body("v0: i8, v1: i32, v2: i32", "i32", "    v3 = uextend.i32 v0\n    v4 = iconst.i32 16\n    v5 = icmp ult v3, v4\n    v6 = bxor v1, v2\n    v7 = iconst.i32 0\n    v8 = select v5, v6, v7\n", "v8"),
            body(p2f, "i8, i8", "    v3 = fcmp uno v0, v0\n    v4 = f32const 0x1.0p0\n    v5 = fcmp lt v4, v1\n", "v3, v5"),
            // A `band` of a left shift and a mask; a `bitselect` of two
            // values; the halves of a pair made of a compare's mask.
            body(p3, "i32", "    v3 = iconst.i32 8\n    v4 = ishl v0, v3\n    v5 = iconst.i32 0xff00\n    v6 = band v4, v5\n", "v6"),
            body(p3, "i32", "    v3 = iconst.i32 -1\n    v4 = bitselect v0, v1, v3\n", "v4"),
            body("v0: i64, v1: i64", "i32, i32", "    v2 = icmp ult v0, v1\n    v3 = bmask.i64 v2\n    v4, v5 = isplit v3\n", "v4, v5"),
            // Extensions of arithmetic, of shifts, of a float compare; a
            // sum or difference with one left shift; an `fma` with one
            // negated factor or a negated addend; a select of constants on
            // a float compare; float arithmetic with one constant; narrow
            // divisions by a constant that is no power of two.
            body(p3, "i64, i64, i64", "    v3 = iadd v0, v1\n    v4 = sextend.i64 v3\n    v5 = iconst.i32 3\n    v6 = ishl v1, v5\n    v7 = uextend.i64 v6\n    v8 = band v0, v2\n    v9 = uextend.i64 v8\n", "v4, v7, v9"),
            body(p2f, "i32", "    v3 = fcmp lt v0, v1\n    v4 = uextend.i32 v3\n", "v4"),
            body(p3, "i32, i32", "    v3 = iconst.i32 2\n    v4 = ishl v1, v3\n    v5 = iadd v0, v4\n    v6 = isub v2, v4\n", "v5, v6"),
            body(p2f, "f32, f32", "    v3 = fneg v0\n    v4 = fma v3, v1, v2\n    v5 = fneg v2\n    v6 = fma v0, v1, v5\n", "v4, v6"),
            body(p2f, "i32", "    v3 = fcmp lt v0, v1\n    v4 = iconst.i32 3\n    v5 = iconst.i32 9\n    v6 = select v3, v4, v5\n", "v6"),
            body(p2f, "f32, f32", "    v3 = f32const 0x1.8p1\n    v4 = fmul v0, v3\n    v5 = fsub v3, v1\n", "v4, v5"),
            body("v0: i16, v1: i8", "i16, i8", "    v2 = iconst.i16 7\n    v3 = sdiv v0, v2\n    v4 = iconst.i8 -3\n    v5 = urem v1, v4\n", "v3, v5"),
            // A sum with a minimum, a minimum of a `bnot` (`uadd_sat`'s
            // lanes); a clamp of a right shift (`sqmulrs`'s lanes); a `band`
            // with a `bnot` (`band_not`).
            body(p3, "i32", "    v3 = bnot v0\n    v4 = umin v1, v3\n    v5 = iadd v0, v4\n", "v5"),
            body(p3, "i32", "    v3 = iconst.i32 31\n    v4 = sshr v0, v3\n    v5 = iconst.i32 -7\n    v6 = smax v4, v5\n    v7 = iconst.i32 9\n    v8 = smin v6, v7\n", "v8"),
            body(p3, "i32, i32", "    v3 = bnot v1\n    v4 = band v0, v3\n    v5 = bxor v3, v2\n", "v4, v5"),
            // Loads after a store of another offset, type or address.
            body("v0: i64, v1: i64, v2: i32", "i32, i64", "    store v2, v0\n    v3 = load.i32 v0+4\n    v4 = load.i64 v0\n    v5 = load.i32 v1\n    v6 = iadd v3, v5\n", "v6, v4"),
            // A constant added to a sum of two values and the result shifted
            // right (an `avg_round` lane); right shifts of a difference.
            body(p3, "i32", "    v3 = iadd v0, v1\n    v4 = iconst.i32 1\n    v5 = iadd v3, v4\n    v6 = ushr v5, v4\n", "v6"),
            body(p3, "i32, i32", "    v3 = isub v0, v1\n    v4 = iconst.i32 3\n    v5 = sshr v3, v4\n    v6 = ushr v3, v4\n", "v5, v6"),
            // A difference or sum with a maximum or minimum of one of its
            // operands (`usub_sat`'s lanes); shifts of a reduced value, and
            // bitwise operations and sums of reduced values (`vhigh_bits`'s
            // lanes).
            body(p3, "i32, i32", "    v3 = umax v0, v1\n    v4 = isub v3, v1\n    v5 = smin v0, v2\n    v6 = iadd v5, v0\n", "v4, v6"),
            body("v0: i64, v1: i64", "i32, i32, i32", "    v2 = ireduce.i32 v0\n    v3 = iconst.i32 1\n    v4 = ishl v2, v3\n    v5 = ushr v2, v3\n    v6 = sshr v2, v3\n", "v4, v5, v6"),
            body("v0: i64, v1: i64, v2: i32", "i32, i32, i32", "    v3 = ireduce.i32 v0\n    v4 = ireduce.i32 v1\n    v5 = bor v3, v4\n    v6 = band v3, v2\n    v7 = iadd v4, v2\n", "v5, v6, v7"),
        ];
        for text in shapes.iter() {
            let before = parsed(text);
            assert!(without_work(&before, false), "not a kept shape:\n{}", text);
            let mut after = before.clone();
            crate::mid::with_context(&mut after, |ctx| {
                ctx.flowgraph();
                opt_egraph(ctx).unwrap()
            });
            assert!(count(&after) >= count(&before), "the e-graph shortens a kept shape:\n{}\nto\n{}", text, after.display());
        }
    }

    #[test]
    fn functions_from_the_size_limit_keep_their_code() {
        // n counts the instructions: 3 before the chain, n - 3 adds, the return.
        assert!(folded(&optimized(EGRAPH_MAX_INSTS - 2)), "one instruction below the limit the pass runs");
        let f = optimized(EGRAPH_MAX_INSTS - 1);
        assert!(!folded(&f), "at the limit the pass does not run");
        assert_eq!(f.display().to_string(), function(EGRAPH_MAX_INSTS - 1).display().to_string());
    }
}
