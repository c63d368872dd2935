//! The command line: `routemu run`, `predict`, `compare`, `sweep`, `plot`, `saturation`, `replay`, `check` and `bench`. Argument parsing (clap) and
//! turning flags into configuration live here; everything else is library calls.

pub mod bench;
pub mod bench_compare;
pub mod check;
pub mod compare;
pub mod interrupt;
#[cfg(feature = "mpi")]
pub mod mpi;
pub mod observe;
pub mod output;
pub mod plot;
pub mod predict;
pub mod replay;
pub mod run;
pub mod saturation;
pub mod spec;
pub mod sweep;
pub mod typed;

use crate::config::load::load_hw;
use crate::config::overrides::apply_overrides;
use crate::config::{HwConfig, Measure};
use crate::foundation::error::Result;
use clap::{Args, Parser, Subcommand};
use std::path::PathBuf;

/// routemu: cycle-accurate emulation of interconnection-network routers.
#[derive(Debug, Parser)]
#[command(name = "routemu", version, about, long_about = None)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
    /// Run even when the estimated memory exceeds what this process may use (available
    /// memory, cgroup limit, ulimit); see README, "Limits".
    #[arg(long, global = true)]
    pub force: bool,
}

/// Subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Emulate a machine under a synthetic workload and report latencies and throughput.
    Run(RunArgs),
    /// Predict with an analytical model, without emulating
    ///
    /// The model follows from the machine's switching, topology and routing; every model
    /// needs uniformly random destinations (workload.pattern = Uniform):
    ///
    ///   circuit hold / drop       switching Circuit (Hold, Drop), a hypercube or a torus
    ///                             (XY routing): paper 000
    ///   circuit adaptive          switching Circuit (Adaptive), a hypercube: papers 000/001
    ///   adaptive wormhole         switching Wormhole (routing Adaptive), a bidirectional
    ///                             k×k torus, k a multiple of 4: paper 004
    ///   dimension-order wormhole  switching Wormhole (routing DimensionOrder), a
    ///                             bidirectional k×k torus, k even: M/G/1 channels and
    ///                             M/G/c queues for the router.dma engines
    ///   deflection (WDVC)         switching Deflection without a hop limit, a k×k
    ///                             Manhattan Street network, Poisson creation: paper 003
    ///   wormhole with timeout     switching Timeout with a timeout, host/switch networks
    ///                             (any graph of switches and hosts): paper 002
    ///
    /// Each answer says, per quantity, whether the point lies in the range where the model
    /// was validated against the emulation, and warns when it does not (--json:
    /// prediction.in_range, prediction.range; docs/models.md has the ranges).
    #[command(verbatim_doc_comment)]
    Predict(predict::PredictArgs),
    /// Emulate and predict the same machine: measured against predicted, relative errors
    ///
    /// The model follows from the machine's switching, topology and routing; every model
    /// needs uniformly random destinations (workload.pattern = Uniform):
    ///
    ///   circuit hold / drop       switching Circuit (Hold, Drop), a hypercube or a torus
    ///                             (XY routing): paper 000
    ///   circuit adaptive          switching Circuit (Adaptive), a hypercube: papers 000/001
    ///   adaptive wormhole         switching Wormhole (routing Adaptive), a bidirectional
    ///                             k×k torus, k a multiple of 4: paper 004
    ///   dimension-order wormhole  switching Wormhole (routing DimensionOrder), a
    ///                             bidirectional k×k torus, k even: M/G/1 channels and
    ///                             M/G/c queues for the router.dma engines
    ///   deflection (WDVC)         switching Deflection without a hop limit, a k×k
    ///                             Manhattan Street network, Poisson creation: paper 003
    ///   wormhole with timeout     switching Timeout with a timeout, host/switch networks
    ///                             (any graph of switches and hosts): paper 002
    ///
    /// The table says, per quantity, whether the point lies in the range where the model
    /// was validated against the emulation, and warns when it does not (--json:
    /// prediction.in_range, prediction.range; docs/models.md has the ranges).
    #[command(verbatim_doc_comment)]
    Compare(predict::PredictArgs),
    /// Emulate and predict a grid of parameter values (CSV, SVG plot).
    Sweep(Box<sweep::SweepArgs>),
    /// Redraw a sweep's CSV or any numeric CSV (a time series) as SVG or PNG figures,
    /// without emulating again.
    Plot(plot::PlotArgs),
    /// Find the saturation throughput (largest sustained load) with a 95% interval over
    /// replications (docs/saturation.md).
    Saturation(saturation::SaturationArgs),
    /// Replay a recorded message trace (routemu text, Netrace or DUMPI) on a machine.
    Replay(replay::ReplayArgs),
    /// Validate a hardware description and explain the machine it describes.
    Check {
        /// The RON hardware description.
        file: PathBuf,
        /// Overrides applied before checking, as for `run`.
        #[arg(long = "set", value_name = "PATH=VALUE")]
        set: Vec<String>,
    },
    /// Measure emulation speed (node-cycles per second) on fixed scenarios.
    Bench(bench::BenchArgs),
}

/// The machine and workload selection shared by commands that emulate.
#[derive(Debug, Args, Clone)]
pub struct ExperimentArgs {
    /// The RON hardware description.
    pub hw: PathBuf,
    /// Messages created per node per cycle.
    #[arg(long)]
    pub rate: Option<f64>,
    /// Offered load in flits per node per cycle: sets the message rate to LOAD divided
    /// by the mean message length (after `--length`).
    #[arg(long, conflicts_with = "rate", value_name = "FLITS")]
    pub load: Option<f64>,
    /// Message length: N, const:N, exp:MEAN, uniform:MIN:MAX or mixed:LEN@WEIGHT,… (flits).
    #[arg(long)]
    pub length: Option<String>,
    /// Destinations: uniform, uniform:self, bitcomp, transpose, bitrev, shuffle, tornado,
    /// neighbor, randperm, groupshift, hotspot:NODE:FRAC, hotnodes:N,N,…, sphere:R:P,
    /// decreasing:DECAY;
    /// a permutation with `:self` (transpose:self): its fixed points send to themselves.
    #[arg(long)]
    pub pattern: Option<String>,
    /// Seed of every random stream.
    #[arg(long)]
    pub seed: Option<u64>,
    /// Independent replications (≥ 2 for confidence intervals; at most 100000).
    #[arg(long)]
    pub replications: Option<u32>,
    /// Warm-up cycles before measurement.
    #[arg(long)]
    pub warmup: Option<u64>,
    /// Measure the messages created during this many cycles.
    #[arg(long, conflicts_with = "messages")]
    pub cycles: Option<u64>,
    /// Measure this many messages created after warm-up.
    #[arg(long)]
    pub messages: Option<u64>,
    /// Worker threads per replication (network partitions); results do not depend on it.
    #[arg(long)]
    pub threads: Option<u32>,
    /// Replications run side by side; results do not depend on it.
    #[arg(long)]
    pub jobs: Option<u32>,
    /// Override any configuration field, e.g. --set topology.k=16 (repeatable).
    #[arg(long = "set", value_name = "PATH=VALUE")]
    pub set: Vec<String>,
    /// Visit every router every cycle (for checking that idle skipping changes nothing).
    #[arg(long, hide = true)]
    pub no_idle_skip: bool,
}

impl ExperimentArgs {
    /// Loads the file and applies `--set` overrides, then the flags.
    pub fn config(&self) -> Result<HwConfig> {
        let base = load_hw(&self.hw)?;
        let mut cfg = apply_overrides(&base, &self.set)?;
        let w = &mut cfg.workload;
        if let Some(r) = self.rate {
            w.rate = r;
        }
        if let Some(l) = &self.length {
            w.length = spec::parse_length(l)?;
        }
        if let Some(p) = &self.pattern {
            let (pattern, fixed) = spec::parse_pattern(p)?;
            w.pattern = pattern;
            // `PATTERN:self` asks for it; a bare pattern keeps the machine's choice.
            if fixed == crate::config::FixedPoints::ToSelf {
                w.fixed_points = fixed;
            }
        }
        if let Some(load) = self.load {
            if !(load.is_finite() && load >= 0.0) {
                return Err(crate::foundation::error::Error::Arg(format!(
                    "--load {}: the offered load must be a non-negative number of flits per node per cycle",
                    crate::foundation::limits::show(load)
                )));
            }
            // Flits per request, its reply included under request/reply traffic.
            w.rate = load / crate::traffic::flits_per_creation(w)?;
        }
        let e = &mut cfg.experiment;
        if let Some(s) = self.seed {
            e.seed = s;
        }
        if let Some(r) = self.replications {
            e.replications = r;
        }
        if let Some(w) = self.warmup {
            e.warmup = w;
        }
        if let Some(c) = self.cycles {
            e.measure = Measure::Cycles(c);
        }
        if let Some(m) = self.messages {
            e.measure = Measure::Messages(m);
        }
        if let Some(j) = self.jobs {
            e.jobs = j;
        }
        if let Some(t) = self.threads {
            e.threads = t;
        }
        if self.no_idle_skip {
            e.idle_skip = false;
        }
        Ok(cfg)
    }
}

/// `routemu run` arguments.
#[derive(Debug, Args)]
pub struct RunArgs {
    /// Machine, workload and experiment.
    #[command(flatten)]
    pub exp: ExperimentArgs,
    /// Write the JSON report to FILE, or to standard output with `-` (the human summary
    /// then goes to standard error).
    #[arg(long, value_name = "FILE|-")]
    pub json: Option<String>,
    /// Measurements in space and time and their files (docs/measurements.md).
    #[command(flatten)]
    pub observe: observe::ObserveArgs,
}

/// Exit statuses: 0 done; 1 bad input or a runtime error; 2 a command-line usage error
/// (clap's own); 3 deadlock ([`EXIT_DEADLOCK`]: `run`, `compare`, `replay`, and `sweep`
/// and `saturation` after writing their outputs); 4 saturation not rankable
/// (`saturation::EXIT_UNRANKABLE`); 130 and 143 interrupted by SIGINT and SIGTERM
/// ([`interrupt::exit_status`]).
///
/// Exit status when an emulation deadlocked.
pub const EXIT_DEADLOCK: i32 = 3;

/// Warns on standard error about the machine (`engine::machine::Machine::warnings`),
/// and when the threads a command is about to run (`concurrent` runs at once, each on
/// the partitions `cfg` gets) outnumber the cores free now: the partitions then wait for
/// one another at every cycle's barrier.
pub(crate) fn warn_oversubscribed(cfg: &HwConfig, concurrent: usize) {
    // The machine's own warnings first (`engine::machine::Machine::warnings`); a machine
    // that does not validate is refused, with the reason, by the command itself.
    if let Ok(m) = crate::engine::machine::validate(cfg) {
        for w in &m.warnings {
            output::eprint(&format!("routemu: warning: {w}\n"));
        }
    }
    if let Ok(parts) = crate::experiments::experiment::partitions_of(cfg) {
        let threads = parts.saturating_mul(concurrent.max(1));
        if let Some(w) = crate::engine::parallel::oversubscription_warning(threads) {
            output::eprint(&format!("routemu: warning: {w}\n"));
        }
    }
}

/// Runs the command line; returns the process exit status.
pub fn main_with(cli: Cli) -> i32 {
    let result = run_command(cli);
    exit_status(result)
}

/// Runs the command of `cli`: its exit status, or the error that ended it.
fn run_command(cli: Cli) -> crate::foundation::error::Result<i32> {
    interrupt::install();
    crate::foundation::limits::set_force(cli.force);
    if matches!(
        cli.command,
        Command::Run(_)
            | Command::Compare(_)
            | Command::Sweep(_)
            | Command::Saturation(_)
            | Command::Replay(_)
    ) {
        interrupt::keep_results();
    }
    let typed = typed_flags(&cli.command);
    let result = match cli.command {
        Command::Run(a) => run::run(&a),
        Command::Predict(a) => predict::predict(&a),
        Command::Compare(a) => compare::compare(&a),
        Command::Sweep(a) => sweep::sweep(&a),
        Command::Plot(a) => plot::plot(&a),
        Command::Saturation(a) => saturation::saturation(&a),
        Command::Replay(a) => replay::replay(&a),
        Command::Check { file, set } => check::check(&file, &set),
        Command::Bench(a) => bench::bench(&a),
    };
    result.map_err(|e| typed.name(e))
}

/// The flags `command` was typed with, by the configuration path each sets.
fn typed_flags(command: &Command) -> typed::Typed {
    let mut t = typed::Typed::default();
    match command {
        Command::Run(a) => t = typed::Typed::of_experiment(&a.exp),
        Command::Predict(a) | Command::Compare(a) => t = typed::Typed::of_experiment(&a.exp),
        Command::Saturation(a) => t = typed::Typed::of_experiment(&a.exp),
        Command::Sweep(a) => {
            t = typed::Typed::of_experiment(&a.exp);
            t.add_overrides("--param", &a.params);
        }
        Command::Replay(a) => {
            t.add_overrides("--set", &a.set);
            if let Some(n) = a.threads {
                t.add("experiment.threads", format!("--threads {n}"));
            }
        }
        Command::Check { set, .. } => t.add_overrides("--set", set),
        Command::Plot(_) | Command::Bench(_) => {}
    }
    t
}

/// The exit status of a command that ended with `result`, its error (if any) told on
/// standard error.
fn exit_status(result: crate::foundation::error::Result<i32>) -> i32 {
    let nothing = matches!(result, Err(crate::foundation::error::Error::Interrupted));
    let code = match result {
        Ok(code) => code,
        Err(crate::foundation::error::Error::Interrupted) => 1,
        // The reader of our output went away (`| head`): nothing to say, and nobody to
        // say it to on standard output.
        Err(e) if output::is_broken_stdout(&e) => 1,
        Err(e @ crate::foundation::error::Error::Deadlock(_)) => {
            output::eprint(&format!("routemu: {e}\n"));
            EXIT_DEADLOCK
        }
        Err(e) => {
            output::eprint(&format!("routemu: {e}\n"));
            1
        }
    };
    match crate::engine::interrupt::signal() {
        Some(sig) => {
            output::eprint(&format!(
                "routemu: interrupted by {}; {}\n",
                interrupt::name(sig),
                if nothing {
                    "nothing written"
                } else {
                    "results are partial"
                }
            ));
            interrupt::exit_status(sig)
        }
        None => code,
    }
}
