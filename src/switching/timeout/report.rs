//! The timeout block of the run report (paper 002): per link and per link class the
//! timeout and found-free probabilities, waits, holding-time moments and utilisation;
//! the head inter-arrival and waiting-time distributions (Figs. 2–3); the tries per worm
//! and whether a retry fails more often than a first try; the host queue's measured wait
//! beside the Pollaczek–Khinchine wait of its measured tries (eqs. 18–19); the latency
//! split into host-queue wait and network time; the maximum throughput when the hosts
//! were saturated sources.

use crate::config::{ArrivalProcess, SwitchingConfig};
use crate::engine::network::{ModeContext, ModeMeasures};
use crate::engine::probe::histogram;
use crate::engine::replication::RepResult;
use crate::foundation::ci::mean_ci;
use crate::foundation::mg1::{pk_wait, Moments};
use crate::switching::report::{
    ClassSplit, Distribution, ModeReport, Occupancy, Timeout, TimeoutLink, WatchedLink,
    MAX_LINK_ROWS,
};
use crate::switching::timeout::measure::{LinkCounters, Moments3, TimeoutStats};
use crate::switching::timeout::TimeoutMeasures;
use crate::switching::timeout::TimeoutNet;
use crate::switching::Mode;
use crate::topology::Topology;
use hdrhistogram::Histogram;

impl ModeMeasures for TimeoutMeasures {
    fn merge(&mut self, o: &Self) {
        self.stats.merge(&o.stats);
        self.hosts += o.hosts;
    }
}

impl Mode for TimeoutNet {
    fn report(ctx: ModeContext<'_>, reps: &[RepResult<TimeoutMeasures>]) -> ModeReport {
        ModeReport::Timeout(Box::new(timeout_report(ctx, reps)))
    }
}

fn ratio(a: u64, b: u64) -> Option<f64> {
    (b > 0).then(|| a as f64 / b as f64)
}

/// The mean over replications of a per-replication value, with its 95% interval.
fn over_reps<T>(
    reps: &[RepResult<T>],
    f: impl Fn(&RepResult<T>) -> Option<f64>,
) -> (Option<f64>, Option<f64>) {
    let v: Vec<f64> = reps.iter().filter_map(f).collect();
    if v.is_empty() {
        return (None, None);
    }
    let (m, c) = mean_ci(&v);
    (m.is_finite().then_some(m), c.filter(|x| x.is_finite()))
}

/// Per-replication means of a delivered worm's quantity, with their 95% interval.
fn per_worm(
    reps: &[RepResult<TimeoutMeasures>],
    f: fn(&TimeoutStats) -> &Moments3,
) -> (Option<f64>, Option<f64>) {
    over_reps(reps, |r| f(&r.mode.stats).raw(1))
}

/// A histogram of cycles as a report distribution.
pub fn distribution(h: &Histogram<u64>) -> Distribution {
    let n = h.len();
    let mean = (n > 0).then(|| h.mean());
    Distribution {
        count: n,
        mean,
        cv: mean.filter(|&m| m > 0.0).map(|m| h.stdev() / m),
        values: h
            .iter_recorded()
            .map(|v| (v.value_iterated_to(), v.count_at_value()))
            .collect(),
    }
}

/// The occupancy states of a class's links (summed over them).
fn occupancy(c: &LinkCounters) -> Vec<Occupancy> {
    let total: u64 = c.time_in.iter().sum();
    (0..c.time_in.len())
        .filter(|&n| c.time_in[n] > 0)
        .map(|n| Occupancy {
            n: n as u32,
            time_fraction: c.time_in[n] as f64 / total.max(1) as f64,
            arrival_rate: ratio(c.arrivals_in[n], c.time_in[n]),
        })
        .collect()
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
    let Topology::Hosts(net) = ctx.topology else {
        return Timeout::default();
    };
    let hosts = net.hosts.max(1) as f64;
    let k = reps.len().max(1) as f64;
    let mut all = TimeoutStats::default();
    // Links are the same in every replication: add their counts link by link.
    let mut links: Vec<(u32, crate::topology::hosts::LinkClass, LinkCounters)> = Vec::new();
    for r in reps {
        let s = &r.mode.stats;
        if links.is_empty() {
            links = s.links.clone();
        } else {
            for (a, b) in links.iter_mut().zip(&s.links) {
                a.2.merge(&b.2);
            }
        }
        let mut rest = s.clone();
        rest.links.clear();
        all.merge(&rest);
    }
    all.links = links;
    // Cycles of measurement over every replication.
    let window: f64 = reps.iter().map(|r| r.window.max(1) as f64).sum();
    // The engine's throughputs are per host already (the nodes that send and receive).
    let per_host = |x: f64| x;
    let classes = all.by_class();
    let split = |f: &dyn Fn(&LinkCounters) -> Option<f64>| ClassSplit {
        hs: f(&classes[0].1),
        ss: f(&classes[1].1),
        sh: f(&classes[2].1),
    };
    let per_link_cycle = |i: usize, x: u64| x as f64 / (classes[i].0.max(1) as f64 * window);
    let rate_split = |f: fn(&LinkCounters) -> u64| ClassSplit {
        hs: per_link_cycle(0, f(&classes[0].1)),
        ss: per_link_cycle(1, f(&classes[1].1)),
        sh: per_link_cycle(2, f(&classes[2].1)),
    };
    let (ss, sh) = (&classes[1].1, &classes[2].1);
    let tries: u64 = all.tries.iter().sum();
    let failed: u64 = all.tries_failed.iter().sum();
    let b = all.try_service.raws();
    let p_s = ratio(tries.saturating_sub(failed), tries);
    let gamma = all.arrivals as f64 / (hosts * window);
    // Eqs. 18–19: the geometric sum of tries, served by the host link; P–K by the
    // conservation law (the order in which a retry is served does not change the mean).
    let host_wait_mg1 = match (b[0], b[1], p_s) {
        (Some(b1), Some(b2), Some(ps)) if ps > 0.0 => {
            let pf = 1.0 - ps;
            let s = Moments {
                mean: b1 / ps,
                second: b2 / ps + 2.0 * pf * b1 * b1 / (ps * ps),
            };
            pk_wait(gamma, s).ok()
        }
        _ => None,
    };
    let (tries_mean, tries_ci95) = per_worm(reps, |s| &s.worm_tries);
    let (host_wait_mean, host_wait_ci95) = per_worm(reps, |s| &s.worm_host_wait);
    let (network_mean, network_ci95) = per_worm(reps, |s| &s.worm_network);
    let (_, accepted_ci) = over_reps(reps, |r| Some(per_host(r.accepted)));
    let (_, p_timeout_ci95) = over_reps(reps, |r| {
        let c = r.mode.stats.by_class();
        ratio(
            c[1].1.timeouts + c[2].1.timeouts,
            c[1].1.requests + c[2].1.requests,
        )
    });
    let accepted_per_host = per_host(reps.iter().map(|r| r.accepted).sum::<f64>() / k);
    let saturated_sources = matches!(cfg.workload.process, ArrivalProcess::Saturated { .. });
    let dist = |i: usize| &all.class_dist[i];
    let listed = all.links.len().min(MAX_LINK_ROWS);
    let link_rows = all.links[..listed]
        .iter()
        .map(|(g, class, l)| {
            let (node, port) = net.port_of_index(*g as usize);
            TimeoutLink {
                node,
                port,
                to: net.ports(node)[port as usize].peer,
                class: class.name().into(),
                requests: l.requests,
                timeouts: l.timeouts,
                p_timeout: ratio(l.timeouts, l.requests),
                p_free: ratio(l.found_free, l.requests),
                request_rate: l.requests as f64 / window,
                utilization: l.busy as f64 / window,
                holding: l.holding.raws(),
                wait_mean: l.wait.raw(1),
            }
        })
        .collect();
    let watched = all.watch.as_ref().map(|(g, d)| {
        let (node, port) = net.port_of_index(*g as usize);
        let l = all
            .links
            .iter()
            .find(|x| x.0 == *g)
            .map(|x| x.2)
            .unwrap_or_default();
        WatchedLink {
            link: format!("switch {node}, port {port} ({})", net.port_name(node, port)),
            node,
            port,
            requests: l.requests,
            timeouts: l.timeouts,
            interarrival: distribution(&d.interarrival),
            wait: distribution(&d.wait),
        }
    });
    let mut tries_hist = histogram();
    let _ = tries_hist.add(&all.worm_tries_hist);
    Timeout {
        timeout,
        retry_delay,
        saturated_sources,
        offered_per_host: per_host(reps.iter().map(|r| r.offered).sum::<f64>() / k),
        accepted_per_host,
        accepted_per_host_ci95: accepted_ci,
        // A maximum only from windows that ran whole: a replication cut short (a
        // deadlock, an interrupt, a network that never drained) measured a transient.
        max_throughput: (saturated_sources
            && reps
                .iter()
                .all(|r| r.stop == crate::engine::sim::Stop::Drained))
        .then_some(accepted_per_host),
        host_arrival_rate: gamma,
        host_try_rate: tries as f64 / (hosts * window),
        host_utilization: per_link_cycle(0, classes[0].1.busy),
        tries_mean,
        tries_ci95,
        tries_histogram: distribution(&tries_hist).values,
        p_fail_first_try: ratio(all.tries_failed[0], all.tries[0]),
        p_fail_retry: ratio(all.tries_failed[1], all.tries[1]),
        p_timeout: ratio(ss.timeouts + sh.timeouts, ss.requests + sh.requests),
        p_timeout_ci95,
        p_timeout_by_class: split(&|c| ratio(c.timeouts, c.requests)),
        p_free_by_class: split(&|c| ratio(c.found_free, c.requests)),
        request_rate_by_class: rate_split(|c| c.requests),
        wait_mean_by_class: split(&|c| c.wait.raw(1)),
        holding_by_class: ClassSplit {
            hs: classes[0].1.holding.raws(),
            ss: ss.holding.raws(),
            sh: sh.holding.raws(),
        },
        utilization_by_class: rate_split(|c| c.busy),
        interarrival_by_class: ClassSplit {
            hs: distribution(&dist(0).interarrival),
            ss: distribution(&dist(1).interarrival),
            sh: distribution(&dist(2).interarrival),
        },
        wait_by_class: ClassSplit {
            hs: distribution(&dist(0).wait),
            ss: distribution(&dist(1).wait),
            sh: distribution(&dist(2).wait),
        },
        occupancy_by_class: ClassSplit {
            hs: occupancy(&classes[0].1),
            ss: occupancy(ss),
            sh: occupancy(sh),
        },
        try_service_mean: b[0],
        try_service_m2: b[1],
        try_service_m3: b[2],
        p_try_success: p_s,
        host_wait_mean,
        host_wait_ci95,
        host_wait_mg1,
        network_mean,
        network_ci95,
        wasted_fraction: ratio(all.wasted_flits, all.flits_sent),
        resets: all.resets,
        links: link_rows,
        links_omitted: all.links.len() - listed,
        watched,
    }
}
