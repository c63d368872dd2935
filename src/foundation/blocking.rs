//! The stretches in which the process waits on the outside world and polls nothing —
//! opening a FIFO or a device that blocks until its other end is opened — so that a stop
//! request there ends the process at once instead of waiting for a poll that never comes
//! (the command line's signal handling reads [`waiting`]). It owns only the marker, not
//! the handling of signals.

use std::sync::atomic::{AtomicUsize, Ordering};

static WAITING: AtomicUsize = AtomicUsize::new(0);

/// Runs `f`, which may block on the outside world, marked as such.
pub fn section<T>(f: impl FnOnce() -> T) -> T {
    struct Leave;
    impl Drop for Leave {
        fn drop(&mut self) {
            WAITING.fetch_sub(1, Ordering::SeqCst);
        }
    }
    WAITING.fetch_add(1, Ordering::SeqCst);
    let _leave = Leave;
    f()
}

/// Whether some thread is inside a [`section`] now.
pub fn waiting() -> bool {
    WAITING.load(Ordering::SeqCst) > 0
}
