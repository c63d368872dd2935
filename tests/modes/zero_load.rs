//! One message alone in the network: its latency is the closed form
//! (h+1)(R−1+a+s+x) + h·ℓ + 1 + ⌈L/W⌉ − 1, exactly, on every preset and for every
//! distance the preset's network has.

use crate::common;

use routemu::engine::sim::Simulation;
use routemu::foundation::types::NodeId;
use routemu::switching::wormhole::WormholeNet;

use routemu::topology::Topology;

fn quiet(mut cfg: routemu::config::HwConfig) -> routemu::config::HwConfig {
    // A workload whose first message comes long after the test is over.
    cfg.workload.rate = 1e-12;
    cfg
}

/// The quiet torus preset with a pipelined router: routing in 3 cycles, VC allocation
/// in 1, switch allocation in 2.
fn pipelined_torus() -> routemu::config::HwConfig {
    let mut cfg = quiet(common::preset("wormhole-torus-dor.ron"));
    cfg.router.controller.route = 3;
    cfg.router.pipeline.vc_alloc = 1;
    cfg.router.pipeline.switch_alloc = 2;
    cfg
}

#[test]
fn a_lone_message_has_the_closed_form_latency_on_every_preset() {
    for (name, cfg) in common::wormhole_presets() {
        let cfg = quiet(cfg);
        let topo = Topology::from_config(&cfg.topology).unwrap();
        let n = topo.nodes() as u32;
        // Sources and destinations spread over the network, covering every distance.
        let mut seen = vec![false; topo.diameter() as usize + 1];
        for (i, len) in [(1u32, 12u32), (7, 1), (13, 5), (29, 40)]
            .iter()
            .cycle()
            .take(40)
            .enumerate()
        {
            let src = NodeId((i as u32 * 37 + len.0) % n);
            let dst = NodeId((i as u32 * 101 + 3) % n);
            if src == dst {
                continue;
            }
            let mut sim = Simulation::<WormholeNet>::build(&cfg, 0).unwrap();
            sim.record_deliveries();
            sim.inject(src, dst, len.1);
            assert!(
                sim.run_until_empty(100_000),
                "{name}: message never delivered"
            );
            let d = sim.stats.deliveries.as_ref().unwrap();
            assert_eq!(d.len(), 1);
            let hops = topo.distance(src, dst) as u64;
            seen[hops as usize] = true;
            let expected = routemu::switching::zero_load::wormhole(&cfg, hops, len.1 as u64);
            assert_eq!(
                d[0].absorbed - d[0].header.created,
                expected,
                "{name}: {src}→{dst}, {} flits",
                len.1
            );
            assert_eq!(d[0].header.hops as u64, hops, "{name}: minimal route");
            assert_eq!(d[0].header.blocking, 0);
        }
        assert!(
            seen.iter().filter(|&&s| s).count() >= 3,
            "{name}: too few distances covered"
        );
    }
}

#[test]
fn pipelined_router_and_wide_slow_links_follow_the_closed_form() {
    let mut cfg = pipelined_torus();
    cfg.router.pipeline.switch_traversal = 1;
    cfg.links.latency = 4;
    cfg.links.credit_latency = Some(2);
    cfg.links.width = 3;
    cfg.router.buffer_flits = 32;
    for len in [1, 2, 3, 4, 11, 12] {
        let mut sim = Simulation::<WormholeNet>::build(&cfg, 0).unwrap();
        sim.record_deliveries();
        sim.inject(NodeId(0), NodeId(3 + 8 * 2), len);
        assert!(sim.run_until_empty(10_000));
        let d = sim.stats.deliveries.as_ref().unwrap()[0];
        assert_eq!(
            d.absorbed - d.header.created,
            routemu::switching::zero_load::wormhole(&cfg, 5, len as u64),
            "{len} flits"
        );
    }
}

#[test]
fn a_lone_message_on_the_mesh_boundary_and_hypercube_corner_is_exact() {
    for (name, src, dst) in [
        ("wormhole-mesh-dor.ron", 0, 63),
        ("wormhole-hypercube.ron", 0, 255),
    ] {
        let cfg = quiet(common::preset(name));
        let mut sim = Simulation::<WormholeNet>::build(&cfg, 0).unwrap();
        sim.record_deliveries();
        sim.inject(NodeId(src), NodeId(dst), 12);
        assert!(sim.run_until_empty(10_000));
        let d = sim.stats.deliveries.as_ref().unwrap()[0];
        let topo = Topology::from_config(&cfg.topology).unwrap();
        let hops = topo.diameter() as u64;
        assert_eq!(
            d.absorbed - d.header.created,
            routemu::switching::zero_load::wormhole(&cfg, hops, 12),
            "{name}"
        );
    }
}

#[test]
fn the_latency_definition_shifts_a_lone_message_by_the_source_and_ejection_cycles() {
    use routemu::config::{LatencyDef, LatencyFrom, LatencyTo};
    // A pipelined router, so that the source router's R−1+a+s cycles are not zero.
    let mut cfg = pipelined_torus();
    cfg.router.buffer_flits = 32;
    let mut sim = Simulation::<WormholeNet>::build(&cfg, 0).unwrap();
    sim.record_deliveries();
    sim.inject(NodeId(0), NodeId(3 + 8 * 2), 12);
    assert!(sim.run_until_empty(10_000));
    let d = sim.stats.deliveries.as_ref().unwrap()[0];
    let base = routemu::switching::zero_load::wormhole(&cfg, 5, 12);
    assert_eq!(d.absorbed - d.header.created, base);
    for (from, to, less) in [
        (
            LatencyFrom::HeadInjected,
            LatencyTo::TailDelivered,
            2 + 1 + 2,
        ),
        (LatencyFrom::Creation, LatencyTo::TailArrived, 1),
        (
            LatencyFrom::HeadInjected,
            LatencyTo::TailArrived,
            2 + 1 + 2 + 1,
        ),
    ] {
        let mut c = cfg.clone();
        c.experiment.latency = LatencyDef { from, to };
        assert_eq!(
            routemu::switching::zero_load::wormhole(&c, 5, 12),
            base - less,
            "{from:?} {to:?}"
        );
        if from == LatencyFrom::HeadInjected {
            // The emulator's own record of the head leaving the source router.
            let end = d.absorbed - if to == LatencyTo::TailArrived { 1 } else { 0 };
            assert_eq!(
                end - d.header.injected,
                routemu::switching::zero_load::wormhole(&c, 5, 12)
            );
        }
    }
}

#[test]
fn tail_arrived_reports_every_statistic_one_cycle_earlier_and_nothing_else_changes() {
    use routemu::config::{LatencyDef, LatencyFrom, LatencyTo, Measure};
    use routemu::experiments::experiment::run_experiment;
    let mut cfg = common::preset("wormhole-torus-adaptive.ron");
    cfg.topology = routemu::config::TopologyConfig::Torus {
        k: 4,
        n: 2,
        bidirectional: true,
        c: 1,
    };
    cfg.workload.rate = 0.01;
    cfg.experiment.replications = 2;
    cfg.experiment.warmup = 500;
    cfg.experiment.measure = Measure::Cycles(3_000);
    let a = run_experiment(&cfg, &mut |_, _| {}).unwrap();
    cfg.experiment.latency = LatencyDef {
        from: LatencyFrom::Creation,
        to: LatencyTo::TailArrived,
    };
    let b = run_experiment(&cfg, &mut |_, _| {}).unwrap();
    let (x, y) = (&a.latency.total, &b.latency.total);
    assert!((x.mean.unwrap() - 1.0 - y.mean.unwrap()).abs() < 1e-9);
    assert_eq!(x.ci95, y.ci95);
    assert_eq!(x.p50.unwrap() - 1, y.p50.unwrap());
    assert_eq!(x.max.unwrap() - 1, y.max.unwrap());
    assert_eq!(a.messages, b.messages);
    assert_eq!(a.latency.phases, b.latency.phases);
    assert_eq!(b.latency.definition.to, LatencyTo::TailArrived);
}
