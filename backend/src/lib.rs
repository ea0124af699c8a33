//! The Ursa compiler: Cranelift IR in, machine code for the Ursa GPU out.
//!
//! The pipeline, one pass per file:
//!
//! 1. verify — Cranelift's verifier ([`compile`]); at [`OptLevel::Speed`]
//!    the mid-end (`docs/optimization.md`): [`mid::opt_inline`] — calls of
//!    small or single-use device functions replaced by the callee's body;
//!    then (at every level) [`mid::legalize_try_calls`] — `try_call`s become
//!    a call and a jump to their normal-return block (nothing throws);
//!    [`mid::legalize_vectors`] — every vector value becomes its lanes; Cranelift's [`mid::opt_unreachable_code`], [`mid::opt_constant_phis`]
//!    and [`mid::opt_egraph`] (value numbering, loop-invariant code motion,
//!    constant folding, redundant loads);
//! 2. [`mid::legalize_libcalls`] — calls of the float library routines
//!    Cranelift emits become their instruction; [`mid::legalize_f16`] — every `f16` value becomes its `i16` bits,
//!    its arithmetic computed through `f32`; [`mid::legalize_f128`] — every `f128` value becomes its `i128` bits;
//!    [`mid::legalize_i128`] — every `i128` value becomes two `i64` halves;
//!    [`mid::legalize_div`] — rewrites CLIF the rules do not handle directly
//!    (division and remainder become software sequences);
//!    and [`mid::legalize_memory`] — loads and stores that may be misaligned get
//!    a run-time alignment check and a byte-wise slow path; [`mid::legalize_atomics`] —
//!    atomics without a machine instruction become compare-and-swap loops;
//! 3. instruction selection — `ursa_isel::lower` runs the ISLE rules;
//! 4. [`opt::opt_narrow_pairs`] — 64-bit values of which only the low word is read
//!    (shared-memory addresses) computed in 32 bits; [`opt::opt_fold_zero`] — copies
//!    of zero read as `RZ`; [`opt::opt_fold_imm`] — copies of other constants read
//!    as immediates (the `_RI`/`_RIR`/`_RRI` forms); [`opt::opt_fold_cmem`] — kernel parameters and launch
//!    dimensions read from the constant bank by the instructions that use
//!    them;
//! 5. [`opt::opt_if_convert`] — short conditional blocks guarded instead of branched
//!    over; [`opt::opt_sink_block_args`] — values passed only as block arguments
//!    computed last in their block (loop updates share the register of the
//!    value they replace); [`opt::opt_uniform`] — warp-uniform values moved to the
//!    uniform datapath (U* instructions, UR and UP registers, uniform
//!    branches, loop counters of kernels) where every reader takes them;
//!    [`reconv::insert_breg_saves`] — the convergence-barrier registers a device function
//!    or a region saves and restores (`BMOV`, planned with the regions);
//! 6. [`regalloc::lower_bundles`] — the multi-piece instructions of selection split into
//!    one machine instruction each; at [`OptLevel::Speed`] [`opt::opt_hoist_invariants`] —
//!    loop-invariant instructions moved to the loop's pre-header (within the register budget),
//!    and [`opt::opt_instr_sched_prepass`] —
//!    instructions reordered in their block so latencies overlap (a list scheduler under a
//!    register budget); [`regalloc::assign_regs_ssa`] — one final register per value, on the SSA code,
//!    when the values fit; else [`regalloc::assign_regs_regalloc2`] — regalloc2 over R / R-pairs
//!    / P; both give an [`regalloc::assignment::Assignment`] (checked by
//!    [`regalloc::check_assignment`] or regalloc2's checker);
//! 7. [`emit::encode`] — allocated code to machine instructions, pseudo-instructions
//!    expanded; then [`reconv::insert_reconvergence`] — `BSSY`/`BSYNC` around the
//!    divergent regions of a kernel (planned on CLIF with [`mid::divergence`]);
//! 8. [`regalloc::pack_regs`] — after regalloc2, the allocated registers renamed densely from `R0` up
//!    (one file for singles and pairs; the UR and UP files likewise), copies that became no-ops deleted;
//!    [`regalloc::place_spill_slots`] repeats layout and packing to keep as many of
//!    regalloc2's spill slots as fit in registers;
//! 9. [`emit::opt_branches`] — jump threading (through the edge blocks the deleted
//!    copies left empty), `@P EXIT` / `@P RET` for branches to an exit, no
//!    branches to the next instruction; [`reconv::opt_idle_regions`] — convergence
//!    regions left without a branch in them (after [`opt::opt_if_convert`]) deleted;
//! 10. [`emit::calc_instr_deps`] — the scheduling control bits;
//! 11. [`emit::encode::encode`] — branch offsets, relocations, bytes (one encoder:
//!    `ursa_emit::Inst::encode`).

pub mod emit;
mod error;
pub mod ir;
pub mod mid;
pub mod module;
pub mod opt;
pub mod pipeline;
pub mod reconv;
pub mod regalloc;

pub use error::Error;
pub use module::runtime::link as link_runtime;
pub use module::symbol_name;
pub use module::ursa_module::UrsaModule;
pub use pipeline::{Ir, Pass};
pub use ursa_isel::lower::FminmaxNan;
pub use ursa_isel::DataLayout;

use emit::{calc_instr_deps, encode, lower_vcode, opt_branches, opt_copy_prop_backward};
use mid::{
    legalize_atomics, legalize_div, legalize_f128, legalize_f16, legalize_i128, legalize_libcalls, legalize_memory, legalize_try_calls,
    legalize_vectors, opt_constant_phis, opt_egraph, opt_inline, opt_merge_accesses, opt_step_pointers, opt_unreachable_code,
    opt_unroll_loops,
};
use module::{call_graph, call_stack, runtime, shared_mem};
use opt::{
    opt_fold_cmem, opt_fold_imm, opt_fold_zero, opt_hoist_invariants, opt_if_convert, opt_instr_sched_prepass, opt_narrow_pairs,
    opt_sink_block_args, opt_uniform,
};
use reconv::{insert_breg_saves, insert_reconvergence, opt_idle_regions, plan_reconvergence};
use regalloc::{assign_regs_regalloc2, assign_regs_ssa, assignment, check_assignment, lower_bundles, pack_regs};

use cranelift_codegen::ir::Function;
use pipeline::Run;
use regalloc::place_spill_slots::{SlotSearch, Verdict};
use ursa_emit::elf;

/// How much the compiler optimizes (Cranelift's `opt_level` setting; `ursa
/// compile --opt-level`, `ursa test --opt-level` or a filetest's `set
/// opt_level=…`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum OptLevel {
    /// No mid-end pass: the CLIF is legalized and lowered as written.
    None,
    /// The mid-end runs (`docs/optimization.md`): inlining, unreachable-code
    /// and constant-phi removal, the e-graph pass.
    #[default]
    Speed,
}

impl OptLevel {
    /// The level of Cranelift's setting value `name` (`speed_and_size` is
    /// `speed`).
    pub fn from_name(name: &str) -> Option<OptLevel> {
        match name {
            "none" => Some(OptLevel::None),
            "speed" | "speed_and_size" => Some(OptLevel::Speed),
            _ => None,
        }
    }
}

/// Compiler options.
#[derive(Clone, Debug, Default)]
pub struct Options {
    /// How much to optimize.
    pub opt_level: OptLevel,
    /// The NaN `fmin`/`fmax` return (`ursa compile --fminmax-nan`).
    pub fminmax_nan: FminmaxNan,
    /// The device functions of the module that calls may inline (at
    /// [`OptLevel::Speed`]; [`Options::for_module`] fills it); without it no
    /// call is inlined.
    pub inline: Option<std::sync::Arc<opt_inline::Callees>>,
    /// Mark the function as a kernel (launchable) in the object file.
    pub kernel: bool,
    /// Check the register allocation (symbolic execution of the allocated code
    /// against the virtual-register code: [`regalloc::check_assignment`] for the SSA
    /// assignment, regalloc2's checker for regalloc2's); an error is an
    /// internal compiler error. The test runner turns it on. It also
    /// verifies the CLIF the mid-end produces.
    pub check_regalloc: bool,
    /// Allocate with regalloc2 even where `assign_regs_ssa` could assign the
    /// registers on the SSA code, to compare the two paths (the `ursa`
    /// command sets it when the environment variable `URSA_REGALLOC2=1` is set).
    pub regalloc2: bool,
    /// Name each function left to regalloc2 on stderr, with the reason the
    /// SSA assignment gave up (the `ursa` command sets it for
    /// `URSA_TRACE_ALLOCATOR`).
    pub trace_allocator: bool,
    /// Fill in [`Compiled::pack`] (for `--stats`); without it the counts
    /// may be left at zero where taking them would cost a scan of the code.
    pub stats: bool,
    /// Passes after which their output is printed into [`Compiled::printed`].
    pub print_after: Vec<Pass>,
    /// The file's static shared-memory variables ([`module::shared_mem::parse`]).
    pub shared: shared_mem::SharedLayout,
    /// Where the data objects in global or constant memory a function may
    /// name (`symbol_value`) are: the offset of each one's address in the
    /// address table, constant bank 14, and of each read-only one in
    /// constant bank 3 ([`UrsaModule`] fills it; `docs/module.md`, "Data
    /// objects").
    pub data: DataLayout,
    /// What the rest of the module tells the reconvergence pass
    /// ([`module::call_graph::module_facts`]); without it a device function saves
    /// every convergence-barrier register it uses, and calls are not
    /// followed to CTA barriers.
    pub module: Option<std::sync::Arc<reconv::plan::ModuleFacts>>,
    /// The module's functions after the CLIF passes, by object symbol, as
    /// the module's facts were planned on ([`Options::for_module`] fills
    /// it): [`compile`] takes a function from it rather than running the
    /// passes again ([`module::call_graph::Prepared`]).
    pub prepared: Option<std::sync::Arc<std::collections::HashMap<String, module::call_graph::Prepared>>>,
}

impl Options {
    /// These options for the functions `funcs` of one module (`kernels[i]`:
    /// is `funcs[i]` a kernel): the callees calls may inline (at
    /// [`OptLevel::Speed`]) and the module's facts for reconvergence.
    pub fn for_module(&self, funcs: &[Function], kernels: &[bool]) -> Options {
        let inline = (self.opt_level == OptLevel::Speed).then(|| std::sync::Arc::new(opt_inline::Callees::new(funcs, kernels)));
        let opts = Options { inline, ..self.clone() };
        let (facts, prepared) = call_graph::module_facts(funcs, kernels, &opts);
        Options { module: Some(std::sync::Arc::new(facts)), prepared: Some(std::sync::Arc::new(prepared)), ..opts }
    }
}

/// A compiled function.
#[derive(Clone, Debug)]
pub struct Compiled {
    pub function: elf::Function,
    pub stats: assignment::RegallocStats,
    /// What packing did (complete only with [`Options::stats`]).
    pub pack: pack_regs::PackStats,
    /// The output of each pass named in `Options::print_after`.
    pub printed: String,
    /// The passes that ran, in order (those `place_spill_slots` repeats once
    /// per attempt).
    pub passes: Vec<Pass>,
}

/// The `.param` table of a kernel compiled from `func`: one parameter per
/// entry-block parameter (`v0`, `v1`, …), each at the next offset aligned to
/// its size (at most 8) — the layout the lowering reads them from and the one
/// `.param` gives — and typed from the signature (integers `i8`…`i128`,
/// `f32`, `f64`; other types, such as vectors, as bytes), so `ursa run`
/// checks arguments against it.
fn kernel_params(func: &Function) -> Vec<elf::Param> {
    let Some(entry) = func.layout.entry_block() else { return Vec::new() };
    let mut out = Vec::new();
    let mut ofs = 0u32;
    for &v in func.dfg.block_params(entry) {
        let ty = func.dfg.value_type(v);
        let size = ty.bytes().max(1);
        let kind = match ty {
            _ if ty.is_int() => elf::ParamKind::Int,
            cranelift_codegen::ir::types::F32 | cranelift_codegen::ir::types::F64 => elf::ParamKind::Float,
            _ => elf::ParamKind::Bytes,
        };
        let kind = if kind.allows_size(size) { kind } else { elf::ParamKind::Bytes };
        let align = size.min(8);
        ofs = ofs.next_multiple_of(align);
        out.push(elf::Param { name: v.to_string(), offset: ofs, size, kind });
        ofs += size;
    }
    out
}

/// Compiles one function.
pub fn compile(func: &Function, opts: &Options) -> Result<Compiled, Error> {
    // The runtime's routines are the compiler's own: not defined, not
    // called by the input (`module::runtime`).
    if runtime::is_routine(func) {
        let name = symbol_name(func);
        return Err(Error::unsupported(ursa_isel::intrinsics::check_definition(&name).err().map_or(name, |e| e.to_string())));
    }
    if !func.dfg.ext_funcs.is_empty() {
        ursa_isel::intrinsics::check_calls(func).map_err(|e| Error::unsupported(e.to_string()))?;
    }
    compile_checked(func, opts)
}

/// [`compile`] without its checks of the runtime's names (the runtime's own
/// routines are compiled through it).
pub(crate) fn compile_checked(func: &Function, opts: &Options) -> Result<Compiled, Error> {
    if func.layout.entry_block().is_none() {
        return Err(Error::Verifier(
            "the function body is empty: it needs at least one block ending in a terminator (`return`, `jump`, …)".into(),
        ));
    }
    // Frame introspection (what exception unwinding is built on) is refused
    // before the verifier, which would ask for a target ISA.
    for inst in func.layout.blocks().flat_map(|b| func.layout.block_insts(b)) {
        use cranelift_codegen::ir::Opcode;
        if matches!(func.dfg.insts[inst].opcode(), Opcode::GetFramePointer | Opcode::GetReturnAddress) {
            return Err(
                Error::unsupported("frame introspection (used by exception handling) is not supported").at(func.dfg.display_inst(inst))
            );
        }
    }
    if let Some(text) = mid::verifier_report(func) {
        // Instructions that need a Cranelift target ISA to verify are not
        // wrong input, just outside what this compiler supports.
        if text.contains("require an ISA") {
            return Err(Error::unsupported(format!("instructions that need a Cranelift target ISA:\n{}", text)));
        }
        return Err(Error::Verifier(text));
    }
    // The kernel parameter table of the function as written: an i128
    // parameter (16 bytes, 8-aligned) has the layout of its two halves.
    let params = if opts.kernel { kernel_params(func) } else { Vec::new() };
    if opts.kernel && func.signature.params.iter().any(|p| p.value_type.is_vector()) {
        return Err(Error::unsupported("a kernel parameter of a vector type is not supported (pass a pointer to the vector)"));
    }
    let mut run = Run::new(&opts.print_after);
    // What `--print-after` asks for is kept when a later pass fails, so the
    // code that led to an internal error can be read.
    match run_passes(func.clone(), opts, params, &mut run) {
        Ok(c) => Ok(Compiled { printed: run.printed, passes: run.ran.into_vec(), ..c }),
        Err(e) if run.printed.is_empty() => Err(e),
        Err(e) => Err(e.with_printed(&run.printed)),
    }
}

/// The passes of [`compile`] on the verified function, in the order of
/// [`Pass::ALL`], each recorded in `run` (which prints its output if asked).
fn run_passes(mut func: Function, opts: &Options, params: Vec<elf::Param>, run: &mut Run) -> Result<Compiled, Error> {
    // The module's facts were planned on the function after the CLIF
    // passes: the same function with the same options takes that copy.
    let prepared = opts.prepared.as_deref().and_then(|m| m.get(&module::symbol_name(&func)));
    match prepared.and_then(|p| p.reuse(&func, opts, run)) {
        Some(f) => func = f,
        None => run_clif_passes(&mut func, opts, run)?,
    }
    // After inlining: the shared variables of inlined callees are the
    // caller's own.
    let shared_size = opts.shared.function_size(&func)?;
    // One control-flow graph of the CLIF function (with its dominator trees,
    // computed on demand) and one divergence analysis for the region
    // planning and the uniform block parameters.
    let cfg = ir::cfg::Cfg::new(&func);
    let (reconv, div) = plan_reconvergence::plan_reconvergence(&func, &cfg, opts.kernel, opts.module.as_deref())
        .map_err(|e| e.in_pass(Pass::plan_reconvergence))?;
    run.ran(Pass::plan_reconvergence, &reconv);
    // Without static shared variables the offsets are always the same table.
    static NO_VARS: std::sync::OnceLock<std::collections::HashMap<String, u32>> = std::sync::OnceLock::new();
    let offsets;
    let shared = if opts.shared.vars.is_empty() {
        NO_VARS.get_or_init(|| opts.shared.offsets())
    } else {
        offsets = opts.shared.offsets();
        &offsets
    };
    let mut vcode = ursa_isel::lower(&func, opts.kernel, shared, &opts.data, opts.opt_level == OptLevel::Speed, opts.fminmax_nan)
        .map_err(|e| Error::from(e).in_pass(Pass::lower))?;
    run.ran(Pass::lower, &vcode);
    opt_narrow_pairs::opt_narrow_pairs(&mut vcode);
    run.ran(Pass::opt_narrow_pairs, &vcode);
    opt_fold_zero::opt_fold_zero(&mut vcode);
    run.ran(Pass::opt_fold_zero, &vcode);
    opt_fold_imm::opt_fold_imm(&mut vcode);
    run.ran(Pass::opt_fold_imm, &vcode);
    opt_fold_cmem::opt_fold_cmem(&mut vcode);
    run.ran(Pass::opt_fold_cmem, &vcode);
    opt_if_convert::opt_if_convert(&mut vcode);
    run.ran(Pass::opt_if_convert, &vcode);
    opt_sink_block_args::opt_sink_block_args(&mut vcode);
    run.ran(Pass::opt_sink_block_args, &vcode);
    let uniform_params = opt_uniform::uniform_params(&func, &cfg, div.as_ref(), opts.kernel, reconv.skipped.is_empty());
    opt_uniform::opt_uniform(&mut vcode, &uniform_params, || opt_uniform::divergent_blocks(&cfg, div.as_ref()));
    run.ran(Pass::opt_uniform, &vcode);
    insert_breg_saves::insert_breg_saves(&mut vcode, &reconv);
    run.ran(Pass::insert_breg_saves, &vcode);
    lower_bundles::lower_bundles(&mut vcode);
    run.ran(Pass::lower_bundles, &vcode);
    // The scheduler's block liveness serves the SSA assignment.
    let mut live = None;
    if opts.opt_level == OptLevel::Speed {
        opt_hoist_invariants::opt_hoist_invariants(&mut vcode);
        run.ran(Pass::opt_hoist_invariants, &vcode);
        live = Some(opt_instr_sched_prepass::opt_instr_sched_prepass_live(&mut vcode).1);
        run.ran(Pass::opt_instr_sched_prepass, &vcode);
    }
    // Registers chosen on the SSA code when the values fit, else regalloc2
    // (`docs/regalloc.md`).
    let ssa = if opts.regalloc2 { Err(assign_regs_ssa::GiveUp::Asked) } else { assign_regs_ssa::assign_regs_ssa_after(&vcode, live) };
    let asg = match ssa {
        Ok(asg) => {
            if opts.check_regalloc {
                check_assignment::check_assignment(&vcode, &asg).map_err(|e| e.in_pass(Pass::assign_regs_ssa))?;
            }
            run.ran(Pass::assign_regs_ssa, &asg);
            asg
        }
        Err(why) => {
            if opts.trace_allocator {
                eprintln!("%{}: regalloc2: {}", vcode.name.trim_start_matches('%'), why);
            }
            assign_regs_regalloc2::split_quads(&mut vcode)?;
            assign_regs_regalloc2::pair_abi_values(&mut vcode);
            let asg = assign_regs_regalloc2::assign_regs_regalloc2(&assign_regs_regalloc2::RaFunc::new(&vcode), opts.check_regalloc)
                .map_err(|e| e.in_pass(Pass::assign_regs_regalloc2))?;
            run.ran(Pass::assign_regs_regalloc2, &asg);
            asg
        }
    };
    // Layout, reconvergence and packing, once per choice of spill-slot homes
    // (`place_spill_slots`); the printed text is that of the attempt taken.
    let notes: String = reconv.skipped.iter().map(|s| format!("; no convergence barrier: {}\n", s)).collect();
    let mut search = SlotSearch::new(&asg);
    let mut kept = None;
    let (mut code, pack, homes) = loop {
        let homes = search.homes().clone();
        let mut attempt = Run::new(&opts.print_after);
        let mut code = lower_vcode::lower_vcode(&vcode, &asg, &homes).map_err(|e| e.in_pass(Pass::lower_vcode))?;
        attempt.ran(Pass::lower_vcode, &code);
        insert_reconvergence::insert_reconvergence(&mut code, &vcode, &reconv);
        attempt.ran(Pass::insert_reconvergence, &format_args!("{}{}", notes, code));
        let packed =
            if asg.ssa && asg.dense { pack_regs::pack_uniform_regs(&mut code, opts.stats) } else { pack_regs::pack_regs(&mut code) };
        let (pack, verdict) = match packed {
            Ok(mut pack) => {
                pack.copies_removed += code.dropped_copies;
                attempt.ran(Pass::pack_regs, &code);
                (Some(pack), search.outcome(Ok(()))?)
            }
            Err(why) => (None, search.outcome(Err(why))?),
        };
        run.ran.extend_from_slice(&attempt.ran);
        match (verdict, pack) {
            (Verdict::Accept, Some(pack)) => {
                run.printed.push_str(&attempt.printed);
                break (code, pack, homes);
            }
            (Verdict::Keep, Some(pack)) => kept = Some((attempt.printed, code, pack, homes)),
            (Verdict::UseKept, _) => match kept.take() {
                Some((printed, code, pack, homes)) => {
                    run.printed.push_str(&printed);
                    break (code, pack, homes);
                }
                None => return Err(Error::internal("the spill-slot search ended without code that fits").in_pass(Pass::place_spill_slots)),
            },
            (Verdict::Discard, _) => {}
            (verdict, None) => {
                return Err(Error::internal(format!("the spill-slot search took code that did not pack ({:?})", verdict))
                    .in_pass(Pass::place_spill_slots))
            }
        }
    };
    run.ran(Pass::place_spill_slots, &homes);
    opt_copy_prop_backward::opt_copy_prop_backward(&mut code);
    run.ran(Pass::opt_copy_prop_backward, &code);
    opt_branches::opt_branches(&mut code);
    run.ran(Pass::opt_branches, &code);
    opt_idle_regions::opt_idle_regions(&mut code);
    run.ran(Pass::opt_idle_regions, &code);
    // The registers are counted on the final instructions (nothing after
    // this pass renames one), not decoded back from the bytes.
    let registers = calc_instr_deps::calc_instr_deps(&mut code);
    debug_assert_eq!(registers, elf::registers_of(code.items.iter().map(|it| &it.inst)));
    run.ran(Pass::calc_instr_deps, &code);
    let (bytes, relocs) = encode::encode(&code).map_err(|e| e.in_pass(Pass::encode))?;
    run.ran(Pass::encode, &format_args!("{} bytes, {} relocations", bytes.len(), relocs.len()));
    let lines = line_table(&func, &code);
    Ok(Compiled {
        function: elf::Function {
            // `symbol_name(&func)`, from the name the lowering already wrote out.
            name: ursa_isel::lower::object_symbol(&vcode.name),
            kernel: opts.kernel,
            code: bytes,
            params,
            relocs,
            shared_size,
            local_size: code.frame_size,
            registers,
            lines,
        },
        stats: asg.stats(&homes),
        pack,
        printed: String::new(),
        passes: Vec::new(),
    })
}

/// The line table of `code`, lowered from `func`: each machine instruction
/// has the source location of the CLIF instruction it came from
/// ([`ir::code::Item::origin`]), taken as a line number (`ursa compile` gives
/// every instruction its line in the `.clif` file; `docs/binary-format.md`);
/// one with none has its predecessor's ([`elf::LineTable::from_lines`]). No
/// table when the function has no source locations. The file is left for
/// the caller to name.
fn line_table(func: &Function, code: &ir::code::Code) -> elf::LineTable {
    use cranelift_codegen::entity::EntityRef;
    if func.params.base_srcloc().is_default() {
        return elf::LineTable::default();
    }
    let n = func.dfg.num_insts();
    let line = |o: u32| -> Option<u32> {
        let inst = cranelift_codegen::ir::Inst::new(o as usize);
        let loc = if (o as usize) < n { func.srcloc(inst) } else { Default::default() };
        (!loc.is_default()).then(|| loc.bits())
    };
    elf::LineTable::from_lines("", code.items.iter().map(|it| it.origin.and_then(line)))
}

/// The passes on CLIF, in order: at [`OptLevel::Speed`] the mid-end
/// (inlining, unreachable code, constant phis, the e-graph), then the
/// legalizations. The module's facts
/// ([`call_graph::module_facts`]) run them to plan each function as it
/// will be compiled, and [`compile`] takes that output
/// ([`call_graph::Prepared`]) rather than running them twice.
pub(crate) fn run_clif_passes(func: &mut Function, opts: &Options, run: &mut Run) -> Result<(), Error> {
    let speed = opts.opt_level == OptLevel::Speed;
    if speed {
        if let Some(callees) = &opts.inline {
            opt_inline::opt_inline(func, callees).map_err(|e| e.in_pass(Pass::opt_inline))?;
        }
        run.ran(Pass::opt_inline, &func.display());
    }
    legalize_try_calls::legalize_try_calls(func).map_err(|e| e.in_pass(Pass::legalize_try_calls))?;
    run.ran(Pass::legalize_try_calls, &func.display());
    let lanes = legalize_vectors::legalize_vectors(func).map_err(|e| e.in_pass(Pass::legalize_vectors))?;
    run.ran(Pass::legalize_vectors, &func.display());
    if speed {
        mid::with_context(func, |ctx| -> Result<(), Error> {
            // In a function of one block no block is unreachable and no
            // block parameter is a phi (the entry's are the function's):
            // both passes are skipped, and the control-flow graph is made
            // only if the e-graph runs.
            let one_block = ctx.func.layout.entry_block().is_some_and(|e| ctx.func.layout.next_block(e).is_none());
            if !one_block {
                ctx.flowgraph();
                opt_unreachable_code::opt_unreachable_code(ctx).map_err(|e| e.in_pass(Pass::opt_unreachable_code))?;
            }
            run.ran(Pass::opt_unreachable_code, &ctx.func.display());
            if !one_block {
                opt_constant_phis::opt_constant_phis(ctx).map_err(|e| e.in_pass(Pass::opt_constant_phis))?;
            }
            run.ran(Pass::opt_constant_phis, &ctx.func.display());
            // (Small functions, and the lane code of vector functions, often
            // give the e-graph nothing to do, or only constants to fold.)
            if opt_egraph::has_work(&mut ctx.func, lanes) {
                if one_block {
                    ctx.flowgraph();
                }
                opt_egraph::opt_egraph(ctx).map_err(|e| e.in_pass(Pass::opt_egraph))?;
            }
            run.ran(Pass::opt_egraph, &ctx.func.display());
            Ok(())
        })?;
        opt_step_pointers::opt_step_pointers(func).map_err(|e| e.in_pass(Pass::opt_step_pointers))?;
        run.ran(Pass::opt_step_pointers, &func.display());
        opt_unroll_loops::opt_unroll_loops(func).map_err(|e| e.in_pass(Pass::opt_unroll_loops))?;
        run.ran(Pass::opt_unroll_loops, &func.display());
        opt_merge_accesses::opt_merge_accesses(func, &opts.shared).map_err(|e| e.in_pass(Pass::opt_merge_accesses))?;
        run.ran(Pass::opt_merge_accesses, &func.display());
        if opts.check_regalloc {
            if let Some(text) = mid::verifier_report(func) {
                return Err(
                    Error::internal(format!("the mid-end produced CLIF that does not verify:\n{}", text)).in_pass(Pass::opt_merge_accesses)
                );
            }
        }
    }
    legalize_libcalls::legalize_libcalls(func);
    run.ran(Pass::legalize_libcalls, &func.display());
    legalize_f16::legalize_f16(func).map_err(|e| e.in_pass(Pass::legalize_f16))?;
    run.ran(Pass::legalize_f16, &func.display());
    legalize_f128::legalize_f128(func).map_err(|e| e.in_pass(Pass::legalize_f128))?;
    run.ran(Pass::legalize_f128, &func.display());
    legalize_i128::legalize_i128(func).map_err(|e| e.in_pass(Pass::legalize_i128))?;
    run.ran(Pass::legalize_i128, &func.display());
    legalize_div::legalize_div(func).map_err(|e| e.in_pass(Pass::legalize_div))?;
    run.ran(Pass::legalize_div, &func.display());
    legalize_memory::legalize_memory(func).map_err(|e| e.in_pass(Pass::legalize_memory))?;
    run.ran(Pass::legalize_memory, &func.display());
    legalize_atomics::legalize_atomics(func);
    run.ran(Pass::legalize_atomics, &func.display());
    Ok(())
}

/// Calls (and function addresses) whose target the object does not define:
/// (calling function, callee). A module is self-contained (there is no
/// separate link step), so each of these is an error.
pub fn undefined_callees(obj: &elf::Object) -> Vec<(String, String)> {
    let defined: std::collections::HashSet<&str> = obj.functions.iter().map(|f| f.name.as_str()).collect();
    let mut out = Vec::new();
    for f in &obj.functions {
        for r in &f.relocs {
            if !defined.contains(r.symbol.as_str()) && !out.contains(&(f.name.clone(), r.symbol.clone())) {
                out.push((f.name.clone(), r.symbol.clone()));
            }
        }
    }
    out
}

/// Compiles every function of a module into one object (each a kernel if
/// [`Options::kernel`] is set).
pub fn compile_module(funcs: &[Function], opts: &Options) -> Result<elf::Object, (String, Error)> {
    compile_module_kernels(funcs, &vec![opts.kernel; funcs.len()], opts)
}

/// Compiles every function of a module into one object; `funcs[i]` is a
/// kernel if `kernels[i]` ([`Options::kernel`] is not read). `Err` names the
/// function (its object symbol) that failed.
pub fn compile_module_kernels(funcs: &[Function], kernels: &[bool], opts: &Options) -> Result<elf::Object, (String, Error)> {
    let mut obj = elf::Object::default();
    let opts = opts.for_module(funcs, kernels);
    for (f, &kernel) in funcs.iter().zip(kernels) {
        let c = compile(f, &Options { kernel, ..opts.clone() }).map_err(|e| (symbol_name(f), e))?;
        obj.functions.push(c.function);
    }
    runtime::link(&mut obj).map_err(|e| ("ursa_rt".to_string(), e))?;
    if let Some((f, g)) = undefined_callees(&obj).into_iter().next() {
        return Err((f, Error::unsupported(format!("calls %{}, which is neither defined in this module nor an intrinsic", g))));
    }
    propagate_callee_needs(&mut obj);
    Ok(obj)
}

/// What a kernel needs for the device functions it calls, once the whole
/// module is compiled: their shared memory and the stack of its deepest call
/// chain. Every way of building a module's object calls this.
pub fn propagate_callee_needs(obj: &mut elf::Object) {
    shared_mem::propagate(obj);
    call_stack::propagate(obj);
}
