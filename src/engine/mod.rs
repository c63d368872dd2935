//! The cycle kernel. [`machine`] checks a configuration describes a machine that can be
//! built; [`sim`] steps one replication cycle by cycle (message creation, link arrivals,
//! the active routers, in the order [`active`] gives) inside a measurement [`window`];
//! [`wheel`] holds what is in flight on the links; [`partition`] and [`partitioner`]
//! cut the network into partitions that [`parallel`] steps on threads and
//! [`distributed`] on MPI ranks over a [`transport`];
//! [`replication`] and [`run`] run one replication and reduce its partitions' results;
//! [`probe`] gathers the per-message and per-link measurements. Nothing here knows a
//! switching mode (each mode implements [`network::Network`] in `switching/`) or an
//! experiment (warm-up, replications and searches are `experiments/`).

pub mod active;
pub mod distributed;
pub mod interrupt;
pub mod machine;
pub mod network;
pub mod parallel;
pub mod partition;
pub mod partitioner;
pub mod probe;
pub mod replication;
pub mod run;
pub mod sim;
pub mod transport;
pub mod waits;
pub mod wheel;
pub mod window;
