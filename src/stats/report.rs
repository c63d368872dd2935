//! The JSON report of a run (schema `routemu.run/1`) and its human summary. Field names
//! and units are a stable contract (DESIGN.md "Command line and output"): times in
//! cycles, throughputs in flits (or messages) per node per cycle. Quantities that do not
//! exist for a run (a confidence interval from one replication, a latency when nothing
//! was measured) are `null`, never NaN or a string.

use crate::config::HwConfig;
use crate::engine::partitioner::Partitioning;
use crate::foundation::ci::Dist;
use crate::switching::report::{num4, Circuit, Deflection, ModeReport, Timeout, Wormhole};
use serde::Serialize;
use std::fmt::Write;

/// Schema identifier written in every report.
pub const SCHEMA: &str = "routemu.run/1";

/// Message latency and its phases.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Latency {
    /// The message latency as `definition` says (by default creation to tail absorbed).
    #[serde(flatten)]
    pub total: Dist,
    /// Which definition `total` uses (`experiment.latency`).
    pub definition: crate::config::LatencyDef,
    /// The phases that add up to it.
    pub phases: Phases,
}

/// Phases of the message latency.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Phases {
    /// Creation to the head leaving the source router (memory queue, DMA, controller).
    pub source_queue: Dist,
    /// Head leaving the source router to tail absorbed.
    pub network: Dist,
}

/// Request/reply traffic (`workload.reply`): the latency of each message class and of
/// the round trip. Latencies run from creation to the tail absorbed whatever
/// `experiment.latency` says; a reply is created when its request's tail is absorbed.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct RequestReply {
    /// Requests (class 0): creation to tail absorbed.
    pub requests: ClassLatency,
    /// Replies (class 1): creation (the request's tail absorbed) to tail absorbed.
    pub replies: ClassLatency,
    /// Round trip: the request's creation to its reply's tail absorbed (counted with
    /// the replies).
    pub round_trip: ClassLatency,
}

/// One message class's latency, with the measured messages it is over.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct ClassLatency {
    /// The latency (cycles).
    #[serde(flatten)]
    pub latency: Dist,
    /// Measured messages delivered, summed over replications.
    pub delivered: u64,
}

impl RequestReply {
    /// The block of replications that ran request/reply traffic (of none: every
    /// latency null, the shape a sweep reads its quantities from).
    pub fn of<M>(reps: &[crate::engine::replication::RepResult<M>]) -> Self {
        use crate::engine::probe::classes::{ClassStats, Latency};
        let classes: Vec<&ClassStats> = reps
            .iter()
            .filter_map(|r| r.msgs.classes.as_deref())
            .collect();
        let class = |f: &dyn Fn(&ClassStats) -> &Latency| {
            let mut all = crate::engine::probe::histogram();
            let mut means = Vec::new();
            let mut delivered = 0;
            for c in &classes {
                let l = f(c);
                let _ = all.add(&l.hist);
                means.extend(l.mean());
                delivered += l.count;
            }
            ClassLatency {
                latency: crate::foundation::ci::dist(&means, &all),
                delivered,
            }
        };
        RequestReply {
            requests: class(&|c| &c.requests),
            replies: class(&|c| &c.replies),
            round_trip: class(&|c| &c.round_trip),
        }
    }
}

/// Message counts, summed over replications.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Messages {
    /// Created.
    pub generated: u64,
    /// Delivered (tail absorbed).
    pub delivered: u64,
    /// Refused by a full source memory and never sent (deflection's `max_pending`).
    pub lost: u64,
    /// Created, not lost, and not delivered when the run stopped.
    pub in_flight: u64,
    /// Created inside the measurement window (the measured set).
    pub measured: u64,
}

/// Throughputs in the measurement window (or over the cycles run, see `over`), per node
/// that creates and receives messages: every node, or the hosts of a host/switch network
/// (paper 002), where a throughput is then the fraction of a host link's capacity.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Throughput {
    /// Flits created per node per cycle.
    pub offered: f64,
    /// Flits absorbed per node per cycle.
    pub accepted: f64,
    /// 95% half-width of `accepted` over replications.
    pub accepted_ci95: Option<f64>,
    /// Messages created per node per cycle.
    pub offered_messages: f64,
    /// Messages absorbed per node per cycle.
    pub accepted_messages: f64,
    /// Uniform-traffic bound of the machine in flits/node/cycle: the topology's bound
    /// scaled by the link width and halved on half-duplex links (see
    /// [`crate::topology::Topology::capacity_of_links`]).
    pub capacity: f64,
    /// The workload's own bound in flits/node/cycle: the largest `offered` load whose
    /// channel loads, the pattern routed by the configured routing function, stay within
    /// a channel's capacity (`routing::channel_load`; under adaptive routing, with the
    /// load split evenly over the minimal ports at each hop). Null where it is not
    /// computed (switching other than wormhole, host/switch and Manhattan Street
    /// networks, networks over `routing::channel_load::MAX_NODES` nodes).
    pub pattern_bound: Option<f64>,
    /// What the throughputs are measured over: `window` (the measurement window), or
    /// `run` (every cycle run, warm-up included: a replication stopped before its window
    /// opened, saturated during warm-up, measured nothing in it).
    pub over: Span,
}

/// What a report's throughputs are measured over.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Span {
    /// The measurement window.
    #[default]
    Window,
    /// Every cycle run, warm-up included (some replication stopped before its window).
    Run,
}

/// One replication's saturation verdict (`experiments::verdict`).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RepVerdict {
    /// The replication.
    pub replication: u32,
    /// Whether it sustained its load.
    pub sustained: bool,
    /// Why not, as a short name (`guard`, `backlog`, `overloaded`, `lost`,
    /// `latency_threshold`, `deadlock`); null when sustained.
    pub cause: Option<String>,
    /// The verdict in words: the test that failed, or those that passed.
    pub reason: String,
}

/// Routing-controller measurements (every node together).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Controller {
    /// Servers per node.
    pub servers: u32,
    /// Requests per node per cycle.
    pub arrival_rate: f64,
    /// Busy fraction of the servers.
    pub utilization: f64,
    /// Mean service time (cycles).
    pub service_mean: Option<f64>,
    /// Second moment of the service time.
    pub service_m2: Option<f64>,
    /// Measured mean wait in the queue.
    pub wait_mean: Option<f64>,
    /// Pollaczek–Khinchine mean wait from each node's measured arrival rate and service
    /// moments, averaged with the nodes' arrivals as weights (single-server controllers;
    /// null otherwise or when a node's controller is saturated).
    pub wait_mg1: Option<f64>,
    /// Fraction of requests that found every server busy on arrival; ρ (`utilization`)
    /// if arrivals saw time averages (PASTA), more when they follow departures.
    pub p_busy_at_arrival: Option<f64>,
    /// Fraction of requests that were chained: under hold, set-ups that inherited a
    /// link and reach the next node right behind the previous holder's release.
    pub chained_fraction: Option<f64>,
    /// `wait_mg1` corrected for the chained requests (`foundation::mg1::chained_wait`):
    /// each node's P-K wait + δ·K from its measured rate, moments and chained fraction,
    /// δ = D_release − D_link_conn under circuit switching (0 elsewhere), averaged like
    /// `wait_mg1` (null where it is).
    pub wait_corrected: Option<f64>,
    /// The fraction of arrivals finding the server busy the same correction predicts:
    /// ρ + f·(1 − ρ) with f = `chained_fraction` (ρ when δ = 0).
    pub p_busy_corrected: Option<f64>,
}

/// What the topology is.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct TopologyInfo {
    /// Description.
    pub description: String,
    /// Nodes.
    pub nodes: usize,
    /// Network ports per node.
    pub degree: usize,
    /// Unidirectional channels.
    pub channels: usize,
    /// Physical links.
    pub links: usize,
    /// Diameter.
    pub diameter: u32,
    /// Mean distance between distinct nodes.
    pub mean_distance: f64,
    /// What the per-endpoint figures (throughputs, counts) are per: "node", "host" (a
    /// host/switch network) or "terminal" (a concentrated network).
    pub endpoint: &'static str,
}

/// A deadlock report.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Deadlock {
    /// Replication in which it happened.
    pub replication: u32,
    /// Cycle at which the watchdog fired.
    pub cycle: u64,
    /// Which channels wait on which.
    pub description: String,
}

/// The result of `routemu run`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Report {
    /// Schema identifier.
    pub schema: &'static str,
    /// The effective configuration (file + overrides + flags).
    pub config: HwConfig,
    /// Seed.
    pub seed: u64,
    /// Replications run.
    pub replications: u32,
    /// Threads used.
    pub threads: u32,
    /// How the network was split (partitions, MPI ranks, the links they cut).
    pub partitioning: Partitioning,
    /// Cycles simulated, summed over replications (warm-up, window and drain).
    pub cycles: u64,
    /// Mean length of the measurement window.
    pub window_cycles: f64,
    /// Message counts.
    pub messages: Messages,
    /// Message latency (every message class together).
    pub latency: Latency,
    /// Request/reply traffic's latencies per class and of the round trip (absent
    /// without `workload.reply`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub request_reply: Option<RequestReply>,
    /// Throughput.
    pub throughput: Throughput,
    /// Routing controller.
    pub controller: Controller,
    /// The switching mode's own block, under the mode's name (`wormhole`, `circuit`,
    /// `deflection`).
    #[serde(flatten)]
    pub mode: ModeReport,
    /// Topology facts.
    pub topology: TopologyInfo,
    /// True when a replication did not sustain its load by the saturation verdict
    /// (`experiments::verdict`: the engine's guard, refused messages, a growing backlog,
    /// messages piling up, `experiment.latency_threshold`; docs/saturation.md).
    pub saturated: bool,
    /// Why: the first saturated replication's reason, prefixed by its number when the
    /// run has several (null when not saturated).
    pub saturation_reason: Option<String>,
    /// Every replication's verdict, in replication order.
    pub verdicts: Vec<RepVerdict>,
    /// Set when the deadlock watchdog stopped the run.
    pub deadlock: Option<Deadlock>,
    /// Wall-clock time of the emulation.
    pub wall_seconds: f64,
    /// Nodes × cycles simulated per wall-clock second.
    pub node_cycles_per_second: f64,
    /// Per-link measurements (`experiment.observe.per_link`; docs/measurements.md): the
    /// busiest `max_links` links, in node order.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub links: Option<Vec<crate::stats::observe::LinkRow>>,
    /// Totals over every link, which `links` adds up to.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub link_totals: Option<crate::stats::observe::LinkTotals>,
    /// Per-router measurements (`experiment.observe.per_link`): controller and buffers.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub routers: Option<Vec<crate::stats::observe::RouterRow>>,
    /// The time series (`experiment.observe.interval`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub series: Option<Vec<crate::stats::observe::SeriesRow>>,
}

fn num(x: Option<f64>) -> String {
    x.map(|v| format!("{v:.2}")).unwrap_or_else(|| "n/a".into())
}

fn pm(d: &Dist) -> String {
    match d.ci95 {
        Some(h) => format!("{} ± {:.2}", num(d.mean), h),
        None => num(d.mean),
    }
}

fn int(x: Option<u64>) -> String {
    x.map(|v| v.to_string()).unwrap_or_else(|| "n/a".into())
}

impl Report {
    /// The wormhole block, for wormhole runs.
    pub fn wormhole(&self) -> Option<&Wormhole> {
        match &self.mode {
            ModeReport::Wormhole(w) => Some(w),
            _ => None,
        }
    }

    /// The circuit block, for circuit-switched runs.
    pub fn circuit(&self) -> Option<&Circuit> {
        match &self.mode {
            ModeReport::Circuit(c) => Some(c),
            _ => None,
        }
    }

    /// The deflection block, for deflection (WDVC) runs.
    pub fn deflection(&self) -> Option<&Deflection> {
        match &self.mode {
            ModeReport::Deflection(d) => Some(d),
            _ => None,
        }
    }

    /// The timeout block, for timeout (paper 002) runs.
    pub fn timeout(&self) -> Option<&Timeout> {
        match &self.mode {
            ModeReport::Timeout(t) => Some(t),
            _ => None,
        }
    }

    /// The human summary printed on stdout.
    pub fn summary(&self) -> String {
        let mut s = String::new();
        let c = &self.config;
        let name = if c.name.is_empty() {
            "(unnamed)"
        } else {
            &c.name
        };
        let _ = writeln!(s, "routemu run: {name} — {}", self.topology.description);
        let _ = writeln!(
            s,
            "  {} nodes, {} replication(s), seed {}, {} thread(s), {} cycles simulated",
            self.topology.nodes, self.replications, self.seed, self.threads, self.cycles
        );
        let _ = writeln!(
            s,
            "  messages: {} generated, {} delivered, {} in flight, {} measured",
            self.messages.generated,
            self.messages.delivered,
            self.messages.in_flight,
            self.messages.measured
        );
        let l = &self.latency.total;
        let _ = writeln!(
            s,
            "  latency (cycles): mean {}  p50 {}  p90 {}  p99 {}  max {}",
            pm(l),
            int(l.p50),
            int(l.p90),
            int(l.p99),
            int(l.max)
        );
        let _ = writeln!(
            s,
            "    source queue {}   network {}",
            pm(&self.latency.phases.source_queue),
            pm(&self.latency.phases.network)
        );
        if let Some(rr) = &self.request_reply {
            for (name, c) in [
                ("requests", &rr.requests),
                ("replies", &rr.replies),
                ("round trip", &rr.round_trip),
            ] {
                let l = &c.latency;
                let _ = writeln!(
                    s,
                    "    {name:<10} mean {}  p50 {}  p90 {}  p99 {}  max {}  ({} measured)",
                    pm(l),
                    int(l.p50),
                    int(l.p90),
                    int(l.p99),
                    int(l.max),
                    c.delivered
                );
            }
        }
        let t = &self.throughput;
        let _ = writeln!(
            s,
            "  throughput (flits/{}/cycle): offered {:.4}  accepted {:.4}  (capacity {:.3}{}){}",
            self.topology.endpoint,
            t.offered,
            t.accepted,
            t.capacity,
            t.pattern_bound
                .map_or(String::new(), |b| format!(", this pattern {b:.3}")),
            match t.over {
                Span::Window => "",
                Span::Run => " over the cycles run: saturated before the window opened",
            }
        );
        if let Some(w) = self.wormhole() {
            let _ = writeln!(
                s,
                "  blocking per hop {}  hops {}  ejection wait {}  link utilisation mean {:.3} max {:.3}",
                num(w.blocking_per_hop),
                num(w.hops_mean),
                num(w.ejection_wait),
                w.link_utilization_mean,
                w.link_utilization_max
            );
        }
        // Dragonfly, flattened butterfly: the links' utilisation by kind (`--per-link`).
        if let Some(line) = self.link_totals.as_ref().and_then(|t| t.by_kind_line()) {
            let _ = writeln!(s, "  {line}");
        }
        if let Some(d) = self.deflection() {
            d.summary(&mut s);
        }
        if let Some(t) = self.timeout() {
            t.summary(&mut s);
        }
        if let Some(c) = self.circuit() {
            let p = &c.phases;
            let _ = writeln!(
                s,
                "    circuit phases: set-up {}  ack {}  data {}  release {}",
                pm(&p.setup),
                pm(&p.ack),
                pm(&p.data),
                pm(&p.release)
            );
            let by = &c.p_conflict_by_phase;
            let _ = writeln!(
                s,
                "  {} strategy: aborts/message {}  P_conflict {} (holder in set-up {} ack {} data {} release {})",
                c.strategy,
                num(c.aborts_per_message),
                num4(c.p_conflict),
                num4(by.setup),
                num4(by.ack),
                num4(by.data),
                num4(by.release)
            );
            let h = &c.links_held_fraction;
            let _ = writeln!(
                s,
                "  links held (fraction of {}): set-up {:.4} ack {:.4} data {:.4} release {:.4}; link wait/message {}",
                c.links,
                h.setup,
                h.ack,
                h.data,
                h.release,
                num(c.link_wait_per_message)
            );
        }
        let k = &self.controller;
        // Deflection and timeout switches have no routing-controller queue to report.
        if self.deflection().is_none() && self.timeout().is_none() {
            let _ = writeln!(
                s,
                "  routing controller: λ {:.4}/cycle  ρ {:.3}  wait measured {}  P-K {}  corrected {}",
                k.arrival_rate,
                k.utilization,
                num(k.wait_mean),
                num(k.wait_mg1),
                num(k.wait_corrected)
            );
            let _ = writeln!(
                s,
                "    arrivals finding it busy {} (ρ {:.4}; corrected {}); chained {}",
                num(k.p_busy_at_arrival),
                k.utilization,
                num(k.p_busy_corrected),
                num(k.chained_fraction)
            );
        }
        if self.saturated {
            let _ = writeln!(
                s,
                "  SATURATED: the offered load exceeds what the network accepts — {}",
                self.saturation_reason
                    .as_deref()
                    .unwrap_or("no reason recorded")
            );
        }
        if let Some(d) = &self.deadlock {
            let _ = writeln!(
                s,
                "  DEADLOCK in replication {} at cycle {}:\n{}",
                d.replication, d.cycle, d.description
            );
        }
        let _ = writeln!(
            s,
            "  {:.2} s wall, {:.2} M node-cycles/s",
            self.wall_seconds,
            self.node_cycles_per_second / 1e6
        );
        s
    }
}
