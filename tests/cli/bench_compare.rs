//! `routemu bench --compare OLD_BINARY` (docs/speed.md, "Paired comparison with another
//! binary"): against itself every scenario computes the same results; against a binary
//! that computes something else the differing JSON keys are named; an OLD binary that
//! refuses a scenario is reported and the status is 1; a missing one is refused.
#![cfg(unix)]

use crate::common::routemu;
use std::os::unix::fs::PermissionsExt;

/// The 3×3 LAN scenario, as short as the bench allows (2,000 cycles).
const QUICK: [&str; 6] = ["--only", "LAN 3x3", "--scale", "0.0001", "--repeats", "2"];

/// An executable shell script `body` in a temporary directory.
fn script(body: &str) -> (tempfile::TempDir, String) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("old-routemu");
    std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    let p = path.to_str().unwrap().to_string();
    (dir, p)
}

fn compare(old: &str) -> (Option<i32>, String) {
    let mut args = vec!["bench", "--compare", old];
    args.extend_from_slice(&QUICK);
    let o = routemu(&args);
    let text = String::from_utf8_lossy(&o.stdout).to_string() + &String::from_utf8_lossy(&o.stderr);
    (o.status.code(), text)
}

#[test]
fn against_itself_every_scenario_computes_the_same_results_with_a_ratio() {
    let (code, text) = compare(env!("CARGO_BIN_EXE_routemu"));
    assert_eq!(code, Some(0), "{text}");
    let row = text
        .lines()
        .find(|l| l.starts_with("LAN 3x3"))
        .expect(&text);
    assert!(row.trim_end().ends_with("same"), "{row}");
    assert!(text.contains("2 interleaved pair(s)"), "{text}");
}

#[test]
fn a_binary_that_computes_something_else_is_named_with_the_keys_that_differ() {
    // Another seed: every statistic moves, the machine and its window do not.
    let (_dir, old) = script(&format!(
        "exec {} \"$@\" --seed 99",
        env!("CARGO_BIN_EXE_routemu")
    ));
    let (code, text) = compare(&old);
    assert_eq!(code, Some(0), "{text}");
    assert!(text.contains("DIFFER"), "{text}");
    let keys = text
        .lines()
        .find(|l| l.contains("results differ in:"))
        .expect(&text);
    assert!(keys.contains("latency") && keys.contains("seed"), "{keys}");
}

#[test]
fn an_old_binary_that_refuses_a_scenario_is_reported_and_fails_the_comparison() {
    let (_dir, old) = script("echo 'routemu: unknown field `sequential_injection`' >&2; exit 1");
    let (code, text) = compare(&old);
    assert_eq!(code, Some(1), "{text}");
    assert!(
        text.contains("not compared: OLD_BINARY failed: routemu: unknown field"),
        "{text}"
    );
    let (code, text) = compare("/nonexistent/routemu");
    assert_eq!(code, Some(1), "{text}");
    assert!(text.contains("not a file"), "{text}");
}
