//! Helpers shared by the integration tests.
#![allow(dead_code)]

use routemu::config::load::load_hw;
use routemu::config::HwConfig;
use routemu::engine::distributed::local::LocalRanks;
use routemu::engine::network::Network;
use routemu::engine::sim::Simulation;
use routemu::engine::transport::with_transport;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::Arc;

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

/// Every preset in hw/: wormhole (with BookSim's), circuit, deflection and timeout.
pub fn all_presets() -> Vec<(String, HwConfig)> {
    let mut v = wormhole_presets();
    v.extend(circuit_presets());
    v.extend(deflection_presets());
    v.extend(timeout_presets());
    v
}

/// Preset `cfg` (file `name`) cut short for comparing one split of the network with
/// another: two replications, partitions of any size (so the split happens whatever the
/// network's size), and (warm-up, measured) cycles from `cycles` by family — circuit
/// switching (its rate doubled), timeout switching (the preset's load: worms of 100
/// flits, with resets in every replication), the rest (rate tripled).
pub fn cut_short(name: &str, mut cfg: HwConfig, cycles: [(u64, u64); 3]) -> HwConfig {
    cfg.experiment.replications = 2;
    cfg.experiment.partition_min_nodes = Some(1);
    let (family, rate) = if name.starts_with("circuit") {
        (0, 2.0)
    } else if name.starts_with("timeout") {
        (1, 1.0)
    } else {
        (2, 3.0)
    };
    let (warmup, measured) = cycles[family];
    cfg.experiment.warmup = warmup;
    cfg.experiment.measure = routemu::config::Measure::Cycles(measured);
    cfg.workload.rate *= rate;
    cfg
}

/// The events of a report that a comparison of split runs needs to have seen cross the
/// partitions' boundaries, and that a window cut too short (`cut_short`) would miss:
/// wormhole blocking, circuit conflicts, aborts and hold timeouts, deflections,
/// preemptions (of a worm by itself too) and hop-limit drops, and timeout resets. The
/// split-comparison tests collect them over every preset and require each mode's.
pub fn split_events(report: &serde_json::Value) -> Vec<&'static str> {
    let positive = |v: &serde_json::Value| v.as_f64().is_some_and(|x| x > 0.0);
    SPLIT_EVENTS
        .into_iter()
        .filter(|(_, block, field)| positive(&report[*block][*field]))
        .map(|(e, _, _)| e)
        .collect()
}

/// The events of [`split_events`]: name, the report's block and its field that counts them.
const SPLIT_EVENTS: [(&str, &str, &str); 9] = [
    ("wormhole blocking", "wormhole", "blocking_per_hop"),
    ("circuit conflicts", "circuit", "p_conflict"),
    ("circuit aborts", "circuit", "aborts_max"),
    ("hold timeouts", "circuit", "hold_timeouts"),
    ("deflections", "deflection", "p_deflect"),
    ("preemptions", "deflection", "preemptions"),
    ("self-preemptions", "deflection", "self_preemptions"),
    ("hop-limit drops", "deflection", "hop_limit_drops"),
    ("timeout resets", "timeout", "resets"),
];

/// Fails unless `seen` (the [`split_events`] of every preset compared) holds every event
/// but those of `except` (events the test's presets or windows cannot show, each caller
/// saying why).
pub fn assert_split_events(seen: &std::collections::BTreeSet<&'static str>, except: &[&str]) {
    for e in except {
        assert!(
            SPLIT_EVENTS.iter().any(|(name, _, _)| name == e),
            "no split event {e}"
        );
    }
    let missing: Vec<&str> = SPLIT_EVENTS
        .iter()
        .map(|(e, _, _)| *e)
        .filter(|e| !except.contains(e) && !seen.contains(e))
        .collect();
    assert!(
        missing.is_empty(),
        "the windows are too short to see {missing:?} (seen: {seen:?})"
    );
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

/// Runs the routemu binary and fails, with the command line and its standard error,
/// unless it succeeded.
pub fn routemu_ok(args: &[&str]) -> Output {
    let out = routemu(args);
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// Fails, with its standard error, unless the run `out` succeeded; returns it (for the
/// runs a test's own helper starts).
pub fn succeeded(out: Output) -> Output {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// [`routemu_ok`] with `--json -` among `args`: the JSON document on standard output.
pub fn routemu_json(args: &[&str]) -> serde_json::Value {
    serde_json::from_slice(&routemu_ok(args).stdout).expect("the JSON document parses")
}

/// The JSON document a run wrote to `path`.
pub fn read_json(path: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// Runs routemu and expects exit status `code`, no panic and `needle` on standard error;
/// returns the standard error for the caller's further checks.
pub fn refused(code: i32, args: &[&str], needle: &str) -> String {
    let out = routemu(args);
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(code), "{args:?}: {err}");
    assert!(!err.contains("panicked"), "{args:?} panicked: {err}");
    assert!(
        err.contains(needle),
        "{args:?}: expected `{needle}` in: {err}"
    );
    err
}

/// `routemu predict PRESET --rate RATE --json -` at a rate past what the model holds:
/// the command succeeds and reports the machine saturated, with no prediction. Returns
/// the reason the report gives and the standard error.
pub fn predict_saturated(preset: &str, rate: &str) -> (String, String) {
    let out = routemu_ok(&["predict", preset, "--rate", rate, "--json", "-"]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["saturated"], true, "{v}");
    // No values, only the range verdict: a saturated model is never in range.
    assert!(v["prediction"]["latency"].is_null(), "{v}");
    assert_eq!(v["prediction"]["in_range"], false, "{v}");
    let why = v["saturation"].as_str().unwrap().to_string();
    (why, String::from_utf8_lossy(&out.stderr).into_owned())
}

/// Writes `text` to file `name` in `dir`; returns its path.
pub fn write_file(dir: &Path, name: &str, text: impl AsRef<[u8]>) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

/// A temporary folder holding file `name` with `text` (a trace, a graph, a CSV); the
/// folder and the file go when the first value is dropped.
pub fn temp_file(name: &str, text: impl AsRef<[u8]>) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let p = write_file(dir.path(), name, text);
    (dir, p)
}

/// Preset `name` with `--set` overrides `sets` (`PATH=VALUE`) applied.
pub fn preset_with(name: &str, sets: &[&str]) -> HwConfig {
    let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
    routemu::config::overrides::apply_overrides(&preset(name), &sets).unwrap()
}

/// `cfg` with a window of `warmup` then `measured` cycles and `replications` replications.
pub fn windowed(mut cfg: HwConfig, warmup: u64, measured: u64, replications: u32) -> HwConfig {
    cfg.experiment.warmup = warmup;
    cfg.experiment.measure = routemu::config::Measure::Cycles(measured);
    cfg.experiment.replications = replications;
    cfg
}

/// A scripted simulation of `cfg`: no synthetic messages, every cycle stepped (no idle
/// skipping), deliveries recorded; the test injects the messages.
pub fn scripted<N: Network>(cfg: &HwConfig) -> Simulation<N> {
    let mut cfg = cfg.clone();
    cfg.experiment.idle_skip = false;
    let mut sim = Simulation::<N>::build(&cfg, 0).unwrap();
    sim.stop_workload();
    sim.record_deliveries();
    sim
}

/// Runs `f` on each of `ranks` ranks of this process (`LocalRanks`: a thread each, with
/// its transport, and a guard that ends the other ranks if it panics). Returns what `f`
/// returned on each rank, in rank order, and the ranks (they count their exchanges).
pub fn on_local_ranks<T: Send>(
    ranks: usize,
    f: impl Fn() -> T + Sync,
) -> (Vec<T>, Vec<Arc<LocalRanks>>) {
    let ts: Vec<Arc<LocalRanks>> = LocalRanks::new(ranks).into_iter().map(Arc::new).collect();
    let results = std::thread::scope(|s| {
        let handles: Vec<_> = ts
            .iter()
            .map(|t| {
                let (t, f) = (Arc::clone(t), &f);
                s.spawn(move || {
                    let _fail_others = t.guard();
                    with_transport(t, f)
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    (results, ts)
}

/// The run arguments of a machine that deadlocks: the 8×8 torus preset with
/// dimension-order routing and no dateline classes on one VC deadlocks at moderate load;
/// the watchdog is short so that the tests are quick.
pub const DEADLOCKING: [&str; 8] = [
    "--set",
    "switching.unsafe_routing=true",
    "--set",
    "router.vcs=1",
    "--set",
    "experiment.deadlock_cycles=3000",
    "--replications",
    "1",
];

/// A report's top-level fields that tell how long a run took and how it was split.
const SPLIT_AND_TIMING: [&str; 4] = [
    "wall_seconds",
    "node_cycles_per_second",
    "threads",
    "partitioning",
];

/// A report as JSON without what may differ between runs that must agree (wall time,
/// threads, and the configuration that chose them): the statistics.
pub fn statistics(report: &routemu::stats::report::Report) -> serde_json::Value {
    let mut v = serde_json::to_value(report).unwrap();
    let o = v.as_object_mut().unwrap();
    for k in SPLIT_AND_TIMING.iter().chain(&["config"]) {
        o.remove(*k);
    }
    v
}

/// A report's JSON without what says how the run was split and how long it took (wall
/// time, threads, partitioning, the command line, and the configuration fields that chose
/// the split): what must not change with the number of threads, jobs or MPI ranks.
pub fn without_split(mut v: serde_json::Value) -> serde_json::Value {
    let o = v.as_object_mut().unwrap();
    for k in SPLIT_AND_TIMING.iter().chain(&["command"]) {
        o.remove(*k);
    }
    let e = v["config"]["experiment"].as_object_mut().unwrap();
    for k in ["threads", "jobs", "partitioner"] {
        e.remove(k);
    }
    v
}

/// Where two JSON values differ: one line per differing leaf, `path: left != right`
/// (a failing comparison's message, instead of two whole reports).
pub fn json_diff(a: &serde_json::Value, b: &serde_json::Value) -> Vec<String> {
    use serde_json::Value;
    fn walk(path: &str, a: &Value, b: &Value, out: &mut Vec<String>) {
        match (a, b) {
            (Value::Object(x), Value::Object(y)) => {
                for k in x.keys().chain(y.keys().filter(|k| !x.contains_key(*k))) {
                    let (l, r) = (
                        x.get(k).unwrap_or(&Value::Null),
                        y.get(k).unwrap_or(&Value::Null),
                    );
                    walk(&format!("{path}.{k}"), l, r, out);
                }
            }
            (Value::Array(x), Value::Array(y)) if x.len() == y.len() => {
                for (i, (l, r)) in x.iter().zip(y).enumerate() {
                    walk(&format!("{path}[{i}]"), l, r, out);
                }
            }
            _ if a != b => out.push(format!("{path}: {a} != {b}")),
            _ => {}
        }
    }
    let mut out = Vec::new();
    walk("", a, b, &mut out);
    out
}

/// Asserts that a run driven past saturation stayed deadlock-free, was found
/// saturated, delivered messages, and accounts for every message it generated
/// (delivered or still in flight). `what` names the set-up in the failure.
pub fn assert_saturated_without_deadlock(r: &routemu::stats::report::Report, what: &str) {
    assert!(r.deadlock.is_none(), "{what}: {:?}", r.deadlock);
    assert!(r.saturated, "{what}: not past saturation");
    assert!(r.messages.delivered > 0, "{what}: nothing delivered");
    assert_eq!(
        r.messages.delivered + r.messages.in_flight,
        r.messages.generated,
        "{what}"
    );
}
