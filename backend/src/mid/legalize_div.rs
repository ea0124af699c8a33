//! Rewrites of Cranelift IR before instruction selection: integer division.
//!
//! The machine has no divide instruction. Every `udiv`, `sdiv`, `urem` and
//! `srem` (i8, i16, i32, i64) gets CLIF's traps here as separate
//! instructions, so that what instruction selection sees never traps:
//!
//! * a zero divisor traps with `int_divz` (`trapz d, int_divz`);
//! * `sdiv INT_MIN, -1` traps with `int_ovf`; `srem INT_MIN, -1` is 0;
//! * quotients truncate toward zero; a remainder has the dividend's sign.
//!
//! Then, by operands, divisor and type:
//!
//! * two constant operands become the constant result (not `sdiv INT_MIN,
//!   -1`, which keeps its trap), and a constant zero dividend becomes 0
//!   after the divisor's zero check;
//! * a constant divisor becomes straight-line CLIF (see "Constant divisors"
//!   below: shifts, `umulhi`/`smulhi` by a magic number);
//! * i32 with the divisor in a register stays as it is: `isel/isle/lower/div.isle`
//!   lowers it to the reciprocal sequence (`isel/src/rules/div.rs`,
//!   `docs/division.md`);
//! * i8/i16 become the same operation on operands extended to i32
//!   (`sextend` for signed, `uextend` for unsigned) and an `ireduce`;
//! * i64 branches on whether both operands fit in 32 bits (`by_width`): if
//!   so, an i32 `udiv`/`urem` of the low words (both operands are then
//!   non-negative, so signed and unsigned agree), else a call of the
//!   runtime routine of the operation (`%ursa_rt_udiv64`, `%ursa_rt_sdiv64`,
//!   `%ursa_rt_urem64`, `%ursa_rt_srem64`: [`crate::module::runtime`]), as
//!   ptxas calls a subroutine for the 64-bit case. The routines themselves
//!   are compiled from the bare i64 operation, which this pass leaves as it
//!   is in them (no traps, no 32-bit case: their callers did both) and
//!   `div.isle` lowers to the 64-bit reciprocal sequence.
//!
//! Other types (i128, vectors) are reported as unsupported.
//!
//! ```text
//! B:      ...
//!         trapz d, int_divz
//!         ;; sdiv only:
//!         t   = select (icmp eq x, INT_MIN), d, 0
//!         trapnz (icmp eq t, -1), int_ovf
//!         v   = op x, d                   ;; i32: left for div.isle
//! ```
//!
//! # Constant divisors
//!
//! An `iconst` divisor `k` needs no zero check (`k = 0` becomes `trapz` alone)
//! and no overflow check unless it is -1 for `sdiv`. Then:
//!
//! * `k = 1` (or -1, signed): `x`, `ineg x`; remainder 0;
//! * `k = 2^s` (positive for signed): `ushr x, s` / `band x, k-1`; signed,
//!   `(x + ((x >>s (N-1)) >>u (N-s))) >>s s` — adding `2^s - 1` to a
//!   negative dividend turns the shift's flooring into truncation;
//! * otherwise multiplication by a "magic" reciprocal, Granlund & Montgomery
//!   (PLDI 1994) figure 4.1 (unsigned) and figure 5.2 (signed), see
//!   `magic_unsigned` and `magic_signed` for the formulas and their
//!   conditions; they hold for every divisor and every `N`-bit dividend.
//!
//! Remainders by a constant are `x - q * k`.
//!
//! In debug builds the result is checked with Cranelift's verifier (a failure
//! is a compiler bug and panics).

use super::const_eval::div_rem;
use super::width_mask;
use crate::Error;
use cranelift_codegen::cursor::{Cursor, FuncCursor};
use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{
    types, BlockArg, ExtFuncData, ExternalName, FuncRef, Function, Inst, InstBuilder, Opcode, TrapCode, Type, Value,
};
use ursa_isel::intrinsics::RUNTIME_ROUTINES;

/// Legalizes `f` in place.
pub fn legalize_div(f: &mut Function) -> Result<(), Error> {
    let is_div = |op: Opcode| matches!(op, Opcode::Udiv | Opcode::Sdiv | Opcode::Urem | Opcode::Srem);
    // Nothing to do (and nothing allocated) without a division.
    if !super::may_have(f, is_div) {
        return Ok(());
    }
    pair_remainders(f);
    let mut divs = Vec::new();
    for b in f.layout.blocks() {
        for i in f.layout.block_insts(b) {
            if is_div(f.dfg.insts[i].opcode()) {
                divs.push(i);
            }
        }
    }
    if divs.is_empty() {
        return Ok(());
    }
    let routine = crate::module::runtime::is_routine(f);
    let mut callees = Callees::default();
    for inst in divs {
        expand_div(f, inst, routine, &mut callees)?;
    }
    f.dfg.resolve_all_aliases();
    super::verify_in_debug(f)
}

/// A remainder whose quotient is also computed — `udiv x, d` and `urem x, d`
/// (or `sdiv`/`srem`) in the same block, with a divisor in a register —
/// becomes `x - q * d` with the quotient `q`, so that one division sequence
/// serves both (as ptxas does for `udiv_i32`). The quotient must come first,
/// except for `udiv`, which then moves up to the remainder: its only trap is
/// the one the remainder already has (a zero divisor), at the same place.
/// (An `sdiv` is not moved: its overflow trap would come earlier.)
fn pair_remainders(f: &mut Function) {
    let blocks: Vec<_> = f.layout.blocks().collect();
    for b in blocks {
        let insts: Vec<Inst> = f.layout.block_insts(b).collect();
        for (k, &rem) in insts.iter().enumerate() {
            let div_op = match f.dfg.insts[rem].opcode() {
                Opcode::Urem => Opcode::Udiv,
                Opcode::Srem => Opcode::Sdiv,
                _ => continue,
            };
            let ty = f.dfg.ctrl_typevar(rem);
            let [x, d] = *f.dfg.inst_args(rem) else { continue };
            let (x, d) = (f.dfg.resolve_aliases(x), f.dfg.resolve_aliases(d));
            if super::iconst_bits(&f.dfg, d).is_some() || !matches!(ty, types::I8 | types::I16 | types::I32 | types::I64) {
                continue;
            }
            let same = |f: &Function, i: Inst| {
                f.dfg.insts[i].opcode() == div_op
                    && f.dfg.ctrl_typevar(i) == ty
                    && matches!(*f.dfg.inst_args(i), [a, c] if f.dfg.resolve_aliases(a) == x && f.dfg.resolve_aliases(c) == d)
            };
            let div = if let Some(&i) = insts[..k].iter().find(|&&i| same(f, i)) {
                i
            } else if let (Opcode::Udiv, Some(&i)) = (div_op, insts[k + 1..].iter().find(|&&i| same(f, i))) {
                f.layout.remove_inst(i);
                f.layout.insert_inst(i, rem);
                i
            } else {
                continue;
            };
            let q = f.dfg.first_result(div);
            let result = f.dfg.first_result(rem);
            let mut pos = FuncCursor::new(f).at_inst(rem);
            pos.use_srcloc(rem);
            let qd = pos.ins().imul(q, d);
            let v = pos.ins().isub(x, qd);
            finish(pos.func, rem, result, v);
        }
    }
}

/// All ones in the low `ty.bits()` bits.
fn mask(ty: Type) -> u64 {
    width_mask(ty.bits())
}

/// `iconst.ty k` (the immediate zero-extended, as the verifier wants).
fn iconst(pos: &mut FuncCursor, ty: Type, k: u64) -> Value {
    pos.ins().iconst(ty, (k & mask(ty)) as i64)
}

/// The runtime routines a function calls, each declared once (in the
/// order of [`RUNTIME_ROUTINES`]).
#[derive(Default)]
struct Callees([Option<FuncRef>; 4]);

impl Callees {
    /// The callee for the i64 `op` (`udiv`, `sdiv`, `urem`, `srem`).
    fn of(&mut self, f: &mut Function, op: Opcode) -> FuncRef {
        let k = crate::module::runtime::routine_of(op).expect("a division opcode");
        *self.0[k].get_or_insert_with(|| {
            let signature = f.import_signature(crate::module::runtime::signature());
            f.import_function(ExtFuncData {
                name: ExternalName::testcase(RUNTIME_ROUTINES[k]),
                signature,
                colocated: true,
                patchable: false,
            })
        })
    }
}

/// Replaces `inst` (a `udiv`/`sdiv`/`urem`/`srem`) by its expansion; in a
/// runtime routine (`routine`) the i64 operation stays as it is.
fn expand_div(f: &mut Function, inst: Inst, routine: bool, callees: &mut Callees) -> Result<(), Error> {
    let op = f.dfg.insts[inst].opcode();
    let ty = f.dfg.ctrl_typevar(inst);
    if !matches!(ty, types::I8 | types::I16 | types::I32 | types::I64) {
        return Err(Error::unsupported(format!("{}.{} is not supported", op, ty)).at(f.dfg.display_inst(inst)));
    }
    let [x, d] = *f.dfg.inst_args(inst) else { return Err(Error::internal("unexpected operands").at(f.dfg.display_inst(inst))) };
    let result = f.dfg.first_result(inst);
    let signed = matches!(op, Opcode::Sdiv | Opcode::Srem);
    let rem = matches!(op, Opcode::Urem | Opcode::Srem);

    let mut pos = FuncCursor::new(f).at_inst(inst);
    pos.use_srcloc(inst);
    let value = match (super::iconst_bits(&pos.func.dfg, x), super::iconst_bits(&pos.func.dfg, d)) {
        // Both operands known (and no trap): the result itself.
        (Some(a), Some(k)) if k != 0 && !(op == Opcode::Sdiv && a == 1u64 << (ty.bits() - 1) && k == mask(ty)) => {
            iconst(&mut pos, ty, div_rem(ty, a, k, signed, rem))
        }
        // `0 / d` and `0 % d` are 0 for every divisor that does not trap.
        (Some(0), None) => {
            pos.ins().trapz(d, TrapCode::INTEGER_DIVISION_BY_ZERO);
            iconst(&mut pos, ty, 0)
        }
        (_, Some(0)) => {
            // Always traps; the value is never produced.
            pos.ins().trapz(d, TrapCode::INTEGER_DIVISION_BY_ZERO);
            iconst(&mut pos, ty, 0)
        }
        (_, Some(k)) => {
            if op == Opcode::Sdiv && k == mask(ty) {
                overflow_check(&mut pos, ty, x, d);
            }
            by_constant(&mut pos, ty, x, k, signed, rem)
        }
        // The routine's own operation (its callers trapped).
        (_, None) if routine && ty == types::I64 => return Ok(()),
        (_, None) => {
            pos.ins().trapz(d, TrapCode::INTEGER_DIVISION_BY_ZERO);
            if op == Opcode::Sdiv {
                overflow_check(&mut pos, ty, x, d);
            }
            match ty {
                // Lowered as it is by `isel/isle/lower/div.isle`.
                types::I32 => return Ok(()),
                types::I64 => by_width(&mut pos, inst, op, x, d, callees),
                _ => {
                    // i8/i16: the same operation on the operands extended to
                    // i32 (exact: the checks above ruled out the one
                    // quotient that does not fit, INT_MIN / -1).
                    let (x32, d32) = if signed {
                        (pos.ins().sextend(types::I32, x), pos.ins().sextend(types::I32, d))
                    } else {
                        (pos.ins().uextend(types::I32, x), pos.ins().uextend(types::I32, d))
                    };
                    let v32 = binary(&mut pos, op, types::I32, x32, d32);
                    pos.ins().ireduce(ty, v32)
                }
            }
        }
    };
    finish(pos.func, inst, result, value);
    Ok(())
}

/// `op.ty a, b` at the cursor; its result.
fn binary(pos: &mut FuncCursor, op: Opcode, ty: Type, a: Value, b: Value) -> Value {
    let (i, dfg) = pos.ins().Binary(op, ty, a, b);
    dfg.first_result(i)
}

/// i64 division by a register: a 32-bit division when both operands fit in
/// 32 bits (both then non-negative, so signed and unsigned agree), else a
/// call of the runtime routine. The rest of the block after `inst` moves
/// to the join block, which takes the result as a parameter:
///
/// ```text
///     c = icmp ugt (bor x, d), 0xffffffff
///     brif c, slow, fast
/// fast:
///     v = uextend.i64 (udiv|urem).i32 (ireduce x), (ireduce d)
///     jump join(v)
/// slow:
///     v = call %ursa_rt_{op}64(x, d)
///     jump join(v)
/// join(v): ...
/// ```
fn by_width(pos: &mut FuncCursor, inst: Inst, op: Opcode, x: Value, d: Value, callees: &mut Callees) -> Value {
    let ty = types::I64;
    let block = pos.current_block().unwrap();
    let fast = pos.func.dfg.make_block();
    let slow = pos.func.dfg.make_block();
    let join = pos.func.dfg.make_block();
    // `inst` and what follows it move to `join`.
    pos.func.layout.split_block(join, inst);
    pos.func.layout.insert_block(fast, join);
    pos.func.layout.insert_block(slow, join);
    pos.goto_bottom(block);
    let o = pos.ins().bor(x, d);
    let k = pos.ins().iconst(ty, 0xffff_ffff);
    let c = pos.ins().icmp(IntCC::UnsignedGreaterThan, o, k);
    pos.ins().brif(c, slow, &[], fast, &[]);
    pos.goto_bottom(fast);
    let x32 = pos.ins().ireduce(types::I32, x);
    let d32 = pos.ins().ireduce(types::I32, d);
    let uop = if matches!(op, Opcode::Udiv | Opcode::Sdiv) { Opcode::Udiv } else { Opcode::Urem };
    let v32 = binary(pos, uop, types::I32, x32, d32);
    let v = pos.ins().uextend(ty, v32);
    pos.ins().jump(join, &[BlockArg::Value(v)]);
    pos.goto_bottom(slow);
    let callee = callees.of(pos.func, op);
    let call = pos.ins().call(callee, &[x, d]);
    let v = pos.func.dfg.first_result(call);
    pos.ins().jump(join, &[BlockArg::Value(v)]);
    pos.goto_inst(inst);
    pos.func.dfg.append_block_param(join, ty)
}

/// `trapnz (x == INT_MIN && d == -1), int_ovf`, without a logical and:
/// `select (x == INT_MIN), d, 0` is -1 exactly then.
fn overflow_check(pos: &mut FuncCursor, ty: Type, x: Value, d: Value) {
    let kmin = iconst(pos, ty, 1u64 << (ty.bits() - 1));
    let is_min = pos.ins().icmp(IntCC::Equal, x, kmin);
    let zero = iconst(pos, ty, 0);
    let t = pos.ins().select(is_min, d, zero);
    let minus1 = iconst(pos, ty, mask(ty));
    let ovf = pos.ins().icmp(IntCC::Equal, t, minus1);
    pos.ins().trapnz(ovf, TrapCode::INTEGER_OVERFLOW);
}

/// Division by the nonzero constant `k` (the bits of a `ty` value), without
/// a loop; for `sdiv` by -1 the caller has emitted the overflow check.
fn by_constant(pos: &mut FuncCursor, ty: Type, x: Value, k: u64, signed: bool, rem: bool) -> Value {
    let bits = ty.bits();
    let min = 1u64 << (bits - 1);
    if k == 1 || (signed && k == mask(ty)) {
        return match (rem, k == 1) {
            (true, _) => iconst(pos, ty, 0),
            (false, true) => x,
            (false, false) => pos.ins().ineg(x),
        };
    }
    if k.is_power_of_two() && (!signed || k < min) {
        return pow2(pos, ty, x, k.trailing_zeros(), signed, rem);
    }
    let q = if signed {
        let (m, l) = magic_signed(bits, k);
        let km = iconst(pos, ty, m);
        let ksign = iconst(pos, ty, bits as u64 - 1);
        let xsign = pos.ins().sshr(x, ksign);
        let mut q = if ty == types::I64 && m & min != 0 {
            // `x + smulhi(x, m)` with `m < 0`: the signed product's
            // correction `- (m < 0 ? x : 0)` and the `+ x` cancel, leaving
            // `umulhi(x, m) - (x < 0 ? m : 0)`; for i64 (a product by 32-bit
            // columns, no one-instruction multiply-high) that is four
            // instructions fewer.
            let t = pos.ins().umulhi(x, km);
            let c = pos.ins().band(xsign, km);
            pos.ins().isub(t, c)
        } else {
            let hi = pos.ins().smulhi(x, km);
            pos.ins().iadd(x, hi)
        };
        if l > 1 {
            let ks = iconst(pos, ty, l as u64 - 1);
            q = pos.ins().sshr(q, ks);
        }
        let q = pos.ins().isub(q, xsign);
        if k & min != 0 {
            pos.ins().ineg(q)
        } else {
            q
        }
    } else {
        let (m, l) = magic_unsigned(bits, k);
        let km = iconst(pos, ty, m);
        let t = pos.ins().umulhi(x, km);
        let xt = pos.ins().isub(x, t);
        let k1 = iconst(pos, ty, 1);
        let half = pos.ins().ushr(xt, k1);
        let mut q = pos.ins().iadd(t, half);
        if l > 1 {
            let ks = iconst(pos, ty, l as u64 - 1);
            q = pos.ins().ushr(q, ks);
        }
        q
    };
    if !rem {
        return q;
    }
    let kk = iconst(pos, ty, k);
    let qk = pos.ins().imul(q, kk);
    pos.ins().isub(x, qk)
}

/// Division by `2^s` (`s < bits`; signed only for positive divisors).
/// Unsigned: `x >> s`, `x & (2^s - 1)`. Signed (truncating): add `2^s - 1`
/// to negative dividends before the arithmetic shift; the remainder is
/// `x - (q << s)`.
fn pow2(pos: &mut FuncCursor, ty: Type, x: Value, s: u32, signed: bool, rem: bool) -> Value {
    let bits = ty.bits() as u64;
    if !signed {
        if rem {
            let m = iconst(pos, ty, (1u64 << s) - 1);
            return pos.ins().band(x, m);
        }
        let k = iconst(pos, ty, s as u64);
        return pos.ins().ushr(x, k);
    }
    if s == 0 {
        return if rem { iconst(pos, ty, 0) } else { x };
    }
    // bias = (x < 0) ? 2^s - 1 : 0, as (x >>s (bits-1)) >>u (bits - s).
    let kb = iconst(pos, ty, bits - 1);
    let sign = pos.ins().sshr(x, kb);
    let kr = iconst(pos, ty, bits - s as u64);
    let bias = pos.ins().ushr(sign, kr);
    let biased = pos.ins().iadd(x, bias);
    let ks = iconst(pos, ty, s as u64);
    let q = pos.ins().sshr(biased, ks);
    if !rem {
        return q;
    }
    let back = pos.ins().ishl(q, ks);
    pos.ins().isub(x, back)
}

/// `ceil(log2(d))` for `d >= 1`.
fn ceil_log2(d: u64) -> u32 {
    64 - (d - 1).leading_zeros()
}

/// Granlund & Montgomery, "Division by invariant integers using
/// multiplication" (PLDI 1994), figure 4.1: for `2 <= d < 2^N`, with
/// `l = ceil(log2 d)` and `m = floor(2^N (2^l - d) / d) + 1` (< 2^N), every
/// `N`-bit `x` has `x / d = (t + ((x - t) >> 1)) >> (l - 1)`, `t = mulhi(m, x)`
/// (no step overflows: `t <= x`). Returns `(m, l)`.
fn magic_unsigned(bits: u32, d: u64) -> (u64, u32) {
    debug_assert!(d >= 2 && d <= width_mask(bits));
    let l = ceil_log2(d);
    let m = ((1u128 << bits) * ((1u128 << l) - d as u128) / d as u128 + 1) as u64;
    (m, l)
}

/// The same paper, figure 5.2 (truncating signed division): for `|d| >= 2`
/// (as an unsigned magnitude; `d = INT_MIN` gives `2^(N-1)`), with
/// `l = ceil(log2 |d|)` and `m = 1 + floor(2^(N+l-1) / |d|)`
/// (`2^(N-1) < m < 2^N`), every `N`-bit signed `x` has
/// `x / |d| = ((x + mulsh(m - 2^N, x)) >>s (l - 1)) - (x >>s (N - 1))`, and
/// `x / d` is its negation for `d < 0`. (`x + mulsh(..)` is
/// `floor(m x / 2^N)`, no larger than `|x|`: no overflow.) Returns the bits
/// of `m - 2^N` as an `N`-bit value, and `l`.
fn magic_signed(bits: u32, d: u64) -> (u64, u32) {
    let ad = if d >> (bits - 1) & 1 != 0 { d.wrapping_neg() & width_mask(bits) } else { d };
    debug_assert!(ad >= 2);
    let l = ceil_log2(ad).max(1);
    let m = (1u128 << (bits + l - 1)) / ad as u128 + 1;
    debug_assert!(m > 1u128 << (bits - 1) && m < 1u128 << bits);
    ((m as u64) & width_mask(bits), l)
}

/// Removes `inst` and makes its result an alias of `value`.
fn finish(f: &mut Function, inst: Inst, result: Value, value: Value) {
    f.dfg.detach_inst_results(inst);
    f.layout.remove_inst(inst);
    f.dfg.change_to_alias(result, value);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mid::iconst_bits;
    use cranelift_codegen::ir::InstructionData;
    use cranelift_codegen::settings;
    use cranelift_reader::parse_functions;

    fn legalized(src: &str) -> Function {
        let mut f = parse_functions(src).unwrap().remove(0);
        legalize_div(&mut f).unwrap();
        let flags = settings::Flags::new(settings::builder());
        cranelift_codegen::verifier::verify_function(&f, &flags).unwrap_or_else(|e| panic!("{}\n{}", e, f.display()));
        f
    }

    fn has_op(f: &Function, pred: impl Fn(Opcode) -> bool) -> bool {
        f.layout.blocks().any(|b| f.layout.block_insts(b).any(|i| pred(f.dfg.insts[i].opcode())))
    }

    fn is_div(op: Opcode) -> bool {
        matches!(op, Opcode::Udiv | Opcode::Sdiv | Opcode::Urem | Opcode::Srem)
    }

    /// The callees of `f`'s calls, in layout order.
    fn callees(f: &Function) -> Vec<String> {
        let mut v = Vec::new();
        for b in f.layout.blocks() {
            for i in f.layout.block_insts(b) {
                if let InstructionData::Call { func_ref, .. } = f.dfg.insts[i] {
                    v.push(ursa_isel::lower::callee_symbol(f, func_ref).unwrap());
                }
            }
        }
        v
    }

    /// A runtime routine's body keeps its i64 operation, without traps or
    /// a 32-bit case (its callers take both), and calls nothing.
    #[test]
    fn a_runtime_routine_keeps_its_bare_operation() {
        for (k, name) in ursa_isel::intrinsics::RUNTIME_ROUTINES.iter().enumerate() {
            let mut f = crate::module::runtime::body(k);
            legalize_div(&mut f).unwrap();
            let left = divs_left(&f);
            assert!(left.len() == 1 && left[0].1 == types::I64 && name.contains(&left[0].0.to_string()), "{}: {:?}", name, left);
            assert!(!has_op(&f, |o| matches!(o, Opcode::Trapz | Opcode::Trapnz | Opcode::Call)), "{}:\n{}", name, f.display());
            assert_eq!(f.layout.blocks().count(), 1, "{}:\n{}", name, f.display());
        }
    }

    /// The division instructions left for instruction selection, as
    /// `(opcode, type)`.
    fn divs_left(f: &Function) -> Vec<(Opcode, Type)> {
        let mut v = Vec::new();
        for b in f.layout.blocks() {
            for i in f.layout.block_insts(b) {
                if is_div(f.dfg.insts[i].opcode()) {
                    v.push((f.dfg.insts[i].opcode(), f.dfg.ctrl_typevar(i)));
                }
            }
        }
        v
    }

    #[test]
    fn register_divisors_keep_their_traps_and_reach_isel_as_i32_or_i64() {
        for op in ["udiv", "sdiv", "urem", "srem"] {
            for ty in ["i8", "i16", "i32", "i64"] {
                let src = format!(
                    "function %f({ty}, {ty}) -> {ty} {{
                     block0(v0: {ty}, v1: {ty}):
                         v2 = {op} v0, v1
                         v3 = iadd v2, v0
                         v4 = {op} v3, v1
                         brif v4, block1(v4), block1(v2)
                     block1(v5: {ty}):
                         return v5
                     }}"
                );
                let f = legalized(&src);
                let n_traps =
                    f.layout.blocks().flat_map(|b| f.layout.block_insts(b)).filter(|&i| f.dfg.insts[i].opcode() == Opcode::Trapz).count();
                assert_eq!(n_traps, 2, "{op}.{ty}: one zero check per division\n{}", f.display());
                assert_eq!(has_op(&f, |o| o == Opcode::Trapnz), op == "sdiv", "{op}.{ty}: overflow check");
                let left = divs_left(&f);
                match ty {
                    "i8" | "i16" => {
                        // Extended to i32, the operation kept.
                        assert_eq!(left.len(), 2, "{op}.{ty}:\n{}", f.display());
                        assert!(left.iter().all(|&(o, t)| t == types::I32 && o.to_string() == op), "{op}.{ty}: {left:?}");
                        assert_eq!(f.layout.blocks().count(), 2, "{op}.{ty}:\n{}", f.display());
                    }
                    "i32" => {
                        assert!(
                            left.len() == 2 && left.iter().all(|&(o, t)| t == types::I32 && o.to_string() == op),
                            "{op}.{ty}: {left:?}"
                        );
                        assert_eq!(f.layout.blocks().count(), 2, "{op}.{ty}:\n{}", f.display());
                    }
                    _ => {
                        // Per division: a call of the runtime routine (slow
                        // path) and an unsigned i32 division (fast path);
                        // blocks: entry, 2 x (fast, slow, join), block1.
                        let unsigned = if op.ends_with("div") { Opcode::Udiv } else { Opcode::Urem };
                        assert!(left.len() == 2 && left.iter().all(|&(o, t)| o == unsigned && t == types::I32), "{op}.{ty}: {left:?}");
                        assert_eq!(callees(&f), [format!("ursa_rt_{op}64"), format!("ursa_rt_{op}64")], "{op}.{ty}:\n{}", f.display());
                        assert_eq!(f.layout.blocks().count(), 8, "{op}.{ty}:\n{}", f.display());
                    }
                }
            }
        }
    }

    #[test]
    fn a_remainder_reuses_its_quotient() {
        let count = |f: &Function, op: Opcode| {
            f.layout.blocks().flat_map(|b| f.layout.block_insts(b)).filter(|&i| f.dfg.insts[i].opcode() == op).count()
        };
        for (first, second, paired) in [("udiv", "urem", true), ("urem", "udiv", true), ("sdiv", "srem", true), ("srem", "sdiv", false)] {
            for ty in ["i8", "i32", "i64"] {
                let src = format!(
                    "function %f({ty}, {ty}) -> {ty}, {ty} {{
                     block0(v0: {ty}, v1: {ty}):
                         v2 = {first} v0, v1
                         v3 = {second} v0, v1
                         return v2, v3
                     }}"
                );
                let f = legalized(&src);
                let rem = if first.ends_with("rem") { first } else { second };
                let rem_op = if rem == "urem" { Opcode::Urem } else { Opcode::Srem };
                // (An i64 remainder left is a call of its runtime routine.)
                let rem_routine = format!("ursa_rt_{rem}64");
                let rems_left = count(&f, rem_op) + callees(&f).iter().filter(|c| **c == rem_routine).count();
                assert_eq!(rems_left == 0, paired, "{first}/{second}.{ty}:\n{}", f.display());
                if paired {
                    assert!(has_op(&f, |o| o == Opcode::Imul), "{first}/{second}.{ty}:\n{}", f.display());
                }
                // One zero check per division left: the paired remainder's
                // is the quotient's, which comes first.
                assert_eq!(count(&f, Opcode::Trapz), if paired { 1 } else { 2 }, "{first}/{second}.{ty}:\n{}", f.display());
            }
        }
        // Different operands, or a constant divisor: nothing to share.
        let f = legalized(
            "function %f(i32, i32) -> i32, i32 {
             block0(v0: i32, v1: i32):
                 v2 = udiv v0, v1
                 v3 = urem v1, v0
                 v4 = iconst.i32 10
                 v5 = udiv v0, v4
                 v6 = urem v0, v4
                 v7 = iadd v5, v6
                 v8 = iadd v7, v3
                 return v2, v8
             }",
        );
        assert_eq!(count(&f, Opcode::Urem), 1, "{}", f.display());
    }

    #[test]
    fn constant_divisors() {
        let f = legalized(
            "function %f(i32) -> i32 {
             block0(v0: i32):
                 v1 = iconst.i32 7
                 v2 = sdiv v0, v1
                 return v2
             }",
        );
        assert!(!has_op(&f, |o| is_div(o) || o == Opcode::Trapz || o == Opcode::Trapnz), "{}", f.display());
        assert!(has_op(&f, |o| o == Opcode::Smulhi), "{}", f.display());
        assert_eq!(f.layout.blocks().count(), 1, "{}", f.display());
        let f = legalized(
            "function %f(i16) -> i16 {
             block0(v0: i16):
                 v1 = iconst.i16 0xfff6
                 v2 = urem v0, v1
                 v3 = iconst.i16 64
                 v4 = srem v2, v3
                 return v4
             }",
        );
        assert!(has_op(&f, |o| o == Opcode::Umulhi) && has_op(&f, |o| o == Opcode::Sshr), "{}", f.display());
        assert!(!has_op(&f, |o| is_div(o) || o == Opcode::Trapz || o == Opcode::Trapnz), "{}", f.display());
        assert_eq!(f.layout.blocks().count(), 1, "{}", f.display());
        let f = legalized(
            "function %f(i64) -> i64 {
             block0(v0: i64):
                 v1 = iconst.i64 -1
                 v2 = sdiv v0, v1
                 v3 = srem v0, v1
                 v4 = iadd v2, v3
                 return v4
             }",
        );
        assert!(has_op(&f, |o| o == Opcode::Trapnz) && !has_op(&f, |o| is_div(o) || o == Opcode::Trapz), "{}", f.display());
        assert_eq!(f.layout.blocks().count(), 1, "{}", f.display());
        let f = legalized(
            "function %f(i8) -> i8 {
             block0(v0: i8):
                 v1 = iconst.i8 0
                 v2 = urem v0, v1
                 return v2
             }",
        );
        assert!(has_op(&f, |o| o == Opcode::Trapz) && !has_op(&f, is_div), "{}", f.display());
    }

    /// The constant the function returns, if its entry block returns one.
    fn returned_const(f: &Function) -> Option<u64> {
        let b = f.layout.entry_block()?;
        let ret = f.layout.last_inst(b)?;
        iconst_bits(&f.dfg, *f.dfg.inst_args(ret).first()?)
    }

    #[test]
    fn constant_operands_fold() {
        // Edge values of each width against i128 arithmetic.
        for (ty, bits) in [(types::I8, 8u32), (types::I16, 16), (types::I32, 32), (types::I64, 64)] {
            let m = width_mask(bits);
            let min = 1u64 << (bits - 1);
            let edges = [0, 1, 2, 3, 7, min - 1, min, min + 1, m - 1, m];
            for &a in &edges {
                for &k in edges.iter().filter(|&&k| k != 0) {
                    let sx = |v: u64| ((v << (64 - bits)) as i64 >> (64 - bits)) as i128;
                    let (ua, uk) = (a as i128, k as i128);
                    assert_eq!(div_rem(ty, a, k, false, false) as i128, ua / uk);
                    assert_eq!(div_rem(ty, a, k, false, true) as i128, ua % uk);
                    assert_eq!(div_rem(ty, a, k, true, true), (sx(a) % sx(k)) as u64 & m, "srem {} {} at {}", a, k, bits);
                    if !(a == min && k == m) {
                        assert_eq!(div_rem(ty, a, k, true, false), (sx(a) / sx(k)) as u64 & m, "sdiv {} {} at {}", a, k, bits);
                    }
                }
            }
        }
        // Whole functions: the constant comes out, with no check left.
        for (op, a, k, want) in [
            ("srem", "17", "5", 2u64),
            ("sdiv", "-17", "5", (-3i64) as u64),
            ("urem", "-1", "10", 5),
            ("srem", "-9223372036854775808", "-1", 0),
        ] {
            let f = legalized(&format!(
                "function %f() -> i64 {{
                 block0:
                     v0 = iconst.i64 {a}
                     v1 = iconst.i64 {k}
                     v2 = {op} v0, v1
                     return v2
                 }}"
            ));
            assert!(!has_op(&f, |o| is_div(o) || o == Opcode::Trapz || o == Opcode::Trapnz), "{}", f.display());
            assert_eq!(returned_const(&f), Some(want), "{}", f.display());
        }
        // `sdiv INT_MIN, -1` keeps its overflow trap.
        let f = legalized(
            "function %f() -> i32 {
             block0:
                 v0 = iconst.i32 0x80000000
                 v1 = iconst.i32 -1
                 v2 = sdiv v0, v1
                 return v2
             }",
        );
        assert!(has_op(&f, |o| o == Opcode::Trapnz), "{}", f.display());
        // A zero dividend: the divisor's zero check, then 0.
        for op in ["udiv", "sdiv", "urem", "srem"] {
            let f = legalized(&format!(
                "function %f(i64) -> i64 {{
                 block0(v1: i64):
                     v0 = iconst.i64 0
                     v2 = {op} v0, v1
                     return v2
                 }}"
            ));
            assert!(has_op(&f, |o| o == Opcode::Trapz) && !has_op(&f, |o| is_div(o) || o == Opcode::Trapnz), "{}", f.display());
            assert_eq!(returned_const(&f), Some(0), "{}", f.display());
            assert_eq!(f.layout.blocks().count(), 1, "{}", f.display());
        }
    }

    /// The constant-divisor quotient sequence of `by_constant`, evaluated in
    /// Rust at `bits` bits, op for op.
    fn model_quotient(bits: u32, x: u64, k: u64, signed: bool) -> u64 {
        let m = width_mask(bits);
        let sext = |v: u64| ((v << (64 - bits)) as i64) >> (64 - bits);
        if signed {
            let (mg, l) = magic_signed(bits, k);
            let hi = ((sext(x) as i128 * sext(mg) as i128) >> bits) as u64 & m; // smulhi
            let sum = x.wrapping_add(hi) & m; // iadd
            if bits == 64 {
                // i64: `umulhi(x, m) - (x >>s 63 & m)`, the same sum.
                let t = ((x as u128 * mg as u128) >> 64) as u64;
                assert!(mg >> 63 == 1, "the signed magic number is negative");
                assert_eq!(t.wrapping_sub(((x as i64) >> 63) as u64 & mg), sum, "x {:#x} k {:#x}", x, k);
            }
            let q = (sext(sum) >> (l - 1)) as u64 & m; // sshr l-1
            let q = q.wrapping_sub((sext(x) >> (bits - 1)) as u64) & m; // isub (x >>s N-1)
            if k >> (bits - 1) != 0 {
                q.wrapping_neg() & m
            } else {
                q
            }
        } else {
            let (mg, l) = magic_unsigned(bits, k);
            let t = ((x as u128 * mg as u128) >> bits) as u64; // umulhi
            let half = (x.wrapping_sub(t) & m) >> 1; // isub, ushr 1
            ((t + half) & m) >> (l - 1) // iadd, ushr l-1
        }
    }

    fn want_quotient(bits: u32, x: u64, k: u64, signed: bool) -> u64 {
        let m = width_mask(bits);
        if signed {
            let sext = |v: u64| (((v << (64 - bits)) as i64) >> (64 - bits)) as i128;
            ((sext(x) / sext(k)) as u64) & m
        } else {
            x / k
        }
    }

    fn check_magic(bits: u32, x: u64, k: u64) {
        let m = width_mask(bits);
        let min = 1u64 << (bits - 1);
        if k >= 2 {
            assert_eq!(model_quotient(bits, x, k, false), want_quotient(bits, x, k, false), "u{bits}: {x:#x} / {k:#x}");
        }
        let ak = if k & min != 0 { k.wrapping_neg() & m } else { k };
        if ak >= 2 && !(x == min && k == m) {
            assert_eq!(model_quotient(bits, x, k, true), want_quotient(bits, x, k, true), "s{bits}: {x:#x} / {k:#x}");
        }
    }

    #[test]
    fn magic_numbers_exhaustive_8_bits() {
        for k in 0..=0xffu64 {
            for x in 0..=0xffu64 {
                check_magic(8, x, k);
            }
        }
    }

    #[test]
    fn magic_numbers_16_bits_every_divisor() {
        let mut xs: Vec<u64> = vec![0, 1, 2, 0x7ffe, 0x7fff, 0x8000, 0x8001, 0xfffe, 0xffff];
        let mut r = 0x2545_f491_4f6c_dd1du64;
        for _ in 0..48 {
            r ^= r << 13;
            r ^= r >> 7;
            r ^= r << 17;
            xs.push(r & 0xffff);
        }
        for k in 0..=0xffffu64 {
            for &x in &xs {
                check_magic(16, x, k);
            }
            // Around multiples of k, where truncation changes the quotient.
            for q in [1u64, 2, 3, 0x7fff / k.max(1), 0xffff / k.max(1)] {
                for dx in [0u64, 1, 2] {
                    let x = (q * k).wrapping_sub(dx) & 0xffff;
                    check_magic(16, x, k);
                    check_magic(16, x.wrapping_neg() & 0xffff, k);
                }
            }
        }
    }

    #[test]
    fn magic_numbers_32_and_64_bits_sampled() {
        let mut r = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = || {
            r ^= r << 13;
            r ^= r >> 7;
            r ^= r << 17;
            r
        };
        for bits in [32u32, 64] {
            let m = width_mask(bits);
            let min = 1u64 << (bits - 1);
            let mut ks: Vec<u64> = vec![3, 5, 6, 7, 10, 641, 6700417, min - 1, min + 1, m, m - 1, m - 2, min | 3];
            for _ in 0..300 {
                let v = next();
                ks.push((v >> (v % 64)) & m);
            }
            for k in ks {
                for _ in 0..300 {
                    let v = next();
                    let x = (v >> (v % 64 / 2)) & m;
                    check_magic(bits, x, k);
                    check_magic(bits, x.wrapping_neg() & m, k);
                    if k > 1 {
                        // Multiples of k and their neighbours.
                        let q = next() % (m / k).max(1);
                        let x = q * k;
                        check_magic(bits, x, k);
                        check_magic(bits, x.wrapping_sub(1) & m, k);
                    }
                }
                for x in [0, 1, min - 1, min, min + 1, m - 1, m] {
                    check_magic(bits, x, k);
                }
            }
        }
    }

    #[test]
    fn functions_without_division_are_unchanged() {
        let src = "function %f(i32) -> i32 {
                   block0(v0: i32):
                       v1 = iadd v0, v0
                       return v1
                   }";
        let f0 = parse_functions(src).unwrap().remove(0);
        let mut f = f0.clone();
        legalize_div(&mut f).unwrap();
        assert_eq!(f.display().to_string(), f0.display().to_string());
    }
}
