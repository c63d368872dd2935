//! Replay on P partitions, one thread each, one barrier per cycle — the cycle of
//! `engine::parallel` with the replay's own exchange added — in one process (P = T
//! threads) or over R ranks of T threads (P = R·T, `engine::distributed::plan`). Each
//! rank's first partition (its leader, on the caller's thread) reads the trace — every
//! rank reads the same file, deterministically, so the messages read never cross ranks
//! — and writes the records (rank 0's alone; see `cli::replay`). A cycle, for
//! partition p:
//! 1. create the messages due now (every copy of the [`Driver`] pops the same ones;
//!    p injects those whose source it owns) and step its nodes;
//! 2. hand its outbox to the other partitions of its rank (what is for other ranks'
//!    partitions waits for the exchange) and post its deliveries and its next busy
//!    cycle; the leader also posts the messages recorded up to the next cycle, the time
//!    of the first one it did not read, a stop request and an error the other ranks
//!    may not meet;
//! 3. wait at the barrier; over ranks, the leader then exchanges with the other ranks
//!    (`exchange`: its rank's posts and the mail for their partitions, one personalised
//!    all-to-all) and the rank waits at the barrier again;
//! 4. take its mail, and feed its driver every partition's deliveries (sorted by cycle,
//!    then message id, so the order depends neither on T nor on R) and the messages
//!    read; the driver decides the next cycle — the same one in every partition of
//!    every rank.
//!
//! The exchange rule: ranks exchange after every cycle that is stepped. A delivery in
//! any partition can, through the driver (a child cleared, the watchdog, the end), make
//! a message anywhere the next cycle, so the replay's lookahead is one cycle whatever
//! the links'. Idle cycles are skipped alike by every rank, as in one process: the
//! next cycle comes from every partition's posted next busy cycle, the first unread
//! message and the driver, which every rank holds alike.
//!
//! Posts are double-buffered by cycle parity like the mailboxes, and read under shared
//! locks, so the partitions read them side by side. With P = 1 the very same loop runs
//! on the caller's thread.
//!
//! Failures: what every partition meets alike (a message refused by a full source, a
//! bad trace line, a deadlock) ends every partition in the same cycle with the same
//! error. What one rank may meet alone — its `each` failing to write a record, an error
//! reading its copy of the trace — is held by its leader and posted: every partition of
//! every rank then stops after the next exchange, the rank that met it with its error
//! and the others with a [`Error::Distributed`] naming it.

use crate::engine::distributed::wire;
use crate::engine::network::Network;
use crate::engine::parallel::{
    hand_over, lock, mailboxes, take_over, CycleBarrier, FailOnPanic, Failed, Mail, SpinBarrier,
};
use crate::engine::probe::Delivery;
use crate::engine::sim::Simulation;
use crate::engine::transport::Transport;
use crate::experiments::replay::driver::{Driver, NetProgress, Step};
use crate::experiments::replay::{
    flits_of, scale, ReplayMode, ReplayOptions, ReplayRecord, ReplaySummary, HORIZON, READ_AHEAD,
};
use crate::foundation::error::{Error, Result};
use crate::foundation::types::Cycle;
use crate::trace::{SizeUnit, TraceMsg, TraceSource};
use serde::{Deserialize, Serialize};
use std::ops::Range;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, RwLock};

/// A leader's cursor in the trace: reads no further than it must, and refuses a
/// message the replay cannot take (a time beyond [`HORIZON`], more flits than a message
/// can have) where it was read, so nothing is dropped or clamped.
pub(super) struct Reader<'a> {
    src: &'a mut dyn TraceSource,
    /// The next message and its recorded time in cycles.
    next: Option<(TraceMsg, Cycle)>,
    time_scale: f64,
    flit_bytes: u64,
    /// Cycles read ahead of the bound asked for (elastic replay: [`READ_AHEAD`]).
    ahead: Cycle,
}

impl<'a> Reader<'a> {
    pub(super) fn new(src: &'a mut dyn TraceSource, opts: &ReplayOptions) -> Result<Self> {
        let mut r = Reader {
            src,
            next: None,
            time_scale: opts.time_scale,
            flit_bytes: opts.flit_bytes,
            ahead: if opts.mode == ReplayMode::Elastic {
                READ_AHEAD
            } else {
                0
            },
        };
        r.next = r.read_one()?;
        Ok(r)
    }

    /// The source's next message, checked, with its time in cycles.
    fn read_one(&mut self) -> Result<Option<(TraceMsg, Cycle)>> {
        let Some(m) = self.src.next_msg()? else {
            return Ok(None);
        };
        let cycles = m.time as f64 * self.time_scale;
        if cycles.round() > HORIZON as f64 {
            return Err(Error::Trace(format!(
                "{}: message {} is recorded at {} × {:?} cycles per unit (--time-scale) = \
                 {cycles:.3e} cycles, beyond the replay's horizon of 2^62 cycles",
                self.src.place(),
                m.id,
                m.time,
                self.time_scale
            )));
        }
        let unit = self.src.unit();
        if flits_of(m.size, unit, self.flit_bytes).is_none() {
            let per = match unit {
                SizeUnit::Bytes => format!(" at {} bytes per flit", self.flit_bytes),
                SizeUnit::Flits => String::new(),
            };
            return Err(Error::Trace(format!(
                "{}: message {} of size {}{per} has more than {} flits, the most a \
                 message can have",
                self.src.place(),
                m.id,
                m.size,
                u32::MAX
            )));
        }
        let at = scale(m.time, self.time_scale);
        Ok(Some((m, at)))
    }

    /// Appends the messages recorded no later than `bound` (cycles; in elastic replay,
    /// [`READ_AHEAD`] cycles later) to `out`; returns the recorded time of the first
    /// message left unread (None at the end).
    pub(super) fn read_upto(
        &mut self,
        bound: Cycle,
        out: &mut Vec<TraceMsg>,
    ) -> Result<Option<Cycle>> {
        let bound = bound.saturating_add(self.ahead);
        while let Some((m, at)) = self.next.take() {
            if at > bound {
                self.next = Some((m, at));
                return Ok(Some(at));
            }
            out.push(m);
            self.next = self.read_one()?;
        }
        Ok(None)
    }

    /// Whether the source's ids increase (see [`TraceSource::ids_increase`]).
    pub(super) fn ids_increase(&self) -> bool {
        self.src.ids_increase()
    }

    /// Whether only part of the trace is read (see [`TraceSource::partial`]).
    pub(super) fn partial(&self) -> bool {
        self.src.partial()
    }

    /// The trace's endpoint count, when it says (see [`TraceSource::endpoints`]).
    pub(super) fn endpoints(&self) -> Option<u32> {
        self.src.endpoints()
    }
}

/// What a partition posts at the end of a cycle.
pub(super) struct Post {
    /// Its next busy cycle.
    pub(super) next: Cycle,
    /// The last cycle its work moved, and the work that must keep moving.
    pub(super) last_move: Cycle,
    pub(super) live: i64,
    /// A source of its refused a message (its memory was full): every partition ends
    /// the replay with the same error.
    pub(super) lost: bool,
    /// Its deliveries of the cycle.
    pub(super) deliveries: Vec<Delivery>,
    /// Leaders only, not sent: the messages read.
    read: Vec<TraceMsg>,
    /// Leaders only, not sent: recorded time of the first unread message (None: all
    /// read).
    unread: Option<Cycle>,
    /// Leaders only: a stop request (`engine::interrupt`) was seen: every partition ends
    /// the replay after this cycle with what was delivered so far.
    pub(super) stop: bool,
    /// Leaders only: the error the leader holds (see the module doc), as text.
    pub(super) fail: Option<String>,
    /// What a partition's own bookkeeping says (elastic replay: the drivers are not
    /// copies of each other, so they tell each other their counts).
    pub(super) book: BookPost,
}

/// A partition's bookkeeping in an elastic replay (zero in the other modes): network
/// messages it created and had delivered, its ranks not finished, its last delivery, and
/// a rank of its that waits for nothing anyone will do.
#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize)]
pub(super) struct BookPost {
    pub(super) created: u64,
    pub(super) delivered: u64,
    pub(super) unfinished: u64,
    pub(super) last_delivery: Cycle,
    pub(super) stuck: Option<[u32; 4]>,
    /// The cycle the partition has stepped to.
    pub(super) now: Cycle,
    /// Network messages that may cross between processes, created and delivered, and
    /// the earliest cycle the partition could create another (see
    /// `elastic::ranks::Ranks::earliest_crossing`).
    pub(super) crossing_created: u64,
    pub(super) crossing_delivered: u64,
    pub(super) earliest_crossing: Cycle,
}

impl Default for Post {
    fn default() -> Self {
        Post {
            next: Cycle::MAX,
            last_move: 0,
            live: 0,
            lost: false,
            deliveries: Vec::new(),
            read: Vec::new(),
            unread: None,
            stop: false,
            fail: None,
            book: BookPost::default(),
        }
    }
}

/// How the replay's partitions are split over ranks.
pub(super) struct Split<'a> {
    /// Partitions in all.
    pub(super) parts: usize,
    /// The partitions (global numbers) each rank steps; one range in one process.
    pub(super) owned: Vec<Range<usize>>,
    /// This rank.
    pub(super) rank: usize,
    /// The other ranks (None: one process).
    pub(super) transport: Option<&'a dyn Transport>,
}

/// What the threads of one rank share.
pub(super) struct Shared<'a, N: Network> {
    /// Mailboxes between partitions (global numbers, this rank's pairs only used).
    mail: &'a [Mutex<Mail<N>>],
    /// Every partition's post, by parity then global number (other ranks' filled by the
    /// exchange).
    pub(super) posts: &'a [RwLock<Post>],
    /// Per local partition: its outbox vectors for other ranks' partitions.
    pub(super) outgoing: &'a [Mutex<wire::Outgoing<N>>],
    /// Per local partition: what other ranks sent it.
    pub(super) incoming: &'a [Mutex<Mail<N>>],
    barrier: &'a SpinBarrier,
    failed: &'a Failed,
    /// The error this rank's leader holds until every rank has heard of it.
    held: &'a Mutex<Option<Error>>,
    pub(super) mine: &'a Range<usize>,
    pub(super) parts: usize,
    /// Whether there are other ranks.
    pub(super) ranked: bool,
}

impl<N: Network> Clone for Shared<'_, N> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<N: Network> Copy for Shared<'_, N> {}

/// How a replay's stepping ended on this rank.
pub(super) struct Ended {
    /// The summary (every rank's alike).
    pub(super) summary: ReplaySummary,
    /// The deliveries the leader's driver logged (none unless it was asked to).
    pub(super) log: Vec<Delivery>,
    /// An error this rank's leader met in the last cycle (its `each` failing): the
    /// replay's result once the ranks have gathered their measurements.
    pub(super) held: Option<Error>,
}

/// How a partition's thread ended.
enum Outcome {
    /// The replay is over.
    Done(Box<ReplaySummary>, Vec<Delivery>),
    /// Partition `.0` posted an error (`.1`): every partition stopped.
    Failed(usize, String),
    /// Another thread of this rank failed (a panic, or an error it returned).
    Aborted,
}

/// Replays on `sims` (this rank's partitions of `split`, in node order, workload
/// stopped, deliveries recorded) with `drivers` (one identical copy each, the first
/// messages ingested); `reader` is the trace after those messages.
pub(super) fn run<N: Network + Send>(
    sims: &mut [Simulation<N>],
    split: &Split<'_>,
    drivers: Vec<Driver>,
    reader: &mut Reader<'_>,
    each: &mut dyn FnMut(&ReplayRecord) -> Result<()>,
) -> Result<Ended> {
    let parts = split.parts;
    let mine = split.owned[split.rank].clone();
    let bufs = Buffers::<N>::new(split, sims.len());
    let sh = bufs.shared(&mine, parts);
    let held = &bufs.held;
    let mut exchanger = split
        .transport
        .map(|t| crate::engine::distributed::wire::Exchanger::new(t, &mine, &split.owned));
    let mut drivers = drivers.into_iter();
    let lead = drivers.next().expect("one driver per partition");
    let (led, others) = std::thread::scope(|scope| {
        let (first, rest) = sims.split_first_mut().expect("at least one partition");
        let handles: Vec<_> = rest
            .iter_mut()
            .zip(drivers)
            .enumerate()
            .map(|(i, (sim, d))| {
                let p = mine.start + i + 1;
                scope.spawn(move || partition(p, sim, d, None, &mut |_| Ok(()), sh))
            })
            .collect();
        let leader = Leader {
            reader,
            exchanger: exchanger.as_mut(),
        };
        let led = partition(mine.start, first, lead, Some(leader), each, sh);
        let mut others = Vec::new();
        for h in handles {
            match h.join() {
                Ok(r) => others.push(r),
                // A bug in a partition's thread: fail the whole replay with its panic.
                Err(e) => std::panic::resume_unwind(e),
            }
        }
        (led, others)
    });
    let held = lock(held).take();
    match led {
        Ok(Outcome::Done(summary, log)) => Ok(Ended {
            summary: *summary,
            log,
            held,
        }),
        Err(e) => Err(held.unwrap_or(e)),
        Ok(Outcome::Failed(q, text)) => Err(held.unwrap_or_else(|| {
            let r = split.owned.iter().position(|o| o.contains(&q)).unwrap_or(0);
            Error::Distributed(format!("rank {r} stopped the replay: {text}"))
        })),
        // Another partition of this rank failed: its error is the replay's.
        Ok(Outcome::Aborted) => Err(held
            .or_else(|| others.into_iter().find_map(|r| r.err()))
            .unwrap_or_else(|| Error::Trace("a replay partition failed".into()))),
    }
}

/// What the threads of one rank share, owned (see [`Shared`]).
pub(super) struct Buffers<N: Network> {
    mail: Vec<Mutex<Mail<N>>>,
    posts: Vec<RwLock<Post>>,
    outgoing: Vec<Mutex<wire::Outgoing<N>>>,
    incoming: Vec<Mutex<Mail<N>>>,
    barrier: SpinBarrier,
    failed: Failed,
    pub(super) held: Mutex<Option<Error>>,
    ranked: bool,
}

impl<N: Network> Buffers<N> {
    /// The buffers of this rank's `local` partitions of `split`.
    pub(super) fn new(split: &Split<'_>, local: usize) -> Self {
        let parts = split.parts;
        let ranked = split.transport.is_some();
        Buffers {
            mail: mailboxes::<N>(parts),
            posts: (0..2 * parts)
                .map(|_| RwLock::new(Post::default()))
                .collect(),
            outgoing: (0..if ranked { local } else { 0 })
                .map(|_| Mutex::new(wire::Outgoing::new(parts)))
                .collect(),
            incoming: (0..if ranked { local } else { 0 })
                .map(|_| Mutex::new((Vec::new(), Vec::new())))
                .collect(),
            barrier: SpinBarrier::new(local),
            failed: Failed(AtomicBool::new(false)),
            held: Mutex::new(None),
            ranked,
        }
    }

    /// The threads' view of them; `mine`: this rank's partitions of `parts`.
    pub(super) fn shared<'a>(&'a self, mine: &'a Range<usize>, parts: usize) -> Shared<'a, N> {
        Shared {
            mail: &self.mail,
            posts: &self.posts,
            outgoing: &self.outgoing,
            incoming: &self.incoming,
            barrier: &self.barrier,
            failed: &self.failed,
            held: &self.held,
            mine,
            parts,
            ranked: self.ranked,
        }
    }
}

impl<N: Network> Shared<'_, N> {
    /// Partition `p` hands its outbox for this rank's other partitions to their
    /// mailboxes (`parity`: the cycle's half).
    pub(super) fn hand_local(&self, p: usize, parity: usize, sim: &mut Simulation<N>) {
        hand_over(p, parity, sim, self.mail, self.mine.clone());
    }

    /// Partition `p` takes what this rank's other partitions handed it (after the
    /// barrier).
    pub(super) fn take_local(&self, p: usize, parity: usize, sim: &mut Simulation<N>) {
        take_over(p, parity, sim, self.mail, self.mine.clone());
    }

    /// Partition `p` takes what other ranks sent it (after the exchange's barrier);
    /// returns the cycle of an event due no later than the one it stepped last (which
    /// the exchange rule must never let happen), if any.
    pub(super) fn take_incoming(&self, p: usize, sim: &mut Simulation<N>) -> Option<Cycle> {
        let mut inc = lock(&self.incoming[p - self.mine.start]);
        let (events, extras) = &mut *inc;
        let late = events.iter().map(|e| e.0).min().filter(|&at| at <= sim.t);
        sim.absorb(events, extras);
        late
    }

    /// Partition `p` puts its outbox for other ranks' partitions aside for the
    /// exchange.
    pub(super) fn put_outgoing(&self, p: usize, sim: &mut Simulation<N>) {
        lock(&self.outgoing[p - self.mine.start]).take_from(&mut sim.out, self.mine);
    }

    /// Waits for this rank's other partitions; false when one of them failed.
    pub(super) fn meet(&self) -> bool {
        self.barrier.wait(&self.failed.0);
        !self.failed.0.load(Ordering::Acquire)
    }

    /// Marks this rank's replay failed (its other partitions stop at the barrier).
    pub(super) fn fail(&self) {
        self.failed.0.store(true, Ordering::Release);
    }

    /// The failure flag, for a guard that sets it if the thread panics.
    pub(super) fn failed(&self) -> &Failed {
        self.failed
    }
}

pub(super) fn lock_write<T>(l: &RwLock<T>) -> std::sync::RwLockWriteGuard<'_, T> {
    l.write().unwrap_or_else(|e| e.into_inner())
}

pub(super) fn lock_read<T>(l: &RwLock<T>) -> std::sync::RwLockReadGuard<'_, T> {
    l.read().unwrap_or_else(|e| e.into_inner())
}

/// What a rank's leader partition has besides its simulation: the trace, and the
/// exchange with the other ranks.
struct Leader<'a, 'r, 'x> {
    reader: &'a mut Reader<'r>,
    exchanger: Option<&'a mut crate::engine::distributed::wire::Exchanger<'x>>,
}

/// Partition `p`'s thread (global number; a leader has `lead`, and its `each` sees the
/// records). Err when this partition failed (the flag then stops this rank's others).
fn partition<N: Network>(
    p: usize,
    sim: &mut Simulation<N>,
    mut driver: Driver,
    mut lead: Option<Leader<'_, '_, '_>>,
    each: &mut dyn FnMut(&ReplayRecord) -> Result<()>,
    sh: Shared<'_, N>,
) -> Result<Outcome> {
    let _guard = FailOnPanic(sh.failed());
    let fail = |e: Error| {
        sh.fail();
        Err(e)
    };
    let parts = sh.parts;
    let leader = sh.mine.start;
    let mut parity = 0;
    let mut inbox: Vec<Delivery> = Vec::new();
    let mut each_failed = false;
    loop {
        // The series' boundary sees the backlog before this cycle's creations.
        sim.sample_boundary();
        if let Err(e) = driver.create(sim) {
            return fail(e);
        }
        sim.step_local();
        sh.hand_local(p, parity, sim);
        if sh.ranked {
            sh.put_outgoing(p, sim);
        }
        {
            let mut post = lock_write(&sh.posts[parity * parts + p]);
            post.next = sim.next_busy();
            post.last_move = sim.net.last_progress();
            post.live = sim.net.live_work();
            post.lost = sim.net.lost() > 0;
            post.deliveries.clear();
            if let Some(d) = sim.stats.deliveries.as_mut() {
                std::mem::swap(d, &mut post.deliveries);
            }
            if let Some(lead) = lead.as_mut() {
                post.read.clear();
                let mut held = lock(sh.held);
                if held.is_none() {
                    match lead.reader.read_upto(sim.t + 1, &mut post.read) {
                        Ok(u) => post.unread = u,
                        Err(e) => *held = Some(e),
                    }
                }
                post.fail = held.as_ref().map(|e| e.to_string());
                post.stop = crate::engine::interrupt::requested();
            }
        }
        if !sh.meet() {
            return Ok(Outcome::Aborted);
        }
        if let Some(ex) = lead.as_mut().and_then(|l| l.exchanger.as_deref_mut()) {
            ex.run_replay(sh, parity);
        }
        if sh.ranked && !sh.meet() {
            return Ok(Outcome::Aborted);
        }
        sh.take_local(p, parity, sim);
        if sh.ranked {
            if let Some(late) = sh.take_incoming(p, sim) {
                return fail(Error::Distributed(format!(
                    "internal: an event from another rank arrived for cycle {late}, after this \
                     rank had stepped to cycle {}",
                    sim.t
                )));
            }
        }
        let now = sim.t;
        // Every partition's deliveries, in an order that does not depend on the split.
        inbox.clear();
        let mut network = NetProgress {
            next: Cycle::MAX,
            last_move: 0,
            live: 0,
        };
        let (mut lost, mut stop, mut failure) = (false, false, None);
        for q in 0..parts {
            let post = lock_read(&sh.posts[parity * parts + q]);
            inbox.extend_from_slice(&post.deliveries);
            network.next = network.next.min(post.next);
            network.last_move = network.last_move.max(post.last_move);
            network.live += post.live;
            lost |= post.lost;
            stop |= post.stop;
            if failure.is_none() {
                failure = post.fail.clone().map(|f| (q, f));
            }
        }
        if let Some((q, text)) = failure {
            return Ok(Outcome::Failed(q, text));
        }
        if lost {
            return fail(Error::Trace(format!(
                "cycle {now}: a source's memory was full and refused a message of the trace \
                 (switching.max_pending); a replay needs every message: raise the limit or \
                 set it to None"
            )));
        }
        inbox.sort_unstable_by_key(|d| (d.absorbed, d.header.id));
        // A record the leader's `each` could not take is held, and posted next cycle
        // (another rank may be waiting in the exchange), not returned at once.
        let mut record = |r: &ReplayRecord| -> Result<()> {
            if !each_failed {
                if let Err(e) = each(r) {
                    each_failed = true;
                    lock(sh.held).get_or_insert(e);
                }
            }
            Ok(())
        };
        let step = driver.deliver(now, &inbox, &mut record).and_then(|()| {
            if stop {
                // Interrupted: end here with what was delivered so far.
                return Ok(Step::Done);
            }
            let lead = lock_read(&sh.posts[parity * parts + leader]);
            driver.ingest(&lead.read, Some(now))?;
            driver.next(now, network, lead.unread)
        });
        match step {
            Ok(Step::Next(next)) => sim.advance(next, None),
            Ok(Step::Done) => {
                let log = driver.log.take().unwrap_or_default();
                return Ok(Outcome::Done(Box::new(driver.summary(parts as u32)), log));
            }
            Ok(Step::Deadlock(what)) => {
                // Every copy decides alike; the leaders alone report. The waits can be
                // described only with the whole network in one partition (a replay
                // on one thread of one process reaches the very same state).
                let waits = if parts == 1 {
                    sim.net.explain_deadlock(sim.t)
                } else if sh.ranked {
                    format!(
                        "the network is split into {parts} partitions over several ranks: \
                         replay in one process with --threads 1 for the waits\n"
                    )
                } else {
                    format!(
                        "the network is split into {parts} partitions: replay with --threads 1 \
                         for the waits\n"
                    )
                };
                return fail(Error::Deadlock(format!("{what}\n{waits}")));
            }
            Err(e) => return fail(e),
        }
        parity ^= 1;
    }
}
