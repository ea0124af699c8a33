//! Random programs ([`generate`]) and edge-biased arguments ([`gen_args`]).

use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{types, Type};
use rand::rngs::SmallRng;
use rand::RngExt;
use rand::SeedableRng;

use super::ast::*;
use super::vectors::{passable, VStmt, VTYPES};
use cranelift_codegen::ir::Opcode;

/// Limits of a generated program.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    pub max_funcs: usize,
    pub max_stmts: usize,
    pub max_depth: u32,
    pub max_trips: u32,
    /// Vector variables and statements ([`super::vectors`]).
    pub vectors: bool,
}

impl Default for Limits {
    fn default() -> Self {
        Limits { max_funcs: 3, max_stmts: 24, max_depth: 3, max_trips: 4, vectors: true }
    }
}

/// Before each scalar statement, the chance of a vector statement.
const VECTOR_SHARE: f64 = 0.4;

pub(super) const CCS: [IntCC; 10] = [
    IntCC::Equal,
    IntCC::NotEqual,
    IntCC::SignedLessThan,
    IntCC::SignedGreaterThanOrEqual,
    IntCC::SignedGreaterThan,
    IntCC::SignedLessThanOrEqual,
    IntCC::UnsignedLessThan,
    IntCC::UnsignedGreaterThanOrEqual,
    IntCC::UnsignedGreaterThan,
    IntCC::UnsignedLessThanOrEqual,
];

pub fn bits(ty: Type) -> u32 {
    ty.bits()
}

pub fn mask(ty: Type) -> u128 {
    if ty.bits() == 128 {
        u128::MAX
    } else {
        (1u128 << ty.bits()) - 1
    }
}

/// An edge-biased value of `ty` (zero-extended to 128 bits): 0, ±1, the
/// extremes, powers of two and their neighbours, or random bits.
pub fn edge_value(r: &mut SmallRng, ty: Type) -> u128 {
    let m = mask(ty);
    let b = bits(ty);
    let v = match r.random_range(0..10u32) {
        0 => 0,
        1 => 1,
        2 => m,                      // -1
        3 => (1u128 << (b - 1)) - 1, // signed max
        4 => 1u128 << (b - 1),       // signed min
        5 => 1u128 << r.random_range(0..b),
        6 => (1u128 << r.random_range(0..b)).wrapping_sub(1),
        7 => r.random_range(0..16u128),
        8 => (m - r.random_range(0..16u128)) & m,
        _ => r.random::<u128>(),
    };
    v & m
}

/// The bits of a vector of type `t`: each lane an edge value of its
/// integer type (a float lane: its bits, so NaNs and infinities too).
pub fn vector_value(r: &mut SmallRng, t: Type) -> u128 {
    let lt = t.lane_type().as_int();
    (0..t.lane_count()).fold(0u128, |acc, k| acc | edge_value(r, lt) << (k * lt.bits()))
}

/// Arguments for function 0 of `p`, `n` vectors of them.
pub fn gen_args(r: &mut SmallRng, p: &Program, n: usize) -> Vec<Vec<u64>> {
    // The entry function's parameters are at most 64 bits wide (`generate`).
    (0..n).map(|_| p.funcs[0].params().iter().map(|&t| edge_value(r, t) as u64).collect()).collect()
}

/// A generator of nested statement lists with a budget of statements
/// (the program generator's and the kernel generator's).
pub(crate) trait Blocks {
    type Stmt;
    /// The random source and the statements still to be generated.
    fn budget(&mut self) -> (&mut SmallRng, &mut usize);
    /// Appends one statement (several where one needs set-up) at nesting
    /// depth `depth`.
    fn stmt(&mut self, depth: u32, out: &mut Vec<Self::Stmt>);

    /// A list of one to six statements, within the budget.
    fn block(&mut self, depth: u32) -> Vec<Self::Stmt> {
        let (r, left) = self.budget();
        let n = r.random_range(1..=6usize).min(*left);
        let mut out = Vec::new();
        for _ in 0..n {
            let (_, left) = self.budget();
            if *left == 0 {
                break;
            }
            *left -= 1;
            self.stmt(depth, &mut out);
        }
        out
    }
}

struct FuncGen<'a> {
    r: &'a mut SmallRng,
    /// The vector statements' random stream (unused without vectors).
    rv: &'a mut SmallRng,
    lim: Limits,
    vars: Vec<Type>,
    /// Signatures of the functions this one may call: (index, params, returns).
    callees: &'a [(usize, Vec<Type>, Vec<Type>)],
    stmts_left: usize,
    slot: bool,
}

impl Blocks for FuncGen<'_> {
    type Stmt = Stmt;
    fn budget(&mut self) -> (&mut SmallRng, &mut usize) {
        (&mut *self.r, &mut self.stmts_left)
    }
    fn stmt(&mut self, depth: u32, out: &mut Vec<Stmt>) {
        self.statement(depth, out)
    }
}

impl FuncGen<'_> {
    fn var_of(&mut self, ty: Type) -> Var {
        let c: Vec<Var> = (0..self.vars.len()).filter(|&v| self.vars[v] == ty).collect();
        let r = if ty.is_vector() { &mut *self.rv } else { &mut *self.r };
        c[r.random_range(0..c.len())]
    }
    /// Any scalar variable.
    fn any_var(&mut self) -> Var {
        let c = scalars(&self.vars);
        c[self.r.random_range(0..c.len())]
    }
    fn any_type(&mut self) -> Type {
        TYPES[self.r.random_range(0..TYPES.len())]
    }
    fn imm(&mut self, ty: Type) -> i64 {
        // Immediates are i64 in CLIF; give a value of the type, sign-extended
        // (an i128 immediate is an i64 one, sign-extended by the builder).
        let ty = if ty == types::I128 { types::I64 } else { ty };
        let v = edge_value(self.r, ty) as u64;
        let b = bits(ty);
        ((v << (64 - b)) as i64) >> (64 - b)
    }
    fn addr(&mut self, size: u32) -> Addr {
        let wide = self.r.random_bool(0.5);
        let off = self.r.random_range(0..(SLOT_SIZE / 2) / size) * size;
        let index = if self.r.random_bool(0.3) { Some(self.any_var()) } else { None };
        Addr { wide, off, index }
    }

    fn statement(&mut self, depth: u32, out: &mut Vec<Stmt>) {
        if self.lim.vectors && self.rv.random_bool(VECTOR_SHARE) {
            let v = super::vectors::VecGen { r: &mut *self.rv, vars: &self.vars }.stmt();
            self.slot |= matches!(v, super::vectors::VStmt::Mem { .. });
            out.push(Stmt::Vector(v));
        }
        let r = self.r.random_range(0..100u32);
        let control = depth < self.lim.max_depth;
        let s = match r {
            0..=3 => {
                let ty = self.any_type();
                Stmt::Const { dst: self.var_of(ty), val: edge_value(self.r, ty) }
            }
            4..=11 => {
                let ty = self.any_type();
                let op = UnOp::ALL[self.r.random_range(0..UnOp::ALL.len())];
                let ty = if op == UnOp::Bswap && ty == types::I8 { types::I32 } else { ty };
                Stmt::Un { op, dst: self.var_of(ty), a: self.var_of(ty) }
            }
            12..=37 => {
                let ty = self.any_type();
                let op = BinOp::ALL[self.r.random_range(0..BinOp::ALL.len())];
                // cranelift-interpreter 0.135 cannot run umulhi/smulhi of i128
                // (backend/tests/i128.rs checks them against Rust instead).
                let op = if ty == types::I128 && matches!(op, BinOp::Umulhi | BinOp::Smulhi) { BinOp::Imul } else { op };
                let a = self.var_of(ty);
                let b = if op.is_shift() { self.any_var() } else { self.var_of(ty) };
                if op.is_div() && self.r.random_bool(0.5) {
                    // Mostly avoid a zero divisor so the rest of the program runs.
                    out.push(Stmt::Imm { op: ImmOp::BorImm, dst: b, a: b, imm: 1 });
                }
                Stmt::Bin { op, dst: self.var_of(ty), a, b }
            }
            38..=47 => {
                let ty = self.any_type();
                let op = ImmOp::ALL[self.r.random_range(0..ImmOp::ALL.len())];
                let imm = if matches!(op, ImmOp::IshlImm | ImmOp::UshrImm | ImmOp::SshrImm | ImmOp::RotlImm | ImmOp::RotrImm)
                    && self.r.random_bool(0.8)
                {
                    self.r.random_range(0..bits(ty) as i64 + 2)
                } else {
                    self.imm(ty)
                };
                Stmt::Imm { op, dst: self.var_of(ty), a: self.var_of(ty), imm }
            }
            48..=53 => {
                let ty = self.any_type();
                let cc = CCS[self.r.random_range(0..CCS.len())];
                let dst = self.var_of(types::I8);
                if self.r.random_bool(0.3) {
                    let imm = self.imm(ty);
                    Stmt::IcmpImm { cc, dst, a: self.var_of(ty), imm }
                } else {
                    Stmt::Icmp { cc, dst, a: self.var_of(ty), b: self.var_of(ty) }
                }
            }
            54..=58 => {
                let ty = self.any_type();
                let c = self.any_var();
                if self.r.random_bool(0.2) {
                    Stmt::Bitselect { dst: self.var_of(ty), c: self.var_of(ty), a: self.var_of(ty), b: self.var_of(ty) }
                } else {
                    Stmt::Select { spectre: self.r.random_bool(0.2), dst: self.var_of(ty), c, a: self.var_of(ty), b: self.var_of(ty) }
                }
            }
            59..=64 => {
                let a = self.any_var();
                let from = self.vars[a];
                let to = self.any_type();
                let op = if self.r.random_bool(0.25) {
                    ConvOp::Bmask
                } else if to.bits() > from.bits() {
                    if self.r.random_bool(0.5) {
                        ConvOp::Uextend
                    } else {
                        ConvOp::Sextend
                    }
                } else if to.bits() < from.bits() {
                    ConvOp::Ireduce
                } else {
                    ConvOp::Bmask
                };
                Stmt::Conv { op, dst: self.var_of(to), a }
            }
            65..=69 => {
                let ty = self.any_type();
                let flag = self.var_of(types::I8);
                if self.r.random_bool(0.6) {
                    let op = OvfOp::ALL[self.r.random_range(0..OvfOp::ALL.len())];
                    // umul/smul_overflow have no i128 form in CLIF.
                    let op =
                        if ty == types::I128 && matches!(op, OvfOp::UmulOverflow | OvfOp::SmulOverflow) { OvfOp::UaddOverflow } else { op };
                    Stmt::Ovf { op, dst: self.var_of(ty), flag, a: self.var_of(ty), b: self.var_of(ty) }
                } else {
                    let op = CarryOp::ALL[self.r.random_range(0..CarryOp::ALL.len())];
                    let cin = self.var_of(types::I8);
                    Stmt::Carry { op, dst: self.var_of(ty), flag, a: self.var_of(ty), b: self.var_of(ty), cin }
                }
            }
            70..=71 => {
                if self.r.random_bool(0.5) {
                    let ty = if self.r.random_bool(0.5) { types::I32 } else { types::I64 };
                    Stmt::AddTrap { dst: self.var_of(ty), a: self.var_of(ty), b: self.var_of(ty) }
                } else {
                    Stmt::TrapIf { nz: self.r.random_bool(0.5), c: self.any_var() }
                }
            }
            72..=79 => {
                self.slot = true;
                let ty = self.any_type();
                // No narrow loads/stores of i128 in CLIF.
                let kind = if ty != types::I8 && ty != types::I128 && self.r.random_bool(0.4) {
                    let nb: Vec<u8> = [8u8, 16, 32].into_iter().filter(|&b| (b as u32) < ty.bits()).collect();
                    MemKind::Narrow { bits: nb[self.r.random_range(0..nb.len())], signed: self.r.random_bool(0.5) }
                } else {
                    MemKind::Full
                };
                let size = match kind {
                    MemKind::Full => ty.bytes(),
                    MemKind::Narrow { bits, .. } => bits as u32 / 8,
                };
                let addr = self.addr(size);
                let big = self.r.random_bool(0.15);
                if self.r.random_bool(0.5) {
                    Stmt::Store { src: self.var_of(ty), addr, kind, big }
                } else {
                    Stmt::Load { dst: self.var_of(ty), addr, kind, big }
                }
            }
            80..=84 if !self.callees.is_empty() => {
                let (callee, ps, rs) = self.callees[self.r.random_range(0..self.callees.len())].clone();
                let args = ps.iter().map(|&t| self.var_of(t)).collect();
                let rets = rs.iter().map(|&t| self.var_of(t)).collect();
                Stmt::Call { callee, args, rets, indirect: self.r.random_bool(0.3) }
            }
            85..=90 if control => {
                let c = self.any_var();
                let mut then = self.block(depth + 1);
                if self.r.random_bool(0.1) {
                    // A branch that always traps.
                    then.push(Stmt::Trap);
                }
                Stmt::If { c, then, els: self.block(depth + 1) }
            }
            91..=95 if control => {
                // Bound the product of nested trip counts through the depth.
                let trips = self.r.random_range(1..=self.lim.max_trips);
                Stmt::Loop { trips, body: self.block(depth + 1) }
            }
            96..=99 if control => {
                let n = self.r.random_range(1..=4usize);
                let idx = self.var_of(types::I32);
                if self.r.random_bool(0.7) {
                    // Mostly in range.
                    out.push(Stmt::Imm { op: ImmOp::BandImm, dst: idx, a: idx, imm: 3 });
                }
                let cases = (0..n).map(|_| self.block(depth + 1)).collect();
                Stmt::Switch { idx, cases, default: self.block(depth + 1) }
            }
            _ => {
                let ty = self.any_type();
                Stmt::Bin { op: BinOp::Iadd, dst: self.var_of(ty), a: self.var_of(ty), b: self.var_of(ty) }
            }
        };
        out.push(s);
    }
}

/// The scalar variables of `vars`, in order.
fn scalars(vars: &[Type]) -> Vec<Var> {
    (0..vars.len()).filter(|&v| !vars[v].is_vector()).collect()
}

/// A random program: its scalar statements from `r`, its vector variables
/// and statements (when `lim.vectors`) from `rv`.
pub fn generate(r: &mut SmallRng, rv: &mut SmallRng, lim: &Limits) -> Program {
    let nf = r.random_range(1..=lim.max_funcs);
    // Build from the last function (calls nobody) to the first.
    let mut funcs: Vec<Option<Func>> = vec![None; nf];
    let mut sigs: Vec<(usize, Vec<Type>, Vec<Type>)> = Vec::new();
    for k in (0..nf).rev() {
        // (The function run takes what `Gpu::call` passes in registers; a
        // called function in ten has more parameters than the registers
        // hold, the rest passed on the stack.)
        let nparams = if k == 0 {
            r.random_range(0..=ursa_isel::abi::LOW_REG_ARGS.min(5))
        } else if r.random_bool(0.1) {
            r.random_range(ursa_isel::abi::MAX_REG_ARGS - 2..=ursa_isel::abi::MAX_REG_ARGS + 8)
        } else {
            r.random_range(0..=10)
        };
        // The entry function's parameters come from the host as 64-bit
        // patterns: no i128 among them.
        let ntypes = if k == 0 { 4 } else { TYPES.len() };
        let mut vars: Vec<Type> = (0..nparams).map(|_| TYPES[r.random_range(0..ntypes)]).collect();
        // Integer vector parameters of a called function.
        if lim.vectors && k > 0 {
            for _ in 0..rv.random_range(0..=2usize) {
                let passable: Vec<Type> = VTYPES.into_iter().filter(|&t| passable(t)).collect();
                vars.push(passable[rv.random_range(0..passable.len())]);
            }
        }
        let nparams = vars.len();
        // At least one local of every type, plus a few more.
        for t in TYPES {
            vars.push(t);
        }
        vars.push(types::I64);
        // One function in ten has many variables, all live to its end
        // (register pressure: spills and reloads).
        let wide = r.random_bool(0.1);
        let extra = if wide { r.random_range(40..100) } else { r.random_range(0..5) };
        for _ in 0..extra {
            vars.push(TYPES[r.random_range(0..TYPES.len())]);
        }
        let mut inits: Vec<u128> = vars[nparams..].iter().map(|&t| edge_value(r, t)).collect();
        let nscalar = vars.len();
        if lim.vectors {
            // A vector of every type, and a few more.
            let n = VTYPES.len() + rv.random_range(0..4usize);
            for j in 0..n {
                let t = if j < VTYPES.len() { VTYPES[j] } else { VTYPES[rv.random_range(0..VTYPES.len())] };
                vars.push(t);
                inits.push(vector_value(rv, t));
            }
        }
        let nrets = r.random_range(1..=3usize);
        let stmts = r.random_range(1..=lim.max_stmts);
        let mut g = FuncGen { r, rv: &mut *rv, lim: *lim, vars: vars.clone(), callees: &sigs, stmts_left: stmts, slot: false };
        let mut body = Vec::new();
        if wide {
            // Mix every variable with another one (and so, mostly, with the
            // parameters) before the body.
            for v in nparams..nscalar {
                let ops = [BinOp::Iadd, BinOp::Bxor, BinOp::Imul, BinOp::Isub];
                let op = ops[g.r.random_range(0..ops.len())];
                let b = g.var_of(vars[v]);
                body.push(Stmt::Bin { op, dst: v, a: v, b });
            }
        }
        while g.stmts_left > 0 {
            body.extend(g.block(0));
        }
        let sv = scalars(&vars);
        let mut rets: Vec<Var> = (0..nrets).map(|_| sv[g.r.random_range(0..sv.len())]).collect();
        if lim.vectors && g.rv.random_bool(0.6) {
            let c: Vec<Var> = (0..vars.len()).filter(|&v| passable(vars[v]) && (k > 0 || vars[v].bits() == 128)).collect();
            let v = c[g.rv.random_range(0..c.len())];
            if k > 0 {
                rets.push(v);
            } else {
                // The function run returns scalars only (the runner reads at
                // most 8 result slots): a vector's bits as an i128.
                let d = (0..vars.len()).find(|&d| vars[d] == types::I128).expect("an i128 variable");
                body.push(Stmt::Vector(VStmt::Op { op: Opcode::Bitcast, dst: d, args: vec![v] }));
                rets.push(d);
            }
        }
        if wide {
            // Fold every variable into one i64 returned, through another i64.
            let i64s: Vec<Var> = (0..vars.len()).filter(|&v| vars[v] == types::I64).collect();
            let (acc, tmp) = (i64s[0], i64s[i64s.len() - 1]);
            for v in 0..vars.len() {
                if v == acc || v == tmp || vars[v].is_vector() {
                    continue;
                }
                let b = if vars[v] == types::I64 {
                    v
                } else {
                    let op = if vars[v] == types::I128 { ConvOp::Ireduce } else { ConvOp::Uextend };
                    body.push(Stmt::Conv { op, dst: tmp, a: v });
                    tmp
                };
                body.push(Stmt::Bin { op: BinOp::Iadd, dst: acc, a: acc, b });
            }
            rets[0] = acc;
        }
        let slot = g.slot;
        let f = Func { vars, nparams, inits, slot, body, rets };
        sigs.push((k, f.params().to_vec(), f.returns()));
        funcs[k] = Some(f);
    }
    Program { funcs: funcs.into_iter().map(|f| f.unwrap()).collect() }
}

/// One straight-line statement over variables of `vars` (which holds every
/// type of [`TYPES`]), appended to `out` with what it needs before it: no
/// control flow, memory access, call or trap, and divisions whose divisor is
/// made non-zero (and, for `sdiv`, non-negative) first, so it never traps.
/// The kernel generator's scalar statements.
pub fn straight_stmt(r: &mut SmallRng, vars: &[Type], out: &mut Vec<Stmt>) {
    let lim = Limits { max_depth: 0, vectors: false, ..Limits::default() };
    let mut unused = SmallRng::seed_from_u64(0);
    let mut g = FuncGen { r, rv: &mut unused, lim, vars: vars.to_vec(), callees: &[], stmts_left: 0, slot: false };
    loop {
        let mut tmp = Vec::new();
        g.stmt(0, &mut tmp);
        let Some(s) = tmp.pop() else { continue };
        match s {
            Stmt::AddTrap { .. } | Stmt::TrapIf { .. } | Stmt::Trap | Stmt::Load { .. } | Stmt::Store { .. } => continue,
            Stmt::Bin { op, b, .. } if op.is_div() => {
                if op == BinOp::Sdiv {
                    out.push(Stmt::Imm { op: ImmOp::UshrImm, dst: b, a: b, imm: 1 });
                }
                out.push(Stmt::Imm { op: ImmOp::BorImm, dst: b, a: b, imm: 1 });
                out.push(s);
            }
            s => out.push(s),
        }
        return;
    }
}
