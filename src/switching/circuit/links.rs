//! The link ends of circuit switching: which circuit holds each output port, the FIFO of
//! set-up requests waiting for it (hold strategy), and how a node sees the other end of
//! a half-duplex link.
//!
//! Every output port (node, port) is a link *end*, written only by its own node's
//! routing controller. A full-duplex channel is its own link. A half-duplex link is two
//! ends sharing one physical link, one circuit at a time: an end is free for a new
//! circuit when neither it nor its peer holds the link. A node reads its peer's end as it
//! was at the end of the previous cycle (a wire's worth of delay), which keeps the
//! result independent of the order nodes are stepped in and lets the two ends live in
//! different partitions. The price is a race: both ends may claim an idle link in the
//! same cycle. Each claimant checks in the cycle its connect ends (at least one cycle
//! after its claim, when the peer's claim of that cycle is visible to it in any
//! partition) whether the peer claimed in the very same cycle; if so the end at the
//! lower-numbered node keeps the link and the other treats its request as having met a
//! busy link. A peer in another partition is seen through the reports its partition
//! sends at every change ([`EndView`]).
//!
//! Waiters are kept per end (in arrival order). A release serves the releasing end's own
//! waiters first (paper 000's activity "release + connect"); only when it has none does
//! the link become free and the peer end is told (one cycle later) so that its waiters
//! may claim it. Under sustained load one end's waiters can therefore overtake the
//! other's; the papers' single queue per link has no such asymmetry.

use crate::engine::partitioner::PartNodes;
use crate::foundation::types::Cycle;
use std::collections::HashMap;

/// No circuit.
pub const NONE: u32 = u32::MAX;

/// FIFOs of circuits, threaded through a shared `next` array (a circuit waits in at
/// most one FIFO at a time), one FIFO per owner (a link end or a node's receiving DMA).
#[derive(Clone, Debug)]
pub struct Fifos {
    head: Vec<u32>,
    tail: Vec<u32>,
    len: Vec<u32>,
}

impl Fifos {
    /// `owners` empty FIFOs; an error when the memory cannot be had.
    pub fn new(owners: usize) -> crate::foundation::error::Result<Self> {
        use crate::foundation::limits::{filled_table, zeroed_table};
        Ok(Fifos {
            head: filled_table(Some(owners), NONE, "circuit FIFO head")?,
            tail: filled_table(Some(owners), NONE, "circuit FIFO tail")?,
            len: zeroed_table(Some(owners), "circuit FIFO length")?,
        })
    }

    /// Circuits waiting at `o`.
    #[inline]
    pub fn len(&self, o: usize) -> usize {
        self.len[o] as usize
    }

    /// Appends circuit `c` to FIFO `o`.
    pub fn push_back(&mut self, o: usize, c: u32, next: &mut [u32]) {
        next[c as usize] = NONE;
        if self.tail[o] == NONE {
            self.head[o] = c;
        } else {
            next[self.tail[o] as usize] = c;
        }
        self.tail[o] = c;
        self.len[o] += 1;
    }

    /// Puts circuit `c` back at the head of FIFO `o`.
    pub fn push_front(&mut self, o: usize, c: u32, next: &mut [u32]) {
        next[c as usize] = self.head[o];
        self.head[o] = c;
        if self.tail[o] == NONE {
            self.tail[o] = c;
        }
        self.len[o] += 1;
    }

    /// Removes and returns the first circuit of FIFO `o`.
    pub fn pop_front(&mut self, o: usize, next: &[u32]) -> Option<u32> {
        let c = self.head[o];
        if c == NONE {
            return None;
        }
        self.head[o] = next[c as usize];
        if self.head[o] == NONE {
            self.tail[o] = NONE;
        }
        self.len[o] -= 1;
        Some(c)
    }

    /// Removes circuit `c` from FIFO `o` wherever it is; returns whether it was there.
    pub fn remove(&mut self, o: usize, c: u32, next: &mut [u32]) -> bool {
        let mut prev = NONE;
        let mut x = self.head[o];
        while x != NONE && x != c {
            prev = x;
            x = next[x as usize];
        }
        if x == NONE {
            return false;
        }
        let after = next[c as usize];
        if prev == NONE {
            self.head[o] = after;
        } else {
            next[prev as usize] = after;
        }
        if self.tail[o] == c {
            self.tail[o] = prev;
        }
        self.len[o] -= 1;
        true
    }

    /// The circuits waiting at `o`, first to last.
    pub fn iter<'a>(&self, o: usize, next: &'a [u32]) -> impl Iterator<Item = u32> + 'a {
        let mut c = self.head[o];
        std::iter::from_fn(move || {
            (c != NONE).then(|| {
                let x = c;
                c = next[c as usize];
                x
            })
        })
    }
}

/// A circuit's identity in link ends: its message id, the same in every partition.
pub type CircuitId = u64;

/// No circuit holds the end.
pub const FREE: CircuitId = u64::MAX;

/// What a node knows of a link end in another partition (the peer of one of its own
/// half-duplex ends): its state at the end of the previous cycle, sent by the peer's
/// partition at every change.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct EndView {
    /// The circuit holding it (FREE: none).
    pub holder: CircuitId,
    /// Cycle it last went from free to held.
    pub since: Cycle,
    /// Cycles it was held inside the measurement window, up to its last release.
    pub busy: u64,
}

const UNSEEN: EndView = EndView {
    holder: FREE,
    since: Cycle::MAX,
    busy: 0,
};

/// The state of every link end of a partition, indexed by `local node * degree + port`;
/// ends are named across partitions by their global index `node * degree + port`.
#[derive(Clone, Debug)]
pub struct LinkEnds {
    /// The circuit holding the end (FREE: free).
    pub holder: Vec<CircuitId>,
    prev: Vec<CircuitId>,
    changed: Vec<Cycle>,
    /// Cycle the end last went from free to held (kept after it is freed).
    pub since: Vec<Cycle>,
    /// Global index of the peer end of a half-duplex link (NONE: the end is a link of
    /// its own).
    pub peer: Vec<u32>,
    /// The partition's nodes (an end's local index is its node's local index × degree
    /// + port).
    part: PartNodes,
    deg: u32,
    /// Global index of local end 0 when the partition is a node range (then global and
    /// local indices differ by it), else None.
    base: Option<u32>,
    /// Cycles held inside the measurement window (updated when the end is freed).
    pub busy_cycles: Vec<u64>,
    /// Hold-strategy waiters.
    pub waiters: Fifos,
    /// Peers in other partitions, by global index, as last reported.
    mirror: HashMap<u32, EndView>,
}

impl LinkEnds {
    /// The ends of the `deg` output ports of the nodes of `part`, with the given peers
    /// (global indices); an error when the memory cannot be had.
    pub fn new(
        peer: Vec<u32>,
        part: &PartNodes,
        deg: usize,
    ) -> crate::foundation::error::Result<Self> {
        use crate::foundation::limits::{filled_table, zeroed_table};
        let n = Some(peer.len());
        Ok(LinkEnds {
            holder: filled_table(n, FREE, "circuit link holder")?,
            prev: filled_table(n, FREE, "circuit link previous holder")?,
            changed: filled_table(n, Cycle::MAX, "circuit link change time")?,
            since: filled_table(n, Cycle::MAX, "circuit link hold time")?,
            busy_cycles: zeroed_table(n, "circuit link busy cycles")?,
            waiters: Fifos::new(peer.len())?,
            peer,
            base: part.range_of().map(|(lo, _)| (lo * deg) as u32),
            part: part.clone(),
            deg: deg as u32,
            mirror: HashMap::new(),
        })
    }

    /// The local index of global end `g`, if it is one of this partition's.
    #[inline]
    pub fn local(&self, g: u32) -> Option<usize> {
        match self.base {
            Some(base) => {
                let i = g.wrapping_sub(base) as usize;
                (g >= base && i < self.holder.len()).then_some(i)
            }
            None => {
                let n = g / self.deg;
                self.part
                    .is_local(n)
                    .then(|| self.part.local(n) * self.deg as usize + (g % self.deg) as usize)
            }
        }
    }

    /// Global index of local end `e`.
    #[inline]
    pub fn global(&self, e: usize) -> u32 {
        match self.base {
            Some(base) => base + e as u32,
            None => {
                let d = self.deg as usize;
                self.part.node(e / d) * self.deg + (e % d) as u32
            }
        }
    }

    /// The peer of local end `e` when it lives in another partition.
    #[inline]
    pub fn remote_peer(&self, e: usize) -> Option<u32> {
        match self.peer[e] {
            NONE => None,
            p => self.local(p).is_none().then_some(p),
        }
    }

    /// Who held local end `e` at the end of cycle t − 1.
    #[inline]
    pub fn holder_before(&self, e: usize, t: Cycle) -> CircuitId {
        if self.changed[e] == t {
            self.prev[e]
        } else {
            self.holder[e]
        }
    }

    /// Local end `e` as its peer in another partition is told.
    pub fn view(&self, e: usize) -> EndView {
        EndView {
            holder: self.holder[e],
            since: self.since[e],
            busy: self.busy_cycles[e],
        }
    }

    /// Takes the report of a peer end in another partition.
    pub fn accept(&mut self, g: u32, v: EndView) {
        self.mirror.insert(g, v);
    }

    /// The peer end `g` (global): its state as of the end of the previous cycle when it
    /// is another partition's, or its current state.
    fn peer_view(&self, g: u32, t: Cycle) -> EndView {
        match self.local(g) {
            Some(p) => EndView {
                holder: self.holder_before(p, t),
                since: self.since[p],
                busy: self.busy_cycles[p],
            },
            None => self.mirror.get(&g).copied().unwrap_or(UNSEEN),
        }
    }

    /// The circuit that makes end `e` busy for a request verifying it in cycle `t`: its
    /// own holder, or else the peer end's holder as of the previous cycle.
    #[inline]
    pub fn blocker(&self, e: usize, t: Cycle) -> CircuitId {
        if self.holder[e] != FREE {
            return self.holder[e];
        }
        match self.peer[e] {
            NONE => FREE,
            p => self.peer_view(p, t).holder,
        }
    }

    /// Whether a new request verifying end `e` in cycle `t` finds it free (no holder at
    /// either end, nobody queued before it).
    #[inline]
    pub fn free_for_new(&self, e: usize, t: Cycle) -> bool {
        self.blocker(e, t) == FREE && self.waiters.len(e) == 0
    }

    /// Sets the holder of end `e` in cycle `t` (FREE frees it). A change of holder
    /// without the end becoming free (a hand-off) keeps `since`.
    #[inline]
    pub fn set(&mut self, e: usize, t: Cycle, c: CircuitId) {
        if self.changed[e] != t {
            self.prev[e] = self.holder[e];
            self.changed[e] = t;
        }
        if self.holder[e] == FREE && c != FREE {
            self.since[e] = t;
        }
        self.holder[e] = c;
    }

    /// Whether the claim that end `e` (at node `me`) made lost the same-cycle race to its
    /// peer end (at node `peer_node`): both claimed in one cycle and the peer's node is
    /// the lower-numbered. Asked in a later cycle than the claim, so a peer in another
    /// partition has reported it.
    #[inline]
    pub fn lost_race(&self, e: usize, me: u32, peer_node: u32, t: Cycle) -> bool {
        match self.peer[e] {
            NONE => false,
            p => self.peer_view(p, t).since == self.since[e] && peer_node < me,
        }
    }

    /// Cycles that end `g` of another partition was held in `[start, end)`: its count
    /// to its last release plus the holding in progress, as last reported (at the end of
    /// a run, its final state).
    pub fn remote_busy(&self, g: u32, start: Cycle, end: Cycle) -> u64 {
        let v = self.mirror.get(&g).copied().unwrap_or(UNSEEN);
        let now = if v.holder != FREE {
            end.saturating_sub(v.since.max(start))
        } else {
            0
        };
        v.busy + now
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fifo_keeps_arrival_order_and_takes_returns_at_the_head() {
        let mut next = vec![NONE; 8];
        let mut f = Fifos::new(2).unwrap();
        for c in [3, 5, 1] {
            f.push_back(1, c, &mut next);
        }
        assert_eq!(f.iter(1, &next).collect::<Vec<_>>(), vec![3, 5, 1]);
        assert_eq!(f.pop_front(1, &next), Some(3));
        f.push_front(1, 7, &mut next);
        assert_eq!(f.iter(1, &next).collect::<Vec<_>>(), vec![7, 5, 1]);
        assert_eq!(f.len(1), 3);
        assert!(f.remove(1, 1, &mut next));
        assert!(!f.remove(1, 1, &mut next));
        f.push_back(1, 2, &mut next);
        assert_eq!(f.iter(1, &next).collect::<Vec<_>>(), vec![7, 5, 2]);
        assert_eq!(f.len(0), 0);
        assert_eq!(f.pop_front(0, &next), None);
    }

    #[test]
    fn a_node_sees_its_peer_end_as_it_was_last_cycle() {
        // Ends 0 and 1 are the two ends of one half-duplex link.
        let mut ends = LinkEnds::new(vec![1, 0], &PartNodes::whole(2), 1).unwrap();
        assert!(ends.free_for_new(0, 10));
        ends.set(1, 10, 42); // the peer claims in cycle 10
        assert!(ends.free_for_new(0, 10), "not visible in the same cycle");
        assert!(!ends.free_for_new(0, 11));
        assert_eq!(ends.blocker(0, 11), 42);
        ends.set(1, 20, FREE); // released in cycle 20
        assert_eq!(ends.blocker(0, 20), 42, "still held as of cycle 19");
        assert!(ends.free_for_new(0, 21));
    }

    #[test]
    fn the_lower_node_wins_a_same_cycle_claim() {
        let mut ends = LinkEnds::new(vec![1, 0], &PartNodes::whole(2), 1).unwrap();
        ends.set(0, 5, 1);
        ends.set(1, 5, 2);
        assert!(
            !ends.lost_race(0, 3, 8, 6),
            "node 3 against node 8 keeps it"
        );
        assert!(ends.lost_race(1, 8, 3, 6));
        // A claim one cycle later is no race.
        let mut ends = LinkEnds::new(vec![1, 0], &PartNodes::whole(2), 1).unwrap();
        ends.set(0, 5, 1);
        ends.set(1, 6, 2);
        assert!(!ends.lost_race(1, 8, 3, 7));
    }

    #[test]
    fn a_peer_in_another_partition_is_seen_through_its_reports() {
        // Local ends 0..2 are global 10 and 11 (node 5 of degree 2); end 10's peer is
        // global end 3, elsewhere.
        let part = PartNodes::range((5, 6), 1, 5, 6);
        let mut ends = LinkEnds::new(vec![3, NONE], &part, 2).unwrap();
        assert_eq!(ends.remote_peer(0), Some(3));
        assert_eq!(ends.remote_peer(1), None);
        assert!(ends.free_for_new(0, 4), "never reported: free");
        let v = EndView {
            holder: 42,
            since: 5,
            busy: 7,
        };
        ends.accept(3, v); // reported after cycle 5
        assert_eq!(ends.blocker(0, 6), 42);
        ends.set(0, 5, 9); // had we claimed in cycle 5 too, the lower node keeps it
        assert!(ends.lost_race(0, 8, 2, 6));
        assert!(!ends.lost_race(0, 1, 2, 6));
        assert_eq!(ends.remote_busy(3, 0, 20), 7 + 15);
    }
}
