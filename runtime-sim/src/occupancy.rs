//! Theoretical occupancy: how many CTAs of a launch fit on one SM at once,
//! by the formulas of CUDA's occupancy calculator (`cuda_occupancy.h`):
//! warps, CTA slots, registers allocated per warp in units and divided among
//! the sub-partitions, and shared memory (static + dynamic + the per-CTA
//! reservation) in allocation units. docs/timing.md, "Occupancy".

use crate::machine_desc::MachineDesc;

/// What one CTA of a launch needs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CtaNeeds {
    pub threads: u32,
    /// R registers per thread (the object's count).
    pub registers: u32,
    /// Shared memory bytes, static + dynamic.
    pub shared: u32,
}

/// A resource that limits the CTAs per SM.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Limiter {
    Registers,
    Shared,
    Warps,
    CtaSlots,
}

impl Limiter {
    pub fn name(self) -> &'static str {
        match self {
            Limiter::Registers => "registers",
            Limiter::Shared => "shared memory",
            Limiter::Warps => "warps",
            Limiter::CtaSlots => "CTA slots",
        }
    }
}

/// The occupancy calculator's answer.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Occupancy {
    pub warps_per_cta: u32,
    /// CTAs per SM allowed by each resource (registers, shared, warps, slots).
    pub by_registers: u32,
    pub by_shared: u32,
    pub by_warps: u32,
    pub by_slots: u32,
    /// The smallest of them.
    pub ctas_per_sm: u32,
    /// The resources that allow only `ctas_per_sm` (ties all named).
    pub limiters: Vec<Limiter>,
    /// Registers one CTA is allocated, shared bytes one CTA is allocated.
    pub cta_registers: u32,
    pub cta_shared: u32,
}

impl Occupancy {
    /// Resident warps per SM over the SM's maximum (0 to 1).
    pub fn theoretical(&self, m: &MachineDesc) -> f64 {
        (self.ctas_per_sm * self.warps_per_cta) as f64 / m.max_warps as f64
    }

    /// `registers` or `registers, warps`.
    pub fn limiter_names(&self) -> String {
        self.limiters.iter().map(|l| l.name()).collect::<Vec<_>>().join(", ")
    }
}

/// The CTAs of `n` that fit on one SM of `m`; an error where not even one
/// fits (more registers per thread than a thread can have, more shared
/// memory or threads than an SM has).
pub fn occupancy(m: &MachineDesc, n: CtaNeeds) -> Result<Occupancy, String> {
    if n.threads == 0 || n.threads > m.max_threads_per_cta {
        return Err(format!("a CTA of {} threads; the machine allows 1 to {}", n.threads, m.max_threads_per_cta));
    }
    if n.registers > m.max_registers_per_thread {
        return Err(format!("{} registers per thread; the machine allows at most {}", n.registers, m.max_registers_per_thread));
    }
    let warps_per_cta = n.threads.div_ceil(32);
    // Registers: per warp, in allocation units; each sub-partition holds
    // the warps its share of the register file takes.
    let reg_per_warp = (n.registers.max(1) * 32).next_multiple_of(m.register_unit) as u64;
    let warps_per_sub = (m.registers / m.subpartitions) as u64 / reg_per_warp;
    let by_registers = (warps_per_sub * m.subpartitions as u64 / warps_per_cta as u64) as u32;
    // Shared memory: request plus the system's reservation, in units.
    let cta_shared = (n.shared as u64 + m.shared_reserved as u64).next_multiple_of(m.shared_unit as u64);
    let by_shared = (m.shared_bytes as u64 / cta_shared).min(u32::MAX as u64) as u32;
    let by_warps = m.max_warps / warps_per_cta;
    let by_slots = m.max_ctas;
    let all = [(Limiter::Registers, by_registers), (Limiter::Shared, by_shared), (Limiter::Warps, by_warps), (Limiter::CtaSlots, by_slots)];
    let ctas_per_sm = all.iter().map(|a| a.1).min().unwrap_or(0);
    if ctas_per_sm == 0 {
        let why: Vec<&str> = all.iter().filter(|a| a.1 == 0).map(|a| a.0.name()).collect();
        return Err(format!(
            "one CTA ({} threads, {} registers per thread, {} bytes of shared memory) does not fit on an SM: too many {}",
            n.threads,
            n.registers,
            n.shared,
            why.join(", ")
        ));
    }
    Ok(Occupancy {
        warps_per_cta,
        by_registers,
        by_shared,
        by_warps,
        by_slots,
        ctas_per_sm,
        limiters: all.iter().filter(|a| a.1 == ctas_per_sm).map(|a| a.0).collect(),
        cta_registers: (reg_per_warp * warps_per_cta as u64) as u32,
        cta_shared: cta_shared as u32,
    })
}
