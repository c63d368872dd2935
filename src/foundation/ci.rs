//! Means and Student-t 95% confidence intervals over independent replications.

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

#[cfg(test)]
mod tests {
    use super::*;

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
