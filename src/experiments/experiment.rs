//! Experiment control: independent replications of warm-up, measurement window and
//! drain (`engine::replication`), side by side on `experiment.jobs` workers, and their
//! aggregation into a [`Report`].

use crate::config::HwConfig;
use crate::engine::machine::validate;
use crate::engine::network::ModeContext;
use crate::engine::parallel::partitions_for;
use crate::engine::partitioner;
use crate::engine::probe::observe::{RepObs, SeriesAcc};
use crate::engine::probe::{histogram, MsgStats};
use crate::engine::replication::{avg, per_message, RepResult};
use crate::engine::run::run_replication;
use crate::engine::sim::Stop;
use crate::foundation::ci::Dist;
use crate::foundation::ci::{dist, mean_ci};
use crate::foundation::error::Result;
use crate::foundation::types::Cycle;
use crate::router::controller::chain_delta;
use crate::stats::latency_dist::LatencyHistograms;
use crate::stats::msglog::RepLog;
use crate::stats::observe::{self, LinkRow, LinkTotals, RouterRow};
use crate::stats::report::{
    self, Controller, Deadlock, Latency, Messages, Phases, RepVerdict, Report, Span, Throughput,
    TopologyInfo,
};
use crate::switching::{with_mode, Mode, WithMode};
use crate::topology::Topology;
use hdrhistogram::Histogram;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Mutex;
use std::time::Instant;

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
/// (mean, max), on `topo` (its nodes; its links' kinds); at most `max_links` links and
/// routers listed.
pub(crate) fn link_arrays(
    obs: &[(&RepObs, (f64, f64))],
    max_links: Option<u32>,
    topo: &Topology,
) -> LinkArrays {
    let only: Vec<&RepObs> = obs.iter().map(|(o, _)| *o).collect();
    // Rows are built for the links listed, and for every link only when a heat map
    // could draw them: a huge network's rows would cost memory for nothing.
    let util = observe::link_utilization(&only);
    let kinds = only
        .first()
        .map_or_else(Vec::new, |o| observe::link_kinds(o, topo));
    let keep = observe::busiest(&util, max_links);
    let all_links = if util.len() <= observe::MAX_DRAWN_LINKS {
        let all: Vec<usize> = (0..util.len()).collect();
        observe::link_rows(&only, &all, &kinds)
    } else {
        Vec::new()
    };
    let nodes = topo.nodes();
    let routers = observe::busiest(&observe::router_load(&only, nodes), max_links);
    LinkArrays {
        links: observe::link_rows(&only, &keep, &kinds),
        link_totals: observe::link_totals(obs, keep.len(), &kinds),
        routers: observe::router_rows(&only, nodes, &routers),
        all_totals: observe::link_totals(obs, all_links.len(), &kinds),
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

/// Partitions a run of `cfg` steps on: [`crate::engine::parallel::partitions_for`] with its node count, switching
/// mode and `experiment.threads`.
pub fn partitions_of(cfg: &HwConfig) -> Result<usize> {
    let nodes = validate(cfg)?.topology.nodes();
    struct Parts(usize, usize, Option<usize>);
    impl WithMode for Parts {
        type Output = usize;
        fn run<N: Mode + Send>(self) -> usize {
            partitions_for::<N>(self.0, self.1, self.2)
        }
    }
    let e = &cfg.experiment;
    Ok(with_mode(
        &cfg.switching,
        Parts(
            nodes,
            e.threads as usize,
            e.partition_min_nodes.map(|m| m as usize),
        ),
    ))
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
        fn run<N: Mode + Send>(self) -> Self::Output {
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
    /// (`presentation::heatmap::MAX_DRAWN_LINKS`).
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

fn run_reps<N: Mode + Send>(
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
    Ok(aggregate_observed::<N>(
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
pub fn aggregate_observed<N: Mode>(
    cfg: &HwConfig,
    topology: &Topology,
    reps: &mut [RepResult<N::Measures>],
    deadlock: Option<Deadlock>,
    wall: f64,
) -> (Report, Extras) {
    let mut report = aggregate::<N>(cfg, topology, reps, deadlock, wall);
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
        let a = link_arrays(&obs, o.max_links, topology);
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
pub fn aggregate<N: Mode>(
    cfg: &HwConfig,
    topology: &Topology,
    reps: &[RepResult<N::Measures>],
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
    let verdicts = verdicts(cfg, topology, reps);
    let saturated: Vec<&RepVerdict> = verdicts
        .iter()
        .filter(|v| v.cause.as_deref().is_some_and(|c| c != "deadlock"))
        .collect();
    Report {
        schema: report::SCHEMA,
        config: cfg.clone(),
        seed: cfg.experiment.seed,
        replications: reps.len() as u32,
        threads: partitions,
        partitioning: {
            let ranks = crate::engine::transport::current().map_or(1, |t| t.ranks());
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
        request_reply: cfg
            .workload
            .reply
            .as_ref()
            .map(|_| report::RequestReply::of(reps)),
        throughput: Throughput {
            offered: reps.iter().map(|r| r.offered).sum::<f64>() / k,
            accepted: if acc_mean.is_finite() { acc_mean } else { 0.0 },
            accepted_ci95: acc_ci,
            offered_messages: reps.iter().map(|r| r.offered_messages).sum::<f64>() / k,
            // Messages absorbed in the window (measured or not), like the flits of
            // `accepted`: not the measured messages eventually delivered.
            accepted_messages: reps.iter().map(|r| r.accepted_messages).sum::<f64>() / k,
            capacity: capacity(cfg, topology),
            pattern_bound: pattern_bound(cfg, topology),
            over: if reps.iter().any(|r| r.over_run) {
                Span::Run
            } else {
                Span::Window
            },
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
        mode: N::report(ModeContext { cfg, topology }, reps),
        topology: TopologyInfo {
            description: topology.describe(),
            nodes: topology.nodes(),
            degree: topology.degree(),
            channels: topology.channels(),
            links: topology.links(),
            diameter: topology.diameter(),
            mean_distance: topology.mean_distance(),
            endpoint: topology.endpoint_noun(),
        },
        saturated: !saturated.is_empty(),
        saturation_reason: saturated.first().map(|v| {
            if reps.len() > 1 {
                format!("replication {}: {}", v.replication, v.reason)
            } else {
                v.reason.clone()
            }
        }),
        verdicts,
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

/// The machine's uniform-traffic bound in flits per node per cycle (the report's
/// `throughput.capacity`): the topology's bound per one-flit channel, times the link
/// width, halved on half-duplex links, times the lanes of a link where each lane is a
/// channel of its own (deflection's virtual channels are paper 003's full-rate lanes,
/// so 8 lanes carry 8 flits per cycle; the other modes' VCs share their link).
pub fn capacity(cfg: &HwConfig, topology: &crate::topology::Topology) -> f64 {
    let lanes = match cfg.switching {
        crate::config::SwitchingConfig::Deflection { .. } => cfg.router.vcs.max(1),
        _ => 1,
    };
    topology.capacity_of_links(
        cfg.links.width,
        cfg.links.duplex == crate::config::Duplex::Half,
    ) * lanes as f64
}

/// Every replication's saturation verdict by the run's rule (`experiments::verdict`:
/// the saturation search's defaults and `experiment.latency_threshold`).
fn verdicts<M>(
    cfg: &HwConfig,
    topology: &crate::topology::Topology,
    reps: &[RepResult<M>],
) -> Vec<RepVerdict> {
    use crate::experiments::verdict::{judge, Measured, Rule};
    let rule = Rule::of_run(cfg);
    // Flits per message in the network (requests and replies together under
    // request/reply traffic), which turns the backlog's growth into flits.
    let mean_length = crate::traffic::flits_per_creation(&cfg.workload).map_or(1.0, |f| {
        f / if cfg.workload.reply.is_some() {
            2.0
        } else {
            1.0
        }
    });
    let endpoints = topology.endpoints().len() as f64;
    reps.iter()
        .enumerate()
        .map(|(i, r)| {
            let v = judge(&rule, &Measured::of(cfg, r, mean_length, endpoints), None);
            RepVerdict {
                replication: i as u32,
                sustained: v.sustained,
                cause: v.cause.map(|c| {
                    serde_json::to_value(c)
                        .ok()
                        .and_then(|x| x.as_str().map(str::to_string))
                        .unwrap_or_default()
                }),
                reason: v.reason,
            }
        })
        .collect()
}

/// The workload's own bound in flits/node/cycle (the report's `throughput.pattern_bound`):
/// wormhole switching's channel loads under the configured routing function, where
/// `routing::channel_load` computes them; None elsewhere.
pub fn pattern_bound(cfg: &HwConfig, topology: &crate::topology::Topology) -> Option<f64> {
    let crate::config::SwitchingConfig::Wormhole {
        routing, torus_tie, ..
    } = cfg.switching
    else {
        return None;
    };
    let pattern =
        crate::traffic::DestPattern::new(&cfg.workload.pattern, topology, cfg.experiment.seed)
            .ok()?
            .with_fixed_points(cfg.workload.fixed_points);
    let load = crate::routing::channel_load::channel_load(topology, &pattern, routing, torus_tie)?;
    load.bound(capacity_per_channel(cfg, topology))
}

/// Flits a channel carries per cycle: the link width, halved on half-duplex links that
/// carry both directions.
pub fn capacity_per_channel(cfg: &HwConfig, topology: &crate::topology::Topology) -> f64 {
    let half = cfg.links.duplex == crate::config::Duplex::Half;
    topology.capacity_of_links(cfg.links.width, half) / topology.capacity()
}
