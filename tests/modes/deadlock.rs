//! The deadlock watchdog: a ring without dateline classes deadlocks, and the run stops
//! with the cycle of channels that wait on each other; the same ring with its dateline
//! classes runs to the end.

use crate::common;

use routemu::config::load::load_hw;
use routemu::engine::sim::{Simulation, Stop};
use routemu::experiments::experiment::run_experiment;
use routemu::switching::wormhole::WormholeNet;
use std::path::Path;

fn ring() -> routemu::config::HwConfig {
    load_hw(&Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/deadlock-ring.ron")).unwrap()
}

#[test]
fn a_ring_without_dateline_deadlocks_and_the_watchdog_names_the_cycle() {
    let mut sim = Simulation::<WormholeNet>::build(&ring(), 0).unwrap();
    match sim.run(&mut |_| {}) {
        Stop::Deadlock(text) => {
            assert!(text.contains("waiting cycle of"), "{text}");
            assert!(text.contains("waits for"), "{text}");
            // All four ring channels take part.
            for n in 0..4 {
                assert!(text.contains(&format!("node {n} input +X vc 0")), "{text}");
            }
        }
        other => panic!("expected a deadlock, got {other:?}"),
    }
    assert!(
        sim.t < 20_000,
        "the watchdog should fire long before the window ends"
    );
}

#[test]
fn the_same_ring_with_dateline_classes_does_not_deadlock() {
    let mut cfg = ring();
    cfg.switching = routemu::config::SwitchingConfig::Wormhole {
        routing: routemu::config::Routing::DimensionOrder,
        selection: Default::default(),
        unsafe_routing: false,
        torus_vcs: Default::default(),
        torus_tie: Default::default(),
        valiant_intermediate: Default::default(),
    };
    cfg.router.vcs = 2;
    cfg.workload.rate = 0.02;
    let r = run_experiment(&cfg, &mut |_, _| {}).unwrap();
    assert!(r.deadlock.is_none());
    assert!(r.messages.delivered > 1000);
}

#[test]
fn the_binary_exits_with_status_three_and_prints_the_cycle() {
    let out = common::routemu(&["run", "tests/data/deadlock-ring.ron"]);
    assert_eq!(out.status.code(), Some(3));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("DEADLOCK"), "{stdout}");
    assert!(stdout.contains("waiting cycle"), "{stdout}");
}

#[test]
fn a_deadlock_whose_source_queues_pass_the_saturation_threshold_is_still_a_deadlock() {
    // The 8×8 torus without dateline classes at a load whose backlog passes the default
    // saturation threshold before the watchdog's 20 000 idle cycles are up: it used to be
    // reported as saturated with exit 0 (hardening D07).
    let out = common::routemu(&[
        "run",
        "hw/wormhole-torus-dor.ron",
        "--rate",
        "0.05",
        "--set",
        "switching.unsafe_routing=true",
        "--replications",
        "1",
        "--json",
        "-",
    ]);
    assert_eq!(out.status.code(), Some(3));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["saturated"], false);
    assert!(v["deadlock"]["description"]
        .as_str()
        .unwrap()
        .contains("waiting cycle"));
}
