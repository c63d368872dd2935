//! Replay speed: messages replayed per second on a generated trace (held in memory, so
//! the figure is the replay's, not the disk's), open loop and dependency-driven, on one
//! thread and on several.

use crate::config::load::parse_hw;
use crate::experiments::replay::{replay, ReplayMode, ReplayOptions};
use crate::foundation::error::Result;
use crate::switching::wormhole::WormholeNet;
use crate::trace::text::TextReader;
use std::fmt::Write;
use std::time::Instant;

/// A text trace of `n` 4-flit messages on `nodes` nodes (a power of two) at one message
/// per node every 128 cycles on average (one every 2 cycles on 64 nodes), each with the
/// message `nodes` later as its dependant. Consecutive messages come from sources 389
/// apart, so that the load is spread over the network (and over its partitions) rather
/// than sweeping through it.
pub fn generated_trace(n: u64, nodes: u64) -> String {
    let mut s = String::from("time src dst flits id deps\n");
    for i in 0..n {
        let dep = if i + nodes < n {
            format!("{}", i + nodes)
        } else {
            "-".into()
        };
        let _ = writeln!(
            s,
            "{} {} {} 4 {i} {dep}",
            i * 128 / nodes,
            (i * 389) % nodes,
            (i * 7 + 1) % nodes
        );
    }
    s
}

/// Messages per second replaying `n` generated messages in `mode` on the DOR torus
/// preset made `k`×`k`, split for `threads` threads (every partition holding at least
/// 128 nodes); best of `repeats`.
pub fn messages_per_second(
    n: u64,
    mode: ReplayMode,
    k: u32,
    threads: u32,
    repeats: usize,
) -> Result<f64> {
    let mut cfg = parse_hw(
        include_str!("../../hw/wormhole-torus-dor.ron"),
        "hw/wormhole-torus-dor.ron",
    )?;
    if let crate::config::TopologyConfig::Torus { k: ref mut kk, .. } = cfg.topology {
        *kk = k;
    }
    cfg.experiment.threads = threads;
    let text = generated_trace(n, (k * k) as u64);
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
