//! The per-link heat map (`routemu run --heatmap FILE.svg`): every directed link drawn
//! on a layout of the topology and coloured by a chosen quantity, with a colour bar and
//! its unit. The colours are viridis (a sequential, perceptually uniform map whose
//! lightness grows with the value), so a greyscale print keeps the order.
//!
//! Layouts: a torus or mesh on its grid (dimensions 0 and 1; higher dimensions as panels
//! side by side, their links as short diagonal stubs), wrap-around links as stubs leaving
//! the node in their direction; a Manhattan Street network on its grid the same way; a
//! hypercube with its even dimensions along x and its odd ones along y, links longer than
//! one step drawn as arcs; a dragonfly as its groups — each group's routers on a small
//! ring with their local links inside it, the groups on a large circle, global links as
//! chords bent towards the centre, drawn thicker (`dragonfly_layout`); a flattened
//! butterfly as its router grid, dimension 0 along rows and 1 along columns, a link
//! between neighbours straight and a longer one as an arc; a host/switch network on a
//! circle (a plain fallback). Under concentration only the routers and the links between
//! them are drawn: the terminal links are left out, their utilisation is the legend's
//! `terminal` line. The two directions of a link are drawn side by side, each to the
//! right of its direction of travel. A network whose links have kinds
//! (`topology::link_kind`) gets a legend of its link kinds, each with its mean and
//! largest utilisation (`link_totals.by_kind`).
//!
//! This module draws only; the numbers are the report's per-link rows
//! (`stats::observe::LinkRow`, every link, not the `max_links` bound). It writes its SVG
//! by hand rather than through plotters (`presentation::plot`), because it needs arcs, stubs
//! and a gradient that plotters' chart API does not draw.

use crate::foundation::error::{Error, Result};
use crate::stats::observe::{LinkRow, LinkTotals};
use crate::topology::{LinkKind, Topology};
use std::fmt::Write;
use std::str::FromStr;

pub use crate::stats::observe::MAX_DRAWN_LINKS;

/// What colours the links.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Quantity {
    /// Fraction of the link's capacity used (mean over replications).
    #[default]
    Utilization,
    /// Flits carried.
    Flits,
    /// Headers (circuit: set-up requests) that asked for the link.
    Headers,
    /// Header blocking, in the mode's unit.
    Blocking,
    /// Blocking per header.
    BlockingPerHeader,
}

impl FromStr for Quantity {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        Ok(match s {
            "utilization" | "utilisation" => Quantity::Utilization,
            "flits" => Quantity::Flits,
            "headers" => Quantity::Headers,
            "blocking" => Quantity::Blocking,
            "blocking-per-header" => Quantity::BlockingPerHeader,
            _ => {
                return Err(Error::Arg(format!(
                    "heat map quantity `{s}`: expected utilization, flits, headers, blocking \
                     or blocking-per-header"
                )))
            }
        })
    }
}

impl Quantity {
    /// The quantity of a link (None: undefined, e.g. blocking per header without headers).
    pub fn of(self, l: &LinkRow) -> Option<f64> {
        match self {
            Quantity::Utilization => Some(l.utilization),
            Quantity::Flits => Some(l.flits as f64),
            Quantity::Headers => Some(l.headers as f64),
            Quantity::Blocking => Some(l.blocking as f64),
            Quantity::BlockingPerHeader => l.blocking_per_header,
        }
    }

    /// The colour bar's label: the quantity, its unit, and how replications combine.
    pub fn label(self, totals: &LinkTotals, reps: u32) -> [String; 3] {
        let how = match (self, reps) {
            (_, 0 | 1) => "measurement window".to_string(),
            (Quantity::Utilization | Quantity::BlockingPerHeader, _) => {
                format!("mean of {reps} replications")
            }
            _ => format!("sum of {reps} replications"),
        };
        let (name, unit) = match self {
            Quantity::Utilization => ("link utilisation", "fraction of capacity".to_string()),
            Quantity::Flits => ("flits carried", "flits".to_string()),
            Quantity::Headers => ("headers asking for the link", "count".to_string()),
            Quantity::Blocking => ("header blocking", totals.blocking_unit.to_string()),
            Quantity::BlockingPerHeader => (
                "header blocking per header",
                format!("{} per header", totals.blocking_unit),
            ),
        };
        [name.to_string(), format!("({unit})"), how]
    }
}

/// Viridis at nine evenly spaced points (matplotlib's table), interpolated linearly.
const VIRIDIS: [(u8, u8, u8); 9] = [
    (68, 1, 84),
    (71, 44, 122),
    (59, 81, 139),
    (44, 113, 142),
    (33, 144, 141),
    (39, 173, 129),
    (92, 200, 99),
    (170, 220, 50),
    (253, 231, 37),
];

/// The colour of `x` in [0, 1] (clamped).
pub fn viridis(x: f64) -> (u8, u8, u8) {
    let x = if x.is_finite() {
        x.clamp(0.0, 1.0)
    } else {
        0.0
    };
    let f = x * (VIRIDIS.len() - 1) as f64;
    let i = (f.floor() as usize).min(VIRIDIS.len() - 2);
    let t = f - i as f64;
    let (a, b) = (VIRIDIS[i], VIRIDIS[i + 1]);
    let mix = |p: u8, q: u8| (p as f64 + (q as f64 - p as f64) * t).round() as u8;
    (mix(a.0, b.0), mix(a.1, b.1), mix(a.2, b.2))
}

fn hex((r, g, b): (u8, u8, u8)) -> String {
    format!("#{r:02x}{g:02x}{b:02x}")
}

/// Where a link is drawn, in cell units.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Shape {
    /// A straight segment between two node positions.
    Line((f64, f64), (f64, f64)),
    /// An arc between two node positions, bulging to the right of travel by `bulge`.
    Arc((f64, f64), (f64, f64), f64),
    /// A short stub leaving a node position in a direction (unit vector).
    Stub((f64, f64), (f64, f64)),
    /// A quadratic curve between two node positions through a control point (a
    /// dragonfly's global link, bent towards the centre).
    Curve((f64, f64), (f64, f64), (f64, f64)),
}

/// Node positions (cell units) and each link's shape. Only nodes `0..pos.len()` are
/// drawn (under concentration, the routers), and only the links between them.
struct Drawing {
    pos: Vec<(f64, f64)>,
    width: f64,
    height: f64,
    /// Labels placed on the drawing (a dragonfly's group numbers), in cell units.
    labels: Vec<((f64, f64), String)>,
}

/// Position of a grid node: dimensions 0 and 1 in a panel, higher dimensions as a grid
/// of panels.
fn grid_pos(coords: &[u32], k: u32) -> (f64, f64) {
    let x0 = coords.first().copied().unwrap_or(0) as f64;
    let y0 = coords.get(1).copied().unwrap_or(0) as f64;
    let mut panel = 0u64;
    for &c in coords.iter().skip(2).rev() {
        panel = panel * k as u64 + c as u64;
    }
    let panels = (k as u64).pow(coords.len().saturating_sub(2) as u32);
    let across = (panels as f64).sqrt().ceil().max(1.0) as u64;
    let (px, py) = (panel % across, panel / across);
    let side = k as f64 + 1.0;
    (x0 + px as f64 * side, y0 + py as f64 * side)
}

/// The direction a grid port points in: dimension 0 along x, 1 along y, higher ones
/// diagonally (a different angle each).
fn grid_dir(dim: u32, up: bool) -> (f64, f64) {
    let s = if up { 1.0 } else { -1.0 };
    match dim {
        0 => (s, 0.0),
        1 => (0.0, s),
        d => {
            let a = std::f64::consts::FRAC_PI_4 + (d - 2) as f64 * 0.5;
            (s * a.cos(), -s * a.sin())
        }
    }
}

/// A dragonfly drawn as a ring of rings (cell units).
struct Rings {
    /// Every router's position.
    pos: Vec<(f64, f64)>,
    /// The centre of the circle of groups.
    centre: (f64, f64),
    /// Each group's centre.
    groups: Vec<(f64, f64)>,
    /// The radius of the circle of groups.
    big: f64,
    /// The radius of a group's ring.
    small: f64,
}

/// Where a dragonfly's routers go: group g's centre on a circle of radius `big` around
/// (`big + small`, `big + small`), clockwise from the top, its routers on a ring of
/// radius `small` around it.
fn dragonfly_layout(d: &crate::topology::Dragonfly) -> Rings {
    use std::f64::consts::{FRAC_PI_2, TAU};
    let (a, g) = (d.a as f64, d.groups() as f64);
    // About 1.2 cells between the routers of a ring, 1.5 between two rings.
    let small = (1.2 * a / TAU).max(0.6);
    let big = (g * (2.0 * small + 1.5) / TAU).max(2.0);
    let centre = (big + small, big + small);
    let groups: Vec<(f64, f64)> = (0..d.groups())
        .map(|s| {
            let t = -FRAC_PI_2 + TAU * s as f64 / g;
            (centre.0 + big * t.cos(), centre.1 + big * t.sin())
        })
        .collect();
    let pos = (0..d.routers() as u32)
        .map(|r| {
            let (s, i) = (d.group_of(r), d.index_of(r));
            let t = -FRAC_PI_2 + TAU * s as f64 / g + TAU * (i as f64 + 0.5) / a;
            let m = groups[s as usize];
            (m.0 + small * t.cos(), m.1 + small * t.sin())
        })
        .collect();
    Rings {
        pos,
        centre,
        groups,
        big,
        small,
    }
}

/// Cells between two neighbouring routers of a flattened butterfly.
const FLATFLY_SPACING: f64 = 2.0;

fn layout(topo: &Topology) -> Drawing {
    let n = topo.nodes();
    let mut labels = Vec::new();
    let (pos, width, height): (Vec<(f64, f64)>, f64, f64) = match topo {
        // The routers only, on the router network's layout.
        Topology::Concentrated(c) => return layout(&c.net),
        Topology::Dragonfly(d) => {
            let Rings {
                pos,
                centre: c,
                groups,
                big,
                small,
            } = dragonfly_layout(d);
            // Group numbers outside their rings (while there is room to read them).
            if groups.len() <= 64 {
                for (s, m) in groups.iter().enumerate() {
                    let (dx, dy) = (m.0 - c.0, m.1 - c.1);
                    let len = (dx * dx + dy * dy).sqrt().max(1e-9);
                    let out = small + 0.55;
                    labels.push((
                        (m.0 + dx / len * out, m.1 + dy / len * out),
                        format!("g{s}"),
                    ));
                }
            }
            let side = 2.0 * (big + small);
            (pos, side, side)
        }
        Topology::FlatFly(f) => {
            // Routers `FLATFLY_SPACING` cells apart: room for the arcs between them.
            let (pos, w, h) = grid_layout(f.grid.k, f.grid.n, n);
            let sp = FLATFLY_SPACING;
            let pos = pos.into_iter().map(|(x, y)| (x * sp, y * sp)).collect();
            (pos, w * sp, h * sp)
        }
        Topology::Torus(t) => grid_layout(t.grid.k, t.grid.n, n),
        Topology::Mesh(m) => grid_layout(m.grid.k, m.grid.n, n),
        Topology::ManhattanStreet(ms) => {
            let k = ms.k;
            let pos = (0..n as u32)
                .map(|v| ((v % k) as f64, (v / k) as f64))
                .collect();
            (pos, (k - 1) as f64, (k - 1) as f64)
        }
        Topology::Hypercube(h) => {
            let (xb, yb) = (h.dim.div_ceil(2), h.dim / 2);
            let pos = (0..n as u32)
                .map(|v| {
                    let (mut x, mut y) = (0u32, 0u32);
                    for b in 0..h.dim {
                        if v >> b & 1 == 1 {
                            if b % 2 == 0 {
                                x |= 1 << (b / 2);
                            } else {
                                y |= 1 << (b / 2);
                            }
                        }
                    }
                    (x as f64, y as f64)
                })
                .collect();
            (
                pos,
                ((1u64 << xb) - 1) as f64,
                ((1u64 << yb).max(1) - 1) as f64,
            )
        }
        Topology::Hosts(_) => {
            // A circle whose circumference gives every node about one cell.
            let r = (n as f64 / std::f64::consts::TAU).max(1.0);
            let pos = (0..n)
                .map(|i| {
                    let a = std::f64::consts::TAU * i as f64 / n as f64;
                    (r + r * a.cos(), r + r * a.sin())
                })
                .collect();
            (pos, 2.0 * r, 2.0 * r)
        }
    };
    Drawing {
        pos,
        width,
        height,
        labels,
    }
}

fn grid_layout(k: u32, dims: u32, n: usize) -> (Vec<(f64, f64)>, f64, f64) {
    let grid = crate::topology::Grid { k, n: dims };
    let coords = |v: u32| (0..dims).map(|d| grid.coord(v, d)).collect::<Vec<_>>();
    let pos: Vec<(f64, f64)> = (0..n as u32).map(|v| grid_pos(&coords(v), k)).collect();
    let w = pos.iter().map(|p| p.0).fold(0.0, f64::max);
    let h = pos.iter().map(|p| p.1).fold(0.0, f64::max);
    (pos, w, h)
}

/// How link `from → to` (leaving on `port`) is drawn; None: not drawn (a terminal link).
fn shape(topo: &Topology, d: &Drawing, from: u32, port: u8, to: u32) -> Option<Shape> {
    let (a, b) = (*d.pos.get(from as usize)?, *d.pos.get(to as usize)?);
    let dir = match topo {
        // Router to router: the router network's ports (numbered alike).
        Topology::Concentrated(c) => return shape(&c.net, d, from, port, to),
        Topology::Dragonfly(df) => {
            if !df.is_global(port as u32) {
                return Some(Shape::Line(a, b));
            }
            // A chord bent towards the centre of the circle of groups, the more the
            // farther apart its groups are.
            let c = (d.width / 2.0, d.height / 2.0);
            let m = ((a.0 + b.0) / 2.0, (a.1 + b.1) / 2.0);
            let pull = 0.45;
            return Some(Shape::Curve(
                a,
                b,
                (m.0 + (c.0 - m.0) * pull, m.1 + (c.1 - m.1) * pull),
            ));
        }
        Topology::FlatFly(f) => {
            let (dim, o) = f.port_dim(port as u32);
            if dim >= 2 {
                Some(grid_dir(dim, 2 * o <= f.grid.k))
            } else {
                // Routers apart along the dimension (1: neighbours).
                let span = ((b.0 - a.0).abs() + (b.1 - a.1).abs()) / FLATFLY_SPACING;
                return Some(if span <= 1.0 + 1e-9 || f.grid.k <= 2 {
                    Shape::Line(a, b)
                } else {
                    // Arcs nest by span, the farthest reaching 0.4 of the gap to the
                    // next row (or column; a quadratic's apex is half its control
                    // point's offset); the other direction bulges the other way.
                    let most = 0.8 * FLATFLY_SPACING;
                    Shape::Arc(a, b, most * (span - 1.0) / (f.grid.k - 2) as f64)
                });
            }
        }
        Topology::Torus(t) => {
            let (dim, up) = t.port_dim(port as u32);
            Some(grid_dir(dim, up))
        }
        Topology::Mesh(_) => Some(grid_dir(port as u32 / 2, port.is_multiple_of(2))),
        Topology::ManhattanStreet(ms) => {
            let (r, c) = (from / ms.k, from % ms.k);
            Some(if port == 0 {
                (if r % 2 == 0 { 1.0 } else { -1.0 }, 0.0)
            } else {
                (0.0, if c % 2 == 0 { 1.0 } else { -1.0 })
            })
        }
        Topology::Hypercube(_) => {
            let span = ((b.0 - a.0).abs() + (b.1 - a.1).abs()).max(1.0);
            return Some(if span <= 1.0 {
                Shape::Line(a, b)
            } else {
                Shape::Arc(a, b, 0.12 * span)
            });
        }
        Topology::Hosts(_) => return Some(Shape::Line(a, b)),
    };
    let dir = dir.unwrap_or((1.0, 0.0));
    // A unit step in the port's direction is a plain link; anything else (a wrap-around,
    // a higher dimension) is a stub.
    let step = (b.0 - a.0, b.1 - a.1);
    Some(
        if (step.0 - dir.0).abs() < 1e-9 && (step.1 - dir.1).abs() < 1e-9 {
            Shape::Line(a, b)
        } else {
            Shape::Stub(a, dir)
        },
    )
}

/// The legend's entry for a link kind: its name and how it is drawn.
fn kind_legend(kind: LinkKind) -> String {
    match kind {
        LinkKind::Local => "local links (inside a group): thin, straight".into(),
        LinkKind::Global => "global links (between groups): thick chords".into(),
        LinkKind::Dimension(0) => "dim0 links (along a row)".into(),
        LinkKind::Dimension(1) => "dim1 links (along a column)".into(),
        LinkKind::Dimension(d) => format!("dim{d} links: diagonal stubs"),
        LinkKind::Network => "network links (router to router)".into(),
        LinkKind::Terminal => "terminal links: not drawn".into(),
    }
}

/// How much thinner than a global link a link of `kind` is drawn: a dragonfly's local
/// links are thinner, so the eye goes to the global ones first.
fn weight(kind: Option<LinkKind>) -> f64 {
    match kind {
        Some(LinkKind::Local) => 0.55,
        _ => 1.0,
    }
}

/// `v` with `digits` decimals, formatted through integers: a heat map writes several
/// numbers per link, and float formatting with a precision is slow.
struct Fixed(f64, u32);

impl std::fmt::Display for Fixed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let scale = 10u64.pow(self.1);
        let v = (self.0.abs() * scale as f64).round() as u64;
        let sign = if self.0 < 0.0 && v != 0 { "-" } else { "" };
        if self.1 == 0 {
            return write!(f, "{sign}{v}");
        }
        write!(
            f,
            "{sign}{}.{:0w$}",
            v / scale,
            v % scale,
            w = self.1 as usize
        )
    }
}

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// A number for a colour-bar tick: short, without needless decimals.
fn tick(v: f64) -> String {
    if v == 0.0 {
        "0".into()
    } else if v.abs() >= 1000.0 || v.fract() == 0.0 && v.abs() >= 10.0 {
        format!("{v:.0}")
    } else if v.abs() >= 1.0 {
        format!("{v:.2}")
    } else {
        format!("{v:.3}")
    }
}

/// The note under every heat map.
const NOTE: &str = "Each direction of a link is drawn to the right of its travel; stubs are \
                    wrap-around (or higher-dimension) links.";

/// The note under a heat map of `topo`.
fn note(topo: &Topology) -> &'static str {
    match topo.router_net() {
        Topology::Dragonfly(_) => {
            "Each direction of a link is drawn to the right of its travel; a ring is a \
             group (gN), routers numbered clockwise from the group's first."
        }
        Topology::FlatFly(_) => {
            "Each direction of a link is drawn to the right of its travel; links beyond \
             the next router are arcs, higher dimensions' are stubs."
        }
        _ => NOTE,
    }
}

/// The SVG heat map of `links` (every link of the run) on `topo`, coloured by `q`;
/// `title` heads it, `reps` replications made the numbers.
pub fn svg(
    topo: &Topology,
    links: &[LinkRow],
    totals: &LinkTotals,
    q: Quantity,
    title: &str,
    reps: u32,
) -> Result<String> {
    if links.len() > MAX_DRAWN_LINKS {
        return Err(Error::Arg(format!(
            "--heatmap: this network has {} links; a heat map draws at most {MAX_DRAWN_LINKS} \
             (use --per-link and the JSON's `links` for bigger networks)",
            links.len()
        )));
    }
    let d = layout(topo);
    let cols = d.width + 1.0;
    let rows = d.height + 1.0;
    // Cells of 16 to 64 pixels, the drawing at most about 1000 pixels across.
    let cell = (1000.0 / cols.max(rows)).clamp(16.0, 64.0);
    let margin = cell.max(40.0);
    let (top, bar_w) = (40.0, 190.0);
    let draw_w = d.width * cell + 2.0 * margin;
    let draw_h = d.height * cell + 2.0 * margin;
    // Wide enough for the title and the notes under the drawing: a text's width is
    // about 0.62 em a character (DejaVu Sans, on the wide side), so none is clipped.
    let text_w = |t: &str, px: f64| t.chars().count() as f64 * 0.62 * px;
    let width = (draw_w + bar_w)
        .max(text_w(title, 15.0) + 40.0)
        .max(text_w(note(topo), 11.0) + 20.0)
        .max(text_w(&topo.describe(), 11.0) + 20.0)
        .ceil();
    // The legend of link kinds under the colour bar: a title, then two lines a kind.
    let kinds = &totals.by_kind;
    let legend_h = if kinds.is_empty() {
        0.0
    } else {
        40.0 + 30.0 * kinds.len() as f64
    };
    let width = if kinds.is_empty() {
        width
    } else {
        // Room for the legend's longest line right of the drawing.
        let longest = kinds
            .iter()
            .map(|k| kind_legend(k.kind).chars().count())
            .max()
            .unwrap_or(0) as f64;
        width.max(draw_w + 10.0 + 30.0 + longest * 0.62 * 11.0 + 10.0)
    };
    let height = top + draw_h.max(320.0 + legend_h) + 40.0;
    let px = |p: (f64, f64)| (margin + p.0 * cell, top + margin + p.1 * cell);
    let values: Vec<Option<f64>> = links.iter().map(|l| q.of(l)).collect();
    let max = values.iter().flatten().copied().fold(0.0, f64::max);
    let scale = if max > 0.0 { max } else { 1.0 };
    // A dragonfly's many chords are drawn thinner than a grid's links.
    let thin = if topo.dragonfly().is_some() { 0.6 } else { 1.0 };
    let stroke = (cell * 0.09 * thin).max(1.5);
    let offset = (cell * 0.09).max(1.8);
    let radius = (cell * 0.13).max(2.0);

    let mut s = String::new();
    let _ = write!(
        s,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width:.0}\" height=\"{height:.0}\" \
         viewBox=\"0 0 {width:.0} {height:.0}\" font-family=\"sans-serif\">\n\
         <rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n\
         <text x=\"{:.1}\" y=\"24\" font-size=\"15\" text-anchor=\"middle\">{}</text>\n\
         <text x=\"10\" y=\"{:.1}\" font-size=\"11\" fill=\"#444\">{}</text>\n\
         <text x=\"10\" y=\"{:.1}\" font-size=\"11\" fill=\"#444\">{}</text>\n",
        width / 2.0,
        esc(title),
        height - 24.0,
        esc(&topo.describe()),
        height - 10.0,
        note(topo),
    );
    s.push_str("<g stroke-linecap=\"round\" fill=\"none\">\n");
    // Where links have kinds (dragonfly, flattened butterfly), the busiest are drawn
    // last, on top: a hot global link is not hidden under idle ones crossing it.
    let mut order: Vec<usize> = (0..links.len()).collect();
    if !totals.by_kind.is_empty() {
        order.sort_by(|&i, &j| {
            let v = |k: usize| values[k].unwrap_or(-1.0);
            v(i).total_cmp(&v(j)).then(i.cmp(&j))
        });
    }
    for (l, v) in order.iter().map(|&i| (&links[i], &values[i])) {
        let Some(shape) = shape(topo, &d, l.from, l.port, l.to) else {
            continue;
        };
        let colour = match v {
            Some(v) => hex(viridis(v / scale)),
            None => "#cccccc".into(),
        };
        let title = format!(
            "{} → {} (port {}{}): utilisation {}, flits {}, headers {}, blocking {}",
            l.from,
            l.to,
            l.port,
            l.kind.map_or(String::new(), |k| format!(", {k} link")),
            Fixed(l.utilization, 4),
            l.flits,
            l.headers,
            l.blocking
        );
        let path = match shape {
            Shape::Line(a, b) => {
                let (a, b) = (px(a), px(b));
                let (dx, dy) = (b.0 - a.0, b.1 - a.1);
                let len = (dx * dx + dy * dy).sqrt().max(1e-9);
                let (ux, uy) = (dx / len, dy / len);
                // Right of travel (y grows downwards): (−uy, ux).
                let (ox, oy) = (-uy * offset, ux * offset);
                let cut = radius * 1.3;
                format!(
                    "M{},{} L{},{}",
                    Fixed(a.0 + ux * cut + ox, 1),
                    Fixed(a.1 + uy * cut + oy, 1),
                    Fixed(b.0 - ux * cut + ox, 1),
                    Fixed(b.1 - uy * cut + oy, 1),
                )
            }
            Shape::Arc(a, b, bulge) => {
                let (a, b) = (px(a), px(b));
                let (dx, dy) = (b.0 - a.0, b.1 - a.1);
                let len = (dx * dx + dy * dy).sqrt().max(1e-9);
                let (ux, uy) = (dx / len, dy / len);
                let (nx, ny) = (-uy, ux);
                let c = (
                    (a.0 + b.0) / 2.0 + nx * bulge * cell,
                    (a.1 + b.1) / 2.0 + ny * bulge * cell,
                );
                format!(
                    "M{},{} Q{},{} {},{}",
                    Fixed(a.0 + nx * offset, 1),
                    Fixed(a.1 + ny * offset, 1),
                    Fixed(c.0, 1),
                    Fixed(c.1, 1),
                    Fixed(b.0 + nx * offset, 1),
                    Fixed(b.1 + ny * offset, 1),
                )
            }
            Shape::Curve(a, b, c) => {
                let (a, b, c) = (px(a), px(b), px(c));
                let (dx, dy) = (b.0 - a.0, b.1 - a.1);
                let len = (dx * dx + dy * dy).sqrt().max(1e-9);
                let (nx, ny) = (-dy / len * offset, dx / len * offset);
                format!(
                    "M{},{} Q{},{} {},{}",
                    Fixed(a.0 + nx, 1),
                    Fixed(a.1 + ny, 1),
                    Fixed(c.0 + nx, 1),
                    Fixed(c.1 + ny, 1),
                    Fixed(b.0 + nx, 1),
                    Fixed(b.1 + ny, 1),
                )
            }
            Shape::Stub(a, dir) => {
                let a = px(a);
                let (ox, oy) = (-dir.1 * offset, dir.0 * offset);
                let (from, to) = (radius * 1.3, cell * 0.42);
                format!(
                    "M{},{} L{},{}",
                    Fixed(a.0 + dir.0 * from + ox, 1),
                    Fixed(a.1 + dir.1 * from + oy, 1),
                    Fixed(a.0 + dir.0 * to + ox, 1),
                    Fixed(a.1 + dir.1 * to + oy, 1),
                )
            }
        };
        let _ = writeln!(
            s,
            "<path d=\"{path}\" stroke=\"{colour}\" stroke-width=\"{}\"><title>{}</title></path>",
            Fixed(stroke * weight(l.kind), 1),
            esc(&title)
        );
    }
    s.push_str("</g>\n<g fill=\"white\" stroke=\"#333\" stroke-width=\"1\">\n");
    for p in &d.pos {
        let (x, y) = px(*p);
        let _ = writeln!(s, "<circle cx=\"{x:.1}\" cy=\"{y:.1}\" r=\"{radius:.1}\"/>");
    }
    s.push_str("</g>\n");
    if cell >= 40.0 && d.pos.len() <= 256 {
        // Node numbers in the corner between a node's links (up and to the right).
        s.push_str("<g font-size=\"9\" fill=\"#333\">\n");
        for (i, p) in d.pos.iter().enumerate() {
            let (x, y) = px(*p);
            let _ = writeln!(
                s,
                "<text x=\"{:.1}\" y=\"{:.1}\">{i}</text>",
                x + radius * 0.8 + 2.0,
                y - radius * 0.8 - 2.0
            );
        }
        s.push_str("</g>\n");
    }
    if !d.labels.is_empty() {
        s.push_str("<g font-size=\"11\" fill=\"#333\" text-anchor=\"middle\">\n");
        for (p, text) in &d.labels {
            let (x, y) = px(*p);
            let _ = writeln!(
                s,
                "<text x=\"{x:.1}\" y=\"{:.1}\">{}</text>",
                y + 4.0,
                esc(text)
            );
        }
        s.push_str("</g>\n");
    }
    // The colour bar: a vertical gradient, 0 at the bottom, with five ticks and the label.
    let (bx, by, bh) = (draw_w + 10.0, top + 70.0, 200.0);
    s.push_str("<defs><linearGradient id=\"viridis\" x1=\"0\" y1=\"1\" x2=\"0\" y2=\"0\">\n");
    for i in 0..=16 {
        let f = i as f64 / 16.0;
        let _ = writeln!(
            s,
            "<stop offset=\"{f:.4}\" stop-color=\"{}\"/>",
            hex(viridis(f))
        );
    }
    s.push_str("</linearGradient></defs>\n");
    let _ = writeln!(
        s,
        "<rect x=\"{bx:.1}\" y=\"{by:.1}\" width=\"18\" height=\"{bh:.1}\" fill=\"url(#viridis)\" stroke=\"#333\"/>"
    );
    for i in 0..=4 {
        let f = i as f64 / 4.0;
        let y = by + bh * (1.0 - f);
        let _ = writeln!(
            s,
            "<line x1=\"{:.1}\" y1=\"{y:.1}\" x2=\"{:.1}\" y2=\"{y:.1}\" stroke=\"#333\"/>\
             <text x=\"{:.1}\" y=\"{:.1}\" font-size=\"11\">{}</text>",
            bx + 18.0,
            bx + 23.0,
            bx + 26.0,
            y + 4.0,
            tick(f * max)
        );
    }
    // The label above the bar: the quantity, its unit, how replications combine.
    for (i, line) in q.label(totals, reps).iter().enumerate() {
        let _ = writeln!(
            s,
            "<text x=\"{bx:.1}\" y=\"{:.1}\" font-size=\"11\">{}</text>",
            by - 46.0 + 14.0 * i as f64,
            esc(line)
        );
    }
    if values.iter().any(|v| v.is_none()) {
        let _ = writeln!(
            s,
            "<line x1=\"{bx:.1}\" y1=\"{:.1}\" x2=\"{:.1}\" y2=\"{:.1}\" stroke=\"#cccccc\" stroke-width=\"4\"/>\
             <text x=\"{:.1}\" y=\"{:.1}\" font-size=\"11\">no value</text>",
            by + bh + 24.0,
            bx + 18.0,
            by + bh + 24.0,
            bx + 26.0,
            by + bh + 28.0
        );
    }
    if !kinds.is_empty() {
        // The link kinds: how each is drawn, and its utilisation (`link_totals.by_kind`).
        let y0 = by + bh + 50.0;
        let _ = writeln!(
            s,
            "<text x=\"{bx:.1}\" y=\"{y0:.1}\" font-size=\"11\" font-weight=\"bold\">link kinds (utilisation)</text>"
        );
        for (i, k) in kinds.iter().enumerate() {
            let y = y0 + 20.0 + 30.0 * i as f64;
            if k.kind != LinkKind::Terminal {
                let _ = writeln!(
                    s,
                    "<line x1=\"{bx:.1}\" y1=\"{:.1}\" x2=\"{:.1}\" y2=\"{:.1}\" stroke=\"#555\" \
                     stroke-width=\"{}\" stroke-linecap=\"round\"/>",
                    y - 4.0,
                    bx + 22.0,
                    y - 4.0,
                    Fixed(stroke * weight(Some(k.kind)), 1)
                );
            }
            let _ = writeln!(
                s,
                "<text x=\"{:.1}\" y=\"{y:.1}\" font-size=\"11\">{}</text>\
                 <text x=\"{:.1}\" y=\"{:.1}\" font-size=\"11\" fill=\"#444\">mean {}, max {} ({} links)</text>",
                bx + 30.0,
                esc(&kind_legend(k.kind)),
                bx + 30.0,
                y + 13.0,
                Fixed(k.utilization_mean, 3),
                Fixed(k.utilization_max, 3),
                k.count
            );
        }
    }
    s.push_str("</svg>\n");
    Ok(s)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::TopologyConfig;

    fn rows(topo: &Topology) -> Vec<LinkRow> {
        let mut v = Vec::new();
        for n in 0..topo.nodes() as u32 {
            for p in 0..topo.degree() as u8 {
                if let Some(to) = topo.neighbor(
                    crate::foundation::types::NodeId(n),
                    crate::foundation::types::PortId(p),
                ) {
                    v.push(LinkRow {
                        from: n,
                        port: p,
                        to: to.0,
                        utilization: (n as f64 * 0.37 + p as f64 * 0.11).fract(),
                        ..LinkRow::default()
                    });
                }
            }
        }
        v
    }

    #[test]
    fn viridis_runs_from_dark_to_light() {
        let lum = |c: (u8, u8, u8)| 0.2126 * c.0 as f64 + 0.7152 * c.1 as f64 + 0.0722 * c.2 as f64;
        let mut last = -1.0;
        for i in 0..=20 {
            let l = lum(viridis(i as f64 / 20.0));
            assert!(
                l > last,
                "lightness grows with the value (greyscale keeps the order)"
            );
            last = l;
        }
        assert_eq!(viridis(0.0), VIRIDIS[0]);
        assert_eq!(viridis(1.0), VIRIDIS[8]);
    }

    #[test]
    fn every_topology_draws_one_path_per_link() {
        for cfg in [
            TopologyConfig::Torus {
                k: 4,
                n: 2,
                bidirectional: true,
                c: 1,
            },
            TopologyConfig::Torus {
                k: 3,
                n: 3,
                bidirectional: false,
                c: 1,
            },
            TopologyConfig::Mesh { k: 3, n: 2, c: 1 },
            TopologyConfig::Hypercube { dim: 5 },
            TopologyConfig::ManhattanStreet { k: 4 },
        ] {
            let topo = Topology::from_config(&cfg).unwrap();
            let links = rows(&topo);
            let text = svg(
                &topo,
                &links,
                &LinkTotals::default(),
                Quantity::Utilization,
                "t",
                1,
            )
            .unwrap();
            assert_eq!(text.matches("<path ").count(), links.len(), "{cfg:?}");
            assert_eq!(text.matches("<circle ").count(), topo.nodes(), "{cfg:?}");
            assert!(!text.contains("NaN"), "{cfg:?}");
        }
    }

    /// The totals by kind of `links` (as `stats::observe` makes them from a run).
    fn by_kind(links: &[LinkRow]) -> LinkTotals {
        let mut kinds: Vec<LinkKind> = links.iter().filter_map(|l| l.kind).collect();
        kinds.sort_unstable();
        kinds.dedup();
        let by_kind = kinds
            .into_iter()
            .map(|kind| {
                let mine: Vec<f64> = links
                    .iter()
                    .filter(|l| l.kind == Some(kind))
                    .map(|l| l.utilization)
                    .collect();
                crate::stats::observe::KindTotals {
                    kind,
                    count: mine.len(),
                    utilization_mean: mine.iter().sum::<f64>() / mine.len() as f64,
                    utilization_max: mine.iter().copied().fold(0.0, f64::max),
                    busy: 0,
                    flits: 0,
                }
            })
            .collect();
        LinkTotals {
            by_kind,
            ..LinkTotals::default()
        }
    }

    #[test]
    fn dragonfly_and_flatfly_draw_their_routers_and_router_links_not_terminals() {
        for (cfg, kinds) in [
            (
                TopologyConfig::Dragonfly { p: 2, a: 4, h: 2 },
                &["local links", "global links", "terminal links: not drawn"][..],
            ),
            (
                TopologyConfig::Dragonfly { p: 1, a: 3, h: 1 },
                &["local links", "global links"][..],
            ),
            (
                TopologyConfig::FlattenedButterfly { k: 4, n: 2, c: 4 },
                &["dim0 links", "dim1 links", "terminal links"][..],
            ),
            (
                TopologyConfig::FlattenedButterfly { k: 3, n: 3, c: 1 },
                &["dim0 links", "dim1 links", "dim2 links: diagonal stubs"][..],
            ),
        ] {
            let topo = Topology::from_config(&cfg).unwrap();
            let mut links = rows(&topo);
            for l in &mut links {
                l.kind = topo.link_kind(
                    crate::foundation::types::NodeId(l.from),
                    crate::foundation::types::PortId(l.port),
                );
            }
            let router_links = links
                .iter()
                .filter(|l| l.kind != Some(LinkKind::Terminal))
                .count();
            let text = svg(
                &topo,
                &links,
                &by_kind(&links),
                Quantity::Utilization,
                "t",
                1,
            )
            .unwrap();
            assert_eq!(text.matches("<path ").count(), router_links, "{cfg:?}");
            assert_eq!(text.matches("<circle ").count(), topo.routers(), "{cfg:?}");
            assert!(!text.contains("NaN"), "{cfg:?}");
            assert!(text.contains("link kinds (utilisation)"), "{cfg:?}");
            for k in kinds {
                assert!(text.contains(k), "{cfg:?}: legend entry {k}");
            }
        }
    }

    #[test]
    fn a_dragonflys_routers_sit_with_their_group_and_global_links_are_chords() {
        let topo = Topology::from_config(&TopologyConfig::Dragonfly { p: 1, a: 4, h: 2 }).unwrap();
        let df = topo.dragonfly().unwrap().clone();
        let d = layout(&topo);
        let dist =
            |a: (f64, f64), b: (f64, f64)| ((a.0 - b.0).powi(2) + (a.1 - b.1).powi(2)).sqrt();
        // Every router is nearer to each router of its group than to any of another.
        for u in 0..df.routers() as u32 {
            let (mut same, mut other) = (0.0f64, f64::MAX);
            for v in (0..df.routers() as u32).filter(|&v| v != u) {
                let x = dist(d.pos[u as usize], d.pos[v as usize]);
                if df.group_of(u) == df.group_of(v) {
                    same = same.max(x);
                } else {
                    other = other.min(x);
                }
            }
            assert!(same < other, "router {u}: {same} ≥ {other}");
        }
        assert_eq!(d.labels.len(), df.groups() as usize);
        let to = topo
            .neighbor(
                crate::foundation::types::NodeId(0),
                crate::foundation::types::PortId(3),
            )
            .unwrap()
            .0;
        assert!(matches!(shape(&topo, &d, 0, 3, to), Some(Shape::Curve(..))));
        assert!(matches!(shape(&topo, &d, 0, 0, 1), Some(Shape::Line(..))));
    }

    #[test]
    fn the_canvas_is_as_wide_as_its_title_and_notes() {
        let topo = Topology::from_config(&TopologyConfig::Mesh { k: 2, n: 2, c: 1 }).unwrap();
        let links = rows(&topo);
        let title = "a long title ".repeat(12);
        let text = svg(
            &topo,
            &links,
            &LinkTotals::default(),
            Quantity::Utilization,
            &title,
            1,
        )
        .unwrap();
        let width: f64 = text
            .split("width=\"")
            .nth(1)
            .and_then(|w| w.split('"').next())
            .and_then(|w| w.parse().ok())
            .unwrap();
        // The title is centred: half its width either side of the middle, at 15 px and
        // at least half an em a character.
        let half = title.trim().chars().count() as f64 * 0.5 * 15.0 / 2.0;
        assert!(
            width / 2.0 >= half,
            "{width} px for {} characters",
            title.len()
        );
        assert!(width >= NOTE.chars().count() as f64 * 0.5 * 11.0 + 10.0);
    }

    #[test]
    fn wrap_links_are_stubs_and_neighbours_are_lines() {
        let topo = Topology::from_config(&TopologyConfig::Torus {
            k: 4,
            n: 2,
            bidirectional: true,
            c: 1,
        })
        .unwrap();
        let d = layout(&topo);
        // Node 0 going −x wraps to node 3; going +x reaches node 1.
        assert!(matches!(shape(&topo, &d, 0, 1, 3), Some(Shape::Stub(_, (x, _))) if x < 0.0));
        assert!(matches!(shape(&topo, &d, 0, 0, 1), Some(Shape::Line(..))));
    }

    #[test]
    fn fixed_decimals_round_to_the_nearest() {
        for v in [0.0, 1.25, -3.25159, 12.04, 0.05, -0.04, 1234.5678] {
            for d in [0, 1, 4] {
                let text = Fixed(v, d).to_string();
                let back: f64 = text.parse().unwrap();
                assert!(
                    (back - v).abs() <= 0.5 / 10f64.powi(d as i32) + 1e-12,
                    "{v}: {text}"
                );
                let decimals = text.split('.').nth(1).map_or(0, str::len);
                assert_eq!(decimals, d as usize, "{text}");
            }
        }
        assert_eq!(Fixed(-0.01, 1).to_string(), "0.0");
    }

    #[test]
    fn an_unknown_quantity_is_refused() {
        assert!("colour".parse::<Quantity>().is_err());
        assert_eq!("flits".parse::<Quantity>().unwrap(), Quantity::Flits);
    }
}
