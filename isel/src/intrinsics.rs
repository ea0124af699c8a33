//! Kernel intrinsics: calls to reserved `%ursa_*` functions that the compiler
//! replaces with the machine's own instructions (`docs/kernels.md`).
//!
//! | CLIF declaration | lowered to |
//! |---|---|
//! | `%ursa_tid_x/y/z() -> i32` | `S2R Rd, SR_TID.X/Y/Z` |
//! | `%ursa_ctaid_x/y/z() -> i32` | `S2R Rd, SR_CTAID.X/Y/Z` |
//! | `%ursa_ntid_x/y/z() -> i32` | `MOV Rd, c[0x0][0x0/0x4/0x8]` (the launch's CTA size, `docs/abi.md`) |
//! | `%ursa_nctaid_x/y/z() -> i32` | `MOV Rd, c[0x0][0xc/0x10/0x14]` |
//! | `%ursa_laneid() -> i32` | `S2R Rd, SR_LANEID` |
//! | `%ursa_barrier()` | `BAR.SYNC 0x0` (every thread of the CTA) |
//! | `%ursa_clock() -> i32`, `%ursa_clock64() -> i64` | `S2R Rd, SR_CLOCKLO`; for 64 bits `SR_CLOCKHI`, `SR_CLOCKLO`, `SR_CLOCKHI` again and the low word zeroed if the high word changed |
//! | `%ursa_shfl_idx/up/down/bfly(i32 v, i32 b) -> i32`, also `_i32`, `_i64`, `_f32`, `_f64` (v and result of that type) | `SHFL.IDX/UP/DOWN/BFLY Rd, Rv, Rb, c` over the full warp (`c` = 0x1f, 0x0 for UP), one per 32-bit word; `b` may be a constant |
//! | `%ursa_vote_any/all(i8) -> i8`, also `_i8`, `_i16`, `_i32`, `_i64` (argument of that type) | `ISETP.NE P, x, 0` + `VOTE.ANY/ALL RZ, Pu, P` + `SEL Rd, RZ, 0x1, !Pu` |
//! | `%ursa_ballot(i8) -> i32`, also `_i8` … `_i64` | `ISETP.NE P, x, 0` + `VOTE.ANY Rd, PT, P` (the mask of lanes where x ≠ 0) |
//! | `%ursa_fast_exp2/log2/sin/cos/rcp/rsqrt/sqrt/tanh_f32(f32) -> f32` | `MUFU.EX2/LG2/SIN/COS/RCP/RSQ/SQRT/TANH` |
//! | `%ursa_fast_exp/exp10/log/log10/tan_f32(f32) -> f32`, `%ursa_fast_pow/div_f32(f32, f32) -> f32` | CUDA's `__expf` family: `MUFU` with an `FMUL` by a constant, or two `MUFU`s and an `FMUL` |
//! | `%ursa_atomic_OP_relaxed_i32/i64(i64 p, T x) -> T` (OP = add, sub, and, or, xor, xchg, umin, umax, smin, smax), `%ursa_atomic_cas_relaxed_i32/i64(i64 p, T e, T n) -> T` | `ATOM` (`ATOMS` on a shared address, `RED` when the result is unused) without fences |
//! | `%ursa_atomic_fadd_f32/f64(i64 p, F x) -> F` | `ATOM.ADD.F32/F64` (likewise `ATOMS`, `RED`), relaxed |
//!
//! The names `%ursa_rt_*` ([`RUNTIME_ROUTINES`]) are the routines of Ursa's
//! runtime library, which the compiler calls (64-bit division,
//! `docs/division.md`) and defines in every object that calls them: a call
//! of one is an ordinary call, but only the compiler writes it.
//!
//! Any other `%ursa_` name, or one of these with another signature, is an
//! error naming the call; so is a function defined under a reserved name, or
//! `func_addr` of one ([`check_function_name`]).

use std::fmt;
use std::sync::OnceLock;

use cranelift_codegen::ir::{types, AtomicRmwOp, Signature, Type};
use ursa_emit::mods::{MUFUOp, SReg, ShflMode, VoteMode};

/// Prefix of the reserved names.
pub const PREFIX: &str = "ursa_";

/// A fast-math function of `f32` (`%ursa_fast_NAME_f32`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FastMath {
    /// One `MUFU` of the argument.
    Mufu(MUFUOp),
    /// `MUFU.EX2` of the argument times the constant (`exp`: log2(e),
    /// `exp10`: log2(10)).
    Ex2Scaled(u32),
    /// `MUFU.LG2` of the argument, times the constant (`log`: ln 2,
    /// `log10`: log10(2)).
    Lg2Scaled(u32),
    /// `MUFU.SIN(x) × MUFU.RCP(MUFU.COS(x))`.
    Tan,
    /// `MUFU.EX2(y × MUFU.LG2(x))` of two arguments.
    Pow,
    /// `x × MUFU.RCP(y)` of two arguments.
    Div,
}

impl FastMath {
    /// Arguments (1 or 2 f32s).
    pub fn arity(self) -> usize {
        if matches!(self, FastMath::Pow | FastMath::Div) {
            2
        } else {
            1
        }
    }
}

/// An atomic read-modify-write through an intrinsic: relaxed (no fences).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AtomicIntr {
    /// `atomic_rmw OP` on `i32`/`i64` (every op but `nand`).
    Rmw(AtomicRmwOp),
    /// `atomic_cas`.
    Cas,
    /// Float add (`f32`/`f64`).
    Fadd,
}

/// What an intrinsic reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Intrinsic {
    /// A special register (`SR_TID_X`).
    Special(SReg),
    /// A 32-bit word of constant bank 0 at this byte offset.
    Const0(u32),
    /// `BAR.SYNC 0`.
    Barrier,
    /// The cycle counter, 32 (`SR_CLOCKLO`) or 64 bits.
    Clock { wide: bool },
    /// A warp shuffle, by its mode (`IDX`, `UP`, `DOWN`, `BFLY`), of a value
    /// of this type (`i32`, `i64`, `f32`, `f64`).
    Shuffle(ShflMode, Type),
    /// A vote, by its mode (`ANY`, `ALL`), of a non-zero test of an integer
    /// of this type: an i8 0 or 1.
    Vote(VoteMode, Type),
    /// The mask of lanes whose argument (an integer of this type) is non-zero.
    Ballot(Type),
    /// A fast-math function of `f32`.
    Fast(FastMath),
    /// A relaxed atomic on memory of this type.
    Atomic(AtomicIntr, Type),
}

impl Intrinsic {
    /// (parameter types, result types) of the declaration it must have.
    fn signature(self) -> (Vec<Type>, Vec<Type>) {
        use types::{F32, I32, I64, I8};
        match self {
            Intrinsic::Special(_) | Intrinsic::Const0(_) => (vec![], vec![I32]),
            Intrinsic::Barrier => (vec![], vec![]),
            Intrinsic::Clock { wide } => (vec![], vec![if wide { I64 } else { I32 }]),
            Intrinsic::Shuffle(_, t) => (vec![t, I32], vec![t]),
            Intrinsic::Vote(_, t) => (vec![t], vec![I8]),
            Intrinsic::Ballot(t) => (vec![t], vec![I32]),
            Intrinsic::Fast(m) => (vec![F32; m.arity()], vec![F32]),
            Intrinsic::Atomic(AtomicIntr::Cas, t) => (vec![I64, t, t], vec![t]),
            Intrinsic::Atomic(_, t) => (vec![I64, t], vec![t]),
        }
    }
}

/// log2(e), log2(10), ln(2), log10(2) as binary32 bit patterns.
const LOG2_E: u32 = 0x3FB8_AA3B;
const LOG2_10: u32 = 0x4054_9A78;
const LN_2: u32 = 0x3F31_7218;
const LOG10_2: u32 = 0x3E9A_209B;

/// Every intrinsic by its name (without `%`).
fn table() -> &'static [(String, Intrinsic)] {
    static TABLE: OnceLock<Vec<(String, Intrinsic)>> = OnceLock::new();
    TABLE.get_or_init(|| {
        let mut t: Vec<(String, Intrinsic)> = Vec::new();
        let mut add = |n: &str, i: Intrinsic| t.push((format!("{}{}", PREFIX, n), i));
        for (axis, k) in [("x", 0u32), ("y", 1), ("z", 2)] {
            let sr = |base: SReg| SReg(base.0 + k);
            add(&format!("tid_{}", axis), Intrinsic::Special(sr(SReg::SR_TID_X)));
            add(&format!("ctaid_{}", axis), Intrinsic::Special(sr(SReg::SR_CTAID_X)));
            add(&format!("ntid_{}", axis), Intrinsic::Const0(4 * k));
            add(&format!("nctaid_{}", axis), Intrinsic::Const0(0xc + 4 * k));
        }
        add("laneid", Intrinsic::Special(SReg::SR_LANEID));
        add("barrier", Intrinsic::Barrier);
        add("clock", Intrinsic::Clock { wide: false });
        add("clock64", Intrinsic::Clock { wide: true });
        let value_types = [("i32", types::I32), ("i64", types::I64), ("f32", types::F32), ("f64", types::F64)];
        let int_types = [("i8", types::I8), ("i16", types::I16), ("i32", types::I32), ("i64", types::I64)];
        for (m, mode) in [("idx", ShflMode::IDX), ("up", ShflMode::UP), ("down", ShflMode::DOWN), ("bfly", ShflMode::BFLY)] {
            add(&format!("shfl_{}", m), Intrinsic::Shuffle(mode, types::I32));
            for (tn, ty) in value_types {
                add(&format!("shfl_{}_{}", m, tn), Intrinsic::Shuffle(mode, ty));
            }
        }
        for (m, mode) in [("any", VoteMode::ANY), ("all", VoteMode::ALL)] {
            add(&format!("vote_{}", m), Intrinsic::Vote(mode, types::I8));
            for (tn, ty) in int_types {
                add(&format!("vote_{}_{}", m, tn), Intrinsic::Vote(mode, ty));
            }
        }
        add("ballot", Intrinsic::Ballot(types::I8));
        for (tn, ty) in int_types {
            add(&format!("ballot_{}", tn), Intrinsic::Ballot(ty));
        }
        let fast = [
            ("exp2", FastMath::Mufu(MUFUOp::EX2)),
            ("log2", FastMath::Mufu(MUFUOp::LG2)),
            ("sin", FastMath::Mufu(MUFUOp::SIN)),
            ("cos", FastMath::Mufu(MUFUOp::COS)),
            ("rcp", FastMath::Mufu(MUFUOp::RCP)),
            ("rsqrt", FastMath::Mufu(MUFUOp::RSQ)),
            ("sqrt", FastMath::Mufu(MUFUOp::SQRT)),
            ("tanh", FastMath::Mufu(MUFUOp::TANH)),
            ("exp", FastMath::Ex2Scaled(LOG2_E)),
            ("exp10", FastMath::Ex2Scaled(LOG2_10)),
            ("log", FastMath::Lg2Scaled(LN_2)),
            ("log10", FastMath::Lg2Scaled(LOG10_2)),
            ("tan", FastMath::Tan),
            ("pow", FastMath::Pow),
            ("div", FastMath::Div),
        ];
        for (n, m) in fast {
            add(&format!("fast_{}_f32", n), Intrinsic::Fast(m));
        }
        let rmw = [
            ("add", AtomicRmwOp::Add),
            ("sub", AtomicRmwOp::Sub),
            ("and", AtomicRmwOp::And),
            ("or", AtomicRmwOp::Or),
            ("xor", AtomicRmwOp::Xor),
            ("xchg", AtomicRmwOp::Xchg),
            ("umin", AtomicRmwOp::Umin),
            ("umax", AtomicRmwOp::Umax),
            ("smin", AtomicRmwOp::Smin),
            ("smax", AtomicRmwOp::Smax),
        ];
        for (tn, ty) in [("i32", types::I32), ("i64", types::I64)] {
            for (n, op) in rmw {
                add(&format!("atomic_{}_relaxed_{}", n, tn), Intrinsic::Atomic(AtomicIntr::Rmw(op), ty));
            }
            add(&format!("atomic_cas_relaxed_{}", tn), Intrinsic::Atomic(AtomicIntr::Cas, ty));
        }
        for (tn, ty) in [("f32", types::F32), ("f64", types::F64)] {
            add(&format!("atomic_fadd_{}", tn), Intrinsic::Atomic(AtomicIntr::Fadd, ty));
        }
        t
    })
}

/// The intrinsic families, for error messages.
const FAMILIES: &str = "%ursa_tid_x/y/z, %ursa_ctaid_x/y/z, %ursa_ntid_x/y/z, %ursa_nctaid_x/y/z, %ursa_laneid, %ursa_barrier, \
%ursa_clock, %ursa_clock64, %ursa_shfl_idx/up/down/bfly[_i32/_i64/_f32/_f64], %ursa_vote_any/all[_i8/_i16/_i32/_i64], \
%ursa_ballot[_i8/_i16/_i32/_i64], %ursa_fast_exp2/log2/sin/cos/rcp/rsqrt/sqrt/tanh/exp/exp10/log/log10/tan/pow/div_f32, \
%ursa_atomic_add/sub/and/or/xor/xchg/umin/umax/smin/smax/cas_relaxed_i32/i64, %ursa_atomic_fadd_f32/f64";

/// The names of all intrinsics (without `%`).
pub fn names() -> impl Iterator<Item = &'static str> {
    table().iter().map(|(n, _)| n.as_str())
}

/// The intrinsic called `name` (without `%`), whatever its declaration.
pub fn by_name(name: &str) -> Option<Intrinsic> {
    table().iter().find(|(n, _)| n == name).map(|&(_, i)| i)
}

/// Whether `name` (without `%`) is in the reserved namespace.
pub fn is_reserved(name: &str) -> bool {
    name.starts_with(PREFIX)
}

/// The routines of the runtime library (object symbols), each
/// `(i64 x, i64 d) -> i64`: `udiv`, `sdiv`, `urem`, `srem` of i64 with a
/// nonzero divisor and no overflow (the caller has checked both).
pub const RUNTIME_ROUTINES: [&str; 4] = ["ursa_rt_udiv64", "ursa_rt_sdiv64", "ursa_rt_urem64", "ursa_rt_srem64"];

/// Whether `name` (without `%`) is one of [`RUNTIME_ROUTINES`].
pub fn is_runtime_routine(name: &str) -> bool {
    RUNTIME_ROUTINES.contains(&name)
}

/// Why a reserved name (`%ursa_…`) cannot be used where it is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NameError {
    /// `%name` is a kernel intrinsic, which is never a function.
    Intrinsic { name: String },
    /// `%name` has the reserved prefix but is no intrinsic.
    Reserved { name: String },
    /// A call of a reserved name that is no intrinsic.
    UnknownIntrinsic { name: String },
    /// A call of an intrinsic through another signature than its own.
    Signature { name: String, expected: String, found: String },
    /// A function defined under a reserved name.
    Definition { name: String, why: Box<NameError> },
    /// `%name` is a routine of the runtime library, which only the
    /// compiler defines and calls.
    Runtime { name: String },
}

impl fmt::Display for NameError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NameError::Intrinsic { name } => write!(f, "%{} is a kernel intrinsic, not a function", name),
            NameError::Reserved { name } => {
                write!(f, "names starting with %{} are reserved for kernel intrinsics, and %{} is none of them", PREFIX, name)
            }
            NameError::UnknownIntrinsic { name } => {
                write!(f, "unknown intrinsic %{} (the reserved intrinsics are {}; docs/kernels.md)", name, FAMILIES)
            }
            NameError::Signature { name, expected, found } => {
                write!(f, "intrinsic %{} must be declared `{}`, not `{}`", name, expected, found)
            }
            NameError::Definition { name, why } => write!(f, "a function cannot be named %{}: {} (rename it)", name, why),
            NameError::Runtime { name } => {
                write!(f, "%{} is a routine of Ursa's runtime library, which only the compiler defines and calls", name)
            }
        }
    }
}

impl std::error::Error for NameError {}

/// Why no function can be defined, or have its address taken, under the
/// object symbol `name` (without `%`): the reserved names are intrinsics,
/// which are never functions. `Ok(())`: an ordinary name.
pub fn check_function_name(name: &str) -> Result<(), NameError> {
    if !is_reserved(name) {
        return Ok(());
    }
    if is_runtime_routine(name) {
        return Err(NameError::Runtime { name: name.to_string() });
    }
    if by_name(name).is_some() {
        Err(NameError::Intrinsic { name: name.to_string() })
    } else {
        Err(NameError::Reserved { name: name.to_string() })
    }
}

/// [`check_function_name`] for a function defined under `name`: the error
/// names the function and says what to do.
pub fn check_definition(name: &str) -> Result<(), NameError> {
    check_function_name(name).map_err(|why| NameError::Definition { name: name.to_string(), why: Box::new(why) })
}

/// A function of the input that declares a runtime routine as a callee:
/// only the compiler's own calls, added after this check, name one.
pub fn check_calls(f: &cranelift_codegen::ir::Function) -> Result<(), NameError> {
    for (fr, data) in f.dfg.ext_funcs.iter() {
        // Only a test-case name can be reserved (a user name reads `u0:1`),
        // and its symbol starts with `ursa` only if the name does.
        if !matches!(&data.name, cranelift_codegen::ir::ExternalName::TestCase(tc) if tc.raw().starts_with(b"ursa")) {
            continue;
        }
        if let Some(name) = crate::lower::callee_symbol(f, fr) {
            if is_runtime_routine(&name) {
                return Err(NameError::Runtime { name });
            }
        }
    }
    Ok(())
}

/// The intrinsic called `name` with signature `sig`, or why the call is wrong.
/// `Ok(None)`: an ordinary call (not a reserved name, or a runtime routine,
/// which only the compiler's own calls name: [`check_calls`]).
pub fn lookup(name: &str, sig: &Signature) -> Result<Option<Intrinsic>, NameError> {
    if !is_reserved(name) || is_runtime_routine(name) {
        return Ok(None);
    }
    let Some(i) = by_name(name) else {
        return Err(NameError::UnknownIntrinsic { name: name.to_string() });
    };
    let (params, returns) = i.signature();
    let types_of = |ps: &[cranelift_codegen::ir::AbiParam]| ps.iter().map(|p| p.value_type).collect::<Vec<_>>();
    if types_of(&sig.params) != params || types_of(&sig.returns) != returns {
        let (params, returns) = (&params[..], &returns[..]);
        let list = |ts: &[Type]| ts.iter().map(|t| t.to_string()).collect::<Vec<_>>().join(", ");
        let shown = |ps: &[Type], rs: &[Type]| {
            let arrow = if rs.is_empty() { String::new() } else { format!(" -> {}", list(rs)) };
            format!("({}){}", list(ps), arrow)
        };
        return Err(NameError::Signature {
            name: name.to_string(),
            expected: shown(params, returns),
            found: shown(&types_of(&sig.params), &types_of(&sig.returns)),
        });
    }
    Ok(Some(i))
}
