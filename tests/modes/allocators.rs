//! The allocators (`router.allocator`, `vc_allocator`, `sw_allocator`, `arbiter`): every
//! one runs tori and meshes past saturation without deadlock, keeps flits, credits and
//! VC ownership balanced and delivers every message; the default is routemu's allocator
//! unchanged; each is wired (it changes the run) and deterministic for a seed, whatever
//! the number of threads; settings an allocator does not read are refused. The matching
//! properties of each allocator on small request matrices are unit tests
//! (`router::alloc`).

use crate::common;

use routemu::config::HwConfig;
use routemu::engine::sim::Simulation;
use routemu::experiments::experiment::run_experiment;
use routemu::foundation::types::NodeId;
use routemu::switching::wormhole::{invariants, WormholeNet};
use std::collections::HashSet;

/// Every allocator and arbiter the configuration offers, as `--set` overrides.
const ALLOCATORS: [&[&str]; 10] = [
    &["router.allocator=PortLevel"],
    &["router.allocator=PortLevel", "router.arbiter=Matrix"],
    &["router.allocator=SeparableInputFirst"],
    &[
        "router.allocator=SeparableInputFirst",
        "router.arbiter=Matrix",
    ],
    &["router.allocator=SeparableOutputFirst"],
    &[
        "router.allocator=SeparableOutputFirst",
        "router.arbiter=Matrix",
    ],
    &["router.allocator=ISlip(iterations: 1)"],
    &["router.allocator=ISlip(iterations: 3)"],
    &["router.allocator=Wavefront"],
    &[
        "router.vc_allocator=Wavefront",
        "router.sw_allocator=ISlip(iterations: 2)",
    ],
];

/// Runs `cfg` for `cycles` at its load, checking the invariants as it goes, then stops
/// the workload and drains: every message created is delivered exactly once.
fn past_saturation_and_drained(name: &str, cfg: &HwConfig, cycles: u64) {
    let mut sim = Simulation::<WormholeNet>::build(cfg, 0).unwrap();
    sim.record_deliveries();
    let buffer = cfg.router.buffer_flits;
    while sim.t < cycles {
        sim.step();
        if sim.t.is_multiple_of(101) {
            invariants::check(&sim, buffer).unwrap_or_else(|e| panic!("{name} at {}: {e}", sim.t));
        }
    }
    assert!(
        sim.net.dma.backlog() > 0,
        "{name}: the load did not saturate"
    );
    sim.stop_workload();
    assert!(
        sim.run_until_empty(2_000_000),
        "{name}: did not drain (deadlock?)"
    );
    invariants::check(&sim, buffer).unwrap_or_else(|e| panic!("{name} after drain: {e}"));
    let mut seen = HashSet::new();
    for d in sim.stats.deliveries.as_ref().unwrap() {
        assert!(
            seen.insert(d.header.id),
            "{name}: {} delivered twice",
            d.header.id
        );
    }
    let created: u64 = (0..sim.net.nodes() as u32)
        .map(|i| sim.created_at(NodeId(i)))
        .sum();
    assert_eq!(seen.len() as u64, created, "{name}: messages lost");
}

#[test]
fn every_allocator_runs_4x4_tori_and_meshes_past_saturation_and_delivers_every_message() {
    // BookSim's router (shared terminal channels, speculation, TailSent), routemu's
    // adaptive torus (preferred and fallback VCs) and mesh (an engine per crossbar port).
    let nets: [(&str, &[&str]); 3] = [
        (
            "booksim-min-torus8.ron",
            &["topology.k=4", "workload.rate=0.09"],
        ),
        (
            "wormhole-torus-adaptive.ron",
            &["topology.k=4", "workload.rate=0.09"],
        ),
        (
            "wormhole-mesh-dor.ron",
            &["topology.k=4", "workload.rate=0.09"],
        ),
    ];
    for (preset, net) in nets {
        for alloc in ALLOCATORS {
            let sets: Vec<&str> = net.iter().chain(alloc.iter()).copied().collect();
            let cfg = common::preset_with(preset, &sets);
            past_saturation_and_drained(&format!("{preset} {alloc:?}"), &cfg, 4_000);
        }
    }
}

/// A short run of `preset` with `sets` on `threads` partitions: its statistics (no
/// timing, no configuration).
fn stats(preset: &str, sets: &[&str], threads: u32) -> serde_json::Value {
    let mut cfg = common::windowed(common::preset_with(preset, sets), 1_000, 3_000, 1);
    cfg.experiment.threads = threads;
    cfg.experiment.partition_min_nodes = Some(1);
    let report = run_experiment(&cfg, &mut |_, _| {}).unwrap();
    let v = serde_json::to_value(&report).unwrap();
    assert_eq!(v["partitioning"]["partitions"], threads, "{sets:?}");
    common::statistics(&report)
}

#[test]
fn the_default_allocator_is_routemus_port_level_one_with_round_robin_arbiters() {
    for preset in ["wormhole-torus-dor.ron", "wormhole-torus-adaptive.ron"] {
        let load = ["workload.rate=0.03"];
        let default = stats(preset, &load, 1);
        let named = stats(
            preset,
            &[
                load[0],
                "router.allocator=PortLevel",
                "router.vc_allocator=Some(PortLevel)",
                "router.sw_allocator=Some(PortLevel)",
                "router.arbiter=RoundRobin",
            ],
            1,
        );
        let diff = common::json_diff(&default, &named);
        assert!(diff.is_empty(), "{preset}: {diff:#?}");
    }
}

#[test]
fn every_allocator_is_wired_to_both_allocations() {
    // At 0.36 flits/node/cycle on the 8×8 torus allocation conflicts are frequent:
    // every other allocator, and each override alone, changes the run of routemu's own.
    let load = "workload.rate=0.03";
    let default = stats(
        "booksim-min-torus8.ron",
        &[load, "router.allocator=PortLevel"],
        1,
    );
    for alloc in ALLOCATORS.iter().skip(1).chain(
        [
            &["router.vc_allocator=Wavefront"][..],
            &["router.sw_allocator=Wavefront"][..],
        ]
        .iter(),
    ) {
        let sets: Vec<&str> = [load, "router.allocator=PortLevel"]
            .into_iter()
            .chain(alloc.iter().copied())
            .collect();
        let other = stats("booksim-min-torus8.ron", &sets, 1);
        assert!(
            !common::json_diff(&default, &other).is_empty(),
            "{alloc:?} gave the default's run"
        );
    }
}

#[test]
fn every_allocator_is_deterministic_for_a_seed_and_alike_on_any_number_of_threads() {
    for alloc in ALLOCATORS.iter().skip(1) {
        let sets: Vec<&str> = std::iter::once("workload.rate=0.03")
            .chain(alloc.iter().copied())
            .collect();
        let one = stats("booksim-min-torus8.ron", &sets, 1);
        assert!(
            common::json_diff(&one, &stats("booksim-min-torus8.ron", &sets, 1)).is_empty(),
            "{alloc:?}: two runs of one seed differ"
        );
        for threads in [2, 3] {
            let diff = common::json_diff(&one, &stats("booksim-min-torus8.ron", &sets, threads));
            assert!(diff.is_empty(), "{alloc:?} on {threads} threads: {diff:#?}");
        }
    }
}

#[test]
fn settings_an_allocator_does_not_read_are_refused() {
    let run = |sets: &[&str]| {
        let mut args = vec!["check", "hw/booksim-min-torus8.ron"];
        for s in sets {
            args.extend(["--set", s]);
        }
        common::routemu(&args)
    };
    for (sets, needle) in [
        (
            &["router.allocator=ISlip(iterations: 0)"][..],
            "iterations must be 1 to 16",
        ),
        (
            &["router.sw_allocator=ISlip(iterations: 17)"][..],
            "iterations must be 1 to 16",
        ),
        (
            &[
                "router.allocator=ISlip(iterations: 1)",
                "router.switch_iterations=2",
            ][..],
            "ISlip(iterations: N)",
        ),
        (
            &["router.allocator=Wavefront", "router.arbiter=Matrix"][..],
            "leave it at RoundRobin",
        ),
    ] {
        let out = run(sets);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{sets:?} accepted");
        assert!(err.contains(needle), "{sets:?}: {err}");
    }
    // The arbiter of a separable VC allocator beside an iSLIP switch allocator is read.
    let out = run(&[
        "router.sw_allocator=ISlip(iterations: 1)",
        "router.arbiter=Matrix",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // Other switching modes have no allocators to choose.
    let out = common::routemu(&[
        "check",
        "hw/circuit-hold.ron",
        "--set",
        "router.allocator=Wavefront",
    ]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("router.allocator"));
}
