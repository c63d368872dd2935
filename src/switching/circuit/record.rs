//! A communication's record and how it travels. The record (path, phase, timings,
//! counters) belongs to the node where the circuit's signal currently is: the set-up
//! request, the abort or release signal, or the ack. When that signal crosses into
//! another partition the record goes with it ([`CircuitRemote::Record`]), so that no
//! two partitions ever touch the same record.
//!
//! Other nodes need one thing about a circuit they do not hold: its phase, to classify
//! a conflict against a link it holds. A circuit's phases are fixed the moment its
//! set-up reaches the destination (the ack, the data and the release start at known
//! times from then on), so that node announces the [`Timeline`] to every partition,
//! which applies it from the next cycle: exactly "the holder's phase as of the
//! previous cycle" that a verify reads. The announcement is withdrawn when the circuit
//! completes. It does not model hardware; it is the bookkeeping of the statistic.
//!
//! Not here: the link ends (`links`), the measurements (`measure`).

use crate::foundation::types::Cycle;
use crate::router::dma::PendingMsg;
use crate::switching::circuit::links::EndView;
use crate::switching::circuit::measure::Phase;

/// When a circuit that reached its destination enters its later phases.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Timeline {
    /// The circuit (message id).
    pub id: u64,
    /// Cycle the destination's DMA engine was taken (ack phase from then on).
    pub reached: Cycle,
    /// Cycle the ack reaches the source (data phase).
    pub ack: Cycle,
    /// Cycle the source DMA has sent the last flit (release phase).
    pub sent: Cycle,
}

impl Timeline {
    /// The phase at the end of cycle `x`.
    pub fn phase_at(&self, x: Cycle) -> Phase {
        if x >= self.sent {
            Phase::Release
        } else if x >= self.ack {
            Phase::Data
        } else if x >= self.reached {
            Phase::Ack
        } else {
            Phase::Setup
        }
    }
}

/// What one partition hands another at the end of a cycle, besides events.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub enum CircuitRemote {
    /// A circuit's record, travelling with the signal sent to a node of the receiving
    /// partition (the event names the circuit by message id).
    Record(Box<Circuit>),
    /// A circuit reached its destination (announced to every partition).
    Reached(Timeline),
    /// A circuit completed (announced to every partition).
    Completed(u64),
    /// A half-duplex link end changed; the receiving partition holds its peer.
    End {
        /// Global index of the end.
        end: u32,
        /// Its state at the end of the cycle.
        view: EndView,
    },
}

/// A communication in progress, from the moment a sending DMA engine takes its message.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct Circuit {
    pub(super) msg: PendingMsg,
    pub(super) engine: u8,
    /// Nodes and output ports of the links acquired so far, from the source.
    pub(super) nodes: Vec<u32>,
    pub(super) ports: Vec<u8>,
    /// First link not yet released by the end-of-transmission signal.
    pub(super) rel_next: u32,
    pub(super) phase: Phase,
    /// Links held and since when they were last accounted.
    pub(super) held: u32,
    pub(super) acct_t: Cycle,
    pub(super) aborting: bool,
    /// Adaptive: minimal output ports not yet verified at the current node.
    pub(super) cand: u64,
    /// Local link end (or NONE) the circuit waits at, and since when.
    pub(super) waiting_at: u32,
    pub(super) wait_since: Cycle,
    pub(super) hops: u32,
    pub(super) engine_at: Cycle,
    pub(super) reached_at: Cycle,
    pub(super) ack_at: Cycle,
    pub(super) sent_at: Cycle,
    /// Cycle the tail reaches the destination (known once the ack is in).
    pub(super) tail_at: Cycle,
    pub(super) aborts: u32,
    pub(super) link_wait: u64,
    pub(super) ctrl_wait: u64,
    /// Arrival class of the set-up request in flight to the next node (travels with the
    /// record, so the receiving controller can count it; see `ArrivalClass`).
    pub(super) arrive_class: u8,
}

impl Circuit {
    /// A fresh record for `msg` (also what is left behind when a record moves on: it
    /// keeps the id, so that a stale timer can tell it is not its circuit's).
    pub(super) fn new(msg: PendingMsg) -> Self {
        Circuit {
            msg,
            engine: 0,
            nodes: Vec::new(),
            ports: Vec::new(),
            rel_next: 0,
            phase: Phase::Setup,
            held: 0,
            acct_t: 0,
            aborting: false,
            cand: 0,
            waiting_at: crate::switching::circuit::links::NONE,
            wait_since: 0,
            hops: 0,
            engine_at: 0,
            reached_at: 0,
            ack_at: 0,
            sent_at: 0,
            tail_at: Cycle::MAX,
            aborts: 0,
            link_wait: 0,
            ctrl_wait: 0,
            arrive_class: 0,
        }
    }

    /// The circuit's identity in link ends and events (its message id).
    #[inline]
    pub(super) fn id(&self) -> u64 {
        self.msg.id.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_timeline_gives_the_phase_at_the_end_of_each_cycle() {
        let tl = Timeline {
            id: 1,
            reached: 10,
            ack: 12,
            sent: 20,
        };
        let at = |x| tl.phase_at(x);
        assert_eq!(
            [at(9), at(10), at(11), at(12), at(19), at(20), at(99)],
            [
                Phase::Setup,
                Phase::Ack,
                Phase::Ack,
                Phase::Data,
                Phase::Data,
                Phase::Release,
                Phase::Release
            ]
        );
    }
}
