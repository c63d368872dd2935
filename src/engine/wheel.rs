//! The calendar of scheduled events: a timing wheel for the near future, bucketed by
//! cycle, and a heap for events further ahead than the wheel turns (a circuit's data
//! phase or a back-off lasts thousands of cycles; a flit hop a few). Buckets keep their
//! capacity, so steady-state scheduling on the wheel allocates nothing.
//!
//! Events of one cycle come out in the order they were scheduled (wheel events first,
//! then those that waited on the heap, in scheduling order); a switching mode whose
//! result could depend on that order sorts them (see `engine::network::Network`).

use crate::foundation::types::Cycle;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// An event waiting on the heap, ordered by (cycle, scheduling sequence).
#[derive(Clone, Debug)]
struct Far<E> {
    at: Cycle,
    seq: u64,
    e: E,
}

impl<E> PartialEq for Far<E> {
    fn eq(&self, o: &Self) -> bool {
        (self.at, self.seq) == (o.at, o.seq)
    }
}
impl<E> Eq for Far<E> {}
impl<E> PartialOrd for Far<E> {
    fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}
impl<E> Ord for Far<E> {
    fn cmp(&self, o: &Self) -> std::cmp::Ordering {
        (self.at, self.seq).cmp(&(o.at, o.seq))
    }
}

/// Events scheduled for future cycles.
#[derive(Clone, Debug)]
pub struct Wheel<E> {
    buckets: Vec<Vec<E>>,
    mask: usize,
    pending: usize,
    /// The last cycle taken: the wheel holds cycles base+1 ..= base+size−1.
    base: Cycle,
    far: BinaryHeap<Reverse<Far<E>>>,
    seq: u64,
}

impl<E> Wheel<E> {
    /// A wheel whose buckets cover `horizon` cycles ahead; later events wait on a heap.
    pub fn new(horizon: Cycle) -> Self {
        let size = (horizon as usize + 1).next_power_of_two();
        Wheel {
            buckets: (0..size).map(|_| Vec::new()).collect(),
            mask: size - 1,
            pending: 0,
            base: 0,
            far: BinaryHeap::new(),
            seq: 0,
        }
    }

    /// Schedules `e` for cycle `at`, which must be later than the last cycle taken.
    #[inline(always)]
    pub fn schedule(&mut self, at: Cycle, e: E) {
        debug_assert!(at > self.base || (self.base == 0 && at == 0));
        if at - self.base <= self.mask as Cycle {
            self.buckets[at as usize & self.mask].push(e);
            self.pending += 1;
        } else {
            self.schedule_far(at, e);
        }
    }

    /// Beyond the wheel's turn: onto the heap (rare, kept out of line).
    #[cold]
    #[inline(never)]
    fn schedule_far(&mut self, at: Cycle, e: E) {
        self.seq += 1;
        self.far.push(Reverse(Far {
            at,
            seq: self.seq,
            e,
        }));
        self.pending += 1;
    }

    /// Takes the events due in cycle `t` into `out` (which is cleared first). Cycles
    /// may be skipped only when nothing is due in them.
    #[inline]
    pub fn take(&mut self, t: Cycle, out: &mut Vec<E>) {
        out.clear();
        self.base = t;
        let b = &mut self.buckets[t as usize & self.mask];
        self.pending -= b.len();
        std::mem::swap(b, out);
        if !self.far.is_empty() {
            self.migrate(t, out);
        }
    }

    /// Moves heap events that now fall inside the wheel's turn onto it.
    fn migrate(&mut self, t: Cycle, out: &mut Vec<E>) {
        while let Some(Reverse(f)) = self.far.peek() {
            if f.at - t > self.mask as Cycle {
                break;
            }
            let Reverse(f) = self.far.pop().expect("peeked");
            if f.at == t {
                self.pending -= 1;
                out.push(f.e);
            } else {
                self.buckets[f.at as usize & self.mask].push(f.e);
            }
        }
    }

    /// Events scheduled and not yet taken.
    #[inline]
    pub fn pending(&self) -> usize {
        self.pending
    }

    /// Iterates over every scheduled event.
    pub fn iter(&self) -> impl Iterator<Item = &E> {
        self.buckets
            .iter()
            .flatten()
            .chain(self.far.iter().map(|Reverse(f)| &f.e))
    }

    /// The first cycle ≥ t (t later than the last cycle taken) with a scheduled event.
    #[inline]
    pub fn next_due(&self, t: Cycle) -> Option<Cycle> {
        if self.pending == 0 {
            return None;
        }
        let on_wheel = self.pending - self.far.len();
        let near = if on_wheel > 0 {
            (t..=self.base + self.mask as Cycle)
                .find(|&c| !self.buckets[c as usize & self.mask].is_empty())
        } else {
            None
        };
        let far = self.far.peek().map(|Reverse(f)| f.at);
        match (near, far) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_come_out_in_their_cycle() {
        let mut w = Wheel::new(3);
        w.schedule(3, 'b');
        w.schedule(2, 'x');
        let mut out = Vec::new();
        w.take(2, &mut out);
        assert_eq!(out, vec!['x']);
        w.schedule(5, 'a');
        w.schedule(5, 'c');
        w.take(3, &mut out);
        assert_eq!(out, vec!['b']);
        assert_eq!(w.next_due(4), Some(5));
        w.take(4, &mut out);
        assert!(out.is_empty());
        w.take(5, &mut out);
        assert_eq!(out, vec!['a', 'c']);
        assert_eq!(w.pending(), 0);
    }

    #[test]
    fn events_beyond_the_turn_wait_on_the_heap_and_arrive_on_time() {
        let mut w = Wheel::new(3);
        w.schedule(1, 0u32);
        w.schedule(100, 2);
        w.schedule(40, 1);
        w.schedule(100, 3);
        let mut out = Vec::new();
        w.take(1, &mut out);
        assert_eq!(out, vec![0]);
        assert_eq!(w.next_due(2), Some(40));
        w.take(40, &mut out);
        assert_eq!(out, vec![1]);
        w.take(98, &mut out);
        assert!(out.is_empty());
        assert_eq!(w.next_due(99), Some(100));
        w.take(100, &mut out);
        assert_eq!(out, vec![2, 3]);
        assert_eq!(w.pending(), 0);
        assert_eq!(w.next_due(101), None);
    }
}
