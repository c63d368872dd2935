//! The timeout block of the run report (paper 002): per link class the timeout and
//! found-free probabilities, waits and holding-time moments, the host queue's measured
//! wait beside the Pollaczek–Khinchine wait of its measured tries (eqs. 18–19), and the
//! watched link's distributions.

use super::measure::{ClassStats, Moments3, TimeoutStats};
use super::TimeoutMeasures;
use crate::config::SwitchingConfig;
use crate::engine::experiment::RepResult;
use crate::engine::network::{ModeContext, ModeMeasures};
use crate::stats::ci::mean_ci;
use crate::stats::histogram;
use crate::stats::report::{ClassSplit, ModeReport, Timeout, WatchedLink};

impl ModeMeasures for TimeoutMeasures {
    fn merge(&mut self, o: &Self) {
        self.stats.merge(&o.stats);
        self.hosts += o.hosts;
    }

    fn report(ctx: ModeContext<'_>, reps: &[RepResult<Self>]) -> ModeReport {
        ModeReport::Timeout(Box::new(timeout_report(ctx, reps)))
    }
}

fn ratio(a: u64, b: u64) -> Option<f64> {
    (b > 0).then(|| a as f64 / b as f64)
}

/// Per-replication means of a delivered worm's quantity, with their 95% interval.
fn per_worm(
    reps: &[RepResult<TimeoutMeasures>],
    f: fn(&TimeoutStats) -> &Moments3,
) -> (Option<f64>, Option<f64>) {
    let v: Vec<f64> = reps
        .iter()
        .filter_map(|r| f(&r.mode.stats).raw(1))
        .collect();
    let (m, c) = mean_ci(&v);
    (m.is_finite().then_some(m), c.filter(|x| x.is_finite()))
}

fn timeout_report(ctx: ModeContext<'_>, reps: &[RepResult<TimeoutMeasures>]) -> Timeout {
    let cfg = ctx.cfg;
    let (timeout, retry_delay) = match cfg.switching {
        SwitchingConfig::Timeout {
            timeout,
            retry_delay,
            ..
        } => (timeout, retry_delay),
        _ => (None, 0),
    };
    let hosts = ctx.topology.endpoints().len().max(1) as f64;
    let nodes = ctx.topology.nodes() as f64;
    let k = reps.len().max(1) as f64;
    let mut all = TimeoutStats::default();
    for r in reps {
        all.merge(&r.mode.stats);
    }
    let window: f64 = reps.iter().map(|r| r.window.max(1) as f64).sum();
    // The engine's throughputs are per node; hosts are the nodes that send and receive.
    let per_host = |x: f64| x * nodes / hosts;
    let split = |f: &dyn Fn(&ClassStats) -> Option<f64>| ClassSplit {
        hs: f(&all.class[0]),
        ss: f(&all.class[1]),
        sh: f(&all.class[2]),
    };
    let timed = |c: &ClassStats| ratio(c.timeouts, c.requests);
    let (ss, sh) = (&all.class[1], &all.class[2]);
    let b1 = all.try_service.raw(1);
    let b2 = all.try_service.raw(2);
    let p_s = ratio(all.tries - all.tries_failed.min(all.tries), all.tries);
    let gamma = all.arrivals as f64 / (hosts * window);
    // Eqs. 18–19: the geometric sum of tries, served by the host link; P–K by the
    // conservation law (the order in which a retry is served does not change the mean).
    let host_wait_mg1 = match (b1, b2, p_s) {
        (Some(b1), Some(b2), Some(ps)) if ps > 0.0 => {
            let pf = 1.0 - ps;
            let s = crate::model::mg1::Moments {
                mean: b1 / ps,
                second: b2 / ps + 2.0 * pf * b1 * b1 / (ps * ps),
            };
            crate::model::mg1::pk_wait(gamma, s).ok()
        }
        _ => None,
    };
    let (tries_mean, tries_ci95) = per_worm(reps, |s| &s.worm_tries);
    let (host_wait_mean, host_wait_ci95) = per_worm(reps, |s| &s.worm_host_wait);
    let pairs = |h: &hdrhistogram::Histogram<u64>| -> Vec<(u64, u64)> {
        h.iter_recorded()
            .map(|v| (v.value_iterated_to(), v.count_at_value()))
            .collect()
    };
    let mut ia = histogram();
    let mut wt = histogram();
    for r in reps {
        let _ = ia.add(&r.mode.stats.watch_interarrival);
        let _ = wt.add(&r.mode.stats.watch_wait);
    }
    let watched = (all.watch_requests > 0).then(|| WatchedLink {
        link: "switch 0, port 0 (+X)".into(),
        requests: all.watch_requests,
        timeouts: all.watch_timeouts,
        interarrival: pairs(&ia),
        wait: pairs(&wt),
    });
    let sent = reps.iter().map(|r| r.offered).sum::<f64>() / k;
    Timeout {
        timeout,
        retry_delay,
        offered_per_host: per_host(sent),
        accepted_per_host: per_host(reps.iter().map(|r| r.accepted).sum::<f64>() / k),
        host_arrival_rate: gamma,
        tries_mean,
        tries_ci95,
        p_timeout: ratio(ss.timeouts + sh.timeouts, ss.requests + sh.requests),
        p_timeout_by_class: split(&timed),
        p_free_by_class: split(&|c| ratio(c.found_free, c.requests)),
        request_rate_by_class: ClassSplit {
            hs: all.class[0].requests as f64 / (all.class[0].links.max(1) as f64 / k * window),
            ss: ss.requests as f64 / (ss.links.max(1) as f64 / k * window),
            sh: sh.requests as f64 / (sh.links.max(1) as f64 / k * window),
        },
        wait_mean_by_class: split(&|c| c.wait.raw(1)),
        holding_by_class: ClassSplit {
            hs: [1, 2, 3].map(|i| all.class[0].holding.raw(i)),
            ss: [1, 2, 3].map(|i| ss.holding.raw(i)),
            sh: [1, 2, 3].map(|i| sh.holding.raw(i)),
        },
        utilization_by_class: ClassSplit {
            hs: all.class[0].busy as f64 / (all.class[0].links.max(1) as f64 / k * window),
            ss: ss.busy as f64 / (ss.links.max(1) as f64 / k * window),
            sh: sh.busy as f64 / (sh.links.max(1) as f64 / k * window),
        },
        try_service_mean: b1,
        try_service_m2: b2,
        p_try_success: p_s,
        host_wait_mean,
        host_wait_ci95,
        host_wait_mg1,
        service_mean: all.worm_service.raw(1),
        wasted_fraction: ratio(all.wasted_flits, all.flits_sent),
        resets: all.resets,
        watched,
    }
}
