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
//! same cycle. Each claimant checks in the cycle its connect ends (D_link_conn ≥ 1 later)
//! whether the peer claimed in the very same cycle; if so the end at the lower-numbered
//! node keeps the link and the other treats its request as having met a busy link.
//!
//! Waiters are kept per end (in arrival order). A release serves the releasing end's own
//! waiters first (paper 000's activity "release + connect"); only when it has none does
//! the link become free and the peer end is told (one cycle later) so that its waiters
//! may claim it. Under sustained load one end's waiters can therefore overtake the
//! other's; the papers' single queue per link has no such asymmetry.

use crate::types::Cycle;

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
    /// `owners` empty FIFOs.
    pub fn new(owners: usize) -> Self {
        Fifos {
            head: vec![NONE; owners],
            tail: vec![NONE; owners],
            len: vec![0; owners],
        }
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

/// The state of every link end of a partition, indexed by `node * degree + port`.
#[derive(Clone, Debug)]
pub struct LinkEnds {
    /// The circuit holding the end (NONE: free).
    pub holder: Vec<u32>,
    prev: Vec<u32>,
    changed: Vec<Cycle>,
    /// Cycle the end last went from free to held (kept after it is freed).
    pub since: Vec<Cycle>,
    /// The peer end of a half-duplex link (NONE: the end is a link of its own).
    pub peer: Vec<u32>,
    /// Cycles held inside the measurement window (updated when the end is freed).
    pub busy_cycles: Vec<u64>,
    /// Hold-strategy waiters.
    pub waiters: Fifos,
}

impl LinkEnds {
    /// Ends for `ends` output ports with the given peers.
    pub fn new(peer: Vec<u32>) -> Self {
        let n = peer.len();
        LinkEnds {
            holder: vec![NONE; n],
            prev: vec![NONE; n],
            changed: vec![Cycle::MAX; n],
            since: vec![Cycle::MAX; n],
            peer,
            busy_cycles: vec![0; n],
            waiters: Fifos::new(n),
        }
    }

    /// Who held end `e` at the end of cycle t − 1.
    #[inline]
    pub fn holder_before(&self, e: usize, t: Cycle) -> u32 {
        if self.changed[e] == t {
            self.prev[e]
        } else {
            self.holder[e]
        }
    }

    /// The circuit that makes end `e` busy for a request verifying it in cycle `t`: its
    /// own holder, or else the peer end's holder as of the previous cycle.
    #[inline]
    pub fn blocker(&self, e: usize, t: Cycle) -> u32 {
        if self.holder[e] != NONE {
            return self.holder[e];
        }
        match self.peer[e] {
            NONE => NONE,
            p => self.holder_before(p as usize, t),
        }
    }

    /// Whether a new request verifying end `e` in cycle `t` finds it free (no holder at
    /// either end, nobody queued before it).
    #[inline]
    pub fn free_for_new(&self, e: usize, t: Cycle) -> bool {
        self.blocker(e, t) == NONE && self.waiters.len(e) == 0
    }

    /// Sets the holder of end `e` in cycle `t` (NONE frees it). A change of holder without
    /// the end becoming free (a hand-off) keeps `since`.
    #[inline]
    pub fn set(&mut self, e: usize, t: Cycle, c: u32) {
        if self.changed[e] != t {
            self.prev[e] = self.holder[e];
            self.changed[e] = t;
        }
        if self.holder[e] == NONE && c != NONE {
            self.since[e] = t;
        }
        self.holder[e] = c;
    }

    /// Whether the claim that end `e` (at node `me`) made lost the same-cycle race to its
    /// peer end (at node `peer_node`): both claimed in one cycle and the peer's node is
    /// the lower-numbered.
    #[inline]
    pub fn lost_race(&self, e: usize, me: u32, peer_node: u32) -> bool {
        match self.peer[e] {
            NONE => false,
            p => self.since[p as usize] == self.since[e] && peer_node < me,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fifo_keeps_arrival_order_and_takes_returns_at_the_head() {
        let mut next = vec![NONE; 8];
        let mut f = Fifos::new(2);
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
        let mut ends = LinkEnds::new(vec![1, 0]);
        assert!(ends.free_for_new(0, 10));
        ends.set(1, 10, 42); // the peer claims in cycle 10
        assert!(ends.free_for_new(0, 10), "not visible in the same cycle");
        assert!(!ends.free_for_new(0, 11));
        assert_eq!(ends.blocker(0, 11), 42);
        ends.set(1, 20, NONE); // released in cycle 20
        assert_eq!(ends.blocker(0, 20), 42, "still held as of cycle 19");
        assert!(ends.free_for_new(0, 21));
    }

    #[test]
    fn the_lower_node_wins_a_same_cycle_claim() {
        let mut ends = LinkEnds::new(vec![1, 0]);
        ends.set(0, 5, 1);
        ends.set(1, 5, 2);
        assert!(!ends.lost_race(0, 3, 8), "node 3 against node 8 keeps it");
        assert!(ends.lost_race(1, 8, 3));
        // A claim one cycle later is no race.
        let mut ends = LinkEnds::new(vec![1, 0]);
        ends.set(0, 5, 1);
        ends.set(1, 6, 2);
        assert!(!ends.lost_race(1, 8, 3));
    }
}
