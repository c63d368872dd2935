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
    ("latency", "mean latency", "cycles"),
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
    ("runtime", "cycles"),
    ("speedup", "ratio"),
    // Time series of `run` (one line per interval).
    ("start", "cycles"),
    ("end", "cycles"),
    ("offered", "flits/node/cycle"),
    ("accepted", "flits/node/cycle"),
    ("backlog", "messages"),
    ("created", "messages"),
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

/// Human names of the quantities a figure most often shows, for axis labels and titles:
/// report paths, configuration paths, time-series, latency-distribution and message-log
/// columns. A name not here is shown as itself (compare keys use [`COMPARE`]'s names).
const LABELS: &[(&str, &str)] = &[
    ("throughput.offered", "Offered load"),
    ("throughput.accepted", "Accepted throughput"),
    ("throughput.capacity", "Capacity"),
    ("throughput.offered_messages", "Offered load (messages)"),
    (
        "throughput.accepted_messages",
        "Accepted throughput (messages)",
    ),
    ("offered", "Offered load"),
    ("accepted", "Accepted throughput"),
    ("saturation", "Saturation throughput"),
    ("latency.mean", "Mean latency"),
    ("latency.p50", "Median latency"),
    ("latency.p90", "90th-percentile latency"),
    ("latency.p99", "99th-percentile latency"),
    ("latency.max", "Maximum latency"),
    ("latency.phases.network.mean", "Mean network latency"),
    ("latency.phases.source_queue.mean", "Mean source-queue wait"),
    ("latency_mean", "Mean latency"),
    ("latency_p50", "Median latency"),
    ("latency_p99", "99th-percentile latency"),
    ("latency_max", "Maximum latency"),
    ("behind_mean", "Mean delay behind the recorded times"),
    ("behind_max", "Maximum delay behind the recorded times"),
    ("runtime", "Application run time"),
    ("speedup", "Speed-up over the recorded run"),
    ("backlog", "Source backlog"),
    ("created", "Messages created"),
    ("delivered", "Messages delivered"),
    ("flits", "Flits delivered"),
    ("start", "Time"),
    ("cycles", "Cycles simulated"),
    ("wormhole.hops_mean", "Mean hops"),
    ("wormhole.blocking_per_hop", "Blocking per hop"),
    ("wormhole.link_utilization_mean", "Mean link utilisation"),
    ("wormhole.link_utilization_max", "Maximum link utilisation"),
    ("controller.wait_mean", "Routing-controller wait"),
    ("messages.delivered", "Messages delivered"),
    ("workload.rate", "Injection rate"),
    ("router.vcs", "Virtual channels"),
    ("router.buffer_flits", "Buffer depth"),
    ("router.dma", "DMA engines"),
    ("router.controller.route", "Routing time"),
    ("links.latency", "Link latency"),
    ("links.width", "Link width"),
    ("topology.k", "Radix k"),
    ("workload.length.flits", "Message length"),
    ("replication", "Replication"),
    ("workload.pattern", "Destination pattern"),
    ("workload.length", "Message length law"),
    ("workload.process", "Creation process"),
    ("switching", "Switching mode"),
    ("switching.routing", "Routing"),
    ("switching.selection", "Selection function"),
    ("trace", "Trace"),
];

/// Units of columns that only the per-message logs and the latency distribution have.
const LOG_UNITS: &[(&str, &str)] = &[
    ("created", "cycles"),
    ("injected", "cycles"),
    ("delivered", "cycles"),
    ("recorded", "cycles"),
    ("latency", "cycles"),
    ("source_queue", "cycles"),
    ("network", "cycles"),
    ("hops", "hops"),
    ("distance", "hops"),
    ("value", "cycles"),
    ("cdf", "fraction"),
];

/// The quantity a column or path names, in words, without its unit (`throughput.accepted`
/// → "Accepted throughput"; a compare key's own name, capitalised; any other name as it
/// is). Titles are built from it.
pub fn quantity(name: &str) -> String {
    if let Some((q, _)) = compare(name) {
        let q = q.split(" | ").next().unwrap_or(q);
        return capitalised(q);
    }
    let bare = name.strip_prefix("config.").unwrap_or(name);
    match LABELS.iter().find(|(n, _)| *n == bare) {
        Some((_, q)) => q.to_string(),
        None => name.to_string(),
    }
}

fn capitalised(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) if !s.starts_with("P_") && !s.starts_with("η") => {
            f.to_uppercase().collect::<String>() + c.as_str()
        }
        _ => s.to_string(),
    }
}

/// An axis label: the quantity in words ([`quantity`]) and, when known, its unit in
/// parentheses (`throughput.accepted` → "Accepted throughput (flits/node/cycle)");
/// a compare row's model note follows after `|`.
pub fn label(name: &str) -> String {
    let (quantity, unit) = match compare(name) {
        Some((q, u)) => (capitalised(q), Some(u)),
        None => (quantity(name), unit(name)),
    };
    match (unit, quantity.split_once(" | ")) {
        (Some(u), Some((q, model))) => format!("{q} ({u}) | {model}"),
        (Some(u), None) => format!("{quantity} ({u})"),
        (None, _) => quantity,
    }
}

/// The label of a column of a per-message log or a latency distribution, whose short
/// names (`created`, `latency`, `value`) mean times in cycles there.
pub fn log_label(name: &str) -> String {
    if name == "cdf" {
        // A fraction of a count: its name says it all.
        return "Cumulative fraction of messages".into();
    }
    match LOG_UNITS.iter().find(|(n, _)| *n == name) {
        Some((_, u)) => {
            let q = match name {
                "value" => "Latency".to_string(),
                "created" => "Creation time".to_string(),
                "delivered" => "Delivery time".to_string(),
                "injected" => "Injection time".to_string(),
                "recorded" => "Recorded time".to_string(),
                _ => capitalised(&name.replace('_', " ")),
            };
            format!("{q} ({u})")
        }
        None => label(name),
    }
}

/// How a figure treats the points where the emulation saturated.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Saturated {
    /// Drawn at their value with the saturated marker: a throughput (any rate, per
    /// cycle or per time unit) or a utilisation keeps a meaning past saturation — its
    /// plateau is the answer a what-if study asks for.
    AtValue,
    /// Cut: an arrow on the top edge at the point's x. A latency (or anything counted
    /// over the messages that got through) grows without bound past saturation; its
    /// mean over the window is not a value to plot.
    Cut,
}

/// The saturated treatment of quantity `name`: [`Saturated::AtValue`] for rates and
/// fractions, [`Saturated::Cut`] for everything else.
pub fn saturated(name: &str) -> Saturated {
    match unit(name) {
        Some(u) if u.contains("/cycle") || u.contains("/time unit") || u == "fraction" => {
            Saturated::AtValue
        }
        _ => Saturated::Cut,
    }
}

/// Whether quantity `name` can never be negative: every quantity with a known unit
/// (times, rates, counts, probabilities). Its axis never runs below zero and its
/// confidence bars are clipped at zero.
pub fn nonnegative(name: &str) -> bool {
    unit(name).is_some() || LOG_UNITS.iter().any(|(n, _)| *n == name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_compare_key_has_a_quantity_and_a_unit() {
        for k in crate::model::compare::KEYS {
            assert!(compare(k).is_some(), "{k}");
        }
        assert_eq!(label("latency"), "Mean latency (cycles)");
        assert_eq!(
            label("ctrl_wait_pk"),
            "Controller wait (cycles) | model: P-K, measured moments"
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
        assert_eq!(label("trace"), "Trace");
        assert_eq!(label("router.vcs"), "Virtual channels (VCs/port)");
    }

    #[test]
    fn report_quantities_have_human_labels_with_units_and_unknown_columns_keep_their_name() {
        assert_eq!(
            label("throughput.accepted"),
            "Accepted throughput (flits/node/cycle)"
        );
        assert_eq!(label("latency.mean"), "Mean latency (cycles)");
        assert_eq!(
            label("workload.rate"),
            "Injection rate (messages/node/cycle)"
        );
        assert_eq!(quantity("throughput.accepted"), "Accepted throughput");
        assert_eq!(quantity("my_column"), "my_column");
        assert_eq!(label("my_column"), "my_column");
        // Every name of the table has a unit but the axes of names (a pattern, a
        // routing) and the replication's number.
        const NAMED: [&str; 8] = [
            "replication",
            "workload.pattern",
            "workload.length",
            "workload.process",
            "switching",
            "switching.routing",
            "switching.selection",
            "trace",
        ];
        for (n, _) in LABELS {
            assert!(unit(n).is_some() || NAMED.contains(n), "{n}");
        }
        assert_eq!(log_label("created"), "Creation time (cycles)");
        assert_eq!(log_label("value"), "Latency (cycles)");
        assert_eq!(log_label("cdf"), "Cumulative fraction of messages");
    }

    #[test]
    fn rates_keep_their_saturated_values_and_latencies_are_cut() {
        for n in [
            "throughput.accepted",
            "throughput.offered",
            "accepted",
            "saturation",
            "wormhole.link_utilization_max",
        ] {
            assert_eq!(saturated(n), Saturated::AtValue, "{n}");
        }
        for n in [
            "latency",
            "latency.p99",
            "backlog",
            "wormhole.hops_mean",
            "trace",
        ] {
            assert_eq!(saturated(n), Saturated::Cut, "{n}");
        }
        assert!(nonnegative("latency") && nonnegative("throughput.accepted"));
        assert!(!nonnegative("my_column"));
    }
}
