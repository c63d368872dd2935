//! `routemu predict`: the analytical model of a machine and workload, without emulating
//! (paper 000's hold, drop and adaptive circuit-switching models on hypercubes, hold and
//! drop on tori; paper 004's adaptive wormhole model on k×k tori; paper 003's deflection
//! model on the Manhattan Street network; paper 002's wormhole-with-timeout model on
//! host/switch networks; the dimension-order wormhole torus model), with, per quantity,
//! whether the point lies in the range where the model was validated
//! ([`crate::model::range`]): a line saying so, or a WARNING per quantity outside, and
//! `prediction.in_range` / `prediction.range` in the JSON. `compare` shares the verdict
//! and its printing ([`assess`], [`describe_range`], [`Assessed`]).

use crate::cli::output::{check_json_output, eprint, print, write_json};
use crate::cli::ExperimentArgs;
use crate::config::HwConfig;
use crate::foundation::error::Result;
use crate::model::circuit::PathForm;
use crate::model::range::{Range, Verdict};
use crate::model::Prediction;
use clap::Args;
use serde::Serialize;
use std::fmt::Write;

/// Schema identifier of `routemu predict --json`.
pub const SCHEMA: &str = "routemu.predict/1";

/// `routemu predict` (and `compare`) arguments.
#[derive(Debug, Args)]
pub struct PredictArgs {
    /// Machine, workload and experiment.
    #[command(flatten)]
    pub exp: ExperimentArgs,
    /// Path-length form of the models: the papers' average path, or weighted by the
    /// distance distribution.
    #[arg(long, value_enum, default_value_t = PathForm::Weighted)]
    pub path_form: PathForm,
    /// Write the JSON document to FILE, or to standard output with `-` (the human summary
    /// then goes to standard error).
    #[arg(long, value_name = "FILE|-")]
    pub json: Option<String>,
}

/// The JSON document of `routemu predict`.
#[derive(Debug, Serialize)]
pub struct PredictionDoc {
    /// Schema identifier.
    pub schema: &'static str,
    /// The effective configuration.
    pub config: HwConfig,
    /// Which model.
    pub model: String,
    /// The path-length form.
    pub path_form: PathForm,
    /// True when the model says the machine cannot carry the load (then no prediction).
    pub saturated: bool,
    /// What saturated, when it did.
    pub saturation: Option<String>,
    /// What it predicts (cycles, probabilities, per node per cycle; no values when
    /// saturated), and whether this point lies where the model was validated.
    pub prediction: Assessed,
}

/// A prediction with its range verdict: the `prediction` object of `predict --json` and
/// `compare --json`.
#[derive(Debug, Serialize)]
pub struct Assessed {
    /// The model's values (absent when it saturated).
    #[serde(flatten)]
    pub values: Option<Prediction>,
    /// True when every quantity with a validated range is inside it (false when the model
    /// saturated).
    pub in_range: bool,
    /// Per quantity: `{in_range, bound, here, why}` (`model::range`).
    pub range: std::collections::BTreeMap<&'static str, Verdict>,
}

impl Assessed {
    /// The model's answer and its verdict.
    pub fn new(values: Option<Prediction>, range: Range) -> Self {
        Assessed {
            values,
            in_range: range.in_range,
            range: range.range,
        }
    }
}

/// The range verdict of `cfg`'s model answer `outcome` (model::range::assess).
pub fn assess(cfg: &HwConfig, form: PathForm, outcome: &Result<Prediction, String>) -> Range {
    crate::model::range::assess(cfg, form, outcome.as_ref().map_err(|e| e.as_str()))
}

/// The human lines of a range verdict: one line naming the quantities inside their
/// validated range, then a WARNING line per quantity outside one, with its bound, the
/// values here and where the range comes from.
pub fn describe_range(r: &Range) -> String {
    let mut s = String::new();
    let outside = r.outside();
    let inside: Vec<&str> = r
        .range
        .iter()
        .filter(|(_, v)| v.in_range)
        .map(|(k, _)| *k)
        .collect();
    if !inside.is_empty() {
        let _ = writeln!(
            s,
            "  inside the validated range ({}); `--json` has the bounds (prediction.range)",
            inside.join(", ")
        );
    }
    for k in outside {
        let v = &r.range[k];
        let _ = writeln!(
            s,
            "  WARNING: {k} is OUTSIDE the range where the model was validated: needs {}; here {}\n    ({})",
            v.bound.as_deref().unwrap_or("—"),
            v.here,
            v.why
        );
    }
    s
}

/// The model of `cfg`, or an error saying why there is none.
pub fn model_outcome(cfg: &HwConfig, form: PathForm) -> Result<crate::model::Outcome> {
    Ok(crate::model::outcome(cfg, form)?)
}

/// The human summary of a prediction.
pub fn describe(p: &Prediction) -> String {
    let p = match p {
        Prediction::Circuit(c) => c,
        Prediction::Deflection(d) => {
            return format!(
                "  η {:.4} (D {:.4} links over D(0) {:.4}); deflection p {:.4}; preemption E {:.4} (ε {:.4}); blocking B {:.4}; b {:.4}\n  \
                 lanes busy {:.4}; θ {:.4}; {} node states; {} iterations\n",
                d.eta,
                d.mean_path,
                d.mean_path_zero_load,
                d.p_deflect,
                d.p_preempt,
                d.epsilon,
                d.p_block,
                d.b,
                d.lane_utilization,
                d.theta,
                d.states,
                d.iterations
            )
        }
        Prediction::Timeout(t) => {
            let c = |x: &crate::switching::report::ClassSplit<f64>| {
                format!("ss {:.4} sh {:.4}", x.ss, x.sh)
            };
            return format!(
                "  latency {:.2} cycles = host queue {:.2} + service {:.2} (E[b_N]) + propagation {:.2}{}; zero-load {:.2}\n  \
                 throughput {:.4} flits/host/cycle (maximum {:.4}); tries per worm {:.4}; try on the host link {:.2} cycles, P success {:.4}; ρ_N {:.4}\n  \
                 P_timeout {}; λ per link {}; λb̄ {}; found free {}; wait {}; {} iterations{}\n",
                t.latency,
                t.host_wait,
                t.host_service,
                t.propagation,
                if t.retry_delay > 0.0 {
                    format!(" + retry delays {:.2}", (t.tries - 1.0) * t.retry_delay)
                } else {
                    String::new()
                },
                t.zero_load,
                t.throughput,
                t.max_throughput,
                t.tries,
                t.try_service,
                t.p_try_success,
                t.host_utilization,
                c(&t.p_timeout_by_class),
                c(&t.arrival_rate),
                c(&t.utilization),
                c(&t.p_free),
                c(&t.wait_mean),
                t.iterations,
                if t.clamped_links > 0 {
                    format!(" ({} links' P_T below 0 taken as 0)", t.clamped_links)
                } else {
                    String::new()
                }
            );
        }
        Prediction::Wormhole(w) => {
            return format!(
                "  latency {:.2} cycles (zero-load {:.2} over {:.3} hops); blocking per hop {:.3}\n  \
                 channels busy: p_X {:.4} p_Y {:.4}; waits WE {:.3} NE {:.3} NS {:.3} WS {:.3}; {} iterations\n{}",
                w.latency,
                w.zero_load,
                w.hops,
                w.blocking_per_hop,
                w.p_x,
                w.p_y,
                w.waits[0],
                w.waits[1],
                w.waits[2],
                w.waits[3],
                w.iterations,
                if w.source_wait > 0.0 || w.ejection_wait > 0.0 {
                    format!(
                        "  DMA engines: source queue wait {:.3}, ejection wait {:.3} (included)\n",
                        w.source_wait, w.ejection_wait
                    )
                } else {
                    String::new()
                }
            )
        }
    };
    let mut s = String::new();
    let _ = writeln!(
        s,
        "  latency {:.2} cycles = set-up {:.2} (ack included) + data + release {:.2}",
        p.latency, p.setup, p.release
    );
    let [a, b, c] = p.p_conflict_by_phase;
    let _ = writeln!(
        s,
        "  P_conflict {:.4} (first conflicts: holder in set-up {a:.4}, data {b:.4}, release \
         {c:.4}; further {:.4}); aborts/message {:.4}; link wait {:.2}",
        p.p_conflict, p.p_further, p.aborts, p.link_wait
    );
    let _ = writeln!(
        s,
        "  routing controller: λ {:.5}/cycle  ρ {:.4}  wait {:.4} (P-K); {} iterations",
        p.controller_rate, p.controller_utilization, p.controller_wait, p.iterations
    );
    s
}

/// Runs `routemu predict`; returns the exit status.
pub fn predict(args: &PredictArgs) -> Result<i32> {
    let cfg = args.exp.config()?;
    check_json_output(args.json.as_deref())?;
    // The same checks as an emulation (the rate at most traffic::MAX_RATE, ...): a
    // model fed an impossible workload answers with impossible numbers.
    crate::engine::machine::validate(&cfg)?;
    let (model, outcome) = model_outcome(&cfg, args.path_form)?;
    let mut s = String::new();
    let _ = writeln!(s, "routemu predict: {} — {model}", cfg.name);
    match &outcome {
        Ok(p) => s.push_str(&describe(p)),
        Err(why) => {
            let _ = writeln!(s, "  SATURATED: {why}");
        }
    }
    let range = assess(&cfg, args.path_form, &outcome);
    s.push_str(&describe_range(&range));
    if let Some(dest) = &args.json {
        let doc = PredictionDoc {
            schema: SCHEMA,
            config: cfg,
            model,
            path_form: args.path_form,
            saturated: outcome.is_err(),
            saturation: outcome.as_ref().err().cloned(),
            prediction: Assessed::new(outcome.ok(), range),
        };
        write_json(dest, &doc)?;
    }
    // The file before the summary: a failing standard output does not lose it.
    match args.json.as_deref() {
        Some("-") => eprint(&s),
        _ => print(&s)?,
    }
    Ok(0)
}
