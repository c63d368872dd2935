//! The allocators BookSim2 names, for the VC and switch allocators of a router:
//! arbiter banks ([`arbiter`]: round-robin, fixed priority, matrix) and the matching of
//! one cycle's requests ([`matching`]: separable input first and output first, iSLIP,
//! wavefront). What the requesters and resources are, and routemu's own default
//! allocator, belong to [`crate::router::vc_alloc`] and [`crate::router::crossbar`].

pub mod arbiter;
pub mod matching;
