//! Traces: the readers (text, Netrace, SST-DUMPI) and their hardening against hostile
//! input, MPI collectives as point-to-point schedules, the DUMPI writer and generated
//! traces, and replay (open loop, dependencies, elastic, MPI matching) with its
//! measurements.
//!
//! One test binary for these files (tests/traces/*.rs); docs/testing.md lists the
//! binaries.

mod common;

#[path = "traces/collectives.rs"]
mod collectives;
#[path = "traces/dumpi.rs"]
mod dumpi;
#[path = "traces/dumpi_frame.rs"]
mod dumpi_frame;
#[path = "traces/dumpi_generated.rs"]
mod dumpi_generated;
#[path = "traces/dumpi_replay.rs"]
mod dumpi_replay;
#[path = "traces/replay.rs"]
mod replay;
#[path = "traces/replay_observe.rs"]
mod replay_observe;
#[path = "traces/trace_hardening.rs"]
mod trace_hardening;
#[path = "traces/trace_readers.rs"]
mod trace_readers;
