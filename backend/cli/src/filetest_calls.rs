//! The test runner's calls (`ursa test`, `filetest.rs`): which function a
//! `; run:` line of a `test interpret` file calls, and the generated caller through which functions
//! with stack-passed arguments or results are run.
//!
//! `Gpu::call` passes arguments and results in registers only (at most
//! eight of each, `docs/abi.md`). A function with more gets a caller written
//! in CLIF and compiled with it: `%__ursa_run_NAME(i64)` loads the arguments
//! from a buffer in global memory (16 bytes each, argument *k* at `16k`),
//! calls the function, stores the results back into the buffer (result *k*
//! at `16k`) and returns. The runner writes the buffer, calls the caller and
//! reads the results.

use cranelift_codegen::data_value::DataValue;
use cranelift_codegen::ir::{Function, Type};
use cranelift_reader::Details;
use ursa_emit::elf;
use ursa_sim::{Gpu, Program};

use crate::filetest::{abi_slots, bits_of, compile_guarded, data_value, stop_kind, test_config, wide_bits, wide_value, SimCall};

/// The name (with its `%`) of the function a `; run:` / `; print:`
/// comment calls; `None` for other comments.
pub(crate) fn invoked_name(comment: &str) -> Option<&str> {
    let t = comment.trim_start_matches(';').trim_start();
    let rest = t.strip_prefix("run:").or_else(|| t.strip_prefix("print:"))?.trim_start();
    let end = rest.find('(')?;
    Some(rest[..end].trim())
}

/// The function of `functions` called `name` (`%name`).
pub(crate) fn run_target<'a>(functions: &'a [(Function, Details<'_>)], name: &str) -> Option<&'a Function> {
    functions.iter().map(|(f, _)| f).find(|f| f.name.to_string() == name)
}

/// Does `f` take or return more than the argument slots `Gpu::call` fills
/// (the eight before the return address; an i128 takes two)?
/// A vector argument or result always goes through the caller, which loads
/// and stores it whole (its lanes are the function's arguments, `docs/abi.md`).
pub(crate) fn needs_wrapper(f: &Function) -> bool {
    let n = ursa_isel::abi::LOW_REG_ARGS;
    let sig = &f.signature;
    abi_slots(&sig.params) > n || abi_slots(&sig.returns) > n || sig.params.iter().chain(&sig.returns).any(|p| p.value_type.is_vector())
}

/// Bytes of the buffer per argument or result (an i128 or a 128-bit vector fills one).
const SLOT: u64 = 16;

/// `v` as the little-endian bytes of a buffer slot.
fn slot_bytes(v: &DataValue) -> Result<[u8; SLOT as usize], String> {
    let mut b = [0u8; SLOT as usize];
    match v {
        DataValue::V128(x) => b.copy_from_slice(x),
        DataValue::V64(x) => b[..8].copy_from_slice(x),
        DataValue::V32(x) => b[..4].copy_from_slice(x),
        DataValue::V16(x) => b[..2].copy_from_slice(x),
        _ => match wide_bits(v) {
            Some(x) => b.copy_from_slice(&x.to_le_bytes()),
            None => b[..8].copy_from_slice(&bits_of(v).ok_or_else(|| format!("argument {} is not of a supported type", v))?.to_le_bytes()),
        },
    }
    Ok(b)
}

/// The value of `ty` in the slot bytes `b`.
fn slot_value(ty: Type, b: &[u8]) -> Result<DataValue, String> {
    if let Some(v) = wide_value(ty, u128::from_le_bytes(b[..16].try_into().unwrap())) {
        return Ok(v);
    }
    if ty.is_vector() {
        return Ok(match ty.bytes() {
            16 => DataValue::V128(b[..16].try_into().unwrap()),
            8 => DataValue::V64(b[..8].try_into().unwrap()),
            4 => DataValue::V32(b[..4].try_into().unwrap()),
            2 => DataValue::V16(b[..2].try_into().unwrap()),
            _ => return Err(format!("result type {}", ty)),
        });
    }
    data_value(ty, u64::from_le_bytes(b[..8].try_into().unwrap())).ok_or_else(|| format!("result type {}", ty))
}

/// The CLIF text of the caller of `f` (see the module docs).
pub(crate) fn wrapper_text(f: &Function) -> String {
    let sym = ursa_backend::symbol_name(f);
    let name: String = sym.chars().map(|c| if c.is_ascii_alphanumeric() { c } else { '_' }).collect();
    let mut body = String::new();
    let mut args = Vec::new();
    let mut v = 1;
    for (k, p) in f.signature.params.iter().enumerate() {
        body.push_str(&format!("    v{} = load.{} notrap aligned v0+{}\n", v, p.value_type, SLOT * k as u64));
        args.push(format!("v{}", v));
        v += 1;
    }
    let results: Vec<String> = (0..f.signature.returns.len()).map(|k| format!("v{}", v + k)).collect();
    let call = format!("call fn0({})", args.join(", "));
    if results.is_empty() {
        body.push_str(&format!("    {}\n", call));
    } else {
        body.push_str(&format!("    {} = {}\n", results.join(", "), call));
    }
    for (k, r) in results.iter().enumerate() {
        body.push_str(&format!("    store notrap aligned {}, v0+{}\n", r, SLOT * k as u64));
    }
    format!(
        "function %__ursa_run_{}(i64) {{\n    sig0 = {}\n    fn0 = {} sig0\nblock0(v0: i64):\n{}    return\n}}\n",
        name, f.signature, f.name, body
    )
}

/// Compiles the caller of `f`.
pub(crate) fn compile_wrapper(f: &Function) -> Result<elf::Function, String> {
    let text = wrapper_text(f);
    let funcs = cranelift_reader::parse_functions(&text).map_err(|e| format!("{} in\n{}", e, text))?;
    let w = funcs.into_iter().next().ok_or("no function")?;
    compile_guarded(&w).map_err(|e| e.to_string())
}

/// Calls `f` through its caller `wrapper` (an object symbol in `program`) on
/// the simulator, with the runner's limits; the same answer as
/// `call_simulator`.
pub(crate) fn call_simulator_wrapped(program: &Program, f: &Function, wrapper: &str, args: &[DataValue]) -> Result<SimCall, String> {
    let n = f.signature.params.len().max(f.signature.returns.len()).max(1) as u64;
    let mut gpu = Gpu::new();
    let buf = gpu.try_alloc(SLOT * n, 16).map_err(|t| format!("allocating the argument slots: {}", t))?;
    let mut bytes = vec![0u8; (SLOT * n) as usize];
    for (k, a) in args.iter().enumerate() {
        bytes[k * SLOT as usize..(k + 1) * SLOT as usize].copy_from_slice(&slot_bytes(a)?);
    }
    gpu.write(buf, &bytes).map_err(|t| format!("writing the arguments: {}", t))?;
    crate::filetest::jit_check(&gpu, program, wrapper, &[buf as u32, (buf >> 32) as u32], 0, Some((buf, SLOT * n)))?;
    let sim = gpu.call_with(program, wrapper, &[buf as u32, (buf >> 32) as u32], 0, &test_config());
    let (runaway, explicit) = stop_kind(&sim);
    let ours = match sim {
        Ok(_) => {
            let mem = gpu.read(buf, SLOT * n).map_err(|t| format!("reading the results: {}", t))?;
            f.signature
                .returns
                .iter()
                .enumerate()
                .map(|(k, r)| slot_value(r.value_type, &mem[k * SLOT as usize..(k + 1) * SLOT as usize]))
                .collect()
        }
        Err(trap) => Err(format!("trapped on the simulator: {}", trap)),
    };
    Ok((ours, runaway, explicit))
}
