//! Under `mpirun` (feature `mpi`): every preset gives with 2 and 3 ranks the JSON one
//! process gives, rank 0 alone writes, a deadlock is reported alike with exit status 3,
//! and a bad configuration ends every rank with exit status 1. Needs Open MPI or MPICH
//! (`mpirun` on the PATH); `.ci/run` installs it and runs this file.

#![cfg(feature = "mpi")]

mod common;

use serde_json::Value;
use std::path::Path;
use std::process::{Command, Output};

/// `routemu ARGS` on `np` ranks (`None`: one process, no `mpirun`).
fn launch(np: Option<usize>, args: &[&str]) -> Output {
    let exe = env!("CARGO_BIN_EXE_routemu");
    match np {
        None => Command::new(exe)
            .args(args)
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .output()
            .expect("routemu runs"),
        Some(n) => {
            let n = n.to_string();
            let mut all = vec!["--oversubscribe", "-np", &n, exe];
            all.extend(args);
            mpirun(&all)
        }
    }
}

/// `mpirun ARGS` (also an MPMD command line: ranks with other arguments or working
/// directories), from the crate's root.
fn mpirun(args: &[&str]) -> Output {
    Command::new("mpirun")
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        // Open MPI refuses to start as root (CI containers run as root) unless told.
        .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        // Ranks that wait in a collective give up their core: the tests oversubscribe.
        .env("OMPI_MCA_mpi_yield_when_idle", "1")
        .output()
        .expect("mpirun runs (install Open MPI: apt-get install openmpi-bin libopenmpi-dev)")
}

/// [`launch`], failing (naming the run `what`, with its standard error) unless it
/// succeeded on every rank.
fn launch_ok(np: Option<usize>, args: &[&str], what: &str) -> Output {
    let out = launch(np, args);
    assert!(
        out.status.success(),
        "{what}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// Fails unless the summary, its lines counted by `marker`, was printed once: by rank 0
/// alone.
fn assert_rank_0_alone_prints_the_summary(out: &Output, marker: &str, what: &str) {
    let summary = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        summary.matches(marker).count(),
        1,
        "{what}: rank 0 alone prints the summary: {summary}"
    );
}

/// The JSON a run wrote, without what may differ (wall time, the command line, the split).
fn statistics(path: &Path) -> Value {
    common::without_split(common::read_json(path))
}

fn short_args(name: &str) -> Vec<&'static str> {
    let mut a = vec!["--replications", "1"];
    a.extend(if name.starts_with("circuit") {
        ["--warmup", "3000", "--cycles", "6000"]
    } else {
        ["--warmup", "500", "--cycles", "1500"]
    });
    a.extend(["--set", "experiment.partition_min_nodes=1"]);
    a
}

/// Runs preset `name` cut short in one process, its JSON into `dir`: the run's
/// arguments (without `--json`) and the JSON's path.
fn run_in_one_process(dir: &Path, name: &str) -> (Vec<String>, std::path::PathBuf) {
    let mut base = vec!["run".to_string(), format!("hw/{name}")];
    base.extend(short_args(name).into_iter().map(String::from));
    let one = dir.join(format!("{name}.1.json"));
    let mut a: Vec<&str> = base.iter().map(String::as_str).collect();
    a.extend(["--json", one.to_str().unwrap()]);
    launch_ok(None, &a, name);
    (base, one)
}

#[test]
fn every_preset_writes_one_process_json_on_2_and_3_ranks() {
    let dir = tempfile::tempdir().unwrap();
    let presets = common::wormhole_presets()
        .into_iter()
        .chain(common::circuit_presets())
        .chain(common::deflection_presets())
        .chain(common::timeout_presets());
    for (name, _) in presets {
        let (base, one) = run_in_one_process(dir.path(), &name);
        let base: Vec<&str> = base.iter().map(String::as_str).collect();
        for (np, threads) in [(2, "1"), (3, "2")] {
            let many = dir.path().join(format!("{name}.{np}.json"));
            let mut a = base.clone();
            a.extend(["--threads", threads, "--json", many.to_str().unwrap()]);
            let out = launch_ok(Some(np), &a, &format!("{name} on {np} ranks"));
            assert_rank_0_alone_prints_the_summary(&out, "node-cycles/s", &name);
            assert_eq!(statistics(&one), statistics(&many), "{name} on {np} ranks");
        }
    }
}

#[test]
fn a_deadlock_is_found_and_described_alike_on_ranks() {
    let dir = tempfile::tempdir().unwrap();
    let args = |json: &Path| {
        let mut a = vec!["run", "hw/wormhole-torus-dor.ron"];
        a.extend(common::DEADLOCKING);
        a.extend(["--rate", "0.05", "--json", json.to_str().unwrap()]);
        a.into_iter().map(String::from).collect::<Vec<_>>()
    };
    let (one, two) = (dir.path().join("one.json"), dir.path().join("two.json"));
    let a = args(&one);
    let out = launch(None, &a.iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(
        out.status.code(),
        Some(3),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let a = args(&two);
    let out = launch(Some(2), &a.iter().map(String::as_str).collect::<Vec<_>>());
    assert_ne!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let (s1, s2) = (statistics(&one), statistics(&two));
    assert!(s1["deadlock"].is_object(), "{s1}");
    assert_eq!(s1, s2);
}

#[test]
fn a_bad_configuration_ends_every_rank_with_status_one_and_one_message() {
    let out = launch(
        Some(2),
        &["run", "hw/wormhole-torus-dor.ron", "--set", "router.vcs=0"],
    );
    assert_ne!(out.status.code(), Some(0));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.matches("routemu: invalid").count(), 1, "{err}");
}

#[test]
fn refusals_any_rank_meets_end_every_rank_alike_and_are_told_once() {
    let cases: [(&[&str], &str); 2] = [
        // An output rank 0 cannot write (the others write nothing): every rank ends.
        (&["--json", "/nonexistent/x.json"], "does not exist"),
        // A memory refusal every rank meets: told once, not by each rank.
        (
            &[
                "--set",
                "topology=Hypercube(dim: 24)",
                "--set",
                "router.vcs=64",
            ],
            "routemu: a network of",
        ),
    ];
    for (extra, told) in cases {
        let mut args = vec!["run", "hw/wormhole-torus-dor.ron"];
        args.extend(extra);
        args.extend(["--warmup", "100", "--cycles", "1000", "--replications", "1"]);
        let out = launch(Some(2), &args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{extra:?}: {err}");
        assert_eq!(err.matches(told).count(), 1, "{extra:?}: {err}");
    }
}

#[test]
fn ranks_started_with_different_command_lines_are_refused_naming_the_difference() {
    let exe = env!("CARGO_BIN_EXE_routemu");
    let run = |seed: &'static str| {
        vec![
            "-np",
            "1",
            exe,
            "run",
            "hw/wormhole-torus-dor.ron",
            "--warmup",
            "100",
            "--cycles",
            "1000",
            "--replications",
            "1",
            "--seed",
            seed,
        ]
    };
    let mut args = vec!["--oversubscribe"];
    args.extend(run("1"));
    args.push(":");
    args.extend(run("2"));
    let out = mpirun(&args);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert_eq!(
        err.matches("rank 1 has `--seed 2` where rank 0 has `--seed 1`")
            .count(),
        1,
        "{err}"
    );
}

#[test]
fn ranks_given_different_files_under_one_name_are_refused_naming_the_field() {
    // The same command line in two working directories whose x.ron differ in the seed.
    let dirs = [tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap()];
    let text = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("hw/wormhole-torus-dor.ron"),
    )
    .unwrap();
    for (d, seed) in dirs.iter().zip(["1", "2"]) {
        let mut cfg: routemu::config::HwConfig = ron::from_str(&text).unwrap();
        cfg.experiment.seed = seed.parse().unwrap();
        let pretty = ron::ser::to_string(&cfg).unwrap();
        std::fs::write(d.path().join("x.ron"), pretty).unwrap();
    }
    let exe = env!("CARGO_BIN_EXE_routemu");
    let mut args: Vec<&str> = vec!["--oversubscribe"];
    for (i, d) in dirs.iter().enumerate() {
        if i > 0 {
            args.push(":");
        }
        args.extend([
            "-np",
            "1",
            "-wdir",
            d.path().to_str().unwrap(),
            exe,
            "run",
            "x.ron",
            "--warmup",
            "100",
            "--cycles",
            "1000",
            "--replications",
            "1",
        ]);
    }
    let out = mpirun(&args);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert_eq!(
        err.matches("experiment.seed is 1 on rank 0 and 2 on rank 1")
            .count(),
        1,
        "{err}"
    );
}

#[test]
fn bench_under_mpirun_prints_the_ranks_table_once_and_no_single_process_table() {
    let out = launch(
        Some(2),
        &[
            "bench",
            "--only",
            "torus 8x8",
            "--scale",
            "0.01",
            "--repeats",
            "1",
            "--threads",
            "1",
        ],
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        text.matches("MPI ranks (Mnode-cycles/s").count(),
        1,
        "{text}"
    );
    assert_eq!(text.matches("torus 8x8 DOR @ 0.1").count(), 1, "{text}");
    assert!(!text.contains("scenario (single thread)"), "{text}");
}

/// A replay's JSON without what says how it was split.
fn replay_statistics(path: &Path) -> Value {
    let mut v = statistics(path);
    v.as_object_mut().unwrap().remove("partitions");
    v
}

#[test]
fn a_replay_writes_one_process_json_and_messages_on_2_and_3_ranks() {
    let dir = tempfile::tempdir().unwrap();
    // Elastic replay: each partition runs its own ranks' programs; placed at random,
    // fft-16's messages cross the ranks all the time.
    for (hw, trace, mode, place) in [
        (
            "hw/wormhole-torus-dor.ron",
            "traces/netrace/example.tra.bz2",
            "deps",
            "identity",
        ),
        (
            "hw/circuit-drop.ron",
            "traces/generated/fft-16.meta",
            "deps",
            "identity",
        ),
        (
            "hw/circuit-drop.ron",
            "traces/generated/fft-16.meta",
            "elastic",
            "random:5",
        ),
        (
            "hw/wormhole-torus-dor.ron",
            "traces/generated/halo2d-16.meta",
            "elastic",
            "identity",
        ),
    ] {
        let out = |tag: &str| {
            (
                dir.path().join(format!("{tag}.json")),
                dir.path().join(format!("{tag}.csv")),
            )
        };
        let args = |json: &Path, csv: &Path, threads: &str| {
            [
                "replay",
                hw,
                "--trace",
                trace,
                "--mode",
                mode,
                "--place",
                place,
                "--threads",
                threads,
                "--set",
                "experiment.partition_min_nodes=1",
                "--per-link",
                "--json",
                json.to_str().unwrap(),
                "--trace-log",
                csv.to_str().unwrap(),
            ]
            .map(String::from)
        };
        let (one_json, one_csv) = out("one");
        let a = args(&one_json, &one_csv, "1");
        let a: Vec<&str> = a.iter().map(String::as_str).collect();
        launch_ok(None, &a, &format!("{hw} {mode}"));
        for (np, threads) in [(2, "1"), (3, "2")] {
            let (json, csv) = out(&format!("{np}"));
            let a = args(&json, &csv, threads);
            let a: Vec<&str> = a.iter().map(String::as_str).collect();
            let o = launch_ok(Some(np), &a, &format!("{hw} {mode} on {np} ranks"));
            assert_rank_0_alone_prints_the_summary(&o, "routemu replay:", &format!("{hw} {mode}"));
            let parts: usize = np * threads.parse::<usize>().unwrap();
            let v: Value = common::read_json(&json);
            assert_eq!(v["partitions"].as_u64(), Some(parts as u64), "{hw} {mode}");
            assert_eq!(
                replay_statistics(&one_json),
                replay_statistics(&json),
                "{hw} {mode} on {np} ranks"
            );
            assert_eq!(
                std::fs::read_to_string(&one_csv).unwrap(),
                std::fs::read_to_string(&csv).unwrap(),
                "{hw} {mode} on {np} ranks: the --trace-log records"
            );
        }
    }
}

#[test]
fn a_deadlocked_replay_exits_3_on_every_rank_with_the_waits_described_once() {
    let dir = tempfile::tempdir().unwrap();
    let ring = dir.path().join("ring.txt");
    let mut t = String::from("time src dst flits\n");
    for i in 0..8 {
        t.push_str(&format!("0 {i} {} 64\n", (i + 5) % 8));
    }
    std::fs::write(&ring, t).unwrap();
    let o = launch(
        Some(2),
        &[
            "replay",
            "hw/wormhole-torus-dor.ron",
            "--trace",
            ring.to_str().unwrap(),
            "--set",
            "switching.unsafe_routing=true",
            "--set",
            "router.vcs=1",
            "--set",
            "experiment.partition_min_nodes=1",
        ],
    );
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(3), "{err}");
    assert_eq!(
        err.matches("replay deadlocked at cycle").count(),
        1,
        "{err}"
    );
    assert!(err.contains("waiting cycle of 8 channels"), "{err}");
}

#[test]
fn block_partitions_over_ranks_write_one_process_json_and_report_their_cut() {
    let dir = tempfile::tempdir().unwrap();
    for name in [
        "wormhole-mesh-dor.ron",
        "circuit-torus-hold.ron",
        "deflection-ms.ron",
    ] {
        let (base, one) = run_in_one_process(dir.path(), name);
        let base: Vec<&str> = base.iter().map(String::as_str).collect();
        for (np, threads) in [(2, "2"), (3, "2")] {
            let many = dir.path().join(format!("{name}.{np}.json"));
            let mut a = base.clone();
            a.extend([
                "--threads",
                threads,
                "--set",
                "experiment.partitioner=Blocks",
                "--json",
                many.to_str().unwrap(),
            ]);
            launch_ok(Some(np), &a, &format!("{name} on {np} ranks"));
            let v: Value = common::read_json(&many);
            let p = &v["partitioning"];
            assert_eq!(p["partitioner"], "Blocks", "{name} on {np} ranks");
            assert_eq!(p["ranks"], np, "{name}");
            assert!(p["rank_cut_links"].as_u64().unwrap() > 0, "{name}");
            assert!(
                p["rank_cut_links"].as_u64() <= p["cut_links"].as_u64(),
                "{name}"
            );
            assert_eq!(
                statistics(&one),
                statistics(&many),
                "{name} on {np} ranks of blocks"
            );
        }
    }
}

#[test]
fn a_dragonfly_and_a_flattened_butterfly_split_by_group_over_ranks_write_one_process_json() {
    let dir = tempfile::tempdir().unwrap();
    // Global links between 5 and 4 of the dragonfly's 9 groups, each way; links along
    // the second dimension between the flattened butterfly's two slabs of two rows.
    for (name, cut) in [("dragonfly-booksim.ron", 40), ("flatfly-booksim.ron", 32)] {
        let (base, one) = run_in_one_process(dir.path(), name);
        let base: Vec<&str> = base.iter().map(String::as_str).collect();
        let many = dir.path().join(format!("{name}.2.json"));
        let mut a = base.clone();
        a.extend(["--json", many.to_str().unwrap()]);
        launch_ok(Some(2), &a, &format!("{name} on 2 ranks"));
        let v: Value = common::read_json(&many);
        let p = &v["partitioning"];
        assert_eq!(p["partitioner"], "Blocks", "{name}: {p}");
        assert_eq!(p["rank_cut_links"], cut, "{name}: {p}");
        assert_eq!(statistics(&one), statistics(&many), "{name} on 2 ranks");
    }
}
