//! BookSim's traffic patterns and injection processes end to end (issue 32, items 1-2):
//! a pattern's fixed points are silent sources whose share is not offered, tornado's
//! channel-load bound on a ring caps what a saturated run accepts, and the on/off process
//! and mixed lengths offer `rate` × mean length. Small networks, short windows.

use crate::common;
use routemu::config::HwConfig;
use routemu::experiments::experiment::run_experiment;
use routemu::stats::report::Report;

/// Paper 004's dimension-order torus with `sets`, one replication, short windows.
fn torus(sets: &[&str], warmup: u64, window: u64) -> HwConfig {
    common::windowed(
        common::preset_with("wormhole-torus-dor.ron", sets),
        warmup,
        window,
        1,
    )
}

fn run(cfg: &HwConfig) -> Report {
    run_experiment(cfg, &mut |_, _| {}).unwrap()
}

#[test]
fn tornado_on_an_8_ary_ring_is_bounded_by_its_channel_load() {
    // Every node sends ⌈8/2⌉ − 1 = 3 hops clockwise: each clockwise channel carries 3
    // flows, so no node can sustain more than 1/3 flit per cycle.
    let ring = ["topology.k=8", "topology.n=1", "workload.pattern=Tornado"];
    let mut sets = ring.to_vec();
    sets.push("workload.rate=0.04"); // 0.48 flits/node/cycle, past the bound
    sets.push("experiment.saturation_backlog=1000000");
    let r = run(&torus(&sets, 2000, 12_000));
    let t = &r.throughput;
    let bound = t.pattern_bound.expect("wormhole DOR has a bound");
    assert!((bound - 1.0 / 3.0).abs() < 1e-9, "bound {bound}");
    assert!(t.offered > bound, "offered {}", t.offered);
    // What a saturated ring accepts stays under its bound, and wormhole's head-of-line
    // blocking leaves it within sight of it (0.26 measured: docs/configuration.md).
    assert!(t.accepted <= bound * 1.01, "accepted {}", t.accepted);
    assert!(t.accepted > 0.6 * bound, "accepted {}", t.accepted);
    // Well below the bound the ring carries what is offered.
    let mut sets = ring.to_vec();
    sets.push("workload.rate=0.01"); // 0.12 flits/node/cycle
    let t = run(&torus(&sets, 2000, 12_000)).throughput;
    assert!((t.accepted - t.offered).abs() < 0.05 * t.offered, "{t:?}");
}

#[test]
fn bit_reverse_palindromes_are_silent_and_offer_nothing() {
    // 4×4 torus, 4-bit addresses: 0000, 0110, 1001 and 1111 are their own reversal; the
    // 12 other nodes send 0.1 flits per cycle each, 0.075 per node.
    let r = run(&torus(
        &[
            "topology.k=4",
            "workload.pattern=BitReverse",
            "workload.rate=0.00833333",
        ],
        1000,
        30_000,
    ));
    let t = &r.throughput;
    assert!((t.offered - 0.075).abs() < 0.005, "offered {}", t.offered);
    assert!(t.pattern_bound.is_some());
}

#[test]
fn on_off_sources_with_mixed_lengths_offer_rate_times_the_mean_length() {
    // Bimodal 1- and 21-flit messages, 3:1: mean 6 flits; bursts of 50 cycles in 200.
    let r = run(&torus(
        &[
            "topology.k=4",
            "workload.rate=0.01",
            "workload.length=Mixed(lengths: [1, 21], weights: [3, 1])",
            "workload.process=OnOff(burst_mean: 50, idle_mean: 150)",
        ],
        1000,
        60_000,
    ));
    let t = &r.throughput;
    assert!((t.offered - 0.06).abs() < 0.006, "offered {}", t.offered);
    assert!((t.accepted - t.offered).abs() < 0.05 * t.offered, "{t:?}");
}

#[test]
fn the_saturation_search_stays_within_what_on_off_sources_can_create() {
    // One on cycle in 31: at most 12/31 flits per node per cycle; the search caps its
    // loads there instead of failing on a rate the process refuses.
    let cfg = torus(
        &[
            "topology.k=4",
            "workload.process=OnOff(burst_mean: 1, idle_mean: 30)",
        ],
        1000,
        11264,
    );
    let opts = routemu::experiments::saturation::SaturationOptions {
        replications: 1,
        ..Default::default()
    };
    let r = routemu::experiments::saturation::search(&cfg, &opts, &mut |_| {})
        .expect("the search runs");
    let ceiling = 12.0 / 31.0;
    let rep = &r.replications[0];
    assert!(rep.sustained.0 <= ceiling + 1e-9, "{}", rep.sustained);
    assert!(r.saturation.throughput.0 <= ceiling * 1.05);
}

#[test]
fn fixed_points_sent_to_themselves_are_offered_and_delivered_with_no_hops() {
    // 4×4 torus, transpose: the 4 diagonal sources are silent, or (BookSim's way) send
    // to themselves through their own router, 0 hops, counted in the offered load.
    let base = [
        "topology.k=4",
        "workload.pattern=Transpose",
        "workload.rate=0.005",
    ];
    let silent = run(&torus(&base, 1000, 20_000));
    let mut sets = base.to_vec();
    sets.push("workload.fixed_points=ToSelf");
    let to_self = run(&torus(&sets, 1000, 20_000));
    let (a, b) = (&silent.throughput, &to_self.throughput);
    // 12 of 16 sources against all 16: a third more offered, all of it carried.
    let ratio = b.offered / a.offered;
    assert!(
        (ratio - 16.0 / 12.0).abs() < 0.08,
        "offered {} vs {}",
        b.offered,
        a.offered
    );
    assert!((b.accepted - b.offered).abs() < 0.05 * b.offered, "{b:?}");
    // A quarter of the messages take no hop: the mean hop count falls by about a quarter.
    let hops = |r: &Report| r.wormhole().unwrap().hops_mean.unwrap();
    let (ha, hb) = (hops(&silent), hops(&to_self));
    assert!((hb / ha - 0.75).abs() < 0.06, "hops {hb} vs {ha}");
}
