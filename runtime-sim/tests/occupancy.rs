//! The occupancy calculator against CUDA's occupancy-calculator formulas
//! for sm_80 (docs/timing.md, "Occupancy"): for each (threads, registers,
//! shared) the CTAs per SM, the theoretical occupancy and the limiter,
//! worked out by hand from the formulas (warps per CTA = ceil(threads/32);
//! registers per warp = registers × 32 rounded up to 256, warps per
//! sub-partition = 16384 / that; shared per CTA = request + 1 KiB rounded
//! up to 128 B, CTAs = 167936 / that; at most 64 warps and 32 CTAs).
use ursa_sim::machine_desc::MachineDesc;
use ursa_sim::occupancy::{occupancy, CtaNeeds, Limiter};

#[test]
fn occupancy_table() {
    use Limiter::*;
    let m = MachineDesc::default();
    // threads, registers, shared bytes, CTAs per SM, occupancy %, limiters
    let table: &[(u32, u32, u32, u32, f64, &[Limiter])] = &[
        (256, 32, 0, 8, 100.0, &[Registers, Warps]), // 1024 regs/warp: 16 warps per sub-partition
        (256, 24, 0, 8, 100.0, &[Warps]),            // 768 regs/warp: 21 per sub-partition, 84 warps
        (256, 64, 0, 4, 50.0, &[Registers]),         // 2048: 8 per sub-partition
        (256, 128, 0, 2, 25.0, &[Registers]),        // 4096: 4 per sub-partition
        (32, 255, 0, 8, 12.5, &[Registers]),         // 8160 -> 8192: 2 per sub-partition
        (1024, 64, 0, 1, 50.0, &[Registers]),        // 32 warps by registers, a CTA is 32 warps
        (96, 40, 0, 16, 75.0, &[Registers]),         // 1280: 12 per sub-partition, 48 warps = 16 CTAs of 3
        (32, 16, 0, 32, 50.0, &[CtaSlots]),          // one-warp CTAs: 32 CTA slots
        (128, 32, 48 * 1024, 3, 18.75, &[Shared]),   // 50176 B per CTA: 3 fit in 164 KiB
        (128, 32, 100 * 1024, 1, 6.25, &[Shared]),   // 103424 B: 1
        (64, 32, 20 * 1024, 7, 21.875, &[Shared]),   // 21504 B: 7
        (1024, 32, 0, 2, 100.0, &[Registers, Warps]),
        (1000, 33, 0, 1, 50.0, &[Registers]), // 33 x 32 = 1056 -> 1280: 12 per sub-partition, 48 warps: 1 CTA of 32
    ];
    for &(threads, registers, shared, ctas, pct, limiters) in table {
        let o = occupancy(&m, CtaNeeds { threads, registers, shared }).unwrap();
        let what = format!("{} threads, {} registers, {} shared: {:?}", threads, registers, shared, o);
        assert_eq!(o.ctas_per_sm, ctas, "{}", what);
        assert!((100.0 * o.theoretical(&m) - pct).abs() < 1e-9, "{}", what);
        assert_eq!(o.limiters, limiters, "{}", what);
    }
}

#[test]
fn what_does_not_fit_is_an_error() {
    let m = MachineDesc::default();
    let e = occupancy(&m, CtaNeeds { threads: 128, registers: 256, shared: 0 }).unwrap_err();
    assert!(e.contains("at most 255"), "{}", e);
    let e = occupancy(&m, CtaNeeds { threads: 128, registers: 32, shared: 200 * 1024 }).unwrap_err();
    assert!(e.contains("shared memory"), "{}", e);
    // 1024 threads at 255 registers: 8 warps fit by registers, a CTA has 32.
    let e = occupancy(&m, CtaNeeds { threads: 1024, registers: 255, shared: 0 }).unwrap_err();
    assert!(e.contains("registers"), "{}", e);
}

#[test]
fn machine_file_overrides_and_errors() {
    let d = MachineDesc::parse("sms = 2 # two\nscheduler = lrr\n").unwrap();
    assert_eq!(d.sms, 2);
    assert_eq!(d.scheduler, ursa_sim::machine_desc::Policy::Lrr);
    assert_eq!(d.max_warps, MachineDesc::default().max_warps);
    assert!(MachineDesc::parse("sms = two").unwrap_err().contains("line 1"));
    assert!(MachineDesc::parse("bogus = 1").unwrap_err().contains("unknown key `bogus`"));
    assert!(MachineDesc::parse("rate.alu = 0").unwrap_err().contains("rate.alu"));
    assert!(MachineDesc::parse("sms").unwrap_err().contains("key = value"));
    // The description prints as a file that parses back to itself.
    let d = MachineDesc::default();
    assert_eq!(MachineDesc::parse(&d.to_string()).unwrap(), d);
}
