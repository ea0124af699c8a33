//! Passes on Cranelift IR before instruction selection, and the analyses they share.

pub mod const_eval;
pub mod divergence;
pub mod induction;
pub mod legalize_atomics;
pub mod legalize_div;
pub mod legalize_f128;
pub mod legalize_f16;
pub mod legalize_i128;
pub mod legalize_libcalls;
pub mod legalize_memory;
pub mod legalize_try_calls;
pub mod legalize_vectors;
pub mod opt_constant_phis;
pub mod opt_egraph;
pub mod opt_inline;
pub mod opt_merge_accesses;
pub mod opt_step_pointers;
pub mod opt_unreachable_code;
pub mod opt_unroll_loops;
pub mod source_order;

use std::cell::RefCell;

use cranelift_codegen::cursor::{Cursor, FuncCursor};
use cranelift_codegen::ir::{Block, DataFlowGraph, Function, Inst, InstBuilder, InstructionData, Opcode, Signature, Type, Value};
use cranelift_codegen::{settings, Context};

use crate::Error;

thread_local! {
    /// The Cranelift context the CLIF passes run in, one per thread (its
    /// memory reused from function to function).
    static CONTEXT: RefCell<Context> = RefCell::new(Context::new());
}

/// The ones of an integer of `bits` bits (all 64 from 64 bits on).
pub(crate) fn width_mask(bits: u32) -> u64 {
    if bits >= 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    }
}

/// The low `width` bits of `v` as a signed integer (all 64 from 64 bits on).
pub(crate) fn sign_extend(v: u64, width: u32) -> i64 {
    let s = 64 - width.min(64);
    ((v << s) as i64) >> s
}

/// Runs `f` on a Cranelift context that holds `func` (cleared first, its
/// control-flow graph and dominator tree not computed).
pub(crate) fn with_context<R>(func: &mut Function, f: impl FnOnce(&mut Context) -> R) -> R {
    CONTEXT.with(|c| match c.try_borrow_mut() {
        Ok(mut ctx) => {
            ctx.clear();
            std::mem::swap(&mut ctx.func, func);
            let r = f(&mut ctx);
            std::mem::swap(&mut ctx.func, func);
            r
        }
        Err(_) => {
            let mut ctx = Context::for_function(std::mem::replace(func, Function::new()));
            let r = f(&mut ctx);
            *func = ctx.func;
            r
        }
    })
}

/// Whether some instruction of `f` may have an opcode `pred` accepts: one
/// pass over the instruction table, not the layout. The table also holds
/// instructions no longer in the layout, so `false` is sure and `true` only
/// likely: the passes ask before walking the code.
pub(crate) fn may_have(f: &Function, pred: impl Fn(Opcode) -> bool) -> bool {
    use cranelift_codegen::entity::EntityRef;
    (0..f.dfg.num_insts()).any(|i| pred(f.dfg.insts[Inst::new(i)].opcode()))
}

/// Whether some instruction of `f` may load or store ([`may_have`]).
pub(crate) fn may_access_memory(f: &Function) -> bool {
    may_have(f, |op| op.can_load() || op.can_store())
}

/// The settings the Cranelift passes run with: `opt_level=speed` and no
/// verifier between passes (the compiler verifies its input once, and the
/// mid-end's output when asked: [`crate::Options::check_regalloc`]).
pub(crate) fn flags() -> &'static settings::Flags {
    static FLAGS: std::sync::OnceLock<settings::Flags> = std::sync::OnceLock::new();
    FLAGS.get_or_init(|| {
        use settings::Configurable;
        let mut b = settings::builder();
        // Both names are Cranelift's own settings; a failure would leave the defaults.
        let _ = b.set("opt_level", "speed");
        let _ = b.set("enable_verifier", "false");
        settings::Flags::new(b)
    })
}

/// Cranelift's verifier on `f`: its report, when it finds errors (the
/// verifier reads no setting of [`flags`]; one set serves every check).
///
/// The verifier checks every parameter of a block at each of the block's
/// instructions: one jump to 32k parameters followed by 32k instructions
/// would cost 10^9 checks. Where a block's parameters times its
/// instructions pass [`SPLIT_PRODUCT`], the verifier reads a copy in which
/// that block ends after its first instruction with a jump to a new block
/// holding the rest (the same values, defined in the same order, each
/// dominating the same uses); a report then shows the copy.
pub(crate) fn verifier_report(f: &Function) -> Option<String> {
    let big = |b| f.dfg.block_params(b).len().saturating_mul(f.layout.block_insts(b).count()) > SPLIT_PRODUCT;
    if !f.layout.blocks().any(big) {
        let errs = cranelift_codegen::verifier::verify_function(f, flags()).err()?;
        return Some(cranelift_codegen::print_errors::pretty_verifier_error(f, None, errs));
    }
    let mut g = f.clone();
    let blocks: Vec<_> = f.layout.blocks().filter(|&b| big(b)).collect();
    for b in blocks {
        let mut insts = g.layout.block_insts(b);
        let (Some(first), Some(second)) = (insts.next(), insts.next()) else { continue };
        if g.dfg.insts[first].opcode().is_terminator() {
            continue;
        }
        let rest = g.dfg.make_block();
        g.layout.split_block(rest, second);
        FuncCursor::new(&mut g).at_bottom(b).ins().jump(rest, &[]);
    }
    let errs = cranelift_codegen::verifier::verify_function(&g, flags()).err()?;
    Some(cranelift_codegen::print_errors::pretty_verifier_error(&g, None, errs))
}

/// Parameters times instructions of a block beyond which
/// [`verifier_report`] splits it (1M checks: far beyond any hand-written
/// function).
const SPLIT_PRODUCT: usize = 1 << 20;

/// In a debug build, the function a CLIF pass produced checked by
/// Cranelift's verifier (an error there is a bug of the pass).
pub(crate) fn verify_in_debug(f: &Function) -> Result<(), Error> {
    if !cfg!(debug_assertions) {
        return Ok(());
    }
    match verifier_report(f) {
        Some(text) => Err(Error::internal(format!("the rewritten function does not verify:\n{}", text))),
        None => Ok(()),
    }
}

/// The driver of a type-splitting legalization (`legalize_i128`,
/// `legalize_vectors`): `rewrite` on every instruction of the reachable
/// blocks in reverse postorder (so the parts of every operand exist when its
/// user is rewritten); an unreachable block with an instruction `touches`
/// holds for is replaced by a `trap` (it never runs). Aliases are left to
/// the caller.
pub(crate) fn rewrite_in_rpo(
    f: &mut Function,
    touches: impl Fn(&Function, Inst) -> bool,
    mut rewrite: impl FnMut(&mut Function, Inst) -> Result<(), Error>,
) -> Result<(), Error> {
    use cranelift_codegen::ir::TrapCode;
    let blocks: Vec<Block> = f.layout.blocks().collect();
    if let [entry] = blocks[..] {
        // One block, the entry: the whole order, and nothing unreachable.
        let insts: Vec<Inst> = f.layout.block_insts(entry).collect();
        for inst in insts {
            rewrite(f, inst)?;
        }
        return Ok(());
    }
    let cfg = cranelift_codegen::flowgraph::ControlFlowGraph::with_function(f);
    let domtree = cranelift_codegen::dominator_tree::DominatorTree::with_function(f, &cfg);
    let order: Vec<Block> = domtree.cfg_postorder().iter().rev().copied().collect();
    for b in order {
        let insts: Vec<Inst> = f.layout.block_insts(b).collect();
        for inst in insts {
            rewrite(f, inst)?;
        }
    }
    for b in blocks {
        if domtree.is_reachable(b) {
            continue;
        }
        let insts: Vec<Inst> = f.layout.block_insts(b).collect();
        if insts.iter().any(|&i| touches(f, i)) {
            for i in insts {
                f.layout.remove_inst(i);
            }
            let mut pos = FuncCursor::new(f).at_bottom(b);
            pos.ins().trap(TrapCode::unwrap_user(1));
        }
    }
    Ok(())
}

/// What a type-splitting legalization turns a value of type `t` into:
/// (the type of its parts, how many), or `None` for a type it keeps.
pub(crate) type Parts = fn(Type) -> Option<(Type, usize)>;

/// Splits the signatures of `f` (its own and every `SigRef`) and the
/// parameters of its blocks by `parts`: each wide parameter or result is
/// replaced by its parts in its place; `record` receives each old block
/// parameter and its new ones.
pub(crate) fn split_signatures_and_params(f: &mut Function, parts: Parts, mut record: impl FnMut(Value, Vec<Value>)) {
    use cranelift_codegen::ir::AbiParam;
    let split_sig = |s: &mut Signature| {
        for list in [&mut s.params, &mut s.returns] {
            if list.iter().any(|p| parts(p.value_type).is_some()) {
                let mut split = Vec::with_capacity(list.iter().map(|p| parts(p.value_type).map_or(1, |(_, n)| n)).sum());
                for p in list.iter() {
                    match parts(p.value_type) {
                        Some((t, n)) => split.extend(std::iter::repeat_n(AbiParam::new(t), n)),
                        None => split.push(*p),
                    }
                }
                *list = split;
            }
        }
    };
    split_sig(&mut f.signature);
    let sigs: Vec<_> = f.dfg.signatures.keys().collect();
    for s in sigs {
        split_sig(&mut f.dfg.signatures[s]);
    }
    let blocks: Vec<Block> = f.layout.blocks().collect();
    for b in blocks {
        let params = f.dfg.block_params(b).to_vec();
        if !params.iter().any(|&p| parts(f.dfg.value_type(p)).is_some()) {
            continue;
        }
        f.dfg.detach_block_params(b);
        for p in params {
            match parts(f.dfg.value_type(p)) {
                Some((t, n)) => {
                    let new = (0..n).map(|_| f.dfg.append_block_param(b, t)).collect();
                    record(p, new);
                }
                None => f.dfg.attach_block_param(b, p),
            }
        }
    }
}

/// `args` with each wide one (by `wide`) replaced by its parts (`parts`), in place.
pub(crate) fn expand_args<P: IntoIterator<Item = Value>>(
    f: &Function,
    args: &[Value],
    wide: impl Fn(Type) -> bool,
    mut parts: impl FnMut(Value) -> Result<P, Error>,
) -> Result<Vec<Value>, Error> {
    let mut out = Vec::new();
    for &a in args {
        if wide(f.dfg.value_type(a)) {
            out.extend(parts(a)?);
        } else {
            out.push(a);
        }
    }
    Ok(out)
}

/// The call (or tail call) `inst` made again at `pos` with the arguments
/// `expand` gives for its own (the callee of an indirect call kept): what
/// each old result becomes, its parts (by `parts`) or one value. Another
/// call form is an "unsupported" error: "`what` is not supported".
pub(crate) fn remake_call(
    pos: &mut FuncCursor,
    inst: Inst,
    what: &str,
    args: &[Value],
    results: &[Value],
    parts: Parts,
    expand: impl Fn(&Function, &[Value]) -> Result<Vec<Value>, Error>,
) -> Result<Vec<Result<Vec<Value>, Value>>, Error> {
    use cranelift_codegen::ir::InstructionData;
    let op = pos.func.dfg.insts[inst].opcode();
    let new = match pos.func.dfg.insts[inst] {
        InstructionData::Call { func_ref, .. } => {
            let vals = expand(pos.func, args)?;
            if op == Opcode::Call {
                pos.ins().call(func_ref, &vals)
            } else {
                pos.ins().return_call(func_ref, &vals)
            }
        }
        InstructionData::CallIndirect { sig_ref, .. } => {
            let vals = expand(pos.func, &args[1..])?;
            if op == Opcode::CallIndirect {
                pos.ins().call_indirect(sig_ref, args[0], &vals)
            } else {
                pos.ins().return_call_indirect(sig_ref, args[0], &vals)
            }
        }
        _ => return Err(Error::unsupported(format!("{} is not supported", what)).at(pos.func.dfg.display_inst(inst))),
    };
    let new_results = pos.func.dfg.inst_results(new).to_vec();
    let mut k = 0;
    let mut out = Vec::new();
    for &r in results {
        match parts(pos.func.dfg.value_type(r)) {
            Some((_, n)) => {
                out.push(Ok(new_results[k..k + n].to_vec()));
                k += n;
            }
            None => {
                out.push(Err(new_results[k]));
                k += 1;
            }
        }
    }
    Ok(out)
}

/// Removes `inst`, whose rewritten code is in place, and gives each of its
/// old `results` what `out` says it became: parts (into `map`) or another
/// value (an alias).
pub(crate) fn replace_results<P>(
    f: &mut Function,
    inst: Inst,
    results: &[Value],
    out: impl IntoIterator<Item = Result<P, Value>, IntoIter: ExactSizeIterator>,
    map: &mut rustc_hash::FxHashMap<Value, P>,
) -> Result<(), Error> {
    let out = out.into_iter();
    if out.len() != results.len() {
        return Err(Error::internal(format!("{} results rewritten for {}", out.len(), results.len())).at(f.dfg.display_inst(inst)));
    }
    f.dfg.clear_results(inst);
    f.layout.remove_inst(inst);
    for (&old, new) in results.iter().zip(out) {
        match new {
            Ok(parts) => {
                map.insert(old, parts);
            }
            Err(v) => f.dfg.change_to_alias(old, v),
        }
    }
    Ok(())
}

/// The block arguments of the branch `inst` whose type `wide` holds for
/// replaced by their parts (`parts` of each, in place).
pub(crate) fn split_branch_args<P: IntoIterator<Item = Value>>(
    f: &mut Function,
    inst: Inst,
    wide: impl Fn(cranelift_codegen::ir::Type) -> bool,
    parts: impl Fn(&Function, Value) -> Result<P, Error>,
) -> Result<(), Error> {
    use cranelift_codegen::ir::BlockArg;
    let n = f.dfg.insts[inst].branch_destination(&f.dfg.jump_tables, &f.dfg.exception_tables).len();
    for k in 0..n {
        let dfg = &f.dfg;
        let bc = dfg.insts[inst].branch_destination(&dfg.jump_tables, &dfg.exception_tables)[k];
        let old: Vec<BlockArg> = bc.args(&dfg.value_lists).collect();
        if !old.iter().any(|a| matches!(a, BlockArg::Value(v) if wide(dfg.value_type(*v)))) {
            continue;
        }
        let mut new = Vec::new();
        for a in old {
            match a {
                BlockArg::Value(v) if wide(f.dfg.value_type(v)) => new.extend(parts(f, v)?.into_iter().map(BlockArg::Value)),
                a => new.push(a),
            }
        }
        let dfg = &mut f.dfg;
        let bc = &mut dfg.insts[inst].branch_destination_mut(&mut dfg.jump_tables, &mut dfg.exception_tables)[k];
        bc.clear(&mut dfg.value_lists);
        bc.extend(new, &mut dfg.value_lists);
    }
    Ok(())
}

/// Whether instructions of `op` have an effect beyond their results
/// (memory, traps, calls, control): those cannot be deleted unused or be
/// one when their operands are the same.
pub(crate) fn has_effect(op: Opcode) -> bool {
    op.can_load() || op.can_store() || op.can_trap() || op.is_call() || op.other_side_effects() || op.is_branch() || op.is_terminator()
}

/// The instructions of `l` without side effects whose results nothing uses, deleted.
pub(crate) fn delete_dead(f: &mut Function, l: Block) {
    loop {
        let mut used: std::collections::HashSet<Value> = std::collections::HashSet::new();
        for b in f.layout.blocks() {
            for inst in f.layout.block_insts(b) {
                used.extend(f.dfg.inst_values(inst));
            }
        }
        let dead: Vec<Inst> = f
            .layout
            .block_insts(l)
            .filter(|&inst| !has_effect(f.dfg.insts[inst].opcode()) && f.dfg.inst_results(inst).iter().all(|r| !used.contains(r)))
            .collect();
        if dead.is_empty() {
            return;
        }
        for inst in dead {
            f.layout.remove_inst(inst);
        }
    }
}

/// Whether a value of the table of `f` (in use or not) has a type `wanted`
/// accepts. Read by index: the unused entries have types too (`INVALID`
/// for the reserved ones), and the table's own iterator, which skips them,
/// costs several times as much per value.
pub(crate) fn value_table_has(f: &Function, wanted: impl Fn(Type) -> bool) -> bool {
    use cranelift_codegen::entity::EntityRef;
    (0..f.dfg.num_values()).any(|i| wanted(f.dfg.value_type(Value::new(i))))
}

/// Does `f` have a value of type `ty` (in its signature, a called
/// signature, a block parameter or an instruction's operand or result)?
pub(crate) fn mentions_type(f: &Function, ty: Type) -> bool {
    mentions(f, |t| t == ty)
}

/// Does `f` have a value of a type `wanted` accepts, in its signature, a
/// called signature, a block parameter or an instruction's operand or
/// result? (A block argument is a block parameter's value.)
pub(crate) fn mentions(f: &Function, wanted: impl Fn(Type) -> bool) -> bool {
    let sig = |s: &Signature| s.params.iter().chain(s.returns.iter()).any(|p| wanted(p.value_type));
    let typed = |v: &Value| wanted(f.dfg.value_type(*v));
    sig(&f.signature)
        || f.dfg.signatures.values().any(sig)
        // The value table also holds values no instruction names any more:
        // one pass over it rules out most functions, the walk decides.
        || value_table_has(f, &wanted)
            && f.layout.blocks().any(|b| {
                f.dfg.block_params(b).iter().any(typed)
                    || f.layout.block_insts(b).any(|i| inst_mentions(f, i, &wanted))
            })
}

/// The bits of `v` if it is an `iconst`, zero-extended from its type.
/// (`value_def` looks through aliases, which have their original's type.)
#[inline]
pub(crate) fn iconst_bits(dfg: &DataFlowGraph, v: Value) -> Option<u64> {
    match dfg.insts[dfg.value_def(v).inst()?] {
        InstructionData::UnaryImm { opcode: Opcode::Iconst, imm } => Some(imm.bits() as u64 & width_mask(dfg.value_type(v).bits())),
        _ => None,
    }
}

/// Does `inst` take or produce a value of type `ty` (block arguments not counted)?
pub(crate) fn inst_mentions_type(f: &Function, inst: Inst, ty: Type) -> bool {
    inst_mentions(f, inst, |t| t == ty)
}

/// Does `inst` take or produce a value of a type `wanted` accepts (block
/// arguments not counted)?
fn inst_mentions(f: &Function, inst: Inst, wanted: impl Fn(Type) -> bool) -> bool {
    f.dfg.inst_args(inst).iter().chain(f.dfg.inst_results(inst)).any(|&v| wanted(f.dfg.value_type(v)))
}

/// Every value of type `from` (block parameters, instruction results, the
/// parameters and results of the function's and the called signatures)
/// replaced by a value of type `to`, and every use renamed: a type that
/// lives as the bits of an integer of the same width. The instructions
/// keep their opcodes (a `load` or `select` of `to` is what it was; a
/// float operation on `to` is left for the caller to rewrite).
pub(crate) fn retype_values(f: &mut Function, from: Type, to: Type) {
    f.dfg.resolve_all_aliases();
    let retype = |s: &mut Signature| {
        for p in s.params.iter_mut().chain(s.returns.iter_mut()) {
            if p.value_type == from {
                p.value_type = to;
            }
        }
    };
    retype(&mut f.signature);
    for s in f.dfg.signatures.values_mut() {
        retype(s);
    }
    let mut map: rustc_hash::FxHashMap<Value, Value> = Default::default();
    let blocks: Vec<Block> = f.layout.blocks().collect();
    for &b in &blocks {
        for p in f.dfg.block_params(b).to_vec() {
            if f.dfg.value_type(p) == from {
                map.insert(p, f.dfg.replace_block_param(p, to));
            }
        }
        let mut next = f.layout.first_inst(b);
        while let Some(inst) = next {
            for r in f.dfg.inst_results(inst).to_vec() {
                if f.dfg.value_type(r) == from {
                    map.insert(r, f.dfg.replace_result(r, to));
                }
            }
            next = f.layout.next_inst(inst);
        }
    }
    for b in blocks {
        let mut next = f.layout.first_inst(b);
        while let Some(inst) = next {
            f.dfg.map_inst_values(inst, |v| map.get(&v).copied().unwrap_or(v));
            next = f.layout.next_inst(inst);
        }
    }
}

/// The instructions of `f` (in layout order) that take or produce a value of type `ty`.
pub(crate) fn insts_mentioning(f: &Function, ty: Type) -> Vec<Inst> {
    f.layout.blocks().flat_map(|b| f.layout.block_insts(b)).filter(|&i| inst_mentions_type(f, i, ty)).collect()
}

/// A float type kept as the integer of its bits (`legalize_f16`,
/// `legalize_f128`): every value of type `from` renamed to one of `to`
/// ([`retype_values`]); instructions that only carry it ([`moves_bits`])
/// kept; `bitcast` between `from` and `to` deleted; each instruction of an
/// opcode `computes` admits replaced by the value `compute` builds before
/// it (its operands already of type `to`). Any other instruction on `from`
/// is an "unsupported" error, found before anything is rewritten.
pub(crate) fn legalize_as_bits(
    f: &mut Function,
    from: Type,
    to: Type,
    computes: fn(Opcode) -> bool,
    compute: fn(&mut FuncCursor, Inst) -> Value,
) -> Result<(), Error> {
    if !mentions_type(f, from) {
        return Ok(());
    }
    let insts = insts_mentioning(f, from);
    let supported = |i: Inst| match f.dfg.insts[i].opcode() {
        // Between the type and its integer only (a vector is another pass's).
        Opcode::Bitcast => [f.dfg.inst_args(i)[0], f.dfg.inst_results(i)[0]].iter().all(|&v| [from, to].contains(&f.dfg.value_type(v))),
        op => moves_bits(op) || computes(op),
    };
    if let Some(&bad) = insts.iter().find(|&&i| !supported(i)) {
        let what = format!("`{}` on {} is not supported", f.dfg.insts[bad].opcode(), from);
        return Err(Error::unsupported(what).at(f.dfg.display_inst(bad)));
    }
    retype_values(f, from, to);
    for inst in insts {
        let op = f.dfg.insts[inst].opcode();
        if moves_bits(op) {
            continue;
        }
        let result = f.dfg.inst_results(inst)[0];
        let new = if op == Opcode::Bitcast {
            f.dfg.inst_args(inst)[0]
        } else {
            let mut pos = FuncCursor::new(f).at_inst(inst);
            pos.use_srcloc(inst);
            compute(&mut pos, inst)
        };
        f.dfg.clear_results(inst);
        f.layout.remove_inst(inst);
        f.dfg.change_to_alias(result, new);
    }
    f.dfg.resolve_all_aliases();
    verify_in_debug(f)
}

/// Opcodes that carry a value without looking at its bits.
fn moves_bits(op: Opcode) -> bool {
    use Opcode::*;
    matches!(op, Load | Store | Select | SelectSpectreGuard | Call | CallIndirect | ReturnCall | ReturnCallIndirect | Return)
}
