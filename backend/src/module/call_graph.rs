//! What the reconvergence pass of one function needs to know about the rest
//! of the module (`docs/kernels.md`, "Reconvergence"): which calls reach a
//! CTA barrier (and through which functions), which device functions may
//! have convergence barriers, and which barrier registers each must leave
//! alone because a caller's lanes may hold them while it runs.
//!
//! - **Barriers through calls.** A function reaches a CTA barrier if it
//!   calls `%ursa_barrier` or a function that reaches one; an indirect call
//!   reaches one if a function whose address is taken does. The chain (the
//!   shortest found) names the functions.
//! - **Two activations at once.** Lanes of one warp may run a device
//!   function in two groups at once (each group then has its own instance
//!   of the function's barriers: `docs/isa-extensions.md` 3.4), or one
//!   lane may be in two activations of it; its callers (itself among them)
//!   may then hold any barrier register, so it saves every register it uses
//!   (`BMOV`, [`crate::reconv::insert_breg_saves`]). It may run twice at once when it is recursive (directly or
//!   through others), when two calls that reach it (directly or through
//!   other calls) can run at once in a caller (the calls' points are on
//!   different sides of a divergent branch that has not reconverged, or one
//!   call is reached by two such groups), or when a function that calls it
//!   may itself run twice at once.
//! - **Registers callers hold.** The barrier registers are callee-saved
//!   (`docs/isa-extensions.md` 7.1). Rather than saving and restoring them
//!   with `BMOV` where it can, a device function's regions avoid every
//!   register that a region of a caller may hold while a call that reaches
//!   it runs (a region around the call, or one that other lanes of the warp
//!   may be inside at the same time): callers are planned first, in
//!   topological order of the call graph, and the function's own regions
//!   take other registers. A region that finds none free takes one a caller
//!   may hold, which the function then saves at entry and restores at
//!   return.

use std::collections::HashMap;

use cranelift_codegen::ir::{Function, InstructionData};

use crate::pipeline::Pass;
use crate::reconv::plan::{CallSite, Callee, DeviceFacts, ModuleFacts, Plan};
use crate::reconv::plan_reconvergence;

/// The calls between the functions of a module, as written (before inlining).
pub struct CallGraph {
    /// The object symbol of each function.
    pub syms: Vec<String>,
    /// The functions whose address is taken (`func_addr`): what an indirect call may reach.
    pub address_taken: Vec<usize>,
    /// The functions each one calls, directly or (any address-taken one) indirectly; sorted.
    pub callees: Vec<Vec<usize>>,
    /// `below[f][g]`: `f` may run `g` (itself included).
    pub below: Vec<Vec<bool>>,
    /// The number of direct calls of each function in the module.
    pub call_sites: Vec<usize>,
}

impl CallGraph {
    pub fn new(funcs: &[Function]) -> CallGraph {
        let n = funcs.len();
        let syms: Vec<String> = funcs.iter().map(crate::module::symbol_name).collect();
        let index: HashMap<&str, usize> = syms.iter().enumerate().map(|(i, s)| (s.as_str(), i)).collect();
        let sites: Vec<Vec<CallSite>> = funcs.iter().map(plan_reconvergence::call_sites).collect();
        let mut address_taken = Vec::new();
        for f in funcs {
            for inst in f.layout.blocks().flat_map(|b| f.layout.block_insts(b)) {
                if let InstructionData::FuncAddr { func_ref, .. } = f.dfg.insts[inst] {
                    if let Some(&k) = ursa_isel::lower::callee_symbol(f, func_ref).as_deref().and_then(|s| index.get(s)) {
                        if !address_taken.contains(&k) {
                            address_taken.push(k);
                        }
                    }
                }
            }
        }
        let mut call_sites = vec![0; n];
        let callees: Vec<Vec<usize>> = sites
            .iter()
            .map(|ss| {
                let mut v: Vec<usize> = Vec::new();
                for s in ss {
                    match &s.callee {
                        Callee::Direct(name) => {
                            if let Some(&k) = index.get(name.as_str()) {
                                call_sites[k] += 1;
                                v.push(k);
                            }
                        }
                        Callee::Indirect => v.extend_from_slice(&address_taken),
                    }
                }
                v.sort();
                v.dedup();
                v
            })
            .collect();
        // Functions each function may run (itself included).
        let below: Vec<Vec<bool>> = (0..n)
            .map(|f| {
                let mut seen = vec![false; n];
                let mut stack = vec![f];
                while let Some(x) = stack.pop() {
                    if !seen[x] {
                        seen[x] = true;
                        stack.extend(callees[x].iter().copied());
                    }
                }
                seen
            })
            .collect();
        CallGraph { syms, address_taken, callees, below, call_sites }
    }

    /// Whether function `f` may call itself (directly or through others).
    pub fn recursive(&self, f: usize) -> bool {
        self.callees[f].iter().any(|&g| self.below[g][f])
    }
}

/// The facts for `funcs` as written, `kernels[i]` telling whether `funcs[i]`
/// is a kernel; each function is planned as `opts` (its opt level and the
/// callees it may inline) will compile it.
/// The module's facts, and each function after the CLIF passes (by object
/// symbol) as they were planned on.
pub fn module_facts(funcs: &[Function], kernels: &[bool], opts: &crate::Options) -> (ModuleFacts, HashMap<String, Prepared>) {
    let n = funcs.len();
    let graph = CallGraph::new(funcs);
    let (syms, address_taken, callees, below) = (&graph.syms, &graph.address_taken, &graph.callees, &graph.below);
    let index: HashMap<&str, usize> = syms.iter().enumerate().map(|(i, s)| (s.as_str(), i)).collect();
    let targets = |c: &Callee| -> Vec<usize> {
        match c {
            Callee::Direct(s) => index.get(s.as_str()).copied().into_iter().collect(),
            Callee::Indirect => address_taken.clone(),
        }
    };
    let mut facts = ModuleFacts::default();
    // Barrier chains, shortest first.
    let mut chain: Vec<Option<Vec<String>>> = funcs
        .iter()
        .enumerate()
        .map(|(i, f)| {
            let direct = f.layout.blocks().flat_map(|b| f.layout.block_insts(b)).any(|inst| {
                f.dfg.insts[inst].opcode().is_call()
                    && crate::mid::divergence::intrinsic_of(f, inst) == Some(ursa_isel::intrinsics::Intrinsic::Barrier)
            });
            direct.then(|| vec![syms[i].clone()])
        })
        .collect();
    let mut changed = true;
    while changed {
        changed = false;
        for f in 0..n {
            if chain[f].is_some() {
                continue;
            }
            if let Some(g) =
                callees[f].iter().copied().filter(|&g| chain[g].is_some()).min_by_key(|&g| chain[g].as_ref().map_or(0, |c| c.len()))
            {
                let mut c = vec![syms[f].clone()];
                c.extend(chain[g].clone().unwrap_or_default());
                chain[f] = Some(c);
                changed = true;
            }
        }
    }
    for (f, c) in chain.iter().enumerate() {
        if let Some(c) = c {
            facts.barrier_chains.insert(syms[f].clone(), c.clone());
        }
    }
    facts.indirect_barrier = address_taken.iter().find_map(|&g| chain[g].clone());
    // Which device functions may run twice at once.
    let mut twice: Vec<Option<String>> = vec![None; n];
    for f in 0..n {
        if !kernels[f] && graph.recursive(f) {
            twice[f] = Some("it calls itself (directly or through other functions), so lanes of a warp may run it twice at once".into());
        }
    }
    // A first plan of every function, with no registers to avoid, tells
    // which of its calls may run at once (the final plans below may tell
    // more: a region dropped for want of a register holds no lanes).
    let mut provisional = facts.clone();
    for f in (0..n).filter(|&f| !kernels[f]) {
        provisional.device.insert(syms[f].clone(), DeviceFacts::default());
    }
    // Each function as the compiler plans it: after the CLIF passes.
    let prepared: Vec<Option<Prepared>> = funcs.iter().zip(kernels).map(|(f, &k)| prepare(f, k, opts)).collect();
    let plan = |f: usize, facts: &ModuleFacts| {
        prepared[f].as_ref().and_then(|p| plan_reconvergence::plan(&p.output, kernels[f], Some(facts)).ok())
    };
    let first: Vec<Option<Plan>> = (0..n).map(|f| plan(f, &provisional)).collect();
    let mark_twice = |twice: &mut Vec<Option<String>>, g: usize, p: &Plan| {
        for &(s, t) in &p.concurrent_calls {
            for f in 0..n {
                let runs = |c: &Callee| targets(c).iter().any(|&x| below[x][f]);
                if !kernels[f] && twice[f].is_none() && runs(&p.calls[s].callee) && runs(&p.calls[t].callee) {
                    twice[f] = Some(format!(
                        "lanes of a warp may run it in two groups at once (calls from divergent control flow in %{})",
                        syms[g]
                    ));
                }
            }
        }
        // Whatever a function that may run twice calls may run twice too.
        for h in 0..n {
            if let Some(why) = twice[h].clone() {
                for f in 0..n {
                    if f != h && below[h][f] && !kernels[f] && twice[f].is_none() {
                        twice[f] = Some(format!("%{} calls it, and {}", syms[h], why));
                    }
                }
            }
        }
    };
    for g in 0..n {
        if let Some(p) = &first[g] {
            mark_twice(&mut twice, g, p);
        }
    }
    let has_regions: Vec<bool> = (0..n).map(|f| first[f].as_ref().is_some_and(|p| !p.regions.is_empty())).collect();
    for f in 0..n {
        if (0..n).any(|g| below[f][g] && has_regions[g]) {
            facts.with_regions.insert(syms[f].clone());
        }
    }
    facts.indirect_regions = address_taken.iter().any(|&g| (0..n).any(|h| below[g][h] && has_regions[h]));
    // Registers, callers first.
    for f in (0..n).filter(|&f| !kernels[f]) {
        facts.device.insert(syms[f].clone(), DeviceFacts { avoid: 0, runs_twice: twice[f].clone() });
    }
    // Callers first (Kahn's algorithm on the calls between different
    // functions; a cycle is broken at its lowest-numbered function).
    let mut callers_left = vec![0usize; n];
    for (g, cs) in callees.iter().enumerate() {
        for &f in cs.iter().filter(|&&f| f != g) {
            callers_left[f] += 1;
        }
    }
    let mut done = vec![false; n];
    let mut order = Vec::with_capacity(n);
    let mut ready: Vec<usize> = (0..n).rev().filter(|&f| callers_left[f] == 0).collect();
    while order.len() < n {
        let f = match ready.pop() {
            Some(f) => f,
            None => match (0..n).find(|&f| !done[f]) {
                Some(f) => f,
                None => break,
            },
        };
        if done[f] {
            continue;
        }
        done[f] = true;
        order.push(f);
        for &h in callees[f].iter().filter(|&&h| h != f) {
            callers_left[h] = callers_left[h].saturating_sub(1);
            if callers_left[h] == 0 && !done[h] {
                ready.push(h);
            }
        }
    }
    let mut avoid = vec![0u16; n];
    for &f in &order {
        if !kernels[f] {
            if let Some(d) = facts.device.get_mut(&syms[f]) {
                d.avoid = avoid[f];
                d.runs_twice = twice[f].clone();
            }
        }
        let Some(p) = plan(f, &facts) else { continue };
        mark_twice(&mut twice, f, &p);
        for c in &p.calls {
            for x in targets(&c.callee) {
                for h in (0..n).filter(|&h| below[x][h]) {
                    avoid[h] |= c.busy | avoid[f];
                }
            }
        }
    }
    let prepared = prepared.into_iter().enumerate().filter_map(|(f, p)| Some((syms[f].clone(), p?))).collect();
    (facts, prepared)
}

/// A function after the CLIF passes (`run_clif_passes`: they add
/// blocks, inline calls), as [`module_facts`] prepared it to plan it:
/// [`crate::compile`] takes it instead of running the passes again when it
/// compiles the same function with the same options (and prints none of
/// their outputs).
#[derive(Debug)]
pub struct Prepared {
    /// The function as written.
    input: Function,
    /// The options the passes ran with.
    opts: crate::Options,
    /// The function after the passes.
    pub output: Function,
    /// The passes that ran, in order.
    passes: smallvec::SmallVec<[Pass; 32]>,
}

impl Prepared {
    /// Whether the CLIF passes read the same options in `opts` as they did
    /// here (the callees to inline: the same table, not an equal one).
    fn same_options(&self, opts: &crate::Options) -> bool {
        let same_inline = match (&self.opts.inline, &opts.inline) {
            (None, None) => true,
            (Some(a), Some(b)) => std::sync::Arc::ptr_eq(a, b),
            _ => false,
        };
        same_inline
            && self.opts.kernel == opts.kernel
            && self.opts.opt_level == opts.opt_level
            && self.opts.check_regalloc == opts.check_regalloc
            && self.opts.shared == opts.shared
    }

    /// The function after the CLIF passes, if this is `f` prepared with
    /// the options `opts` gives the passes and `run` prints none of the
    /// passes' outputs; the passes are then recorded in `run` as run.
    pub(crate) fn reuse(&self, f: &Function, opts: &crate::Options, run: &mut crate::pipeline::Run) -> Option<Function> {
        if !self.same_options(opts) || self.passes.iter().any(|&p| run.wants(p)) || self.input != *f {
            return None;
        }
        for &p in &self.passes {
            run.ran(p, &"");
        }
        Some(self.output.clone())
    }
}

/// `f` after the CLIF passes the compiler runs before planning; `None` if
/// it is not valid CLIF or they fail (the compiler reports that when it
/// compiles the function).
fn prepare(f: &Function, kernel: bool, opts: &crate::Options) -> Option<Prepared> {
    if f.layout.entry_block().is_none() || crate::mid::verifier_report(f).is_some() {
        return None;
    }
    let mut output = f.clone();
    let opts = crate::Options { kernel, print_after: Vec::new(), module: None, prepared: None, ..opts.clone() };
    let mut run = crate::pipeline::Run::new(&[]);
    crate::run_clif_passes(&mut output, &opts, &mut run).ok()?;
    Some(Prepared { input: f.clone(), opts, output, passes: run.ran })
}

#[cfg(test)]
mod tests {
    use crate::{compile, OptLevel, Options, Pass};
    use cranelift_codegen::ir::Function;

    const MODULE: &str = "
function %dev(i32) -> i32 {
block0(v0: i32):
    v1 = iconst.i32 7
    v2 = imul v0, v1
    return v2
}

function %k(i64, i32) {
    fn0 = %dev(i32) -> i32
block0(v0: i64, v1: i32):
    v2 = call fn0(v1)
    v4 = iconst.i32 3
    v3 = iadd v2, v4
    store v3, v0
    return
}
";

    fn module(src: &str) -> Vec<Function> {
        cranelift_reader::parse_functions(src).unwrap()
    }

    fn options(funcs: &[Function], level: OptLevel) -> Options {
        Options { opt_level: level, ..Default::default() }.for_module(funcs, &[false, true])
    }

    /// `opts` without the prepared functions (every compile runs the passes).
    fn unprepared(opts: &Options) -> Options {
        Options { prepared: None, ..opts.clone() }
    }

    #[test]
    fn a_prepared_function_compiles_as_the_passes_would_make_it() {
        for level in [OptLevel::None, OptLevel::Speed] {
            let funcs = module(MODULE);
            let opts = options(&funcs, level);
            assert_eq!(opts.prepared.as_ref().unwrap().len(), 2);
            for (f, kernel) in funcs.iter().zip([false, true]) {
                let o = Options { kernel, ..opts.clone() };
                let (a, b) = (compile(f, &o).unwrap(), compile(f, &unprepared(&o)).unwrap());
                assert_eq!(a.function, b.function, "{:?} {}", level, f.name);
                assert_eq!(a.passes, b.passes, "{:?} {}", level, f.name);
            }
        }
    }

    #[test]
    fn a_prepared_function_is_taken_only_for_the_same_function_and_options() {
        let funcs = module(MODULE);
        let opts = Options { kernel: true, ..options(&funcs, OptLevel::Speed) };
        let prepared = opts.prepared.clone().unwrap();
        let p = &prepared["k"];
        let k = &funcs[1];
        let mut run = crate::pipeline::Run::new(&[]);
        assert!(p.reuse(k, &opts, &mut run).is_some());
        assert!(run.ran.contains(&Pass::opt_egraph) && run.ran.contains(&Pass::legalize_memory));
        // Another body under the same name.
        let other = module(&MODULE.replace("iconst.i32 3", "iconst.i32 4")).remove(1);
        assert!(p.reuse(&other, &opts, &mut crate::pipeline::Run::new(&[])).is_none());
        // Other options the passes read.
        for o in [
            Options { kernel: false, ..opts.clone() },
            Options { opt_level: OptLevel::None, ..opts.clone() },
            Options { check_regalloc: !opts.check_regalloc, ..opts.clone() },
            Options { inline: None, ..opts.clone() },
        ] {
            assert!(p.reuse(k, &o, &mut crate::pipeline::Run::new(&[])).is_none());
        }
        // A pass whose output is to be printed runs again.
        assert!(p.reuse(k, &opts, &mut crate::pipeline::Run::new(&[Pass::opt_egraph])).is_none());
        // A changed function compiled with the module's options is compiled as changed.
        let changed = compile(&other, &opts).unwrap();
        let fresh = compile(
            &other,
            &Options { kernel: true, ..options(&module(&MODULE.replace("iconst.i32 3", "iconst.i32 4")), OptLevel::Speed) },
        )
        .unwrap();
        assert_eq!(changed.function, fresh.function);
        assert_ne!(changed.function, compile(k, &opts).unwrap().function);
    }

    /// A `try_call` is a call in the module's graph (the graph is made
    /// from the functions as written, before `legalize_try_calls`): its
    /// callee is counted, reached, and a cycle through it is recursion; a
    /// `try_call` of the barrier intrinsic makes a barrier chain.
    #[test]
    fn try_calls_are_edges_of_the_call_graph() {
        let funcs = module(
            "function %a(i32) -> i32 tail {
                sig0 = (i32) -> i32 tail
                fn0 = %b(i32) -> i32 tail
            block0(v0: i32):
                try_call fn0(v0), sig0, block1(ret0), []
            block1(v1: i32):
                return v1
            }
            function %b(i32) -> i32 tail {
                sig0 = (i32) -> i32 tail
                sig1 = () system_v
                fn0 = %a sig0
                fn1 = %ursa_barrier sig1
            block0(v0: i32):
                try_call fn1(), sig1, block2, []
            block2:
                v1 = func_addr.i64 fn0
                try_call_indirect v1(v0), sig0, block1(ret0), []
            block1(v2: i32):
                return v2
            }",
        );
        let g = super::CallGraph::new(&funcs);
        assert_eq!(g.callees, vec![vec![1], vec![0]]);
        assert_eq!(g.call_sites, vec![0, 1]);
        assert!(g.recursive(0) && g.recursive(1));
        let (facts, _) = super::module_facts(&funcs, &[false, false], &Options::default());
        assert_eq!(facts.barrier_chains.get("a"), Some(&vec!["a".to_string(), "b".to_string()]));
    }
}
