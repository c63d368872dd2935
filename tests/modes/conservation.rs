//! Heavy load, long enough to catch a deadlock, on every topology with deterministic and
//! adaptive routing: flits and credits balance and no VC is held by two messages at any
//! checked cycle; after the workload stops the network drains, and every message created
//! is absorbed exactly once.

use crate::common;

use routemu::config::{HwConfig, Routing, Selection, SwitchingConfig, TopologyConfig};
use routemu::engine::sim::Simulation;
use routemu::foundation::types::{MsgId, NodeId};
use routemu::switching::wormhole::{invariants, WormholeNet};
use std::collections::HashSet;

fn stress(name: &str, cfg: &HwConfig, cycles: u64) {
    let mut sim = Simulation::<WormholeNet>::build(cfg, 0).unwrap();
    sim.record_deliveries();
    let buffer = cfg.router.buffer_flits;
    while sim.t < cycles {
        sim.step();
        if sim.t.is_multiple_of(97) {
            invariants::check(&sim, buffer)
                .unwrap_or_else(|e| panic!("{name} at cycle {}: {e}", sim.t));
        }
    }
    assert!(sim.net.flits_live > 0, "{name}: the load was not heavy");
    sim.stop_workload();
    assert!(
        sim.run_until_empty(2_000_000),
        "{name}: did not drain (deadlock?)"
    );
    invariants::check(&sim, buffer).unwrap_or_else(|e| panic!("{name} after drain: {e}"));
    let delivered = sim.stats.deliveries.as_ref().unwrap();
    let mut seen = HashSet::new();
    for d in delivered {
        assert!(
            seen.insert(d.header.id),
            "{name}: {} delivered twice",
            d.header.id
        );
        assert!(d.absorbed > d.header.created);
    }
    let n = sim.net.nodes();
    let created: u64 = (0..n as u32).map(|i| sim.created_at(NodeId(i))).sum();
    assert_eq!(
        seen.len() as u64,
        created,
        "{name}: created {created}, delivered {}",
        seen.len()
    );
    for i in 0..n as u32 {
        for s in 0..sim.created_at(NodeId(i)) {
            assert!(
                seen.contains(&MsgId::new(NodeId(i), s)),
                "{name}: message {i}#{s} lost"
            );
        }
    }
    // Every output VC is free again and every credit came home.
    let lay = sim.net.layout;
    for u in 0..n {
        for p in 0..lay.ports {
            if sim
                .net
                .topology
                .neighbor(
                    NodeId(u as u32),
                    routemu::foundation::types::PortId(p as u8),
                )
                .is_some()
            {
                assert_eq!(
                    sim.net.outputs.free[lay.port_idx(u, p)].count_ones() as usize,
                    lay.vcs
                );
            }
        }
    }
}

fn with(mut cfg: HwConfig, routing: Routing, selection: Selection, rate: f64) -> HwConfig {
    cfg.switching = SwitchingConfig::Wormhole {
        routing,
        selection,
        unsafe_routing: false,
        torus_vcs: Default::default(),
        torus_tie: Default::default(),
        valiant_intermediate: Default::default(),
    };
    cfg.workload.rate = rate;
    cfg.experiment.warmup = 0;
    cfg
}

#[test]
fn torus_dor_and_adaptive_conserve_everything_past_saturation() {
    let base = common::preset("wormhole-torus-dor.ron");
    stress(
        "torus DOR",
        &with(
            base.clone(),
            Routing::DimensionOrder,
            Selection::XFirst,
            0.06,
        ),
        20_000,
    );
    for sel in [Selection::XFirst, Selection::Random, Selection::MostCredits] {
        stress(
            &format!("torus adaptive {sel:?}"),
            &with(base.clone(), Routing::Adaptive, sel, 0.08),
            20_000,
        );
    }
}

#[test]
fn mesh_dor_and_adaptive_conserve_everything_past_saturation() {
    let base = common::preset("wormhole-mesh-dor.ron");
    stress(
        "mesh DOR",
        &with(
            base.clone(),
            Routing::DimensionOrder,
            Selection::XFirst,
            0.04,
        ),
        20_000,
    );
    stress(
        "mesh adaptive",
        &with(base, Routing::Adaptive, Selection::Random, 0.05),
        20_000,
    );
}

#[test]
fn hypercube_ecube_and_adaptive_conserve_everything_past_saturation() {
    let mut base = common::preset("wormhole-hypercube.ron");
    base.topology = TopologyConfig::Hypercube { dim: 6 };
    stress(
        "hypercube e-cube",
        &with(
            base.clone(),
            Routing::DimensionOrder,
            Selection::XFirst,
            0.15,
        ),
        15_000,
    );
    stress(
        "hypercube adaptive",
        &with(base, Routing::Adaptive, Selection::MostCredits, 0.2),
        15_000,
    );
}

#[test]
fn unidirectional_and_three_dimensional_tori_with_tight_buffers_conserve_everything() {
    let mut base = common::preset("wormhole-torus-dor.ron");
    base.topology = TopologyConfig::Torus {
        k: 4,
        n: 3,
        bidirectional: false,
        c: 1,
    };
    base.router.buffer_flits = 2;
    base.router.vcs = 3;
    base.links.latency = 2;
    stress(
        "unidirectional 4-ary 3-cube DOR",
        &with(
            base.clone(),
            Routing::DimensionOrder,
            Selection::XFirst,
            0.02,
        ),
        15_000,
    );
    stress(
        "unidirectional 4-ary 3-cube adaptive",
        &with(base.clone(), Routing::Adaptive, Selection::XFirst, 0.03),
        15_000,
    );
    base.topology = TopologyConfig::Torus {
        k: 5,
        n: 2,
        bidirectional: true,
        c: 1,
    };
    base.router.speedup = 2;
    base.links.width = 2;
    base.workload.length = routemu::config::LengthConfig::Exponential { mean: 9.0 };
    stress(
        "odd torus, wide links, speedup 2",
        &with(base, Routing::Adaptive, Selection::Random, 0.1),
        15_000,
    );
}

#[test]
fn the_invariant_checker_notices_a_leaked_credit_and_a_doubly_held_vc() {
    let cfg = with(
        common::preset("wormhole-torus-dor.ron"),
        Routing::DimensionOrder,
        Selection::XFirst,
        0.03,
    );
    let loaded = || {
        let mut sim = Simulation::<WormholeNet>::build(&cfg, 0).unwrap();
        while sim.t < 2_000 {
            sim.step();
        }
        sim
    };
    let sim = loaded();
    invariants::check(&sim, 8).unwrap();
    let lay = sim.net.layout;
    let mut broken = loaded();
    broken.net.outputs.credits[lay.vc_idx(5, 0, 1)] += 1;
    assert!(invariants::check(&broken, 8)
        .unwrap_err()
        .contains("credits"));
    // Two input VCs claiming the same output VC.
    let mut twice = loaded();
    let active: Vec<usize> = (0..twice.net.inputs.vc.len())
        .filter(|&i| {
            let v = &twice.net.inputs.vc[i];
            v.state == routemu::router::buffers::VcState::Active
                && (v.out_port as usize) < lay.ports
        })
        .collect();
    let (a, b) = active
        .iter()
        .flat_map(|&a| active.iter().map(move |&b| (a, b)))
        .find(|&(a, b)| a != b && a / lay.per_node == b / lay.per_node)
        .expect("two active VCs at one router");
    let (p, v) = (
        twice.net.inputs.vc[a].out_port,
        twice.net.inputs.vc[a].out_vc,
    );
    twice.net.inputs.vc[b].out_port = p;
    twice.net.inputs.vc[b].out_vc = v;
    assert!(invariants::check(&twice, 8).is_err());
}
