//! The compiler's one dense bit-set type, [`BitSet`]: sets of virtual
//! registers ([`VRegSet`](crate::vcode::VRegSet)), of machine registers of
//! one file (the SSA allocator's and `pack_regs`'), of per-block liveness and
//! of program points (`alloc_bregs`).
//!
//! Generic over the member type ([`Member`]: `u32`, `usize`, `VReg`) and the
//! storage ([`Words`]): a fixed `[u64; N]` (inline and `Copy`, for the
//! register files, whose size is known) or, by default, a
//! `SmallVec<[u64; 4]>` (inline up to 256 members, on the heap past them,
//! growing when a larger member is inserted) or a `Vec<u64>` (for sets
//! accessed in hot loops: no test of where the words are). Why not `cranelift-bitset` or
//! `fixedbitset`: `docs/regalloc.md`, *Bit sets*.

use core::borrow::Borrow;
use core::marker::PhantomData;

use smallvec::SmallVec;

/// What a set holds: a dense index.
pub trait Member: Copy {
    fn index(self) -> usize;
    fn from_index(i: usize) -> Self;
}

impl Member for u32 {
    #[inline]
    fn index(self) -> usize {
        self as usize
    }
    #[inline]
    fn from_index(i: usize) -> Self {
        i as u32
    }
}

impl Member for usize {
    #[inline]
    fn index(self) -> usize {
        self
    }
    #[inline]
    fn from_index(i: usize) -> Self {
        i
    }
}

/// The storage of a set: 64 members a word.
pub trait Words: AsRef<[u64]> + AsMut<[u64]> + Clone {
    /// Room for members below `n`, all absent.
    fn zeroed(n: usize) -> Self;
    /// Room for `words` words at least (a fixed storage has what it has).
    fn grow(&mut self, words: usize);
    /// All absent, with room for members below `n` (the storage reused).
    fn reset(&mut self, n: usize);
}

impl<const N: usize> Words for [u64; N] {
    #[inline]
    fn zeroed(_: usize) -> Self {
        [0; N]
    }
    #[inline]
    fn grow(&mut self, _: usize) {}
    #[inline]
    fn reset(&mut self, _: usize) {
        self.fill(0);
    }
}

/// Growable storages: a `SmallVec` (inline up to 256 members) or a `Vec`
/// (no inline room, but no test of where the words are on each access).
macro_rules! growable_words {
    ($t:ty, $zeroed:expr) => {
        impl Words for $t {
            #[inline]
            fn zeroed(n: usize) -> Self {
                $zeroed(n.div_ceil(64))
            }
            #[inline]
            fn grow(&mut self, words: usize) {
                if words > self.len() {
                    self.resize(words, 0);
                }
            }
            #[inline]
            fn reset(&mut self, n: usize) {
                self.clear();
                self.resize(n.div_ceil(64), 0);
            }
        }
    };
}
growable_words!(SmallVec<[u64; 4]>, |w| smallvec::smallvec![0; w]);
growable_words!(Vec<u64>, |w| vec![0; w]);

/// A set of dense indices as bits (see the module docs).
pub struct BitSet<I = usize, W = SmallVec<[u64; 4]>> {
    words: W,
    _member: PhantomData<fn() -> I>,
}

impl<I, W: Clone> Clone for BitSet<I, W> {
    #[inline]
    fn clone(&self) -> Self {
        BitSet { words: self.words.clone(), _member: PhantomData }
    }
    /// Reuses the storage of `self`.
    #[inline]
    fn clone_from(&mut self, o: &Self) {
        self.words.clone_from(&o.words);
    }
}

impl<I, W: Copy> Copy for BitSet<I, W> {}

impl<I: Member, W: Words> Default for BitSet<I, W> {
    fn default() -> Self {
        BitSet::new(0)
    }
}

impl<I: Member, W: Words> PartialEq for BitSet<I, W> {
    /// The same members (whatever the room of each).
    fn eq(&self, o: &Self) -> bool {
        let (a, b) = (self.words(), o.words());
        let k = a.len().min(b.len());
        a[..k] == b[..k] && a[k..].iter().chain(&b[k..]).all(|&w| w == 0)
    }
}

impl<I: Member, W: Words> Eq for BitSet<I, W> {}

impl<I: Member + core::fmt::Debug, W: Words> core::fmt::Debug for BitSet<I, W> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_set().entries(self.iter()).finish()
    }
}

impl<I: Member, W: Words> BitSet<I, W> {
    /// An empty set with room for members below `n` (a growable storage
    /// grows for others).
    #[inline]
    pub fn new(n: usize) -> Self {
        BitSet { words: W::zeroed(n), _member: PhantomData }
    }

    /// The set whose storage is `words`.
    #[inline]
    pub fn from_words(words: W) -> Self {
        BitSet { words, _member: PhantomData }
    }

    /// The storage, 64 members a word (member `i` is bit `i % 64` of word `i / 64`).
    #[inline]
    pub fn words(&self) -> &[u64] {
        self.words.as_ref()
    }

    #[inline]
    pub fn words_mut(&mut self) -> &mut [u64] {
        self.words.as_mut()
    }

    /// Whether `i` is a member (taken by value or by reference).
    #[inline]
    pub fn contains(&self, i: impl Borrow<I>) -> bool {
        let i = i.borrow().index();
        self.words().get(i / 64).is_some_and(|w| w >> (i % 64) & 1 != 0)
    }

    /// Adds `i`; whether it was new. A fixed storage must have room for it.
    #[inline]
    pub fn insert(&mut self, i: I) -> bool {
        let i = i.index();
        self.words.grow(i / 64 + 1);
        let w = &mut self.words_mut()[i / 64];
        let bit = 1 << (i % 64);
        let new = *w & bit == 0;
        *w |= bit;
        new
    }

    /// Removes `i`; whether it was a member.
    #[inline]
    pub fn remove(&mut self, i: I) -> bool {
        let i = i.index();
        match self.words_mut().get_mut(i / 64) {
            Some(w) => {
                let bit = 1 << (i % 64);
                let had = *w & bit != 0;
                *w &= !bit;
                had
            }
            None => false,
        }
    }

    /// No member left, with room for members below `n` (the storage reused).
    #[inline]
    pub fn reset(&mut self, n: usize) {
        self.words.reset(n);
    }

    /// No member left (the room stays).
    #[inline]
    pub fn clear(&mut self) {
        self.words_mut().fill(0);
    }

    pub fn len(&self) -> usize {
        self.words().iter().map(|w| w.count_ones() as usize).sum()
    }

    pub fn is_empty(&self) -> bool {
        self.words().iter().all(|&w| w == 0)
    }

    /// The members in increasing order.
    #[inline]
    pub fn iter(&self) -> Iter<'_, I> {
        let words = self.words();
        Iter { words, k: 0, cur: words.first().copied().unwrap_or(0), _member: PhantomData }
    }

    /// Adds the members of `o` (a fixed storage must have room for them);
    /// whether any was new.
    #[inline]
    pub fn union_with<W2: Words>(&mut self, o: &BitSet<I, W2>) -> bool {
        self.words.grow(o.words().len());
        let mut changed = false;
        for (a, &b) in self.words_mut().iter_mut().zip(o.words()) {
            changed |= b & !*a != 0;
            *a |= b;
        }
        changed
    }

    /// Whether the two sets have a member in common.
    #[inline]
    pub fn intersects<W2: Words>(&self, o: &BitSet<I, W2>) -> bool {
        self.words().iter().zip(o.words()).any(|(a, b)| a & b != 0)
    }

    /// How many members are below `i` (`i` within the room).
    pub fn rank(&self, i: I) -> usize {
        let i = i.index();
        let (k, words) = (i / 64, self.words());
        let below: u32 = words[..k].iter().map(|w| w.count_ones()).sum();
        (below + (words[k] & ((1u64 << (i % 64)) - 1)).count_ones()) as usize
    }

    /// The lowest index below `limit` that is not a member; with `pair`, the
    /// lowest even `i` with `i` and `i + 1` both absent and below `limit`.
    #[inline]
    pub fn lowest_absent(&self, limit: usize, pair: bool) -> Option<I> {
        for (k, &w) in self.words().iter().enumerate() {
            let mut free = !w;
            if pair {
                // i even with i and i + 1 free (never across a word: 64 is even).
                free &= free >> 1;
                free &= 0x5555_5555_5555_5555;
            }
            if free != 0 {
                let i = 64 * k + free.trailing_zeros() as usize;
                return (i + (pair as usize) < limit).then(|| I::from_index(i));
            }
        }
        None
    }
}

impl<I: Member, W: Words> Extend<I> for BitSet<I, W> {
    fn extend<T: IntoIterator<Item = I>>(&mut self, it: T) {
        for i in it {
            self.insert(i);
        }
    }
}

impl<'a, I: Member, W: Words> IntoIterator for &'a BitSet<I, W> {
    type Item = I;
    type IntoIter = Iter<'a, I>;
    fn into_iter(self) -> Iter<'a, I> {
        self.iter()
    }
}

/// The members of a [`BitSet`], in increasing order.
pub struct Iter<'a, I> {
    words: &'a [u64],
    k: usize,
    cur: u64,
    _member: PhantomData<fn() -> I>,
}

impl<I: Member> Iterator for Iter<'_, I> {
    type Item = I;
    #[inline]
    fn next(&mut self) -> Option<I> {
        loop {
            if self.cur != 0 {
                let b = self.cur.trailing_zeros() as usize;
                self.cur &= self.cur - 1;
                return Some(I::from_index(64 * self.k + b));
            }
            self.k += 1;
            self.cur = *self.words.get(self.k)?;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn members_in_order_across_words() {
        let mut s: BitSet<u32> = BitSet::new(10);
        for i in [300, 3, 64, 63, 0] {
            assert!(s.insert(i));
        }
        assert!(!s.insert(64));
        assert_eq!(s.iter().collect::<Vec<_>>(), [0, 3, 63, 64, 300]);
        assert_eq!((s.len(), s.rank(64), s.rank(300)), (5, 3, 4));
        assert!(s.remove(63) && !s.remove(63) && !s.remove(5000));
        assert!(!s.contains(63u32) && s.contains(300u32) && !s.contains(&9999));
    }

    #[test]
    fn equal_sets_of_different_room_are_equal() {
        let mut a: BitSet<usize> = BitSet::new(64);
        let mut b: BitSet<usize> = BitSet::new(1000);
        a.insert(7);
        b.insert(7);
        assert_eq!(a, b);
        b.insert(900);
        assert_ne!(a, b);
        assert!(a.intersects(&b));
        assert!(a.union_with(&b) && a.len() == 2 && a.contains(900));
        assert!(!a.union_with(&b));
    }

    #[test]
    fn lowest_absent_single_and_pair() {
        let mut s: BitSet<u32, [u64; 4]> = BitSet::new(0);
        for i in [0, 1, 3, 4] {
            s.insert(i);
        }
        assert_eq!(s.lowest_absent(255, false), Some(2));
        // 2 is free but 3 is not; 6–7 are the first free even pair.
        assert_eq!(s.lowest_absent(255, true), Some(6));
        assert_eq!(s.lowest_absent(2, false), None);
        let full: BitSet<u32, [u64; 4]> = BitSet::from_words([!0; 4]);
        assert_eq!(full.lowest_absent(255, false), None);
    }
}
