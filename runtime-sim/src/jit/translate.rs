//! Translation of a region (jit/region.rs) into one Cranelift function
//! `fn(*mut State) -> u64` that runs the lane until it leaves the region and
//! returns the PC the interpreter goes on at.
//!
//! The register file stays in memory (the lane's column of the warp's
//! register file); within a basic block, values read or written are kept in
//! SSA values (a write-through cache), so a chain of dependent instructions
//! does not go through memory. The cache is dropped where control merges
//! and after a call into the interpreter's semantics (which may write any
//! register). Steps, the issue clock and its scoreboards, and the count of
//! guard-false issues live in SSA variables and are stored on the way out.

use std::collections::HashMap;

use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{types, AbiParam, Block, BlockArg, Function, InstBuilder, MemFlagsData, Signature, Value};
use cranelift_codegen::isa::CallConv;
use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext, Variable};

use super::region::{pc_of, Class, Region};
use super::state::State;
use crate::ops::*;
use crate::program::{Exec, Program};
use crate::regs::{DUMP_ROW, LANES, PT, P_DUMP, UR_ZERO, ZERO_ROW};

/// Bytes between a lane's views of two consecutive convergence barriers
/// (`Warp::b` is barrier-major: `b[k][lane]`).
const VIEW_STRIDE: i32 = 4 * LANES as i32;
use crate::timing::SCOREBOARDS;
use std::mem::offset_of;

const I32: types::Type = types::I32;
const I64: types::Type = types::I64;

/// A register-file location the block cache knows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Key {
    R(u16),
    U(u8),
    /// A lane-predicate word (the warp's mask of P<i>).
    P(u8),
    Up(u8),
}

/// What a call into the interpreter needs: its signature and address.
struct Helper {
    sig: cranelift_codegen::ir::SigRef,
    addr: i64,
}

struct Tx<'a, 'b> {
    b: FunctionBuilder<'b>,
    prog: &'a Program,
    region: &'a Region,
    st: Value,
    rbase: Value,
    pbase: Value,
    urbase: Value,
    upbase: Value,
    lane: Value,
    limit: Value,
    steps: Variable,
    skipped: Variable,
    next: Variable,
    sb: [Variable; SCOREBOARDS],
    /// Scoreboards some instruction of the region sets (a mask).
    set_sb: u8,
    /// The latest entry value of each set of scoreboards the region does
    /// not set, by mask.
    fixed_wait: HashMap<u8, Value>,
    /// The per-run block counters.
    counts: Value,
    exit: Block,
    blocks: HashMap<usize, Block>,
    cache: HashMap<Key, Value>,
    /// The cache where the one way into a block leaves, by block start.
    inherit: HashMap<usize, HashMap<Key, Value>>,
    /// Keys written since the last snapshot, and whether a helper ran.
    written: Vec<Key>,
    clobbered: bool,
    helper: Helper,
    flags: MemFlagsData,
}

/// An operand of the LOP3 expression: a known constant or a value.
#[derive(Clone, Copy)]
enum Bits {
    K(u32),
    V(Value),
}

/// Builds the function of `region`. `first_block` is the global number of
/// its first block (for the per-run block counters).
#[allow(clippy::too_many_arguments)]
pub(crate) fn build(
    func: &mut Function,
    target: cranelift_codegen::isa::TargetFrontendConfig,
    prog: &Program,
    region: &Region,
    entry: usize,
    first_block: usize,
    helper_addr: usize,
) {
    let mut fbc = FunctionBuilderContext::new();
    let mut b = FunctionBuilder::new(func, &mut fbc);
    let flags = MemFlagsData::trusted();
    let start = b.create_block();
    b.append_block_params_for_function_params(start);
    b.switch_to_block(start);
    let st = b.block_params(start)[0];
    let ld = |b: &mut FunctionBuilder, off: usize| b.ins().load(I64, flags, st, off as i32);
    let rbase = ld(&mut b, offset_of!(State, r));
    let pbase = ld(&mut b, offset_of!(State, p));
    let urbase = ld(&mut b, offset_of!(State, ur));
    let upbase = ld(&mut b, offset_of!(State, up));
    let lane64 = ld(&mut b, offset_of!(State, lane));
    let lane = b.ins().ireduce(I32, lane64);
    let limit = ld(&mut b, offset_of!(State, limit));
    let var = |b: &mut FunctionBuilder, off: usize| {
        let v = b.declare_var(I64);
        let x = ld(b, off);
        b.def_var(v, x);
        v
    };
    let steps = var(&mut b, offset_of!(State, steps));
    let skipped = var(&mut b, offset_of!(State, skipped));
    let next = var(&mut b, offset_of!(State, next_issue));
    let sb: [Variable; SCOREBOARDS] = std::array::from_fn(|s| var(&mut b, offset_of!(State, sb) + 8 * s));
    // Scoreboards no instruction of the region sets keep their entry
    // values: the wait on a set of them is one maximum, made here.
    let insts = || region.blocks.iter().flat_map(|k| k.start..k.start + k.len).map(|i| &prog.code[i]);
    let set_sb = insts().filter(|e| e.variable && (e.ctrl.wsb as usize) < SCOREBOARDS).fold(0u8, |m, e| m | 1 << e.ctrl.wsb);
    let mut fixed_wait = HashMap::new();
    for e in insts() {
        let req = e.ctrl.req & !set_sb & ((1 << SCOREBOARDS) - 1);
        if req != 0 && !fixed_wait.contains_key(&req) {
            let mut m: Option<Value> = None;
            for (s, &v) in sb.iter().enumerate() {
                if req >> s & 1 != 0 {
                    let x = b.use_var(v);
                    m = Some(match m {
                        Some(m) => b.ins().umax(m, x),
                        None => x,
                    });
                }
            }
            fixed_wait.insert(req, m.expect("a scoreboard is waited on"));
        }
    }
    let counts = ld(&mut b, offset_of!(State, counts));
    let exit = b.create_block();
    b.append_block_param(exit, I64);
    let mut blocks = HashMap::new();
    for blk in &region.blocks {
        blocks.insert(blk.start, b.create_block());
    }
    let mut sig = Signature::new(CallConv::SystemV);
    sig.params.extend([AbiParam::new(I64), AbiParam::new(I64), AbiParam::new(I64)]);
    sig.returns.push(AbiParam::new(I32));
    let sig = b.import_signature(sig);
    let mut tx = Tx {
        b,
        prog,
        region,
        st,
        rbase,
        pbase,
        urbase,
        upbase,
        lane,
        limit,
        steps,
        skipped,
        next,
        sb,
        set_sb,
        fixed_wait,
        counts,
        exit,
        blocks,
        cache: HashMap::new(),
        inherit: HashMap::new(),
        written: Vec::new(),
        clobbered: false,
        helper: Helper { sig, addr: helper_addr as i64 },
        flags,
    };
    tx.goto(entry);
    for (k, blk) in region.blocks.iter().enumerate() {
        tx.block(blk.start, blk.len, first_block + k);
    }
    // The way out: counters back into the state, the PC to go on at.
    tx.b.switch_to_block(exit);
    let pc = tx.b.block_params(exit)[0];
    let put = |tx: &mut Tx, v: Variable, off: usize| {
        let x = tx.b.use_var(v);
        tx.b.ins().store(flags, x, st, off as i32);
    };
    put(&mut tx, steps, offset_of!(State, steps));
    put(&mut tx, skipped, offset_of!(State, skipped));
    put(&mut tx, next, offset_of!(State, next_issue));
    for s in 0..SCOREBOARDS {
        put(&mut tx, sb[s], offset_of!(State, sb) + 8 * s);
    }
    tx.b.ins().return_(&[pc]);
    tx.b.seal_all_blocks();
    tx.b.finalize(target);
}

impl Tx<'_, '_> {
    fn iconst32(&mut self, v: u32) -> Value {
        self.b.ins().iconst(I32, v as i32 as i64)
    }

    fn iconst64(&mut self, v: u64) -> Value {
        self.b.ins().iconst(I64, v as i64)
    }

    /// Leaves the region: the interpreter goes on at `pc`.
    fn leave(&mut self, pc: Value) {
        self.b.ins().jump(self.exit, &[BlockArg::Value(pc)]);
    }

    fn leave_at(&mut self, pc: u64) {
        let v = self.iconst64(pc);
        self.leave(v);
    }

    /// Control goes on at instruction `idx`: its block, or out of the region.
    fn goto(&mut self, idx: usize) {
        match self.blocks.get(&idx) {
            Some(&blk) => {
                if self.region.one_way_in.contains(&idx) {
                    self.inherit.insert(idx, self.cache.clone());
                }
                self.b.ins().jump(blk, &[]);
            }
            None => self.leave_at(pc_of(idx)),
        }
    }

    // ---- the register file ----

    fn key_addr(&mut self, k: Key) -> (Value, i32, types::Type) {
        match k {
            Key::R(r) => (self.rbase, r as i32 * 128, I32),
            Key::U(u) => (self.urbase, u as i32 * 4, I32),
            Key::P(i) => (self.pbase, i as i32 * 4, I32),
            Key::Up(i) => (self.upbase, i as i32 * 4, I32),
        }
    }

    fn get(&mut self, k: Key) -> Value {
        if let Some(&v) = self.cache.get(&k) {
            return v;
        }
        let (base, off, ty) = self.key_addr(k);
        let v = self.b.ins().load(ty, self.flags, base, off);
        self.cache.insert(k, v);
        v
    }

    fn set(&mut self, k: Key, v: Value) {
        let (base, off, _) = self.key_addr(k);
        self.b.ins().store(self.flags, v, base, off);
        self.cache.insert(k, v);
        self.written.push(k);
    }

    fn src(&mut self, s: Src) -> Value {
        match s {
            Src::R(ZERO_ROW) | Src::U(UR_ZERO) => self.iconst32(0),
            Src::R(r) => self.get(Key::R(r)),
            Src::U(u) => self.get(Key::U(u)),
            Src::Imm(v) => self.iconst32(v),
            Src::C(_) => unreachable!("constant operands are not translated"),
        }
    }

    fn src64(&mut self, s: Src64) -> Value {
        let (lo, hi) = match s {
            Src64::R(lo, hi) => (self.src(Src::R(lo)), self.src(Src::R(hi))),
            Src64::U(lo, hi) => (self.src(Src::U(lo)), self.src(Src::U(hi))),
            Src64::Imm(v) => return self.iconst64(v),
            Src64::C(_) | Src64::C32(_) => unreachable!("constant operands are not translated"),
        };
        self.join(lo, hi)
    }

    fn join(&mut self, lo: Value, hi: Value) -> Value {
        let lo = self.b.ins().uextend(I64, lo);
        let hi = self.b.ins().uextend(I64, hi);
        let hi = self.b.ins().ishl_imm_s(hi, 32);
        self.b.ins().bor(lo, hi)
    }

    fn put(&mut self, d: Dst, v: Value) {
        match d {
            Dst::R(r) if r >= DUMP_ROW => {}
            Dst::R(r) => self.set(Key::R(r), v),
            Dst::U(u) if u > UR_ZERO => {}
            Dst::U(u) => self.set(Key::U(u), v),
        }
    }

    fn put64(&mut self, d: Dst64, v: Value) {
        let lo = self.b.ins().ireduce(I32, v);
        let hi = self.b.ins().ushr_imm_s(v, 32);
        let hi = self.b.ins().ireduce(I32, hi);
        match d {
            Dst64::R(l, h) => {
                self.put(Dst::R(l), lo);
                self.put(Dst::R(h), hi);
            }
            Dst64::U(l, h) => {
                self.put(Dst::U(l), lo);
                self.put(Dst::U(h), hi);
            }
        }
    }

    /// A predicate input as 0 or 1 (i32).
    fn pin(&mut self, p: PIn) -> Value {
        let v = if p.idx == PT {
            self.iconst32(1)
        } else if p.uniform {
            let w = self.get(Key::Up(p.idx));
            self.b.ins().band_imm_s(w, 1)
        } else {
            let w = self.get(Key::P(p.idx));
            let s = self.b.ins().ushr(w, self.lane);
            self.b.ins().band_imm_s(s, 1)
        };
        if p.not {
            self.b.ins().bxor_imm_s(v, 1)
        } else {
            v
        }
    }

    /// Writes a predicate from a 0/1 value.
    fn pout(&mut self, d: PDst, v: Value) {
        if d.idx >= P_DUMP {
            return;
        }
        if d.uniform {
            let v = self.b.ins().band_imm_s(v, 1);
            self.set(Key::Up(d.idx), v);
        } else {
            let w = self.get(Key::P(d.idx));
            let one = self.iconst32(1);
            let bit = self.b.ins().ishl(one, self.lane);
            let clear = self.b.ins().band_not(w, bit);
            let v = self.b.ins().ishl(v, self.lane);
            let w = self.b.ins().bor(clear, v);
            self.set(Key::P(d.idx), w);
        }
    }

    // ---- blocks and instructions ----

    /// Translates a block. The cache starts empty, except in a block with
    /// one way in (`Region::one_way_in`) translated after that way: then the
    /// values known there hold (they were made on the only path here).
    fn block(&mut self, start: usize, len: usize, gid: usize) {
        let blk = self.blocks[&start];
        self.b.switch_to_block(blk);
        self.cache = self.inherit.remove(&start).unwrap_or_default();
        if len == 0 {
            // Its first instruction is left to the interpreter.
            self.leave_at(pc_of(start));
            return;
        }
        {
            // Step limit, counted per block: a block that would pass it is
            // left to the interpreter, which stops at the exact instruction.
            let steps = self.b.use_var(self.steps);
            let after = self.b.ins().iadd_imm_s(steps, len as i64);
            let over = self.b.ins().icmp(IntCC::UnsignedGreaterThan, after, self.limit);
            let go = self.b.create_block();
            let out = self.b.create_block();
            self.b.ins().brif(over, out, &[], go, &[]);
            self.b.switch_to_block(out);
            self.leave_at(pc_of(start));
            self.b.switch_to_block(go);
            self.b.def_var(self.steps, after);
            let n = self.b.ins().load(I64, self.flags, self.counts, 8 * gid as i32);
            let n = self.b.ins().iadd_imm_s(n, 1);
            self.b.ins().store(self.flags, n, self.counts, 8 * gid as i32);
        }
        for idx in start..start + len {
            let last = idx + 1 == start + len;
            if self.inst(idx) {
                debug_assert!(last, "a block ends at its control instruction");
                return;
            }
        }
        self.goto(start + len);
    }

    /// The issue-clock model of `WarpClock::issue`; returns the issue cycle.
    fn clock(&mut self, e: &Exec) -> Value {
        let mut t = self.b.use_var(self.next);
        let fixed = e.ctrl.req & !self.set_sb & ((1 << SCOREBOARDS) - 1);
        if fixed != 0 {
            t = self.b.ins().umax(t, self.fixed_wait[&fixed]);
        }
        for s in 0..SCOREBOARDS {
            if (e.ctrl.req & self.set_sb) >> s & 1 != 0 {
                let r = self.b.use_var(self.sb[s]);
                t = self.b.ins().umax(t, r);
            }
        }
        if e.variable && (e.ctrl.wsb as usize) < SCOREBOARDS {
            let s = e.ctrl.wsb as usize;
            let r = self.b.use_var(self.sb[s]);
            let done = self.b.ins().iadd_imm_s(t, e.lat as i64);
            let r = self.b.ins().umax(r, done);
            self.b.def_var(self.sb[s], r);
        }
        let n = self.b.ins().iadd_imm_s(t, e.ctrl.stall.max(1) as i64);
        self.b.def_var(self.next, n);
        t
    }

    /// Translates instruction `idx`; true if it ended the block.
    fn inst(&mut self, idx: usize) -> bool {
        let prog = self.prog;
        let e = &prog.code[idx];
        let pc = pc_of(idx);
        let t = self.clock(e);
        let class = super::region::classify(prog, idx);
        // The guard: a false one counts as an issue without a lane.
        let guarded = e.guard != PIn::TRUE;
        let (body, after) = if guarded {
            let g = self.pin(e.guard);
            let miss = self.b.ins().bxor_imm_s(g, 1);
            let miss = self.b.ins().uextend(I64, miss);
            let s = self.b.use_var(self.skipped);
            let s = self.b.ins().iadd(s, miss);
            self.b.def_var(self.skipped, s);
            let body = self.b.create_block();
            let after = self.b.create_block();
            self.b.ins().brif(g, body, &[], after, &[]);
            self.b.switch_to_block(body);
            (Some(body), Some(after))
        } else {
            (None, None)
        };
        let _ = body;
        let saved = guarded.then(|| self.cache.clone());
        self.written.clear();
        self.clobbered = false;
        let ends = match class {
            Class::Bra(target) => {
                self.goto(target);
                true
            }
            Class::Call(target) => {
                let Op::Call { d, .. } = e.op else { unreachable!() };
                let link = self.iconst64(pc + 16);
                self.put64(d, link);
                self.goto(target);
                true
            }
            Class::Ret => {
                let Op::Ret { a } = e.op else { unreachable!() };
                self.ret(a);
                true
            }
            Class::Native => {
                self.native(&e.op, pc, idx, t);
                false
            }
            Class::Helper => {
                self.call_helper(idx, t, pc);
                false
            }
            Class::Leave => unreachable!("a block stops before an instruction it leaves"),
        };
        if let Some(after) = after {
            if !ends {
                self.b.ins().jump(after, &[]);
            }
            self.b.switch_to_block(after);
            self.merge(saved.expect("saved with the guard"));
            if ends {
                // A guard-false control instruction falls through.
                self.goto(idx + 1);
            }
            return ends;
        }
        ends
    }

    /// After a conditional part: the values known before it, less what it wrote.
    fn merge(&mut self, saved: HashMap<Key, Value>) {
        if self.clobbered {
            self.cache.clear();
        } else {
            self.cache = saved;
            for k in std::mem::take(&mut self.written) {
                self.cache.remove(&k);
            }
        }
        self.clobbered = false;
    }

    /// RET: to a return point of the region if the link is one, else out.
    fn ret(&mut self, a: Src64) {
        let target = match a {
            Src64::R(..) | Src64::U(..) | Src64::Imm(_) => self.src64(a),
            Src64::C(_) | Src64::C32(_) => unreachable!("classified Leave"),
        };
        for &rp in &self.region.return_points.clone() {
            let hit = self.b.ins().icmp_imm_s(IntCC::Equal, target, pc_of(rp) as i64);
            let no = self.b.create_block();
            let blk = self.blocks[&rp];
            self.b.ins().brif(hit, blk, &[], no, &[]);
            self.b.switch_to_block(no);
        }
        self.leave(target);
    }

    /// Runs instruction `idx` through the interpreter's semantics in place.
    fn call_helper(&mut self, idx: usize, t: Value, pc: u64) {
        let f = self.iconst64(self.helper.addr as u64);
        let i = self.iconst64(idx as u64);
        let call = self.b.ins().call_indirect(self.helper.sig, f, &[self.st, i, t]);
        let status = self.b.inst_results(call)[0];
        self.cache.clear();
        self.clobbered = true;
        let ok = self.b.create_block();
        let fault = self.b.create_block();
        self.b.ins().brif(status, fault, &[], ok, &[]);
        self.b.switch_to_block(fault);
        self.leave_at(pc);
        self.b.switch_to_block(ok);
    }

    /// `addend` of alu_int.rs: what a 32-bit operand adds to a wide sum (i64).
    fn addend(&mut self, x: Value, neg: bool, x_mode: bool) -> Value {
        match (neg, x_mode) {
            (false, _) => self.b.ins().uextend(I64, x),
            (true, false) => {
                let x = self.b.ins().uextend(I64, x);
                let two32 = self.iconst64(1 << 32);
                self.b.ins().isub(two32, x)
            }
            (true, true) => {
                let n = self.b.ins().bnot(x);
                self.b.ins().uextend(I64, n)
            }
        }
    }

    /// A wide sum's low word and carry (sum >= 2^32) as 0/1.
    fn split(&mut self, sum: Value) -> (Value, Value) {
        let lo = self.b.ins().ireduce(I32, sum);
        let hi = self.b.ins().ushr_imm_s(sum, 32);
        let c = self.b.ins().icmp_imm_s(IntCC::NotEqual, hi, 0);
        let c = self.b.ins().uextend(I32, c);
        (lo, c)
    }

    fn carry_in(&mut self, sum: Value, x: bool, pp: PIn) -> Value {
        if !x {
            return sum;
        }
        let c = self.pin(pp);
        let c = self.b.ins().uextend(I64, c);
        self.b.ins().iadd(sum, c)
    }

    fn mul_wide(&mut self, a: Value, b: Value, signed: bool) -> Value {
        let (a, b) = if signed {
            (self.b.ins().sextend(I64, a), self.b.ins().sextend(I64, b))
        } else {
            (self.b.ins().uextend(I64, a), self.b.ins().uextend(I64, b))
        };
        self.b.ins().imul(a, b)
    }

    fn neg_if(&mut self, v: Value, neg: bool) -> Value {
        if neg {
            self.b.ins().ineg(v)
        } else {
            v
        }
    }

    fn cc(cmp: Cmp, signed: bool) -> IntCC {
        match (cmp, signed) {
            (Cmp::Eq, _) => IntCC::Equal,
            (Cmp::Ne, _) => IntCC::NotEqual,
            (Cmp::Lt, true) => IntCC::SignedLessThan,
            (Cmp::Le, true) => IntCC::SignedLessThanOrEqual,
            (Cmp::Gt, true) => IntCC::SignedGreaterThan,
            (Cmp::Ge, true) => IntCC::SignedGreaterThanOrEqual,
            (Cmp::Lt, false) => IntCC::UnsignedLessThan,
            (Cmp::Le, false) => IntCC::UnsignedLessThanOrEqual,
            (Cmp::Gt, false) => IntCC::UnsignedGreaterThan,
            (Cmp::Ge, false) => IntCC::UnsignedGreaterThanOrEqual,
        }
    }

    fn bool_op(&mut self, op: BoolOp, a: Value, b: Value) -> Value {
        match op {
            BoolOp::And => self.b.ins().band(a, b),
            BoolOp::Or => self.b.ins().bor(a, b),
            BoolOp::Xor => self.b.ins().bxor(a, b),
        }
    }

    /// `sel(x, p, q)` of `alu_int::lop3`: p where x is 1, q where it is 0,
    /// folded when p and q are known.
    fn sel(&mut self, x: Bits, p: Bits, q: Bits) -> Bits {
        match (p, q) {
            (Bits::K(p), Bits::K(q)) if p == q => Bits::K(q),
            (Bits::K(u32::MAX), Bits::K(0)) => x,
            (Bits::K(0), Bits::K(u32::MAX)) => match x {
                Bits::K(k) => Bits::K(!k),
                Bits::V(v) => Bits::V(self.b.ins().bnot(v)),
            },
            _ => {
                let (x, p, q) = (self.bits(x), self.bits(p), self.bits(q));
                let pq = self.b.ins().bxor(p, q);
                let m = self.b.ins().band(x, pq);
                Bits::V(self.b.ins().bxor(q, m))
            }
        }
    }

    fn bits(&mut self, b: Bits) -> Value {
        match b {
            Bits::K(k) => self.iconst32(k),
            Bits::V(v) => v,
        }
    }

    fn lop3(&mut self, a: Value, b: Value, c: Value, lut: u8) -> Value {
        let bit = |i: u32| Bits::K(0u32.wrapping_sub((lut as u32 >> i) & 1));
        let (a, b, c) = (Bits::V(a), Bits::V(b), Bits::V(c));
        let t00 = self.sel(c, bit(1), bit(0));
        let t01 = self.sel(c, bit(3), bit(2));
        let t10 = self.sel(c, bit(5), bit(4));
        let t11 = self.sel(c, bit(7), bit(6));
        let hi = self.sel(b, t11, t10);
        let lo = self.sel(b, t01, t00);
        let r = self.sel(a, hi, lo);
        self.bits(r)
    }

    /// SHF (alu_int::shf) on the 64-bit `{c, a}`.
    #[allow(clippy::too_many_arguments)]
    fn shf(&mut self, a: Value, b: Value, c: Value, right: bool, hi: bool, wrap: bool, signed: bool, wide: bool) -> Value {
        let ub: i64 = if wide { 64 } else { 32 };
        let n = if wrap {
            self.b.ins().band_imm_s(b, ub - 1)
        } else {
            let u = self.iconst32(ub as u32);
            self.b.ins().umin(b, u)
        };
        let n = self.b.ins().uextend(I64, n);
        let t = self.join(a, c);
        let zero = self.iconst64(0);
        let r = if right && signed {
            let m = self.iconst64(63);
            let n = self.b.ins().umin(n, m);
            self.b.ins().sshr(t, n)
        } else {
            let s = if right { self.b.ins().ushr(t, n) } else { self.b.ins().ishl(t, n) };
            let big = self.b.ins().icmp_imm_s(IntCC::UnsignedGreaterThanOrEqual, n, 64);
            self.b.ins().select(big, zero, s)
        };
        let r = if hi { self.b.ins().ushr_imm_s(r, 32) } else { r };
        self.b.ins().ireduce(I32, r)
    }

    /// The host code of a `Native` op (semantics of alu_int.rs and mem_ops.rs).
    fn native(&mut self, op: &Op, pc: u64, idx: usize, t: Value) {
        match *op {
            Op::Nop => {}
            Op::Iadd { d, a, b, neg_a, neg_b, x, pp, pu } => {
                let (va, vb) = (self.src(a), self.src(b));
                let (xa, xb) = (self.addend(va, neg_a, x), self.addend(vb, neg_b, x));
                let s = self.b.ins().iadd(xa, xb);
                let s = self.carry_in(s, x, pp);
                let (r, c) = self.split(s);
                self.put(d, r);
                self.pout(pu, c);
            }
            Op::Imad { d, a, b, c, neg_c, hi, x, signed, pp, pu } => {
                let (va, vb, vc) = (self.src(a), self.src(b), self.src(c));
                let p = self.mul_wide(va, vb, signed);
                let p = if hi { self.b.ins().ushr_imm_s(p, 32) } else { self.b.ins().band_imm_s(p, 0xffff_ffff) };
                let z = self.addend(vc, neg_c, x);
                let s = self.b.ins().iadd(p, z);
                let s = self.carry_in(s, x, pp);
                let (r, cy) = self.split(s);
                self.put(d, r);
                self.pout(pu, cy);
            }
            Op::ImadWide { d, a, b, c, neg_c, x, signed, pp, pu } => {
                let (va, vb, vc) = (self.src(a), self.src(b), self.src64(c));
                let p = self.mul_wide(va, vb, signed);
                // addend64 as (carry word, low word): -0 adds 2^64.
                let (hi_c, lo_c) = match (neg_c, x) {
                    (false, _) => (None, vc),
                    (true, false) => {
                        let z = self.b.ins().icmp_imm_s(IntCC::Equal, vc, 0);
                        (Some(z), self.b.ins().ineg(vc))
                    }
                    (true, true) => (None, self.b.ins().bnot(vc)),
                };
                let s1 = self.b.ins().iadd(p, lo_c);
                let mut carry = self.b.ins().icmp(IntCC::UnsignedLessThan, s1, p);
                if let Some(h) = hi_c {
                    carry = self.b.ins().bor(carry, h);
                }
                let s = if x {
                    let cin = self.pin(pp);
                    let cin = self.b.ins().uextend(I64, cin);
                    let s2 = self.b.ins().iadd(s1, cin);
                    let c2 = self.b.ins().icmp(IntCC::UnsignedLessThan, s2, s1);
                    carry = self.b.ins().bor(carry, c2);
                    s2
                } else {
                    s1
                };
                let carry = self.b.ins().uextend(I32, carry);
                self.put64(d, s);
                self.pout(pu, carry);
            }
            Op::Imul { d, a, b, neg_b, hi, signed } => {
                let (va, vb) = (self.src(a), self.src(b));
                let vb = self.neg_if(vb, neg_b);
                let p = self.mul_wide(va, vb, signed);
                let p = if hi { self.b.ins().ushr_imm_s(p, 32) } else { p };
                let r = self.b.ins().ireduce(I32, p);
                self.put(d, r);
            }
            Op::Lea { d, a, b, neg_a, neg_b, mode: LeaMode::Lo, shift, pu, .. } => {
                let (va, vb) = (self.src(a), self.src(b));
                let va = self.neg_if(va, neg_a);
                let sh = self.b.ins().ishl_imm_s(va, (shift & 31) as i64);
                let sh = self.b.ins().uextend(I64, sh);
                let z = self.addend(vb, neg_b, false);
                let s = self.b.ins().iadd(sh, z);
                let (r, c) = self.split(s);
                self.put(d, r);
                self.pout(pu, c);
            }
            Op::Iabs { d, b, neg_b } => {
                let vb = self.src(b);
                let vb = self.neg_if(vb, neg_b);
                let n = self.b.ins().ineg(vb);
                let lt = self.b.ins().icmp_imm_s(IntCC::SignedLessThan, vb, 0);
                let r = self.b.ins().select(lt, n, vb);
                self.put(d, r);
            }
            Op::Imnmx { d, a, b, neg_a, neg_b, signed, pp } => {
                let (va, vb) = (self.src(a), self.src(b));
                let (x, y) = (self.neg_if(va, neg_a), self.neg_if(vb, neg_b));
                let min = self.pin(pp);
                let cc = if signed { IntCC::SignedLessThan } else { IntCC::UnsignedLessThan };
                let less = self.b.ins().icmp(cc, x, y);
                let less = self.b.ins().uextend(I32, less);
                let pick_a = self.b.ins().icmp(IntCC::Equal, less, min);
                let r = self.b.ins().select(pick_a, x, y);
                self.put(d, r);
            }
            Op::Isetp { a, b, signed, x, cmp, bop, pp, pq, pu, pv } => {
                let (va, vb) = (self.src(a), self.src(b));
                let p = self.pin(pp);
                let c = self.b.ins().icmp(Self::cc(cmp, signed), va, vb);
                let mut tv = self.b.ins().uextend(I32, c);
                if x {
                    let q = self.pin(pq);
                    let eq = self.b.ins().icmp(IntCC::Equal, va, vb);
                    tv = self.b.ins().select(eq, q, tv);
                }
                let u = self.bool_op(bop, tv, p);
                let nt = self.b.ins().bxor_imm_s(tv, 1);
                let v = self.bool_op(bop, nt, p);
                self.pout(pu, u);
                self.pout(pv, v);
            }
            Op::Sel { d, a, b, pp } => {
                let (va, vb) = (self.src(a), self.src(b));
                let p = self.pin(pp);
                let r = self.b.ins().select(p, va, vb);
                self.put(d, r);
            }
            Op::Lop3 { d, a, b, c, lut, pand, pp, pu } => {
                let (va, vb, vc) = (self.src(a), self.src(b), self.src(c));
                let r = self.lop3(va, vb, vc, lut);
                self.put(d, r);
                if pu.idx < P_DUMP {
                    let p = self.pin(pp);
                    let nz = self.b.ins().icmp_imm_s(IntCC::NotEqual, r, 0);
                    let nz = self.b.ins().uextend(I32, nz);
                    let v = if pand { self.b.ins().band(nz, p) } else { self.b.ins().bor(nz, p) };
                    self.pout(pu, v);
                }
            }
            Op::Plop3 { pu, pa, pb, pc, lut } => {
                let (a, b, c) = (self.pin(pa), self.pin(pb), self.pin(pc));
                let r = self.lop3(a, b, c, lut);
                let r = self.b.ins().band_imm_s(r, 1);
                self.pout(pu, r);
            }
            Op::Shf { d, a, b, c, right, hi, wrap, signed, wide } => {
                let (va, vb, vc) = (self.src(a), self.src(b), self.src(c));
                let r = self.shf(va, vb, vc, right, hi, wrap, signed, wide);
                self.put(d, r);
            }
            Op::Mov { d, s } => {
                let v = self.src(s);
                self.put(d, v);
            }
            Op::Mov64 { d, s } => {
                let v = self.src64(s);
                self.put64(d, v);
            }
            Op::Bssy { .. } | Op::Bsync { .. } | Op::Break { .. } | Op::BmovToR { .. } | Op::BmovToB { .. } => {
                self.convergence(op, pc, idx, t)
            }
            Op::Load { space: AddrSpace::Local, d, a, ofs, ty } => self.local(pc, idx, t, a, ofs, ty, Some(d), None),
            Op::Store { space: AddrSpace::Local, s, a, ofs, ty } => self.local(pc, idx, t, a, ofs, ty, None, Some(s)),
            _ => unreachable!("not a native op: {:?}", op),
        }
    }

    /// BSSY, BREAK, BSYNC and BMOV of control.rs for the lane, which is the warp's
    /// only live one (`jit_ready`; the others have exited): no lane waits at
    /// a convergence barrier, so BSSY and BREAK only write the lane's own
    /// view of the barrier (BSSY also its target; the views of exited lanes
    /// that BREAK would also edit are never read again), and a BSYNC whose
    /// view holds no live lane but this one lets it go on (the interpreter
    /// parks it and releases it at once). A BSYNC that would wait for
    /// another lane is left to the interpreter's semantics (`run_one`),
    /// which reports it.
    fn convergence(&mut self, op: &Op, pc: u64, idx: usize, t: Value) {
        let fl = self.flags;
        let warp_b = self.b.ins().load(I64, fl, self.st, offset_of!(State, b) as i32);
        let one = self.iconst32(1);
        let bit = self.b.ins().ishl(one, self.lane);
        match *op {
            Op::Bssy { b, target } => {
                self.b.ins().store(fl, bit, warp_b, VIEW_STRIDE * b as i32);
                let tg = self.b.ins().load(I64, fl, self.st, offset_of!(State, bssy_target) as i32);
                let target = self.iconst64(target);
                self.b.ins().store(fl, target, tg, 8 * b as i32);
            }
            Op::Break { b } => {
                let m = self.b.ins().load(I32, fl, warp_b, VIEW_STRIDE * b as i32);
                let m = self.b.ins().band_not(m, bit);
                self.b.ins().store(fl, m, warp_b, VIEW_STRIDE * b as i32);
            }
            Op::Bsync { b } => {
                let m = self.b.ins().load(I32, fl, warp_b, VIEW_STRIDE * b as i32);
                let exited_at = self.b.ins().load(I64, fl, self.st, offset_of!(State, exited) as i32);
                let exited = self.b.ins().load(I32, fl, exited_at, 0);
                let gone = self.b.ins().bor(exited, bit);
                let others = self.b.ins().band_not(m, gone);
                let wait = self.b.create_block();
                let done = self.b.create_block();
                let saved = self.cache.clone();
                self.b.ins().brif(others, wait, &[], done, &[]);
                self.b.switch_to_block(wait);
                self.call_helper(idx, t, pc);
                self.b.ins().jump(done, &[]);
                self.b.switch_to_block(done);
                // The helper wrote no register it did not fault on.
                self.cache = saved;
                self.clobbered = false;
            }
            // The lane's own view saved (and cleared) or restored: no lane
            // waits, so nothing is released.
            Op::BmovToR { d, b, clear } => {
                let v = self.b.ins().load(I32, fl, warp_b, VIEW_STRIDE * b as i32);
                if clear {
                    let zero = self.iconst32(0);
                    self.b.ins().store(fl, zero, warp_b, VIEW_STRIDE * b as i32);
                }
                self.put(d, v);
            }
            Op::BmovToB { b, s } => {
                let v = self.src(s);
                self.b.ins().store(fl, v, warp_b, VIEW_STRIDE * b as i32);
            }
            _ => unreachable!("not a convergence-barrier op: {:?}", op),
        }
    }

    /// LDL/STL: in host code when aligned, inside the lane's local memory
    /// and that memory exists; otherwise through the interpreter (which
    /// allocates it, or reports the fault).
    #[allow(clippy::too_many_arguments)]
    fn local(&mut self, pc: u64, idx: usize, t: Value, a: Src64, ofs: i32, ty: MemTy, d: Option<[u16; 4]>, s: Option<[u16; 4]>) {
        let base = self.src64(a);
        let base = self.b.ins().ireduce(I32, base);
        let addr = self.b.ins().iadd_imm_s(base, ofs as i64);
        let addr = self.b.ins().uextend(I64, addr);
        let n = ty.bytes() as i64;
        let local = self.b.ins().load(I64, self.flags, self.st, offset_of!(State, local) as i32);
        let size = self.b.ins().load(I64, self.flags, self.st, offset_of!(State, local_size) as i32);
        let misaligned = self.b.ins().band_imm_s(addr, n - 1);
        let end = self.b.ins().iadd_imm_s(addr, n);
        let outside = self.b.ins().icmp(IntCC::UnsignedGreaterThan, end, size);
        let absent = self.b.ins().icmp_imm_s(IntCC::Equal, local, 0);
        let bad = self.b.ins().bor(outside, absent);
        let misaligned = self.b.ins().icmp_imm_s(IntCC::NotEqual, misaligned, 0);
        let bad = self.b.ins().bor(bad, misaligned);
        let fast = self.b.create_block();
        let slow = self.b.create_block();
        let done = self.b.create_block();
        let saved = self.cache.clone();
        self.b.ins().brif(bad, slow, &[], fast, &[]);
        self.b.switch_to_block(fast);
        let p = self.b.ins().iadd(local, addr);
        let fl = self.flags;
        let mut rows: Vec<u16> = Vec::new();
        if let Some(d) = d {
            let words: Vec<Value> = match ty {
                MemTy::U8 => vec![self.b.ins().uload8(I32, fl, p, 0)],
                MemTy::S8 => vec![self.b.ins().sload8(I32, fl, p, 0)],
                MemTy::U16 => vec![self.b.ins().uload16(I32, fl, p, 0)],
                MemTy::S16 => vec![self.b.ins().sload16(I32, fl, p, 0)],
                _ => (0..ty.regs()).map(|k| self.b.ins().load(I32, fl, p, 4 * k as i32)).collect(),
            };
            for (k, w) in words.into_iter().enumerate() {
                self.put(Dst::R(d[k]), w);
                rows.push(d[k]);
            }
        }
        if let Some(s) = s {
            match ty {
                MemTy::U8 | MemTy::S8 => {
                    let v = self.src(Src::R(s[0]));
                    self.b.ins().istore8(fl, v, p, 0);
                }
                MemTy::U16 | MemTy::S16 => {
                    let v = self.src(Src::R(s[0]));
                    self.b.ins().istore16(fl, v, p, 0);
                }
                _ => {
                    for (k, row) in s.iter().enumerate().take(ty.regs()) {
                        let v = self.src(Src::R(*row));
                        self.b.ins().store(fl, v, p, 4 * k as i32);
                    }
                }
            }
        }
        self.b.ins().jump(done, &[]);
        self.b.switch_to_block(slow);
        self.cache = saved.clone();
        self.call_helper(idx, t, pc);
        self.b.ins().jump(done, &[]);
        self.b.switch_to_block(done);
        // Only this instruction ran on either side: what it did not write
        // is as it was before the branch.
        self.cache = saved;
        for r in rows {
            self.cache.remove(&Key::R(r));
        }
        self.clobbered = false;
        self.written.extend(d.iter().flatten().map(|&r| Key::R(r)));
    }
}
