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
}

/// Source queues and injection engines of a partition.
#[derive(Clone, Debug)]
pub struct Dma {
    queues: Vec<VecDeque<PendingMsg>>,
    /// Per node: mask of idle injection engines.
    idle: Vec<u64>,
    backlog: usize,
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
        })
    }

    /// A newly created message joins `node`'s memory queue.
    #[inline]
    pub fn enqueue(&mut self, node: usize, m: PendingMsg) {
        self.queues[node].push_back(m);
        self.backlog += 1;
    }

    /// Messages waiting in memory at all nodes of the partition.
    #[inline]
    pub fn backlog(&self) -> usize {
        self.backlog
    }

    /// Messages waiting at `node`.
    #[inline]
    pub fn queued(&self, node: usize) -> usize {
        self.queues[node].len()
    }

    /// True when `node` has a waiting message and an idle engine.
    #[inline]
    pub fn can_inject(&self, node: usize) -> bool {
        self.idle[node] != 0 && !self.queues[node].is_empty()
    }

    /// Hands waiting messages to idle engines, lowest engine first, FIFO (only the first
    /// when `one`).
    #[inline]
    pub fn start(&mut self, node: usize, one: bool, mut f: impl FnMut(usize, PendingMsg)) {
        while self.can_inject(node) {
            let e = self.idle[node].trailing_zeros() as usize;
            self.idle[node] &= !(1 << e);
            let m = self.queues[node].pop_front().expect("non-empty");
            self.backlog -= 1;
            f(e, m);
            if one {
                break;
            }
        }
    }

    /// Hands the first waiting message to the lowest idle engine, if both exist.
    #[inline]
    pub fn start_one(&mut self, node: usize) -> Option<(usize, PendingMsg)> {
        if !self.can_inject(node) {
            return None;
        }
        let e = self.idle[node].trailing_zeros() as usize;
        self.idle[node] &= !(1 << e);
        let m = self.queues[node].pop_front().expect("non-empty");
        self.backlog -= 1;
        Some((e, m))
    }

    /// Engine `e` of `node` has sent its message's tail.
    #[inline]
    pub fn release(&mut self, node: usize, e: usize) {
        self.idle[node] |= 1 << e;
    }
}
