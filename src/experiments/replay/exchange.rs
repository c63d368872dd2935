//! What the ranks of a replay hand each other after every cycle stepped (see
//! `lockstep`): each rank's partitions' posts — next busy cycle, last move, live work,
//! a refused message, their deliveries of the cycle — its leader's stop request and
//! held error, and the events and side data its partitions sent to the other rank's
//! partitions. One `postcard` buffer per destination rank, reused from cycle to cycle;
//! the outbox vectors are swapped, not copied (`distributed::wire::Outgoing`), so a
//! cycle allocates nothing per event or delivery beyond the vectors' growth.
//!
//! Not here: the synthetic runs' exchange (`distributed::wire`), the messages read
//! (every rank reads the trace itself).

use crate::engine::distributed::wire::{self, Exchanger, MailOwned, MailRef};
use crate::engine::network::Network;
use crate::engine::parallel::lock;
use crate::engine::probe::Delivery;
use crate::experiments::replay::lockstep::{lock_read, lock_write, BookPost, Shared};
use crate::foundation::types::Cycle;
use serde::{Deserialize, Serialize};

/// A partition's post, but its deliveries.
#[derive(Clone, Copy, Serialize, Deserialize)]
struct Head {
    next: Cycle,
    last_move: Cycle,
    live: i64,
    lost: bool,
    stop: bool,
    book: BookPost,
}

/// What a rank sends another after a cycle (borrowed for writing).
#[derive(Serialize)]
struct PacketRef<'a, E: Serialize, R: Serialize> {
    /// Its partitions' posts: (partition, head, deliveries).
    posts: &'a [(u32, Head, &'a [Delivery])],
    /// Its leader's held error.
    fail: Option<&'a str>,
    mail: Vec<MailRef<'a, E, R>>,
}

/// What a rank receives from another after a cycle.
#[derive(Deserialize)]
struct Packet<E, R> {
    posts: Vec<(u32, Head, Vec<Delivery>)>,
    fail: Option<String>,
    mail: Vec<MailOwned<E, R>>,
}

/// The replay's exchange, on the synthetic runs' buffers.
impl Exchanger<'_> {
    /// The exchange after a cycle every local partition has posted (`parity`: the
    /// cycle's half of the posts): leaves every other rank's posts in `sh.posts` and
    /// what other ranks sent each local partition in `sh.incoming`.
    pub(super) fn run_replay<N: Network>(&mut self, sh: Shared<'_, N>, parity: usize) {
        let parts = sh.parts;
        let me = self.t.rank();
        {
            let posts: Vec<_> = self
                .mine
                .clone()
                .map(|q| lock_read(&sh.posts[parity * parts + q]))
                .collect();
            let heads: Vec<(u32, Head, &[Delivery])> = posts
                .iter()
                .zip(self.mine.clone())
                .map(|(p, q)| {
                    let head = Head {
                        next: p.next,
                        last_move: p.last_move,
                        live: p.live,
                        lost: p.lost,
                        stop: p.stop,
                        book: p.book,
                    };
                    (q as u32, head, &p.deliveries[..])
                })
                .collect();
            let fail = posts[0].fail.as_deref();
            let mut out: Vec<_> = sh.outgoing.iter().map(lock).collect();
            for r in (0..self.send.len()).filter(|&r| r != me) {
                let mail = self.mail_for(&out, r);
                let packet = PacketRef {
                    posts: &heads,
                    fail,
                    mail,
                };
                let mut buf = std::mem::take(&mut self.send[r]);
                buf.clear();
                self.send[r] =
                    postcard::to_extend(&packet, buf).expect("posts and events always serialise");
            }
            for o in out.iter_mut() {
                o.events.iter_mut().for_each(Vec::clear);
                o.extras.iter_mut().for_each(Vec::clear);
            }
        }
        self.t.exchange(&self.send, &mut self.recv);
        for r in (0..self.recv.len()).filter(|&r| r != me) {
            let packet: Packet<N::Event, N::Remote> = postcard::from_bytes(&self.recv[r])
                .unwrap_or_else(|e| panic!("{}", wire::error(&format!("what rank {r} sent"), e)));
            for (i, (q, h, d)) in packet.posts.into_iter().enumerate() {
                let mut post = lock_write(&sh.posts[parity * parts + q as usize]);
                post.next = h.next;
                post.last_move = h.last_move;
                post.live = h.live;
                post.lost = h.lost;
                post.stop = h.stop;
                post.book = h.book;
                post.deliveries.clear();
                post.deliveries.extend_from_slice(&d);
                // The first partition of a rank is its leader.
                post.fail = if i == 0 { packet.fail.clone() } else { None };
            }
            for (_, to, events, extras) in packet.mail {
                let mut inc = lock(&sh.incoming[to as usize - self.mine.start]);
                inc.0.extend(events);
                inc.1.extend(extras);
            }
        }
    }
}
