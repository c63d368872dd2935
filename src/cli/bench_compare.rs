//! `routemu bench --compare OLD_BINARY`: the single-thread scenarios run by this binary
//! and by another one, interleaved, so that a change's speed is a paired measurement —
//! the ratio of CPU times of the two binaries on the same machine at the same moment,
//! with its spread over the pairs — and a check that both binaries computed the same
//! results. It owns the child processes, their CPU time and the comparison of their
//! JSON; the scenarios are `crate::bench`'s, the table is printed here.
//!
//! Each scenario's machine is written as a RON file, without the settings at their
//! defaults (a setting is added with a default that keeps the machines before it as
//! they were, so an older binary reads the file as the same machine), and run by both
//! binaries as `BINARY run FILE --threads 1 --json OUT` (one replication, a warm-up of
//! a tenth of the scenario's cycles, then its cycles as the window): an older binary
//! that still cannot read it (a setting it does not know, away from its default) is
//! reported for that scenario, not guessed around. The results are compared value by
//! value where both reports have them. Pairs alternate their order (new first, then old first) so that
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

/// Where the run JSONs `a` and `b` differ: the paths of the values both have and that
/// differ (objects are compared key by key; a key only one side has is a change of the
/// report's schema between the binaries, not of the results), leaving out the top-level
/// [`UNCOMPARED`] keys.
fn differing_keys(a: &str, b: &str) -> Vec<String> {
    let (Ok(a), Ok(b)) = (
        serde_json::from_str::<serde_json::Value>(a),
        serde_json::from_str::<serde_json::Value>(b),
    ) else {
        return vec!["(unreadable JSON)".into()];
    };
    let mut out = Vec::new();
    fn walk(path: &str, a: &serde_json::Value, b: &serde_json::Value, out: &mut Vec<String>) {
        match (a.as_object(), b.as_object()) {
            (Some(x), Some(y)) => {
                for (k, v) in x {
                    if path.is_empty() && UNCOMPARED.contains(&k.as_str()) {
                        continue;
                    }
                    if let Some(w) = y.get(k) {
                        let p = if path.is_empty() {
                            k.clone()
                        } else {
                            format!("{path}.{k}")
                        };
                        walk(&p, v, w, out);
                    }
                }
            }
            _ if a != b => out.push(path.to_string()),
            _ => {}
        }
    }
    walk("", &a, &b, &mut out);
    out
}

/// `cfg` as RON text without the settings at their defaults, so that a binary older
/// than one of them still reads the file: each field (one line, or a block of lines) of
/// the pretty-printed text is left out, from the last up, where the text without it
/// still reads as the same machine.
fn minimal_ron(cfg: &crate::config::HwConfig) -> Result<String> {
    let text = ron::ser::to_string_pretty(cfg, ron::ser::PrettyConfig::default())
        .map_err(|e| Error::Arg(format!("writing the machine: {e}")))?;
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    let same = |lines: &[String]| {
        crate::config::load::parse_hw(&lines.join("\n"), "scenario").is_ok_and(|c| c == *cfg)
    };
    let depth = |l: &str| {
        l.chars()
            .map(|c| match c {
                '(' | '[' | '{' => 1i32,
                ')' | ']' | '}' => -1,
                _ => 0,
            })
            .sum::<i32>()
    };
    let mut i = lines.len();
    while i > 0 {
        i -= 1;
        let t = lines[i].trim_start();
        let is_field = t.split_once(':').is_some_and(|(k, _)| {
            !k.is_empty() && k.chars().all(|c| c.is_alphanumeric() || c == '_')
        });
        if !is_field {
            continue;
        }
        // The field's lines: until its brackets close.
        let (mut j, mut d) = (i, depth(&lines[i]));
        while d > 0 && j + 1 < lines.len() {
            j += 1;
            d += depth(&lines[j]);
        }
        let mut without = lines.clone();
        without.drain(i..=j);
        if same(&without) {
            lines = without;
        }
    }
    Ok(lines.join("\n"))
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
        let text = minimal_ron(&as_run(s))?;
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
                    let shown = p.differing.len().min(8);
                    crate::outln!(
                        "    results differ in: {}{}",
                        p.differing[..shown].join(", "),
                        if p.differing.len() > shown {
                            format!(" … ({} values in all)", p.differing.len())
                        } else {
                            String::new()
                        }
                    )?;
                }
            }
            Err(e) => {
                failed += 1;
                crate::outln!("{:<58} {:>6}   not compared: {e}", s.name, nodes)?;
            }
        }
    }
    crate::outln!(
        "results: the first pair's run JSONs compared value by value where both have them ({} left out)",
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
        // A key only one side has is the schema's growth, not a result.
        let c = r#"{"routemu":"0.2","latency":{"mean":3.5,"p50":3},"messages":5,"extra":1}"#;
        assert_eq!(differing_keys(a, c), vec!["latency.mean"]);
    }

    #[test]
    fn a_machine_is_written_without_its_defaults_and_reads_back_the_same() {
        let cfg = crate::config::load::parse_hw(
            include_str!("../../hw/booksim-min-torus8.ron"),
            "hw/booksim-min-torus8.ron",
        )
        .unwrap();
        let full = ron::ser::to_string_pretty(&cfg, ron::ser::PrettyConfig::default()).unwrap();
        let small = minimal_ron(&cfg).unwrap();
        assert!(small.lines().count() < full.lines().count(), "{small}");
        // A setting left at its default is not written; one away from it is.
        assert!(!small.contains("valiant_intermediate"), "{small}");
        assert!(small.contains("sequential_injection: true"), "{small}");
        assert_eq!(crate::config::load::parse_hw(&small, "x").unwrap(), cfg);
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
