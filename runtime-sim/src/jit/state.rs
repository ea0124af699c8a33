//! The interface of translated code: the state a region's host function
//! works on and the function's type.

use std::ffi::c_void;

use crate::timing::SCOREBOARDS;

/// The state a translated region works on (`repr(C)`: the generated code
/// reads and writes it at the fields' offsets).
#[repr(C)]
pub(crate) struct State {
    /// The lane's R0 in the warp's register file; row `i` is `128 * i` bytes on.
    pub(super) r: *mut u32,
    pub(super) p: *mut u32,
    pub(super) ur: *mut u32,
    pub(super) up: *mut u32,
    /// The lane's views of the warp's convergence barriers B0–B15 (barrier
    /// `k` at `k * LANES` words), their BSSY targets and the exited lanes.
    pub(super) b: *mut u32,
    pub(super) bssy_target: *mut u64,
    pub(super) exited: *mut u32,
    /// Per-run counters of block executions (global block numbers).
    pub(super) counts: *mut u64,
    /// The environment of the calls back into the semantics (`run_one`'s
    /// `Env`; the generated code only passes it on).
    pub(super) env: *mut c_void,
    /// The lane's local memory (null until the warp's first local access).
    pub(super) local: *mut u8,
    pub(super) local_size: u64,
    pub(super) lane: u64,
    pub(super) steps: u64,
    pub(super) limit: u64,
    /// Guard-false issues (no lane executed).
    pub(super) skipped: u64,
    pub(super) next_issue: u64,
    pub(super) sb: [u64; SCOREBOARDS],
}

/// A translated region: runs the lane from the region's entry and returns
/// the PC the interpreter goes on at.
pub(super) type RegionFn = unsafe extern "C" fn(*mut State) -> u64;
