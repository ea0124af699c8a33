//! `UrsaModule` and `KernelBuilder` (`docs/module.md`): the two examples run
//! and checked, kernels built with `FunctionBuilder` run on the simulator,
//! and one test per error the module reports.

#[path = "../examples/matmul_tiled.rs"]
mod matmul_tiled;
#[path = "../examples/toy_kernels.rs"]
mod toy_kernels;

use cranelift_codegen::ir::{condcodes::IntCC, types, AbiParam, InstBuilder, MemFlagsData, Signature};
use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext};
use cranelift_module::{DataDescription, FuncId, Linkage, Module, ModuleError};
use ursa_backend::module::kernel_builder::{Dim, KernelBuilder, SHFL_BFLY};
use ursa_backend::UrsaModule;
use ursa_sim::host::Device;

#[test]
fn matmul_example_matches_the_host() {
    for n in [8, 32] {
        let (got, want, cycles) = matmul_tiled::run(n).expect("runs");
        assert_eq!(got.len(), (n * n) as usize);
        let wrong: Vec<usize> = (0..got.len()).filter(|&k| got[k].to_bits() != want[k].to_bits()).collect();
        assert!(
            wrong.is_empty(),
            "N = {}: {} elements differ, first at {}: {} vs {}",
            n,
            wrong.len(),
            wrong[0],
            got[wrong[0]],
            want[wrong[0]]
        );
        assert!(cycles > 0);
    }
    assert!(matmul_tiled::run(12).is_err(), "N not a multiple of the tile is refused");
}

#[test]
fn matmul_example_uses_shared_memory_and_barriers() {
    let obj = ursa_emit::elf::read(&matmul_tiled::build(matmul_tiled::OPT_LEVEL).expect("builds")).expect("reads");
    let f = obj.function("matmul").expect("the kernel");
    assert!(f.kernel);
    assert_eq!(f.shared_size, 2 * 4 * matmul_tiled::TILE * matmul_tiled::TILE);
    assert_eq!(f.params.len(), 4);
}

/// The example at `none` too (at `speed`, `opt_merge_accesses` merges its
/// pairs of adjacent `f32` loads from shared memory into 64-bit loads).
#[test]
fn matmul_example_compiles_at_none() {
    let bytes = matmul_tiled::build(ursa_backend::OptLevel::None).expect("compiles at none");
    assert_ne!(bytes, matmul_tiled::build(ursa_backend::OptLevel::Speed).expect("compiles at speed"));
}

#[test]
fn toy_example_agrees_with_the_host_jit_and_the_evaluator() {
    let outcomes = toy_kernels::run(toy_kernels::PROGRAM, 200).expect("runs");
    assert_eq!(outcomes.len(), 4);
    for o in &outcomes {
        assert_eq!(o.gpu, o.eval, "{}: GPU vs evaluator", o.name);
        assert_eq!(o.host, o.eval, "{}: host JIT vs evaluator", o.name);
    }
    // Not a constant: the evaluator computes something that depends on x.
    let clamp = outcomes.iter().find(|o| o.name == "clamp").expect("clamp");
    assert!(clamp.eval.contains(&0) && clamp.eval.contains(&50) && clamp.eval.iter().any(|&v| v > 0 && v < 50));
    assert!(toy_kernels::run("bad: x +", 4).is_err());
}

/// A kernel `name(out: i64)` built by `body` (given the kernel builder and
/// `out`), defined in `m`.
fn kernel(
    m: &mut UrsaModule,
    name: &str,
    body: impl FnOnce(&mut KernelBuilder<'_, '_, UrsaModule>, cranelift_codegen::ir::Value),
) -> FuncId {
    let mut ctx = m.make_context();
    ctx.func.signature.params.push(AbiParam::new(types::I64));
    let id = m.declare_function(name, Linkage::Export, &ctx.func.signature).expect("declares");
    let mut fctx = FunctionBuilderContext::new();
    let mut b = FunctionBuilder::new(&mut ctx.func, &mut fctx);
    let entry = b.create_block();
    b.append_block_params_for_function_params(entry);
    b.switch_to_block(entry);
    let out = b.block_params(entry)[0];
    let mut k = KernelBuilder::new(m, &mut b);
    body(&mut k, out);
    k.ins().return_(&[]);
    b.seal_all_blocks();
    b.finalize(m.target_config());
    m.define_function(id, &mut ctx).expect("defines");
    id
}

/// Launches `name(out)` with `threads` threads in one CTA through the host
/// API (a typed buffer, a checked launch); the `i32`s of `out`.
fn launch(bytes: &[u8], name: &str, threads: u32, words: u64) -> Vec<i32> {
    let dev = Device::new();
    let k = dev.load_module(bytes).expect("loads").kernel(name).expect("is a kernel");
    let out = dev.alloc_zeros::<i32>(words as usize).expect("allocates");
    k.launch(1, threads, 0, &[&out]).expect("runs");
    out.to_vec().expect("reads back")
}

/// A 64-bit division whose operands do not fit in 32 bits calls a runtime
/// routine (`docs/division.md`): the module's object defines it, and the
/// kernel gets the quotients of every thread.
#[test]
fn a_module_that_divides_in_64_bits_carries_the_runtime_routine() {
    let mut m = UrsaModule::new();
    kernel(&mut m, "div", |k, out| {
        let tid = k.thread_idx(Dim::X).expect("declares the intrinsic");
        let t = k.ins().sextend(types::I64, tid);
        let x = k.ins().ishl_imm_u(t, 40);
        let x = k.ins().iadd_imm_s(x, 12345);
        let d = k.ins().iadd_imm_s(t, 7);
        let q = k.ins().sdiv(x, d);
        let lo = k.ins().ireduce(types::I32, q);
        let addr = k.element_addr(out, tid, 4);
        k.ins().store(MemFlagsData::trusted(), lo, addr, 0);
    });
    let bytes = m.finish().expect("compiles");
    let obj = ursa_emit::elf::read(&bytes).expect("reads");
    assert!(obj.functions.iter().any(|f| f.name == "ursa_rt_sdiv64"), "the routine is in the object");
    let want: Vec<i32> = (0..32i64).map(|t| (((t << 40) + 12345) / (t + 7)) as i32).collect();
    assert_eq!(launch(&bytes, "div", 32, 32), want);
}

/// The host API checks a launch of a module's kernel against its parameter
/// table: a wrong count or size names the kernel and the parameter.
#[test]
fn host_api_checks_the_arguments_of_a_module_kernel() {
    let mut m = UrsaModule::new();
    kernel(&mut m, "fill", |k, out| {
        let tid = k.thread_idx(Dim::X).expect("declares the intrinsic");
        let addr = k.element_addr(out, tid, 4);
        k.ins().store(MemFlagsData::trusted(), tid, addr, 0);
    });
    let bytes = m.finish().expect("compiles");
    let dev = Device::new();
    let fill = dev.load_module(&bytes).expect("loads").kernel("fill").expect("is a kernel");
    let out = dev.alloc_zeros::<i32>(8).expect("allocates");
    fill.launch(1, 8, 0, &[&out]).expect("runs");
    assert_eq!(out.to_vec().unwrap(), [0, 1, 2, 3, 4, 5, 6, 7]);
    let count = fill.launch(1, 8, 0, &[&out, &out]).unwrap_err().to_string();
    assert!(count.contains("kernel `fill` takes 1 argument"), "{}", count);
    let size = fill.launch(1, 8, 0, &[&7i32]).unwrap_err().to_string();
    assert!(size.contains("parameter") && size.contains("kernel `fill`"), "{}", size);
}

#[test]
fn warp_reduction_with_shuffles_votes_and_a_device_function() {
    // A device function `twice(x) = 2x`, a kernel that sums 2*lane over the
    // warp with butterfly shuffles, counts lanes with a ballot, and adds the
    // sum into out[1] atomically from every lane.
    let mut m = UrsaModule::new();
    let mut sig = m.make_signature();
    sig.params.push(AbiParam::new(types::I32));
    sig.returns.push(AbiParam::new(types::I32));
    let twice = m.declare_function("twice", Linkage::Local, &sig).unwrap();
    let mut ctx = m.make_context();
    ctx.func.signature = sig;
    let mut fctx = FunctionBuilderContext::new();
    let mut b = FunctionBuilder::new(&mut ctx.func, &mut fctx);
    let e = b.create_block();
    b.append_block_params_for_function_params(e);
    b.switch_to_block(e);
    let x = b.block_params(e)[0];
    let y = b.ins().iadd(x, x);
    b.ins().return_(&[y]);
    b.seal_all_blocks();
    b.finalize(m.target_config());
    m.define_function(twice, &mut ctx).unwrap();
    kernel(&mut m, "reduce", |k, out| {
        let lane = k.lane_id().unwrap();
        let f = k.func_ref(twice);
        let call = k.ins().call(f, &[lane]);
        let mut v = k.inst_results(call)[0];
        for d in [16, 8, 4, 2, 1] {
            let dv = k.ins().iconst(types::I32, d);
            let other = k.shfl(&SHFL_BFLY, v, dv).unwrap();
            v = k.ins().iadd(v, other);
        }
        let odd = k.ins().band_imm_u(lane, 1);
        let p = k.ins().icmp_imm_u(IntCC::NotEqual, odd, 0);
        let mask = k.ballot(p).unwrap();
        let lane0 = k.ins().icmp_imm_u(IntCC::Equal, lane, 0);
        let one = k.ins().iconst(types::I8, 1);
        let all = k.vote_all(one).unwrap();
        let all = k.ins().uextend(types::I32, all);
        let (then_b, join) = (k.create_block(), k.create_block());
        k.ins().brif(lane0, then_b, &[], join, &[]);
        k.switch_to_block(then_b);
        k.ins().store(MemFlagsData::trusted(), v, out, 0);
        k.ins().store(MemFlagsData::trusted(), mask, out, 8);
        k.ins().store(MemFlagsData::trusted(), all, out, 12);
        k.ins().jump(join, &[]);
        k.switch_to_block(join);
        let at = k.ins().iadd_imm_u(out, 4);
        let one = k.ins().iconst(types::I32, 1);
        k.atomic_add(at, one);
    });
    let got = launch(&m.finish().unwrap(), "reduce", 32, 4);
    assert_eq!(got, vec![2 * (0..32).sum::<i32>(), 32, 0xAAAA_AAAAu32 as i32, 1]);
}

#[test]
fn shared_variable_declared_through_the_module_reverses_a_block() {
    let mut m = UrsaModule::new();
    let tile = m.declare_shared("tile", 64 * 4, 16).unwrap();
    kernel(&mut m, "reverse", |k, out| {
        let t = k.thread_idx(Dim::X).unwrap();
        let n = k.block_dim(Dim::X).unwrap();
        let base = k.shared(tile);
        let mine = k.element_addr(base, t, 4);
        let sq = k.ins().imul(t, t);
        k.ins().store(MemFlagsData::trusted(), sq, mine, 0);
        k.sync_threads().unwrap();
        let r = k.ins().isub(n, t);
        let r = k.ins().iadd_imm_s(r, -1);
        let theirs = k.element_addr(base, r, 4);
        let v = k.ins().load(types::I32, MemFlagsData::trusted(), theirs, 0);
        let at = k.element_addr(out, t, 4);
        k.ins().store(MemFlagsData::trusted(), v, at, 0);
    });
    let bytes = m.finish().unwrap();
    let obj = ursa_emit::elf::read(&bytes).unwrap();
    assert_eq!(obj.function("reverse").unwrap().shared_size, 256);
    let got = launch(&bytes, "reverse", 64, 64);
    let want: Vec<i32> = (0..64).map(|t| (63 - t) * (63 - t)).collect();
    assert_eq!(got, want);
}

#[test]
fn target_config_and_triple() {
    let m = UrsaModule::new();
    let c = m.target_config();
    assert_eq!(c.pointer_type(), types::I64);
    assert_eq!(c.default_call_conv, ursa_backend::module::ursa_module::CALL_CONV);
    assert_eq!(m.make_signature().call_conv, c.default_call_conv);
    let t = ursa_backend::module::ursa_module::triple();
    assert_eq!(t.vendor.as_str(), "ursa");
    assert_eq!(t.to_string().parse::<target_lexicon::Triple>().unwrap(), t);
}

/// A module error's text.
fn text(e: ModuleError) -> String {
    e.to_string()
}

/// Defines `id` (a `() -> ()` function) with an empty body.
fn define_empty(m: &mut UrsaModule, id: FuncId) -> Result<(), ModuleError> {
    let mut ctx = m.make_context();
    let mut fctx = FunctionBuilderContext::new();
    let mut b = FunctionBuilder::new(&mut ctx.func, &mut fctx);
    let e = b.create_block();
    b.switch_to_block(e);
    b.ins().return_(&[]);
    b.seal_all_blocks();
    b.finalize(m.target_config());
    m.define_function(id, &mut ctx)
}

/// A function `() -> ()` with an empty body, defined as `name` with `linkage`.
fn empty(m: &mut UrsaModule, name: &str, linkage: Linkage) -> Result<FuncId, ModuleError> {
    let id = m.declare_function(name, linkage, &m.make_signature())?;
    define_empty(m, id)?;
    Ok(id)
}

#[test]
fn error_duplicate_definition() {
    let mut m = UrsaModule::new();
    let id = empty(&mut m, "f", Linkage::Export).unwrap();
    assert!(matches!(define_empty(&mut m, id), Err(ModuleError::DuplicateDefinition(n)) if n == "f"));
    let mut d = DataDescription::new();
    d.define_zeroinit(4);
    let s = m.declare_data("ursa_shared_s", Linkage::Local, true, false).unwrap();
    m.define_data(s, &d).unwrap();
    assert!(matches!(m.define_data(s, &d), Err(ModuleError::DuplicateDefinition(n)) if n == "ursa_shared_s"));
}

#[test]
fn error_undefined_function() {
    let mut m = UrsaModule::new();
    m.declare_function("never", Linkage::Local, &m.make_signature()).unwrap();
    let e = text(m.finish().unwrap_err());
    assert!(e.contains("`never` is declared") && e.contains("never defined"), "{}", e);

    // A call of an import that is no intrinsic.
    let mut m = UrsaModule::new();
    let ext = m.declare_function("elsewhere", Linkage::Import, &m.make_signature()).unwrap();
    kernel(&mut m, "k", |k, _| {
        let f = k.func_ref(ext);
        k.ins().call(f, &[]);
    });
    let e = text(m.finish().unwrap_err());
    assert!(e.contains("elsewhere") && e.contains("imports must be intrinsics"), "{}", e);
}

#[test]
fn error_reserved_names() {
    let mut m = UrsaModule::new();
    let sig = m.make_signature();
    // Not an intrinsic.
    let e = text(m.declare_function("ursa_nothing", Linkage::Import, &sig).unwrap_err());
    assert!(e.contains("unknown intrinsic %ursa_nothing"), "{}", e);
    // An intrinsic with another signature.
    let e = text(m.declare_function("ursa_tid_x", Linkage::Import, &sig).unwrap_err());
    assert!(e.contains("must be declared `() -> i32`"), "{}", e);
    // An intrinsic defined as a function.
    let mut tid = m.make_signature();
    tid.returns.push(AbiParam::new(types::I32));
    let e = text(m.declare_function("ursa_tid_x", Linkage::Export, &tid).unwrap_err());
    assert!(e.contains("Linkage::Import"), "{}", e);
    let e = text(empty(&mut m, "ursa_mine", Linkage::Local).unwrap_err());
    assert!(e.contains("reserved"), "{}", e);
    // Data.
    let e = text(m.declare_data("ursa_table", Linkage::Local, false, false).unwrap_err());
    assert!(e.contains("reserved"), "{}", e);
    let e = text(m.declare_data("ursa_shared_t", Linkage::Local, true, true).unwrap_err());
    assert!(e.contains("thread-local"), "{}", e);
    let e = text(m.declare_shared("dynamic", 16, 16).unwrap_err());
    assert!(e.contains("sized at launch"), "{}", e);
    // The intrinsic declared properly is accepted.
    assert!(m.declare_function("ursa_tid_x", Linkage::Import, &tid).is_ok());
}

#[test]
fn error_shared_variables() {
    let mut m = UrsaModule::new();
    let mut d = DataDescription::new();
    d.define(vec![1, 2, 3, 4].into_boxed_slice());
    let s = m.declare_data("ursa_shared_init", Linkage::Local, true, false).unwrap();
    let e = text(m.define_data(s, &d).unwrap_err());
    assert!(e.contains("cannot have contents"), "{}", e);
    let e = text(m.declare_shared("big", 64 * 1024, 16).unwrap_err());
    assert!(e.contains("exceeds the limit"), "{}", e);
}

#[test]
fn error_import_definition_and_incompatible_declarations() {
    let mut m = UrsaModule::new();
    let e = empty(&mut m, "imp", Linkage::Import).unwrap_err();
    assert!(matches!(e, ModuleError::InvalidImportDefinition(n) if n == "imp"));
    m.declare_data("d", Linkage::Local, false, false).unwrap();
    assert!(matches!(m.declare_function("d", Linkage::Local, &m.make_signature()), Err(ModuleError::IncompatibleDeclaration(_))));
    assert!(matches!(m.declare_data("d", Linkage::Local, false, true), Err(ModuleError::IncompatibleDeclaration(_))));
    let mut other = Signature::new(ursa_backend::module::ursa_module::CALL_CONV);
    other.params.push(AbiParam::new(types::I32));
    let f = m.declare_function("f", Linkage::Local, &m.make_signature()).unwrap();
    let mut ctx = m.make_context();
    ctx.func.signature = other;
    assert!(matches!(m.define_function(f, &mut ctx), Err(ModuleError::IncompatibleSignature(..))));
}

#[test]
fn error_body_that_does_not_verify_or_compile() {
    let mut m = UrsaModule::new();
    let id = m.declare_function("bad", Linkage::Local, &m.make_signature()).unwrap();
    let mut ctx = m.make_context();
    // A block without a terminator.
    let mut fctx = FunctionBuilderContext::new();
    let mut b = FunctionBuilder::new(&mut ctx.func, &mut fctx);
    let e = b.create_block();
    b.switch_to_block(e);
    b.ins().iconst(types::I32, 1);
    let e = text(m.define_function(id, &mut ctx).unwrap_err());
    assert!(e.contains("does not verify"), "{}", e);
    // A kernel cannot make a tail call: a compile error naming it.
    let mut m = UrsaModule::new();
    let sig = m.make_signature();
    let id = m.declare_function("k", Linkage::Export, &sig).unwrap();
    let mut ctx = m.make_context();
    let me = m.declare_func_in_func(id, &mut ctx.func);
    let mut fctx = FunctionBuilderContext::new();
    let mut b = FunctionBuilder::new(&mut ctx.func, &mut fctx);
    let e = b.create_block();
    b.switch_to_block(e);
    b.ins().return_call(me, &[]);
    b.seal_all_blocks();
    b.finalize(m.target_config());
    m.define_function(id, &mut ctx).unwrap();
    let e = text(m.finish().unwrap_err());
    assert!(e.contains("function `k`") && e.contains("tail call"), "{}", e);
}

#[test]
fn error_define_function_bytes() {
    let mut m = UrsaModule::new();
    let id = m.declare_function("raw", Linkage::Export, &m.make_signature()).unwrap();
    let e = text(m.define_function_bytes(id, 16, &[0; 16], &[]).unwrap_err());
    assert!(e.contains("ursa asm"), "{}", e);
}

/// A module with a constant lookup table, a zero-initialized global
/// counter, an initialized global and a global holding the table's address
/// plus 4 (a relocation). Kernel `k(out)`, thread `t` of a CTA:
/// `v = table[t % 8]`, `atomic counter += v`,
/// `out[t] = v + bias + 1000 * *ptr + 100000 * table_plus_4[0]`.
fn data_module(opt_level: ursa_backend::OptLevel, table: &[i32; 8]) -> Vec<u8> {
    use cranelift_codegen::ir::{immediates::Imm64, GlobalValueData};
    let mut m = UrsaModule::with_options(ursa_backend::Options { opt_level, ..Default::default() });
    let define = |m: &mut UrsaModule, name: &str, writable: bool, d: &DataDescription| {
        let id = m.declare_data(name, Linkage::Local, writable, false).expect("declares");
        m.define_data(id, d).expect("defines");
        id
    };
    let mut d = DataDescription::new();
    d.define(table.iter().flat_map(|v| v.to_le_bytes()).collect::<Vec<u8>>().into_boxed_slice());
    d.set_align(16);
    let tbl = define(&mut m, "table", false, &d);
    let mut d = DataDescription::new();
    d.define_zeroinit(4);
    let counter = define(&mut m, "counter", true, &d);
    let mut d = DataDescription::new();
    d.define(100i32.to_le_bytes().to_vec().into_boxed_slice());
    let bias = define(&mut m, "bias", true, &d);
    let mut d = DataDescription::new();
    d.define_zeroinit(8);
    let gv = m.declare_data_in_data(tbl, &mut d);
    d.write_data_addr(0, gv, 4);
    let ptr = define(&mut m, "ptr", true, &d);
    kernel(&mut m, "k", |k, out| {
        let flags = MemFlagsData::trusted();
        let t = k.thread_idx(Dim::X).expect("tid");
        let lane = k.ins().band_imm_u(t, 7);
        let base = k.address_of(tbl);
        let at = k.element_addr(base, lane, 4);
        let v = k.ins().load(types::I32, flags, at, 0);
        let c = k.address_of(counter);
        k.atomic_add(c, v);
        let b = k.address_of(bias);
        let b = k.ins().load(types::I32, flags, b, 0);
        let p = k.address_of(ptr);
        let p = k.ins().load(types::I64, flags, p, 0);
        let w = k.ins().load(types::I32, flags, p, 0);
        // `symbol_value` of the table's symbol plus 4.
        let gv = match k.func.dfg.insts[k.func.dfg.value_def(base).unwrap_inst()] {
            cranelift_codegen::ir::InstructionData::UnaryGlobalValue { global_value, .. } => global_value,
            _ => unreachable!("symbol_value"),
        };
        let GlobalValueData::Symbol { name, colocated, .. } = k.func.global_values[gv].clone() else { unreachable!() };
        let gv4 = k.create_global_value(GlobalValueData::Symbol { name, offset: Imm64::new(4), colocated, tls: false });
        let a4 = k.ins().symbol_value(types::I64, gv4);
        let x = k.ins().load(types::I32, flags, a4, 0);
        let w = k.ins().imul_imm_s(w, 1000);
        let x = k.ins().imul_imm_s(x, 100000);
        let s = k.ins().iadd(v, b);
        let s = k.ins().iadd(s, w);
        let s = k.ins().iadd(s, x);
        let o = k.element_addr(out, t, 4);
        k.ins().store(flags, s, o, 0);
    });
    m.finish().expect("compiles")
}

/// `__constant__` and `__device__` data through the module and the host
/// API: the kernel reads the constant table, accumulates into the global
/// counter, reads an initialized global and a relocated pointer; the host
/// reads and writes the objects by name, and a write to the constant table
/// is seen by the next launch. At both opt levels.
#[test]
fn data_objects_in_global_and_constant_memory() {
    let table = [3, 1, 4, 1, 5, 9, 2, 6];
    for level in [ursa_backend::OptLevel::None, ursa_backend::OptLevel::Speed] {
        let bytes = data_module(level, &table);
        let obj = ursa_emit::elf::read(&bytes).expect("reads");
        let names: Vec<&str> = obj.data.iter().map(|d| d.name.as_str()).collect();
        assert_eq!(names, ["table", "counter", "bias", "ptr"]);
        assert_eq!(obj.addresses, names);
        assert_eq!(obj.data[0].section(), ursa_emit::elf::CONSTANT_SECTION);
        assert_eq!(obj.data[1].section(), ursa_emit::elf::GLOBAL_SECTION);
        assert_eq!(obj.data[3].relocs, [ursa_emit::elf::Reloc { offset: 0, symbol: "table".into(), addend: 4 }]);

        let dev = Device::new();
        let module = dev.load_module(&bytes).expect("loads");
        let k = module.kernel("k").expect("kernel");
        let threads = 64u32;
        let out = dev.alloc_zeros::<i32>(threads as usize).expect("allocates");
        for round in 0..2 {
            let table: Vec<i32> = table.iter().map(|v| v * (round + 1)).collect();
            if round == 1 {
                module.global::<i32>("table").unwrap().copy_from_host(&table).unwrap();
                module.global::<i32>("counter").unwrap().zero().unwrap();
            }
            k.launch(1, threads, 0, &[&out]).expect("runs");
            let want: Vec<i32> = (0..threads as usize).map(|t| table[t % 8] + 100 + 1000 * table[1] + 100000 * table[1]).collect();
            assert_eq!(out.to_vec().unwrap(), want, "{:?}, round {}", level, round);
            let sum: i32 = (0..threads as usize).map(|t| table[t % 8]).sum();
            assert_eq!(module.global::<i32>("counter").unwrap().to_vec().unwrap(), [sum], "{:?}, round {}", level, round);
        }
        // The pointer object holds the table's address plus 4.
        let ptr = module.global::<u64>("ptr").unwrap().to_vec().unwrap()[0];
        assert_eq!(ptr, module.global::<i32>("table").unwrap().address() + 4);
        assert!(matches!(module.global::<i64>("bias"), Err(ursa_sim::host::HostError::GlobalSize { .. })));
        assert!(module.global::<i32>("nothing").unwrap_err().to_string().contains("the data objects: table, counter, bias, ptr"));
    }
}

/// A data object holding the address of a function, and one holding the
/// address of another data object that itself holds one (a chain).
#[test]
fn data_objects_hold_addresses_of_functions_and_data() {
    let mut m = UrsaModule::new();
    let f = kernel(&mut m, "k", |_, _| {});
    let mut d = DataDescription::new();
    d.define_zeroinit(16);
    let fr = m.declare_func_in_data(f, &mut d);
    d.write_function_addr(8, fr);
    let a = m.declare_data("a", Linkage::Export, true, false).unwrap();
    m.define_data(a, &d).unwrap();
    let mut d = DataDescription::new();
    d.define_zeroinit(8);
    let gv = m.declare_data_in_data(a, &mut d);
    d.write_data_addr(0, gv, 8);
    let b = m.declare_data("b", Linkage::Export, false, false).unwrap();
    m.define_data(b, &d).unwrap();
    let module = Device::new().load_module(&m.finish().unwrap()).unwrap();
    let a_words = module.global::<u64>("a").unwrap().to_vec().unwrap();
    assert_eq!(a_words, [0, module.program().function("k").unwrap().address]);
    assert_eq!(module.global::<u64>("b").unwrap().to_vec().unwrap(), [module.global::<u8>("a").unwrap().address() + 8]);
}

#[test]
fn error_data_objects() {
    let define = |writable: bool, tls: bool, d: &DataDescription| {
        let mut m = UrsaModule::new();
        let id = m.declare_data("x", Linkage::Local, writable, tls).unwrap();
        m.define_data(id, d).map(|_| m)
    };
    let mut d = DataDescription::new();
    d.define_zeroinit(4);
    assert!(text(define(true, true, &d).err().unwrap()).contains("cannot be thread-local"));
    assert!(text(define(true, false, &DataDescription::new()).err().unwrap()).contains("gives no size"));
    let mut bad_align = d.clone();
    bad_align.align = Some(3); // (`set_align` asserts a power of two)
    assert!(text(define(true, false, &bad_align).err().unwrap()).contains("alignment 3"));
    // An address that does not fit in the object.
    let mut m = UrsaModule::new();
    let x = m.declare_data("x", Linkage::Local, true, false).unwrap();
    let mut d = DataDescription::new();
    d.define_zeroinit(4);
    let gv = m.declare_data_in_data(x, &mut d);
    d.write_data_addr(0, gv, 0);
    assert!(text(m.define_data(x, &d).unwrap_err()).contains("does not fit in 4 bytes"));
    // The address of a shared variable (one per CTA) or of an import.
    let s = m.declare_shared("s", 4, 4).unwrap();
    let mut d = DataDescription::new();
    d.define_zeroinit(8);
    let gv = m.declare_data_in_data(s, &mut d);
    d.write_data_addr(0, gv, 0);
    assert!(text(m.define_data(x, &d).unwrap_err()).contains("per CTA"));
    let imp = m.declare_function("elsewhere", Linkage::Import, &m.make_signature()).unwrap();
    let mut d = DataDescription::new();
    d.define_zeroinit(8);
    let fr = m.declare_func_in_data(imp, &mut d);
    d.write_function_addr(0, fr);
    m.define_data(x, &d).unwrap();
    assert!(text(m.finish().unwrap_err()).contains("holds the address of `elsewhere`, which this module does not define"));
    // Declared for export, never defined.
    let mut m = UrsaModule::new();
    m.declare_data("g", Linkage::Export, true, false).unwrap();
    assert!(text(m.finish().unwrap_err()).contains("`g` is declared"));
    // More constant data than constant bank 3 holds (64 KiB).
    let mut m = UrsaModule::new();
    let mut d = DataDescription::new();
    d.define_zeroinit(0x8000);
    for name in ["c1", "c2", "c3"] {
        let id = m.declare_data(name, Linkage::Local, false, false).unwrap();
        m.define_data(id, &d).unwrap();
    }
    let e = text(m.finish().unwrap_err());
    assert!(e.contains("`c3`") && e.contains(".ursa.constant3"), "{}", e);
}
