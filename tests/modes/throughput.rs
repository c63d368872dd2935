//! Throughput on the 8×8 torus under uniform traffic (4 VCs of 8 flits, 12-flit
//! messages): dimension-order routing accepts at least half the bisection bound
//! (8/k = 1 flit per node per cycle) without saturating, and minimal adaptive routing
//! accepts more than dimension order once both are driven past saturation.

use crate::common;

use routemu::config::{HwConfig, Measure};
use routemu::experiments::experiment::run_experiment;
use routemu::topology::Topology;

fn at(mut cfg: HwConfig, flits_per_node_cycle: f64) -> HwConfig {
    assert_eq!(cfg.router.vcs, 4);
    assert_eq!(cfg.router.buffer_flits, 8);
    assert_eq!(
        cfg.workload.length,
        routemu::config::LengthConfig::Constant { flits: 12 }
    );
    cfg.workload.rate = flits_per_node_cycle / 12.0;
    cfg = common::windowed(cfg, 5_000, 20_000, 2);
    cfg
}

#[test]
fn dimension_order_accepts_half_the_bisection_bound_without_saturating() {
    let cfg = common::preset("wormhole-torus-dor.ron");
    let bound = Topology::from_config(&cfg.topology).unwrap().capacity();
    assert_eq!(bound, 1.0);
    let r = run_experiment(&at(cfg, 0.5 * bound), &mut |_, _| {}).unwrap();
    assert!(!r.saturated, "saturated at half the bisection bound");
    assert!(
        r.throughput.offered > 0.49,
        "offered {}",
        r.throughput.offered
    );
    assert!(
        (r.throughput.accepted - r.throughput.offered).abs() < 0.01,
        "accepted {} of {} offered",
        r.throughput.accepted,
        r.throughput.offered
    );
    assert_eq!(
        r.messages.in_flight + r.messages.delivered,
        r.messages.generated
    );
}

#[test]
fn adaptive_routing_saturates_above_dimension_order() {
    let mut accepted = Vec::new();
    for name in ["wormhole-torus-dor.ron", "wormhole-torus-adaptive.ron"] {
        let mut cfg = at(common::preset(name), 0.9);
        // Keep the sources backlogged for the whole window: the accepted throughput is
        // then the network's saturation throughput.
        cfg.experiment.saturation_backlog = 1e9;
        cfg.experiment.drain_limit = 1;
        cfg.experiment.measure = Measure::Cycles(10_000);
        cfg.experiment.replications = 1;
        let r = run_experiment(&cfg, &mut |_, _| {}).unwrap();
        assert!(r.saturated, "{name} should saturate at 0.9");
        accepted.push(r.throughput.accepted);
    }
    let (dor, adaptive) = (accepted[0], accepted[1]);
    assert!(dor >= 0.5, "DOR saturation throughput {dor}");
    assert!(adaptive > dor * 1.05, "adaptive {adaptive} vs DOR {dor}");
}
