//! Prototype harness (temporary): the assembly-level sequences of docs/float.md
//! run over many operand pairs in one launch.
use rand::rngs::SmallRng;
use rand::{RngExt, SeedableRng};
use ursa_sim::{Arg, Gpu, LaunchConfig, Program};

fn edge32(r: &mut SmallRng) -> u32 {
    let s = (r.random::<u32>() & 1) << 31;
    let m = r.random::<u32>() & 0x7f_ffff;
    match r.random_range(0..10u32) {
        0 | 1 => r.random::<u32>(),
        2 => s | (r.random_range(0..6u32) << 23) | m,
        3 => s | (r.random_range(249..255u32) << 23) | m,
        4 => s | m >> r.random_range(0..23u32),
        5 => s | (r.random_range(1..255u32) << 23) | (r.random_range(0..64u32)),
        6 => s | (r.random_range(1..255u32) << 23) | (0x7f_ffff - r.random_range(0..64u32)),
        7 => [0u32, 0x7f80_0000, 0x7fc0_0000, 0x7f80_0001, 1, 0x7f7f_ffff, 0x0080_0000, 0x007f_ffff, 0x3f80_0000][r.random_range(0..9usize)] | s,
        _ => s | (r.random_range(100..156u32) << 23) | m,
    }
}

fn edge64(r: &mut SmallRng) -> u64 {
    let s = (r.random::<u64>() & 1) << 63;
    let m = r.random::<u64>() & 0xf_ffff_ffff_ffff;
    match r.random_range(0..10u32) {
        0 | 1 => r.random::<u64>(),
        2 => s | (r.random_range(0..60u64) << 52) | m,
        3 => s | (r.random_range(1990..2047u64) << 52) | m,
        4 => s | m >> r.random_range(0..52u32),
        5 => s | (r.random_range(1..2047u64) << 52) | (r.random_range(0..64u64)),
        6 => s | (r.random_range(1..2047u64) << 52) | (0xf_ffff_ffff_ffff - r.random_range(0..64u64)),
        7 => [0u64, 0x7ff0_0000_0000_0000, 0x7ff8_0000_0000_0000, 0x7ff0_0000_0000_0001, 1, 0x7fef_ffff_ffff_ffff, 0x0010_0000_0000_0000, 0x000f_ffff_ffff_ffff, 0x3ff0_0000_0000_0000][r.random_range(0..9usize)] | s,
        8 => s | (r.random_range(900..1150u64) << 52) | m,
        _ => s | (r.random_range(1..2047u64) << 52) | m,
    }
}

fn run(text: &str, name: &str, w: u64, a: &[u64], b: &[u64]) -> Vec<u64> {
    let obj = ursa_emit::asm::assemble(text, "t.s").unwrap();
    let prog = Program::load(&ursa_emit::elf::write(&obj)).unwrap();
    let mut gpu = Gpu::new();
    let n = a.len();
    let put = |gpu: &mut Gpu, v: &[u64]| {
        let p = gpu.alloc(w * v.len() as u64, 8);
        gpu.write(p, &v.iter().flat_map(|x| x.to_le_bytes()[..w as usize].to_vec()).collect::<Vec<u8>>()).unwrap();
        p
    };
    let (pa, pb, pc) = (put(&mut gpu, a), put(&mut gpu, b), put(&mut gpu, &vec![0; n]));
    let cfg = LaunchConfig { grid: [(n as u32 + 255) / 256, 1, 1], block: [256, 1, 1], strict: false, step_limit: None, ..Default::default() };
    gpu.launch(&prog, name, &cfg, &[Arg::Ptr(pa), Arg::Ptr(pb), Arg::Ptr(pc), Arg::I32(n as i32)]).unwrap();
    gpu.read(pc, w * n as u64).unwrap().chunks(w as usize).map(|c| { let mut x = [0u8; 8]; x[..c.len()].copy_from_slice(c); u64::from_le_bytes(x) }).collect()
}

fn n() -> usize { std::env::var("N").ok().and_then(|s| s.parse().ok()).unwrap_or(100_000) }

fn check(kind: &str, file: &str, w: u64, f: impl Fn(u64, u64) -> u64) {
    let n = n();
    let mut r = SmallRng::seed_from_u64(std::env::var("SEED").ok().and_then(|s| s.parse().ok()).unwrap_or(1));
    let g = |r: &mut SmallRng| if w == 4 { edge32(r) as u64 } else { edge64(r) };
    let a: Vec<u64> = (0..n).map(|_| g(&mut r)).collect();
    let b: Vec<u64> = (0..n).map(|_| g(&mut r)).collect();
    let t = std::time::Instant::now();
    let got = run(&std::fs::read_to_string(format!("{}/proto/{}.s", env!("CARGO_MANIFEST_DIR"), file)).unwrap(), file, w, &a, &b);
    eprintln!("{} {} in {:?}", kind, n, t.elapsed());
    let mut bad = 0;
    for i in 0..n {
        let want = f(a[i], b[i]);
        if got[i] != want {
            bad += 1;
            if bad < 20 { eprintln!("{} {:x} {:x}: got {:x} want {:x}", kind, a[i], b[i], got[i], want); }
        }
    }
    assert_eq!(bad, 0);
}

fn c32(x: f32) -> u64 { if x.is_nan() { 0x7fc0_0000 } else { x.to_bits() as u64 } }
fn c64(x: f64) -> u64 { if x.is_nan() { 0x7ff8_0000_0000_0000 } else { x.to_bits() } }

#[test]
fn proto_div32() { check("div32", "div32", 4, |a, b| c32(f32::from_bits(a as u32) / f32::from_bits(b as u32))); }
#[test]
fn proto_sqrt32() { check("sqrt32", "sqrt32", 4, |a, _| c32(f32::from_bits(a as u32).sqrt())); }
#[test]
fn proto_div64() { check("div64", "div64", 8, |a, b| c64(f64::from_bits(a) / f64::from_bits(b))); }
#[test]
fn proto_sqrt64() { check("sqrt64", "sqrt64", 8, |a, _| c64(f64::from_bits(a).sqrt())); }
