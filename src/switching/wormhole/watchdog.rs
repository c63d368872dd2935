//! Deadlock description. When the watchdog fires, every occupied input VC is asked what
//! it waits for: an output VC (held by the message in the downstream VC), a credit (the
//! downstream VC is full), or flits (the upstream VC feeding it is stuck). The resulting
//! wait-for graph is searched for a cycle, which is the deadlock; if there is none (the
//! network is only very slow), the longest waits are listed instead.

use crate::foundation::types::{Cycle, NodeId, PortId};
use crate::router::buffers::VcState;
use crate::routing::selection::BitIter;
use crate::switching::wormhole::WormholeNet;
use std::collections::HashMap;
use std::fmt::Write;

type Vc = (usize, usize, usize);

/// Explains what the stuck network's channels wait on.
pub fn describe(net: &WormholeNet, t: Cycle) -> String {
    let lay = net.layout;
    let topo = &net.topology;
    let local = lay.local();
    let label = |(n, p, v): Vc| {
        let i = lay.vc_idx(n, p, v);
        let (s, m) = (&net.inputs.vc[i], net.inputs.msg.get(net.inputs.cur(i)));
        format!(
            "node {n} input {} vc {v} (message {} to node {}, {} flits buffered)",
            topo.port_name(PortId(p as u8)),
            m.hdr.id,
            m.hdr.dst,
            s.buffered
        )
    };
    // The VC downstream of output (n, op, ov).
    let downstream = |n: usize, op: usize, ov: usize| -> Option<Vc> {
        let (n, op) = (NodeId(n as u32), PortId(op as u8));
        topo.neighbor(n, op)
            .map(|w| (w.idx(), topo.arrival_port(n, op).idx(), ov))
    };
    let mut waits: HashMap<Vc, Vec<(Vc, &'static str)>> = HashMap::new();
    let mut order = Vec::new();
    for n in 0..net.nodes() {
        for p in 0..lay.all_ports() {
            for v in 0..lay.vcs_of(p) {
                let s = &net.inputs.vc[lay.vc_idx(n, p, v)];
                let me = (n, p, v);
                let mut edges = Vec::new();
                match s.state {
                    VcState::WaitVc => {
                        let r = net
                            .inputs
                            .msg
                            .get(net.inputs.cur(lay.vc_idx(n, p, v)))
                            .route;
                        for op in BitIter(r.adaptive_ports | 1 << r.escape_port.idx()) {
                            let mut vcs = 0;
                            if r.adaptive_ports >> op & 1 == 1 {
                                vcs |= r.adaptive_vcs;
                            }
                            if op == r.escape_port.idx() {
                                vcs |= r.escape_vcs;
                            }
                            for ov in BitIter(vcs) {
                                if op == local {
                                    // An ejection engine, held by whichever VC here won it.
                                    for (q, w) in net.holders(n, local, ov) {
                                        edges.push(((n, q, w), "an ejection engine held by"));
                                    }
                                } else if let Some(d) = downstream(n, op, ov) {
                                    edges.push((d, "an output VC held by"));
                                }
                            }
                        }
                    }
                    VcState::Active if s.buffered > 0 && s.out_port as usize != local => {
                        let c = net.outputs.credits
                            [lay.vc_idx(n, s.out_port as usize, s.out_vc as usize)];
                        if c == 0 {
                            if let Some(d) = downstream(n, s.out_port as usize, s.out_vc as usize) {
                                edges.push((d, "a credit from"));
                            }
                        }
                    }
                    VcState::Active if s.buffered == 0 && p != local => {
                        let (me_n, me_p) = (NodeId(n as u32), PortId(p as u8));
                        if let Some(u) = topo.upstream(me_n, me_p) {
                            let up = topo.upstream_port(me_n, me_p).idx();
                            for (q, w) in net.holders(u.idx(), up, v) {
                                edges.push(((u.idx(), q, w), "flits from"));
                            }
                        }
                    }
                    _ => {}
                }
                if !edges.is_empty() {
                    order.push(me);
                    waits.insert(me, edges);
                }
            }
        }
    }
    let mut out = String::new();
    let _ = writeln!(
        out,
        "no flit moved for {} cycles (cycle {}); {} flits in the network, {} channels waiting",
        t - net.last_move,
        t,
        net.flits_live,
        order.len()
    );
    if let Some(cycle) = find_cycle(&order, &waits) {
        let _ = writeln!(out, "waiting cycle of {} channels:", cycle.len() - 1);
        for w in cycle.windows(2) {
            let why = waits[&w[0]]
                .iter()
                .find(|(d, _)| *d == w[1])
                .map(|e| e.1)
                .unwrap_or("");
            let _ = writeln!(out, "  {} waits for {}", label(w[0]), why);
        }
        let _ = writeln!(
            out,
            "  {} (back to the start)",
            label(cycle[cycle.len() - 1])
        );
    } else {
        let _ = writeln!(out, "no waiting cycle found; first waits:");
        for me in order.iter().take(20) {
            for (d, why) in &waits[me] {
                let _ = writeln!(out, "  {} waits for {} {}", label(*me), why, label(*d));
            }
        }
    }
    out
}

/// A cycle in the wait-for graph, as a path whose last element equals its first.
fn find_cycle(order: &[Vc], waits: &HashMap<Vc, Vec<(Vc, &'static str)>>) -> Option<Vec<Vc>> {
    // 0 = unvisited, 1 = on the current path, 2 = done.
    let mut color: HashMap<Vc, u8> = HashMap::new();
    for &root in order {
        if color.get(&root).copied().unwrap_or(0) != 0 {
            continue;
        }
        let mut path: Vec<(Vc, usize)> = vec![(root, 0)];
        color.insert(root, 1);
        while let Some(&mut (v, ref mut i)) = path.last_mut() {
            let edges = waits.get(&v).map(|e| e.as_slice()).unwrap_or(&[]);
            if *i < edges.len() {
                let w = edges[*i].0;
                *i += 1;
                match color.get(&w).copied().unwrap_or(0) {
                    0 => {
                        color.insert(w, 1);
                        path.push((w, 0));
                    }
                    1 => {
                        let start = path.iter().position(|(x, _)| *x == w).expect("on path");
                        let mut cyc: Vec<Vc> = path[start..].iter().map(|(x, _)| *x).collect();
                        cyc.push(w);
                        return Some(cyc);
                    }
                    _ => {}
                }
            } else {
                color.insert(v, 2);
                path.pop();
            }
        }
    }
    None
}
