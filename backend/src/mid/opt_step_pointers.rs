//! Addresses that are affine in a counted loop's induction variable
//! replaced by pointers stepped once per iteration (strength reduction),
//! the loop versioned on a run-time check where the address's 32-bit
//! arithmetic might wrap.
//!
//! **The addresses.** In a counted loop `L` of [`super::induction`] with
//! induction variable `i` (step `s`), the 64-bit address of a load or store
//! (or any `i64` value of `L` a memory access uses as its address) when it
//! is
//!
//! - for an `i64` loop: affine in `i` (`c + a·i`, wrapping, `a` not zero);
//! - for an `i32` loop: `base + scale·ext(e)` (`base` invariant or absent,
//!   `scale` a constant from `ishl`/`imul`, or 1; `ext` a `sextend` or
//!   `uextend` to `i64`; `e` an `i32` value affine in `i`, `a` not zero).
//!
//! **The rewrite.** Each such address becomes a new parameter `p` of `L`:
//! the loop's back edge passes `p + step`, and a new pre-header `V` (which
//! every edge that entered `L` now enters, with the same arguments) passes
//! the address of the first iteration. The address's own instructions,
//! now unused, are deleted. `opt_unroll_loops` then addresses the unrolled
//! copies from one pointer with immediate offsets where the step is a
//! constant.
//!
//! **Why it is exact.** For an `i64` loop the address is a sum of products
//! modulo `2^64`, so stepping `p` by `a·s` gives the same bits as
//! recomputing it. For an `i32` loop, `e ≡ c + a·i (mod 2^32)`: let
//! `E(i) = C + A·i` in integers, with `A = sext(a)` and `C` the extension of
//! `c` by `ext`. `ext(e) = E(i)` exactly when `E(i)` lies in `ext`'s range
//! (`i32` for `sextend`, `u32` for `uextend`), and `E` is affine, so it holds
//! for every value `i` takes when it holds at the smallest and the largest,
//! `lo = i0` and `hi = max(i0, n - 1)` — provided no `i + s` wraps, so that
//! `i` takes only values between (`hi + s` fits the induction type; both in
//! `docs/optimization.md`). Then the address is `base + scale·E(i)` and
//! `p = base + scale·E(lo)` stepped by `scale·A·s` (modulo `2^64`) is it.
//!
//! **The version check.** The conditions are proven at compile time where
//! they follow from constants: the range of `i0` (constant entry values),
//! of `hi` (a constant `n`, else up to the type's maximum less `s`), and
//! constant `a` and `c` (so `sextend(i)` in a signed loop that starts at a
//! constant needs no check, nor does an `i + 1` bound by `n`). What is not
//! proven is checked in `V` in 64-bit arithmetic (no product there
//! overflows: `|A| ≤ 2^31`, `hi < 2^32`): `hi + s`, `E(lo)` and `E(hi)`
//! fit. `V` then branches to the rewritten `L` when all hold, else to a
//! copy of the original loop (with its own back edge, to the same exit;
//! marked cold: not unrolled, laid out last, no reconvergence region of its
//! own), so every input runs the iterations the program wrote, with the same
//! addresses. A loop with a call is left alone (lanes taking different
//! versions would run a warp-collective intrinsic apart).
//!
//! **Cost rule.** Only at `opt_level=speed`. An address is replaced when
//! the instructions of `L` only it uses number at least [`MIN_COST`] (an
//! `imul` of two registers in `i64` counts 3): the pointer costs one 64-bit
//! add per iteration (one `IMAD.WIDE` for a step `4·n`, none per unrolled
//! copy for a constant step). At most [`MAX_POINTERS`] per loop (each holds
//! a register pair across the loop). A loop that must be versioned may not
//! have values used after it other than through its exit's arguments.

use cranelift_codegen::cursor::{Cursor, FuncCursor};
use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{types, Block, BlockArg, Function, Inst, InstBuilder, InstructionData, Opcode, Type, Value, ValueDef};

use super::induction::{affine, call_args, def_block, escaping, iconst, plain_entries, redirect_entries, wrap, Affine, CountedLoop, Inv};
use crate::Error;

/// The fewest instructions of the loop an address must free to be replaced.
pub const MIN_COST: u32 = 4;
/// The most pointers one loop gets.
pub const MAX_POINTERS: usize = 4;

/// Replaces the addresses of every counted loop that the cost rule admits.
pub fn opt_step_pointers(func: &mut Function) -> Result<(), Error> {
    if !super::induction::has_single_block_loop(func) {
        return Ok(());
    }
    let blocks: Vec<Block> = func.layout.blocks().collect();
    for l in blocks {
        let Some(lp) = CountedLoop::find(func, l) else { continue };
        // No calls: lanes that take different versions would run a
        // warp-collective intrinsic apart.
        let calls = func.layout.block_insts(l).any(|i| func.dfg.insts[i].opcode().is_call());
        if calls || !plain_entries(func, l) {
            continue;
        }
        let mut cands = candidates(func, &lp);
        if cands.iter().any(|c| c.check) && !escaping(func, l).is_empty() {
            cands.retain(|c| !c.check);
        }
        let iv_check = cands.iter().any(|c| c.ext != Ext::None) && !iv_proven(func, &lp);
        if iv_check && !escaping(func, l).is_empty() {
            cands.retain(|c| c.ext == Ext::None);
        }
        if !cands.is_empty() {
            rewrite(func, &lp, &cands);
        }
    }
    Ok(())
}

/// How the 32-bit index reaches 64 bits.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Ext {
    Sext,
    Uext,
    /// An `i64` loop: the whole address is affine.
    None,
}

/// An address the pass replaces.
#[derive(Debug)]
struct Cand {
    addr: Value,
    base: Option<Value>,
    ext: Ext,
    scale: i64,
    e: Affine,
    /// Must `V` check `E(lo)` and `E(hi)`?
    check: bool,
}

/// Is `v` loop-invariant (defined outside `l`, or a constant)?
fn invariant(f: &Function, l: Block, v: Value) -> bool {
    def_block(f, v) != Some(l) || iconst(f, v).is_some()
}

/// The instruction that defines `v` in `l`, with its data.
fn def_in(f: &Function, l: Block, v: Value) -> Option<(Inst, &InstructionData)> {
    match f.dfg.value_def(v) {
        ValueDef::Result(inst, 0) if f.layout.inst_block(inst) == Some(l) => Some((inst, &f.dfg.insts[inst])),
        _ => None,
    }
}

/// The range of the entry value of the induction variable: the constants
/// every outside edge passes, else the whole type.
fn entry_range(f: &Function, lp: &CountedLoop) -> (i128, i128) {
    let mut r: Option<(i128, i128)> = None;
    for b in f.layout.blocks().filter(|&b| b != lp.block) {
        let Some(t) = f.layout.last_inst(b) else { continue };
        for call in f.dfg.insts[t].branch_destination(&f.dfg.jump_tables, &f.dfg.exception_tables) {
            if call.block(&f.dfg.value_lists) != lp.block {
                continue;
            }
            let Some(k) = call_args(f, call).and_then(|a| iconst(f, a[lp.iv])) else { return (lp.min(), lp.max()) };
            let k = lp.num(k);
            r = Some(r.map_or((k, k), |(x, y)| (x.min(k), y.max(k))));
        }
    }
    r.unwrap_or((lp.min(), lp.max()))
}

/// Is `hi + s` at most the type's maximum on every input?
fn iv_proven(f: &Function, lp: &CountedLoop) -> bool {
    let hi = lp.hi_range(entry_range(f, lp));
    hi.1 + i128::from(lp.step) <= lp.max()
}

/// The addresses of `lp` the pass replaces (module documentation).
fn candidates(f: &Function, lp: &CountedLoop) -> Vec<Cand> {
    let l = lp.block;
    let mut uses: std::collections::HashMap<Value, u32> = std::collections::HashMap::new();
    for inst in f.layout.block_insts(l) {
        for v in f.dfg.inst_values(inst) {
            *uses.entry(v).or_default() += 1;
        }
    }
    let iv_range = lp.hi_range(entry_range(f, lp));
    let lo_min = entry_range(f, lp).0;
    let hi_max = if iv_proven(f, lp) { iv_range.1 } else { lp.max() - i128::from(lp.step) };
    let mut out: Vec<Cand> = Vec::new();
    for inst in f.layout.block_insts(l) {
        let addr = match f.dfg.insts[inst] {
            InstructionData::Load { arg, .. } => arg,
            InstructionData::Store { args, .. } => args[1],
            _ => continue,
        };
        if out.len() >= MAX_POINTERS || out.iter().any(|c| c.addr == addr) || f.dfg.value_type(addr) != types::I64 {
            continue;
        }
        if def_in(f, l, addr).is_none() || cost(f, l, addr, &uses, 0) < MIN_COST {
            continue;
        }
        let cand = if lp.ty == types::I64 {
            affine(f, lp, addr).filter(|e| e.a != Inv::Const(0)).map(|e| Cand {
                addr,
                base: None,
                ext: Ext::None,
                scale: 1,
                e,
                check: false,
            })
        } else {
            index_of(f, lp, addr).map(|(base, ext, scale, e)| {
                let check = !proven(&e, ext, lo_min, hi_max);
                Cand { addr, base, ext, scale, e, check }
            })
        };
        out.extend(cand);
    }
    out
}

/// Is `ext(e)` affine over `i` in `[lo, hi]` by the constants alone?
fn proven(e: &Affine, ext: Ext, lo: i128, hi: i128) -> bool {
    let (Some(a), Some(c)) = (e.a.konst(), e.c.konst()) else { return false };
    let (a, c) = (i64::from(a as i32), c as i32);
    let (c, range) = match ext {
        Ext::Sext => (i128::from(c), (i128::from(i32::MIN), i128::from(i32::MAX))),
        _ => (i128::from(c as u32), (0, i128::from(u32::MAX))),
    };
    let (x, y) = super::induction::affine_range(a, c, lo, hi);
    lo <= hi && x >= range.0 && y <= range.1
}

/// `addr` as `base + scale·ext(e)` of an `i32` loop.
fn index_of(f: &Function, lp: &CountedLoop, addr: Value) -> Option<(Option<Value>, Ext, i64, Affine)> {
    let l = lp.block;
    let (base, off) = match def_in(f, l, addr)?.1 {
        InstructionData::Binary { opcode: Opcode::Iadd, args } if invariant(f, l, args[0]) => (Some(args[0]), args[1]),
        InstructionData::Binary { opcode: Opcode::Iadd, args } if invariant(f, l, args[1]) => (Some(args[1]), args[0]),
        _ => (None, addr),
    };
    let (scale, x) = match def_in(f, l, off).map(|d| d.1) {
        Some(&InstructionData::Binary { opcode: Opcode::Ishl, args }) => (1i64 << (iconst(f, args[1])? & 63), args[0]),
        Some(&InstructionData::Binary { opcode: Opcode::Imul, args }) => match (iconst(f, args[0]), iconst(f, args[1])) {
            (_, Some(k)) => (k, args[0]),
            (Some(k), _) => (k, args[1]),
            _ => return None,
        },
        _ => (1, off),
    };
    let (ext, e) = match def_in(f, l, x).map(|d| d.1) {
        Some(&InstructionData::Unary { opcode: Opcode::Sextend, arg }) => (Ext::Sext, arg),
        Some(&InstructionData::Unary { opcode: Opcode::Uextend, arg }) => (Ext::Uext, arg),
        _ => return None,
    };
    let e = affine(f, lp, e).filter(|e| e.a != Inv::Const(0))?;
    Some((base, ext, scale, e))
}

/// How many instructions of `l` only `v`'s computation uses (an `imul` of
/// two non-constants in `i64` counting 3).
fn cost(f: &Function, l: Block, v: Value, uses: &std::collections::HashMap<Value, u32>, depth: u32) -> u32 {
    let Some((inst, data)) = def_in(f, l, v) else { return 0 };
    if depth > 12 || f.dfg.inst_results(inst).len() != 1 || (depth > 0 && uses.get(&v).copied().unwrap_or(0) > 1) {
        return 0;
    }
    if iconst(f, v).is_some() {
        return 0;
    }
    let own = match data {
        InstructionData::Binary { opcode: Opcode::Imul, args }
            if f.dfg.value_type(v) == types::I64 && iconst(f, args[0]).is_none() && iconst(f, args[1]).is_none() =>
        {
            3
        }
        _ => 1,
    };
    own + f.dfg.inst_args(inst).iter().map(|&a| cost(f, l, a, uses, depth + 1)).sum::<u32>()
}

/// `v` (an `i32` value of `V`) extended to `i64` by `ext`.
fn extend(pos: &mut FuncCursor, ext: Ext, v: Value) -> Value {
    match ext {
        Ext::Uext => pos.ins().uextend(types::I64, v),
        _ => pos.ins().sextend(types::I64, v),
    }
}

/// `ok` and `x` fits `ext`'s range (`x` an `i64` of `V`): its high word is
/// the low word's sign (`sextend`) or zero (`uextend`); `isplit` costs nothing.
fn and_fits(pos: &mut FuncCursor, ok: Option<Value>, ext: Ext, x: Value) -> Option<Value> {
    let (lo, hi) = pos.ins().isplit(x);
    let want = match ext {
        Ext::Uext => pos.ins().iconst(types::I32, 0),
        _ => {
            let k = pos.ins().iconst(types::I32, 31);
            pos.ins().sshr(lo, k)
        }
    };
    let fits = pos.ins().icmp(IntCC::Equal, hi, want);
    Some(match ok {
        Some(o) => pos.ins().band(o, fits),
        None => fits,
    })
}

/// The loop's instructions, the new pre-header and (when a check is
/// needed) the copy of the original loop (module documentation).
fn rewrite(f: &mut Function, lp: &CountedLoop, cands: &[Cand]) {
    let l = lp.block;
    let ty = lp.ty;
    let params: Vec<Value> = f.dfg.block_params(l).to_vec();
    let types: Vec<Type> = params.iter().map(|&p| f.dfg.value_type(p)).collect();
    let iv_check = cands.iter().any(|c| c.ext != Ext::None) && !iv_proven(f, lp);
    let version = iv_check || cands.iter().any(|c| c.check);

    // The pre-header, which the outside edges now enter.
    let v = f.dfg.make_block();
    f.layout.insert_block(v, l);
    let v_params: Vec<Value> = types.iter().map(|&t| f.dfg.append_block_param(v, t)).collect();
    redirect_entries(f, l, v, &[]);
    // The original loop, kept for the inputs the check rejects.
    let orig = version.then(|| copy_loop(f, lp));

    // V: the first addresses and the check.
    let i0 = v_params[lp.iv];
    let mut pos = FuncCursor::new(f).at_bottom(v);
    let mut ok: Option<Value> = None;
    let mut firsts: Vec<Value> = Vec::new();
    // Per candidate: its slope, when it is not a constant (a value of V).
    let mut slopes: Vec<Option<Value>> = Vec::new();
    // `hi`, in the induction type: `max(i0, n - 1)` (where `n - 1` wraps,
    // at `n = MIN`, it is the maximum: a larger `hi` only makes the check
    // stricter).
    let hi = (ty == types::I32 && version).then(|| {
        let n = match lp.bound_const {
            Some(k) => pos.ins().iconst(ty, super::induction::imm(ty, k)),
            None => lp.bound,
        };
        let m1 = pos.ins().iconst(ty, super::induction::imm(ty, -1));
        let n1 = pos.ins().iadd(n, m1);
        if lp.signed {
            pos.ins().smax(i0, n1)
        } else {
            pos.ins().umax(i0, n1)
        }
    });
    if let (true, Some(hi)) = (iv_check, hi) {
        // `hi + s` fits: `hi <= MAX - s`.
        let (cc, lim) = if lp.signed {
            (IntCC::SignedLessThanOrEqual, i64::from(i32::MAX))
        } else {
            (IntCC::UnsignedLessThanOrEqual, i64::from(u32::MAX))
        };
        let k = pos.ins().iconst(ty, super::induction::imm(ty, lim - lp.step));
        ok = Some(pos.ins().icmp(cc, hi, k));
    }
    for c in cands {
        let slope = c.e.a.konst().is_none().then(|| c.e.a.emit(&mut pos, ty));
        slopes.push(slope);
        let a = slope.unwrap_or_else(|| c.e.a.emit(&mut pos, ty));
        let cv = c.e.c.emit(&mut pos, ty);
        // `e` at `i0`, in the induction type (wrapping).
        let ai = match c.e.a.konst() {
            Some(1) => i0,
            _ => pos.ins().imul(a, i0),
        };
        let e0 = match c.e.c.konst() {
            Some(0) => ai,
            _ => pos.ins().iadd(cv, ai),
        };
        let first = if c.ext == Ext::None {
            e0
        } else {
            if let (true, Some(hi)) = (c.check, hi) {
                // `E(i) = C + A·i` in 64 bits, at `lo` and `hi`.
                let big_a = match c.e.a.konst() {
                    Some(1) => None,
                    Some(k) => Some(pos.ins().iconst(types::I64, i64::from(k as i32))),
                    None => Some(pos.ins().sextend(types::I64, a)),
                };
                let big_c = extend(&mut pos, c.ext, cv);
                for i in [i0, hi] {
                    let big_i = if lp.signed { pos.ins().sextend(types::I64, i) } else { pos.ins().uextend(types::I64, i) };
                    let m = match big_a {
                        Some(a) => pos.ins().imul(a, big_i),
                        None => big_i,
                    };
                    let e = pos.ins().iadd(big_c, m);
                    ok = and_fits(&mut pos, ok, c.ext, e);
                }
            }
            // `E(lo)` fits, so it is `ext(e(i0))`: `base + scale·ext(e0)`.
            let x = extend(&mut pos, c.ext, e0);
            let scaled = if c.scale == 1 {
                x
            } else if (c.scale as u64).is_power_of_two() {
                let k = pos.ins().iconst(types::I32, i64::from(c.scale.trailing_zeros()));
                pos.ins().ishl(x, k)
            } else {
                let k = pos.ins().iconst(types::I64, c.scale);
                pos.ins().imul(x, k)
            };
            match c.base {
                Some(b) => {
                    let b = match iconst(pos.func, b) {
                        Some(kb) => pos.ins().iconst(types::I64, kb),
                        None => b,
                    };
                    pos.ins().iadd(b, scaled)
                }
                None => scaled,
            }
        };
        firsts.push(first);
    }
    // Non-constant steps that are not one `IMAD.WIDE` in the loop: computed here.
    let mut steps: Vec<Option<Value>> = Vec::new();
    for (c, slope) in cands.iter().zip(&slopes) {
        steps.push(match *slope {
            Some(a) if c.ext == Ext::None => {
                let s = pos.ins().iconst(ty, lp.step);
                Some(pos.ins().imul(a, s))
            }
            Some(a) if lp.step != 1 || !(c.scale as u64).is_power_of_two() => {
                let big_a = pos.ins().sextend(types::I64, a);
                let k = pos.ins().iconst(types::I64, c.scale.wrapping_mul(lp.step));
                Some(pos.ins().imul(big_a, k))
            }
            _ => None,
        });
    }
    let to_l: Vec<BlockArg> = v_params.iter().chain(&firsts).map(|&x| BlockArg::Value(x)).collect();
    match (orig, ok) {
        (Some(o), Some(ok)) => {
            let to_o: Vec<BlockArg> = v_params.iter().map(|&x| BlockArg::Value(x)).collect();
            pos.ins().brif(ok, l, &to_l, o, &to_o);
        }
        _ => {
            pos.ins().jump(l, &to_l);
        }
    }

    // L: the pointers as parameters, stepped before the branch.
    let term = f.layout.last_inst(l).expect("a loop block has a branch");
    let mut nexts: Vec<Value> = Vec::new();
    for ((c, slope), step) in cands.iter().zip(&slopes).zip(&steps) {
        let p = f.dfg.append_block_param(l, types::I64);
        let insts: Vec<Inst> = f.layout.block_insts(l).collect();
        for inst in insts {
            f.dfg.map_inst_values(inst, |x| if x == c.addr { p } else { x });
        }
        let mut pos = FuncCursor::new(f).at_inst(term);
        let next = match (*step, *slope) {
            (Some(s), _) => pos.ins().iadd(p, s),
            (None, Some(a)) => {
                // `p + sextend(a) << log2(scale)`: one `IMAD.WIDE`.
                let big_a = pos.ins().sextend(types::I64, a);
                let k = pos.ins().iconst(types::I32, i64::from(c.scale.trailing_zeros()));
                let sh = pos.ins().ishl(big_a, k);
                pos.ins().iadd(p, sh)
            }
            (None, None) => {
                let a = c.e.a.konst().unwrap_or(0);
                let slope = if c.ext == Ext::None { wrap(ty, a) } else { i64::from(a as i32) };
                let k = pos.ins().iconst(types::I64, slope.wrapping_mul(c.scale).wrapping_mul(lp.step));
                pos.ins().iadd(p, k)
            }
        };
        nexts.push(next);
    }
    let dfg = &mut f.dfg;
    if let Some(call) = dfg.insts[term].branch_destination_mut(&mut dfg.jump_tables, &mut dfg.exception_tables).get_mut(lp.back) {
        call.extend(nexts.iter().map(|&x| BlockArg::Value(x)), &mut dfg.value_lists);
    }
    super::delete_dead(f, l);
}

/// A copy of `lp`'s block after it, looping on itself, with the same exit.
fn copy_loop(f: &mut Function, lp: &CountedLoop) -> Block {
    let l = lp.block;
    let o = f.dfg.make_block();
    f.layout.insert_block_after(o, l);
    let mut map: std::collections::HashMap<Value, Value> = std::collections::HashMap::new();
    for p in f.dfg.block_params(l).to_vec() {
        let t = f.dfg.value_type(p);
        map.insert(p, f.dfg.append_block_param(o, t));
    }
    let insts: Vec<Inst> = f.layout.block_insts(l).collect();
    for inst in insts {
        let new = f.dfg.clone_inst(inst);
        f.dfg.map_inst_values(new, |v| *map.get(&v).unwrap_or(&v));
        f.layout.append_inst(new, o);
        for (&old, &nv) in f.dfg.inst_results(inst).to_vec().iter().zip(f.dfg.inst_results(new).to_vec().iter()) {
            map.insert(old, nv);
        }
    }
    // Rarely run: `opt_unroll_loops` leaves it as it is, and the selection lays it out last.
    f.layout.set_cold(o);
    let term = f.layout.last_inst(o).expect("the copy has the branch");
    let dfg = &mut f.dfg;
    if let Some(call) = dfg.insts[term].branch_destination_mut(&mut dfg.jump_tables, &mut dfg.exception_tables).get_mut(lp.back) {
        call.set_block(o, &mut dfg.value_lists);
    }
    o
}
