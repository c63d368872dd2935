//! The node's hardware, as flat arrays over the nodes of one partition: input
//! virtual-channel buffers ([`buffers`]), the routing controller ([`controller`]), the
//! virtual-channel allocator ([`vc_alloc`]), the crossbar and its switch allocator
//! ([`crossbar`]), the DMA engines and source queues ([`dma`]), a BookSim-style
//! terminal's sequential source ([`source`]) and link timing ([`link`]). How these are sequenced in a cycle is the switching mode's business
//! (`switching/`).

pub mod alloc;
pub mod buffers;
pub mod controller;
pub mod crossbar;
pub mod dma;
pub mod link;
pub mod source;
pub mod vc_alloc;

/// Shape of every router of a network: how per-node arrays are indexed.
///
/// Ports `0..ports` are network ports, port `ports` is the local port. A node's VC slots
/// are packed: network port p has slots p·vcs .. p·vcs + vcs, the local port (whose
/// "VCs" are the DMA engines) the `dma` slots after them, so a node with many DMA engines
/// and few VCs (a d = 20 hypercube: 20 engines, 2 VCs) does not pay for engines on every
/// port.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Layout {
    /// Network ports per node.
    pub ports: usize,
    /// Virtual channels per network port.
    pub vcs: usize,
    /// DMA engines per node (injection and ejection each).
    pub dma: usize,
    /// VC slots per node: ports·vcs + dma.
    pub per_node: usize,
}

impl Layout {
    /// Builds a layout.
    pub fn new(ports: usize, vcs: usize, dma: usize) -> Self {
        Layout {
            ports,
            vcs,
            dma,
            per_node: ports * vcs + dma,
        }
    }

    /// Ports including the local one.
    #[inline]
    pub fn all_ports(&self) -> usize {
        self.ports + 1
    }

    /// Index of the local port.
    #[inline]
    pub fn local(&self) -> usize {
        self.ports
    }

    /// Index of (node, port) in per-port arrays.
    #[inline]
    pub fn port_idx(&self, node: usize, port: usize) -> usize {
        node * self.all_ports() + port
    }

    /// Index of (node, port, vc) in per-VC arrays.
    #[inline]
    pub fn vc_idx(&self, node: usize, port: usize, vc: usize) -> usize {
        node * self.per_node + self.slot(port, vc)
    }

    /// The slot of (port, vc) within its node.
    #[inline]
    pub fn slot(&self, port: usize, vc: usize) -> usize {
        port * self.vcs + vc
    }

    /// The (port, vc) of a slot within its node.
    #[inline]
    pub fn unslot(&self, slot: usize) -> (usize, usize) {
        let local = self.ports * self.vcs;
        if slot >= local {
            (self.ports, slot - local)
        } else {
            (slot / self.vcs, slot % self.vcs)
        }
    }

    /// Number of VCs (or DMA engines) on `port`.
    #[inline]
    pub fn vcs_of(&self, port: usize) -> usize {
        if port == self.ports {
            self.dma
        } else {
            self.vcs
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packed_slots_are_distinct_and_round_trip() {
        let lay = Layout::new(3, 2, 5);
        let mut seen = std::collections::BTreeSet::new();
        for p in 0..lay.all_ports() {
            for v in 0..lay.vcs_of(p) {
                let s = lay.slot(p, v);
                assert!(s < lay.per_node);
                assert_eq!(lay.unslot(s), (p, v));
                assert!(seen.insert(lay.vc_idx(7, p, v)));
            }
        }
        assert_eq!(seen.len(), lay.per_node);
    }
}
