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

    /// A refusal the ranks of an MPI run agreed on (`engine::transport::agree`): every
    /// rank ends with it, rank 0 alone tells it (with the rank that met it, when that
    /// was not rank 0).
    #[error("{0}")]
    Agreed(String),
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

/// Names among `candidates` close to `name` (a misspelling, another case, the same last
/// segment, a containing name), best first, at most six.
pub fn close_matches<'a>(name: &str, candidates: impl IntoIterator<Item = &'a str>) -> Vec<String> {
    let lower = name.to_ascii_lowercase();
    let last = lower.rsplit('.').next().unwrap_or(&lower).to_string();
    // Ranked: the same last segment first, then near misspellings, then names that
    // merely contain the one given; by edit distance within each.
    let mut scored: Vec<(u8, usize, &str)> = candidates
        .into_iter()
        .filter_map(|c| {
            let cl = c.to_ascii_lowercase();
            let d = distance(&lower, &cl);
            let tier = if cl.rsplit('.').next() == Some(last.as_str()) {
                0
            } else if d <= (lower.len() / 3).max(2) {
                1
            } else if cl.contains(&lower) || (last.len() >= 4 && cl.contains(&last)) {
                2
            } else {
                return None;
            };
            Some((tier, d, c))
        })
        .collect();
    scored.sort();
    scored.dedup_by(|a, b| a.2 == b.2);
    scored
        .into_iter()
        .take(6)
        .map(|(_, _, c)| c.to_string())
        .collect()
}

/// Levenshtein distance.
fn distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            cur[j + 1] = (prev[j] + usize::from(ca != *cb))
                .min(prev[j + 1] + 1)
                .min(cur[j] + 1);
        }
        prev = cur;
    }
    prev[b.len()]
}

/// "unknown X `name`" with the close matches and the valid names.
pub fn unknown(what: &str, name: &str, valid: &[String]) -> Error {
    let close = close_matches(name, valid.iter().map(String::as_str));
    let hint = if close.is_empty() {
        String::new()
    } else {
        format!(" (did you mean {}?)", close.join(", "))
    };
    let mut list = valid.to_vec();
    let more = list.len().saturating_sub(60);
    list.truncate(60);
    let tail = if more > 0 {
        format!(", and {more} more")
    } else {
        String::new()
    };
    Error::Arg(format!(
        "unknown {what} `{name}`{hint}; valid ones: {}{tail}",
        list.join(", ")
    ))
}

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
