//! `routemu run`: emulate, print the summary, write the JSON report.

use super::output::write_json;
use super::{RunArgs, EXIT_DEADLOCK};
use crate::config::{HwConfig, Measure};
use crate::engine::experiment::run_experiment;
use crate::error::Result;
use crate::stats::report::Report;
use indicatif::{ProgressBar, ProgressStyle};
use std::io::IsTerminal;

/// Emulates `cfg` with a progress bar on a terminal.
pub fn emulate(cfg: &HwConfig) -> Result<Report> {
    let e = &cfg.experiment;
    let planned = e.warmup
        + match e.measure {
            Measure::Cycles(c) => c,
            Measure::Messages(m) => (m as f64 / (cfg.workload.rate.max(1e-12) * 1.0)) as u64,
        };
    let bar = if std::io::stderr().is_terminal() {
        let b = ProgressBar::new(planned.saturating_mul(e.replications as u64));
        b.set_style(
            ProgressStyle::with_template(
                "{spinner} replication {msg} [{bar:40}] {percent}% {elapsed} ETA {eta}",
            )
            .expect("valid template")
            .progress_chars("=> "),
        );
        Some(b)
    } else {
        None
    };
    let reps = e.replications;
    let report = run_experiment(cfg, &mut |rep, t| {
        if let Some(b) = &bar {
            b.set_message(format!("{}/{}", rep + 1, reps));
            b.set_position(rep as u64 * planned + t.min(planned));
        }
    })?;
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    Ok(report)
}

/// Runs `routemu run`; returns the exit status.
pub fn run(args: &RunArgs) -> Result<i32> {
    let cfg = args.exp.config()?;
    let report = emulate(&cfg)?;
    let summary = report.summary();
    match args.json.as_deref() {
        Some("-") => eprint!("{summary}"),
        _ => print!("{summary}"),
    }
    if let Some(dest) = &args.json {
        write_json(dest, &report)?;
    }
    Ok(if report.deadlock.is_some() {
        EXIT_DEADLOCK
    } else {
        0
    })
}
