//! The saturation search (`routemu saturation`, `experiments::saturation::search`): where it
//! lands on a network whose saturation is known, that it ranks a better machine higher,
//! that its result does not depend on how it is run, and that it refuses what makes no
//! sense. Windows are short so that the file runs in seconds.

use crate::common::{self, preset, routemu};
use routemu::config::overrides::apply_overrides;
use routemu::config::{HwConfig, Measure};
use routemu::experiments::saturation::{search, Criterion, SaturationOptions, SaturationResult};

/// `cfg` with `sets` applied and a short warm-up and window.
fn machine(cfg: &HwConfig, sets: &[&str], warmup: u64, window: u64) -> HwConfig {
    let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
    let mut c = apply_overrides(cfg, &sets).expect("overrides apply");
    c.experiment.warmup = warmup;
    c.experiment.measure = Measure::Cycles(window);
    c
}

/// A 4×4 dimension-order torus (paper 004's router), short windows.
fn small_torus(sets: &[&str]) -> HwConfig {
    let mut all = vec!["topology.k=4"];
    all.extend_from_slice(sets);
    machine(&preset("wormhole-torus-dor.ron"), &all, 2000, 11264)
}

fn run(cfg: &HwConfig, opts: &SaturationOptions) -> SaturationResult {
    search(cfg, opts, &mut |_| {}).expect("search runs")
}

fn opts(replications: u32, tolerance: f64) -> SaturationOptions {
    SaturationOptions {
        replications,
        tolerance,
        ..SaturationOptions::default()
    }
}

#[test]
fn the_8x8_dor_torus_saturates_where_booksim_does() {
    // BookSim2's minimum router on the 8×8 torus saturates at 0.517 flits/node/cycle
    // (docs/booksim.md); dimension-order tori of this size saturate at 0.49–0.54.
    let cfg = machine(&preset("booksim-min-torus8.ron"), &[], 4000, 11264);
    let r = run(&cfg, &opts(3, 0.02));
    let s = &r.saturation;
    assert!(
        (0.49..=0.54).contains(&s.throughput.0),
        "saturation {} ± {:?}",
        s.throughput,
        s.ci95
    );
    assert_eq!(s.criterion, Criterion::Backlog);
    assert_eq!(s.per_replication.len(), 3);
    for rep in &r.replications {
        // Every replication bracketed its saturation within the tolerance.
        let hi = rep.unsustained.expect("an unsustained load was found").0;
        assert!(hi - rep.sustained.0 <= 0.02 * hi + 1e-12);
        // The throughput is what the largest sustained probe accepted.
        let best = rep
            .probes
            .iter()
            .filter(|p| p.sustained)
            .max_by(|a, b| a.load.0.total_cmp(&b.load.0))
            .unwrap();
        assert_eq!(best.accepted, rep.throughput);
        // Every probe past it was judged not sustained.
        assert!(rep
            .probes
            .iter()
            .filter(|p| p.load.0 >= hi)
            .all(|p| !p.sustained));
    }
}

#[test]
fn more_virtual_channels_rank_higher() {
    // BookSim's minimum router on a 4×4 torus: with 2 VCs each half of the dimension-order
    // split has one, so a blocked worm stops every message behind it; 8 VCs give 4 each.
    let booksim = |vcs: &str| {
        machine(
            &preset("booksim-min-torus8.ron"),
            &["topology.k=4", vcs],
            2000,
            11264,
        )
    };
    let weak = run(&booksim("router.vcs=2"), &opts(3, 0.02));
    let strong = run(&booksim("router.vcs=8"), &opts(3, 0.02));
    let (w, s) = (&weak.saturation, &strong.saturation);
    // The intervals do not overlap: the ranking is not a matter of noise.
    assert!(
        s.throughput.0 - s.ci95.unwrap().0 > w.throughput.0 + w.ci95.unwrap().0,
        "weak {} ± {:?}, strong {} ± {:?}",
        w.throughput,
        w.ci95,
        s.throughput,
        s.ci95
    );
    // Every replication of the stronger machine beats every one of the weaker.
    let best_weak = w.per_replication.iter().map(|x| x.0).fold(0.0, f64::max);
    assert!(s.per_replication.iter().all(|x| x.0 > best_weak));
}

#[test]
fn wider_links_rank_higher() {
    let narrow = run(&small_torus(&[]), &opts(2, 0.02));
    let wide = run(&small_torus(&["links.width=2"]), &opts(2, 0.02));
    assert!(wide.saturation.throughput.0 > 1.3 * narrow.saturation.throughput.0);
    // The first bracket follows the link width.
    assert_eq!(wide.upper.0, 2.0 * narrow.upper.0);
}

#[test]
fn the_result_does_not_depend_on_jobs_threads_or_later_replications() {
    // Short windows and a coarse tolerance: only the equality matters here.
    let base = machine(
        &preset("wormhole-torus-dor.ron"),
        &["topology.k=4"],
        1000,
        4096,
    );
    let serial = run(&base, &opts(2, 0.05));
    // Three replications side by side, each on two partitions of the network.
    let mut parallel = base.clone();
    parallel.experiment.jobs = 2;
    parallel.experiment.threads = 2;
    parallel.experiment.partition_min_nodes = Some(1);
    let three = run(&parallel, &opts(3, 0.05));
    // Replications 0 and 1 probed the same loads and saw the same things.
    assert_eq!(three.replications[..2], serial.replications[..]);
    assert_eq!(
        three.saturation.per_replication[..2],
        serial.saturation.per_replication[..]
    );
}

#[test]
fn a_latency_bound_is_stricter_than_backlog_growth() {
    let cfg = small_torus(&[]);
    let backlog = run(&cfg, &opts(2, 0.02));
    let latency = run(
        &cfg,
        &SaturationOptions {
            criterion: Criterion::Latency(1.5),
            ..opts(2, 0.02)
        },
    );
    assert!(latency.saturation.throughput.0 < backlog.saturation.throughput.0);
    for rep in &latency.replications {
        // The zero-load probe comes first and sets the bound.
        let zero = rep.zero_load_latency.expect("zero-load latency measured");
        assert_eq!(rep.probes[0].latency, Some(zero));
        for p in &rep.probes[1..] {
            if p.sustained {
                assert!(p.latency.unwrap() <= 1.5 * zero);
            }
        }
    }
}

#[test]
fn the_json_carries_the_result_the_options_and_what_it_ran_on() {
    let out = routemu(&[
        "saturation",
        "hw/wormhole-torus-dor.ron",
        "--set",
        "topology.k=4",
        "--warmup",
        "2000",
        "--cycles",
        "11264",
        "--replications",
        "3",
        "--tolerance",
        "0.02",
        "--max-ci",
        "0.5",
        "--json",
        "-",
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    // With `--json -` the summary goes to standard error.
    assert!(stderr.contains("saturation throughput"), "{stderr}");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON on stdout");
    let s = &v["saturation"];
    let throughput = s["throughput"].as_f64().unwrap();
    assert!(throughput > 0.3 && throughput < 2.0, "{throughput}");
    assert!(s["ci95"].as_f64().unwrap() > 0.0);
    assert_eq!(s["criterion"], "backlog");
    assert_eq!(s["rankable"], true);
    assert_eq!(s["per_replication"].as_array().unwrap().len(), 3);
    assert_eq!(v["config"]["topology"]["Torus"]["k"], 4);
    assert!(v["routemu"]["version"].is_string());
    assert_eq!(v["schema"], "routemu.saturation/1");
    assert!(v["command"].as_str().unwrap().contains("saturation"));
    assert!(v["command"].as_str().unwrap().contains("topology.k=4"));
    assert_eq!(v["options"]["replications"], 3);
    let probe = &v["replications"][0]["probes"][0];
    for key in [
        "load",
        "offered",
        "accepted",
        "latency",
        "backlog_slope",
        "sustained",
        "reason",
    ] {
        assert!(probe.get(key).is_some(), "probe without {key}: {probe}");
    }
}

#[test]
fn an_interval_too_wide_to_rank_is_flagged_with_exit_status_4() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("sat.json");
    let out = routemu(&[
        "saturation",
        "hw/wormhole-torus-dor.ron",
        "--set",
        "topology.k=4",
        "--warmup",
        "1000",
        "--cycles",
        "4096",
        "--replications",
        "1",
        "--tolerance",
        "0.05",
        "--json",
        file.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(4));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("NOT RANKABLE"), "{stdout}");
    // The result is still written, flagged, with the reason.
    let v: serde_json::Value = common::read_json(&file);
    assert_eq!(v["saturation"]["rankable"], false);
    assert!(v["saturation"]["ci95"].is_null());
    assert!(v["saturation"]["reason"]
        .as_str()
        .unwrap()
        .contains("no confidence interval"));
}

#[test]
fn searches_that_make_no_sense_are_refused_with_a_message() {
    let dor = "hw/wormhole-torus-dor.ron";
    let cases: &[(&str, &[&str], &str)] = &[
        // Saturated sources (timeout switching's) have no rate to search on.
        (
            "hw/timeout-lan-3x3.ron",
            &["--set", "workload.process=Saturated(depth: 4)"],
            "saturated sources ignore the rate",
        ),
        (dor, &["--messages", "1000"], "--cycles"),
        (dor, &["--rate", "0.01"], "chooses the load"),
        (dor, &["--load", "0.3"], "chooses the load"),
        (dor, &["--cycles", "1000"], "at least 4096"),
        (dor, &["--criterion", "latency:1"], "criterion"),
        (dor, &["--tolerance", "0"], "tolerance"),
        (dor, &["--upper=-1"], "upper bound"),
        (dor, &["--set", "router.vcs=0"], "invalid configuration"),
        ("hw/no-such-machine.ron", &[], "no-such-machine"),
    ];
    for (hw, args, message) in cases {
        let mut all = vec!["saturation", hw];
        all.extend_from_slice(args);
        let stderr = common::refused(1, &all, message);
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
    }
}
