//! The compact executable representation every instruction is pre-decoded
//! into once, at load time.
//!
//! Register operands are resolved to *rows* of the register files: reading
//! the zero register reads a row that is always zero, writing it writes a
//! dump row nobody reads, so the hot path has no RZ/PT special cases.
//! One [`Op`] serves an instruction and its uniform-datapath twin (IADD and
//! UIADD): the executor runs it over 32 lanes or over one uniform value.

/// A 32-bit constant-bank address `c[bank][off]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CAddr {
    pub bank: u8,
    pub off: u16,
}

/// A 32-bit source operand.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Src {
    /// A GPR row (255 reads zero).
    R(u16),
    /// A uniform register slot (63 reads zero).
    U(u8),
    Imm(u32),
    C(CAddr),
}

/// A 64-bit source operand: register pairs are (low row, high row).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Src64 {
    R(u16, u16),
    U(u8, u8),
    Imm(u64),
    C(CAddr),
    /// A 32-bit constant, zero-extended (32-bit operands of 32/64-bit ops).
    C32(CAddr),
}

/// A 32-bit destination (the zero register is a dump row).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dst {
    R(u16),
    U(u8),
}

/// A 64-bit destination pair.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dst64 {
    R(u16, u16),
    U(u8, u8),
}

/// A predicate source, possibly negated.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PIn {
    pub uniform: bool,
    pub idx: u8,
    pub not: bool,
}

impl PIn {
    pub const TRUE: PIn = PIn { uniform: false, idx: 7, not: false };
}

/// A predicate destination (PT/UPT is a dump slot).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PDst {
    pub uniform: bool,
    pub idx: u8,
}

/// Integer comparison.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cmp {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

/// Boolean combination with the extra predicate.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BoolOp {
    And,
    Or,
    Xor,
}

/// Floating-point comparison (DSETP, FSETP).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FCmp {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    Equ,
    Neu,
    Ltu,
    Leu,
    Gtu,
    Geu,
    Nan,
    Num,
}

/// IEEE rounding direction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rnd {
    Rn,
    Rp,
    Rm,
    Rz,
}

/// Sign modifiers of a floating-point source: negate, absolute value.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FMod {
    pub neg: bool,
    pub abs: bool,
}

/// LEA's three modes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LeaMode {
    Lo,
    HiX,
    HiXSx32,
}

/// PRMT's byte-selection modes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PrmtMode {
    Idx,
    F4e,
    B4e,
    Rc8,
    Ecl,
    Ecr,
    Rc16,
}

/// MUFU's functions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MufuFn {
    Cos,
    Sin,
    Ex2,
    Lg2,
    Rcp,
    Rsq,
    Sqrt,
    Tanh,
}

/// MUFU's operand types.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MufuTy {
    F32,
    F64,
    F16x2,
    Bf16x2,
    F16,
    Bf16,
    F64H,
}

/// A memory-access width.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MemTy {
    U8,
    S8,
    U16,
    S16,
    B32,
    B64,
    B128,
}

impl MemTy {
    pub fn bytes(self) -> u32 {
        match self {
            MemTy::U8 | MemTy::S8 => 1,
            MemTy::U16 | MemTy::S16 => 2,
            MemTy::B32 => 4,
            MemTy::B64 => 8,
            MemTy::B128 => 16,
        }
    }
    /// Number of 32-bit registers the value occupies.
    pub fn regs(self) -> usize {
        match self {
            MemTy::B64 => 2,
            MemTy::B128 => 4,
            _ => 1,
        }
    }
    /// Widens a loaded sub-word value to 32 bits.
    #[inline]
    pub fn extend(self, v: u64) -> u32 {
        match self {
            MemTy::S8 => v as u8 as i8 as i32 as u32,
            MemTy::S16 => v as u16 as i16 as i32 as u32,
            _ => v as u32,
        }
    }
}

/// The address space of a load or store.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AddrSpace {
    Global,
    Shared,
    Local,
    /// A 64-bit generic address (LD/ST/ATOM), decoded per access.
    Generic,
}

/// ATOM operations.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AtomOp {
    Add,
    Min,
    Max,
    And,
    Or,
    Xor,
    Exch,
    Cas,
    /// Float add (`.F32`/`.F64`: `wide` tells which), rounded to nearest
    /// under the rules of FADD / DADD.
    Fadd,
}

/// Integer type of conversions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IntTy {
    S32,
    U32,
    S64,
    U64,
}

impl IntTy {
    pub fn wide(self) -> bool {
        matches!(self, IntTy::S64 | IntTy::U64)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VoteMode {
    All,
    Any,
    Eq,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ShflMode {
    Idx,
    Up,
    Down,
    Bfly,
}

/// One pre-decoded operation. Field names follow the documents: `a`, `b`,
/// `c` are Ra/SrcA, SrcB, SrcC; `pp`/`pq` are predicate inputs, `pu`/`pv`
/// predicate outputs.
#[derive(Clone, Debug, PartialEq)]
pub enum Op {
    Nop,
    Iadd {
        d: Dst,
        a: Src,
        b: Src,
        neg_a: bool,
        neg_b: bool,
        x: bool,
        pp: PIn,
        pu: PDst,
    },
    Imad {
        d: Dst,
        a: Src,
        b: Src,
        c: Src,
        neg_c: bool,
        hi: bool,
        x: bool,
        signed: bool,
        pp: PIn,
        pu: PDst,
    },
    ImadWide {
        d: Dst64,
        a: Src,
        b: Src,
        c: Src64,
        neg_c: bool,
        x: bool,
        signed: bool,
        pp: PIn,
        pu: PDst,
    },
    Idp {
        d: Dst,
        a: Src,
        b: Src,
        c: Src,
        four: bool,
        a_signed: bool,
        b_signed: bool,
        hi: bool,
        pp: PIn,
        pu: PDst,
    },
    Imul {
        d: Dst,
        a: Src,
        b: Src,
        neg_b: bool,
        hi: bool,
        signed: bool,
    },
    Lea {
        d: Dst,
        a: Src,
        b: Src,
        c: Src,
        neg_a: bool,
        neg_b: bool,
        mode: LeaMode,
        shift: u8,
        pp: PIn,
        pu: PDst,
    },
    Iabs {
        d: Dst,
        b: Src,
        neg_b: bool,
    },
    Imnmx {
        d: Dst,
        a: Src,
        b: Src,
        neg_a: bool,
        neg_b: bool,
        signed: bool,
        pp: PIn,
    },
    P2r {
        d: Dst,
        a: Src,
        b: Src,
        byte: u8,
        uniform_preds: bool,
    },
    R2p {
        a: Src,
        b: Src,
        byte: u8,
        uniform_preds: bool,
    },
    Isetp {
        a: Src,
        b: Src,
        signed: bool,
        x: bool,
        cmp: Cmp,
        bop: BoolOp,
        pp: PIn,
        pq: PIn,
        pu: PDst,
        pv: PDst,
    },
    Iset {
        d: Dst,
        a: Src,
        b: Src,
        signed: bool,
        x: bool,
        cmp: Cmp,
        bop: BoolOp,
        float: bool,
        pp: PIn,
        pq: PIn,
    },
    Sel {
        d: Dst,
        a: Src,
        b: Src,
        pp: PIn,
    },
    Lop3 {
        d: Dst,
        a: Src,
        b: Src,
        c: Src,
        lut: u8,
        pand: bool,
        pp: PIn,
        pu: PDst,
    },
    Plop3 {
        pu: PDst,
        pa: PIn,
        pb: PIn,
        pc: PIn,
        lut: u8,
    },
    Shf {
        d: Dst,
        a: Src,
        b: Src,
        c: Src,
        right: bool,
        hi: bool,
        wrap: bool,
        signed: bool,
        wide: bool,
    },
    Mov {
        d: Dst,
        s: Src,
    },
    Mov64 {
        d: Dst64,
        s: Src64,
    },
    Prmt {
        d: Dst,
        a: Src,
        b: Src,
        c: Src,
        mode: PrmtMode,
    },
    I2i {
        d: Dst,
        b: Src,
        bits: u8,
        signed: bool,
    },
    I2ip {
        d: Dst,
        a: Src,
        b: Src,
        c: Src,
        bits: u8,
        signed: bool,
        relu: bool,
    },
    R2ur {
        d: u8,
        b: u16,
    },
    Setgpr {
        idx: u8,
        off: i32,
        a: Src,
    },
    Getgpr {
        d: Dst,
        idx: u8,
        off: i32,
    },
    Setugpr {
        idx: u8,
        off: i32,
        b: Src,
    },
    Getugpr {
        d: Dst,
        idx: u8,
        off: i32,
    },
    Popc {
        d: Dst,
        b: Src,
        not: bool,
    },
    Flo {
        d: Dst,
        b: Src,
        not: bool,
        signed: bool,
        sh: bool,
    },
    Brev {
        d: Dst,
        b: Src,
    },
    Bmsk {
        d: Dst,
        a: Src,
        b: Src,
        wrap: bool,
    },
    Sgxt {
        d: Dst,
        a: Src,
        b: Src,
        wrap: bool,
        signed: bool,
    },
    Uldc {
        d: [u8; 4],
        bank: u8,
        off: i32,
        base: u8,
        ty: MemTy,
    },
    Mufu {
        d: Dst,
        b: Src,
        m: FMod,
        hsel: bool,
        f: MufuFn,
        ty: MufuTy,
        sat: bool,
    },
    Dadd {
        d: Dst64,
        a: Src64,
        b: Src64,
        ma: FMod,
        mb: FMod,
        rnd: Rnd,
    },
    Dmul {
        d: Dst64,
        a: Src64,
        b: Src64,
        ma: FMod,
        mb: FMod,
        rnd: Rnd,
    },
    Dfma {
        d: Dst64,
        a: Src64,
        b: Src64,
        c: Src64,
        ma: FMod,
        mb: FMod,
        mc: FMod,
        rnd: Rnd,
    },
    Dmnmx {
        d: Dst64,
        a: Src64,
        b: Src64,
        ma: FMod,
        mb: FMod,
        pp: PIn,
    },
    Dsetp {
        a: Src64,
        b: Src64,
        ma: FMod,
        mb: FMod,
        cmp: FCmp,
        bop: BoolOp,
        pp: PIn,
        pu: PDst,
        pv: PDst,
    },
    // ---- project extensions (docs/isa-extensions.md) ----
    Bra {
        target: u64,
    },
    BraR {
        a: Src64,
    },
    Call {
        d: Dst64,
        target: u64,
    },
    CallR {
        d: Dst64,
        a: Src64,
    },
    Ret {
        a: Src64,
    },
    Exit,
    Bpt {
        code: u16,
    },
    Lepc {
        d: Dst64,
        target: u64,
    },
    Bssy {
        b: u8,
        target: u64,
    },
    Bsync {
        b: u8,
    },
    Break {
        b: u8,
    },
    /// `BMOV{.CLEAR} Rd, Bb`; `clear`: the lane's view is cleared after
    /// the read.
    BmovToR {
        d: Dst,
        b: u8,
        clear: bool,
    },
    BmovToB {
        b: u8,
        s: Src,
    },
    /// LDG/LDS/LDL/LD: `d` are the destination rows (unused ones dump).
    Load {
        space: AddrSpace,
        d: [u16; 4],
        a: Src64,
        ofs: i32,
        ty: MemTy,
    },
    /// STG/STS/STL/ST: `s` are the data rows.
    Store {
        space: AddrSpace,
        s: [u16; 4],
        a: Src64,
        ofs: i32,
        ty: MemTy,
    },
    /// LDC: the offset is signed when a register is given (as for ULDC, E70).
    Ldc {
        d: [u16; 4],
        a: Src,
        bank: u8,
        off: i32,
        ty: MemTy,
    },
    /// ATOM (generic address), ATOMS (`space` Shared: a 32-bit shared
    /// address) and RED (the old value to the dump row).
    Atom {
        space: AddrSpace,
        d: Dst64,
        a: Src64,
        ofs: i32,
        b: Src64,
        c: Src64,
        op: AtomOp,
        wide: bool,
        signed: bool,
    },
    Membar,
    S2r {
        d: Dst,
        sr: u8,
    },
    Bar {
        id: u8,
        count: u16,
    },
    Fadd {
        d: Dst,
        a: Src,
        b: Src,
        ma: FMod,
        mb: FMod,
        rnd: Rnd,
    },
    Fmul {
        d: Dst,
        a: Src,
        b: Src,
        ma: FMod,
        mb: FMod,
        rnd: Rnd,
    },
    Ffma {
        d: Dst,
        a: Src,
        b: Src,
        c: Src,
        ma: FMod,
        mb: FMod,
        mc: FMod,
        rnd: Rnd,
    },
    Fmnmx {
        d: Dst,
        a: Src,
        b: Src,
        ma: FMod,
        mb: FMod,
        nan: bool,
        pp: PIn,
    },
    Fsetp {
        a: Src,
        b: Src,
        ma: FMod,
        mb: FMod,
        cmp: FCmp,
        bop: BoolOp,
        pp: PIn,
        pu: PDst,
        pv: PDst,
    },
    /// FRND on F32 (`f64: false`, low halves only) or F64.
    Frnd {
        d: Dst64,
        b: Src64,
        m: FMod,
        rnd: Rnd,
        f64: bool,
    },
    I2f {
        d: Dst64,
        b: Src64,
        rnd: Rnd,
        to_f64: bool,
        from: IntTy,
    },
    F2i {
        d: Dst64,
        b: Src64,
        rnd: Rnd,
        from_f64: bool,
        to: IntTy,
    },
    F2f {
        d: Dst64,
        b: Src64,
        rnd: Rnd,
        to_f64: bool,
    },
    Vote {
        d: Dst,
        pu: PDst,
        pp: PIn,
        mode: VoteMode,
    },
    Shfl {
        d: Dst,
        a: Src,
        b: Src,
        c: u32,
        mode: ShflMode,
        pu: PDst,
    },
    /// Executing it is a trap (UF2FP: no semantics in the documents).
    Undefined(&'static str),
    /// The bytes did not decode; executing them is a trap. The message is
    /// kept in the program's side table.
    Invalid,
}

impl Op {
    /// The control instructions (branches, calls, convergence barriers,
    /// breakpoint, CTA barrier): the interpreter runs them in
    /// `control::exec`, and a JIT region leaves translated code at them
    /// (except the convergence-barrier ones it runs in place).
    pub(crate) fn is_control(&self) -> bool {
        matches!(
            self,
            Op::Bra { .. }
                | Op::BraR { .. }
                | Op::Call { .. }
                | Op::CallR { .. }
                | Op::Ret { .. }
                | Op::Exit
                | Op::Bpt { .. }
                | Op::Lepc { .. }
                | Op::Bssy { .. }
                | Op::Bsync { .. }
                | Op::Break { .. }
                | Op::BmovToR { .. }
                | Op::BmovToB { .. }
                | Op::Bar { .. }
        )
    }
}
