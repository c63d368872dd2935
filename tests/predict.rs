//! `routemu predict`: the model alone, as a summary and as JSON; machines without a model
//! and saturated ones get a clear message and a non-zero exit.

mod common;

#[test]
fn predict_writes_the_hold_and_adaptive_models_as_json() {
    let dir = tempfile::tempdir().unwrap();
    for (file, aborts) in [("circuit-hold.ron", false), ("circuit-adaptive.ron", true)] {
        let out_path = dir.path().join(format!("{file}.json"));
        let out = common::routemu(&[
            "predict",
            &format!("hw/{file}"),
            "--json",
            out_path.to_str().unwrap(),
        ]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let v: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&out_path).unwrap()).unwrap();
        assert_eq!(v["schema"], "routemu.predict/1");
        let p = &v["prediction"];
        let latency = p["latency"].as_f64().unwrap();
        assert!(latency > 1000.0 && latency < 2000.0, "{file}: {latency}");
        assert_eq!(p["aborts"].as_f64().unwrap() > 0.0, aborts, "{file}");
        assert!(String::from_utf8_lossy(&out.stdout).contains("latency"));
    }
}

#[test]
fn machines_without_a_model_and_saturated_ones_are_refused_clearly() {
    for (args, word) in [
        (vec!["predict", "hw/circuit-drop.ron"], "drop"),
        (vec!["predict", "hw/wormhole-torus-dor.ron"], "wormhole"),
        (
            vec!["predict", "hw/circuit-hold.ron", "--rate", "0.01"],
            "saturated",
        ),
    ] {
        let out = common::routemu(&args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {err}");
        assert!(err.contains(word), "{args:?}: {err}");
    }
}
