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
    /// Cycles until the warp's next issue is allowed (the stall count).
    pub cycles: u32,
    pub lanes: u32,
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

    /// Adds another part of the same launch (CTAs run on another thread).
    pub(crate) fn merge(&mut self, o: Profile) {
        for (a, b) in self.insts.iter_mut().zip(o.insts) {
            a.issues += b.issues;
            a.lanes += b.lanes;
            a.active_lanes += b.active_lanes;
            a.scoreboard_stall += b.scoreboard_stall;
            a.fixed_stall += b.fixed_stall;
            a.divergence_idle_lanes += b.divergence_idle_lanes;
        }
        self.timeline.extend(o.timeline);
        self.timeline_dropped += o.timeline_dropped;
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
                Op::Atom { wide, .. } => Some(("generic", if wide { 8 } else { 4 })),
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
        self.timeline.sort_by_key(|t| (t.cta, t.warp, t.cycle));
        if self.timeline.len() > TIMELINE_LIMIT {
            self.timeline_dropped += (self.timeline.len() - TIMELINE_LIMIT) as u64;
            self.timeline.truncate(TIMELINE_LIMIT);
        }
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
        let _ = writeln!(
            o,
            "\n{:>8} {:>9} {:>9} {:>9} {:>7} {:>9}  instruction",
            "issues", "lanes", "sb-stall", "fix-stall", "barrier", "div-idle"
        );
        for f in &prog.functions {
            let first = ((f.address - crate::program::CODE_BASE) / 16) as usize;
            let n = (f.size / 16) as usize;
            let Some(part) = self.insts.get(first..first + n) else { continue };
            if part.iter().all(|p| p.issues == 0) {
                continue;
            }
            let _ = writeln!(o, "{} {}", if f.kernel { ".kernel" } else { ".func" }, f.name);
            for p in part {
                let _ = writeln!(
                    o,
                    "{:>8} {:>9} {:>9} {:>9} {:>7} {:>9}  {:04x}  {}",
                    p.issues,
                    p.lanes,
                    p.scoreboard_stall,
                    p.fixed_stall,
                    p.barrier_arrivals,
                    p.divergence_idle_lanes,
                    p.pc - f.address,
                    prog.disassemble_at(p.pc).unwrap_or_default()
                );
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
        let mut seen: Option<(u64, u32)> = None;
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
            if seen.map(|s| s.0) != Some(t.cta) {
                let (x, y, z) =
                    (t.cta % grid[0] as u64, t.cta / grid[0] as u64 % grid[1] as u64, t.cta / (grid[0] as u64 * grid[1] as u64));
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
            write!(out, "{{\"args\":{{\"lanes\":{},\"pc\":\"0x{:x}\"}},\"cat\":\"issue\",\"dur\":{},\"name\":", t.lanes, t.pc, t.cycles)?;
            json_str(out, name)?;
            write!(out, ",\"ph\":\"X\",\"pid\":{},\"tid\":{},\"ts\":{}}}", t.cta, t.warp, t.cycle)?;
        }
        out.write_all(b"]}")
    }
}

/// `s` as a JSON string.
fn json_str(out: &mut dyn Write, s: &str) -> io::Result<()> {
    serde_json::to_writer(out, s).map_err(io::Error::from)
}
