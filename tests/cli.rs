//! The `routemu` command as a user runs it (most tests start the built binary): bad
//! input and its exit statuses, refusals and limits, the memory estimate behind them,
//! output files and signals, `compare`, `sweep`, `plot` and `predict`, the units of
//! `--load`, the models' validated ranges, the figures (and the README tour's), the
//! provenance of every JSON document, the commands the documentation
//! shows and the outputs it quotes.
//!
//! One test binary for these files (tests/cli/*.rs), so that `cargo test` links the crate
//! once for all of them; docs/testing.md lists the binaries.

mod common;

#[path = "cli/bad_input.rs"]
mod bad_input;
#[path = "cli/bench_compare.rs"]
mod bench_compare;
#[path = "cli/compare.rs"]
mod compare;
#[path = "cli/deadlock_exits.rs"]
mod deadlock_exits;
#[path = "cli/doc_examples.rs"]
mod doc_examples;
#[path = "cli/docs.rs"]
mod docs;
#[path = "cli/figures.rs"]
mod figures;
#[path = "cli/limits.rs"]
mod limits;
#[path = "cli/link_kinds.rs"]
mod link_kinds;
// Installs the counting allocator for this whole binary; its test measures in a process
// of its own (see the module).
#[path = "cli/memory_estimate.rs"]
mod memory_estimate;
#[path = "cli/model_ranges.rs"]
mod model_ranges;
#[path = "cli/outputs.rs"]
mod outputs;
#[path = "cli/plot.rs"]
mod plot;
#[path = "cli/predict.rs"]
mod predict;
#[path = "cli/provenance.rs"]
mod provenance;
#[path = "cli/saturation_verdict.rs"]
mod saturation_verdict;
#[path = "cli/sweep.rs"]
mod sweep;
#[path = "cli/units.rs"]
mod units;
