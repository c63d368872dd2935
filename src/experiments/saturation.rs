//! Saturation search: the saturation throughput of a machine — the accepted throughput at
//! the largest offered load it sustains — by a documented criterion, with a Student-t 95%
//! confidence interval over independent replications, and the verdict whether that interval
//! is narrow enough to rank machines by (docs/saturation.md).
//!
//! Owns: the per-replication search (bracket, then bisect on offered load), each probe
//! (one replication at one offered load) with its verdict, the interval over
//! replications and the rankability verdict.
//!
//! Not here: the criteria and the verdict on a probe — backlog growth with a one-sided
//! t-test (the default), accepted below offered, mean latency against zero load, and
//! what every criterion checks — which `routemu run` and `sweep` share
//! (`experiments::verdict`; [`Criterion`] and [`ProbeStop`] are re-exported here); running a replication (`experiments::experiment::run_replication`, whose simulation
//! samples the source backlog at every check point of the window,
//! `Simulation::backlog_samples`), the command line and its JSON (`cli::saturation`),
//! grids of machines (`experiments::sweep`, which can call [`search`] per point).
//!
//! Replication r of the search probes every load with the random streams of replication
//! r, so (a) its verdicts at neighbouring loads see the same message sequence (common
//! random numbers: the bisection is not thrown around by noise between probes) and (b) the
//! result does not depend on `experiment.jobs` or `experiment.threads`.

use crate::config::{ArrivalProcess, Duplex, HwConfig, Measure};
use crate::engine::machine::validate;
use crate::engine::network::Network;
use crate::engine::run::run_replication;
use crate::engine::sim::{Stop, CHECK_EVERY};
use crate::experiments::verdict::{judge, Measured, Rule};
pub use crate::experiments::verdict::{Criterion, ProbeStop};
use crate::foundation::ci::mean_ci;
use crate::foundation::error::{Error, Result};
use crate::foundation::types::{Cycle, PortId};
use crate::switching::{with_mode, WithMode};
use serde::{Deserialize, Serialize};
use std::fmt;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Mutex;
use std::time::Instant;

/// A load or a throughput in flits per node per cycle — the unit of a run report's
/// `throughput.offered` and `.accepted` — kept apart from `workload.rate`, which counts
/// messages per node per cycle.
#[derive(Clone, Copy, Debug, Default, PartialEq, PartialOrd, Serialize, Deserialize)]
#[serde(transparent)]
pub struct FlitLoad(pub f64);

impl FlitLoad {
    /// The message rate (messages per node per cycle) that offers this load with messages
    /// of `mean_flits` flits on average.
    pub fn to_rate(self, mean_flits: f64) -> f64 {
        self.0 / mean_flits
    }
}

impl fmt::Display for FlitLoad {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:.4}", self.0)
    }
}

/// How the search runs. Plain data: it is written into the JSON beside the result.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SaturationOptions {
    /// What makes a load sustained.
    pub criterion: Criterion,
    /// The bisection stops when the bracket [largest sustained, smallest unsustained] is
    /// narrower than this fraction of its upper end.
    pub tolerance: f64,
    /// Upper end of the first bracket, flits per node per cycle. None: the machine's
    /// uniform-traffic capacity bound (`throughput.capacity` of a run report: the
    /// bisection bound of tori, meshes and hypercubes, times the link width, halved on
    /// half-duplex links); at most one message per node per cycle under a Bernoulli
    /// process. When that load is sustained
    /// the bracket doubles (at most [`MAX_EXPANSIONS`] times).
    pub upper: Option<FlitLoad>,
    /// Independent searches, one per replication (at least 2 for an interval).
    pub replications: u32,
    /// The result is rankable when the 95% half-width is at most this fraction of the
    /// throughput.
    pub max_rel_ci: f64,
    /// The smallest share of the offered load that counts as not sustained: backlog growth
    /// (criterion backlog), offered minus accepted (criterion accepted), refused messages
    /// (every criterion).
    pub margin: f64,
    /// Criterion latency: the load of the probe that measures the zero-load latency. None:
    /// 1% of the first bracket's upper end.
    pub zero_load: Option<FlitLoad>,
}

impl Default for SaturationOptions {
    fn default() -> Self {
        SaturationOptions {
            criterion: Criterion::Backlog,
            tolerance: 0.01,
            upper: None,
            replications: 5,
            max_rel_ci: 0.05,
            margin: 0.01,
            zero_load: None,
        }
    }
}

/// Most times the bracket doubles when its upper end is sustained.
pub const MAX_EXPANSIONS: u32 = 3;

/// Most probes of one replication's search (a guard; a search from the capacity bound to
/// a 1% bracket takes about ten).
pub const MAX_PROBES: usize = 60;

/// Smallest window, in cycles, the search accepts: the backlog test needs at least
/// three increments between check points.
pub const MIN_WINDOW: Cycle = 4 * CHECK_EVERY;

/// Windows shorter than this (ten increments of the backlog) give the backlog test
/// little power — a probe a few percent past saturation can pass as noise — and the
/// search warns.
pub const ADVISED_WINDOW: Cycle = 11 * CHECK_EVERY;

/// One replication run at one offered load and the criterion's verdict.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Probe {
    /// The load asked for: `workload.rate` × mean message length.
    pub load: FlitLoad,
    /// Flits created in the window per node per cycle.
    pub offered: FlitLoad,
    /// Flits absorbed in the window per node per cycle.
    pub accepted: FlitLoad,
    /// Mean latency of the measured messages delivered, in cycles, in the definition
    /// `experiment.latency` asks for (None: none delivered).
    pub latency: Option<f64>,
    /// Growth of the source backlog over the window, flits per node per cycle (least
    /// squares over the check points would be biased by their autocorrelation: this is
    /// the mean of the increments between check points). None: fewer than two samples.
    pub backlog_slope: Option<FlitLoad>,
    /// Student's t of the backlog increments' mean (None: fewer than two increments, or
    /// no variation).
    pub backlog_t: Option<f64>,
    /// How the replication ended.
    pub stop: ProbeStop,
    /// The criterion's verdict.
    pub sustained: bool,
    /// Why, in words.
    pub reason: String,
    /// Cycles simulated.
    pub cycles: Cycle,
}

/// One replication's search.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ReplicationSearch {
    /// The replication (its random streams).
    pub replication: u32,
    /// Accepted throughput at the largest sustained load: this replication's saturation
    /// throughput.
    pub throughput: FlitLoad,
    /// The largest sustained load probed.
    pub sustained: FlitLoad,
    /// The smallest unsustained load probed (None: every load up to the last expansion
    /// was sustained; `throughput` is then only a lower bound).
    pub unsustained: Option<FlitLoad>,
    /// Criterion latency: the zero-load latency measured, cycles.
    pub zero_load_latency: Option<f64>,
    /// Every probe, in the order run (the zero-load probe first).
    pub probes: Vec<Probe>,
}

/// The result of a search: what `routemu saturation --json` writes under `saturation`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Saturation {
    /// Mean over replications of their saturation throughputs, flits per node per cycle.
    pub throughput: FlitLoad,
    /// Half-width of its Student-t 95% confidence interval (None: one replication).
    pub ci95: Option<FlitLoad>,
    /// The criterion, as on the command line (`backlog`, `accepted`, `latency:F`).
    pub criterion: Criterion,
    /// `ci95` / `throughput` (None: no interval).
    pub relative_ci95: Option<f64>,
    /// Whether the interval is narrow enough to rank machines by (see `reason`).
    pub rankable: bool,
    /// Why not rankable (None when rankable).
    pub reason: Option<String>,
    /// Each replication's saturation throughput, in replication order.
    pub per_replication: Vec<FlitLoad>,
}

/// Everything a search found.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SaturationResult {
    /// The saturation throughput and its interval.
    pub saturation: Saturation,
    /// The options the search ran with.
    pub options: SaturationOptions,
    /// Upper end of the first bracket, flits per node per cycle.
    pub upper: FlitLoad,
    /// Where `upper` comes from.
    pub upper_source: String,
    /// Mean message length, flits (load = rate × this).
    pub mean_length: f64,
    /// Every replication's search.
    pub replications: Vec<ReplicationSearch>,
    /// What the reader should know (deadlocks met, an unbracketed search, a zero-load
    /// probe not small against the result).
    pub warnings: Vec<String>,
    /// Probes run, over every replication.
    pub probes: usize,
    /// Cycles simulated, over every probe.
    pub cycles: Cycle,
    /// Wall-clock time of the search.
    pub wall_seconds: f64,
}

/// Where a search is, for progress bars.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Progress {
    /// The replication whose search reports.
    pub replication: u32,
    /// Probes of that replication finished so far.
    pub probe: usize,
    /// The load being probed.
    pub load: FlitLoad,
    /// The probe's current cycle.
    pub cycle: Cycle,
}

/// Two saturation results side by side: their difference, its interval, and whether one
/// machine sustains significantly more than the other.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Comparison {
    /// First throughput minus second, flits per node per cycle.
    pub difference: f64,
    /// Half-width of the difference's 95% interval (None: fewer than two replications).
    pub ci95: Option<f64>,
    /// Whether replication r of one was set against replication r of the other (same
    /// number of replications: a paired t-test, which cancels what the machines' common
    /// random streams have in common); otherwise Welch's two-sample test.
    pub paired: bool,
    /// Which machine sustains more, if the interval says so.
    pub verdict: Ranking,
}

/// The verdict of a [`Comparison`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Ranking {
    /// The first sustains significantly more (the difference's interval is above 0).
    FirstHigher,
    /// The second sustains significantly more.
    SecondHigher,
    /// Not distinguishable at 95% (or no interval).
    Indistinguishable,
}

/// Compares two searches' results by the same criterion (an error otherwise: a backlog
/// saturation and a latency-bound one measure different things).
pub fn compare(a: &Saturation, b: &Saturation) -> Result<Comparison> {
    if a.criterion != b.criterion {
        return Err(Error::Arg(format!(
            "saturation results by different criteria ({} and {}) do not rank",
            a.criterion, b.criterion
        )));
    }
    let xa: Vec<f64> = a.per_replication.iter().map(|x| x.0).collect();
    let xb: Vec<f64> = b.per_replication.iter().map(|x| x.0).collect();
    let paired = xa.len() == xb.len();
    let (difference, ci95) = if paired {
        let d: Vec<f64> = xa.iter().zip(&xb).map(|(p, q)| p - q).collect();
        mean_ci(&d)
    } else {
        let var = |x: &[f64]| {
            let m = x.iter().sum::<f64>() / x.len() as f64;
            x.iter().map(|v| (v - m).powi(2)).sum::<f64>() / (x.len() as f64 - 1.0)
        };
        let (ma, mb) = (mean_ci(&xa).0, mean_ci(&xb).0);
        let ci = (xa.len() >= 2 && xb.len() >= 2).then(|| {
            let (va, vb) = (var(&xa) / xa.len() as f64, var(&xb) / xb.len() as f64);
            // Welch–Satterthwaite degrees of freedom, rounded down (conservative).
            let df = (va + vb).powi(2)
                / (va * va / (xa.len() as f64 - 1.0) + vb * vb / (xb.len() as f64 - 1.0));
            let df = if df.is_finite() {
                df.floor().max(1.0)
            } else {
                1.0
            };
            crate::foundation::ci::t975(df as usize) * (va + vb).sqrt()
        });
        (ma - mb, ci)
    };
    let verdict = match ci95 {
        Some(h) if difference - h > 0.0 => Ranking::FirstHigher,
        Some(h) if difference + h < 0.0 => Ranking::SecondHigher,
        _ => Ranking::Indistinguishable,
    };
    Ok(Comparison {
        difference,
        ci95,
        paired,
        verdict,
    })
}

/// What a search needs to know of the machine, computed once.
#[derive(Clone, Debug)]
struct Plan {
    /// Flits one creation offers (a request and its reply under request/reply
    /// traffic): load = rate × this.
    mean_length: f64,
    /// Mean flits of a message in the network (requests and replies alike): what turns
    /// the backlog, counted in messages, into flits.
    message_flits: f64,
    endpoints: f64,
    upper: FlitLoad,
    upper_source: String,
    /// Hard ceiling of the load (Bernoulli: one message per node per cycle).
    ceiling: f64,
    zero_load: FlitLoad,
    /// The measurement window, cycles.
    window: Cycle,
}

/// Checks the machine and the options and works out the bracket.
fn plan(cfg: &HwConfig, opts: &SaturationOptions) -> Result<Plan> {
    let machine = validate(cfg)?;
    let arg = |m: String| Err(Error::Arg(m));
    if opts.replications == 0 || opts.replications > crate::foundation::limits::MAX_REPLICATIONS {
        return arg(format!(
            "saturation: {} replications (--replications): run 1 to {}",
            opts.replications,
            crate::foundation::limits::MAX_REPLICATIONS
        ));
    }
    // The searches held at once (experiment.jobs) against the memory limit, before any.
    let mut at_once = cfg.clone();
    at_once.experiment.replications = opts.replications;
    crate::experiments::memory::enforce_memory(&at_once, &machine)?;
    if !(opts.tolerance > 0.0 && opts.tolerance <= 0.5) {
        return arg(format!(
            "saturation tolerance {}: a fraction in (0, 0.5]",
            opts.tolerance
        ));
    }
    if !(opts.max_rel_ci > 0.0 && opts.max_rel_ci.is_finite()) {
        return arg(format!(
            "saturation max relative CI {}: a positive fraction",
            crate::foundation::limits::show(opts.max_rel_ci)
        ));
    }
    if !(0.0..1.0).contains(&opts.margin) {
        return arg(format!(
            "saturation margin {}: a fraction in [0, 1)",
            opts.margin
        ));
    }
    if let Criterion::Latency(f) = opts.criterion {
        if !(f > 1.0 && f.is_finite()) {
            return arg(format!(
                "criterion latency:{}: the factor must exceed 1",
                crate::foundation::limits::show(f)
            ));
        }
    }
    for (what, v) in [("upper bound", opts.upper), ("zero load", opts.zero_load)] {
        if let Some(v) = v {
            if !(v.0 > 0.0 && v.0.is_finite()) {
                return arg(format!(
                    "saturation {what} {}: a positive load in flits per node per cycle",
                    crate::foundation::limits::show(v.0)
                ));
            }
        }
    }
    match cfg.workload.process {
        ArrivalProcess::Saturated { .. } => {
            return Err(Error::config(
                "workload.process = Saturated: saturated sources ignore the rate, so there is \
                 no load to search on (their accepted throughput is `routemu run`'s); use \
                 --set workload.process=Poisson (or Bernoulli)",
            ))
        }
        ArrivalProcess::Poisson | ArrivalProcess::Bernoulli | ArrivalProcess::OnOff { .. } => {}
    }
    let window = match cfg.experiment.measure {
        Measure::Cycles(c) if c < MIN_WINDOW => {
            return Err(Error::config(format!(
                "a measurement window of {c} cycles: the saturation search samples the \
                 backlog every {CHECK_EVERY} cycles and needs at least {MIN_WINDOW} \
                 (--cycles)"
            )))
        }
        Measure::Cycles(c) => c,
        Measure::Messages(_) => {
            return Err(Error::config(
                "a measurement window of messages: the saturation search compares loads \
                 over windows of the same length in cycles; use --cycles",
            ))
        }
    };
    let mean_length = machine.workload.flits_per_creation();
    let w = cfg.links.width as f64;
    // No router takes more than (ports + DMA engines) × width flits in a cycle, so no
    // node can sustain more; a Bernoulli process creates at most one message per cycle.
    // The ceiling also keeps a mistyped --upper from creating messages by the billion.
    let crossbar = (machine.topology.degree() as f64 + machine.dma as f64) * w;
    let on_off = match cfg.workload.process {
        ArrivalProcess::OnOff {
            burst_mean,
            idle_mean,
        } => mean_length * burst_mean / (burst_mean + idle_mean),
        _ => f64::INFINITY,
    };
    let (ceiling, ceiling_why) = match cfg.workload.process {
        ArrivalProcess::Bernoulli if mean_length < crossbar => {
            (mean_length, "one Bernoulli message per node per cycle")
        }
        // An on/off source creates at most one message per on cycle.
        ArrivalProcess::OnOff { .. } if on_off < crossbar => (
            on_off,
            "one on/off message per on cycle, on burst_mean / (burst_mean + idle_mean) of them",
        ),
        _ => (crossbar, "(ports + DMA engines) × link width"),
    };
    let (upper, upper_source) = match opts.upper {
        Some(u) if u.0 > ceiling => {
            return arg(format!(
                "saturation upper bound {u}: above {ceiling} flits/node/cycle, {ceiling_why}"
            ))
        }
        Some(u) => (u.0, "--upper".to_string()),
        None => {
            let half = cfg.links.duplex == Duplex::Half;
            let cap = crate::experiments::experiment::capacity(cfg, &machine.topology);
            let per_link = machine.topology.capacity_of_links(cfg.links.width, half);
            (
                cap,
                format!(
                    "capacity bound {cap:.4} (throughput.capacity: {} per 1-flit link, × width {}{}{})",
                    machine.topology.capacity(),
                    cfg.links.width,
                    if half && machine.topology.peer_port(PortId(0)).is_some() {
                        ", halved on half-duplex links"
                    } else {
                        ""
                    },
                    if cap != per_link {
                        format!(", × {} lanes", cfg.router.vcs)
                    } else {
                        String::new()
                    }
                ),
            )
        }
    };
    let (upper, upper_source) = if upper > ceiling {
        (ceiling, format!("{upper_source}, capped at {ceiling_why}"))
    } else {
        (upper, upper_source)
    };
    let zero_load = opts.zero_load.unwrap_or(FlitLoad(0.01 * upper));
    if zero_load.0 >= upper {
        return arg(format!(
            "zero load {zero_load}: must be below the upper bound {upper:.4}"
        ));
    }
    Ok(Plan {
        mean_length,
        message_flits: machine.workload.mean_message_flits(),
        endpoints: machine.topology.endpoints().len() as f64,
        upper: FlitLoad(upper),
        upper_source,
        ceiling,
        zero_load,
        window,
    })
}

/// Finds the saturation throughput of `cfg` (its workload's pattern, lengths and
/// process, every load set through `workload.rate`; `experiment.warmup` and the window
/// `experiment.measure` per probe, which must be in cycles) by `opts`. Replication
/// searches run `experiment.jobs` at a time, each probe on `experiment.threads`
/// partitions; neither changes the result. `progress` hears from every probe now and then.
pub fn search(
    cfg: &HwConfig,
    opts: &SaturationOptions,
    progress: &mut (dyn FnMut(Progress) + Send),
) -> Result<SaturationResult> {
    let plan = plan(cfg, opts)?;
    struct Go<'a, 'p> {
        cfg: &'a HwConfig,
        opts: &'a SaturationOptions,
        plan: &'a Plan,
        progress: &'a mut (dyn FnMut(Progress) + Send + 'p),
    }
    impl WithMode for Go<'_, '_> {
        type Output = Result<SaturationResult>;
        fn run<N: Network + Send>(self) -> Self::Output {
            search_mode::<N>(self.cfg, self.opts, self.plan, self.progress)
        }
    }
    with_mode(
        &cfg.switching,
        Go {
            cfg,
            opts,
            plan: &plan,
            progress,
        },
    )
}

/// Where a worker leaves a replication's search.
type Slot = Mutex<Option<Result<ReplicationSearch>>>;

fn search_mode<N: Network + Send>(
    cfg: &HwConfig,
    opts: &SaturationOptions,
    plan: &Plan,
    progress: &mut (dyn FnMut(Progress) + Send),
) -> Result<SaturationResult> {
    let started = Instant::now();
    let reps = opts.replications;
    let jobs = cfg.experiment.jobs.clamp(1, reps) as usize;
    // Workers take replications in order; results go back in replication order.
    let next = AtomicU32::new(0);
    let slots: Vec<Slot> = (0..reps).map(|_| Mutex::new(None)).collect();
    let progress = Mutex::new(progress);
    let worker = || loop {
        let rep = next.fetch_add(1, Ordering::Relaxed);
        if rep >= reps {
            break;
        }
        let r = search_replication::<N>(cfg, opts, plan, rep, &mut |p| {
            if let Ok(mut f) = progress.try_lock() {
                (*f)(p);
            }
        });
        *slots[rep as usize]
            .lock()
            .unwrap_or_else(|e| e.into_inner()) = Some(r);
    };
    crate::engine::parallel::on_workers(jobs, worker);
    let mut done = Vec::with_capacity(reps as usize);
    for slot in slots {
        let r = slot
            .into_inner()
            .unwrap_or_else(|e| e.into_inner())
            .expect("every replication's search ran");
        done.push(r?);
    }
    Ok(summarise(opts, plan, done, started.elapsed().as_secs_f64()))
}

/// The engine's saturation guard for a probe at `load` (its
/// `experiment.saturation_backlog`, messages per node): the configuration's own guard
/// plus twice the backlog that growth at the margin (`margin` × load) accumulates over the
/// probe's warm-up and window. Below it the criterion decides; a probe whose backlog
/// passes it is unsustained by the backlog and accepted criteria alike (it grew by more
/// than twice the margin allows) and, waiting behind that many messages, by any sensible
/// latency bound — so the engine stops it there rather than simulate and drain a
/// network far past saturation, which is what makes the first, overloaded probes cheap.
fn probe_backlog_limit(cfg: &HwConfig, margin: f64, mean_length: f64, load: FlitLoad) -> f64 {
    let window = match cfg.experiment.measure {
        Measure::Cycles(c) => c,
        Measure::Messages(_) => 0,
    };
    let span = (cfg.experiment.warmup + window) as f64;
    cfg.experiment.saturation_backlog + 2.0 * margin * load.0 * span / mean_length
}

/// Runs replication `rep` of `cfg` at `load` and judges it.
fn run_probe<N: Network + Send>(
    cfg: &HwConfig,
    opts: &SaturationOptions,
    plan: &Plan,
    rep: u32,
    load: FlitLoad,
    zero: Option<f64>,
    progress: &mut dyn FnMut(Cycle),
) -> Result<Probe> {
    let mut c = cfg.clone();
    c.workload.rate = load.to_rate(plan.mean_length);
    c.experiment.saturation_backlog =
        probe_backlog_limit(cfg, opts.margin, plan.message_flits, load);
    let (r, _end) = run_replication::<N>(&c, rep, progress)?;
    // A probe cut short says nothing about the load: the search has no result.
    if r.stop == Stop::Interrupted {
        return Err(crate::foundation::error::Error::Interrupted);
    }
    // The one verdict `routemu run` flags its reports by, with the search's criterion
    // and margin (experiments::verdict).
    let m = Measured::of(&c, &r, plan.message_flits, plan.endpoints);
    let rule = Rule {
        criterion: opts.criterion,
        margin: opts.margin,
        latency_threshold: cfg.experiment.latency_threshold,
    };
    let v = judge(&rule, &m, zero);
    Ok(Probe {
        load,
        offered: FlitLoad(r.offered),
        accepted: FlitLoad(r.accepted),
        latency: m.latency,
        backlog_slope: m.slope.map(FlitLoad),
        backlog_t: m.growth.and_then(|g| g.t),
        stop: m.stop,
        sustained: v.sustained,
        reason: v.reason,
        cycles: r.cycles,
    })
}

/// One replication's search: the zero-load probe when the criterion needs it, then the
/// bracket — the upper end probed, doubled while sustained — then bisection until the
/// bracket is narrower than `tolerance` × its upper end.
fn search_replication<N: Network + Send>(
    cfg: &HwConfig,
    opts: &SaturationOptions,
    plan: &Plan,
    rep: u32,
    progress: &mut dyn FnMut(Progress),
) -> Result<ReplicationSearch> {
    let mut probes: Vec<Probe> = Vec::new();
    let mut probe = |probes: &mut Vec<Probe>, load: FlitLoad, zero: Option<f64>| {
        let done = probes.len();
        let p = run_probe::<N>(cfg, opts, plan, rep, load, zero, &mut |cycle| {
            progress(Progress {
                replication: rep,
                probe: done,
                load,
                cycle,
            })
        })?;
        probes.push(p.clone());
        Ok::<Probe, Error>(p)
    };
    let zero = match opts.criterion {
        Criterion::Latency(_) => {
            let p = probe(&mut probes, plan.zero_load, None)?;
            if p.stop != ProbeStop::Drained || p.latency.is_none() {
                return Err(Error::Arg(format!(
                    "replication {rep}: the zero-load probe at {} flits/node/cycle did not \
                     drain ({:?}: {}); give a smaller --zero-load",
                    plan.zero_load, p.stop, p.reason
                )));
            }
            // It is judged by nothing: it sets the bound the others are judged by.
            let first = &mut probes[0];
            first.sustained = true;
            first.reason = format!(
                "zero-load probe: mean latency {:.2} cycles",
                p.latency.unwrap_or_default()
            );
            p.latency
        }
        _ => None,
    };
    // The largest sustained probe (its index) and the smallest unsustained load.
    let mut lo: Option<usize> = None;
    let mut hi = plan.upper;
    let mut unbracketed = false;
    let mut expansions = 0;
    loop {
        let p = probe(&mut probes, hi, zero)?;
        if !p.sustained {
            break;
        }
        lo = Some(probes.len() - 1);
        if expansions == MAX_EXPANSIONS || hi.0 >= plan.ceiling {
            unbracketed = true;
            break;
        }
        expansions += 1;
        hi = FlitLoad((2.0 * hi.0).min(plan.ceiling));
    }
    let lo_load = |lo: Option<usize>, probes: &[Probe]| lo.map_or(0.0, |i| probes[i].load.0);
    while !unbracketed && hi.0 - lo_load(lo, &probes) > opts.tolerance * hi.0 {
        if probes.len() >= MAX_PROBES {
            break;
        }
        // Nothing sustained this far down: the machine carries (next to) nothing.
        if lo.is_none() && hi.0 < plan.upper.0 * 1e-3 {
            break;
        }
        let mid = FlitLoad(0.5 * (lo_load(lo, &probes) + hi.0));
        let p = probe(&mut probes, mid, zero)?;
        if p.sustained {
            lo = Some(probes.len() - 1);
        } else {
            hi = mid;
        }
    }
    let Some(lo) = lo else {
        return Err(Error::Arg(format!(
            "replication {rep}: no load sustained down to {hi} flits/node/cycle by the {} \
             criterion (first probe: {})",
            opts.criterion,
            probes
                .iter()
                .find(|p| p.load == plan.upper)
                .map_or(String::new(), |p| p.reason.clone())
        )));
    };
    Ok(ReplicationSearch {
        replication: rep,
        throughput: probes[lo].accepted,
        sustained: probes[lo].load,
        unsustained: (!unbracketed).then_some(hi),
        zero_load_latency: zero,
        probes,
    })
}

/// The interval over replications and the rankability verdict.
fn summarise(
    opts: &SaturationOptions,
    plan: &Plan,
    reps: Vec<ReplicationSearch>,
    wall: f64,
) -> SaturationResult {
    let per: Vec<f64> = reps.iter().map(|r| r.throughput.0).collect();
    let (mean, ci) = mean_ci(&per);
    let rel = ci.map(|c| c / mean);
    let mut warnings = Vec::new();
    for r in &reps {
        if r.unsustained.is_none() {
            warnings.push(format!(
                "replication {}: every load up to {} was sustained: the saturation is above \
                 the search's reach (give a larger --upper); its throughput is a lower bound",
                r.replication, r.sustained
            ));
        }
        if let Some(p) = r.probes.iter().find(|p| p.stop == ProbeStop::Deadlock) {
            warnings.push(format!(
                "replication {}: deadlock at {} flits/node/cycle (counted as not sustained)",
                r.replication, p.load
            ));
        }
    }
    if opts.criterion == Criterion::Backlog && plan.window < ADVISED_WINDOW {
        warnings.push(format!(
            "a window of {} cycles holds fewer than ten backlog increments (one per {CHECK_EVERY} \
             cycles): the growth test has little power near saturation; use --cycles ≥ {ADVISED_WINDOW}",
            plan.window
        ));
    }
    if matches!(opts.criterion, Criterion::Latency(_)) && plan.zero_load.0 > 0.1 * mean {
        warnings.push(format!(
            "the zero-load probe ({} flits/node/cycle) is more than a tenth of the result: \
             its latency is not the zero-load one; give a smaller --zero-load",
            plan.zero_load
        ));
    }
    let reason = if reps.iter().any(|r| r.unsustained.is_none()) {
        Some("a replication never found an unsustained load".to_string())
    } else {
        match rel {
            None => Some(format!(
                "{} replication(s): no confidence interval (use at least 2)",
                reps.len()
            )),
            Some(x) if x.is_nan() || x > opts.max_rel_ci => Some(format!(
                "the 95% interval is ±{:.1}% of the throughput, over the {:.1}% allowed \
                 (more replications or a longer window narrow it)",
                100.0 * x,
                100.0 * opts.max_rel_ci
            )),
            Some(_) => None,
        }
    };
    SaturationResult {
        saturation: Saturation {
            throughput: FlitLoad(mean),
            ci95: ci.map(FlitLoad),
            criterion: opts.criterion,
            relative_ci95: rel,
            rankable: reason.is_none(),
            reason,
            per_replication: per.into_iter().map(FlitLoad).collect(),
        },
        options: opts.clone(),
        upper: plan.upper,
        upper_source: plan.upper_source.clone(),
        mean_length: plan.mean_length,
        probes: reps.iter().map(|r| r.probes.len()).sum(),
        cycles: reps.iter().flat_map(|r| &r.probes).map(|p| p.cycles).sum(),
        replications: reps,
        warnings,
        wall_seconds: wall,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::foundation::ci::{backlog_growth, t95};

    #[test]
    fn a_flat_or_fluctuating_backlog_does_not_grow() {
        let flat: Vec<(Cycle, u64)> = (0..10).map(|i| (1024 * i, 7)).collect();
        let g = backlog_growth(&flat).unwrap();
        assert_eq!((g.per_cycle, g.t, g.increments), (0.0, None, 9));
        assert!(!g.significant());
        // A stationary backlog that swings up and down: the increments telescope.
        let swing: Vec<(Cycle, u64)> = (0..21)
            .map(|i| (1024 * i, [10, 40, 5, 30, 12][i as usize % 5]))
            .collect();
        let g = backlog_growth(&swing).unwrap();
        assert!((g.per_cycle - (10.0 - 10.0) / (20.0 * 1024.0)).abs() < 1e-12);
        assert!(!g.significant());
        assert!(backlog_growth(&flat[..1]).is_none());
    }

    #[test]
    fn a_noisy_ramp_grows_significantly() {
        // 5 messages per check point on average, ±3 of noise.
        let ramp: Vec<(Cycle, u64)> = (0..20)
            .map(|i| (1024 * i, 100 + 5 * i + [0, 3, 1, 2][i as usize % 4]))
            .collect();
        let g = backlog_growth(&ramp).unwrap();
        assert!((g.per_cycle * 1024.0 - (195.0 + 2.0 - 100.0) / 19.0).abs() < 1e-9);
        assert!(g.t.unwrap() > t95(18));
        assert!(g.significant());
    }

    fn torus() -> HwConfig {
        crate::config::load::parse_hw(
            "(topology: Torus(k: 4, n: 2), switching: Wormhole(routing: DimensionOrder), \
             experiment: (warmup: 1000, measure: Cycles(8192)))",
            "test",
        )
        .unwrap()
    }

    #[test]
    fn the_first_bracket_is_the_capacity_bound_times_the_link_width() {
        let opts = SaturationOptions::default();
        let mut cfg = torus();
        let p = plan(&cfg, &opts).unwrap();
        assert_eq!(p.upper, FlitLoad(2.0)); // 8/k for k = 4
        assert_eq!(p.zero_load, FlitLoad(0.02));
        cfg.links.width = 2;
        assert_eq!(plan(&cfg, &opts).unwrap().upper, FlitLoad(4.0));
        // Half-duplex links (circuit switching) carry one direction at a time: half the
        // hypercube's bisection bound of 2.
        let mut circuit = crate::config::load::parse_hw(
            "(topology: Hypercube(dim: 4), switching: Circuit(strategy: Hold), \
             experiment: (measure: Cycles(8192)))",
            "test",
        )
        .unwrap();
        assert_eq!(plan(&circuit, &opts).unwrap().upper, FlitLoad(2.0));
        circuit.links.duplex = Duplex::Half;
        assert_eq!(plan(&circuit, &opts).unwrap().upper, FlitLoad(1.0));
        // Bernoulli: one 12-flit message per node per cycle at most.
        cfg.links.width = 32;
        cfg.workload.process = ArrivalProcess::Bernoulli;
        assert_eq!(plan(&cfg, &opts).unwrap().upper, FlitLoad(12.0));
        let given = |x| SaturationOptions {
            upper: Some(FlitLoad(x)),
            ..opts.clone()
        };
        assert_eq!(plan(&cfg, &given(0.7)).unwrap().upper, FlitLoad(0.7));
        // A load no router could take in a cycle is refused: 4 ports and 2 DMA engines.
        cfg.links.width = 1;
        cfg.workload.process = ArrivalProcess::Poisson;
        assert_eq!(plan(&cfg, &given(6.0)).unwrap().upper, FlitLoad(6.0));
        let e = plan(&cfg, &given(6.5)).unwrap_err().to_string();
        assert!(e.contains("(ports + DMA engines)"), "{e}");
    }

    #[test]
    fn searches_that_make_no_sense_are_refused() {
        let opts = SaturationOptions::default();
        let mut cfg = torus();
        cfg.workload.process = ArrivalProcess::Saturated { depth: 4 };
        let e = plan(&cfg, &opts).unwrap_err().to_string();
        assert!(e.contains("Saturated"), "{e}");
        let mut cfg = torus();
        cfg.experiment.measure = Measure::Messages(1000);
        assert!(plan(&cfg, &opts)
            .unwrap_err()
            .to_string()
            .contains("--cycles"));
        cfg.experiment.measure = Measure::Cycles(MIN_WINDOW - 1);
        assert!(plan(&cfg, &opts)
            .unwrap_err()
            .to_string()
            .contains("--cycles"));
        let cfg = torus();
        for bad in [
            SaturationOptions {
                replications: 0,
                ..opts.clone()
            },
            SaturationOptions {
                tolerance: 0.0,
                ..opts.clone()
            },
            SaturationOptions {
                margin: 1.0,
                ..opts.clone()
            },
            SaturationOptions {
                max_rel_ci: f64::NAN,
                ..opts.clone()
            },
            SaturationOptions {
                upper: Some(FlitLoad(-1.0)),
                ..opts.clone()
            },
        ] {
            assert!(plan(&cfg, &bad).is_err(), "{bad:?}");
        }
    }

    fn result(criterion: Criterion, xs: &[f64]) -> Saturation {
        let (m, ci) = mean_ci(xs);
        Saturation {
            throughput: FlitLoad(m),
            ci95: ci.map(FlitLoad),
            criterion,
            relative_ci95: ci.map(|c| c / m),
            rankable: true,
            reason: None,
            per_replication: xs.iter().copied().map(FlitLoad).collect(),
        }
    }

    #[test]
    fn comparisons_pair_replications_and_say_when_they_cannot_tell() {
        // wormhole-torus-dor, 8 VCs against 4, backlog criterion (docs/saturation.md):
        // the means differ by 1%, the pairs consistently.
        let v4 = [0.5276, 0.5313, 0.5319, 0.5351, 0.5277];
        let v8 = [0.5350, 0.5394, 0.5371, 0.5331, 0.5352];
        let c = compare(
            &result(Criterion::Backlog, &v8),
            &result(Criterion::Backlog, &v4),
        )
        .unwrap();
        assert!(c.paired && (c.difference - 0.00524).abs() < 1e-9);
        assert_eq!(c.verdict, Ranking::FirstHigher);
        // The other way round.
        let back = compare(
            &result(Criterion::Backlog, &v4),
            &result(Criterion::Backlog, &v8),
        )
        .unwrap();
        assert_eq!(back.verdict, Ranking::SecondHigher);
        // Unequal counts: Welch's test, here on overlapping samples.
        let welch = compare(
            &result(Criterion::Backlog, &[0.50, 0.52, 0.51]),
            &result(Criterion::Backlog, &[0.51, 0.50, 0.52, 0.515]),
        )
        .unwrap();
        assert!(!welch.paired);
        assert_eq!(welch.verdict, Ranking::Indistinguishable);
        let one = compare(
            &result(Criterion::Backlog, &[0.6]),
            &result(Criterion::Backlog, &[0.5]),
        )
        .unwrap();
        assert_eq!((one.ci95, one.verdict), (None, Ranking::Indistinguishable));
        assert!(compare(
            &result(Criterion::Backlog, &v4),
            &result(Criterion::Latency(3.0), &v8)
        )
        .is_err());
    }

    fn rep(r: u32, throughput: f64, bracketed: bool) -> ReplicationSearch {
        ReplicationSearch {
            replication: r,
            throughput: FlitLoad(throughput),
            sustained: FlitLoad(throughput),
            unsustained: bracketed.then_some(FlitLoad(throughput + 0.01)),
            zero_load_latency: None,
            probes: Vec::new(),
        }
    }

    #[test]
    fn only_a_narrow_interval_ranks() {
        let opts = SaturationOptions::default();
        let plan = plan(&torus(), &opts).unwrap();
        let narrow = summarise(
            &opts,
            &plan,
            vec![rep(0, 0.50, true), rep(1, 0.51, true)],
            0.0,
        );
        // Mean 0.505, half-width 12.706 × 0.005 = 0.0635 (12.6%): too wide for 5%.
        assert!(!narrow.saturation.rankable);
        assert!(narrow.saturation.reason.unwrap().contains("12.6%"));
        let three = summarise(
            &opts,
            &plan,
            vec![rep(0, 0.50, true), rep(1, 0.505, true), rep(2, 0.51, true)],
            0.0,
        );
        let s = &three.saturation;
        assert!((s.throughput.0 - 0.505).abs() < 1e-12);
        assert!((s.ci95.unwrap().0 - 4.303 * 0.005 / 3f64.sqrt()).abs() < 1e-9);
        assert!(s.rankable && s.reason.is_none());
        let one = summarise(&opts, &plan, vec![rep(0, 0.5, true)], 0.0);
        assert!(!one.saturation.rankable && one.saturation.ci95.is_none());
        let open = summarise(
            &opts,
            &plan,
            vec![rep(0, 0.50, true), rep(1, 0.5, false), rep(2, 0.5, true)],
            0.0,
        );
        assert!(!open.saturation.rankable);
        assert!(open.warnings[0].contains("lower bound"));
    }
}
