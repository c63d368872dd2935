//! Parameter sweeps: axes of values for configuration fields (`PATH=FROM:TO:STEP` or
//! `PATH=a,b,c`, values split at commas outside brackets and quotes, so any RON value —
//! `Uniform(min: 8, max: 16)`, `(4, 2)` — is one value), the points they make (every
//! combination, or axes zipped to vary together), the `trace` pseudo-axis (a trace file
//! replayed per point instead of the synthetic workload), one point emulated with the
//! configuration's replications and predicted by the model, the quantities a sweep can
//! measure (compare rows, any numeric field of the run report by its dotted JSON path,
//! the replay summary's fields), and running the points side by side with results in
//! point order, so they do not depend on how many run at once.
//!
//! Not here: the CSV, the table and the figures (`cli::sweep`, `presentation::plot`).

use crate::config::overrides::apply_overrides_as;
use crate::config::HwConfig;
use crate::engine::interrupt;
use crate::experiments::experiment::{aggregate, run_experiment};
use crate::experiments::replay::elastic::ElasticOptions;
use crate::experiments::replay::{replay_machine, NodeMap, Placement, ReplayMode, ReplayOptions};
use crate::experiments::replay::{RankRow, ReplaySummary};
use crate::experiments::traces::{open_with, OpenOptions};
use crate::foundation::error::unknown;
use crate::foundation::error::{Error, Result};
use crate::foundation::types::Cycle;
use crate::model::circuit::{CircuitParams, PathForm};
use crate::model::compare::{rows, Row, KEYS};
use crate::stats::report::Report;
use crate::switching::{with_mode, Mode, WithMode};
use crate::topology::Topology;
use serde_json::Value;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Mutex;

/// Most points one axis may have.
pub const MAX_AXIS_POINTS: usize = 10_000;

/// Most points a sweep may have.
pub const MAX_POINTS: usize = 100_000;

/// The pseudo-axis whose values are trace files: each point replays one (see
/// [`replay_point`]); it sets no configuration field.
pub const TRACE_AXIS: &str = "trace";

/// Pseudo-axes of a trace sweep that set the elastic replay's options rather than the
/// machine: the compute scale (a faster or slower processor) and the eager limit.
pub const REPLAY_AXES: [&str; 2] = ["replay.compute_scale", "replay.eager_limit"];

/// The axis of the offered load in flits per node per cycle (as `--load`): it sets
/// `workload.rate` to the load over the point's mean message length, after every other axis
/// (so it composes with a `workload.length` axis: each length offers the same flits).
pub const LOAD_AXIS: &str = "workload.load";

/// Whether `path` is an axis that sets no configuration field (the trace, the replay's
/// options).
pub fn is_pseudo_axis(path: &str) -> bool {
    path == TRACE_AXIS || REPLAY_AXES.contains(&path)
}

/// One swept field and its values (as `--set` would take them).
#[derive(Clone, Debug, PartialEq)]
pub struct Axis {
    /// Dotted configuration path (or [`TRACE_AXIS`]).
    pub path: String,
    /// Values in sweep order.
    pub values: Vec<String>,
}

/// Splits a list of values at the commas outside parentheses, brackets, braces and
/// double quotes, trimming each: `Uniform(min: 2, max: 6),Constant(flits: 4)` is two
/// values.
pub fn split_values(list: &str) -> std::result::Result<Vec<String>, String> {
    let (mut depth, mut quoted, mut escaped) = (0i32, false, false);
    let (mut items, mut cur) = (Vec::new(), String::new());
    for c in list.chars() {
        if quoted {
            cur.push(c);
            match c {
                _ if escaped => escaped = false,
                '\\' => escaped = true,
                '"' => quoted = false,
                _ => {}
            }
            continue;
        }
        match c {
            '"' => quoted = true,
            '(' | '[' | '{' => depth += 1,
            ')' | ']' | '}' => {
                depth -= 1;
                if depth < 0 {
                    return Err(format!("unbalanced `{c}`"));
                }
            }
            ',' if depth == 0 => {
                items.push(cur.trim().to_string());
                cur.clear();
                continue;
            }
            _ => {}
        }
        cur.push(c);
    }
    if quoted {
        return Err("a quote is not closed".into());
    }
    if depth != 0 {
        return Err("a bracket is not closed".into());
    }
    items.push(cur.trim().to_string());
    Ok(items)
}

impl Axis {
    /// Parses `PATH=FROM:TO:STEP` (TO included when the steps reach it) or `PATH=a,b,c`
    /// (values split by [`split_values`]). A value with brackets or quotes is never a
    /// range.
    pub fn parse(spec: &str) -> Result<Axis> {
        let bad = |why: &str| Error::Arg(format!("--param {spec}: {why}"));
        let (path, range) = spec
            .split_once('=')
            .ok_or_else(|| bad("expected PATH=FROM:TO:STEP or PATH=a,b,c"))?;
        let path = path.trim();
        if path.is_empty() {
            return Err(bad("the path is empty"));
        }
        let plain = !range.contains(['(', '[', '{', '"', ',']);
        let values: Vec<String> = if range.contains(':') && plain {
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
            // Counted in f64 and bounded before it becomes an integer: a tiny step makes
            // the quotient huge or infinite, which must be refused, not wrapped.
            let steps = ((b - a) / st * (1.0 + 1e-12)).floor();
            if !(steps.is_finite() && steps < MAX_AXIS_POINTS as f64) {
                let count = if steps.is_finite() {
                    format!("{:.3e}", steps + 1.0)
                } else {
                    "too many".to_string()
                };
                return Err(bad(&format!(
                    "{count} points (at most {MAX_AXIS_POINTS}); use a larger step"
                )));
            }
            let n = steps as usize + 1;
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
            split_values(range).map_err(|e| bad(&e))?
        };
        if values.iter().any(|v| v.is_empty()) {
            return Err(bad("an empty value"));
        }
        if values.len() > MAX_AXIS_POINTS {
            return Err(bad(&format!(
                "{} points (at most {MAX_AXIS_POINTS})",
                values.len()
            )));
        }
        Ok(Axis {
            path: path.to_string(),
            values,
        })
    }
}

/// Every combination of the axes' values, the last axis varying fastest.
pub fn grid(axes: &[Axis]) -> Vec<Vec<String>> {
    let dims: Vec<Vec<usize>> = (0..axes.len()).map(|i| vec![i]).collect();
    product(axes, &dims)
}

/// The sweep's dimensions: each axis alone, except that the axes of a `zip` group
/// (paths that vary together, value i with value i) form one dimension, placed where
/// its first axis is. Zipped axes must have as many values; a path is in one group at
/// most.
pub fn dimensions(axes: &[Axis], zip: &[Vec<String>]) -> Result<Vec<Vec<usize>>> {
    let index = |p: &str| {
        axes.iter().position(|a| a.path == p).ok_or_else(|| {
            let valid: Vec<String> = axes.iter().map(|a| a.path.clone()).collect();
            unknown("--zip axis (zip names swept paths)", p, &valid)
        })
    };
    let mut group_of: Vec<Option<usize>> = vec![None; axes.len()];
    let mut groups: Vec<Vec<usize>> = Vec::new();
    for g in zip {
        if g.len() < 2 {
            return Err(Error::Arg(format!(
                "--zip {}: name at least two swept paths, separated by commas",
                g.join(",")
            )));
        }
        let mut members = Vec::new();
        for p in g {
            let i = index(p)?;
            if group_of[i].is_some() {
                return Err(Error::Arg(format!("--zip: `{p}` is zipped twice")));
            }
            group_of[i] = Some(groups.len());
            members.push(i);
        }
        members.sort_unstable();
        let n = axes[members[0]].values.len();
        if let Some(&m) = members.iter().find(|&&m| axes[m].values.len() != n) {
            return Err(Error::Arg(format!(
                "--zip {}: `{}` has {} values and `{}` has {}; zipped axes vary together, value by value",
                g.join(","),
                axes[members[0]].path,
                n,
                axes[m].path,
                axes[m].values.len()
            )));
        }
        groups.push(members);
    }
    let mut dims = Vec::new();
    for (i, g) in group_of.iter().enumerate() {
        match *g {
            None => dims.push(vec![i]),
            Some(g) if groups[g][0] == i => dims.push(groups[g].clone()),
            Some(_) => {}
        }
    }
    Ok(dims)
}

/// The points of `dims` over `axes` (values in axis order), the last dimension varying
/// fastest.
pub fn product(axes: &[Axis], dims: &[Vec<usize>]) -> Vec<Vec<String>> {
    let mut points = vec![vec![String::new(); axes.len()]];
    for d in dims {
        let n = axes[d[0]].values.len();
        points = points
            .into_iter()
            .flat_map(|p| {
                (0..n).map(move |k| {
                    let mut q = p.clone();
                    for &a in d {
                        q[a] = axes[a].values[k].clone();
                    }
                    q
                })
            })
            .collect();
    }
    points
}

/// The points of a sweep: the product of its dimensions (see [`dimensions`]), at most
/// [`MAX_POINTS`].
pub fn points(axes: &[Axis], zip: &[Vec<String>]) -> Result<Vec<Vec<String>>> {
    let dims = dimensions(axes, zip)?;
    let n = dims
        .iter()
        .try_fold(1usize, |n, d| n.checked_mul(axes[d[0]].values.len()));
    match n {
        Some(n) if n <= MAX_POINTS => Ok(product(axes, &dims)),
        _ => Err(Error::Arg(format!(
            "the sweep has more than {MAX_POINTS} points"
        ))),
    }
}

/// Refuses an axis that names no configuration field and no pseudo-axis, before anything
/// runs, naming `--param` and the closest valid axes (the configuration's leaf paths and
/// the pseudo-axes, [`LOAD_AXIS`] among them).
pub fn check_axis_paths(base: &HwConfig, axes: &[Axis]) -> Result<()> {
    for a in axes {
        if is_pseudo_axis(&a.path) || a.path == LOAD_AXIS {
            continue;
        }
        // The override itself decides (paths run through enum variants' data); only an
        // unknown path is refused here, a bad value is the point's own error.
        let probe = format!("{}={}", a.path, a.values[0]);
        match apply_overrides_as(base, std::slice::from_ref(&probe), "--param") {
            Err(Error::Arg(m)) if m.contains(": unknown field `") => {}
            _ => continue,
        }
        let tree = serde_json::to_value(base).map_err(|e| Error::config(e.to_string()))?;
        let mut valid = crate::config::overrides::leaf_paths(&tree);
        valid.push(LOAD_AXIS.into());
        valid.push(TRACE_AXIS.into());
        valid.extend(REPLAY_AXES.iter().map(|s| s.to_string()));
        let close =
            crate::foundation::error::close_matches(&a.path, valid.iter().map(String::as_str));
        let hint = if close.is_empty() {
            String::new()
        } else {
            format!(" (did you mean {}?)", close.join(", "))
        };
        return Err(Error::Arg(format!(
            "--param {}: unknown field or axis{hint}; valid axes: {}",
            a.path,
            valid.join(", ")
        )));
    }
    Ok(())
}

/// The configuration of a point: `base` with the axes set to `values` (the `trace`
/// pseudo-axis sets nothing; [`LOAD_AXIS`] sets the message rate last). Errors name
/// `--param`, the flag the axes were given with.
pub fn point_config(base: &HwConfig, axes: &[Axis], values: &[String]) -> Result<HwConfig> {
    let sets: Vec<String> = axes
        .iter()
        .zip(values)
        .filter(|(a, _)| !is_pseudo_axis(&a.path) && a.path != LOAD_AXIS)
        .map(|(a, v)| format!("{}={v}", a.path))
        .collect();
    let mut cfg = apply_overrides_as(base, &sets, "--param")?;
    if let Some((_, v)) = axes.iter().zip(values).find(|(a, _)| a.path == LOAD_AXIS) {
        if axes.iter().any(|a| a.path == "workload.rate") {
            return Err(Error::Arg(format!(
                "--param {LOAD_AXIS} and --param workload.rate both set the message rate: \
                 sweep one of them"
            )));
        }
        let load = v
            .parse::<f64>()
            .ok()
            .filter(|l| l.is_finite() && *l >= 0.0)
            .ok_or_else(|| {
                Error::Arg(format!(
                    "--param {LOAD_AXIS}={v}: the offered load must be a non-negative number of \
                     flits per node per cycle"
                ))
            })?;
        // Flits per request, its reply included under request/reply traffic.
        cfg.workload.rate = load / crate::traffic::flits_per_creation(&cfg.workload)?;
    }
    Ok(cfg)
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
    /// Why (the report's `saturation_reason`; None when not saturated).
    pub saturation_reason: Option<String>,
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
    let mut rows = rows(&report, pred, mean_path);
    if let Some((_, p)) = &model {
        let range = crate::model::range::assess(&cfg, form, p.as_ref().map_err(String::as_str));
        crate::model::compare::mark_ranges(&mut rows, &range);
    }
    let point = Point {
        values: values.to_vec(),
        rows,
        saturated: report.saturated,
        saturation_reason: report.saturation_reason.clone(),
        deadlock: report.deadlock.is_some(),
        model_saturated: model.as_ref().and_then(|(_, p)| p.as_ref().err().cloned()),
        model: model.map(|(n, _)| n),
    };
    Ok((point, report))
}

/// How the points of a trace sweep replay their trace (as `routemu replay` does).
#[derive(Clone, Debug)]
pub struct TraceRun {
    /// Open loop, dependency-driven or elastic (None: elastic for MPI traces, open loop
    /// for the others, as `routemu replay`).
    pub mode: Option<ReplayMode>,
    /// The elastic replay's options (the `replay.…` axes override them per point).
    pub elastic: ElasticOptions,
    /// Cycles between a parent's delivery and its child's creation (deps mode).
    pub gap: Cycle,
    /// Cycles per trace time unit.
    pub time_scale: f64,
    /// Bytes per flit.
    pub flit_bytes: u64,
    /// Named placement of the trace's endpoints (None: identity), built per point for
    /// the point's topology.
    pub place: Option<String>,
}

impl TraceRun {
    /// The replay options in `mode` for the machine `cfg`.
    pub fn options(&self, cfg: &HwConfig, mode: ReplayMode) -> Result<ReplayOptions> {
        if !(self.time_scale > 0.0 && self.time_scale.is_finite()) {
            return Err(Error::Arg(format!(
                "--time-scale {}: must be positive",
                crate::foundation::limits::show(self.time_scale)
            )));
        }
        if self.flit_bytes == 0 {
            return Err(Error::Arg(
                "--flit-bytes 0: a flit carries at least one byte".into(),
            ));
        }
        let map = match &self.place {
            Some(p) => p
                .parse::<Placement>()?
                .build(&Topology::from_config(&cfg.topology)?)?,
            None => NodeMap::Identity,
        };
        Ok(ReplayOptions {
            mode,
            elastic: self.elastic.clone(),
            gap: self.gap,
            time_scale: self.time_scale,
            flit_bytes: self.flit_bytes,
            map,
            ..ReplayOptions::default()
        })
    }
}

/// The trace file of a point (the value of its `trace` axis).
pub fn point_trace<'a>(axes: &[Axis], values: &'a [String]) -> Option<&'a str> {
    axes.iter()
        .zip(values)
        .find(|(a, _)| a.path == TRACE_AXIS)
        .map(|(_, v)| v.as_str())
}

/// Replays the point's trace on the point's machine.
pub fn replay_point(
    base: &HwConfig,
    axes: &[Axis],
    values: &[String],
    run: &TraceRun,
) -> Result<ReplaySummary> {
    let cfg = point_config(base, axes, values)?;
    let file = point_trace(axes, values)
        .ok_or_else(|| Error::Arg("a trace sweep needs a `trace` axis".into()))?;
    let mut src = open_with(Path::new(file), &OpenOptions::default())?;
    let mode = run.mode.unwrap_or(if src.has_program() {
        ReplayMode::Elastic
    } else {
        ReplayMode::Open
    });
    let mut opts = run.options(&cfg, mode)?;
    for (a, v) in axes.iter().zip(values) {
        if !REPLAY_AXES.contains(&a.path.as_str()) {
            continue;
        }
        if mode != ReplayMode::Elastic || !src.has_program() {
            return Err(Error::Arg(format!(
                "{}: an elastic replay's option, but {file} replays {}",
                a.path,
                if mode == ReplayMode::Elastic {
                    "a message trace (elastic replay of an MPI trace has it)".to_string()
                } else {
                    format!("in {mode:?} mode").to_lowercase()
                }
            )));
        }
        let bad = || Error::Arg(format!("{}={v}: not a valid value", a.path));
        match a.path.as_str() {
            "replay.compute_scale" => {
                let f: f64 = v.trim().parse().map_err(|_| bad())?;
                if !(f >= 0.0 && f.is_finite() && f <= 1e9) {
                    return Err(bad());
                }
                opts.elastic.compute_scale = f;
            }
            _ => opts.elastic.eager_limit = v.trim().parse().map_err(|_| bad())?,
        }
    }
    replay_machine(&cfg, src.as_mut(), &opts, &mut |_| Ok(()))
}

/// Runs `n` points on `jobs` workers; `f(i)` runs point i and `done(i)` is told when it
/// has. Workers take points in order and results go back in point order, so the result
/// does not depend on `jobs`. After a failure no new point starts, and the failure of
/// the lowest-numbered point is returned. After a stop request (`engine::interrupt`) no
/// new point starts either, and the points that ran are returned.
pub fn run_points<T: Send>(
    n: usize,
    jobs: usize,
    f: &(dyn Fn(usize) -> Result<T> + Sync),
    done: &(dyn Fn(usize) + Sync),
) -> Result<Vec<T>> {
    let next = AtomicUsize::new(0);
    let failed = AtomicBool::new(false);
    let slots: Vec<Mutex<Option<Result<T>>>> = (0..n).map(|_| Mutex::new(None)).collect();
    let worker = || loop {
        let i = next.fetch_add(1, Ordering::Relaxed);
        // After a stop request no further point starts (the first always runs).
        if i >= n || failed.load(Ordering::Relaxed) || (i > 0 && interrupt::requested()) {
            break;
        }
        let r = f(i);
        if r.is_err() {
            failed.store(true, Ordering::Relaxed);
        }
        *slots[i].lock().unwrap_or_else(|e| e.into_inner()) = Some(r);
        done(i);
    };
    let jobs = jobs.clamp(1, n.max(1));
    crate::engine::parallel::on_workers(jobs, worker);
    let mut out = Vec::with_capacity(n);
    for (i, slot) in slots.into_iter().enumerate() {
        match slot.into_inner().unwrap_or_else(|e| e.into_inner()) {
            Some(r) => out.push(r?),
            // Interrupted: the points that ran, in order.
            None if interrupt::requested() => break,
            // A point is skipped only after a point taken before it failed, and that
            // failure, earlier in point order, has been returned above.
            None => {
                return Err(Error::Arg(format!(
                    "point {} was not run because another failed",
                    i + 1
                )))
            }
        }
    }
    Ok(out)
}

/// How `jobs` workers are shared among `points` points: (points side by side,
/// replications side by side within each point). Points first — they are independent
/// and need no coordination — and what is left over goes to each point's replications.
pub fn share_jobs(jobs: u32, points: usize) -> (usize, u32) {
    let jobs = jobs.max(1);
    let side = (jobs as usize).min(points.max(1));
    (side, (jobs / side as u32).max(1))
}

/// What a sweep measures at each point.
#[derive(Clone, Debug, PartialEq)]
pub enum Quantity {
    /// A compare row (`model::compare::KEYS`): measured, 95% half-width, model, error.
    Compare(&'static str),
    /// A numeric field of the run report by its dotted JSON path (array elements by
    /// index, `circuit.p_conflict_by_hop.0`), with the path of the report's own 95%
    /// half-width of it when the report has one.
    Report {
        /// Dotted path.
        path: String,
        /// The half-width's path.
        ci95: Option<String>,
    },
    /// A numeric field of the replay summary (trace sweeps).
    Replay(String),
    /// The point's saturation throughput (`--y saturation`): found by
    /// [`crate::experiments::saturation::search`] beside the point's run, with its 95%
    /// half-width over the search's replications.
    Saturation,
}

/// The `--y` name of [`Quantity::Saturation`].
pub const SATURATION: &str = "saturation";

impl Quantity {
    /// The name (the CSV column prefix).
    pub fn name(&self) -> &str {
        match self {
            Quantity::Compare(k) => k,
            Quantity::Report { path, .. } | Quantity::Replay(path) => path,
            Quantity::Saturation => SATURATION,
        }
    }

    /// The suffixes of its CSV columns (`NAME_suffix`).
    pub fn suffixes(&self) -> &'static [&'static str] {
        match self {
            Quantity::Compare(_) => &["measured", "ci95", "model", "error", "in_range"],
            Quantity::Report { .. } | Quantity::Saturation => &["measured", "ci95"],
            Quantity::Replay(_) => &["measured"],
        }
    }

    /// Its cells (one per suffix) at a point of a synthetic sweep: `report` is the
    /// point's report as JSON.
    pub fn run_cells(&self, point: &Point, report: &Value) -> Vec<Option<f64>> {
        match self {
            Quantity::Compare(k) => match point.rows.iter().find(|r| r.key == *k) {
                Some(r) => vec![
                    r.measured,
                    r.ci95,
                    r.predicted,
                    r.error,
                    r.in_range.map(|b| if b { 1.0 } else { 0.0 }),
                ],
                None => vec![None; 5],
            },
            Quantity::Report { path, ci95 } => vec![
                number(report, path),
                ci95.as_deref().and_then(|c| number(report, c)),
            ],
            // Filled in from the point's search, not its report.
            Quantity::Replay(_) => vec![None],
            Quantity::Saturation => vec![None; 2],
        }
    }

    /// Its cells at a point of a trace sweep: `summary` is the replay summary as JSON.
    pub fn replay_cells(&self, summary: &Value) -> Vec<Option<f64>> {
        match self {
            Quantity::Replay(path) => vec![number(summary, path)],
            _ => vec![None; self.suffixes().len()],
        }
    }
}

/// The value at a dotted path (object keys, array indices).
pub fn lookup<'a>(v: &'a Value, path: &str) -> Option<&'a Value> {
    path.split('.').try_fold(v, |cur, seg| match cur {
        Value::Object(m) => m.get(seg),
        Value::Array(a) => a.get(seg.parse::<usize>().ok()?),
        _ => None,
    })
}

/// The number at a dotted path (None: absent, null or not a number).
pub fn number(v: &Value, path: &str) -> Option<f64> {
    lookup(v, path).and_then(Value::as_f64)
}

/// Every numeric (or null, a number that may be absent) leaf's dotted path, in order;
/// arrays are not entered (their elements go by index).
pub fn numeric_paths(v: &Value) -> Vec<String> {
    fn walk(v: &Value, prefix: &str, out: &mut Vec<String>) {
        match v {
            Value::Object(m) => {
                for (k, x) in m {
                    let p = if prefix.is_empty() {
                        k.clone()
                    } else {
                        format!("{prefix}.{k}")
                    };
                    walk(x, &p, out);
                }
            }
            Value::Number(_) | Value::Null if !prefix.is_empty() => out.push(prefix.to_string()),
            _ => {}
        }
    }
    let mut out = Vec::new();
    walk(v, "", &mut out);
    out
}

/// The shape of the run report of a machine, without running it: the report of zero
/// replications, whose fields are all present (numbers zero or null).
pub fn report_template(cfg: &HwConfig) -> Result<Value> {
    struct Template<'a>(&'a HwConfig);
    impl WithMode for Template<'_> {
        type Output = Result<Report>;
        fn run<N: Mode + Send>(self) -> Result<Report> {
            let topology = crate::engine::machine::validate(self.0)?.topology;
            Ok(aggregate::<N>(self.0, &topology, &[], None, 0.0))
        }
    }
    let report = with_mode(&cfg.switching, Template(cfg))?;
    serde_json::to_value(&report).map_err(|e| Error::Arg(e.to_string()))
}

/// The shape of the replay summary.
pub fn replay_template() -> Value {
    // Every field present: the slowest rank as a row, so its fields are paths.
    let s = ReplaySummary {
        slowest_rank: Some(RankRow::default()),
        application: Some(crate::experiments::replay::elastic::Application {
            critical: Some(Default::default()),
            ..Default::default()
        }),
        ..ReplaySummary::default()
    };
    serde_json::to_value(&s).unwrap_or(Value::Null)
}

/// Resolves a `--y` name against a report (or, for a trace sweep, replay summary)
/// template: a compare key (synthetic sweeps), else a numeric field by dotted path. An
/// unknown name is refused with the close matches and the valid names.
pub fn resolve_quantity(name: &str, template: &Value, trace: bool) -> Result<Quantity> {
    let name = name.trim();
    if name == SATURATION && lookup(template, name).is_none() {
        if trace {
            return Err(Error::Arg(
                "--y saturation: a trace sweep replays its traces; the saturation search needs a synthetic workload".into(),
            ));
        }
        return Ok(Quantity::Saturation);
    }
    if let Some(k) = KEYS.iter().find(|k| **k == name) {
        if trace {
            return Err(Error::Arg(format!(
                "--y {name}: compare rows measure the synthetic workload; a trace sweep measures the replay summary's fields: {}",
                numeric_paths(template).join(", ")
            )));
        }
        return Ok(Quantity::Compare(k));
    }
    let valid = || {
        let mut v: Vec<String> = if trace {
            Vec::new()
        } else {
            KEYS.iter().map(|k| k.to_string()).collect()
        };
        // The report's own fields before the configuration's (`config.…`).
        let (config, own): (Vec<String>, Vec<String>) = numeric_paths(template)
            .into_iter()
            .partition(|p| p.starts_with("config."));
        v.extend(own);
        v.extend(config);
        v
    };
    let found = match lookup(template, name) {
        Some(Value::Number(_) | Value::Null) => true,
        Some(Value::Object(_)) => {
            let inner: Vec<String> = numeric_paths(lookup(template, name).unwrap_or(&Value::Null))
                .into_iter()
                .map(|p| format!("{name}.{p}"))
                .collect();
            return Err(Error::Arg(format!(
                "--y {name}: a group of fields, not a number; its numeric fields: {}",
                inner.join(", ")
            )));
        }
        Some(Value::Array(_)) => {
            return Err(Error::Arg(format!(
                "--y {name}: a list; give an element by index, e.g. {name}.0"
            )))
        }
        Some(_) => {
            return Err(Error::Arg(format!("--y {name}: not a number")));
        }
        // An element of a list that is empty in the template: checked at run time.
        None => {
            let (head, last) = name.rsplit_once('.').unwrap_or(("", name));
            matches!(lookup(template, head), Some(Value::Array(_))) && last.parse::<usize>().is_ok()
        }
    };
    if !found {
        return Err(unknown("--y quantity", name, &valid()));
    }
    if trace {
        return Ok(Quantity::Replay(name.to_string()));
    }
    // The report's own half-width: `X_ci95`, `STEM_ci95` for `STEM_mean`, `P.ci95` for
    // `P.mean`.
    let mut candidates = vec![format!("{name}_ci95")];
    if let Some(stem) = name.strip_suffix("_mean") {
        candidates.push(format!("{stem}_ci95"));
    }
    if let Some(parent) = name.strip_suffix(".mean") {
        candidates.push(format!("{parent}.ci95"));
    }
    let ci95 = candidates
        .into_iter()
        .find(|c| matches!(lookup(template, c), Some(Value::Number(_) | Value::Null)));
    Ok(Quantity::Report {
        path: name.to_string(),
        ci95,
    })
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
    fn a_range_with_too_many_or_uncountable_steps_is_refused_not_wrapped() {
        for spec in [
            "workload.rate=0.001:0.002:1e-320",
            "workload.rate=0:1e300:1e-300",
            "workload.rate=0.001:0.002:0.0000001",
        ] {
            let err = Axis::parse(spec).unwrap_err().to_string();
            assert!(err.contains("points (at most 10000)"), "{spec}: {err}");
        }
        assert_eq!(Axis::parse("x=0:9999:1").unwrap().values.len(), 10_000);
        assert!(Axis::parse("x=0:10000:1").is_err());
    }

    #[test]
    fn values_with_commas_inside_brackets_or_quotes_are_one_value() {
        let a = Axis::parse("workload.length=Uniform(min: 2, max: 6), Constant(flits: 4)").unwrap();
        assert_eq!(a.values, ["Uniform(min: 2, max: 6)", "Constant(flits: 4)"]);
        let b = Axis::parse("switching.watch=(4, 2),(1, 0)").unwrap();
        assert_eq!(b.values, ["(4, 2)", "(1, 0)"]);
        let c = Axis::parse(r#"x="a, b",[1, 2]"#).unwrap();
        assert_eq!(c.values, [r#""a, b""#, "[1, 2]"]);
        // A value with a colon inside brackets is not a range.
        let d = Axis::parse("workload.length=Exponential(mean: 24)").unwrap();
        assert_eq!(d.values, ["Exponential(mean: 24)"]);
        for bad in ["x=(1, 2", "x=1), 2", r#"x="a"#] {
            assert!(Axis::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn zipped_axes_make_one_dimension_and_must_match_in_length() {
        let a = Axis::parse("a=1,2,3").unwrap();
        let b = Axis::parse("b=x,y").unwrap();
        let c = Axis::parse("c=10,20,30").unwrap();
        let axes = [a, b, c];
        let zip = vec![vec!["a".to_string(), "c".to_string()]];
        let p = points(&axes, &zip).unwrap();
        assert_eq!(p.len(), 6, "3 zipped pairs × 2, not 3 × 2 × 3");
        assert_eq!(p[0], ["1", "x", "10"]);
        assert_eq!(p[1], ["1", "y", "10"]);
        assert_eq!(p[5], ["3", "y", "30"]);
        assert_eq!(points(&axes, &[]).unwrap().len(), 18);
        let bad = vec![vec!["a".to_string(), "b".to_string()]];
        assert!(points(&axes, &bad)
            .unwrap_err()
            .to_string()
            .contains("3 values"));
        let unknown = vec![vec!["a".to_string(), "q".to_string()]];
        assert!(points(&axes, &unknown).is_err());
    }

    #[test]
    fn jobs_go_to_points_first_then_to_replications() {
        assert_eq!(share_jobs(1, 10), (1, 1));
        assert_eq!(share_jobs(4, 10), (4, 1));
        assert_eq!(share_jobs(4, 2), (2, 2));
        assert_eq!(share_jobs(5, 2), (2, 2));
        assert_eq!(share_jobs(0, 3), (1, 1));
    }

    #[test]
    fn points_come_back_in_order_whatever_the_workers() {
        let f = |i: usize| Ok(i * i);
        for jobs in [1, 2, 5] {
            let v = run_points(7, jobs, &f, &|_| {}).unwrap();
            assert_eq!(v, (0..7).map(|i| i * i).collect::<Vec<_>>());
        }
        let g = |i: usize| {
            if i == 3 {
                Err(Error::Arg("three".into()))
            } else {
                Ok(i)
            }
        };
        assert!(run_points(7, 2, &g, &|_| {})
            .unwrap_err()
            .to_string()
            .contains("three"));
    }

    #[test]
    fn the_load_axis_offers_the_same_flits_whatever_the_length_axis() {
        let base = crate::config::load::parse_hw(
            "(topology: Torus(k: 4, n: 2), switching: Wormhole(routing: Adaptive))",
            "t",
        )
        .unwrap();
        let load = Axis::parse("workload.load=0.1,0.3").unwrap();
        let length =
            Axis::parse("workload.length=Constant(flits: 4), Exponential(mean: 20)").unwrap();
        // The load axis comes first, yet it is applied after the length axis.
        let axes = [load, length];
        for values in points(&axes, &[]).unwrap() {
            let cfg = point_config(&base, &axes, &values).unwrap();
            let mean = crate::traffic::length::LengthDist::new(&cfg.workload.length)
                .unwrap()
                .mean();
            let want: f64 = values[0].parse().unwrap();
            assert!(
                (cfg.workload.rate * mean - want).abs() < 1e-12,
                "{values:?}"
            );
        }
        let with_rate = [
            Axis::parse("workload.load=0.1").unwrap(),
            Axis::parse("workload.rate=0.01").unwrap(),
        ];
        let e = point_config(&base, &with_rate, &["0.1".into(), "0.01".into()]).unwrap_err();
        assert!(e.to_string().contains("sweep one of them"), "{e}");
        let negative = [Axis::parse("workload.load=-0.1").unwrap()];
        let e = point_config(&base, &negative, &["-0.1".into()]).unwrap_err();
        assert!(
            e.to_string()
                .starts_with("invalid argument: --param workload.load=-0.1"),
            "{e}"
        );
    }

    #[test]
    fn an_unknown_axis_is_refused_naming_param_and_the_closest_axes() {
        let base = crate::config::load::parse_hw(
            "(topology: Torus(k: 4, n: 2), switching: Wormhole(routing: Adaptive))",
            "t",
        )
        .unwrap();
        let e = check_axis_paths(&base, &[Axis::parse("workload.laod=0.1").unwrap()])
            .unwrap_err()
            .to_string();
        assert!(e.contains("--param workload.laod"), "{e}");
        assert!(e.contains("did you mean workload.load"), "{e}");
        assert!(!e.contains("--set"), "{e}");
        for fine in [
            "workload.load=0.1",
            "trace=a.txt",
            "topology.k=4,8",
            "workload.rate=x",
        ] {
            check_axis_paths(&base, &[Axis::parse(fine).unwrap()]).unwrap();
        }
        // A bad value on a real field is the point's error, and names --param too.
        let axes = [Axis::parse("workload.rate=x").unwrap()];
        let e = point_config(&base, &axes, &["x".into()])
            .unwrap_err()
            .to_string();
        assert!(e.contains("--param workload.rate=x"), "{e}");
    }

    #[test]
    fn quantities_resolve_to_report_paths_with_their_half_widths() {
        let cfg = crate::config::load::parse_hw(
            "(topology: Torus(k: 4, n: 2), switching: Wormhole(routing: Adaptive))",
            "t",
        )
        .unwrap();
        let t = report_template(&cfg).unwrap();
        assert_eq!(
            resolve_quantity("latency", &t, false).unwrap(),
            Quantity::Compare("latency")
        );
        assert_eq!(
            resolve_quantity("latency.mean", &t, false).unwrap(),
            Quantity::Report {
                path: "latency.mean".into(),
                ci95: Some("latency.ci95".into())
            }
        );
        assert_eq!(
            resolve_quantity("throughput.accepted", &t, false).unwrap(),
            Quantity::Report {
                path: "throughput.accepted".into(),
                ci95: Some("throughput.accepted_ci95".into())
            }
        );
        assert!(matches!(
            resolve_quantity("wormhole.hops_mean", &t, false).unwrap(),
            Quantity::Report { ci95: None, .. }
        ));
        let e = resolve_quantity("wormhole.hop_mean", &t, false)
            .unwrap_err()
            .to_string();
        assert!(e.contains("did you mean wormhole.hops_mean"), "{e}");
        let e = resolve_quantity("throughput", &t, false)
            .unwrap_err()
            .to_string();
        assert!(e.contains("throughput.accepted"), "{e}");
        let r = replay_template();
        assert_eq!(
            resolve_quantity("latency_mean", &r, true).unwrap(),
            Quantity::Replay("latency_mean".into())
        );
        assert!(resolve_quantity("latency", &r, true).is_err());
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
