//! What routemu refuses before it works (README, "Limits"): numbers out of range, run
//! lengths whose cycle arithmetic would overflow, sweeps with too many points, more
//! replications than the limit, and machines whose memory estimate exceeds what the
//! process may use (unless `--force`). Each is a clear message and exit status 1 (2 for
//! clap's own parse errors), never a panic. The binary the tests run is built with
//! overflow checks (the test profile inherits the dev profile's), so an unchecked
//! addition would panic here rather than wrap.

use crate::common::{self, refused, routemu};

const RUN: [&str; 2] = ["run", "hw/wormhole-torus-dor.ron"];

fn run_with(extra: &[&str]) -> Vec<String> {
    RUN.iter().chain(extra).map(|s| s.to_string()).collect()
}

fn fails(code: i32, extra: &[&str], needle: &str) {
    let args = run_with(extra);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    refused(code, &args, needle);
}

#[test]
fn a_window_whose_end_overflows_a_cycle_count_is_refused() {
    fails(
        1,
        &["--warmup", "100", "--cycles", "18446744073709551615"],
        "must not exceed",
    );
    fails(
        1,
        &["--warmup", "18446744073709551615", "--cycles", "10"],
        "must not exceed",
    );
    fails(
        1,
        &["--warmup", "100", "--messages", "18446744073709551615"],
        "at most 1099511627776 messages",
    );
}

#[test]
fn replications_beyond_the_limit_are_refused_before_anything_is_allocated() {
    fails(
        1,
        &[
            "--warmup",
            "100",
            "--cycles",
            "1000",
            "--replications",
            "4294967295",
        ],
        "1 to 100000",
    );
    fails(1, &["--replications", "0"], "1 to 100000");
}

#[test]
fn a_sweep_range_with_a_vanishing_step_is_refused_not_emptied() {
    refused(
        1,
        &[
            "sweep",
            "hw/wormhole-torus-dor.ron",
            "--param",
            "workload.rate=0.001:0.002:1e-320",
            "--warmup",
            "100",
            "--cycles",
            "1000",
            "--replications",
            "1",
        ],
        "points (at most 10000)",
    );
}

#[test]
fn numeric_flags_reject_negative_nan_infinite_and_out_of_range_values() {
    // clap's own parse errors (not a number, negative for an unsigned flag): status 2.
    for (flag, v) in [
        ("--rate", "abc"),
        ("--seed", "-1"),
        ("--cycles", "-5"),
        ("--replications", "1.5"),
        ("--threads", "-2"),
    ] {
        fails(2, &[flag, v], v);
    }
    // Parsed, then out of range: status 1 with the limit. (A negative number after a
    // space reads as a flag to clap, status 2; written `--rate=-1` it is a value.)
    fails(2, &["--rate", "-1"], "-1");
    for (args, needle) in [
        (&["--rate", "NaN"][..], "workload.rate"),
        (&["--rate", "inf"], "workload.rate"),
        (&["--rate=-1"], "workload.rate"),
        (&["--rate", "1e300"], "at most 64"),
        (&["--load", "inf"], "--load"),
        (&["--load=-1"], "--load"),
        (&["--threads", "0"], "experiment.threads"),
        (&["--jobs", "100000"], "experiment.jobs"),
        (&["--cycles", "0"], "at least one cycle"),
    ] {
        fails(1, args, needle);
    }
}

#[test]
fn predict_checks_the_rate_like_run() {
    refused(
        1,
        &["predict", "hw/circuit-hold.ron", "--rate", "1e300"],
        "at most 64",
    );
}

#[test]
fn bench_refuses_no_threads_and_an_unbounded_scale() {
    refused(1, &["bench", "--threads", "0"], "--threads 0");
    refused(1, &["bench", "--scale", "1e300"], "--scale");
    refused(1, &["bench", "--scale", "NaN"], "--scale");
    refused(1, &["bench", "--repeats", "0"], "--repeats");
}

#[test]
fn a_field_given_twice_in_a_set_value_is_refused() {
    refused(
        1,
        &[
            "check",
            "hw/wormhole-torus-dor.ron",
            "--set",
            "topology=Hypercube(dim: 3, dim: 4)",
        ],
        "`dim` is given twice",
    );
}

#[test]
fn an_infinite_saturation_backlog_is_refused_naming_the_field() {
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string("hw/wormhole-torus-dor.ron").unwrap();
    assert!(text.contains("seed: 1,"), "the preset sets a seed");
    let f = dir.path().join("inf.ron");
    std::fs::write(
        &f,
        text.replace("seed: 1,", "seed: 1, saturation_backlog: inf,"),
    )
    .unwrap();
    let f = f.to_str().unwrap();
    refused(1, &["check", f], "saturation_backlog = inf");
    refused(
        1,
        &["run", f, "--set", "router.vcs=4"],
        "experiment.saturation_backlog",
    );
}

#[test]
fn a_byte_order_mark_before_a_description_is_ignored() {
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string("hw/wormhole-torus-dor.ron").unwrap();
    let f = dir.path().join("bom.ron");
    std::fs::write(&f, format!("\u{feff}{text}")).unwrap();
    let out = routemu(&["check", f.to_str().unwrap()]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn the_crossbar_limit_message_has_no_run_of_spaces() {
    let err = refused(
        1,
        &[
            "check",
            "hw/wormhole-hypercube.ron",
            "--set",
            "topology.dim=16",
            "--set",
            "router.dma=64",
        ],
        "crossbar",
    );
    assert!(!err.contains("  "), "{err}");
}

/// A 16M-node circuit torus (D16): far more than the tests' address-space cap.
const HUGE_CIRCUIT: &str = "topology=Torus(k: 4096, n: 2, bidirectional: true)";

/// Runs routemu under an address-space limit of `kib` KiB (ulimit -v), so the memory
/// check has a known limit whatever the machine.
fn capped(kib: u64, args: &[&str]) -> std::process::Output {
    let quoted: Vec<String> = args.iter().map(|a| format!("'{a}'")).collect();
    std::process::Command::new("sh")
        .arg("-c")
        .arg(format!(
            "ulimit -v {kib} && exec '{}' {}",
            env!("CARGO_BIN_EXE_routemu"),
            quoted.join(" ")
        ))
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("sh runs")
}

#[test]
fn a_machine_that_needs_more_memory_than_the_limit_is_refused_with_the_numbers() {
    for cmd in ["check", "run"] {
        let out = capped(
            2_000_000,
            &[
                cmd,
                "hw/circuit-hold.ron",
                "--set",
                HUGE_CIRCUIT,
                "--warmup",
                "10",
                "--cycles",
                "100",
                "--replications",
                "1",
            ][..if cmd == "check" { 4 } else { 10 }],
        );
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{cmd}: {err}");
        assert!(!err.contains("panicked"), "{cmd}: {err}");
        for needle in [
            "network of 16777216 nodes",
            "needs ~",
            "GiB",
            ", limit ",
            "--force",
        ] {
            assert!(err.contains(needle), "{cmd}: `{needle}` missing: {err}");
        }
    }
}

#[test]
fn a_replay_on_a_machine_beyond_the_memory_limit_is_refused_before_building_it() {
    let (_dir, trace) = common::temp_file("one.txt", "time src dst flits\n0 1 2 3\n");
    let out = capped(
        2_000_000,
        &[
            "replay",
            "hw/circuit-hold.ron",
            "--set",
            HUGE_CIRCUIT,
            "--trace",
            trace.to_str().unwrap(),
        ],
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("needs ~") && err.contains("--force"), "{err}");
}

#[test]
fn every_switching_mode_is_held_against_the_memory_limit() {
    for (hw, set) in [
        ("hw/wormhole-hypercube.ron", "topology.dim=20"),
        ("hw/circuit-hold.ron", HUGE_CIRCUIT),
        ("hw/deflection-ms.ron", "topology=ManhattanStreet(k: 4096)"),
        (
            "hw/timeout-lan-3x3.ron",
            "topology=SwitchedTorus(k: 512, hosts: 4)",
        ),
    ] {
        let out = capped(2_000_000, &["check", hw, "--set", set]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{hw} {set}: {err}");
        assert!(err.contains("needs ~"), "{hw} {set}: {err}");
    }
}

#[test]
fn check_reports_the_estimate_and_the_limit() {
    let out = routemu(&["check", "hw/circuit-hold.ron"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0));
    assert!(text.contains("  memory: needs ~"), "{text}");
}

#[test]
fn force_lets_a_refused_machine_go_ahead_and_a_failed_table_is_a_message() {
    // The d = 20 hypercube needs ~10 GiB: refused under a 3 GB cap, and with --force its
    // first large table fails to allocate — a message and status 1, not a panic.
    let args = [
        "run",
        "hw/wormhole-hypercube.ron",
        "--set",
        "topology.dim=20",
        "--warmup",
        "10",
        "--cycles",
        "100",
        "--replications",
        "1",
    ];
    let out = capped(3_000_000, &args);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("--force to try anyway"), "{err}");
    let mut forced = args.to_vec();
    forced.push("--force");
    let out = capped(3_000_000, &forced);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!err.contains("panicked"), "{err}");
    assert!(!err.contains("needs ~"), "--force skips the refusal: {err}");
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("out of memory"), "{err}");
}

/// Runs `args` with `--force` under an address-space cap of `kib` KiB and expects the
/// first table that does not fit to end the run with a message naming it: exit status 1
/// (not the allocator's abort, which is a signal), no panic, nothing written.
fn forced_run_fails_with_a_message(kib: u64, hw: &str, sets: &[&str]) {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    let mut args = vec!["run", hw];
    for s in sets {
        args.extend(["--set", s]);
    }
    args.extend([
        "--warmup",
        "10",
        "--cycles",
        "100",
        "--replications",
        "1",
        "--json",
        json.to_str().unwrap(),
    ]);
    // Without --force the estimate refuses the machine outright.
    let out = capped(kib, &args);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{hw} {sets:?}: {err}");
    assert!(
        err.contains("--force to try anyway"),
        "{hw} {sets:?}: {err}"
    );
    args.push("--force");
    let out = capped(kib, &args);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        out.status.code(),
        Some(1),
        "{hw} {sets:?}: an exit status, not a signal: {err}"
    );
    assert!(!err.contains("panicked"), "{hw} {sets:?}: {err}");
    assert!(
        err.contains("out of memory: the ") && err.contains("cannot be allocated"),
        "{hw} {sets:?}: {err}"
    );
    assert!(
        !err.contains("memory allocation of"),
        "{hw} {sets:?}: {err}"
    );
    assert!(!json.exists(), "{hw} {sets:?}: nothing written");
}

#[test]
fn a_forced_circuit_machine_that_does_not_fit_is_a_message_not_an_abort() {
    forced_run_fails_with_a_message(600_000, "hw/circuit-hold.ron", &["topology.dim=20"]);
}

#[test]
fn a_forced_deflection_machine_that_does_not_fit_is_a_message_not_an_abort() {
    forced_run_fails_with_a_message(
        600_000,
        "hw/deflection-ms.ron",
        &["topology=ManhattanStreet(k: 512)", "router.vcs=32"],
    );
}

#[test]
fn a_forced_timeout_machine_that_does_not_fit_is_a_message_not_an_abort() {
    forced_run_fails_with_a_message(
        600_000,
        "hw/timeout-lan-3x3.ron",
        &["topology=SwitchedTorus(k: 512, hosts: 4)"],
    );
}
