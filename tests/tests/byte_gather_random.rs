//! Random byte gathers through the compiler on the simulator, against a
//! model of the bytes. Instruction selection makes a `bor` that only moves
//! whole bytes of at most four values `PRMT`s (`isel/isle/lower/bits.isle`,
//! `byte_plan`; `docs/vectors.md`): a wrong selector nibble, source order or
//! zero byte shows as a wrong byte here. Each program picks, for every byte
//! of an `i32` result, a byte of one of its four arguments or zero, moves each
//! into place in one of the three forms the lanes and shuffles are written in
//! (shift and mask; shift, reduce, extend and shift; two shifts), ors the
//! terms in a random order, and sometimes returns the low half as an `i16`.
//! The arguments are random words with edge bytes (0, 0x7f, 0x80, 0xff).

use cranelift_codegen::data_value::DataValue;
use proptest::prelude::RngExt;
use proptest::test_runner::{RngAlgorithm, TestRng};
use ursa_cli::filetest::{compile_guarded, link_for_test, simulate};

/// Programs per run, and argument vectors per program.
const PROGRAMS: usize = 200;
const INPUTS: usize = 6;

/// Per result byte: the argument and its byte it comes from, or zero.
type Plan = [Option<(usize, u32)>; 4];

/// CLIF text being written, and the next value number.
struct Body {
    text: String,
    next: usize,
}

impl Body {
    /// `v = INST` (the instruction's text after `=`); returns `v`.
    fn def(&mut self, inst: String) -> usize {
        let v = self.next;
        self.next += 1;
        self.text.push_str(&format!("    v{} = {}\n", v, inst));
        v
    }

    fn iconst(&mut self, k: u32) -> usize {
        self.def(format!("iconst.i32 {}", k as i32))
    }

    /// `op x, k` for a shift `op` by the constant `k`.
    fn shift(&mut self, op: &str, x: usize, k: u32) -> usize {
        let c = self.iconst(k);
        self.def(format!("{} v{}, v{}", op, x, c))
    }
}

fn plan(r: &mut TestRng) -> Plan {
    let sources = r.random_range(1..=4usize);
    let first = r.random_range(0..4usize);
    std::array::from_fn(|_| (r.random_range(0..7) != 0).then(|| ((first + r.random_range(0..sources)) % 4, r.random_range(0..4u32))))
}

/// The CLIF of `p` as `%f(i32, i32, i32, i32) -> i32` (or `-> i16`, the low
/// half, with `narrow`); `None` for a plan of fewer than two bytes (no
/// `bor` to select).
fn text(p: &Plan, narrow: bool, r: &mut TestRng) -> Option<String> {
    let mut body = Body { text: String::new(), next: 4 };
    let mut terms = Vec::new();
    for (at, byte) in p.iter().enumerate() {
        let Some((src, k)) = *byte else { continue };
        let at = at as u32;
        let term = match r.random_range(0..3) {
            // The byte moved by a shift, then masked.
            0 => {
                let moved = match (8 * at) as i32 - (8 * k) as i32 {
                    0 => src,
                    d if d > 0 => body.shift("ishl", src, d as u32),
                    d => body.shift("ushr", src, (-d) as u32),
                };
                let mask = body.iconst(0xff << (8 * at));
                body.def(format!("band v{}, v{}", moved, mask))
            }
            // The byte as an i8 lane, extended and shifted into place.
            1 => {
                let down = if k == 0 { src } else { body.shift("ushr", src, 8 * k) };
                let lane = body.def(format!("ireduce.i8 v{}", down));
                let wide = body.def(format!("uextend.i32 v{}", lane));
                if at == 0 {
                    wide
                } else {
                    body.shift("ishl", wide, 8 * at)
                }
            }
            // The byte isolated by two shifts, then moved up.
            _ => {
                let top = if k == 3 { src } else { body.shift("ishl", src, 24 - 8 * k) };
                let low = body.shift("ushr", top, 24);
                if at == 0 {
                    low
                } else {
                    body.shift("ishl", low, 8 * at)
                }
            }
        };
        terms.push(term);
    }
    if terms.len() < 2 {
        return None;
    }
    // A random order of the terms, or-ed left to right.
    for i in (1..terms.len()).rev() {
        terms.swap(i, r.random_range(0..=i));
    }
    let mut acc = terms[0];
    for &t in &terms[1..] {
        acc = body.def(format!("bor v{}, v{}", acc, t));
    }
    let (ret, ty) = if narrow { (body.def(format!("ireduce.i16 v{}", acc)), "i16") } else { (acc, "i32") };
    Some(format!(
        "function %f(i32, i32, i32, i32) -> {} {{\nblock0(v0: i32, v1: i32, v2: i32, v3: i32):\n{}    return v{}\n}}\n",
        ty, body.text, ret
    ))
}

/// The model: the result's bits.
fn model(p: &Plan, args: &[u32; 4]) -> u32 {
    p.iter().enumerate().fold(0, |w, (at, byte)| match byte {
        Some((src, k)) => w | ((args[*src] >> (8 * k)) & 0xff) << (8 * at),
        None => w,
    })
}

fn word(r: &mut TestRng) -> u32 {
    u32::from_le_bytes(std::array::from_fn(|_| match r.random_range(0..4) {
        0 => [0u8, 0x7f, 0x80, 0xff][r.random_range(0..4)],
        _ => r.random(),
    }))
}

#[test]
fn random_byte_gathers() {
    let mut r = TestRng::from_seed(RngAlgorithm::ChaCha, &[23; 32]);
    let mut programs = 0;
    while programs < PROGRAMS {
        let p = plan(&mut r);
        let narrow = r.random_range(0..3) == 0;
        let Some(clif) = text(&p, narrow, &mut r) else { continue };
        programs += 1;
        let f = cranelift_reader::parse_functions(&clif).unwrap_or_else(|e| panic!("{}\n{}", clif, e)).remove(0);
        let program = link_for_test(vec![compile_guarded(&f).unwrap_or_else(|e| panic!("{}\n{}", clif, e))]).unwrap();
        for _ in 0..INPUTS {
            let args: [u32; 4] = std::array::from_fn(|_| word(&mut r));
            let values: Vec<DataValue> = args.iter().map(|&a| DataValue::I32(a as i32)).collect();
            let got = simulate(&program, &f, &values).unwrap_or_else(|e| panic!("{}\n{}", clif, e));
            let want = model(&p, &args);
            let (got, want) = match &got[0] {
                DataValue::I16(v) if narrow => (*v as u16 as u32, want & 0xffff),
                DataValue::I32(v) if !narrow => (*v as u32, want),
                other => panic!("{}\nan {} result expected, got {:?}", clif, if narrow { "i16" } else { "i32" }, other),
            };
            assert_eq!(got, want, "{}\non {:08x?}", clif, args);
        }
    }
}
