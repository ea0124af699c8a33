//! `fdiv` and `sqrt` of f32 and f64 (docs/float.md, "Division and square
//! root") compiled from CLIF as kernels and run on the simulator over many
//! operand pairs in one launch each, compared bit for bit with the host's
//! correctly rounded `/` and `sqrt` (NaN results: the canonical NaN).
//!
//! Operands: every pair of a list of edge values, then random bits and
//! edge-biased values (exponents near the limits, mantissas near 1 and 2,
//! subnormals, zeros, infinities, NaNs, quotients and roots close to a
//! rounding midpoint, exact subnormal midpoints).
//!
//! Size: `URSA_FDIV_SWEEP=N` operand pairs per operation (default 200 000
//! for f32, half that for f64); `URSA_FDIV_SEED` picks the random stream.
//! The large run recorded in docs/float.md:
//! `URSA_FDIV_SWEEP=20000000 cargo test --release -p ursa-tests --test fdiv_sweep -- --nocapture`.

mod common;
use common::elementwise_kernel;
use rand::rngs::SmallRng;
use rand::{RngExt, SeedableRng};
use ursa_backend::{compile, Options};
use ursa_emit::elf;
use ursa_sim::{Arg, Gpu, LaunchConfig, Program};

fn program() -> Program {
    let text = [
        elementwise_kernel("div_f32", "f32", "v17 = fdiv v15, v16"),
        elementwise_kernel("sqrt_f32", "f32", "v17 = sqrt v15"),
        elementwise_kernel("div_f64", "f64", "v17 = fdiv v15, v16"),
        elementwise_kernel("sqrt_f64", "f64", "v17 = sqrt v15"),
    ]
    .concat();
    let funcs = cranelift_reader::parse_functions(&text).unwrap();
    let opts = Options { kernel: true, check_regalloc: true, ..Default::default() };
    let obj =
        elf::Object { functions: funcs.iter().map(|f| compile(f, &opts).expect("compiles").function).collect(), ..Default::default() };
    let mut obj = obj;
    ursa_backend::link_runtime(&mut obj).unwrap();
    Program::load(&elf::write(&obj)).unwrap()
}

/// Runs kernel `name` over the operands (`w` bytes each); returns the results.
fn run(prog: &Program, name: &str, w: usize, a: &[u64], b: &[u64]) -> Vec<u64> {
    let mut gpu = Gpu::new();
    let n = a.len();
    let put = |gpu: &mut Gpu, v: &[u64]| {
        let p = gpu.alloc((w * v.len()) as u64, 8);
        gpu.write(p, &v.iter().flat_map(|x| x.to_le_bytes()[..w].to_vec()).collect::<Vec<u8>>()).unwrap();
        p
    };
    let (pa, pb, pc) = (put(&mut gpu, a), put(&mut gpu, b), put(&mut gpu, &vec![0; n]));
    let cfg =
        LaunchConfig { grid: [(n as u32).div_ceil(256), 1, 1], block: [256, 1, 1], strict: true, step_limit: None, ..Default::default() };
    gpu.launch(prog, name, &cfg, &[Arg::Ptr(pa), Arg::Ptr(pb), Arg::Ptr(pc), Arg::I32(n as i32)]).expect("runs");
    gpu.read(pc, (w * n) as u64)
        .unwrap()
        .chunks(w)
        .map(|c| {
            let mut x = [0u8; 8];
            x[..w].copy_from_slice(c);
            u64::from_le_bytes(x)
        })
        .collect()
}

/// A binary format: f32 (`E` = 8, `M` = 23) or f64 (11, 52), as bits in a u64.
#[derive(Clone, Copy)]
struct Fmt {
    e: u32,
    m: u32,
}

const F32: Fmt = Fmt { e: 8, m: 23 };
const F64: Fmt = Fmt { e: 11, m: 52 };

impl Fmt {
    fn emax(self) -> u64 {
        (1 << self.e) - 1
    }
    fn mmask(self) -> u64 {
        (1 << self.m) - 1
    }
    fn sign(self) -> u64 {
        1 << (self.e + self.m)
    }
    fn make(self, s: u64, e: u64, m: u64) -> u64 {
        s * self.sign() | e << self.m | (m & self.mmask())
    }
    fn to_f64(self, x: u64) -> f64 {
        if self.m == 23 {
            f32::from_bits(x as u32) as f64
        } else {
            f64::from_bits(x)
        }
    }
    fn from_f64(self, x: f64) -> u64 {
        if self.m == 23 {
            (x as f32).to_bits() as u64
        } else {
            x.to_bits()
        }
    }
    /// Values every pair of which is tested.
    fn edges(self) -> Vec<u64> {
        let (em, mm) = (self.emax(), self.mmask());
        let bias = em >> 1;
        let mut v = vec![
            0,
            1,
            2,
            3,
            mm,
            mm - 1,
            mm >> 1,
            (mm >> 1) + 1,
            1 << self.m,
            (1 << self.m) | 1,
            (1 << self.m) | mm,
            (2 << self.m) | 5,
            bias << self.m,
            bias << self.m | 1,
            bias << self.m | mm,
            (bias + 1) << self.m,
            (bias + 1) << self.m | mm,
            (bias - 1) << self.m | 0x5555 & mm,
            (em - 1) << self.m,
            (em - 1) << self.m | mm,
            (em - 2) << self.m | mm,
            (em - 1) << self.m | 1,
            em << self.m,
            em << self.m | 1,
            em << self.m | (mm >> 1) + 1,
            em << self.m | mm,
        ];
        let neg: Vec<u64> = v.iter().map(|x| x | self.sign()).collect();
        v.extend(neg);
        v
    }
    /// Random bits or an edge-biased value.
    fn random(self, r: &mut SmallRng) -> u64 {
        let (em, mm) = (self.emax(), self.mmask());
        let s = r.random_range(0..2u64);
        let m = r.random::<u64>() & mm;
        match r.random_range(0..12u32) {
            0..=2 => r.random::<u64>() & (self.sign() << 1).wrapping_sub(1),
            3 => self.make(s, r.random_range(0..8u64), m),
            4 => self.make(s, r.random_range(em - 8..em), m),
            5 => self.make(s, 0, m >> r.random_range(0..self.m)),
            6 => self.make(s, r.random_range(1..em), r.random_range(0..64u64)),
            7 => self.make(s, r.random_range(1..em), mm - r.random_range(0..64u64)),
            8 => self.make(s, r.random_range(0..2u64) * em, r.random_range(0..3u64) * (mm >> 1)),
            _ => self.make(s, r.random_range(em / 2 - 40..em / 2 + 40), m),
        }
    }
}

fn canonical(f: Fmt, x: f64) -> u64 {
    if x.is_nan() {
        if f.m == 23 {
            0x7fc0_0000
        } else {
            0x7ff8_0000_0000_0000
        }
    } else {
        f.from_f64(x)
    }
}

/// The operand pairs: edge × edge, then `n` random ones, a share of them
/// built so that the quotient or root lies close to a rounding midpoint.
fn operands(f: Fmt, n: usize, seed: u64, sqrt: bool) -> (Vec<u64>, Vec<u64>) {
    let mut r = SmallRng::seed_from_u64(seed);
    let e = f.edges();
    let (mut a, mut b) = (Vec::new(), Vec::new());
    for &x in &e {
        for &y in &e {
            a.push(x);
            b.push(y);
        }
    }
    for _ in 0..n {
        let y = f.random(&mut r);
        let x = match r.random_range(0..8u32) {
            // Near-midpoint quotient / root: q = a float plus half an ulp
            // (a binary64 value), a = q*b (or q*q) rounded to the format.
            // binary64: the same with integers (a midpoint of the 53-bit grid
            // has 54 significant bits, beyond binary64 arithmetic).
            0 | 1 if f.m == 52 => {
                let m = (1u128 << 53) | r.random::<u64>() as u128 & ((1 << 53) - 1) | 1;
                let bm = (1u128 << 52) | (r.random::<u64>() as u128 & ((1 << 52) - 1));
                let (prod, mut s) = if sqrt { (m * m, 55) } else { (m * bm, 54) };
                let mut am = (prod + (1 << (s - 1))) >> s;
                if am < 1 << 52 {
                    s -= 1;
                    am = (prod + (1 << (s - 1))) >> s;
                }
                let am = am.min((1 << 53) - 1) as u64;
                // Exponent fields: mid-range or near the subnormal boundary of the result;
                // for sqrt the exponent's parity makes sqrt(a) = M 2^k.
                let eb = r.random_range(900..1150u64);
                let mut ea = if r.random_range(0..4u32) == 0 {
                    r.random_range(1..60u64) + eb.saturating_sub(1023)
                } else {
                    r.random_range(900..1150u64)
                };
                if sqrt && (ea + s as u64) % 2 == 0 {
                    ea += 1;
                }
                let ea = ea.clamp(1, 2046);
                a.push(f.make(0, ea, am));
                b.push(if sqrt { y } else { f.make(r.random_range(0..2u64), eb, bm as u64) });
                continue;
            }
            0 | 1 => {
                let q = f.random(&mut r) & !f.sign();
                let qv = f.to_f64(q);
                let half = f.to_f64(q + 1) - qv;
                let mid = qv + half / 2.0;
                if sqrt {
                    f.from_f64(mid * mid)
                } else {
                    f.from_f64(mid * f.to_f64(y))
                }
            }
            // An exact subnormal midpoint quotient: odd multiple of half the
            // smallest subnormal times a power of two.
            2 if !sqrt => {
                let k = r.random_range(0..64u64) * 2 + 1;
                let j = r.random_range(1..f.emax() - 2);
                let yv = f.from_f64(2f64.powi(j as i32 - (f.emax() >> 1) as i32));
                b.push(yv);
                a.push(f.from_f64(k as f64 * f.to_f64(1) / 2.0 * f.to_f64(yv)));
                continue;
            }
            _ => f.random(&mut r),
        };
        a.push(x);
        b.push(y);
    }
    (a, b)
}

fn sweep(prog: &Program, name: &str, f: Fmt, n: usize, sqrt: bool) {
    let seed = std::env::var("URSA_FDIV_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or(1);
    let (a, b) = operands(f, n, seed, sqrt);
    let w = if f.m == 23 { 4 } else { 8 };
    let t = std::time::Instant::now();
    let got = run(prog, name, w, &a, &b);
    let mut bad = Vec::new();
    for i in 0..a.len() {
        let (x, y) = (f.to_f64(a[i]), f.to_f64(b[i]));
        let want = if f.m == 23 {
            let (x, y) = (x as f32, y as f32);
            canonical(f, if sqrt { x.sqrt() } else { x / y } as f64)
        } else {
            canonical(f, if sqrt { x.sqrt() } else { x / y })
        };
        if got[i] != want {
            bad.push(format!(
                "{}({:#x}{}) = {:#x}, expected {:#x}",
                name,
                a[i],
                if sqrt { String::new() } else { format!(", {:#x}", b[i]) },
                got[i],
                want
            ));
        }
    }
    eprintln!("{}: {} operand pairs, {} mismatches ({:.1?})", name, a.len(), bad.len(), t.elapsed());
    assert!(bad.is_empty(), "{} of {} wrong, first ones:\n{}", bad.len(), a.len(), bad[..bad.len().min(20)].join("\n"));
}

/// a mod m (m odd, < 2^64) to the power e.
fn pow_mod(mut a: u128, mut e: u32, m: u128) -> u128 {
    let mut r = 1u128;
    a %= m;
    while e > 0 {
        if e & 1 == 1 {
            r = r * a % m;
        }
        a = a * a % m;
        e >>= 1;
    }
    r
}

/// A square root of `r` (≡ 1 mod 8) modulo 2^k, by Hensel lifting.
fn sqrt_mod_pow2(r: u128, k: u32) -> u128 {
    let mut x = 1u128;
    for j in 3..k {
        // x² ≡ r (mod 2^j): lift to 2^(j+1).
        if (x * x).wrapping_sub(r) >> j & 1 == 1 {
            x += 1 << (j - 1);
        }
    }
    x & ((1 << k) - 1)
}

/// The hardest operands: quotients and roots within a few units of 2^-2p
/// (relative) of a rounding midpoint, where the error bounds of
/// docs/float.md do not decide by themselves. With p-bit significands A, B
/// and a (p+1)-bit odd midpoint M: division `A 2^(p+1) = M B + r` for a
/// small r (A ≡ r 2^-(p+1) mod B), square root `A 2^(p+1) = M² ± r`
/// (M a square root of ∓r modulo 2^(p+1)).
fn hard_operands(f: Fmt, n: usize, seed: u64, sqrt: bool) -> (Vec<u64>, Vec<u64>) {
    let p = f.m + 1;
    let mut r = SmallRng::seed_from_u64(seed);
    let (mut a, mut b) = (Vec::new(), Vec::new());
    let top = 1u128 << (p - 1);
    while a.len() < n {
        let small = r.random_range(1..64u128);
        let (am, bm, odd_exp) = if sqrt {
            // M² = A 2^(p+1) - rr with rr ≡ 7 (mod 8) or + rr with rr ≡ 1 (mod 8)
            let plus = r.random_range(0..2u32) == 0;
            let rr = small * 8 + if plus { 1 } else { 7 };
            let target = if plus { rr } else { (1u128 << (p + 1)) - rr };
            let mut m = sqrt_mod_pow2(target, p + 1);
            if r.random_range(0..2u32) == 0 {
                m = (1u128 << (p + 1)) - m;
            }
            // M in [2^p, 2^(p+1)): any root + k 2^(p+1) works modulo; choose the top bit.
            let m = m | (1u128 << p);
            if m & 1 == 0 {
                continue;
            }
            let sq = m * m;
            let am = if plus { (sq - rr) >> (p + 1) } else { (sq + rr) >> (p + 1) };
            if am < top || am >= top << 2 {
                continue;
            }
            // A in [2^(p-1), 2^(p+1)): two binades, the exponent parity follows.
            if am >= top << 1 {
                if am & 1 == 1 {
                    continue;
                }
                (am >> 1, 0u64, true)
            } else {
                (am, 0u64, false)
            }
        } else {
            let bm = top | (r.random::<u64>() as u128 & (top - 1)) | 1;
            let inv2 = (bm + 1) / 2;
            let rr = if r.random_range(0..2u32) == 0 { small } else { bm - small };
            let am = rr * pow_mod(inv2, p + 1, bm) % bm;
            // A < B (the quotient in [1/2, 1)), and the midpoint M odd.
            if am < top {
                continue;
            }
            let (m, rem) = ((am << (p + 1)) / bm, (am << (p + 1)) % bm);
            let mid = if rem < 64 { m } else { m + 1 };
            if mid & 1 == 0 {
                continue;
            }
            (am, (bm - top) as u64, false)
        };
        let bias = f.emax() >> 1;
        if sqrt {
            // a = A 2^e with e + (p+1) even so that sqrt(a) = M 2^k (A in [1,2) scaled).
            let mut e = bias - 40 + r.random_range(0..80u64);
            if (e + bias) % 2 == if odd_exp { 0 } else { 1 } {
                e += 1;
            }
            a.push(f.make(0, e, (am - top) as u64));
            b.push(0);
        } else {
            let ea = r.random_range(bias - 60..bias + 60);
            let eb = r.random_range(bias - 60..bias + 60);
            a.push(f.make(r.random_range(0..2u64), ea, (am - top) as u64));
            b.push(f.make(r.random_range(0..2u64), eb, bm));
        }
    }
    (a, b)
}

fn size(default: usize) -> usize {
    std::env::var("URSA_FDIV_SWEEP").ok().and_then(|s| s.parse().ok()).unwrap_or(default)
}

#[test]
fn fdiv_sqrt_are_correctly_rounded() {
    let prog = program();
    let n = size(200_000);
    sweep(&prog, "div_f32", F32, n, false);
    sweep(&prog, "sqrt_f32", F32, n, true);
    sweep(&prog, "div_f64", F64, n.div_ceil(2), false);
    sweep(&prog, "sqrt_f64", F64, n.div_ceil(2), true);
}

/// The operands closest to a rounding midpoint (see `hard_operands`): every
/// one must still round correctly.
#[test]
fn operands_next_to_a_midpoint_round_correctly() {
    let prog = program();
    let n = size(200_000) / 10;
    for (name, f, sqrt) in [("div_f32", F32, false), ("sqrt_f32", F32, true), ("div_f64", F64, false), ("sqrt_f64", F64, true)] {
        let (a, b) = hard_operands(f, n, 7, sqrt);
        let w = if f.m == 23 { 4 } else { 8 };
        let got = run(&prog, name, w, &a, &b);
        let mut bad = Vec::new();
        let mut near = 0;
        for i in 0..a.len() {
            let (x, y) = (f.to_f64(a[i]), f.to_f64(b[i]));
            let exact = if sqrt { x.sqrt() } else { x / y };
            let want = if f.m == 23 {
                let v = if sqrt { (x as f32).sqrt() } else { x as f32 / y as f32 };
                canonical(f, v as f64)
            } else {
                canonical(f, exact)
            };
            // For binary32 the binary64 value shows how close the midpoint is.
            if f.m == 23 {
                let q = f.to_f64(want);
                let next = f.to_f64(want + 1);
                if ((exact - q).abs() - (next - q).abs() / 2.0).abs() <= (next - q).abs() * 2f64.powi(-16) {
                    near += 1;
                }
            }
            if got[i] != want {
                bad.push(format!("{}({:#x}, {:#x}) = {:#x}, expected {:#x}", name, a[i], b[i], got[i], want));
            }
        }
        eprintln!("{}: {} operand pairs next to a midpoint, {} mismatches", name, a.len(), bad.len());
        if f.m == 23 {
            assert!(near * 2 > a.len(), "{}: only {} of {} near a midpoint: the generator is off", name, near, a.len());
        }
        assert!(bad.is_empty(), "{} wrong:\n{}", bad.len(), bad[..bad.len().min(20)].join("\n"));
    }
}
