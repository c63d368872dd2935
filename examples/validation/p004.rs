//! Paper 004 (fully adaptive wormhole routing on 2-D tori, M/G/1 channel model): the
//! four torus sizes emulated and predicted with constant and exponential 12-flit
//! messages, adaptive against dimension-order routing (emulated and modelled), the
//! paper's own model numbers overlaid where issue 14 quotes them (its Tables 1–2 are
//! withheld from our copy and Figs. 3–4 exist only as plots), the paper's claims checked,
//! and the reading of the blocked wait that reproduces the paper's model shown by numbers.

use crate::harness::{generated, render, run, Budget, Curve, Done, Fig};
use routemu::config::load::load_hw;
use routemu::config::overrides::apply_overrides;
use routemu::model::circuit::PathForm;
use routemu::model::wormhole_torus::{predict_with, BlockedWait, WormholeParams};
use std::fmt::Write;
use std::path::Path;

/// Markers around this section, so that `--only p004` can replace it alone.
pub const BEGIN: &str = "<!-- paper 004: begin -->";
/// End marker.
pub const END: &str = "<!-- paper 004: end -->";

/// The paper's own model latencies, as issue 14 quotes them (k, messages/node/cycle,
/// cycles): Tables 1–2 are withheld from our copy of the paper, so these two 16×16
/// values ("about 23.5" and "about 29") are all the paper numbers we have. The issue
/// also says the paper's 8×8 model agrees with routemu's old average form within 1–3%
/// and that its 4×4 simulation at its lowest load is below 14.13 cycles.
pub const PAPER_MODEL: &[(u32, f64, f64)] = &[(16, 0.005, 23.5), (16, 0.007, 29.0)];

const XS: [f64; 6] = [0.001, 0.003, 0.005, 0.007, 0.009, 0.011];
const SIZES: [u32; 4] = [4, 8, 12, 16];
const LAWS: [(&str, &str); 2] = [
    ("adaptive, constant 12", "Constant(flits: 12)"),
    ("adaptive, exponential 12", "Exponential(mean: 12.0)"),
];
const DOR: &str = "dimension order, constant 12";

/// Runs the section: emulates every point, writes the figures into `out_dir`, returns
/// the markdown between the markers.
pub fn section(
    root: &Path,
    out_dir: &Path,
    quick: bool,
) -> Result<String, Box<dyn std::error::Error>> {
    let started = std::time::Instant::now();
    let figs = figures();
    // Lean on purpose: two cores are shared. 2 replications give wide intervals at the
    // knee; the model lines do not depend on them.
    let budget = Budget {
        replications: if quick { 2 } else { 3 },
        warmup: 5_000,
        cycles: if quick { 5_000 } else { 30_000 },
    };
    let done = run(root, &figs, budget)?;
    let mut md = format!("{BEGIN}\n");
    let _ = writeln!(
        md,
        "# Paper 004: adaptive wormhole on 2-D tori\n\n\
         {} (adaptive: paper 004's \
         eqs. 1–46 with the blocked wait read as the wait of a header that finds the channel \
         busy; dimension order: `model::wormhole_torus_dor`); `error` is (model − emulated) / \
         emulated. Latency is creation to tail delivered (`experiment.latency` default). \
         Crosses: the paper's own model numbers as issue 14 quotes them (Tables 1–2 are \
         withheld from our copy of the paper; Figs. 3–4 exist only as plots).\n",
        generated("p004", quick, started, budget),
    );
    let checked = claims(&figs, &done);
    md.push_str(&checked);
    md.push_str(&crate::claims::comments(&crate::claims::from_table(
        "004",
        "Paper 004: adaptive wormhole on 2-D tori",
        &checked,
    )));
    md.push('\n');
    md.push_str(&mechanism(root)?);
    md.push_str(&render(&figs, &done, out_dir)?);
    md.push_str(DISCUSSION);
    let _ = writeln!(md, "{END}");
    Ok(md)
}

/// One figure per torus size: both length laws adaptive, and dimension order.
fn figures() -> Vec<Fig> {
    let mut v = Vec::new();
    for k in SIZES {
        let i = k as usize / 4 - 1;
        let mut curves = Vec::new();
        for (label, law) in LAWS {
            curves.push(Curve {
                label: label.to_string(),
                sets: Box::new(move |x| {
                    vec![
                        format!("topology.k={k}"),
                        format!("workload.rate={x}"),
                        format!("workload.length={law}"),
                    ]
                }),
                // The paper's messages behave as exponential ones (see the mechanism
                // table), so its numbers go with that curve.
                paper: if law.starts_with("Exp") {
                    PAPER_MODEL
                        .iter()
                        .filter(|p| p.0 == k)
                        .map(|p| (p.1, p.2))
                        .collect()
                } else {
                    Vec::new()
                },
            });
        }
        v.push(Fig {
            id: ["p004-4x4", "p004-8x8", "p004-12x12", "p004-16x16"][i],
            title: [
                "paper 004: 4×4 torus, adaptive and dimension-order wormhole",
                "paper 004: 8×8 torus, adaptive and dimension-order wormhole",
                "paper 004: 12×12 torus, adaptive and dimension-order wormhole",
                "paper 004: 16×16 torus, adaptive and dimension-order wormhole",
            ][i],
            preset: "wormhole-torus-adaptive.ron",
            x_label: "messages per node per cycle",
            xs: XS.to_vec(),
            y: "latency",
            curves,
        });
    }
    // Dimension order on its own preset, as separate figures' curves would need another
    // preset: appended as figures of their own.
    for k in SIZES {
        let i = k as usize / 4 - 1;
        v.push(Fig {
            id: [
                "p004-dor-4x4",
                "p004-dor-8x8",
                "p004-dor-12x12",
                "p004-dor-16x16",
            ][i],
            title: [
                "paper 004 Figs. 3–4 set-up: 4×4 torus, dimension order",
                "paper 004 Figs. 3–4 set-up: 8×8 torus, dimension order",
                "paper 004 Figs. 3–4 set-up: 12×12 torus, dimension order",
                "paper 004 Figs. 3–4 set-up: 16×16 torus, dimension order",
            ][i],
            preset: "wormhole-torus-dor.ron",
            x_label: "messages per node per cycle",
            xs: XS.to_vec(),
            y: "latency",
            curves: vec![Curve {
                label: DOR.to_string(),
                sets: Box::new(move |x| {
                    vec![format!("topology.k={k}"), format!("workload.rate={x}")]
                }),
                paper: Vec::new(),
            }],
        });
    }
    v
}

/// (x, emulated, model, error) of one point; None where saturated or absent.
type Pt = (f64, Option<f64>, Option<f64>, Option<f64>);

/// The points of figure `fi`, curve `ci`: (x, emulated or None when saturated, model or
/// None when saturated, error).
fn points(done: &[Done], fi: usize, ci: usize) -> Vec<Pt> {
    done.iter()
        .filter(|d| d.fig == fi && d.curve == ci)
        .map(|d| {
            let r = d.point.rows.iter().find(|r| r.key == "latency");
            (
                d.x,
                r.and_then(|r| r.measured).filter(|_| !d.point.saturated),
                r.and_then(|r| r.predicted),
                r.and_then(|r| r.error).filter(|_| !d.point.saturated),
            )
        })
        .collect()
}

/// The paper's claims, each with a verdict computed from the points.
fn claims(figs: &[Fig], done: &[Done]) -> String {
    let mut md = String::from("## Paper 004's claims\n\n| claim | verdict | why (from the numbers below) |\n|---|---|---|\n");
    // 1. Model within 6% at low/medium and 12% at high load (constant lengths, the
    //    paper's set-up).
    let (mut low, mut high) = (0.0f64, 0.0f64);
    for fi in 0..4 {
        for (x, _, _, e) in points(done, fi, 0) {
            if let Some(e) = e {
                if x <= 0.005 {
                    low = low.max(e.abs());
                } else {
                    high = high.max(e.abs());
                }
            }
        }
    }
    let verdict = |ok: bool, part: bool| {
        if ok {
            "agrees"
        } else if part {
            "partly"
        } else {
            "no"
        }
    };
    let _ = writeln!(
        md,
        "| model within 6% of simulation at low/medium load, 12% at high load (constant 12 flits, 4 VCs) | {} | largest |error| {:.1}% up to 0.005 msg/node/cycle, {:.1}% above (all sizes, unsaturated points) |",
        verdict(low <= 0.06 && high <= 0.12, low <= 0.06 || high <= 0.12),
        100.0 * low,
        100.0 * high
    );
    // 2. Adaptive beats deterministic. The paper's Figs. 3–4 compare its two *models*
    //    (its deterministic model is ref. [7]); the emulation checks the claim itself.
    let (mut wins, mut model_wins, mut total, mut detail) = (0, 0, 0, String::new());
    let mut largest_gap = 0.0f64;
    // The highest load of the figures, in flits (12-flit messages).
    let top_flits = XS.iter().copied().fold(0.0, f64::max) * 12.0;
    for (i, k) in SIZES.iter().enumerate() {
        let a = points(done, i, 0);
        let d = points(done, 4 + i, 0);
        for (pa, pd) in a.iter().zip(&d) {
            total += 1;
            let le = |x: Option<f64>, y: Option<f64>| match (x, y) {
                (Some(x), Some(y)) => x <= y,
                (Some(_), None) => true,
                (None, Some(_)) => false,
                (None, None) => true,
            };
            wins += le(pa.1, pd.1) as usize;
            model_wins += le(pa.2, pd.2) as usize;
            if let (Some(x), Some(y)) = (pa.1, pd.1) {
                largest_gap = largest_gap.max((x - y).abs() / y);
            }
        }
        if let (Some(x), Some(y)) = (
            a.iter().rev().find_map(|p| p.1.map(|v| (p.0, v))),
            d.iter()
                .find(|p| p.0 == a.iter().rev().find(|q| q.1.is_some()).map_or(-1.0, |q| q.0))
                .and_then(|p| p.1),
        ) {
            let _ = write!(detail, "{k}×{k} at {}: {:.2} vs {:.2}; ", x.0, x.1, y);
        }
    }
    let _ = writeln!(
        md,
        "| adaptive routing beats deterministic, by the models (Figs. 3–4 are drawn from the models) | {} | routemu's adaptive model ≤ its dimension-order model at {model_wins} of {total} points (the dimension-order model is the textbook M/G/1 one, not the paper's ref. [7]) |",
        verdict(model_wins == total, model_wins * 2 > total)
    );
    let _ = writeln!(
        md,
        "| adaptive routing beats deterministic, emulated | {} | emulated adaptive ≤ dimension order at {wins} of {total} points, the two within {:.1}% everywhere: at these loads (up to {:.3} flits per node per cycle, {:.0}% of the 4×4 torus's uniform bound 8/k and {:.0}% of the 16×16's) headers rarely block, so there is little to route around; {detail} |",
        verdict(wins == total, wins * 2 > total),
        100.0 * largest_gap,
        top_flits,
        100.0 * top_flits / 2.0,
        100.0 * top_flits / 0.5,
    );
    // 3. The model anticipates saturation.
    let mut ant = (0, 0, String::new());
    for (i, k) in SIZES.iter().enumerate() {
        let p = points(done, i, 0);
        let model_sat = p.iter().find(|q| q.2.is_none()).map(|q| q.0);
        let emu_sat = p.iter().find(|q| q.1.is_none()).map(|q| q.0);
        if model_sat.is_some() || emu_sat.is_some() {
            ant.1 += 1;
            if model_sat.unwrap_or(f64::INFINITY) <= emu_sat.unwrap_or(f64::INFINITY) {
                ant.0 += 1;
            }
            let f = |s: Option<f64>| s.map_or("none in range".to_string(), |x| x.to_string());
            let _ = write!(
                ant.2,
                "{k}×{k}: model {}, emulation {}; ",
                f(model_sat),
                f(emu_sat)
            );
        }
    }
    let _ = writeln!(
        md,
        "| the model anticipates saturation (§3) | {} | first saturated rate — {} |",
        if ant.1 == 0 {
            "no"
        } else {
            verdict(ant.0 == ant.1, ant.0 > 0)
        },
        if ant.2.is_empty() {
            "neither saturates in 0.001–0.011".to_string()
        } else {
            ant.2
        }
    );
    // 4. The model underestimates except at very low load (§4.2.2).
    let (mut under, mut n) = (0, 0);
    for fi in 0..4 {
        for (_, _, _, e) in points(done, fi, 0) {
            if let Some(e) = e {
                n += 1;
                if e < 0.0 {
                    under += 1;
                }
            }
        }
    }
    let _ = writeln!(
        md,
        "| the model underestimates the simulated latency except at very low load (§4.2.2) | {} | model below emulation at {under} of {n} unsaturated points (constant 12) |",
        verdict(under * 10 >= n * 9, under * 2 >= n)
    );
    let _ = figs;
    md.push('\n');
    md
}

/// The mechanism: routemu's model in both readings of the blocked wait and both length
/// laws, average-message form (the paper's), against the paper's quoted numbers; and the
/// zero-load latency in the two latency definitions.
fn mechanism(root: &Path) -> Result<String, Box<dyn std::error::Error>> {
    let base = load_hw(&root.join("hw").join("wormhole-torus-adaptive.ron"))?;
    let mut md = String::from(
        "## Why the old model grew too slowly\n\n\
         routemu's model in the paper's average-message form (the form its tables use), \
         with the wait of a header that finds both channels busy read as printed \
         (p_X·p_Y·W, W the mean over *all* arrivals) and as the wait of an arrival that \
         finds the channel busy (p_X·p_Y·W/ρ, the default now), for both length laws:\n\n\
         | k | rate | printed, constant | printed, exponential | W/ρ, constant | W/ρ, exponential | paper's model (issue 14) |\n|---|---|---|---|---|---|---|\n",
    );
    for k in [8u32, 16] {
        for rate in [0.001, 0.003, 0.005, 0.007, 0.008] {
            let _ = write!(md, "| {k} | {rate} |");
            for blocked in [BlockedWait::Unconditional, BlockedWait::Conditional] {
                for law in ["Constant(flits: 12)", "Exponential(mean: 12.0)"] {
                    let cfg = apply_overrides(
                        &base,
                        &[
                            format!("topology.k={k}"),
                            format!("workload.rate={rate}"),
                            format!("workload.length={law}"),
                        ],
                    )?;
                    let p = WormholeParams::from_config(&cfg)?;
                    let s = match predict_with(&p, PathForm::Average, blocked) {
                        Ok(x) => format!("{:.2}", x.latency),
                        Err(_) => "saturated".into(),
                    };
                    let _ = write!(md, " {s} |");
                }
            }
            let paper = PAPER_MODEL
                .iter()
                .find(|p| p.0 == k && (p.1 - rate).abs() < 1e-12)
                .map_or(String::new(), |p| format!("≈ {}", p.2));
            let _ = writeln!(md, " {paper} |");
        }
    }
    // The one quoted point beyond 3% (issue 34 item 8); the unit test
    // `the_papers_about_29_at_k16_is_a_rounding_wide_enough_to_hold_the_average_form`
    // (src/model/wormhole_torus.rs) holds the same figures.
    let form = |rate: f64| -> Result<f64, Box<dyn std::error::Error>> {
        let cfg = apply_overrides(
            &base,
            &[
                "topology.k=16".to_string(),
                format!("workload.rate={rate}"),
                "workload.length=Exponential(mean: 12.0)".to_string(),
            ],
        )?;
        let p = WormholeParams::from_config(&cfg)?;
        Ok(
            predict_with(&p, PathForm::Average, BlockedWait::Conditional)
                .map_err(|e| format!("{e:?}"))?
                .latency,
        )
    };
    let (lo, at, hi) = (form(0.0069)?, form(0.007)?, form(0.0071)?);
    let elasticity = (hi.ln() - lo.ln()) / (0.0071f64.ln() - 0.0069f64.ln());
    let gap = (at - 29.0) / 29.0;
    let _ = writeln!(
        md,
        "\n**16×16 at 0.007, the one point beyond 3%.** With exponential lengths and W/ρ the \
         average form gives {at:.2} against the paper's model \"≈ 29\" ({:+.1}%); every other \
         quoted point is within 3%. That number is issue 14's rounding of Table 2, which is \
         withheld from our copy, so the paper's value is known only to lie in 28.5–29.5: the \
         form is {:.1}% below the low end of that interval and {:.1}% below the high end. Nor \
         does the point's steepness decide it: there the form's latency is about proportional \
         to the rate ({lo:.2}, {at:.2}, {hi:.2} at 0.0069, 0.007, 0.0071 — elasticity \
         {elasticity:.2}), so a gap of {:.1}% needs the rate, or the load per channel, {:.1}% \
         apart. Whether the gap is the model's or the quote's needs Table 2's number; the unit \
         test `the_papers_about_29_at_k16_is_a_rounding_wide_enough_to_hold_the_average_form` \
         (src/model/wormhole_torus.rs) holds these figures.",
        100.0 * gap,
        100.0 * (28.5 - at) / 28.5,
        100.0 * (29.5 - at) / 29.5,
        -100.0 * gap,
        -100.0 * gap / elasticity,
    );
    let cfg = apply_overrides(&base, &["topology.k=4".to_string()])?;
    let topo = routemu::topology::Topology::from_config(&cfg.topology)?;
    let n = topo.nodes() as u32;
    let zero = |c: &routemu::config::HwConfig| {
        (1..n)
            .map(|v| {
                let h = topo.distance(
                    routemu::foundation::types::NodeId(0),
                    routemu::foundation::types::NodeId(v),
                );
                routemu::switching::zero_load::wormhole(c, h as u64, 12) as f64
            })
            .sum::<f64>()
            / (n - 1) as f64
    };
    let arrived = apply_overrides(&cfg, &["experiment.latency.to=TailArrived".to_string()])?;
    let _ = writeln!(
        md,
        "\nZero-load latency of the 4×4 torus: {:.2} cycles creation → tail delivered \
         (routemu's default), {:.2} creation → tail arrived (`experiment.latency.to = \
         TailArrived`, the tail leaving the destination's crossbar, before the one-cycle \
         write into memory). The paper's simulated 4×4 latency at its lowest load is below \
         the first (issue 14), so its simulator cannot count the ejection cycle: it counts \
         h + L − 1, the second definition. Its model counts T_DT + 1 on the last hop, h + L \
         at zero load, the first. All figures below use the default.\n",
        zero(&cfg),
        zero(&arrived)
    );
    Ok(md)
}

const DISCUSSION: &str = "## Paper 004: where and why they disagree

- **Not the virtual channels alone.** The paper's model has no virtual channels either
  and the paper reports it within about 12% of a 4-VC simulator. What made routemu's
  model grow far too slowly was the reading of eqs. 35/39/46: a header that finds both
  channels busy waits p_X·p_Y·W, and eq. 18's W is already a mean over all arrivals, of
  which only the fraction ρ find the channel busy. Read as printed, the probability of
  finding a channel busy is counted twice and the adaptive hops barely wait; the
  holding times (which include the downstream waits) then stay close to the bare data
  transfer, their variance tiny, and the knee never comes. With the wait of a header
  that finds the channel busy, W/ρ, and exponential lengths (the paper's numbers behave
  as if lengths were exponential: the variance of the data transfer dominates eq. 18's
  second moment), the model gives 23.6 and 28.0 cycles at k = 16 (paper ≈ 23.5 and 29)
  and saturates at k = 16 between 0.007 and 0.008 (table above).
- **Constant against exponential lengths.** With constant 12-flit messages (the paper's
  simulator, and the emulation) the channel holding time has almost no variance; the
  model's waits are then about half the exponential ones, as the M/G/1 second moment
  says. Both are drawn.
- **The latency definition.** At vanishing load routemu's latency is h + L (creation to
  tail in memory); the paper's simulator counts one cycle less (tail arriving at the
  destination router); `experiment.latency.to = TailArrived` measures that.
- **Virtual channels.** The emulated router (4 VCs) takes a busy link as long as a VC is
  free and shares its bandwidth flit by flit; where the model (no VCs) makes a header
  wait for a whole worm, the emulation interleaves. That is where the remaining gap at
  high load comes from, and why the model saturates first (\"the model tends to
  anticipate saturation\").
- **Dimension order.** The deterministic model (`model::wormhole_torus_dor`, the standard
  M/G/1 channel model, not the paper's ref. [7], which we do not have) waits at every
  hop and its holding times carry every downstream wait, so it saturates well before the
  adaptive one on large tori.
";
