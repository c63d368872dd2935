//! `routemu compare` and `routemu sweep`: measured against predicted in one table and
//! JSON document, grids of parameter points as CSV and SVG, and clear refusals.

use crate::common;

use serde_json::Value;

const SHORT: [&str; 6] = [
    "--replications",
    "2",
    "--warmup",
    "20000",
    "--cycles",
    "200000",
];

#[test]
fn compare_puts_measured_and_predicted_side_by_side_with_the_relative_error() {
    let mut args = vec!["compare", "hw/circuit-adaptive.ron", "--json", "-"];
    args.extend(SHORT);
    let out = common::routemu_ok(&args);
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["schema"], "routemu.compare/1");
    assert_eq!(v["report"]["schema"], "routemu.run/1");
    let rows = v["rows"].as_array().unwrap();
    let get = |k: &str| rows.iter().find(|r| r["key"] == k).unwrap();
    for k in [
        "latency",
        "setup",
        "p_conflict",
        "aborts",
        "ctrl_wait_model",
    ] {
        let r = get(k);
        let (m, p) = (
            r["measured"].as_f64().unwrap(),
            r["predicted"].as_f64().unwrap(),
        );
        let e = r["error"].as_f64().unwrap();
        assert!((e - (p - m) / m).abs() < 1e-12, "{k}");
    }
    // The report's own numbers are the measured column.
    assert_eq!(get("latency")["measured"], v["report"]["latency"]["mean"]);
    assert!(get("latency")["error"].as_f64().unwrap().abs() < 0.1);
    let table = String::from_utf8_lossy(&out.stderr);
    assert!(
        table.contains("P_conflict") && table.contains('%'),
        "{table}"
    );
}

#[test]
fn compare_refuses_a_machine_without_a_model_before_emulating() {
    let out = common::routemu(&["compare", "hw/wormhole-mesh-dor.ron"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("torus"));
}

#[test]
fn compare_holds_adaptive_wormhole_against_paper_004() {
    let out = common::routemu_ok(&[
        "compare",
        "hw/wormhole-torus-adaptive.ron",
        "--rate",
        "0.002",
        "--json",
        "-",
    ]);
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(v["model"].as_str().unwrap().contains("paper 004"));
    let rows = v["rows"].as_array().unwrap();
    let get = |k: &str| rows.iter().find(|r| r["key"] == k).unwrap();
    // At low load both sit near the zero-load latency.
    assert!(get("latency")["error"].as_f64().unwrap().abs() < 0.05);
    assert!(get("delay_per_hop")["predicted"].as_f64().unwrap() > 0.0);
    assert!(v["prediction"]["p_x"].as_f64().unwrap() > 0.0);
}

#[test]
fn a_sweep_grid_gives_one_csv_line_per_point_and_a_figure() {
    let dir = tempfile::tempdir().unwrap();
    let (csv, svg) = (dir.path().join("s.csv"), dir.path().join("s.svg"));
    let mut args = vec![
        "sweep",
        "hw/circuit-drop.ron",
        "--param",
        "workload.rate=0.00002:0.00006:0.00002",
        "--param",
        "switching.backoff=500,1500",
        "--y",
        "aborts",
        "--csv",
        csv.to_str().unwrap(),
        "--plot",
        svg.to_str().unwrap(),
    ];
    args.extend(SHORT);
    let out = common::routemu_ok(&args);
    let text = std::fs::read_to_string(&csv).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 1 + 3 * 2);
    let head: Vec<&str> = lines[0].split(',').collect();
    assert_eq!(
        &head[..3],
        ["workload.rate", "switching.backoff", "latency_measured"]
    );
    assert!(lines[1].starts_with("0.00002,500,") && lines[6].starts_with("0.00006,1500,"));
    let col = |name: &str| head.iter().position(|h| *h == name).unwrap();
    // A longer back-off lets the blocker finish: fewer aborts, in both columns.
    for line in &lines[1..] {
        let f: Vec<&str> = line.split(',').collect();
        assert!(f[col("aborts_model")].parse::<f64>().unwrap() > 0.0);
        assert_eq!(f[col("saturated")], "false");
    }
    let fig = std::fs::read_to_string(&svg).unwrap();
    for s in [
        "Injection rate",
        "Aborts per message",
        "switching.backoff=500",
        "model",
    ] {
        assert!(fig.contains(s), "{s}");
    }
    assert!(String::from_utf8_lossy(&out.stdout).contains("0.00006 1500"));
}

#[test]
fn a_sweep_runs_without_a_model_and_refuses_bad_axes_up_front() {
    let mut args = vec![
        "sweep",
        "hw/wormhole-mesh-dor.ron",
        "--param",
        "workload.rate=0.002,0.004",
        "--csv",
        "-",
    ];
    args.extend(["--replications", "1", "--warmup", "500", "--cycles", "2000"]);
    let out = common::routemu_ok(&args);
    let csv = String::from_utf8_lossy(&out.stdout);
    assert_eq!(csv.lines().count(), 3, "{csv}");
    for (bad, why) in [
        (vec!["--param", "workload.rate=1:0:1"], "must not exceed"),
        (vec!["--param", "no.such.field=1,2"], "unknown field"),
        (
            vec![
                "--param",
                "switching.routing=Dor,Adaptive",
                "--plot",
                "x.svg",
                "--log-x",
            ],
            "not positive",
        ),
    ] {
        let mut a = vec!["sweep", "hw/wormhole-mesh-dor.ron"];
        a.extend(bad);
        let out = common::routemu(&a);
        assert_eq!(out.status.code(), Some(1), "{a:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(why), "{a:?}: {err}");
    }
}
