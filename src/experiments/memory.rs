//! The memory a run needs, estimated from its configuration for every switching mode,
//! against the memory this process may use (`foundation::limits::memory_limit`);
//! `--force` lets a user try anyway. And the work a run asks for, in node-cycles.

use crate::config::{HwConfig, SwitchingConfig, VcRelease};
use crate::engine::machine::Machine;
use crate::foundation::error::{Error, Result};
use crate::foundation::limits::{forced, gib, memory_limit};

/// The memory a run is expected to need, and the limit it is held against.
#[derive(Clone, Debug, PartialEq)]
pub struct MemoryCheck {
    /// Estimated bytes: the routers' tables and the time series of one replication
    /// times the replications held at once.
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
            "needs ~{} ({} bytes per node × {} replication(s) at once, and ~{} for the \
             program itself), {limit}",
            gib(self.need),
            self.per_node,
            self.at_once,
            gib(PROGRAM_BYTES)
        )
    }
}

/// Bytes of per-node tables a wormhole router needs with `present` messages in its VCs
/// at once, its allocators' arbiters aside (`switching::wormhole::allocator_bytes`) and
/// with `TailCredit` (one message slot per VC): per VC slot 52 (the buffer state 24, the
/// message slot's handle 4, the controller queue entry 16 and its class and lookup 2, the
/// output side's credits 4 and holder 2); per message present its pool entry (header and
/// route, 104 bytes, and its spare-list entry, `router::buffers::MsgSlots`); per network
/// port 45 (masks, counters, the new-head table, the link's flit registers); per
/// controller server 10 (when it is free, and its request's class and lookup); and 38 for
/// the node's own counters and controller statistics. The per-port and per-node figures
/// are fitted to what the counting allocator measures for tori and hypercubes of 4 to 16
/// ports; tests/cli/memory_estimate.rs holds the whole estimate against that measurement.
pub fn wormhole_bytes_per_node(
    ports: usize,
    vcs: usize,
    dma: usize,
    servers: usize,
    present: f64,
) -> u64 {
    let slots = (ports * vcs + dma) as u64;
    slots * 52 + (108.0 * present).ceil() as u64 + ports as u64 * 45 + servers as u64 * 10 + 38
}

/// The extra bytes per node of `TailSent`'s rings (`router::buffers::ring_slots`
/// message slots in each VC of an input port a link feeds): per VC slot its offset into
/// the ring slots (4), and on the output side the ring position (2) and count (4) of the
/// downstream VC; per port (the local one too) the mask of held output VCs (8); and the
/// message slots' handles (4 each) of `rings` ring slots (the node's share) and one per
/// DMA engine in place of one per VC slot.
pub fn tail_sent_bytes_per_node(ports: usize, vcs: usize, dma: usize, rings: u64) -> u64 {
    let slots = (ports * vcs + dma) as u64;
    (slots * 10 + (ports as u64 + 1) * 8 + (rings + dma as u64) * 4).saturating_sub(slots * 4)
}

/// Bytes of per-node tables a deflection router needs: per lane of its two outputs the
/// holder record and of its two inputs the forwarding entry (104 a lane), and the node's
/// own counters (pending messages come on top). Fitted to the counting allocator's
/// measurement of Manhattan Street networks of 1 to 4 lanes.
pub fn deflection_bytes_per_node(vcs: usize) -> u64 {
    104 * vcs as u64 + 12
}

/// Bytes of per-node tables a circuit-switching router needs: per port the link's state
/// and its FIFO of waiting set-ups (96), per DMA engine the circuit record (18), per
/// controller server its state (42), and the node's counters (50). Fitted to the counting
/// allocator's measurement of hypercubes and tori of 4 to 14 ports.
pub fn circuit_bytes_per_node(ports: usize, dma: usize, servers: usize) -> u64 {
    96 * ports as u64 + 18 * dma as u64 + 42 * servers as u64 + 50
}

/// Bytes of tables of a host/switch network (timeout switching, paper 002) per node
/// (hosts and switches alike): per channel a FIFO of `buffer_flits` flits and the port's
/// state, spread over the nodes, and each node's own state.
pub fn timeout_bytes_per_node(channels: u64, nodes: u64, buffer_flits: u64) -> u64 {
    (channels * (70 * buffer_flits + 160)).div_ceil(nodes.max(1)) + 1250
}

/// Resident bytes of the program whatever the network: its code and libraries, the
/// configuration, the report, added once to the estimate so that it stays near the
/// measured peak on small networks too. The code pages a run touches are most of it:
/// `routemu --version` alone peaks at 4.7 MiB, and the presets' runs of one replication
/// at 8.4–11.1 MiB, their networks' tables taking 0.1–1.5 MiB of that (2026-12-08,
/// `/usr/bin/time -f %M routemu run hw/… --set experiment.replications=1`; 10 MiB, the
/// figure before, was 1.18–1.24× the peak of the small presets' runs then).
const PROGRAM_BYTES: u64 = 9 << 20;

/// Bytes the engine keeps per node whatever the mode: random streams, the next
/// creation, calendars, activity lists and the per-node statistics.
const ENGINE_BYTES_PER_NODE: u64 = 256;

/// The estimated bytes per node of one replication of `cfg` (validated as `m`): the
/// tables built before the first cycle, 1.0 to 1.1 times what the counting allocator of
/// `routemu bench` measures in wormhole, circuit and deflection switching, whose tables
/// are itemised, and 1.2 to 1.4 times in timeout switching, whose are not
/// (tests/cli/memory_estimate.rs holds the estimate against the measurement). Messages
/// waiting in source memory come on top; the saturation guard
/// (`experiment.saturation_backlog`) bounds them.
pub fn bytes_per_node(cfg: &HwConfig, m: &Machine) -> u64 {
    let t = &m.topology;
    let r = &cfg.router;
    let (ports, vcs, dma) = (t.degree(), r.vcs as usize, m.dma as usize);
    let tables = match cfg.switching {
        SwitchingConfig::Wormhole { .. } => {
            let present = crate::switching::wormhole::messages_present(cfg, m);
            let servers = r.controller.servers as usize;
            let mut b = wormhole_bytes_per_node(ports, vcs, dma, servers, present)
                + crate::switching::wormhole::allocator_bytes(cfg, m);
            if r.vc_release == VcRelease::TailSent {
                // Rings only in the VCs of the input ports that exist (one per channel).
                let ring = crate::router::buffers::ring_slots(
                    r.buffer_flits,
                    crate::switching::wormhole::min_length(&m.workload),
                ) as u64;
                let rings =
                    (t.channels() as u64 * vcs as u64 * ring).div_ceil(t.nodes().max(1) as u64);
                b += tail_sent_bytes_per_node(ports, vcs, dma, rings);
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
    let all = tables + ENGINE_BYTES_PER_NODE;
    match cfg.switching {
        // Its figure is a round one that covers what it does not itemise.
        SwitchingConfig::Timeout { .. } => all,
        _ => all * (100 + TABLE_MARGIN_PERCENT) / 100,
    }
}

/// The estimated bytes per node of the calendar's buckets at the run's offered load
/// (`switching::wormhole::calendar_bytes`): beside the tables, memory the run takes as it
/// goes, kilobytes a node where links are long (a dragonfly's global links). The other
/// modes' calendars are not counted: their links are one or a few cycles long.
pub fn calendar_bytes_per_node(cfg: &HwConfig, m: &Machine) -> u64 {
    match cfg.switching {
        SwitchingConfig::Wormhole { .. } => crate::switching::wormhole::calendar_bytes(cfg, m),
        _ => 0,
    }
}

/// What the estimate adds to the itemised tables, in percent: the tables of a topology
/// of its own (a dragonfly's) and what a figure fitted on some networks misses on others
/// (1.5–2% on dragonflies), so that the estimate does not fall short.
const TABLE_MARGIN_PERCENT: u64 = 5;

/// Bytes of one interval of the time series in each partition of a replication, and of
/// its row in the report and its JSON and CSV text.
const SERIES_BYTES_PER_INTERVAL: u64 = 56;
const SERIES_BYTES_PER_ROW: u64 = 400;

/// The bytes the time series (`experiment.observe.interval`) of one replication of
/// `cfg` may take: its intervals over the warm-up, the window (a window of messages
/// converted at the workload's rate) and the drain limit, at most
/// `engine::probe::observe::MAX_INTERVALS`, in every partition and in the report.
pub fn series_bytes(cfg: &HwConfig, m: &Machine) -> u64 {
    let e = &cfg.experiment;
    let Some(width) = e.observe.interval else {
        return 0;
    };
    let window =
        work(cfg, m).per_replication / (m.topology.nodes().max(1) as f64) - e.warmup as f64;
    let span = e.warmup as f64 + window.max(0.0) + e.drain_limit as f64;
    let intervals = (span / width.max(1) as f64 + 2.0)
        .min(crate::engine::probe::observe::MAX_INTERVALS as f64) as u64;
    intervals * (SERIES_BYTES_PER_INTERVAL * e.threads.max(1) as u64 + SERIES_BYTES_PER_ROW)
}

/// The memory check of `cfg`: the estimate and the limit, without judging.
pub fn memory_check(cfg: &HwConfig, m: &Machine) -> MemoryCheck {
    let per_node = bytes_per_node(cfg, m) + calendar_bytes_per_node(cfg, m);
    let series = series_bytes(cfg, m);
    let e = &cfg.experiment;
    let nodes = m.topology.nodes() as u64;
    let (at_once, need) = match crate::engine::transport::current() {
        // Ranks run one replication at a time, each on its share of the nodes; the ranks
        // that share this machine share its memory.
        Some(t) => {
            let share = nodes.div_ceil(t.ranks() as u64);
            (
                1,
                per_node
                    .saturating_mul(share)
                    .saturating_add(series)
                    .saturating_mul(ranks_on_this_host()),
            )
        }
        None => {
            let at_once = e.jobs.clamp(1, e.replications.max(1));
            (
                at_once,
                per_node
                    .saturating_mul(nodes)
                    .saturating_add(series)
                    .saturating_mul(at_once as u64),
            )
        }
    };
    MemoryCheck {
        need: need.saturating_add(PROGRAM_BYTES),
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
///
/// On the ranks of an MPI run, first every rank's configuration and inputs are compared
/// ([`same_on_every_rank`]), and a refusal ends every rank alike, told once.
pub fn enforce_memory(cfg: &HwConfig, m: &Machine) -> Result<MemoryCheck> {
    same_on_every_rank(cfg)?;
    let c = memory_check(cfg, m);
    let local = if !c.fits() && !forced() {
        Err(Error::Limit(format!(
            "a network of {} nodes {}; a smaller network, fewer VCs or DMA engines, or fewer parallel \
             replications (--jobs) would fit; --force to try anyway",
            m.topology.nodes(),
            c.describe()
        )))
    } else {
        Ok(())
    };
    crate::engine::transport::agree(local)?;
    Ok(c)
}

/// Refuses to run when the ranks of an MPI run hold different effective configurations
/// or different input files (by name and size): they would emulate different machines
/// and exchange nonsense, or wait for each other for ever. Names what differs.
pub fn same_on_every_rank(cfg: &HwConfig) -> Result<()> {
    let Some(t) = crate::engine::transport::current() else {
        return Ok(());
    };
    let config = serde_json::to_value(cfg).unwrap_or_default();
    // Ranks that are threads of one process read one record of input files, to which
    // other work of the process (another test) may add a file between two ranks' looks:
    // there is nothing to compare.
    let files = if t.shares_process() {
        Vec::new()
    } else {
        crate::foundation::inputs::all()
    };
    let inputs: Vec<(String, Option<u64>)> = files
        .iter()
        .map(|p| {
            let name = p
                .file_name()
                .unwrap_or_default()
                .to_string_lossy()
                .into_owned();
            (name, std::fs::metadata(p).ok().map(|m| m.len()))
        })
        .collect();
    let mine = serde_json::to_vec(&(config, inputs)).unwrap_or_default();
    let Some((r, first, theirs)) = crate::engine::transport::first_unlike_rank_0(t.as_ref(), &mine)
    else {
        return Ok(());
    };
    type Seen = (serde_json::Value, Vec<(String, Option<u64>)>);
    let parse = |b: &[u8]| serde_json::from_slice::<Seen>(b).unwrap_or_default();
    let ((c0, i0), (cr, ir)) = (parse(&first), parse(&theirs));
    let mut diffs = Vec::new();
    differences("", &c0, &cr, &mut diffs);
    let what = if !diffs.is_empty() {
        diffs.truncate(3);
        diffs
            .iter()
            .map(|(path, a, b)| format!("{path} is {a} on rank 0 and {b} on rank {r}"))
            .collect::<Vec<_>>()
            .join("; ")
    } else {
        format!("the input files differ: {i0:?} on rank 0, {ir:?} on rank {r} (name, bytes)")
    };
    Err(Error::Agreed(format!(
        "the ranks of this MPI run were given different machines or inputs: {what}; every \
         rank must run the same command on the same files"
    )))
}

/// The leaves where two JSON values differ, as (path, here, there).
fn differences(
    path: &str,
    a: &serde_json::Value,
    b: &serde_json::Value,
    out: &mut Vec<(String, String, String)>,
) {
    use serde_json::Value;
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            for (k, v) in x {
                let p = if path.is_empty() {
                    k.clone()
                } else {
                    format!("{path}.{k}")
                };
                differences(&p, v, y.get(k).unwrap_or(&Value::Null), out);
            }
        }
        _ if a != b => out.push((path.to_string(), a.to_string(), b.to_string())),
        _ => {}
    }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::load::parse_hw;
    use crate::engine::machine::validate;

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
        // The program itself is there once.
        assert_eq!(four.need - PROGRAM_BYTES, 4 * (one.need - PROGRAM_BYTES));
    }
}
