//! Figures like the papers': emulated means with 95% confidence bars and the model's
//! curve against a swept parameter, one colour per series, axis labels and a legend,
//! drawn as SVG (plotters). The SVG is built in memory and written in one go.

use crate::error::{Error, Result};
use plotters::coord::ranged1d::ValueFormatter;
use plotters::coord::types::RangedCoordf64;
use plotters::element::{DashedPathElement, DynElement, IntoDynElement};
use plotters::prelude::*;
use plotters::series::DashedLineSeries;

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
    /// A logarithmic y axis (values ≤ 0 are left out), for quantities that span decades.
    pub log_y: bool,
}

/// Colours that stay apart for colour-blind readers (Okabe and Ito's palette, without its
/// yellow, which vanishes on white) and, in greyscale, by lightness; series are also told
/// apart by marker and line style, so no figure depends on colour alone.
const COLOURS: [RGBColor; 7] = [
    RGBColor(0, 0, 0),
    RGBColor(0, 114, 178),
    RGBColor(213, 94, 0),
    RGBColor(0, 158, 115),
    RGBColor(204, 121, 167),
    RGBColor(230, 159, 0),
    RGBColor(86, 180, 233),
];

/// A point on the drawing, in pixels.
type Pixel = (i32, i32);

/// The marker shapes, in the order series take them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Marker {
    Circle,
    Square,
    Triangle,
    Diamond,
    OpenCircle,
    OpenSquare,
    OpenTriangle,
}

const MARKERS: [Marker; 7] = [
    Marker::Circle,
    Marker::Square,
    Marker::Triangle,
    Marker::Diamond,
    Marker::OpenCircle,
    Marker::OpenSquare,
    Marker::OpenTriangle,
];

/// How series `i` is drawn: colour, marker, and the dash length of the model's line (0:
/// solid). The three cycle with coprime periods (7, 7 shifted, 3), so two series share all
/// three only 21 series apart.
fn style_of(i: usize) -> (RGBColor, Marker, u32) {
    (COLOURS[i % 7], MARKERS[(i + i / 7) % 7], [0, 8, 3][i % 3])
}

/// A marker of `shape` centred on a pixel, for the plot and for the legend.
fn marker_element<DB: DrawingBackend>(
    shape: Marker,
    colour: RGBColor,
) -> impl Fn(Pixel) -> DynElement<'static, DB, Pixel> {
    move |c: Pixel| {
        let filled = colour.filled();
        let open = colour.stroke_width(2);
        let r = 5;
        let tri = |style: ShapeStyle| {
            Polygon::new(
                vec![
                    (c.0, c.1 - r),
                    (c.0 - r, c.1 + r - 1),
                    (c.0 + r, c.1 + r - 1),
                ],
                style,
            )
        };
        match shape {
            Marker::Circle => Circle::new(c, r - 1, filled).into_dyn(),
            Marker::OpenCircle => Circle::new(c, r - 1, open).into_dyn(),
            Marker::Square => {
                Rectangle::new([(c.0 - 4, c.1 - 4), (c.0 + 4, c.1 + 4)], filled).into_dyn()
            }
            Marker::OpenSquare => {
                Rectangle::new([(c.0 - 4, c.1 - 4), (c.0 + 4, c.1 + 4)], open).into_dyn()
            }
            Marker::Triangle => tri(filled).into_dyn(),
            Marker::OpenTriangle => PathElement::new(
                vec![
                    (c.0, c.1 - r),
                    (c.0 - r, c.1 + r - 1),
                    (c.0 + r, c.1 + r - 1),
                    (c.0, c.1 - r),
                ],
                open,
            )
            .into_dyn(),
            Marker::Diamond => Polygon::new(
                vec![
                    (c.0, c.1 - r),
                    (c.0 + r, c.1),
                    (c.0, c.1 + r),
                    (c.0 - r, c.1),
                ],
                filled,
            )
            .into_dyn(),
        }
    }
}

/// Width of a figure in pixels, and of the legend's column on its right.
const WIDTH: u32 = 1100;
const LEGEND: u32 = 300;

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
    // A log axis draws only positive values.
    let log = fig.log_y;
    let range = |it: &mut dyn Iterator<Item = f64>| {
        it.filter(|v| v.is_finite() && (!log || *v > 0.0))
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
    let (x0, x1) = pad(x0, x1);
    let mut text = String::new();
    {
        let root = SVGBackend::with_string(&mut text, (WIDTH, 600)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| err(e.to_string()))?;
        // The legend has a column of its own, right of the plot, never over the data.
        let (plot, key) = root.split_horizontally(WIDTH - LEGEND);
        let mut builder = ChartBuilder::on(&plot);
        builder
            .caption(&fig.title, ("sans-serif", 20))
            .margin(15)
            .x_label_area_size(45)
            .y_label_area_size(70);
        if log {
            let (y0, y1) = (y0 / 1.15, y1 * 1.15);
            let mut chart = builder
                .build_cartesian_2d(x0..x1, (y0..y1).log_scale())
                .map_err(|e| err(e.to_string()))?;
            draw_legend(&key, &draw(&mut chart, fig, y1)?)?;
        } else {
            let (y0, y1) = pad(y0.min(0.0).max(y0 - (y1 - y0)), y1);
            let mut chart = builder
                .build_cartesian_2d(x0..x1, y0..y1)
                .map_err(|e| err(e.to_string()))?;
            draw_legend(&key, &draw(&mut chart, fig, y1)?)?;
        }
        root.present().map_err(|e| err(e.to_string()))?;
    }
    Ok(text)
}

/// A tick label: integers without a decimal point, others with the fewest digits that
/// tell neighbouring ticks apart (ticks are round numbers).
fn tick(v: f64) -> String {
    if v == v.round() && v.abs() < 1e15 {
        format!("{v:.0}")
    } else if v.abs() >= 1e5 || v.abs() < 1e-3 {
        format!("{v:.1e}")
    } else {
        let s = format!("{v:.6}");
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    }
}

/// What one legend entry shows beside its text.
#[derive(Clone, Copy)]
enum Glyph {
    Line(RGBColor, u32),
    Marker(RGBColor, Marker),
    Cross(RGBColor),
    Arrow(RGBColor),
}

impl Glyph {
    /// The glyph's element, centred on pixel `c` of the legend.
    fn element<DB: DrawingBackend>(self, c: Pixel) -> DynElement<'static, DB, Pixel> {
        match self {
            Glyph::Line(colour, 0) => PathElement::new(
                vec![(c.0 - 10, c.1), (c.0 + 10, c.1)],
                colour.stroke_width(2),
            )
            .into_dyn(),
            Glyph::Line(colour, dash) => DashedPathElement::new(
                vec![(c.0 - 10, c.1), (c.0 + 10, c.1)],
                dash,
                dash,
                colour.stroke_width(2),
            )
            .into_dyn(),
            Glyph::Marker(colour, shape) => marker_element(shape, colour)(c),
            Glyph::Cross(colour) => Cross::new(c, 5, colour.stroke_width(2)).into_dyn(),
            Glyph::Arrow(colour) => arrow(colour)((c.0, c.1 - 6)).into_dyn(),
        }
    }
}

/// An arrow pointing up from pixel `c` (its tip): a saturated point, off the scale.
fn arrow(colour: RGBColor) -> impl Fn(Pixel) -> PathElement<Pixel> {
    move |(x, y): Pixel| {
        PathElement::new(
            vec![(x, y + 12), (x, y), (x - 5, y + 6), (x, y), (x + 5, y + 6)],
            colour.stroke_width(2),
        )
    }
}

/// Draws the mesh and the series on a chart whose y axis is linear or logarithmic; `top`
/// is the y of the top edge, where saturated points are marked. Returns the legend's
/// entries.
fn draw<'a, Y>(
    chart: &mut ChartContext<'a, SVGBackend<'a>, Cartesian2d<RangedCoordf64, Y>>,
    fig: &Figure,
    top: f64,
) -> Result<Vec<(Glyph, String)>>
where
    Y: Ranged<ValueType = f64> + ValueFormatter<f64>,
{
    let err = |e: String| Error::Arg(format!("cannot draw the plot: {e}"));
    chart
        .configure_mesh()
        .x_desc(fig.x_label.as_str())
        .y_desc(fig.y_label.as_str())
        .x_label_formatter(&|v| tick(*v))
        .y_label_formatter(&|v| tick(*v))
        .light_line_style(WHITE.mix(0.0))
        .draw()
        .map_err(|e| err(e.to_string()))?;
    let mut legend = Vec::new();
    for (i, s) in fig.series.iter().enumerate() {
        let (colour, shape, dash) = style_of(i);
        let name = |what: &str| {
            if s.label.is_empty() {
                what.to_string()
            } else {
                format!("{what}, {}", s.label)
            }
        };
        if !s.model.is_empty() {
            let line = colour.stroke_width(2);
            if dash == 0 {
                chart.draw_series(LineSeries::new(s.model.iter().copied(), line))
            } else {
                chart.draw_series(DashedLineSeries::new(
                    s.model.iter().copied(),
                    dash,
                    dash,
                    line,
                ))
            }
            .map_err(|e| err(e.to_string()))?;
            legend.push((Glyph::Line(colour, dash), name("model")));
        }
        if !s.measured.is_empty() {
            chart
                .draw_series(s.measured.iter().filter_map(|&(x, m, c)| {
                    c.map(|c| ErrorBar::new_vertical(x, m - c, m, m + c, colour.stroke_width(1), 8))
                }))
                .map_err(|e| err(e.to_string()))?;
            let mark = marker_element(shape, colour);
            chart
                .draw_series(
                    s.measured
                        .iter()
                        .map(|&(x, m, _)| EmptyElement::at((x, m)) + mark((0, 0))),
                )
                .map_err(|e| err(e.to_string()))?;
            legend.push((Glyph::Marker(colour, shape), name("emulated (95% CI)")));
        }
        if !s.paper.is_empty() {
            chart
                .draw_series(
                    s.paper
                        .iter()
                        .map(|&p| Cross::new(p, 5, colour.stroke_width(2))),
                )
                .map_err(|e| err(e.to_string()))?;
            legend.push((Glyph::Cross(colour), name("paper")));
        }
        if !s.saturated.is_empty() {
            // Saturated points have no finite value: an arrow up against the top edge
            // says where, without stretching the axis.
            let up = arrow(colour);
            chart
                .draw_series(
                    s.saturated
                        .iter()
                        .map(|&x| EmptyElement::at((x, top)) + up((0, 2))),
                )
                .map_err(|e| err(e.to_string()))?;
            legend.push((Glyph::Arrow(colour), name("emulated: saturated")));
        }
    }
    Ok(legend)
}

/// Draws the legend's entries down the column `area`, right of the plot.
fn draw_legend<DB: DrawingBackend>(
    area: &DrawingArea<DB, plotters::coord::Shift>,
    entries: &[(Glyph, String)],
) -> Result<()> {
    let err = |e: String| Error::Arg(format!("cannot draw the plot: {e}"));
    let style = ("sans-serif", 13).into_font().color(&BLACK);
    for (i, (glyph, text)) in entries.iter().enumerate() {
        let y = 50 + 20 * i as i32;
        area.draw(&glyph.element((15, y)))
            .map_err(|e| err(e.to_string()))?;
        area.draw(&Text::new(text.clone(), (32, y - 7), style.clone()))
            .map_err(|e| err(e.to_string()))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Figure {
        Figure {
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
            log_y: false,
        }
    }

    #[test]
    fn a_figure_has_its_labels_legend_points_and_curve() {
        let fig = sample();
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

    #[test]
    fn series_differ_in_marker_and_line_style_not_only_colour() {
        let styles: Vec<_> = (0..7).map(style_of).collect();
        for (i, a) in styles.iter().enumerate() {
            for b in &styles[i + 1..] {
                assert_ne!(a.1, b.1, "two of the first 7 series share a marker");
            }
        }
        // Neighbours never share a line style.
        assert!((0..20).all(|i| style_of(i).2 != style_of(i + 1).2));
        let mut fig = sample();
        fig.series.push(Series {
            label: "second".into(),
            model: vec![(1.0, 5.0), (2.0, 6.0)],
            measured: vec![(1.0, 5.5, None)],
            ..Series::default()
        });
        let s = svg(&fig).unwrap();
        // The second series' model line is dashed, its points are squares.
        assert!(
            s.contains("<rect") && s.matches("<polyline").count() > 2,
            "{s}"
        );
    }

    #[test]
    fn a_log_axis_spans_decades_and_leaves_out_non_positive_values() {
        let mut fig = sample();
        fig.series[0].measured = vec![(1.0, 10.0, None), (2.0, 10_000.0, None), (3.0, 0.0, None)];
        fig.log_y = true;
        let s = svg(&fig).unwrap();
        assert!(s.contains("10000") || s.contains("1e4"), "{s}");
        fig.series[0].measured = vec![(1.0, 0.0, None)];
        fig.series[0].model.clear();
        fig.series[0].paper.clear();
        assert!(svg(&fig).is_err(), "nothing positive to draw on a log axis");
    }
}
