//! Faults: every way a run can stop other than finishing.
//!
//! What went wrong is a [`TrapKind`]. The semantics of an instruction raise
//! it as a [`Fault`] (the kind and, when one lane is to blame, that lane);
//! the interpreter completes a fault into a [`Trap`], the report a run
//! returns, by adding where it happened (kernel, CTA, warp, byte PC, the
//! function and the disassembled instruction). Host-side checks make a
//! `Trap` directly ([`Trap::new`]). Neither is ever a panic.

use std::fmt;

use crate::timing::Hazard;

/// The memory space of a faulting access.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Space {
    Global,
    Shared,
    Local,
    Constant,
    /// A generic address that falls in no window and no allocation.
    Generic,
}

impl fmt::Display for Space {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Space::Global => "global",
            Space::Shared => "shared",
            Space::Local => "local",
            Space::Constant => "constant",
            Space::Generic => "generic",
        })
    }
}

/// What went wrong.
#[derive(Clone, Debug, PartialEq)]
pub enum TrapKind {
    /// An access outside every allocation / window of its space.
    OutOfBounds { space: Space, addr: u64, size: u32 },
    /// An access whose address is not a multiple of its size.
    Misaligned { space: Space, addr: u64, size: u32 },
    /// The bytes at the PC do not decode (the decoder's message).
    Undecodable(String),
    /// A dynamic register index (SETGPR/GETGPR/SETUGPR/GETUGPR) outside the file.
    RegisterIndex { file: &'static str, index: i64 },
    /// No warp can make progress (e.g. a barrier some thread will never reach).
    Deadlock(String),
    /// The launch executed more warp-instructions than its step limit.
    StepLimit(u64),
    /// Strict mode: an instruction read or overwrote a register whose
    /// producer's result was not ready under the control bits.
    Hazard(Hazard),
    /// The instruction has no semantics in the documents (UF2FP).
    SemanticsNotDefined(&'static str),
    /// Control reached an address with no instruction.
    BadPc(u64),
    /// An explicit trap instruction or a failed runtime check.
    Explicit(String),
    /// The launch itself is wrong (unknown kernel, arguments, sizes).
    Launch(String),
    /// The host could not allocate `bytes` of a space: a warp's local memory
    /// (within the launch's memory limit `limit`, if it has one) or a global
    /// allocation.
    HostMemory { space: Space, bytes: u64, limit: Option<u64> },
}

impl fmt::Display for TrapKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TrapKind::OutOfBounds { space, addr, size } => {
                write!(f, "out-of-bounds {} access of {} bytes at 0x{:x}", space, size, addr)
            }
            TrapKind::Misaligned { space, addr, size } => {
                write!(f, "misaligned {} access of {} bytes at 0x{:x}", space, size, addr)
            }
            TrapKind::Undecodable(m) => write!(f, "undecodable instruction: {}", m),
            TrapKind::RegisterIndex { file, index } => write!(f, "register index {} out of range for {}", index, file),
            TrapKind::Deadlock(m) => write!(f, "deadlock: {}", m),
            TrapKind::StepLimit(n) => write!(f, "step limit of {} warp-instructions exceeded", n),
            TrapKind::Hazard(m) => write!(f, "hazard: {}", m),
            TrapKind::SemanticsNotDefined(op) => write!(f, "semantics not defined: {}", op),
            TrapKind::BadPc(pc) => write!(f, "no instruction at 0x{:x}", pc),
            TrapKind::Explicit(m) => f.write_str(m),
            TrapKind::Launch(m) => write!(f, "bad launch: {}", m),
            TrapKind::HostMemory { space, bytes, limit } => {
                write!(f, "the host cannot allocate the {} bytes of {} memory the launch needs", bytes, space)?;
                match limit {
                    Some(l) => write!(f, " (within its memory limit of {} bytes; a lower limit refuses such a launch at once)", l),
                    None => Ok(()),
                }
            }
        }
    }
}

/// A fault as an instruction's semantics raise it: what went wrong and the
/// lane it concerns, if one. Small, so that the hot paths return it cheaply;
/// the interpreter turns it into a [`Trap`] with the location.
#[derive(Debug)]
pub(crate) struct Fault {
    pub kind: TrapKind,
    pub lane: Option<u32>,
}

impl From<TrapKind> for Fault {
    fn from(kind: TrapKind) -> Fault {
        Fault { kind, lane: None }
    }
}

impl Fault {
    pub fn at(kind: TrapKind, lane: usize) -> Fault {
        Fault { kind, lane: Some(lane as u32) }
    }
}

/// A fault report: a `Fault` (what an instruction raises) with where it happened.
#[derive(Clone, Debug, PartialEq)]
pub struct Trap {
    pub kind: TrapKind,
    /// The launched kernel (empty for host-side accesses).
    pub kernel: String,
    pub cta: Option<[u32; 3]>,
    pub warp: Option<u32>,
    pub lane: Option<u32>,
    /// Byte address of the instruction in the program's code space.
    pub pc: Option<u64>,
    /// The function containing the PC and the offset in it.
    pub function: Option<(String, u64)>,
    /// The instruction in canonical text.
    pub inst: Option<String>,
    /// The source line of the instruction (`file:line`), when the object
    /// has a line table.
    pub source: Option<String>,
}

impl Trap {
    /// A trap with no location (host API, launch checks).
    pub fn new(kind: TrapKind) -> Trap {
        Trap { kind, kernel: String::new(), cta: None, warp: None, lane: None, pc: None, function: None, inst: None, source: None }
    }
}

impl fmt::Display for Trap {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.kind)?;
        if !self.kernel.is_empty() {
            write!(f, " in kernel `{}`", self.kernel)?;
        }
        if let Some(c) = self.cta {
            write!(f, ", CTA ({}, {}, {})", c[0], c[1], c[2])?;
        }
        if let Some(w) = self.warp {
            write!(f, ", warp {}", w)?;
        }
        if let Some(l) = self.lane {
            write!(f, ", lane {}", l)?;
        }
        if let Some(pc) = self.pc {
            write!(f, ", pc 0x{:x}", pc)?;
        }
        match (&self.function, &self.source) {
            (Some((name, off)), Some(line)) => write!(f, " ({}+0x{:x}, {})", name, off, line)?,
            (Some((name, off)), None) => write!(f, " ({}+0x{:x})", name, off)?,
            (None, Some(line)) => write!(f, " ({})", line)?,
            (None, None) => {}
        }
        if let Some(i) = &self.inst {
            write!(f, ": {}", i)?;
        }
        Ok(())
    }
}

impl std::error::Error for Trap {}

/// Why a program could not be loaded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LoadError {
    /// The ELF reader rejected the bytes.
    Elf(String),
    /// A relocation (in the code or the data object `function`) names a
    /// symbol that no function or data object defines.
    UndefinedSymbol { function: String, symbol: String },
    /// A relocation does not fit in its function's code (or data object's
    /// bytes).
    BadRelocation { function: String, offset: u64 },
    /// A function's code is not a whole number of instructions.
    BadCodeSize { function: String, size: usize },
    /// Two functions have the same name.
    DuplicateFunction(String),
}

impl fmt::Display for LoadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LoadError::Elf(m) => write!(f, "bad ELF object: {}", m),
            LoadError::UndefinedSymbol { function, symbol } => {
                write!(f, "relocation in `{}` refers to undefined symbol `{}`", function, symbol)
            }
            LoadError::BadRelocation { function, offset } => {
                write!(f, "relocation at offset 0x{:x} of `{}` is outside its code", offset, function)
            }
            LoadError::BadCodeSize { function, size } => {
                write!(f, "code of `{}` is {} bytes, not a multiple of 16", function, size)
            }
            LoadError::DuplicateFunction(n) => write!(f, "function `{}` is defined twice", n),
        }
    }
}

impl std::error::Error for LoadError {}
