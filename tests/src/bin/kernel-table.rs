//! Prints the markdown table comparing the compiled example kernels of
//! `examples/kernels/` with ptxas (`examples/kernels/ptxas.csv`):
//!
//! ```text
//! cargo run --release -p ursa-tests --bin kernel-table
//! ```
//!
//! An optional argument names another kernels directory (with its own
//! `ptxas.csv`). Exits non-zero, after printing the table, if a kernel does
//! not compile or its code cannot be counted.

use std::path::PathBuf;
use std::process::ExitCode;

use ursa_tests::kernels::{compile_file, example_files, examples_dir, parse_ptxas_csv, program_counts, render_table, TableRow};

fn run() -> Result<bool, String> {
    let dir = std::env::args_os().nth(1).map(PathBuf::from).unwrap_or_else(examples_dir);
    let csv_path = dir.join("ptxas.csv");
    let csv = std::fs::read_to_string(&csv_path).map_err(|e| format!("{}: {}", csv_path.display(), e))?;
    let ptxas = parse_ptxas_csv(&csv).map_err(|e| format!("{}: {}", csv_path.display(), e))?;
    let mut rows = Vec::new();
    for file in example_files(&dir)? {
        for k in compile_file(&file)? {
            let counts = k.result.and_then(|f| program_counts(&f));
            rows.push(TableRow { kernel: k.name, counts });
        }
    }
    if rows.is_empty() {
        return Err(format!("{}: no .clif kernels", dir.display()));
    }
    print!("{}", render_table(&rows, &ptxas));
    Ok(rows.iter().all(|r| r.counts.is_ok()))
}

fn main() -> ExitCode {
    match run() {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => {
            eprintln!("kernel-table: some kernels failed (see the table)");
            ExitCode::FAILURE
        }
        Err(e) => {
            eprintln!("kernel-table: {}", e);
            ExitCode::FAILURE
        }
    }
}
