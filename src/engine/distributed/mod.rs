//! Partitions in several processes: R ranks (MPI processes under `mpirun`, or threads
//! standing in for them in tests), each stepping its share of the network's partitions
//! on its own threads, exactly as `engine::parallel` steps them in one process.
//!
//! What crosses ranks is what crosses partitions in one process — the events and side
//! data of the outboxes and every partition's [`Summary`] (with the wait-for edges at a
//! check point) — written with `postcard` into one reused byte buffer per destination
//! rank and handed over with one personalised all-to-all per exchange
//! ([`Transport::exchange`]). Every rank then holds every partition's summary and feeds
//! it to its own copy of the coordinator, so every rank takes the decision one process
//! takes.
//!
//! Conservative synchronisation: when every event a partition sends to another is due
//! `L` cycles or more after it is sent ([`Network::lookahead`]: wormhole `traversal +
//! links.latency` and the credit latency; timeout the shortest link; deflection a hop,
//! unless aborts are instantaneous; circuit 1), ranks exchange only once
//! per stretch of up to `L` cycles ([`Simulation::horizon_end`]): nothing a rank receives
//! in the stretch could be due inside it. Inside a stretch a rank's partitions hand their
//! mail to each other every cycle and may skip cycles in which none of them has work (the
//! stretch's last cycle is always stepped); the coordinator decides only at the end of a
//! stretch, which is where the stretch rule puts every decision that is more than "step
//! on". The result is the one-process result (tests/parallel/distributed.rs compares them for every
//! switching mode).
//!
//! When the replication ends, each rank sends its partitions' [`PartResult`]s to every
//! rank ([`Transport::all_gather`]) and every rank reduces them in partition order, so
//! every rank holds the same results, follows the same control flow afterwards (the next
//! replication, the saturation search's next probe) and rank 0 alone writes them out.

pub mod local;
#[cfg(feature = "mpi")]
pub mod mpi;
pub(crate) mod wire;

use crate::engine::network::Network;
use crate::engine::replication::{reduce_parts, PartResult, Replication, RunEnd};

use crate::config::HwConfig;
use crate::engine::machine::validate;
use crate::engine::parallel::{
    hand_over, join_partitions, lock, mailboxes, partitions_for, take_over, CycleBarrier,
    FailOnPanic, Failed, Mail, SpinBarrier,
};
use crate::engine::partitioner::{place, ranges};
use crate::engine::sim::{Decision, Simulation, Stop, Summary};
use crate::engine::transport::Transport;
use crate::engine::waits::{has_cycle, WaitEdge};
use crate::foundation::error::{Error, Result};
use crate::foundation::types::Cycle;
use std::ops::Range;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

/// Partitions' node ranges, and the partitions (by index) each rank steps.
pub type Plan = (Vec<(usize, usize)>, Vec<Range<usize>>);

/// The partitions of a network of `nodes` nodes over `ranks` ranks of `threads` threads
/// (`min_nodes`: `experiment.partition_min_nodes`): the partitions' node ranges, and the
/// partitions (by index) each rank steps. Every rank gets at least one partition, even
/// below the smallest useful partition size; a network with fewer nodes than ranks is
/// refused.
pub fn plan<N: Network>(
    nodes: usize,
    ranks: usize,
    threads: usize,
    min_nodes: Option<usize>,
) -> Result<Plan> {
    if !N::PARTITIONABLE {
        return Err(Error::config(
            "this switching mode cannot be split into partitions, so it cannot run on several MPI ranks",
        ));
    }
    let wanted = partitions_for::<N>(nodes, ranks.saturating_mul(threads.max(1)), min_nodes);
    let parts = ranges(nodes, wanted.max(ranks));
    if parts.len() < ranks {
        return Err(Error::config(format!(
            "{nodes} nodes cannot be split over {ranks} MPI ranks (at most {} partitions of \
             whole nodes); run on fewer ranks",
            parts.len()
        )));
    }
    let owned = owners(parts.len(), ranks);
    Ok((parts, owned))
}

/// The partitions (by index) each of `ranks` ranks steps when there are `parts`:
/// consecutive, as even as can be.
pub fn owners(parts: usize, ranks: usize) -> Vec<Range<usize>> {
    let ranks = ranks.max(1);
    (0..ranks)
        .map(|r| r * parts / ranks..(r + 1) * parts / ranks)
        .collect()
}

/// Runs replication `rep` of `cfg` over the ranks of `t`, this rank stepping its share of
/// the partitions on its own threads; every rank returns the same results.
pub fn run_replication<N: Network + Send>(
    cfg: &HwConfig,
    rep: u32,
    t: &dyn Transport,
    progress: &mut dyn FnMut(Cycle),
) -> Result<Replication<N>> {
    let nodes = validate(cfg)?.topology.nodes();
    let e = &cfg.experiment;
    let (parts, owned) = plan::<N>(
        nodes,
        t.ranks(),
        e.threads as usize,
        e.partition_min_nodes.map(|m| m as usize),
    )?;
    let mine = owned[t.rank()].clone();
    let (views, _) = place(&validate(cfg)?.topology, &owned, e.partitioner)?;
    let mut sims = views[mine.clone()]
        .iter()
        .map(|p| Simulation::<N>::build_part(cfg, rep, p.clone()))
        .collect::<Result<Vec<_>>>()?;
    // Every rank must cut the same stretches: take the shortest lookahead of any
    // partition (a mode's lookahead is meant to follow from the configuration alone).
    let local = sims.iter().map(|s| s.out.lookahead).min().unwrap_or(1);
    let lookahead = t
        .all_gather(&local.to_le_bytes())
        .iter()
        .map(|b| b.as_slice().try_into().map_or(1, Cycle::from_le_bytes))
        .min()
        .unwrap_or(1);
    for s in &mut sims {
        s.out.lookahead = lookahead;
    }
    let barrier = SpinBarrier::new(sims.len());
    let stop = step_ranked(&mut sims, mine.clone(), &owned, t, &barrier, progress);
    let stop = match stop {
        // The description needs the whole network in one place: rank 0 replays the run
        // on one partition, which reaches the very same state, and tells the others.
        Stop::Deadlock(_) => {
            let text = if t.rank() == 0 {
                match Simulation::<N>::build(cfg, rep)?.run(&mut |_| {}) {
                    Stop::Deadlock(text) => text,
                    other => format!("(the one-partition replay ended as {other:?})"),
                }
            } else {
                String::new()
            };
            let all = t.all_gather(text.as_bytes());
            Stop::Deadlock(String::from_utf8_lossy(&all[0]).into_owned())
        }
        s => s,
    };
    let end = RunEnd::of(&sims[0]);
    let local: Vec<PartResult<N::Measures>> =
        sims.iter_mut().map(|s| PartResult::of(s, &end)).collect();
    let bytes = postcard::to_stdvec(&local).map_err(|e| wire::error("results", e))?;
    drop(local);
    let mut results = Vec::with_capacity(parts.len());
    for (r, b) in t.all_gather(&bytes).iter().enumerate() {
        let part: Vec<PartResult<N::Measures>> =
            postcard::from_bytes(b).map_err(|e| wire::error(&format!("rank {r}'s results"), e))?;
        results.extend(part);
    }
    Ok((reduce_parts::<N>(results, &end, stop), end))
}

/// What the threads of one rank share.
struct Shared<'a, N: Network, B> {
    /// Mailboxes between partitions (global numbering, this rank's pairs only used).
    mail: &'a [Mutex<Mail<N>>],
    sums: &'a [Mutex<Summary>],
    edges: &'a [Mutex<Vec<WaitEdge>>],
    /// Per local partition: its outbox vectors for other ranks' partitions, handed to
    /// the exchanging thread at the end of a stretch.
    outgoing: &'a [Mutex<wire::Outgoing<N>>],
    /// Per local partition: what other ranks sent it.
    incoming: &'a [Mutex<Mail<N>>],
    /// Every partition's summary after an exchange.
    global: &'a Mutex<Vec<Summary>>,
    barrier: &'a B,
    failed: &'a Failed,
    mine: &'a Range<usize>,
    parts: usize,
}

impl<N: Network, B> Clone for Shared<'_, N, B> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<N: Network, B> Copy for Shared<'_, N, B> {}

/// Steps this rank's partitions `sims` (partitions `mine` of all) to the end of the
/// replication, exchanging with the other ranks of `t`.
fn step_ranked<N: Network + Send, B: CycleBarrier>(
    sims: &mut [Simulation<N>],
    mine: Range<usize>,
    owned: &[Range<usize>],
    t: &dyn Transport,
    barrier: &B,
    progress: &mut dyn FnMut(Cycle),
) -> Stop {
    let parts = sims[0].out.events.len();
    let local = sims.len();
    let mail = mailboxes::<N>(parts);
    let sums: Vec<Mutex<Summary>> = (0..2 * parts)
        .map(|_| Mutex::new(Summary::default()))
        .collect();
    let edges: Vec<Mutex<Vec<WaitEdge>>> = (0..2 * parts).map(|_| Mutex::new(Vec::new())).collect();
    let outgoing: Vec<Mutex<wire::Outgoing<N>>> = (0..local)
        .map(|_| Mutex::new(wire::Outgoing::new(parts)))
        .collect();
    let incoming: Vec<Mutex<Mail<N>>> = (0..local)
        .map(|_| Mutex::new((Vec::new(), Vec::new())))
        .collect();
    let global = Mutex::new(vec![Summary::default(); parts]);
    let failed = Failed(AtomicBool::new(false));
    let sh = Shared {
        mail: &mail,
        sums: &sums,
        edges: &edges,
        outgoing: &outgoing,
        incoming: &incoming,
        global: &global,
        barrier,
        failed: &failed,
        mine: &mine,
        parts,
    };
    let mut exchange = wire::Exchanger::new(t, &mine, owned);
    std::thread::scope(|scope| {
        let (first, rest) = sims.split_first_mut().expect("every rank has a partition");
        let handles: Vec<_> = rest
            .iter_mut()
            .enumerate()
            .map(|(i, sim)| {
                let p = mine.start + i + 1;
                scope.spawn(move || rank_loop(p, sim, sh, None, &mut |_| {}))
            })
            .collect();
        let stop = rank_loop(mine.start, first, sh, Some(&mut exchange), progress);
        join_partitions(handles, stop)
    })
}

/// The thread of partition `p` (global number); the rank's first partition's thread
/// also does the exchange with the other ranks (`ex`).
fn rank_loop<N: Network, B: CycleBarrier>(
    p: usize,
    sim: &mut Simulation<N>,
    sh: Shared<'_, N, B>,
    mut ex: Option<&mut wire::Exchanger<'_>>,
    progress: &mut dyn FnMut(Cycle),
) -> Option<Stop> {
    let _guard = FailOnPanic(sh.failed);
    let parts = sh.parts;
    let me = p - sh.mine.start;
    let idle_skip = sim.experiment().idle_skip;
    let mut parity = 0;
    let mut stretch_end = sim.horizon_end();
    loop {
        sim.step_local();
        hand_over(p, parity, sim, sh.mail, sh.mine.clone());
        *lock(&sh.sums[parity * parts + p]) = sim.summary();
        let check = sim.check_due();
        if check {
            let mut e = lock(&sh.edges[parity * parts + p]);
            e.clear();
            sim.net.wait_edges(&mut e);
        }
        let exchange = sim.t + 1 >= stretch_end;
        if exchange {
            lock(&sh.outgoing[me]).take_from(&mut sim.out, sh.mine);
        }
        sh.barrier.wait(&sh.failed.0);
        if sh.failed.0.load(Ordering::Acquire) {
            return None;
        }
        take_over(p, parity, sim, sh.mail, sh.mine.clone());
        if !exchange {
            // Inside the stretch: on to the next cycle in which one of this rank's
            // partitions has work, never past the stretch's last cycle.
            let now = sim.t + 1;
            let next = if idle_skip {
                sh.mine
                    .clone()
                    .map(|q| lock(&sh.sums[parity * parts + q]).next)
                    .min()
                    .unwrap_or(now)
                    .max(now)
                    .min(stretch_end - 1)
            } else {
                now
            };
            let end = sim.window.end;
            // What this partition sent to other ranks in the stretch waits in its outbox
            // until the exchange: its summaries must keep counting it (`Summary::next`),
            // or the coordinator could jump over the cycle it is due in.
            let pending = sim.out.earliest_remote;
            sim.advance(next, end);
            sim.out.earliest_remote = pending;
            parity ^= 1;
            continue;
        }
        if let Some(ex) = ex.as_deref_mut() {
            ex.run::<N, B>(sh, parity, check);
        }
        sh.barrier.wait(&sh.failed.0);
        if sh.failed.0.load(Ordering::Acquire) {
            return None;
        }
        {
            let mut inc = lock(&sh.incoming[me]);
            let (events, extras) = &mut *inc;
            sim.absorb(events, extras);
        }
        let all = lock(sh.global).clone();
        match sim.coordinate(&all, progress) {
            Decision::Continue { next, window_end } => {
                sim.advance(next, window_end);
                stretch_end = sim.horizon_end();
            }
            Decision::Stop(stop, window_end) => {
                sim.finish(window_end);
                return Some(stop);
            }
        }
        parity ^= 1;
    }
}

/// Whether the union of every partition's wait-for edges holds a cycle (a deadlock
/// proven across partitions).
fn stalled(edges: &[WaitEdge]) -> bool {
    has_cycle(edges)
}
