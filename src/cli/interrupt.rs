//! SIGINT and SIGTERM for the command line: the first asks the running command to stop
//! (`engine::interrupt`), which then writes what it measured so far, marked partial, and
//! exits 130 (SIGINT) or 143 (SIGTERM); a second one exits at once. Either way no
//! temporary file is left: every temporary output file is registered here while it
//! exists, and the second signal removes them before exiting.
//!
//! The signals are received on a thread of their own (signal-hook's iterator), not in an
//! asynchronous handler, so removing files there is safe.

use crate::engine::interrupt;
use signal_hook::consts::{SIGINT, SIGTERM};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard, Once};

/// Temporary files that exist now (see [`TempGuard`]).
static LIVE: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

fn live() -> MutexGuard<'static, Vec<PathBuf>> {
    LIVE.lock().unwrap_or_else(|e| e.into_inner())
}

/// Starts listening for SIGINT and SIGTERM (once per process; later calls do nothing).
/// Without it the signals keep their default action (the process ends at once).
pub fn install() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let Ok(mut signals) = signal_hook::iterator::Signals::new([SIGINT, SIGTERM]) else {
            // No handler: the default action stays, which also leaves no partial output
            // file behind (only, possibly, a hidden temporary one).
            return;
        };
        let _ = std::thread::Builder::new()
            .name("signals".into())
            .spawn(move || {
                for sig in signals.forever() {
                    if !interrupt::requested() {
                        interrupt::request(sig);
                        continue;
                    }
                    // The second signal: remove the temporary files and go. The list
                    // stays locked until the process is gone, so no new temporary file
                    // can appear in between.
                    let files = live();
                    for f in files.iter() {
                        let _ = std::fs::remove_file(f);
                    }
                    eprintln!(
                        "routemu: {} again: stopped at once; nothing written",
                        name(sig)
                    );
                    std::process::exit(exit_status(sig));
                }
            });
    });
}

/// The conventional name of a signal this module handles.
pub fn name(sig: i32) -> &'static str {
    match sig {
        SIGINT => "SIGINT",
        SIGTERM => "SIGTERM",
        _ => "a signal",
    }
}

/// The exit status of a command stopped by `sig`: 128 + its number (130 for SIGINT,
/// 143 for SIGTERM), as a shell reports a process the signal killed.
pub fn exit_status(sig: i32) -> i32 {
    128 + sig
}

/// Registers a temporary file while it exists; dropping the guard unregisters it.
/// The file is created by `create` with the list locked, so a second signal either sees
/// the file or finds the process gone before it was created.
pub struct TempGuard {
    path: PathBuf,
}

impl TempGuard {
    /// Creates a temporary file with `create` (which returns it and its path) and
    /// registers the path.
    pub fn create<T>(
        create: impl FnOnce() -> std::io::Result<(T, PathBuf)>,
    ) -> std::io::Result<(T, Self)> {
        let mut files = live();
        let (t, path) = create()?;
        files.push(path.clone());
        Ok((t, TempGuard { path }))
    }

    /// The registered path.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for TempGuard {
    fn drop(&mut self) {
        let mut files = live();
        if let Some(i) = files.iter().position(|p| *p == self.path) {
            files.swap_remove(i);
        }
    }
}
