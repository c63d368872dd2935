//! `routemu sweep`: points side by side give the same CSV as one at a time; zipped axes
//! vary together (N points, not N²); any RON value, commas included, is one value and
//! is applied; every numeric report field is a quantity, several per run, with the
//! report's own half-widths; a sweep over traces replays each trace at each point; bad
//! input is refused before anything runs, with nothing written. Small networks, short
//! windows.

use crate::common::{routemu, succeeded};
use routemu::presentation::plot::csv::Table;
use std::path::Path;
use std::process::Output;

/// A 4×4 mesh, two replications of a short window.
const SMALL: [&str; 10] = [
    "hw/wormhole-mesh-dor.ron",
    "--set",
    "topology.k=4",
    "--replications",
    "2",
    "--warmup",
    "200",
    "--cycles",
    "1500",
    "--seed",
];

fn sweep(extra: &[&str]) -> Output {
    let mut a = vec!["sweep"];
    a.extend(SMALL);
    a.push("7");
    a.extend(extra);
    routemu(&a)
}

fn csv_of(out: &Output) -> Table {
    Table::parse(&String::from_utf8_lossy(&out.stdout), "stdout").unwrap()
}

fn col(t: &Table, name: &str) -> Vec<String> {
    let i = t
        .column(name)
        .unwrap_or_else(|| panic!("no column {name}: {:?}", t.head));
    t.rows.iter().map(|r| r[i].clone()).collect()
}

fn num(t: &Table, name: &str) -> Vec<f64> {
    col(t, name).iter().map(|c| c.parse().unwrap()).collect()
}

#[test]
fn points_side_by_side_give_the_same_csv_as_one_at_a_time() {
    let args = [
        "--param",
        "workload.rate=0.01,0.03",
        "--param",
        "router.vcs=1,2",
        "--y",
        "throughput.accepted",
        "--y",
        "latency.p99",
        "--csv",
        "-",
    ];
    let csv = |jobs: &str| {
        let mut a = args.to_vec();
        a.extend(["--jobs", jobs]);
        String::from_utf8(succeeded(sweep(&a)).stdout).unwrap()
    };
    let one = csv("1");
    assert_eq!(one.lines().count(), 1 + 4, "{one}");
    assert_eq!(one, csv("2"), "--jobs 2 (points side by side)");
    assert_eq!(one, csv("3"), "--jobs 3 (points, then replications)");
}

#[test]
fn zipped_axes_give_n_points_not_n_squared() {
    let out = succeeded(sweep(&[
        "--param",
        "workload.rate=0.01,0.02,0.03",
        "--param",
        "router.vcs=1,2,4",
        "--zip",
        "workload.rate,router.vcs",
        "--csv",
        "-",
    ]));
    let t = csv_of(&out);
    assert_eq!(t.rows.len(), 3);
    assert_eq!(col(&t, "workload.rate"), ["0.01", "0.02", "0.03"]);
    assert_eq!(col(&t, "router.vcs"), ["1", "2", "4"]);
    // Unequal lengths are refused.
    let out = sweep(&[
        "--param",
        "workload.rate=0.01,0.02",
        "--param",
        "router.vcs=1,2,4",
        "--zip",
        "workload.rate,router.vcs",
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("value by value"));
}

#[test]
fn a_ron_value_with_commas_is_one_value_and_is_applied() {
    let out = succeeded(sweep(&[
        "--param",
        "workload.length=Constant(flits: 4),Uniform(min: 8, max: 16)",
        "--y",
        "throughput.offered",
        "--y",
        "throughput.offered_messages",
        "--csv",
        "-",
    ]));
    let text = String::from_utf8_lossy(&out.stdout);
    // The cell holding commas is quoted, so the CSV reads back with one value per cell.
    assert!(text.contains("\"Uniform(min: 8, max: 16)\""), "{text}");
    let t = csv_of(&out);
    assert_eq!(
        col(&t, "workload.length"),
        ["Constant(flits: 4)", "Uniform(min: 8, max: 16)"]
    );
    let flits = num(&t, "throughput.offered_measured");
    let msgs = num(&t, "throughput.offered_messages_measured");
    let per_message: Vec<f64> = flits.iter().zip(&msgs).map(|(f, m)| f / m).collect();
    assert!((per_message[0] - 4.0).abs() < 1e-9, "{per_message:?}");
    assert!(
        (10.5..13.5).contains(&per_message[1]),
        "uniform 8..16 has mean 12: {per_message:?}"
    );
}

#[test]
fn report_fields_are_quantities_with_the_reports_own_half_widths() {
    let out = succeeded(sweep(&[
        "--param",
        "workload.rate=0.01,0.02",
        "--y",
        "latency.mean",
        "--y",
        "wormhole.hops_mean",
        "--y",
        "latency",
        "--csv",
        "-",
    ]));
    let t = csv_of(&out);
    // latency.mean's half-width is the report's latency.ci95: the compare row's.
    assert_eq!(
        col(&t, "latency.mean_measured"),
        col(&t, "latency_measured")
    );
    assert_eq!(col(&t, "latency.mean_ci95"), col(&t, "latency_ci95"));
    assert!(num(&t, "latency.mean_ci95").iter().all(|c| *c > 0.0));
    assert!(num(&t, "wormhole.hops_mean_measured")
        .iter()
        .all(|h| *h > 1.0));
    // The flags stay last, as scripts expect.
    assert_eq!(t.head.last().unwrap(), "model_saturated");
    // The table on stderr (CSV on stdout) shows every quantity.
    let table = String::from_utf8_lossy(&out.stderr);
    assert!(table.contains("wormhole.hops_mean") && table.contains("latency.mean"));
}

#[test]
fn a_sweep_over_traces_replays_each_trace_at_each_point() {
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, text: &str| {
        let p = dir.path().join(name);
        std::fs::write(&p, text).unwrap();
        p.to_str().unwrap().to_string()
    };
    let a = write("a.txt", "time src dst flits\n0 1 2 3\n5 3 0 4\n9 2 1 8\n");
    let b = write(
        "b.txt",
        "time src dst flits\n0 1 2 30\n1 3 0 40\n2 2 1 18\n3 0 3 20\n",
    );
    let csv = dir.path().join("t.csv");
    let svg = dir.path().join("t.svg");
    let out = succeeded(routemu(&[
        "sweep",
        "hw/wormhole-mesh-dor.ron",
        "--set",
        "topology.k=4",
        "--param",
        "router.vcs=1,2",
        "--trace",
        &a,
        "--trace",
        &b,
        "--y",
        "latency_mean",
        "--y",
        "messages",
        "--csv",
        csv.to_str().unwrap(),
        "--plot",
        svg.to_str().unwrap(),
    ]));
    let t = Table::parse(&std::fs::read_to_string(&csv).unwrap(), "t.csv").unwrap();
    assert_eq!(
        t.head,
        [
            "router.vcs",
            "trace",
            "latency_mean_measured",
            "messages_measured",
            "deadlock"
        ]
    );
    assert_eq!(col(&t, "deadlock"), ["false"; 4]);
    assert_eq!(
        col(&t, "trace"),
        [a.clone(), b.clone(), a.clone(), b.clone()]
    );
    assert_eq!(num(&t, "messages_measured"), [3.0, 4.0, 3.0, 4.0]);
    assert!(num(&t, "latency_mean_measured").iter().all(|l| *l > 3.0));
    // One figure per quantity; the traces are the series.
    let fig = std::fs::read_to_string(dir.path().join("t-latency_mean.svg")).unwrap();
    assert!(fig.contains("Mean latency (cycles)") && fig.contains("a.txt"));
    assert!(String::from_utf8_lossy(&out.stdout).contains("trace replay"));
    // Compare rows need the synthetic workload.
    let out = routemu(&[
        "sweep",
        "hw/wormhole-mesh-dor.ron",
        "--trace",
        &a,
        "--y",
        "aborts",
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("latency_mean"));
}

#[test]
fn bad_input_is_refused_before_anything_runs_and_nothing_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("x.csv");
    let csv = csv.to_str().unwrap();
    for (bad, why) in [
        (
            vec!["--param", "router.vcs=1,2", "--y", "wormhole.hop_mean"],
            "did you mean wormhole.hops_mean",
        ),
        (
            vec!["--param", "router.vcs=1,2", "--y", "throughput"],
            "throughput.accepted",
        ),
        (
            vec!["--param", "workload.length=Uniform(min: 8, max: 16"],
            "not closed",
        ),
        (
            vec![
                "--param",
                "router.vcs=1,2",
                "--zip",
                "router.vcs,links.latency",
            ],
            "unknown --zip axis",
        ),
        (
            vec!["--param", "router.vcs=1,2", "--x", "workload.rate"],
            "router.vcs",
        ),
        (
            vec![
                "--param",
                "router.vcs=1,2",
                "--y",
                "latency",
                "--y",
                "accepted",
                "--plot",
                "-",
            ],
            "standard output",
        ),
        (
            vec!["--param", "router.vcs=0,1", "--plot", "f.svg", "--log-x"],
            "not positive",
        ),
        (
            vec!["--param", "router.vcs=1,2", "--gap", "3"],
            "trace sweeps",
        ),
        (vec!["--trace", "no/such/trace.txt"], "no/such/trace.txt"),
        (vec![], "nothing to sweep"),
    ] {
        let mut a = bad.clone();
        a.extend(["--csv", csv]);
        let out = sweep(&a);
        assert_eq!(out.status.code(), Some(1), "{bad:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(why), "{bad:?}: {err}");
        assert!(!Path::new(csv).exists(), "{bad:?} wrote the CSV");
    }
}

#[test]
fn a_saturation_sweep_ranks_wider_links_higher() {
    // The search samples the backlog every 1024 cycles: a window of four samples.
    let out = succeeded(routemu(&[
        "sweep",
        "hw/wormhole-mesh-dor.ron",
        "--set",
        "topology.k=4",
        "--replications",
        "2",
        "--warmup",
        "500",
        "--cycles",
        "4096",
        "--param",
        "links.width=1,2",
        "--y",
        "saturation",
        "--csv",
        "-",
    ]));
    let t = csv_of(&out);
    let sat = num(&t, "saturation_measured");
    let ci = num(&t, "saturation_ci95");
    assert_eq!(sat.len(), 2);
    // Links twice as wide carry about twice as much; the intervals do not overlap.
    assert!(
        sat[1] - ci[1] > sat[0] + ci[0],
        "width 1: {} ± {}, width 2: {} ± {}",
        sat[0],
        ci[0],
        sat[1],
        ci[1]
    );
    assert!(sat[1] / sat[0] > 1.5, "{sat:?}");
}

#[test]
fn saturation_is_refused_for_a_trace_sweep() {
    let out = sweep(&[
        "--trace",
        "traces/netrace/shrtex.tra.bz2",
        "--y",
        "saturation",
    ]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("synthetic workload"));
}

#[test]
fn the_offered_load_in_flits_is_a_sweep_axis() {
    let out = sweep(&[
        "--param",
        "workload.load=0.05,0.15",
        "--param",
        "workload.length=Constant(flits: 4), Constant(flits: 16)",
        "--y",
        "throughput.offered",
        "--csv",
        "-",
    ]);
    let t = csv_of(&out);
    let loads = num(&t, "workload.load");
    let offered = num(&t, "throughput.offered_measured");
    assert_eq!(loads.len(), 4);
    for (l, o) in loads.iter().zip(&offered) {
        // Bernoulli sources over 16 nodes and 1,500 cycles: a few percent of noise.
        assert!((o - l).abs() < 0.15 * l, "load {l}: offered {o}");
    }
}

#[test]
fn replay_refuses_its_former_messages_flag_with_a_pointer_to_trace_log() {
    let e = crate::common::refused(
        1,
        &[
            "replay",
            "hw/wormhole-torus-dor.ron",
            "--trace",
            "traces/generated/halo2d-16.meta",
            "--messages",
            "1000",
        ],
        "--trace-log",
    );
    assert!(!Path::new("1000").exists(), "{e}");
}
