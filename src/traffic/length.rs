//! Message length distributions, in flits (every message has at least one flit).

use crate::config::LengthConfig;
use crate::foundation::error::{Error, Result};
use crate::foundation::rng::{below, exponential, NodeRng};

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
    /// (length, probability) pairs, probabilities summing to 1 (zero weights dropped).
    Mixed(Vec<(u32, f64)>),
}

impl LengthDist {
    /// Checks a configuration: lengths must be at least one flit.
    pub fn new(cfg: &LengthConfig) -> Result<Self> {
        let bad = |what: String| Err(Error::config(format!("workload.length: {what}")));
        if let LengthConfig::Mixed { lengths, weights } = cfg {
            return mixed(lengths, weights);
        }
        match *cfg {
            LengthConfig::Mixed { .. } => unreachable!("handled above"),
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
            LengthDist::Mixed(ref pairs) => {
                let mut u = crate::foundation::rng::unit(rng);
                for &(l, p) in pairs {
                    if u < p {
                        return l;
                    }
                    u -= p;
                }
                // Rounding left u just above the last probability.
                pairs[pairs.len() - 1].0
            }
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
            LengthDist::Mixed(ref pairs) => pairs.iter().map(|&(l, p)| p * l as f64).sum(),
        }
    }

    /// Exact raw moment E\[X^k\] of the length as sampled, in flits^k (k = 0, 1, 2, 3, …).
    ///
    /// Constant: l^k. Uniform on a..=b: for k ≤ 3 from the centred form X = c + U
    /// (c = (a + b)/2, E\[U²\] = (n² − 1)/12 with n = b − a + 1, odd moments of U zero),
    /// which stays exact where differences of power sums would cancel; larger k by
    /// summation. Exponential, sampled as min(MAX_FLITS, max(1, round(E))), E ~ Exp(mean):
    /// with μ = 1/mean and q = e^(−μ), P(X = 1) = 1 − e^(−3μ/2), P(X = n) =
    /// e^(μ/2)(1 − q)·qⁿ for 2 ≤ n < MAX_FLITS and P(X = MAX_FLITS) = e^(−μ(MAX_FLITS − 1/2));
    /// the sum Σ nᵏqⁿ over n ≥ 0 is q·A_k(q)/(1 − q)^(k+1) (A_k the Eulerian polynomial),
    /// from which the n = 0, 1 terms and the tail n ≥ MAX_FLITS are taken away in closed
    /// form. (The continuous exponential's k!·meanᵏ is what paper 002's model assumes; the
    /// rounded law differs by about 1/12 flit² in the second moment and more for short
    /// worms.)
    pub fn raw_moment(&self, k: u32) -> f64 {
        if k == 0 {
            return 1.0;
        }
        match *self {
            LengthDist::Constant(l) => (l as f64).powi(k as i32),
            LengthDist::Uniform(a, b) => {
                let c = (a as f64 + b as f64) / 2.0;
                let n = (b - a) as f64 + 1.0;
                let v = (n * n - 1.0) / 12.0;
                match k {
                    1 => c,
                    2 => c * c + v,
                    3 => c * c * c + 3.0 * c * v,
                    _ => (a..=b).map(|x| (x as f64).powi(k as i32)).sum::<f64>() / n,
                }
            }
            LengthDist::Exponential(mean) => rounded_exponential_moment(mean, k),
            LengthDist::Mixed(ref pairs) => pairs
                .iter()
                .map(|&(l, p)| p * (l as f64).powi(k as i32))
                .sum(),
        }
    }

    /// Largest possible length (None when unbounded).
    pub fn max(&self) -> Option<u32> {
        match *self {
            LengthDist::Constant(l) => Some(l),
            LengthDist::Exponential(_) => None,
            LengthDist::Uniform(_, b) => Some(b),
            LengthDist::Mixed(ref pairs) => pairs.iter().map(|&(l, _)| l).max(),
        }
    }
}

/// Checks a `Mixed` list: one weight per length, lengths of 1 to [`MAX_FLITS`] flits,
/// weights finite and non-negative with a positive sum.
fn mixed(lengths: &[u32], weights: &[f64]) -> Result<LengthDist> {
    let bad = |what: String| Err(Error::config(format!("workload.length: Mixed {what}")));
    if lengths.is_empty() || lengths.len() != weights.len() {
        return bad(format!(
            "has {} lengths and {} weights: give one weight per length, at least one",
            lengths.len(),
            weights.len()
        ));
    }
    if let Some(l) = lengths.iter().find(|&&l| l == 0 || l > MAX_FLITS) {
        return bad(format!("length {l}: a message has 1 to {MAX_FLITS} flits"));
    }
    if let Some(w) = weights.iter().find(|w| !(**w >= 0.0 && w.is_finite())) {
        return bad(format!(
            "weight {}: weights are finite and non-negative",
            crate::foundation::limits::show(*w)
        ));
    }
    let total: f64 = weights.iter().sum();
    if total <= 0.0 {
        return bad("weights are all zero".to_string());
    }
    Ok(LengthDist::Mixed(
        lengths
            .iter()
            .zip(weights)
            .filter(|(_, &w)| w > 0.0)
            .map(|(&l, &w)| (l, w / total))
            .collect(),
    ))
}

/// Σ_{n ≥ 0} nⁱ qⁿ for i = 0..=k (0 < q < 1), with `om` = 1 − q given accurately.
fn power_series(q: f64, om: f64, k: u32) -> Vec<f64> {
    // Eulerian numbers A(i, m), row by row: A(i, m) = (m + 1) A(i−1, m) + (i − m) A(i−1, m−1).
    let mut row = vec![1.0f64];
    let mut out = vec![1.0 / om];
    for i in 1..=k {
        if i > 1 {
            let mut next = vec![0.0; i as usize];
            for m in 0..i as usize {
                let keep = if m < row.len() {
                    (m + 1) as f64 * row[m]
                } else {
                    0.0
                };
                let up = if m >= 1 {
                    (i as usize - m) as f64 * row[m - 1]
                } else {
                    0.0
                };
                next[m] = keep + up;
            }
            row = next;
        }
        // Horner on the Eulerian polynomial.
        let poly = row.iter().rev().fold(0.0, |acc, &a| acc * q + a);
        out.push(q * poly / om.powi(i as i32 + 1));
    }
    out
}

/// E\[Xᵏ\] (k ≥ 1) of X = min(MAX_FLITS, max(1, round(E))), E ~ Exp(mean).
fn rounded_exponential_moment(mean: f64, k: u32) -> f64 {
    let mu = 1.0 / mean;
    let q = (-mu).exp();
    let om = -(-mu).exp_m1();
    let big = MAX_FLITS as f64;
    let p1 = -(-1.5 * mu).exp_m1();
    let c = om * (mu / 2.0).exp();
    let s = power_series(q, om, k);
    // Σ_{n ≥ 2} nᵏ qⁿ = S_k − q (the n = 0 term is 0 for k ≥ 1, the n = 1 term is q).
    let from2 = s[k as usize] - q;
    // Σ_{n ≥ M} nᵏ qⁿ = q^M Σ_i C(k, i) M^(k−i) S_i.
    let qm = (-mu * big).exp();
    let mut tail = 0.0;
    let mut binom = 1.0;
    for i in 0..=k {
        tail += binom * big.powi((k - i) as i32) * s[i as usize];
        binom = binom * (k - i) as f64 / (i + 1) as f64;
    }
    tail *= qm;
    let top = big.powi(k as i32) * (-mu * (big - 0.5)).exp();
    p1 + c * (from2 - tail) + top
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::foundation::rng::stream;

    #[test]
    fn zero_flit_messages_are_rejected() {
        assert!(LengthDist::new(&LengthConfig::Constant { flits: 0 }).is_err());
        assert!(LengthDist::new(&LengthConfig::Uniform { min: 0, max: 3 }).is_err());
        assert!(LengthDist::new(&LengthConfig::Uniform { min: 4, max: 3 }).is_err());
        assert!(LengthDist::new(&LengthConfig::Exponential { mean: 0.0 }).is_err());
    }

    #[test]
    fn a_mixed_length_draws_its_list_with_the_weights_and_has_their_mean() {
        let d = LengthDist::new(&LengthConfig::Mixed {
            lengths: vec![1, 5, 40],
            weights: vec![3.0, 1.0, 0.0],
        })
        .unwrap();
        // 3/4 of 1 flit, 1/4 of 5: mean 2; 40 has weight 0 and never appears.
        assert!((d.mean() - 2.0).abs() < 1e-12);
        assert!((d.raw_moment(2) - (0.75 + 0.25 * 25.0)).abs() < 1e-12);
        assert_eq!(d.max(), Some(5));
        let mut rng = stream(4, 0, 0, 0);
        let n = 200_000;
        let (mut sum, mut ones) = (0u64, 0u64);
        for _ in 0..n {
            let l = d.sample(&mut rng);
            assert!(l == 1 || l == 5, "{l}");
            sum += l as u64;
            ones += (l == 1) as u64;
        }
        assert!((sum as f64 / n as f64 - d.mean()).abs() < 0.02);
        assert!((ones as f64 / n as f64 - 0.75).abs() < 0.005);
        for (lengths, weights) in [
            (vec![], vec![]),
            (vec![1, 2], vec![1.0]),
            (vec![0], vec![1.0]),
            (vec![4], vec![-1.0]),
            (vec![4, 5], vec![0.0, 0.0]),
        ] {
            assert!(LengthDist::new(&LengthConfig::Mixed { lengths, weights }).is_err());
        }
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

    #[test]
    fn raw_moments_are_exact_sums_of_the_sampled_law() {
        // Constant and uniform against direct sums.
        let c = LengthDist::Constant(7);
        assert_eq!(c.raw_moment(3), 343.0);
        for (a, b) in [(1u32, 1u32), (3, 9), (10, 200)] {
            let u = LengthDist::Uniform(a, b);
            for k in 1..=4 {
                let n = (b - a + 1) as f64;
                let direct: f64 = (a..=b).map(|x| (x as f64).powi(k)).sum::<f64>() / n;
                let m = u.raw_moment(k as u32);
                assert!(
                    (m - direct).abs() <= 1e-12 * direct,
                    "U[{a},{b}] k={k}: {m} vs {direct}"
                );
            }
        }
        // The rounded exponential against the sum of nᵏ P(X = n), far into the tail.
        for mean in [0.3, 1.0, 7.5, 100.0] {
            let d = LengthDist::Exponential(mean);
            let mu = 1.0 / mean;
            let p = |n: u32| -> f64 {
                let lo = if n == 1 { 0.0 } else { n as f64 - 0.5 };
                (-mu * lo).exp() - (-mu * (n as f64 + 0.5)).exp()
            };
            let top = (60.0 * mean) as u32 + 10;
            for k in 1..=3 {
                let direct: f64 = (1..=top).map(|n| (n as f64).powi(k) * p(n)).sum();
                let m = d.raw_moment(k as u32);
                assert!(
                    (m - direct).abs() <= 1e-11 * direct,
                    "mean {mean} k={k}: {m} vs {direct}"
                );
            }
            assert!((d.raw_moment(1) - d.mean()).abs() <= 1e-12 * d.mean());
        }
        // A mean so long that the clamp at MAX_FLITS matters.
        let mean = MAX_FLITS as f64 / 4.0;
        let d = LengthDist::Exponential(mean);
        let mu = 1.0 / mean;
        let (mut m1, mut m3) = (0.0, 0.0);
        for n in 1..MAX_FLITS {
            let lo = if n == 1 { 0.0 } else { n as f64 - 0.5 };
            let pn = (-mu * lo).exp() - (-mu * (n as f64 + 0.5)).exp();
            m1 += n as f64 * pn;
            m3 += (n as f64).powi(3) * pn;
        }
        let last = (-mu * (MAX_FLITS as f64 - 0.5)).exp();
        m1 += MAX_FLITS as f64 * last;
        m3 += (MAX_FLITS as f64).powi(3) * last;
        assert!((d.raw_moment(1) - m1).abs() <= 1e-9 * m1);
        assert!((d.raw_moment(3) - m3).abs() <= 1e-9 * m3);
        assert!(
            d.raw_moment(1) < mean,
            "the clamp shortens the longest worms"
        );
    }

    #[test]
    fn rounded_exponential_raw_moments_match_samples() {
        for m in [0.7, 3.0, 12.0, 100.0] {
            let d = LengthDist::Exponential(m);
            let mut rng = stream(5, 0, 0, 0);
            let n = 400_000;
            let mut sums = [0.0f64; 3];
            for _ in 0..n {
                let x = d.sample(&mut rng) as f64;
                sums[0] += x;
                sums[1] += x * x;
                sums[2] += x * x * x;
            }
            for (k, sum) in sums.iter().enumerate() {
                let avg = sum / n as f64;
                let exact = d.raw_moment(k as u32 + 1);
                // Four standard errors of the third moment of an exponential is ~3 %.
                assert!(
                    (avg - exact).abs() / exact < 0.03,
                    "mean {m}, k = {}: sampled {avg} vs {exact}",
                    k + 1
                );
            }
        }
    }
}
