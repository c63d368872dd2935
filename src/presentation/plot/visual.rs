//! Visual tests: every kind of figure rendered to SVG and its content checked the way a
//! reader would — tick labels present and numeric on every axis, at least three on a
//! log axis, the title inside the canvas, one marker per data point, no axis below zero
//! for a quantity that cannot be negative, saturated throughputs at their value.
//!
//! Not here: the tick rule itself (`ticks`), the tables' defaults (`redraw`'s tests).

use crate::presentation::plot::*;

/// One `<text>` element of an SVG: position, anchor, font size and content.
#[derive(Debug)]
struct SvgText {
    x: f64,
    y: f64,
    anchor: String,
    size: f64,
    text: String,
}

fn attr(tag: &str, name: &str) -> Option<String> {
    let key = format!(" {name}=\"");
    let i = tag.find(&key)? + key.len();
    Some(tag[i..].split('"').next()?.to_string())
}

fn texts(svg: &str) -> Vec<SvgText> {
    svg.split("<text")
        .skip(1)
        .map(|part| {
            let (tag, rest) = part.split_once('>').expect("a closed tag");
            let num = |n: &str| {
                attr(tag, n)
                    .and_then(|v| v.parse().ok())
                    .unwrap_or(f64::NAN)
            };
            SvgText {
                x: num("x"),
                y: num("y"),
                anchor: attr(tag, "text-anchor").unwrap_or_default(),
                size: num("font-size"),
                text: rest
                    .split("</text>")
                    .next()
                    .unwrap_or("")
                    .trim()
                    .to_string(),
            }
        })
        .collect()
}

/// The SVG font size of tick labels (plotters' 15).
const TICK: f64 = 15.0 / 1.24;

/// Tick labels: (x axis, y axis). The y axis' are right-aligned left of the plot, the x
/// axis' centred below it; both in the tick font, left of the legend's column.
fn tick_labels(svg: &str) -> (Vec<String>, Vec<String>) {
    let t = texts(svg);
    let ticks = t
        .iter()
        .filter(|t| (t.size - TICK).abs() < 1e-6 && t.x < f64::from(WIDTH - LEGEND));
    let (mut xs, mut ys) = (Vec::new(), Vec::new());
    for l in ticks {
        if l.anchor == "end" {
            ys.push(l.text.clone());
        } else {
            xs.push(l.text.clone());
        }
    }
    (xs, ys)
}

fn numbers(labels: &[String]) -> Vec<f64> {
    labels
        .iter()
        .map(|l| {
            l.parse::<f64>()
                .unwrap_or_else(|_| panic!("tick label `{l}` is not a number"))
        })
        .collect()
}

/// Attribute `name` of every element `tag` in the plot area (left of the legend).
fn in_plot<'a>(svg: &'a str, tag: &str) -> Vec<&'a str> {
    svg.split(&format!("<{tag} "))
        .skip(1)
        .map(|p| p.split('>').next().unwrap_or(""))
        .filter(|p| {
            let x = attr(&format!(" {p}"), "cx")
                .or_else(|| attr(&format!(" {p}"), "x"))
                .and_then(|v| v.parse::<f64>().ok())
                .unwrap_or(0.0);
            x < f64::from(WIDTH - LEGEND)
        })
        .collect()
}

/// Filled marker circles (series 0 draws filled circles of radius 4) in the plot.
fn markers(svg: &str) -> Vec<(f64, f64)> {
    in_plot(svg, "circle")
        .into_iter()
        .filter(|c| c.contains("r=\"4\"") && !c.contains("fill=\"none\""))
        .map(|c| {
            let c = format!(" {c}");
            let v = |n| attr(&c, n).unwrap().parse::<f64>().unwrap();
            (v("cx"), v("cy"))
        })
        .collect()
}

/// Rings round saturated points drawn at their value, in the plot.
fn rings(svg: &str) -> Vec<(f64, f64)> {
    in_plot(svg, "circle")
        .into_iter()
        .filter(|c| c.contains(&format!("r=\"{RING}\"")))
        .map(|c| {
            let c = format!(" {c}");
            let v = |n| attr(&c, n).unwrap().parse::<f64>().unwrap();
            (v("cx"), v("cy"))
        })
        .collect()
}

/// Every text larger than the tick labels near the top: the title's lines.
fn title_inside_canvas(svg: &str) {
    let lines: Vec<SvgText> = texts(svg)
        .into_iter()
        .filter(|t| t.y < 80.0 && t.anchor == "middle" && t.size > TICK + 0.5)
        .collect();
    assert!(!lines.is_empty(), "no title");
    for l in lines {
        let w = text_width(&l.text, (l.size * 1.24).round() as u32);
        assert!(
            l.x - w / 2.0 >= 0.0 && l.x + w / 2.0 <= f64::from(WIDTH),
            "title line `{}` ({w:.0} px at {}) leaves the canvas",
            l.text,
            l.x
        );
    }
}

fn latency_vs_load() -> Figure {
    Figure {
        title: "Mean latency vs injection rate — wormhole-mesh-dor, 4-ary 2-dimensional mesh"
            .into(),
        x_label: "Injection rate (messages/node/cycle)".into(),
        y_label: "Mean latency (cycles)".into(),
        series: vec![Series {
            measured: vec![
                (0.01, 20.0, Some(1.0)),
                (0.02, 24.0, Some(2.0)),
                (0.03, 35.0, Some(40.0)),
            ],
            model: vec![(0.01, 19.0), (0.02, 23.0), (0.03, 33.0)],
            saturated: vec![0.04, 0.05],
            model_saturates_at: Some(0.035),
            ..Series::default()
        }],
        y_nonnegative: true,
        ..Figure::default()
    }
}

fn accepted_vs_offered() -> Figure {
    Figure {
        title: "Accepted throughput vs offered load".into(),
        x_label: "Offered load (flits/node/cycle)".into(),
        y_label: "Accepted throughput (flits/node/cycle)".into(),
        series: vec![Series {
            measured: vec![(0.1, 0.1, Some(0.01)), (0.2, 0.2, Some(0.01))],
            saturated_values: vec![
                (0.3, 0.276, Some(0.02)),
                (0.4, 0.31, Some(0.02)),
                (0.5, 0.372, None),
            ],
            ..Series::default()
        }],
        join: true,
        diagonal: true,
        y_nonnegative: true,
        ..Figure::default()
    }
}

#[test]
fn every_axis_has_numeric_tick_labels_and_the_title_fits() {
    for fig in [latency_vs_load(), accepted_vs_offered()] {
        let s = svg(&fig).unwrap();
        let (xs, ys) = tick_labels(&s);
        assert!(xs.len() >= 3 && ys.len() >= 3, "{xs:?} {ys:?}");
        numbers(&xs);
        numbers(&ys);
        title_inside_canvas(&s);
    }
}

#[test]
fn a_legend_line_fits_its_column() {
    // The longest line a legend holds, drawn from the column's text start (32 px in).
    let room = f64::from(LEGEND) - 32.0;
    assert!(text_width(&"x".repeat(LEGEND_CHARS), LEGEND_SIZE) <= room);
}

#[test]
fn a_long_title_is_wrapped_or_shrunk_never_clipped() {
    let mut fig = latency_vs_load();
    fig.title = "Mean latency vs offered load — a machine with a very long name indeed, \
                 8-ary 2-cube torus, bidirectional links; model: dimension-order wormhole on \
                 the 8×8 torus (M/G/1 channels, distance-weighted), and more words still"
        .into();
    let s = svg(&fig).unwrap();
    title_inside_canvas(&s);
    // Every word is drawn.
    let drawn: String = texts(&s)
        .iter()
        .filter(|t| t.y < 100.0 && t.anchor == "middle")
        .map(|t| t.text.clone())
        .collect::<Vec<_>>()
        .join(" ");
    assert!(
        drawn.contains("distance-weighted") && drawn.contains("still"),
        "{drawn}"
    );
}

#[test]
fn a_log_axis_labels_at_least_three_ticks_over_a_third_of_a_decade_to_six_decades() {
    for decades in [0.3, 1.5, 6.0] {
        let lo = 40.0;
        let hi = lo * 10f64.powf(decades);
        let points: Vec<(f64, f64, Option<f64>)> = (0..5)
            .map(|i| {
                let f = f64::from(i) / 4.0;
                (lo * (hi / lo).powf(f), lo * (hi / lo).powf(f), None)
            })
            .collect();
        let fig = Figure {
            title: format!("{decades} decades"),
            series: vec![Series {
                measured: points,
                ..Series::default()
            }],
            log_x: true,
            log_y: true,
            ..Figure::default()
        };
        let s = svg(&fig).unwrap();
        let (xs, ys) = tick_labels(&s);
        for (axis, labels) in [("x", &xs), ("y", &ys)] {
            let v = numbers(labels);
            assert!(v.len() >= 3, "{decades} decades, {axis}: {labels:?}");
            assert!(v.iter().all(|t| *t > 0.0), "{labels:?}");
        }
    }
}

#[test]
fn one_marker_per_data_point() {
    let fig = latency_vs_load();
    let s = svg(&fig).unwrap();
    assert_eq!(markers(&s).len(), fig.series[0].measured.len());
    let fig = accepted_vs_offered();
    let s = svg(&fig).unwrap();
    let n = fig.series[0].measured.len() + fig.series[0].saturated_values.len();
    assert_eq!(markers(&s).len(), n);
}

#[test]
fn saturated_throughput_is_drawn_at_its_value_with_the_saturated_marker() {
    let fig = accepted_vs_offered();
    let s = svg(&fig).unwrap();
    let (marks, rings) = (markers(&s), rings(&s));
    assert_eq!(rings.len(), fig.series[0].saturated_values.len());
    // Each ring is round a marker (at the point's value), not on the top edge.
    for r in &rings {
        assert!(marks.contains(r), "ring at {r:?} has no marker: {marks:?}");
    }
    let ys: Vec<f64> = rings.iter().map(|r| r.1).collect();
    assert!(
        ys.windows(2).all(|w| w[0] > w[1]),
        "a rising plateau, drawn where it is: {ys:?}"
    );
    assert!(s.contains("saturated") && s.contains("y = x"), "legend");
    // Latency's saturated points are cut: arrows, no ring.
    let s = svg(&latency_vs_load()).unwrap();
    assert!(self::rings(&s).is_empty());
    assert!(s.contains("emulated: saturated") && s.contains("model saturates"));
}

#[test]
fn no_axis_below_zero_for_a_non_negative_quantity() {
    // A bar 35 ± 40 would reach −5: clipped, and the axis starts at zero.
    let s = svg(&latency_vs_load()).unwrap();
    let (xs, ys) = tick_labels(&s);
    assert!(numbers(&ys).iter().all(|v| *v >= 0.0), "{ys:?}");
    assert!(numbers(&xs).iter().all(|v| *v >= 0.0), "{xs:?}");
    // A quantity that may be negative keeps its bar.
    let mut fig = latency_vs_load();
    fig.series[0].measured[2].2 = Some(80.0);
    fig.y_nonnegative = false;
    let (_, ys) = tick_labels(&svg(&fig).unwrap());
    assert!(numbers(&ys).iter().any(|v| *v < 0.0), "{ys:?}");
}

#[test]
fn a_categorical_axis_draws_one_bar_per_point_with_its_names() {
    let fig = Figure {
        title: "Mean latency vs routing".into(),
        y_label: "Mean latency (cycles)".into(),
        categories: vec!["DimensionOrder".into(), "Adaptive".into()],
        series: vec![
            Series {
                label: "rate 0.01".into(),
                measured: vec![(0.0, 20.0, Some(1.0)), (1.0, 18.0, Some(1.0))],
                ..Series::default()
            },
            Series {
                label: "rate 0.03".into(),
                measured: vec![(0.0, 30.0, Some(2.0)), (1.0, 25.0, Some(2.0))],
                ..Series::default()
            },
        ],
        y_nonnegative: true,
        ..Figure::default()
    };
    let s = svg(&fig).unwrap();
    let (xs, ys) = tick_labels(&s);
    assert_eq!(xs, ["DimensionOrder", "Adaptive"]);
    numbers(&ys);
    // Four bars (filled rectangles in the plot, the background and legend aside).
    let bars = in_plot(&s, "rect")
        .into_iter()
        .filter(|r| r.contains("fill-opacity=\"0.6\"") || r.contains("opacity=\"0.6\""))
        .count();
    assert_eq!(bars, 4, "{s}");
}

#[test]
fn a_time_series_marks_the_end_of_the_warm_up() {
    let fig = Figure {
        title: "Accepted throughput vs time".into(),
        x_label: "Time (cycles)".into(),
        y_label: "Accepted throughput (flits/node/cycle)".into(),
        series: vec![Series {
            measured: (0..10)
                .map(|i| (f64::from(i) * 100.0, 0.05, None))
                .collect(),
            ..Series::default()
        }],
        join: true,
        marks: vec![(200.0, "end of warm-up".into())],
        y_nonnegative: true,
        ..Figure::default()
    };
    let s = svg(&fig).unwrap();
    assert!(s.contains("end of warm-up"));
    // The mark is a grey dashed vertical line: segments whose points share their x.
    let grey = format!("stroke=\"#{:02X}{:02X}{:02X}\"", GREY.0, GREY.1, GREY.2);
    let vertical = in_plot(&s, "polyline")
        .into_iter()
        .filter(|p| p.contains(&grey))
        .filter(|p| {
            let pts = attr(&format!(" {p}"), "points").unwrap_or_default();
            let xs: Vec<&str> = pts
                .split_whitespace()
                .map(|w| w.split(',').next().unwrap())
                .collect();
            xs.len() == 2 && xs[0] == xs[1]
        })
        .count();
    assert!(vertical >= 5, "no dashed vertical mark");
    let (xs, _) = tick_labels(&s);
    assert!(numbers(&xs).len() >= 3);
}

#[test]
fn the_model_validity_range_is_shaded_and_labelled() {
    let mut fig = latency_vs_load();
    fig.model_valid = Some((0.0, 0.025));
    let s = svg(&fig).unwrap();
    assert!(s.contains("model validated here"));
    assert!(s.contains(&format!(
        "fill=\"#{:02X}{:02X}{:02X}\"",
        SHADE.0, SHADE.1, SHADE.2
    )));
}

#[test]
fn neighbouring_tick_labels_never_read_the_same() {
    for (lo, hi) in [(100_000.1, 100_000.3), (1.21e-4, 1.25e-4), (0.5, 0.52)] {
        let fig = Figure {
            series: vec![Series {
                measured: vec![(lo, lo, None), (hi, hi, None)],
                ..Series::default()
            }],
            ..Figure::default()
        };
        let (xs, ys) = tick_labels(&svg(&fig).unwrap());
        for labels in [xs, ys] {
            assert!(labels.len() >= 3, "{labels:?}");
            numbers(&labels);
            assert!(labels.windows(2).all(|w| w[0] != w[1]), "{labels:?}");
        }
    }
}
