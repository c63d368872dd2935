//! Checks that turn a configuration into a machine routemu can build, or into a clear
//! error saying which field is wrong and why. Nothing here allocates per-node state, so
//! `routemu check` is instant even for a million nodes.

use crate::config::MAX_DELAY;
use crate::config::{
    AckDelay, ArrivalProcess, BackoffDist, ConflictStrategy, Duplex, HwConfig, Measure,
    NetworkInterface, PatternConfig, SwitchingConfig, VcRelease,
};
use crate::foundation::error::{Error, Result};
use crate::foundation::limits::{MAX_MEASURED_MESSAGES, MAX_REPLICATIONS, MAX_RUN_CYCLES};
use crate::routing::{RoutingFn, MAX_VCS};
use crate::topology::Topology;
use crate::traffic::Workload;

/// A validated configuration: the pieces the engine builds from.
#[derive(Clone, Debug)]
pub struct Machine {
    /// The topology.
    pub topology: Topology,
    /// The routing function of wormhole switching (None for circuit switching, whose
    /// strategies route by themselves).
    pub routing: Option<RoutingFn>,
    /// DMA engines per node (the default resolved).
    pub dma: u32,
    /// The workload.
    pub workload: Workload,
    /// What is valid but likely not what was meant (a timeout shorter than a link's round
    /// trip): the command line prints them before a run and `check` lists them.
    pub warnings: Vec<String>,
}

/// Refuses a run length whose cycle arithmetic could overflow: warm-up plus window at
/// most [`MAX_RUN_CYCLES`], a message-measured window at most [`MAX_MEASURED_MESSAGES`].
pub fn check_run_length(warmup: u64, measure: Measure) -> Result<()> {
    let (what, total) = match measure {
        Measure::Cycles(c) => ("warm-up plus measured cycles", warmup.checked_add(c)),
        Measure::Messages(m) => {
            if m > MAX_MEASURED_MESSAGES {
                return Err(Error::config(format!(
                    "experiment.measure = Messages({m}) (--messages): at most \
                     {MAX_MEASURED_MESSAGES} messages"
                )));
            }
            ("warm-up", Some(warmup))
        }
    };
    match total {
        Some(t) if t <= MAX_RUN_CYCLES => Ok(()),
        _ => Err(Error::config(format!(
            "experiment.warmup = {warmup}, measure = {measure:?} (--warmup, --cycles): the \
             {what} must not exceed {MAX_RUN_CYCLES} (2^60) cycles"
        ))),
    }
}

/// Checks every section of `cfg`.
pub fn validate(cfg: &HwConfig) -> Result<Machine> {
    let topology = Topology::from_config(&cfg.topology)?;
    if topology.degree() >= 64 {
        return Err(Error::config(format!(
            "the topology has {} ports per node; routemu's routers have at most 63",
            topology.degree()
        )));
    }
    let r = &cfg.router;
    let today = matches!(
        topology,
        Topology::Dragonfly(_) | Topology::FlatFly(_) | Topology::Concentrated(_)
    );
    if today && !matches!(cfg.switching, SwitchingConfig::Wormhole { .. }) {
        return Err(Error::config(format!(
            "{} runs wormhole switching (switching: Wormhole(routing: ...)); the dragonfly, \
             the flattened butterfly and concentration (more than one terminal per router, \
             topology c) are not built for the other modes",
            topology.describe()
        )));
    }
    let hosts = matches!(topology, Topology::Hosts(_));
    if hosts != matches!(cfg.switching, SwitchingConfig::Timeout { .. }) {
        return Err(Error::config(if hosts {
            "a host/switch network (paper 002) runs timeout switching: switching: \
             Timeout(timeout: 20)"
                .to_string()
        } else {
            format!(
                "timeout switching (paper 002) runs on host/switch networks \
                 (topology: SwitchedTorus(k: 3, hosts: 1) or HostGraph(file: ...)); this \
                 machine is {}",
                topology.describe()
            )
        }));
    }
    let routing = match cfg.switching {
        SwitchingConfig::Wormhole {
            routing,
            unsafe_routing,
            torus_vcs,
            torus_tie,
            valiant_intermediate,
            ..
        } => {
            // Request/reply traffic: the routing runs inside each message class's half
            // of the VCs (`Route::in_class`).
            let vcs = match cfg.workload.reply {
                Some(_) => class_vcs(
                    &topology,
                    routing,
                    unsafe_routing,
                    valiant_intermediate,
                    r.vcs,
                )?,
                None => r.vcs,
            };
            Some(
                RoutingFn::build(
                    &topology,
                    routing,
                    unsafe_routing,
                    vcs,
                    valiant_intermediate,
                )?
                .with_torus_vcs(torus_vcs)
                .with_torus_tie(torus_tie)
                // UgalLocal and UgalGlobal read used credits: the port's VCs' buffers
                // less its free credits (BookSim's GetUsedCredit over all VCs of the port).
                .with_port_flits(r.vcs.saturating_mul(r.buffer_flits)),
            )
        }
        SwitchingConfig::Circuit { .. } => {
            check_circuit(cfg, &topology)?;
            None
        }
        SwitchingConfig::Deflection { .. } => {
            check_deflection(cfg, &topology)?;
            None
        }
        SwitchingConfig::Timeout { .. } => {
            check_timeout(cfg, &topology)?;
            None
        }
    };
    if r.buffer_flits == 0 {
        return Err(Error::config(
            "router.buffer_flits = 0: a virtual channel needs at least one flit of buffer",
        ));
    }
    if r.buffer_flits > u16::MAX as u32 {
        return Err(Error::config(format!(
            "router.buffer_flits = {}: at most {}",
            r.buffer_flits,
            u16::MAX
        )));
    }
    let dma = r.dma.unwrap_or(topology.dimensions() as u32);
    if dma == 0 || dma > MAX_VCS {
        return Err(Error::config(format!(
            "router.dma = {dma}: a node needs 1 to {MAX_VCS} DMA engines"
        )));
    }
    if topology.degree() + dma as usize > crate::router::crossbar::MAX_XPUTS {
        return Err(Error::config(format!(
            "{} network ports and {dma} DMA engines: the crossbar has at most {} inputs \
             (ports plus injection engines)",
            topology.degree(),
            crate::router::crossbar::MAX_XPUTS
        )));
    }
    if r.speedup == 0 || r.speedup as usize > topology.degree() + 1 {
        return Err(Error::config(format!(
            "router.speedup = {}: must be 1 to {} (the crossbar's outputs)",
            r.speedup,
            topology.degree() + 1
        )));
    }
    if r.switch_iterations == 0 || r.switch_iterations > 16 {
        return Err(Error::config(format!(
            "router.switch_iterations = {}: must be 1 to 16",
            r.switch_iterations
        )));
    }
    check_allocators(r)?;
    let c = &r.controller;
    if c.servers == 0 || c.servers > 64 {
        return Err(Error::config(format!(
            "router.controller.servers = {}: must be 1 to 64",
            c.servers
        )));
    }
    for (name, v) in [
        ("route", c.route),
        ("verify", c.verify),
        ("link_conn", c.link_conn),
        ("release", c.release),
    ] {
        if v == 0 || v > MAX_DELAY {
            return Err(Error::config(format!(
                "router.controller.{name} = {v}: a controller activity takes 1 to {MAX_DELAY} cycles"
            )));
        }
    }
    let p = &r.pipeline;
    for (name, v) in [
        ("vc_alloc", p.vc_alloc),
        ("switch_alloc", p.switch_alloc),
        ("switch_traversal", p.switch_traversal),
    ] {
        if v > MAX_DELAY {
            return Err(Error::config(format!(
                "router.pipeline.{name} = {v}: at most {MAX_DELAY} cycles"
            )));
        }
    }
    let l = &cfg.links;
    let credit = l.credit_latency.unwrap_or(l.latency);
    if l.latency == 0 || credit == 0 || l.latency > MAX_DELAY || credit > MAX_DELAY {
        return Err(Error::config(format!(
            "links.latency = {}, credit latency = {credit}: each must be 1 to {MAX_DELAY} cycles \
             (a link is a register pipeline)",
            l.latency
        )));
    }
    for (name, v) in [
        ("latency_global", l.latency_global),
        ("latency_terminal", l.latency_terminal),
    ] {
        if let Some(v) = v {
            if v == 0 || v > MAX_DELAY {
                return Err(Error::config(format!(
                    "links.{name} = {v}: must be 1 to {MAX_DELAY} cycles"
                )));
            }
        }
    }
    if l.width == 0 || l.width > u16::MAX as u32 {
        return Err(Error::config(format!(
            "links.width = {}: must be 1 to {} flits per cycle",
            l.width,
            u16::MAX
        )));
    }
    if l.duplex == Duplex::Half && routing.is_some() {
        return Err(Error::config(
            "links.duplex = Half: half-duplex links (one circuit per physical link) are a \
             circuit-switching notion; wormhole channels are full duplex",
        ));
    }
    check_network_interface(cfg, routing.is_some())?;
    if p.speculative && (routing.is_none() || p.switch_alloc != 0) {
        return Err(Error::config(
            "router.pipeline.speculative: speculative switch allocation overlaps the VC and \
             switch allocation of a wormhole router (wormhole switching, \
             router.pipeline.switch_alloc = 0)",
        ));
    }
    // The memory the routers' tables need is checked against the machine's limit by
    // `limits::enforce_memory` before a run starts (and reported by `routemu check`),
    // where `--force` can overrule it; validity does not depend on the machine.
    if let ArrivalProcess::Saturated { depth } = cfg.workload.process {
        if !matches!(cfg.switching, SwitchingConfig::Timeout { .. }) {
            return Err(Error::config(
                "workload.process = Saturated (sources that always have messages waiting) \
                 is supported by timeout switching (paper 002); use Poisson or Bernoulli here",
            ));
        }
        if !(1..=MAX_SATURATED_DEPTH).contains(&depth) {
            return Err(Error::config(format!(
                "workload.process = Saturated(depth: {depth}): a source keeps 1 to \
                 {MAX_SATURATED_DEPTH} messages waiting"
            )));
        }
        let waiting = depth as u64 * topology.endpoints().len() as u64;
        if waiting > MAX_SATURATED_WAITING {
            return Err(Error::config(format!(
                "workload.process = Saturated(depth: {depth}) on {} sources keeps {waiting} \
                 messages in memory, more than {MAX_SATURATED_WAITING}: use a smaller depth",
                topology.endpoints().len()
            )));
        }
    }
    if cfg.workload.reply.is_some() && routing.is_none() {
        return Err(Error::config(
            "workload.reply: request/reply traffic runs on wormhole switching, whose \
             requests and replies have VCs of their own; this machine's switching mode has \
             no message classes — leave workload.reply out",
        ));
    }
    if cfg.workload.reply.is_some() && cfg.experiment.observe.message_log {
        return Err(Error::config(
            "experiment.observe.message_log (--message-log) with workload.reply: the \
             per-message log numbers each source's messages densely, and replies are \
             numbered apart (stats::msglog); request/reply runs report their classes in \
             the JSON's request_reply instead",
        ));
    }
    let workload = Workload::new(&cfg.workload, &topology, cfg.experiment.seed)?;
    check_unused_router_fields(cfg)?;
    check_experiment(cfg)?;
    let warnings = check_graph_delays(cfg, &topology)?;
    Ok(Machine {
        topology,
        routing,
        dma,
        workload,
        warnings,
    })
}

/// The VCs per port of each message class under request/reply traffic: half of
/// `vcs`, which must be even and give each class what `routing` needs.
fn class_vcs(
    topology: &Topology,
    routing: crate::config::Routing,
    unsafe_routing: bool,
    intermediate: crate::config::ValiantIntermediate,
    vcs: u32,
) -> Result<u32> {
    let need = RoutingFn::min_vcs(topology, routing, unsafe_routing, intermediate);
    if !vcs.is_multiple_of(2) || vcs < 2 * need || vcs > MAX_VCS {
        return Err(Error::config(format!(
            "router.vcs = {vcs} with workload.reply: requests and replies each have half of \
             every port's virtual channels (requests 0..V/2, replies V/2..V), and {routing:?} \
             routing on this topology needs {need} per class, so router.vcs must be even, \
             at least {} and at most {MAX_VCS}",
            2 * need
        )));
    }
    Ok(vcs / 2)
}

/// Checks the network interface, the VC release rule and the destination pattern against
/// the switching mode: they are wormhole notions.
fn check_network_interface(cfg: &HwConfig, wormhole: bool) -> Result<()> {
    let r = &cfg.router;
    let ni = &r.ni;
    if !wormhole {
        if *ni != NetworkInterface::default() || r.vc_release != VcRelease::default() {
            return Err(Error::config(
                "router.ni and router.vc_release describe a wormhole router's network \
                 interface and virtual channels; leave them at their defaults for this \
                 switching mode",
            ));
        }
        if cfg.workload.fixed_points == crate::config::FixedPoints::ToSelf {
            return Err(Error::config(
                "workload.fixed_points = ToSelf (messages to their own source) is supported \
                 by wormhole switching, which ejects them through the source's router; use \
                 Silent here",
            ));
        }
        if cfg.workload.pattern == PatternConfig::UniformWithSelf {
            return Err(Error::config(
                "workload.pattern = UniformWithSelf (messages to their own source) is \
                 supported by wormhole switching, which ejects them through the source's \
                 router; use Uniform here",
            ));
        }
        return Ok(());
    }
    let width = cfg.links.width;
    for (name, w) in [("injection", ni.injection), ("ejection", ni.ejection)] {
        if let Some(w) = w {
            if w == 0 || w % width != 0 || w > u16::MAX as u32 {
                return Err(Error::config(format!(
                    "router.ni.{name} = {w}: the channel carries a whole number of link \
                     widths ({width} flit(s)) per cycle, at least one"
                )));
            }
        }
    }
    if ni.injection_latency > MAX_DELAY {
        return Err(Error::config(format!(
            "router.ni.injection_latency = {}: at most {MAX_DELAY} cycles",
            ni.injection_latency
        )));
    }
    if let Some(c) = ni.credit_latency.filter(|&c| c > MAX_DELAY) {
        return Err(Error::config(format!(
            "router.ni.credit_latency = {c}: at most {MAX_DELAY} cycles"
        )));
    }
    if ni.ejection_latency == 0 || ni.ejection_latency > MAX_DELAY {
        return Err(Error::config(format!(
            "router.ni.ejection_latency = {}: 1 to {MAX_DELAY} cycles (writing a flit into \
             memory takes a cycle)",
            ni.ejection_latency
        )));
    }
    Ok(())
}

/// Checks what only circuit switching needs.
fn check_circuit(cfg: &HwConfig, topology: &Topology) -> Result<()> {
    let SwitchingConfig::Circuit {
        strategy,
        backoff,
        ack,
        hold_timeout,
        ..
    } = cfg.switching
    else {
        return Ok(());
    };
    if matches!(topology, Topology::ManhattanStreet(_)) {
        return Err(Error::config(
            "circuit switching runs on hypercubes, tori and meshes (papers 000 and 001); the \
             Manhattan Street network is for deflection wormhole routing",
        ));
    }
    if let Some(h) = hold_timeout {
        if strategy != ConflictStrategy::Hold {
            return Err(Error::config(format!(
                "switching.hold_timeout is for the Hold strategy; {strategy:?} never waits at a link"
            )));
        }
        if h == 0 || h > MAX_DELAY {
            return Err(Error::config(format!(
                "switching.hold_timeout = {h}: must be 1 to {MAX_DELAY} cycles"
            )));
        }
    }
    let backs_off = strategy != ConflictStrategy::Hold || hold_timeout.is_some();
    if backs_off && (backoff == 0 || backoff > MAX_DELAY) {
        return Err(Error::config(format!(
            "switching.backoff = {backoff}: the {strategy:?} strategy backs off 1 to {MAX_DELAY} \
             cycles before retrying (0 would retry in the cycle it aborted)"
        )));
    }
    let (AckDelay::Total(a) | AckDelay::PerHop(a)) = ack;
    if a == 0 || a > MAX_DELAY {
        return Err(Error::config(format!(
            "switching.ack = {ack:?}: the ack takes 1 to {MAX_DELAY} cycles (it crosses links)"
        )));
    }
    let dma = cfg.router.dma.unwrap_or(topology.dimensions() as u32);
    if dma as usize > topology.degree() {
        return Err(Error::config(format!(
            "router.dma = {dma}: a node has {} network ports, so no more than {} circuits can \
             leave it at once; more sending DMA engines than ports could never all be busy",
            topology.degree(),
            topology.degree()
        )));
    }
    Ok(())
}

/// Checks what only deflection switching needs.
fn check_deflection(cfg: &HwConfig, topology: &Topology) -> Result<()> {
    let SwitchingConfig::Deflection {
        hop_limit,
        retry,
        retry_dist,
        max_pending,
        ..
    } = cfg.switching
    else {
        return Ok(());
    };
    if !matches!(topology, Topology::ManhattanStreet(_)) {
        return Err(Error::config(format!(
            "deflection switching (paper 003) runs on the Manhattan Street network \
             (topology: ManhattanStreet(k: 6)), whose nodes have as many input as output \
             links, which is what guarantees a transit worm a virtual channel; this machine \
             is {}",
            topology.describe()
        )));
    }
    if let Topology::ManhattanStreet(ms) = topology {
        if ms.k < 4 {
            return Err(Error::config(format!(
                "topology: ManhattanStreet(k = {}): deflection needs k ≥ 4 (at k = 2 every \
                 row and column is a pair of opposite links, not a Manhattan Street grid)",
                ms.k
            )));
        }
    }
    let vcs = cfg.router.vcs;
    if vcs == 0 || vcs > MAX_VCS {
        return Err(Error::config(format!(
            "router.vcs = {vcs}: deflection switching needs 1 to {MAX_VCS} virtual channels \
             (lanes) per link"
        )));
    }
    if let Some(h) = hop_limit {
        if !(h.is_finite() && h >= 1.0) {
            return Err(Error::config(format!(
                "switching.hop_limit = Some({}): the limit is a factor h ≥ 1 of the shortest \
                 distance (a worm on a shortest path must be able to arrive); None for no limit",
                crate::foundation::limits::show(h)
            )));
        }
        if h > 1000.0 {
            return Err(Error::config(format!(
                "switching.hop_limit = Some({h}): at most 1000 (use None for no limit)"
            )));
        }
    }
    let most = match retry_dist {
        BackoffDist::Uniform => MAX_DELAY / 2,
        _ => MAX_DELAY,
    };
    if retry == 0 || retry > most {
        return Err(Error::config(format!(
            "switching.retry = {retry}: a blocked or preempted worm waits 1 to {most} cycles \
             on average before it tries again"
        )));
    }
    if max_pending == Some(0) {
        return Err(Error::config(
            "switching.max_pending = Some(0): a node must be able to hold at least one \
             message (None: unbounded)",
        ));
    }
    let l = &cfg.links;
    if l.width != 1 {
        return Err(Error::config(format!(
            "links.width = {}: in deflection switching each virtual channel is a lane carrying \
             one flit per cycle of its own (paper 003's full-rate channels); use router.vcs \
             for more lanes",
            l.width
        )));
    }
    if l.duplex == Duplex::Half {
        return Err(Error::config(
            "links.duplex = Half: the Manhattan Street network's links are one-way",
        ));
    }
    if l.credit_latency.is_some() {
        return Err(Error::config(
            "links.credit_latency: deflection switching has no credits (worms are never \
             buffered at intermediate nodes)",
        ));
    }
    Ok(())
}

/// The allocators (`router.allocator`, `vc_allocator`, `sw_allocator`) and the settings
/// only some of them read: iSLIP's iterations, `switch_iterations` (routemu's own
/// switch allocator) and `arbiter` (the separable ones).
fn check_allocators(r: &crate::config::RouterConfig) -> Result<()> {
    use crate::config::{Allocator, Arbiter};
    let vc = r.vc_allocator.unwrap_or(r.allocator);
    let sw = r.sw_allocator.unwrap_or(r.allocator);
    for (name, a) in [
        ("router.allocator", Some(r.allocator)),
        ("router.vc_allocator", r.vc_allocator),
        ("router.sw_allocator", r.sw_allocator),
    ] {
        if let Some(Allocator::ISlip { iterations }) = a {
            if iterations == 0 || iterations > 16 {
                return Err(Error::config(format!(
                    "{name} = ISlip(iterations: {iterations}): iterations must be 1 to 16"
                )));
            }
        }
    }
    if r.switch_iterations != 1 && sw != Allocator::PortLevel {
        return Err(Error::config(format!(
            "router.switch_iterations = {}: it sets the passes of routemu's switch allocator \
             (PortLevel), not of {sw:?}; for several iSLIP iterations use \
             ISlip(iterations: N)",
            r.switch_iterations
        )));
    }
    let separable = |a: Allocator| {
        matches!(
            a,
            Allocator::PortLevel | Allocator::SeparableInputFirst | Allocator::SeparableOutputFirst
        )
    };
    if r.arbiter != Arbiter::RoundRobin && !separable(vc) && !separable(sw) {
        return Err(Error::config(format!(
            "router.arbiter = {:?}: the arbiters belong to the separable allocators \
             (PortLevel, SeparableInputFirst, SeparableOutputFirst), and the VC allocator is {vc:?}, \
             the switch allocator {sw:?} (iSLIP's pointers are round-robin, the \
             wavefront has none); leave it at RoundRobin",
            r.arbiter
        )));
    }
    Ok(())
}

/// Refuses a router field that the switching mode does not read, set to anything but its
/// default: it would be silently ignored (a sweep over it would show no effect, and the
/// report would carry a value that never acted). Which mode reads which field was
/// established by the modes' code and checked by changing each field (the second hostile
/// test's N10); the modes' own refusals of other values (timeout's `router.dma`,
/// `controller.route`, pipeline) stand before this.
fn check_unused_router_fields(cfg: &HwConfig) -> Result<()> {
    let r = &cfg.router;
    let d = crate::config::RouterConfig::default();
    let (mode, why) = match cfg.switching {
        SwitchingConfig::Wormhole { .. } => {
            ("wormhole", "it belongs to circuit switching's controller")
        }
        SwitchingConfig::Circuit { .. } => (
            "circuit",
            "a circuit holds whole links end to end: no virtual channels, flit buffers, \
             crossbar allocation or header routing stage",
        ),
        SwitchingConfig::Deflection { .. } => (
            "deflection",
            "paper 003's node has one lane per virtual channel and no buffers, injection \
             engines or allocator to set",
        ),
        SwitchingConfig::Timeout { .. } => (
            "timeout",
            "paper 002's switch has one FIFO per input, no virtual channels, and a \
             one-cycle router without a controller queue",
        ),
    };
    let c = &r.controller;
    let dc = &d.controller;
    // (field, differs from its default, the modes that read it)
    let fields: [(&str, bool, &[&str]); 11] = [
        ("router.vcs", r.vcs != d.vcs, &["wormhole", "deflection"]),
        (
            "router.buffer_flits",
            r.buffer_flits != d.buffer_flits,
            &["wormhole", "timeout"],
        ),
        (
            "router.dma",
            r.dma.is_some(),
            &["wormhole", "circuit", "timeout"],
        ),
        ("router.speedup", r.speedup != d.speedup, &["wormhole"]),
        (
            "router.switch_iterations",
            r.switch_iterations != d.switch_iterations,
            &["wormhole"],
        ),
        ("router.arbiter", r.arbiter != d.arbiter, &["wormhole"]),
        (
            "router.allocator, vc_allocator and sw_allocator",
            r.allocator != d.allocator || r.vc_allocator.is_some() || r.sw_allocator.is_some(),
            &["wormhole"],
        ),
        (
            "router.controller.servers",
            c.servers != dc.servers,
            &["wormhole", "circuit"],
        ),
        (
            "router.controller.route",
            c.route != dc.route,
            &["wormhole", "deflection", "timeout"],
        ),
        (
            "router.controller.verify, link_conn and release",
            (c.verify, c.link_conn, c.release) != (dc.verify, dc.link_conn, dc.release),
            &["circuit"],
        ),
        (
            "router.pipeline",
            r.pipeline != d.pipeline,
            &["wormhole", "deflection", "timeout"],
        ),
    ];
    for (name, set, readers) in fields {
        if set && !readers.contains(&mode) {
            return Err(Error::config(format!(
                "{name}: {mode} switching does not use it ({why}); leave it at its default \
                 (it is read by {} switching)",
                match readers {
                    [one] => one.to_string(),
                    [init @ .., last] => format!("{} and {last}", init.join(", ")),
                    [] => String::new(),
                }
            )));
        }
    }
    Ok(())
}

/// The cycles of the slowest hop over a link of `latency` cycles: routing, the pipeline's
/// stages, the flit's crossing and its credit's return (the credit latency where one is
/// set, else the link's own) — what the watchdog must outwait several times over.
fn slowest_hop(cfg: &HwConfig, latency: u64) -> u64 {
    let p = &cfg.router.pipeline;
    let credit = match cfg.links.credit_latency {
        Some(c) if latency == cfg.links.latency => c,
        _ => latency,
    };
    cfg.router.controller.route
        + p.vc_alloc
        + p.switch_alloc
        + p.switch_traversal
        + latency
        + credit
}

/// A host graph's own link delays, held to the rules `links.latency` is held to: the
/// watchdog must wait more than four times the slowest hop (as `check_experiment`
/// demands for `links.latency`), and a timeout shorter than the slowest link's round
/// trip is warned about (a worm waiting for a credit from across it is reset before the
/// credit can come, and may be for ever: a livelock).
fn check_graph_delays(cfg: &HwConfig, topology: &Topology) -> Result<Vec<String>> {
    let mut warnings = Vec::new();
    let Topology::Hosts(h) = topology else {
        return Ok(warnings);
    };
    let Some((node, port, delay)) = h.slowest_link() else {
        return Ok(warnings);
    };
    let name = |u: u32| {
        if u < h.switches {
            format!("s{u}")
        } else {
            format!("h{}", u - h.switches)
        }
    };
    let peer = h.ports(node)[port as usize].peer;
    let link = format!(
        "the graph's link {} {} of {delay} cycles",
        name(node.min(peer)),
        name(node.max(peer))
    );
    if delay > cfg.links.latency {
        let slowest = slowest_hop(cfg, delay);
        if cfg.experiment.deadlock_cycles <= 4 * slowest {
            return Err(Error::config(format!(
                "experiment.deadlock_cycles = {}: must exceed four times the slowest hop \
                 ({slowest} cycles, over {link}), or healthy traffic would look deadlocked",
                cfg.experiment.deadlock_cycles
            )));
        }
    }
    if let SwitchingConfig::Timeout {
        timeout: Some(t), ..
    } = cfg.switching
    {
        let round_trip = 2 * delay.max(cfg.links.latency);
        if t < round_trip {
            warnings.push(format!(
                "switching.timeout = {t} is shorter than the round trip over {link} \
                 ({round_trip} cycles): a worm waiting there for a credit is reset before it \
                 can come, and may be for ever (a livelock: nothing delivered, the run \
                 saturated)"
            ));
        }
    }
    Ok(warnings)
}

/// Most messages a saturated source keeps waiting.
pub const MAX_SATURATED_DEPTH: u32 = 65_536;

/// Most messages saturated sources keep waiting in all (tens of bytes each).
pub const MAX_SATURATED_WAITING: u64 = 1 << 24;

/// Checks what only timeout switching (paper 002) needs.
fn check_timeout(cfg: &HwConfig, topology: &Topology) -> Result<()> {
    let SwitchingConfig::Timeout {
        timeout,
        retry_delay,
        watch,
        ..
    } = cfg.switching
    else {
        return Ok(());
    };
    if let (Some((node, port)), Topology::Hosts(h)) = (watch, topology) {
        if node >= h.switches || port as usize >= h.ports(node).len() {
            return Err(Error::config(format!(
                "switching.watch = ({node}, {port}): not a switch output (switches are \
                 0..{}; switch {} has ports 0..{})",
                h.switches - 1,
                node.min(h.switches - 1),
                h.ports(node.min(h.switches - 1)).len() - 1
            )));
        }
    }
    if let Some(t) = timeout {
        if t == 0 || t > MAX_DELAY {
            return Err(Error::config(format!(
                "switching.timeout = {t}: a header may wait 1 to {MAX_DELAY} cycles for its link \
                 (None: for ever)"
            )));
        }
    }
    if retry_delay > MAX_DELAY {
        return Err(Error::config(format!(
            "switching.retry_delay = {retry_delay}: at most {MAX_DELAY} cycles"
        )));
    }
    let l = &cfg.links;
    if l.width != 1 {
        return Err(Error::config(format!(
            "links.width = {}: paper 002's links carry one flit per cycle",
            l.width
        )));
    }
    if l.duplex == Duplex::Half || l.credit_latency.is_some_and(|c| c != l.latency) {
        return Err(Error::config(
            "timeout switching: links are full duplex and credits and resets cross them in \
             the link's propagation delay (leave links.duplex and links.credit_latency unset)",
        ));
    }
    let r = &cfg.router;
    let p = &r.pipeline;
    // Each stage on its own: their sum can overflow for absurd values (fuzzed).
    if r.controller.route != 1 || p.vc_alloc != 0 || p.switch_alloc != 0 || p.switch_traversal != 0
    {
        return Err(Error::config(
            "timeout switching models paper 002's switch: one cycle to route a header \
             (router.controller.route = 1) and no extra pipeline stages",
        ));
    }
    if r.dma.is_some_and(|d| d != 1) {
        return Err(Error::config(
            "router.dma: a host sends one worm at a time (paper 002); leave it unset or 1",
        ));
    }
    Ok(())
}

/// Checks the experiment section.
pub fn check_experiment(cfg: &HwConfig) -> Result<()> {
    let e = &cfg.experiment;
    if e.replications == 0 || e.replications > MAX_REPLICATIONS {
        return Err(Error::config(format!(
            "experiment.replications = {} (--replications): run 1 to {MAX_REPLICATIONS} \
             replications",
            e.replications
        )));
    }
    check_run_length(e.warmup, e.measure)?;
    if e.threads == 0 {
        return Err(Error::config("experiment.threads = 0: at least one thread"));
    }
    if e.threads > 1024 {
        return Err(Error::config(format!(
            "experiment.threads = {}: at most 1024",
            e.threads
        )));
    }
    if e.jobs == 0 || e.jobs > 1024 {
        return Err(Error::config(format!(
            "experiment.jobs = {}: run 1 to 1024 replications at a time",
            e.jobs
        )));
    }
    if matches!(e.measure, Measure::Cycles(0) | Measure::Messages(0)) {
        return Err(Error::config(
            "experiment.measure: the window must hold at least one cycle or message",
        ));
    }
    if e.latency != crate::config::LatencyDef::default()
        && !matches!(cfg.switching, SwitchingConfig::Wormhole { .. })
    {
        return Err(Error::config(format!(
            "experiment.latency = {:?}: only wormhole switching measures other latency \
             definitions; this mode supports (from: Creation, to: TailDelivered)",
            e.latency
        )));
    }
    if e.observe.interval == Some(0) {
        return Err(Error::config(
            "experiment.observe.interval = 0: an interval holds at least one cycle",
        ));
    }
    if e.observe.max_links == Some(0) {
        return Err(Error::config(
            "experiment.observe.max_links = 0: list at least one link (None lists all)",
        ));
    }
    // Finite, so the configuration survives --set and the JSON report (where infinity
    // has no spelling); 1e15 messages per node is beyond any memory anyway.
    if !(e.saturation_backlog.is_finite()
        && e.saturation_backlog > 0.0
        && e.saturation_backlog <= 1e15)
    {
        return Err(Error::config(format!(
            "experiment.saturation_backlog = {}: must be a positive, finite number of \
             messages per node (at most 1e15)",
            crate::foundation::limits::show(e.saturation_backlog)
        )));
    }
    if let Some(l) = e.latency_threshold {
        if !(l.is_finite() && l > 0.0) {
            return Err(Error::config(format!(
                "experiment.latency_threshold = {}: must be a positive, finite number of \
                 cycles (or None: no latency bound)",
                crate::foundation::limits::show(l)
            )));
        }
    }
    let slowest = slowest_hop(cfg, cfg.links.latency);
    if e.deadlock_cycles <= 4 * slowest {
        return Err(Error::config(format!(
            "experiment.deadlock_cycles = {}: must exceed four times the slowest hop ({slowest} \
             cycles), or healthy traffic would look deadlocked",
            e.deadlock_cycles
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_router_field_the_mode_does_not_read_is_refused_by_name() {
        let refused = |text: &str, name: &str| {
            let cfg = crate::config::load::parse_hw(text, "t").unwrap();
            let e = validate(&cfg)
                .err()
                .map(|e| e.to_string())
                .unwrap_or_default();
            assert!(e.contains(&format!("{name}: ")), "{text}: {e}");
        };
        refused(
            "(topology: SwitchedTorus(k: 3, hosts: 1), router: (vcs: 64), \
             switching: Timeout(timeout: 20))",
            "router.vcs",
        );
        refused(
            "(topology: SwitchedTorus(k: 3, hosts: 1), router: (speedup: 2), \
             switching: Timeout(timeout: 20))",
            "router.speedup",
        );
        refused(
            "(topology: ManhattanStreet(k: 6), router: (buffer_flits: 1), \
             switching: Deflection())",
            "router.buffer_flits",
        );
        refused(
            "(topology: ManhattanStreet(k: 6), router: (dma: 8), switching: Deflection())",
            "router.dma",
        );
        refused(
            "(topology: Hypercube(dim: 4), router: (vcs: 2), switching: Circuit(strategy: Hold))",
            "router.vcs",
        );
        refused(
            "(topology: Hypercube(dim: 4), router: (controller: (verify: 3)), \
             switching: Wormhole(routing: DimensionOrder))",
            "router.controller.verify, link_conn and release",
        );
        // What a mode reads stays free.
        for ok in [
            "(topology: ManhattanStreet(k: 6), router: (vcs: 8), switching: Deflection())",
            "(topology: SwitchedTorus(k: 3, hosts: 1), router: (buffer_flits: 40), \
             switching: Timeout(timeout: 20))",
            "(topology: Hypercube(dim: 4), router: (dma: 2, controller: (servers: 2, verify: 2)), \
             switching: Circuit(strategy: Hold))",
        ] {
            let cfg = crate::config::load::parse_hw(ok, "t").unwrap();
            assert!(validate(&cfg).is_ok(), "{ok}: {:?}", validate(&cfg).err());
        }
    }

    #[test]
    fn run_lengths_that_would_overflow_a_cycle_count_are_refused() {
        assert!(check_run_length(100, Measure::Cycles(u64::MAX)).is_err());
        assert!(check_run_length(u64::MAX, Measure::Cycles(1)).is_err());
        assert!(check_run_length(u64::MAX, Measure::Messages(1)).is_err());
        assert!(check_run_length(100, Measure::Messages(u64::MAX)).is_err());
        assert!(check_run_length(1000, Measure::Cycles(MAX_RUN_CYCLES - 1000)).is_ok());
        assert!(check_run_length(1000, Measure::Messages(1 << 20)).is_ok());
    }
}
