//! Stepping an elastic replay: P partitions, one thread each, in one process or over R
//! ranks of T threads (`engine::distributed`), as `lockstep` steps the other replays —
//! but each partition runs only its own ranks ([`Ranks`]) and takes only its own
//! deliveries, so partitions tell each other nothing but their counts (network
//! messages created and delivered, ranks unfinished, next cycle with work).
//!
//! A cycle, for partition p: run what is due (programs, message creations), step the
//! nodes, take its deliveries, hand its mail to this rank's other partitions, post its
//! counts, and meet them at the barrier. Over ranks, the exchange with the other ranks
//! (their posts and mail, `exchange`) comes only at the end of a stretch of up to the
//! network's lookahead `L` cycles: nothing a partition does can reach another rank's
//! nodes sooner than a network event, and every network event is due `L` or more cycles
//! after it is sent, so inside a stretch each rank steps on its own, skipping cycles in
//! which none of its partitions has work. The decisions — the next cycle, the end, a
//! deadlock — are taken at the end of a stretch from every partition's posts, alike in
//! every partition of every rank. In one process every stepped cycle ends a stretch.
//!
//! Not here: the programs (`ranks`), the replicated replays' loop (`lockstep`).

use crate::engine::distributed::wire::Exchanger;
use crate::engine::network::Network;
use crate::engine::parallel::FailOnPanic;
use crate::engine::sim::Simulation;
use crate::experiments::replay::elastic::plan::{NetPlan, Proto};
use crate::experiments::replay::elastic::ranks::{PartAcc, Ranks, Stuck};
use crate::experiments::replay::lockstep::{
    lock_read, lock_write, BookPost, Buffers, Shared, Split,
};
use crate::experiments::replay::ReplayOptions;
use crate::foundation::error::{Error, Result};
use crate::foundation::types::Cycle;
use crate::trace::dumpi::call_name;
use crate::trace::program::{Op, Program, Req};

/// How the stepping ended on this rank.
pub(super) struct Ended {
    /// This rank's partitions' measurements, in partition order.
    pub(super) accs: Vec<PartAcc>,
    /// The replay's failure, once the measurements are gathered (a deadlock or a
    /// stuck program, alike on every rank).
    pub(super) failure: Option<Error>,
}

/// What every partition decides from the posts.
enum Step {
    Next(Cycle),
    Done,
    Fail(Error),
}

/// What the partitions' posts add up to.
#[derive(Default)]
struct Totals {
    next: Cycle,
    last_move: Cycle,
    live: i64,
    lost: bool,
    stop: bool,
    book: BookPost,
    fail: Option<(usize, String)>,
}

/// The watchdog's memory, alike in every partition.
struct Watch {
    last_progress: Cycle,
    stall: Cycle,
    /// Flits of the longest network message (modes that do not report movement get
    /// the time it takes to stream).
    longest: Cycle,
}

/// How one partition's thread ended.
enum Outcome {
    Done(Box<PartAcc>),
    /// Another rank posted an error.
    Failed(usize, String),
    /// Another thread of this rank failed.
    Aborted,
}

/// Replays on `sims` (this rank's partitions, workload stopped, deliveries recorded)
/// with `books` (one per partition).
pub(super) fn run<N: Network + Send>(
    sims: &mut [Simulation<N>],
    split: &Split<'_>,
    books: Vec<Ranks>,
    opts: &ReplayOptions,
    plan: &NetPlan,
) -> Result<Ended> {
    let parts = split.parts;
    let mine = split.owned[split.rank].clone();
    // Every rank cuts the same stretches: the shortest lookahead of any partition.
    let lookahead = match split.transport {
        Some(t) => {
            let local = sims.iter().map(|s| s.out.lookahead).min().unwrap_or(1);
            t.all_gather(&local.to_le_bytes())
                .iter()
                .map(|b| b.as_slice().try_into().map_or(1, Cycle::from_le_bytes))
                .min()
                .unwrap_or(1)
                .max(1)
        }
        None => 1,
    };
    let longest = plan.flits.iter().copied().max().unwrap_or(1) as Cycle;
    let bufs = Buffers::<N>::new(split, sims.len());
    let sh = bufs.shared(&mine, parts);
    let mut exchanger = split
        .transport
        .map(|t| Exchanger::new(t, &mine, &split.owned));
    let watch = || Watch {
        last_progress: 0,
        stall: opts.stall_cycles,
        longest,
    };
    let prog = books.first().map(|b| b.program());
    let mut books = books.into_iter();
    let lead = books.next().expect("one book per partition");
    let (led, others) = std::thread::scope(|scope| {
        let (first, rest) = sims.split_first_mut().expect("at least one partition");
        let handles: Vec<_> = rest
            .iter_mut()
            .zip(books)
            .enumerate()
            .map(|(i, (sim, b))| {
                let p = mine.start + i + 1;
                let w = watch();
                scope.spawn(move || partition(p, sim, b, None, sh, lookahead, w))
            })
            .collect();
        let led = partition(
            mine.start,
            first,
            lead,
            exchanger.as_mut(),
            sh,
            lookahead,
            watch(),
        );
        let mut others = Vec::new();
        for h in handles {
            match h.join() {
                Ok(r) => others.push(r),
                Err(e) => std::panic::resume_unwind(e),
            }
        }
        (led, others)
    });
    let mut accs = Vec::with_capacity(sims.len());
    let mut failure = None;
    for r in std::iter::once(led).chain(others) {
        match r {
            Ok((Outcome::Done(acc), f)) => {
                accs.push(*acc);
                if failure.is_none() {
                    failure = f;
                }
            }
            Ok((Outcome::Failed(q, text), _)) => {
                let r = split.owned.iter().position(|o| o.contains(&q)).unwrap_or(0);
                return Err(Error::Distributed(format!(
                    "rank {r} stopped the replay: {text}"
                )));
            }
            Ok((Outcome::Aborted, _)) => {}
            Err(e) => return Err(e),
        }
    }
    if accs.len() < sims.len() {
        return Err(Error::Trace("an elastic replay partition failed".into()));
    }
    // A stuck program is described from every rank's posts alike.
    let failure = failure.map(|f| match (f, &prog) {
        (Failure::Stuck(s), Some(p)) => Error::Trace(describe_stuck(p, plan, opts, s)),
        (Failure::Stuck(_), None) => Error::Trace("the programs are stuck".into()),
        (Failure::Other(e), _) => e,
    });
    Ok(Ended { accs, failure })
}

/// Why every partition stopped early (after the measurements are gathered).
enum Failure {
    /// No rank can go on and nothing is in flight: the rank that waits.
    Stuck(Stuck),
    Other(Error),
}

/// Partition `p`'s thread (global number; a rank's first partition exchanges with the
/// other ranks: `ex`).
#[allow(clippy::too_many_arguments)]
fn partition<N: Network>(
    p: usize,
    sim: &mut Simulation<N>,
    mut book: Ranks,
    mut ex: Option<&mut Exchanger<'_>>,
    sh: Shared<'_, N>,
    lookahead: Cycle,
    mut watch: Watch,
) -> Result<(Outcome, Option<Failure>)> {
    let _guard = FailOnPanic(sh.failed());
    let parts = sh.parts;
    let leader = p == sh.mine.start;
    let mut parity = 0;
    let mut stretch_end = sim.t + lookahead;
    let mut forward = Vec::new();
    loop {
        // The series' boundary sees the backlog before this cycle's creations.
        sim.sample_boundary();
        book.create(sim);
        sim.step_local();
        // A mode may record a delivery where the message's last link ends rather than
        // at its destination (circuit switching): those go to the destination's
        // partition with the posts.
        forward.clear();
        if let Some(d) = sim.stats.deliveries.as_mut() {
            let out = &sim.out;
            d.retain(|x| {
                out.is_local(x.header.dst.0) || {
                    forward.push(*x);
                    false
                }
            });
            book.deliver(sim.t, d);
            d.clear();
        }
        sh.hand_local(p, parity, sim);
        {
            let mut post = lock_write(&sh.posts[parity * parts + p]);
            std::mem::swap(&mut post.deliveries, &mut forward);
            post.next = sim.next_busy().min(book.next_event());
            post.last_move = sim.net.last_progress();
            post.live = sim.net.live_work();
            post.lost = sim.net.lost() > 0;
            post.book = BookPost {
                created: book.created,
                delivered: book.delivered,
                unfinished: book.unfinished,
                last_delivery: book.last_delivery,
                stuck: book.stuck().map(|s| [s.rank, s.call, s.op, s.wait_pos]),
                now: sim.t,
                crossing_created: book.crossing_created,
                crossing_delivered: book.crossing_delivered,
                earliest_crossing: if sh.ranked {
                    book.earliest_crossing(sim.t)
                } else {
                    Cycle::MAX
                },
            };
            if leader {
                post.stop = crate::engine::interrupt::requested();
            }
        }
        if !sh.meet() {
            return Ok((Outcome::Aborted, None));
        }
        sh.take_local(p, parity, sim);
        take_forwarded(&sh, parity, sh.mine.clone(), sim, &mut book);
        // The next cycle in which one of this rank's partitions has work.
        let now = sim.t + 1;
        let next_here = sh
            .mine
            .clone()
            .map(|q| lock_read(&sh.posts[parity * parts + q]).next)
            .min()
            .unwrap_or(now)
            .max(now);
        // Over ranks, the stretch goes on while this rank has work before its end;
        // this rank's partitions decide alike from their posts.
        if sh.ranked && next_here < stretch_end {
            let post = lock_read(&sh.posts[parity * parts + p]);
            if let Some(d) = post
                .deliveries
                .iter()
                .find(|d| !sh.mine.contains(&sim.out.nodes.part_of(d.header.dst.0)))
            {
                sh.fail();
                return Err(Error::Distributed(format!(
                    "internal: message {} was delivered for another rank's node {} in \
                     cycle {}, inside a stretch (the replay's stretch rule failed)",
                    d.header.id, d.header.dst, sim.t
                )));
            }
            drop(post);
            let pending = sim.out.earliest_remote;
            sim.advance(next_here, None);
            sim.out.earliest_remote = pending;
            parity ^= 1;
            continue;
        }
        if sh.ranked {
            // What is for other ranks' partitions goes with the exchange.
            sh.put_outgoing(p, sim);
            if !sh.meet() {
                return Ok((Outcome::Aborted, None));
            }
        }
        if let Some(ex) = ex.as_deref_mut() {
            ex.run_replay(sh, parity);
        }
        if sh.ranked {
            if !sh.meet() {
                return Ok((Outcome::Aborted, None));
            }
            if let Some(late) = sh.take_incoming(p, sim) {
                sh.fail();
                return Err(Error::Distributed(format!(
                    "internal: an event from another rank arrived for cycle {late}, after \
                     this rank had stepped to cycle {} (the replay's stretch rule failed)",
                    sim.t
                )));
            }
            let others = (0..parts).filter(|q| !sh.mine.contains(q));
            take_forwarded(&sh, parity, others, sim, &mut book);
        }
        let tot = totals(&sh, parity);
        if let Some((q, text)) = tot.fail {
            return Ok((Outcome::Failed(q, text), None));
        }
        match decide::<N>(&tot, &mut watch, sim, parts, sh.ranked) {
            Step::Next(next) => {
                sim.advance(next, None);
                stretch_end = stretch(&tot, next, lookahead);
            }
            Step::Done => {
                // Over ranks a rank may have stopped stepping sooner: the replay ends
                // at the last cycle any partition stepped, in every partition.
                sim.advance(tot.book.now, None);
                return Ok((Outcome::Done(Box::new(book.finish())), None));
            }
            Step::Fail(e) => {
                let f = match (tot.book.stuck, &e) {
                    (Some([rank, call, op, wait_pos]), Error::Trace(_)) => Failure::Stuck(Stuck {
                        rank,
                        call,
                        op,
                        wait_pos,
                    }),
                    _ => Failure::Other(e),
                };
                return Ok((Outcome::Done(Box::new(book.finish())), Some(f)));
            }
        }
        parity ^= 1;
    }
}

/// Takes the deliveries partitions `from` recorded for this partition's nodes (their
/// posts of the cycle), as if recorded here in the cycle they were.
fn take_forwarded<N: Network>(
    sh: &Shared<'_, N>,
    parity: usize,
    from: impl Iterator<Item = usize>,
    sim: &Simulation<N>,
    book: &mut Ranks,
) {
    let parts = sh.parts;
    for q in from {
        let post = lock_read(&sh.posts[parity * parts + q]);
        if post
            .deliveries
            .iter()
            .any(|d| sim.out.is_local(d.header.dst.0))
        {
            let mine: Vec<_> = post
                .deliveries
                .iter()
                .filter(|d| sim.out.is_local(d.header.dst.0))
                .copied()
                .collect();
            book.deliver(post.book.now, &mine);
        }
    }
}

/// The most cycles a stretch over ranks lasts, so that the watchdog and the end of the
/// replay are looked at now and then even when nothing can cross.
pub(super) const MAX_STRETCH: Cycle = 1 << 16;

/// The end (exclusive) of the stretch that starts at `next`: while a message that may
/// cross between processes is in flight, the network's lookahead `l`; else until `l`
/// after the earliest cycle any partition could create one (at most [`MAX_STRETCH`]).
fn stretch(tot: &Totals, next: Cycle, l: Cycle) -> Cycle {
    let b = &tot.book;
    if b.crossing_created > b.crossing_delivered {
        return next + l;
    }
    b.earliest_crossing
        .saturating_add(l)
        .clamp(next + l, next + MAX_STRETCH.max(l))
}

/// Every partition's posts of the cycle, added up.
fn totals<N: Network>(sh: &Shared<'_, N>, parity: usize) -> Totals {
    let parts = sh.parts;
    let mut t = Totals {
        next: Cycle::MAX,
        book: BookPost {
            earliest_crossing: Cycle::MAX,
            ..BookPost::default()
        },
        ..Totals::default()
    };
    for q in 0..parts {
        let post = lock_read(&sh.posts[parity * parts + q]);
        t.next = t.next.min(post.next);
        t.last_move = t.last_move.max(post.last_move);
        t.live += post.live;
        t.lost |= post.lost;
        t.stop |= post.stop;
        let b = &post.book;
        t.book.created += b.created;
        t.book.delivered += b.delivered;
        t.book.unfinished += b.unfinished;
        t.book.last_delivery = t.book.last_delivery.max(b.last_delivery);
        t.book.now = t.book.now.max(b.now);
        t.book.crossing_created += b.crossing_created;
        t.book.crossing_delivered += b.crossing_delivered;
        t.book.earliest_crossing = t.book.earliest_crossing.min(b.earliest_crossing);
        if t.book.stuck.is_none() {
            t.book.stuck = b.stuck;
        }
        if t.fail.is_none() {
            t.fail = post.fail.clone().map(|f| (q, f));
        }
    }
    t
}

/// The decision after the stretch, from the posts' totals (alike in every partition;
/// over ranks, the partitions may have stepped to different cycles: the latest counts).
fn decide<N: Network>(
    tot: &Totals,
    watch: &mut Watch,
    sim: &Simulation<N>,
    parts: usize,
    ranked: bool,
) -> Step {
    let now = tot.book.now;
    if tot.lost {
        return Step::Fail(Error::Trace(format!(
            "cycle {now}: a source's memory was full and refused a message of the trace \
             (switching.max_pending); a replay needs every message: raise the limit or set \
             it to None"
        )));
    }
    if tot.stop {
        // Interrupted: end here with what was done so far.
        return Step::Done;
    }
    let flying = tot.book.created - tot.book.delivered;
    if flying == 0 && tot.book.unfinished == 0 {
        return Step::Done;
    }
    if flying == 0 {
        watch.last_progress = now;
    } else {
        watch.last_progress = watch
            .last_progress
            .max(tot.book.last_delivery)
            .max(tot.last_move.min(now));
    }
    let deadlock = |what: String| {
        let waits = if parts == 1 {
            sim.net.explain_deadlock(sim.t)
        } else if ranked {
            format!(
                "the network is split into {parts} partitions over several ranks: replay in \
                 one process with --threads 1 for the waits\n"
            )
        } else {
            format!(
                "the network is split into {parts} partitions: replay with --threads 1 for \
                 the waits\n"
            )
        };
        Step::Fail(Error::Deadlock(format!(
            "elastic replay deadlocked at cycle {now}: {flying} network messages in flight and \
             {what}\n{waits}"
        )))
    };
    if tot.next == Cycle::MAX {
        if flying > 0 {
            return deadlock("nothing left for the network to do".into());
        }
        // Every rank waits for something nobody will send.
        return Step::Fail(Error::Trace(String::new()));
    }
    if flying > 0 {
        let idle = now.saturating_sub(watch.last_progress);
        let grace = if tot.live > 0 || tot.last_move > 0 {
            0
        } else {
            watch.longest
        };
        if idle > watch.stall.saturating_add(grace) {
            return deadlock(format!("nothing moved for {idle} cycles"));
        }
    }
    Step::Next(tot.next.max(now + 1))
}

/// What the stuck rank waits for, in words.
fn describe_stuck(prog: &Program, plan: &NetPlan, opts: &ReplayOptions, s: Stuck) -> String {
    let rp = &prog.ranks[s.rank as usize];
    let call = &rp.calls[s.call as usize];
    let name = call_name(call.label).unwrap_or("unknown");
    let what = match rp.ops.get(s.op as usize) {
        Some(Op::Wait { .. }) => match rp.reqs.get(s.wait_pos as usize) {
            Some(&Req::Send(m)) => {
                let msg = &prog.msgs[m as usize];
                let why = match plan.proto[m as usize] {
                    Proto::Rendezvous => format!(
                        "; it goes by rendezvous ({} bytes > --eager-limit {}), so it waits for \
                         rank {} to post its receive — the recording's MPI library may have \
                         sent it eagerly: raise --eager-limit",
                        msg.bytes, opts.elastic.eager_limit, msg.dst
                    ),
                    _ => format!(", a synchronous send, until rank {} matches it", msg.dst),
                };
                format!("its send of message {m} to rank {}{why}", msg.dst)
            }
            Some(&Req::Recv(r)) => match prog.recvs[r as usize].msg {
                Some(m) => format!(
                    "message {m} from rank {}, which was never sent",
                    prog.msgs[m as usize].src
                ),
                None => "a receive".into(),
            },
            None => "its requests".into(),
        },
        Some(Op::Probe(r)) => match prog.recvs[*r as usize].msg {
            Some(m) => format!("a probed message from rank {}", prog.msgs[m as usize].src),
            None => "a probed message".into(),
        },
        _ => "nothing it can name".into(),
    };
    format!(
        "{}: elastic replay stuck: rank {} waits in {name} (its call #{}) for {what}, and \
         no rank can go on",
        prog.name, s.rank, s.call
    )
}
