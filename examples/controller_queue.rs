//! Evidence for the routing controller's queue (issue 14, item 9): the measured mean wait
//! of the controller against the Pollaczek–Khinchine wait of the same nodes' measured
//! rate and service moments and against the correction for chained arrivals
//! (`foundation::mg1::chained_wait`), beside the fraction of arrivals that found the controller
//! busy against ρ, for controller times D = verify = release (link_conn 1) of 1, 10, 50
//! and 100 cycles at three loads on the d = 8 hold preset, and one drop and one adaptive
//! row. Prints a markdown table (docs/fragments/p000-controller.md) on stdout.
//!
//! Run: `cargo run --release --example controller_queue` (under two minutes on one core;
//! `--quick` for a shorter window).

use routemu::config::load::load_hw;
use routemu::config::overrides::apply_overrides;
use routemu::config::Measure;
use routemu::experiments::experiment::run_experiment;
use std::path::Path;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let quick = std::env::args().any(|a| a == "--quick");
    let cycles = if quick { 200_000 } else { 1_000_000 };
    let mut cases: Vec<(&str, u64, f64)> = Vec::new();
    for d in [1, 10, 50, 100] {
        for rate in [0.00005, 0.0001, 0.0002] {
            cases.push(("hw/circuit-hold.ron", d, rate));
        }
    }
    cases.push(("hw/circuit-drop.ron", 50, 0.0001));
    cases.push(("hw/circuit-adaptive.ron", 50, 0.0001));
    println!(
        "| preset | D | λ (/unit) | ρ | P(busy at arrival) | corrected P(busy) | chained f | \
         chained wait | W measured | P-K | error | corrected | error |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    for (hw, d, rate) in cases {
        let base = load_hw(Path::new(hw))?;
        let mut cfg = apply_overrides(
            &base,
            &[
                format!("router.controller.verify={d}"),
                format!("router.controller.release={d}"),
                format!("workload.rate={rate}"),
            ],
        )?;
        cfg.experiment.replications = 3;
        cfg.experiment.warmup = 100_000;
        cfg.experiment.measure = Measure::Cycles(cycles);
        let r = run_experiment(&cfg, &mut |_, _| {})?;
        let k = &r.controller;
        let chained_wait = r
            .circuit()
            .and_then(|c| {
                c.controller_classes
                    .iter()
                    .find(|x| x.class == "setup_chained")
            })
            .map_or("—".into(), |x| format!("{:.1}", x.wait_mean));
        let f = |x: Option<f64>| x.map_or("—".into(), |x| format!("{x:.4}"));
        let w = |x: Option<f64>| x.map_or("—".into(), |x| format!("{x:.3}"));
        let err = |p: Option<f64>| match (p, k.wait_mean) {
            (Some(p), Some(m)) if m > 0.0 => format!("{:+.0}%", 100.0 * (p - m) / m),
            _ => "—".into(),
        };
        let name = Path::new(hw).file_stem().unwrap().to_string_lossy();
        println!(
            "| {name}{} | {d} | {} | {:.4} | {} | {} | {} | {chained_wait} | {} | {} | {} | {} | {} |",
            if r.saturated { " (saturated)" } else { "" },
            rate * 1000.0,
            k.utilization,
            f(k.p_busy_at_arrival),
            f(k.p_busy_corrected),
            f(k.chained_fraction),
            w(k.wait_mean),
            w(k.wait_mg1),
            err(k.wait_mg1),
            w(k.wait_corrected),
            err(k.wait_corrected),
        );
    }
    Ok(())
}
