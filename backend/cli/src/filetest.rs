//! `ursa test`: runs Cranelift filetests.
//!
//! * `test compile` — each function is compiled and its disassembly checked
//!   against the function's FileCheck directives (`; check:`, `; nextln:` …,
//!   with the `filecheck` crate). One count per function.
//! * `test run` / `test interpret` — each `; run:` (and `; print:`) line is
//!   compiled, executed on the simulator (strict hazard checking on) and
//!   compared with the expected values; the same invocation also runs in
//!   `cranelift-interpreter` and both must agree (the differential check).
//!   One count per line.
//!
//! A function the compiler does not support is reported as skipped, with the
//! reason; its `; run:` lines count as skipped, never as passed. `target`
//! lines are ignored (the file is parsed with them blanked out), except that
//! a file pinning its target architectures' own choice where CLIF leaves the
//! result open runs with the setting that makes that choice Ursa's, and is
//! skipped whole if no setting does (`pinned_architecture`).
//!
//! Every run is bounded: the simulator by a step limit, cranelift-interpreter
//! by fuel, on a thread of its own with a large stack (deep recursion is an
//! error, not a host stack overflow). Running out of either is a failure.
//! A line the interpreter cannot run (it panics, or lacks a feature) still
//! passes on its expected value, but is reported as `PASS … (not checked
//! against the interpreter: REASON)` and counted in [`Tally::unchecked`].

use std::collections::HashMap;
use std::fmt::Write as _;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};

use cranelift_codegen::data_value::DataValue;
use cranelift_codegen::ir::immediates::{Ieee128, Ieee16, Ieee32, Ieee64};
use cranelift_codegen::ir::{types, Function, Type};
use cranelift_interpreter::environment::FunctionStore;
use cranelift_interpreter::interpreter::{Interpreter, InterpreterError, InterpreterState};
use cranelift_interpreter::step::{ControlFlow, CraneliftTrap};
use cranelift_reader::{parse_run_command, parse_test, Comparison, ParseOptions, RunCommand};
use ursa_emit::elf;
use ursa_sim::{Engine, Gpu, LaunchConfig, Program, Space, TrapKind};

use ursa_backend::module::call_stack;
use ursa_backend::{compile, symbol_name, Error, FminmaxNan, OptLevel, Options};

use crate::filetest_calls::{call_simulator_wrapped, compile_wrapper, invoked_name, needs_wrapper, run_target};

/// Options of a test run.
#[derive(Clone, Debug)]
pub struct TestOptions {
    /// Compare every run with cranelift-interpreter (on by default).
    pub differential: bool,
    /// Print passing tests too.
    pub verbose: bool,
    /// The optimization level of a file that does not set one (`set
    /// opt_level=…` in its header wins).
    pub opt_level: OptLevel,
    /// The NaN `fmin`/`fmax` return, except in a file that sets its own
    /// (`; ursa.fminmax_nan RULE`, [`file_fminmax_nan`]) or pins an
    /// architecture's choice (`pinned_architecture`).
    pub fminmax_nan: FminmaxNan,
}

impl Default for TestOptions {
    fn default() -> Self {
        TestOptions { differential: true, verbose: false, opt_level: OptLevel::default(), fminmax_nan: FminmaxNan::default() }
    }
}

/// Counts of a test run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Tally {
    pub passed: usize,
    pub failed: usize,
    pub skipped: usize,
    /// Of `passed`: run lines checked against their expected values only,
    /// because cranelift-interpreter could not run them.
    pub unchecked: usize,
    /// Of `passed`: run lines where cranelift-interpreter disagrees with the
    /// expected value written in the file and the simulator agrees with it.
    pub interp_disagrees: usize,
}

impl Tally {
    fn add(&mut self, o: Tally) {
        self.passed += o.passed;
        self.failed += o.failed;
        self.skipped += o.skipped;
        self.unchecked += o.unchecked;
        self.interp_disagrees += o.interp_disagrees;
    }
}

/// `N passed, F failed, S skipped`, then `(M of the passed not checked
/// against the interpreter)` when M > 0. The first three counts stay in this
/// order and spelling: scripts read them (`N passed, N failed`).
impl std::fmt::Display for Tally {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} passed, {} failed, {} skipped", self.passed, self.failed, self.skipped)?;
        if self.unchecked > 0 {
            write!(f, " ({} of the passed not checked against the interpreter)", self.unchecked)?;
        }
        if self.interp_disagrees > 0 {
            write!(f, " ({} of the passed where cranelift-interpreter disagrees with the file)", self.interp_disagrees)?;
        }
        Ok(())
    }
}

/// Local memory per thread for test runs (bytes).
const TEST_STACK: u32 = 64 * 1024;
/// Warp-instruction limit per run.
const TEST_STEPS: u64 = 20_000_000;
/// Interpreter fuel per run.
const TEST_FUEL: u64 = 100_000_000;
/// Stack of the thread cranelift-interpreter runs on (it recurses on the
/// host stack once per CLIF call). Reserved, not committed, until used.
const INTERP_STACK: usize = 1 << 30;

/// Expands directories into the `.clif` files below them, sorted.
pub fn collect(paths: &[PathBuf]) -> Result<Vec<PathBuf>, String> {
    let mut out = Vec::new();
    for p in paths {
        if p.is_dir() {
            let mut stack = vec![p.clone()];
            while let Some(d) = stack.pop() {
                let rd = std::fs::read_dir(&d).map_err(|e| format!("{}: {}", d.display(), e))?;
                for e in rd {
                    let e = e.map_err(|e| format!("{}: {}", d.display(), e))?;
                    let path = e.path();
                    if path.is_dir() {
                        stack.push(path);
                    } else if path.extension().is_some_and(|x| x == "clif") {
                        out.push(path);
                    }
                }
            }
        } else if p.exists() {
            out.push(p.clone());
        } else {
            return Err(format!("{}: no such file or directory", p.display()));
        }
    }
    out.sort();
    Ok(out)
}

/// Runs the test files; writes a report line per failure or skip (and per
/// pass when verbose) to `log`.
pub fn run_files(files: &[PathBuf], opts: &TestOptions, log: &mut String) -> Tally {
    let mut t = Tally::default();
    for f in files {
        t.add(run_file(f, opts, log));
    }
    t
}

/// The 1-based line of `part`, a slice of `text` (the parser's comments
/// borrow from the text it parsed), so identical lines get their own numbers.
fn line_of(text: &str, part: &str) -> usize {
    let start = text.as_ptr() as usize;
    let at = part.as_ptr() as usize;
    if at < start || at > start + text.len() {
        return 0;
    }
    text[..at - start].bytes().filter(|&b| b == b'\n').count() + 1
}

/// How a file that pins its target architectures' own choice where CLIF
/// leaves the result open is run. Cranelift names such a file
/// `…nondeterministic…` and lists those architectures alone as its targets,
/// so its runner runs the file on them only.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Pinned {
    /// Not such a file: the run's own settings.
    No,
    /// One of its architectures makes choices a compile setting of Ursa
    /// makes too ([`ARCH_CHOICES`]): the file runs with that setting.
    As(FminmaxNan),
    /// None does: the file is skipped, with these architectures named.
    Skip(String),
}

fn pinned_architecture(path: &Path, text: &str) -> Pinned {
    if !path.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.contains("nondeterministic")) {
        return Pinned::No;
    }
    let archs: std::collections::BTreeSet<&str> =
        text.lines().filter_map(|l| l.trim_start().strip_prefix("target ")).filter_map(|r| r.split_whitespace().next()).collect();
    if archs.is_empty() {
        return Pinned::No;
    }
    match archs.iter().find_map(|a| ARCH_CHOICES.iter().find(|(n, _)| n == a)) {
        Some(&(_, nan)) => Pinned::As(nan),
        None => Pinned::Skip(archs.into_iter().collect::<Vec<_>>().join(" and ")),
    }
}

/// Architectures and the setting that makes Ursa's choices theirs where CLIF
/// leaves a result open — the NaN of `fmin`/`fmax`, the only such choice
/// Cranelift's runtests pin (docs/float.md, "NaN and signed-zero rules").
const ARCH_CHOICES: &[(&str, FminmaxNan)] = &[
    ("riscv64", FminmaxNan::Canonical),
    ("aarch64", FminmaxNan::FirstOperand),
    ("s390x", FminmaxNan::FirstOperand),
    ("x86_64", FminmaxNan::X86),
];

/// Blanks `target` lines (they name other machines; Ursa compiles for
/// itself); keeps line numbers. Without them a `set` line between two
/// targets (as in Cranelift's runtests) is a flag of the file, not an error
/// of the reader ("dangling 'set' command"). `ursa test` and `ursa compile`
/// read a file alike.
pub fn strip_targets(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for l in text.split_inclusive('\n') {
        let t = l.trim_start();
        if t.starts_with("target ") || t == "target" || t.trim_end() == "target" {
            out.push_str(if l.ends_with('\n') { "\n" } else { "" });
        } else {
            out.push_str(l);
        }
    }
    out
}

pub fn compile_guarded(f: &Function) -> Result<elf::Function, Error> {
    compile_guarded_in(f, &Options { check_regalloc: true, ..crate::env_options() })
}

/// The options the functions `funcs` of one test file or generated program
/// are compiled with, at `level`: the checks of the test runner on, and at
/// [`OptLevel::Speed`] the device functions calls may inline (every function
/// of a test is a device function).
pub fn module_options(funcs: &[Function], shared: &ursa_backend::module::shared_mem::SharedLayout, level: OptLevel) -> Options {
    let inline = (level == OptLevel::Speed)
        .then(|| catch_unwind(AssertUnwindSafe(|| ursa_backend::mid::opt_inline::Callees::new(funcs, &vec![false; funcs.len()]))).ok())
        .flatten()
        .map(std::sync::Arc::new);
    Options { check_regalloc: true, shared: shared.clone(), opt_level: level, inline, ..crate::env_options() }
}

/// The level a file's header sets (`set opt_level=…`), if it sets one.
pub fn file_opt_level(text: &str) -> Option<OptLevel> {
    let mut level = None;
    for line in text.lines().map(str::trim).take_while(|l| !l.starts_with("function")) {
        if let Some(settings) = line.strip_prefix("set ") {
            for s in settings.split_whitespace() {
                if let Some(v) = s.strip_prefix("opt_level=") {
                    level = OptLevel::from_name(v).or(level);
                }
            }
        }
    }
    level
}

/// The NaN rule of `fmin`/`fmax` a file sets with the directive
/// `; ursa.fminmax_nan RULE` (`canonical`, `first-operand` or `x86`), if it
/// sets one; an unknown rule or a second directive is an error that starts
/// with the line's number (`12: …`).
pub fn file_fminmax_nan(text: &str) -> Result<Option<FminmaxNan>, String> {
    let mut found: Option<(usize, FminmaxNan)> = None;
    for (i, line) in text.lines().enumerate() {
        let Some(rest) = line.trim_start().strip_prefix(';').map(str::trim_start).and_then(|l| l.strip_prefix("ursa.fminmax_nan")) else {
            continue;
        };
        let words: Vec<&str> = rest.split_whitespace().collect();
        let names = || FminmaxNan::NAMES.iter().map(|(n, _)| *n).collect::<Vec<_>>().join(", ");
        let rule = match words.as_slice() {
            [w] => FminmaxNan::from_name(w)
                .ok_or_else(|| format!("{}: `ursa.fminmax_nan {}`: no such rule (the rules: {})", i + 1, w, names()))?,
            _ => return Err(format!("{}: `ursa.fminmax_nan` takes one rule ({})", i + 1, names())),
        };
        if let Some((first, _)) = found {
            return Err(format!("{}: a second `ursa.fminmax_nan` (the first at line {})", i + 1, first));
        }
        found = Some((i + 1, rule));
    }
    Ok(found.map(|(_, r)| r))
}

/// Compiles `f` with `opts`, a panic reported as an internal error.
pub fn compile_guarded_in(f: &Function, opts: &Options) -> Result<elf::Function, Error> {
    match catch_unwind(AssertUnwindSafe(|| compile(f, opts))) {
        Ok(r) => r.map(|c| c.function),
        Err(p) => {
            let msg = p.downcast_ref::<String>().cloned().or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string())).unwrap_or_default();
            Err(Error::internal(format!("compiler panicked: {}", msg)))
        }
    }
}

/// The names of the functions `f` calls directly (intrinsics are not functions).
fn callees(f: &Function) -> Vec<String> {
    f.dfg
        .ext_funcs
        .keys()
        // The float library routines are no functions of the file
        // (`legalize_libcalls` makes their calls instructions).
        .filter(|&fr| !ursa_backend::mid::legalize_libcalls::is_routine(f, fr))
        .filter_map(|fr| ursa_isel::lower::callee_symbol(f, fr))
        .filter(|n| !ursa_isel::intrinsics::is_reserved(n))
        .collect()
}

pub fn run_file(path: &Path, opts: &TestOptions, log: &mut String) -> Tally {
    let mut t = Tally::default();
    let shown = path.display().to_string();
    let text = match crate::input::read_text(path) {
        Ok(s) => s,
        Err(e) => {
            let _ = writeln!(log, "FAIL {}: {}", shown, e);
            t.failed += 1;
            return t;
        }
    };
    if let Err(e) = crate::clif_limits::check(&text) {
        let _ = writeln!(log, "FAIL {}: {}", shown, e);
        t.failed += 1;
        return t;
    }
    let stripped = strip_targets(&text);
    let tf = match parse_test(&stripped, ParseOptions::default()) {
        Ok(tf) => tf,
        Err(e) => {
            let _ = writeln!(log, "FAIL {}:{}: {}", shown, e.location.line_number, e.message);
            t.failed += 1;
            return t;
        }
    };
    // A reserved name is no function (and the reference interpreter would
    // meet it twice: once defined here, once as the intrinsic's model).
    for (f, details) in &tf.functions {
        if let Err(m) = ursa_isel::intrinsics::check_definition(&symbol_name(f)) {
            let _ = writeln!(log, "FAIL {}:{}: {}", shown, details.location.line_number, m);
            t.failed += 1;
            return t;
        }
    }
    let cmds: Vec<&str> = tf.commands.iter().map(|c| c.command).collect();
    let is_run = cmds.iter().any(|c| *c == "run" || *c == "interpret");
    let runs_by_position = cmds.iter().any(|c| *c == "run");
    let is_compile = cmds.iter().any(|c| *c == "compile");
    if !is_run && !is_compile {
        let _ = writeln!(log, "SKIP {}: no `test run`, `test interpret` or `test compile` command", shown);
        return t;
    }

    let fminmax_nan = match pinned_architecture(path, &text) {
        Pinned::No => match file_fminmax_nan(&text) {
            Ok(rule) => rule.unwrap_or(opts.fminmax_nan),
            Err(e) => {
                let _ = writeln!(log, "FAIL {}:{}", shown, e);
                t.failed += 1;
                return t;
            }
        },
        Pinned::As(nan) => nan,
        Pinned::Skip(arch) => {
            let lines = text.lines().map(str::trim_start).filter(|l| l.starts_with("; run:") || l.starts_with("; print:")).count();
            let _ = writeln!(
                log,
                "SKIP {}: {} run lines pin the choice of {} where CLIF leaves the result open (the file's only targets: Cranelift runs it there alone)",
                shown, lines, arch
            );
            t.skipped += lines;
            return t;
        }
    };
    let shared = match ursa_backend::module::shared_mem::parse(&text) {
        Ok(s) => s,
        Err(e) => {
            let _ = writeln!(log, "FAIL {}: {}", shown, e);
            t.failed += 1;
            return t;
        }
    };
    // Compile every function (one module); a function whose callee failed
    // fails too.
    let funcs: Vec<Function> = tf.functions.iter().map(|(f, _)| f.clone()).collect();
    let module = Options { fminmax_nan, ..module_options(&funcs, &shared, file_opt_level(&stripped).unwrap_or(opts.opt_level)) };
    let mut compiled: HashMap<String, Result<elf::Function, Error>> = HashMap::new();
    for f in &funcs {
        compiled.insert(symbol_name(f), compile_guarded_in(f, &module));
    }
    // name -> (reason, is it a failure rather than an unsupported feature)
    let mut blocked: HashMap<String, (String, bool)> = HashMap::new();
    loop {
        let mut changed = false;
        for (f, _) in &tf.functions {
            let name = symbol_name(f);
            if blocked.contains_key(&name) {
                continue;
            }
            if let Some(Err(e)) = compiled.get(&name) {
                blocked.insert(name.clone(), (e.to_string(), !matches!(e, Error::Unsupported(_))));
                changed = true;
                continue;
            }
            for c in callees(f) {
                if let Some((why, fail)) = blocked.get(&c).cloned() {
                    blocked.insert(name.clone(), (format!("calls %{}, which is not compiled: {}", c, why), fail));
                    changed = true;
                    break;
                } else if !compiled.contains_key(&c) {
                    blocked.insert(name.clone(), (format!("calls %{}, which is not defined in this file", c), false));
                    changed = true;
                    break;
                }
            }
        }
        if !changed {
            break;
        }
    }
    let mut obj = elf::Object::default();
    // Callers for the functions with stack-passed arguments or results.
    let mut wrappers: HashMap<String, String> = HashMap::new();
    for (f, _) in &tf.functions {
        let name = symbol_name(f);
        if blocked.contains_key(&name) {
            continue;
        }
        if let Some(Ok(ef)) = compiled.get(&name) {
            obj.functions.push(ef.clone());
            if needs_wrapper(f) {
                match compile_wrapper(f) {
                    Ok(w) => {
                        wrappers.insert(name.clone(), w.name.clone());
                        obj.functions.push(w);
                    }
                    Err(e) => {
                        blocked.insert(name, (format!("its generated caller does not compile: {}", e), false));
                    }
                }
            }
        }
    }
    let linked = ursa_backend::link_runtime(&mut obj);
    size_test_stacks(&mut obj);
    let program = if is_run {
        if let Err(e) = linked {
            let _ = writeln!(log, "FAIL {}: {}", shown, e);
            t.failed += 1;
            return t;
        }
        match Program::load(&elf::write(&obj)) {
            Ok(p) => Some(p),
            Err(e) => {
                let _ = writeln!(log, "FAIL {}: compiled object does not load: {}", shown, e);
                t.failed += 1;
                return t;
            }
        }
    } else {
        None
    };

    let models = intrinsic_models();
    let mut store = FunctionStore::default();
    for (f, _) in &tf.functions {
        store.add(f.name.to_string(), f);
    }
    for f in &models {
        store.add(f.name.to_string(), f);
    }

    for (f, details) in &tf.functions {
        let name = symbol_name(f);
        let fline = details.location.line_number;
        if is_compile {
            match compiled.get(&name).unwrap() {
                Err(Error::Unsupported(m)) => {
                    let _ = writeln!(log, "SKIP {}:{}: %{}: {}", shown, fline, name, m);
                    t.skipped += 1;
                }
                Err(e) => {
                    let _ = writeln!(log, "FAIL {}:{}: %{}: {}", shown, fline, name, e);
                    t.failed += 1;
                }
                Ok(ef) => match check_compile(ef, details.comments.iter().map(|c| c.text)) {
                    Ok(()) => {
                        if opts.verbose {
                            let _ = writeln!(log, "PASS {}:{}: %{}", shown, fline, name);
                        }
                        t.passed += 1;
                    }
                    Err(m) => {
                        let _ = writeln!(log, "FAIL {}:{}: %{}: {}", shown, fline, name, m);
                        t.failed += 1;
                    }
                },
            }
        }
        if !is_run {
            continue;
        }
        for c in details.comments.iter() {
            // As in Cranelift's runners: under `test run` a run line belongs
            // to the function it follows (parsed against its signature and
            // calling it, whatever name it writes: `test_run.rs`); a file
            // that is only `test interpret` calls the function by the name
            // the line writes (`test_interpret.rs`).
            let f = match invoked_name(c.text).filter(|_| !runs_by_position) {
                Some(n) => match run_target(&tf.functions, n) {
                    Some(g) => g,
                    None => {
                        let line = line_of(&stripped, c.text);
                        let _ = writeln!(log, "FAIL {}:{}: the run line calls {}, which is not a function of this file", shown, line, n);
                        t.failed += 1;
                        continue;
                    }
                },
                None => f,
            };
            let name = symbol_name(f);
            let cmd = match parse_run_command(c.text, &f.signature) {
                Ok(Some(cmd)) => cmd,
                Ok(None) => continue,
                Err(e) => {
                    let line = line_of(&stripped, c.text);
                    let _ = writeln!(log, "FAIL {}:{}: bad run command: {}", shown, line, e.message);
                    t.failed += 1;
                    continue;
                }
            };
            let line = line_of(&stripped, c.text);
            let here = format!("{}:{}: {}", shown, line, c.text.trim_start_matches([';', ' ']));
            if let Some((why, fail)) = blocked.get(&name) {
                if *fail {
                    let _ = writeln!(log, "FAIL {}: %{}: {}", here, name, why);
                    t.failed += 1;
                } else {
                    let _ = writeln!(log, "SKIP {}: %{}: {}", here, name, why);
                    t.skipped += 1;
                }
                continue;
            }
            match run_one(program.as_ref().unwrap(), &store, f, wrappers.get(&name).map(|s| s.as_str()), &cmd, opts) {
                Ok(Checked::Agrees) => {
                    if opts.verbose {
                        let _ = writeln!(log, "PASS {}", here);
                    }
                    t.passed += 1;
                }
                Ok(Checked::NotRun(why)) => {
                    let _ = writeln!(log, "PASS {} (not checked against the interpreter: {})", here, why);
                    t.passed += 1;
                    t.unchecked += 1;
                }
                Ok(Checked::InterpreterWrong(why)) => {
                    let _ = writeln!(log, "PASS {} (note: {}; the simulator agrees with the file)", here, why);
                    t.passed += 1;
                    t.interp_disagrees += 1;
                }
                Err(m) => {
                    let _ = writeln!(log, "FAIL {}: {}", here, m);
                    t.failed += 1;
                }
            }
        }
    }
    t
}

fn check_compile<'a>(ef: &elf::Function, comments: impl Iterator<Item = &'a str>) -> Result<(), String> {
    let mut b = filecheck::CheckerBuilder::new();
    for c in comments {
        let body = c.trim_start_matches(';').trim_start();
        b.directive(body).map_err(|e| format!("bad check directive `{}`: {}", body, e))?;
    }
    let checker = b.finish();
    let dis = ursa_emit::asm::disassemble_function(ef).map_err(|e| e.to_string())?;
    if checker.is_empty() {
        return Ok(());
    }
    match checker.explain(&dis, filecheck::NO_VARIABLES) {
        Ok((true, _)) => Ok(()),
        Ok((false, explain)) => Err(format!("filecheck failed:\n{}\ndisassembly:\n{}", explain, dis)),
        Err(e) => Err(format!("filecheck error: {}", e)),
    }
}

/// The value of `ty` held in the 64 bits `bits`.
pub(crate) fn data_value(ty: Type, bits: u64) -> Option<DataValue> {
    Some(match ty {
        types::I8 => DataValue::I8(bits as i8),
        types::I16 => DataValue::I16(bits as i16),
        types::I32 => DataValue::I32(bits as i32),
        types::I64 => DataValue::I64(bits as i64),
        types::F16 => DataValue::F16(Ieee16::with_bits(bits as u16)),
        types::F32 => DataValue::F32(Ieee32::with_bits(bits as u32)),
        types::F64 => DataValue::F64(Ieee64::with_bits(bits)),
        _ => return None,
    })
}

/// The value of the 128-bit type `ty` (`i128`, `f128`) with bits `bits`.
pub(crate) fn wide_value(ty: Type, bits: u128) -> Option<DataValue> {
    Some(match ty {
        types::I128 => DataValue::I128(bits as i128),
        types::F128 => DataValue::F128(Ieee128::with_bits(bits)),
        _ => return None,
    })
}

/// The bits of a value of a 128-bit type (`i128`, `f128`).
pub(crate) fn wide_bits(v: &DataValue) -> Option<u128> {
    Some(match v {
        DataValue::I128(x) => *x as u128,
        DataValue::F128(x) => x.bits(),
        _ => return None,
    })
}

/// The argument or result slots (`R[4+2k : 5+2k]`) `params` take: two for
/// an `i128` or `f128` (its halves), one for every other type.
pub(crate) fn abi_slots(params: &[cranelift_codegen::ir::AbiParam]) -> usize {
    params.iter().map(|p| if wide_value(p.value_type, 0).is_some() { 2 } else { 1 }).sum()
}

pub(crate) fn bits_of(v: &DataValue) -> Option<u64> {
    Some(match v {
        DataValue::I8(x) => *x as u8 as u64,
        DataValue::I16(x) => *x as u16 as u64,
        DataValue::I32(x) => *x as u32 as u64,
        DataValue::I64(x) => *x as u64,
        DataValue::F16(x) => x.bits() as u64,
        DataValue::F32(x) => x.bits() as u64,
        DataValue::F64(x) => x.bits(),
        _ => return None,
    })
}

/// Cranelift's runner comparison of results (`RunCommand::run`): bitwise, so
/// that a float result must have the expected bit pattern (NaN payload and
/// the sign of zero included).
fn same_bits(a: &[DataValue], b: &[DataValue]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.bitwise_eq(y))
}

/// The differential check against cranelift-interpreter: bitwise, except
/// that any NaN matches any NaN of the same type. The interpreter computes
/// with the host's floating point, whose NaN payloads (which input's NaN an
/// `fadd` passes on, the x86 default NaN's sign) CLIF does not specify;
/// the expected values written in the file are still compared bitwise.
fn agrees_with_interpreter(a: &[DataValue], b: &[DataValue]) -> bool {
    a.len() == b.len()
        && a.iter().zip(b).all(|(x, y)| match (x, y) {
            (DataValue::F16(p), DataValue::F16(q)) => p.bits() == q.bits() || (p.is_nan() && q.is_nan()),
            (DataValue::F32(p), DataValue::F32(q)) => p.bits() == q.bits() || (p.is_nan() && q.is_nan()),
            (DataValue::F64(p), DataValue::F64(q)) => p.bits() == q.bits() || (p.is_nan() && q.is_nan()),
            (DataValue::F128(p), DataValue::F128(q)) => p.bits() == q.bits() || (p.is_nan() && q.is_nan()),
            _ => x.bitwise_eq(y),
        })
}

pub(crate) fn show(vals: &[DataValue]) -> String {
    let s: Vec<String> = vals.iter().map(|v| v.to_string()).collect();
    if s.len() == 1 {
        s[0].clone()
    } else {
        format!("[{}]", s.join(", "))
    }
}

/// What cranelift-interpreter made of a run.
enum Reference {
    Values(Vec<DataValue>),
    /// A trap: its text, and the CLIF trap code's name for a `trap`-family
    /// instruction (`int_ovf`, `user7`).
    Trap(String, Option<String>),
    /// It could not run the line (a panic inside it, an unsupported feature).
    NotRun(String),
}

fn panic_text(p: &(dyn std::any::Any + Send)) -> String {
    p.downcast_ref::<String>().cloned().or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string())).unwrap_or_else(|| "no message".into())
}

/// The name of the thread cranelift-interpreter runs on.
const INTERP_THREAD: &str = "cranelift-interpreter";

/// A panic inside cranelift-interpreter is caught and reported on its run
/// line ("not checked against the interpreter: it panicked: …"); the default
/// hook would also print it with a backtrace hint. Installed once, for that
/// thread only: every other panic still reaches the previous hook.
fn quiet_interpreter_panics() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if std::thread::current().name() != Some(INTERP_THREAD) {
                previous(info);
            }
        }));
    });
}

/// Runs `name` in cranelift-interpreter on a thread with a large stack, with
/// fuel. Running out of fuel is an `Err` (a failure: the line did not finish).
fn interpret_reference(store: &FunctionStore, name: &str, args: &[DataValue]) -> Result<Reference, String> {
    quiet_interpreter_panics();
    std::thread::scope(|s| {
        let h = std::thread::Builder::new().name(INTERP_THREAD.into()).stack_size(INTERP_STACK).spawn_scoped(s, || {
            let state = InterpreterState::default().with_function_store(store.clone());
            let mut interp = Interpreter::new(state).with_fuel(Some(TEST_FUEL));
            catch_unwind(AssertUnwindSafe(|| interp.call_by_name(name, args)))
        });
        let h = match h {
            Ok(h) => h,
            Err(e) => return Ok(Reference::NotRun(format!("could not start its thread: {}", e))),
        };
        match h.join() {
            Ok(Ok(Ok(ControlFlow::Return(v)))) => Ok(Reference::Values(v.to_vec())),
            Ok(Ok(Ok(ControlFlow::Trap(t)))) => {
                let code = match &t {
                    CraneliftTrap::User(c) => Some(c.to_string()),
                    _ => None,
                };
                Ok(Reference::Trap(t.to_string(), code))
            }
            Ok(Ok(Ok(_))) => Ok(Reference::NotRun("it stopped without returning".into())),
            Ok(Ok(Err(InterpreterError::FuelExhausted))) => {
                Err(format!("cranelift-interpreter did not finish within {} instructions", TEST_FUEL))
            }
            Ok(Ok(Err(e))) => Ok(Reference::NotRun(format!("error: {}", e))),
            Ok(Err(p)) | Err(p) => Ok(Reference::NotRun(format!("it panicked: {}", panic_text(&*p)))),
        }
    })
}

/// A simulator run: its results or the trap as a message, whether the
/// simulator stopped it as a runaway (step limit, stack fault), and the text
/// of an explicit trap.
pub(crate) type SimCall = (Result<Vec<DataValue>, String>, Option<&'static str>, Option<String>);

/// The launch configuration of the runner's calls.
pub(crate) fn test_config() -> LaunchConfig {
    LaunchConfig { strict: true, step_limit: Some(TEST_STEPS), local_size: TEST_STACK, ..Default::default() }
}

/// `--jit-check`: every simulator call of the runner is also made through
/// the simulator's translated code and through its interpreter (both without
/// strict mode), which must agree exactly.
pub static JIT_CHECK: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// With [`JIT_CHECK`] on: runs `function` on copies of `gpu` with the
/// translation to host code on and off and compares the results, the
/// statistics, the trap and the global memory at `read` (address, bytes).
pub(crate) fn jit_check(
    gpu: &Gpu,
    program: &Program,
    function: &str,
    words: &[u32],
    nret: usize,
    read: Option<(u64, u64)>,
) -> Result<(), String> {
    if !JIT_CHECK.load(std::sync::atomic::Ordering::Relaxed) {
        return Ok(());
    }
    let run = |jit: bool| {
        let mut g = gpu.clone();
        let engine = if jit { Engine::Jit } else { Engine::IssueLoop };
        let cfg = LaunchConfig { strict: false, engine, jit_threshold: 1, ..test_config() };
        let r = g.call_with(program, function, words, nret, &cfg).map_err(|t| t.to_string());
        let mem = read.map(|(a, n)| g.read(a, n).map_err(|t| t.to_string()));
        format!("{:?} {:?}", r, mem)
    };
    let (jit, interp) = (run(true), run(false));
    if jit == interp {
        Ok(())
    } else {
        Err(format!("the simulator's JIT and its interpreter disagree on `{}`:\n  jit:    {}\n  interp: {}", function, jit, interp))
    }
}

/// Of a stopped run: whether the simulator stopped it as a runaway (step
/// limit, stack fault), and the text of an explicit trap.
pub(crate) fn stop_kind<T>(sim: &Result<T, ursa_sim::Trap>) -> (Option<&'static str>, Option<String>) {
    // A run the simulator stopped for its step limit or a stack fault
    // fails whatever the interpreter says; do not spend its fuel (or its
    // host stack, on runaway recursion) finding out.
    let runaway = match sim {
        Err(t) => match &t.kind {
            TrapKind::StepLimit(_) => Some("the simulator's step limit"),
            TrapKind::OutOfBounds { space: Space::Local, .. } => Some("a local-memory (stack) fault on the simulator"),
            _ => None,
        },
        Ok(_) => None,
    };
    let explicit = match sim {
        Err(t) => match &t.kind {
            TrapKind::Explicit(m) => Some(m.clone()),
            _ => None,
        },
        Ok(_) => None,
    };
    (runaway, explicit)
}

/// Calls `f` (in `program`) on the simulator with the runner's limits.
fn call_simulator(program: &Program, f: &Function, args: &[DataValue]) -> Result<SimCall, String> {
    // On the simulator: argument k in R[4+2k : 5+2k].
    let mut words = Vec::new();
    for a in args {
        // An i128 or f128 takes two argument slots, low half first (docs/abi.md).
        let halves = match wide_bits(a) {
            Some(x) => vec![x as u64, (x >> 64) as u64],
            None => vec![bits_of(a).ok_or_else(|| format!("argument {} is not of a supported type", a))?],
        };
        for b in halves {
            words.push(b as u32);
            words.push((b >> 32) as u32);
        }
    }
    let nret = 2 * abi_slots(&f.signature.returns);
    let mut gpu = Gpu::new();
    jit_check(&gpu, program, &symbol_name(f), &words, nret, None)?;
    let sim = gpu.call_with(program, &symbol_name(f), &words, nret, &test_config());
    let (runaway, explicit) = stop_kind(&sim);
    let ours: Result<Vec<DataValue>, String> = match sim {
        Ok((regs, _)) => {
            let slot = |k: usize| regs[2 * k] as u64 | (regs[2 * k + 1] as u64) << 32;
            let mut k = 0;
            let mut vals = Vec::new();
            for r in &f.signature.returns {
                if abi_slots(&[*r]) == 2 {
                    vals.push(
                        wide_value(r.value_type, slot(k) as u128 | (slot(k + 1) as u128) << 64)
                            .ok_or_else(|| format!("result type {}", r.value_type)),
                    );
                    k += 2;
                } else {
                    vals.push(data_value(r.value_type, slot(k)).ok_or_else(|| format!("result type {}", r.value_type)));
                    k += 1;
                }
            }
            vals.into_iter().collect()
        }
        Err(trap) => Err(format!("trapped on the simulator: {}", trap)),
    };
    Ok((ours, runaway, explicit))
}

/// Links compiled functions (and the runtime routines they call) into one
/// object, writes it as ELF and loads it for the simulator.
pub fn link_for_test(functions: Vec<elf::Function>) -> Result<Program, String> {
    let mut obj = elf::Object { functions, ..Default::default() };
    ursa_backend::link_runtime(&mut obj).map_err(|e| e.to_string())?;
    size_test_stacks(&mut obj);
    Program::load(&elf::write(&obj)).map_err(|e| e.to_string())
}

/// Gives each function of a test object the stack a run starting in it
/// needs: its frame and its deepest call chain (`call_stack::chain_needs`;
/// a recursive one gets `RECURSIVE_STACK`), and at least [`TEST_STACK`].
fn size_test_stacks(obj: &mut elf::Object) {
    let needs = call_stack::chain_needs(obj);
    for (f, n) in obj.functions.iter_mut().zip(needs) {
        f.local_size = n.max(TEST_STACK);
    }
}

/// A run the simulator did not finish with results.
#[derive(Clone, Debug)]
pub struct SimStop {
    pub message: String,
    /// Stopped by a trap instruction (`BPT.TRAP`, a CLIF trap), not by a
    /// fault, a hazard or a limit.
    pub explicit: bool,
}

impl std::fmt::Display for SimStop {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

/// Calls `f` (already in `program`) on the simulator with the test runner's
/// limits: its results, or why it stopped.
pub fn simulate(program: &Program, f: &Function, args: &[DataValue]) -> Result<Vec<DataValue>, SimStop> {
    match call_simulator(program, f, args) {
        Err(m) => Err(SimStop { message: m, explicit: false }),
        Ok((Ok(v), _, _)) => Ok(v),
        Ok((Err(m), _, explicit)) => Err(SimStop { message: m, explicit: explicit.is_some() }),
    }
}

/// Calls `f` in cranelift-interpreter (with the test runner's fuel, on its
/// big-stack thread; `store` holds every function the call may reach):
/// `Some(Ok(results))`, `Some(Err(trap))`, `Some(Err("interpreter error: …"))`
/// when it ran out of fuel, or `None` when it could not run the call (a panic
/// or a missing feature of the reference, not a result).
pub fn interpret(store: &FunctionStore, f: &Function, args: &[DataValue]) -> Option<Result<Vec<DataValue>, String>> {
    match interpret_reference(store, &f.name.to_string(), args) {
        Ok(Reference::Values(v)) => Some(Ok(v)),
        Ok(Reference::Trap(t, _)) => Some(Err(format!("trap {}", t))),
        Ok(Reference::NotRun(_)) => None,
        Err(e) => Some(Err(format!("interpreter error: {}", e))),
    }
}

/// How a passing run line was checked against cranelift-interpreter.
enum Checked {
    /// The interpreter gives the same.
    Agrees,
    /// The interpreter could not run it (the reason).
    NotRun(String),
    /// The interpreter gives something else than the value the file
    /// expects, and the simulator gives the expected value (what the
    /// interpreter gave).
    InterpreterWrong(String),
}

/// Does the simulator's `ours` match the `; run:` line's expectation? (A
/// `print:` line has none: no.)
fn matches_file(ours: &Result<Vec<DataValue>, String>, expect: Option<(&Comparison, &Vec<DataValue>)>) -> bool {
    match (ours, expect) {
        (Ok(a), Some((Comparison::Equals, vals))) => same_bits(a, vals),
        _ => false,
    }
}

/// Runs one `; run:` / `; print:` line (through `wrapper`, the generated
/// caller, when `f` has stack-passed arguments or results).
fn run_one(
    program: &Program,
    store: &FunctionStore,
    f: &Function,
    wrapper: Option<&str>,
    cmd: &RunCommand,
    opts: &TestOptions,
) -> Result<Checked, String> {
    let (inv, expect) = match cmd {
        RunCommand::Run(inv, cmp, vals) => (inv, Some((cmp, vals))),
        RunCommand::Print(inv) => (inv, None),
    };
    let (ours, runaway, explicit) = match wrapper {
        Some(w) => call_simulator_wrapped(program, f, w, &inv.args)?,
        None => call_simulator(program, f, &inv.args)?,
    };
    let mut unchecked = Checked::Agrees;
    if opts.differential && runaway.is_none() {
        match interpret_reference(store, &f.name.to_string(), &inv.args)? {
            Reference::Values(b) => match &ours {
                Ok(a) if !agrees_with_interpreter(a, &b) && matches_file(&ours, expect) => {
                    unchecked = Checked::InterpreterWrong(format!("cranelift-interpreter gives {}", show(&b)))
                }
                Ok(a) if !agrees_with_interpreter(a, &b) => {
                    return Err(format!("simulator gives {}, cranelift-interpreter gives {}", show(a), show(&b)))
                }
                Err(e) => return Err(format!("{}; cranelift-interpreter gives {}", e, show(&b))),
                Ok(_) => {}
            },
            Reference::Trap(t, _) if matches_file(&ours, expect) => {
                unchecked = Checked::InterpreterWrong(format!("cranelift-interpreter traps: {}", t))
            }
            Reference::Trap(t, code) => {
                if let Ok(a) = &ours {
                    return Err(format!("simulator gives {}, cranelift-interpreter traps: {}", show(a), t));
                }
                // Both trap: a `BPT.TRAP` must carry the interpreter's trap code.
                if let (Some(m), Some(c)) = (&explicit, &code) {
                    if !m.contains(&format!("({})", c)) {
                        return Err(format!("the simulator traps with {}, cranelift-interpreter with {}", m, c));
                    }
                }
            }
            Reference::NotRun(why) => unchecked = Checked::NotRun(why),
        }
    } else if let (Some(what), Err(e)) = (runaway, &ours) {
        return Err(format!("{} (stopped by {}; not run on the interpreter)", e, what));
    }
    let ours = ours?;
    if let Some((cmp, vals)) = expect {
        let eq = same_bits(&ours, vals);
        let ok = match cmp {
            Comparison::Equals => eq,
            Comparison::NotEquals => !eq,
        };
        if !ok {
            return Err(format!("expected {} {}, got {}", cmp, show(vals), show(&ours)));
        }
    } else {
        println!("{}: {}", inv.func, show(&ours));
    }
    Ok(unchecked)
}

/// What the kernel intrinsics do in the runner's launches, as CLIF functions
/// for cranelift-interpreter: a `; run:` line is one thread of a 1x1x1 launch
/// (`Gpu::call`), so every index is 0 and every dimension 1, a barrier does
/// nothing, a vote or ballot sees the one lane, and a relaxed atomic is
/// CLIF's own (`atomic_rmw`, `atomic_cas`; a float add a load, `fadd` and
/// store). Shuffles, the clock and the fast-math functions (whose results
/// are the simulator's MUFU) are not modelled: a line using one is reported
/// as not checked against the interpreter.
fn intrinsic_models() -> Vec<Function> {
    use ursa_isel::intrinsics::{by_name, AtomicIntr, Intrinsic};
    let mut text = String::new();
    for name in ursa_isel::intrinsics::names() {
        let body = match by_name(name) {
            Some(Intrinsic::Const0(_)) => "() -> i32 {\nblock0:\n    v0 = iconst.i32 1\n    return v0\n}".to_string(),
            Some(Intrinsic::Special(_)) => "() -> i32 {\nblock0:\n    v0 = iconst.i32 0\n    return v0\n}".to_string(),
            Some(Intrinsic::Barrier) => "() {\nblock0:\n    return\n}".to_string(),
            Some(Intrinsic::Vote(_, t)) => {
                format!("({t}) -> i8 {{\nblock0(v0: {t}):\n    v9 = iconst.{t} 0\n    v1 = icmp ne v0, v9\n    return v1\n}}")
            }
            Some(Intrinsic::Ballot(t)) => format!(
                "({t}) -> i32 {{\nblock0(v0: {t}):\n    v9 = iconst.{t} 0\n    v1 = icmp ne v0, v9\n    v2 = uextend.i32 v1\n    return v2\n}}"
            ),
            Some(Intrinsic::Atomic(AtomicIntr::Rmw(op), t)) => {
                format!("(i64, {t}) -> {t} {{\nblock0(v0: i64, v1: {t}):\n    v2 = atomic_rmw.{t} {op} v0, v1\n    return v2\n}}")
            }
            Some(Intrinsic::Atomic(AtomicIntr::Cas, t)) => {
                format!("(i64, {t}, {t}) -> {t} {{\nblock0(v0: i64, v1: {t}, v2: {t}):\n    v3 = atomic_cas.{t} v0, v1, v2\n    return v3\n}}")
            }
            Some(Intrinsic::Atomic(AtomicIntr::Fadd, t)) => format!(
                "(i64, {t}) -> {t} {{\nblock0(v0: i64, v1: {t}):\n    v2 = load.{t} v0\n    v3 = fadd v2, v1\n    store v3, v0\n    return v2\n}}"
            ),
            _ => continue,
        };
        text.push_str(&format!("function %{}{}\n", name, body));
    }
    cranelift_reader::parse_functions(&text).expect("the intrinsic models parse")
}

#[cfg(test)]
mod tests {
    use super::{file_fminmax_nan, pinned_architecture, Pinned};
    use std::path::Path;
    use ursa_backend::FminmaxNan;

    #[test]
    fn a_file_sets_the_fminmax_nan_rule_once() {
        assert_eq!(file_fminmax_nan("test run\n; ursa.fminmax_nan x86\n"), Ok(Some(FminmaxNan::X86)));
        assert_eq!(file_fminmax_nan(";ursa.fminmax_nan first-operand"), Ok(Some(FminmaxNan::FirstOperand)));
        assert_eq!(file_fminmax_nan("test run\n; ursa.shared %ursa_shared_x 4\n"), Ok(None));
        let e = file_fminmax_nan("test run\n; ursa.fminmax_nan arm\n").unwrap_err();
        assert!(e.starts_with("2: `ursa.fminmax_nan arm`: no such rule (the rules: canonical, first-operand, x86)"), "{e}");
        assert!(file_fminmax_nan("; ursa.fminmax_nan\n").unwrap_err().starts_with("1: `ursa.fminmax_nan` takes one rule"));
        let e = file_fminmax_nan("; ursa.fminmax_nan x86\n\n; ursa.fminmax_nan canonical\n").unwrap_err();
        assert_eq!(e, "3: a second `ursa.fminmax_nan` (the first at line 1)");
    }

    #[test]
    fn only_nondeterministic_files_with_targets_are_pinned() {
        let x86 = "test run\ntarget x86_64\ntarget x86_64 skylake\n";
        let arm = "test run\ntarget aarch64\ntarget s390x\n";
        let riscv = "test run\ntarget riscv64 has_v\ntarget riscv64 has_v has_c\n";
        let other = "test run\ntarget pulley64\ntarget mips\n";
        let at = |n: &str, t: &str| pinned_architecture(Path::new(n), t);
        assert_eq!(at("simd-fmax-fmin-nondeterministic-x86_64.clif", x86), Pinned::As(FminmaxNan::X86));
        assert_eq!(at("simd-fmax-fmin-nondeterministic-aarch64.clif", arm), Pinned::As(FminmaxNan::FirstOperand));
        assert_eq!(at("simd-fmax-fmin-nondeterministic-riscv64.clif", riscv), Pinned::As(FminmaxNan::Canonical));
        assert_eq!(at("x-nondeterministic.clif", other), Pinned::Skip("mips and pulley64".into()));
        assert_eq!(at("simd-snarrow-aarch64.clif", x86), Pinned::No);
        assert_eq!(at("x-nondeterministic.clif", "test run\n"), Pinned::No);
    }
}
