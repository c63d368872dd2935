//! Statistics over independent replications: means and Student-t 95% confidence
//! intervals, a distribution's summary ([`Dist`]), and the t-test of a backlog's growth.

use crate::foundation::types::Cycle;
use hdrhistogram::Histogram;

/// Two-sided 97.5% quantile of Student's t with `df` degrees of freedom.
pub fn t975(df: usize) -> f64 {
    const TABLE: [f64; 30] = [
        12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160,
        2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056,
        2.052, 2.048, 2.045, 2.042,
    ];
    match df {
        0 => f64::NAN,
        1..=30 => TABLE[df - 1],
        _ => beyond_table(1.959_964, df),
    }
}

/// One-sided 95% quantile of Student's t with `df` degrees of freedom (the backlog test
/// of the saturation search).
pub fn t95(df: usize) -> f64 {
    const TABLE: [f64; 30] = [
        6.314, 2.920, 2.353, 2.132, 2.015, 1.943, 1.895, 1.860, 1.833, 1.812, 1.796, 1.782, 1.771,
        1.761, 1.753, 1.746, 1.740, 1.734, 1.729, 1.725, 1.721, 1.717, 1.714, 1.711, 1.708, 1.706,
        1.703, 1.701, 1.699, 1.697,
    ];
    match df {
        0 => f64::NAN,
        1..=30 => TABLE[df - 1],
        _ => beyond_table(1.644_854, df),
    }
}

/// Student's t quantile for `df` > 30 from the normal quantile `z`: the Cornish–Fisher
/// expansion, error < 1e-3 there.
fn beyond_table(z: f64, df: usize) -> f64 {
    let d = df as f64;
    z + (z.powi(3) + z) / (4.0 * d)
        + (5.0 * z.powi(5) + 16.0 * z.powi(3) + 3.0 * z) / (96.0 * d * d)
}

/// Mean of the replication means and the half-width of its 95% confidence interval
/// (None with fewer than two replications).
pub fn mean_ci(samples: &[f64]) -> (f64, Option<f64>) {
    let n = samples.len();
    if n == 0 {
        return (f64::NAN, None);
    }
    let mean = samples.iter().sum::<f64>() / n as f64;
    if n < 2 {
        return (mean, None);
    }
    let var = samples.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n as f64 - 1.0);
    (mean, Some(t975(n - 1) * (var / n as f64).sqrt()))
}

/// A distribution of per-message times.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct Dist {
    /// Mean over replications of the per-replication mean.
    pub mean: Option<f64>,
    /// Half-width of the 95% Student-t interval over replications.
    pub ci95: Option<f64>,
    /// Median (all replications' messages together).
    pub p50: Option<u64>,
    /// 90th percentile.
    pub p90: Option<u64>,
    /// 99th percentile.
    pub p99: Option<u64>,
    /// Largest.
    pub max: Option<u64>,
}

/// A distribution: the mean over replications of their means (with its 95% interval)
/// and the percentiles of every replication's values together.
pub fn dist(means: &[f64], h: &Histogram<u64>) -> Dist {
    let (mean, ci95) = mean_ci(means);
    let some = !h.is_empty();
    Dist {
        mean: mean.is_finite().then_some(mean),
        ci95: ci95.filter(|x| x.is_finite()),
        p50: some.then(|| h.value_at_quantile(0.5)),
        p90: some.then(|| h.value_at_quantile(0.9)),
        p99: some.then(|| h.value_at_quantile(0.99)),
        max: some.then(|| h.max()),
    }
}

/// The growth of the source backlog over a window.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Growth {
    /// Mean of the increments per cycle between consecutive samples, messages per cycle
    /// (every source together).
    pub per_cycle: f64,
    /// Student's t of that mean (None: fewer than two increments, or no variation).
    pub t: Option<f64>,
    /// Increments the mean is over.
    pub increments: usize,
}

impl Growth {
    /// Whether the growth is significantly positive: one-sided t-test at 95% (without
    /// variation, whether it is positive at all).
    pub fn significant(&self) -> bool {
        match self.t {
            Some(t) => t > t95(self.increments - 1),
            None => self.per_cycle > 0.0,
        }
    }
}

/// The backlog's growth over the window from its samples (cycle, messages). Increments,
/// not a regression on the samples: a stable backlog is an autocorrelated stationary
/// process, whose least-squares slope has a far larger variance than its residuals
/// suggest; its increments telescope (their sum is last − first), which makes the t-test
/// conservative for a stable queue, while an unstable one is a random walk with drift,
/// whose increments are independent and the test exact. None: fewer than two samples.
pub fn backlog_growth(samples: &[(Cycle, u64)]) -> Option<Growth> {
    let inc: Vec<f64> = samples
        .windows(2)
        .filter(|w| w[1].0 > w[0].0)
        .map(|w| (w[1].1 as f64 - w[0].1 as f64) / (w[1].0 - w[0].0) as f64)
        .collect();
    if inc.is_empty() {
        return None;
    }
    let n = inc.len() as f64;
    let mean = inc.iter().sum::<f64>() / n;
    let t = if inc.len() < 2 {
        None
    } else {
        let var = inc.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0);
        (var > 0.0).then(|| mean / (var / n).sqrt())
    };
    Some(Growth {
        per_cycle: mean,
        t,
        increments: inc.len(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_sided_t_quantiles() {
        assert_eq!(t95(1), 6.314);
        assert_eq!(t95(10), 1.812);
        // The expansion joins the table smoothly and tends to the normal quantile.
        assert!((t95(31) - 1.696).abs() < 2e-3);
        assert!((t95(120) - 1.658).abs() < 1e-3);
        assert!(t95(0).is_nan());
    }

    #[test]
    fn textbook_interval() {
        // Samples 1..=5: mean 3, s = 1.5811, t(4) = 2.776: half-width 1.963.
        let (m, h) = mean_ci(&[1.0, 2.0, 3.0, 4.0, 5.0]);
        assert_eq!(m, 3.0);
        assert!((h.unwrap() - 1.963).abs() < 1e-3);
        assert!(mean_ci(&[2.0]).1.is_none());
        assert!((t975(120) - 1.980).abs() < 1e-3);
    }
}
