//! `routemu sweep`: a grid of parameter values, every point emulated (with the
//! configuration's replications) and predicted; a table, CSV and an SVG figure of one
//! quantity against the first parameter (emulated means with 95% bars, the model's
//! curve), with a progress bar over the points.

use super::output::write_output;
use super::ExperimentArgs;
use crate::engine::sweep::{grid, point_config, run_point, Axis, Point};
use crate::error::{Error, Result};
use crate::model::circuit::PathForm;
use crate::model::compare::KEYS;
use crate::stats::plot::{svg, Figure, Series};
use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};
use std::fmt::Write;
use std::io::IsTerminal;

/// `routemu sweep` arguments.
#[derive(Debug, Args)]
pub struct SweepArgs {
    /// Machine, workload and experiment (the base every point changes).
    #[command(flatten)]
    pub exp: ExperimentArgs,
    /// A swept field: PATH=FROM:TO:STEP or PATH=a,b,c (repeatable: the points are the
    /// grid of every combination; the first is the plot's x axis).
    #[arg(long = "param", value_name = "PATH=RANGE", required = true)]
    pub params: Vec<String>,
    /// Write every point's measured, model and error columns as CSV to FILE (`-`:
    /// standard output).
    #[arg(long, value_name = "FILE|-")]
    pub csv: Option<String>,
    /// Draw the quantity `--y` against the first parameter as an SVG figure.
    #[arg(long, value_name = "FILE.svg")]
    pub plot: Option<String>,
    /// The quantity the table and the plot show (one of the CSV column prefixes).
    #[arg(long, default_value = "latency", value_parser = clap::builder::PossibleValuesParser::new(KEYS))]
    pub y: String,
    /// Path-length form of the models.
    #[arg(long, value_enum, default_value_t = PathForm::Weighted)]
    pub path_form: PathForm,
}

fn cell(x: Option<f64>) -> String {
    x.map_or(String::new(), |v| format!("{v}"))
}

/// The CSV of a sweep: the parameters, then measured, 95% half-width, model and relative
/// error of every quantity, then the saturation flags.
pub fn csv(axes: &[Axis], points: &[Point]) -> String {
    let mut s = String::new();
    let mut head: Vec<String> = axes.iter().map(|a| a.path.clone()).collect();
    for k in KEYS {
        for suffix in ["measured", "ci95", "model", "error"] {
            head.push(format!("{k}_{suffix}"));
        }
    }
    head.extend(["saturated", "deadlock", "model_saturated"].map(String::from));
    let _ = writeln!(s, "{}", head.join(","));
    for p in points {
        let mut line: Vec<String> = p.values.clone();
        for r in &p.rows {
            line.extend([
                cell(r.measured),
                cell(r.ci95),
                cell(r.predicted),
                cell(r.error),
            ]);
        }
        line.push(p.saturated.to_string());
        line.push(p.deadlock.to_string());
        line.push(p.model_saturated.is_some().to_string());
        let _ = writeln!(s, "{}", line.join(","));
    }
    s
}

/// The figure of quantity `key` against the first axis, one series per combination of
/// the other axes.
pub fn figure(title: &str, axes: &[Axis], points: &[Point], key: &str) -> Result<Figure> {
    let mut series: Vec<Series> = Vec::new();
    let mut label_of = Vec::new();
    let mut y_label = key.to_string();
    for p in points {
        let x: f64 = p.values[0].parse().map_err(|_| {
            Error::Arg(format!(
                "--plot: the first parameter's values must be numbers (`{}`)",
                p.values[0]
            ))
        })?;
        let label = axes[1..]
            .iter()
            .zip(&p.values[1..])
            .map(|(a, v)| format!("{}={v}", a.path))
            .collect::<Vec<_>>()
            .join(", ");
        let i = match label_of.iter().position(|l| *l == label) {
            Some(i) => i,
            None => {
                label_of.push(label.clone());
                series.push(Series {
                    label,
                    ..Series::default()
                });
                series.len() - 1
            }
        };
        let r = p
            .rows
            .iter()
            .find(|r| r.key == key)
            .expect("every point has every row");
        y_label = r.label.to_string();
        match r.measured {
            // A saturated point's mean covers only what got through: marked, not drawn.
            Some(_) if p.saturated => series[i].saturated.push(x),
            Some(m) => series[i].measured.push((x, m, r.ci95)),
            None => {}
        }
        if let Some(v) = r.predicted {
            series[i].model.push((x, v));
        }
    }
    Ok(Figure {
        title: title.to_string(),
        x_label: axes[0].path.clone(),
        y_label,
        series,
        log_y: false,
    })
}

/// Runs `routemu sweep`; returns the exit status.
pub fn sweep(args: &SweepArgs) -> Result<i32> {
    let base = args.exp.config()?;
    let axes = args
        .params
        .iter()
        .map(|p| Axis::parse(p))
        .collect::<Result<Vec<_>>>()?;
    let points = grid(&axes);
    if args.plot.is_some() {
        if let Some(v) = axes[0].values.iter().find(|v| v.parse::<f64>().is_err()) {
            return Err(Error::Arg(format!(
                "--plot: the first parameter's values must be numbers (`{v}`)"
            )));
        }
    }
    // Every point's configuration is checked before the first is emulated.
    for v in &points {
        let cfg = point_config(&base, &axes, v)?;
        crate::config::validate::validate(&cfg)?;
    }
    let bar = std::io::stderr().is_terminal().then(|| {
        let b = ProgressBar::new(points.len() as u64);
        b.set_style(
            ProgressStyle::with_template("{spinner} point {pos}/{len} {msg} [{bar:40}] {elapsed}")
                .expect("valid template")
                .progress_chars("=> "),
        );
        b
    });
    let mut done = Vec::with_capacity(points.len());
    for v in &points {
        if let Some(b) = &bar {
            b.set_message(v.join(" "));
        }
        done.push(run_point(&base, &axes, v, args.path_form, &mut |_, _| {})?);
        if let Some(b) = &bar {
            b.inc(1);
        }
    }
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    let model = done.iter().find_map(|p| p.model.clone());
    let mut s = String::new();
    let _ = writeln!(
        s,
        "routemu sweep: {} — {} point(s), {} replication(s) each; model: {}",
        base.name,
        done.len(),
        base.experiment.replications,
        model.as_deref().unwrap_or("none for this machine")
    );
    let names: Vec<&str> = axes.iter().map(|a| a.path.as_str()).collect();
    let _ = writeln!(
        s,
        "  {:<30} {:>24} {:>12} {:>9}  ({})",
        names.join(" "),
        "measured",
        "model",
        "error",
        args.y
    );
    for p in &done {
        let r = p.rows.iter().find(|r| r.key == args.y).expect("row");
        let m = match (r.measured, r.ci95) {
            (Some(m), Some(c)) => format!("{m:.4} ± {c:.4}"),
            (Some(m), None) => format!("{m:.4}"),
            _ => "n/a".into(),
        };
        let pr = r.predicted.map_or(
            if p.model_saturated.is_some() {
                "saturated".into()
            } else {
                "—".into()
            },
            |v| format!("{v:.4}"),
        );
        let e = r
            .error
            .map_or(String::new(), |e| format!("{:+.1}%", 100.0 * e));
        let flag = match (p.saturated, p.deadlock) {
            (_, true) => " (deadlock)",
            (true, _) => " (saturated)",
            _ => "",
        };
        let _ = writeln!(
            s,
            "  {:<30} {m:>24} {pr:>12} {e:>9}{flag}",
            p.values.join(" ")
        );
    }
    let to_stdout = args.csv.as_deref() == Some("-");
    if to_stdout {
        eprint!("{s}");
    } else {
        print!("{s}");
    }
    if let Some(dest) = &args.plot {
        let title = format!("{} — {}", base.name, model.as_deref().unwrap_or("emulated"));
        let fig = figure(&title, &axes, &done, &args.y)?;
        write_output(dest, &svg(&fig)?)?;
    }
    if let Some(dest) = &args.csv {
        write_output(dest, &csv(&axes, &done))?;
    }
    Ok(0)
}
