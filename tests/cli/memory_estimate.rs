//! The memory estimate of `limits::bytes_per_node`, which decides whether a run is
//! refused, is held against what the counting allocator of `routemu bench` measures when
//! the network is built: for every switching mode it must not fall short (a machine that
//! does not fit would be let through) nor be wildly generous (one that fits would be
//! refused).

use routemu::bench::alloc::{live_bytes, Counting};
use routemu::engine::network::Network;
use routemu::engine::sim::Simulation;
use routemu::switching::{with_mode, WithMode};

use crate::common;

// For the whole test binary (tests/cli.rs): one relaxed atomic add per allocation.
#[global_allocator]
static COUNTING: Counting = Counting;

/// Set in the process that measures (see [`alone`]).
const ALONE: &str = "ROUTEMU_TEST_MEMORY_ALONE";

/// The counting allocator counts what every thread of the process allocates, and the other
/// tests of this binary run beside this one: the measurement runs in a process of its
/// own, this binary again with test `test` of this module alone. True in that process;
/// in the first, runs it there, fails unless it passed, and returns false.
fn alone(test: &str) -> bool {
    if std::env::var_os(ALONE).is_some() {
        return true;
    }
    let name = match module_path!().split_once("::") {
        Some((_, module)) => format!("{module}::{test}"),
        None => test.to_string(),
    };
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args([name.as_str(), "--exact", "--test-threads", "1"])
        .env(ALONE, "1")
        .output()
        .expect("the test binary runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && stdout.contains("test result: ok. 1 passed"),
        "{name} in a process of its own:\n{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    false
}

/// Builds replication 0 of a configuration; returns the heap bytes it holds and its nodes.
struct Build<'a>(&'a routemu::config::HwConfig);

impl WithMode for Build<'_> {
    type Output = (usize, usize);
    fn run<N: Network + Send>(self) -> (usize, usize) {
        let before = live_bytes().expect("the counting allocator is installed");
        let sim = Simulation::<N>::build(self.0, 0).unwrap();
        let bytes = live_bytes().unwrap() - before;
        (bytes, sim.net.nodes())
    }
}

/// The estimate of every mode is at least what building the network allocates: within
/// 10% above it where the mode's tables are itemised (wormhole, with every allocator and
/// arbiter, circuit, deflection), within 40% in timeout switching, whose are not.
#[test]
fn the_memory_estimate_covers_what_building_each_mode_allocates_and_itemised_modes_within_10_percent(
) {
    if !alone(
        "the_memory_estimate_covers_what_building_each_mode_allocates_and_itemised_modes_within_10_percent",
    ) {
        return;
    }
    const ITEMISED: f64 = 1.10;
    const TIMEOUT: f64 = 1.40;
    for (hw, sets, within) in [
        ("circuit-hold.ron", &["topology.dim=14"][..], ITEMISED),
        (
            "circuit-hold.ron",
            &["topology.dim=14", "router.dma=2"],
            ITEMISED,
        ),
        ("circuit-torus-hold.ron", &["topology.k=128"], ITEMISED),
        (
            "circuit-torus-hold.ron",
            &["topology.k=128", "router.controller.servers=4"],
            ITEMISED,
        ),
        ("wormhole-torus-dor.ron", &["topology.k=128"], ITEMISED),
        ("wormhole-hypercube.ron", &["topology.dim=14"], ITEMISED),
        (
            "wormhole-hypercube.ron",
            &["topology.dim=14", "router.vcs=4"],
            ITEMISED,
        ),
        (
            "wormhole-torus-dor.ron",
            &["topology.k=128", "router.vc_release=TailSent"],
            ITEMISED,
        ),
        ("booksim-min-torus16.ron", &["topology.k=128"], ITEMISED),
        // The allocators' tables: matrix arbiters grow with the square of the requesters.
        (
            "booksim-min-torus16.ron",
            &["topology.k=128", "router.arbiter=Matrix"],
            ITEMISED,
        ),
        (
            "booksim-min-torus16.ron",
            &[
                "topology.k=128",
                "router.allocator=PortLevel",
                "router.arbiter=Matrix",
            ],
            ITEMISED,
        ),
        (
            "booksim-min-torus16.ron",
            &["topology.k=128", "router.allocator=Wavefront"],
            ITEMISED,
        ),
        (
            "booksim-min-torus16.ron",
            &["topology.k=128", "router.allocator=ISlip(iterations: 2)"],
            ITEMISED,
        ),
        // Terminal nodes of one port, rings only where links are (`TailSent`, 256 flits).
        (
            "dragonfly-booksim.ron",
            &["topology=Dragonfly(p: 4, a: 8, h: 4)"],
            ITEMISED,
        ),
        (
            "dragonfly-booksim.ron",
            &[
                "topology=Dragonfly(p: 4, a: 8, h: 4)",
                "router.arbiter=Matrix",
            ],
            ITEMISED,
        ),
        ("deflection-ms.ron", &["topology.k=128"], ITEMISED),
        (
            "deflection-ms.ron",
            &["topology.k=128", "router.vcs=8"],
            ITEMISED,
        ),
        ("timeout-lan-3x3.ron", &["topology.k=64"], TIMEOUT),
        (
            "timeout-lan-3x3.ron",
            &["topology=SwitchedTorus(k: 64, n: 2, hosts: 4)"],
            TIMEOUT,
        ),
        ("timeout-lan-7x7.ron", &["topology.k=64"], TIMEOUT),
    ] {
        let cfg = common::preset_with(hw, sets);
        let m = routemu::engine::machine::validate(&cfg).unwrap();
        let estimate = routemu::experiments::memory::bytes_per_node(&cfg, &m) as f64;
        let (bytes, nodes) = with_mode(&cfg.switching, Build(&cfg));
        let measured = bytes as f64 / nodes as f64;
        let ratio = estimate / measured;
        assert!(
            (1.0..within).contains(&ratio),
            "{hw} {sets:?}: estimate {estimate} B/node, measured {measured:.0} B/node \
             ({ratio:.3}, expected 1 to {within})"
        );
    }
}
