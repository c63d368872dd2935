//! The measurement window: which cycles are measured, as the engine keeps it
//! ([`MeasureWindow`]) and as the hardware asks it ([`Window`]).

use crate::config::Measure;
use crate::foundation::types::Cycle;

/// The measurement window as the hardware sees it.
pub trait Window {
    /// Whether something happening in cycle `t` is measured.
    fn contains(&self, t: Cycle) -> bool;

    /// The window's first cycle and, once known, the first cycle after it (for time
    /// integrals clipped to the window).
    fn span(&self) -> (Cycle, Option<Cycle>);
}

/// The measurement window: messages created inside it are measured; throughput and
/// utilisations count what happens inside it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MeasureWindow {
    /// First measured cycle (end of warm-up).
    pub start: Cycle,
    /// First cycle after the window, once known.
    pub end: Option<Cycle>,
    /// How the window is closed.
    pub measure: Measure,
}

impl Window for MeasureWindow {
    #[inline]
    fn contains(&self, t: Cycle) -> bool {
        t >= self.start && self.end.is_none_or(|e| t < e)
    }

    #[inline]
    fn span(&self) -> (Cycle, Option<Cycle>) {
        (self.start, self.end)
    }
}
