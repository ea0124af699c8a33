//! The interface between the interpreter and an instruction's semantics
//! beyond the warp's own state: what the instruction sees of its CTA and
//! launch ([`Site`]) and what it did to the control flow of its group
//! ([`Flow`]). Faults are [`crate::trap::Fault`]s.

use crate::machine::CtaBarrier;
use crate::sm_trace::Recorder;

/// What an instruction did to the control flow of its group.
pub(crate) enum Flow {
    /// Every lane of the group continues at the next instruction.
    Next,
    /// The executing lanes jump to the target; the others fall through.
    Jump(u64),
    /// Per-lane PCs or statuses were changed; the group must be recomputed.
    Regroup,
}

/// Per-instruction information the semantics may need.
pub(crate) struct Site<'a> {
    pub grid: [u32; 3],
    pub block: [u32; 3],
    pub cta: [u32; 3],
    pub clock: u64,
    pub shared: &'a mut Vec<u8>,
    pub bars: &'a mut [CtaBarrier; 16],
    /// The SM model's trace of the CTA, when it is on: a load, store or
    /// atomic records its access there from the lane addresses it reads
    /// for itself (`mem_ops::exec`), so they are read once.
    pub record: Option<&'a mut Recorder>,
}
