//! Names of `BPT.TRAP` codes.
//!
//! The compiler writes a CLIF trap code's byte (`TrapCode::as_raw`) into the
//! 16-bit code of the `BPT.TRAP` it emits for `trap`, `trapz`, `trapnz` and
//! the trapping arithmetic; code 0 is a plain debug trap (`docs/isa-extensions.md`
//! 6.6). Cranelift reserves the top five byte values for its own codes.

/// A human name for a trap code, with the CLIF spelling where there is one:
/// `integer overflow (int_ovf)`, `user trap (user1)`, `debug trap`.
pub fn trap_code_name(code: u64) -> String {
    match code {
        0 => "debug trap".into(),
        251 => "stack overflow (stk_ovf)".into(),
        252 => "integer overflow (int_ovf)".into(),
        253 => "heap access out of bounds (heap_oob)".into(),
        254 => "integer division by zero (int_divz)".into(),
        255 => "bad conversion to integer (bad_toint)".into(),
        n @ 1..=250 => format!("user trap (user{})", n),
        n => format!("trap code 0x{:x}", n),
    }
}

#[cfg(test)]
mod tests {
    use super::trap_code_name;
    use cranelift_codegen::ir::TrapCode;

    #[test]
    fn names_match_cranelift_numbering() {
        for (code, clif) in [
            (TrapCode::STACK_OVERFLOW, "stk_ovf"),
            (TrapCode::INTEGER_OVERFLOW, "int_ovf"),
            (TrapCode::HEAP_OUT_OF_BOUNDS, "heap_oob"),
            (TrapCode::INTEGER_DIVISION_BY_ZERO, "int_divz"),
            (TrapCode::BAD_CONVERSION_TO_INTEGER, "bad_toint"),
            (TrapCode::unwrap_user(7), "user7"),
        ] {
            assert_eq!(code.to_string(), clif);
            assert!(trap_code_name(code.as_raw().get() as u64).contains(&format!("({})", clif)));
        }
    }
}
