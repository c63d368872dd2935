//! How fast a machine steps, for `routemu bench`: seconds for a number of cycles on one
//! partition, with the work its switching mode did, or on several partitions meeting
//! at a barrier, with the heap the network holds. The switching mode is chosen here
//! (`switching::with_mode`); what is timed and how it is reported is `bench`'s.

use crate::config::{HwConfig, Measure};
use crate::engine::network::Network;
use crate::engine::parallel::{build_partitions, step_partitioned, CycleBarrier};
use crate::engine::sim::Simulation;
use crate::foundation::error::Result;
use crate::foundation::types::Cycle;
use crate::switching::{with_mode, WithMode};
use std::time::Instant;

/// Times `cycles` cycles after a warm-up of a tenth of them; returns seconds, units of
/// work done and nodes.
fn time<N: Network>(cfg: &HwConfig, cycles: u64, work: fn(&N) -> u64) -> Result<(f64, u64, usize)> {
    let mut cfg = cfg.clone();
    cfg.experiment.warmup = 0;
    cfg.experiment.measure = Measure::Cycles(cycles);
    let mut sim = Simulation::<N>::build(&cfg, 0)?;
    while sim.t < cycles / 10 {
        sim.step();
    }
    let (t0, w0) = (sim.t, work(&sim.net));
    let start = Instant::now();
    while sim.t < t0 + cycles {
        sim.step();
    }
    let secs = start.elapsed().as_secs_f64();
    Ok((secs, work(&sim.net) - w0, sim.net.nodes()))
}

/// Seconds to step `cycles` cycles of `cfg`'s machine on one partition (after a warm-up
/// of a tenth of them), the units of work its mode did (`Network::work`), its nodes and
/// the unit's name.
pub fn step_time(cfg: &HwConfig, cycles: u64) -> Result<(f64, u64, usize, &'static str)> {
    struct Time<'a>(&'a HwConfig, u64);
    impl WithMode for Time<'_> {
        type Output = Result<(f64, u64, usize, &'static str)>;
        fn run<N: Network + Send>(self) -> Self::Output {
            let (s, w, n) = time::<N>(self.0, self.1, N::work)?;
            Ok((s, w, n, N::WORK_UNIT))
        }
    }
    with_mode(&cfg.switching, Time(cfg, cycles))
}

/// Seconds to step `cycles` cycles (after a warm-up of a tenth of them) on `parts`
/// partitions, with the heap bytes the network holds.
fn time_parts<N: Network + Send, B: CycleBarrier>(
    cfg: &HwConfig,
    parts: usize,
    barrier: &B,
    cycles: u64,
    live_bytes: fn() -> Option<usize>,
) -> Result<(f64, usize, Option<usize>)> {
    let mut cfg = cfg.clone();
    // Nothing may stop the run early: no window end, no saturation, no watchdog.
    let e = &mut cfg.experiment;
    e.warmup = 0;
    e.measure = Measure::Cycles(crate::foundation::limits::MAX_RUN_CYCLES);
    e.saturation_backlog = 1e15;
    e.deadlock_cycles = u64::MAX / 4;
    let before = live_bytes();
    let mut sims = build_partitions::<N>(&cfg, 0, parts)?;
    let nodes = sims.iter().map(|s| s.net.nodes()).sum();
    let bytes = live_bytes().zip(before).map(|(a, b)| a.saturating_sub(b));
    let warm = (cycles / 10).max(1);
    let run = |sims: &mut [Simulation<N>], until: Cycle| {
        if sims.len() == 1 {
            while sims[0].t < until {
                sims[0].step();
            }
        } else {
            step_partitioned(sims, barrier, until, &mut |_| {});
        }
    };
    run(&mut sims, warm);
    let start = Instant::now();
    run(&mut sims, warm + cycles);
    Ok((start.elapsed().as_secs_f64(), nodes, bytes))
}

/// Seconds to step `cycles` cycles of `cfg`'s machine on `parts` partitions meeting at
/// `barrier` (after a warm-up of a tenth of them), its nodes, and the heap bytes the
/// network holds as `live_bytes` (a counting allocator's) tells.
pub fn step_time_parts<B: CycleBarrier>(
    cfg: &HwConfig,
    parts: usize,
    barrier: &B,
    cycles: u64,
    live_bytes: fn() -> Option<usize>,
) -> Result<(f64, usize, Option<usize>)> {
    struct Parts<'a, B>(&'a HwConfig, usize, &'a B, u64, fn() -> Option<usize>);
    impl<B: CycleBarrier> WithMode for Parts<'_, B> {
        type Output = Result<(f64, usize, Option<usize>)>;
        fn run<N: Network + Send>(self) -> Self::Output {
            time_parts::<N, B>(self.0, self.1, self.2, self.3, self.4)
        }
    }
    with_mode(
        &cfg.switching,
        Parts(cfg, parts, barrier, cycles, live_bytes),
    )
}
