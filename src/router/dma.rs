//! DMA engines and the processor's memory. Messages created by the processing element
//! wait in memory (unbounded) in a FIFO per node until an injection engine is free; the
//! engine then streams the message into the router's local input port, where it appears
//! as one VC holding the whole message. Ejection engines are the VCs of the local output
//! port: a header bound for this node must win one, and the engine writes the message to
//! memory. Their number (default one per dimension, paper 000) bounds how many messages a
//! node sends, and receives, concurrently.

use crate::foundation::types::{Cycle, MsgId, NodeId};
use std::collections::VecDeque;

/// A message waiting in the source's memory for an injection engine.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct PendingMsg {
    /// Id.
    pub id: MsgId,
    /// Destination.
    pub dst: NodeId,
    /// Length in flits.
    pub len: u32,
    /// Creation cycle.
    pub created: Cycle,
    /// Whether it is measured.
    pub measured: bool,
    /// Message class (`MsgHeader::class`): 0 a request or one-way message, 1 a reply.
    pub class: u8,
    /// A request: its reply's length (`MsgHeader::reply_len`; 0: none).
    pub reply_len: u32,
    /// A reply: its request's latency (`MsgHeader::request_latency`).
    pub request_latency: u32,
}

/// Source queues and injection engines of a partition.
#[derive(Clone, Debug)]
pub struct Dma {
    queues: Vec<VecDeque<PendingMsg>>,
    /// Per node: mask of idle injection engines.
    idle: Vec<u64>,
    backlog: usize,
    /// Per node: replies waiting (request/reply traffic; empty otherwise), each from its
    /// creation cycle on; they go before the node's waiting requests, as BookSim's
    /// pending replies go before new requests.
    replies: Vec<VecDeque<PendingMsg>>,
    /// Per node: the engine that took the last message (sequential injection).
    last: Vec<u8>,
    /// Bit `node`: the node has an idle engine and a waiting message ([`Dma::can_inject`]).
    /// Every active router asks this each cycle; one bit per node keeps the answer in a
    /// few cache lines instead of one line of `idle` and one of `queues` per node.
    injectable: Vec<u64>,
}

impl Dma {
    /// `engines` injection engines at each of `nodes` nodes, all idle; an error when
    /// the memory cannot be had.
    pub fn new(nodes: usize, engines: usize) -> crate::foundation::error::Result<Self> {
        let all = if engines == 64 {
            u64::MAX
        } else {
            (1u64 << engines) - 1
        };
        Ok(Dma {
            queues: crate::foundation::limits::collected_table(
                nodes,
                (0..nodes).map(|_| VecDeque::new()),
                "source memory queue",
            )?,
            idle: crate::foundation::limits::filled_table(
                Some(nodes),
                all,
                "idle injection engine",
            )?,
            backlog: 0,
            replies: Vec::new(),
            last: crate::foundation::limits::filled_table(
                Some(nodes),
                (engines - 1) as u8,
                "last injection engine",
            )?,
            injectable: crate::foundation::limits::filled_table(
                Some(nodes.div_ceil(64)),
                0,
                "injectable nodes",
            )?,
        })
    }

    /// Recomputes `node`'s bit of `injectable` after its engines or queues changed.
    #[inline]
    fn refresh(&mut self, node: usize) {
        let can = self.idle[node] != 0
            && (!self.queues[node].is_empty()
                || self.replies.get(node).is_some_and(|q| !q.is_empty()));
        let (w, b) = (node / 64, node % 64);
        self.injectable[w] = self.injectable[w] & !(1 << b) | (can as u64) << b;
    }

    /// Gives every node a queue of replies (request/reply traffic); an error when the
    /// memory cannot be had.
    pub fn with_replies(mut self) -> crate::foundation::error::Result<Self> {
        self.replies = crate::foundation::limits::collected_table(
            self.queues.len(),
            (0..self.queues.len()).map(|_| VecDeque::new()),
            "reply queue",
        )?;
        Ok(self)
    }

    /// A reply created at `node` (its `created` cycle may be a few cycles ahead: it
    /// waits until then) joins the node's replies, ahead of its requests.
    #[inline]
    pub fn enqueue_reply(&mut self, node: usize, m: PendingMsg) {
        self.replies[node].push_back(m);
        self.backlog += 1;
        self.refresh(node);
    }

    /// The next message `node` sends at cycle `now`: a reply created by then, else
    /// the first waiting message.
    #[inline]
    fn pop(&mut self, node: usize, now: Cycle) -> Option<PendingMsg> {
        if let Some(q) = self.replies.get_mut(node) {
            if q.front().is_some_and(|m| m.created <= now) {
                return q.pop_front();
            }
        }
        self.queues[node].pop_front()
    }

    /// A newly created message joins `node`'s memory queue.
    #[inline]
    pub fn enqueue(&mut self, node: usize, m: PendingMsg) {
        self.queues[node].push_back(m);
        self.backlog += 1;
        self.refresh(node);
    }

    /// Messages waiting in memory at all nodes of the partition.
    #[inline]
    pub fn backlog(&self) -> usize {
        self.backlog
    }

    /// Messages waiting at `node` (replies included).
    #[inline]
    pub fn queued(&self, node: usize) -> usize {
        self.queues[node].len() + self.replies.get(node).map_or(0, VecDeque::len)
    }

    /// True when `node` has a waiting message (a reply perhaps not yet due) and an idle
    /// engine.
    #[inline]
    pub fn can_inject(&self, node: usize) -> bool {
        self.injectable[node / 64] >> (node % 64) & 1 == 1
    }

    /// Hands waiting messages to idle engines at cycle `now`: replies created by then
    /// first, then the others, each FIFO. All at once to the lowest idle engines, or,
    /// when `one` (sequential injection, BookSim's source), only the first, to the first
    /// idle engine after the one taken last — BookSim's source writes each packet into
    /// the first free injection VC after the one it used last, and which input VC a
    /// packet holds decides its turn in the router's VC and switch arbiters (always the
    /// lowest engine cost the 8×8 torus 8% of its tornado throughput). Returns whether
    /// one started.
    #[inline]
    pub fn start(
        &mut self,
        node: usize,
        now: Cycle,
        one: bool,
        mut f: impl FnMut(usize, PendingMsg),
    ) -> bool {
        let mut started = false;
        while self.idle[node] != 0 {
            let Some(m) = self.pop(node, now) else {
                break;
            };
            let e = if one {
                // BookSim's source: the first free VC after the one it used last.
                let after = (self.last[node] as u32 + 1) % 64;
                let idle = self.idle[node];
                let rot = idle.rotate_right(after);
                let e = ((rot.trailing_zeros() + after) % 64) as usize;
                self.last[node] = e as u8;
                e
            } else {
                self.idle[node].trailing_zeros() as usize
            };
            self.idle[node] &= !(1 << e);
            self.backlog -= 1;
            f(e, m);
            started = true;
            if one {
                break;
            }
        }
        self.refresh(node);
        started
    }

    /// Hands the first waiting message to the lowest idle engine, if both exist.
    #[inline]
    pub fn start_one(&mut self, node: usize) -> Option<(usize, PendingMsg)> {
        // Modes that start one message at a time have no replies.
        if self.idle[node] == 0 || self.queues[node].is_empty() {
            return None;
        }
        let e = self.idle[node].trailing_zeros() as usize;
        self.idle[node] &= !(1 << e);
        let m = self.queues[node].pop_front().expect("non-empty");
        self.backlog -= 1;
        self.refresh(node);
        Some((e, m))
    }

    /// Engine `e` of `node` has sent its message's tail.
    #[inline]
    pub fn release(&mut self, node: usize, e: usize) {
        self.idle[node] |= 1 << e;
        self.refresh(node);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn msg(seq: u64, created: Cycle, class: u8) -> PendingMsg {
        PendingMsg {
            id: MsgId::new(NodeId(0), seq),
            dst: NodeId(1),
            len: 1,
            created,
            measured: true,
            class,
            reply_len: 0,
            request_latency: 0,
        }
    }

    #[test]
    fn a_reply_goes_before_waiting_requests_from_its_creation_cycle() {
        let mut d = Dma::new(1, 1).unwrap().with_replies().unwrap();
        d.enqueue(0, msg(0, 0, 0));
        d.enqueue(0, msg(1, 0, 0));
        d.enqueue_reply(0, msg(2, 5, 1));
        assert_eq!(d.backlog(), 3);
        let mut started = Vec::new();
        // Cycle 4: the reply is not created yet; the first request starts.
        assert!(d.start(0, 4, false, |_, m| started.push(m.id.seq())));
        d.release(0, 0);
        // Cycle 5: the reply before the request that waited longer.
        assert!(d.start(0, 5, false, |_, m| started.push(m.id.seq())));
        d.release(0, 0);
        assert!(d.start(0, 6, false, |_, m| started.push(m.id.seq())));
        assert_eq!(started, [0, 2, 1]);
        assert_eq!(d.backlog(), 0);
        assert!(!d.can_inject(0));
    }

    #[test]
    fn a_sequential_source_takes_its_engines_in_turn_as_booksims_takes_its_vcs() {
        let mut d = Dma::new(1, 4).unwrap();
        let mut engines = Vec::new();
        for seq in 0..6 {
            d.enqueue(0, msg(seq, 0, 0));
            assert!(d.start(0, seq, true, |e, _| engines.push(e)));
            // The engine is free again at once: one at a time, but never the same twice
            // running while others are free.
            d.release(0, *engines.last().unwrap());
        }
        assert_eq!(engines, [0, 1, 2, 3, 0, 1]);
        // A busy engine is skipped; the turn goes on after the one taken.
        let mut d = Dma::new(1, 4).unwrap();
        d.enqueue(0, msg(0, 0, 0));
        d.enqueue(0, msg(1, 0, 0));
        d.enqueue(0, msg(2, 0, 0));
        let mut taken = Vec::new();
        d.start(0, 0, true, |e, _| taken.push(e));
        d.start(0, 1, true, |e, _| taken.push(e));
        d.release(0, 0);
        d.start(0, 2, true, |e, _| taken.push(e));
        assert_eq!(taken, [0, 1, 2]);
        // Started all at once (not sequential): lowest idle engines first.
        let mut d = Dma::new(1, 4).unwrap();
        for seq in 0..2 {
            d.enqueue(0, msg(seq, 0, 0));
        }
        let mut all = Vec::new();
        d.start(0, 0, false, |e, _| all.push(e));
        assert_eq!(all, [0, 1]);
    }
}
