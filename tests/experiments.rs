//! Experiments and their reports: the window, replications and confidence intervals,
//! determinism and idle skipping, the metrics' meaning, measurements in space and time,
//! and the saturation search.
//!
//! One test binary for these files (tests/experiments/*.rs); docs/testing.md lists the
//! binaries.

mod common;

#[path = "experiments/determinism.rs"]
mod determinism;
#[path = "experiments/experiment.rs"]
mod experiment;
#[path = "experiments/metrics.rs"]
mod metrics;
#[path = "experiments/observe.rs"]
mod observe;
#[path = "experiments/saturation.rs"]
mod saturation;

// Issue 31: one saturation verdict, throughputs of a run saturated in its warm-up,
// patterns' silent sources and bounds.
#[path = "experiments/verdict.rs"]
mod verdict;

// Issue 32 items 1-2: BookSim's traffic patterns, on/off injection, mixed lengths.
#[path = "experiments/patterns.rs"]
mod patterns;
