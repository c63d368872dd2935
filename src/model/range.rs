//! Where each model holds: for every model and every quantity it predicts, the region of
//! its inputs where its error against the emulation was *measured* small (the validation
//! tables of `docs/validation.md` and `docs/models.md`), as data in one table
//! ([`TABLE`]), and the verdict for one machine and load ([`assess`]). `routemu predict`
//! and `routemu compare` print the verdict and put it in their JSON
//! (`prediction.in_range`, `prediction.range`).
//!
//! A bound limits a variable the model itself gives (its link occupancy, its deflection
//! probability, the load as a share of its own saturation rate or maximum throughput) or
//! the configuration (the torus size, the worm length in per-hop delays), so `predict`
//! answers without emulating. Each entry names the validation table its numbers come
//! from, the largest error measured inside and what was measured outside. A quantity the
//! validation never found within tolerance has no bound: it is reported out of range,
//! with the measured errors, and does not count in the overall verdict.
//!
//! Tolerances: 10% for times and for η, 15% for probabilities and counts (aborts,
//! conflicts, deflections, blocking), relative to the emulated value.
//!
//! This module owns the table and its evaluation; it does not run emulations and does not
//! change any model's numbers.

use crate::config::{ConflictStrategy, HwConfig, Routing, SwitchingConfig, TopologyConfig};
use crate::model::circuit::PathForm;
use crate::model::Prediction;
use serde::Serialize;
use std::collections::BTreeMap;

/// Tolerance on times and on η (relative error against the emulation).
pub const TIME_TOLERANCE: f64 = 0.10;
/// Tolerance on probabilities and counts.
pub const PROBABILITY_TOLERANCE: f64 = 0.15;

/// The models the table covers (one per row group).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum Model {
    /// Paper 000's hold model on the hypercube.
    HoldHypercube,
    /// Paper 000 §5's hold model on the torus.
    HoldTorus,
    /// Paper 000's drop model on the hypercube.
    DropHypercube,
    /// Drop on the torus (paper 000 §5 extended).
    DropTorus,
    /// Paper 000/001's adaptive model on the hypercube.
    AdaptiveHypercube,
    /// Paper 004's adaptive wormhole model on the k×k torus.
    WormholeAdaptive,
    /// The dimension-order wormhole torus model (`model::wormhole_torus_dor`).
    WormholeDor,
    /// Paper 003's deflection model of the Manhattan Street network.
    Deflection,
    /// Paper 002's wormhole-with-timeout model.
    Timeout,
}

impl Model {
    /// The model of `cfg`, if the table has one (the same choice as `model::outcome`).
    pub fn of(cfg: &HwConfig) -> Option<Model> {
        let torus = matches!(cfg.topology, TopologyConfig::Torus { .. });
        Some(match &cfg.switching {
            SwitchingConfig::Wormhole {
                routing: Routing::DimensionOrder,
                ..
            } => Model::WormholeDor,
            SwitchingConfig::Wormhole { .. } => Model::WormholeAdaptive,
            SwitchingConfig::Circuit { strategy, .. } => match (strategy, torus) {
                (ConflictStrategy::Hold, false) => Model::HoldHypercube,
                (ConflictStrategy::Hold, true) => Model::HoldTorus,
                (ConflictStrategy::Drop, false) => Model::DropHypercube,
                (ConflictStrategy::Drop, true) => Model::DropTorus,
                (ConflictStrategy::Adaptive, _) => Model::AdaptiveHypercube,
            },
            SwitchingConfig::Deflection { .. } => Model::Deflection,
            SwitchingConfig::Timeout { .. } => Model::Timeout,
        })
    }
}

/// What a bound limits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Variable {
    /// The offered load as a share of the model's own saturation rate (found by
    /// bisection on `workload.rate`).
    SaturationShare,
    /// The offered flit load (`workload.rate` × mean length) as a share of the k×k
    /// bidirectional torus's uniform-traffic bound, 8/k flits per node per cycle.
    UniformBoundShare,
    /// The torus's k.
    TorusK,
    /// The squared coefficient of variation of the message length (0 constant, about 1
    /// exponential).
    LengthScv,
    /// DMA engines per node (`router.dma`).
    DmaEngines,
    /// The circuit model's time-average fraction of links held, U.
    Occupancy,
    /// The circuit model's aborted attempts per message.
    Aborts,
    /// The deflection model's deflection probability p.
    DeflectionP,
    /// The deflection model's preemption probability E (how near its stability limit).
    PreemptionE,
    /// The mean worm length in per-hop delays, L̄/δ, δ = `router.controller.route` +
    /// `links.latency` − 1 cycles (1 at the preset).
    LengthPerHop,
    /// The throughput as a share of the timeout model's maximum throughput.
    MaxThroughputShare,
}

impl Variable {
    /// The variable in words.
    pub fn describe(self) -> &'static str {
        match self {
            Variable::SaturationShare => "rate / the model's saturation rate",
            Variable::UniformBoundShare => "flit load / the uniform bound 8/k",
            Variable::TorusK => "torus size k",
            Variable::LengthScv => "length SCV (variance / mean²)",
            Variable::DmaEngines => "router.dma",
            Variable::Occupancy => "model link occupancy U",
            Variable::Aborts => "model aborts per message",
            Variable::DeflectionP => "model deflection probability p",
            Variable::PreemptionE => "model preemption probability E",
            Variable::LengthPerHop => "worm length in per-hop delays L̄/δ",
            Variable::MaxThroughputShare => "throughput / the model's maximum",
        }
    }
}

/// One variable between two values (inclusive).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Bound {
    /// What is bounded.
    pub variable: Variable,
    /// Smallest value inside.
    pub min: f64,
    /// Largest value inside.
    pub max: f64,
}

const fn at_most(variable: Variable, max: f64) -> Bound {
    Bound {
        variable,
        min: f64::NEG_INFINITY,
        max,
    }
}

const fn at_least(variable: Variable, min: f64) -> Bound {
    Bound {
        variable,
        min,
        max: f64::INFINITY,
    }
}

const fn between(variable: Variable, min: f64, max: f64) -> Bound {
    Bound { variable, min, max }
}

impl Bound {
    fn describe(&self) -> String {
        let v = self.variable.describe();
        let n = |x: f64| crate::foundation::limits::show(x);
        match (self.min.is_finite(), self.max.is_finite()) {
            (true, true) => format!("{} ≤ {v} ≤ {}", n(self.min), n(self.max)),
            (false, true) => format!("{v} ≤ {}", n(self.max)),
            (true, false) => format!("{v} ≥ {}", n(self.min)),
            (false, false) => v.to_string(),
        }
    }
}

/// One row of the table: where `model`'s `quantity` holds.
#[derive(Clone, Copy, Debug)]
pub struct Entry {
    /// The model.
    pub model: Model,
    /// The quantity (a key of `model::compare::KEYS`).
    pub quantity: &'static str,
    /// Alternatives, each a set of bounds that must all hold; the point is inside when
    /// one alternative holds. Empty: never measured within tolerance (no range).
    pub when: &'static [&'static [Bound]],
    /// The relative error measured inside.
    pub tolerance: f64,
    /// Where the bounds come from: the validation table, the largest error inside, what
    /// was measured outside.
    pub source: &'static str,
}

use Variable as V;

/// Every model's ranges. Each bound is the edge of the region where every validated point
/// was within the tolerance; points beyond it were measured outside (the source says by
/// how much) or not measured.
pub const TABLE: &[Entry] = &[
    // ---- Paper 000: circuit switching on the hypercube and the torus.
    Entry {
        model: Model::HoldHypercube,
        quantity: "latency",
        // docs/validation.md, paper 000 Figs. 6, 10, 11 and paper 001 Figs. 4–6 (hold).
        when: &[&[at_most(V::Occupancy, 0.15)]],
        tolerance: TIME_TOLERANCE,
        source: "docs/validation.md, paper 000 Figs. 6, 10, 11 and paper 001 Figs. 4–6 (hold): \
                 within 9.1% up to U = 0.15 (d = 10, 0.1/unit, exponential data, U 0.145); \
                 beyond it −14.8% (d = 12, 0.1/unit, U 0.158), −14.4% (d = 10, 0.125/unit, \
                 U 0.213), −12.8% and −11.3% (U 0.249, 0.261); uniform data stays within 3% \
                 to U 0.22",
    },
    Entry {
        model: Model::HoldHypercube,
        quantity: "p_conflict",
        // docs/validation.md, "P_conflict against occupancy".
        when: &[&[at_most(V::Occupancy, 0.15)]],
        tolerance: PROBABILITY_TOLERANCE,
        source: "docs/validation.md, \"P_conflict against occupancy\": +10% (d = 8) and +11.5% \
                 (d = 12) at λ = 0.1/unit (U 0.11–0.12); not measured beyond",
    },
    Entry {
        model: Model::HoldHypercube,
        quantity: "ctrl_wait_model",
        // docs/validation.md, "The routing controller's queue".
        when: &[],
        tolerance: TIME_TOLERANCE,
        source: "docs/validation.md, \"The routing controller's queue\": P-K is 25–98% below the \
                 measured controller wait under hold (chained and same-cycle arrivals); the \
                 wait is under 0.1% of the latency at the presets",
    },
    Entry {
        model: Model::HoldTorus,
        quantity: "latency",
        // docs/validation.md, paper 000 §5: hold on the 8 × 8 unidirectional torus.
        when: &[&[at_most(V::Occupancy, 0.105)]],
        tolerance: TIME_TOLERANCE,
        source: "docs/validation.md, paper 000 §5 (8 × 8 torus, hold): within 2.9% up to \
                 0.025/unit (U 0.103); −23.1% at 0.03/unit (U 0.128), where the emulation \
                 nears saturation",
    },
    Entry {
        model: Model::HoldTorus,
        quantity: "p_conflict",
        // docs/validation.md, "Torus: the papers' reading against routemu's".
        when: &[],
        tolerance: PROBABILITY_TOLERANCE,
        source: "docs/validation.md, \"Torus: the papers' reading against routemu's\": \
                 +12% … +29% over 0.005–0.025/unit",
    },
    Entry {
        model: Model::DropHypercube,
        quantity: "latency",
        // docs/validation.md, paper 000 Figs. 7, 9, 10, 11 (drop).
        when: &[&[at_most(V::Occupancy, 0.26)]],
        tolerance: TIME_TOLERANCE,
        source: "docs/validation.md, paper 000 Figs. 7, 9, 10, 11 (drop): within 8.8% at every \
                 validated point, the largest U 0.253 (Fig. 11, 2 units, +8.8%); not \
                 measured beyond",
    },
    Entry {
        model: Model::DropHypercube,
        quantity: "aborts",
        // docs/models.md, drop's back-off paragraph.
        when: &[],
        tolerance: PROBABILITY_TOLERANCE,
        source: "docs/models.md: −2% at back-off 1 cycle, +30%, +30%, +25%, +22% at 10, 100, \
                 300, 1000 cycles; −2% at the preset (back-off 1500)",
    },
    Entry {
        model: Model::DropTorus,
        quantity: "latency",
        // docs/validation.md, paper 000 §5 extended: drop on the 8 × 8 torus.
        when: &[&[at_most(V::Occupancy, 0.11)]],
        tolerance: TIME_TOLERANCE,
        source: "docs/validation.md, paper 000 §5 extended (8 × 8 torus, drop): within 7.4% up \
                 to 0.03/unit (U 0.108); not measured beyond",
    },
    Entry {
        model: Model::AdaptiveHypercube,
        quantity: "latency",
        // docs/validation.md, paper 000 Figs. 10, 11, paper 001 Figs. 4–6 (adaptive).
        when: &[&[at_most(V::Aborts, 0.6)]],
        tolerance: TIME_TOLERANCE,
        source: "docs/validation.md, paper 000 Figs. 10–11 and paper 001 Figs. 4–6 (adaptive): \
                 within 5.8% up to 0.55 aborts per message (controller 0.1, 0.125/unit); \
                 −15.3% at 0.99 (controller 0.1, 0.15/unit)",
    },
    Entry {
        model: Model::AdaptiveHypercube,
        quantity: "aborts",
        // docs/validation.md, paper 000 Fig. 8, paper 001 Figs. 2–3.
        when: &[&[at_most(V::Aborts, 0.33)]],
        tolerance: PROBABILITY_TOLERANCE,
        source: "docs/validation.md, paper 000 Fig. 8 and paper 001 Figs. 2–3: within 9.4% up \
                 to 0.32 aborts per message (0.2/unit); not measured beyond",
    },
    // ---- Paper 004 and the dimension-order model: wormhole on the k×k torus.
    Entry {
        model: Model::WormholeAdaptive,
        quantity: "latency",
        // docs/validation.md, paper 004: 4×4, 8×8, 12×12, 16×16 torus tables.
        when: &[
            &[
                at_most(V::LengthScv, 0.5),
                at_most(V::UniformBoundShare, 0.06),
                between(V::TorusK, 4.0, 16.0),
                at_least(V::DmaEngines, 2.0),
            ],
            &[
                at_least(V::LengthScv, 0.5),
                at_most(V::UniformBoundShare, 0.11),
                between(V::TorusK, 4.0, 16.0),
                at_least(V::DmaEngines, 2.0),
            ],
        ],
        tolerance: TIME_TOLERANCE,
        source: "docs/validation.md, paper 004 (4×4 … 16×16, 2 DMA engines): constant lengths \
                 within 9.3% up to 6% of the uniform bound 8/k (8×8 at 0.005: −9.3%), beyond \
                 −10.5% (4×4 at 0.011, 6.6%), −12.2% (8×8 at 0.007, 8.4%), −13.0% (16×16 at \
                 0.005); `compare hw/wormhole-torus-adaptive.ron --rate 0.012`: −18.9% (14.4%); \
                 exponential lengths within 9.9% up to 11% (8×8 at 0.009), −11.9% at 13%",
    },
    Entry {
        model: Model::WormholeAdaptive,
        quantity: "delay_per_hop",
        when: &[],
        tolerance: TIME_TOLERANCE,
        source: "`routemu compare hw/wormhole-torus-adaptive.ron`: the model's delay per hop \
                 beyond zero load is 70–80% below the emulated one at every load measured \
                 (−77% at 0.005, −72% at 0.012); its latency error stays small at light load \
                 only because the zero-load part dominates",
    },
    Entry {
        model: Model::WormholeAdaptive,
        quantity: "blocking_per_hop",
        when: &[],
        tolerance: TIME_TOLERANCE,
        source: "a different quantity: the emulator's blocking per hop counts the cycles a \
                 header waits for a VC or the switch (its 4 VCs interleave worms, so it \
                 rarely waits), the model's is its whole delay per hop beyond zero load \
                 (paper 004 Fig. 3); `compare hw/wormhole-torus-adaptive.ron --rate 0.012`: \
                 +1548%. Compare delay_per_hop instead",
    },
    Entry {
        model: Model::WormholeDor,
        quantity: "latency",
        // docs/validation.md, paper 004 Figs. 3–4 set-up tables (dimension order).
        when: &[&[
            at_most(V::SaturationShare, 0.7),
            between(V::TorusK, 4.0, 16.0),
        ]],
        tolerance: TIME_TOLERANCE,
        source: "docs/validation.md, paper 004 Figs. 3–4 set-up (dimension order, 4×4 … 16×16): \
                 within 3.4% up to 0.69 of the model's saturation rate; +5.8% (8×8 at 0.011, \
                 0.76), +10.5% (12×12 at 0.005, 0.75), +15.1% (16×16 at 0.003, 0.79), +12.0% \
                 (8×8 at 0.0125, 0.87). The model has no virtual channels: it saturates on \
                 the 8×8 preset at 0.0144 messages/node/cycle (17% of the uniform bound) \
                 where the emulator carries 0.015 at 23.4 cycles",
    },
    Entry {
        model: Model::WormholeDor,
        quantity: "delay_per_hop",
        when: &[],
        tolerance: TIME_TOLERANCE,
        source: "measured on the 8×8 preset only: −11.4% at 0.005, +13.0% at 0.01 \
                 (`routemu compare hw/wormhole-torus-dor.ron --rate R`)",
    },
    Entry {
        model: Model::WormholeDor,
        quantity: "blocking_per_hop",
        when: &[],
        tolerance: TIME_TOLERANCE,
        source: "a different quantity: the emulator's blocking per hop counts the cycles a \
                 header waits for a VC or the switch, the model's is its whole delay per hop \
                 beyond zero load; compare delay_per_hop instead",
    },
    // ---- Paper 003: deflection on the Manhattan Street network.
    Entry {
        model: Model::Deflection,
        quantity: "eta",
        // docs/validation.md, paper 003 Fig. 1 table and the worm-length table.
        when: &[
            &[at_most(V::DeflectionP, 0.04)],
            &[at_most(V::LengthPerHop, 5.5)],
        ],
        tolerance: TIME_TOLERANCE,
        source: "docs/validation.md, paper 003 Fig. 1 and worm-length tables: at L̄/δ = 100 \
                 within 8.8% up to model p = 0.040, −11.2% … −22.8% beyond; at L̄/δ ≤ 5 within \
                 8.5% wherever the model answers; at L̄/δ = 500 −26% (m = 1, p 0.057)",
    },
    Entry {
        model: Model::Deflection,
        quantity: "p_deflect",
        // docs/validation.md, paper 003 Fig. 1 table (L̄ = 5 columns).
        when: &[&[at_most(V::LengthPerHop, 5.5), at_most(V::PreemptionE, 0.3)]],
        tolerance: PROBABILITY_TOLERANCE,
        source: "docs/validation.md, paper 003 Fig. 1: at L̄/δ = 5 within 13.5% up to model E = \
                 0.3, +20% and +31% beyond (m = 2, λ 0.4, 0.42); at L̄/δ = 100 −23% … −43% \
                 everywhere",
    },
    Entry {
        model: Model::Deflection,
        quantity: "p_block",
        // docs/validation.md, paper 003 Fig. 1 table.
        when: &[
            &[at_most(V::DeflectionP, 0.03)],
            &[at_most(V::LengthPerHop, 5.5)],
        ],
        tolerance: PROBABILITY_TOLERANCE,
        source: "docs/validation.md, paper 003 Fig. 1: at L̄/δ = 100 within 10.5% up to model \
                 p = 0.03, −13.8% … −21% beyond; at L̄/δ = 5 within 9% (but +30% at B 0.002)",
    },
    Entry {
        model: Model::Deflection,
        quantity: "p_preempt",
        when: &[],
        tolerance: PROBABILITY_TOLERANCE,
        source: "docs/validation.md, paper 003 Fig. 1: E is 9–75% above the emulation at \
                 L̄/δ = 5 and more at L̄/δ = 100",
    },
    // ---- Paper 002: wormhole with the timeout reset.
    Entry {
        model: Model::Timeout,
        quantity: "latency",
        // docs/validation.md, paper 002 Figs. 8–11 tables (claim Q4).
        when: &[&[at_most(V::MaxThroughputShare, 0.48)]],
        tolerance: TIME_TOLERANCE,
        source: "docs/validation.md, paper 002 Figs. 8–9 (3×3, ℓ = 1): within 6.2% up to 0.48 \
                 of the model's maximum throughput (the preset, 0.3 flits/host/cycle: −4.2%); \
                 beyond +9.8% … +15.8% at 0.49–0.50, +22.6% … +33.9% at 0.6–0.7, +185% and \
                 more near the maximum",
    },
    Entry {
        model: Model::Timeout,
        quantity: "max_throughput",
        when: &[],
        tolerance: PROBABILITY_TOLERANCE,
        source: "docs/validation.md, paper 002 claim Q1: the model's maximum is 9.7–26.3% below \
                 the emulated one in every validated cell",
    },
    Entry {
        model: Model::Timeout,
        quantity: "tries",
        when: &[],
        tolerance: PROBABILITY_TOLERANCE,
        source: "docs/validation.md, paper 002 Fig. 8: −10% at 10% of the maximum, −22% at 25% \
                 (τ = 20: retries fail more often than first tries)",
    },
    Entry {
        model: Model::Timeout,
        quantity: "host_wait",
        when: &[],
        tolerance: TIME_TOLERANCE,
        source: "docs/models.md: +8.9% at the preset; docs/validation.md \"Successive tries of \
                 one worm\": host waits off by −15% … +120% with the retry dependence",
    },
];

/// The verdict for one quantity.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Verdict {
    /// Whether the point lies inside the range where the quantity was validated.
    pub in_range: bool,
    /// The range in words (alternatives joined by "or"); null when the quantity was never
    /// measured within tolerance.
    pub bound: Option<String>,
    /// The values of the bounded variables at this point ("the model saturates here"
    /// when it gave no prediction; empty without a bound).
    pub here: String,
    /// The tolerance and where the range comes from: the validation table, the largest
    /// error measured inside, what was measured outside.
    pub why: String,
}

/// The verdict for a whole prediction.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Range {
    /// True when every quantity with a range is inside it (and the model answered).
    pub in_range: bool,
    /// Per quantity (compare's row keys).
    pub range: BTreeMap<&'static str, Verdict>,
}

impl Range {
    /// The quantities outside their range, with a bound (the ones the overall verdict
    /// counts), for a warning line.
    pub fn outside(&self) -> Vec<&'static str> {
        self.range
            .iter()
            .filter(|(_, v)| !v.in_range && v.bound.is_some())
            .map(|(k, _)| *k)
            .collect()
    }
}

/// What the variables are evaluated from.
struct Point<'a> {
    cfg: &'a HwConfig,
    form: PathForm,
    prediction: Option<&'a Prediction>,
    saturation_rate: std::cell::OnceCell<Option<f64>>,
}

impl Point<'_> {
    fn value(&self, v: Variable) -> Option<f64> {
        let cfg = self.cfg;
        let length = || {
            crate::engine::machine::validate(cfg)
                .ok()
                .map(|m| m.workload.length)
        };
        let torus_k = match cfg.topology {
            TopologyConfig::Torus { k, .. } => Some(k as f64),
            _ => None,
        };
        match v {
            V::SaturationShare => {
                let sat = *self
                    .saturation_rate
                    .get_or_init(|| saturation_rate(cfg, self.form));
                sat.map(|s| cfg.workload.rate / s)
            }
            V::UniformBoundShare => {
                let mean = length()?.mean();
                Some(cfg.workload.rate * mean / (8.0 / torus_k?))
            }
            V::TorusK => torus_k,
            V::LengthScv => {
                let l = length()?;
                let m = l.raw_moment(1);
                Some((l.raw_moment(2) / (m * m) - 1.0).max(0.0))
            }
            V::DmaEngines => crate::engine::machine::validate(cfg)
                .ok()
                .map(|m| m.dma as f64),
            V::Occupancy => match self.prediction? {
                Prediction::Circuit(c) => Some(c.occupancy),
                _ => None,
            },
            V::Aborts => match self.prediction? {
                Prediction::Circuit(c) => Some(c.aborts),
                _ => None,
            },
            V::DeflectionP => match self.prediction? {
                Prediction::Deflection(d) => Some(d.p_deflect),
                _ => None,
            },
            V::PreemptionE => match self.prediction? {
                Prediction::Deflection(d) => Some(d.p_preempt),
                _ => None,
            },
            V::LengthPerHop => {
                let delta = (cfg.router.controller.route + cfg.links.latency)
                    .saturating_sub(1)
                    .max(1) as f64;
                Some(length()?.mean() / delta)
            }
            V::MaxThroughputShare => match self.prediction? {
                Prediction::Timeout(t) if t.max_throughput > 0.0 => {
                    Some(t.throughput / t.max_throughput)
                }
                _ => None,
            },
        }
    }
}

/// The largest `workload.rate` at which the model of `cfg` still answers (bisection to
/// 0.1%); None when it answers at 64 messages per node per cycle or not at all.
pub fn saturation_rate(cfg: &HwConfig, form: PathForm) -> Option<f64> {
    let answers = |rate: f64| {
        let mut c = cfg.clone();
        c.workload.rate = rate;
        matches!(crate::model::outcome(&c, form), Ok((_, Ok(_))))
    };
    let (mut lo, mut hi) = (0.0, cfg.workload.rate.max(1e-9));
    while answers(hi) {
        lo = hi;
        hi *= 2.0;
        if hi > crate::traffic::MAX_RATE {
            return None;
        }
    }
    while hi - lo > 1e-3 * hi {
        let mid = 0.5 * (lo + hi);
        if answers(mid) {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    (lo > 0.0).then_some(lo)
}

fn num(x: f64) -> String {
    if x != 0.0 && x.abs() < 0.01 {
        format!("{x:.3e}")
    } else {
        format!("{x:.4}")
    }
}

/// The verdict for `cfg` and its model's answer `result` (the prediction, or why the
/// model saturated) in path form `form`. Machines the table does not cover get an empty
/// range, out of range.
pub fn assess(cfg: &HwConfig, form: PathForm, result: Result<&Prediction, &str>) -> Range {
    let Some(model) = Model::of(cfg) else {
        return Range {
            in_range: false,
            range: BTreeMap::new(),
        };
    };
    let point = Point {
        cfg,
        form,
        prediction: result.ok(),
        saturation_rate: std::cell::OnceCell::new(),
    };
    let mut range = BTreeMap::new();
    let mut all = true;
    for e in TABLE.iter().filter(|e| e.model == model) {
        let tol = format!("within {:.0}%", 100.0 * e.tolerance);
        let verdict = if e.when.is_empty() {
            Verdict {
                in_range: false,
                bound: None,
                here: String::new(),
                why: format!("never measured {tol}: {}", e.source),
            }
        } else {
            let bound = e
                .when
                .iter()
                .map(|alt| {
                    alt.iter()
                        .map(Bound::describe)
                        .collect::<Vec<_>>()
                        .join(" and ")
                })
                .collect::<Vec<_>>()
                .join(", or ");
            let (inside, values) = match result {
                Err(why) => (false, format!("the model saturates ({why})")),
                Ok(_) => {
                    let mut seen: Vec<(Variable, Option<f64>)> = Vec::new();
                    let inside = e.when.iter().any(|alt| {
                        alt.iter().all(|b| {
                            let x = point.value(b.variable);
                            if !seen.iter().any(|(v, _)| *v == b.variable) {
                                seen.push((b.variable, x));
                            }
                            x.is_some_and(|x| x >= b.min && x <= b.max)
                        })
                    });
                    let values = seen
                        .iter()
                        .map(|(v, x)| {
                            let mut t =
                                format!("{} = {}", v.describe(), x.map_or("unknown".into(), num));
                            if *v == V::SaturationShare {
                                if let Some(Some(r)) = point.saturation_rate.get() {
                                    t.push_str(&format!(" (saturation at {})", num(*r)));
                                }
                            }
                            t
                        })
                        .collect::<Vec<_>>()
                        .join("; ");
                    (inside, values)
                }
            };
            all &= inside;
            Verdict {
                in_range: inside,
                bound: Some(bound),
                here: values,
                why: format!("validated {tol} inside: {}", e.source),
            }
        };
        range.insert(e.quantity, verdict);
    }
    Range {
        in_range: all && result.is_ok(),
        range,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_model_has_a_bounded_quantity_and_every_quantity_is_a_compare_row() {
        for m in [
            Model::HoldHypercube,
            Model::HoldTorus,
            Model::DropHypercube,
            Model::DropTorus,
            Model::AdaptiveHypercube,
            Model::WormholeAdaptive,
            Model::WormholeDor,
            Model::Deflection,
            Model::Timeout,
        ] {
            assert!(
                TABLE.iter().any(|e| e.model == m && !e.when.is_empty()),
                "{m:?}"
            );
        }
        for e in TABLE {
            assert!(
                crate::model::compare::KEYS.contains(&e.quantity),
                "{}",
                e.quantity
            );
            for b in e.when.iter().flat_map(|a| a.iter()) {
                assert!(b.min <= b.max, "{e:?}");
            }
        }
    }

    #[test]
    fn a_saturated_model_is_out_of_range_for_every_quantity() {
        let cfg = crate::config::load::preset("wormhole-torus-dor.ron");
        let r = assess(&cfg, PathForm::Weighted, Err("channels saturated"));
        assert!(!r.in_range);
        assert!(r.range.values().all(|v| !v.in_range));
        assert!(r.range["latency"].here.contains("saturates"));
    }

    #[test]
    fn the_dimension_order_models_saturation_rate_is_where_it_stops_answering() {
        let cfg = crate::config::load::preset("wormhole-torus-dor.ron");
        let s = saturation_rate(&cfg, PathForm::Weighted).unwrap();
        let at = |rate: f64| {
            let mut c = cfg.clone();
            c.workload.rate = rate;
            crate::model::outcome(&c, PathForm::Weighted)
                .unwrap()
                .1
                .is_ok()
        };
        assert!(at(0.999 * s) && !at(1.002 * s), "{s}");
    }
}
