//! Trace replay delivers every message of a trace exactly once, never creates a message
//! before its parents were delivered (dependency and elastic modes), creates at the
//! recorded times (open loop) or the recorded distances after the parents' deliveries
//! (elastic), on every switching mode; bad input is refused with the reason.

use crate::common;

use routemu::config::HwConfig;
use routemu::experiments::replay::{
    replay_machine, NodeMap, RecordedLatency, ReplayMode, ReplayOptions, ReplayRecord,
    ReplaySummary, READ_AHEAD,
};
use routemu::experiments::traces::{open, open_with, OpenOptions};
use routemu::trace::TraceMsg;
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

/// The cycle elastic replay creates `m` at, from its parents' records: the latest over
/// them of (delivered + 1 + max(0, recorded − the parent's recorded arrival)), where the
/// arrival is the parent's recorded time plus `latency` of it; its recorded time
/// without parents.
fn elastic_creation(
    m: &TraceMsg,
    parents: &[&TraceMsg],
    recs: &HashMap<u64, &ReplayRecord>,
    latency: impl Fn(&TraceMsg) -> u64,
) -> u64 {
    parents
        .iter()
        .map(|p| recs[&p.id].delivered + 1 + m.time.saturating_sub(p.time + latency(p)))
        .max()
        .unwrap_or(m.time)
}

/// Netrace's reference reader's model: 3 cycles per hop of the 8×8 mesh.
fn netrace_latency(m: &TraceMsg) -> u64 {
    let (s, d) = (m.src as u64, m.dst as u64);
    3 * ((s % 8).abs_diff(d % 8) + (s / 8).abs_diff(d / 8))
}

/// Each message's parents (the messages listing it as a child).
fn parents_of(msgs: &[TraceMsg]) -> HashMap<u64, Vec<&TraceMsg>> {
    let mut parents: HashMap<u64, Vec<&TraceMsg>> = HashMap::new();
    for m in msgs {
        for &c in &m.children {
            parents.entry(c).or_default().push(m);
        }
    }
    parents
}

fn elastic(recorded_latency: Option<RecordedLatency>) -> ReplayOptions {
    ReplayOptions {
        mode: ReplayMode::Elastic,
        recorded_latency,
        ..ReplayOptions::default()
    }
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
    let parents = parents_of(&msgs);
    let by_msg: HashMap<u64, &TraceMsg> = msgs.iter().map(|m| (m.id, m)).collect();
    for preset in [
        "wormhole-torus-dor.ron",
        "wormhole-torus-adaptive.ron",
        "circuit-hold.ron",
    ] {
        let cfg = common::preset(preset);
        for mode in [ReplayMode::Open, ReplayMode::Deps, ReplayMode::Elastic] {
            let opts = ReplayOptions {
                mode,
                ..ReplayOptions::default()
            };
            let (recs, sum) = replay_all(&cfg, &p, &opts);
            assert_eq!((sum.delivered, sum.mode), (sum.messages, mode));
            assert_eq!(sum.read_late, 0, "{preset} {mode:?}");
            let mut ids: Vec<u64> = recs.iter().map(|r| r.id).collect();
            ids.sort_unstable();
            assert_eq!(
                ids,
                msgs.iter().map(|m| m.id).collect::<Vec<_>>(),
                "{preset} {mode:?}"
            );
            let by_id: HashMap<u64, &ReplayRecord> = recs.iter().map(|r| (r.id, r)).collect();
            for r in &recs {
                assert!(r.delivered > r.created);
                // Elastic replay alone may create a message before its recorded time.
                assert!(mode == ReplayMode::Elastic || r.created >= r.recorded);
                let ps = parents.get(&r.id).map_or(&[][..], |v| &v[..]);
                match mode {
                    ReplayMode::Open => assert_eq!(r.created, r.recorded, "{preset}"),
                    ReplayMode::Deps => {
                        for p in ps {
                            assert!(
                                r.created >= by_id[&p.id].delivered + 8,
                                "{preset}: {} created at {} before parent {} (+8) at {}",
                                r.id,
                                r.created,
                                p.id,
                                by_id[&p.id].delivered
                            );
                        }
                    }
                    ReplayMode::Elastic => {
                        for p in ps {
                            assert!(
                                r.created > by_id[&p.id].delivered,
                                "{preset}: {} created at {} before parent {} was delivered at {}",
                                r.id,
                                r.created,
                                p.id,
                                by_id[&p.id].delivered
                            );
                        }
                        // Exactly the rule, with Netrace's default recorded latency.
                        let want = elastic_creation(by_msg[&r.id], ps, &by_id, netrace_latency);
                        assert_eq!(r.created, want, "{preset}: message {}", r.id);
                    }
                }
            }
            if mode == ReplayMode::Deps {
                assert!(
                    recs.iter().any(|r| r.created > r.recorded),
                    "{preset}: some message must have waited for a parent"
                );
            }
            if mode == ReplayMode::Elastic {
                assert_eq!(sum.recorded_latency.as_deref(), Some("hops:3"));
            }
        }
    }
}

#[test]
fn endpoints_outside_the_network_are_refused_unless_mapped() {
    let (_dir, p) = common::temp_file("t.txt", "time src dst flits\n0 0 70 4\n5 70 1 2\n");
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
    let out = common::routemu_ok(&[
        "replay",
        "hw/circuit-drop.ron",
        "--trace",
        "traces/netrace/shrtex.tra.bz2",
        "--mode",
        "deps",
        "--trace-log",
        csv.to_str().unwrap(),
        "--threads",
        "2",
        "--set",
        "experiment.partition_min_nodes=1",
        "--json",
        "-",
    ]);
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
            "--trace-log",
            csv.to_str().unwrap(),
        ];
        a.extend(args);
        common::refused(1, &a, why);
        assert!(!csv.exists(), "{a:?}: a half-written CSV was left");
    }
}

fn trace_path(name: &str) -> PathBuf {
    trace(name)
}

#[test]
fn a_generated_trace_with_dependencies_replays_completely() {
    // messages_per_second checks that every generated message was delivered.
    for mode in [ReplayMode::Open, ReplayMode::Deps, ReplayMode::Elastic] {
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
    let busy = busy_trace(dir.path(), 1500, true);
    for p in [trace("netrace/example.tra.bz2"), busy] {
        one_trace_on_1_to_4_threads(&p);
    }
}

/// A congested generated trace of `n` messages (4 a cycle on 64 nodes, 1–12 flits) with
/// every third message the parent of the seventh after it; of a message past the end
/// too (a parent whose dependant never comes) if `past_the_end`.
fn busy_trace(dir: &Path, n: u64, past_the_end: bool) -> PathBuf {
    let busy = dir.join("busy.txt");
    let mut text = String::from("cycle src dst flits id deps\n");
    let mut x: u64 = 12345;
    let mut rnd = |m: u64| {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (x >> 33) % m
    };
    for i in 0..n {
        let (s, d, f) = (rnd(64), rnd(64), 1 + rnd(12));
        let deps = if i % 3 == 0 && (past_the_end || i + 7 < n) {
            format!("{}", i + 7)
        } else {
            "-".into()
        };
        text.push_str(&format!("{} {s} {d} {f} {i} {deps}\n", i / 4));
    }
    std::fs::write(&busy, text).unwrap();
    busy
}

#[test]
fn elastic_replay_results_do_not_depend_on_the_thread_count() {
    // Netrace with its default recorded latency (hops:3), and the congested generated
    // trace with a constant one that makes children come both before and after their
    // recorded times.
    let dir = tempfile::tempdir().unwrap();
    let busy = busy_trace(dir.path(), 1500, false);
    for (p, l) in [
        (trace("netrace/example.tra.bz2"), None),
        (busy, Some(RecordedLatency::Constant(6))),
    ] {
        one_trace_on_threads(&p, &[elastic(l)], &[1, 2, 4]);
    }
}

#[test]
fn elastic_replay_keeps_the_recorded_distance_after_the_parents_deliveries() {
    // Recorded latency 10: message 1 was recorded 100 cycles after its parent 0's
    // recording, 90 after its recorded arrival: it comes 90 cycles after the cycle
    // after 0's delivery, before its recorded time on a network faster than 10 cycles.
    // Message 3 was recorded 3 cycles after its parent 2, before 2's recorded arrival:
    // it comes in the cycle after 2's delivery, after its recorded time. Message 6 has
    // two parents (4, a long way across the torus, and 5, short): the later of the two.
    let (_dir, p) = common::temp_file(
        "chain.txt",
        "cycle src dst flits id deps\n\
         0 0 1 4 0 1\n\
         100 1 0 2 1 -\n\
         200 2 3 4 2 3\n\
         203 3 2 2 3 -\n\
         300 9 45 8 4 6\n\
         300 20 21 2 5 6\n\
         340 10 9 1 6 -\n",
    );
    let msgs = read_all(&p);
    let parents = parents_of(&msgs);
    let l = 10;
    let cfg = common::preset("wormhole-torus-dor.ron");
    let (recs, sum) = replay_all(&cfg, &p, &elastic(Some(RecordedLatency::Constant(l))));
    assert_eq!(sum.delivered, 7);
    let by_id: HashMap<u64, &ReplayRecord> = recs.iter().map(|r| (r.id, r)).collect();
    let d = |id: u64| by_id[&id].delivered;
    let created = |id: u64| by_id[&id].created;
    // The rule, spelled out: delivered_parent + 1 + max(0, recorded_child − recorded_parent − L).
    assert_eq!(created(1), d(0) + 1 + (100 - l));
    assert_eq!(created(3), d(2) + 1);
    assert_eq!(
        created(6),
        (d(4) + 1 + (340 - 300 - l)).max(d(5) + 1 + (340 - 300 - l))
    );
    assert!(d(4) > d(5), "the long way is the later parent");
    assert!(
        created(1) < 100,
        "a faster network than recorded: earlier than recorded"
    );
    assert!(
        created(3) > 203,
        "the parent arrived later than recorded: later"
    );
    // Messages without parents come at their recorded times.
    for id in [0, 2, 4, 5] {
        assert_eq!(created(id), by_id[&id].recorded);
    }
    for m in &msgs {
        let ps = parents.get(&m.id).map_or(&[][..], |v| &v[..]);
        assert_eq!(created(m.id), elastic_creation(m, ps, &by_id, |_| l));
    }
    assert_eq!(sum.recorded_latency.as_deref(), Some("10"));
    assert_eq!(sum.read_late, 0);
    // The recorded run time runs to the last recorded arrival (340 + 10).
    assert_eq!(sum.recorded_runtime, Some(350));
    assert_eq!(sum.runtime, Some(sum.replayed_span));
    let speedup = 350.0 / sum.replayed_span as f64;
    assert_eq!(sum.speedup, Some(speedup));
}

#[test]
fn a_dependant_due_more_than_the_read_ahead_before_its_recorded_time_is_created_when_read() {
    // The child is recorded 2·W after its parent, and the recording's latency (2·W) makes
    // it due in the cycle after its parent's delivery: W earlier than the trace is read.
    let w = READ_AHEAD;
    let (_dir, p) = common::temp_file(
        "far.txt",
        format!(
            "cycle src dst flits id deps\n0 0 1 2 0 1\n{} 1 0 2 1 -\n",
            2 * w
        ),
    );
    let cfg = common::preset("wormhole-torus-dor.ron");
    let (recs, sum) = replay_all(&cfg, &p, &elastic(Some(RecordedLatency::Constant(2 * w))));
    assert_eq!((sum.delivered, sum.read_late), (2, 1));
    let child = recs.iter().find(|r| r.id == 1).unwrap();
    // Read, and created, in the cycle after the one the driver stepped W before it.
    assert_eq!(child.created, 2 * w - w);
    // Within the window, on time.
    let (recs, sum) = replay_all(&cfg, &p, &elastic(Some(RecordedLatency::Constant(w))));
    assert_eq!(sum.read_late, 0);
    let parent = recs.iter().find(|r| r.id == 0).unwrap().delivered;
    let child = recs.iter().find(|r| r.id == 1).unwrap();
    assert_eq!(child.created, parent + 1 + w);
}

/// Elastic and dependency-driven replay of `p` (Netrace region `region`) on the dor torus
/// with `links.latency` `link`: the summaries.
fn netrace_on_torus(p: &Path, region: Option<usize>, mode: ReplayMode, link: u64) -> ReplaySummary {
    let mut cfg = common::preset("wormhole-torus-dor.ron");
    cfg.links.latency = link;
    let mut src = open_with(
        p,
        &OpenOptions {
            region,
            ..OpenOptions::default()
        },
    )
    .unwrap();
    let opts = ReplayOptions {
        mode,
        ..ReplayOptions::default()
    };
    let s = replay_machine(&cfg, src.as_mut(), &opts, &mut |_| Ok(())).unwrap();
    assert_eq!(s.delivered, s.messages);
    s
}

#[test]
fn elastic_replay_speeds_up_on_a_network_faster_than_the_recording_and_slows_down_on_a_slower() {
    // One cycle per hop against the 3 per hop Netrace's reader assumes of the recording:
    // earlier than dependency-driven replay (which never creates before the recorded
    // time) and faster than recorded; links 10 times slower: later and slower.
    for (name, region) in [
        ("netrace/example.tra.bz2", None),
        ("netrace/multiregion.tra.bz2", Some(1)),
    ] {
        let p = trace(name);
        let deps = netrace_on_torus(&p, region, ReplayMode::Deps, 1);
        let fast = netrace_on_torus(&p, region, ReplayMode::Elastic, 1);
        let slow = netrace_on_torus(&p, region, ReplayMode::Elastic, 10);
        let (d, f, s) = (
            deps.runtime.unwrap(),
            fast.runtime.unwrap(),
            slow.runtime.unwrap(),
        );
        assert!(f < d, "{name}: elastic {f} cycles, deps {d}");
        assert!(fast.speedup.unwrap() > 1.0, "{name}: {:?}", fast.speedup);
        assert!(s > f, "{name}: links 10× slower: {s} against {f} cycles");
        assert!(slow.speedup.unwrap() < 1.0, "{name}: {:?}", slow.speedup);
        // Dependency-driven replay measures against the recorded span.
        assert_eq!(deps.recorded_runtime, Some(deps.recorded_span));
        assert!(fast.recorded_runtime.unwrap() > fast.recorded_span);
        assert_eq!(fast.read_late, 0);
    }
}

#[test]
fn elastic_run_time_does_not_decrease_as_the_links_slow_down() {
    for (name, region) in [
        ("netrace/example.tra.bz2", None),
        ("netrace/lngrex.tra.bz2", None),
        ("netrace/multiregion.tra.bz2", Some(1)),
    ] {
        let p = trace(name);
        let runtimes: Vec<u64> = [1, 2, 4]
            .map(|l| {
                netrace_on_torus(&p, region, ReplayMode::Elastic, l)
                    .runtime
                    .unwrap()
            })
            .to_vec();
        assert!(
            runtimes.windows(2).all(|w| w[0] <= w[1]),
            "{name}: run times over links.latency 1, 2, 4: {runtimes:?}"
        );
    }
}

#[test]
fn recorded_latency_is_refused_outside_elastic_replay_of_a_message_trace_and_when_malformed() {
    let (_dir, text) = common::temp_file(
        "t.txt",
        "cycle src dst flits id deps\n0 0 1 2 0 1\n5 1 0 2 1 -\n",
    );
    let text = text.to_str().unwrap();
    let netrace = "traces/netrace/shrtex.tra.bz2";
    for (args, why) in [
        (
            vec![
                "--trace",
                netrace,
                "--mode",
                "deps",
                "--recorded-latency",
                "5",
            ],
            "--recorded-latency 5: applies to elastic replay (--mode elastic)",
        ),
        (
            vec!["--trace", netrace, "--recorded-latency", "hops:3"],
            "--recorded-latency hops:3: applies to elastic replay",
        ),
        (
            vec![
                "--trace",
                netrace,
                "--mode",
                "elastic",
                "--recorded-latency",
                "hops:x",
            ],
            "--recorded-latency `hops:x`: give N",
        ),
        (
            vec![
                "--trace",
                netrace,
                "--mode",
                "elastic",
                "--recorded-latency=-3",
            ],
            "--recorded-latency `-3`: give N",
        ),
        (
            vec![
                "--trace",
                text,
                "--mode",
                "elastic",
                "--recorded-latency",
                "hops:2",
            ],
            "does not say how many endpoints it has",
        ),
        (
            vec![
                "--trace",
                "traces/dumpi-sst/testtrace.meta",
                "--mode",
                "elastic",
                "--recorded-latency",
                "4",
            ],
            "applies to message traces",
        ),
    ] {
        let mut a = vec!["replay", "hw/wormhole-torus-dor.ron"];
        a.extend(args);
        common::refused(1, &a, why);
    }
    // The defaults, in the summary and the JSON: hops:3 for Netrace, 0 for text.
    for (t, want) in [(netrace, "hops:3"), (text, "0")] {
        let out = common::routemu(&[
            "replay",
            "hw/wormhole-torus-dor.ron",
            "--trace",
            t,
            "--mode",
            "elastic",
            "--json",
            "-",
        ]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{err}");
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(v["recorded_latency"], want, "{t}");
        assert_eq!(v["read_late"], 0);
        assert!(v["speedup"].as_f64().is_some() && v["runtime"].as_u64().is_some());
        assert!(err.contains(&format!("recorded latency {want}")), "{err}");
    }
    // Given: used as given.
    let out = common::routemu(&[
        "replay",
        "hw/wormhole-torus-dor.ron",
        "--trace",
        netrace,
        "--mode",
        "elastic",
        "--recorded-latency",
        "7",
        "--json",
        "-",
    ]);
    assert!(out.status.success());
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["recorded_latency"], "7");
}

fn one_trace_on_1_to_4_threads(p: &Path) {
    let opts = [ReplayMode::Open, ReplayMode::Deps].map(|mode| ReplayOptions {
        mode,
        ..ReplayOptions::default()
    });
    one_trace_on_threads(p, &opts, &[1, 2, 3, 4]);
}

/// Replays `p` with each of `opts` on `threads` (the network split into as many
/// partitions): the records and the summary are the same every time.
fn one_trace_on_threads(p: &Path, opts: &[ReplayOptions], threads: &[u32]) {
    for preset in [
        "wormhole-torus-adaptive.ron",
        "circuit-hold.ron",
        "circuit-adaptive.ron",
    ] {
        for opts in opts {
            let mode = opts.mode;
            let mut base: Option<(Vec<ReplayRecord>, String)> = None;
            for &threads in threads {
                let mut cfg = common::preset(preset);
                cfg.experiment.threads = threads;
                cfg.experiment.partition_min_nodes = Some(1);
                let (recs, mut sum) = replay_all(&cfg, p, opts);
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
    common::routemu_ok(&args(Some("block:4")));
    let doc: serde_json::Value = common::read_json(&json);
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
