//! The sequential source of a BookSim-style terminal (`router.ni.sequential_injection`):
//! when it may start the next message. Owns the per-node cycle before which it may not
//! and the test of the messages still being injected; which engine takes the message and
//! how its flits move are the DMA engines' and the wormhole router's.
//!
//! BookSim's source writes a packet flit by flit, one per cycle, into the router's
//! injection buffer, each flit only when it holds a credit for it, and writes the next
//! head in the cycle after the tail. routemu's DMA engine holds its whole message in the
//! router's local input VC (the flits beyond the buffer's depth stand for those still in
//! the source), so the source's view has to be rebuilt from that VC:
//!
//! - **On a router's own local port** (no concentration) the tail is written once the rest
//!   of the message fits in the router's buffer (`router.buffer_flits`) *and* the credit
//!   saying so has come back. The flit that makes room leaves the buffer in cycle s; its
//!   credit is the source's `ni.credit_latency` cycles later (default
//!   `ni.injection_latency`, the channel's latency both ways as for links), the tail is
//!   written then, and the next head the cycle after: the next message starts at
//!   s + 1 + credit latency. (Starting it at s + 1, as routemu did before, let the source
//!   run a credit round trip ahead of BookSim's on every message longer than the buffer:
//!   +7.4% saturation throughput on the flattened butterfly, docs/dragonfly.md.)
//! - **On a terminal node** (concentration) the terminal's own crossbar is BookSim's
//!   source: its output VC on the terminal link holds exactly BookSim's credits for the
//!   router's injection buffer, and a flit crossing it is a flit written. The next message
//!   starts when the current one's rest goes out no later than the new head could
//!   (`lead` cycles from start to the head's earliest crossing: route service, injection
//!   latency, VC and switch allocation) and has the credits to: its head then crosses in
//!   the cycle after the tail, as BookSim's does, and never overtakes it.
//!
//! Both add the channel's own pace: a message of L flits holds the channel for
//! ⌈L / `ni.injection`⌉ cycles from its start.

use crate::foundation::error::Result;
use crate::foundation::types::Cycle;
use crate::router::buffers::{InputBuffers, OutputVcs, VcState};
use crate::router::Layout;

/// Which view of the injection buffer the source has (module documentation).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SourceView {
    /// A router's own local port: the rest must fit in `buffer` flits, known
    /// `credit_latency` cycles after it does.
    Router {
        /// The router's input VC depth (`router.buffer_flits`).
        buffer: u32,
        /// Cycles a credit of that buffer takes back to the source.
        credit_latency: Cycle,
    },
    /// A terminal node: the rest must go out within `lead` cycles on credits it holds.
    Terminal {
        /// Cycles from a message's start to its head's earliest crossbar traversal.
        lead: u32,
    },
}

/// The sequential sources of a partition's nodes.
#[derive(Clone, Debug)]
pub struct SequentialSource {
    view: SourceView,
    /// Flits per cycle of the injection channel (0: unlimited).
    rate: u32,
    /// [node] The first cycle the next message may start at, as far as the channel's pace
    /// and (routers) the buffer credits known so far say.
    open_at: Vec<Cycle>,
}

impl SequentialSource {
    /// Sources for `nodes` nodes.
    pub fn new(nodes: usize, view: SourceView, rate: u32) -> Result<Self> {
        Ok(SequentialSource {
            view,
            rate,
            open_at: crate::foundation::limits::zeroed_table(Some(nodes), "source feed times")?,
        })
    }

    /// Whether node `n`'s source may start a message at `t`.
    #[inline]
    pub fn open(
        &self,
        n: usize,
        t: Cycle,
        lay: &Layout,
        inputs: &InputBuffers,
        outputs: &OutputVcs,
    ) -> bool {
        if t < self.open_at[n] {
            return false;
        }
        (0..lay.dma).all(|e| {
            let s = &inputs.vc[lay.vc_idx(n, lay.local(), e)];
            match self.view {
                SourceView::Router { buffer, .. } => s.state == VcState::Idle || s.left <= buffer,
                SourceView::Terminal { lead } => {
                    s.state == VcState::Idle
                        || (s.state == VcState::Active
                            && s.left <= lead
                            && s.left
                                <= outputs.credits
                                    [lay.vc_idx(n, s.out_port as usize, s.out_vc as usize)])
                }
            }
        })
    }

    /// Node `n`'s source started a message of `len` flits at `t`.
    #[inline]
    pub fn started(&mut self, n: usize, t: Cycle, len: u32) {
        if self.rate > 0 {
            self.open_at[n] = self.open_at[n].max(t + len.div_ceil(self.rate) as Cycle);
        }
    }

    /// Flits of a message injected at node `n` left the router's local input VC at `t`,
    /// `before` flits of it to go before and `after` after: on a router's local port,
    /// the source learns of the room a credit latency later.
    #[inline]
    pub fn sent(&mut self, n: usize, t: Cycle, before: u32, after: u32) {
        if let SourceView::Router {
            buffer,
            credit_latency,
        } = self.view
        {
            if before > buffer && after <= buffer {
                self.open_at[n] = self.open_at[n].max(t + 1 + credit_latency);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One node with one network port of one VC and two injection engines.
    fn node() -> (Layout, InputBuffers, OutputVcs) {
        let lay = Layout::new(1, 1, 2);
        let inputs = InputBuffers::new(1, &lay, 1, |_, _| true, 1).unwrap();
        let outputs = OutputVcs::new(1, &lay, 8, false, |_, _| true).unwrap();
        (lay, inputs, outputs)
    }

    /// Engine `e` injecting a message with `left` flits to go, its head out on the port.
    fn injecting(lay: &Layout, inputs: &mut InputBuffers, e: usize, left: u32) {
        let s = &mut inputs.vc[lay.vc_idx(0, lay.local(), e)];
        s.state = VcState::Active;
        s.left = left;
        s.buffered = left;
        s.out_port = 0;
        s.out_vc = 0;
    }

    /// A router's own source: 8-flit buffer, credits back in 2 cycles, 1 flit per cycle.
    fn router_source() -> SequentialSource {
        let view = SourceView::Router {
            buffer: 8,
            credit_latency: 2,
        };
        SequentialSource::new(1, view, 1).unwrap()
    }

    #[test]
    fn a_router_source_starts_the_next_message_a_credit_latency_after_the_rest_fits() {
        let (lay, mut inputs, outputs) = node();
        let mut src = router_source();
        src.started(0, 0, 20);
        injecting(&lay, &mut inputs, 0, 9);
        // The channel is busy for 20 cycles, and 9 flits do not fit in 8.
        assert!(!src.open(0, 19, &lay, &inputs, &outputs));
        assert!(!src.open(0, 40, &lay, &inputs, &outputs));
        // The ninth-last flit leaves the buffer in cycle 40: the rest fits from then on,
        // but the source holds the credit saying so only in cycle 42, writes the tail
        // then and the next head in 43.
        src.sent(0, 40, 9, 8);
        injecting(&lay, &mut inputs, 0, 8);
        for t in 41..43 {
            assert!(!src.open(0, t, &lay, &inputs, &outputs), "cycle {t}");
        }
        assert!(src.open(0, 43, &lay, &inputs, &outputs));
    }

    #[test]
    fn a_message_that_fits_from_the_start_waits_only_for_the_channel() {
        let (lay, mut inputs, outputs) = node();
        let mut src = router_source();
        src.started(0, 100, 6);
        injecting(&lay, &mut inputs, 1, 6);
        assert!(!src.open(0, 105, &lay, &inputs, &outputs));
        assert!(src.open(0, 106, &lay, &inputs, &outputs));
    }

    #[test]
    fn a_terminal_starts_the_next_message_when_the_rest_goes_out_before_its_head_could() {
        let (lay, mut inputs, mut outputs) = node();
        let mut src = SequentialSource::new(1, SourceView::Terminal { lead: 1 }, 1).unwrap();
        src.started(0, 0, 12);
        let credits = lay.vc_idx(0, 0, 0);
        // Two flits to go: the second would still be in the channel when the next head
        // could cross.
        injecting(&lay, &mut inputs, 0, 2);
        assert!(!src.open(0, 50, &lay, &inputs, &outputs));
        // The tail alone, but the router's buffer is full: BookSim's source waits.
        injecting(&lay, &mut inputs, 0, 1);
        outputs.credits[credits] = 0;
        assert!(!src.open(0, 50, &lay, &inputs, &outputs));
        // Its credit is back: the tail crosses now, the next head the cycle after.
        outputs.credits[credits] = 1;
        assert!(src.open(0, 50, &lay, &inputs, &outputs));
        // A head not yet through VC allocation has no credits to count on.
        inputs.vc[lay.vc_idx(0, lay.local(), 0)].state = VcState::WaitVc;
        assert!(!src.open(0, 50, &lay, &inputs, &outputs));
    }
}
