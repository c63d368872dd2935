//! `routemu plot`: redraws a sweep's CSV — the same figure `sweep --plot` drew — or any
//! numeric CSV without emulating; axes carry the quantity and its unit, whole-number
//! axes have whole-number ticks, log axes on demand, a saturated point is marked and
//! left off the curve, values with commas are read quote-aware, PNG output is a PNG of
//! the documented size, and bad input writes nothing.

use crate::common::{self, routemu, succeeded};
use std::path::Path;

/// Draws `csv` with `extra` flags to standard output and returns the SVG.
fn svg_of(csv: &Path, extra: &[&str]) -> String {
    let mut a = vec!["plot", csv.to_str().unwrap(), "--out", "-"];
    a.extend(extra);
    String::from_utf8(succeeded(routemu(&a)).stdout).unwrap()
}

/// The text of every `<text>` element.
fn texts(svg: &str) -> Vec<String> {
    svg.split("<text")
        .skip(1)
        .filter_map(|t| {
            let body = &t[t.find('>')? + 1..];
            Some(body[..body.find("</text>")?].trim().to_string())
        })
        .collect()
}

/// The tick labels: texts that are numbers.
fn ticks(svg: &str) -> Vec<f64> {
    texts(svg).iter().filter_map(|t| t.parse().ok()).collect()
}

/// The vertex lists of every polyline.
fn polylines(svg: &str) -> Vec<Vec<(f64, f64)>> {
    svg.split("<polyline")
        .skip(1)
        .filter_map(|p| {
            let pts = &p[p.find("points=\"")? + 8..];
            let pts = &pts[..pts.find('"')?];
            Some(
                pts.split_whitespace()
                    .filter_map(|xy| {
                        let (x, y) = xy.split_once(',')?;
                        Some((x.parse().ok()?, y.parse().ok()?))
                    })
                    .collect(),
            )
        })
        .collect()
}

const SWEEP: &str = "\
workload.rate,router.vcs,latency_measured,latency_ci95,latency_model,latency_error,throughput.accepted_measured,throughput.accepted_ci95,saturated,deadlock,model_saturated
0.1,2,10,1,9,,0.1,0.01,false,false,false
0.2,2,12,1,11,,0.2,0.01,false,false,false
0.3,2,9999,,,,0.25,,true,false,true
0.1,4,9,1,9,,0.1,0.01,false,false,false
0.2,4,10,1,10,,0.2,0.01,false,false,false
0.3,4,14,1,13,,0.3,0.01,false,false,false
";

#[test]
fn a_sweep_csv_is_redrawn_with_the_quantity_and_its_unit_on_each_axis() {
    let dir = tempfile::tempdir().unwrap();
    let csv = common::write_file(dir.path(), "s.csv", SWEEP);
    let svg = svg_of(&csv, &[]);
    let t = texts(&svg);
    for want in [
        "Mean latency (cycles)",
        "Injection rate (messages/node/cycle)",
        "emulated (95% CI), router.vcs=2",
        "model, router.vcs=4",
        "emulated: saturated, router.vcs=2",
    ] {
        assert!(t.iter().any(|s| s == want), "{want}: {t:?}");
    }
    let svg = svg_of(&csv, &["--y", "throughput.accepted"]);
    assert!(texts(&svg)
        .iter()
        .any(|s| s == "Accepted throughput (flits/node/cycle)"));
    // The default output sits beside the CSV; several quantities give a file each.
    succeeded(routemu(&["plot", csv.to_str().unwrap()]));
    assert!(dir.path().join("s.svg").exists());
    let out = dir.path().join("f.svg");
    succeeded(routemu(&[
        "plot",
        csv.to_str().unwrap(),
        "--y",
        "latency",
        "--y",
        "throughput.accepted",
        "--out",
        out.to_str().unwrap(),
    ]));
    assert!(dir.path().join("f-latency.svg").exists());
    assert!(dir.path().join("f-throughput.accepted.svg").exists());
}

#[test]
fn a_saturated_point_is_marked_and_left_off_the_curve() {
    let (_dir, csv) = common::temp_file(
        "s.csv",
        "workload.rate,latency.mean_measured,latency.mean_ci95,saturated
         0.1,10,,false
0.2,20,,false
0.3,9999,,true
0.4,40,,false
",
    );
    let svg = svg_of(&csv, &[]);
    // The saturated mean (9999) stretches no axis: the top tick stays near the data.
    let top = ticks(&svg).into_iter().fold(0.0, f64::max);
    assert!(top < 100.0, "top tick {top}");
    // The curve through the means has three vertices, not four; the saturated point
    // is an arrow (five vertices) on the top edge.
    let lens: Vec<usize> = polylines(&svg).iter().map(Vec::len).collect();
    assert!(lens.contains(&3) && !lens.contains(&4), "{lens:?}");
    assert!(lens.contains(&5), "{lens:?}");
    assert!(texts(&svg).iter().any(|t| t == "emulated: saturated"));
}

#[test]
fn whole_number_axes_have_whole_number_ticks() {
    let (_dir, csv) = common::temp_file(
        "v.csv",
        "router.vcs,latency.p99_measured,latency.p99_ci95\n1,40,\n2,31,\n3,27,\n",
    );
    let svg = svg_of(&csv, &[]);
    let t = ticks(&svg);
    assert!(t.len() >= 4, "{t:?}");
    assert!(t.iter().all(|v| v.fract() == 0.0), "{t:?}");
    assert!([1.0, 2.0, 3.0].iter().all(|v| t.contains(v)), "{t:?}");
    assert!(texts(&svg)
        .iter()
        .any(|s| s == "Virtual channels (VCs/port)"));
}

#[test]
fn log_axes_span_decades_on_demand() {
    let dir = tempfile::tempdir().unwrap();
    let csv = common::write_file(dir.path(), "l.csv", "x,y\n1,2\n10,30\n100,400\n1000,5000\n");
    let lin = ticks(&svg_of(&csv, &[]));
    let log = ticks(&svg_of(&csv, &["--log-x", "--log-y"]));
    for decade in [10.0, 100.0, 1000.0] {
        assert!(log.contains(&decade), "{decade} in {log:?}");
    }
    assert_ne!(lin, log);
    // A log axis leaves out values that are not positive; none left is an error.
    let zero = common::write_file(dir.path(), "z.csv", "x,y\n1,0\n2,0\n");
    let out = routemu(&["plot", zero.to_str().unwrap(), "--log-y", "--out", "-"]);
    assert_eq!(out.status.code(), Some(1));
}

#[test]
fn values_with_commas_are_read_quote_aware_and_tell_series_apart() {
    let (_dir, csv) = common::temp_file(
        "c.csv",
        "workload.rate,workload.length,latency_measured,saturated\n\
         0.1,Constant(flits: 4),10,false\n\
         0.1,\"Uniform(min: 2, max: 6)\",11,false\n\
         0.2,Constant(flits: 4),12,false\n\
         0.2,\"Uniform(min: 2, max: 6)\",14,false\n",
    );
    let t = texts(&svg_of(&csv, &[]));
    assert!(
        t.iter()
            .any(|s| s.contains("workload.length=Uniform(min: 2,")),
        "{t:?}"
    );
    assert!(t
        .iter()
        .any(|s| s.contains("workload.length=Constant(flits: 4)")));
}

#[test]
fn a_time_series_csv_is_drawn_generically() {
    let (_dir, csv) = common::temp_file(
        "ts.csv",
        "start,end,accepted,latency_mean,backlog\n\
         0,1000,0.10,20.5,1\n1000,2000,0.12,22.0,3\n2000,3000,0.11,21.2,2\n",
    );
    let svg = svg_of(&csv, &["--y", "latency_mean"]);
    let t = texts(&svg);
    assert!(t.iter().any(|s| s == "Mean latency (cycles)"), "{t:?}");
    assert!(t.iter().any(|s| s == "Time (cycles)"), "{t:?}");
    // The means are joined by a line (no model here).
    assert!(polylines(&svg).iter().any(|l| l.len() == 3));
    let svg = svg_of(&csv, &["--x", "end", "--y", "backlog"]);
    assert!(texts(&svg).iter().any(|s| s == "Source backlog (messages)"));
}

#[test]
fn a_png_is_a_png_of_twice_the_svgs_size() {
    let dir = tempfile::tempdir().unwrap();
    let csv = common::write_file(dir.path(), "s.csv", SWEEP);
    let png = dir.path().join("s.png");
    succeeded(routemu(&[
        "plot",
        csv.to_str().unwrap(),
        "--out",
        png.to_str().unwrap(),
    ]));
    let b = std::fs::read(&png).unwrap();
    assert_eq!(&b[..8], b"\x89PNG\r\n\x1a\n");
    let be = |i: usize| u32::from_be_bytes([b[i], b[i + 1], b[i + 2], b[i + 3]]);
    assert_eq!(&b[12..16], b"IHDR");
    assert_eq!(
        (be(16), be(20)),
        routemu::presentation::plot::png::png_size(),
        "2200 × 1200"
    );
    assert_eq!(routemu::presentation::plot::png::png_size(), (2200, 1200));
}

#[test]
fn sweep_plot_and_plot_of_its_csv_draw_the_same_figure() {
    let dir = tempfile::tempdir().unwrap();
    let (csv, svg) = (dir.path().join("s.csv"), dir.path().join("s.svg"));
    succeeded(routemu(&[
        "sweep",
        "hw/wormhole-mesh-dor.ron",
        "--set",
        "topology.k=4",
        "--replications",
        "2",
        "--warmup",
        "200",
        "--cycles",
        "1000",
        "--param",
        "workload.rate=0.01,0.03",
        "--param",
        "router.vcs=1,2",
        "--y",
        "throughput.accepted",
        "--csv",
        csv.to_str().unwrap(),
        "--plot",
        svg.to_str().unwrap(),
    ]));
    let redrawn = svg_of(
        &csv,
        &[
            "--y",
            "throughput.accepted",
            "--title",
            "Accepted throughput vs injection rate — wormhole-mesh-dor, 4-ary 2-dimensional mesh",
        ],
    );
    assert_eq!(std::fs::read_to_string(&svg).unwrap(), redrawn);
}

#[test]
fn bad_input_is_refused_and_nothing_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("o.svg");
    let o = out.to_str().unwrap();
    let good = common::write_file(dir.path(), "s.csv", SWEEP);
    let unclosed = common::write_file(dir.path(), "u.csv", "a,b\n1,\"2\n");
    let ragged = common::write_file(dir.path(), "r.csv", "a,b\n1,2\n3\n");
    let text = common::write_file(dir.path(), "t.csv", "a,b\nx,y\n");
    let empty = common::write_file(dir.path(), "e.csv", "");
    let g = good.to_str().unwrap();
    for (args, why) in [
        (vec![unclosed.to_str().unwrap()], "not closed"),
        (vec![ragged.to_str().unwrap()], "r.csv:3"),
        (vec![text.to_str().unwrap()], "no numeric column"),
        (vec![empty.to_str().unwrap()], "no header"),
        (vec![g, "--y", "latncy"], "did you mean latency"),
        (vec![g, "--x", "rate"], "did you mean workload.rate"),
        (vec![g, "--series", "vcs"], "router.vcs"),
        (vec!["no/such.csv"], "no/such.csv"),
    ] {
        let mut a = vec!["plot"];
        a.extend(&args);
        a.extend(["--out", o]);
        let r = routemu(&a);
        assert_eq!(r.status.code(), Some(1), "{args:?}");
        let err = String::from_utf8_lossy(&r.stderr);
        assert!(err.contains(why), "{args:?}: {err}");
        assert!(!out.exists(), "{args:?} wrote a figure");
    }
}
