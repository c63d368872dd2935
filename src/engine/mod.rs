//! The cycle loop and experiment control. [`sim`] steps one replication cycle by cycle:
//! message creation, link arrivals, the active routers; [`experiment`] runs warm-up,
//! measurement window, drain and independent replications and turns them into a report;
//! [`saturation`] searches the largest load a machine sustains, one search per
//! replication; [`wheel`] holds what is in flight on the links. Nothing here knows a switching mode:
//! each mode implements [`network::Network`] in `switching/`.

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
