//! SIGINT and SIGTERM for the command line. The first one asks the running command to
//! stop (`engine::interrupt`) when there is something to keep: the command keeps results
//! ([`keep_results`]: `run`, `compare`, `sweep`, `saturation`, `replay`), an emulation
//! has begun, and the process is not waiting on the outside world (opening a FIFO,
//! `foundation::blocking`). The command then writes what it measured so far, marked
//! partial, and exits 130 (SIGINT) or 143 (SIGTERM). Anywhere else — before the
//! emulation, in `check`, `predict`, `plot` or `bench`, blocked in an open — and on a
//! second signal, the process ends at once with that status. Either way no temporary
//! file is left: every temporary output file is registered here while it exists and
//! removed before such an exit, which says which outputs were written and which not.
//!
//! The signals are received on a thread of their own (signal-hook's iterator), not in an
//! asynchronous handler, so removing files there is safe.

use crate::engine::interrupt;
use signal_hook::consts::{SIGINT, SIGTERM};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, MutexGuard, Once};

/// The outputs of the running command: the temporary files that exist now (see
/// [`TempGuard`]), the outputs asked for and those completely written.
#[derive(Default)]
struct Outputs {
    temporary: Vec<PathBuf>,
    asked: Vec<String>,
    written: Vec<String>,
}

static OUTPUTS: Mutex<Outputs> = Mutex::new(Outputs {
    temporary: Vec::new(),
    asked: Vec::new(),
    written: Vec::new(),
});

fn outputs() -> MutexGuard<'static, Outputs> {
    OUTPUTS.lock().unwrap_or_else(|e| e.into_inner())
}

/// Whether the running command keeps what it measured when asked to stop.
static KEEPS_RESULTS: AtomicBool = AtomicBool::new(false);

/// Declares that the running command writes its results so far when a first signal
/// asks it to stop (once an emulation has begun); without it a first signal ends the
/// process at once.
pub fn keep_results() {
    KEEPS_RESULTS.store(true, Ordering::Relaxed);
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
                    let again = interrupt::requested();
                    let graceful = KEEPS_RESULTS.load(Ordering::Relaxed)
                        && interrupt::has_started()
                        && !crate::foundation::blocking::waiting();
                    if !again && graceful {
                        interrupt::request(sig);
                        continue;
                    }
                    stop_now(sig, again);
                }
            });
    });
}

/// Ends the process at once: removes the temporary files and says what was written.
/// The outputs stay locked until the process is gone, so no temporary file can appear
/// and no output be completed in between.
fn stop_now(sig: i32, again: bool) -> ! {
    let o = outputs();
    for f in o.temporary.iter() {
        let _ = std::fs::remove_file(f);
    }
    let not: Vec<&str> = o
        .asked
        .iter()
        .filter(|a| !o.written.contains(a))
        .map(String::as_str)
        .collect();
    let said = match (o.written.is_empty(), not.is_empty()) {
        (true, _) => "nothing written".to_string(),
        (false, true) => format!("written before it: {}", o.written.join(", ")),
        (false, false) => format!(
            "written before it: {}; not written: {}",
            o.written.join(", "),
            not.join(", ")
        ),
    };
    // Straight to standard error: this thread runs no rank's command (`output::eprint`
    // would say the same), and the output module stays above this one.
    let _ = std::io::Write::write_all(
        &mut std::io::stderr().lock(),
        format!(
            "routemu: {}{}: stopped at once; {said}\n",
            name(sig),
            if again { " again" } else { "" }
        )
        .as_bytes(),
    );
    std::process::exit(exit_status(sig));
}

/// Records the outputs a command was asked for (`--json o.json` as `o.json`), so that
/// an exit at once can say which were not written.
pub fn asked(dest: &str) {
    let mut o = outputs();
    if !o.asked.iter().any(|a| a == dest) {
        o.asked.push(dest.to_string());
    }
}

/// Completes the output `dest` with `complete` (the rename of its temporary file, or
/// the flush of one written in place) and records it as written — one step as a signal
/// sees it, so that an exit at once never calls a complete output unwritten or the
/// reverse.
pub fn complete<T>(
    dest: &str,
    complete: impl FnOnce() -> std::io::Result<T>,
) -> std::io::Result<T> {
    let mut o = outputs();
    let r = complete()?;
    if !o.written.iter().any(|w| w == dest) {
        o.written.push(dest.to_string());
    }
    Ok(r)
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
        let mut o = outputs();
        let (t, path) = create()?;
        o.temporary.push(path.clone());
        Ok((t, TempGuard { path }))
    }

    /// The registered path.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for TempGuard {
    fn drop(&mut self) {
        let mut o = outputs();
        if let Some(i) = o.temporary.iter().position(|p| *p == self.path) {
            o.temporary.swap_remove(i);
        }
    }
}
