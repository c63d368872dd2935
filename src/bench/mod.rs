//! Speed benchmarks: node-cycles per second on fixed scenarios — single thread, with
//! the cost per unit of work and, as the baseline measured in the same run, the same
//! scenario stepped without idle skipping; and partitioned, T threads against one, with
//! cycles ending when their partition steps are done (the spin barrier's wait) and with
//! `std::sync::Barrier` as its baseline, plus heap bytes per
//! node ([`alloc`]). Used by `routemu bench` and `cargo bench`; never by tests (timing
//! is not asserted).

pub mod alloc;
pub mod replay;

use crate::config::load::parse_hw;
use crate::config::{HwConfig, Measure};
use crate::engine::parallel::{SpinBarrier, StdBarrier};
use crate::foundation::error::Result;
use std::time::Instant;

/// `cfg` as a whole experiment times it: one replication on one job, a warm-up of a
/// tenth of `cycles`, then `cycles` as the window.
pub fn windowed(cfg: &HwConfig, cycles: u64) -> HwConfig {
    let mut cfg = cfg.clone();
    let e = &mut cfg.experiment;
    e.replications = 1;
    e.jobs = 1;
    e.warmup = (cycles / 10).max(1);
    e.measure = Measure::Cycles(cycles);
    cfg
}

/// A benchmark scenario.
#[derive(Clone, Debug)]
pub struct Scenario {
    /// Short name.
    pub name: String,
    /// The machine and workload.
    pub cfg: HwConfig,
    /// Offered load in flits per node per cycle.
    pub load: f64,
    /// Cycles to simulate.
    pub cycles: u64,
    /// Cycles of the baseline run (every router every cycle), which can be far slower.
    pub baseline_cycles: u64,
}

/// What one scenario measured.
#[derive(Clone, Debug)]
pub struct BenchResult {
    /// Scenario name.
    pub name: String,
    /// Nodes.
    pub nodes: usize,
    /// Offered flits per node per cycle.
    pub load: f64,
    /// Node-cycles per second with idle skipping (best of the repeats).
    pub node_cycles_per_second: f64,
    /// Nanoseconds per unit of work (the mode's `Network::WORK_UNIT`: a flit moved
    /// through a crossbar, a message delivered, a header hop).
    pub ns_per_unit: f64,
    /// What the unit of work is.
    pub unit: &'static str,
    /// Wall-clock seconds of the timed run.
    pub seconds: f64,
    /// Node-cycles per second visiting every router every cycle (the baseline).
    pub baseline_node_cycles_per_second: f64,
}

const TORUS_DOR: &str = include_str!("../../hw/wormhole-torus-dor.ron");
const CIRCUIT_ADAPTIVE: &str = include_str!("../../hw/circuit-adaptive.ron");
const HYPERCUBE: &str = include_str!("../../hw/wormhole-hypercube.ron");
const DEFLECTION: &str = include_str!("../../hw/deflection-ms.ron");
const TIMEOUT_LAN: &str = include_str!("../../hw/timeout-lan-3x3.ron");
const BOOKSIM_TORUS8: &str = include_str!("../../hw/booksim-min-torus8.ron");
const DRAGONFLY: &str = include_str!("../../hw/dragonfly-booksim.ron");

/// The dimension-order torus preset `base` made a k×k torus at `load` flits per node per
/// cycle (its messages are 12 flits).
fn torus_dor(base: &HwConfig, k: u32, load: f64) -> HwConfig {
    let mut cfg = base.clone();
    if let crate::config::TopologyConfig::Torus { k: kk, .. } = &mut cfg.topology {
        *kk = k;
    }
    cfg.workload.rate = load / 12.0;
    cfg
}

/// The timeout preset (paper 002) on a k×k torus of switches at `rate` worms per host
/// per cycle.
fn timeout_lan(k: u32, rate: f64) -> Result<HwConfig> {
    let mut cfg = parse_hw(TIMEOUT_LAN, "hw/timeout-lan-3x3.ron")?;
    if let crate::config::TopologyConfig::SwitchedTorus { k: kk, .. } = &mut cfg.topology {
        *kk = k;
    }
    cfg.workload.rate = rate;
    Ok(cfg)
}

/// The timeout scenarios (paper 002): the 3×3 preset at its medium load (0.3 flits per
/// host per cycle, worms of 100 flits, timeout 20: a worm in two is reset at least
/// once), and a 32×32 torus of switches at 0.02 flits per host per cycle (routes of 18
/// links; its saturated sources carry only 0.0005: the timeout livelocks).
pub fn timeout_scenarios(scale: f64) -> Result<Vec<Scenario>> {
    let mut out = Vec::new();
    for (k, rate, cycles) in [(3, 0.003, 4_000_000.0), (32, 0.0002, 60_000.0)] {
        let cfg = timeout_lan(k, rate)?;
        let cycles = (cycles * scale).max(2000.0) as u64;
        out.push(Scenario {
            name: format!("LAN {k}x{k} switches timeout 20, worms 100 @ {rate} per host"),
            load: rate * 100.0,
            cfg,
            cycles,
            baseline_cycles: (cycles / 4).max(1000),
        });
    }
    Ok(out)
}

/// The deflection preset on a k×k Manhattan Street network with `per_lane` worms per
/// node per time unit per lane, as a fraction of the bound 2μ/D(0) when `of_bound`.
fn deflection_at(k: u32, fraction_of_bound: f64, mean: f64) -> Result<HwConfig> {
    let mut cfg = parse_hw(DEFLECTION, "hw/deflection-ms.ron")?;
    cfg.topology = crate::config::TopologyConfig::ManhattanStreet { k };
    let d0 = crate::engine::machine::validate(&cfg)?
        .topology
        .mean_distance();
    let per_lane = fraction_of_bound * 2.0 / d0;
    cfg.workload.rate = per_lane * cfg.router.vcs as f64 / mean;
    cfg.workload.length = crate::config::LengthConfig::Exponential { mean };
    Ok(cfg)
}

/// The deflection scenarios: the 6×6 preset at its medium load (λ/m = 0.1 per time
/// unit, 19% of the throughput bound), the same lane load with worms twice as long at
/// half the rate — the cost must follow the worms' headers and ends, not the cycles
/// their data takes — and a 64×64 network at 19% of its (far lower) bound.
pub fn deflection_scenarios(scale: f64) -> Result<Vec<Scenario>> {
    let mut out = Vec::new();
    for (k, mean, cycles) in [
        (6, 100.0, 4_000_000.0),
        (6, 200.0, 4_000_000.0),
        (64, 100.0, 40_000.0),
    ] {
        let cfg = deflection_at(k, 0.1857, mean)?;
        let cycles = (cycles * scale).max(2000.0) as u64;
        out.push(Scenario {
            name: format!("Manhattan St {k}x{k} deflection m=2, worms {mean} @ 19% of bound"),
            load: cfg.workload.rate * mean,
            cfg,
            cycles,
            // The baseline warms up for a tenth of its cycles: the large network needs as
            // long as the timed run to fill up to the same load.
            baseline_cycles: if k > 8 {
                cycles
            } else {
                (cycles / 20).max(1000)
            },
        });
    }
    Ok(out)
}

/// The scenarios of the foundation issue: the 8×8 torus DOR preset at 0.1 and 0.4
/// flits/node/cycle and the 16×16 torus at 0.1; and the 8×8 torus with Valiant routing
/// at 0.1 (issue 32: two phases, an intermediate node drawn per message, longer
/// paths). `scale` multiplies the cycle counts.
pub fn standard_scenarios(scale: f64) -> Result<Vec<Scenario>> {
    let base = parse_hw(TORUS_DOR, "hw/wormhole-torus-dor.ron")?;
    let mut out = Vec::new();
    for (k, load, cycles) in [
        (8, 0.1, 400_000.0),
        (8, 0.4, 100_000.0),
        (16, 0.1, 100_000.0),
    ] {
        let cfg = torus_dor(&base, k, load);
        let cycles = (cycles * scale).max(1000.0) as u64;
        out.push(Scenario {
            name: format!("torus {k}x{k} DOR @ {load} flits/node/cycle"),
            cfg,
            load,
            cycles,
            baseline_cycles: cycles,
        });
    }
    let mut cfg = torus_dor(&base, 8, 0.1);
    if let crate::config::SwitchingConfig::Wormhole { routing, .. } = &mut cfg.switching {
        *routing = crate::config::Routing::Valiant;
    }
    let cycles = (200_000.0 * scale).max(1000.0) as u64;
    out.push(Scenario {
        name: "torus 8x8 Valiant @ 0.1 flits/node/cycle".into(),
        cfg,
        load: 0.1,
        cycles,
        baseline_cycles: cycles,
    });
    Ok(out)
}

/// The dragonfly scenarios (issue 33): `hw/dragonfly-booksim.ron` (BookSim's
/// dragonflynew k = 2: 36 routers, 72 terminals) and the same router and links at k = 4
/// (p = h = 4, a = 8: 264 routers, 1,056 terminals), minimal routing, uniform traffic at
/// the preset's 0.12 flits per terminal per cycle. Node-cycles count routers and
/// terminals alike (both are nodes, `topology::concentration`).
pub fn dragonfly_scenarios(scale: f64) -> Result<Vec<Scenario>> {
    let base = parse_hw(DRAGONFLY, "hw/dragonfly-booksim.ron")?;
    let mut out = Vec::new();
    for (k, cycles) in [(2u32, 200_000.0), (4, 20_000.0)] {
        let mut cfg = base.clone();
        cfg.topology = crate::config::TopologyConfig::Dragonfly {
            p: k,
            a: 2 * k,
            h: k,
        };
        let cycles = (cycles * scale).max(1000.0) as u64;
        out.push(Scenario {
            name: format!("dragonfly k={k} minimal @ 0.12 flits/terminal/cycle"),
            cfg,
            load: base.workload.rate * 12.0,
            cycles,
            baseline_cycles: (cycles / 4).max(1000),
        });
    }
    Ok(out)
}

/// The allocator scenarios: the booksim-min 8×8 torus at 0.3 flits/node/cycle with
/// routemu's own allocator (`PortLevel`), BookSim's `separable_input_first` (the
/// preset's) and iSLIP of one iteration (BookSim's default allocator), side by side.
pub fn allocator_scenarios(scale: f64) -> Result<Vec<Scenario>> {
    use crate::config::Allocator;
    let base = parse_hw(BOOKSIM_TORUS8, "hw/booksim-min-torus8.ron")?;
    let mut out = Vec::new();
    for (alloc, label) in [
        (Allocator::PortLevel, "PortLevel"),
        (Allocator::SeparableInputFirst, "SeparableInputFirst"),
        (Allocator::ISlip { iterations: 1 }, "ISlip(iterations: 1)"),
    ] {
        let load = 0.3;
        let mut cfg = base.clone();
        cfg.workload.rate = load / 12.0;
        cfg.router.allocator = alloc;
        let cycles = (100_000.0 * scale).max(1000.0) as u64;
        out.push(Scenario {
            name: format!("booksim-min torus 8x8 @ {load}, {label}"),
            cfg,
            load,
            cycles,
            baseline_cycles: cycles,
        });
    }
    Ok(out)
}

/// The circuit-switching scenarios: the d = 10 adaptive preset at the papers' medium
/// load (λ = 0.1 per unit time, data exponential with mean 1000 cycles), and the same
/// link utilisation with messages twice as long at half the rate — the cost must follow
/// the number of set-ups and releases, not the cycles the data takes.
pub fn circuit_scenarios(scale: f64) -> Result<Vec<Scenario>> {
    let base = parse_hw(CIRCUIT_ADAPTIVE, "hw/circuit-adaptive.ron")?;
    let mut out = Vec::new();
    for (mean, rate) in [(1000.0, 0.0001), (2000.0, 0.00005)] {
        let mut cfg = base.clone();
        cfg.workload.rate = rate;
        cfg.workload.length = crate::config::LengthConfig::Exponential { mean };
        let cycles = (2_000_000.0 * scale).max(10_000.0) as u64;
        out.push(Scenario {
            name: format!("hypercube d=10 circuit adaptive, data {mean} @ {rate}"),
            cfg,
            load: rate * mean,
            cycles,
            baseline_cycles: (cycles / 40).max(1000),
        });
    }
    Ok(out)
}

/// Runs one scenario `repeats` times and keeps the best.
pub fn run(s: &Scenario, repeats: usize) -> Result<BenchResult> {
    let mut best = f64::MAX;
    let mut units = 0;
    let mut nodes = 0;
    let mut unit = "";
    for _ in 0..repeats.max(1) {
        let (secs, w, n, u) = crate::experiments::timing::step_time(&s.cfg, s.cycles)?;
        if secs < best {
            best = secs;
            units = w;
        }
        nodes = n;
        unit = u;
    }
    let mut plain = s.cfg.clone();
    plain.experiment.idle_skip = false;
    let (plain_secs, _, _, _) = crate::experiments::timing::step_time(&plain, s.baseline_cycles)?;
    let node_cycles = (nodes as u64 * s.cycles) as f64;
    Ok(BenchResult {
        name: s.name.clone(),
        nodes,
        load: s.load,
        node_cycles_per_second: node_cycles / best,
        ns_per_unit: best * 1e9 / units.max(1) as f64,
        unit,
        seconds: best,
        baseline_node_cycles_per_second: (nodes as u64 * s.baseline_cycles) as f64 / plain_secs,
    })
}

/// The scenarios of the measurements issue (15): one per switching mode, each timed as a
/// whole experiment (warm-up, window, drain, report) with every measurement off, and
/// with every one on (`experiment.observe`: per link and router, a time series of
/// 1000-cycle intervals, the per-message log) plus rendering every file they feed
/// (series CSV, latency distribution, heat map) in memory, the message log as
/// `run --message-log` writes it, a block at a time (to nowhere).
pub fn observe_scenarios(scale: f64) -> Result<Vec<Scenario>> {
    let torus = parse_hw(TORUS_DOR, "hw/wormhole-torus-dor.ron")?;
    let mut out = Vec::new();
    for (k, load, cycles) in [(8, 0.1, 200_000.0), (8, 0.4, 50_000.0), (16, 0.1, 50_000.0)] {
        let cfg = torus_dor(&torus, k, load);
        out.push((format!("torus {k}x{k} DOR @ {load}"), cfg, load, cycles));
    }
    let circuit = parse_hw(CIRCUIT_ADAPTIVE, "hw/circuit-adaptive.ron")?;
    let load = circuit.workload.rate * 1000.0;
    out.push((
        "hypercube d=10 circuit adaptive preset".into(),
        circuit,
        load,
        500_000.0,
    ));
    let defl = deflection_at(6, 0.1857, 100.0)?;
    let load = defl.workload.rate * 100.0;
    out.push((
        "Manhattan St 6x6 deflection m=2".into(),
        defl,
        load,
        1_000_000.0,
    ));
    out.push((
        "LAN 3x3 switches timeout 20".into(),
        timeout_lan(3, 0.003)?,
        0.3,
        1_000_000.0,
    ));
    Ok(out
        .into_iter()
        .map(|(name, mut cfg, load, cycles)| {
            let cycles = (cycles * scale).max(2000.0) as u64;
            let e = &mut cfg.experiment;
            e.replications = 1;
            e.warmup = cycles / 10;
            e.measure = Measure::Cycles(cycles);
            // A run past saturation must not stop early in one variant only.
            e.saturation_backlog = 1e9;
            Scenario {
                name,
                cfg,
                load,
                cycles,
                baseline_cycles: cycles,
            }
        })
        .collect())
}

/// What an observe scenario measured: node-cycles per second of the whole experiment
/// with the measurements off, with those in space and time on, with the per-message
/// log as well, and with the log alone (best of the repeats, taken in turn).
#[derive(Clone, Debug)]
pub struct ObserveResult {
    /// Scenario name.
    pub name: String,
    /// Nodes.
    pub nodes: usize,
    /// Node-cycles per second, measurements off.
    pub off: f64,
    /// Node-cycles per second with the per-link and per-router arrays, the time series,
    /// the latency distribution and the heat map (files rendered in memory).
    pub on: f64,
    /// The same with the per-message log as well.
    pub with_log: f64,
    /// Node-cycles per second with the per-message log alone (its cost: issue 15 asks
    /// for at most 10%).
    pub log_only: f64,
}

/// Seconds and cycles of one whole experiment of `cfg`, rendering the files the
/// measurements feed when they are on (public for `examples/observe_cost.rs`, which
/// counts its instructions under callgrind).
pub fn time_experiment(cfg: &HwConfig) -> Result<(f64, u64)> {
    use crate::presentation::heatmap;
    use crate::stats::msglog;
    let start = Instant::now();
    let (report, mut extras) =
        crate::experiments::experiment::run_experiment_observed(cfg, &mut |_, _| {})?;
    // Every variant writes its JSON report, as `routemu run --json` does.
    let json = serde_json::to_string(&report)
        .map_err(|e| crate::foundation::error::Error::Arg(e.to_string()))?;
    std::hint::black_box(json);
    let o = cfg.experiment.observe;
    let topo = crate::topology::Topology::from_config(&cfg.topology)?;
    if o.per_link {
        let totals = extras.link_totals.clone().unwrap_or_default();
        let svg = if extras.links.is_empty() {
            String::new()
        } else {
            heatmap::svg(
                &topo,
                &extras.links,
                &totals,
                heatmap::Quantity::Utilization,
                "bench",
                1,
            )?
        };
        let csv = crate::stats::observe::series_csv(report.series.as_deref().unwrap_or(&[]));
        let dist = extras.latency.csv();
        std::hint::black_box((svg, csv, dist));
    }
    if o.message_log {
        let rule = msglog::LatencyRule {
            def: cfg.experiment.latency,
            ejection: cfg.router.ni.ejection_latency,
        };
        // Written as `run --message-log` writes it, a block of lines at a time (to
        // nowhere here: the file system's share is not the log's).
        let mut bytes = 0;
        let _ = msglog::write(&mut extras.messages, &topo, rule, &mut |b: &[u8]| {
            bytes += std::hint::black_box(b).len();
            Ok::<(), std::convert::Infallible>(())
        });
        std::hint::black_box(bytes);
    }
    Ok((start.elapsed().as_secs_f64(), report.cycles))
}

/// Runs an observe scenario `repeats` times each way, in turn.
pub fn run_observe(s: &Scenario, repeats: usize) -> Result<ObserveResult> {
    let nodes = crate::engine::machine::validate(&s.cfg)?.topology.nodes();
    let mut on_cfg = s.cfg.clone();
    let o = &mut on_cfg.experiment.observe;
    o.per_link = true;
    o.interval = Some(1000);
    let mut log_cfg = on_cfg.clone();
    log_cfg.experiment.observe.message_log = true;
    let mut log_only = s.cfg.clone();
    log_only.experiment.observe.message_log = true;
    let mut best = [0.0f64; 4];
    for _ in 0..repeats.max(1) {
        for (b, cfg) in best.iter_mut().zip([&s.cfg, &on_cfg, &log_cfg, &log_only]) {
            let (secs, cycles) = time_experiment(cfg)?;
            *b = b.max(nodes as f64 * cycles as f64 / secs);
        }
    }
    Ok(ObserveResult {
        name: s.name.clone(),
        nodes,
        off: best[0],
        on: best[1],
        with_log: best[2],
        log_only: best[3],
    })
}

/// A partitioned-stepping scenario.
#[derive(Clone, Debug)]
pub struct PartScenario {
    /// Short name.
    pub name: String,
    /// The machine and workload.
    pub cfg: HwConfig,
    /// Cycles to time (after a tenth of them as warm-up).
    pub cycles: u64,
}

/// What a partitioned scenario measured.
#[derive(Clone, Debug)]
pub struct PartResult {
    /// Scenario name.
    pub name: String,
    /// Nodes.
    pub nodes: usize,
    /// Node-cycles per second on one thread.
    pub one: f64,
    /// Partitions used when `threads` were asked for (fewer when partitions would be
    /// too small, or the mode cannot be split).
    pub parts: usize,
    /// Node-cycles per second on those partitions, each cycle ending when its partition
    /// steps are done (`SpinBarrier`'s `CycleEnd::WhenDone`).
    pub spin: f64,
    /// The same with `std::sync::Barrier`.
    pub std: f64,
    /// Heap bytes per node of the one-thread network (None without the counting
    /// allocator).
    pub bytes_per_node: Option<f64>,
}

/// The scenarios of the partitioning issue: 16×16 and 32×32 tori with dimension-order
/// routing at 0.1 and 0.4 flits/node/cycle, the d = 12 hypercube wormhole preset, the
/// d = 10 circuit-adaptive preset, and the 8×8 torus (too small to split: it must not
/// get slower).
pub fn partition_scenarios(scale: f64) -> Result<Vec<PartScenario>> {
    let torus = parse_hw(TORUS_DOR, "hw/wormhole-torus-dor.ron")?;
    let mut out = Vec::new();
    let sc = |c: f64| (c * scale).max(500.0) as u64;
    for (k, load, cycles) in [
        (8, 0.1, 200_000.0),
        (16, 0.1, 60_000.0),
        (16, 0.4, 20_000.0),
        (32, 0.1, 15_000.0),
        (32, 0.4, 5_000.0),
    ] {
        let cfg = torus_dor(&torus, k, load);
        out.push(PartScenario {
            name: format!("torus {k}x{k} DOR @ {load}"),
            cfg,
            cycles: sc(cycles),
        });
    }
    let mut cube = parse_hw(HYPERCUBE, "hw/wormhole-hypercube.ron")?;
    if let crate::config::TopologyConfig::Hypercube { dim } = &mut cube.topology {
        *dim = 12;
    }
    out.push(PartScenario {
        name: "hypercube d=12 wormhole preset".into(),
        cfg: cube,
        cycles: sc(10_000.0),
    });
    let circuit = parse_hw(CIRCUIT_ADAPTIVE, "hw/circuit-adaptive.ron")?;
    out.push(PartScenario {
        name: "hypercube d=10 circuit adaptive preset".into(),
        cfg: circuit.clone(),
        cycles: sc(1_000_000.0),
    });
    let mut big = circuit;
    if let crate::config::TopologyConfig::Hypercube { dim } = &mut big.topology {
        *dim = 14;
    }
    out.push(PartScenario {
        name: "hypercube d=14 circuit adaptive".into(),
        cfg: big,
        cycles: sc(50_000.0),
    });
    out.push(PartScenario {
        name: "LAN 32x32 switches timeout 20 @ 0.0002 per host".into(),
        cfg: timeout_lan(32, 0.0002)?,
        cycles: sc(40_000.0),
    });
    for k in [32, 64] {
        out.push(PartScenario {
            name: format!("Manhattan St {k}x{k} deflection m=2"),
            cfg: deflection_at(k, 0.1857, 100.0)?,
            cycles: sc(if k == 32 { 200_000.0 } else { 50_000.0 }),
        });
    }
    Ok(out)
}

/// Partitions a scenario runs on when `threads` are asked for.
fn scenario_parts(s: &PartScenario, threads: usize) -> Result<usize> {
    let mut cfg = s.cfg.clone();
    cfg.experiment.threads = threads as u32;
    crate::experiments::experiment::partitions_of(&cfg)
}

/// Runs a partitioned scenario: one thread, then `threads` with each barrier (best of
/// `repeats` each).
pub fn run_parts(s: &PartScenario, threads: usize, repeats: usize) -> Result<PartResult> {
    let nodes = crate::engine::machine::validate(&s.cfg)?.topology.nodes();
    let parts = scenario_parts(s, threads)?;
    let best = |parts: usize, spin: bool| -> Result<(f64, Option<usize>)> {
        let mut b = (f64::MAX, None);
        for _ in 0..repeats.max(1) {
            let (secs, _, bytes) = if spin {
                crate::experiments::timing::step_time_parts(
                    &s.cfg,
                    parts,
                    &SpinBarrier::new(parts),
                    s.cycles,
                    alloc::live_bytes,
                )?
            } else {
                crate::experiments::timing::step_time_parts(
                    &s.cfg,
                    parts,
                    &StdBarrier::new(parts),
                    s.cycles,
                    alloc::live_bytes,
                )?
            };
            if secs < b.0 {
                b = (secs, bytes);
            }
        }
        Ok(b)
    };
    let (one, bytes) = best(1, true)?;
    let (spin, _) = best(parts, true)?;
    let (std, _) = best(parts, false)?;
    let nc = (nodes as u64 * s.cycles) as f64;
    Ok(PartResult {
        name: s.name.clone(),
        nodes,
        one: nc / one,
        parts,
        spin: nc / spin,
        std: nc / std,
        bytes_per_node: bytes.map(|b| b as f64 / nodes as f64),
    })
}

/// What a partitioned scenario measured while other threads kept the cores busy.
#[derive(Clone, Debug)]
pub struct BusyResult {
    /// Scenario name.
    pub name: String,
    /// Busy threads that ran beside it.
    pub hogs: usize,
    /// Partitions used.
    pub parts: usize,
    /// Node-cycles per second on one thread.
    pub one: f64,
    /// On the partitions with [`SpinBarrier::new`] (spins, then parks).
    pub adaptive: f64,
    /// On the partitions with waits that never park (the first form of the barrier
    /// spun for ever).
    pub spin_only: f64,
}

/// Runs a partitioned scenario while `hogs` threads spin on the machine's cores (the
/// "other work" of a shared machine): one thread, then `threads` partitions with the
/// adaptive barrier and with one that spins for ever (best of `repeats` each).
pub fn run_busy(
    s: &PartScenario,
    threads: usize,
    repeats: usize,
    hogs: usize,
) -> Result<BusyResult> {
    let stop = std::sync::atomic::AtomicBool::new(false);
    std::thread::scope(|scope| {
        for _ in 0..hogs {
            scope.spawn(|| {
                let mut x = 0u64;
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    for _ in 0..1000 {
                        x = std::hint::black_box(
                            x.wrapping_mul(6364136223846793005).wrapping_add(1),
                        );
                    }
                }
            });
        }
        // Let the kernel's run queue (read by `free_cores`) see the hogs.
        std::thread::sleep(std::time::Duration::from_millis(50));
        let result = (|| {
            let nodes = crate::engine::machine::validate(&s.cfg)?.topology.nodes();
            let parts = scenario_parts(s, threads)?;
            let best = |barrier: &dyn Fn() -> SpinBarrier| -> Result<f64> {
                let mut b = f64::MAX;
                for _ in 0..repeats.max(1) {
                    let barrier = barrier();
                    let n = barrier.threads();
                    b = b.min(
                        crate::experiments::timing::step_time_parts(
                            &s.cfg,
                            n,
                            &barrier,
                            s.cycles,
                            alloc::live_bytes,
                        )?
                        .0,
                    );
                }
                Ok(b)
            };
            let one = best(&|| SpinBarrier::new(1))?;
            let adaptive = best(&|| SpinBarrier::new(parts))?;
            let spin_only = best(&|| SpinBarrier::with_spin(parts, std::time::Duration::MAX))?;
            let nc = (nodes as u64 * s.cycles) as f64;
            Ok(BusyResult {
                name: s.name.clone(),
                hogs,
                parts,
                one: nc / one,
                adaptive: nc / adaptive,
                spin_only: nc / spin_only,
            })
        })();
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        result
    })
}

/// What a partitioned scenario measured over MPI ranks (`routemu bench` under
/// `mpirun`): one whole run of the scenario (a tenth of its cycles as warm-up, then
/// the window and the drain) in one process on one thread and on ranks × threads
/// threads, timed by rank 0 alone while the other ranks wait without spinning, then the
/// same run split over the ranks.
#[derive(Clone, Debug)]
pub struct RankedResult {
    /// Scenario name.
    pub name: String,
    /// Nodes.
    pub nodes: usize,
    /// Ranks, and threads per rank.
    pub ranks: usize,
    /// Threads per rank.
    pub threads: usize,
    /// Node-cycles per second of one process on one thread.
    pub one: f64,
    /// Node-cycles per second of one process on ranks × threads threads.
    pub threaded: f64,
    /// Node-cycles per second over the ranks.
    pub ranked: f64,
}

/// Runs a partitioned scenario as one process (rank 0 alone) and over the ranks of `t`
/// (best of `repeats` each); every rank returns the same figures.
pub fn run_ranked(
    s: &PartScenario,
    t: &dyn crate::engine::transport::Transport,
    threads: usize,
    repeats: usize,
) -> Result<RankedResult> {
    use crate::engine::transport::without_transport;
    let nodes = crate::engine::machine::validate(&s.cfg)?.topology.nodes();
    let ranks = t.ranks();
    let cfg = windowed(&s.cfg, s.cycles);
    let speed = |threads: usize| -> Result<f64> {
        let mut cfg = cfg.clone();
        cfg.experiment.threads = threads as u32;
        let r = crate::experiments::experiment::run_experiment(&cfg, &mut |_, _| {})?;
        Ok(r.node_cycles_per_second)
    };
    let (mut one, mut threaded, mut ranked) = (0.0f64, 0.0f64, 0.0f64);
    for _ in 0..repeats.max(1) {
        let alone = (t.rank() == 0).then(|| {
            without_transport(|| -> Result<(f64, f64)> { Ok((speed(1)?, speed(ranks * threads)?)) })
        });
        // The others wait for rank 0 without spinning. An error rank 0 met alone (its
        // memory: it holds the whole network) ends every rank (`cli::mpi`).
        t.quiet_barrier();
        let split = speed(threads);
        if let Some(alone) = alone {
            let (a, b) = alone?;
            one = one.max(a);
            threaded = threaded.max(b);
        }
        ranked = ranked.max(split?);
    }
    // Rank 0's one-process figures, on every rank.
    let mine = [one.to_le_bytes(), threaded.to_le_bytes()].concat();
    let all = t.all_gather(&mine);
    let f = |i: usize| {
        all[0]
            .get(8 * i..8 * i + 8)
            .and_then(|b| b.try_into().ok())
            .map_or(0.0, f64::from_le_bytes)
    };
    Ok(RankedResult {
        name: s.name.clone(),
        nodes,
        ranks,
        threads,
        one: f(0),
        threaded: f(1),
        ranked,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::distributed::local::LocalRanks;
    use crate::engine::transport::with_transport;
    use std::sync::Arc;

    #[test]
    fn every_rank_holds_rank_0s_one_process_figures_beside_the_split_run() {
        let s = partition_scenarios(0.01)
            .unwrap()
            .into_iter()
            .find(|s| s.name == "torus 16x16 DOR @ 0.1")
            .unwrap();
        let ts: Vec<Arc<LocalRanks>> = LocalRanks::new(2).into_iter().map(Arc::new).collect();
        let results: Vec<RankedResult> = std::thread::scope(|scope| {
            let handles: Vec<_> = ts
                .iter()
                .map(|t| {
                    let (t, s) = (t.clone(), &s);
                    scope.spawn(move || {
                        let _fail_others = t.guard();
                        let dynt: Arc<dyn crate::engine::transport::Transport> = t.clone();
                        with_transport(dynt, || run_ranked(s, &*t, 1, 1).unwrap())
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        for r in &results {
            assert_eq!((r.ranks, r.threads, r.nodes), (2, 1, 256));
            assert!(r.one > 0.0 && r.threaded > 0.0 && r.ranked > 0.0, "{r:?}");
            // Rank 0 alone timed the one-process runs: every rank reports its figures.
            assert_eq!(r.one.to_bits(), results[0].one.to_bits());
            assert_eq!(r.threaded.to_bits(), results[0].threaded.to_bits());
        }
    }
}
