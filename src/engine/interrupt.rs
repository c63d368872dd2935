//! Stop requests from outside the run (SIGINT, SIGTERM): one process-wide flag that the
//! long loops poll cheaply — the coordinator at its check points, the replay leader once
//! per stepped cycle, the replication, sweep-point and saturation loops before starting
//! another. The signal handling itself is the command line's (`cli::interrupt`); the
//! engine only reads the flag, so a library user who never sets it sees no change.

use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};

/// The signal that asked to stop (0: none yet).
static SIGNAL: AtomicI32 = AtomicI32::new(0);

/// Asks every running loop to stop after its current check point; the first signal is
/// the one remembered.
pub fn request(signal: i32) {
    let _ = SIGNAL.compare_exchange(0, signal, Ordering::Relaxed, Ordering::Relaxed);
}

/// Whether a stop was requested.
#[inline]
pub fn requested() -> bool {
    SIGNAL.load(Ordering::Relaxed) != 0
}

/// The signal that asked to stop, if one did.
pub fn signal() -> Option<i32> {
    match SIGNAL.load(Ordering::Relaxed) {
        0 => None,
        s => Some(s),
    }
}

/// Whether an emulation has begun in this process: from then on there are results that
/// a stop request should let the command write (marked partial), so a first signal asks
/// the loops to stop rather than ending the process (`cli::interrupt`).
static STARTED: AtomicBool = AtomicBool::new(false);

/// Marks that an emulation begins (every [`crate::engine::sim::Simulation`] does).
pub fn started() {
    STARTED.store(true, Ordering::Relaxed);
}

/// Whether an emulation has begun in this process.
pub fn has_started() -> bool {
    STARTED.load(Ordering::Relaxed)
}
