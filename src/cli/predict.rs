//! `routemu predict`: the analytical model of a machine and workload, without emulating
//! (paper 000's hold, drop and adaptive circuit-switching models on hypercubes, hold and
//! drop on tori).

use super::output::write_output;
use super::ExperimentArgs;
use crate::config::HwConfig;
use crate::error::{Error, Result};
use crate::model::circuit::{CircuitPrediction, PathForm};
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
pub struct Prediction {
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
    /// What it predicts (cycles, probabilities, per node per cycle); null when saturated.
    pub prediction: Option<CircuitPrediction>,
}

/// The model of `cfg`, or an error saying why there is none.
pub fn model_outcome(cfg: &HwConfig, form: PathForm) -> Result<crate::model::Outcome> {
    crate::model::outcome(cfg, form)?.ok_or_else(|| {
        Error::config(
            "routemu has no wormhole model yet (paper 004's torus model is part of the models \
             issue); the models cover circuit switching",
        )
    })
}

/// The human summary of a prediction.
pub fn describe(p: &CircuitPrediction) -> String {
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
    let (model, outcome) = model_outcome(&cfg, args.path_form)?;
    let mut s = String::new();
    let _ = writeln!(s, "routemu predict: {} — {model}", cfg.name);
    match &outcome {
        Ok(p) => s.push_str(&describe(p)),
        Err(why) => {
            let _ = writeln!(s, "  SATURATED: {why}");
        }
    }
    match args.json.as_deref() {
        Some("-") => eprint!("{s}"),
        _ => print!("{s}"),
    }
    if let Some(dest) = &args.json {
        let doc = Prediction {
            schema: SCHEMA,
            config: cfg,
            model,
            path_form: args.path_form,
            saturated: outcome.is_err(),
            saturation: outcome.as_ref().err().cloned(),
            prediction: outcome.ok(),
        };
        let mut text = serde_json::to_string_pretty(&doc).expect("prediction serialises");
        text.push('\n');
        write_output(dest, &text)?;
    }
    Ok(0)
}
