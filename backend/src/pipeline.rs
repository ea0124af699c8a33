//! The compiler's passes, in the order they run: one list, from which the
//! names `--print-after` accepts, the pass table of `docs/architecture.md`
//! (checked against it by a test) and the order [`crate::compile`] runs them
//! in (each run is recorded and checked against the list) all come.
//!
//! Each pass is named for what it does, in a small vocabulary: `legalize_*`
//! rewrites what the next stage cannot take, `lower*` moves code to the next
//! IR, `opt_*` makes it better without changing what it does, `plan_*`,
//! `assign_*`, `place_*` and `calc_*` decide, `insert_*` adds instructions
//! a decision asks for, `pack_*` renames registers, and `encode` writes bytes.
//! The file of a pass is `backend/src/<stage>/<name>.rs` (`lower` is
//! instruction selection, in the `ursa-isel` crate).

use std::fmt;

/// The IR a pass reads and writes (what `--print-after` prints after it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ir {
    /// Cranelift IR.
    Clif,
    /// The convergence regions planned for the CLIF function.
    Regions,
    /// Virtual-register machine code (`ursa_isel::vcode::VCode`).
    VCode,
    /// The register assignment of the VCode.
    Assignment,
    /// Where the spill slots live.
    SpillSlots,
    /// Machine code laid out, registers assigned ([`crate::ir::code::Code`]).
    Code,
    /// Bytes and relocations.
    Bytes,
}

macro_rules! passes {
    ($( $(#[doc = $doc:literal])+ $name:ident: $stage:literal, $ir:ident; )+) => {
        /// A pass of the compiler (its name is the name of its function and file).
        #[allow(non_camel_case_types)]
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum Pass {
            $( $(#[doc = $doc])+ $name, )+
        }

        impl Pass {
            /// Every pass, in the order they run.
            pub const ALL: &'static [Pass] = &[$(Pass::$name),+];

            /// The name, as `--print-after` takes it.
            pub fn name(self) -> &'static str {
                match self { $(Pass::$name => stringify!($name),)+ }
            }

            /// The folder of `backend/src` that holds the pass's file (`isel`:
            /// the instruction selection crate).
            pub fn stage(self) -> &'static str {
                match self { $(Pass::$name => $stage,)+ }
            }

            /// The IR the pass produces.
            pub fn ir(self) -> Ir {
                match self { $(Pass::$name => Ir::$ir,)+ }
            }

            /// What the pass does (the first line of its description).
            pub fn summary(self) -> &'static str {
                match self { $(Pass::$name => [$($doc),+][0].trim(),)+ }
            }
        }
    };
}

passes! {
    /// Calls of small or single-use device functions replaced by the callee's body.
    opt_inline: "mid", Clif;
    /// `try_call`s made a call and a jump to the normal-return block (nothing throws: there is no unwinder).
    legalize_try_calls: "mid", Clif;
    /// Every vector value split into its lanes, one scalar value each.
    legalize_vectors: "mid", Clif;
    /// Blocks no path from the entry reaches deleted.
    opt_unreachable_code: "mid", Clif;
    /// Block parameters that receive one value on every edge replaced by that value.
    opt_constant_phis: "mid", Clif;
    /// Cranelift's e-graph: value numbering, loop-invariant code motion, constant folding, redundant loads.
    opt_egraph: "mid", Clif;
    /// Addresses affine in a counted loop's induction variable replaced by stepped pointers (the loop versioned on a no-wrap check where needed).
    opt_step_pointers: "mid", Clif;
    /// Counted single-block loops unrolled four times (the loop kept for the remainder), loads first, addresses as offsets.
    opt_unroll_loops: "mid", Clif;
    /// Adjacent 32-bit (64-bit) loads and stores through one base merged into a 64-bit (128-bit) access where it is proven aligned.
    opt_merge_accesses: "mid", Clif;
    /// Calls of the float library routines Cranelift emits (`ceil`, `floor`, `trunc`, `nearest`, `fma`) replaced by their instruction.
    legalize_libcalls: "mid", Clif;
    /// Every `f16` value kept as its `i16` bits, its arithmetic computed through `f32` and rounded once.
    legalize_f16: "mid", Clif;
    /// Every `f128` value kept as its `i128` bits (constants, memory, selects, bitcasts, sign operations).
    legalize_f128: "mid", Clif;
    /// Every `i128` value split into two `i64` halves.
    legalize_i128: "mid", Clif;
    /// Integer division and remainder rewritten as software sequences (the machine has no divide).
    legalize_div: "mid", Clif;
    /// Loads and stores that may be misaligned given a run-time alignment check and a byte-wise path.
    legalize_memory: "mid", Clif;
    /// Atomics without a machine instruction rewritten as compare-and-swap loops.
    legalize_atomics: "mid", Clif;
    /// Convergence regions around the divergent branches planned, with their barrier registers.
    plan_reconvergence: "reconv", Regions;
    /// Instruction selection: the ISLE rules turn CLIF into virtual-register machine code.
    lower: "isel", VCode;
    /// 64-bit values of which only the low word is read computed in 32 bits.
    opt_narrow_pairs: "opt", VCode;
    /// Copies of zero read as `RZ`.
    opt_fold_zero: "opt", VCode;
    /// Copies of constants read as immediate operands.
    opt_fold_imm: "opt", VCode;
    /// Kernel parameters and launch dimensions read straight from the constant bank.
    opt_fold_cmem: "opt", VCode;
    /// Short conditional blocks guarded instead of branched over.
    opt_if_convert: "opt", VCode;
    /// Values passed only as block arguments computed last in their block.
    opt_sink_block_args: "opt", VCode;
    /// Warp-uniform values moved to the uniform datapath.
    opt_uniform: "opt", VCode;
    /// Saves and restores of the convergence-barrier registers a function or region must keep.
    insert_breg_saves: "reconv", VCode;
    /// Multi-piece instructions split into one machine instruction each.
    lower_bundles: "regalloc", VCode;
    /// Loop-invariant instructions (constants an instruction needs in a register, legalized masks) moved to the loop's pre-header, within the register budget.
    opt_hoist_invariants: "opt", VCode;
    /// Instructions reordered in their block so latencies overlap, under a register budget.
    opt_instr_sched_prepass: "opt", VCode;
    /// One register per value, chosen on the SSA code, when the values fit.
    assign_regs_ssa: "regalloc", Assignment;
    /// Registers by regalloc2, with spilling, where the SSA assignment gives up.
    assign_regs_regalloc2: "regalloc", Assignment;
    /// Each spill slot placed in a register or in local memory (repeats the next three passes until the code fits).
    place_spill_slots: "regalloc", SpillSlots;
    /// Allocated code laid out as machine instructions: moves, spills, prologue, epilogue, branches made real.
    lower_vcode: "emit", Code;
    /// `BSSY`/`BSYNC` of the planned regions put into the code.
    insert_reconvergence: "reconv", Code;
    /// Registers renamed densely from `R0` up (after regalloc2), copies that became no-ops deleted.
    pack_regs: "regalloc", Code;
    /// Copies whose source was computed only for them: the computation writes the copy's destination instead.
    opt_copy_prop_backward: "emit", Code;
    /// Jump threading, exits for branches to an exit, no branches to the next instruction.
    opt_branches: "emit", Code;
    /// Convergence regions left without a branch in them deleted.
    opt_idle_regions: "reconv", Code;
    /// The scheduling control bits (stall counts, scoreboards, waits).
    calc_instr_deps: "emit", Code;
    /// Branch offsets and relocations resolved, every instruction encoded.
    encode: "emit", Bytes;
}

impl Pass {
    /// The pass of this name.
    pub fn from_name(name: &str) -> Option<Pass> {
        Pass::ALL.iter().copied().find(|p| p.name() == name)
    }

    /// The path of its source file from the repository root.
    pub fn file(self) -> String {
        match self.stage() {
            "isel" => "isel/src/lower.rs".to_string(),
            stage => format!("backend/src/{}/{}.rs", stage, self.name()),
        }
    }

    /// The passes `place_spill_slots` repeats for each choice of homes, in order.
    pub const SPILL_SLOT_LOOP: [Pass; 3] = [Pass::lower_vcode, Pass::insert_reconvergence, Pass::pack_regs];

    /// The pass table of `docs/architecture.md`: one row per pass, in order.
    pub fn table() -> String {
        let mut t = String::from("| # | pass | file | output | what it does |\n|---|---|---|---|---|\n");
        for (k, p) in Pass::ALL.iter().enumerate() {
            t.push_str(&format!("| {} | `{}` | `{}` | {:?} | {} |\n", k + 1, p.name(), p.file(), p.ir(), p.summary()));
        }
        t
    }
}

impl fmt::Display for Pass {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One compilation's record of the passes it ran, and the text printed
/// after those asked for.
pub(crate) struct Run<'a> {
    print_after: &'a [Pass],
    /// The passes run, in order (a pass repeated by `place_spill_slots`
    /// appears once per attempt); inline, so recording costs no allocation.
    pub ran: smallvec::SmallVec<[Pass; 32]>,
    pub printed: String,
}

impl<'a> Run<'a> {
    pub fn new(print_after: &'a [Pass]) -> Run<'a> {
        Run { print_after, ran: smallvec::SmallVec::new(), printed: String::new() }
    }

    /// Is the output of `pass` to be printed?
    #[inline(always)]
    pub fn wants(&self, pass: Pass) -> bool {
        self.print_after.contains(&pass)
    }

    /// Records that `pass` ran, printing `out` if asked for (`out` is only
    /// formatted then).
    #[inline(always)]
    pub fn ran(&mut self, pass: Pass, out: &dyn fmt::Display) {
        self.ran.push(pass);
        if self.wants(pass) {
            self.print(pass, out);
        }
    }

    /// Appends the text of `pass`'s output.
    #[cold]
    pub fn print(&mut self, pass: Pass, out: &dyn fmt::Display) {
        self.printed.push_str(&format!("; after {}\n{}\n", pass, out));
    }
}

/// Is `ran` a run of the pipeline in the order of [`Pass::ALL`]: each pass
/// after the one before it, except that `place_spill_slots` may start its
/// loop ([`Pass::SPILL_SLOT_LOOP`]) again after its last pass?
pub fn in_order(ran: &[Pass]) -> bool {
    ran.windows(2).all(|w| w[0] < w[1] || (w[0] == Pass::SPILL_SLOT_LOOP[2] && w[1] == Pass::SPILL_SLOT_LOOP[0]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_found_again() {
        for p in Pass::ALL {
            assert_eq!(Pass::from_name(p.name()), Some(*p));
        }
        assert_eq!(Pass::from_name("fold_imm"), None);
    }

    #[test]
    fn every_pass_has_its_file() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        for p in Pass::ALL {
            assert!(root.join(p.file()).is_file(), "{} has no file {}", p, p.file());
        }
    }

    #[test]
    fn order_check_allows_only_the_spill_slot_loop_back() {
        use Pass::*;
        assert!(in_order(&[lower, opt_uniform, lower_vcode, insert_reconvergence, pack_regs, lower_vcode, pack_regs, encode]));
        assert!(!in_order(&[lower, opt_uniform, opt_fold_imm]));
        assert!(!in_order(&[pack_regs, insert_reconvergence]));
    }
}

#[cfg(test)]
mod doc_table {
    use super::Pass;

    /// The pass table of `docs/architecture.md` is the one [`Pass::table`]
    /// makes; `URSA_BLESS=1` rewrites it.
    #[test]
    fn pass_table_matches_the_docs() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/architecture.md");
        let text = std::fs::read_to_string(&path).expect("docs/architecture.md");
        let begin = text.find("<!-- pass-table:begin").expect("a pass-table:begin marker");
        let body = begin + text[begin..].find("-->\n").expect("the end of the begin marker") + 4;
        let end = text.find("<!-- pass-table:end -->").expect("a pass-table:end marker");
        let want = Pass::table();
        if std::env::var_os("URSA_BLESS").is_some() {
            std::fs::write(&path, format!("{}{}{}", &text[..body], want, &text[end..])).expect("write docs/architecture.md");
            return;
        }
        assert_eq!(&text[body..end], want, "docs/architecture.md's pass table differs (URSA_BLESS=1 rewrites it)");
    }
}
