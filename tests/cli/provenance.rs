//! Every JSON document routemu writes says which build wrote it (`routemu {version,
//! commit}`), with which command line (`command`), and for which machine (`config`, the
//! effective configuration).

use crate::common::routemu_json;

fn assert_provenance(v: &serde_json::Value, subcommand: &str) {
    assert_eq!(v["routemu"]["version"], env!("CARGO_PKG_VERSION"));
    let commit = v["routemu"]["commit"].as_str().expect("a commit string");
    assert!(
        commit == "unknown" || commit.len() >= 40,
        "a full hash or `unknown`: {commit}"
    );
    let command = v["command"].as_str().expect("a command line");
    assert!(
        command.contains(&format!(" {subcommand} ")),
        "the command line names the subcommand: {command}"
    );
}

#[test]
fn run_json_carries_the_build_the_command_line_and_the_effective_configuration() {
    let v = routemu_json(&[
        "run",
        "hw/wormhole-torus-dor.ron",
        "--set",
        "topology.k=4",
        "--warmup",
        "200",
        "--cycles",
        "500",
        "--replications",
        "1",
        "--json",
        "-",
    ]);
    assert_provenance(&v, "run");
    assert!(v["command"].as_str().unwrap().contains("topology.k=4"));
    assert_eq!(
        v["config"]["topology"]["Torus"]["k"], 4,
        "the override is in the config"
    );
}

#[test]
fn predict_and_compare_json_carry_the_build_and_the_command_line() {
    let p = routemu_json(&["predict", "hw/circuit-hold.ron", "--json", "-"]);
    assert_provenance(&p, "predict");
    let c = routemu_json(&[
        "compare",
        "hw/circuit-hold.ron",
        "--set",
        "topology.dim=4",
        "--warmup",
        "500",
        "--cycles",
        "2000",
        "--replications",
        "1",
        "--json",
        "-",
    ]);
    assert_provenance(&c, "compare");
}

#[test]
fn replay_json_carries_the_build_the_command_line_and_the_effective_configuration() {
    let v = routemu_json(&[
        "replay",
        "hw/circuit-drop.ron",
        "--trace",
        "traces/netrace/shrtex.tra.bz2",
        "--set",
        "switching.backoff=7",
        "--json",
        "-",
    ]);
    assert_provenance(&v, "replay");
    assert_eq!(v["config"]["switching"]["Circuit"]["backoff"], 7);
}

#[test]
fn sweep_json_carries_the_build_the_command_line_the_base_configuration_and_every_point() {
    let v = routemu_json(&[
        "sweep",
        "hw/wormhole-mesh-dor.ron",
        "--set",
        "topology.k=4",
        "--replications",
        "1",
        "--warmup",
        "200",
        "--cycles",
        "1000",
        "--param",
        "workload.rate=0.002,0.004",
        "--y",
        "latency",
        "--y",
        "throughput.accepted",
        "--json",
        "-",
    ]);
    assert_provenance(&v, "sweep");
    assert_eq!(v["schema"], "routemu.sweep/1");
    assert_eq!(v["config"]["topology"]["Mesh"]["k"], 4);
    let points = v["points"].as_array().unwrap();
    assert_eq!(points.len(), 2);
    assert_eq!(points[1]["values"]["workload.rate"], "0.004");
    let acc = points[1]["quantities"]["throughput.accepted"]["measured"]
        .as_f64()
        .unwrap();
    assert!(acc > 0.0, "{acc}");
    assert!(points[0]["quantities"]["latency"]["measured"].is_number());
}
