//! Partitioned stepping: the nodes are split into T partitions (`engine::partitioner`),
//! stepped by T scoped threads, cycle after cycle.
//!
//! A cycle, for partition p (whichever thread steps it):
//! 1. take what the others sent it in the previous cycle (mailboxes q → p), read every
//!    summary, and let its own copy of the [`Coordinator`](crate::engine::sim::Coordinator)
//!    decide where the clock goes next, or whether to stop;
//! 2. step its own nodes ([`Simulation::step_local`]); events for other partitions
//!    collect in its outbox;
//! 3. hand those over — swap each outbox vector into the mailbox (p → q) of this cycle's
//!    parity — and publish its [`Summary`].
//!
//! A partition is not tied to a thread: each cycle, every thread claims partitions (its
//! own first, then any left) until none is left, and a cycle ends when its T partition
//! steps are done (`DoneCount`), not when every thread has arrived somewhere. When the
//! machine is busy and a thread is not running, the one that is steps every partition
//! and goes on to the next cycle alone; the sleeper, when it runs again, joins at the
//! first cycle not complete (`routemu bench`'s busy-machine scenarios). Only a thread
//! descheduled in the middle of a partition's step holds the others up. On a machine
//! with a core per thread each thread steps its own partition every cycle, its caches
//! warm. (A barrier that is not a [`SpinBarrier`] — `std::sync::Barrier`, the
//! benchmark's baseline — makes every thread wait at it every cycle instead:
//! [`CycleEnd`].)
//!
//! Mailboxes and summaries are double-buffered by cycle parity: what a partition writes in
//! cycle t+1 goes to the other half, and no partition claims anything of cycle t+2 — the
//! next to write a half cycle t+1 read — before every step of cycle t+1 is done
//! (`worker` goes through every shared structure). Every partition feeds identical
//! summaries to identical coordinators, so all take the same decision, which is also the
//! decision a single partition takes: results do not depend on T, nor on which thread
//! stepped which partition (a partition's state is its own). Events cross partitions only
//! with a delay of at least one cycle (a link is a register pipeline), so handing them
//! over at the end of the cycle is exact.

use crate::config::HwConfig;
use crate::engine::network::Network;
use crate::engine::partitioner::{one_process, place, ranges};
use crate::engine::sim::{Decision, Simulation, Stop, Summary};
use crate::engine::waits::{has_cycle, WaitEdge};
use crate::foundation::error::Result;
use crate::foundation::types::Cycle;
use crossbeam_utils::CachePadded;
use std::ops::Range;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

/// A barrier that every partition's thread waits at once per cycle.
pub trait CycleBarrier: Sync {
    /// Blocks until all threads have called it, or (where the barrier can tell) until
    /// `abort` is set.
    fn wait(&self, abort: &AtomicBool);

    /// How [`step_partitioned`] ends a cycle with this barrier: by default every thread
    /// waits at it ([`CycleEnd::Barrier`]).
    fn cycle_end(&self) -> CycleEnd {
        CycleEnd::Barrier
    }
}

/// How the threads of [`step_partitioned`] end a cycle.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CycleEnd {
    /// Every thread waits at the barrier, also one that stepped no partition: a thread
    /// that is not running holds the others up (the `std::sync::Barrier` baseline).
    Barrier,
    /// A thread waits only until the cycle's partition steps are done, spinning for up
    /// to `spin` and then parking (`DoneCount`): a thread that is not running holds
    /// nobody up unless it holds a partition it claimed.
    WhenDone {
        /// How long a waiter spins before parking.
        spin: Duration,
    },
}

/// Set when a partition's thread panics (or fails), so that the others leave the run
/// instead of waiting at the barrier for ever.
pub(crate) struct Failed(pub(crate) AtomicBool);

/// Marks the run failed if its thread unwinds.
pub(crate) struct FailOnPanic<'a>(pub(crate) &'a Failed);

impl Drop for FailOnPanic<'_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.0 .0.store(true, Ordering::Release);
        }
    }
}

/// Sense-reversing barrier on cache-padded atomics that spins, then parks.
///
/// A waiter first spins (with exponential back-off) for a bounded number of rounds,
/// which keeps the per-cycle hand-over to tens of nanoseconds when every partition has a
/// core of its own; if the others have not arrived by then it sleeps on a condition
/// variable until the last thread wakes it. Spinning for ever (the barrier's first form)
/// made `--threads 2` run at 0.57–0.93× one thread when other work shared the cores: a
/// spinning waiter burns the time slice the late thread needs. How long to spin is
/// decided once, when the barrier is made: the full budget ([`SPIN_TIME`]) when the
/// threads fit in the cores that were free then ([`free_cores`]), a few rounds otherwise
/// (the same rule as GNU OpenMP's throttled spin count for oversubscribed runs).
pub struct SpinBarrier {
    threads: usize,
    spin: Duration,
    arrived: CachePadded<AtomicUsize>,
    generation: CachePadded<AtomicUsize>,
    /// Waiters asleep (or about to sleep) on `wake`: the last arriver takes the lock and
    /// notifies only when there are some, so the all-spinning case never touches it.
    sleepers: CachePadded<AtomicUsize>,
    lock: Mutex<()>,
    wake: Condvar,
}

/// How long a waiter spins before parking when the threads have cores of their own:
/// longer than a partition's cycle takes on the presets (a few µs), so a balanced run
/// never parks, and short against the wake-up it saves when a partition is late.
pub const SPIN_TIME: Duration = Duration::from_micros(50);

/// How long a waiter spins when the threads outnumber the free cores: it most likely
/// waits for a thread that is not running, so it gives its core up almost at once.
pub const OVERSUBSCRIBED_SPIN_TIME: Duration = Duration::from_micros(2);

impl SpinBarrier {
    /// A barrier for `threads` threads, its spin budget chosen from the cores free now.
    pub fn new(threads: usize) -> Self {
        let spin = match free_cores() {
            Some(free) if threads > free => OVERSUBSCRIBED_SPIN_TIME,
            _ => SPIN_TIME,
        };
        Self::with_spin(threads, spin)
    }

    /// A barrier for `threads` threads whose waiters spin for `spin` before parking
    /// (zero: park at once; [`Duration::MAX`]: never park).
    pub fn with_spin(threads: usize, spin: Duration) -> Self {
        SpinBarrier {
            threads,
            spin,
            arrived: CachePadded::new(AtomicUsize::new(0)),
            generation: CachePadded::new(AtomicUsize::new(0)),
            sleepers: CachePadded::new(AtomicUsize::new(0)),
            lock: Mutex::new(()),
            wake: Condvar::new(),
        }
    }

    /// Threads it waits for.
    pub fn threads(&self) -> usize {
        self.threads
    }

    /// How long its waiters spin before parking.
    pub fn spin_time(&self) -> Duration {
        self.spin
    }

    fn park(&self, gen: usize, abort: &AtomicBool) {
        // SeqCst on `sleepers` here and on `generation` in the release pairs the two:
        // either the last arriver sees this sleeper and notifies under the lock, or this
        // sleeper sees the new generation before it waits.
        self.sleepers.fetch_add(1, Ordering::SeqCst);
        let mut guard = self.lock.lock().unwrap_or_else(|e| e.into_inner());
        while self.generation.load(Ordering::SeqCst) == gen && !abort.load(Ordering::Relaxed) {
            // A failing partition sets `abort` without notifying: poll it now and then.
            guard = match self.wake.wait_timeout(guard, Duration::from_millis(5)) {
                Ok((g, _)) => g,
                Err(e) => e.into_inner().0,
            };
        }
        drop(guard);
        self.sleepers.fetch_sub(1, Ordering::SeqCst);
    }
}

impl CycleBarrier for SpinBarrier {
    fn wait(&self, abort: &AtomicBool) {
        let gen = self.generation.load(Ordering::Acquire);
        if self.arrived.fetch_add(1, Ordering::AcqRel) + 1 == self.threads {
            self.arrived.store(0, Ordering::Relaxed);
            self.generation.fetch_add(1, Ordering::SeqCst);
            if self.sleepers.load(Ordering::SeqCst) > 0 {
                let _guard = self.lock.lock().unwrap_or_else(|e| e.into_inner());
                self.wake.notify_all();
            }
            return;
        }
        let opened = || self.generation.load(Ordering::Acquire) != gen;
        if !spin_until(opened, self.spin, abort) {
            self.park(gen, abort);
        }
    }

    /// [`step_partitioned`] with this barrier ends a cycle when the cycle's partition
    /// steps are done, its waiters spinning as long as this barrier's would: the
    /// barrier itself is then not waited at.
    fn cycle_end(&self) -> CycleEnd {
        CycleEnd::WhenDone { spin: self.spin }
    }
}

/// Spins with exponential back-off (up to 64 pauses a round) until `ready()` or `abort`;
/// false when `budget` ran out first. The clock is read only once the rounds are long,
/// so a short wait costs no clock reads at all.
fn spin_until(ready: impl Fn() -> bool, budget: Duration, abort: &AtomicBool) -> bool {
    let mut round = 0u32;
    let mut since: Option<Instant> = None;
    while !ready() {
        if abort.load(Ordering::Relaxed) {
            return true;
        }
        if round >= 6 {
            let start = *since.get_or_insert_with(Instant::now);
            if start.elapsed() >= budget {
                return false;
            }
        }
        for _ in 0..1u32 << round.min(6) {
            std::hint::spin_loop();
        }
        round += 1;
    }
    true
}

/// The partition steps done in one call of [`step_partitioned`], and the threads that
/// wait for a cycle's steps to be all done ([`CycleEnd::WhenDone`]).
///
/// With t partitions, cycle g (counted from the call) is complete when the count reaches
/// (g + 1)·t. A waiter spins as [`SpinBarrier`]'s do, then sleeps on a condition
/// variable; the step that completes a cycle wakes the sleepers (taking the lock only
/// when there are some), and so does a failing thread ([`DoneCount::fail`]). A sleeper
/// waits without a timeout, so a wake-up lost would hang the run: the comments of
/// [`DoneCount::add_one`] and [`DoneCount::park`] say why none is.
struct DoneCount {
    per_cycle: u64,
    spin: Duration,
    done: CachePadded<AtomicU64>,
    /// Waiters asleep (or about to sleep) on `wake`.
    sleepers: CachePadded<AtomicUsize>,
    lock: Mutex<()>,
    wake: Condvar,
}

impl DoneCount {
    /// A count for `per_cycle` partition steps a cycle, its waiters spinning for `spin`.
    fn new(per_cycle: usize, spin: Duration) -> Self {
        DoneCount {
            per_cycle: per_cycle as u64,
            spin,
            done: CachePadded::new(AtomicU64::new(0)),
            sleepers: CachePadded::new(AtomicUsize::new(0)),
            lock: Mutex::new(()),
            wake: Condvar::new(),
        }
    }

    /// Counts one partition step done (after everything the step wrote); wakes the
    /// sleepers when it completes a cycle.
    fn add_one(&self) {
        // SeqCst here and in `park` pair the two: either this step sees the sleeper and
        // notifies under the lock, or the sleeper sees this count before it waits.
        let n = self.done.fetch_add(1, Ordering::SeqCst) + 1;
        if n.is_multiple_of(self.per_cycle) && self.sleepers.load(Ordering::SeqCst) > 0 {
            let _guard = lock(&self.lock);
            self.wake.notify_all();
        }
    }

    /// The cycles complete, i.e. the first cycle that is not.
    fn complete(&self) -> u64 {
        self.done.load(Ordering::Acquire) / self.per_cycle
    }

    /// Blocks until cycle `g` is complete, or the run failed (`failed`).
    fn wait_complete(&self, g: u64, failed: &AtomicBool) {
        let target = (g + 1) * self.per_cycle;
        let ready = || self.done.load(Ordering::Acquire) >= target;
        if !spin_until(ready, self.spin, failed) {
            self.park(target, failed);
        }
    }

    fn park(&self, target: u64, failed: &AtomicBool) {
        self.sleepers.fetch_add(1, Ordering::SeqCst);
        let mut guard = lock(&self.lock);
        // No lost wake-up. `fail` sets the flag, then notifies under the lock: this
        // read under the lock either sees the flag or waits before the notify. The step
        // that completes the cycle adds to the count, then reads `sleepers` (all
        // SeqCst, as the increment above and the read below): if it read 0, its
        // addition came before this thread's increment and so before this read, which
        // sees it; otherwise it notifies under the lock, and this read sees the count
        // or this thread waits before the notify.
        while self.done.load(Ordering::SeqCst) < target && !failed.load(Ordering::SeqCst) {
            guard = self.wake.wait(guard).unwrap_or_else(|e| e.into_inner());
        }
        drop(guard);
        self.sleepers.fetch_sub(1, Ordering::SeqCst);
    }

    /// Marks the run failed and wakes every sleeper, so that no thread waits for the
    /// step of a thread that unwound.
    fn fail(&self, failed: &AtomicBool) {
        failed.store(true, Ordering::SeqCst);
        let _guard = lock(&self.lock);
        self.wake.notify_all();
    }
}

/// Marks a partitioned run failed, waking its waiters, if its thread unwinds.
struct FailAndWake<'a>(&'a Failed, &'a DoneCount);

impl Drop for FailAndWake<'_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.1.fail(&self.0 .0);
        }
    }
}

/// Cores not busy with other runnable work right now: the machine's available
/// parallelism less the tasks the kernel counts as running besides this process
/// (`/proc/loadavg`'s fourth field). None where that cannot be read.
pub fn free_cores() -> Option<usize> {
    let cores = std::thread::available_parallelism().ok()?.get();
    let text = std::fs::read_to_string("/proc/loadavg").ok()?;
    let running: usize = text
        .split_whitespace()
        .nth(3)?
        .split('/')
        .next()?
        .parse()
        .ok()?;
    // The count includes the thread reading it.
    Some(cores.saturating_sub(running.saturating_sub(1)).max(1))
}

/// A warning when `threads` threads (partitions × concurrent jobs) exceed the cores that
/// are free now, since each partition's thread then waits for others that are not
/// running (see [`SpinBarrier`]).
pub fn oversubscription_warning(threads: usize) -> Option<String> {
    let free = free_cores()?;
    (threads > 1 && threads > free).then(|| {
        format!(
            "{threads} threads asked for but only {free} core(s) are free now (other work is \
             running); the run will be slower than it could be — fewer --threads/--jobs may be faster"
        )
    })
}

/// The standard library's blocking barrier (the benchmark's baseline).
pub struct StdBarrier(std::sync::Barrier);

impl StdBarrier {
    /// A barrier for `threads` threads.
    pub fn new(threads: usize) -> Self {
        StdBarrier(std::sync::Barrier::new(threads))
    }
}

impl CycleBarrier for StdBarrier {
    /// Cannot be interrupted: a thread that fails leaves the others waiting (it is the
    /// benchmark's baseline only).
    fn wait(&self, _abort: &AtomicBool) {
        self.0.wait();
    }
}

/// Runs `worker` on `jobs` threads at once (on the caller's thread alone when `jobs` is
/// 1), returning when every copy has returned. The workers share their queue of tasks
/// (replications, sweep points, searches) through what `worker` captures. When the
/// caller's emulations are split over several ranks (`engine::distributed`), on the
/// caller's thread alone: each replication is then a collective operation of the ranks,
/// which must run the same ones in the same order.
pub fn on_workers(jobs: usize, worker: impl Fn() + Sync) {
    if jobs <= 1 || crate::engine::transport::current().is_some() {
        worker();
    } else {
        std::thread::scope(|s| {
            for _ in 0..jobs {
                s.spawn(&worker);
            }
        });
    }
}

/// How many partitions a run of `nodes` nodes uses when `threads` are asked for and a
/// partition needs at least `min_nodes` nodes (default: the mode's
/// [`Network::MIN_PARTITION_NODES`], measured with `routemu bench`; see docs/speed.md) to pay
/// for its barrier.
pub fn partitions_for<N: Network>(nodes: usize, threads: usize, min_nodes: Option<usize>) -> usize {
    if !N::PARTITIONABLE {
        return 1;
    }
    let min = min_nodes.unwrap_or(N::MIN_PARTITION_NODES);
    let parts = threads.clamp(1, (nodes / min.max(1)).max(1));
    // Chunks of ⌈nodes/parts⌉ can leave the last partitions empty (8 nodes in 3 chunks
    // of 3 … but 9 nodes in 4 chunks of 3 fill only 3): count the partitions that exist,
    // since a barrier sized for an absent one never opens.
    ranges(nodes, parts).len().max(1)
}

/// What one partition hands another at the end of a cycle: events and their side data.
pub(crate) type Mail<N> = (
    Vec<(Cycle, <N as Network>::Event)>,
    Vec<<N as Network>::Remote>,
);

/// Runs replication `rep` of `cfg` on `parts` partitions (each cycle ending when its
/// partition steps are done, `SpinBarrier`'s wait); returns the
/// partitions in node order and how the run ended.
pub fn run_partitioned<N: Network + Send>(
    cfg: &HwConfig,
    rep: u32,
    parts: usize,
    progress: &mut dyn FnMut(Cycle),
) -> Result<(Vec<Simulation<N>>, Stop)> {
    let sims = build_partitions::<N>(cfg, rep, parts)?;
    // One party per partition that exists (empty node ranges are dropped).
    let barrier = SpinBarrier::new(sims.len().max(1));
    run_built(cfg, rep, sims, &barrier, progress)
}

/// As [`run_partitioned`], with a chosen barrier.
pub fn run_with_barrier<N: Network + Send, B: CycleBarrier>(
    cfg: &HwConfig,
    rep: u32,
    parts: usize,
    barrier: &B,
    progress: &mut dyn FnMut(Cycle),
) -> Result<(Vec<Simulation<N>>, Stop)> {
    let sims = build_partitions::<N>(cfg, rep, parts)?;
    run_built(cfg, rep, sims, barrier, progress)
}

/// Steps partitions already built to the end of the run (the barrier has one party per
/// partition).
fn run_built<N: Network + Send, B: CycleBarrier>(
    cfg: &HwConfig,
    rep: u32,
    mut sims: Vec<Simulation<N>>,
    barrier: &B,
    progress: &mut dyn FnMut(Cycle),
) -> Result<(Vec<Simulation<N>>, Stop)> {
    if sims.len() == 1 {
        let stop = sims[0].run(progress);
        return Ok((sims, stop));
    }
    let stop = match step_partitioned(&mut sims, barrier, Cycle::MAX, progress) {
        // The description needs the whole network in one place: replay on one
        // partition, which reaches the very same state.
        Stop::Deadlock(_) => Simulation::<N>::build(cfg, rep)?.run(&mut |_| {}),
        s => s,
    };
    Ok((sims, stop))
}

/// The partitions of replication `rep` of `cfg`, split `parts` ways, in node order.
pub fn build_partitions<N: Network>(
    cfg: &HwConfig,
    rep: u32,
    parts: usize,
) -> Result<Vec<Simulation<N>>> {
    // The machine is dropped before the partitions are built: a big one's tables are
    // what decides whether the run fits.
    let (views, _) = {
        let topology = crate::engine::machine::validate(cfg)?.topology;
        let t = ranges(topology.nodes(), parts.max(1)).len();
        place(&topology, &one_process(t), cfg.experiment.partitioner)?
    };
    views
        .into_iter()
        .map(|p| Simulation::<N>::build_part(cfg, rep, p))
        .collect()
}

/// Steps the partitions, as many threads as partitions, until the run stops or the clock
/// reaches `until` (then [`Stop::CycleLimit`]); each cycle ends as `barrier` says
/// ([`CycleBarrier::cycle_end`]).
pub fn step_partitioned<N: Network + Send, B: CycleBarrier>(
    sims: &mut [Simulation<N>],
    barrier: &B,
    until: Cycle,
    progress: &mut dyn FnMut(Cycle),
) -> Stop {
    let t = sims.len();
    let mail = mailboxes::<N>(t);
    let sums: Vec<Mutex<Summary>> = (0..2 * t).map(|_| Mutex::new(Summary::default())).collect();
    let edges: Vec<Mutex<Vec<WaitEdge>>> = (0..2 * t).map(|_| Mutex::new(Vec::new())).collect();
    let failed = Failed(AtomicBool::new(false));
    // Never contended: a partition's lock is taken only by the thread that claimed it.
    let parts: Vec<Mutex<Part<'_, N>>> = sims
        .iter_mut()
        .map(|sim| Mutex::new(Part { sim, check: false }))
        .collect();
    let claims: Vec<CachePadded<AtomicU64>> = (0..t)
        .map(|_| CachePadded::new(AtomicU64::new(0)))
        .collect();
    let outcome = Mutex::new(None);
    let decided = CachePadded::new(AtomicU64::new(u64::MAX));
    let clock = AtomicU64::new(0);
    let spin = match barrier.cycle_end() {
        CycleEnd::WhenDone { spin } => spin,
        CycleEnd::Barrier => Duration::ZERO,
    };
    let done = DoneCount::new(t, spin);
    let shared = Shared {
        mail: &mail,
        edges: &edges,
        sums: &sums,
        barrier,
        end: barrier.cycle_end(),
        done: &done,
        failed: &failed,
        until,
        parts: &parts,
        claims: &claims,
        outcome: &outcome,
        decided: &decided,
        clock: &clock,
    };
    std::thread::scope(|scope| {
        let handles: Vec<_> = (1..t)
            .map(|i| scope.spawn(move || worker(i, t, shared, &mut |_| {})))
            .collect();
        let stop = worker(0, t, shared, progress);
        join_partitions(handles, stop)
    })
}

/// Waits for the other partitions' threads; returns the first partition's `stop`. A
/// partition thread ends by reaching the same decision, or by panicking (a bug): then
/// the whole run fails with its panic.
pub(crate) fn join_partitions(
    handles: Vec<std::thread::ScopedJoinHandle<'_, Option<Stop>>>,
    stop: Option<Stop>,
) -> Stop {
    let mut panicked = None;
    for h in handles {
        if let Err(e) = h.join() {
            panicked.get_or_insert(e);
        }
    }
    if let Some(e) = panicked {
        std::panic::resume_unwind(e);
    }
    stop.expect("the run failed only if a thread panicked")
}

pub(crate) fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// Partition `p` puts what its outbox holds for the other partitions `peers` (those
/// of its process) into this cycle's mailboxes (`parity`: the cycle's half).
pub(crate) fn hand_over<N: Network>(
    p: usize,
    parity: usize,
    sim: &mut Simulation<N>,
    mail: &[Mutex<Mail<N>>],
    peers: Range<usize>,
) {
    let t = sim.out.events.len();
    for q in peers.filter(|&q| q != p) {
        let mut mb = lock(&mail[mailbox(parity, t, p, q)]);
        std::mem::swap(&mut mb.0, &mut sim.out.events[q]);
        std::mem::swap(&mut mb.1, &mut sim.out.extras[q]);
    }
}

/// Partition `p` takes what the other partitions `peers` handed it in the cycle of
/// `parity` (once that cycle has ended).
pub(crate) fn take_over<N: Network>(
    p: usize,
    parity: usize,
    sim: &mut Simulation<N>,
    mail: &[Mutex<Mail<N>>],
    peers: Range<usize>,
) {
    let t = sim.out.events.len();
    for q in peers.filter(|&q| q != p) {
        let mut mb = lock(&mail[mailbox(parity, t, q, p)]);
        let (events, extras) = &mut *mb;
        sim.absorb(events, extras);
    }
}

/// The index among [`mailboxes`] of the mailbox from partition `from` to `to` of the
/// cycle's half `parity`.
fn mailbox(parity: usize, t: usize, from: usize, to: usize) -> usize {
    (parity * t + from) * t + to
}

/// Double-buffered mailboxes for `t` partitions (p → q, by cycle parity).
pub(crate) fn mailboxes<N: Network>(t: usize) -> Vec<Mutex<Mail<N>>> {
    (0..2 * t * t)
        .map(|_| Mutex::new((Vec::new(), Vec::new())))
        .collect()
}

/// What the partitions' threads share.
struct Shared<'a, 's, N: Network, B> {
    mail: &'a [Mutex<Mail<N>>],
    edges: &'a [Mutex<Vec<WaitEdge>>],
    sums: &'a [Mutex<Summary>],
    barrier: &'a B,
    /// How a cycle ends: at the barrier, or when its partition steps are `done`.
    end: CycleEnd,
    done: &'a DoneCount,
    failed: &'a Failed,
    until: Cycle,
    parts: &'a [Mutex<Part<'s, N>>],
    /// Per partition: the cycles (counted from this call) it has been claimed for; a
    /// thread claims it for cycle g by moving it from g to g + 1.
    claims: &'a [CachePadded<AtomicU64>],
    /// How the run ended and in which cycle (counted from this call), once a
    /// partition's coordinator decided it (all decide alike, in the same cycle).
    outcome: &'a Mutex<Option<(u64, Stop)>>,
    /// That cycle, for a look without the lock (`u64::MAX` until decided).
    decided: &'a AtomicU64,
    /// The cycle partition 0's coordinator last reported progress at.
    clock: &'a AtomicU64,
}

/// A partition and whether its last cycle collected wait-for edges.
struct Part<'s, N: Network> {
    sim: &'s mut Simulation<N>,
    check: bool,
}

impl<N: Network, B> Clone for Shared<'_, '_, N, B> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<N: Network, B> Copy for Shared<'_, '_, N, B> {}

/// Thread `i` of `t`: every cycle, steps the partitions it claims (its own first), then
/// waits for the cycle to end (see [`CycleEnd`]); the run's outcome once decided, None
/// when another thread failed.
///
/// With [`CycleEnd::WhenDone`] a thread may fall behind — descheduled between cycles, it
/// holds no claim — while the others step its partitions; when it runs again it goes on
/// from the first cycle that is not complete. Why that is safe, structure by structure:
/// - *claims*: a claim is taken by moving `claims[p]` from the cycle's number g to g + 1,
///   and `claims[p]` only grows, so a late thread's claim for a cycle already taken
///   fails, and a partition is stepped once per cycle, in order.
/// - *mail, summaries, wait-for edges* (double-buffered by parity): cycle g writes half
///   g mod 2, cycle g + 1 reads it, and cycle g + 2 writes it again. A thread claims
///   nothing of cycle g + 1 before the count says every step of cycle g is done, nor of
///   g + 2 before every step of g + 1 — every read of that half — is done; a step writes
///   only in a cycle it claimed. So however far behind a thread was, it writes a half
///   only in the cycle that owns it, after the reads of the cycle before. (With the
///   count read by an acquire load that sees the release of every step before it, what
///   a step wrote is visible to the next cycle's steps, whichever thread takes them.)
/// - *the partitions* (behind their locks) and each thread's scratch (`all`, `union`)
///   hold nothing from one cycle to the next that another thread reads.
/// - *the outcome*: decided in cycle h by every partition's step, before its count; no
///   thread claims cycle h + 1, since it first waits for cycle h's count and then sees
///   the decision (`decided` < h + 1) and returns it.
fn worker<N: Network, B: CycleBarrier>(
    i: usize,
    t: usize,
    sh: Shared<'_, '_, N, B>,
    progress: &mut dyn FnMut(Cycle),
) -> Option<Stop> {
    let _guard = FailAndWake(sh.failed, sh.done);
    let mut all = vec![Summary::default(); t];
    let mut union = Vec::new();
    let mut reported = 0;
    // The cycle to take part in: every cycle before it is complete.
    let mut g = 0u64;
    loop {
        // A decision in this very cycle (a faster thread's step read it first) still
        // needs the partitions not yet stepped to apply it: only an earlier one ends.
        if sh.decided.load(Ordering::Acquire) < g {
            let (_, stop) = lock(sh.outcome).clone().expect("decided with its outcome");
            return Some(stop);
        }
        for k in 0..t {
            let p = (i + k) % t;
            let claim =
                sh.claims[p].compare_exchange(g, g + 1, Ordering::AcqRel, Ordering::Relaxed);
            if claim.is_ok() {
                cycle(p, g, &mut lock(&sh.parts[p]), sh, &mut all, &mut union);
                sh.done.add_one();
            }
        }
        match sh.end {
            CycleEnd::Barrier => sh.barrier.wait(&sh.failed.0),
            CycleEnd::WhenDone { .. } => sh.done.wait_complete(g, &sh.failed.0),
        }
        if sh.failed.0.load(Ordering::Acquire) {
            return None;
        }
        let now = sh.clock.load(Ordering::Relaxed);
        if now != reported {
            reported = now;
            progress(now);
        }
        g = match sh.end {
            // Every thread arrives at the barrier once per cycle: none may skip one.
            CycleEnd::Barrier => g + 1,
            // The others may have gone on while this thread was away (or reporting).
            CycleEnd::WhenDone { .. } => sh.done.complete().max(g + 1),
        };
    }
}

/// Partition `p`'s part of cycle `g` (counted from this call): the previous cycle's
/// decision, then, unless the run ends, this cycle's step (see the module doc).
fn cycle<N: Network, B>(
    p: usize,
    g: u64,
    part: &mut Part<'_, N>,
    sh: Shared<'_, '_, N, B>,
    all: &mut [Summary],
    union: &mut Vec<WaitEdge>,
) {
    let t = all.len();
    let sim = &mut *part.sim;
    if g > 0 {
        let parity = ((g - 1) % 2) as usize;
        take_over(p, parity, sim, sh.mail, 0..t);
        for (q, s) in all.iter_mut().enumerate() {
            *s = *lock(&sh.sums[parity * t + q]);
        }
        if part.check {
            // A deadlock's waits may span partitions: look at the union of their edges.
            union.clear();
            for q in 0..t {
                union.extend_from_slice(&lock(&sh.edges[parity * t + q]));
            }
            all[0].proven_stall = has_cycle(union);
        }
        let clock = sh.clock;
        let decision = sim.coordinate(all, &mut |now| {
            if p == 0 {
                clock.store(now, Ordering::Relaxed);
            }
        });
        match decision {
            Decision::Continue { next, window_end } => {
                sim.advance(next, window_end);
                if next >= sh.until {
                    decide(sh, g, Stop::CycleLimit);
                    return;
                }
            }
            Decision::Stop(stop, window_end) => {
                sim.finish(window_end);
                decide(sh, g, stop);
                return;
            }
        }
    }
    let parity = (g % 2) as usize;
    sim.step_local();
    hand_over(p, parity, sim, sh.mail, 0..t);
    *lock(&sh.sums[parity * t + p]) = sim.summary();
    part.check = sim.check_due();
    if part.check {
        let mut e = lock(&sh.edges[parity * t + p]);
        e.clear();
        sim.net.wait_edges(&mut e);
    }
}

/// Records that the run ends with `stop`, decided in cycle `g` (every partition's step
/// of that cycle decides alike).
fn decide<N: Network, B>(sh: Shared<'_, '_, N, B>, g: u64, stop: Stop) {
    *lock(sh.outcome) = Some((g, stop));
    sh.decided.store(g, Ordering::Release);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every thread adds to a per-phase counter between barriers; a barrier that let a
    /// thread through early would show a partial sum.
    fn lockstep_sums(barrier: &SpinBarrier, threads: usize, phases: usize) {
        let counters: Vec<AtomicUsize> = (0..phases).map(|_| AtomicUsize::new(0)).collect();
        let abort = AtomicBool::new(false);
        std::thread::scope(|s| {
            for _ in 0..threads {
                s.spawn(|| {
                    for counter in &counters {
                        counter.fetch_add(1, Ordering::Relaxed);
                        barrier.wait(&abort);
                        assert_eq!(counter.load(Ordering::Relaxed), threads);
                        barrier.wait(&abort);
                    }
                });
            }
        });
    }

    #[test]
    fn a_barrier_that_parks_at_once_still_keeps_threads_in_lockstep() {
        lockstep_sums(&SpinBarrier::with_spin(3, Duration::ZERO), 3, 2_000);
    }

    #[test]
    fn a_barrier_that_never_parks_keeps_threads_in_lockstep() {
        lockstep_sums(&SpinBarrier::with_spin(2, Duration::MAX), 2, 2_000);
    }

    #[test]
    fn a_parked_waiter_leaves_when_the_run_is_aborted() {
        let barrier = SpinBarrier::with_spin(2, Duration::ZERO);
        let abort = AtomicBool::new(false);
        std::thread::scope(|s| {
            let waiter = s.spawn(|| barrier.wait(&abort));
            std::thread::sleep(Duration::from_millis(20));
            abort.store(true, Ordering::Relaxed);
            waiter.join().unwrap();
        });
        assert_eq!(barrier.sleepers.load(Ordering::SeqCst), 0);
    }

    /// Every thread adds to each cycle's counter, counts its step done and waits for the
    /// cycle: a wait that ended early would show a partial sum, a lost wake-up would
    /// hang.
    fn cycles_in_lockstep(done: &DoneCount, threads: usize, cycles: usize) {
        let counters: Vec<AtomicUsize> = (0..cycles).map(|_| AtomicUsize::new(0)).collect();
        let failed = AtomicBool::new(false);
        std::thread::scope(|s| {
            for _ in 0..threads {
                s.spawn(|| {
                    for (g, counter) in counters.iter().enumerate() {
                        counter.fetch_add(1, Ordering::Relaxed);
                        done.add_one();
                        done.wait_complete(g as u64, &failed);
                        assert_eq!(counter.load(Ordering::Relaxed), threads);
                        assert!(done.complete() > g as u64);
                    }
                });
            }
        });
        assert_eq!(done.sleepers.load(Ordering::SeqCst), 0);
    }

    #[test]
    fn a_count_whose_waiters_park_at_once_ends_every_cycle_and_loses_no_wake_up() {
        cycles_in_lockstep(&DoneCount::new(3, Duration::ZERO), 3, 5_000);
    }

    #[test]
    fn a_count_whose_waiters_never_park_ends_every_cycle() {
        cycles_in_lockstep(&DoneCount::new(2, Duration::MAX), 2, 300);
    }

    #[test]
    fn a_thread_that_never_arrives_holds_nobody_up_once_its_step_is_done_by_another() {
        // Two steps a cycle, both done by one thread: the cycles end without the other.
        let done = DoneCount::new(2, Duration::ZERO);
        let failed = AtomicBool::new(false);
        for g in 0..100 {
            done.add_one();
            done.add_one();
            done.wait_complete(g, &failed);
        }
        assert_eq!(done.complete(), 100);
    }

    #[test]
    fn a_parked_count_waiter_leaves_when_a_thread_fails() {
        let done = DoneCount::new(2, Duration::ZERO);
        let failed = AtomicBool::new(false);
        std::thread::scope(|s| {
            let waiter = s.spawn(|| done.wait_complete(0, &failed));
            while done.sleepers.load(Ordering::SeqCst) == 0 {
                std::thread::yield_now();
            }
            done.fail(&failed);
            waiter.join().unwrap();
        });
        assert_eq!(done.complete(), 0, "the cycle never completed");
        assert_eq!(done.sleepers.load(Ordering::SeqCst), 0);
    }

    #[test]
    fn a_spin_barrier_ends_partitioned_cycles_by_the_count_and_a_std_barrier_at_itself() {
        let spin = SpinBarrier::with_spin(2, Duration::from_micros(7));
        assert_eq!(
            spin.cycle_end(),
            CycleEnd::WhenDone {
                spin: Duration::from_micros(7)
            }
        );
        assert_eq!(StdBarrier::new(2).cycle_end(), CycleEnd::Barrier);
    }

    #[test]
    fn more_threads_than_cores_are_warned_about_and_one_thread_never_is() {
        assert!(oversubscription_warning(1).is_none());
        let free = free_cores().expect("Linux has /proc/loadavg");
        let w = oversubscription_warning(free + 1).expect("more threads than free cores");
        assert!(w.contains(&format!("only {free} core")), "{w}");
    }
}
