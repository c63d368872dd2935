//! A replay split over ranks changes nothing: on 2 ranks and on 3 ranks of 2 threads,
//! every rank holds the summary one process gives (the partition count aside), the
//! records (the `--trace-log` CSV's rows) come in the same order, and the per-link,
//! series, latency and per-message-log measurements are the same; for text traces in
//! open and dependency mode, a Netrace trace and a generated DUMPI trace with
//! collectives, on a wormhole and a circuit-switched preset. A deadlock, a bad trace
//! line and a refused message end every rank alike. Ranks are threads here
//! (`engine::distributed::local`); tests/mpi.rs replays under `mpirun`.

use crate::common;

use routemu::config::HwConfig;
use routemu::engine::probe::observe::HopRec;
use routemu::engine::probe::Delivery;
use routemu::experiments::replay::{
    replay_machine_observed, ReplayMode, ReplayOptions, ReplayRecord,
};
use routemu::experiments::traces::{open_with, OpenOptions};
use routemu::foundation::error::{Error, Result};
use serde_json::Value;
use std::path::{Path, PathBuf};

/// What a replay gives that must not depend on the split.
#[derive(Debug, PartialEq)]
struct Replayed {
    /// The summary's JSON without the partition count.
    summary: Value,
    /// Every record, in the order `each` saw them.
    records: Vec<ReplayRecord>,
    /// The per-message log: deliveries and hops (sorted: the log's order is free).
    deliveries: Vec<Delivery>,
    hops: Vec<(u64, u32, u64, u32)>,
    /// The latency histograms' counts, per value.
    latency: Vec<(u64, u64)>,
    /// Every link's row, for the heat map.
    links: Value,
    /// The partitions it ran on.
    partitions: u64,
}

fn replay_once(cfg: &HwConfig, trace: &Path, opts: &ReplayOptions) -> Result<Replayed> {
    let mut src = open_with(trace, &OpenOptions::default())?;
    let mut records = Vec::new();
    let (sum, mut extras) = replay_machine_observed(cfg, src.as_mut(), opts, &mut |r| {
        records.push(r.clone());
        Ok(())
    })?;
    let mut summary = serde_json::to_value(&sum).unwrap();
    // How the network was split is the one thing that may differ.
    summary.as_object_mut().unwrap().remove("partitioning");
    let partitions = summary
        .as_object_mut()
        .unwrap()
        .remove("partitions")
        .unwrap()
        .as_u64()
        .unwrap();
    let log = extras
        .messages
        .pop()
        .expect("the message log was asked for");
    let mut deliveries = log.deliveries;
    deliveries.sort_by_key(|d| (d.absorbed, d.header.id.0));
    let mut hops: Vec<_> = log
        .hops
        .iter()
        .map(|h: &HopRec| (h.id.0, h.attempt, h.at, h.node))
        .collect();
    hops.sort_unstable();
    let latency = extras
        .latency
        .total
        .iter_recorded()
        .map(|v| (v.value_iterated_to(), v.count_at_value()))
        .collect();
    Ok(Replayed {
        summary,
        records,
        deliveries,
        hops,
        latency,
        links: serde_json::to_value(&extras.links).unwrap(),
        partitions,
    })
}

/// The replay on `ranks` ranks (threads standing in for them): every rank's result,
/// in rank order.
fn on_ranks(
    ranks: usize,
    cfg: &HwConfig,
    trace: &Path,
    opts: &ReplayOptions,
) -> Vec<Result<Replayed>> {
    common::on_local_ranks(ranks, || replay_once(cfg, trace, opts)).0
}

/// Replays `trace` on `cfg` in one process, then on 2 ranks and on 3 ranks of 2
/// threads: every rank must hold the one-process result.
fn same_on_ranks(what: &str, cfg: &HwConfig, trace: &Path, opts: &ReplayOptions) {
    let mut cfg = cfg.clone();
    cfg.experiment.partition_min_nodes = Some(1);
    cfg.experiment.observe.per_link = true;
    cfg.experiment.observe.interval = Some(200);
    cfg.experiment.observe.message_log = true;
    let one = replay_once(&cfg, trace, opts).unwrap();
    assert_eq!(one.partitions, 1);
    assert!(!one.records.is_empty(), "{what}: nothing replayed");
    for (ranks, threads) in [(2, 1), (3, 2)] {
        let mut c = cfg.clone();
        c.experiment.threads = threads;
        for (r, got) in on_ranks(ranks, &c, trace, opts).into_iter().enumerate() {
            let got = got.unwrap_or_else(|e| panic!("{what}, rank {r} of {ranks}: {e}"));
            assert_eq!(
                got.partitions,
                (ranks * threads as usize) as u64,
                "{what}: {ranks} ranks of {threads} threads split the network that many ways"
            );
            let got = Replayed {
                partitions: 1,
                ..got
            };
            assert!(
                got == one,
                "{what}: rank {r} of {ranks} ({threads} threads each) differs from one process: \
                 {:?}; records equal: {}, deliveries equal: {}, hops equal: {}, latency equal: {}, \
                 links: {:?}",
                common::json_diff(&got.summary, &one.summary),
                got.records == one.records,
                got.deliveries == one.deliveries,
                got.hops == one.hops,
                got.latency == one.latency,
                common::json_diff(&got.links, &one.links),
            );
        }
    }
}

fn trace(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("traces")
        .join(name)
}

/// A text trace of `n` messages between 64 nodes, each with up to two dependants
/// among the next ten: busy enough that messages cross the partitions' and ranks'
/// borders while others wait for their parents.
fn text_trace(dir: &Path, n: u64) -> PathBuf {
    let mut text = String::from("time src dst flits id deps\n");
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let mut t = 0;
    for id in 0..n {
        t += next() % 6;
        let (src, dst, flits) = (next() % 64, next() % 64, 1 + next() % 12);
        let deps: Vec<String> = (0..next() % 3)
            .map(|_| id + 1 + next() % 10)
            .filter(|&c| c < n)
            .map(|c| c.to_string())
            .collect::<std::collections::BTreeSet<_>>()
            .into_iter()
            .collect();
        let deps = if deps.is_empty() {
            "-".to_string()
        } else {
            deps.join(",")
        };
        text.push_str(&format!("{t} {src} {dst} {flits} {id} {deps}\n"));
    }
    let p = dir.join("busy.txt");
    std::fs::write(&p, text).unwrap();
    p
}

fn mode(mode: ReplayMode) -> ReplayOptions {
    ReplayOptions {
        mode,
        ..ReplayOptions::default()
    }
}

fn presets() -> [(&'static str, HwConfig); 2] {
    [
        (
            "wormhole-torus-dor",
            common::preset("wormhole-torus-dor.ron"),
        ),
        ("circuit-drop", common::preset("circuit-drop.ron")),
    ]
}

#[test]
fn a_text_trace_replays_alike_on_ranks_in_open_and_dependency_mode() {
    let dir = tempfile::tempdir().unwrap();
    let p = text_trace(dir.path(), 600);
    for (name, cfg) in presets() {
        for m in [ReplayMode::Open, ReplayMode::Deps] {
            same_on_ranks(&format!("{name}, text, {m:?}"), &cfg, &p, &mode(m));
        }
    }
}

#[test]
fn a_netrace_trace_replays_alike_on_ranks() {
    let p = trace("netrace/example.tra.bz2");
    for (name, cfg) in presets() {
        same_on_ranks(
            &format!("{name}, netrace"),
            &cfg,
            &p,
            &mode(ReplayMode::Deps),
        );
    }
}

#[test]
fn a_generated_dumpi_trace_with_collectives_replays_alike_on_ranks() {
    let p = trace("generated/fft-16.meta");
    for (name, cfg) in presets() {
        same_on_ranks(
            &format!("{name}, dumpi fft-16"),
            &cfg,
            &p,
            &mode(ReplayMode::Deps),
        );
    }
}

/// Eight messages around a ring of the torus with one VC and no dateline: a deadlock.
fn ring(dir: &Path) -> PathBuf {
    let mut t = String::from("time src dst flits\n");
    for i in 0..8 {
        t.push_str(&format!("0 {i} {} 64\n", (i + 5) % 8));
    }
    let p = dir.join("ring.txt");
    std::fs::write(&p, t).unwrap();
    p
}

fn replay_error(ranks: usize, cfg: &HwConfig, trace: &Path, opts: &ReplayOptions) -> Vec<Error> {
    on_ranks(ranks, cfg, trace, opts)
        .into_iter()
        .map(|r| match r {
            Ok(_) => panic!("the replay did not fail"),
            Err(e) => e,
        })
        .collect()
}

#[test]
fn a_deadlocked_replay_is_found_in_the_same_cycle_on_every_rank() {
    let dir = tempfile::tempdir().unwrap();
    let p = ring(dir.path());
    let mut cfg = common::preset_with(
        "wormhole-torus-dor.ron",
        &["switching.unsafe_routing=true", "router.vcs=1"],
    );
    cfg.experiment.partition_min_nodes = Some(1);
    cfg.experiment.observe.message_log = true;
    let opts = ReplayOptions {
        stall_cycles: 2000,
        ..ReplayOptions::default()
    };
    let Err(Error::Deadlock(one)) = replay_once(&cfg, &p, &opts) else {
        panic!("one process: not a deadlock");
    };
    // The first line says where it was found; the waits need one partition.
    let found = one.lines().next().unwrap();
    assert!(found.contains("replay deadlocked at cycle"), "{one}");
    for e in replay_error(2, &cfg, &p, &opts) {
        let Error::Deadlock(text) = e else {
            panic!("not a deadlock: {e}");
        };
        assert_eq!(text.lines().next(), Some(found), "{text}");
        assert!(text.contains("in one process with --threads 1"), "{text}");
    }
}

#[test]
fn a_bad_trace_line_ends_every_rank_with_the_same_error() {
    let dir = tempfile::tempdir().unwrap();
    let mut text = String::from("time src dst flits\n");
    for i in 0..200 {
        text.push_str(&format!("{} {} {} 4\n", i * 3, i % 64, (i * 7) % 64));
    }
    text.push_str("700 1 two 4\n");
    let p = dir.path().join("bad.txt");
    std::fs::write(&p, text).unwrap();
    let cfg = common::preset("wormhole-torus-dor.ron");
    let Err(one) = replay_once(&cfg, &p, &ReplayOptions::default()) else {
        panic!("one process read the bad line");
    };
    for e in replay_error(3, &cfg, &p, &ReplayOptions::default()) {
        assert_eq!(e.to_string(), one.to_string());
    }
}

#[test]
fn a_message_refused_by_a_full_source_ends_every_rank_with_the_same_error() {
    let dir = tempfile::tempdir().unwrap();
    // Node 30 (in the second rank's half of 36) sends far more at once than its memory
    // holds.
    let mut text = String::from("time src dst flits\n");
    for i in 0..36 {
        text.push_str(&format!("0 30 {i} 16\n"));
    }
    let p = dir.path().join("burst.txt");
    std::fs::write(&p, text).unwrap();
    let mut cfg = common::preset_with("deflection-ms.ron", &["switching.max_pending=Some(4)"]);
    cfg.experiment.partition_min_nodes = Some(1);
    let Err(one) = replay_once(&cfg, &p, &ReplayOptions::default()) else {
        panic!("one process took the burst");
    };
    assert!(one.to_string().contains("memory was full"), "{one}");
    for e in replay_error(2, &cfg, &p, &ReplayOptions::default()) {
        assert_eq!(e.to_string(), one.to_string());
    }
}

#[test]
fn a_trace_sweep_point_replays_alike_on_ranks() {
    use routemu::experiments::sweep::{replay_point, Axis, TraceRun, TRACE_AXIS};
    let file = trace("netrace/example.tra.bz2");
    let axes = [Axis {
        path: TRACE_AXIS.into(),
        values: vec![file.to_string_lossy().into_owned()],
    }];
    let run = TraceRun {
        mode: Some(ReplayMode::Deps),
        elastic: Default::default(),
        gap: 8,
        time_scale: 1.0,
        flit_bytes: 8,
        place: None,
    };
    let mut cfg = common::preset("circuit-drop.ron");
    cfg.experiment.partition_min_nodes = Some(1);
    let point = || {
        let mut v = serde_json::to_value(replay_point(&cfg, &axes, &axes[0].values, &run).unwrap())
            .unwrap();
        v.as_object_mut().unwrap().remove("partitioning");
        let parts = v.as_object_mut().unwrap().remove("partitions").unwrap();
        (v, parts)
    };
    let (one, parts) = point();
    assert_eq!(parts, 1);
    let (ranked, _) = common::on_local_ranks(2, point);
    for (r, (v, parts)) in ranked.into_iter().enumerate() {
        assert_eq!(parts, 2, "rank {r}: the point is split over the ranks");
        assert_eq!(v, one, "rank {r}");
    }
}

#[test]
fn a_generated_dumpi_trace_replays_elastically_alike_on_ranks() {
    // Each partition runs only its own ranks' programs: what crosses ranks is the
    // network's events and the counts, and the result is still one process's.
    // Placed as they come, fft-16's ranks share one process's nodes (nothing crosses,
    // stretches are long); placed at random, messages cross all the time.
    use routemu::experiments::replay::Placement;
    let p = trace("generated/fft-16.meta");
    for (name, cfg) in presets() {
        let topo = routemu::topology::Topology::from_config(&cfg.topology).unwrap();
        for place in ["identity", "random:3"] {
            let opts = ReplayOptions {
                map: place.parse::<Placement>().unwrap().build(&topo).unwrap(),
                ..mode(ReplayMode::Elastic)
            };
            same_on_ranks(
                &format!("{name}, dumpi fft-16 placed {place}, elastic"),
                &cfg,
                &p,
                &opts,
            );
        }
    }
}

/// Exchanges the ranks make replaying `trace` on 2 ranks in `m` mode.
fn exchanges(cfg: &HwConfig, trace: &Path, m: ReplayMode) -> u64 {
    let mut cfg = cfg.clone();
    cfg.experiment.partition_min_nodes = Some(1);
    cfg.experiment.observe.message_log = true;
    let (_, ts) = common::on_local_ranks(2, || {
        replay_once(&cfg, trace, &mode(m)).unwrap();
    });
    ts[0].exchanges()
}

#[test]
fn an_elastic_replay_over_ranks_exchanges_once_a_stretch_not_once_a_cycle() {
    let cfg = common::preset("wormhole-torus-dor.ron");
    for t in ["generated/halo2d-16.meta", "generated/halo3d26-27.meta"] {
        let p = trace(t);
        let deps = exchanges(&cfg, &p, ReplayMode::Deps);
        let elastic = exchanges(&cfg, &p, ReplayMode::Elastic);
        eprintln!("{t}: deps {deps} exchanges, elastic {elastic}");
        assert!(elastic * 5 <= deps, "{t}: deps {deps}, elastic {elastic}");
    }
}
