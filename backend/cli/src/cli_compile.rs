//! `ursa compile` and `ursa test`.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};

use cranelift_reader::{parse_test, ParseOptions};
use ursa_backend::{compile as compile_fn, symbol_name, FminmaxNan, OptLevel, Options};
use ursa_cli::filetest::{collect, run_files, TestOptions};
use ursa_emit::elf;

/// Compiler panics are caught and reported as internal errors; keep the
/// default hook's backtrace out of the output unless RUST_BACKTRACE is set.
fn quiet_panics() {
    if std::env::var_os("RUST_BACKTRACE").is_none() {
        std::panic::set_hook(Box::new(|_| {}));
    }
}

/// Which functions `ursa compile` makes kernels.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Kernels {
    /// No `--kernel`: every function is a device function.
    None,
    /// Bare `--kernel`: every function is a kernel.
    All,
    /// `--kernel NAME` (repeatable): the named functions are kernels.
    Named(Vec<String>),
}

/// The value clap gives a bare `--kernel`: a NUL, which no command-line
/// argument can hold (so `--kernel ''` stays an empty name, an error).
pub const BARE_KERNEL: &str = "\0";

/// The input file and the kernel selection from `compile`'s arguments. A
/// bare `--kernel` directly before the input (`--kernel IN.clif`) takes the
/// input as its value; that value is the input when no other is given.
pub fn kernel_selection(input: Option<PathBuf>, mut kernel: Vec<String>) -> Result<(PathBuf, Kernels), String> {
    let input = match input {
        Some(i) => i,
        None => match kernel.pop() {
            Some(k) if k != BARE_KERNEL && !k.is_empty() => {
                kernel.push(BARE_KERNEL.to_string());
                PathBuf::from(k)
            }
            _ => return Err("compile: no input file given".into()),
        },
    };
    let mut named = Vec::new();
    for k in kernel.iter().filter(|k| *k != BARE_KERNEL) {
        let n = k.strip_prefix('%').unwrap_or(k);
        if n.is_empty() {
            return Err(format!("--kernel `{}`: no function name (a bare --kernel makes every function a kernel)", k));
        }
        if n.ends_with(".clif") {
            return Err(format!(
                "--kernel {}: a file, not a function name; `compile` takes one input file ({} is the input here)",
                k,
                input.display()
            ));
        }
        named.push(n.to_string());
    }
    let bare = kernel.iter().any(|k| k == BARE_KERNEL);
    let sel = match (bare, named.is_empty()) {
        (false, true) => Kernels::None,
        (true, true) => Kernels::All,
        (false, false) => Kernels::Named(named),
        (true, false) => {
            return Err(format!(
                "give either a bare --kernel (every function a kernel) or --kernel NAME for each kernel, not both (names given: {})",
                named.join(", ")
            ))
        }
    };
    Ok((input, sel))
}

pub fn compile(
    input: &Path,
    output: Option<PathBuf>,
    kernels: &Kernels,
    disasm: bool,
    stats: bool,
    print_after: Vec<String>,
    opt_level: Option<OptLevel>,
    fminmax_nan: FminmaxNan,
) -> Result<(), String> {
    quiet_panics();
    let printing = if disasm {
        Some("-S")
    } else if !print_after.is_empty() {
        Some("--print-after")
    } else {
        None
    };
    ursa_cli::output::check_stdout_free(output.as_deref(), printing)?;
    let print_after = print_after
        .iter()
        .map(|p| {
            ursa_backend::Pass::from_name(p).ok_or_else(|| {
                let all: Vec<&str> = ursa_backend::Pass::ALL.iter().map(|p| p.name()).collect();
                format!("--print-after {}: no such pass (the passes: {})", p, all.join(", "))
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    let text = ursa_cli::input::read_text(input)?;
    let shown = input.display().to_string();
    ursa_cli::clif_limits::check(&text).map_err(|e| format!("{}: {}", shown, e))?;
    // Accept both plain function lists and filetests (with `test`/`target`
    // lines, read as `ursa test` reads them). Every instruction's source
    // location becomes its line in the file, for the object's line table
    // (docs/binary-format.md).
    let funcs: Vec<_> = parse_test(&ursa_cli::filetest::strip_targets(&text), ParseOptions::default())
        .map_err(|e| format!("{}:{}: {}", shown, e.location.line_number, e.message))?
        .functions
        .into_iter()
        .map(|(f, details)| ursa_cli::input::with_line_locations(f, &details))
        .collect();
    if funcs.is_empty() {
        return Err(format!("{}: no functions", shown));
    }
    // Two functions with one object symbol would both be written; refuse,
    // naming both.
    let lines: Vec<usize> = text.lines().enumerate().filter(|(_, l)| l.trim_start().starts_with("function ")).map(|(i, _)| i + 1).collect();
    let at = |k: usize| lines.get(k).map(|l| format!("{}:{}", shown, l)).unwrap_or_else(|| shown.clone());
    for (k, f) in funcs.iter().enumerate() {
        let sym = symbol_name(f);
        if let Some(j) = funcs[..k].iter().position(|g| symbol_name(g) == sym) {
            let what = if funcs[j].name == f.name {
                format!("function {} is defined twice", f.name)
            } else {
                format!("functions {} and {} both become the object symbol `{}`", funcs[j].name, f.name, sym)
            };
            return Err(format!("{}: {} (first at {}, again at {})", shown, what, at(j), at(k)));
        }
    }
    if let Kernels::Named(names) = kernels {
        for n in names {
            if !funcs.iter().any(|f| clif_name(f) == *n || symbol_name(f) == *n) {
                let have: Vec<String> = funcs.iter().map(|f| format!("%{}", clif_name(f))).collect();
                return Err(format!("{}: --kernel {}: the file defines no function %{} (its functions: {})", shown, n, n, have.join(", ")));
            }
        }
    }
    let is_kernel = |f: &cranelift_codegen::ir::Function| match kernels {
        Kernels::None => false,
        Kernels::All => true,
        Kernels::Named(names) => names.iter().any(|n| clif_name(f) == *n || symbol_name(f) == *n),
    };
    let shared = ursa_backend::module::shared_mem::parse(&text).map_err(|e| format!("{}: {}", shown, e))?;
    let mut obj = elf::Object::default();
    let mut stat_lines = Vec::new();
    let kernel_flags: Vec<bool> = funcs.iter().map(is_kernel).collect();
    // A level the file's header sets wins over the command line's.
    let base = Options {
        print_after,
        shared,
        stats,
        opt_level: ursa_cli::filetest::file_opt_level(&text).or(opt_level).unwrap_or(ursa_cli::env_options().opt_level),
        fminmax_nan: ursa_cli::filetest::file_fminmax_nan(&text).map_err(|e| format!("{}:{}", shown, e))?.unwrap_or(fminmax_nan),
        ..ursa_cli::env_options()
    };
    let base = catch_unwind(AssertUnwindSafe(|| base.for_module(&funcs, &kernel_flags)))
        .map_err(|_| format!("{}: internal compiler error (panic) in the module's call-graph facts", shown))?;
    for f in &funcs {
        let name = symbol_name(f);
        let opts = Options { kernel: is_kernel(f), ..base.clone() };
        let r = catch_unwind(AssertUnwindSafe(|| compile_fn(f, &opts)))
            .map_err(|_| format!("{}: function %{}: internal compiler error (panic)", shown, name))?;
        let c = r.map_err(|e| format!("{}: function %{}: {}", shown, name, e))?;
        print!("{}", c.printed);
        let mut c = c;
        if !c.function.lines.is_empty() {
            c.function.lines.file = shown.clone();
        }
        if stats {
            stat_lines.push((name.clone(), c.pack.regs_after, c.pack.uregs_after, c.stats));
        }
        obj.functions.push(c.function);
    }
    // The runtime's routines the code calls are part of the program.
    ursa_backend::link_runtime(&mut obj).map_err(|e| format!("{}: {}", shown, e))?;
    // One file is one program (no separate link step): a call to a function
    // it does not define is an error here, not an object the loader refuses.
    if let Some((f, g)) = ursa_backend::undefined_callees(&obj).into_iter().next() {
        let line = funcs.iter().position(|x| symbol_name(x) == f).map(at).unwrap_or_else(|| shown.clone());
        return Err(format!("{}: function %{} calls %{}, which is neither defined in this file nor an intrinsic", line, f, g));
    }
    ursa_backend::propagate_callee_needs(&mut obj);
    // What `ptxas -v` reports, per function (shared bytes after propagation:
    // a kernel's include its callees'). The register count is the highest R
    // + 1; ptxas's `Used N registers` was the highest R + 3 on every kernel
    // compared (docs/performance.md), so its figure for the code is given too.
    for (name, regs, uregs, ra) in stat_lines {
        let Some(f) = obj.functions.iter().find(|f| f.name == name) else { continue };
        eprintln!(
            "%{}: {} instructions, {} registers (R0-R{}; ptxas -v would say {}), {} uniform registers, {} predicates, {} bytes stack, {} bytes shared, {} moves, {} spills, {} reloads, {} spill slots",
            name,
            f.code.len() / ursa_emit::INST_BYTES,
            regs,
            regs.saturating_sub(1),
            ptxas_registers(regs),
            uregs,
            predicates(&f.code),
            f.local_size,
            f.shared_size,
            ra.moves,
            ra.spills,
            ra.reloads,
            ra.spill_slots
        );
    }
    if disasm {
        // Function by function.
        for (i, f) in obj.functions.iter().enumerate() {
            if i > 0 {
                println!();
            }
            print!("{}", ursa_emit::asm::disassemble_function(f).map_err(|e| e.to_string())?);
        }
    }
    let out = output.unwrap_or_else(|| input.with_extension("o"));
    ursa_cli::output::write_output(&out, &elf::write(&obj))
}

/// The `Used N registers` of `ptxas -v` for code whose highest R register is
/// `regs - 1`: on every kernel of the ptxas comparison (docs/performance.md,
/// section 3) ptxas's figure was the highest register touched + 3, two more
/// than Ursa's count.
fn ptxas_registers(regs: u32) -> u32 {
    regs + 2
}

/// Distinct predicate registers (P0–P6, PT not counted) `code` names.
fn predicates(code: &[u8]) -> usize {
    let mut seen = std::collections::BTreeSet::new();
    for chunk in code.chunks_exact(ursa_emit::INST_BYTES) {
        let Ok(bytes) = <&[u8; ursa_emit::INST_BYTES]>::try_from(chunk) else { continue };
        let Ok(inst) = ursa_emit::Inst::decode(bytes) else { continue };
        for r in inst.reg_reads().into_iter().chain(inst.reg_writes()) {
            if r.file == ursa_emit::RegFile::P {
                seen.extend(r.regs());
            }
        }
    }
    seen.len()
}

/// A function's CLIF name without the `%`.
fn clif_name(f: &cranelift_codegen::ir::Function) -> String {
    let n = f.name.to_string();
    n.strip_prefix('%').unwrap_or(&n).to_string()
}

pub fn test(
    paths: &[PathBuf],
    differential: bool,
    verbose: bool,
    opt_level: Option<OptLevel>,
    fminmax_nan: FminmaxNan,
) -> Result<(), String> {
    quiet_panics();
    let files = collect(paths)?;
    let mut log = String::new();
    let opt_level = opt_level.unwrap_or(ursa_cli::env_options().opt_level);
    let tally = run_files(&files, &TestOptions { differential, verbose, opt_level, fminmax_nan }, &mut log);
    print!("{}", log);
    println!("{}", tally);
    if tally.failed > 0 {
        Err(format!("{} test(s) failed", tally.failed))
    } else {
        Ok(())
    }
}
