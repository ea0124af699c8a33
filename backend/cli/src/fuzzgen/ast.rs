//! The generator's program form: functions over typed mutable variables.
//!
//! Every variable is defined at the function's entry (a parameter or a
//! constant), so any statement can be deleted and the program stays valid;
//! that is what makes delta reduction simple. [`super::build`] turns a
//! program into CLIF with `cranelift-frontend` (which builds the SSA form and
//! block parameters).

use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{types, Type};

/// The generator's scalar types (its vector types: [`super::vectors::VTYPES`]). `I128` is last: the entry function's parameters
/// (the host passes them as 64-bit patterns) take only the first four.
pub const TYPES: [Type; 5] = [types::I8, types::I16, types::I32, types::I64, types::I128];

/// A variable index into [`Func::vars`].
pub type Var = usize;

/// Size of a function's stack slot when it has one (bytes).
pub const SLOT_SIZE: u32 = 64;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BinOp {
    Iadd,
    Isub,
    Imul,
    Umulhi,
    Smulhi,
    Band,
    Bor,
    Bxor,
    Ishl,
    Ushr,
    Sshr,
    Rotl,
    Rotr,
    Umin,
    Umax,
    Smin,
    Smax,
    Udiv,
    Sdiv,
    Urem,
    Srem,
}

impl BinOp {
    pub const ALL: [BinOp; 21] = [
        BinOp::Iadd,
        BinOp::Isub,
        BinOp::Imul,
        BinOp::Umulhi,
        BinOp::Smulhi,
        BinOp::Band,
        BinOp::Bor,
        BinOp::Bxor,
        BinOp::Ishl,
        BinOp::Ushr,
        BinOp::Sshr,
        BinOp::Rotl,
        BinOp::Rotr,
        BinOp::Umin,
        BinOp::Umax,
        BinOp::Smin,
        BinOp::Smax,
        BinOp::Udiv,
        BinOp::Sdiv,
        BinOp::Urem,
        BinOp::Srem,
    ];
    /// Shifts and rotates: the second operand may have any integer type.
    pub fn is_shift(self) -> bool {
        matches!(self, BinOp::Ishl | BinOp::Ushr | BinOp::Sshr | BinOp::Rotl | BinOp::Rotr)
    }
    pub fn is_div(self) -> bool {
        matches!(self, BinOp::Udiv | BinOp::Sdiv | BinOp::Urem | BinOp::Srem)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ImmOp {
    IaddImm,
    ImulImm,
    BandImm,
    BorImm,
    BxorImm,
    IshlImm,
    UshrImm,
    SshrImm,
    RotlImm,
    RotrImm,
}

impl ImmOp {
    pub const ALL: [ImmOp; 10] = [
        ImmOp::IaddImm,
        ImmOp::ImulImm,
        ImmOp::BandImm,
        ImmOp::BorImm,
        ImmOp::BxorImm,
        ImmOp::IshlImm,
        ImmOp::UshrImm,
        ImmOp::SshrImm,
        ImmOp::RotlImm,
        ImmOp::RotrImm,
    ];
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UnOp {
    Ineg,
    Iabs,
    Bnot,
    Clz,
    Ctz,
    Cls,
    Popcnt,
    Bitrev,
    /// Not on i8.
    Bswap,
}

impl UnOp {
    pub const ALL: [UnOp; 9] =
        [UnOp::Ineg, UnOp::Iabs, UnOp::Bnot, UnOp::Clz, UnOp::Ctz, UnOp::Cls, UnOp::Popcnt, UnOp::Bitrev, UnOp::Bswap];
}

/// Conversions: the destination type is the destination variable's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ConvOp {
    /// To a wider type.
    Uextend,
    Sextend,
    /// To a narrower type.
    Ireduce,
    /// To any type.
    Bmask,
}

/// `(value, i8 overflow flag)` forms.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OvfOp {
    UaddOverflow,
    SaddOverflow,
    UsubOverflow,
    SsubOverflow,
    UmulOverflow,
    SmulOverflow,
}

impl OvfOp {
    pub const ALL: [OvfOp; 6] =
        [OvfOp::UaddOverflow, OvfOp::SaddOverflow, OvfOp::UsubOverflow, OvfOp::SsubOverflow, OvfOp::UmulOverflow, OvfOp::SmulOverflow];
}

/// `(value, i8 flag)` forms with an i8 carry/borrow in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CarryOp {
    UaddOverflowCin,
    SaddOverflowCin,
    UsubOverflowBin,
    SsubOverflowBin,
}

impl CarryOp {
    pub const ALL: [CarryOp; 4] = [CarryOp::UaddOverflowCin, CarryOp::SaddOverflowCin, CarryOp::UsubOverflowBin, CarryOp::SsubOverflowBin];
}

/// The width of a memory access and how a narrow load extends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MemKind {
    /// The variable's own width.
    Full,
    /// 8, 16 or 32 bits; `signed` only matters for loads.
    Narrow { bits: u8, signed: bool },
}

/// A stack-slot address: `stack_addr.{i32|i64} ss0 + off`, plus (when
/// `index` is set) a variable masked to stay inside the slot and aligned.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Addr {
    pub wide: bool,
    pub off: u32,
    pub index: Option<Var>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Stmt {
    Const {
        dst: Var,
        val: u128,
    },
    Un {
        op: UnOp,
        dst: Var,
        a: Var,
    },
    Bin {
        op: BinOp,
        dst: Var,
        a: Var,
        b: Var,
    },
    Imm {
        op: ImmOp,
        dst: Var,
        a: Var,
        imm: i64,
    },
    Icmp {
        cc: IntCC,
        dst: Var,
        a: Var,
        b: Var,
    },
    IcmpImm {
        cc: IntCC,
        dst: Var,
        a: Var,
        imm: i64,
    },
    Select {
        spectre: bool,
        dst: Var,
        c: Var,
        a: Var,
        b: Var,
    },
    Bitselect {
        dst: Var,
        c: Var,
        a: Var,
        b: Var,
    },
    Conv {
        op: ConvOp,
        dst: Var,
        a: Var,
    },
    Ovf {
        op: OvfOp,
        dst: Var,
        flag: Var,
        a: Var,
        b: Var,
    },
    Carry {
        op: CarryOp,
        dst: Var,
        flag: Var,
        a: Var,
        b: Var,
        cin: Var,
    },
    /// `uadd_overflow_trap` (i32 and i64).
    AddTrap {
        dst: Var,
        a: Var,
        b: Var,
    },
    /// `trapz` (`nz` false) or `trapnz`.
    TrapIf {
        nz: bool,
        c: Var,
    },
    /// `trap` (a block terminator; what follows it is unreachable code).
    Trap,
    Store {
        src: Var,
        addr: Addr,
        kind: MemKind,
        big: bool,
    },
    Load {
        dst: Var,
        addr: Addr,
        kind: MemKind,
        big: bool,
    },
    /// A call of a later function of the program (no recursion); `indirect`:
    /// `call_indirect` through its `func_addr`.
    Call {
        callee: usize,
        args: Vec<Var>,
        rets: Vec<Var>,
        indirect: bool,
    },
    /// A diamond.
    If {
        c: Var,
        then: Vec<Stmt>,
        els: Vec<Stmt>,
    },
    /// A do-while loop run `trips` times (a hidden counter).
    Loop {
        trips: u32,
        body: Vec<Stmt>,
    },
    /// `br_table` on an i32 variable; out-of-range indices take `default`.
    Switch {
        idx: Var,
        cases: Vec<Vec<Stmt>>,
        default: Vec<Stmt>,
    },
    /// A vector statement ([`super::vectors`]).
    Vector(super::vectors::VStmt),
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Func {
    /// The variables' types; the first `nparams` are the parameters.
    pub vars: Vec<Type>,
    pub nparams: usize,
    /// The entry value of each non-parameter variable (index `v - nparams`).
    pub inits: Vec<u128>,
    /// Does the function have a stack slot (zero-filled at entry)?
    pub slot: bool,
    pub body: Vec<Stmt>,
    pub rets: Vec<Var>,
}

impl Func {
    pub fn params(&self) -> &[Type] {
        &self.vars[..self.nparams]
    }
    pub fn returns(&self) -> Vec<Type> {
        self.rets.iter().map(|&v| self.vars[v]).collect()
    }
}

/// Functions `0..n`; function 0 is the one run; function `i` only calls
/// functions `j > i`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Program {
    pub funcs: Vec<Func>,
}

/// The CLIF name of function `k`.
pub fn func_name(k: usize) -> String {
    format!("fz{}", k)
}

/// Counts the statements (nested ones included).
pub fn count_stmts(body: &[Stmt]) -> usize {
    body.iter()
        .map(|s| {
            1 + match s {
                Stmt::If { then, els, .. } => count_stmts(then) + count_stmts(els),
                Stmt::Loop { body, .. } => count_stmts(body),
                Stmt::Switch { cases, default, .. } => cases.iter().map(|c| count_stmts(c)).sum::<usize>() + count_stmts(default),
                _ => 0,
            }
        })
        .sum()
}

impl Program {
    pub fn size(&self) -> usize {
        self.funcs.iter().map(|f| count_stmts(&f.body) + f.vars.len()).sum()
    }
}
