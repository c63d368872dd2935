//! Metrics that mean what docs/json.md says: a controller's utilisation is at most 1 per
//! server; `throughput.accepted_messages` counts the messages absorbed in the window;
//! an overload of long messages is flagged `saturated` although few messages wait; and
//! idle skipping changes nothing, also for runs stopped by a deadlock or by saturation.

use crate::common;

use crate::common::routemu;
use serde_json::Value;

/// Runs routemu with `--json -` and returns the exit status and the report.
fn json(args: &[&str]) -> (Option<i32>, Value) {
    let mut a = args.to_vec();
    a.extend(["--json", "-"]);
    let out = routemu(&a);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!err.contains("panicked"), "{args:?}: {err}");
    let v = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{args:?}: no JSON ({e}): {err}"));
    (out.status.code(), v)
}

fn num(v: &Value, path: &str) -> f64 {
    path.split('.')
        .fold(v, |v, k| &v[k])
        .as_f64()
        .unwrap_or_else(|| panic!("{path} is not a number in {v}"))
}

#[test]
fn a_service_longer_than_the_window_does_not_make_a_server_more_than_busy() {
    let (_, v) = json(&[
        "run",
        "hw/wormhole-torus-dor.ron",
        "--set",
        "router.controller.route=100000",
        "--set",
        "experiment.deadlock_cycles=10000000",
        "--rate",
        "0.001",
        "--warmup",
        "0",
        "--cycles",
        "50000",
        "--replications",
        "1",
    ]);
    let u = num(&v, "controller.utilization");
    assert!((0.0..=1.0).contains(&u), "utilization {u}");
    assert!(u > 0.5, "the one server is busy most of the window: {u}");
}

/// Circuit drop with 1000-flit messages at 25% past what it carries (hardening D28/D29).
const OVERLOAD: [&str; 10] = [
    "run",
    "hw/circuit-drop.ron",
    "--rate",
    "0.0004",
    "--warmup",
    "1000",
    "--cycles",
    "20000",
    "--replications",
    "1",
];

#[test]
fn an_overload_of_long_messages_is_flagged_saturated() {
    let (code, v) = json(&OVERLOAD);
    assert_eq!(code, Some(0), "saturation is a result: {v}");
    assert_eq!(v["saturated"], Value::Bool(true), "{}", v["throughput"]);
}

#[test]
fn accepted_messages_are_those_absorbed_in_the_window() {
    let (_, v) = json(&OVERLOAD);
    let (offered, accepted) = (
        num(&v, "throughput.offered_messages"),
        num(&v, "throughput.accepted_messages"),
    );
    let flits = num(&v, "throughput.accepted") / num(&v, "throughput.offered");
    assert!(flits < 0.9, "the overload accepts fewer flits: {flits}");
    assert!(
        accepted < 0.9 * offered,
        "messages absorbed in the window fall short with the flits: {accepted} vs {offered}"
    );
    // Below saturation the window absorbs what it offers, within the noise.
    let (_, v) = json(&[
        "run",
        "hw/circuit-drop.ron",
        "--rate",
        "0.0001",
        "--warmup",
        "1000",
        "--cycles",
        "40000",
        "--replications",
        "1",
    ]);
    assert_eq!(v["saturated"], Value::Bool(false));
    let (offered, accepted) = (
        num(&v, "throughput.offered_messages"),
        num(&v, "throughput.accepted_messages"),
    );
    assert!(
        (accepted / offered - 1.0).abs() < 0.15,
        "{accepted} vs {offered}"
    );
}

#[test]
fn presets_at_their_own_rate_are_not_flagged_saturated() {
    let presets = common::circuit_presets()
        .into_iter()
        .chain(common::wormhole_presets())
        .chain(common::deflection_presets())
        .chain(common::timeout_presets());
    for (name, mut cfg) in presets {
        cfg = common::windowed(cfg, 2_000, 20_000, 2);
        cfg.experiment.jobs = 2;
        let r = routemu::experiments::experiment::run_experiment(&cfg, &mut |_, _| {}).unwrap();
        assert!(!r.saturated, "{name}");
    }
}

/// The report without what may differ between equal runs (wall time) and the flag that
/// differs on purpose.
fn comparable(mut v: Value) -> Value {
    let o = v.as_object_mut().unwrap();
    o.remove("wall_seconds");
    o.remove("node_cycles_per_second");
    o.remove("command");
    o["config"]["experiment"]["idle_skip"] = Value::Bool(true);
    v
}

fn both_ways(args: &[&str]) -> (Option<i32>, Value) {
    let (code, skip) = json(args);
    let mut plain_args = args.to_vec();
    plain_args.push("--no-idle-skip");
    let (plain_code, plain) = json(&plain_args);
    assert_eq!(code, plain_code, "{args:?}");
    let (a, b) = (comparable(skip.clone()), comparable(plain));
    // Field by field, so a failure names what differs (the reports are long).
    for (k, v) in a.as_object().unwrap() {
        assert_eq!(Some(v), b.get(k), "{args:?}: `{k}` differs");
    }
    (code, skip)
}

#[test]
fn idle_skipping_changes_nothing_in_a_run_stopped_by_a_deadlock() {
    let (code, v) = both_ways(&[
        "run",
        "hw/circuit-torus-hold.ron",
        "--rate",
        "0.0003",
        "--set",
        "switching.hold_timeout=None",
        "--cycles",
        "300000",
        "--warmup",
        "1000",
        "--replications",
        "1",
    ]);
    assert_eq!(code, Some(3));
    assert!(v["deadlock"].is_object(), "{}", v["deadlock"]);
}

#[test]
fn idle_skipping_changes_nothing_in_a_run_stopped_as_saturated() {
    let (code, v) = both_ways(&[
        "run",
        "hw/wormhole-torus-dor.ron",
        "--load",
        "1.5",
        "--warmup",
        "1000",
        "--cycles",
        "5000",
        "--replications",
        "1",
    ]);
    assert_eq!(code, Some(0));
    assert_eq!(v["saturated"], Value::Bool(true));
}
