//! Experiment control and the report: measuring by messages, confidence intervals,
//! saturation, the controller's measured-vs-predicted fields, and the workload options
//! running end to end.

use crate::common;

use routemu::config::{LengthConfig, Measure, PatternConfig};
use routemu::experiments::experiment::run_experiment;

fn base() -> routemu::config::HwConfig {
    let mut c = common::preset("wormhole-torus-dor.ron");
    c = common::windowed(c, 1_000, 5_000, 1);
    c
}

#[test]
fn measuring_by_messages_measures_that_many_to_the_end_of_their_cycle_and_drains_them() {
    let mut c = base();
    c.experiment.measure = Measure::Messages(700);
    c.experiment.replications = 2;
    let r = run_experiment(&c, &mut |_, _| {}).unwrap();
    // 700 per replication, plus whatever else was created in the cycle of the 700th.
    assert!(
        (1_400..1_410).contains(&r.messages.measured),
        "{}",
        r.messages.measured
    );
    assert!(!r.saturated);
    // Every measured message was delivered: the latency histogram holds them all.
    assert!(r.latency.total.p99.is_some());
    assert!(r.window_cycles > 0.0);
}

#[test]
fn confidence_intervals_need_two_replications() {
    let mut c = base();
    let one = run_experiment(&c, &mut |_, _| {}).unwrap();
    assert!(one.latency.total.ci95.is_none());
    c.experiment.replications = 3;
    let three = run_experiment(&c, &mut |_, _| {}).unwrap();
    let h = three
        .latency
        .total
        .ci95
        .expect("interval with 3 replications");
    assert!(h > 0.0 && h < three.latency.total.mean.unwrap());
    // Replication 0 is the same run in both: adding replications never changes it.
    assert_eq!(one.cycles, {
        let mut c1 = c.clone();
        c1.experiment.replications = 1;
        run_experiment(&c1, &mut |_, _| {}).unwrap().cycles
    });
}

#[test]
fn an_overloaded_network_is_reported_saturated_and_stops_early() {
    let mut c = base();
    c.workload.rate = 0.2; // 2.4 flits/node/cycle: far past the 1.0 bound
    c.experiment.measure = Measure::Cycles(1_000_000);
    let r = run_experiment(&c, &mut |_, _| {}).unwrap();
    assert!(r.saturated);
    assert!(r.cycles < 200_000, "ran {} cycles", r.cycles);
    assert!(r.throughput.accepted < 0.8 * r.throughput.offered);
    assert!(
        r.throughput.accepted > 0.3,
        "accepted {}",
        r.throughput.accepted
    );
}

#[test]
fn controller_fields_are_consistent_and_near_pollaczek_khinchine() {
    let mut c = base();
    // A slow controller (4 cycles per header) so that queueing is visible.
    c.router.controller.route = 4;
    c.workload.rate = 0.02;
    c.experiment.measure = Measure::Cycles(40_000);
    let r = run_experiment(&c, &mut |_, _| {}).unwrap();
    let k = &r.controller;
    assert_eq!(k.service_mean, Some(4.0));
    assert_eq!(k.service_m2, Some(16.0));
    assert!((k.utilization - k.arrival_rate * 4.0).abs() < 1e-12);
    // Headers per node per cycle: one per router visited (hops + 1) per message.
    let expected =
        r.throughput.accepted_messages * (r.wormhole().unwrap().hops_mean.unwrap() + 1.0);
    assert!(
        (k.arrival_rate - expected).abs() / expected < 0.02,
        "{} vs {expected}",
        k.arrival_rate
    );
    let (w, pk) = (k.wait_mean.unwrap(), k.wait_mg1.unwrap());
    assert!(w > 0.05 && pk > 0.05);
    // Header arrivals are not Poisson (they come in bursts behind each other), so P-K is
    // a yardstick here, not an exact prediction.
    assert!((w - pk).abs() / pk < 0.5, "measured {w}, P-K {pk}");
}

#[test]
fn every_pattern_and_length_distribution_runs() {
    for pattern in [
        PatternConfig::Uniform,
        PatternConfig::BitComplement,
        PatternConfig::Transpose,
        PatternConfig::Hotspot {
            node: 9,
            fraction: 0.2,
        },
        PatternConfig::SphereOfLocality {
            radius: 2,
            probability: 0.7,
        },
        PatternConfig::DecreasingProbability { decay: 0.5 },
    ] {
        for length in [
            LengthConfig::Constant { flits: 4 },
            LengthConfig::Exponential { mean: 6.0 },
            LengthConfig::Uniform { min: 1, max: 9 },
        ] {
            let mut c = base();
            c.workload.pattern = pattern.clone();
            c.workload.length = length.clone();
            c.workload.rate = 0.01;
            let r = run_experiment(&c, &mut |_, _| {}).unwrap();
            assert!(!r.saturated, "{pattern:?} {length:?}");
            assert!(r.messages.delivered > 0);
            let ratio = r.throughput.accepted / r.throughput.offered;
            assert!(
                (ratio - 1.0).abs() < 0.05,
                "{pattern:?} {length:?}: {ratio}"
            );
        }
    }
}

#[test]
fn locality_shortens_paths() {
    let mut c = base();
    c.workload.rate = 0.01;
    let uniform = run_experiment(&c, &mut |_, _| {}).unwrap();
    c.workload.pattern = PatternConfig::SphereOfLocality {
        radius: 1,
        probability: 1.0,
    };
    let local = run_experiment(&c, &mut |_, _| {}).unwrap();
    assert!((uniform.wormhole().unwrap().hops_mean.unwrap() - 4.06).abs() < 0.1);
    assert_eq!(local.wormhole().unwrap().hops_mean.unwrap(), 1.0);
}

#[test]
fn json_to_stdout_moves_the_summary_to_stderr() {
    let out = common::routemu(&[
        "run",
        "hw/wormhole-mesh-dor.ron",
        "--cycles",
        "2000",
        "--warmup",
        "500",
        "--json",
        "-",
    ]);
    assert!(out.status.success());
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("stdout is pure JSON");
    assert_eq!(v["schema"], "routemu.run/1");
    assert!(String::from_utf8_lossy(&out.stderr).contains("latency (cycles)"));
}
