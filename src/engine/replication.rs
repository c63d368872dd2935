//! One replication of a machine on the routers of a switching mode: its run to the end
//! on one or more partitions (here, over threads, or over MPI ranks through
//! `engine::distributed`), and its partitions' measurements reduced, in partition order,
//! to what it measured ([`RepResult`]): messages, throughput, the routing controllers
//! against their P-K prediction, links, the mode's own measures, observations in space.
//! Replication r uses the random streams of (seed, r, node), so adding replications never
//! changes the earlier ones. Aggregating replications into a report is
//! `experiments::experiment`'s.

use crate::engine::network::{ModeMeasures, NetMeasures, Network};
use crate::engine::probe::observe::{LinkObs, PortObs, RepObs};
use crate::engine::probe::MsgStats;
use crate::engine::sim::{Simulation, Stop};
use crate::foundation::types::Cycle;
use crate::router::controller::CtrlStats;
use crate::router::controller::{chained_coef, pk_wait};

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
    /// Messages absorbed in the window per node per cycle.
    pub accepted_messages: f64,
    /// The throughputs (`offered`, `accepted` and their messages) are over the cycles
    /// run, warm-up included, not over the window: the run stopped (saturated,
    /// interrupted) before its window opened, so the window holds nothing.
    pub over_run: bool,
    /// The growth of the source backlog over the window's check points (messages per
    /// cycle over the whole network, with its t-test; None: fewer than two samples):
    /// the saturation verdict's backlog test (`experiments::verdict`).
    pub backlog_growth: Option<crate::foundation::ci::Growth>,
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
    /// Flits created over the run (warm-up included).
    pub generated_flits: u64,
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
        // Replies the network created count with the workload's messages.
        let replies = sim.stats.replies_created();
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
            generated: sim.generated + replies.messages,
            delivered: sim.net.delivered(),
            lost: sim.net.lost(),
            measured_created: sim.measured_created + replies.measured,
            window_flits: sim.window_flits + replies.window_flits,
            window_messages: sim.window_messages + replies.window_messages,
            generated_flits: sim.generated_flits + replies.flits,
        }
    }
}

/// One replication's results from its partitions (in node order).
pub(crate) fn reduce<N: Network>(parts: &mut [Simulation<N>], stop: Stop) -> Replication<N> {
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
    // A run stopped before its window opened (saturated during warm-up) measured nothing
    // in the window: its throughputs are those of the cycles it ran, never 0/0.
    let over_run = end == start && t > 0;
    let (offered, accepted, offered_messages, accepted_messages) = if over_run {
        let per = |x: u64| x as f64 / (ends * t as f64);
        (
            per(sum(&|p| p.generated_flits)),
            per(msgs.flits_absorbed),
            per(sum(&|p| p.generated)),
            per(msgs.run_absorbed),
        )
    } else {
        // Per node that creates and receives messages (switches do neither).
        (
            sum(&|p| p.window_flits) as f64 / (ends * w),
            m.flits_accepted as f64 / (ends * w),
            sum(&|p| p.window_messages) as f64 / (ends * w),
            msgs.window_absorbed as f64 / (ends * w),
        )
    };
    RepResult {
        cycles: t,
        window: end - start,
        stop,
        generated: sum(&|p| p.generated),
        delivered: sum(&|p| p.delivered),
        lost: sum(&|p| p.lost),
        measured: sum(&|p| p.measured_created),
        offered,
        accepted,
        offered_messages,
        accepted_messages,
        over_run,
        backlog_growth: crate::foundation::ci::backlog_growth(&run.backlog_samples),
        msgs,
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
