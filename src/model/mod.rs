//! The papers' analytical models, as a library: [`mg1`] holds the queueing formulas every
//! model is built from (Pollaczek–Khinchine, M/D/1, multi-class M/G/1); [`circuit`] the
//! circuit-switching models of paper 000. A model never
//! loops for ever and never returns NaN as a time: a queue at or past saturation, or a
//! fixed point that does not converge, is a [`ModelError`].

pub mod circuit;
pub mod mg1;

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
