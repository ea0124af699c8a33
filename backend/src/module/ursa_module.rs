//! [`UrsaModule`]: Ursa as a [`cranelift_module::Module`], so a frontend
//! written against that trait (with `cranelift-frontend`'s `FunctionBuilder`)
//! produces Ursa objects by changing only its module type
//! (`docs/module.md`).
//!
//! Functions are declared and defined as for any module; a function declared
//! with [`Linkage::Export`] is a kernel (launchable, with a `.param` table),
//! every other defined function a device function. The `%ursa_*` intrinsics
//! of `docs/kernels.md` are declared with [`Linkage::Import`] and their own
//! signature; shared-memory variables are data objects named
//! `ursa_shared_NAME`, defined zero-initialized with their size and
//! alignment; other data objects are in global memory (writable) or
//! constant bank 3 (read-only), addressed through the address table in
//! constant bank 14. [`UrsaModule::finish`] compiles the whole module at once (the
//! inliner and the reconvergence planning read every function) and returns
//! the ELF object `ursa run` and `ursa_sim::Program::load` accept.

use std::collections::{HashMap, HashSet};
use std::panic::{catch_unwind, AssertUnwindSafe};

use cranelift_codegen::control::ControlPlane;
use cranelift_codegen::ir::{self, ExternalName, Function, GlobalValueData, UserFuncName};
use cranelift_codegen::isa::{CallConv, OwnedTargetIsa, TargetFrontendConfig, TargetIsa};
use cranelift_codegen::Context;
use cranelift_module::{
    DataDescription, DataId, FuncId, Init, Linkage, Module, ModuleDeclarations, ModuleError, ModuleReloc, ModuleRelocTarget, ModuleResult,
};
use target_lexicon::{PointerWidth, Triple};
use ursa_emit::elf;
use ursa_isel::addr_space::SHARED_PREFIX;
use ursa_isel::intrinsics;

use crate::module::shared_mem::{SharedLayout, DEFAULT_ALIGN};

/// The linkage name of the dynamic shared memory, declared and never
/// defined.
const DYNAMIC_SHARED: &str = "ursa_shared_dynamic";
use crate::Options;

/// The `target-lexicon` triple naming the Ursa target: architecture
/// `unknown` (the `Architecture` enum of `target-lexicon` is closed, so it
/// cannot name Ursa), vendor `ursa`, no operating system, ELF objects.
pub const TRIPLE: &str = "unknown-ursa-none-elf";

/// The calling convention of every function of an [`UrsaModule`]: Ursa has
/// one convention (`docs/abi.md`, "Device-function calling convention"), and
/// `tail` is the one in which the CLIF verifier accepts every call Ursa
/// supports, tail calls (`return_call`) included.
pub const CALL_CONV: CallConv = CallConv::Tail;

/// The log2 of the page size frontends are told (`TargetFrontendConfig`):
/// 4 KiB, the unmapped gap the simulator leaves after each allocation
/// (`docs/abi.md`, "Global memory").
pub const PAGE_SIZE_ALIGN_LOG2: u8 = 12;

/// What [`UrsaModule::isa`] says when no Cranelift ISA was given: why there
/// is none (`docs/module.md`, "Why `isa()` has no Ursa ISA").
pub const NO_TARGET_ISA: &str = "UrsaModule has no cranelift-codegen TargetIsa: the trait cannot be implemented outside \
     cranelift-codegen (its required `isa_flags_hash_key` returns `IsaFlagsHashKey`, whose only field is private), and \
     an unknown architecture has no pointer width for `frontend_config`; use `target_config()`, `make_signature()` and \
     `make_context()`, which UrsaModule answers itself, or give a host ISA with `UrsaModule::with_isa` (docs/module.md)";

/// The Ursa target triple ([`TRIPLE`]).
///
/// ```
/// let t = ursa_backend::module::ursa_module::triple();
/// assert_eq!(t.to_string(), ursa_backend::module::ursa_module::TRIPLE);
/// ```
pub fn triple() -> Triple {
    TRIPLE.parse().expect("TRIPLE is a triple target-lexicon parses")
}

/// An error of the module with a message (`ModuleError::Backend`).
fn backend(message: String) -> ModuleError {
    ModuleError::Backend(anyhow::Error::msg(message))
}

/// A `cranelift_module::Module` whose [`finish`](UrsaModule::finish) gives
/// an Ursa ELF object.
///
/// ```
/// use cranelift_codegen::ir::{types, AbiParam, InstBuilder, MemFlagsData};
/// use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext};
/// use cranelift_module::{Linkage, Module};
/// use ursa_backend::UrsaModule;
///
/// // A kernel storing 42 through its pointer argument.
/// let mut module = UrsaModule::new();
/// let mut ctx = module.make_context();
/// ctx.func.signature.params.push(AbiParam::new(types::I64));
/// let id = module.declare_function("store42", Linkage::Export, &ctx.func.signature).unwrap();
/// let mut fctx = FunctionBuilderContext::new();
/// let mut b = FunctionBuilder::new(&mut ctx.func, &mut fctx);
/// let entry = b.create_block();
/// b.append_block_params_for_function_params(entry);
/// b.switch_to_block(entry);
/// let p = b.block_params(entry)[0];
/// let v = b.ins().iconst(types::I32, 42);
/// b.ins().store(MemFlagsData::trusted(), v, p, 0);
/// b.ins().return_(&[]);
/// b.seal_all_blocks();
/// b.finalize(module.target_config());
/// module.define_function(id, &mut ctx).unwrap();
/// let bytes = module.finish().unwrap();
///
/// let program = ursa_sim::Program::load(&bytes).unwrap();
/// let mut gpu = ursa_sim::Gpu::new();
/// let out = gpu.alloc(4, 4);
/// let cfg = ursa_sim::LaunchConfig::default();
/// gpu.launch(&program, "store42", &cfg, &[ursa_sim::Arg::Ptr(out)]).unwrap();
/// assert_eq!(gpu.read(out, 4).unwrap(), 42u32.to_le_bytes());
/// ```
pub struct UrsaModule {
    declarations: ModuleDeclarations,
    options: Options,
    /// The defined functions, named by their linkage names.
    bodies: HashMap<FuncId, Function>,
    /// The data objects defined (shared variables and the objects of
    /// `data`).
    defined_data: HashSet<DataId>,
    /// The data objects in global or constant memory, in the order of their
    /// definitions.
    data: Vec<elf::DataObject>,
    shared: SharedLayout,
    isa: Option<OwnedTargetIsa>,
}

impl Default for UrsaModule {
    fn default() -> UrsaModule {
        UrsaModule::new()
    }
}

impl UrsaModule {
    /// An empty module compiled with the default [`Options`] (optimized for
    /// speed).
    ///
    /// ```
    /// use cranelift_module::Module;
    /// let m = ursa_backend::UrsaModule::new();
    /// assert_eq!(m.target_config().pointer_bits(), 64);
    /// ```
    pub fn new() -> UrsaModule {
        UrsaModule::with_options(Options::default())
    }

    /// An empty module compiled with `options` (the opt level, the checks);
    /// [`Options::kernel`] and [`Options::shared`] are ignored: the module's
    /// declarations give them.
    ///
    /// ```
    /// let opts = ursa_backend::Options { opt_level: ursa_backend::OptLevel::None, ..Default::default() };
    /// let m = ursa_backend::UrsaModule::with_options(opts);
    /// assert!(m.finish().unwrap().starts_with(b"\x7fELF"));
    /// ```
    pub fn with_options(options: Options) -> UrsaModule {
        UrsaModule {
            declarations: ModuleDeclarations::default(),
            options,
            bodies: HashMap::new(),
            defined_data: HashSet::new(),
            data: Vec::new(),
            shared: SharedLayout::default(),
            isa: None,
        }
    }

    /// The module with `isa` as what [`Module::isa`] returns, for a frontend
    /// that reads settings from an ISA object (`docs/module.md`): it is never
    /// used to compile, and `target_config` and the signatures stay Ursa's.
    ///
    /// ```no_run
    /// # fn host_isa() -> cranelift_codegen::isa::OwnedTargetIsa { unimplemented!() }
    /// use cranelift_module::Module;
    /// let m = ursa_backend::UrsaModule::new().with_isa(host_isa());
    /// let _flags = m.isa().flags();
    /// ```
    pub fn with_isa(mut self, isa: OwnedTargetIsa) -> UrsaModule {
        self.isa = Some(isa);
        self
    }

    /// Declares and defines the shared-memory variable `name` (the data
    /// object `ursa_shared_NAME`): `size` bytes at an offset aligned to
    /// `align`, one per CTA, for every function of the module
    /// (`docs/kernels.md`, "Shared memory"). Its address is
    /// `symbol_value.i64` of the data object (see
    /// [`KernelBuilder::shared`](crate::module::kernel_builder::KernelBuilder::shared)).
    ///
    /// ```
    /// let mut m = ursa_backend::UrsaModule::new();
    /// let tile = m.declare_shared("tile", 256, 16).unwrap();
    /// assert!(m.declare_shared("tile", 256, 16).is_err());
    /// assert!(m.declare_shared("huge", 1 << 20, 16).is_err());
    /// # let _ = tile;
    /// ```
    pub fn declare_shared(&mut self, name: &str, size: u32, align: u32) -> ModuleResult<DataId> {
        let id = self.declare_data(&format!("{}{}", SHARED_PREFIX, name), Linkage::Local, true, false)?;
        let mut desc = DataDescription::new();
        desc.define_zeroinit(size as usize);
        desc.set_align(align as u64);
        self.define_data(id, &desc)?;
        Ok(id)
    }

    /// The offset of the shared variable `name` (`tile` for
    /// `ursa_shared_tile`) in the CTA's shared memory, once defined.
    ///
    /// ```
    /// let mut m = ursa_backend::UrsaModule::new();
    /// m.declare_shared("a", 4, 4).unwrap();
    /// m.declare_shared("b", 8, 16).unwrap();
    /// assert_eq!(m.shared_offset("b"), Some(16));
    /// ```
    pub fn shared_offset(&self, name: &str) -> Option<u32> {
        self.shared.vars.iter().find(|v| v.name == name).map(|v| v.offset)
    }

    /// Compiles the module into an object (what [`finish`](Self::finish)
    /// writes as ELF bytes).
    ///
    /// ```
    /// let obj = ursa_backend::UrsaModule::new().finish_object().unwrap();
    /// assert!(obj.functions.is_empty());
    /// ```
    pub fn finish_object(self) -> ModuleResult<elf::Object> {
        let mut funcs = Vec::new();
        let mut kernels = Vec::new();
        let mut symbols: HashMap<String, String> = HashMap::new();
        for (id, decl) in self.declarations.get_functions() {
            let name = decl.linkage_name(id);
            let Some(body) = self.bodies.get(&id) else {
                if decl.linkage.requires_definition() {
                    return Err(backend(format!("function `{}` is declared ({:?}) but never defined", name, decl.linkage)));
                }
                continue;
            };
            let sym = crate::symbol_name(body);
            if let Some(other) = symbols.insert(sym.clone(), name.to_string()) {
                return Err(backend(format!("functions `{}` and `{}` both become the object symbol `{}`", other, name, sym)));
            }
            funcs.push(body.clone());
            kernels.push(decl.linkage == Linkage::Export);
        }
        for (id, decl) in self.declarations.get_data_objects() {
            if decl.linkage.requires_definition() && !self.defined_data.contains(&id) && decl.linkage_name(id) != DYNAMIC_SHARED {
                return Err(backend(format!("data object `{}` is declared ({:?}) but never defined", decl.linkage_name(id), decl.linkage)));
            }
        }
        let mut data = self.data.clone();
        elf::layout_data(&mut data).map_err(backend)?;
        let addresses: Vec<String> = data.iter().map(|d| d.name.clone()).collect();
        if addresses.len() * 8 > elf::BANK_BYTES as usize {
            return Err(backend(format!(
                "{} data objects in global or constant memory: the address table (constant bank {}) holds {}",
                addresses.len(),
                elf::ADDRESS_BANK,
                elf::BANK_BYTES / 8
            )));
        }
        for d in &data {
            for r in &d.relocs {
                let defined = data.iter().any(|o| o.name == r.symbol) || funcs.iter().any(|f| crate::symbol_name(f) == r.symbol);
                if !defined {
                    return Err(backend(format!(
                        "data object `{}` holds the address of `{}`, which this module does not define",
                        d.name, r.symbol
                    )));
                }
            }
        }
        let layout = ursa_isel::DataLayout {
            slots: addresses.iter().enumerate().map(|(k, n)| (n.clone(), 8 * k as u32)).collect(),
            constants: data.iter().filter(|d| d.space == elf::DataSpace::Constant).map(|d| (d.name.clone(), d.offset)).collect(),
        };
        let opts = Options { shared: self.shared.clone(), data: layout, ..self.options.clone() };
        let compiled = catch_unwind(AssertUnwindSafe(|| crate::compile_module_kernels(&funcs, &kernels, &opts)))
            .map_err(|_| backend("internal compiler error (panic) while compiling the module".into()))?;
        let compiled = compiled.map(|obj| elf::Object { data, addresses, ..obj });
        compiled.map_err(|(f, e)| {
            let undefined = matches!(&e, crate::Error::Unsupported(d) if d.message.contains("neither defined in this module"));
            if undefined {
                backend(format!("function `{}`: {} (an Ursa object is linked alone: imports must be intrinsics)", f, e))
            } else {
                backend(format!("function `{}`: {}", f, e))
            }
        })
    }

    /// Compiles the module; the ELF object's bytes.
    ///
    /// ```
    /// let bytes = ursa_backend::UrsaModule::new().finish().unwrap();
    /// assert!(ursa_sim::Program::load(&bytes).is_ok());
    /// ```
    pub fn finish(self) -> ModuleResult<Vec<u8>> {
        Ok(elf::write(&self.finish_object()?))
    }

    /// The data object `name` (`id`) in global or constant memory that
    /// `data` describes, or why it cannot be.
    fn data_object(&self, id: DataId, name: &str, data: &DataDescription) -> ModuleResult<elf::DataObject> {
        let decl = self.declarations.get_data_decl(id);
        if decl.tls {
            return Err(backend(format!("data object `{}` cannot be thread-local: Ursa has no thread-local data objects", name)));
        }
        let err = |m: String| backend(format!("data object `{}`: {}", name, m));
        let (size, mut init) = match &data.init {
            Init::Zeros { size } => (*size, None),
            Init::Bytes { contents } => (contents.len(), Some(contents.to_vec())),
            Init::Uninitialized => return Err(err("the description gives no size (define_zeroinit or define)".into())),
        };
        let size = u32::try_from(size).map_err(|_| err(format!("{} bytes is more than 4 GiB", size)))?;
        let align = data.align.unwrap_or(u64::from(DEFAULT_ALIGN));
        if !align.is_power_of_two() || align > 4096 {
            return Err(err(format!("alignment {} is not a power of two up to 4096", align)));
        }
        if let Some(section) = &data.custom_section {
            return Err(err(format!(
                "a custom section (`{}`) is not supported: the space is the declaration's (writable or not)",
                section
            )));
        }
        let target = |t: &ModuleRelocTarget| -> ModuleResult<String> {
            match *t {
                ModuleRelocTarget::User { namespace: 0, index } if (index as usize) < self.declarations.get_functions().count() => {
                    let f = FuncId::from_u32(index);
                    Ok(self.declarations.get_function_decl(f).linkage_name(f).into_owned())
                }
                ModuleRelocTarget::User { namespace: 1, index } if (index as usize) < self.declarations.get_data_objects().count() => {
                    let d = DataId::from_u32(index);
                    let n = self.declarations.get_data_decl(d).linkage_name(d).into_owned();
                    if n.starts_with(SHARED_PREFIX) {
                        return Err(err(format!("the address of shared variable `{}` is not one address: it is per CTA", n)));
                    }
                    Ok(n)
                }
                ref other => Err(err(format!("a relocation against `{}`: only functions and data objects of the module can be", other))),
            }
        };
        let mut relocs = Vec::new();
        for &(offset, fref) in &data.function_relocs {
            relocs.push(elf::Reloc { offset: u64::from(offset), symbol: target(&data.function_decls[fref])?, addend: 0 });
        }
        for &(offset, gv, addend) in &data.data_relocs {
            relocs.push(elf::Reloc { offset: u64::from(offset), symbol: target(&data.data_decls[gv])?, addend });
        }
        if let Some(r) = relocs.iter().find(|r| r.offset + 8 > u64::from(size)) {
            return Err(err(format!("the address at byte {} does not fit in {} bytes", r.offset, size)));
        }
        let space = if decl.writable { elf::DataSpace::Global } else { elf::DataSpace::Constant };
        if init.is_none() && (space == elf::DataSpace::Constant || !relocs.is_empty()) {
            init = Some(vec![0; size as usize]);
        }
        Ok(elf::DataObject { name: name.to_string(), space, offset: 0, size, align: align as u32, init, relocs })
    }

    /// `func` with the module's names: its own name the linkage name of `id`,
    /// each function and data object it refers to by the linkage name of its
    /// declaration (what the compiler reads as object symbols).
    fn named(&self, id: FuncId, func: &Function) -> ModuleResult<Function> {
        let mut f = func.clone();
        f.name = UserFuncName::testcase(self.declarations.get_function_decl(id).linkage_name(id).as_bytes());
        let resolve = |name: &ExternalName| -> ModuleResult<Option<ExternalName>> {
            let ExternalName::User(r) = name else { return Ok(None) };
            let u = &func.params.user_named_funcs()[*r];
            let text = match u.namespace {
                0 if (u.index as usize) < self.declarations.get_functions().count() => {
                    let fid = FuncId::from_u32(u.index);
                    self.declarations.get_function_decl(fid).linkage_name(fid).into_owned()
                }
                1 if (u.index as usize) < self.declarations.get_data_objects().count() => {
                    let did = DataId::from_u32(u.index);
                    self.declarations.get_data_decl(did).linkage_name(did).into_owned()
                }
                _ => return Err(ModuleError::Undeclared(format!("{}", u))),
            };
            Ok(Some(ExternalName::testcase(text.as_bytes())))
        };
        for ext in f.dfg.ext_funcs.values_mut() {
            if let Some(n) = resolve(&ext.name)? {
                ext.name = n;
            }
        }
        for gv in f.global_values.values_mut() {
            if let GlobalValueData::Symbol { name, .. } = gv {
                if let Some(n) = resolve(name)? {
                    *name = n;
                }
            }
        }
        Ok(f)
    }
}

impl Module for UrsaModule {
    /// The ISA given to [`UrsaModule::with_isa`].
    ///
    /// # Panics
    ///
    /// Without one, with [`NO_TARGET_ISA`]: there is no Cranelift ISA object
    /// for Ursa, and the trait has no way to say so but a panic. The
    /// trait's methods that would read the ISA (`target_config`,
    /// `make_context`, `make_signature`, …) are answered by the module.
    fn isa(&self) -> &dyn TargetIsa {
        match &self.isa {
            Some(isa) => &**isa,
            None => panic!("{}", NO_TARGET_ISA),
        }
    }

    fn declarations(&self) -> &ModuleDeclarations {
        &self.declarations
    }

    /// 64-bit pointers (generic addresses, `docs/abi.md`), the `tail`
    /// calling convention ([`CALL_CONV`]), 4 KiB pages.
    fn target_config(&self) -> TargetFrontendConfig {
        TargetFrontendConfig { default_call_conv: CALL_CONV, pointer_width: PointerWidth::U64, page_size_align_log2: PAGE_SIZE_ALIGN_LOG2 }
    }

    fn make_context(&self) -> Context {
        let mut ctx = Context::new();
        ctx.func.signature.call_conv = CALL_CONV;
        ctx
    }

    fn clear_context(&self, ctx: &mut Context) {
        ctx.clear();
        ctx.func.signature.call_conv = CALL_CONV;
    }

    fn make_signature(&self) -> ir::Signature {
        ir::Signature::new(CALL_CONV)
    }

    fn clear_signature(&self, sig: &mut ir::Signature) {
        sig.clear(CALL_CONV);
    }

    /// Declares a function: [`Linkage::Export`] makes it a kernel, any other
    /// definable linkage a device function. A reserved `ursa_` name must be
    /// an intrinsic of `docs/kernels.md`, declared [`Linkage::Import`] with
    /// its own signature.
    fn declare_function(&mut self, name: &str, linkage: Linkage, signature: &ir::Signature) -> ModuleResult<FuncId> {
        if intrinsics::is_reserved(name) {
            match intrinsics::lookup(name, signature) {
                Err(e) => return Err(backend(e.to_string())),
                Ok(_) if linkage != Linkage::Import => {
                    return Err(backend(format!(
                        "`{}` is a kernel intrinsic: declare it with Linkage::Import, not {:?} ({})",
                        name,
                        linkage,
                        intrinsics::check_definition(name).err().map(|e| e.to_string()).unwrap_or_default()
                    )))
                }
                Ok(_) => {}
            }
        }
        let (id, _) = self.declarations.declare_function(name, linkage, signature)?;
        Ok(id)
    }

    fn declare_anonymous_function(&mut self, signature: &ir::Signature) -> ModuleResult<FuncId> {
        self.declarations.declare_anonymous_function(signature)
    }

    /// Declares a data object: a shared-memory variable
    /// (`ursa_shared_NAME`; the dynamic shared memory
    /// `ursa_shared_dynamic` is declared and never defined), or an object
    /// in global memory (`writable`) or constant bank 3 (not). None can be
    /// thread-local.
    fn declare_data(&mut self, name: &str, linkage: Linkage, writable: bool, tls: bool) -> ModuleResult<DataId> {
        if intrinsics::is_reserved(name) && !name.starts_with(SHARED_PREFIX) {
            return Err(backend(format!(
                "`{}`: data names starting with `{}` are reserved; a shared-memory variable is `{}NAME`",
                name,
                intrinsics::PREFIX,
                SHARED_PREFIX
            )));
        }
        if name == SHARED_PREFIX {
            return Err(backend(format!("`{}` names no shared variable: the name is `{}NAME`", name, SHARED_PREFIX)));
        }
        if name.starts_with(SHARED_PREFIX) && tls {
            return Err(backend(format!("shared variable `{}` cannot be thread-local: it is one for the whole CTA", name)));
        }
        // The declarations assert (panic) on a change of `tls`.
        if let Some(cranelift_module::FuncOrDataId::Data(id)) = self.declarations.get_name(name) {
            if self.declarations.get_data_decl(id).tls != tls {
                return Err(ModuleError::IncompatibleDeclaration(name.to_string()));
            }
        }
        let (id, _) = self.declarations.declare_data(name, linkage, writable, tls)?;
        Ok(id)
    }

    fn declare_anonymous_data(&mut self, writable: bool, tls: bool) -> ModuleResult<DataId> {
        self.declarations.declare_anonymous_data(writable, tls)
    }

    /// Defines a function: `ctx.func` is kept (with the module's names) and
    /// compiled with the whole module by [`UrsaModule::finish`]; it is
    /// verified here.
    fn define_function_with_control_plane(&mut self, func: FuncId, ctx: &mut Context, _: &mut ControlPlane) -> ModuleResult<()> {
        if func.as_u32() as usize >= self.declarations.get_functions().count() {
            return Err(ModuleError::Undeclared(func.to_string()));
        }
        let decl = self.declarations.get_function_decl(func);
        let name = decl.linkage_name(func).into_owned();
        if !decl.linkage.is_definable() {
            return Err(ModuleError::InvalidImportDefinition(name));
        }
        if let Err(e) = intrinsics::check_definition(&name) {
            return Err(backend(e.to_string()));
        }
        if self.bodies.contains_key(&func) {
            return Err(ModuleError::DuplicateDefinition(name));
        }
        if ctx.func.signature != decl.signature {
            return Err(ModuleError::IncompatibleSignature(name, decl.signature.clone(), ctx.func.signature.clone()));
        }
        let body = self.named(func, &ctx.func)?;
        if let Some(report) = crate::mid::verifier_report(&body) {
            return Err(backend(format!("function `{}` does not verify:\n{}", name, report)));
        }
        self.bodies.insert(func, body);
        Ok(())
    }

    /// Not supported: an Ursa object's code is compiled by the module (for
    /// hand-written machine code there is `ursa asm`).
    fn define_function_bytes(&mut self, func: FuncId, _: u64, _: &[u8], _: &[ModuleReloc]) -> ModuleResult<()> {
        let name = match func.as_u32() as usize {
            i if i < self.declarations.get_functions().count() => self.declarations.get_function_decl(func).linkage_name(func).into_owned(),
            _ => func.to_string(),
        };
        Err(backend(format!(
            "function `{}`: UrsaModule compiles CLIF only; machine code is assembled with `ursa asm` (define_function_bytes)",
            name
        )))
    }

    /// Defines a data object (`docs/module.md`, "Data objects"): a
    /// shared-memory variable (`ursa_shared_NAME`: only a size,
    /// `define_zeroinit`, and an alignment); otherwise a writable object in
    /// global memory (CUDA's `__device__`) or a read-only one in constant
    /// bank 3 (`__constant__`, with its address in global memory too),
    /// with its contents or zeros, its alignment (`set_align`, default 8)
    /// and the addresses it holds (`write_data_addr`, `write_function_addr`
    /// of functions and data objects the module defines).
    fn define_data(&mut self, data_id: DataId, data: &DataDescription) -> ModuleResult<()> {
        if data_id.as_u32() as usize >= self.declarations.get_data_objects().count() {
            return Err(ModuleError::Undeclared(data_id.to_string()));
        }
        let decl = self.declarations.get_data_decl(data_id);
        let name = decl.linkage_name(data_id).into_owned();
        if !decl.linkage.is_definable() {
            return Err(ModuleError::InvalidImportDefinition(name));
        }
        if self.defined_data.contains(&data_id) {
            return Err(ModuleError::DuplicateDefinition(name));
        }
        let Some(var) = name.strip_prefix(SHARED_PREFIX) else {
            let object = self.data_object(data_id, &name, data)?;
            self.data.push(object);
            self.defined_data.insert(data_id);
            return Ok(());
        };
        let size = match data.init {
            Init::Zeros { size } => size,
            Init::Bytes { .. } => {
                return Err(backend(format!(
                    "shared variable `{}` cannot have contents: shared memory is not initialized (define it with `define_zeroinit`)",
                    name
                )))
            }
            Init::Uninitialized => return Err(backend(format!("shared variable `{}`: the description gives no size", name))),
        };
        if !data.function_decls.is_empty() || !data.data_decls.is_empty() {
            return Err(backend(format!("shared variable `{}` cannot hold relocations", name)));
        }
        let size = u32::try_from(size).map_err(|_| backend(format!("shared variable `{}`: {} bytes is too large", name, size)))?;
        let align = data.align.unwrap_or(DEFAULT_ALIGN as u64);
        let align = u32::try_from(align).map_err(|_| backend(format!("shared variable `{}`: alignment {} is too large", name, align)))?;
        self.shared.declare(var, size, align, 0).map_err(|m| backend(format!("shared variable `{}`: {}", name, m)))?;
        self.defined_data.insert(data_id);
        Ok(())
    }
}
