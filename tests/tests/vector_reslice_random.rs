//! Random chains of `bitcast`s and `shuffle`s between 128-bit vector types
//! (and `i128`, which also carries the arguments and the result) through
//! the compiler on the simulator, against a model of the bytes. `legalize_vectors` re-slices lanes at every `bitcast` and
//! packs slices of one integer back into it (`docs/vectors.md`): a wrong
//! slice, run or shift distance shows as a wrong byte here. Each chain reads
//! two vectors, reinterprets and permutes them a few times, and returns the
//! result as one vector type; it runs on several argument pairs, edge bytes
//! (0, 0x80, 0xff) among random ones.

use cranelift_codegen::data_value::DataValue;
use proptest::prelude::RngExt;
use proptest::test_runner::{RngAlgorithm, TestRng};
use ursa_cli::filetest::{compile_guarded, link_for_test, simulate};

/// Programs per run, and argument pairs per program.
const PROGRAMS: usize = 150;
const INPUTS: usize = 6;

const TYPES: &[(&str, usize)] = &[("i8x16", 1), ("i16x8", 2), ("i32x4", 4), ("i64x2", 8), ("f32x4", 4), ("f64x2", 8)];

/// One step of a chain, on the 16 bytes of each of the two live vectors.
enum Step {
    /// `bitcast` of both to type `TYPES[t]` (the bytes are unchanged).
    Cast(usize),
    /// `shuffle` of the two as `i8x16` by `mask` (indices into both laid end
    /// to end), into the first; the second keeps its bytes.
    Bytes([u8; 16]),
    /// Both through `i128` and back to the current type.
    Wide,
}

struct Chain {
    first: usize,
    steps: Vec<Step>,
    last: usize,
}

/// A mask that often moves runs of bytes together (as whole lanes, halves
/// or reversed pairs), which is what the packing recognizes, and sometimes
/// picks bytes at random.
fn mask(r: &mut TestRng) -> [u8; 16] {
    let mut m = [0u8; 16];
    match r.random_range(0..4) {
        0 => m.iter_mut().for_each(|b| *b = r.random_range(0..32)),
        k => {
            let run = [1usize, 2, 4, 8][k.min(3)];
            for chunk in 0..16 / run {
                let from = r.random_range(0..32 / run) * run;
                let reverse = r.random_range(0..4) == 0;
                for i in 0..run {
                    let j = if reverse { run - 1 - i } else { i };
                    m[chunk * run + i] = (from + j) as u8;
                }
            }
        }
    }
    m
}

fn chain(r: &mut TestRng) -> Chain {
    let first = r.random_range(0..TYPES.len());
    let n = r.random_range(1..6);
    let steps = (0..n)
        .map(|_| match r.random_range(0..5) {
            0 | 1 => Step::Cast(r.random_range(0..TYPES.len())),
            2 | 3 => Step::Bytes(mask(r)),
            _ => Step::Wide,
        })
        .collect();
    Chain { first, steps, last: r.random_range(0..TYPES.len()) }
}

/// CLIF text being written, and the next value number.
struct Body {
    text: String,
    next: usize,
}

impl Body {
    /// `v = bitcast.to little x`; returns `v`.
    fn cast(&mut self, x: usize, to: &str) -> usize {
        let v = self.next;
        self.next += 1;
        self.text.push_str(&format!("    v{} = bitcast.{} little v{}\n", v, to, x));
        v
    }
}

/// The CLIF of `c` as `%f(i128, i128) -> i128`: the arguments and the result
/// cross the call as `i128`s (the test calls the function directly, which
/// takes scalars), bitcast from and to the chain's first and last types.
fn text(c: &Chain) -> String {
    let mut t = TYPES[c.first].0;
    let mut body = Body { text: String::new(), next: 2 };
    let (mut a, mut b) = (body.cast(0, t), body.cast(1, t));
    for s in &c.steps {
        match s {
            Step::Cast(k) => {
                t = TYPES[*k].0;
                a = body.cast(a, t);
                b = body.cast(b, t);
            }
            Step::Bytes(m) => {
                let (x, y) = (body.cast(a, "i8x16"), body.cast(b, "i8x16"));
                let list: Vec<String> = m.iter().map(|i| i.to_string()).collect();
                body.text.push_str(&format!("    v{} = shuffle v{}, v{}, [{}]\n", body.next, x, y, list.join(" ")));
                body.next += 1;
                a = body.cast(body.next - 1, t);
            }
            Step::Wide => {
                let (x, y) = (body.cast(a, "i128"), body.cast(b, "i128"));
                a = body.cast(x, t);
                b = body.cast(y, t);
            }
        }
    }
    let out = body.cast(a, TYPES[c.last].0);
    let out = body.cast(out, "i128");
    format!("function %f(i128, i128) -> i128 {{\nblock0(v0: i128, v1: i128):\n{}    return v{}\n}}\n", body.text, out)
}

/// The model: the bytes of the result.
fn model(c: &Chain, x: [u8; 16], y: [u8; 16]) -> [u8; 16] {
    let (mut a, b) = (x, y);
    for s in &c.steps {
        if let Step::Bytes(m) = s {
            let both: Vec<u8> = a.iter().chain(&b).copied().collect();
            a = std::array::from_fn(|i| both[m[i] as usize]);
        }
    }
    a
}

fn bytes(r: &mut TestRng) -> [u8; 16] {
    std::array::from_fn(|_| match r.random_range(0..4) {
        0 => [0u8, 0x80, 0xff, 0x7f][r.random_range(0..4)],
        _ => r.random(),
    })
}

/// The bytes of an `i128` result as the simulator returns it.
fn result_bytes(v: &DataValue) -> [u8; 16] {
    match v {
        DataValue::I128(x) => x.to_le_bytes(),
        other => panic!("an i128 result expected, got {:?}", other),
    }
}

#[test]
fn random_bitcast_and_shuffle_chains() {
    let mut r = TestRng::from_seed(RngAlgorithm::ChaCha, &[41; 32]);
    for _ in 0..PROGRAMS {
        let c = chain(&mut r);
        let clif = text(&c);
        let f = cranelift_reader::parse_functions(&clif).unwrap_or_else(|e| panic!("{}\n{}", clif, e)).remove(0);
        let program = link_for_test(vec![compile_guarded(&f).unwrap_or_else(|e| panic!("{}\n{}", clif, e))]).unwrap();
        for _ in 0..INPUTS {
            let (x, y) = (bytes(&mut r), bytes(&mut r));
            let got = simulate(&program, &f, &[DataValue::I128(i128::from_le_bytes(x)), DataValue::I128(i128::from_le_bytes(y))])
                .unwrap_or_else(|e| panic!("{}\n{}", clif, e));
            let want = model(&c, x, y);
            assert_eq!(result_bytes(&got[0]), want, "{}\non {:02x?}, {:02x?}", clif, x, y);
        }
    }
}
