//! A toy expression language compiled to GPU kernels, in the style of
//! cranelift-jit-demo: the translator ([`ExprCompiler`]) is written against
//! `cranelift_module::Module` alone, and the same code compiles each function
//! twice — with `cranelift_jit::JITModule` for the host and with
//! `UrsaModule` for the GPU, where a kernel maps it over an array:
//!
//!     cargo run --release --example toy_kernels
//!
//! A program is one function per line, `NAME: EXPR`, of the `i32` element
//! `x` and its index `i`: integer literals, `x`, `i`, `+ - *`, unary `-`,
//! `< > ==` (1 or 0), `c ? a : b` (a branch), parentheses. Arithmetic wraps.

use std::collections::HashMap;

use cranelift_codegen::ir::{condcodes::IntCC, types, AbiParam, InstBuilder, MemFlagsData, Value};
use cranelift_codegen::Context;
use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext};
use cranelift_module::{FuncId, Linkage, Module, ModuleResult};
use ursa_backend::module::kernel_builder::{Dim, KernelBuilder};
use ursa_backend::UrsaModule;

/// The example's program.
pub const PROGRAM: &str = "\
square: x * x
poly: 3 * x * x - 2 * x + i
clamp: x < 0 ? 0 : (x > 50 ? 50 : x)
sign_mix: (x == 0 ? 7 : (x < 0 ? -1 : 1)) * (i + 1) - -x
";

/// An expression.
#[derive(Clone, Debug, PartialEq)]
pub enum Expr {
    Lit(i32),
    X,
    I,
    Neg(Box<Expr>),
    Bin(char, Box<Expr>, Box<Expr>),
    /// `<`, `>` or `=` (for `==`).
    Cmp(char, Box<Expr>, Box<Expr>),
    If(Box<Expr>, Box<Expr>, Box<Expr>),
}

/// A recursive-descent parser over the characters of one expression.
struct Parser<'s> {
    s: &'s [u8],
    at: usize,
}

impl Parser<'_> {
    fn peek(&mut self) -> Option<u8> {
        while self.s.get(self.at).is_some_and(|c| c.is_ascii_whitespace()) {
            self.at += 1;
        }
        self.s.get(self.at).copied()
    }

    fn eat(&mut self, tok: &str) -> bool {
        self.peek();
        if self.s[self.at..].starts_with(tok.as_bytes()) {
            self.at += tok.len();
            true
        } else {
            false
        }
    }

    fn expect(&mut self, tok: &str) -> Result<(), String> {
        if self.eat(tok) {
            Ok(())
        } else {
            Err(format!("expected `{}` at column {}", tok, self.at + 1))
        }
    }

    fn expr(&mut self) -> Result<Expr, String> {
        let c = self.cmp()?;
        if !self.eat("?") {
            return Ok(c);
        }
        let a = self.expr()?;
        self.expect(":")?;
        let b = self.expr()?;
        Ok(Expr::If(Box::new(c), Box::new(a), Box::new(b)))
    }

    fn cmp(&mut self) -> Result<Expr, String> {
        let a = self.sum()?;
        for (tok, op) in [("==", '='), ("<", '<'), (">", '>')] {
            if self.eat(tok) {
                return Ok(Expr::Cmp(op, Box::new(a), Box::new(self.sum()?)));
            }
        }
        Ok(a)
    }

    fn sum(&mut self) -> Result<Expr, String> {
        let mut a = self.prod()?;
        loop {
            let op = match self.peek() {
                Some(b'+') => '+',
                Some(b'-') => '-',
                _ => return Ok(a),
            };
            self.at += 1;
            a = Expr::Bin(op, Box::new(a), Box::new(self.prod()?));
        }
    }

    fn prod(&mut self) -> Result<Expr, String> {
        let mut a = self.unary()?;
        while self.eat("*") {
            a = Expr::Bin('*', Box::new(a), Box::new(self.unary()?));
        }
        Ok(a)
    }

    fn unary(&mut self) -> Result<Expr, String> {
        if self.eat("-") {
            return Ok(Expr::Neg(Box::new(self.unary()?)));
        }
        match self.peek() {
            Some(b'(') => {
                self.at += 1;
                let e = self.expr()?;
                self.expect(")")?;
                Ok(e)
            }
            Some(b'x') => {
                self.at += 1;
                Ok(Expr::X)
            }
            Some(b'i') => {
                self.at += 1;
                Ok(Expr::I)
            }
            Some(c) if c.is_ascii_digit() => {
                let start = self.at;
                while self.s.get(self.at).is_some_and(|c| c.is_ascii_digit()) {
                    self.at += 1;
                }
                let text = std::str::from_utf8(&self.s[start..self.at]).expect("digits");
                text.parse().map(Expr::Lit).map_err(|_| format!("`{}` is not an i32", text))
            }
            Some(c) => Err(format!("unexpected `{}` at column {}", c as char, self.at + 1)),
            None => Err("unexpected end of the expression".into()),
        }
    }
}

/// The functions of a program: (name, expression), in order.
pub fn parse(program: &str) -> Result<Vec<(String, Expr)>, String> {
    let mut out = Vec::new();
    for (n, line) in program.lines().enumerate().filter(|(_, l)| !l.trim().is_empty()) {
        let (name, text) = line.split_once(':').ok_or_else(|| format!("line {}: expected `NAME: EXPR`", n + 1))?;
        let name = name.trim();
        if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            return Err(format!("line {}: `{}` is not a name", n + 1, name));
        }
        let mut p = Parser { s: text.as_bytes(), at: 0 };
        let e = p.expr().map_err(|m| format!("line {}: {}", n + 1, m))?;
        if p.peek().is_some() {
            return Err(format!("line {}: unexpected `{}` after the expression", n + 1, &text[p.at..]));
        }
        out.push((name.to_string(), e));
    }
    Ok(out)
}

/// The value of `e` (the reference both compilers are checked against).
pub fn eval(e: &Expr, x: i32, i: i32) -> i32 {
    match e {
        Expr::Lit(v) => *v,
        Expr::X => x,
        Expr::I => i,
        Expr::Neg(a) => eval(a, x, i).wrapping_neg(),
        Expr::Bin(op, a, b) => {
            let (a, b) = (eval(a, x, i), eval(b, x, i));
            match op {
                '+' => a.wrapping_add(b),
                '-' => a.wrapping_sub(b),
                _ => a.wrapping_mul(b),
            }
        }
        Expr::Cmp(op, a, b) => {
            let (a, b) = (eval(a, x, i), eval(b, x, i));
            (match op {
                '<' => a < b,
                '>' => a > b,
                _ => a == b,
            }) as i32
        }
        Expr::If(c, a, b) => {
            if eval(c, x, i) != 0 {
                eval(a, x, i)
            } else {
                eval(b, x, i)
            }
        }
    }
}

/// The translator, for any module: each expression becomes a function
/// `NAME(x: i32, i: i32) -> i32` in the module's calling convention.
pub struct ExprCompiler<M: Module> {
    pub module: M,
    builder_context: FunctionBuilderContext,
    ctx: Context,
}

impl<M: Module> ExprCompiler<M> {
    pub fn new(module: M) -> Self {
        let ctx = module.make_context();
        ExprCompiler { module, builder_context: FunctionBuilderContext::new(), ctx }
    }

    /// Declares and defines `name` computing `e`.
    pub fn compile(&mut self, name: &str, e: &Expr, linkage: Linkage) -> ModuleResult<FuncId> {
        self.module.clear_context(&mut self.ctx);
        let sig = &mut self.ctx.func.signature;
        sig.params.extend([AbiParam::new(types::I32), AbiParam::new(types::I32)]);
        sig.returns.push(AbiParam::new(types::I32));
        let id = self.module.declare_function(name, linkage, &self.ctx.func.signature)?;
        let config = self.module.target_config();
        let mut b = FunctionBuilder::new(&mut self.ctx.func, &mut self.builder_context);
        let entry = b.create_block();
        b.append_block_params_for_function_params(entry);
        b.switch_to_block(entry);
        let (x, i) = (b.block_params(entry)[0], b.block_params(entry)[1]);
        let v = translate(&mut b, e, x, i);
        b.ins().return_(&[v]);
        b.seal_all_blocks();
        b.finalize(config);
        self.module.define_function(id, &mut self.ctx)?;
        Ok(id)
    }
}

/// CLIF computing `e` at the builder's position.
fn translate(b: &mut FunctionBuilder, e: &Expr, x: Value, i: Value) -> Value {
    match e {
        Expr::Lit(v) => b.ins().iconst(types::I32, *v as u32 as i64),
        Expr::X => x,
        Expr::I => i,
        Expr::Neg(a) => {
            let a = translate(b, a, x, i);
            b.ins().ineg(a)
        }
        Expr::Bin(op, l, r) => {
            let (l, r) = (translate(b, l, x, i), translate(b, r, x, i));
            match op {
                '+' => b.ins().iadd(l, r),
                '-' => b.ins().isub(l, r),
                _ => b.ins().imul(l, r),
            }
        }
        Expr::Cmp(op, l, r) => {
            let (l, r) = (translate(b, l, x, i), translate(b, r, x, i));
            let cc = match op {
                '<' => IntCC::SignedLessThan,
                '>' => IntCC::SignedGreaterThan,
                _ => IntCC::Equal,
            };
            let c = b.ins().icmp(cc, l, r);
            b.ins().uextend(types::I32, c)
        }
        Expr::If(c, t, f) => {
            let c = translate(b, c, x, i);
            let (then_b, else_b, merge) = (b.create_block(), b.create_block(), b.create_block());
            let out = b.append_block_param(merge, types::I32);
            b.ins().brif(c, then_b, &[], else_b, &[]);
            for (blk, arm) in [(then_b, t), (else_b, f)] {
                b.switch_to_block(blk);
                let v = translate(b, arm, x, i);
                b.ins().jump(merge, &[v.into()]);
            }
            b.switch_to_block(merge);
            out
        }
    }
}

/// The GPU object: each function of `funcs` as a device function, and a
/// kernel `NAME_map(in: i64, out: i64, n: i32)` storing
/// `out[i] = NAME(in[i], i)` for each `i < n`.
pub fn build_gpu(funcs: &[(String, Expr)]) -> ModuleResult<Vec<u8>> {
    let mut c = ExprCompiler::new(UrsaModule::new());
    let ids: Vec<FuncId> = funcs.iter().map(|(name, e)| c.compile(name, e, Linkage::Local)).collect::<ModuleResult<_>>()?;
    let mut module = c.module;
    let mut fctx = FunctionBuilderContext::new();
    for ((name, _), &f) in funcs.iter().zip(&ids) {
        let mut ctx = module.make_context();
        let sig = &mut ctx.func.signature;
        sig.params.extend([AbiParam::new(types::I64), AbiParam::new(types::I64), AbiParam::new(types::I32)]);
        let id = module.declare_function(&format!("{}_map", name), Linkage::Export, &ctx.func.signature)?;
        let callee = module.declare_func_in_func(f, &mut ctx.func);
        let mut b = FunctionBuilder::new(&mut ctx.func, &mut fctx);
        let (entry, work, done) = (b.create_block(), b.create_block(), b.create_block());
        b.append_block_params_for_function_params(entry);
        b.switch_to_block(entry);
        let [input, output, n] = b.block_params(entry).try_into().expect("three parameters");
        let mut k = KernelBuilder::new(&mut module, &mut b);
        let i = k.global_idx(Dim::X)?;
        let inside = k.ins().icmp(IntCC::UnsignedLessThan, i, n);
        k.ins().brif(inside, work, &[], done, &[]);
        k.switch_to_block(work);
        let at = k.element_addr(input, i, 4);
        let x = k.ins().load(types::I32, MemFlagsData::trusted(), at, 0);
        let call = k.ins().call(callee, &[x, i]);
        let y = k.inst_results(call)[0];
        let at = k.element_addr(output, i, 4);
        k.ins().store(MemFlagsData::trusted(), y, at, 0);
        k.ins().jump(done, &[]);
        k.switch_to_block(done);
        k.ins().return_(&[]);
        b.seal_all_blocks();
        b.finalize(module.target_config());
        module.define_function(id, &mut ctx)?;
    }
    module.finish()
}

/// The host functions, compiled by the same translator with a JIT module.
pub fn build_host(funcs: &[(String, Expr)]) -> Result<HashMap<String, extern "C" fn(i32, i32) -> i32>, String> {
    let builder = cranelift_jit::JITBuilder::with_flags(&[("opt_level", "speed")], cranelift_module::default_libcall_names())
        .map_err(|e| e.to_string())?;
    let mut c = ExprCompiler::new(cranelift_jit::JITModule::new(builder));
    let mut ids = Vec::new();
    for (name, e) in funcs {
        ids.push((name.clone(), c.compile(name, e, Linkage::Export).map_err(|e| e.to_string())?));
    }
    c.module.finalize_definitions().map_err(|e| e.to_string())?;
    let mut out = HashMap::new();
    for (name, id) in ids {
        let code = c.module.get_finalized_function(id);
        // SAFETY: the function was compiled for this host with the signature
        // (i32, i32) -> i32 in its default (C) calling convention.
        let f = unsafe { std::mem::transmute::<*const u8, extern "C" fn(i32, i32) -> i32>(code) };
        out.insert(name, f);
    }
    // The module owns the code: kept for the life of the program.
    std::mem::forget(c);
    Ok(out)
}

/// The result of one function: the GPU's output, the host JIT's and the
/// evaluator's.
pub struct Outcome {
    pub name: String,
    pub gpu: Vec<i32>,
    pub host: Vec<i32>,
    pub eval: Vec<i32>,
}

/// Compiles `program` for both targets and runs every function over `n`
/// inputs (on the GPU in CTAs of 64 threads).
pub fn run(program: &str, n: u32) -> Result<Vec<Outcome>, String> {
    let funcs = parse(program)?;
    let bytes = build_gpu(&funcs).map_err(|e| e.to_string())?;
    let host = build_host(&funcs)?;
    let xs: Vec<i32> = (0..n as i32).map(|k| (k * 37) % 201 - 100).collect();
    // The host API (`ursa_sim::host`): typed buffers, a checked launch.
    let dev = ursa_sim::host::Device::new();
    let module = dev.load_module(&bytes).map_err(|e| e.to_string())?;
    let din = dev.buffer_from(&xs).map_err(|e| e.to_string())?;
    let dout = dev.alloc_zeros::<i32>(xs.len()).map_err(|e| e.to_string())?;
    let mut out = Vec::new();
    for (name, e) in &funcs {
        let kernel = module.kernel(&format!("{}_map", name)).map_err(|e| e.to_string())?;
        kernel.launch(n.div_ceil(64), 64, 0, &[&din, &dout, &n]).map_err(|e| e.to_string())?;
        let gpu = dout.to_vec().map_err(|e| e.to_string())?;
        let f = host[name];
        out.push(Outcome {
            name: name.clone(),
            gpu,
            host: xs.iter().enumerate().map(|(i, &x)| f(x, i as i32)).collect(),
            eval: xs.iter().enumerate().map(|(i, &x)| eval(e, x, i as i32)).collect(),
        });
    }
    Ok(out)
}

#[allow(dead_code)]
fn main() {
    let program = match std::env::args().nth(1) {
        Some(path) => match std::fs::read_to_string(&path) {
            Ok(text) => text,
            Err(e) => {
                eprintln!("toy_kernels: {}: {}", path, e);
                std::process::exit(2);
            }
        },
        None => PROGRAM.to_string(),
    };
    let n = 200;
    match run(&program, n) {
        Ok(outcomes) => {
            let mut bad = false;
            for o in &outcomes {
                let same = (0..n as usize).filter(|&k| o.gpu[k] == o.host[k] && o.host[k] == o.eval[k]).count();
                println!("{}: {} of {} elements agree (GPU, host JIT, evaluator); out[0..4] = {:?}", o.name, same, n, &o.gpu[..4]);
                bad |= same != n as usize;
            }
            if bad {
                std::process::exit(1);
            }
        }
        Err(e) => {
            eprintln!("toy_kernels: {}", e);
            std::process::exit(1);
        }
    }
}
