//! Figures like the papers': emulated means with 95% confidence bars and the model's
//! curve against a swept parameter, one colour, marker and line style per series, axis
//! labels and a legend in its own column, drawn as SVG (plotters) and, on request,
//! rasterised to PNG ([`png`]). The SVG is built in memory and written in one go.
//!
//! Submodules: [`csv`] reads and writes the CSV tables figures are drawn from, [`units`]
//! names the unit of every known quantity, [`redraw`] turns a table (a sweep's or any
//! numeric CSV) into figures, [`png`] rasterises a figure.
//!
//! Not here: running sweeps (`experiments::sweep`), the commands (`cli::sweep`, `cli::plot`).

pub mod csv;
pub mod png;
pub mod redraw;
pub mod units;

use crate::foundation::error::{Error, Result};
use plotters::coord::ranged1d::ValueFormatter;
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
    /// A logarithmic x axis (values ≤ 0 are left out).
    pub log_x: bool,
    /// Join each series' emulated means with its line style when the series has no
    /// model curve (time series, sweeps of quantities no model predicts); saturated
    /// points are never on the line.
    pub join: bool,
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

/// Width and height of a figure in pixels, and the width of the legend's column on its
/// right.
pub const WIDTH: u32 = 1100;
/// See [`WIDTH`].
pub const HEIGHT: u32 = 600;
const LEGEND: u32 = 300;

/// The largest magnitude a drawn value may have: an axis from −1e300 to 1e300 with its
/// margins is still finite; one near ±f64::MAX is not.
pub const MAX_DRAWN: f64 = 1e300;

/// The most decades a log axis spans.
pub const MAX_DECADES: f64 = 300.0;

/// The smallest and largest of the finite values kept by `keep`.
fn span(it: impl Iterator<Item = f64>, keep: impl Fn(f64) -> bool) -> Option<(f64, f64)> {
    it.filter(|v| v.is_finite() && keep(*v))
        .fold(None, |acc: Option<(f64, f64)>, v| {
            Some(acc.map_or((v, v), |(a, b)| (a.min(v), b.max(v))))
        })
}

/// How one axis is drawn: its range and, for an axis whose values are all whole
/// numbers, how many ticks keep them on whole numbers.
#[derive(Clone, Copy, Debug)]
struct AxisPlan {
    lo: f64,
    hi: f64,
    log: bool,
    /// Whole-number values only: ticks only at whole numbers.
    integral: bool,
}

impl AxisPlan {
    /// The axis of `values` (every drawn value; `extents` may stretch the range, as
    /// confidence bars do, without deciding whether the axis is integral).
    fn new(values: &[f64], extents: &[f64], log: bool, from_zero: bool) -> Option<AxisPlan> {
        let keep = |v: f64| !log || v > 0.0;
        let (a, b) = span(values.iter().chain(extents).copied(), keep)?;
        let integral = values
            .iter()
            .filter(|v| v.is_finite() && keep(**v))
            .all(|v| v.fract() == 0.0 && v.abs() < 1e15);
        let (lo, hi) = if log {
            (a / 1.15, b * 1.15)
        } else if integral && b - a < 2.0 {
            // One or two whole numbers: room for a tick either side.
            (a - 1.0, b + 1.0)
        } else {
            let a = if from_zero {
                a.min(0.0).max(a - (b - a))
            } else {
                a
            };
            let d = if b > a {
                (b - a) * 0.05
            } else {
                a.abs().max(1.0) * 0.05
            };
            (a - d, b + d)
        };
        Some(AxisPlan {
            lo,
            hi,
            log,
            integral,
        })
    }

    /// How many ticks to ask plotters for: it picks the finest step of 1, 2 or 5 × 10^k
    /// that gives no more, so asking for at most one per whole number keeps the step at
    /// 1 or above, on whole numbers.
    fn ticks(&self) -> usize {
        if self.integral && !self.log {
            // The cast saturates on an axis spanning more than i64 whole numbers.
            let whole = ((self.hi.floor() - self.lo.ceil()) as i64).saturating_add(1);
            whole.clamp(1, 10) as usize
        } else {
            10
        }
    }

    /// A tick's label: on a whole-number axis a tick between whole numbers has none.
    fn label(&self, v: f64) -> String {
        if self.integral && v.fract() != 0.0 {
            String::new()
        } else {
            tick(v)
        }
    }
}

/// Draws `fig` as an SVG document.
pub fn svg(fig: &Figure) -> Result<String> {
    let err = |e: String| Error::Arg(format!("cannot draw the plot: {e}"));
    let xs: Vec<f64> = fig
        .series
        .iter()
        .flat_map(|s| {
            s.measured
                .iter()
                .map(|p| p.0)
                .chain(s.model.iter().map(|p| p.0))
                .chain(s.paper.iter().map(|p| p.0))
                .chain(s.saturated.iter().copied())
        })
        .collect();
    let ys: Vec<f64> = fig
        .series
        .iter()
        .flat_map(|s| {
            s.measured
                .iter()
                .filter(|p| !fig.log_x || p.0 > 0.0)
                .map(|p| p.1)
                .chain(s.model.iter().map(|p| p.1))
                .chain(s.paper.iter().map(|p| p.1))
        })
        .collect();
    let bars: Vec<f64> = fig
        .series
        .iter()
        .flat_map(|s| {
            s.measured
                .iter()
                .flat_map(|&(_, m, c)| [m - c.unwrap_or(0.0), m + c.unwrap_or(0.0)])
        })
        .collect();
    for (axis, values) in [("x", &xs), ("y", &ys), ("y", &bars)] {
        if let Some(v) = values.iter().find(|v| v.is_finite() && v.abs() > MAX_DRAWN) {
            // Beyond this the axis' span, or its margins, overflow to infinity, and the
            // tick placement would never end.
            return Err(err(format!(
                "a {axis} value of {v:e} is beyond what an axis can span (±{MAX_DRAWN:e}); \
                 rescale the column"
            )));
        }
    }
    // The values each axis' range is taken from (`AxisPlan::new`): y's confidence bars
    // stretch it too.
    let y_extent: Vec<f64> = ys.iter().chain(&bars).copied().collect();
    for (axis, values, log) in [("x", &xs, fig.log_x), ("y", &y_extent, fig.log_y)] {
        let positive = span(values.iter().copied(), |v| v > 0.0);
        if let (true, Some((lo, hi))) = (log, positive) {
            // The tick placement of a log axis walks its decades: one over hundreds of
            // decades (a ratio beyond f64) would never be drawn.
            if lo < 1.0 / MAX_DRAWN || !(hi / lo).is_finite() || (hi / lo).log10() > MAX_DECADES {
                return Err(err(format!(
                    "a log {axis} axis from {lo:e} to {hi:e} spans more than {MAX_DECADES} \
                     decades or goes below {:e}; draw it on a linear axis or rescale the \
                     column",
                    1.0 / MAX_DRAWN
                )));
            }
        }
    }
    let x =
        AxisPlan::new(&xs, &[], fig.log_x, false).ok_or_else(|| err("no point to draw".into()))?;
    let y =
        AxisPlan::new(&ys, &bars, fig.log_y, true).ok_or_else(|| err("no value to draw".into()))?;
    let mut text = String::new();
    {
        let root = SVGBackend::with_string(&mut text, (WIDTH, HEIGHT)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| err(e.to_string()))?;
        // The legend has a column of its own, right of the plot, never over the data.
        let (plot, key) = root.split_horizontally(WIDTH - LEGEND);
        let mut builder = ChartBuilder::on(&plot);
        builder
            .caption(&fig.title, ("sans-serif", 20))
            .margin(15)
            .x_label_area_size(45)
            .y_label_area_size(70);
        // One arm per pair of axis kinds: plotters types a chart by its coordinates.
        macro_rules! chart {
            ($xr:expr, $yr:expr) => {{
                let mut chart = builder
                    .build_cartesian_2d($xr, $yr)
                    .map_err(|e| err(e.to_string()))?;
                draw_legend(&key, &draw(&mut chart, fig, &x, &y)?)?;
            }};
        }
        match (x.log, y.log) {
            (false, false) => chart!(x.lo..x.hi, y.lo..y.hi),
            (true, false) => chart!((x.lo..x.hi).log_scale(), y.lo..y.hi),
            (false, true) => chart!(x.lo..x.hi, (y.lo..y.hi).log_scale()),
            (true, true) => chart!((x.lo..x.hi).log_scale(), (y.lo..y.hi).log_scale()),
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
    MarkerLine(RGBColor, Marker, u32),
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
            // Drawn as its line, then its marker (see `draw_legend`).
            Glyph::MarkerLine(colour, shape, _) => marker_element(shape, colour)(c),
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

/// Draws the mesh and the series on a chart whose axes are linear or logarithmic;
/// saturated points are marked on the top edge (`y.hi`). Returns the legend's entries.
fn draw<'a, X, Y>(
    chart: &mut ChartContext<'a, SVGBackend<'a>, Cartesian2d<X, Y>>,
    fig: &Figure,
    x: &AxisPlan,
    y: &AxisPlan,
) -> Result<Vec<(Glyph, String)>>
where
    X: Ranged<ValueType = f64> + ValueFormatter<f64>,
    Y: Ranged<ValueType = f64> + ValueFormatter<f64>,
{
    let err = |e: String| Error::Arg(format!("cannot draw the plot: {e}"));
    let top = y.hi;
    // A log axis draws only positive values.
    let shown = |px: f64, py: f64| (!x.log || px > 0.0) && (!y.log || py > 0.0);
    chart
        .configure_mesh()
        .x_desc(fig.x_label.as_str())
        .y_desc(fig.y_label.as_str())
        .x_labels(x.ticks())
        .y_labels(y.ticks())
        .x_label_formatter(&|v| x.label(*v))
        .y_label_formatter(&|v| y.label(*v))
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
        let model: Vec<(f64, f64)> = s
            .model
            .iter()
            .copied()
            .filter(|p| shown(p.0, p.1))
            .collect();
        if !model.is_empty() {
            line(chart, model, colour, dash)?;
            legend.push((Glyph::Line(colour, dash), name("model")));
        }
        let measured: Vec<(f64, f64, Option<f64>)> = s
            .measured
            .iter()
            .copied()
            .filter(|p| shown(p.0, p.1))
            .collect();
        if !measured.is_empty() {
            let joined = fig.join && s.model.is_empty() && measured.len() > 1;
            if joined {
                // Only the drawn (unsaturated) means, in x order: a saturated point is an
                // arrow, never a vertex.
                let mut points: Vec<(f64, f64)> = measured.iter().map(|p| (p.0, p.1)).collect();
                points.sort_by(|a, b| a.0.total_cmp(&b.0));
                line(chart, points, colour, dash)?;
            }
            chart
                .draw_series(measured.iter().filter_map(|&(px, m, c)| {
                    let lo = if y.log && m - c? <= 0.0 { m } else { m - c? };
                    Some(ErrorBar::new_vertical(
                        px,
                        lo,
                        m,
                        m + c?,
                        colour.stroke_width(1),
                        8,
                    ))
                }))
                .map_err(|e| err(e.to_string()))?;
            let mark = marker_element(shape, colour);
            chart
                .draw_series(
                    measured
                        .iter()
                        .map(|&(px, m, _)| EmptyElement::at((px, m)) + mark((0, 0))),
                )
                .map_err(|e| err(e.to_string()))?;
            let what = if measured.iter().any(|p| p.2.is_some()) {
                "emulated (95% CI)"
            } else {
                "emulated"
            };
            let glyph = if joined {
                Glyph::MarkerLine(colour, shape, dash)
            } else {
                Glyph::Marker(colour, shape)
            };
            legend.push((glyph, name(what)));
        }
        let paper: Vec<(f64, f64)> = s
            .paper
            .iter()
            .copied()
            .filter(|p| shown(p.0, p.1))
            .collect();
        if !paper.is_empty() {
            chart
                .draw_series(
                    paper
                        .iter()
                        .map(|&p| Cross::new(p, 5, colour.stroke_width(2))),
                )
                .map_err(|e| err(e.to_string()))?;
            legend.push((Glyph::Cross(colour), name("paper")));
        }
        let saturated: Vec<f64> = s
            .saturated
            .iter()
            .copied()
            .filter(|&px| !x.log || px > 0.0)
            .collect();
        if !saturated.is_empty() {
            // Saturated points have no finite value: an arrow up against the top edge
            // says where, without stretching the axis.
            let up = arrow(colour);
            chart
                .draw_series(
                    saturated
                        .iter()
                        .map(|&px| EmptyElement::at((px, top)) + up((0, 2))),
                )
                .map_err(|e| err(e.to_string()))?;
            legend.push((Glyph::Arrow(colour), name("emulated: saturated")));
        }
    }
    Ok(legend)
}

/// Draws a line through `points` in the style of a series (solid or dashed).
fn line<'a, X, Y>(
    chart: &mut ChartContext<'a, SVGBackend<'a>, Cartesian2d<X, Y>>,
    points: Vec<(f64, f64)>,
    colour: RGBColor,
    dash: u32,
) -> Result<()>
where
    X: Ranged<ValueType = f64> + ValueFormatter<f64>,
    Y: Ranged<ValueType = f64> + ValueFormatter<f64>,
{
    let style = colour.stroke_width(2);
    if dash == 0 {
        chart.draw_series(LineSeries::new(points, style))
    } else {
        chart.draw_series(DashedLineSeries::new(points, dash, dash, style))
    }
    .map(|_| ())
    .map_err(|e| Error::Arg(format!("cannot draw the plot: {e}")))
}

/// Draws the legend's entries down the column `area`, right of the plot.
fn draw_legend<DB: DrawingBackend>(
    area: &DrawingArea<DB, plotters::coord::Shift>,
    entries: &[(Glyph, String)],
) -> Result<()> {
    let err = |e: String| Error::Arg(format!("cannot draw the plot: {e}"));
    let style = ("sans-serif", 13).into_font().color(&BLACK);
    let mut y = 50;
    for (glyph, text) in entries {
        if let Glyph::MarkerLine(colour, _, dash) = *glyph {
            area.draw(&Glyph::Line(colour, dash).element((15, y)))
                .map_err(|e| err(e.to_string()))?;
        }
        area.draw(&glyph.element((15, y)))
            .map_err(|e| err(e.to_string()))?;
        // Long labels (a swept RON value) wrap inside the column instead of running off
        // the figure.
        for (k, part) in wrap(text, LEGEND_CHARS).iter().enumerate() {
            let dy = 16 * k as i32;
            area.draw(&Text::new(part.clone(), (32, y - 7 + dy), style.clone()))
                .map_err(|e| err(e.to_string()))?;
        }
        y += 20 + 16 * (wrap(text, LEGEND_CHARS).len() as i32 - 1);
    }
    Ok(())
}

/// Characters of legend text that fit on one line of the legend's column.
const LEGEND_CHARS: usize = 36;

/// `text` in lines of at most `width` characters, broken after spaces where possible.
fn wrap(text: &str, width: usize) -> Vec<String> {
    let mut lines = Vec::new();
    let mut rest: Vec<char> = text.chars().collect();
    while rest.len() > width {
        let cut = rest[..=width]
            .iter()
            .rposition(|c| *c == ' ')
            .filter(|&i| i > 0)
            .unwrap_or(width);
        lines.push(
            rest[..cut]
                .iter()
                .collect::<String>()
                .trim_end()
                .to_string(),
        );
        rest = rest[cut..].to_vec();
        while rest.first() == Some(&' ') {
            rest.remove(0);
        }
    }
    lines.push(rest.into_iter().collect());
    lines
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
            log_x: false,
            join: false,
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
    fn long_legend_labels_wrap_at_spaces() {
        let text = "emulated, workload.length=Uniform(min: 2, max: 10)";
        let w = wrap(text, 36);
        assert_eq!(w[0], "emulated,");
        assert!(w.iter().all(|l| l.chars().count() <= 36), "{w:?}");
        assert_eq!(w.join(" "), text);
        assert_eq!(wrap("short", 36), ["short"]);
        assert!(wrap(&"x".repeat(80), 36)
            .iter()
            .all(|l| l.chars().count() <= 36));
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
