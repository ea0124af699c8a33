//! Decode-to-ops for the project-extension instructions
//! (emit/spec/ext/ext.isa, meaning in docs/isa-extensions.md).

use crate::decode::{bop_of, fcmp_of, memty_of, rnd_of, sign_extend, Fields, B, C};
use crate::ops::*;
use crate::regs::{DUMP_ROW, DUMP_ROW_HI, UR_DUMP_HI, UR_ZERO, ZERO_ROW};

type R<T> = Result<T, String>;

/// Rows of a destination tuple of `n` registers starting at field `name`.
fn dst_rows(f: &Fields, name: &str, n: usize) -> R<[u16; 4]> {
    let r = f.v(name)? as u16;
    let mut rows = [DUMP_ROW; 4];
    if r != ZERO_ROW {
        for (i, row) in rows.iter_mut().enumerate().take(n) {
            *row = r + i as u16;
        }
    }
    Ok(rows)
}

/// Rows of a source tuple of `n` registers (RZ reads zeros).
fn src_rows(f: &Fields, name: &str, n: usize) -> R<[u16; 4]> {
    let r = f.v(name)? as u16;
    let mut rows = [ZERO_ROW; 4];
    if r != ZERO_ROW {
        for (i, row) in rows.iter_mut().enumerate().take(n) {
            *row = r + i as u16;
        }
    }
    Ok(rows)
}

/// A 32- or 64-bit source as a 64-bit operand (32-bit ones zero-extended).
fn src_w(f: &Fields, name: &str, wide: bool) -> R<Src64> {
    if wide {
        return f.src64(name);
    }
    Ok(match f.src(name)? {
        Src::R(r) => Src64::R(r, ZERO_ROW),
        Src::U(u) => Src64::U(u, UR_ZERO),
        Src::Imm(v) => Src64::Imm(v as u64),
        Src::C(c) => Src64::C32(c),
    })
}

/// A 32- or 64-bit destination as a pair (a 32-bit one dumps the high half).
fn dst_w(f: &Fields, name: &str, wide: bool) -> R<Dst64> {
    if wide {
        return f.dst64(name);
    }
    Ok(match f.dst(name)? {
        Dst::R(r) => Dst64::R(r, DUMP_ROW_HI),
        Dst::U(u) => Dst64::U(u, UR_DUMP_HI),
    })
}

fn int_ty(s: &str) -> R<IntTy> {
    Ok(match s {
        "S32" => IntTy::S32,
        "U32" => IntTy::U32,
        "S64" => IntTy::S64,
        "U64" => IntTy::U64,
        _ => return Err(format!("unknown integer type {}", s)),
    })
}

/// The absolute target of a PC-relative field: `PC + 16 + SEXT(offset)`.
fn target(f: &Fields, pc: u64) -> R<u64> {
    let v = f.v("target")?;
    Ok(pc.wrapping_add(16).wrapping_add(sign_extend(v, 32) as u64))
}

fn breg(f: &Fields, name: &str) -> R<u8> {
    Ok(f.v(name)? as u8)
}

pub(crate) fn decode_ext(f: &Fields, optype: &str, pc: u64) -> R<Op> {
    let fm = |n: &str| FMod { neg: f.m(n, "neg"), abs: f.m(n, "abs") };
    let space = |o: &str| match o {
        "LDG" | "STG" => AddrSpace::Global,
        "LDS" | "STS" => AddrSpace::Shared,
        "LDL" | "STL" => AddrSpace::Local,
        _ => AddrSpace::Generic,
    };
    Ok(match optype {
        // UBRA is BRA under a uniform guard (group EXTU).
        "BRA" | "UBRA" => {
            if f.has("target") {
                Op::Bra { target: target(f, pc)? }
            } else {
                Op::BraR { a: f.src64("ra")? }
            }
        }
        "CALL" => {
            if f.has("target") {
                Op::Call { d: f.dst64("rd")?, target: target(f, pc)? }
            } else {
                Op::CallR { d: f.dst64("rd")?, a: f.src64("ra")? }
            }
        }
        "RET" => Op::Ret { a: f.src64("ra")? },
        "EXIT" => Op::Exit,
        "NOP" => Op::Nop,
        "MEMBAR" => Op::Membar,
        "BPT" => Op::Bpt { code: f.v("code")? as u16 },
        "LEPC" => Op::Lepc { d: f.dst64("rd")?, target: target(f, pc)? },
        "BSSY" => Op::Bssy { b: breg(f, "bd")?, target: target(f, pc)? },
        "BSYNC" => Op::Bsync { b: breg(f, "bb")? },
        "BREAK" => Op::Break { b: breg(f, "bd")? },
        "BMOV" => {
            if f.has("rd") {
                Op::BmovToR { d: f.dst("rd")?, b: breg(f, "bb")?, clear: f.e("mode")? == "CLEAR" }
            } else {
                Op::BmovToB { b: breg(f, "bd")?, s: f.src("rb")? }
            }
        }
        "LDG" | "LDS" | "LDL" | "LD" => {
            let ty = memty_of(f.e("dtype")?)?;
            let sp = space(optype);
            let a = match sp {
                AddrSpace::Shared | AddrSpace::Local => src_w(f, "ra", false)?,
                _ => f.src64("ra")?,
            };
            Op::Load { space: sp, d: dst_rows(f, "rd", ty.regs())?, a, ofs: sign_extend(f.v("ofs")?, 24) as i32, ty }
        }
        "STG" | "STS" | "STL" | "ST" => {
            let ty = memty_of(f.e("dtype")?)?;
            let sp = space(optype);
            let a = match sp {
                AddrSpace::Shared | AddrSpace::Local => src_w(f, "ra", false)?,
                _ => f.src64("ra")?,
            };
            Op::Store { space: sp, s: src_rows(f, "rb", ty.regs())?, a, ofs: sign_extend(f.v("ofs")?, 24) as i32, ty }
        }
        "LDC" => {
            let ty = memty_of(f.e("dtype")?)?;
            let v = f.v("vb")?;
            let a = f.src("ra")?;
            let raw = v & 0xffff;
            let off = if a == Src::R(ZERO_ROW) { raw as i32 } else { sign_extend(raw, 16) as i32 };
            Op::Ldc { d: dst_rows(f, "rd", ty.regs())?, a, bank: ((v >> 16) & 63) as u8, off, ty }
        }
        "ATOM" => {
            let it = int_ty(f.e("itype")?)?;
            let wide = it.wide();
            Op::Atom {
                d: dst_w(f, "rd", wide)?,
                a: f.src64("ra")?,
                ofs: sign_extend(f.v("ofs")?, 24) as i32,
                b: src_w(f, "rb", wide)?,
                c: src_w(f, "rc", wide)?,
                op: match f.e("op")? {
                    "ADD" => AtomOp::Add,
                    "MIN" => AtomOp::Min,
                    "MAX" => AtomOp::Max,
                    "AND" => AtomOp::And,
                    "OR" => AtomOp::Or,
                    "XOR" => AtomOp::Xor,
                    "EXCH" => AtomOp::Exch,
                    "CAS" => AtomOp::Cas,
                    o => return Err(format!("unknown atomic operation {}", o)),
                },
                wide,
                signed: it.signed(),
            }
        }
        "S2R" | "S2UR" => Op::S2r { d: f.dst(if optype == "S2R" { "rd" } else { "urd" })?, sr: f.v("sr")? as u8 },
        "BAR" => Op::Bar { id: f.v("barid")? as u8, count: f.v("count")? as u16 },
        "FADD" | "FMUL" | "FFMA" => {
            let (b, bn) = f.src_of(B)?;
            let (d, a, ma, mb, rnd) = (f.dst("rd")?, f.src("ra")?, fm("ra"), fm(bn), rnd_of(f.e("rnd")?)?);
            match optype {
                "FADD" => Op::Fadd { d, a, b, ma, mb, rnd },
                "FMUL" => Op::Fmul { d, a, b, ma, mb, rnd },
                _ => {
                    let (c, cn) = f.src_of(C)?;
                    Op::Ffma { d, a, b, c, ma, mb, mc: fm(cn), rnd }
                }
            }
        }
        "FMNMX" => {
            let (b, bn) = f.src_of(B)?;
            Op::Fmnmx { d: f.dst("rd")?, a: f.src("ra")?, b, ma: fm("ra"), mb: fm(bn), nan: f.e("nanmode")? == "NAN", pp: f.pin("pp")? }
        }
        "FSETP" => {
            let (b, bn) = f.src_of(B)?;
            Op::Fsetp {
                a: f.src("ra")?,
                b,
                ma: fm("ra"),
                mb: fm(bn),
                cmp: fcmp_of(f.e("cmp")?)?,
                bop: bop_of(f.e("lop")?)?,
                pp: f.pin("pp")?,
                pu: f.pdst("pu")?,
                pv: f.pdst("pv")?,
            }
        }
        "FRND" => {
            let wide = f.e("ftype")? == "F64";
            let bn = f.pick(B)?;
            Op::Frnd { d: dst_w(f, "rd", wide)?, b: src_w(f, bn, wide)?, m: fm(bn), rnd: rnd_of(f.e("rnd")?)?, f64: wide }
        }
        "I2F" => {
            let from = int_ty(f.e("itype")?)?;
            let to_f64 = f.e("ftype")? == "F64";
            Op::I2f { d: dst_w(f, "rd", to_f64)?, b: src_w(f, f.pick(B)?, from.wide())?, rnd: rnd_of(f.e("rnd")?)?, to_f64, from }
        }
        "F2I" => {
            let to = int_ty(f.e("itype")?)?;
            let from_f64 = f.e("ftype")? == "F64";
            Op::F2i { d: dst_w(f, "rd", to.wide())?, b: src_w(f, f.pick(B)?, from_f64)?, rnd: rnd_of(f.e("rnd")?)?, from_f64, to }
        }
        "F2F" => {
            let to_f64 = f.e("dtype")? == "F64";
            let from_f64 = f.e("srctype")? == "F64";
            Op::F2f { d: dst_w(f, "rd", to_f64)?, b: src_w(f, f.pick(B)?, from_f64)?, rnd: rnd_of(f.e("rnd")?)?, to_f64 }
        }
        "VOTE" => Op::Vote {
            d: f.dst("rd")?,
            pu: f.pdst("pu")?,
            pp: f.pin("pp")?,
            mode: match f.e("mode")? {
                "ALL" => VoteMode::All,
                "ANY" => VoteMode::Any,
                "EQ" => VoteMode::Eq,
                m => return Err(format!("unknown vote mode {}", m)),
            },
        },
        "SHFL" => Op::Shfl {
            d: f.dst("rd")?,
            a: f.src("ra")?,
            b: f.src_of(B)?.0,
            c: f.v("vc")? as u32,
            mode: match f.e("mode")? {
                "IDX" => ShflMode::Idx,
                "UP" => ShflMode::Up,
                "DOWN" => ShflMode::Down,
                "BFLY" => ShflMode::Bfly,
                m => return Err(format!("unknown shuffle mode {}", m)),
            },
            pu: f.pdst("pu")?,
        },
        other => return Err(format!("the simulator does not implement {}", other)),
    })
}
