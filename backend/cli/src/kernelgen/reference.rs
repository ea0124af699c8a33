//! The thread-by-thread reference: a kernel without cross-lane statements
//! run in cranelift-interpreter once per thread of its launch
//! ([`super::build::build_reference`]), its outputs placed where the thread
//! writes them, and the atomic words computed from their initial values and
//! every thread's fold of its operands (the operations are associative and
//! commutative, so any order gives the same words).

use std::panic::{catch_unwind, AssertUnwindSafe};

use cranelift_codegen::data_value::DataValue;
use cranelift_interpreter::environment::FunctionStore;
use cranelift_interpreter::interpreter::{Interpreter, InterpreterState};
use cranelift_interpreter::step::ControlFlow;

use super::ast::*;
use super::{atom_init, build, RunOut};

/// Instructions cranelift-interpreter may run per thread.
const FUEL: u64 = 2_000_000;

fn fold(op: AtomOp, a: u64, b: u64, wide: bool) -> u64 {
    let (a, b) = if wide { (a, b) } else { (a & 0xffff_ffff, b & 0xffff_ffff) };
    let (sa, sb) = if wide { (a as i64, b as i64) } else { (a as u32 as i32 as i64, b as u32 as i32 as i64) };
    let r = match op {
        AtomOp::Add => a.wrapping_add(b),
        AtomOp::And => a & b,
        AtomOp::Or => a | b,
        AtomOp::Xor => a ^ b,
        AtomOp::Umin => a.min(b),
        AtomOp::Umax => a.max(b),
        AtomOp::Smin => sa.min(sb) as u64,
        AtomOp::Smax => sa.max(sb) as u64,
    };
    if wide {
        r
    } else {
        r & 0xffff_ffff
    }
}

/// The output and atomic buffers the launch of `k` must leave, or why the
/// reference could not run it.
pub fn run(k: &Kernel) -> Result<RunOut, String> {
    let f = build::build_reference(k);
    let name = f.name.to_string();
    let mut store = FunctionStore::default();
    store.add(name.clone(), &f);
    let nouts = k.outs.len();
    let l = k.launch;
    let cta = l.cta_threads();
    let mut out = vec![0u8; l.threads() as usize * nouts * 8];
    let mut atom: Vec<u64> = (0..ATOM_WORDS as usize).map(|w| atom_init(k, w)).collect();
    let mut cta_index = 0u32;
    for cz in 0..l.grid[2] {
        for cy in 0..l.grid[1] {
            for cx in 0..l.grid[0] {
                let mut lt = 0u32;
                for tz in 0..l.block[2] {
                    for ty in 0..l.block[1] {
                        for tx in 0..l.block[0] {
                            let args: Vec<DataValue> =
                                [tx, ty, tz, cx, cy, cz, lt % 32].iter().map(|&v| DataValue::I32(v as i32)).collect();
                            let state = InterpreterState::default().with_function_store(store.clone());
                            let mut interp = Interpreter::new(state).with_fuel(Some(FUEL));
                            let vals = match catch_unwind(AssertUnwindSafe(|| interp.call_by_name(&name, &args))) {
                                Ok(Ok(ControlFlow::Return(v))) => v.to_vec(),
                                Ok(Ok(_)) => return Err("the reference trapped".into()),
                                Ok(Err(e)) => return Err(format!("cranelift-interpreter: {}", e)),
                                Err(_) => return Err("cranelift-interpreter panicked".into()),
                            };
                            let g = (cta_index * cta + lt) as usize;
                            for (j, v) in vals.iter().enumerate() {
                                let DataValue::I64(x) = *v else { return Err(format!("the reference returned {}", v)) };
                                if j < nouts {
                                    out[(g * nouts + j) * 8..][..8].copy_from_slice(&x.to_le_bytes());
                                } else {
                                    let w = j - nouts;
                                    atom[w] = fold(AtomOp::ALL[w], atom[w], x as u64, k.atom64);
                                }
                            }
                            lt += 1;
                        }
                    }
                }
                cta_index += 1;
            }
        }
    }
    let atom = atom.iter().flat_map(|w| w.to_le_bytes()).collect();
    Ok(RunOut { out, atom, stats: (0, 0, 0) })
}
