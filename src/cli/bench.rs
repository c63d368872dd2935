//! `routemu bench`: emulation speed on fixed scenarios, in node-cycles per second.
//! Placeholder until the scenarios are written.

use clap::Args;

/// `routemu bench` arguments.
#[derive(Debug, Args)]
pub struct BenchArgs {}

/// Runs the benchmark.
pub fn bench(_a: &BenchArgs) -> crate::error::Result<i32> {
    Ok(0)
}
