//! What routemu refuses before it starts working, and why: the ranges of the numbers a
//! user gives (replications, run length, message counts), and the memory a run needs
//! against the memory this process may use. The memory estimate covers every switching
//! mode and is compared with the smallest of the machine's available memory, the cgroup
//! limit and the process's resource limits; `--force` (global on the command line) lets a
//! user try anyway.
//!
//! Not here: the checks of individual configuration fields (`config::validate`), which
//! call the range checks below.

use crate::config::validate::Machine;
use crate::config::{HwConfig, SwitchingConfig, VcRelease};
use crate::error::{Error, Result};
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

/// Refuses a run length whose cycle arithmetic could overflow: warm-up plus window at
/// most [`MAX_RUN_CYCLES`], a message-measured window at most [`MAX_MEASURED_MESSAGES`].
pub fn check_run_length(warmup: u64, measure: crate::config::Measure) -> Result<()> {
    use crate::config::Measure;
    let (what, total) = match measure {
        Measure::Cycles(c) => ("warm-up plus measured cycles", warmup.checked_add(c)),
        Measure::Messages(m) => {
            if m > MAX_MEASURED_MESSAGES {
                return Err(Error::config(format!(
                    "experiment.measure = Messages({m}) (--messages): at most \
                     {MAX_MEASURED_MESSAGES} messages"
                )));
            }
            ("warm-up", Some(warmup))
        }
    };
    match total {
        Some(t) if t <= MAX_RUN_CYCLES => Ok(()),
        _ => Err(Error::config(format!(
            "experiment.warmup = {warmup}, measure = {measure:?} (--warmup, --cycles): the \
             {what} must not exceed {MAX_RUN_CYCLES} (2^60) cycles"
        ))),
    }
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

/// The memory a run is expected to need, and the limit it is held against.
#[derive(Clone, Debug, PartialEq)]
pub struct MemoryCheck {
    /// Estimated bytes: the routers' tables of one replication times the replications
    /// held at once.
    pub need: u64,
    /// Estimated bytes per node (one replication).
    pub per_node: u64,
    /// Replications in memory at once (`experiment.jobs`, at most the replications).
    pub at_once: u32,
    /// The limit in bytes and where it comes from, if any could be read.
    pub limit: Option<(u64, &'static str)>,
}

impl MemoryCheck {
    /// Whether the estimate fits under the limit (or no limit is known).
    pub fn fits(&self) -> bool {
        self.limit.is_none_or(|(l, _)| self.need <= l)
    }

    /// One line for humans: "needs ~X GiB, limit Y GiB (source)".
    pub fn describe(&self) -> String {
        let limit = match self.limit {
            Some((l, src)) => format!("limit {} ({src})", gib(l)),
            None => "no memory limit could be read".to_string(),
        };
        format!(
            "needs ~{} ({} bytes per node × {} replication(s) at once), {limit}",
            gib(self.need),
            self.per_node,
            self.at_once
        )
    }
}

/// Bytes as GiB with two decimals (or MiB below a GiB).
fn gib(b: u64) -> String {
    if b >= 1 << 30 {
        format!("{:.2} GiB", b as f64 / (1u64 << 30) as f64)
    } else {
        format!("{:.1} MiB", b as f64 / (1u64 << 20) as f64)
    }
}

/// Bytes of per-node tables a wormhole router needs: per VC slot the buffer state, the
/// message slot, the controller queue entry and the output side's credits; per port the
/// masks, counters and pointers (a generous round figure).
pub fn wormhole_bytes_per_node(ports: usize, vcs: usize, dma: usize) -> u64 {
    let slots = (ports * vcs + dma) as u64;
    let all_ports = ports as u64 + 1;
    slots * (24 + 88 + 16 + 6) + all_ports * 96 + 512
}

/// Bytes of per-node tables a deflection router needs: per lane of its two outputs the
/// holder record, per lane of its two inputs the forwarding entry, and the node's own
/// counters and random stream (pending messages come on top).
pub fn deflection_bytes_per_node(vcs: usize) -> u64 {
    120 * vcs as u64 + 64
}

/// Bytes of per-node tables a circuit-switching router needs: per port the link's state
/// and its FIFO of waiting set-ups, per DMA engine the circuit record, per controller
/// server its state, and the node's counters.
pub fn circuit_bytes_per_node(ports: usize, dma: usize, servers: usize) -> u64 {
    120 * ports as u64 + 24 * dma as u64 + 52 * servers as u64 + 100
}

/// Bytes of tables of a host/switch network (timeout switching, paper 002) per node
/// (hosts and switches alike): per channel a FIFO of `buffer_flits` flits and the port's
/// state, spread over the nodes, and each node's own state.
pub fn timeout_bytes_per_node(channels: u64, nodes: u64, buffer_flits: u64) -> u64 {
    (channels * (70 * buffer_flits + 160)).div_ceil(nodes.max(1)) + 1250
}

/// Bytes the engine keeps per node whatever the mode: random streams, the next
/// creation, calendars, activity lists and the per-node statistics.
const ENGINE_BYTES_PER_NODE: u64 = 256;

/// The estimated bytes per node of one replication of `cfg` (validated as `m`): the
/// tables built before the first cycle, about 1.15 to 1.35 times what the counting
/// allocator of `routemu bench` measures for every preset's mode (tests/limits.rs holds
/// the estimate against the measurement). Messages waiting in source memory come on top;
/// the saturation guard (`experiment.saturation_backlog`) bounds them.
pub fn bytes_per_node(cfg: &HwConfig, m: &Machine) -> u64 {
    let t = &m.topology;
    let r = &cfg.router;
    let (ports, vcs, dma) = (t.degree(), r.vcs as usize, m.dma as usize);
    let tables = match cfg.switching {
        SwitchingConfig::Wormhole { .. } => {
            let mut b = wormhole_bytes_per_node(ports, vcs, dma);
            if r.vc_release == VcRelease::TailSent {
                // A VC then keeps a ring of `buffer_flits` message slots (88 bytes each).
                b += (ports * vcs + dma) as u64 * 88 * r.buffer_flits as u64;
            }
            b
        }
        SwitchingConfig::Circuit { .. } => {
            circuit_bytes_per_node(ports, dma, r.controller.servers as usize)
        }
        SwitchingConfig::Deflection { .. } => deflection_bytes_per_node(vcs),
        SwitchingConfig::Timeout { .. } => {
            timeout_bytes_per_node(t.channels() as u64, t.nodes() as u64, r.buffer_flits as u64)
        }
    };
    tables + ENGINE_BYTES_PER_NODE
}

/// The memory check of `cfg`: the estimate and the limit, without judging.
pub fn memory_check(cfg: &HwConfig, m: &Machine) -> MemoryCheck {
    let per_node = bytes_per_node(cfg, m);
    let e = &cfg.experiment;
    let nodes = m.topology.nodes() as u64;
    let (at_once, need) = match crate::engine::distributed::current() {
        // Ranks run one replication at a time, each on its share of the nodes; the ranks
        // that share this machine share its memory.
        Some(t) => {
            let share = nodes.div_ceil(t.ranks() as u64);
            (
                1,
                per_node
                    .saturating_mul(share)
                    .saturating_mul(ranks_on_this_host()),
            )
        }
        None => {
            let at_once = e.jobs.clamp(1, e.replications.max(1));
            (
                at_once,
                per_node
                    .saturating_mul(nodes)
                    .saturating_mul(at_once as u64),
            )
        }
    };
    MemoryCheck {
        need,
        per_node,
        at_once,
        limit: memory_limit(),
    }
}

/// The MPI ranks started on this machine (Open MPI's and MPICH's launchers say), 1 when
/// not told.
fn ranks_on_this_host() -> u64 {
    ["OMPI_COMM_WORLD_LOCAL_SIZE", "MPI_LOCALNRANKS"]
        .iter()
        .find_map(|v| std::env::var(v).ok()?.parse::<u64>().ok())
        .unwrap_or(1)
        .max(1)
}

/// Refuses `cfg` when its memory estimate exceeds the limit, unless `--force` was given;
/// returns the check either way.
pub fn enforce_memory(cfg: &HwConfig, m: &Machine) -> Result<MemoryCheck> {
    let c = memory_check(cfg, m);
    if !c.fits() && !forced() {
        return Err(Error::Limit(format!(
            "a network of {} nodes {}; a smaller network, fewer VCs or DMA engines, or fewer parallel \
             replications (--jobs) would fit; --force to try anyway",
            m.topology.nodes(),
            c.describe()
        )));
    }
    Ok(c)
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

/// The work a run asks for: node-cycles of warm-up and window, per replication and in
/// all (the drain comes on top). Reported, not refused: a long run is the user's choice.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Work {
    /// Node-cycles of one replication's warm-up and window.
    pub per_replication: f64,
    /// Replications.
    pub replications: u32,
}

impl Work {
    /// "~X node-cycles × R replication(s)".
    pub fn describe(&self) -> String {
        format!(
            "~{:.3e} node-cycles of warm-up and window × {} replication(s) (the drain comes \
             on top)",
            self.per_replication, self.replications
        )
    }
}

/// The work of `cfg` (validated as `m`); a window of messages is converted to cycles at
/// the workload's rate.
pub fn work(cfg: &HwConfig, m: &Machine) -> Work {
    let e = &cfg.experiment;
    let nodes = m.topology.nodes() as f64;
    let window = match e.measure {
        crate::config::Measure::Cycles(c) => c as f64,
        crate::config::Measure::Messages(n) => {
            n as f64 / (cfg.workload.rate * m.topology.endpoints().len() as f64).max(1e-12)
        }
    };
    Work {
        per_replication: nodes * (e.warmup as f64 + window),
        replications: e.replications,
    }
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
    use crate::config::load::parse_hw;
    use crate::config::validate::validate;
    use crate::config::Measure;

    fn check_with_limit(text: &str, limit: u64) -> MemoryCheck {
        let cfg = parse_hw(text, "t").unwrap();
        let m = validate(&cfg).unwrap();
        MemoryCheck {
            limit: Some((limit, "test")),
            ..memory_check(&cfg, &m)
        }
    }

    #[test]
    fn a_network_too_big_for_the_limit_does_not_fit_and_names_the_sizes() {
        let c = check_with_limit(
            "(topology: Hypercube(dim: 20), router: (vcs: 64), \
             switching: Wormhole(routing: DimensionOrder))",
            16 << 30,
        );
        assert!(!c.fits());
        let text = c.describe();
        assert!(
            text.contains("GiB") && text.contains("16.00 GiB (test)"),
            "{text}"
        );
        // The d = 20 hypercube preset (2 VCs, 20 engines) fits in 16 GiB.
        let c = check_with_limit(
            "(topology: Hypercube(dim: 20), router: (vcs: 2), \
             switching: Wormhole(routing: DimensionOrder))",
            16 << 30,
        );
        assert!(c.fits(), "{}", c.describe());
    }

    #[test]
    fn every_switching_mode_has_a_memory_estimate() {
        for text in [
            "(topology: Torus(k: 4096, n: 2), switching: Circuit(strategy: Hold))",
            "(topology: Torus(k: 4096, n: 2), switching: Wormhole(routing: DimensionOrder))",
            "(topology: ManhattanStreet(k: 4096), switching: Deflection())",
            "(topology: SwitchedTorus(k: 1024), switching: Timeout(timeout: 20))",
        ] {
            let c = check_with_limit(text, 1 << 30);
            assert!(c.need >= 16 << 20, "{text}: {}", c.describe());
            assert!(!c.fits(), "{text}: {}", c.describe());
        }
    }

    #[test]
    fn parallel_replications_multiply_the_estimate() {
        let one = check_with_limit(
            "(topology: Torus(k: 8, n: 2), switching: Circuit(strategy: Hold), \
             experiment: (replications: 10, jobs: 1))",
            1 << 40,
        );
        let four = check_with_limit(
            "(topology: Torus(k: 8, n: 2), switching: Circuit(strategy: Hold), \
             experiment: (replications: 10, jobs: 4))",
            1 << 40,
        );
        assert_eq!(four.need, 4 * one.need);
    }

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

    #[test]
    fn run_lengths_that_would_overflow_a_cycle_count_are_refused() {
        assert!(check_run_length(100, Measure::Cycles(u64::MAX)).is_err());
        assert!(check_run_length(u64::MAX, Measure::Cycles(1)).is_err());
        assert!(check_run_length(u64::MAX, Measure::Messages(1)).is_err());
        assert!(check_run_length(100, Measure::Messages(u64::MAX)).is_err());
        assert!(check_run_length(1000, Measure::Cycles(MAX_RUN_CYCLES - 1000)).is_ok());
        assert!(check_run_length(1000, Measure::Messages(1 << 20)).is_ok());
    }
}
