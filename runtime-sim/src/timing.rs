//! Timing and hazards: the control bits of every instruction (group `ALL` of
//! emit/spec/project.isa), issue cycles per warp, write scoreboards, and the
//! strict-mode hazard checker. The latency table itself (docs/latencies.md)
//! is `ursa_emit::latency`, re-exported here.

use std::fmt;

/// Number of write scoreboards (SB0–SB5); `wsb = 7` means none.
pub const SCOREBOARDS: usize = 6;
pub const NO_SB: u8 = 7;

/// The scheduling control bits of one instruction.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Ctrl {
    /// Cycles before the warp may issue its next instruction (0 counts as 1).
    pub stall: u8,
    pub yield_: bool,
    /// Scoreboard set by a variable-latency instruction (7 = none).
    pub wsb: u8,
    /// Scoreboards to wait for before issuing.
    pub req: u8,
}

/// The latency table lives in `ursa_emit::latency` (shared with the
/// compiler's scheduler); `Class` is its name in the simulator.
pub use ursa_emit::latency::{class_of_form, class_of_optype, LatencyClass as Class};

/// Issue-time bookkeeping of one warp.
#[derive(Clone, Debug, Default)]
pub struct WarpClock {
    /// The earliest cycle at which the warp may issue.
    pub next_issue: u64,
    /// Cycle at which each scoreboard is released.
    pub sb_ready: [u64; SCOREBOARDS],
}

impl WarpClock {
    /// Issues an instruction; returns its issue cycle.
    #[inline(always)]
    pub fn issue(&mut self, c: Ctrl, lat: u16, variable: bool) -> u64 {
        let mut t = self.next_issue;
        // The scoreboards waited for, bit by bit (mostly one: not a pass
        // over all of them).
        let mut req = c.req & ((1 << SCOREBOARDS) - 1);
        while req != 0 {
            t = t.max(self.sb_ready[req.trailing_zeros() as usize]);
            req &= req - 1;
        }
        if variable && (c.wsb as usize) < SCOREBOARDS {
            let s = c.wsb as usize;
            self.sb_ready[s] = self.sb_ready[s].max(t + lat as u64);
        }
        self.next_issue = t + c.stall.max(1) as u64;
        t
    }
}

/// A register file for the hazard checker (`ursa_emit::RegFile`).
pub use ursa_emit::RegFile as File;

/// Registers an instruction reads and writes (for strict mode), one by one:
/// what `ursa_emit::Inst::reg_reads` / `reg_writes` report for the decoded
/// instruction, pairs and quads split, and the dynamically indexed register.
#[derive(Clone, Debug, Default)]
pub struct RegUse {
    pub reads: Vec<(File, u16)>,
    pub writes: Vec<(File, u16)>,
    /// The dynamically indexed register of SETGPR/GETGPR/SETUGPR/GETUGPR,
    /// known only at run time.
    pub dynamic: Option<DynReg>,
}

/// A register named by a register value: `file[UR<base> + offset]` (E72).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DynReg {
    /// R (SETGPR/GETGPR) or UR (SETUGPR/GETUGPR).
    pub file: File,
    /// The uniform register holding the index.
    pub base: u8,
    pub offset: i32,
    /// Written (SETGPR/SETUGPR) or read (GETGPR/GETUGPR).
    pub write: bool,
}

impl DynReg {
    /// The register the instruction accesses when UR<base> holds `base`;
    /// None for the zero register and for an index out of range (executing
    /// the instruction then traps with RegisterIndex).
    pub fn resolve(self, base: u32) -> Option<(File, u16)> {
        let i = base as i64 + self.offset as i64;
        (0..self.file.zero() as i64).contains(&i).then_some((self.file, i as u16))
    }
}

/// When a register's pending value becomes readable.
#[derive(Clone, Copy, Debug, Default)]
struct Ready {
    /// Fixed-latency producer: the cycle its result is written.
    at: u64,
    /// Variable-latency producer: its scoreboard (NO_SB: none) and the
    /// scoreboard generation it set; 0 = fixed latency.
    var: bool,
    sb: u8,
    gen: u32,
    /// The producer's PC, for the report.
    pc: u64,
}

/// What strict mode found: an instruction reads or overwrites a register
/// whose producer's result is not ready under the control bits.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Hazard {
    /// The register as the instruction names it (`R4`, or a dynamic
    /// register with its index expression).
    pub register: String,
    pub access: Access,
    pub pending: Pending,
}

/// How the instruction uses the register of a [`Hazard`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Access {
    Read,
    /// Written while an earlier write to it is pending.
    Overwrite,
}

/// Why the register of a [`Hazard`] is not ready; `producer` is the PC of
/// the instruction that writes it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pending {
    /// A variable-latency producer that sets no scoreboard.
    NoScoreboard { producer: u64 },
    /// A variable-latency producer whose scoreboard was not waited for (`&req`).
    NotWaited { producer: u64, scoreboard: u8 },
    /// A fixed-latency producer whose result is ready at cycle `ready`, after `issue`.
    NotReady { producer: u64, ready: u64, issue: u64 },
}

impl fmt::Display for Hazard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.access {
            Access::Read => write!(f, "{} is read before it is ready: ", self.register)?,
            Access::Overwrite => write!(f, "{} is overwritten while an earlier write is pending: ", self.register)?,
        }
        match self.pending {
            Pending::NoScoreboard { producer } => {
                write!(f, "its producer at 0x{:x} has variable latency and sets no scoreboard", producer)
            }
            Pending::NotWaited { producer, scoreboard } => write!(
                f,
                "its producer at 0x{:x} signals scoreboard {} and this instruction did not wait for it (&req)",
                producer, scoreboard
            ),
            Pending::NotReady { producer, ready, issue } => {
                write!(f, "its producer at 0x{:x} writes it at cycle {}, this instruction issues at cycle {}", producer, ready, issue)
            }
        }
    }
}

/// Per-warp register readiness for strict mode.
#[derive(Clone, Debug)]
pub struct HazardState {
    r: Vec<Ready>,
    ur: Vec<Ready>,
    p: Vec<Ready>,
    up: Vec<Ready>,
    sb_gen: [u32; SCOREBOARDS],
    sb_waited: [u32; SCOREBOARDS],
}

impl Default for HazardState {
    fn default() -> Self {
        HazardState {
            r: vec![Ready::default(); 256],
            ur: vec![Ready::default(); 64],
            p: vec![Ready::default(); 8],
            up: vec![Ready::default(); 8],
            sb_gen: [0; SCOREBOARDS],
            sb_waited: [0; SCOREBOARDS],
        }
    }
}

impl HazardState {
    #[inline(always)]
    fn slot(&mut self, f: File, i: u16) -> &mut Ready {
        match f {
            File::R => &mut self.r[i as usize],
            File::UR => &mut self.ur[i as usize],
            File::P => &mut self.p[i as usize],
            File::UP => &mut self.up[i as usize],
        }
    }

    /// Checks one instruction issued at cycle `t` and records its results.
    /// The common case (nothing pending, no dynamic register) is decided
    /// without building any message; otherwise `HazardState::check_report`
    /// finds and words the first hazard.
    #[allow(clippy::too_many_arguments)]
    #[inline]
    pub fn check(
        &mut self,
        u: &RegUse,
        dynamic: Option<(File, u16)>,
        c: Ctrl,
        t: u64,
        lat: u16,
        variable: bool,
        pc: u64,
    ) -> Result<(), Hazard> {
        if u.dynamic.is_some() {
            return self.check_report(u, dynamic, c, t, lat, variable, pc);
        }
        let mut waited = self.sb_waited;
        if c.req != 0 {
            for s in 0..SCOREBOARDS {
                if c.req >> s & 1 != 0 {
                    waited[s] = self.sb_gen[s];
                }
            }
        }
        let busy = |r: &Ready| if r.var { r.sb == NO_SB || waited[r.sb as usize] < r.gen } else { t < r.at };
        if u.reads.iter().chain(&u.writes).any(|&(f, i)| busy(self.slot(f, i))) {
            return self.check_report(u, dynamic, c, t, lat, variable, pc);
        }
        self.sb_waited = waited;
        let gen = if variable && (c.wsb as usize) < SCOREBOARDS {
            self.sb_gen[c.wsb as usize] += 1;
            self.sb_gen[c.wsb as usize]
        } else {
            0
        };
        for &(f, i) in &u.writes {
            *self.slot(f, i) = Ready { at: t + lat as u64, var: variable, sb: if variable { c.wsb } else { NO_SB }, gen, pc };
        }
        Ok(())
    }

    /// [`HazardState::check`] in full, with the wording of the first hazard.
    /// `dynamic` is the resolved dynamic register of `u`, if any
    /// ([`DynReg::resolve`]); it is checked after the static operands, so a
    /// pending index register is reported first.
    #[allow(clippy::too_many_arguments)]
    fn check_report(
        &mut self,
        u: &RegUse,
        dynamic: Option<(File, u16)>,
        c: Ctrl,
        t: u64,
        lat: u16,
        variable: bool,
        pc: u64,
    ) -> Result<(), Hazard> {
        for s in 0..SCOREBOARDS {
            if c.req >> s & 1 != 0 {
                self.sb_waited[s] = self.sb_gen[s];
            }
        }
        let waited = self.sb_waited;
        let pending = |r: &Ready| -> Option<Pending> {
            if r.var {
                if r.sb == NO_SB {
                    Some(Pending::NoScoreboard { producer: r.pc })
                } else if waited[r.sb as usize] < r.gen {
                    Some(Pending::NotWaited { producer: r.pc, scoreboard: r.sb })
                } else {
                    None
                }
            } else if t < r.at {
                Some(Pending::NotReady { producer: r.pc, ready: r.at, issue: t })
            } else {
                None
            }
        };
        for &(f, i) in &u.reads {
            if let Some(why) = pending(self.slot(f, i)) {
                return Err(Hazard { register: f.name(i as u32), access: Access::Read, pending: why });
            }
        }
        // The dynamic register, named as the instruction names it.
        let (mut dyn_write, mut dyn_name) = (None, String::new());
        if let (Some(d), Some((f, i))) = (u.dynamic, dynamic) {
            let off = match d.offset {
                0 => String::new(),
                o if o < 0 => format!("-0x{:x}", -(o as i64)),
                o => format!("+0x{:x}", o),
            };
            dyn_name = format!("{} ({}[UR{}{}])", f.name(i as u32), if f == File::R { "R" } else { "UR" }, d.base, off);
            if d.write {
                dyn_write = Some((f, i));
            } else if let Some(why) = pending(self.slot(f, i)) {
                return Err(Hazard { register: dyn_name, access: Access::Read, pending: why });
            }
        }
        for &(f, i) in &u.writes {
            if let Some(why) = pending(self.slot(f, i)) {
                return Err(Hazard { register: f.name(i as u32), access: Access::Overwrite, pending: why });
            }
        }
        if let Some((f, i)) = dyn_write {
            if let Some(why) = pending(self.slot(f, i)) {
                return Err(Hazard { register: dyn_name, access: Access::Overwrite, pending: why });
            }
        }
        let gen = if variable && (c.wsb as usize) < SCOREBOARDS {
            self.sb_gen[c.wsb as usize] += 1;
            self.sb_gen[c.wsb as usize]
        } else {
            0
        };
        for &(f, i) in u.writes.iter().chain(dyn_write.iter()) {
            *self.slot(f, i) = Ready { at: t + lat as u64, var: variable, sb: if variable { c.wsb } else { NO_SB }, gen, pc };
        }
        Ok(())
    }
}
