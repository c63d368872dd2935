//! The circuit block of the run report: per-replication means with confidence intervals,
//! merged histograms, and every node's routing controller from the counts of all
//! replications. What is measured while running is in [`crate::switching::circuit::measure`].

use crate::config::SwitchingConfig;
use crate::engine::network::{ModeContext, ModeMeasures};
use crate::engine::probe::histogram;
use crate::engine::replication::RepResult;
use crate::foundation::ci::dist;
use crate::foundation::ci::mean_ci;
use crate::foundation::ci::Dist;
use crate::router::controller::{chain_delta, chained_coef, pk_wait};
use crate::router::controller::{ClassStats, CtrlStats, CLASSES};
use crate::switching::circuit::measure::CircuitStats;
use crate::switching::circuit::CircuitMeasures;
use crate::switching::circuit::CircuitNet;
use crate::switching::report::{
    Circuit, ControllerClass, HopKindSplit, ModeReport, NodeController, PhaseSplit,
};
use crate::switching::Mode;

/// Largest network whose controllers are listed one by one.
const LIST_CONTROLLERS_UP_TO: usize = 4096;

impl ModeMeasures for CircuitMeasures {
    fn merge(&mut self, o: &Self) {
        self.add(o);
    }
}

impl Mode for CircuitNet {
    fn report(ctx: ModeContext<'_>, reps: &[RepResult<CircuitMeasures>]) -> ModeReport {
        ModeReport::Circuit(Box::new(circuit_report(ctx, reps)))
    }
}

fn circuit_report(ctx: ModeContext<'_>, reps: &[RepResult<CircuitMeasures>]) -> Circuit {
    let (cfg, topology) = (ctx.cfg, ctx.topology);
    let strategy = match &cfg.switching {
        SwitchingConfig::Circuit { strategy, .. } => format!("{strategy:?}"),
        _ => String::new(),
    };
    let ms: Vec<&CircuitMeasures> = reps.iter().map(|r| &r.mode).collect();
    let links = ms.first().map_or(0, |m| m.links);
    let k = ms.len().max(1) as f64;
    let ratio = |num: &dyn Fn(&CircuitStats) -> u64, den: &dyn Fn(&CircuitStats) -> u64| {
        let (a, b): (u64, u64) = ms
            .iter()
            .map(|m| (num(&m.stats), den(&m.stats)))
            .fold((0, 0), |(x, y), (a, b)| (x + a, y + b));
        (b > 0).then(|| a as f64 / b as f64)
    };
    let per_rep = |num: &dyn Fn(&CircuitStats) -> u64| -> Vec<f64> {
        ms.iter()
            .filter(|m| m.stats.count > 0)
            .map(|m| num(&m.stats) as f64 / m.stats.count as f64)
            .collect()
    };
    let (aborts, aborts_ci) = mean_ci(&per_rep(&|s| s.aborts_sum));
    let held = |i: usize| {
        ms.iter()
            .map(|m| m.stats.held[i] as f64 / m.window.max(1) as f64)
            .sum::<f64>()
            / k
    };
    let held = PhaseSplit {
        setup: held(0),
        ack: held(1),
        data: held(2),
        release: held(3),
    };
    let frac = |x: f64| x / links.max(1) as f64;
    let mut hists = [
        histogram(),
        histogram(),
        histogram(),
        histogram(),
        histogram(),
    ];
    for m in &ms {
        let s = &m.stats;
        for (h, x) in hists
            .iter_mut()
            .zip([&s.setup, &s.ack, &s.data, &s.release, &s.ctrl_wait])
        {
            let _ = h.add(x);
        }
    }
    let phase_dist = |i: usize| dist(&per_rep(&|s| s.phase_sum[i]), &hists[i]);
    let wait_means: Vec<f64> = reps.iter().filter_map(|r| r.ctrl.2).collect();
    let controllers = (topology.nodes() <= LIST_CONTROLLERS_UP_TO).then(|| {
        let windows: f64 = reps.iter().map(|r| r.window.max(1) as f64).sum();
        let servers = cfg.router.controller.servers as f64;
        (0..topology.nodes())
            .map(|node| {
                let mut st = CtrlStats::default();
                for r in reps {
                    // Every node's row, in node order (`CircuitMeasures::add`).
                    if let Some((_, x)) = r.mode.ctrl_nodes.get(node) {
                        st.arrivals += x.arrivals;
                        st.wait_sum += x.wait_sum;
                        st.service_sum += x.service_sum;
                        st.service_sq_sum += x.service_sq_sum;
                        st.busy_arrivals += x.busy_arrivals;
                        st.chained_arrivals += x.chained_arrivals;
                        st.chained_service_sum += x.chained_service_sum;
                    }
                }
                let a = st.arrivals as f64;
                let per = |x: u64| (st.arrivals > 0).then(|| x as f64 / a);
                let lambda = a / windows;
                let rho = st.service_sum as f64 / windows;
                let wait_mg1 = per(st.service_sq_sum)
                    .filter(|_| servers == 1.0)
                    .and_then(|m2| pk_wait(lambda, rho, m2));
                NodeController {
                    node: node as u32,
                    arrival_rate: lambda,
                    service_mean: per(st.service_sum),
                    service_m2: per(st.service_sq_sum),
                    // Services longer than the window cannot make a server more
                    // than fully busy.
                    utilization: (rho / servers).min(1.0),
                    wait_mean: per(st.wait_sum),
                    wait_mg1,
                    p_busy_at_arrival: per(st.busy_arrivals),
                    wait_corrected: wait_mg1
                        .map(|w| w + chain_delta(cfg) * chained_coef(&st, windows)),
                }
            })
            .collect()
    });
    Circuit {
        strategy,
        links,
        aborts_per_message: aborts.is_finite().then_some(aborts),
        aborts_per_message_ci95: aborts_ci.filter(|x| x.is_finite()),
        aborts_max: ms.iter().map(|m| m.stats.aborts_max).max().unwrap_or(0),
        hold_timeouts: ms.iter().map(|m| m.stats.timeouts).sum(),
        p_conflict: ratio(&|s| s.conflicts.iter().sum(), &|s| s.requests),
        p_conflict_by_phase: PhaseSplit {
            setup: ratio(&|s| s.conflicts[0], &|s| s.requests),
            ack: ratio(&|s| s.conflicts[1], &|s| s.requests),
            data: ratio(&|s| s.conflicts[2], &|s| s.requests),
            release: ratio(&|s| s.conflicts[3], &|s| s.requests),
        },
        p_conflict_by_hop: {
            let last = ms
                .iter()
                .filter_map(|m| m.stats.hop_requests.iter().rposition(|&r| r > 0))
                .max()
                .map_or(0, |i| i + 1);
            (0..last)
                .map(|i| ratio(&|s| s.hop_conflicts[i], &|s| s.hop_requests[i]))
                .collect()
        },
        p_conflict_by_kind: HopKindSplit {
            first: ratio(&|s| s.kind_conflicts[0], &|s| s.kind_requests[0]),
            turn: ratio(&|s| s.kind_conflicts[1], &|s| s.kind_requests[1]),
            straight: ratio(&|s| s.kind_conflicts[2], &|s| s.kind_requests[2]),
        },
        p_conflict_retry: ratio(&|s| s.retry_conflicts, &|s| s.retry_requests),
        p_conflict_first_attempt: ratio(
            &|s| s.conflicts.iter().sum::<u64>() - s.retry_conflicts,
            &|s| s.requests - s.retry_requests,
        ),
        link_requests_per_message: ratio(&|s| s.requests, &|s| s.count),
        p_dma_conflict: ratio(&|s| s.dma_conflicts, &|s| s.dma_requests),
        links_held_fraction: PhaseSplit {
            setup: frac(held.setup),
            ack: frac(held.ack),
            data: frac(held.data),
            release: frac(held.release),
        },
        links_held: held,
        phases: PhaseSplit {
            setup: phase_dist(0),
            ack: phase_dist(1),
            data: phase_dist(2),
            release: phase_dist(3),
        },
        link_wait_per_message: ratio(&|s| s.link_wait_sum, &|s| s.count),
        controller_wait_per_message: ratio(&|s| s.ctrl_wait_msg_sum, &|s| s.count),
        controller_wait: Dist {
            mean: (!wait_means.is_empty())
                .then(|| wait_means.iter().sum::<f64>() / wait_means.len() as f64),
            ci95: mean_ci(&wait_means).1.filter(|x| x.is_finite()),
            ..dist(&[], &hists[4])
        },
        controller_classes: classes(&ms),
        controllers,
    }
}

/// The controllers' arrivals by class, every replication together.
fn classes(ms: &[&CircuitMeasures]) -> Vec<ControllerClass> {
    let mut c = ClassStats::default();
    for m in ms {
        c.add(&m.ctrl_classes);
    }
    let all: u64 = c.arrivals.iter().sum();
    (0..CLASSES)
        .filter(|&a| c.arrivals[a] > 0)
        .map(|a| {
            let n = c.arrivals[a] as f64;
            let busy = c.busy[a];
            ControllerClass {
                class: crate::switching::circuit::ARRIVAL_CLASSES[a],
                share: n / all as f64,
                p_busy: busy as f64 / n,
                p_queued: c.queued[a] as f64 / n,
                wait_mean: c.wait_sum[a] as f64 / n,
                service_mean: c.service_sum[a] as f64 / n,
                busy_with: (0..CLASSES)
                    .filter(|&k| c.busy_with[a][k] > 0)
                    .map(|k| {
                        (
                            crate::switching::circuit::ARRIVAL_CLASSES[k],
                            c.busy_with[a][k] as f64 / busy as f64,
                        )
                    })
                    .collect(),
            }
        })
        .collect()
}
