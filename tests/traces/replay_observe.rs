//! A replay's measurements (docs/measurements.md, "Replay"): per-rank communication adds
//! up to the totals, the lag behind the recorded times moves when the routers slow
//! down, a trace without dependencies is said to replay the same in both modes, and the
//! space and time measurements of `routemu run` (per message too) add up and do not
//! depend on the thread count.

use crate::common;

use routemu::config::HwConfig;
use routemu::experiments::replay::{
    replay_machine, replay_machine_observed, ReplayMode, ReplayOptions, ReplayRecord, ReplaySummary,
};
use routemu::experiments::traces::open;
use std::path::{Path, PathBuf};

fn trace(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("traces")
        .join(name)
}

fn summary(cfg: &HwConfig, p: &Path, opts: &ReplayOptions) -> ReplaySummary {
    let mut src = open(p).unwrap();
    let s = replay_machine(cfg, src.as_mut(), opts, &mut |_| Ok(())).unwrap();
    assert_eq!(s.delivered, s.messages);
    s
}

fn deps() -> ReplayOptions {
    ReplayOptions {
        mode: ReplayMode::Deps,
        ..ReplayOptions::default()
    }
}

#[test]
fn per_rank_counts_add_up_to_the_totals() {
    let cfg = common::preset("wormhole-torus-dor.ron");
    let s = summary(&cfg, &trace("netrace/example.tra.bz2"), &deps());
    assert_eq!(s.ranks.len(), s.rank_count);
    assert_eq!(s.ranks.iter().map(|r| r.messages).sum::<u64>(), s.delivered);
    assert_eq!(s.ranks.iter().map(|r| r.flits).sum::<u64>(), s.flits);
    let slowest = s.slowest_rank.clone().unwrap();
    assert_eq!(
        slowest.last_delivery, s.cycles,
        "the slowest rank ends the replay"
    );
    assert!(s.ranks.windows(2).all(|w| w[0].rank < w[1].rank));
    let total: u64 = s.ranks.iter().map(|r| r.latency_total).sum();
    let mean = total as f64 / s.delivered as f64;
    assert!((mean - s.latency_mean.unwrap()).abs() < 1e-6 * mean.max(1.0));
    // Both spans start at the first recorded time, and no message is created before its
    // recorded time: a replay is never faster than its recording.
    assert!(s.first_created.unwrap() >= s.cycles - s.replayed_span);
    assert!(s.replayed_span > s.recorded_span, "{s:?}");
    assert!(s.dependencies > 0);
    // Bounded: the latest to finish, the slowest among them.
    let few = summary(
        &cfg,
        &trace("netrace/example.tra.bz2"),
        &ReplayOptions {
            max_ranks: Some(2),
            ..deps()
        },
    );
    assert_eq!(few.ranks.len(), 2.min(s.rank_count));
    assert!(few.ranks.contains(&slowest));
    assert_eq!(few.rank_count, s.rank_count);
}

#[test]
fn the_lag_behind_the_recorded_times_grows_with_the_routing_delay() {
    let p = trace("netrace/example.tra.bz2");
    let at = |route: u64| {
        let mut cfg = common::preset("wormhole-torus-dor.ron");
        cfg.router.controller.route = route;
        summary(&cfg, &p, &deps())
    };
    let (fast, slow) = (at(1), at(8));
    let lag = |s: &ReplaySummary| (s.created_lag_mean.unwrap(), s.delivered_lag_mean.unwrap());
    assert!(
        lag(&slow).0 > lag(&fast).0 && lag(&slow).1 > lag(&fast).1,
        "route 1: {:?}, route 8: {:?}",
        lag(&fast),
        lag(&slow)
    );
    assert!(slow.created_lag_total > fast.created_lag_total);
    // Open loop creates every message at its recorded time.
    let mut cfg = common::preset("wormhole-torus-dor.ron");
    cfg.router.controller.route = 8;
    let open = summary(&cfg, &p, &ReplayOptions::default());
    assert_eq!((open.created_lag_max, open.created_late), (Some(0), 0));
}

#[test]
fn a_trace_without_dependencies_is_said_to_replay_as_open_loop() {
    let (_dir, t) = common::temp_file(
        "t.txt",
        "time src dst flits\n0 0 5 4\n3 5 0 2\n3 1 2 8\n9 2 1 1\n",
    );
    let run = |mode: &str| {
        let out = common::routemu_ok(&[
            "replay",
            "hw/wormhole-torus-dor.ron",
            "--trace",
            t.to_str().unwrap(),
            "--mode",
            mode,
            "--json",
            "-",
        ]);
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        (String::from_utf8_lossy(&out.stderr).to_string(), v)
    };
    let (text, v) = run("deps");
    assert!(
        text.contains("none in the trace: --mode deps is the same as open loop"),
        "{text}"
    );
    assert_eq!(v["dependencies"], 0);
    assert_eq!(v["ranks"].as_array().unwrap().len(), 4);
    assert!(text.contains("slowest, rank"), "{text}");
    let (_, open) = run("open");
    assert_eq!(v["cycles"], open["cycles"]);
    assert_eq!(v["latency_mean"], open["latency_mean"]);
    // With dependencies, the summary says they were followed.
    let (text, _) = {
        let out = common::routemu(&[
            "replay",
            "hw/wormhole-torus-dor.ron",
            "--trace",
            "traces/netrace/shrtex.tra.bz2",
            "--mode",
            "deps",
        ]);
        assert!(out.status.success());
        (String::from_utf8_lossy(&out.stdout).to_string(), ())
    };
    assert!(text.contains("in the trace, followed"), "{text}");
}

#[test]
fn per_link_flits_add_up_to_flits_times_hops_and_the_series_to_the_totals() {
    for preset in ["wormhole-torus-dor.ron", "circuit-hold.ron"] {
        let mut cfg = common::preset(preset);
        cfg.experiment.observe.per_link = true;
        cfg.experiment.observe.max_links = None;
        cfg.experiment.observe.interval = Some(500);
        let mut src = open(&trace("netrace/example.tra.bz2")).unwrap();
        let mut recs: Vec<ReplayRecord> = Vec::new();
        let (s, extras) = replay_machine_observed(&cfg, src.as_mut(), &deps(), &mut |r| {
            recs.push(r.clone());
            Ok(())
        })
        .unwrap();
        let flit_hops: u64 = recs.iter().map(|r| r.flits as u64 * r.hops as u64).sum();
        let links = s.links.as_ref().unwrap();
        let totals = s.link_totals.as_ref().unwrap();
        assert_eq!(links.len(), totals.count, "{preset}: every link listed");
        assert_eq!(
            links.iter().map(|l| l.flits).sum::<u64>(),
            flit_hops,
            "{preset}"
        );
        assert_eq!(totals.flits, flit_hops, "{preset}");
        assert_eq!(extras.links.len(), links.len());
        let series = s.series.as_ref().unwrap();
        assert_eq!(series.iter().map(|r| r.delivered).sum::<u64>(), s.delivered);
        assert_eq!(series.iter().map(|r| r.created).sum::<u64>(), s.messages);
        assert_eq!(series.iter().map(|r| r.flits).sum::<u64>(), s.flits);
        let lat: f64 = series
            .iter()
            .filter_map(|r| Some(r.latency_mean? * r.delivered as f64))
            .sum();
        let want = s.latency_mean.unwrap() * s.delivered as f64;
        assert!(
            (lat - want).abs() < 1e-6 * want,
            "{preset}: {lat} vs {want}"
        );
        assert!(
            series.last().unwrap().end > s.cycles,
            "the series covers the replay"
        );
        assert_eq!(extras.latency.total.len(), s.delivered);
    }
}

#[test]
fn the_command_writes_the_same_measurements_on_1_and_3_threads() {
    let dir = tempfile::tempdir().unwrap();
    let run = |threads: &str| {
        let f = |n: &str| {
            dir.path()
                .join(format!("{n}{threads}"))
                .to_str()
                .unwrap()
                .to_string()
        };
        let (json, svg, csv, dist) = (f("r.json"), f("h.svg"), f("s.csv"), f("l.csv"));
        let log = f("m.csv");
        common::routemu_ok(&[
            "replay",
            "hw/wormhole-torus-adaptive.ron",
            "--trace",
            "traces/netrace/example.tra.bz2",
            "--mode",
            "deps",
            "--threads",
            threads,
            "--set",
            "experiment.partition_min_nodes=1",
            "--per-link",
            "--max-links",
            "20",
            "--interval",
            "700",
            "--heatmap",
            &svg,
            "--heatmap-quantity",
            "flits",
            "--series",
            &csv,
            "--latency-dist",
            &dist,
            "--message-log",
            &log,
            "--json",
            &json,
        ]);
        let mut v: serde_json::Value = common::read_json(json.as_ref());
        assert_eq!(v["partitions"], threads.parse::<u32>().unwrap());
        let o = v.as_object_mut().unwrap();
        for k in ["partitions", "partitioning", "routemu", "command", "config"] {
            o.remove(k);
        }
        assert_eq!(v["links"].as_array().unwrap().len(), 20);
        assert!(v["routers"].is_array() && v["series"].is_array());
        let read = |p: &str| std::fs::read_to_string(p).unwrap();
        let log = read(&log);
        assert_eq!(
            log.lines().count() as u64,
            v["delivered"].as_u64().unwrap() + 1
        );
        (v, read(&svg), read(&csv), read(&dist), log)
    };
    let (one, three) = (run("1"), run("3"));
    assert!(one.0 == three.0, "JSON differs:\n{}\n{}", one.0, three.0);
    assert!(
        one.1.contains("<svg") && one.1 == three.1,
        "heat maps differ"
    );
    assert_eq!(one.2, three.2, "series differ");
    assert_eq!(one.3, three.3, "latency distributions differ");
    assert_eq!(one.4, three.4, "message logs differ");
}

#[test]
fn replay_refuses_bad_measurement_flags_before_it_starts() {
    for (args, why) in [
        (vec!["--series", "s.csv"], "--series needs --interval"),
        (
            vec!["--json", "-", "--latency-dist", "-"],
            "standard output",
        ),
    ] {
        let mut all = vec![
            "replay",
            "hw/wormhole-torus-dor.ron",
            "--trace",
            "traces/netrace/shrtex.tra.bz2",
        ];
        all.extend(args);
        let out = common::routemu(&all);
        assert_eq!(out.status.code(), Some(1));
        let e = String::from_utf8_lossy(&out.stderr);
        assert!(e.contains(why), "{e}");
    }
}
