//! What a launch measured: its statistics ([`Stats`], always) and the
//! profiler's view (`LaunchConfig::profile` and
//! `LaunchConfig::timeline`): per-instruction issue counts, executed lanes
//! and stall cycles from the timing model, a summary by instruction class and
//! memory space, and a per-warp timeline of issues.

use std::collections::BTreeMap;
use std::io::{self, Write};

use crate::ops::{AddrSpace, Op};
use crate::program::Program;

/// What a launch did.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Stats {
    /// Warp-instructions issued.
    pub instructions: u64,
    /// Sum over issued instructions of the lanes that executed them.
    pub lane_instructions: u64,
    /// Issue cycles: CTAs run one after another; a CTA takes as long as its
    /// slowest warp.
    pub cycles: u64,
    /// Warp-instructions per optype name (`IADD`).
    pub per_opcode: BTreeMap<String, u64>,
    /// Warp-instructions per opcode form, indexed by `ursa_emit::FormId`
    /// (`ISA.forms.len()` entries), counted whether or not any lane executed
    /// them (a false guard still issues). See [`Stats::forms`].
    pub per_form: Vec<u64>,
    pub ctas: u64,
    pub warps: u64,
    /// The profile, if [`LaunchConfig::profile`](crate::LaunchConfig::profile) or [`LaunchConfig::timeline`](crate::LaunchConfig::timeline) was set.
    pub profile: Option<Box<Profile>>,
    /// What the SM timing model measured, when it ran
    /// ([`LaunchConfig::machine`](crate::LaunchConfig::machine)); `cycles`
    /// is then its launch duration.
    pub sm: Option<Box<SmStats>>,
}

/// Why a resident warp did not issue in a cycle (the SM timing model,
/// docs/timing.md "Stall reasons"); `Selected`: it issued.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum StallReason {
    /// It issued.
    Selected,
    /// Ready, but its scheduler issued another warp.
    NotSelected,
    /// Its own stall count (`&stall`) had not elapsed: a fixed-latency wait.
    Wait,
    /// The same after a branch or convergence instruction (BRA, CALL, RET,
    /// EXIT, BSSY, BSYNC, BREAK): resolving the branch, and the switch to
    /// the next group of a divergent warp (the interpreter's streams put a
    /// group's BSYNC before the other group's instructions).
    Branch,
    /// Waiting (`&req`) for a scoreboard set by a global or local memory access.
    LongScoreboard,
    /// Waiting for a scoreboard set by another variable-latency instruction
    /// (shared memory, MUFU, conversions, S2R, …).
    ShortScoreboard,
    /// Waiting at a CTA barrier for the other warps.
    Barrier,
    /// The pipe of its next instruction (ALU, FMA, FP64, XU, …) was busy.
    MathPipe,
    /// The SM's load/store unit was busy (lines, bank-conflict replays).
    MemPipe,
}

/// Number of [`StallReason`]s.
pub const STALL_REASONS: usize = 9;

impl StallReason {
    pub const ALL: [StallReason; STALL_REASONS] = [
        StallReason::Selected,
        StallReason::NotSelected,
        StallReason::Wait,
        StallReason::Branch,
        StallReason::LongScoreboard,
        StallReason::ShortScoreboard,
        StallReason::Barrier,
        StallReason::MathPipe,
        StallReason::MemPipe,
    ];

    /// The name `--profile` prints (Nsight Compute's words where it has one).
    pub fn name(self) -> &'static str {
        match self {
            StallReason::Selected => "selected",
            StallReason::NotSelected => "not selected",
            StallReason::Wait => "wait",
            StallReason::Branch => "branch",
            StallReason::LongScoreboard => "long scoreboard",
            StallReason::ShortScoreboard => "short scoreboard",
            StallReason::Barrier => "barrier",
            StallReason::MathPipe => "math pipe busy",
            StallReason::MemPipe => "memory pipe busy",
        }
    }
}

/// What the SM timing model measured over a launch.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SmStats {
    /// The occupancy calculator's answer for the launch.
    pub occupancy: crate::occupancy::Occupancy,
    /// Resident warps per SM over the maximum, by the calculator.
    pub theoretical_occupancy: f64,
    pub sms: u32,
    pub max_warps: u32,
    /// Launch duration in cycles.
    pub cycles: u64,
    pub issued: u64,
    pub ctas_placed: u64,
    /// Cycles of SMs with at least one resident warp, and the sum over
    /// them of the resident warps (achieved occupancy is their ratio over
    /// `max_warps`).
    pub active_sm_cycles: u64,
    pub resident_warp_cycles: u64,
    /// Cycles of resident warps by [`StallReason`] (indexed by it); their
    /// sum is `warp_cycles`, the warps' resident cycles.
    pub stall_cycles: [u64; STALL_REASONS],
    pub warp_cycles: u64,
    /// Sectors and lines of global and local accesses; L1 and L2 outcomes
    /// of loads (stores and atomics go to the L2).
    pub sectors: u64,
    pub lines: u64,
    pub l1_hits: u64,
    pub l1_misses: u64,
    pub l2_hits: u64,
    pub l2_misses: u64,
    /// Shared-memory accesses and the wavefronts they took (more than one
    /// per access: bank conflicts).
    pub shared_accesses: u64,
    pub shared_wavefronts: u64,
}

impl SmStats {
    /// Average resident warps of an active SM over its maximum.
    pub fn achieved_occupancy(&self) -> f64 {
        if self.active_sm_cycles == 0 {
            0.0
        } else {
            self.resident_warp_cycles as f64 / (self.active_sm_cycles as f64 * self.max_warps as f64)
        }
    }

    /// The lines `ursa run --stats` prints under the SM model.
    pub fn report(&self) -> String {
        use std::fmt::Write as _;
        let o = &self.occupancy;
        let mut s = String::new();
        let _ = writeln!(
            s,
            "occupancy:           theoretical {:.1}% ({} CTAs of {} warps per SM; limited by {}; CTAs per SM by registers {}, shared memory {}, warps {}, CTA slots {})",
            100.0 * self.theoretical_occupancy,
            o.ctas_per_sm,
            o.warps_per_cta,
            o.limiter_names(),
            o.by_registers,
            o.by_shared,
            o.by_warps,
            o.by_slots
        );
        let _ = writeln!(
            s,
            "achieved occupancy:  {:.1}% (resident warps per active SM cycle over {})",
            100.0 * self.achieved_occupancy(),
            self.max_warps
        );
        let _ = writeln!(s, "memory:              {} sectors in {} lines; L1 {} hits, {} misses; L2 {} hits, {} misses; shared {} accesses in {} wavefronts", self.sectors, self.lines, self.l1_hits, self.l1_misses, self.l2_hits, self.l2_misses, self.shared_accesses, self.shared_wavefronts);
        let parts: Vec<String> = StallReason::ALL.iter().map(|r| format!("{} {}", r.name(), self.stall_cycles[*r as usize])).collect();
        let _ = writeln!(s, "warp cycles:         {} ({})", self.warp_cycles, parts.join(", "));
        s
    }
}

impl Stats {
    /// The opcode forms issued at least once, by name (`IADD_RR`), with
    /// their warp-instruction counts.
    pub fn forms(&self) -> impl Iterator<Item = (&'static str, u64)> + '_ {
        self.per_form.iter().enumerate().filter(|(_, &n)| n > 0).map(|(i, &n)| (&*ursa_emit::ISA.forms[i].name, n))
    }
}

/// What one instruction of the code space did over a launch.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct InstProfile {
    /// Code address of the instruction.
    pub pc: u64,
    /// Warp-instructions issued (a false guard still issues).
    pub issues: u64,
    /// Sum over issues of the lanes that executed it (guard true).
    pub lanes: u64,
    /// Sum over issues of the lanes of the active group (guard or not).
    pub active_lanes: u64,
    /// Cycles the warp waited before issuing it for the scoreboards it
    /// names in `&req` (variable-latency producers).
    pub scoreboard_stall: u64,
    /// Cycles its own `&stall` count kept the warp from issuing the next
    /// instruction beyond the one-cycle minimum (fixed-latency stalls).
    pub fixed_stall: u64,
    /// Warp arrivals at a CTA barrier (BAR.SYNC issues with lanes executing).
    pub barrier_arrivals: u64,
    /// Sum over issues of the live lanes outside the active group: lanes
    /// of the warp that wait at another PC because of divergence.
    pub divergence_idle_lanes: u64,
    /// Under the SM timing model: the cycles warps spent with this as
    /// their next instruction, by [`StallReason`] (its issues included as
    /// `Selected`). Zero otherwise.
    pub stalls: [u64; STALL_REASONS],
}

/// Operations and bytes of one memory space.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MemCount {
    /// Lane accesses (one per executing lane of a load, store, LDC or ATOM).
    pub accesses: u64,
    pub bytes: u64,
}

/// One issued instruction on the timeline.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TimelineEvent {
    /// Linear index of the CTA (x fastest).
    pub cta: u64,
    pub warp: u32,
    pub pc: u64,
    /// Issue cycle, counted from the start of the CTA.
    pub cycle: u64,
    /// Cycles until the warp's next issue is allowed (the stall count); the
    /// length of a stall span.
    pub cycles: u32,
    pub lanes: u32,
    /// Under the SM timing model: the SM it ran on (cycles then count from
    /// the launch's start).
    pub sm: Option<u32>,
    /// Under the SM timing model: a span of cycles the warp did not issue
    /// for this reason (`pc` is the instruction it waited to issue).
    pub stall: Option<StallReason>,
}

/// Timeline events kept per launch; later issues are counted as dropped.
pub const TIMELINE_LIMIT: usize = 1 << 20;

/// A launch's profile.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Profile {
    /// One entry per instruction of the program's code space, in address order.
    pub insts: Vec<InstProfile>,
    /// Issued warp-instructions per latency class (`Alu`, `Mul`, `Mem`, …).
    pub by_class: BTreeMap<String, u64>,
    /// Lane accesses and bytes per address space (`global`, `shared`,
    /// `local`, `generic`, `constant`).
    pub memory: BTreeMap<String, MemCount>,
    /// Issues in CTA, warp and cycle order (empty unless a timeline was asked for).
    pub timeline: Vec<TimelineEvent>,
    /// Issues that did not fit in [`TIMELINE_LIMIT`].
    pub timeline_dropped: u64,
}

impl Profile {
    pub(crate) fn new(prog: &Program) -> Profile {
        let insts = (0..prog.len()).map(|i| InstProfile { pc: crate::program::CODE_BASE + 16 * i as u64, ..Default::default() }).collect();
        Profile { insts, ..Default::default() }
    }

    /// Fills the summaries from the per-instruction counts and puts the
    /// timeline in a deterministic order.
    pub(crate) fn finish(&mut self, prog: &Program) {
        let isa = &ursa_emit::ISA;
        for (i, p) in self.insts.iter_mut().enumerate() {
            if p.issues == 0 {
                continue;
            }
            let e = &prog.code[i];
            let class = match isa.forms.get(e.form as usize) {
                Some(f) => format!("{:?}", crate::timing::class_of_optype(f.optype)),
                None => "Invalid".to_string(),
            };
            *self.by_class.entry(class).or_insert(0) += p.issues;
            let mem = match e.op {
                Op::Load { space, ty, .. } | Op::Store { space, ty, .. } => Some((space_name(space), ty.bytes() as u64)),
                Op::Ldc { ty, .. } => Some(("constant", ty.bytes() as u64)),
                Op::Atom { space, wide, .. } => Some((space_name(space), if wide { 8 } else { 4 })),
                _ => None,
            };
            if let Some((space, size)) = mem {
                let m = self.memory.entry(space.to_string()).or_default();
                m.accesses += p.lanes;
                m.bytes += p.lanes * size;
            }
            if matches!(e.op, Op::Bar { .. }) {
                p.barrier_arrivals = p.issues;
            }
        }
        self.timeline.sort_by_key(|t| (t.sm, t.cta, t.warp, t.cycle));
        if self.timeline.len() > TIMELINE_LIMIT {
            self.timeline_dropped += (self.timeline.len() - TIMELINE_LIMIT) as u64;
            self.timeline.truncate(TIMELINE_LIMIT);
        }
    }
}

impl Profile {
    /// Warp cycles by [`StallReason`] over all instructions (zero unless
    /// the SM timing model ran).
    pub fn stall_totals(&self) -> [u64; STALL_REASONS] {
        let mut t = [0u64; STALL_REASONS];
        for p in &self.insts {
            for (a, b) in t.iter_mut().zip(p.stalls) {
                *a += b;
            }
        }
        t
    }
}

fn space_name(s: AddrSpace) -> &'static str {
    match s {
        AddrSpace::Global => "global",
        AddrSpace::Shared => "shared",
        AddrSpace::Local => "local",
        AddrSpace::Generic => "generic",
    }
}

impl Profile {
    /// The text report of `ursa run --profile`: a summary, then the
    /// disassembly of every function that ran, each instruction with its
    /// counts.
    pub fn report(&self, prog: &Program, stats: &Stats) -> String {
        use std::fmt::Write as _;
        let mut o = String::new();
        let issues: u64 = self.insts.iter().map(|p| p.issues).sum();
        let lanes: u64 = self.insts.iter().map(|p| p.lanes).sum();
        let sb: u64 = self.insts.iter().map(|p| p.scoreboard_stall).sum();
        let fixed: u64 = self.insts.iter().map(|p| p.fixed_stall).sum();
        let bar: u64 = self.insts.iter().map(|p| p.barrier_arrivals).sum();
        let idle: u64 = self.insts.iter().map(|p| p.divergence_idle_lanes).sum();
        let ratio = |a: u64, b: u64| if b == 0 { 0.0 } else { a as f64 / b as f64 };
        let _ = writeln!(o, "profile: {} CTAs, {} warps", stats.ctas, stats.warps);
        let _ = writeln!(o, "  cycles                 {}", stats.cycles);
        let _ = writeln!(o, "  warp-instructions      {}", issues);
        let _ = writeln!(o, "  lane-instructions      {}", lanes);
        let _ = writeln!(o, "  IPC                    {:.3} (warp-instructions per cycle)", ratio(issues, stats.cycles));
        let _ = writeln!(o, "  SIMT efficiency        {:.1}% (lanes executed / (issues x 32))", 100.0 * ratio(lanes, issues * 32));
        let _ = writeln!(o, "  stall cycles           scoreboard {}, fixed-latency {}", sb, fixed);
        let _ = writeln!(o, "  barrier arrivals       {}", bar);
        let sm_stalls = self.stall_totals();
        let sm = sm_stalls.iter().any(|&n| n != 0);
        if sm {
            let total: u64 = sm_stalls.iter().sum();
            let _ = writeln!(o, "  warp cycles by reason  {} in all (SM timing model: every resident warp's every cycle)", total);
            for r in StallReason::ALL {
                let n = sm_stalls[r as usize];
                let _ = writeln!(o, "    {:<18} {:>12} {:>5.1}%", r.name(), n, 100.0 * ratio(n, total));
            }
        }
        let _ = writeln!(o, "  divergence idle lanes  {} (live lanes outside the active group, summed over issues)", idle);
        let _ = writeln!(o, "  instructions by class");
        for (c, n) in &self.by_class {
            let _ = writeln!(o, "    {:<10} {}", c, n);
        }
        let _ = writeln!(o, "  memory by space");
        if self.memory.is_empty() {
            let _ = writeln!(o, "    (none)");
        }
        for (s, m) in &self.memory {
            let _ = writeln!(o, "    {:<10} {} accesses, {} bytes", s, m.accesses, m.bytes);
        }
        let _ = write!(o, "\n{:>8} {:>9} {:>9} {:>9} {:>7} {:>9}", "issues", "lanes", "sb-stall", "fix-stall", "barrier", "div-idle");
        if sm {
            let _ = write!(o, " {:>9} {:>9}  {:<16}", "sm-cycles", "stalled", "top stall");
        }
        let _ = writeln!(o, "  instruction");
        for f in &prog.functions {
            let first = ((f.address - crate::program::CODE_BASE) / 16) as usize;
            let n = (f.size / 16) as usize;
            let Some(part) = self.insts.get(first..first + n) else { continue };
            if part.iter().all(|p| p.issues == 0) {
                continue;
            }
            let _ = writeln!(o, "{} {}", if f.kernel { ".kernel" } else { ".func" }, f.name);
            for p in part {
                let _ = write!(
                    o,
                    "{:>8} {:>9} {:>9} {:>9} {:>7} {:>9}",
                    p.issues, p.lanes, p.scoreboard_stall, p.fixed_stall, p.barrier_arrivals, p.divergence_idle_lanes,
                );
                if sm {
                    let all: u64 = p.stalls.iter().sum();
                    let stalled = all - p.stalls[StallReason::Selected as usize];
                    let top = StallReason::ALL[1..]
                        .iter()
                        .filter(|r| p.stalls[**r as usize] > 0)
                        .max_by_key(|r| (p.stalls[**r as usize], std::cmp::Reverse(**r)))
                        .map_or("", |r| r.name());
                    let _ = write!(o, " {:>9} {:>9}  {:<16}", all, stalled, top);
                }
                let text = prog.disassemble_at(p.pc).unwrap_or_default();
                match f.lines.location_at(p.pc - f.address) {
                    // The source line after the instruction, in a column.
                    Some(line) => {
                        let _ = writeln!(o, "  {:04x}  {:<48}  {}", p.pc - f.address, text, line);
                    }
                    None => {
                        let _ = writeln!(o, "  {:04x}  {}", p.pc - f.address, text);
                    }
                }
            }
        }
        o
    }

    /// Writes the timeline in the Chrome trace event format (loads in
    /// Perfetto and chrome://tracing): one process per CTA, one thread per
    /// warp, one complete event per issue; one microsecond on the viewer's
    /// axis is one cycle. `trap`: the message of the trap that ended the run,
    /// recorded as `otherData.trap`.
    ///
    /// The JSON is compact with the keys of every object in sorted order
    /// (what `serde_json` prints for a `Value`), written event by event:
    /// nothing but the disassembly of each PC is kept besides the output.
    pub fn write_chrome_trace(&self, prog: &Program, grid: [u32; 3], trap: Option<&str>, out: &mut dyn Write) -> io::Result<()> {
        let mut names: BTreeMap<u64, String> = BTreeMap::new();
        // The `"line":"file:line"` member of an event's args (with its
        // comma), or nothing, per PC.
        let mut lines: BTreeMap<u64, String> = BTreeMap::new();
        let mut line_arg = |pc: u64| -> String {
            lines
                .entry(pc)
                .or_insert_with(|| match prog.source_line(pc) {
                    Some(l) => format!("\"line\":{},", serde_json::Value::String(l)),
                    None => String::new(),
                })
                .clone()
        };
        let mut seen: Option<(u64, u32)> = None;
        let mut sm_seen_warp: Option<(u32, u64)> = None;
        out.write_all(b"{\"displayTimeUnit\":\"ns\",\"otherData\":{\"dropped_events\":")?;
        write!(out, "{},\"time_unit\":\"cycle\"", self.timeline_dropped)?;
        if let Some(t) = trap {
            out.write_all(b",\"trap\":")?;
            json_str(out, t)?;
        }
        out.write_all(b"},\"traceEvents\":[")?;
        let mut first = true;
        let mut sep = |out: &mut dyn Write| -> io::Result<()> {
            if !std::mem::take(&mut first) {
                out.write_all(b",")?;
            }
            Ok(())
        };
        for t in &self.timeline {
            if let Some(sm) = t.sm {
                // SM timing model: one process per SM, one thread per warp
                // (CTA index × 1024 + warp), issues and stall spans.
                let tid = t.cta * 1024 + t.warp as u64;
                if seen.map(|s| s.0) != Some(sm as u64 | 1 << 63) {
                    sep(out)?;
                    write!(out, "{{\"args\":{{\"name\":\"SM {}\"}},\"name\":\"process_name\",\"ph\":\"M\",\"pid\":{},\"tid\":0}}", sm, sm)?;
                    seen = Some((sm as u64 | 1 << 63, u32::MAX));
                }
                if sm_seen_warp != Some((sm, tid)) {
                    let (x, y, z) = cta_xyz(t.cta, grid);
                    sep(out)?;
                    write!(
                        out,
                        "{{\"args\":{{\"name\":\"CTA ({}, {}, {}) warp {}\"}},\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":{},\"tid\":{}}}",
                        x, y, z, t.warp, sm, tid
                    )?;
                    sm_seen_warp = Some((sm, tid));
                }
                let name = match t.stall {
                    Some(r) => format!("stall: {}", r.name()),
                    None => {
                        names.entry(t.pc).or_insert_with(|| prog.disassemble_at(t.pc).unwrap_or_else(|| format!("0x{:x}", t.pc))).clone()
                    }
                };
                sep(out)?;
                write!(
                    out,
                    "{{\"args\":{{{}\"pc\":\"0x{:x}\"}},\"cat\":\"{}\",\"dur\":{},\"name\":",
                    line_arg(t.pc),
                    t.pc,
                    if t.stall.is_some() { "stall" } else { "issue" },
                    t.cycles
                )?;
                json_str(out, &name)?;
                write!(out, ",\"ph\":\"X\",\"pid\":{},\"tid\":{},\"ts\":{}}}", sm, tid, t.cycle)?;
                continue;
            }
            if seen.map(|s| s.0) != Some(t.cta) {
                let (x, y, z) = cta_xyz(t.cta, grid);
                sep(out)?;
                write!(
                    out,
                    "{{\"args\":{{\"name\":\"CTA ({}, {}, {})\"}},\"name\":\"process_name\",\"ph\":\"M\",\"pid\":{},\"tid\":0}}",
                    x, y, z, t.cta
                )?;
            }
            if seen != Some((t.cta, t.warp)) {
                sep(out)?;
                write!(
                    out,
                    "{{\"args\":{{\"name\":\"warp {}\"}},\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":{},\"tid\":{}}}",
                    t.warp, t.cta, t.warp
                )?;
                seen = Some((t.cta, t.warp));
            }
            let name = names.entry(t.pc).or_insert_with(|| prog.disassemble_at(t.pc).unwrap_or_else(|| format!("0x{:x}", t.pc)));
            sep(out)?;
            write!(
                out,
                "{{\"args\":{{\"lanes\":{},{}\"pc\":\"0x{:x}\"}},\"cat\":\"issue\",\"dur\":{},\"name\":",
                t.lanes,
                line_arg(t.pc),
                t.pc,
                t.cycles
            )?;
            json_str(out, name)?;
            write!(out, ",\"ph\":\"X\",\"pid\":{},\"tid\":{},\"ts\":{}}}", t.cta, t.warp, t.cycle)?;
        }
        out.write_all(b"]}")
    }
}

/// The (x, y, z) of a linear CTA index (x fastest).
fn cta_xyz(cta: u64, grid: [u32; 3]) -> (u64, u64, u64) {
    (cta % grid[0] as u64, cta / grid[0] as u64 % grid[1] as u64, cta / (grid[0] as u64 * grid[1] as u64))
}

/// `s` as a JSON string.
fn json_str(out: &mut dyn Write, s: &str) -> io::Result<()> {
    serde_json::to_writer(out, s).map_err(io::Error::from)
}
