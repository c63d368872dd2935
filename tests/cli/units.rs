//! Loads in the units a researcher thinks in: `--load` takes flits per node per cycle,
//! and the reported capacity is the machine's, link width and half-duplex links
//! included.

use crate::common::{preset, routemu, routemu_json};
use routemu::config::Duplex;
use routemu::topology::Topology;

#[test]
fn load_in_flits_sets_the_message_rate_from_the_mean_length() {
    let common = [
        "run",
        "hw/wormhole-torus-dor.ron",
        "--set",
        "topology.k=4",
        "--warmup",
        "500",
        "--cycles",
        "4000",
        "--replications",
        "1",
        "--json",
        "-",
    ];
    let mut args = common.to_vec();
    args.extend(["--length", "uniform:4:20", "--load", "0.24"]);
    let v = routemu_json(&args);
    // Uniform on 4..20 has mean 12: 0.24 flits are 0.02 messages per node per cycle.
    let rate = v["config"]["workload"]["rate"].as_f64().unwrap();
    assert!((rate - 0.02).abs() < 1e-12, "rate {rate}");
    let offered = v["throughput"]["offered"].as_f64().unwrap();
    assert!(
        (offered - 0.24).abs() < 0.03,
        "the offered load in flits is what was asked for: {offered}"
    );
}

#[test]
fn load_and_rate_together_or_a_negative_load_are_refused() {
    for extra in [
        &["--load", "0.1", "--rate", "0.01"][..],
        &["--load=-0.1"][..],
        &["--load", "NaN"][..],
    ] {
        let mut args = vec!["run", "hw/wormhole-torus-dor.ron"];
        args.extend(extra);
        let out = routemu(&args);
        assert!(!out.status.success(), "{extra:?} accepted");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("--load") || err.contains("--rate"), "{err}");
        assert!(!err.contains("panicked"), "{err}");
    }
}

#[test]
fn capacity_scales_with_the_link_width() {
    let cfg = preset("wormhole-torus-dor.ron");
    let t = Topology::from_config(&cfg.topology).unwrap();
    assert_eq!(t.capacity_of_links(2, false), 2.0 * t.capacity());
    let v = routemu_json(&[
        "run",
        "hw/wormhole-torus-dor.ron",
        "--set",
        "topology.k=4",
        "--set",
        "links.width=2",
        "--warmup",
        "100",
        "--cycles",
        "300",
        "--replications",
        "1",
        "--json",
        "-",
    ]);
    // 4-ary 2-cube, bidirectional: 8/k = 2 flits/node/cycle per flit of width.
    assert_eq!(v["throughput"]["capacity"].as_f64(), Some(4.0));
}

#[test]
fn half_duplex_links_halve_the_capacity_of_a_bidirectional_network() {
    let cfg = preset("circuit-hold.ron");
    assert_eq!(cfg.links.duplex, Duplex::Half);
    let t = Topology::from_config(&cfg.topology).unwrap();
    assert_eq!(t.capacity_of_links(1, true), t.capacity() / 2.0);
    // A unidirectional ring's links are single channels: nothing to share.
    let uni = preset("deflection-ms.ron");
    let u = Topology::from_config(&uni.topology).unwrap();
    assert_eq!(u.capacity_of_links(1, true), u.capacity());
    let v = routemu_json(&[
        "run",
        "hw/circuit-hold.ron",
        "--set",
        "topology.dim=4",
        "--warmup",
        "100",
        "--cycles",
        "1000",
        "--replications",
        "1",
        "--json",
        "-",
    ]);
    assert_eq!(v["throughput"]["capacity"].as_f64(), Some(1.0));
}
