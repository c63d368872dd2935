//! Parameter sweeps: axes of values for configuration fields (`PATH=FROM:TO:STEP` or
//! `PATH=a,b,c`), their grid, and one point of it — emulated with the configuration's
//! replications and predicted by the model — as comparison rows. Points run one after
//! another; each runs its replications side by side (`experiment.jobs`) and its network
//! on `experiment.threads` partitions.
//!
//! Not here: the CSV and the plot (`cli::sweep`, `stats::plot`).

use crate::config::overrides::apply_overrides;
use crate::config::HwConfig;
use crate::engine::experiment::run_experiment;
use crate::error::{Error, Result};
use crate::model::circuit::{CircuitParams, PathForm};
use crate::model::compare::{rows, Row};
use crate::stats::report::Report;
use crate::types::Cycle;

/// Most points one axis may have.
pub const MAX_AXIS_POINTS: usize = 10_000;

/// One swept field and its values (as `--set` would take them).
#[derive(Clone, Debug, PartialEq)]
pub struct Axis {
    /// Dotted configuration path.
    pub path: String,
    /// Values in sweep order.
    pub values: Vec<String>,
}

impl Axis {
    /// Parses `PATH=FROM:TO:STEP` (TO included when the steps reach it) or `PATH=a,b,c`.
    pub fn parse(spec: &str) -> Result<Axis> {
        let bad = |why: &str| Error::Arg(format!("--param {spec}: {why}"));
        let (path, range) = spec
            .split_once('=')
            .ok_or_else(|| bad("expected PATH=FROM:TO:STEP or PATH=a,b,c"))?;
        let path = path.trim();
        if path.is_empty() {
            return Err(bad("the path is empty"));
        }
        let values: Vec<String> = if range.contains(':') && !range.contains(',') {
            let parts: Vec<&str> = range.split(':').map(str::trim).collect();
            let [from, to, step] = parts[..] else {
                return Err(bad("a range is FROM:TO:STEP"));
            };
            let num = |s: &str| {
                s.parse::<f64>()
                    .ok()
                    .filter(|x| x.is_finite())
                    .ok_or_else(|| bad(&format!("`{s}` is not a number")))
            };
            let (a, b, st) = (num(from)?, num(to)?, num(step)?);
            if st <= 0.0 {
                return Err(bad("the step must be positive"));
            }
            if b < a {
                return Err(bad("FROM must not exceed TO"));
            }
            let n = ((b - a) / st * (1.0 + 1e-12)).floor() as usize + 1;
            if n > MAX_AXIS_POINTS {
                return Err(bad(&format!("{n} points (at most {MAX_AXIS_POINTS})")));
            }
            let integral = [from, to, step].iter().all(|s| s.parse::<i64>().is_ok());
            (0..n)
                .map(|i| {
                    let v = a + i as f64 * st;
                    if integral {
                        format!("{}", v.round() as i64)
                    } else {
                        // Twelve significant digits hide the sum's rounding noise.
                        format!("{}", format!("{v:.12e}").parse::<f64>().unwrap_or(v))
                    }
                })
                .collect()
        } else {
            range.split(',').map(|v| v.trim().to_string()).collect()
        };
        if values.iter().any(|v| v.is_empty()) {
            return Err(bad("an empty value"));
        }
        Ok(Axis {
            path: path.to_string(),
            values,
        })
    }
}

/// Every combination of the axes' values, the last axis varying fastest.
pub fn grid(axes: &[Axis]) -> Vec<Vec<String>> {
    let mut points = vec![Vec::new()];
    for a in axes {
        points = points
            .into_iter()
            .flat_map(|p| {
                a.values.iter().map(move |v| {
                    let mut q = p.clone();
                    q.push(v.clone());
                    q
                })
            })
            .collect();
    }
    points
}

/// The configuration of a point: `base` with the axes set to `values`.
pub fn point_config(base: &HwConfig, axes: &[Axis], values: &[String]) -> Result<HwConfig> {
    let sets: Vec<String> = axes
        .iter()
        .zip(values)
        .map(|(a, v)| format!("{}={v}", a.path))
        .collect();
    apply_overrides(base, &sets)
}

/// One point of a sweep, emulated and predicted.
#[derive(Clone, Debug)]
pub struct Point {
    /// The axes' values.
    pub values: Vec<String>,
    /// Measured against predicted.
    pub rows: Vec<Row>,
    /// The emulated network saturated (its measurements are of what it accepted).
    pub saturated: bool,
    /// The emulation stopped on a deadlock.
    pub deadlock: bool,
    /// The model's name (None: no model covers the machine).
    pub model: Option<String>,
    /// Why the model saturated, when it did.
    pub model_saturated: Option<String>,
}

/// Emulates and predicts the point `values` of `axes` over `base`.
pub fn run_point(
    base: &HwConfig,
    axes: &[Axis],
    values: &[String],
    form: PathForm,
    progress: &mut (dyn FnMut(u32, Cycle) + Send),
) -> Result<Point> {
    run_point_with_report(base, axes, values, form, progress).map(|(point, _)| point)
}

/// [`run_point`], also returning the point's full run report (for what the compare rows
/// do not show).
pub fn run_point_with_report(
    base: &HwConfig,
    axes: &[Axis],
    values: &[String],
    form: PathForm,
    progress: &mut (dyn FnMut(u32, Cycle) + Send),
) -> Result<(Point, Report)> {
    let cfg = point_config(base, axes, values)?;
    // A machine no model covers is emulated all the same.
    let model = match crate::model::outcome(&cfg, form) {
        Ok(m) => Some(m),
        Err(crate::model::ModelError::BadInput(_)) => None,
        Err(e) => return Err(e.into()),
    };
    let report = run_experiment(&cfg, progress)?;
    let mean_path = CircuitParams::from_config(&cfg).map_or(0.0, |p| p.mean_path);
    let pred = model.as_ref().and_then(|(_, p)| p.as_ref().ok());
    let point = Point {
        values: values.to_vec(),
        rows: rows(&report, pred, mean_path),
        saturated: report.saturated,
        deadlock: report.deadlock.is_some(),
        model_saturated: model.as_ref().and_then(|(_, p)| p.as_ref().err().cloned()),
        model: model.map(|(n, _)| n),
    };
    Ok((point, report))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_include_their_end_and_lists_keep_their_order() {
        let a = Axis::parse("workload.rate=0.001:0.003:0.001").unwrap();
        assert_eq!(a.values, ["0.001", "0.002", "0.003"]);
        let b = Axis::parse("switching.backoff=100:1000:300").unwrap();
        assert_eq!(b.values, ["100", "400", "700", "1000"]);
        let c = Axis::parse("switching.strategy=Hold, Drop").unwrap();
        assert_eq!(c.values, ["Hold", "Drop"]);
        assert_eq!(
            grid(&[b.clone(), c]),
            (0..8)
                .map(|i| vec![b.values[i / 2].clone(), ["Hold", "Drop"][i % 2].to_string()])
                .collect::<Vec<_>>()
        );
    }

    #[test]
    fn malformed_axes_are_refused_with_the_reason() {
        for (spec, why) in [
            ("workload.rate", "expected PATH"),
            ("=1,2", "path is empty"),
            ("x=1:2", "FROM:TO:STEP"),
            ("x=1:2:0", "positive"),
            ("x=3:2:1", "must not exceed"),
            ("x=a:2:1", "not a number"),
            ("x=1,,2", "empty value"),
            ("x=0:1e9:1", "at most"),
        ] {
            let e = Axis::parse(spec).unwrap_err().to_string();
            assert!(e.contains(why), "{spec}: {e}");
        }
    }
}
