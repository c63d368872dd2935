//! The block partitioner (`experiment.partitioner = Blocks`) changes which node a
//! partition steps, never a result: every preset it can cut gives the report of one
//! partition on 2 to 5 block partitions (per-link and per-router arrays, time series and
//! the per-message log included), a replay too; the report says which partitioner cut
//! the network and how many links it cut, fewer than slabs where blocks pay; a network
//! of hosts and switches is refused with a message.

use crate::common;

use routemu::config::{HwConfig, Partitioner};
use routemu::experiments::experiment::run_experiment;
use serde_json::Value;

/// Preset `name` cut short, with per-link arrays and a time series: windows as long as it
/// takes for each mode's events to cross the blocks' boundaries (`common::split_events`)
/// and for three samples of the series at least, and one replication: the partitioner
/// places the nodes alike in every replication (partitions.rs compares replications on
/// partitions).
fn short(name: &str, cfg: HwConfig) -> HwConfig {
    let mut cfg = common::cut_short(name, cfg, [(2_000, 6_000), (0, 0), (500, 1_500)]);
    cfg.experiment.replications = 1;
    let o = &mut cfg.experiment.observe;
    o.per_link = true;
    o.interval = Some(500);
    cfg
}

fn run(cfg: &HwConfig) -> Value {
    let r = run_experiment(cfg, &mut |_, _| {}).unwrap();
    serde_json::to_value(&r).unwrap()
}

#[test]
fn every_preset_but_host_networks_gives_one_partition_s_report_on_2_to_5_blocks() {
    let mut seen = std::collections::BTreeSet::new();
    for (name, cfg) in common::all_presets() {
        if name.starts_with("timeout") {
            continue;
        }
        let cfg = short(&name, cfg);
        let one = common::without_split(run(&cfg));
        seen.extend(common::split_events(&one));
        for t in [2, 3, 4, 5] {
            let mut c = cfg.clone();
            c.experiment.threads = t;
            c.experiment.partitioner = Partitioner::Blocks;
            let v = run(&c);
            assert_eq!(v["partitioning"]["partitions"], t, "{name}");
            let diff = common::json_diff(&one, &common::without_split(v));
            assert!(
                diff.is_empty(),
                "{name} on {t} blocks: {:#?}",
                &diff[..diff.len().min(20)]
            );
        }
    }
    // Hold timeouts need circuit-torus-hold's long window (partitions.rs pays it); timeout
    // resets happen on networks of hosts, which blocks do not cut.
    common::assert_split_events(&seen, &["hold timeouts", "timeout resets"]);
}

#[test]
fn blocks_cut_fewer_links_of_a_mesh_than_slabs_and_the_report_says_so() {
    let mut cfg = short("wormhole", common::preset("wormhole-mesh-dor.ron"));
    cfg.experiment.threads = 4;
    let slabs = run(&cfg);
    cfg.experiment.partitioner = Partitioner::Blocks;
    let blocks = run(&cfg);
    let k = cfg_k(&cfg);
    // Four slabs of k/4 rows: three row boundaries of k links each way; four blocks:
    // one row and one column boundary.
    assert_eq!(slabs["partitioning"]["partitioner"], "Contiguous");
    assert_eq!(slabs["partitioning"]["cut_links"], 6 * k);
    assert_eq!(blocks["partitioning"]["partitioner"], "Blocks");
    assert_eq!(blocks["partitioning"]["cut_links"], 4 * k);
    assert_eq!(common::without_split(slabs), common::without_split(blocks));
}

fn cfg_k(cfg: &HwConfig) -> u64 {
    match cfg.topology {
        routemu::config::TopologyConfig::Mesh { k, .. } => k as u64,
        _ => panic!("a mesh preset"),
    }
}

#[test]
fn a_hypercube_split_a_power_of_two_ways_is_reported_as_the_contiguous_split_it_is() {
    let mut cfg = short("wormhole", common::preset("wormhole-hypercube.ron"));
    cfg.experiment.threads = 4;
    cfg.experiment.partitioner = Partitioner::Blocks;
    let v = run(&cfg);
    assert_eq!(v["partitioning"]["partitioner"], "Contiguous");
    assert_eq!(v["partitioning"]["partitions"], 4);
}

#[test]
fn the_message_log_and_a_replay_are_the_same_on_blocks() {
    let dir = tempfile::tempdir().unwrap();
    let path = |f: &str| dir.path().join(f).to_str().unwrap().to_string();
    let common_args = [
        "--set",
        "experiment.partition_min_nodes=1",
        "--set",
        "experiment.warmup=1000",
        "--set",
        "experiment.measure=Cycles(3000)",
    ];
    for (tag, threads, blocks) in [("one", "1", false), ("blocks", "3", true)] {
        let mut args = vec![
            "run".to_string(),
            "hw/deflection-ms.ron".into(),
            "--threads".into(),
            threads.into(),
            "--message-log".into(),
            path(&format!("{tag}.csv")),
            "--json".into(),
            path(&format!("{tag}.json")),
        ];
        args.extend(common_args.iter().map(|s| s.to_string()));
        if blocks {
            args.extend(["--set".into(), "experiment.partitioner=Blocks".into()]);
        }
        let o = common::routemu(&args.iter().map(String::as_str).collect::<Vec<_>>());
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let mut args = vec![
            "replay".to_string(),
            "hw/wormhole-torus-dor.ron".into(),
            "--trace".into(),
            "traces/netrace/example.tra.bz2".into(),
            "--mode".into(),
            "deps".into(),
            "--threads".into(),
            threads.into(),
            "--per-link".into(),
            "--set".into(),
            "experiment.partition_min_nodes=1".into(),
            "--json".into(),
            path(&format!("{tag}-replay.json")),
            "--trace-log".into(),
            path(&format!("{tag}-replay.csv")),
        ];
        if blocks {
            args.extend(["--set".into(), "experiment.partitioner=Blocks".into()]);
        }
        let o = common::routemu(&args.iter().map(String::as_str).collect::<Vec<_>>());
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    }
    let read = |f: &str| std::fs::read(path(f)).unwrap();
    let json = |f: &str| common::without_split(serde_json::from_slice(&read(f)).unwrap());
    assert!(read("one.csv").len() > 1000);
    assert_eq!(read("one.csv"), read("blocks.csv"), "message log");
    assert_eq!(json("one.json"), json("blocks.json"));
    let blocks: Value = serde_json::from_slice(&read("blocks-replay.json")).unwrap();
    assert_eq!(blocks["partitioning"]["partitioner"], "Blocks");
    assert_eq!(
        read("one-replay.csv"),
        read("blocks-replay.csv"),
        "replay records"
    );
    let replayed = |f: &str| {
        let mut v = json(f);
        v.as_object_mut().unwrap().remove("partitions");
        v
    };
    let diff = common::json_diff(
        &replayed("one-replay.json"),
        &replayed("blocks-replay.json"),
    );
    assert!(diff.is_empty(), "{diff:#?}");
}

#[test]
fn a_network_of_hosts_and_switches_is_refused_blocks_with_a_message() {
    common::refused(
        1,
        &[
            "run",
            "hw/timeout-lan-3x3.ron",
            "--set",
            "experiment.partitioner=Blocks",
            "--set",
            "experiment.measure=Cycles(100)",
        ],
        "contiguous ranges only",
    );
}
