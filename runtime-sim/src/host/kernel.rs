//! Modules, their kernels, kernel arguments and launches.

use std::sync::Arc;

use ursa_emit::elf::{self, DataSpace, Param, ParamKind};

use super::buffer::{Allocation, DeviceBuffer, Element};
use super::{Device, HostError};
use crate::launch::{layout_params, ArgMismatch, LaunchConfig};
use crate::profile::{Profile, Stats};
use crate::program::{FunctionInfo, Program};
use crate::trap::{LoadError, Trap};

/// A loaded object on a device: its kernels and device functions. A cheap
/// handle (clones share the program).
///
/// ```
/// # let elf = ursa_sim::host::example_object();
/// let dev = ursa_sim::host::Device::new();
/// let module = dev.load_module(&elf)?;
/// let vadd = module.kernel("vadd")?;
/// assert_eq!(vadd.params().len(), 4);
/// # Ok::<(), ursa_sim::host::HostError>(())
/// ```
#[derive(Clone)]
pub struct Module {
    inner: Arc<ModuleState>,
}

struct ModuleState {
    device: Device,
    program: Program,
    /// The memory of each data object of the program, in its order.
    data: Vec<Arc<Allocation>>,
    /// Constant bank 14: the address of each entry of the address table.
    addresses: Vec<u8>,
}

impl std::fmt::Debug for Module {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Module {{ device: {:?}, kernels: {:?} }}", self.device(), self.kernel_names())
    }
}

impl Module {
    /// The module of `program` on `device`: each data object allocated
    /// (aligned, zeroed), its initial bytes written with its relocations
    /// applied (`S + A`, `S` the address of a data object or function), and
    /// the address table made.
    pub(super) fn new(device: Device, program: Program) -> Result<Module, HostError> {
        let mut data = Vec::with_capacity(program.data.len());
        for d in &program.data {
            data.push(Allocation::new(&device, u64::from(d.size), u64::from(d.align))?);
        }
        let address_of = |name: &str| {
            program.data.iter().position(|d| d.name == name).map(|i| data[i].base).or_else(|| program.function(name).map(|f| f.address))
        };
        for (d, a) in program.data.iter().zip(&data) {
            if d.init.is_none() && d.relocs.is_empty() {
                continue;
            }
            let mut bytes = d.init.clone().unwrap_or_default();
            bytes.resize(d.size as usize, 0);
            for r in &d.relocs {
                // `Program::load` checked both; a hand-made program may not.
                let s = address_of(&r.symbol)
                    .ok_or_else(|| HostError::Load(LoadError::UndefinedSymbol { function: d.name.clone(), symbol: r.symbol.clone() }))?;
                let at = usize::try_from(r.offset).ok().filter(|&o| o.checked_add(8).is_some_and(|e| e <= bytes.len()));
                let at = at.ok_or_else(|| HostError::Load(LoadError::BadRelocation { function: d.name.clone(), offset: r.offset }))?;
                bytes[at..at + 8].copy_from_slice(&s.wrapping_add_signed(r.addend).to_le_bytes());
            }
            device.gpu().write(a.base, &bytes).map_err(HostError::Memory)?;
        }
        let mut addresses = Vec::with_capacity(program.addresses.len() * 8);
        for name in &program.addresses {
            let s = program.data.iter().position(|d| &d.name == name).map(|i| data[i].base).ok_or_else(|| {
                HostError::Load(LoadError::UndefinedSymbol { function: elf::ADDRESS_SECTION.into(), symbol: name.clone() })
            })?;
            addresses.extend_from_slice(&s.to_le_bytes());
        }
        Ok(Module { inner: Arc::new(ModuleState { device, program, data, addresses }) })
    }

    /// The data object `name` (a `__device__` or `__constant__` variable
    /// of the module) as a buffer of `T`: what CUDA's
    /// `cudaMemcpyToSymbol` / `cudaMemcpyFromSymbol` copy to and from. A
    /// constant object's bytes are what constant bank 3 holds at each
    /// launch, so a write to it is seen by the next launch.
    /// [`HostError::NoGlobal`] if there is no such object,
    /// [`HostError::GlobalSize`] if its size is no whole number of `T`.
    ///
    /// ```
    /// use ursa_emit::elf::{DataObject, DataSpace, Object};
    /// let obj = Object {
    ///     data: vec![DataObject { name: "table".into(), space: DataSpace::Constant, size: 8, align: 4,
    ///                             init: Some(vec![1, 0, 0, 0, 2, 0, 0, 0]), ..Default::default() }],
    ///     addresses: vec!["table".into()],
    ///     ..Default::default()
    /// };
    /// let module = ursa_sim::host::Device::new().load_module(&ursa_emit::elf::write(&obj))?;
    /// let table = module.global::<u32>("table")?;
    /// assert_eq!(table.to_vec()?, [1, 2]);
    /// table.copy_from_host(&[5, 6])?;
    /// assert_eq!(module.global::<u64>("table")?.to_vec()?, [(6 << 32) | 5]);
    /// assert_eq!(module.global::<u8>("tabel").unwrap_err().to_string(), "no data object named `tabel` (the data objects: table)");
    /// # Ok::<(), ursa_sim::host::HostError>(())
    /// ```
    pub fn global<T: Element>(&self, name: &str) -> Result<DeviceBuffer<T>, HostError> {
        let data = &self.program().data;
        let Some(i) = data.iter().position(|d| d.name == name) else {
            return Err(HostError::NoGlobal { name: name.to_string(), globals: data.iter().map(|d| d.name.clone()).collect() });
        };
        let size = data[i].size;
        if size as usize % T::SIZE != 0 {
            return Err(HostError::GlobalSize { name: name.to_string(), size, element: T::NAME });
        }
        Ok(DeviceBuffer::view(self.inner.data[i].clone(), size as usize / T::SIZE))
    }

    /// The constant banks a launch of the module's kernels needs: 14 (the
    /// address table) and 3 (the constant data objects, read from their
    /// memory now); none without data objects.
    fn const_banks(&self) -> Result<Vec<(u8, Vec<u8>)>, HostError> {
        let program = self.program();
        if program.addresses.is_empty() && program.data.is_empty() {
            return Ok(Vec::new());
        }
        let mut bank3 = Vec::new();
        for (d, a) in program.data.iter().zip(&self.inner.data) {
            if d.space != DataSpace::Constant {
                continue;
            }
            let at = d.offset as usize;
            if bank3.len() < at + d.size as usize {
                bank3.resize(at + d.size as usize, 0);
            }
            let bytes = self.device().gpu().read(a.base, u64::from(d.size)).map_err(HostError::Memory)?;
            bank3[at..at + d.size as usize].copy_from_slice(&bytes);
        }
        Ok(vec![(elf::ADDRESS_BANK, self.inner.addresses.clone()), (elf::CONSTANT_BANK, bank3)])
    }

    /// The kernel of this name: [`HostError::NoKernel`] if the module has no
    /// function of the name, [`HostError::NotAKernel`] if it is a device
    /// function (both list the module's kernels).
    ///
    /// ```
    /// # let elf = ursa_sim::host::example_object();
    /// let module = ursa_sim::host::Device::new().load_module(&elf)?;
    /// assert_eq!(module.kernel("vadd")?.name(), "vadd");
    /// let e = module.kernel("vsub").unwrap_err();
    /// assert_eq!(e.to_string(), "no function named `vsub` (the kernels: vadd)");
    /// # Ok::<(), ursa_sim::host::HostError>(())
    /// ```
    pub fn kernel(&self, name: &str) -> Result<Kernel, HostError> {
        let kernels = || self.kernel_names().into_iter().map(String::from).collect();
        match self.program().functions.iter().position(|f| f.name == name) {
            None => Err(HostError::NoKernel { name: name.to_string(), kernels: kernels() }),
            Some(i) if !self.program().functions[i].kernel => Err(HostError::NotAKernel { name: name.to_string(), kernels: kernels() }),
            Some(index) => Ok(Kernel { module: self.clone(), index }),
        }
    }

    /// The names of the module's kernels, in the object's order.
    ///
    /// ```
    /// # let elf = ursa_sim::host::example_object();
    /// let module = ursa_sim::host::Device::new().load_module(&elf)?;
    /// assert_eq!(module.kernel_names(), ["vadd"]);
    /// # Ok::<(), ursa_sim::host::HostError>(())
    /// ```
    pub fn kernel_names(&self) -> Vec<&str> {
        self.program().functions.iter().filter(|f| f.kernel).map(|f| f.name.as_str()).collect()
    }

    /// The loaded program (the raw layer: disassembly, function table).
    ///
    /// ```
    /// # let elf = ursa_sim::host::example_object();
    /// let module = ursa_sim::host::Device::new().load_module(&elf)?;
    /// let vadd = module.program().function("vadd").unwrap();
    /// assert!(module.program().disassemble_at(vadd.address).unwrap().starts_with("S2R"));
    /// # Ok::<(), ursa_sim::host::HostError>(())
    /// ```
    pub fn program(&self) -> &Program {
        &self.inner.program
    }

    /// The device the module is loaded on.
    ///
    /// ```
    /// # let elf = ursa_sim::host::example_object();
    /// let dev = ursa_sim::host::Device::new();
    /// assert!(dev.load_module(&elf)?.device().is(&dev));
    /// # Ok::<(), ursa_sim::host::HostError>(())
    /// ```
    pub fn device(&self) -> &Device {
        &self.inner.device
    }
}

/// The size of a grid or of a CTA in threads (`x`, `y`, `z`); made from a
/// number (`x`, the others 1), a pair, a triple or an array.
///
/// ```
/// use ursa_sim::host::Dim3;
/// assert_eq!(Dim3::from(4), Dim3 { x: 4, y: 1, z: 1 });
/// assert_eq!(Dim3::from((2, 3)), Dim3 { x: 2, y: 3, z: 1 });
/// assert_eq!(Dim3::from([2, 3, 4]), Dim3::from((2, 3, 4)));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Dim3 {
    pub x: u32,
    pub y: u32,
    pub z: u32,
}

impl From<u32> for Dim3 {
    fn from(x: u32) -> Dim3 {
        Dim3 { x, y: 1, z: 1 }
    }
}

impl From<(u32, u32)> for Dim3 {
    fn from((x, y): (u32, u32)) -> Dim3 {
        Dim3 { x, y, z: 1 }
    }
}

impl From<(u32, u32, u32)> for Dim3 {
    fn from((x, y, z): (u32, u32, u32)) -> Dim3 {
        Dim3 { x, y, z }
    }
}

impl From<[u32; 3]> for Dim3 {
    fn from([x, y, z]: [u32; 3]) -> Dim3 {
        Dim3 { x, y, z }
    }
}

impl From<Dim3> for [u32; 3] {
    fn from(d: Dim3) -> [u32; 3] {
        [d.x, d.y, d.z]
    }
}

/// One argument of a launch: a scalar, a buffer's address or raw bytes,
/// with what it holds, to be checked against the kernel's parameter.
/// Usually made by [`AsKernelArg`] from a scalar or a `&DeviceBuffer`.
///
/// ```
/// use ursa_sim::host::KernelArg;
/// assert_eq!(KernelArg::scalar(7u32).type_name(), "i32");
/// assert_eq!(KernelArg::bytes(vec![0; 12]).type_name(), "12 bytes");
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct KernelArg {
    kind: ParamKind,
    bytes: Vec<u8>,
    /// For a buffer: the device holding it.
    device: Option<Device>,
}

impl KernelArg {
    /// A scalar argument (an integer of a signless CLIF type, or a float).
    ///
    /// ```
    /// use ursa_sim::host::KernelArg;
    /// assert_eq!(KernelArg::scalar(-1i64).type_name(), "i64");
    /// assert_eq!(KernelArg::scalar(0.5f64).type_name(), "f64");
    /// ```
    pub fn scalar<T: Element>(value: T) -> KernelArg {
        KernelArg { kind: T::KIND, bytes: super::buffer::to_bytes(&[value]), device: None }
    }

    /// A buffer's device address (a `ptr` parameter, or an `i64`).
    ///
    /// ```
    /// let dev = ursa_sim::host::Device::new();
    /// let buf = dev.alloc_zeros::<f32>(4)?;
    /// assert_eq!(ursa_sim::host::KernelArg::buffer(&buf).type_name(), "a buffer (a pointer)");
    /// # Ok::<(), ursa_sim::host::HostError>(())
    /// ```
    pub fn buffer<T: Element>(buffer: &DeviceBuffer<T>) -> KernelArg {
        KernelArg { kind: ParamKind::Ptr, bytes: buffer.address().to_le_bytes().to_vec(), device: Some(buffer.device().clone()) }
    }

    /// Raw bytes of no type (a by-value struct): only their number is
    /// checked against the parameter.
    ///
    /// ```
    /// let arg = ursa_sim::host::KernelArg::bytes([1u8, 2, 3, 4]);
    /// assert_eq!(arg.type_name(), "4 bytes");
    /// ```
    pub fn bytes(bytes: impl Into<Vec<u8>>) -> KernelArg {
        KernelArg { kind: ParamKind::Bytes, bytes: bytes.into(), device: None }
    }

    /// What the argument is, as errors name it (`i32`, `f64`, `12 bytes`,
    /// `a buffer (a pointer)`); integers are signless, as in CLIF.
    ///
    /// ```
    /// assert_eq!(ursa_sim::host::KernelArg::scalar(1u8).type_name(), "i8");
    /// ```
    pub fn type_name(&self) -> String {
        match self.device {
            Some(_) => "a buffer (a pointer)".into(),
            None => self.kind.type_name(self.bytes.len() as u32),
        }
    }
}

/// What can be passed to [`Kernel::launch`]: the scalar [`Element`] types,
/// `DeviceBuffer`s (by their address) and [`KernelArg`]s.
///
/// ```
/// use ursa_sim::host::{AsKernelArg, KernelArg};
/// assert_eq!(3i32.as_kernel_arg(), KernelArg::scalar(3i32));
/// ```
pub trait AsKernelArg {
    /// The argument this value passes.
    fn as_kernel_arg(&self) -> KernelArg;
}

impl AsKernelArg for KernelArg {
    fn as_kernel_arg(&self) -> KernelArg {
        self.clone()
    }
}

impl<T: Element> AsKernelArg for DeviceBuffer<T> {
    fn as_kernel_arg(&self) -> KernelArg {
        KernelArg::buffer(self)
    }
}

/// A kernel of a [`Module`], ready to launch.
///
/// ```
/// # let elf = ursa_sim::host::example_object();
/// let vadd = ursa_sim::host::Device::new().load_module(&elf)?.kernel("vadd")?;
/// let names: Vec<&str> = vadd.params().iter().map(|p| p.name.as_str()).collect();
/// assert_eq!(names, ["a", "b", "out", "n"]);
/// # Ok::<(), ursa_sim::host::HostError>(())
/// ```
#[derive(Clone, Debug)]
pub struct Kernel {
    module: Module,
    /// Its index in the program's functions.
    index: usize,
}

impl Kernel {
    /// The kernel's name.
    ///
    /// ```
    /// # let elf = ursa_sim::host::example_object();
    /// let module = ursa_sim::host::Device::new().load_module(&elf)?;
    /// assert_eq!(module.kernel("vadd")?.name(), "vadd");
    /// # Ok::<(), ursa_sim::host::HostError>(())
    /// ```
    pub fn name(&self) -> &str {
        &self.info().name
    }

    /// The kernel's `.param` table (empty for an object without one: then
    /// arguments are laid out one after another, unchecked; docs/abi.md).
    ///
    /// ```
    /// # let elf = ursa_sim::host::example_object();
    /// let vadd = ursa_sim::host::Device::new().load_module(&elf)?.kernel("vadd")?;
    /// assert_eq!(vadd.params()[3].type_name(), "i32");
    /// # Ok::<(), ursa_sim::host::HostError>(())
    /// ```
    pub fn params(&self) -> &[Param] {
        &self.info().params
    }

    /// What the object records of the kernel (address, sizes, registers).
    ///
    /// ```
    /// # let elf = ursa_sim::host::example_object();
    /// let vadd = ursa_sim::host::Device::new().load_module(&elf)?.kernel("vadd")?;
    /// assert_eq!(vadd.info().shared_size, 0);
    /// # Ok::<(), ursa_sim::host::HostError>(())
    /// ```
    pub fn info(&self) -> &FunctionInfo {
        &self.module.program().functions[self.index]
    }

    /// The module the kernel belongs to.
    ///
    /// ```
    /// # let elf = ursa_sim::host::example_object();
    /// let module = ursa_sim::host::Device::new().load_module(&elf)?;
    /// assert_eq!(module.kernel("vadd")?.module().kernel_names(), ["vadd"]);
    /// # Ok::<(), ursa_sim::host::HostError>(())
    /// ```
    pub fn module(&self) -> &Module {
        &self.module
    }

    /// Runs the kernel over `grid` CTAs of `block` threads with
    /// `shared_bytes` of dynamic shared memory per CTA (after the kernel's
    /// own), to completion. The arguments are checked against the kernel's
    /// `.param` table first (their number, sizes and kinds; a buffer for a
    /// `ptr` or `i64` parameter), each error naming the kernel and the
    /// parameter; buffers must be of the kernel's device. Returns what the
    /// launch measured.
    ///
    /// ```
    /// # let elf = ursa_sim::host::example_object();
    /// let dev = ursa_sim::host::Device::new();
    /// let vadd = dev.load_module(&elf)?.kernel("vadd")?;
    /// let a = dev.buffer_from(&[1i32, 2, 3])?;
    /// let out = dev.alloc_zeros::<i32>(3)?;
    /// vadd.launch(1, 32, 0, &[&a, &a, &out, &3i32])?;
    /// assert_eq!(out.to_vec()?, [2, 4, 6]);
    /// let e = vadd.launch(1, 32, 0, &[&a, &a, &out]).unwrap_err();
    /// assert_eq!(e.to_string(), "kernel `vadd` takes 4 arguments (a (ptr), b (ptr), out (ptr), n (i32)), 3 given");
    /// let e = vadd.launch(1, 32, 0, &[&a, &a, &7i32, &3i32]).unwrap_err();
    /// assert_eq!(e.to_string(), "argument 3 is i32, but parameter `out` of kernel `vadd` is ptr");
    /// # Ok::<(), ursa_sim::host::HostError>(())
    /// ```
    pub fn launch(
        &self,
        grid: impl Into<Dim3>,
        block: impl Into<Dim3>,
        shared_bytes: u32,
        args: &[&dyn AsKernelArg],
    ) -> Result<Launch, HostError> {
        let cfg = LaunchConfig { grid: grid.into().into(), block: block.into().into(), shared_size: shared_bytes, ..Default::default() };
        self.launch_with(&cfg, args)
    }

    /// [`Kernel::launch`] with every setting of the raw layer's
    /// [`LaunchConfig`] (grid, block and dynamic shared memory among them):
    /// step and memory limits, strict hazard checks, a profile or a
    /// timeline, the SM timing model.
    ///
    /// ```
    /// # let elf = ursa_sim::host::example_object();
    /// use ursa_sim::LaunchConfig;
    /// let dev = ursa_sim::host::Device::new();
    /// let vadd = dev.load_module(&elf)?.kernel("vadd")?;
    /// let a = dev.buffer_from(&[1i32; 64])?;
    /// let cfg = LaunchConfig { grid: [2, 1, 1], block: [32, 1, 1], profile: true, ..Default::default() };
    /// let launch = vadd.launch_with(&cfg, &[&a, &a, &a, &64i32])?;
    /// assert_eq!(a.to_vec()?, [2; 64]);
    /// assert!(launch.profile().is_some());
    /// # Ok::<(), ursa_sim::host::HostError>(())
    /// ```
    pub fn launch_with(&self, cfg: &LaunchConfig, args: &[&dyn AsKernelArg]) -> Result<Launch, HostError> {
        let params = self.parameter_block(args)?;
        let banks = self.module.const_banks()?;
        let with_banks;
        let cfg = if banks.is_empty() {
            cfg
        } else {
            with_banks = LaunchConfig { const_banks: [cfg.const_banks.clone(), banks].concat(), ..cfg.clone() };
            &with_banks
        };
        let result = self.module.device().gpu().launch_block(self.module.program(), self.info(), cfg, &params);
        let launch = |stats, trap| Launch { kernel: self.clone(), grid: cfg.grid, stats, trap };
        match result {
            Ok(stats) => Ok(launch(stats, None)),
            Err((trap, before)) => {
                let before = before.map(|s| Box::new(launch(*s, Some(trap.clone()))));
                Err(HostError::Trap { trap: Box::new(trap), before })
            }
        }
    }

    /// Checks arguments as [`Kernel::launch`] does, without launching.
    ///
    /// ```
    /// # let elf = ursa_sim::host::example_object();
    /// let dev = ursa_sim::host::Device::new();
    /// let vadd = dev.load_module(&elf)?.kernel("vadd")?;
    /// let a = dev.alloc_zeros::<f32>(4)?;
    /// assert!(vadd.check_args(&[&a, &a, &a, &4i32]).is_ok());
    /// assert!(vadd.check_args(&[&a, &a, &a, &4i64]).is_err());
    /// # Ok::<(), ursa_sim::host::HostError>(())
    /// ```
    pub fn check_args(&self, args: &[&dyn AsKernelArg]) -> Result<(), HostError> {
        self.parameter_block(args).map(|_| ())
    }

    /// The parameter block of a launch with `args` (docs/abi.md), or why
    /// they do not fit the kernel.
    fn parameter_block(&self, args: &[&dyn AsKernelArg]) -> Result<Vec<u8>, HostError> {
        let args: Vec<KernelArg> = args.iter().map(|a| a.as_kernel_arg()).collect();
        let (f, kernel) = (self.info(), || self.name().to_string());
        let device = self.module.device();
        if let Some(i) = args.iter().position(|a| a.device.as_ref().is_some_and(|d| !d.is(device))) {
            return Err(HostError::OtherDevice { kernel: kernel(), index: i + 1 });
        }
        layout_params(f, args.iter().map(|a| (a.kind, a.bytes.clone()))).map_err(|m| match m {
            ArgMismatch::Count => HostError::ArgumentCount { kernel: kernel(), params: f.params.clone(), given: args.len() },
            ArgMismatch::Type { index } => HostError::ArgumentType {
                kernel: kernel(),
                index: index + 1,
                param: f.params[index].clone(),
                given: args[index].type_name(),
            },
        })
    }
}

/// What a launch did: its statistics and, when asked for
/// ([`LaunchConfig::profile`], [`LaunchConfig::timeline`]), its profile and
/// timeline. The launch of a trap ([`HostError::Trap`]'s `before`) has the
/// CTAs up to the trap, and the trap.
///
/// ```
/// # let elf = ursa_sim::host::example_object();
/// let dev = ursa_sim::host::Device::new();
/// let vadd = dev.load_module(&elf)?.kernel("vadd")?;
/// let a = dev.buffer_from(&[1i32; 8])?;
/// let launch = vadd.launch(2, 4, 0, &[&a, &a, &a, &8i32])?;
/// assert_eq!((launch.stats().ctas, launch.stats().warps), (2, 2));
/// assert!(launch.trap().is_none() && launch.profile().is_none());
/// # Ok::<(), ursa_sim::host::HostError>(())
/// ```
#[derive(Clone, Debug)]
pub struct Launch {
    kernel: Kernel,
    grid: [u32; 3],
    stats: Stats,
    trap: Option<Trap>,
}

impl Launch {
    /// What the launch measured: instructions, cycles, per-opcode counts.
    ///
    /// ```
    /// # let elf = ursa_sim::host::example_object();
    /// let dev = ursa_sim::host::Device::new();
    /// let vadd = dev.load_module(&elf)?.kernel("vadd")?;
    /// let a = dev.buffer_from(&[1i32; 4])?;
    /// let stats = vadd.launch(1, 4, 0, &[&a, &a, &a, &4i32])?.stats().clone();
    /// assert_eq!(stats.per_opcode["LDG"], 2);
    /// # Ok::<(), ursa_sim::host::HostError>(())
    /// ```
    pub fn stats(&self) -> &Stats {
        &self.stats
    }

    /// The per-instruction profile (and the timeline, if recorded), where
    /// the launch asked for one.
    ///
    /// ```
    /// # let elf = ursa_sim::host::example_object();
    /// use ursa_sim::LaunchConfig;
    /// let dev = ursa_sim::host::Device::new();
    /// let vadd = dev.load_module(&elf)?.kernel("vadd")?;
    /// let a = dev.buffer_from(&[1i32; 4])?;
    /// let cfg = LaunchConfig { block: [4, 1, 1], timeline: true, ..Default::default() };
    /// let launch = vadd.launch_with(&cfg, &[&a, &a, &a, &4i32])?;
    /// assert!(!launch.profile().unwrap().timeline.is_empty());
    /// # Ok::<(), ursa_sim::host::HostError>(())
    /// ```
    pub fn profile(&self) -> Option<&Profile> {
        self.stats.profile.as_deref()
    }

    /// The profile as `ursa run --profile` prints it: the disassembly with
    /// issue counts, lanes and stalls, and a summary.
    ///
    /// ```
    /// # let elf = ursa_sim::host::example_object();
    /// use ursa_sim::LaunchConfig;
    /// let dev = ursa_sim::host::Device::new();
    /// let vadd = dev.load_module(&elf)?.kernel("vadd")?;
    /// let a = dev.buffer_from(&[1i32; 4])?;
    /// let cfg = LaunchConfig { block: [4, 1, 1], profile: true, ..Default::default() };
    /// let report = vadd.launch_with(&cfg, &[&a, &a, &a, &4i32])?.profile_report().unwrap();
    /// assert!(report.contains("IADD R8, R8, R9"), "{}", report);
    /// # Ok::<(), ursa_sim::host::HostError>(())
    /// ```
    pub fn profile_report(&self) -> Option<String> {
        self.profile().map(|p| p.report(self.kernel.module.program(), &self.stats))
    }

    /// Writes the timeline in the Chrome trace / Perfetto JSON format
    /// (`ursa run --timeline`, with the trap if the launch ended in one);
    /// false, writing nothing, if the launch recorded no profile.
    ///
    /// ```
    /// # let elf = ursa_sim::host::example_object();
    /// use ursa_sim::LaunchConfig;
    /// let dev = ursa_sim::host::Device::new();
    /// let vadd = dev.load_module(&elf)?.kernel("vadd")?;
    /// let a = dev.buffer_from(&[1i32; 4])?;
    /// let cfg = LaunchConfig { block: [4, 1, 1], timeline: true, ..Default::default() };
    /// let mut json = Vec::new();
    /// assert!(vadd.launch_with(&cfg, &[&a, &a, &a, &4i32])?.write_timeline(&mut json).unwrap());
    /// assert!(json.starts_with(b"{\"displayTimeUnit\""));
    /// # Ok::<(), ursa_sim::host::HostError>(())
    /// ```
    pub fn write_timeline(&self, out: &mut dyn std::io::Write) -> std::io::Result<bool> {
        let Some(p) = self.profile() else { return Ok(false) };
        let trap = self.trap.as_ref().map(|t| format!("trap: {}", t));
        p.write_chrome_trace(self.kernel.module.program(), self.grid, trap.as_deref(), out)?;
        Ok(true)
    }

    /// The trap that ended the launch, for the launch of a
    /// [`HostError::Trap`] (None for a launch that finished).
    ///
    /// ```
    /// # let elf = ursa_sim::host::example_object();
    /// use ursa_sim::{host::HostError, LaunchConfig};
    /// let dev = ursa_sim::host::Device::new();
    /// let vadd = dev.load_module(&elf)?.kernel("vadd")?;
    /// let a = dev.buffer_from(&[1i32; 4])?;
    /// // `n` past the buffer: lane 4 reads out of bounds.
    /// let cfg = LaunchConfig { block: [8, 1, 1], profile: true, ..Default::default() };
    /// match vadd.launch_with(&cfg, &[&a, &a, &a, &8i32]) {
    ///     Err(HostError::Trap { before: Some(launch), .. }) => {
    ///         assert!(launch.trap().unwrap().to_string().starts_with("out-of-bounds global access"));
    ///     }
    ///     other => panic!("{:?}", other),
    /// }
    /// # Ok::<(), ursa_sim::host::HostError>(())
    /// ```
    pub fn trap(&self) -> Option<&Trap> {
        self.trap.as_ref()
    }

    /// The launched kernel.
    ///
    /// ```
    /// # let elf = ursa_sim::host::example_object();
    /// let dev = ursa_sim::host::Device::new();
    /// let vadd = dev.load_module(&elf)?.kernel("vadd")?;
    /// let a = dev.buffer_from(&[1i32])?;
    /// assert_eq!(vadd.launch(1, 1, 0, &[&a, &a, &a, &1i32])?.kernel().name(), "vadd");
    /// # Ok::<(), ursa_sim::host::HostError>(())
    /// ```
    pub fn kernel(&self) -> &Kernel {
        &self.kernel
    }
}
