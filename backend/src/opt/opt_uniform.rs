//! Warp-uniform values on the uniform datapath (`docs/uniformity.md`).
//!
//! A value is *uniform* when every lane of a warp holds the same one. Here the
//! sources of uniformity are copies of constant-bank words (kernel parameters,
//! launch dimensions), constants and reads of the CTA-wide special registers
//! (`S2R Rv, SR_CTAID_X`, …); an ALU instruction all of whose register inputs
//! are uniform computes a uniform value. Such an instruction runs once per
//! warp on the uniform datapath (its `U` twin: `IMAD_RCR` → `UIMAD_UCU`,
//! `ISETP_RC` → `UISETP_UC`), with its inputs and result in UR registers (a
//! predicate result in a UP register), when that pays. A branch on a uniform
//! predicate becomes a uniform branch (`@UPn UBRA`), and a block parameter
//! that [`uniform_params`] allows (a loop counter) lives in a UR when all the
//! values it receives are uniform.
//!
//! **Cost rule.** An instruction is moved to the uniform datapath only if each
//! reader of its result is itself moved, is a branch (for a predicate), is
//! passed to a uniform block parameter, or is a per-lane instruction with a
//! form that reads a UR operand in that place (`IADD_RU`, `IMAD_RRU`, …), so
//! no `MOV R, UR` is ever added. A source read by a moved instruction gets a
//! uniform copy (`UMOV URn, c[b][o]` / `UMOV URn, imm` / `S2UR URn, SR`).
//!
//! UR values never cross a call (the pass does nothing in a function that
//! calls), are numbered one per value here (at most 63, and at most 7
//! uniform predicates, else fewer values are moved) and packed densely after
//! layout by `pack_regs`, which also deletes the `UMOV` copies on the edges
//! of a uniform loop counter when the counter and its next value can share
//! a register.

use std::collections::HashSet as StdHashSet;

use cranelift_codegen::entity::EntityRef;
use cranelift_codegen::ir::{Block, Function};
use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};
use smallvec::SmallVec;

use ursa_emit::model::Kind;
use ursa_emit::mods::SReg;
use ursa_emit::typed::UR;
use ursa_emit::{forms, Inst, PT, RZ, URZ};
use ursa_isel::vcode::{Class, MInst, OpKind, Pseudo, VCode, VReg, VRegSet};

use crate::ir::cfg::Cfg;
use crate::mid::divergence::{self, Divergence};
use crate::opt::opt_fold_cmem::{convert, def_counts, drop_unnamed_uses, fold_operand, remove_unread_copies, Source};

/// UR registers numbered by this pass (UR0–UR62; UR63 is URZ).
const UREGS: usize = 63;
/// UP registers numbered by this pass (UP0–UP6; UP7 is UPT).
const UPREGS: usize = PT as usize;

/// Where a uniform input comes from.
#[derive(Clone, Copy, Debug)]
enum Origin {
    /// `MOV Rv, c[b][o]`.
    Const(u64),
    /// `MOV Rv, imm`.
    Imm(u64),
    /// `S2R Rv, SR` of a special register that is the same in the whole CTA.
    Special(u64),
}

/// The special registers that are the same for every thread of a CTA (and
/// that `S2UR` may read).
fn cta_uniform(sr: u64) -> bool {
    [
        SReg::SR_CTAID_X,
        SReg::SR_CTAID_Y,
        SReg::SR_CTAID_Z,
        SReg::SR_NCTAID_X,
        SReg::SR_NCTAID_Y,
        SReg::SR_NCTAID_Z,
        SReg::SR_NTID_X,
        SReg::SR_NTID_Y,
        SReg::SR_NTID_Z,
    ]
    .iter()
    .any(|s| s.0 as u64 == sr)
}

/// `i` as its uniform twin (`IADD_RI` → `UIADD_UI`, from the generated twin
/// table), fields carried over by the twin's field map (RZ becomes URZ; PT
/// and UPT are both 7); `None` if there is no twin or a field that matters
/// has no counterpart.
fn to_uniform(i: &Inst) -> Option<Inst> {
    let tw = i.form().twins().uniform.as_ref()?;
    let mut n = convert(i, tw, None)?;
    for (k, f) in i.def().fields.iter().enumerate() {
        if let (Kind::Reg, Some(j)) = (f.kind, tw.fields[k]) {
            if i.get_at(k) == RZ as u64 {
                n.set_at(j as usize, URZ as u64);
            }
        }
    }
    Some(n)
}

/// Whether [`to_uniform`] succeeds on `i`, without building the twin.
fn has_uniform_twin(i: &Inst) -> bool {
    let Some(tw) = i.form().twins().uniform.as_ref() else { return false };
    i.def().fields.iter().enumerate().all(|(k, f)| f.fixed.is_some() || tw.fields[k].is_some() || i.get_at(k) == f.unused_value())
}

/// The register inputs of a candidate (an ALU instruction has at most three
/// or four: no allocation).
type Uses = SmallVec<[VReg; 4]>;

/// An instruction that could run on the uniform datapath if its inputs are
/// uniform: one plain piece, one 32-bit or predicate result, register inputs
/// only through fixups (32-bit values and predicates), no guard (also none
/// from `opt_if_convert`).
fn convertible(vcode: &VCode, m: &MInst) -> Option<(VReg, Uses)> {
    if m.pseudo != Pseudo::None || m.pieces.len() != 1 || m.clobbers_all || m.sym().is_some() {
        return None;
    }
    let p = &m.pieces[0];
    // Most forms have no uniform twin: the cheapest test first.
    if p.form().twins().uniform.is_none() {
        return None;
    }
    // A guard set by `opt_if_convert` is a fixup (the field still reads PT).
    let guard_fixup = p.def().guard.is_some_and(|g| m.fixups.iter().any(|f| f.field as usize == g as usize));
    if p.is_guarded() || m.predicated || guard_fixup || p.form() == forms::MOV_C || p.form() == forms::MOV_I {
        return None;
    }
    let mut def = None;
    let mut uses = Uses::new();
    for o in &m.opnds {
        if o.fixed.is_some() || !matches!(vcode.class(o.vreg), Class::R | Class::P) {
            return None;
        }
        match o.kind {
            OpKind::Def if def.is_none() => def = Some(o.vreg),
            OpKind::Use => uses.push(o.vreg),
            _ => return None,
        }
    }
    if m.fixups.iter().any(|f| f.hi) || uses.is_empty() {
        return None;
    }
    if !has_uniform_twin(p) {
        return None;
    }
    Some((def?, uses))
}

/// The block parameters that may live in a uniform register, as (CLIF block,
/// parameter index): in a kernel whose divergent branches all got a
/// convergence barrier (`barriers_complete`), a parameter the divergence
/// analysis finds uniform (all incoming values uniform, every branch that
/// decides which edge is taken uniform), of a block on no cycle that lanes
/// can leave at different times: every divergent branch on a cycle through
/// the block must reconverge (its immediate post-dominator) on that cycle.
/// Then the lanes that run the block run it together, and a lane group that
/// waits elsewhere never reads the register while it changes.
/// `cfg` is the control-flow graph of `f`; `div` its divergence analysis
/// when already run (else it is run here).
pub fn uniform_params(
    f: &Function,
    cfg: &Cfg,
    div: Option<&Divergence>,
    kernel: bool,
    barriers_complete: bool,
) -> StdHashSet<(u32, usize)> {
    let mut out = StdHashSet::new();
    if !kernel || !barriers_complete {
        return out;
    }
    let analyzed;
    let div = match div {
        Some(d) => d,
        None => {
            analyzed = divergence::analyze(f, cfg, kernel);
            &analyzed
        }
    };
    let ipdoms = cfg.ipdoms();
    let divergent: Vec<Block> = cfg.rpo.iter().copied().filter(|b| div.branches[b.index()]).collect();
    for &h in &cfg.rpo {
        let params = f.dfg.block_params(h);
        if params.is_empty() || Some(h) == f.layout.entry_block() {
            continue;
        }
        let (to_h, from_h) = (cfg.reaching(h), cfg.reach_until(h, None));
        let on_cycle = |x: Block| to_h[x.index()] && from_h[x.index()];
        let settled = divergent.iter().all(|&x| !on_cycle(x) || matches!(ipdoms[x.index()], Some(Some(j)) if on_cycle(j)));
        if !settled {
            continue;
        }
        for (k, &p) in params.iter().enumerate() {
            if !div.is_divergent(p) {
                out.insert((h.as_u32(), k));
            }
        }
    }
    out
}

/// The blocks of `f` that only some lanes of a warp may run while the
/// others wait elsewhere: those reachable from a divergent branch before its
/// immediate post-dominator (all reachable ones when it has none), by
/// `Block::index()`. The uniform registers are the warp's, not the lane's:
/// the lane groups of a divergent branch run its paths one after the other,
/// so a UR written on one path would overwrite a UR that the allocator gave
/// to a value the other path still reads (control-flow liveness sees the
/// paths as exclusive). [`opt_uniform`] writes no UR in these blocks.
/// `div` is the analysis `plan_reconvergence` ran (`None`: the function has
/// no conditional branch, so no block is divergent).
/// A block ending in a divergent branch is not itself divergent, but the
/// edges it leaves by are: an edge-split block after it counts as divergent
/// ([`opt_uniform`] asks `branches` for that).
pub fn divergent_blocks(cfg: &Cfg, div: Option<&Divergence>) -> (Vec<bool>, Vec<bool>) {
    let n = cfg.num_blocks();
    let mut out = vec![false; n];
    let Some(div) = div else { return (out, vec![false; n]) };
    let branches = div.branches.clone();
    if !div.branches.iter().any(|&b| b) {
        return (out, branches);
    }
    let ipdoms = cfg.ipdoms();
    for x in cfg.rpo.iter().copied().filter(|x| div.branches[x.index()]) {
        let stop = match ipdoms[x.index()] {
            Some(Some(j)) => Some(j),
            _ => None,
        };
        for s in cfg.succs[x.index()].iter().copied() {
            if Some(s) == stop {
                continue;
            }
            for (k, r) in cfg.reach_until(s, stop).into_iter().enumerate() {
                if r && stop.is_none_or(|j| j.index() != k) {
                    out[k] = true;
                }
            }
        }
    }
    (out, branches)
}

/// Whether per-lane instruction `m` can read every value `moved` names as a
/// UR operand at once.
fn takes_as_ur(m: &MInst, moved: impl Fn(VReg) -> bool) -> bool {
    let mut trial = m.clone();
    loop {
        let Some(k) = trial.fixups.iter().position(|f| moved(trial.opnds[f.opnd as usize].vreg)) else { return true };
        if !fold_operand(&mut trial, k, Source::Uniform, 0, 32) {
            return false;
        }
    }
}

/// The instruction that puts source `o` into uniform register `n`.
fn materialize(o: Origin, n: u64) -> Inst {
    let mut i = match o {
        Origin::Const(c) => {
            let mut i = Inst::new(forms::UMOV_C);
            i.set(forms::UMOV_C::VB, c);
            i
        }
        Origin::Imm(k) => {
            let mut i = Inst::new(forms::UMOV_I);
            i.set(forms::UMOV_I::VB, k);
            i
        }
        Origin::Special(sr) => {
            let mut i = Inst::new(forms::S2UR_X);
            i.set_at(forms::S2UR_X::SR.index as usize, sr);
            i
        }
    };
    i.set([forms::UMOV_C::URD, forms::UMOV_I::URD, forms::S2UR_X::URD], UR(n as u8));
    i
}

fn plain(i: Inst, origin: Option<u32>) -> MInst {
    let mut m = MInst::plain(i);
    m.origin = origin;
    m
}

/// Moves uniform values to the uniform datapath; returns how many
/// instructions and block parameters were moved. `params` are the block
/// parameters that may become uniform registers ([`uniform_params`]);
/// `divergent` gives the blocks of [`divergent_blocks`] (asked for only when
/// there is something to move).
pub fn opt_uniform(vcode: &mut VCode, params: &StdHashSet<(u32, usize)>, divergent: impl FnOnce() -> (Vec<bool>, Vec<bool>)) -> usize {
    if vcode.makes_calls {
        return 0;
    }
    // Uniform values start at a source (a copy of a constant-bank word or of
    // an immediate, a read of a special register) or at a uniform block
    // parameter: without either, `plan` finds nothing to move (most small
    // functions), so skip its definition counts and candidate tables.
    let source = |m: &MInst| m.pieces.first().is_some_and(|p| [forms::MOV_C, forms::MOV_I, forms::S2R_X].contains(&p.form()));
    if params.is_empty() && !vcode.blocks.iter().flat_map(|b| b.insts.iter()).any(source) {
        return 0;
    }
    // The VCode blocks some lanes may run without the others
    // ([`divergent_blocks`]); an edge-split block, by the block it leaves.
    let (inside, branches) = &divergent();
    let clif_div = |c: Option<u32>| c.is_some_and(|c| inside.get(c as usize).copied().unwrap_or(true));
    let clif_branch = |c: Option<u32>| c.is_some_and(|c| branches.get(c as usize).copied().unwrap_or(true));
    let skip: Vec<bool> = vcode
        .blocks
        .iter()
        .map(|b| match b.clif {
            Some(_) => clif_div(b.clif),
            None => b.preds.iter().any(|p| {
                let c = vcode.blocks[p.0 as usize].clif;
                clif_div(c) || clif_branch(c)
            }),
        })
        .collect();
    let mut banned: HashSet<VReg> = HashSet::default();
    loop {
        match plan(vcode, params, &banned, &skip) {
            Plan::Nothing => return 0,
            Plan::TooManyPredicates(p) => banned.extend(p),
            Plan::Move(sel) => return rewrite(vcode, sel),
        }
    }
}

/// What the analysis found.
struct Selection {
    origin: HashMap<VReg, (Origin, usize, usize)>,
    cands: HashMap<VReg, (usize, usize, Uses)>,
    /// Uniform block parameters: (block, index).
    params: HashMap<VReg, (usize, usize)>,
    uniform: VRegSet,
    /// UR or UP number of each uniform value and each source copy read.
    num: HashMap<VReg, u64>,
    /// Sources read by moved instructions (they get a uniform copy).
    copies: Vec<VReg>,
}

enum Plan {
    Nothing,
    /// More uniform predicates than UP registers: these stay per-lane.
    TooManyPredicates(Vec<VReg>),
    Move(Selection),
}

fn plan(vcode: &VCode, allowed: &StdHashSet<(u32, usize)>, banned: &HashSet<VReg>, skip: &[bool]) -> Plan {
    // Single definitions, and where the sources are.
    let ndefs = def_counts(vcode);
    let single = |v: &VReg| ndefs.once(*v);
    let mut origin: HashMap<VReg, (Origin, usize, usize)> = HashMap::default();
    for (bi, b) in vcode.blocks.iter().enumerate().filter(|(bi, _)| !skip[*bi]) {
        for (ii, m) in b.insts.iter().enumerate() {
            if m.pseudo == Pseudo::None && m.pieces.len() == 1 && m.opnds.len() == 1 && m.fixups.len() == 1 && !m.pieces[0].is_guarded() {
                let (p, o) = (&m.pieces[0], m.opnds[0]);
                if o.kind == OpKind::Def && o.fixed.is_none() && vcode.class(o.vreg) == Class::R && single(&o.vreg) && !m.fixups[0].hi {
                    if p.form() == forms::MOV_C && p.def().bitwidth_of(forms::MOV_C::RD.index as usize, p.values()) == 32 {
                        origin.insert(o.vreg, (Origin::Const(p.get(forms::MOV_C::VB)), bi, ii));
                    } else if p.form() == forms::MOV_I {
                        origin.insert(o.vreg, (Origin::Imm(p.get(forms::MOV_I::VB)), bi, ii));
                    } else if p.form() == forms::S2R_X && cta_uniform(p.get_at(forms::S2R_X::SR.index as usize)) {
                        origin.insert(o.vreg, (Origin::Special(p.get_at(forms::S2R_X::SR.index as usize)), bi, ii));
                    }
                }
            }
        }
    }
    // The candidates, each with its inputs.
    let candidate = |m: &MInst| convertible(vcode, m).filter(|(d, _)| single(d) && !banned.contains(d));
    // A candidate needs every input uniform: without a source and without a
    // parameter, that would take candidates reading each other in a cycle,
    // which values defined once (outside block parameters) cannot form.
    // Following the inputs back from any moved candidate thus ends at one
    // whose inputs are all sources: without such a candidate (or a parameter
    // that may be uniform) nothing moves. Asked first, reading the operands
    // alone (a candidate's inputs are its uses), before the tables.
    let reads_sources = |m: &MInst| {
        let mut uses = m.opnds.iter().filter(|o| o.kind == OpKind::Use).peekable();
        uses.peek().is_some() && uses.all(|o| origin.contains_key(&o.vreg))
    };
    let may_uniform_param = vcode.blocks.iter().any(|b| b.clif.is_some_and(|c| (0..b.params.len()).any(|k| allowed.contains(&(c, k)))));
    if !may_uniform_param && !vcode.blocks.iter().flat_map(|b| b.insts.iter()).any(|m| reads_sources(m) && candidate(m).is_some()) {
        return Plan::Nothing;
    }
    let mut cands: HashMap<VReg, (usize, usize, Uses)> = HashMap::default();
    for (bi, b) in vcode.blocks.iter().enumerate().filter(|(bi, _)| !skip[*bi]) {
        for (ii, m) in b.insts.iter().enumerate() {
            if let Some((d, uses)) = candidate(m) {
                cands.insert(d, (bi, ii, uses));
            }
        }
    }
    // Block parameters that may be uniform, and the values each receives.
    let mut params: HashMap<VReg, (usize, usize)> = HashMap::default();
    let mut incoming: HashMap<VReg, Vec<VReg>> = HashMap::default();
    for (bi, b) in vcode.blocks.iter().enumerate().filter(|(bi, _)| !skip[*bi]) {
        let Some(c) = b.clif else { continue };
        for (k, &p) in b.params.iter().enumerate() {
            if allowed.contains(&(c, k)) && vcode.class(p) == Class::R && single(&p) {
                params.insert(p, (bi, k));
            }
        }
    }
    // (Only the parameters' incoming values are ever looked up.)
    for b in vcode.blocks.iter().filter(|_| !params.is_empty()) {
        for m in b.insts.iter() {
            for (t, args) in m.targets().iter().zip(m.args().iter()) {
                let tb = &vcode.blocks[t.0 as usize];
                for (k, &a) in args.iter().enumerate() {
                    if let Some(&p) = tb.params.get(k) {
                        incoming.entry(p).or_default().push(a);
                    }
                }
            }
        }
    }
    // A parameter that receives another parameter of its block would need
    // the copies of one edge ordered (a parallel copy): it stays per-lane.
    params.retain(|p, &mut (bi, _)| incoming.get(p).is_some_and(|ins| ins.iter().all(|a| a == p || !vcode.blocks[bi].params.contains(a))));
    if params.is_empty() && !cands.values().any(|(_, _, uses)| uses.iter().all(|u| origin.contains_key(u))) {
        return Plan::Nothing;
    }

    // Values read where no UR operand can go (pseudo-instructions other than
    // a branch on its predicate, ABI registers).
    let nv = vcode.classes.len();
    let mut escapes = VRegSet::new(nv);
    for b in vcode.blocks.iter() {
        for m in b.insts.iter() {
            let branch = matches!(m.pseudo, Pseudo::Brif { uniform: None, .. });
            for (k, o) in m.opnds.iter().enumerate().filter(|(_, o)| o.kind == OpKind::Use) {
                if (m.pseudo != Pseudo::None && !(branch && k == 0)) || o.fixed.is_some() {
                    escapes.insert(o.vreg);
                }
            }
        }
    }
    let mut sources = VRegSet::new(nv);
    sources.extend(origin.keys().copied());
    let input_ok = |u: &VReg, uniform: &VRegSet| sources.contains(u) || uniform.contains(u);
    // Whether instruction (bi, ii) is the candidate defining `d`.
    let is_cand_at = |d: VReg, bi: usize, ii: usize| cands.get(&d).is_some_and(|c| c.0 == bi && c.1 == ii);
    // Whether a reader takes one value as a UR operand does not depend on
    // the others: asked once per (block, instruction, value).
    let mut alone_ok: HashMap<(u32, u32, VReg), bool> = HashMap::default();
    // And whether it takes all it reads at once, for the last set asked.
    let mut together_ok: HashMap<(u32, u32), (Uses, bool)> = HashMap::default();
    // Optimistic start (a loop counter and its next value depend on each
    // other), then the rules drop values until nothing changes.
    let mut uniform = VRegSet::new(nv);
    uniform.extend(cands.keys().chain(params.keys()).copied());
    let mut drop: Vec<VReg> = Vec::new();
    loop {
        drop.clear();
        for d in uniform.iter() {
            let inputs_ok = match cands.get(&d) {
                Some((_, _, uses)) => uses.iter().all(|u| input_ok(u, &uniform)),
                None => incoming[&d].iter().all(|a| input_ok(a, &uniform)),
            };
            if escapes.contains(&d) || !inputs_ok {
                drop.push(d);
            }
        }
        for b in vcode.blocks.iter() {
            for m in b.insts.iter() {
                // A value passed to a per-lane parameter needs a per-lane register.
                for (t, args) in m.targets().iter().zip(m.args().iter()) {
                    let tb = &vcode.blocks[t.0 as usize];
                    for (k, a) in args.iter().enumerate() {
                        if uniform.contains(a) && !tb.params.get(k).is_some_and(|p| uniform.contains(p)) {
                            drop.push(*a);
                        }
                    }
                }
            }
        }
        // Each per-lane reader must take all the uniform values it reads as
        // UR operands at once (a form has at most one).
        for (bi, b) in vcode.blocks.iter().enumerate() {
            for (ii, m) in b.insts.iter().enumerate() {
                if m.pseudo != Pseudo::None {
                    continue;
                }
                // Reading no uniform value through a field, it takes them all.
                if !m.fixups.iter().any(|f| uniform.contains(&m.opnds[f.opnd as usize].vreg)) {
                    continue;
                }
                // A moved candidate reads its inputs from URs anyway.
                if m.opnds.iter().any(|o| o.kind == OpKind::Def && uniform.contains(&o.vreg) && is_cand_at(o.vreg, bi, ii)) {
                    continue;
                }
                let mut reads: Uses =
                    m.opnds.iter().filter(|o| o.kind == OpKind::Use && uniform.contains(&o.vreg)).map(|o| o.vreg).collect();
                reads.sort_unstable();
                reads.dedup();
                // A value no form takes in its place (a guard, a predicate
                // operand) goes alone; values that fit one at a time but not
                // together all go (the fields name no uniform value but
                // `reads`: one that fits alone fits).
                let before = drop.len();
                for &v in &reads {
                    let ok = *alone_ok.entry((bi as u32, ii as u32, v)).or_insert_with(|| takes_as_ur(m, |x| x == v));
                    if !ok {
                        drop.push(v);
                    }
                }
                if drop.len() == before && reads.len() > 1 {
                    let known = together_ok.get(&(bi as u32, ii as u32)).filter(|(set, _)| *set == reads).map(|x| x.1);
                    let ok = known.unwrap_or_else(|| takes_as_ur(m, |x| reads.contains(&x)));
                    if !ok {
                        drop.extend(reads.iter().copied());
                    }
                    together_ok.insert((bi as u32, ii as u32), (reads, ok));
                }
            }
        }
        if drop.is_empty() {
            break;
        }
        for &d in &drop {
            uniform.remove(d);
        }
    }
    if uniform.is_empty() {
        return Plan::Nothing;
    }
    // Numbers: uniform values, then the sources they read (a source passed
    // to a uniform parameter is put straight into the parameter's register).
    let moved: Vec<VReg> = uniform.iter().collect();
    let preds: Vec<VReg> = moved.iter().copied().filter(|&v| vcode.class(v) == Class::P).collect();
    if preds.len() > UPREGS {
        return Plan::TooManyPredicates(preds);
    }
    let mut num: HashMap<VReg, u64> = HashMap::default();
    let (mut nur, mut nup) = (0u64, 0u64);
    for &d in &moved {
        let n = if vcode.class(d) == Class::P { &mut nup } else { &mut nur };
        num.insert(d, *n);
        *n += 1;
    }
    let mut copies: Vec<VReg> =
        moved.iter().filter_map(|d| cands.get(d)).flat_map(|c| c.2.iter().copied()).filter(|u| origin.contains_key(u)).collect();
    copies.sort();
    copies.dedup();
    for &s in &copies {
        num.insert(s, nur);
        nur += 1;
    }
    if nur as usize > UREGS {
        return Plan::Nothing;
    }
    cands.retain(|d, _| uniform.contains(d));
    params.retain(|p, _| uniform.contains(p));
    Plan::Move(Selection { origin, cands, params, uniform, num, copies })
}

fn rewrite(vcode: &mut VCode, sel: Selection) -> usize {
    let Selection { origin, cands, params, uniform, num, copies } = sel;
    // The moved instructions.
    for &(bi, ii, _) in cands.values() {
        let m = &mut vcode.blocks[bi].insts[ii];
        let mut n = to_uniform(&m.pieces[0]).expect("checked by convertible");
        let map = m.pieces[0].form().twins().uniform.as_ref().expect("checked by convertible").fields;
        for fx in m.fixups.iter() {
            let v = m.opnds[fx.opnd as usize].vreg;
            let j = map[fx.field as usize].expect("twin has the register field");
            n.set_at(j as usize, num[&v]);
        }
        *m = plain(n, m.origin);
    }
    // Per-lane readers take the UR operand; branches their uniform predicate.
    for b in vcode.blocks.iter_mut() {
        for m in b.insts.iter_mut() {
            if let Pseudo::Brif { negate, uniform: None } = m.pseudo {
                if uniform.contains(&m.opnds[0].vreg) {
                    m.pseudo = Pseudo::Brif { negate, uniform: Some(num[&m.opnds[0].vreg] as u8) };
                    m.clear_operands();
                }
                continue;
            }
            if m.pseudo != Pseudo::None {
                continue;
            }
            while let Some(k) = m
                .fixups
                .iter()
                .position(|f| m.opnds[f.opnd as usize].kind == OpKind::Use && uniform.contains(&m.opnds[f.opnd as usize].vreg))
            {
                let v = m.opnds[m.fixups[k].opnd as usize].vreg;
                let done = fold_operand(m, k, Source::Uniform, num[&v], 32);
                assert!(done, "opt_uniform: a reader checked by the cost rule refused its UR operand");
            }
            drop_unnamed_uses(m, |v| uniform.contains(&v));
        }
    }
    // Uniform parameters: each edge into the block writes the parameter's
    // register before the branch (`UMOV URp, URa`, or the source itself), and
    // the allocator no longer sees the parameter.
    let mut by_block: Vec<(usize, usize, VReg)> = params.iter().map(|(&p, &(bi, k))| (bi, k, p)).collect();
    by_block.sort_by(|a, b| (b.0, b.1).cmp(&(a.0, a.1)));
    for &(bi, k, p) in &by_block {
        for pb in 0..vcode.blocks.len() {
            let Some(last) = vcode.blocks[pb].insts.len().checked_sub(1) else { continue };
            let mut edge_copies = Vec::new();
            let term = &mut vcode.blocks[pb].insts[last];
            for t in 0..term.targets().len() {
                if term.targets()[t].0 as usize != bi || term.args()[t].len() <= k {
                    continue;
                }
                let a = term.args_mut()[t].remove(k);
                let i = match origin.get(&a) {
                    Some(&(o, _, _)) => materialize(o, num[&p]),
                    None if a == p => continue,
                    None => {
                        let mut i = Inst::new(forms::UMOV_U);
                        i.set(forms::UMOV_U::URD, UR(num[&p] as u8));
                        i.set(forms::UMOV_U::URB, UR(num[&a] as u8));
                        i
                    }
                };
                edge_copies.push(plain(i, term.origin));
            }
            let blk = &mut vcode.blocks[pb];
            let at = blk.insts.len() - 1;
            for c in edge_copies {
                blk.insts.insert(at, c);
            }
        }
        vcode.blocks[bi].params.remove(k);
    }
    // Uniform copies of the sources, right after their definitions.
    let mut inserts: Vec<(usize, usize, MInst)> = Vec::new();
    for &s in &copies {
        let (o, bi, ii) = origin[&s];
        inserts.push((bi, ii + 1, plain(materialize(o, num[&s]), vcode.blocks[bi].insts[ii].origin)));
    }
    inserts.sort_by(|a, b| (b.0, b.1).cmp(&(a.0, a.1)));
    for (bi, at, m) in inserts {
        vcode.blocks[bi].insts.insert(at, m);
    }
    // Per-lane sources nothing reads any more.
    remove_unread_copies(vcode, |v| origin.contains_key(&v));
    cands.len() + params.len()
}
