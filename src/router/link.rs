//! Links: register pipelines carrying flits forward and credits backward. A flit that
//! wins the crossbar in cycle t enters the link `traversal` cycles later and is in the
//! downstream input buffer, usable, in cycle t + traversal + latency. A credit sent in
//! cycle t is usable upstream in cycle t + credit_latency. The ejection path into the
//! destination's memory takes `router.ni.ejection_latency` cycles after the crossbar
//! (default one, `EJECT_LATENCY`).
//!
//! What is in flight on the links is kept as timed events (see `engine::wheel`): the
//! exchange between nodes is explicit, which is what lets partitions of the network be
//! stepped apart. A head flit's header is written into the downstream VC's message slot
//! when the head is sent: that VC is reserved for the message from the moment its output
//! VC was allocated, and nothing reads the slot before the head's event arrives, so the
//! events themselves stay small (12 bytes).

use crate::config::LinkConfig;
use crate::foundation::types::Cycle;

/// Cycles for a flit to pass from the crossbar's local output into memory, by default.
pub const EJECT_LATENCY: Cycle = 1;

/// Timing of the links and of the crossbar traversal that feeds them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LinkTiming {
    /// Flit latency of a link.
    pub latency: Cycle,
    /// Credit latency back to the upstream router.
    pub credit_latency: Cycle,
    /// Flits per cycle per link (and per crossbar connection).
    pub width: u32,
    /// Crossbar traversal: cycles from switch grant to entering the link.
    pub traversal: Cycle,
    /// Cycles from the crossbar's local output into memory.
    pub eject: Cycle,
}

impl LinkTiming {
    /// From the configuration.
    pub fn new(cfg: &LinkConfig, traversal: Cycle) -> Self {
        LinkTiming {
            latency: cfg.latency,
            credit_latency: cfg.credit_latency.unwrap_or(cfg.latency),
            width: cfg.width,
            traversal,
            eject: EJECT_LATENCY,
        }
    }

    /// Cycles from switch grant to the flit being usable downstream.
    #[inline]
    pub fn flit_delay(&self) -> Cycle {
        self.traversal + self.latency
    }

    /// The longest delay any event is scheduled ahead.
    pub fn horizon(&self) -> Cycle {
        self.flit_delay()
            .max(self.credit_latency)
            .max(self.traversal + self.eject)
    }
}

/// Something arriving at a node's input or output side in a given cycle.
#[derive(Clone, Copy, Debug, serde::Serialize, serde::Deserialize)]
pub enum LinkEvent {
    /// Flits arriving in an input VC buffer.
    Flit {
        /// Receiving node (global number).
        node: u32,
        /// Input port.
        port: u8,
        /// Input VC.
        vc: u8,
        /// Number of flits (≤ link width).
        n: u16,
        /// The bundle carries the message's head flit (its header is already in the
        /// downstream VC's message slot).
        head: bool,
    },
    /// Credits returning to an output VC; `free` when the message's tail has left the
    /// downstream buffer, so the output VC may be allocated again.
    Credit {
        /// Receiving (upstream) node.
        node: u32,
        /// Output port.
        port: u8,
        /// Output VC.
        vc: u8,
        /// Credits.
        n: u16,
        /// The downstream VC is empty and released.
        free: bool,
    },
}

impl LinkEvent {
    /// The node the event is delivered to.
    #[inline]
    pub fn node(&self) -> u32 {
        match *self {
            LinkEvent::Flit { node, .. } | LinkEvent::Credit { node, .. } => node,
        }
    }
}

impl crate::foundation::types::Located for LinkEvent {
    #[inline]
    fn node(&self) -> u32 {
        LinkEvent::node(self)
    }
}
