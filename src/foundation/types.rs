//! Units and identifiers shared by every module: clock cycles, nodes, ports and virtual
//! channels. Newtypes keep a port index from being passed where a node is expected.

use serde::Serialize;
use std::fmt;

/// A point in time or a duration, in clock cycles. All times in routemu are integers.
pub type Cycle = u64;

/// A node (router + processing element) of the network, numbered from 0.
#[derive(
    Clone,
    Copy,
    Debug,
    Default,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    Serialize,
    serde::Deserialize,
    bytemuck::Zeroable,
)]
pub struct NodeId(pub u32);

impl NodeId {
    /// The node number as an index into per-node arrays.
    #[inline]
    pub fn idx(self) -> usize {
        self.0 as usize
    }
}

impl fmt::Display for NodeId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// A port of a router. Network ports are numbered `0..degree`; the local port (the
/// processing element's side, served by the DMA engines) is numbered `degree`.
///
/// Input and output ports share numbers: a flit that leaves node `u` on output port `p`
/// arrives at the neighbour on *input* port `p` ("the input that receives traffic moving
/// in direction `p`"), and credits for that input go back to output port `p` of `u`.
#[derive(
    Clone,
    Copy,
    Debug,
    Default,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    Serialize,
    serde::Deserialize,
    bytemuck::Zeroable,
)]
pub struct PortId(pub u8);

impl PortId {
    /// The port number as an index.
    #[inline]
    pub fn idx(self) -> usize {
        self.0 as usize
    }
}

/// A virtual channel of a port. On the local port the "virtual channels" are the DMA
/// engines (injection on the input side, ejection on the output side).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct VcId(pub u8);

impl VcId {
    /// The virtual-channel number as an index.
    #[inline]
    pub fn idx(self) -> usize {
        self.0 as usize
    }
}

/// A message identifier, unique within one replication: the source node in the low 24
/// bits and the source's own sequence number above them, so ids never depend on the
/// order in which nodes are stepped.
#[derive(
    Clone,
    Copy,
    Debug,
    Default,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    Serialize,
    serde::Deserialize,
    bytemuck::Zeroable,
)]
pub struct MsgId(pub u64);

impl MsgId {
    /// Number of low bits that hold the source node.
    pub const NODE_BITS: u32 = 24;

    /// The id of the `seq`-th message created at `src`.
    pub fn new(src: NodeId, seq: u64) -> Self {
        MsgId((seq << Self::NODE_BITS) | src.0 as u64)
    }

    /// The source node encoded in the id.
    pub fn src(self) -> NodeId {
        NodeId((self.0 & ((1 << Self::NODE_BITS) - 1)) as u32)
    }

    /// The source's sequence number encoded in the id.
    pub fn seq(self) -> u64 {
        self.0 >> Self::NODE_BITS
    }
}

impl fmt::Display for MsgId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}#{}", self.src(), self.seq())
    }
}

/// Largest number of nodes routemu builds tables for (the id encoding and the d = 20
/// hypercube of the project's goals both fit).
pub const MAX_NODES: usize = 1 << MsgId::NODE_BITS;

/// Something addressed to a node.
pub trait Located {
    /// The node it is for.
    fn node(&self) -> u32;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn msg_id_round_trips_source_and_sequence() {
        let id = MsgId::new(NodeId(1_000_000), 123_456_789);
        assert_eq!(id.src(), NodeId(1_000_000));
        assert_eq!(id.seq(), 123_456_789);
    }
}
