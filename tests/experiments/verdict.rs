//! One saturation verdict (issue 31): a load the saturation search puts past saturation
//! is `saturated` in a run with the same settings, and the report says why; a run
//! saturated in its warm-up reports what it offered and accepted over the cycles it ran;
//! `experiment.latency_threshold` bounds the mean latency; a pattern with silent
//! sources offers what `check` says, and the report carries the pattern's own bound.
//! Small networks, short windows.

use crate::common;
use routemu::config::HwConfig;
use routemu::experiments::experiment::run_experiment;
use routemu::experiments::saturation::{search, SaturationOptions};
use routemu::stats::report::{Report, Span};

/// A 4×4 dimension-order torus (paper 004's router) with `sets`, short windows, one
/// replication.
fn small_torus(sets: &[&str], warmup: u64, window: u64) -> HwConfig {
    let mut all = vec!["topology.k=4"];
    all.extend(sets);
    common::windowed(
        common::preset_with("wormhole-torus-dor.ron", &all),
        warmup,
        window,
        1,
    )
}

fn run(cfg: &HwConfig) -> Report {
    run_experiment(cfg, &mut |_, _| {}).unwrap()
}

#[test]
fn a_load_the_search_puts_past_saturation_is_saturated_in_a_run() {
    let cfg = small_torus(&[], 1000, 6144);
    let opts = SaturationOptions {
        replications: 1,
        tolerance: 0.05,
        ..SaturationOptions::default()
    };
    let found = search(&cfg, &opts, &mut |_| {}).unwrap();
    let probes = &found.replications[0].probes;
    assert!(probes.iter().any(|p| !p.sustained) && probes.iter().any(|p| p.sustained));
    for p in probes {
        // The probe's own message rate, replication 0's random streams: the same run.
        let mut c = cfg.clone();
        c.workload.rate = p.load.0 / found.mean_length;
        let r = run(&c);
        if p.sustained {
            // A run keeps the configured engine guard, lower than a probe's: it may stop
            // a sustained probe's load as saturated there, and only there.
            assert!(
                !r.saturated || r.verdicts[0].cause.as_deref() == Some("guard"),
                "load {}: the search sustained it ({}), the run says {:?}",
                p.load,
                p.reason,
                r.saturation_reason
            );
        } else {
            assert!(
                r.saturated,
                "load {}: the search did not sustain it ({}), the run did: {}",
                p.load, p.reason, r.verdicts[0].reason
            );
            let why = r.saturation_reason.as_deref().unwrap();
            assert_eq!(why, r.verdicts[0].reason);
            assert!(!r.verdicts[0].sustained);
        }
    }
}

#[test]
fn a_run_saturated_in_its_warm_up_reports_the_throughput_of_the_cycles_it_ran() {
    // Far past saturation (offered 6 flits/node/cycle), the guard fires long before the
    // window opens at cycle 40 000.
    let r = run(&small_torus(&["workload.rate=0.5"], 40_000, 5_000));
    assert!(r.saturated);
    assert_eq!(r.verdicts[0].cause.as_deref(), Some("guard"));
    assert_eq!(r.throughput.over, Span::Run);
    assert!(r.cycles < 40_000, "{}", r.cycles);
    let t = &r.throughput;
    // Offered: what the rate says (Poisson, 0.5 × 12 flits); accepted: below it, and
    // below the bound of the pattern.
    assert!((t.offered - 6.0).abs() < 0.3, "offered {}", t.offered);
    assert!(t.accepted > 0.1 && t.accepted < t.offered, "{t:?}");
    assert!(t.accepted <= t.pattern_bound.unwrap() * 1.05, "{t:?}");
    assert!(t.offered_messages > 0.0 && t.accepted_messages > 0.0);
    assert!(r.summary().contains("over the cycles run"));
    // A run that reaches its window measures over it.
    let light = run(&small_torus(&["workload.rate=0.005"], 1000, 4096));
    assert_eq!(light.throughput.over, Span::Window);
    assert!(!light.saturated && light.saturation_reason.is_none());
    assert!(light.verdicts[0].sustained && light.verdicts[0].cause.is_none());
}

#[test]
fn a_mean_latency_over_the_threshold_is_saturated_and_says_so() {
    let base = small_torus(&["workload.rate=0.01"], 1000, 4096);
    let free = run(&base);
    assert!(!free.saturated);
    let mean = free.latency.total.mean.unwrap();
    let mut tight = base.clone();
    tight.experiment.latency_threshold = Some(mean - 1.0);
    let r = run(&tight);
    assert!(r.saturated);
    assert_eq!(r.verdicts[0].cause.as_deref(), Some("latency_threshold"));
    assert!(r.summary().contains("experiment.latency_threshold"));
    // The threshold changes the verdict, never the run.
    assert_eq!(r.latency.total, free.latency.total);
    let mut roomy = base;
    roomy.experiment.latency_threshold = Some(mean + 1.0);
    assert!(!run(&roomy).saturated);
}

#[test]
fn the_search_judges_its_probes_by_the_latency_threshold_too() {
    let mut cfg = small_torus(&[], 1000, 4096);
    let opts = SaturationOptions {
        replications: 1,
        tolerance: 0.1,
        ..SaturationOptions::default()
    };
    let free = search(&cfg, &opts, &mut |_| {}).unwrap();
    // A bound just above the zero-load latency: loads that stay sustained without it
    // are not with it, and the result falls.
    cfg.experiment.latency_threshold = Some(20.0);
    let bounded = search(&cfg, &opts, &mut |_| {}).unwrap();
    assert!(
        bounded.saturation.throughput.0 < free.saturation.throughput.0,
        "{} vs {}",
        bounded.saturation.throughput,
        free.saturation.throughput
    );
    assert!(bounded.replications[0]
        .probes
        .iter()
        .any(|p| p.reason.contains("latency_threshold")));
}

#[test]
fn transpose_offers_what_its_senders_send_and_carries_its_own_bound() {
    // 4×4: the 4 diagonal sources would send to themselves and are silent; the 12 others
    // send 0.1 flits per cycle each, 0.075 per node.
    let r = run(&small_torus(
        &["workload.pattern=Transpose", "workload.rate=0.00833333"],
        1000,
        30_000,
    ));
    let t = &r.throughput;
    assert!((t.offered - 0.075).abs() < 0.005, "offered {}", t.offered);
    let topology = routemu::topology::Topology::from_config(&r.config.topology).unwrap();
    let pattern = routemu::traffic::DestPattern::new(
        &r.config.workload.pattern,
        &topology,
        r.config.experiment.seed,
    )
    .unwrap();
    assert_eq!(pattern.silent_sources(), 4);
    let load = routemu::routing::channel_load::channel_load(
        &topology,
        &pattern,
        routemu::config::Routing::DimensionOrder,
        routemu::config::TorusTie::Parity,
    )
    .unwrap();
    assert_eq!(t.pattern_bound, load.bound(1.0));
    assert!(t.pattern_bound.unwrap() < t.capacity);
    // Uniform traffic's own bound is the closed form's, N/(N − 1) apart.
    let u = run(&small_torus(&[], 500, 2048)).throughput;
    let b = u.pattern_bound.unwrap();
    assert!((b - u.capacity * 15.0 / 16.0).abs() < 1e-9, "{b}");
}
