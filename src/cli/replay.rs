//! `routemu replay`: a recorded trace on a machine — open loop or dependency-driven —
//! with the summary, `--json`, and per-message CSV on request.

use super::output::write_json;
use crate::config::load::load_hw;
use crate::config::overrides::apply_overrides;
use crate::engine::replay::{
    replay_machine, NodeMap, Placement, ReplayMode, ReplayOptions, ReplayRecord,
};
use crate::error::{Error, Result};
use crate::topology::Topology;
use crate::trace::collectives::{Choices, Tuning};
use crate::trace::mpi::Collectives;
use crate::trace::{open_with, OpenOptions};
use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};
use serde::Serialize;
use std::io::IsTerminal;
use std::io::Write;
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
    /// open: create at the recorded times; deps: also wait for parents to be delivered.
    #[arg(long, value_enum, default_value_t = ReplayMode::Open)]
    pub mode: ReplayMode,
    /// Cycles between a parent's delivery and its child's creation (deps mode).
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
    /// Per-message CSV: id, source, destination, size, flits, recorded, created,
    /// injected, delivered, latency.
    #[arg(long, value_name = "FILE")]
    pub messages: Option<PathBuf>,
    /// Write the JSON summary to FILE, or to standard output with `-`.
    #[arg(long, value_name = "FILE|-")]
    pub json: Option<String>,
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
    summary: &'a crate::engine::replay::ReplaySummary,
}

/// Reads a node map file for a network of `nodes` nodes.
pub fn read_map(path: &Path, nodes: u32) -> Result<Vec<u32>> {
    let text = std::fs::read_to_string(path).map_err(|source| Error::Io {
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

/// A CSV written to a temporary file, renamed into place only when complete.
struct Csv {
    tmp: PathBuf,
    dest: PathBuf,
    w: std::io::BufWriter<std::fs::File>,
}

impl Csv {
    fn create(dest: &Path) -> Result<Self> {
        let name = dest
            .file_name()
            .ok_or_else(|| Error::Arg(format!("`{}` is not a file name", dest.display())))?;
        let tmp = dest.with_file_name(format!(
            ".{}.tmp{}",
            name.to_string_lossy(),
            std::process::id()
        ));
        let f = std::fs::File::create(&tmp).map_err(|source| Error::Io {
            path: tmp.display().to_string(),
            source,
        })?;
        let mut c = Csv {
            tmp,
            dest: dest.to_path_buf(),
            w: std::io::BufWriter::new(f),
        };
        c.line("id,src,dst,size,flits,recorded,created,injected,delivered,latency")?;
        Ok(c)
    }
    fn line(&mut self, s: &str) -> Result<()> {
        writeln!(self.w, "{s}").map_err(|source| Error::Io {
            path: self.tmp.display().to_string(),
            source,
        })
    }
    fn finish(mut self) -> Result<()> {
        let io = |source| Error::Io {
            path: self.dest.display().to_string(),
            source,
        };
        self.w.flush().map_err(io)?;
        std::fs::rename(&self.tmp, &self.dest).map_err(io)
    }
}

impl Drop for Csv {
    fn drop(&mut self) {
        // Gone after a successful rename; removed after a failure.
        let _ = std::fs::remove_file(&self.tmp);
    }
}

/// Runs `routemu replay`; returns the exit status.
pub fn replay(a: &ReplayArgs) -> Result<i32> {
    let mut cfg = apply_overrides(&load_hw(&a.hw)?, &a.set)?;
    if let Some(t) = a.threads {
        cfg.experiment.threads = t;
    }
    if !(a.time_scale > 0.0 && a.time_scale.is_finite()) {
        return Err(Error::Arg(format!(
            "--time-scale {}: must be positive",
            a.time_scale
        )));
    }
    if a.flit_bytes == 0 {
        return Err(Error::Arg(
            "--flit-bytes 0: a flit carries at least one byte".into(),
        ));
    }
    let mut src = open_with(
        &a.trace,
        &OpenOptions {
            region: a.region,
            collectives: a.collectives,
            collective_algorithms: a.collective_algorithm.unwrap_or_default(),
            mpich_tuning: if a.mpich_tuning == 4 {
                Tuning::MPICH4
            } else {
                Tuning::MPICH3
            },
        },
    )?;
    let topo = Topology::from_config(&cfg.topology)?;
    let opts = ReplayOptions {
        mode: a.mode,
        gap: a.gap,
        time_scale: a.time_scale,
        flit_bytes: a.flit_bytes,
        map: match (&a.map, &a.place) {
            (Some(f), _) => NodeMap::Table(read_map(f, topo.endpoints().len() as u32)?),
            (None, Some(p)) => p.parse::<Placement>()?.build(&topo)?,
            (None, None) => NodeMap::Identity,
        },
        ..ReplayOptions::default()
    };
    let described = src.describe();
    let placement = match (&a.map, &a.place) {
        (Some(f), _) => format!("map {}", f.display()),
        (None, Some(p)) => p.clone(),
        (None, None) => "identity".into(),
    };
    let mut csv = a.messages.as_deref().map(Csv::create).transpose()?;
    // On a terminal: a bar with an ETA over the trace's messages when the format says
    // how many there are, else a spinner; updated from the first delivery on.
    let total = src.declared_messages();
    let bar = std::io::stderr().is_terminal().then(|| {
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
    let sum = replay_machine(&cfg, src.as_mut(), &opts, &mut each);
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    let sum = sum?;
    if let Some(c) = csv {
        c.finish()?;
    }
    let o = |x: Option<f64>| x.map_or("n/a".into(), |v| format!("{v:.2}"));
    let u = |x: Option<u64>| x.map_or("n/a".into(), |v| v.to_string());
    let s = format!(
        "routemu replay: {} on {}\n  mode: {} (gap {} cycles); {} cycles per trace unit; {} bytes per flit; placement {}; {} partition(s)\n  \
         messages: {} read, {} delivered, {} flits; last delivery at cycle {} (trace spans {} cycles)\n  \
         latency (created → delivered): mean {}  p50 {}  p99 {}  max {}\n  \
         behind the trace (injected − recorded): mean {}  max {}\n",
        described,
        cfg.name,
        match a.mode {
            ReplayMode::Open => "open loop, recorded times",
            ReplayMode::Deps => "dependency-driven",
        },
        a.gap,
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
        o(sum.behind_mean),
        u(sum.behind_max),
    );
    match a.json.as_deref() {
        Some("-") => eprint!("{s}"),
        _ => print!("{s}"),
    }
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
    Ok(0)
}
