//! Generated kernels to CLIF, through `cranelift-frontend` (the program
//! generator's builder does the straight-line statements).

use std::collections::HashMap;

use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::immediates::Imm64;
use cranelift_codegen::ir::{
    types, AbiParam, AtomicRmwOp, ExtFuncData, ExternalName, FuncRef, Function, GlobalValue, GlobalValueData, InstBuilder, MemFlagsData,
    Signature, StackSlotData, StackSlotKind, Type, UserFuncName, Value,
};
use cranelift_codegen::isa::{CallConv, TargetFrontendConfig};
use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext, Variable};
use target_lexicon::PointerWidth;

use super::ast::*;
use crate::fuzzgen::build::{iconst, B};

/// The kernel's name.
pub const KERNEL_NAME: &str = "kz";

/// `%kz(in: i64, out: i64, atom: i64, n: i32)`.
pub fn signature() -> Signature {
    let mut s = Signature::new(CallConv::Fast);
    s.params.extend([types::I64, types::I64, types::I64, types::I32].map(AbiParam::new));
    s
}

/// The `; ursa.shared` directive of the kernel's shared variable.
pub fn shared_directive() -> String {
    format!("; ursa.shared %{} {} align 8", SHARED_NAME, SHARED_BYTES)
}

fn aligned() -> MemFlagsData {
    MemFlagsData::new().with_aligned()
}

struct KB<'a, 'b> {
    s: B<'a, 'b>,
    k: &'a Kernel,
    intrinsics: HashMap<&'static str, FuncRef>,
    params: [Value; 4],
    /// The thread's linear index in its CTA, the CTA's thread count, its
    /// index in the grid (all `i32`), and the address of its first output.
    ltid: Value,
    nthreads: Value,
    gtid: Value,
    outbase: Value,
    shared: Option<Value>,
    /// The address of `in` (in the reference: of the stack slot holding it).
    in_base: Value,
    /// Building the thread-by-thread reference ([`build_reference`]).
    reference: Option<Ref>,
}

/// What the reference reads instead of the machine: its parameters (the
/// thread's indices) and the thread's folds of its atomic operands.
struct Ref {
    tid: [Value; 3],
    ctaid: [Value; 3],
    laneid: Value,
    accs: Vec<Variable>,
}

/// `x` (of type `from`) as a value of type `to`: extended (signed or not) or
/// truncated.
fn conv(b: &mut FunctionBuilder, x: Value, from: Type, to: Type, signed: bool) -> Value {
    if from.bits() < to.bits() {
        if signed {
            b.ins().sextend(to, x)
        } else {
            b.ins().uextend(to, x)
        }
    } else if from.bits() > to.bits() {
        b.ins().ireduce(to, x)
    } else {
        x
    }
}

fn intrinsic_sig(name: &str) -> (Vec<Type>, Vec<Type>) {
    match name {
        "ursa_barrier" => (vec![], vec![]),
        n if n.starts_with("ursa_shfl_") => (vec![types::I32, types::I32], vec![types::I32]),
        "ursa_vote_any" | "ursa_vote_all" => (vec![types::I8], vec![types::I8]),
        "ursa_ballot" => (vec![types::I8], vec![types::I32]),
        _ => (vec![], vec![types::I32]),
    }
}

const AXES: [&str; 3] = ["x", "y", "z"];

impl KB<'_, '_> {
    fn call(&mut self, name: &'static str, args: &[Value]) -> Option<Value> {
        let fr = match self.intrinsics.get(name) {
            Some(&f) => f,
            None => {
                let (ps, rs) = intrinsic_sig(name);
                let mut sig = Signature::new(CallConv::Fast);
                sig.params.extend(ps.into_iter().map(AbiParam::new));
                sig.returns.extend(rs.into_iter().map(AbiParam::new));
                let sr = self.s.b.import_signature(sig);
                let f = self.s.b.import_function(ExtFuncData {
                    name: ExternalName::testcase(name),
                    signature: sr,
                    colocated: false,
                    patchable: false,
                });
                self.intrinsics.insert(name, f);
                f
            }
        };
        let c = self.s.b.ins().call(fr, args);
        self.s.b.inst_results(c).first().copied()
    }
    fn special_reg(&mut self, kind: &str, axis: u8) -> Value {
        if let Some(r) = &self.reference {
            let a = axis as usize;
            return match kind {
                "tid" => r.tid[a],
                "ctaid" => r.ctaid[a],
                "ntid" => self.s.b.ins().iconst(types::I32, self.k.launch.block[a] as i64),
                _ => self.s.b.ins().iconst(types::I32, self.k.launch.grid[a] as i64),
            };
        }
        let name: &'static str = Box::leak(format!("ursa_{}_{}", kind, AXES[axis as usize]).into_boxed_str());
        self.call(name, &[]).expect("an index intrinsic returns a value")
    }
    /// `v` as an `i32` (extended or truncated).
    fn as_i32(&mut self, v: Var) -> Value {
        let x = self.s.get(v);
        conv(self.s.b, x, self.s.tys[v], types::I32, false)
    }
    fn as_i64(&mut self, v: Var) -> Value {
        let x = self.s.get(v);
        conv(self.s.b, x, self.s.tys[v], types::I64, false)
    }
    fn set_from(&mut self, dst: Var, x: Value, from: Type, signed: bool) {
        let y = conv(self.s.b, x, from, self.s.tys[dst], signed);
        self.s.set(dst, y);
    }
    fn param_n(&mut self) -> Value {
        match self.reference {
            Some(_) => self.s.b.ins().iconst(types::I32, self.k.n as i64),
            None => self.params[3],
        }
    }
    fn elem(&self) -> (Type, i64) {
        if self.k.elem64 {
            (types::I64, 3)
        } else {
            (types::I32, 2)
        }
    }
    fn atom_ty(&self) -> Type {
        if self.k.atom64 {
            types::I64
        } else {
            types::I32
        }
    }

    /// Writes the outputs and returns (the reference returns them, and
    /// its folds of the atomic operands, as `i64`s).
    fn finish(&mut self) {
        let outs: Vec<Value> = self.k.outs.iter().map(|&v| self.as_i64(v)).collect();
        match &self.reference {
            None => {
                for (j, x) in outs.into_iter().enumerate() {
                    self.s.b.ins().store(aligned(), x, self.outbase, (8 * j) as i32);
                }
                self.s.b.ins().return_(&[]);
            }
            Some(r) => {
                let mut vals = outs;
                let aty = self.atom_ty();
                for &a in &r.accs.clone() {
                    let x = self.s.b.use_var(a);
                    vals.push(conv(self.s.b, x, aty, types::I64, false));
                }
                self.s.b.ins().return_(&vals);
            }
        }
    }

    fn barrier(&mut self) {
        self.call("ursa_barrier", &[]);
    }

    fn stmts(&mut self, body: &[KStmt]) {
        for s in body {
            self.stmt(s);
        }
    }

    fn stmt(&mut self, s: &KStmt) {
        match s {
            KStmt::Scalar(st) => self.s.stmt(st),
            KStmt::Special { dst, what } => {
                let x = match *what {
                    Special::Tid(a) => self.special_reg("tid", a),
                    Special::Ctaid(a) => self.special_reg("ctaid", a),
                    Special::Ntid(a) => self.special_reg("ntid", a),
                    Special::Nctaid(a) => self.special_reg("nctaid", a),
                    Special::Laneid => match &self.reference {
                        Some(r) => r.laneid,
                        None => self.call("ursa_laneid", &[]).expect("laneid"),
                    },
                    Special::LinearTid => self.ltid,
                    Special::GlobalTid => self.gtid,
                    Special::ParamN => self.param_n(),
                };
                self.set_from(*dst, x, types::I32, false);
            }
            KStmt::If { c, then, els } => {
                let c = self.s.get(*c);
                let b = &mut *self.s.b;
                let (bt, be, bm) = (b.create_block(), b.create_block(), b.create_block());
                b.ins().brif(c, bt, &[], be, &[]);
                b.seal_block(bt);
                b.seal_block(be);
                b.switch_to_block(bt);
                self.stmts(then);
                self.s.b.ins().jump(bm, &[]);
                self.s.b.switch_to_block(be);
                self.stmts(els);
                self.s.b.ins().jump(bm, &[]);
                self.s.b.seal_block(bm);
                self.s.b.switch_to_block(bm);
            }
            KStmt::Loop { trips, body } => {
                let t = match *trips {
                    Trips::Const(n) => self.s.b.ins().iconst(types::I32, n as i64),
                    Trips::Var(v, mask) => {
                        let x = self.as_i32(v);
                        let m = self.s.b.ins().band_imm_s(x, mask as i64);
                        self.s.b.ins().iadd_imm_s(m, 1)
                    }
                };
                let ctr = self.s.b.declare_var(types::I32);
                let z = self.s.b.ins().iconst(types::I32, 0);
                self.s.b.def_var(ctr, z);
                let (head, exit) = (self.s.b.create_block(), self.s.b.create_block());
                self.s.b.ins().jump(head, &[]);
                self.s.b.switch_to_block(head);
                self.stmts(body);
                let b = &mut *self.s.b;
                let c = b.use_var(ctr);
                let c1 = b.ins().iadd_imm_s(c, 1);
                b.def_var(ctr, c1);
                let more = b.ins().icmp(IntCC::UnsignedLessThan, c1, t);
                b.ins().brif(more, head, &[], exit, &[]);
                b.seal_block(head);
                b.seal_block(exit);
                b.switch_to_block(exit);
            }
            KStmt::Load { dst, idx } => {
                let (ety, log) = self.elem();
                let i = self.as_i64(*idx);
                let b = &mut *self.s.b;
                let i = b.ins().band_imm_s(i, (IN_ELEMS - 1) as i64);
                let off = b.ins().ishl_imm_s(i, log);
                let p = b.ins().iadd(self.in_base, off);
                let x = b.ins().load(ety, aligned(), p, 0);
                self.set_from(*dst, x, ety, true);
            }
            KStmt::LoadLoop { acc, op, start, bound, signed, extra } => {
                let (ety, log) = self.elem();
                let n = match *bound {
                    Bound::Const(c) => self.s.b.ins().iconst(types::I32, c as i64),
                    Bound::ParamN => self.param_n(),
                    Bound::Var(v) => {
                        let x = self.as_i32(v);
                        self.s.b.ins().band_imm_s(x, 31)
                    }
                };
                let st = self.as_i32(*start);
                let b = &mut *self.s.b;
                let st = b.ins().band_imm_s(st, 63);
                let st = b.ins().uextend(types::I64, st);
                let st = b.ins().ishl_imm_s(st, log);
                let base = b.ins().iadd(self.in_base, st);
                let ctr = b.declare_var(types::I32);
                let z = b.ins().iconst(types::I32, 0);
                b.def_var(ctr, z);
                let (head, exit) = (b.create_block(), b.create_block());
                let (lt, gt) = if *signed {
                    (IntCC::SignedLessThan, IntCC::SignedGreaterThan)
                } else {
                    (IntCC::UnsignedLessThan, IntCC::UnsignedGreaterThan)
                };
                let go = b.ins().icmp_imm_s(gt, n, 0);
                b.ins().brif(go, head, &[], exit, &[]);
                b.switch_to_block(head);
                let i = b.use_var(ctr);
                let ie = if *signed { b.ins().sextend(types::I64, i) } else { b.ins().uextend(types::I64, i) };
                let off = b.ins().ishl_imm_s(ie, log);
                let p = b.ins().iadd(base, off);
                let x = b.ins().load(ety, aligned(), p, 0);
                let aty = self.s.tys[*acc];
                let x = conv(self.s.b, x, ety, aty, *signed);
                let a = self.s.get(*acc);
                let i2 = self.s.b.ins();
                let y = match op {
                    BinOp::Isub => i2.isub(a, x),
                    BinOp::Bxor => i2.bxor(a, x),
                    BinOp::Umax => i2.umax(a, x),
                    BinOp::Bor => i2.bor(a, x),
                    _ => i2.iadd(a, x),
                };
                self.s.set(*acc, y);
                for st in extra {
                    self.s.stmt(st);
                }
                let b = &mut *self.s.b;
                let i1 = b.ins().iadd_imm_s(i, 1);
                b.def_var(ctr, i1);
                let more = b.ins().icmp(lt, i1, n);
                b.ins().brif(more, head, &[], exit, &[]);
                b.seal_block(head);
                b.seal_block(exit);
                b.switch_to_block(exit);
            }
            KStmt::Exit { c } => {
                let c = self.s.get(*c);
                let b = &mut *self.s.b;
                let (bx, bc) = (b.create_block(), b.create_block());
                b.ins().brif(c, bx, &[], bc, &[]);
                b.seal_block(bx);
                b.seal_block(bc);
                b.switch_to_block(bx);
                self.finish();
                self.s.b.switch_to_block(bc);
            }
            KStmt::Atomic { op, val, shared } => {
                let aty = self.atom_ty();
                let x = self.s.get(*val);
                let x = conv(self.s.b, x, self.s.tys[*val], aty, true);
                if let (Some(r), false) = (&self.reference, *shared) {
                    let acc = r.accs[op.word() as usize];
                    let a = self.s.b.use_var(acc);
                    let i = self.s.b.ins();
                    let y = match op {
                        AtomOp::Add => i.iadd(a, x),
                        AtomOp::And => i.band(a, x),
                        AtomOp::Or => i.bor(a, x),
                        AtomOp::Xor => i.bxor(a, x),
                        AtomOp::Umin => i.umin(a, x),
                        AtomOp::Umax => i.umax(a, x),
                        AtomOp::Smin => i.smin(a, x),
                        AtomOp::Smax => i.smax(a, x),
                    };
                    self.s.b.def_var(acc, y);
                    return;
                }
                let base = if *shared { self.shared.expect("shared memory declared") } else { self.params[2] };
                let off = if *shared { SHARED_ATOMS_OFFSET as i64 } else { 0 } + 8 * op.word() as i64;
                let b = &mut *self.s.b;
                let p = b.ins().iadd_imm_s(base, off);
                let rmw = match op {
                    AtomOp::Add => AtomicRmwOp::Add,
                    AtomOp::And => AtomicRmwOp::And,
                    AtomOp::Or => AtomicRmwOp::Or,
                    AtomOp::Xor => AtomicRmwOp::Xor,
                    AtomOp::Umin => AtomicRmwOp::Umin,
                    AtomOp::Umax => AtomicRmwOp::Umax,
                    AtomOp::Smin => AtomicRmwOp::Smin,
                    AtomOp::Smax => AtomicRmwOp::Smax,
                };
                b.ins().atomic_rmw(aty, MemFlagsData::new(), rmw, p, x);
            }
            KStmt::Barrier => self.barrier(),
            KStmt::Exchange { src, dst, rot } => {
                let sh = self.shared.expect("shared memory declared");
                let x = self.as_i32(*src);
                let r = self.as_i32(*rot);
                let b = &mut *self.s.b;
                let me = b.ins().uextend(types::I64, self.ltid);
                let me = b.ins().ishl_imm_s(me, 2);
                let pm = b.ins().iadd(sh, me);
                b.ins().store(aligned(), x, pm, SHARED_WORDS_OFFSET as i32);
                self.barrier();
                let b = &mut *self.s.b;
                let r = b.ins().band_imm_s(r, 255);
                let j = b.ins().iadd(self.ltid, r);
                let j = b.ins().urem(j, self.nthreads);
                let j = b.ins().uextend(types::I64, j);
                let j = b.ins().ishl_imm_s(j, 2);
                let pj = b.ins().iadd(sh, j);
                let y = b.ins().load(types::I32, aligned(), pj, SHARED_WORDS_OFFSET as i32);
                self.set_from(*dst, y, types::I32, false);
                self.barrier();
            }
            KStmt::ReadShared { dst, word } => {
                let sh = self.shared.expect("shared memory declared");
                self.barrier();
                let aty = self.atom_ty();
                let y = self.s.b.ins().load(aty, aligned(), sh, (SHARED_ATOMS_OFFSET + 8 * word) as i32);
                self.set_from(*dst, y, aty, true);
                self.barrier();
            }
            KStmt::Shuffle { mode, dst, src, b } => {
                let x = self.as_i32(*src);
                let l = self.as_i32(*b);
                let l = self.s.b.ins().band_imm_s(l, 31);
                let name = match mode {
                    Shfl::Idx => "ursa_shfl_idx",
                    Shfl::Up => "ursa_shfl_up",
                    Shfl::Down => "ursa_shfl_down",
                    Shfl::Bfly => "ursa_shfl_bfly",
                };
                let y = self.call(name, &[x, l]).expect("a shuffle returns a value");
                self.set_from(*dst, y, types::I32, false);
            }
            KStmt::Vote { form, dst, c } => {
                let x = self.s.get(*c);
                let p = self.s.b.ins().icmp_imm_s(IntCC::NotEqual, x, 0);
                let (name, rty) = match form {
                    Vote::Any => ("ursa_vote_any", types::I8),
                    Vote::All => ("ursa_vote_all", types::I8),
                    Vote::Ballot => ("ursa_ballot", types::I32),
                };
                let y = self.call(name, &[p]).expect("a vote returns a value");
                self.set_from(*dst, y, rty, false);
            }
        }
    }
}

/// The CLIF function of a kernel.
pub fn build(k: &Kernel) -> Function {
    build_with(k, false)
}

/// The reference copy of a kernel without cross-lane statements, run thread
/// by thread in cranelift-interpreter: `%kz_ref(tid.x, tid.y, tid.z,
/// ctaid.x, ctaid.y, ctaid.z, laneid)` returns the thread's outputs, then
/// its fold of the operands of its atomics on each atomic word (from the
/// operation's identity), all as `i64`. The launch's dimensions and `n` are
/// constants; `in` is a stack slot filled at entry; the program generator's
/// reference statements ([`crate::fuzzgen::build::build_reference`]) write
/// around cranelift-interpreter's deviations.
pub fn build_reference(k: &Kernel) -> Function {
    build_with(k, true)
}

/// The identity of an atomic operation on `ty`.
fn identity(op: AtomOp, ty: Type) -> u128 {
    let m = crate::fuzzgen::gen::mask(ty);
    match op {
        AtomOp::Add | AtomOp::Or | AtomOp::Xor | AtomOp::Umax => 0,
        AtomOp::And | AtomOp::Umin => m,
        AtomOp::Smin => m >> 1,
        AtomOp::Smax => (m >> 1) + 1,
    }
}

fn build_with(k: &Kernel, reference: bool) -> Function {
    let sig = if reference {
        let mut s = Signature::new(CallConv::Fast);
        s.params.extend((0..7).map(|_| AbiParam::new(types::I32)));
        s.returns.extend((0..k.outs.len() + ATOM_WORDS as usize).map(|_| AbiParam::new(types::I64)));
        s
    } else {
        signature()
    };
    let name = if reference { format!("{}_ref", KERNEL_NAME) } else { KERNEL_NAME.to_string() };
    let mut func = Function::with_name_signature(UserFuncName::testcase(name), sig);
    let mut ctx = FunctionBuilderContext::new();
    let mut b = FunctionBuilder::new(&mut func, &mut ctx);
    let shared_gv: Option<GlobalValue> = (k.uses_shared() && !reference).then(|| {
        b.create_global_value(GlobalValueData::Symbol {
            name: ExternalName::testcase(SHARED_NAME),
            offset: Imm64::new(0),
            colocated: false,
            tls: false,
        })
    });
    let in_slot = reference.then(|| b.create_sized_stack_slot(StackSlotData::new(StackSlotKind::ExplicitSlot, IN_ELEMS * 8, 3)));
    let entry = b.create_block();
    b.append_block_params_for_function_params(entry);
    b.switch_to_block(entry);
    b.seal_block(entry);
    let ps = b.block_params(entry).to_vec();
    let vars: Vec<Variable> = k.vars.iter().map(|&t| b.declare_var(t)).collect();
    for (v, &init) in k.inits.iter().enumerate() {
        let x = iconst(&mut b, k.vars[v], init);
        b.def_var(vars[v], x);
    }
    let shared = shared_gv.map(|gv| b.ins().symbol_value(types::I64, gv));
    let aty = if k.atom64 { types::I64 } else { types::I32 };
    let (params, in_base, rf) = match in_slot {
        None => ([ps[0], ps[1], ps[2], ps[3]], ps[0], None),
        Some(ss) => {
            let base = b.ins().stack_addr(types::I64, ss, 0);
            let esz = if k.elem64 { 8 } else { 4 };
            for (i, &v) in k.input.iter().enumerate() {
                let (ty, v) = if k.elem64 { (types::I64, v as i64) } else { (types::I32, v as u32 as i32 as i64) };
                let x = b.ins().iconst(ty, v);
                b.ins().store(aligned(), x, base, (i * esz) as i32);
            }
            let accs: Vec<Variable> = AtomOp::ALL
                .iter()
                .map(|&op| {
                    let a = b.declare_var(aty);
                    let x = iconst(&mut b, aty, identity(op, aty));
                    b.def_var(a, x);
                    a
                })
                .collect();
            let r = Ref { tid: [ps[0], ps[1], ps[2]], ctaid: [ps[3], ps[4], ps[5]], laneid: ps[6], accs };
            ([ps[0]; 4], base, Some(r))
        }
    };
    let dummy = params[3];
    let mut kb = KB {
        s: B { b: &mut b, vars, tys: k.vars.clone(), refs: Vec::new(), slot: None, reference },
        k,
        intrinsics: HashMap::new(),
        params,
        ltid: dummy,
        nthreads: dummy,
        gtid: dummy,
        outbase: params[1],
        shared,
        in_base,
        reference: rf,
    };
    // The thread's place: linear index in the CTA and in the grid.
    let t: Vec<Value> = (0..3).map(|a| kb.special_reg("tid", a)).collect();
    let nt: Vec<Value> = (0..3).map(|a| kb.special_reg("ntid", a)).collect();
    let c: Vec<Value> = (0..3).map(|a| kb.special_reg("ctaid", a)).collect();
    let nc: Vec<Value> = (0..2).map(|a| kb.special_reg("nctaid", a)).collect();
    let i = kb.s.b.ins();
    let yz = i.imul(nt[1], t[2]);
    let yz = kb.s.b.ins().iadd(t[1], yz);
    let l = kb.s.b.ins().imul(nt[0], yz);
    kb.ltid = kb.s.b.ins().iadd(t[0], l);
    let n01 = kb.s.b.ins().imul(nt[0], nt[1]);
    kb.nthreads = kb.s.b.ins().imul(n01, nt[2]);
    let cyz = kb.s.b.ins().imul(nc[1], c[2]);
    let cyz = kb.s.b.ins().iadd(c[1], cyz);
    let cl = kb.s.b.ins().imul(nc[0], cyz);
    let cl = kb.s.b.ins().iadd(c[0], cl);
    let g = kb.s.b.ins().imul(cl, kb.nthreads);
    kb.gtid = kb.s.b.ins().iadd(g, kb.ltid);
    if !reference {
        let slot = kb.s.b.ins().imul_imm_s(kb.gtid, k.outs.len() as i64);
        let slot = kb.s.b.ins().uextend(types::I64, slot);
        let slot = kb.s.b.ins().ishl_imm_s(slot, 3);
        kb.outbase = kb.s.b.ins().iadd(params[1], slot);
    }
    kb.stmts(&k.body);
    kb.finish();
    b.finalize(TargetFrontendConfig { default_call_conv: CallConv::Fast, pointer_width: PointerWidth::U64, page_size_align_log2: 12 });
    func.dfg.resolve_all_aliases();
    func
}
