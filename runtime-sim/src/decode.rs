//! Decode-to-ops: turns a decoded [`Inst`] into the executable [`Op`] once,
//! at load time, through the generated field handles of `ursa_emit::fields`
//! (one per field name, applying to every form that has it: a misspelt
//! field does not compile) and the generated value constants of
//! `ursa_emit::mods`; the operation is told by its generated optype index.
//!
//! Operand fields follow one naming scheme across the descriptions: the
//! destination is `rd`/`urd`, Ra is `ra`/`ura`, SrcB is `rb`/`urb`/`vb`
//! (immediate or constant), SrcC is `rc`/`urc`/`vc`; their modifiers are
//! `<name>.neg`, `.abs`, `.bitnot`, `.hsel`; predicates are `pp`, `pq`
//! (inputs, with `.not`) and `pu`, `pv` (outputs), `upp`… on the uniform
//! datapath.

use ursa_emit::fields as k;
use ursa_emit::tables::{Form, Kind, ISA};
use ursa_emit::typed::{Fld, Mod, ModValue, Raw};
use ursa_emit::{mods, optypes as o, Inst, Suffix};

use crate::ops::*;
use crate::regs::{DUMP_ROW, DUMP_ROW_HI, P_DUMP, UR_DUMP, UR_DUMP_HI, UR_ZERO, ZERO_ROW};

/// A field reader over one instruction.
pub(crate) struct Fields<'a> {
    pub inst: &'a Inst,
    pub def: &'static Form,
}

type R<T> = Result<T, String>;

/// A field handle by name (any form).
pub(crate) type F = Fld<Raw>;

pub(crate) const A: &[F] = &[k::RA, k::URA];
pub(crate) const B: &[F] = &[k::RB, k::URB, k::VB];
pub(crate) const C: &[F] = &[k::RC, k::URC, k::VC];
pub(crate) const D: &[F] = &[k::RD, k::URD];
const PP: &[F] = &[k::PP, k::UPP];
const PQ: &[F] = &[k::PQ, k::UPQ];
const PU: &[F] = &[k::PU, k::UPU];
const PV: &[F] = &[k::PV, k::UPV];

/// A handle whose field holds values of the modifier type `E`: checked by
/// the compiler for a typed handle, when applied for a raw one (a name
/// whose type differs between forms).
pub(crate) trait EnumOf<E> {}
impl<E> EnumOf<E> for Mod<E> {}
impl<E> EnumOf<E> for Raw {}

impl<'a> Fields<'a> {
    pub fn new(inst: &'a Inst) -> Fields<'a> {
        Fields { inst, def: inst.def() }
    }

    #[inline]
    fn index<K>(&self, h: Fld<K>) -> Option<usize> {
        h.place(self.inst.form())
    }

    fn missing<K>(&self, h: Fld<K>) -> String {
        format!("{} has no field `{}`", self.def.name, h.name)
    }

    pub fn has<K>(&self, h: Fld<K>) -> bool {
        self.index(h).is_some()
    }

    /// The raw value of a field.
    pub fn v<K>(&self, h: Fld<K>) -> R<u64> {
        self.index(h).map(|i| self.inst.get_at(i)).ok_or_else(|| self.missing(h))
    }

    /// A flag field (absent means false).
    pub fn flag<K>(&self, h: Fld<K>) -> bool {
        self.index(h).map(|i| self.inst.get_at(i) != 0).unwrap_or(false)
    }

    /// The value of an enumerated field, as its generated type.
    pub fn e<E: ModValue, K: EnumOf<E>>(&self, h: Fld<K>) -> R<E> {
        let i = self.index(h).ok_or_else(|| self.missing(h))?;
        match self.def.fields[i].kind {
            Kind::Enum(t) if t == E::TYPE => Ok(E::from_bits(self.inst.get_at(i))),
            _ => Err(format!("{}: field `{}` is not of type {}", self.def.name, h.name, ISA.types[E::TYPE as usize].name)),
        }
    }

    /// An enumerated field, or `default` when the form lacks it.
    pub fn e_or<E: ModValue, K: EnumOf<E>>(&self, h: Fld<K>, default: E) -> R<E> {
        if self.has(h) {
            self.e(h)
        } else {
            Ok(default)
        }
    }

    /// The first of `names` the form has.
    pub fn pick(&self, names: &[F]) -> R<F> {
        names.iter().copied().find(|n| self.has(*n)).ok_or_else(|| format!("{} has none of the fields {:?}", self.def.name, names))
    }

    /// A modifier of the operand `base` (`NEG`, `ABS`, `BITNOT`, `HSEL`).
    pub fn m(&self, base: F, modifier: Suffix) -> bool {
        base.modifier(modifier).is_some_and(|h| self.flag(h))
    }

    fn kind(&self, h: F) -> R<Kind> {
        let i = self.index(h).ok_or_else(|| self.missing(h))?;
        Ok(self.def.fields[i].kind)
    }

    pub fn src(&self, name: F) -> R<Src> {
        let v = self.v(name)?;
        Ok(match self.kind(name)? {
            Kind::Reg => Src::R(v as u16),
            Kind::UReg => Src::U(v as u8),
            Kind::SImm(n) => Src::Imm(sign_extend(v, n as u32) as u32),
            Kind::UImm(_) | Kind::F32Imm | Kind::PCRel32 => Src::Imm(v as u32),
            Kind::F64Imm => Src::Imm(v as u32),
            Kind::CMem => Src::C(caddr(v)),
            k => return Err(format!("{}: `{}` ({:?}) is not a data operand", self.def.name, name.name, k)),
        })
    }

    /// The first present of `names` as a source.
    pub fn src_of(&self, names: &[F]) -> R<(Src, F)> {
        let n = self.pick(names)?;
        Ok((self.src(n)?, n))
    }

    pub fn src64(&self, name: F) -> R<Src64> {
        let v = self.v(name)?;
        Ok(match self.kind(name)? {
            Kind::Reg => {
                if v == ZERO_ROW as u64 {
                    Src64::R(ZERO_ROW, ZERO_ROW)
                } else {
                    Src64::R(v as u16, v as u16 + 1)
                }
            }
            Kind::UReg => {
                if v == UR_ZERO as u64 {
                    Src64::U(UR_ZERO, UR_ZERO)
                } else {
                    Src64::U(v as u8, v as u8 + 1)
                }
            }
            Kind::F64Imm => Src64::Imm(v << 32),
            Kind::SImm(n) => Src64::Imm(sign_extend(v, n as u32) as u64),
            Kind::UImm(_) | Kind::F32Imm => Src64::Imm(v),
            Kind::CMem => Src64::C(caddr(v)),
            k => return Err(format!("{}: `{}` ({:?}) is not a data operand", self.def.name, name.name, k)),
        })
    }

    pub fn src64_of(&self, names: &[F]) -> R<(Src64, F)> {
        let n = self.pick(names)?;
        Ok((self.src64(n)?, n))
    }

    pub fn dst(&self, name: F) -> R<Dst> {
        let v = self.v(name)?;
        Ok(match self.kind(name)? {
            Kind::Reg => Dst::R(if v == ZERO_ROW as u64 { DUMP_ROW } else { v as u16 }),
            Kind::UReg => Dst::U(if v == UR_ZERO as u64 { UR_DUMP } else { v as u8 }),
            k => return Err(format!("{}: `{}` ({:?}) is not a register", self.def.name, name.name, k)),
        })
    }

    pub fn dst_of(&self, names: &[F]) -> R<Dst> {
        self.dst(self.pick(names)?)
    }

    pub fn dst64(&self, name: F) -> R<Dst64> {
        let v = self.v(name)?;
        Ok(match self.kind(name)? {
            Kind::Reg => {
                if v == ZERO_ROW as u64 {
                    Dst64::R(DUMP_ROW, DUMP_ROW_HI)
                } else {
                    Dst64::R(v as u16, v as u16 + 1)
                }
            }
            Kind::UReg => {
                if v == UR_ZERO as u64 {
                    Dst64::U(UR_DUMP, UR_DUMP_HI)
                } else {
                    Dst64::U(v as u8, v as u8 + 1)
                }
            }
            k => return Err(format!("{}: `{}` ({:?}) is not a register", self.def.name, name.name, k)),
        })
    }

    pub fn dst64_of(&self, names: &[F]) -> R<Dst64> {
        self.dst64(self.pick(names)?)
    }

    /// A predicate input with its `.not` modifier; absent means PT.
    pub fn pin(&self, name: F) -> R<PIn> {
        if !self.has(name) {
            return Ok(PIn::TRUE);
        }
        let uniform = self.kind(name)? == Kind::UPred;
        Ok(PIn { uniform, idx: self.v(name)? as u8, not: self.m(name, Suffix::NOT) })
    }

    /// The first present of `names` as a predicate input; none means PT.
    pub fn pin_of(&self, names: &[F]) -> R<PIn> {
        self.pin(self.pick(names).unwrap_or(names[0]))
    }

    /// A predicate output; absent means PT (discarded).
    pub fn pdst(&self, name: F) -> R<PDst> {
        if !self.has(name) {
            return Ok(PDst { uniform: false, idx: P_DUMP });
        }
        let uniform = self.kind(name)? == Kind::UPred;
        let v = self.v(name)? as u8;
        Ok(PDst { uniform, idx: if v == 7 { P_DUMP } else { v } })
    }

    /// The first present of `names` as a predicate output; none means PT.
    pub fn pdst_of(&self, names: &[F]) -> R<PDst> {
        self.pdst(self.pick(names).unwrap_or(names[0]))
    }
}

pub(crate) fn sign_extend(v: u64, bits: u32) -> i64 {
    let s = 64 - bits;
    ((v << s) as i64) >> s
}

fn caddr(v: u64) -> CAddr {
    CAddr { bank: ((v >> 16) & 63) as u8, off: (v & 0xffff) as u16 }
}

fn cmp_of(c: mods::CompOp) -> R<Cmp> {
    use mods::CompOp as X;
    Ok(match c {
        X::EQ => Cmp::Eq,
        X::NE => Cmp::Ne,
        X::LT => Cmp::Lt,
        X::LE => Cmp::Le,
        X::GT => Cmp::Gt,
        X::GE => Cmp::Ge,
        _ => return Err(format!("unknown comparison {}", c.0)),
    })
}

fn bop_of(b: mods::BoolOp) -> R<BoolOp> {
    use mods::BoolOp as X;
    Ok(match b {
        X::AND => BoolOp::And,
        X::OR => BoolOp::Or,
        X::XOR => BoolOp::Xor,
        _ => return Err(format!("unknown boolean operation {}", b.0)),
    })
}

/// The predicate combination of the float comparisons (`lop`).
pub(crate) fn lop_of(b: mods::LOPOp) -> R<BoolOp> {
    use mods::LOPOp as X;
    Ok(match b {
        X::AND => BoolOp::And,
        X::OR => BoolOp::Or,
        X::XOR => BoolOp::Xor,
        _ => return Err(format!("unknown boolean operation {}", b.0)),
    })
}

pub(crate) fn fcmp_of(c: mods::FCMPOp) -> R<FCmp> {
    use mods::FCMPOp as X;
    Ok(match c {
        X::EQ => FCmp::Eq,
        X::NE => FCmp::Ne,
        X::LT => FCmp::Lt,
        X::LE => FCmp::Le,
        X::GT => FCmp::Gt,
        X::GE => FCmp::Ge,
        X::EQU => FCmp::Equ,
        X::NEU => FCmp::Neu,
        X::LTU => FCmp::Ltu,
        X::LEU => FCmp::Leu,
        X::GTU => FCmp::Gtu,
        X::GEU => FCmp::Geu,
        X::NAN => FCmp::Nan,
        X::NUM => FCmp::Num,
        _ => return Err(format!("unknown float comparison {}", c.0)),
    })
}

pub(crate) fn rnd_of(r: mods::FPRound) -> R<Rnd> {
    use mods::FPRound as X;
    Ok(match r {
        X::RN => Rnd::Rn,
        X::RP => Rnd::Rp,
        X::RM => Rnd::Rm,
        X::RZ => Rnd::Rz,
        _ => return Err(format!("unknown rounding mode {}", r.0)),
    })
}

pub(crate) fn memty_of(t: mods::MEMDType) -> R<MemTy> {
    use mods::MEMDType as X;
    Ok(match t {
        X::U8 => MemTy::U8,
        X::S8 => MemTy::S8,
        X::U16 => MemTy::U16,
        X::S16 => MemTy::S16,
        X::_32 => MemTy::B32,
        X::_64 => MemTy::B64,
        X::_128 => MemTy::B128,
        _ => return Err(format!("unknown memory type {}", t.0)),
    })
}

/// Whether an integer operation is signed (`itype`, S32 when absent).
fn signed_of(f: &Fields) -> R<bool> {
    Ok(f.e_or(k::ITYPE, mods::IType::S32)? == mods::IType::S32)
}

/// Whether a dot-product operand format is signed (`afmt` is 16- or 8-bit
/// by form).
fn fmt_signed(f: &Fields, h: F) -> R<bool> {
    match f.e::<mods::I8Type, _>(h) {
        Ok(t) => Ok(t == mods::I8Type::S8),
        Err(_) => Ok(f.e::<mods::I16Type, _>(h)? == mods::I16Type::S16),
    }
}

/// Pre-decodes one vendor instruction of optype `ot` (its index in
/// `ISA.optypes`); `Ok(None)` if `ot` is not a vendor optype. `Err` carries
/// a message for an instruction the simulator cannot represent (it traps if
/// executed).
pub(crate) fn decode_op(f: &Fields, ot: u16) -> R<Option<Op>> {
    let x = f.e_or(k::EXT, mods::IExt::NoX)? == mods::IExt::X;
    let hi = f.e_or(k::LOHI, mods::LOHI::LO)? == mods::LOHI::HI;
    Ok(Some(match ot {
        o::IADD::ID | o::UIADD::ID => {
            let (b, bn) = f.src_of(B)?;
            let an = f.pick(A)?;
            Op::Iadd {
                d: f.dst_of(D)?,
                a: f.src(an)?,
                b,
                neg_a: f.m(an, Suffix::NEG),
                neg_b: f.m(bn, Suffix::NEG),
                x,
                pp: f.pin_of(PP)?,
                pu: f.pdst_of(PU)?,
            }
        }
        o::IMAD::ID | o::UIMAD::ID => {
            let (c, cn) = f.src_of(C)?;
            Op::Imad {
                d: f.dst_of(D)?,
                a: f.src_of(A)?.0,
                b: f.src_of(B)?.0,
                c,
                neg_c: f.m(cn, Suffix::NEG),
                hi,
                x,
                signed: signed_of(f)?,
                pp: f.pin_of(PP)?,
                pu: f.pdst_of(PU)?,
            }
        }
        o::IMAD_WIDE::ID | o::UIMAD_WIDE::ID => {
            let (c, cn) = f.src64_of(C)?;
            Op::ImadWide {
                d: f.dst64_of(D)?,
                a: f.src_of(A)?.0,
                b: f.src_of(B)?.0,
                c,
                neg_c: f.m(cn, Suffix::NEG),
                x,
                signed: signed_of(f)?,
                pp: f.pin_of(PP)?,
                pu: f.pdst_of(PU)?,
            }
        }
        o::IDP2A::ID | o::IDP4A::ID => Op::Idp {
            d: f.dst_of(D)?,
            a: f.src_of(A)?.0,
            b: f.src_of(B)?.0,
            c: f.src_of(C)?.0,
            four: ot == o::IDP4A::ID,
            a_signed: fmt_signed(f, k::AFMT)?,
            b_signed: fmt_signed(f, k::BFMT.raw())?,
            hi,
            pp: f.pin(k::PP)?,
            pu: f.pdst(k::PU)?,
        },
        o::IMUL::ID | o::UIMUL::ID => {
            let (b, bn) = f.src_of(B)?;
            Op::Imul { d: f.dst_of(D)?, a: f.src_of(A)?.0, b, neg_b: f.m(bn, Suffix::NEG), hi, signed: signed_of(f)? }
        }
        o::LEA::ID | o::ULEA::ID => {
            let an = f.pick(A)?;
            let (b, bn) = f.src_of(B)?;
            let mode = match (hi, f.e_or(k::SX32, mods::LEASX32::NoSX32)? == mods::LEASX32::SX32) {
                (false, _) => LeaMode::Lo,
                (true, false) => LeaMode::HiX,
                (true, true) => LeaMode::HiXSx32,
            };
            Op::Lea {
                d: f.dst_of(D)?,
                a: f.src(an)?,
                b,
                c: f.src_of(C).map(|s| s.0).unwrap_or(Src::Imm(0)),
                neg_a: f.m(an, Suffix::NEG),
                neg_b: f.m(bn, Suffix::NEG),
                mode,
                shift: f.v(k::SHIFTAMT)? as u8,
                pp: f.pin_of(PP)?,
                pu: f.pdst_of(PU)?,
            }
        }
        o::IABS::ID | o::UIABS::ID => {
            let (b, bn) = f.src_of(B)?;
            Op::Iabs { d: f.dst_of(D)?, b, neg_b: f.m(bn, Suffix::NEG) }
        }
        o::IMNMX::ID | o::UIMNMX::ID => {
            let an = f.pick(A)?;
            let (b, bn) = f.src_of(B)?;
            Op::Imnmx {
                d: f.dst_of(D)?,
                a: f.src(an)?,
                b,
                neg_a: f.m(an, Suffix::NEG),
                neg_b: f.m(bn, Suffix::NEG),
                signed: signed_of(f)?,
                pp: f.pin_of(PP)?,
            }
        }
        o::P2R::ID | o::UP2UR::ID => Op::P2r {
            d: f.dst_of(D)?,
            a: f.src_of(A)?.0,
            b: f.src_of(B)?.0,
            byte: byte_of(f.e(k::BSEL)?),
            uniform_preds: ot == o::UP2UR::ID,
        },
        o::R2P::ID | o::UR2UP::ID => {
            let an = f.pick(A)?;
            let bsel = an.modifier(Suffix::BSEL).ok_or_else(|| format!("{} has no byte select of `{}`", f.def.name, an.name))?;
            Op::R2p { a: f.src(an)?, b: f.src_of(B)?.0, byte: byte_of(f.e(bsel)?), uniform_preds: ot == o::UR2UP::ID }
        }
        o::ISETP::ID | o::UISETP::ID => Op::Isetp {
            a: f.src_of(A)?.0,
            b: f.src_of(B)?.0,
            signed: signed_of(f)?,
            x,
            cmp: cmp_of(f.e(k::COMPOP)?)?,
            bop: bop_of(f.e(k::BOOLOP)?)?,
            pp: f.pin_of(PP)?,
            pq: f.pin_of(PQ)?,
            pu: f.pdst_of(PU)?,
            pv: f.pdst_of(PV)?,
        },
        o::ISET::ID => Op::Iset {
            d: f.dst_of(D)?,
            a: f.src_of(A)?.0,
            b: f.src_of(B)?.0,
            signed: signed_of(f)?,
            x,
            cmp: cmp_of(f.e(k::COMPOP)?)?,
            bop: bop_of(f.e(k::BOOLOP)?)?,
            float: f.e(k::BMBF)? == mods::BMBF::BF,
            pp: f.pin(k::PP)?,
            pq: f.pin(k::PQ)?,
        },
        o::SEL::ID | o::USEL::ID => Op::Sel { d: f.dst_of(D)?, a: f.src_of(A)?.0, b: f.src_of(B)?.0, pp: f.pin_of(PP)? },
        o::LOP3::ID | o::ULOP3::ID => Op::Lop3 {
            d: f.dst_of(D)?,
            a: f.src_of(A)?.0,
            b: f.src_of(B)?.0,
            c: f.src_of(C)?.0,
            lut: f.v(k::LUT)? as u8,
            pand: f.e(k::EXBOOL)? == mods::EXBool::PAND,
            pp: f.pin_of(PP)?,
            pu: f.pdst_of(PU)?,
        },
        o::PLOP3::ID | o::UPLOP3::ID => Op::Plop3 {
            pu: f.pdst_of(PU)?,
            pa: f.pin_of(&[k::PA, k::UPA])?,
            pb: f.pin_of(&[k::PB, k::UPB])?,
            pc: f.pin_of(&[k::PC, k::UPC])?,
            lut: f.v(k::LUT)? as u8,
        },
        o::SHF::ID | o::USHF::ID => {
            use mods::SHFDType as T;
            let ty: T = f.e(k::ITYPE)?;
            Op::Shf {
                d: f.dst_of(D)?,
                a: f.src_of(A)?.0,
                b: f.src_of(B)?.0,
                c: f.src_of(C)?.0,
                right: f.e(k::DIRECTION)? == mods::SHFDir::R,
                hi,
                wrap: f.e(k::CWMOD)? == mods::CWMode::WRAP,
                signed: ty == T::S32 || ty == T::S64,
                wide: ty == T::S64 || ty == T::U64,
            }
        }
        o::MOV::ID | o::UMOV::ID => {
            let n = f.pick(B)?;
            if f.e_or(k::WIDTH, mods::MOVW::_32)? == mods::MOVW::_64 {
                Op::Mov64 { d: f.dst64_of(D)?, s: f.src64(n)? }
            } else {
                Op::Mov { d: f.dst_of(D)?, s: f.src(n)? }
            }
        }
        o::PRMT::ID | o::UPRMT::ID => Op::Prmt {
            d: f.dst_of(D)?,
            a: f.src_of(A)?.0,
            b: f.src_of(B)?.0,
            c: f.src_of(C)?.0,
            mode: {
                use mods::PRMTMode as X;
                match f.e(k::MODE)? {
                    X::IDX => PrmtMode::Idx,
                    X::F4E => PrmtMode::F4e,
                    X::B4E => PrmtMode::B4e,
                    X::RC8 => PrmtMode::Rc8,
                    X::ECL => PrmtMode::Ecl,
                    X::ECR => PrmtMode::Ecr,
                    X::RC16 => PrmtMode::Rc16,
                    m => return Err(format!("unknown PRMT mode {}", m.0)),
                }
            },
        },
        o::I2I::ID => {
            use mods::I2IDType as X;
            let (bits, signed) = match f.e(k::DTYPE)? {
                X::S8 => (8, true),
                X::U8 => (8, false),
                X::S16 => (16, true),
                X::U16 => (16, false),
                t => return Err(format!("unknown I2I type {}", t.0)),
            };
            Op::I2i { d: f.dst_of(D)?, b: f.src_of(B)?.0, bits, signed }
        }
        o::I2IP::ID => {
            use mods::I2IPDType as X;
            let (bits, signed) = match f.e(k::DSTTYPE)? {
                X::S2 => (2, true),
                X::U2 => (2, false),
                X::S4 => (4, true),
                X::U4 => (4, false),
                X::S8 => (8, true),
                X::U8 => (8, false),
                X::S16 => (16, true),
                X::U16 => (16, false),
                t => return Err(format!("unknown I2IP type {}", t.0)),
            };
            Op::I2ip {
                d: f.dst_of(D)?,
                a: f.src_of(A)?.0,
                b: f.src_of(B)?.0,
                c: f.src_of(C)?.0,
                bits,
                signed,
                relu: f.e(k::SATRELU)? == mods::SATRelu::SATRELU,
            }
        }
        o::R2UR::ID => {
            let Dst::U(d) = f.dst(k::URD)? else { return Err("R2UR: destination is not uniform".into()) };
            let Src::R(b) = f.src(k::RB)? else { return Err("R2UR: source is not a register".into()) };
            Op::R2ur { d, b }
        }
        o::SETGPR::ID => Op::Setgpr { idx: ureg(f, k::URB)?, off: sign_extend(f.v(k::RIDX)?, 9) as i32, a: f.src(k::RA)? },
        o::GETGPR::ID => Op::Getgpr { d: f.dst(k::RD)?, idx: ureg(f, k::URB)?, off: sign_extend(f.v(k::RIDX)?, 9) as i32 },
        // E71: the index register is `urb`, the value `ura`.
        o::SETUGPR::ID => Op::Setugpr { idx: ureg(f, k::URB)?, off: sign_extend(f.v(k::URIDX)?, 7) as i32, b: f.src(k::URA)? },
        o::GETUGPR::ID => Op::Getugpr { d: f.dst(k::URD)?, idx: ureg(f, k::URB)?, off: sign_extend(f.v(k::URIDX)?, 7) as i32 },
        o::POPC::ID | o::UPOPC::ID => {
            let (b, bn) = f.src_of(B)?;
            Op::Popc { d: f.dst_of(D)?, b, not: f.m(bn, Suffix::BITNOT) }
        }
        o::FLO::ID | o::UFLO::ID => {
            let (b, bn) = f.src_of(B)?;
            Op::Flo { d: f.dst_of(D)?, b, not: f.m(bn, Suffix::BITNOT), signed: signed_of(f)?, sh: f.e(k::SH)? == mods::FLOSH::SH }
        }
        o::BREV::ID | o::UBREV::ID => Op::Brev { d: f.dst_of(D)?, b: f.src_of(B)?.0 },
        o::BMSK::ID | o::UBMSK::ID => {
            Op::Bmsk { d: f.dst_of(D)?, a: f.src_of(A)?.0, b: f.src_of(B)?.0, wrap: f.e(k::CWMODE)? == mods::CWMode::WRAP }
        }
        o::SGXT::ID | o::USGXT::ID => Op::Sgxt {
            d: f.dst_of(D)?,
            a: f.src_of(A)?.0,
            b: f.src_of(B)?.0,
            wrap: f.e(k::CWMODE)? == mods::CWMode::WRAP,
            signed: signed_of(f)?,
        },
        o::ULDC::ID => {
            let ty = memty_of(f.e(k::DTYPE)?)?;
            let v = f.v(k::VB)?;
            let base = ureg(f, k::URA)?;
            let raw = v & 0xffff;
            // With a register the 16-bit offset is signed, without it unsigned.
            let off = if base == UR_ZERO { raw as i32 } else { sign_extend(raw, 16) as i32 };
            let mut d = [UR_DUMP; 4];
            let first = f.v(k::URD)? as u8;
            if first != UR_ZERO {
                for (i, slot) in d.iter_mut().enumerate().take(ty.regs()) {
                    *slot = first + i as u8;
                }
            }
            Op::Uldc { d, bank: ((v >> 16) & 63) as u8, off, base, ty }
        }
        o::MUFU::ID => {
            let (b, bn) = f.src_of(B)?;
            Op::Mufu {
                d: f.dst(k::RD)?,
                b,
                m: FMod { neg: f.m(bn, Suffix::NEG), abs: f.m(bn, Suffix::ABS) },
                hsel: f.m(bn, Suffix::HSEL),
                f: {
                    use mods::MUFUOp as X;
                    match f.e(k::MUFUOP)? {
                        X::COS => MufuFn::Cos,
                        X::SIN => MufuFn::Sin,
                        X::EX2 => MufuFn::Ex2,
                        X::LG2 => MufuFn::Lg2,
                        X::RCP => MufuFn::Rcp,
                        X::RSQ => MufuFn::Rsq,
                        X::SQRT => MufuFn::Sqrt,
                        X::TANH => MufuFn::Tanh,
                        o => return Err(format!("unknown MUFU function {}", o.0)),
                    }
                },
                ty: {
                    use mods::MUFUDType as X;
                    match f.e(k::DTYPE)? {
                        X::F32 => MufuTy::F32,
                        X::F64 => MufuTy::F64,
                        X::F16_V2 => MufuTy::F16x2,
                        X::BF16_V2 => MufuTy::Bf16x2,
                        X::F16 => MufuTy::F16,
                        X::BF16 => MufuTy::Bf16,
                        X::F64H => MufuTy::F64H,
                        t => return Err(format!("unknown MUFU type {}", t.0)),
                    }
                },
                sat: f.e_or(k::SAT, mods::FPSat::NoSAT)? == mods::FPSat::SAT,
            }
        }
        o::DADD::ID | o::DMUL::ID | o::DFMA::ID | o::DMNMX::ID | o::DSETP::ID => {
            let fm = |n: F| FMod { neg: f.m(n, Suffix::NEG), abs: f.m(n, Suffix::ABS) };
            let a = f.src64(k::RA)?;
            let (b, bn) = f.src64_of(B)?;
            let (ma, mb) = (fm(k::RA), fm(bn));
            match ot {
                o::DADD::ID => Op::Dadd { d: f.dst64(k::RD)?, a, b, ma, mb, rnd: rnd_of(f.e(k::RND)?)? },
                o::DMUL::ID => Op::Dmul { d: f.dst64(k::RD)?, a, b, ma, mb, rnd: rnd_of(f.e(k::RND)?)? },
                o::DFMA::ID => {
                    let (c, cn) = f.src64_of(C)?;
                    Op::Dfma { d: f.dst64(k::RD)?, a, b, c, ma, mb, mc: fm(cn), rnd: rnd_of(f.e(k::RND)?)? }
                }
                o::DMNMX::ID => Op::Dmnmx { d: f.dst64(k::RD)?, a, b, ma, mb, pp: f.pin(k::PP)? },
                _ => Op::Dsetp {
                    a,
                    b,
                    ma,
                    mb,
                    cmp: fcmp_of(f.e(k::CMP)?)?,
                    bop: lop_of(f.e(k::LOP)?)?,
                    pp: f.pin(k::PP)?,
                    pu: f.pdst(k::PU)?,
                    pv: f.pdst(k::PV)?,
                },
            }
        }
        o::UF2FP::ID => Op::Undefined("UF2FP"),
        _ => return Ok(None),
    }))
}

fn ureg(f: &Fields, name: F) -> R<u8> {
    Ok(f.v(name)? as u8)
}

fn byte_of(s: mods::BSel) -> u8 {
    match s {
        mods::BSel::B1 => 1,
        mods::BSel::B2 => 2,
        mods::BSel::B3 => 3,
        _ => 0,
    }
}
