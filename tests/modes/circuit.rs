//! Circuit switching (papers 000 and 001): the closed-form latency of a lone message,
//! conservation and link invariants under heavy load, deadlock freedom of hold with
//! e-cube, progress of drop and adaptive, determinism, and the conflict rules.

use crate::common;

use routemu::config::{
    AckDelay, ConflictStrategy, Duplex, HwConfig, LengthConfig, Measure, SwitchingConfig,
    TopologyConfig,
};
use routemu::engine::sim::{Simulation, Stop};
use routemu::experiments::experiment::run_experiment;
use routemu::foundation::types::NodeId;
use routemu::switching::circuit::CircuitNet;

use routemu::topology::Topology;
use serde_json::Value;

fn quiet(mut cfg: HwConfig) -> HwConfig {
    cfg.workload.rate = 1e-12;
    // Everything the tests do is inside the measurement window.
    cfg.experiment.warmup = 0;
    cfg
}

fn set_strategy(cfg: &mut HwConfig, s: ConflictStrategy) {
    if let SwitchingConfig::Circuit {
        strategy,
        hold_timeout,
        ..
    } = &mut cfg.switching
    {
        *strategy = s;
        if s != ConflictStrategy::Hold {
            *hold_timeout = None;
        }
    }
}

/// Runs one message alone and returns its latency and hops.
fn lone(cfg: &HwConfig, src: u32, dst: u32, len: u32) -> (u64, u64) {
    let mut sim = Simulation::<CircuitNet>::build(cfg, 0).unwrap();
    sim.record_deliveries();
    sim.inject(NodeId(src), NodeId(dst), len);
    assert!(sim.run_until_empty(1_000_000), "message never delivered");
    let d = sim.stats.deliveries.as_ref().unwrap();
    assert_eq!(d.len(), 1);
    (d[0].absorbed - d[0].header.created, d[0].header.hops as u64)
}

#[test]
fn a_lone_message_has_the_closed_form_latency_under_every_strategy_and_preset() {
    for (name, base) in common::circuit_presets() {
        for strategy in [
            ConflictStrategy::Hold,
            ConflictStrategy::Drop,
            ConflictStrategy::Adaptive,
        ] {
            let mut cfg = quiet(base.clone());
            set_strategy(&mut cfg, strategy);
            let topo = Topology::from_config(&cfg.topology).unwrap();
            let n = topo.nodes() as u32;
            let mut seen = std::collections::BTreeSet::new();
            for (i, len) in [1u32, 7, 100, 1000].iter().cycle().take(16).enumerate() {
                let i = i as u32;
                let src = (i * 37 + 5) % n;
                let dst = (src + 1 + i * i * 7 + i * 3) % n;
                if src == dst {
                    continue;
                }
                let (lat, hops) = lone(&cfg, src, dst, *len);
                let d = topo.distance(NodeId(src), NodeId(dst)) as u64;
                assert_eq!(hops, d, "{name} {strategy:?}: minimal path");
                seen.insert(d);
                assert_eq!(
                    lat,
                    routemu::switching::zero_load::circuit(&cfg, d, *len as u64),
                    "{name} {strategy:?}: {src}→{dst}, {len} flits"
                );
            }
            assert!(seen.len() >= 3, "{name}: distances {seen:?}");
        }
    }
}

#[test]
fn zero_load_latency_is_the_papers_sum_with_unit_link_latency() {
    // M(D_verify + D_link_conn) + D_ack + T_data + M·D_rel (paper 000 eq. 2).
    let mut cfg = quiet(common::preset("circuit-hold.ron"));
    cfg.router.controller.verify = 3;
    cfg.router.controller.link_conn = 2;
    cfg.router.controller.release = 4;
    if let SwitchingConfig::Circuit { ack, .. } = &mut cfg.switching {
        *ack = AckDelay::Total(5);
    }
    let (lat, hops) = lone(&cfg, 0, 0b1011_0001, 500);
    assert_eq!(hops, 4);
    assert_eq!(lat, 4 * (3 + 2) + 5 + 500 + 4 * 4);
}

#[test]
fn slow_wide_links_per_hop_acks_and_full_duplex_follow_the_closed_form() {
    let mut cfg = quiet(common::preset("circuit-adaptive.ron"));
    cfg.router.controller.verify = 2;
    cfg.router.controller.link_conn = 3;
    cfg.router.controller.release = 1;
    cfg.links.latency = 7;
    cfg.links.width = 4;
    cfg.links.duplex = Duplex::Full;
    if let SwitchingConfig::Circuit { ack, .. } = &mut cfg.switching {
        *ack = AckDelay::PerHop(2);
    }
    for len in [1, 3, 4, 5, 1001] {
        for dst in [1, 0b11_1111_1111, 0b10_0101_0000] {
            let (lat, hops) = lone(&cfg, 0, dst, len);
            // The tail (7 cycles per hop) arrives after the release (1 per hop) here.
            assert_eq!(
                lat,
                routemu::switching::zero_load::circuit(&cfg, hops, len as u64),
                "{len} {dst}"
            );
        }
    }
    let tail_bound = routemu::switching::zero_load::circuit(&cfg, 10, 4);
    assert_eq!(
        tail_bound,
        10 * (2 + 3 - 1 + 7) + 2 * 10 + 10 * 7,
        "long wires: completion is the tail's arrival"
    );
}

fn heavy(mut cfg: HwConfig, rate_factor: f64) -> HwConfig {
    cfg.workload.rate *= rate_factor;
    cfg.workload.length = LengthConfig::Uniform { min: 20, max: 200 };
    cfg.experiment.warmup = 0;
    cfg.experiment.measure = Measure::Cycles(60_000);
    cfg
}

/// Runs `cfg` heavily loaded, checking the link invariants now and then, then stops the
/// workload and drains; checks every message was delivered exactly once and every link
/// released.
fn conserve(name: &str, cfg: &HwConfig) {
    let mut sim = Simulation::<CircuitNet>::build(cfg, 0).unwrap();
    sim.record_deliveries();
    let mut busiest = 0;
    while sim.t < 60_000 {
        sim.step();
        if sim.t.is_multiple_of(997) {
            sim.net
                .check_invariants()
                .unwrap_or_else(|e| panic!("{name}: {e}"));
            busiest = busiest.max(sim.net.in_progress());
            assert!(
                sim.net.wait_cycle().is_none()
                    || !matches!(strategy(cfg), ConflictStrategy::Hold)
                    || has_timeout(cfg),
                "{name}: deadlock"
            );
        }
    }
    assert!(
        busiest > sim.net.nodes() as i64 / 16,
        "{name}: the load was not heavy ({busiest})"
    );
    sim.stop_workload();
    assert!(sim.run_until_empty(2_000_000), "{name}: did not drain");
    sim.net.check_invariants().unwrap();
    let d = sim.stats.deliveries.as_ref().unwrap();
    let mut ids: Vec<u64> = d.iter().map(|x| x.header.id.0).collect();
    ids.sort_unstable();
    let n = ids.len();
    ids.dedup();
    assert_eq!(ids.len(), n, "{name}: a message delivered twice");
    let created: u64 = (0..sim.net.nodes() as u32)
        .map(|u| sim.created_at(NodeId(u)))
        .sum();
    assert_eq!(n as u64, created, "{name}: messages lost");
    assert!(
        sim.net.ends.holder.iter().all(|&h| h == u64::MAX),
        "{name}: a link was never released"
    );
    assert_eq!(sim.net.link_waiting, 0);
    assert_eq!(sim.net.in_progress(), 0);
    for x in d {
        assert!(x.absorbed > x.header.created);
    }
}

fn strategy(cfg: &HwConfig) -> ConflictStrategy {
    match cfg.switching {
        SwitchingConfig::Circuit { strategy, .. } => strategy,
        _ => unreachable!(),
    }
}

fn has_timeout(cfg: &HwConfig) -> bool {
    matches!(
        cfg.switching,
        SwitchingConfig::Circuit {
            hold_timeout: Some(_),
            ..
        }
    )
}

#[test]
fn every_message_is_delivered_once_and_every_link_released_under_heavy_load() {
    for (name, base) in common::circuit_presets() {
        for s in [
            ConflictStrategy::Hold,
            ConflictStrategy::Drop,
            ConflictStrategy::Adaptive,
        ] {
            let mut cfg = base.clone();
            set_strategy(&mut cfg, s);
            if let SwitchingConfig::Circuit { backoff, .. } = &mut cfg.switching {
                *backoff = 300;
            }
            // Short messages at a high rate: many set-ups in flight at once. Hold on the
            // torus rings is kept below the load where it livelocks (every ring covered by
            // partial paths that wait for each other; timeouts alone do not clear it).
            let factor = match (name.contains("torus"), s) {
                (true, ConflictStrategy::Hold) => 5.0,
                (true, _) => 10.0,
                _ => 40.0,
            };
            let cfg = heavy(cfg, factor);
            conserve(&format!("{name} {s:?}"), &cfg);
        }
    }
}

#[test]
fn full_duplex_links_conserve_too() {
    let mut cfg = heavy(common::preset("circuit-drop.ron"), 60.0);
    cfg.links.duplex = Duplex::Full;
    conserve("drop full duplex", &cfg);
}

#[test]
fn hold_with_e_cube_never_deadlocks_on_the_hypercube() {
    let mut cfg = heavy(common::preset("circuit-hold.ron"), 80.0);
    cfg.experiment.measure = Measure::Cycles(150_000);
    cfg.experiment.saturation_backlog = 1e9;
    let mut sim = Simulation::<CircuitNet>::build(&cfg, 0).unwrap();
    let mut waited = 0;
    while sim.t < 150_000 {
        sim.step();
        if sim.t.is_multiple_of(1000) {
            assert!(
                sim.net.wait_cycle().is_none(),
                "cycle of waits at {}",
                sim.t
            );
            waited = waited.max(sim.net.link_waiting);
        }
    }
    assert!(
        waited > 20,
        "links were not contended ({waited} waiting at most)"
    );
    sim.stop_workload();
    assert!(sim.run_until_empty(5_000_000));
}

#[test]
fn plain_hold_on_a_unidirectional_torus_ring_deadlocks_and_is_reported() {
    let mut cfg = common::preset("circuit-torus-hold.ron");
    if let SwitchingConfig::Circuit { hold_timeout, .. } = &mut cfg.switching {
        *hold_timeout = None;
    }
    cfg.workload.rate *= 4.0;
    let mut sim = Simulation::<CircuitNet>::build(&cfg, 0).unwrap();
    match sim.run(&mut |_| {}) {
        Stop::Deadlock(text) => {
            assert!(text.contains("wait for each other's links"), "{text}");
            let cycle = sim.net.wait_cycle().unwrap();
            assert!(cycle.len() >= 2);
        }
        other => panic!("expected a deadlock, got {other:?}"),
    }
}

#[test]
fn drop_and_adaptive_keep_delivering_under_overload() {
    for file in ["circuit-drop.ron", "circuit-adaptive.ron"] {
        let mut cfg = heavy(common::preset(file), 60.0);
        cfg.experiment.saturation_backlog = 1e9;
        let mut sim = Simulation::<CircuitNet>::build(&cfg, 0).unwrap();
        let mut last = 0;
        for window in 1..=8 {
            while sim.t < window * 5_000 {
                sim.step();
            }
            let now = sim.net.delivered;
            assert!(
                now > last + 50,
                "{file}: only {} deliveries in window {window}",
                now - last
            );
            last = now;
        }
        assert!(sim.net.stats.aborts_sum > 0 || sim.net.stats.conflicts.iter().sum::<u64>() > 0);
    }
}

#[test]
fn a_busy_receiver_is_a_conflict_that_hold_waits_for_and_drop_aborts() {
    // Two messages to the same node, one receiving DMA engine: the second finds it busy.
    for (s, aborts) in [(ConflictStrategy::Hold, 0), (ConflictStrategy::Drop, 1)] {
        let mut cfg = quiet(common::preset("circuit-drop.ron"));
        set_strategy(&mut cfg, s);
        cfg.router.dma = Some(1);
        // Longer than the first transfer: the retry finds the receiver free.
        if let SwitchingConfig::Circuit { backoff, .. } = &mut cfg.switching {
            *backoff = 1000;
        }
        let mut sim = Simulation::<CircuitNet>::build(&cfg, 0).unwrap();
        sim.record_deliveries();
        sim.inject(NodeId(1), NodeId(0), 400);
        sim.inject(NodeId(2), NodeId(0), 400);
        assert!(sim.run_until_empty(100_000));
        let d = sim.stats.deliveries.as_ref().unwrap();
        assert_eq!(d.len(), 2);
        let second = d.iter().map(|x| x.absorbed).max().unwrap();
        // The second transfer cannot start before the first one's tail is in.
        assert!(second >= 2 * 400, "{s:?}: {second}");
        assert_eq!(sim.net.stats.aborts_sum, aborts, "{s:?}");
        assert_eq!(sim.net.stats.dma_conflicts, 1, "{s:?}");
    }
}

#[test]
fn adaptive_routes_around_a_busy_link_where_drop_aborts() {
    // 0 → 3 on a d = 2 hypercube has two minimal paths; a long message 0 → 1 holds the
    // first link of the e-cube path (dimension 0).
    for (s, aborts) in [(ConflictStrategy::Adaptive, 0), (ConflictStrategy::Drop, 1)] {
        let mut cfg = quiet(common::preset("circuit-adaptive.ron"));
        cfg.topology = TopologyConfig::Hypercube { dim: 2 };
        // Step cycle by cycle, so that the second message starts at cycle 50.
        cfg.experiment.idle_skip = false;
        set_strategy(&mut cfg, s);
        cfg.router.dma = Some(2);
        // Longer than the long transfer: drop's retry finds the path free.
        if let SwitchingConfig::Circuit { backoff, .. } = &mut cfg.switching {
            *backoff = 6_000;
        }
        let mut sim = Simulation::<CircuitNet>::build(&cfg, 0).unwrap();
        sim.record_deliveries();
        sim.inject(NodeId(0), NodeId(1), 5_000);
        while sim.t < 50 {
            sim.step();
        }
        sim.inject(NodeId(0), NodeId(3), 10);
        assert!(sim.run_until_empty(100_000));
        let d = sim.stats.deliveries.as_ref().unwrap();
        let short = d.iter().find(|x| x.header.len == 10).unwrap();
        if s == ConflictStrategy::Adaptive {
            // Each random choice has even odds; the busy link costs one extra verify at
            // most, never an abort.
            let lat = short.absorbed - short.header.created;
            let z = routemu::switching::zero_load::circuit(&cfg, 2, 10);
            assert!(lat == z || lat == z + 1, "{lat} vs {z}");
        }
        assert_eq!(sim.net.stats.aborts_sum, aborts, "{s:?}");
    }
}

fn report(cfg: &HwConfig) -> Value {
    let r = run_experiment(cfg, &mut |_, _| {}).unwrap();
    let mut v = serde_json::to_value(&r).unwrap();
    let o = v.as_object_mut().unwrap();
    o.remove("wall_seconds");
    o.remove("node_cycles_per_second");
    v
}

fn short(mut cfg: HwConfig) -> HwConfig {
    cfg = common::windowed(cfg, 20_000, 100_000, 2);
    cfg.workload.rate *= 2.0;
    cfg
}

#[test]
fn circuit_runs_are_deterministic_and_idle_skipping_changes_nothing() {
    for (name, cfg) in common::circuit_presets() {
        let cfg = short(cfg);
        let a = report(&cfg);
        assert_eq!(a, report(&cfg), "{name}");
        assert!(a["circuit"]["p_conflict"].as_f64().unwrap() > 0.0, "{name}");
        let mut plain = cfg.clone();
        plain.experiment.idle_skip = false;
        let mut b = report(&plain);
        b["config"]["experiment"]["idle_skip"] = Value::Bool(true);
        assert_eq!(a, b, "{name}");
    }
}

#[test]
fn the_report_has_the_circuit_block_and_its_phases_add_up() {
    let cfg = short(common::preset("circuit-drop.ron"));
    let r = report(&cfg);
    let c = &r["circuit"];
    assert!(r.get("wormhole").is_none());
    let phase = |p: &str| c["phases"][p]["mean"].as_f64().unwrap();
    let total = r["latency"]["mean"].as_f64().unwrap();
    let src = r["latency"]["phases"]["source_queue"]["mean"]
        .as_f64()
        .unwrap();
    let sum = src + phase("setup") + phase("ack") + phase("data") + phase("release");
    assert!((sum - total).abs() < 1e-6 * total, "{sum} vs {total}");
    assert_eq!(phase("data"), 1000.0);
    assert_eq!(phase("ack"), 1.0);
    assert!(c["aborts_per_message"].as_f64().unwrap() > 0.0);
    // The time-average links held in data is λ·N·M·T_data / links ≈ 0.2 at twice the
    // preset's rate.
    let data = c["links_held_fraction"]["data"].as_f64().unwrap();
    assert!((data - 0.2).abs() < 0.02, "{data}");
    // Per-node controllers: 256 of them, with a P-K prediction each.
    let nodes = c["controllers"].as_array().unwrap();
    assert_eq!(nodes.len(), 256);
    assert!(nodes.iter().all(|n| n["wait_mg1"].is_number()));
}

#[test]
fn bad_circuit_configurations_are_refused_with_a_reason() {
    let cases: [(&str, &[&str], &str); 6] = [
        (
            "circuit-drop.ron",
            &["--set", "switching.backoff=0"],
            "backoff",
        ),
        (
            "circuit-adaptive.ron",
            &["--set", "switching.backoff=0"],
            "backoff",
        ),
        ("circuit-hold.ron", &["--set", "router.dma=9"], "router.dma"),
        (
            "circuit-hold.ron",
            &["--set", "switching.ack=Total(0)"],
            "ack",
        ),
        (
            "circuit-drop.ron",
            &["--set", "switching.hold_timeout=100"],
            "hold_timeout",
        ),
        (
            "circuit-hold.ron",
            &["--set", "topology=ManhattanStreet(k: 4)"],
            "Manhattan",
        ),
    ];
    for (file, extra, word) in cases {
        let path = format!("hw/{file}");
        let mut args = vec!["run", path.as_str()];
        args.extend_from_slice(extra);
        let out = common::routemu(&args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{file} {extra:?} was accepted");
        assert_ne!(
            out.status.code(),
            Some(101),
            "{file} {extra:?} panicked: {err}"
        );
        assert!(err.contains(word), "{file} {extra:?}: {err}");
    }
}
