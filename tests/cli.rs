//! The `routemu` command as a user runs it (most tests start the built binary): bad
//! input and its exit statuses, refusals and limits, the memory estimate behind them,
//! output files and signals, `compare`, `sweep`, `plot` and `predict`, the units of
//! `--load`, the provenance of every JSON document, and the commands the documentation
//! shows.
//!
//! One test binary for these files (tests/cli/*.rs), so that `cargo test` links the crate
//! once for all of them; docs/testing.md lists the binaries.

mod common;

#[path = "cli/bad_input.rs"]
mod bad_input;
#[path = "cli/compare.rs"]
mod compare;
#[path = "cli/deadlock_exits.rs"]
mod deadlock_exits;
#[path = "cli/docs.rs"]
mod docs;
#[path = "cli/limits.rs"]
mod limits;
// Installs the counting allocator for this whole binary; its test measures in a process
// of its own (see the module).
#[path = "cli/memory_estimate.rs"]
mod memory_estimate;
#[path = "cli/outputs.rs"]
mod outputs;
#[path = "cli/plot.rs"]
mod plot;
#[path = "cli/predict.rs"]
mod predict;
#[path = "cli/provenance.rs"]
mod provenance;
#[path = "cli/sweep.rs"]
mod sweep;
#[path = "cli/units.rs"]
mod units;

// Issue 31: silent sources and the load offered, the latency threshold, saturated
// points' reasons.
#[path = "cli/saturation_verdict.rs"]
mod saturation_verdict;
