//! [`KernelBuilder`]: a `FunctionBuilder` with the kernel intrinsics of
//! `docs/kernels.md` (thread and block indices, the CTA barrier, shuffles,
//! votes, shared variables, atomics), so a kernel built from Rust reads like
//! CUDA. Each intrinsic is a call of a reserved `%ursa_*` function,
//! declared through the module ([`Linkage::Import`]) the first time it is
//! used; an intrinsic is described by an [`Intrinsic`] (name and signature),
//! so new ones need no new code here.

use std::collections::HashMap;
use std::ops::{Deref, DerefMut};

use cranelift_codegen::ir::{types, AbiParam, AtomicRmwOp, FuncRef, GlobalValue, InstBuilder, MemFlagsData, Type, Value};
use cranelift_frontend::FunctionBuilder;
use cranelift_module::{DataId, FuncId, Linkage, Module, ModuleResult};

/// A kernel intrinsic: the reserved function name and its signature
/// (`docs/kernels.md`).
///
/// ```
/// use ursa_backend::module::kernel_builder::{Intrinsic, TID_X};
/// assert_eq!(TID_X.name, "ursa_tid_x");
/// let clock = Intrinsic { name: "ursa_clock", params: &[], returns: &[cranelift_codegen::ir::types::I64] };
/// # let _ = clock;
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Intrinsic {
    /// The function name, without `%` (`ursa_tid_x`).
    pub name: &'static str,
    /// Parameter types.
    pub params: &'static [Type],
    /// Result types.
    pub returns: &'static [Type],
}

const I32_RESULT: &[Type] = &[types::I32];

macro_rules! index_intrinsics {
    ($($(#[$doc:meta])* $c:ident = $n:literal;)*) => {
        $($(#[$doc])* pub const $c: Intrinsic = Intrinsic { name: $n, params: &[], returns: I32_RESULT };)*
    };
}

index_intrinsics! {
    /// `threadIdx.x` (`%ursa_tid_x() -> i32`).
    TID_X = "ursa_tid_x";
    /// `threadIdx.y`.
    TID_Y = "ursa_tid_y";
    /// `threadIdx.z`.
    TID_Z = "ursa_tid_z";
    /// `blockIdx.x` (`%ursa_ctaid_x() -> i32`).
    CTAID_X = "ursa_ctaid_x";
    /// `blockIdx.y`.
    CTAID_Y = "ursa_ctaid_y";
    /// `blockIdx.z`.
    CTAID_Z = "ursa_ctaid_z";
    /// `blockDim.x` (`%ursa_ntid_x() -> i32`).
    NTID_X = "ursa_ntid_x";
    /// `blockDim.y`.
    NTID_Y = "ursa_ntid_y";
    /// `blockDim.z`.
    NTID_Z = "ursa_ntid_z";
    /// `gridDim.x` (`%ursa_nctaid_x() -> i32`).
    NCTAID_X = "ursa_nctaid_x";
    /// `gridDim.y`.
    NCTAID_Y = "ursa_nctaid_y";
    /// `gridDim.z`.
    NCTAID_Z = "ursa_nctaid_z";
    /// The lane in the warp, 0–31 (`%ursa_laneid() -> i32`).
    LANEID = "ursa_laneid";
}

/// `__syncthreads()` (`%ursa_barrier()`).
pub const BARRIER: Intrinsic = Intrinsic { name: "ursa_barrier", params: &[], returns: &[] };

const SHFL_PARAMS: &[Type] = &[types::I32, types::I32];
/// `__shfl_sync(~0, v, lane)` on an `i32` (`%ursa_shfl_idx(i32 v, i32 lane) -> i32`).
pub const SHFL_IDX: Intrinsic = Intrinsic { name: "ursa_shfl_idx", params: SHFL_PARAMS, returns: I32_RESULT };
/// `__shfl_up_sync(~0, v, delta)` on an `i32`.
pub const SHFL_UP: Intrinsic = Intrinsic { name: "ursa_shfl_up", params: SHFL_PARAMS, returns: I32_RESULT };
/// `__shfl_down_sync(~0, v, delta)` on an `i32`.
pub const SHFL_DOWN: Intrinsic = Intrinsic { name: "ursa_shfl_down", params: SHFL_PARAMS, returns: I32_RESULT };
/// `__shfl_xor_sync(~0, v, mask)` on an `i32`.
pub const SHFL_BFLY: Intrinsic = Intrinsic { name: "ursa_shfl_bfly", params: SHFL_PARAMS, returns: I32_RESULT };
/// `__any_sync(~0, p)`: an `i8` 0 or 1 (`%ursa_vote_any(i8) -> i8`).
pub const VOTE_ANY: Intrinsic = Intrinsic { name: "ursa_vote_any", params: &[types::I8], returns: &[types::I8] };
/// `__all_sync(~0, p)`.
pub const VOTE_ALL: Intrinsic = Intrinsic { name: "ursa_vote_all", params: &[types::I8], returns: &[types::I8] };
/// `__ballot_sync(~0, p)`: the mask of lanes where `p` ≠ 0 (`%ursa_ballot(i8) -> i32`).
pub const BALLOT: Intrinsic = Intrinsic { name: "ursa_ballot", params: &[types::I8], returns: I32_RESULT };

/// A dimension of the thread, block or grid index.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dim {
    X,
    Y,
    Z,
}

/// A [`FunctionBuilder`] (reached through `Deref`, so `k.ins()` works) with
/// the kernel intrinsics, declared in the module `M` as they are used.
///
/// ```
/// use cranelift_codegen::ir::{types, AbiParam, InstBuilder, MemFlagsData};
/// use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext};
/// use cranelift_module::{Linkage, Module};
/// use ursa_backend::module::kernel_builder::{Dim, KernelBuilder};
///
/// // out[i] = i, for i = blockIdx.x * blockDim.x + threadIdx.x.
/// let mut module = ursa_backend::UrsaModule::new();
/// let mut ctx = module.make_context();
/// ctx.func.signature.params.push(AbiParam::new(types::I64));
/// let id = module.declare_function("iota", Linkage::Export, &ctx.func.signature).unwrap();
/// let mut fctx = FunctionBuilderContext::new();
/// let mut b = FunctionBuilder::new(&mut ctx.func, &mut fctx);
/// let entry = b.create_block();
/// b.append_block_params_for_function_params(entry);
/// b.switch_to_block(entry);
/// let out = b.block_params(entry)[0];
/// let mut k = KernelBuilder::new(&mut module, &mut b);
/// let i = k.global_idx(Dim::X).unwrap();
/// let at = k.element_addr(out, i, 4);
/// k.ins().store(MemFlagsData::trusted(), i, at, 0);
/// k.ins().return_(&[]);
/// b.seal_all_blocks();
/// b.finalize(module.target_config());
/// module.define_function(id, &mut ctx).unwrap();
/// let program = ursa_sim::Program::load(&module.finish().unwrap()).unwrap();
///
/// let mut gpu = ursa_sim::Gpu::new();
/// let buf = gpu.alloc(4 * 64, 4);
/// let cfg = ursa_sim::LaunchConfig { grid: [2, 1, 1], block: [32, 1, 1], ..Default::default() };
/// gpu.launch(&program, "iota", &cfg, &[ursa_sim::Arg::Ptr(buf)]).unwrap();
/// let got = gpu.read(buf, 4 * 64).unwrap();
/// assert_eq!(&got[4 * 40..4 * 41], 40u32.to_le_bytes());
/// ```
pub struct KernelBuilder<'a, 'f, M: Module + ?Sized> {
    module: &'a mut M,
    builder: &'a mut FunctionBuilder<'f>,
    funcs: HashMap<&'static str, FuncRef>,
    data: HashMap<DataId, GlobalValue>,
}

impl<'f, M: Module + ?Sized> Deref for KernelBuilder<'_, 'f, M> {
    type Target = FunctionBuilder<'f>;
    fn deref(&self) -> &FunctionBuilder<'f> {
        self.builder
    }
}

impl<'f, M: Module + ?Sized> DerefMut for KernelBuilder<'_, 'f, M> {
    fn deref_mut(&mut self) -> &mut FunctionBuilder<'f> {
        self.builder
    }
}

impl<'a, 'f, M: Module + ?Sized> KernelBuilder<'a, 'f, M> {
    /// The kernel being built by `builder`, its intrinsics declared in `module`.
    /// (Example: [`KernelBuilder`].)
    pub fn new(module: &'a mut M, builder: &'a mut FunctionBuilder<'f>) -> Self {
        KernelBuilder { module, builder, funcs: HashMap::new(), data: HashMap::new() }
    }

    /// The module, to declare other functions and data.
    ///
    /// ```
    /// # use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext};
    /// # let mut module = ursa_backend::UrsaModule::new();
    /// # let mut func = cranelift_codegen::ir::Function::new();
    /// # let mut fctx = FunctionBuilderContext::new();
    /// # let mut b = FunctionBuilder::new(&mut func, &mut fctx);
    /// use cranelift_module::Module;
    /// let mut k = ursa_backend::module::kernel_builder::KernelBuilder::new(&mut module, &mut b);
    /// assert_eq!(k.module().target_config().pointer_bits(), 64);
    /// ```
    pub fn module(&mut self) -> &mut M {
        self.module
    }

    /// The function `id` of the module, to call from this kernel
    /// (`k.ins().call(k.func_ref(id), args)`; `declare_func_in_func`).
    ///
    /// ```
    /// # use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext};
    /// # let mut module = ursa_backend::UrsaModule::new();
    /// # let mut func = cranelift_codegen::ir::Function::new();
    /// # let mut fctx = FunctionBuilderContext::new();
    /// # let mut b = FunctionBuilder::new(&mut func, &mut fctx);
    /// # let block = b.create_block();
    /// # b.switch_to_block(block);
    /// use cranelift_codegen::ir::InstBuilder;
    /// use cranelift_module::{Linkage, Module};
    /// let helper = module.declare_function("helper", Linkage::Local, &module.make_signature()).unwrap();
    /// let mut k = ursa_backend::module::kernel_builder::KernelBuilder::new(&mut module, &mut b);
    /// let f = k.func_ref(helper);
    /// k.ins().call(f, &[]);
    /// ```
    pub fn func_ref(&mut self, id: FuncId) -> FuncRef {
        self.module.declare_func_in_func(id, self.builder.func)
    }

    /// Calls the intrinsic `intr` with `args`; its results. The first use
    /// declares it in the module (an error if the module refuses it, e.g. an
    /// unknown `ursa_` name or another signature than the compiler's).
    ///
    /// ```
    /// # use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext};
    /// # let mut module = ursa_backend::UrsaModule::new();
    /// # let mut func = cranelift_codegen::ir::Function::new();
    /// # let mut fctx = FunctionBuilderContext::new();
    /// # let mut b = FunctionBuilder::new(&mut func, &mut fctx);
    /// # let block = b.create_block();
    /// # b.switch_to_block(block);
    /// use ursa_backend::module::kernel_builder::{Intrinsic, KernelBuilder, LANEID};
    /// let mut k = KernelBuilder::new(&mut module, &mut b);
    /// let lane = k.call_intrinsic(&LANEID, &[]).unwrap()[0];
    /// let bogus = Intrinsic { name: "ursa_no_such_thing", params: &[], returns: &[] };
    /// assert!(k.call_intrinsic(&bogus, &[]).is_err());
    /// # let _ = lane;
    /// ```
    pub fn call_intrinsic(&mut self, intr: &Intrinsic, args: &[Value]) -> ModuleResult<Vec<Value>> {
        let fref = match self.funcs.get(intr.name) {
            Some(&f) => f,
            None => {
                let mut sig = self.module.make_signature();
                sig.params.extend(intr.params.iter().map(|&t| AbiParam::new(t)));
                sig.returns.extend(intr.returns.iter().map(|&t| AbiParam::new(t)));
                let id = self.module.declare_function(intr.name, Linkage::Import, &sig)?;
                let f = self.module.declare_func_in_func(id, self.builder.func);
                self.funcs.insert(intr.name, f);
                f
            }
        };
        let call = self.builder.ins().call(fref, args);
        Ok(self.builder.inst_results(call).to_vec())
    }

    /// The single result of a one-result intrinsic.
    fn call1(&mut self, intr: &Intrinsic, args: &[Value]) -> ModuleResult<Value> {
        Ok(self.call_intrinsic(intr, args)?[0])
    }

    /// `threadIdx.d` (an `i32`).
    ///
    /// ```
    /// # use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext};
    /// # let mut module = ursa_backend::UrsaModule::new();
    /// # let mut func = cranelift_codegen::ir::Function::new();
    /// # let mut fctx = FunctionBuilderContext::new();
    /// # let mut b = FunctionBuilder::new(&mut func, &mut fctx);
    /// # let block = b.create_block();
    /// # b.switch_to_block(block);
    /// use ursa_backend::module::kernel_builder::{Dim, KernelBuilder};
    /// let mut k = KernelBuilder::new(&mut module, &mut b);
    /// let (tx, ty) = (k.thread_idx(Dim::X).unwrap(), k.thread_idx(Dim::Y).unwrap());
    /// # let _ = (tx, ty);
    /// ```
    pub fn thread_idx(&mut self, d: Dim) -> ModuleResult<Value> {
        self.call1(pick(d, &TID_X, &TID_Y, &TID_Z), &[])
    }

    /// `blockIdx.d` (an `i32`; example as [`thread_idx`](Self::thread_idx)).
    pub fn block_idx(&mut self, d: Dim) -> ModuleResult<Value> {
        self.call1(pick(d, &CTAID_X, &CTAID_Y, &CTAID_Z), &[])
    }

    /// `blockDim.d` (an `i32`; example as [`thread_idx`](Self::thread_idx)).
    pub fn block_dim(&mut self, d: Dim) -> ModuleResult<Value> {
        self.call1(pick(d, &NTID_X, &NTID_Y, &NTID_Z), &[])
    }

    /// `gridDim.d` (an `i32`; example as [`thread_idx`](Self::thread_idx)).
    pub fn grid_dim(&mut self, d: Dim) -> ModuleResult<Value> {
        self.call1(pick(d, &NCTAID_X, &NCTAID_Y, &NCTAID_Z), &[])
    }

    /// The lane of the thread in its warp (an `i32`; example as
    /// [`call_intrinsic`](Self::call_intrinsic)).
    pub fn lane_id(&mut self) -> ModuleResult<Value> {
        self.call1(&LANEID, &[])
    }

    /// `blockIdx.d * blockDim.d + threadIdx.d` (an `i32`; example:
    /// [`KernelBuilder`]).
    pub fn global_idx(&mut self, d: Dim) -> ModuleResult<Value> {
        let (c, n, t) = (self.block_idx(d)?, self.block_dim(d)?, self.thread_idx(d)?);
        Ok(self.mul_add(c, n, t))
    }

    /// `a * b + c`.
    fn mul_add(&mut self, a: Value, b: Value, c: Value) -> Value {
        let p = self.builder.ins().imul(a, b);
        self.builder.ins().iadd(p, c)
    }

    /// `__syncthreads()`: every thread of the CTA waits here.
    ///
    /// ```
    /// # use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext};
    /// # let mut module = ursa_backend::UrsaModule::new();
    /// # let mut func = cranelift_codegen::ir::Function::new();
    /// # let mut fctx = FunctionBuilderContext::new();
    /// # let mut b = FunctionBuilder::new(&mut func, &mut fctx);
    /// # let block = b.create_block();
    /// # b.switch_to_block(block);
    /// let mut k = ursa_backend::module::kernel_builder::KernelBuilder::new(&mut module, &mut b);
    /// k.sync_threads().unwrap();
    /// ```
    pub fn sync_threads(&mut self) -> ModuleResult<()> {
        self.call_intrinsic(&BARRIER, &[]).map(|_| ())
    }

    /// `__shfl_sync(~0, v, lane)` on the `i32` `v` ([`SHFL_IDX`]); `shfl`
    /// with [`SHFL_UP`], [`SHFL_DOWN`] or [`SHFL_BFLY`] for the other modes.
    ///
    /// ```
    /// # use cranelift_codegen::ir::{types, InstBuilder};
    /// # use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext};
    /// # let mut module = ursa_backend::UrsaModule::new();
    /// # let mut func = cranelift_codegen::ir::Function::new();
    /// # let mut fctx = FunctionBuilderContext::new();
    /// # let mut b = FunctionBuilder::new(&mut func, &mut fctx);
    /// # let block = b.create_block();
    /// # b.switch_to_block(block);
    /// use ursa_backend::module::kernel_builder::{KernelBuilder, SHFL_BFLY};
    /// let mut k = KernelBuilder::new(&mut module, &mut b);
    /// let v = k.ins().iconst(types::I32, 5);
    /// let mask = k.ins().iconst(types::I32, 16);
    /// let from_lane_0 = k.shfl_idx(v, mask).unwrap();
    /// let partner = k.shfl(&SHFL_BFLY, v, mask).unwrap();
    /// # let _ = (from_lane_0, partner);
    /// ```
    pub fn shfl_idx(&mut self, v: Value, lane: Value) -> ModuleResult<Value> {
        self.shfl(&SHFL_IDX, v, lane)
    }

    /// A shuffle of `v` by the intrinsic `intr` (one of the `SHFL_*`, or a
    /// typed shuffle with the same two-operand shape); example as
    /// [`shfl_idx`](Self::shfl_idx).
    pub fn shfl(&mut self, intr: &Intrinsic, v: Value, b: Value) -> ModuleResult<Value> {
        self.call1(intr, &[v, b])
    }

    /// `__any_sync(~0, p)` of an `i8` predicate: `i8` 1 if `p` ≠ 0 in any
    /// active lane.
    ///
    /// ```
    /// # use cranelift_codegen::ir::{types, InstBuilder};
    /// # use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext};
    /// # let mut module = ursa_backend::UrsaModule::new();
    /// # let mut func = cranelift_codegen::ir::Function::new();
    /// # let mut fctx = FunctionBuilderContext::new();
    /// # let mut b = FunctionBuilder::new(&mut func, &mut fctx);
    /// # let block = b.create_block();
    /// # b.switch_to_block(block);
    /// let mut k = ursa_backend::module::kernel_builder::KernelBuilder::new(&mut module, &mut b);
    /// let p = k.ins().iconst(types::I8, 1);
    /// let (any, all, mask) = (k.vote_any(p).unwrap(), k.vote_all(p).unwrap(), k.ballot(p).unwrap());
    /// # let _ = (any, all, mask);
    /// ```
    pub fn vote_any(&mut self, p: Value) -> ModuleResult<Value> {
        self.call1(&VOTE_ANY, &[p])
    }

    /// `__all_sync(~0, p)` (example as [`vote_any`](Self::vote_any)).
    pub fn vote_all(&mut self, p: Value) -> ModuleResult<Value> {
        self.call1(&VOTE_ALL, &[p])
    }

    /// `__ballot_sync(~0, p)`: an `i32` mask (example as
    /// [`vote_any`](Self::vote_any)).
    pub fn ballot(&mut self, p: Value) -> ModuleResult<Value> {
        self.call1(&BALLOT, &[p])
    }

    /// The address (an `i64` generic address) of the shared variable `var`
    /// (from [`UrsaModule::declare_shared`](crate::UrsaModule::declare_shared)).
    ///
    /// ```
    /// # use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext};
    /// # let mut module = ursa_backend::UrsaModule::new();
    /// # let mut func = cranelift_codegen::ir::Function::new();
    /// # let mut fctx = FunctionBuilderContext::new();
    /// # let mut b = FunctionBuilder::new(&mut func, &mut fctx);
    /// # let block = b.create_block();
    /// # b.switch_to_block(block);
    /// let tile = module.declare_shared("tile", 64 * 4, 16).unwrap();
    /// let mut k = ursa_backend::module::kernel_builder::KernelBuilder::new(&mut module, &mut b);
    /// let base = k.shared(tile);
    /// # let _ = base;
    /// ```
    pub fn shared(&mut self, var: DataId) -> Value {
        self.address_of(var)
    }

    /// The `i64` address of the data object `id` of the module: a shared
    /// variable ([`shared`](Self::shared)) or an object in global or
    /// constant memory (`docs/module.md`, "Data objects"); `symbol_value`
    /// of its global value, declared in the function once.
    pub fn address_of(&mut self, var: DataId) -> Value {
        let gv = match self.data.get(&var) {
            Some(&gv) => gv,
            None => {
                let gv = self.module.declare_data_in_func(var, self.builder.func);
                self.data.insert(var, gv);
                gv
            }
        };
        self.builder.ins().symbol_value(types::I64, gv)
    }

    /// `base + index * size`: the `i64` address of element `index` (an
    /// `i32`, taken as unsigned) of `size`-byte elements at `base` (example:
    /// [`KernelBuilder`]).
    pub fn element_addr(&mut self, base: Value, index: Value, size: i64) -> Value {
        let i = match self.builder.func.dfg.value_type(index) {
            types::I64 => index,
            _ => self.builder.ins().uextend(types::I64, index),
        };
        let off = self.builder.ins().imul_imm_u(i, size);
        self.builder.ins().iadd(base, off)
    }

    /// `atomicAdd(addr, v)`: adds `v` (an integer) to memory at `addr`
    /// atomically; the old value. A CLIF `atomic_rmw`, sequentially
    /// consistent (`docs/kernels.md`, "Atomics").
    ///
    /// ```
    /// # use cranelift_codegen::ir::{types, InstBuilder};
    /// # use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext};
    /// # let mut module = ursa_backend::UrsaModule::new();
    /// # let mut func = cranelift_codegen::ir::Function::new();
    /// # let mut fctx = FunctionBuilderContext::new();
    /// # let mut b = FunctionBuilder::new(&mut func, &mut fctx);
    /// # let block = b.create_block();
    /// # b.switch_to_block(block);
    /// use cranelift_codegen::ir::AtomicRmwOp;
    /// let mut k = ursa_backend::module::kernel_builder::KernelBuilder::new(&mut module, &mut b);
    /// let addr = k.ins().iconst(types::I64, 0x1_0000_0000);
    /// let one = k.ins().iconst(types::I32, 1);
    /// let old = k.atomic_add(addr, one);
    /// let max = k.atomic_rmw(AtomicRmwOp::Smax, addr, one);
    /// let cas = k.atomic_cas(addr, old, max);
    /// # let _ = cas;
    /// ```
    pub fn atomic_add(&mut self, addr: Value, v: Value) -> Value {
        self.atomic_rmw(AtomicRmwOp::Add, addr, v)
    }

    /// The atomic read-modify-write `op` of `v` at `addr`; the old value
    /// (example as [`atomic_add`](Self::atomic_add)).
    pub fn atomic_rmw(&mut self, op: AtomicRmwOp, addr: Value, v: Value) -> Value {
        let ty = self.builder.func.dfg.value_type(v);
        self.builder.ins().atomic_rmw(ty, MemFlagsData::trusted(), op, addr, v)
    }

    /// `atomicCAS(addr, expected, new)`: the old value (example as
    /// [`atomic_add`](Self::atomic_add)).
    pub fn atomic_cas(&mut self, addr: Value, expected: Value, new: Value) -> Value {
        self.builder.ins().atomic_cas(MemFlagsData::trusted(), addr, expected, new)
    }
}

/// The intrinsic of dimension `d`.
fn pick<'i>(d: Dim, x: &'i Intrinsic, y: &'i Intrinsic, z: &'i Intrinsic) -> &'i Intrinsic {
    match d {
        Dim::X => x,
        Dim::Y => y,
        Dim::Z => z,
    }
}
