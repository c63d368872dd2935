//! routemu: a cycle-accurate emulator of the routers of direct interconnection networks.
//!
//! Every node is modelled as hardware — routing controller, (d+1)×(d+1) crossbar, DMA
//! engines, virtual-channel flit buffers — and every link as a register pipeline. The
//! [`engine`] steps them clock cycle by clock cycle; [`stats`] measures latencies, queue
//! delays and throughputs and sets them beside the M/G/1 predictions of the papers.
//!
//! Entry points: [`config::load::load_hw`] reads a hardware description,
//! [`experiments::experiment::run_experiment`] runs warm-up, measurement, replications and drain,
//! and [`stats::report::Report`] is the JSON document the command line writes.

#![warn(missing_docs)]

pub mod bench;
pub mod cli;
pub mod config;
pub mod engine;
pub mod experiments;
pub mod foundation;
pub mod model;
pub mod mpi_semantics;
pub mod presentation;
pub mod router;
pub mod routing;
pub mod stats;
pub mod switching;
pub mod topology;
pub mod trace;
pub mod traffic;

pub use foundation::error::{Error, Result};

#[cfg(test)]
mod layer_rules;
