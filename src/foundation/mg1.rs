//! M/G/1 queueing formulas: the Pollaczek–Khinchine mean wait, its deterministic (M/D/1)
//! and exponential (M/M/1) cases, the multi-class M/G/1 wait of paper 004 eq. 18, and the
//! moments of a service time that is one of a few deterministic activities (the routing
//! controller of paper 000 Appendix A), and the state probabilities of the M/M/1 queue
//! with a finite population (paper 002 Fig. 13: at most N heads can ask for one switch
//! output), and the wait of a queue in which some arrivals are *chained* to an earlier
//! one (the routing controller under hold, see [`chained_wait`]). Waits are queueing
//! only, not service; times in any one unit (routemu uses cycles).

use crate::foundation::error::ModelError;

/// First and second moments of a service time.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Moments {
    /// E\[S\].
    pub mean: f64,
    /// E\[S²\].
    pub second: f64,
}

impl Moments {
    /// A deterministic service time `d`.
    pub fn deterministic(d: f64) -> Self {
        Moments {
            mean: d,
            second: d * d,
        }
    }

    /// An exponential service time with mean `m`.
    pub fn exponential(m: f64) -> Self {
        Moments {
            mean: m,
            second: 2.0 * m * m,
        }
    }

    /// A service that takes time `d_i` with probability `p_i` (the probabilities need not
    /// be normalised: they are divided by their sum).
    pub fn mix(activities: &[(f64, f64)]) -> Result<Self, ModelError> {
        let total: f64 = activities.iter().map(|&(p, _)| p).sum();
        if activities
            .iter()
            .any(|&(p, d)| !(p.is_finite() && d.is_finite() && p >= 0.0 && d >= 0.0))
            || total <= 0.0
        {
            return Err(ModelError::BadInput(format!(
                "activity mix {activities:?}: probabilities and times must be finite, \
                 non-negative, with a positive total"
            )));
        }
        let (mut mean, mut second) = (0.0, 0.0);
        for &(p, d) in activities {
            mean += p / total * d;
            second += p / total * d * d;
        }
        Ok(Moments { mean, second })
    }

    /// The variance E\[S²\] − E\[S\]².
    pub fn variance(&self) -> f64 {
        (self.second - self.mean * self.mean).max(0.0)
    }
}

fn check(name: &str, x: f64) -> Result<f64, ModelError> {
    if x.is_finite() && x >= 0.0 {
        Ok(x)
    } else {
        Err(ModelError::BadInput(format!("{name} = {x}")))
    }
}

/// Pollaczek–Khinchine mean wait of an M/G/1 queue with arrival rate `lambda` and
/// service moments `s`: λ·E\[S²\] / (2(1 − ρ)), ρ = λ·E\[S\].
pub fn pk_wait(lambda: f64, s: Moments) -> Result<f64, ModelError> {
    let lambda = check("arrival rate", lambda)?;
    let mean = check("mean service time", s.mean)?;
    let second = check("second moment of service time", s.second)?;
    let rho = lambda * mean;
    if rho >= 1.0 {
        return Err(ModelError::Saturated {
            what: "M/G/1 queue".into(),
            utilization: rho,
        });
    }
    Ok(lambda * second / (2.0 * (1.0 - rho)))
}

/// Mean wait of a single-server FIFO queue whose arrivals see time averages except a
/// fraction `f` of *chained* ones, each of which arrives a fixed lag after a *leader*
/// (another arrival at the same server) that it must wait behind for `delta` more than
/// the leader waited. The routing controller under hold is such a queue: when a release
/// hands its link to a waiter, the release signal goes on to the next node and the
/// waiter's set-up follows D_link_conn later, so it waits for the release's wait plus
/// δ = D_release − D_link_conn; the P-K formula, which assumes every arrival sees time
/// averages (PASTA), misses this.
///
/// `lambda` is the arrival rate of all requests, `s` the moments of all service times,
/// `s_chained` the mean service time of the chained requests (`s` includes them).
///
/// Derivation. For a FIFO single server the time-average unfinished work is
/// V = λ·(E\[S·W\] + E\[S²\]/2) whatever the arrival process (Brumelle's H = λG: a
/// request's S is in the system whole while it waits and S²/2 on average while served).
/// Assume (a) an arrival that is not chained sees V (PASTA for them, the leaders
/// included), so W_o = V; (b) a chained one arrives while its leader is in the system,
/// finds the work the leader found less the work done since plus the leader's service:
/// W_c = V + δ (arrivals in the lag are neglected; δ ≥ 0); (c) within a class wait and
/// service are independent. Then E\[S·W\] = (1 − f)·S̄_o·V + f·S̄_c·(V + δ) = S̄·V +
/// f·S̄_c·δ, so V = λE\[S²\]/2 + ρV + λ·f·S̄_c·δ, i.e.
/// V = W_PK + λ·f·S̄_c·δ/(1 − ρ), and the mean wait is W = V + f·δ:
///
/// W = W_PK + δ·K, K = f·(1 + λ·S̄_c/(1 − ρ))   ([`chained_coefficient`]).
///
/// With f = 0 it is the P-K wait; the fraction of arrivals that find the server busy is
/// then ρ + f·(1 − ρ) instead of ρ ([`chained_busy`]).
pub fn chained_wait(
    lambda: f64,
    s: Moments,
    f: f64,
    s_chained: f64,
    delta: f64,
) -> Result<f64, ModelError> {
    let pk = pk_wait(lambda, s)?;
    let k = chained_coefficient(lambda, lambda * s.mean, f, s_chained)?;
    Ok(pk + check("delta", delta)? * k)
}

/// The coefficient K = f·(1 + λ·S̄_c/(1 − ρ)) of [`chained_wait`]: the corrected wait is
/// W_PK + δ·K. `rho` = λ·E\[S\].
pub fn chained_coefficient(
    lambda: f64,
    rho: f64,
    f: f64,
    s_chained: f64,
) -> Result<f64, ModelError> {
    let lambda = check("arrival rate", lambda)?;
    let rho = check("utilisation", rho)?;
    let f = check("chained fraction", f)?;
    let s_chained = check("chained mean service time", s_chained)?;
    if f > 1.0 {
        return Err(ModelError::BadInput(format!("chained fraction {f} > 1")));
    }
    if rho >= 1.0 {
        return Err(ModelError::Saturated {
            what: "controller queue with chained arrivals".into(),
            utilization: rho,
        });
    }
    Ok(f * (1.0 + lambda * s_chained / (1.0 - rho)))
}

/// The fraction of arrivals that find the server busy in the queue of [`chained_wait`]:
/// ρ for the others, 1 for chained ones when δ > 0 (the leader is still in the system);
/// with δ = 0 a chained arrival finds the server busy only if its leader waited,
/// which happens with the leader's probability, ρ.
pub fn chained_busy(rho: f64, f: f64, delta: f64) -> f64 {
    if delta > 0.0 {
        rho + f * (1.0 - rho)
    } else {
        rho
    }
}

/// M/D/1 mean wait with deterministic service `d`: ρ·d / (2(1 − ρ)).
pub fn md1_wait(lambda: f64, d: f64) -> Result<f64, ModelError> {
    pk_wait(lambda, Moments::deterministic(d))
}

/// M/M/1 mean wait with mean service `m`: ρ·m / (1 − ρ).
pub fn mm1_wait(lambda: f64, m: f64) -> Result<f64, ModelError> {
    pk_wait(lambda, Moments::exponential(m))
}

/// One class of a multi-class M/G/1 queue.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Class {
    /// Arrival rate λ_m.
    pub rate: f64,
    /// Mean service time T̄_m.
    pub mean: f64,
    /// Variance σ_m² of the service time.
    pub variance: f64,
}

/// Mean wait of a FIFO M/G/1 queue shared by several Poisson classes (paper 004 eq. 18):
/// Σ λ_m (T̄_m² + σ_m²) / (2(1 − ρ)), ρ = Σ λ_m T̄_m — the same for every class.
pub fn multiclass_wait(classes: &[Class]) -> Result<f64, ModelError> {
    let mut rho = 0.0;
    let mut sum = 0.0;
    for c in classes {
        let rate = check("class arrival rate", c.rate)?;
        let mean = check("class mean service time", c.mean)?;
        let var = check("class service-time variance", c.variance)?;
        rho += rate * mean;
        sum += rate * (mean * mean + var);
    }
    if rho >= 1.0 {
        return Err(ModelError::Saturated {
            what: "multi-class M/G/1 queue".into(),
            utilization: rho,
        });
    }
    Ok(sum / (2.0 * (1.0 - rho)))
}

/// Largest population [`mm1_finite_source`] accepts.
pub const MAX_SOURCES: u32 = 1 << 20;

/// State probabilities P_0 … P_N of the M/M/1 queue with a finite population of
/// `n_sources` sources (M/M/1//N, Kleinrock vol. I §3.9), each idle source asking at rate
/// λ′ and the server serving at rate μ, `per_source_ratio` = λ′/μ:
/// P_n ∝ N!/(N − n)! · (λ′/μ)ⁿ. Computed in logarithms, so no term overflows.
pub fn mm1_finite_source(n_sources: u32, per_source_ratio: f64) -> Result<Vec<f64>, ModelError> {
    let r = check("per-source ratio λ′/μ", per_source_ratio)?;
    if n_sources == 0 || n_sources > MAX_SOURCES {
        return Err(ModelError::BadInput(format!(
            "{n_sources} sources: a finite population has 1 to {MAX_SOURCES}"
        )));
    }
    if r == 0.0 {
        let mut p = vec![0.0; n_sources as usize + 1];
        p[0] = 1.0;
        return Ok(p);
    }
    let lr = r.ln();
    let mut logs = Vec::with_capacity(n_sources as usize + 1);
    let mut acc = 0.0;
    logs.push(0.0);
    for n in 1..=n_sources {
        acc += ((n_sources - n + 1) as f64).ln() + lr;
        logs.push(acc);
    }
    let top = logs.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let w: Vec<f64> = logs.iter().map(|l| (l - top).exp()).collect();
    let total: f64 = w.iter().sum();
    Ok(w.into_iter().map(|x| x / total).collect())
}

/// The per-source ratio λ′/μ at which the M/M/1//N server is busy a fraction
/// `utilization` = 1 − P_0 (in \[0, 1\)), by bisection to machine precision.
pub fn mm1_finite_source_ratio(n_sources: u32, utilization: f64) -> Result<f64, ModelError> {
    let u = check("utilisation", utilization)?;
    if u >= 1.0 {
        return Err(ModelError::Saturated {
            what: "M/M/1 finite-source server".into(),
            utilization: u,
        });
    }
    let busy =
        |r: f64| -> Result<f64, ModelError> { Ok(1.0 - mm1_finite_source(n_sources, r)?[0]) };
    if u == 0.0 {
        return Ok(0.0);
    }
    let (mut lo, mut hi) = (0.0, 1.0);
    while busy(hi)? < u {
        lo = hi;
        hi *= 2.0;
        if hi > 1e300 {
            return Err(ModelError::BadInput(format!(
                "utilisation {u}: no ratio reaches it"
            )));
        }
    }
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if mid <= lo || mid >= hi {
            break;
        }
        if busy(mid)? < u {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    Ok(0.5 * (lo + hi))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-12 * b.abs().max(1.0)
    }

    #[test]
    fn textbook_values() {
        // M/M/1, λ = 0.5, μ = 1: Wq = ρ/(μ − λ) = 1.
        assert!(close(mm1_wait(0.5, 1.0).unwrap(), 1.0));
        // M/M/1, λ = 3, μ = 4 (Kleinrock): Wq = ρ/(μ − λ) = 0.75.
        assert!(close(mm1_wait(3.0, 0.25).unwrap(), 0.75));
        // M/D/1, ρ = 0.5, D = 1: Wq = 0.5; half the M/M/1 wait at the same load.
        assert!(close(md1_wait(0.5, 1.0).unwrap(), 0.5));
        assert!(close(md1_wait(0.8, 1.0).unwrap(), 2.0));
        // Uniform service on [0, 2]: E[S] = 1, E[S²] = 4/3; λ = 0.5 gives 2/3.
        let u = Moments {
            mean: 1.0,
            second: 4.0 / 3.0,
        };
        assert!(close(pk_wait(0.5, u).unwrap(), 2.0 / 3.0));
    }

    #[test]
    fn multiclass_reduces_to_one_class_and_sums_the_classes() {
        let one = multiclass_wait(&[Class {
            rate: 0.5,
            mean: 1.0,
            variance: 1.0,
        }])
        .unwrap();
        assert!(close(one, mm1_wait(0.5, 1.0).unwrap()));
        // λ1 = 0.2, T1 = 1, σ1² = 0; λ2 = 0.1, T2 = 2, σ2² = 1: ρ = 0.4,
        // Σ λ(T² + σ²) = 0.2 + 0.5 = 0.7, W = 0.7 / 1.2.
        let two = multiclass_wait(&[
            Class {
                rate: 0.2,
                mean: 1.0,
                variance: 0.0,
            },
            Class {
                rate: 0.1,
                mean: 2.0,
                variance: 1.0,
            },
        ])
        .unwrap();
        assert!(close(two, 0.7 / 1.2));
        // Splitting one class in two identical halves changes nothing.
        let half = Class {
            rate: 0.25,
            mean: 1.0,
            variance: 1.0,
        };
        assert!(close(multiclass_wait(&[half, half]).unwrap(), one));
    }

    #[test]
    fn an_activity_mix_has_the_weighted_moments() {
        // Paper 000's hold controller: verify+connect, verify, release, release+connect.
        let m = Moments::mix(&[(0.45, 2.0), (0.05, 1.0), (0.45, 1.0), (0.05, 2.0)]).unwrap();
        assert!(close(m.mean, 0.5 * 2.0 + 0.5 * 1.0));
        assert!(close(m.second, 0.5 * 4.0 + 0.5 * 1.0));
        assert!(close(m.variance(), 2.5 - 2.25));
        assert!(Moments::mix(&[(0.0, 1.0)]).is_err());
        assert!(Moments::mix(&[(1.0, f64::NAN)]).is_err());
    }

    #[test]
    fn saturation_and_bad_input_are_errors_not_numbers() {
        assert!(matches!(
            md1_wait(1.0, 1.0),
            Err(ModelError::Saturated { .. })
        ));
        assert!(matches!(
            mm1_wait(2.0, 1.0),
            Err(ModelError::Saturated { .. })
        ));
        assert!(matches!(
            pk_wait(-0.1, Moments::deterministic(1.0)),
            Err(ModelError::BadInput(_))
        ));
        assert!(matches!(
            multiclass_wait(&[Class {
                rate: f64::NAN,
                mean: 1.0,
                variance: 0.0
            }]),
            Err(ModelError::BadInput(_))
        ));
        // A wait is monotone in the load below saturation.
        let w: Vec<f64> = [0.1, 0.3, 0.5, 0.7, 0.9]
            .iter()
            .map(|&l| md1_wait(l, 1.0).unwrap())
            .collect();
        assert!(w.windows(2).all(|p| p[0] < p[1]));
    }

    #[test]
    fn chained_arrivals_add_delta_k_to_the_pk_wait() {
        let s = Moments::deterministic(10.0);
        let pk = pk_wait(0.05, s).unwrap();
        // No chained arrivals: P-K itself.
        assert!(close(chained_wait(0.05, s, 0.0, 10.0, 9.0).unwrap(), pk));
        // f = 0.1, S_c = 10, λ = 0.05, ρ = 0.5: K = 0.1·(1 + 0.5/0.5) = 0.2, δ = 9.
        assert!(close(
            chained_wait(0.05, s, 0.1, 10.0, 9.0).unwrap(),
            pk + 9.0 * 0.2
        ));
        assert!(close(chained_busy(0.5, 0.1, 9.0), 0.55));
        assert!(close(chained_busy(0.5, 0.1, 0.0), 0.5));
        assert!(chained_wait(0.05, s, 1.5, 10.0, 9.0).is_err());
        assert!(chained_coefficient(0.1, 1.0, 0.1, 10.0).is_err());
    }

    #[test]
    fn the_finite_population_of_fig_13() {
        // Spec paper002 §3.3(5): utilisation 0.7, 7 sources.
        let r = mm1_finite_source_ratio(7, 0.7).unwrap();
        assert!((r - 0.12728).abs() < 5e-6, "{r}");
        let p = mm1_finite_source(7, r).unwrap();
        let table = [
            0.3000, 0.2673, 0.2041, 0.1299, 0.0661, 0.0253, 0.0064, 0.0008,
        ];
        assert_eq!(p.len(), 8);
        for (n, (&x, &t)) in p.iter().zip(&table).enumerate() {
            assert!((x - t).abs() < 5e-5, "P_{n} = {x} vs {t}");
        }
        let mean: f64 = p.iter().enumerate().map(|(n, x)| n as f64 * x).sum();
        // The spec prints 1.501; the exact value is 1.50049 (1.500 to three places).
        assert!((mean - 1.50049).abs() < 1e-5, "{mean}");
        assert!((mean - 1.501).abs() < 1e-3);
        // Mean queue wait in units of 1/μ, by Little: (L − ρ)/ρ (throughput μρ).
        assert!(((mean - 0.7) / 0.7 - 1.144).abs() < 5e-4);
        // The unlimited population at the same utilisation: P_n = (1 − ρ)ρⁿ, mean 2.333.
        assert!((0.7 / 0.3 - 2.333f64).abs() < 5e-4);
        // One source: a two-state chain; many sources with a small ratio: M/M/1.
        let one = mm1_finite_source(1, 0.5).unwrap();
        assert!((one[1] - 1.0 / 3.0).abs() < 1e-12);
        let big = mm1_finite_source(100_000, 0.5 / 100_000.0).unwrap();
        assert!((big[0] - 0.5).abs() < 1e-4 && (big[2] - 0.125).abs() < 1e-4);
        // No overflow however large, and bad input refused.
        let huge = mm1_finite_source(1000, 1e6).unwrap();
        assert!((huge.iter().sum::<f64>() - 1.0).abs() < 1e-12);
        assert!(mm1_finite_source(0, 0.1).is_err());
        assert!(mm1_finite_source(7, f64::NAN).is_err());
        assert!(mm1_finite_source_ratio(7, 1.0).is_err());
        assert_eq!(mm1_finite_source_ratio(7, 0.0).unwrap(), 0.0);
    }
}
