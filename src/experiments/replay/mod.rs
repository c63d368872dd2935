//! Trace replay: messages read from a trace ([`crate::trace`]) are created at their
//! recorded times (open loop) or, in dependency-driven replay, when their recorded time
//! has come *and* every message they depend on has been delivered plus a gap (Netrace's
//! reference reader waits 8 cycles, its L2 latency). The trace is read no further than
//! the clock, so memory holds only what is in flight or waiting for its parents.
//!
//! A message enters its source's memory in the cycle it is created and then queues for
//! the network like any other; "behind" is how far its injection (head leaving the source)
//! runs after its recorded time.
//!
//! The network may be split into partitions, one thread each (`lockstep`), in one
//! process or over MPI ranks (`engine::distributed`: the same R·T partitions as a run,
//! posts and mail exchanged after every cycle stepped, `exchange`); the replay's
//! bookkeeping (`driver`) is kept, identical, by every partition, so results depend on
//! neither the thread count nor the rank count. At the end, the partitions'
//! measurements are gathered from every rank and reduced in partition order.
//!
//! Not here: the readers (`trace`), the command line (`cli::replay`).

mod driver;
pub mod elastic;
mod exchange;
mod lockstep;
pub mod placement;

use crate::config::HwConfig;
use crate::engine::distributed::{self, wire};
use crate::engine::machine::validate;
use crate::engine::network::{NetMeasures, Network};
use crate::engine::parallel::partitions_for;
use crate::engine::partitioner::{describe, one_process, place, ranges};
use crate::engine::replication::{observe_parts, PartResult, RunEnd};
use crate::engine::sim::Simulation;
use crate::experiments::experiment::{latency_histograms, link_arrays, Extras};
use crate::foundation::error::{Error, Result};
use crate::foundation::types::Cycle;
use crate::stats::msglog::RepLog;
use crate::stats::observe::{self, LinkRow, LinkTotals, RouterRow, SeriesRow};
use crate::switching::{with_mode, WithMode};
use crate::trace::TraceSource;
use driver::Driver;
pub use driver::{RecordedLatency, READ_AHEAD};
pub use placement::{NodeMap, Placement};
use serde::Serialize;

/// When messages are created.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum ReplayMode {
    /// At the recorded times, dependencies ignored.
    #[default]
    Open,
    /// At the recorded times, but not before every parent was delivered plus the gap.
    Deps,
    /// As the application would run on this machine: an MPI trace's ranks are programs
    /// whose compute is kept and whose MPI calls take what the network takes; a message
    /// trace's dependants come their recorded distance after their parents' deliveries.
    Elastic,
}

/// How a trace is replayed.
#[derive(Clone, Debug)]
pub struct ReplayOptions {
    /// Open-loop or dependency-driven.
    pub mode: ReplayMode,
    /// Cycles between a parent's delivery and its child's creation (dependency mode).
    pub gap: Cycle,
    /// Cycles per trace time unit.
    pub time_scale: f64,
    /// Bytes per flit, for traces sized in bytes.
    pub flit_bytes: u64,
    /// Trace endpoint → node.
    pub map: NodeMap,
    /// Stop with [`Error::Deadlock`] when messages are in flight and nothing moved —
    /// no delivery, and no flit where the switching mode reports flit movement — for
    /// this many cycles (modes that do not report movement get the longest message in
    /// flight's flits on top).
    pub stall_cycles: Cycle,
    /// List at most this many ranks in [`ReplaySummary::ranks`] (the latest to finish);
    /// None: all.
    pub max_ranks: Option<u32>,
    /// Elastic replay of an MPI trace: eager limit, compute scale, host overheads.
    pub elastic: elastic::ElasticOptions,
    /// Elastic replay of a message trace: the recording network's latency, which a
    /// dependant's recorded distance is measured from (its parent's recorded time plus
    /// this). None: the trace format's default — `hops:3` for a trace that says its
    /// endpoint count (Netrace: its reference reader's model of the recording CMP, an
    /// estimate), 0 for one that does not (text). Refused in the other modes.
    pub recorded_latency: Option<RecordedLatency>,
}

impl Default for ReplayOptions {
    fn default() -> Self {
        ReplayOptions {
            mode: ReplayMode::Open,
            gap: 8,
            time_scale: 1.0,
            flit_bytes: 8,
            map: NodeMap::Identity,
            stall_cycles: 1_000_000,
            max_ranks: None,
            elastic: elastic::ElasticOptions::default(),
            recorded_latency: None,
        }
    }
}

/// One replayed message.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct ReplayRecord {
    /// Trace id.
    pub id: u64,
    /// Source node.
    pub src: u32,
    /// Destination node.
    pub dst: u32,
    /// Size in the trace's unit.
    pub size: u64,
    /// Flits.
    pub flits: u32,
    /// Recorded time in cycles (scaled).
    pub recorded: Cycle,
    /// Cycle it was created (entered its source's memory).
    pub created: Cycle,
    /// Cycle its head left the source.
    pub injected: Cycle,
    /// Cycle its tail was delivered.
    pub delivered: Cycle,
    /// delivered − created.
    pub latency: Cycle,
    /// Network links its head crossed.
    pub hops: u32,
}

/// What a replay measured.
#[derive(Clone, Debug, Default, Serialize)]
pub struct ReplaySummary {
    /// The mode that ran.
    pub mode: ReplayMode,
    /// Partitions (threads) the network was split into.
    pub partitions: u32,
    /// How it was split (as a run's report says).
    pub partitioning: crate::engine::partitioner::Partitioning,
    /// Messages read from the trace.
    pub messages: u64,
    /// Messages delivered (all of them when the replay completes).
    pub delivered: u64,
    /// Flits delivered.
    pub flits: u64,
    /// Cycle the last message was delivered.
    pub cycles: Cycle,
    /// Latency (creation → delivery): mean and quantiles, cycles.
    pub latency_mean: Option<f64>,
    /// Median.
    pub latency_p50: Option<u64>,
    /// 99th percentile.
    pub latency_p99: Option<u64>,
    /// Largest.
    pub latency_max: Option<u64>,
    /// Mean of (injected − recorded): how far the replay ran behind the trace.
    pub behind_mean: Option<f64>,
    /// Largest (injected − recorded).
    pub behind_max: Option<u64>,
    /// Recorded span of the trace in cycles (last recorded time − first).
    pub recorded_span: Cycle,
    /// Dependency edges in the trace (children and program-order successors), counted
    /// in either mode; 0: `--mode deps` is the same as open loop.
    pub dependencies: u64,
    /// Dependencies dropped because their dependant is not in the part of the trace
    /// replayed (a Netrace `--region`) or comes after the trace's last id; a dependant
    /// missing inside a whole trace is an error.
    pub dangling_dependencies: u64,
    /// Cycle the first message was created (null: none was).
    pub first_created: Option<Cycle>,
    /// Cycles from the first recorded time (the recorded span's origin) to the last
    /// delivery.
    pub replayed_span: Cycle,
    /// `replayed_span / recorded_span` (null when the trace spans no time).
    pub slowdown: Option<f64>,
    /// Mean of (created − recorded): how late messages were created (0 in open loop
    /// unless a source's memory was full; in dependency mode, the waits for parents; 0
    /// for a message elastic replay created before its recorded time).
    pub created_lag_mean: Option<f64>,
    /// 99th percentile of (created − recorded).
    pub created_lag_p99: Option<u64>,
    /// Largest (created − recorded).
    pub created_lag_max: Option<u64>,
    /// Σ (created − recorded) over every message: the total time messages spent late.
    pub created_lag_total: u64,
    /// Messages created after their recorded time.
    pub created_late: u64,
    /// Mean of (delivered − recorded): how far each delivery ran behind the time its
    /// message was recorded (the latency plus the creation lag; 0 for a delivery
    /// before the recorded time, elastic replay).
    pub delivered_lag_mean: Option<f64>,
    /// Median (delivered − recorded).
    pub delivered_lag_p50: Option<u64>,
    /// 99th percentile of (delivered − recorded).
    pub delivered_lag_p99: Option<u64>,
    /// Largest (delivered − recorded).
    pub delivered_lag_max: Option<u64>,
    /// Ranks (source endpoints) that sent at least one message.
    pub rank_count: usize,
    /// The rank whose last message was delivered last.
    pub slowest_rank: Option<RankRow>,
    /// Per rank, in rank order: all of them, or the `max_ranks` latest to finish.
    pub ranks: Vec<RankRow>,
    /// The busiest links over the whole replay, as `routemu run` lists them
    /// (`experiment.observe.per_link`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub links: Option<Vec<LinkRow>>,
    /// Totals over every link, which `links` adds up to.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub link_totals: Option<LinkTotals>,
    /// Per-router measurements (`experiment.observe.per_link`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub routers: Option<Vec<RouterRow>>,
    /// The time series (`experiment.observe.interval`), latency as `latency_mean`'s.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub series: Option<Vec<SeriesRow>>,
    /// The application's run time as replayed, cycles: elastic replay of an MPI trace,
    /// the last rank's finish; else the replayed span (first recorded time to last
    /// delivery; null when no message was created).
    pub runtime: Option<Cycle>,
    /// The recorded run time over the replayed one (above 1: the emulated machine runs
    /// the application faster than the recording did). For a message trace (every mode
    /// but elastic replay of an MPI trace) the recorded run time is `recorded_runtime`:
    /// in open and dependency-driven replay `recorded_span`, so the speed-up is
    /// 1 / `slowdown`; in elastic replay it counts the recording's latency, and
    /// messages without parents stay at their recorded times, so a trace whose traffic
    /// is mostly unparented cannot speed up much. Null when `runtime` is null or 0.
    pub speedup: Option<f64>,
    /// A message trace's recorded run time, cycles: from the first recorded time to the
    /// last recorded arrival (recorded time plus `recorded_latency`; the recorded time
    /// outside elastic replay, which makes it `recorded_span`). Absent for an MPI
    /// trace's elastic replay (`application.runtime_recorded`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub recorded_runtime: Option<Cycle>,
    /// Elastic replay of a message trace: the recording network's latency assumed, as
    /// `--recorded-latency` writes it (`N` cycles of the recording, or `hops:C`: C per
    /// hop of the trace's endpoints laid out as a mesh); absent in the other modes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub recorded_latency: Option<String>,
    /// Elastic replay of a message trace: messages read after the cycle their parents
    /// allowed — due more than the read-ahead window (`READ_AHEAD`, 2^20 cycles) before
    /// their recorded time — and so created when read, later than the rule says; 0
    /// elsewhere.
    pub read_late: u64,
    /// Elastic replay of an MPI trace: the run time emulated and recorded, per rank.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub application: Option<elastic::Application>,
}

/// One rank's (one source endpoint's) communication in a replay.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct RankRow {
    /// The trace's source endpoint.
    pub rank: u32,
    /// The node it was placed on.
    pub node: u32,
    /// Messages it sent (all delivered).
    pub messages: u64,
    /// Their sizes, in the trace's unit (bytes or flits).
    pub size: u64,
    /// Their flits.
    pub flits: u64,
    /// Σ latency (creation → delivery) of its messages: its communication time.
    pub latency_total: u64,
    /// Mean latency of its messages.
    pub latency_mean: f64,
    /// Largest latency of its messages.
    pub latency_max: u64,
    /// Mean (created − recorded) of its messages.
    pub created_lag_mean: f64,
    /// Cycle its first message was created.
    pub first_created: Cycle,
    /// Cycle its last message was delivered.
    pub last_delivery: Cycle,
}

/// Which of the rows ending at `ends` (in rank order) to list: all, or the `max` that
/// end latest (ties: the lower rank), in rank order.
pub(super) fn latest(ends: &[Cycle], max: Option<u32>) -> Vec<usize> {
    let mut idx: Vec<usize> = (0..ends.len()).collect();
    if let Some(m) = max.filter(|&m| (m as usize) < ends.len()) {
        idx.sort_by(|&a, &b| ends[b].cmp(&ends[a]).then(a.cmp(&b)));
        idx.truncate(m as usize);
        idx.sort_unstable();
    }
    idx
}

/// The latest recorded time a replay takes, in cycles (2^62): a time that scales
/// beyond it is refused, naming the message and the scale — far beyond any real trace,
/// and it leaves room for gaps and lags to be added without overflow.
pub const HORIZON: Cycle = 1 << 62;

/// The largest `--gap` (2^40 cycles).
pub const MAX_GAP: Cycle = 1 << 40;

/// A recorded time in cycles (saturating; the reader refuses anything beyond
/// [`HORIZON`] before it gets here).
pub(crate) fn scale(time: u64, time_scale: f64) -> Cycle {
    (time as f64 * time_scale).round() as Cycle
}

/// The flits of a message of `size` in `unit` (a message carries at least its head:
/// size 0 is one flit); None beyond `u32::MAX` flits, the most a message can have.
pub(crate) fn flits_of(size: u64, unit: crate::trace::SizeUnit, flit_bytes: u64) -> Option<u32> {
    let f = match unit {
        crate::trace::SizeUnit::Bytes => size.div_ceil(flit_bytes.max(1)),
        crate::trace::SizeUnit::Flits => size,
    };
    u32::try_from(f.max(1)).ok()
}

/// What every replay builds before it steps: the configuration it runs (no warm-up,
/// idle cycles skipped), this rank's partitions of the network, workload stopped and
/// deliveries recorded, and how the network is split.
pub(super) struct Setup<N: Network> {
    cfg: HwConfig,
    sims: Vec<Simulation<N>>,
    /// Every partition's node range.
    rs: Vec<(usize, usize)>,
    /// The partitions each rank steps, and this rank.
    owned: Vec<std::ops::Range<usize>>,
    rank: usize,
    transport: Option<std::sync::Arc<dyn crate::engine::transport::Transport>>,
    partitioning: crate::engine::partitioner::Partitioning,
    /// The nodes a trace's endpoints sit on, and the network's nodes.
    ends: std::ops::Range<u32>,
    nodes: usize,
    topology: crate::topology::Topology,
}

impl<N: Network + Send> Setup<N> {
    fn new(cfg: &HwConfig) -> Result<Self> {
        let mut cfg = cfg.clone();
        cfg.experiment.warmup = 0;
        cfg.experiment.idle_skip = true;
        let machine = validate(&cfg)?;
        // Before any table is built, as for a run: refused unless it fits (or --force).
        crate::experiments::memory::enforce_memory(&cfg, &machine)?;
        let topology = machine.topology;
        let nodes = topology.nodes();
        // A trace's endpoints sit on the nodes that send and receive (a host network's hosts).
        let ends = topology.endpoints();
        let e = &cfg.experiment;
        let (threads, min_nodes) = (
            e.threads as usize,
            e.partition_min_nodes.map(|m| m as usize),
        );
        // The same partitions as a run: over ranks, R·T of them (`distributed::plan`).
        let transport = crate::engine::transport::current();
        let (rs, owned, rank) = match &transport {
            Some(t) => {
                let (rs, owned) = distributed::plan::<N>(nodes, t.ranks(), threads, min_nodes)?;
                (rs, owned, t.rank())
            }
            None => {
                let rs = ranges(nodes, partitions_for::<N>(nodes, threads, min_nodes).max(1));
                let n = rs.len();
                // One rank owning every partition.
                (rs, one_process(n), 0)
            }
        };
        let (views, how) = place(&topology, &owned, e.partitioner)?;
        let partitioning = describe(&topology, &views, &owned, how);
        let mut sims = views[owned[rank].clone()]
            .iter()
            .map(|p| Simulation::<N>::build_part(&cfg, 0, p.clone()))
            .collect::<Result<Vec<_>>>()?;
        for sim in &mut sims {
            sim.stop_workload();
            sim.record_deliveries();
        }
        Ok(Setup {
            cfg,
            sims,
            rs,
            owned,
            rank,
            transport,
            partitioning,
            ends,
            nodes,
            topology,
        })
    }
}

/// Replays `src` on the machine `cfg` with the routers of its switching mode (see
/// [`replay`]).
pub fn replay_machine(
    cfg: &HwConfig,
    src: &mut dyn TraceSource,
    opts: &ReplayOptions,
    each: &mut dyn FnMut(&ReplayRecord) -> Result<()>,
) -> Result<ReplaySummary> {
    replay_machine_observed(cfg, src, opts, each).map(|(s, _)| s)
}

/// As [`replay_machine`], with the measurements for files (`experiment.observe`: every
/// link for the heat map, the latency histograms).
pub fn replay_machine_observed(
    cfg: &HwConfig,
    src: &mut dyn TraceSource,
    opts: &ReplayOptions,
    each: &mut dyn FnMut(&ReplayRecord) -> Result<()>,
) -> Result<(ReplaySummary, Extras)> {
    struct Replay<'a> {
        cfg: &'a HwConfig,
        src: &'a mut dyn TraceSource,
        opts: &'a ReplayOptions,
        each: &'a mut dyn FnMut(&ReplayRecord) -> Result<()>,
    }
    impl WithMode for Replay<'_> {
        type Output = Result<(ReplaySummary, Extras)>;
        fn run<N: Network + Send>(self) -> Self::Output {
            replay_observed::<N>(self.cfg, self.src, self.opts, self.each)
        }
    }
    with_mode(
        &cfg.switching,
        Replay {
            cfg,
            src,
            opts,
            each,
        },
    )
}

/// Replays `src` on the machine `cfg` (its synthetic workload is not used) on as many
/// partitions as `experiment.threads` asks for and the network can use; `each` sees
/// every delivered message. The result does not depend on the partition count.
pub fn replay<N: Network + Send>(
    cfg: &HwConfig,
    src: &mut dyn TraceSource,
    opts: &ReplayOptions,
    each: &mut dyn FnMut(&ReplayRecord) -> Result<()>,
) -> Result<ReplaySummary> {
    replay_observed::<N>(cfg, src, opts, each).map(|(s, _)| s)
}

/// As [`replay`], with the measurements of `experiment.observe` (per link, time
/// series; over the whole replay) in the summary and for files (the per-message log's
/// deliveries and header paths as one replication).
pub fn replay_observed<N: Network + Send>(
    cfg: &HwConfig,
    src: &mut dyn TraceSource,
    opts: &ReplayOptions,
    each: &mut dyn FnMut(&ReplayRecord) -> Result<()>,
) -> Result<(ReplaySummary, Extras)> {
    let setup = Setup::<N>::new(cfg)?;
    if opts.mode == ReplayMode::Elastic {
        if let Some(prog) = src.take_program() {
            return elastic::replay(setup, prog, opts, each);
        }
    }
    let Setup {
        cfg,
        mut sims,
        rs,
        owned,
        rank,
        transport,
        partitioning,
        ends,
        topology,
        ..
    } = setup;
    let (unit, name) = (src.unit(), src.describe());
    if let Some(e) = src.endpoints().filter(|&e| e as usize > ends.len()) {
        if opts.map.is_identity() {
            let nodes = ends.len();
            return Err(Error::Trace(format!(
                "{name}: {e} endpoints do not fit on the network's {nodes} nodes one to one: \
                 give a node map (--map) or a placement that folds them (--place fold, \
                 block:R, …)"
            )));
        }
    }
    if opts.gap > MAX_GAP {
        return Err(Error::Arg(format!(
            "--gap {}: at most {MAX_GAP} cycles (2^40)",
            opts.gap
        )));
    }
    if opts.mode == ReplayMode::Open {
        src.order_by_time();
    }
    let mut reader = lockstep::Reader::new(src, opts)?;
    let mut first = Vec::new();
    reader.read_upto(0, &mut first)?;
    let traits = (reader.ids_increase(), reader.partial(), reader.endpoints());
    let mut drivers = (0..sims.len())
        .map(|_| {
            let mut d = Driver::new(opts, (ends.start, ends.len() as u32), unit, &name);
            d.source_traits(traits.0, traits.1, traits.2)?;
            d.ingest(&first, None).map(|()| d)
        })
        .collect::<Result<Vec<_>>>()?;
    if cfg.experiment.observe.message_log {
        // A leader sees every partition's deliveries; one copy is enough.
        drivers[0].log = Some(Vec::new());
    }
    let split = lockstep::Split {
        parts: rs.len(),
        owned,
        rank,
        transport: transport.as_deref(),
    };
    let ended = lockstep::run(&mut sims, &split, drivers, &mut reader, each)?;
    let mut sum = ended.summary;
    sum.partitioning = partitioning;
    // The last cycle stepped is counted: the window ends after it.
    let t = sims[0].t + 1;
    let end = RunEnd {
        t,
        start: 0,
        end: Some(t),
        endpoints: ends.len(),
        servers: sims[0].net.ctrl_servers(),
        backlog_samples: Vec::new(),
        outstanding_samples: Vec::new(),
        per_link: cfg.experiment.observe.per_link,
    };
    let mut parts: Vec<PartResult<N::Measures>> =
        sims.iter_mut().map(|s| PartResult::of(s, &end)).collect();
    drop(sims);
    if let Some(t) = &transport {
        // Every rank's partitions, in partition order: every rank measures alike.
        let bytes = postcard::to_stdvec(&parts).map_err(|e| wire::error("results", e))?;
        parts.clear();
        for (r, b) in t.all_gather(&bytes).iter().enumerate() {
            let theirs: Vec<PartResult<N::Measures>> = postcard::from_bytes(b)
                .map_err(|e| wire::error(&format!("rank {r}'s results"), e))?;
            parts.extend(theirs);
        }
    }
    if let Some(e) = ended.held {
        return Err(e);
    }
    let mut extras = observed::<N>(&cfg, &mut parts, &end, (&topology, ends.len()), &mut sum);
    if cfg.experiment.observe.message_log {
        let hops = parts
            .iter_mut()
            .flat_map(|p| p.stats.hops.take().unwrap_or_default())
            .collect();
        extras.messages = vec![RepLog {
            deliveries: ended.log,
            hops,
        }];
    }
    Ok((sum, extras))
}

/// Adds what `experiment.observe` asks for, over the whole replay (`end`: its window)
/// from every partition's measurements `parts` (in partition order), to `sum`, and
/// returns the measurements for files; nothing is computed that was not asked for.
pub(super) fn observed<N: Network>(
    cfg: &HwConfig,
    parts: &mut [PartResult<N::Measures>],
    end: &RunEnd,
    (topology, endpoints): (&crate::topology::Topology, usize),
    sum: &mut ReplaySummary,
) -> Extras {
    let o = cfg.experiment.observe;
    let t = end.t;
    let mut extras = Extras {
        // The replay's latency: creation → tail delivered, unshifted.
        latency: latency_histograms(Default::default(), 0, parts.iter().map(|p| &p.stats)),
        ..Extras::default()
    };
    if o.per_link {
        let mut m = NetMeasures::default();
        for p in parts.iter() {
            m.add(&p.measures);
        }
        let obs = observe_parts::<N>(parts, end.servers, t, &m);
        let a = link_arrays(&[(&obs, m.utilization())], o.max_links, topology);
        sum.links = Some(a.links);
        sum.link_totals = Some(a.link_totals);
        sum.routers = Some(a.routers);
        extras.links = a.all_links;
        extras.link_totals = Some(a.all_totals);
    }
    if o.interval.is_some() {
        let mut series = parts.iter().filter_map(|p| p.stats.series.as_deref());
        if let Some(first) = series.next() {
            let mut acc = first.clone();
            for s in series {
                acc.merge(s);
            }
            // Every message was delivered: nothing waits at the end.
            acc.close(t, 0);
            sum.series = Some(observe::series_rows(
                &[(&acc, t)],
                (0, t),
                endpoints,
                false,
                0,
            ));
        }
    }
    extras
}
