//! The dragonfly, the flattened butterfly and concentration (issue 33): the networks'
//! ports and global-link pairing, distances along the minimal route, a lone message's
//! zero-load latency, minimal routing deadlock-free past saturation, `GroupShift`
//! saturating near its 1/(a·p) bound, and the same report for any thread count.

use crate::common;

use routemu::config::{
    HwConfig, LatencyTo, Measure, PatternConfig, Routing, SwitchingConfig, TopologyConfig,
    ValiantIntermediate,
};
use routemu::engine::sim::Simulation;
use routemu::experiments::experiment::run_experiment;
use routemu::foundation::types::{MsgId, NodeId, PortId};
use routemu::routing::RoutingFn;
use routemu::stats::report::Report;
use routemu::switching::wormhole::{invariants, WormholeNet};
use routemu::topology::Topology;

/// The small dragonfly of the issue: p = 2, a = 4, h = 2 — 9 groups, 36 routers, 72
/// terminals.
fn small_dragonfly() -> TopologyConfig {
    TopologyConfig::Dragonfly { p: 2, a: 4, h: 2 }
}

fn topo(cfg: &TopologyConfig) -> Topology {
    Topology::from_config(cfg).unwrap()
}

fn run(cfg: &HwConfig) -> Report {
    run_experiment(cfg, &mut |_, _| {}).unwrap()
}

/// The dragonfly preset with 2-cycle links everywhere and 8-flit buffers (quick to
/// saturate, credits never the bottleneck of a 3-cycle hop), `pattern` at `flits` per
/// terminal per cycle in a short window with a 2 000-cycle watchdog.
fn quick(
    topology: TopologyConfig,
    routing: Routing,
    pattern: PatternConfig,
    flits: f64,
) -> HwConfig {
    let mut cfg = common::windowed(common::preset("dragonfly-booksim.ron"), 1_000, 3_000, 1);
    cfg.topology = topology;
    cfg.links.latency = 2;
    cfg.links.credit_latency = Some(2);
    cfg.links.latency_global = None;
    cfg.router.buffer_flits = 8;
    cfg.router.vcs = 4;
    set_routing(&mut cfg, routing);
    cfg.workload.pattern = pattern;
    cfg.workload.rate = flits / 12.0;
    cfg.experiment.deadlock_cycles = 2_000;
    cfg.experiment.drain_limit = 5_000;
    cfg
}

/// `cfg` with what dragonfly `Valiant` and `UgalLocal` draw as intermediate.
fn via(mut cfg: HwConfig, intermediate: ValiantIntermediate) -> HwConfig {
    let SwitchingConfig::Wormhole {
        ref mut valiant_intermediate,
        ..
    } = cfg.switching
    else {
        unreachable!("a wormhole preset")
    };
    *valiant_intermediate = intermediate;
    cfg
}

/// `cfg` with 64-flit VC buffers: 256 flits behind a port of 4 VCs, so that UGAL's
/// threshold of 30 used credits (BookSim's, made for its 256-flit buffers) can be
/// crossed; with 8-flit buffers (32 a port) UGAL is all but always minimal.
fn deep(mut cfg: HwConfig) -> HwConfig {
    cfg.router.buffer_flits = 64;
    cfg
}

fn set_routing(cfg: &mut HwConfig, routing: Routing) {
    let SwitchingConfig::Wormhole {
        routing: ref mut r, ..
    } = cfg.switching
    else {
        unreachable!("a wormhole preset")
    };
    *r = routing;
}

#[test]
fn every_router_has_its_ports_and_one_global_link_joins_every_pair_of_groups() {
    let t = topo(&small_dragonfly());
    let d = t.dragonfly().unwrap().clone();
    assert_eq!((t.routers(), t.endpoints().len(), d.groups()), (36, 72, 9));
    // Radix a − 1 + h + p = 7: every router port leads somewhere; a terminal has one port.
    assert_eq!(t.degree(), 7);
    let mut pairs = vec![vec![0; 9]; 9];
    for u in 0..36u32 {
        for q in 0..7u8 {
            let v = t
                .neighbor(NodeId(u), PortId(q))
                .expect("every router port exists");
            let back = t.arrival_port(NodeId(u), PortId(q));
            assert_eq!(t.neighbor(v, back), Some(NodeId(u)), "router {u} port {q}");
            assert_eq!(t.upstream(v, back), Some(NodeId(u)));
            assert_eq!(t.upstream_port(v, back), PortId(q));
            if d.is_global(q as u32) {
                pairs[d.group_of(u) as usize][d.group_of(v.0) as usize] += 1;
            }
        }
    }
    for (s, row) in pairs.iter().enumerate() {
        for (g, &n) in row.iter().enumerate() {
            assert_eq!(n, usize::from(s != g), "global links from group {s} to {g}");
        }
    }
    for term in t.endpoints() {
        let ports: Vec<u8> = (0..7u8)
            .filter(|&q| t.neighbor(NodeId(term), PortId(q)).is_some())
            .collect();
        assert_eq!(ports.len(), 1, "terminal {term}");
        let r = t.neighbor(NodeId(term), PortId(ports[0])).unwrap();
        assert_eq!(r, t.router_of(NodeId(term)));
    }
}

/// The minimal route's hops from terminal `s` to terminal `d`, and how many were global.
fn walk(t: &Topology, r: &RoutingFn, s: u32, d: u32) -> (u32, u32) {
    let id = MsgId::new(NodeId(s), 0);
    let (mut cur, mut hops, mut globals) = (NodeId(s), 0, 0);
    while cur != NodeId(d) {
        let route = r.route(t, cur, NodeId(d), id);
        let q = route.escape_port;
        if cur.0 < t.routers() as u32 && t.dragonfly().unwrap().is_global(q.0 as u32) {
            globals += 1;
        }
        cur = t.neighbor(cur, q).unwrap();
        hops += 1;
        assert!(hops <= 5, "{s}→{d} loops");
    }
    (hops, globals)
}

#[test]
fn distances_follow_the_minimal_route_and_the_diameter_is_3_router_hops() {
    let t = topo(&small_dragonfly());
    let r = RoutingFn::new(&t, Routing::Minimal, false, 2).unwrap();
    let mut longest = 0;
    for s in t.endpoints() {
        for d in t.endpoints() {
            if s == d {
                continue;
            }
            let (hops, globals) = walk(&t, &r, s, d);
            assert_eq!(hops, t.distance(NodeId(s), NodeId(d)), "{s}→{d}");
            assert!(globals <= 1);
            longest = longest.max(hops - 2);
        }
    }
    assert_eq!(longest, 3);
    assert_eq!(t.router_net().diameter(), 3);
    assert_eq!(t.diameter(), 5, "3 router hops and the two terminal links");
}

#[test]
fn too_few_vcs_for_the_two_dragonfly_classes_are_refused_with_the_reason() {
    let t = topo(&small_dragonfly());
    let err = RoutingFn::new(&t, Routing::Minimal, false, 1)
        .unwrap_err()
        .to_string();
    assert!(err.contains("global hop"), "{err}");
    let err = RoutingFn::new(&t, Routing::DimensionOrder, false, 2)
        .unwrap_err()
        .to_string();
    assert!(err.contains("Minimal"), "{err}");
    // The flattened butterfly's dimension order needs one class.
    let f = topo(&TopologyConfig::FlattenedButterfly { k: 4, n: 2, c: 4 });
    assert!(RoutingFn::new(&f, Routing::Minimal, false, 1).is_ok());
}

/// Runs one message of `flits` from `src` to `dst` alone; its latency and hops.
fn lone(cfg: &HwConfig, src: u32, dst: u32, flits: u32) -> (u64, u64) {
    let mut cfg = cfg.clone();
    cfg.workload.rate = 1e-12;
    let mut sim = Simulation::<WormholeNet>::build(&cfg, 0).unwrap();
    sim.record_deliveries();
    sim.inject(NodeId(src), NodeId(dst), flits);
    assert!(sim.run_until_empty(100_000), "never delivered");
    let d = sim.stats.deliveries.take().unwrap();
    (d[0].absorbed - d[0].header.created, d[0].header.hops as u64)
}

#[test]
fn a_lone_messages_latency_is_the_closed_form_over_its_links_latencies() {
    // Every router on the path (the two terminals included) adds R−1+a+s+x, every link
    // its own latency (terminal ℓt, local ℓ, global ℓg), then i + e + L − 1:
    // (H+1)·stage + 2ℓt + locals·ℓ + globals·ℓg + i + e + L − 1 over H = h + 2 links.
    let cfg = common::preset("dragonfly-booksim.ron");
    let t = topo(&cfg.topology);
    let d = t.dragonfly().unwrap().clone();
    let stage = routemu::switching::zero_load::wormhole_router(&cfg);
    let l = &cfg.links;
    let (lt, lg) = (l.latency_terminal.unwrap(), l.latency_global.unwrap());
    let ni = &cfg.router.ni;
    for src in [t.endpoints().start, t.endpoints().start + 13] {
        for dst in t.endpoints().step_by(3) {
            if dst == src {
                continue;
            }
            let (rs, rd) = (t.router_of(NodeId(src)).0, t.router_of(NodeId(dst)).0);
            let h = d.distance(rs, rd) as u64;
            let globals = u64::from(d.group_of(rs) != d.group_of(rd));
            let want = (h + 3) * stage
                + 2 * lt
                + (h - globals) * l.latency
                + globals * lg
                + ni.injection_latency
                + ni.ejection_latency
                + 11;
            let (lat, hops) = lone(&cfg, src, dst, 12);
            assert_eq!(lat, want, "{src}→{dst} over {h} router hops");
            assert_eq!(hops, h + 2);
            // BookSim's: (h+1)·stage + the links + its 2-cycle terminal channels each way.
            let booksim = (h + 1) * stage + (h - globals) * l.latency + globals * lg + 4 + 11;
            // The preset's latency ends where BookSim's does, the tail leaving the
            // terminal's crossbar (TailArrived), the memory write before it is left out.
            assert_eq!(cfg.experiment.latency.to, LatencyTo::TailArrived);
            assert_eq!(lat - ni.ejection_latency, booksim, "BookSim's");
        }
    }
}

#[test]
fn a_lone_message_on_the_flattened_butterfly_and_a_concentrated_mesh_takes_its_hops() {
    let ff = common::preset("flatfly-booksim.ron");
    let mut mesh = ff.clone();
    mesh.topology = TopologyConfig::Mesh { k: 3, n: 2, c: 2 };
    for cfg in [ff, mesh] {
        let t = topo(&cfg.topology);
        let stage = routemu::switching::zero_load::wormhole_router(&cfg);
        let (l, lt) = (cfg.links.latency, cfg.links.latency_terminal.unwrap());
        let src = t.endpoints().start + 1;
        for dst in t.endpoints().filter(|&d| d != src) {
            let h = t
                .router_net()
                .distance(t.router_of(NodeId(src)), t.router_of(NodeId(dst)));
            let h = h as u64;
            let (lat, hops) = lone(&cfg, src, dst, 12);
            assert_eq!(hops, h + 2, "{:?} {src}→{dst}", cfg.topology);
            assert_eq!(
                lat,
                (h + 3) * stage + 2 * lt + h * l + 1 + 11,
                "{src}→{dst}"
            );
        }
    }
}

#[test]
fn minimal_and_valiant_routing_never_deadlock_past_saturation() {
    let flatfly = TopologyConfig::FlattenedButterfly { k: 4, n: 2, c: 4 };
    let torus = TopologyConfig::Torus {
        k: 4,
        n: 2,
        bidirectional: true,
        c: 2,
    };
    for (topology, routing, pattern) in [
        (small_dragonfly(), Routing::Minimal, PatternConfig::Uniform),
        (
            small_dragonfly(),
            Routing::Minimal,
            PatternConfig::GroupShift,
        ),
        (
            TopologyConfig::Dragonfly { p: 1, a: 4, h: 2 },
            Routing::Minimal,
            PatternConfig::Uniform,
        ),
        (small_dragonfly(), Routing::Valiant, PatternConfig::Uniform),
        (
            small_dragonfly(),
            Routing::Valiant,
            PatternConfig::GroupShift,
        ),
        (
            small_dragonfly(),
            Routing::UgalLocal,
            PatternConfig::Uniform,
        ),
        (
            small_dragonfly(),
            Routing::UgalLocal,
            PatternConfig::GroupShift,
        ),
        (flatfly.clone(), Routing::Minimal, PatternConfig::Uniform),
        (
            flatfly.clone(),
            Routing::Adaptive,
            PatternConfig::GroupShift,
        ),
        (flatfly.clone(), Routing::Valiant, PatternConfig::GroupShift),
        (
            flatfly.clone(),
            Routing::UgalLocal,
            PatternConfig::GroupShift,
        ),
        (
            TopologyConfig::FlattenedButterfly { k: 4, n: 2, c: 1 },
            Routing::UgalLocal,
            PatternConfig::UniformWithSelf,
        ),
        // One terminal per router: the routers are the terminals.
        (
            TopologyConfig::Dragonfly { p: 1, a: 4, h: 2 },
            Routing::Valiant,
            PatternConfig::GroupShift,
        ),
        (
            TopologyConfig::FlattenedButterfly { k: 4, n: 2, c: 1 },
            Routing::Valiant,
            PatternConfig::Uniform,
        ),
        (torus, Routing::DimensionOrder, PatternConfig::Uniform),
    ] {
        // 1.5 flits per terminal per cycle: above the terminal link's 1.
        let cfg = quick(topology.clone(), routing, pattern.clone(), 1.5);
        let r = run(&cfg);
        common::assert_saturated_without_deadlock(
            &r,
            &format!("{topology:?} {routing:?} {pattern:?}"),
        );
    }
}

#[test]
fn valiant_and_ugal_never_deadlock_past_saturation_with_either_intermediate() {
    // Deep buffers, so that UGAL takes both routes; the router intermediate's four
    // classes on 4 VCs.
    for intermediate in [ValiantIntermediate::Group, ValiantIntermediate::Router] {
        for (routing, pattern) in [
            (Routing::Valiant, PatternConfig::Uniform),
            (Routing::UgalLocal, PatternConfig::Uniform),
            (Routing::UgalLocal, PatternConfig::GroupShift),
            (Routing::UgalGlobal, PatternConfig::GroupShift),
        ] {
            let mut cfg = quick(small_dragonfly(), routing, pattern.clone(), 1.5);
            if routing == Routing::UgalGlobal {
                // Long global links, so that UGAL-G takes both routes.
                cfg.links.latency_global = Some(40);
            }
            let r = run(&via(deep(cfg), intermediate));
            common::assert_saturated_without_deadlock(
                &r,
                &format!("{intermediate:?} {routing:?} {pattern:?}"),
            );
        }
    }
    let cfg = quick(
        TopologyConfig::FlattenedButterfly { k: 4, n: 2, c: 4 },
        Routing::UgalLocal,
        PatternConfig::Uniform,
        1.5,
    );
    common::assert_saturated_without_deadlock(&run(&deep(cfg)), "flattened butterfly UGAL");
}

#[test]
fn without_its_two_classes_minimal_routing_deadlocks_in_a_cycle_through_global_links() {
    // One VC, unsafe: the local–global–local routes of different groups close a cycle of
    // channel dependencies, which the watchdog finds and names (its edges follow each
    // link to the far router's own port number). With the two classes, at the same load,
    // no deadlock (`minimal_routing_never_deadlocks_past_saturation`).
    let mut cfg = quick(
        small_dragonfly(),
        Routing::Minimal,
        PatternConfig::Uniform,
        1.0,
    );
    cfg.router.vcs = 1;
    cfg.router.dma = Some(1);
    cfg.router.buffer_flits = 4;
    cfg.experiment.deadlock_cycles = 500;
    let SwitchingConfig::Wormhole {
        ref mut unsafe_routing,
        ..
    } = cfg.switching
    else {
        unreachable!()
    };
    *unsafe_routing = true;
    let r = run(&cfg);
    let why = format!(
        "{:?}",
        r.deadlock.expect("one VC without classes deadlocks")
    );
    assert!(why.contains("waiting cycle"), "{why}");
    assert!(why.contains("input global"), "{why}");
}

#[test]
fn group_shift_saturates_near_one_over_a_p_under_minimal_routing() {
    // a·p = 8 terminals share their group's one global link to the next group: the
    // bound is 1/8 flit per terminal per cycle, what `routemu check` prints.
    let mut cfg = quick(
        small_dragonfly(),
        Routing::Minimal,
        PatternConfig::GroupShift,
        0.5,
    );
    let bound = topo(&cfg.topology).group_shift_bound().unwrap();
    assert_eq!(bound, 1.0 / 8.0);
    cfg.experiment.saturation_backlog = 1e9;
    cfg.experiment.drain_limit = 1;
    cfg.experiment.warmup = 2_000;
    cfg.experiment.measure = Measure::Cycles(6_000);
    let r = run(&cfg);
    assert!(r.deadlock.is_none());
    let got = r.throughput.accepted;
    eprintln!("GroupShift on the small dragonfly: accepted {got:.4} against the bound {bound:.4}");
    assert!(
        (0.85 * bound..=1.02 * bound).contains(&got),
        "accepted {got:.4} against {bound:.4}"
    );
}

#[test]
fn the_small_dragonfly_gives_the_same_report_on_1_and_3_threads() {
    let mut cfg = quick(
        small_dragonfly(),
        Routing::Minimal,
        PatternConfig::Uniform,
        0.5,
    );
    cfg.experiment.replications = 2;
    cfg.experiment.partition_min_nodes = Some(1);
    let report = |c: &HwConfig| common::without_split(serde_json::to_value(run(c)).unwrap());
    let one = report(&cfg);
    cfg.experiment.threads = 3;
    assert_eq!(one, report(&cfg), "3 threads");
}

#[test]
fn concentration_is_refused_outside_wormhole_switching() {
    let mut cfg = common::preset("circuit-hold.ron");
    cfg.topology = TopologyConfig::Torus {
        k: 4,
        n: 2,
        bidirectional: true,
        c: 2,
    };
    let err = routemu::engine::machine::validate(&cfg)
        .unwrap_err()
        .to_string();
    assert!(err.contains("wormhole"), "{err}");
}

#[test]
fn flits_and_credits_balance_over_links_whose_two_ends_have_different_numbers() {
    // The dragonfly's links arrive on the far router's own port number and its global
    // links are slower than its local ones: under heavy load every channel's credits,
    // buffered flits and flits in flight still add up to the buffer, and after the
    // workload stops every message is absorbed exactly once.
    for routing in [
        Routing::Minimal,
        Routing::Valiant,
        Routing::UgalLocal,
        Routing::UgalGlobal,
    ] {
        balance_under_heavy_load(routing);
    }
}

fn balance_under_heavy_load(routing: Routing) {
    let mut cfg = quick(small_dragonfly(), routing, PatternConfig::Uniform, 0.8);
    cfg.links.latency_global = Some(5);
    cfg.links.latency_terminal = Some(1);
    let buffer = cfg.router.buffer_flits;
    let mut sim = Simulation::<WormholeNet>::build(&cfg, 0).unwrap();
    sim.record_deliveries();
    while sim.t < 3_000 {
        sim.step();
        if sim.t.is_multiple_of(97) {
            invariants::check(&sim, buffer).unwrap_or_else(|e| panic!("cycle {}: {e}", sim.t));
        }
    }
    assert!(
        sim.net.flits_live > 0,
        "{routing:?}: the load was not heavy"
    );
    sim.stop_workload();
    assert!(sim.run_until_empty(200_000), "{routing:?}: did not drain");
    invariants::check(&sim, buffer).unwrap();
    let delivered = sim.stats.deliveries.as_ref().unwrap();
    let ids: std::collections::HashSet<_> = delivered.iter().map(|d| d.header.id).collect();
    assert_eq!(ids.len(), delivered.len(), "a message delivered twice");
    let created: u64 = (0..sim.net.nodes() as u32)
        .map(|i| sim.created_at(NodeId(i)))
        .sum();
    assert_eq!(ids.len() as u64, created);
    // Only terminals created messages, and every message went to a terminal.
    let t = topo(&cfg.topology);
    for r in 0..t.routers() as u32 {
        assert_eq!(sim.created_at(NodeId(r)), 0, "router {r} created messages");
    }
    assert!(delivered
        .iter()
        .all(|d| t.endpoints().contains(&d.header.dst.0)));
}

#[test]
fn the_closed_form_bounds_are_the_exact_channel_loads_of_minimal_routing() {
    // `routemu check`'s uniform and GroupShift bounds per terminal against the busiest
    // channel found by routing every pair's traffic (`routing::channel_load`).
    use routemu::config::TorusTie;
    use routemu::routing::channel_load::channel_load;
    use routemu::traffic::pattern::DestPattern;
    for (cfg, routing) in [
        (
            TopologyConfig::Dragonfly { p: 1, a: 4, h: 2 },
            Routing::Minimal,
        ),
        (small_dragonfly(), Routing::Minimal),
        (
            TopologyConfig::Dragonfly { p: 3, a: 3, h: 1 },
            Routing::Minimal,
        ),
        (
            TopologyConfig::FlattenedButterfly { k: 4, n: 2, c: 1 },
            Routing::DimensionOrder,
        ),
        (
            TopologyConfig::FlattenedButterfly { k: 3, n: 3, c: 2 },
            Routing::Minimal,
        ),
    ] {
        let t = topo(&cfg);
        let exact = |pattern: PatternConfig| {
            let p = DestPattern::new(&pattern, &t, 1).unwrap();
            let l = channel_load(&t, &p, routing, TorusTie::Parity).unwrap();
            l.sender_bound(1.0).unwrap()
        };
        let uniform = exact(PatternConfig::Uniform);
        assert!(
            (uniform - t.capacity()).abs() < 1e-9,
            "{cfg:?}: {uniform} vs {}",
            t.capacity()
        );
        let shift = exact(PatternConfig::GroupShift);
        let bound = t.group_shift_bound().unwrap();
        assert!((shift - bound).abs() < 1e-9, "{cfg:?}: {shift} vs {bound}");
    }
}

#[test]
fn valiant_and_ugal_need_three_classes_on_the_dragonfly_and_two_on_the_flattened_butterfly() {
    let t = topo(&small_dragonfly());
    let err = RoutingFn::new(&t, Routing::Valiant, false, 2)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("at least 3") && err.contains("intermediate group"),
        "{err}"
    );
    assert!(RoutingFn::new(&t, Routing::Valiant, false, 3).is_ok());
    let f = topo(&TopologyConfig::FlattenedButterfly { k: 4, n: 2, c: 4 });
    let err = RoutingFn::new(&f, Routing::Valiant, false, 1)
        .unwrap_err()
        .to_string();
    assert!(err.contains("one VC per phase"), "{err}");
    assert!(RoutingFn::new(&f, Routing::Valiant, false, 2).is_ok());
    // UgalLocal: Valiant's three classes; the dragonfly's only.
    let err = RoutingFn::new(&t, Routing::UgalLocal, false, 2)
        .unwrap_err()
        .to_string();
    assert!(err.contains("at least 3"), "{err}");
    // UgalLocal on the flattened butterfly: Valiant's halves; refused on a mesh.
    let err = RoutingFn::new(&f, Routing::UgalLocal, false, 1)
        .unwrap_err()
        .to_string();
    assert!(err.contains("one VC per phase"), "{err}");
    assert!(RoutingFn::new(&f, Routing::UgalLocal, false, 2).is_ok());
    // Through an intermediate router: four classes on the dragonfly (BookSim's three
    // have a cycle); the flattened butterfly's draw is a router anyway.
    for kind in [Routing::Valiant, Routing::UgalLocal] {
        let err = RoutingFn::build(&t, kind, false, 3, ValiantIntermediate::Router)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("at least 4") && err.contains("intermediate router"),
            "{err}"
        );
        assert!(RoutingFn::build(&t, kind, false, 4, ValiantIntermediate::Router).is_ok());
        assert!(RoutingFn::build(&f, kind, false, 2, ValiantIntermediate::Router).is_ok());
    }
    let mesh = topo(&TopologyConfig::Mesh { k: 4, n: 2, c: 1 });
    let err = RoutingFn::new(&mesh, Routing::UgalLocal, false, 4)
        .unwrap_err()
        .to_string();
    assert!(err.contains("flattened butterfly's"), "{err}");
    // UgalGlobal: UgalLocal's classes, the dragonfly's only; on the flattened butterfly
    // UgalLocal already reads both routes' first channels.
    let err = RoutingFn::new(&t, Routing::UgalGlobal, false, 2)
        .unwrap_err()
        .to_string();
    assert!(err.contains("at least 3"), "{err}");
    assert!(RoutingFn::new(&t, Routing::UgalGlobal, false, 3).is_ok());
    let err = RoutingFn::build(
        &t,
        Routing::UgalGlobal,
        false,
        3,
        ValiantIntermediate::Router,
    )
    .unwrap_err()
    .to_string();
    assert!(err.contains("at least 4"), "{err}");
    let err = RoutingFn::new(&f, Routing::UgalGlobal, false, 4)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("both leave the source router") && err.contains("use UgalLocal"),
        "{err}"
    );
    let err = RoutingFn::new(&mesh, Routing::UgalGlobal, false, 4)
        .unwrap_err()
        .to_string();
    assert!(err.contains("the dragonfly's"), "{err}");
}

/// Accepted flits per terminal per cycle on the small dragonfly under `routing` and
/// `pattern` (deep buffers, intermediate group), offered past saturation, 2 000 + 4 000
/// cycles.
fn accepted_past_saturation(routing: Routing, pattern: PatternConfig) -> f64 {
    accepted_via(routing, pattern, ValiantIntermediate::Group)
}

/// [`accepted_past_saturation`] with `intermediate`.
fn accepted_via(
    routing: Routing,
    pattern: PatternConfig,
    intermediate: ValiantIntermediate,
) -> f64 {
    accepted_of(via(
        deep(quick(small_dragonfly(), routing, pattern, 1.0)),
        intermediate,
    ))
}

/// The accepted throughput of `cfg` offered past saturation: 2 000 + 4 000 cycles, the
/// window's counts taken as they are (no backlog guard, no drain), no deadlock.
fn accepted_of(mut cfg: HwConfig) -> f64 {
    let routing = match cfg.switching {
        SwitchingConfig::Wormhole { routing, .. } => routing,
        _ => unreachable!("a wormhole machine"),
    };
    cfg.experiment.saturation_backlog = 1e9;
    cfg.experiment.drain_limit = 1;
    cfg.experiment.warmup = 2_000;
    cfg.experiment.measure = Measure::Cycles(4_000);
    let r = run(&cfg);
    assert!(r.deadlock.is_none(), "{routing:?}: {:?}", r.deadlock);
    r.throughput.accepted
}

#[test]
fn valiant_and_ugal_beat_minimal_under_group_shift_and_ugal_keeps_minimals_uniform_throughput() {
    use ValiantIntermediate::{Group, Router};
    // GroupShift: minimal routing squeezes a group's a·p = 8 terminals through one
    // global link (1/8); Valiant spreads them over every group's links.
    let min_shift = accepted_past_saturation(Routing::Minimal, PatternConfig::GroupShift);
    let val_shift = accepted_past_saturation(Routing::Valiant, PatternConfig::GroupShift);
    // Uniform: Valiant's detour crosses two global links where minimal routing crosses
    // one, so it carries about half.
    let min_uni = accepted_past_saturation(Routing::Minimal, PatternConfig::Uniform);
    let val_uni = accepted_past_saturation(Routing::Valiant, PatternConfig::Uniform);
    let ugal_shift = accepted_past_saturation(Routing::UgalLocal, PatternConfig::GroupShift);
    let ugal_uni = accepted_past_saturation(Routing::UgalLocal, PatternConfig::Uniform);
    // Through an intermediate router (BookSim's draw): the same, one local hop longer.
    let val_shift_r = accepted_via(Routing::Valiant, PatternConfig::GroupShift, Router);
    let ugal_shift_r = accepted_via(Routing::UgalLocal, PatternConfig::GroupShift, Router);
    let ugal_uni_r = accepted_via(Routing::UgalLocal, PatternConfig::Uniform, Router);
    // UGAL-G: the same choice read from the two routes' global channels.
    let ugalg_shift = accepted_past_saturation(Routing::UgalGlobal, PatternConfig::GroupShift);
    let ugalg_uni = accepted_past_saturation(Routing::UgalGlobal, PatternConfig::Uniform);
    eprintln!(
        "small dragonfly, accepted past saturation ({Group:?}; {Router:?}): GroupShift \
         minimal {min_shift:.4} Valiant {val_shift:.4}; {val_shift_r:.4} UgalLocal \
         {ugal_shift:.4}; {ugal_shift_r:.4} UgalGlobal {ugalg_shift:.4}; uniform minimal \
         {min_uni:.4} Valiant {val_uni:.4} UgalLocal {ugal_uni:.4}; {ugal_uni_r:.4} \
         UgalGlobal {ugalg_uni:.4}"
    );
    assert!(min_shift < 0.14, "minimal under GroupShift {min_shift:.4}");
    for (what, got) in [
        ("Valiant", val_shift),
        ("Valiant via a router", val_shift_r),
    ] {
        // Of the order of half the terminal bandwidth, about twice minimal's 1/(a·p) and
        // more (0.36 through a group, 0.24 through a router, whose detour is a local hop
        // longer on one VC class per leg).
        assert!(
            got > 1.8 * min_shift && got > 0.22,
            "{what} under GroupShift {got:.4} against minimal {min_shift:.4}"
        );
    }
    // UGAL-L on BookSim's rule: well above minimal, below Valiant — the source router
    // sees the congested global link only through its local port's used credits, and
    // its threshold of 30 flits keeps messages minimal until that port backs up
    // (BookSim: 0.235 against 0.118, docs/dragonfly.md).
    for (what, got) in [
        ("UgalLocal", ugal_shift),
        ("UgalLocal via a router", ugal_shift_r),
    ] {
        assert!(
            got > 1.25 * min_shift && got < val_shift,
            "{what} under GroupShift {got:.4} against minimal {min_shift:.4}"
        );
    }
    let ratio = val_uni / min_uni;
    assert!(
        (0.35..0.75).contains(&ratio),
        "Valiant/minimal under uniform {ratio:.3}"
    );
    // UGAL-G on BookSim's rule reads used credits of the global channels: a bottleneck
    // global link of 2 cycles drains its downstream buffer as fast as it fills it, so
    // its used credits stay near its credit round trip, well under the threshold of
    // 30, and the queue builds up upstream, where the rule does not look: all but
    // minimal under GroupShift (`ugal_global_needs_global_links_long_enough_...`).
    assert!(
        (0.95 * min_shift..1.25 * min_shift).contains(&ugalg_shift),
        "UgalGlobal under GroupShift {ugalg_shift:.4} against minimal {min_shift:.4}"
    );
    assert!(
        ugalg_uni > 0.9 * min_uni && ugalg_uni > val_uni,
        "UgalGlobal under uniform {ugalg_uni:.4} against minimal {min_uni:.4}"
    );
    // UgalLocal keeps close to minimal's throughput under uniform traffic; through a
    // router, whose detours are a local hop longer on one VC per class, less close.
    for (what, got, share) in [
        ("UgalLocal", ugal_uni, 0.9),
        ("UgalLocal via a router", ugal_uni_r, 0.7),
    ] {
        assert!(
            got > share * min_uni && got > val_uni,
            "{what} under uniform {got:.4} against minimal {min_uni:.4}"
        );
    }
}

#[test]
fn ugal_global_needs_global_links_long_enough_for_their_used_credits_to_pass_the_threshold() {
    // 40-cycle global links: a busy one has some 80 flits in flight, past the rule's 30,
    // so UGAL-G detours under GroupShift — well above minimal, below Valiant.
    let shift = |routing| {
        let mut cfg = deep(quick(
            small_dragonfly(),
            routing,
            PatternConfig::GroupShift,
            1.0,
        ));
        cfg.links.latency_global = Some(40);
        accepted_of(cfg)
    };
    let [min, val, local, global] = [
        Routing::Minimal,
        Routing::Valiant,
        Routing::UgalLocal,
        Routing::UgalGlobal,
    ]
    .map(shift);
    eprintln!(
        "small dragonfly, 40-cycle global links, GroupShift past saturation: minimal \
         {min:.4} Valiant {val:.4} UgalLocal {local:.4} UgalGlobal {global:.4}"
    );
    assert!(
        global > 1.5 * min && global < val,
        "UgalGlobal {global:.4} against minimal {min:.4} and Valiant {val:.4}"
    );
}

#[test]
fn valiant_and_ugal_give_the_same_report_on_1_and_3_threads() {
    for (routing, intermediate) in [
        (Routing::Valiant, ValiantIntermediate::Group),
        (Routing::UgalLocal, ValiantIntermediate::Group),
        (Routing::UgalLocal, ValiantIntermediate::Router),
    ] {
        // Past saturation with deep buffers: UGAL reads used credits and takes both routes.
        let cfg = quick(small_dragonfly(), routing, PatternConfig::GroupShift, 0.5);
        let mut cfg = via(deep(cfg), intermediate);
        cfg.experiment.partition_min_nodes = Some(1);
        let report = |c: &HwConfig| common::without_split(serde_json::to_value(run(c)).unwrap());
        let one = report(&cfg);
        cfg.experiment.threads = 3;
        assert_eq!(
            one,
            report(&cfg),
            "{routing:?} {intermediate:?} on 3 threads"
        );
    }
}

/// Hops of `probes` 4-flit messages from router 0 to router 13 of the p = 1, a = 4,
/// h = 2 dragonfly under `routing`, sent once router 1 — the gateway of group 0's global
/// link to group 3, not the probes' source — has that link backed up: routers 1, 13,
/// 14 and 15 send long messages to router 12, where the link lands, whose ejection
/// they share. Also the probes' minimal distance.
fn probe_hops(routing: Routing, probes: u64) -> (Vec<u64>, u64) {
    let topology = TopologyConfig::Dragonfly { p: 1, a: 4, h: 2 };
    let mut cfg = deep(quick(topology, routing, PatternConfig::Uniform, 0.0));
    cfg.workload.rate = 1e-12;
    let t = topo(&cfg.topology);
    let d = t.dragonfly().unwrap().clone();
    let (gw, port) = d.gateway(0, 3);
    let landing = d.neighbor(gw, port).unwrap();
    assert_eq!((gw, landing), (1, 12), "the set-up this test describes");
    let mut sim = Simulation::<WormholeNet>::build(&cfg, 0).unwrap();
    sim.record_deliveries();
    for _ in 0..60 {
        for src in [1, 13, 14, 15] {
            sim.inject(NodeId(src), NodeId(12), 16);
        }
    }
    while sim.t < 400 {
        sim.step();
    }
    let mut ids = std::collections::HashSet::new();
    while (ids.len() as u64) < probes {
        if sim.t.is_multiple_of(10) {
            ids.insert(sim.inject(NodeId(0), NodeId(13), 4));
        }
        sim.step();
    }
    assert!(sim.run_until_empty(200_000), "{routing:?}: did not drain");
    let hops = sim
        .stats
        .deliveries
        .take()
        .unwrap()
        .iter()
        .filter(|m| ids.contains(&m.header.id))
        .map(|m| m.header.hops as u64)
        .collect::<Vec<_>>();
    assert_eq!(hops.len() as u64, probes);
    (hops, d.distance(0, 13) as u64)
}

#[test]
fn ugal_global_detours_around_a_busy_global_link_behind_another_router_ugal_local_cannot_see() {
    // UgalLocal at router 0 reads its own port towards router 1, which only the probes
    // use: every probe minimal. UgalGlobal reads router 1's global port, backed up: the
    // probes whose intermediate group is neither end's (7 of 9 groups) take Valiant's
    // route, through another group — longer than the minimal one.
    let (local, distance) = probe_hops(Routing::UgalLocal, 40);
    let (global, _) = probe_hops(Routing::UgalGlobal, 40);
    let longer = global.iter().filter(|&&h| h > distance).count();
    eprintln!(
        "probes 0 -> 13 (distance {distance}): UgalLocal hops {local:?}; UgalGlobal hops \
         {global:?}, {longer} of 40 longer"
    );
    assert!(local.iter().all(|&h| h == distance), "{local:?}");
    assert!(
        longer >= 20,
        "UgalGlobal: {longer} of 40 detoured: {global:?}"
    );
}

/// Accepted flits per terminal per cycle on the flattened butterfly of
/// `hw/flatfly-booksim.ron` (k = 4, n = 2, c = 4) under `routing` and `pattern`, offered
/// past saturation, 2 000 + 4 000 cycles.
fn flatfly_accepted(routing: Routing, pattern: PatternConfig) -> f64 {
    accepted_of(deep(quick(
        TopologyConfig::FlattenedButterfly { k: 4, n: 2, c: 4 },
        routing,
        pattern,
        1.0,
    )))
}

#[test]
fn on_the_flattened_butterfly_valiant_and_ugal_beat_minimal_under_group_shift() {
    let shift: Vec<f64> = [Routing::Minimal, Routing::Valiant, Routing::UgalLocal]
        .map(|r| flatfly_accepted(r, PatternConfig::GroupShift))
        .to_vec();
    let uni: Vec<f64> = [Routing::Minimal, Routing::Valiant, Routing::UgalLocal]
        .map(|r| flatfly_accepted(r, PatternConfig::Uniform))
        .to_vec();
    eprintln!(
        "flattened butterfly, accepted past saturation (minimal, Valiant, UgalLocal): \
         GroupShift {shift:.4?}; uniform {uni:.4?}"
    );
    // GroupShift: minimal routing puts a router's traffic on one dimension-0 channel (1/C).
    assert!(shift[0] < 0.27, "{shift:?}");
    assert!(
        shift[1] > 1.1 * shift[0] && shift[2] > 1.1 * shift[0],
        "{shift:?}"
    );
    // Uniform: Valiant about half of minimal, UGAL well above Valiant.
    assert!((0.35..0.75).contains(&(uni[1] / uni[0])), "{uni:?}");
    assert!(uni[2] > 1.2 * uni[1] && uni[2] > 0.65 * uni[0], "{uni:?}");
}
