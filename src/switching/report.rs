//! What each switching mode reports of its own: its block of the run report
//! ([`ModeReport`], serialised as one field named after the mode) — wormhole blocking,
//! circuit phases and controllers, deflection's paper-003 quantities, timeout's links
//! and reset counts. Each mode builds its block from its measurements
//! ([`crate::switching::Mode::report`]); the report (`stats::report`) carries it.

use crate::foundation::ci::Dist;
use serde::{Deserialize, Serialize};
use std::fmt::Write;

/// Wormhole-specific measurements.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Wormhole {
    /// Mean blocking per network hop (cycles lost to VC and switch contention).
    pub blocking_per_hop: Option<f64>,
    /// 95% half-width of `blocking_per_hop`.
    pub blocking_per_hop_ci95: Option<f64>,
    /// Mean network hops per message.
    pub hops_mean: Option<f64>,
    /// Mean wait at the destination for an ejection engine or the local output.
    pub ejection_wait: Option<f64>,
    /// Mean routing-controller queueing per message, summed over its routers.
    pub controller_wait_per_message: Option<f64>,
    /// Mean fraction of cycles a network channel carries flits.
    pub link_utilization_mean: f64,
    /// Busiest channel's utilisation.
    pub link_utilization_max: f64,
}

/// Path lengths of the segments whose header reached its destination.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PathLengths {
    /// counts\[h\]: segments that took h links (the last entry holds every longer path).
    pub counts: Vec<u64>,
    /// Median.
    pub p50: Option<u64>,
    /// 90th percentile.
    pub p90: Option<u64>,
    /// 99th percentile.
    pub p99: Option<u64>,
    /// Longest.
    pub max: Option<u64>,
}

/// Deflection wormhole with virtual channels (paper 003) measurements. Probabilities
/// and ratios are means over replications of each replication's ratio (with 95%
/// half-widths when there are several); the paper's time unit is the mean worm length.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Deflection {
    /// Virtual channels (lanes) per link: the paper's m.
    pub lanes: u32,
    /// Hop limit factor h (null: no limit).
    pub hop_limit: Option<f64>,
    /// The paper's time unit: the mean worm length, in cycles.
    pub time_unit: f64,
    /// Inefficiency ratio η = D(λ)/D(0).
    pub eta: Option<f64>,
    /// 95% half-width of `eta`.
    pub eta_ci95: Option<f64>,
    /// D(λ): mean links taken by a segment whose header reached its destination.
    pub mean_path: Option<f64>,
    /// D(0): mean shortest distance.
    pub mean_path_zero_load: f64,
    /// Deflection probability at preference nodes: fraction of transit headers there
    /// that did not get a lane on their preferred (shortest-path) link.
    pub p_deflect: Option<f64>,
    /// 95% half-width of `p_deflect`.
    pub p_deflect_ci95: Option<f64>,
    /// The part of `p_deflect` where the preferred link was held by the header's own
    /// segment (a header that came back to a link its own body still holds: a worm in
    /// the paper's model never meets itself).
    pub p_deflect_self: Option<f64>,
    /// Fraction of the deflections at preference nodes that hit a header at the node
    /// where it had been deflected last (it came back and found the link still full):
    /// deflections of one header are not independent, as the model assumes.
    pub repeat_deflections: Option<f64>,
    /// The same at don't-care nodes (such a header leaves on the other output, which is
    /// also on a shortest path).
    pub p_fail_dont_care: Option<f64>,
    /// E: fraction of accepted segments preempted before they completed.
    pub p_preempt: Option<f64>,
    /// 95% half-width of `p_preempt`.
    pub p_preempt_ci95: Option<f64>,
    /// B, "the probability that a new worm is blocked at its source" (§3): fraction of
    /// messages' first originating attempts that found no free lane on their preferred
    /// link.
    pub p_block: Option<f64>,
    /// 95% half-width of `p_block`.
    pub p_block_ci95: Option<f64>,
    /// The same over every attempt, retries included (the model takes it equal to B;
    /// here retries come back while the link that blocked them is often still busy).
    pub p_block_attempts: Option<f64>,
    /// Originating attempts per node per time unit (new messages and retries).
    pub attempts_per_node: f64,
    /// Preemptions in the window (all replications).
    pub preemptions: u64,
    /// Of those, worms preempted by their own header coming back through their source.
    pub self_preemptions: u64,
    /// Segments dropped by the hop limit in the window (all replications).
    pub hop_limit_drops: u64,
    /// Dropped segments per accepted segment.
    pub p_drop: Option<f64>,
    /// Fraction of the lane time of the window spent carrying flits that were dropped.
    pub dropped_lane_fraction: Option<f64>,
    /// Messages refused by a full source memory (`max_pending`) in the window.
    pub rejected: u64,
    /// Completed messages per node per time unit per lane: paper 003's normalised
    /// throughput (Fig. 3).
    pub throughput_per_channel: f64,
    /// 95% half-width of `throughput_per_channel`.
    pub throughput_per_channel_ci95: Option<f64>,
    /// Offered load λ/m: messages created per node per time unit per lane.
    pub offered_per_channel: f64,
    /// Upper bound on the normalised throughput, 2μ/D(0).
    pub bound: f64,
    /// `throughput_per_channel` / `bound`.
    pub fraction_of_bound: f64,
    /// Mean busy fraction of the links' lanes.
    pub lane_utilization: f64,
    /// Mean segments per delivered (measured) message.
    pub segments_per_message: Option<f64>,
    /// Mean links taken per delivered (measured) message, all its segments together.
    pub hops_per_message: Option<f64>,
    /// Path lengths of segments that reached their destination.
    pub path_length: PathLengths,
    /// Time-averaged distribution of an output link's busy lanes (index = busy lanes).
    pub output_occupancy: Vec<f64>,
    /// The same for an input link (lanes held by arriving segments, transit or not).
    pub input_occupancy: Vec<f64>,
    /// Replications detected as collapsed (a livelock: the lanes stay busy with
    /// deflected and preempted worms while the throughput falls short of the offered
    /// load — completing less than [`COLLAPSE_SHARE`] of what was offered in the
    /// window, or with a source backlog that grew through it, the run's overload test —
    /// and less than [`COLLAPSE_SHARE`] of the lanes' busy time carried worms that
    /// arrived, `DeflectionRep::delivered_lane_share`; a stable replication past the knee
    /// falls short of its load too, but its lanes carry what it completes),
    /// kept out of every mean and interval of this block unless every replication
    /// collapsed (then all are in them).
    pub collapsed: u32,
    /// Each replication's own figures, in replication order.
    pub per_replication: Vec<DeflectionRep>,
}

/// A replication whose completed throughput is below this share of its offered load,
/// and whose lanes' busy time is below this share carrying worms that arrive, is
/// collapsed (`Deflection::collapsed`): a stable deflection network below its knee
/// completes what it is offered, within the window's noise of a few percent, and one
/// past it still delivers what its lanes carry (measured: a delivered lane share of
/// 0.97–1.4 in every stable replication of docs/validation.md's paper-003 runs, 0–0.66
/// in the livelocked ones).
pub const COLLAPSE_SHARE: f64 = 0.8;

/// One replication's paper-003 figures (`Deflection::per_replication`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct DeflectionRep {
    /// Replication index (0-based).
    pub replication: u32,
    /// Detected as collapsed (`Deflection::collapsed`).
    pub collapsed: bool,
    /// The engine stopped it as saturated (source backlog past the guard, or a drain
    /// past `experiment.drain_limit`).
    pub stopped_saturated: bool,
    /// Offered λ/m (messages per node per time unit per lane).
    pub offered_per_channel: f64,
    /// Completed messages per node per time unit per lane.
    pub throughput_per_channel: f64,
    /// Busy fraction of the links' lanes.
    pub lane_utilization: f64,
    /// Share of the lanes' busy time (less dropped flits') that carried worms which
    /// arrived (`switching::deflection::delivered_lane_share`; None: no lane busy, or a
    /// report written before it was counted).
    #[serde(default)]
    pub delivered_lane_share: Option<f64>,
    /// η.
    pub eta: Option<f64>,
    /// p (deflection at preference nodes).
    pub p_deflect: Option<f64>,
    /// E (preempted segments per accepted one).
    pub p_preempt: Option<f64>,
    /// B (first attempts blocked).
    pub p_block: Option<f64>,
}

impl Deflection {
    /// The lines of the human summary.
    pub fn summary(&self, s: &mut String) {
        let limit = self.hop_limit.map_or("no hop limit".to_string(), |h| {
            format!("hop limit {h} × distance")
        });
        let ci = |x: Option<f64>, c: Option<f64>| match (x, c) {
            (Some(x), Some(c)) => format!("{x:.4} ± {c:.4}"),
            (Some(x), None) => format!("{x:.4}"),
            _ => "n/a".into(),
        };
        let _ = writeln!(
            s,
            "  deflection ({} lanes per link, {limit}; time unit {:.1} cycles): η {}  p_deflect {}  E (preempted) {}  B (blocked) {}",
            self.lanes,
            self.time_unit,
            ci(self.eta, self.eta_ci95),
            ci(self.p_deflect, self.p_deflect_ci95),
            ci(self.p_preempt, self.p_preempt_ci95),
            ci(self.p_block, self.p_block_ci95),
        );
        let _ = writeln!(
            s,
            "    throughput {} per node per time unit per lane = {:.1}% of the bound 2μ/D(0) = {:.4} (offered {:.4}); lanes busy {:.3}",
            ci(Some(self.throughput_per_channel), self.throughput_per_channel_ci95),
            100.0 * self.fraction_of_bound,
            self.bound,
            self.offered_per_channel,
            self.lane_utilization
        );
        let _ = writeln!(
            s,
            "    path D {} (D(0) {:.4}); preemptions {} ({} self); hop-limit drops {}; rejected at full sources {}",
            num4(self.mean_path),
            self.mean_path_zero_load,
            self.preemptions,
            self.self_preemptions,
            self.hop_limit_drops,
            self.rejected
        );
        let reps = self.per_replication.len();
        if self.collapsed > 0 {
            let whole = self.collapsed as usize == reps;
            let _ = writeln!(
                s,
                "    COLLAPSED: {} of {reps} replication(s) — lanes busy, throughput short of the offered load; {}",
                self.collapsed,
                if whole {
                    "every replication, so the figures above are theirs"
                } else {
                    "kept out of the deflection figures above (the latency and throughput lines include them)"
                }
            );
            for r in &self.per_replication {
                let _ = writeln!(
                    s,
                    "      replication {}{}: throughput {:.4} of {:.4} offered, lanes busy {:.3}, η {}  p {}  E {}  B {}",
                    r.replication,
                    if r.collapsed { " (collapsed)" } else { "" },
                    r.throughput_per_channel,
                    r.offered_per_channel,
                    r.lane_utilization,
                    num4(r.eta),
                    num4(r.p_deflect),
                    num4(r.p_preempt),
                    num4(r.p_block),
                );
            }
        }
    }
}

/// A quantity by link class (paper 002's hs, ss and sh links).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ClassSplit<T> {
    /// Host to switch.
    pub hs: T,
    /// Switch to switch.
    pub ss: T,
    /// Switch to host.
    pub sh: T,
}

/// A distribution of cycles (paper 002 Figs. 2–3): its moments and the (value, count)
/// pairs of the histogram (exact below 2048 cycles, 3 significant digits above).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Distribution {
    /// Observations.
    pub count: u64,
    /// Mean (cycles).
    pub mean: Option<f64>,
    /// Coefficient of variation (standard deviation over mean; 1 for an exponential).
    pub cv: Option<f64>,
    /// (value, count) pairs, increasing values.
    pub values: Vec<(u64, u64)>,
}

/// The watched switch output (paper 002 Figs. 2–3).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct WatchedLink {
    /// Which link, in words.
    pub link: String,
    /// The switch and its output port.
    pub node: u32,
    /// See `node`.
    pub port: u8,
    /// Headers that asked for it in the window.
    pub requests: u64,
    /// Of those, timed out.
    pub timeouts: u64,
    /// Cycles between two headers asking for it.
    pub interarrival: Distribution,
    /// Waits of the headers granted it.
    pub wait: Distribution,
}

/// How often a link had n worms holding or waiting for it, and the rate at which new
/// headers asked for it then (paper 002 Figs. 12–13: the model's Poisson arrivals have
/// the same rate in every state; a finite population of inputs asks less often the more
/// of them already wait).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Occupancy {
    /// Worms holding or waiting for the link (the last entry: this many or more).
    pub n: u32,
    /// Fraction of the time the link's class spent in this state.
    pub time_fraction: f64,
    /// Headers asking per cycle in this state.
    pub arrival_rate: Option<f64>,
}

/// One directed link of a host/switch network, measured over every replication.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct TimeoutLink {
    /// The node the link leaves.
    pub node: u32,
    /// Its port.
    pub port: u8,
    /// The node it leads to.
    pub to: u32,
    /// hs, ss or sh.
    pub class: String,
    /// Headers that asked for it (for an hs link: tries started).
    pub requests: u64,
    /// Of those, timed out waiting for it.
    pub timeouts: u64,
    /// timeouts / requests.
    pub p_timeout: Option<f64>,
    /// Fraction of requests that found it free (φ(0)).
    pub p_free: Option<f64>,
    /// Requests per cycle (λ of the link).
    pub request_rate: f64,
    /// Fraction of time held.
    pub utilization: f64,
    /// Holding time moments: mean, second, third (cycles).
    pub holding: [Option<f64>; 3],
    /// Mean wait of the requests granted (cycles).
    pub wait_mean: Option<f64>,
}

/// Largest number of directed links listed one by one in the report (bigger networks
/// report by class only, and say how many links were left out).
pub const MAX_LINK_ROWS: usize = 8192;

/// Wormhole with timeout reset (paper 002) measurements. Throughputs are in flits per
/// host per cycle (the fraction of a host link's capacity); times in cycles.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Timeout {
    /// The timeout (cycles; null: none).
    pub timeout: Option<u64>,
    /// Constant delay before a reset worm rejoins its queue.
    pub retry_delay: u64,
    /// Whether the hosts were saturated sources (`workload.process = Saturated`).
    pub saturated_sources: bool,
    /// Flits created per host per cycle in the window.
    pub offered_per_host: f64,
    /// Flits delivered to hosts per host per cycle in the window.
    pub accepted_per_host: f64,
    /// 95% half-width of `accepted_per_host` over replications.
    pub accepted_per_host_ci95: Option<f64>,
    /// The maximum throughput: `accepted_per_host` of a run with saturated sources whose
    /// every replication ran its window whole and drained (null for other runs, and for
    /// a saturated-source run cut short: a deadlock, an interrupt, a drain past
    /// `experiment.drain_limit`).
    pub max_throughput: Option<f64>,
    /// Worms created per host per cycle (γ of one host).
    pub host_arrival_rate: f64,
    /// Tries started per host per cycle (arrivals at the host link's server).
    pub host_try_rate: f64,
    /// Fraction of time the hosts' links were held (the host queues' server busy).
    pub host_utilization: f64,
    /// Mean tries (transmissions) per delivered measured worm.
    pub tries_mean: Option<f64>,
    /// 95% half-width of `tries_mean`.
    pub tries_ci95: Option<f64>,
    /// (tries, worms) pairs of the delivered measured worms.
    pub tries_histogram: Vec<(u64, u64)>,
    /// Fraction of first tries that were reset.
    pub p_fail_first_try: Option<f64>,
    /// Fraction of retries that were reset (above `p_fail_first_try` when successive
    /// tries of one worm are not independent, paper 002 §7).
    pub p_fail_retry: Option<f64>,
    /// Fraction of headers asking for a switch's outgoing link that timed out.
    pub p_timeout: Option<f64>,
    /// 95% half-width of `p_timeout` over replications.
    pub p_timeout_ci95: Option<f64>,
    /// The same by link class (hs links never time out: hosts have no timer).
    pub p_timeout_by_class: ClassSplit<Option<f64>>,
    /// Fraction of headers that found their link free (φ(0)).
    pub p_free_by_class: ClassSplit<Option<f64>>,
    /// Headers asking per link per cycle (λ of a link of the class).
    pub request_rate_by_class: ClassSplit<f64>,
    /// Mean wait of the headers granted a link (no timeout).
    pub wait_mean_by_class: ClassSplit<Option<f64>>,
    /// Link holding time moments (grab → free again): mean, second, third.
    pub holding_by_class: ClassSplit<[Option<f64>; 3]>,
    /// Fraction of time the links are held.
    pub utilization_by_class: ClassSplit<f64>,
    /// Head inter-arrival times at a link, pooled over the links of each class.
    pub interarrival_by_class: ClassSplit<Distribution>,
    /// Waits (no timeout) at a link, pooled over the links of each class.
    pub wait_by_class: ClassSplit<Distribution>,
    /// Per class, the time its links spent with n worms holding or waiting for them and
    /// the arrival rate seen in each state.
    pub occupancy_by_class: ClassSplit<Vec<Occupancy>>,
    /// Service of one try on the host link: mean, second and third moments.
    pub try_service_mean: Option<f64>,
    /// See `try_service_mean`.
    pub try_service_m2: Option<f64>,
    /// See `try_service_mean`.
    pub try_service_m3: Option<f64>,
    /// Fraction of tries that succeeded (P_S).
    pub p_try_success: Option<f64>,
    /// Mean cycles a delivered worm waited in its host queue, all visits together.
    pub host_wait_mean: Option<f64>,
    /// 95% half-width of `host_wait_mean`.
    pub host_wait_ci95: Option<f64>,
    /// Pollaczek–Khinchine wait of the host queue from the measured arrival rate, try
    /// moments and success probability (paper 002 eqs. 18–19: M/G/1 with feedback).
    pub host_wait_mg1: Option<f64>,
    /// Mean latency minus host-queue wait of a delivered worm: its tries on the
    /// network, resets coming back, retry delays and the last try's propagation.
    pub network_mean: Option<f64>,
    /// 95% half-width of `network_mean`.
    pub network_ci95: Option<f64>,
    /// Flits sent in tries that were reset, as a fraction of all flits sent.
    pub wasted_fraction: Option<f64>,
    /// Timeouts (resets started) in the whole run.
    pub resets: u64,
    /// Every directed link (up to `MAX_LINK_ROWS`), by node and port.
    pub links: Vec<TimeoutLink>,
    /// Links not listed (networks with more than `MAX_LINK_ROWS`).
    pub links_omitted: usize,
    /// The watched switch output.
    pub watched: Option<WatchedLink>,
}

impl Timeout {
    /// The lines of the human summary.
    pub fn summary(&self, s: &mut String) {
        let o = |x: Option<f64>| x.map_or("n/a".into(), |v| format!("{v:.4}"));
        let _ = writeln!(
            s,
            "  timeout {}: throughput {:.4} flits/host/cycle (offered {:.4}){}",
            self.timeout
                .map_or("none".into(), |t| format!("{t} cycles")),
            self.accepted_per_host,
            self.offered_per_host,
            self.max_throughput.map_or(String::new(), |m| format!(
                "; saturated hosts: maximum throughput {m:.4}"
            ))
        );
        let _ = writeln!(
            s,
            "    tries per worm {}  P_timeout {} (ss {} sh {})  first tries reset {} retries {}",
            o(self.tries_mean),
            o(self.p_timeout),
            o(self.p_timeout_by_class.ss),
            o(self.p_timeout_by_class.sh),
            o(self.p_fail_first_try),
            o(self.p_fail_retry)
        );
        let _ = writeln!(
            s,
            "    latency = host queue {} + network {}; host queue P-K of measured tries {} \
             (try service {}, P success {}, ρ {:.4}); wasted flits {}",
            o(self.host_wait_mean),
            o(self.network_mean),
            o(self.host_wait_mg1),
            o(self.try_service_mean),
            o(self.p_try_success),
            self.host_utilization,
            o(self.wasted_fraction)
        );
    }
}

/// A quantity split by the phase of the communication it concerns.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct PhaseSplit<T> {
    /// Path set-up (including aborted attempts and back-offs).
    pub setup: T,
    /// Ack travelling back.
    pub ack: T,
    /// Data transmission.
    pub data: T,
    /// Path release.
    pub release: T,
}

/// Circuit link requests split by where they are on their path.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct HopKindSplit {
    /// The path's first link.
    pub first: Option<f64>,
    /// A link of another port than the incoming one (a new dimension).
    pub turn: Option<f64>,
    /// The same port as the incoming link (on along a torus ring).
    pub straight: Option<f64>,
}

/// One node's routing controller (circuit switching).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct NodeController {
    /// Node.
    pub node: u32,
    /// Requests per cycle.
    pub arrival_rate: f64,
    /// Mean service time.
    pub service_mean: Option<f64>,
    /// Second moment of the service time.
    pub service_m2: Option<f64>,
    /// Busy fraction (of all its servers).
    pub utilization: f64,
    /// Measured mean wait.
    pub wait_mean: Option<f64>,
    /// Pollaczek–Khinchine mean wait from this node's measured rate and moments (one
    /// server; null when saturated or multi-server).
    pub wait_mg1: Option<f64>,
    /// Fraction of its requests that found every server busy on arrival.
    pub p_busy_at_arrival: Option<f64>,
    /// `wait_mg1` corrected for chained requests (see `stats::report::Controller::wait_corrected`).
    pub wait_corrected: Option<f64>,
}

/// The routing controller's requests of one arrival class (circuit switching), every
/// node and replication together: what they found on arrival and how long they waited.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct ControllerClass {
    /// Class name: setup_new, setup_retry, setup_forwarded, setup_inherited (after a hold
    /// hand-off whose releaser's path ended), setup_chained (after a hand-off, right
    /// behind the releaser's release signal), release_source, release_forwarded,
    /// abort_release, peer_connect.
    pub class: &'static str,
    /// Its share of all requests.
    pub share: f64,
    /// Fraction that found every server busy on arrival (ρ under PASTA).
    pub p_busy: f64,
    /// Fraction that found a free server but a request ahead (same-cycle arrival).
    pub p_queued: f64,
    /// Mean wait.
    pub wait_mean: f64,
    /// Mean service time.
    pub service_mean: f64,
    /// Of the arrivals that found the server busy, the fraction by the class in service
    /// (classes with none omitted).
    pub busy_with: std::collections::BTreeMap<&'static str, f64>,
}

/// Circuit-switching measurements (papers 000 and 001).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Circuit {
    /// Conflict resolution strategy.
    pub strategy: String,
    /// Links that can each carry one circuit (physical links when half duplex,
    /// channels when full duplex): the papers' N_links.
    pub links: usize,
    /// Mean aborted attempts per message.
    pub aborts_per_message: Option<f64>,
    /// 95% half-width of `aborts_per_message`.
    pub aborts_per_message_ci95: Option<f64>,
    /// Most aborts of a single message.
    pub aborts_max: u64,
    /// Hold requests that gave up waiting (`hold_timeout`) inside the window.
    pub hold_timeouts: u64,
    /// Fraction of link verifications that found the link held.
    pub p_conflict: Option<f64>,
    /// `p_conflict` split by the phase of the communication holding the link.
    pub p_conflict_by_phase: PhaseSplit<Option<f64>>,
    /// Conflict probability of the requests for the i-th link of their path (index 0 =
    /// the first link), up to the last hop requested; the last of 16 entries takes every
    /// later hop.
    pub p_conflict_by_hop: Vec<Option<f64>>,
    /// Conflict probability by where the request is on its path.
    pub p_conflict_by_kind: HopKindSplit,
    /// Conflict probability of the requests of attempts after at least one abort.
    pub p_conflict_retry: Option<f64>,
    /// Conflict probability of the requests of first attempts.
    pub p_conflict_first_attempt: Option<f64>,
    /// Link verifications per message (adaptive counts every candidate checked).
    pub link_requests_per_message: Option<f64>,
    /// Fraction of arrivals at the destination that found every receiving DMA busy.
    pub p_dma_conflict: Option<f64>,
    /// Time-average number of links held, by the holder's phase.
    pub links_held: PhaseSplit<f64>,
    /// Time-average fraction of the links held, by phase (the papers' N_link_held / N_links).
    pub links_held_fraction: PhaseSplit<f64>,
    /// Times per message of the phases; they add up to `latency` with `source_queue`.
    pub phases: PhaseSplit<Dist>,
    /// Mean cycles per message spent waiting for busy links or receivers (hold).
    pub link_wait_per_message: Option<f64>,
    /// Mean routing-controller queueing per message, over all its requests.
    pub controller_wait_per_message: Option<f64>,
    /// Distribution of the controller wait per request.
    pub controller_wait: Dist,
    /// The controller's requests by arrival class (classes with none omitted).
    pub controller_classes: Vec<ControllerClass>,
    /// Every node's controller (omitted above 4096 nodes).
    pub controllers: Option<Vec<NodeController>>,
}

/// A switching mode's block of the report; serialised as one field named after the mode.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ModeReport {
    /// Wormhole switching (paper 004).
    Wormhole(Wormhole),
    /// Circuit switching (papers 000 and 001).
    Circuit(Box<Circuit>),
    /// Deflection wormhole with virtual channels (paper 003).
    Deflection(Box<Deflection>),
    /// Wormhole with timeout reset on a host/switch network (paper 002).
    Timeout(Box<Timeout>),
}

/// A number with four decimals for a summary line ("n/a" when absent).
pub(crate) fn num4(x: Option<f64>) -> String {
    x.map(|v| format!("{v:.4}")).unwrap_or_else(|| "n/a".into())
}
