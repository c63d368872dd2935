//! A partition's view of the rest of the network: the outbox through which its routers
//! send. Events for its own nodes go onto its own calendar; events for another
//! partition's nodes, and the side data that travels with them (`R`, e.g. a wormhole
//! header written into the downstream buffer), are collected per destination partition
//! and handed over explicitly at the end of the cycle. That hand-over is the only
//! exchange between partitions, which is what would let a partition live in another
//! process.
//!
//! Which nodes a partition holds is `engine::partitioner`'s ([`PartNodes`]).

use crate::engine::partitioner::PartNodes;
use crate::engine::wheel::Wheel;
use crate::foundation::types::{Cycle, Located};

/// Where a router puts what it sends: events for later cycles.
pub trait Outbox<E> {
    /// Schedules `e` for cycle `at` (later than the current cycle).
    fn send(&mut self, at: Cycle, e: E);
}

/// Where a partition's routers put what they send.
#[derive(Clone, Debug)]
pub struct PartOut<E, R> {
    /// This partition's calendar.
    pub wheel: Wheel<E>,
    /// The partition's nodes, and every other node's partition.
    pub nodes: PartNodes,
    /// Events for other partitions' nodes, by destination partition.
    pub events: Vec<Vec<(Cycle, E)>>,
    /// Side data for other partitions, by destination partition.
    pub extras: Vec<Vec<R>>,
    /// Earliest cycle of an event sent to another partition since the last hand-over.
    pub earliest_remote: Cycle,
    /// The cycle being stepped.
    pub now: Cycle,
    /// The network's [`Network::lookahead`](crate::engine::network::Network::lookahead): an
    /// event for another partition is due at least this many cycles after `now`.
    pub lookahead: Cycle,
}

impl<E, R> PartOut<E, R> {
    /// The outbox of the partition of `nodes`.
    pub fn new(horizon: Cycle, nodes: PartNodes) -> Self {
        let parts = nodes.parts();
        PartOut {
            wheel: Wheel::new(horizon),
            nodes,
            events: (0..parts).map(|_| Vec::new()).collect(),
            extras: (0..parts).map(|_| Vec::new()).collect(),
            earliest_remote: Cycle::MAX,
            now: 0,
            lookahead: 1,
        }
    }

    /// The outbox, its events to other partitions due at least `lookahead` cycles after
    /// they are sent.
    pub fn with_lookahead(mut self, lookahead: Cycle) -> Self {
        self.lookahead = lookahead.max(1);
        self
    }

    /// Whether `node` belongs to this partition.
    #[inline]
    pub fn is_local(&self, node: u32) -> bool {
        self.nodes.is_local(node)
    }

    /// The partition `node` belongs to.
    #[inline]
    pub fn part_of(&self, node: u32) -> usize {
        self.nodes.part_of(node)
    }

    /// Sends side data to the partition of `node`.
    #[inline]
    pub fn remote(&mut self, node: u32, r: R) {
        let p = self.part_of(node);
        self.extras[p].push(r);
    }
}

impl<E, R: Clone> PartOut<E, R> {
    /// Sends side data to every other partition.
    pub fn broadcast(&mut self, r: &R) {
        let me = self.nodes.index();
        for (p, x) in self.extras.iter_mut().enumerate() {
            if p != me {
                x.push(r.clone());
            }
        }
    }
}

impl<E: Located, R> PartOut<E, R> {
    /// An event for another partition's node `n` (kept out of the hot path).
    #[inline(never)]
    fn send_remote(&mut self, n: u32, at: Cycle, e: E) {
        let p = self.part_of(n);
        // Partitions in other processes exchange only every `lookahead` cycles: an
        // event due sooner would arrive late. A mode that declares too long a lookahead
        // is a bug, caught here rather than as a silently different result.
        assert!(
            at >= self.now + self.lookahead,
            "event for cycle {at} sent to another partition in cycle {} (lookahead {})",
            self.now,
            self.lookahead
        );
        self.earliest_remote = self.earliest_remote.min(at);
        self.events[p].push((at, e));
    }
}

impl<E: Located, R> Outbox<E> for PartOut<E, R> {
    #[inline(always)]
    fn send(&mut self, at: Cycle, e: E) {
        let n = e.node();
        if self.is_local(n) {
            self.wheel.schedule(at, e);
        } else {
            self.send_remote(n, at, e);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    impl Located for u32 {
        fn node(&self) -> u32 {
            *self
        }
    }

    #[test]
    fn events_for_other_partitions_are_held_for_the_hand_over() {
        let mut o: PartOut<u32, ()> = PartOut::new(4, PartNodes::range((4, 8), 4, 1, 3));
        o.send(2, 5);
        o.send(3, 9);
        o.send(7, 1);
        assert_eq!(o.wheel.pending(), 1);
        assert_eq!(o.events[2], vec![(3, 9)]);
        assert_eq!(o.events[0], vec![(7, 1)]);
        assert_eq!(o.earliest_remote, 3);
    }
}
