//! Property-test twins of the cargo-fuzz targets in `fuzz/`: the same
//! property functions (`ursa_cli::fuzz_props`), on random bytes and on
//! mutations of the seed corpus (the shipped examples), so CI covers the
//! targets on stable Rust without libFuzzer.

use std::sync::OnceLock;

use proptest::prelude::*;
use ursa_cli::fuzz_props;
use ursa_emit::{asm, elf};

const VADD: &str = include_str!("../../../examples/vadd.s");
const SAXPY: &str = include_str!("../../../examples/saxpy_int.s");
const FIB: &str = include_str!("../../../examples/fib.clif");
const STORE_KERNEL: &str = include_str!("../../../examples/store_kernel.clif");

/// The assembly seeds, and the objects and code they assemble to (plus the
/// compiled CLIF examples).
struct Seeds {
    asm: Vec<Vec<u8>>,
    clif: Vec<Vec<u8>>,
    objects: Vec<Vec<u8>>,
    code: Vec<Vec<u8>>,
    launch: Vec<Vec<u8>>,
}

fn seeds() -> &'static Seeds {
    static S: OnceLock<Seeds> = OnceLock::new();
    S.get_or_init(|| {
        let mut objs = Vec::new();
        for (src, name) in [(VADD, "vadd.s"), (SAXPY, "saxpy_int.s")] {
            objs.push(asm::assemble(src, name).expect("example assembles"));
        }
        for src in [FIB, STORE_KERNEL] {
            let funcs = cranelift_reader::parse_test(src, cranelift_reader::ParseOptions::default()).expect("example parses");
            let fs: Vec<_> = funcs.functions.into_iter().map(|(f, _)| f).collect();
            objs.push(ursa_backend::compile_module(&fs, &ursa_backend::Options::default()).expect("example compiles"));
        }
        let mut asm_seeds: Vec<Vec<u8>> = vec![VADD.into(), SAXPY.into()];
        asm_seeds.extend(objs.iter().map(|o| asm::disassemble(o).expect("disassembles").into_bytes()));
        Seeds {
            asm: asm_seeds,
            clif: vec![FIB.into(), STORE_KERNEL.into()],
            objects: objs.iter().map(elf::write).collect(),
            code: objs.iter().flat_map(|o| o.functions.iter().map(|f| f.code.clone())).collect(),
            launch: vec![
                b"1\n32\nbuf:a=i32:1,2,3\nbuf:b=i32[3]\nbuf:out=i32[3]\nu32:3".to_vec(),
                b"2,1,1\n4,2\nbuf:a=u8:0,255\nbuf:b=i64:-1\nbuf:out=f32:1.5,2\ni32:-7".to_vec(),
            ],
        }
    })
}

/// A seed with byte edits: (position, action, byte) — action 0 overwrites,
/// 1 inserts, 2 deletes.
fn mutate(seed: &[u8], edits: &[(usize, u8, u8)]) -> Vec<u8> {
    let mut v = seed.to_vec();
    for &(pos, act, b) in edits {
        let p = if v.is_empty() { 0 } else { pos % (v.len() + 1) };
        match act % 3 {
            0 if p < v.len() => v[p] = b,
            1 | 0 => v.insert(p, b),
            _ if p < v.len() => {
                v.remove(p);
            }
            _ => {}
        }
    }
    v
}

fn edits() -> impl Strategy<Value = Vec<(usize, u8, u8)>> {
    prop::collection::vec((any::<usize>(), any::<u8>(), any::<u8>()), 0..6)
}

fn pick(v: &[Vec<u8>], i: usize) -> &[u8] {
    &v[i % v.len()]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 1000, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn decode_random(data in prop::collection::vec(any::<u8>(), 0..1024)) {
        fuzz_props::decode_words(&data);
    }

    #[test]
    fn decode_mutated(i in any::<usize>(), e in edits()) {
        fuzz_props::decode_words(&mutate(pick(&seeds().code, i), &e));
    }

    #[test]
    fn asm_random(s in "[ -~\n]{0,400}") {
        fuzz_props::asm_text(s.as_bytes());
    }

    #[test]
    fn asm_mutated(i in any::<usize>(), e in edits()) {
        fuzz_props::asm_text(&mutate(pick(&seeds().asm, i), &e));
    }

    #[test]
    fn elf_random(data in prop::collection::vec(any::<u8>(), 0..2048)) {
        fuzz_props::elf_object(&data);
    }

    #[test]
    fn elf_mutated(i in any::<usize>(), e in edits()) {
        fuzz_props::elf_object(&mutate(pick(&seeds().objects, i), &e));
    }

    #[test]
    fn clif_random(s in "[ -~\n]{0,400}") {
        fuzz_props::clif_text(s.as_bytes());
    }

    #[test]
    fn clif_mutated(i in any::<usize>(), e in edits()) {
        fuzz_props::clif_text(&mutate(pick(&seeds().clif, i), &e));
    }

    #[test]
    fn launch_mutated(i in any::<usize>(), e in edits()) {
        fuzz_props::launch_args(&mutate(pick(&seeds().launch, i), &e));
    }

    #[test]
    fn sim_random(data in prop::collection::vec(any::<u8>(), 0..2048)) {
        fuzz_props::sim_stream(&data);
    }

    #[test]
    fn sim_mutated(i in any::<usize>(), b in any::<u8>(), e in edits()) {
        let mut d = vec![b];
        d.extend(mutate(pick(&seeds().code, i), &e));
        fuzz_props::sim_stream(&d);
    }
}
