//! Arrival processes of message creation at a node.
//!
//! Poisson: the node keeps its next arrival instant as a real number; a message is
//! created in the cycle that instant falls in (⌊t⌋), so several messages can share a cycle
//! and the long-run rate is exactly `rate`. Bernoulli: each cycle independently creates
//! one message with probability `rate`. Saturated: no instants at all; the engine tops
//! every source's memory queue up to its depth each cycle (`engine::sim`).
//!
//! On/off (BookSim's `on_off`): a two-state Markov chain stepped once a cycle (first the
//! state moves, then an active source creates a message with probability r₁). A message
//! is only ever created in the on state, so the gaps between messages are independent
//! and identically distributed: the next instant is drawn from the on state by
//! geometric jumps (no draw per idle cycle). The first one starts from the stationary
//! state instead (on with probability α/(α + β)), so sources are not synchronised.

use crate::config::ArrivalProcess;
use crate::foundation::error::{Error, Result};
use crate::foundation::rng::{exponential, unit, unit_open0, NodeRng};

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
        if let ArrivalProcess::OnOff {
            burst_mean,
            idle_mean,
        } = process
        {
            for (name, v) in [("burst_mean", burst_mean), ("idle_mean", idle_mean)] {
                if !(v >= 1.0 && v.is_finite()) {
                    return Err(Error::config(format!(
                        "workload.process.{name} = {}: the mean length of a period is a \
                         finite number of cycles, at least 1",
                        crate::foundation::limits::show(v)
                    )));
                }
            }
            let on = burst_mean / (burst_mean + idle_mean);
            if rate > on * (1.0 + 1e-12) {
                return Err(Error::config(format!(
                    "workload.rate = {rate}: an on/off source creates at most one message per \
                     cycle while on, on a fraction {on:.6} of the cycles (burst_mean / \
                     (burst_mean + idle_mean)); use a rate at most that"
                )));
            }
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
            ArrivalProcess::OnOff {
                burst_mean,
                idle_mean,
            } => {
                let (alpha, beta) = (1.0 / idle_mean, 1.0 / burst_mean);
                let r1 = (self.rate * (alpha + beta) / alpha).min(1.0);
                // After a message the source is on; before the first, stationary.
                let mut on = t >= 0.0 || unit(rng) < alpha / (alpha + beta);
                let mut c = t;
                loop {
                    if on {
                        // Each on cycle: off with β, else a message with r₁.
                        let make = (1.0 - beta) * r1;
                        let event = beta + make;
                        c += geometric(event, rng);
                        if unit(rng) * event < make {
                            return c;
                        }
                        on = false;
                    } else {
                        // Each off cycle: on with α, and in that cycle a message with r₁.
                        c += geometric(alpha, rng);
                        if unit(rng) < r1 {
                            return c;
                        }
                        on = true;
                    }
                }
            }
        }
    }

    /// Where the first arrival is measured from.
    pub fn origin(&self) -> f64 {
        match self.process {
            ArrivalProcess::Poisson | ArrivalProcess::Saturated { .. } => 0.0,
            ArrivalProcess::Bernoulli | ArrivalProcess::OnOff { .. } => -1.0,
        }
    }
}

/// Cycles ≥ 1 until the first success of independent trials with probability `p`.
fn geometric(p: f64, rng: &mut NodeRng) -> f64 {
    if p >= 1.0 {
        1.0
    } else {
        (unit_open0(rng).ln() / (1.0 - p).ln()).ceil().max(1.0)
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

    /// Messages created in each window of `w` cycles over `cycles` cycles.
    fn counts(a: &Arrivals, seed: u64, cycles: f64, w: f64) -> Vec<f64> {
        let mut rng = stream(seed, 0, 0, 0);
        let mut out = vec![0.0; (cycles / w) as usize];
        let mut t = a.next_after(a.origin(), &mut rng);
        while t < cycles {
            out[(t / w) as usize] += 1.0;
            t = a.next_after(t, &mut rng);
        }
        out
    }

    fn mean_var(x: &[f64]) -> (f64, f64) {
        let m = x.iter().sum::<f64>() / x.len() as f64;
        (
            m,
            x.iter().map(|v| (v - m).powi(2)).sum::<f64>() / x.len() as f64,
        )
    }

    #[test]
    fn on_off_keeps_the_configured_rate_and_is_burstier_than_poisson() {
        let on_off = ArrivalProcess::OnOff {
            burst_mean: 20.0,
            idle_mean: 80.0,
        };
        let rate = 0.1;
        let (w, cycles) = (100.0, 2_000_000.0);
        let (m, v) = mean_var(&counts(
            &Arrivals::new(on_off, rate).unwrap(),
            11,
            cycles,
            w,
        ));
        let (pm, pv) = mean_var(&counts(
            &Arrivals::new(ArrivalProcess::Poisson, rate).unwrap(),
            11,
            cycles,
            w,
        ));
        // The rate: 10 messages per window, ± a few standard errors of the mean of 20 000
        // windows (√(v/20 000) ≈ 0.05 here).
        assert!((m / w - rate).abs() < 0.002, "on/off rate {}", m / w);
        assert!((pm / w - rate).abs() < 0.002, "Poisson rate {}", pm / w);
        // Poisson's variance equals its mean; bursts of ~20 cycles at rate 0.5 and idle
        // spells of ~80 give several times more.
        assert!((pv / pm - 1.0).abs() < 0.1, "Poisson index {}", pv / pm);
        assert!(v > 3.0 * pv, "on/off variance {v} against Poisson's {pv}");
    }

    #[test]
    fn on_off_refuses_a_rate_its_bursts_cannot_carry() {
        let p = ArrivalProcess::OnOff {
            burst_mean: 10.0,
            idle_mean: 30.0,
        };
        assert!(Arrivals::new(p, 0.25).is_ok());
        assert!(Arrivals::new(p, 0.26).is_err());
        let short = ArrivalProcess::OnOff {
            burst_mean: 0.5,
            idle_mean: 30.0,
        };
        assert!(Arrivals::new(short, 0.01).is_err());
    }

    #[test]
    fn bernoulli_rate_above_one_is_rejected() {
        assert!(Arrivals::new(ArrivalProcess::Bernoulli, 1.5).is_err());
    }
}
