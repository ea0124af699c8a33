//! The local memory (stack) a kernel needs per thread: its own frame plus the
//! deepest chain of device-function frames it can call. Each function's
//! `local_size` is its own frame when it is compiled; once the whole module
//! is known, a kernel's becomes the sum of the frames along its most
//! expensive call chain, so the launch (which gives each thread the kernel's
//! `.local` bytes, `docs/abi.md`) leaves room for every callee.
//!
//! A call graph with a cycle reachable from the kernel (recursion) has no
//! bound the compiler can compute; such a kernel gets [`RECURSIVE_STACK`]
//! bytes (at least its own chain), as CUDA gives a recursive kernel its
//! configurable per-thread stack. Deeper recursion traps as an
//! out-of-bounds local access naming the lane and PC.

use std::collections::HashMap;

use ursa_emit::elf;

/// Per-thread stack of a kernel whose calls can recurse (64 KiB, what
/// `ursa test` gives a function called from a run line).
pub const RECURSIVE_STACK: u32 = 64 * 1024;

/// Sets each kernel's `local_size` to what its deepest call chain needs.
pub fn propagate(obj: &mut elf::Object) {
    let needs = chain_needs(obj);
    for (f, n) in obj.functions.iter_mut().zip(needs) {
        if f.kernel {
            f.local_size = n;
        }
    }
}

/// What each function of `obj` needs when a thread starts in it: its frame
/// plus the deepest chain of frames it can call, or [`RECURSIVE_STACK`] (at
/// least its own frame) if a call cycle is reachable from it. In the order
/// of `obj.functions`; each `local_size` is read as the function's own frame.
pub fn chain_needs(obj: &elf::Object) -> Vec<u32> {
    let index: HashMap<&str, usize> = obj.functions.iter().enumerate().map(|(i, f)| (f.name.as_str(), i)).collect();
    let callees: Vec<Vec<usize>> = obj
        .functions
        .iter()
        .map(|f| {
            let mut c: Vec<usize> = f.relocs.iter().filter_map(|r| index.get(r.symbol.as_str()).copied()).collect();
            c.sort_unstable();
            c.dedup();
            c
        })
        .collect();
    let frames: Vec<u32> = obj.functions.iter().map(|f| f.local_size).collect();
    let mut memo: Vec<Option<Option<u32>>> = vec![None; frames.len()];
    let mut on_path = vec![false; frames.len()];
    (0..frames.len()).map(|i| need(i, &callees, &frames, &mut memo, &mut on_path).unwrap_or(RECURSIVE_STACK.max(frames[i]))).collect()
}

/// Bytes of stack function `i` needs with everything it calls, or `None` if
/// a call cycle is reachable from it.
fn need(i: usize, callees: &[Vec<usize>], frames: &[u32], memo: &mut [Option<Option<u32>>], on_path: &mut [bool]) -> Option<u32> {
    if let Some(m) = memo[i] {
        return m;
    }
    if on_path[i] {
        return None;
    }
    on_path[i] = true;
    let mut deepest = Some(0u32);
    for &c in &callees[i] {
        deepest = match (deepest, need(c, callees, frames, memo, on_path)) {
            (Some(a), Some(b)) => Some(a.max(b)),
            _ => None,
        };
    }
    on_path[i] = false;
    let r = deepest.and_then(|d| d.checked_add(frames[i]));
    memo[i] = Some(r);
    r
}
