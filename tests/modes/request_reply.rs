//! Request/reply traffic (`workload.reply`, BookSim's `use_read_write`): every request
//! delivered creates exactly one reply back to its source, of the reply's length; a lone
//! pair's round trip is the request's zero-load latency plus the reply's; requests and
//! replies never hold each other's VCs, and neither a torus with dimension order nor a
//! mesh with a turn model deadlocks past saturation; the report is the same on any
//! number of threads and ranks; a machine without VCs enough for two classes is refused,
//! as are other switching modes and the per-message log.

use crate::common;

use routemu::config::{
    HwConfig, LengthConfig, ReplyConfig, Routing, SwitchingConfig, TopologyConfig, WritesConfig,
};
use routemu::engine::machine::validate;
use routemu::engine::sim::Simulation;
use routemu::experiments::experiment::run_experiment;
use routemu::foundation::types::NodeId;
use routemu::stats::report::Report;
use routemu::switching::wormhole::{invariants, WormholeNet};
use routemu::topology::Topology;

fn constant(flits: u32) -> LengthConfig {
    LengthConfig::Constant { flits }
}

/// Reads of 1 flit answered by 5, writes of 5 answered by 1 (BookSim's usual sizes), a
/// quarter of the requests writes.
fn read_write() -> ReplyConfig {
    ReplyConfig {
        length: constant(5),
        writes: Some(WritesConfig {
            fraction: 0.25,
            request: constant(5),
            reply: constant(1),
        }),
    }
}

/// The torus preset (4 VCs of 8 flits: two dateline classes in each message class) as a
/// `k`×`k` torus running request/reply traffic at `rate` requests per node per cycle
/// with 1-flit requests, in a short window, the watchdog firing after 2 000 cycles
/// without a flit moving.
fn torus(k: u32, rate: f64, reply: ReplyConfig) -> HwConfig {
    let mut cfg = common::windowed(common::preset("wormhole-torus-dor.ron"), 1_000, 3_000, 2);
    cfg.topology = TopologyConfig::Torus {
        k,
        n: 2,
        bidirectional: true,
        c: 1,
    };
    cfg.workload.length = constant(1);
    cfg.workload.rate = rate;
    cfg.workload.reply = Some(reply);
    cfg.experiment.deadlock_cycles = 2_000;
    cfg.experiment.drain_limit = 5_000;
    cfg
}

/// The 8×8 mesh preset (4 VCs) as a 4×4 mesh with `routing`, otherwise as [`torus`].
fn mesh(routing: Routing, rate: f64) -> HwConfig {
    let mut cfg = torus(4, rate, read_write());
    cfg.topology = TopologyConfig::Mesh { k: 4, n: 2, c: 1 };
    cfg.switching = common::preset("wormhole-mesh-dor.ron").switching;
    let SwitchingConfig::Wormhole {
        routing: ref mut r, ..
    } = cfg.switching
    else {
        unreachable!("a wormhole preset")
    };
    *r = routing;
    cfg
}

fn run(cfg: &HwConfig) -> Report {
    run_experiment(cfg, &mut |_, _| {}).unwrap()
}

#[test]
fn every_request_delivered_gets_exactly_one_reply_of_its_kind_back_to_its_source() {
    let cfg = torus(4, 0.02, read_write());
    let mut sim = Simulation::<WormholeNet>::build(&cfg, 0).unwrap();
    sim.record_deliveries();
    while sim.t < 3_000 {
        sim.step();
    }
    sim.stop_workload();
    assert!(sim.run_until_empty(100_000), "did not drain");
    let d = sim.stats.deliveries.as_ref().unwrap();
    // (replier, requester, request latency, request length, reply length) seen from the
    // requests and from the replies: the same multiset when every request has exactly
    // one reply.
    let mut from_requests = Vec::new();
    let mut from_replies = Vec::new();
    for m in d {
        let h = &m.header;
        if h.class == 0 {
            assert!(h.reply_len > 0, "a request without a reply length");
            let kind = (h.len, h.reply_len);
            assert!(kind == (1, 5) || kind == (5, 1), "{kind:?}");
            from_requests.push((h.dst, h.id.src(), m.absorbed - h.created, h.reply_len));
        } else {
            assert_eq!(h.class, 1);
            assert_eq!(h.reply_len, 0, "a reply asks for no reply");
            from_replies.push((h.id.src(), h.dst, h.request_latency as u64, h.len));
        }
    }
    assert!(
        from_requests.len() > 500,
        "{} requests",
        from_requests.len()
    );
    let writes = from_requests.iter().filter(|r| r.3 == 1).count();
    assert!(writes > 50, "{writes} writes");
    from_requests.sort();
    from_replies.sort();
    assert_eq!(from_requests, from_replies);
    let created: u64 = (0..16).map(|i| sim.created_at(NodeId(i))).sum();
    assert_eq!(created as usize, from_requests.len(), "requests lost");
}

#[test]
fn the_report_counts_one_measured_reply_per_measured_request_and_both_in_the_throughput() {
    let r = run(&torus(4, 0.02, read_write()));
    let rr = r.request_reply.as_ref().expect("a request/reply block");
    assert!(rr.requests.delivered > 500);
    assert_eq!(rr.replies.delivered, rr.requests.delivered);
    assert_eq!(rr.round_trip.delivered, rr.requests.delivered);
    assert_eq!(r.messages.measured, 2 * rr.requests.delivered);
    assert!(!r.saturated && r.deadlock.is_none());
    let (req, rep, rt) = (
        rr.requests.latency.mean.unwrap(),
        rr.replies.latency.mean.unwrap(),
        rr.round_trip.latency.mean.unwrap(),
    );
    // A reply starts when its request's tail is absorbed: the round trip is at least
    // the two latencies together (more when the reply queues at its source).
    assert!(rt >= req + rep - 1e-9, "round trip {rt} < {req} + {rep}");
    // Every request brings a reply: 2 flits offered per request (1 + 5 for a read,
    // 5 + 1 for a write, over 2 messages), all accepted below saturation.
    let per_request = 0.75 * 6.0 + 0.25 * 6.0;
    let expect = 0.02 * per_request;
    assert!(
        (r.throughput.offered - expect).abs() < 0.1 * expect,
        "offered {} flits/node/cycle, expected about {expect}",
        r.throughput.offered
    );
    assert!((r.throughput.accepted - r.throughput.offered).abs() < 0.05 * expect);
    // Without replies the same workload offers a sixth of that.
    let mut one_way = torus(4, 0.02, read_write());
    one_way.workload.reply = None;
    let o = run(&one_way);
    assert!(o.request_reply.is_none());
    assert!(o.throughput.offered < expect / 4.0);
}

#[test]
fn a_lone_round_trip_is_the_request_zero_load_latency_plus_the_reply_one() {
    // The BookSim router (TailSent, injection and ejection channels, sequential
    // injection) as a 4×4 torus, beside the papers' router.
    let mut booksim = torus(4, 1e-12, read_write());
    let b = common::preset("booksim-min-torus8.ron");
    (booksim.router, booksim.links, booksim.switching) = (b.router, b.links, b.switching);
    for (cfg, src, dst, req, rep) in [
        (torus(4, 1e-12, read_write()), 0, 1, 1, 5),
        (torus(4, 1e-12, read_write()), 0, 10, 5, 1),
        (torus(4, 1e-12, read_write()), 3, 12, 2, 9),
        (torus(4, 1e-12, read_write()), 7, 7, 1, 1),
        (booksim.clone(), 0, 10, 1, 5),
        (booksim.clone(), 5, 6, 12, 3),
    ] {
        let topo = Topology::from_config(&cfg.topology).unwrap();
        let mut sim = common::scripted::<WormholeNet>(&cfg);
        sim.inject_request(NodeId(src), NodeId(dst), req, rep);
        assert!(sim.run_until_empty(10_000));
        let d = sim.stats.deliveries.as_ref().unwrap();
        assert_eq!(d.len(), 2, "{src}→{dst}: a request and its reply");
        let h = topo.distance(NodeId(src), NodeId(dst)) as u64;
        let zero = |len: u32| routemu::switching::zero_load::wormhole(&cfg, h, len as u64);
        let (q, p) = (&d[0], &d[1]);
        assert_eq!(
            q.absorbed - q.header.created,
            zero(req),
            "{src}→{dst} request"
        );
        assert_eq!(
            p.absorbed - p.header.created,
            zero(rep),
            "{src}→{dst} reply"
        );
        assert_eq!(
            p.header.created, q.absorbed,
            "the reply starts at the delivery"
        );
        let c = sim.stats.classes.as_ref().unwrap();
        assert_eq!(c.round_trip.count, 1);
        assert_eq!(
            c.round_trip.sum,
            zero(req) + zero(rep),
            "{src}→{dst} round trip"
        );
    }
}

#[test]
fn requests_and_replies_never_hold_each_other_vcs() {
    let mut adaptive = torus(4, 0.3, read_write());
    adaptive.router.vcs = 6;
    if let SwitchingConfig::Wormhole {
        ref mut routing, ..
    } = adaptive.switching
    {
        *routing = Routing::Adaptive;
    }
    let mut tail_sent = torus(4, 0.3, read_write());
    tail_sent.router.vc_release = routemu::config::VcRelease::TailSent;
    for (name, cfg) in [
        ("torus DOR", torus(4, 0.3, read_write())),
        ("torus adaptive", adaptive),
        ("torus DOR TailSent", tail_sent),
        ("mesh odd-even", mesh(Routing::OddEven, 0.3)),
    ] {
        let mut sim = Simulation::<WormholeNet>::build(&cfg, 0).unwrap();
        let mut replies_seen = false;
        while sim.t < 3_000 {
            sim.step();
            if sim.t.is_multiple_of(37) {
                invariants::check(&sim, cfg.router.buffer_flits)
                    .unwrap_or_else(|e| panic!("{name} at cycle {}: {e}", sim.t));
                replies_seen |= sim.stats.replies_created().messages > 0;
            }
        }
        assert!(replies_seen, "{name}: no reply created");
        assert!(sim.net.flits_live > 0, "{name}: the load was not heavy");
    }
}

#[test]
fn neither_a_dor_torus_nor_a_turn_model_mesh_deadlocks_past_saturation() {
    for (name, cfg) in [
        ("4x4 torus DOR", torus(4, 0.5, read_write())),
        ("4x4 mesh west-first", mesh(Routing::WestFirst, 0.5)),
    ] {
        let r = run(&cfg);
        assert!(r.deadlock.is_none(), "{name}: {:?}", r.deadlock);
        assert!(r.saturated, "{name}: not past saturation");
        let rr = r.request_reply.unwrap();
        assert!(rr.replies.delivered > 0, "{name}: no reply delivered");
    }
}

#[test]
fn the_report_is_the_same_on_any_number_of_threads_and_ranks() {
    let mut cfg = torus(8, 0.02, read_write());
    cfg.experiment.partition_min_nodes = Some(1);
    let report = |cfg: &HwConfig| {
        let r = run_experiment(cfg, &mut |_, _| {}).unwrap();
        common::without_split(serde_json::to_value(r).unwrap())
    };
    let one = report(&cfg);
    assert!(
        one["request_reply"]["replies"]["delivered"]
            .as_u64()
            .unwrap()
            > 0
    );
    for t in [2, 3] {
        let mut c = cfg.clone();
        c.experiment.threads = t;
        assert_eq!(one, report(&c), "{t} threads");
    }
    let (ranked, _) = common::on_local_ranks(2, || report(&cfg));
    assert_eq!(one, ranked[0], "2 ranks");
}

#[test]
fn too_few_vcs_for_two_classes_other_switching_modes_and_the_message_log_are_refused() {
    let refused = |cfg: &HwConfig, needle: &str| {
        let e = validate(cfg).map(|_| ()).unwrap_err().to_string();
        assert!(e.contains(needle), "{e}");
    };
    // Dimension order on a torus needs 2 VCs (dateline classes) per message class.
    let mut two = torus(4, 0.01, read_write());
    two.router.vcs = 2;
    refused(&two, "at least 4");
    let mut odd = mesh(Routing::DimensionOrder, 0.01);
    odd.router.vcs = 3;
    refused(&odd, "even");
    // The same machines without replies are valid.
    two.workload.reply = None;
    odd.workload.reply = None;
    assert!(validate(&two).is_ok() && validate(&odd).is_ok());
    let mut logged = torus(4, 0.01, read_write());
    logged.experiment.observe.message_log = true;
    refused(&logged, "message_log");
    let mut circuit = common::preset("circuit-hold.ron");
    circuit.workload.reply = Some(read_write());
    refused(&circuit, "workload.reply");
}
