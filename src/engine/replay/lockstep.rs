//! Replay on T partitions, one thread each, one barrier per cycle — the cycle of
//! `engine::parallel` with the replay's own exchange added. Partition 0 (the leader,
//! on the caller's thread) alone reads the trace and writes the records. A cycle, for
//! partition p:
//! 1. create the messages due now (every copy of the [`Driver`] pops the same ones;
//!    p injects those whose source it owns) and step its nodes;
//! 2. hand its outbox to the others and post its deliveries and its next busy cycle;
//!    the leader also posts the messages recorded up to the next cycle and the time of
//!    the first one it did not read;
//! 3. wait at the barrier;
//! 4. take its mail, and feed its driver every partition's deliveries (sorted by cycle,
//!    then message id, so the order does not depend on T) and the messages read; the
//!    driver decides the next cycle — the same one in every partition.
//!
//! Posts are double-buffered by cycle parity like the mailboxes, and read under shared
//! locks, so the partitions read them side by side. With T = 1 the very same loop runs
//! on the caller's thread.

use super::driver::{Driver, NetProgress, Step};
use super::{flits_of, scale, ReplayOptions, ReplayRecord, ReplaySummary, HORIZON};
use crate::engine::network::Network;
use crate::engine::parallel::{
    hand_over, mailboxes, take_over, CycleBarrier, FailOnPanic, Failed, Mail, SpinBarrier,
};
use crate::engine::sim::Simulation;
use crate::error::{Error, Result};
use crate::stats::Delivery;
use crate::trace::{SizeUnit, TraceMsg, TraceSource};
use crate::types::Cycle;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, RwLock};

/// The leader's cursor in the trace: reads no further than it must, and refuses a
/// message the replay cannot take (a time beyond [`HORIZON`], more flits than a message
/// can have) where it was read, so nothing is dropped or clamped.
pub(super) struct Reader<'a> {
    src: &'a mut dyn TraceSource,
    /// The next message and its recorded time in cycles.
    next: Option<(TraceMsg, Cycle)>,
    time_scale: f64,
    flit_bytes: u64,
}

impl<'a> Reader<'a> {
    pub(super) fn new(src: &'a mut dyn TraceSource, opts: &ReplayOptions) -> Result<Self> {
        let mut r = Reader {
            src,
            next: None,
            time_scale: opts.time_scale,
            flit_bytes: opts.flit_bytes,
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

    /// Appends the messages recorded no later than `bound` (cycles) to `out`; returns
    /// the recorded time of the first message left unread (None at the end).
    pub(super) fn read_upto(
        &mut self,
        bound: Cycle,
        out: &mut Vec<TraceMsg>,
    ) -> Result<Option<Cycle>> {
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
}

/// What a partition posts at the end of a cycle.
struct Post {
    /// Its next busy cycle.
    next: Cycle,
    /// The last cycle its work moved, and the work that must keep moving.
    last_move: Cycle,
    live: i64,
    /// Its deliveries of the cycle.
    deliveries: Vec<Delivery>,
    /// Leader only: the messages read.
    read: Vec<TraceMsg>,
    /// Leader only: recorded time of the first unread message (None: all read).
    unread: Option<Cycle>,
    /// The leader saw a stop request (`engine::interrupt`): every partition ends the
    /// replay after this cycle with what was delivered so far.
    stop: bool,
}

impl Default for Post {
    fn default() -> Self {
        Post {
            next: Cycle::MAX,
            last_move: 0,
            live: 0,
            deliveries: Vec::new(),
            read: Vec::new(),
            unread: None,
            stop: false,
        }
    }
}

struct Shared<'a, N: Network> {
    mail: &'a [Mutex<Mail<N>>],
    posts: &'a [RwLock<Post>],
    barrier: &'a SpinBarrier,
    failed: &'a Failed,
}

impl<N: Network> Clone for Shared<'_, N> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<N: Network> Copy for Shared<'_, N> {}

/// Replays on `sims` (the partitions in node order, workload stopped, deliveries
/// recorded) with `drivers` (one identical copy each, the first messages ingested);
/// `reader` is the trace after those messages. Returns the summary and the deliveries
/// the leader's driver logged (none unless it was asked to).
pub(super) fn run<N: Network + Send>(
    sims: &mut [Simulation<N>],
    drivers: Vec<Driver>,
    reader: &mut Reader<'_>,
    each: &mut dyn FnMut(&ReplayRecord) -> Result<()>,
) -> Result<(ReplaySummary, Vec<Delivery>)> {
    let t = sims.len();
    let mail = mailboxes::<N>(t);
    let posts: Vec<RwLock<Post>> = (0..2 * t).map(|_| RwLock::new(Post::default())).collect();
    let barrier = SpinBarrier::new(t);
    let failed = Failed(AtomicBool::new(false));
    let sh = Shared {
        mail: &mail,
        posts: &posts,
        barrier: &barrier,
        failed: &failed,
    };
    let mut drivers = drivers.into_iter();
    let lead = drivers.next().expect("one driver per partition");
    std::thread::scope(|scope| {
        let (first, rest) = sims.split_first_mut().expect("at least one partition");
        let handles: Vec<_> = rest
            .iter_mut()
            .zip(drivers)
            .enumerate()
            .map(|(i, (sim, d))| {
                scope.spawn(move || partition(i + 1, sim, d, None, &mut |_| Ok(()), sh))
            })
            .collect();
        let led = partition(0, first, lead, Some(reader), each, sh);
        let mut others = Vec::new();
        for h in handles {
            match h.join() {
                Ok(r) => others.push(r),
                // A bug in a partition's thread: fail the whole replay with its panic.
                Err(e) => std::panic::resume_unwind(e),
            }
        }
        match led {
            Ok(Some(s)) => Ok(s),
            Err(e) => Err(e),
            // Another partition failed: its error is the replay's.
            Ok(None) => Err(others
                .into_iter()
                .find_map(|r| r.err())
                .unwrap_or_else(|| Error::Trace("a replay partition failed".into()))),
        }
    })
}

fn lock_write<T>(l: &RwLock<T>) -> std::sync::RwLockWriteGuard<'_, T> {
    l.write().unwrap_or_else(|e| e.into_inner())
}

fn lock_read<T>(l: &RwLock<T>) -> std::sync::RwLockReadGuard<'_, T> {
    l.read().unwrap_or_else(|e| e.into_inner())
}

/// Partition `p`'s thread (the leader has the `reader`, and its `each` sees the
/// records): Ok(Some) with the summary at the end, Ok(None) when another
/// partition failed, Err when this one did (the flag then stops the others).
fn partition<N: Network>(
    p: usize,
    sim: &mut Simulation<N>,
    mut driver: Driver,
    mut reader: Option<&mut Reader<'_>>,
    each: &mut dyn FnMut(&ReplayRecord) -> Result<()>,
    sh: Shared<'_, N>,
) -> Result<Option<(ReplaySummary, Vec<Delivery>)>> {
    let _guard = FailOnPanic(sh.failed);
    let fail = |e: Error| {
        sh.failed.0.store(true, Ordering::Release);
        Err(e)
    };
    let t = sim.out.events.len();
    let mut parity = 0;
    let mut inbox: Vec<Delivery> = Vec::new();
    loop {
        if let Err(e) = driver.create(sim) {
            return fail(e);
        }
        sim.step_local();
        if sim.net.lost() > 0 {
            return fail(Error::Trace(format!(
                "cycle {}: a source's memory was full and refused a message of the trace \
                 (switching.max_pending); a replay needs every message: raise the limit or \
                 set it to None",
                sim.t
            )));
        }
        hand_over(p, parity, sim, sh.mail);
        {
            let mut post = lock_write(&sh.posts[parity * t + p]);
            post.next = sim.next_busy();
            post.last_move = sim.net.last_progress();
            post.live = sim.net.live_work();
            post.deliveries.clear();
            if let Some(d) = sim.stats.deliveries.as_mut() {
                std::mem::swap(d, &mut post.deliveries);
            }
            if let Some(reader) = reader.as_mut() {
                post.read.clear();
                match reader.read_upto(sim.t + 1, &mut post.read) {
                    Ok(u) => post.unread = u,
                    Err(e) => {
                        drop(post);
                        return fail(e);
                    }
                }
                post.stop = crate::engine::interrupt::requested();
            }
        }
        sh.barrier.wait(&sh.failed.0);
        if sh.failed.0.load(Ordering::Acquire) {
            return Ok(None);
        }
        take_over(p, parity, sim, sh.mail);
        let now = sim.t;
        // Every partition's deliveries, in an order that does not depend on T.
        inbox.clear();
        let mut network = NetProgress {
            next: Cycle::MAX,
            last_move: 0,
            live: 0,
        };
        for q in 0..t {
            let post = lock_read(&sh.posts[parity * t + q]);
            inbox.extend_from_slice(&post.deliveries);
            network.next = network.next.min(post.next);
            network.last_move = network.last_move.max(post.last_move);
            network.live += post.live;
        }
        inbox.sort_unstable_by_key(|d| (d.absorbed, d.header.id));
        let step = driver.deliver(now, &inbox, each).and_then(|()| {
            let lead = lock_read(&sh.posts[parity * t]);
            if lead.stop {
                // Interrupted: end here with what was delivered so far.
                return Ok(Step::Done);
            }
            driver.ingest(&lead.read, Some(now))?;
            driver.next(now, network, lead.unread)
        });
        match step {
            Ok(Step::Next(next)) => sim.advance(next, None),
            Ok(Step::Done) => {
                let log = driver.log.take().unwrap_or_default();
                return Ok(Some((driver.summary(t as u32), log)));
            }
            Ok(Step::Deadlock(what)) => {
                // Every copy decides alike; the leader alone reports. The waits can be
                // described only with the whole network in one partition (a replay
                // on one thread reaches the very same state).
                let waits = if t == 1 {
                    N::explain_deadlock(sim)
                } else {
                    format!(
                        "the network is split into {t} partitions: replay with --threads 1 \
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
