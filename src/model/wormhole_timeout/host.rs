//! The host queue of paper 002's model (§6, eqs. 16–20): an M/G/1 queue with Bernoulli
//! feedback (a timed-out worm rejoins the tail), reduced by Kleinrock's conservation law to
//! a plain M/G/1 whose service is the geometric sum of i.i.d. tries, then
//! Pollaczek–Khinchine.
//!
//! **routemu:** the retry delay D (`switching.retry_delay`, paper Fig. 10: a constant
//! delay before a timed-out worm rejoins its queue) does not hold the host link, so the
//! work the queue sees and its P–K wait are unchanged (the paper's Fig. 7 argument is
//! about the order of service, not the instant a retry rejoins); each of the E\[tries\] − 1
//! failed tries adds D to the worm's latency.

use crate::foundation::mg1::{pk_wait, Moments};
use crate::model::ModelError;

/// One host's queue.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HostQueue {
    /// P_S of one try (eq. 16).
    pub p_success: f64,
    /// E\[b_N\] (eq. 18): mean total service of a worm.
    pub service: f64,
    /// E\[b_N²\].
    pub service_m2: f64,
    /// ρ_N = γ·E\[b_N\].
    pub utilization: f64,
    /// P–K mean wait (eq. 19), all visits together.
    pub wait: f64,
    /// Mean tries per worm, 1/P_S.
    pub tries: f64,
}

/// Eqs. (18)–(19) for a host with worm arrival rate `gamma`, one try's service moments
/// `try_service` = (b1, b2) and try success probability `p_success`. A host whose
/// ρ_N reaches 1 is saturated (`what` names it).
pub fn host_queue(
    gamma: f64,
    try_service: (f64, f64),
    p_success: f64,
    what: &str,
) -> Result<HostQueue, ModelError> {
    let (b1, b2) = try_service;
    if !(p_success > 0.0 && p_success <= 1.0) {
        return Err(ModelError::Saturated {
            what: format!("{what} (no try succeeds)"),
            utilization: f64::INFINITY,
        });
    }
    let pf = 1.0 - p_success;
    let service = b1 / p_success;
    let service_m2 = b2 / p_success + 2.0 * pf * b1 * b1 / (p_success * p_success);
    let utilization = gamma * service;
    let wait = pk_wait(
        gamma,
        Moments {
            mean: service,
            second: service_m2,
        },
    )
    .map_err(|e| match e {
        ModelError::Saturated { utilization, .. } => ModelError::Saturated {
            what: what.to_string(),
            utilization,
        },
        e => e,
    })?;
    Ok(HostQueue {
        p_success,
        service,
        service_m2,
        utilization,
        wait,
        tries: 1.0 / p_success,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_geometric_sum_of_tries_has_the_moments_of_eq_18() {
        // Tries deterministic 10, P_S = 1/2: N ~ Geometric, E[N] = 2, E[N²] = 6:
        // E[b_N] = 20, E[b_N²] = 100 · 6 = 600.
        let q = host_queue(0.01, (10.0, 100.0), 0.5, "h").unwrap();
        assert!((q.service - 20.0).abs() < 1e-12);
        assert!((q.service_m2 - 600.0).abs() < 1e-9);
        assert!((q.tries - 2.0).abs() < 1e-12);
        // P–K: 0.01 · 600 / (2 · 0.8).
        assert!((q.wait - 6.0 / 1.6).abs() < 1e-12);
        // Without feedback it is the plain M/G/1.
        let q = host_queue(0.01, (10.0, 150.0), 1.0, "h").unwrap();
        assert!(
            (q.wait
                - pk_wait(
                    0.01,
                    Moments {
                        mean: 10.0,
                        second: 150.0
                    }
                )
                .unwrap())
            .abs()
                < 1e-12
        );
        match host_queue(0.06, (10.0, 100.0), 0.5, "host h0") {
            Err(ModelError::Saturated { what, utilization }) => {
                assert_eq!(what, "host h0");
                assert!((utilization - 1.2).abs() < 1e-12);
            }
            other => panic!("{other:?}"),
        }
        assert!(host_queue(0.01, (10.0, 100.0), 0.0, "h").is_err());
    }
}
