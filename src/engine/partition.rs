//! A partition's view of the rest of the network: the outbox through which its routers
//! send. Events for its own nodes go onto its own calendar; events for another
//! partition's nodes, and the side data that travels with them (`R`, e.g. a wormhole
//! header written into the downstream buffer), are collected per destination partition
//! and handed over explicitly at the end of the cycle. That hand-over is the only
//! exchange between partitions, which is what would let a partition live in another
//! process.
//!
//! Partitions are contiguous node ranges of `chunk` nodes (the last may be shorter).

use super::network::Outbox;
use super::wheel::Wheel;
use crate::types::Cycle;

/// Something addressed to a node.
pub trait Located {
    /// The node it is for.
    fn node(&self) -> u32;
}

/// The contiguous node ranges of `parts` partitions of `nodes` nodes.
pub fn ranges(nodes: usize, parts: usize) -> Vec<(usize, usize)> {
    let chunk = nodes.div_ceil(parts.max(1));
    (0..parts)
        .map(|p| (p * chunk, ((p + 1) * chunk).min(nodes)))
        .filter(|(lo, hi)| lo < hi)
        .collect()
}

/// What a split of the network into `parts` contiguous partitions over `ranks` ranks
/// (`engine::distributed::owners`) cuts: the links (an output port and the node it
/// leads to) whose ends lie in different partitions, and those whose ends lie on
/// different ranks. Every cycle's exchange between partitions carries what crosses the
/// first, between processes what crosses the second.
pub fn cut(topology: &crate::topology::Topology, parts: usize, ranks: usize) -> (u64, u64) {
    use crate::types::{NodeId, PortId};
    let nodes = topology.nodes();
    let rs = ranges(nodes, parts.max(1));
    if rs.len() <= 1 {
        return (0, 0);
    }
    let chunk = rs[0].1 - rs[0].0;
    let mut rank_of = vec![0usize; rs.len()];
    for (r, owned) in crate::engine::distributed::owners(rs.len(), ranks)
        .into_iter()
        .enumerate()
    {
        for q in owned {
            rank_of[q] = r;
        }
    }
    let (mut cut, mut rank_cut) = (0u64, 0u64);
    for u in 0..nodes {
        for port in 0..topology.degree() {
            let Some(v) = topology.neighbor(NodeId(u as u32), PortId(port as u8)) else {
                continue;
            };
            let (a, b) = (u / chunk, v.idx() / chunk);
            if a != b {
                cut += 1;
                rank_cut += u64::from(rank_of[a] != rank_of[b]);
            }
        }
    }
    (cut, rank_cut)
}

/// Where a partition's routers put what they send.
#[derive(Clone, Debug)]
pub struct PartOut<E, R> {
    /// This partition's calendar.
    pub wheel: Wheel<E>,
    /// First node of the partition.
    pub lo: u32,
    /// One past its last node.
    pub hi: u32,
    chunk: u32,
    /// Events for other partitions' nodes, by destination partition.
    pub events: Vec<Vec<(Cycle, E)>>,
    /// Side data for other partitions, by destination partition.
    pub extras: Vec<Vec<R>>,
    /// Earliest cycle of an event sent to another partition since the last hand-over.
    pub earliest_remote: Cycle,
    /// The cycle being stepped.
    pub now: Cycle,
    /// The network's [`Network::lookahead`](super::network::Network::lookahead): an
    /// event for another partition is due at least this many cycles after `now`.
    pub lookahead: Cycle,
}

impl<E, R> PartOut<E, R> {
    /// The outbox of the partition `[lo, hi)` among `parts` partitions of `chunk` nodes.
    pub fn new(horizon: Cycle, (lo, hi): (usize, usize), chunk: usize, parts: usize) -> Self {
        PartOut {
            wheel: Wheel::new(horizon),
            lo: lo as u32,
            hi: hi as u32,
            chunk: chunk.max(1) as u32,
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
        node >= self.lo && node < self.hi
    }

    /// The partition `node` belongs to.
    #[inline]
    pub fn part_of(&self, node: u32) -> usize {
        (node / self.chunk) as usize
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
        let me = self.part_of(self.lo);
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
    fn halving_a_torus_cuts_two_rings_of_links_each_way() {
        let t = crate::topology::Topology::from_config(&crate::config::TopologyConfig::Torus {
            k: 8,
            n: 2,
            bidirectional: true,
        })
        .unwrap();
        // Rows 0-3 and 4-7: each of the 8 columns crosses twice (middle and wrap), in
        // both directions.
        assert_eq!(cut(&t, 2, 2), (32, 32));
        assert_eq!(cut(&t, 1, 1), (0, 0));
        // Four partitions on two ranks: ranks hold rows 0-3 and 4-7 as before.
        assert_eq!(cut(&t, 4, 2), (64, 32));
    }

    #[test]
    fn ranges_cover_every_node_once_in_order() {
        assert_eq!(ranges(10, 3), vec![(0, 4), (4, 8), (8, 10)]);
        assert_eq!(ranges(4, 4), vec![(0, 1), (1, 2), (2, 3), (3, 4)]);
        assert_eq!(ranges(64, 1), vec![(0, 64)]);
    }

    #[test]
    fn events_for_other_partitions_are_held_for_the_hand_over() {
        let mut o: PartOut<u32, ()> = PartOut::new(4, (4, 8), 4, 3);
        o.send(2, 5);
        o.send(3, 9);
        o.send(7, 1);
        assert_eq!(o.wheel.pending(), 1);
        assert_eq!(o.events[2], vec![(3, 9)]);
        assert_eq!(o.events[0], vec![(7, 1)]);
        assert_eq!(o.earliest_remote, 3);
    }
}
