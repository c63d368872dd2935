//! Partitioned stepping changes nothing: every preset gives the same report with 1, 2,
//! 3 and 4 partitions, with and without idle skipping, and with replications run side by
//! side; a deadlock is found at the same cycle and described the same way.

use crate::common;

use routemu::config::{HwConfig, Measure};
use routemu::experiments::experiment::run_experiment;
use serde_json::Value;

fn report(cfg: &HwConfig) -> Value {
    let r = run_experiment(cfg, &mut |_, _| {}).unwrap();
    let mut v = common::without_split(serde_json::to_value(&r).unwrap());
    v["config"]["experiment"]
        .as_object_mut()
        .unwrap()
        .remove("idle_skip");
    v
}

/// Preset `name` cut short: windows as long as it takes for each mode's events to cross
/// the partitions' boundaries in both replications (`common::split_events`; a split run
/// pays a barrier per cycle, most of it in the drain after the window), except
/// circuit-torus-hold, whose first hold timeouts come some 30,000 cycles in (its 64 nodes
/// keep the long window cheap).
fn short(name: &str, cfg: HwConfig) -> HwConfig {
    let cycles = if name == "circuit-torus-hold.ron" {
        [(20_000, 60_000); 3]
    } else {
        [(2_000, 6_000), (1_000, 2_000), (500, 1_000)]
    };
    common::cut_short(name, cfg, cycles)
}

#[test]
fn every_preset_gives_the_same_report_on_1_2_3_and_4_partitions() {
    let mut seen = std::collections::BTreeSet::new();
    for (name, cfg) in common::all_presets() {
        let cfg = short(&name, cfg);
        let one = report(&cfg);
        seen.extend(common::split_events(&one));
        for t in [2, 3, 4] {
            let mut c = cfg.clone();
            c.experiment.threads = t;
            assert_eq!(one, report(&c), "{name} with {t} threads");
        }
    }
    common::assert_split_events(&seen, &[]);
}

#[test]
fn the_split_really_happens_for_wormhole_and_falls_back_when_partitions_are_small() {
    let mut cfg = short("w", common::preset("wormhole-torus-dor.ron"));
    cfg.experiment.threads = 3;
    let r = run_experiment(&cfg, &mut |_, _| {}).unwrap();
    assert_eq!(r.threads, 3);
    cfg.experiment.partition_min_nodes = Some(128);
    let r = run_experiment(&cfg, &mut |_, _| {}).unwrap();
    assert_eq!(r.threads, 1, "64 nodes do not pay for a second partition");
}

#[test]
fn idle_skipping_changes_nothing_on_partitions() {
    for file in [
        "wormhole-hypercube.ron",
        "circuit-hold.ron",
        "deflection-ms-hop-limit.ron",
        "timeout-lan-7x7.ron",
    ] {
        let mut cfg = short(file, common::preset(file));
        cfg.experiment.threads = 2;
        cfg.workload.rate /= 10.0;
        let a = report(&cfg);
        cfg.experiment.idle_skip = false;
        assert_eq!(a, report(&cfg), "{file}");
    }
}

#[test]
fn replications_side_by_side_give_the_same_report() {
    for file in [
        "wormhole-torus-adaptive.ron",
        "circuit-drop.ron",
        "deflection-ms.ron",
        "timeout-lan-3x3.ron",
    ] {
        let mut cfg = short(file, common::preset(file));
        cfg.experiment.replications = 4;
        let a = report(&cfg);
        cfg.experiment.jobs = 3;
        cfg.experiment.threads = 2;
        assert_eq!(a, report(&cfg), "{file}");
    }
}

#[test]
fn deflection_really_splits() {
    let mut cfg = short("d", common::preset("deflection-ms.ron"));
    cfg.experiment.threads = 4;
    let r = run_experiment(&cfg, &mut |_, _| {}).unwrap();
    assert_eq!(r.threads, 4);
    assert!(r.deflection().unwrap().preemptions > 0);
}

#[test]
fn a_deadlock_is_found_at_the_same_cycle_and_described_alike_on_partitions() {
    let path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/deadlock-ring.ron");
    let mut cfg = routemu::config::load::load_hw(&path).unwrap();
    cfg.experiment.partition_min_nodes = Some(1);
    let a = report(&cfg);
    assert!(a["deadlock"].is_object());
    cfg.experiment.threads = 2;
    assert_eq!(a, report(&cfg));
}

#[test]
fn timeout_switching_really_splits_and_saturated_hosts_too() {
    let mut cfg = short("timeout", common::preset("timeout-lan-7x7.ron"));
    cfg.experiment.threads = 3;
    let r = run_experiment(&cfg, &mut |_, _| {}).unwrap();
    assert_eq!(r.threads, 3);
    assert!(r.timeout().unwrap().resets > 0);
    let mut sat = short("timeout", common::preset("timeout-lan-3x3.ron"));
    sat.workload.process = routemu::config::ArrivalProcess::Saturated { depth: 8 };
    let one = report(&sat);
    sat.experiment.threads = 4;
    assert_eq!(one, report(&sat), "saturated sources on 4 partitions");
}

#[test]
fn circuit_switching_really_splits() {
    for file in ["circuit-hold.ron", "circuit-adaptive.ron"] {
        let mut cfg = short(file, common::preset(file));
        cfg.experiment.threads = 3;
        let r = run_experiment(&cfg, &mut |_, _| {}).unwrap();
        assert_eq!(r.threads, 3, "{file}");
        cfg.experiment.partition_min_nodes = None;
        let r = run_experiment(&cfg, &mut |_, _| {}).unwrap();
        assert_eq!(
            r.threads, 1,
            "{file}: too small to pay for a barrier per cycle"
        );
    }
}

#[test]
fn a_hold_deadlock_across_partitions_is_found_at_the_same_cycle() {
    let mut cfg = common::preset("circuit-torus-hold.ron");
    if let routemu::config::SwitchingConfig::Circuit { hold_timeout, .. } = &mut cfg.switching {
        *hold_timeout = None;
    }
    cfg.workload.rate *= 4.0;
    cfg.experiment.replications = 1;
    cfg.experiment.partition_min_nodes = Some(1);
    let one = report(&cfg);
    let text = one["deadlock"].to_string();
    // The circuits of the cycle wait at nodes of several of the 4 partitions (16 nodes
    // each): only the union of the partitions' waits shows the cycle.
    let parts: std::collections::BTreeSet<u64> = text
        .split("waits at node ")
        .skip(1)
        .map(|s| s.split(' ').next().unwrap().parse::<u64>().unwrap() / 16)
        .collect();
    assert!(parts.len() >= 2, "{text}");
    for t in [2, 3, 4] {
        cfg.experiment.threads = t;
        assert_eq!(one, report(&cfg), "{t} threads");
    }
}

#[test]
fn a_thread_count_that_would_leave_the_last_partition_empty_runs_on_the_partitions_that_exist() {
    // 64 nodes in chunks of ⌈64/9⌉ = 8 fill 8 partitions, not 9; 4 nodes in chunks of
    // ⌈4/3⌉ = 2 fill 2, not 3 (hardening D01: the barrier waited for the absent one).
    for (name, dim_or_k, threads) in [
        ("wormhole-torus-dor.ron", None, 9),
        ("circuit-hold.ron", Some(2), 3),
    ] {
        let mut cfg = short(name, common::preset(name));
        if let (Some(d), routemu::config::TopologyConfig::Hypercube { dim }) =
            (dim_or_k, &mut cfg.topology)
        {
            *dim = d;
        }
        cfg.experiment.replications = 1;
        let one = report(&cfg);
        cfg.experiment.threads = threads;
        let r = run_experiment(&cfg, &mut |_, _| {}).unwrap();
        assert!(r.threads < threads, "{name}: {} partitions", r.threads);
        assert_eq!(one, report(&cfg), "{name} with {threads} threads");
    }
}

#[test]
fn more_partition_threads_than_free_cores_are_warned_about_and_one_thread_is_not() {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let many = (cores + 1).to_string();
    let args = |threads: &str| {
        common::routemu(&[
            "run",
            "hw/wormhole-torus-dor.ron",
            "--warmup",
            "10",
            "--cycles",
            "100",
            "--replications",
            "1",
            "--threads",
            threads,
            "--set",
            "experiment.partition_min_nodes=1",
        ])
    };
    let out = args(&many);
    assert!(out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("warning:") && err.contains(&format!("{many} threads")),
        "{err}"
    );
    let out = args("1");
    assert!(!String::from_utf8_lossy(&out.stderr).contains("warning:"));
}

/// Found by the fuzzer (tests/fuzz.rs): a partition's sources create messages that other
/// partitions' destinations absorb, so its own count of messages in the system can be
/// negative; clamping each part at zero made the overload test see a growing count on two
/// partitions only, and flag a drained run saturated there alone.
#[test]
fn the_overload_test_of_a_drained_run_sees_the_same_counts_on_any_partitions() {
    let mut cfg = common::preset("wormhole-torus-adaptive.ron");
    cfg.topology = routemu::config::TopologyConfig::Torus {
        k: 4,
        n: 1,
        bidirectional: true,
        c: 1,
    };
    cfg.router.controller.servers = 2;
    cfg.workload.rate = 0.004179677854772117;
    let e = &mut cfg.experiment;
    e.seed = 12321317663;
    e.replications = 1;
    e.warmup = 1364;
    e.measure = Measure::Cycles(4318);
    e.drain_limit = 20_000;
    e.deadlock_cycles = 5_000;
    e.partition_min_nodes = Some(1);
    let one = report(&cfg);
    cfg.experiment.threads = 2;
    let two = report(&cfg);
    assert_eq!(one["saturated"], two["saturated"]);
    assert_eq!(one, two);
}

/// Links between the groups of different partitions when `groups` groups with one
/// global link between every pair (both directions) are shared out as contiguous ranges
/// of ⌈groups/parts⌉.
fn global_links_between_partitions(groups: u64, parts: u64) -> u64 {
    let chunk = groups.div_ceil(parts);
    let sizes: Vec<u64> = (0..parts)
        .map(|p| (groups.min((p + 1) * chunk)).saturating_sub(p * chunk))
        .collect();
    let pairs: u64 = (0..sizes.len())
        .flat_map(|i| (i + 1..sizes.len()).map(move |j| (i, j)))
        .map(|(i, j)| sizes[i] * sizes[j])
        .sum();
    2 * pairs
}

#[test]
fn the_dragonfly_preset_splits_by_group_and_gives_the_same_report_on_1_2_and_3_partitions() {
    // dragonfly-booksim: 9 groups of 4 routers with 2 terminals each, 108 nodes.
    let cfg = short(
        "dragonfly-booksim.ron",
        common::preset("dragonfly-booksim.ron"),
    );
    let one = report(&cfg);
    for t in [2u64, 3] {
        let mut c = cfg.clone();
        c.experiment.threads = t as u32;
        let r = serde_json::to_value(run_experiment(&c, &mut |_, _| {}).unwrap()).unwrap();
        let p = &r["partitioning"];
        assert_eq!(p["partitions"], t, "{p}");
        assert_eq!(p["partitioner"], "Blocks", "{p}");
        // Only global links cross: the links between groups of different partitions.
        assert_eq!(
            p["cut_links"].as_u64(),
            Some(global_links_between_partitions(9, t)),
            "{p}"
        );
        assert_eq!(one, report(&c), "dragonfly with {t} threads");
    }
}

#[test]
fn the_flattened_butterfly_preset_splits_into_slabs_with_the_same_report() {
    // flatfly-booksim: 4×4 routers with 4 terminals each; two slabs of two rows cut the
    // links along the second dimension between them: per column 2·2 pairs, both ways.
    let cfg = short("flatfly-booksim.ron", common::preset("flatfly-booksim.ron"));
    let one = report(&cfg);
    let mut c = cfg.clone();
    c.experiment.threads = 2;
    let r = serde_json::to_value(run_experiment(&c, &mut |_, _| {}).unwrap()).unwrap();
    assert_eq!(
        r["partitioning"]["cut_links"],
        4 * 2 * 2 * 2,
        "{}",
        r["partitioning"]
    );
    assert_eq!(one, report(&c));
}

/// The small dragonfly of `dragonfly-booksim.ron` under `UgalGlobal` past saturation
/// under `GroupShift`: 2-cycle local links, 40-cycle global links (long enough for a busy
/// one's used credits to pass UGAL's threshold, so that both routes are taken), 4 VCs of
/// 64 flits, partitions of any size (also tests/parallel/distributed.rs's).
pub(crate) fn ugal_global() -> HwConfig {
    use routemu::config::{PatternConfig, Routing, SwitchingConfig};
    let mut cfg = common::windowed(common::preset("dragonfly-booksim.ron"), 1_000, 3_000, 1);
    cfg.links.latency = 2;
    cfg.links.credit_latency = Some(2);
    cfg.links.latency_global = Some(40);
    cfg.router.buffer_flits = 64;
    cfg.router.vcs = 4;
    let SwitchingConfig::Wormhole {
        ref mut routing, ..
    } = cfg.switching
    else {
        unreachable!("a wormhole preset")
    };
    *routing = Routing::UgalGlobal;
    cfg.workload.pattern = PatternConfig::GroupShift;
    cfg.workload.rate = 0.5 / 12.0;
    cfg.experiment.saturation_backlog = 1e9;
    cfg.experiment.drain_limit = 1;
    cfg.experiment.partition_min_nodes = Some(1);
    cfg
}

#[test]
fn ugal_global_gives_the_same_report_on_1_2_and_3_partitions_and_refuses_to_split_a_group() {
    let cfg = ugal_global();
    let one = report(&cfg);
    // Both routes taken: GroupShift well past minimal routing's 1/(a·p) = 1/8.
    let accepted = one["throughput"]["accepted"].as_f64().unwrap();
    assert!(accepted > 0.15, "accepted {accepted}");
    for t in [2, 3] {
        let mut c = cfg.clone();
        c.experiment.threads = t;
        assert_eq!(one, report(&c), "UgalGlobal with {t} threads");
    }
    // 4 partitions: 9 groups do not share out 4 ways, so routers would be split.
    let mut c = cfg.clone();
    c.experiment.threads = 4;
    let err = run_experiment(&c, &mut |_, _| {}).unwrap_err().to_string();
    assert!(
        err.contains("UgalGlobal") && err.contains("run on 3 threads"),
        "{err}"
    );
}

/// The partitions of the 8×8 torus preset (3 of them, with `barrier`) run to the end of
/// a short replication: how it stopped, and each partition's clock and summary.
fn three_partitions_with<B: routemu::engine::parallel::CycleBarrier>(
    barrier: &B,
) -> (
    routemu::engine::sim::Stop,
    Vec<(u64, routemu::engine::sim::Summary)>,
) {
    let cfg = common::windowed(common::preset("wormhole-torus-dor.ron"), 500, 3_000, 1);
    let (sims, stop) = routemu::engine::parallel::run_with_barrier::<
        routemu::switching::wormhole::WormholeNet,
        B,
    >(&cfg, 0, 3, barrier, &mut |_| {})
    .unwrap();
    (stop, sims.iter().map(|s| (s.t, s.summary())).collect())
}

#[test]
fn how_a_cycle_ends_changes_nothing_and_waiters_that_park_at_once_lose_no_wake_up() {
    use routemu::engine::parallel::{SpinBarrier, StdBarrier};
    use std::time::Duration;
    // Every wait parks (thousands of cycles on 3 threads: a lost wake-up would hang),
    // none does, or every thread waits at std's barrier each cycle.
    let parked = three_partitions_with(&SpinBarrier::with_spin(3, Duration::ZERO));
    assert_eq!(parked.0, routemu::engine::sim::Stop::Drained);
    assert!(parked.1[0].0 > 3_500, "ran {} cycles", parked.1[0].0);
    assert_eq!(
        parked,
        three_partitions_with(&SpinBarrier::with_spin(3, Duration::MAX))
    );
    assert_eq!(parked, three_partitions_with(&StdBarrier::new(3)));
}

#[test]
fn a_thread_away_between_cycles_holds_the_others_up_no_longer_and_changes_nothing() {
    // Progress is reported on the caller's thread between cycles, where it holds no
    // partition: while it sleeps there, the other thread steps both partitions to the
    // end of the run, so the sleeper reports once (a thread held up at a barrier would
    // report every check point after it), and the report is the one-partition one.
    let mut cfg = common::windowed(common::preset("wormhole-torus-dor.ron"), 1_000, 20_000, 1);
    cfg.experiment.partition_min_nodes = Some(1);
    let one = report(&cfg);
    cfg.experiment.threads = 2;
    let mut reports = Vec::new();
    let r = run_experiment(&cfg, &mut |_, now| {
        if reports.is_empty() {
            std::thread::sleep(std::time::Duration::from_secs(2));
        }
        reports.push(now);
    })
    .unwrap();
    assert_eq!(r.threads, 2);
    let check_points = 21_000 / routemu::engine::sim::CHECK_EVERY;
    assert!(
        reports.len() < check_points as usize / 2,
        "{} reports of {check_points} check points",
        reports.len()
    );
    let mut two = common::without_split(serde_json::to_value(&r).unwrap());
    two["config"]["experiment"]
        .as_object_mut()
        .unwrap()
        .remove("idle_skip");
    assert_eq!(one, two);
}
