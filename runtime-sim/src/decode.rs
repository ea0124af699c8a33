//! Decode-to-ops: turns a decoded [`Inst`] into the executable [`Op`] once,
//! at load time, looking fields up by the names the descriptions give them.
//!
//! Operand fields follow one naming scheme across the descriptions: the
//! destination is `rd`/`urd`, Ra is `ra`/`ura`, SrcB is `rb`/`urb`/`vb`
//! (immediate or constant), SrcC is `rc`/`urc`/`vc`; their modifiers are
//! `<name>.neg`, `.abs`, `.bitnot`, `.hsel`; predicates are `pp`, `pq`
//! (inputs, with `.not`) and `pu`, `pv` (outputs).

use ursa_emit::tables::{Form, Kind, ISA};
use ursa_emit::Inst;

use crate::ops::*;
use crate::regs::{DUMP_ROW, DUMP_ROW_HI, P_DUMP, UR_DUMP, UR_DUMP_HI, UR_ZERO, ZERO_ROW};

/// A field reader over one instruction.
pub(crate) struct Fields<'a> {
    pub inst: &'a Inst,
    pub def: &'static Form,
}

type R<T> = Result<T, String>;

pub(crate) const A: &[&str] = &["ra", "ura"];
pub(crate) const B: &[&str] = &["rb", "urb", "vb"];
pub(crate) const C: &[&str] = &["rc", "urc", "vc"];
pub(crate) const D: &[&str] = &["rd", "urd"];

impl<'a> Fields<'a> {
    pub fn new(inst: &'a Inst) -> Fields<'a> {
        Fields { inst, def: inst.def() }
    }

    fn index(&self, name: &str) -> Option<usize> {
        self.def.field_index(name)
    }

    pub fn has(&self, name: &str) -> bool {
        self.index(name).is_some()
    }

    /// The raw value of a field.
    pub fn v(&self, name: &str) -> R<u64> {
        self.index(name).map(|i| self.inst.get_at(i)).ok_or_else(|| format!("{} has no field `{}`", self.def.name, name))
    }

    /// A flag field (absent means false).
    pub fn flag(&self, name: &str) -> bool {
        self.index(name).map(|i| self.inst.get_at(i) != 0).unwrap_or(false)
    }

    /// The value name of an enumerated field (`"S32"`).
    pub fn e(&self, name: &str) -> R<&'static str> {
        let i = self.index(name).ok_or_else(|| format!("{} has no field `{}`", self.def.name, name))?;
        let f = &self.def.fields[i];
        match f.kind {
            Kind::Enum(t) => ISA.types[t as usize]
                .name_of(self.inst.get_at(i))
                .ok_or_else(|| format!("{}: undefined value of `{}`", self.def.name, name)),
            _ => Err(format!("{}: field `{}` is not enumerated", self.def.name, name)),
        }
    }

    /// An enumerated field, or `default` when the form lacks it.
    pub fn e_or(&self, name: &str, default: &'static str) -> R<&'static str> {
        if self.has(name) {
            self.e(name)
        } else {
            Ok(default)
        }
    }

    /// The first of `names` the form has.
    pub fn pick(&self, names: &[&'static str]) -> R<&'static str> {
        names.iter().copied().find(|n| self.has(n)).ok_or_else(|| format!("{} has none of the fields {:?}", self.def.name, names))
    }

    /// A modifier of the operand `base` (`neg`, `abs`, `bitnot`, `hsel`).
    pub fn m(&self, base: &str, modifier: &str) -> bool {
        self.flag(&format!("{}.{}", base, modifier))
    }

    fn kind(&self, name: &str) -> R<Kind> {
        let i = self.index(name).ok_or_else(|| format!("{} has no field `{}`", self.def.name, name))?;
        Ok(self.def.fields[i].kind)
    }

    pub fn src(&self, name: &str) -> R<Src> {
        let v = self.v(name)?;
        Ok(match self.kind(name)? {
            Kind::Reg => Src::R(v as u16),
            Kind::UReg => Src::U(v as u8),
            Kind::SImm(n) => Src::Imm(sign_extend(v, n as u32) as u32),
            Kind::UImm(_) | Kind::F32Imm | Kind::PCRel32 => Src::Imm(v as u32),
            Kind::F64Imm => Src::Imm(v as u32),
            Kind::CMem => Src::C(caddr(v)),
            k => return Err(format!("{}: `{}` ({:?}) is not a data operand", self.def.name, name, k)),
        })
    }

    /// The first present of `names` as a source.
    pub fn src_of(&self, names: &[&'static str]) -> R<(Src, &'static str)> {
        let n = self.pick(names)?;
        Ok((self.src(n)?, n))
    }

    pub fn src64(&self, name: &str) -> R<Src64> {
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
            k => return Err(format!("{}: `{}` ({:?}) is not a data operand", self.def.name, name, k)),
        })
    }

    pub fn src64_of(&self, names: &[&'static str]) -> R<(Src64, &'static str)> {
        let n = self.pick(names)?;
        Ok((self.src64(n)?, n))
    }

    pub fn dst(&self, name: &str) -> R<Dst> {
        let v = self.v(name)?;
        Ok(match self.kind(name)? {
            Kind::Reg => Dst::R(if v == ZERO_ROW as u64 { DUMP_ROW } else { v as u16 }),
            Kind::UReg => Dst::U(if v == UR_ZERO as u64 { UR_DUMP } else { v as u8 }),
            k => return Err(format!("{}: `{}` ({:?}) is not a register", self.def.name, name, k)),
        })
    }

    pub fn dst_of(&self, names: &[&'static str]) -> R<Dst> {
        self.dst(self.pick(names)?)
    }

    pub fn dst64(&self, name: &str) -> R<Dst64> {
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
            k => return Err(format!("{}: `{}` ({:?}) is not a register", self.def.name, name, k)),
        })
    }

    pub fn dst64_of(&self, names: &[&'static str]) -> R<Dst64> {
        self.dst64(self.pick(names)?)
    }

    /// A predicate input with its `.not` modifier; absent means PT.
    pub fn pin(&self, name: &str) -> R<PIn> {
        if !self.has(name) {
            return Ok(PIn::TRUE);
        }
        let uniform = self.kind(name)? == Kind::UPred;
        Ok(PIn { uniform, idx: self.v(name)? as u8, not: self.m(name, "not") })
    }

    /// A predicate output; absent means PT (discarded).
    pub fn pdst(&self, name: &str) -> R<PDst> {
        if !self.has(name) {
            return Ok(PDst { uniform: false, idx: P_DUMP });
        }
        let uniform = self.kind(name)? == Kind::UPred;
        let v = self.v(name)? as u8;
        Ok(PDst { uniform, idx: if v == 7 { P_DUMP } else { v } })
    }
}

pub(crate) fn sign_extend(v: u64, bits: u32) -> i64 {
    let s = 64 - bits;
    ((v << s) as i64) >> s
}

fn caddr(v: u64) -> CAddr {
    CAddr { bank: ((v >> 16) & 63) as u8, off: (v & 0xffff) as u16 }
}

fn cmp_of(s: &str) -> R<Cmp> {
    Ok(match s {
        "EQ" => Cmp::Eq,
        "NE" => Cmp::Ne,
        "LT" => Cmp::Lt,
        "LE" => Cmp::Le,
        "GT" => Cmp::Gt,
        "GE" => Cmp::Ge,
        _ => return Err(format!("unknown comparison {}", s)),
    })
}

pub(crate) fn bop_of(s: &str) -> R<BoolOp> {
    Ok(match s {
        "AND" => BoolOp::And,
        "OR" => BoolOp::Or,
        "XOR" => BoolOp::Xor,
        _ => return Err(format!("unknown boolean operation {}", s)),
    })
}

pub(crate) fn fcmp_of(s: &str) -> R<FCmp> {
    Ok(match s {
        "EQ" => FCmp::Eq,
        "NE" => FCmp::Ne,
        "LT" => FCmp::Lt,
        "LE" => FCmp::Le,
        "GT" => FCmp::Gt,
        "GE" => FCmp::Ge,
        "EQU" => FCmp::Equ,
        "NEU" => FCmp::Neu,
        "LTU" => FCmp::Ltu,
        "LEU" => FCmp::Leu,
        "GTU" => FCmp::Gtu,
        "GEU" => FCmp::Geu,
        "NAN" => FCmp::Nan,
        "NUM" => FCmp::Num,
        _ => return Err(format!("unknown float comparison {}", s)),
    })
}

pub(crate) fn rnd_of(s: &str) -> R<Rnd> {
    Ok(match s {
        "RN" => Rnd::Rn,
        "RP" => Rnd::Rp,
        "RM" => Rnd::Rm,
        "RZ" => Rnd::Rz,
        _ => return Err(format!("unknown rounding mode {}", s)),
    })
}

pub(crate) fn memty_of(s: &str) -> R<MemTy> {
    Ok(match s {
        "U8" => MemTy::U8,
        "S8" => MemTy::S8,
        "U16" => MemTy::U16,
        "S16" => MemTy::S16,
        "32" => MemTy::B32,
        "64" => MemTy::B64,
        "128" => MemTy::B128,
        _ => return Err(format!("unknown memory type {}", s)),
    })
}

/// Pre-decodes one vendor instruction. `Err` carries a message for an
/// instruction the simulator cannot represent (it traps if executed).
pub(crate) fn decode_op(f: &Fields, optype: &str) -> R<Op> {
    let x = f.e_or("ext", "NoX")? == "X";
    let signed = f.e_or("itype", "S32")? == "S32";
    let hi = f.e_or("lohi", "LO")? == "HI";
    Ok(match optype {
        "IADD" | "UIADD" => {
            let (b, bn) = f.src_of(B)?;
            let an = f.pick(A)?;
            Op::Iadd {
                d: f.dst_of(D)?,
                a: f.src(an)?,
                b,
                neg_a: f.m(an, "neg"),
                neg_b: f.m(bn, "neg"),
                x,
                pp: f.pin(pick_p(f, "pp"))?,
                pu: f.pdst(pick_p(f, "pu"))?,
            }
        }
        "IMAD" | "UIMAD" => {
            let (c, cn) = f.src_of(C)?;
            Op::Imad {
                d: f.dst_of(D)?,
                a: f.src_of(A)?.0,
                b: f.src_of(B)?.0,
                c,
                neg_c: f.m(cn, "neg"),
                hi,
                x,
                signed,
                pp: f.pin(pick_p(f, "pp"))?,
                pu: f.pdst(pick_p(f, "pu"))?,
            }
        }
        "IMAD_WIDE" | "UIMAD_WIDE" => {
            let (c, cn) = f.src64_of(C)?;
            Op::ImadWide {
                d: f.dst64_of(D)?,
                a: f.src_of(A)?.0,
                b: f.src_of(B)?.0,
                c,
                neg_c: f.m(cn, "neg"),
                x,
                signed,
                pp: f.pin(pick_p(f, "pp"))?,
                pu: f.pdst(pick_p(f, "pu"))?,
            }
        }
        "IDP2A" | "IDP4A" => Op::Idp {
            d: f.dst_of(D)?,
            a: f.src_of(A)?.0,
            b: f.src_of(B)?.0,
            c: f.src_of(C)?.0,
            four: optype == "IDP4A",
            a_signed: f.e("afmt")?.starts_with('S'),
            b_signed: f.e("bfmt")?.starts_with('S'),
            hi,
            pp: f.pin("pp")?,
            pu: f.pdst("pu")?,
        },
        "IMUL" | "UIMUL" => {
            let (b, bn) = f.src_of(B)?;
            Op::Imul { d: f.dst_of(D)?, a: f.src_of(A)?.0, b, neg_b: f.m(bn, "neg"), hi, signed }
        }
        "LEA" | "ULEA" => {
            let an = f.pick(A)?;
            let (b, bn) = f.src_of(B)?;
            let mode = match (hi, f.e_or("sx32", "NoSX32")? == "SX32") {
                (false, _) => LeaMode::Lo,
                (true, false) => LeaMode::HiX,
                (true, true) => LeaMode::HiXSx32,
            };
            Op::Lea {
                d: f.dst_of(D)?,
                a: f.src(an)?,
                b,
                c: f.src_of(C).map(|s| s.0).unwrap_or(Src::Imm(0)),
                neg_a: f.m(an, "neg"),
                neg_b: f.m(bn, "neg"),
                mode,
                shift: f.v("shiftamt")? as u8,
                pp: f.pin(pick_p(f, "pp"))?,
                pu: f.pdst(pick_p(f, "pu"))?,
            }
        }
        "IABS" | "UIABS" => {
            let (b, bn) = f.src_of(B)?;
            Op::Iabs { d: f.dst_of(D)?, b, neg_b: f.m(bn, "neg") }
        }
        "IMNMX" | "UIMNMX" => {
            let an = f.pick(A)?;
            let (b, bn) = f.src_of(B)?;
            Op::Imnmx {
                d: f.dst_of(D)?,
                a: f.src(an)?,
                b,
                neg_a: f.m(an, "neg"),
                neg_b: f.m(bn, "neg"),
                signed,
                pp: f.pin(pick_p(f, "pp"))?,
            }
        }
        "P2R" | "UP2UR" => {
            Op::P2r { d: f.dst_of(D)?, a: f.src_of(A)?.0, b: f.src_of(B)?.0, byte: byte_of(f.e("bsel")?), uniform_preds: optype == "UP2UR" }
        }
        "R2P" | "UR2UP" => {
            let an = f.pick(A)?;
            Op::R2p { a: f.src(an)?, b: f.src_of(B)?.0, byte: byte_of(f.e(&format!("{}.bsel", an))?), uniform_preds: optype == "UR2UP" }
        }
        "ISETP" | "UISETP" => Op::Isetp {
            a: f.src_of(A)?.0,
            b: f.src_of(B)?.0,
            signed,
            x,
            cmp: cmp_of(f.e("compop")?)?,
            bop: bop_of(f.e("boolop")?)?,
            pp: f.pin(pick_p(f, "pp"))?,
            pq: f.pin(pick_p(f, "pq"))?,
            pu: f.pdst(pick_p(f, "pu"))?,
            pv: f.pdst(pick_p(f, "pv"))?,
        },
        "ISET" => Op::Iset {
            d: f.dst_of(D)?,
            a: f.src_of(A)?.0,
            b: f.src_of(B)?.0,
            signed,
            x,
            cmp: cmp_of(f.e("compop")?)?,
            bop: bop_of(f.e("boolop")?)?,
            float: f.e("bmbf")? == "BF",
            pp: f.pin("pp")?,
            pq: f.pin("pq")?,
        },
        "SEL" | "USEL" => Op::Sel { d: f.dst_of(D)?, a: f.src_of(A)?.0, b: f.src_of(B)?.0, pp: f.pin(pick_p(f, "pp"))? },
        "LOP3" | "ULOP3" => Op::Lop3 {
            d: f.dst_of(D)?,
            a: f.src_of(A)?.0,
            b: f.src_of(B)?.0,
            c: f.src_of(C)?.0,
            lut: f.v("lut")? as u8,
            pand: f.e("exbool")? == "PAND",
            pp: f.pin(pick_p(f, "pp"))?,
            pu: f.pdst(pick_p(f, "pu"))?,
        },
        "PLOP3" | "UPLOP3" => {
            let p = |n: &str, un: &str| if f.has(n) { f.pin(n) } else { f.pin(un) };
            Op::Plop3 {
                pu: f.pdst(pick_p(f, "pu"))?,
                pa: p("pa", "upa")?,
                pb: p("pb", "upb")?,
                pc: p("pc", "upc")?,
                lut: f.v("lut")? as u8,
            }
        }
        "SHF" | "USHF" => {
            let ty = f.e("itype")?;
            Op::Shf {
                d: f.dst_of(D)?,
                a: f.src_of(A)?.0,
                b: f.src_of(B)?.0,
                c: f.src_of(C)?.0,
                right: f.e("direction")? == "R",
                hi,
                wrap: f.e("cwmod")? == "WRAP",
                signed: ty.starts_with('S'),
                wide: ty.ends_with("64"),
            }
        }
        "MOV" | "UMOV" => {
            let n = f.pick(B)?;
            if f.e_or("width", "32")? == "64" {
                Op::Mov64 { d: f.dst64_of(D)?, s: f.src64(n)? }
            } else {
                Op::Mov { d: f.dst_of(D)?, s: f.src(n)? }
            }
        }
        "PRMT" | "UPRMT" => Op::Prmt {
            d: f.dst_of(D)?,
            a: f.src_of(A)?.0,
            b: f.src_of(B)?.0,
            c: f.src_of(C)?.0,
            mode: match f.e("mode")? {
                "IDX" => PrmtMode::Idx,
                "F4E" => PrmtMode::F4e,
                "B4E" => PrmtMode::B4e,
                "RC8" => PrmtMode::Rc8,
                "ECL" => PrmtMode::Ecl,
                "ECR" => PrmtMode::Ecr,
                "RC16" => PrmtMode::Rc16,
                m => return Err(format!("unknown PRMT mode {}", m)),
            },
        },
        "I2I" => {
            let t = f.e("dtype")?;
            Op::I2i { d: f.dst_of(D)?, b: f.src_of(B)?.0, bits: t[1..].parse().map_err(|_| t.to_string())?, signed: t.starts_with('S') }
        }
        "I2IP" => {
            let t = f.e("dsttype")?;
            Op::I2ip {
                d: f.dst_of(D)?,
                a: f.src_of(A)?.0,
                b: f.src_of(B)?.0,
                c: f.src_of(C)?.0,
                bits: t[1..].parse().map_err(|_| t.to_string())?,
                signed: t.starts_with('S'),
                relu: f.e("satrelu")? == "SATRELU",
            }
        }
        "R2UR" => {
            let Dst::U(d) = f.dst("urd")? else { return Err("R2UR: destination is not uniform".into()) };
            let Src::R(b) = f.src("rb")? else { return Err("R2UR: source is not a register".into()) };
            Op::R2ur { d, b }
        }
        "SETGPR" => Op::Setgpr { idx: ureg(f, "urb")?, off: sign_extend(f.v("ridx")?, 9) as i32, a: f.src("ra")? },
        "GETGPR" => Op::Getgpr { d: f.dst("rd")?, idx: ureg(f, "urb")?, off: sign_extend(f.v("ridx")?, 9) as i32 },
        // E71: the index register is `urb`, the value `ura`.
        "SETUGPR" => Op::Setugpr { idx: ureg(f, "urb")?, off: sign_extend(f.v("uridx")?, 7) as i32, b: f.src("ura")? },
        "GETUGPR" => Op::Getugpr { d: f.dst("urd")?, idx: ureg(f, "urb")?, off: sign_extend(f.v("uridx")?, 7) as i32 },
        "POPC" | "UPOPC" => {
            let (b, bn) = f.src_of(B)?;
            Op::Popc { d: f.dst_of(D)?, b, not: f.m(bn, "bitnot") }
        }
        "FLO" | "UFLO" => {
            let (b, bn) = f.src_of(B)?;
            Op::Flo { d: f.dst_of(D)?, b, not: f.m(bn, "bitnot"), signed, sh: f.e("sh")? == "SH" }
        }
        "BREV" | "UBREV" => Op::Brev { d: f.dst_of(D)?, b: f.src_of(B)?.0 },
        "BMSK" | "UBMSK" => Op::Bmsk { d: f.dst_of(D)?, a: f.src_of(A)?.0, b: f.src_of(B)?.0, wrap: f.e("cwmode")? == "WRAP" },
        "SGXT" | "USGXT" => Op::Sgxt { d: f.dst_of(D)?, a: f.src_of(A)?.0, b: f.src_of(B)?.0, wrap: f.e("cwmode")? == "WRAP", signed },
        "ULDC" => {
            let ty = memty_of(f.e("dtype")?)?;
            let v = f.v("vb")?;
            let base = ureg(f, "ura")?;
            let raw = v & 0xffff;
            // With a register the 16-bit offset is signed, without it unsigned.
            let off = if base == UR_ZERO { raw as i32 } else { sign_extend(raw, 16) as i32 };
            let mut d = [UR_DUMP; 4];
            let first = f.v("urd")? as u8;
            if first != UR_ZERO {
                for (i, slot) in d.iter_mut().enumerate().take(ty.regs()) {
                    *slot = first + i as u8;
                }
            }
            Op::Uldc { d, bank: ((v >> 16) & 63) as u8, off, base, ty }
        }
        "MUFU" => {
            let (b, bn) = f.src_of(B)?;
            Op::Mufu {
                d: f.dst("rd")?,
                b,
                m: FMod { neg: f.m(bn, "neg"), abs: f.m(bn, "abs") },
                hsel: f.m(bn, "hsel"),
                f: match f.e("mufuop")? {
                    "COS" => MufuFn::Cos,
                    "SIN" => MufuFn::Sin,
                    "EX2" => MufuFn::Ex2,
                    "LG2" => MufuFn::Lg2,
                    "RCP" => MufuFn::Rcp,
                    "RSQ" => MufuFn::Rsq,
                    "SQRT" => MufuFn::Sqrt,
                    "TANH" => MufuFn::Tanh,
                    o => return Err(format!("unknown MUFU function {}", o)),
                },
                ty: match f.e("dtype")? {
                    "F32" => MufuTy::F32,
                    "F64" => MufuTy::F64,
                    "F16_V2" => MufuTy::F16x2,
                    "BF16_V2" => MufuTy::Bf16x2,
                    "F16" => MufuTy::F16,
                    "BF16" => MufuTy::Bf16,
                    "F64H" => MufuTy::F64H,
                    t => return Err(format!("unknown MUFU type {}", t)),
                },
                sat: f.e_or("sat", "NoSAT")? == "SAT",
            }
        }
        "DADD" | "DMUL" | "DFMA" | "DMNMX" | "DSETP" => {
            let fm = |n: &str| FMod { neg: f.m(n, "neg"), abs: f.m(n, "abs") };
            let a = f.src64("ra")?;
            let (b, bn) = f.src64_of(B)?;
            let (ma, mb) = (fm("ra"), fm(bn));
            match optype {
                "DADD" => Op::Dadd { d: f.dst64("rd")?, a, b, ma, mb, rnd: rnd_of(f.e("rnd")?)? },
                "DMUL" => Op::Dmul { d: f.dst64("rd")?, a, b, ma, mb, rnd: rnd_of(f.e("rnd")?)? },
                "DFMA" => {
                    let (c, cn) = f.src64_of(C)?;
                    Op::Dfma { d: f.dst64("rd")?, a, b, c, ma, mb, mc: fm(cn), rnd: rnd_of(f.e("rnd")?)? }
                }
                "DMNMX" => Op::Dmnmx { d: f.dst64("rd")?, a, b, ma, mb, pp: f.pin("pp")? },
                _ => Op::Dsetp {
                    a,
                    b,
                    ma,
                    mb,
                    cmp: fcmp_of(f.e("cmp")?)?,
                    bop: bop_of(f.e("lop")?)?,
                    pp: f.pin("pp")?,
                    pu: f.pdst("pu")?,
                    pv: f.pdst("pv")?,
                },
            }
        }
        "UF2FP" => Op::Undefined("UF2FP"),
        other => return Err(format!("the simulator does not implement {}", other)),
    })
}

/// `pp` or its uniform twin `upp`.
fn pick_p(f: &Fields, name: &'static str) -> &'static str {
    if f.has(name) {
        return name;
    }
    match name {
        "pp" => "upp",
        "pq" => "upq",
        "pu" => "upu",
        "pv" => "upv",
        _ => name,
    }
}

fn ureg(f: &Fields, name: &str) -> R<u8> {
    Ok(f.v(name)? as u8)
}

fn byte_of(s: &str) -> u8 {
    match s {
        "B1" => 1,
        "B2" => 2,
        "B3" => 3,
        _ => 0,
    }
}
