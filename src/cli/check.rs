//! `routemu check`: validate a hardware description and explain the machine.

use crate::config::load::load_hw;
use crate::config::overrides::apply_overrides;
use crate::config::{
    ConflictStrategy, HwConfig, LinkArbiter, LinkRelease, Measure, OnReset, Routing,
    SwitchingConfig,
};
use crate::engine::machine::{validate, Machine};
use crate::foundation::error::Result;
use crate::switching::zero_load;

use std::fmt::Write;
use std::path::Path;

/// Runs `routemu check`; returns the exit status.
pub fn check(file: &Path, set: &[String]) -> Result<i32> {
    let cfg = apply_overrides(&load_hw(file)?, set)?;
    // A machine that cannot be built here is not OK here: refused with the estimate and
    // the limit (unless --force), as `run` would refuse it.
    crate::experiments::memory::enforce_memory(&cfg, &validate(&cfg)?)?;
    crate::cli::output::print(&explain(&cfg, &file.display().to_string())?)?;
    Ok(0)
}

/// The router network of a dragonfly, a flattened butterfly or a concentrated network:
/// routers, terminals, radix, diameter, bisection and the throughput bounds per terminal
/// (nothing for the other networks, whose nodes are their terminals).
fn explain_routers(t: &crate::topology::Topology, s: &mut String) {
    let net = t.router_net();
    let c = t.concentration();
    if c == 1 && t.dragonfly().is_none() && t.flatfly().is_none() {
        return;
    }
    let terminals = t.endpoints().len();
    let radix = net.degree() + c as usize;
    let _ = writeln!(
        s,
        "  routers: {} routers, {terminals} terminals ({c} per router{}), radix {radix} ({} \
         network ports + {c} terminal port(s)), diameter {} router hops{}",
        t.routers(),
        if c == 1 {
            ": the router's own processing element"
        } else {
            ", each a node linked to its router"
        },
        net.degree(),
        net.diameter(),
        if c > 1 { " (+2 terminal links)" } else { "" },
    );
    if let Some(b) = t.bisection_channels() {
        let worst = match (t.dragonfly(), t.group_shift_bound()) {
            (Some(d), Some(w)) => format!(
                "; worst case (GroupShift, minimal routing) {w:.4} = 1/(a·p) = 1/{}: a group's \
                 terminals share one global link to the next group",
                d.a * d.p
            ),
            (None, Some(w)) => format!(
                "; GroupShift (to the next first coordinate, dimension order) {w:.4} = 1/c: a \
                 router's terminals share one channel"
            ),
            _ => String::new(),
        };
        let _ = writeln!(
            s,
            "    bisection {b} channels; bounds per terminal (flits/cycle, links of one flit \
             per cycle): uniform {:.4} (the most loaded channel under minimal routing{}){worst}",
            t.capacity(),
            if c > 1 {
                ", at most the terminal link's 1"
            } else {
                ""
            }
        );
    }
}

/// The explanation `check` prints (also a validation: errors come back as errors).
pub fn explain(cfg: &HwConfig, origin: &str) -> Result<String> {
    let m = validate(cfg)?;
    let t = &m.topology;
    let mut s = String::new();
    let _ = writeln!(s, "{origin}: OK");
    if !cfg.name.is_empty() {
        let _ = writeln!(s, "  machine: {} — {}", cfg.name, cfg.description);
    }
    let _ = writeln!(
        s,
        "  topology: {}: {} nodes, degree {}, {} channels ({} physical links), diameter {}, mean distance {:.4}",
        t.describe(),
        t.nodes(),
        t.degree(),
        t.channels(),
        t.links(),
        t.diameter(),
        t.mean_distance()
    );
    explain_routers(t, &mut s);
    for w in &m.warnings {
        let _ = writeln!(s, "  warning: {w}");
    }
    let mem = crate::experiments::memory::memory_check(cfg, &m);
    let _ = writeln!(
        s,
        "  memory: {}{}",
        mem.describe(),
        if mem.fits() {
            ""
        } else {
            " — DOES NOT FIT (runs are refused without --force)"
        }
    );
    let _ = writeln!(
        s,
        "  work: {}",
        crate::experiments::memory::work(cfg, &m).describe()
    );
    match cfg.switching {
        SwitchingConfig::Wormhole { .. } => explain_wormhole(cfg, &m, &mut s),
        SwitchingConfig::Circuit { .. } => explain_circuit(cfg, &m, &mut s),
        SwitchingConfig::Deflection { .. } => explain_deflection(cfg, &m, &mut s),
        SwitchingConfig::Timeout { .. } => explain_timeout(cfg, &m, &mut s),
    }
    let w = &cfg.workload;
    // Sources a permutation maps onto themselves create nothing: the load offered per
    // node is the senders' share of rate × length, which is what a run measures.
    let pattern = &m.workload.pattern;
    let endpoints = pattern.endpoints().len();
    let silent = pattern.silent_sources();
    // A request's reply is offered with it (request/reply traffic).
    let per_sender = w.rate * m.workload.flits_per_creation();
    let flits = per_sender * (endpoints - silent) as f64 / endpoints as f64;
    let l = &cfg.links;
    // The bisection bound is a wormhole notion; a circuit's load is its links' holding
    // time, said in the circuit section above.
    let bound = match cfg.switching {
        SwitchingConfig::Wormhole { .. } => {
            let cap = t.capacity_of_links(l.width, l.duplex == crate::config::Duplex::Half);
            format!(
                " ({:.1}% of the {cap:.3} uniform-traffic bound)",
                100.0 * flits / cap
            )
        }
        SwitchingConfig::Circuit { .. } => String::new(),
        // Only hosts create worms, each at `rate`: the load is per host, the fraction of
        // its link's capacity.
        SwitchingConfig::Timeout { .. } => {
            format!(" ({:.1}% of a host link)", 100.0 * flits)
        }
        SwitchingConfig::Deflection { .. } => {
            let m = cfg.router.vcs as f64;
            let per_lane = flits / m;
            format!(
                " (λ/m = {per_lane:.4} worms per node per time unit per lane; bound 2μ/D(0) = {:.4})",
                2.0 / t.mean_distance()
            )
        }
    };
    let unit = t.endpoint_noun();
    let _ = writeln!(
        s,
        "  workload: {} messages/{unit}/cycle = {:.4} flits/{unit}/cycle{bound}; {:?}; {:?}; {:?}",
        w.rate, flits, w.length, w.pattern, w.process
    );
    if w.reply.is_some() {
        let v = cfg.router.vcs;
        let _ = writeln!(
            s,
            "    request/reply: every message is a request whose delivery sends a reply back \
             ({:.4} flits per request and reply on average); requests on VCs 0..{}, replies \
             on {}..{v} of every port, the routing inside each half",
            m.workload.flits_per_creation(),
            v / 2,
            v / 2
        );
    }
    if silent > 0 {
        let _ = writeln!(
            s,
            "    {silent} of {endpoints} sources are silent (the pattern maps them onto \
             themselves: a message to oneself never enters the network); the {} others \
             send {per_sender:.4} flits/{unit}/cycle each, so the load offered is {flits:.4} \
             flits/{unit}/cycle",
            endpoints - silent
        );
    }
    if let SwitchingConfig::Wormhole {
        routing, torus_tie, ..
    } = cfg.switching
    {
        let per_channel = crate::experiments::experiment::capacity_per_channel(cfg, t);
        match crate::routing::channel_load::channel_load(t, pattern, routing, torus_tie) {
            Some(load) => match load.bound(per_channel) {
                Some(b) => {
                    let (node, port) = load.busiest;
                    let _ = writeln!(
                        s,
                        "    this pattern's bound: {b:.4} flits/{unit}/cycle ({:.1}% offered) — \
                         {routing:?} routing loads the busiest channel (node {} port {}) with \
                         {:.4} flits per cycle per flit each sender injects{}",
                        100.0 * flits / b,
                        node.0,
                        t.port_name(port),
                        load.max,
                        match routing {
                            crate::config::Routing::DimensionOrder
                            | crate::config::Routing::Minimal => "",
                            crate::config::Routing::XyYx => {
                                "; XY-YX: half the messages in XY order, half in YX"
                            }
                            crate::config::Routing::Valiant => {
                                "; Valiant: the two phases' dimension-order loads, \
                                 averaged over the intermediate nodes (exact)"
                            }
                            crate::config::Routing::Romm => {
                                "; ROMM: the two phases' dimension-order loads, averaged \
                                 over the intermediate nodes of each pair's minimal \
                                 rectangle (exact)"
                            }
                            _ => {
                                "; adaptive: assuming the load splits evenly over the \
                                 permitted minimal ports at each hop (a bound of that \
                                 assumption)"
                            }
                        }
                    );
                }
                None => {
                    let _ = writeln!(s, "    this pattern loads no channel");
                }
            },
            None => {
                let _ = writeln!(
                    s,
                    "    this pattern's bound: not computed (networks of at most {} nodes)",
                    crate::routing::channel_load::MAX_NODES
                );
            }
        }
    }
    let e = &cfg.experiment;
    let window = match e.measure {
        Measure::Cycles(c) => format!("{c} cycles"),
        Measure::Messages(n) => format!("{n} messages"),
    };
    let _ = writeln!(
        s,
        "  experiment: seed {}, {} replication(s), warm-up {} cycles, measure {window}, drain limit {}, deadlock watchdog {} cycles",
        e.seed, e.replications, e.warmup, e.drain_limit, e.deadlock_cycles
    );
    Ok(s)
}

fn explain_wormhole(cfg: &HwConfig, m: &Machine, s: &mut String) {
    let (t, r, l) = (&m.topology, &cfg.router, &cfg.links);
    let p = &r.pipeline;
    let len = m.workload.length.mean();
    let _ = writeln!(
        s,
        "  router: {0}×{0} crossbar (input speedup {1}), {2} VCs × {3} flits per port, {4} DMA engines, {5:?} arbiters",
        t.degree() + 1,
        r.speedup,
        r.vcs,
        r.buffer_flits,
        m.dma,
        r.arbiter
    );
    let _ = writeln!(
        s,
        "  routing controller: {} server(s), route {} cycle(s) per header",
        r.controller.servers, r.controller.route
    );
    let credit = l.credit_latency.unwrap_or(l.latency);
    let per_hop = zero_load::wormhole_router(cfg) + l.latency;
    let _ = writeln!(
        s,
        "  pipeline: route {} + VC alloc {} + switch alloc {} + traversal {}, link {} (credit {}), width {} flit(s)/cycle: {} cycle(s) per hop",
        r.controller.route, p.vc_alloc, p.switch_alloc, p.switch_traversal, l.latency, credit, l.width, per_hop
    );
    let SwitchingConfig::Wormhole {
        routing,
        selection,
        unsafe_routing,
        torus_vcs,
        torus_tie,
        valiant_intermediate,
    } = cfg.switching
    else {
        return;
    };
    let ni = &r.ni;
    let share = |w: Option<u32>| {
        w.map_or(format!("each engine {} flit(s)/cycle", l.width), |w| {
            format!("{w} flit(s)/cycle shared by the engines")
        })
    };
    let _ = writeln!(
        s,
        "  network interface: injection {} (+{} cycle(s)), ejection {} ({} cycle(s) to memory); \
         output VCs reallocated at {:?}",
        share(ni.injection),
        ni.injection_latency,
        share(ni.ejection),
        ni.ejection_latency,
        r.vc_release
    );
    let classes = match (
        routing,
        matches!(t.router_net(), crate::topology::Topology::Torus(_)),
        unsafe_routing,
    ) {
        (_, _, true) => "no deadlock-avoidance classes (unsafe_routing: may deadlock)".to_string(),
        (Routing::Minimal, _, _) if t.dragonfly().is_some() => format!(
            "local–global–local; VCs 0..{h} before the global hop, {h}..{} on and after it \
             (BookSim's VC 0 and VC 1 of min_dragonflynew); terminal links every VC",
            r.vcs,
            h = r.vcs / 2
        ),
        (Routing::Minimal, _, _) => "dimension order, one hop per dimension; every VC usable".into(),
        (Routing::Valiant | Routing::UgalLocal | Routing::UgalGlobal, _, _)
            if t.dragonfly().is_some()
                && valiant_intermediate == crate::config::ValiantIntermediate::Router =>
        {
            format!(
                "{}through a random intermediate router: VCs 0..{a} to its group, {a}..{b} \
                 to the router, {b}..{c} from it to the global hop towards the destination, \
                 {c}..{} from that hop on (BookSim's ugal_dragonflynew has 3, with a \
                 dependency cycle); terminal links every VC",
                ugal_rule(routing),
                r.vcs,
                a = r.vcs / 4,
                b = 2 * r.vcs / 4,
                c = 3 * r.vcs / 4
            )
        }
        (Routing::Valiant | Routing::UgalLocal | Routing::UgalGlobal, _, _)
            if t.dragonfly().is_some() =>
        {
            format!(
            "{}through a random intermediate group: VCs 0..{a} to that group, {a}..{b} from it \
             to the global hop towards the destination, {b}..{} from that hop on (BookSim's \
             VCs 0, 1, 2 of ugal_dragonflynew); terminal links every VC",
            ugal_rule(routing),
            r.vcs,
            a = r.vcs / 3,
            b = 2 * r.vcs / 3
        )
        }
        (Routing::UgalLocal, _, _) => format!(
            "{}the dimension-order route to the destination (VCs {h}..{}) or through a \
             random intermediate router (VCs 0..{h}, then {h}..{})",
            ugal_rule(routing),
            r.vcs,
            r.vcs,
            h = r.vcs / 2
        ),
        (Routing::DimensionOrder, true, _) if torus_vcs == crate::config::TorusVcs::WrapSplit => {
            "VCs split in halves per ring: one for messages crossing the wrap-around, one for the others (BookSim)".into()
        }
        (Routing::DimensionOrder, true, _) => {
            "dateline classes: even VCs before the wrap-around, odd VCs after".into()
        }
        (Routing::DimensionOrder, false, _) => "every VC usable".into(),
        (Routing::Adaptive, true, _) => format!(
            "escape VCs 0 and 1 (dateline classes), adaptive VCs 2..{}, {selection:?} selection",
            r.vcs
        ),
        (Routing::Adaptive, false, _) => format!(
            "escape VC 0, adaptive VCs 1..{}, {selection:?} selection",
            r.vcs
        ),
        (Routing::XyYx, _, _) => format!(
            "XY messages on VCs 0..{h}, YX messages on VCs {h}..{}",
            r.vcs,
            h = r.vcs / 2
        ),
        (Routing::Valiant | Routing::Romm, torus, _) => format!(
            "phase 1 (to the intermediate node) on VCs 0..{h}, phase 2 on VCs {h}..{}{}",
            r.vcs,
            if torus {
                match torus_vcs {
                    crate::config::TorusVcs::WrapSplit => {
                        "; each phase's VCs split in halves per ring (BookSim)"
                    }
                    crate::config::TorusVcs::Dateline => {
                        "; each phase's VCs in dateline classes (even before the wrap-around, odd after)"
                    }
                }
            } else {
                ""
            },
            h = r.vcs / 2
        ),
        (Routing::MinAdapt, true, _) => format!(
            "BookSim's min_adapt_torus: escape VCs 0 and 1 (split per ring), adaptive VC 3; \
             an escaped message stays on escape VCs; {selection:?} selection"
        ),
        (Routing::MinAdapt, false, _) => format!(
            "BookSim's min_adapt_mesh: escape VC 0, adaptive VCs 1..{}; an escaped message \
             stays on escape VCs; {selection:?} selection",
            r.vcs
        ),
        (_, _, _) => format!(
            "turn model: every VC usable, no escape channels, {selection:?} selection"
        ),
    };
    let tie = match t {
        crate::topology::Topology::Torus(tt) if tt.grid.k % 2 == 0 => match torus_tie {
            crate::config::TorusTie::Parity => {
                "; offsets of k/2 go up from even coordinates, down from odd ones"
            }
            crate::config::TorusTie::Random => {
                "; offsets of k/2 go either way by a coin per message (BookSim)"
            }
        },
        _ => "",
    };
    let _ = writeln!(
        s,
        "  switching: wormhole, {routing:?} routing; {classes}{tie}"
    );
    let need = zero_load::wormhole_streaming_depth(cfg);
    let d = t.mean_distance();
    if let Some(paths) = zero_load_paths(cfg, t, len.round() as u64) {
        let _ = writeln!(
            s,
            "  zero-load latency of a {len:.1}-flit message between terminals: {paths}; \
             buffers of {need} flits or more keep the body from stalling on a link of \
             links.latency (have {})",
            r.buffer_flits
        );
        return;
    }
    let _ = writeln!(
        s,
        "  zero-load latency of a {len:.1}-flit message: {} cycles at 1 hop, {:.1} at the mean distance; \
         buffers of {need} flits or more keep the body from stalling (have {})",
        zero_load::wormhole(cfg, 1, len.round() as u64),
        zero_load::wormhole_at(cfg, d, len.round() as u64),
        r.buffer_flits
    );
}

/// The zero-load latencies of the kinds of path between two terminals of a dragonfly, a
/// flattened butterfly or a concentrated network, whose links differ in latency (global,
/// terminal links): the closed form with each path's own link latencies.
fn zero_load_paths(cfg: &HwConfig, t: &crate::topology::Topology, len: u64) -> Option<String> {
    let l = &cfg.links;
    let c = t.concentration();
    if c == 1 && t.dragonfly().is_none() && t.flatfly().is_none() {
        return None;
    }
    let term = if c > 1 {
        l.latency_terminal.unwrap_or(l.latency)
    } else {
        0
    };
    let ends = if c > 1 { 2 } else { 0 };
    // (name, router-to-router hops, their links' latency).
    let mut paths: Vec<(String, u64, u64)> = Vec::new();
    if let Some(d) = t.dragonfly() {
        let g = l.latency_global.unwrap_or(l.latency);
        paths.push(("on one router".into(), 0, 0));
        paths.push(("one local hop".into(), 1, l.latency));
        paths.push(("global".into(), 1, g));
        if d.a > 1 {
            paths.push(("local–global–local".into(), 3, 2 * l.latency + g));
        }
    } else {
        let diameter = t.router_net().diameter() as u64;
        for h in [0, 1, diameter] {
            if paths.last().is_none_or(|p| p.1 != h) {
                paths.push((format!("{h} router hop(s)"), h, h * l.latency));
            }
        }
    }
    let text: Vec<String> = paths
        .into_iter()
        .filter(|p| c > 1 || p.1 > 0)
        .map(|(name, h, sum)| {
            let hops = h + ends;
            let z = zero_load::wormhole(cfg, hops, len) - hops * l.latency + sum + ends * term;
            format!("{z} cycles {name}")
        })
        .collect();
    Some(text.join(", "))
}

fn explain_deflection(cfg: &HwConfig, m: &Machine, s: &mut String) {
    let SwitchingConfig::Deflection {
        hop_limit,
        retry,
        retry_dist,
        resume,
        abort,
        victim,
        max_pending,
    } = cfg.switching
    else {
        return;
    };
    let (t, l) = (&m.topology, &cfg.links);
    let lanes = cfg.router.vcs;
    let r = zero_load::router_delay(cfg);
    let _ = writeln!(
        s,
        "  router: {r} cycle(s) per hop; {lanes} lane(s) per link, each one flit per cycle; link latency {}",
        l.latency
    );
    let limit = hop_limit.map_or("no hop limit".into(), |h| {
        format!("hop limit ⌊{h} × distance⌋, drop signalled {abort:?}")
    });
    let pending = max_pending.map_or("unbounded".into(), |p| format!("at most {p}"));
    let _ = writeln!(
        s,
        "  switching: deflection (WDVC, persistent rule), {limit}; retry after {retry} cycles \
         ({retry_dist:?}), preempted worms resume {resume:?}, victim {victim:?}; source memory {pending} messages"
    );
    let len = m.workload.length.mean();
    let d = t.mean_distance();
    let _ = writeln!(
        s,
        "  time unit (mean worm length) {len:.2} cycles; D(0) = {d:.4}; zero-load latency of a {}-flit worm: {} cycles at 1 hop, {} at {} hops",
        len.round(),
        zero_load::deflection(cfg, 1, len.round() as u64),
        zero_load::deflection(cfg, d.round() as u64, len.round() as u64),
        d.round()
    );
}

fn explain_timeout(cfg: &HwConfig, m: &Machine, s: &mut String) {
    let SwitchingConfig::Timeout {
        timeout,
        retry_delay,
        arbiter,
        release,
        on_reset,
        ..
    } = cfg.switching
    else {
        return;
    };
    let t = &m.topology;
    let l = cfg.links.latency;
    let b = cfg.router.buffer_flits as u64;
    let _ = writeln!(
        s,
        "  switches: {b} flits of buffer per input port ({}), one cycle per hop, {} \
         arbitration among headers waiting for a link, a link free again {}; links {l} \
         cycle(s) unless the graph says otherwise",
        if b >= 2 * l {
            "covers a link's round trip: a lone worm streams at full rate".to_string()
        } else {
            format!(
                "less than a link's round trip 2ℓ = {}: worms are throttled",
                2 * l
            )
        },
        match arbiter {
            LinkArbiter::Fifo => "first-come-first-served",
            LinkArbiter::RoundRobin => "round-robin",
        },
        match release {
            LinkRelease::TailSent => "the cycle after the tail crossed it (paper 002)",
            LinkRelease::TailCredit => "when the tail's credit is back",
        }
    );
    let _ = writeln!(
        s,
        "  switching: wormhole with timeout {}; a reset worm {}",
        timeout.map_or(
            "none (plain wormhole, which can deadlock)".into(),
            |t| format!("{t} cycles")
        ),
        match on_reset {
            OnReset::Requeue if retry_delay == 0 =>
                "rejoins the tail of its host queue at once".to_string(),
            OnReset::Requeue =>
                format!("rejoins the tail of its host queue {retry_delay} cycles later"),
            OnReset::Discard => "is dropped and counted as lost (no retry)".to_string(),
        }
    );
    let len = m.workload.length.mean();
    let d = t.mean_distance();
    let _ = writeln!(
        s,
        "  mean route {d:.3} links between hosts; zero-load latency of a {len:.0}-flit worm \
         over it {:.1} cycles (links·ℓ + L with ℓ = {l})",
        zero_load::timeout_mean(d, len, l)
    );
}

fn explain_circuit(cfg: &HwConfig, m: &Machine, s: &mut String) {
    let SwitchingConfig::Circuit {
        strategy,
        backoff,
        backoff_dist,
        ack,
        hold_timeout,
    } = cfg.switching
    else {
        return;
    };
    let (t, r, l) = (&m.topology, &cfg.router, &cfg.links);
    let c = &r.controller;
    let _ = writeln!(
        s,
        "  router: {0}×{0} crossbar, {1} sending and {1} receiving DMA engines; routing controller: \
         {2} server(s), verify {3}, connect {4}, release {5} cycle(s)",
        t.degree() + 1,
        m.dma,
        c.servers,
        c.verify,
        c.link_conn,
        c.release
    );
    let half = cfg.links.duplex == crate::config::Duplex::Half;
    let n_links = if half { t.links() } else { t.channels() };
    let _ = writeln!(
        s,
        "  links: latency {}, width {} flit(s)/cycle, {:?} duplex: {n_links} links can each carry one circuit",
        l.latency, l.width, l.duplex
    );
    let path = match strategy {
        ConflictStrategy::Hold => "e-cube / dimension-order path, wait in FIFO at a busy link",
        ConflictStrategy::Drop => {
            "e-cube / dimension-order path, release all and retry after a back-off"
        }
        ConflictStrategy::Adaptive => {
            "random free minimal link, release all and retry after a back-off when none is free"
        }
    };
    let backoff = match (strategy, hold_timeout) {
        (ConflictStrategy::Hold, None) => String::new(),
        (ConflictStrategy::Hold, Some(h)) => format!(
            "; a request waiting {h} cycles gives up, releases and retries after a back-off of \
             {backoff} cycles ({backoff_dist:?})"
        ),
        _ => format!("; back-off {backoff} cycles ({backoff_dist:?})"),
    };
    let _ = writeln!(
        s,
        "  switching: circuit, {strategy:?} ({path}){backoff}; ack {ack:?}"
    );
    let len = m.workload.length.mean().round() as u64;
    let d = t.mean_distance();
    let _ = writeln!(
        s,
        "  zero-load latency of a {len}-flit message: {} cycles at 1 hop, {} at {} hops (mean distance {d:.3})",
        zero_load::circuit(cfg, 1, len),
        zero_load::circuit(cfg, d.round() as u64, len),
        d.round()
    );
    let held = cfg.workload.rate * t.nodes() as f64 * d * (len as f64 / l.width as f64);
    let _ = writeln!(
        s,
        "  data alone keeps {:.1}% of the links busy (λ·N·M·T_data / links); set-up and release add to it",
        100.0 * held / n_links.max(1) as f64
    );
}

/// The words `check` puts before the VC classes of a routing that decides at the source
/// router: BookSim's UGAL rule, on the source router's ports (UGAL-L) or on the source
/// group's global channels (UGAL-G).
fn ugal_rule(routing: Routing) -> &'static str {
    match routing {
        Routing::UgalLocal => {
            "at the source router, minimal if used credits of the minimal port <= 2 x those \
             of Valiant's first port + 30 (BookSim's ugal), else "
        }
        Routing::UgalGlobal => {
            "at the source router, minimal if used credits of the minimal route's global \
             channel out of the source group <= 2 x those of Valiant's + 30 (UGAL-G, \
             BookSim's constants), else "
        }
        _ => "",
    }
}
