//! Measurements in space and time (`experiment.observe`, `routemu run --per-link
//! --interval --series --latency-dist --message-log --heatmap`): the per-link rows add
//! up to the report's link totals, the time series integrates to the window's totals,
//! the message log has one consistent line per message, the CDF's percentiles are the
//! report's, nothing depends on the thread count or idle skipping, observing changes no
//! other result, and bad flags are refused before anything runs.

use crate::common;

use crate::common::{preset, routemu, routemu_ok};
use routemu::config::{HwConfig, LatencyTo, Measure};
use routemu::experiments::experiment::{run_experiment, run_experiment_observed};
use routemu::stats::latency_dist::percentile;
use routemu::stats::msglog::{self, LatencyRule};
use routemu::topology::Topology;
use serde_json::Value;

/// One small preset per switching mode, with a short run.
fn small(name: &str) -> HwConfig {
    let mut cfg = preset(name);
    let e = &mut cfg.experiment;
    e.replications = 1;
    e.warmup = 1_500;
    e.measure = Measure::Cycles(6_000);
    match name {
        "circuit-hold.ron" => {
            cfg =
                routemu::config::overrides::apply_overrides(&cfg, &["topology.dim=5".to_string()])
                    .unwrap();
            cfg.workload.rate *= 4.0;
        }
        "wormhole-torus-dor.ron" => cfg.workload.rate *= 3.0,
        _ => {}
    }
    cfg
}

const MODES: [&str; 5] = [
    "wormhole-torus-dor.ron",
    "circuit-hold.ron",
    "circuit-torus-hold.ron",
    "deflection-ms.ron",
    "timeout-lan-3x3.ron",
];

fn observing(mut cfg: HwConfig) -> HwConfig {
    let o = &mut cfg.experiment.observe;
    o.per_link = true;
    o.interval = Some(500);
    o.message_log = true;
    cfg
}

fn json(cfg: &HwConfig) -> Value {
    let r = run_experiment(cfg, &mut |_, _| {}).unwrap();
    serde_json::to_value(&r).unwrap()
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-12 * a.abs().max(b.abs()).max(1.0)
}

#[test]
fn per_link_rows_add_up_to_the_report_link_totals_in_every_mode() {
    for name in MODES {
        for reps in [1, 3] {
            let mut cfg = observing(small(name));
            cfg.experiment.replications = reps;
            let r = json(&cfg);
            let links = r["links"].as_array().unwrap();
            let totals = &r["link_totals"];
            assert_eq!(
                links.len() as u64,
                totals["count"].as_u64().unwrap(),
                "{name}"
            );
            let util: Vec<f64> = links
                .iter()
                .map(|l| l["utilization"].as_f64().unwrap())
                .collect();
            let mean = util.iter().sum::<f64>() / util.len() as f64;
            let max = util.iter().copied().fold(0.0, f64::max);
            let sum = |f: &str| links.iter().map(|l| l[f].as_u64().unwrap()).sum::<u64>();
            // The busy units come from the mode's own accounting (`Network::measures`),
            // the rows from its per-link one.
            assert_eq!(sum("busy"), totals["busy"].as_u64().unwrap(), "{name}");
            assert!(sum("busy") > 0, "{name}: the links carried something");
            assert!(
                close(mean, totals["utilization_mean"].as_f64().unwrap()),
                "{name} × {reps}: mean of the rows {mean} against the report's"
            );
            if reps == 1 {
                assert!(
                    close(max, totals["utilization_max"].as_f64().unwrap()),
                    "{name}: busiest row {max} against the report's"
                );
            }
            if let Some(w) = r.get("wormhole") {
                assert!(close(mean, w["link_utilization_mean"].as_f64().unwrap()));
                // Wormhole links count flits: busy and flits are the same numbers, and
                // every flit absorbed crossed hops links (at least one per message).
                assert_eq!(sum("flits"), sum("busy"));
                let per_msg = sum("headers") as f64 / r["messages"]["measured"].as_f64().unwrap();
                let hops = w["hops_mean"].as_f64().unwrap();
                assert!((per_msg - hops).abs() < 0.15 * hops, "{per_msg} vs {hops}");
            }
            if let Some(c) = r.get("circuit") {
                assert_eq!(links.len() as u64, c["links"].as_u64().unwrap(), "{name}");
            }
            assert_eq!(sum("flits"), totals["flits"].as_u64().unwrap());
            assert!(
                sum("headers") >= sum("blocking")
                    || name.starts_with("wormhole")
                    || name.starts_with("timeout")
            );
        }
    }
}

#[test]
fn the_links_array_is_bounded_to_the_busiest_and_the_totals_still_cover_every_link() {
    let mut cfg = observing(small("wormhole-torus-dor.ron"));
    cfg.experiment.observe.max_links = Some(10);
    let r = json(&cfg);
    let links = r["links"].as_array().unwrap();
    assert_eq!(links.len(), 10);
    assert_eq!(r["link_totals"]["listed"], 10);
    assert_eq!(r["link_totals"]["count"], 256);
    assert_eq!(r["routers"].as_array().unwrap().len(), 10);
    let full = json(&observing(small("wormhole-torus-dor.ron")));
    let mut all: Vec<f64> = full["links"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["utilization"].as_f64().unwrap())
        .collect();
    all.sort_by(|a, b| b.total_cmp(a));
    let least_kept = links
        .iter()
        .map(|l| l["utilization"].as_f64().unwrap())
        .fold(f64::MAX, f64::min);
    assert_eq!(least_kept, all[9], "the ten busiest are kept");
    let keys: Vec<(u64, u64)> = links
        .iter()
        .map(|l| (l["from"].as_u64().unwrap(), l["port"].as_u64().unwrap()))
        .collect();
    assert!(keys.windows(2).all(|w| w[0] < w[1]), "in node order");
}

#[test]
fn the_time_series_integrates_to_the_window_totals() {
    for name in MODES {
        let cfg = observing(small(name));
        let r = json(&cfg);
        let rows = r["series"].as_array().unwrap();
        let n = |row: &Value, f: &str| row[f].as_u64().unwrap();
        let window: Vec<&Value> = rows.iter().filter(|x| x["phase"] == "window").collect();
        // The window [1500, 7500) is twelve intervals of 500, the first one after the
        // short interval [0, 500) and two warm-up ones.
        assert_eq!(window.len(), 12, "{name}");
        assert_eq!(n(window[0], "start"), 1_500);
        assert_eq!(rows[0]["end"], 500);
        let endpoints = if name.starts_with("timeout") {
            9.0
        } else {
            r["topology"]["nodes"].as_f64().unwrap()
        };
        let flits: u64 = window.iter().map(|x| n(x, "flits")).sum();
        let accepted = r["throughput"]["accepted"].as_f64().unwrap();
        assert!(
            close(flits as f64 / (endpoints * 6_000.0), accepted),
            "{name}: Σ window flits {flits} against accepted {accepted}"
        );
        let created: u64 = window.iter().map(|x| n(x, "created")).sum();
        assert_eq!(
            created,
            r["messages"]["measured"].as_u64().unwrap(),
            "{name}"
        );
        let all = |f: &str| rows.iter().map(|x| n(x, f)).sum::<u64>();
        assert_eq!(
            all("delivered"),
            r["messages"]["delivered"].as_u64().unwrap(),
            "{name}"
        );
        assert_eq!(
            all("created"),
            r["messages"]["generated"].as_u64().unwrap(),
            "{name}"
        );
        // Rates are the integer columns per node per cycle.
        for x in rows {
            let len = (n(x, "end") - n(x, "start")) as f64;
            assert!(close(
                x["accepted"].as_f64().unwrap() * endpoints * len,
                n(x, "flits") as f64
            ));
        }
        assert_eq!(rows.last().unwrap()["phase"], "drain");
    }
}

#[test]
fn the_series_shows_a_backlog_growing_past_saturation() {
    let mut cfg = observing(small("wormhole-torus-dor.ron"));
    cfg.workload.rate *= 6.0;
    cfg.experiment.measure = Measure::Cycles(20_000);
    let r = json(&cfg);
    assert_eq!(r["saturated"], true);
    let backlog: Vec<f64> = r["series"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x["backlog"].as_f64().unwrap())
        .collect();
    assert!(backlog.len() >= 4);
    // Sources create twice what the network accepts: the backlog grows in every
    // interval, warm-up included, until the run is stopped.
    assert!(backlog.windows(2).all(|w| w[1] > w[0]), "{backlog:?}");
    assert!(backlog.last().unwrap() > &(3.0 * backlog[1]), "{backlog:?}");
}

fn log_lines(cfg: &HwConfig) -> (Value, Vec<Vec<String>>, Vec<String>) {
    let (report, mut extras) = run_experiment_observed(cfg, &mut |_, _| {}).unwrap();
    let topo = Topology::from_config(&cfg.topology).unwrap();
    let rule = LatencyRule {
        def: cfg.experiment.latency,
        ejection: cfg.router.ni.ejection_latency,
    };
    let text = msglog::render(&mut extras.messages, &topo, rule);
    let mut lines = text.lines();
    let header: Vec<String> = lines.next().unwrap().split(',').map(String::from).collect();
    let rows = lines
        .map(|l| l.split(',').map(String::from).collect())
        .collect();
    (serde_json::to_value(&report).unwrap(), rows, header)
}

#[test]
fn the_message_log_has_one_consistent_line_per_message() {
    for name in MODES {
        let mut cfg = observing(small(name));
        cfg.experiment.replications = 2;
        let (r, rows, header) = log_lines(&cfg);
        let col = |n: &str| header.iter().position(|h| h == n).unwrap();
        let (created, injected, delivered, latency) = (
            col("created"),
            col("injected"),
            col("delivered"),
            col("latency"),
        );
        let (hops, distance, path) = (col("hops"), col("distance"), col("path"));
        assert_eq!(
            rows.len() as u64,
            r["messages"]["delivered"].as_u64().unwrap(),
            "{name}"
        );
        let mut ids = std::collections::HashSet::new();
        let mut measured = 0;
        for row in &rows {
            let v = |i: usize| row[i].parse::<u64>().unwrap();
            assert!(
                ids.insert((row[0].clone(), row[1].clone())),
                "{name}: one line per message"
            );
            assert!(
                v(created) <= v(injected) && v(injected) <= v(delivered),
                "{name}: {row:?}"
            );
            assert_eq!(v(latency), v(delivered) - v(created), "{name}: {row:?}");
            assert_eq!(v(col("source_queue")) + v(col("network")), v(latency));
            let nodes: Vec<&str> = row[path].split(['>', '|']).collect();
            assert_eq!(
                nodes.first().unwrap(),
                &row[col("src")],
                "{name}: path from the source"
            );
            assert_eq!(
                nodes.last().unwrap(),
                &row[col("dst")],
                "{name}: path to the destination"
            );
            if !name.starts_with("deflection") {
                // Minimal routing (e-cube, dimension order, source routes): as many hops
                // as the distance, and the path has them.
                assert_eq!(v(hops), v(distance), "{name}: {row:?}");
                assert_eq!(nodes.len() as u64, v(hops) + 1, "{name}: {row:?}");
            } else {
                assert!(v(hops) >= v(distance), "{name}: {row:?}");
            }
            measured += v(col("measured"));
        }
        assert_eq!(
            measured,
            r["messages"]["measured"].as_u64().unwrap(),
            "{name}"
        );
        // Lines are in replication, then delivery order.
        let key = |row: &Vec<String>| {
            (
                row[0].parse::<u64>().unwrap(),
                row[delivered].parse::<u64>().unwrap(),
            )
        };
        assert!(rows.windows(2).all(|w| key(&w[0]) <= key(&w[1])), "{name}");
    }
}

#[test]
fn the_log_follows_the_latency_definition() {
    let mut cfg = observing(small("wormhole-torus-dor.ron"));
    cfg.experiment.latency.to = LatencyTo::TailArrived;
    let (r, rows, header) = log_lines(&cfg);
    let col = |n: &str| header.iter().position(|h| h == n).unwrap();
    let e = cfg.router.ni.ejection_latency;
    let mut sum = 0;
    for row in &rows {
        let v = |i: usize| row[i].parse::<u64>().unwrap();
        assert_eq!(
            v(col("latency")),
            v(col("delivered")) - e - v(col("created"))
        );
        if v(col("measured")) == 1 {
            sum += v(col("latency"));
        }
    }
    let mean = sum as f64 / r["messages"]["measured"].as_f64().unwrap();
    assert!(
        close(mean, r["latency"]["mean"].as_f64().unwrap()),
        "{mean}"
    );
}

#[test]
fn the_cdf_percentiles_equal_the_reports() {
    let dir = tempfile::tempdir().unwrap();
    let (j, d, c) = (
        dir.path().join("r.json"),
        dir.path().join("d.json"),
        dir.path().join("d.csv"),
    );
    for hw in ["hw/wormhole-torus-dor.ron", "hw/circuit-torus-hold.ron"] {
        for (dist, csv) in [(&d, false), (&c, true)] {
            routemu_ok(&[
                "run",
                hw,
                "--warmup",
                "1000",
                "--cycles",
                "8000",
                "--replications",
                "2",
                "--json",
                j.to_str().unwrap(),
                "--latency-dist",
                dist.to_str().unwrap(),
            ]);
            let r: Value = common::read_json(&j);
            let text = std::fs::read_to_string(dist).unwrap();
            let curves: Vec<(&str, Vec<routemu::stats::latency_dist::Bucket>)> = if csv {
                let mut by: std::collections::BTreeMap<String, Vec<_>> = Default::default();
                for line in text.lines().skip(1) {
                    let f: Vec<&str> = line.split(',').collect();
                    by.entry(f[0].to_string()).or_default().push(
                        routemu::stats::latency_dist::Bucket {
                            value: f[1].parse().unwrap(),
                            count: f[2].parse().unwrap(),
                            cumulative: f[3].parse().unwrap(),
                            cdf: f[4].parse().unwrap(),
                        },
                    );
                }
                ["latency", "source_queue", "network"]
                    .into_iter()
                    .map(|q| (q, by.remove(q).unwrap()))
                    .collect()
            } else {
                let v: Value = serde_json::from_str(&text).unwrap();
                ["latency", "source_queue", "network"]
                    .into_iter()
                    .map(|q| (q, serde_json::from_value(v[q]["buckets"].clone()).unwrap()))
                    .collect()
            };
            for (q, buckets) in curves {
                let want = if q == "latency" {
                    &r["latency"]
                } else {
                    &r["latency"]["phases"][q]
                };
                let total = buckets.last().unwrap().cumulative;
                assert_eq!(buckets.iter().map(|b| b.count).sum::<u64>(), total);
                for (p, f) in [(0.5, "p50"), (0.9, "p90"), (0.99, "p99")] {
                    assert_eq!(
                        percentile(&buckets, total, p),
                        want[f].as_u64(),
                        "{hw} {q} {f} (csv: {csv})"
                    );
                }
                assert_eq!(
                    buckets.last().map(|b| b.value),
                    want["max"].as_u64(),
                    "{hw} {q}"
                );
                assert_eq!(buckets.last().unwrap().cdf, 1.0);
            }
        }
    }
}

#[test]
fn observations_do_not_depend_on_threads_or_idle_skipping() {
    for name in MODES {
        let mut cfg = observing(small(name));
        cfg.experiment.replications = 2;
        cfg.experiment.partition_min_nodes = Some(1);
        let run = |cfg: &HwConfig| {
            let (report, mut extras) = run_experiment_observed(cfg, &mut |_, _| {}).unwrap();
            let v = common::statistics(&report);
            let topo = Topology::from_config(&cfg.topology).unwrap();
            let rule = LatencyRule {
                def: cfg.experiment.latency,
                ejection: cfg.router.ni.ejection_latency,
            };
            let log = msglog::render(&mut extras.messages, &topo, rule);
            (v, log, extras.latency.csv(), extras.links.len())
        };
        let one = run(&cfg);
        assert!(one.0["links"].is_array() && one.0["series"].is_array());
        for t in [2, 3] {
            let mut c = cfg.clone();
            c.experiment.threads = t;
            assert_eq!(one, run(&c), "{name} with {t} threads");
        }
        let mut c = cfg.clone();
        c.experiment.idle_skip = false;
        assert_eq!(one, run(&c), "{name} without idle skipping");
    }
}

#[test]
fn observing_changes_no_other_result() {
    for name in MODES {
        let cfg = small(name);
        let strip = |mut v: Value| {
            let o = v.as_object_mut().unwrap();
            for k in [
                "wall_seconds",
                "node_cycles_per_second",
                "config",
                "links",
                "link_totals",
                "routers",
                "series",
            ] {
                o.remove(k);
            }
            v
        };
        assert_eq!(
            strip(json(&cfg)),
            strip(json(&observing(cfg.clone()))),
            "{name}"
        );
    }
}

fn fails_with(args: &[&str], needle: &str) {
    let out = routemu(args);
    assert!(!out.status.success(), "{args:?} should fail");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains(needle), "{args:?}: {err}");
    assert!(!err.contains("panicked"), "{err}");
}

#[test]
fn bad_measurement_flags_are_refused_before_the_run() {
    let hw = "hw/wormhole-torus-dor.ron";
    fails_with(&["run", hw, "--series", "-"], "--series needs --interval");
    fails_with(&["run", hw, "--interval", "0"], "--interval 0");
    fails_with(&["run", hw, "--max-links", "0"], "--max-links 0");
    fails_with(
        &[
            "run",
            hw,
            "--heatmap",
            "x.svg",
            "--heatmap-quantity",
            "colour",
        ],
        "heat map quantity",
    );
    fails_with(
        &["run", hw, "--json", "-", "--latency-dist", "-"],
        "all write to standard output",
    );
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("no/such/dir/s.csv");
    fails_with(
        &[
            "run",
            hw,
            "--interval",
            "100",
            "--series",
            missing.to_str().unwrap(),
        ],
        "does not exist",
    );
    fails_with(
        &["run", hw, "--set", "topology.k=300", "--heatmap", "h.svg"],
        "a heat map draws at most",
    );
    fails_with(
        &["run", hw, "--set", "experiment.observe.interval=Some(0)"],
        "experiment.observe.interval = 0",
    );
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        0,
        "nothing written"
    );
}

#[test]
fn every_output_flag_writes_to_standard_output_with_a_dash() {
    let base = [
        "run",
        "hw/wormhole-torus-dor.ron",
        "--warmup",
        "500",
        "--cycles",
        "2000",
        "--replications",
        "1",
    ];
    for (flags, first) in [
        (
            vec!["--interval", "500", "--series", "-"],
            "start,end,phase",
        ),
        (vec!["--latency-dist", "-"], "quantity,value,count"),
        (vec!["--message-log", "-"], "replication,id,seq"),
        (vec!["--heatmap", "-"], "<svg"),
    ] {
        let mut args = base.to_vec();
        args.extend(flags.iter());
        let out = routemu_ok(&args);
        let text = String::from_utf8(out.stdout).unwrap();
        assert!(
            text.starts_with(first),
            "{flags:?}: {}",
            &text[..text.len().min(80)]
        );
        assert!(
            String::from_utf8_lossy(&out.stderr).contains("routemu run:"),
            "the summary goes to standard error"
        );
    }
}

#[test]
fn the_heat_map_draws_every_link_on_the_topology() {
    let dir = tempfile::tempdir().unwrap();
    for (hw, links) in [
        ("hw/wormhole-torus-dor.ron", 256),
        ("hw/deflection-ms.ron", 72),
        ("hw/timeout-lan-3x3.ron", 54),
    ] {
        let svg = dir.path().join("h.svg");
        routemu_ok(&[
            "run",
            hw,
            "--warmup",
            "500",
            "--cycles",
            "3000",
            "--replications",
            "1",
            "--max-links",
            "5",
            "--heatmap",
            svg.to_str().unwrap(),
            "--heatmap-quantity",
            "blocking",
        ]);
        let text = std::fs::read_to_string(&svg).unwrap();
        assert!(text.starts_with("<svg") && text.trim_end().ends_with("</svg>"));
        // Every link, whatever --max-links bounds the JSON to.
        assert_eq!(text.matches("<path ").count(), links, "{hw}");
        assert!(text.contains("header blocking"));
    }
}

/// Deflection run on one thread links each message's hops as it records them (the log
/// then skips its own grouping pass); the text is the one the log's grouping gives,
/// for messages of one segment and of several, with drops (hop limit) or without.
#[test]
fn hops_the_deflection_engine_links_give_the_text_the_logs_grouping_gives() {
    for name in ["deflection-ms.ron", "deflection-ms-hop-limit.ron"] {
        let mut cfg = observing(small(name));
        cfg.experiment.threads = 1;
        let (_, extras) = run_experiment_observed(&cfg, &mut |_, _| {}).unwrap();
        let topo = Topology::from_config(&cfg.topology).unwrap();
        let rule = LatencyRule {
            def: cfg.experiment.latency,
            ejection: cfg.router.ni.ejection_latency,
        };
        let mut linked = extras.messages.clone();
        let ds = &linked[0].deliveries;
        let hops = linked[0].hops.len();
        let with_link = ds.iter().filter(|d| (d.last_hop as usize) < hops).count();
        // Only messages some of whose segments were dropped are left to the log.
        if name == "deflection-ms.ron" {
            assert_eq!(with_link, ds.len(), "{name}: every message linked");
        }
        assert!(
            with_link * 10 >= ds.len() * 9,
            "{name}: {with_link} of {}",
            ds.len()
        );
        let text = msglog::render(&mut linked, &topo, rule);
        let mut grouped = extras.messages.clone();
        for r in &mut grouped {
            for d in &mut r.deliveries {
                d.last_hop = routemu::engine::probe::observe::NO_HOP;
            }
        }
        assert_eq!(text, msglog::render(&mut grouped, &topo, rule), "{name}");
        let paths: Vec<&str> = text
            .lines()
            .skip(1)
            .map(|l| l.rsplit(',').next().unwrap())
            .collect();
        assert!(
            paths.iter().all(|p| !p.is_empty()),
            "{name}: a path missing"
        );
        assert!(
            paths.iter().any(|p| p.contains('|')),
            "{name}: no message of several segments"
        );
    }
}
