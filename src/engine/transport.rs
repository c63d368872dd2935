//! The ranks (MPI processes, or threads standing in for them) a thread's emulations are
//! split over: how ranks hand each other bytes ([`Transport`]) and which ranks the
//! current thread's runs use ([`with_transport`], [`current`]). What crosses and when is
//! `engine::distributed`'s.

use std::cell::RefCell;
use std::sync::Arc;

/// How ranks hand each other bytes. Implementations: MPI (`mpi::MpiTransport`, feature
/// `mpi`) and threads of one process (`local::LocalRanks`, for tests).
pub trait Transport: Send + Sync {
    /// This rank's number, from 0.
    fn rank(&self) -> usize;

    /// The number of ranks.
    fn ranks(&self) -> usize;

    /// Personalised all-to-all: `send[r]` goes to rank `r`; afterwards `recv[r]` holds
    /// what rank `r` sent to this one (`send` and `recv` have one entry per rank). Every
    /// rank calls it, in the same order as every other collective.
    fn exchange(&self, send: &[Vec<u8>], recv: &mut [Vec<u8>]);

    /// Every rank's `mine`, in rank order.
    fn all_gather(&self, mine: &[u8]) -> Vec<Vec<u8>>;

    /// Returns once every rank called it, without keeping a core busy meanwhile: for
    /// ranks waiting while rank 0 times something alone (`routemu bench`), where a
    /// spinning wait would take the cores the timing needs.
    fn quiet_barrier(&self) {
        self.all_gather(&[]);
    }

    /// Whether the ranks are threads of one process, which then share its record of the
    /// input files read (`foundation::inputs`).
    fn shares_process(&self) -> bool {
        false
    }
}

thread_local! {
    static CURRENT: RefCell<Option<Arc<dyn Transport>>> = const { RefCell::new(None) };
}

/// Runs `f` with `t` as the ranks this thread's emulations are split over (every
/// replication `f` runs on this thread goes through `engine::run::run_replication`).
pub fn with_transport<T>(t: Arc<dyn Transport>, f: impl FnOnce() -> T) -> T {
    scoped(Some(t), f)
}

/// Runs `f` in this process alone: its emulations are not split over the ranks even
/// under `mpirun` (`routemu bench` timing one process on rank 0 as the baseline; rank 0
/// replaying a deadlocked replay on one partition to describe it).
pub fn without_transport<T>(f: impl FnOnce() -> T) -> T {
    scoped(None, f)
}

/// Runs `f` with `t` as this thread's ranks, restoring the ranks before even if `f`
/// unwinds.
fn scoped<T>(t: Option<Arc<dyn Transport>>, f: impl FnOnce() -> T) -> T {
    let before = CURRENT.with(|c| c.replace(t));
    struct Restore(Option<Arc<dyn Transport>>);
    impl Drop for Restore {
        fn drop(&mut self) {
            let before = self.0.take();
            CURRENT.with(|c| *c.borrow_mut() = before);
        }
    }
    let _restore = Restore(before);
    f()
}

/// The ranks this thread's emulations are split over, when there are several.
pub fn current() -> Option<Arc<dyn Transport>> {
    CURRENT
        .with(|c| c.borrow().clone())
        .filter(|t| t.ranks() > 1)
}

/// Whether this process writes outputs: rank 0, or a process that is not one of several
/// ranks.
pub fn writes_outputs() -> bool {
    current().is_none_or(|t| t.rank() == 0)
}

/// Makes the ranks agree on a check each made (or only some could make): every rank
/// passes its own result, and every rank gets an error when any rank's check failed —
/// the lowest such rank's, named by its rank unless it is rank 0 — so that all end
/// alike, with the same exit status, and the refusal is told once (by rank 0). Every
/// rank must call it at the same point. Without ranks, `local` itself.
pub fn agree(local: crate::foundation::error::Result<()>) -> crate::foundation::error::Result<()> {
    let Some(t) = current() else {
        return local;
    };
    let mine = match &local {
        Ok(()) => Vec::new(),
        Err(e) => e.to_string().into_bytes(),
    };
    let all = t.all_gather(&mine);
    match all.iter().enumerate().find(|(_, m)| !m.is_empty()) {
        None => Ok(()),
        Some((0, m)) => Err(crate::foundation::error::Error::Agreed(
            String::from_utf8_lossy(m).into_owned(),
        )),
        Some((r, m)) => Err(crate::foundation::error::Error::Agreed(format!(
            "rank {r} of {}: {}",
            t.ranks(),
            String::from_utf8_lossy(m)
        ))),
    }
}

/// Gathers every rank's `mine` and finds the first rank whose bytes differ from rank 0's:
/// (that rank, rank 0's bytes, its bytes), or None when all ranks hold the same. Every
/// rank calls it at the same point; all get the same answer.
pub fn first_unlike_rank_0(t: &dyn Transport, mine: &[u8]) -> Option<(usize, Vec<u8>, Vec<u8>)> {
    let mut all = t.all_gather(mine);
    let r = all.iter().position(|a| *a != all[0])?;
    let theirs = std::mem::take(&mut all[r]);
    Some((r, std::mem::take(&mut all[0]), theirs))
}
