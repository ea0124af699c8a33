//! Delta reduction of a failing kernel: while it fails the same way, delete
//! statements, replace a diamond or loop by one of its bodies, run loops
//! once, drop outputs, shrink the launch, and set entry values and `n` to
//! zero. Every candidate keeps the generator's rules ([`valid`]).

use super::ast::*;
use super::{check, FailKind, Failure, Outcome};

/// Upper bound on the number of candidates tried.
const MAX_TRIES: usize = 1500;

/// The generator's rules that a reduction step could break: a shuffle needs
/// whole warps and no exit before it.
pub fn valid(k: &Kernel) -> bool {
    fn has_exit(s: &KStmt) -> bool {
        matches!(s, KStmt::Exit { .. }) || children_ref(s).iter().any(|c| c.iter().any(has_exit))
    }
    let whole = k.launch.cta_threads() % 32 == 0;
    let mut exited = false;
    for s in &k.body {
        if matches!(s, KStmt::Shuffle { .. }) && (exited || !whole) {
            return false;
        }
        exited |= has_exit(s);
    }
    !k.outs.is_empty()
}

#[derive(Clone, Copy)]
enum Edit {
    Delete,
    Inline(usize),
    Once,
}

fn apply(body: &mut Vec<KStmt>, i: usize, e: Edit) -> bool {
    match e {
        Edit::Delete => {
            body.remove(i);
            true
        }
        Edit::Inline(c) => {
            let mut ch = children(&mut body[i]);
            if c >= ch.len() {
                return false;
            }
            let inner = std::mem::take(ch[c]);
            body.splice(i..=i, inner);
            true
        }
        Edit::Once => match &mut body[i] {
            KStmt::Loop { trips, .. } if *trips != Trips::Const(1) => {
                *trips = Trips::Const(1);
                true
            }
            KStmt::LoadLoop { bound, extra, .. } if *bound != Bound::Const(1) || !extra.is_empty() => {
                *bound = Bound::Const(1);
                extra.clear();
                true
            }
            _ => false,
        },
    }
}

/// Applies `e` to statement number `target` (preorder); false if it does not apply.
fn edit(body: &mut Vec<KStmt>, target: usize, next: &mut usize, e: Edit) -> bool {
    let mut i = 0;
    while i < body.len() {
        if *next == target {
            return apply(body, i, e);
        }
        *next += 1;
        for c in children(&mut body[i]) {
            let n = count(c);
            if target < *next + n {
                return edit(c, target, next, e);
            }
            *next += n;
        }
        i += 1;
    }
    false
}

struct Reducer<'a> {
    best: Kernel,
    fail: Failure,
    tries: usize,
    check: &'a dyn Fn(&Kernel) -> Outcome,
}

impl Reducer<'_> {
    fn try_k(&mut self, cand: Kernel) -> bool {
        if self.tries >= MAX_TRIES || cand == self.best || !valid(&cand) {
            return false;
        }
        self.tries += 1;
        if let Outcome::Fail(f) = (self.check)(&cand) {
            if same_kind(&f.kind, &self.fail.kind) {
                self.best = cand;
                self.fail = f;
                return true;
            }
        }
        false
    }
}

fn same_kind(a: &FailKind, b: &FailKind) -> bool {
    a == b
}

/// The reduced kernel and its failure.
pub fn reduce(k: Kernel, f: Failure) -> (Kernel, Failure) {
    reduce_with(k, f, &check)
}

/// [`reduce`] with another check (tests of the reducer).
pub fn reduce_with(k: Kernel, f: Failure, check: &dyn Fn(&Kernel) -> Outcome) -> (Kernel, Failure) {
    let mut r = Reducer { best: k, fail: f, tries: 0, check };
    loop {
        let mut progress = false;
        // Statements, from the last one back (a later statement rarely
        // depends on nothing; deleting it first keeps the numbering).
        let mut t = count(&r.best.body);
        while t > 0 {
            t -= 1;
            for e in [Edit::Delete, Edit::Inline(0), Edit::Inline(1), Edit::Once] {
                let mut cand = r.best.clone();
                if edit(&mut cand.body, t, &mut 0, e) && r.try_k(cand) {
                    progress = true;
                    break;
                }
            }
        }
        // Outputs.
        let mut j = r.best.outs.len();
        while j > 0 && r.best.outs.len() > 1 {
            j -= 1;
            let mut cand = r.best.clone();
            if j < cand.outs.len() {
                cand.outs.remove(j);
                progress |= r.try_k(cand);
            }
        }
        // The launch (each candidate from the launch kept so far).
        let shrinks: [fn(Launch) -> Launch; 6] = [
            |l| Launch { grid: [1, 1, 1], ..l },
            |l| Launch { grid: [l.grid[0].min(2), 1, 1], ..l },
            |l| Launch { block: [32, 1, 1], ..l },
            |l| Launch { block: [1, 1, 1], ..l },
            |l| Launch { block: [l.block[0], 1, 1], ..l },
            |l| Launch { block: [(l.block[0] / 2).max(1), l.block[1], l.block[2]], ..l },
        ];
        for shrink in shrinks {
            let mut cand = r.best.clone();
            cand.launch = shrink(cand.launch);
            progress |= r.try_k(cand);
        }
        // Values.
        for v in 0..r.best.inits.len() {
            if r.best.inits[v] != 0 {
                let mut cand = r.best.clone();
                cand.inits[v] = 0;
                progress |= r.try_k(cand);
            }
        }
        let zeros: [fn(&mut Kernel); 3] = [|k| k.elem64 = false, |k| k.atom64 = false, |k| k.n = 0];
        for zero in zeros {
            let mut cand = r.best.clone();
            zero(&mut cand);
            progress |= r.try_k(cand);
        }
        if !progress || r.tries >= MAX_TRIES {
            return (r.best, r.fail);
        }
    }
}
