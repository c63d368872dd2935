//! Ranks as MPI processes (feature `mpi`, through rsmpi): the [`Transport`] a run started
//! by `mpirun -np R routemu …` uses. An exchange is two collectives on the world
//! communicator — an all-to-all of the byte counts, then the all-to-all-v of the bytes —
//! and a gather is an all-gather of the counts, then the all-gather-v.
//!
//! MPI is initialised with `MPI_THREAD_FUNNELED`: only the thread that initialised it
//! calls MPI (each rank's first partition thread is that thread: the exchange runs on it;
//! replications, sweep points and searches run one at a time on it under several ranks).
//! Every call checks that it comes from that thread.

use crate::engine::transport::Transport;
use mpi::datatype::{Partition, PartitionMut};
use mpi::topology::{Communicator, SimpleCommunicator};
use mpi::traits::*;
use mpi::Count;
use std::cell::{Cell, RefCell};
use std::thread::ThreadId;

/// The world communicator of an MPI run.
pub struct MpiTransport {
    world: SimpleCommunicator,
    rank: usize,
    ranks: usize,
    owner: ThreadId,
    /// The bytes sent and received at an exchange, kept from one exchange to the next.
    scratch: RefCell<(Vec<u8>, Vec<u8>)>,
    /// Exchanges made, bytes this rank sent in them, and the time spent in them.
    stats: Cell<ExchangeStats>,
}

/// What a rank's exchanges cost (`ROUTEMU_MPI_STATS=1` prints it at the end).
#[derive(Clone, Copy, Debug, Default)]
pub struct ExchangeStats {
    /// Exchanges (all-to-alls) made.
    pub exchanges: u64,
    /// Bytes this rank sent to other ranks in them.
    pub bytes: u64,
    /// Seconds spent in them, waiting for the other ranks included.
    pub seconds: f64,
}

// SAFETY: the communicator is a handle that MPI lets any thread pass around; MPI is
// initialised funneled, and every use checks that it happens on the thread that
// initialised it (`owner`), so no two threads ever call MPI.
unsafe impl Send for MpiTransport {}
// SAFETY: as for Send: `&self` methods call MPI, and touch the scratch buffers, only from
// the owning thread.
unsafe impl Sync for MpiTransport {}

/// MPI started for this process: the world's transport, and the universe that finalises
/// MPI when dropped (keep it alive until the process ends).
pub struct Started {
    /// The world's transport.
    pub transport: MpiTransport,
    /// Finalises MPI when dropped.
    pub universe: mpi::environment::Universe,
}

/// Whether this process was started by an MPI launcher (`mpirun`, `mpiexec`, `srun`):
/// Open MPI, MPICH and PMIx set these variables in every rank.
pub fn launched_by_mpirun() -> bool {
    ["OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK"]
        .iter()
        .any(|v| std::env::var_os(v).is_some())
}

/// Initialises MPI (funneled threading) on this thread; None if MPI cannot give that.
pub fn start() -> Option<Started> {
    let (universe, threading) = mpi::initialize_with_threading(mpi::Threading::Funneled)?;
    if threading < mpi::Threading::Funneled {
        return None;
    }
    let world = universe.world();
    let transport = MpiTransport {
        rank: world.rank() as usize,
        ranks: world.size() as usize,
        world,
        owner: std::thread::current().id(),
        scratch: RefCell::new((Vec::new(), Vec::new())),
        stats: Cell::new(ExchangeStats::default()),
    };
    Some(Started {
        transport,
        universe,
    })
}

impl MpiTransport {
    fn on_owner(&self) {
        assert_eq!(
            std::thread::current().id(),
            self.owner,
            "MPI called from a thread other than the one that initialised it"
        );
    }

    /// What this rank's exchanges have cost so far.
    pub fn stats(&self) -> ExchangeStats {
        self.stats.get()
    }

    /// Ends every rank with exit status `code` (after the caller printed why).
    pub fn abort(&self, code: i32) -> ! {
        self.world.abort(code)
    }
}

/// Displacements of consecutive blocks of `counts` bytes.
fn displacements(counts: &[Count]) -> Vec<Count> {
    counts
        .iter()
        .scan(0, |at, &c| {
            let d = *at;
            *at += c;
            Some(d)
        })
        .collect()
}

fn count(len: usize) -> Count {
    Count::try_from(len).expect("an exchange of more than 2 GiB between two ranks")
}

impl Transport for MpiTransport {
    fn rank(&self) -> usize {
        self.rank
    }

    fn ranks(&self) -> usize {
        self.ranks
    }

    fn exchange(&self, send: &[Vec<u8>], recv: &mut [Vec<u8>]) {
        self.on_owner();
        let started = std::time::Instant::now();
        let counts: Vec<Count> = send.iter().map(|b| count(b.len())).collect();
        let mut rcounts = vec![0 as Count; self.ranks];
        self.world.all_to_all_into(&counts[..], &mut rcounts[..]);
        let mut scratch = self.scratch.borrow_mut();
        let (flat, rflat) = &mut *scratch;
        flat.clear();
        for b in send {
            flat.extend_from_slice(b);
        }
        let displs = displacements(&counts);
        let rdispls = displacements(&rcounts);
        let total: usize = rcounts.iter().map(|&c| c as usize).sum();
        rflat.clear();
        rflat.resize(total, 0);
        {
            let s = Partition::new(&flat[..], &counts[..], &displs[..]);
            let mut r = PartitionMut::new(&mut rflat[..], &rcounts[..], &rdispls[..]);
            self.world.all_to_all_varcount_into(&s, &mut r);
        }
        for (i, out) in recv.iter_mut().enumerate() {
            let (d, c) = (rdispls[i] as usize, rcounts[i] as usize);
            out.clear();
            out.extend_from_slice(&rflat[d..d + c]);
        }
        let mut st = self.stats.get();
        st.exchanges += 1;
        st.bytes += (flat.len() - send[self.rank].len()) as u64;
        st.seconds += started.elapsed().as_secs_f64();
        self.stats.set(st);
    }

    fn all_gather(&self, mine: &[u8]) -> Vec<Vec<u8>> {
        self.on_owner();
        let c = count(mine.len());
        let mut counts = vec![0 as Count; self.ranks];
        self.world.all_gather_into(&c, &mut counts[..]);
        let displs = displacements(&counts);
        let total: usize = counts.iter().map(|&c| c as usize).sum();
        if total == 0 {
            // Every rank knows it from the counts; Open MPI refuses a gather of nothing
            // from empty slices' dangling pointers.
            return vec![Vec::new(); self.ranks];
        }
        let mut flat = vec![0u8; total];
        {
            let mut r = PartitionMut::new(&mut flat[..], &counts[..], &displs[..]);
            self.world.all_gather_varcount_into(mine, &mut r);
        }
        (0..self.ranks)
            .map(|i| {
                let (d, c) = (displs[i] as usize, counts[i] as usize);
                flat[d..d + c].to_vec()
            })
            .collect()
    }

    fn quiet_barrier(&self) {
        self.on_owner();
        // A non-blocking barrier polled every half millisecond: MPI's blocking one
        // polls on a core, which the rank timing alone needs.
        let mut req = self.world.immediate_barrier();
        loop {
            match req.test() {
                Ok(_) => return,
                Err(r) => {
                    req = r;
                    std::thread::sleep(std::time::Duration::from_micros(500));
                }
            }
        }
    }
}
