//! What kind of link a directed link is — local, global or terminal on a dragonfly, the
//! dimension it runs along on a flattened butterfly, terminal under concentration — the
//! classification the per-link measurements (`stats::observe`) aggregate by and the heat
//! map (`presentation::heatmap`) draws by. Owns the classification only; the numbering it
//! reads is `dragonfly`'s, `flatfly`'s and `concentration`'s, and it changes none.
//!
//! The papers' networks (hypercube, torus, mesh, Manhattan Street, host/switch) have no
//! kinds: their link measurements keep exactly the columns they had. Under concentration a
//! torus's or a mesh's router-to-router links are `network`, its terminal links
//! `terminal`.

use crate::foundation::types::{NodeId, PortId};
use crate::topology::Topology;

/// The kind of a directed link. The order (local, global, dimensions, network, terminal)
/// is the order the report lists its per-kind aggregates in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum LinkKind {
    /// Dragonfly: between two routers of one group.
    Local,
    /// Dragonfly: between two groups.
    Global,
    /// Flattened butterfly: between two routers differing in this dimension.
    Dimension(u8),
    /// A router-to-router link of a concentrated network without kinds of its own
    /// (torus, mesh).
    Network,
    /// Between a router and one of its terminal nodes (either direction).
    Terminal,
}

impl LinkKind {
    /// The kind's name in the report and the heat map: `local`, `global`, `dim0`, `dim1`,
    /// …, `network`, `terminal`.
    pub fn name(self) -> String {
        match self {
            LinkKind::Local => "local".into(),
            LinkKind::Global => "global".into(),
            LinkKind::Dimension(d) => format!("dim{d}"),
            LinkKind::Network => "network".into(),
            LinkKind::Terminal => "terminal".into(),
        }
    }
}

impl std::fmt::Display for LinkKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.name())
    }
}

impl serde::Serialize for LinkKind {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.serialize_str(&self.name())
    }
}

impl Topology {
    /// The kind of the link leaving `node` on output `port` (None: a network without
    /// link kinds, or a port that does not exist).
    pub fn link_kind(&self, node: NodeId, port: PortId) -> Option<LinkKind> {
        let p = port.0 as u32;
        match self {
            Topology::Dragonfly(d) => (p < d.degree() as u32).then(|| match d.is_global(p) {
                true => LinkKind::Global,
                false => LinkKind::Local,
            }),
            Topology::FlatFly(f) => {
                (p < f.degree() as u32).then(|| LinkKind::Dimension(f.port_dim(p).0 as u8))
            }
            Topology::Concentrated(c) => {
                c.neighbor(node.0, p)?;
                if node.0 >= c.routers || c.is_terminal_port(p) {
                    Some(LinkKind::Terminal)
                } else {
                    Some(c.net.link_kind(node, port).unwrap_or(LinkKind::Network))
                }
            }
            Topology::Hypercube(_)
            | Topology::Torus(_)
            | Topology::Mesh(_)
            | Topology::ManhattanStreet(_)
            | Topology::Hosts(_) => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::TopologyConfig;
    use std::collections::BTreeMap;

    /// Directed links of each kind, over every existing output port.
    fn counts(t: &Topology) -> BTreeMap<Option<LinkKind>, usize> {
        let mut m = BTreeMap::new();
        for n in 0..t.nodes() as u32 {
            for p in 0..t.degree() as u8 {
                if t.neighbor(NodeId(n), PortId(p)).is_some() {
                    *m.entry(t.link_kind(NodeId(n), PortId(p))).or_default() += 1;
                }
            }
        }
        m
    }

    #[test]
    fn a_dragonfly_has_a_a_minus_1_g_local_a_h_g_global_and_2_p_a_g_terminal_links() {
        for (p, a, h) in [(2u32, 4u32, 2u32), (1, 3, 2), (3, 2, 1)] {
            let t = Topology::from_config(&TopologyConfig::Dragonfly { p, a, h }).unwrap();
            let g = (a * h + 1) as usize;
            let (p, a, h) = (p as usize, a as usize, h as usize);
            let c = counts(&t);
            assert_eq!(
                c.get(&Some(LinkKind::Local)).copied(),
                Some(a * (a - 1) * g)
            );
            assert_eq!(c.get(&Some(LinkKind::Global)).copied(), Some(a * h * g));
            // p = 1: the router's own processing element is the terminal, no link.
            let terminal = if p > 1 { Some(2 * p * a * g) } else { None };
            assert_eq!(c.get(&Some(LinkKind::Terminal)).copied(), terminal);
            assert_eq!(
                c.values().sum::<usize>(),
                t.channels(),
                "every link has a kind"
            );
            assert!(!c.contains_key(&None));
        }
    }

    #[test]
    fn a_global_link_joins_two_groups_and_a_local_one_stays_in_its_group() {
        let t = Topology::from_config(&TopologyConfig::Dragonfly { p: 2, a: 4, h: 2 }).unwrap();
        let d = t.dragonfly().unwrap().clone();
        for n in 0..t.routers() as u32 {
            for p in 0..d.degree() as u8 {
                let to = t.neighbor(NodeId(n), PortId(p)).unwrap().0;
                let same = d.group_of(n) == d.group_of(to);
                let kind = t.link_kind(NodeId(n), PortId(p)).unwrap();
                assert_eq!(kind == LinkKind::Local, same);
                assert_eq!(kind == LinkKind::Global, !same);
            }
        }
    }

    #[test]
    fn a_flattened_butterfly_has_r_k_minus_1_links_per_dimension() {
        let t = Topology::from_config(&TopologyConfig::FlattenedButterfly { k: 4, n: 2, c: 4 })
            .unwrap();
        let c = counts(&t);
        let r = 16;
        assert_eq!(c.get(&Some(LinkKind::Dimension(0))).copied(), Some(r * 3));
        assert_eq!(c.get(&Some(LinkKind::Dimension(1))).copied(), Some(r * 3));
        assert_eq!(c.get(&Some(LinkKind::Terminal)).copied(), Some(2 * 4 * r));
        assert_eq!(c.len(), 3);
        // Along dimension d only coordinate d changes.
        let f = t.flatfly().unwrap();
        for n in 0..r as u32 {
            for p in 0..f.degree() as u8 {
                let Some(LinkKind::Dimension(d)) = t.link_kind(NodeId(n), PortId(p)) else {
                    panic!("a router port is a dimension's");
                };
                let to = t.neighbor(NodeId(n), PortId(p)).unwrap().0;
                for e in 0..2 {
                    let differs = f.grid.coord(n, e) != f.grid.coord(to, e);
                    assert_eq!(differs, e == d as u32);
                }
            }
        }
    }

    #[test]
    fn the_papers_networks_have_no_kinds_and_a_concentrated_mesh_has_network_and_terminal() {
        let torus = Topology::from_config(&TopologyConfig::Torus {
            k: 4,
            n: 2,
            bidirectional: true,
            c: 1,
        })
        .unwrap();
        assert_eq!(counts(&torus).keys().collect::<Vec<_>>(), vec![&None]);
        let mesh = Topology::from_config(&TopologyConfig::Mesh { k: 3, n: 2, c: 2 }).unwrap();
        let c = counts(&mesh);
        assert_eq!(c.get(&Some(LinkKind::Network)).copied(), Some(24));
        assert_eq!(c.get(&Some(LinkKind::Terminal)).copied(), Some(2 * 2 * 9));
        assert_eq!(c.len(), 2);
    }

    #[test]
    fn kinds_are_named_and_ordered_as_the_report_lists_them() {
        let mut v = [
            LinkKind::Terminal,
            LinkKind::Dimension(1),
            LinkKind::Global,
            LinkKind::Dimension(0),
            LinkKind::Local,
        ];
        v.sort();
        let names: Vec<String> = v.iter().map(|k| k.name()).collect();
        assert_eq!(names, ["local", "global", "dim0", "dim1", "terminal"]);
        assert_eq!(
            serde_json::to_string(&LinkKind::Global).unwrap(),
            "\"global\""
        );
    }
}
