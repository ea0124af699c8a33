//! Random kernels ([`generate`]) and their launches.
//!
//! The rules that keep a kernel's outputs defined whatever the compiler does
//! (so that any difference between two runs is a bug):
//! - no statement traps: divisions are guarded ([`straight_stmt`]), loads
//!   are masked into `in`, loops are bounded;
//! - every thread writes only its own output slots;
//! - an atomic word is only ever updated with one operation (add, and, or,
//!   xor, umin, umax, smin or smax), and the old value an atomic returns is
//!   dropped; shared atomic words are read only between two barriers;
//! - CTA barriers, and the shared-memory exchanges around them, only at the
//!   top level (uniform points; exited threads count as arrived);
//! - shuffles only at the top level, before any early exit, in a kernel
//!   whose CTAs are whole warps, so every source lane is active; votes only
//!   at the top level, where every lane that has not exited is active (every
//!   divergent region has joined).

use cranelift_codegen::ir::{types, Type};
use rand::rngs::SmallRng;
use rand::RngExt;

use super::ast::*;
use crate::fuzzgen::ast::TYPES;
use crate::fuzzgen::gen::{edge_value, straight_stmt, Blocks};

/// Limits of a generated kernel.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    pub max_stmts: usize,
    pub max_depth: u32,
}

impl Default for Limits {
    fn default() -> Self {
        Limits { max_stmts: 28, max_depth: 3 }
    }
}

struct KGen<'a> {
    r: &'a mut SmallRng,
    lim: Limits,
    vars: Vec<Type>,
    stmts_left: usize,
    /// Shuffles are allowed (whole warps, and no exit generated yet).
    shuffles: bool,
}

const LOAD_OPS: [BinOp; 6] = [BinOp::Iadd, BinOp::Bxor, BinOp::Iadd, BinOp::Umax, BinOp::Isub, BinOp::Bor];

impl Blocks for KGen<'_> {
    type Stmt = KStmt;
    fn budget(&mut self) -> (&mut SmallRng, &mut usize) {
        (&mut *self.r, &mut self.stmts_left)
    }
    fn stmt(&mut self, depth: u32, out: &mut Vec<KStmt>) {
        self.statement(depth, out)
    }
}

impl KGen<'_> {
    fn var_of(&mut self, ty: Type) -> Var {
        let c: Vec<Var> = (0..self.vars.len()).filter(|&v| self.vars[v] == ty).collect();
        c[self.r.random_range(0..c.len())]
    }
    fn any_var(&mut self) -> Var {
        self.r.random_range(0..self.vars.len())
    }
    fn special(&mut self) -> Special {
        let axis = self.r.random_range(0..3u8);
        match self.r.random_range(0..12u32) {
            0 | 1 => Special::Tid(axis),
            2 => Special::Ctaid(axis),
            3 => Special::Ntid(axis),
            4 => Special::Nctaid(axis),
            5 => Special::Laneid,
            6 | 7 | 8 => Special::LinearTid,
            9 | 10 => Special::GlobalTid,
            _ => Special::ParamN,
        }
    }

    fn scalar(&mut self, out: &mut Vec<KStmt>) {
        let mut v = Vec::new();
        straight_stmt(self.r, &self.vars, &mut v);
        out.extend(v.into_iter().map(KStmt::Scalar));
    }

    fn statement(&mut self, depth: u32, out: &mut Vec<KStmt>) {
        let top = depth == 0;
        let control = depth < self.lim.max_depth;
        let k = self.r.random_range(0..100u32);
        let s = match k {
            0..=34 => return self.scalar(out),
            35..=44 => {
                let what = self.special();
                KStmt::Special { dst: self.var_of(types::I32), what }
            }
            45..=50 => {
                let ty = TYPES[self.r.random_range(0..4)];
                KStmt::Load { dst: self.var_of(ty), idx: self.any_var() }
            }
            51..=60 => {
                let ty = TYPES[self.r.random_range(0..4)];
                let acc = self.var_of(ty);
                let op = LOAD_OPS[self.r.random_range(0..LOAD_OPS.len())];
                let bound = match self.r.random_range(0..3u32) {
                    0 => Bound::Const(self.r.random_range(1..=12)),
                    1 => Bound::ParamN,
                    _ => Bound::Var(self.any_var()),
                };
                let extra = {
                    let mut v = Vec::new();
                    for _ in 0..self.r.random_range(0..=2u32) {
                        straight_stmt(self.r, &self.vars, &mut v);
                    }
                    v
                };
                KStmt::LoadLoop { acc, op, start: self.any_var(), bound, signed: self.r.random_bool(0.5), extra }
            }
            61..=68 if control => {
                let c = self.any_var();
                let then = self.block(depth + 1);
                let els = if self.r.random_bool(0.6) { self.block(depth + 1) } else { Vec::new() };
                KStmt::If { c, then, els }
            }
            69..=75 if control => {
                let trips = if self.r.random_bool(0.6) {
                    Trips::Var(self.any_var(), [1, 3, 7][self.r.random_range(0..3)])
                } else {
                    Trips::Const(self.r.random_range(1..=4))
                };
                KStmt::Loop { trips, body: self.block(depth + 1) }
            }
            76..=78 if !top || self.r.random_bool(0.3) => {
                self.shuffles = false;
                KStmt::Exit { c: self.any_var() }
            }
            79..=84 => {
                let op = AtomOp::ALL[self.r.random_range(0..AtomOp::ALL.len())];
                KStmt::Atomic { op, val: self.any_var(), shared: self.r.random_bool(0.4) }
            }
            85..=86 if top => KStmt::Barrier,
            87..=90 if top => KStmt::Exchange { src: self.any_var(), dst: self.var_of(types::I32), rot: self.any_var() },
            91..=92 if top => KStmt::ReadShared { dst: self.var_of(types::I64), word: self.r.random_range(0..ATOM_WORDS) },
            93..=96 if top && self.shuffles => {
                let mode = [Shfl::Idx, Shfl::Up, Shfl::Down, Shfl::Bfly][self.r.random_range(0..4)];
                KStmt::Shuffle { mode, dst: self.var_of(types::I32), src: self.var_of(types::I32), b: self.any_var() }
            }
            97..=99 if top => {
                let form = [Vote::Any, Vote::All, Vote::Ballot][self.r.random_range(0..3)];
                let dst = self.var_of(if form == Vote::Ballot { types::I32 } else { types::I8 });
                KStmt::Vote { form, dst, c: self.any_var() }
            }
            _ => return self.scalar(out),
        };
        out.push(s);
    }
}

/// A random launch: 1–4 CTAs (sometimes in two dimensions), CTAs of 1 to
/// [`MAX_CTA_THREADS`] threads — whole warps half of the time, a single
/// thread (where the simulator translates code to host code) one time in
/// six, sometimes two- or three-dimensional.
fn launch(r: &mut SmallRng) -> Launch {
    let grid = if r.random_bool(0.2) { [r.random_range(1..=2), r.random_range(1..=2), 1] } else { [r.random_range(1..=4), 1, 1] };
    let block = match r.random_range(0..12u32) {
        0 | 1 => [1, 1, 1],
        2..=6 => [[32, 64, 96, 128][r.random_range(0..4)], 1, 1],
        7 => [32, r.random_range(1..=2), r.random_range(1..=2)],
        8 => [r.random_range(1..=8), r.random_range(1..=4), r.random_range(1..=4)],
        _ => [r.random_range(2..=MAX_CTA_THREADS), 1, 1],
    };
    Launch { grid, block }
}

/// A random kernel with its launch and inputs.
pub fn generate(r: &mut SmallRng, lim: &Limits) -> Kernel {
    let launch = launch(r);
    let mut vars: Vec<Type> = TYPES.to_vec();
    for _ in 0..r.random_range(2..8) {
        // i128 one time in ten.
        vars.push(if r.random_bool(0.1) { types::I128 } else { TYPES[r.random_range(0..4)] });
    }
    vars.push(types::I32);
    vars.push(types::I32);
    let inits = vars.iter().map(|&t| edge_value(r, t)).collect();
    let whole_warps = launch.cta_threads() % 32 == 0;
    let stmts = r.random_range(4..=lim.max_stmts);
    let mut g = KGen { r, lim: *lim, vars: vars.clone(), stmts_left: stmts, shuffles: whole_warps };
    let mut body = Vec::new();
    while g.stmts_left > 0 {
        body.extend(g.block(0));
    }
    let nouts = g.r.random_range(1..=4usize);
    let outs = (0..nouts).map(|_| g.r.random_range(0..vars.len())).collect();
    let elem64 = g.r.random_bool(0.4);
    let atom64 = g.r.random_bool(0.4);
    let n = g.r.random_range(0..=40);
    let input = (0..IN_ELEMS).map(|_| edge_value(g.r, types::I64) as u64).collect();
    Kernel { vars, inits, body, outs, elem64, atom64, launch, n, input }
}
