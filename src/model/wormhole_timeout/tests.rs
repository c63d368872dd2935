//! Tests of paper 002's model: the reference tables of the spec (§3.5,
//! `reference/paper002-model.txt`), zero load, the printed denominator's defect,
//! saturation, the paper's trends S1 and S2, the retry delay and the configuration.

use crate::model::wormhole_timeout::*;

fn torus(hosts: u32, mean: f64, timeout: f64, thr: f64) -> TimeoutParams {
    TimeoutParams {
        net: HostNetwork::torus(3, 2, hosts).unwrap(),
        default_latency: 1,
        rate: thr / mean,
        length: exponential_length(mean),
        timeout,
        retry_delay: 0.0,
        matching: Matching::B,
        denominator: Denominator::Corrected,
        single_input_links: false,
    }
}

/// The prediction at `p` without the maximum-throughput search (kept out of the loops
/// to keep the tests fast).
fn at(p: &TimeoutParams) -> Result<(TimeoutPrediction, PathSet, Solution), ModelError> {
    let ps = PathSet::new(&p.net, p.default_latency)?;
    let sol = solve(&ps, p)?;
    Ok((prediction(&ps, p, &sol, 0.0), ps, sol))
}

fn preset() -> HwConfig {
    crate::config::load::preset("timeout-lan-3x3.ron")
}

/// The spec's reference rows: (hosts per switch, L, τ, throughput, [T, w, bN, ρN, tries,
/// PT_ss, PT_sh, ρ_ss, ρ_sh]) as printed.
#[rustfmt::skip]
const REFERENCE: [(u32, f64, f64, f64, [&str; 9]); 45] = [
    (1, 100.0, 20.0, 0.05, ["110.9", "5.6", "101.8", "0.051", "1.068", "0.0156", "0.0410", "0.019", "0.052"]),
    (1, 100.0, 20.0, 0.10, ["120.0", "12.7", "103.8", "0.104", "1.143", "0.0316", "0.0820", "0.040", "0.109"]),
    (1, 100.0, 20.0, 0.20, ["145.3", "33.3", "108.5", "0.217", "1.325", "0.0653", "0.1645", "0.085", "0.239"]),
    (1, 100.0, 20.0, 0.30, ["186.9", "68.7", "114.7", "0.344", "1.563", "0.1018", "0.2474", "0.137", "0.399"]),
    (1, 100.0, 20.0, 0.40, ["264.7", "138.1", "123.0", "0.492", "1.887", "0.1421", "0.3311", "0.200", "0.598"]),
    (1, 100.0, 20.0, 0.50, ["462.7", "324.2", "134.9", "0.675", "2.351", "0.1878", "0.4157", "0.278", "0.856"]),
    (1, 100.0, 20.0, 0.60, ["2155.9", "1999.1", "153.3", "0.920", "3.069", "0.2417", "0.5017", "0.385", "1.204"]),
    (1, 100.0, 50.0, 0.05, ["112.6", "5.6", "103.4", "0.052", "1.050", "0.0117", "0.0305", "0.019", "0.052"]),
    (1, 100.0, 50.0, 0.10, ["123.5", "12.8", "107.2", "0.107", "1.105", "0.0241", "0.0613", "0.040", "0.107"]),
    (1, 100.0, 50.0, 0.20, ["154.3", "34.7", "116.1", "0.232", "1.236", "0.0514", "0.1242", "0.088", "0.228"]),
    (1, 100.0, 50.0, 0.30, ["208.3", "77.3", "127.5", "0.382", "1.405", "0.0827", "0.1889", "0.145", "0.370"]),
    (1, 100.0, 50.0, 0.40, ["329.4", "183.4", "142.5", "0.570", "1.628", "0.1189", "0.2560", "0.216", "0.538"]),
    (1, 100.0, 50.0, 0.50, ["868.5", "701.7", "163.4", "0.817", "1.941", "0.1618", "0.3260", "0.308", "0.742"]),
    (1, 20.0, 20.0, 0.05, ["25.8", "1.1", "21.2", "0.053", "1.030", "0.0072", "0.0187", "0.020", "0.051"]),
    (1, 20.0, 20.0, 0.10, ["28.6", "2.7", "22.4", "0.112", "1.063", "0.0149", "0.0382", "0.041", "0.104"]),
    (1, 20.0, 20.0, 0.20, ["36.5", "7.7", "25.3", "0.253", "1.141", "0.0323", "0.0795", "0.091", "0.217"]),
    (1, 20.0, 20.0, 0.30, ["51.6", "19.1", "29.0", "0.435", "1.240", "0.0533", "0.1243", "0.153", "0.343"]),
    (1, 20.0, 20.0, 0.40, ["95.7", "58.5", "33.7", "0.675", "1.371", "0.0794", "0.1732", "0.232", "0.484"]),
    (1, 50.0, 20.0, 0.05, ["57.9", "2.8", "51.6", "0.052", "1.055", "0.0129", "0.0336", "0.019", "0.052"]),
    (1, 50.0, 20.0, 0.10, ["63.2", "6.4", "53.3", "0.107", "1.117", "0.0265", "0.0675", "0.040", "0.107"]),
    (1, 50.0, 20.0, 0.20, ["78.3", "17.3", "57.5", "0.230", "1.263", "0.0561", "0.1362", "0.087", "0.232"]),
    (1, 50.0, 20.0, 0.30, ["104.5", "38.2", "62.8", "0.377", "1.452", "0.0896", "0.2063", "0.144", "0.378"]),
    (1, 50.0, 20.0, 0.40, ["162.1", "88.7", "69.9", "0.559", "1.706", "0.1282", "0.2782", "0.214", "0.554"]),
    (1, 50.0, 20.0, 0.50, ["397.4", "314.1", "79.9", "0.799", "2.065", "0.1736", "0.3524", "0.305", "0.772"]),
    (1, 200.0, 20.0, 0.05, ["216.7", "11.3", "201.9", "0.050", "1.075", "0.0171", "0.0453", "0.019", "0.052"]),
    (1, 200.0, 20.0, 0.10, ["233.0", "25.5", "204.0", "0.102", "1.159", "0.0344", "0.0905", "0.039", "0.110"]),
    (1, 200.0, 20.0, 0.20, ["278.1", "65.5", "209.1", "0.209", "1.363", "0.0700", "0.1812", "0.083", "0.244"]),
    (1, 200.0, 20.0, 0.30, ["348.7", "129.4", "215.8", "0.324", "1.631", "0.1073", "0.2720", "0.132", "0.412"]),
    (1, 200.0, 20.0, 0.40, ["467.5", "239.1", "225.0", "0.450", "1.999", "0.1469", "0.3630", "0.190", "0.628"]),
    (1, 200.0, 20.0, 0.50, ["704.4", "462.9", "238.1", "0.595", "2.529", "0.1901", "0.4544", "0.258", "0.916"]),
    (1, 200.0, 20.0, 0.60, ["1433.1", "1171.3", "258.3", "0.775", "3.351", "0.2391", "0.5462", "0.345", "1.322"]),
    (1, 500.0, 20.0, 0.05, ["533.7", "28.3", "502.0", "0.050", "1.080", "0.0181", "0.0480", "0.019", "0.053"]),
    (1, 500.0, 20.0, 0.10, ["571.5", "63.8", "504.2", "0.101", "1.169", "0.0362", "0.0961", "0.039", "0.111"]),
    (1, 500.0, 20.0, 0.20, ["675.1", "162.1", "509.5", "0.204", "1.388", "0.0730", "0.1922", "0.082", "0.248"]),
    (1, 500.0, 20.0, 0.30, ["831.4", "311.4", "516.6", "0.310", "1.678", "0.1105", "0.2883", "0.129", "0.422"]),
    (1, 500.0, 20.0, 0.40, ["1074.3", "544.5", "526.3", "0.421", "2.076", "0.1490", "0.3845", "0.182", "0.650"]),
    (1, 500.0, 20.0, 0.50, ["1484.6", "940.9", "540.2", "0.540", "2.653", "0.1892", "0.4808", "0.243", "0.963"]),
    (1, 500.0, 20.0, 0.60, ["2325.0", "1759.7", "561.8", "0.674", "3.547", "0.2323", "0.5771", "0.315", "1.419"]),
    (1, 500.0, 20.0, 0.70, ["5289.3", "4686.8", "599.0", "0.839", "5.094", "0.2809", "0.6737", "0.406", "2.145"]),
    (4, 100.0, 20.0, 0.05, ["112.7", "6.0", "103.3", "0.052", "1.131", "0.0572", "0.0410", "0.074", "0.052"]),
    (4, 100.0, 20.0, 0.10, ["125.2", "14.3", "107.5", "0.107", "1.295", "0.1167", "0.0820", "0.160", "0.109"]),
    (4, 100.0, 20.0, 0.20, ["167.0", "43.8", "119.8", "0.240", "1.785", "0.2442", "0.1645", "0.392", "0.239"]),
    (4, 100.0, 20.0, 0.30, ["270.9", "124.5", "143.0", "0.429", "2.715", "0.3857", "0.2474", "0.768", "0.399"]),
    (4, 100.0, 20.0, 0.40, ["998.0", "797.8", "196.9", "0.787", "4.782", "0.5351", "0.3311", "1.486", "0.598"]),
    (4, 100.0, 50.0, 0.05, ["115.9", "6.0", "106.6", "0.053", "1.097", "0.0434", "0.0305", "0.074", "0.052"]),
];

/// Agreement with a printed value: 1e-3 relative, or half a unit of its last digit when
/// that is coarser (PT_ss = 0.0156 is only known to ±0.00005).
fn agrees(x: f64, printed: &str) -> bool {
    let r: f64 = printed.parse().unwrap();
    let decimals = printed.split('.').nth(1).map_or(0, |d| d.len()) as i32;
    let tol = (1e-3 * r.abs()).max(0.5 * 10f64.powi(-decimals)) + 1e-12;
    (x - r).abs() <= tol
}

#[test]
fn the_reference_delay_curves_are_reproduced() {
    for (h, l, t, thr, v) in REFERENCE {
        let p = torus(h, l, t, thr);
        let (x, ps, sol) = at(&p).unwrap_or_else(|e| panic!("H={h} L={l} τ={t} thr={thr}: {e}"));
        // The reference's PT_ss is the plain mean over the ss links; the prediction
        // reports the mean weighted by the heads asking (as the emulator counts).
        let ss: Vec<f64> = sol
            .links
            .iter()
            .enumerate()
            .filter(|(l, _)| ps.links[*l].class == LinkClass::SwitchSwitch)
            .map(|(_, x)| x.state.unwrap().p_timeout)
            .collect();
        let pt_ss_plain = ss.iter().sum::<f64>() / ss.len() as f64;
        let got = [
            x.latency,
            x.host_wait,
            x.host_service,
            x.host_utilization,
            x.tries,
            pt_ss_plain,
            x.p_timeout_by_class.sh,
            x.utilization.ss,
            x.utilization.sh,
        ];
        let names = [
            "T", "w", "bN", "rhoN", "tries", "PT_ss", "PT_sh", "rho_ss", "rho_sh",
        ];
        for i in 0..9 {
            assert!(
                agrees(got[i], v[i]),
                "H={h} L={l} τ={t} thr={thr}: {} = {} vs the reference's {}",
                names[i],
                got[i],
                v[i]
            );
        }
        assert_eq!(x.clamped_links, 0);
    }
    // Where the ss links differ (X links carry more than Y links), the two means part:
    // H = 4, L = 100, τ = 20 at 0.4: plain 0.5351 (the reference), by arrivals 0.5454.
    let (x, _, _) = at(&torus(4, 100.0, 20.0, 0.4)).unwrap();
    assert!(
        (x.p_timeout_by_class.ss - 0.5454).abs() < 1e-4,
        "{}",
        x.p_timeout_by_class.ss
    );
}

#[test]
fn the_reference_maximum_throughputs_are_reproduced() {
    for (h, l, t, max) in [
        (1, 100.0, 20.0, 0.626),
        (1, 100.0, 50.0, 0.557),
        (1, 20.0, 20.0, 0.498),
        (1, 50.0, 20.0, 0.564),
        (1, 200.0, 20.0, 0.691),
        (1, 500.0, 20.0, 0.772),
        (4, 100.0, 20.0, 0.434),
        (4, 100.0, 50.0, 0.380),
    ] {
        let m = max_throughput(&torus(h, l, t, 0.1)).unwrap();
        // The brief asks ±0.005; the agreement is to the printed digits.
        assert!(
            (m - max).abs() <= 0.0005 + 1e-4 * max,
            "H={h} L={l} τ={t}: {m} vs {max}"
        );
        // Just below the maximum the model answers; just above it says saturated.
        assert!(at(&torus(h, l, t, m * 0.999)).is_ok());
        assert!(matches!(
            at(&torus(h, l, t, m * 1.001)),
            Err(ModelError::Saturated { .. })
        ));
    }
}

#[test]
fn at_zero_load_the_latency_is_the_length_plus_the_propagation() {
    for lat in [1u64, 20] {
        let mut p = torus(1, 100.0, 20.0, 0.0);
        p.default_latency = lat;
        let (x, _, _) = at(&p).unwrap();
        let expect = 100.0 + 3.5 * lat as f64;
        assert!(
            (x.latency - expect).abs() < 1e-9,
            "ℓ = {lat}: {}",
            x.latency
        );
        assert_eq!(x.zero_load, expect);
        assert_eq!(x.tries, 1.0);
        assert_eq!(x.host_wait, 0.0);
        // Vanishing load converges to it.
        p.rate = 1e-12;
        let (y, _, _) = at(&p).unwrap();
        assert!((y.latency - expect).abs() < 1e-6);
    }
    // A graph with its own delays (default 3 for links without one) and a given route:
    // h0→h1 20+3+3, h0→h2 by s1 20+3+3+3, h1→h0 3+3+20, h1→h2 3+3+3, h2→h0 3+5+20,
    // h2→h1 3+3+3.
    let text = "switches 3\nhosts 3\nlink h0 s0 20\nlink h1 s1\nlink h2 s2\n\
                link s0 s1\nlink s1 s2\nlink s0 s2 5\nroute h0 h2 s0 s1 s2\n";
    let net = HostNetwork::parse(text, "g").unwrap();
    let length = [12.0, 200.0, 5000.0];
    let p = TimeoutParams {
        net,
        default_latency: 3,
        rate: 0.0,
        length,
        timeout: 10.0,
        retry_delay: 0.0,
        matching: Matching::B,
        denominator: Denominator::Corrected,
        single_input_links: false,
    };
    let (x, _, _) = at(&p).unwrap();
    let expect = 12.0 + (26.0 + 29.0 + 26.0 + 9.0 + 28.0 + 9.0) / 6.0;
    assert!(
        (x.latency - expect).abs() < 1e-9,
        "{} vs {expect}",
        x.latency
    );
    // And it carries load on that asymmetric graph.
    let (y, _, _) = at(&TimeoutParams { rate: 0.01, ..p }).unwrap();
    assert!(y.latency > expect && y.latency.is_finite());
    assert!(y.p_timeout_by_class.ss > 0.0 && y.p_timeout_by_class.sh > 0.0);
}

#[test]
fn the_printed_denominator_leaves_zero_one_at_twenty_percent_load() {
    let mut p = torus(1, 100.0, 20.0, 0.2);
    let (x, _, sol) = at(&p).unwrap();
    for s in sol.links.iter().filter_map(|l| l.state) {
        assert!((0.0..=1.0).contains(&s.p_timeout));
        assert!((s.p_free + s.rho * s.p_no_timeout - 1.0).abs() < 1e-12);
    }
    assert!(x.p_timeout_by_class.sh > 0.1 && x.p_timeout_by_class.sh < 0.2);
    p.denominator = Denominator::Printed;
    match at(&p) {
        Err(ModelError::BadInput(why)) => assert!(why.contains("outside [0, 1]"), "{why}"),
        Err(e) => panic!("{e}"),
        Ok(_) => panic!("the printed denominator converged at 20 % load"),
    }
    // At light load it still answers (and differs from the corrected form).
    p.rate = 0.05 / 100.0;
    let printed = at(&p).unwrap().0;
    let corrected = at(&torus(1, 100.0, 20.0, 0.05)).unwrap().0;
    // About (1 + ρ)/(1 − ρ) times the corrected P_T (ρ_sh ≈ 0.05 here), and more
    // through the feedback.
    let ratio = printed.p_timeout_by_class.sh / corrected.p_timeout_by_class.sh;
    assert!(ratio > 1.08 && ratio < 1.3, "{ratio}");
    // Its "maximum throughput" is where it stops answering, far below the corrected one.
    let x = predict(&p).unwrap();
    assert!(
        x.max_throughput > 0.1 && x.max_throughput < 0.2,
        "{}",
        x.max_throughput
    );
    assert_eq!(x.denominator, Denominator::Printed);
}

#[test]
fn past_the_maximum_the_answer_is_saturated_and_never_nan() {
    let base = torus(1, 100.0, 20.0, 0.1);
    for i in 0..=20 {
        let thr = i as f64 * 0.05;
        match at(&base.at_throughput(thr)) {
            Ok((x, _, _)) => {
                let v = serde_json::to_value(&x).unwrap();
                let all_numbers = |v: &serde_json::Value| -> bool {
                    v.as_object().unwrap().values().all(|f| match f {
                        serde_json::Value::Object(o) => {
                            o.values().all(|n| n.as_f64().is_some_and(f64::is_finite))
                        }
                        serde_json::Value::Number(n) => n.as_f64().is_some_and(f64::is_finite),
                        _ => true,
                    })
                };
                assert!(all_numbers(&v), "{thr}: {v}");
                assert!(x.host_utilization < 1.0);
            }
            Err(ModelError::Saturated { utilization, .. }) => {
                assert!(thr > 0.6 && !utilization.is_nan(), "{thr}")
            }
            Err(e) => panic!("{thr}: {e}"),
        }
    }
    // Through the public entry: the maximum throughput in the message.
    match predict(&base.at_throughput(0.8)) {
        Err(ModelError::Saturated { what, .. }) => {
            assert!(what.contains("maximum throughput is 0.62"), "{what}")
        }
        other => panic!("{other:?}"),
    }
    let x = predict(&base).unwrap();
    assert!((x.max_throughput - 0.626).abs() < 0.001);
}

#[test]
fn a_lower_timeout_and_longer_worms_give_a_higher_maximum_throughput() {
    // S1 (Fig. 8): L = 100, propagation 1.
    let by_timeout: Vec<f64> = [20.0, 50.0, 100.0, 200.0]
        .iter()
        .map(|&t| max_throughput(&torus(1, 100.0, t, 0.1)).unwrap())
        .collect();
    assert!(by_timeout.windows(2).all(|w| w[0] > w[1]), "{by_timeout:?}");
    // S2 (Fig. 9): τ = 20; and the longer worms' delay is longer at low load.
    let lengths = [20.0, 50.0, 100.0, 200.0, 500.0];
    let by_length: Vec<f64> = lengths
        .iter()
        .map(|&l| max_throughput(&torus(1, l, 20.0, 0.1)).unwrap())
        .collect();
    assert!(by_length.windows(2).all(|w| w[0] < w[1]), "{by_length:?}");
    let low: Vec<f64> = lengths
        .iter()
        .map(|&l| at(&torus(1, l, 20.0, 0.1)).unwrap().0.latency)
        .collect();
    assert!(low.windows(2).all(|w| w[0] < w[1]), "{low:?}");
}

#[test]
fn the_retry_delay_adds_a_delay_per_failed_try_and_nothing_else() {
    let p = torus(1, 500.0, 20.0, 0.3);
    let (x, _, _) = at(&p).unwrap();
    let (y, _, _) = at(&TimeoutParams {
        retry_delay: 1000.0,
        ..p.clone()
    })
    .unwrap();
    assert_eq!(x.host_wait, y.host_wait);
    assert_eq!(x.tries, y.tries);
    assert!((y.latency - x.latency - (x.tries - 1.0) * 1000.0).abs() < 1e-9);
    // S4: the maximum throughput is unchanged by it.
    let m = |d: f64| {
        max_throughput(&TimeoutParams {
            retry_delay: d,
            ..p.clone()
        })
        .unwrap()
    };
    assert_eq!(m(0.0), m(1000.0));
}

#[test]
fn variants_a_and_b_stay_close_and_the_identities_hold_at_every_link() {
    for thr in [0.1, 0.3, 0.5] {
        let b = torus(1, 100.0, 20.0, thr);
        let a = TimeoutParams {
            matching: Matching::A,
            ..b.clone()
        };
        let (xb, _, sb) = at(&b).unwrap();
        let (xa, _, _) = at(&a).unwrap();
        assert!(
            (xa.latency - xb.latency).abs() < 0.02 * xb.latency,
            "{thr}: A {} B {}",
            xa.latency,
            xb.latency
        );
        for s in sb.links.iter().filter_map(|l| l.state) {
            assert!((s.p_free + s.rho * s.p_no_timeout - 1.0).abs() < 1e-12);
        }
        // Tries and the try success probability are one thing seen twice.
        assert!((xb.tries * xb.p_try_success - 1.0).abs() < 1e-12);
        // Little: ρ_N = γ·E[b_N] = tries per cycle × mean try.
        assert!((xb.host_utilization - xb.rate * xb.tries * xb.try_service).abs() < 1e-12);
    }
}

#[test]
fn the_preset_is_read_with_the_emulators_length_law_and_bad_machines_are_refused() {
    let cfg = preset();
    let p = TimeoutParams::from_config(&cfg).unwrap();
    assert_eq!(p.rate, 0.003);
    assert_eq!(p.timeout, 20.0);
    assert_eq!(p.default_latency, 1);
    assert_eq!(p.matching, Matching::B);
    let len = LengthDist::Exponential(100.0);
    assert_eq!(
        p.length,
        [len.raw_moment(1), len.raw_moment(2), len.raw_moment(3)]
    );
    // Rounding adds about 1/12 flit² to the second moment of Exp(100).
    assert!((p.length[1] - 20_000.0).abs() < 1.0);
    let x = predict(&p).unwrap();
    // Close to the continuous law's 186.9 at 0.3 flits/host/cycle.
    assert!((x.latency - 186.9).abs() < 2.0, "{}", x.latency);
    assert!(
        (x.max_throughput - 0.626).abs() < 0.003,
        "{}",
        x.max_throughput
    );

    let refuse = |cfg: HwConfig, word: &str| match TimeoutParams::from_config(&cfg) {
        Err(ModelError::BadInput(why)) => assert!(why.contains(word), "{why}"),
        other => panic!("{other:?}"),
    };
    let mut c = preset();
    if let SwitchingConfig::Timeout { timeout, .. } = &mut c.switching {
        *timeout = None;
    }
    refuse(c, "needs a timeout");
    let mut c = preset();
    if let SwitchingConfig::Timeout { on_reset, .. } = &mut c.switching {
        *on_reset = OnReset::Discard;
    }
    refuse(c, "Discard");
    let mut c = preset();
    c.workload.pattern = PatternConfig::Hotspot {
        node: 9,
        fraction: 0.5,
    };
    refuse(c, "uniform");
    // Release rule and buffers are not in the model: accepted.
    let mut c = preset();
    if let SwitchingConfig::Timeout { release, .. } = &mut c.switching {
        *release = crate::config::LinkRelease::TailCredit;
    }
    c.router.buffer_flits = 8;
    assert!(TimeoutParams::from_config(&c).is_ok());
    // Bad numbers are errors, not NaN.
    let mut bad = torus(1, 100.0, 20.0, 0.1);
    bad.rate = f64::NAN;
    assert!(matches!(predict(&bad), Err(ModelError::BadInput(_))));
    bad.rate = 0.001;
    bad.length = [0.0, 1.0, 1.0];
    assert!(matches!(max_throughput(&bad), Err(ModelError::BadInput(_))));
}

#[test]
fn links_fed_by_one_input_never_time_out_in_the_refined_model_and_only_they_change() {
    // 3×3 torus, one host a switch: the X links have one input (the host's switch port).
    let paper = torus(1, 100.0, 20.0, 0.3);
    let refined = TimeoutParams {
        single_input_links: true,
        ..paper.clone()
    };
    let (_, ps, sol) = at(&refined).unwrap();
    for (l, x) in sol.links.iter().enumerate() {
        if ps.single_input[l] {
            assert_eq!(x.state.unwrap().p_timeout, 0.0);
        }
    }
    let (a, b) = (
        max_throughput(&paper).unwrap(),
        max_throughput(&refined).unwrap(),
    );
    assert!(b > a + 0.02, "refined {b:.4} vs paper {a:.4}");
    // Two hosts a switch: no link has a single input, nothing changes.
    let two = torus(2, 100.0, 20.0, 0.2);
    let (x, _, _) = at(&two).unwrap();
    let (y, _, _) = at(&TimeoutParams {
        single_input_links: true,
        ..two
    })
    .unwrap();
    assert_eq!(x.latency, y.latency);
}
