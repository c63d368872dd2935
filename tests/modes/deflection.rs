//! Deflection wormhole with virtual channels (paper 003) on the Manhattan Street network:
//! a lone worm's latency is the closed form over the shortest distance; a transit worm
//! preempts a worm originating on the link it wants, or is deflected when the link is
//! full of transit worms; a worm can preempt itself; every worm is delivered exactly
//! once with all its flits, whatever preemptions, drops and resumptions cut it into; the
//! lanes' busy time equals flits × links of every segment (Little); the transit guarantee
//! holds far past saturation; bad machines are refused.

use crate::common;

use routemu::config::{HwConfig, Measure};
use routemu::engine::sim::Simulation;
use routemu::experiments::experiment::run_experiment;
use routemu::foundation::types::{NodeId, PortId};
use routemu::switching::deflection::DeflectionNet;

use routemu::topology::Topology;
use std::collections::HashMap;

/// The 6×6 preset changed by `sets`, with a constant retry delay and no synthetic traffic
/// in the scripted tests' hands.
fn machine(sets: &[&str]) -> HwConfig {
    let mut all = vec![
        "switching.retry_dist=Constant",
        "workload.length=Constant(flits: 100)",
        "experiment.warmup=0",
        "experiment.measure=Cycles(100000000)",
        "experiment.replications=1",
    ];
    all.extend_from_slice(sets);
    common::preset_with("deflection-ms.ron", &all)
}

fn until(sim: &mut Simulation<DeflectionNet>, t: u64) {
    while sim.t < t {
        sim.step();
    }
}

fn topology(cfg: &HwConfig) -> Topology {
    Topology::from_config(&cfg.topology).unwrap()
}

/// The only minimal output of `cur` towards `dst` (None at a don't-care node).
fn only_minimal(t: &Topology, cur: u32, dst: u32) -> Option<u8> {
    let s = t.minimal_ports(NodeId(cur), NodeId(dst));
    match (s[0], s[1]) {
        (true, false) => Some(0),
        (false, true) => Some(1),
        _ => None,
    }
}

fn next(t: &Topology, u: u32, p: u8) -> u32 {
    t.neighbor(NodeId(u), PortId(p)).unwrap().0
}

/// (delivery cycle, hops) of every delivered message, by source and sequence number.
fn deliveries(sim: &Simulation<DeflectionNet>) -> HashMap<(u32, u64), (u64, u64, u16)> {
    let mut m = HashMap::new();
    for d in sim.stats.deliveries.as_ref().unwrap() {
        let h = &d.header;
        let old = m.insert((h.id.src().0, h.id.seq()), (h.created, d.absorbed, h.hops));
        assert!(old.is_none(), "message {} delivered twice", h.id);
    }
    m
}

#[test]
fn a_lone_worm_takes_a_shortest_path_and_arrives_at_the_closed_form_time() {
    for k in [4u32, 6] {
        for (r, l) in [(1u64, 1u64), (2, 1), (1, 3), (2, 3)] {
            let cfg = machine(&[
                &format!("topology.k={k}"),
                &format!("router.controller.route={r}"),
                &format!("links.latency={l}"),
            ]);
            let t = topology(&cfg);
            let mut sim = common::scripted::<DeflectionNet>(&cfg);
            for a in 0..k * k {
                for b in 0..k * k {
                    if a == b {
                        continue;
                    }
                    let len = 1 + (a + 3 * b) % 40;
                    sim.inject(NodeId(a), NodeId(b), len);
                    assert!(sim.run_until_empty(10_000));
                }
            }
            let ds = sim.stats.deliveries.as_ref().unwrap();
            assert_eq!(ds.len() as u32, k * k * (k * k - 1));
            for d in ds {
                let h = &d.header;
                let hops = t.distance(h.id.src(), h.dst) as u64;
                assert_eq!(h.hops as u64, hops, "{k}×{k} R={r} ℓ={l}: {}", h.id);
                assert_eq!(
                    d.absorbed - h.created,
                    routemu::switching::zero_load::deflection(&cfg, hops, h.len as u64),
                    "{k}×{k} R={r} ℓ={l}: {} over {hops} hops",
                    h.id
                );
            }
        }
    }
}

#[test]
fn a_transit_worm_preempts_the_worm_originating_on_its_link_which_resumes_where_it_was_cut() {
    // One lane per link. A (0 → 1, 200 flits) leaves node 0 on its row link in cycle 0;
    // B (5 → 2, 50 flits) enters node 0 in cycle 11 wanting that link and preempts A.
    let cfg = machine(&["router.vcs=1"]);
    let t = topology(&cfg);
    assert_eq!(next(&t, 5, 0), 0);
    assert_eq!(next(&t, 0, 0), 1);
    assert_eq!(only_minimal(&t, 0, 1), Some(0));
    assert_eq!(only_minimal(&t, 5, 2), Some(0));
    assert_eq!(
        only_minimal(&t, 0, 2),
        Some(0),
        "node 0 is a preference node for B"
    );
    let mut sim = common::scripted::<DeflectionNet>(&cfg);
    sim.inject(NodeId(0), NodeId(1), 200);
    until(&mut sim, 10);
    sim.inject(NodeId(5), NodeId(2), 50);
    assert!(sim.run_until_empty(10_000));
    let d = deliveries(&sim);
    // B: 3 hops, no contention after the preemption: the closed form.
    assert_eq!(d[&(5, 0)], (10, 10 + 3 + 50, 3));
    // A: 11 flits sent in cycles 0..=10 reach node 1 by cycle 12; the other 189 leave
    // after the retry delay (100 cycles, constant here) in cycle 111 and arrive 1 hop
    // later: delivered in cycle 111 + 189 + 1, over two 1-hop segments.
    assert_eq!(d[&(0, 0)], (0, 111 + 189 + 1, 2));
    let s = &sim.net.stats;
    assert_eq!((s.preempted, s.self_preempted, s.accepted), (1, 0, 3));
    assert_eq!(sim.net.lane_identity().0, sim.net.lane_identity().1);
}

/// The deflection scene's start on a 2-lane machine: X1 and X2 (5 → 1, 1000 flits each,
/// one cycle apart) hold both lanes of node 0's row link as transit worms by cycle 10.
fn row_link_of_node_0_held(cfg: &HwConfig) -> Simulation<DeflectionNet> {
    let mut sim = common::scripted::<DeflectionNet>(cfg);
    sim.inject(NodeId(5), NodeId(1), 1000);
    until(&mut sim, 1);
    sim.inject(NodeId(5), NodeId(1), 1000);
    until(&mut sim, 10);
    sim
}

#[test]
fn a_transit_worm_facing_a_link_full_of_transit_worms_is_deflected_to_the_other_link() {
    // Two lanes. X1 and X2 (5 → 1, long) hold both lanes of node 0's row link as transit
    // worms; C (30 → dst) enters node 0 wanting that link and leaves on the column link.
    let cfg = machine(&["router.vcs=2"]);
    let t = topology(&cfg);
    assert_eq!(next(&t, 30, 1), 0);
    assert_eq!(only_minimal(&t, 5, 1), Some(0));
    let d = |a: u32, b: u32| t.distance(NodeId(a), NodeId(b));
    let avoided = [(5u32, 0u8), (0, 0)];
    // A destination C prefers to reach over node 0's row link, from a preference node
    // 30 whose only shortest move is to node 0, and whose every shortest path from the
    // deflection (node 6) avoids the blocked links.
    let dst = (0..36)
        .find(|&b| {
            let on_path = |u: u32, p: u8| d(6, u) + 1 + d(next(&t, u, p), b) == d(6, b);
            b != 0
                && b != 6
                && only_minimal(&t, 30, b) == Some(1)
                && only_minimal(&t, 0, b) == Some(0)
                && avoided.iter().all(|&(u, p)| !on_path(u, p))
        })
        .expect("a destination that shows the deflection");
    assert_eq!(next(&t, 0, 1), 6);
    let mut sim = row_link_of_node_0_held(&cfg);
    sim.inject(NodeId(30), NodeId(dst), 20);
    assert!(sim.run_until_empty(10_000));
    let dl = deliveries(&sim);
    let hops = 2 + d(6, dst) as u64;
    assert!(
        hops > d(30, dst) as u64,
        "the deflection lengthens the path"
    );
    let (created, done, h) = dl[&(30, 0)];
    assert_eq!(h as u64, hops);
    assert_eq!(
        done - created,
        routemu::switching::zero_load::deflection(&cfg, hops, 20)
    );
    let s = &sim.net.stats;
    assert_eq!((s.pref_failed, s.preempted), (1, 0));
}

#[test]
fn a_worm_deflected_back_through_its_own_source_preempts_itself_and_is_still_delivered() {
    // 4×4, one lane. The loop 0 → 1 → 13 → 12 → 0 alternates row and column links. S
    // (0 → 2) is deflected at node 1 (its row link held by B1), and at nodes 13 and 12
    // the links leaving the loop are held by B2 and B3, so S's header comes back to node
    // 0 in cycle 14 wanting the row link S itself still holds as an originating worm.
    let cfg = machine(&["topology.k=4", "router.vcs=1"]);
    let t = topology(&cfg);
    assert_eq!(
        [
            next(&t, 0, 0),
            next(&t, 1, 1),
            next(&t, 13, 0),
            next(&t, 12, 1)
        ],
        [1, 13, 12, 0]
    );
    assert_eq!(only_minimal(&t, 0, 2), Some(0));
    assert_eq!(only_minimal(&t, 1, 2), Some(0));
    for (src, via, port, dst) in [(5u32, 1u32, 0u8, 2u32), (14, 13, 1, 9), (8, 12, 0, 15)] {
        let to_via = (0..2u8).find(|&p| next(&t, src, p) == via).unwrap();
        assert_eq!(only_minimal(&t, src, dst), Some(to_via));
        assert_eq!(only_minimal(&t, via, dst), Some(port));
    }
    let mut sim = common::scripted::<DeflectionNet>(&cfg);
    for (src, dst) in [(5, 2), (14, 9), (8, 15)] {
        sim.inject(NodeId(src), NodeId(dst), 1000);
    }
    until(&mut sim, 10);
    sim.inject(NodeId(0), NodeId(2), 100);
    assert!(sim.run_until_empty(100_000));
    let s = &sim.net.stats;
    assert_eq!(s.self_preempted, 1);
    assert!(s.preempted >= 1);
    let dl = deliveries(&sim);
    assert_eq!(dl.len(), 4);
    let (_, _, hops) = dl[&(0, 0)];
    // The 4-flit piece cut by the self-preemption circles the loop until B1 leaves node
    // 1's row link (about 1000 cycles): hundreds of hops.
    assert!(hops > 500, "{hops}");
    assert_eq!(sim.net.lane_identity().0, sim.net.lane_identity().1);
}

/// A run of the preset changed by `sets`, drained, with every delivery checked: each
/// message delivered once (or refused at a full source), its hops at least the shortest
/// distance, the lanes' busy time equal to flits × links of every segment.
fn conserved(sets: &[&str], rate: f64) -> routemu::switching::deflection::measure::DeflectionStats {
    let mut cfg = machine(sets);
    cfg.workload.rate = rate;
    cfg.workload.length = routemu::config::LengthConfig::Exponential { mean: 60.0 };
    cfg.experiment.warmup = 2_000;
    cfg.experiment.measure = Measure::Cycles(20_000);
    cfg.experiment.saturation_backlog = 1e9;
    let t = topology(&cfg);
    let mut sim = Simulation::<DeflectionNet>::build(&cfg, 0).unwrap();
    sim.record_deliveries();
    while sim.t < 22_000 {
        sim.step();
    }
    sim.stop_workload();
    assert!(
        sim.run_until_empty(5_000_000),
        "{sets:?}: the network empties"
    );
    let ds = sim.stats.deliveries.as_ref().unwrap();
    let mut seen = std::collections::HashSet::new();
    for d in ds {
        let h = &d.header;
        assert!(seen.insert(h.id), "{sets:?}: {} delivered twice", h.id);
        assert!(h.hops as u32 >= t.distance(h.id.src(), h.dst));
        assert!(
            d.absorbed - h.created
                >= routemu::switching::zero_load::deflection(&cfg, 1, h.len as u64)
        );
    }
    use routemu::engine::network::Network;
    assert_eq!(
        ds.len() as u64 + sim.net.lost(),
        sim.generated,
        "{sets:?}: every message delivered or refused"
    );
    let (lanes, flit_hops) = sim.net.lane_identity();
    assert_eq!(lanes, flit_hops, "{sets:?}: Little's law on the lanes");
    sim.net.stats.clone()
}

#[test]
fn every_worm_is_delivered_once_whatever_cuts_it_into_pieces() {
    // Near and past the knee, with preemptions, drops and both resumption rules.
    let s = conserved(&["router.vcs=2"], 0.004);
    assert!(s.preempted > 100 && s.self_preempted > 0, "{s:?}");
    let s = conserved(&["router.vcs=1", "switching.hop_limit=Some(2.0)"], 0.004);
    assert!(s.dropped > 100 && s.preempted > 100, "{s:?}");
    let s = conserved(
        &[
            "router.vcs=2",
            "switching.hop_limit=Some(1.5)",
            "switching.abort=Instant",
            "switching.resume=OnPreemptorTail",
            "switching.victim=Youngest",
        ],
        0.005,
    );
    assert!(s.dropped > 100 && s.preempted > 100, "{s:?}");
    // The idealised drop: lanes purged at once, stale end marks ignored.
    let s = conserved(
        &[
            "router.vcs=2",
            "switching.hop_limit=Some(1.5)",
            "switching.abort=Free",
            "switching.resume=OnPreemptorTail",
        ],
        0.005,
    );
    assert!(s.dropped > 100 && s.preempted > 100, "{s:?}");
    let s = conserved(
        &[
            "router.vcs=3",
            "router.controller.route=3",
            "links.latency=2",
            "switching.victim=Oldest",
        ],
        0.012,
    );
    assert!(s.preempted > 100, "{s:?}");
    // A full memory refuses messages; they are counted, never half-sent.
    let s = conserved(&["router.vcs=1", "switching.max_pending=Some(3)"], 0.01);
    assert!(s.rejected > 100, "{s:?}");
}

#[test]
fn the_transit_guarantee_holds_far_past_saturation() {
    // Far more traffic than the lanes can carry: every transit header must still find a
    // lane (the code panics otherwise), on every lane count, with and without the limit.
    for m in [1, 2, 3, 5] {
        for limit in ["None", "Some(2.0)"] {
            let mut cfg = machine(&[
                &format!("router.vcs={m}"),
                &format!("switching.hop_limit={limit}"),
                "switching.max_pending=Some(50)",
                "switching.retry_dist=Exponential",
                "switching.retry=20",
            ]);
            cfg.workload.rate = 0.05;
            cfg.experiment.warmup = 1_000;
            cfg.experiment.measure = Measure::Cycles(10_000);
            cfg.experiment.drain_limit = 0;
            cfg.experiment.saturation_backlog = 1e9;
            let r = run_experiment(&cfg, &mut |_, _| {}).unwrap();
            let d = r.deflection().unwrap();
            assert!(
                d.lane_utilization > 0.8,
                "m = {m}, {limit}: {}",
                d.lane_utilization
            );
            assert!(d.p_preempt.unwrap() > 0.5, "m = {m}: {:?}", d.p_preempt);
            assert!(d.rejected > 0);
            // The capacity is in the unit of `accepted` (flits/node/cycle): each lane is a
            // channel of its own, so m lanes carry m times one lane's bound, and a
            // saturated network accepts no more than that.
            let t = &r.throughput;
            let one_lane = 2.0 / r.topology.mean_distance;
            assert!(
                (t.capacity - m as f64 * one_lane).abs() < 1e-9,
                "m = {m}: capacity {} against {m} × {one_lane}",
                t.capacity
            );
            assert!(
                t.accepted <= t.capacity,
                "m = {m}, {limit}: accepted {} > capacity {}",
                t.accepted,
                t.capacity
            );
        }
    }
}

#[test]
fn idle_skipping_changes_nothing() {
    let mut cfg = machine(&[
        "switching.hop_limit=Some(2.0)",
        "switching.retry_dist=Exponential",
    ]);
    cfg.workload.rate = 0.003;
    cfg.workload.length = routemu::config::LengthConfig::Exponential { mean: 100.0 };
    cfg = common::windowed(cfg, 5_000, 30_000, 2);
    let report = |cfg: &HwConfig| {
        let r = run_experiment(cfg, &mut |_, _| {}).unwrap();
        let mut v = serde_json::to_value(&r).unwrap();
        let o = v.as_object_mut().unwrap();
        o.remove("wall_seconds");
        o.remove("node_cycles_per_second");
        o.remove("config");
        v
    };
    let a = report(&cfg);
    cfg.experiment.idle_skip = false;
    assert_eq!(a, report(&cfg));
    assert!(a["deflection"]["hop_limit_drops"].as_u64().unwrap() > 0);
}

#[test]
fn machines_the_mode_cannot_run_are_refused_with_the_reason() {
    let bad = |sets: &[&str], want: &str| {
        let cfg = common::preset_with("deflection-ms.ron", sets);
        let e = routemu::engine::machine::validate(&cfg)
            .err()
            .unwrap_or_else(|| panic!("{sets:?} accepted"))
            .to_string();
        assert!(e.contains(want), "{sets:?}: {e}");
    };
    bad(&["topology.k=5"], "even");
    bad(&["topology.k=2"], "k = 2");
    bad(&["router.vcs=0"], "router.vcs = 0");
    bad(&["router.vcs=65"], "router.vcs = 65");
    bad(&["switching.hop_limit=Some(0.5)"], "h ≥ 1");
    bad(&["switching.hop_limit=2000"], "at most 1000");
    bad(&["switching.retry=0"], "switching.retry = 0");
    bad(&["switching.max_pending=Some(0)"], "max_pending");
    bad(&["links.width=2"], "lane");
    bad(&["topology=Torus(k: 4, n: 2)"], "Manhattan Street");
    bad(&["topology=Hypercube(dim: 4)"], "Manhattan Street");
    let out = common::routemu(&["run", "hw/deflection-ms.ron", "--set", "router.vcs=0"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("router.vcs = 0"));
}

/// The preset at λ (per time unit) with worms of `len` flits (the time unit), measured
/// over `units` time units.
fn at(m: u32, lambda: f64, len: u32, units: u64, reps: u32) -> HwConfig {
    let mut cfg = machine(&[
        &format!("router.vcs={m}"),
        &format!("switching.retry={len}"),
        "switching.retry_dist=Exponential",
    ]);
    cfg.workload.length = routemu::config::LengthConfig::Exponential { mean: len as f64 };
    cfg.workload.rate = lambda / len as f64;
    cfg = common::windowed(cfg, 200 * len as u64, units * len as u64, reps);
    cfg.experiment.jobs = 2;
    cfg
}

#[test]
fn with_worms_a_few_hop_delays_long_the_emulation_is_the_models_system() {
    // Spec 3.1 Q11's tolerances, where the model's independence between hops holds
    // (docs/validation.md: the agreement degrades as worms grow longer than the hops a
    // deflected header takes to come back).
    let ms = routemu::topology::manhattan::ManhattanStreet::new(6);
    for (m, lambda) in [(1u32, 0.07), (2, 0.2)] {
        let r = run_experiment(&at(m, lambda, 5, 8000, 3), &mut |_, _| {}).unwrap();
        let d = r.deflection().unwrap();
        let p = routemu::model::deflection_ms::predict(
            &routemu::model::deflection_ms::DeflectionParams::new(6, m, lambda),
        )
        .unwrap();
        let (eta, pd, b) = (d.eta.unwrap(), d.p_deflect.unwrap(), d.p_block.unwrap());
        assert!(
            (p.eta - eta).abs() / eta < 0.05,
            "m = {m}: η {eta} vs model {}",
            p.eta
        );
        assert!(
            (p.p_deflect - pd).abs() < 0.01 || (p.p_deflect - pd).abs() / pd < 0.2,
            "m = {m}: p {pd} vs model {}",
            p.p_deflect
        );
        assert!(
            (p.p_block - b).abs() / b < 0.15,
            "m = {m}: B {b} vs model {}",
            p.p_block
        );
        // Eqs. (1)–(3) fed with the measured p give the measured path length.
        let dm = d.mean_path.unwrap();
        let dr = routemu::model::deflection_ms::mean_path(&ms, pd);
        assert!(
            (dr - dm).abs() / dm < 0.02,
            "m = {m}: D {dm} vs recursion {dr}"
        );
    }
}

#[test]
fn long_worms_deflect_in_runs_that_the_models_independent_hops_do_not_see() {
    // The same load with worms 5 and 100 hop delays long: the longer ones repeat their
    // deflections at the same node far more often and take longer paths.
    let short = run_experiment(&at(2, 0.2, 5, 4000, 1), &mut |_, _| {}).unwrap();
    let long = run_experiment(&at(2, 0.2, 100, 4000, 1), &mut |_, _| {}).unwrap();
    let (s, l) = (short.deflection().unwrap(), long.deflection().unwrap());
    assert!(
        l.repeat_deflections.unwrap() > 2.0 * s.repeat_deflections.unwrap(),
        "{:?} vs {:?}",
        l.repeat_deflections,
        s.repeat_deflections
    );
    assert!(l.eta.unwrap() > s.eta.unwrap() + 0.02);
    // Blocking of new worms follows the links' time-average occupancy either way.
    assert!((l.p_block.unwrap() - s.p_block.unwrap()).abs() < 0.02);
}

#[test]
fn the_json_carries_the_deflection_block_and_predict_the_models_quantities() {
    let out = common::routemu_ok(&[
        "run",
        "hw/deflection-ms.ron",
        "--replications",
        "1",
        "--cycles",
        "100000",
        "--json",
        "-",
    ]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let d = &v["deflection"];
    for k in [
        "eta",
        "p_deflect",
        "p_preempt",
        "p_block",
        "throughput_per_channel",
        "bound",
    ] {
        assert!(d[k].is_number(), "deflection.{k}: {d}");
    }
    assert!((d["bound"].as_f64().unwrap() - 2.0 * 35.0 / 130.0).abs() < 1e-12);
    let out = common::routemu(&["predict", "hw/deflection-ms.ron", "--json", "-"]);
    assert!(out.status.success());
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["saturated"], false);
    for k in ["eta", "p_deflect", "p_preempt", "p_block"] {
        assert!(v["prediction"][k].is_number(), "prediction.{k}: {v}");
    }
    assert!((v["prediction"]["eta"].as_f64().unwrap() - 1.0500).abs() < 1e-4);
    // λ = 0.5 per time unit with m = 2 is past the model's stability limit.
    let (why, _) = common::predict_saturated("hw/deflection-ms.ron", "0.005");
    assert!(why.contains("E → 1"), "{why}");
    // With the hop limit there is no model: refused with the reason.
    let out = common::routemu(&["predict", "hw/deflection-ms-hop-limit.ron"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("hop limit"));
}

#[test]
fn a_collapsed_replication_is_counted_shown_apart_and_kept_out_of_the_means() {
    // m = 1 at λ = 0.10 (below the model's stability limit, 0.145): at seed 1 one
    // replication of five livelocks while the others carry what they are offered.
    let cfg = common::preset_with(
        "deflection-ms.ron",
        &[
            "router.vcs=1",
            "workload.rate=0.001",
            "experiment.replications=5",
        ],
    );
    let r = run_experiment(&cfg, &mut |_, _| {}).unwrap();
    let d = r.deflection().unwrap();
    let rows = &d.per_replication;
    assert_eq!(rows.len(), 5);
    let collapsed: Vec<_> = rows.iter().filter(|x| x.collapsed).collect();
    assert_eq!(d.collapsed as usize, collapsed.len());
    assert!(
        (1..5).contains(&collapsed.len()),
        "this set-up mixes collapsed and stable replications: {rows:?}"
    );
    for x in rows {
        // A stable replication completes what it is offered; this set-up's collapse
        // is caught by the engine's backlog guard.
        if !x.collapsed {
            assert!(
                x.throughput_per_channel > 0.95 * x.offered_per_channel,
                "{x:?}"
            );
            assert!(!x.stopped_saturated, "{x:?}");
        }
    }
    // The block's figures are the stable replications' alone.
    let kept: Vec<_> = rows.iter().filter(|x| !x.collapsed).collect();
    let mean = |f: &dyn Fn(&&routemu::switching::report::DeflectionRep) -> f64| {
        kept.iter().map(f).sum::<f64>() / kept.len() as f64
    };
    let eta = mean(&|x| x.eta.unwrap());
    assert!((d.eta.unwrap() - eta).abs() < 1e-12, "{:?} vs {eta}", d.eta);
    let thr = mean(&|x| x.throughput_per_channel);
    assert!((d.throughput_per_channel - thr).abs() < 1e-12);
    // The collapsed replication's lanes are busier for less throughput.
    let worst = collapsed[0];
    assert!(
        worst.lane_utilization > kept[0].lane_utilization,
        "{worst:?}"
    );
    let text = r.summary();
    let line = format!("COLLAPSED: {} of 5", collapsed.len());
    assert!(text.contains(&line), "{text}");
}

/// The deflection scene of
/// `a_transit_worm_facing_a_link_full_of_transit_worms_is_deflected_to_the_other_link`
/// with a hop limit of one (any deflection is
/// dropped) and `abort`: X1, X2 (5 → 1, 1000 flits) hold both lanes of node 0's row link;
/// C (30 → dst, 200 flits) is deflected at node 0, and its header dropped a few hops later,
/// again at every retry until X1 and X2 are gone. Returns, for C's first drop, the lanes
/// held in the cycle after the drop cycle and in the cycle after that, and the finished
/// simulation.
fn dropped_worm(abort: &str) -> (usize, usize, Simulation<DeflectionNet>) {
    let cfg = machine(&[
        "router.vcs=2",
        "switching.hop_limit=Some(1.0)",
        &format!("switching.abort={abort}"),
    ]);
    let t = topology(&cfg);
    let d = |a: u32, b: u32| t.distance(NodeId(a), NodeId(b));
    // A destination C must reach over node 0's row link, from node 30 whose only
    // shortest move is to node 0, and not through node 5 or 1 (X's path).
    let dst = (0..36)
        .find(|&b| {
            ![0, 1, 5, 6].contains(&b)
                && only_minimal(&t, 30, b) == Some(1)
                && only_minimal(&t, 0, b) == Some(0)
                && d(30, b) >= 3
        })
        .expect("a destination that shows the drop");
    let mut sim = row_link_of_node_0_held(&cfg);
    sim.inject(NodeId(30), NodeId(dst), 200);
    while sim.net.stats.dropped == 0 {
        assert!(sim.t < 1000, "C is dropped");
        sim.step();
    }
    // The drop was decided in cycle sim.t − 1.
    let at_drop = sim.net.lanes_held();
    sim.step();
    let after = sim.net.lanes_held();
    assert!(sim.run_until_empty(100_000));
    (at_drop, after, sim)
}

#[test]
fn under_the_free_abort_a_dropped_worm_leaves_every_lane_in_the_cycle_after_its_drop() {
    // X1 and X2 hold two lanes each (5 → 0 → 1) for 1000 cycles; everything else held
    // at the drop is C's.
    let (at_drop, after, sim) = dropped_worm("Free");
    assert!(
        at_drop > 4,
        "C holds lanes when its header is dropped: {at_drop}"
    );
    assert_eq!(
        after, 4,
        "only X1's and X2's lanes are held once C is purged"
    );
    let (signal_drop, signal_after, signal) = dropped_worm("Signal");
    assert_eq!(signal_drop, at_drop, "the same drop, in the same cycle");
    assert!(
        signal_after > 4,
        "under Signal C's lanes wait for its end: {signal_after}"
    );
    // C is still delivered once, with all its flits, after as many drops as it takes;
    // the lanes' identity holds (a purged segment counts the lane-cycles it held).
    for s in [&sim, &signal] {
        let dl = deliveries(s);
        assert_eq!(dl.len(), 3);
        assert_eq!(s.net.lane_identity().0, s.net.lane_identity().1);
    }
    let (free, sig) = (&sim.net.stats, &signal.net.stats);
    assert!(free.dropped >= 1 && sig.dropped >= 1);
    assert!(
        (free.dropped_lane_cycles as f64 / free.dropped as f64)
            < (sig.dropped_lane_cycles as f64 / sig.dropped as f64),
        "a free drop wastes less lane time per drop: {} / {} against {} / {}",
        free.dropped_lane_cycles,
        free.dropped,
        sig.dropped_lane_cycles,
        sig.dropped
    );
}

#[test]
fn the_free_abort_is_accepted_by_check_and_run_and_refused_on_a_split_network() {
    let free = ["--set", "switching.abort=Free"];
    common::routemu_ok(&[&["check", "hw/deflection-ms-hop-limit.ron"][..], &free[..]].concat());
    let j = common::routemu_json(
        &[
            &["run", "hw/deflection-ms-hop-limit.ron", "--json", "-"][..],
            &free[..],
            &[
                "--set",
                "experiment.measure=Cycles(3000)",
                "--set",
                "experiment.warmup=500",
                "--set",
                "experiment.replications=1",
            ][..],
        ]
        .concat(),
    );
    assert!(
        j["deflection"]["hop_limit_drops"].as_u64().unwrap() > 0,
        "{j}"
    );
    let out = common::routemu(
        &[
            &["run", "hw/deflection-ms-hop-limit.ron"][..],
            &free[..],
            &[
                "--set",
                "experiment.threads=2",
                "--set",
                "experiment.partition_min_nodes=Some(4)",
            ][..],
        ]
        .concat(),
    );
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("one partition"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn a_stable_replication_past_the_knee_falls_short_of_its_load_without_being_collapsed() {
    // m = 2 at λ/m = 1, far past the knee (about 0.28): every replication completes a
    // fraction of what it is offered, but its lanes carry worms that arrive.
    let cfg = at(2, 2.0, 100, 30, 2);
    let r = run_experiment(&cfg, &mut |_, _| {}).unwrap();
    let d = r.deflection().unwrap();
    for x in &d.per_replication {
        assert!(
            x.throughput_per_channel < 0.5 * x.offered_per_channel,
            "past the knee: {x:?}"
        );
        let share = x.delivered_lane_share.unwrap();
        assert!(share > 0.9, "its lanes carry what it completes: {x:?}");
        assert!(!x.collapsed, "{x:?}");
    }
    assert_eq!(d.collapsed, 0);
}
