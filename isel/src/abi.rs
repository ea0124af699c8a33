//! The device-function calling convention (`docs/abi.md`): argument and
//! result *k* in the register pair `R[4+2k : 5+2k]` (values of 32 bits or
//! fewer in the low register), the return address in `R[20:21]`, the stack
//! pointer in `R1`. Every allocatable register is caller-saved.

use crate::lower::Lower;
use crate::vcode::{Bundle, Class, VReg};
use ursa_emit::forms;

/// Parameters and results passed in registers (`R4`–`R19`).
pub const MAX_REG_ARGS: usize = 8;
/// The return address pair written by `CALL` and read by `RET`.
pub const LINK: u8 = 20;
/// The stack pointer.
pub const SP: u8 = 1;

/// The first register of argument or result `k`.
pub fn arg_reg(k: usize) -> u8 {
    4 + 2 * k as u8
}

/// `r` as a pair for an ABI slot: pairs as they are, a 32-bit register
/// copied into the low word of a fresh pair.
pub fn to_abi_pair(cx: &mut Lower, r: VReg) -> VReg {
    if cx.vcode.class(r) == Class::RPair {
        return r;
    }
    let p = cx.temp(Class::RPair);
    let m = Bundle::new().inst(forms::MOV_R).def("rd", p).use_("rb", r).build();
    cx.push(m);
    p
}
