//! Axis labels: the quantity a column holds and its unit, for the compare rows' keys
//! (`latency`, `aborts`, …), the run report's dotted JSON paths (`throughput.accepted`,
//! `wormhole.hops_mean`, …), configuration paths swept as x (`workload.rate`,
//! `switching.backoff`, …), the replay summary's fields (`latency_mean`, …) and the
//! time-series columns of `run` (`start`, `accepted`, `backlog`, …). Exact names first,
//! then rules on the last path segment (`p_…`: probability, `…wait…`: cycles, …); a name
//! no rule knows is labelled without a unit rather than with a guess.
//!
//! Not here: the report's fields themselves (`stats::report`), the figures (`redraw`).

/// Quantity name and unit of every compare row (`model::compare::KEYS`), for axis labels;
/// the part after `|` says what the model curve is where the row has several.
const COMPARE: [(&str, &str, &str); 31] = [
    ("latency", "latency", "cycles"),
    ("setup", "set-up with ack", "cycles"),
    ("release", "release", "cycles"),
    ("p_conflict", "P_conflict", "probability"),
    ("aborts", "aborts per message", "aborts/message"),
    ("link_wait", "link wait per message", "cycles"),
    ("ctrl_rate", "controller requests", "requests/node/cycle"),
    ("ctrl_util", "controller utilisation", "fraction"),
    (
        "ctrl_wait_pk",
        "controller wait | model: P-K, measured moments",
        "cycles",
    ),
    (
        "ctrl_wait_corrected",
        "controller wait | model: P-K + chained arrivals",
        "cycles",
    ),
    (
        "ctrl_wait_model",
        "controller wait | model: closed form",
        "cycles",
    ),
    (
        "ctrl_busy_pasta",
        "P(controller busy at arrival) | model: ρ",
        "probability",
    ),
    (
        "ctrl_busy_corrected",
        "P(controller busy at arrival) | model: chained",
        "probability",
    ),
    ("accepted", "accepted throughput", "flits/node/cycle"),
    ("blocking_per_hop", "blocking per hop", "cycles"),
    ("delay_per_hop", "delay per hop beyond zero load", "cycles"),
    ("eta", "inefficiency ratio η = D(λ)/D(0)", "ratio"),
    (
        "p_deflect",
        "deflection probability at preference nodes",
        "probability",
    ),
    ("p_preempt", "preemption probability E", "probability"),
    (
        "p_block",
        "blocking probability B (new worms)",
        "probability",
    ),
    (
        "throughput_per_channel",
        "completed worms",
        "worms/node/time unit/lane",
    ),
    ("lane_util", "busy fraction of the lanes", "fraction"),
    ("tries", "transmissions per worm", "tries/worm"),
    ("p_timeout_ss", "P_timeout at ss links", "probability"),
    ("p_timeout_sh", "P_timeout at sh links", "probability"),
    (
        "p_timeout_ss_mg1d",
        "P_timeout ss | model: M/G/1+D of measured λ, b",
        "probability",
    ),
    (
        "p_timeout_sh_mg1d",
        "P_timeout sh | model: M/G/1+D of measured λ, b",
        "probability",
    ),
    ("host_wait", "host queue wait", "cycles"),
    (
        "host_wait_pk",
        "host queue wait | model: P-K of measured tries",
        "cycles",
    ),
    (
        "accepted_per_host",
        "accepted throughput",
        "flits/host/cycle",
    ),
    ("max_throughput", "maximum throughput", "flits/host/cycle"),
];

/// Units of exact names: report paths, configuration paths, replay and time-series
/// columns.
const EXACT: &[(&str, &str)] = &[
    // The run report.
    ("throughput.offered", "flits/node/cycle"),
    ("throughput.accepted", "flits/node/cycle"),
    ("throughput.capacity", "flits/node/cycle"),
    ("throughput.offered_messages", "messages/node/cycle"),
    ("throughput.accepted_messages", "messages/node/cycle"),
    ("controller.arrival_rate", "requests/node/cycle"),
    ("controller.service_m2", "cycles²"),
    ("controller.servers", "servers"),
    ("wormhole.hops_mean", "hops"),
    ("circuit.aborts_per_message", "aborts/message"),
    ("circuit.aborts_max", "aborts"),
    ("circuit.hold_timeouts", "requests"),
    ("circuit.link_requests_per_message", "requests/message"),
    ("circuit.links", "links"),
    ("deflection.lanes", "lanes"),
    ("deflection.eta", "ratio"),
    ("deflection.time_unit", "cycles"),
    ("deflection.mean_path", "links"),
    ("deflection.mean_path_zero_load", "links"),
    ("deflection.attempts_per_node", "attempts/node/time unit"),
    (
        "deflection.throughput_per_channel",
        "worms/node/time unit/lane",
    ),
    (
        "deflection.offered_per_channel",
        "worms/node/time unit/lane",
    ),
    ("deflection.bound", "worms/node/time unit/lane"),
    ("deflection.segments_per_message", "segments/message"),
    ("deflection.hops_per_message", "links/message"),
    ("deflection.preemptions", "segments"),
    ("deflection.self_preemptions", "segments"),
    ("deflection.hop_limit_drops", "segments"),
    ("deflection.rejected", "messages"),
    ("timeout.offered_per_host", "flits/host/cycle"),
    ("timeout.accepted_per_host", "flits/host/cycle"),
    ("timeout.max_throughput", "flits/host/cycle"),
    ("timeout.host_arrival_rate", "messages/host/cycle"),
    ("timeout.host_try_rate", "tries/host/cycle"),
    ("timeout.tries_mean", "tries/message"),
    ("timeout.resets", "resets"),
    ("cycles", "cycles"),
    ("window_cycles", "cycles"),
    ("wall_seconds", "s"),
    ("node_cycles_per_second", "node-cycles/s"),
    ("topology.nodes", "nodes"),
    ("topology.degree", "ports"),
    ("topology.channels", "channels"),
    ("topology.links", "links"),
    ("topology.diameter", "hops"),
    ("topology.mean_distance", "hops"),
    // Configuration paths (sweep axes).
    ("workload.rate", "messages/node/cycle"),
    ("router.vcs", "VCs/port"),
    ("router.buffer_flits", "flits"),
    ("router.dma", "DMA engines"),
    ("links.latency", "cycles"),
    ("links.width", "flits/cycle"),
    ("topology.k", "nodes/dimension"),
    ("topology.n", "dimensions"),
    ("topology.dim", "dimensions"),
    ("workload.length.flits", "flits"),
    ("workload.length.mean", "flits"),
    ("workload.length.min", "flits"),
    ("workload.length.max", "flits"),
    // Replay summary (trace sweeps).
    ("messages", "messages"),
    ("delivered", "messages"),
    ("flits", "flits"),
    ("recorded_span", "cycles"),
    ("partitions", "partitions"),
    // Time series of `run` (one line per interval).
    ("start", "cycles"),
    ("end", "cycles"),
    ("offered", "flits/node/cycle"),
    ("accepted", "flits/node/cycle"),
    ("backlog", "messages"),
    // `sweep --y saturation`: the point's saturation search.
    ("saturation", "flits/node/cycle"),
];

/// The quantity and unit of a compare key.
pub fn compare(key: &str) -> Option<(&'static str, &'static str)> {
    COMPARE
        .iter()
        .find(|(k, _, _)| *k == key)
        .map(|&(_, q, u)| (q, u))
}

/// The unit of a column or path `name`, when known.
pub fn unit(name: &str) -> Option<&'static str> {
    if let Some((_, u)) = compare(name) {
        return Some(u);
    }
    // A report path reaches configuration fields as `config.…`.
    let bare = name.strip_prefix("config.").unwrap_or(name);
    if let Some(&(_, u)) = EXACT.iter().find(|(n, _)| *n == bare) {
        return Some(u);
    }
    let prefix = |p: &str| bare.starts_with(p);
    if prefix("messages.") {
        return Some("messages");
    }
    if prefix("latency.")
        || prefix("circuit.phases.")
        || prefix("circuit.controller_wait.")
        || prefix("router.controller.")
    {
        return Some("cycles");
    }
    if prefix("circuit.links_held.") {
        return Some("links");
    }
    // The last segment names the quantity; for a split (`…_by_class.ss`) its parent does.
    let mut segs = bare.rsplit('.');
    let last = segs.next().unwrap_or(bare);
    by_name(last).or_else(|| segs.next().and_then(by_name))
}

/// The unit a field's own name implies.
fn by_name(seg: &str) -> Option<&'static str> {
    let has = |w: &str| seg.contains(w);
    if seg.starts_with("p_") {
        Some("probability")
    } else if has("fraction") || has("util") {
        Some("fraction")
    } else if [
        "latency", "wait", "delay", "blocking", "behind", "cycles", "backoff", "timeout",
        "service", "warmup",
    ]
    .iter()
    .any(|w| has(w))
    {
        Some("cycles")
    } else {
        None
    }
}

/// An axis label: the quantity and, when known, its unit in parentheses.
pub fn label(name: &str) -> String {
    let (quantity, unit) = match compare(name) {
        Some((q, u)) => (q.to_string(), Some(u)),
        None => (name.to_string(), unit(name)),
    };
    match (unit, quantity.split_once(" | ")) {
        (Some(u), Some((q, model))) => format!("{q} ({u}) | {model}"),
        (Some(u), None) => format!("{quantity} ({u})"),
        (None, _) => quantity,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_compare_key_has_a_quantity_and_a_unit() {
        for k in crate::model::compare::KEYS {
            assert!(compare(k).is_some(), "{k}");
        }
        assert_eq!(label("latency"), "latency (cycles)");
        assert_eq!(
            label("ctrl_wait_pk"),
            "controller wait (cycles) | model: P-K, measured moments"
        );
    }

    #[test]
    fn report_and_configuration_paths_get_their_units() {
        for (name, expected) in [
            ("throughput.accepted", "flits/node/cycle"),
            ("latency.mean", "cycles"),
            ("latency.phases.network.p99", "cycles"),
            ("wormhole.hops_mean", "hops"),
            ("wormhole.link_utilization_max", "fraction"),
            ("circuit.p_conflict_by_kind.turn", "probability"),
            ("controller.wait_mg1", "cycles"),
            ("messages.delivered", "messages"),
            ("workload.rate", "messages/node/cycle"),
            ("switching.backoff", "cycles"),
            ("router.controller.verify", "cycles"),
            ("config.links.latency", "cycles"),
            ("latency_mean", "cycles"),
            ("behind_max", "cycles"),
            ("backlog", "messages"),
            ("timeout.p_timeout_by_class.ss", "probability"),
            ("timeout.wait_mean_by_class.sh", "cycles"),
        ] {
            assert_eq!(unit(name), Some(expected), "{name}");
        }
        assert_eq!(unit("trace"), None);
        assert_eq!(label("trace"), "trace");
        assert_eq!(label("router.vcs"), "router.vcs (VCs/port)");
    }
}
