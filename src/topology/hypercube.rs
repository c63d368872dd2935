//! Binary hypercube: 2^d nodes, node u linked to u xor 2^i for every dimension i.
//! Port i is the link of dimension i (bidirectional, so input and output port i face the
//! same neighbour).

use crate::topology::PortSet;

/// A binary d-cube.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Hypercube {
    /// Number of dimensions d (1..=20).
    pub dim: u32,
}

impl Hypercube {
    /// 2^d.
    pub fn nodes(&self) -> usize {
        1usize << self.dim
    }

    /// Neighbour across dimension `port`.
    #[inline]
    pub fn neighbor(&self, node: u32, port: u32) -> u32 {
        node ^ (1 << port)
    }

    /// Hamming distance.
    #[inline]
    pub fn distance(&self, a: u32, b: u32) -> u32 {
        (a ^ b).count_ones()
    }

    /// The dimensions in which `cur` and `dst` differ: every one is a minimal step.
    pub fn minimal_ports(&self, cur: u32, dst: u32) -> PortSet {
        let mut s = PortSet::ZERO;
        s.data[0] = (cur ^ dst) as u64;
        s
    }

    /// Closed form d·2^(d−1)/(2^d − 1) over ordered pairs of distinct nodes.
    pub fn mean_distance(&self) -> f64 {
        let d = self.dim as f64;
        let p = self.nodes() as f64;
        d * (p / 2.0) / (p - 1.0)
    }
}
