//! The full latency distribution of a run (`routemu run --latency-dist FILE`): the
//! histogram and CDF of the message latency and of its phases (source queue, network),
//! every replication's measured messages together, as CSV or JSON.
//!
//! The rows are the hdrhistogram's own buckets (exact below 2048 cycles, three
//! significant digits above), each named by the highest value it holds, which is what
//! the report's percentiles return; so the report's p50, p90, p99 and max are read off
//! the CDF exactly: the first row whose `cumulative` reaches ⌈q·count⌉ (at least 1).
//! The latency follows the report's definition (`experiment.latency`), shifted by the
//! same constant as the report's. This module only formats; the histograms are
//! `MsgStats`'s, pooled by `experiments::experiment`.

use crate::config::LatencyDef;
use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};
use std::fmt::Write;

/// The pooled histograms of a run, as the report reads them.
#[derive(Clone, Debug)]
pub struct LatencyHistograms {
    /// The latency's histogram before the shift (creation-based, or injection-based
    /// under `from: HeadInjected`).
    pub total: Histogram<u64>,
    /// Cycles subtracted from every `total` value (the ejection latency under `to:
    /// TailArrived`; 0 otherwise).
    pub shift: u64,
    /// Creation → head leaving the source router.
    pub source_queue: Histogram<u64>,
    /// Head leaving the source router → tail absorbed.
    pub network: Histogram<u64>,
    /// The latency definition.
    pub definition: LatencyDef,
}

impl Default for LatencyHistograms {
    fn default() -> Self {
        LatencyHistograms {
            total: crate::engine::probe::histogram(),
            shift: 0,
            source_queue: crate::engine::probe::histogram(),
            network: crate::engine::probe::histogram(),
            definition: LatencyDef::default(),
        }
    }
}

/// One bucket of a distribution.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Bucket {
    /// The highest value (cycles) the bucket holds.
    pub value: u64,
    /// Messages in it.
    pub count: u64,
    /// Messages in it and every lower bucket.
    pub cumulative: u64,
    /// `cumulative / total`: the CDF at `value`.
    pub cdf: f64,
}

/// One quantity's distribution.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Distribution {
    /// Messages. (The exact mean is the report's; a mean of the buckets would differ
    /// from it above 2048 cycles, so none is given here.)
    pub count: u64,
    /// Median, read off the buckets as the report reads it.
    pub p50: Option<u64>,
    /// 90th percentile.
    pub p90: Option<u64>,
    /// 99th percentile.
    pub p99: Option<u64>,
    /// Largest.
    pub max: Option<u64>,
    /// The non-empty buckets, increasing values.
    pub buckets: Vec<Bucket>,
}

/// The JSON document of `--latency-dist FILE.json`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct LatencyDoc {
    /// Schema identifier.
    pub schema: &'static str,
    /// Unit of every value.
    pub unit: &'static str,
    /// The latency definition of `latency`.
    pub definition: LatencyDef,
    /// The message latency (the report's `latency`).
    pub latency: Distribution,
    /// Its source-queue phase (the report's `latency.phases.source_queue`).
    pub source_queue: Distribution,
    /// Its network phase (the report's `latency.phases.network`).
    pub network: Distribution,
}

/// Schema identifier of the JSON document.
pub const SCHEMA: &str = "routemu.latency-dist/1";

/// The distribution of a histogram whose values are shifted down by `shift`.
pub fn distribution(h: &Histogram<u64>, shift: u64) -> Distribution {
    let total = h.len();
    let mut cumulative = 0;
    let buckets: Vec<Bucket> = h
        .iter_recorded()
        .map(|v| {
            cumulative += v.count_at_value();
            Bucket {
                value: v.value_iterated_to().saturating_sub(shift),
                count: v.count_at_value(),
                cumulative,
                cdf: cumulative as f64 / total as f64,
            }
        })
        .collect();
    let q = |q: f64| percentile(&buckets, total, q);
    Distribution {
        count: total,
        p50: q(0.5),
        p90: q(0.9),
        p99: q(0.99),
        max: buckets.last().map(|b| b.value),
        buckets,
    }
}

/// The `q` quantile read off buckets: the first whose cumulative count reaches
/// ⌈q·total⌉ (at least 1), hdrhistogram's rule.
pub fn percentile(buckets: &[Bucket], total: u64, q: f64) -> Option<u64> {
    let target = ((q * total as f64).ceil() as u64).max(1);
    buckets
        .iter()
        .find(|b| b.cumulative >= target)
        .map(|b| b.value)
}

impl LatencyHistograms {
    /// The JSON document.
    pub fn doc(&self) -> LatencyDoc {
        LatencyDoc {
            schema: SCHEMA,
            unit: "cycles",
            definition: self.definition,
            latency: distribution(&self.total, self.shift),
            source_queue: distribution(&self.source_queue, 0),
            network: distribution(&self.network, 0),
        }
    }

    /// The CSV: `quantity,value,count,cumulative,cdf`, one row per bucket, quantities
    /// `latency`, `source_queue`, `network` (long format, one line per curve point).
    pub fn csv(&self) -> String {
        let d = self.doc();
        let mut s = String::from("quantity,value,count,cumulative,cdf\n");
        for (name, dist) in [
            ("latency", &d.latency),
            ("source_queue", &d.source_queue),
            ("network", &d.network),
        ] {
            for b in &dist.buckets {
                let _ = writeln!(
                    s,
                    "{name},{},{},{},{}",
                    b.value, b.count, b.cumulative, b.cdf
                );
            }
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_read_off_the_cdf_equal_the_histograms() {
        let mut h = crate::engine::probe::histogram();
        for v in [3u64, 3, 5, 8, 13, 21, 34, 55, 89, 144, 2500, 2501, 10_000] {
            h.record(v).unwrap();
        }
        let d = distribution(&h, 0);
        for (q, p) in [(0.5, d.p50), (0.9, d.p90), (0.99, d.p99)] {
            assert_eq!(p, Some(h.value_at_quantile(q)), "q = {q}");
        }
        assert_eq!(d.max, Some(h.max()));
        assert_eq!(d.buckets.last().unwrap().cumulative, 13);
        assert_eq!(d.buckets.last().unwrap().cdf, 1.0);
        let shifted = distribution(&h, 1);
        assert_eq!(shifted.p50, d.p50.map(|x| x - 1));
    }

    #[test]
    fn an_empty_histogram_has_no_percentiles() {
        let d = distribution(&crate::engine::probe::histogram(), 0);
        assert_eq!((d.count, d.p50, d.max), (0, None, None));
        assert!(d.buckets.is_empty());
    }
}
