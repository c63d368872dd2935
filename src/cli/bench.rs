//! `routemu bench`: emulation speed on the standard scenarios.

use crate::bench::{run, standard_scenarios};
use clap::Args;

/// `routemu bench` arguments.
#[derive(Debug, Args)]
pub struct BenchArgs {
    /// Multiply every scenario's cycle count (e.g. 0.1 for a quick look).
    #[arg(long, default_value_t = 1.0)]
    pub scale: f64,
    /// Timed repeats per scenario (the best is reported).
    #[arg(long, default_value_t = 3)]
    pub repeats: usize,
}

/// Runs the benchmark and prints a table.
pub fn bench(a: &BenchArgs) -> crate::error::Result<i32> {
    if !(a.scale > 0.0 && a.scale.is_finite()) {
        return Err(crate::error::Error::Arg(
            "--scale must be a positive number".into(),
        ));
    }
    println!(
        "{:<40} {:>7} {:>14} {:>12} {:>16} {:>8}",
        "scenario (single thread)",
        "nodes",
        "Mnode-cyc/s",
        "ns/flit-mv",
        "baseline Mn-c/s",
        "ratio"
    );
    for s in standard_scenarios(a.scale)? {
        let r = run(&s, a.repeats)?;
        println!(
            "{:<40} {:>7} {:>14.2} {:>12.1} {:>16.2} {:>8.2}",
            r.name,
            r.nodes,
            r.node_cycles_per_second / 1e6,
            r.ns_per_flit_move,
            r.baseline_node_cycles_per_second / 1e6,
            r.node_cycles_per_second / r.baseline_node_cycles_per_second
        );
    }
    println!("baseline: the same scenario visiting every router every cycle (no idle skipping)");
    Ok(0)
}
