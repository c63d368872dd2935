//! Figures like the papers': emulated means with 95% confidence bars and the model's
//! curve against a swept parameter, one colour, marker and line style per series, axis
//! labels and a legend in its own column, drawn as SVG (plotters) and, on request,
//! rasterised to PNG ([`png`]). The SVG is built in memory and written in one go.
//!
//! What a figure can show besides its points: saturated points cut (an arrow on the top
//! edge, for latencies) or at their value with a marker of their own (for throughputs:
//! the plateau is the answer), the y = x diagonal (accepted against offered), vertical
//! marks (the end of the warm-up), where each model curve stops (the model saturates)
//! and the x interval where a model is validated; a categorical x (routing, pattern)
//! is drawn as grouped bars. Every axis has its own tick rule (`ticks`): a log axis
//! labels at least three ticks whatever its span; an axis of a non-negative quantity
//! never runs below zero. The title is wrapped or shrunk to fit the canvas.
//!
//! Submodules: [`csv`] reads and writes the CSV tables figures are drawn from, [`units`]
//! names every known quantity and its unit, [`redraw`] turns a table (a sweep's or any
//! CSV routemu writes) into figures, [`png`] rasterises a figure.
//!
//! Not here: running sweeps (`experiments::sweep`), the commands (`cli::sweep`, `cli::plot`).

pub mod csv;
pub mod png;
pub mod redraw;
mod ticks;
pub mod units;
#[cfg(test)]
mod visual;

use crate::foundation::error::{Error, Result};
use plotters::element::{DashedPathElement, DynElement, IntoDynElement};
use plotters::prelude::*;
use plotters::series::DashedLineSeries;
use plotters::style::text_anchor::{HPos, Pos, VPos};

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
    /// x values where the emulation saturated, for a quantity with no value there (a
    /// latency): marked by an arrow on the top edge, never plotted as values.
    pub saturated: Vec<f64>,
    /// Points where the emulation saturated, for a quantity that keeps its meaning (a
    /// throughput's plateau): x, mean, 95% half-width, drawn at their value with the
    /// saturated marker (a ring round the series' marker).
    pub saturated_values: Vec<(f64, f64, Option<f64>)>,
    /// Where the model's curve stops because the model saturates: a dashed vertical line
    /// in the series' colour, labelled.
    pub model_saturates_at: Option<f64>,
}

/// What a figure shows.
#[derive(Clone, Debug, Default)]
pub struct Figure {
    /// Title (wrapped, or set smaller, to fit the canvas).
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
    /// points cut at the edge are never on the line, those drawn at their value are.
    pub join: bool,
    /// Draw the diagonal y = x for reference (accepted against offered load).
    pub diagonal: bool,
    /// The y quantity is never negative (a time, a rate, a count): its axis does not run
    /// below zero and confidence bars are clipped at zero.
    pub y_nonnegative: bool,
    /// A categorical x: the category names, each point's x its index here; drawn as
    /// grouped bars with their 95% bars. Empty: a numeric x.
    pub categories: Vec<String>,
    /// Vertical lines at an x, with their label (the end of the warm-up).
    pub marks: Vec<(f64, String)>,
    /// The x interval where the model is validated: shaded and labelled.
    pub model_valid: Option<(f64, f64)>,
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
/// numbers, ticks on whole numbers only.
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
    /// confidence bars do, without deciding whether the axis is integral). `from_zero`:
    /// a y axis reaching towards zero; `floor`: the axis never runs below zero (a
    /// non-negative quantity, or values all ≥ 0 along x).
    fn new(
        values: &[f64],
        extents: &[f64],
        log: bool,
        from_zero: bool,
        floor: bool,
    ) -> Option<AxisPlan> {
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
        // A quantity that is never negative has no axis below zero (only a value of
        // zero itself sits on the edge).
        let lo = if floor && !log && a >= 0.0 {
            lo.max(0.0)
        } else {
            lo
        };
        Some(AxisPlan {
            lo,
            hi,
            log,
            integral,
        })
    }

    /// The axis with its ticks, for plotters.
    fn coord(&self) -> ticks::Coord {
        ticks::Coord {
            lo: self.lo,
            hi: self.hi,
            log: self.log,
            ticks: if self.log {
                ticks::log(self.lo, self.hi)
            } else {
                ticks::linear(self.lo, self.hi, self.integral)
            },
        }
    }
}

/// Font size of the title (plotters' size; the SVG's is 1/1.24 of it), and the
/// smallest it is set in before wrapping onto more than two lines.
const TITLE_SIZE: u32 = 22;
const TITLE_MIN: u32 = 16;
/// Space kept either side of the title, pixels.
const TITLE_PAD: f64 = 20.0;

/// The width a text takes in the SVG at plotters' font `size`: DejaVu Sans averages
/// about 0.6 em a character in labels (capitals and digits a little more); 0.62 errs
/// on the wide side, so an estimated fit is a real one.
pub fn text_width(text: &str, size: u32) -> f64 {
    text.chars().count() as f64 * 0.62 * f64::from(size) / 1.24
}

/// The title set to fit the canvas: its font size and lines. At full size on one or
/// two lines if it fits; else smaller, down to [`TITLE_MIN`]; else as many lines as it
/// needs at that size.
fn title_lines(title: &str) -> (u32, Vec<String>) {
    let room = f64::from(WIDTH) - 2.0 * TITLE_PAD;
    let chars = |size: u32| ((room / text_width("x", size)).floor() as usize).max(1);
    if title.is_empty() {
        return (TITLE_SIZE, Vec::new());
    }
    for size in (TITLE_MIN..=TITLE_SIZE).rev().step_by(2) {
        let lines = wrap(title, chars(size));
        if lines.len() == 1 || (lines.len() == 2 && size == TITLE_MIN) {
            return (size, lines);
        }
    }
    (TITLE_MIN, wrap(title, chars(TITLE_MIN)))
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
                .chain(s.saturated_values.iter().map(|p| p.0))
                .chain(s.model.iter().map(|p| p.0))
                .chain(s.paper.iter().map(|p| p.0))
                .chain(s.saturated.iter().copied())
                .chain(s.model_saturates_at)
        })
        .chain(fig.marks.iter().map(|m| m.0))
        .collect();
    let ys: Vec<f64> = fig
        .series
        .iter()
        .flat_map(|s| {
            s.measured
                .iter()
                .chain(&s.saturated_values)
                .filter(|p| !fig.log_x || p.0 > 0.0)
                .map(|p| p.1)
                .chain(s.model.iter().map(|p| p.1))
                .chain(s.paper.iter().map(|p| p.1))
        })
        .collect();
    let floor = |v: f64| if fig.y_nonnegative { v.max(0.0) } else { v };
    let bars: Vec<f64> = fig
        .series
        .iter()
        .flat_map(|s| {
            s.measured
                .iter()
                .chain(&s.saturated_values)
                .flat_map(|&(_, m, c)| [floor(m - c.unwrap_or(0.0)), m + c.unwrap_or(0.0)])
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
    let bars_drawn = !fig.categories.is_empty();
    let x = if bars_drawn {
        // One slot per category, its bars side by side inside.
        AxisPlan {
            lo: -0.5,
            hi: fig.categories.len() as f64 - 0.5,
            log: false,
            integral: true,
        }
    } else {
        let x_floor = xs.iter().all(|v| !v.is_finite() || *v >= 0.0);
        // Against the offered load, both axes start at zero: the diagonal is the
        // square's.
        AxisPlan::new(&xs, &[], fig.log_x, fig.diagonal, x_floor)
            .ok_or_else(|| err("no point to draw".into()))?
    };
    // Bars stand on zero: their axis starts there.
    let with_zero: Vec<f64> = if bars_drawn && !fig.log_y {
        y_extent.iter().copied().chain([0.0]).collect()
    } else {
        y_extent.clone()
    };
    let y = AxisPlan::new(&ys, &with_zero, fig.log_y, true, fig.y_nonnegative)
        .ok_or_else(|| err("no value to draw".into()))?;
    let (size, title) = title_lines(&fig.title);
    let line_h = (f64::from(size) / 1.24 * 1.3).ceil() as u32;
    let title_h = 12 + line_h * title.len() as u32;
    let mut text = String::new();
    {
        let root = SVGBackend::with_string(&mut text, (WIDTH, HEIGHT)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| err(e.to_string()))?;
        // The title across the whole canvas, centred; the plot and legend below it.
        let (head, body) = root.split_vertically(title_h);
        let style = ("sans-serif", size)
            .into_font()
            .color(&BLACK)
            .pos(Pos::new(HPos::Center, VPos::Top));
        for (k, l) in title.iter().enumerate() {
            head.draw(&Text::new(
                l.clone(),
                ((WIDTH / 2) as i32, 10 + (line_h as usize * k) as i32),
                style.clone(),
            ))
            .map_err(|e| err(e.to_string()))?;
        }
        // The legend has a column of its own, right of the plot, never over the data.
        let (plot, key) = body.split_horizontally(WIDTH - LEGEND);
        let mut chart = ChartBuilder::on(&plot)
            .margin(15)
            .x_label_area_size(45)
            .y_label_area_size(75)
            .build_cartesian_2d(x.coord(), y.coord())
            .map_err(|e| err(e.to_string()))?;
        draw_legend(&key, &draw(&mut chart, fig, &x, &y)?)?;
        root.present().map_err(|e| err(e.to_string()))?;
    }
    Ok(text)
}

/// A tick label: integers without a decimal point; others plain with at most six
/// decimals, or in exponent form (`1.0e5`) with `digits` after the point when very
/// large or small.
fn tick_with(v: f64, digits: usize) -> String {
    if v == v.round() && v.abs() < 1e15 {
        format!("{v:.0}")
    } else if v.abs() >= 1e5 || v.abs() < 1e-3 {
        format!("{v:.digits$e}")
    } else {
        let s = format!("{v:.6}");
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    }
}

/// The labels of an axis' ticks: [`tick_with`]'s, with more digits where two neighbours
/// would otherwise read the same (ticks 100000.1 and 100000.2, or 1.23e-4 and
/// 1.24e-4).
fn labeller(ticks: &[f64]) -> impl Fn(f64) -> String {
    let digits = (1..=15)
        .find(|&d| {
            let l: Vec<String> = ticks.iter().map(|v| tick_with(*v, d)).collect();
            l.windows(2).all(|w| w[0] != w[1])
        })
        .unwrap_or(15);
    move |v| tick_with(v, digits)
}

/// A category's name as a tick label: cut with an ellipsis to the `chars` its slot has.
fn category_label(name: &str, chars: usize) -> String {
    if name.chars().count() <= chars {
        name.to_string()
    } else {
        let cut: String = name.chars().take(chars.saturating_sub(1).max(1)).collect();
        format!("{cut}…")
    }
}

/// What one legend entry shows beside its text.
#[derive(Clone, Copy)]
enum Glyph {
    Line(RGBColor, u32),
    Marker(RGBColor, Marker),
    MarkerLine(RGBColor, Marker, u32),
    Bar(RGBColor),
    Ringed(RGBColor, Marker),
    Cross(RGBColor),
    Arrow(RGBColor),
    /// A short vertical dashed line: a mark, or where a model stops.
    VLine(RGBColor),
    /// A shaded square: the model's validated range.
    Shade,
}

/// The grey of reference lines (the diagonal, marks) and of the validated range.
const GREY: RGBColor = RGBColor(120, 120, 120);
const SHADE: RGBColor = RGBColor(225, 235, 245);

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
            Glyph::Bar(colour) => Rectangle::new(
                [(c.0 - 6, c.1 - 6), (c.0 + 6, c.1 + 6)],
                colour.mix(0.6).filled(),
            )
            .into_dyn(),
            // Drawn as its marker, then its ring (see `draw_legend`).
            Glyph::Ringed(colour, shape) => marker_element(shape, colour)(c),
            Glyph::Cross(colour) => Cross::new(c, 5, colour.stroke_width(2)).into_dyn(),
            Glyph::Arrow(colour) => arrow(colour)((c.0, c.1 - 6)).into_dyn(),
            Glyph::VLine(colour) => DashedPathElement::new(
                vec![(c.0, c.1 - 8), (c.0, c.1 + 8)],
                4,
                3,
                colour.stroke_width(2),
            )
            .into_dyn(),
            Glyph::Shade => {
                Rectangle::new([(c.0 - 8, c.1 - 6), (c.0 + 8, c.1 + 6)], SHADE.filled()).into_dyn()
            }
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

/// The ring round a saturated point drawn at its value (radius [`RING`]).
fn ring(colour: RGBColor) -> impl Fn(Pixel) -> Circle<Pixel, i32> {
    move |c: Pixel| Circle::new(c, RING, colour.stroke_width(2))
}

/// Radius of the saturated marker's ring, pixels (markers are 4 to 5).
const RING: i32 = 9;

/// The chart figures are drawn on: both axes [`ticks::Coord`].
type Chart<'a, 'b> = ChartContext<'a, SVGBackend<'b>, Cartesian2d<ticks::Coord, ticks::Coord>>;

/// Draws the mesh, the references (validated range, marks, diagonal) and the series;
/// saturated points cut are marked on the top edge (`y.hi`). Returns the legend's
/// entries.
fn draw(
    chart: &mut Chart<'_, '_>,
    fig: &Figure,
    x: &AxisPlan,
    y: &AxisPlan,
) -> Result<Vec<(Glyph, String)>> {
    let err = |e: String| Error::Arg(format!("cannot draw the plot: {e}"));
    let top = y.hi;
    // A log axis draws only positive values.
    let shown = |px: f64, py: f64| (!x.log || px > 0.0) && (!y.log || py > 0.0);
    let floor = |v: f64| if fig.y_nonnegative { v.max(0.0) } else { v };
    let bars = !fig.categories.is_empty();
    let slot_chars = if bars {
        let px = f64::from(WIDTH - LEGEND - 110) / fig.categories.len() as f64;
        ((px / text_width("x", 15)).floor() as usize).max(3)
    } else {
        0
    };
    let (x_tick, y_tick) = (labeller(&x.coord().ticks), labeller(&y.coord().ticks));
    let x_label = |v: &f64| {
        if bars {
            let i = v.round();
            if (v - i).abs() < 1e-9 && i >= 0.0 && (i as usize) < fig.categories.len() {
                category_label(&fig.categories[i as usize], slot_chars)
            } else {
                String::new()
            }
        } else if x.integral && v.fract() != 0.0 {
            String::new()
        } else {
            x_tick(*v)
        }
    };
    chart
        .configure_mesh()
        .x_desc(fig.x_label.as_str())
        .y_desc(fig.y_label.as_str())
        .x_label_formatter(&x_label)
        .y_label_formatter(&|v| y_tick(*v))
        .x_label_style(("sans-serif", 15))
        .y_label_style(("sans-serif", 15))
        .axis_desc_style(("sans-serif", 17))
        .light_line_style(WHITE.mix(0.0))
        .bold_line_style(BLACK.mix(0.08))
        .disable_x_mesh()
        .draw()
        .map_err(|e| err(e.to_string()))?;
    let mut legend = Vec::new();
    if let Some((a, b)) = fig.model_valid {
        let (a, b) = (a.max(x.lo), b.min(x.hi));
        if a < b {
            chart
                .draw_series(std::iter::once(Rectangle::new(
                    [(a, y.lo), (b, y.hi)],
                    SHADE.filled(),
                )))
                .map_err(|e| err(e.to_string()))?;
            legend.push((Glyph::Shade, "model validated here".to_string()));
        }
    }
    for (mx, what) in &fig.marks {
        if *mx >= x.lo && *mx <= x.hi {
            vline(chart, *mx, y, GREY)?;
            legend.push((Glyph::VLine(GREY), what.clone()));
        }
    }
    if fig.diagonal {
        // y = x over the values both axes show.
        let (a, b) = (x.lo.max(y.lo), x.hi.min(y.hi));
        if a < b && !bars {
            let points: Vec<(f64, f64)> = if x.log || y.log {
                (0..=40)
                    .map(|i| a * (b / a).powf(f64::from(i) / 40.0))
                    .filter(|v| *v > 0.0)
                    .map(|v| (v, v))
                    .collect()
            } else {
                vec![(a, a), (b, b)]
            };
            line(chart, points, GREY, 6)?;
            legend.push((Glyph::Line(GREY, 6), "y = x (accepted = offered)".into()));
        }
    }
    let n = fig.series.len().max(1) as f64;
    for (i, s) in fig.series.iter().enumerate() {
        let (colour, shape, dash) = style_of(i);
        let name = |what: &str| {
            if s.label.is_empty() {
                what.to_string()
            } else {
                format!("{what}, {}", s.label)
            }
        };
        // A bar chart places series i's bar inside each category's slot.
        let width = 0.8 / n;
        let at = |px: f64| {
            if bars {
                px - 0.4 + width * (i as f64 + 0.5)
            } else {
                px
            }
        };
        let model: Vec<(f64, f64)> = s
            .model
            .iter()
            .copied()
            .filter(|p| shown(p.0, p.1))
            .map(|(px, py)| (at(px), py))
            .collect();
        if !model.is_empty() {
            line(chart, model, colour, dash)?;
            legend.push((Glyph::Line(colour, dash), name("model")));
        }
        if let Some(sx) = s.model_saturates_at.filter(|v| *v >= x.lo && *v <= x.hi) {
            vline(chart, sx, y, colour)?;
            legend.push((Glyph::VLine(colour), name("model saturates")));
        }
        let keep = |p: &&(f64, f64, Option<f64>)| shown(p.0, p.1);
        let measured: Vec<(f64, f64, Option<f64>)> =
            s.measured.iter().filter(keep).copied().collect();
        let at_value: Vec<(f64, f64, Option<f64>)> =
            s.saturated_values.iter().filter(keep).copied().collect();
        let all: Vec<(f64, f64, Option<f64>)> = measured.iter().chain(&at_value).copied().collect();
        let joined = fig.join && s.model.is_empty() && all.len() > 1 && !bars;
        if joined {
            // The drawn means in x order, saturated ones at their value included (a
            // throughput's plateau is part of its curve); cut points are never vertices.
            let mut points: Vec<(f64, f64)> = all.iter().map(|p| (p.0, p.1)).collect();
            points.sort_by(|a, b| a.0.total_cmp(&b.0));
            line(chart, points, colour, dash)?;
        }
        if bars {
            let base = if y.log { y.lo } else { 0.0f64.max(y.lo) };
            chart
                .draw_series(all.iter().map(|&(px, m, _)| {
                    let c = at(px);
                    Rectangle::new(
                        [(c - width * 0.45, base), (c + width * 0.45, m)],
                        colour.mix(0.6).filled(),
                    )
                }))
                .map_err(|e| err(e.to_string()))?;
        }
        chart
            .draw_series(all.iter().filter_map(|&(px, m, c)| {
                let lo = floor(m - c?);
                let lo = if y.log && lo <= 0.0 { m } else { lo };
                Some(ErrorBar::new_vertical(
                    at(px),
                    lo,
                    m,
                    m + c?,
                    colour.stroke_width(1),
                    8,
                ))
            }))
            .map_err(|e| err(e.to_string()))?;
        if !bars {
            let mark = marker_element(shape, colour);
            chart
                .draw_series(
                    all.iter()
                        .map(|&(px, m, _)| EmptyElement::at((px, m)) + mark((0, 0))),
                )
                .map_err(|e| err(e.to_string()))?;
        }
        if !measured.is_empty() || !at_value.is_empty() {
            let what = if all.iter().any(|p| p.2.is_some()) {
                "emulated (95% CI)"
            } else {
                "emulated"
            };
            let glyph = if bars {
                Glyph::Bar(colour)
            } else if joined {
                Glyph::MarkerLine(colour, shape, dash)
            } else {
                Glyph::Marker(colour, shape)
            };
            legend.push((glyph, name(what)));
        }
        if !at_value.is_empty() {
            let r = ring(colour);
            chart
                .draw_series(
                    at_value
                        .iter()
                        .map(|&(px, m, _)| EmptyElement::at((at(px), m)) + r((0, 0))),
                )
                .map_err(|e| err(e.to_string()))?;
            legend.push((
                Glyph::Ringed(colour, shape),
                name("emulated: saturated, at its value"),
            ));
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
                        .map(|&(px, py)| Cross::new((at(px), py), 5, colour.stroke_width(2))),
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
                        .map(|&px| EmptyElement::at((at(px), top)) + up((0, 2))),
                )
                .map_err(|e| err(e.to_string()))?;
            legend.push((Glyph::Arrow(colour), name("emulated: saturated")));
        }
    }
    Ok(legend)
}

/// A dashed vertical line across the plot at `px`.
fn vline(chart: &mut Chart<'_, '_>, px: f64, y: &AxisPlan, colour: RGBColor) -> Result<()> {
    chart
        .draw_series(std::iter::once(DashedPathElement::new(
            vec![(px, y.lo), (px, y.hi)],
            6,
            4,
            colour.stroke_width(2),
        )))
        .map(|_| ())
        .map_err(|e| Error::Arg(format!("cannot draw the plot: {e}")))
}

/// Draws a line through `points` in the style of a series (solid or dashed).
fn line(
    chart: &mut Chart<'_, '_>,
    points: Vec<(f64, f64)>,
    colour: RGBColor,
    dash: u32,
) -> Result<()> {
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
    let style = ("sans-serif", LEGEND_SIZE).into_font().color(&BLACK);
    let mut y = 40;
    for (glyph, text) in entries {
        if let Glyph::MarkerLine(colour, _, dash) = *glyph {
            area.draw(&Glyph::Line(colour, dash).element((15, y)))
                .map_err(|e| err(e.to_string()))?;
        }
        area.draw(&glyph.element((15, y)))
            .map_err(|e| err(e.to_string()))?;
        if let Glyph::Ringed(colour, _) = *glyph {
            area.draw(&ring(colour)((15, y)))
                .map_err(|e| err(e.to_string()))?;
        }
        // Long labels (a swept RON value) wrap inside the column instead of running off
        // the figure.
        let lines = wrap(text, LEGEND_CHARS);
        for (k, part) in lines.iter().enumerate() {
            let dy = 16 * k as i32;
            area.draw(&Text::new(part.clone(), (32, y - 7 + dy), style.clone()))
                .map_err(|e| err(e.to_string()))?;
        }
        y += 24 + 16 * (lines.len() as i32 - 1);
    }
    Ok(())
}

/// The legend's font size (plotters' size).
const LEGEND_SIZE: u32 = 14;

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
                ..Series::default()
            }],
            ..Figure::default()
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
