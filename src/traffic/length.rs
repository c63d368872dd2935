//! Message length distributions, in flits (every message has at least one flit).

use crate::config::LengthConfig;
use crate::error::{Error, Result};
use crate::rng::{below, exponential, NodeRng};

/// Largest message length accepted, in flits.
pub const MAX_FLITS: u32 = 1 << 24;

/// A checked length distribution.
#[derive(Clone, Debug, PartialEq)]
pub enum LengthDist {
    /// Always `0`.
    Constant(u32),
    /// max(1, round(Exp(mean))).
    Exponential(f64),
    /// Uniform on min..=max.
    Uniform(u32, u32),
}

impl LengthDist {
    /// Checks a configuration: lengths must be at least one flit.
    pub fn new(cfg: &LengthConfig) -> Result<Self> {
        let bad = |what: String| Err(Error::config(format!("workload.length: {what}")));
        match *cfg {
            LengthConfig::Constant { flits } if flits == 0 || flits > MAX_FLITS => bad(format!(
                "{flits} flits: a message has 1 to {MAX_FLITS} flits"
            )),
            LengthConfig::Constant { flits } => Ok(LengthDist::Constant(flits)),
            LengthConfig::Exponential { mean } if !(mean > 0.0 && mean <= MAX_FLITS as f64) => bad(
                format!("exponential mean {mean}: must be positive (and at most {MAX_FLITS})"),
            ),
            LengthConfig::Exponential { mean } => Ok(LengthDist::Exponential(mean)),
            LengthConfig::Uniform { min, max } if min == 0 || min > max || max > MAX_FLITS => bad(
                format!("uniform [{min}, {max}] flits: needs 1 ≤ min ≤ max ≤ {MAX_FLITS}"),
            ),
            LengthConfig::Uniform { min, max } => Ok(LengthDist::Uniform(min, max)),
        }
    }

    /// Draws a length.
    #[inline]
    pub fn sample(&self, rng: &mut NodeRng) -> u32 {
        match *self {
            LengthDist::Constant(l) => l,
            LengthDist::Exponential(mean) => {
                (exponential(rng, 1.0 / mean).round() as u32).clamp(1, MAX_FLITS)
            }
            LengthDist::Uniform(a, b) => a + below(rng, (b - a) as u64 + 1) as u32,
        }
    }

    /// Exact mean of the distribution as sampled (for the exponential, of the rounded
    /// value raised to at least 1: (1 − e^(−μ/2)) + e^(−μ/2)/(1 − e^(−μ)), μ = 1/mean).
    pub fn mean(&self) -> f64 {
        match *self {
            LengthDist::Constant(l) => l as f64,
            LengthDist::Exponential(m) => {
                let mu = 1.0 / m;
                let h = (-mu / 2.0).exp();
                (1.0 - h) + h / (1.0 - (-mu).exp())
            }
            LengthDist::Uniform(a, b) => (a as f64 + b as f64) / 2.0,
        }
    }

    /// Largest possible length (None when unbounded).
    pub fn max(&self) -> Option<u32> {
        match *self {
            LengthDist::Constant(l) => Some(l),
            LengthDist::Exponential(_) => None,
            LengthDist::Uniform(_, b) => Some(b),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::stream;

    #[test]
    fn zero_flit_messages_are_rejected() {
        assert!(LengthDist::new(&LengthConfig::Constant { flits: 0 }).is_err());
        assert!(LengthDist::new(&LengthConfig::Uniform { min: 0, max: 3 }).is_err());
        assert!(LengthDist::new(&LengthConfig::Uniform { min: 4, max: 3 }).is_err());
        assert!(LengthDist::new(&LengthConfig::Exponential { mean: 0.0 }).is_err());
    }

    #[test]
    fn rounded_exponential_mean_matches_samples() {
        for m in [0.7, 3.0, 12.0] {
            let d = LengthDist::new(&LengthConfig::Exponential { mean: m }).unwrap();
            let mut rng = stream(3, 0, 0, 0);
            let n = 400_000;
            let s: u64 = (0..n).map(|_| d.sample(&mut rng) as u64).sum();
            let avg = s as f64 / n as f64;
            assert!(
                (avg - d.mean()).abs() / d.mean() < 0.01,
                "{m}: {avg} vs {}",
                d.mean()
            );
        }
    }
}
