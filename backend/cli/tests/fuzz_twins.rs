//! Property-test twins of the cargo-fuzz targets in `fuzz/`: the same
//! property functions (`ursa_cli::fuzz_props`), on random bytes and on
//! mutations of the seed corpus (the shipped examples), so CI covers the
//! targets on stable Rust without libFuzzer.

use proptest::prelude::*;
use ursa_cli::fuzz_props;
use ursa_cli::fuzz_props::seeds;

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

fn pick(target: &str, i: usize) -> &'static [u8] {
    let v = seeds(target);
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
        fuzz_props::decode_words(&mutate(pick("decode", i), &e));
    }

    #[test]
    fn asm_random(s in "[ -~\n]{0,400}") {
        fuzz_props::asm_text(s.as_bytes());
    }

    #[test]
    fn asm_mutated(i in any::<usize>(), e in edits()) {
        fuzz_props::asm_text(&mutate(pick("asm", i), &e));
    }

    #[test]
    fn elf_random(data in prop::collection::vec(any::<u8>(), 0..2048)) {
        fuzz_props::elf_object(&data);
    }

    #[test]
    fn elf_mutated(i in any::<usize>(), e in edits()) {
        fuzz_props::elf_object(&mutate(pick("elf", i), &e));
    }

    #[test]
    fn clif_random(s in "[ -~\n]{0,400}") {
        fuzz_props::clif_text(s.as_bytes());
    }

    #[test]
    fn clif_mutated(i in any::<usize>(), e in edits()) {
        fuzz_props::clif_text(&mutate(pick("clif", i), &e));
    }

    #[test]
    fn launch_mutated(i in any::<usize>(), e in edits()) {
        fuzz_props::launch_args(&mutate(pick("launch", i), &e));
    }

    #[test]
    fn sim_random(data in prop::collection::vec(any::<u8>(), 0..2048)) {
        fuzz_props::sim_stream(&data);
    }

    #[test]
    fn sim_mutated(i in any::<usize>(), b in any::<u8>(), e in edits()) {
        let mut d = mutate(pick("sim", i), &e);
        if let Some(f) = d.first_mut() {
            *f = b;
        }
        fuzz_props::sim_stream(&d);
    }
}

/// Every seed passes its own target (and every target has seeds).
#[test]
fn seeds_pass() {
    for t in fuzz_props::TARGETS {
        assert!(!seeds(t).is_empty(), "{}", t);
        for s in seeds(t) {
            fuzz_props::run_target(t, s);
        }
    }
}

/// Writes the seed corpus to `fuzz/seeds/<target>/` (run by hand when the
/// examples change: `cargo test --release -p ursa-cli --test fuzz_twins --
/// --ignored write_seed_corpus`).
#[test]
#[ignore]
fn write_seed_corpus() {
    let root = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/seeds");
    for t in fuzz_props::TARGETS {
        let dir = root.join(t);
        std::fs::create_dir_all(&dir).expect("create the seed directory");
        for (i, s) in seeds(t).iter().enumerate() {
            std::fs::write(dir.join(format!("seed-{}", i)), s).expect("write a seed");
        }
    }
}
