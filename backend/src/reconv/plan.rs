//! The data of reconvergence: the regions planned for one function
//! ([`Plan`]), the calls it makes, and what the rest of the module tells its
//! planning ([`ModuleFacts`]). `plan_reconvergence` fills a plan,
//! `alloc_bregs` gives its regions barrier registers, `insert_breg_saves`
//! and `insert_reconvergence` put its instructions into the code, and
//! `module::call_graph` gathers the module's facts from every function's plan.

use std::collections::{HashMap, HashSet};

use cranelift_codegen::ir::{self, Block};
use ursa_isel::vcode::{BlockId, VCode};

/// Number of convergence-barrier registers (`B0`–`B15`).
pub const NUM_BREGS: usize = 16;

/// One reconvergence region.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Region {
    /// The CLIF block that starts with `BSSY Bk, J` (`J` the first join).
    pub setup: Block,
    /// The CLIF blocks that start with `BSYNC Bk`: one, or in a device
    /// function whose lanes may leave by different `return`s, every block
    /// that returns.
    pub joins: Vec<Block>,
    /// `k`.
    pub breg: u8,
    /// `BREAK Bk` right after each `BSYNC`: the lanes leave the barrier once
    /// released, because they could meet a `BSYNC Bk` again without passing
    /// a `BSSY Bk` first ([`crate::reconv::alloc_bregs`]).
    pub rearm: bool,
    /// Borrowed register (all 16 clash here): the lanes save their view of
    /// `Bk` at the setup block and restore it after the join's `BSYNC`
    /// ([`crate::reconv::alloc_bregs`], "Borrowing").
    pub borrow: bool,
}

/// What a call instruction calls.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Callee {
    /// A function of the module, by object symbol.
    Direct(String),
    /// A function pointer (`call_indirect`, `return_call_indirect`).
    Indirect,
}

/// A call (or tail call) to a function that is not an intrinsic.
#[derive(Clone, Debug)]
pub struct CallSite {
    pub block: Block,
    pub inst: ir::Inst,
    pub callee: Callee,
    /// The barrier registers of this function's regions that lanes may hold
    /// while the callee runs (regions around the call, or running at the
    /// same time in other lanes of the warp).
    pub busy: u16,
}

/// The regions of one function.
#[derive(Clone, Debug, Default)]
pub struct Plan {
    pub regions: Vec<Region>,
    /// Divergent branches that got no region, with the reason.
    pub skipped: Vec<String>,
    /// The entry block (always the first block of the code; the lowering
    /// does not record it in `VBlock::clif`).
    pub entry: Option<Block>,
    /// The function's calls.
    pub calls: Vec<CallSite>,
    /// Barrier registers a device function saves at entry and restores
    /// before each return (bit `k`: `Bk`).
    pub saved: u16,
    /// Pairs of calls (indices into `calls`, `i <= j`) that lanes of one
    /// warp may be executing at the same time (`i == j`: two lane groups at
    /// the one call).
    pub concurrent_calls: Vec<(usize, usize)>,
}

/// A region before register allocation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Group {
    pub setup: Block,
    pub joins: Vec<Block>,
    /// The divergent branches (their blocks) the region gathers.
    pub branches: Vec<Block>,
}

/// What the module tells one function's reconvergence planning.
#[derive(Clone, Debug, Default)]
pub struct ModuleFacts {
    /// Functions (object symbols) that reach a CTA barrier: the chain of
    /// functions from it to the one that calls `%ursa_barrier`.
    pub barrier_chains: HashMap<String, Vec<String>>,
    /// The chain of some address-taken function that reaches a barrier.
    pub indirect_barrier: Option<Vec<String>>,
    /// Device functions: what their regions may use.
    pub device: HashMap<String, DeviceFacts>,
    /// Functions that have regions or call (possibly through others) one
    /// that has.
    pub with_regions: HashSet<String>,
    /// An address-taken function has regions or calls one that has.
    pub indirect_regions: bool,
}

/// What a device function's regions may use.
#[derive(Clone, Debug, Default)]
pub struct DeviceFacts {
    /// Barrier registers (bit `k`: `Bk`) that callers may hold while it runs.
    pub avoid: u16,
    /// Why lanes of a warp may run it twice at once, if they may: then
    /// every register it uses is saved at entry and restored at return
    /// (its callers, itself included, may hold any).
    pub runs_twice: Option<String>,
}

impl ModuleFacts {
    /// Can the callee (or a function it calls) have convergence regions?
    pub fn reaches_regions(&self, c: &Callee) -> bool {
        match c {
            Callee::Direct(s) => self.with_regions.contains(s),
            Callee::Indirect => self.indirect_regions,
        }
    }
}

/// The VCode block of CLIF block `b`.
pub fn vcode_block(vcode: &VCode, plan: &Plan, b: Block) -> Option<BlockId> {
    if Some(b) == plan.entry {
        // The block that defines the arguments (the first one).
        let k =
            vcode.blocks.iter().position(|vb| vb.insts.first().is_some_and(|m| m.pseudo == ursa_isel::vcode::Pseudo::Args)).unwrap_or(0);
        return Some(BlockId(k as u32));
    }
    vcode.blocks.iter().position(|vb| vb.clif == Some(b.as_u32())).map(|i| BlockId(i as u32))
}

/// The plan as `--print-after plan_reconvergence` shows it: one line per
/// region, then the branches left without one.
impl std::fmt::Display for Plan {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for r in &self.regions {
            let joins: Vec<String> = r.joins.iter().map(|j| j.to_string()).collect();
            write!(f, "region B{}: BSSY at {}, BSYNC at {}", r.breg, r.setup, joins.join(", "))?;
            if r.rearm {
                f.write_str(", BREAK after BSYNC")?;
            }
            if r.borrow {
                f.write_str(", borrowed (saved and restored)")?;
            }
            writeln!(f)?;
        }
        if self.saved != 0 {
            let regs: Vec<String> = (0..NUM_BREGS).filter(|k| self.saved & (1 << k) != 0).map(|k| format!("B{}", k)).collect();
            writeln!(f, "saved at entry, restored at return: {}", regs.join(", "))?;
        }
        for s in &self.skipped {
            writeln!(f, "no convergence barrier: {}", s)?;
        }
        if self.regions.is_empty() && self.skipped.is_empty() {
            writeln!(f, "no regions")?;
        }
        Ok(())
    }
}
