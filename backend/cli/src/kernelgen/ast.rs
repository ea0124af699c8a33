//! The kernel generator's program form: one kernel over thread-private typed
//! variables, with the statements of the program generator
//! ([`crate::fuzzgen::ast::Stmt`], straight-line ones only) plus what makes
//! it a kernel: thread and block indices, divergent control flow, global
//! loads, counted loops over a buffer, early exits, shared memory between
//! barriers, shuffles, votes and atomics.
//!
//! Every variable is defined at the kernel's entry (a constant), so any
//! statement can be deleted and the kernel stays valid (the reducer relies on
//! it). What a statement may do where is the generator's rule
//! ([`super::gen`]), kept by every reduction step: CTA barriers (and the
//! statements containing one) only at the top level, shuffles only at the top
//! level of a kernel whose CTAs are whole warps and before any early exit.

use cranelift_codegen::ir::Type;

pub use crate::fuzzgen::ast::{BinOp, Stmt, Var};

/// 32-bit words of the input buffer `in` (its elements are `i32` or `i64`,
/// [`Kernel::elem64`]). Indices are masked to stay inside it.
pub const IN_ELEMS: u32 = 128;

/// Most threads per CTA (the shared array has one word per thread).
pub const MAX_CTA_THREADS: u32 = 128;

/// Shared memory: one 32-bit word per thread, then [`ATOM_WORDS`] 64-bit
/// words for shared atomics.
pub const SHARED_WORDS_OFFSET: u32 = 0;
pub const SHARED_ATOMS_OFFSET: u32 = MAX_CTA_THREADS * 4;
pub const SHARED_BYTES: u32 = SHARED_ATOMS_OFFSET + ATOM_WORDS * 8;

/// The name of the shared variable (`%ursa_shared_kz`).
pub const SHARED_NAME: &str = "ursa_shared_kz";

/// Atomic words of the `atom` buffer and of shared memory: word `w` is only
/// ever updated with operation `AtomOp::ALL[w]`, so its final value does not
/// depend on the order the threads reach it.
pub const ATOM_WORDS: u32 = 8;

/// Order-independent read-modify-write operations.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AtomOp {
    Add,
    And,
    Or,
    Xor,
    Umin,
    Umax,
    Smin,
    Smax,
}

impl AtomOp {
    pub const ALL: [AtomOp; ATOM_WORDS as usize] =
        [AtomOp::Add, AtomOp::And, AtomOp::Or, AtomOp::Xor, AtomOp::Umin, AtomOp::Umax, AtomOp::Smin, AtomOp::Smax];
    /// The word of the atomic buffers this operation owns.
    pub fn word(self) -> u32 {
        AtomOp::ALL.iter().position(|&o| o == self).unwrap() as u32
    }
}

/// A value every thread can ask for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Special {
    /// `%ursa_tid_x` … and the other intrinsics, by axis (0 x, 1 y, 2 z).
    Tid(u8),
    Ctaid(u8),
    Ntid(u8),
    Nctaid(u8),
    Laneid,
    /// The thread's index in the CTA, x fastest (`tid.x + ntid.x * (tid.y + ntid.y * tid.z)`).
    LinearTid,
    /// The thread's index in the grid (CTA index linear the same way).
    GlobalTid,
    /// The kernel's `i32` parameter `n` (uniform).
    ParamN,
}

/// The trip count of a loop.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Trips {
    /// A constant (a uniform loop).
    Const(u32),
    /// `(v & mask) + 1`, per thread (a divergent loop).
    Var(Var, u32),
}

/// The bound of a counted loop over `in`: `for (i = 0; i < bound; i++)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Bound {
    Const(u32),
    /// The kernel parameter `n` (uniform; 0 ..= 40).
    ParamN,
    /// `v & 31`, per thread.
    Var(Var),
}

/// Shuffle modes (`%ursa_shfl_*`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shfl {
    Idx,
    Up,
    Down,
    Bfly,
}

/// Vote forms (`%ursa_vote_any`, `%ursa_vote_all`, `%ursa_ballot`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Vote {
    Any,
    All,
    Ballot,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum KStmt {
    /// A straight-line statement of the program generator (no control flow,
    /// memory, call or trap; divisions never trap).
    Scalar(Stmt),
    /// `dst = special` (converted to `dst`'s type).
    Special { dst: Var, what: Special },
    /// A diamond on a per-thread condition.
    If { c: Var, then: Vec<KStmt>, els: Vec<KStmt> },
    /// A do-while loop with a hidden counter.
    Loop { trips: Trips, body: Vec<KStmt> },
    /// `dst = in[idx & (IN_ELEMS - 1)]`.
    Load { dst: Var, idx: Var },
    /// A counted single-block loop over `in` (what `opt_unroll_loops`
    /// unrolls): `for (i = 0; i < bound; i++) { acc = acc OP in[(start & 63) + i]; extra }`,
    /// signed or unsigned compare (the address extends `i` the same way).
    LoadLoop { acc: Var, op: BinOp, start: Var, bound: Bound, signed: bool, extra: Vec<Stmt> },
    /// `if (c) { write the outputs; return }`.
    Exit { c: Var },
    /// `atomic_rmw op` of `val` on word `op.word()` of the `atom` buffer
    /// (`shared`: of the shared atomic words); the old value is dropped.
    Atomic { op: AtomOp, val: Var, shared: bool },
    /// `%ursa_barrier()` (top level only).
    Barrier,
    /// Top level only: `sh[tid] = src; barrier; dst = sh[(tid + rot) % nthreads]; barrier`
    /// (`rot` masked to 0..=255).
    Exchange { src: Var, dst: Var, rot: Var },
    /// Top level only: `barrier; dst = shared atomic word w; barrier`.
    ReadShared { dst: Var, word: u32 },
    /// Top level only, whole warps, before any exit: `dst = shfl(src, b & 31)`.
    Shuffle { mode: Shfl, dst: Var, src: Var, b: Var },
    /// Top level only: `dst = vote(c != 0)`.
    Vote { form: Vote, dst: Var, c: Var },
}

/// The launch of a kernel.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Launch {
    pub grid: [u32; 3],
    pub block: [u32; 3],
}

impl Launch {
    pub fn cta_threads(&self) -> u32 {
        self.block.iter().product()
    }
    pub fn threads(&self) -> u32 {
        self.cta_threads() * self.grid.iter().product::<u32>()
    }
}

/// A kernel and its launch: `%kz(in: i64, out: i64, atom: i64, n: i32)`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Kernel {
    /// The variables' types.
    pub vars: Vec<Type>,
    /// Each variable's entry value.
    pub inits: Vec<u128>,
    pub body: Vec<KStmt>,
    /// The variables every thread writes (at the end and at an early exit)
    /// to `out[global_tid * outs.len() + j]`, as `i64`.
    pub outs: Vec<Var>,
    /// The elements of `in` are `i64` (else `i32`).
    pub elem64: bool,
    /// The atomic words are `i64` (else `i32`).
    pub atom64: bool,
    pub launch: Launch,
    /// The value of the parameter `n`.
    pub n: i32,
    /// The contents of `in` (`IN_ELEMS` elements, truncated to the element type).
    pub input: Vec<u64>,
}

/// Counts the statements (nested ones included).
pub fn count(body: &[KStmt]) -> usize {
    body.iter().map(|s| 1 + children_ref(s).iter().map(|c| count(c)).sum::<usize>()).sum()
}

/// The nested bodies of a statement.
pub fn children_ref(s: &KStmt) -> Vec<&Vec<KStmt>> {
    match s {
        KStmt::If { then, els, .. } => vec![then, els],
        KStmt::Loop { body, .. } => vec![body],
        _ => vec![],
    }
}

pub fn children(s: &mut KStmt) -> Vec<&mut Vec<KStmt>> {
    match s {
        KStmt::If { then, els, .. } => vec![then, els],
        KStmt::Loop { body, .. } => vec![body],
        _ => vec![],
    }
}

impl KStmt {
    /// Uses shared memory or a barrier (so: top level only).
    pub fn is_collective(&self) -> bool {
        matches!(self, KStmt::Barrier | KStmt::Exchange { .. } | KStmt::ReadShared { .. })
    }
}

impl Kernel {
    pub fn size(&self) -> usize {
        count(&self.body) + self.vars.len()
    }
    /// Does any statement need the shared variable?
    pub fn uses_shared(&self) -> bool {
        fn any(b: &[KStmt]) -> bool {
            b.iter().any(|s| {
                matches!(s, KStmt::Exchange { .. } | KStmt::ReadShared { .. } | KStmt::Atomic { shared: true, .. })
                    || children_ref(s).iter().any(|c| any(c))
            })
        }
        any(&self.body)
    }
    /// Are there cross-lane statements (shared memory, barriers, shuffles,
    /// votes)? Without them each thread's outputs depend on that thread
    /// alone.
    pub fn cross_lane(&self) -> bool {
        fn any(b: &[KStmt]) -> bool {
            b.iter().any(|s| {
                s.is_collective()
                    || matches!(s, KStmt::Shuffle { .. } | KStmt::Vote { .. } | KStmt::Atomic { shared: true, .. })
                    || children_ref(s).iter().any(|c| any(c))
            })
        }
        any(&self.body)
    }
}
