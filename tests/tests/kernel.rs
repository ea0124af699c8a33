//! A CLIF function compiled as a kernel and launched on the simulator with
//! several threads, in strict hazard mode.

use ursa_backend::{compile, Options};
use ursa_emit::elf;
use ursa_sim::{Arg, Gpu, LaunchConfig, Program};

#[test]
fn compiled_kernel_runs() {
    let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../examples/store_kernel.clif")).unwrap();
    let funcs = cranelift_reader::parse_functions(&text).unwrap();
    let c = compile(&funcs[0], &Options { kernel: true, check_regalloc: true, ..Default::default() }).expect("compiles");
    assert!(c.function.kernel);
    let bytes = elf::write(&elf::Object { functions: vec![c.function], ..Default::default() });
    let prog = Program::load(&bytes).unwrap();
    let mut gpu = Gpu::new();
    let out = gpu.alloc(8, 8);
    let cfg = LaunchConfig { grid: [2, 1, 1], block: [3, 1, 1], strict: true, ..Default::default() };
    gpu.launch(&prog, "store2", &cfg, &[Arg::Ptr(out), Arg::I32(-7), Arg::I32(5)]).expect("runs");
    let b = gpu.read(out, 8).unwrap();
    assert_eq!(i32::from_le_bytes(b[0..4].try_into().unwrap()), -2);
    assert_eq!(i32::from_le_bytes(b[4..8].try_into().unwrap()), -12);
}

#[test]
fn kernel_returning_values_is_rejected() {
    let funcs = cranelift_reader::parse_functions("function %k(i32) -> i32 {\nblock0(v0: i32):\n    return v0\n}\n").unwrap();
    let e = compile(&funcs[0], &Options { kernel: true, check_regalloc: true, ..Default::default() }).unwrap_err();
    assert!(e.to_string().contains("kernel cannot return values"), "{}", e);
}

/// Compiles a CLIF file (path from the repository root) as kernels.
fn kernel_file(rel: &str) -> Program {
    let path = format!("{}/../{}", env!("CARGO_MANIFEST_DIR"), rel);
    let text = std::fs::read_to_string(path).unwrap();
    let funcs = cranelift_reader::parse_functions(&text).unwrap();
    let obj = elf::Object {
        functions: funcs
            .iter()
            .map(|f| compile(f, &Options { kernel: true, check_regalloc: true, ..Default::default() }).expect("compiles").function)
            .collect(),
        ..Default::default()
    };
    let mut obj = obj;
    ursa_backend::link_runtime(&mut obj).unwrap();
    Program::load(&elf::write(&obj)).unwrap()
}

fn read_i32s(gpu: &mut Gpu, at: u64, n: usize) -> Vec<i32> {
    gpu.read(at, 4 * n as u64).unwrap().chunks(4).map(|c| i32::from_le_bytes(c.try_into().unwrap())).collect()
}

fn alloc_i32s(gpu: &mut Gpu, v: &[i32]) -> u64 {
    let p = gpu.alloc(4 * v.len() as u64, 8);
    gpu.write(p, &v.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>()).unwrap();
    p
}

/// Every thread of a multi-CTA launch finds its own element through the
/// thread-index intrinsics; threads past `n` do nothing.
#[test]
fn vadd_kernel_uses_thread_indices() {
    let prog = kernel_file("examples/kernels/vadd_i32.clif");
    let mut gpu = Gpu::new();
    let n = 300usize;
    let a: Vec<i32> = (0..n as i32).map(|i| i * 3 - 100).collect();
    let b: Vec<i32> = (0..n as i32).map(|i| i32::MAX - i).collect();
    let (pa, pb) = (alloc_i32s(&mut gpu, &a), alloc_i32s(&mut gpu, &b));
    // One element more than n: it must stay untouched.
    let pc = alloc_i32s(&mut gpu, &vec![7; n + 1]);
    let cfg = LaunchConfig { grid: [3, 1, 1], block: [128, 1, 1], strict: true, ..Default::default() };
    gpu.launch(&prog, "vadd_i32", &cfg, &[Arg::Ptr(pa), Arg::Ptr(pb), Arg::Ptr(pc), Arg::I32(n as i32)]).expect("runs");
    let c = read_i32s(&mut gpu, pc, n + 1);
    for i in 0..n {
        assert_eq!(c[i], a[i].wrapping_add(b[i]), "element {}", i);
    }
    assert_eq!(c[n], 7, "thread n wrote past the end");
}

#[test]
fn intrinsic_misuse_is_an_error_naming_the_call() {
    let src = "function %k(i32) -> i32 {\n    fn0 = %ursa_tid_x(i32) -> i32\nblock0(v0: i32):\n    v1 = call fn0(v0)\n    return v1\n}\n";
    let e = compile(&cranelift_reader::parse_functions(src).unwrap()[0], &Options::default()).unwrap_err();
    assert!(e.to_string().contains("intrinsic %ursa_tid_x must be declared `() -> i32`, not `(i32) -> i32`"), "{}", e);
    assert!(e.to_string().contains("call fn0(v0)"), "{}", e);
    let src = "function %k() -> i32 {\n    fn0 = %ursa_tid_w() -> i32\nblock0:\n    v1 = call fn0()\n    return v1\n}\n";
    let e = compile(&cranelift_reader::parse_functions(src).unwrap()[0], &Options::default()).unwrap_err();
    assert!(e.to_string().contains("unknown intrinsic %ursa_tid_w"), "{}", e);
}

/// Kernel parameters in every operand position (constant-bank and uniform
/// forms chosen by opt_fold_cmem / opt_uniform), against the host, one thread
/// and several parameter values including the extremes.
#[test]
fn parameters_in_every_operand_position() {
    let prog = kernel_file("tests/kernels/param_ops.clif");
    let cases = [(3i32, 5i32), (-7, 1 << 30), (i32::MIN, -1), (i32::MAX, 31), (0, 0), (33, -32)];
    for &(p, q) in &cases {
        let mut gpu = Gpu::new();
        let out = alloc_i32s(&mut gpu, &[0; 11]);
        let cfg = LaunchConfig { grid: [1, 1, 1], block: [1, 1, 1], strict: true, ..Default::default() };
        gpu.launch(&prog, "param_ops", &cfg, &[Arg::Ptr(out), Arg::I32(p), Arg::I32(q)]).expect("runs");
        let got = read_i32s(&mut gpu, out, 11);
        let x = 0i32; // tid.x of the only thread
        let want = [
            x.wrapping_sub(p),
            p.wrapping_sub(x),
            x.wrapping_mul(p),
            p.wrapping_mul(x).wrapping_add(q),
            x.wrapping_add(p.wrapping_mul(q).wrapping_sub(q)),
            if x < p { p } else { q },
            (x & p) | q,
            p.wrapping_shl(x as u32 & 31),
            ((q as u32).wrapping_shr(p as u32 & 31) as i32) ^ x,
            p.wrapping_neg().wrapping_add(x),
            (p.min(q) as u32).max(x as u32) as i32,
        ];
        assert_eq!(got, want, "p = {}, q = {}", p, q);
    }
}

/// Shuffles, votes, ballot and a barrier over one full warp, against the
/// PTX-style semantics (isa-extensions: SHFL, VOTE).
#[test]
fn warp_operations() {
    let prog = kernel_file("tests/kernels/warp_ops.clif");
    let mut gpu = Gpu::new();
    let out = alloc_i32s(&mut gpu, &[0; 32 * 8]);
    let cfg = LaunchConfig { grid: [1, 1, 1], block: [32, 1, 1], strict: true, ..Default::default() };
    gpu.launch(&prog, "warp_ops", &cfg, &[Arg::Ptr(out)]).expect("runs");
    let got = read_i32s(&mut gpu, out, 32 * 8);
    for t in 0..32i32 {
        let v = |l: i32| 100 * l;
        let row = &got[8 * t as usize..8 * t as usize + 7];
        let want = [
            v((t + 3) & 31),
            if t >= 1 { v(t - 1) } else { v(t) },
            if t + 3 <= 31 { v(t + 3) } else { v(t) },
            v(t ^ 5),
            1,                     // any(t > 7)
            1,                     // all(t < 40)
            0xAAAA_AAAAu32 as i32, // ballot(t & 1)
        ];
        assert_eq!(row, want, "thread {}", t);
    }
}

#[test]
fn narrow_atomics_from_parallel_ctas() {
    // 4 CTAs of 64 threads: the 8 byte counters share two words, the 4
    // 16-bit counters two more, so the CAS loops contend within a warp and
    // across CTAs.
    let prog = kernel_file("tests/kernels/narrow_atomics.clif");
    let mut gpu = Gpu::new();
    let c = gpu.alloc(24, 8);
    gpu.write(c, &[0u8; 24]).unwrap();
    let cfg = LaunchConfig { grid: [4, 1, 1], block: [64, 1, 1], strict: true, ..Default::default() };
    gpu.launch(&prog, "count8", &cfg, &[Arg::Ptr(c)]).expect("runs");
    let b = gpu.read(c, 24).unwrap();
    assert_eq!(&b[..8], &[32u8; 8], "each byte counter counted 256 / 8 threads");
    for k in 0..4 {
        assert_eq!(u16::from_le_bytes([b[8 + 2 * k], b[9 + 2 * k]]), 64 * 3, "16-bit counter {}", k);
    }
    assert_eq!(&b[16..], &[0u8; 8], "bytes past the counters untouched");
}

/// Loads and stores without `aligned` at every byte offset of global memory,
/// the lanes of a warp on different paths (`tests/kernels/unaligned.clif`).
#[test]
fn unaligned_global_accesses() {
    let prog = kernel_file("tests/kernels/unaligned.clif");
    let mut gpu = Gpu::new();
    let threads = 64usize;
    let size = 64 * threads + 64;
    let src: Vec<u8> = (0..size).map(|i| (i as u32).wrapping_mul(0x9e37_79b9).rotate_right(13) as u8).collect();
    let ps = gpu.alloc(size as u64, 256);
    gpu.write(ps, &src).unwrap();
    let pd = gpu.alloc(size as u64, 256);
    let cfg = LaunchConfig { grid: [1, 1, 1], block: [threads as u32, 1, 1], strict: true, ..Default::default() };
    gpu.launch(&prog, "unaligned", &cfg, &[Arg::Ptr(ps), Arg::Ptr(pd)]).expect("runs");
    let dst = gpu.read(pd, size as u64).unwrap();
    let mut want = vec![0u8; size];
    let le = |b: &[u8]| b.iter().rev().fold(0u64, |a, &x| a << 8 | x as u64);
    for t in 0..threads {
        let base = 64 * t + (t & 7);
        let x16 = le(&src[base..base + 2]) as u16 as i16;
        let x32 = le(&src[base + 8..base + 12]) as u32 as i32;
        let x64 = le(&src[base + 16..base + 24]) as i64;
        let s16 = le(&src[base + 32..base + 34]) as u16 as i16 as i64;
        let u32_ = le(&src[base + 40..base + 44]);
        want[base..base + 2].copy_from_slice(&x16.to_le_bytes());
        want[base + 8..base + 12].copy_from_slice(&x32.to_le_bytes());
        want[base + 16..base + 24].copy_from_slice(&x64.to_le_bytes());
        let sum = (x16 as i64).wrapping_add(x32 as i64).wrapping_add(x64).wrapping_add(s16).wrapping_add(u32_ as i64);
        want[base + 24..base + 32].copy_from_slice(&sum.to_le_bytes());
        want[base + 40..base + 44].copy_from_slice(&(sum as u32).to_le_bytes());
    }
    assert_eq!(dst, want);
}

/// 16-byte elements copied over several CTAs in strict mode
/// (`tests/kernels/copy16.clif`): whole (one `.128` load and store), with
/// the halves swapped, and word by word plus one; the elements past `n` and
/// the bytes around the copied ones untouched.
#[test]
fn copy_16_byte_elements() {
    let prog = kernel_file("tests/kernels/copy16.clif");
    let (ctas, threads, n) = (5u32, 48u32, 200usize);
    let total = (ctas * threads) as usize;
    let src: Vec<u8> = (0..16 * total).map(|i| (i as u32).wrapping_mul(0x9e37_79b9).rotate_right(11) as u8).collect();
    for kernel in ["copy_i128", "swap_halves", "add_words"] {
        let mut gpu = Gpu::new();
        let ps = gpu.alloc(src.len() as u64, 256);
        gpu.write(ps, &src).unwrap();
        let pd = gpu.alloc(src.len() as u64, 256);
        let cfg = LaunchConfig { grid: [ctas, 1, 1], block: [threads, 1, 1], strict: true, ..Default::default() };
        gpu.launch(&prog, kernel, &cfg, &[Arg::Ptr(ps), Arg::Ptr(pd), Arg::I32(n as i32)]).expect("runs");
        let dst = gpu.read(pd, src.len() as u64).unwrap();
        let mut want = vec![0u8; src.len()];
        for (i, e) in src.chunks(16).take(n).enumerate() {
            let w = &mut want[16 * i..16 * i + 16];
            match kernel {
                "copy_i128" => w.copy_from_slice(e),
                "swap_halves" => {
                    w[..8].copy_from_slice(&e[8..]);
                    w[8..].copy_from_slice(&e[..8]);
                }
                _ => {
                    for k in 0..4 {
                        let x = u32::from_le_bytes(e[4 * k..4 * k + 4].try_into().unwrap()).wrapping_add(1);
                        w[4 * k..4 * k + 4].copy_from_slice(&x.to_le_bytes());
                    }
                }
            }
        }
        assert_eq!(dst, want, "{}", kernel);
    }
}

#[test]
fn kernel_tail_call_is_rejected() {
    let src = "function %f(i64) tail {\nblock0(v0: i64):\n    return\n}\n\
               function %k(i64) tail {\n    fn0 = %f(i64) tail\nblock0(v0: i64):\n    return_call fn0(v0)\n}\n";
    let funcs = cranelift_reader::parse_functions(src).unwrap();
    let e = compile(&funcs[1], &Options { kernel: true, check_regalloc: true, ..Default::default() }).unwrap_err();
    assert!(e.to_string().contains("a kernel cannot make a tail call"), "{}", e);
}

/// The kernels of `tests/precise/uniform_loops.clif` (loop counters in URs,
/// uniform branches, also inside a divergent `if`, and the loops that stay
/// per-lane) over two warps in strict mode, against the CLIF semantics
/// worked out on the host.
#[test]
fn uniform_loop_counters() {
    let path = format!("{}/precise/uniform_loops.clif", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(path).unwrap();
    let funcs = cranelift_reader::parse_functions(&text).unwrap();
    let kernels = funcs.iter().filter(|f| f.signature.returns.is_empty());
    let obj = elf::Object {
        functions: kernels
            .map(|f| compile(f, &Options { kernel: true, check_regalloc: true, ..Default::default() }).expect("compiles").function)
            .collect(),
        ..Default::default()
    };
    let mut obj = obj;
    ursa_backend::link_runtime(&mut obj).unwrap();
    let prog = Program::load(&elf::write(&obj)).unwrap();
    let threads = 64usize;
    let cfg = LaunchConfig { grid: [1, 1, 1], block: [threads as u32, 1, 1], strict: true, ..Default::default() };
    for n in [0i32, 1, 2, 5, 17, 40, 70] {
        let mut gpu = Gpu::new();
        // Each loop is a do-while: the body runs for k = 0, then while k + 1 < n.
        let trips = n.max(1);
        let p = 0x1234_5677i32;
        let out = alloc_i32s(&mut gpu, &vec![0; threads]);
        gpu.launch(&prog, "uniform_counter", &cfg, &[Arg::Ptr(out), Arg::I32(n), Arg::I32(p)]).expect("runs");
        let x = (0..trips).fold(0i32, |acc, k| acc ^ k.wrapping_mul(p));
        assert_eq!(read_i32s(&mut gpu, out, threads), (0..threads as i32).map(|t| t ^ x).collect::<Vec<_>>(), "uniform_counter n={}", n);

        let out = alloc_i32s(&mut gpu, &vec![0; threads]);
        gpu.launch(&prog, "counter_in_divergent_if", &cfg, &[Arg::Ptr(out), Arg::I32(n)]).expect("runs");
        let sum: i32 = (0..trips).sum();
        let want: Vec<i32> = (0..threads as i32).map(|t| if t < 16 { t + sum } else { t }).collect();
        assert_eq!(read_i32s(&mut gpu, out, threads), want, "counter_in_divergent_if n={}", n);

        let out = alloc_i32s(&mut gpu, &vec![0; threads]);
        gpu.launch(&prog, "divergent_break", &cfg, &[Arg::Ptr(out), Arg::I32(n)]).expect("runs");
        let want: Vec<i32> = (0..threads as i32)
            .map(|t| {
                let mut k = 0i32;
                loop {
                    if k == t {
                        break k;
                    }
                    k += 1;
                    if (k as u32) >= (n as u32) {
                        break k;
                    }
                }
            })
            .collect();
        assert_eq!(read_i32s(&mut gpu, out, threads), want, "divergent_break n={}", n);
    }
}

/// Compiles a CLIF file (path from the repository root) with its shared
/// memory directives, every function a kernel; also its disassembly.
fn kernel_file_with_shared(rel: &str) -> (Program, String) {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(rel);
    let kernels = ursa_tests::kernels::compile_file(&path).unwrap();
    let functions: Vec<elf::Function> = kernels.into_iter().map(|k| k.result.unwrap_or_else(|e| panic!("%{}: {}", k.name, e))).collect();
    let text = functions.iter().map(|f| ursa_emit::asm::disassemble_function(f).unwrap()).collect();
    let mut obj = elf::Object { functions, ..Default::default() };
    ursa_backend::link_runtime(&mut obj).unwrap();
    (Program::load(&elf::write(&obj)).unwrap(), text)
}

/// Shuffles of i64, f32 and f64 values and votes and ballots of i16, i32
/// and i64 arguments, against the PTX-style semantics computed on the host
/// (`tests/kernels/typed_warp_ops.clif`).
#[test]
fn typed_warp_operations() {
    let prog = kernel_file("tests/kernels/typed_warp_ops.clif");
    let mut gpu = Gpu::new();
    let out = gpu.alloc(64 * 32, 8);
    gpu.write(out, &[0xeeu8; 64 * 32]).unwrap();
    let cfg = LaunchConfig { grid: [1, 1, 1], block: [32, 1, 1], strict: true, ..Default::default() };
    gpu.launch(&prog, "typed_warp_ops", &cfg, &[Arg::Ptr(out)]).expect("runs");
    let b = gpu.read(out, 64 * 32).unwrap();
    let u32_at = |t: usize, o: usize| u32::from_le_bytes(b[64 * t + o..64 * t + o + 4].try_into().unwrap());
    let u64_at = |t: usize, o: usize| u64::from_le_bytes(b[64 * t + o..64 * t + o + 8].try_into().unwrap());
    let ballot3: u32 = (0..32).filter(|t| t % 3 == 0).fold(0, |m, t| m | 1 << t);
    for t in 0..32usize {
        let v64 = |l: usize| (l as u64) << 40 | (3 * l as u64 + 1);
        let down = if t + 1 <= 31 { t + 1 } else { t };
        assert_eq!(u64_at(t, 0), v64(down), "shfl_down_i64, thread {}", t);
        let f64_of = |l: usize| l as f64 * 0.25 - 3.0;
        assert_eq!(f64::from_bits(u64_at(t, 8)), f64_of((t + 5) & 31), "shfl_idx_f64, thread {}", t);
        assert_eq!(f32::from_bits(u32_at(t, 16)), (t ^ 3) as f32 * 1.5, "shfl_bfly_f32, thread {}", t);
        let up = if t >= 2 { t - 2 } else { t };
        assert_eq!(u32_at(t, 20), 7 * up as u32, "shfl_up_i32, thread {}", t);
        assert_eq!(u32_at(t, 24), 1, "vote_any_i64 of a high-word-only value, thread {}", t);
        assert_eq!(u32_at(t, 28), 1, "vote_all_i16, thread {}", t);
        assert_eq!(u32_at(t, 32), 0, "vote_all_i32 (thread 0 votes 0), thread {}", t);
        assert_eq!(u32_at(t, 36), ballot3, "ballot_i32 of bit 8, thread {}", t);
        assert_eq!(u32_at(t, 40), 0xffff_fffe, "ballot_i64 of t << 35, thread {}", t);
        assert_eq!(u32_at(t, 44), 0, "vote_any_i16 of t << 16 (low half zero), thread {}", t);
    }
}

/// Float, relaxed, shared-memory and result-less atomics over 3 CTAs of 64
/// threads (`tests/kernels/atomics_typed.clif`), against the host, with the
/// instructions each must become.
#[test]
fn typed_and_relaxed_atomics() {
    let (prog, text) = kernel_file_with_shared("tests/kernels/atomics_typed.clif");
    for want in [
        "RED.ADD.F32",
        "RED.ADD.F64",
        "RED.ADD.U32",
        "RED.MAX.U64",
        "RED.MIN [",
        "ATOM.ADD.F32 R",
        "ATOM.CAS.U64",
        "ATOMS.ADD.U32 RZ",
        "ATOMS.XOR.U32 RZ",
        "ATOMS.ADD.F32 RZ",
        "RED.XOR.U32",
    ] {
        assert!(text.contains(want), "no {} in\n{}", want, text);
    }
    let (g, bsz) = (3usize, 64usize);
    let n = g * bsz;
    let mut gpu = Gpu::new();
    let size = 2048 + 8 * n;
    let p = gpu.alloc(size as u64, 8);
    gpu.write(p, &vec![0u8; size]).unwrap();
    let cfg = LaunchConfig { grid: [g as u32, 1, 1], block: [bsz as u32, 1, 1], strict: true, ..Default::default() };
    gpu.launch(&prog, "atomics_typed", &cfg, &[Arg::Ptr(p)]).expect("runs");
    let m = gpu.read(p, size as u64).unwrap();
    let u32_at = |o: usize| u32::from_le_bytes(m[o..o + 4].try_into().unwrap());
    let u64_at = |o: usize| u64::from_le_bytes(m[o..o + 8].try_into().unwrap());
    assert_eq!(f32::from_bits(u32_at(0)), 0.5 * n as f32, "f32 sum");
    assert_eq!(f64::from_bits(u64_at(8)), 0.25 * n as f64, "f64 sum");
    assert_eq!(u32_at(16), n as u32, "relaxed count");
    assert_eq!(u64_at(24), ((n - 1) as u64) << 33, "u64 max");
    assert_eq!(f32::from_bits(u32_at(40)), n as f32, "tickets handed out");
    let mut tickets: Vec<u32> = (0..n).map(|k| f32::from_bits(u32_at(256 + 4 * k)) as u32).collect();
    tickets.sort();
    assert_eq!(tickets, (0..n as u32).collect::<Vec<_>>(), "every ticket once");
    let cas = u64_at(48);
    assert!((100..100 + n as u64).contains(&cas), "the CAS word holds a winner's value: {}", cas);
    let seen: Vec<u64> = (0..n).map(|k| u64_at(2048 + 8 * k)).collect();
    assert_eq!(seen.iter().filter(|&&s| s == 0).count(), 1, "one CAS succeeded");
    assert!(seen.iter().all(|&s| s == 0 || s == cas), "the others saw the winner's value");
    assert_eq!(u32_at(56) as i32, -50, "s32 min");
    assert_eq!(u32_at(64), n as u32, "count through shared memory");
    assert_eq!(u32_at(68), (0..n as u32).fold(0, |x, k| x ^ k), "xor through shared memory");
    assert_eq!(f32::from_bits(u32_at(72)), 2.0 * n as f32, "f32 sum through shared memory");
}
