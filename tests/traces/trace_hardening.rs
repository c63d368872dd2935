//! Hostile traces never panic the replay, and nothing in them is silently dropped,
//! clamped or reordered: duplicate or out-of-order ids, dependants before their
//! parents, times beyond the horizon, oversized messages and lines, Netrace times going
//! backwards and dangling dependencies are refused with the file and the place; a long
//! message is not a stall, and a deadlocked network is reported as one (exit 3), with
//! the waits `run` describes (issue 18).

use crate::common;

use routemu::experiments::replay::{replay_machine, ReplayMode, ReplayOptions, ReplaySummary};
use routemu::experiments::traces::{open, open_with, OpenOptions};
use routemu::Error;
use std::path::{Path, PathBuf};

fn replay(p: &Path, opts: &ReplayOptions) -> routemu::Result<ReplaySummary> {
    let cfg = common::preset("wormhole-torus-dor.ron");
    let mut src = open(p)?;
    replay_machine(&cfg, src.as_mut(), opts, &mut |_| Ok(()))
}

fn deps() -> ReplayOptions {
    ReplayOptions {
        mode: ReplayMode::Deps,
        ..ReplayOptions::default()
    }
}

/// Runs `routemu replay` on the DOR torus with `args`: exit status and standard error.
fn cli(args: &[&str]) -> (i32, String) {
    let mut all = vec!["replay", "hw/wormhole-torus-dor.ron"];
    all.extend(args);
    let out = common::routemu(&all);
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(!err.contains("panicked"), "{err}");
    (out.status.code().unwrap(), err)
}

/// A Netrace file: 64 nodes, `regions` as packet counts, packets (cycle, id, deps).
fn netrace(dir: &Path, name: &str, regions: &[usize], packets: &[(u64, u32, &[u32])]) -> PathBuf {
    let rec = |&(c, id, d): &(u64, u32, &[u32])| {
        let mut b = Vec::new();
        b.extend(c.to_le_bytes());
        b.extend(id.to_le_bytes());
        b.extend(0u32.to_le_bytes());
        b.extend([1, (id % 64) as u8, (id as u8 + 1) % 64, 0x12, d.len() as u8]);
        for x in d {
            b.extend(x.to_le_bytes());
        }
        b
    };
    let recs: Vec<Vec<u8>> = packets.iter().map(rec).collect();
    let mut h = Vec::new();
    h.extend(0x484A_5455u32.to_le_bytes());
    h.extend(1.0f32.to_le_bytes());
    h.extend([b'x'; 1]);
    h.extend([0u8; 29]);
    h.extend([64, 0]);
    h.extend(1000u64.to_le_bytes());
    h.extend((packets.len() as u64).to_le_bytes());
    h.extend(2u32.to_le_bytes());
    h.extend((regions.len() as u32).to_le_bytes());
    h.extend([0u8; 8]);
    h.extend(b"x\0");
    let mut at = 0;
    let mut offset = 0u64;
    for &n in regions {
        h.extend(offset.to_le_bytes());
        h.extend(1000u64.to_le_bytes());
        h.extend((n as u64).to_le_bytes());
        offset += recs[at..at + n].iter().map(|r| r.len() as u64).sum::<u64>();
        at += n;
    }
    for r in &recs {
        h.extend(r);
    }
    let p = dir.join(name);
    let mut z = bzip2::write::BzEncoder::new(Vec::new(), bzip2::Compression::fast());
    std::io::Write::write_all(&mut z, &h).unwrap();
    std::fs::write(&p, z.finish().unwrap()).unwrap();
    p
}

#[test]
fn duplicate_ids_are_refused_with_the_place_in_either_mode_and_never_panic() {
    let dir = tempfile::tempdir().unwrap();
    let t = common::write_file(
        dir.path(),
        "dup.txt",
        "time src dst flits id\n0 0 1 1 5\n0 1 2 1 5\n",
    );
    let n = netrace(dir.path(), "dup.tra.bz2", &[], &[(0, 5, &[]), (0, 5, &[])]);
    for mode in ["open", "deps"] {
        let (code, err) = cli(&["--trace", t.to_str().unwrap(), "--mode", mode]);
        assert_eq!(code, 1, "{err}");
        assert!(err.contains("dup.txt:3: id 5 after 5"), "{err}");
        let (code, err) = cli(&["--trace", n.to_str().unwrap(), "--mode", mode]);
        assert_eq!(code, 1, "{err}");
        // The second packet starts after the 72-byte header, notes (2) and 21 bytes.
        assert!(
            err.contains("dup.tra.bz2: byte 103 (decompressed): packet id 5 after 5"),
            "{err}"
        );
    }
}

#[test]
fn a_dependant_listed_before_its_parent_is_refused_not_ignored() {
    let (_dir, p) = common::temp_file(
        "cbp.txt",
        "time src dst flits id deps\n0 0 1 1 10 -\n0 1 2 4 3 10\n",
    );
    let e = replay(&p, &deps()).unwrap_err().to_string();
    assert!(e.contains("cbp.txt:3: id 3 after 10"), "{e}");
}

#[test]
fn a_time_beyond_the_horizon_is_refused_naming_the_line_and_the_scale() {
    let dir = tempfile::tempdir().unwrap();
    let p = common::write_file(
        dir.path(),
        "tmax.txt",
        "time src dst flits\n0 1 2 3\n18446744073709551615 2 3 3\n",
    );
    let e = replay(&p, &ReplayOptions::default())
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("tmax.txt:3: message 1") && e.contains("2^62"),
        "{e}"
    );
    // A scale that carries ordinary times beyond it.
    let p = common::write_file(
        dir.path(),
        "s.txt",
        "time src dst flits\n0 1 2 3\n415 2 3 3\n",
    );
    let opts = ReplayOptions {
        time_scale: 1e30,
        ..ReplayOptions::default()
    };
    let e = replay(&p, &opts).unwrap_err().to_string();
    assert!(e.contains("s.txt:3:") && e.contains("415 × 1e30"), "{e}");
    // The horizon itself is replayed: nothing before it is lost.
    let p = common::write_file(
        dir.path(),
        "h.txt",
        format!("time src dst flits\n0 1 2 3\n{} 2 3 3\n", 1u64 << 62),
    );
    let s = replay(&p, &ReplayOptions::default()).unwrap();
    assert_eq!((s.messages, s.delivered), (2, 2));
}

#[test]
fn a_gap_beyond_its_maximum_is_refused_and_the_largest_is_added_in_full() {
    let (_dir, p) = common::temp_file(
        "gap.txt",
        "time src dst flits id deps\n0 0 1 1 1 2\n0 1 2 1 2 -\n",
    );
    let (code, err) = cli(&[
        "--trace",
        p.to_str().unwrap(),
        "--mode",
        "deps",
        "--gap",
        "18446744073709551615",
    ]);
    assert_eq!(code, 1);
    assert!(err.contains("--gap 18446744073709551615: at most"), "{err}");
    let cfg = common::preset("wormhole-torus-dor.ron");
    let mut src = open(&p).unwrap();
    let mut recs = Vec::new();
    let opts = ReplayOptions {
        gap: 1 << 40,
        ..deps()
    };
    replay_machine(&cfg, src.as_mut(), &opts, &mut |r| {
        recs.push(r.clone());
        Ok(())
    })
    .unwrap();
    assert_eq!(recs[1].created, recs[0].delivered + (1 << 40));
}

#[test]
fn a_message_longer_than_the_watchdog_window_is_not_a_stall() {
    // Its flits move every cycle; only its delivery comes after the window.
    let (_dir, p) = common::temp_file("long.txt", "time src dst flits\n0 1 2 5000\n");
    let opts = ReplayOptions {
        stall_cycles: 1000,
        ..ReplayOptions::default()
    };
    let s = replay(&p, &opts).unwrap();
    assert_eq!((s.delivered, s.flits), (1, 5000));
}

#[test]
fn sizes_beyond_the_largest_message_are_refused_and_size_zero_is_one_flit() {
    let dir = tempfile::tempdir().unwrap();
    for (name, text) in [
        ("f.txt", "time src dst flits\n0 1 2 4294967296\n"),
        ("b.txt", "time src dst bytes\n0 1 2 18446744073709551615\n"),
    ] {
        let p = common::write_file(dir.path(), name, text);
        let e = replay(&p, &ReplayOptions::default())
            .unwrap_err()
            .to_string();
        assert!(
            e.contains(&format!("{name}:2: message 0 of size"))
                && e.contains("more than 4294967295 flits"),
            "{e}"
        );
    }
    let p = common::write_file(dir.path(), "z.txt", "time src dst bytes\n0 1 2 0\n");
    let s = replay(&p, &ReplayOptions::default()).unwrap();
    assert_eq!(s.flits, 1);
}

#[test]
fn a_compressed_line_longer_than_the_cap_is_refused_with_its_line() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("bomb.gz");
    let mut z = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    std::io::Write::write_all(&mut z, b"time src dst flits\n0 1 2 ").unwrap();
    std::io::Write::write_all(&mut z, &vec![b'9'; 1 << 20]).unwrap();
    std::fs::write(&p, z.finish().unwrap()).unwrap();
    let (code, err) = cli(&["--trace", p.to_str().unwrap()]);
    assert_eq!(code, 1);
    assert!(
        err.contains("bomb.gz:2: line longer than 65536 bytes"),
        "{err}"
    );
}

#[test]
fn a_text_trace_starting_with_a_byte_order_mark_replays() {
    let (_dir, p) = common::temp_file("bom.txt", "\u{feff}time src dst flits\n0 1 2 3\n");
    assert_eq!(replay(&p, &ReplayOptions::default()).unwrap().delivered, 1);
}

#[test]
fn netrace_times_going_backwards_are_refused_like_the_text_readers() {
    let dir = tempfile::tempdir().unwrap();
    let p = netrace(
        dir.path(),
        "uns.tra.bz2",
        &[],
        &[(100, 0, &[]), (5, 1, &[]), (50, 2, &[])],
    );
    let e = replay(&p, &ReplayOptions::default())
        .unwrap_err()
        .to_string();
    assert!(
        e.contains(
            "uns.tra.bz2: byte 95 (decompressed): packet 1: time goes backwards (5 after 100)"
        ),
        "{e}"
    );
}

#[test]
fn a_dangling_dependency_is_an_error_in_a_whole_trace_and_dropped_and_counted_in_a_region() {
    let dir = tempfile::tempdir().unwrap();
    // Text: message 0 names 1 as its dependant, and 1 never comes.
    let p = common::write_file(
        dir.path(),
        "dang.txt",
        "time src dst flits id deps\n0 0 1 1 0 1\n4 1 2 1 2 -\n",
    );
    let e = replay(&p, &deps()).unwrap_err().to_string();
    assert!(
        e.contains("lists 1 as a dependant, but there is no message 1 (message 2 came"),
        "{e}"
    );
    // Beyond the trace's last id: a recording that ended before them; counted.
    let p = common::write_file(
        dir.path(),
        "end.txt",
        "time src dst flits id deps\n0 0 1 1 0 7\n",
    );
    let s = replay(&p, &deps()).unwrap();
    assert_eq!((s.delivered, s.dangling_dependencies), (1, 1));
    // Netrace, two regions: region 0's packets name dependants in region 1, which a
    // replay of region 0 alone does not have.
    let n = netrace(
        dir.path(),
        "reg.tra.bz2",
        &[2, 2],
        &[(0, 0, &[2]), (1, 1, &[3]), (10, 2, &[]), (11, 3, &[])],
    );
    let cfg = common::preset("wormhole-torus-dor.ron");
    let mut src = open_with(
        &n,
        &OpenOptions {
            region: Some(0),
            ..OpenOptions::default()
        },
    )
    .unwrap();
    let s = replay_machine(&cfg, src.as_mut(), &deps(), &mut |_| Ok(())).unwrap();
    assert_eq!((s.delivered, s.dangling_dependencies), (2, 2));
    let s = replay(&n, &deps()).unwrap();
    assert_eq!((s.delivered, s.dangling_dependencies), (4, 0));
}

/// Eight messages around a ring of the torus with one VC and no dateline: a deadlock.
fn ring(dir: &Path) -> PathBuf {
    let mut t = String::from("time src dst flits\n");
    for i in 0..8 {
        t.push_str(&format!("0 {i} {} 64\n", (i + 5) % 8));
    }
    common::write_file(dir, "ring.txt", &t)
}

#[test]
fn a_deadlocked_replay_is_a_deadlock_with_the_waiting_cycle_on_any_thread_count() {
    let dir = tempfile::tempdir().unwrap();
    let p = ring(dir.path());
    let base = common::preset_with(
        "wormhole-torus-dor.ron",
        &["switching.unsafe_routing=true", "router.vcs=1"],
    );
    let opts = ReplayOptions {
        stall_cycles: 2000,
        ..ReplayOptions::default()
    };
    for threads in [1, 2] {
        let mut cfg = base.clone();
        cfg.experiment.threads = threads;
        cfg.experiment.partition_min_nodes = Some(1);
        let mut src = open(&p).unwrap();
        match replay_machine(&cfg, src.as_mut(), &opts, &mut |_| Ok(())) {
            Err(Error::Deadlock(text)) => {
                assert!(text.contains("replay deadlocked at cycle"), "{text}");
                if threads == 1 {
                    assert!(text.contains("waiting cycle of 8 channels"), "{text}");
                } else {
                    assert!(text.contains("--threads 1"), "{text}");
                }
            }
            other => panic!("{threads} threads: not a deadlock: {other:?}"),
        }
    }
    // The command exits 3, as `run` does, and describes the waits on any thread count.
    let (code, err) = cli(&[
        "--trace",
        p.to_str().unwrap(),
        "--set",
        "switching.unsafe_routing=true",
        "--set",
        "router.vcs=1",
        "--threads",
        "2",
        "--set",
        "experiment.partition_min_nodes=1",
    ]);
    assert_eq!(code, 3, "{err}");
    assert!(err.contains("waiting cycle of 8 channels"), "{err}");
}

/// D31: dependants named far ahead of the reader are held until they come; more than
/// `MAX_AHEAD` (2^20) of them at once is refused instead of holding memory without bound.
#[test]
fn dependants_named_too_far_ahead_are_refused_instead_of_held_without_bound() {
    let dir = tempfile::tempdir().unwrap();
    let mut text = String::from("time src dst flits id deps\n");
    for i in 0..(1u64 << 20) + 10 {
        text.push_str(&format!("{} 1 2 1 {i} {}\n", i, 1_000_000_000_000u64 + i));
    }
    let p = common::write_file(dir.path(), "ahead.txt", &text);
    let e = replay(&p, &deps()).unwrap_err().to_string();
    assert!(e.contains("named ahead") && e.contains("1048576"), "{e}");
}

/// The shipped traces name their dependants far fewer ahead than the limit: the limit
/// refuses only traces no recording produces.
#[test]
fn the_shipped_netrace_traces_name_their_dependants_well_within_the_limit() {
    for name in ["example", "shrtex", "lngrex", "multiregion"] {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("traces/netrace")
            .join(format!("{name}.tra.bz2"));
        let mut src = open(&path).unwrap();
        let mut ahead = std::collections::BTreeSet::new();
        let mut most = 0;
        while let Some(m) = src.next_msg().unwrap() {
            ahead = ahead.split_off(&(m.id + 1));
            ahead.extend(m.children.iter().copied().filter(|&c| c > m.id));
            most = most.max(ahead.len());
        }
        assert!(
            most < 10_000,
            "{name}: {most} dependants named ahead at once"
        );
        eprintln!("{name}: at most {most} dependants named ahead");
    }
}
