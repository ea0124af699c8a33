//! i128 end to end (legalize_i128.rs → isel → simulator), against Rust's own
//! `i128`/`u128` arithmetic: the traps a `; run:` line cannot express (zero
//! divisors, `sdiv INT_MIN, -1`), `srem INT_MIN, -1` (0 by CLIF's definition;
//! cranelift-interpreter 0.135 traps there, so it cannot be a run line), and
//! randomized operands for every narrowed operation family. The filetests in
//! tests/filetests/i128 hold the edge values, checked against
//! cranelift-interpreter as well.

mod common;
use common::{build, Rng};
use ursa_sim::{Gpu, LaunchConfig, Program, Trap, TrapKind};

/// Calls `name` with i128 arguments (two slots each, low half first); its
/// `nret` i128 results.
#[allow(clippy::result_large_err)] // ursa_sim::Trap, as `Gpu::call_with` returns it
fn call(gpu: &mut Gpu, p: &Program, name: &str, args: &[u128], nret: usize) -> Result<Vec<u128>, Trap> {
    let mut words = Vec::new();
    for &a in args {
        for k in 0..4 {
            words.push((a >> (32 * k)) as u32);
        }
    }
    let cfg = LaunchConfig { strict: true, step_limit: Some(1_000_000), local_size: 64 * 1024, ..Default::default() };
    let (regs, _) = gpu.call_with(p, name, &words, 4 * nret, &cfg)?;
    Ok((0..nret).map(|r| (0..4).fold(0u128, |acc, k| acc | (regs[4 * r + k] as u128) << (32 * k))).collect())
}

fn binary_fn(op: &str) -> String {
    format!(
        "function %{op}(i128, i128) -> i128 {{
         block0(v0: i128, v1: i128):
             v2 = {op} v0, v1
             return v2
         }}\n"
    )
}

fn unary_fn(op: &str) -> String {
    format!(
        "function %{op}(i128) -> i128 {{
         block0(v0: i128):
             v1 = {op} v0
             return v1
         }}\n"
    )
}

fn icmp_fn(cc: &str) -> String {
    format!(
        "function %icmp_{cc}(i128, i128) -> i128 {{
         block0(v0: i128, v1: i128):
             v2 = icmp {cc} v0, v1
             v3 = uextend.i128 v2
             return v3
         }}\n"
    )
}

fn expect_trap(r: Result<Vec<u128>, Trap>, what: &str) {
    match r {
        Err(t) if matches!(t.kind, TrapKind::Explicit(_)) => {}
        Err(t) => panic!("{}: trapped, but not with BPT.TRAP: {}", what, t),
        Ok(v) => panic!("{}: returned {:#x?} instead of trapping", what, v),
    }
}

const MIN: u128 = 1 << 127;

#[test]
fn division_traps_and_srem_min_minus_one() {
    let src: String = ["udiv", "sdiv", "urem", "srem"].iter().map(|op| binary_fn(op)).collect();
    let p = build(&src);
    let mut gpu = Gpu::new();
    for op in ["udiv", "sdiv", "urem", "srem"] {
        for x in [0, 1, MIN, MIN - 1, u128::MAX, 1 << 64] {
            expect_trap(call(&mut gpu, &p, op, &[x, 0], 1), &format!("%{op}({x:#x}, 0)"));
        }
    }
    expect_trap(call(&mut gpu, &p, "sdiv", &[MIN, u128::MAX], 1), "%sdiv(INT_MIN, -1)");
    // Neighbours of the overflow do not trap.
    assert_eq!(call(&mut gpu, &p, "sdiv", &[MIN + 1, u128::MAX], 1).unwrap(), [MIN - 1]);
    assert_eq!(call(&mut gpu, &p, "sdiv", &[MIN, 1], 1).unwrap(), [MIN]);
    assert_eq!(call(&mut gpu, &p, "sdiv", &[MIN, u128::MAX - 1], 1).unwrap(), [MIN >> 1]);
    // A divisor that is -1 in one half only.
    assert_eq!(call(&mut gpu, &p, "sdiv", &[MIN, u64::MAX as u128], 1).unwrap(), [(i128::MIN / u64::MAX as i128) as u128]);
    assert_eq!(call(&mut gpu, &p, "srem", &[MIN, u128::MAX], 1).unwrap(), [0], "%srem(INT_MIN, -1)");
}

/// The operand generator, on the shared deterministic [`Rng`].
impl Rng {
    /// Often an edge value or a small number of either sign, otherwise random
    /// with a random number of significant bits.
    fn operand(&mut self) -> u128 {
        let r = self.next();
        let wide = (self.next() as u128) << 64 | self.next() as u128;
        match r % 8 {
            0 => [0, 1, 2, MIN, MIN - 1, MIN + 1, u128::MAX, u128::MAX - 1, 1 << 64, (1 << 64) - 1, 1 << 63][(r >> 8) as usize % 11],
            1 => ((r >> 8) % 300) as u128,
            2 => (((r >> 8) % 300) as u128).wrapping_neg(),
            3 => 1u128 << ((r >> 8) % 128),
            4 => (1u128 << ((r >> 8) % 128)).wrapping_neg(),
            5 => wide >> 64,
            _ => wide >> ((r >> 8) % 128),
        }
    }
}

/// The high 128 bits of the 256-bit product, schoolbook on 32-bit limbs.
fn umulhi(x: u128, y: u128) -> u128 {
    let limbs = |v: u128| [0, 1, 2, 3].map(|k| (v >> (32 * k)) as u32 as u64);
    let (a, b) = (limbs(x), limbs(y));
    let mut r = [0u64; 8];
    for i in 0..4 {
        let mut carry = 0u64;
        for j in 0..4 {
            let t = a[i] * b[j] + r[i + j] + carry;
            r[i + j] = t & 0xffff_ffff;
            carry = t >> 32;
        }
        r[i + 4] = carry;
    }
    (4..8).fold(0u128, |acc, k| acc | (r[k] as u128) << (32 * (k - 4)))
}

fn reference(op: &str, x: u128, y: u128) -> Option<u128> {
    let (sx, sy) = (x as i128, y as i128);
    Some(match op {
        "iadd" => x.wrapping_add(y),
        "isub" => x.wrapping_sub(y),
        "imul" => x.wrapping_mul(y),
        "umulhi" => umulhi(x, y),
        // signed high half = unsigned one - (x < 0 ? y : 0) - (y < 0 ? x : 0)
        "smulhi" => umulhi(x, y).wrapping_sub(if sx < 0 { y } else { 0 }).wrapping_sub(if sy < 0 { x } else { 0 }),
        "udiv" => x.checked_div(y)?,
        "urem" => x.checked_rem(y)?,
        "sdiv" => sx.checked_div(sy)? as u128,
        "srem" => (sy != 0).then(|| sx.wrapping_rem(sy))? as u128,
        "smin" => sx.min(sy) as u128,
        "umax" => x.max(y),
        "ishl" => x << (y % 128),
        "ushr" => x >> (y % 128),
        "sshr" => (sx >> (y % 128)) as u128,
        "rotl" => x.rotate_left((y % 128) as u32),
        "rotr" => x.rotate_right((y % 128) as u32),
        "icmp_slt" => (sx < sy) as u128,
        "icmp_ule" => (x <= y) as u128,
        "icmp_sge" => (sx >= sy) as u128,
        "icmp_ugt" => (x > y) as u128,
        "clz" => x.leading_zeros() as u128,
        "ctz" => x.trailing_zeros() as u128,
        "cls" => ((x ^ (sx >> 127) as u128).leading_zeros() - 1) as u128,
        "popcnt" => x.count_ones() as u128,
        "bitrev" => x.reverse_bits(),
        "bswap" => x.swap_bytes(),
        _ => unreachable!("no reference for {op}"),
    })
}

/// Every narrowed family against Rust on random operands.
#[test]
fn random_operands_against_rust() {
    let binary = [
        "iadd", "isub", "imul", "umulhi", "smulhi", "udiv", "urem", "sdiv", "srem", "smin", "umax", "ishl", "ushr", "sshr", "rotl", "rotr",
    ];
    let compares = ["slt", "ule", "sge", "ugt"];
    let unary = ["clz", "ctz", "cls", "popcnt", "bitrev", "bswap"];
    let mut src: String = binary.iter().map(|op| binary_fn(op)).collect();
    src += &compares.iter().map(|cc| icmp_fn(cc)).collect::<String>();
    src += &unary.iter().map(|op| unary_fn(op)).collect::<String>();
    let p = build(&src);
    let mut gpu = Gpu::new();
    let mut rng = Rng::new(0x1128_5eed);
    let names: Vec<String> = binary.iter().map(|s| s.to_string()).chain(compares.iter().map(|c| format!("icmp_{c}"))).collect();
    for name in &names {
        for _ in 0..300 {
            let (x, y) = (rng.operand(), rng.operand());
            let got = call(&mut gpu, &p, name, &[x, y], 1);
            match reference(name, x, y) {
                Some(want) => {
                    assert_eq!(got.unwrap_or_else(|t| panic!("%{name}({x:#x}, {y:#x}) trapped: {t}")), [want], "%{name}({x:#x}, {y:#x})")
                }
                None => expect_trap(got, &format!("%{name}({x:#x}, {y:#x})")),
            }
        }
    }
    for op in unary {
        for _ in 0..300 {
            let x = rng.operand();
            let want = reference(op, x, 0).unwrap();
            assert_eq!(call(&mut gpu, &p, op, &[x], 1).unwrap(), [want], "%{op}({x:#x})");
        }
    }
}
