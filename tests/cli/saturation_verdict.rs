//! Issue 31 as a user meets it: `check` says how many sources a pattern silences and the
//! load actually offered, with the pattern's own bound; `experiment.latency_threshold` is
//! refused unless a positive, finite number of cycles, and works as a sweep axis whose
//! saturated points say why. Small networks, short windows.

use crate::common::{refused, routemu_json, routemu_ok, temp_file};

/// A 4×4 torus of paper 004's routers under transpose at 0.1 flits per sending node.
const TRANSPOSE: [&str; 7] = [
    "hw/wormhole-torus-dor.ron",
    "--set",
    "topology.k=4",
    "--set",
    "workload.pattern=Transpose",
    "--set",
    "workload.rate=0.00833333",
];

#[test]
fn check_counts_silent_sources_and_prints_the_load_they_leave() {
    let mut args = vec!["check"];
    args.extend(TRANSPOSE);
    let out = String::from_utf8(routemu_ok(&args).stdout).unwrap();
    assert!(out.contains("= 0.0750 flits/node/cycle"), "{out}");
    assert!(out.contains("4 of 16 sources are silent"), "{out}");
    assert!(out.contains("send 0.1000 flits/node/cycle each"), "{out}");
    assert!(out.contains("this pattern's bound: "), "{out}");
    // Uniform traffic silences nobody.
    let out =
        String::from_utf8(routemu_ok(&["check", "hw/wormhole-torus-dor.ron"]).stdout).unwrap();
    assert!(!out.contains("silent"), "{out}");
    assert!(out.contains("this pattern's bound: 0.9844"), "{out}");
}

#[test]
fn the_run_offers_what_check_says() {
    let mut args = vec!["run"];
    args.extend(TRANSPOSE);
    args.extend([
        "--warmup",
        "500",
        "--cycles",
        "20000",
        "--replications",
        "1",
    ]);
    args.extend(["--json", "-"]);
    let r = routemu_json(&args);
    let offered = r["throughput"]["offered"].as_f64().unwrap();
    assert!((offered - 0.075).abs() < 0.005, "{offered}");
    assert_eq!(r["throughput"]["over"], "window");
    assert!(r["throughput"]["pattern_bound"].as_f64().unwrap() < 0.5);
    assert_eq!(r["saturated"], false);
    assert!(r["saturation_reason"].is_null());
    assert_eq!(r["verdicts"][0]["sustained"], true);
}

#[test]
fn a_latency_threshold_must_be_a_positive_finite_number_of_cycles() {
    for bad in ["0", "-5", "1e400"] {
        refused(
            1,
            &[
                "check",
                "hw/wormhole-torus-dor.ron",
                "--set",
                &format!("experiment.latency_threshold={bad}"),
            ],
            "experiment.latency_threshold",
        );
    }
    let text = std::fs::read_to_string("hw/wormhole-torus-dor.ron").unwrap();
    let (_dir, f) = temp_file(
        "nan.ron",
        text.replace("seed: 1,", "seed: 1, latency_threshold: NaN,"),
    );
    refused(
        1,
        &["check", f.to_str().unwrap()],
        "experiment.latency_threshold = NaN",
    );
    routemu_ok(&[
        "check",
        "hw/wormhole-torus-dor.ron",
        "--set",
        "experiment.latency_threshold=500",
    ]);
}

#[test]
fn a_sweep_over_the_latency_threshold_says_why_its_saturated_points_are() {
    let out = routemu_ok(&[
        "sweep",
        "hw/wormhole-torus-dor.ron",
        "--set",
        "topology.k=4",
        "--rate",
        "0.01",
        "--warmup",
        "500",
        "--cycles",
        "4096",
        "--replications",
        "1",
        "--param",
        "experiment.latency_threshold=5,1000",
        "--y",
        "latency",
    ]);
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    assert!(
        text.contains("experiment.latency_threshold=5: saturated: mean latency"),
        "{text}"
    );
    assert!(
        !text.contains("experiment.latency_threshold=1000: saturated"),
        "{text}"
    );
}
