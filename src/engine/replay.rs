//! Trace replay: messages read from a trace ([`crate::trace`]) are created at their
//! recorded times (open loop) or, in dependency-driven replay, when their recorded time
//! has come *and* every message they depend on has been delivered plus a gap (Netrace's
//! reference reader waits 8 cycles, its L2 latency). The trace is read no further than
//! the clock, so memory holds only what is in flight or waiting for its parents.
//!
//! A message enters its source's memory in the cycle it is created and then queues for
//! the network like any other; "behind" is how far its injection (head leaving the source)
//! runs after its recorded time. Replay steps the whole network on one partition (the
//! deliveries decide what is created next).
//!
//! Not here: the readers (`trace`), the command line (`cli::replay`).

use crate::config::HwConfig;
use crate::engine::network::Network;
use crate::engine::sim::Simulation;
use crate::error::{Error, Result};
use crate::stats::histogram;
use crate::trace::{SizeUnit, TraceMsg, TraceSource};
use crate::types::{Cycle, NodeId};
use hdrhistogram::Histogram;
use serde::Serialize;
use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};

/// When messages are created.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum ReplayMode {
    /// At the recorded times, dependencies ignored.
    Open,
    /// At the recorded times, but not before every parent was delivered plus the gap.
    Deps,
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
    /// Trace endpoint → node (None: identity).
    pub map: Option<Vec<u32>>,
    /// Stop with an error when messages are in flight and none is delivered for this
    /// many cycles (a deadlock, or a network far too slow for the trace).
    pub stall_cycles: Cycle,
}

impl Default for ReplayOptions {
    fn default() -> Self {
        ReplayOptions {
            mode: ReplayMode::Open,
            gap: 8,
            time_scale: 1.0,
            flit_bytes: 8,
            map: None,
            stall_cycles: 1_000_000,
        }
    }
}

/// One replayed message.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
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
}

/// What a replay measured.
#[derive(Clone, Debug, Serialize)]
pub struct ReplaySummary {
    /// The mode that ran.
    pub mode: ReplayMode,
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
}

struct Pending {
    msg: TraceMsg,
    recorded: Cycle,
}

struct InFlight {
    id: u64,
    src: u32,
    dst: u32,
    size: u64,
    flits: u32,
    recorded: Cycle,
    created: Cycle,
    children: Vec<u64>,
}

/// Replays `src` on the machine `cfg` (its synthetic workload is not used); `each` sees
/// every delivered message.
pub fn replay<N: Network>(
    cfg: &HwConfig,
    src: &mut dyn TraceSource,
    opts: &ReplayOptions,
    each: &mut dyn FnMut(&ReplayRecord) -> Result<()>,
) -> Result<ReplaySummary> {
    let mut cfg = cfg.clone();
    cfg.experiment.warmup = 0;
    cfg.experiment.idle_skip = true;
    let mut sim = Simulation::<N>::build(&cfg, 0)?;
    sim.stop_workload();
    sim.record_deliveries();
    let nodes = sim.net.nodes() as u32;
    let unit = src.unit();
    let name = src.describe();
    let node_of = |e: u32| -> Result<u32> {
        let n = match &opts.map {
            Some(m) => *m.get(e as usize).ok_or_else(|| {
                Error::Trace(format!("{name}: endpoint {e} is not in the node map"))
            })?,
            None => e,
        };
        if n >= nodes {
            return Err(Error::Trace(format!(
                "{name}: endpoint {e} maps to node {n}, outside the network's {nodes} nodes \
                 (give a node map that folds the trace's endpoints onto the network)"
            )));
        }
        Ok(n)
    };
    let scale = |time: u64| (time as f64 * opts.time_scale).round() as Cycle;
    let deps = opts.mode == ReplayMode::Deps;
    let mut next = src.next_msg()?;
    let first = next.as_ref().map_or(0, |m| scale(m.time));
    let mut last_recorded = first;
    // Dependency state: uncleared parents, the earliest creation their deliveries allow,
    // and messages read but still waiting.
    let mut parents: HashMap<u64, u32> = HashMap::new();
    let mut allowed: HashMap<u64, Cycle> = HashMap::new();
    let mut blocked: HashMap<u64, Pending> = HashMap::new();
    let mut due: BinaryHeap<Reverse<(Cycle, u64)>> = BinaryHeap::new();
    let mut ready: HashMap<u64, Pending> = HashMap::new();
    let mut flying: HashMap<u64, InFlight> = HashMap::new();
    let (mut read, mut delivered, mut flits) = (0u64, 0u64, 0u64);
    let mut lat: Histogram<u64> = histogram();
    let (mut behind_sum, mut behind_max) = (0u128, 0u64);
    let mut last_delivery = 0;
    let mut last_progress = sim.t;
    loop {
        let t = sim.t;
        if flying.is_empty() {
            // A stall is counted only while something is in flight.
            last_progress = t;
        }
        // Read what the clock has reached.
        while let Some(m) = next.take() {
            let recorded = scale(m.time);
            if recorded > t {
                next = Some(m);
                break;
            }
            read += 1;
            last_recorded = recorded;
            let id = m.id;
            if deps {
                for &c in &m.children {
                    *parents.entry(c).or_insert(0) += 1;
                }
            }
            let p = Pending { msg: m, recorded };
            if deps && parents.contains_key(&id) {
                blocked.insert(id, p);
            } else {
                let at = allowed.remove(&id).unwrap_or(0).max(recorded).max(t);
                due.push(Reverse((at, id)));
                ready.insert(id, p);
            }
            next = src.next_msg()?;
        }
        // Create what is due.
        while let Some(&Reverse((at, id))) = due.peek() {
            if at > t {
                break;
            }
            due.pop();
            let p = ready.remove(&id).expect("a due message is ready");
            let m = p.msg;
            let (s, d) = (node_of(m.src)?, node_of(m.dst)?);
            let f = match unit {
                SizeUnit::Bytes => m.size.div_ceil(opts.flit_bytes.max(1)),
                SizeUnit::Flits => m.size,
            }
            .clamp(1, u32::MAX as u64) as u32;
            let mid = sim.inject(NodeId(s), NodeId(d), f);
            flying.insert(
                mid.0,
                InFlight {
                    id: m.id,
                    src: s,
                    dst: d,
                    size: m.size,
                    flits: f,
                    recorded: p.recorded,
                    created: t,
                    children: if deps { m.children } else { Vec::new() },
                },
            );
        }
        sim.step_local();
        // Deliveries: records, and the children they clear.
        let done = sim
            .stats
            .deliveries
            .as_mut()
            .map(std::mem::take)
            .unwrap_or_default();
        for dv in done {
            let f = flying
                .remove(&dv.header.id.0)
                .expect("every delivered message was created by the replay");
            let rec = ReplayRecord {
                id: f.id,
                src: f.src,
                dst: f.dst,
                size: f.size,
                flits: f.flits,
                recorded: f.recorded,
                created: f.created,
                injected: dv.header.injected,
                delivered: dv.absorbed,
                latency: dv.absorbed - f.created,
            };
            let behind = rec.injected.saturating_sub(rec.recorded);
            behind_sum += behind as u128;
            behind_max = behind_max.max(behind);
            let _ = lat.record(rec.latency);
            delivered += 1;
            flits += f.flits as u64;
            last_delivery = last_delivery.max(dv.absorbed);
            last_progress = sim.t;
            each(&rec)?;
            for c in f.children {
                let at = allowed.entry(c).or_insert(0);
                *at = (*at).max(dv.absorbed + opts.gap);
                let left = parents.get_mut(&c).expect("a child counts its parents");
                *left -= 1;
                if *left == 0 {
                    parents.remove(&c);
                    if let Some(p) = blocked.remove(&c) {
                        let at = allowed
                            .remove(&c)
                            .unwrap_or(0)
                            .max(p.recorded)
                            .max(sim.t + 1);
                        due.push(Reverse((at, c)));
                        ready.insert(c, p);
                    }
                }
            }
        }
        // Where the clock goes next.
        let s = sim.summary();
        let upcoming = [
            s.next,
            due.peek().map_or(Cycle::MAX, |r| r.0 .0),
            next.as_ref().map_or(Cycle::MAX, |m| scale(m.time)),
        ]
        .into_iter()
        .min()
        .unwrap_or(Cycle::MAX);
        if upcoming == Cycle::MAX && flying.is_empty() {
            if blocked.is_empty() {
                break;
            }
            let mut ids: Vec<u64> = blocked.keys().copied().collect();
            ids.sort_unstable();
            ids.truncate(5);
            return Err(Error::Trace(format!(
                "{name}: {} messages wait for parents that never come (ids {ids:?}…): \
                 their parents are not in the trace (or in a region not replayed)",
                blocked.len()
            )));
        }
        if !flying.is_empty() && sim.t.saturating_sub(last_progress) > opts.stall_cycles {
            let oldest = flying
                .values()
                .min_by_key(|f| (f.created, f.id))
                .expect("in flight");
            return Err(Error::Trace(format!(
                "{name}: replay stalled at cycle {}: {} messages in flight and none delivered \
                 for {} cycles (the oldest, trace id {}, {} → {}, created at cycle {})",
                sim.t,
                flying.len(),
                opts.stall_cycles,
                oldest.id,
                oldest.src,
                oldest.dst,
                oldest.created
            )));
        }
        sim.advance(upcoming.max(t + 1), None);
    }
    let n = delivered.max(1) as f64;
    let some = !lat.is_empty();
    Ok(ReplaySummary {
        mode: opts.mode,
        messages: read,
        delivered,
        flits,
        cycles: last_delivery,
        latency_mean: some.then(|| lat.mean()),
        latency_p50: some.then(|| lat.value_at_quantile(0.5)),
        latency_p99: some.then(|| lat.value_at_quantile(0.99)),
        latency_max: some.then(|| lat.max()),
        behind_mean: some.then(|| behind_sum as f64 / n),
        behind_max: some.then_some(behind_max),
        recorded_span: last_recorded - first,
    })
}
