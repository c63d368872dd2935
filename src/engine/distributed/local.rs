//! Ranks as threads of one process: a [`Transport`] for tests and for checking the
//! distributed stepping without MPI. Each exchange copies the bytes through shared slots
//! between two barriers, as an MPI all-to-all would move them between processes.

use crate::engine::transport::Transport;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

/// The slots and barrier the ranks of one process share.
struct Slots {
    ranks: usize,
    /// Bytes from rank `from` to rank `to` at `from * ranks + to`.
    boxes: Vec<Mutex<Vec<u8>>>,
    /// Ranks arrived at the current barrier, and the barrier's generation.
    arrived: Mutex<(usize, u64)>,
    turn: Condvar,
    /// Set when a rank's thread panicked ([`LocalRanks::guard`]): the others then panic
    /// at their next barrier instead of waiting for it for ever.
    failed: AtomicBool,
    /// Exchanges rank 0 took part in.
    exchanges: AtomicU64,
}

/// One rank of [`LocalRanks::new`]'s set.
pub struct LocalRanks {
    rank: usize,
    slots: Arc<Slots>,
}

impl LocalRanks {
    /// `ranks` transports, one for each rank's thread.
    pub fn new(ranks: usize) -> Vec<LocalRanks> {
        let slots = Arc::new(Slots {
            ranks,
            boxes: (0..ranks * ranks).map(|_| Mutex::new(Vec::new())).collect(),
            arrived: Mutex::new((0, 0)),
            turn: Condvar::new(),
            failed: AtomicBool::new(false),
            exchanges: AtomicU64::new(0),
        });
        (0..ranks)
            .map(|rank| LocalRanks {
                rank,
                slots: slots.clone(),
            })
            .collect()
    }
}

/// Marks the set of ranks failed if the thread holding it unwinds.
pub struct FailGuard(Arc<Slots>);

impl Drop for FailGuard {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.0.failed.store(true, Ordering::Release);
            self.0.turn.notify_all();
        }
    }
}

impl Slots {
    fn wait(&self) {
        let mut g = crate::engine::parallel::lock(&self.arrived);
        let gen = g.1;
        g.0 += 1;
        if g.0 == self.ranks {
            *g = (0, gen + 1);
            self.turn.notify_all();
            return;
        }
        while g.1 == gen {
            if self.failed.load(Ordering::Acquire) {
                drop(g);
                panic!("another rank failed");
            }
            g = match self.turn.wait_timeout(g, Duration::from_millis(20)) {
                Ok((g, _)) => g,
                Err(e) => e.into_inner().0,
            };
        }
    }
}

impl LocalRanks {
    /// A guard for this rank's thread: should the thread panic, the other ranks panic
    /// too at their next exchange rather than wait for it.
    pub fn guard(&self) -> FailGuard {
        FailGuard(self.slots.clone())
    }

    /// How many exchanges (and gathers) the set of ranks has made so far.
    pub fn exchanges(&self) -> u64 {
        self.slots.exchanges.load(Ordering::Relaxed)
    }
}

impl Transport for LocalRanks {
    fn rank(&self) -> usize {
        self.rank
    }

    fn shares_process(&self) -> bool {
        true
    }

    fn ranks(&self) -> usize {
        self.slots.ranks
    }

    fn exchange(&self, send: &[Vec<u8>], recv: &mut [Vec<u8>]) {
        let n = self.slots.ranks;
        if self.rank == 0 {
            self.slots.exchanges.fetch_add(1, Ordering::Relaxed);
        }
        for (to, bytes) in send.iter().enumerate() {
            let mut b = crate::engine::parallel::lock(&self.slots.boxes[self.rank * n + to]);
            b.clear();
            b.extend_from_slice(bytes);
        }
        self.slots.wait();
        for (from, r) in recv.iter_mut().enumerate() {
            let b = crate::engine::parallel::lock(&self.slots.boxes[from * n + self.rank]);
            r.clear();
            r.extend_from_slice(&b);
        }
        self.slots.wait();
    }

    fn all_gather(&self, mine: &[u8]) -> Vec<Vec<u8>> {
        let n = self.slots.ranks;
        let send = vec![mine.to_vec(); n];
        let mut recv = vec![Vec::new(); n];
        self.exchange(&send, &mut recv);
        recv
    }
}
