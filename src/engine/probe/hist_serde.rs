//! Serde for `hdrhistogram::Histogram<u64>` fields (`#[serde(with = "…")]`), so that a
//! partition's measurements can cross to another process (`engine::distributed`).
//!
//! A histogram travels as its configuration and its non-empty buckets: (value, count)
//! pairs, the value being the bucket's highest equivalent value. Recording those into a
//! histogram of the same configuration gives the same counts in the same buckets, so every
//! statistic read from it (mean, quantiles, min and max as equivalent values) is the
//! original's. hdrhistogram's own V2 format would need its `serialization` feature and
//! compression the exchange does not want.

use hdrhistogram::Histogram;
use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

#[derive(Serialize, Deserialize)]
struct Wire {
    low: u64,
    high: u64,
    sigfig: u8,
    auto: bool,
    buckets: Vec<(u64, u64)>,
}

/// Serialises a histogram as its configuration and non-empty buckets.
pub fn serialize<S: Serializer>(h: &Histogram<u64>, s: S) -> Result<S::Ok, S::Error> {
    Wire {
        low: h.low(),
        high: h.high(),
        sigfig: h.sigfig(),
        auto: h.is_auto_resize(),
        buckets: h
            .iter_recorded()
            .map(|v| (v.value_iterated_to(), v.count_at_value()))
            .collect(),
    }
    .serialize(s)
}

/// Rebuilds a histogram serialised by [`serialize`].
pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Histogram<u64>, D::Error> {
    let w = Wire::deserialize(d)?;
    let mut h = Histogram::new_with_bounds(w.low, w.high, w.sigfig).map_err(D::Error::custom)?;
    h.auto(w.auto);
    for (value, count) in w.buckets {
        h.record_n(value, count).map_err(D::Error::custom)?;
    }
    Ok(h)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Serialize, Deserialize)]
    struct Holder(#[serde(with = "super")] Histogram<u64>);

    #[test]
    fn a_histogram_comes_back_with_the_same_statistics() {
        let mut h = crate::engine::probe::histogram();
        for v in [1u64, 2, 3, 17, 1000, 1001, 123_456, 7_000_000] {
            h.record_n(v, v % 5 + 1).unwrap();
        }
        let bytes = postcard::to_stdvec(&Holder(h.clone())).unwrap();
        let back: Holder = postcard::from_bytes(&bytes).unwrap();
        let g = back.0;
        assert_eq!(g.len(), h.len());
        assert_eq!((g.min(), g.max()), (h.min(), h.max()));
        assert_eq!(g.mean(), h.mean());
        assert_eq!(g.stdev(), h.stdev());
        for q in [0.5, 0.9, 0.99, 0.999] {
            assert_eq!(g.value_at_quantile(q), h.value_at_quantile(q));
        }
    }
}
