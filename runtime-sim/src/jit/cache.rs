//! The translations of one program: the Cranelift module holding their
//! code, the region function of each entry instruction and what the
//! translator did, and the arrivals at entries not translated yet (kept in
//! [`crate::program::Program`], built on first use).

use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

use cranelift_jit::JITModule;

use super::state::RegionFn;

/// The translations of one program.
pub(crate) struct Cache {
    inner: Mutex<Inner>,
}

pub(super) struct Inner {
    pub(super) module: Option<JITModule>,
    /// Translated regions by entry instruction (None: translation failed;
    /// the interpreter runs from there).
    pub(super) entries: HashMap<usize, Option<RegionFn>>,
    /// How often a lane reached each entry not translated yet (below the
    /// launch's `jit_threshold`).
    pub(super) arrivals: HashMap<usize, u32>,
    /// The opcode forms of each block, by global block number.
    pub(super) block_forms: Vec<Vec<u16>>,
    pub(super) stats: JitStats,
}

// The module's raw code pointers are only used under the lock or after
// being copied out as plain function pointers.
unsafe impl Send for Inner {}

impl Drop for Inner {
    fn drop(&mut self) {
        if let Some(m) = self.module.take() {
            // SAFETY: the program (and so every run that used its code) is gone.
            unsafe { m.free_memory() }
        }
    }
}

/// What the translator did for a program so far.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct JitStats {
    /// Regions translated (one host function each).
    pub regions: u64,
    /// Instructions in them (a region may repeat another's).
    pub instructions: u64,
    /// Time spent translating and compiling.
    pub time: Duration,
    /// Entries whose translation failed (run by the interpreter).
    pub failures: u64,
}

impl Default for Cache {
    fn default() -> Self {
        Cache {
            inner: Mutex::new(Inner {
                module: None,
                entries: HashMap::new(),
                arrivals: HashMap::new(),
                block_forms: Vec::new(),
                stats: JitStats::default(),
            }),
        }
    }
}

impl Cache {
    pub fn stats(&self) -> JitStats {
        self.lock().stats
    }

    pub(super) fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }
}
