//! Calls of the float library routines Cranelift emits replaced by the
//! instruction they stand for (`docs/abi.md`, "Library calls"):
//!
//! | callee | instruction |
//! |---|---|
//! | `%CeilF32`, `%CeilF64`, `%ceilf`, `%ceil` | `ceil` |
//! | `%FloorF32`, `%FloorF64`, `%floorf`, `%floor` | `floor` |
//! | `%TruncF32`, `%TruncF64`, `%truncf`, `%trunc` | `trunc` |
//! | `%NearestF32`, `%NearestF64`, `%nearbyintf`, `%nearbyint` | `nearest` |
//! | `%FmaF32`, `%FmaF64`, `%fmaf`, `%fma` | `fma` |
//!
//! The first two names of a row are Cranelift's `LibCall`s as its text
//! writes them; the others the C library's names, which
//! `cranelift_module::default_libcall_names` gives the same routines. A call
//! is replaced when its declaration has the routine's signature (`f32` or
//! `f64` as the name says, one argument, three for `fma`, one result): a
//! direct `call`, and a `call_indirect` whose callee is the `func_addr` of
//! such a declaration in the same function (the address is then unused and
//! not lowered). The C names are reserved like the intrinsics' names: a
//! module's own function called `ceilf` with that signature is not called.
//! An address of a routine that is used otherwise (stored, passed on) names
//! no function of the module, which is an error when the module is compiled.

use cranelift_codegen::ir::{self, types, ExternalName, FuncRef, Function, InstBuilder, InstructionData, LibCall, Opcode, Type};

/// The instruction and float type of a call of `fr`, if it names one of
/// the routines of the table.
fn routine(f: &Function, fr: FuncRef) -> Option<(Opcode, Type)> {
    use LibCall::*;
    let (op, ty) = match &f.dfg.ext_funcs[fr].name {
        ExternalName::LibCall(lc) => match lc {
            CeilF32 => (Opcode::Ceil, types::F32),
            CeilF64 => (Opcode::Ceil, types::F64),
            FloorF32 => (Opcode::Floor, types::F32),
            FloorF64 => (Opcode::Floor, types::F64),
            TruncF32 => (Opcode::Trunc, types::F32),
            TruncF64 => (Opcode::Trunc, types::F64),
            NearestF32 => (Opcode::Nearest, types::F32),
            NearestF64 => (Opcode::Nearest, types::F64),
            FmaF32 => (Opcode::Fma, types::F32),
            FmaF64 => (Opcode::Fma, types::F64),
            _ => return None,
        },
        ExternalName::TestCase(_) => {
            let s = ursa_isel::lower::callee_symbol(f, fr)?;
            match s.as_str() {
                "ceilf" => (Opcode::Ceil, types::F32),
                "ceil" => (Opcode::Ceil, types::F64),
                "floorf" => (Opcode::Floor, types::F32),
                "floor" => (Opcode::Floor, types::F64),
                "truncf" => (Opcode::Trunc, types::F32),
                "trunc" => (Opcode::Trunc, types::F64),
                "nearbyintf" => (Opcode::Nearest, types::F32),
                "nearbyint" => (Opcode::Nearest, types::F64),
                "fmaf" => (Opcode::Fma, types::F32),
                "fma" => (Opcode::Fma, types::F64),
                _ => return None,
            }
        }
        _ => return None,
    };
    Some((op, ty))
}

/// The routine `fr` names when its declaration has the routine's signature.
fn routine_of(f: &Function, fr: FuncRef) -> Option<(Opcode, Type)> {
    let (op, ty) = routine(f, fr)?;
    let sig = &f.dfg.signatures[f.dfg.ext_funcs[fr].signature];
    let arity = if op == Opcode::Fma { 3 } else { 1 };
    let params_ok = sig.params.len() == arity && sig.params.iter().all(|p| p.value_type == ty);
    let returns_ok = sig.returns.len() == 1 && sig.returns[0].value_type == ty;
    (params_ok && returns_ok).then_some((op, ty))
}

/// Whether `fr` is a routine of the table (a declaration with its name and
/// signature), whose calls this pass replaces.
pub fn is_routine(f: &Function, fr: FuncRef) -> bool {
    routine_of(f, fr).is_some()
}

/// Replaces every call of a routine of the table in `f` by its instruction.
pub fn legalize_libcalls(f: &mut Function) {
    // Most functions declare no routine: nothing to look for.
    if !f.dfg.ext_funcs.keys().any(|fr| is_routine(f, fr)) {
        return;
    }
    let mut todo = Vec::new();
    for b in f.layout.blocks() {
        for inst in f.layout.block_insts(b) {
            let (found, args) = match &f.dfg.insts[inst] {
                InstructionData::Call { opcode: Opcode::Call, func_ref, args } => {
                    (routine_of(f, *func_ref), args.as_slice(&f.dfg.value_lists).to_vec())
                }
                InstructionData::CallIndirect { opcode: Opcode::CallIndirect, sig_ref, args } => {
                    let all = args.as_slice(&f.dfg.value_lists);
                    let callee = f.dfg.resolve_aliases(all[0]);
                    let target = match f.dfg.value_def(callee) {
                        ir::ValueDef::Result(def, 0) => match f.dfg.insts[def] {
                            InstructionData::FuncAddr { func_ref, .. } => routine_of(f, func_ref),
                            _ => None,
                        },
                        _ => None,
                    };
                    // The call's own signature must be the routine's too.
                    let sig = &f.dfg.signatures[*sig_ref];
                    let same = target.is_some_and(|(_, ty)| {
                        sig.returns.len() == 1
                            && sig.returns[0].value_type == ty
                            && sig.params.len() == all.len() - 1
                            && sig.params.iter().all(|p| p.value_type == ty)
                    });
                    (target.filter(|_| same), all[1..].to_vec())
                }
                _ => (None, Vec::new()),
            };
            if let Some((op, _)) = found {
                if args.len() == if op == Opcode::Fma { 3 } else { 1 } {
                    todo.push((inst, op, args));
                }
            }
        }
    }
    for (inst, op, args) in todo {
        // The call's result value stays, now the instruction's (and so does
        // its source location).
        let r = f.replace(inst);
        match op {
            Opcode::Ceil => r.ceil(args[0]),
            Opcode::Floor => r.floor(args[0]),
            Opcode::Trunc => r.trunc(args[0]),
            Opcode::Nearest => r.nearest(args[0]),
            _ => r.fma(args[0], args[1], args[2]),
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn legalized(text: &str) -> String {
        let mut f = cranelift_reader::parse_functions(text).unwrap().remove(0);
        legalize_libcalls(&mut f);
        f.display().to_string()
    }

    #[test]
    fn libcalls_become_instructions() {
        let out = legalized(
            "function %f(f32, f64) -> f32, f64 {
                fn0 = %CeilF32(f32) -> f32
                fn1 = %fma(f64, f64, f64) -> f64
             block0(v0: f32, v1: f64):
                v2 = call fn0(v0)
                v3 = func_addr.i64 fn1
                v4 = call_indirect sig1, v3(v1, v1, v1)
                return v2, v4
             }",
        );
        assert!(out.contains("v2 = ceil v0"), "{}", out);
        assert!(out.contains("v4 = fma v1, v1, v1"), "{}", out);
        assert!(!out.contains("call"), "{}", out);
    }

    #[test]
    fn other_signatures_and_names_stay_calls() {
        let out = legalized(
            "function %f(f64) -> f64 {
                fn0 = %CeilF32(f64) -> f64
                fn1 = %ceilx(f64) -> f64
             block0(v0: f64):
                v1 = call fn0(v0)
                v2 = call fn1(v1)
                return v2
             }",
        );
        assert_eq!(out.matches("call fn").count(), 2, "{}", out);
    }
}
