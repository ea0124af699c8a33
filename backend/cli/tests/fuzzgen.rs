//! The program generator (`ursa fuzz`): a few thousand generated programs
//! agree between the simulator and cranelift-interpreter; the reducer and
//! the differential check do what they claim.

use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::types;
use ursa_cli::fuzzgen::ast::*;
use ursa_cli::fuzzgen::{self, check, reduce, FailKind, Failure, Outcome};

/// 3000 programs (9000 runs); any failure prints its reduced filetest.
#[test]
fn generated_programs_agree() {
    let sum = fuzzgen::run(0x5eed_0000, 3000, 2, true, &|_, _| {});
    assert_eq!(sum.failed, 0, "{}\n{}", sum, sum.reports.join("\n"));
    assert_eq!(sum.passed + sum.skipped, 3000);
    // Most runs return values (not a trap on both sides).
    assert!(sum.returned > sum.trapped * 3, "{}", sum);
}

/// Case i of seed S is the same program every time (reproducible reports).
#[test]
fn cases_are_reproducible() {
    let lim = fuzzgen::gen::Limits::default();
    for s in [0u64, 1, 77, u64::MAX] {
        assert_eq!(fuzzgen::case(s, &lim), fuzzgen::case(s, &lim));
    }
    assert_ne!(fuzzgen::case(1, &lim).0, fuzzgen::case(2, &lim).0);
}

/// i128 is one of the generator's types: some of the first cases use it.
#[test]
fn programs_use_i128() {
    let lim = fuzzgen::gen::Limits::default();
    let n = (0..200u64).filter(|&s| fuzzgen::case(s, &lim).0.funcs.iter().any(|f| f.vars.contains(&types::I128))).count();
    assert!(n > 20, "only {} of 200 programs have an i128 variable", n);
}

/// Vectors are among the generator's statements: in the first cases, most
/// vector statement kinds and opcodes occur, and programs have vector
/// parameters and results.
#[test]
fn programs_use_vectors() {
    use ursa_cli::fuzzgen::vectors::VStmt;
    let lim = fuzzgen::gen::Limits::default();
    let mut ops = std::collections::HashSet::new();
    let (mut mem, mut shuffles, mut vparams, mut vrets) = (0, 0, 0, 0);
    fn walk(body: &[Stmt], f: &mut dyn FnMut(&VStmt)) {
        for s in body {
            match s {
                Stmt::Vector(v) => f(v),
                Stmt::If { then, els, .. } => {
                    walk(then, f);
                    walk(els, f);
                }
                Stmt::Loop { body, .. } => walk(body, f),
                Stmt::Switch { cases, default, .. } => {
                    cases.iter().for_each(|c| walk(c, f));
                    walk(default, f);
                }
                _ => {}
            }
        }
    }
    for s in 0..300u64 {
        let (p, _) = fuzzgen::case(s, &lim);
        for f in &p.funcs {
            vparams += f.params().iter().filter(|t| t.is_vector()).count();
            vrets += f.returns().iter().filter(|t| t.is_vector()).count();
            walk(&f.body, &mut |v| match v {
                VStmt::Op { op, .. } => {
                    ops.insert(*op);
                }
                VStmt::Mem { .. } => mem += 1,
                VStmt::Shuffle { .. } => shuffles += 1,
                _ => {}
            });
        }
    }
    assert!(ops.len() > 50, "only {} vector opcodes in 300 programs: {:?}", ops.len(), ops);
    assert!(mem > 100 && shuffles > 20 && vparams > 50 && vrets > 50, "{} {} {} {}", mem, shuffles, vparams, vrets);
}

/// Without vectors a seed's program is what it was: the scalar statements
/// draw from their own stream, so vector statements only come in between.
#[test]
fn vectors_keep_the_scalar_statements() {
    let with = fuzzgen::gen::Limits::default();
    let without = fuzzgen::gen::Limits { vectors: false, ..with };
    fn count_scalar(body: &[Stmt]) -> usize {
        count_stmts(body) - count_vec(body)
    }
    fn count_vec(body: &[Stmt]) -> usize {
        body.iter()
            .map(|s| match s {
                Stmt::Vector(_) => 1,
                Stmt::If { then, els, .. } => count_vec(then) + count_vec(els),
                Stmt::Loop { body, .. } => count_vec(body),
                Stmt::Switch { cases, default, .. } => cases.iter().map(|c| count_vec(c)).sum::<usize>() + count_vec(default),
                _ => 0,
            })
            .sum()
    }
    for s in 0..50u64 {
        let (a, args_a) = fuzzgen::case(s, &with);
        let (b, args_b) = fuzzgen::case(s, &without);
        assert_eq!(args_a, args_b);
        assert_eq!(a.funcs.len(), b.funcs.len());
        for (fa, fb) in a.funcs.iter().zip(&b.funcs) {
            assert_eq!(count_scalar(&fa.body), count_stmts(&fb.body));
            let scalars: Vec<_> = fa.vars.iter().filter(|t| !t.is_vector()).collect();
            assert_eq!(scalars, fb.vars.iter().collect::<Vec<_>>());
        }
    }
}

fn func(
    params: Vec<cranelift_codegen::ir::Type>,
    locals: Vec<(cranelift_codegen::ir::Type, u64)>,
    body: Vec<Stmt>,
    rets: Vec<Var>,
) -> Func {
    let nparams = params.len();
    let mut vars = params;
    vars.extend(locals.iter().map(|l| l.0));
    Func { vars, nparams, inits: locals.iter().map(|l| l.1 as u128).collect(), slot: false, body, rets }
}

/// A hand-written program: both sides agree on its value, and on the trap of
/// `sdiv INT_MIN, -1` (which must be a trap on both sides, not a fault).
#[test]
fn check_runs_both_sides() {
    // v0 / v1 (i32), then + 7.
    let f = func(
        vec![types::I32, types::I32],
        vec![(types::I32, 7)],
        vec![Stmt::Bin { op: BinOp::Sdiv, dst: 0, a: 0, b: 1 }, Stmt::Bin { op: BinOp::Iadd, dst: 0, a: 0, b: 2 }],
        vec![0],
    );
    let p = Program { funcs: vec![f] };
    match check(&p, &[vec![100, 5], vec![(-100i32) as u32 as u64, 3]]) {
        Outcome::Pass { returned: 2, trapped: 0 } => {}
        o => panic!("{:?}", o),
    }
    match check(&p, &[vec![0x8000_0000, 0xffff_ffff], vec![1, 0]]) {
        Outcome::Pass { returned: 0, trapped: 2 } => {}
        o => panic!("{:?}", o),
    }
}

/// `trap` in one arm of a diamond, with statements after it (unreachable
/// code, as reduction may leave it).
#[test]
fn check_trap_terminator() {
    let f = func(
        vec![types::I8, types::I32],
        vec![],
        vec![Stmt::If {
            c: 0,
            then: vec![Stmt::Trap, Stmt::Bin { op: BinOp::Iadd, dst: 1, a: 1, b: 1 }],
            els: vec![Stmt::Imm { op: ImmOp::IaddImm, dst: 1, a: 1, imm: 5 }],
        }],
        vec![1],
    );
    let p = Program { funcs: vec![f] };
    match check(&p, &[vec![1, 7], vec![0, 7]]) {
        Outcome::Pass { returned: 1, trapped: 1 } => {}
        o => panic!("{:?}", o),
    }
}

/// Loops, diamonds, switches, calls and memory through `check`.
#[test]
fn check_control_flow_and_calls() {
    // fz1(a: i64) -> i64: a * 3 through the stack slot.
    let mut callee = func(vec![types::I64], vec![(types::I64, 3)], vec![], vec![0]);
    callee.slot = true;
    callee.body = vec![
        Stmt::Store { src: 0, addr: Addr { wide: true, off: 8, index: None }, kind: MemKind::Full, big: false },
        Stmt::Load { dst: 0, addr: Addr { wide: false, off: 8, index: None }, kind: MemKind::Full, big: false },
        Stmt::Bin { op: BinOp::Imul, dst: 0, a: 0, b: 1 },
    ];
    // fz0(x: i64, c: i8, k: i32): loop 4 times x = fz1(x); if c { x += 1 } ; switch k { 0: x ^= 1, 1: x = 0 }.
    let main = func(
        vec![types::I64, types::I8, types::I32],
        vec![(types::I64, 1)],
        vec![
            Stmt::Loop { trips: 4, body: vec![Stmt::Call { callee: 1, args: vec![0], rets: vec![0], indirect: true }] },
            Stmt::If { c: 1, then: vec![Stmt::Bin { op: BinOp::Iadd, dst: 0, a: 0, b: 3 }], els: vec![] },
            Stmt::Switch {
                idx: 2,
                cases: vec![vec![Stmt::Bin { op: BinOp::Bxor, dst: 0, a: 0, b: 3 }], vec![Stmt::Const { dst: 0, val: 0 }]],
                default: vec![],
            },
            Stmt::IcmpImm { cc: IntCC::Equal, dst: 1, a: 0, imm: 0 },
        ],
        vec![0, 1],
    );
    let p = Program { funcs: vec![main, callee] };
    match check(&p, &[vec![1, 0, 0], vec![2, 1, 1], vec![5, 1, 9]]) {
        Outcome::Pass { returned: 3, trapped: 0 } => {}
        o => panic!("{:?}", o),
    }
    // The filetest of it has the interpreter's values: 1*81 ^ 1 = 80.
    let t = fuzzgen::filetest(&p, &Failure { kind: FailKind::Mismatch, message: "example".into(), args: Some(vec![1, 0, 0]) }, "a test");
    assert!(t.contains("; run: %fz0(1, 0, 0) == [80, 0]"), "{}", t);
    assert!(t.starts_with("test run\n"));
}

/// The reducer keeps the failure and removes everything else: with a
/// predicate "fails when the program has a udiv", a generated program with
/// one reduces to the udiv alone.
#[test]
fn reducer_shrinks_to_the_cause() {
    fn has_udiv(b: &[Stmt]) -> bool {
        b.iter().any(|s| match s {
            Stmt::Bin { op: BinOp::Udiv, .. } => true,
            Stmt::If { then, els, .. } => has_udiv(then) || has_udiv(els),
            Stmt::Loop { body, .. } => has_udiv(body),
            Stmt::Switch { cases, default, .. } => cases.iter().any(|c| has_udiv(c)) || has_udiv(default),
            _ => false,
        })
    }
    let pred = |p: &Program, _: &[Vec<u64>]| {
        if p.funcs.iter().any(|f| has_udiv(&f.body)) {
            Outcome::Fail(Failure { kind: FailKind::Mismatch, message: "has udiv".into(), args: None })
        } else {
            Outcome::Pass { returned: 0, trapped: 0 }
        }
    };
    let lim = fuzzgen::gen::Limits::default();
    let mut found = 0;
    for s in 0..200u64 {
        let (p, _) = fuzzgen::case(s, &lim);
        if !p.funcs.iter().any(|f| has_udiv(&f.body)) || p.size() < 30 {
            continue;
        }
        found += 1;
        let (r, f) = reduce::reduce_with(p.clone(), Failure { kind: FailKind::Mismatch, message: String::new(), args: None }, &pred);
        assert_eq!(f.message, "has udiv");
        let stmts: usize = r.funcs.iter().map(|f| count_stmts(&f.body)).sum();
        assert_eq!(stmts, 1, "seed {}: {:?}", s, r);
        // Only the function holding the udiv keeps a body (a function
        // nobody calls still counts: the compiler compiles every function).
        assert!(r.funcs.len() <= 2, "seed {}: {:?}", s, r);
        assert!(r.size() < p.size());
    }
    assert!(found > 5);
}
