//! Banks of arbiters: round-robin, fixed-priority and matrix (least recently served)
//! arbiters, as flat arrays over many arbiters of one size. An arbiter here only ranks
//! requesters and records whom it served; which requests it sees and when it is told of
//! a grant is the allocator's business ([`crate::router::alloc::matching`]).

use crate::config::Arbiter;
use crate::foundation::error::Result;

/// [`Arbiters::code`] of round-robin arbiters.
pub const RR: u8 = 0;
/// [`Arbiters::code`] of fixed-priority arbiters.
pub const FIXED: u8 = 1;
/// [`Arbiters::code`] of matrix arbiters.
pub const MATRIX: u8 = 2;

/// The [`Arbiters::code`] of arbiters of `kind`.
#[inline]
pub fn code(kind: Arbiter) -> u8 {
    match kind {
        Arbiter::RoundRobin => RR,
        Arbiter::FixedPriority => FIXED,
        Arbiter::Matrix => MATRIX,
    }
}

/// `count` arbiters, each over `size` requesters.
#[derive(Clone, Debug)]
pub struct Arbiters {
    kind: Arbiter,
    size: usize,
    /// `[arbiter]`: the round-robin pointer (the requester first in order).
    ptr: Vec<u16>,
    /// `[arbiter][requester]`: when the matrix arbiter last served it (smaller: longer
    /// ago); the matrix arbiter's priority matrix as one order.
    served: Vec<u32>,
    /// `[arbiter]`: the matrix arbiter's clock (the last stamp it gave).
    clock: Vec<u32>,
}

impl Arbiters {
    /// `count` arbiters of `kind` over `size` requesters each; an error when the tables
    /// cannot be had.
    pub fn new(kind: Arbiter, count: usize, size: usize) -> Result<Self> {
        use crate::foundation::limits::{filled_table, zeroed_table};
        let rr = kind == Arbiter::RoundRobin;
        let matrix = kind == Arbiter::Matrix;
        let cells = if matrix {
            count.checked_mul(size)
        } else {
            Some(0)
        };
        let mut served: Vec<u32> = zeroed_table(cells, "matrix arbiter")?;
        // Before any grant the highest-numbered requester wins, as in BookSim's initial
        // matrix (row i has priority over every j < i).
        for (i, s) in served.iter_mut().enumerate() {
            *s = (size - 1 - i % size) as u32;
        }
        Ok(Arbiters {
            kind,
            size: size.max(1),
            ptr: zeroed_table(Some(if rr { count } else { 0 }), "arbiter pointer")?,
            served,
            clock: filled_table(
                Some(if matrix { count } else { 0 }),
                size.saturating_sub(1) as u32,
                "matrix arbiter clock",
            )?,
        })
    }

    /// Bytes one arbiter of `kind` over `size` requesters takes in the tables of
    /// [`Arbiters::new`] (the memory check's estimate, `experiments::memory`): a
    /// round-robin pointer, nothing for fixed priority, a matrix arbiter's stamp per
    /// requester and its clock.
    pub fn table_bytes(kind: Arbiter, size: usize) -> u64 {
        match kind {
            Arbiter::RoundRobin => std::mem::size_of::<u16>() as u64,
            Arbiter::FixedPriority => 0,
            Arbiter::Matrix => (std::mem::size_of::<u32>() * (size + 1)) as u64,
        }
    }

    /// The rank of requester `r` at arbiter `a` among requests of equal priority: the
    /// lowest wins.
    #[inline]
    pub fn key(&self, a: usize, r: usize) -> u32 {
        match self.kind {
            Arbiter::RoundRobin => {
                let p = self.ptr[a] as usize;
                (if r >= p { r - p } else { r + self.size - p }) as u32
            }
            Arbiter::FixedPriority => r as u32,
            Arbiter::Matrix => self.served[a * self.size + r],
        }
    }

    /// This bank's kind as one of [`RR`], [`FIXED`], [`MATRIX`]: the constant an
    /// allocator passes to [`Arbiters::pick_as`] and [`Arbiters::serve_as`] after one
    /// dispatch per router-cycle.
    #[inline]
    pub fn code(&self) -> u8 {
        code(self.kind)
    }

    /// The winner at arbiter `a` among the requesters of `mask` (bit r: requester r;
    /// not empty): the one of least [`Arbiters::key`], found from the mask without
    /// ranking every requester (round-robin: the first at or after the pointer).
    #[inline(always)]
    pub fn pick(&self, a: usize, mask: u64) -> usize {
        match self.kind {
            Arbiter::RoundRobin => self.pick_as::<RR>(a, mask),
            Arbiter::FixedPriority => self.pick_as::<FIXED>(a, mask),
            Arbiter::Matrix => self.pick_as::<MATRIX>(a, mask),
        }
    }

    /// [`Arbiters::pick`] for a bank whose [`Arbiters::code`] is `K`, known when the
    /// allocator is compiled: no dispatch on the kind per pick.
    #[inline(always)]
    pub fn pick_as<const K: u8>(&self, a: usize, mask: u64) -> usize {
        debug_assert_eq!(K, self.code());
        debug_assert!(mask != 0 && (self.size >= 64 || mask >> self.size == 0));
        match K {
            RR => {
                let high = mask & (u64::MAX << self.ptr[a]);
                if high != 0 {
                    high.trailing_zeros() as usize
                } else {
                    mask.trailing_zeros() as usize
                }
            }
            FIXED => mask.trailing_zeros() as usize,
            _ => {
                let row = &self.served[a * self.size..(a + 1) * self.size];
                let mut best = (u32::MAX, 0);
                let mut m = mask;
                while m != 0 {
                    let r = m.trailing_zeros() as usize;
                    m &= m - 1;
                    if row[r] < best.0 {
                        best = (row[r], r);
                    }
                }
                best.1
            }
        }
    }

    /// Arbiter `a` served requester `r`: a round-robin pointer moves just past it, a
    /// matrix arbiter puts it last.
    #[inline(always)]
    pub fn serve(&mut self, a: usize, r: usize) {
        match self.kind {
            Arbiter::RoundRobin => self.serve_as::<RR>(a, r),
            Arbiter::FixedPriority => self.serve_as::<FIXED>(a, r),
            Arbiter::Matrix => self.serve_as::<MATRIX>(a, r),
        }
    }

    /// [`Arbiters::serve`] for a bank whose [`Arbiters::code`] is `K`.
    #[inline(always)]
    pub fn serve_as<const K: u8>(&mut self, a: usize, r: usize) {
        debug_assert_eq!(K, self.code());
        match K {
            RR => {
                self.ptr[a] = if r + 1 == self.size { 0 } else { r as u16 + 1 };
            }
            FIXED => {}
            _ => {
                if self.clock[a] == u32::MAX {
                    self.renumber(a);
                }
                self.clock[a] += 1;
                self.served[a * self.size + r] = self.clock[a];
            }
        }
    }

    /// Renumbers arbiter `a`'s stamps 0..size in the same order, when its clock runs out
    /// (after 2³² grants).
    #[cold]
    fn renumber(&mut self, a: usize) {
        let row = &mut self.served[a * self.size..(a + 1) * self.size];
        let mut order: Vec<usize> = (0..row.len()).collect();
        order.sort_unstable_by_key(|&r| row[r]);
        for (rank, r) in order.into_iter().enumerate() {
            row[r] = rank as u32;
        }
        self.clock[a] = self.size as u32 - 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The winner among `reqs` at arbiter 0.
    fn winner(a: &Arbiters, reqs: &[usize]) -> usize {
        *reqs.iter().min_by_key(|&&r| a.key(0, r)).unwrap()
    }

    #[test]
    fn round_robin_serves_a_persistent_requester_within_one_round() {
        let n = 5;
        let mut a = Arbiters::new(Arbiter::RoundRobin, 1, n).unwrap();
        let all: Vec<usize> = (0..n).collect();
        // Everyone requests every time: each is served exactly once in n rounds.
        for start in 0..3 {
            let mut seen = vec![0; n];
            for _ in 0..n {
                let w = winner(&a, &all);
                seen[w] += 1;
                a.serve(0, w);
            }
            assert_eq!(seen, vec![1; n], "round starting {start}");
        }
    }

    #[test]
    fn the_matrix_arbiter_serves_the_least_recently_served_first() {
        let mut a = Arbiters::new(Arbiter::Matrix, 1, 4).unwrap();
        // Before any grant the highest-numbered requester wins (BookSim's matrix).
        assert_eq!(winner(&a, &[0, 1, 2, 3]), 3);
        for r in [1, 3, 0] {
            a.serve(0, r);
        }
        // Served 1, 3, 0 in that order; 2 never: 2, then 1, then 3, then 0.
        assert_eq!(winner(&a, &[0, 1, 2, 3]), 2);
        assert_eq!(winner(&a, &[0, 1, 3]), 1);
        assert_eq!(winner(&a, &[0, 3]), 3);
        // Unlike round-robin, the order does not depend on requester numbers.
        a.serve(0, 2);
        assert_eq!(winner(&a, &[1, 2]), 1);
    }

    #[test]
    fn the_matrix_order_survives_its_clock_running_out() {
        let mut a = Arbiters::new(Arbiter::Matrix, 2, 3).unwrap();
        a.serve(1, 0);
        a.serve(1, 2);
        a.clock[1] = u32::MAX;
        a.serve(1, 1);
        // Order now: 0, 2, 1 (least recently first).
        assert_eq!(winner_at(&a, 1, &[0, 1, 2]), 0);
        assert_eq!(winner_at(&a, 1, &[1, 2]), 2);
        // Arbiter 0 untouched: highest number first.
        assert_eq!(winner_at(&a, 0, &[0, 1, 2]), 2);
    }

    fn winner_at(a: &Arbiters, at: usize, reqs: &[usize]) -> usize {
        *reqs.iter().min_by_key(|&&r| a.key(at, r)).unwrap()
    }

    #[test]
    fn picking_from_a_mask_finds_the_requester_of_least_key() {
        for kind in [Arbiter::RoundRobin, Arbiter::FixedPriority, Arbiter::Matrix] {
            let mut a = Arbiters::new(kind, 1, 7).unwrap();
            let mut x = 0x9e37_79b9_7f4a_7c15u64;
            for _ in 0..500 {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                let mask = (x & 0x7f).max(1);
                let reqs: Vec<usize> = (0..7).filter(|r| mask >> r & 1 == 1).collect();
                let w = a.pick(0, mask);
                assert_eq!(w, winner(&a, &reqs), "{kind:?}, mask {mask:#b}");
                a.serve(0, w);
            }
        }
    }

    #[test]
    fn fixed_priority_always_serves_the_lowest_number() {
        let mut a = Arbiters::new(Arbiter::FixedPriority, 1, 4).unwrap();
        a.serve(0, 1);
        assert_eq!(winner(&a, &[3, 1, 2]), 1);
    }
}
