//! Where an axis has its ticks, and the coordinate that maps values to pixels with
//! them: linear axes on round steps (1, 2 or 5 × 10^k; whole-number axes never between
//! whole numbers), log axes with at least three labelled ticks whatever their span —
//! powers of ten over several decades, 1-2-5 or 1…9 × 10^k over one or two, evenly
//! spaced round values inside a decade.
//!
//! Not here: the axis' range (the parent module's `AxisPlan`), labels' text (`tick`).

use plotters::coord::ranged1d::{DefaultFormatting, KeyPointHint, Ranged};
use std::ops::Range;

/// The most ticks an axis asks for before thinning (a log axis over many decades labels
/// every n-th power).
const MOST: f64 = 10.0;

/// A linear axis' ticks: multiples of the round step giving at most [`MOST`] ticks
/// (whole-number axes: a step of at least 1).
pub fn linear(lo: f64, hi: f64, integral: bool) -> Vec<f64> {
    let span = hi - lo;
    if span.is_nan() || span <= 0.0 || !span.is_finite() {
        return vec![lo];
    }
    let raw = span / MOST;
    let mag = 10f64.powf(raw.log10().floor());
    let mut step = [1.0, 2.0, 5.0, 10.0]
        .iter()
        .map(|m| m * mag)
        .find(|s| *s >= raw)
        .unwrap_or(10.0 * mag);
    if integral {
        step = step.max(1.0);
    }
    let (first, last) = ((lo / step).ceil(), (hi / step).floor());
    if !(last - first).is_finite() || last - first > 100.0 {
        return vec![lo, hi];
    }
    (first as i64..=last as i64)
        .map(|i| {
            let v = i as f64 * step;
            // 3 × 0.1 is 0.30000000000000004: round to the step's own digits.
            let digits = (-step.log10().floor()).max(0.0) as i32 + 1;
            let k = 10f64.powi(digits);
            if k.is_finite() && (v * k).abs() < 1e15 {
                (v * k).round() / k
            } else {
                v
            }
        })
        .collect()
}

/// A log axis' ticks over `[lo, hi]` (both positive): at least three whenever the axis
/// holds three distinct round values, which every span does.
pub fn log(lo: f64, hi: f64) -> Vec<f64> {
    let (a, b) = (lo.log10(), hi.log10());
    let decades = b - a;
    // Powers of ten, every `every`-th decade so that at most MOST are labelled.
    let every = (decades / MOST).ceil().max(1.0) as i64;
    let (k0, k1) = (a.ceil() as i64, b.floor() as i64);
    let powers: Vec<f64> = (k0..=k1)
        .filter(|k| k.rem_euclid(every) == 0 || every == 1)
        .map(|k| 10f64.powi(k as i32))
        .filter(|v| *v >= lo && *v <= hi)
        .collect();
    if powers.len() >= 3 {
        return powers;
    }
    for mantissas in [
        &[1.0, 2.0, 5.0][..],
        &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0],
    ] {
        let v: Vec<f64> = (a.floor() as i64..=k1)
            .flat_map(|k| mantissas.iter().map(move |m| m * 10f64.powi(k as i32)))
            .filter(|v| *v >= lo && *v <= hi)
            .collect();
        if v.len() >= 3 {
            return v;
        }
    }
    // Inside a decade: evenly spaced round values, as on a linear axis.
    linear(lo, hi, false)
}

/// An axis as plotters needs it: a range, linear or logarithmic, with our ticks as its
/// key points (plotters' own log ticks label only powers of ten).
#[derive(Clone, Debug)]
pub struct Coord {
    /// Lowest value.
    pub lo: f64,
    /// Highest value.
    pub hi: f64,
    /// Logarithmic.
    pub log: bool,
    /// The ticks, each labelled.
    pub ticks: Vec<f64>,
}

impl Coord {
    /// Where `v` falls between the ends, 0 to 1.
    fn fraction(&self, v: f64) -> f64 {
        if self.log {
            (v.ln() - self.lo.ln()) / (self.hi.ln() - self.lo.ln())
        } else {
            (v - self.lo) / (self.hi - self.lo)
        }
    }
}

impl Ranged for Coord {
    type FormatOption = DefaultFormatting;
    type ValueType = f64;

    fn map(&self, value: &f64, limit: (i32, i32)) -> i32 {
        let f = self.fraction(*value);
        if !f.is_finite() {
            return limit.0;
        }
        let px = limit.0 as f64 + f * (limit.1 - limit.0) as f64;
        // Far outside the canvas is outside it; an i32 overflow is not.
        px.clamp(-1e6, 1e6).round() as i32
    }

    fn key_points<H: KeyPointHint>(&self, hint: H) -> Vec<f64> {
        if hint.weight().allow_light_points() {
            Vec::new()
        } else {
            self.ticks.clone()
        }
    }

    fn range(&self) -> Range<f64> {
        self.lo..self.hi
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_log_axis_has_at_least_three_ticks_over_any_span() {
        for (lo, decades) in [
            (100.0, 0.3),
            (13.0, 0.05),
            (10.0, 1.5),
            (0.02, 1.0),
            (1e-6, 6.0),
            (3.0, 0.9),
            (1e-200, 290.0),
        ] {
            let hi = lo * 10f64.powf(decades);
            let t = log(lo, hi);
            assert!(t.len() >= 3, "{lo} over {decades} decades: {t:?}");
            assert!(t.len() <= 30, "{lo} over {decades} decades: {t:?}");
            assert!(t.iter().all(|v| *v >= lo && *v <= hi), "{t:?}");
            assert!(t.windows(2).all(|w| w[0] < w[1]), "{t:?}");
        }
        assert_eq!(log(1.0, 1e6).len(), 7, "every power over six decades");
    }

    #[test]
    fn linear_ticks_are_round_and_whole_number_axes_stay_whole() {
        let t = linear(-0.01, 0.33, false);
        assert!(t.contains(&0.0) && t.contains(&0.3), "{t:?}");
        assert!(t.len() >= 3 && t.len() <= 11, "{t:?}");
        let w = linear(0.5, 4.5, true);
        assert_eq!(w, vec![1.0, 2.0, 3.0, 4.0]);
        assert_eq!(linear(2.0, 2.0, false), vec![2.0]);
    }
}
