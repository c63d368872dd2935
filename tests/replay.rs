//! Trace replay delivers every message of a trace exactly once, never creates a message
//! before its parents were delivered (dependency mode), creates at the recorded times
//! (open loop), on every switching mode; bad input is refused with the reason.

mod common;

use routemu::config::HwConfig;
use routemu::engine::replay::{
    replay_machine, NodeMap, ReplayMode, ReplayOptions, ReplayRecord, ReplaySummary,
};
use routemu::trace::{open, TraceMsg};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

fn trace(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("traces")
        .join(name)
}

fn read_all(p: &Path) -> Vec<TraceMsg> {
    let mut s = open(p).unwrap();
    let mut v = Vec::new();
    while let Some(m) = s.next_msg().unwrap() {
        v.push(m);
    }
    v
}

/// Replays `p` on `cfg`: every record in delivery order, and the summary.
fn replay_all(
    cfg: &HwConfig,
    p: &Path,
    opts: &ReplayOptions,
) -> (Vec<ReplayRecord>, ReplaySummary) {
    let mut src = open(p).unwrap();
    let mut recs = Vec::new();
    let mut each = |r: &ReplayRecord| {
        recs.push(r.clone());
        Ok(())
    };
    let sum = replay_machine(cfg, src.as_mut(), opts, &mut each).unwrap();
    (recs, sum)
}

fn run(cfg: &HwConfig, p: &Path, opts: &ReplayOptions) -> Vec<ReplayRecord> {
    let (recs, sum) = replay_all(cfg, p, opts);
    assert_eq!(sum.delivered, sum.messages);
    assert_eq!(sum.mode, opts.mode);
    recs
}

#[test]
fn every_message_is_delivered_once_and_children_wait_for_their_parents() {
    let p = trace("netrace/example.tra.bz2");
    let msgs = read_all(&p);
    let mut parents: HashMap<u64, Vec<u64>> = HashMap::new();
    for m in &msgs {
        for &c in &m.children {
            parents.entry(c).or_default().push(m.id);
        }
    }
    for preset in [
        "wormhole-torus-dor.ron",
        "wormhole-torus-adaptive.ron",
        "circuit-hold.ron",
    ] {
        let cfg = common::preset(preset);
        for mode in [ReplayMode::Open, ReplayMode::Deps] {
            let opts = ReplayOptions {
                mode,
                ..ReplayOptions::default()
            };
            let recs = run(&cfg, &p, &opts);
            let mut ids: Vec<u64> = recs.iter().map(|r| r.id).collect();
            ids.sort_unstable();
            assert_eq!(
                ids,
                msgs.iter().map(|m| m.id).collect::<Vec<_>>(),
                "{preset} {mode:?}"
            );
            let by_id: HashMap<u64, &ReplayRecord> = recs.iter().map(|r| (r.id, r)).collect();
            for r in &recs {
                assert!(r.created >= r.recorded && r.delivered > r.created);
                match mode {
                    ReplayMode::Open => assert_eq!(r.created, r.recorded, "{preset}"),
                    ReplayMode::Deps => {
                        for p in parents.get(&r.id).into_iter().flatten() {
                            assert!(
                                r.created >= by_id[p].delivered + 8,
                                "{preset}: {} created at {} before parent {p} (+8) at {}",
                                r.id,
                                r.created,
                                by_id[p].delivered
                            );
                        }
                    }
                    ReplayMode::Elastic => unreachable!("open and dependency-driven only"),
                }
            }
            if mode == ReplayMode::Deps {
                assert!(
                    recs.iter().any(|r| r.created > r.recorded),
                    "{preset}: some message must have waited for a parent"
                );
            }
        }
    }
}

#[test]
fn endpoints_outside_the_network_are_refused_unless_mapped() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("t.txt");
    std::fs::write(&p, "time src dst flits\n0 0 70 4\n5 70 1 2\n").unwrap();
    let cfg = common::preset("wormhole-torus-dor.ron");
    let mut src = open(&p).unwrap();
    let e = replay_machine(&cfg, src.as_mut(), &ReplayOptions::default(), &mut |_| {
        Ok(())
    })
    .unwrap_err()
    .to_string();
    assert!(e.contains("endpoint 70") && e.contains("64 nodes"), "{e}");
    let opts = ReplayOptions {
        map: NodeMap::Table((0..71).map(|e| e % 64).collect()),
        ..ReplayOptions::default()
    };
    let recs = run(&cfg, &p, &opts);
    assert_eq!((recs[0].dst, recs[1].src), (6, 6));
}

#[test]
fn the_command_writes_the_summary_json_and_per_message_csv() {
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("m.csv");
    let out = common::routemu(&[
        "replay",
        "hw/circuit-drop.ron",
        "--trace",
        "traces/netrace/shrtex.tra.bz2",
        "--mode",
        "deps",
        "--messages",
        csv.to_str().unwrap(),
        "--threads",
        "2",
        "--set",
        "experiment.partition_min_nodes=1",
        "--json",
        "-",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["schema"], "routemu.replay/1");
    assert_eq!(v["mode"], "deps");
    assert_eq!(v["partitions"], 2, "--threads splits the network");
    assert_eq!(
        (v["messages"].as_u64(), v["delivered"].as_u64()),
        (Some(12), Some(12))
    );
    let text = std::fs::read_to_string(&csv).unwrap();
    assert!(text.starts_with("id,src,dst,size,flits,recorded,created,injected,delivered,latency\n"));
    assert_eq!(text.lines().count(), 13);
    assert!(String::from_utf8_lossy(&out.stderr).contains("dependency-driven"));
}

#[test]
fn a_replay_on_more_threads_than_cores_warns_that_they_oversubscribe_the_machine() {
    // More partitions than the machine has cores, so more than are free whatever else
    // runs. A k×k torus with k ≥ T splits into exactly T partitions when a partition may
    // hold a single node.
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let threads = (cores + 1).to_string();
    let k = (cores + 1).max(8);
    let set_k = format!("topology.k={k}");
    let args = |threads: &str| {
        common::routemu(&[
            "replay",
            "hw/wormhole-torus-dor.ron",
            "--set",
            &set_k,
            "--trace",
            "traces/netrace/shrtex.tra.bz2",
            "--threads",
            threads,
            "--set",
            "experiment.partition_min_nodes=1",
        ])
    };
    let out = args(&threads);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(
        err.contains(&format!("warning: {threads} threads asked for but only")),
        "{err}"
    );
    // One thread never oversubscribes.
    let out = args("1");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(!err.contains("threads asked for"), "{err}");
}

#[test]
fn bad_traces_and_maps_are_refused_with_the_place_and_nothing_written() {
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("m.csv");
    let write = |name: &str, text: &str| {
        let p = dir.path().join(name);
        std::fs::write(&p, text).unwrap();
        p.to_str().unwrap().to_string()
    };
    let short = write("short.txt", "time src dst flits\n0 1 2 3\n4 5 6\n");
    let back = write("back.txt", "time src dst flits\n9 1 2 3\n4 5 6 1\n");
    let trace = write("ok.txt", "time src dst flits\n0 1 2 3\n");
    let map = write("map.txt", "1 3\n1 4\n");
    let far = write("far.txt", "# endpoint node\n0 1\n1 64\n");
    let partial = write("partial.txt", "0 0\n1 1\n");
    let mut truncated = std::fs::read(trace_path("netrace/example.tra.bz2")).unwrap();
    truncated.truncate(truncated.len() / 2);
    let trunc = dir.path().join("t.tra.bz2");
    std::fs::write(&trunc, truncated).unwrap();
    for (args, why) in [
        (vec!["--trace", short.as_str()], "short.txt:3: 3 fields"),
        (
            vec!["--trace", back.as_str()],
            "back.txt:3: time goes backwards",
        ),
        (
            vec!["--trace", trace.as_str(), "--map", map.as_str()],
            "map.txt:2: endpoint 1 is mapped twice",
        ),
        (
            vec!["--trace", trace.as_str(), "--map", far.as_str()],
            "far.txt:3: node 64 is outside the network's 64 nodes",
        ),
        (
            vec!["--trace", trace.as_str(), "--map", partial.as_str()],
            "ok.txt (routemu text trace): message 0 (recorded at 0): endpoint 2 is not in the node map",
        ),
        (vec!["--trace", trunc.to_str().unwrap()], "t.tra.bz2"),
        (
            vec!["--trace", trace.as_str(), "--flit-bytes", "0"],
            "--flit-bytes 0",
        ),
        (
            vec!["--trace", trace.as_str(), "--time-scale", "0"],
            "--time-scale 0: must be positive",
        ),
        (
            vec!["--trace", trace.as_str(), "--place", "grid:3x"],
            "--place grid:3x",
        ),
    ] {
        let mut a = vec![
            "replay",
            "hw/wormhole-torus-dor.ron",
            "--messages",
            csv.to_str().unwrap(),
        ];
        a.extend(args);
        let out = common::routemu(&a);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{a:?}: {err}");
        assert!(err.contains(why), "{a:?}: {err}");
        assert!(!csv.exists(), "{a:?}: a half-written CSV was left");
    }
}

fn trace_path(name: &str) -> PathBuf {
    trace(name)
}

#[test]
fn a_generated_trace_with_dependencies_replays_completely() {
    // messages_per_second checks that every generated message was delivered.
    for mode in [ReplayMode::Open, ReplayMode::Deps] {
        let rate = routemu::bench::replay::messages_per_second(3000, mode, 8, 1, 1).unwrap();
        assert!(rate > 0.0);
    }
}

#[test]
fn replay_results_do_not_depend_on_the_thread_count() {
    // A recorded trace, and a congested generated one (4 messages a cycle on 64 nodes,
    // 1–12 flits, every third message with a dependant) where partitions must agree
    // on every contended cycle.
    let dir = tempfile::tempdir().unwrap();
    let busy = dir.path().join("busy.txt");
    let mut text = String::from("cycle src dst flits id deps\n");
    let mut x: u64 = 12345;
    let mut rnd = |m: u64| {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (x >> 33) % m
    };
    for i in 0..1500u64 {
        let (s, d, f) = (rnd(64), rnd(64), 1 + rnd(12));
        let deps = if i % 3 == 0 {
            format!("{}", i + 7)
        } else {
            "-".into()
        };
        text.push_str(&format!("{} {s} {d} {f} {i} {deps}\n", i / 4));
    }
    std::fs::write(&busy, text).unwrap();
    for p in [trace("netrace/example.tra.bz2"), busy] {
        one_trace_on_1_to_4_threads(&p);
    }
}

fn one_trace_on_1_to_4_threads(p: &Path) {
    for preset in [
        "wormhole-torus-adaptive.ron",
        "circuit-hold.ron",
        "circuit-adaptive.ron",
    ] {
        for mode in [ReplayMode::Open, ReplayMode::Deps] {
            let opts = ReplayOptions {
                mode,
                ..ReplayOptions::default()
            };
            let mut base: Option<(Vec<ReplayRecord>, String)> = None;
            for threads in 1..=4 {
                let mut cfg = common::preset(preset);
                cfg.experiment.threads = threads;
                cfg.experiment.partition_min_nodes = Some(1);
                let (recs, mut sum) = replay_all(&cfg, p, &opts);
                assert_eq!(sum.partitions, threads, "{preset}: the network was split");
                assert_eq!(sum.delivered, sum.messages);
                sum.partitions = 0;
                sum.partitioning = Default::default();
                let got = (recs, serde_json::to_string(&sum).unwrap());
                match &base {
                    None => base = Some(got),
                    Some(b) => assert!(
                        *b == got,
                        "{preset} {mode:?}: {threads} threads differ from one:\n{}\n{}",
                        b.1,
                        got.1
                    ),
                }
            }
        }
    }
}

#[test]
fn a_trace_with_more_endpoints_than_nodes_needs_a_folding_placement() {
    // The Netrace traces have 64 endpoints; a 4×4 torus has 16 nodes.
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    let json_arg = json.display().to_string();
    let args = |place: Option<&'static str>| {
        let mut a = vec![
            "replay",
            "hw/wormhole-torus-dor.ron",
            "--set",
            "topology.k=4",
            "--trace",
            "traces/netrace/example.tra.bz2",
            "--json",
            &json_arg,
        ];
        if let Some(p) = place {
            a.extend(["--place", p]);
        }
        a
    };
    let out = common::routemu(&args(None));
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("64 endpoints do not fit on the network's 16 nodes"),
        "{err}"
    );
    assert!(!json.exists());
    let out = common::routemu(&args(Some("block:4")));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(doc["placement"], "block:4");
    assert_eq!(doc["delivered"], doc["messages"]);
    // A grid larger than the network is refused with the reason.
    let out = common::routemu(&args(Some("grid:8x8")));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("extent 8 exceeds the torus's 4 nodes"),
        "{err}"
    );
}
