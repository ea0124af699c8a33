//! The machine description of the SM timing model (docs/timing.md): every
//! parameter of `runtime-sim/machine/sm80.machine`, the shipped default
//! compiled in, with its source cited in that file. A user file
//! (`ursa run --machine FILE`) overrides the keys it names.

use std::fmt;

/// How a sub-partition's scheduler picks among its ready warps.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Policy {
    /// Greedy-then-oldest: the warp that issued last, while it is ready;
    /// else the oldest ready warp.
    Gto,
    /// Loose round robin: the first ready warp after the one that issued last.
    Lrr,
}

macro_rules! desc {
    ($($key:literal => $field:ident: $ty:ty),* $(,)?) => {
        /// Every parameter of the machine (docs/timing.md has the table with sources).
        #[derive(Clone, Debug, PartialEq)]
        pub struct MachineDesc {
            $(pub $field: $ty,)*
            pub scheduler: Policy,
        }

        impl MachineDesc {
            /// Sets one key from its text; an error names what is wrong.
            fn set(&mut self, key: &str, value: &str) -> Result<(), String> {
                match key {
                    $($key => self.$field = value.parse::<$ty>().map_err(|_| format!("`{}` needs a number, not `{}`", key, value))?,)*
                    "scheduler" => self.scheduler = match value {
                        "gto" => Policy::Gto,
                        "lrr" => Policy::Lrr,
                        _ => return Err(format!("`scheduler` is `gto` or `lrr`, not `{}`", value)),
                    },
                    _ => return Err(format!("unknown key `{}`", key)),
                }
                Ok(())
            }

            /// `key = value` lines of every parameter.
            fn write(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                $(writeln!(f, "{} = {}", $key, self.$field)?;)*
                writeln!(f, "scheduler = {}", if self.scheduler == Policy::Gto { "gto" } else { "lrr" })
            }
        }

        impl Default for MachineDesc {
            /// The shipped description (`runtime-sim/machine/sm80.machine`).
            fn default() -> Self {
                let mut d = MachineDesc { $($field: Default::default(),)* scheduler: Policy::Gto };
                d.apply(SHIPPED).expect("the shipped machine description parses");
                d
            }
        }
    };
}

desc! {
    "sms" => sms: u32,
    "subpartitions" => subpartitions: u32,
    "issue_per_cycle" => issue_per_cycle: u32,
    "max_warps" => max_warps: u32,
    "max_ctas" => max_ctas: u32,
    "max_threads_per_cta" => max_threads_per_cta: u32,
    "registers" => registers: u32,
    "max_registers_per_thread" => max_registers_per_thread: u32,
    "register_unit" => register_unit: u32,
    "shared_bytes" => shared_bytes: u32,
    "shared_unit" => shared_unit: u32,
    "shared_reserved" => shared_reserved: u32,
    "rate.alu" => rate_alu: u32,
    "rate.fma" => rate_fma: u32,
    "rate.fp64" => rate_fp64: u32,
    "rate.xu" => rate_xu: u32,
    "rate.shfl" => rate_shfl: u32,
    "rate.uniform" => rate_uniform: u32,
    "rate.cbu" => rate_cbu: u32,
    "shared_banks" => shared_banks: u32,
    "shared_bank_bytes" => shared_bank_bytes: u32,
    "sector_bytes" => sector_bytes: u32,
    "line_bytes" => line_bytes: u32,
    "lsu_lines_per_cycle" => lsu_lines_per_cycle: u32,
    "latency.shared" => lat_shared: u32,
    "latency.l1" => lat_l1: u32,
    "latency.l2" => lat_l2: u32,
    "latency.dram" => lat_dram: u32,
    "latency.atomic" => lat_atomic: u32,
    "l1_bytes" => l1_bytes: u64,
    "l1_ways" => l1_ways: u32,
    "l2_bytes" => l2_bytes: u64,
    "l2_ways" => l2_ways: u32,
    "l2_sectors_per_cycle" => l2_sectors_per_cycle: u32,
    "dram_sectors_per_cycle" => dram_sectors_per_cycle: u32,
}

/// The shipped description's text.
pub const SHIPPED: &str = include_str!("../machine/sm80.machine");

impl MachineDesc {
    /// The shipped description with the keys of `text` overriding it.
    pub fn parse(text: &str) -> Result<MachineDesc, String> {
        let mut d = MachineDesc::default();
        d.apply(text)?;
        Ok(d)
    }

    /// Overrides the keys `text` names; checks the result.
    pub fn apply(&mut self, text: &str) -> Result<(), String> {
        for (i, raw) in text.lines().enumerate() {
            let line = raw.split('#').next().unwrap_or("").trim();
            if line.is_empty() {
                continue;
            }
            let (k, v) = line.split_once('=').ok_or_else(|| format!("line {}: expected `key = value`", i + 1))?;
            self.set(k.trim(), v.trim()).map_err(|m| format!("line {}: {}", i + 1, m))?;
        }
        self.check()
    }

    /// Values the model cannot run with.
    fn check(&self) -> Result<(), String> {
        let positive = [
            ("sms", self.sms),
            ("subpartitions", self.subpartitions),
            ("issue_per_cycle", self.issue_per_cycle),
            ("max_warps", self.max_warps),
            ("max_ctas", self.max_ctas),
            ("max_threads_per_cta", self.max_threads_per_cta),
            ("register_unit", self.register_unit),
            ("shared_unit", self.shared_unit),
            ("rate.alu", self.rate_alu),
            ("rate.fma", self.rate_fma),
            ("rate.fp64", self.rate_fp64),
            ("rate.xu", self.rate_xu),
            ("rate.shfl", self.rate_shfl),
            ("rate.uniform", self.rate_uniform),
            ("rate.cbu", self.rate_cbu),
            ("shared_banks", self.shared_banks),
            ("shared_bank_bytes", self.shared_bank_bytes),
            ("sector_bytes", self.sector_bytes),
            ("line_bytes", self.line_bytes),
            ("lsu_lines_per_cycle", self.lsu_lines_per_cycle),
            ("l1_ways", self.l1_ways),
            ("l2_ways", self.l2_ways),
            ("l2_sectors_per_cycle", self.l2_sectors_per_cycle),
            ("dram_sectors_per_cycle", self.dram_sectors_per_cycle),
        ];
        if let Some((k, _)) = positive.iter().find(|(_, v)| *v == 0) {
            return Err(format!("`{}` must be at least 1", k));
        }
        if self.sms > 4096 || self.subpartitions > 64 || self.max_warps > 4096 {
            return Err("at most 4096 SMs, 64 sub-partitions and 4096 warps per SM".into());
        }
        if !self.sector_bytes.is_power_of_two() || !self.line_bytes.is_power_of_two() || self.line_bytes < self.sector_bytes {
            return Err("`sector_bytes` and `line_bytes` must be powers of two, a line at least a sector".into());
        }
        if !self.shared_bank_bytes.is_power_of_two() {
            return Err("`shared_bank_bytes` must be a power of two".into());
        }
        Ok(())
    }

    /// Cycles a warp-instruction occupies a pipe of `rate` lane operations
    /// per clock per SM in one sub-partition.
    pub fn interval(&self, rate: u32) -> u32 {
        (32 * self.subpartitions).div_ceil(rate).max(1)
    }
}

impl fmt::Display for MachineDesc {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.write(f)
    }
}
