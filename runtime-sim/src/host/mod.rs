//! The typed host API, in the manner of a GPU driver API (CUDA's, cudarc,
//! wgpu): a [`Device`] with global memory, typed [`DeviceBuffer`]s of it,
//! [`Module`]s loaded from ELF objects, their [`Kernel`]s found by name, and
//! launches whose arguments are checked against the kernel's `.param` table
//! before anything runs ([`Kernel::launch`]). Errors are [`HostError`]
//! values, never panics. It is built on the raw layer ([`Gpu`],
//! [`Program`], [`crate::Arg`], [`crate::LaunchConfig`]), which stays available
//! ([`Device::with_gpu`]).
//!
//! ```
//! use ursa_sim::host::Device;
//! // `elf`: an object with the kernel `vadd` (examples/vadd.s:
//! // out[i] = a[i] + b[i] for i < n).
//! # let elf = ursa_sim::host::example_object();
//! let dev = Device::new();
//! let vadd = dev.load_module(&elf)?.kernel("vadd")?;
//! let a = dev.buffer_from(&[1i32, 2, 3, 4, 5])?;
//! let b = dev.buffer_from(&[10i32, 20, 30, 40, 50])?;
//! let out = dev.alloc_zeros::<i32>(5)?;
//! let launch = vadd.launch(2, 4, 0, &[&a, &b, &out, &5i32])?;
//! assert_eq!(out.to_vec()?, [11, 22, 33, 44, 55]);
//! assert_eq!(launch.stats().ctas, 2);
//! // A wrong argument is refused before the launch, naming the parameter.
//! let e = vadd.launch(2, 4, 0, &[&a, &b, &out, &5.0f32]).unwrap_err();
//! assert_eq!(e.to_string(), "argument 4 is f32, but parameter `n` of kernel `vadd` is i32");
//! # Ok::<(), ursa_sim::host::HostError>(())
//! ```

mod buffer;
mod kernel;

use std::fmt;
use std::sync::{Arc, Mutex, MutexGuard};

pub use buffer::{DeviceBuffer, Element};
pub use kernel::{AsKernelArg, Dim3, Kernel, KernelArg, Launch, Module};
pub use ursa_emit::elf::{Param, ParamKind};

use crate::launch::Gpu;
use crate::program::Program;
use crate::trap::{LoadError, Trap, TrapKind};

/// A simulated GPU: its global memory and the modules loaded on it. A
/// cheap handle: clones refer to the same device, and buffers, modules and
/// kernels keep it alive. Operations lock it one at a time, so it can be
/// shared between threads.
///
/// ```
/// use ursa_sim::host::Device;
/// let dev = Device::new();
/// let same = dev.clone();
/// assert!(same.is(&dev) && !Device::new().is(&dev));
/// ```
#[derive(Clone)]
pub struct Device {
    inner: Arc<DeviceState>,
}

struct DeviceState {
    id: u64,
    gpu: Mutex<Gpu>,
}

impl fmt::Debug for Device {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Device#{}", self.inner.id)
    }
}

impl PartialEq for Device {
    /// [`Device::is`].
    fn eq(&self, other: &Device) -> bool {
        self.is(other)
    }
}

impl Default for Device {
    /// [`Device::new`].
    fn default() -> Device {
        Device::new()
    }
}

impl Device {
    /// A device with empty global memory.
    ///
    /// ```
    /// let dev = ursa_sim::host::Device::new();
    /// assert_eq!(dev.alloc_zeros::<u8>(3)?.to_vec()?, [0, 0, 0]);
    /// # Ok::<(), ursa_sim::host::HostError>(())
    /// ```
    pub fn new() -> Device {
        Device::from_gpu(Gpu::new())
    }

    /// A device over a raw [`Gpu`] (its global memory as it is).
    ///
    /// ```
    /// let mut gpu = ursa_sim::Gpu::new();
    /// let addr = gpu.alloc(4, 16);
    /// let dev = ursa_sim::host::Device::from_gpu(gpu);
    /// assert_eq!(dev.with_gpu(|g| g.read(addr, 4)).unwrap(), [0; 4]);
    /// ```
    pub fn from_gpu(gpu: Gpu) -> Device {
        static NEXT_ID: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let id = NEXT_ID.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        Device { inner: Arc::new(DeviceState { id, gpu: Mutex::new(gpu) }) }
    }

    /// Runs `f` on the raw [`Gpu`] of the device (for what the typed API
    /// does not cover: constant banks, device-function calls). Memory a
    /// buffer owns must not be freed through it.
    ///
    /// ```
    /// let dev = ursa_sim::host::Device::new();
    /// let buf = dev.buffer_from(&[0x0403_0201u32])?;
    /// let bytes = dev.with_gpu(|g| g.read(buf.address(), 4)).unwrap();
    /// assert_eq!(bytes, [1, 2, 3, 4]);
    /// # Ok::<(), ursa_sim::host::HostError>(())
    /// ```
    pub fn with_gpu<R>(&self, f: impl FnOnce(&mut Gpu) -> R) -> R {
        f(&mut self.gpu())
    }

    /// Whether `self` and `other` are the same device.
    ///
    /// ```
    /// let dev = ursa_sim::host::Device::new();
    /// assert!(dev.is(&dev.clone()));
    /// ```
    pub fn is(&self, other: &Device) -> bool {
        Arc::ptr_eq(&self.inner, &other.inner)
    }

    /// Loads an ELF object (from `ursa compile`, `ursa asm` or an
    /// `ursa_emit::elf::write`): its functions laid out, relocated and
    /// decoded ([`Program::load`]).
    ///
    /// ```
    /// # let elf = ursa_sim::host::example_object();
    /// let dev = ursa_sim::host::Device::new();
    /// let module = dev.load_module(&elf)?;
    /// assert_eq!(module.kernel_names(), ["vadd"]);
    /// assert!(dev.load_module(b"not an object").is_err());
    /// # Ok::<(), ursa_sim::host::HostError>(())
    /// ```
    pub fn load_module(&self, elf: &[u8]) -> Result<Module, HostError> {
        self.module(Program::load(elf).map_err(HostError::Load)?)
    }

    /// A module of an already loaded [`Program`]: its data objects are
    /// allocated in the device's global memory, initialized and relocated
    /// (`docs/module.md`, "Data objects"); an error if the memory refuses
    /// them.
    ///
    /// ```
    /// # let elf = ursa_sim::host::example_object();
    /// let program = ursa_sim::Program::load(&elf).unwrap();
    /// let module = ursa_sim::host::Device::new().module(program)?;
    /// assert_eq!(module.kernel("vadd")?.name(), "vadd");
    /// # Ok::<(), ursa_sim::host::HostError>(())
    /// ```
    pub fn module(&self, program: Program) -> Result<Module, HostError> {
        Module::new(self.clone(), program)
    }

    /// A buffer of `len` zeroed elements.
    ///
    /// ```
    /// let dev = ursa_sim::host::Device::new();
    /// let buf = dev.alloc_zeros::<f32>(4)?;
    /// assert_eq!(buf.to_vec()?, [0.0; 4]);
    /// assert!(dev.alloc_zeros::<u64>(usize::MAX).is_err());
    /// # Ok::<(), ursa_sim::host::HostError>(())
    /// ```
    pub fn alloc_zeros<T: Element>(&self, len: usize) -> Result<DeviceBuffer<T>, HostError> {
        DeviceBuffer::zeroed(self, len)
    }

    /// A buffer holding a copy of `data`.
    ///
    /// ```
    /// let dev = ursa_sim::host::Device::new();
    /// let buf = dev.buffer_from(&[1u8, 2, 3])?;
    /// assert_eq!(buf.to_vec()?, [1, 2, 3]);
    /// # Ok::<(), ursa_sim::host::HostError>(())
    /// ```
    pub fn buffer_from<T: Element>(&self, data: &[T]) -> Result<DeviceBuffer<T>, HostError> {
        let buf = self.alloc_zeros(data.len())?;
        buf.copy_from_host(data)?;
        Ok(buf)
    }

    /// The raw device, locked (a panic elsewhere while it was locked leaves
    /// it usable: every operation on it completes or reports an error).
    fn gpu(&self) -> MutexGuard<'_, Gpu> {
        self.inner.gpu.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// Why an operation of the host API failed.
///
/// ```
/// let dev = ursa_sim::host::Device::new();
/// let e = dev.alloc_zeros::<i32>(2)?.slice(1..4).unwrap_err();
/// assert!(matches!(e, ursa_sim::host::HostError::Range { start: 1, end: 4, len: 2 }));
/// assert_eq!(e.to_string(), "elements 1..4 are outside a buffer of 2");
/// # Ok::<(), ursa_sim::host::HostError>(())
/// ```
#[derive(Debug)]
#[non_exhaustive]
pub enum HostError {
    /// The object could not be loaded.
    Load(LoadError),
    /// The module has no function of this name (`kernels`: the ones it has).
    NoKernel { name: String, kernels: Vec<String> },
    /// The function is a device function, which cannot be launched.
    NotAKernel { name: String, kernels: Vec<String> },
    /// The number of arguments differs from the kernel's parameters.
    ArgumentCount { kernel: String, params: Vec<Param>, given: usize },
    /// Argument `index` (from 1) does not fit its parameter: `given` is what
    /// the argument is (`f32`, `a buffer (a pointer)`).
    ArgumentType { kernel: String, index: usize, param: Param, given: String },
    /// Argument `index` (from 1) is a buffer of another device.
    OtherDevice { kernel: String, index: usize },
    /// A copy between a buffer and a host slice of another length.
    Length { buffer: usize, host: usize },
    /// A view's elements `start..end` are not within the buffer's `len`.
    Range { start: usize, end: usize, len: usize },
    /// A buffer of more bytes than the host can address.
    TooLarge { elements: usize, element: &'static str },
    /// The module has no data object of this name (`globals`: the ones it
    /// has).
    NoGlobal { name: String, globals: Vec<String> },
    /// A data object of `size` bytes is no whole number of `element`s.
    GlobalSize { name: String, size: u32, element: &'static str },
    /// The device's global memory refused an allocation or an access.
    Memory(Trap),
    /// The launch was refused (its configuration: sizes, limits) or stopped
    /// with a trap. Where a profile or a timeline was asked for, `before`
    /// holds what the launch did until then ([`Launch::trap`] is the trap).
    Trap { trap: Box<Trap>, before: Option<Box<Launch>> },
}

impl fmt::Display for HostError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let list = |k: &[String]| if k.is_empty() { "none".to_string() } else { k.join(", ") };
        match self {
            HostError::Load(e) => write!(f, "{}", e),
            HostError::NoKernel { name, kernels } => write!(f, "no function named `{}` (the kernels: {})", name, list(kernels)),
            HostError::NotAKernel { name, kernels } => {
                write!(f, "`{}` is a device function, not a kernel (the kernels: {})", name, list(kernels))
            }
            HostError::ArgumentCount { kernel, params, given } => {
                let names: Vec<String> = params.iter().map(|p| format!("{} ({})", p.name, p.type_name())).collect();
                write!(f, "kernel `{}` takes {} arguments ({}), {} given", kernel, params.len(), names.join(", "), given)
            }
            HostError::ArgumentType { kernel, index, param, given } => {
                write!(f, "argument {} is {}, but parameter `{}` of kernel `{}` is {}", index, given, param.name, kernel, param.type_name())
            }
            HostError::OtherDevice { kernel, index } => {
                write!(f, "argument {} of kernel `{}` is a buffer of another device", index, kernel)
            }
            HostError::Length { buffer, host } => {
                write!(f, "a copy between a buffer of {} elements and a host slice of {}", buffer, host)
            }
            HostError::Range { start, end, len } => write!(f, "elements {}..{} are outside a buffer of {}", start, end, len),
            HostError::TooLarge { elements, element } => {
                write!(f, "{} elements of {} are more bytes than the host can address", elements, element)
            }
            HostError::NoGlobal { name, globals } => write!(f, "no data object named `{}` (the data objects: {})", name, list(globals)),
            HostError::GlobalSize { name, size, element } => {
                write!(f, "data object `{}` of {} bytes is not a whole number of {} elements", name, size, element)
            }
            HostError::Memory(t) => write!(f, "{}", t),
            HostError::Trap { trap, .. } => match trap.kind {
                TrapKind::Launch(_) => write!(f, "{}", trap),
                _ => write!(f, "trap: {}", trap),
            },
        }
    }
}

impl std::error::Error for HostError {}

/// The object of `examples/vadd.s` (`out[i] = a[i] + b[i]` for `i < n`, with
/// parameters `a, b, out: ptr` and `n: i32`), for the examples of this
/// module's documentation.
#[doc(hidden)]
pub fn example_object() -> Vec<u8> {
    let obj = ursa_emit::asm::assemble(include_str!("../../../examples/vadd.s"), "vadd.s").expect("examples/vadd.s assembles");
    ursa_emit::elf::write(&obj)
}
