//! `routemu saturation`: the saturation throughput of a machine with its 95% interval
//! (`experiments::saturation::search`), a human summary, the JSON document and the exit status
//! that says whether the result can rank machines. The search itself is not here.

use crate::cli::output::{check_json_output, eprint, print, write_json};
use crate::cli::ExperimentArgs;
use crate::config::HwConfig;
use crate::experiments::saturation::{
    search, Criterion, FlitLoad, ProbeStop, Progress, SaturationOptions, SaturationResult,
};
use crate::foundation::error::{Error, Result};
use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};
use serde::Serialize;
use std::fmt::Write;

/// Schema of the JSON `routemu saturation` writes.
pub const SCHEMA: &str = "routemu.saturation/1";

/// Exit status when the interval is too wide to rank machines by (the JSON and the
/// summary are still written, with `saturation.rankable` false and the reason).
pub const EXIT_UNRANKABLE: i32 = 4;

/// Replications of a search when neither `--replications` nor
/// `--set experiment.replications=N` says: the hardware files' own counts are meant for
/// single runs and are often too few for an interval on a saturation point.
pub const DEFAULT_REPLICATIONS: u32 = 5;

/// `routemu saturation` arguments.
#[derive(Debug, Args)]
pub struct SaturationArgs {
    /// Machine, workload (pattern, lengths, process; the rate is the search's) and
    /// experiment (seed, replications — default 5 —, warm-up, window in cycles, jobs,
    /// threads).
    #[command(flatten)]
    pub exp: ExperimentArgs,
    /// What makes a load sustained: `backlog` (source backlog not growing: one-sided
    /// t-test at 95% on its increments, and growth above --margin of the offered load),
    /// `accepted` (accepted not below offered by more than --margin of it), `latency:F`
    /// (mean latency at most F × the zero-load latency).
    #[arg(
        long,
        default_value = "backlog",
        value_name = "backlog|accepted|latency:F"
    )]
    pub criterion: String,
    /// Bisection stops when the bracket is narrower than this fraction of its upper end.
    #[arg(long, default_value_t = 0.01, value_name = "FRACTION")]
    pub tolerance: f64,
    /// Upper end of the first bracket, flits/node/cycle (default: the machine's
    /// uniform-traffic capacity bound × link width).
    #[arg(long, value_name = "FLITS/NODE/CYCLE")]
    pub upper: Option<f64>,
    /// Smallest share of the offered load that counts as not sustained (backlog growth,
    /// accepted deficit, refused messages).
    #[arg(long, default_value_t = 0.01, value_name = "FRACTION")]
    pub margin: f64,
    /// The result ranks machines only when its 95% half-width is at most this fraction of
    /// the throughput; otherwise exit status 4.
    #[arg(long, default_value_t = 0.05, value_name = "FRACTION")]
    pub max_ci: f64,
    /// Criterion latency: load of the probe measuring the zero-load latency,
    /// flits/node/cycle (default 1% of the upper bound).
    #[arg(long, value_name = "FLITS/NODE/CYCLE")]
    pub zero_load: Option<f64>,
    /// Write the JSON document to FILE, or to standard output with `-` (the summary then
    /// goes to standard error).
    #[arg(long, value_name = "FILE|-")]
    pub json: Option<String>,
}

impl SaturationArgs {
    /// The search options the flags describe; `cfg` is the effective configuration (for
    /// `--set experiment.replications`).
    pub fn options(&self, cfg: &HwConfig) -> Result<SaturationOptions> {
        let set = |path: &str| {
            self.exp
                .set
                .iter()
                .any(|s| s.split('=').next().map(str::trim) == Some(path))
        };
        let replications = match self.exp.replications {
            Some(r) => r,
            None if set("experiment.replications") => cfg.experiment.replications,
            None => DEFAULT_REPLICATIONS,
        };

        Ok(SaturationOptions {
            criterion: self.criterion.parse::<Criterion>()?,
            tolerance: self.tolerance,
            upper: self.upper.map(FlitLoad),
            replications,
            max_rel_ci: self.max_ci,
            margin: self.margin,
            zero_load: self.zero_load.map(FlitLoad),
        })
    }
}

/// The JSON document: the result with what it was run on (`write_json` puts the
/// provenance, `routemu {version, commit}` and `command`, in front).
#[derive(Serialize)]
struct Document<'a> {
    schema: &'static str,
    /// The base machine's effective configuration (every probe sets its own rate).
    config: &'a HwConfig,
    seed: u64,
    #[serde(flatten)]
    result: &'a SaturationResult,
}

/// The human summary of a search.
pub fn summary(cfg: &HwConfig, r: &SaturationResult) -> String {
    let mut s = String::new();
    let sat = &r.saturation;
    let o = &r.options;
    let _ = writeln!(
        s,
        "routemu saturation: {} — criterion {}",
        cfg.name, sat.criterion
    );
    let ci = match (sat.ci95, sat.relative_ci95) {
        (Some(c), Some(x)) if x.is_finite() => format!(" ± {c} (95% CI, ±{:.1}%)", 100.0 * x),
        // A throughput of 0 has no relative interval (the JSON's is null).
        (Some(c), _) => format!(" ± {c} (95% CI)"),
        _ => " (no interval)".into(),
    };
    // Per terminal on a concentrated network, per host on a host/switch one, as the run
    // summary and `check` say.
    let per =
        crate::topology::Topology::from_config(&cfg.topology).map_or("node", |t| t.endpoint_noun());
    let _ = writeln!(
        s,
        "  saturation throughput: {}{ci} flits/{per}/cycle over {} replication(s)",
        sat.throughput,
        sat.per_replication.len()
    );
    let per: Vec<String> = sat.per_replication.iter().map(|x| x.to_string()).collect();
    let _ = writeln!(s, "  per replication: {}", per.join(" "));
    for rep in &r.replications {
        let _ = writeln!(
            s,
            "    replication {}: sustained {} (accepted {}), not sustained {}, {} probes",
            rep.replication,
            rep.sustained,
            rep.throughput,
            rep.unsustained.map_or("never".into(), |x| x.to_string()),
            rep.probes.len()
        );
    }
    let _ = writeln!(
        s,
        "  search: loads in (0, {}] ({}), tolerance {}%, margin {}%, {} probes, {} cycles, {:.1} s",
        r.upper,
        r.upper_source,
        100.0 * o.tolerance,
        100.0 * o.margin,
        r.probes,
        r.cycles,
        r.wall_seconds
    );
    match &sat.reason {
        None => {
            let _ = writeln!(
                s,
                "  rankable: yes (interval within ±{}%)",
                100.0 * o.max_rel_ci
            );
        }
        Some(why) => {
            let _ = writeln!(s, "  NOT RANKABLE: {why}");
        }
    }
    for w in &r.warnings {
        let _ = writeln!(s, "  warning: {w}");
    }
    s
}

/// Runs `routemu saturation`; returns the exit status.
pub fn saturation(args: &SaturationArgs) -> Result<i32> {
    if args.exp.rate.is_some() || args.exp.load.is_some() {
        return Err(Error::Arg(
            "--rate/--load: the search chooses the load itself (bound it with --upper)".into(),
        ));
    }
    if args.exp.messages.is_some() {
        return Err(Error::Arg(
            "--messages: the search compares loads over windows of cycles; use --cycles".into(),
        ));
    }
    let cfg = args.exp.config()?;
    check_json_output(args.json.as_deref())?;
    let opts = args.options(&cfg)?;
    crate::cli::warn_oversubscribed(&cfg, cfg.experiment.jobs.min(opts.replications) as usize);
    // The bar counts probes against the usual number per search — the first bracket, one
    // zero-load probe for the latency criterion, the bisection's halvings down to the
    // tolerance — so its ETA is an estimate (a bracket that must grow adds probes).
    let per_search = 1
        + u64::from(matches!(opts.criterion, Criterion::Latency(_)))
        + (1.0 / opts.tolerance.max(1e-6)).log2().ceil().max(1.0) as u64;
    let bar = crate::cli::output::progress_wanted().then(|| {
        let b = ProgressBar::new(per_search * u64::from(opts.replications));
        b.set_style(
            ProgressStyle::with_template("{spinner} [{bar:30}] {msg} {elapsed} ETA ≈{eta}")
                .expect("valid template")
                .progress_chars("=> "),
        );
        b.enable_steady_tick(std::time::Duration::from_millis(200));
        b
    });
    let mut probes_done = vec![0u64; opts.replications as usize];
    let result = search(&cfg, &opts, &mut |p: Progress| {
        if let Some(b) = &bar {
            if let Some(d) = probes_done.get_mut(p.replication as usize) {
                *d = (*d).max(p.probe as u64);
            }
            let done: u64 = probes_done.iter().sum();
            b.set_length(b.length().unwrap_or(0).max(done + 1));
            b.set_position(done);
            b.set_message(format!(
                "replication {}/{} probe {} at {} flits/node/cycle, cycle {}",
                p.replication + 1,
                opts.replications,
                p.probe + 1,
                p.load,
                p.cycle
            ));
        }
    });
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    let result = result?;
    if let Some(dest) = &args.json {
        let doc = Document {
            schema: SCHEMA,
            config: &cfg,
            seed: cfg.experiment.seed,
            result: &result,
        };
        write_json(dest, &doc)?;
    }
    // The file before the summary: a failing standard output does not lose it.
    let text = summary(&cfg, &result);
    match args.json.as_deref() {
        Some("-") => eprint(&text),
        _ => print(&text)?,
    }
    let deadlocked = result
        .replications
        .iter()
        .any(|r| r.probes.iter().any(|p| p.stop == ProbeStop::Deadlock));
    Ok(if deadlocked {
        crate::cli::EXIT_DEADLOCK
    } else if result.saturation.rankable {
        0
    } else {
        EXIT_UNRANKABLE
    })
}
