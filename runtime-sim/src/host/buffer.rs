//! Typed device memory: the element types a buffer can hold ([`Element`])
//! and buffers of them in the device's global memory ([`DeviceBuffer`]),
//! with copies to and from host slices and bounds-checked views.

use std::marker::PhantomData;
use std::ops::{Bound, RangeBounds};
use std::sync::Arc;

use ursa_emit::elf::ParamKind;

use super::{Device, HostError};

mod sealed {
    /// What the host API needs of an element type; implemented only here.
    pub trait Sealed: Copy {
        /// What a scalar argument of the type holds (docs/abi.md).
        const KIND: ursa_emit::elf::ParamKind;
        /// Appends the little-endian bytes of the value.
        fn put(self, out: &mut Vec<u8>);
        /// The value of exactly `size_of::<Self>()` little-endian bytes.
        fn get(bytes: &[u8]) -> Self;
    }
}

/// A plain type a [`DeviceBuffer`] holds and a kernel takes as a scalar
/// argument: `i8` … `i128`, `u8` … `u128`, `f32` and `f64`, stored
/// little-endian as the device does. Sealed: no other type implements it.
///
/// ```
/// use ursa_sim::host::Element;
/// assert_eq!((<f32 as Element>::NAME, <f32 as Element>::SIZE), ("f32", 4));
/// assert_eq!(<u16 as Element>::NAME, "u16");
/// ```
pub trait Element: sealed::Sealed + Send + Sync + std::fmt::Debug + PartialEq + 'static {
    /// The type as Rust (and `ursa run`) writes it: `i32`, `f64`.
    const NAME: &'static str;
    /// Bytes of one value.
    const SIZE: usize;
}

macro_rules! elements {
    ($($t:ident => $kind:ident),* $(,)?) => {$(
        impl sealed::Sealed for $t {
            const KIND: ParamKind = ParamKind::$kind;
            fn put(self, out: &mut Vec<u8>) {
                out.extend_from_slice(&self.to_le_bytes());
            }
            fn get(bytes: &[u8]) -> $t {
                let mut b = [0u8; std::mem::size_of::<$t>()];
                b.copy_from_slice(bytes);
                $t::from_le_bytes(b)
            }
        }
        impl Element for $t {
            const NAME: &'static str = stringify!($t);
            const SIZE: usize = std::mem::size_of::<$t>();
        }
        impl super::AsKernelArg for $t {
            fn as_kernel_arg(&self) -> super::KernelArg {
                super::KernelArg::scalar(*self)
            }
        }
    )*};
}

elements!(
    i8 => Int, i16 => Int, i32 => Int, i64 => Int, i128 => Int,
    u8 => Int, u16 => Int, u32 => Int, u64 => Int, u128 => Int,
    f32 => Float, f64 => Float,
);

/// The little-endian bytes of a slice of elements.
pub(crate) fn to_bytes<T: Element>(values: &[T]) -> Vec<u8> {
    let mut out = Vec::with_capacity(values.len() * T::SIZE);
    for &v in values {
        v.put(&mut out);
    }
    out
}

/// One allocation of global memory; freed when the last buffer or view of it
/// is dropped.
pub(crate) struct Allocation {
    device: Device,
    pub(crate) base: u64,
}

impl Allocation {
    /// `bytes` (at least 1) of zeroed global memory aligned to `align`.
    pub(crate) fn new(device: &Device, bytes: u64, align: u64) -> Result<Arc<Allocation>, HostError> {
        let base = device.gpu().try_alloc(bytes.max(1), align.max(1)).map_err(HostError::Memory)?;
        Ok(Arc::new(Allocation { device: device.clone(), base }))
    }
}

impl Drop for Allocation {
    fn drop(&mut self) {
        self.device.gpu().free(self.base);
    }
}

/// A typed buffer in a device's global memory: `len` elements of `T` at a
/// device address. Made zeroed ([`Device::alloc_zeros`]) or from a host
/// slice ([`Device::buffer_from`]); [`DeviceBuffer::slice`] gives views of
/// part of it (the same memory). The memory is freed when the buffer and all
/// its views are dropped. Passed to a kernel by reference, as its address
/// ([`super::Kernel::launch`]).
///
/// ```
/// use ursa_sim::host::Device;
/// let dev = Device::new();
/// let buf = dev.buffer_from(&[1.5f32, 2.5, 3.5])?;
/// assert_eq!(buf.len(), 3);
/// assert_eq!(buf.to_vec()?, [1.5, 2.5, 3.5]);
/// # Ok::<(), ursa_sim::host::HostError>(())
/// ```
pub struct DeviceBuffer<T: Element> {
    alloc: Arc<Allocation>,
    /// Bytes from the allocation's start to the first element of this view.
    offset: u64,
    len: usize,
    elem: PhantomData<T>,
}

impl<T: Element> std::fmt::Debug for DeviceBuffer<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "DeviceBuffer<{}>[{}] at 0x{:x}", T::NAME, self.len, self.address())
    }
}

impl<T: Element> DeviceBuffer<T> {
    /// A buffer of `len` zeroed elements on `device` (what
    /// [`Device::alloc_zeros`] does).
    pub(crate) fn zeroed(device: &Device, len: usize) -> Result<DeviceBuffer<T>, HostError> {
        let bytes = len.checked_mul(T::SIZE).ok_or(HostError::TooLarge { elements: len, element: T::NAME })?;
        let base = device.gpu().try_alloc(bytes as u64, 16).map_err(HostError::Memory)?;
        Ok(DeviceBuffer { alloc: Arc::new(Allocation { device: device.clone(), base }), offset: 0, len, elem: PhantomData })
    }

    /// The view of `len` elements at the start of `alloc` (a module's data
    /// object).
    pub(crate) fn view(alloc: Arc<Allocation>, len: usize) -> DeviceBuffer<T> {
        DeviceBuffer { alloc, offset: 0, len, elem: PhantomData }
    }

    /// Number of elements.
    ///
    /// ```
    /// let dev = ursa_sim::host::Device::new();
    /// assert_eq!(dev.alloc_zeros::<i64>(5)?.len(), 5);
    /// # Ok::<(), ursa_sim::host::HostError>(())
    /// ```
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the buffer has no elements (a zero-length buffer still has an
    /// address of its own).
    ///
    /// ```
    /// let dev = ursa_sim::host::Device::new();
    /// assert!(dev.buffer_from::<u8>(&[])?.is_empty());
    /// # Ok::<(), ursa_sim::host::HostError>(())
    /// ```
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The device address of the first element (what a kernel receives).
    ///
    /// ```
    /// let dev = ursa_sim::host::Device::new();
    /// let buf = dev.alloc_zeros::<u32>(8)?;
    /// assert_eq!(buf.slice(2..)?.address(), buf.address() + 8);
    /// # Ok::<(), ursa_sim::host::HostError>(())
    /// ```
    pub fn address(&self) -> u64 {
        self.alloc.base + self.offset
    }

    /// The device whose memory holds the buffer.
    ///
    /// ```
    /// let dev = ursa_sim::host::Device::new();
    /// assert!(dev.alloc_zeros::<u8>(1)?.device().is(&dev));
    /// # Ok::<(), ursa_sim::host::HostError>(())
    /// ```
    pub fn device(&self) -> &Device {
        &self.alloc.device
    }

    /// A view of elements `range` of the buffer: the same memory, checked
    /// to lie within it ([`HostError::Range`] otherwise). Views of views
    /// work the same way; the memory lives as long as any of them.
    ///
    /// ```
    /// let dev = ursa_sim::host::Device::new();
    /// let buf = dev.buffer_from(&[1i32, 2, 3, 4])?;
    /// let mid = buf.slice(1..3)?;
    /// mid.copy_from_host(&[20, 30])?;
    /// assert_eq!(buf.to_vec()?, [1, 20, 30, 4]);
    /// assert!(buf.slice(3..5).is_err());
    /// # Ok::<(), ursa_sim::host::HostError>(())
    /// ```
    pub fn slice(&self, range: impl RangeBounds<usize>) -> Result<DeviceBuffer<T>, HostError> {
        let start = match range.start_bound() {
            Bound::Included(&s) => Some(s),
            Bound::Excluded(&s) => s.checked_add(1),
            Bound::Unbounded => Some(0),
        };
        let end = match range.end_bound() {
            Bound::Included(&e) => e.checked_add(1),
            Bound::Excluded(&e) => Some(e),
            Bound::Unbounded => Some(self.len),
        };
        match (start, end) {
            (Some(start), Some(end)) if start <= end && end <= self.len => Ok(DeviceBuffer {
                alloc: self.alloc.clone(),
                offset: self.offset + (start * T::SIZE) as u64,
                len: end - start,
                elem: PhantomData,
            }),
            _ => Err(HostError::Range { start: start.unwrap_or(usize::MAX), end: end.unwrap_or(usize::MAX), len: self.len }),
        }
    }

    /// Copies a host slice of the same length into the buffer
    /// ([`HostError::Length`] if the lengths differ).
    ///
    /// ```
    /// let dev = ursa_sim::host::Device::new();
    /// let buf = dev.alloc_zeros::<u16>(2)?;
    /// buf.copy_from_host(&[7, 9])?;
    /// assert_eq!(buf.to_vec()?, [7, 9]);
    /// assert!(buf.copy_from_host(&[1]).is_err());
    /// # Ok::<(), ursa_sim::host::HostError>(())
    /// ```
    pub fn copy_from_host(&self, src: &[T]) -> Result<(), HostError> {
        self.same_length(src.len())?;
        self.device().gpu().write(self.address(), &to_bytes(src)).map_err(HostError::Memory)
    }

    /// Copies the buffer into a host slice of the same length
    /// ([`HostError::Length`] if the lengths differ).
    ///
    /// ```
    /// let dev = ursa_sim::host::Device::new();
    /// let buf = dev.buffer_from(&[-1i8, 5])?;
    /// let mut host = [0i8; 2];
    /// buf.copy_to_host(&mut host)?;
    /// assert_eq!(host, [-1, 5]);
    /// # Ok::<(), ursa_sim::host::HostError>(())
    /// ```
    pub fn copy_to_host(&self, dst: &mut [T]) -> Result<(), HostError> {
        self.same_length(dst.len())?;
        let bytes = self.device().gpu().read(self.address(), (self.len * T::SIZE) as u64).map_err(HostError::Memory)?;
        for (d, b) in dst.iter_mut().zip(bytes.chunks_exact(T::SIZE)) {
            *d = T::get(b);
        }
        Ok(())
    }

    /// The buffer's elements, copied to a new vector.
    ///
    /// ```
    /// let dev = ursa_sim::host::Device::new();
    /// assert_eq!(dev.alloc_zeros::<f64>(2)?.to_vec()?, [0.0, 0.0]);
    /// # Ok::<(), ursa_sim::host::HostError>(())
    /// ```
    pub fn to_vec(&self) -> Result<Vec<T>, HostError> {
        let bytes = self.device().gpu().read(self.address(), (self.len * T::SIZE) as u64).map_err(HostError::Memory)?;
        Ok(bytes.chunks_exact(T::SIZE).map(T::get).collect())
    }

    /// Sets every element to zero.
    ///
    /// ```
    /// let dev = ursa_sim::host::Device::new();
    /// let buf = dev.buffer_from(&[3u64, 4])?;
    /// buf.zero()?;
    /// assert_eq!(buf.to_vec()?, [0, 0]);
    /// # Ok::<(), ursa_sim::host::HostError>(())
    /// ```
    pub fn zero(&self) -> Result<(), HostError> {
        self.device().gpu().write(self.address(), &vec![0; self.len * T::SIZE]).map_err(HostError::Memory)
    }

    fn same_length(&self, host: usize) -> Result<(), HostError> {
        if host == self.len {
            Ok(())
        } else {
            Err(HostError::Length { buffer: self.len, host })
        }
    }
}
