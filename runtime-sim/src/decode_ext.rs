//! Decode-to-ops for the project-extension instructions
//! (emit/spec/ext/ext.isa, meaning in docs/isa-extensions.md).

use ursa_emit::fields as k;
use ursa_emit::{mods, optypes as o, Suffix};

use crate::decode::{fcmp_of, lop_of, memty_of, rnd_of, sign_extend, Fields, B, C, F};
use crate::ops::*;
use crate::regs::{DUMP_ROW, DUMP_ROW_HI, UR_DUMP_HI, UR_ZERO, ZERO_ROW};

type R<T> = Result<T, String>;

/// Rows of a destination tuple of `n` registers starting at field `name`.
fn dst_rows(f: &Fields, name: F, n: usize) -> R<[u16; 4]> {
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
fn src_rows(f: &Fields, name: F, n: usize) -> R<[u16; 4]> {
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
fn src_w(f: &Fields, name: F, wide: bool) -> R<Src64> {
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
fn dst_w(f: &Fields, name: F, wide: bool) -> R<Dst64> {
    if wide {
        return f.dst64(name);
    }
    Ok(match f.dst(name)? {
        Dst::R(r) => Dst64::R(r, DUMP_ROW_HI),
        Dst::U(u) => Dst64::U(u, UR_DUMP_HI),
    })
}

fn int_ty(t: mods::IntType) -> R<IntTy> {
    use mods::IntType as X;
    Ok(match t {
        X::S32 => IntTy::S32,
        X::U32 => IntTy::U32,
        X::S64 => IntTy::S64,
        X::U64 => IntTy::U64,
        _ => return Err(format!("unknown integer type {}", t.0)),
    })
}

/// The absolute target of a PC-relative field: `PC + 16 + SEXT(offset)`.
fn target(f: &Fields, pc: u64) -> R<u64> {
    let v = f.v(k::TARGET)?;
    Ok(pc.wrapping_add(16).wrapping_add(sign_extend(v, 32) as u64))
}

fn breg(f: &Fields, name: ursa_emit::typed::Fld<ursa_emit::typed::Mod<mods::BReg>>) -> R<u8> {
    Ok(f.v(name)? as u8)
}

/// Pre-decodes one extension instruction of optype `ot` (at `pc`, for
/// PC-relative targets); `Ok(None)` if `ot` is not an extension optype.
pub(crate) fn decode_ext(f: &Fields, ot: u16, pc: u64) -> R<Option<Op>> {
    let fm = |n: F| FMod { neg: f.m(n, Suffix::NEG), abs: f.m(n, Suffix::ABS) };
    let space = |ot: u16| match ot {
        o::LDG::ID | o::STG::ID => AddrSpace::Global,
        o::LDS::ID | o::STS::ID => AddrSpace::Shared,
        o::LDL::ID | o::STL::ID => AddrSpace::Local,
        _ => AddrSpace::Generic,
    };
    Ok(Some(match ot {
        // UBRA is BRA under a uniform guard (group EXTU).
        o::BRA::ID | o::UBRA::ID => {
            if f.has(k::TARGET) {
                Op::Bra { target: target(f, pc)? }
            } else {
                Op::BraR { a: f.src64(k::RA)? }
            }
        }
        o::CALL::ID => {
            if f.has(k::TARGET) {
                Op::Call { d: f.dst64(k::RD)?, target: target(f, pc)? }
            } else {
                Op::CallR { d: f.dst64(k::RD)?, a: f.src64(k::RA)? }
            }
        }
        o::RET::ID => Op::Ret { a: f.src64(k::RA)? },
        o::EXIT::ID => Op::Exit,
        o::NOP::ID => Op::Nop,
        o::MEMBAR::ID => Op::Membar,
        o::BPT::ID => Op::Bpt { code: f.v(k::CODE)? as u16 },
        o::LEPC::ID => Op::Lepc { d: f.dst64(k::RD)?, target: target(f, pc)? },
        o::BSSY::ID => Op::Bssy { b: breg(f, k::BD)?, target: target(f, pc)? },
        o::BSYNC::ID => Op::Bsync { b: breg(f, k::BB)? },
        o::BREAK::ID => Op::Break { b: breg(f, k::BD)? },
        o::BMOV::ID => {
            if f.has(k::RD) {
                Op::BmovToR { d: f.dst(k::RD)?, b: breg(f, k::BB)?, clear: f.e::<mods::BmovMode, _>(k::MODE)? == mods::BmovMode::CLEAR }
            } else {
                Op::BmovToB { b: breg(f, k::BD)?, s: f.src(k::RB)? }
            }
        }
        o::LDG::ID | o::LDS::ID | o::LDL::ID | o::LD::ID => {
            let ty = memty_of(f.e(k::DTYPE)?)?;
            let sp = space(ot);
            let a = match sp {
                AddrSpace::Shared | AddrSpace::Local => src_w(f, k::RA, false)?,
                _ => f.src64(k::RA)?,
            };
            Op::Load { space: sp, d: dst_rows(f, k::RD, ty.regs())?, a, ofs: sign_extend(f.v(k::OFS)?, 24) as i32, ty }
        }
        o::STG::ID | o::STS::ID | o::STL::ID | o::ST::ID => {
            let ty = memty_of(f.e(k::DTYPE)?)?;
            let sp = space(ot);
            let a = match sp {
                AddrSpace::Shared | AddrSpace::Local => src_w(f, k::RA, false)?,
                _ => f.src64(k::RA)?,
            };
            Op::Store { space: sp, s: src_rows(f, k::RB, ty.regs())?, a, ofs: sign_extend(f.v(k::OFS)?, 24) as i32, ty }
        }
        o::LDC::ID => {
            let ty = memty_of(f.e(k::DTYPE)?)?;
            let v = f.v(k::VB)?;
            let a = f.src(k::RA)?;
            let raw = v & 0xffff;
            let off = if a == Src::R(ZERO_ROW) { raw as i32 } else { sign_extend(raw, 16) as i32 };
            Op::Ldc { d: dst_rows(f, k::RD, ty.regs())?, a, bank: ((v >> 16) & 63) as u8, off, ty }
        }
        o::ATOM::ID | o::ATOMS::ID | o::RED::ID => {
            let (wide, signed, float) = match f.e(k::ITYPE)? {
                mods::AtomType::S32 => (false, true, false),
                mods::AtomType::U32 => (false, false, false),
                mods::AtomType::S64 => (true, true, false),
                mods::AtomType::U64 => (true, false, false),
                mods::AtomType::F32 => (false, false, true),
                mods::AtomType::F64 => (true, false, true),
                x => return Err(format!("unknown atomic type {}", x.0)),
            };
            let shared = ot == o::ATOMS::ID;
            Op::Atom {
                space: if shared { AddrSpace::Shared } else { AddrSpace::Generic },
                // RED returns nothing: the old value goes to the dump rows.
                d: if ot == o::RED::ID { Dst64::R(DUMP_ROW, DUMP_ROW_HI) } else { dst_w(f, k::RD, wide)? },
                a: if shared { src_w(f, k::RA, false)? } else { f.src64(k::RA)? },
                ofs: sign_extend(f.v(k::OFS)?, 24) as i32,
                b: src_w(f, k::RB, wide)?,
                c: if ot == o::RED::ID { Src64::R(ZERO_ROW, ZERO_ROW) } else { src_w(f, k::RC, wide)? },
                op: match f.e(k::OP)? {
                    mods::AtomOp::ADD if float => AtomOp::Fadd,
                    _ if float => return Err("float atomics are ADD only".to_string()),
                    mods::AtomOp::ADD => AtomOp::Add,
                    mods::AtomOp::MIN => AtomOp::Min,
                    mods::AtomOp::MAX => AtomOp::Max,
                    mods::AtomOp::AND => AtomOp::And,
                    mods::AtomOp::OR => AtomOp::Or,
                    mods::AtomOp::XOR => AtomOp::Xor,
                    mods::AtomOp::EXCH => AtomOp::Exch,
                    mods::AtomOp::CAS => AtomOp::Cas,
                    x => return Err(format!("unknown atomic operation {}", x.0)),
                },
                wide,
                signed,
            }
        }
        o::S2R::ID | o::S2UR::ID => Op::S2r { d: f.dst(if ot == o::S2R::ID { k::RD } else { k::URD })?, sr: f.v(k::SR)? as u8 },
        o::BAR::ID => Op::Bar { id: f.v(k::BARID)? as u8, count: f.v(k::COUNT)? as u16 },
        o::FADD::ID | o::FMUL::ID | o::FFMA::ID => {
            let (b, bn) = f.src_of(B)?;
            let (d, a, ma, mb, rnd) = (f.dst(k::RD)?, f.src(k::RA)?, fm(k::RA), fm(bn), rnd_of(f.e(k::RND)?)?);
            match ot {
                o::FADD::ID => Op::Fadd { d, a, b, ma, mb, rnd },
                o::FMUL::ID => Op::Fmul { d, a, b, ma, mb, rnd },
                _ => {
                    let (c, cn) = f.src_of(C)?;
                    Op::Ffma { d, a, b, c, ma, mb, mc: fm(cn), rnd }
                }
            }
        }
        o::FMNMX::ID => {
            let (b, bn) = f.src_of(B)?;
            Op::Fmnmx {
                d: f.dst(k::RD)?,
                a: f.src(k::RA)?,
                b,
                ma: fm(k::RA),
                mb: fm(bn),
                nan: f.e(k::NANMODE)? == mods::FMnMxNaN::NAN,
                pp: f.pin(k::PP)?,
            }
        }
        o::FSETP::ID => {
            let (b, bn) = f.src_of(B)?;
            Op::Fsetp {
                a: f.src(k::RA)?,
                b,
                ma: fm(k::RA),
                mb: fm(bn),
                cmp: fcmp_of(f.e(k::CMP)?)?,
                bop: lop_of(f.e(k::LOP)?)?,
                pp: f.pin(k::PP)?,
                pu: f.pdst(k::PU)?,
                pv: f.pdst(k::PV)?,
            }
        }
        o::FRND::ID => {
            let wide = f.e(k::FTYPE)? == mods::FType::F64;
            let bn = f.pick(B)?;
            Op::Frnd { d: dst_w(f, k::RD, wide)?, b: src_w(f, bn, wide)?, m: fm(bn), rnd: rnd_of(f.e(k::RND)?)?, f64: wide }
        }
        o::I2F::ID => {
            let from = int_ty(f.e(k::ITYPE)?)?;
            let to_f64 = f.e(k::FTYPE)? == mods::FType::F64;
            Op::I2f { d: dst_w(f, k::RD, to_f64)?, b: src_w(f, f.pick(B)?, from.wide())?, rnd: rnd_of(f.e(k::RND)?)?, to_f64, from }
        }
        o::F2I::ID => {
            let to = int_ty(f.e(k::ITYPE)?)?;
            let from_f64 = f.e(k::FTYPE)? == mods::FType::F64;
            Op::F2i { d: dst_w(f, k::RD, to.wide())?, b: src_w(f, f.pick(B)?, from_f64)?, rnd: rnd_of(f.e(k::RND)?)?, from_f64, to }
        }
        o::F2F::ID => {
            let to_f64 = f.e::<mods::FType, _>(k::DTYPE)? == mods::FType::F64;
            let from_f64 = f.e(k::SRCTYPE)? == mods::FType::F64;
            Op::F2f { d: dst_w(f, k::RD, to_f64)?, b: src_w(f, f.pick(B)?, from_f64)?, rnd: rnd_of(f.e(k::RND)?)?, to_f64 }
        }
        o::VOTE::ID => Op::Vote {
            d: f.dst(k::RD)?,
            pu: f.pdst(k::PU)?,
            pp: f.pin(k::PP)?,
            mode: match f.e::<mods::VoteMode, _>(k::MODE)? {
                mods::VoteMode::ALL => VoteMode::All,
                mods::VoteMode::ANY => VoteMode::Any,
                mods::VoteMode::EQ => VoteMode::Eq,
                m => return Err(format!("unknown vote mode {}", m.0)),
            },
        },
        o::SHFL::ID => Op::Shfl {
            d: f.dst(k::RD)?,
            a: f.src(k::RA)?,
            b: f.src_of(B)?.0,
            c: f.v(k::VC)? as u32,
            mode: match f.e::<mods::ShflMode, _>(k::MODE)? {
                mods::ShflMode::IDX => ShflMode::Idx,
                mods::ShflMode::UP => ShflMode::Up,
                mods::ShflMode::DOWN => ShflMode::Down,
                mods::ShflMode::BFLY => ShflMode::Bfly,
                m => return Err(format!("unknown shuffle mode {}", m.0)),
            },
            pu: f.pdst(k::PU)?,
        },
        _ => return Ok(None),
    }))
}
