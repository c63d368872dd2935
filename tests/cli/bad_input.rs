//! Bad input never panics: a clear message on stderr, exit status 1, nothing written.

use crate::common;

/// Bad input: exit status 1, no panic, `needle` on stderr.
fn fails_with(args: &[&str], needle: &str) {
    common::refused(1, args, needle);
}

#[test]
fn malformed_ron_names_file_line_and_column() {
    let (_dir, f) = common::temp_file(
        "bad.ron",
        "(\n  topology: Torus(k: 8, n: 2),\n  switching: Wormhole(routing: ,\n)",
    );
    let f = f.to_str().unwrap();
    fails_with(&["check", f], "bad.ron:3:");
    fails_with(&["run", f], "bad.ron:3:");
}

#[test]
fn unknown_field_is_named() {
    let (_dir, f) = common::temp_file(
        "unknown.ron",
        "(topology: Torus(k: 8, n: 2), router: (vcs: 4, bufer_flits: 8), switching: Wormhole(routing: Adaptive))",
    );
    fails_with(&["check", f.to_str().unwrap()], "bufer_flits");
}

#[test]
fn impossible_networks_are_refused() {
    fails_with(
        &[
            "check",
            "hw/wormhole-hypercube.ron",
            "--set",
            "topology.dim=0",
        ],
        "topology.dim = 0",
    );
    fails_with(
        &["run", "hw/wormhole-torus-dor.ron", "--set", "topology.k=1"],
        "topology.k = 1",
    );
    fails_with(
        &["run", "hw/wormhole-mesh-dor.ron", "--set", "topology.k=1"],
        "topology.k = 1",
    );
    fails_with(
        &["run", "hw/wormhole-torus-dor.ron", "--set", "topology.n=0"],
        "topology.n = 0",
    );
}

#[test]
fn non_positive_rates_and_empty_messages_are_refused() {
    fails_with(
        &["run", "hw/wormhole-torus-dor.ron", "--rate", "0"],
        "workload.rate",
    );
    fails_with(
        &["run", "hw/wormhole-torus-dor.ron", "--rate=-0.5"],
        "workload.rate",
    );
    fails_with(
        &["run", "hw/wormhole-torus-dor.ron", "--rate", "NaN"],
        "workload.rate",
    );
    // A rate no node could ever inject filled memory within one cycle (hardening D06).
    fails_with(
        &["run", "hw/wormhole-torus-dor.ron", "--rate", "1e20"],
        "at most 64 messages per node per cycle",
    );
    fails_with(
        &["run", "hw/wormhole-torus-dor.ron", "--length", "0"],
        "flits",
    );
    fails_with(
        &[
            "run",
            "hw/wormhole-torus-dor.ron",
            "--length",
            "uniform:0:4",
        ],
        "flits",
    );
    fails_with(
        &["run", "hw/wormhole-torus-dor.ron", "--length", "exp:-3"],
        "mean",
    );
}

#[test]
fn virtual_channels_the_routing_cannot_use_are_refused() {
    // Too few for the dateline classes, the escape channels, or the allocator's masks.
    fails_with(
        &["run", "hw/wormhole-torus-dor.ron", "--set", "router.vcs=1"],
        "at least 2 virtual channels",
    );
    fails_with(
        &[
            "run",
            "hw/wormhole-torus-adaptive.ron",
            "--set",
            "router.vcs=2",
        ],
        "at least 3 virtual channels",
    );
    fails_with(
        &["run", "hw/wormhole-mesh-dor.ron", "--set", "router.vcs=0"],
        "router.vcs = 0",
    );
    fails_with(
        &["run", "hw/wormhole-torus-dor.ron", "--set", "router.vcs=65"],
        "at most 64",
    );
    fails_with(
        &[
            "run",
            "hw/wormhole-torus-dor.ron",
            "--set",
            "router.buffer_flits=0",
        ],
        "buffer_flits = 0",
    );
    fails_with(
        &["run", "hw/wormhole-torus-dor.ron", "--set", "router.dma=0"],
        "router.dma = 0",
    );
    fails_with(
        &[
            "run",
            "hw/wormhole-torus-dor.ron",
            "--set",
            "links.latency=0",
        ],
        "links.latency",
    );
    fails_with(
        &[
            "run",
            "hw/booksim-min-torus8.ron",
            "--set",
            "router.ni.credit_latency=99999999999",
        ],
        "router.ni.credit_latency = 99999999999: at most",
    );
}

#[test]
fn bad_flags_and_overrides_are_explained() {
    fails_with(
        &[
            "run",
            "hw/wormhole-torus-dor.ron",
            "--set",
            "router.colour=red",
        ],
        "valid paths are",
    );
    fails_with(
        &["run", "hw/wormhole-torus-dor.ron", "--set", "router.vcs"],
        "path=value",
    );
    fails_with(
        &["run", "hw/wormhole-torus-dor.ron", "--pattern", "spiral"],
        "--pattern",
    );
    fails_with(
        &[
            "run",
            "hw/wormhole-torus-dor.ron",
            "--pattern",
            "hotspot:99:0.5",
        ],
        "workload.pattern.node",
    );
    fails_with(&["run", "hw/does-not-exist.ron"], "does-not-exist.ron");
    fails_with(
        &["run", "hw/wormhole-torus-dor.ron", "--replications", "0"],
        "replications",
    );
}

#[test]
fn an_unwritable_report_leaves_nothing_behind() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("missing-dir").join("r.json");
    fails_with(
        &[
            "run",
            "hw/wormhole-torus-dor.ron",
            "--cycles",
            "100",
            "--warmup",
            "0",
            "--json",
            target.to_str().unwrap(),
        ],
        "r.json",
    );
    assert!(!target.exists());
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}

#[test]
fn an_unknown_kind_of_torus_route_is_refused_with_the_kinds() {
    for args in [
        vec![
            "check",
            "hw/timeout-lan-3x3.ron",
            "--set",
            "topology.routes=Zigzag",
        ],
        vec![
            "run",
            "hw/timeout-lan-3x3.ron",
            "--set",
            "topology=SwitchedTorus(k: 3, routes: Random)",
        ],
    ] {
        fails_with(&args, "`DimensionOrder` or `Spread`");
    }
    // Routes belong to the torus of switches only.
    fails_with(
        &[
            "check",
            "hw/wormhole-torus-dor.ron",
            "--set",
            "topology.routes=Spread",
        ],
        "routes",
    );
}
