//! Measured against predicted: the rows of `routemu compare` and `routemu sweep`, each a
//! quantity the emulator measures and (where a model covers it) the model's value and the
//! relative error (paper 000's circuit models; paper 004's wormhole torus model predicts
//! the latency and the blocking per hop; paper 003's deflection model η, p, E, B and the
//! lanes' load; paper 002's timeout model the tries, the timeout probabilities, the host
//! queue's wait and the throughput; other machines carry the measurements alone).
//!
//! The routing controller's wait is the measured column of three rows, as MODELS.md asks,
//! each against another model: the Pollaczek–Khinchine wait of the *measured* arrival
//! rate and service moments (`ctrl_wait_pk`: the error of the Poisson-arrival assumption
//! alone), that wait corrected for chained arrivals (`ctrl_wait_corrected`, see
//! `foundation::mg1::chained_wait`: set-ups that inherit a link under hold arrive right
//! behind the previous holder's release), and the model's closed form
//! (`ctrl_wait_model`: the error of the whole model). Two more rows hold the measured
//! fraction of arrivals that found the controller busy against ρ (what PASTA predicts,
//! `ctrl_busy_pasta`) and against the correction's ρ + f(1 − ρ) (`ctrl_busy_corrected`). Paper 002's host queue likewise: measured, P–K of the measured try
//! moments (`host_wait_pk`), and the model (`host_wait`); and its per-link timeout
//! probability from the measured λ and holding moments of a class (`p_timeout_*_mg1d`,
//! the M/G/1 with deterministic reneging alone, variant B) beside the whole model's.
//! On a wormhole torus or hypercube the two corrected controller rows hold instead the
//! correction for headers that never meet their own input's
//! ([`crate::model::controller_wormhole`]): P–K × F and (ρ − λ)·F.
//!
//! Each row carries `in_range`, set by [`mark_ranges`] from the model's range verdict
//! ([`crate::model::range`]): whether the point lies where the model was validated for
//! that quantity.

use crate::model::controller_wormhole::{corrected_busy, corrected_wait, same_input_factor};
use crate::model::Prediction;
use crate::stats::report::Report;
use serde::Serialize;

/// One quantity, measured and predicted.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Row {
    /// Short name (CSV column prefix).
    pub key: &'static str,
    /// What it is, with its unit.
    pub label: &'static str,
    /// The emulator's mean over replications.
    pub measured: Option<f64>,
    /// Its 95% confidence half-width (when replications allow one).
    pub ci95: Option<f64>,
    /// The model's value.
    pub predicted: Option<f64>,
    /// (predicted − measured) / measured.
    pub error: Option<f64>,
    /// Whether the point lies inside the range where the model was validated for this
    /// quantity (`model::range`; false for a quantity never validated within tolerance);
    /// null where the range table says nothing (the quantity is not the model's). A sweep
    /// writes it as the CSV's `KEY_in_range` (1 or 0).
    pub in_range: Option<bool>,
}

fn row(
    key: &'static str,
    label: &'static str,
    measured: Option<f64>,
    ci95: Option<f64>,
    predicted: Option<f64>,
) -> Row {
    let error = match (measured, predicted) {
        (Some(m), Some(p)) if m.abs() > 1e-12 && p.is_finite() => Some((p - m) / m),
        _ => None,
    };
    Row {
        key,
        label,
        measured,
        ci95,
        predicted,
        error,
        in_range: None,
    }
}

/// Sets each row's `in_range` from a range verdict (rows the verdict does not name keep
/// null).
pub fn mark_ranges(rows: &mut [Row], range: &crate::model::range::Range) {
    for r in rows {
        r.in_range = range.range.get(r.key).map(|v| v.in_range);
    }
}

/// The keys of every row, in order (for tables and CSV headers).
pub const KEYS: [&str; 31] = [
    "latency",
    "setup",
    "release",
    "p_conflict",
    "aborts",
    "link_wait",
    "ctrl_rate",
    "ctrl_util",
    "ctrl_wait_pk",
    "ctrl_wait_corrected",
    "ctrl_wait_model",
    "ctrl_busy_pasta",
    "ctrl_busy_corrected",
    "accepted",
    "blocking_per_hop",
    "delay_per_hop",
    "eta",
    "p_deflect",
    "p_preempt",
    "p_block",
    "throughput_per_channel",
    "lane_util",
    "tries",
    "p_timeout_ss",
    "p_timeout_sh",
    "p_timeout_ss_mg1d",
    "p_timeout_sh_mg1d",
    "host_wait",
    "host_wait_pk",
    "accepted_per_host",
    "max_throughput",
];

/// The rows of a run and, for a circuit-switched machine with a model, its prediction;
/// `mean_path` turns per-request waits into per-message ones.
pub fn rows(report: &Report, prediction: Option<&Prediction>, mean_path: f64) -> Vec<Row> {
    let lat = &report.latency.total;
    let pred = match prediction {
        Some(Prediction::Circuit(p)) => Some(p),
        _ => None,
    };
    let worm = match prediction {
        Some(Prediction::Wormhole(p)) => Some(p),
        _ => None,
    };
    let defl = match prediction {
        Some(Prediction::Deflection(p)) => Some(p),
        _ => None,
    };
    let tmo = match prediction {
        Some(Prediction::Timeout(p)) => Some(p),
        _ => None,
    };
    let t = report.timeout();
    // Timeout and deflection switches have no routing controller.
    let has_ctrl = t.is_none() && report.deflection().is_none();
    let d = report.deflection();
    let c = report.circuit();
    let ctrl = &report.controller;
    let phase = |f: fn(&crate::switching::report::Circuit) -> Option<f64>| c.and_then(f);
    let setup = phase(|c| Some(c.phases.setup.mean? + c.phases.ack.mean?));
    // Wormhole controllers: P-K corrected for headers never meeting their own input's
    // (model::controller_wormhole), on tori and hypercubes.
    let same_input = report
        .wormhole()
        .and_then(|w| w.hops_mean)
        .and_then(|h| same_input_factor(&report.config, h));
    vec![
        row(
            "latency",
            "latency (cycles)",
            lat.mean,
            lat.ci95,
            // Saturated sources' worms wait behind a queue kept full on purpose: their
            // latency is not the model's (which is unbounded at the maximum).
            prediction
                .and_then(|p| p.latency())
                .filter(|_| !t.is_some_and(|t| t.saturated_sources)),
        ),
        row(
            "setup",
            "set-up with ack (cycles)",
            setup,
            c.and_then(|c| c.phases.setup.ci95),
            pred.map(|p| p.setup),
        ),
        row(
            "release",
            "release (cycles)",
            phase(|c| c.phases.release.mean),
            c.and_then(|c| c.phases.release.ci95),
            pred.map(|p| p.release),
        ),
        row(
            "p_conflict",
            "P_conflict",
            phase(|c| c.p_conflict),
            None,
            pred.map(|p| p.p_conflict),
        ),
        row(
            "aborts",
            "aborts per message",
            phase(|c| c.aborts_per_message),
            c.and_then(|c| c.aborts_per_message_ci95),
            pred.map(|p| p.aborts),
        ),
        row(
            "link_wait",
            "link wait per message (cycles)",
            phase(|c| c.link_wait_per_message),
            None,
            pred.map(|p| p.link_wait * mean_path),
        ),
        row(
            "ctrl_rate",
            "controller requests /node/cycle",
            has_ctrl.then_some(ctrl.arrival_rate),
            None,
            pred.map(|p| p.controller_rate),
        ),
        row(
            "ctrl_util",
            "controller utilisation",
            has_ctrl.then_some(ctrl.utilization),
            None,
            pred.map(|p| p.controller_utilization),
        ),
        row(
            "ctrl_wait_pk",
            "controller wait | model: P-K, measured moments",
            ctrl.wait_mean,
            None,
            ctrl.wait_mg1,
        ),
        if let Some(f) = same_input {
            row(
                "ctrl_wait_corrected",
                "controller wait | model: P-K × same input",
                ctrl.wait_mean,
                None,
                ctrl.wait_mg1.map(|w| corrected_wait(w, f)),
            )
        } else {
            row(
                "ctrl_wait_corrected",
                "controller wait | model: P-K + chained arrivals",
                ctrl.wait_mean,
                None,
                ctrl.wait_corrected,
            )
        },
        row(
            "ctrl_wait_model",
            "controller wait | model: closed form",
            ctrl.wait_mean,
            None,
            pred.map(|p| p.controller_wait),
        ),
        row(
            "ctrl_busy_pasta",
            "P(controller busy at arrival) | model: ρ",
            has_ctrl.then_some(ctrl.p_busy_at_arrival).flatten(),
            None,
            has_ctrl
                .then_some(ctrl.utilization)
                .filter(|_| ctrl.p_busy_at_arrival.is_some() && ctrl.servers == 1),
        ),
        if let Some(f) = same_input {
            row(
                "ctrl_busy_corrected",
                "P(controller busy at arrival) | model: same input",
                has_ctrl.then_some(ctrl.p_busy_at_arrival).flatten(),
                None,
                (ctrl.servers == 1 && ctrl.p_busy_at_arrival.is_some())
                    .then(|| corrected_busy(ctrl.utilization, ctrl.arrival_rate, f)),
            )
        } else {
            row(
                "ctrl_busy_corrected",
                "P(controller busy at arrival) | model: chained",
                has_ctrl.then_some(ctrl.p_busy_at_arrival).flatten(),
                None,
                has_ctrl.then_some(ctrl.p_busy_corrected).flatten(),
            )
        },
        row(
            "accepted",
            "accepted flits /node/cycle",
            // A host network's is the per-host row below.
            t.is_none().then_some(report.throughput.accepted),
            report.throughput.accepted_ci95,
            None,
        ),
        row(
            "blocking_per_hop",
            "blocking per hop (cycles)",
            report.wormhole().and_then(|w| w.blocking_per_hop),
            report.wormhole().and_then(|w| w.blocking_per_hop_ci95),
            worm.map(|w| w.blocking_per_hop),
        ),
        row(
            "delay_per_hop",
            "delay per hop beyond zero load (cycles)",
            report.wormhole().and_then(|w| {
                let hops = w.hops_mean.filter(|&h| h > 0.0)?;
                Some((lat.mean? - wormhole_zero_load(report, hops)) / hops)
            }),
            None,
            worm.map(|w| w.blocking_per_hop),
        ),
        row(
            "eta",
            "inefficiency ratio η = D(λ)/D(0)",
            d.and_then(|d| d.eta),
            d.and_then(|d| d.eta_ci95),
            defl.map(|p| p.eta),
        ),
        row(
            "p_deflect",
            "deflection probability at preference nodes",
            d.and_then(|d| d.p_deflect),
            d.and_then(|d| d.p_deflect_ci95),
            defl.map(|p| p.p_deflect),
        ),
        row(
            "p_preempt",
            "preemption probability E",
            d.and_then(|d| d.p_preempt),
            d.and_then(|d| d.p_preempt_ci95),
            defl.map(|p| p.p_preempt),
        ),
        row(
            "p_block",
            "blocking probability B (new worms)",
            d.and_then(|d| d.p_block),
            d.and_then(|d| d.p_block_ci95),
            defl.map(|p| p.p_block),
        ),
        row(
            "throughput_per_channel",
            "completed worms /node/time unit/lane",
            d.map(|d| d.throughput_per_channel),
            d.and_then(|d| d.throughput_per_channel_ci95),
            // Stable, the model carries what is offered.
            defl.and(d.map(|d| d.offered_per_channel)),
        ),
        row(
            "lane_util",
            "busy fraction of the lanes",
            d.map(|d| d.lane_utilization),
            None,
            defl.map(|p| p.lane_utilization),
        ),
        row(
            "tries",
            "transmissions per worm",
            t.and_then(|t| t.tries_mean),
            t.and_then(|t| t.tries_ci95),
            tmo.map(|p| p.tries),
        ),
        row(
            "p_timeout_ss",
            "P_timeout at ss links",
            t.and_then(|t| t.p_timeout_by_class.ss),
            None,
            tmo.map(|p| p.p_timeout_by_class.ss),
        ),
        row(
            "p_timeout_sh",
            "P_timeout at sh links",
            t.and_then(|t| t.p_timeout_by_class.sh),
            None,
            tmo.map(|p| p.p_timeout_by_class.sh),
        ),
        row(
            "p_timeout_ss_mg1d",
            "P_timeout ss: M/G/1+D of measured λ, b",
            t.and_then(|t| t.p_timeout_by_class.ss),
            None,
            t.and_then(|t| measured_mg1d(t, "ss")),
        ),
        row(
            "p_timeout_sh_mg1d",
            "P_timeout sh: M/G/1+D of measured λ, b",
            t.and_then(|t| t.p_timeout_by_class.sh),
            None,
            t.and_then(|t| measured_mg1d(t, "sh")),
        ),
        row(
            "host_wait",
            "host queue wait: model (cycles)",
            t.and_then(|t| t.host_wait_mean),
            t.and_then(|t| t.host_wait_ci95),
            tmo.map(|p| p.host_wait)
                .filter(|_| !t.is_some_and(|t| t.saturated_sources)),
        ),
        row(
            "host_wait_pk",
            "host queue wait: P-K of measured tries",
            t.and_then(|t| t.host_wait_mean),
            t.and_then(|t| t.host_wait_ci95),
            t.and_then(|t| t.host_wait_mg1),
        ),
        row(
            "accepted_per_host",
            "accepted flits /host/cycle",
            t.map(|t| t.accepted_per_host),
            None,
            // Below its maximum the model carries what is offered.
            tmo.map(|p| p.throughput),
        ),
        row(
            "max_throughput",
            "maximum throughput flits /host/cycle",
            // Measured by a run with saturated sources (workload.process = Saturated).
            t.and_then(|t| t.max_throughput),
            t.and_then(|t| t.max_throughput.and(t.accepted_per_host_ci95)),
            tmo.map(|p| p.max_throughput),
        ),
    ]
}

/// P_T of the M/G/1 with deterministic reneging (paper 002 §5, variant B) fed with each
/// link's measured arrival rate and holding-time moments, averaged over the links of
/// `class` weighted by their arrivals as the measured P_T is: the error of the per-link
/// model alone, without the fixed point around it. None when a link of the class has no
/// answer (saturated) or the links are not listed.
fn measured_mg1d(t: &crate::switching::report::Timeout, class: &str) -> Option<f64> {
    use crate::model::wormhole_timeout::link::{reneging_link, Denominator, Matching};
    let (mut num, mut den) = (0.0, 0.0);
    for l in t
        .links
        .iter()
        .filter(|l| l.class == class && l.requests > 0)
    {
        let [b1, b2, b3] = l.holding;
        let s = reneging_link(
            l.request_rate,
            [b1?, b2?, b3?],
            t.timeout? as f64,
            Matching::B,
            Denominator::Corrected,
        )
        .ok()?;
        num += l.requests as f64 * s.p_timeout;
        den += l.requests as f64;
    }
    (den > 0.0 && t.links_omitted == 0).then(|| num / den)
}

/// The emulator's zero-load latency at a mean of `hops` hops and the mean length (it is
/// linear in both).
fn wormhole_zero_load(report: &Report, hops: f64) -> f64 {
    let cfg = &report.config;
    let len = crate::traffic::length::LengthDist::new(&cfg.workload.length)
        .map_or(1.0, |l| l.mean())
        .round()
        .max(1.0) as u64;
    let (base, per_hop) = crate::switching::zero_load::wormhole_line(cfg, len);
    base + hops * per_hop
}

/// The rows as a table: quantity, measured (± 95%), model, error.
pub fn table(rows: &[Row]) -> String {
    use std::fmt::Write;
    let num = |x: f64| {
        if x != 0.0 && x.abs() < 0.01 {
            format!("{x:.3e}")
        } else {
            format!("{x:.4}")
        }
    };
    let ranged = rows.iter().any(|r| r.in_range.is_some());
    let mut s = format!(
        "  {:<48} {:>22} {:>12} {:>9}{}\n",
        "quantity",
        "measured",
        "model",
        "error",
        if ranged { "  range" } else { "" }
    );
    for r in rows {
        if r.measured.is_none() && r.predicted.is_none() {
            continue;
        }
        let m = match (r.measured, r.ci95) {
            (Some(m), Some(c)) => format!("{} ± {}", num(m), num(c)),
            (Some(m), None) => num(m),
            _ => "n/a".into(),
        };
        let p = r.predicted.map_or("—".into(), num);
        let e = r.error.map_or("".into(), |e| format!("{:+.1}%", 100.0 * e));
        // "in": inside the validated range; "OUT": outside it or never validated.
        let g = match r.in_range {
            Some(true) => "  in",
            Some(false) => "  OUT",
            None => "",
        };
        let _ = writeln!(s, "  {:<48} {m:>22} {p:>12} {e:>9}{g}", r.label);
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_error_is_relative_to_the_measurement_and_absent_without_one() {
        let r = row("x", "x", Some(200.0), None, Some(210.0));
        assert!((r.error.unwrap() - 0.05).abs() < 1e-12);
        assert_eq!(row("x", "x", Some(0.0), None, Some(1.0)).error, None);
        assert_eq!(row("x", "x", None, None, Some(1.0)).error, None);
        assert_eq!(row("x", "x", Some(1.0), None, None).error, None);
    }
}
