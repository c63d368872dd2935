//! The per-message log of a synthetic run (`routemu run --message-log FILE`): one CSV
//! line per delivered message of every replication, warm-up and drain included, with
//! its times, hops, blocking and path. The columns `id, src, dst, flits, created,
//! injected, delivered, latency` mean what `routemu replay --messages` means by them.
//!
//! This module only joins and formats what the run recorded (`MsgStats::deliveries`
//! and `MsgStats::hops`, on when `experiment.observe.message_log` is); the switching
//! modes decide what a hop is (see docs/measurements.md).

use super::observe::HopRec;
use super::Delivery;
use crate::config::{LatencyDef, LatencyFrom, LatencyTo};
use crate::topology::Topology;
use crate::types::NodeId;
use std::fmt::Write;

/// The CSV header line (without its newline).
pub const HEADER: &str = "replication,id,seq,src,dst,flits,created,injected,delivered,latency,\
source_queue,network,hops,distance,blocking,eject_wait,ctrl_wait,measured,path";

/// What one replication recorded for the log.
#[derive(Clone, Debug, Default)]
pub struct RepLog {
    /// Every delivery, in any order.
    pub deliveries: Vec<Delivery>,
    /// Every node a header visited, in any order.
    pub hops: Vec<HopRec>,
}

/// How the log computes a message's latency: the report's definition.
#[derive(Clone, Copy, Debug)]
pub struct LatencyRule {
    /// The definition.
    pub def: LatencyDef,
    /// `router.ni.ejection_latency` (subtracted under `to: TailArrived`).
    pub ejection: u64,
}

impl LatencyRule {
    /// The latency of a message created at `created`, injected at `injected` and
    /// absorbed at `delivered`.
    pub fn latency(&self, created: u64, injected: u64, delivered: u64) -> u64 {
        let from = match self.def.from {
            LatencyFrom::Creation => created,
            LatencyFrom::HeadInjected => injected,
        };
        let to = match self.def.to {
            LatencyTo::TailDelivered => delivered,
            LatencyTo::TailArrived => delivered.saturating_sub(self.ejection),
        };
        to.saturating_sub(from)
    }
}

/// Appends replication `rep`'s lines to `out`, ordered by delivery cycle, then id (so
/// the text does not depend on the thread count). A path lists the nodes its header
/// visited, `>` between nodes, `|` between attempts (deflection: segments; every
/// segment starts at the source).
pub fn write_rep(out: &mut String, rep: u32, log: &RepLog, topo: &Topology, rule: LatencyRule) {
    let mut hops = log.hops.clone();
    hops.sort_unstable_by_key(|h| (h.id.0, h.attempt, h.at, h.node));
    let mut ds = log.deliveries.clone();
    ds.sort_unstable_by_key(|d| d.header.id.0);
    // Merge-join the deliveries with their hops (both by id).
    let mut paths: Vec<String> = Vec::with_capacity(ds.len());
    let mut j = 0;
    for d in &ds {
        let id = d.header.id.0;
        while j < hops.len() && hops[j].id.0 < id {
            j += 1;
        }
        let mut p = String::new();
        let mut attempt = None;
        while j < hops.len() && hops[j].id.0 == id {
            let h = hops[j];
            match attempt {
                None => {}
                Some(a) if a == h.attempt => p.push('>'),
                Some(_) => p.push('|'),
            }
            attempt = Some(h.attempt);
            let _ = write!(p, "{}", h.node);
            j += 1;
        }
        paths.push(p);
    }
    let mut order: Vec<usize> = (0..ds.len()).collect();
    order.sort_unstable_by_key(|&i| (ds[i].absorbed, ds[i].header.id.0));
    for i in order {
        let d = &ds[i];
        let h = &d.header;
        let src = h.id.src();
        let _ = writeln!(
            out,
            "{rep},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}",
            h.id.0,
            h.id.seq(),
            src.0,
            h.dst.0,
            h.len,
            h.created,
            h.injected,
            d.absorbed,
            rule.latency(h.created, h.injected, d.absorbed),
            h.injected - h.created,
            d.absorbed - h.injected,
            h.hops,
            topo.distance(src, NodeId(h.dst.0)),
            h.blocking,
            h.eject_wait,
            h.ctrl_wait,
            h.measured as u8,
            paths[i]
        );
    }
}

/// The whole log: the header and every replication's lines.
pub fn render(reps: &[RepLog], topo: &Topology, rule: LatencyRule) -> String {
    let n: usize = reps.iter().map(|r| r.deliveries.len()).sum();
    let mut s = String::with_capacity(64 + n * 96);
    s.push_str(HEADER);
    s.push('\n');
    for (i, r) in reps.iter().enumerate() {
        write_rep(&mut s, i as u32, r, topo, rule);
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::router::buffers::MsgHeader;
    use crate::types::MsgId;

    #[test]
    fn a_line_per_delivery_with_its_path_in_order() {
        let topo =
            Topology::from_config(&crate::config::TopologyConfig::Hypercube { dim: 2 }).unwrap();
        let id = MsgId::new(NodeId(0), 5);
        let header = MsgHeader {
            id,
            dst: NodeId(3),
            len: 4,
            hops: 2,
            created: 10,
            injected: 12,
            ..MsgHeader::default()
        };
        let log = RepLog {
            deliveries: vec![Delivery {
                header,
                absorbed: 20,
            }],
            hops: [(3, 15, 3), (0, 12, 0), (1, 14, 1)]
                .map(|(n, at, _)| HopRec {
                    id,
                    attempt: 0,
                    at,
                    node: n,
                })
                .to_vec(),
        };
        let rule = LatencyRule {
            def: LatencyDef::default(),
            ejection: 1,
        };
        let text = render(&[log], &topo, rule);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 2);
        assert_eq!(
            lines[1],
            format!("0,{},5,0,3,4,10,12,20,10,2,8,2,2,0,0,0,0,0>1>3", id.0)
        );
    }
}
