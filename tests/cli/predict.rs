//! `routemu predict`: the model alone, as a summary and as JSON; a saturated machine is
//! reported as saturated; machines without a model get a clear message and exit 1.

use crate::common;

#[test]
fn predict_writes_every_circuit_model_as_json() {
    let dir = tempfile::tempdir().unwrap();
    for (file, aborts) in [
        ("circuit-hold.ron", false),
        ("circuit-drop.ron", true),
        ("circuit-adaptive.ron", true),
        ("circuit-torus-hold.ron", false),
    ] {
        let out_path = dir.path().join(format!("{file}.json"));
        let out = common::routemu_ok(&[
            "predict",
            &format!("hw/{file}"),
            "--json",
            out_path.to_str().unwrap(),
        ]);
        let v: serde_json::Value = common::read_json(&out_path);
        assert_eq!(v["schema"], "routemu.predict/1");
        assert_eq!(v["saturated"], false);
        assert_eq!(v["saturated"], false);
        let p = &v["prediction"];
        let latency = p["latency"].as_f64().unwrap();
        assert!(latency > 1000.0 && latency < 2000.0, "{file}: {latency}");
        assert_eq!(p["aborts"].as_f64().unwrap() > 0.0, aborts, "{file}");
        assert!(String::from_utf8_lossy(&out.stdout).contains("latency"));
    }
}

#[test]
fn a_saturated_machine_is_a_result_not_a_number() {
    let (why, err) = common::predict_saturated("hw/circuit-hold.ron", "0.01");
    assert!(why.contains("links"), "{why}");
    assert!(err.contains("SATURATED"), "{err}");
}

#[test]
fn machines_without_a_model_are_refused_clearly() {
    for (args, word) in [
        (
            vec![
                "predict",
                "hw/circuit-torus-hold.ron",
                "--set",
                "switching.strategy=Adaptive",
                "--set",
                "switching.hold_timeout=None",
            ],
            "hypercube",
        ),
        (
            vec!["predict", "hw/circuit-hold.ron", "--pattern", "transpose"],
            "uniform",
        ),
        (vec!["predict", "hw/wormhole-mesh-dor.ron"], "torus"),
    ] {
        common::refused(1, &args, word);
    }
}

#[test]
fn predict_gives_paper_002s_timeout_model() {
    let out = common::routemu(&["predict", "hw/timeout-lan-3x3.ron", "--json", "-"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(
        err.contains("latency") && err.contains("paper 002"),
        "{err}"
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["saturated"], false);
    let p = &v["prediction"];
    // 0.3 flits/host/cycle on the 3×3 torus, L = 100, τ = 20 (spec §3.5: T ≈ 186.9).
    let latency = p["latency"].as_f64().unwrap();
    assert!(latency > 180.0 && latency < 195.0, "{latency}");
    let max = p["max_throughput"].as_f64().unwrap();
    assert!((max - 0.626).abs() < 0.003, "{max}");
    let tries = p["tries"].as_f64().unwrap();
    assert!(tries > 1.4 && tries < 1.7, "{tries}");
    let pt = &p["p_timeout_by_class"];
    assert_eq!(pt["hs"].as_f64(), Some(0.0));
    let (ss, sh) = (pt["ss"].as_f64().unwrap(), pt["sh"].as_f64().unwrap());
    assert!(0.0 < ss && ss < sh && sh < 1.0, "{pt}");

    // Past the maximum: saturated, with the maximum named.
    let (why, _) = common::predict_saturated("hw/timeout-lan-3x3.ron", "0.008");
    assert!(why.contains("maximum throughput"), "{why}");

    // Without a timeout there is no model.
    common::refused(
        1,
        &[
            "predict",
            "hw/timeout-lan-3x3.ron",
            "--set",
            "switching.timeout=None",
        ],
        "needs a timeout",
    );
}
