//! The deflection block of the run report: paper 003's quantities (η, p, E, B, the
//! normalised throughput against its bound) from every replication's counters, with 95%
//! intervals over replications, and the distributions (path lengths, lane occupancies)
//! from all replications together — over the replications that did not collapse
//! (`Deflection::collapsed`: a livelocked replication averaged with stable ones gives
//! figures neither has), with every replication's own row beside them.

use crate::config::SwitchingConfig;
use crate::engine::network::{ModeContext, ModeMeasures};
use crate::engine::replication::RepResult;
use crate::engine::replication::OVERLOAD_GROWTH_SHARE;
use crate::engine::sim::Stop;
use crate::foundation::ci::mean_ci;
use crate::switching::deflection::measure::DeflectionStats;
use crate::switching::deflection::DeflectionMeasures;
use crate::switching::deflection::DeflectionNet;
use crate::switching::report::{
    Deflection, DeflectionRep, ModeReport, PathLengths, COLLAPSE_SHARE,
};
use crate::switching::Mode;
use crate::traffic::length::LengthDist;

impl ModeMeasures for DeflectionMeasures {
    fn merge(&mut self, o: &Self) {
        self.stats.merge(&o.stats);
        self.nodes += o.nodes;
    }
}

impl Mode for DeflectionNet {
    fn report(ctx: ModeContext<'_>, reps: &[RepResult<DeflectionMeasures>]) -> ModeReport {
        ModeReport::Deflection(Box::new(deflection_report(ctx, reps)))
    }
}

/// The mean over replications of a per-replication ratio, and its 95% half-width
/// (replications whose denominator is 0 have no ratio).
fn ratio(
    reps: &[RepResult<DeflectionMeasures>],
    num: impl Fn(&DeflectionStats) -> u64,
    den: impl Fn(&DeflectionStats) -> u64,
) -> (Option<f64>, Option<f64>) {
    let v: Vec<f64> = reps
        .iter()
        .map(|r| &r.mode.stats)
        .filter(|s| den(s) > 0)
        .map(|s| num(s) as f64 / den(s) as f64)
        .collect();
    let (m, c) = mean_ci(&v);
    (m.is_finite().then_some(m), c.filter(|x| x.is_finite()))
}

/// The value at quantile `q` of a histogram of counts by index.
fn quantile(counts: &[u64], q: f64) -> Option<u64> {
    let total: u64 = counts.iter().sum();
    if total == 0 {
        return None;
    }
    let want = ((q * total as f64).ceil() as u64).max(1);
    let mut seen = 0;
    for (i, &c) in counts.iter().enumerate() {
        seen += c;
        if seen >= want {
            return Some(i as u64);
        }
    }
    None
}

/// A time-weighted histogram as fractions.
fn fractions(h: &[u64]) -> Vec<f64> {
    let total: u64 = h.iter().sum();
    h.iter()
        .map(|&x| {
            if total > 0 {
                x as f64 / total as f64
            } else {
                0.0
            }
        })
        .collect()
}

/// The share of the lanes' busy time (less the time spent on flits a hop limit dropped)
/// that carried worms which arrived: completed worms × mean length × mean path over
/// the lane-cycles busy, from a replication's normalised throughput, η, D(0), lane
/// utilisation and dropped lane fraction (None when no lane was busy). About one in a
/// working network, below the knee or past it (the lanes carry what is completed);
/// well below one in a livelock, where the lanes stay busy with headers that keep being
/// deflected and preempted and rarely arrive.
pub fn delivered_lane_share(
    throughput_per_channel: f64,
    eta: Option<f64>,
    mean_path_zero_load: f64,
    lane_utilization: f64,
    dropped_lane_fraction: Option<f64>,
) -> Option<f64> {
    let busy = lane_utilization - dropped_lane_fraction.unwrap_or(0.0);
    (busy > 0.0)
        .then(|| throughput_per_channel * eta.unwrap_or(0.0) * mean_path_zero_load / (2.0 * busy))
}

/// A replication collapsed (`Deflection::collapsed`): it fell short of its offered load
/// (or its source backlog grew through the window) *and* its lanes carried little that
/// arrived — a delivered lane share below [`COLLAPSE_SHARE`]. Falling short alone is
/// also what every stable replication past the knee does.
pub fn collapsed(short_of_load: bool, delivered_lane_share: Option<f64>) -> bool {
    short_of_load && delivered_lane_share.is_some_and(|s| s < COLLAPSE_SHARE)
}

/// The block: each replication's figures, the collapsed ones found, and the figures
/// over the replications kept (every one that did not collapse; all when all did).
fn deflection_report(ctx: ModeContext<'_>, reps: &[RepResult<DeflectionMeasures>]) -> Deflection {
    let nodes = ctx.topology.nodes() as f64;
    let per_replication: Vec<DeflectionRep> = reps
        .iter()
        .enumerate()
        .map(|(i, r)| {
            let one = figures(ctx, std::slice::from_ref(r));
            let stopped_saturated = r.stop == Stop::Saturated;
            // Falling short of the offered load over the window (a replication that
            // offered nothing cannot), or a source backlog that grew through the window
            // (the run's overload test: significantly, and by more than
            // OVERLOAD_GROWTH_SHARE of the offered messages). Not the engine's stop: a
            // run told to stop at its window's end (`drain_limit` 0) stops "saturated"
            // however stable it was.
            let short = one.offered_per_channel > 0.0
                && one.throughput_per_channel < COLLAPSE_SHARE * one.offered_per_channel;
            let growing = r.backlog_growth.as_ref().is_some_and(|g| {
                g.significant() && g.per_cycle / nodes > OVERLOAD_GROWTH_SHARE * r.offered_messages
            });
            // Short of the load is also what a stable network past its knee is; a livelock
            // is one whose lanes are busy with worms that do not arrive.
            let share = delivered_lane_share(
                one.throughput_per_channel,
                one.eta,
                one.mean_path_zero_load,
                one.lane_utilization,
                one.dropped_lane_fraction,
            );
            DeflectionRep {
                replication: i as u32,
                collapsed: collapsed(short || growing, share),
                delivered_lane_share: share,
                stopped_saturated,
                offered_per_channel: one.offered_per_channel,
                throughput_per_channel: one.throughput_per_channel,
                lane_utilization: one.lane_utilization,
                eta: one.eta,
                p_deflect: one.p_deflect,
                p_preempt: one.p_preempt,
                p_block: one.p_block,
            }
        })
        .collect();
    let collapsed = per_replication.iter().filter(|r| r.collapsed).count();
    let mut block = if collapsed == 0 || collapsed == reps.len() {
        figures(ctx, reps)
    } else {
        let kept: Vec<RepResult<DeflectionMeasures>> = reps
            .iter()
            .zip(&per_replication)
            .filter(|(_, row)| !row.collapsed)
            .map(|(r, _)| r.clone())
            .collect();
        figures(ctx, &kept)
    };
    block.collapsed = collapsed as u32;
    block.per_replication = per_replication;
    block
}

/// The block's figures over `reps` (means and 95% intervals over them, distributions
/// from all of them together).
fn figures(ctx: ModeContext<'_>, reps: &[RepResult<DeflectionMeasures>]) -> Deflection {
    let (cfg, topology) = (ctx.cfg, ctx.topology);
    let m = cfg.router.vcs;
    let hop_limit = match cfg.switching {
        SwitchingConfig::Deflection { hop_limit, .. } => hop_limit,
        _ => None,
    };
    let time_unit = LengthDist::new(&cfg.workload.length).map_or(1.0, |l| l.mean());
    let d0 = topology.mean_distance();
    let bound = if d0 > 0.0 { 2.0 / d0 } else { 0.0 };
    let nodes = topology.nodes() as f64;
    let mut all = DeflectionStats::new(m as usize);
    for r in reps {
        all.merge(&r.mode.stats);
    }
    let (eta, eta_ci) = {
        let v: Vec<f64> = reps
            .iter()
            .map(|r| &r.mode.stats)
            .filter(|s| s.arrived > 0)
            .map(|s| s.arrived_hops as f64 / s.arrived as f64 / d0)
            .collect();
        let (x, c) = mean_ci(&v);
        (x.is_finite().then_some(x), c.filter(|x| x.is_finite()))
    };
    let (p_deflect, p_deflect_ci) = ratio(reps, |s| s.pref_failed, |s| s.pref_arrivals);
    let (p_deflect_self, _) = ratio(reps, |s| s.pref_self_blocked, |s| s.pref_arrivals);
    let (repeat, _) = ratio(reps, |s| s.pref_repeat, |s| s.pref_failed);
    let (p_fail_dc, _) = ratio(reps, |s| s.dc_failed, |s| s.dc_arrivals);
    let (p_preempt, p_preempt_ci) = ratio(reps, |s| s.preempted, |s| s.accepted);
    let (p_block, p_block_ci) = ratio(reps, |s| s.new_blocked, |s| s.new_attempts);
    let (p_block_attempts, _) = ratio(reps, |s| s.blocked, |s| s.attempts);
    let (p_drop, _) = ratio(reps, |s| s.dropped, |s| s.accepted);
    // Per time unit per node: counts / (nodes × window / time unit).
    let per_unit = |r: &RepResult<DeflectionMeasures>, x: u64| {
        x as f64 * time_unit / (nodes * r.window.max(1) as f64)
    };
    let thr: Vec<f64> = reps
        .iter()
        .map(|r| per_unit(r, r.mode.stats.completed) / m as f64)
        .collect();
    let (thr_mean, thr_ci) = mean_ci(&thr);
    let thr_mean = if thr_mean.is_finite() { thr_mean } else { 0.0 };
    let k = reps.len().max(1) as f64;
    let lane_capacity =
        |r: &RepResult<DeflectionMeasures>| 2.0 * nodes * m as f64 * r.window.max(1) as f64;
    let lane_utilization = reps
        .iter()
        .map(|r| r.mode.stats.lane_busy as f64 / lane_capacity(r))
        .sum::<f64>()
        / k;
    let dropped_lane_fraction = hop_limit.is_some().then(|| {
        reps.iter()
            .map(|r| r.mode.stats.dropped_lane_cycles as f64 / lane_capacity(r))
            .sum::<f64>()
            / k
    });
    let mut counts = all.path_hist.clone();
    while counts.len() > 1 && counts.last() == Some(&0) {
        counts.pop();
    }
    let per_msg = |x: u64| (all.msg_count > 0).then(|| x as f64 / all.msg_count as f64);
    Deflection {
        lanes: m,
        hop_limit,
        time_unit,
        eta,
        eta_ci95: eta_ci,
        mean_path: eta.map(|e| e * d0),
        mean_path_zero_load: d0,
        p_deflect,
        p_deflect_ci95: p_deflect_ci,
        p_deflect_self,
        repeat_deflections: repeat,
        p_fail_dont_care: p_fail_dc,
        p_preempt,
        p_preempt_ci95: p_preempt_ci,
        p_block,
        p_block_ci95: p_block_ci,
        p_block_attempts,
        attempts_per_node: reps
            .iter()
            .map(|r| per_unit(r, r.mode.stats.attempts))
            .sum::<f64>()
            / k,
        preemptions: all.preempted,
        self_preemptions: all.self_preempted,
        hop_limit_drops: all.dropped,
        p_drop: hop_limit.and(p_drop),
        dropped_lane_fraction,
        rejected: all.rejected,
        throughput_per_channel: thr_mean,
        throughput_per_channel_ci95: thr_ci.filter(|x| x.is_finite()),
        offered_per_channel: reps
            .iter()
            .map(|r| r.offered_messages * time_unit / m as f64)
            .sum::<f64>()
            / k,
        bound,
        fraction_of_bound: if bound > 0.0 { thr_mean / bound } else { 0.0 },
        lane_utilization,
        segments_per_message: per_msg(all.msg_segments),
        hops_per_message: per_msg(all.msg_hops),
        path_length: PathLengths {
            p50: quantile(&counts, 0.5),
            p90: quantile(&counts, 0.9),
            p99: quantile(&counts, 0.99),
            max: counts.iter().rposition(|&c| c > 0).map(|i| i as u64),
            counts,
        },
        output_occupancy: fractions(&all.out_occupancy),
        input_occupancy: fractions(&all.in_occupancy),
        collapsed: 0,
        per_replication: Vec::new(),
    }
}
