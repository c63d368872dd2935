//! A deadlock is reported as a deadlock, with exit status 3, by every command that
//! emulates: `sweep` and `saturation` still write their outputs (the deadlocked point or
//! probe flagged), then exit 3; a network where nothing moves is never "saturated".

use crate::common::{self, routemu, DEADLOCKING};
use serde_json::Value;

#[test]
fn a_sweep_whose_point_deadlocked_writes_its_outputs_then_exits_with_status_three() {
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("s.csv");
    let mut args = vec![
        "sweep",
        "hw/wormhole-torus-dor.ron",
        "--param",
        "workload.rate=0.001,0.05",
        "--warmup",
        "100",
        "--cycles",
        "100000",
        "--csv",
        csv.to_str().unwrap(),
    ];
    args.extend(DEADLOCKING);
    common::refused(3, &args, "1 point(s) deadlocked: 0.05");
    let text = std::fs::read_to_string(&csv).unwrap();
    let rows: Vec<&str> = text.lines().collect();
    assert_eq!(rows.len(), 3, "header and both points: {text}");
    let col = |name: &str| rows[0].split(',').position(|c| c == name).unwrap();
    let (saturated, deadlock) = (col("saturated"), col("deadlock"));
    let cell = |row: usize, c: usize| rows[row].split(',').nth(c).unwrap().to_string();
    assert_eq!(cell(1, deadlock), "false", "{text}");
    assert_eq!(cell(2, deadlock), "true", "{text}");
    assert_eq!(
        cell(2, saturated),
        "false",
        "a deadlock is not saturation: {text}"
    );
}

#[test]
fn a_saturation_search_that_met_a_deadlock_writes_its_result_then_exits_with_status_three() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("sat.json");
    let mut args = vec![
        "saturation",
        "hw/wormhole-torus-dor.ron",
        "--warmup",
        "1000",
        "--cycles",
        "4096",
        "--tolerance",
        "0.1",
        "--json",
        json.to_str().unwrap(),
    ];
    args.extend(DEADLOCKING);
    let out = routemu(&args);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{err}");
    let v: Value = common::read_json(&json);
    let probes = v["replications"][0]["probes"].as_array().unwrap();
    assert!(
        probes.iter().any(|p| p["stop"] == "deadlock"),
        "a probe deadlocked: {probes:?}"
    );
    // A probe where nothing moved is a deadlock, never stopped as saturated.
    for p in probes.iter().filter(|p| p["stop"] == "deadlock") {
        assert!(p["reason"].as_str().unwrap().contains("deadlock"), "{p}");
    }
    let warnings = v["warnings"].as_array().unwrap();
    assert!(
        warnings
            .iter()
            .any(|w| w.as_str().unwrap().contains("deadlock")),
        "{warnings:?}"
    );
}

#[test]
fn a_trace_sweep_whose_point_deadlocked_writes_every_point_then_exits_with_status_three() {
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, text: &str| {
        let p = dir.path().join(name);
        std::fs::write(&p, text).unwrap();
        p.to_str().unwrap().to_string()
    };
    // Eight long messages around a ring of the torus on one VC without dateline classes
    // wait for one another for ever; a few short ones between neighbours do not.
    let mut ring = String::from("time src dst flits\n");
    for i in 0..8 {
        ring.push_str(&format!("0 {i} {} 64\n", (i + 5) % 8));
    }
    let ring = write("ring.txt", &ring);
    let calm = write("calm.txt", "time src dst flits\n0 1 2 3\n5 3 4 4\n");
    let csv = dir.path().join("t.csv");
    let json = dir.path().join("t.json");
    let mut args = vec![
        "sweep",
        "hw/wormhole-torus-dor.ron",
        "--trace",
        &ring,
        "--trace",
        &calm,
        "--y",
        "messages",
        "--csv",
        csv.to_str().unwrap(),
        "--json",
        json.to_str().unwrap(),
    ];
    args.extend(&DEADLOCKING[..6]);
    let out = routemu(&args);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    assert!(
        err.contains(&format!("1 point(s) deadlocked: {ring}")),
        "{err}"
    );
    assert!(
        err.contains("deadlocked at cycle"),
        "the waits are described: {err}"
    );
    // The point after the deadlocked one ran, and both are in the CSV and the JSON.
    let text = std::fs::read_to_string(&csv).unwrap();
    let rows: Vec<&str> = text.lines().collect();
    assert_eq!(rows[0], "trace,messages_measured,deadlock", "{text}");
    assert_eq!(rows[1], format!("{ring},,true"), "{text}");
    assert_eq!(rows[2], format!("{calm},2,false"), "{text}");
    let v: Value = common::read_json(&json);
    let points = v["points"].as_array().unwrap();
    assert_eq!(points.len(), 2);
    assert_eq!(points[0]["deadlock"], true);
    assert_eq!(points[1]["deadlock"], false);
    assert_eq!(points[1]["quantities"]["messages"]["measured"], 2.0);
}

#[test]
fn a_deadlock_that_begins_just_before_the_backlog_guard_fires_is_a_deadlock() {
    // The second hostile test's N03: at this load the torus froze about 750 cycles before
    // the sources' backlog passed the guard (cycle 5120), and the run was called
    // saturated.
    let load = "0.25";
    {
        let mut args = vec![
            "run",
            "hw/wormhole-torus-dor.ron",
            "--warmup",
            "500",
            "--cycles",
            "4096",
            "--load",
            load,
            "--json",
            "-",
        ];
        args.extend(DEADLOCKING);
        let o = routemu(&args);
        assert_eq!(
            o.status.code(),
            Some(3),
            "load {load}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        let v: Value = serde_json::from_slice(&o.stdout).unwrap();
        assert_eq!(v["saturated"], false, "load {load}");
        assert!(
            v["deadlock"]["cycle"].is_u64(),
            "load {load}: {}",
            v["deadlock"]
        );
    }
}
