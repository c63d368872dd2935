//! Figures from a table: a sweep's CSV (or the same table in memory, so `sweep --plot`
//! and `routemu plot sweep.csv` draw the same figure) or any numeric CSV such as a time
//! series. One figure per y quantity.
//!
//! A sweep table has its axes first, then a column group per quantity —
//! `Y_measured`, optionally `Y_ci95`, `Y_model` (and `Y_error`, not drawn) — and the
//! flags `saturated`, `deadlock`, `model_saturated`. A saturated point is marked by an
//! arrow on the top edge and left out of the curve (its mean covers only what got
//! through); a deadlocked one is left out. Any other table is read generically: every
//! numeric column is a quantity, its `N_ci95` column (if any) its confidence half-width.
//!
//! Defaults, each overridable: x is the first numeric axis (generic: the first numeric
//! column); the series are the other axes, less those that vary with x (a zipped
//! partner), so a grid gives one curve per combination; y is the first quantity with a
//! value (generic: the first numeric column other than x, `start` and `end`).
//!
//! Not here: reading CSV (`csv`), units (`units`), drawing (the parent module).

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
    /// Figure title.
    pub title: String,
}

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
                ["measured", "ci95", "model", "error"]
                    .iter()
                    .any(|s| *h == format!("{}_{s}", g.name))
            })
    }
}

/// A y quantity resolved to its columns.
struct Quantity {
    name: String,
    measured: usize,
    ci95: Option<usize>,
    model: Option<usize>,
}

/// A table read for drawing.
struct View<'a> {
    t: &'a Table,
    layout: Layout,
    /// Numeric columns (their values), by index.
    numbers: Vec<Option<Vec<Option<f64>>>>,
}

impl<'a> View<'a> {
    fn new(t: &'a Table) -> View<'a> {
        View {
            t,
            layout: Layout::of(t),
            numbers: (0..t.head.len()).map(|i| t.numbers(i)).collect(),
        }
    }

    fn column(&self, name: &str, what: &str) -> Result<usize> {
        self.t
            .column(name)
            .ok_or_else(|| unknown(what, name, &self.t.head))
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
            }),
            Some(_) => Err(Error::Arg(format!(
                "column `{name}` holds no numbers to draw"
            ))),
            None => Err(unknown("quantity", name, &self.quantities())),
        }
    }

    fn default_x(&self) -> Result<usize> {
        let numeric = |i: &usize| self.numbers[*i].is_some();
        let found = if self.layout.groups.is_empty() {
            (0..self.t.head.len()).find(|i| numeric(i) && !self.layout.taken(self.t, *i))
        } else {
            self.layout.axes.iter().copied().find(numeric)
        };
        found.ok_or_else(|| {
            Error::Arg("no numeric column to draw along x (give one with --x)".into())
        })
    }

    /// The axes other than x whose values do not follow from x's.
    fn default_series(&self, x: usize) -> Vec<usize> {
        self.layout
            .axes
            .iter()
            .copied()
            .filter(|&a| a != x && !self.follows(a, x))
            .collect()
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

    fn default_y(&self, x: usize, series: &[usize]) -> Result<String> {
        if !self.layout.groups.is_empty() {
            let g = self
                .layout
                .groups
                .iter()
                .find(|g| self.numbers[g.measured].is_some())
                .unwrap_or(&self.layout.groups[0]);
            return Ok(g.name.clone());
        }
        (0..self.t.head.len())
            .find(|&i| {
                let h = self.t.head[i].as_str();
                i != x
                    && !series.contains(&i)
                    && self.numbers[i].is_some()
                    && !self.layout.taken(self.t, i)
                    && !h.ends_with("_ci95")
                    && h != "start"
                    && h != "end"
            })
            .map(|i| self.t.head[i].clone())
            .ok_or_else(|| Error::Arg("no numeric column to draw (give one with --y)".into()))
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
        Some(name) => {
            let i = v.column(name, "x column")?;
            if v.numbers[i].is_none() {
                return Err(Error::Arg(format!(
                    "the x column `{name}` must hold numbers (a non-numeric column can tell series apart: --series {name})"
                )));
            }
            i
        }
        None => v.default_x()?,
    };
    let series: Vec<usize> = match &spec.series {
        Some(names) => names
            .iter()
            .map(|n| v.column(n, "series column"))
            .collect::<Result<_>>()?,
        None => v.default_series(x),
    };
    let ys = if spec.ys.is_empty() {
        vec![v.default_y(x, &series)?]
    } else {
        spec.ys.clone()
    };
    let xs = v.numbers[x].as_ref().expect("x is numeric");
    let mut out = Vec::new();
    for y in &ys {
        let q = v.quantity(y)?;
        let col =
            |i: Option<usize>, r: usize| i.and_then(|i| v.numbers[i].as_ref()).and_then(|c| c[r]);
        let mut fig = Figure {
            title: spec.title.clone(),
            x_label: units::label(&t.head[x]),
            y_label: units::label(&q.name),
            log_x: spec.log_x,
            log_y: spec.log_y,
            join: true,
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
            if saturated {
                s.saturated.push(px);
            } else if let (Some(m), false) = (col(Some(q.measured), r), deadlock) {
                s.measured.push((px, m, col(q.ci95, r)));
            }
            if let Some(p) = col(q.model, r) {
                s.model.push((px, p));
            }
        }
        fig.series
            .retain(|s| !(s.measured.is_empty() && s.model.is_empty() && s.saturated.is_empty()));
        if fig.series.is_empty() {
            return Err(Error::Arg(format!("`{y}` has no value to draw")));
        }
        out.push((q.name, fig));
    }
    Ok(out)
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
        assert_eq!(f.y_label, "latency (cycles)");
        assert_eq!(f.x_label, "workload.rate (messages/node/cycle)");
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
        assert_eq!(figs[0].1.x_label, "start (cycles)");
        let spec = Spec {
            x: Some("end".into()),
            ys: vec!["latency_mean".into(), "backlog".into()],
            ..Spec::default()
        };
        let figs = figures(&t, &spec).unwrap();
        assert_eq!(figs.len(), 2);
        assert_eq!(figs[1].1.y_label, "backlog (messages)");
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
}
