//! Foundations: the units and identifiers every layer names ([`types`]), the error type
//! ([`error`]), the seeded random streams ([`rng`]), the limits on user-given sizes and
//! the allocation of big tables ([`limits`]), confidence intervals ([`ci`]), the files read as inputs
//! ([`inputs`]) and the marker of waits on the outside world ([`blocking`]). Nothing
//! here imports another module of the crate.

pub mod blocking;
pub mod ci;
pub mod error;
pub mod inputs;
pub mod limits;
pub mod mg1;
pub mod rng;
pub mod types;
