//! The turn models (west-first, north-last, negative-first, odd-even) and XY-YX on
//! meshes: driven past saturation under uniform and transpose traffic they never
//! deadlock, and below saturation every measured message arrives; odd-even and
//! west-first accept more than XY past saturation under transpose (issue 32's known
//! result).

use crate::common;

use routemu::config::{HwConfig, Measure, PatternConfig, Routing, SwitchingConfig};
use routemu::experiments::experiment::run_experiment;
use routemu::stats::report::Report;

const NEW_ROUTINGS: [Routing; 5] = [
    Routing::WestFirst,
    Routing::NorthLast,
    Routing::NegativeFirst,
    Routing::OddEven,
    Routing::XyYx,
];

/// The 8×8 mesh preset (4 VCs of 8 flits, 12-flit messages) as a `k`×`k` mesh with
/// `routing`, `pattern` at `flits` per node per cycle, in a short window with a watchdog
/// that fires after 2 000 cycles without a flit moving.
fn mesh(k: u32, routing: Routing, pattern: PatternConfig, flits: f64) -> HwConfig {
    let mut cfg = common::windowed(common::preset("wormhole-mesh-dor.ron"), 1_000, 3_000, 1);
    cfg.topology = routemu::config::TopologyConfig::Mesh { k, n: 2, c: 1 };
    let SwitchingConfig::Wormhole {
        routing: ref mut r, ..
    } = cfg.switching
    else {
        unreachable!("a wormhole preset")
    };
    *r = routing;
    cfg.workload.pattern = pattern;
    cfg.workload.rate = flits / 12.0;
    cfg.experiment.deadlock_cycles = 2_000;
    cfg.experiment.drain_limit = 5_000;
    cfg
}

fn run(cfg: &HwConfig) -> Report {
    run_experiment(cfg, &mut |_, _| {}).unwrap()
}

#[test]
fn the_new_routings_never_deadlock_past_saturation() {
    for k in [4, 8] {
        for routing in NEW_ROUTINGS {
            for pattern in [PatternConfig::Uniform, PatternConfig::Transpose] {
                // Twice the 8×8 mesh's uniform bisection bound (0.5): past saturation
                // for every routing and pattern here.
                let r = run(&mesh(k, routing, pattern.clone(), 1.0));
                let what = format!("{k}x{k} {routing:?} {pattern:?}");
                common::assert_saturated_without_deadlock(&r, &what);
            }
        }
    }
}

#[test]
fn below_saturation_every_message_of_the_new_routings_arrives() {
    for routing in NEW_ROUTINGS {
        for pattern in [PatternConfig::Uniform, PatternConfig::Transpose] {
            let r = run(&mesh(4, routing, pattern.clone(), 0.1));
            let what = format!("{routing:?} {pattern:?}");
            assert!(r.deadlock.is_none(), "{what}");
            assert!(!r.saturated, "{what}: saturated at 0.1");
            assert!(r.messages.measured > 100, "{what}");
            assert_eq!(r.messages.in_flight, 0, "{what}: not all delivered");
            assert_eq!(r.messages.delivered, r.messages.generated, "{what}");
        }
    }
}

#[test]
fn odd_even_and_west_first_beat_xy_on_transpose() {
    // Past saturation with the sources kept backlogged: the accepted throughput is the
    // network's saturation throughput under transpose.
    let accepted = |routing| {
        let mut cfg = mesh(8, routing, PatternConfig::Transpose, 0.6);
        cfg.experiment.saturation_backlog = 1e9;
        cfg.experiment.drain_limit = 1;
        cfg.experiment.measure = Measure::Cycles(20_000);
        cfg.experiment.replications = 3;
        let r = run(&cfg);
        assert!(r.deadlock.is_none());
        (
            r.throughput.accepted,
            r.throughput.accepted_ci95.unwrap_or(0.0),
        )
    };
    // Measured (3 replications of 20 000 cycles): XY 0.206 ± 0.001, odd-even 0.252 ±
    // 0.004, west-first 0.263 ± 0.002 flits/node/cycle: the intervals must not touch.
    let (xy, xy_ci) = accepted(Routing::DimensionOrder);
    for routing in [Routing::OddEven, Routing::WestFirst] {
        let (a, ci) = accepted(routing);
        eprintln!("transpose 8x8: {routing:?} {a:.4} ± {ci:.4}, XY {xy:.4} ± {xy_ci:.4}");
        assert!(
            a - ci > xy + xy_ci,
            "{routing:?} accepts {a:.4} ± {ci:.4}, XY {xy:.4} ± {xy_ci:.4}"
        );
    }
}
