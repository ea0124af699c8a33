//! Timing and hazards: the latency table (docs/latencies.md), the control
//! bits of every instruction (group `ALL` of emit/spec/project.isa), issue
//! cycles per warp, write scoreboards, and the strict-mode hazard checker.

use crate::ops::Op;

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

/// Latency classes (see docs/latencies.md for the numbers and the members).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Class {
    /// Integer ALU: IADD, LOP3, SHF, MOV, SEL, ISETP, ... (fixed)
    Alu,
    /// Integer multiply: IMAD, IMAD.WIDE, IMUL, IDP (fixed)
    Mul,
    /// Fixed-latency XU bit ops: POPC, FLO, BREV, BMSK, SGXT
    XuFixed,
    /// Uniform datapath ALU (fixed)
    Uniform,
    /// F32 arithmetic and compares (fixed)
    Fp32,
    /// Branches, barriers, stores and other fixed-latency control
    Control,
    /// MUFU (variable)
    Mufu,
    /// DADD/DMUL/DFMA (variable)
    Dfma,
    /// DMNMX/DSETP (variable)
    Dcmp,
    /// Conversions and FRND (variable)
    Conv,
    /// R2UR, SETUGPR, GETUGPR, S2UR (variable)
    Transfer,
    /// S2R (variable)
    SpecialReg,
    /// LDG, LD, ATOM (variable)
    GlobalMem,
    /// LDS (variable)
    SharedMem,
    /// LDL (variable)
    LocalMem,
    /// LDC (variable)
    ConstMem,
    /// SHFL (variable)
    Shuffle,
}

impl Class {
    /// Cycles from issue until the result can be read.
    pub fn latency(self) -> u16 {
        match self {
            Class::Alu => 4,
            Class::Mul => 5,
            Class::XuFixed => 6,
            Class::Uniform => 2,
            Class::Fp32 => 4,
            Class::Control => 4,
            Class::Mufu => 16,
            Class::Dfma => 8,
            Class::Dcmp => 6,
            Class::Conv => 12,
            Class::Transfer => 6,
            Class::SpecialReg => 10,
            Class::GlobalMem => 200,
            Class::SharedMem => 24,
            Class::LocalMem => 40,
            Class::ConstMem => 8,
            Class::Shuffle => 12,
        }
    }

    /// Whether results are signalled through a write scoreboard.
    pub fn variable(self) -> bool {
        !matches!(self, Class::Alu | Class::Mul | Class::XuFixed | Class::Uniform | Class::Fp32 | Class::Control)
    }
}

/// The class of an instruction, by optype name and pre-decoded op.
pub fn class_of(optype: &str, op: &Op) -> Class {
    match optype {
        "IMAD" | "IMAD_WIDE" | "IMUL" | "IDP2A" | "IDP4A" => Class::Mul,
        "POPC" | "FLO" | "BREV" | "BMSK" | "SGXT" => Class::XuFixed,
        "MUFU" => Class::Mufu,
        "DADD" | "DMUL" | "DFMA" => Class::Dfma,
        "DMNMX" | "DSETP" => Class::Dcmp,
        "FRND" | "I2F" | "F2I" | "F2F" => Class::Conv,
        "R2UR" | "SETUGPR" | "GETUGPR" | "S2UR" => Class::Transfer,
        "S2R" => Class::SpecialReg,
        "LDG" | "LD" | "ATOM" => Class::GlobalMem,
        "LDS" => Class::SharedMem,
        "LDL" => Class::LocalMem,
        "LDC" => Class::ConstMem,
        "SHFL" => Class::Shuffle,
        "FADD" | "FMUL" | "FFMA" | "FMNMX" | "FSETP" => Class::Fp32,
        "BRA" | "CALL" | "RET" | "EXIT" | "NOP" | "BPT" | "LEPC" | "BSSY" | "BSYNC" | "BREAK" | "BMOV" | "STG" | "STS" | "STL" | "ST"
        | "MEMBAR" | "BAR" | "VOTE" => Class::Control,
        o if o.starts_with('U') || matches!(op, Op::Uldc { .. }) => Class::Uniform,
        _ => Class::Alu,
    }
}

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
        if c.req != 0 {
            for s in 0..SCOREBOARDS {
                if c.req >> s & 1 != 0 {
                    t = t.max(self.sb_ready[s]);
                }
            }
        }
        if variable && (c.wsb as usize) < SCOREBOARDS {
            let s = c.wsb as usize;
            self.sb_ready[s] = self.sb_ready[s].max(t + lat as u64);
        }
        self.next_issue = t + c.stall.max(1) as u64;
        t
    }
}

/// A register file for the hazard checker.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum File {
    R,
    UR,
    P,
    UP,
}

impl File {
    pub fn name(self, i: u16) -> String {
        match self {
            File::R => format!("R{}", i),
            File::UR => format!("UR{}", i),
            File::P => format!("P{}", i),
            File::UP => format!("UP{}", i),
        }
    }
}

/// Registers an instruction reads and writes (for strict mode).
#[derive(Clone, Debug, Default)]
pub struct RegUse {
    pub reads: Vec<(File, u16)>,
    pub writes: Vec<(File, u16)>,
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
    fn slot(&mut self, f: File, i: u16) -> &mut Ready {
        match f {
            File::R => &mut self.r[i as usize],
            File::UR => &mut self.ur[i as usize],
            File::P => &mut self.p[i as usize],
            File::UP => &mut self.up[i as usize],
        }
    }

    /// Checks one instruction issued at cycle `t` and records its results.
    pub fn check(&mut self, u: &RegUse, c: Ctrl, t: u64, lat: u16, variable: bool, pc: u64) -> Result<(), String> {
        for s in 0..SCOREBOARDS {
            if c.req >> s & 1 != 0 {
                self.sb_waited[s] = self.sb_gen[s];
            }
        }
        let waited = self.sb_waited;
        let pending = |r: &Ready| -> Option<String> {
            if r.var {
                if r.sb == NO_SB {
                    Some(format!("its producer at 0x{:x} has variable latency and sets no scoreboard", r.pc))
                } else if waited[r.sb as usize] < r.gen {
                    Some(format!(
                        "its producer at 0x{:x} signals scoreboard {} and this instruction did not wait for it (&req)",
                        r.pc, r.sb
                    ))
                } else {
                    None
                }
            } else if t < r.at {
                Some(format!("its producer at 0x{:x} writes it at cycle {}, this instruction issues at cycle {}", r.pc, r.at, t))
            } else {
                None
            }
        };
        for &(f, i) in &u.reads {
            if let Some(why) = pending(self.slot(f, i)) {
                return Err(format!("{} is read before it is ready: {}", f.name(i), why));
            }
        }
        for &(f, i) in &u.writes {
            if let Some(why) = pending(self.slot(f, i)) {
                return Err(format!("{} is overwritten while an earlier write is pending: {}", f.name(i), why));
            }
        }
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
}
