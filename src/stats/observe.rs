//! Measurements in space and time (`experiment.observe`, docs/measurements.md): how the
//! replications' observations (`engine::probe::observe`) are combined into the report's
//! `links`, `link_totals`, `routers` and `series` arrays. Files (CSV, SVG, the latency
//! distribution) are written elsewhere (`stats::msglog`, `stats::latency_dist`,
//! `presentation::heatmap`).

use crate::engine::probe::observe::{IntervalCounts, RepObs, SeriesAcc};
use crate::foundation::types::{Cycle, NodeId, PortId};
use crate::topology::{LinkKind, Topology};
use serde::Serialize;
use std::fmt::Write;

/// Most links a heat map draws (a bigger network's SVG would be too large to read):
/// a report keeps every link's row only up to it.
pub const MAX_DRAWN_LINKS: usize = 65_536;

/// One link in the report's `links` array. Counts are summed over replications;
/// `utilization` is the mean over replications of each one's busy / capacity, so the
/// mean over every link equals the report's mean link utilisation.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct LinkRow {
    /// The node the link leaves.
    pub from: u32,
    /// Its output port there.
    pub port: u8,
    /// The node it leads to.
    pub to: u32,
    /// What kind of link it is (`local`, `global`, `terminal`, `dim0`, …; absent on the
    /// papers' networks, whose links have no kinds: `topology::link_kind`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kind: Option<LinkKind>,
    /// Fraction of the link's capacity used in the window (mean over replications).
    pub utilization: f64,
    /// 95% half-width of `utilization` over replications (null with one).
    pub utilization_ci95: Option<f64>,
    /// Busy units (see `link_totals.busy_unit`), summed over replications.
    pub busy: u64,
    /// Flits carried, summed over replications.
    pub flits: u64,
    /// Headers (circuit: set-up requests) that asked for the link.
    pub headers: u64,
    /// Header blocking at the link (see `link_totals.blocking_unit`).
    pub blocking: u64,
    /// `blocking / headers`.
    pub blocking_per_header: Option<f64>,
}

/// Totals over every link (also those `links` leaves out), from the switching mode's
/// own link accounting: the numbers the per-link rows add up to.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct LinkTotals {
    /// Links measured.
    pub count: usize,
    /// Links listed in `links`.
    pub listed: usize,
    /// What a link's `busy` counts: "flits" (wormhole), "cycles" (held by a circuit or a
    /// worm), "lane-cycles" (deflection).
    pub busy_unit: &'static str,
    /// What `blocking` counts: "cycles" (wormhole, timeout: header waits), "conflicts"
    /// (circuit: set-up requests that found the link held), "refusals" (deflection:
    /// headers that wanted the link and found no lane).
    pub blocking_unit: &'static str,
    /// Busy units one link can take in a window (mean over replications).
    pub capacity: f64,
    /// Σ busy over every link, summed over replications.
    pub busy: u64,
    /// Σ flits over every link, summed over replications.
    pub flits: u64,
    /// Mean link utilisation (mean over replications).
    pub utilization_mean: f64,
    /// Busiest link's utilisation (largest over replications).
    pub utilization_max: f64,
    /// The same over each kind of link (dragonfly: local, global, terminal; flattened
    /// butterfly: each dimension, terminal), in that order; empty (and absent from the
    /// JSON) on networks whose links have no kinds.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub by_kind: Vec<KindTotals>,
}

/// Totals over the links of one kind (`link_totals.by_kind`): what a dragonfly routing
/// study looks at first — whether the global links are the bottleneck, evenly or on a
/// few hot links.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct KindTotals {
    /// The kind.
    pub kind: LinkKind,
    /// Links of this kind measured.
    pub count: usize,
    /// Mean utilisation over the links of this kind (mean over replications).
    pub utilization_mean: f64,
    /// Busiest link of this kind's utilisation (largest over replications, as
    /// `utilization_max`).
    pub utilization_max: f64,
    /// Σ busy over these links, summed over replications.
    pub busy: u64,
    /// Σ flits over these links, summed over replications.
    pub flits: u64,
}

impl LinkTotals {
    /// The summary's line of per-kind utilisation (None without kinds), e.g.
    /// `link utilisation by kind: local mean 0.117 max 0.176 (108) | global …`.
    pub fn by_kind_line(&self) -> Option<String> {
        if self.by_kind.is_empty() {
            return None;
        }
        let parts: Vec<String> = self
            .by_kind
            .iter()
            .map(|k| {
                format!(
                    "{} mean {:.3} max {:.3} ({})",
                    k.kind, k.utilization_mean, k.utilization_max, k.count
                )
            })
            .collect();
        Some(format!("link utilisation by kind: {}", parts.join(" | ")))
    }
}

/// The kind of every link of a replication's observations (`links` order) on `topo`.
pub fn link_kinds(rep: &RepObs, topo: &Topology) -> Vec<Option<LinkKind>> {
    rep.links
        .iter()
        .map(|l| topo.link_kind(NodeId(l.from), PortId(l.port)))
        .collect()
}

/// The per-kind totals over every link of every replication (each with its `links` in
/// the same order, of kinds `kinds`); empty when no link has a kind.
pub fn kind_totals(reps: &[&RepObs], kinds: &[Option<LinkKind>]) -> Vec<KindTotals> {
    let mut present: Vec<LinkKind> = kinds.iter().flatten().copied().collect();
    present.sort_unstable();
    present.dedup();
    let k = reps.len().max(1) as f64;
    present
        .into_iter()
        .map(|kind| {
            let mine: Vec<usize> = (0..kinds.len())
                .filter(|&i| kinds[i] == Some(kind))
                .collect();
            let mut t = KindTotals {
                kind,
                count: mine.len(),
                utilization_mean: 0.0,
                utilization_max: 0.0,
                busy: 0,
                flits: 0,
            };
            for o in reps {
                let cap = o.capacity.max(1.0);
                let mut sum = 0.0;
                for &i in &mine {
                    let l = &o.links[i];
                    let u = l.busy as f64 / cap;
                    sum += u;
                    t.utilization_max = t.utilization_max.max(u);
                    t.busy += l.busy;
                    t.flits += l.flits;
                }
                t.utilization_mean += sum / mine.len().max(1) as f64 / k;
            }
            t
        })
        .collect()
}

/// One router in the report's `routers` array: means over replications of each one's
/// time averages.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct RouterRow {
    /// Node.
    pub node: u32,
    /// Routing-controller requests per cycle (null: the mode has no controller).
    pub ctrl_arrival_rate: Option<f64>,
    /// Busy fraction of its controller's servers.
    pub ctrl_utilization: Option<f64>,
    /// Mean wait of a request in its controller's queue (cycles).
    pub ctrl_wait_mean: Option<f64>,
    /// Mean flits buffered in its network input ports (null: no buffers).
    pub buffered: Option<f64>,
    /// Mean VCs (deflection: input lanes) holding a message over its input ports.
    pub vcs_busy: Option<f64>,
    /// `buffered` by input port (port order; empty without buffers).
    pub buffered_by_port: Vec<f64>,
    /// `vcs_busy` by input port.
    pub vcs_busy_by_port: Vec<f64>,
}

/// One interval in the report's `series` array. Rates are over the replications that
/// reached the interval (`replications`), per node that creates and receives messages.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct SeriesRow {
    /// First cycle.
    pub start: Cycle,
    /// First cycle after it.
    pub end: Cycle,
    /// "warmup", "window" (the interval starts inside the measurement window) or
    /// "drain".
    pub phase: &'static str,
    /// Replications that reached this interval.
    pub replications: u32,
    /// Flits created per node per cycle.
    pub offered: f64,
    /// Flits absorbed per node per cycle.
    pub accepted: f64,
    /// Messages delivered (tail absorbed) in it, measured or not, summed over
    /// replications.
    pub delivered: u64,
    /// Messages created in it, summed over replications.
    pub created: u64,
    /// Flits absorbed in it, summed over replications.
    pub flits: u64,
    /// Mean latency of the messages delivered in it, in the report's latency definition.
    pub latency_mean: Option<f64>,
    /// Messages waiting in the sources' memory at its end (mean over replications).
    pub backlog: f64,
}

/// The rows kept when at most `max` may be listed: the `max` busiest (ties: lower
/// index), in their original order.
pub fn busiest(util: &[f64], max: Option<u32>) -> Vec<usize> {
    let n = util.len();
    match max {
        Some(m) if (m as usize) < n => {
            let mut idx: Vec<usize> = (0..n).collect();
            idx.sort_by(|&a, &b| util[b].total_cmp(&util[a]).then(a.cmp(&b)));
            idx.truncate(m as usize);
            idx.sort_unstable();
            idx
        }
        _ => (0..n).collect(),
    }
}

/// Each link's utilisation, the mean over replications of busy / capacity (what the
/// `links` array is ranked by), from every replication's observations (each with its
/// `links` in the same order).
pub fn link_utilization(reps: &[&RepObs]) -> Vec<f64> {
    let Some(first) = reps.first() else {
        return Vec::new();
    };
    let k = reps.len() as f64;
    (0..first.links.len())
        .map(|i| {
            reps.iter()
                .map(|o| o.links[i].busy as f64 / o.capacity.max(1.0))
                .sum::<f64>()
                / k
        })
        .collect()
}

/// The rows of links `which` (indices into every replication's `links`, whose kinds are
/// `kinds`, or empty: no kinds).
pub fn link_rows(reps: &[&RepObs], which: &[usize], kinds: &[Option<LinkKind>]) -> Vec<LinkRow> {
    let Some(first) = reps.first() else {
        return Vec::new();
    };
    which
        .iter()
        .map(|&i| {
            let l = &first.links[i];
            let mut row = LinkRow {
                from: l.from,
                port: l.port,
                to: l.to,
                kind: kinds.get(i).copied().flatten(),
                ..LinkRow::default()
            };
            let mut util = Vec::with_capacity(reps.len());
            for o in reps {
                let x = &o.links[i];
                row.busy += x.busy;
                row.flits += x.flits;
                row.headers += x.headers;
                row.blocking += x.blocking;
                util.push(x.busy as f64 / o.capacity.max(1.0));
            }
            let (m, ci) = crate::foundation::ci::mean_ci(&util);
            row.utilization = m;
            row.utilization_ci95 = ci.filter(|x| x.is_finite());
            row.blocking_per_header =
                (row.headers > 0).then(|| row.blocking as f64 / row.headers as f64);
            row
        })
        .collect()
}

/// The totals over every link, from every replication's observations and its link
/// utilisation (mean, max) as the report computed it; `listed` rows are in `links`;
/// `kinds` are the links' kinds (empty: none), totalled in `by_kind`.
pub fn link_totals(
    reps: &[(&RepObs, (f64, f64))],
    listed: usize,
    kinds: &[Option<LinkKind>],
) -> LinkTotals {
    let Some((first, _)) = reps.first() else {
        return LinkTotals::default();
    };
    let k = reps.len() as f64;
    LinkTotals {
        count: first.link_count,
        listed,
        busy_unit: first.units.busy,
        blocking_unit: first.units.blocking,
        capacity: reps.iter().map(|(o, _)| o.capacity).sum::<f64>() / k,
        busy: reps.iter().map(|(o, _)| o.busy_total).sum(),
        flits: reps
            .iter()
            .flat_map(|(o, _)| o.links.iter().map(|l| l.flits))
            .sum(),
        utilization_mean: reps.iter().map(|(_, u)| u.0).sum::<f64>() / k,
        utilization_max: reps.iter().map(|(_, u)| u.1).fold(0.0, f64::max),
        by_kind: if kinds.len() == first.links.len() {
            let only: Vec<&RepObs> = reps.iter().map(|(o, _)| *o).collect();
            kind_totals(&only, kinds)
        } else {
            Vec::new()
        },
    }
}

/// What the `routers` array is ranked by: each router's controller utilisation, or
/// without controllers its buffered flits, or its busy VCs (lanes), summed over
/// replications.
pub fn router_load(reps: &[&RepObs], nodes: usize) -> Vec<f64> {
    let mut load = vec![0.0; nodes];
    let has_ctrl = reps.iter().all(|o| o.ctrl.len() == nodes);
    for o in reps {
        let w = o.window.max(1) as f64;
        if has_ctrl {
            for (x, st) in load.iter_mut().zip(&o.ctrl) {
                // At most fully busy, whatever ran on past the window's end.
                *x += (st.service_sum as f64 / (o.servers.max(1) as f64 * w)).min(1.0);
            }
        } else {
            for p in &o.ports {
                load[p.node as usize] += p.flit_cycles.unwrap_or(p.vc_cycles) as f64 / w;
            }
        }
    }
    load
}

/// The rows of routers `which` (node numbers, increasing), from every replication's
/// observations.
pub fn router_rows(reps: &[&RepObs], nodes: usize, which: &[usize]) -> Vec<RouterRow> {
    let k = reps.len().max(1) as f64;
    // Row of each node listed (usize::MAX: not listed).
    let mut slot = vec![usize::MAX; nodes];
    for (r, &n) in which.iter().enumerate() {
        slot[n] = r;
    }
    let mut rows: Vec<RouterRow> = which
        .iter()
        .map(|&node| RouterRow {
            node: node as u32,
            ..RouterRow::default()
        })
        .collect();
    let has_ctrl = reps.iter().all(|o| o.ctrl.len() == nodes);
    let mut buffers = false;
    for o in reps {
        let w = o.window.max(1) as f64;
        if has_ctrl {
            for (r, &n) in which.iter().enumerate() {
                let st = &o.ctrl[n];
                let row = &mut rows[r];
                *row.ctrl_arrival_rate.get_or_insert(0.0) += st.arrivals as f64 / w / k;
                *row.ctrl_utilization.get_or_insert(0.0) +=
                    st.service_sum as f64 / (o.servers.max(1) as f64 * w) / k;
            }
        }
        for p in &o.ports {
            buffers |= p.flit_cycles.is_some();
            let r = slot[p.node as usize];
            if r == usize::MAX {
                continue;
            }
            let row = &mut rows[r];
            let j = p.port as usize;
            if row.buffered_by_port.len() <= j {
                row.buffered_by_port.resize(j + 1, 0.0);
                row.vcs_busy_by_port.resize(j + 1, 0.0);
            }
            row.buffered_by_port[j] += p.flit_cycles.unwrap_or(0) as f64 / w / k;
            row.vcs_busy_by_port[j] += p.vc_cycles as f64 / w / k;
        }
    }
    if has_ctrl {
        // The wait is a mean over requests: per replication, then averaged over those
        // with requests, like the report's controller wait.
        for (r, &n) in which.iter().enumerate() {
            let waits: Vec<f64> = reps
                .iter()
                .filter(|o| o.ctrl[n].arrivals > 0)
                .map(|o| o.ctrl[n].wait_sum as f64 / o.ctrl[n].arrivals as f64)
                .collect();
            rows[r].ctrl_wait_mean =
                (!waits.is_empty()).then(|| waits.iter().sum::<f64>() / waits.len() as f64);
        }
    }
    for row in &mut rows {
        if !row.vcs_busy_by_port.is_empty() {
            row.vcs_busy = Some(row.vcs_busy_by_port.iter().sum());
        }
        if buffers {
            row.buffered = Some(row.buffered_by_port.iter().sum());
        } else {
            row.buffered_by_port.clear();
        }
    }
    rows
}

/// The report's `series` from every replication's series (each closed at its end,
/// `cycles`) and window `[start, end)`: `endpoints` nodes create and receive; `shift`
/// turns a creation-to-absorbed latency into the report's definition (`from_injection`:
/// measured from the head's injection instead; minus the constant `shift`).
pub fn series_rows(
    reps: &[(&SeriesAcc, Cycle)],
    window: (Cycle, Cycle),
    endpoints: usize,
    from_injection: bool,
    shift: u64,
) -> Vec<SeriesRow> {
    let Some((first, _)) = reps.first() else {
        return Vec::new();
    };
    let iv = first.intervals;
    let len = reps.iter().map(|(s, _)| s.rows.len()).max().unwrap_or(0);
    (0..len)
        .map(|i| {
            let (start, nominal_end) = (iv.start(i), iv.start(i + 1));
            let mut c = IntervalCounts::default();
            let mut covering = 0u32;
            // Node-cycles the replications covering the interval ran in it: the last
            // interval a run reaches is cut at its end, and is divided by what it holds.
            let mut cycles = 0u64;
            let mut end = start;
            for &(s, ran_to) in reps {
                if let Some(r) = s.rows.get(i) {
                    c.add(r);
                    covering += 1;
                    let e = if start < ran_to {
                        nominal_end.min(ran_to)
                    } else {
                        // Flits absorbed after the last cycle (an ejection channel's):
                        // an interval of its nominal length, at most the width.
                        start.saturating_add((nominal_end - start).min(iv.width))
                    };
                    cycles = cycles.saturating_add(e - start);
                    end = end.max(e);
                }
            }
            let per = endpoints.max(1) as f64 * cycles.max(1) as f64;
            let lat = if from_injection {
                c.network_sum
            } else {
                c.latency_sum
            };
            SeriesRow {
                start,
                end,
                phase: if start < window.0 {
                    "warmup"
                } else if start < window.1 {
                    "window"
                } else {
                    "drain"
                },
                replications: covering,
                offered: c.created_flits as f64 / per,
                accepted: c.accepted_flits as f64 / per,
                delivered: c.delivered,
                created: c.created,
                flits: c.accepted_flits,
                latency_mean: (c.delivered > 0)
                    .then(|| lat as f64 / c.delivered as f64 - shift as f64),
                backlog: c.backlog as f64 / covering.max(1) as f64,
            }
        })
        .collect()
}

/// The time series as CSV, the JSON's `series` fields as columns.
pub fn series_csv(rows: &[SeriesRow]) -> String {
    let mut s = String::from(
        "start,end,phase,replications,offered,accepted,created,delivered,flits,latency_mean,backlog\n",
    );
    for r in rows {
        let _ = writeln!(
            s,
            "{},{},{},{},{},{},{},{},{},{},{}",
            r.start,
            r.end,
            r.phase,
            r.replications,
            r.offered,
            r.accepted,
            r.created,
            r.delivered,
            r.flits,
            r.latency_mean.map_or(String::new(), |x| x.to_string()),
            r.backlog
        );
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_last_interval_is_divided_by_the_cycles_the_run_covered() {
        use crate::engine::probe::observe::Intervals;
        // Intervals of 100 cycles from cycle 0; the run ends at cycle 150.
        let mut s = SeriesAcc::new(Intervals {
            width: 100,
            anchor: 0,
        });
        s.accepted(10, 200);
        s.accepted(120, 100);
        s.close(150, 0);
        let rows = series_rows(&[(&s, 150)], (0, 150), 2, false, 0);
        assert_eq!(rows.len(), 2);
        assert_eq!((rows[0].start, rows[0].end), (0, 100));
        assert_eq!(rows[0].accepted, 200.0 / (2.0 * 100.0));
        // 100 flits in the 50 cycles of [100, 150) the run covered, not in 100.
        assert_eq!((rows[1].start, rows[1].end), (100, 150));
        assert_eq!(rows[1].accepted, 100.0 / (2.0 * 50.0));
    }

    #[test]
    fn kind_totals_are_the_mean_and_largest_utilisation_of_each_kinds_links() {
        use crate::engine::probe::observe::LinkObs;
        let rep = |busy: [u64; 3]| RepObs {
            links: busy
                .iter()
                .enumerate()
                .map(|(i, &b)| LinkObs {
                    from: i as u32,
                    busy: b,
                    flits: b,
                    ..LinkObs::default()
                })
                .collect(),
            capacity: 100.0,
            ..RepObs::default()
        };
        let (a, b) = (rep([10, 90, 40]), rep([30, 50, 0]));
        let kinds = [
            Some(LinkKind::Global),
            Some(LinkKind::Local),
            Some(LinkKind::Global),
        ];
        let t = kind_totals(&[&a, &b], &kinds);
        assert_eq!(t.len(), 2);
        // Listed in the kinds' order, local first.
        assert_eq!((t[0].kind, t[0].count), (LinkKind::Local, 1));
        assert!((t[0].utilization_mean - 0.7).abs() < 1e-12);
        assert_eq!(t[0].utilization_max, 0.9);
        // Global: replication means 0.25 and 0.15; the busiest link of either 0.4.
        assert_eq!((t[1].kind, t[1].count), (LinkKind::Global, 2));
        assert!((t[1].utilization_mean - 0.2).abs() < 1e-12);
        assert_eq!(t[1].utilization_max, 0.4);
        assert_eq!(t[1].flits, 10 + 40 + 30);
        // The kinds' means weighted by their counts are the mean over every link.
        let all = [0.1, 0.9, 0.4, 0.3, 0.5, 0.0].iter().sum::<f64>() / 6.0;
        let weighted = t
            .iter()
            .map(|k| k.utilization_mean * k.count as f64)
            .sum::<f64>()
            / 3.0;
        assert!((weighted - all).abs() < 1e-12);
        assert!(kind_totals(&[&a], &[None, None, None]).is_empty());
    }

    #[test]
    fn the_busiest_rows_are_kept_in_order() {
        assert_eq!(busiest(&[0.1, 0.5, 0.5, 0.2], Some(2)), vec![1, 2]);
        assert_eq!(busiest(&[0.3, 0.1, 0.2], Some(2)), vec![0, 2]);
        assert_eq!(busiest(&[0.3, 0.1], None), vec![0, 1]);
    }
}
