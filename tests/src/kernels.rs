//! The example kernels of `examples/kernels/` and the comparison of their
//! compiled code with NVIDIA's ptxas (the `kernel-table` command,
//! `docs/performance.md`, section "Code quality against ptxas").
//!
//! Every figure on the Ursa side is counted from the compiled machine code:
//! the instructions are decoded one by one and the registers come from
//! [`Inst::reg_reads`] / [`Inst::reg_writes`]. The ptxas side is transcribed
//! in `examples/kernels/ptxas.csv`.

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use ursa_backend::{compile, symbol_name, Options};
use ursa_emit::{elf, Inst, RegFile, INST_BYTES};

/// `examples/kernels/` of the workspace.
pub fn examples_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join("examples").join("kernels")
}

/// The `.clif` files of `dir`, sorted by name.
pub fn example_files(dir: &Path) -> Result<Vec<PathBuf>, String> {
    let rd = std::fs::read_dir(dir).map_err(|e| format!("{}: {}", dir.display(), e))?;
    let mut files = Vec::new();
    for entry in rd {
        let p = entry.map_err(|e| format!("{}: {}", dir.display(), e))?.path();
        if p.extension().is_some_and(|x| x == "clif") {
            files.push(p);
        }
    }
    files.sort();
    Ok(files)
}

/// The result of compiling one function of an example file as a kernel.
pub struct CompiledKernel {
    /// The function's name (`%vadd_i32` → `vadd_i32`).
    pub name: String,
    /// The compiled code, or the compiler's error.
    pub result: Result<elf::Function, String>,
}

/// Compiles every function of the CLIF file `path` as a kernel. `Err` only
/// when the file cannot be read or parsed; a function the compiler rejects
/// is reported in its own [`CompiledKernel::result`].
pub fn compile_file(path: &Path) -> Result<Vec<CompiledKernel>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {}", path.display(), e))?;
    let funcs = cranelift_reader::parse_functions(&text).map_err(|e| format!("{}: {}", path.display(), e))?;
    if funcs.is_empty() {
        return Err(format!("{}: no functions", path.display()));
    }
    let shared = ursa_backend::module::shared_mem::parse(&text).map_err(|e| format!("{}: {}", path.display(), e))?;
    let mut kernels: Vec<CompiledKernel> = funcs
        .iter()
        .map(|f| CompiledKernel {
            name: symbol_name(f),
            result: compile(f, &Options { kernel: true, check_regalloc: true, shared: shared.clone(), ..Default::default() })
                .map(|c| c.function)
                .map_err(|e| e.to_string()),
        })
        .collect();
    // Kernels that call others: their shared memory covers the callees'.
    if kernels.iter().all(|k| k.result.is_ok()) {
        let mut obj = elf::Object { functions: kernels.iter().map(|k| k.result.clone().unwrap()).collect(), ..Default::default() };
        ursa_backend::module::shared_mem::propagate(&mut obj);
        for (k, f) in kernels.iter_mut().zip(obj.functions) {
            k.result = Ok(f);
        }
    }
    Ok(kernels)
}

/// [`static_counts`] of a compiled kernel with the runtime routines it
/// calls (`ursa_backend::module::runtime`), as ptxas's figures count its
/// out-of-line subroutines: the instructions of all, the registers of any.
pub fn program_counts(kernel: &elf::Function) -> Result<StaticCounts, String> {
    let mut obj = elf::Object { functions: vec![kernel.clone()], ..Default::default() };
    ursa_backend::link_runtime(&mut obj).map_err(|e| e.to_string())?;
    let code: Vec<u8> = obj.functions.iter().flat_map(|f| f.code.iter().copied()).collect();
    static_counts(&code)
}

/// Static figures of one compiled function.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StaticCounts {
    /// Machine instructions (16 bytes each).
    pub instructions: usize,
    /// Highest general register touched + 1 (both halves of a pair count);
    /// 0 if none is.
    pub r_regs: u32,
    /// Distinct uniform registers touched (URZ not counted).
    pub ur_regs: usize,
    /// Distinct predicates touched (PT not counted).
    pub p_regs: usize,
    /// Distinct uniform predicates touched (UPT not counted).
    pub up_regs: usize,
}

/// Counts `code` (a function's encoded instructions): every instruction is
/// decoded, and the registers are those its [`Inst::reg_reads`] and
/// [`Inst::reg_writes`] name.
pub fn static_counts(code: &[u8]) -> Result<StaticCounts, String> {
    if code.len() % INST_BYTES != 0 {
        return Err(format!("code is {} bytes, not a multiple of {}", code.len(), INST_BYTES));
    }
    let mut r_regs = 0u32;
    let (mut ur, mut p, mut up) = (BTreeSet::new(), BTreeSet::new(), BTreeSet::new());
    for (i, chunk) in code.chunks_exact(INST_BYTES).enumerate() {
        let bytes: &[u8; INST_BYTES] = chunk.try_into().map_err(|_| "short instruction".to_string())?;
        let inst = Inst::decode(bytes).map_err(|e| format!("instruction {} (offset {:#x}): {}", i, i * INST_BYTES, e))?;
        if inst.has_dynamic_regs() {
            return Err(format!(
                "instruction {} (offset {:#x}) indexes registers at run time; its registers cannot be counted statically",
                i,
                i * INST_BYTES
            ));
        }
        for r in inst.reg_reads().into_iter().chain(inst.reg_writes()) {
            match r.file {
                RegFile::R => r_regs = r_regs.max(r.num + r.count),
                RegFile::UR => ur.extend(r.regs()),
                RegFile::P => p.extend(r.regs()),
                RegFile::UP => up.extend(r.regs()),
            }
        }
    }
    Ok(StaticCounts { instructions: code.len() / INST_BYTES, r_regs, ur_regs: ur.len(), p_regs: p.len(), up_regs: up.len() })
}

/// One kernel's ptxas figures (a row of `examples/kernels/ptxas.csv`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PtxasRow {
    pub kernel: String,
    /// `int` or `float`: the geometric mean is taken over the `int` kernels.
    pub kind: String,
    /// Static SASS instructions (out-of-line slow paths included).
    pub sass_instructions: u32,
    /// `Used N registers` of `ptxas -v`.
    pub registers: u32,
    /// Highest GPR in the listing + 1 (what Ursa's register figure counts).
    pub highest_r_plus_1: u32,
}

/// Parses `ptxas.csv`: `#` lines are comments, the first other line is the
/// header `kernel,kind,sass_instructions,registers,highest_r_plus_1`.
pub fn parse_ptxas_csv(text: &str) -> Result<Vec<PtxasRow>, String> {
    const HEADER: &str = "kernel,kind,sass_instructions,registers,highest_r_plus_1";
    let mut lines = text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty() && !l.trim_start().starts_with('#'));
    match lines.next() {
        Some((_, h)) if h.trim() == HEADER => {}
        Some((n, h)) => return Err(format!("line {}: header is `{}`, expected `{}`", n + 1, h.trim(), HEADER)),
        None => return Err("no header line".into()),
    }
    let mut rows = Vec::new();
    for (n, line) in lines {
        let f: Vec<&str> = line.split(',').map(str::trim).collect();
        if f.len() != 5 {
            return Err(format!("line {}: {} fields, expected 5", n + 1, f.len()));
        }
        let num = |i: usize| f[i].parse::<u32>().map_err(|e| format!("line {}: field {} `{}`: {}", n + 1, i + 1, f[i], e));
        if f[1] != "int" && f[1] != "float" {
            return Err(format!("line {}: kind `{}` is neither `int` nor `float`", n + 1, f[1]));
        }
        rows.push(PtxasRow {
            kernel: f[0].to_string(),
            kind: f[1].to_string(),
            sass_instructions: num(2)?,
            registers: num(3)?,
            highest_r_plus_1: num(4)?,
        });
    }
    Ok(rows)
}

/// One row of the comparison: a compiled example kernel.
pub struct TableRow {
    pub kernel: String,
    pub counts: Result<StaticCounts, String>,
}

/// Geometric mean of positive numbers (`None` for an empty list).
pub fn geometric_mean(xs: &[f64]) -> Option<f64> {
    if xs.is_empty() {
        return None;
    }
    Some((xs.iter().map(|x| x.ln()).sum::<f64>() / xs.len() as f64).exp())
}

/// The markdown comparison table, the geometric mean of the instruction
/// ratio over the `int` kernels, and the ptxas kernels with no example.
pub fn render_table(rows: &[TableRow], ptxas: &[PtxasRow]) -> String {
    let mut s = String::new();
    s.push_str(
        "| kernel | Ursa instrs | ptxas instrs | instr ratio | Ursa R | ptxas R | R ratio | ptxas -v regs | Ursa UR | Ursa P | Ursa UP |\n",
    );
    s.push_str("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
    let mut int_ratios = Vec::new();
    for row in rows {
        let px = ptxas.iter().find(|p| p.kernel == row.kernel);
        let c = match &row.counts {
            Ok(c) => c,
            Err(e) => {
                let _ = writeln!(s, "| {} | error: {} | | | | | | | | | |", row.kernel, e.replace('|', "\\|").replace('\n', " "));
                continue;
            }
        };
        let (pi, pr, ratio_i, ratio_r, pv) = match px {
            Some(p) => {
                let ri = c.instructions as f64 / p.sass_instructions as f64;
                if p.kind == "int" {
                    int_ratios.push(ri);
                }
                (
                    p.sass_instructions.to_string(),
                    p.highest_r_plus_1.to_string(),
                    format!("{:.2}", ri),
                    format!("{:.2}", c.r_regs as f64 / p.highest_r_plus_1 as f64),
                    p.registers.to_string(),
                )
            }
            None => ("—".into(), "—".into(), "—".into(), "—".into(), "—".into()),
        };
        let _ = writeln!(
            s,
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
            row.kernel, c.instructions, pi, ratio_i, c.r_regs, pr, ratio_r, pv, c.ur_regs, c.p_regs, c.up_regs
        );
    }
    s.push('\n');
    match geometric_mean(&int_ratios) {
        Some(g) => {
            let _ = writeln!(
                s,
                "Geometric mean of the instruction ratio (Ursa / ptxas) over the {} integer kernels: **{:.2}**",
                int_ratios.len(),
                g
            );
        }
        None => s.push_str("Geometric mean of the instruction ratio: no integer kernel compiled\n"),
    }
    s.push_str(
        "\nInstrs: static machine instructions (ptxas: SASS, out-of-line slow paths included). \
         R: highest general register touched + 1 (both halves of a pair; ptxas: its `-v` figure - 2). \
         UR / P / UP: distinct uniform registers / predicates / uniform predicates touched. \
         Ratios are Ursa / ptxas.\n",
    );
    let missing: Vec<&str> = ptxas.iter().filter(|p| !rows.iter().any(|r| r.kernel == p.kernel)).map(|p| p.kernel.as_str()).collect();
    if !missing.is_empty() {
        let _ = writeln!(s, "\nptxas kernels without an Ursa example (skipped): {}", missing.join(", "));
    }
    s
}
