//! Speed benchmarks: node-cycles per second on fixed scenarios, single thread, with
//! the cost per flit moved and, as the baseline measured in the same run, the same
//! scenario stepped without idle skipping (every router visited every cycle). Used by
//! `routemu bench` and `cargo bench`; never by tests (timing is not asserted).

use crate::config::load::parse_hw;
use crate::config::{HwConfig, Measure};
use crate::engine::sim::Simulation;
use crate::error::Result;
use std::time::Instant;

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
    /// Nanoseconds per flit moved through a crossbar.
    pub ns_per_flit_move: f64,
    /// Node-cycles per second visiting every router every cycle (the baseline).
    pub baseline_node_cycles_per_second: f64,
}

const TORUS_DOR: &str = include_str!("../hw/wormhole-torus-dor.ron");

/// The scenarios of the foundation issue: the 8×8 torus DOR preset at 0.1 and 0.4
/// flits/node/cycle and the 16×16 torus at 0.1. `scale` multiplies the cycle counts.
pub fn standard_scenarios(scale: f64) -> Result<Vec<Scenario>> {
    let base = parse_hw(TORUS_DOR, "hw/wormhole-torus-dor.ron")?;
    let mut out = Vec::new();
    for (k, load, cycles) in [
        (8, 0.1, 400_000.0),
        (8, 0.4, 100_000.0),
        (16, 0.1, 100_000.0),
    ] {
        let mut cfg = base.clone();
        if let crate::config::TopologyConfig::Torus { k: kk, .. } = &mut cfg.topology {
            *kk = k;
        }
        cfg.workload.rate = load / 12.0;
        out.push(Scenario {
            name: format!("torus {k}x{k} DOR @ {load} flits/node/cycle"),
            cfg,
            load,
            cycles: (cycles * scale).max(1000.0) as u64,
        });
    }
    Ok(out)
}

fn time(cfg: &HwConfig, cycles: u64) -> Result<(f64, u64, usize)> {
    let mut cfg = cfg.clone();
    cfg.experiment.warmup = 0;
    cfg.experiment.measure = Measure::Cycles(cycles);
    let mut sim = Simulation::new(&cfg, 0)?;
    // Warm the network up before timing.
    while sim.t < cycles / 10 {
        sim.step();
    }
    let (t0, moves0) = (sim.t, sim.net.flit_moves);
    let start = Instant::now();
    while sim.t < t0 + cycles {
        sim.step();
    }
    let secs = start.elapsed().as_secs_f64();
    Ok((secs, sim.net.flit_moves - moves0, sim.net.nodes()))
}

/// Runs one scenario `repeats` times and keeps the best.
pub fn run(s: &Scenario, repeats: usize) -> Result<BenchResult> {
    let mut best = f64::MAX;
    let mut moves = 0;
    let mut nodes = 0;
    for _ in 0..repeats.max(1) {
        let (secs, m, n) = time(&s.cfg, s.cycles)?;
        if secs < best {
            best = secs;
            moves = m;
        }
        nodes = n;
    }
    let mut plain = s.cfg.clone();
    plain.experiment.idle_skip = false;
    let (plain_secs, _, _) = time(&plain, s.cycles)?;
    let node_cycles = (nodes as u64 * s.cycles) as f64;
    Ok(BenchResult {
        name: s.name.clone(),
        nodes,
        load: s.load,
        node_cycles_per_second: node_cycles / best,
        ns_per_flit_move: best * 1e9 / moves.max(1) as f64,
        baseline_node_cycles_per_second: node_cycles / plain_secs,
    })
}
