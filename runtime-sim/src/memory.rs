//! Memory spaces: the sparse global memory with its host API, and the small
//! helpers the other spaces (shared, local, constant) share.
//!
//! Global memory is a set of allocations in a 64-bit address space. Only
//! allocated bytes exist: any access that is not entirely inside one
//! allocation is an out-of-bounds fault. Allocations start at
//! [`GLOBAL_BASE`] (above 4 GiB, so a truncated pointer faults) and are
//! separated by unmapped guard gaps.

use crate::trap::{Space, TrapKind};

/// Address of the first global allocation.
pub const GLOBAL_BASE: u64 = 0x1_0000_0000;
/// Unmapped bytes left after every allocation.
pub const GUARD_GAP: u64 = 0x1000;
/// Smallest alignment of an allocation.
pub const MIN_ALIGN: u64 = 256;
/// High words of the generic windows onto shared and local memory (here,
/// below both the memory instructions and the SM model's trace, which
/// classify generic addresses by them).
pub const SHARED_WINDOW: u64 = 0x0001_0000;
pub const LOCAL_WINDOW: u64 = 0x0002_0000;

#[derive(Clone)]
struct Allocation {
    base: u64,
    bytes: Vec<u8>,
}

impl Allocation {
    /// Whether `[addr, addr + len)` is inside the allocation.
    #[inline(always)]
    fn holds(&self, addr: u64, len: u64) -> bool {
        addr >= self.base && addr.checked_add(len).is_some_and(|e| e <= self.base + self.bytes.len() as u64)
    }
}

/// `n` zero bytes, or None where the host cannot allocate them. The
/// allocator zeroes them (calloc), so pages never touched cost nothing.
pub(crate) fn zeroed(n: usize) -> Option<Vec<u8>> {
    if n == 0 {
        return Some(Vec::new());
    }
    let layout = std::alloc::Layout::array::<u8>(n).ok()?;
    // SAFETY: the layout's size is not zero.
    let p = unsafe { std::alloc::alloc_zeroed(layout) };
    if p.is_null() {
        return None;
    }
    // SAFETY: `p` comes from the global allocator with the layout of `n`
    // bytes of alignment 1, and all `n` bytes are initialized (zero).
    Some(unsafe { Vec::from_raw_parts(p, n, n) })
}

/// Global memory as the CTAs of one launch see it: owned by the one CTA
/// running, or shared by CTAs running on several threads behind a lock that
/// a memory instruction holds for all its lanes (so ATOM stays atomic and
/// every instruction's accesses are indivisible).
pub(crate) enum Global<'a> {
    Own(&'a mut GlobalMemory),
    Shared(&'a std::sync::Mutex<GlobalMemory>),
}

/// The device's global memory.
#[derive(Clone)]
pub struct GlobalMemory {
    /// Sorted by base address, non-overlapping.
    allocs: Vec<Allocation>,
    next: u64,
    /// Indices of the two allocations found last, the latest first
    /// (accesses cluster, and a kernel often alternates between two
    /// buffers: `matmul`'s two operands, a loop's input and output).
    last: [usize; 2],
}

impl Default for GlobalMemory {
    fn default() -> Self {
        Self::new()
    }
}

impl GlobalMemory {
    pub fn new() -> GlobalMemory {
        GlobalMemory { allocs: Vec::new(), next: GLOBAL_BASE, last: [0; 2] }
    }

    /// Allocates `size` zeroed bytes aligned to `align` (rounded up to a power
    /// of two of at least [`MIN_ALIGN`]); their address, or a
    /// [`TrapKind::HostMemory`] where the host cannot allocate `size` bytes
    /// (or the address space has no room). A zero-size allocation gets an
    /// address that no access can use.
    pub fn alloc(&mut self, size: u64, align: u64) -> Result<u64, TrapKind> {
        let no_room = || TrapKind::HostMemory { space: Space::Global, bytes: size, limit: None };
        let align = align.max(MIN_ALIGN).checked_next_power_of_two().ok_or_else(no_room)?;
        let base = self.next.checked_add(align - 1).ok_or_else(no_room)? & !(align - 1);
        let next = base.checked_add(size.max(1)).and_then(|e| e.checked_add(GUARD_GAP)).ok_or_else(no_room)?;
        let bytes = usize::try_from(size).ok().and_then(zeroed).ok_or_else(no_room)?;
        self.next = next;
        self.allocs.push(Allocation { base, bytes });
        Ok(base)
    }

    /// Releases the allocation that starts at `base`; false if there is none.
    pub fn free(&mut self, base: u64) -> bool {
        match self.allocs.binary_search_by_key(&base, |a| a.base) {
            Ok(i) => {
                self.allocs.remove(i);
                self.last = [0; 2];
                true
            }
            Err(_) => false,
        }
    }

    /// Index of the allocation holding `[addr, addr + len)`: one of the
    /// last two found (inline), else [`GlobalMemory::search`].
    #[inline(always)]
    fn find(&mut self, addr: u64, len: u64) -> Option<usize> {
        for k in self.last {
            if self.allocs.get(k).is_some_and(|a| a.holds(addr, len)) {
                return Some(k);
            }
        }
        self.search(addr, len)
    }

    /// [`GlobalMemory::find`]'s binary search, which makes the allocation
    /// it finds the latest found.
    #[inline(never)]
    fn search(&mut self, addr: u64, len: u64) -> Option<usize> {
        let i = match self.allocs.binary_search_by_key(&addr, |a| a.base) {
            Ok(i) => i,
            Err(0) => return None,
            Err(i) => i - 1,
        };
        if self.allocs[i].holds(addr, len) {
            self.last = [i, self.last[0]];
            Some(i)
        } else {
            None
        }
    }

    /// The bytes `[addr, addr + len)`, or an out-of-bounds fault.
    #[inline]
    pub fn bytes(&mut self, addr: u64, len: u64) -> Result<&mut [u8], TrapKind> {
        match self.find(addr, len) {
            Some(i) => {
                let a = &mut self.allocs[i];
                let off = (addr - a.base) as usize;
                Ok(&mut a.bytes[off..off + len as usize])
            }
            None => Err(TrapKind::OutOfBounds { space: Space::Global, addr, size: len.min(u32::MAX as u64) as u32 }),
        }
    }

    /// The allocation holding `[addr, addr + len)`: its base and bytes.
    #[inline(always)]
    pub fn allocation(&mut self, addr: u64, len: u64) -> Option<(u64, &mut [u8])> {
        let i = self.find(addr, len)?;
        let a = &mut self.allocs[i];
        Some((a.base, &mut a.bytes[..]))
    }

    /// Whether `[addr, addr + len)` is inside one allocation.
    pub fn contains(&mut self, addr: u64, len: u64) -> bool {
        self.find(addr, len).is_some()
    }
}

/// Checks that `addr` is a multiple of `size` (a power of two).
#[inline]
pub fn check_align(space: Space, addr: u64, size: u32) -> Result<(), TrapKind> {
    if addr & (size as u64 - 1) != 0 {
        Err(TrapKind::Misaligned { space, addr, size })
    } else {
        Ok(())
    }
}

/// The bytes `[addr, addr + size)` of a flat buffer, or an out-of-bounds fault.
#[inline]
pub fn window(buf: &mut [u8], space: Space, addr: u64, size: u32) -> Result<&mut [u8], TrapKind> {
    let end = addr.checked_add(size as u64);
    match end {
        Some(e) if e <= buf.len() as u64 => Ok(&mut buf[addr as usize..e as usize]),
        _ => Err(TrapKind::OutOfBounds { space, addr, size }),
    }
}

/// Little-endian load of up to 8 bytes.
#[inline]
pub fn le_load(b: &[u8]) -> u64 {
    let mut v = 0u64;
    for (i, x) in b.iter().enumerate() {
        v |= (*x as u64) << (8 * i);
    }
    v
}

/// Little-endian store of the low `b.len()` bytes of `v`.
#[inline]
pub fn le_store(b: &mut [u8], v: u64) {
    for (i, x) in b.iter_mut().enumerate() {
        *x = (v >> (8 * i)) as u8;
    }
}

/// The constant banks of a launch. Bank 0 holds the launch parameters (see
/// docs/abi.md); the other banks are empty unless the program fills them.
pub struct ConstBanks {
    pub banks: Vec<Vec<u8>>,
}

impl ConstBanks {
    pub fn new() -> ConstBanks {
        ConstBanks { banks: vec![Vec::new(); 64] }
    }

    /// Reads `size` (1, 2, 4, 8 or 16) bytes at `c[bank][off]`.
    #[inline]
    pub fn read(&self, bank: u8, off: u64, size: u32) -> Result<&[u8], TrapKind> {
        let addr = ((bank as u64) << 16) | (off & 0xffff);
        check_align(Space::Constant, off, size.min(8)).map_err(|_| TrapKind::Misaligned { space: Space::Constant, addr, size })?;
        let b = &self.banks[bank as usize & 63];
        match off.checked_add(size as u64) {
            Some(e) if off <= 0xffff && e <= b.len() as u64 => Ok(&b[off as usize..e as usize]),
            _ => Err(TrapKind::OutOfBounds { space: Space::Constant, addr, size }),
        }
    }

    #[inline]
    pub fn u32(&self, bank: u8, off: u16) -> Result<u32, TrapKind> {
        self.read(bank, off as u64, 4).map(|b| le_load(b) as u32)
    }

    #[inline]
    pub fn u64(&self, bank: u8, off: u16) -> Result<u64, TrapKind> {
        self.read(bank, off as u64, 8).map(le_load)
    }
}

impl Default for ConstBanks {
    fn default() -> Self {
        Self::new()
    }
}
