//! Ranks as threads of one process: a [`Transport`] for tests and for checking the
//! distributed stepping without MPI. Each exchange copies the bytes through shared slots
//! between two barriers, as an MPI all-to-all would move them between processes.

use super::Transport;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Barrier, Mutex};

/// The slots and barrier the ranks of one process share.
struct Slots {
    ranks: usize,
    /// Bytes from rank `from` to rank `to` at `from * ranks + to`.
    boxes: Vec<Mutex<Vec<u8>>>,
    barrier: Barrier,
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
            barrier: Barrier::new(ranks),
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

impl LocalRanks {
    /// How many exchanges (and gathers) the set of ranks has made so far.
    pub fn exchanges(&self) -> u64 {
        self.slots.exchanges.load(Ordering::Relaxed)
    }
}

impl Transport for LocalRanks {
    fn rank(&self) -> usize {
        self.rank
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
        self.slots.barrier.wait();
        for (from, r) in recv.iter_mut().enumerate() {
            let b = crate::engine::parallel::lock(&self.slots.boxes[from * n + self.rank]);
            r.clear();
            r.extend_from_slice(&b);
        }
        self.slots.barrier.wait();
    }

    fn all_gather(&self, mine: &[u8]) -> Vec<Vec<u8>> {
        let n = self.slots.ranks;
        let send = vec![mine.to_vec(); n];
        let mut recv = vec![Vec::new(); n];
        self.exchange(&send, &mut recv);
        recv
    }
}
