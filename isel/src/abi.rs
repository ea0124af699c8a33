//! The device-function calling convention (`docs/abi.md`): argument and
//! result *k* < 32 in a register pair, slots 0–7 in `R[4+2k : 5+2k]`
//! (`R4`–`R19`) and slots 8–31 after the return address, in
//! `R[22+2(k−8) : 23+2(k−8)]` (`R22`–`R69`), values of 32 bits or fewer in
//! the low register ([`arg_reg`]); argument *k* ≥ 32 in local memory, 8
//! bytes each just below the caller's stack pointer at the call, at
//! `[SP − 8m + 8(k−32)]` for a callee with `m` stack arguments (the callee
//! owns that area, so a tail call can rewrite it for a callee with more or
//! fewer stack arguments); result *k* ≥ 32 at `[SP + 8(k−32)]` (the bottom
//! of the caller's frame); the return address in `R[20:21]`, the stack
//! pointer in `R1`. Every allocatable register is caller-saved.

/// Parameters and results passed in registers (`R4`–`R19`, then
/// `R22`–`R69`); the rest go through local memory (arguments below the
/// stack pointer, results in the caller's result area).
pub const MAX_REG_ARGS: usize = 32;
/// The register slots before the return address (`R4`–`R19`): the ones
/// `Gpu::call` fills from its argument words.
pub const LOW_REG_ARGS: usize = 8;
/// The return address pair written by `CALL` and read by `RET`.
pub const LINK: u8 = 20;
/// The stack pointer.
pub const SP: u8 = 1;

/// Registers the register allocators keep out of allocation.
///
/// The predicate kept free for instruction-internal use (`br_table` chains,
/// regalloc2's cyclic moves between instructions).
pub const P_SCRATCH: u32 = 6;
/// The 32-bit register used by spill code of predicates.
pub const SPILL_SCRATCH: u32 = 0;

/// Bytes of local memory per stack-passed argument or result.
pub const STACK_ARG_BYTES: u32 = 8;

/// The most stack-passed arguments of a tail call (they are all held in
/// registers at the jump, beside the register arguments: 56 slots in all).
pub const MAX_TAIL_STACK_ARGS: usize = 24;

/// Offset of stack-passed argument `j` (of `m`) from the stack pointer at
/// the call: below it.
pub fn stack_arg_offset(j: usize, m: usize) -> i32 {
    STACK_ARG_BYTES as i32 * (j as i32 - m as i32)
}

/// The bits of the signed 24-bit `ofs` field of a local-memory access.
pub fn ofs_field(v: i64) -> u64 {
    (v as u64) & 0xFF_FFFF
}

/// The first register of argument or result `k` (< [`MAX_REG_ARGS`]):
/// the pairs from `R4` up to the return address `R[20:21]`, then on from
/// `R22`.
pub fn arg_reg(k: usize) -> u8 {
    debug_assert!(k < MAX_REG_ARGS);
    if k < LOW_REG_ARGS {
        4 + 2 * k as u8
    } else {
        LINK + 2 + 2 * (k - LOW_REG_ARGS) as u8
    }
}
