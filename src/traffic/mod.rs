//! Synthetic workloads: when each node creates a message ([`process`]), where it goes
//! ([`pattern`]) and how long it is ([`length`]). Every draw uses the creating node's own
//! random stream. Message traces are a separate source of messages (a later issue).

pub mod length;
pub mod pattern;
pub mod process;
pub mod reply;

use crate::config::WorkloadConfig;
use crate::foundation::error::{Error, Result};
use crate::topology::Topology;
pub use length::LengthDist;
pub use pattern::DestPattern;
pub use process::Arrivals;
pub use reply::Replies;

/// A workload bound to a topology: the three distributions together.
#[derive(Clone, Debug)]
pub struct Workload {
    /// Creation process (rate in messages per node per cycle).
    pub arrivals: Arrivals,
    /// Destinations.
    pub pattern: DestPattern,
    /// Lengths in flits (of the requests, under request/reply traffic).
    pub length: LengthDist,
    /// Request/reply traffic (`workload.reply`); None: one-way messages.
    pub reply: Option<Replies>,
}

/// [`Workload::flits_per_creation`] of a workload configuration's lengths (its rate
/// and pattern unchecked): what converts an offered load in flits per node per cycle
/// (`--load`) into `workload.rate`.
pub fn flits_per_creation(cfg: &WorkloadConfig) -> Result<f64> {
    let length = LengthDist::new(&cfg.length)?;
    Ok(match &cfg.reply {
        None => length.mean(),
        Some(r) => Replies::new(r)?.mean_round_trip_flits(&length),
    })
}

/// The largest `workload.rate` accepted, in messages per node per cycle.
pub const MAX_RATE: f64 = 64.0;

impl Workload {
    /// Builds and checks a workload; `seed` is the experiment's (it draws a random
    /// permutation pattern).
    pub fn new(cfg: &WorkloadConfig, topology: &Topology, seed: u64) -> Result<Self> {
        if !(cfg.rate > 0.0 && cfg.rate.is_finite()) {
            return Err(Error::config(format!(
                "workload.rate = {}: the message generation rate must be a positive number \
                 of messages per node per cycle",
                crate::foundation::limits::show(cfg.rate)
            )));
        }
        // A source creates its arrivals of a cycle one by one: an absurd rate would
        // fill memory within the cycle (and past ~1e16 the next arrival time no longer
        // advances in f64). No node injects more than a few dozen flits per cycle.
        if cfg.rate > MAX_RATE {
            return Err(Error::config(format!(
                "workload.rate = {}: at most {MAX_RATE} messages per node per cycle (far past \
                 what any node can inject; saturation needs only a rate above the \
                 network's capacity)",
                crate::foundation::limits::show(cfg.rate)
            )));
        }
        Ok(Workload {
            arrivals: Arrivals::new(cfg.process, cfg.rate)?,
            pattern: DestPattern::new(&cfg.pattern, topology, seed)?
                .with_fixed_points(cfg.fixed_points),
            length: LengthDist::new(&cfg.length)?,
            reply: cfg.reply.as_ref().map(Replies::new).transpose()?,
        })
    }

    /// Mean flits one creation of the workload puts into the network: its message's
    /// mean length, or under request/reply traffic a request's and its reply's together
    /// (the offered load in flits is the rate times this).
    pub fn flits_per_creation(&self) -> f64 {
        match &self.reply {
            None => self.length.mean(),
            Some(r) => r.mean_round_trip_flits(&self.length),
        }
    }

    /// Messages one creation puts into the network: 1, or 2 under request/reply traffic
    /// (a request and its reply).
    pub fn messages_per_creation(&self) -> f64 {
        if self.reply.is_some() {
            2.0
        } else {
            1.0
        }
    }

    /// The mean length of the messages in the network, in flits: the flits of a
    /// creation over its messages.
    pub fn mean_message_flits(&self) -> f64 {
        self.flits_per_creation() / self.messages_per_creation()
    }

    /// Draws a new message's length and, under request/reply traffic, the length of the
    /// reply its delivery will create (0: none).
    #[inline]
    pub fn draw_length(&self, rng: &mut crate::foundation::rng::NodeRng) -> (u32, u32) {
        match &self.reply {
            None => (self.length.sample(rng), 0),
            Some(r) => r.draw(&self.length, rng),
        }
    }
}
