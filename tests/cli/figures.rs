//! Figures as a user draws them (docs/figures.md): accepted against offered load with
//! its diagonal, grouped bars for a sweep over names, a time series as one figure per
//! quantity; and the README tour's figures — `docs/tour/render.sh` renders one of each
//! kind as PNG, here with small settings into a temporary directory.

use std::process::Command;

/// The (width, height) of a PNG, or why it is not one.
fn png_size(bytes: &[u8]) -> Result<(u32, u32), String> {
    if bytes.len() < 24 || &bytes[..8] != b"\x89PNG\r\n\x1a\n" || &bytes[12..16] != b"IHDR" {
        return Err("not a PNG".into());
    }
    let be = |i: usize| u32::from_be_bytes([bytes[i], bytes[i + 1], bytes[i + 2], bytes[i + 3]]);
    Ok((be(16), be(20)))
}

#[test]
fn the_tour_script_renders_every_figure_as_a_png_of_the_committed_size() {
    let root = env!("CARGO_MANIFEST_DIR");
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new("sh")
        .arg("docs/tour/render.sh")
        .arg(dir.path())
        .env("ROUTEMU", env!("CARGO_BIN_EXE_routemu"))
        .env("TOUR_QUICK", "1")
        .current_dir(root)
        .output()
        .expect("sh runs");
    assert!(
        out.status.success(),
        "render.sh: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let figure = routemu::presentation::plot::png::png_size();
    for name in [
        "latency-vs-load.png",
        "accepted-vs-offered.png",
        "time-series.png",
        "heatmap.png",
    ] {
        let drawn = std::fs::read(dir.path().join(name)).unwrap_or_else(|e| panic!("{name}: {e}"));
        let size = png_size(&drawn).unwrap_or_else(|e| panic!("{name}: {e}"));
        // The README shows the committed figure: the same kind, the same size.
        let committed = std::fs::read(format!("{root}/docs/figures/{name}")).unwrap();
        assert_eq!(Ok(size), png_size(&committed), "{name}");
        if name != "heatmap.png" {
            assert_eq!(size, figure, "{name}");
        }
    }
}

/// A sweep and its figures, from the repository root, with small settings.
fn sweep(extra: &[&str]) -> std::process::Output {
    let mut a = vec![
        "sweep",
        "hw/wormhole-mesh-dor.ron",
        "--set",
        "topology.k=4",
        "--replications",
        "2",
        "--warmup",
        "100",
        "--cycles",
        "600",
    ];
    a.extend(extra);
    crate::common::routemu_ok(&a)
}

#[test]
fn accepted_against_offered_load_draws_the_diagonal_and_measures_the_offered_load() {
    let dir = tempfile::tempdir().unwrap();
    let (csv, fig) = (dir.path().join("o.csv"), dir.path().join("o.svg"));
    sweep(&[
        "--param",
        "workload.rate=0.02,0.2",
        "--y",
        "throughput.accepted",
        "--x",
        "offered",
        "--csv",
        csv.to_str().unwrap(),
        "--plot",
        fig.to_str().unwrap(),
    ]);
    let head = std::fs::read_to_string(&csv).unwrap();
    assert!(head.contains("throughput.offered_measured"), "{head}");
    let svg = std::fs::read_to_string(&fig).unwrap();
    for want in [
        "Offered load (flits/node/cycle)",
        "Accepted throughput (flits/node/cycle)",
        "y = x (accepted = offered)",
        "Accepted throughput vs offered load",
    ] {
        assert!(svg.contains(want), "{want}");
    }
}

#[test]
fn a_sweep_over_names_draws_grouped_bars() {
    let dir = tempfile::tempdir().unwrap();
    let fig = dir.path().join("p.svg");
    sweep(&[
        "--param",
        "workload.pattern=Uniform,Transpose",
        "--param",
        "workload.rate=0.01,0.02",
        "--plot",
        fig.to_str().unwrap(),
    ]);
    let svg = std::fs::read_to_string(&fig).unwrap();
    // The patterns are the x axis' tick labels.
    for label in ["Uniform", "Transpose", "Destination pattern"] {
        assert!(svg.contains(&format!(">\n{label}\n</text>")), "{label}");
    }
    // Two rates × two patterns: four bars.
    assert_eq!(
        svg.matches("opacity=\"0.6\"").count(),
        4 + 2,
        "bars and their legend"
    );
}

#[test]
fn a_time_series_is_one_figure_per_quantity_never_the_replications() {
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("series.csv");
    crate::common::routemu_ok(&[
        "run",
        "hw/wormhole-mesh-dor.ron",
        "--set",
        "topology.k=4",
        "--replications",
        "2",
        "--warmup",
        "200",
        "--cycles",
        "600",
        "--interval",
        "100",
        "--series",
        csv.to_str().unwrap(),
    ]);
    crate::common::routemu_ok(&["plot", csv.to_str().unwrap()]);
    let mut drawn: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().to_string())
        .filter(|n| n.ends_with(".svg"))
        .collect();
    drawn.sort();
    assert_eq!(
        drawn,
        [
            "series-accepted.svg",
            "series-backlog.svg",
            "series-latency_mean.svg",
            "series-offered.svg"
        ]
    );
    let svg = std::fs::read_to_string(dir.path().join("series-accepted.svg")).unwrap();
    assert!(svg.contains("end of warm-up") && svg.contains("Time (cycles)"));
}
