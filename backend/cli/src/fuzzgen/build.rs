//! Generator programs to CLIF functions, through `cranelift-frontend`.

use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{
    types, AbiParam, Endianness, ExtFuncData, ExternalName, FuncRef, Function, InstBuilder, JumpTableData, MemFlagsData, SigRef, Signature,
    StackSlot, StackSlotData, StackSlotKind, TrapCode, Type, UserFuncName, Value,
};
use cranelift_codegen::isa::{CallConv, TargetFrontendConfig};
use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext, Variable};
use target_lexicon::PointerWidth;

use super::ast::*;

fn signature(f: &Func) -> Signature {
    let mut s = Signature::new(CallConv::Fast);
    s.params.extend(f.params().iter().map(|&t| AbiParam::new(t)));
    s.returns.extend(f.returns().into_iter().map(AbiParam::new));
    s
}

fn trap_code() -> TrapCode {
    TrapCode::user(1).expect("user trap code 1")
}

/// A function being built (the kernel generator builds its straight-line
/// statements with it too).
pub(crate) struct B<'a, 'b> {
    pub(crate) b: &'a mut FunctionBuilder<'b>,
    pub(crate) vars: Vec<Variable>,
    pub(crate) tys: Vec<Type>,
    pub(crate) refs: Vec<Option<(FuncRef, SigRef)>>,
    pub(crate) slot: Option<StackSlot>,
    /// Building the copy run in cranelift-interpreter (see [`build_reference`]).
    pub(crate) reference: bool,
}

impl B<'_, '_> {
    pub(crate) fn get(&mut self, v: Var) -> Value {
        self.b.use_var(self.vars[v])
    }
    pub(crate) fn set(&mut self, v: Var, x: Value) {
        self.b.def_var(self.vars[v], x);
    }
    pub(super) fn addr(&mut self, a: &Addr, load32: bool) -> Value {
        // cranelift-interpreter gives uload32/sload32 through an i32 address
        // the address's type instead of i64: its copy uses an i64 address.
        let wide = a.wide || (self.reference && load32);
        let ty = if wide { types::I64 } else { types::I32 };
        let ss = self.slot.expect("a memory access in a function with a stack slot");
        let base = self.b.ins().stack_addr(ty, ss, a.off as i32);
        match a.index {
            None => base,
            Some(i) => {
                let x = self.get(i);
                let xt = self.tys[i];
                let x = if xt.bits() < ty.bits() {
                    self.b.ins().uextend(ty, x)
                } else if xt.bits() > ty.bits() {
                    self.b.ins().ireduce(ty, x)
                } else {
                    x
                };
                // Keep base+index inside the upper half of the slot, aligned
                // to 8 (every access size divides it).
                let m = self.b.ins().band_imm_s(x, (SLOT_SIZE / 2 - 8) as i64);
                self.b.ins().iadd(base, m)
            }
        }
    }
    pub(super) fn flags(big: bool) -> MemFlagsData {
        let f = MemFlagsData::new();
        if big {
            f.with_endianness(Endianness::Big)
        } else {
            f
        }
    }

    fn stmts(&mut self, body: &[Stmt]) {
        for s in body {
            self.stmt(s);
        }
    }

    pub(crate) fn stmt(&mut self, s: &Stmt) {
        match s {
            Stmt::Const { dst, val } => {
                let ty = self.tys[*dst];
                let x = iconst(self.b, ty, *val);
                self.set(*dst, x);
            }
            Stmt::Un { op, dst, a } => {
                let a = self.get(*a);
                let i = self.b.ins();
                let x = match op {
                    UnOp::Ineg => i.ineg(a),
                    UnOp::Iabs => i.iabs(a),
                    UnOp::Bnot => i.bnot(a),
                    UnOp::Clz => i.clz(a),
                    UnOp::Ctz => i.ctz(a),
                    UnOp::Cls => i.cls(a),
                    UnOp::Popcnt => i.popcnt(a),
                    UnOp::Bitrev => i.bitrev(a),
                    UnOp::Bswap => i.bswap(a),
                };
                self.set(*dst, x);
            }
            Stmt::Bin { op: BinOp::Srem, dst, a, b } if self.reference => {
                // CLIF's `srem INT_MIN, -1` is 0; cranelift-interpreter traps
                // (int_ovf). Its copy computes `x srem -1` as `x srem 1`.
                let (a, b) = (self.get(*a), self.get(*b));
                let ty = self.tys[*dst];
                let m1 = self.b.ins().icmp_imm_s(IntCC::Equal, b, -1);
                let one = self.b.ins().iconst(ty, 1);
                let b1 = self.b.ins().select(m1, one, b);
                let x = self.b.ins().srem(a, b1);
                self.set(*dst, x);
            }
            Stmt::Bin { op, dst, a, b } => {
                let (a, b) = (self.get(*a), self.get(*b));
                let i = self.b.ins();
                let x = match op {
                    BinOp::Iadd => i.iadd(a, b),
                    BinOp::Isub => i.isub(a, b),
                    BinOp::Imul => i.imul(a, b),
                    BinOp::Umulhi => i.umulhi(a, b),
                    BinOp::Smulhi => i.smulhi(a, b),
                    BinOp::Band => i.band(a, b),
                    BinOp::Bor => i.bor(a, b),
                    BinOp::Bxor => i.bxor(a, b),
                    BinOp::Ishl => i.ishl(a, b),
                    BinOp::Ushr => i.ushr(a, b),
                    BinOp::Sshr => i.sshr(a, b),
                    BinOp::Rotl => i.rotl(a, b),
                    BinOp::Rotr => i.rotr(a, b),
                    BinOp::Umin => i.umin(a, b),
                    BinOp::Umax => i.umax(a, b),
                    BinOp::Smin => i.smin(a, b),
                    BinOp::Smax => i.smax(a, b),
                    BinOp::Udiv => i.udiv(a, b),
                    BinOp::Sdiv => i.sdiv(a, b),
                    BinOp::Urem => i.urem(a, b),
                    BinOp::Srem => i.srem(a, b),
                };
                self.set(*dst, x);
            }
            Stmt::Imm { op, dst, a, imm } => {
                let a = self.get(*a);
                let k = *imm;
                let i = self.b.ins();
                let x = match op {
                    ImmOp::IaddImm => i.iadd_imm_s(a, k),
                    ImmOp::ImulImm => i.imul_imm_s(a, k),
                    ImmOp::BandImm => i.band_imm_s(a, k),
                    ImmOp::BorImm => i.bor_imm_s(a, k),
                    ImmOp::BxorImm => i.bxor_imm_s(a, k),
                    ImmOp::IshlImm => i.ishl_imm_s(a, k),
                    ImmOp::UshrImm => i.ushr_imm_s(a, k),
                    ImmOp::SshrImm => i.sshr_imm_s(a, k),
                    ImmOp::RotlImm => i.rotl_imm_s(a, k),
                    ImmOp::RotrImm => i.rotr_imm_s(a, k),
                };
                self.set(*dst, x);
            }
            Stmt::Icmp { cc, dst, a, b } => {
                let (a, b) = (self.get(*a), self.get(*b));
                let x = self.b.ins().icmp(*cc, a, b);
                self.set(*dst, x);
            }
            Stmt::IcmpImm { cc, dst, a, imm } => {
                let a = self.get(*a);
                let x = self.b.ins().icmp_imm_s(*cc, a, *imm);
                self.set(*dst, x);
            }
            Stmt::Select { spectre, dst, c, a, b } => {
                let (c, a, b) = (self.get(*c), self.get(*a), self.get(*b));
                let x = if *spectre { self.b.ins().select_spectre_guard(c, a, b) } else { self.b.ins().select(c, a, b) };
                self.set(*dst, x);
            }
            Stmt::Bitselect { dst, c, a, b } => {
                let (c, a, b) = (self.get(*c), self.get(*a), self.get(*b));
                let x = self.b.ins().bitselect(c, a, b);
                self.set(*dst, x);
            }
            Stmt::Conv { op, dst, a } => {
                let ty = self.tys[*dst];
                let a = self.get(*a);
                let i = self.b.ins();
                let x = match op {
                    ConvOp::Uextend => i.uextend(ty, a),
                    ConvOp::Sextend => i.sextend(ty, a),
                    ConvOp::Ireduce => i.ireduce(ty, a),
                    ConvOp::Bmask => i.bmask(ty, a),
                };
                self.set(*dst, x);
            }
            Stmt::Ovf { op, dst, flag, a, b } => {
                let (a, b) = (self.get(*a), self.get(*b));
                let i = self.b.ins();
                let (x, f) = match op {
                    OvfOp::UaddOverflow => i.uadd_overflow(a, b),
                    OvfOp::SaddOverflow => i.sadd_overflow(a, b),
                    OvfOp::UsubOverflow => i.usub_overflow(a, b),
                    OvfOp::SsubOverflow => i.ssub_overflow(a, b),
                    OvfOp::UmulOverflow => i.umul_overflow(a, b),
                    OvfOp::SmulOverflow => i.smul_overflow(a, b),
                };
                self.set(*dst, x);
                self.set(*flag, f);
            }
            Stmt::Carry { op, dst, flag, a, b, cin } => {
                let (a, b, c) = (self.get(*a), self.get(*b), self.get(*cin));
                let i = self.b.ins();
                let (x, f) = match op {
                    CarryOp::UaddOverflowCin => i.uadd_overflow_cin(a, b, c),
                    CarryOp::SaddOverflowCin => i.sadd_overflow_cin(a, b, c),
                    CarryOp::UsubOverflowBin => i.usub_overflow_bin(a, b, c),
                    CarryOp::SsubOverflowBin => i.ssub_overflow_bin(a, b, c),
                };
                self.set(*dst, x);
                self.set(*flag, f);
            }
            Stmt::AddTrap { dst, a, b } => {
                let (a, b) = (self.get(*a), self.get(*b));
                let x = self.b.ins().uadd_overflow_trap(a, b, trap_code());
                self.set(*dst, x);
            }
            Stmt::TrapIf { nz, c } => {
                let c = self.get(*c);
                if *nz {
                    self.b.ins().trapnz(c, trap_code());
                } else {
                    self.b.ins().trapz(c, trap_code());
                }
            }
            Stmt::Trap => {
                self.b.ins().trap(trap_code());
                // Whatever follows (in the generated program, nothing; after
                // reduction, maybe something) goes in an unreachable block.
                let dead = self.b.create_block();
                self.b.seal_block(dead);
                self.b.switch_to_block(dead);
            }
            Stmt::Store { src, addr, kind, big } => {
                let x = self.get(*src);
                let p = self.addr(addr, false);
                let fl = Self::flags(*big);
                let i = self.b.ins();
                match kind {
                    MemKind::Full => i.store(fl, x, p, 0),
                    MemKind::Narrow { bits: 8, .. } => i.istore8(fl, x, p, 0),
                    MemKind::Narrow { bits: 16, .. } => i.istore16(fl, x, p, 0),
                    MemKind::Narrow { .. } => i.istore32(fl, x, p, 0),
                };
            }
            Stmt::Load { dst, addr, kind, big } => {
                let ty = self.tys[*dst];
                let p = self.addr(addr, matches!(kind, MemKind::Narrow { bits: 32, .. }));
                let fl = Self::flags(*big);
                let i = self.b.ins();
                let x = match kind {
                    MemKind::Full => i.load(ty, fl, p, 0),
                    MemKind::Narrow { bits: 8, signed: false } => i.uload8(ty, fl, p, 0),
                    MemKind::Narrow { bits: 8, signed: true } => i.sload8(ty, fl, p, 0),
                    MemKind::Narrow { bits: 16, signed: false } => i.uload16(ty, fl, p, 0),
                    MemKind::Narrow { bits: 16, signed: true } => i.sload16(ty, fl, p, 0),
                    MemKind::Narrow { signed: false, .. } => i.uload32(fl, p, 0),
                    MemKind::Narrow { signed: true, .. } => i.sload32(fl, p, 0),
                };
                self.set(*dst, x);
            }
            Stmt::Call { callee, args, rets, indirect } => {
                let (fr, sr) = self.refs[*callee].expect("callee declared");
                let a: Vec<Value> = args.iter().map(|&v| self.get(v)).collect();
                let call = if *indirect {
                    let fa = self.b.ins().func_addr(types::I64, fr);
                    self.b.ins().call_indirect(sr, fa, &a)
                } else {
                    self.b.ins().call(fr, &a)
                };
                let rs = self.b.inst_results(call).to_vec();
                for (&v, x) in rets.iter().zip(rs) {
                    self.set(v, x);
                }
            }
            Stmt::If { c, then, els } => {
                let c = self.get(*c);
                let (bt, be, bm) = (self.b.create_block(), self.b.create_block(), self.b.create_block());
                self.b.ins().brif(c, bt, &[], be, &[]);
                self.b.seal_block(bt);
                self.b.seal_block(be);
                self.b.switch_to_block(bt);
                self.stmts(then);
                self.b.ins().jump(bm, &[]);
                self.b.switch_to_block(be);
                self.stmts(els);
                self.b.ins().jump(bm, &[]);
                self.b.seal_block(bm);
                self.b.switch_to_block(bm);
            }
            Stmt::Loop { trips, body } => {
                let ctr = self.b.declare_var(types::I32);
                let z = self.b.ins().iconst(types::I32, 0);
                self.b.def_var(ctr, z);
                let (head, exit) = (self.b.create_block(), self.b.create_block());
                self.b.ins().jump(head, &[]);
                self.b.switch_to_block(head);
                self.stmts(body);
                let c = self.b.use_var(ctr);
                let c1 = self.b.ins().iadd_imm_s(c, 1);
                self.b.def_var(ctr, c1);
                let more = self.b.ins().icmp_imm_s(IntCC::UnsignedLessThan, c1, *trips as i64);
                self.b.ins().brif(more, head, &[], exit, &[]);
                self.b.seal_block(head);
                self.b.seal_block(exit);
                self.b.switch_to_block(exit);
            }
            Stmt::Switch { idx, cases, default } => {
                let x = self.get(*idx);
                let bm = self.b.create_block();
                let bd = self.b.create_block();
                let bcs: Vec<_> = cases.iter().map(|_| self.b.create_block()).collect();
                let dcall = self.b.func.dfg.block_call(bd, &[]);
                let calls: Vec<_> = bcs.iter().map(|&bc| self.b.func.dfg.block_call(bc, &[])).collect();
                let jt = self.b.create_jump_table(JumpTableData::new(dcall, &calls));
                self.b.ins().br_table(x, jt);
                for (bc, body) in bcs.iter().zip(cases).chain(std::iter::once((&bd, default))) {
                    self.b.seal_block(*bc);
                    self.b.switch_to_block(*bc);
                    self.stmts(body);
                    self.b.ins().jump(bm, &[]);
                }
                self.b.seal_block(bm);
                self.b.switch_to_block(bm);
            }
            Stmt::Vector(v) => self.vstmt(v),
        }
    }
}

/// The CLIF functions of a program (function `k` named `%fz<k>`).
pub fn build(p: &Program) -> Vec<Function> {
    build_with(p, false)
}

/// The copy of the program run in cranelift-interpreter: the same CLIF
/// semantics, written around two places where the interpreter deviates from
/// them (`srem INT_MIN, -1` traps; `uload32`/`sload32` through an i32 address
/// return an i32).
pub fn build_reference(p: &Program) -> Vec<Function> {
    build_with(p, true)
}

fn build_with(p: &Program, reference: bool) -> Vec<Function> {
    let sigs: Vec<Signature> = p.funcs.iter().map(signature).collect();
    let mut out = Vec::new();
    for (k, f) in p.funcs.iter().enumerate() {
        let mut func = Function::with_name_signature(UserFuncName::testcase(func_name(k)), sigs[k].clone());
        let mut ctx = FunctionBuilderContext::new();
        let mut b = FunctionBuilder::new(&mut func, &mut ctx);
        let mut refs = vec![None; p.funcs.len()];
        let mut used = vec![false; p.funcs.len()];
        mark_callees(&f.body, &mut used);
        for (j, u) in used.iter().enumerate() {
            if *u {
                let sr = b.import_signature(sigs[j].clone());
                refs[j] = Some((
                    b.import_function(ExtFuncData {
                        name: ExternalName::testcase(func_name(j)),
                        signature: sr,
                        colocated: true,
                        patchable: false,
                    }),
                    sr,
                ));
            }
        }
        let slot =
            if f.slot { Some(b.create_sized_stack_slot(StackSlotData::new(StackSlotKind::ExplicitSlot, SLOT_SIZE, 4))) } else { None };
        let entry = b.create_block();
        b.append_block_params_for_function_params(entry);
        b.switch_to_block(entry);
        b.seal_block(entry);
        let vars: Vec<Variable> = f.vars.iter().map(|&t| b.declare_var(t)).collect();
        let params = b.block_params(entry).to_vec();
        for (k, x) in params.into_iter().enumerate() {
            b.def_var(vars[k], x);
        }
        for (k, &init) in f.inits.iter().enumerate() {
            let v = f.nparams + k;
            let t = f.vars[v];
            let x = if t.is_vector() { super::vectors::vconst(&mut b, t, init) } else { iconst(&mut b, t, init) };
            b.def_var(vars[v], x);
        }
        if let Some(ss) = slot {
            let z = b.ins().iconst(types::I64, 0);
            let base = b.ins().stack_addr(types::I64, ss, 0);
            for off in (0..SLOT_SIZE).step_by(8) {
                b.ins().store(MemFlagsData::new(), z, base, off as i32);
            }
        }
        let mut bb = B { b: &mut b, vars, tys: f.vars.clone(), refs, slot, reference };
        bb.stmts(&f.body);
        let rv: Vec<Value> = f.rets.iter().map(|&v| bb.get(v)).collect();
        b.ins().return_(&rv);
        b.finalize(TargetFrontendConfig { default_call_conv: CallConv::Fast, pointer_width: PointerWidth::U64, page_size_align_log2: 12 });
        func.dfg.resolve_all_aliases();
        out.push(func);
    }
    out
}

fn mark_callees(body: &[Stmt], used: &mut [bool]) {
    for s in body {
        match s {
            Stmt::Call { callee, .. } => used[*callee] = true,
            Stmt::If { then, els, .. } => {
                mark_callees(then, used);
                mark_callees(els, used);
            }
            Stmt::Loop { body, .. } => mark_callees(body, used),
            Stmt::Switch { cases, default, .. } => {
                for c in cases {
                    mark_callees(c, used);
                }
                mark_callees(default, used);
            }
            _ => {}
        }
    }
}

/// The constant `val` of `ty`; an i128 one from its two i64 halves
/// (`iconst` has no i128 form).
pub(crate) fn iconst(b: &mut FunctionBuilder, ty: Type, val: u128) -> Value {
    if ty == types::I128 {
        let lo = b.ins().iconst(types::I64, val as u64 as i64);
        let hi = b.ins().iconst(types::I64, (val >> 64) as u64 as i64);
        b.ins().iconcat(lo, hi)
    } else {
        b.ins().iconst(ty, val as i64)
    }
}
