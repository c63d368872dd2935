//! A timing wheel: events scheduled a bounded number of cycles ahead, bucketed by cycle.
//! Buckets keep their capacity, so steady-state scheduling allocates nothing.

use crate::types::Cycle;

/// Events due at most `horizon` cycles ahead.
#[derive(Clone, Debug)]
pub struct Wheel<E> {
    buckets: Vec<Vec<E>>,
    mask: usize,
    pending: usize,
}

impl<E> Wheel<E> {
    /// A wheel able to hold events up to `horizon` cycles ahead of the current cycle.
    pub fn new(horizon: Cycle) -> Self {
        let size = (horizon as usize + 1).next_power_of_two();
        Wheel {
            buckets: (0..size).map(|_| Vec::new()).collect(),
            mask: size - 1,
            pending: 0,
        }
    }

    /// Schedules `e` for cycle `at` (now < at ≤ now + horizon).
    #[inline]
    pub fn schedule(&mut self, at: Cycle, e: E) {
        self.buckets[at as usize & self.mask].push(e);
        self.pending += 1;
    }

    /// Takes the events due in cycle `t` into `out` (which is cleared first).
    #[inline]
    pub fn take(&mut self, t: Cycle, out: &mut Vec<E>) {
        out.clear();
        let b = &mut self.buckets[t as usize & self.mask];
        self.pending -= b.len();
        std::mem::swap(b, out);
    }

    /// Events scheduled and not yet taken.
    #[inline]
    pub fn pending(&self) -> usize {
        self.pending
    }

    /// Iterates over every scheduled event.
    pub fn iter(&self) -> impl Iterator<Item = &E> {
        self.buckets.iter().flatten()
    }

    /// The first cycle ≥ t with a scheduled event, if any (looks one turn ahead).
    pub fn next_due(&self, t: Cycle) -> Option<Cycle> {
        if self.pending == 0 {
            return None;
        }
        (0..self.buckets.len() as Cycle)
            .map(|d| t + d)
            .find(|&c| !self.buckets[c as usize & self.mask].is_empty())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_come_out_in_their_cycle() {
        let mut w = Wheel::new(3);
        w.schedule(5, 'a');
        w.schedule(3, 'b');
        w.schedule(5, 'c');
        let mut out = Vec::new();
        w.take(3, &mut out);
        assert_eq!(out, vec!['b']);
        assert_eq!(w.next_due(4), Some(5));
        w.take(4, &mut out);
        assert!(out.is_empty());
        w.take(5, &mut out);
        assert_eq!(out, vec!['a', 'c']);
        assert_eq!(w.pending(), 0);
    }
}
