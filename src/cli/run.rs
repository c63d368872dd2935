//! `routemu run`: emulate, print the summary, write the JSON report.

use crate::cli::observe::ObserveArgs;
use crate::cli::output::{eprint, print, write_json};
use crate::cli::{RunArgs, EXIT_DEADLOCK};
use crate::config::{HwConfig, Measure};
use crate::experiments::experiment::{run_experiment_observed, Extras};
use crate::foundation::error::Result;
use crate::stats::report::Report;
use indicatif::{ProgressBar, ProgressStyle};

/// Emulates `cfg` with a progress bar on a terminal.
pub fn emulate(cfg: &HwConfig) -> Result<Report> {
    emulate_observed(cfg).map(|(r, _)| r)
}

/// As [`emulate`], with the measurements for files (`experiment.observe`).
pub fn emulate_observed(cfg: &HwConfig) -> Result<(Report, Extras)> {
    let e = &cfg.experiment;
    crate::cli::warn_oversubscribed(cfg, e.jobs.min(e.replications) as usize);
    // Saturating: the bar is a guess, and must never be what fails a run (validation
    // bounds the run's own cycle arithmetic).
    let planned = e.warmup.saturating_add(match e.measure {
        Measure::Cycles(c) => c,
        Measure::Messages(m) => (m as f64 / cfg.workload.rate.max(1e-12)) as u64,
    });
    let bar = if crate::cli::output::progress_wanted() {
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
    let report = run_experiment_observed(cfg, &mut |rep, t| {
        if let Some(b) = &bar {
            b.set_message(format!("{}/{}", rep + 1, reps));
            b.set_position(
                (rep as u64)
                    .saturating_mul(planned)
                    .saturating_add(t.min(planned)),
            );
        }
    })?;
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    Ok(report)
}

/// Runs `routemu run`; returns the exit status.
pub fn run(args: &RunArgs) -> Result<i32> {
    let mut cfg = args.exp.config()?;
    args.observe.apply(&mut cfg)?;
    let topo = crate::engine::machine::validate(&cfg)?.topology;
    args.observe.check(args.json.as_deref(), &topo)?;
    let (report, mut extras) = emulate_observed(&cfg)?;
    // Every file is rendered before any is written.
    let mut files = args.observe.render(&cfg, &topo, &report, &mut extras)?;
    // The files before the summary: a failing standard output loses none of them.
    if let Some(dest) = &args.json {
        write_json(dest, &report)?;
    }
    ObserveArgs::write(&mut files)?;
    let summary = report.summary();
    if args.json.as_deref() == Some("-") || args.observe.uses_stdout() {
        eprint(&summary);
    } else {
        print(&summary)?;
    }
    Ok(if report.deadlock.is_some() {
        EXIT_DEADLOCK
    } else {
        0
    })
}
