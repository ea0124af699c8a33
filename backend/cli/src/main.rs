//! `ursa`: the command-line tool.

// The doc comments of the command-line structs are `--help` text in the tool's
// syntax (`X[,Y[,Z]]`, `TYPE[N]`), not rustdoc links.
#![allow(rustdoc::broken_intra_doc_links)]

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};
use ursa_cli::cli_run;

mod cli_compile;
mod cli_fuzz;
mod cli_isa;

#[derive(Parser)]
#[command(name = "ursa", version, about = "Ursa: a compiler toolchain and simulator for a SASS-style GPU")]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Assemble a source file into an ELF object.
    Asm {
        /// The assembly source (syntax: docs/encoding.md; directives: `.kernel`,
        /// `.func`, `.param NAME, TYPE|SIZE`, `.shared`, `.local`, `.regs`).
        input: PathBuf,
        /// The object to write (`-`: standard output) [default: the input
        /// with the extension .o, next to it]; with `--text`, the assembly
        /// [default: stdout].
        #[arg(short, long, value_name = "FILE")]
        output: Option<PathBuf>,
        /// Drop the control bits of the input and fill them as the compiler
        /// does (its `calc_instr_deps` pass, over the blocks the labels and
        /// branches make; docs/latencies.md).
        #[arg(long)]
        auto_control: bool,
        /// With `--auto-control`: write the assembly text with the new bits
        /// (comments, labels and layout kept) instead of an object.
        #[arg(long, requires = "auto_control")]
        text: bool,
    },
    /// Disassemble an ELF object, or instructions given as 32-bit hex words
    /// (four per instruction, lowest word first).
    Disasm {
        /// Object file to disassemble.
        input: Option<PathBuf>,
        /// Read instructions from hex words instead of a file.
        #[arg(long, num_args = 1.., value_name = "WORD", allow_hyphen_values = true)]
        hex: Option<Vec<String>>,
    },
    /// Compile Cranelift IR (a .clif file) into an ELF object.
    Compile {
        /// The CLIF file (required; `--kernel IN.clif` also names it).
        input: Option<PathBuf>,
        /// The object to write (`-`: standard output, without `-S` or
        /// `--print-after`) [default: the input with the extension .o, next to it].
        #[arg(short, long, value_name = "FILE")]
        output: Option<PathBuf>,
        /// `--kernel`: every function is a kernel. `--kernel NAME`
        /// (repeatable): only the named functions are kernels, the others
        /// device functions callable from them [default: no kernel; every
        /// function a device function, with the call ABI of docs/abi.md].
        #[arg(long, value_name = "NAME", num_args = 0..=1, default_missing_value = cli_compile::BARE_KERNEL)]
        kernel: Vec<String>,
        /// Print the disassembly of the result.
        #[arg(short = 'S', long)]
        disasm: bool,
        /// Print per function what ptxas -v reports (instructions, registers:
        /// highest R + 1 and, beside it, ptxas -v's figure for such code,
        /// highest R + 3; uniform registers, predicates, stack and shared bytes) and the
        /// register allocator's moves, spills and reloads.
        #[arg(long)]
        stats: bool,
        /// Print each function's code (or the pass's other output) after PASS
        /// (repeatable); the passes in the order they run.
        #[arg(long, value_name = "PASS", value_parser = clap::builder::PossibleValuesParser::new(ursa_backend::Pass::ALL.iter().map(|p| p.name())))]
        print_after: Vec<String>,
        /// Optimization: `speed` runs the mid-end (inlining, the e-graph;
        /// docs/optimization.md), `none` lowers the CLIF as written
        /// [default: speed, or $URSA_OPT_LEVEL]; a file's `set opt_level=…` wins.
        #[arg(long, value_name = "LEVEL", value_parser = ["none", "speed"])]
        opt_level: Option<String>,
        /// The NaN `fmin`/`fmax` return when an operand is a NaN, which CLIF
        /// leaves open (docs/float.md): `canonical` (as RISC-V), `first-operand`
        /// (the first NaN operand made quiet, as AArch64), `x86` (as Cranelift's
        /// x86-64 backend) [default: canonical]; a file's `; ursa.fminmax_nan RULE` wins.
        #[arg(long, value_name = "RULE", value_parser = ["canonical", "first-operand", "x86"])]
        fminmax_nan: Option<String>,
    },
    /// Run Cranelift filetests (`test compile`, `test run`): files or directories.
    Test {
        /// Filetests (`.clif`) and directories, searched for `.clif` files.
        #[arg(required = true)]
        paths: Vec<PathBuf>,
        /// Skip the differential check against cranelift-interpreter.
        #[arg(long)]
        no_differential: bool,
        /// Report passing tests too.
        #[arg(short, long)]
        verbose: bool,
        /// Also run every call through the simulator's translation to host
        /// code and through its interpreter and fail where they differ.
        #[arg(long)]
        jit_check: bool,
        /// Optimization of files that do not set `opt_level` in their
        /// header: `speed` or `none` [default: speed, or $URSA_OPT_LEVEL].
        #[arg(long, value_name = "LEVEL", value_parser = ["none", "speed"])]
        opt_level: Option<String>,
        /// The NaN `fmin`/`fmax` return when an operand is a NaN, which CLIF
        /// leaves open (docs/float.md): `canonical` (as RISC-V), `first-operand`
        /// (the first NaN operand made quiet, as AArch64), `x86` (as Cranelift's
        /// x86-64 backend) [default: canonical]; a file's `; ursa.fminmax_nan RULE` wins.
        #[arg(long, value_name = "RULE", value_parser = ["canonical", "first-operand", "x86"])]
        fminmax_nan: Option<String>,
    },
    /// Run random programs on the simulator and in cranelift-interpreter and
    /// compare; failures are reduced and printed as filetests.
    Fuzz {
        /// First case seed (case i uses seed+i).
        #[arg(long, default_value_t = 0)]
        seed: u64,
        /// Number of programs.
        #[arg(long, default_value_t = 1000)]
        count: u64,
        /// Worker threads.
        #[arg(long, default_value_t = 1)]
        jobs: usize,
        /// Print failures as generated, without delta reduction.
        #[arg(long)]
        no_reduce: bool,
        /// Print each generated program as a filetest (with its first
        /// argument vector) instead of running it.
        #[arg(long)]
        show: bool,
        /// Also run every call through the simulator's translation to host
        /// code and through its interpreter and fail where they differ.
        #[arg(long)]
        jit_check: bool,
        /// Generate kernels instead of programs: each is compiled at both
        /// optimization levels with both register allocators and launched
        /// over several CTAs on every simulator engine, and the outputs must
        /// agree byte for byte (docs/testing.md, "Kernel generator").
        #[arg(long)]
        kernels: bool,
        /// With --kernels: compile the kernels at speed and print how many
        /// of their counted loops opt_unroll_loops unrolls (nothing is run).
        #[arg(long, requires = "kernels")]
        unroll_share: bool,
    },
    /// List the opcode forms, or describe one in full.
    Isa {
        /// The form to describe (as listed, e.g. IADD3_RRR).
        form: Option<String>,
    },
    /// Run a kernel of an object on the simulator.
    Run {
        /// The object (from `ursa asm` or `ursa compile --kernel`).
        input: PathBuf,
        /// The kernel to launch.
        #[arg(long, value_name = "NAME")]
        kernel: String,
        /// CTAs: X[,Y[,Z]], at most 2147483647,65535,65535 (as in CUDA).
        #[arg(long, default_value = "1")]
        grid: String,
        /// Threads per CTA: X[,Y[,Z]], at most 1024,1024,64 and 1024 in all
        /// (as in CUDA).
        #[arg(long, default_value = "1")]
        block: String,
        /// Kernel arguments in order (repeatable): TYPE:VALUE, buf:NAME=TYPE[N]
        /// (zeroed), buf:NAME=TYPE:v1,v2 (`TYPE:` alone: empty),
        /// buf:NAME=TYPE:file:PATH (the file's bytes) or buf:NAME=file:PATH
        /// (bytes; u8) (a buffer, at most 256 MiB, passed as its address);
        /// TYPE is u8, i8, u16, i16, u32, i32, u64, i64, u128, i128, f32 or
        /// f64, a value within its range. Checked against the kernel's
        /// `.param` types where it has them (docs/abi.md). Any argument of
        /// `ursa` may come from a file: `@FILE` stands for its
        /// whitespace-separated words (for more data than a command line holds).
        #[arg(long = "arg", value_name = "SPEC", allow_hyphen_values = true)]
        args: Vec<String>,
        /// Print this buffer after the run (repeatable).
        #[arg(long = "out", value_name = "NAME")]
        outs: Vec<String>,
        /// Print the launch size, instructions issued, SIMT efficiency, cycles
        /// and per-opcode counts (with `--timing sm`, occupancy too).
        #[arg(long)]
        stats: bool,
        /// Print every executed warp instruction with its active mask.
        #[arg(long)]
        trace: bool,
        /// Report hazards the scheduling control bits do not cover.
        #[arg(long)]
        strict: bool,
        /// Stop (with an error) after this many warp-instructions.
        #[arg(long, value_name = "N", default_value_t = ursa_sim::DEFAULT_STEP_LIMIT)]
        step_limit: u64,
        /// Refuse the launch if one CTA needs more bytes of shared + local
        /// memory.
        #[arg(long, value_name = "BYTES", default_value_t = ursa_sim::DEFAULT_MEMORY_LIMIT)]
        memory_limit: u64,
        /// Dynamic shared memory per CTA in bytes (`%ursa_shared_dynamic`),
        /// after the kernel's static shared memory (at most 160 KiB in all).
        #[arg(long, value_name = "BYTES", default_value_t = 0)]
        shared: u32,
        /// Print the disassembly annotated with issue counts, lanes and stall
        /// cycles, and a summary (cycles, IPC, SIMT efficiency, classes,
        /// memory); also when the run traps.
        #[arg(long)]
        profile: bool,
        /// Write a per-warp timeline in the Chrome trace / Perfetto JSON format
        /// (also when the run traps; not onto the input object).
        #[arg(long, value_name = "FILE.json")]
        timeline: Option<PathBuf>,
        /// The timing model: `warp` (per-warp issue model, docs/latencies.md;
        /// the default, or $URSA_TIMING) or `sm` (the SM model of
        /// docs/timing.md: occupancy, schedulers, memory throughput).
        #[arg(long, value_name = "warp|sm")]
        timing: Option<String>,
        /// Machine description for the SM model, overriding the shipped one
        /// key by key (implies --timing sm; docs/timing.md).
        #[arg(long, value_name = "FILE")]
        machine: Option<PathBuf>,
    },
}

fn main() -> ExitCode {
    die_quietly_on_closed_stdout();
    let expanded = match ursa_cli::argsfile::expand(std::env::args_os()) {
        Ok(e) => e,
        Err(msg) => {
            eprintln!("error: {}", msg);
            return ExitCode::FAILURE;
        }
    };
    let cli = match Cli::command().try_get_matches_from(&expanded.args).and_then(|m| Cli::from_arg_matches(&m)) {
        Ok(c) => c,
        Err(e) => exit_naming_the_file(e, &expanded),
    };
    let r = match cli.cmd {
        Cmd::Asm { input, output, auto_control, text } => cmd_asm(&input, output, auto_control, text),
        Cmd::Disasm { input, hex } => cmd_disasm(input.as_deref(), hex),
        Cmd::Fuzz { seed, count, jobs, no_reduce, show, jit_check, kernels, unroll_share } => {
            ursa_cli::filetest::JIT_CHECK.store(jit_check, std::sync::atomic::Ordering::Relaxed);
            if unroll_share {
                cli_fuzz::unroll_share(seed, count)
            } else if kernels {
                cli_fuzz::fuzz_kernels(seed, count, jobs, !no_reduce, show)
            } else {
                cli_fuzz::fuzz(seed, count, jobs, !no_reduce, show)
            }
        }
        Cmd::Isa { form } => cli_isa::run(form.as_deref()),
        Cmd::Compile { input, output, kernel, disasm, stats, print_after, opt_level, fminmax_nan } => {
            match cli_compile::kernel_selection(input, kernel) {
                Ok((input, kernels)) => cli_compile::compile(
                    &input,
                    output,
                    &kernels,
                    disasm,
                    stats,
                    print_after,
                    opt_level.as_deref().and_then(ursa_backend::OptLevel::from_name),
                    fminmax_nan.as_deref().and_then(ursa_backend::FminmaxNan::from_name).unwrap_or_default(),
                ),
                Err(e) => Err(e),
            }
        }
        Cmd::Test { paths, no_differential, verbose, jit_check, opt_level, fminmax_nan } => {
            ursa_cli::filetest::JIT_CHECK.store(jit_check, std::sync::atomic::Ordering::Relaxed);
            cli_compile::test(
                &paths,
                !no_differential,
                verbose,
                opt_level.as_deref().and_then(ursa_backend::OptLevel::from_name),
                fminmax_nan.as_deref().and_then(ursa_backend::FminmaxNan::from_name).unwrap_or_default(),
            )
        }
        Cmd::Run {
            input,
            kernel,
            grid,
            block,
            args,
            outs,
            stats,
            trace,
            strict,
            step_limit,
            memory_limit,
            shared,
            profile,
            timeline,
            timing,
            machine,
        } => cli_run::run(cli_run::RunArgs {
            input: &input,
            kernel: &kernel,
            grid: &grid,
            block: &block,
            args: &args,
            arg_origins: &expanded.origins_of_values("--arg", &args),
            outs: &outs,
            stats,
            trace,
            strict,
            step_limit: Some(step_limit),
            memory_limit: Some(memory_limit),
            shared,
            profile,
            timeline: timeline.as_deref(),
            timing: timing.as_deref(),
            machine: machine.as_deref(),
        }),
    };
    match r {
        Ok(()) => ExitCode::SUCCESS,
        Err(msg) => {
            eprintln!("error: {}", msg);
            ExitCode::FAILURE
        }
    }
}

/// Prints a command-line parse error and exits as clap does, adding the
/// file and line of the argument it quotes where that comes from an `@FILE`.
fn exit_naming_the_file(e: clap::Error, expanded: &ursa_cli::argsfile::Expanded) -> ! {
    use clap::error::{ContextKind, ContextValue};
    let _ = e.print();
    let quoted = [ContextKind::InvalidArg, ContextKind::InvalidValue].into_iter().filter_map(|k| match e.get(k) {
        Some(ContextValue::String(s)) => Some(s.clone()),
        _ => None,
    });
    if let Some((word, origin)) = quoted.into_iter().find_map(|w| expanded.origin_of(&w).map(|o| (w.clone(), o.to_string()))) {
        eprintln!("note: `{}` comes from {}", word, origin);
    }
    std::process::exit(e.exit_code())
}

/// Output into a pipe whose reader has gone (`ursa isa | head -1`) ends the
/// process quietly, as it does for other Unix tools: the Rust runtime ignores
/// SIGPIPE, so without this a write (`println!`) fails and panics instead.
fn die_quietly_on_closed_stdout() {
    // SAFETY: done first in `main`, before any thread is started; it sets
    // the signal's disposition back to the default, with no handler of ours.
    #[cfg(unix)]
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}

fn cmd_asm(input: &Path, output: Option<PathBuf>, auto_control: bool, as_text: bool) -> Result<(), String> {
    let bytes = ursa_cli::input::read_input(input)?;
    let mut text = String::from_utf8(bytes).map_err(|_| format!("{}: not UTF-8 text", input.display()))?;
    if auto_control {
        text = ursa_backend::emit::auto_control::auto_control(&text, &input.display().to_string())?;
        if as_text {
            return match output {
                Some(out) => ursa_cli::output::write_output(&out, text.as_bytes()),
                None => {
                    use std::io::Write;
                    std::io::stdout().write_all(text.as_bytes()).map_err(|e| e.to_string())
                }
            };
        }
    }
    let obj = ursa_emit::asm::assemble(&text, &input.display().to_string()).map_err(|e| e.to_string())?;
    let out = output.unwrap_or_else(|| input.with_extension("o"));
    ursa_cli::output::write_output(&out, &ursa_emit::elf::write(&obj))
}

fn cmd_disasm(input: Option<&Path>, hex: Option<Vec<String>>) -> Result<(), String> {
    match (input, hex) {
        (Some(_), Some(_)) => Err("give either an object file or --hex words, not both".into()),
        (None, None) => Err("give an object file or --hex words".into()),
        (None, Some(words)) => {
            let mut vals = Vec::new();
            for (i, w) in words.iter().enumerate() {
                let t = w.trim_start_matches("0x").trim_start_matches("0X");
                let v = u32::from_str_radix(t, 16).map_err(|_| format!("word {} (`{}`) is not a 32-bit hex number", i + 1, w))?;
                vals.push(v);
            }
            if vals.len() % 4 != 0 {
                let n = vals.len();
                return Err(format!("{} word{} given; an instruction is 4 words", n, if n == 1 { "" } else { "s" }));
            }
            let mut failed = false;
            for (i, q) in vals.chunks(4).enumerate() {
                let mut bytes = [0u8; 16];
                for (j, w) in q.iter().enumerate() {
                    bytes[j * 4..j * 4 + 4].copy_from_slice(&w.to_le_bytes());
                }
                match ursa_emit::Inst::decode(&bytes)
                    .map_err(|e| e.to_string())
                    .and_then(|inst| ursa_emit::format_inst(&inst, None, &ursa_emit::NoLabels).map_err(|e| e.to_string()))
                {
                    Ok(t) => println!("{}", t),
                    Err(e) => {
                        eprintln!("error: instruction {}: {}", i, e);
                        failed = true;
                    }
                }
            }
            if failed {
                Err("some instructions could not be decoded".into())
            } else {
                Ok(())
            }
        }
        (Some(p), None) => {
            let obj = ursa_emit::elf::read(&ursa_cli::input::read_input(p)?).map_err(|e| format!("{}: {}", p.display(), e))?;
            let text = ursa_emit::asm::disassemble(&obj).map_err(|e| format!("{}: {}", p.display(), e))?;
            print!("{}", text);
            Ok(())
        }
    }
}
