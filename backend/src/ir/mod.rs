//! The intermediate representations the passes share, and the analyses on them
//! that more than one pass reads.

pub mod cfg;
pub mod code;

/// Items grouped by a key, in a compressed table: the items of key `k` are
/// `list[start[k]..start[k + 1]]`, in the order `pairs` gives them (an item
/// given twice for a key is there twice). `pairs` yields `(key, item)`, every
/// key below `keys`; it is called twice, to count and to fill, and must give
/// the same pairs both times.
pub(crate) fn group_by_key<I: Iterator<Item = (u32, u32)>>(keys: usize, pairs: impl Fn() -> I, start: &mut Vec<u32>, list: &mut Vec<u32>) {
    start.clear();
    start.resize(keys + 1, 0);
    for (k, _) in pairs() {
        start[k as usize + 1] += 1;
    }
    for k in 0..keys {
        start[k + 1] += start[k];
    }
    list.clear();
    list.resize(start[keys] as usize, 0);
    let mut at: smallvec::SmallVec<[u32; 64]> = start[..keys].iter().copied().collect();
    for (k, item) in pairs() {
        list[at[k as usize] as usize] = item;
        at[k as usize] += 1;
    }
}
