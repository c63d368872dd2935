//! Figures like the papers': emulated means with 95% confidence bars and the model's
//! curve against a swept parameter, one colour per series, axis labels and a legend,
//! drawn as SVG (plotters). The SVG is built in memory and written in one go.

use crate::error::{Error, Result};
use plotters::prelude::*;

/// One series of a figure.
#[derive(Clone, Debug, Default)]
pub struct Series {
    /// Legend label (empty for a single series).
    pub label: String,
    /// Emulated points: x, mean, 95% half-width.
    pub measured: Vec<(f64, f64, Option<f64>)>,
    /// The model's curve: x, value.
    pub model: Vec<(f64, f64)>,
    /// The paper's own numbers (read from its text or figures): x, value.
    pub paper: Vec<(f64, f64)>,
    /// x values where the emulation saturated: marked on the axis, never plotted as values.
    pub saturated: Vec<f64>,
}

/// What a figure shows.
#[derive(Clone, Debug, Default)]
pub struct Figure {
    /// Title.
    pub title: String,
    /// X-axis label.
    pub x_label: String,
    /// Y-axis label.
    pub y_label: String,
    /// The series.
    pub series: Vec<Series>,
}

/// Draws `fig` as an SVG document.
pub fn svg(fig: &Figure) -> Result<String> {
    let err = |e: String| Error::Arg(format!("cannot draw the plot: {e}"));
    let xs = fig.series.iter().flat_map(|s| {
        s.measured
            .iter()
            .map(|p| p.0)
            .chain(s.model.iter().map(|p| p.0))
            .chain(s.paper.iter().map(|p| p.0))
            .chain(s.saturated.iter().copied())
    });
    let ys = fig.series.iter().flat_map(|s| {
        s.measured
            .iter()
            .flat_map(|&(_, m, c)| [m - c.unwrap_or(0.0), m + c.unwrap_or(0.0)])
            .chain(s.model.iter().map(|p| p.1))
            .chain(s.paper.iter().map(|p| p.1))
    });
    let range = |it: &mut dyn Iterator<Item = f64>| {
        it.filter(|v| v.is_finite())
            .fold(None, |acc: Option<(f64, f64)>, v| {
                Some(acc.map_or((v, v), |(a, b)| (a.min(v), b.max(v))))
            })
    };
    let (x0, x1) = range(&mut { xs }).ok_or_else(|| err("no point to draw".into()))?;
    let (y0, y1) = range(&mut { ys }).ok_or_else(|| err("no value to draw".into()))?;
    let pad = |a: f64, b: f64| {
        let d = if b > a {
            (b - a) * 0.05
        } else {
            a.abs().max(1.0) * 0.05
        };
        (a - d, b + d)
    };
    let ((x0, x1), (y0, y1)) = (pad(x0, x1), pad(y0.min(0.0).max(y0 - (y1 - y0)), y1));
    let mut text = String::new();
    {
        let root = SVGBackend::with_string(&mut text, (900, 600)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| err(e.to_string()))?;
        let mut chart = ChartBuilder::on(&root)
            .caption(&fig.title, ("sans-serif", 20))
            .margin(15)
            .x_label_area_size(45)
            .y_label_area_size(70)
            .build_cartesian_2d(x0..x1, y0..y1)
            .map_err(|e| err(e.to_string()))?;
        chart
            .configure_mesh()
            .x_desc(fig.x_label.as_str())
            .y_desc(fig.y_label.as_str())
            .draw()
            .map_err(|e| err(e.to_string()))?;
        for (i, s) in fig.series.iter().enumerate() {
            let colour = Palette99::pick(i).to_rgba();
            let name = |what: &str| {
                if s.label.is_empty() {
                    what.to_string()
                } else {
                    format!("{what}, {}", s.label)
                }
            };
            if !s.model.is_empty() {
                chart
                    .draw_series(LineSeries::new(
                        s.model.iter().copied(),
                        colour.stroke_width(2),
                    ))
                    .map_err(|e| err(e.to_string()))?
                    .label(name("model"))
                    .legend(move |(x, y)| {
                        PathElement::new(vec![(x, y), (x + 20, y)], colour.stroke_width(2))
                    });
            }
            if !s.measured.is_empty() {
                chart
                    .draw_series(s.measured.iter().filter_map(|&(x, m, c)| {
                        c.map(|c| {
                            ErrorBar::new_vertical(x, m - c, m, m + c, colour.stroke_width(1), 8)
                        })
                    }))
                    .map_err(|e| err(e.to_string()))?;
                chart
                    .draw_series(
                        s.measured
                            .iter()
                            .map(|&(x, m, _)| Circle::new((x, m), 4, colour.filled())),
                    )
                    .map_err(|e| err(e.to_string()))?
                    .label(name("emulated (95% CI)"))
                    .legend(move |(x, y)| Circle::new((x + 10, y), 4, colour.filled()));
            }
            if !s.paper.is_empty() {
                chart
                    .draw_series(
                        s.paper
                            .iter()
                            .map(|&p| Cross::new(p, 5, colour.stroke_width(2))),
                    )
                    .map_err(|e| err(e.to_string()))?
                    .label(name("paper"))
                    .legend(move |(x, y)| Cross::new((x + 10, y), 5, colour.stroke_width(2)));
            }
            if !s.saturated.is_empty() {
                // Saturated points have no finite value: a triangle on the top edge says
                // where, without stretching the axis.
                chart
                    .draw_series(
                        s.saturated
                            .iter()
                            .map(|&x| TriangleMarker::new((x, y1), 6, colour.filled())),
                    )
                    .map_err(|e| err(e.to_string()))?
                    .label(name("emulated: saturated"))
                    .legend(move |(x, y)| TriangleMarker::new((x + 10, y), 6, colour.filled()));
            }
        }
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::UpperLeft)
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK)
            .draw()
            .map_err(|e| err(e.to_string()))?;
        root.present().map_err(|e| err(e.to_string()))?;
    }
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_figure_has_its_labels_legend_points_and_curve() {
        let fig = Figure {
            title: "latency against rate".into(),
            x_label: "workload.rate".into(),
            y_label: "latency (cycles)".into(),
            series: vec![Series {
                label: String::new(),
                measured: vec![(1.0, 10.0, Some(1.0)), (2.0, 14.0, None)],
                model: vec![(1.0, 9.5), (2.0, 15.0)],
                paper: vec![(1.5, 12.0)],
                saturated: vec![3.0],
            }],
        };
        let s = svg(&fig).unwrap();
        for text in [
            "latency against rate",
            "workload.rate",
            "latency (cycles)",
            "model",
            "paper",
            "saturated",
        ] {
            assert!(s.contains(text), "{text}");
        }
        assert!(s.contains("<circle") && s.contains("<polyline"));
        let empty = Figure {
            series: vec![],
            ..fig
        };
        assert!(svg(&empty).is_err());
    }
}
