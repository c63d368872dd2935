//! Switching modes: how a node's hardware is sequenced within a cycle and what travels
//! between nodes. One module per mode: [`wormhole`] is paper 004's flit-level wormhole
//! switching with virtual channels, [`circuit`] the circuit switching of papers 000 and
//! 001 with hold, drop and adaptive conflict resolution, [`deflection`] paper 003's
//! deflection wormhole with virtual channels (WDVC) on the Manhattan Street network,
//! [`timeout`] paper 002's wormhole LAN with the backward timeout reset.
//!
//! [`with_mode`] is the one place that maps a configuration's `switching` section to the
//! routers that run it; the experiments (and the benchmarks) go through it, never the
//! engine, so a new mode is added here and in its own module. [`Mode`] is what a mode adds
//! to the engine's [`Network`]: its block of the report ([`report`]).

pub mod circuit;
pub mod deflection;
pub mod report;
pub mod timeout;
pub mod wormhole;
pub mod zero_load;

use crate::config::{BackoffDist, SwitchingConfig};
use crate::engine::network::{ModeContext, Network};
use crate::engine::replication::RepResult;
use crate::foundation::rng::{below, exponential, NodeRng};
use report::ModeReport;

/// A switching mode: the routers the engine steps ([`Network`]), and the block of the
/// report its measurements make.
pub trait Mode: Network {
    /// The mode's block of the report from every replication (with its mode-independent
    /// results), in replication order.
    fn report(ctx: ModeContext<'_>, reps: &[RepResult<Self::Measures>]) -> ModeReport;
}

/// Something to do with the routers of whichever switching mode a machine has (a
/// generic function the caller cannot name as a closure).
pub trait WithMode {
    /// What it gives.
    type Output;
    /// Does it with the routers `N`.
    fn run<N: Mode + Send>(self) -> Self::Output;
}

/// Runs `w` with the routers of the switching mode `s` describes.
pub fn with_mode<W: WithMode>(s: &SwitchingConfig, w: W) -> W::Output {
    match s {
        SwitchingConfig::Wormhole { .. } => w.run::<wormhole::WormholeNet>(),
        SwitchingConfig::Circuit { .. } => w.run::<circuit::CircuitNet>(),
        SwitchingConfig::Deflection { .. } => w.run::<deflection::DeflectionNet>(),
        SwitchingConfig::Timeout { .. } => w.run::<timeout::TimeoutNet>(),
    }
}

/// A random delay of mean `mean` cycles (≥ 1) drawn by `dist`: exactly `mean`,
/// exponential rounded to at least 1 cycle, or uniform on 1 ..= 2·mean − 1.
#[inline]
pub fn delay(rng: &mut NodeRng, dist: BackoffDist, mean: u64) -> u64 {
    match dist {
        BackoffDist::Constant => mean,
        BackoffDist::Exponential => (exponential(rng, 1.0 / mean as f64).round() as u64).max(1),
        BackoffDist::Uniform => 1 + below(rng, 2 * mean - 1),
    }
}
