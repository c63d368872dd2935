//! Fuzzing on stable Rust: seeded random inputs, mutated from the shipped presets and
//! traces or generated, fed to every reader and parser and to the engine, with a plain
//! driver instead of a coverage-guided one (which needs nightly).
//!
//! Each target runs until its case or time budget is spent:
//! - `ROUTEMU_FUZZ_SECS` (default 6): wall-clock seconds per target, 0 for no limit;
//! - `ROUTEMU_FUZZ_CASES` (default unlimited): cases per target;
//! - `ROUTEMU_FUZZ_SEED` (default: from the clock, so that every CI run explores new
//!   inputs): the run's seed, printed at the start, so a failure is reproduced with
//!   `ROUTEMU_FUZZ_SEED=S ROUTEMU_FUZZ_CASES=N cargo test --test fuzz TARGET`.
//!
//! The long run (docs/cli.md, "Fuzzing"): `ROUTEMU_FUZZ_SECS=0 ROUTEMU_FUZZ_CASES=10000
//! cargo test --test fuzz -- --test-threads 2`.
//!
//! A case fails when the code under test panics, when it runs longer than
//! [`CASE_LIMIT`] (a hang), or when an invariant of its result fails; the failing input
//! is written to `target/fuzz-failures/` and the message names the seed and the case.

mod common;

use routemu::config::load::parse_hw;
use routemu::config::{HwConfig, Measure, TopologyConfig};
use routemu::engine::machine::validate;
use routemu::experiments::replay::{replay_machine, ReplayMode, ReplayOptions};
use routemu::foundation::rng::{below, stream, unit, NodeRng};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// A case running longer than this is a hang.
const CASE_LIMIT: Duration = Duration::from_secs(60);

/// A case running longer than this is reported (with its seed) but not failed.
const SLOW_CASE: Duration = Duration::from_secs(5);

fn env_u64(name: &str) -> Option<u64> {
    std::env::var(name).ok().and_then(|v| v.parse().ok())
}

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// What a case did: ran to an accepted result, or was refused with an error (both are
/// fine; the counts show the fuzzer is not only producing junk).
enum Outcome {
    Accepted,
    Refused,
}

/// Runs `case` on seeded inputs until the budget is spent. `case` gets a generator and a
/// scratch directory and returns the input it built (saved on failure) and its outcome,
/// or an invariant violation.
fn fuzz(target: &str, case: impl Fn(&mut NodeRng, &Path) -> (Vec<u8>, Result<Outcome, String>)) {
    let seed = env_u64("ROUTEMU_FUZZ_SEED").unwrap_or_else(|| {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(1, |d| d.as_nanos() as u64)
    });
    let secs = env_u64("ROUTEMU_FUZZ_SECS").unwrap_or(6);
    let cases = env_u64("ROUTEMU_FUZZ_CASES").unwrap_or(u64::MAX);
    eprintln!("fuzz {target}: ROUTEMU_FUZZ_SEED={seed}");
    let start = Instant::now();
    // The watchdog: a case that does not finish is a hang, reported with its seed.
    let current = Arc::new(AtomicU64::new(0));
    let done = Arc::new(std::sync::atomic::AtomicBool::new(false));
    {
        let (current, done, target) = (current.clone(), done.clone(), target.to_string());
        std::thread::spawn(move || {
            let mut seen = (u64::MAX, Instant::now());
            while !done.load(Ordering::Relaxed) {
                std::thread::sleep(Duration::from_millis(200));
                let c = current.load(Ordering::Relaxed);
                if c != seen.0 {
                    seen = (c, Instant::now());
                } else if seen.1.elapsed() > CASE_LIMIT {
                    eprintln!(
                        "fuzz {target}: case {c} hangs (> {CASE_LIMIT:?}); reproduce with \
                         ROUTEMU_FUZZ_SEED={seed} ROUTEMU_FUZZ_CASES={}",
                        c + 1
                    );
                    std::process::abort();
                }
            }
        });
    }
    let scratch = tempfile::tempdir().unwrap();
    let (mut accepted, mut refused, mut n) = (0u64, 0u64, 0u64);
    while n < cases && (secs == 0 || start.elapsed() < Duration::from_secs(secs)) {
        current.store(n, Ordering::Relaxed);
        let mut rng = stream(seed, 0, (n & 0xffff_ffff) as u32, (n >> 32) as u32);
        let dir = scratch.path().join(n.to_string());
        std::fs::create_dir_all(&dir).unwrap();
        let began = Instant::now();
        let result = catch_unwind(AssertUnwindSafe(|| case(&mut rng, &dir)));
        if began.elapsed() > SLOW_CASE {
            let saved = root().join(format!("target/fuzz-slow/{target}-{seed}-{n}.bin"));
            if let Ok((input, _)) = &result {
                let _ = std::fs::create_dir_all(saved.parent().unwrap());
                let _ = std::fs::write(&saved, input);
            }
            eprintln!(
                "fuzz {target}: case {n} took {:.1} s (ROUTEMU_FUZZ_SEED={seed} \
                 ROUTEMU_FUZZ_CASES={}; input in {})",
                began.elapsed().as_secs_f64(),
                n + 1,
                saved.display()
            );
        }
        let failure = match result {
            Ok((_, Ok(Outcome::Accepted))) => {
                accepted += 1;
                None
            }
            Ok((_, Ok(Outcome::Refused))) => {
                refused += 1;
                None
            }
            Ok((input, Err(why))) => Some((input, why)),
            Err(p) => {
                let why = p
                    .downcast_ref::<String>()
                    .cloned()
                    .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                    .unwrap_or_default();
                // Rebuild the input (same generator state) to save it.
                let mut rng = stream(seed, 0, (n & 0xffff_ffff) as u32, (n >> 32) as u32);
                let input =
                    catch_unwind(AssertUnwindSafe(|| case(&mut rng, &dir).0)).unwrap_or_default();
                Some((input, format!("panic: {why}")))
            }
        };
        if let Some((input, why)) = failure {
            done.store(true, Ordering::Relaxed);
            let saved = root().join("target/fuzz-failures");
            let _ = std::fs::create_dir_all(&saved);
            let file = saved.join(format!("{target}-{seed}-{n}.bin"));
            let _ = std::fs::write(&file, &input);
            panic!(
                "fuzz {target}: case {n} failed: {why}\n  input saved to {}\n  reproduce with \
                 ROUTEMU_FUZZ_SEED={seed} ROUTEMU_FUZZ_CASES={} cargo test --test fuzz {target}",
                file.display(),
                n + 1
            );
        }
        let _ = std::fs::remove_dir_all(&dir);
        n += 1;
    }
    done.store(true, Ordering::Relaxed);
    eprintln!("fuzz {target}: {n} cases, {accepted} accepted, {refused} refused");
    assert!(n > 0, "fuzz {target}: no case ran");
}

// ---------- input mutation ----------

/// Values that break careless arithmetic or parsing.
const INTERESTING: &[&str] = &[
    "0",
    "1",
    "-1",
    "2",
    "255",
    "65535",
    "4294967295",
    "4294967296",
    "9223372036854775807",
    "18446744073709551615",
    "18446744073709551616",
    "99999999999999999999999",
    "1e308",
    "1e-320",
    "-0.0",
    "inf",
    "NaN",
    "0.5",
    "",
    "x",
    "None",
    "Some(0)",
    "\u{feff}",
    "()",
    "[]",
];

fn pick<'a, T>(rng: &mut NodeRng, v: &'a [T]) -> &'a T {
    &v[below(rng, v.len() as u64) as usize]
}

/// A few random edits of `bytes`: bit flips, byte overwrites, deletions, duplications of
/// a span, and (for text) a token replaced by an interesting value.
fn mutate(rng: &mut NodeRng, bytes: &[u8], text: bool) -> Vec<u8> {
    let mut v = bytes.to_vec();
    let edits = 1 + below(rng, 4);
    for _ in 0..edits {
        if v.is_empty() {
            v.push(below(rng, 256) as u8);
            continue;
        }
        let at = below(rng, v.len() as u64) as usize;
        match below(rng, if text { 6 } else { 5 }) {
            0 => v[at] ^= 1 << below(rng, 8),
            1 => v[at] = below(rng, 256) as u8,
            2 => {
                let end = (at + 1 + below(rng, 16) as usize).min(v.len());
                v.drain(at..end);
            }
            3 => {
                let end = (at + 1 + below(rng, 64) as usize).min(v.len());
                let span = v[at..end].to_vec();
                let to = below(rng, v.len() as u64) as usize;
                v.splice(to..to, span);
            }
            4 => {
                // Big-endian integers are what binary formats carry.
                let word = pick(rng, &[0u32, 1, 0x7fff_ffff, 0xffff_ffff, 0x8000_0000, 293]);
                let end = (at + 4).min(v.len());
                v.splice(at..end, word.to_be_bytes());
            }
            _ => {
                // Replace the whitespace-delimited token around `at`.
                let is_sep = |b: u8| b.is_ascii_whitespace() || b"(),:[]".contains(&b);
                let mut s = at;
                while s > 0 && !is_sep(v[s - 1]) {
                    s -= 1;
                }
                let mut e = at;
                while e < v.len() && !is_sep(v[e]) {
                    e += 1;
                }
                let token = pick(rng, INTERESTING).as_bytes().to_vec();
                v.splice(s..e, token);
            }
        }
    }
    v
}

fn read(path: &str) -> Vec<u8> {
    std::fs::read(root().join(path)).unwrap()
}

/// The first `lines` lines of a text file.
fn head(bytes: &[u8], lines: usize) -> Vec<u8> {
    let mut n = 0;
    for (i, b) in bytes.iter().enumerate() {
        if *b == b'\n' {
            n += 1;
            if n == lines {
                return bytes[..=i].to_vec();
            }
        }
    }
    bytes.to_vec()
}

fn presets() -> Vec<(String, String)> {
    let mut v: Vec<(String, String)> = std::fs::read_dir(root().join("hw"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "ron"))
        .map(|p| {
            (
                p.file_name().unwrap().to_string_lossy().into_owned(),
                std::fs::read_to_string(&p).unwrap(),
            )
        })
        .collect();
    v.sort();
    v
}

/// A small, quick machine for replaying fuzzed traces on: the 8×8 torus preset with
/// short stall limits.
fn replay_machine_cfg() -> HwConfig {
    let mut cfg = common::preset("wormhole-torus-dor.ron");
    cfg.experiment.deadlock_cycles = 20_000;
    cfg
}

/// Reads every message of the trace at `path` (at most `cap`), then replays it on the
/// small machine when it is small enough; an error anywhere is a refusal.
fn read_and_replay(path: &Path, cap: u64) -> Result<Outcome, String> {
    let mut src = match routemu::experiments::traces::open(path) {
        Ok(s) => s,
        Err(_) => return Ok(Outcome::Refused),
    };
    let mut count = 0u64;
    let mut max_time = 0u64;
    let mut size = 0u64;
    loop {
        match src.next_msg() {
            Ok(Some(m)) => {
                count += 1;
                max_time = max_time.max(m.time);
                size = size.saturating_add(m.size);
                if count > cap {
                    return Ok(Outcome::Accepted);
                }
            }
            Ok(None) => break,
            Err(_) => return Ok(Outcome::Refused),
        }
    }
    // Emulating is not what is fuzzed here: a mutated size of 10^8 flits is a valid
    // message that takes a minute to move flit by flit.
    if count > 2_000 || max_time > 10_000_000 || size > 1_000_000 {
        return Ok(Outcome::Accepted);
    }
    let cfg = replay_machine_cfg();
    let mut src =
        routemu::experiments::traces::open(path).map_err(|e| format!("reopening failed: {e}"))?;
    let opts = ReplayOptions {
        stall_cycles: 50_000,
        time_scale: 0.01,
        ..ReplayOptions::default()
    };
    let mut delivered = 0u64;
    match replay_machine(&cfg, src.as_mut(), &opts, &mut |_| {
        delivered += 1;
        Ok(())
    }) {
        Ok(s) => {
            if s.delivered != s.messages || delivered != s.messages {
                return Err(format!(
                    "replay succeeded with {} read, {} delivered ({delivered} seen)",
                    s.messages, s.delivered
                ));
            }
            Ok(Outcome::Accepted)
        }
        Err(_) => Ok(Outcome::Refused),
    }
}

// ---------- targets ----------

#[test]
fn ron_loader_and_set_overrides_never_panic() {
    let presets = presets();
    let paths: Vec<String> = {
        let cfg = parse_hw(&presets[0].1, "x").unwrap();
        let tree = serde_json::to_value(&cfg).unwrap();
        routemu::config::overrides::leaf_paths(&tree)
    };
    fuzz("ron_loader", |rng, _| {
        let (_, text) = pick(rng, &presets);
        let bytes = mutate(rng, text.as_bytes(), true);
        let input = String::from_utf8_lossy(&bytes).into_owned();
        let Ok(cfg) = parse_hw(&input, "fuzz.ron") else {
            return (bytes, Ok(Outcome::Refused));
        };
        let mut sets = Vec::new();
        for _ in 0..below(rng, 3) {
            let path = pick(rng, &paths);
            sets.push(format!("{path}={}", pick(rng, INTERESTING)));
        }
        let outcome = match routemu::config::overrides::apply_overrides(&cfg, &sets) {
            Ok(c) => match validate(&c) {
                Ok(_) => Outcome::Accepted,
                Err(_) => Outcome::Refused,
            },
            Err(_) => Outcome::Refused,
        };
        (bytes, Ok(outcome))
    });
}

#[test]
fn text_traces_read_and_replay_without_panics() {
    let seeds = [
        head(&read("traces/stencil4d/stencil4d_32ranks_p2p.tsv"), 60),
        b"time src dst flits id deps\n0 0 1 4 1 2,3\n0 1 2 4 2 -\n5 2 3 8 3 -\n9 3 0 1 4 -\n"
            .to_vec(),
        b"time src dst bytes\n0 1 2 64\n3 2 5 128\n3 5 1 8\n".to_vec(),
    ];
    fuzz("text_trace", |rng, dir| {
        let seed = pick(rng, &seeds[..]).clone();
        let bytes = mutate(rng, &seed, true);
        let path = common::write_file(dir, "t.txt", &bytes);
        (bytes, read_and_replay(&path, 100_000))
    });
}

#[test]
fn netrace_traces_read_and_replay_without_panics() {
    use std::io::Read;
    let mut raw = Vec::new();
    bzip2::read::BzDecoder::new(&read("traces/netrace/example.tra.bz2")[..])
        .read_to_end(&mut raw)
        .unwrap();
    // The header and the first few hundred packets.
    raw.truncate(raw.len().min(24 * 1024));
    fuzz("netrace", |rng, dir| {
        let bytes = mutate(rng, &raw, false);
        let path = common::write_file(dir, "t.tra", &bytes);
        (bytes, read_and_replay(&path, 100_000))
    });
}

#[test]
fn dumpi_traces_and_the_mpi_matcher_never_panic() {
    let names: Vec<String> = (0..4).map(|r| format!("testtrace-{r:04}.bin")).collect();
    let files: Vec<Vec<u8>> = names
        .iter()
        .map(|n| read(&format!("traces/dumpi-sst/{n}")))
        .collect();
    let meta = read("traces/dumpi-sst/testtrace.meta");
    fuzz("dumpi", |rng, dir| {
        let victim = below(rng, files.len() as u64) as usize;
        let mut input = Vec::new();
        for (i, (n, f)) in names.iter().zip(&files).enumerate() {
            let bytes = if i == victim {
                mutate(rng, f, false)
            } else {
                f.clone()
            };
            if i == victim {
                input = bytes.clone();
            }
            std::fs::write(dir.join(n), bytes).unwrap();
        }
        let meta = if below(rng, 8) == 0 {
            mutate(rng, &meta, true)
        } else {
            meta.clone()
        };
        std::fs::write(dir.join("testtrace.meta"), &meta).unwrap();
        (input, read_and_replay(&dir.join("testtrace.meta"), 100_000))
    });
}

/// A random text trace with ids and dependencies (some dangling, duplicated, backwards
/// or cyclic), replayed open-loop or by dependencies with a random gap: either refused,
/// or every message delivered exactly once.
#[test]
fn the_replay_driver_delivers_every_message_once_or_refuses() {
    fuzz("replay_driver", |rng, dir| {
        let n = 1 + below(rng, 40);
        let mut text = String::from("time src dst flits id deps\n");
        let mut t = 0;
        for i in 0..n {
            t += below(rng, 20);
            let id = if below(rng, 30) == 0 { i } else { i + 1 };
            // Dependants are later messages (larger ids) but now and then an earlier,
            // missing or repeated one: the readers must refuse those.
            let deps: Vec<String> = (0..below(rng, 3))
                .map(|_| {
                    if below(rng, 20) == 0 {
                        below(rng, n + 3)
                    } else {
                        id + 1 + below(rng, n + 2 - id.min(n))
                    }
                    .to_string()
                })
                .collect();
            text.push_str(&format!(
                "{t} {} {} {} {id} {}\n",
                below(rng, 64),
                below(rng, 64),
                1 + below(rng, 40),
                if deps.is_empty() {
                    "-".to_string()
                } else {
                    deps.join(",")
                }
            ));
        }
        let path = common::write_file(dir, "d.txt", &text);
        let opts = ReplayOptions {
            mode: if below(rng, 2) == 0 {
                ReplayMode::Open
            } else {
                ReplayMode::Deps
            },
            gap: *pick(rng, &[0, 1, 8, 1000, u64::MAX / 2, u64::MAX]),
            stall_cycles: 50_000,
            ..ReplayOptions::default()
        };
        let Ok(mut src) = routemu::experiments::traces::open(&path) else {
            return (text.into_bytes(), Ok(Outcome::Refused));
        };
        let mut seen = std::collections::HashSet::new();
        let mut twice = None;
        let result = replay_machine(&replay_machine_cfg(), src.as_mut(), &opts, &mut |r| {
            if !seen.insert(r.id) {
                twice = Some(r.id);
            }
            Ok(())
        });
        let verdict = match result {
            Err(_) => Ok(Outcome::Refused),
            Ok(_) if twice.is_some() => Err(format!("message {} delivered twice", twice.unwrap())),
            Ok(s) if s.delivered != s.messages || seen.len() as u64 != s.messages => Err(format!(
                "{} read, {} delivered, {} distinct",
                s.messages,
                s.delivered,
                seen.len()
            )),
            Ok(_) => Ok(Outcome::Accepted),
        };
        (text.into_bytes(), verdict)
    });
}

#[test]
fn sweep_ranges_and_command_line_values_never_panic() {
    use clap::Parser;
    let flags = [
        "--rate",
        "--load",
        "--length",
        "--cycles",
        "--warmup",
        "--messages",
        "--replications",
        "--seed",
        "--threads",
        "--jobs",
        "--pattern",
        "--set",
        "--param",
        "--zip",
        "--y",
        "--gap",
        "--time-scale",
        "--flit-bytes",
        "--interval",
        "--scale",
        "--repeats",
    ];
    let commands = [
        "run",
        "sweep",
        "compare",
        "saturation",
        "replay",
        "predict",
        "bench",
    ];
    fuzz("cli_values", |rng, _| {
        let mut args = vec![
            "routemu".to_string(),
            pick(rng, &commands).to_string(),
            "hw/wormhole-torus-dor.ron".to_string(),
        ];
        for _ in 0..below(rng, 5) {
            args.push(pick(rng, &flags).to_string());
            let v = pick(rng, INTERESTING).to_string();
            let v = match below(rng, 4) {
                0 => format!(
                    "workload.rate={v}:{}:{}",
                    pick(rng, INTERESTING),
                    pick(rng, INTERESTING)
                ),
                1 => format!("{v},{}", pick(rng, INTERESTING)),
                _ => v,
            };
            args.push(v);
        }
        let input = args.join("\u{0}").into_bytes();
        let _ = routemu::cli::Cli::try_parse_from(&args);
        // The sweep's range syntax on its own.
        let spec = format!(
            "workload.rate={}:{}:{}",
            pick(rng, INTERESTING),
            pick(rng, INTERESTING),
            pick(rng, INTERESTING)
        );
        let _ = routemu::experiments::sweep::Axis::parse(&spec);
        let list = format!(
            "router.vcs={},{}",
            pick(rng, INTERESTING),
            pick(rng, INTERESTING)
        );
        let _ = routemu::experiments::sweep::Axis::parse(&list);
        let _ = routemu::experiments::sweep::split_values(&list);
        (input, Ok(Outcome::Accepted))
    });
}

/// A small machine drawn from a preset: its topology shrunk, its load, VCs, buffers and
/// seed drawn at random, a short window.
fn random_machine(rng: &mut NodeRng, presets: &[(String, String)]) -> Option<HwConfig> {
    let (name, text) = pick(rng, presets);
    let mut cfg = parse_hw(text, name).ok()?;
    let small = |rng: &mut NodeRng, lo: u64, hi: u64| (lo + below(rng, hi - lo + 1)) as u32;
    match &mut cfg.topology {
        TopologyConfig::Hypercube { dim } => *dim = small(rng, 1, 5),
        TopologyConfig::Torus { k, n, .. } => {
            *k = small(rng, 2, 6);
            *n = small(rng, 1, 2);
        }
        TopologyConfig::Mesh { k, n, c: 1 } => {
            *k = small(rng, 2, 6);
            *n = small(rng, 1, 2);
        }
        TopologyConfig::ManhattanStreet { k } => *k = 2 * small(rng, 1, 4),
        TopologyConfig::SwitchedTorus { k, n, hosts, .. } => {
            *k = small(rng, 2, 4);
            *n = small(rng, 1, 2);
            *hosts = small(rng, 1, 2);
        }
        #[allow(unreachable_patterns)]
        _ => {}
    }
    if below(rng, 2) == 0 {
        cfg.router.vcs = small(rng, 1, 4);
    }
    if below(rng, 2) == 0 {
        cfg.router.buffer_flits = small(rng, 1, 8);
    }
    cfg.workload.rate *= 0.05 + 3.0 * unit(rng);
    let e = &mut cfg.experiment;
    e.seed = below(rng, 1 << 40);
    e.replications = 1;
    e.warmup = 500 + below(rng, 1_000);
    e.measure = Measure::Cycles(2_000 + below(rng, 3_000));
    e.drain_limit = 20_000;
    e.deadlock_cycles = 5_000;
    e.threads = 1;
    e.jobs = 1;
    e.idle_skip = true;
    validate(&cfg).ok()?;
    Some(cfg)
}

/// The fewest flits a message of the length law can have.
fn shortest_message(length: &routemu::config::LengthConfig) -> u32 {
    use routemu::config::LengthConfig::*;
    match length {
        Constant { flits } => *flits,
        Uniform { min, .. } => *min,
        _ => 1,
    }
    .max(1)
}

/// Random small machines keep the report's invariants, and neither the thread count nor
/// idle skipping changes a statistic.
#[test]
fn random_machines_keep_the_report_invariants_for_any_threads_and_idle_skip() {
    let presets = presets();
    fuzz("machines", |rng, _| {
        let Some(cfg) = random_machine(rng, &presets) else {
            return (Vec::new(), Ok(Outcome::Refused));
        };
        let input = ron::to_string(&cfg).unwrap_or_default().into_bytes();
        let run =
            |cfg: &HwConfig| routemu::experiments::experiment::run_experiment(cfg, &mut |_, _| {});
        let report = match run(&cfg) {
            Ok(r) => r,
            Err(_) => return (input, Ok(Outcome::Refused)),
        };
        let v = serde_json::to_value(&report).unwrap();
        let f = |p: &str| routemu::experiments::sweep::number(&v, p);
        let mut why = Vec::new();
        let (g, d, l, i) = (
            f("messages.generated").unwrap_or(0.0),
            f("messages.delivered").unwrap_or(0.0),
            f("messages.lost").unwrap_or(0.0),
            f("messages.in_flight").unwrap_or(0.0),
        );
        if g != d + l + i {
            why.push(format!(
                "generated {g} != delivered {d} + lost {l} + in flight {i}"
            ));
        }
        if let (Some(acc), Some(cap)) = (f("throughput.accepted"), f("throughput.capacity")) {
            let off = f("throughput.offered").unwrap_or(f64::INFINITY);
            let ci = f("throughput.accepted_ci95").unwrap_or(0.0);
            // The window's accepted load is a sample (it carries messages made in the
            // warm-up, and a few long ones weigh much in a small network), so it is
            // judged only where the window holds enough messages to be a sample at all,
            // and above the offered load only beyond such noise.
            let measured = f("messages.measured").unwrap_or(0.0);
            if measured >= 200.0 && acc > off * 1.5 + 3.0 * ci + 0.05 {
                why.push(format!("accepted {acc} far above offered {off}"));
            }
            // The capacity is the bound for the offered mix of distances; an overloaded
            // network delivers more of its near messages and can pass it (the far ones
            // wait at their sources), so it binds only below it.
            if measured >= 200.0 && off <= cap && acc > cap * 1.1 + 3.0 * ci {
                why.push(format!(
                    "accepted {acc} above capacity {cap} at offered {off}"
                ));
            }
        }
        if let Some(u) = f("controller.utilization") {
            if !(0.0..=1.000_001).contains(&u) {
                why.push(format!("controller utilisation {u} outside [0, 1]"));
            }
        }
        if let Some(mean) = f("latency.mean") {
            // A message needs at least one cycle per flit on its first link.
            let width = cfg.links.width.max(1) as f64;
            let least = (shortest_message(&cfg.workload.length) as f64 / width)
                .ceil()
                .max(1.0);
            if mean < least {
                why.push(format!(
                    "mean latency {mean} below the {least} cycles a message needs"
                ));
            }
        }
        let base = common::statistics(&report);
        let mut threaded = cfg.clone();
        threaded.experiment.threads = 2;
        threaded.experiment.partition_min_nodes = Some(1);
        let mut no_skip = cfg.clone();
        no_skip.experiment.idle_skip = false;
        for (what, c) in [("2 threads", &threaded), ("idle_skip = false", &no_skip)] {
            match run(c) {
                Ok(r) if common::statistics(&r) != base => {
                    why.push(format!("{what} changed the statistics"));
                }
                Ok(_) => {}
                Err(e) => why.push(format!("{what} failed where one thread ran: {e}")),
            }
        }
        let verdict = if why.is_empty() {
            Ok(Outcome::Accepted)
        } else {
            Err(why.join("; "))
        };
        (input, verdict)
    });
}

// ---------- second hostile test: series arithmetic, plots, output paths, signals ----------

/// Interval widths that break careless arithmetic, and ordinary ones.
fn interval_width(rng: &mut NodeRng) -> u64 {
    match below(rng, 6) {
        0 => u64::MAX - below(rng, 3),
        1 => 1 << (32 + below(rng, 31)),
        2 => 1 + below(rng, 3),
        _ => 1 + below(rng, 5_000),
    }
}

/// A time series over any interval width is ordered, bounded and never wraps: rows in
/// cycle order, each at least one cycle long, at most `MAX_INTERVALS` of them, finite
/// per-cycle rates divided by the cycles each row covered (so no rate exceeds what the
/// sources offered over the whole run by more than a row's granularity allows).
#[test]
fn time_series_over_any_interval_is_ordered_finite_and_bounded() {
    let presets = presets();
    fuzz("series", |rng, _| {
        let Some(mut cfg) = random_machine(rng, &presets) else {
            return (Vec::new(), Ok(Outcome::Refused));
        };
        cfg.experiment.observe.interval = Some(interval_width(rng));
        if below(rng, 3) == 0 {
            cfg.experiment.warmup = below(rng, 50);
        }
        let input = ron::to_string(&cfg).unwrap_or_default().into_bytes();
        let report = match routemu::experiments::experiment::run_experiment(&cfg, &mut |_, _| {}) {
            Ok(r) => r,
            Err(_) => return (input, Ok(Outcome::Refused)),
        };
        let rows = report.series.clone().unwrap_or_default();
        let mut why = Vec::new();
        if rows.is_empty() {
            why.push("no series rows".to_string());
        }
        if rows.len() > routemu::engine::probe::observe::MAX_INTERVALS {
            why.push(format!("{} rows", rows.len()));
        }
        for (i, r) in rows.iter().enumerate() {
            if r.end <= r.start {
                why.push(format!("row {i}: [{}, {})", r.start, r.end));
            }
            if i > 0 && r.start != rows[i - 1].end && r.start < rows[i - 1].end {
                why.push(format!(
                    "row {i} starts at {} before {}",
                    r.start,
                    rows[i - 1].end
                ));
            }
            for (what, x) in [("offered", r.offered), ("accepted", r.accepted)] {
                // A row's rate is flits per node per cycle it covered: at most what the
                // whole run's flits make over one cycle.
                let bound = (report.messages.generated as f64 + 1.0) * 1e6;
                if !x.is_finite() || x < 0.0 || x > bound {
                    why.push(format!("row {i}: {what} {x}"));
                }
            }
        }
        if why.is_empty() {
            (input, Ok(Outcome::Accepted))
        } else {
            (input, Err(why.join("; ")))
        }
    });
}

/// Numbers at the edges of what a plot can show.
fn extreme(rng: &mut NodeRng) -> String {
    const EDGES: &[&str] = &[
        "1e308",
        "-1e308",
        "1.7976931348623157e308",
        "-1.7e308",
        "5e-324",
        "-5e-324",
        "1e300",
        "-1e300",
        "1e-300",
        "0",
        "-0",
        "nan",
        "inf",
        "-inf",
        "1",
        "1e15",
        "9007199254740993",
        "",
        "x",
    ];
    if below(rng, 3) == 0 {
        format!(
            "{:e}",
            (unit(rng) - 0.5) * 10f64.powi(below(rng, 640) as i32 - 320)
        )
    } else {
        pick(rng, EDGES).to_string()
    }
}

/// `plot` draws or refuses any CSV of extreme numbers, and within 10 seconds: a drawing
/// that does not finish is a failure of this target's own watchdog (the axis code once
/// looped for ever near ±f64::MAX).
#[test]
fn plot_draws_or_refuses_extreme_csvs_within_ten_seconds() {
    fuzz("plot", |rng, _| {
        let cols = 1 + below(rng, 3) as usize;
        let mut text = String::from("x");
        for c in 0..cols {
            text.push_str(&format!(",y{c}"));
        }
        text.push('\n');
        for _ in 0..1 + below(rng, 6) {
            let row: Vec<String> = (0..=cols).map(|_| extreme(rng)).collect();
            text.push_str(&row.join(","));
            text.push('\n');
        }
        let (log_x, log_y) = (below(rng, 2) == 0, below(rng, 2) == 0);
        let input = text.clone().into_bytes();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            use routemu::presentation::plot::{csv::Table, redraw, svg};
            let drawn = Table::parse(&text, "fuzz.csv").and_then(|t| {
                let spec = redraw::Spec {
                    x: None,
                    ys: Vec::new(),
                    series: None,
                    log_x,
                    log_y,
                    title: "fuzz".into(),
                    context: String::new(),
                };
                redraw::figures(&t, &spec)?
                    .iter()
                    .try_for_each(|(_, f)| svg(f).map(|_| ()))
            });
            let _ = tx.send(drawn.is_ok());
        });
        match rx.recv_timeout(Duration::from_secs(10)) {
            Ok(true) => (input, Ok(Outcome::Accepted)),
            Ok(false) => (input, Ok(Outcome::Refused)),
            // A panic in the drawing thread drops the sender.
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {
                (input, Err("the drawing panicked".into()))
            }
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
                (input, Err("the drawing did not finish in 10 s".into()))
            }
        }
    });
}

/// No spelling of an output reaches a file the command read or another output: the
/// same name, `./`, `..` round trips, symbolic links (chained) and hard links are all
/// refused, and distinct files are accepted.
#[test]
fn outputs_never_name_an_input_or_each_other_under_any_spelling() {
    fuzz("paths", |rng, dir| {
        let sub = dir.join("sub");
        std::fs::create_dir_all(&sub).unwrap();
        let input = sub.join("in.ron");
        std::fs::write(&input, "x").unwrap();
        routemu::foundation::inputs::read(&input).unwrap();
        // Spellings of the input, of one other file, and of fresh names.
        let spell = |rng: &mut NodeRng, target: &Path, tag: u64| -> String {
            let name = target.file_name().unwrap().to_string_lossy().to_string();
            match below(rng, 5) {
                0 => target.display().to_string(),
                1 => format!("{}/./{name}", sub.display()),
                2 => format!("{}/sub/../sub/{name}", dir.display()),
                3 => {
                    let mut to = target.to_path_buf();
                    for i in 0..1 + below(rng, 3) {
                        let link = dir.join(format!("l{tag}-{i}"));
                        let _ = std::os::unix::fs::symlink(&to, &link);
                        to = link;
                    }
                    to.display().to_string()
                }
                _ => {
                    if target.exists() {
                        let hard = dir.join(format!("h{tag}"));
                        let _ = std::fs::hard_link(target, &hard);
                        hard.display().to_string()
                    } else {
                        target.display().to_string()
                    }
                }
            }
        };
        let mut outs = Vec::new();
        let mut collide = false;
        let other = sub.join("other.out");
        let mut used_other = false;
        for k in 0..1 + below(rng, 3) {
            let path = match below(rng, 3) {
                0 => {
                    collide = true;
                    spell(rng, &input, k)
                }
                1 => {
                    collide |= used_other;
                    used_other = true;
                    spell(rng, &other, k)
                }
                _ => sub.join(format!("fresh{k}.out")).display().to_string(),
            };
            outs.push(path);
        }
        let flags: Vec<String> = (0..outs.len()).map(|k| format!("--o{k}")).collect();
        let pairs: Vec<(&str, &str)> = flags
            .iter()
            .zip(&outs)
            .map(|(f, o)| (f.as_str(), o.as_str()))
            .collect();
        let r = routemu::cli::output::check_outputs(&pairs);
        let input_bytes = format!("{outs:?}").into_bytes();
        match (r.is_err(), collide) {
            (true, true) => (input_bytes, Ok(Outcome::Refused)),
            (false, false) => (input_bytes, Ok(Outcome::Accepted)),
            (true, false) => (
                input_bytes,
                Err(format!("distinct outputs refused: {}", r.unwrap_err())),
            ),
            (false, true) => (input_bytes, Err("a collision was accepted".into())),
        }
    });
}

/// A run interrupted at a random moment, by one signal or two, leaves no temporary file,
/// and every output it leaves is complete: a JSON document that parses (marked partial
/// when the run was cut short), a CSV whose every line ends, marked partial likewise.
#[test]
fn a_run_interrupted_at_any_moment_leaves_complete_or_partial_marked_outputs() {
    fuzz("signals", |rng, dir| {
        let (json, csv) = (dir.join("o.json"), dir.join("s.csv"));
        let wait = Duration::from_millis(below(rng, 1_500));
        let twice = below(rng, 3) == 0;
        let sig = if below(rng, 2) == 0 { "INT" } else { "TERM" };
        let input = format!("after {wait:?}, SIG{sig}, twice {twice}").into_bytes();
        let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_routemu"))
            .args([
                "run",
                "hw/wormhole-torus-dor.ron",
                "--warmup",
                "1000",
                "--cycles",
                "3000000",
                "--replications",
                "2",
                "--interval",
                "10000",
                "--json",
                json.to_str().unwrap(),
                "--series",
                csv.to_str().unwrap(),
            ])
            .current_dir(root())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(wait);
        for _ in 0..if twice { 2 } else { 1 } {
            let _ = std::process::Command::new("kill")
                .args([&format!("-{sig}"), &child.id().to_string()])
                .status();
            std::thread::sleep(Duration::from_millis(below(rng, 100)));
        }
        let status = child.wait().unwrap();
        let mut why = Vec::new();
        let hidden: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with('.'))
            .collect();
        if !hidden.is_empty() {
            why.push(format!("temporary files left: {hidden:?}"));
        }
        let cut = status.code() != Some(0);
        if let Ok(text) = std::fs::read_to_string(&json) {
            match serde_json::from_str::<serde_json::Value>(&text) {
                Ok(v) if cut && v["partial"] != true => {
                    why.push("a cut run's JSON is not marked partial".into())
                }
                Ok(_) => {}
                Err(e) => why.push(format!("the JSON does not parse: {e}")),
            }
        }
        if let Ok(text) = std::fs::read_to_string(&csv) {
            if !text.ends_with('\n') || !text.starts_with("start,end,phase") {
                why.push("the CSV is cut off".into());
            }
            if cut && !text.contains("# partial: stopped by") {
                why.push("a cut run's CSV is not marked partial".into());
            }
        }
        match (why.is_empty(), cut) {
            (true, true) => (input, Ok(Outcome::Refused)),
            (true, false) => (input, Ok(Outcome::Accepted)),
            (false, _) => (input, Err(why.join("; "))),
        }
    });
}
