//! The DUMPI writer (`trace::dumpi_write`) writes what sst-dumpi writes and what the reader
//! reads back call for call; the generated application traces in traces/generated replay
//! with every message delivered once and exactly as many messages as the applications'
//! communication and the collectives' documented algorithms give; the committed files
//! are what the generator (examples/dumpi_gen.rs) writes today; and with `--exact` the
//! generator's recorded times are the closed forms docs/dumpi-gen.md ("Exact timing")
//! gives.

use crate::common;

#[path = "../../examples/dumpi_gen.rs"]
#[allow(dead_code)]
mod dumpi_gen;

use clap::Parser;
use dumpi_gen::{generate, write, Cli};
use routemu::experiments::replay::{replay, ReplayMode, ReplayOptions};
use routemu::experiments::traces::open;
use routemu::mpi_semantics::collectives::{resolve, Algorithm, Collective, Op, Sizes};
use routemu::switching::wormhole::WormholeNet;
use routemu::trace::dumpi::{Args, Call, DumpiFile, Stamp, Status};
use routemu::trace::dumpi_write::{Header, RankWriter, X86_64_TYPE_SIZES};
use std::path::PathBuf;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Every call the writer encodes, with arguments a reader could confuse (negative
/// sources, several statuses, a request array, MPI_UNDEFINED colour).
fn every_call() -> Vec<Call> {
    use Args::*;
    let p2p = |count, peer, tag| (count, 14i16, peer, tag);
    let (c, d, peer, tag) = p2p(1600, 3, 7);
    let calls: Vec<(u16, Args, Vec<Status>)> = vec![
        (
            124,
            Init {
                argv: vec!["./app".into(), "-n".into(), "".into()],
            },
            vec![],
        ),
        (82, CommQuery { comm: 2, value: 3 }, vec![]),
        (81, CommQuery { comm: 2, value: 8 }, vec![]),
        (
            0,
            Send {
                count: c,
                datatype: d,
                dest: peer,
                tag,
                comm: 2,
                request: Option::None,
            },
            vec![],
        ),
        (
            4,
            Send {
                count: 0,
                datatype: 5,
                dest: 0,
                tag: 0,
                comm: 2,
                request: Option::None,
            },
            vec![],
        ),
        (
            8,
            Send {
                count: c,
                datatype: d,
                dest: peer,
                tag,
                comm: 2,
                request: Some(2),
            },
            vec![],
        ),
        (
            10,
            Send {
                count: 1,
                datatype: 9,
                dest: 1,
                tag: 1,
                comm: 4,
                request: Some(3),
            },
            vec![],
        ),
        (
            1,
            Recv {
                count: c,
                datatype: d,
                source: -1,
                tag: -1,
                comm: 2,
                request: Option::None,
            },
            vec![(12_800, 5, 0, 0, 7)],
        ),
        (
            1,
            Recv {
                count: 1,
                datatype: 9,
                source: 2,
                tag: 9,
                comm: 2,
                request: Option::None,
            },
            vec![],
        ),
        (
            12,
            Recv {
                count: c,
                datatype: d,
                source: 1,
                tag: 7,
                comm: 2,
                request: Some(4),
            },
            vec![],
        ),
        (13, Wait { requests: vec![2] }, vec![(12_800, 3, 0, 0, 7)]),
        (
            18,
            Wait {
                requests: vec![3, 4],
            },
            vec![(4, 1, 0, 0, 1), (12_800, 1, 0, 0, 7)],
        ),
        (
            18,
            Wait {
                requests: vec![5, 6, 7],
            },
            vec![],
        ),
        (52, Barrier { comm: 2 }, vec![]),
        (
            53,
            Bcast {
                count: 4,
                datatype: 9,
                root: 0,
                comm: 2,
            },
            vec![],
        ),
        (
            62,
            Reduce {
                count: 1,
                datatype: 14,
                op: 1,
                root: 3,
                comm: 2,
            },
            vec![],
        ),
        (
            65,
            Allreduce {
                count: 2,
                datatype: 14,
                op: 3,
                comm: 4,
            },
            vec![],
        ),
        (
            60,
            Alltoall {
                sendcount: 32,
                sendtype: 14,
                recvcount: 32,
                recvtype: 14,
                comm: 5,
            },
            vec![],
        ),
        (
            58,
            Allgather {
                sendcount: 1,
                sendtype: 14,
                recvcount: 1,
                recvtype: 14,
                comm: 2,
            },
            vec![],
        ),
        (
            86,
            CommSplit {
                comm: 2,
                color: 1,
                key: -3,
                newcomm: 4,
            },
            vec![],
        ),
        (
            86,
            CommSplit {
                comm: 2,
                color: -32766,
                key: 0,
                newcomm: 1,
            },
            vec![],
        ),
        (125, None, vec![]),
    ];
    calls
        .into_iter()
        .enumerate()
        .map(|(i, (label, args, statuses))| {
            let t = |k: u64| Stamp {
                sec: 1_704_067_200 + k / 3,
                nsec: (k * 333_333_333 % 1_000_000_000) as u32,
            };
            let k = 3 * i as u64;
            Call {
                label,
                offset: 0,
                thread: Some(i as u16 % 2),
                cpu: Some((
                    Stamp {
                        sec: 0,
                        nsec: 10 * k as u32,
                    },
                    Stamp {
                        sec: 1,
                        nsec: 10 * k as u32 + 5,
                    },
                )),
                wall: Some((t(k), t(k + 1))),
                counters: Vec::new(),
                statuses,
                args,
            }
        })
        .collect()
}

#[test]
fn what_the_writer_writes_the_reader_reads_back_call_for_call() {
    let header = Header {
        version: (13, 0, 0),
        start_time: 1_704_067_200,
        hostname: "nid00042".into(),
        username: "<none>".into(),
        mesh_coords: vec![1, 0, 0],
        mesh_size: vec![4, 2, 2],
    };
    let mut w = RankWriter::new(header, &X86_64_TYPE_SIZES, 0, 1_704_067_200).unwrap();
    let calls = every_call();
    for c in &calls {
        w.write(c).unwrap();
    }
    // A call without stamps or thread id (a mask without those bits) reads back too.
    let mut bare = calls[13].clone();
    (bare.thread, bare.cpu, bare.wall) = (None, None, None);
    w.write(&bare).unwrap();
    let mut f = DumpiFile::from_bytes(w.finish(), "round-trip").unwrap();
    assert_eq!(f.version, (13, 0, 0));
    assert_eq!(f.type_sizes, X86_64_TYPE_SIZES);
    for want in calls.iter().chain([&bare]) {
        let mut got = f.next_call().unwrap().expect("as many calls as written");
        got.offset = 0;
        assert_eq!(&got, want);
    }
    assert_eq!(f.next_call().unwrap(), None);
}

/// The header fields and biases of a rank file, read from its bytes.
fn header_of(bytes: &[u8]) -> (Header, u32, u32) {
    let at = |o: usize, n: usize| &bytes[o..o + n];
    let u64_at = |o: usize| u64::from_be_bytes(at(o, 8).try_into().unwrap());
    let u32_at = |o: usize| u32::from_be_bytes(at(o, 4).try_into().unwrap());
    let u16_at = |o: usize| u16::from_be_bytes(at(o, 2).try_into().unwrap()) as usize;
    let idx = bytes.len() - 64;
    let (mut h, body) = (u64_at(idx + 32) as usize, u64_at(idx + 40) as usize);
    let version = (bytes[h], bytes[h + 1], bytes[h + 2]);
    let start_time = u64_at(h + 3);
    h += 11;
    let mut text = || {
        let n = u16_at(h);
        let s = String::from_utf8(at(h + 2, n).to_vec()).unwrap();
        h += 2 + n;
        s
    };
    let (hostname, username) = (text(), text());
    let mut ints = || {
        let n = u32_at(h) as usize;
        let v = (0..n)
            .map(|i| u32_at(h + 4 + 4 * i) as i32)
            .collect::<Vec<_>>();
        h += 4 + 4 * n;
        v
    };
    let (mesh_coords, mesh_size) = (ints(), ints());
    let header = Header {
        version,
        start_time,
        hostname,
        username,
        mesh_coords,
        mesh_size,
    };
    (header, u32_at(body), u32_at(body + 4))
}

#[test]
fn re_encoding_sandias_testtrace_rank_file_reproduces_it_byte_for_byte() {
    // testtrace-0000.bin (written by sst-dumpi's libdumpi on a laptop) holds only calls
    // the writer encodes: re-encoding its header, biases, size table and calls must give
    // the same file, footer call counts and index included.
    let original = std::fs::read(root().join("traces/dumpi-sst/testtrace-0000.bin")).unwrap();
    let (header, cpu_bias, wall_bias) = header_of(&original);
    let mut r = DumpiFile::from_bytes(original.clone(), "testtrace-0000.bin").unwrap();
    let mut w = RankWriter::new(header, &r.type_sizes, cpu_bias, wall_bias).unwrap();
    let mut n = 0;
    while let Some(c) = r.next_call().unwrap() {
        w.write(&c).unwrap();
        n += 1;
    }
    assert_eq!(n, 9);
    assert!(
        w.finish() == original,
        "re-encoded testtrace-0000.bin differs"
    );
}

/// The committed traces: the arguments of each generator command.
const GENERATED: [&str; 3] = [
    "halo2d --ranks 16 --iters 10 --out traces/generated/halo2d-16",
    "halo3d26 --ranks 27 --iters 5 --out traces/generated/halo3d26-27",
    "fft --ranks 16 --iters 4 --out traces/generated/fft-16",
];

fn cli(args: &str) -> Cli {
    Cli::try_parse_from(std::iter::once("dumpi_gen").chain(args.split_whitespace())).unwrap()
}

/// Why the generator refuses command `args` (empty if it accepts it).
fn refusal(args: &str) -> String {
    generate(&cli(args)).err().unwrap_or_default()
}

/// The committed traces: each generator command, its options and the `.meta` file it
/// writes.
fn committed_traces() -> impl Iterator<Item = (&'static str, Cli, PathBuf)> {
    GENERATED.into_iter().map(|args| {
        let c = cli(args);
        let meta = root().join(format!("{}.meta", c.out.display()));
        (args, c, meta)
    })
}

#[test]
fn the_committed_traces_are_what_the_generator_writes_today() {
    let readme = std::fs::read_to_string(root().join("traces/generated/README.md")).unwrap();
    let tmp = tempfile::tempdir().unwrap();
    for args in GENERATED {
        let command = format!("cargo run --release --example dumpi_gen -- {args}");
        assert!(readme.contains(&command), "README gives `{command}`");
        let c = cli(args);
        let t = generate(&c).unwrap();
        write(&t, tmp.path()).unwrap();
        let committed = root().join(c.out.parent().unwrap());
        let mut names = vec![format!("{}.meta", t.prefix)];
        names.extend((0..t.ranks.len()).map(|r| format!("{}-{r:04}.bin", t.prefix)));
        for name in names {
            let now = std::fs::read(tmp.path().join(&name)).unwrap();
            let then = std::fs::read(committed.join(&name)).unwrap();
            assert!(
                now == then,
                "{name} differs from what `{command}` writes now"
            );
        }
        // No more rank files than the generator writes.
        let extra = committed.join(format!("{}-{:04}.bin", t.prefix, t.ranks.len()));
        assert!(!extra.exists(), "{} is stale", extra.display());
    }
}

#[test]
fn the_same_command_gives_the_same_bytes_and_another_seed_other_timings() {
    for args in GENERATED {
        let (a, b) = (generate(&cli(args)).unwrap(), generate(&cli(args)).unwrap());
        assert!(a.ranks == b.ranks && a.meta == b.meta, "{args}");
        let c = generate(&cli(&format!("{args} --seed 2"))).unwrap();
        assert_eq!(c.ranks.len(), a.ranks.len());
        assert!(c.ranks != a.ranks, "{args}: the seed changes the timings");
    }
}

#[test]
fn parameters_that_do_not_fit_the_application_are_refused_with_the_flag() {
    for (args, says) in [
        ("halo2d --ranks 7", "--ranks 7"),
        ("halo2d --ranks 2", "--ranks 2"),
        ("halo3d26 --ranks 9", "--ranks 9"),
        ("halo3d26 --ranks 1", "--ranks 1"),
        ("fft --ranks 13", "--ranks 13"),
        ("halo2d --ranks 16 --iters 0", "--iters 0"),
        ("halo2d --ranks 16 --bytes 12", "--bytes 12"),
        ("halo3d26 --ranks 8 --bytes 0", "--bytes 0"),
        ("fft --ranks 16 --bytes 1000", "--bytes 1000"),
        ("halo2d --ranks 8192", "--ranks 8192"),
    ] {
        let e = refusal(&format!("{args} --out x/p"));
        assert!(e.contains(says), "{args}: {e}");
    }
    let e = refusal("halo2d --ranks 4 --out ..");
    assert!(e.contains("--out"), "{e}");
}

/// Messages the expansion gives a collective of `bytes` (per block for the all-to-all
/// kinds) on p ranks: the counts docs/collectives.md gives for the algorithm MPICH's
/// default choice takes (asked of `resolve`).
fn collective_msgs(c: Collective, p: u64, bytes: u64) -> u64 {
    let alg = resolve(
        &c,
        Algorithm::Auto,
        p as u32,
        Sizes::Uniform(bytes),
        Op::builtin(8),
    )
    .unwrap();
    let rounds = u64::from(p.next_power_of_two().trailing_zeros());
    let pof2 = 1u64 << p.ilog2();
    let (r, l) = (p - pof2, u64::from(pof2.trailing_zeros()));
    match (c, alg) {
        (Collective::Barrier, Algorithm::Dissemination) => p * rounds,
        (Collective::Bcast { .. } | Collective::Reduce { .. }, Algorithm::Binomial) => p - 1,
        (Collective::Allreduce, Algorithm::RecursiveDoubling) => 2 * r + pof2 * l,
        (Collective::Allgather, Algorithm::RecursiveDoubling) => p * l,
        (Collective::Allgather | Collective::Alltoall, Algorithm::Bruck) => p * rounds,
        (Collective::Alltoall, Algorithm::Scattered | Algorithm::Pairwise) => p * (p - 1),
        other => panic!("no count for {other:?} in this test"),
    }
}

/// Messages in a trace of the generator's applications, from their parameters.
fn expected_messages(c: &Cli) -> u64 {
    let p = u64::from(c.ranks);
    let iters = u64::from(c.iters);
    let world_colls = |point_to_point: u64| {
        point_to_point
            + collective_msgs(Collective::Barrier, p, 0)
            + iters * collective_msgs(Collective::Allreduce, p, 8)
            + collective_msgs(Collective::Reduce { root: 0 }, p, 8)
    };
    match c.app {
        // 4 neighbours on a 4 × 4 periodic grid.
        dumpi_gen::App::Halo2d => world_colls(4 * p * iters),
        // Not periodic: direction d has Π(c − |d_i|) ranks with a neighbour that way.
        dumpi_gen::App::Halo3d26 => {
            let side = (1..).find(|s: &u64| s * s * s >= p).unwrap();
            let mut pairs = 0;
            for dx in [-1i64, 0, 1] {
                for dy in [-1i64, 0, 1] {
                    for dz in [-1i64, 0, 1] {
                        if (dx, dy, dz) != (0, 0, 0) {
                            pairs += [dx, dy, dz]
                                .iter()
                                .map(|d| side - d.unsigned_abs())
                                .product::<u64>();
                        }
                    }
                }
            }
            world_colls(pairs * iters)
        }
        // A ping and a pong per pair and iteration.
        dumpi_gen::App::Pingpong => 2 * iters * (p / 2),
        // A 4 × 4 grid: 4 row and 4 column Alltoalls and a world one per iteration.
        dumpi_gen::App::Fft => {
            let (pr, pc) = (4u64, 4u64);
            assert_eq!(pr * pc, p);
            let share = c.bytes.unwrap_or(4096);
            collective_msgs(Collective::Bcast { root: 0 }, p, 16)
                + iters
                    * (pr * collective_msgs(Collective::Alltoall, pc, share / pc)
                        + pc * collective_msgs(Collective::Alltoall, pr, share / pr)
                        + collective_msgs(Collective::Alltoall, p, share / p))
                + collective_msgs(Collective::Allgather, p, 8)
        }
    }
}

/// Replays the trace of `meta` on `cfg` with `opts` and fails, naming the case `what`,
/// unless it holds `expected` messages and delivers each of them once.
fn replays_each_message_once(
    cfg: &routemu::config::HwConfig,
    meta: &std::path::Path,
    opts: &ReplayOptions,
    expected: u64,
    what: &str,
) {
    let mut src = open(meta).unwrap();
    let mut ids = std::collections::HashSet::new();
    let s = replay::<WormholeNet>(cfg, src.as_mut(), opts, &mut |r| {
        assert!(ids.insert(r.id), "{what}: message {} delivered twice", r.id);
        Ok(())
    })
    .unwrap();
    assert_eq!(
        (s.messages, s.delivered, ids.len() as u64),
        (expected, expected, expected),
        "{what}"
    );
}

#[test]
fn every_generated_trace_replays_with_the_messages_its_application_sends() {
    let cfg = common::preset("wormhole-torus-dor.ron");
    for (args, c, meta) in committed_traces() {
        let expected = expected_messages(&c);
        let d = open(&meta).unwrap().describe();
        assert!(
            d.contains(&format!(
                "{expected} receives matched, 0 receives without a send"
            )),
            "{args}: every receive takes one send: {d}"
        );
        for mode in [ReplayMode::Open, ReplayMode::Deps] {
            let opts = ReplayOptions {
                mode,
                time_scale: 0.001, // 1 cycle per µs
                ..ReplayOptions::default()
            };
            replays_each_message_once(&cfg, &meta, &opts, expected, &format!("{args} {mode:?}"));
        }
    }
}

#[test]
fn a_trace_that_cannot_be_written_whole_leaves_no_file_behind() {
    let tmp = tempfile::tempdir().unwrap();
    let t = generate(&cli("halo2d --ranks 4 --iters 1 --out x/p")).unwrap();
    // Rank 3's temporary file cannot be created (a directory is in the way).
    std::fs::create_dir(tmp.path().join(".p-0003.bin.tmp")).unwrap();
    let e = write(&t, tmp.path()).unwrap_err();
    assert!(e.contains(".p-0003.bin.tmp"), "{e}");
    let left: Vec<_> = std::fs::read_dir(tmp.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    assert_eq!(
        left,
        [".p-0003.bin.tmp"],
        "nothing written, no temporary left"
    );
}

/// The generated ranks start up to 200 µs apart and wait for one another in their first
/// Barrier, but a collective's sends are stamped with the rank's entry into the call: a
/// rank's lag is measured from its recorded exit from the call (`TraceMsg::lag_from`),
/// so waiting inside a collective does not make it late for the rest of the trace. On a
/// network whose latencies are nanoseconds against phases of tens of microseconds, the
/// dependency-driven replay then keeps to the recorded span (it ran 5–9% longer when the
/// lag was measured from the entry).
#[test]
fn waiting_inside_a_collective_does_not_make_a_rank_late_for_the_rest_of_the_trace() {
    let cfg = common::preset("wormhole-torus-dor.ron");
    for (args, _, meta) in committed_traces() {
        let mut src = open(&meta).unwrap();
        let opts = ReplayOptions {
            mode: ReplayMode::Deps,
            ..ReplayOptions::default()
        };
        let s = replay::<WormholeNet>(&cfg, src.as_mut(), &opts, &mut |_| Ok(())).unwrap();
        let slowdown = s.slowdown.unwrap();
        assert!(
            (1.0..1.001).contains(&slowdown),
            "{args}: slowdown {slowdown} (replayed {} against recorded {})",
            s.replayed_span,
            s.recorded_span
        );
    }
}

/// Wall-clock ns after the traces' start (2024-01-01 00:00:00 UTC).
fn ns(s: Stamp) -> u64 {
    (s.sec - 1_704_067_200) * 1_000_000_000 + u64::from(s.nsec)
}

/// A call's wall-clock entry and exit, ns.
fn wall(c: &Call) -> (u64, u64) {
    let (a, b) = c.wall.expect("wall stamps");
    (ns(a), ns(b))
}

/// Generates `args` into a temporary directory as PREFIX `t`: the options, the `.meta`
/// file and each rank's calls as routemu's reader decodes them.
fn generated(args: &str) -> (tempfile::TempDir, Cli, PathBuf, Vec<Vec<Call>>) {
    let tmp = tempfile::tempdir().unwrap();
    let mut c = cli(&format!("{args} --out t"));
    c.out = tmp.path().join("t");
    let t = generate(&c).unwrap();
    write(&t, tmp.path()).unwrap();
    let calls = (0..t.ranks.len())
        .map(|r| {
            let mut f = DumpiFile::open(&tmp.path().join(format!("t-{r:04}.bin"))).unwrap();
            let mut v = Vec::new();
            while let Some(call) = f.next_call().unwrap() {
                v.push(call);
            }
            v
        })
        .collect();
    let meta = tmp.path().join("t.meta");
    (tmp, c, meta, calls)
}

/// The documented fixed durations of the local calls (ns), by label.
fn fixed_duration(label: u16) -> Option<u64> {
    match label {
        124 => Some(60_000),  // Init
        82 => Some(300),      // Comm_rank
        81 => Some(200),      // Comm_size
        0 => Some(400),       // Send
        8 => Some(400),       // Isend
        12 => Some(300),      // Irecv
        125 => Some(150_000), // Finalize
        _ => None,
    }
}

/// Checks that rank r's first call is entered at 0, that each gap between its consecutive
/// calls is `compute` where `is_compute(previous, next)` and 0 elsewhere, and that its
/// local calls last their fixed durations. Gives the number of compute gaps.
fn check_exact_gaps(
    what: &str,
    r: usize,
    calls: &[Call],
    compute: u64,
    is_compute: impl Fn(&Call, &Call) -> bool,
) -> usize {
    assert_eq!(wall(&calls[0]).0, 0, "{what}: rank {r} starts at 0");
    let mut phases = 0;
    for (i, pair) in calls.windows(2).enumerate() {
        let gap = wall(&pair[1]).0 as i64 - wall(&pair[0]).1 as i64;
        let want = if is_compute(&pair[0], &pair[1]) {
            phases += 1;
            compute
        } else {
            0
        };
        assert_eq!(
            gap,
            want as i64,
            "{what}: rank {r}, between call {i} ({}) and call {} ({})",
            pair[0].name(),
            i + 1,
            pair[1].name()
        );
    }
    for (i, call) in calls.iter().enumerate() {
        if let Some(d) = fixed_duration(call.label) {
            let (a, b) = wall(call);
            assert_eq!(b - a, d, "{what}: rank {r}, call {i} ({})", call.name());
        }
    }
    phases
}

/// docs/dumpi-gen.md, "Exact timing": in an `--exact` pingpong every gap between a rank's
/// calls is 0 but the compute phase before each MPI_Send, which is exactly C; the local
/// calls last their fixed costs; a Recv returns 200 ns after the later of its entry and
/// its message's arrival L + w after the partner's Send was entered; the even rank's
/// iterations last 2C + 2(L + w) + 400 from T₀ = 60,500 ns.
#[test]
fn an_exact_pingpong_trace_has_only_the_compute_phases_between_calls_and_closed_form_times() {
    let (p, iters, bytes, c) = (6usize, 5usize, 800u64, 2_500u64);
    let args =
        format!("pingpong --ranks {p} --iters {iters} --bytes {bytes} --compute-ns {c} --exact");
    let (_tmp, _, _, calls) = generated(&args);
    assert_eq!(calls.len(), p);
    let (l, w) = (1_500u64, bytes / 10);
    let (t0, period) = (60_500u64, 2 * c + 2 * (l + w) + 400);
    let count = (bytes / 8) as i32;
    let entries = |r: usize, label: u16| -> Vec<(u64, u64)> {
        calls[r]
            .iter()
            .filter(|x| x.label == label)
            .map(wall)
            .collect()
    };
    for (r, rank) in calls.iter().enumerate() {
        let partner = r ^ 1;
        let per_iteration: [u16; 2] = if r % 2 == 0 { [0, 1] } else { [1, 0] };
        let want: Vec<u16> = [124, 82, 81]
            .into_iter()
            .chain((0..iters).flat_map(|_| per_iteration))
            .chain([125])
            .collect();
        let got: Vec<u16> = rank.iter().map(|x| x.label).collect();
        assert_eq!(
            got, want,
            "rank {r}: Init, Comm_rank, Comm_size, the loop, Finalize"
        );
        let phases = check_exact_gaps(&args, r, rank, c, |_, next| next.label == 0);
        assert_eq!(phases, iters, "rank {r}: one compute phase an iteration");
        for x in rank {
            match x.label {
                0 => assert_eq!(
                    (&x.args, x.statuses.len()),
                    (
                        &Args::Send {
                            count,
                            datatype: 14,
                            dest: partner as i32,
                            tag: 0,
                            comm: 2,
                            request: None,
                        },
                        0
                    ),
                    "rank {r}"
                ),
                1 => assert_eq!(
                    (&x.args, &x.statuses),
                    (
                        &Args::Recv {
                            count,
                            datatype: 14,
                            source: partner as i32,
                            tag: 0,
                            comm: 2,
                            request: None,
                        },
                        &vec![(bytes as i32, partner as i32, 0, 0, 0)]
                    ),
                    "rank {r}"
                ),
                _ => {}
            }
        }
        // The k-th Recv takes the partner's k-th message.
        let (sends, recvs) = (entries(partner, 0), entries(r, 1));
        assert_eq!(sends.len(), recvs.len());
        for (k, (&(sent, _), &(enter, leave))) in sends.iter().zip(&recvs).enumerate() {
            assert_eq!(leave, enter.max(sent + l + w) + 200, "rank {r}, Recv {k}");
        }
        // The closed forms of docs/dumpi-gen.md.
        let mine = entries(r, 0);
        for k in 0..iters as u64 {
            let tk = t0 + k * period;
            let (send, recv) = (mine[k as usize], recvs[k as usize]);
            if r % 2 == 0 {
                assert_eq!(send, (tk + c, tk + c + 400), "rank {r}, Send {k}");
                assert_eq!(recv, (tk + c + 400, tk + period), "rank {r}, Recv {k}");
            } else {
                let enter = if k == 0 { t0 } else { tk - l - w + 200 };
                assert_eq!(recv, (enter, tk + c + l + w + 200), "rank {r}, Recv {k}");
                let s = tk + 2 * c + l + w + 200;
                assert_eq!(send, (s, s + 400), "rank {r}, Send {k}");
            }
        }
        let tn = t0 + iters as u64 * period;
        let finalize = if r % 2 == 0 { tn } else { tn - l - w + 200 };
        assert_eq!(wall(rank.last().unwrap()).0, finalize, "rank {r}: Finalize");
    }
}

/// routemu's reader matches every receive of a generated pingpong (exact or not) to its
/// partner's send, and the dependency-driven replay delivers each of the 2·I·(P/2)
/// messages once.
#[test]
fn pingpong_traces_replay_with_every_receive_matched_and_every_message_delivered() {
    let cfg = common::preset("wormhole-torus-dor.ron");
    for args in [
        "pingpong --ranks 4 --iters 5 --exact",
        "pingpong --ranks 8 --iters 3 --bytes 4096 --compute-ns 0 --exact",
        "pingpong --ranks 6 --iters 4",
    ] {
        let (_tmp, c, meta, _) = generated(args);
        let expected = expected_messages(&c);
        assert_eq!(expected, 2 * u64::from(c.iters) * u64::from(c.ranks / 2));
        let d = open(&meta).unwrap().describe();
        assert!(
            d.contains(&format!(
                "{expected} messages, times in ns, {expected} receives matched, 0 receives without a send"
            )),
            "{args}: every receive takes one send: {d}"
        );
        let opts = ReplayOptions {
            mode: ReplayMode::Deps,
            ..ReplayOptions::default()
        };
        replays_each_message_once(&cfg, &meta, &opts, expected, args);
    }
}

/// With `--exact --compute-ns C` the collective applications have exactly C between the
/// calls around each compute phase (halo2d, halo3d26: each iteration's Waitall and
/// Allreduce; fft: before each Alltoall) and no other gap; the local calls last their
/// fixed costs; every collective returns on all members at the same time, its cost plus
/// 200 ns after the last member entered.
#[test]
fn exact_collective_apps_have_exactly_the_given_compute_where_they_compute_and_no_other_gap() {
    let c = 7_000u64;
    type IsCompute = fn(&Call, &Call) -> bool;
    let halo: IsCompute = |prev, next| (prev.label, next.label) == (18, 65);
    let fft: IsCompute = |_, next| next.label == 60;
    for (args, is_compute, phases_per_iteration) in [
        ("halo2d --ranks 4 --iters 3 --bytes 64", halo, 1),
        ("halo3d26 --ranks 8 --iters 2 --bytes 64", halo, 1),
        ("fft --ranks 4 --iters 2 --bytes 256", fft, 3),
    ] {
        let args = format!("{args} --compute-ns {c} --exact");
        let (_tmp, cl, _, calls) = generated(&args);
        for (r, rank) in calls.iter().enumerate() {
            let phases = check_exact_gaps(&args, r, rank, c, is_compute);
            assert_eq!(
                phases,
                phases_per_iteration * cl.iters as usize,
                "{args}: rank {r}"
            );
        }
        // World collectives (all but fft's row and column Alltoalls): the n-th one of
        // every rank is one instance.
        let p = calls.len();
        let rounds = u64::from(p.next_power_of_two().trailing_zeros());
        let world: Vec<Vec<&Call>> = calls
            .iter()
            .map(|rank| {
                rank.iter()
                    .filter(|x| match &x.args {
                        Args::Barrier { comm } | Args::Allreduce { comm, .. } => *comm == 2,
                        Args::Reduce { comm, .. } => *comm == 2,
                        _ => false,
                    })
                    .collect()
            })
            .collect();
        assert!(!world[0].is_empty() || cl.app == dumpi_gen::App::Fft);
        for n in 0..world[0].len() {
            let last_in = (0..p).map(|r| wall(world[r][n]).0).max().unwrap();
            for (r, w) in world.iter().enumerate() {
                // A tree of ⌈log₂ p⌉ latencies; one double's wire time is 0.
                assert_eq!(
                    wall(w[n]).1,
                    last_in + rounds * 1_500 + 200,
                    "{args}: rank {r}, world collective {n} ({})",
                    w[n].name()
                );
            }
        }
    }
}

/// `--exact` takes the seed out: the same trace for every seed.
#[test]
fn an_exact_trace_is_the_same_whatever_the_seed() {
    for args in [
        "pingpong --ranks 4 --iters 3 --exact --out x/p",
        "halo2d --ranks 4 --iters 2 --exact --out x/p",
    ] {
        let a = generate(&cli(args)).unwrap();
        let b = generate(&cli(&format!("{args} --seed 2"))).unwrap();
        assert!(a.ranks == b.ranks && a.meta == b.meta, "{args}");
    }
}

#[test]
fn pingpong_is_refused_an_odd_number_of_ranks_or_fewer_than_two() {
    for (args, says) in [
        ("pingpong --ranks 3", "--ranks 3"),
        ("pingpong --ranks 7 --exact", "--ranks 7"),
        ("pingpong --ranks 1", "--ranks 1"),
        ("pingpong --ranks 0", "--ranks 0"),
        ("pingpong --ranks 2 --bytes 12", "--bytes 12"),
        (
            "pingpong --ranks 2 --bytes 4294967296",
            "--bytes 4294967296",
        ),
        (
            "pingpong --ranks 2 --compute-ns 1000000000001",
            "--compute-ns",
        ),
    ] {
        let e = refusal(&format!("{args} --out x/p"));
        assert!(e.contains(says), "{args}: {e}");
    }
    let e = refusal("pingpong --ranks 3 --out x/p");
    assert!(e.contains("even number of ranks"), "{e}");
    assert!(generate(&cli("pingpong --ranks 2 --out x/p")).is_ok());
}

// ---------------------------------------------------------------------------------------
// Elastic replay (issue 28): the application's run time on the emulated machine.

mod elastic {
    use super::*;
    use routemu::config::HwConfig;
    use routemu::experiments::replay::elastic::{Application, ElasticOptions, Overhead};
    use routemu::experiments::replay::{ReplayRecord, ReplaySummary};
    use routemu::foundation::types::NodeId;

    use routemu::topology::Topology;
    use routemu::trace::program::{Op, Program, Req};
    use std::path::Path;

    /// `preset` with `sets` applied.
    pub(super) fn machine(preset: &str, sets: &[&str]) -> HwConfig {
        common::preset_with(preset, sets)
    }

    /// Replays `trace` elastically on `cfg`; the summary and every record.
    pub(super) fn elastic(
        cfg: &HwConfig,
        trace: &Path,
        e: ElasticOptions,
    ) -> (ReplaySummary, Vec<ReplayRecord>) {
        let mut src = open(trace).unwrap();
        let opts = ReplayOptions {
            mode: ReplayMode::Elastic,
            elastic: e,
            ..ReplayOptions::default()
        };
        let mut recs = Vec::new();
        let sum = replay::<WormholeNet>(cfg, src.as_mut(), &opts, &mut |r| {
            recs.push(r.clone());
            Ok(())
        })
        .unwrap();
        (sum, recs)
    }

    fn app(s: &ReplaySummary) -> &Application {
        s.application
            .as_ref()
            .expect("an elastic replay of an MPI trace")
    }

    const INIT: u64 = 60_000 + 300 + 200;
    const FINALIZE: u64 = 150_000;

    /// An exact pingpong on 2 ranks, `iters` iterations of `bytes`-byte messages after
    /// `c` ns of compute: the folder of its trace, the meta file, the torus preset it
    /// replays on, and a message's zero-load latency between the two neighbouring ranks.
    fn exact_pingpong(
        iters: u64,
        c: u64,
        bytes: u64,
    ) -> (tempfile::TempDir, PathBuf, HwConfig, u64) {
        let (tmp, _, meta, _) = generated(&format!(
            "pingpong --ranks 2 --iters {iters} --bytes {bytes} --compute-ns {c} --exact"
        ));
        let cfg = machine("wormhole-torus-dor.ron", &[]);
        let data = routemu::switching::zero_load::wormhole(&cfg, 1, bytes / 8);
        (tmp, meta, cfg, data)
    }

    #[test]
    fn an_idle_pingpong_runs_in_its_closed_form_eagerly_and_by_rendezvous() {
        // Ranks 0 and 1 on neighbouring nodes, 1 cycle a ns: every iteration is two
        // compute phases and two transfers, each its zero-load latency L (the receiver
        // sees the message in the cycle its tail is absorbed). By rendezvous a transfer is
        // RTS, CTS (the receive is posted by then) and the data, and the last send
        // completes one FIN later.
        let (iters, c, bytes) = (5u64, 2_000u64, 800u64);
        let (_tmp, meta, cfg, data) = exact_pingpong(iters, c, bytes);
        let ctrl = routemu::switching::zero_load::wormhole(&cfg, 1, 1);
        let (eager, recs) = elastic(&cfg, &meta, ElasticOptions::default());
        let a = app(&eager);
        assert_eq!(a.runtime, INIT + iters * 2 * (c + data) + FINALIZE);
        assert_eq!(a.rendezvous, 0);
        assert_eq!(recs.len() as u64, 2 * iters);
        assert!(recs.iter().all(|r| r.latency == data));
        for r in &a.ranks {
            assert_eq!(r.compute, iters * c, "rank {}", r.rank);
            assert_eq!(r.local, INIT + FINALIZE, "rank {}", r.rank);
            assert_eq!(r.finish, r.compute + r.communication + r.local);
        }
        let rdv = ElasticOptions {
            eager_limit: bytes - 1,
            ..ElasticOptions::default()
        };
        let (slow, _) = elastic(&cfg, &meta, rdv);
        let b = app(&slow);
        assert_eq!(
            b.runtime,
            INIT + iters * (2 * c + 4 * ctrl + 2 * data) + ctrl + FINALIZE
        );
        assert_eq!(b.rendezvous, 2 * iters);
        // RTS, CTS, FIN per message.
        assert_eq!(b.control_messages, 3 * 2 * iters);
        assert_eq!(a.runtime_recorded, b.runtime_recorded);
    }

    #[test]
    fn host_overheads_and_the_compute_scale_add_up_per_message_and_per_phase() {
        let (iters, c, bytes) = (4u64, 3_000u64, 80u64);
        let (_tmp, meta, cfg, data) = exact_pingpong(iters, c, bytes);
        let spec = "send=10+0.5,recv=7+0.25".parse::<Overhead>().unwrap();
        let e = ElasticOptions {
            compute_scale: 0.5,
            overhead: spec,
            ..ElasticOptions::default()
        };
        let (s, _) = elastic(&cfg, &meta, e);
        // o_s = 10 + 40, o_r = 7 + 20 per message.
        let per = c / 2 + 50 + data + 27;
        assert_eq!(app(&s).runtime, INIT + iters * 2 * per + FINALIZE);
        assert!("send=1,send=2".parse::<Overhead>().is_err());
        assert!("-1".parse::<Overhead>().is_err());
        assert!("x".parse::<Overhead>().is_err());
    }

    /// The run time of `prog` on an idle network where a message from `a` to `b` of `f`
    /// flits takes `lat(a, b, f)` cycles, every message eager: an independent reading of
    /// the elastic semantics (no network, no partitions), by relaxation: each rank runs
    /// until it waits for a message not yet sent, until every rank is done.
    fn idle_runtime(prog: &Program, lat: impl Fn(u32, u32, u64) -> u64) -> u64 {
        const NONE: u64 = u64::MAX;
        let ranks = prog.ranks.len();
        let mut sent = vec![NONE; prog.msgs.len()];
        let mut posted = vec![NONE; prog.recvs.len()];
        let (mut t, mut call, mut op) = (vec![0u64; ranks], vec![0usize; ranks], vec![None; ranks]);
        let done = |r: usize, call: &[usize]| call[r] == prog.ranks[r].calls.len();
        let arrival = |m: u32, sent: &[u64]| {
            let msg = &prog.msgs[m as usize];
            let s = sent[m as usize];
            (s != NONE).then(|| s + lat(msg.src, msg.dst, msg.bytes.div_ceil(8).max(1)))
        };
        while (0..ranks).any(|r| !done(r, &call)) {
            let mut moved = false;
            for r in 0..ranks {
                'rank: while !done(r, &call) {
                    let p = &prog.ranks[r];
                    let c = &p.calls[call[r]];
                    let k = match op[r] {
                        Some(k) => k,
                        None => {
                            if call[r] > 0 {
                                t[r] += c.enter - p.calls[call[r] - 1].exit;
                            }
                            if !c.communicates() {
                                t[r] += c.exit - c.enter;
                                call[r] += 1;
                                moved = true;
                                continue;
                            }
                            c.ops.0
                        }
                    };
                    let mut k = k;
                    while k < c.ops.1 {
                        match p.ops[k as usize] {
                            Op::Send(m) => sent[m as usize] = t[r],
                            Op::Recv(q) => posted[q as usize] = t[r],
                            Op::Probe(_) => unreachable!("no probes here"),
                            Op::Wait { from, to } => {
                                for q in &p.reqs[from as usize..to as usize] {
                                    if let Req::Recv(q) = q {
                                        let m = prog.recvs[*q as usize].msg.unwrap();
                                        match arrival(m, &sent) {
                                            Some(a) => t[r] = t[r].max(a),
                                            None => {
                                                op[r] = Some(k);
                                                break 'rank;
                                            }
                                        }
                                    }
                                }
                            }
                        }
                        k += 1;
                        moved = true;
                    }
                    op[r] = None;
                    call[r] += 1;
                }
            }
            assert!(moved, "the program must not wait for itself");
        }
        t.into_iter().max().unwrap()
    }

    #[test]
    fn an_idle_halo_exchange_runs_as_an_independent_reading_of_its_program_says() {
        // A 4×4 periodic halo on a 4×4 torus, four DMA engines a node: every halo
        // message is one hop in its own direction. The reading without a network is a
        // lower bound (a message never beats its zero-load latency, and the program is
        // max-plus in them); the emulation adds what messages meet on the way (a few
        // dozen cycles here: a collective's message waiting a cycle behind another).
        let (_tmp, _, meta, _) =
            generated("halo2d --ranks 16 --iters 4 --bytes 64 --compute-ns 20000 --exact");
        let cfg = machine("wormhole-torus-dor.ron", &["topology.k=4", "router.dma=4"]);
        let topo = Topology::from_config(&cfg.topology).unwrap();
        let prog = open(&meta).unwrap().take_program().unwrap();
        let want = idle_runtime(&prog, |a, b, f| {
            let h = topo.distance(NodeId(a), NodeId(b)) as u64;
            routemu::switching::zero_load::wormhole(&cfg, h, f)
        });
        let (s, _) = elastic(&cfg, &meta, ElasticOptions::default());
        let got = app(&s).runtime;
        assert!(
            got >= want && got - want <= want / 1000,
            "emulated {got}, idle reading {want}"
        );
    }

    #[test]
    fn a_compute_bound_run_hardly_moves_when_the_links_are_ten_times_slower() {
        let (_tmp, _, meta, _) =
            generated("pingpong --ranks 2 --iters 3 --bytes 8 --compute-ns 1000000 --exact");
        let fast = machine("wormhole-torus-dor.ron", &[]);
        let slow = machine("wormhole-torus-dor.ron", &["links.latency=10"]);
        let (a, _) = elastic(&fast, &meta, ElasticOptions::default());
        let (b, _) = elastic(&slow, &meta, ElasticOptions::default());
        let (a, b) = (app(&a).runtime as f64, app(&b).runtime as f64);
        assert!(b > a, "slower links cost something: {a} {b}");
        assert!(b / a < 1.01, "compute-bound: {a} → {b}");
    }

    #[test]
    fn a_communication_bound_run_speeds_up_on_a_faster_network_and_slows_on_a_slower_one() {
        // Recorded: 1.5 µs a message. Emulated at 1 cycle a ns: a few cycles on the
        // 1-cycle-a-hop torus, 2 µs a hop with links of 2000 cycles.
        let (_tmp, _, meta, _) =
            generated("pingpong --ranks 2 --iters 20 --bytes 8 --compute-ns 100 --exact");
        let (fast, _) = elastic(
            &machine("wormhole-torus-dor.ron", &[]),
            &meta,
            ElasticOptions::default(),
        );
        let (slow, _) = elastic(
            &machine("wormhole-torus-dor.ron", &["links.latency=2000"]),
            &meta,
            ElasticOptions::default(),
        );
        let (f, s) = (app(&fast), app(&slow));
        assert!(f.speedup.unwrap() > 1.0, "{:?}", f.speedup);
        assert!(s.speedup.unwrap() < 1.0, "{:?}", s.speedup);
        assert_eq!(fast.speedup, f.speedup);
        assert_eq!(fast.runtime, Some(f.runtime));
    }

    #[test]
    fn the_run_time_rises_with_routing_time_and_link_latency_where_messages_do_not_meet() {
        // A ping-pong's messages never meet: its run time is max-plus in the latencies
        // and rises with every slower router or link. (Where messages contend, the order
        // they win in can shorten the critical path: docs/dumpi.md, "Elastic replay",
        // shows halo2d-16 finishing 0.007 % sooner with 2-cycle routing.)
        let (_tmp, _, meta, _) =
            generated("pingpong --ranks 2 --iters 4 --bytes 160 --compute-ns 500 --exact");
        for param in ["router.controller.route", "links.latency"] {
            let mut last = 0;
            for v in [1, 2, 4, 8] {
                let cfg = machine("wormhole-torus-dor.ron", &[&format!("{param}={v}")]);
                let (s, _) = elastic(&cfg, &meta, ElasticOptions::default());
                let rt = app(&s).runtime;
                assert!(rt > last, "{param}={v}: {rt} ≤ {last}");
                last = rt;
            }
        }
    }

    #[test]
    fn elastic_replays_are_the_same_on_any_number_of_threads() {
        let trace = root().join("traces/generated/fft-16.meta");
        let one = elastic(
            &machine("wormhole-torus-dor.ron", &[]),
            &trace,
            ElasticOptions::default(),
        );
        for t in [2, 3, 8] {
            let cfg = machine(
                "wormhole-torus-dor.ron",
                &[
                    &format!("experiment.threads={t}"),
                    "experiment.partition_min_nodes=1",
                ],
            );
            let (mut s, r) = elastic(&cfg, &trace, ElasticOptions::default());
            assert!(s.partitions > 1);
            s.partitions = one.0.partitions;
            s.partitioning = one.0.partitioning;
            assert_eq!(
                serde_json::to_value(&s).unwrap(),
                serde_json::to_value(&one.0).unwrap(),
                "{t} threads"
            );
            assert_eq!(r, one.1, "{t} threads");
        }
    }
}
