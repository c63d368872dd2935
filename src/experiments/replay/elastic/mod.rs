//! Elastic replay of an MPI trace: each rank is a program ([`crate::trace::program`]).
//! The time between a rank's return from one MPI call and its entry into the next is
//! compute, kept (scaled by `compute_scale`); the time inside a call that communicates
//! is replaced by the emulated network, with the call semantics of an MPI library:
//!
//! - a send of at most `eager_limit` bytes goes eagerly: its data is injected at once
//!   and the send completes (a synchronous send when the receiver acknowledges the
//!   match, a one-flit message back); a larger one goes by rendezvous: a one-flit RTS,
//!   a one-flit CTS once the receive is posted, then the data, and the send completes
//!   when the receiver's one-flit FIN says the data arrived (a buffered send completes
//!   at once either way). A message nobody receives goes eagerly whatever its size;
//! - a receive completes when its data has been delivered and it is posted (plus the
//!   receive overhead); waits and probes hold the rank until what they name completes;
//! - a call that does not communicate (Init, Finalize, communicator calls, …) keeps its
//!   recorded duration; so the application's run time moves with the network in both
//!   directions, and the recorded run time is the yardstick (`speedup`).
//!
//! Every rank starts its first call in cycle 0 (the ranks' clocks are not synchronised,
//! and a launch skew is not the application's). A message is seen by its receiver's
//! program in the cycle its tail is absorbed (the end of the latency the network reports).
//!
//! Partitions: each partition runs the ranks placed on its nodes (`ranks`); every
//! effect of a delivery is on the node that received it, so only the network's own
//! events cross partitions, and ranks (MPI processes) exchange once per stretch of the
//! network's lookahead (`step`). The measurements are gathered at the end, in
//! partition order, so the results depend on neither the thread count nor the rank count.
//!
//! Not here: building the programs (`mpi_semantics::matching`), the command line (`cli::replay`).

mod plan;
mod ranks;
mod step;

use crate::engine::network::Network;
use crate::engine::probe::histogram;
use crate::engine::replication::{PartResult, RunEnd};
use crate::experiments::experiment::Extras;
use crate::experiments::replay::{RankRow, ReplayMode, ReplayOptions, ReplayRecord, ReplaySummary};
use crate::foundation::error::{Error, Result};
use crate::foundation::types::Cycle;
use crate::stats::msglog::RepLog;
use crate::trace::program::{Program, RankProgram};
use plan::scale_ns;
use plan::NetPlan;
use ranks::{PartAcc, Ranks, SrcAcc};
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// The default eager limit, bytes (64 KiB: MPICH's and Open MPI's eager limits over fast
/// interconnects are 8–128 KiB; a what-if sets its own).
pub const DEFAULT_EAGER_LIMIT: u64 = 64 * 1024;

/// A host's cost of a message: `fixed + per_byte × bytes` cycles.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct Cost {
    /// Cycles per message.
    pub fixed: f64,
    /// Cycles per byte.
    pub per_byte: f64,
}

/// Host overheads (LogGP's o): the sender's before its message is injected (the rank
/// is busy meanwhile), the receiver's between the data's arrival and the receive's
/// completion.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct Overhead {
    /// Per send.
    pub send: Cost,
    /// Per receive.
    pub recv: Cost,
}

/// `FIXED[+PER_BYTE]` for both sides, or `send=FIXED[+PER_BYTE],recv=FIXED[+PER_BYTE]`
/// (either side may be left out: 0), in cycles and cycles per byte (`--overhead`).
impl std::str::FromStr for Overhead {
    type Err = String;
    fn from_str(spec: &str) -> std::result::Result<Overhead, String> {
        let cost = |c: &str| -> std::result::Result<Cost, String> {
            let (fixed, per) = c.split_once('+').unwrap_or((c, "0"));
            let num = |x: &str, what: &str| -> std::result::Result<f64, String> {
                match x.trim().parse::<f64>() {
                    Ok(v) if v >= 0.0 && v.is_finite() && v <= 1e12 => Ok(v),
                    _ => Err(format!(
                        "{what} `{x}` is not a number of cycles from 0 to 1e12"
                    )),
                }
            };
            Ok(Cost {
                fixed: num(fixed, "the fixed overhead")?,
                per_byte: num(per, "the overhead per byte")?,
            })
        };
        let bad = || {
            format!(
                "`{spec}`: give FIXED[+PER_BYTE] (cycles, cycles per byte) or \
             send=FIXED[+PER_BYTE],recv=FIXED[+PER_BYTE]"
            )
        };
        if !spec.contains('=') {
            let c = cost(spec).map_err(|e| format!("{}: {e}", bad()))?;
            return Ok(Overhead { send: c, recv: c });
        }
        let mut o = Overhead::default();
        let mut seen = (false, false);
        for part in spec.split(',') {
            let (side, c) = part.split_once('=').ok_or_else(bad)?;
            let c = cost(c).map_err(|e| format!("{}: {e}", bad()))?;
            match side.trim() {
                "send" if !seen.0 => (o.send, seen.0) = (c, true),
                "recv" if !seen.1 => (o.recv, seen.1) = (c, true),
                _ => return Err(bad()),
            }
        }
        Ok(o)
    }
}

/// How an MPI trace is replayed elastically.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ElasticOptions {
    /// Largest message sent eagerly, bytes.
    pub eager_limit: u64,
    /// Factor on every compute interval (0.5: a processor twice as fast).
    pub compute_scale: f64,
    /// Host overheads.
    pub overhead: Overhead,
}

impl Default for ElasticOptions {
    fn default() -> Self {
        ElasticOptions {
            eager_limit: DEFAULT_EAGER_LIMIT,
            compute_scale: 1.0,
            overhead: Overhead::default(),
        }
    }
}

/// The wait that released a rank last: the critical path's last edge when the rank
/// is the last to finish.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Critical {
    /// The MPI call it waited in.
    pub call: String,
    /// Its index among the rank's calls (from 0).
    pub call_index: u64,
    /// The message whose completion released it (None: a receive nothing matched).
    pub message: Option<u64>,
    /// The rank at the other end of that message.
    pub peer: Option<u32>,
    /// Cycles it waited in that operation.
    pub waited: u64,
    /// Cycle it was released.
    pub released: Cycle,
}

/// One rank's run, emulated and recorded (cycles).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct RankOut {
    /// World rank.
    pub rank: u32,
    /// Its node.
    pub node: u32,
    /// Cycle it left its last call.
    pub finish: Cycle,
    /// Cycles computing (between calls).
    pub compute: u64,
    /// Cycles inside calls that communicate.
    pub communication: u64,
    /// Cycles inside calls that do not (their recorded durations, kept).
    pub local: u64,
    /// Calls it made.
    pub calls: u64,
    /// Recorded: its last call's exit after its first call's entry.
    pub finish_recorded: Cycle,
    /// Recorded compute (unscaled).
    pub compute_recorded: u64,
    /// Recorded time inside calls that communicate.
    pub communication_recorded: u64,
    /// The wait that released it last.
    pub critical: Option<Critical>,
}

impl RankOut {
    /// A rank's row with its recorded figures, before it runs.
    fn recorded(rank: u32, node: u32, p: &RankProgram, per_ns: f64) -> RankOut {
        let mut o = RankOut {
            rank,
            node,
            ..RankOut::default()
        };
        let (Some(first), Some(last)) = (p.calls.first(), p.calls.last()) else {
            return o;
        };
        o.finish_recorded = scale_ns(last.exit - first.enter, per_ns);
        let mut compute = 0;
        let mut comm = 0;
        for (k, c) in p.calls.iter().enumerate() {
            if k > 0 {
                compute += c.enter.saturating_sub(p.calls[k - 1].exit);
            }
            if c.communicates() {
                comm += c.exit - c.enter;
            }
        }
        o.compute_recorded = scale_ns(compute, per_ns);
        o.communication_recorded = scale_ns(comm, per_ns);
        o
    }
}

/// The application's run time, emulated against recorded (`application` in the JSON).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Application {
    /// Emulated run time: the last rank's finish, cycles.
    pub runtime: Cycle,
    /// Recorded run time: the longest rank's last exit after its first entry, cycles.
    pub runtime_recorded: Cycle,
    /// runtime_recorded / runtime: above 1 when the emulated machine is faster.
    pub speedup: Option<f64>,
    /// The rank that finished last.
    pub slowest_rank: Option<u32>,
    /// The wait that released the slowest rank last (the critical path's last edge).
    pub critical: Option<Critical>,
    /// Σ compute over the ranks, cycles (emulated: scaled).
    pub compute: u64,
    /// Σ time inside calls that communicate, cycles.
    pub communication: u64,
    /// Control messages (RTS, CTS, FIN, acknowledgements) delivered, and their flits.
    pub control_messages: u64,
    /// Their flits.
    pub control_flits: u64,
    /// Messages sent by rendezvous.
    pub rendezvous: u64,
    /// Receives no send in the trace matches (they complete as they are posted).
    pub unmatched_receives: u64,
    /// The options it ran with.
    pub options: ElasticOptions,
    /// Per rank, in rank order (all of them, or the latest to finish: `--max-ranks`).
    pub ranks: Vec<RankOut>,
}

/// Replays `prog` elastically (the rest as [`crate::experiments::replay::replay_observed`]).
pub(super) fn replay<N: Network + Send>(
    setup: crate::experiments::replay::Setup<N>,
    prog: Program,
    opts: &ReplayOptions,
    each: &mut dyn FnMut(&ReplayRecord) -> Result<()>,
) -> Result<(ReplaySummary, Extras)> {
    let crate::experiments::replay::Setup {
        cfg,
        mut sims,
        rs,
        owned,
        rank,
        transport,
        partitioning,
        ends,
        nodes,
        topology,
    } = setup;
    if let Some(why) = &prog.untimed {
        return Err(Error::Trace(why.clone()));
    }
    let e = &opts.elastic;
    if !(e.compute_scale >= 0.0 && e.compute_scale.is_finite()) {
        return Err(Error::Arg(format!(
            "--compute-scale {}: must be 0 or more",
            crate::foundation::limits::show(e.compute_scale)
        )));
    }
    let ranks = prog.ranks.len() as u32;
    if ranks > ends.len() as u32 && opts.map.is_identity() {
        return Err(Error::Trace(format!(
            "{}: {ranks} ranks do not fit on the network's {} nodes one to one: give a node \
             map (--map) or a placement that folds them (--place fold, block:R, …)",
            prog.name,
            ends.len()
        )));
    }
    let mut node_of = Vec::with_capacity(ranks as usize);
    for r in 0..ranks {
        let n = opts.map.node(r).ok_or_else(|| {
            Error::Trace(format!("{}: rank {r} is not in the node map", prog.name))
        })?;
        if n as usize >= ends.len() {
            return Err(Error::Trace(format!(
                "{}: rank {r} maps to node {n}, outside the network's {} nodes",
                prog.name,
                ends.len()
            )));
        }
        node_of.push(ends.start + n);
    }
    let flit_bytes = opts.flit_bytes;
    let mut plan = NetPlan::new(&prog, node_of, nodes, e, |b| {
        crate::experiments::replay::flits_of(b, crate::trace::SizeUnit::Bytes, flit_bytes)
    })?;
    if transport.is_some() {
        // Which messages may cross between processes, so that they exchange only when
        // something can cross (`step`).
        let part_of = &sims[0].out.nodes;
        let process: Vec<u32> = (0..nodes as u32)
            .map(|n| {
                let p = part_of.part_of(n);
                owned.iter().position(|o| o.contains(&p)).unwrap_or(0) as u32
            })
            .collect();
        plan.mark_crossing(
            &prog,
            &topology,
            &process,
            N::MINIMAL_ROUTES
                && !matches!(
                    cfg.switching,
                    crate::config::SwitchingConfig::Wormhole { routing, .. } if !routing.is_minimal()
                ),
            (opts.time_scale, e.compute_scale),
        );
    }
    let prog = Arc::new(prog);
    let plan = Arc::new(plan);
    let obs = cfg.experiment.observe;
    let books: Vec<Ranks> = sims
        .iter()
        .map(|s| {
            Ranks::new(
                Arc::clone(&prog),
                Arc::clone(&plan),
                e,
                opts.time_scale,
                |n| s.out.is_local(n),
                (true, obs.message_log),
            )
        })
        .collect();
    let split = crate::experiments::replay::lockstep::Split {
        parts: rs.len(),
        owned,
        rank,
        transport: transport.as_deref(),
    };
    let ended = step::run(&mut sims, &split, books, opts, &plan)?;
    let t = sims[0].t + 1;
    let end = RunEnd {
        t,
        start: 0,
        end: Some(t),
        endpoints: ends.len(),
        servers: sims[0].net.ctrl_servers(),
        backlog_samples: Vec::new(),
        outstanding_samples: Vec::new(),
        per_link: obs.per_link,
    };
    let mut parts: Vec<PartResult<N::Measures>> =
        sims.iter_mut().map(|s| PartResult::of(s, &end)).collect();
    drop(sims);
    let mut accs = ended.accs;
    if let Some(t) = &transport {
        // Every rank's partitions, in partition order: every rank reports alike.
        let bytes = postcard::to_stdvec(&(&parts, &accs))
            .map_err(|e| crate::engine::distributed::wire::error("results", e))?;
        parts.clear();
        accs.clear();
        for (r, b) in t.all_gather(&bytes).iter().enumerate() {
            let (p, a): (Vec<PartResult<N::Measures>>, Vec<PartAcc>) = postcard::from_bytes(b)
                .map_err(|e| {
                    crate::engine::distributed::wire::error(&format!("rank {r}'s results"), e)
                })?;
            parts.extend(p);
            accs.extend(a);
        }
    }
    if let Some(e) = ended.failure {
        return Err(e);
    }
    let (mut sum, records, log) = summarise(&prog, &plan, accs, opts, rs.len() as u32);
    sum.partitioning = partitioning;
    for r in &records {
        each(r)?;
    }
    let mut extras = crate::experiments::replay::observed::<N>(
        &cfg,
        &mut parts,
        &end,
        (&topology, ends.len()),
        &mut sum,
    );
    if obs.message_log {
        let hops = parts
            .iter_mut()
            .flat_map(|p| p.stats.hops.take().unwrap_or_default())
            .collect();
        extras.messages = vec![RepLog {
            deliveries: log,
            hops,
        }];
    }
    Ok((sum, extras))
}

/// The summary of every partition's measurements `accs` (in partition order), the
/// data messages' records and the deliveries, each sorted by (delivery, id).
fn summarise(
    prog: &Program,
    plan: &NetPlan,
    accs: Vec<PartAcc>,
    opts: &ReplayOptions,
    partitions: u32,
) -> (
    ReplaySummary,
    Vec<ReplayRecord>,
    Vec<crate::engine::probe::Delivery>,
) {
    let mut lat = histogram();
    let mut ranks: Vec<RankOut> = Vec::new();
    let mut src: Vec<SrcAcc> = vec![SrcAcc::default(); prog.ranks.len()];
    let mut records = Vec::new();
    let mut log = Vec::new();
    let (mut delivered, mut flits, mut control, mut control_flits, mut last) = (0, 0, 0, 0, 0);
    let mut first_created: Option<Cycle> = None;
    for a in accs {
        lat.add(&a.latency).expect("histograms of one kind add");
        ranks.extend(a.ranks);
        for (r, s) in a.by_src {
            let t = &mut src[r as usize];
            if t.messages == 0 {
                t.first_created = s.first_created;
            }
            t.messages += s.messages;
            t.size += s.size;
            t.flits += s.flits;
            t.latency_sum += s.latency_sum;
            t.latency_max = t.latency_max.max(s.latency_max);
            t.first_created = t.first_created.min(s.first_created);
            t.last_delivery = t.last_delivery.max(s.last_delivery);
        }
        records.extend(a.records);
        log.extend(a.log);
        delivered += a.data_delivered;
        flits += a.flits;
        control += a.control_delivered;
        control_flits += a.control_flits;
        last = last.max(a.last_delivery);
        first_created = match (first_created, a.first_created) {
            (Some(x), Some(y)) => Some(x.min(y)),
            (x, y) => x.or(y),
        };
    }
    ranks.sort_by_key(|r| r.rank);
    records.sort_by_key(|r| (r.delivered, r.id));
    log.sort_by_key(|d| (d.absorbed, d.header.id.0));
    let runtime = ranks.iter().map(|r| r.finish).max().unwrap_or(0);
    let recorded = ranks.iter().map(|r| r.finish_recorded).max().unwrap_or(0);
    // The slowest: latest finish, ties to the lower rank.
    let slowest = ranks
        .iter()
        .max_by(|a, b| a.finish.cmp(&b.finish).then(b.rank.cmp(&a.rank)))
        .cloned();
    let some = !lat.is_empty();
    let rows: Vec<RankRow> = src
        .iter()
        .enumerate()
        .filter(|(_, a)| a.messages > 0)
        .map(|(r, a)| RankRow {
            rank: r as u32,
            node: plan.node_of[r],
            messages: a.messages,
            size: a.size,
            flits: a.flits,
            latency_total: a.latency_sum,
            latency_mean: a.latency_sum as f64 / a.messages as f64,
            latency_max: a.latency_max,
            created_lag_mean: 0.0,
            first_created: a.first_created,
            last_delivery: a.last_delivery,
        })
        .collect();
    let slowest_source = rows
        .iter()
        .max_by(|a, b| {
            a.last_delivery
                .cmp(&b.last_delivery)
                .then(b.rank.cmp(&a.rank))
        })
        .cloned();
    let rank_count = rows.len();
    let ends: Vec<Cycle> = rows.iter().map(|r| r.last_delivery).collect();
    let rows: Vec<RankRow> = crate::experiments::replay::latest(&ends, opts.max_ranks)
        .into_iter()
        .map(|i| rows[i].clone())
        .collect();
    let finishes: Vec<Cycle> = ranks.iter().map(|r| r.finish).collect();
    let app_ranks: Vec<RankOut> = crate::experiments::replay::latest(&finishes, opts.max_ranks)
        .into_iter()
        .map(|i| ranks[i].clone())
        .collect();
    let app = Application {
        runtime,
        runtime_recorded: recorded,
        speedup: (runtime > 0).then(|| recorded as f64 / runtime as f64),
        slowest_rank: slowest.as_ref().map(|r| r.rank),
        critical: slowest.and_then(|r| r.critical),
        compute: ranks.iter().map(|r| r.compute).sum(),
        communication: ranks.iter().map(|r| r.communication).sum(),
        control_messages: control,
        control_flits,
        rendezvous: plan
            .proto
            .iter()
            .filter(|p| **p == plan::Proto::Rendezvous)
            .count() as u64,
        unmatched_receives: prog.recvs.iter().filter(|r| r.msg.is_none()).count() as u64,
        options: opts.elastic.clone(),
        ranks: app_ranks,
    };
    let sum = ReplaySummary {
        mode: ReplayMode::Elastic,
        partitions,
        messages: prog.msgs.len() as u64,
        delivered,
        flits,
        cycles: last,
        latency_mean: some.then(|| lat.mean()),
        latency_p50: some.then(|| lat.value_at_quantile(0.5)),
        latency_p99: some.then(|| lat.value_at_quantile(0.99)),
        latency_max: some.then(|| lat.max()),
        recorded_span: recorded,
        first_created,
        replayed_span: runtime,
        slowdown: (recorded > 0).then(|| runtime as f64 / recorded as f64),
        rank_count,
        slowest_rank: slowest_source,
        ranks: rows,
        runtime: Some(runtime),
        speedup: app.speedup,
        application: Some(app),
        ..ReplaySummary::default()
    };
    (sum, records, log)
}
