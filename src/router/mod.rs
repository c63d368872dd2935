//! The node's hardware, as flat arrays over the nodes of one partition: input
//! virtual-channel buffers ([`buffers`]), the routing controller ([`controller`]), the
//! virtual-channel allocator ([`vc_alloc`]), the crossbar and its switch allocator
//! ([`crossbar`]), the DMA engines and source queues ([`dma`]) and link timing
//! ([`link`]). How these are sequenced in a cycle is the switching mode's business
//! (`switching/`).

pub mod buffers;
pub mod controller;
pub mod crossbar;
pub mod dma;
pub mod link;
pub mod vc_alloc;

/// Shape of every router of a network: how per-node arrays are indexed.
///
/// Ports `0..ports` are network ports, port `ports` is the local port. Every port has
/// `slots` VC slots: network ports use `vcs` of them, the local port `dma` of them (its
/// "VCs" are the DMA engines).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Layout {
    /// Network ports per node.
    pub ports: usize,
    /// Virtual channels per network port.
    pub vcs: usize,
    /// DMA engines per node (injection and ejection each).
    pub dma: usize,
    /// VC slots per port: max(vcs, dma).
    pub slots: usize,
}

impl Layout {
    /// Builds a layout.
    pub fn new(ports: usize, vcs: usize, dma: usize) -> Self {
        Layout {
            ports,
            vcs,
            dma,
            slots: vcs.max(dma),
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
        self.port_idx(node, port) * self.slots + vc
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
