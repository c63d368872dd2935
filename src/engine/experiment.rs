//! Experiment control: independent replications of warm-up, measurement window and
//! drain, and their aggregation into a [`Report`]. Replication r uses the random streams
//! of (seed, r, node), so adding replications never changes the earlier ones.

use super::network::{NetMeasures, Network};
use super::parallel::{partitions_for, run_partitioned};
use super::sim::{Simulation, Stop};
use crate::config::validate::validate;
use crate::config::{HwConfig, SwitchingConfig};
use crate::error::Result;
use crate::router::controller::CtrlStats;
use crate::stats::ci::mean_ci;
use crate::stats::report::{
    self, Circuit, Controller, Deadlock, Dist, Latency, Messages, NodeController, PhaseSplit,
    Phases, Report, Throughput, TopologyInfo, Wormhole,
};
use crate::stats::{histogram, MsgStats};
use crate::switching::circuit::measure::CircuitStats;
use crate::switching::circuit::{CircuitMeasures, CircuitNet};
use crate::switching::wormhole::WormholeNet;
use crate::topology::Topology;
use crate::types::Cycle;
use hdrhistogram::Histogram;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Mutex;
use std::time::Instant;

/// What one replication measured, reduced to numbers.
#[derive(Clone, Debug)]
pub struct RepResult {
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
    /// Measured messages created.
    pub measured: u64,
    /// Flits created in the window per node per cycle.
    pub offered: f64,
    /// Flits absorbed in the window per node per cycle.
    pub accepted: f64,
    /// Messages created in the window per node per cycle.
    pub offered_messages: f64,
    /// Controller: requests per node per cycle, utilisation, mean wait, P-K wait,
    /// service mean and second moment.
    pub ctrl: (f64, f64, Option<f64>, Option<f64>, Option<f64>, Option<f64>),
    /// Link utilisation mean and max.
    pub links: (f64, f64),
    /// Per-node controller measurements (circuit switching; empty otherwise).
    pub ctrl_nodes: Vec<CtrlStats>,
    /// Circuit-switching measurements.
    pub circuit: Option<CircuitMeasures>,
    /// Partitions (threads) the replication ran on.
    pub partitions: u32,
}

/// Runs one replication of a machine on the routers of switching mode `N` to its end,
/// on as many partitions as `experiment.threads` asks for (and the network can use).
pub fn run_replication<N: Network + Send>(
    cfg: &HwConfig,
    rep: u32,
    progress: &mut dyn FnMut(Cycle),
) -> Result<(RepResult, Vec<Simulation<N>>)> {
    let nodes = validate(cfg)?.topology.nodes();
    let e = &cfg.experiment;
    let parts = partitions_for::<N>(
        nodes,
        e.threads as usize,
        e.partition_min_nodes.map(|m| m as usize),
    );
    let (sims, stop) = run_partitioned::<N>(cfg, rep, parts, progress)?;
    let r = reduce(&sims, stop);
    Ok((r, sims))
}

/// Pollaczek–Khinchine mean wait of a single-server queue from its arrival rate,
/// utilisation and measured second moment of service (None when saturated).
fn pk_wait(lambda: f64, rho: f64, m2: f64) -> Option<f64> {
    if lambda <= 0.0 {
        return Some(0.0);
    }
    let s = crate::model::mg1::Moments {
        mean: rho / lambda,
        second: m2,
    };
    crate::model::mg1::pk_wait(lambda, s).ok()
}

fn reduce<N: Network>(parts: &[Simulation<N>], stop: Stop) -> RepResult {
    let first = &parts[0];
    let n: f64 = parts.iter().map(|p| p.net.nodes() as f64).sum();
    let start = first.window.start;
    let t = first.t;
    let end = first.window.end.unwrap_or(t).min(t).max(start);
    let w = (end - start).max(1) as f64;
    let nservers = first.net.ctrl_servers() as f64;
    let (mut arr, mut wait, mut ssum, mut ssq, mut pk_weighted) = (0u64, 0u64, 0u64, 0u64, 0.0f64);
    let mut pk_ok = nservers == 1.0;
    for st in parts.iter().flat_map(|p| p.net.ctrl_stats()) {
        arr += st.arrivals;
        wait += st.wait_sum;
        ssum += st.service_sum;
        ssq += st.service_sq_sum;
        if st.arrivals > 0 {
            let lambda = st.arrivals as f64 / w;
            let rho = st.service_sum as f64 / w;
            let m2 = st.service_sq_sum as f64 / st.arrivals as f64;
            match pk_wait(lambda, rho, m2) {
                Some(x) => pk_weighted += st.arrivals as f64 * x,
                None => pk_ok = false,
            }
        }
    }
    let per = |x: u64| (arr > 0).then(|| x as f64 / arr as f64);
    let ctrl = (
        arr as f64 / (n * w),
        ssum as f64 / (n * nservers * w),
        per(wait),
        if pk_ok {
            per(0).map(|_| pk_weighted / arr as f64)
        } else {
            None
        },
        per(ssum),
        per(ssq),
    );
    let mut m = NetMeasures::default();
    let mut msgs = first.stats.clone();
    for (i, p) in parts.iter().enumerate() {
        m.add(&p.net.measures(start, end));
        if i > 0 {
            msgs.merge(&p.stats);
        }
    }
    let sum = |f: &dyn Fn(&Simulation<N>) -> u64| parts.iter().map(f).sum::<u64>();
    let circuit = parts
        .iter()
        .filter_map(|p| p.net.circuit_measures(start, end))
        .reduce(|mut a, b| {
            a.add(&b);
            a
        });
    RepResult {
        cycles: t,
        window: end - start,
        stop,
        msgs,
        generated: sum(&|p| p.generated),
        delivered: sum(&|p| p.net.delivered()),
        measured: sum(&|p| p.measured_created),
        offered: sum(&|p| p.window_flits) as f64 / (n * w),
        accepted: m.flits_accepted as f64 / (n * w),
        offered_messages: sum(&|p| p.window_messages) as f64 / (n * w),
        ctrl,
        links: m.utilization(),
        ctrl_nodes: if circuit.is_some() {
            parts
                .iter()
                .flat_map(|p| p.net.ctrl_stats().iter().copied())
                .collect()
        } else {
            Vec::new()
        },
        circuit,
        partitions: parts.len() as u32,
    }
}

fn dist(means: &[f64], h: &Histogram<u64>) -> Dist {
    let (mean, ci95) = mean_ci(means);
    let some = !h.is_empty();
    Dist {
        mean: mean.is_finite().then_some(mean),
        ci95: ci95.filter(|x| x.is_finite()),
        p50: some.then(|| h.value_at_quantile(0.5)),
        p90: some.then(|| h.value_at_quantile(0.9)),
        p99: some.then(|| h.value_at_quantile(0.99)),
        max: some.then(|| h.max()),
    }
}

fn avg(xs: impl Iterator<Item = Option<f64>>) -> Option<f64> {
    let v: Vec<f64> = xs.flatten().collect();
    (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
}

/// Runs every replication of `cfg` and builds the report. `progress` receives
/// (replication, cycle) now and then. Replications run `experiment.jobs` at a time, each
/// on `experiment.threads` partitions; neither changes the report.
pub fn run_experiment(
    cfg: &HwConfig,
    progress: &mut (dyn FnMut(u32, Cycle) + Send),
) -> Result<Report> {
    match cfg.switching {
        SwitchingConfig::Wormhole { .. } => run_reps::<WormholeNet>(cfg, progress),
        SwitchingConfig::Circuit { .. } => run_reps::<CircuitNet>(cfg, progress),
    }
}

/// Where a worker leaves a replication's result (and its last cycle).
type Slot = Mutex<Option<Result<(RepResult, Cycle)>>>;

fn run_reps<N: Network + Send>(
    cfg: &HwConfig,
    progress: &mut (dyn FnMut(u32, Cycle) + Send),
) -> Result<Report> {
    let topology = validate(cfg)?.topology;
    let started = Instant::now();
    let reps = cfg.experiment.replications;
    let jobs = (cfg.experiment.jobs.max(1)).min(reps) as usize;
    // Workers take replications in order and results are put back in replication order,
    // so the report is the same for any number of jobs. A deadlock ends the experiment:
    // replications after the first deadlocked one are not started (or are discarded).
    let next = AtomicU32::new(0);
    let first_deadlock = AtomicU32::new(u32::MAX);
    let slots: Vec<Slot> = (0..reps).map(|_| Mutex::new(None)).collect();
    let progress = Mutex::new(progress);
    let worker = || loop {
        let rep = next.fetch_add(1, Ordering::Relaxed);
        if rep >= reps || rep > first_deadlock.load(Ordering::Relaxed) {
            break;
        }
        let r = run_replication::<N>(cfg, rep, &mut |t| {
            if let Ok(mut p) = progress.try_lock() {
                (*p)(rep, t);
            }
        })
        .map(|(r, sims)| (r, sims[0].t));
        if matches!(&r, Ok((x, _)) if matches!(x.stop, Stop::Deadlock(_))) {
            first_deadlock.fetch_min(rep, Ordering::Relaxed);
        }
        *slots[rep as usize]
            .lock()
            .unwrap_or_else(|e| e.into_inner()) = Some(r);
    };
    if jobs <= 1 {
        worker();
    } else {
        std::thread::scope(|s| {
            for _ in 0..jobs {
                s.spawn(worker);
            }
        });
    }
    let last = first_deadlock.load(Ordering::Relaxed).min(reps - 1);
    let results: Vec<Result<(RepResult, Cycle)>> = slots
        .into_iter()
        .take(last as usize + 1)
        .map(|slot| {
            slot.into_inner()
                .unwrap_or_else(|e| e.into_inner())
                .expect("every replication up to the first deadlock ran")
        })
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
    Ok(aggregate(cfg, &topology, &done, deadlock, wall))
}

/// Combines replications into a report.
pub fn aggregate(
    cfg: &HwConfig,
    topology: &Topology,
    reps: &[RepResult],
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
    let mean_of = |f: &dyn Fn(&MsgStats) -> u64, d: &dyn Fn(&MsgStats) -> u64| -> Vec<f64> {
        reps.iter()
            .filter(|r| d(&r.msgs) > 0)
            .map(|r| f(&r.msgs) as f64 / d(&r.msgs) as f64)
            .collect()
    };
    let count = |m: &MsgStats| m.count;
    let hops = |m: &MsgStats| m.hops_sum;
    let blocking = mean_of(&|m| m.blocking_sum, &hops);
    let (blocking_mean, blocking_ci) = mean_ci(&blocking);
    let accepted: Vec<f64> = reps.iter().map(|r| r.accepted).collect();
    let (acc_mean, acc_ci) = mean_ci(&accepted);
    let k = reps.len().max(1) as f64;
    let cycles: u64 = reps.iter().map(|r| r.cycles).sum();
    let generated: u64 = reps.iter().map(|r| r.generated).sum();
    let delivered: u64 = reps.iter().map(|r| r.delivered).sum();
    let opt = |x: f64| x.is_finite().then_some(x);
    Report {
        schema: report::SCHEMA,
        config: cfg.clone(),
        seed: cfg.experiment.seed,
        replications: reps.len() as u32,
        threads: reps.iter().map(|r| r.partitions).max().unwrap_or(1),
        cycles,
        window_cycles: reps.iter().map(|r| r.window as f64).sum::<f64>() / k,
        messages: Messages {
            generated,
            delivered,
            in_flight: generated - delivered,
            measured: reps.iter().map(|r| r.measured).sum(),
        },
        latency: Latency {
            total: dist(&mean_of(&|m| m.latency_sum, &count), &lat),
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
                .map(|r| r.msgs.count as f64 / (topology.nodes() as f64 * r.window.max(1) as f64))
                .sum::<f64>()
                / k,
            capacity: topology.capacity(),
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
        },
        circuit: circuit_report(cfg, topology, reps),
        wormhole: reps.iter().all(|r| r.circuit.is_none()).then(|| Wormhole {
            blocking_per_hop: opt(blocking_mean),
            blocking_per_hop_ci95: blocking_ci,
            hops_mean: avg(mean_of(&hops, &count).into_iter().map(Some)),
            ejection_wait: avg(mean_of(&|m| m.eject_wait_sum, &count).into_iter().map(Some)),
            controller_wait_per_message: avg(mean_of(&|m| m.ctrl_wait_sum, &count)
                .into_iter()
                .map(Some)),
            link_utilization_mean: reps.iter().map(|r| r.links.0).sum::<f64>() / k,
            link_utilization_max: reps.iter().map(|r| r.links.1).fold(0.0, f64::max),
        }),
        topology: TopologyInfo {
            description: topology.describe(),
            nodes: topology.nodes(),
            degree: topology.degree(),
            channels: topology.channels(),
            links: topology.links(),
            diameter: topology.diameter(),
            mean_distance: topology.mean_distance(),
        },
        saturated: reps.iter().any(|r| r.stop == Stop::Saturated),
        deadlock,
        wall_seconds: wall,
        node_cycles_per_second: if wall > 0.0 {
            cycles as f64 * topology.nodes() as f64 / wall
        } else {
            0.0
        },
    }
}

/// The circuit block: per-replication means with confidence intervals, merged
/// histograms, and per-node controllers from the counts of every replication.
fn circuit_report(cfg: &HwConfig, topology: &Topology, reps: &[RepResult]) -> Option<Circuit> {
    let SwitchingConfig::Circuit { strategy, .. } = cfg.switching else {
        return None;
    };
    let ms: Vec<&CircuitMeasures> = reps.iter().filter_map(|r| r.circuit.as_ref()).collect();
    let first = ms.first()?;
    let links = first.links;
    let k = ms.len() as f64;
    let ratio = |num: &dyn Fn(&CircuitStats) -> u64, den: &dyn Fn(&CircuitStats) -> u64| {
        let (a, b): (u64, u64) = ms
            .iter()
            .map(|m| (num(&m.stats), den(&m.stats)))
            .fold((0, 0), |(x, y), (a, b)| (x + a, y + b));
        (b > 0).then(|| a as f64 / b as f64)
    };
    let per_rep = |num: &dyn Fn(&CircuitStats) -> u64| -> Vec<f64> {
        ms.iter()
            .filter(|m| m.stats.count > 0)
            .map(|m| num(&m.stats) as f64 / m.stats.count as f64)
            .collect()
    };
    let (aborts, aborts_ci) = mean_ci(&per_rep(&|s| s.aborts_sum));
    let held = |i: usize| {
        ms.iter()
            .map(|m| m.stats.held[i] as f64 / m.window.max(1) as f64)
            .sum::<f64>()
            / k
    };
    let held = PhaseSplit {
        setup: held(0),
        ack: held(1),
        data: held(2),
        release: held(3),
    };
    let frac = |x: f64| x / links.max(1) as f64;
    let mut hists = [
        histogram(),
        histogram(),
        histogram(),
        histogram(),
        histogram(),
    ];
    for m in &ms {
        let s = &m.stats;
        for (h, x) in hists
            .iter_mut()
            .zip([&s.setup, &s.ack, &s.data, &s.release, &s.ctrl_wait])
        {
            let _ = h.add(x);
        }
    }
    let phase_dist = |i: usize| dist(&per_rep(&|s| s.phase_sum[i]), &hists[i]);
    let wait_means: Vec<f64> = reps.iter().filter_map(|r| r.ctrl.2).collect();
    let controllers = (topology.nodes() <= 4096).then(|| {
        let windows: f64 = reps.iter().map(|r| r.window.max(1) as f64).sum();
        let servers = cfg.router.controller.servers as f64;
        (0..topology.nodes())
            .map(|node| {
                let mut st = CtrlStats::default();
                for r in reps {
                    if let Some(x) = r.ctrl_nodes.get(node) {
                        st.arrivals += x.arrivals;
                        st.wait_sum += x.wait_sum;
                        st.service_sum += x.service_sum;
                        st.service_sq_sum += x.service_sq_sum;
                    }
                }
                let a = st.arrivals as f64;
                let per = |x: u64| (st.arrivals > 0).then(|| x as f64 / a);
                let lambda = a / windows;
                let rho = st.service_sum as f64 / windows;
                NodeController {
                    node: node as u32,
                    arrival_rate: lambda,
                    service_mean: per(st.service_sum),
                    service_m2: per(st.service_sq_sum),
                    utilization: rho / servers,
                    wait_mean: per(st.wait_sum),
                    wait_mg1: per(st.service_sq_sum)
                        .filter(|_| servers == 1.0)
                        .and_then(|m2| pk_wait(lambda, rho, m2)),
                }
            })
            .collect()
    });
    Some(Circuit {
        strategy: format!("{strategy:?}"),
        links,
        aborts_per_message: aborts.is_finite().then_some(aborts),
        aborts_per_message_ci95: aborts_ci.filter(|x| x.is_finite()),
        aborts_max: ms.iter().map(|m| m.stats.aborts_max).max().unwrap_or(0),
        hold_timeouts: ms.iter().map(|m| m.stats.timeouts).sum(),
        p_conflict: ratio(&|s| s.conflicts.iter().sum(), &|s| s.requests),
        p_conflict_by_phase: PhaseSplit {
            setup: ratio(&|s| s.conflicts[0], &|s| s.requests),
            ack: ratio(&|s| s.conflicts[1], &|s| s.requests),
            data: ratio(&|s| s.conflicts[2], &|s| s.requests),
            release: ratio(&|s| s.conflicts[3], &|s| s.requests),
        },
        link_requests_per_message: ratio(&|s| s.requests, &|s| s.count),
        p_dma_conflict: ratio(&|s| s.dma_conflicts, &|s| s.dma_requests),
        links_held_fraction: PhaseSplit {
            setup: frac(held.setup),
            ack: frac(held.ack),
            data: frac(held.data),
            release: frac(held.release),
        },
        links_held: held,
        phases: PhaseSplit {
            setup: phase_dist(0),
            ack: phase_dist(1),
            data: phase_dist(2),
            release: phase_dist(3),
        },
        link_wait_per_message: ratio(&|s| s.link_wait_sum, &|s| s.count),
        controller_wait_per_message: ratio(&|s| s.ctrl_wait_msg_sum, &|s| s.count),
        controller_wait: Dist {
            mean: (!wait_means.is_empty())
                .then(|| wait_means.iter().sum::<f64>() / wait_means.len() as f64),
            ci95: mean_ci(&wait_means).1.filter(|x| x.is_finite()),
            ..dist(&[], &hists[4])
        },
        controllers,
    })
}
