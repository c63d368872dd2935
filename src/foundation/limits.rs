//! What routemu refuses before it starts working: the ranges of the numbers a user gives
//! (replications, run length, message counts), `--force`, the memory this process may
//! use, and big tables allocated as errors instead of aborts. Nothing here knows a
//! configuration: the memory a run needs is estimated in `experiments::memory`, the
//! configuration's fields are checked in `engine::machine`.

use crate::foundation::error::{Error, Result};
use std::sync::atomic::{AtomicBool, Ordering};

/// Most independent replications of one experiment. Each keeps a result slot until the
/// report is written, and 100,000 replications already make a 95% interval far narrower
/// than any emulated effect.
pub const MAX_REPLICATIONS: u32 = 100_000;

/// Most cycles of warm-up plus measurement window (2^60, 36 years at 1 GHz): every
/// deadline the engine computes from them (window end, drain limit, check points) then
/// fits in a cycle count without wrapping.
pub const MAX_RUN_CYCLES: u64 = 1 << 60;

/// Most messages a window measured by messages may hold (2^40).
pub const MAX_MEASURED_MESSAGES: u64 = 1 << 40;

/// Set once by the command line's `--force`: run even when the memory estimate exceeds
/// the limit. A process-wide switch because it applies to every command alike, including
/// the library calls they make (a sweep's points, a saturation search's probes).
static FORCE: AtomicBool = AtomicBool::new(false);

/// Lets runs go ahead although their memory estimate exceeds the limit (`--force`).
pub fn set_force(force: bool) {
    FORCE.store(force, Ordering::Relaxed);
}

/// Whether `--force` was given.
pub fn forced() -> bool {
    FORCE.load(Ordering::Relaxed)
}

/// A number as a user can read it in a message: plain between 1e-4 and 1e9, else in
/// scientific notation (`1e300`, not three hundred digits).
pub fn show(x: f64) -> String {
    if x == 0.0 || !x.is_finite() || (1e-4..1e9).contains(&x.abs()) {
        format!("{x}")
    } else {
        format!("{x:e}")
    }
}

/// Bytes as GiB with two decimals (or MiB below a GiB).
pub fn gib(b: u64) -> String {
    if b >= 1 << 30 {
        format!("{:.2} GiB", b as f64 / (1u64 << 30) as f64)
    } else {
        format!("{:.1} MiB", b as f64 / (1u64 << 20) as f64)
    }
}

/// The memory this process may still use, in bytes, and its source: the smallest of
/// the machine's available memory, the cgroup's limit and the process's address-space
/// and data-segment limits (less what it already uses). None when none can be read.
pub fn memory_limit() -> Option<(u64, &'static str)> {
    let mut best: Option<(u64, &'static str)> = None;
    let mut take = |v: Option<u64>, src: &'static str| {
        if let Some(v) = v {
            if best.is_none_or(|(b, _)| v < b) {
                best = Some((v, src));
            }
        }
    };
    let meminfo = std::fs::read_to_string("/proc/meminfo").ok();
    let avail = meminfo.as_deref().and_then(|t| {
        proc_kib(t, "MemAvailable:")
            .map(|k| (k, "MemAvailable"))
            .or_else(|| proc_kib(t, "MemTotal:").map(|k| (k, "MemTotal")))
    });
    if let Some((kib, src)) = avail {
        take(Some(kib.saturating_mul(1024)), src);
    }
    let cgroup = |path: &str| -> Option<u64> {
        let text = std::fs::read_to_string(path).ok()?;
        // "max" (v2) or a huge page-rounded i64::MAX (v1) means no limit.
        text.trim().parse::<u64>().ok().filter(|&v| v < 1 << 60)
    };
    take(cgroup("/sys/fs/cgroup/memory.max"), "cgroup memory.max");
    take(
        cgroup("/sys/fs/cgroup/memory/memory.limit_in_bytes"),
        "cgroup memory.limit_in_bytes",
    );
    let status = std::fs::read_to_string("/proc/self/status").ok();
    let used = |key: &str| {
        status
            .as_deref()
            .and_then(|t| proc_kib(t, key))
            .unwrap_or(0)
            .saturating_mul(1024)
    };
    take(
        rlimit(Resource::AddressSpace).map(|l| l.saturating_sub(used("VmSize:"))),
        "RLIMIT_AS (ulimit -v)",
    );
    take(
        rlimit(Resource::Data).map(|l| l.saturating_sub(used("VmData:"))),
        "RLIMIT_DATA (ulimit -d)",
    );
    best
}

/// The number of kibibytes after `key` in a /proc file (`MemAvailable:   123 kB`).
fn proc_kib(text: &str, key: &str) -> Option<u64> {
    text.lines()
        .find(|l| l.starts_with(key))?
        .split_whitespace()
        .nth(1)?
        .parse()
        .ok()
}

/// The resource limits the memory check reads.
enum Resource {
    AddressSpace,
    Data,
}

/// The soft limit of `r` in bytes, None when unlimited or unknown.
#[cfg(unix)]
fn rlimit(r: Resource) -> Option<u64> {
    let which = match r {
        Resource::AddressSpace => libc::RLIMIT_AS,
        Resource::Data => libc::RLIMIT_DATA,
    };
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes one rlimit into the struct we own; no other effect.
    let ok = unsafe { libc::getrlimit(which, &mut lim) } == 0;
    // rlim_t is u64 on Linux but not on every Unix.
    #[allow(clippy::unnecessary_cast)]
    (ok && lim.rlim_cur != libc::RLIM_INFINITY).then_some(lim.rlim_cur as u64)
}

#[cfg(not(unix))]
fn rlimit(_: Resource) -> Option<u64> {
    None
}

/// The error of a table that cannot be had: `len` entries of `T` (None: the count
/// overflowed) for the table named `what`.
fn table_error<T>(what: &str, len: Option<usize>) -> Error {
    let size = std::mem::size_of::<T>();
    Error::Limit(format!(
        "out of memory: the {what} table ({} entries of {size} bytes{}) cannot be allocated",
        len.map_or("too many".to_string(), |n| n.to_string()),
        len.and_then(|n| n.checked_mul(size))
            .map_or(String::new(), |b| format!(", {}", gib(b as u64)))
    ))
}

/// A zeroed table of `len` entries (None: the count overflowed), or an error naming
/// `what` when the memory cannot be had — instead of the allocator's abort, for runs
/// that went ahead with `--force` or whose estimate fell short. Zeroed memory is mapped
/// lazily, so entries nobody touches cost no memory.
pub fn zeroed_table<T: bytemuck::Zeroable>(len: Option<usize>, what: &str) -> Result<Vec<T>> {
    let n = len.ok_or_else(|| table_error::<T>(what, None))?;
    n.checked_mul(std::mem::size_of::<T>())
        .filter(|&b| b <= isize::MAX as usize)
        .ok_or_else(|| table_error::<T>(what, len))?;
    bytemuck::allocation::try_zeroed_vec(n).map_err(|_| table_error::<T>(what, len))
}

/// A table of `len` copies of `value` (None: the count overflowed), or an error naming
/// `what` when the memory cannot be had (see [`zeroed_table`], which suits zero values
/// better).
pub fn filled_table<T: Clone>(len: Option<usize>, value: T, what: &str) -> Result<Vec<T>> {
    let mut v = empty_table(len, what)?;
    if let Some(n) = len {
        v.resize(n, value);
    }
    Ok(v)
}

/// An empty table with room for `len` entries (None: the count overflowed), or an
/// error naming `what` when the memory cannot be had; filling it up to `len` entries
/// allocates nothing more.
pub fn empty_table<T>(len: Option<usize>, what: &str) -> Result<Vec<T>> {
    let n = len.ok_or_else(|| table_error::<T>(what, None))?;
    let mut v = Vec::new();
    v.try_reserve_exact(n)
        .map_err(|_| table_error::<T>(what, len))?;
    Ok(v)
}

/// A table of the `len` items of `items` (one per node, say), or an error naming `what`
/// when the memory cannot be had.
pub fn collected_table<T>(
    len: usize,
    items: impl IntoIterator<Item = T>,
    what: &str,
) -> Result<Vec<T>> {
    let mut v = empty_table(Some(len), what)?;
    v.extend(items);
    Ok(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_in_messages_are_short() {
        assert_eq!(show(1e300), "1e300");
        assert_eq!(show(0.25), "0.25");
        assert_eq!(show(-3e-9), "-3e-9");
        assert_eq!(show(f64::INFINITY), "inf");
    }

    #[test]
    fn an_impossible_table_is_an_error_not_an_abort() {
        let err = zeroed_table::<u64>(Some(usize::MAX / 2), "test")
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("out of memory") && err.contains("test"),
            "{err}"
        );
        assert!(zeroed_table::<u64>(None, "test").is_err());
        assert_eq!(zeroed_table::<u64>(Some(3), "test").unwrap(), vec![0; 3]);
        for err in [
            filled_table(Some(usize::MAX / 2), 7u64, "filled").unwrap_err(),
            empty_table::<u64>(Some(usize::MAX / 2), "filled").unwrap_err(),
            collected_table::<u64>(usize::MAX / 2, [], "filled").unwrap_err(),
            filled_table(None, 7u64, "filled").unwrap_err(),
        ] {
            let err = err.to_string();
            assert!(err.contains("out of memory: the filled table"), "{err}");
        }
        assert_eq!(filled_table(Some(3), 7u64, "t").unwrap(), vec![7; 3]);
        assert_eq!(collected_table(2, 0..2u8, "t").unwrap(), vec![0, 1]);
    }

    #[test]
    fn the_machine_limit_is_positive_when_readable() {
        if let Some((l, src)) = memory_limit() {
            assert!(l > 0, "{src}");
        }
    }
}
