//! Rewrites of Cranelift IR before instruction selection: loads and stores
//! at addresses that may be misaligned.
//!
//! CLIF lets a load or store without the `aligned` flag use any address; the
//! machine's `LD`/`ST`/`LDL`/`STL` of 2, 4 or 8 bytes fault on an address
//! that is not a multiple of the size (`Misaligned`). Every such access of
//! an integer type is classified here:
//!
//! * **aligned** — the `aligned` flag is set, or the address is a stack
//!   slot's `stack_addr` and the slot's offset plus the access offset is a
//!   multiple of the size (a slot is aligned to at least its natural
//!   alignment up to 8, `ursa_isel::lower::slot_alignment`, and the frame to
//!   16): left alone, one instruction;
//! * **misaligned** — the same stack-slot case with an offset that is not a
//!   multiple of the size: replaced by byte accesses;
//! * **unknown** — anything else: a run-time check with the single access as
//!   the fast path and the byte accesses out of line:
//!
//! ```text
//! B:     low = band (lo32(p) + off), size-1
//!        brif low, S, F
//! F:     v1 = load.T aligned p+off           ; the original access, aligned
//!        jump J(v1)
//! S:     b_k = uload8 p+off+k   (k < size)   ; or istore8 of x >> 8k
//!        v2 = b_0 | b_1 << 8 | …             ; little- or big-endian per flags
//!        jump J(v2)
//! J(v):  ...                                 ; the rest of B
//! ```
//!
//! `S` is marked cold, so the lowering lays it out after the rest of the
//! function: `B` ends in `LOP3 P, RZ, lo, size-1, RZ, 0xc0, !PT` (one
//! instruction for the test, reading the address pair's low register) and
//! `@P BRA S`, and falls through into `F`. The aligned case costs two
//! instructions more than the bare access (the `LOP3` and the branch not
//! taken) and the misaligned one the
//! `size` byte accesses and their combination (an i64 is combined as two
//! 32-bit halves, which the `uextend lo | uextend hi << 32` rule makes a
//! pair). `docs/performance.md` ("Misaligned loads and stores") has the
//! counts against the always byte-wise alternative. 8-bit accesses are
//! always aligned. `f32`/`f64` accesses take the same paths, the slow one on
//! the bits (`bitcast` to and from `i32`/`i64`); i128 has been narrowed to
//! i64 halves before this pass; other types (vectors) are left to their own
//! lowering (an unflagged misaligned one still faults, never a wrong value).

use crate::Error;
use cranelift_codegen::cursor::{Cursor, FuncCursor};
use cranelift_codegen::ir::immediates::Offset32;
use cranelift_codegen::ir::{
    types, BlockArg, Endianness, Function, Inst, InstBuilder, InstructionData, MemFlags, MemFlagsData, Opcode, Type, Value, ValueDef,
};

/// A load or store this pass may rewrite.
struct Access {
    store: bool,
    /// Bytes accessed.
    size: u32,
    addr: Value,
    offset: i32,
    flags: MemFlags,
}

/// What is known about an access's alignment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Known {
    Aligned,
    Misaligned,
    Unknown,
}

fn access(f: &Function, inst: Inst) -> Option<Access> {
    // Integers up to 64 bits, and f32/f64 by their bits.
    let int = |t: Type| (t.is_int() && t.bits() <= 64) || t == types::F32 || t == types::F64;
    match f.dfg.insts[inst] {
        InstructionData::Load { opcode, flags, offset, arg } => {
            let ty = f.dfg.value_type(f.dfg.first_result(inst));
            let size = match opcode {
                Opcode::Load if int(ty) => ty.bytes(),
                Opcode::Uload16 | Opcode::Sload16 => 2,
                Opcode::Uload32 | Opcode::Sload32 => 4,
                _ => return None,
            };
            Some(Access { store: false, size, addr: arg, offset: offset.into(), flags })
        }
        InstructionData::Store { opcode, flags, offset, args } => {
            let ty = f.dfg.value_type(args[0]);
            let size = match opcode {
                Opcode::Store if int(ty) => ty.bytes(),
                Opcode::Istore16 => 2,
                Opcode::Istore32 => 4,
                _ => return None,
            };
            Some(Access { store: true, size, addr: args[1], offset: offset.into(), flags })
        }
        _ => None,
    }
}

fn known(f: &Function, a: &Access) -> Known {
    if a.size <= 1 || f.dfg.mem_flags[a.flags].aligned() {
        return Known::Aligned;
    }
    if let ValueDef::Result(def, _) = f.dfg.value_def(f.dfg.resolve_aliases(a.addr)) {
        if let InstructionData::StackAddr { stack_slot, offset, .. } = f.dfg.insts[def] {
            let align = ursa_isel::lower::slot_alignment(&f.sized_stack_slots[stack_slot]);
            if align >= a.size {
                let o = i64::from(offset) + i64::from(a.offset);
                return if o.rem_euclid(a.size as i64) == 0 { Known::Aligned } else { Known::Misaligned };
            }
        }
    }
    Known::Unknown
}

/// Rewrites the loads and stores of `f` that may be misaligned (module docs).
pub fn legalize_memory(f: &mut Function) -> Result<(), Error> {
    if !super::may_access_memory(f) {
        return Ok(());
    }
    let mut todo = Vec::new();
    for b in f.layout.blocks() {
        for i in f.layout.block_insts(b) {
            if let Some(a) = access(f, i) {
                match known(f, &a) {
                    Known::Aligned => {}
                    k => todo.push((i, a, k == Known::Unknown)),
                }
            }
        }
    }
    for (inst, a, check) in todo {
        expand(f, inst, a, check)?;
    }
    Ok(())
}

fn iconst(pos: &mut FuncCursor, ty: Type, k: i64) -> Value {
    pos.ins().iconst(ty, k)
}

/// The integer type of `bytes` bytes.
fn int_type(bytes: u32) -> Type {
    match bytes {
        2 => types::I16,
        4 => types::I32,
        _ => types::I64,
    }
}

fn expand(f: &mut Function, inst: Inst, a: Access, check: bool) -> Result<(), Error> {
    let block = f.layout.inst_block(inst).ok_or_else(|| Error::internal("an access outside the layout").at(f.dfg.display_inst(inst)))?;
    let data = f.dfg.mem_flags[a.flags];
    let little = data.endianness(Endianness::Little) == Endianness::Little;
    let join = f.dfg.make_block();
    f.layout.split_block(join, inst);
    let slow = f.dfg.make_block();
    f.layout.insert_block(slow, join);
    if check {
        // Out of line: laid out after the rest of the function.
        f.layout.set_cold(slow);
    }
    let mut pos = FuncCursor::new(f);
    pos.goto_bottom(block);
    let addr_ty = pos.func.dfg.value_type(a.addr);
    // Byte offsets off+k must fit Offset32: otherwise add the offset first.
    let (addr, offset) = if a.offset.checked_add(a.size as i32).is_some() {
        (a.addr, a.offset)
    } else {
        let k = iconst(&mut pos, addr_ty, a.offset as i64);
        (pos.ins().iadd(a.addr, k), 0)
    };
    let load_ty = if a.store { None } else { Some(pos.func.dfg.value_type(pos.func.dfg.first_result(inst))) };

    // The check and the fast path: the original access, marked aligned.
    if check {
        let fast = pos.func.dfg.make_block();
        pos.func.layout.insert_block(fast, slow);
        let lo = if addr_ty == types::I64 { pos.ins().ireduce(types::I32, addr) } else { addr };
        let lo = if offset.rem_euclid(a.size as i32) != 0 {
            let k = iconst(&mut pos, types::I32, offset as i64);
            pos.ins().iadd(lo, k)
        } else {
            lo
        };
        let m = iconst(&mut pos, types::I32, a.size as i64 - 1);
        let low = pos.ins().band(lo, m);
        pos.ins().brif(low, slow, &[], fast, &[]);
        pos.goto_bottom(fast);
        let aligned = pos.func.dfg.mem_flags.insert(data.with_aligned()).map_err(|_| Error::unsupported("too many memory flag sets"))?;
        let opcode = pos.func.dfg.insts[inst].opcode();
        let v = if a.store {
            let x = pos.func.dfg.inst_args(inst)[0];
            let ty = pos.func.dfg.value_type(x);
            pos.ins().Store(opcode, ty, aligned, Offset32::new(offset), x, addr);
            None
        } else {
            let (ni, dfg) = pos.ins().Load(opcode, load_ty.unwrap(), aligned, Offset32::new(offset), addr);
            Some(dfg.first_result(ni))
        };
        match v {
            Some(v) => pos.ins().jump(join, &[BlockArg::Value(v)]),
            None => pos.ins().jump(join, &[]),
        };
    } else {
        pos.ins().jump(slow, &[]);
    }

    // The slow path, byte by byte.
    pos.goto_bottom(slow);
    let n = a.size as i32;
    let shift_of = |k: i32| if little { 8 * k } else { 8 * (n - 1 - k) };
    if a.store {
        let x = pos.func.dfg.inst_args(inst)[0];
        let xt = pos.func.dfg.value_type(x);
        let x = if xt.is_float() { pos.ins().bitcast(int_type(xt.bytes()), MemFlagsData::new(), x) } else { x };
        // An i64 is shifted as two 32-bit halves (a 64-bit shift is two
        // instructions).
        let halves: Vec<Value> = if n == 8 && pos.func.dfg.value_type(x) == types::I64 {
            let lo = pos.ins().ireduce(types::I32, x);
            let sh = iconst(&mut pos, types::I32, 32);
            let h = pos.ins().ushr(x, sh);
            let hi = pos.ins().ireduce(types::I32, h);
            vec![lo, hi]
        } else {
            vec![x]
        };
        for k in 0..n {
            let s = shift_of(k);
            let (part, s) = if halves.len() == 2 { (halves[(s / 32) as usize], s % 32) } else { (x, s) };
            let xk = if s == 0 {
                part
            } else {
                let sh = iconst(&mut pos, types::I32, s as i64);
                pos.ins().ushr(part, sh)
            };
            // The access's own flag set (`istore8` would intern it again).
            let xt = pos.func.dfg.value_type(xk);
            pos.ins().Store(Opcode::Istore8, xt, a.flags, Offset32::new(offset + k), xk, addr);
        }
        pos.ins().jump(join, &[]);
        pos.func.layout.remove_inst(inst);
        return Ok(());
    }
    // Bytes combined in 32-bit registers: an i64 as two halves.
    let w = int_type(a.size.min(4));
    let mut acc: [Option<Value>; 2] = [None, None];
    for k in 0..n {
        // The access's own flag set (`uload8` would intern it again).
        let (bi, dfg) = pos.ins().Load(Opcode::Uload8, w, a.flags, Offset32::new(offset + k), addr);
        let b = dfg.first_result(bi);
        let s = shift_of(k);
        let (half, s) = ((s / 32) as usize, s % 32);
        let b = if s == 0 {
            b
        } else {
            let sh = iconst(&mut pos, types::I32, s as i64);
            pos.ins().ishl(b, sh)
        };
        acc[half] = Some(match acc[half] {
            None => b,
            Some(p) => pos.ins().bor(p, b),
        });
    }
    let raw = match acc {
        [Some(lo), Some(hi)] => {
            let lo = pos.ins().uextend(types::I64, lo);
            let hi = pos.ins().uextend(types::I64, hi);
            let sh = iconst(&mut pos, types::I32, 32);
            let hi = pos.ins().ishl(hi, sh);
            Some(pos.ins().bor(lo, hi))
        }
        [lo, _] => lo,
    };
    let raw = raw.ok_or_else(|| Error::internal("an access of no bytes"))?;
    let w = int_type(a.size);
    let ty = load_ty.unwrap();
    let opcode = pos.func.dfg.insts[inst].opcode();
    let v = if ty.bits() > w.bits() {
        match opcode {
            Opcode::Sload16 | Opcode::Sload32 => pos.ins().sextend(ty, raw),
            _ => pos.ins().uextend(ty, raw),
        }
    } else if ty.is_float() {
        pos.ins().bitcast(ty, MemFlagsData::new(), raw)
    } else {
        raw
    };
    pos.ins().jump(join, &[BlockArg::Value(v)]);
    let r = pos.func.dfg.append_block_param(join, ty);
    let result = pos.func.dfg.first_result(inst);
    pos.func.dfg.detach_inst_results(inst);
    pos.func.layout.remove_inst(inst);
    pos.func.dfg.change_to_alias(result, r);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use cranelift_codegen::settings;
    use cranelift_reader::parse_functions;

    fn legalized(src: &str) -> Function {
        let mut f = parse_functions(src).unwrap().remove(0);
        legalize_memory(&mut f).unwrap();
        let flags = settings::Flags::new(settings::builder());
        cranelift_codegen::verifier::verify_function(&f, &flags).unwrap_or_else(|e| panic!("{}\n{}", e, f.display()));
        f
    }

    fn count(f: &Function, op: Opcode) -> usize {
        f.layout.blocks().flat_map(|b| f.layout.block_insts(b)).filter(|&i| f.dfg.insts[i].opcode() == op).count()
    }

    #[test]
    fn aligned_flag_and_known_stack_offsets_stay_single_accesses() {
        let f = legalized(
            "function %f(i64) -> i64 {\n ss0 = explicit_slot 16\nblock0(v0: i64):\n v1 = load.i64 aligned v0\n v2 = stack_addr.i64 ss0\n store v1, v2+8\n v3 = load.i32 v2+4\n v4 = uextend.i64 v3\n return v4\n}",
        );
        assert_eq!(f.layout.blocks().count(), 1);
        assert_eq!(count(&f, Opcode::Uload8), 0);
    }

    #[test]
    fn known_misaligned_stack_offset_is_byte_wise_without_a_check() {
        let f = legalized(
            "function %f(i64) {\n ss0 = explicit_slot 16\nblock0(v0: i64):\n v2 = stack_addr.i64 ss0\n store v0, v2+3\n return\n}",
        );
        assert_eq!(count(&f, Opcode::Istore8), 8);
        assert_eq!(count(&f, Opcode::Store), 0);
        assert_eq!(count(&f, Opcode::Brif), 0);
    }

    #[test]
    fn unknown_address_gets_a_check_and_both_paths() {
        let f = legalized("function %f(i64) -> i64 {\nblock0(v0: i64):\n v1 = sload32.i64 v0+1\n return v1\n}");
        assert_eq!(count(&f, Opcode::Brif), 1);
        assert_eq!(count(&f, Opcode::Sload32), 1);
        assert_eq!(count(&f, Opcode::Uload8), 4);
        assert_eq!(count(&f, Opcode::Sextend), 1);
    }

    #[test]
    fn the_slow_path_is_cold() {
        let f = legalized("function %f(i64, i16) {\nblock0(v0: i64, v1: i16):\n store v1, v0+1\n return\n}");
        assert_eq!(count(&f, Opcode::Brif), 1);
        assert_eq!(count(&f, Opcode::Store), 1);
        assert_eq!(count(&f, Opcode::Istore8), 2);
        assert_eq!(f.layout.blocks().filter(|&b| f.layout.is_cold(b)).count(), 1);
    }
}
