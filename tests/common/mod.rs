//! Helpers shared by the integration tests.
#![allow(dead_code)]

use routemu::config::load::load_hw;
use routemu::config::HwConfig;
use std::path::Path;
use std::process::{Command, Output};

/// A preset from hw/.
pub fn preset(name: &str) -> HwConfig {
    load_hw(&Path::new(env!("CARGO_MANIFEST_DIR")).join("hw").join(name)).expect("preset loads")
}

/// Every wormhole preset in hw/: the papers' (`wormhole-*`) and BookSim's minimum router
/// (`booksim-min-*`).
pub fn wormhole_presets() -> Vec<(String, HwConfig)> {
    let mut v = presets_starting("wormhole", 4);
    v.extend(booksim_presets());
    v
}

/// The presets that reproduce BookSim2's minimum router (`hw/booksim-min-*.ron`).
pub fn booksim_presets() -> Vec<(String, HwConfig)> {
    presets_starting("booksim-min", 3)
}

/// Every circuit-switching preset in hw/.
pub fn circuit_presets() -> Vec<(String, HwConfig)> {
    presets_starting("circuit", 4)
}

/// Every timeout wormhole (paper 002) preset in hw/.
pub fn timeout_presets() -> Vec<(String, HwConfig)> {
    presets_starting("timeout", 2)
}

/// Every deflection (paper 003) preset in hw/.
pub fn deflection_presets() -> Vec<(String, HwConfig)> {
    presets_starting("deflection", 2)
}

fn presets_starting(prefix: &str, at_least: usize) -> Vec<(String, HwConfig)> {
    let mut v: Vec<(String, HwConfig)> =
        std::fs::read_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join("hw"))
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .filter(|n| n.starts_with(prefix) && n.ends_with(".ron"))
            .map(|n| {
                let c = preset(&n);
                (n, c)
            })
            .collect();
    v.sort_by(|a, b| a.0.cmp(&b.0));
    assert!(v.len() >= at_least, "{prefix} presets missing");
    v
}

/// Runs the routemu binary.
pub fn routemu(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_routemu"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("binary runs")
}

/// A report as JSON without what may differ between runs that must agree (wall time,
/// threads, and the configuration that chose them): the statistics.
pub fn statistics(report: &routemu::stats::report::Report) -> serde_json::Value {
    let mut v = serde_json::to_value(report).unwrap();
    let o = v.as_object_mut().unwrap();
    for k in [
        "wall_seconds",
        "node_cycles_per_second",
        "threads",
        "partitioning",
        "config",
    ] {
        o.remove(k);
    }
    v
}

/// A report's JSON without what says how the run was split and how long it took (wall
/// time, threads, partitioning, the command line, and the configuration fields that chose
/// the split): what must not change with the number of threads, jobs or MPI ranks.
pub fn without_split(mut v: serde_json::Value) -> serde_json::Value {
    let o = v.as_object_mut().unwrap();
    for k in [
        "wall_seconds",
        "node_cycles_per_second",
        "threads",
        "partitioning",
        "command",
    ] {
        o.remove(k);
    }
    let e = v["config"]["experiment"].as_object_mut().unwrap();
    for k in ["threads", "jobs"] {
        e.remove(k);
    }
    v
}
