//! The switching modes and their routers, each against its closed forms, models and
//! invariants: wormhole (zero-load latency, conservation, deadlock, throughput, BookSim's
//! router and allocators), circuit switching (conflicts, blocking, the routing controller's queue),
//! deflection and the timeout wormhole of host/switch networks; the dragonfly, the flattened
//! butterfly and concentration.
//!
//! One test binary for these files (tests/modes/*.rs); docs/testing.md lists the
//! binaries.

mod common;

#[path = "modes/allocators.rs"]
mod allocators;
#[path = "modes/booksim.rs"]
mod booksim;
#[path = "modes/circuit.rs"]
mod circuit;
#[path = "modes/circuit_blocking.rs"]
mod circuit_blocking;
#[path = "modes/conservation.rs"]
mod conservation;
#[path = "modes/controller_queue.rs"]
mod controller_queue;
#[path = "modes/deadlock.rs"]
mod deadlock;
#[path = "modes/deflection.rs"]
mod deflection;
#[path = "modes/dragonfly.rs"]
mod dragonfly;
#[path = "modes/request_reply.rs"]
mod request_reply;
#[path = "modes/throughput.rs"]
mod throughput;
#[path = "modes/timeout.rs"]
mod timeout;
#[path = "modes/turns.rs"]
mod turns;
#[path = "modes/valiant.rs"]
mod valiant;
#[path = "modes/zero_load.rs"]
mod zero_load;
