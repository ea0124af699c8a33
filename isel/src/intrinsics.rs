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
//!
//! Any other `%ursa_` name, or one of these with another signature, is an
//! error naming the call.

use cranelift_codegen::ir::{types, Signature};

/// Prefix of the reserved names.
pub const PREFIX: &str = "ursa_";

/// What an intrinsic reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Intrinsic {
    /// A special register, by its `SReg` name in the description (`SR_TID_X`).
    Special(&'static str),
    /// A 32-bit word of constant bank 0 at this byte offset.
    Const0(u32),
}

const TABLE: &[(&str, Intrinsic)] = &[
    ("ursa_tid_x", Intrinsic::Special("SR_TID_X")),
    ("ursa_tid_y", Intrinsic::Special("SR_TID_Y")),
    ("ursa_tid_z", Intrinsic::Special("SR_TID_Z")),
    ("ursa_ctaid_x", Intrinsic::Special("SR_CTAID_X")),
    ("ursa_ctaid_y", Intrinsic::Special("SR_CTAID_Y")),
    ("ursa_ctaid_z", Intrinsic::Special("SR_CTAID_Z")),
    ("ursa_laneid", Intrinsic::Special("SR_LANEID")),
    ("ursa_ntid_x", Intrinsic::Const0(0x0)),
    ("ursa_ntid_y", Intrinsic::Const0(0x4)),
    ("ursa_ntid_z", Intrinsic::Const0(0x8)),
    ("ursa_nctaid_x", Intrinsic::Const0(0xc)),
    ("ursa_nctaid_y", Intrinsic::Const0(0x10)),
    ("ursa_nctaid_z", Intrinsic::Const0(0x14)),
];

/// The names of all intrinsics (without `%`).
pub fn names() -> impl Iterator<Item = &'static str> {
    TABLE.iter().map(|(n, _)| *n)
}

/// Whether `name` (without `%`) is in the reserved namespace.
pub fn is_reserved(name: &str) -> bool {
    name.starts_with(PREFIX)
}

/// The intrinsic called `name` with signature `sig`, or why the call is wrong.
/// `Ok(None)`: not a reserved name (an ordinary call).
pub fn lookup(name: &str, sig: &Signature) -> Result<Option<Intrinsic>, String> {
    if !is_reserved(name) {
        return Ok(None);
    }
    let Some(&(_, i)) = TABLE.iter().find(|(n, _)| *n == name) else {
        let known: Vec<&str> = TABLE.iter().map(|(n, _)| *n).collect();
        return Err(format!("unknown intrinsic %{} (the reserved intrinsics are %{})", name, known.join(", %")));
    };
    let ok = sig.params.is_empty() && sig.returns.len() == 1 && sig.returns[0].value_type == types::I32;
    if !ok {
        let list = |ps: &[cranelift_codegen::ir::AbiParam]| ps.iter().map(|p| p.value_type.to_string()).collect::<Vec<_>>().join(", ");
        return Err(format!("intrinsic %{} must be declared `() -> i32`, not `({}) -> {}`", name, list(&sig.params), list(&sig.returns)));
    }
    Ok(Some(i))
}
