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
//! | `%ursa_shfl_idx/up/down/bfly(i32 v, i32 b) -> i32` | `SHFL.IDX/UP/DOWN/BFLY Rd, Rv, Rb, c` over the full warp (`c` = 0x1f, 0x0 for UP); `b` may be a constant |
//! | `%ursa_vote_any/all(i8) -> i8` | `ISETP.NE P, x, 0` + `VOTE.ANY/ALL RZ, Pu, P` + `SEL Rd, RZ, 0x1, !Pu` |
//! | `%ursa_ballot(i8) -> i32` | `ISETP.NE P, x, 0` + `VOTE.ANY Rd, PT, P` (the mask of lanes where x ≠ 0) |
//!
//! Any other `%ursa_` name, or one of these with another signature, is an
//! error naming the call; so is a function defined under a reserved name, or
//! `func_addr` of one ([`check_function_name`]).

use std::fmt;

use cranelift_codegen::ir::{types, Signature, Type};
use ursa_emit::mods::{SReg, ShflMode, VoteMode};

/// Prefix of the reserved names.
pub const PREFIX: &str = "ursa_";

/// What an intrinsic reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Intrinsic {
    /// A special register (`SR_TID_X`).
    Special(SReg),
    /// A 32-bit word of constant bank 0 at this byte offset.
    Const0(u32),
    /// `BAR.SYNC 0`.
    Barrier,
    /// A warp shuffle, by its mode (`IDX`, `UP`, `DOWN`, `BFLY`).
    Shuffle(ShflMode),
    /// A vote, by its mode (`ANY`, `ALL`): an i8 0 or 1.
    Vote(VoteMode),
    /// The mask of lanes whose argument is non-zero.
    Ballot,
}

impl Intrinsic {
    /// (parameter types, result types) of the declaration it must have.
    fn signature(self) -> (&'static [Type], &'static [Type]) {
        match self {
            Intrinsic::Special(_) | Intrinsic::Const0(_) => (&[], &[types::I32]),
            Intrinsic::Barrier => (&[], &[]),
            Intrinsic::Shuffle(_) => (&[types::I32, types::I32], &[types::I32]),
            Intrinsic::Vote(_) => (&[types::I8], &[types::I8]),
            Intrinsic::Ballot => (&[types::I8], &[types::I32]),
        }
    }
}

const TABLE: &[(&str, Intrinsic)] = &[
    ("ursa_tid_x", Intrinsic::Special(SReg::SR_TID_X)),
    ("ursa_tid_y", Intrinsic::Special(SReg::SR_TID_Y)),
    ("ursa_tid_z", Intrinsic::Special(SReg::SR_TID_Z)),
    ("ursa_ctaid_x", Intrinsic::Special(SReg::SR_CTAID_X)),
    ("ursa_ctaid_y", Intrinsic::Special(SReg::SR_CTAID_Y)),
    ("ursa_ctaid_z", Intrinsic::Special(SReg::SR_CTAID_Z)),
    ("ursa_laneid", Intrinsic::Special(SReg::SR_LANEID)),
    ("ursa_ntid_x", Intrinsic::Const0(0x0)),
    ("ursa_ntid_y", Intrinsic::Const0(0x4)),
    ("ursa_ntid_z", Intrinsic::Const0(0x8)),
    ("ursa_nctaid_x", Intrinsic::Const0(0xc)),
    ("ursa_nctaid_y", Intrinsic::Const0(0x10)),
    ("ursa_nctaid_z", Intrinsic::Const0(0x14)),
    ("ursa_barrier", Intrinsic::Barrier),
    ("ursa_shfl_idx", Intrinsic::Shuffle(ShflMode::IDX)),
    ("ursa_shfl_up", Intrinsic::Shuffle(ShflMode::UP)),
    ("ursa_shfl_down", Intrinsic::Shuffle(ShflMode::DOWN)),
    ("ursa_shfl_bfly", Intrinsic::Shuffle(ShflMode::BFLY)),
    ("ursa_vote_any", Intrinsic::Vote(VoteMode::ANY)),
    ("ursa_vote_all", Intrinsic::Vote(VoteMode::ALL)),
    ("ursa_ballot", Intrinsic::Ballot),
];

/// The names of all intrinsics (without `%`).
pub fn names() -> impl Iterator<Item = &'static str> {
    TABLE.iter().map(|(n, _)| *n)
}

/// Whether `name` (without `%`) is in the reserved namespace.
pub fn is_reserved(name: &str) -> bool {
    name.starts_with(PREFIX)
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
}

impl fmt::Display for NameError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NameError::Intrinsic { name } => write!(f, "%{} is a kernel intrinsic, not a function", name),
            NameError::Reserved { name } => {
                write!(f, "names starting with %{} are reserved for kernel intrinsics, and %{} is none of them", PREFIX, name)
            }
            NameError::UnknownIntrinsic { name } => {
                let known: Vec<&str> = TABLE.iter().map(|(n, _)| *n).collect();
                write!(f, "unknown intrinsic %{} (the reserved intrinsics are %{})", name, known.join(", %"))
            }
            NameError::Signature { name, expected, found } => {
                write!(f, "intrinsic %{} must be declared `{}`, not `{}`", name, expected, found)
            }
            NameError::Definition { name, why } => write!(f, "a function cannot be named %{}: {} (rename it)", name, why),
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
    if TABLE.iter().any(|(n, _)| *n == name) {
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

/// The intrinsic called `name` with signature `sig`, or why the call is wrong.
/// `Ok(None)`: not a reserved name (an ordinary call).
pub fn lookup(name: &str, sig: &Signature) -> Result<Option<Intrinsic>, NameError> {
    if !is_reserved(name) {
        return Ok(None);
    }
    let Some(&(_, i)) = TABLE.iter().find(|(n, _)| *n == name) else {
        return Err(NameError::UnknownIntrinsic { name: name.to_string() });
    };
    let (params, returns) = i.signature();
    let types_of = |ps: &[cranelift_codegen::ir::AbiParam]| ps.iter().map(|p| p.value_type).collect::<Vec<_>>();
    if types_of(&sig.params) != params || types_of(&sig.returns) != returns {
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
