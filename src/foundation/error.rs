//! The error type of the library. Every failure that user input can cause is an `Error`
//! with a message a user can act on; nothing that a configuration, a flag or a trace can
//! trigger is allowed to panic.

use thiserror::Error as ThisError;

/// Errors reported to the user.
#[derive(Debug, ThisError)]
pub enum Error {
    /// A configuration file could not be read or parsed; the message names file:line:column.
    #[error("{0}")]
    Parse(String),
    /// A configuration is well-formed but describes an impossible or unsupported machine.
    #[error("invalid configuration: {0}")]
    Config(String),
    /// A command-line argument is malformed.
    #[error("invalid argument: {0}")]
    Arg(String),
    /// An analytical model has no finite answer (saturation, non-convergence) or does not
    /// cover the machine.
    #[error("model: {0}")]
    Model(#[from] ModelError),
    /// A trace is malformed; the message names the file and the line or byte offset.
    #[error("{0}")]
    Trace(String),
    /// A run would exceed a resource limit (memory), or an allocation failed.
    #[error("{0}")]
    Limit(String),
    /// A replay's network deadlocked (messages in flight, nothing moving); the text says
    /// what waits for what. The command line exits with status 3 for it, as `run` does
    /// for a deadlock.
    #[error("{0}")]
    Deadlock(String),
    /// Reading or writing a file failed.
    #[error("{path}: {source}")]
    Io {
        /// The file involved.
        path: String,
        /// The underlying error.
        source: std::io::Error,
    },
    /// Ranks of a distributed run (`engine::distributed`) could not work together: what
    /// one sent another could not be read, or the ranks disagree.
    #[error("distributed run: {0}")]
    Distributed(String),
    /// A signal (SIGINT, SIGTERM) stopped the work before it had anything to report.
    #[error("interrupted before anything could be written")]
    Interrupted,
}

impl Error {
    /// Shorthand for a configuration error.
    pub fn config(msg: impl Into<String>) -> Self {
        Error::Config(msg.into())
    }
}

/// Result alias used throughout routemu.
pub type Result<T, E = Error> = std::result::Result<T, E>;

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

impl std::fmt::Display for ModelError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
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
