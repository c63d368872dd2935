//! Models that say where they hold (issue 31, part 4): `predict` and `compare` tell, per
//! quantity, whether the point lies in the range where the model was validated, and warn
//! when it does not; the dimension-order torus model queues for the DMA engines; the
//! routing controller's P-K wait on the wormhole torus is corrected for headers that never
//! meet their own input's; a pattern no model covers names the model that refuses; the
//! help lists every model.

use crate::common;
use serde_json::Value;

fn predict_json(args: &[&str]) -> Value {
    let mut all = vec!["predict"];
    all.extend_from_slice(args);
    all.extend_from_slice(&["--json", "-"]);
    let out = common::routemu_ok(&all);
    serde_json::from_slice(&out.stdout).unwrap()
}

/// A short emulation: 2 replications of 20 000 cycles after 5 000.
const SHORT: [&str; 6] = [
    "--set",
    "experiment.replications=2",
    "--set",
    "experiment.warmup=5000",
    "--set",
    "experiment.measure=Cycles(20000)",
];

fn compare_json(args: &[&str]) -> (Value, String) {
    let mut all = vec!["compare"];
    all.extend_from_slice(args);
    all.extend_from_slice(&SHORT);
    all.extend_from_slice(&["--json", "-"]);
    let out = common::routemu_ok(&all);
    (
        serde_json::from_slice(&out.stdout).unwrap(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn row<'a>(v: &'a Value, key: &str) -> &'a Value {
    v["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["key"] == key)
        .unwrap()
}

#[test]
fn every_model_is_in_range_at_a_validated_point_and_out_at_the_far_off_ones() {
    let ctrl100 = [
        "--set",
        "router.controller.servers=64",
        "--set",
        "router.controller.verify=100",
        "--set",
        "router.controller.link_conn=100",
        "--set",
        "router.controller.release=100",
        "--set",
        "switching.ack=Total(100)",
        "--set",
        "switching.backoff=2000",
    ];
    let adaptive_far: Vec<&str> = ["hw/circuit-adaptive.ron", "--rate", "0.00015"]
        .into_iter()
        .chain(ctrl100)
        .collect();
    // (arguments, quantity, in range): the far-off points are the validation's (the
    // range table's sources say what was measured there).
    let cases: Vec<(Vec<&str>, &str, bool)> = vec![
        (vec!["hw/circuit-hold.ron"], "latency", true),
        // d = 8 hold at 0.15/unit: the model's U 0.26, past 0.15.
        (
            vec!["hw/circuit-hold.ron", "--rate", "0.00015"],
            "latency",
            false,
        ),
        (vec!["hw/circuit-torus-hold.ron"], "latency", true),
        // 0.03/unit on the 8×8 torus: −23% measured.
        (
            vec!["hw/circuit-torus-hold.ron", "--rate", "0.00003"],
            "latency",
            false,
        ),
        (vec!["hw/circuit-drop.ron"], "latency", true),
        // Past the largest validated occupancy.
        (
            vec!["hw/circuit-drop.ron", "--rate", "0.0003"],
            "latency",
            false,
        ),
        (vec!["hw/circuit-adaptive.ron"], "latency", true),
        // Controller times 0.1 at 0.15/unit: −15.3% measured.
        (adaptive_far, "latency", false),
        (vec!["hw/wormhole-torus-dor.ron"], "latency", true),
        // 0.87 of the model's saturation rate: +11.5% measured.
        (
            vec!["hw/wormhole-torus-dor.ron", "--rate", "0.0125"],
            "latency",
            false,
        ),
        (
            vec!["hw/wormhole-torus-adaptive.ron", "--rate", "0.003"],
            "latency",
            true,
        ),
        // 14% of the uniform bound: −18.9% measured.
        (
            vec!["hw/wormhole-torus-adaptive.ron", "--rate", "0.012"],
            "latency",
            false,
        ),
        // Worms 5 per-hop delays long: the model's system.
        (
            vec!["hw/deflection-ms.ron", "--length", "exp:5"],
            "p_deflect",
            true,
        ),
        // L̄ = 100: p is 43% below the emulation at the preset.
        (vec!["hw/deflection-ms.ron"], "p_deflect", false),
        (vec!["hw/deflection-ms.ron"], "eta", true),
        (vec!["hw/timeout-lan-3x3.ron"], "latency", true),
        (
            vec!["hw/timeout-lan-3x3.ron", "--load", "0.4"],
            "latency",
            false,
        ),
    ];
    for (args, quantity, inside) in cases {
        let v = predict_json(&args);
        let p = &v["prediction"];
        let q = &p["range"][quantity];
        assert_eq!(q["in_range"], inside, "{args:?}: {q}");
        assert!(q["bound"].is_string() && q["why"].is_string(), "{q}");
        if !inside {
            assert_eq!(p["in_range"], false, "{args:?}");
        }
    }
    // The deflection model at L̄/δ = 5 is inside for every bounded quantity.
    let v = predict_json(&["hw/deflection-ms.ron", "--length", "exp:5"]);
    assert_eq!(v["prediction"]["in_range"], true, "{v}");
}

#[test]
fn a_saturated_model_and_a_quantity_never_validated_are_out_of_range() {
    // The dimension-order model calls 18% of the uniform bound saturated.
    let v = predict_json(&["hw/wormhole-torus-dor.ron", "--rate", "0.015"]);
    assert_eq!(v["saturated"], true);
    let p = &v["prediction"];
    assert_eq!(p["in_range"], false);
    assert!(p["range"]["latency"]["here"]
        .as_str()
        .unwrap()
        .contains("saturates"));
    // Never measured within tolerance: no bound, out, and not counted overall.
    let v = predict_json(&["hw/wormhole-torus-dor.ron"]);
    let b = &v["prediction"]["range"]["blocking_per_hop"];
    assert_eq!(b["in_range"], false);
    assert!(b["bound"].is_null());
    assert_eq!(v["prediction"]["in_range"], true);
}

#[test]
fn predict_warns_in_its_summary_when_out_of_range_and_not_inside_it() {
    let out = common::routemu_ok(&[
        "predict",
        "hw/wormhole-torus-adaptive.ron",
        "--rate",
        "0.012",
    ]);
    let s = String::from_utf8_lossy(&out.stdout);
    assert!(s.contains("WARNING: latency is OUTSIDE"), "{s}");
    let out = common::routemu_ok(&[
        "predict",
        "hw/wormhole-torus-adaptive.ron",
        "--rate",
        "0.003",
    ]);
    let s = String::from_utf8_lossy(&out.stdout);
    assert!(
        !s.contains("WARNING") && s.contains("inside the validated range"),
        "{s}"
    );
}

#[test]
fn compare_reports_the_measured_error_next_to_in_range() {
    let (v, err) = compare_json(&["hw/wormhole-torus-adaptive.ron", "--rate", "0.012"]);
    let lat = row(&v, "latency");
    assert_eq!(lat["in_range"], false, "{lat}");
    // The validation's far-off point: the model about 19% low.
    assert!(lat["error"].as_f64().unwrap() < -0.1, "{lat}");
    assert_eq!(v["prediction"]["in_range"], false);
    assert!(err.contains("OUT") && err.contains("WARNING"), "{err}");
    // Rows the model does not predict carry no verdict.
    assert!(row(&v, "accepted")["in_range"].is_null());
}

#[test]
fn the_dimension_order_model_queues_for_the_dma_engines() {
    let at = |dma: &str| {
        let v = predict_json(&[
            "hw/wormhole-torus-dor.ron",
            "--rate",
            "0.01",
            "--set",
            &format!("router.dma={dma}"),
        ]);
        v["prediction"].clone()
    };
    let (one, two) = (at("1"), at("2"));
    let lat = |p: &Value| p["latency"].as_f64().unwrap();
    // One engine: an M/G/1 source queue and ejection, about a cycle each at 0.01.
    assert!(lat(&one) > lat(&two) + 1.0, "{one} vs {two}");
    assert!(one["source_wait"].as_f64().unwrap() > 0.5, "{one}");
    assert!(two["source_wait"].as_f64().unwrap() < 0.1, "{two}");
    // Against the emulation at 0.01 (measured within 5.5% with 5 replications).
    let (v, _) = compare_json(&[
        "hw/wormhole-torus-dor.ron",
        "--rate",
        "0.01",
        "--set",
        "router.dma=1",
    ]);
    let e = row(&v, "latency")["error"].as_f64().unwrap();
    assert!(e.abs() < 0.1, "{e}");
}

#[test]
fn the_controllers_pk_wait_on_the_wormhole_torus_is_corrected_for_the_same_input() {
    let (v, _) = compare_json(&[
        "hw/wormhole-torus-dor.ron",
        "--set",
        "router.controller.route=4",
    ]);
    // P-K about 19% above the measured wait; P-K × F within a few per cent.
    let pk = row(&v, "ctrl_wait_pk")["error"].as_f64().unwrap();
    let corrected = row(&v, "ctrl_wait_corrected");
    let c = corrected["error"].as_f64().unwrap();
    assert!(pk > 0.1, "{pk}");
    assert!(c.abs() < 0.05, "{c}");
    assert!(corrected["label"].as_str().unwrap().contains("same input"));
    let busy = row(&v, "ctrl_busy_corrected")["error"].as_f64().unwrap();
    assert!(busy.abs() < 0.08, "{busy}");
}

#[test]
fn a_pattern_no_model_covers_names_the_model_that_refuses() {
    let err = common::refused(
        1,
        &[
            "predict",
            "hw/wormhole-torus-dor.ron",
            "--pattern",
            "transpose",
        ],
        "dimension-order wormhole torus model",
    );
    assert!(
        err.contains("Transpose") && !err.contains("paper 004"),
        "{err}"
    );
    common::refused(
        1,
        &[
            "predict",
            "hw/wormhole-torus-adaptive.ron",
            "--pattern",
            "transpose",
        ],
        "paper 004's adaptive wormhole model",
    );
}

#[test]
fn predict_and_compare_help_list_every_model() {
    for cmd in ["predict", "compare"] {
        let out = common::routemu_ok(&[cmd, "--help"]);
        let s = String::from_utf8_lossy(&out.stdout);
        for model in [
            "circuit hold / drop",
            "circuit adaptive",
            "adaptive wormhole",
            "dimension-order wormhole",
            "deflection (WDVC)",
            "wormhole with timeout",
            "prediction.in_range",
        ] {
            assert!(s.contains(model), "{cmd} --help lacks {model}: {s}");
        }
    }
}
