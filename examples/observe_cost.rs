//! One whole experiment of one of `routemu bench`'s measurements scenarios, with the
//! measurements off or the per-message log alone, for counting its instructions under
//! callgrind (docs/speed.md, "The per-message log's cost"): the bench times the same
//! thing, but wall time on a loaded machine is noise next to the log's few percent.
//!
//! Run: `valgrind --tool=callgrind target/release/examples/observe_cost NAME off|log
//! [SCALE]` after `cargo build --release --example observe_cost`; NAME picks the first
//! scenario whose name contains it (case-insensitive), SCALE is the bench's `--scale`
//! (0.3 unless given). `observe_cost NAME dump FILE [SCALE]` writes the scenario's log
//! to FILE instead, as `routemu run --message-log FILE` would, to check that a change
//! of the log's code leaves its text as it was (`cmp`).

use routemu::bench::{observe_scenarios, time_experiment};
use routemu::experiments::experiment::run_experiment_observed;
use routemu::stats::msglog;
use routemu::topology::Topology;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let usage = "usage: observe_cost NAME off|log [SCALE] | observe_cost NAME dump FILE [SCALE]";
    let dump = match args.get(1).map(String::as_str) {
        Some("dump") if args.len() >= 3 => Some(args.remove(2)),
        _ => None,
    };
    let (name, variant) = match &args[..] {
        [n, v] | [n, v, _] => (n.to_ascii_lowercase(), v.as_str()),
        _ => return Err(usage.into()),
    };
    let scale: f64 = args.get(2).map_or(Ok(0.3), |s| s.parse())?;
    let s = observe_scenarios(scale)?
        .into_iter()
        .find(|s| s.name.to_ascii_lowercase().contains(&name))
        .ok_or_else(|| format!("no measurements scenario's name contains {name:?}"))?;
    let mut cfg = s.cfg.clone();
    cfg.experiment.observe.message_log = match variant {
        "off" => false,
        "log" | "dump" => true,
        _ => return Err(usage.into()),
    };
    if let Some(file) = dump {
        let (_, mut extras) = run_experiment_observed(&cfg, &mut |_, _| {})?;
        let rule = msglog::LatencyRule {
            def: cfg.experiment.latency,
            ejection: cfg.router.ni.ejection_latency,
        };
        let topo = Topology::from_config(&cfg.topology)?;
        let text = msglog::render(&mut extras.messages, &topo, rule);
        std::fs::write(&file, text)?;
        return Ok(());
    }
    let (secs, cycles) = time_experiment(&cfg)?;
    println!("{}: {variant}, {cycles} cycles, {secs:.3} s", s.name);
    Ok(())
}
