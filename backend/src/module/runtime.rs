//! Ursa's runtime library: routines the compiler calls rather than expand
//! an operation at every use, compiled once per process and added to every
//! object that calls them — as a C compiler calls its runtime's `__divdi3`
//! and ptxas its internal 64-bit division subroutines.
//!
//! | routine | computes |
//! |---|---|
//! | `%ursa_rt_udiv64(i64 x, i64 d) -> i64` | `udiv x, d` |
//! | `%ursa_rt_sdiv64(i64 x, i64 d) -> i64` | `sdiv x, d` |
//! | `%ursa_rt_urem64(i64 x, i64 d) -> i64` | `urem x, d` |
//! | `%ursa_rt_srem64(i64 x, i64 d) -> i64` | `srem x, d` |
//!
//! Each is an ordinary device function (`docs/abi.md`: arguments in
//! `R[4:5]` and `R[6:7]`, the result in `R[4:5]`, return address in
//! `R[20:21]`; no frame). Its callers ([`crate::mid::legalize_div`]) have
//! trapped on a zero divisor and on `sdiv INT_MIN, -1`, and call it only
//! when an operand does not fit in 32 bits; the body is the bare i64
//! operation, which instruction selection expands to the 64-bit reciprocal
//! sequence (`docs/division.md`). The names are reserved
//! ([`ursa_isel::intrinsics::RUNTIME_ROUTINES`]): an input can neither
//! define nor call them.

use std::sync::OnceLock;

use cranelift_codegen::cursor::{Cursor, FuncCursor};
use cranelift_codegen::ir::{types::I64, AbiParam, Function, InstBuilder, Opcode, Signature, UserFuncName};
use cranelift_codegen::isa::CallConv;
use ursa_emit::elf;
use ursa_isel::intrinsics::RUNTIME_ROUTINES;

use crate::{Error, Options};

/// The signature of every routine: `(i64, i64) -> i64`.
pub fn signature() -> Signature {
    let mut s = Signature::new(CallConv::Fast);
    s.params.extend([AbiParam::new(I64), AbiParam::new(I64)]);
    s.returns.push(AbiParam::new(I64));
    s
}

/// Whether `f` is named as one of the routines (without building its
/// symbol for the names that cannot be one).
pub fn is_routine(f: &Function) -> bool {
    // Only a test-case name can be reserved (a user name reads `u0:1`), and
    // its symbol starts with `ursa` only if the name does.
    matches!(&f.name, UserFuncName::Testcase(tc) if tc.raw().starts_with(b"ursa"))
        && ursa_isel::intrinsics::is_runtime_routine(&crate::module::symbol_name(f))
}

/// The operation of each routine of [`RUNTIME_ROUTINES`], in its order.
const OPERATIONS: [Opcode; 4] = [Opcode::Udiv, Opcode::Sdiv, Opcode::Urem, Opcode::Srem];

/// The index in [`RUNTIME_ROUTINES`] of the routine computing the i64 `op`.
pub fn routine_of(op: Opcode) -> Option<usize> {
    OPERATIONS.iter().position(|&o| o == op)
}

/// The CLIF of routine `k`: the operation of its parameters, returned.
pub fn body(k: usize) -> Function {
    let mut f = Function::with_name_signature(UserFuncName::testcase(RUNTIME_ROUTINES[k]), signature());
    let b = f.dfg.make_block();
    f.layout.append_block(b);
    let x = f.dfg.append_block_param(b, I64);
    let d = f.dfg.append_block_param(b, I64);
    let mut pos = FuncCursor::new(&mut f).at_bottom(b);
    let (i, dfg) = pos.ins().Binary(OPERATIONS[k], I64, x, d);
    let v = dfg.first_result(i);
    pos.ins().return_(&[v]);
    f
}

/// Routine `k`, compiled at its first use (with the allocation checked).
fn compiled(k: usize) -> Result<&'static elf::Function, Error> {
    static ROUTINES: [OnceLock<Result<elf::Function, String>>; 4] = [const { OnceLock::new() }; 4];
    let opts = Options { check_regalloc: true, ..Options::default() };
    ROUTINES[k]
        .get_or_init(|| crate::compile_checked(&body(k), &opts).map(|c| c.function).map_err(|e| e.to_string()))
        .as_ref()
        .map_err(|e| Error::internal(format!("the runtime routine %{} does not compile: {}", RUNTIME_ROUTINES[k], e)))
}

/// Adds to `obj` each routine a function of it calls and it does not
/// define. Every way of building an object from compiled functions calls
/// this before looking for undefined callees.
pub fn link(obj: &mut elf::Object) -> Result<(), Error> {
    for (k, name) in RUNTIME_ROUTINES.iter().enumerate() {
        let called = obj.functions.iter().any(|f| f.relocs.iter().any(|r| r.symbol == *name));
        if called && !obj.functions.iter().any(|f| f.name == *name) {
            obj.functions.push(compiled(k)?.clone());
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_routine_compiles_to_a_leaf_without_frame() {
        for (k, name) in RUNTIME_ROUTINES.iter().enumerate() {
            let f = compiled(k).unwrap();
            assert_eq!(f.name, *name);
            assert!(f.relocs.is_empty(), "{} calls {:?}", name, f.relocs);
            assert_eq!(f.local_size, 0, "{} has a frame", name);
            assert!(!f.kernel);
        }
    }

    /// The instructions of routine `name`, one line each, without the
    /// control bits and offsets.
    fn listing(name: &str) -> Vec<String> {
        let k = RUNTIME_ROUTINES.iter().position(|n| *n == name).unwrap();
        let text = ursa_emit::asm::disassemble_function(compiled(k).unwrap()).unwrap();
        text.lines().filter(|l| l.starts_with("    ")).map(|l| l.split(" &").next().unwrap().trim().to_string()).collect()
    }

    #[test]
    fn the_routines_are_the_64_bit_reciprocal_sequence() {
        for name in RUNTIME_ROUTINES {
            let code = listing(name);
            let at = |p: &str| code.iter().position(|l| l.starts_with(p)).unwrap_or_else(|| panic!("{}: no {} in {:#?}", name, p, code));
            // The estimate: 1/d in f32, scaled to 2^64, then two Newton steps
            // and two corrections of the quotient (docs/division.md).
            assert!(at("I2F.RP.U64") < at("MUFU.RCP") && at("MUFU.RCP") < at("F2I.RZ.U64"), "{}", name);
            assert_eq!(code.iter().filter(|l| l.starts_with("ISETP.GE.AND.U32.X")).count(), 2, "{}: {:#?}", name, code);
            // No 32-bit case and no trap: the caller took both.
            assert!(!code.iter().any(|l| l.starts_with("I2F.RP.U32") || l.contains("TRAP")), "{}: {:#?}", name, code);
            // Signed: the operands' absolute values, the result's sign.
            let signed = name.contains("_s");
            assert_eq!(code.iter().any(|l| l.starts_with("SHF.R.HI")), signed, "{}: {:#?}", name, code);
            assert_eq!(code.last().map(String::as_str), Some("RET R[20:21]"), "{}", name);
        }
    }

    #[test]
    fn link_adds_each_called_routine_once() {
        let call = |sym: &str| elf::Reloc { offset: 0, symbol: sym.into(), addend: 0 };
        let caller = elf::Function { name: "f".into(), relocs: vec![call("ursa_rt_srem64"), call("ursa_rt_srem64")], ..Default::default() };
        let mut obj = elf::Object { functions: vec![caller], ..Default::default() };
        link(&mut obj).unwrap();
        link(&mut obj).unwrap();
        let names: Vec<&str> = obj.functions.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(names, ["f", "ursa_rt_srem64"]);
    }
}
