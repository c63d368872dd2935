//! `routemu bench`: emulation speed on the standard scenarios.

use crate::bench::{circuit_scenarios, run, standard_scenarios};
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
        "{:<58} {:>6} {:>12} {:>9} {:>14} {:>16} {:>8}",
        "scenario (single thread)",
        "nodes",
        "Mnode-cyc/s",
        "seconds",
        "ns/unit",
        "baseline Mn-c/s",
        "ratio"
    );
    let mut circuit_secs = Vec::new();
    let scenarios = standard_scenarios(a.scale)?
        .into_iter()
        .chain(circuit_scenarios(a.scale)?);
    for s in scenarios {
        let r = run(&s, a.repeats)?;
        if r.unit == "message" {
            circuit_secs.push(r.seconds);
        }
        println!(
            "{:<58} {:>6} {:>12.2} {:>9.3} {:>14} {:>16.2} {:>8.2}",
            r.name,
            r.nodes,
            r.node_cycles_per_second / 1e6,
            r.seconds,
            format!("{:.1}/{}", r.ns_per_unit, r.unit),
            r.baseline_node_cycles_per_second / 1e6,
            r.node_cycles_per_second / r.baseline_node_cycles_per_second
        );
    }
    println!("baseline: the same scenario visiting every router every cycle (no idle skipping)");
    if let [short, long] = circuit_secs[..] {
        println!(
            "circuit: twice the data length at the same link utilisation takes {:.2}× the time",
            long / short
        );
    }
    Ok(0)
}
