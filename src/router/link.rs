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
//! events themselves stay small (8 bytes).

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

/// Something arriving at a node's input or output side in a given cycle: a bundle of
/// flits for an input VC, or credits for an output VC. Packed in 8 bytes (the receiving
/// node, then port, VC, count and flags in one word) and built from whole words, so that
/// the calendar's buckets stay small and an event written in one cycle is read back
/// without the store-forwarding stall a byte-by-byte enum cost (docs/speed.md, "The
/// per-flit path").
#[derive(Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct LinkEvent {
    node: u32,
    /// Port (bits 0–5), VC (6–11), `head`/`free` (12), credit (13), count (16–31).
    bits: u32,
}

/// A [`LinkEvent`] taken apart, for code that matches on it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Signal {
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

const FLAG: u32 = 1 << 12;
const CREDIT: u32 = 1 << 13;

impl LinkEvent {
    /// `n` flits for VC `vc` of input `port` of `node`; `head` when they carry the
    /// message's head. Ports and VCs are below 64 (`engine::machine`'s limits).
    #[inline(always)]
    pub fn flit(node: u32, port: u8, vc: u8, n: u16, head: bool) -> Self {
        debug_assert!(port < 64 && vc < 64);
        LinkEvent {
            node,
            bits: port as u32 | (vc as u32) << 6 | (head as u32) << 12 | (n as u32) << 16,
        }
    }

    /// `n` credits for VC `vc` of output `port` of `node`; `free` when the downstream
    /// VC was released.
    #[inline(always)]
    pub fn credit(node: u32, port: u8, vc: u8, n: u16, free: bool) -> Self {
        debug_assert!(port < 64 && vc < 64);
        LinkEvent {
            node,
            bits: port as u32 | (vc as u32) << 6 | (free as u32) << 12 | CREDIT | (n as u32) << 16,
        }
    }

    /// The node the event is delivered to.
    #[inline(always)]
    pub fn node(&self) -> u32 {
        self.node
    }

    /// Whether it carries credits (else flits).
    #[inline(always)]
    pub fn is_credit(&self) -> bool {
        self.bits & CREDIT != 0
    }

    /// The input port (flits) or output port (credits).
    #[inline(always)]
    pub fn port(&self) -> usize {
        (self.bits & 63) as usize
    }

    /// The VC.
    #[inline(always)]
    pub fn vc(&self) -> usize {
        (self.bits >> 6 & 63) as usize
    }

    /// Flits or credits carried.
    #[inline(always)]
    pub fn n(&self) -> u32 {
        self.bits >> 16
    }

    /// `head` for flits, `free` for credits.
    #[inline(always)]
    pub fn flag(&self) -> bool {
        self.bits & FLAG != 0
    }

    /// The event taken apart.
    pub fn signal(&self) -> Signal {
        let (node, port, vc, n, flag) = (
            self.node,
            self.port() as u8,
            self.vc() as u8,
            self.n() as u16,
            self.flag(),
        );
        if self.is_credit() {
            Signal::Credit {
                node,
                port,
                vc,
                n,
                free: flag,
            }
        } else {
            Signal::Flit {
                node,
                port,
                vc,
                n,
                head: flag,
            }
        }
    }
}

impl std::fmt::Debug for LinkEvent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.signal().fmt(f)
    }
}

impl crate::foundation::types::Located for LinkEvent {
    #[inline]
    fn node(&self) -> u32 {
        self.node
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_event_gives_back_every_field_it_was_built_with() {
        for (port, vc, n, flag) in [
            (0u8, 0u8, 1u16, false),
            (62, 63, u16::MAX, true),
            (5, 17, 300, true),
        ] {
            let f = LinkEvent::flit(u32::MAX, port, vc, n, flag);
            assert_eq!(
                f.signal(),
                Signal::Flit {
                    node: u32::MAX,
                    port,
                    vc,
                    n,
                    head: flag
                }
            );
            let c = LinkEvent::credit(7, port, vc, n, flag);
            assert_eq!(
                c.signal(),
                Signal::Credit {
                    node: 7,
                    port,
                    vc,
                    n,
                    free: flag
                }
            );
            assert!(c.is_credit() && !f.is_credit());
        }
        assert_eq!(std::mem::size_of::<LinkEvent>(), 8);
    }
}
