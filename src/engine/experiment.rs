//! Experiment control: independent replications of warm-up, measurement window and
//! drain, and their aggregation into a [`Report`]. Replication r uses the random streams
//! of (seed, r, node), so adding replications never changes the earlier ones.

use crate::config::HwConfig;
use crate::engine::machine::validate;
use crate::engine::network::{ModeContext, ModeMeasures, NetMeasures, Network};
use crate::engine::parallel::{partitions_for, run_partitioned};
use crate::engine::partitioner;
use crate::engine::probe::observe::{LinkObs, PortObs, RepObs, SeriesAcc};
use crate::engine::probe::{histogram, MsgStats};
use crate::engine::sim::{Simulation, Stop};
use crate::foundation::ci::Dist;
use crate::foundation::ci::{dist, mean_ci};
use crate::foundation::error::Result;
use crate::foundation::types::Cycle;
use crate::router::controller::CtrlStats;
use crate::router::controller::{chain_delta, chained_coef, pk_wait};
use crate::stats::latency_dist::LatencyHistograms;
use crate::stats::msglog::RepLog;
use crate::stats::observe::{self, LinkRow, LinkTotals, RouterRow};
use crate::stats::report::{
    self, Controller, Deadlock, Latency, Messages, Phases, Report, Throughput, TopologyInfo,
};
use crate::switching::{with_mode, WithMode};
use crate::topology::Topology;
use hdrhistogram::Histogram;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Mutex;
use std::time::Instant;

/// What one replication measured, reduced to numbers; `M` is the switching mode's own
/// measurements.
#[derive(Clone, Debug)]
pub struct RepResult<M> {
    /// Cycles simulated.
    pub cycles: Cycle,
    /// Measurement window length.
    pub window: Cycle,
    /// Why it stopped.
    pub stop: Stop,
    /// Per-message statistics.
    pub msgs: MsgStats,
    /// Messages created.
    pub generated: u64,
    /// Messages delivered.
    pub delivered: u64,
    /// Messages refused by a full source memory (never delivered).
    pub lost: u64,
    /// Measured messages created.
    pub measured: u64,
    /// Flits created in the window per node per cycle.
    pub offered: f64,
    /// Flits absorbed in the window per node per cycle.
    pub accepted: f64,
    /// Messages created in the window per node per cycle.
    pub offered_messages: f64,
    /// The run drained but was overloaded all the same: see [`overloaded`].
    pub overloaded: bool,
    /// Controller: requests per node per cycle, utilisation, mean wait, P-K wait,
    /// service mean and second moment.
    pub ctrl: (f64, f64, Option<f64>, Option<f64>, Option<f64>, Option<f64>),
    /// Controller: what its arrivals found, for the corrected wait prediction.
    pub ctrl_arrivals: CtrlArrivals,
    /// Link utilisation mean and max.
    pub links: (f64, f64),
    /// The switching mode's own measurements.
    pub mode: M,
    /// Partitions (threads) the replication ran on.
    pub partitions: u32,
    /// Per-link and per-router observations (`experiment.observe.per_link`).
    pub obs: Option<Box<RepObs>>,
}

/// A replication's results and what its partitions knew alike at its end.
pub type Replication<N> = (RepResult<<N as Network>::Measures>, RunEnd);

/// Runs one replication of a machine on the routers of switching mode `N` to its end,
/// on as many partitions as `experiment.threads` asks for (and the network can use).
pub fn run_replication<N: Network + Send>(
    cfg: &HwConfig,
    rep: u32,
    progress: &mut dyn FnMut(Cycle),
) -> Result<Replication<N>> {
    if let Some(t) = crate::engine::distributed::current() {
        return crate::engine::distributed::run_replication::<N>(cfg, rep, &*t, progress);
    }
    let nodes = validate(cfg)?.topology.nodes();
    let e = &cfg.experiment;
    let parts = partitions_for::<N>(
        nodes,
        e.threads as usize,
        e.partition_min_nodes.map(|m| m as usize),
    );
    let (mut sims, stop) = run_partitioned::<N>(cfg, rep, parts, progress)?;
    Ok(reduce(&mut sims, stop))
}

/// Share of the offered load (flits per node per cycle) by which the source backlog
/// must grow over the window, significantly, for [`overloaded`].
pub const OVERLOAD_GROWTH_SHARE: f64 = 0.1;

/// Whether a window was overloaded although the source backlog never reached
/// `experiment.saturation_backlog`: the messages in the system (created, not yet
/// delivered: waiting in memory, held by an engine or in flight), sampled at every check
/// point of the window's second half, grew significantly (one-sided t-test at 95% on the increments,
/// as the saturation search's backlog criterion) and by more than
/// [`OVERLOAD_GROWTH_SHARE`] of the offered load in flits (messages × the window's mean
/// message length). This catches long messages, of which few wait for an engine while
/// the flits offered pile up. `offered` is in flits per node per cycle over `nodes`
/// sources.
pub fn overloaded(samples: &[(Cycle, u64)], offered: f64, mean_flits: f64, nodes: f64) -> bool {
    // The second half of the window only: after a short warm-up the messages in the
    // system still ramp up to their steady level (about the rate times the latency),
    // which is growth without overload.
    let Some(g) = crate::foundation::ci::backlog_growth(&samples[samples.len() / 2..]) else {
        return false;
    };
    let flits_per_node = g.per_cycle * mean_flits / nodes.max(1.0);
    offered > 0.0 && g.significant() && flits_per_node > OVERLOAD_GROWTH_SHARE * offered
}

/// What one replication's controller arrivals found (every node together).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct CtrlArrivals {
    /// Fraction of the requests that found every server busy on arrival (ρ under
    /// PASTA).
    pub p_busy: Option<f64>,
    /// Fraction of the requests that were chained (see
    /// [`crate::router::controller::CHAINED`]).
    pub chained: Option<f64>,
    /// The arrival-weighted mean over nodes of the coefficient K of
    /// [`crate::foundation::mg1::chained_wait`]: each node's corrected wait is its P-K wait
    /// + δ·K, so the network's is `wait_mg1` + δ·K (None where P-K is).
    pub coef: Option<f64>,
}

/// What one partition measured in a replication, reduced to what [`reduce_parts`] needs:
/// the unit that crosses from another process when partitions live in MPI ranks
/// (`engine::distributed`). Built by [`PartResult::of`]; merged in partition (node)
/// order, so the result does not depend on where partitions ran.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
#[serde(bound = "M: serde::Serialize + serde::de::DeserializeOwned")]
pub struct PartResult<M> {
    /// Nodes the partition stepped.
    pub nodes: usize,
    /// Those nodes when they are not a node range (block partitions), in the order of
    /// `ctrl`; None for a range, whose `ctrl` follows node order.
    pub ids: Option<Vec<u32>>,
    /// Its nodes' routing controllers.
    pub ctrl: Vec<CtrlStats>,
    /// Its link measures over the window.
    pub measures: NetMeasures,
    /// Its per-message statistics (the per-message log's records moved, not copied).
    pub stats: MsgStats,
    /// Messages left in its sources' memory.
    pub backlog: u64,
    /// The mode's own measures over the window.
    pub mode: M,
    /// Per-link rows (`experiment.observe.per_link` only).
    pub links: Vec<LinkObs>,
    /// Per-input-port rows (`experiment.observe.per_link` only).
    pub ports: Vec<PortObs>,
    /// Messages created (all).
    pub generated: u64,
    /// Messages delivered.
    pub delivered: u64,
    /// Messages lost (refused by a full source memory).
    pub lost: u64,
    /// Measured messages created.
    pub measured_created: u64,
    /// Flits created inside the window.
    pub window_flits: u64,
    /// Messages created inside the window.
    pub window_messages: u64,
}

/// What every partition of a replication knows alike when it ends: the clock, the
/// window and the coordinator's samples (each partition holds a copy of the same
/// coordinator).
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct RunEnd {
    /// The cycle the replication ended at.
    pub t: Cycle,
    /// The window's first cycle.
    pub start: Cycle,
    /// The window's end, once known.
    pub end: Option<Cycle>,
    /// Nodes that create and receive messages.
    pub endpoints: usize,
    /// Servers per routing controller.
    pub servers: usize,
    /// See [`Simulation::backlog_samples`].
    pub backlog_samples: Vec<(Cycle, u64)>,
    /// See [`Simulation::outstanding_samples`].
    pub outstanding_samples: Vec<(Cycle, u64)>,
    /// `experiment.observe.per_link`.
    pub per_link: bool,
}

impl RunEnd {
    /// What partition `sim` knows of the end of its replication.
    pub fn of<N: Network>(sim: &Simulation<N>) -> Self {
        RunEnd {
            t: sim.t,
            start: sim.window.start,
            end: sim.window.end,
            endpoints: sim.endpoints,
            servers: sim.net.ctrl_servers(),
            backlog_samples: sim.backlog_samples().to_vec(),
            outstanding_samples: sim.outstanding_samples().to_vec(),
            per_link: sim.experiment().observe.per_link,
        }
    }

    /// The window as measured: `[start, end)`, clipped to the cycles run.
    pub fn window(&self) -> (Cycle, Cycle) {
        let end = self.end.unwrap_or(self.t).min(self.t).max(self.start);
        (self.start, end)
    }
}

impl<M: ModeMeasures> PartResult<M> {
    /// Partition `sim`'s results over the window of `end`; its per-message log records
    /// move into the result.
    pub fn of<N: Network<Measures = M>>(sim: &mut Simulation<N>, end: &RunEnd) -> Self {
        let (start, stop) = end.window();
        let deliveries = sim.stats.deliveries.as_mut().map(std::mem::take);
        let hops = sim.stats.hops.as_mut().map(std::mem::take);
        let mut stats = sim.stats.clone();
        stats.deliveries = deliveries;
        stats.hops = hops;
        let (mut links, mut ports) = (Vec::new(), Vec::new());
        if end.per_link {
            sim.net.link_obs(start, stop, &mut links);
            sim.net.port_obs(start, stop, &mut ports);
        }
        PartResult {
            nodes: sim.net.nodes(),
            ids: sim.out.nodes.ids(),
            ctrl: sim.net.ctrl_stats().to_vec(),
            measures: sim.net.measures(start, stop),
            stats,
            backlog: sim.net.backlog() as u64,
            mode: sim.net.mode_measures(start, stop),
            links,
            ports,
            generated: sim.generated,
            delivered: sim.net.delivered(),
            lost: sim.net.lost(),
            measured_created: sim.measured_created,
            window_flits: sim.window_flits,
            window_messages: sim.window_messages,
        }
    }
}

/// One replication's results from its partitions (in node order).
fn reduce<N: Network>(parts: &mut [Simulation<N>], stop: Stop) -> Replication<N> {
    let end = RunEnd::of(&parts[0]);
    let results = parts.iter_mut().map(|p| PartResult::of(p, &end)).collect();
    (reduce_parts::<N>(results, &end, stop), end)
}

/// One replication's results from what its partitions measured, in partition (node)
/// order, wherever they ran.
pub fn reduce_parts<N: Network>(
    mut parts: Vec<PartResult<N::Measures>>,
    run: &RunEnd,
    stop: Stop,
) -> RepResult<N::Measures> {
    ctrl_in_node_order(&mut parts);
    let n: f64 = parts.iter().map(|p| p.nodes as f64).sum();
    let ends = run.endpoints as f64;
    let t = run.t;
    let (start, end) = run.window();
    let w = (end - start).max(1) as f64;
    let nservers = run.servers as f64;
    let (mut arr, mut wait, mut ssum, mut ssq, mut pk_weighted) = (0u64, 0u64, 0u64, 0u64, 0.0f64);
    let mut pk_ok = nservers == 1.0;
    let (mut busy, mut chained, mut coef_weighted) = (0u64, 0u64, 0.0f64);
    // The servers' busy time: the service of the requests that arrived in the window,
    // at most the whole window per server — a service that runs on past the window's end
    // (longer than the window, or begun near its end) does not make a server more than
    // fully busy.
    let mut busy_time = 0.0f64;
    for st in parts.iter().flat_map(|p| &p.ctrl) {
        busy_time += (st.service_sum as f64).min(nservers * w);
        arr += st.arrivals;
        wait += st.wait_sum;
        ssum += st.service_sum;
        ssq += st.service_sq_sum;
        busy += st.busy_arrivals;
        chained += st.chained_arrivals;
        if st.arrivals > 0 {
            let lambda = st.arrivals as f64 / w;
            let rho = st.service_sum as f64 / w;
            let m2 = st.service_sq_sum as f64 / st.arrivals as f64;
            match pk_wait(lambda, rho, m2) {
                Some(x) => pk_weighted += st.arrivals as f64 * x,
                None => pk_ok = false,
            }
            coef_weighted += st.arrivals as f64 * chained_coef(st, w);
        }
    }
    let per = |x: u64| (arr > 0).then(|| x as f64 / arr as f64);
    let ctrl = (
        arr as f64 / (n * w),
        busy_time / (n * nservers * w),
        per(wait),
        if pk_ok {
            per(0).map(|_| pk_weighted / arr as f64)
        } else {
            None
        },
        per(ssum),
        per(ssq),
    );
    let ctrl_arrivals = CtrlArrivals {
        p_busy: per(busy),
        chained: per(chained),
        coef: per(0).filter(|_| pk_ok).map(|_| coef_weighted / arr as f64),
    };
    let mut m = NetMeasures::default();
    for p in &parts {
        m.add(&p.measures);
    }
    // The per-message log's records: one partition's vectors taken whole, the others'
    // appended (they can be most of the memory a run holds).
    let (mut deliveries, mut hops) = (None::<Vec<_>>, None::<Vec<_>>);
    for p in parts.iter_mut() {
        if let Some(d) = p.stats.deliveries.take() {
            match &mut deliveries {
                Some(all) => all.extend(d),
                None => deliveries = Some(d),
            }
        }
        if let Some(h) = p.stats.hops.take() {
            match &mut hops {
                Some(all) => all.extend(h),
                None => hops = Some(h),
            }
        }
    }
    let mut msgs = parts[0].stats.clone();
    for p in &parts[1..] {
        msgs.merge(&p.stats);
    }
    msgs.deliveries = deliveries;
    msgs.hops = hops;
    if let Some(s) = &mut msgs.series {
        // Every partition sampled the same boundaries; the rest see the final backlog.
        let backlog = parts.iter().map(|p| p.backlog).sum();
        s.close(t, backlog);
    }
    let mut mode = parts[0].mode.clone();
    for p in &parts[1..] {
        mode.merge(&p.mode);
    }
    let obs = run
        .per_link
        .then(|| Box::new(observe_parts::<N>(&mut parts, run.servers, end - start, &m)));
    let sum = |f: &dyn Fn(&PartResult<N::Measures>) -> u64| parts.iter().map(f).sum::<u64>();
    let drained = stop == Stop::Drained;
    RepResult {
        cycles: t,
        window: end - start,
        stop,
        msgs,
        generated: sum(&|p| p.generated),
        delivered: sum(&|p| p.delivered),
        lost: sum(&|p| p.lost),
        measured: sum(&|p| p.measured_created),
        // Per node that creates and receives messages (switches do neither).
        offered: sum(&|p| p.window_flits) as f64 / (ends * w),
        accepted: m.flits_accepted as f64 / (ends * w),
        offered_messages: sum(&|p| p.window_messages) as f64 / (ends * w),
        // A deadlocked run is a deadlock, and a saturated one is flagged already.
        overloaded: drained
            && overloaded(
                &run.outstanding_samples,
                sum(&|p| p.window_flits) as f64 / (ends * w),
                sum(&|p| p.window_flits) as f64 / sum(&|p| p.window_messages).max(1) as f64,
                ends,
            ),
        ctrl,
        ctrl_arrivals,
        links: m.utilization(),
        mode,
        partitions: parts.len() as u32,
        obs,
    }
}

/// What the partitions of one run (their results in node order, wherever they ran)
/// observed per link and per router input port over a window of `window` cycles, with
/// `m` their summed link measures and `servers` per controller; their rows move into
/// the result. Links and ports are sorted, so the result does not depend on the
/// partition count.
pub(crate) fn observe_parts<N: Network>(
    parts: &mut [PartResult<N::Measures>],
    servers: usize,
    window: Cycle,
    m: &NetMeasures,
) -> RepObs {
    ctrl_in_node_order(parts);
    let mut o = empty_observations::<N>(m, servers, window);
    for p in parts {
        o.links.append(&mut p.links);
        o.ports.append(&mut p.ports);
        o.ctrl.extend_from_slice(&p.ctrl);
    }
    sort_observations(o)
}

/// Puts the partitions' controller rows in node order, so that what is summed over
/// them in floating point, and the per-router rows, do not depend on the split: block
/// partitions' rows are gathered, in node order, into the first partition's (the
/// others' left empty); node ranges' are already in order, and left where they are.
fn ctrl_in_node_order<M>(parts: &mut [PartResult<M>]) {
    if parts.iter().all(|p| p.ids.is_none()) {
        return;
    }
    let total: usize = parts.iter().map(|p| p.ctrl.len()).sum();
    let mut rows: Vec<(u32, CtrlStats)> = Vec::with_capacity(total);
    for p in parts.iter_mut() {
        let ctrl = std::mem::take(&mut p.ctrl);
        // One partitioner cuts every partition, so a range among blocks is not met;
        // were it, its rows would follow the others' in their order (stable sort).
        let ids = p.ids.take().unwrap_or_default();
        rows.extend(
            ctrl.into_iter()
                .enumerate()
                .map(|(i, c)| (ids.get(i).copied().unwrap_or(u32::MAX), c)),
        );
    }
    rows.sort_by_key(|r| r.0);
    parts[0].ctrl = rows.into_iter().map(|r| r.1).collect();
}

/// A run's observations before any row: the link totals `m` of mode `N`, `servers` per
/// controller, a window of `window` cycles.
fn empty_observations<N: Network>(m: &NetMeasures, servers: usize, window: Cycle) -> RepObs {
    RepObs {
        capacity: m.link_capacity,
        servers,
        window,
        busy_total: m.link_busy,
        busy_max: m.link_busy_max,
        link_count: m.link_count,
        units: N::LINK_UNITS,
        ..RepObs::default()
    }
}

/// Orders a run's per-link and per-port rows, so that they do not depend on the
/// partition count.
fn sort_observations(mut o: RepObs) -> RepObs {
    o.links.sort_by_key(|l| (l.from, l.port));
    // A link whose ends live in two partitions (a half-duplex circuit link) comes
    // as one row per end: they add up.
    o.links.dedup_by(|b, a| {
        let same = (a.from, a.port) == (b.from, b.port);
        if same {
            a.busy += b.busy;
            a.flits += b.flits;
            a.headers += b.headers;
            a.blocking += b.blocking;
        }
        same
    });
    o.ports.sort_by_key(|q| (q.node, q.port));
    o
}

/// The per-link and per-router arrays of a report (`experiment.observe.per_link`).
pub(crate) struct LinkArrays {
    /// The `max_links` busiest links.
    pub links: Vec<LinkRow>,
    /// Totals over every link, `links` listed.
    pub link_totals: LinkTotals,
    /// The `max_links` busiest routers.
    pub routers: Vec<RouterRow>,
    /// Every link, for the heat map (empty for networks too big to draw).
    pub all_links: Vec<LinkRow>,
    /// Totals over every link, `all_links` listed.
    pub all_totals: LinkTotals,
}

/// The arrays of every replication's observations, each with its link utilisation
/// (mean, max), on a network of `nodes` nodes; at most `max_links` links and routers
/// listed.
pub(crate) fn link_arrays(
    obs: &[(&RepObs, (f64, f64))],
    max_links: Option<u32>,
    nodes: usize,
) -> LinkArrays {
    let only: Vec<&RepObs> = obs.iter().map(|(o, _)| *o).collect();
    // Rows are built for the links listed, and for every link only when a heat map
    // could draw them: a huge network's rows would cost memory for nothing.
    let util = observe::link_utilization(&only);
    let keep = observe::busiest(&util, max_links);
    let all_links = if util.len() <= crate::presentation::heatmap::MAX_DRAWN_LINKS {
        let all: Vec<usize> = (0..util.len()).collect();
        observe::link_rows(&only, &all)
    } else {
        Vec::new()
    };
    let routers = observe::busiest(&observe::router_load(&only, nodes), max_links);
    LinkArrays {
        links: observe::link_rows(&only, &keep),
        link_totals: observe::link_totals(obs, keep.len()),
        routers: observe::router_rows(&only, nodes, &routers),
        all_totals: observe::link_totals(obs, all_links.len()),
        all_links,
    }
}

/// The latency distribution in the definition `cfg.experiment.latency` asks for: from
/// creation (the `latency` histogram) or from the head leaving the source router (the
/// `network` one), to the tail in memory or, `router.ni.ejection_latency` earlier, leaving the
/// destination's crossbar. The shift is the same constant for every message, so it is
/// applied to the mean and every percentile exactly.
fn latency_total<M>(
    cfg: &HwConfig,
    reps: &[RepResult<M>],
    lat: &Histogram<u64>,
    net: &Histogram<u64>,
) -> Dist {
    use crate::config::{LatencyFrom, LatencyTo};
    let def = cfg.experiment.latency;
    let count = |m: &MsgStats| m.count;
    let mut d = match def.from {
        LatencyFrom::Creation => dist(&per_message(reps, &|m| m.latency_sum, &count), lat),
        LatencyFrom::HeadInjected => dist(&per_message(reps, &|m| m.network_sum, &count), net),
    };
    if def.to == LatencyTo::TailArrived {
        let e = cfg.router.ni.ejection_latency;
        d.mean = d.mean.map(|x| x - e as f64);
        for v in [&mut d.p50, &mut d.p90, &mut d.p99, &mut d.max] {
            *v = v.map(|x| x.saturating_sub(e));
        }
    }
    d
}

/// The mean of the values present (None when none is).
pub fn avg(xs: impl Iterator<Item = Option<f64>>) -> Option<f64> {
    let v: Vec<f64> = xs.flatten().collect();
    (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
}

/// Per-replication ratios `num / den` of their messages' statistics, skipping
/// replications where `den` is 0.
pub fn per_message<M>(
    reps: &[RepResult<M>],
    num: &dyn Fn(&MsgStats) -> u64,
    den: &dyn Fn(&MsgStats) -> u64,
) -> Vec<f64> {
    reps.iter()
        .filter(|r| den(&r.msgs) > 0)
        .map(|r| num(&r.msgs) as f64 / den(&r.msgs) as f64)
        .collect()
}

/// Runs every replication of `cfg` and builds the report. `progress` receives
/// (replication, cycle) now and then. Replications run `experiment.jobs` at a time, each
/// on `experiment.threads` partitions; neither changes the report.
pub fn run_experiment(
    cfg: &HwConfig,
    progress: &mut (dyn FnMut(u32, Cycle) + Send),
) -> Result<Report> {
    run_experiment_observed(cfg, progress).map(|(r, _)| r)
}

/// As [`run_experiment`], with what the run measured for files besides the report
/// (`experiment.observe`; docs/measurements.md).
pub fn run_experiment_observed(
    cfg: &HwConfig,
    progress: &mut (dyn FnMut(u32, Cycle) + Send),
) -> Result<(Report, Extras)> {
    struct Reps<'a, 'p> {
        cfg: &'a HwConfig,
        progress: &'a mut (dyn FnMut(u32, Cycle) + Send + 'p),
    }
    impl WithMode for Reps<'_, '_> {
        type Output = Result<(Report, Extras)>;
        fn run<N: Network + Send>(self) -> Self::Output {
            run_reps::<N>(self.cfg, self.progress)
        }
    }
    with_mode(&cfg.switching, Reps { cfg, progress })
}

/// What a run measured besides its report, for the files `routemu run` writes
/// (docs/measurements.md).
#[derive(Clone, Debug, Default)]
pub struct Extras {
    /// Every link (the report lists at most `experiment.observe.max_links`); empty
    /// unless `per_link`, and for networks too big to draw
    /// (`stats::heatmap::MAX_DRAWN_LINKS`).
    pub links: Vec<LinkRow>,
    /// What the link counts mean, and their totals.
    pub link_totals: Option<LinkTotals>,
    /// Every replication's measured messages' latency histograms together.
    pub latency: LatencyHistograms,
    /// Per replication, the deliveries and header paths (`message_log`; else empty).
    pub messages: Vec<RepLog>,
}

/// Where a worker leaves a replication's result (and its last cycle).
type Slot<M> = Mutex<Option<Result<(RepResult<M>, Cycle)>>>;

fn run_reps<N: Network + Send>(
    cfg: &HwConfig,
    progress: &mut (dyn FnMut(u32, Cycle) + Send),
) -> Result<(Report, Extras)> {
    let machine = validate(cfg)?;
    // Before any table is built: the memory the replications held at once will need,
    // against what this process may use (refused unless --force).
    crate::experiments::memory::enforce_memory(cfg, &machine)?;
    let topology = machine.topology;
    let started = Instant::now();
    let reps = cfg.experiment.replications;
    let jobs = (cfg.experiment.jobs.max(1)).min(reps) as usize;
    // Workers take replications in order and results are put back in replication order,
    // so the report is the same for any number of jobs. A deadlock ends the experiment:
    // replications after the first deadlocked one are not started (or are discarded).
    let next = AtomicU32::new(0);
    let first_deadlock = AtomicU32::new(u32::MAX);
    let slots: Vec<Slot<N::Measures>> = (0..reps).map(|_| Mutex::new(None)).collect();
    let progress = Mutex::new(progress);
    let worker = || loop {
        let rep = next.fetch_add(1, Ordering::Relaxed);
        if rep >= reps || rep > first_deadlock.load(Ordering::Relaxed) {
            break;
        }
        // After a stop request no further replication starts (the first always runs, so
        // there is something to report).
        if rep > 0 && crate::engine::interrupt::requested() {
            break;
        }
        let r = run_replication::<N>(cfg, rep, &mut |t| {
            if let Ok(mut p) = progress.try_lock() {
                (*p)(rep, t);
            }
        })
        .map(|(r, end)| (r, end.t));
        if matches!(&r, Ok((x, _)) if matches!(x.stop, Stop::Deadlock(_))) {
            first_deadlock.fetch_min(rep, Ordering::Relaxed);
        }
        *slots[rep as usize]
            .lock()
            .unwrap_or_else(|e| e.into_inner()) = Some(r);
    };
    crate::engine::parallel::on_workers(jobs, worker);
    let last = first_deadlock.load(Ordering::Relaxed).min(reps - 1);
    // Every replication up to the first deadlock ran, unless a stop was requested: then
    // those that ran, in order.
    let results: Vec<Result<(RepResult<N::Measures>, Cycle)>> = slots
        .into_iter()
        .take(last as usize + 1)
        .map_while(|slot| slot.into_inner().unwrap_or_else(|e| e.into_inner()))
        .collect();
    let mut done = Vec::new();
    let mut deadlock = None;
    for (rep, r) in results.into_iter().enumerate() {
        let (r, t) = r?;
        if let Stop::Deadlock(text) = &r.stop {
            deadlock = Some(Deadlock {
                replication: rep as u32,
                cycle: t,
                description: text.clone(),
            });
        }
        done.push(r);
    }
    let wall = started.elapsed().as_secs_f64();
    Ok(aggregate_observed(
        cfg, &topology, &mut done, deadlock, wall,
    ))
}

/// The corrected controller wait of the replications: each one's P-K wait + δ·K,
/// averaged (null wherever P-K is).
fn ctrl_corrected<M>(cfg: &HwConfig, reps: &[RepResult<M>]) -> Option<f64> {
    if !reps
        .iter()
        .all(|r| r.ctrl.3.is_some() || r.ctrl.2.is_none())
    {
        return None;
    }
    let delta = chain_delta(cfg);
    avg(reps
        .iter()
        .map(|r| Some(r.ctrl.3? + delta * r.ctrl_arrivals.coef?)))
}

/// Combines replications into a report and the measurements for files; takes the
/// per-message records out of the replications.
pub fn aggregate_observed<M: ModeMeasures>(
    cfg: &HwConfig,
    topology: &Topology,
    reps: &mut [RepResult<M>],
    deadlock: Option<Deadlock>,
    wall: f64,
) -> (Report, Extras) {
    let mut report = aggregate(cfg, topology, reps, deadlock, wall);
    let o = cfg.experiment.observe;
    let mut extras = Extras {
        latency: latency_histograms(
            cfg.experiment.latency,
            cfg.router.ni.ejection_latency,
            reps.iter().map(|r| &r.msgs),
        ),
        ..Extras::default()
    };
    let obs: Vec<(&RepObs, (f64, f64))> = reps
        .iter()
        .filter_map(|r| Some((r.obs.as_deref()?, r.links)))
        .collect();
    if o.per_link && obs.len() == reps.len() && !reps.is_empty() {
        let a = link_arrays(&obs, o.max_links, topology.nodes());
        report.links = Some(a.links);
        report.link_totals = Some(a.link_totals);
        report.routers = Some(a.routers);
        extras.links = a.all_links;
        extras.link_totals = Some(a.all_totals);
    }
    if o.interval.is_some() {
        let series: Vec<(&SeriesAcc, Cycle)> = reps
            .iter()
            .filter_map(|r| Some((r.msgs.series.as_deref()?, r.cycles)))
            .collect();
        let start = cfg.experiment.warmup;
        let end = start + report.window_cycles.round() as Cycle;
        report.series = Some(observe::series_rows(
            &series,
            (start, end),
            topology.endpoints().len(),
            cfg.experiment.latency.from == crate::config::LatencyFrom::HeadInjected,
            extras.latency.shift,
        ));
    }
    if o.message_log {
        extras.messages = reps
            .iter_mut()
            .map(|r| RepLog {
                deliveries: r.msgs.deliveries.take().unwrap_or_default(),
                hops: r.msgs.hops.take().unwrap_or_default(),
            })
            .collect();
    }
    (report, extras)
}

/// The measured messages' histograms of every replication (or partition) `stats`
/// together, with the shift the report applies to the latency under the definition
/// `def` (see [`latency_total`]) with `ejection` cycles of ejection latency.
pub(crate) fn latency_histograms<'a>(
    def: crate::config::LatencyDef,
    ejection: Cycle,
    stats: impl IntoIterator<Item = &'a MsgStats>,
) -> LatencyHistograms {
    use crate::config::{LatencyFrom, LatencyTo};
    let mut h = LatencyHistograms {
        definition: def,
        shift: if def.to == LatencyTo::TailArrived {
            ejection
        } else {
            0
        },
        ..LatencyHistograms::default()
    };
    for m in stats {
        let total = match def.from {
            LatencyFrom::Creation => &m.latency,
            LatencyFrom::HeadInjected => &m.network,
        };
        let _ = h.total.add(total);
        let _ = h.source_queue.add(&m.source_queue);
        let _ = h.network.add(&m.network);
    }
    h
}

/// Combines replications into a report.
pub fn aggregate<M: ModeMeasures>(
    cfg: &HwConfig,
    topology: &Topology,
    reps: &[RepResult<M>],
    deadlock: Option<Deadlock>,
    wall: f64,
) -> Report {
    let mut lat = histogram();
    let mut net = histogram();
    let mut src = histogram();
    for r in reps {
        let _ = lat.add(&r.msgs.latency);
        let _ = net.add(&r.msgs.network);
        let _ = src.add(&r.msgs.source_queue);
    }
    let mean_of =
        |f: &dyn Fn(&MsgStats) -> u64, d: &dyn Fn(&MsgStats) -> u64| per_message(reps, f, d);
    let count = |m: &MsgStats| m.count;
    let accepted: Vec<f64> = reps.iter().map(|r| r.accepted).collect();
    let (acc_mean, acc_ci) = mean_ci(&accepted);
    let k = reps.len().max(1) as f64;
    let cycles: u64 = reps.iter().map(|r| r.cycles).sum();
    let generated: u64 = reps.iter().map(|r| r.generated).sum();
    let delivered: u64 = reps.iter().map(|r| r.delivered).sum();
    let lost: u64 = reps.iter().map(|r| r.lost).sum();
    let partitions = reps.iter().map(|r| r.partitions).max().unwrap_or(1);
    Report {
        schema: report::SCHEMA,
        config: cfg.clone(),
        seed: cfg.experiment.seed,
        replications: reps.len() as u32,
        threads: partitions,
        partitioning: {
            let ranks = crate::engine::distributed::current().map_or(1, |t| t.ranks());
            let owned = crate::engine::distributed::owners(partitions as usize, ranks);
            // The run placed its partitions the same way already.
            match partitioner::place(topology, &owned, cfg.experiment.partitioner) {
                Ok((views, how)) => partitioner::describe(topology, &views, &owned, how),
                Err(_) => crate::engine::partitioner::Partitioning {
                    partitions,
                    ranks: ranks as u32,
                    ..Default::default()
                },
            }
        },
        cycles,
        window_cycles: reps.iter().map(|r| r.window as f64).sum::<f64>() / k,
        messages: Messages {
            generated,
            delivered,
            lost,
            in_flight: generated - delivered - lost,
            measured: reps.iter().map(|r| r.measured).sum(),
        },
        latency: Latency {
            total: latency_total(cfg, reps, &lat, &net),
            definition: cfg.experiment.latency,
            phases: Phases {
                source_queue: dist(&mean_of(&|m| m.source_sum, &count), &src),
                network: dist(&mean_of(&|m| m.network_sum, &count), &net),
            },
        },
        throughput: Throughput {
            offered: reps.iter().map(|r| r.offered).sum::<f64>() / k,
            accepted: if acc_mean.is_finite() { acc_mean } else { 0.0 },
            accepted_ci95: acc_ci,
            offered_messages: reps.iter().map(|r| r.offered_messages).sum::<f64>() / k,
            accepted_messages: reps
                .iter()
                // Messages absorbed in the window (measured or not), like the flits of
                // `accepted`: not the measured messages eventually delivered.
                .map(|r| {
                    r.msgs.window_absorbed as f64
                        / (topology.endpoints().len() as f64 * r.window.max(1) as f64)
                })
                .sum::<f64>()
                / k,
            capacity: topology.capacity_of_links(
                cfg.links.width,
                cfg.links.duplex == crate::config::Duplex::Half,
            ),
        },
        controller: Controller {
            servers: cfg.router.controller.servers,
            arrival_rate: reps.iter().map(|r| r.ctrl.0).sum::<f64>() / k,
            utilization: reps.iter().map(|r| r.ctrl.1).sum::<f64>() / k,
            wait_mean: avg(reps.iter().map(|r| r.ctrl.2)),
            wait_mg1: if reps
                .iter()
                .all(|r| r.ctrl.3.is_some() || r.ctrl.2.is_none())
            {
                avg(reps.iter().map(|r| r.ctrl.3))
            } else {
                None
            },
            service_mean: avg(reps.iter().map(|r| r.ctrl.4)),
            service_m2: avg(reps.iter().map(|r| r.ctrl.5)),
            p_busy_at_arrival: avg(reps.iter().map(|r| r.ctrl_arrivals.p_busy)),
            chained_fraction: avg(reps.iter().map(|r| r.ctrl_arrivals.chained)),
            wait_corrected: ctrl_corrected(cfg, reps),
            p_busy_corrected: avg(reps.iter().map(|r| {
                let f = r.ctrl_arrivals.chained?;
                let rho = r.ctrl.1;
                Some(crate::foundation::mg1::chained_busy(
                    rho,
                    f,
                    chain_delta(cfg),
                ))
            }))
            .filter(|_| cfg.router.controller.servers == 1),
        },
        mode: M::report(ModeContext { cfg, topology }, reps),
        topology: TopologyInfo {
            description: topology.describe(),
            nodes: topology.nodes(),
            degree: topology.degree(),
            channels: topology.channels(),
            links: topology.links(),
            diameter: topology.diameter(),
            mean_distance: topology.mean_distance(),
        },
        saturated: reps
            .iter()
            .any(|r| r.stop == Stop::Saturated || r.overloaded),
        deadlock,
        wall_seconds: wall,
        node_cycles_per_second: if wall > 0.0 {
            cycles as f64 * topology.nodes() as f64 / wall
        } else {
            0.0
        },
        links: None,
        link_totals: None,
        routers: None,
        series: None,
    }
}
