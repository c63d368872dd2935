//! `routemu compare`: emulate and predict the same machine, one table of measured
//! against predicted with the relative errors (and the JSON document with both).

use crate::cli::output::{check_json_output, eprint, print, write_json};
use crate::cli::predict::{assess, describe_range, model_outcome, Assessed, PredictArgs};
use crate::cli::run::emulate;
use crate::cli::EXIT_DEADLOCK;
use crate::foundation::error::Result;
use crate::model::circuit::{CircuitParams, PathForm};
use crate::model::compare::{rows, table, Row};
use crate::stats::report::Report;
use serde::Serialize;
use std::fmt::Write;

/// Schema identifier of `routemu compare --json`.
pub const SCHEMA: &str = "routemu.compare/1";

/// The JSON document of `routemu compare`.
#[derive(Debug, Serialize)]
pub struct Comparison {
    /// Schema identifier.
    pub schema: &'static str,
    /// Which model.
    pub model: String,
    /// The path-length form.
    pub path_form: PathForm,
    /// Why the model saturated, when it did (then it predicts nothing).
    pub model_saturated: Option<String>,
    /// Measured against predicted.
    pub rows: Vec<Row>,
    /// The model's prediction (no values when it saturated) with `in_range` and `range`,
    /// as `predict --json` writes it.
    pub prediction: Assessed,
    /// The emulation's full report (schema routemu.run/1).
    pub report: Report,
}

/// Runs `routemu compare`; returns the exit status (as `run`'s).
pub fn compare(args: &PredictArgs) -> Result<i32> {
    let cfg = args.exp.config()?;
    check_json_output(args.json.as_deref())?;
    // A machine without a model is refused before the emulation, not after.
    let (model, outcome) = model_outcome(&cfg, args.path_form)?;
    let report = emulate(&cfg)?;
    let mean_path = CircuitParams::from_config(&cfg).map_or(0.0, |p| p.mean_path);
    let range = assess(&cfg, args.path_form, &outcome);
    let mut rows = rows(&report, outcome.as_ref().ok(), mean_path);
    crate::model::compare::mark_ranges(&mut rows, &range);
    let mut s = String::new();
    let _ = writeln!(s, "routemu compare: {} — {model}", cfg.name);
    let e = &cfg.experiment;
    let _ = writeln!(
        s,
        "  emulated: {} replication(s), seed {}, {} thread(s); rate {} messages/node/cycle",
        e.replications, e.seed, report.threads, cfg.workload.rate
    );
    if report.saturated {
        let _ = writeln!(
            s,
            "  the EMULATED network saturated: its measurements are of what it accepted"
        );
    }
    if let Some(d) = &report.deadlock {
        let _ = writeln!(s, "  the emulation DEADLOCKED at cycle {}", d.cycle);
    }
    if let Err(why) = &outcome {
        let _ = writeln!(s, "  the MODEL says the machine is saturated: {why}");
    }
    s.push_str(&table(&rows));
    s.push_str(&describe_range(&range));
    let code = if report.deadlock.is_some() {
        EXIT_DEADLOCK
    } else {
        0
    };
    if let Some(dest) = &args.json {
        let doc = Comparison {
            schema: SCHEMA,
            model,
            path_form: args.path_form,
            model_saturated: outcome.as_ref().err().cloned(),
            rows,
            prediction: Assessed::new(outcome.ok(), range),
            report,
        };
        write_json(dest, &doc)?;
    }
    // The file before the summary: a failing standard output does not lose it.
    match args.json.as_deref() {
        Some("-") => eprint(&s),
        _ => print(&s)?,
    }
    Ok(code)
}
