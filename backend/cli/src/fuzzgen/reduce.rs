//! Delta reduction of a failing program: while the failure (of the same
//! kind) persists, drop called functions, delete statements, replace a
//! diamond, loop or switch by one of its bodies, run loops once, set
//! constants, immediates, initial values and arguments to 0 or 1, keep one
//! return value, and drop unused variables.

use super::ast::*;
use super::{check, FailKind, Failure, Outcome};

/// Upper bound on the number of candidate programs tried.
const MAX_TRIES: usize = 4000;

struct Reducer<'a> {
    best: Program,
    fail: Failure,
    tries: usize,
    check: &'a dyn Fn(&Program, &[Vec<u64>]) -> Outcome,
}

impl Reducer<'_> {
    fn argsets(&self, args: &Option<Vec<u64>>) -> Vec<Vec<u64>> {
        args.iter().cloned().collect()
    }
    /// Keeps `cand` (with `args`) if it fails the same way.
    fn try_cand(&mut self, cand: Program, args: Option<Vec<u64>>) -> bool {
        if self.tries >= MAX_TRIES || cand == self.best && args == self.fail.args {
            return false;
        }
        self.tries += 1;
        if let Outcome::Fail(f) = (self.check)(&cand, &self.argsets(&args)) {
            if same_kind(&f.kind, &self.fail.kind) {
                self.best = cand;
                self.fail = Failure { args: f.args.or(args), ..f };
                return true;
            }
        }
        false
    }
    fn try_prog(&mut self, cand: Program) -> bool {
        let a = self.fail.args.clone();
        self.try_cand(cand, a)
    }
}

fn same_kind(a: &FailKind, b: &FailKind) -> bool {
    a == b
}

/// Applies `f` to every variable a statement reads or writes.
fn each_var(s: &mut Stmt, f: &mut dyn FnMut(&mut Var)) {
    fn addr(a: &mut Addr, f: &mut dyn FnMut(&mut Var)) {
        if let Some(i) = &mut a.index {
            f(i);
        }
    }
    match s {
        Stmt::Const { dst, .. } => f(dst),
        Stmt::Un { dst, a, .. } | Stmt::Imm { dst, a, .. } | Stmt::IcmpImm { dst, a, .. } | Stmt::Conv { dst, a, .. } => {
            f(dst);
            f(a);
        }
        Stmt::Bin { dst, a, b, .. } | Stmt::Icmp { dst, a, b, .. } | Stmt::AddTrap { dst, a, b } => {
            f(dst);
            f(a);
            f(b);
        }
        Stmt::Select { dst, c, a, b, .. } | Stmt::Bitselect { dst, c, a, b } => {
            f(dst);
            f(c);
            f(a);
            f(b);
        }
        Stmt::Ovf { dst, flag, a, b, .. } => {
            f(dst);
            f(flag);
            f(a);
            f(b);
        }
        Stmt::Carry { dst, flag, a, b, cin, .. } => {
            f(dst);
            f(flag);
            f(a);
            f(b);
            f(cin);
        }
        Stmt::TrapIf { c, .. } => f(c),
        Stmt::Trap => {}
        Stmt::Store { src, addr: ad, .. } => {
            f(src);
            addr(ad, f);
        }
        Stmt::Load { dst, addr: ad, .. } => {
            f(dst);
            addr(ad, f);
        }
        Stmt::Call { args, rets, .. } => {
            for v in args.iter_mut().chain(rets.iter_mut()) {
                f(v);
            }
        }
        Stmt::If { c, then, els } => {
            f(c);
            for s in then.iter_mut().chain(els.iter_mut()) {
                each_var(s, f);
            }
        }
        Stmt::Loop { body, .. } => {
            for s in body {
                each_var(s, f);
            }
        }
        Stmt::Switch { idx, cases, default } => {
            f(idx);
            for s in cases.iter_mut().flatten().chain(default.iter_mut()) {
                each_var(s, f);
            }
        }
        Stmt::Vector(v) => v.each_var(f),
    }
}

/// Applies `f` to every statement, outer ones first.
fn each_stmt(body: &mut [Stmt], f: &mut dyn FnMut(&mut Stmt)) {
    for s in body {
        f(s);
        match s {
            Stmt::If { then, els, .. } => {
                each_stmt(then, f);
                each_stmt(els, f);
            }
            Stmt::Loop { body, .. } => each_stmt(body, f),
            Stmt::Switch { cases, default, .. } => {
                for c in cases.iter_mut() {
                    each_stmt(c, f);
                }
                each_stmt(default, f);
            }
            _ => {}
        }
    }
}

/// The edits of statement number `target` (preorder).
#[derive(Clone, Copy)]
enum Edit {
    Delete,
    /// Replace by child body `k` (If: 0 then, 1 else; Loop: 0; Switch: cases then default).
    Inline(usize),
    LoopOnce,
    ConstTo(u128),
    ImmTo(i64),
}

fn children(s: &mut Stmt) -> Vec<&mut Vec<Stmt>> {
    match s {
        Stmt::If { then, els, .. } => vec![then, els],
        Stmt::Loop { body, .. } => vec![body],
        Stmt::Switch { cases, default, .. } => cases.iter_mut().chain(std::iter::once(default)).collect(),
        _ => vec![],
    }
}

/// Applies `e` to statement `target`; false when it does not apply.
fn edit(body: &mut Vec<Stmt>, target: usize, next: &mut usize, e: Edit) -> bool {
    let mut i = 0;
    while i < body.len() {
        if *next == target {
            return apply(body, i, e);
        }
        *next += 1;
        for c in children(&mut body[i]) {
            if *next > target {
                return false;
            }
            let before = *next;
            let n = count_stmts(c);
            if target < before + n {
                return edit(c, target, next, e);
            }
            *next = before + n;
        }
        i += 1;
    }
    false
}

fn apply(body: &mut Vec<Stmt>, i: usize, e: Edit) -> bool {
    match e {
        Edit::Delete => {
            body.remove(i);
            true
        }
        Edit::Inline(k) => {
            let mut ch = children(&mut body[i]);
            if k >= ch.len() {
                return false;
            }
            let inner = std::mem::take(ch[k]);
            body.splice(i..=i, inner);
            true
        }
        Edit::LoopOnce => match &mut body[i] {
            Stmt::Loop { trips, .. } if *trips > 1 => {
                *trips = 1;
                true
            }
            _ => false,
        },
        Edit::ConstTo(v) => match &mut body[i] {
            Stmt::Const { val, .. } if *val != v => {
                *val = v;
                true
            }
            _ => false,
        },
        Edit::ImmTo(v) => match &mut body[i] {
            Stmt::Imm { imm, .. } | Stmt::IcmpImm { imm, .. } if *imm != v => {
                *imm = v;
                true
            }
            _ => false,
        },
    }
}

/// Removes calls of function `j` and then function `j` itself (renumbering).
fn drop_func(p: &Program, j: usize) -> Program {
    let mut q = p.clone();
    for f in &mut q.funcs {
        remove_calls(&mut f.body, j);
        each_stmt(&mut f.body, &mut |s| {
            if let Stmt::Call { callee, .. } = s {
                if *callee > j {
                    *callee -= 1;
                }
            }
        });
    }
    q.funcs.remove(j);
    q
}

fn remove_calls(body: &mut Vec<Stmt>, j: usize) {
    body.retain(|s| !matches!(s, Stmt::Call { callee, .. } if *callee == j));
    for s in body.iter_mut() {
        for c in children(s) {
            remove_calls(c, j);
        }
    }
}

fn uses_memory(body: &mut [Stmt]) -> bool {
    let mut m = false;
    each_stmt(body, &mut |s| m |= matches!(s, Stmt::Load { .. } | Stmt::Store { .. } | Stmt::Vector(super::vectors::VStmt::Mem { .. })));
    m
}

/// Drops the non-parameter variables no statement or return uses.
fn drop_unused_vars(p: &Program) -> Program {
    let mut q = p.clone();
    for f in &mut q.funcs {
        let mut used = vec![false; f.vars.len()];
        for v in 0..f.nparams {
            used[v] = true;
        }
        for &r in &f.rets {
            used[r] = true;
        }
        for s in &mut f.body {
            each_var(s, &mut |v| used[*v] = true);
        }
        let mut map = vec![usize::MAX; f.vars.len()];
        let mut vars = Vec::new();
        let mut inits = Vec::new();
        for v in 0..f.vars.len() {
            if used[v] {
                map[v] = vars.len();
                vars.push(f.vars[v]);
                if v >= f.nparams {
                    inits.push(f.inits[v - f.nparams]);
                }
            }
        }
        for s in &mut f.body {
            each_var(s, &mut |v| *v = map[*v]);
        }
        for r in &mut f.rets {
            *r = map[*r];
        }
        f.vars = vars;
        f.inits = inits;
    }
    q
}

/// Reduces `p` while it keeps failing like `fail` under [`check`].
pub fn reduce(p: Program, fail: Failure) -> (Program, Failure) {
    reduce_with(p, fail, &check)
}

/// Reduces `p` while `check` keeps failing with the kind of `fail`.
pub fn reduce_with(p: Program, fail: Failure, check: &dyn Fn(&Program, &[Vec<u64>]) -> Outcome) -> (Program, Failure) {
    let mut r = Reducer { best: p, fail, tries: 0, check };
    loop {
        let start = r.best.clone();
        let start_args = r.fail.args.clone();
        // Functions.
        let mut j = r.best.funcs.len();
        while j > 1 {
            j -= 1;
            if j < r.best.funcs.len() {
                let c = drop_func(&r.best, j);
                r.try_prog(c);
            }
        }
        // Statements, last first (later statements depend on earlier ones less).
        for k in 0..r.best.funcs.len() {
            let mut t = count_stmts(&r.best.funcs[k].body);
            while t > 0 {
                t -= 1;
                for e in [
                    Edit::Delete,
                    Edit::Inline(0),
                    Edit::Inline(1),
                    Edit::Inline(2),
                    Edit::Inline(3),
                    Edit::Inline(4),
                    Edit::LoopOnce,
                    Edit::ConstTo(0),
                    Edit::ConstTo(1),
                    Edit::ImmTo(0),
                    Edit::ImmTo(1),
                ] {
                    if k >= r.best.funcs.len() {
                        break;
                    }
                    let mut c = r.best.clone();
                    let mut next = 0;
                    if edit(&mut c.funcs[k].body, t, &mut next, e) && r.try_prog(c) {
                        break;
                    }
                }
            }
        }
        // One return value of the function run.
        if r.best.funcs[0].rets.len() > 1 {
            for i in 0..r.best.funcs[0].rets.len() {
                let mut c = r.best.clone();
                if i >= c.funcs[0].rets.len() {
                    break;
                }
                c.funcs[0].rets = vec![c.funcs[0].rets[i]];
                if r.try_prog(c) {
                    break;
                }
            }
        }
        // Initial values and arguments.
        for k in 0..r.best.funcs.len() {
            for i in 0..r.best.funcs[k].inits.len() {
                for v in [0u128, 1] {
                    let mut c = r.best.clone();
                    if c.funcs[k].inits[i] != v {
                        c.funcs[k].inits[i] = v;
                        if r.try_prog(c) {
                            break;
                        }
                    }
                }
            }
        }
        if let Some(args) = r.fail.args.clone() {
            for i in 0..args.len() {
                for v in [0u64, 1] {
                    let mut a = r.fail.args.clone().unwrap_or_default();
                    if a[i] != v {
                        a[i] = v;
                        let c = r.best.clone();
                        if r.try_cand(c, Some(a)) {
                            break;
                        }
                    }
                }
            }
        }
        // A stack slot no statement uses any more.
        for k in 0..r.best.funcs.len() {
            if r.best.funcs[k].slot && !uses_memory(&mut r.best.funcs[k].body.clone()) {
                let mut c = r.best.clone();
                c.funcs[k].slot = false;
                r.try_prog(c);
            }
        }
        let c = drop_unused_vars(&r.best);
        if c != r.best {
            r.try_prog(c);
        }
        if r.best == start && r.fail.args == start_args || r.tries >= MAX_TRIES {
            break;
        }
    }
    (r.best, r.fail)
}
