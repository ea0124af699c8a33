//! Helpers shared by the backend's integration tests.

use rand::rngs::SmallRng;
use rand::{RngExt, SeedableRng};
use ursa_backend::{compile, symbol_name, Options};
use ursa_emit::elf;
use ursa_sim::Program;

/// Compiles the functions of `src` into one loaded program (64 KiB of
/// local memory per thread).
pub fn build(src: &str) -> Program {
    let funcs = cranelift_reader::parse_functions(src).expect("test CLIF parses");
    let mut obj = elf::Object::default();
    for f in &funcs {
        let mut c = compile(f, &Options::default()).unwrap_or_else(|e| panic!("%{}: {}", symbol_name(f), e)).function;
        c.local_size = 64 * 1024;
        obj.functions.push(c);
    }
    let mut obj = obj;
    ursa_backend::link_runtime(&mut obj).unwrap();
    Program::load(&elf::write(&obj)).expect("object loads")
}

/// Deterministic test inputs: `rand`'s small generator from a fixed seed.
pub struct Rng(SmallRng);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(SmallRng::seed_from_u64(seed))
    }

    pub fn next(&mut self) -> u64 {
        self.0.random()
    }
}
