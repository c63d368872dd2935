//! `routemu bench --compare OLD_BINARY`: the single-thread scenarios run by this binary
//! and by another one, interleaved, so that a change's speed is a paired measurement —
//! the ratio of CPU times of the two binaries on the same machine at the same moment,
//! with its spread over the pairs — and a check that both binaries computed the same
//! results. It owns the child processes, their CPU time and the comparison of their
//! JSON; the scenarios are `crate::bench`'s, the table is printed here.
//!
//! Each scenario's machine is written as a RON file and run by both binaries as
//! `BINARY run FILE --threads 1 --json OUT` (one replication, a warm-up of a tenth of
//! the scenario's cycles, then its cycles as the window): an older binary that cannot
//! read the file (a setting it does not know) is reported for that scenario, not
//! guessed around. Pairs alternate their order (new first, then old first) so that
//! neither binary always runs on a machine the other has just warmed. The CPU time of a
//! child is read from `getrusage(RUSAGE_CHILDREN)` before and after it (children run
//! one at a time), so the load other processes put on the machine weighs on both
//! binaries alike.

use crate::bench::Scenario;
use crate::foundation::error::{Error, Result};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// Top-level keys of the run JSON that differ between two binaries or two runs of one
/// without a difference in results: versions, the command line, timings.
const UNCOMPARED: [&str; 4] = [
    "routemu",
    "command",
    "wall_seconds",
    "node_cycles_per_second",
];

/// CPU seconds (user + system) of every child this process has waited for so far.
fn children_cpu() -> f64 {
    let mut u = std::mem::MaybeUninit::<libc::rusage>::zeroed();
    // SAFETY: getrusage writes a whole `rusage` into the pointer it is given; a
    // zeroed one is a valid value of the plain C struct if the call fails.
    let ok = unsafe { libc::getrusage(libc::RUSAGE_CHILDREN, u.as_mut_ptr()) } == 0;
    if !ok {
        return 0.0;
    }
    // SAFETY: initialised above (zeroed, then filled by the call).
    let u = unsafe { u.assume_init() };
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 * 1e-6;
    secs(u.ru_utime) + secs(u.ru_stime)
}

/// One run of `binary` on `file`: its CPU seconds and its JSON (None, with the first
/// line of its standard error, when it failed).
fn run_once(binary: &Path, file: &Path, out: &Path) -> std::result::Result<(f64, String), String> {
    let _ = std::fs::remove_file(out);
    let before = children_cpu();
    let child = Command::new(binary)
        .arg("run")
        .arg(file)
        .args(["--threads", "1", "--json"])
        .arg(out)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .output()
        .map_err(|e| format!("cannot start {}: {e}", binary.display()))?;
    let cpu = children_cpu() - before;
    match std::fs::read_to_string(out) {
        Ok(json) if !json.is_empty() => Ok((cpu, json)),
        _ => {
            let err = String::from_utf8_lossy(&child.stderr);
            Err(err
                .lines()
                .find(|l| !l.trim().is_empty())
                .unwrap_or("no output and no message")
                .to_string())
        }
    }
}

/// The run JSON's top-level keys whose values differ between `a` and `b` (both parsed),
/// leaving out [`UNCOMPARED`].
fn differing_keys(a: &str, b: &str) -> Vec<String> {
    let (Ok(a), Ok(b)) = (
        serde_json::from_str::<serde_json::Value>(a),
        serde_json::from_str::<serde_json::Value>(b),
    ) else {
        return vec!["(unreadable JSON)".into()];
    };
    let (Some(a), Some(b)) = (a.as_object(), b.as_object()) else {
        return vec!["(not a JSON object)".into()];
    };
    let mut keys: Vec<&String> = a.keys().chain(b.keys()).collect();
    keys.sort();
    keys.dedup();
    keys.into_iter()
        .filter(|k| !UNCOMPARED.contains(&k.as_str()) && a.get(*k) != b.get(*k))
        .cloned()
        .collect()
}

/// The median of `v` (not empty), sorting it.
fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// What one scenario's pairs measured.
struct Paired {
    new_cpu: Vec<f64>,
    old_cpu: Vec<f64>,
    differing: Vec<String>,
}

/// Runs `pairs` interleaved pairs of the scenario written to `file`.
fn pairs_of(
    new: &Path,
    old: &Path,
    file: &Path,
    dir: &Path,
    pairs: usize,
) -> std::result::Result<Paired, String> {
    let (out_new, out_old) = (dir.join("new.json"), dir.join("old.json"));
    let mut p = Paired {
        new_cpu: Vec::with_capacity(pairs),
        old_cpu: Vec::with_capacity(pairs),
        differing: Vec::new(),
    };
    for i in 0..pairs {
        let one = |bin: &Path, out: &Path| {
            run_once(bin, file, out).map_err(|e| {
                let who = if bin == new {
                    "this binary"
                } else {
                    "OLD_BINARY"
                };
                format!("{who} failed: {e}")
            })
        };
        let (n, o) = if i % 2 == 0 {
            let n = one(new, &out_new)?;
            (n, one(old, &out_old)?)
        } else {
            let o = one(old, &out_old)?;
            (one(new, &out_new)?, o)
        };
        if i == 0 {
            p.differing = differing_keys(&n.1, &o.1);
        }
        p.new_cpu.push(n.0);
        p.old_cpu.push(o.0);
    }
    Ok(p)
}

/// The scenario's machine as `routemu run` runs it here: one replication, a warm-up
/// of a tenth of its cycles, then its cycles as the window; the saturation guard off
/// (a scenario past saturation is timed, not stopped).
fn as_run(s: &Scenario) -> crate::config::HwConfig {
    let mut cfg = crate::bench::windowed(&s.cfg, s.cycles);
    cfg.experiment.saturation_backlog = 1e15;
    cfg
}

/// Compares this binary with `old` on `scenarios`, `pairs` pairs each, and prints the
/// table; returns the exit status (0; 1 when a scenario could not be compared).
pub fn compare(old: &Path, scenarios: Vec<Scenario>, pairs: usize) -> Result<i32> {
    let new: PathBuf = std::env::current_exe()
        .map_err(|e| Error::Arg(format!("--compare: cannot find this binary: {e}")))?;
    if !old.is_file() {
        return Err(Error::Arg(format!(
            "--compare {}: not a file (give the path of another routemu binary)",
            old.display()
        )));
    }
    let dir = tempfile::tempdir()
        .map_err(|e| Error::Arg(format!("--compare: cannot make a temporary directory: {e}")))?;
    crate::outln!(
        "this binary: {}\nOLD_BINARY:  {}\n{pairs} interleaved pair(s) per scenario; CPU seconds (user + system) of each run; ratio = this / OLD (below 1: this binary is faster); load average at the start: {}",
        new.display(),
        old.display(),
        std::fs::read_to_string("/proc/loadavg")
            .ok()
            .and_then(|l| l.split_whitespace().next().map(str::to_string))
            .unwrap_or_else(|| "unknown".into())
    )?;
    crate::outln!(
        "{:<58} {:>6} {:>10} {:>10} {:>8} {:>15} {:>8}",
        "scenario (single thread)",
        "nodes",
        "this s",
        "OLD s",
        "ratio",
        "range",
        "results"
    )?;
    let mut failed = 0;
    for (i, s) in scenarios.iter().enumerate() {
        let file = dir.path().join(format!("scenario-{i}.ron"));
        let text = ron::ser::to_string_pretty(&as_run(s), ron::ser::PrettyConfig::default())
            .map_err(|e| Error::Arg(format!("scenario {}: {e}", s.name)))?;
        std::fs::write(&file, text).map_err(|e| Error::Arg(format!("{}: {e}", file.display())))?;
        let nodes = crate::engine::machine::validate(&s.cfg)?.topology.nodes();
        match pairs_of(&new, old, &file, dir.path(), pairs) {
            Ok(mut p) => {
                let mut ratios: Vec<f64> = p
                    .new_cpu
                    .iter()
                    .zip(&p.old_cpu)
                    .map(|(n, o)| n / o.max(1e-9))
                    .collect();
                let (lo, hi) = ratios
                    .iter()
                    .fold((f64::MAX, f64::MIN), |(a, b), &r| (a.min(r), b.max(r)));
                crate::outln!(
                    "{:<58} {:>6} {:>10.3} {:>10.3} {:>8.3} {:>15} {:>8}",
                    s.name,
                    nodes,
                    median(&mut p.new_cpu),
                    median(&mut p.old_cpu),
                    median(&mut ratios),
                    format!("{lo:.3}–{hi:.3}"),
                    if p.differing.is_empty() {
                        "same"
                    } else {
                        "DIFFER"
                    }
                )?;
                if !p.differing.is_empty() {
                    crate::outln!("    results differ in: {}", p.differing.join(", "))?;
                }
            }
            Err(e) => {
                failed += 1;
                crate::outln!("{:<58} {:>6}   not compared: {e}", s.name, nodes)?;
            }
        }
    }
    crate::outln!(
        "results: the run JSON of the first pair compared key by key ({} left out)",
        UNCOMPARED.join(", ")
    )?;
    Ok(if failed > 0 { 1 } else { 0 })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_that_differ_only_in_timings_and_versions_are_the_same() {
        let a = r#"{"routemu":"0.1","wall_seconds":1.0,"latency":{"mean":3.0},"messages":5}"#;
        let b = r#"{"routemu":"0.2","wall_seconds":2.5,"latency":{"mean":3.0},"messages":5}"#;
        assert!(differing_keys(a, b).is_empty());
        let c = r#"{"routemu":"0.2","latency":{"mean":3.5},"messages":5,"extra":1}"#;
        assert_eq!(differing_keys(a, c), vec!["extra", "latency"]);
    }

    #[test]
    fn the_median_of_an_even_count_is_the_mean_of_the_middle_two() {
        assert_eq!(median(&mut [3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&mut [4.0, 1.0, 3.0, 2.0]), 2.5);
    }

    #[test]
    fn a_child_s_cpu_time_is_counted_once_it_is_waited_for() {
        let before = children_cpu();
        let status = Command::new("sh")
            .args(["-c", "i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done"])
            .status()
            .unwrap();
        assert!(status.success());
        assert!(children_cpu() > before);
    }
}
