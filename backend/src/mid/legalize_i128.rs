//! `i128` narrowing: every 128-bit integer value becomes two `i64` values,
//! its low and high halves, before instruction selection (so the machine
//! rules only ever see `i64` and narrower types, and every `i64` rule is
//! reused).
//!
//! The rewrite is CLIF → CLIF, like Cranelift's old `isplit`/`iconcat`
//! legalizer but without leaving any `iconcat` behind:
//!
//! * signatures (the function's own and every `SigRef`): an `i128` parameter
//!   or result becomes two `i64` ones, low half first (`docs/abi.md`);
//! * block parameters likewise, and the arguments of every branch;
//! * each instruction with an `i128` operand or result is replaced by `i64`
//!   instructions computing the two halves (or, for `icmp`, `ireduce`,
//!   `isplit` …, the narrow result, to which the old result is aliased).
//!
//! Blocks are rewritten in reverse postorder, so the halves of every operand
//! exist when its user is rewritten (block parameters are split first).
//! Unreachable blocks that touch `i128` are replaced by a `trap` (they never
//! run). An `i128` instruction this pass does not know is an "unsupported"
//! error naming it. A big-endian `i128` access puts the high half first.
//! An aligned little-endian `load`/`store` of an `i128` stays one access
//! (`.128` on a register quad, `docs/regalloc.md`): `w = load.i128 …;
//! lo, hi = isplit w` and `store.i128 (iconcat lo hi), …` are the only
//! `i128` values left, which instruction selection lowers together.
//!
//! The sequences (`x = (x0, x1)`, low half first; all `i64` arithmetic
//! wraps; `s` is a shift amount, which CLIF takes modulo the width: the
//! `i64` shifts below take theirs modulo 64, and bit 6 of `s` decides
//! whether the halves move across):
//!
//! * `iadd`: `(lo, c) = uadd_overflow x0, y0; hi = uadd_overflow_cin x1, y1, c`
//!   (IADD carry chain); `isub` with `usub_overflow`/`usub_overflow_bin`;
//! * `imul`: `lo = x0*y0`, `hi = umulhi(x0, y0) + x0*y1 + x1*y0` (the
//!   products above 2^128 drop out); `umulhi`/`smulhi`: the high half of
//!   the 256-bit product of four partial products, corrected for the signs
//!   (`signed_high`);
//! * `icmp eq/ne`: `(x0^y0)|(x1^y1)` against 0; ordered conditions:
//!   `x1 == y1 ? (x0 <u y0 …) : (x1 < y1 …)` with the high halves compared
//!   with the condition's signedness made strict, the low halves unsigned;
//! * shifts: `ishl`: `s & 64 ? (0, x0 << s) : (x0 << s, x1 << s | (x0 >> 1) >> ~s)`
//!   — `(x0 >> 1) >> (63 - s mod 64)` is `x0 >> (64 - s)` without the
//!   undefined shift by 64 when `s mod 64 = 0`; `ushr`/`sshr` mirror it
//!   (`sshr` fills with `x1 >> 63`); rotates swap the halves when bit 6 is
//!   set and then funnel-shift both ways by `s mod 64`;
//! * `clz`: `x1 == 0 ? 64 + clz x0 : clz x1`, `ctz` mirrored, `popcnt` the
//!   sum, `cls` = `clz(x ^ (x >>s 127)) - 1`, `bitrev`/`bswap` of each half
//!   with the halves swapped;
//! * `fcvt_from_uint`/`fcvt_from_sint`: the `i64` conversion of the top 64
//!   bits with a sticky bit, scaled by a power of two (`float_from128`);
//!   `fcvt_to_*` (and `_sat`): range checks, then two truncated pieces
//!   (`float_to128`);
//! * `udiv`/`urem`/`sdiv`/`srem`: a restoring shift-subtract loop
//!   (128 iterations) written on the halves, with CLIF's traps (`int_divz`,
//!   `int_ovf` for `sdiv INT_MIN, -1`).
//!
//! In debug builds the result is checked with Cranelift's verifier.

use rustc_hash::FxHashMap as HashMap;

use crate::Error;

use cranelift_codegen::cursor::{Cursor, FuncCursor};
use cranelift_codegen::ir::condcodes::{FloatCC, IntCC};
use cranelift_codegen::ir::immediates::{Ieee32, Ieee64, Offset32};
use cranelift_codegen::ir::types::{F32, I128, I32, I64};
use cranelift_codegen::ir::{
    BlockArg, Endianness, Function, Inst, InstBuilder, InstructionData, MemFlagsData, Opcode, TrapCode, Type, Value,
};

type Pair = (Value, Value);

/// Narrows every `i128` value of `f` into two `i64` halves (in place).
pub fn legalize_i128(f: &mut Function) -> Result<(), Error> {
    if !super::mentions(f, |t| t == I128) {
        return Ok(());
    }
    let mut map: HashMap<Value, Pair> = HashMap::default();
    super::split_signatures_and_params(f, halves_of, |p, new| {
        map.insert(p, (new[0], new[1]));
    });
    let mut n = Narrow { map };
    super::rewrite_in_rpo(f, inst_mentions_i128, |f, inst| n.inst(f, inst))?;
    f.dfg.resolve_all_aliases();
    super::verify_in_debug(f)
}

fn inst_mentions_i128(f: &Function, inst: Inst) -> bool {
    let dfg = &f.dfg;
    dfg.inst_args(inst).iter().chain(dfg.inst_results(inst)).any(|&v| dfg.value_type(v) == I128)
        || dfg.insts[inst]
            .branch_destination(&dfg.jump_tables, &dfg.exception_tables)
            .iter()
            .any(|bc| bc.args(&dfg.value_lists).any(|a| matches!(a, BlockArg::Value(v) if dfg.value_type(v) == I128)))
}

struct Narrow {
    map: HashMap<Value, Pair>,
}

/// The halves of the `i128` value `v` (an operand of `inst`) in `map`.
fn halves_in(map: &HashMap<Value, Pair>, f: &Function, inst: Inst, v: Value) -> Result<Pair, Error> {
    let v = f.dfg.resolve_aliases(v);
    map.get(&v).copied().ok_or_else(|| Error::internal(format!("the halves of {} are not known yet", v)).at(f.dfg.display_inst(inst)))
}

fn unsupported(f: &Function, inst: Inst, what: &str) -> Error {
    Error::unsupported(format!("{} is not supported", what)).at(f.dfg.display_inst(inst))
}

/// What an old result becomes: the halves of an `i128` result, or the
/// value of a narrower one.
type Rewritten = Result<Pair, Value>;

/// The instruction being rewritten.
#[derive(Clone, Copy)]
struct At<'a> {
    inst: Inst,
    op: Opcode,
    data: InstructionData,
    args: &'a [Value],
    results: &'a [Value],
}

impl At<'_> {
    /// The error for an opcode (or a form of it) without a rewrite.
    fn unsupported(&self, f: &Function) -> Error {
        unsupported(f, self.inst, &format!("`{}` on i128", self.op))
    }
}

/// An `i128` is two `i64` halves, low half first.
fn halves_of(t: Type) -> Option<(Type, usize)> {
    (t == I128).then_some((I64, 2))
}

fn is128(f: &Function, v: Value) -> bool {
    f.dfg.value_type(v) == I128
}

impl Narrow {
    fn halves(&self, f: &Function, inst: Inst, v: Value) -> Result<Pair, Error> {
        halves_in(&self.map, f, inst, v)
    }

    /// The halves of each argument, `i128` arguments expanded, others kept.
    fn expand(&self, f: &Function, inst: Inst, args: &[Value]) -> Result<Vec<Value>, Error> {
        super::expand_args(f, args, |t| t == I128, |a| self.halves(f, inst, a).map(|(lo, hi)| [lo, hi]))
    }

    /// Rewrites one instruction that names an `i128` value.
    fn inst(&mut self, f: &mut Function, inst: Inst) -> Result<(), Error> {
        if !inst_mentions_i128(f, inst) {
            return Ok(());
        }
        let op = f.dfg.insts[inst].opcode();
        if op.is_branch() {
            return self.branch(f, inst);
        }
        let args = f.dfg.inst_args(inst).to_vec();
        let results = f.dfg.inst_results(inst).to_vec();
        if !results.iter().any(|&r| is128(f, r)) && self.narrow_operand(f, inst, op, &args)? {
            return Ok(());
        }
        let data = f.dfg.insts[inst];
        let mut pos = FuncCursor::new(f).at_inst(inst);
        pos.use_srcloc(inst);
        let mut out = Vec::new();
        self.rewrite(&mut pos, At { inst, op, data, args: &args, results: &results }, &mut out)?;
        super::replace_results(pos.func, inst, &results, out, &mut self.map)
    }

    /// An instruction with narrow results whose `i128` operand is only
    /// asked "nonzero?" or taken modulo 64 or less: the operand replaced
    /// in place (true), or nothing done (false).
    fn narrow_operand(&self, f: &mut Function, inst: Inst, op: Opcode, args: &[Value]) -> Result<bool, Error> {
        match op {
            Opcode::Select | Opcode::SelectSpectreGuard | Opcode::Trapz | Opcode::Trapnz | Opcode::Bmask => {
                let (lo, hi) = self.halves(f, inst, args[0])?;
                let mut pos = FuncCursor::new(f).at_inst(inst);
                let nz = pos.ins().bor(lo, hi);
                f.dfg.inst_args_mut(inst)[0] = nz;
                Ok(true)
            }
            Opcode::Ishl | Opcode::Ushr | Opcode::Sshr | Opcode::Rotl | Opcode::Rotr if is128(f, args[1]) => {
                let (lo, _) = self.halves(f, inst, args[1])?;
                f.dfg.inst_args_mut(inst)[1] = lo;
                Ok(true)
            }
            _ => Ok(false),
        }
    }

    /// The new code of an instruction, by the first opcode family that
    /// rewrites it; `out` gets what each old result becomes.
    fn rewrite(&self, pos: &mut FuncCursor, at: At, out: &mut Vec<Rewritten>) -> Result<(), Error> {
        type Family = fn(&Narrow, &mut FuncCursor, &At, &mut Vec<Rewritten>) -> Result<bool, Error>;
        let families: [Family; 7] = [Self::call, Self::convert, Self::memory, Self::compare, Self::arith, Self::bits, Self::overflow];
        for family in families {
            if family(self, pos, &at, out)? {
                return Ok(());
            }
        }
        Err(at.unsupported(pos.func))
    }

    /// Returns and calls: `i128` arguments and results as two halves each.
    fn call(&self, pos: &mut FuncCursor, at: &At, out: &mut Vec<Rewritten>) -> Result<bool, Error> {
        let At { inst, op, args, results, .. } = *at;
        match op {
            Opcode::Return => {
                let vals = self.expand(pos.func, inst, &args)?;
                pos.ins().return_(&vals);
            }
            Opcode::Call | Opcode::CallIndirect | Opcode::ReturnCall | Opcode::ReturnCallIndirect => {
                let remade =
                    super::remake_call(pos, inst, "this call form with i128", args, results, halves_of, |f, a| self.expand(f, inst, a))?;
                out.extend(remade.into_iter().map(|r| r.map(|h| (h[0], h[1]))));
            }
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// Conversions between `i128` and narrower integers or floats, and constants.
    fn convert(&self, pos: &mut FuncCursor, at: &At, out: &mut Vec<Rewritten>) -> Result<bool, Error> {
        let At { inst, op, data, args, results } = *at;
        match op {
            Opcode::Iconcat => out.push(Ok((args[0], args[1]))),
            Opcode::Isplit => {
                let (lo, hi) = self.halves(pos.func, inst, args[0])?;
                out.extend([Err(lo), Err(hi)]);
            }
            Opcode::Bitcast if is128(pos.func, args[0]) && is128(pos.func, results[0]) => {
                out.push(Ok(self.halves(pos.func, inst, args[0])?));
            }
            Opcode::Uextend | Opcode::Sextend => {
                let x = args[0];
                let lo = if pos.func.dfg.value_type(x) == I64 {
                    x
                } else if op == Opcode::Uextend {
                    pos.ins().uextend(I64, x)
                } else {
                    pos.ins().sextend(I64, x)
                };
                let hi = if op == Opcode::Uextend { pos.ins().iconst(I64, 0) } else { pos.ins().sshr_imm_u(lo, 63) };
                out.push(Ok((lo, hi)));
            }
            Opcode::Ireduce => {
                let (lo, _) = self.halves(pos.func, inst, args[0])?;
                let ty = pos.func.dfg.value_type(results[0]);
                out.push(Err(if ty == I64 { lo } else { pos.ins().ireduce(ty, lo) }));
            }
            Opcode::Iconst => {
                let InstructionData::UnaryImm { imm, .. } = data else { return Err(unsupported(pos.func, inst, "this iconst form")) };
                out.push(Ok(const128(pos, imm.bits() as i128)));
            }
            Opcode::Bmask => {
                // i128 result (an i128 operand with a narrow result was handled above).
                let x = args[0];
                let nz = if is128(pos.func, x) {
                    let (lo, hi) = self.halves(pos.func, inst, x)?;
                    pos.ins().bor(lo, hi)
                } else {
                    x
                };
                let m = pos.ins().bmask(I64, nz);
                out.push(Ok((m, m)));
            }
            Opcode::FcvtFromUint | Opcode::FcvtFromSint => {
                let x = self.halves(pos.func, inst, args[0])?;
                let ty = pos.func.dfg.value_type(results[0]);
                out.push(Err(float_from128(pos, ty, x, op == Opcode::FcvtFromSint)));
            }
            Opcode::FcvtToUint | Opcode::FcvtToSint | Opcode::FcvtToUintSat | Opcode::FcvtToSintSat => {
                out.push(Ok(float_to128(pos, op, args[0])));
            }
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// Loads and stores: two 64-bit accesses, in the order of the endianness.
    fn memory(&self, pos: &mut FuncCursor, at: &At, out: &mut Vec<Rewritten>) -> Result<bool, Error> {
        let At { inst, op, data, args, .. } = *at;
        match op {
            Opcode::Load => {
                let InstructionData::Load { flags, arg, offset, .. } = data else {
                    return Err(unsupported(pos.func, inst, "this load form with i128"));
                };
                let fd = pos.func.dfg.mem_flags[flags].clone();
                let big = fd.endianness(Endianness::Little) == Endianness::Big;
                if fd.aligned() && !big {
                    // One 128-bit access (a register quad), read as its halves.
                    let w = pos.ins().load(I128, fd, arg, offset);
                    let (lo, hi) = pos.ins().isplit(w);
                    out.push(Ok((lo, hi)));
                    return Ok(true);
                }
                let off8 = offset8(pos.func, inst, offset)?;
                let (lo_off, hi_off) = if big { (off8, offset) } else { (offset, off8) };
                let lo = pos.ins().load(I64, fd.clone(), arg, lo_off);
                let hi = pos.ins().load(I64, fd, arg, hi_off);
                out.push(Ok((lo, hi)));
            }
            Opcode::Store => {
                let InstructionData::Store { flags, offset, .. } = data else {
                    return Err(unsupported(pos.func, inst, "this store form with i128"));
                };
                let (lo, hi) = self.halves(pos.func, inst, args[0])?;
                let fd = pos.func.dfg.mem_flags[flags].clone();
                let big = fd.endianness(Endianness::Little) == Endianness::Big;
                if fd.aligned() && !big {
                    let w = pos.ins().iconcat(lo, hi);
                    pos.ins().store(fd, w, args[1], offset);
                    return Ok(true);
                }
                let off8 = offset8(pos.func, inst, offset)?;
                let (lo_off, hi_off) = if big { (off8, offset) } else { (offset, off8) };
                pos.ins().store(fd.clone(), lo, args[1], lo_off);
                pos.ins().store(fd, hi, args[1], hi_off);
            }
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// Comparisons and selects.
    fn compare(&self, pos: &mut FuncCursor, at: &At, out: &mut Vec<Rewritten>) -> Result<bool, Error> {
        let At { inst, op, data, args, .. } = *at;
        match op {
            Opcode::Select | Opcode::SelectSpectreGuard => {
                let c = self.cond(pos, inst, args[0])?;
                let x = self.halves(pos.func, inst, args[1])?;
                let y = self.halves(pos.func, inst, args[2])?;
                let (lo, hi) = if op == Opcode::Select {
                    (pos.ins().select(c, x.0, y.0), pos.ins().select(c, x.1, y.1))
                } else {
                    (pos.ins().select_spectre_guard(c, x.0, y.0), pos.ins().select_spectre_guard(c, x.1, y.1))
                };
                out.push(Ok((lo, hi)));
            }
            Opcode::Bitselect => {
                let c = self.halves(pos.func, inst, args[0])?;
                let x = self.halves(pos.func, inst, args[1])?;
                let y = self.halves(pos.func, inst, args[2])?;
                out.push(Ok((pos.ins().bitselect(c.0, x.0, y.0), pos.ins().bitselect(c.1, x.1, y.1))));
            }
            Opcode::Icmp => {
                let InstructionData::IntCompare { cond, .. } = data else { return Err(unsupported(pos.func, inst, "this icmp form")) };
                let x = self.halves(pos.func, inst, args[0])?;
                let y = self.halves(pos.func, inst, args[1])?;
                out.push(Err(icmp128(pos, cond, x, y)));
            }
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// Arithmetic: addition, multiplication, division, negation, bitwise logic.
    fn arith(&self, pos: &mut FuncCursor, at: &At, out: &mut Vec<Rewritten>) -> Result<bool, Error> {
        let At { inst, op, args, .. } = *at;
        match op {
            Opcode::Iadd
            | Opcode::Isub
            | Opcode::Imul
            | Opcode::Band
            | Opcode::Bor
            | Opcode::Bxor
            | Opcode::Smin
            | Opcode::Smax
            | Opcode::Umin
            | Opcode::Umax => {
                let x = self.halves(pos.func, inst, args[0])?;
                let y = self.halves(pos.func, inst, args[1])?;
                out.push(Ok(binary(pos, op, x, y)));
            }
            Opcode::Umulhi | Opcode::Smulhi => {
                let x = self.halves(pos.func, inst, args[0])?;
                let y = self.halves(pos.func, inst, args[1])?;
                let (_, hi) = product256(pos, x, y);
                out.push(Ok(if op == Opcode::Smulhi { signed_high(pos, x, y, hi) } else { hi }));
            }
            Opcode::Bnot => {
                let x = self.halves(pos.func, inst, args[0])?;
                out.push(Ok((pos.ins().bnot(x.0), pos.ins().bnot(x.1))));
            }
            Opcode::Ineg => {
                let x = self.halves(pos.func, inst, args[0])?;
                let z = const128(pos, 0);
                out.push(Ok(binary(pos, Opcode::Isub, z, x)));
            }
            Opcode::Iabs => {
                let x = self.halves(pos.func, inst, args[0])?;
                let z = const128(pos, 0);
                let n = binary(pos, Opcode::Isub, z, x);
                let neg = pos.ins().icmp_imm_s(IntCC::SignedLessThan, x.1, 0);
                out.push(Ok((pos.ins().select(neg, n.0, x.0), pos.ins().select(neg, n.1, x.1))));
            }
            Opcode::Udiv | Opcode::Sdiv | Opcode::Urem | Opcode::Srem => {
                let x = self.halves(pos.func, inst, args[0])?;
                let d = self.halves(pos.func, inst, args[1])?;
                out.push(Ok(divide(pos, inst, op, x, d)));
            }
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// Shifts, rotates and bit counts.
    fn bits(&self, pos: &mut FuncCursor, at: &At, out: &mut Vec<Rewritten>) -> Result<bool, Error> {
        let At { inst, op, args, .. } = *at;
        match op {
            Opcode::Ishl | Opcode::Ushr | Opcode::Sshr | Opcode::Rotl | Opcode::Rotr => {
                let x = self.halves(pos.func, inst, args[0])?;
                let s = if is128(pos.func, args[1]) { self.halves(pos.func, inst, args[1])?.0 } else { args[1] };
                out.push(Ok(shift128(pos, op, x, s)));
            }
            Opcode::Clz | Opcode::Ctz | Opcode::Cls | Opcode::Popcnt => {
                let x = self.halves(pos.func, inst, args[0])?;
                let r = match op {
                    Opcode::Clz => clz128(pos, x),
                    Opcode::Ctz => {
                        let z0 = pos.ins().ctz(x.0);
                        let z1 = pos.ins().ctz(x.1);
                        let z1b = pos.ins().iadd_imm_s(z1, 64);
                        let low_zero = pos.ins().icmp_imm_s(IntCC::Equal, x.0, 0);
                        pos.ins().select(low_zero, z1b, z0)
                    }
                    Opcode::Cls => {
                        let sign = pos.ins().sshr_imm_u(x.1, 63);
                        let y0 = pos.ins().bxor(x.0, sign);
                        let y1 = pos.ins().bxor(x.1, sign);
                        let z = clz128(pos, (y0, y1));
                        pos.ins().iadd_imm_s(z, -1)
                    }
                    _ => {
                        let p0 = pos.ins().popcnt(x.0);
                        let p1 = pos.ins().popcnt(x.1);
                        pos.ins().iadd(p0, p1)
                    }
                };
                let zero = pos.ins().iconst(I64, 0);
                out.push(Ok((r, zero)));
            }
            Opcode::Bitrev | Opcode::Bswap => {
                let x = self.halves(pos.func, inst, args[0])?;
                let (lo, hi) = if op == Opcode::Bitrev {
                    (pos.ins().bitrev(x.1), pos.ins().bitrev(x.0))
                } else {
                    (pos.ins().bswap(x.1), pos.ins().bswap(x.0))
                };
                out.push(Ok((lo, hi)));
            }
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// Additions and subtractions with an overflow flag (and carry-in).
    fn overflow(&self, pos: &mut FuncCursor, at: &At, out: &mut Vec<Rewritten>) -> Result<bool, Error> {
        let At { inst, op, args, .. } = *at;
        match op {
            Opcode::UaddOverflow | Opcode::UsubOverflow | Opcode::UaddOverflowCin | Opcode::UsubOverflowBin => {
                // Unsigned, a carry (borrow) of the sum with or without the
                // carry-in is the carry of the whole: the i64 forms chain.
                let x = self.halves(pos.func, inst, args[0])?;
                let y = self.halves(pos.func, inst, args[1])?;
                let add = matches!(op, Opcode::UaddOverflow | Opcode::UaddOverflowCin);
                let (lo, c) = match (add, args.get(2)) {
                    (true, None) => pos.ins().uadd_overflow(x.0, y.0),
                    (false, None) => pos.ins().usub_overflow(x.0, y.0),
                    (true, Some(&cin)) => pos.ins().uadd_overflow_cin(x.0, y.0, cin),
                    (false, Some(&cin)) => pos.ins().usub_overflow_bin(x.0, y.0, cin),
                };
                let (hi, flag) = if add { pos.ins().uadd_overflow_cin(x.1, y.1, c) } else { pos.ins().usub_overflow_bin(x.1, y.1, c) };
                out.extend([Ok((lo, hi)), Err(flag)]);
            }
            Opcode::SaddOverflow | Opcode::SsubOverflow | Opcode::SaddOverflowCin | Opcode::SsubOverflowBin => {
                // With a carry-in, CLIF's definition (cranelift-interpreter,
                // and the i32/i64 rules): the flag is the overflow of x ± y
                // or of that result ± the carry, in two steps.
                let x = self.halves(pos.func, inst, args[0])?;
                let y = self.halves(pos.func, inst, args[1])?;
                let add = matches!(op, Opcode::SaddOverflow | Opcode::SaddOverflowCin);
                let s = if add { add128(pos, x, y) } else { sub128(pos, x, y) };
                let f1 = signed_overflow(pos, add, x, y, s);
                let (r, flag) = match args.get(2) {
                    None => (s, f1),
                    Some(&cin) => {
                        let cb = pos.ins().icmp_imm_s(IntCC::NotEqual, cin, 0);
                        let c0 = pos.ins().uextend(I64, cb);
                        let zero = pos.ins().iconst(I64, 0);
                        let r = if add { add128(pos, s, (c0, zero)) } else { sub128(pos, s, (c0, zero)) };
                        let f2 = signed_overflow(pos, add, s, (c0, zero), r);
                        (r, pos.ins().bor(f1, f2))
                    }
                };
                out.extend([Ok(r), Err(flag)]);
            }
            _ => return Ok(false),
        }
        Ok(true)
    }
    /// A branch: `i128` block arguments expanded, an `i128` condition
    /// replaced by `lo | hi`.
    fn branch(&mut self, f: &mut Function, inst: Inst) -> Result<(), Error> {
        if let InstructionData::Brif { arg, .. } = f.dfg.insts[inst] {
            if f.dfg.value_type(arg) == I128 {
                let (lo, hi) = self.halves(f, inst, arg)?;
                let mut pos = FuncCursor::new(f).at_inst(inst);
                let nz = pos.ins().bor(lo, hi);
                f.dfg.inst_args_mut(inst)[0] = nz;
            }
        }
        if matches!(f.dfg.insts[inst], InstructionData::TryCall { .. } | InstructionData::TryCallIndirect { .. }) {
            // (`legalize_try_calls` has made every one a call.)
            return Err(Error::internal("a try_call reached legalize_i128").at(f.dfg.display_inst(inst)));
        }
        let map = &self.map;
        super::split_branch_args(
            f,
            inst,
            |t| t == I128,
            |f, v| {
                let (lo, hi) = halves_in(map, f, inst, v)?;
                Ok(vec![lo, hi])
            },
        )
    }

    /// A condition value usable by `select`/`brif`: `lo | hi` for an `i128`.
    fn cond(&self, pos: &mut FuncCursor, inst: Inst, c: Value) -> Result<Value, Error> {
        if pos.func.dfg.value_type(c) == I128 {
            let (lo, hi) = self.halves(pos.func, inst, c)?;
            Ok(pos.ins().bor(lo, hi))
        } else {
            Ok(c)
        }
    }
}

/// `offset + 8` (the high half's offset), or an error if it overflows.
fn offset8(f: &Function, inst: Inst, offset: Offset32) -> Result<Offset32, Error> {
    i32::from(offset)
        .checked_add(8)
        .map(Offset32::new)
        .ok_or_else(|| unsupported(f, inst, "an i128 access whose high half's offset overflows 32 bits"))
}

/// The halves of the constant `k`.
fn const128(pos: &mut FuncCursor, k: i128) -> Pair {
    (pos.ins().iconst(I64, k as i64), pos.ins().iconst(I64, (k >> 64) as i64))
}

fn add128(pos: &mut FuncCursor, x: Pair, y: Pair) -> Pair {
    let (lo, c) = pos.ins().uadd_overflow(x.0, y.0);
    let (hi, _) = pos.ins().uadd_overflow_cin(x.1, y.1, c);
    (lo, hi)
}

fn sub128(pos: &mut FuncCursor, x: Pair, y: Pair) -> Pair {
    let (lo, b) = pos.ins().usub_overflow(x.0, y.0);
    let (hi, _) = pos.ins().usub_overflow_bin(x.1, y.1, b);
    (lo, hi)
}

/// The 256-bit product of the unsigned 128-bit `x` and `y`, as its low and
/// high 128-bit halves (the low one is what `imul` computes more cheaply): four 64 x 64 -> 128 partial products
/// (`imul`/`umulhi`, IMAD.WIDE) summed with carry chains.
fn product256(pos: &mut FuncCursor, x: Pair, y: Pair) -> (Pair, Pair) {
    let wide = |pos: &mut FuncCursor, a: Value, b: Value| (pos.ins().imul(a, b), pos.ins().umulhi(a, b));
    let a = wide(pos, x.0, y.0);
    let b = wide(pos, x.0, y.1);
    let c = wide(pos, x.1, y.0);
    let d = wide(pos, x.1, y.1);
    let zero = pos.ins().iconst(I64, 0);
    // Limb 1: a1 + b0 + c0, carries k (0..2) into limb 2.
    let t = add128(pos, (a.1, zero), (b.0, zero));
    let (p1, k) = add128(pos, t, (c.0, zero));
    // Limbs 2 and 3: b1 + c1 + (d0, d1) + k.
    let u = add128(pos, (b.1, zero), (c.1, zero));
    let u = add128(pos, u, (k, zero));
    let hi = add128(pos, u, d);
    ((a.0, p1), hi)
}

/// The high half of the signed product from the unsigned one `hi`:
/// `hi - (x < 0 ? y : 0) - (y < 0 ? x : 0)` (mod 2^128).
fn signed_high(pos: &mut FuncCursor, x: Pair, y: Pair, hi: Pair) -> Pair {
    let zero = pos.ins().iconst(I64, 0);
    let xneg = pos.ins().icmp_imm_s(IntCC::SignedLessThan, x.1, 0);
    let yneg = pos.ins().icmp_imm_s(IntCC::SignedLessThan, y.1, 0);
    let cy = select128(pos, xneg, y, (zero, zero));
    let cx = select128(pos, yneg, x, (zero, zero));
    let h = sub128(pos, hi, cy);
    sub128(pos, h, cx)
}

/// Whether `r = x + y` (`add`) or `r = x - y` overflowed as signed 128-bit
/// numbers: the sign bit of `(x ^ r) & (y ^ r)` (`(x ^ y) & (x ^ r)` for a
/// difference), which only needs the high halves. An `i8` 0/1.
fn signed_overflow(pos: &mut FuncCursor, add: bool, x: Pair, y: Pair, r: Pair) -> Value {
    let a = pos.ins().bxor(x.1, r.1);
    let b = if add { pos.ins().bxor(y.1, r.1) } else { pos.ins().bxor(x.1, y.1) };
    let t = pos.ins().band(a, b);
    pos.ins().icmp_imm_s(IntCC::SignedLessThan, t, 0)
}

fn binary(pos: &mut FuncCursor, op: Opcode, x: Pair, y: Pair) -> Pair {
    match op {
        Opcode::Iadd => add128(pos, x, y),
        Opcode::Isub => sub128(pos, x, y),
        Opcode::Imul => {
            let lo = pos.ins().imul(x.0, y.0);
            let h = pos.ins().umulhi(x.0, y.0);
            let a = pos.ins().imul(x.0, y.1);
            let b = pos.ins().imul(x.1, y.0);
            let ab = pos.ins().iadd(a, b);
            (lo, pos.ins().iadd(h, ab))
        }
        Opcode::Band => (pos.ins().band(x.0, y.0), pos.ins().band(x.1, y.1)),
        Opcode::Bor => (pos.ins().bor(x.0, y.0), pos.ins().bor(x.1, y.1)),
        Opcode::Bxor => (pos.ins().bxor(x.0, y.0), pos.ins().bxor(x.1, y.1)),
        _ => {
            let cc = match op {
                Opcode::Smin => IntCC::SignedLessThan,
                Opcode::Smax => IntCC::SignedGreaterThan,
                Opcode::Umin => IntCC::UnsignedLessThan,
                _ => IntCC::UnsignedGreaterThan,
            };
            let c = icmp128(pos, cc, x, y);
            (pos.ins().select(c, x.0, y.0), pos.ins().select(c, x.1, y.1))
        }
    }
}

/// `icmp cc x, y` of two `i128` values (an `i8` 0/1).
fn icmp128(pos: &mut FuncCursor, cc: IntCC, x: Pair, y: Pair) -> Value {
    match cc {
        IntCC::Equal | IntCC::NotEqual => {
            let a = pos.ins().bxor(x.0, y.0);
            let b = pos.ins().bxor(x.1, y.1);
            let d = pos.ins().bor(a, b);
            pos.ins().icmp_imm_s(cc, d, 0)
        }
        _ => {
            let strict = match cc {
                IntCC::SignedLessThanOrEqual => IntCC::SignedLessThan,
                IntCC::SignedGreaterThanOrEqual => IntCC::SignedGreaterThan,
                IntCC::UnsignedLessThanOrEqual => IntCC::UnsignedLessThan,
                IntCC::UnsignedGreaterThanOrEqual => IntCC::UnsignedGreaterThan,
                c => c,
            };
            let hi_eq = pos.ins().icmp(IntCC::Equal, x.1, y.1);
            let hi_c = pos.ins().icmp(strict, x.1, y.1);
            let lo_c = pos.ins().icmp(cc.unsigned(), x.0, y.0);
            pos.ins().select(hi_eq, lo_c, hi_c)
        }
    }
}

/// The float constant `2^e` of type `ty` (`f32` or `f64`; `e` within its
/// normal range).
fn pow2(pos: &mut FuncCursor, ty: Type, e: i32) -> Value {
    if ty == F32 {
        pos.ins().f32const(Ieee32::with_bits(((127 + e) as u32) << 23))
    } else {
        pos.ins().f64const(Ieee64::with_bits(((1023 + e) as u64) << 52))
    }
}

/// The float constant `v` of type `ty` (`f32` or `f64`).
fn fconst(pos: &mut FuncCursor, ty: Type, v: f64) -> Value {
    if ty == F32 {
        pos.ins().f32const(v as f32)
    } else {
        pos.ins().f64const(v)
    }
}

/// `2^(64 - s)` of type `ty` for an `i64` count `s` in 0..=64, built from
/// its exponent bits.
fn pow2_64_minus(pos: &mut FuncCursor, ty: Type, s: Value) -> Value {
    let (bias, frac, ity) = if ty == F32 { (127 + 64, 23, I32) } else { (1023 + 64, 52, I64) };
    let s = if ity == I32 { pos.ins().ireduce(I32, s) } else { s };
    let k = pos.ins().iconst(ity, bias);
    let e = pos.ins().isub(k, s);
    let bits = pos.ins().ishl_imm_u(e, frac);
    pos.ins().bitcast(ty, MemFlagsData::new(), bits)
}

/// `fcvt_from_uint`/`fcvt_from_sint` of an `i128` to `ty`, correctly
/// rounded: when the high half is 0, the `i64` conversion of the low half;
/// otherwise the top 64 bits of `x << clz(x1)` with a sticky bit for the
/// bits shifted out (it sits below the rounding position of both float
/// types, so the one rounding of the `i64` conversion is the right one),
/// scaled by `2^(64 - clz)`, which is exact (or overflows to infinity
/// exactly when the rounded value does). Signed: the magnitude (`2^127` for
/// `INT_MIN`, read unsigned), converted, negated.
fn float_from128(pos: &mut FuncCursor, ty: Type, x: Pair, signed: bool) -> Value {
    let (neg, x) = if signed {
        let neg = pos.ins().icmp_imm_s(IntCC::SignedLessThan, x.1, 0);
        let zero = const128(pos, 0);
        let m = sub128(pos, zero, x);
        (Some(neg), select128(pos, neg, m, x))
    } else {
        (None, x)
    };
    let small = pos.ins().fcvt_from_uint(ty, x.0);
    let s = pos.ins().clz(x.1);
    let top_hi = pos.ins().ishl(x.1, s);
    let top_lo = ushr_comp(pos, x.0, s);
    let top = pos.ins().bor(top_hi, top_lo);
    let rest = pos.ins().ishl(x.0, s);
    let sticky = pos.ins().icmp_imm_s(IntCC::NotEqual, rest, 0);
    let sticky = pos.ins().uextend(I64, sticky);
    let top = pos.ins().bor(top, sticky);
    let r = pos.ins().fcvt_from_uint(ty, top);
    let scale = pow2_64_minus(pos, ty, s);
    let big = pos.ins().fmul(r, scale);
    let high_zero = pos.ins().icmp_imm_s(IntCC::Equal, x.1, 0);
    let u = pos.ins().select(high_zero, small, big);
    match neg {
        Some(neg) => {
            let n = pos.ins().fneg(u);
            pos.ins().select(neg, n, u)
        }
        None => u,
    }
}

/// `fcvt_to_uint`/`fcvt_to_sint` (and `_sat`) of a float to `i128`,
/// truncating: the range checks of CLIF first (NaN traps with `bad_toint`,
/// out of range with `int_ovf`; the `_sat` forms clamp, NaN to 0), then the
/// magnitude `a` in two pieces, `hi = trunc(a * 2^-64)` and
/// `lo = trunc(a - hi * 2^64)` — both exact, since a float of 2^64 or more
/// is an integer and `hi` has no more significant bits than `a` — each by
/// the saturating `i64` conversion, and the sign.
fn float_to128(pos: &mut FuncCursor, op: Opcode, x: Value) -> Pair {
    let ty = pos.func.dfg.value_type(x);
    let signed = matches!(op, Opcode::FcvtToSint | Opcode::FcvtToSintSat);
    let sat = matches!(op, Opcode::FcvtToUintSat | Opcode::FcvtToSintSat);
    let limit = pow2(pos, ty, if signed { 127 } else { 128 });
    let too_big = pos.ins().fcmp(FloatCC::GreaterThanOrEqual, x, limit);
    let low = if signed { pos.ins().fneg(limit) } else { fconst(pos, ty, -1.0) };
    // Below the range: x < -2^127 (signed), x <= -1 (unsigned).
    let too_small = pos.ins().fcmp(if signed { FloatCC::LessThan } else { FloatCC::LessThanOrEqual }, x, low);
    if !sat {
        let nan = pos.ins().fcmp(FloatCC::Unordered, x, x);
        pos.ins().trapnz(nan, TrapCode::BAD_CONVERSION_TO_INTEGER);
        let out = pos.ins().bor(too_big, too_small);
        pos.ins().trapnz(out, TrapCode::INTEGER_OVERFLOW);
    }
    let a = if signed { pos.ins().fabs(x) } else { x };
    let down = pow2(pos, ty, -64);
    let scaled = pos.ins().fmul(a, down);
    let hi = pos.ins().fcvt_to_uint_sat(I64, scaled);
    let hf = pos.ins().fcvt_from_uint(ty, hi);
    let up = pow2(pos, ty, 64);
    let hs = pos.ins().fmul(hf, up);
    let rest = pos.ins().fsub(a, hs);
    let lo = pos.ins().fcvt_to_uint_sat(I64, rest);
    let mut r = (lo, hi);
    if signed {
        let zero = fconst(pos, ty, 0.0);
        let neg = pos.ins().fcmp(FloatCC::LessThan, x, zero);
        let z = const128(pos, 0);
        let m = sub128(pos, z, r);
        r = select128(pos, neg, m, r);
    }
    if sat {
        let (max, min) = if signed { (i128::MAX, i128::MIN) } else { (-1i128, 0) };
        let max = const128(pos, max);
        r = select128(pos, too_big, max, r);
        let min = const128(pos, min);
        r = select128(pos, too_small, min, r);
    }
    r
}

/// `clz` of an `i128` (an `i64` count).
fn clz128(pos: &mut FuncCursor, x: Pair) -> Value {
    let z0 = pos.ins().clz(x.0);
    let z1 = pos.ins().clz(x.1);
    let z0b = pos.ins().iadd_imm_s(z0, 64);
    let high_zero = pos.ins().icmp_imm_s(IntCC::Equal, x.1, 0);
    pos.ins().select(high_zero, z0b, z1)
}

/// `x >> 1 >> ~s` (= `x >> (64 - s mod 64)`, 0 when `s mod 64 = 0`) and
/// its left-shift mirror.
fn ushr_comp(pos: &mut FuncCursor, x: Value, s: Value) -> Value {
    let ns = pos.ins().bnot(s);
    let h = pos.ins().ushr_imm_u(x, 1);
    pos.ins().ushr(h, ns)
}

fn ishl_comp(pos: &mut FuncCursor, x: Value, s: Value) -> Value {
    let ns = pos.ins().bnot(s);
    let h = pos.ins().ishl_imm_u(x, 1);
    pos.ins().ishl(h, ns)
}

/// `ishl`/`ushr`/`sshr`/`rotl`/`rotr` of an `i128` by `s` (any integer
/// type, taken modulo 128).
fn shift128(pos: &mut FuncCursor, op: Opcode, x: Pair, s: Value) -> Pair {
    let b6 = pos.ins().band_imm_u(s, 64);
    let big = pos.ins().icmp_imm_s(IntCC::NotEqual, b6, 0);
    match op {
        Opcode::Ishl => {
            let a = pos.ins().ishl(x.0, s);
            let b = pos.ins().ishl(x.1, s);
            let c = ushr_comp(pos, x.0, s);
            let bc = pos.ins().bor(b, c);
            let zero = pos.ins().iconst(I64, 0);
            (pos.ins().select(big, zero, a), pos.ins().select(big, a, bc))
        }
        Opcode::Ushr | Opcode::Sshr => {
            let a = if op == Opcode::Ushr { pos.ins().ushr(x.1, s) } else { pos.ins().sshr(x.1, s) };
            let b = pos.ins().ushr(x.0, s);
            let c = ishl_comp(pos, x.1, s);
            let bc = pos.ins().bor(b, c);
            let fill = if op == Opcode::Ushr { pos.ins().iconst(I64, 0) } else { pos.ins().sshr_imm_u(x.1, 63) };
            (pos.ins().select(big, a, bc), pos.ins().select(big, fill, a))
        }
        _ => {
            // Rotating by 64 swaps the halves; then by s mod 64 both ways.
            let p = pos.ins().select(big, x.1, x.0);
            let q = pos.ins().select(big, x.0, x.1);
            if op == Opcode::Rotl {
                let pl = pos.ins().ishl(p, s);
                let qr = ushr_comp(pos, q, s);
                let ql = pos.ins().ishl(q, s);
                let pr = ushr_comp(pos, p, s);
                (pos.ins().bor(pl, qr), pos.ins().bor(ql, pr))
            } else {
                let pr = pos.ins().ushr(p, s);
                let ql = ishl_comp(pos, q, s);
                let qr = pos.ins().ushr(q, s);
                let pl = ishl_comp(pos, p, s);
                (pos.ins().bor(pr, ql), pos.ins().bor(qr, pl))
            }
        }
    }
}

fn select128(pos: &mut FuncCursor, c: Value, x: Pair, y: Pair) -> Pair {
    (pos.ins().select(c, x.0, y.0), pos.ins().select(c, x.1, y.1))
}

/// `udiv`/`urem`/`sdiv`/`srem` of `i128` values: the traps, then a
/// restoring shift-subtract loop on the halves (one dividend bit per
/// iteration, 128 iterations), then the signs. Leaves `inst` at the top of
/// the exit block.
///
/// Why the loop is exact: before iteration `k` (from the top bit down) the
/// partial remainder `r` is below `d`; `r' = 2r + bit_k` is below `2d`, so
/// one compare-and-subtract brings it below `d` again and decides quotient
/// bit `k`. `2r + bit_k` may not fit 128 bits (when `d > 2^127`), so the
/// compare is written `r + bit_k >= d - r`, whose sides both fit since
/// `r < d`; the new remainder `2r + bit_k - d` is below `d` and is right
/// modulo 2^128.
fn divide(pos: &mut FuncCursor, inst: Inst, op: Opcode, x: Pair, d: Pair) -> Pair {
    let signed = matches!(op, Opcode::Sdiv | Opcode::Srem);
    let rem = matches!(op, Opcode::Urem | Opcode::Srem);
    let dnz = pos.ins().bor(d.0, d.1);
    pos.ins().trapz(dnz, TrapCode::INTEGER_DIVISION_BY_ZERO);
    let zero = pos.ins().iconst(I64, 0);
    if op == Opcode::Sdiv {
        // x == INT_MIN && d == -1: (x0 | x1 ^ 2^63) == 0 and (d0 & d1) == -1.
        let min_hi = pos.ins().iconst(I64, i64::MIN);
        let xh = pos.ins().bxor(x.1, min_hi);
        let xm = pos.ins().bor(x.0, xh);
        let is_min = pos.ins().icmp_imm_s(IntCC::Equal, xm, 0);
        let dm = pos.ins().band(d.0, d.1);
        let t = pos.ins().select(is_min, dm, zero);
        let ovf = pos.ins().icmp_imm_s(IntCC::Equal, t, -1);
        pos.ins().trapnz(ovf, TrapCode::INTEGER_OVERFLOW);
    }
    let z = (zero, zero);
    let (xn, dn, signs) = if signed {
        let xneg = pos.ins().icmp_imm_s(IntCC::SignedLessThan, x.1, 0);
        let negx = sub128(pos, z, x);
        let xn = select128(pos, xneg, negx, x);
        let dneg = pos.ins().icmp_imm_s(IntCC::SignedLessThan, d.1, 0);
        let negd = sub128(pos, z, d);
        let dn = select128(pos, dneg, negd, d);
        (xn, dn, Some((xneg, dneg)))
    } else {
        (x, d, None)
    };
    let count = pos.ins().iconst(I32, 128);

    let block = pos.current_block().unwrap();
    let lp = pos.func.dfg.make_block();
    let exit = pos.func.dfg.make_block();
    pos.func.layout.split_block(exit, inst);
    pos.func.layout.insert_block(lp, exit);
    pos.goto_bottom(block);
    let a = |v: Value| BlockArg::Value(v);
    pos.ins().jump(lp, &[a(count), a(xn.0), a(xn.1), a(zero), a(zero)]);

    let i = pos.func.dfg.append_block_param(lp, I32);
    let n = (pos.func.dfg.append_block_param(lp, I64), pos.func.dfg.append_block_param(lp, I64));
    let r = (pos.func.dfg.append_block_param(lp, I64), pos.func.dfg.append_block_param(lp, I64));
    pos.goto_bottom(lp);
    let zero = pos.ins().iconst(I64, 0);
    let bit = pos.ins().ushr_imm_u(n.1, 63);
    let rb = add128(pos, r, (bit, zero));
    let dr = sub128(pos, dn, r);
    let ge = icmp128(pos, IntCC::UnsignedGreaterThanOrEqual, rb, dr);
    let r2 = add128(pos, rb, r);
    let r2d = sub128(pos, r2, dn);
    let r_next = select128(pos, ge, r2d, r2);
    let qbit = pos.ins().uextend(I64, ge);
    let n0s = pos.ins().ishl_imm_u(n.0, 1);
    let n0t = pos.ins().ushr_imm_u(n.0, 63);
    let n1s = pos.ins().ishl_imm_u(n.1, 1);
    let n_next = (pos.ins().bor(n0s, qbit), pos.ins().bor(n1s, n0t));
    let i_next = pos.ins().iadd_imm_s(i, -1);
    pos.ins().brif(
        i_next,
        lp,
        &[a(i_next), a(n_next.0), a(n_next.1), a(r_next.0), a(r_next.1)],
        exit,
        &[a(n_next.0), a(n_next.1), a(r_next.0), a(r_next.1)],
    );

    let q = (pos.func.dfg.append_block_param(exit, I64), pos.func.dfg.append_block_param(exit, I64));
    let r = (pos.func.dfg.append_block_param(exit, I64), pos.func.dfg.append_block_param(exit, I64));
    pos.goto_inst(inst);
    let zero = pos.ins().iconst(I64, 0);
    let z = (zero, zero);
    match (signs, rem) {
        (None, false) => q,
        (None, true) => r,
        (Some((xneg, _)), true) => {
            let negr = sub128(pos, z, r);
            select128(pos, xneg, negr, r)
        }
        (Some((xneg, dneg)), false) => {
            let negq = sub128(pos, z, q);
            let differ = pos.ins().icmp(IntCC::NotEqual, xneg, dneg);
            select128(pos, differ, negq, q)
        }
    }
}
