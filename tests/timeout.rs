//! Wormhole with the backward timeout reset on host/switch networks (paper 002): a lone
//! worm arrives at the closed-form time; a worm that waits too long for a link is reset
//! and sent again, once delivered; every worm is delivered exactly once however many
//! resets; a plain-wormhole deadlock is ended by the timeout; bad machines are refused.

mod common;

use routemu::config::overrides::apply_overrides;
use routemu::config::HwConfig;
use routemu::engine::sim::Simulation;
use routemu::switching::timeout::{zero_load_latency, TimeoutNet};
use routemu::topology::Topology;
use routemu::types::NodeId;

fn machine(sets: &[&str]) -> HwConfig {
    let mut all = vec![
        "workload.length=Constant(flits: 100)",
        "experiment.warmup=0",
        "experiment.measure=Cycles(100000000)",
        "experiment.replications=1",
    ];
    all.extend_from_slice(sets);
    let sets: Vec<String> = all.iter().map(|s| s.to_string()).collect();
    apply_overrides(&common::preset("timeout-lan-3x3.ron"), &sets).unwrap()
}

fn scripted(cfg: &HwConfig) -> Simulation<TimeoutNet> {
    let mut cfg = cfg.clone();
    cfg.experiment.idle_skip = false;
    let mut sim = Simulation::<TimeoutNet>::build(&cfg, 0).unwrap();
    sim.stop_workload();
    sim.record_deliveries();
    sim
}

#[test]
fn a_lone_worm_arrives_after_links_times_latency_plus_its_length() {
    for (k, hosts, lat) in [(3u32, 1u32, 1u64), (3, 2, 20), (4, 1, 3)] {
        let cfg = machine(&[
            &format!("topology.k={k}"),
            &format!("topology.hosts={hosts}"),
            &format!("links.latency={lat}"),
            &format!("router.buffer_flits={}", 2 * lat),
        ]);
        let t = Topology::from_config(&cfg.topology).unwrap();
        let ends = t.endpoints();
        let mut sim = scripted(&cfg);
        for a in ends.clone() {
            for b in ends.clone() {
                if a == b {
                    continue;
                }
                let len = 1 + (a + 7 * b) % 30;
                sim.inject(NodeId(a), NodeId(b), len);
                assert!(sim.run_until_empty(100_000));
            }
        }
        let ds = sim.stats.deliveries.as_ref().unwrap();
        let n = ends.len();
        assert_eq!(ds.len(), n * (n - 1));
        for d in ds {
            let h = &d.header;
            let links = t.distance(h.id.src(), h.dst) as u64;
            assert_eq!(
                d.absorbed - h.created,
                zero_load_latency(links, h.len as u64, lat),
                "k={k} hosts={hosts} ℓ={lat}: {} → {} over {links} links",
                h.id.src(),
                h.dst
            );
        }
    }
}
