//! The one saturation verdict: whether one replication's measurements show a load the
//! machine sustains, and why not. `routemu run` and `routemu sweep` flag a report
//! `saturated` by it (every replication judged, [`Rule::of_run`]), and the saturation
//! search judges each probe by it ([`Rule`] with the search's criterion and margin), so
//! a load the search puts past saturation is `saturated` in a run with the same
//! settings (docs/saturation.md, "One verdict").
//!
//! Owns: the criteria ([`Criterion`]), the rule ([`Rule`]: criterion, margin,
//! `experiment.latency_threshold`), what a verdict reads of a replication ([`Measured`])
//! and the verdict with its cause and reason in words ([`judge`]).
//!
//! Not here: running replications (`engine::run`), the backlog samples and their growth
//! test (`engine::sim`, `foundation::ci::backlog_growth`), the search itself
//! (`experiments::saturation`), the report's fields (`stats::report`).

use crate::config::{HwConfig, LatencyFrom, LatencyTo};
use crate::engine::replication::{RepResult, OVERLOAD_GROWTH_SHARE};
use crate::engine::sim::Stop;
use crate::foundation::ci::Growth;
use crate::foundation::error::{Error, Result};
use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// The margin of a run's verdict (`routemu run`, `sweep`): the saturation search's
/// default `--margin`, so that both call the same loads saturated.
pub const DEFAULT_MARGIN: f64 = 0.01;

/// What makes a load sustained, beyond what every criterion checks (the engine's guard,
/// deadlock, refused messages, messages piling up in the system, and
/// `experiment.latency_threshold`).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(into = "String", try_from = "String")]
pub enum Criterion {
    /// The source backlog does not grow: over the window's check points (every
    /// `engine::sim::CHECK_EVERY` cycles) the backlog's increments are tested with a
    /// one-sided Student-t test at 95%; the load is not sustained when their mean is
    /// significantly positive *and* the growth, in flits per node per cycle, exceeds
    /// `margin` × offered.
    Backlog,
    /// The accepted throughput is not below the offered one by more than `margin` ×
    /// offered (measured over the same window).
    Accepted,
    /// The mean latency is at most this factor times the zero-load latency, measured by a
    /// probe at `zero_load` in the same replication.
    Latency(f64),
}

impl fmt::Display for Criterion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Criterion::Backlog => write!(f, "backlog"),
            Criterion::Accepted => write!(f, "accepted"),
            Criterion::Latency(x) => write!(f, "latency:{x}"),
        }
    }
}

impl FromStr for Criterion {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        let bad = || {
            Error::Arg(format!(
                "criterion `{s}`: expected backlog, accepted or latency:F (F > 1, the mean \
                 latency allowed as a multiple of the zero-load latency)"
            ))
        };
        match s.trim() {
            "backlog" => Ok(Criterion::Backlog),
            "accepted" => Ok(Criterion::Accepted),
            l => {
                let f: f64 = l
                    .strip_prefix("latency:")
                    .ok_or_else(bad)?
                    .parse()
                    .map_err(|_| bad())?;
                if f > 1.0 && f.is_finite() {
                    Ok(Criterion::Latency(f))
                } else {
                    Err(bad())
                }
            }
        }
    }
}

impl From<Criterion> for String {
    fn from(c: Criterion) -> String {
        c.to_string()
    }
}

impl TryFrom<String> for Criterion {
    type Error = Error;
    fn try_from(s: String) -> Result<Self> {
        s.parse()
    }
}

/// How a replication ended, as a verdict reads it (`engine::sim::Stop` without the
/// deadlock's text).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ProbeStop {
    /// Every measured message was delivered.
    Drained,
    /// The engine's guard stopped it: backlog over `experiment.saturation_backlog` per
    /// node, or the drain over `experiment.drain_limit`.
    Saturated,
    /// The deadlock watchdog stopped it.
    Deadlock,
    /// A stop was requested from outside (a run interrupted: judged on what it measured).
    Interrupted,
}

impl ProbeStop {
    /// The ending of an engine stop.
    pub fn of(stop: &Stop) -> Self {
        match stop {
            Stop::Drained => ProbeStop::Drained,
            // A cycle limit is for benchmarks; a replication never ends on one.
            Stop::Saturated | Stop::CycleLimit => ProbeStop::Saturated,
            Stop::Deadlock(_) => ProbeStop::Deadlock,
            Stop::Interrupted => ProbeStop::Interrupted,
        }
    }
}

/// The rule a verdict applies.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Rule {
    /// The criterion.
    pub criterion: Criterion,
    /// The smallest share of the offered load that counts as not sustained: backlog
    /// growth (criterion backlog), offered minus accepted (criterion accepted), refused
    /// messages (every criterion).
    pub margin: f64,
    /// `experiment.latency_threshold`: a mean latency above this many cycles is not
    /// sustained, whatever the criterion.
    pub latency_threshold: Option<f64>,
}

impl Rule {
    /// The rule of `routemu run` and `sweep` on `cfg`: the saturation search's defaults
    /// (backlog criterion, margin [`DEFAULT_MARGIN`]) and the configuration's latency
    /// threshold.
    pub fn of_run(cfg: &HwConfig) -> Self {
        Rule {
            criterion: Criterion::Backlog,
            margin: DEFAULT_MARGIN,
            latency_threshold: cfg.experiment.latency_threshold,
        }
    }
}

/// What a verdict reads of one replication.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Measured {
    /// How it ended.
    pub stop: ProbeStop,
    /// Offered load, flits per node per cycle.
    pub offered: f64,
    /// Accepted throughput, flits per node per cycle.
    pub accepted: f64,
    /// Mean latency of the measured messages delivered, cycles, in the definition
    /// `experiment.latency` asks for (None: none delivered).
    pub latency: Option<f64>,
    /// The source backlog's growth and its test (None: fewer than two samples).
    pub growth: Option<Growth>,
    /// That growth in flits per node per cycle.
    pub slope: Option<f64>,
    /// Share of the created messages the sources refused (lost).
    pub lost_share: f64,
    /// The messages in the system grew although the run drained
    /// (`engine::replication::overloaded`).
    pub overloaded: bool,
    /// The engine's guard that stopped it was the drain's (`experiment.drain_limit`,
    /// after a full window), not the backlog's (None: not known, a window of messages).
    pub drain_guard: Option<bool>,
}

impl Measured {
    /// What replication `r` of `cfg` measured; `mean_length` flits per message converts
    /// the backlog's growth (messages) into flits per node per cycle over `endpoints`
    /// nodes.
    pub fn of<M>(cfg: &HwConfig, r: &RepResult<M>, mean_length: f64, endpoints: f64) -> Self {
        Measured {
            stop: ProbeStop::of(&r.stop),
            offered: r.offered,
            accepted: r.accepted,
            latency: mean_latency(cfg, r),
            growth: r.backlog_growth,
            slope: r
                .backlog_growth
                .map(|g| g.per_cycle * mean_length / endpoints.max(1.0)),
            lost_share: if r.generated > 0 {
                r.lost as f64 / r.generated as f64
            } else {
                0.0
            },
            overloaded: r.overloaded,
            drain_guard: match cfg.experiment.measure {
                crate::config::Measure::Cycles(c) => Some(r.window >= c),
                crate::config::Measure::Messages(_) => None,
            },
        }
    }
}

/// Why a load is not sustained.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Cause {
    /// The deadlock watchdog stopped the run (a deadlock, not a saturation).
    Deadlock,
    /// The engine's guard stopped it (`experiment.saturation_backlog`,
    /// `experiment.drain_limit`).
    Guard,
    /// The sources refused more than the margin of their messages.
    Lost,
    /// The source backlog grows significantly, by more than the margin.
    Backlog,
    /// The accepted throughput is below the offered by more than the margin.
    Accepted,
    /// The mean latency is over the criterion's multiple of the zero-load latency.
    LatencyFactor,
    /// No measured message was delivered (criterion latency).
    NoLatency,
    /// The messages in the system grow (a drained run, overloaded all the same).
    Overloaded,
    /// The mean latency is over `experiment.latency_threshold`.
    LatencyThreshold,
}

/// A verdict: sustained or not, the cause, and why in words.
#[derive(Clone, Debug, PartialEq)]
pub struct Verdict {
    /// Whether the load is sustained.
    pub sustained: bool,
    /// Why not (None when sustained).
    pub cause: Option<Cause>,
    /// Why, in words (the tests that passed, or the one that failed).
    pub reason: String,
}

impl Verdict {
    fn no(cause: Cause, reason: String) -> Self {
        Verdict {
            sustained: false,
            cause: Some(cause),
            reason,
        }
    }

    /// Whether it calls the run saturated: not sustained, and not because of a deadlock
    /// (reported as a deadlock, never as a saturation).
    pub fn saturated(&self) -> bool {
        !self.sustained && self.cause != Some(Cause::Deadlock)
    }
}

/// The verdict of `rule` on a replication's measurements `m`; `zero` is the zero-load
/// latency criterion latency needs. In order: a deadlock, the engine's guard, refused
/// messages, the criterion, messages piling up in the system, the latency threshold;
/// the first that fails decides.
pub fn judge(rule: &Rule, m: &Measured, zero: Option<f64>) -> Verdict {
    match m.stop {
        ProbeStop::Deadlock => return Verdict::no(Cause::Deadlock, "deadlock".into()),
        ProbeStop::Saturated => {
            return Verdict::no(
                Cause::Guard,
                match m.drain_guard {
                    Some(true) => {
                        "the engine stopped it: the measured messages took longer than \
                         experiment.drain_limit to drain"
                    }
                    Some(false) => {
                        "the engine stopped it: the source backlog passed \
                         experiment.saturation_backlog messages per source"
                    }
                    None => {
                        "the engine stopped it: the source backlog passed \
                         experiment.saturation_backlog messages per source, or the drain \
                         experiment.drain_limit"
                    }
                }
                .into(),
            )
        }
        ProbeStop::Drained | ProbeStop::Interrupted => {}
    }
    if m.lost_share > rule.margin {
        return Verdict::no(
            Cause::Lost,
            format!(
                "sources refused {:.2}% of their messages (full memory)",
                100.0 * m.lost_share
            ),
        );
    }
    let offered = m.offered;
    let pct = |x: f64| 100.0 * x / offered.max(f64::MIN_POSITIVE);
    let passed = match rule.criterion {
        Criterion::Backlog => {
            let (Some(g), Some(slope)) = (m.growth, m.slope) else {
                return judge_rest(
                    rule,
                    m,
                    "no backlog test (fewer than two check points in the window)".into(),
                );
            };
            let text = format!(
                "backlog growth {slope:.5} flits/node/cycle ({:+.2}% of offered, t = {})",
                pct(slope),
                g.t.map_or("n/a".into(), |t| format!("{t:.2}"))
            );
            match (g.significant(), slope > rule.margin * offered) {
                (true, true) => return Verdict::no(Cause::Backlog, format!("{text}: growing")),
                (true, false) => format!("{text}: significant, within the margin"),
                (false, _) => format!("{text}: not significant"),
            }
        }
        Criterion::Accepted => {
            let gap = offered - m.accepted;
            let text = format!(
                "accepted {:.4} vs offered {offered:.4} ({:+.2}%)",
                m.accepted,
                -pct(gap)
            );
            if gap > rule.margin * offered {
                return Verdict::no(
                    Cause::Accepted,
                    format!("{text}: below by more than the margin"),
                );
            }
            text
        }
        Criterion::Latency(f) => {
            let (Some(l), Some(z)) = (m.latency, zero) else {
                return Verdict::no(Cause::NoLatency, "no measured message delivered".into());
            };
            let text = format!("mean latency {l:.2} = {:.2} × zero load {z:.2}", l / z);
            if l > f * z {
                return Verdict::no(Cause::LatencyFactor, format!("{text}: over {f}×"));
            }
            text
        }
    };
    judge_rest(rule, m, passed)
}

/// The tests every criterion shares after its own (which passed, saying `passed`).
fn judge_rest(rule: &Rule, m: &Measured, passed: String) -> Verdict {
    if m.overloaded {
        return Verdict::no(
            Cause::Overloaded,
            format!(
                "{passed}; but the messages in the system (waiting, held by engines, in \
                 flight) grow significantly, by more than {:.0}% of the offered load",
                100.0 * OVERLOAD_GROWTH_SHARE
            ),
        );
    }
    if let (Some(limit), Some(l)) = (rule.latency_threshold, m.latency) {
        if l > limit {
            return Verdict::no(
                Cause::LatencyThreshold,
                format!(
                    "mean latency {l:.2} cycles over experiment.latency_threshold = {}",
                    crate::foundation::limits::show(limit)
                ),
            );
        }
    }
    Verdict {
        sustained: true,
        cause: None,
        reason: passed,
    }
}

/// The mean latency of a replication's measured messages in the definition
/// `experiment.latency` asks for (as the run report's `latency.mean`).
pub fn mean_latency<M>(cfg: &HwConfig, r: &RepResult<M>) -> Option<f64> {
    let m = &r.msgs;
    if m.count == 0 {
        return None;
    }
    let def = cfg.experiment.latency;
    let sum = match def.from {
        LatencyFrom::Creation => m.latency_sum,
        LatencyFrom::HeadInjected => m.network_sum,
    };
    let shift = match def.to {
        LatencyTo::TailDelivered => 0.0,
        LatencyTo::TailArrived => cfg.router.ni.ejection_latency as f64,
    };
    Some(sum as f64 / m.count as f64 - shift)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn measured(offered: f64, accepted: f64, slope: Option<f64>, stop: ProbeStop) -> Measured {
        Measured {
            stop,
            offered,
            accepted,
            latency: Some(50.0),
            growth: None,
            slope,
            lost_share: 0.0,
            overloaded: false,
            drain_guard: Some(false),
        }
    }

    fn rule(criterion: Criterion) -> Rule {
        Rule {
            criterion,
            margin: DEFAULT_MARGIN,
            latency_threshold: None,
        }
    }

    #[test]
    fn criteria_read_as_they_are_written() {
        for s in ["backlog", "accepted", "latency:3", "latency:1.5"] {
            let c: Criterion = s.parse().unwrap();
            assert_eq!(c.to_string(), s);
        }
        for bad in [
            "",
            "latency",
            "latency:1",
            "latency:0.5",
            "latency:x",
            "growth",
        ] {
            assert!(bad.parse::<Criterion>().is_err(), "{bad}");
        }
        let json = serde_json::to_string(&Criterion::Latency(3.0)).unwrap();
        assert_eq!(json, "\"latency:3\"");
        assert!(serde_json::from_str::<Criterion>("\"latency:1\"").is_err());
    }

    #[test]
    fn verdicts_follow_the_criterion() {
        let growing = Some(Growth {
            per_cycle: 1.0,
            t: Some(10.0),
            increments: 20,
        });
        let noise = Some(Growth {
            per_cycle: 1.0,
            t: Some(0.5),
            increments: 20,
        });
        let with = |mut m: Measured, g| {
            m.growth = g;
            m
        };
        let backlog = rule(Criterion::Backlog);
        // Significant and above 1% of the offered load: growing.
        let p = measured(0.5, 0.49, Some(0.02), ProbeStop::Drained);
        let v = judge(&backlog, &with(p, growing), None);
        assert_eq!((v.sustained, v.cause), (false, Some(Cause::Backlog)));
        assert!(v.saturated());
        // The same slope, not significant: sustained.
        assert!(judge(&backlog, &with(p, noise), None).sustained);
        // Significant but within the margin (0.2% of offered): sustained.
        let small = measured(0.5, 0.5, Some(0.001), ProbeStop::Drained);
        assert!(judge(&backlog, &with(small, growing), None).sustained);
        // No samples: no backlog test, sustained unless another test fails.
        assert!(judge(&backlog, &small, None).sustained);
        // Whatever the criterion: engine stops, deadlocks, refused messages, overload
        // and the latency threshold.
        for c in [
            Criterion::Backlog,
            Criterion::Accepted,
            Criterion::Latency(3.0),
        ] {
            let o = rule(c);
            let quiet = with(measured(0.5, 0.5, Some(0.0), ProbeStop::Drained), noise);
            assert!(judge(&o, &quiet, Some(40.0)).sustained, "{c}");
            for (stop, cause) in [
                (ProbeStop::Saturated, Cause::Guard),
                (ProbeStop::Deadlock, Cause::Deadlock),
            ] {
                let p = Measured { stop, ..quiet };
                let v = judge(&o, &p, Some(40.0));
                assert_eq!(v.cause, Some(cause), "{c} {stop:?}");
                assert_eq!(v.saturated(), cause != Cause::Deadlock);
            }
            let lost = Measured {
                lost_share: 0.05,
                ..quiet
            };
            assert_eq!(judge(&o, &lost, Some(40.0)).cause, Some(Cause::Lost));
            let piling = Measured {
                overloaded: true,
                ..quiet
            };
            assert_eq!(
                judge(&o, &piling, Some(40.0)).cause,
                Some(Cause::Overloaded)
            );
            let bounded = Rule {
                latency_threshold: Some(49.0),
                ..o
            };
            let v = judge(&bounded, &quiet, Some(40.0));
            assert_eq!(v.cause, Some(Cause::LatencyThreshold), "{c}");
            assert!(v.reason.contains("latency_threshold = 49"), "{}", v.reason);
            let roomy = Rule {
                latency_threshold: Some(50.0),
                ..o
            };
            assert!(judge(&roomy, &quiet, Some(40.0)).sustained, "{c}");
        }
        let accepted = rule(Criterion::Accepted);
        let m = |a| measured(0.5, a, None, ProbeStop::Drained);
        assert!(judge(&accepted, &m(0.496), None).sustained);
        assert_eq!(
            judge(&accepted, &m(0.49), None).cause,
            Some(Cause::Accepted)
        );
        let latency = rule(Criterion::Latency(2.0));
        let p = measured(0.5, 0.5, None, ProbeStop::Drained); // mean latency 50
        assert!(judge(&latency, &p, Some(25.0)).sustained);
        assert_eq!(
            judge(&latency, &p, Some(24.9)).cause,
            Some(Cause::LatencyFactor)
        );
    }

    #[test]
    fn a_run_is_judged_as_the_search_judges_by_default() {
        let mut cfg = crate::config::load::parse_hw(
            "(topology: Torus(k: 4, n: 2), switching: Wormhole(routing: DimensionOrder))",
            "test",
        )
        .unwrap();
        let r = Rule::of_run(&cfg);
        assert_eq!(r.criterion, Criterion::Backlog);
        assert_eq!(
            r.margin,
            crate::experiments::saturation::SaturationOptions::default().margin
        );
        assert_eq!(r.latency_threshold, None);
        cfg.experiment.latency_threshold = Some(500.0);
        assert_eq!(Rule::of_run(&cfg).latency_threshold, Some(500.0));
    }
}
