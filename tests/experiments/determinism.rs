//! The same seed gives identical results; idle skipping changes nothing; different seeds
//! give different results (so the comparisons above are not vacuous).

use crate::common;

use routemu::experiments::experiment::run_experiment;
use serde_json::Value;

fn report(cfg: &routemu::config::HwConfig) -> Value {
    let r = run_experiment(cfg, &mut |_, _| {}).unwrap();
    let mut v = serde_json::to_value(&r).unwrap();
    let o = v.as_object_mut().unwrap();
    o.remove("wall_seconds");
    o.remove("node_cycles_per_second");
    v
}

fn short(mut cfg: routemu::config::HwConfig) -> routemu::config::HwConfig {
    cfg = common::windowed(cfg, 2_000, 6_000, 2);
    cfg.workload.rate *= 4.0;
    cfg
}

#[test]
fn same_seed_same_report_on_every_preset() {
    for (name, cfg) in common::wormhole_presets() {
        let cfg = short(cfg);
        assert_eq!(report(&cfg), report(&cfg), "{name}");
    }
}

#[test]
fn idle_skipping_gives_the_same_statistics_as_visiting_every_router() {
    for (name, cfg) in common::wormhole_presets() {
        let mut cfg = short(cfg);
        // Low load, where skipping (and clock jumps) happen most.
        cfg.workload.rate /= 8.0;
        let skip = report(&cfg);
        cfg.experiment.idle_skip = false;
        let mut plain = report(&cfg);
        plain["config"]["experiment"]["idle_skip"] = Value::Bool(true);
        assert_eq!(skip, plain, "{name}");
    }
}

#[test]
fn idle_skipping_changes_nothing_for_timeout_switching() {
    for (name, mut cfg) in common::timeout_presets() {
        cfg = common::windowed(cfg, 5_000, 30_000, 2);
        // Light load: long idle stretches, clock jumps, retries after a delay.
        cfg.workload.rate /= 4.0;
        cfg = routemu::config::overrides::apply_overrides(
            &cfg,
            &["switching.retry_delay=37".to_string()],
        )
        .unwrap();
        let skip = report(&cfg);
        cfg.experiment.idle_skip = false;
        let mut plain = report(&cfg);
        plain["config"]["experiment"]["idle_skip"] = Value::Bool(true);
        assert_eq!(skip, plain, "{name}");
        assert!(skip["timeout"]["resets"].as_u64().unwrap() > 0, "{name}");
    }
}

#[test]
fn another_seed_gives_another_report() {
    let cfg = short(common::preset("wormhole-torus-adaptive.ron"));
    let mut other = cfg.clone();
    other.experiment.seed = 2;
    let (a, b) = (report(&cfg), report(&other));
    assert_ne!(a["latency"], b["latency"]);
}

#[test]
fn the_binary_writes_identical_json_for_the_same_seed() {
    let dir = tempfile::tempdir().unwrap();
    let mut outs = Vec::new();
    for i in 0..2 {
        let path = dir.path().join(format!("r{i}.json"));
        common::routemu_ok(&[
            "run",
            "hw/wormhole-torus-adaptive.ron",
            "--cycles",
            "5000",
            "--warmup",
            "1000",
            "--rate",
            "0.02",
            "--json",
            path.to_str().unwrap(),
        ]);
        let mut v: Value = common::read_json(&path);
        let o = v.as_object_mut().unwrap();
        for key in [
            "schema",
            "config",
            "seed",
            "replications",
            "threads",
            "partitioning",
            "cycles",
            "messages",
            "latency",
            "throughput",
            "controller",
            "saturated",
            "wall_seconds",
            "node_cycles_per_second",
            "wormhole",
        ] {
            assert!(o.contains_key(key), "JSON lacks `{key}`");
        }
        o.remove("wall_seconds");
        o.remove("node_cycles_per_second");
        // The provenance's command line names each run's own output file.
        o.remove("command");
        outs.push(v);
    }
    assert_eq!(outs[0], outs[1]);
    assert!(outs[0]["latency"]["mean"].as_f64().unwrap() > 0.0);
    assert!(outs[0]["latency"]["phases"]["network"]["p99"]
        .as_u64()
        .is_some());
}
