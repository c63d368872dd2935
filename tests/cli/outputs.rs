//! Output files and signals (docs/cli.md, "Output files"): an output never replaces
//! anything but a regular file (devices and FIFOs are written in place, links followed);
//! temporary files are unpredictable and leave planted links alone; every output flag is
//! checked before the run; a failing standard output is an error, not a panic, and loses
//! no file; SIGINT and SIGTERM stop a run with partial results and no temporary file.
#![cfg(unix)]

use crate::common::{read_json, routemu};
use std::fs;
use std::io::{Read, Write};
use std::os::unix::fs::{FileTypeExt, PermissionsExt};
use std::path::Path;
use std::process::{Command, Output, Stdio};

const HW: &str = "hw/wormhole-torus-dor.ron";
const SHORT: [&str; 6] = ["--warmup", "10", "--cycles", "100", "--replications", "1"];

fn bin() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_routemu"));
    c.current_dir(env!("CARGO_MANIFEST_DIR"));
    c
}

/// `routemu run` of a short experiment with `extra` flags.
fn short_run(extra: &[&str]) -> Output {
    let mut args = vec!["run", HW];
    args.extend(SHORT);
    args.extend(extra);
    routemu(&args)
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// The names in `dir` that start with a dot: temporary files left behind.
fn hidden(dir: &Path) -> Vec<String> {
    fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with('.'))
        .collect()
}

/// Makes a FIFO at `path` (a Unix machine has `mkfifo`; its absence fails the test).
fn mkfifo(path: &Path) {
    let ok = Command::new("mkfifo")
        .arg(path)
        .status()
        .is_ok_and(|s| s.success());
    assert!(ok, "mkfifo {}", path.display());
}

#[test]
fn an_output_through_a_symlink_writes_the_file_it_leads_to_and_keeps_the_link() {
    let dir = tempfile::tempdir().unwrap();
    let link = dir.path().join("link.json");
    std::os::unix::fs::symlink("target.json", &link).unwrap();
    let o = short_run(&["--json", link.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(fs::symlink_metadata(&link)
        .unwrap()
        .file_type()
        .is_symlink());
    assert_eq!(
        read_json(&dir.path().join("target.json"))["schema"],
        "routemu.run/1"
    );
    assert!(hidden(dir.path()).is_empty());
}

#[test]
fn an_output_to_a_fifo_is_written_into_the_fifo_which_stays_a_fifo() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("pipe");
    mkfifo(&fifo);
    let reader = {
        let fifo = fifo.clone();
        std::thread::spawn(move || {
            let mut s = String::new();
            fs::File::open(&fifo)
                .unwrap()
                .read_to_string(&mut s)
                .unwrap();
            s
        })
    };
    let o = short_run(&["--json", fifo.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = reader.join().unwrap();
    assert!(text.contains("\"routemu.run/1\""), "{text}");
    assert!(fs::metadata(&fifo).unwrap().file_type().is_fifo());
    assert!(hidden(dir.path()).is_empty());
}

/// A full device (ENOSPC on every write): a private node when this process may make
/// one, so that a regression cannot replace the system's; else /dev/full itself (which
/// an unprivileged process could not replace anyway).
#[cfg(target_os = "linux")]
fn full_device(dir: &Path) -> std::path::PathBuf {
    let private = dir.join("full");
    let made = Command::new("mknod")
        .args([private.to_str().unwrap(), "c", "1", "7"])
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if made {
        private
    } else {
        "/dev/full".into()
    }
}

#[cfg(target_os = "linux")]
#[test]
fn an_output_to_a_full_device_fails_with_no_space_and_exit_1_and_the_device_stays() {
    let dir = tempfile::tempdir().unwrap();
    let full = full_device(dir.path());
    let o = short_run(&["--json", full.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    let e = stderr(&o);
    assert!(
        e.contains(&format!("{}: No space left on device", full.display())),
        "{e}"
    );
    assert!(fs::metadata(&full).unwrap().file_type().is_char_device());
}

#[cfg(target_os = "linux")]
#[test]
fn a_full_standard_output_is_an_error_with_exit_1_and_the_json_file_is_still_written() {
    let dir = tempfile::tempdir().unwrap();
    let full = full_device(dir.path());
    let out = dir.path().join("j.json");
    // The short run with `--json JSON`, its standard output the full device: exit 1 and
    // the device named.
    let fails_on_full_stdout = |json: &str| {
        let mut args = vec!["run", HW];
        args.extend(SHORT);
        args.extend(["--json", json]);
        let o = bin()
            .args(&args)
            .stdout(fs::OpenOptions::new().write(true).open(&full).unwrap())
            .output()
            .unwrap();
        let e = stderr(&o);
        assert_eq!(o.status.code(), Some(1), "{e}");
        assert!(
            e.contains("routemu: <stdout>: No space left on device"),
            "{e}"
        );
        e
    };
    let e = fails_on_full_stdout(out.to_str().unwrap());
    assert!(!e.contains("panicked"), "{e}");
    assert_eq!(read_json(&out)["schema"], "routemu.run/1");

    // The JSON itself on the full standard output.
    fails_on_full_stdout("-");
}

#[test]
fn a_closed_standard_output_ends_the_command_quietly_with_exit_1() {
    let mut args = vec!["run", HW];
    args.extend([
        "--warmup",
        "100",
        "--cycles",
        "20000",
        "--replications",
        "1",
    ]);
    let mut child = bin()
        .args(&args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The reader goes away before the summary is printed (after the run).
    drop(child.stdout.take());
    let o = child.wait_with_output().unwrap();
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{e}");
    assert!(!e.contains("panicked"), "{e}");
    assert!(!e.contains("Broken pipe"), "{e}");
}

#[test]
fn a_link_planted_in_the_output_directory_is_left_alone() {
    let dir = tempfile::tempdir().unwrap();
    let victim = dir.path().join("victim");
    fs::write(&victim, "precious").unwrap();
    // The names the old predictable temporary files had, and a few more.
    for name in [".o.json.tmp1", ".o.json.", ".o.json.tmp", "o.json.tmp"] {
        std::os::unix::fs::symlink(&victim, dir.path().join(name)).unwrap();
    }
    let out = dir.path().join("o.json");
    let o = short_run(&["--json", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(fs::read_to_string(&victim).unwrap(), "precious");
    assert!(fs::symlink_metadata(&out).unwrap().file_type().is_file());
    assert_eq!(read_json(&out)["schema"], "routemu.run/1");
    let mut left = hidden(dir.path());
    left.sort();
    assert_eq!(left, [".o.json.", ".o.json.tmp", ".o.json.tmp1"]);
}

/// This process's umask (Linux: from /proc; elsewhere the usual 022).
fn umask() -> u32 {
    fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("Umask:"))
                .and_then(|m| u32::from_str_radix(m.trim(), 8).ok())
        })
        .unwrap_or(0o022)
}

#[test]
fn a_new_output_has_the_mode_a_plain_create_gives_and_a_replaced_one_keeps_its_own() {
    let dir = tempfile::tempdir().unwrap();
    let new = dir.path().join("new.json");
    let o = short_run(&["--json", new.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let mode = fs::metadata(&new).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o666 & !umask());

    let old = dir.path().join("old.json");
    fs::write(&old, "old").unwrap();
    fs::set_permissions(&old, fs::Permissions::from_mode(0o640)).unwrap();
    let o = short_run(&["--json", old.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(
        fs::metadata(&old).unwrap().permissions().mode() & 0o777,
        0o640
    );
    assert_eq!(read_json(&old)["schema"], "routemu.run/1");
}

/// Every command with output files, each with one output flag set to `dest`.
fn every_output_flag(dest: &str, dir: &Path) -> Vec<Vec<String>> {
    let csv = dir.join("in.csv");
    fs::write(&csv, "x,y\n1,2\n2,3\n").unwrap();
    let trace = dir.join("t.txt");
    fs::write(&trace, "cycle src dst flits\n0 1 2 2\n").unwrap();
    let long = [
        "--warmup",
        "1000",
        "--cycles",
        "400000",
        "--replications",
        "1",
    ];
    let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
    let mut cmds = Vec::new();
    for flag in [
        "--json",
        "--series",
        "--latency-dist",
        "--message-log",
        "--heatmap",
    ] {
        let mut c = s(&["run", HW, flag, dest, "--interval", "100"]);
        c.extend(s(&long));
        cmds.push(c);
    }
    for cmd in ["compare", "predict"] {
        let mut c = s(&[cmd, "hw/circuit-hold.ron", "--json", dest]);
        c.extend(s(&long));
        cmds.push(c);
    }
    for flag in ["--csv", "--json", "--plot"] {
        let mut c = s(&[
            "sweep",
            HW,
            "--param",
            "workload.rate=0.001,0.002",
            flag,
            dest,
        ]);
        c.extend(s(&long));
        cmds.push(c);
    }
    cmds.push(s(&["saturation", HW, "--json", dest, "--cycles", "400000"]));
    for flag in ["--json", "--trace-log", "--series"] {
        cmds.push(s(&[
            "replay",
            HW,
            "--trace",
            trace.to_str().unwrap(),
            "--interval",
            "10",
            flag,
            dest,
        ]));
    }
    cmds.push(s(&["plot", csv.to_str().unwrap(), "--out", dest]));
    cmds
}

#[test]
fn every_output_flag_of_every_command_is_checked_before_the_work_starts() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("nonexistent").join("x.out");
    for args in every_output_flag(missing.to_str().unwrap(), dir.path()) {
        let a: Vec<&str> = args.iter().map(String::as_str).collect();
        let o = routemu(&a);
        let e = stderr(&o);
        assert_eq!(o.status.code(), Some(1), "{args:?}: {e}");
        assert!(e.contains("does not exist"), "{args:?}: {e}");
        // Nothing ran: no summary.
        assert!(o.stdout.is_empty(), "{args:?}");
    }
    let a_dir = dir.path().join("sub");
    fs::create_dir(&a_dir).unwrap();
    for args in every_output_flag(a_dir.to_str().unwrap(), dir.path()) {
        let a: Vec<&str> = args.iter().map(String::as_str).collect();
        let o = routemu(&a);
        let e = stderr(&o);
        assert_eq!(o.status.code(), Some(1), "{args:?}: {e}");
        assert!(e.contains("is a directory"), "{args:?}: {e}");
        assert!(o.stdout.is_empty(), "{args:?}");
    }
}

#[test]
fn two_outputs_naming_the_same_file_are_refused_before_the_run() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("same.out");
    let f = f.to_str().unwrap();
    let dotted = format!("{}/./same.out", dir.path().display());
    let o = routemu(&[
        "sweep",
        HW,
        "--param",
        "workload.rate=0.001,0.002",
        "--csv",
        f,
        "--plot",
        &dotted,
    ]);
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{e}");
    assert!(e.contains("--csv and --plot both name the file"), "{e}");
    assert!(!Path::new(f).exists());

    let o = short_run(&["--json", f, "--series", &dotted, "--interval", "10"]);
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{e}");
    assert!(e.contains("--json and --series both name the file"), "{e}");

    let o = routemu(&[
        "sweep",
        HW,
        "--param",
        "workload.rate=0.001",
        "--csv",
        "-",
        "--json",
        "-",
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
}

#[test]
fn no_output_flag_of_any_command_may_name_a_file_the_command_reads() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // Each command with each output flag, its first input (the hardware file, the CSV of
    // `plot`) a copy that the output flag then names, under another spelling or a link.
    for (i, mut args) in every_output_flag("DEST", d).into_iter().enumerate() {
        let input = d.join(format!("input{i}"));
        fs::copy(&args[1], &input).unwrap();
        let before = fs::read(&input).unwrap();
        let spelling = match i % 3 {
            0 => input.to_str().unwrap().to_string(),
            1 => format!("{}/./input{i}", d.display()),
            _ => {
                let link = d.join(format!("link{i}"));
                std::os::unix::fs::symlink(&input, &link).unwrap();
                link.to_str().unwrap().to_string()
            }
        };
        args[1] = input.to_str().unwrap().to_string();
        for a in args.iter_mut().filter(|a| *a == "DEST") {
            *a = spelling.clone();
        }
        let a: Vec<&str> = args.iter().map(String::as_str).collect();
        let o = routemu(&a);
        let e = stderr(&o);
        assert_eq!(o.status.code(), Some(1), "{args:?}: {e}");
        assert!(e.contains("is the input"), "{args:?}: {e}");
        assert_eq!(
            fs::read(&input).unwrap(),
            before,
            "{args:?} changed its input"
        );
        assert!(o.stdout.is_empty(), "{args:?}");
    }
    // The inputs that are not the first argument: a trace, a host graph, a hard link.
    let trace = d.join("t.txt");
    fs::write(&trace, "cycle src dst flits\n0 1 2 2\n").unwrap();
    let t = trace.to_str().unwrap();
    let graph = d.join("lan.graph");
    fs::write(
        &graph,
        "switches 2\nhosts 2\nlink h0 s0\nlink h1 s1\nlink s0 s1\n",
    )
    .unwrap();
    let lan = d.join("lan.ron");
    let text = fs::read_to_string("hw/timeout-lan-3x3.ron")
        .unwrap()
        .replace(
            "topology: SwitchedTorus(k: 3, n: 2, hosts: 1)",
            &format!("topology: HostGraph(file: \"{}\")", graph.display()),
        );
    fs::write(&lan, text).unwrap();
    let hard = d.join("hard.ron");
    fs::hard_link(&lan, &hard).unwrap();
    let g = graph.to_str().unwrap();
    let cases: [Vec<&str>; 3] = [
        vec!["replay", HW, "--trace", t, "--trace-log", t],
        vec!["run", lan.to_str().unwrap(), "--heatmap", g],
        vec![
            "run",
            lan.to_str().unwrap(),
            "--json",
            hard.to_str().unwrap(),
        ],
    ];
    for args in cases {
        let before: Vec<Vec<u8>> = [&trace, &graph, &lan]
            .iter()
            .map(|f| fs::read(f).unwrap())
            .collect();
        let o = routemu(&args);
        let e = stderr(&o);
        assert_eq!(o.status.code(), Some(1), "{args:?}: {e}");
        assert!(e.contains("is the input"), "{args:?}: {e}");
        let after: Vec<Vec<u8>> = [&trace, &graph, &lan]
            .iter()
            .map(|f| fs::read(f).unwrap())
            .collect();
        assert_eq!(before, after, "{args:?} changed an input");
    }
}

/// Spawns routemu with `args`, waits until it is under way (a second, or until
/// `ready` holds), sends it `signals` (`INT`, `TERM`) in turn and waits for it.
fn interrupt(args: &[&str], ready: &dyn Fn() -> bool, signals: &[&str]) -> Output {
    let child = bin()
        .args(args)
        // Open until the command ends (`plot -` waits on it).
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Not a timed assertion: only a wait until the run is under way (the handler is
    // installed first thing).
    std::thread::sleep(std::time::Duration::from_secs(1));
    for _ in 0..600 {
        if ready() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    for s in signals {
        let ok = Command::new("kill")
            .args([&format!("-{s}"), &child.id().to_string()])
            .status()
            .unwrap();
        assert!(ok.success());
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
    child.wait_with_output().unwrap()
}

#[test]
fn sigint_stops_a_run_with_partial_results_exit_130_and_no_temporary_file() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("F.json");
    let s = dir.path().join("S.csv");
    let args = [
        "run",
        HW,
        "--cycles",
        "100000000",
        "--warmup",
        "0",
        "--replications",
        "2",
        "--json",
        f.to_str().unwrap(),
        "--interval",
        "100000",
        "--series",
        s.to_str().unwrap(),
    ];
    let o = interrupt(&args, &|| true, &["INT"]);
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(130), "{e}");
    assert!(
        e.contains("interrupted by SIGINT; results are partial"),
        "{e}"
    );
    let doc = read_json(&f);
    assert_eq!(doc["partial"], true);
    // The replication under way when the signal came; no other started.
    assert_eq!(doc["replications"], 1);
    // A CSV says it is partial in its last line, a comment.
    let csv = fs::read_to_string(&s).unwrap();
    assert!(csv.starts_with("start,end,phase"), "{csv}");
    assert!(
        csv.ends_with("# partial: stopped by SIGINT; the rows hold what was measured until then\n"),
        "{csv}"
    );
    assert!(hidden(dir.path()).is_empty());
}

#[test]
fn a_run_that_is_not_interrupted_has_no_partial_field() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("F.json");
    let o = short_run(&["--json", f.to_str().unwrap()]);
    assert!(o.status.success());
    assert!(read_json(&f).get("partial").is_none());
}

/// A text trace long enough that replaying it takes far more than a second.
fn big_trace(dir: &Path) -> std::path::PathBuf {
    let p = dir.join("big.txt");
    let mut w = std::io::BufWriter::new(fs::File::create(&p).unwrap());
    writeln!(w, "cycle src dst flits").unwrap();
    for i in 0..3_000_000u64 {
        writeln!(w, "{} {} {} 2", i * 2, i % 64, (i * 7 + 1) % 64).unwrap();
    }
    w.flush().unwrap();
    p
}

/// A replay of the big trace to interrupt, its per-message CSV `m.csv` in a folder `out`
/// of its own.
struct LongReplay {
    trace: std::path::PathBuf,
    out: std::path::PathBuf,
    messages: std::path::PathBuf,
}

impl LongReplay {
    /// The big trace and the folder `out` in `dir`.
    fn new(dir: &Path) -> Self {
        let trace = big_trace(dir);
        let out = dir.join("out");
        fs::create_dir(&out).unwrap();
        let messages = out.join("m.csv");
        LongReplay {
            trace,
            out,
            messages,
        }
    }

    /// Replays it, its JSON to `json`, and sends it `signals` once it is under way (the
    /// CSV's temporary file exists).
    fn interrupted(&self, json: &Path, signals: &[&str]) -> Output {
        let args = [
            "replay",
            HW,
            "--trace",
            self.trace.to_str().unwrap(),
            "--trace-log",
            self.messages.to_str().unwrap(),
            "--json",
            json.to_str().unwrap(),
        ];
        interrupt(&args, &|| !hidden(&self.out).is_empty(), signals)
    }
}

#[test]
fn sigterm_stops_a_replay_with_partial_files_exit_143_and_no_temporary_file() {
    let dir = tempfile::tempdir().unwrap();
    let r = LongReplay::new(dir.path());
    let (m, j, out) = (&r.messages, r.out.join("r.json"), &r.out);
    let o = r.interrupted(&j, &["TERM"]);
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(143), "{e}");
    assert!(
        e.contains("interrupted by SIGTERM; results are partial"),
        "{e}"
    );
    assert_eq!(read_json(&j)["partial"], true);
    let csv = fs::read_to_string(m).unwrap();
    assert!(csv.starts_with("id,src,dst,"));
    assert!(hidden(out).is_empty(), "{:?}", hidden(out));
}

#[test]
fn a_first_signal_while_waiting_on_a_fifo_trace_ends_the_replay_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("trace");
    mkfifo(&fifo);
    // A trace that stops coming: the replay waits for it, its CSV half-written.
    let writer = {
        let fifo = fifo.clone();
        std::thread::spawn(move || {
            let mut f = fs::OpenOptions::new().write(true).open(&fifo).unwrap();
            f.write_all(b"cycle src dst flits\n0 1 2 2\n5 3 4 2\n")
                .unwrap();
            f.flush().unwrap();
            f
        })
    };
    let out = dir.path().join("out");
    fs::create_dir(&out).unwrap();
    let m = out.join("m.csv");
    let args = [
        "replay",
        HW,
        "--trace",
        fifo.to_str().unwrap(),
        "--trace-log",
        m.to_str().unwrap(),
    ];
    let ready = || !hidden(&out).is_empty();
    let o = interrupt(&args, &ready, &["INT"]);
    drop(writer.join().unwrap());
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(130), "{e}");
    assert!(
        e.contains("SIGINT: stopped at once; nothing written"),
        "{e}"
    );
    assert!(!m.exists());
    assert!(hidden(&out).is_empty(), "{:?}", hidden(&out));
}

#[test]
fn a_second_signal_exits_at_once_and_names_truthfully_the_outputs_written() {
    let dir = tempfile::tempdir().unwrap();
    let r = LongReplay::new(dir.path());
    let (m, out) = (&r.messages, &r.out);
    // A JSON output nobody reads: after the first signal the replay writes its partial
    // results and waits in opening it, where the second signal finds it.
    let fifo = dir.path().join("nobody.json");
    mkfifo(&fifo);
    let o = r.interrupted(&fifo, &["INT", "INT"]);
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(130), "{e}");
    let said = e
        .lines()
        .find(|l| l.contains("SIGINT again: stopped at once"))
        .unwrap_or_else(|| panic!("{e}"));
    // What the message calls written is there, complete; what it does not is not.
    let m_name = m.to_str().unwrap();
    if m.exists() {
        assert!(
            said.contains(&format!("written before it: {m_name}")),
            "{said}"
        );
        let csv = fs::read_to_string(m).unwrap();
        assert!(csv.ends_with(
            "# partial: stopped by SIGINT; the rows hold what was measured until then\n"
        ));
    } else {
        assert!(said.contains("nothing written"), "{said}");
    }
    assert!(hidden(out).is_empty(), "{:?}", hidden(out));
}

#[test]
fn a_first_signal_stops_commands_that_keep_nothing_at_once_in_every_phase() {
    let dir = tempfile::tempdir().unwrap();
    // `check` of a machine whose host graph is a FIFO nobody writes: blocked in open.
    let fifo = dir.path().join("g.graph");
    mkfifo(&fifo);
    let lan = dir.path().join("lan.ron");
    let text = fs::read_to_string("hw/timeout-lan-3x3.ron")
        .unwrap()
        .replace(
            "topology: SwitchedTorus(k: 3, n: 2, hosts: 1)",
            &format!("topology: HostGraph(file: \"{}\")", fifo.display()),
        );
    fs::write(&lan, text).unwrap();
    let lan = lan.to_str().unwrap();
    // `plot` of a standard input that never ends, `bench` under way, `run` whose JSON
    // goes to a FIFO nobody reads (blocked opening it once the run ended).
    let out_fifo = dir.path().join("o.json");
    mkfifo(&out_fifo);
    let cases: [(Vec<&str>, &str); 5] = [
        (vec!["check", lan], "TERM"),
        (vec!["run", lan, "--replications", "1"], "INT"),
        (vec!["bench", "--scale", "1"], "TERM"),
        (vec!["plot", "-", "--out", "/dev/null"], "INT"),
        (
            [
                &["run", HW, "--json", out_fifo.to_str().unwrap()][..],
                &SHORT,
            ]
            .concat(),
            "TERM",
        ),
    ];
    for (args, sig) in cases {
        let o = interrupt(&args, &|| true, &[sig]);
        let e = stderr(&o);
        let code = if sig == "INT" { 130 } else { 143 };
        assert_eq!(o.status.code(), Some(code), "{args:?}: {e}");
        assert!(e.contains("stopped at once"), "{args:?}: {e}");
    }
}
