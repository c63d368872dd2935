//! Figures from a table: a sweep's CSV (or the same table in memory, so `sweep --plot`
//! and `routemu plot sweep.csv` draw the same figure) or any CSV routemu writes — a
//! time series (`run --series`), a latency distribution (`--latency-dist`), a message
//! log (`--message-log`, `replay --messages`) — or any other numeric CSV. One figure
//! per y quantity.
//!
//! A sweep table has its axes first, then a column group per quantity —
//! `Y_measured`, optionally `Y_ci95`, `Y_model` (and `Y_error`, not drawn) — and the
//! flags `saturated`, `deadlock`, `model_saturated`. A saturated point of a rate
//! (throughput, utilisation: `units::saturated`) is drawn at its value with the
//! saturated marker, its plateau on the curve; of anything else (a latency) it is an
//! arrow on the top edge, left out of the curve (its mean covers only what got
//! through). A deadlocked point is left out. Where `model_saturated` turns true a
//! series' model stops: marked. `--x offered` draws against the measured offered load
//! (`throughput.offered`), with the diagonal y = x under a throughput of the same unit.
//!
//! Defaults, each overridable: x is the first numeric axis (a time series: `start`; a
//! latency distribution: `value`; a message log: `created`; generic: the first numeric
//! column); a non-numeric x makes grouped bars, one slot per value. The series are the
//! other axes, less those that vary with x (a zipped partner), so a grid gives one
//! curve per combination (a latency distribution: its `quantity`; generic: any text
//! column with at most 8 values). y is the first quantity with a value (a time series:
//! one figure each for `offered`, `accepted`, `latency_mean` and `backlog`, with the
//! end of the warm-up marked; a distribution: `cdf`; a log: `latency`; generic: the
//! first numeric column other than x, `start`, `end` and `replications`). The title,
//! unless given, says what the figure shows: "Y vs X — context".
//!
//! Not here: reading CSV (`csv`), units and labels (`units`), drawing (the parent
//! module).

use crate::foundation::error::{unknown, Error, Result};
use crate::presentation::plot::csv::Table;
use crate::presentation::plot::{units, Figure, Series};

/// What to draw from a table; None and empty lists take the defaults above.
#[derive(Clone, Debug, Default)]
pub struct Spec {
    /// The x column.
    pub x: Option<String>,
    /// The quantities, one figure each (a group name or a numeric column).
    pub ys: Vec<String>,
    /// The columns whose values tell series apart (`Some(vec![])`: one series).
    pub series: Option<Vec<String>>,
    /// Logarithmic x axis.
    pub log_x: bool,
    /// Logarithmic y axis.
    pub log_y: bool,
    /// Figure title (empty: "Y vs X", followed by ` — context` when there is one).
    pub title: String,
    /// What the figures are of (the machine, the model), for the default titles.
    pub context: String,
}

/// The name `--x` takes for the measured offered load.
pub const OFFERED: &str = "offered";

/// A quantity's columns in a sweep table.
#[derive(Clone, Debug, PartialEq)]
pub struct Group {
    /// The quantity (`latency`, `throughput.accepted`, …).
    pub name: String,
    /// Its `_measured` column.
    pub measured: usize,
    /// Its `_ci95` column.
    pub ci95: Option<usize>,
    /// Its `_model` column.
    pub model: Option<usize>,
    /// Its `_in_range` column: 1 where the model was validated at the point, 0 where not
    /// (`model::range`).
    pub in_range: Option<usize>,
}

/// Columns that flag a sweep point rather than measure it.
pub const FLAGS: [&str; 3] = ["saturated", "deadlock", "model_saturated"];

/// What a table's columns are.
#[derive(Clone, Debug, Default)]
pub struct Layout {
    /// Quantity groups (`Y_measured` …), in column order.
    pub groups: Vec<Group>,
    /// Axis columns: those before the first group (sweep tables only).
    pub axes: Vec<usize>,
    /// The `saturated` column.
    pub saturated: Option<usize>,
    /// The `deadlock` column.
    pub deadlock: Option<usize>,
}

impl Layout {
    /// Reads the layout from the header.
    pub fn of(t: &Table) -> Layout {
        let mut groups = Vec::new();
        for (i, h) in t.head.iter().enumerate() {
            if let Some(name) = h.strip_suffix("_measured") {
                groups.push(Group {
                    name: name.to_string(),
                    measured: i,
                    ci95: t.column(&format!("{name}_ci95")),
                    model: t.column(&format!("{name}_model")),
                    in_range: t.column(&format!("{name}_in_range")),
                });
            }
        }
        let first = groups.iter().map(|g| g.measured).min();
        let axes = match first {
            Some(f) => (0..f)
                .filter(|&i| !FLAGS.contains(&t.head[i].as_str()))
                .collect(),
            None => Vec::new(),
        };
        Layout {
            groups,
            axes,
            saturated: t.column("saturated"),
            deadlock: t.column("deadlock"),
        }
    }

    /// Whether column `i` belongs to a group or is a flag.
    fn taken(&self, t: &Table, i: usize) -> bool {
        let h = &t.head[i];
        FLAGS.contains(&h.as_str())
            || self.groups.iter().any(|g| {
                ["measured", "ci95", "model", "error", "in_range"]
                    .iter()
                    .any(|s| *h == format!("{}_{s}", g.name))
            })
    }
}

/// What kind of CSV a table is, from its header: each kind has its own defaults.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    /// A sweep's table (`Y_measured` groups).
    Sweep,
    /// `run --series`: one row per interval (`start, end, phase, …`).
    TimeSeries,
    /// `--latency-dist`: `quantity, value, count, cumulative, cdf`.
    LatencyDist,
    /// `--message-log` or `replay --messages`: one row per message.
    MessageLog,
    /// Anything else.
    Generic,
}

impl Kind {
    fn of(t: &Table, layout: &Layout) -> Kind {
        let has = |c: &str| t.column(c).is_some();
        if !layout.groups.is_empty() {
            Kind::Sweep
        } else if has("start") && has("end") && has("phase") {
            Kind::TimeSeries
        } else if t.head == ["quantity", "value", "count", "cumulative", "cdf"] {
            Kind::LatencyDist
        } else if has("created") && has("delivered") && has("latency") && has("src") {
            Kind::MessageLog
        } else {
            Kind::Generic
        }
    }

    /// A column's axis label: log and distribution columns are times in cycles.
    fn label(self, name: &str) -> String {
        match self {
            Kind::LatencyDist | Kind::MessageLog => units::log_label(name),
            _ => units::label(name),
        }
    }

    /// A column's quantity in words, for titles.
    fn quantity(self, name: &str) -> String {
        let l = self.label(name);
        match l.rfind(" (") {
            Some(i) if l.ends_with(')') && !l.contains(" | ") => l[..i].to_string(),
            _ => units::quantity(name),
        }
    }
}

/// A y quantity resolved to its columns.
struct Quantity {
    name: String,
    measured: usize,
    ci95: Option<usize>,
    model: Option<usize>,
    in_range: Option<usize>,
}

/// A table read for drawing.
struct View<'a> {
    t: &'a Table,
    layout: Layout,
    kind: Kind,
    /// Numeric columns (their values), by index.
    numbers: Vec<Option<Vec<Option<f64>>>>,
}

/// The most values a text column may have to tell series apart by default.
const SERIES_VALUES: usize = 8;

/// Columns never drawn by default: counts of the run's bookkeeping.
const NOT_DEFAULT: [&str; 4] = ["start", "end", "replications", "replication"];

impl<'a> View<'a> {
    fn new(t: &'a Table) -> View<'a> {
        let layout = Layout::of(t);
        View {
            t,
            kind: Kind::of(t, &layout),
            layout,
            numbers: (0..t.head.len()).map(|i| t.numbers(i)).collect(),
        }
    }

    fn column(&self, name: &str, what: &str) -> Result<usize> {
        self.t
            .column(name)
            .ok_or_else(|| unknown(what, name, &self.t.head))
    }

    /// The x column `name`: a column, or `offered` for a sweep's measured offered load.
    fn x_column(&self, name: &str) -> Result<usize> {
        if name == OFFERED && self.t.column(name).is_none() {
            let group = format!("throughput.{OFFERED}");
            return match self.layout.groups.iter().find(|g| g.name == group) {
                Some(g) => Ok(g.measured),
                None => Err(Error::Arg(format!(
                    "--x {OFFERED}: the table has no `{group}_measured` column (measure it: \
                     `sweep --y {group}`)"
                ))),
            };
        }
        self.column(name, "x column")
    }

    /// Every quantity the table offers as y.
    fn quantities(&self) -> Vec<String> {
        let mut v: Vec<String> = self.layout.groups.iter().map(|g| g.name.clone()).collect();
        for (i, h) in self.t.head.iter().enumerate() {
            if self.numbers[i].is_some()
                && !self.layout.taken(self.t, i)
                && !self.layout.axes.contains(&i)
            {
                v.push(h.clone());
            }
        }
        v
    }

    fn quantity(&self, name: &str) -> Result<Quantity> {
        if let Some(g) = self.layout.groups.iter().find(|g| g.name == name) {
            return Ok(Quantity {
                name: g.name.clone(),
                measured: g.measured,
                ci95: g.ci95,
                model: g.model,
                in_range: g.in_range,
            });
        }
        match self.t.column(name) {
            Some(i) if self.numbers[i].is_some() => Ok(Quantity {
                name: name.to_string(),
                measured: i,
                ci95: self
                    .t
                    .column(&format!("{name}_ci95"))
                    .filter(|&c| self.numbers[c].is_some()),
                model: None,
                in_range: None,
            }),
            Some(_) => Err(Error::Arg(format!(
                "column `{name}` holds no numbers to draw"
            ))),
            None => Err(unknown("quantity", name, &self.quantities())),
        }
    }

    fn default_x(&self) -> Result<usize> {
        let numeric = |i: &usize| self.numbers[*i].is_some();
        let named = |n: &str| self.t.column(n).filter(numeric);
        let found = match self.kind {
            Kind::Sweep => self
                .layout
                .axes
                .iter()
                .copied()
                .find(numeric)
                .or_else(|| self.layout.axes.first().copied()),
            Kind::TimeSeries => named("start"),
            Kind::LatencyDist => named("value"),
            Kind::MessageLog => named("created"),
            Kind::Generic => None,
        };
        found
            .or_else(|| {
                (0..self.t.head.len()).find(|i| numeric(i) && !self.layout.taken(self.t, *i))
            })
            .ok_or_else(|| {
                Error::Arg("no numeric column to draw along x (give one with --x)".into())
            })
    }

    /// The default series: a sweep's axes other than x whose values do not follow from
    /// x's (x not an axis, as the offered load: the axes but the first, the load); a
    /// latency distribution's `quantity`; a generic table's text columns of few values.
    fn default_series(&self, x: usize) -> Vec<usize> {
        match self.kind {
            Kind::Sweep if !self.layout.axes.contains(&x) => {
                self.layout.axes.iter().skip(1).copied().collect()
            }
            Kind::Sweep => self
                .layout
                .axes
                .iter()
                .copied()
                .filter(|&a| a != x && !self.follows(a, x))
                .collect(),
            Kind::LatencyDist => vec![0],
            Kind::TimeSeries | Kind::MessageLog => Vec::new(),
            Kind::Generic => (0..self.t.head.len())
                .filter(|&i| i != x && self.numbers[i].is_none())
                .filter(|&i| {
                    let mut seen: Vec<&str> = Vec::new();
                    for r in &self.t.rows {
                        if !seen.contains(&r[i].as_str()) {
                            seen.push(&r[i]);
                            if seen.len() > SERIES_VALUES {
                                return false;
                            }
                        }
                    }
                    true
                })
                .collect(),
        }
    }

    /// Whether each value of column `x` comes with a single value of column `a`.
    fn follows(&self, a: usize, x: usize) -> bool {
        let mut seen: Vec<(&str, &str)> = Vec::new();
        for r in &self.t.rows {
            let (xv, av) = (r[x].as_str(), r[a].as_str());
            match seen.iter().find(|(s, _)| *s == xv) {
                Some((_, prev)) if *prev != av => return false,
                Some(_) => {}
                None => seen.push((xv, av)),
            }
        }
        true
    }

    fn default_ys(&self, x: usize, series: &[usize]) -> Result<Vec<String>> {
        if !self.layout.groups.is_empty() {
            let g = self
                .layout
                .groups
                .iter()
                .find(|g| self.numbers[g.measured].is_some())
                .unwrap_or(&self.layout.groups[0]);
            return Ok(vec![g.name.clone()]);
        }
        let present = |names: &[&str]| -> Vec<String> {
            names
                .iter()
                .filter(|n| self.t.column(n).is_some_and(|i| self.numbers[i].is_some()))
                .map(|n| n.to_string())
                .collect()
        };
        let kind = match self.kind {
            Kind::TimeSeries => present(&["offered", "accepted", "latency_mean", "backlog"]),
            Kind::LatencyDist => present(&["cdf"]),
            Kind::MessageLog => present(&["latency"]),
            _ => Vec::new(),
        };
        if !kind.is_empty() {
            return Ok(kind);
        }
        (0..self.t.head.len())
            .find(|&i| {
                let h = self.t.head[i].as_str();
                i != x
                    && !series.contains(&i)
                    && self.numbers[i].is_some()
                    && !self.layout.taken(self.t, i)
                    && !h.ends_with("_ci95")
                    && !NOT_DEFAULT.contains(&h)
            })
            .map(|i| vec![self.t.head[i].clone()])
            .ok_or_else(|| Error::Arg("no numeric column to draw (give one with --y)".into()))
    }

    /// A time series' phase boundaries: where the measurement window starts (the end of
    /// the warm-up) and where the drain starts, at their first interval's start.
    fn phase_marks(&self, x: usize) -> Vec<(f64, String)> {
        let (Some(phase), Some(xs)) = (self.t.column("phase"), self.numbers[x].as_ref()) else {
            return Vec::new();
        };
        let mut marks = Vec::new();
        for (name, what) in [
            ("window", "end of warm-up: the window starts"),
            ("drain", "end of the window: drain"),
        ] {
            let first = (0..self.t.rows.len()).find(|&r| self.t.rows[r][phase] == name);
            // A window from the first interval has no warm-up to end.
            if let Some(v) = first.filter(|&r| r > 0).and_then(|r| xs[r]) {
                marks.push((v, what.to_string()));
            }
        }
        marks
    }
}

fn flag(cell: &str) -> bool {
    matches!(cell.trim(), "true" | "1" | "yes")
}

/// The figures `spec` asks for: (quantity, figure) pairs, one per y.
pub fn figures(t: &Table, spec: &Spec) -> Result<Vec<(String, Figure)>> {
    let v = View::new(t);
    if t.rows.is_empty() {
        return Err(Error::Arg("the table has no rows to draw".into()));
    }
    let x = match &spec.x {
        Some(name) => v.x_column(name)?,
        None => v.default_x()?,
    };
    let x_name = match &spec.x {
        Some(n) if n == OFFERED && t.column(OFFERED).is_none() => format!("throughput.{OFFERED}"),
        _ => t.head[x].clone(),
    };
    let series: Vec<usize> = match &spec.series {
        Some(names) => names
            .iter()
            .map(|n| v.column(n, "series column"))
            .collect::<Result<_>>()?,
        None => v.default_series(x),
    };
    let ys = if spec.ys.is_empty() {
        v.default_ys(x, &series)?
    } else {
        spec.ys.clone()
    };
    // A non-numeric x: one slot per value, in the order of first appearance.
    let mut categories: Vec<String> = Vec::new();
    let xs: Vec<Option<f64>> = match &v.numbers[x] {
        Some(xs) => xs.clone(),
        None => t
            .rows
            .iter()
            .map(|r| {
                let c = r[x].clone();
                let i = categories.iter().position(|k| *k == c).unwrap_or_else(|| {
                    categories.push(c);
                    categories.len() - 1
                });
                Some(i as f64)
            })
            .collect(),
    };
    if !categories.is_empty() && (spec.log_x) {
        return Err(Error::Arg(format!(
            "--log-x: the x column `{}` holds names, not numbers",
            t.head[x]
        )));
    }
    let model_saturated = t.column("model_saturated");
    let mut out = Vec::new();
    for y in &ys {
        let q = v.quantity(y)?;
        let col =
            |i: Option<usize>, r: usize| i.and_then(|i| v.numbers[i].as_ref()).and_then(|c| c[r]);
        let at_value = units::saturated(&q.name) == units::Saturated::AtValue;
        let title = if spec.title.is_empty() {
            let what = format!(
                "{} vs {}",
                v.kind.quantity(&q.name),
                lower_first(&v.kind.quantity(&x_name))
            );
            if spec.context.is_empty() {
                what
            } else {
                format!("{what} — {}", spec.context)
            }
        } else {
            spec.title.clone()
        };
        let mut fig = Figure {
            title,
            x_label: v.kind.label(&x_name),
            y_label: v.kind.label(&q.name),
            log_x: spec.log_x,
            log_y: spec.log_y,
            join: v.kind != Kind::MessageLog,
            // Accepted against offered: the diagonal is what a network that keeps up does.
            diagonal: x_name.ends_with(OFFERED)
                && at_value
                && units::unit(&q.name) == units::unit(&x_name),
            y_nonnegative: units::nonnegative(&q.name),
            categories: categories.clone(),
            marks: if v.kind == Kind::TimeSeries {
                v.phase_marks(x)
            } else {
                Vec::new()
            },
            ..Figure::default()
        };
        let mut labels: Vec<String> = Vec::new();
        for (r, row) in t.rows.iter().enumerate() {
            let Some(px) = xs[r] else { continue };
            let label = series
                .iter()
                .map(|&s| format!("{}={}", t.head[s], row[s]))
                .collect::<Vec<_>>()
                .join(", ");
            let i = match labels.iter().position(|l| *l == label) {
                Some(i) => i,
                None => {
                    labels.push(label.clone());
                    fig.series.push(Series {
                        label,
                        ..Series::default()
                    });
                    labels.len() - 1
                }
            };
            let s = &mut fig.series[i];
            let saturated = v.layout.saturated.is_some_and(|c| flag(&row[c]));
            let deadlock = v.layout.deadlock.is_some_and(|c| flag(&row[c]));
            let m = col(Some(q.measured), r).filter(|_| !deadlock);
            match (saturated, m) {
                (true, Some(m)) if at_value => s.saturated_values.push((px, m, col(q.ci95, r))),
                (true, _) if !deadlock => s.saturated.push(px),
                (false, Some(m)) => s.measured.push((px, m, col(q.ci95, r))),
                _ => {}
            }
            if let Some(p) = col(q.model, r) {
                s.model.push((px, p));
            }
            // The model stops where it saturates: the first such x of the series.
            if q.model.is_some() && model_saturated.is_some_and(|c| flag(&row[c])) {
                s.model_saturates_at = Some(s.model_saturates_at.map_or(px, |a: f64| a.min(px)));
            }
        }
        fig.model_valid = validated_span(&xs, |r| col(q.in_range, r));
        for s in &mut fig.series {
            // Only a model that draws a curve somewhere stops somewhere.
            if s.model.is_empty() {
                s.model_saturates_at = None;
            }
        }
        fig.series.retain(|s| {
            !(s.measured.is_empty()
                && s.model.is_empty()
                && s.saturated.is_empty()
                && s.saturated_values.is_empty())
        });
        if fig.series.is_empty() {
            return Err(Error::Arg(format!("`{y}` has no value to draw")));
        }
        out.push((q.name, fig));
    }
    Ok(out)
}

/// The x interval where the model was validated, from the rows' `_in_range` cells (1 in
/// range, 0 not): from the smallest x up to the last x before any row (of any series) is
/// out of range. None when the table has no such column or its smallest x is already out.
/// One band for the figure, so it never covers a point some series has outside.
fn validated_span(
    xs: &[Option<f64>],
    in_range: impl Fn(usize) -> Option<f64>,
) -> Option<(f64, f64)> {
    let mut rows: Vec<(f64, bool)> = xs
        .iter()
        .enumerate()
        .filter_map(|(r, x)| Some((x.as_ref().copied()?, in_range(r)? > 0.5)))
        .collect();
    rows.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut span: Option<(f64, f64)> = None;
    let mut i = 0;
    while i < rows.len() {
        let x = rows[i].0;
        let at_x: Vec<bool> = rows[i..]
            .iter()
            .take_while(|r| r.0 == x)
            .map(|r| r.1)
            .collect();
        if at_x.iter().any(|ok| !ok) {
            break;
        }
        span = Some((span.map_or(x, |s| s.0), x));
        i += at_x.len();
    }
    span
}

/// `s` with its first letter in lower case, unless it starts an acronym (`P_conflict`,
/// `DMA`).
fn lower_first(s: &str) -> String {
    let mut c = s.chars();
    match (c.next(), c.next()) {
        (Some(a), Some(b)) if a.is_uppercase() && b.is_lowercase() => {
            a.to_lowercase().collect::<String>() + &s[a.len_utf8()..]
        }
        _ => s.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sweep_table() -> Table {
        Table::parse(
            "workload.rate,router.vcs,latency_measured,latency_ci95,latency_model,latency_error,saturated,deadlock,model_saturated\n\
             0.1,2,10,1,9,,false,false,false\n\
             0.2,2,12,1,11,,false,false,false\n\
             0.3,2,50,,,,true,false,true\n\
             0.1,4,9,1,9,,false,false,false\n\
             0.2,4,10,1,10,,false,false,false\n\
             0.3,4,14,1,13,,false,false,false\n",
            "t",
        )
        .unwrap()
    }

    #[test]
    fn a_sweep_table_gives_a_curve_per_other_axis_value_with_saturated_points_apart() {
        let figs = figures(&sweep_table(), &Spec::default()).unwrap();
        assert_eq!(figs.len(), 1);
        let (y, f) = &figs[0];
        assert_eq!(y, "latency");
        assert_eq!(f.y_label, "Mean latency (cycles)");
        assert_eq!(f.x_label, "Injection rate (messages/node/cycle)");
        assert_eq!(f.series.len(), 2);
        assert_eq!(f.series[0].label, "router.vcs=2");
        assert_eq!(f.series[0].measured.len(), 2);
        assert_eq!(f.series[0].saturated, vec![0.3]);
        assert_eq!(f.series[1].measured.len(), 3);
        assert_eq!(f.series[1].model.len(), 3);
    }

    #[test]
    fn a_zipped_partner_of_x_is_not_a_series() {
        let t = Table::parse(
            "a,b,c,q_measured\n1,10,x,5\n2,20,x,6\n1,10,y,7\n2,20,y,8\n",
            "t",
        )
        .unwrap();
        let f = &figures(&t, &Spec::default()).unwrap()[0].1;
        let labels: Vec<&str> = f.series.iter().map(|s| s.label.as_str()).collect();
        assert_eq!(labels, ["c=x", "c=y"]);
    }

    #[test]
    fn a_generic_table_draws_numeric_columns() {
        let t = Table::parse(
            "start,end,accepted,latency_mean,backlog\n0,100,0.1,20,1\n100,200,0.12,22,2\n",
            "t",
        )
        .unwrap();
        let figs = figures(&t, &Spec::default()).unwrap();
        assert_eq!(figs[0].0, "accepted");
        assert_eq!(figs[0].1.x_label, "Time (cycles)");
        let spec = Spec {
            x: Some("end".into()),
            ys: vec!["latency_mean".into(), "backlog".into()],
            ..Spec::default()
        };
        let figs = figures(&t, &spec).unwrap();
        assert_eq!(figs.len(), 2);
        assert_eq!(figs[1].1.y_label, "Source backlog (messages)");
    }

    #[test]
    fn unknown_names_are_refused_with_close_matches() {
        let spec = Spec {
            ys: vec!["latnecy".into()],
            ..Spec::default()
        };
        let e = figures(&sweep_table(), &spec).unwrap_err().to_string();
        assert!(e.contains("did you mean latency"), "{e}");
        let spec = Spec {
            x: Some("rate".into()),
            ..Spec::default()
        };
        let e = figures(&sweep_table(), &spec).unwrap_err().to_string();
        assert!(e.contains("workload.rate"), "{e}");
    }

    #[test]
    fn saturated_throughput_keeps_its_value_while_latency_is_cut_and_the_model_stop_is_marked() {
        let t = Table::parse(
            "workload.rate,latency_measured,latency_ci95,latency_model,latency_error,\
             throughput.accepted_measured,throughput.accepted_ci95,\
             throughput.offered_measured,throughput.offered_ci95,saturated,deadlock,model_saturated\n\
             0.1,10,1,9,,0.1,0.01,0.1,0.01,false,false,false\n\
             0.2,30,1,,,0.2,0.01,0.2,0.01,false,false,true\n\
             0.3,900,,,,0.276,0.02,0.3,0.01,true,false,true\n\
             0.4,1200,,,,0.31,0.02,0.4,0.01,true,false,true\n",
            "t",
        )
        .unwrap();
        let spec = Spec {
            ys: vec!["latency".into(), "throughput.accepted".into()],
            ..Spec::default()
        };
        let figs = figures(&t, &spec).unwrap();
        let lat = &figs[0].1.series[0];
        assert_eq!(lat.saturated, vec![0.3, 0.4]);
        assert!(lat.saturated_values.is_empty());
        assert_eq!(lat.model_saturates_at, Some(0.2));
        let acc = &figs[1].1.series[0];
        assert!(acc.saturated.is_empty());
        let plateau: Vec<f64> = acc.saturated_values.iter().map(|p| p.1).collect();
        assert_eq!(plateau, vec![0.276, 0.31]);
        assert!(figs.iter().all(|(_, f)| f.y_nonnegative));
        // Against the measured offered load, with the diagonal.
        let spec = Spec {
            x: Some(OFFERED.into()),
            ys: vec!["throughput.accepted".into()],
            ..Spec::default()
        };
        let f = &figures(&t, &spec).unwrap()[0].1;
        assert!(f.diagonal);
        assert_eq!(f.x_label, "Offered load (flits/node/cycle)");
        assert_eq!(f.title, "Accepted throughput vs offered load");
        let xs: Vec<f64> = f.series[0].saturated_values.iter().map(|p| p.0).collect();
        assert_eq!(xs, vec![0.3, 0.4]);
        // No diagonal under a latency.
        let spec = Spec {
            x: Some(OFFERED.into()),
            ..Spec::default()
        };
        assert!(!figures(&t, &spec).unwrap()[0].1.diagonal);
        let e = figures(&sweep_table(), &spec).unwrap_err().to_string();
        assert!(e.contains("--y throughput.offered"), "{e}");
    }

    #[test]
    fn titles_say_what_is_drawn_and_a_given_title_wins() {
        let spec = Spec {
            context: "wormhole-mesh-dor, 4-ary 2-dimensional mesh".into(),
            ..Spec::default()
        };
        let f = &figures(&sweep_table(), &spec).unwrap()[0].1;
        assert_eq!(
            f.title,
            "Mean latency vs injection rate — wormhole-mesh-dor, 4-ary 2-dimensional mesh"
        );
        let spec = Spec {
            title: "mine".into(),
            ..spec
        };
        assert_eq!(figures(&sweep_table(), &spec).unwrap()[0].1.title, "mine");
    }

    #[test]
    fn a_time_series_gives_one_figure_per_quantity_with_the_warm_up_marked() {
        let t = Table::parse(
            "start,end,phase,replications,offered,accepted,created,delivered,flits,latency_mean,backlog\n\
             0,200,warmup,2,0.09,0.08,49,46,558,16.2,0\n\
             200,400,window,2,0.04,0.05,24,26,316,14.6,0\n\
             400,600,window,2,0.05,0.04,25,22,284,14.8,0\n\
             600,613,drain,2,0.09,0.10,2,3,26,14.6,0\n",
            "t",
        )
        .unwrap();
        let figs = figures(&t, &Spec::default()).unwrap();
        let names: Vec<&str> = figs.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["offered", "accepted", "latency_mean", "backlog"]);
        for (_, f) in &figs {
            assert_eq!(f.x_label, "Time (cycles)");
            assert_eq!(f.series.len(), 1, "the phases are one curve");
            assert_eq!(f.series[0].measured.len(), 4);
            let at: Vec<f64> = f.marks.iter().map(|m| m.0).collect();
            assert_eq!(at, vec![200.0, 600.0]);
            assert!(f.marks[0].1.contains("warm-up"));
        }
    }

    #[test]
    fn a_latency_distribution_draws_one_cdf_per_quantity() {
        let t = Table::parse(
            "quantity,value,count,cumulative,cdf\n\
             latency,13,5,5,0.5\nlatency,14,5,10,1\n\
             source_queue,0,9,9,0.9\nsource_queue,1,1,10,1\n\
             network,13,6,6,0.6\nnetwork,14,4,10,1\n",
            "t",
        )
        .unwrap();
        let figs = figures(&t, &Spec::default()).unwrap();
        assert_eq!(figs.len(), 1);
        let f = &figs[0].1;
        assert_eq!(figs[0].0, "cdf");
        assert_eq!(f.series.len(), 3);
        assert_eq!(f.x_label, "Latency (cycles)");
        assert!(f.series.iter().all(|s| s.measured.len() == 2));
    }

    #[test]
    fn a_message_log_is_a_scatter_of_latency_against_creation_time() {
        let t = Table::parse(
            "id,src,dst,size,flits,recorded,created,injected,delivered,latency\n\
             0,0,1,8,1,0,0,0,10,10\n1,1,0,8,1,5,5,6,20,15\n",
            "t",
        )
        .unwrap();
        let f = &figures(&t, &Spec::default()).unwrap()[0].1;
        assert_eq!(f.x_label, "Creation time (cycles)");
        assert_eq!(f.y_label, "Latency (cycles)");
        assert!(!f.join, "messages are points, not a curve");
    }

    #[test]
    fn a_non_numeric_axis_gives_categories() {
        let t = Table::parse(
            "routing,workload.rate,latency_measured,latency_ci95,saturated,deadlock,model_saturated\n\
             Dor,0.1,10,1,false,false,false\nAdaptive,0.1,9,1,false,false,false\n\
             Dor,0.2,12,1,false,false,false\nAdaptive,0.2,10,1,false,false,false\n",
            "t",
        )
        .unwrap();
        let spec = Spec {
            x: Some("routing".into()),
            ..Spec::default()
        };
        let f = &figures(&t, &spec).unwrap()[0].1;
        assert_eq!(f.categories, ["Dor", "Adaptive"]);
        assert_eq!(f.series.len(), 2, "one per rate");
        let xs: Vec<f64> = f.series[0].measured.iter().map(|p| p.0).collect();
        assert_eq!(xs, vec![0.0, 1.0]);
    }

    #[test]
    fn the_validated_band_stops_before_the_first_x_any_series_has_outside() {
        let xs = [
            Some(0.1),
            Some(0.1),
            Some(0.2),
            Some(0.2),
            Some(0.3),
            Some(0.4),
        ];
        // x = 0.2 has one series outside: the band ends at 0.1.
        let cells = [1.0, 1.0, 1.0, 0.0, 1.0, 1.0];
        assert_eq!(validated_span(&xs, |r| Some(cells[r])), Some((0.1, 0.1)));
        let all_in = [1.0; 6];
        assert_eq!(validated_span(&xs, |r| Some(all_in[r])), Some((0.1, 0.4)));
        let first_out = [0.0, 1.0, 1.0, 1.0, 1.0, 1.0];
        assert_eq!(validated_span(&xs, |r| Some(first_out[r])), None);
        // No column (or no verdict at any point): no band.
        assert_eq!(validated_span(&xs, |_| None), None);
    }
}
