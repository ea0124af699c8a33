//! The compiler's one depth-first ordering, [`reverse_postorder_into`]: of
//! CLIF blocks (the lowering's block order, the backend's control-flow graph)
//! and of machine blocks or plain indices (the backend's analyses).

use smallvec::SmallVec;

/// The nodes reachable from `root` in reverse postorder (depth first,
/// successors in order; `succ(x, i)` is the `i`th successor of `x`, `None`
/// past the last), into `post` (emptied first), for any kind of node;
/// `first_visit(x)` marks `x` visited and says whether it was not before
/// (the caller's own table: no other is made).
pub fn reverse_postorder_into<N: Copy>(
    root: N,
    succ: impl Fn(N, usize) -> Option<N>,
    mut first_visit: impl FnMut(N) -> bool,
    post: &mut Vec<N>,
) {
    post.clear();
    let mut stack: SmallVec<[(N, usize); 16]> = SmallVec::new();
    first_visit(root);
    stack.push((root, 0));
    while let Some(&mut (x, ref mut i)) = stack.last_mut() {
        match succ(x, *i) {
            Some(s) => {
                *i += 1;
                if first_visit(s) {
                    stack.push((s, 0));
                }
            }
            None => {
                post.push(x);
                stack.pop();
            }
        }
    }
    post.reverse();
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A diamond with a back edge: 0 → 1, 2; 1 → 3; 2 → 3; 3 → 0, 4.
    #[test]
    fn successors_in_order_and_each_node_once() {
        let succs: [&[usize]; 6] = [&[1, 2], &[3], &[3], &[0, 4], &[], &[0]];
        let mut seen = [false; 6];
        let mut post = vec![9];
        reverse_postorder_into(0, |x, i| succs[x].get(i).copied(), |x| !std::mem::replace(&mut seen[x], true), &mut post);
        // 5 is unreachable; 2 is entered after 1's subtree (3, 4) is done.
        assert_eq!(post, [0, 2, 1, 3, 4]);
    }
}
