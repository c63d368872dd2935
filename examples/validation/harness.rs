//! The figure machinery shared by the sections of papers 000/001 (circuit switching on
//! hypercubes) and 004 (adaptive wormhole on tori): a figure is a set of curves, each a
//! function from the swept x to `--set` overrides of a preset. Every point is emulated
//! with replications and predicted by routemu's model through `run_point`, then drawn
//! (emulated with 95% intervals, model line, the paper's own numbers where its text
//! gives them, saturated points marked on the top edge) and tabulated with its error.
//! What each figure shows and what its findings are belongs to the paper's module.

use routemu::config::load::load_hw;
use routemu::config::overrides::apply_overrides;
use routemu::config::HwConfig;
use routemu::experiments::sweep::{run_point_with_report, Point};
use routemu::model::circuit::PathForm;
use routemu::presentation::plot::{svg, Figure, Series};
use routemu::stats::report::Report;
use std::fmt::Write;
use std::path::Path;

/// One curve of a figure: its label and the overrides of each x value.
pub struct Curve {
    pub label: String,
    pub sets: Box<dyn Fn(f64) -> Vec<String>>,
    /// The paper's own numbers for this curve (x, y), where its text gives them.
    pub paper: Vec<(f64, f64)>,
}

/// One figure: a preset, the swept x values and the curves.
pub struct Fig {
    pub id: &'static str,
    pub title: &'static str,
    pub preset: &'static str,
    pub x_label: &'static str,
    /// Displayed x values (the papers' units).
    pub xs: Vec<f64>,
    /// Key of the compare row drawn (`latency`, `aborts`, ...).
    pub y: &'static str,
    pub curves: Vec<Curve>,
}

/// A curve without the paper's numbers.
pub fn curve(label: &str, sets: impl Fn(f64) -> Vec<String> + 'static) -> Curve {
    Curve {
        label: label.to_string(),
        sets: Box::new(sets),
        paper: Vec::new(),
    }
}

/// `v` followed by `more`.
pub fn with(mut v: Vec<String>, more: &[String]) -> Vec<String> {
    v.extend_from_slice(more);
    v
}

/// One emulated and predicted point.
pub struct Done {
    pub fig: usize,
    pub curve: usize,
    pub x: f64,
    pub point: Point,
    /// The point's configuration and full run report (kept by [`run_reports`] only).
    pub full: Option<Box<(HwConfig, Report)>>,
}

/// How long each emulated point runs.
#[derive(Clone, Copy)]
pub struct Budget {
    pub replications: u32,
    pub warmup: u64,
    pub cycles: u64,
}

/// Emulates and predicts every point of `figs`, the presets read from `root/hw`.
pub fn run(
    root: &Path,
    figs: &[Fig],
    budget: Budget,
) -> Result<Vec<Done>, Box<dyn std::error::Error>> {
    emulate(root, figs, budget, false)
}

/// Like [`run`], keeping each point's configuration and full report (for tables of
/// what the compare rows do not show, and for other readings of a model).
pub fn run_reports(
    root: &Path,
    figs: &[Fig],
    budget: Budget,
) -> Result<Vec<Done>, Box<dyn std::error::Error>> {
    emulate(root, figs, budget, true)
}

/// Every point of `figs`, with its configuration and report if `keep`.
fn emulate(
    root: &Path,
    figs: &[Fig],
    budget: Budget,
    keep: bool,
) -> Result<Vec<Done>, Box<dyn std::error::Error>> {
    let mut done = Vec::new();
    for (fi, f) in figs.iter().enumerate() {
        let base = load_hw(&root.join("hw").join(f.preset))?;
        for (ci, c) in f.curves.iter().enumerate() {
            for &x in &f.xs {
                let mut cfg: HwConfig = apply_overrides(&base, &(c.sets)(x))?;
                let e = &mut cfg.experiment;
                e.jobs = 2;
                e.replications = budget.replications;
                e.warmup = budget.warmup;
                e.measure = routemu::config::Measure::Cycles(budget.cycles);
                let (point, report) =
                    run_point_with_report(&cfg, &[], &[], PathForm::Weighted, &mut |_, _| {})?;
                eprintln!(
                    "{} {} x={x}: {:?}",
                    f.id,
                    c.label,
                    point
                        .rows
                        .iter()
                        .find(|r| r.key == f.y)
                        .map(|r| (r.measured, r.predicted))
                );
                done.push(Done {
                    fig: fi,
                    curve: ci,
                    x,
                    point,
                    full: keep.then(|| Box::new((cfg, report))),
                });
            }
        }
    }
    Ok(done)
}

/// Writes each figure's SVG into `out_dir` and returns its markdown: a heading, the
/// figure, the table of emulated, model and error per point, the median and largest
/// error.
pub fn render(
    figs: &[Fig],
    done: &[Done],
    out_dir: &Path,
) -> Result<String, Box<dyn std::error::Error>> {
    render_extra(figs, done, out_dir, &|_| Vec::new())
}

/// [`render`] with more series drawn on figure `i`: `extra(i)` (another reading of a
/// model, say; their values are tabulated by the caller).
pub fn render_extra(
    figs: &[Fig],
    done: &[Done],
    out_dir: &Path,
    extra: &dyn Fn(usize) -> Vec<Series>,
) -> Result<String, Box<dyn std::error::Error>> {
    let mut md = String::new();
    for (fi, f) in figs.iter().enumerate() {
        let y_label = done
            .iter()
            .find(|d| d.fig == fi)
            .and_then(|d| d.point.rows.iter().find(|r| r.key == f.y))
            .map_or(f.y, |r| r.label);
        let mut fig = Figure {
            title: f.title.to_string(),
            x_label: f.x_label.to_string(),
            y_label: y_label.to_string(),
            ..Figure::default()
        };
        let _ = writeln!(
            md,
            "## {}\n\n![{}](validation/{}.svg)\n",
            f.title, f.id, f.id
        );
        let _ = writeln!(
            md,
            "| {} | curve | emulated | model | error |\n|---|---|---|---|---|",
            f.x_label
        );
        let mut errors = Vec::new();
        for (ci, c) in f.curves.iter().enumerate() {
            let mut s = Series {
                label: c.label.clone(),
                paper: c.paper.clone(),
                ..Series::default()
            };
            for d in done.iter().filter(|d| d.fig == fi && d.curve == ci) {
                let r = d.point.rows.iter().find(|r| r.key == f.y).expect("row");
                match r.measured {
                    // A saturated point's mean is that of the messages that got through
                    // in the window: marked, not drawn as a value.
                    Some(_) if d.point.saturated => s.saturated.push(d.x),
                    Some(m) => s.measured.push((d.x, m, r.ci95)),
                    None => {}
                }
                if let Some(p) = r.predicted {
                    s.model.push((d.x, p));
                }
                if let Some(e) = r.error {
                    errors.push(e.abs());
                }
                let _ = writeln!(
                    md,
                    "| {} | {} | {}{} | {} | {} |",
                    d.x,
                    c.label,
                    match (r.measured, r.ci95) {
                        (Some(m), Some(ci)) => format!("{m:.4} ± {ci:.4}"),
                        (Some(m), None) => format!("{m:.4}"),
                        _ => "n/a".into(),
                    },
                    if d.point.saturated { " *sat*" } else { "" },
                    r.predicted.map_or(
                        if d.point.model_saturated.is_some() {
                            "saturated".into()
                        } else {
                            "—".into()
                        },
                        |p| format!("{p:.4}")
                    ),
                    r.error
                        .map_or(String::new(), |e| format!("{:+.1}%", 100.0 * e))
                );
            }
            fig.series.push(s);
        }
        fig.series.extend(extra(fi));
        // Curves that span more than a decade (a knee towards saturation) are drawn on a
        // log axis, so the light-load points stay readable.
        let ys: Vec<f64> = fig
            .series
            .iter()
            .flat_map(|s| {
                s.measured
                    .iter()
                    .map(|p| p.1)
                    .chain(s.model.iter().map(|p| p.1))
            })
            .collect();
        let lo = ys.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = ys.iter().copied().fold(0.0, f64::max);
        fig.log_y = lo > 0.0 && hi / lo > 10.0;
        errors.sort_by(f64::total_cmp);
        if !errors.is_empty() {
            let _ = writeln!(
                md,
                "\nMedian |error| {:.1}%, largest {:.1}% over {} points.\n",
                100.0 * errors[errors.len() / 2],
                100.0 * errors[errors.len() - 1],
                errors.len()
            );
        }
        std::fs::write(out_dir.join(format!("{}.svg", f.id)), svg(&fig)?)?;
    }
    Ok(md)
}

/// The emulated value of figure `id`, curve `label`, at x (infinite where saturated).
pub fn value(figs: &[Fig], done: &[Done], id: &str, label: &str, x: f64, key: &str) -> Option<f64> {
    let fi = figs.iter().position(|f| f.id == id)?;
    let ci = figs[fi].curves.iter().position(|c| c.label == label)?;
    let d = done
        .iter()
        .find(|d| d.fig == fi && d.curve == ci && (d.x - x).abs() < 1e-12)?;
    if d.point.saturated {
        return Some(f64::INFINITY);
    }
    d.point.rows.iter().find(|r| r.key == key)?.measured
}
