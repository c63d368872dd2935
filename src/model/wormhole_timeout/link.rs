//! One link of paper 002's model (§5): an M/G/1 queue whose customers renege after a
//! deterministic patience τ (the timeout), Daley 1965. Owns the one-stage fit of the
//! virtual-wait measure (eqs. 12–13) by two-moment matching (variants A and B, spec
//! §3.4/A15), the corrected and the printed timeout probability (eq. 15), the moments of
//! the wait of the worms that do not time out (eq. 14 and its higher moments), and the
//! exact M/M/1 with deterministic patience (spec §3.3(3)) the fit must reduce to.
//!
//! Notation: λ the arrival rate of heads asking for the link, b1, b2, b3 the raw moments of
//! the holding time of the worms that get it, ρ = λ·b1 (may exceed 1: impatient customers
//! keep the queue stable), φ(x) = P(virtual wait ≤ x) for x ≤ τ, φ0 = φ(0) = P(an arrival
//! finds the link free), φ(τ) = P(no timeout), P_T = 1 − φ(τ).
//!
//! **routemu:** choices the paper leaves open:
//! - The fit dφ/dx = α e^(−βx) on (0, τ] is matched to Taylor coefficients of Φ*(s) at
//!   s = 0 (the measure dφ is not a distribution): variant B (orders 1 and 2, the paper's
//!   "first two moments"; the default) or A (orders 0 and 1). In both α = κ·φ0, so with
//!   F = (1 − e^(−βτ))/β (τ at β = 0) the link has the closed form φ0 = 1/(1 + ρ(1 + κF)),
//!   φ(τ) = φ0(1 + κF) — eq. (11) and (13) solved together, no inner iteration.
//! - The printed eq. (15) (denominator 1 − ρ) keeps eq. (11) but breaks eq. (13): it
//!   gives φ(τ) − φ0 = A − 2ρP_T instead of A; the corrected form divides by 1 + ρ. [`Denominator::Printed`] keeps the printed one to
//!   show the defect: its α still follows from its own φ0 (φ0 = 1 − ρ + ρ(ρ − A)/(1 − ρ)
//!   with A = φ0·κF, solved for φ0).
//! - Variant B needs λb2²/2 + b3(1 − ρ)/3 > 0; that fails only for ρ ≫ 1 with holding
//!   times more variable than exponential, and is reported as a saturated link.
//!   Variant B is not mass-preserving (order 0 is not matched): for holding times less
//!   variable than exponential (b1·b3 < 1.5·b2²) and a long patience its P_T can be
//!   below 0 (at τ → ∞, deterministic holding gives P_T → ρ(ρ − 1)/(2 + ρ)). This
//!   function returns the raw values; the network model decides what to do with them.
//! - For −βτ large (ρ > 1), e^(−βτ) overflows: κF is then infinite, φ0 → 0 and
//!   φ(τ) → 1/ρ, so P_T → 1 − 1/ρ, not 1: eq. (11) (φ0 + ρφ(τ) = 1, φ0 ≥ 0) forbids
//!   φ(τ) > 1/ρ. The spec's "P_T → 1" holds only as ρ → ∞.
//! - Wait moments given no timeout: E\[ωⁿ\] = (A/φ(τ))·Jₙ, A = αF the mass of the
//!   density on (0, τ] and Jₙ the n-th moment of the density ∝ e^(−βx) on [0, τ],
//!   computed without cancellation for every βτ (a Poisson-tail series below |βτ| = 5,
//!   which contains the spec's small-|βτ| expansion; β < 0 by reflection x → τ − x).

use crate::model::ModelError;
use serde::Serialize;

/// Which two Taylor coefficients of Φ*(s) the one-stage fit matches (spec A15).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub enum Matching {
    /// Orders 1 and 2 (the paper's "first two moments"): needs b1, b2, b3.
    #[default]
    B,
    /// Orders 0 and 1: needs b1, b2 (mass-preserving).
    A,
}

/// The denominator of the timeout probability (eq. 15).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub enum Denominator {
    /// Derived from eqs. (11) and (13): P_T = (ρ − A)/(1 + ρ).
    #[default]
    Corrected,
    /// As printed: P_T = (ρ − A)/(1 − ρ) — only to demonstrate the defect.
    Printed,
}

/// The state of one link: the fit and what follows from it.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct LinkState {
    /// Offered load ρ = λ·b1 (heads asking × mean holding of those served).
    pub rho: f64,
    /// α of the fit dφ/dx = α e^(−βx).
    pub alpha: f64,
    /// β of the fit (negative when ρ > 1).
    pub beta: f64,
    /// κ = α/φ0.
    pub kappa: f64,
    /// φ(0): probability that an arrival finds the link free.
    pub p_free: f64,
    /// φ(τ): probability of no timeout.
    pub p_no_timeout: f64,
    /// P_T = 1 − φ(τ).
    pub p_timeout: f64,
    /// E\[ω\], E\[ω²\], E\[ω³\]: raw moments of the wait of the heads that do not time out.
    pub wait: [f64; 3],
}

fn finite_nonneg(name: &str, x: f64) -> Result<f64, ModelError> {
    if x.is_finite() && x >= 0.0 {
        Ok(x)
    } else {
        Err(ModelError::BadInput(format!(
            "{name} = {}: must be finite and ≥ 0",
            crate::foundation::limits::show(x)
        )))
    }
}

/// F = (1 − e^(−βτ))/β, τ at β = 0; +∞ when e^(−βτ) overflows.
fn f_of(beta: f64, tau: f64) -> f64 {
    let x = beta * tau;
    if x == 0.0 {
        tau
    } else {
        -(-x).exp_m1() / beta
    }
}

/// E\[Yⁿ\], n = 0..=3, of Y with density ∝ e^(−c·y) on [0, τ], c ≥ 0.
fn trunc_exp_moments(c: f64, tau: f64) -> [f64; 4] {
    let z = c * tau;
    let mut m = [1.0, 0.0, 0.0, 0.0];
    if tau == 0.0 {
        return m;
    }
    if z < 5.0 {
        // gₙ(z) = ∫₀¹ uⁿ e^(−zu) du = n! e^(−z) Σ_{k>n} z^(k−n−1)/k!; all terms positive.
        let g = |n: u32| -> f64 {
            let mut fact = 1.0; // (n+1)!
            for i in 1..=n + 1 {
                fact *= i as f64;
            }
            let mut term = 1.0 / fact;
            let mut sum = term;
            let mut k = n + 1;
            while term > 1e-18 * sum && k < 200 {
                k += 1;
                term *= z / k as f64;
                sum += term;
            }
            let nfact: f64 = (1..=n).map(|i| i as f64).product();
            nfact * sum
        };
        let g0 = g(0);
        for (n, slot) in m.iter_mut().enumerate().skip(1) {
            *slot = tau.powi(n as i32) * g(n as u32) / g0;
        }
    } else {
        // E[Yⁿ] = n!/cⁿ · Pₙ/P₀, Pₙ = 1 − e^(−z) Σ_{k≤n} z^k/k! (no cancellation for z ≥ 5).
        let e = (-z).exp();
        let p = |n: u32| -> f64 {
            let mut term = 1.0;
            let mut sum = 1.0;
            for k in 1..=n {
                term *= z / k as f64;
                sum += term;
            }
            1.0 - e * sum
        };
        let p0 = p(0);
        let mut nfact = 1.0;
        for (n, slot) in m.iter_mut().enumerate().skip(1) {
            nfact *= n as f64;
            *slot = nfact / c.powi(n as i32) * p(n as u32) / p0;
        }
    }
    m
}

/// E\[Xⁿ\], n = 1..=3, of X with density ∝ e^(−β·x) on [0, τ], any real β.
fn shape_moments(beta: f64, tau: f64) -> [f64; 3] {
    if beta >= 0.0 {
        let m = trunc_exp_moments(beta, tau);
        [m[1], m[2], m[3]]
    } else {
        // X = τ − Y with Y ∝ e^(−|β|y): the mass leans towards τ.
        let y = trunc_exp_moments(-beta, tau);
        [
            tau - y[1],
            tau * tau - 2.0 * tau * y[1] + y[2],
            tau.powi(3) - 3.0 * tau * tau * y[1] + 3.0 * tau * y[2] - y[3],
        ]
    }
}

/// The one-stage fit's β and κ = α/φ0 for arrival rate `lambda`, holding moments `b`.
fn fit(lambda: f64, b: [f64; 3], matching: Matching) -> Result<(f64, f64), ModelError> {
    let rho = lambda * b[0];
    match matching {
        Matching::A => Ok((
            2.0 * b[0] * (1.0 - rho) / b[1],
            2.0 * lambda * b[0] * b[0] / b[1],
        )),
        Matching::B => {
            let d = lambda * b[1] * b[1] / 2.0 + b[2] * (1.0 - rho) / 3.0;
            if d.is_nan() || d <= 0.0 {
                return Err(ModelError::Saturated {
                    what: format!(
                        "a link (variant B's moment match has no solution: λb2²/2 + \
                         b3(1 − ρ)/3 = {d:.4e} ≤ 0)"
                    ),
                    utilization: rho,
                });
            }
            let r = b[1] / d;
            Ok((r * (1.0 - rho), lambda * b[1] / 2.0 * r * r))
        }
    }
}

/// Paper 002's link: M/G/1 with deterministic reneging (patience `patience`) and the
/// one-stage fit of the waiting-time measure, for arrival rate `lambda` and raw moments
/// `holding` = \[b1, b2, b3\] of the holding time of the heads that get the link. Usable
/// on measured inputs. Bad input (negative, NaN, b1 ≤ 0) is an error; so is variant B
/// without a solution (a saturated link) and the printed denominator's singularity.
pub fn reneging_link(
    lambda: f64,
    holding: [f64; 3],
    patience: f64,
    matching: Matching,
    denominator: Denominator,
) -> Result<LinkState, ModelError> {
    let lambda = finite_nonneg("arrival rate", lambda)?;
    let tau = finite_nonneg("patience", patience)?;
    for (i, &m) in holding.iter().enumerate() {
        if !(m.is_finite() && m > 0.0) {
            return Err(ModelError::BadInput(format!(
                "holding-time moment b{} = {m}: must be finite and > 0",
                i + 1
            )));
        }
    }
    let rho = lambda * holding[0];
    let (beta, kappa) = fit(lambda, holding, matching)?;
    if lambda == 0.0 {
        return Ok(LinkState {
            rho,
            alpha: 0.0,
            beta,
            kappa,
            p_free: 1.0,
            p_no_timeout: 1.0,
            p_timeout: 0.0,
            wait: [0.0; 3],
        });
    }
    let kf = kappa * f_of(beta, tau);
    let shape = shape_moments(beta, tau);
    let (p_free, p_no, p_t, waited) = match denominator {
        Denominator::Corrected => {
            if kf.is_finite() && kf < 1e300 {
                let den = 1.0 + rho * (1.0 + kf);
                (
                    1.0 / den,
                    (1.0 + kf) / den,
                    (rho - kf * (1.0 - rho)) / den,
                    kf / (1.0 + kf),
                )
            } else {
                // κF = ∞: the link is never found free, φ(τ) = 1/ρ (eq. 11), and every
                // head that gets it has waited.
                (0.0, 1.0 / rho, 1.0 - 1.0 / rho, 1.0)
            }
        }
        Denominator::Printed => {
            // φ0 = 1 − ρ + ρ(ρ − φ0κF)/(1 − ρ), solved for φ0; P_T = (ρ − A)/(1 − ρ).
            let p0 = ((1.0 - rho).powi(2) + rho * rho) / (1.0 - rho + rho * kf);
            let a = p0 * kf;
            let pt = (rho - a) / (1.0 - rho);
            let pn = 1.0 - pt;
            if !(p0.is_finite() && pt.is_finite()) {
                return Err(ModelError::BadInput(format!(
                    "the printed denominator 1 − ρ is singular at ρ = {rho}"
                )));
            }
            (p0, pn, pt, a / pn)
        }
    };
    Ok(LinkState {
        rho,
        alpha: kappa * p_free,
        beta,
        kappa,
        p_free,
        p_no_timeout: p_no,
        p_timeout: p_t,
        wait: shape.map(|m| waited * m),
    })
}

/// The exact M/M/1 queue with deterministic patience τ (spec §3.3(3)): arrival rate
/// `lambda`, exponential holding times of mean `mean_holding`. With ρ = λb, δ = 1/b − λ:
/// φ0 = (1 − ρ)/(1 − ρ²e^(−δτ)), P_T = ρ(1 − ρ)e^(−δτ)/(1 − ρ²e^(−δτ)), written with
/// g = e^(δτ) so that neither overflows; at ρ = 1 the limit φ0 = P_T = 1/(2 + τ/b) (by a
/// second-order expansion for |1 − ρ| < 1e-6). The waits of the heads that do not time
/// out have an atom φ0/φ(τ) at 0 and density λφ0e^(−δx)/φ(τ) on (0, τ] (α = λφ0, β = δ,
/// κ = λ).
pub fn mm1_deterministic_patience(
    lambda: f64,
    mean_holding: f64,
    patience: f64,
) -> Result<LinkState, ModelError> {
    let lambda = finite_nonneg("arrival rate", lambda)?;
    let tau = finite_nonneg("patience", patience)?;
    if !(mean_holding.is_finite() && mean_holding > 0.0) {
        return Err(ModelError::BadInput(format!(
            "mean holding time {mean_holding}: must be finite and > 0"
        )));
    }
    let b = mean_holding;
    let rho = lambda * b;
    let delta = 1.0 / b - lambda;
    let eps = 1.0 - rho;
    let (p_free, p_t) = if eps.abs() < 1e-6 {
        // 1 − (1 − ε)²e^(−aε) = (2 + a)ε − (1 + 2a + a²/2)ε² + O(ε³), a = τ/b.
        let a = tau / b;
        let p0 = 1.0 / ((2.0 + a) - (1.0 + 2.0 * a + a * a / 2.0) * eps);
        // P_T = ρ(1 − ρ)e^(−aε)/(1 − ρ²e^(−aε)) = ρ·e^(−aε)·φ0.
        (p0, rho * (-a * eps).exp() * p0)
    } else {
        let g = (delta * tau).exp();
        (eps / (1.0 - rho * rho / g), rho * eps / (g - rho * rho))
    };
    let p_no = 1.0 - p_t;
    let waited = if p_no > 0.0 { 1.0 - p_free / p_no } else { 1.0 };
    Ok(LinkState {
        rho,
        alpha: lambda * p_free,
        beta: delta,
        kappa: lambda,
        p_free,
        p_no_timeout: p_no,
        p_timeout: p_t,
        wait: shape_moments(delta, tau).map(|m| waited * m),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn exp_moments(b: f64) -> [f64; 3] {
        [b, 2.0 * b * b, 6.0 * b * b * b]
    }

    #[test]
    fn the_exact_mm1_with_patience_hits_the_spec_vectors() {
        // Spec §3.3(3): μ = 0.01.
        for (lambda, tau, pt, p0) in [
            (0.003, 20.0, 0.1981, 0.7594),
            (0.007, 100.0, 0.2442, 0.4710),
            (0.012, 20.0, 0.5008, 0.4010),
        ] {
            let s = mm1_deterministic_patience(lambda, 100.0, tau).unwrap();
            assert!((s.p_timeout - pt).abs() < 1e-4, "{lambda} {tau}: {s:?}");
            assert!((s.p_free - p0).abs() < 1e-4, "{lambda} {tau}: {s:?}");
            // Eq. (11): utilisation = λ b φ(τ).
            assert!((s.p_free + s.rho * s.p_no_timeout - 1.0).abs() < 1e-12);
        }
    }

    #[test]
    fn the_exact_form_is_smooth_through_rho_one() {
        let (b, tau) = (100.0, 20.0);
        let at = mm1_deterministic_patience(0.01, b, tau).unwrap();
        assert!((at.p_timeout - 1.0 / (2.0 + tau / b)).abs() < 1e-12);
        assert!((at.p_free - 1.0 / (2.0 + tau / b)).abs() < 1e-12);
        for d in [1e-9, 1e-7, 2e-6, 1e-5] {
            for s in [-1.0, 1.0] {
                let x = mm1_deterministic_patience(0.01 * (1.0 + s * d), b, tau).unwrap();
                assert!((x.p_timeout - at.p_timeout).abs() < 2.0 * d, "{d}: {x:?}");
                assert!((x.p_free - at.p_free).abs() < 2.0 * d, "{d}: {x:?}");
            }
        }
    }

    #[test]
    fn both_variants_reduce_to_the_exact_mm1_for_exponential_holding() {
        for &(lambda, tau) in &[
            (0.003, 20.0),
            (0.007, 100.0),
            (0.012, 20.0),
            (0.0099999, 50.0),
            (0.01, 50.0),
            (0.0100001, 50.0),
            (0.05, 20.0),
            (0.0004, 0.0),
        ] {
            let exact = mm1_deterministic_patience(lambda, 100.0, tau).unwrap();
            for m in [Matching::A, Matching::B] {
                let s = reneging_link(lambda, exp_moments(100.0), tau, m, Denominator::Corrected)
                    .unwrap();
                let tol = 1e-9;
                assert!((s.beta - exact.beta).abs() < 1e-12, "{m:?} {lambda}");
                assert!((s.kappa - exact.kappa).abs() < 1e-12, "{m:?} {lambda}");
                assert!(
                    (s.p_timeout - exact.p_timeout).abs() < tol,
                    "{m:?} {lambda} {tau}"
                );
                assert!(
                    (s.p_free - exact.p_free).abs() < tol,
                    "{m:?} {lambda} {tau}"
                );
                for n in 0..3 {
                    let e = exact.wait[n];
                    assert!(
                        (s.wait[n] - e).abs() <= 1e-7 * e.max(1.0),
                        "{m:?} {lambda} {tau} E[ω^{}]: {} vs {e}",
                        n + 1,
                        s.wait[n]
                    );
                }
                // φ0 + ρφ(τ) = 1 and φ(τ) − φ0 = A = αF.
                let a = s.alpha * f_of(s.beta, tau);
                assert!((s.p_free + s.rho * s.p_no_timeout - 1.0).abs() < 1e-12);
                assert!((s.p_no_timeout - s.p_free - a).abs() < 1e-12);
            }
        }
    }

    #[test]
    fn both_variants_are_smooth_through_rho_one_for_any_holding_time() {
        // A holding time more variable than exponential (b2 = 2.5 b1², b3 = 9 b1³).
        let b = [120.0, 2.5 * 120.0 * 120.0, 9.0 * 120.0f64.powi(3)];
        for m in [Matching::A, Matching::B] {
            let at = |l: f64| reneging_link(l, b, 30.0, m, Denominator::Corrected).unwrap();
            let one = at(1.0 / 120.0);
            assert!(one.beta.abs() < 1e-15, "{m:?}: β = {} at ρ = 1", one.beta);
            for d in [1e-12, 1e-9, 1e-6, 1e-4] {
                for s in [-1.0, 1.0] {
                    let x = at((1.0 + s * d) / 120.0);
                    assert!((x.p_timeout - one.p_timeout).abs() < d, "{m:?} {d}: {x:?}");
                    assert!((x.p_free - one.p_free).abs() < d, "{m:?} {d}: {x:?}");
                    for n in 0..3 {
                        let r = (x.wait[n] - one.wait[n]).abs() / one.wait[n];
                        assert!(r < 10.0 * d, "{m:?} {d} E[ω^{}]: {r}", n + 1);
                    }
                }
            }
        }
    }

    #[test]
    fn the_wait_moments_are_the_closed_forms_and_the_small_beta_series() {
        // Corrected, variant A, a non-exponential holding time.
        let b = [120.0, 2.5 * 120.0 * 120.0, 9.0 * 120.0f64.powi(3)];
        let tau = 30.0;
        for lambda in [0.001, 0.004, 0.007, 0.012] {
            let s = reneging_link(lambda, b, tau, Matching::A, Denominator::Corrected).unwrap();
            let (al, be, p) = (s.alpha, s.beta, s.p_no_timeout);
            let e = (-be * tau).exp();
            let bt = be * tau;
            let closed = [
                al * (1.0 - e - bt * e) / (be * be * p),
                al * (2.0 - e * (bt * bt + 2.0 * bt + 2.0)) / (be.powi(3) * p),
                al * (6.0 - e * (bt.powi(3) + 3.0 * bt * bt + 6.0 * bt + 6.0)) / (be.powi(4) * p),
            ];
            for (n, (w, c)) in s.wait.iter().zip(closed).enumerate() {
                assert!(
                    (w - c).abs() <= 1e-9 * c,
                    "λ {lambda} E[ω^{}]: {w} vs {c}",
                    n + 1
                );
            }
        }
        // Near β = 0 (ρ ≈ 1): the spec's series E[ωⁿ] ≈ ατ^(n+1)/((n+1)φ(τ))·(1 − βτ(n+1)/(n+2)).
        let lambda = 1.0 / 120.0 * (1.0 + 1e-9);
        let s = reneging_link(lambda, b, tau, Matching::A, Denominator::Corrected).unwrap();
        assert!((s.beta * tau).abs() < 1e-6);
        for n in 0..3 {
            let k = n as f64 + 1.0;
            let series = s.alpha * tau.powf(k + 1.0) / ((k + 1.0) * s.p_no_timeout)
                * (1.0 - s.beta * tau * (k + 1.0) / (k + 2.0));
            assert!((s.wait[n] - series).abs() <= 1e-12 * series, "n {n}");
        }
    }

    #[test]
    fn a_heavily_overloaded_link_neither_overflows_nor_returns_nan() {
        for m in [Matching::A, Matching::B] {
            for lambda in [0.02, 0.1, 1.0, 100.0] {
                let s = reneging_link(lambda, exp_moments(100.0), 1e4, m, Denominator::Corrected)
                    .unwrap();
                let rho = lambda * 100.0;
                assert!(
                    (s.p_timeout - (1.0 - 1.0 / rho)).abs() < 1e-6,
                    "{m:?} {s:?}"
                );
                assert!(s.p_free >= 0.0 && s.p_free < 1e-6);
                assert!(s.wait.iter().all(|w| w.is_finite() && *w > 0.0));
                // The waits of those who get the link crowd towards the patience.
                assert!(s.wait[0] > 0.9e4, "{s:?}");
            }
        }
        let s = mm1_deterministic_patience(100.0, 100.0, 1e4).unwrap();
        assert!((s.p_timeout - (1.0 - 1e-4)).abs() < 1e-9);
        assert!(s.wait.iter().all(|w| w.is_finite()));
    }

    #[test]
    fn zero_patience_is_the_erlang_loss_system_and_bad_input_is_refused() {
        // τ = 0: M/G/1/1, P_block = ρ/(1 + ρ).
        let s = reneging_link(
            0.005,
            [100.0, 1e4, 1e6],
            0.0,
            Matching::B,
            Denominator::Corrected,
        )
        .unwrap();
        assert!((s.p_timeout - 0.5 / 1.5).abs() < 1e-12);
        assert_eq!(s.wait, [0.0; 3]);
        for (l, b, t) in [
            (-1.0, [1.0, 2.0, 6.0], 1.0),
            (f64::NAN, [1.0, 2.0, 6.0], 1.0),
            (1.0, [0.0, 2.0, 6.0], 1.0),
            (1.0, [1.0, 2.0, 6.0], f64::INFINITY),
        ] {
            assert!(matches!(
                reneging_link(l, b, t, Matching::B, Denominator::Corrected),
                Err(ModelError::BadInput(_))
            ));
        }
        assert!(mm1_deterministic_patience(0.1, 0.0, 1.0).is_err());
    }

    #[test]
    fn the_printed_denominator_keeps_eq_11_and_breaks_eq_13() {
        let s = reneging_link(
            0.004,
            exp_moments(100.0),
            20.0,
            Matching::B,
            Denominator::Printed,
        )
        .unwrap();
        let exact = mm1_deterministic_patience(0.004, 100.0, 20.0).unwrap();
        assert!(
            (s.p_timeout - exact.p_timeout).abs() > 0.05,
            "{s:?} vs {exact:?}"
        );
        // It keeps eq. (11) but breaks eq. (13): φ(τ) − φ0 = A − 2ρP_T.
        assert!((s.p_free + s.rho * s.p_no_timeout - 1.0).abs() < 1e-12);
        let a = s.alpha * f_of(s.beta, 20.0);
        let gap = s.p_no_timeout - s.p_free - a;
        assert!((gap + 2.0 * s.rho * s.p_timeout).abs() < 1e-12, "{gap}");
        assert!(gap.abs() > 0.1);
        // And it is singular at ρ = 1.
        assert!(reneging_link(
            0.01,
            exp_moments(100.0),
            20.0,
            Matching::A,
            Denominator::Printed
        )
        .is_err());
    }
}
