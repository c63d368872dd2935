//! The papers' analytical models, as a library: [`mg1`] holds the queueing formulas every
//! model is built from (Pollaczek–Khinchine, M/D/1, multi-class M/G/1); [`circuit`] the
//! circuit-switching models of paper 000; [`compare`] sets measured against predicted. A
//! model never
//! loops for ever and never returns NaN as a time: a queue at or past saturation, or a
//! fixed point that does not converge, is a [`ModelError`].

pub mod circuit;
pub mod compare;
pub mod mg1;

use crate::config::{HwConfig, SwitchingConfig};
use circuit::{CircuitPrediction, PathForm};

use std::fmt;

/// Why a model has no finite answer.
#[derive(Clone, Debug, PartialEq)]
pub enum ModelError {
    /// A queue's utilisation reached 1: waits grow without bound.
    Saturated {
        /// What saturated.
        what: String,
        /// Its utilisation.
        utilization: f64,
    },
    /// An input is negative, NaN or infinite, or the machine is not one the model covers.
    BadInput(String),
    /// A fixed point did not settle within the iteration limit.
    NotConverged {
        /// Iterations done.
        iterations: usize,
    },
}

impl fmt::Display for ModelError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ModelError::Saturated { what, utilization } => {
                write!(f, "{what} is saturated (utilisation {utilization:.4} ≥ 1)")
            }
            ModelError::BadInput(s) => write!(f, "bad model input: {s}"),
            ModelError::NotConverged { iterations } => {
                write!(f, "the model did not converge in {iterations} iterations")
            }
        }
    }
}

impl std::error::Error for ModelError {}

/// What the model of a machine says: its name, and its prediction or why the machine is
/// saturated (saturation is an answer, as in a run).
pub type Outcome = (String, Result<CircuitPrediction, String>);

/// The model of `cfg` in path form `form`; None for a machine no model covers yet
/// (wormhole); an error for a circuit machine outside the models.
pub fn outcome(cfg: &HwConfig, form: PathForm) -> Result<Option<Outcome>, ModelError> {
    if let SwitchingConfig::Wormhole { .. } = cfg.switching {
        return Ok(None);
    }
    let name = circuit::model_name(cfg, form);
    match circuit::predict(cfg, form) {
        Ok(p) => Ok(Some((name, Ok(p)))),
        Err(e @ ModelError::Saturated { .. }) => Ok(Some((name, Err(e.to_string())))),
        Err(e) => Err(e),
    }
}
