//! An isolated routing controller fed Poisson requests with a deterministic service
//! time is an M/D/1 queue: its measured mean wait must be the Pollaczek–Khinchine value
//! ρ·S / (2(1 − ρ)) within 3%, at ρ = 0.5 and ρ = 0.8. Inside a hold network it is not:
//! set-ups that inherit a link arrive right behind the previous holder's release
//! (chained), find the controller busy and wait D_release − D_link_conn more; the
//! measured fraction of arrivals finding it busy exceeds ρ, and the corrected prediction
//! (`foundation::mg1::chained_wait`) is close where P-K is far off.

use crate::common;

use routemu::config::Measure;
use routemu::experiments::experiment::run_experiment;
use routemu::foundation::rng::{exponential, stream};
use routemu::foundation::types::Cycle;
use routemu::router::controller::{Controllers, CtrlRequest};
use serde_json::Value;

/// Feeds `n` Poisson arrivals of rate `lambda` per cycle to a one-server controller with
/// service `s` cycles; returns the measured mean wait.
fn measured_wait(lambda: f64, s: Cycle, n: u64, seed: u64) -> f64 {
    let mut c = Controllers::new(1, 1, 1 << 16).unwrap();
    let mut rng = stream(seed, 0, 0, 0);
    let mut next = exponential(&mut rng, lambda);
    let mut pushed = 0u64;
    let mut free_at: Cycle = 0;
    loop {
        // The next cycle where something can happen: an arrival, or the server freeing
        // up with requests queued.
        let arrival = if pushed < n {
            next as Cycle
        } else {
            Cycle::MAX
        };
        let serve = if c.queued(0) > 0 { free_at } else { Cycle::MAX };
        let t = arrival.min(serve);
        if t == Cycle::MAX {
            break;
        }
        while pushed < n && (next as Cycle) == t {
            c.push(
                0,
                CtrlRequest {
                    port: 0,
                    vc: 0,
                    kind: 0,
                    tag: 0,
                    arrived: t,
                },
            );
            pushed += 1;
            next += exponential(&mut rng, lambda);
        }
        if let Some((_, done)) = c.start(0, t, |_| s, |_| true) {
            free_at = done + 1;
        }
    }
    let st = c.stats[0];
    assert_eq!(st.arrivals, n);
    st.wait_sum as f64 / st.arrivals as f64
}

#[test]
fn an_isolated_controller_waits_as_m_d_1_predicts() {
    let s = 100;
    for (rho, seed) in [(0.5, 1), (0.8, 2)] {
        let lambda = rho / s as f64;
        let pk = rho * s as f64 / (2.0 * (1.0 - rho));
        let w = measured_wait(lambda, s, 1_000_000, seed);
        let err = (w - pk).abs() / pk;
        eprintln!("rho {rho}: measured {w:.3} vs M/D/1 {pk:.3}");
        assert!(
            err < 0.03,
            "ρ = {rho}: measured {w:.2}, M/D/1 {pk:.2} ({:.1}% off)",
            100.0 * err
        );
    }
}

/// The d = 8 hold preset with D_verify = D_release = 50 at λ = 0.1/unit, short.
fn hold_50() -> routemu::config::HwConfig {
    let mut cfg = common::preset("circuit-hold.ron");
    cfg.router.controller.verify = 50;
    cfg.router.controller.release = 50;
    cfg.experiment.replications = 2;
    cfg.experiment.warmup = 20_000;
    cfg.experiment.measure = Measure::Cycles(400_000);
    cfg
}

#[test]
fn under_hold_chained_set_ups_find_the_controller_busy_and_the_correction_holds() {
    let r = run_experiment(&hold_50(), &mut |_, _| {}).unwrap();
    let k = &r.controller;
    let (rho, busy) = (k.utilization, k.p_busy_at_arrival.unwrap());
    let (w, pk, corr) = (
        k.wait_mean.unwrap(),
        k.wait_mg1.unwrap(),
        k.wait_corrected.unwrap(),
    );
    eprintln!("ρ {rho:.4} P(busy) {busy:.4} W {w:.3} P-K {pk:.3} corrected {corr:.3}");
    // PASTA fails: a fifth more arrivals find the server busy than the time average.
    assert!(busy > 1.15 * rho, "P(busy) {busy} vs ρ {rho}");
    let f = k.chained_fraction.unwrap();
    assert!(f > 0.01, "chained fraction {f}");
    let classes = &r.circuit().unwrap().controller_classes;
    let class = |n: &str| classes.iter().find(|c| c.class == n).unwrap();
    // The chained ones find the server busy, almost always with a forwarded release,
    // and wait about D_release − D_link_conn = 49.
    let ch = class("setup_chained");
    assert!(ch.p_busy > 0.95, "{ch:?}");
    assert!(ch.busy_with["release_forwarded"] > 0.9, "{ch:?}");
    assert!((ch.wait_mean - 49.0).abs() < 5.0, "{ch:?}");
    // The others see about the time average.
    for c in classes
        .iter()
        .filter(|c| c.class != "setup_chained" && c.share > 0.05)
    {
        assert!(c.p_busy < 1.2 * rho, "{c:?} vs ρ {rho}");
    }
    // P-K is far off; the corrected prediction is close, and so is its P(busy).
    assert!((pk - w).abs() / w > 0.3, "P-K {pk} vs {w}");
    assert!((corr - w).abs() / w < 0.15, "corrected {corr} vs {w}");
    let pb = k.p_busy_corrected.unwrap();
    assert!(
        (pb - busy).abs() / busy < 0.2,
        "corrected P(busy) {pb} vs {busy}"
    );
}

#[test]
fn without_hand_offs_nothing_is_chained_and_the_correction_is_p_k() {
    let mut cfg = hold_50();
    cfg.switching = common::preset("circuit-drop.ron").switching;
    let r = run_experiment(&cfg, &mut |_, _| {}).unwrap();
    let k = &r.controller;
    assert_eq!(k.chained_fraction, Some(0.0));
    assert_eq!(k.wait_corrected, k.wait_mg1);
    assert!(k.p_busy_at_arrival.unwrap() > 0.0);
    assert!(r
        .circuit()
        .unwrap()
        .controller_classes
        .iter()
        .all(|c| c.class != "setup_chained"));
}

#[test]
fn compare_shows_the_measured_wait_against_p_k_corrected_and_closed_form() {
    let out = common::routemu_ok(&[
        "compare",
        "hw/circuit-hold.ron",
        "--set",
        "router.controller.verify=50",
        "--set",
        "router.controller.release=50",
        "--replications",
        "1",
        "--warmup",
        "20000",
        "--cycles",
        "200000",
        "--json",
        "-",
    ]);
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let rows = v["rows"].as_array().unwrap();
    let get = |k: &str| rows.iter().find(|r| r["key"] == k).unwrap();
    let ctrl = &v["report"]["controller"];
    for (key, model) in [
        ("ctrl_wait_pk", &ctrl["wait_mg1"]),
        ("ctrl_wait_corrected", &ctrl["wait_corrected"]),
    ] {
        let r = get(key);
        assert_eq!(r["measured"], ctrl["wait_mean"], "{key}");
        assert_eq!(&r["predicted"], model, "{key}");
        assert!(r["label"].as_str().unwrap().contains("model: "), "{key}");
    }
    assert_eq!(get("ctrl_wait_model")["measured"], ctrl["wait_mean"]);
    assert!(get("ctrl_wait_model")["predicted"].is_number());
    assert_eq!(
        get("ctrl_busy_pasta")["measured"],
        ctrl["p_busy_at_arrival"]
    );
    assert_eq!(get("ctrl_busy_pasta")["predicted"], ctrl["utilization"]);
    assert_eq!(
        get("ctrl_busy_corrected")["predicted"],
        ctrl["p_busy_corrected"]
    );
    let table = String::from_utf8_lossy(&out.stderr);
    assert!(table.contains("model: P-K + chained arrivals"), "{table}");
}
