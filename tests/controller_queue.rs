//! An isolated routing controller fed Poisson requests with a deterministic service
//! time is an M/D/1 queue: its measured mean wait must be the Pollaczek–Khinchine value
//! ρ·S / (2(1 − ρ)) within 3%, at ρ = 0.5 and ρ = 0.8.

use routemu::rng::{exponential, stream};
use routemu::router::controller::{Controllers, CtrlRequest};
use routemu::types::Cycle;

/// Feeds `n` Poisson arrivals of rate `lambda` per cycle to a one-server controller with
/// service `s` cycles; returns the measured mean wait.
fn measured_wait(lambda: f64, s: Cycle, n: u64, seed: u64) -> f64 {
    let mut c = Controllers::new(1, 1, 1 << 16);
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
