//! Switching modes: how a node's hardware is sequenced within a cycle and what travels
//! between nodes. One module per mode: [`wormhole`] is paper 004's flit-level wormhole
//! switching with virtual channels, [`circuit`] the circuit switching of papers 000 and
//! 001 with hold, drop and adaptive conflict resolution.

pub mod circuit;
pub mod wormhole;
