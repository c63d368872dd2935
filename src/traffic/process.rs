//! Arrival processes of message creation at a node.
//!
//! Poisson: the node keeps its next arrival instant as a real number; a message is
//! created in the cycle that instant falls in (⌊t⌋), so several messages can share a cycle
//! and the long-run rate is exactly `rate`. Bernoulli: each cycle independently creates
//! one message with probability `rate`. Saturated: no instants at all; the engine tops
//! every source's memory queue up to its depth each cycle (`engine::sim`).

use crate::config::ArrivalProcess;
use crate::foundation::error::{Error, Result};
use crate::foundation::rng::{exponential, unit_open0, NodeRng};

/// A checked arrival process.
#[derive(Clone, Debug, PartialEq)]
pub struct Arrivals {
    /// Which process.
    pub process: ArrivalProcess,
    /// Messages per node per cycle.
    pub rate: f64,
}

impl Arrivals {
    /// Checks the rate against the process.
    pub fn new(process: ArrivalProcess, rate: f64) -> Result<Self> {
        if process == ArrivalProcess::Bernoulli && rate > 1.0 {
            return Err(Error::config(format!(
                "workload.rate = {rate}: a Bernoulli process creates at most one message per cycle"
            )));
        }
        Ok(Arrivals { process, rate })
    }

    /// The instant of the next arrival after the one at `t` (the first one: `t` = 0 for
    /// Poisson, −1 for Bernoulli, whose instants are whole cycles).
    #[inline]
    pub fn next_after(&self, t: f64, rng: &mut NodeRng) -> f64 {
        match self.process {
            ArrivalProcess::Poisson => t + exponential(rng, self.rate),
            ArrivalProcess::Bernoulli => {
                // Geometric number of cycles ≥ 1 until the next success.
                let g = if self.rate >= 1.0 {
                    1.0
                } else {
                    (unit_open0(rng).ln() / (1.0 - self.rate).ln())
                        .ceil()
                        .max(1.0)
                };
                t + g
            }
            ArrivalProcess::Saturated { .. } => f64::INFINITY,
        }
    }

    /// Where the first arrival is measured from.
    pub fn origin(&self) -> f64 {
        match self.process {
            ArrivalProcess::Poisson | ArrivalProcess::Saturated { .. } => 0.0,
            ArrivalProcess::Bernoulli => -1.0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::foundation::rng::stream;

    #[test]
    fn both_processes_have_the_configured_rate() {
        for process in [ArrivalProcess::Poisson, ArrivalProcess::Bernoulli] {
            let a = Arrivals::new(process, 0.05).unwrap();
            let mut rng = stream(9, 0, 0, 0);
            let mut t = a.origin();
            let mut n = 0;
            while t < 2_000_000.0 {
                t = a.next_after(t, &mut rng);
                n += 1;
            }
            let rate = n as f64 / 2_000_000.0;
            assert!((rate - 0.05).abs() < 0.001, "{process:?}: {rate}");
        }
    }

    #[test]
    fn bernoulli_rate_above_one_is_rejected() {
        assert!(Arrivals::new(ArrivalProcess::Bernoulli, 1.5).is_err());
    }
}
