//! The routers a partition steps in a cycle: a set of local node indices kept as a
//! bitset with summary levels, so that a wake-up is a bit and the routers are stepped
//! in index order. Index order is what makes it worth having: neighbouring routers'
//! entries share cache lines in every per-node, per-port and per-VC table, which a list
//! in wake-up order visits at random (on the 16×16 BookSim torus a fifth of the first
//! level's data-cache misses, docs/speed.md). Which routers are active is the
//! simulation's business (`engine::sim`); the order they are stepped in cannot change a
//! result (`Network::SORT_EVENTS`).

use crate::foundation::error::Result;
use crate::foundation::limits::zeroed_table;

/// A set of node indices below a fixed bound, visited in increasing order.
#[derive(Clone, Debug, Default)]
pub struct ActiveSet {
    /// `levels[0]`: one bit per node; `levels[k + 1]`: one bit per non-zero word of
    /// `levels[k]`; the last level is one word, so a visit scans at most 64 words a level.
    levels: Vec<Vec<u64>>,
}

impl ActiveSet {
    /// An empty set of indices below `n`; an error when the memory cannot be had.
    pub fn new(n: usize) -> Result<Self> {
        let mut levels = Vec::new();
        let mut len = n.max(1);
        loop {
            let words = len.div_ceil(64);
            levels.push(zeroed_table(Some(words), "active node")?);
            if words == 1 {
                return Ok(ActiveSet { levels });
            }
            len = words;
        }
    }

    /// Adds node `i` (a no-op when it is in already).
    #[inline]
    pub fn insert(&mut self, i: usize) {
        let first = &mut self.levels[0];
        let was = first[i / 64];
        first[i / 64] = was | 1 << (i % 64);
        // A word that was not empty is marked in the levels above already.
        if was == 0 {
            self.mark(i / 64);
        }
    }

    /// Marks word `w` of the first level as not empty in the levels above.
    #[inline(never)]
    fn mark(&mut self, w: usize) {
        let mut i = w;
        for level in &mut self.levels[1..] {
            let was = level[i / 64];
            level[i / 64] = was | 1 << (i % 64);
            if was != 0 {
                return;
            }
            i /= 64;
        }
    }

    /// Whether the set is empty.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.levels.last().is_none_or(|top| top[0] == 0)
    }

    /// Calls `f` on every node of the set in increasing order, emptying the set.
    #[inline]
    pub fn drain(&mut self, mut f: impl FnMut(usize)) {
        if let Some(top) = self.levels.len().checked_sub(1) {
            self.drain_word(top, 0, &mut f);
        }
    }

    fn drain_word<F: FnMut(usize)>(&mut self, level: usize, w: usize, f: &mut F) {
        let mut bits = std::mem::take(&mut self.levels[level][w]);
        while bits != 0 {
            let i = w * 64 + bits.trailing_zeros() as usize;
            bits &= bits - 1;
            if level == 0 {
                f(i);
            } else {
                self.drain_word(level - 1, i, f);
            }
        }
    }

    /// Empties the set.
    pub fn clear(&mut self) {
        self.drain(|_| {});
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nodes_come_out_once_each_in_increasing_order_whatever_the_order_they_went_in() {
        for n in [1, 63, 64, 65, 4096, 4097, 300_000] {
            let mut s = ActiveSet::new(n).unwrap();
            assert!(s.is_empty());
            // A scrambled order with repeats.
            let ins: Vec<usize> = (0..3 * n.min(5000)).map(|k| (k * 7919 + 13) % n).collect();
            for &i in &ins {
                s.insert(i);
            }
            let mut want: Vec<usize> = ins.clone();
            want.sort_unstable();
            want.dedup();
            assert!(!s.is_empty());
            let mut got = Vec::new();
            s.drain(|i| got.push(i));
            assert_eq!(got, want, "{n} nodes");
            assert!(s.is_empty(), "{n} nodes: drained");
            s.insert(n - 1);
            s.clear();
            assert!(s.is_empty(), "{n} nodes: cleared");
        }
    }
}
