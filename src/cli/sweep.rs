//! `routemu sweep`: the points of a grid of parameter values (axes zipped to vary
//! together where asked), each emulated with the configuration's replications and
//! predicted — or, over traces, each replaying a trace — run side by side (`--jobs`);
//! a table of the chosen quantities, a CSV of every point, and one figure per quantity
//! (SVG or PNG), drawn from the same table `routemu plot` reads back.
//!
//! Not here: axes, points, quantities and running them (`experiments::sweep`), drawing
//! (`presentation::plot`).

use crate::cli::output::{check_outputs, eprint, print, write_csv, write_json};
use crate::cli::plot::{figure_paths, write_figures};
use crate::cli::ExperimentArgs;
use crate::config::HwConfig;
use crate::experiments::replay::elastic::Overhead;
use crate::experiments::replay::ReplayMode;
use crate::experiments::sweep::{
    check_axis_paths, dimensions, point_config, points, replay_point, replay_template,
    report_template, resolve_quantity, run_point_with_report, run_points, share_jobs, Axis, Point,
    Quantity, TraceRun, REPLAY_AXES, TRACE_AXIS,
};
use crate::experiments::traces::{open_with, OpenOptions};
use crate::foundation::error::{Error, Result};
use crate::model::circuit::PathForm;
use crate::model::compare::KEYS;
use crate::presentation::plot::csv::Table;
use crate::presentation::plot::redraw::{figures, Spec, FLAGS, OFFERED};
use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};
use serde_json::Value;
use std::fmt::Write;
use std::path::Path;

/// `routemu sweep` arguments.
#[derive(Debug, Args)]
pub struct SweepArgs {
    /// Machine, workload and experiment (the base every point changes). `--jobs J` is
    /// the number of workers: points run side by side, and workers left over run each
    /// point's replications side by side; results do not depend on it.
    #[command(flatten)]
    pub exp: ExperimentArgs,
    /// A swept field: PATH=FROM:TO:STEP or PATH=a,b,c, values split at commas outside
    /// brackets and quotes, so any RON value is one value (repeatable: the points are
    /// every combination; the first is the plot's x axis unless --x says otherwise).
    #[arg(long = "param", value_name = "PATH=RANGE")]
    pub params: Vec<String>,
    /// Swept paths that vary together, value i with value i, instead of forming a grid:
    /// PATH,PATH[,...] (repeatable; equal numbers of values).
    #[arg(long = "zip", value_name = "PATH,PATH")]
    pub zip: Vec<String>,
    /// Replay this trace at every point instead of the synthetic workload (repeatable:
    /// the `trace` axis, after the --param axes); the quantities are then the replay
    /// summary's fields (`latency_mean`, `behind_max`, `cycles`, …).
    #[arg(long = "trace", value_name = "FILE")]
    pub traces: Vec<String>,
    /// Trace sweeps: elastic, open (recorded times) or deps (also wait for parents);
    /// default: elastic for DUMPI traces, open for the others, as `routemu replay`.
    #[arg(long, value_enum)]
    pub replay_mode: Option<ReplayMode>,
    /// Trace sweeps, elastic replay: factor on every compute interval (the
    /// `replay.compute_scale` axis sweeps it).
    #[arg(long, value_name = "F")]
    pub compute_scale: Option<f64>,
    /// Trace sweeps, elastic replay: the largest message sent eagerly, bytes (the
    /// `replay.eager_limit` axis sweeps it).
    #[arg(long, value_name = "BYTES")]
    pub eager_limit: Option<u64>,
    /// Trace sweeps, elastic replay: host overheads (as `routemu replay --overhead`).
    #[arg(long, value_name = "SPEC", value_parser = |s: &str| s.parse::<Overhead>())]
    pub overhead: Option<Overhead>,
    /// Trace sweeps: cycles between a parent's delivery and its child's creation (deps).
    #[arg(long)]
    pub gap: Option<u64>,
    /// Trace sweeps: cycles per trace time unit.
    #[arg(long)]
    pub time_scale: Option<f64>,
    /// Trace sweeps: bytes per flit.
    #[arg(long)]
    pub flit_bytes: Option<u64>,
    /// Trace sweeps: placement of the trace's endpoints (identity, fold, block:R,
    /// grid:AxB, random:SEED), built for each point's topology.
    #[arg(long, value_name = "NAME")]
    pub place: Option<String>,
    /// Write every point as CSV to FILE (`-`: standard output): the axes, a column group
    /// per quantity, the flags.
    #[arg(long, value_name = "FILE|-")]
    pub csv: Option<String>,
    /// Write the sweep as a JSON document to FILE (`-`: standard output): provenance,
    /// the base configuration, the axes, and every point's values and quantities (schema
    /// `routemu.sweep/1`).
    #[arg(long, value_name = "FILE|-")]
    pub json: Option<String>,
    /// Draw each quantity against x: FILE.svg or FILE.png (one quantity), else one file
    /// per quantity, FILE-QUANTITY.svg (or .png).
    #[arg(long, value_name = "FILE.svg|FILE.png")]
    pub plot: Option<String>,
    /// A quantity to measure, show and draw (repeatable): a compare key (latency,
    /// aborts, p_conflict, …, with the model's column) or any numeric field of the run
    /// report by its dotted JSON path (throughput.accepted, latency.p99,
    /// wormhole.hops_mean, …); trace sweeps: the replay summary's fields. Default:
    /// latency (trace sweeps: latency_mean).
    #[arg(long = "y", value_name = "QUANTITY")]
    pub ys: Vec<String>,
    /// The swept path drawn along x (default: the first axis); `offered`: the measured
    /// offered load (flits/node/cycle), with y = x drawn under a throughput. A swept
    /// path of names (routing, pattern) draws grouped bars.
    #[arg(long, value_name = "PATH")]
    pub x: Option<String>,
    /// Logarithmic x axis.
    #[arg(long)]
    pub log_x: bool,
    /// Logarithmic y axis (values ≤ 0 are left out).
    #[arg(long)]
    pub log_y: bool,
    /// Path-length form of the models.
    #[arg(long, value_enum, default_value_t = PathForm::Weighted)]
    pub path_form: PathForm,
}

fn cell(x: Option<f64>) -> String {
    x.map_or(String::new(), |v| format!("{v}"))
}

/// What one point gave: its values, its compare rows (synthetic sweeps) and the cells
/// of every quantity.
#[derive(Clone, Debug)]
pub struct Done {
    /// The axes' values.
    pub values: Vec<String>,
    /// The emulated point (None for a trace sweep).
    pub point: Option<Point>,
    /// Each quantity's cells, one per column suffix.
    pub cells: Vec<Vec<Option<f64>>>,
    /// Whether the point deadlocked (its cells then hold what was measured, or nothing
    /// for a trace replay).
    pub deadlock: bool,
    /// A deadlocked trace replay's description of the waits (said on standard error).
    pub waits: Option<String>,
}

/// The table of a sweep (the CSV and what figures are drawn from): the axes; for a
/// synthetic sweep every compare key's measured, 95% half-width, model, relative error and
/// whether the point is where the model was validated (1 or 0, empty where the range table
/// says nothing), then each report quantity's measured and half-width, then `saturated,
/// deadlock, model_saturated`; for a trace sweep each quantity's measured column, then
/// `deadlock`.
pub fn table(axes: &[Axis], quantities: &[Quantity], done: &[Done]) -> Table {
    let trace = axes.iter().any(|a| a.path == TRACE_AXIS);
    let mut head: Vec<String> = axes.iter().map(|a| a.path.clone()).collect();
    if !trace {
        for k in KEYS {
            for suffix in ["measured", "ci95", "model", "error", "in_range"] {
                head.push(format!("{k}_{suffix}"));
            }
        }
    }
    // Compare keys already have their columns.
    let extra: Vec<usize> = (0..quantities.len())
        .filter(|&i| !matches!(quantities[i], Quantity::Compare(_)))
        .collect();
    for &i in &extra {
        for s in quantities[i].suffixes() {
            head.push(format!("{}_{s}", quantities[i].name()));
        }
    }
    if trace {
        head.push("deadlock".into());
    } else {
        head.extend(FLAGS.map(String::from));
    }
    let rows = done
        .iter()
        .map(|d| {
            let mut line = d.values.clone();
            if let Some(p) = &d.point {
                for r in &p.rows {
                    line.extend([
                        cell(r.measured),
                        cell(r.ci95),
                        cell(r.predicted),
                        cell(r.error),
                        cell(r.in_range.map(|b| if b { 1.0 } else { 0.0 })),
                    ]);
                }
            }
            for &i in &extra {
                line.extend(d.cells[i].iter().map(|c| cell(*c)));
            }
            match &d.point {
                Some(p) => {
                    line.push(p.saturated.to_string());
                    line.push(p.deadlock.to_string());
                    line.push(p.model_saturated.is_some().to_string());
                }
                None => line.push(d.deadlock.to_string()),
            }
            line
        })
        .collect();
    Table { head, rows }
}

/// The human table: each point's values and every quantity (compare keys with the
/// model and the error).
fn summary(base: &HwConfig, axes: &[Axis], quantities: &[Quantity], done: &[Done]) -> String {
    let trace = axes.iter().any(|a| a.path == TRACE_AXIS);
    let model = done
        .iter()
        .find_map(|d| d.point.as_ref().and_then(|p| p.model.clone()));
    let mut s = String::new();
    if trace {
        let _ = writeln!(
            s,
            "routemu sweep: {} — {} point(s), each a trace replay",
            base.name,
            done.len()
        );
    } else {
        let _ = writeln!(
            s,
            "routemu sweep: {} — {} point(s), {} replication(s) each; model: {}",
            base.name,
            done.len(),
            base.experiment.replications,
            model.as_deref().unwrap_or("none for this machine")
        );
    }
    let num = |x: f64| {
        if x.fract() == 0.0 && x.abs() < 1e15 {
            format!("{x:.0}")
        } else if x.abs() < 0.01 {
            format!("{x:.3e}")
        } else {
            format!("{x:.4}")
        }
    };
    let mut head = vec![axes
        .iter()
        .map(|a| a.path.as_str())
        .collect::<Vec<_>>()
        .join(" ")];
    for q in quantities {
        head.push(q.name().to_string());
        if let Quantity::Compare(_) = q {
            head.extend(["model".into(), "error".into()]);
        }
    }
    let mut lines = vec![head];
    for d in done {
        let mut line = vec![d.values.join(" ")];
        for (q, c) in quantities.iter().zip(&d.cells) {
            line.push(match (c[0], c.get(1).copied().flatten()) {
                (Some(m), Some(h)) => format!("{} ± {}", num(m), num(h)),
                (Some(m), None) => num(m),
                _ => "n/a".into(),
            });
            if let Quantity::Compare(_) = q {
                let p = d.point.as_ref();
                line.push(c[2].map_or_else(
                    || {
                        if p.is_some_and(|p| p.model_saturated.is_some()) {
                            "saturated".into()
                        } else {
                            "—".into()
                        }
                    },
                    num,
                ));
                line.push(c[3].map_or(String::new(), |e| format!("{:+.1}%", 100.0 * e)));
            }
        }
        let saturated = d.point.as_ref().is_some_and(|p| p.saturated);
        match (saturated, d.deadlock) {
            (_, true) => line.push("(deadlock)".into()),
            (true, _) => line.push("(saturated)".into()),
            _ => {}
        }
        lines.push(line);
    }
    let cols = lines.iter().map(Vec::len).max().unwrap_or(0);
    let width: Vec<usize> = (0..cols)
        .map(|i| {
            lines
                .iter()
                .filter_map(|l| l.get(i))
                .map(|c| c.chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    for l in &lines {
        let mut out = String::from(" ");
        for (i, c) in l.iter().enumerate() {
            let pad = width[i].saturating_sub(c.chars().count());
            if i == 0 {
                out.push(' ');
                out.push_str(c);
                out.push_str(&" ".repeat(pad));
            } else {
                out.push_str("  ");
                out.push_str(&" ".repeat(pad));
                out.push_str(c);
            }
        }
        let _ = writeln!(s, "{}", out.trim_end());
    }
    // Why each saturated point is saturated (the report's saturation_reason).
    for d in done {
        if let Some(why) = d.point.as_ref().and_then(|p| p.saturation_reason.as_ref()) {
            let at: Vec<String> = axes
                .iter()
                .zip(&d.values)
                .map(|(a, v)| format!("{}={v}", a.path))
                .collect();
            let _ = writeln!(s, "  ({}: saturated: {why})", at.join(", "));
        }
    }
    s
}

/// Adds the fields of `b` missing from `a` (templates of several switching modes).
fn merge(a: &mut Value, b: &Value) {
    if let (Value::Object(x), Value::Object(y)) = (a, b) {
        for (k, v) in y {
            match x.get_mut(k) {
                Some(slot) => merge(slot, v),
                None => {
                    x.insert(k.clone(), v.clone());
                }
            }
        }
    }
}

/// The saturation search of a sweep point (`--y saturation`): the search's defaults
/// (`routemu saturation`'s), with the replications asked for by `--replications` or
/// `--set experiment.replications` (else the search's default of
/// [`crate::cli::saturation::DEFAULT_REPLICATIONS`]: an interval needs several).
fn saturation_options(
    cfg: &HwConfig,
    exp: &crate::cli::ExperimentArgs,
) -> crate::experiments::saturation::SaturationOptions {
    let set = exp
        .set
        .iter()
        .any(|s| s.split('=').next().map(str::trim) == Some("experiment.replications"));
    crate::experiments::saturation::SaturationOptions {
        replications: match exp.replications {
            Some(r) => r,
            None if set => cfg.experiment.replications,
            None => crate::cli::saturation::DEFAULT_REPLICATIONS,
        },
        ..Default::default()
    }
}

/// The JSON document of a sweep (schema `routemu.sweep/1`): the base configuration, the
/// axes and zipped groups, the quantities, and per point its values (by path), each
/// quantity's cells (by column suffix; null where there is none) and the flags.
fn document(
    base: &HwConfig,
    axes: &[Axis],
    zip: &[Vec<String>],
    quantities: &[Quantity],
    done: &[Done],
) -> Value {
    let points: Vec<Value> = done
        .iter()
        .map(|d| {
            let values: serde_json::Map<String, Value> = axes
                .iter()
                .zip(&d.values)
                .map(|(a, v)| (a.path.clone(), Value::String(v.clone())))
                .collect();
            let cells: serde_json::Map<String, Value> = quantities
                .iter()
                .zip(&d.cells)
                .map(|(q, c)| {
                    let m: serde_json::Map<String, Value> = q
                        .suffixes()
                        .iter()
                        .zip(c)
                        .map(|(s, x)| match *s {
                            // A verdict, not a number, in the JSON.
                            "in_range" => (s.to_string(), serde_json::json!(x.map(|v| v > 0.5))),
                            _ => (s.to_string(), serde_json::json!(x)),
                        })
                        .collect();
                    (q.name().to_string(), Value::Object(m))
                })
                .collect();
            let mut p = serde_json::json!({ "values": values, "quantities": cells });
            p["deadlock"] = d.deadlock.into();
            if let Some(pt) = &d.point {
                p["saturated"] = pt.saturated.into();
                p["saturation_reason"] = serde_json::json!(pt.saturation_reason);
                p["model"] = serde_json::json!(pt.model);
                p["model_saturated"] = serde_json::json!(pt.model_saturated);
            }
            p
        })
        .collect();
    serde_json::json!({
        "schema": "routemu.sweep/1",
        "config": base,
        "axes": axes.iter().map(|a| serde_json::json!({"path": a.path, "values": a.values})).collect::<Vec<_>>(),
        "zip": zip,
        "quantities": quantities.iter().map(|q| q.name()).collect::<Vec<_>>(),
        "points": points,
    })
}

/// Runs `routemu sweep`; returns the exit status.
pub fn sweep(args: &SweepArgs) -> Result<i32> {
    let base = args.exp.config()?;
    let mut axes = args
        .params
        .iter()
        .map(|p| Axis::parse(p))
        .collect::<Result<Vec<_>>>()?;
    if !args.traces.is_empty() {
        if axes.iter().any(|a| a.path == TRACE_AXIS) {
            return Err(Error::Arg(
                "give the traces either with --trace or with --param trace=…, not both".into(),
            ));
        }
        axes.push(Axis {
            path: TRACE_AXIS.into(),
            values: args.traces.clone(),
        });
    }
    if axes.is_empty() {
        return Err(Error::Arg(
            "nothing to sweep: give at least one --param PATH=VALUES (or --trace FILE)".into(),
        ));
    }
    check_axis_paths(&base, &axes)?;
    for (i, a) in axes.iter().enumerate() {
        if axes[..i].iter().any(|b| b.path == a.path) {
            return Err(Error::Arg(format!("`{}` is swept twice", a.path)));
        }
    }
    let to_stdout = [&args.csv, &args.plot, &args.json]
        .iter()
        .filter(|d| d.as_deref() == Some("-"))
        .count();
    if to_stdout > 1 {
        return Err(Error::Arg(
            "only one of --csv -, --plot - and --json - can go to standard output".into(),
        ));
    }
    let trace = axes.iter().any(|a| a.path == TRACE_AXIS);
    let trace_only = [
        (args.replay_mode.is_some(), "--replay-mode"),
        (args.gap.is_some(), "--gap"),
        (args.time_scale.is_some(), "--time-scale"),
        (args.flit_bytes.is_some(), "--flit-bytes"),
        (args.place.is_some(), "--place"),
        (args.compute_scale.is_some(), "--compute-scale"),
        (args.eager_limit.is_some(), "--eager-limit"),
        (args.overhead.is_some(), "--overhead"),
    ];
    if let (false, Some((_, flag))) = (trace, trace_only.iter().find(|(given, _)| *given)) {
        return Err(Error::Arg(format!(
            "{flag} applies to trace sweeps (--trace FILE)"
        )));
    }
    if let (false, Some(a)) = (
        trace,
        axes.iter().find(|a| REPLAY_AXES.contains(&a.path.as_str())),
    ) {
        return Err(Error::Arg(format!(
            "--param {}: an elastic replay's option, for trace sweeps (--trace FILE)",
            a.path
        )));
    }
    // Refused in an explicit open or deps mode, as by `routemu replay`.
    let elastic = crate::cli::replay::elastic_options(
        args.replay_mode.unwrap_or(ReplayMode::Elastic),
        args.compute_scale,
        args.eager_limit,
        args.overhead,
    )?;
    let zip: Vec<Vec<String>> = args
        .zip
        .iter()
        .map(|z| z.split(',').map(|p| p.trim().to_string()).collect())
        .collect();
    let dims = dimensions(&axes, &zip)?;
    let points = points(&axes, &zip)?;
    let names: Vec<String> = if args.ys.is_empty() {
        vec![if trace { "latency_mean" } else { "latency" }.to_string()]
    } else {
        let mut v: Vec<String> = Vec::new();
        for y in &args.ys {
            if !v.contains(y) {
                v.push(y.clone());
            }
        }
        v
    };
    // The figure's x and series, and its file names, are checked before emulating.
    // `--x offered` draws against the measured offered load: the load axis (the rate,
    // else the first) is the dimension it stands for.
    let offered = args.x.as_deref() == Some(OFFERED);
    if offered && trace {
        return Err(Error::Arg(format!(
            "--x {OFFERED}: a trace replay has no offered load; choose a swept path"
        )));
    }
    let x = match &args.x {
        Some(_) if offered => axes
            .iter()
            .position(|a| a.path == "workload.rate")
            .unwrap_or(0),
        Some(p) => axes.iter().position(|a| a.path == *p).ok_or_else(|| {
            let mut valid: Vec<String> = axes.iter().map(|a| a.path.clone()).collect();
            valid.push(OFFERED.into());
            crate::foundation::error::unknown("--x axis (a swept path)", p, &valid)
        })?,
        None => 0,
    };
    if let Some(dest) = &args.plot {
        // A non-numeric x (routing, pattern) is drawn as grouped bars; a log x needs
        // positive numbers.
        if args.log_x && !offered {
            if let Some(v) = axes[x]
                .values
                .iter()
                .find(|v| v.parse::<f64>().map_or(true, |x| x <= 0.0))
            {
                return Err(Error::Arg(format!(
                    "--log-x: the x axis `{}` has a value that is not positive (`{v}`)",
                    axes[x].path
                )));
            }
        }
        figure_paths(dest, &names)?;
    }
    // Every output file (each figure's too) can be written, and no two are the same.
    {
        let figures = match &args.plot {
            Some(dest) => figure_paths(dest, &names)?,
            None => Vec::new(),
        };
        let mut outputs: Vec<(&str, &str)> = Vec::new();
        outputs.extend(args.csv.iter().map(|d| ("--csv", d.as_str())));
        outputs.extend(args.json.iter().map(|d| ("--json", d.as_str())));
        outputs.extend(figures.iter().map(|d| ("--plot", d.as_str())));
        check_outputs(&outputs)?;
    }
    // Every point's configuration is checked before the first is emulated.
    let mut configs = Vec::with_capacity(points.len());
    for v in &points {
        let cfg = point_config(&base, &axes, v)?;
        crate::engine::machine::validate(&cfg)?;
        configs.push(cfg);
    }
    let run = TraceRun {
        mode: args.replay_mode,
        elastic,
        gap: args.gap.unwrap_or(8),
        time_scale: args.time_scale.unwrap_or(1.0),
        flit_bytes: args.flit_bytes.unwrap_or(8),
        place: args.place.clone(),
    };
    let template = if trace {
        for cfg in &configs {
            run.options(cfg, run.mode.unwrap_or(ReplayMode::Open))?;
        }
        // Each trace opens (and its header reads) before anything runs.
        let ax = axes
            .iter()
            .find(|a| a.path == TRACE_AXIS)
            .expect("trace axis");
        for f in &ax.values {
            open_with(Path::new(f), &OpenOptions::default())?;
        }
        replay_template()
    } else {
        // The report's shape per switching mode swept (its fields differ by mode).
        let mut t = Value::Null;
        let mut seen: Vec<String> = Vec::new();
        for cfg in &configs {
            let mode = serde_json::to_value(&cfg.switching)
                .ok()
                .and_then(|v| v.as_object().and_then(|o| o.keys().next().cloned()))
                .unwrap_or_default();
            if !seen.contains(&mode) {
                let one = report_template(cfg)?;
                if t.is_null() {
                    t = one;
                } else {
                    merge(&mut t, &one);
                }
                seen.push(mode);
            }
        }
        t
    };
    // `--x offered` needs the offered load measured (a column, not a figure).
    let mut measured = names.clone();
    if offered && !trace && !measured.iter().any(|n| n == "throughput.offered") {
        measured.push("throughput.offered".into());
    }
    let quantities = measured
        .iter()
        .map(|n| resolve_quantity(n, &template, trace))
        .collect::<Result<Vec<_>>>()?;
    let (side, per_point) = share_jobs(base.experiment.jobs, points.len());
    if !trace {
        // The points that run side by side hold their tables at once: each point's
        // estimate counts all the replications in memory together.
        for cfg in &configs {
            let mut c = cfg.clone();
            c.experiment.jobs = per_point.saturating_mul(side as u32);
            crate::experiments::memory::enforce_memory(&c, &crate::engine::machine::validate(&c)?)?;
        }
    }
    let bar = crate::cli::output::progress_wanted().then(|| {
        let b = ProgressBar::new(points.len() as u64);
        b.set_style(
            ProgressStyle::with_template(
                "{spinner} point {pos}/{len} [{bar:40}] {elapsed} ETA {eta}",
            )
            .expect("valid template")
            .progress_chars("=> "),
        );
        b
    });
    if let Some(first) = configs.first() {
        let reps = first.experiment.replications.max(1);
        crate::cli::warn_oversubscribed(first, side * per_point.min(reps) as usize);
    }
    let mut point_base = base.clone();
    point_base.experiment.jobs = per_point;
    let one = |i: usize| -> Result<Done> {
        let values = &points[i];
        if trace {
            let sum = match replay_point(&point_base, &axes, values, &run) {
                Ok(sum) => sum,
                // A deadlocked replay is this point's result, as a synthetic point's
                // deadlock is: the other points run and every output is written.
                Err(Error::Deadlock(waits)) => {
                    return Ok(Done {
                        values: values.clone(),
                        point: None,
                        cells: quantities
                            .iter()
                            .map(|q| vec![None; q.suffixes().len()])
                            .collect(),
                        deadlock: true,
                        waits: Some(waits),
                    })
                }
                Err(e) => return Err(e),
            };
            let json = serde_json::to_value(&sum).map_err(|e| Error::Arg(e.to_string()))?;
            Ok(Done {
                values: values.clone(),
                point: None,
                cells: quantities.iter().map(|q| q.replay_cells(&json)).collect(),
                deadlock: false,
                waits: None,
            })
        } else {
            let (point, report) =
                run_point_with_report(&point_base, &axes, values, args.path_form, &mut |_, _| {})?;
            let json = serde_json::to_value(&report).map_err(|e| Error::Arg(e.to_string()))?;
            let mut cells: Vec<Vec<Option<f64>>> = quantities
                .iter()
                .map(|q| q.run_cells(&point, &json))
                .collect();
            if let Some(k) = quantities.iter().position(|q| *q == Quantity::Saturation) {
                let cfg = point_config(&point_base, &axes, values)?;
                let opts = saturation_options(&cfg, &args.exp);
                let r = crate::experiments::saturation::search(&cfg, &opts, &mut |_| {})?;
                cells[k] = vec![
                    Some(r.saturation.throughput.0),
                    r.saturation.ci95.map(|c| c.0),
                ];
            }
            Ok(Done {
                values: values.clone(),
                cells,
                deadlock: point.deadlock,
                point: Some(point),
                waits: None,
            })
        }
    };
    let done = run_points(points.len(), side, &one, &|_| {
        if let Some(b) = &bar {
            b.inc(1);
        }
    });
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    let done = done?;
    let table = table(&axes, &quantities, &done);
    let figs = args.plot.as_ref().map(|_| {
        let model = done
            .iter()
            .find_map(|d| d.point.as_ref().and_then(|p| p.model.clone()));
        // The machine's topology, unless the sweep changes it.
        let machine = match crate::engine::machine::validate(&base) {
            Ok(m) if !axes.iter().any(|a| a.path.starts_with("topology")) => {
                format!("{}, {}", base.name, m.topology.describe())
            }
            _ => base.name.clone(),
        };
        let context = if trace {
            format!("{machine}, trace replay")
        } else {
            match &model {
                Some(m) => format!("{machine}; model: {m}"),
                None => machine,
            }
        } + &crate::cli::output::partial_title();
        // The other dimensions tell series apart; x's zipped partners vary with it.
        let series: Vec<String> = dims
            .iter()
            .filter(|d| !d.contains(&x))
            .flat_map(|d| d.iter().map(|&a| axes[a].path.clone()))
            .collect();
        let spec = Spec {
            x: Some(if offered {
                OFFERED.to_string()
            } else {
                axes[x].path.clone()
            }),
            // The quantities asked for, not the offered load measured for x.
            ys: quantities[..names.len()]
                .iter()
                .map(|q| q.name().to_string())
                .collect(),
            series: Some(series),
            log_x: args.log_x,
            log_y: args.log_y,
            title: String::new(),
            context,
        };
        figures(&table, &spec)
    });
    // The CSV first: a figure that cannot be drawn (nothing but saturated points, say)
    // loses no emulation; `routemu plot` redraws it from the CSV.
    if let Some(dest) = &args.csv {
        write_csv(dest, &table.to_csv())?;
    }
    if let Some(dest) = &args.json {
        write_json(dest, &document(&base, &axes, &zip, &quantities, &done))?;
    }
    if let (Some(dest), Some(figs)) = (&args.plot, figs) {
        write_figures(dest, &figs?)?;
    }
    // The files before the summary: a failing standard output loses none of them.
    let s = summary(&base, &axes, &quantities, &done);
    if to_stdout > 0 {
        eprint(&s);
    } else {
        print(&s)?;
    }
    // A deadlocked point is a deadlock, not a result: the outputs are written (the point
    // flagged), then the exit status says so.
    let deadlocked: Vec<String> = done
        .iter()
        .filter(|d| d.deadlock)
        .map(|d| d.values.join(", "))
        .collect();
    if deadlocked.is_empty() {
        Ok(0)
    } else {
        for d in done.iter().filter(|d| d.deadlock) {
            if let Some(w) = &d.waits {
                crate::cli::output::eprint(&format!(
                    "routemu: point {}: {w}\n",
                    d.values.join(", ")
                ));
            }
        }
        crate::cli::output::eprint(&format!(
            "routemu: {} point(s) deadlocked: {}\n",
            deadlocked.len(),
            deadlocked.join("; ")
        ));
        Ok(crate::cli::EXIT_DEADLOCK)
    }
}
