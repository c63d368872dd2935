//! `routemu predict`: the analytical model of a machine and workload, without emulating
//! (today: paper 000's hold and adaptive circuit-switching models on hypercubes).

use super::output::write_output;
use super::RunArgs;
use crate::config::{HwConfig, SwitchingConfig};
use crate::error::{Error, Result};
use crate::model::circuit::{predict as circuit_predict, CircuitPrediction};
use crate::model::ModelError;
use serde::Serialize;
use std::fmt::Write;

/// Schema identifier of `routemu predict --json`.
pub const SCHEMA: &str = "routemu.predict/1";

/// The JSON document of `routemu predict`.
#[derive(Debug, Serialize)]
pub struct Prediction {
    /// Schema identifier.
    pub schema: &'static str,
    /// The effective configuration.
    pub config: HwConfig,
    /// Which model.
    pub model: &'static str,
    /// True when the model says the machine cannot carry the load (then no prediction).
    pub saturated: bool,
    /// What saturated, when it did.
    pub saturation: Option<String>,
    /// What it predicts (cycles, probabilities, per node per cycle); null when saturated.
    pub prediction: Option<CircuitPrediction>,
}

/// Runs `routemu predict`; returns the exit status.
pub fn predict(args: &RunArgs) -> Result<i32> {
    let cfg = args.exp.config()?;
    if let SwitchingConfig::Wormhole { .. } = cfg.switching {
        return Err(Error::config(
            "routemu has no wormhole model yet (paper 004's torus model is part of the models \
             issue); `predict` covers circuit switching on hypercubes",
        ));
    }
    // Saturation is an answer (as in `run`); a machine without a model is an error.
    let (model, outcome) = match circuit_predict(&cfg) {
        Ok((model, p)) => (model, Ok(p)),
        Err(e @ ModelError::Saturated { .. }) => (model_name(&cfg), Err(e.to_string())),
        Err(e) => return Err(e.into()),
    };
    let mut s = String::new();
    let _ = writeln!(s, "routemu predict: {} — {model}", cfg.name);
    match &outcome {
        Ok(p) => {
            let _ = writeln!(
                s,
                "  latency {:.2} cycles = set-up {:.2} (ack included) + data + release {:.2}",
                p.latency, p.setup, p.release
            );
            let [a, b, c] = p.p_conflict_by_phase;
            let _ = writeln!(
                s,
                "  P_conflict {:.4} (holder in set-up {a:.4}, data {b:.4}, release {c:.4}); aborts/message {:.4}; link wait {:.2}",
                p.p_conflict, p.aborts, p.link_wait
            );
            let _ = writeln!(
                s,
                "  routing controller: λ {:.5}/cycle  ρ {:.4}  wait {:.4} (P-K); {} iterations",
                p.controller_rate, p.controller_utilization, p.controller_wait, p.iterations
            );
        }
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

fn model_name(cfg: &HwConfig) -> &'static str {
    match cfg.switching {
        SwitchingConfig::Circuit {
            strategy: crate::config::ConflictStrategy::Adaptive,
            ..
        } => "paper 000 §4.3 / paper 001 adaptive, distance-weighted",
        _ => "paper 000 §4.1 hold, average path",
    }
}
