//! Replay speed: messages replayed per second on a generated trace (held in memory, so
//! the figure is the replay's, not the disk's), open loop and dependency-driven.

use crate::config::load::parse_hw;
use crate::engine::replay::{replay, ReplayMode, ReplayOptions};
use crate::error::Result;
use crate::switching::wormhole::WormholeNet;
use crate::trace::text::TextReader;
use std::fmt::Write;
use std::time::Instant;

/// A text trace of `n` 4-flit messages on 64 nodes, one every 2 cycles, each with the
/// message 64 later as its dependant.
pub fn generated_trace(n: u64) -> String {
    let mut s = String::from("time src dst flits id deps\n");
    for i in 0..n {
        let dep = if i + 64 < n {
            format!("{}", i + 64)
        } else {
            "-".into()
        };
        let _ = writeln!(s, "{} {} {} 4 {i} {dep}", 2 * i, i % 64, (i * 7 + 1) % 64);
    }
    s
}

/// Messages per second replaying `n` generated messages on the 8×8 DOR torus preset in
/// `mode` (best of `repeats`).
pub fn messages_per_second(n: u64, mode: ReplayMode, repeats: usize) -> Result<f64> {
    let cfg = parse_hw(
        include_str!("../../hw/wormhole-torus-dor.ron"),
        "hw/wormhole-torus-dor.ron",
    )?;
    let text = generated_trace(n);
    let opts = ReplayOptions {
        mode,
        ..ReplayOptions::default()
    };
    let mut best = f64::MAX;
    for _ in 0..repeats.max(1) {
        let mut src = TextReader::new(
            Box::new(std::io::Cursor::new(text.clone().into_bytes())),
            std::path::Path::new("generated"),
        )?;
        let start = Instant::now();
        let s = replay::<WormholeNet>(&cfg, &mut src, &opts, &mut |_| Ok(()))?;
        assert_eq!(s.delivered, n);
        best = best.min(start.elapsed().as_secs_f64());
    }
    Ok(n as f64 / best)
}
