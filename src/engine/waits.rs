//! The wait-for graph that proves a deadlock: vertices are whatever a switching mode
//! waits for (circuits, links), an edge says "waits for" or "is held by". Every
//! partition lists the edges it knows (its waiting circuits, its held resources); the
//! union is the whole network's graph, and a cycle in it is a set of waits none of which
//! can ever end. Deciding from the union makes the verdict independent of the split.
//!
//! Not here: which edges a mode has (the mode lists them), the no-progress watchdog
//! (`watchdog`).

use std::collections::HashMap;

/// A vertex: a kind tag and a number (e.g. a circuit's message id or a link's index).
pub type WaitVertex = (u8, u64);

/// `from` waits for (or is held by) `to`.
pub type WaitEdge = (WaitVertex, WaitVertex);

/// Whether the edges contain a cycle. The answer does not depend on their order.
pub fn has_cycle(edges: &[WaitEdge]) -> bool {
    let mut adj: HashMap<WaitVertex, Vec<WaitVertex>> = HashMap::new();
    for &(a, b) in edges {
        adj.entry(a).or_default().push(b);
    }
    // Colour: absent unvisited, 1 on the current path, 2 finished.
    let mut colour: HashMap<WaitVertex, u8> = HashMap::with_capacity(adj.len());
    for &start in adj.keys() {
        if colour.contains_key(&start) {
            continue;
        }
        // Iterative depth-first search: (vertex, next edge to follow).
        let mut stack = vec![(start, 0usize)];
        colour.insert(start, 1);
        while let Some(top) = stack.last_mut() {
            let (v, i) = *top;
            let out = adj.get(&v).map_or(&[][..], |x| &x[..]);
            if i < out.len() {
                top.1 += 1;
                let w = out[i];
                match colour.get(&w) {
                    Some(1) => return true,
                    Some(_) => {}
                    None => {
                        colour.insert(w, 1);
                        stack.push((w, 0));
                    }
                }
            } else {
                colour.insert(v, 2);
                stack.pop();
            }
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_chain_of_waits_is_no_deadlock_but_a_ring_is() {
        let c = |x| (0u8, x);
        let l = |x| (1u8, x);
        // Circuit 1 waits for link 10 held by circuit 2, which waits for link 11 held by 3.
        let mut e = vec![(c(1), l(10)), (l(10), c(2)), (c(2), l(11)), (l(11), c(3))];
        assert!(!has_cycle(&e));
        // Circuit 3 waits for link 12, held by circuit 1: a ring.
        e.push((c(3), l(12)));
        assert!(!has_cycle(&e));
        e.push((l(12), c(1)));
        assert!(has_cycle(&e));
        e.reverse();
        assert!(has_cycle(&e), "order does not matter");
        assert!(!has_cycle(&[]));
    }
}
