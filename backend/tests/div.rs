//! Integer division end to end (legalize.rs → isel → simulator): the cases a
//! `; run:` line cannot express — traps on a zero divisor and on
//! `sdiv INT_MIN, -1`, and `srem INT_MIN, -1` (0 by CLIF's definition and the
//! Cranelift backends, but a trap in cranelift-interpreter 0.135, which the
//! filetests compare with) — and randomized comparisons with Rust's own
//! division for every type, with the divisor in a register or a constant.

mod common;
use common::{build, Rng};
use ursa_sim::{Gpu, LaunchConfig, Program, Trap, TrapKind};

const OPS: [&str; 4] = ["udiv", "sdiv", "urem", "srem"];
const BITS: [u32; 4] = [8, 16, 32, 64];

fn mask(bits: u32) -> u64 {
    u64::MAX >> (64 - bits)
}

fn sext(x: u64, bits: u32) -> i64 {
    ((x << (64 - bits)) as i64) >> (64 - bits)
}

/// `op` on `bits`-wide operands by Rust's own arithmetic; `None`: CLIF traps.
fn reference(op: &str, bits: u32, x: u64, d: u64) -> Option<u64> {
    macro_rules! by {
        ($u:ty, $s:ty) => {{
            let (ux, ud) = (x as $u, d as $u);
            let (sx, sd) = (x as $s, d as $s);
            match op {
                "udiv" => ux.checked_div(ud).map(|v| v as u64),
                "urem" => ux.checked_rem(ud).map(|v| v as u64),
                // checked_div: None for a zero divisor and for MIN / -1.
                "sdiv" => sx.checked_div(sd).map(|v| v as $u as u64),
                // MIN % -1 is 0, not a trap.
                "srem" => (sd != 0).then(|| sx.wrapping_rem(sd) as $u as u64),
                _ => unreachable!(),
            }
        }};
    }
    match bits {
        8 => by!(u8, i8),
        16 => by!(u16, i16),
        32 => by!(u32, i32),
        64 => by!(u64, i64),
        _ => unreachable!(),
    }
}

/// Calls `name` with 64-bit argument patterns; the one result, masked to `bits`.
#[allow(clippy::result_large_err)] // ursa_sim::Trap, as `Gpu::call_with` returns it
fn call(gpu: &mut Gpu, p: &Program, name: &str, args: &[u64], bits: u32) -> Result<u64, Trap> {
    let mut words = Vec::new();
    for &a in args {
        words.push(a as u32);
        words.push((a >> 32) as u32);
    }
    let cfg = LaunchConfig { strict: true, step_limit: Some(1_000_000), local_size: 64 * 1024, ..Default::default() };
    let (regs, _) = gpu.call_with(p, name, &words, 2, &cfg)?;
    Ok((regs[0] as u64 | (regs[1] as u64) << 32) & mask(bits))
}

/// `%<op>_i<bits>(x, d)`: the divisor in a register.
fn runtime_fn(op: &str, bits: u32) -> String {
    format!(
        "function %{op}_i{bits}(i{bits}, i{bits}) -> i{bits} {{
         block0(v0: i{bits}, v1: i{bits}):
             v2 = {op} v0, v1
             return v2
         }}\n"
    )
}

/// `%<op>_i<bits>_k<k>(x)`: divisor `k` a constant.
fn const_fn(op: &str, bits: u32, k: u64) -> String {
    format!(
        "function %{op}_i{bits}_k{k:x}(i{bits}) -> i{bits} {{
         block0(v0: i{bits}):
             v1 = iconst.i{bits} {k:#x}
             v2 = {op} v0, v1
             return v2
         }}\n"
    )
}

fn expect_trap(r: Result<u64, Trap>, what: &str) {
    match r {
        Err(t) if matches!(t.kind, TrapKind::Explicit(_)) => {}
        Err(t) => panic!("{}: trapped, but not with BPT.TRAP: {}", what, t),
        Ok(v) => panic!("{}: returned {:#x} instead of trapping", what, v),
    }
}

#[test]
fn zero_divisor_traps() {
    let mut src = String::new();
    for op in OPS {
        for bits in BITS {
            src += &runtime_fn(op, bits);
            src += &const_fn(op, bits, 0);
        }
    }
    let p = build(&src);
    let mut gpu = Gpu::new();
    for op in OPS {
        for bits in BITS {
            let min = 1u64 << (bits - 1);
            for x in [0, 1, 7, min, min - 1, mask(bits)] {
                let f = format!("{op}_i{bits}");
                expect_trap(call(&mut gpu, &p, &f, &[x, 0], bits), &format!("%{f}({x:#x}, 0)"));
                let f = format!("{op}_i{bits}_k0");
                expect_trap(call(&mut gpu, &p, &f, &[x], bits), &format!("%{f}({x:#x})"));
            }
        }
    }
}

#[test]
fn sdiv_overflow_traps_and_srem_is_zero() {
    let mut src = String::new();
    for bits in BITS {
        for op in ["sdiv", "srem"] {
            src += &runtime_fn(op, bits);
            src += &const_fn(op, bits, mask(bits));
        }
    }
    let p = build(&src);
    let mut gpu = Gpu::new();
    for bits in BITS {
        let min = 1u64 << (bits - 1);
        let m1 = mask(bits);
        let f = format!("sdiv_i{bits}");
        expect_trap(call(&mut gpu, &p, &f, &[min, m1], bits), &format!("%{f}(INT_MIN, -1)"));
        let fk = format!("sdiv_i{bits}_k{m1:x}");
        expect_trap(call(&mut gpu, &p, &fk, &[min], bits), &format!("%{fk}(INT_MIN)"));
        // Neighbours of the overflow do not trap.
        assert_eq!(call(&mut gpu, &p, &f, &[min + 1, m1], bits).unwrap(), min - 1, "%{f}(INT_MIN+1, -1)");
        assert_eq!(call(&mut gpu, &p, &f, &[min, 1], bits).unwrap(), min, "%{f}(INT_MIN, 1)");
        assert_eq!(call(&mut gpu, &p, &f, &[min, m1 - 1], bits).unwrap(), min >> 1, "%{f}(INT_MIN, -2)");
        assert_eq!(call(&mut gpu, &p, &f, &[m1, m1], bits).unwrap(), 1, "%{f}(-1, -1)");
        assert_eq!(call(&mut gpu, &p, &fk, &[min + 1], bits).unwrap(), min - 1, "%{fk}(INT_MIN+1)");
        // srem INT_MIN, -1 == 0.
        let f = format!("srem_i{bits}");
        assert_eq!(call(&mut gpu, &p, &f, &[min, m1], bits).unwrap(), 0, "%{f}(INT_MIN, -1)");
        let fk = format!("srem_i{bits}_k{m1:x}");
        assert_eq!(call(&mut gpu, &p, &fk, &[min], bits).unwrap(), 0, "%{fk}(INT_MIN)");
    }
}

/// The operand generator, on the shared deterministic [`Rng`].
impl Rng {
    /// A `bits`-wide pattern: often an edge value or a small number (either
    /// sign), otherwise random with a random number of significant bits.
    fn operand(&mut self, bits: u32) -> u64 {
        let m = mask(bits);
        let min = 1u64 << (bits - 1);
        let r = self.next();
        let v = match r % 8 {
            0 => [0, 1, 2, 3, min, min - 1, min + 1, m, m - 1, 1u64 << (bits / 2)][(r >> 8) as usize % 10],
            1 => (r >> 8) % 300,
            2 => ((r >> 8) % 300).wrapping_neg(),
            3 => 1u64 << ((r >> 8) % bits as u64),
            4 => (1u64 << ((r >> 8) % bits as u64)).wrapping_neg(),
            _ => self.next() >> ((r >> 8) % 64),
        };
        v & m
    }
}

/// Every operation and type against Rust, divisor in a register.
#[test]
fn random_runtime_divisors() {
    let mut src = String::new();
    for op in OPS {
        for bits in BITS {
            src += &runtime_fn(op, bits);
        }
    }
    let p = build(&src);
    let mut gpu = Gpu::new();
    let mut rng = Rng::new(0x9e37_79b9_7f4a_7c15);
    let mut checked = 0;
    for op in OPS {
        for bits in BITS {
            let f = format!("{op}_i{bits}");
            for _ in 0..400 {
                let (x, d) = (rng.operand(bits), rng.operand(bits));
                let got = call(&mut gpu, &p, &f, &[x, d], bits);
                match reference(op, bits, x, d) {
                    Some(want) => {
                        let got = got.unwrap_or_else(|t| panic!("%{f}({x:#x}, {d:#x}) trapped: {t}"));
                        assert_eq!(got, want, "%{f}({x:#x}, {d:#x}) = {got:#x}, want {want:#x}");
                    }
                    None => expect_trap(got, &format!("%{f}({x:#x}, {d:#x})")),
                }
                checked += 1;
            }
        }
    }
    assert_eq!(checked, 16 * 400);
}

/// Constant divisors (the special cases and the loop with a known divisor).
#[test]
fn random_constant_divisors() {
    let mut rng = Rng::new(0x0123_4567_89ab_cdef);
    let mut cases = Vec::new();
    for bits in BITS {
        let m = mask(bits);
        let min = 1u64 << (bits - 1);
        let mut ks =
            vec![1, 2, 3, 5, 6, 7, 10, 25, 125, 641, min, min - 1, min + 1, m, m - 1, m - 2, m - 6, 1 << (bits / 2), (1 << (bits / 2)) + 1];
        ks.extend((1..bits).map(|s| 1u64 << s));
        ks.extend((1..bits).map(|s| (1u64 << s).wrapping_neg() & m));
        ks.extend((0..6).map(|_| (rng.next() & m) | 1));
        ks.extend((0..6).map(|_| rng.next() >> (64 - bits / 2) | 1));
        for k in ks.iter_mut() {
            *k &= m;
        }
        ks.retain(|&k| k != 0);
        ks.sort();
        ks.dedup();
        for op in OPS {
            for &k in &ks {
                cases.push((op, bits, k));
            }
        }
    }
    let src: String = cases.iter().map(|&(op, bits, k)| const_fn(op, bits, k)).collect();
    let p = build(&src);
    let mut gpu = Gpu::new();
    for &(op, bits, k) in &cases {
        let f = format!("{op}_i{bits}_k{k:x}");
        for _ in 0..12 {
            let x = rng.operand(bits);
            let got = call(&mut gpu, &p, &f, &[x], bits);
            match reference(op, bits, x, k) {
                Some(want) => {
                    let got = got.unwrap_or_else(|t| panic!("%{f}({x:#x}) trapped: {t}"));
                    assert_eq!(got, want, "%{f}({x:#x}) = {got:#x}, want {want:#x} (signed {} / {})", sext(x, bits), sext(k, bits));
                }
                None => expect_trap(got, &format!("%{f}({x:#x})")),
            }
        }
    }
}
