//! The papers' analytical models, as a library: `foundation::mg1` holds the queueing formulas every
//! model is built from (Pollaczek–Khinchine, M/D/1, multi-class M/G/1); [`circuit`] the
//! circuit-switching models of paper 000; [`wormhole_torus`] paper 004's adaptive wormhole
//! model and [`wormhole_torus_dor`] the dimension-order one it is compared with; [`deflection_ms`] paper 003's deflection (WDVC) model of the Manhattan Street
//! network; [`wormhole_timeout`] paper 002's model of wormhole switching with the timeout
//! reset on host/switch networks; [`compare`] sets measured against predicted; [`range`]
//! says, per model and quantity, where the validation measured it close;
//! [`controller_wormhole`] corrects P–K for the routing controller of a wormhole network. A model never
//! loops for ever and never returns NaN as a time: a queue at or past saturation, or a
//! fixed point that does not converge, is a [`ModelError`].

pub mod circuit;
pub mod compare;
pub mod controller_wormhole;
pub mod deflection_ms;
pub mod range;
pub mod wormhole_timeout;
pub mod wormhole_torus;
pub mod wormhole_torus_dor;

use crate::config::{ArrivalProcess, HwConfig, PatternConfig, SwitchingConfig, TopologyConfig};
use circuit::{CircuitPrediction, PathForm};
use deflection_ms::{DeflectionParams, DeflectionPrediction};
use wormhole_timeout::{TimeoutParams, TimeoutPrediction};
use wormhole_torus::{WormholeParams, WormholePrediction};

pub use crate::foundation::error::ModelError;

/// The relative change between two iterates of a fixed-point iteration,
/// |a − b| / max(|a|, |b|) (0 when they are equal): what the models' iterations stop on.
pub(crate) fn rel_change(a: f64, b: f64) -> f64 {
    if a == b {
        0.0
    } else {
        (a - b).abs() / a.abs().max(b.abs())
    }
}

/// A model's prediction.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
#[serde(untagged)]
pub enum Prediction {
    /// Paper 000's circuit-switching models.
    Circuit(CircuitPrediction),
    /// Paper 004's wormhole torus model.
    Wormhole(WormholePrediction),
    /// Paper 003's deflection (WDVC) model of the Manhattan Street network.
    Deflection(DeflectionPrediction),
    /// Paper 002's wormhole-with-timeout model of host/switch networks.
    Timeout(TimeoutPrediction),
}

impl Prediction {
    /// Mean message latency (cycles), for the models that predict one.
    pub fn latency(&self) -> Option<f64> {
        match self {
            Prediction::Circuit(p) => Some(p.latency),
            Prediction::Wormhole(p) => Some(p.latency),
            Prediction::Deflection(_) => None,
            Prediction::Timeout(p) => Some(p.latency),
        }
    }
}

/// Paper 003's model inputs for a deflection machine: the k×k network, m = `router.vcs`,
/// and λ in worms per node per time unit, the time unit being the mean worm length (so
/// λ = `workload.rate` × mean length). The model assumes Poisson creation, uniform
/// destinations and no hop limit; lengths other than exponential are taken by their mean
/// (the model's holding times are exponential).
pub fn deflection_params(cfg: &HwConfig) -> Result<DeflectionParams, ModelError> {
    let bad = |s: &str| Err(ModelError::BadInput(s.into()));
    let SwitchingConfig::Deflection { hop_limit, .. } = cfg.switching else {
        return bad("paper 003's model is for deflection switching");
    };
    let TopologyConfig::ManhattanStreet { k } = cfg.topology else {
        return bad("paper 003's model is for the Manhattan Street network");
    };
    if hop_limit.is_some() {
        return bad(
            "paper 003's model has no hop limit (its Fig. 3b is simulation only): set \
             switching.hop_limit = None to compare with it",
        );
    }
    if cfg.workload.pattern != PatternConfig::Uniform {
        return bad("paper 003's model assumes uniformly random destinations");
    }
    let machine =
        crate::engine::machine::validate(cfg).map_err(|e| ModelError::BadInput(e.to_string()))?;
    let mean = machine.workload.length.mean();
    Ok(DeflectionParams::new(
        k,
        cfg.router.vcs,
        cfg.workload.rate * mean,
    ))
}

/// What the model of a machine says: its name, and its prediction or why the machine is
/// saturated (saturation is an answer, as in a run).
pub type Outcome = (String, Result<Prediction, String>);

/// The model of `cfg` in path form `form`; an error (`BadInput`, with the reason) for a
/// machine no model covers.
pub fn outcome(cfg: &HwConfig, form: PathForm) -> Result<Outcome, ModelError> {
    // Every model's sources are Poisson (Bernoulli is close to it at the models' loads);
    // bursts change the queues' waiting times, which no model here has.
    if matches!(cfg.workload.process, ArrivalProcess::OnOff { .. }) {
        return Err(ModelError::BadInput(
            "the models assume Poisson message creation; workload.process = OnOff is bursty"
                .to_string(),
        ));
    }
    // Replies are created by deliveries and run on their own half of the VCs: no model
    // here has a second message class.
    if cfg.workload.reply.is_some() {
        return Err(ModelError::BadInput(
            "the models have one class of one-way messages; workload.reply adds replies \
             on VCs of their own"
                .to_string(),
        ));
    }
    let (name, result) = match cfg.switching {
        SwitchingConfig::Wormhole {
            routing: crate::config::Routing::DimensionOrder,
            ..
        } => {
            let p = wormhole_torus_dor::params(cfg)?;
            (
                format!(
                    "dimension-order wormhole on the {k}×{k} torus (M/G/1 channels, \
                     distance-weighted)",
                    k = p.k
                ),
                wormhole_torus_dor::predict(&p).map(Prediction::Wormhole),
            )
        }
        SwitchingConfig::Wormhole { .. } => {
            let p = WormholeParams::from_config(cfg)?;
            let name = format!(
                "paper 004 adaptive wormhole on the {k}×{k} torus, {} form",
                match form {
                    PathForm::Average => "average-message",
                    PathForm::Weighted => "distance-weighted",
                },
                k = p.k
            );
            (
                name,
                wormhole_torus::predict(&p, form).map(Prediction::Wormhole),
            )
        }
        SwitchingConfig::Circuit { .. } => (
            circuit::model_name(cfg, form),
            circuit::predict(cfg, form).map(Prediction::Circuit),
        ),
        SwitchingConfig::Timeout { .. } => {
            let mut p = TimeoutParams::from_config(cfg)?;
            let mut name = wormhole_timeout::model_name(&p);
            // Saturated sources run at the maximum throughput: the model's state to set
            // against them is at its own maximum (0.999 of it, where it still answers).
            if matches!(cfg.workload.process, ArrivalProcess::Saturated { .. }) {
                let max = wormhole_timeout::max_throughput(&p)?;
                p = p.at_throughput(0.999 * max);
                name.push_str(", at 0.999 of its maximum throughput (saturated sources)");
            }
            (name, wormhole_timeout::predict(&p).map(Prediction::Timeout))
        }
        SwitchingConfig::Deflection { .. } => {
            let p = deflection_params(cfg)?;
            let name = format!(
                "paper 003 WDVC model on the {k}×{k} Manhattan Street network, m = {m}, λ = {l:.4} per time unit",
                k = p.k,
                m = p.m,
                l = p.lambda
            );
            (name, deflection_ms::predict(&p).map(Prediction::Deflection))
        }
    };
    match result {
        Ok(p) => Ok((name, Ok(p))),
        // Both are answers about this machine and load, not errors of the input.
        Err(e @ (ModelError::Saturated { .. } | ModelError::NotConverged { .. })) => {
            Ok((name, Err(e.to_string())))
        }
        Err(e) => Err(e),
    }
}
