//! Experiments: what the command line asks of a machine, composed from the engine and a
//! switching mode — replications with their report, sweeps, the saturation search,
//! trace replay — and the memory a run needs.

pub mod experiment;
pub mod memory;
pub mod replay;
pub mod saturation;
pub mod sweep;
pub mod timing;
pub mod traces;
pub mod verdict;
