//! `routemu replay`: a recorded trace on a machine — open loop or dependency-driven —
//! with the summary, `--json`, and per-message CSV on request.

use crate::cli::observe::ObserveArgs;
use crate::cli::output::{eprint, print, write_json, Output};
use crate::config::load::load_hw;
use crate::config::overrides::apply_overrides;
use crate::experiments::replay::elastic::{Application, ElasticOptions, Overhead};
use crate::experiments::replay::{
    replay_machine, replay_machine_observed, NodeMap, Placement, RecordedLatency, ReplayMode,
    ReplayOptions, ReplayRecord, ReplaySummary, MAX_GAP,
};
use crate::experiments::traces::{open_with, OpenOptions};
use crate::foundation::error::{Error, Result};
use crate::mpi_semantics::collectives::{Choices, Tuning};
use crate::mpi_semantics::matching::Collectives;
use crate::topology::Topology;
use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};
use serde::Serialize;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// Schema identifier of `routemu replay --json`.
pub const SCHEMA: &str = "routemu.replay/1";

/// `routemu replay` arguments.
#[derive(Debug, Args)]
pub struct ReplayArgs {
    /// The RON hardware description.
    pub hw: PathBuf,
    /// The trace: routemu text (plain, gzip, bzip2), Netrace (.tra.bz2), or DUMPI
    /// (its PREFIX.meta or any PREFIX-NNNN.bin; times in ns).
    #[arg(long)]
    pub trace: PathBuf,
    /// elastic: as the application would run on this machine (an MPI trace's compute
    /// kept, its MPI calls emulated; a message trace's dependants their recorded
    /// distance after their parents' deliveries); open: create at the recorded times;
    /// deps: also wait for parents to be delivered. Default: elastic for DUMPI traces,
    /// open for the others.
    #[arg(long, value_enum)]
    pub mode: Option<ReplayMode>,
    /// Elastic replay: factor on every compute interval between MPI calls (0.5: a
    /// processor twice as fast).
    #[arg(long, value_name = "F")]
    pub compute_scale: Option<f64>,
    /// Elastic replay: the largest message sent eagerly, bytes (larger ones go by
    /// rendezvous: RTS, CTS once the receive is posted, data, FIN). Default 65536.
    #[arg(long, value_name = "BYTES")]
    pub eager_limit: Option<u64>,
    /// Elastic replay: host overheads in cycles, `FIXED[+PER_BYTE]` for sends and
    /// receives alike, or `send=FIXED[+PER_BYTE],recv=FIXED[+PER_BYTE]` (default 0).
    #[arg(long, value_name = "SPEC", value_parser = |s: &str| s.parse::<Overhead>())]
    pub overhead: Option<Overhead>,
    /// Elastic replay of a message trace: the latency of the network it was recorded
    /// on, which a dependant's recorded distance from its parent's recorded arrival is
    /// measured from: N (trace time units: cycles of the recording) or hops:C (C per
    /// hop between the endpoints laid out as Netrace's reference reader does, endpoint
    /// n at (n mod x, n div x), x = floor(sqrt(endpoints)); the trace must say its
    /// endpoint count). Default: hops:3 for Netrace (an estimate: its reference reader's
    /// model of the recording CMP), 0 for text traces.
    #[arg(long, value_name = "SPEC")]
    pub recorded_latency: Option<String>,
    /// Cycles between a parent's delivery and its child's creation (deps mode; at
    /// most 2^40).
    #[arg(long, default_value_t = 8)]
    pub gap: u64,
    /// Cycles per trace time unit.
    #[arg(long, default_value_t = 1.0)]
    pub time_scale: f64,
    /// Bytes per flit, for traces sized in bytes.
    #[arg(long, default_value_t = 8)]
    pub flit_bytes: u64,
    /// Node map: lines `ENDPOINT NODE` (`#` comments); default: identity.
    #[arg(long, conflicts_with = "place")]
    pub map: Option<PathBuf>,
    /// Named placement of the trace's endpoints: identity, fold, block:R,
    /// grid:AxB[xC…] (row-major grid onto the network's coordinates), random:SEED.
    #[arg(long, value_name = "NAME")]
    pub place: Option<String>,
    /// Netrace: replay only this region (0-based).
    #[arg(long)]
    pub region: Option<usize>,
    /// DUMPI: expand collectives into point-to-point messages by MPICH's algorithms
    /// (default), skip them all (their traffic and synchronisation are then not
    /// replayed), or refuse the trace.
    #[arg(long, value_enum, default_value_t = Collectives::Expand)]
    pub collectives: Collectives,
    /// DUMPI: algorithm per collective, e.g. `bcast=binomial,allreduce=ring` (the others:
    /// MPICH's choice).
    #[arg(long, value_name = "SPEC", value_parser = |s: &str| s.parse::<Choices>())]
    pub collective_algorithm: Option<Choices>,
    /// DUMPI: the MPICH version whose thresholds choose the algorithms (3 or 4).
    #[arg(long, value_name = "3|4", default_value_t = 3,
          value_parser = clap::value_parser!(u8).range(3..=4))]
    pub mpich_tuning: u8,
    /// Worker threads (network partitions; fewer when the network is small, see
    /// `experiment.partition_min_nodes`); results do not depend on it.
    #[arg(long)]
    pub threads: Option<u32>,
    /// Override any configuration field, e.g. --set topology.k=16 (repeatable).
    #[arg(long = "set", value_name = "PATH=VALUE")]
    pub set: Vec<String>,
    /// Per trace message CSV, with the trace's ids and recorded times: id, source,
    /// destination, size, flits, recorded, created, injected, delivered, latency (`-`:
    /// standard output). `--message-log` is routemu's own per-message log.
    #[arg(long, value_name = "FILE|-")]
    pub trace_log: Option<PathBuf>,
    /// Former name of `--trace-log`, refused with a pointer to it: `--messages` is a count
    /// of measured messages in `run`, `sweep` and `predict`, one meaning per flag name.
    #[arg(long, hide = true, value_name = "FILE|-")]
    pub messages: Option<PathBuf>,
    /// List at most N ranks (source endpoints) in the JSON's `ranks`, the latest to
    /// finish (default: all).
    #[arg(long, value_name = "N")]
    pub max_ranks: Option<u32>,
    /// Write the JSON summary to FILE, or to standard output with `-` (the human
    /// summary then goes to standard error).
    #[arg(long, value_name = "FILE|-")]
    pub json: Option<String>,
    /// Measurements in space and time and their files, as `routemu run` takes them,
    /// over the whole replay (docs/measurements.md).
    #[command(flatten)]
    pub observe: ObserveArgs,
}

/// The JSON document of `routemu replay`.
#[derive(Debug, Serialize)]
struct ReplayDoc<'a> {
    schema: &'static str,
    trace: String,
    machine: &'a str,
    gap: u64,
    time_scale: f64,
    flit_bytes: u64,
    placement: String,
    /// The effective configuration (file + overrides + flags), as `run` reports it.
    config: &'a crate::config::HwConfig,
    #[serde(flatten)]
    summary: &'a ReplaySummary,
}

/// Reads a node map file for a network of `nodes` nodes.
pub fn read_map(path: &Path, nodes: u32) -> Result<Vec<u32>> {
    let text = crate::foundation::inputs::read_to_string(path).map_err(|source| Error::Io {
        path: path.display().to_string(),
        source,
    })?;
    let mut map: Vec<Option<u32>> = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let l = line.split('#').next().unwrap_or("").trim();
        if l.is_empty() {
            continue;
        }
        let bad = |w: &str| Error::Trace(format!("{}:{}: {w}", path.display(), i + 1));
        let f: Vec<&str> = l.split_whitespace().collect();
        let [e, n] = f[..] else {
            return Err(bad("expected `ENDPOINT NODE`"));
        };
        let (e, n): (usize, u32) = (
            e.parse()
                .map_err(|_| bad("the endpoint is not a whole number"))?,
            n.parse()
                .map_err(|_| bad("the node is not a whole number"))?,
        );
        if e >= 1 << 24 {
            return Err(bad("endpoint too large"));
        }
        if map.len() <= e {
            map.resize(e + 1, None);
        }
        if n >= nodes {
            return Err(bad(&format!(
                "node {n} is outside the network's {nodes} nodes"
            )));
        }
        if map[e].replace(n).is_some() {
            return Err(bad(&format!("endpoint {e} is mapped twice")));
        }
    }
    // Unmapped endpoints fall outside every network.
    Ok(map.into_iter().map(|n| n.unwrap_or(u32::MAX)).collect())
}

/// The per-message CSV, streamed as the replay delivers (to a temporary file renamed
/// into place only when complete; see `output::Output`).
struct Csv {
    out: Output,
}

impl Csv {
    fn create(dest: &Path) -> Result<Self> {
        let mut c = Csv {
            out: Output::create(&dest.to_string_lossy())?.csv(),
        };
        c.line("id,src,dst,size,flits,recorded,created,injected,delivered,latency")?;
        Ok(c)
    }
    fn line(&mut self, s: &str) -> Result<()> {
        self.out.write_all(s.as_bytes())?;
        self.out.write_all(b"\n")
    }
    fn finish(self) -> Result<()> {
        self.out.finish()
    }
}

/// Runs `routemu replay`; returns the exit status.
pub fn replay(a: &ReplayArgs) -> Result<i32> {
    if let Some(m) = &a.messages {
        return Err(Error::Arg(format!(
            "replay --messages {}: the per trace message CSV is now --trace-log FILE \
             (--messages is a count of measured messages in run and sweep)",
            m.display()
        )));
    }
    let mut cfg = apply_overrides(&load_hw(&a.hw)?, &a.set)?;
    if let Some(t) = a.threads {
        cfg.experiment.threads = t;
    }
    a.observe.apply(&mut cfg)?;
    if !(a.time_scale > 0.0 && a.time_scale.is_finite()) {
        return Err(Error::Arg(format!(
            "--time-scale {}: must be positive",
            crate::foundation::limits::show(a.time_scale)
        )));
    }
    if a.gap > MAX_GAP {
        return Err(Error::Arg(format!(
            "--gap {}: at most {MAX_GAP} cycles (2^40)",
            a.gap
        )));
    }
    if a.flit_bytes == 0 {
        return Err(Error::Arg(
            "--flit-bytes 0: a flit carries at least one byte".into(),
        ));
    }
    let open_options = OpenOptions {
        region: a.region,
        collectives: a.collectives,
        collective_algorithms: a.collective_algorithm.unwrap_or_default(),
        mpich_tuning: if a.mpich_tuning == 4 {
            Tuning::MPICH4
        } else {
            Tuning::MPICH3
        },
    };
    let mut src = open_with(&a.trace, &open_options)?;
    let mode = a.mode.unwrap_or(if src.has_program() {
        ReplayMode::Elastic
    } else {
        ReplayMode::Open
    });
    let elastic = elastic_options(mode, a.compute_scale, a.eager_limit, a.overhead)?;
    let recorded_latency =
        recorded_latency(mode, src.has_program(), a.recorded_latency.as_deref())?;
    let topo = Topology::from_config(&cfg.topology)?;
    let mut outputs: Vec<(&str, &str)> = a.json.iter().map(|j| ("--json", j.as_str())).collect();
    if let Some(m) = &a.trace_log {
        let m = m
            .to_str()
            .ok_or_else(|| Error::Arg(format!("--trace-log {}: not UTF-8", m.display())))?;
        outputs.push(("--trace-log", m));
    }
    a.observe.check_with(outputs, &topo)?;
    // The replay runs one partition per thread (as many as the network can use), one
    // replay at a time (under MPI, each rank its share of the partitions).
    crate::cli::warn_oversubscribed(&cfg, 1);
    let opts = ReplayOptions {
        mode,
        elastic,
        recorded_latency,
        gap: a.gap,
        time_scale: a.time_scale,
        flit_bytes: a.flit_bytes,
        map: match (&a.map, &a.place) {
            (Some(f), _) => NodeMap::Table(read_map(f, topo.endpoints().len() as u32)?),
            (None, Some(p)) => p.parse::<Placement>()?.build(&topo)?,
            (None, None) => NodeMap::Identity,
        },
        max_ranks: match a.max_ranks {
            Some(0) => return Err(Error::Arg("--max-ranks 0: list at least one rank".into())),
            m => m,
        },
        ..ReplayOptions::default()
    };
    let described = src.describe();
    let placement = match (&a.map, &a.place) {
        (Some(f), _) => format!("map {}", f.display()),
        (None, Some(p)) => p.clone(),
        (None, None) => "identity".into(),
    };
    let mut csv = a.trace_log.as_deref().map(Csv::create).transpose()?;
    // On a terminal: a bar with an ETA over the trace's messages when the format says
    // how many there are, else a spinner; updated from the first delivery on.
    let total = src.declared_messages();
    let bar = crate::cli::output::progress_wanted().then(|| {
        let (b, template) = match total {
            Some(n) => (
                ProgressBar::new(n),
                "{spinner} replaying: [{bar:40}] {pos}/{len} messages, {msg} {elapsed} ETA {eta}",
            ),
            None => (
                ProgressBar::new_spinner(),
                "{spinner} replaying: {pos} messages delivered, {msg} {elapsed}",
            ),
        };
        b.set_style(
            ProgressStyle::with_template(template)
                .expect("valid template")
                .progress_chars("=> "),
        );
        b
    });
    let mut done = 0u64;
    let mut each = |r: &ReplayRecord| -> Result<()> {
        done += 1;
        // indicatif rate-limits drawing itself; the position is cheap to set.
        if let Some(b) = &bar {
            b.set_position(done);
            if done == 1 || done.is_multiple_of(1024) {
                b.set_message(format!("cycle {}", r.delivered));
            }
        }
        if let Some(c) = &mut csv {
            c.line(&format!(
                "{},{},{},{},{},{},{},{},{},{}",
                r.id,
                r.src,
                r.dst,
                r.size,
                r.flits,
                r.recorded,
                r.created,
                r.injected,
                r.delivered,
                r.latency
            ))?;
        }
        Ok(())
    };
    let mut sum = replay_machine_observed(&cfg, src.as_mut(), &opts, &mut each);
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    let ranked = crate::engine::transport::current().is_some();
    if matches!(sum, Err(Error::Deadlock(_)))
        && (cfg.experiment.threads > 1 || ranked)
        && crate::engine::transport::writes_outputs()
    {
        // Split networks cannot describe their waits: the replay on one partition of one
        // process (rank 0 alone under MPI, which alone prints it; the other ranks end
        // with the deadlock's exit status) reaches the very same deadlock and describes
        // it (nothing is written for it).
        let mut one = cfg.clone();
        one.experiment.threads = 1;
        let again = crate::engine::transport::without_transport(|| {
            let mut again = open_with(&a.trace, &open_options)?;
            Ok::<_, Error>(replay_machine(&one, again.as_mut(), &opts, &mut |_| Ok(())))
        })?;
        if let Err(e @ Error::Deadlock(_)) = again {
            sum = Err(e);
        }
    }
    let (sum, mut extras) = sum?;
    // Every file is rendered before any is written.
    let context = format!("replaying {}", a.trace.display());
    let series = sum.series.as_deref().unwrap_or(&[]);
    // The files' latency is the replay's own (creation → tail delivered), as in the
    // summary, whatever the machine's `experiment.latency` says.
    let mut files_cfg = cfg.clone();
    files_cfg.experiment.latency = Default::default();
    let mut files = a
        .observe
        .render_with(&files_cfg, &topo, (&context, 1), series, &mut extras)?;
    if let Some(c) = csv {
        c.finish()?;
    }
    let s = summary_text(a, mode, &cfg.name, &described, &placement, &sum);
    if let Some(dest) = &a.json {
        let doc = ReplayDoc {
            schema: SCHEMA,
            trace: described,
            machine: &cfg.name,
            gap: a.gap,
            time_scale: a.time_scale,
            flit_bytes: a.flit_bytes,
            placement,
            config: &cfg,
            summary: &sum,
        };
        write_json(dest, &doc)?;
    }
    ObserveArgs::write(&mut files)?;
    // The files before the summary: a failing standard output loses none of them.
    if a.json.as_deref() == Some("-")
        || a.observe.uses_stdout()
        || a.trace_log.as_deref() == Some(Path::new("-"))
    {
        eprint(&s);
    } else {
        print(&s)?;
    }
    Ok(0)
}

/// The human summary of a replay.
fn summary_text(
    a: &ReplayArgs,
    mode: ReplayMode,
    machine: &str,
    described: &str,
    placement: &str,
    sum: &ReplaySummary,
) -> String {
    let o = |x: Option<f64>| x.map_or("n/a".into(), |v| format!("{v:.2}"));
    let u = |x: Option<u64>| x.map_or("n/a".into(), |v| v.to_string());
    let mut s = format!(
        "routemu replay: {} on {}\n  mode: {}; {} cycles per trace unit; {} bytes per flit; placement {}; {} partition(s)\n  \
         messages: {} read, {} delivered, {} flits; last delivery at cycle {} (trace spans {} cycles)\n  \
         latency (created → delivered): mean {}  p50 {}  p99 {}  max {}\n",
        described,
        machine,
        match (mode, &sum.application) {
            (ReplayMode::Open, _) => "open loop, recorded times".to_string(),
            (ReplayMode::Deps, _) => format!("dependency-driven (gap {} cycles)", a.gap),
            (ReplayMode::Elastic, Some(app)) => format!(
                "elastic (compute × {}, eager limit {} bytes, overhead send {}+{}/byte, receive {}+{}/byte cycles)",
                app.options.compute_scale,
                app.options.eager_limit,
                app.options.overhead.send.fixed,
                app.options.overhead.send.per_byte,
                app.options.overhead.recv.fixed,
                app.options.overhead.recv.per_byte,
            ),
            (ReplayMode::Elastic, None) => format!(
                "elastic (dependants their recorded distance after their parents; recorded latency {}{}; \
                 run time {} cycles against {} recorded: speed-up {}{})",
                sum.recorded_latency.as_deref().unwrap_or("n/a"),
                match (&a.recorded_latency, sum.recorded_latency.as_deref()) {
                    (None, Some(l)) if l.starts_with("hops:") => ", the default for Netrace: an estimate",
                    (None, _) => ", the default",
                    _ => "",
                },
                sum.runtime.map_or("n/a".into(), |r| r.to_string()),
                sum.recorded_runtime.map_or("n/a".into(), |r| r.to_string()),
                sum.speedup.map_or("n/a".into(), |x| format!("{x:.4}×")),
                if sum.read_late > 0 {
                    format!("; {} messages read after their parents allowed them, created late", sum.read_late)
                } else {
                    String::new()
                },
            ),
        },
        a.time_scale,
        a.flit_bytes,
        placement,
        sum.partitions,
        sum.messages,
        sum.delivered,
        sum.flits,
        sum.cycles,
        sum.recorded_span,
        o(sum.latency_mean),
        u(sum.latency_p50),
        u(sum.latency_p99),
        u(sum.latency_max),
    );
    // Dragonfly, flattened butterfly: the links' utilisation by kind (`--per-link`).
    if let Some(line) = sum.link_totals.as_ref().and_then(|t| t.by_kind_line()) {
        let _ = writeln!(s, "  {line}");
    }
    if sum.application.is_none() {
        let _ = writeln!(
            s,
            "  behind the trace (injected − recorded): mean {}  max {}",
            o(sum.behind_mean),
            u(sum.behind_max),
        );
    }
    if let Some(app) = &sum.application {
        application_text(&mut s, app);
        return s;
    }
    let _ = writeln!(
        s,
        "  replayed vs recorded: first recorded time → last delivery {} cycles against the recorded {} ({:+} cycles; slowdown {})",
        sum.replayed_span,
        sum.recorded_span,
        sum.replayed_span as i128 - sum.recorded_span as i128,
        sum.slowdown.map_or("n/a".into(), |x| format!("{x:.6}×")),
    );
    let _ = writeln!(
        s,
        "  lag behind the recorded time: creation mean {}  p99 {}  max {} ({} messages late, {} cycles in all); \
         delivery mean {}  p50 {}  p99 {}  max {}",
        o(sum.created_lag_mean),
        u(sum.created_lag_p99),
        u(sum.created_lag_max),
        sum.created_late,
        sum.created_lag_total,
        o(sum.delivered_lag_mean),
        u(sum.delivered_lag_p50),
        u(sum.delivered_lag_p99),
        u(sum.delivered_lag_max),
    );
    if let Some(r) = &sum.slowest_rank {
        let _ = writeln!(
            s,
            "  ranks: {}; the slowest, rank {} (node {}), had its last message delivered at cycle {}: \
             {} messages, {} flits, latency mean {:.2}, {} cycles communicating in all",
            sum.rank_count,
            r.rank,
            r.node,
            r.last_delivery,
            r.messages,
            r.flits,
            r.latency_mean,
            r.latency_total,
        );
    }
    let _ = writeln!(
        s,
        "  dependencies: {}",
        match (sum.dependencies, mode) {
            (0, _) => "none in the trace: --mode deps is the same as open loop".to_string(),
            (n, ReplayMode::Deps) if sum.dangling_dependencies > 0 => format!(
                "{n} in the trace, followed ({} on messages not in the trace or region, dropped)",
                sum.dangling_dependencies
            ),
            (n, ReplayMode::Deps) => format!("{n} in the trace, followed"),
            (n, ReplayMode::Open) => format!("{n} in the trace, ignored (open loop)"),
            (n, ReplayMode::Elastic) => format!("{n} in the trace, followed elastically"),
        }
    );
    s
}

/// The lines of an elastic replay's application: run time, where the ranks spent it,
/// what bounded the run.
fn application_text(s: &mut String, app: &Application) {
    let _ = writeln!(
        s,
        "  application: run time {} cycles emulated against {} recorded: speed-up {}",
        app.runtime,
        app.runtime_recorded,
        app.speedup.map_or("n/a".into(), |x| format!("{x:.4}×")),
    );
    let _ = writeln!(
        s,
        "  over the {} ranks: {} cycles computing, {} inside calls that communicate; {} messages by rendezvous, \
         {} control messages ({} flits){}",
        app.ranks.len(),
        app.compute,
        app.communication,
        app.rendezvous,
        app.control_messages,
        app.control_flits,
        if app.unmatched_receives > 0 {
            format!("; {} receives nothing in the trace matches (completed as posted)", app.unmatched_receives)
        } else {
            String::new()
        }
    );
    if let Some(r) = app
        .slowest_rank
        .and_then(|r| app.ranks.iter().find(|x| x.rank == r))
    {
        let _ = writeln!(
            s,
            "  the last to finish, rank {} (node {}), at cycle {} (recorded {}): {} computing, {} communicating, {} in other calls",
            r.rank, r.node, r.finish, r.finish_recorded, r.compute, r.communication, r.local
        );
    }
    if let Some(c) = &app.critical {
        let _ = writeln!(
            s,
            "  what bounded the run: its {} (call #{}) waited {} cycles until cycle {}{}",
            c.call,
            c.call_index,
            c.waited,
            c.released,
            match (c.message, c.peer) {
                (Some(m), Some(p)) => format!(", for message {m} with rank {p}"),
                _ => String::new(),
            }
        );
    }
}

/// The elastic replay's options from the flags, refused in the other modes.
pub fn elastic_options(
    mode: ReplayMode,
    compute_scale: Option<f64>,
    eager_limit: Option<u64>,
    overhead: Option<Overhead>,
) -> Result<ElasticOptions> {
    if mode != ReplayMode::Elastic {
        let given = [
            (compute_scale.is_some(), "--compute-scale"),
            (eager_limit.is_some(), "--eager-limit"),
            (overhead.is_some(), "--overhead"),
        ];
        if let Some((_, flag)) = given.iter().find(|(g, _)| *g) {
            return Err(Error::Arg(format!(
                "{flag} applies to elastic replay (--mode elastic)"
            )));
        }
    }
    let mut o = ElasticOptions::default();
    if let Some(f) = compute_scale {
        if !(f >= 0.0 && f.is_finite() && f <= 1e9) {
            return Err(Error::Arg(format!(
                "--compute-scale {}: a factor from 0 to 1e9",
                crate::foundation::limits::show(f)
            )));
        }
        o.compute_scale = f;
    }
    if let Some(b) = eager_limit {
        o.eager_limit = b;
    }
    if let Some(h) = overhead {
        o.overhead = h;
    }
    Ok(o)
}

/// `--recorded-latency` from its text: parsed, and refused outside elastic replay of a
/// message trace (None: the format's default).
pub fn recorded_latency(
    mode: ReplayMode,
    program: bool,
    spec: Option<&str>,
) -> Result<Option<RecordedLatency>> {
    let Some(spec) = spec else {
        return Ok(None);
    };
    if mode != ReplayMode::Elastic {
        return Err(Error::Arg(format!(
            "--recorded-latency {spec}: applies to elastic replay (--mode elastic) of a \
             message trace"
        )));
    }
    if program {
        return Err(Error::Arg(format!(
            "--recorded-latency {spec}: applies to message traces (text, Netrace); an MPI \
             trace's elastic replay emulates its calls instead"
        )));
    }
    spec.parse()
        .map(Some)
        .map_err(|e| Error::Arg(format!("--recorded-latency {e}")))
}
