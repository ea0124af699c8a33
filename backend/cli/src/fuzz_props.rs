//! The properties the fuzz targets check, one function per entry point. The
//! cargo-fuzz (libFuzzer) targets in `fuzz/` call these on libFuzzer's input;
//! their property-test twins (`backend/cli/tests/fuzz_twins.rs`) call them on
//! proptest's input, so `cargo test` on stable Rust covers the same code.
//!
//! Each returns normally on any input that the tool handles, whether it
//! accepts or rejects it; a panic (or an abort, or a hang) is the failure.
//! Where a stronger property holds (an instruction that decodes re-encodes to
//! an instruction that decodes the same), it is asserted.

use std::sync::OnceLock;

use ursa_emit::{asm, elf, format_inst, Inst, NoLabels, INST_BYTES};
use ursa_sim::{Gpu, LaunchConfig, Program};

/// Instruction decoding: the input as 16-byte words. A word that decodes
/// formats as text without a panic, and its re-encoding decodes to the same
/// instruction.
pub fn decode_words(data: &[u8]) {
    for w in data.chunks_exact(INST_BYTES) {
        let bytes: &[u8; INST_BYTES] = w.try_into().expect("16-byte chunk");
        if let Ok(inst) = Inst::decode(bytes) {
            let _ = format_inst(&inst, Some(0x100), &NoLabels);
            if let Ok(again) = inst.encode() {
                let back = Inst::decode(&again).expect("an encoded instruction decodes");
                assert_eq!(back, inst, "decode(encode(decode(w))) differs for {:02x?}", w);
            }
        }
    }
}

/// Assembly text: assembled; what assembles is written as ELF, read back and
/// disassembled.
pub fn asm_text(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else { return };
    if let Ok(obj) = asm::assemble(text, "fuzz.s") {
        let bytes = elf::write(&obj);
        let back = elf::read(&bytes).expect("a written object reads back");
        assert_eq!(back, obj, "ELF write/read round trip");
        let _ = asm::disassemble(&obj);
    }
}

/// ELF objects: read, disassembled and loaded for the simulator.
pub fn elf_object(data: &[u8]) {
    if let Ok(obj) = elf::read(data) {
        let _ = asm::disassemble(&obj);
    }
    let _ = Program::load(data);
}

/// CLIF text through the compiler: text that passes the entity-number check
/// ([`crate::clif_limits`]) is read, and each function the reader accepts is
/// compiled (verifier, legalization, selection, allocation, encoding).
pub fn clif_text(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else { return };
    // As `ursa compile` and `ursa test` do.
    if crate::clif_limits::check(text).is_err() {
        return;
    }
    let Ok(funcs) = cranelift_reader::parse_functions(text) else { return };
    for f in &funcs {
        let _ = ursa_backend::compile(f, &ursa_backend::Options::default());
    }
}

/// An assembled kernel, written to a temporary file once per process, for
/// [`launch_args`].
fn launch_object() -> &'static std::path::Path {
    static PATH: OnceLock<std::path::PathBuf> = OnceLock::new();
    PATH.get_or_init(|| {
        let src = include_str!("../../../examples/vadd.s");
        let obj = asm::assemble(src, "vadd.s").expect("examples/vadd.s assembles");
        let p = std::env::temp_dir().join(format!("ursa-fuzz-launch-{}.o", std::process::id()));
        std::fs::write(&p, elf::write(&obj)).expect("write the launch object");
        p
    })
}

/// Launch-argument parsing (`ursa run`): the input's lines are the grid, the
/// block, then one `--arg` spec per line; the kernel is `vadd` of
/// `examples/vadd.s`, with a step limit.
pub fn launch_args(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let mut lines = text.lines();
    let grid = lines.next().unwrap_or("1");
    let block = lines.next().unwrap_or("1");
    let args: Vec<String> = lines.map(str::to_string).collect();
    let _ = crate::cli_run::run(crate::cli_run::RunArgs {
        input: launch_object(),
        kernel: "vadd",
        grid,
        block,
        args: &args,
        arg_origins: &[],
        outs: &[],
        stats: false,
        trace: false,
        strict: false,
        step_limit: Some(100_000),
        memory_limit: None,
        shared: 0,
        profile: false,
        timeline: None,
        timing: None,
        machine: None,
    });
}

/// Encodings of `NOP` and `EXIT`.
fn nop_exit() -> &'static ([u8; INST_BYTES], [u8; INST_BYTES]) {
    static W: OnceLock<([u8; INST_BYTES], [u8; INST_BYTES])> = OnceLock::new();
    W.get_or_init(|| {
        let obj = asm::assemble(".kernel k\n    NOP ;\n    EXIT ;\n", "k.s").expect("NOP; EXIT assembles");
        let c = &obj.functions[0].code;
        (c[..INST_BYTES].try_into().unwrap(), c[INST_BYTES..2 * INST_BYTES].try_into().unwrap())
    })
}

/// The simulator on random but decodable instruction streams: the first
/// byte picks the block size (1–64 threads), then each 16-byte word that does
/// not decode is replaced by `NOP`, and an `EXIT` ends the kernel. It runs
/// with a step limit and a small stack; any trap is a fine outcome.
pub fn sim_stream(data: &[u8]) {
    let Some((&first, rest)) = data.split_first() else { return };
    let (nop, exit) = nop_exit();
    let mut code = Vec::new();
    for w in rest.chunks_exact(INST_BYTES).take(256) {
        let bytes: &[u8; INST_BYTES] = w.try_into().expect("16-byte chunk");
        code.extend_from_slice(if Inst::decode(bytes).is_ok() { bytes } else { nop });
    }
    code.extend_from_slice(exit);
    let f = elf::Function { name: "k".into(), kernel: true, code, local_size: 256, shared_size: 256, ..Default::default() };
    let Ok(program) = Program::from_functions(&[f]) else { return };
    let cfg = LaunchConfig { block: [1 + (first as u32 % 64), 1, 1], step_limit: Some(20_000), ..Default::default() };
    let _ = Gpu::new().launch(&program, "k", &cfg, &[]);
}

/// A generated kernel: the first 8 bytes (little-endian, zero-padded) are
/// the seed of `ursa fuzz --kernels`; the kernel must compile with every
/// configuration and agree across them, the engines and the reference
/// ([`crate::kernelgen::check`]). A failure panics with the reduced kernel.
pub fn kernel_seed(data: &[u8]) {
    let mut b = [0u8; 8];
    let n = data.len().min(8);
    b[..n].copy_from_slice(&data[..n]);
    let seed = u64::from_le_bytes(b);
    let k = crate::kernelgen::case(seed, &crate::kernelgen::gen::Limits::default());
    if let crate::kernelgen::Outcome::Fail(f) = crate::kernelgen::check(&k) {
        let (k, f) = crate::kernelgen::reduce::reduce(k, f);
        panic!("{}", crate::kernelgen::clif_file(&k, &f, &format!("`ursa fuzz --kernels --seed {} --count 1`", seed)));
    }
}

/// The fuzz targets, by name (the names of the `fuzz/` targets).
pub const TARGETS: [&str; 7] = ["decode", "asm", "elf", "clif", "launch", "sim", "kernel"];

/// Runs target `name`'s property on `data`.
pub fn run_target(name: &str, data: &[u8]) {
    match name {
        "decode" => decode_words(data),
        "asm" => asm_text(data),
        "elf" => elf_object(data),
        "clif" => clif_text(data),
        "launch" => launch_args(data),
        "sim" => sim_stream(data),
        "kernel" => kernel_seed(data),
        _ => panic!("no fuzz target named `{}`", name),
    }
}

const VADD: &str = include_str!("../../../examples/vadd.s");
const SAXPY: &str = include_str!("../../../examples/saxpy_int.s");
const FIB: &str = include_str!("../../../examples/fib.clif");
const STORE_KERNEL: &str = include_str!("../../../examples/store_kernel.clif");

struct Seeds {
    asm: Vec<Vec<u8>>,
    clif: Vec<Vec<u8>>,
    elf: Vec<Vec<u8>>,
    decode: Vec<Vec<u8>>,
    sim: Vec<Vec<u8>>,
    launch: Vec<Vec<u8>>,
    kernel: Vec<Vec<u8>>,
}

/// The seed corpus of target `name`, made from the shipped examples
/// (`examples/`): their text, the objects they assemble or compile to, and
/// those objects' code; for `launch`, argument lists for `vadd`.
pub fn seeds(name: &str) -> &'static [Vec<u8>] {
    static S: OnceLock<Seeds> = OnceLock::new();
    let s = S.get_or_init(|| {
        let mut objs = Vec::new();
        for (src, file) in [(VADD, "vadd.s"), (SAXPY, "saxpy_int.s")] {
            objs.push(asm::assemble(src, file).expect("example assembles"));
        }
        for src in [FIB, STORE_KERNEL] {
            let tf = cranelift_reader::parse_test(src, cranelift_reader::ParseOptions::default()).expect("example parses");
            let fs: Vec<_> = tf.functions.into_iter().map(|(f, _)| f).collect();
            objs.push(ursa_backend::compile_module(&fs, &ursa_backend::Options::default()).expect("example compiles"));
        }
        let mut asm_seeds: Vec<Vec<u8>> = vec![VADD.into(), SAXPY.into()];
        asm_seeds.extend(objs.iter().map(|o| asm::disassemble(o).expect("example disassembles").into_bytes()));
        let code: Vec<Vec<u8>> = objs.iter().flat_map(|o| o.functions.iter().map(|f| f.code.clone())).collect();
        Seeds {
            asm: asm_seeds,
            clif: vec![FIB.into(), STORE_KERNEL.into()],
            elf: objs.iter().map(elf::write).collect(),
            sim: code.iter().map(|c| [&[31u8][..], c].concat()).collect(),
            decode: code,
            launch: vec![
                b"1\n32\nbuf:a=i32:1,2,3\nbuf:b=i32[3]\nbuf:out=i32[3]\nu32:3".to_vec(),
                b"2,1,1\n4,2\nbuf:a=u8:0,255\nbuf:b=i64:-1\nbuf:out=f32:1.5,2\ni32:-7".to_vec(),
            ],
            kernel: vec![0u64.to_le_bytes().to_vec(), 0x6b65_0000u64.to_le_bytes().to_vec()],
        }
    });
    match name {
        "decode" => &s.decode,
        "asm" => &s.asm,
        "elf" => &s.elf,
        "clif" => &s.clif,
        "launch" => &s.launch,
        "sim" => &s.sim,
        "kernel" => &s.kernel,
        _ => panic!("no fuzz target named `{}`", name),
    }
}
