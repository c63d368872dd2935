//! `routemu bench`: emulation speed on the standard scenarios.

use crate::bench::{
    allocator_scenarios, circuit_scenarios, deflection_scenarios, observe_scenarios,
    partition_scenarios, run, run_busy, run_observe, run_parts, run_ranked, standard_scenarios,
    timeout_scenarios, Scenario,
};
use clap::Args;

/// Largest `--scale`: a hundred times the standard scenarios' cycles.
pub const MAX_SCALE: f64 = 100.0;

/// `routemu bench` arguments.
#[derive(Debug, Args)]
pub struct BenchArgs {
    /// Multiply every scenario's cycle count (e.g. 0.1 for a quick look; at most 100).
    #[arg(long, default_value_t = 1.0)]
    pub scale: f64,
    /// Timed repeats per scenario (the best is reported; 1 to 1000).
    #[arg(long, default_value_t = 3)]
    pub repeats: usize,
    /// Threads of the partitioned scenarios (compared with one thread; 1 to 1024).
    #[arg(long, default_value_t = 2)]
    pub threads: usize,
    /// Run only the scenarios whose name contains this text (case-insensitive; the
    /// replay measurements run only without a filter or when it matches "replay").
    #[arg(long, value_name = "TEXT")]
    pub only: Option<String>,
    /// Time the single-thread scenarios with this binary and with OLD_BINARY in
    /// interleaved pairs (`--repeats` pairs each): CPU-time ratios with their range,
    /// and whether both computed the same results (docs/speed.md).
    #[arg(long, value_name = "OLD_BINARY")]
    pub compare: Option<std::path::PathBuf>,
}

impl BenchArgs {
    fn wants(&self, name: &str) -> bool {
        self.only
            .as_ref()
            .is_none_or(|o| name.to_lowercase().contains(&o.to_lowercase()))
    }
}

/// The single-thread scenarios, in the table's order.
fn single_thread_scenarios(scale: f64) -> crate::foundation::error::Result<Vec<Scenario>> {
    Ok(standard_scenarios(scale)?
        .into_iter()
        .chain(allocator_scenarios(scale)?)
        .chain(crate::bench::dragonfly_scenarios(scale)?)
        .chain(circuit_scenarios(scale)?)
        .chain(deflection_scenarios(scale)?)
        .chain(timeout_scenarios(scale)?)
        .collect())
}

/// Runs the benchmark and prints a table.
pub fn bench(a: &BenchArgs) -> crate::foundation::error::Result<i32> {
    let bad = |m: String| Err(crate::foundation::error::Error::Arg(m));
    // Bounded so a typo cannot ask for centuries of stepping (the scenarios' cycle
    // counts are multiplied by the scale) or for a run on no thread.
    if !(a.scale > 0.0 && a.scale <= MAX_SCALE) {
        return bad(format!(
            "--scale {}: a positive factor of at most {MAX_SCALE}",
            a.scale
        ));
    }
    if !(1..=1024).contains(&a.threads) {
        return bad(format!("--threads {}: 1 to 1024 threads", a.threads));
    }
    if !(1..=1000).contains(&a.repeats) {
        return bad(format!("--repeats {}: 1 to 1000 repeats", a.repeats));
    }
    if let Some(t) = crate::engine::transport::current() {
        return ranked(a, &*t);
    }
    if let Some(old) = &a.compare {
        let scenarios = single_thread_scenarios(a.scale)?
            .into_iter()
            .filter(|s| a.wants(&s.name))
            .collect();
        return crate::cli::bench_compare::compare(old, scenarios, a.repeats);
    }
    crate::outln!(
        "{:<58} {:>6} {:>12} {:>9} {:>14} {:>16} {:>8}",
        "scenario (single thread)",
        "nodes",
        "Mnode-cyc/s",
        "seconds",
        "ns/unit",
        "baseline Mn-c/s",
        "ratio"
    )?;
    let mut circuit_secs = Vec::new();
    let mut deflection_secs = Vec::new();
    let scenarios = single_thread_scenarios(a.scale)?;
    for s in scenarios.into_iter().filter(|s| a.wants(&s.name)) {
        let r = run(&s, a.repeats)?;
        if r.unit == "message" {
            circuit_secs.push(r.seconds);
        }
        if r.name.starts_with("Manhattan St 6x6") {
            deflection_secs.push(r.seconds);
        }
        crate::outln!(
            "{:<58} {:>6} {:>12.2} {:>9.3} {:>14} {:>16.2} {:>8.2}",
            r.name,
            r.nodes,
            r.node_cycles_per_second / 1e6,
            r.seconds,
            format!("{:.1}/{}", r.ns_per_unit, r.unit),
            r.baseline_node_cycles_per_second / 1e6,
            r.node_cycles_per_second / r.baseline_node_cycles_per_second
        )?;
    }
    crate::outln!(
        "baseline: the same scenario visiting every router every cycle (no idle skipping)"
    )?;
    if let [short, long] = circuit_secs[..] {
        crate::outln!(
            "circuit: twice the data length at the same link utilisation takes {:.2}× the time",
            long / short
        )?;
    }
    if let [short, long] = deflection_secs[..] {
        crate::outln!(
            "deflection: worms twice as long at half the rate (same lane load) take {:.2}× the time",
            long / short
        )?;
    }
    crate::outln!()?;
    crate::outln!(
        "{:<40} {:>6} {:>12} {:>6} {:>14} {:>8} {:>14} {:>8} {:>11}",
        "partitioned (Mnode-cycles/s)",
        "nodes",
        "1 thread",
        "parts",
        "2 threads",
        "speedup",
        "std Barrier",
        "speedup",
        "heap B/node"
    )?;
    for s in partition_scenarios(a.scale)?
        .into_iter()
        .filter(|s| a.wants(&s.name))
    {
        let r = run_parts(&s, a.threads.max(1), a.repeats)?;
        crate::outln!(
            "{:<40} {:>6} {:>12.2} {:>6} {:>14.2} {:>8.2} {:>14.2} {:>8.2} {:>11}",
            r.name,
            r.nodes,
            r.one / 1e6,
            r.parts,
            r.spin / 1e6,
            r.spin / r.one,
            r.std / 1e6,
            r.std / r.one,
            r.bytes_per_node.map_or("n/a".into(), |b| format!("{b:.0}"))
        )?;
    }
    crate::outln!(
        "parts: partitions used for {} threads (fewer when a partition would hold fewer than \
         experiment.partition_min_nodes nodes: by default 128 for wormhole and timeout \
         switching, 4096 for circuit switching, 1024 for deflection)",
        a.threads
    )?;
    crate::outln!()?;
    busy_machine(a)?;
    let observe: Vec<_> = observe_scenarios(a.scale)?
        .into_iter()
        .filter(|s| a.wants(&s.name) || a.wants("measurements"))
        .collect();
    if !observe.is_empty() {
        crate::outln!(
            "{:<44} {:>6} {:>12} {:>12} {:>7} {:>12} {:>7} {:>12} {:>7}",
            "measurements (whole experiment)",
            "nodes",
            "off Mn-c/s",
            "on Mn-c/s",
            "on/off",
            "+log Mn-c/s",
            "ratio",
            "log Mn-c/s",
            "log/off"
        )?;
        for s in &observe {
            let r = run_observe(s, a.repeats)?;
            crate::outln!(
                "{:<44} {:>6} {:>12.2} {:>12.2} {:>7.3} {:>12.2} {:>7.3} {:>12.2} {:>7.3}",
                r.name,
                r.nodes,
                r.off / 1e6,
                r.on / 1e6,
                r.on / r.off,
                r.with_log / 1e6,
                r.with_log / r.off,
                r.log_only / 1e6,
                r.log_only / r.off
            )?;
        }
        crate::outln!(
            "on: per-link and per-router arrays and a 1000-cycle time series, with the heat map, \
             series CSV, latency distribution and JSON rendered in memory; +log: the per-message \
             log as well; log: the per-message log alone (ratios are speeds: below 1 is a cost)"
        )?;
        crate::outln!()?;
    }
    if !a.wants("replay") {
        return Ok(0);
    }
    let n = ((200_000.0 * a.scale) as u64).max(1000);
    for mode in [
        crate::experiments::replay::ReplayMode::Open,
        crate::experiments::replay::ReplayMode::Deps,
    ] {
        let rate = crate::bench::replay::messages_per_second(n, mode, 8, 1, a.repeats)?;
        crate::outln!(
            "replay {:?}, {n} generated 4-flit messages on the 8x8 DOR torus: {:.0} k messages/s",
            mode,
            rate / 1e3
        )?;
    }
    let n = n * 4;
    let one = crate::bench::replay::messages_per_second(
        n,
        crate::experiments::replay::ReplayMode::Deps,
        32,
        1,
        a.repeats,
    )?;
    let many = crate::bench::replay::messages_per_second(
        n,
        crate::experiments::replay::ReplayMode::Deps,
        32,
        a.threads.max(1) as u32,
        a.repeats,
    )?;
    crate::outln!(
        "replay Deps, {n} messages on a 32x32 DOR torus: {:.0} k messages/s on 1 thread, \
         {:.0} k on {} threads ({:.2}x)",
        one / 1e3,
        many / 1e3,
        a.threads,
        many / one
    )?;
    Ok(0)
}

/// Under `mpirun -np R`: the partitioned scenarios split over the R ranks of `t` × `--threads`,
/// against one process on one thread and on R × `--threads` threads timed in the same run.
/// The single-process tables are left out: R processes timing them side by side would
/// share the cores and measure each other.
fn ranked(
    a: &BenchArgs,
    t: &dyn crate::engine::transport::Transport,
) -> crate::foundation::error::Result<i32> {
    let threads = a.threads.max(1);
    let ranks = t.ranks();
    crate::outln!(
        "{:<40} {:>6} {:>12} {:>14} {:>16} {:>8} {:>8}",
        "MPI ranks (Mnode-cycles/s, whole run)",
        "nodes",
        "1 thread",
        format!("{} threads", ranks * threads),
        format!("{ranks} ranks x {threads}"),
        "vs 1",
        "vs thr."
    )?;
    for s in partition_scenarios(a.scale)?
        .into_iter()
        .filter(|s| a.wants(&s.name))
    {
        let r = run_ranked(&s, t, threads, a.repeats)?;
        crate::outln!(
            "{:<40} {:>6} {:>12.2} {:>14.2} {:>16.2} {:>8.2} {:>8.2}",
            r.name,
            r.nodes,
            r.one / 1e6,
            r.threaded / 1e6,
            r.ranked / 1e6,
            r.ranked / r.one,
            r.ranked / r.threaded
        )?;
    }
    // Open MPI binds each of two ranks to one core by default: the one-process column on
    // R × T threads would then share rank 0's cores and say nothing.
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    if cores < ranks * threads {
        crate::outln!(
            "note: rank 0 may use {cores} core(s) only (its launcher bound it), so the {} \
             threads column shares them; start mpirun with --bind-to none",
            ranks * threads
        )?;
    }
    crate::outln!(
        "one whole run per scenario (a tenth of its cycles as warm-up, the window, the drain); \
         the one-process columns are timed by rank 0 alone while the other ranks wait \
         without spinning. The single-process tables need no mpirun: run routemu bench alone."
    )?;
    Ok(0)
}

/// The partitioned scenarios that show a shared machine: as many busy threads as leave
/// fewer free cores than `--threads`, then one thread, the adaptive barrier and a barrier
/// that never parks.
fn busy_machine(a: &BenchArgs) -> crate::foundation::error::Result<()> {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let threads = a.threads.max(2);
    // Leave one core fewer than the partitions need: the case a shared machine gives.
    let hogs = (cores + 1).saturating_sub(threads).max(1);
    let scenarios: Vec<_> = partition_scenarios(a.scale)?
        .into_iter()
        .filter(|s| {
            (s.name.contains("16x16 DOR @ 0.4") || s.name.contains("d=12 wormhole"))
                && (a.wants(&s.name) || a.wants("busy"))
        })
        .collect();
    if scenarios.is_empty() {
        return Ok(());
    }
    crate::outln!(
        "{:<40} {:>5} {:>12} {:>6} {:>16} {:>8} {:>16} {:>8}",
        "busy machine (Mnode-cycles/s)",
        "hogs",
        "1 thread",
        "parts",
        "spin, then park",
        "speedup",
        "spin for ever",
        "speedup"
    )?;
    for s in &scenarios {
        let r = run_busy(s, threads, a.repeats, hogs)?;
        crate::outln!(
            "{:<40} {:>5} {:>12.2} {:>6} {:>16.2} {:>8.2} {:>16.2} {:>8.2}",
            r.name,
            r.hogs,
            r.one / 1e6,
            r.parts,
            r.adaptive / 1e6,
            r.adaptive / r.one,
            r.spin_only / 1e6,
            r.spin_only / r.one
        )?;
    }
    crate::outln!(
        "hogs: threads spinning beside the run on this {cores}-core machine, so that {threads} \
         partition threads outnumber the free cores"
    )?;
    crate::outln!()?;
    Ok(())
}
