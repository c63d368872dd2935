//! The paper 003 section of docs/validation.md: deflection wormhole with virtual channels
//! (WDVC) on the 6×6 Manhattan Street network. The paper's Figs. 1–3 set-ups emulated
//! with replications against routemu's reading of the paper's model, the paper's stated
//! findings checked one by one, and the evidence for where the two part: the worm length
//! in units of the per-hop delay, the orbit cap, the path-length recursion fed with the
//! measured deflection probability.
//!
//! Time scale: the preset's, 1 time unit (the mean worm length 1/μ) = `L̄` cycles with one
//! cycle per hop (router 1, link 1); L̄ = 100 unless a table says otherwise. λ is in worms
//! per node per time unit, so `workload.rate` = λ / L̄.

use crate::cache::Cache;
use routemu::config::overrides::apply_overrides;
use routemu::config::{HwConfig, Measure};
use routemu::experiments::experiment::run_experiment;
use routemu::model::deflection_ms::{mean_path, predict, DeflectionParams, DeflectionPrediction};
use routemu::presentation::plot::{Figure, Series};
use routemu::switching::report::Deflection;
use routemu::topology::manhattan::ManhattanStreet;
use std::collections::HashMap;
use std::fmt::Write;

/// What the section produces: its markdown and its figures (file stem, figure).
pub struct Section {
    pub markdown: String,
    pub figures: Vec<(String, Figure)>,
}

/// How long and how often to emulate.
#[derive(Clone, Copy)]
struct Effort {
    reps: u32,
    /// Window and warm-up in time units.
    window: f64,
    warmup: f64,
}

/// One emulated set-up.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Setup {
    m: u32,
    /// λ per node per time unit.
    lambda: f64,
    /// Mean worm length, cycles (= the time unit).
    len: u32,
    hop_limit: Option<f64>,
    cap: u32,
    /// The hop-limit abort reaches the source in the next cycle (an oracle) instead of
    /// travelling back over the path.
    instant: bool,
    /// `abort: Free`, the paper's idealised drop (the dropped worm's lanes freed at once).
    free: bool,
    /// `resume: OnPreemptorTail` instead of `AfterDelay`.
    tail: bool,
}

impl Setup {
    fn new(m: u32, lambda: f64) -> Self {
        Setup {
            m,
            lambda,
            len: 100,
            hop_limit: None,
            cap: 1000,
            instant: false,
            free: false,
            tail: false,
        }
    }

    /// The cache key's set-up: the fields of the first runs as they were printed then,
    /// the later ones appended only when they are not the default, so points emulated
    /// before they existed are still found.
    fn key(&self) -> String {
        format!(
            "Setup {{ m: {:?}, lambda: {:?}, len: {:?}, hop_limit: {:?}, cap: {:?}, instant: {:?} }}{}{}",
            self.m,
            self.lambda,
            self.len,
            self.hop_limit,
            self.cap,
            self.instant,
            if self.free { " abort Free" } else { "" },
            if self.tail { " resume OnPreemptorTail" } else { "" },
        )
    }

    /// The abort set-up's name.
    fn abort(&self) -> &'static str {
        if self.hop_limit.is_none() {
            "—"
        } else if self.free {
            "Free"
        } else if self.instant {
            "Instant"
        } else {
            "Signal"
        }
    }
}

/// The preset changed to `s`, emulated with `e`: the report's deflection block and
/// whether the run was past saturation (sources refused messages).
fn emulate(base: &HwConfig, s: Setup, e: Effort) -> Result<Deflection, Box<dyn std::error::Error>> {
    let l = s.len as f64;
    let sets = vec![
        format!("router.vcs={}", s.m),
        format!("workload.rate={}", s.lambda / l),
        format!("workload.length=Exponential(mean: {l})"),
        format!("switching.retry={}", s.len),
        format!(
            "switching.hop_limit={}",
            s.hop_limit.map_or("None".into(), |h| format!("{h}"))
        ),
        format!("switching.max_pending={}", s.cap),
        format!(
            "switching.abort={}",
            if s.free {
                "Free"
            } else if s.instant {
                "Instant"
            } else {
                "Signal"
            }
        ),
        format!(
            "switching.resume={}",
            if s.tail {
                "OnPreemptorTail"
            } else {
                "AfterDelay"
            }
        ),
    ];
    let mut cfg = apply_overrides(base, &sets)?;
    let x = &mut cfg.experiment;
    x.replications = e.reps;
    x.jobs = 2;
    x.warmup = (e.warmup * l) as u64;
    x.measure = Measure::Cycles((e.window * l) as u64);
    // Past the knee the sources' memories fill up and the measured messages cannot all
    // be delivered: every quantity here counts events inside the window, so the run
    // stops at the window's end and is judged by its counts (and `rejected`).
    x.saturation_backlog = 1e9;
    x.drain_limit = 0;
    let r = run_experiment(&cfg, &mut |_, _| {})?;
    let d = r.deflection().expect("a deflection run").clone();
    eprintln!(
        "p003 m={} λ={:.4} L={} h={:?} cap={}: η {:?} p {:?} E {:?} B {:?} thr {:.4}",
        s.m,
        s.lambda,
        s.len,
        s.hop_limit,
        s.cap,
        d.eta,
        d.p_deflect,
        d.p_preempt,
        d.p_block,
        d.throughput_per_channel
    );
    Ok(d)
}

/// Emulations, memoised (figures share points) and kept in a cache file between runs
/// (`target/validation-p003.json`; `--fresh` ignores it).
struct Lab<'a> {
    base: &'a HwConfig,
    effort: Effort,
    done: Vec<(Setup, Deflection)>,
    cache: Cache<Deflection>,
}

impl Lab<'_> {
    fn key(&self, s: Setup, seed: u64, reps: u32) -> String {
        let e = self.effort;
        format!(
            "{} reps {reps} window {} warmup {} seed {seed}",
            s.key(),
            e.window,
            e.warmup
        )
    }

    fn get(&mut self, s: Setup) -> Result<Deflection, Box<dyn std::error::Error>> {
        if let Some((_, d)) = self.done.iter().find(|(x, _)| *x == s) {
            return Ok(d.clone());
        }
        let d = self.cached(s, self.base.experiment.seed, self.effort.reps)?;
        self.done.push((s, d.clone()));
        Ok(d)
    }

    /// One run of `reps` replications from `seed`, from the cache when it holds it.
    fn cached(
        &mut self,
        s: Setup,
        seed: u64,
        reps: u32,
    ) -> Result<Deflection, Box<dyn std::error::Error>> {
        let key = self.key(s, seed, reps);
        let (base, effort) = (self.base, self.effort);
        let run = || {
            let mut base = base.clone();
            base.experiment.seed = seed;
            emulate(&base, s, Effort { reps, ..effort })
        };
        let mut d = self.cache.get_or_run(key.clone(), run)?;
        if !upgrade(&mut d) {
            // Emulated before the collapse test looked at the lanes, and judged
            // differently by it: its means are over other replications than today's
            // code keeps, so it is emulated again (under a key of its own).
            d = self
                .cache
                .get_or_run(format!("{key} collapse test 2"), run)?;
        }
        Ok(d)
    }
}

/// A block from the cache written before the collapse test asked whether the lanes carry
/// worms that arrive (`delivered_lane_share`): its replications judged again by today's
/// test from their own rows. False when that changes which replications the block's
/// means are over (the point must then be emulated again); the block's rows and count
/// are brought up to date otherwise.
fn upgrade(d: &mut Deflection) -> bool {
    use routemu::switching::deflection::{collapsed, delivered_lane_share};
    use routemu::switching::report::COLLAPSE_SHARE;
    if d.per_replication
        .iter()
        .all(|r| r.delivered_lane_share.is_some())
    {
        return true;
    }
    let kept = |flags: &[bool]| -> Vec<bool> {
        let n = flags.iter().filter(|&&c| c).count();
        if n == 0 || n == flags.len() {
            vec![true; flags.len()]
        } else {
            flags.iter().map(|&c| !c).collect()
        }
    };
    let old: Vec<bool> = d.per_replication.iter().map(|r| r.collapsed).collect();
    let mut new = Vec::new();
    for r in &mut d.per_replication {
        // Each replication's dropped lane time is not in the old rows: the block's.
        let share = delivered_lane_share(
            r.throughput_per_channel,
            r.eta,
            d.mean_path_zero_load,
            r.lane_utilization,
            d.dropped_lane_fraction,
        );
        let short = r.offered_per_channel > 0.0
            && r.throughput_per_channel < COLLAPSE_SHARE * r.offered_per_channel;
        r.delivered_lane_share = share;
        r.collapsed = collapsed(short || r.collapsed, share);
        new.push(r.collapsed);
    }
    d.collapsed = new.iter().filter(|&&c| c).count() as u32;
    kept(&old) == kept(&new)
}

/// The model at (m, λ), memoised; None when it has no stable solution.
fn model(
    cache: &mut HashMap<(u32, u64), Option<DeflectionPrediction>>,
    m: u32,
    lambda: f64,
) -> Option<DeflectionPrediction> {
    cache
        .entry((m, (lambda * 1e9).round() as u64))
        .or_insert_with(|| predict(&DeflectionParams::new(6, m, lambda)).ok())
        .clone()
}

fn f4(x: Option<f64>) -> String {
    x.map_or("—".into(), |v| format!("{v:.4}"))
}

fn pm(x: Option<f64>, c: Option<f64>) -> String {
    match (x, c) {
        (Some(x), Some(c)) => format!("{x:.4} ± {c:.4}"),
        (Some(x), None) => format!("{x:.4}"),
        _ => "—".into(),
    }
}

fn err(model: Option<f64>, measured: Option<f64>) -> Option<f64> {
    match (model, measured) {
        (Some(p), Some(m)) if m.abs() > 1e-12 => Some((p - m) / m),
        _ => None,
    }
}

fn pct(e: Option<f64>) -> String {
    e.map_or(String::new(), |e| format!("{:+.1}%", 100.0 * e))
}

fn median(mut v: Vec<f64>) -> Option<f64> {
    v.retain(|x| x.is_finite());
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    Some(v[v.len() / 2])
}

/// The replications a row's means are over: "3", or "2 of 3 (1 collapsed)" (all of
/// them, flagged, when every one collapsed).
fn kept(d: &Deflection) -> String {
    let n = d.per_replication.len();
    match d.collapsed as usize {
        0 => format!("{n}"),
        c if c == n => format!("{n} ({c} collapsed)"),
        c => format!("{} of {n} ({c} collapsed)", n - c),
    }
}

/// The signed error of the model against the emulation for the four quantities, in the
/// order η, p, E, B.
const QUANTITIES: [&str; 4] = ["η", "p", "E", "B"];

fn quantities(d: &Deflection) -> [Option<f64>; 4] {
    [d.eta, d.p_deflect, d.p_preempt, d.p_block]
}

fn model_quantities(p: Option<&DeflectionPrediction>) -> [Option<f64>; 4] {
    [
        p.map(|p| p.eta),
        p.map(|p| p.p_deflect),
        p.map(|p| p.p_preempt),
        p.map(|p| p.p_block),
    ]
}

/// Where a signed error, given at increasing worm lengths, changes sign: (the length
/// below, the length above, the crossing interpolated linearly in log10 L̄).
fn crossings(points: &[(u32, f64)]) -> Vec<(u32, u32, f64)> {
    points
        .windows(2)
        .filter(|w| (w[0].1 > 0.0) != (w[1].1 > 0.0))
        .map(|w| {
            let ((a, ea), (b, eb)) = (w[0], w[1]);
            let (la, lb) = ((a as f64).log10(), (b as f64).log10());
            let f = ea / (ea - eb);
            (a, b, 10f64.powf(la + f * (lb - la)))
        })
        .collect()
}

/// The crossings of one quantity's error in words.
fn crossing_text(points: &[(u32, f64)]) -> String {
    let c = crossings(points);
    let (lo, hi) = match (points.first(), points.last()) {
        (Some(a), Some(b)) => (a.0, b.0),
        _ => return "not measured".into(),
    };
    if c.is_empty() {
        let above = points.iter().all(|&(_, e)| e > 0.0);
        return format!(
            "no crossing in L̄ = {lo}…{hi} (the model {} at every length)",
            if above { "above" } else { "below" }
        );
    }
    c.iter()
        .map(|(a, b, x)| format!("L̄ ≈ {x:.0} (between {a} and {b})"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// A replication table for a point whose replications disagree (one collapsed).
fn replication_rows(md: &mut String, label: &str, d: &Deflection) {
    let _ = writeln!(
        md,
        "\n{label}:\n\n| replication | throughput / lane | offered / lane | p | lanes busy | lane time delivered | collapsed |\n|---|---|---|---|---|---|---|"
    );
    for r in &d.per_replication {
        let _ = writeln!(
            md,
            "| {} | {:.4} | {:.4} | {} | {:.3} | {} | {} |",
            r.replication,
            r.throughput_per_channel,
            r.offered_per_channel,
            f4(r.p_deflect),
            r.lane_utilization,
            r.delivered_lane_share
                .map_or("—".into(), |x| format!("{x:.3}")),
            if r.collapsed { "yes" } else { "no" }
        );
    }
}

fn series(label: &str) -> Series {
    Series {
        label: label.to_string(),
        ..Series::default()
    }
}

/// Writes the section; `quick` runs fewer points, shorter and with fewer replications.
pub fn section(
    base: &HwConfig,
    quick: bool,
    cache: Option<std::path::PathBuf>,
) -> Result<Section, Box<dyn std::error::Error>> {
    let started = std::time::Instant::now();
    let ms = ManhattanStreet::new(6);
    let d0 = ms.mean_distance();
    let bound = 2.0 / d0;
    let effort = if quick {
        Effort {
            reps: 2,
            window: 500.0,
            warmup: 100.0,
        }
    } else {
        Effort {
            reps: 3,
            window: 3000.0,
            warmup: 300.0,
        }
    };
    let mut lab = Lab {
        base,
        effort,
        done: Vec::new(),
        cache: Cache::open(cache),
    };
    let mut models = HashMap::new();
    let mut md = String::new();
    let mut figures = Vec::new();
    let mut checks: Vec<String> = Vec::new();

    let _ = writeln!(
        md,
        "<!-- paper 003: begin -->\n## paper 003: deflection wormhole with virtual channels (WDVC), 6×6 Manhattan Street\n\n\
         Preset `hw/deflection-ms.ron`: m = `router.vcs` lanes per link, each one flit per \
         cycle; worms exponential with mean L̄ = 100 flits = **1 time unit** (so λ, in worms \
         per node per time unit, is `workload.rate` × 100); router and link 1 cycle each, so a \
         header takes δ = 1 cycle per hop (the paper has none); blocked and preempted worms \
         retry after an exponential delay of one time unit and resume where they were cut; \
         source memories hold at most 1000 messages. Every point: {} replications (95% \
         Student-t intervals) of {:.0} time units after {:.0} of warm-up; quantities count \
         the events of the window, so points past the knee (whose sources fill up and refuse \
         messages) are measured like the others. The model is routemu's reading of §3 \
         (`model::deflection_ms`: θ = 52/95 from the topology, λ₃ = λ/(2(1−E)), ε as printed; \
         it reproduces the spec's independent reference values to 4 decimals); it has no \
         stable solution past λ ≈ 0.145 (m = 1) and 0.43 (m = 2). `error` = (model − \
         emulated)/emulated. D(0) = 130/35 = {d0:.4}; the throughput bound 2μ/D(0) = {bound:.4} \
         worms per node per time unit per lane.\n",
        effort.reps, effort.window, effort.warmup
    );

    // ---- Fig. 1: η and p against λ, m = 1 and 2, model against emulation at two L̄.
    let fig1: Vec<(u32, Vec<f64>)> = if quick {
        vec![(1, vec![0.04, 0.08, 0.12]), (2, vec![0.1, 0.2, 0.3, 0.4])]
    } else {
        vec![
            (1, vec![0.02, 0.04, 0.06, 0.08, 0.10, 0.12, 0.14]),
            (
                2,
                vec![
                    0.04, 0.08, 0.12, 0.16, 0.20, 0.24, 0.28, 0.32, 0.36, 0.40, 0.42,
                ],
            ),
        ]
    };
    let short = 5u32;
    let mut eta_fig = Figure {
        log_y: false,
        log_x: false,
        join: false,
        title: "paper 003 Fig. 1: inefficiency ratio η against λ".into(),
        x_label: "λ (worms per node per time unit)".into(),
        y_label: "η = D(λ)/D(0)".into(),
        series: Vec::new(),
        ..Figure::default()
    };
    let mut p_fig = Figure {
        log_y: false,
        log_x: false,
        join: false,
        title: "paper 003 Fig. 1: deflection probability p at preference nodes".into(),
        x_label: "λ (worms per node per time unit)".into(),
        y_label: "p".into(),
        series: Vec::new(),
        ..Figure::default()
    };
    let _ = writeln!(
        md,
        "### Fig. 1: η and p against λ (m = 1, 2), the model against the emulation at L̄ = 100 and L̄ = 5\n\n\
         ![p003-fig1-eta](validation/p003-fig1-eta.svg)\n\n![p003-fig1-p](validation/p003-fig1-p.svg)\n\n\
         Each (m, λ) at both worm lengths L̄/δ = 100 and 5 (δ = 1 cycle per hop), the model \
         beside each quantity and its signed error (model − emulated)/emulated; \
         `replications`: those the row's means are over.\n\n\
         | m | λ | L̄/δ | replications | η | model | err | p | model | err | E | model | err | B | model | err |\n\
         |---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
    );
    // Per quantity: (m, λ) → the signed errors at L̄ = 5 and 100.
    let mut fig1_errs: Vec<[Option<(f64, f64)>; 4]> = Vec::new();
    let mut disagree: Vec<(String, Deflection)> = Vec::new();
    let mut errs: HashMap<(&str, &str), Vec<f64>> = HashMap::new();
    let mut recursion_rows = Vec::new();
    for (m, lambdas) in &fig1 {
        let m = *m;
        let (mut e100, mut e5, mut p100, mut p5) = (
            series(&format!("m = {m}, L = 100")),
            series(&format!("m = {m}, L = 5")),
            series(&format!("m = {m}, L = 100")),
            series(&format!("m = {m}, L = 5")),
        );
        for &lambda in lambdas {
            let long = lab.get(Setup::new(m, lambda))?;
            let sh = lab.get(Setup {
                len: short,
                ..Setup::new(m, lambda)
            })?;
            let pr = model(&mut models, m, lambda);
            let pv = |f: fn(&DeflectionPrediction) -> f64| pr.as_ref().map(f);
            for (d, s_eta, s_p) in [(&long, &mut e100, &mut p100), (&sh, &mut e5, &mut p5)] {
                if let Some(x) = d.eta {
                    s_eta.measured.push((lambda, x, d.eta_ci95));
                }
                if let Some(x) = d.p_deflect {
                    s_p.measured.push((lambda, x, d.p_deflect_ci95));
                }
            }
            for (key, d) in [("100", &long), ("5", &sh)] {
                if let Some(e) = err(pv(|p| p.eta), d.eta) {
                    errs.entry(("eta", key)).or_default().push(e.abs());
                }
                if let Some(e) = err(pv(|p| p.p_deflect), d.p_deflect) {
                    errs.entry(("p", key)).or_default().push(e.abs());
                }
                if let (Some(p), Some(dm)) = (d.p_deflect, d.mean_path) {
                    recursion_rows.push((m, lambda, key, p, dm, mean_path(&ms, p)));
                }
            }
            let mq = model_quantities(pr.as_ref());
            let mut pair = [None; 4];
            for (len, d) in [(100u32, &long), (short, &sh)] {
                let q = quantities(d);
                let ci = [
                    d.eta_ci95,
                    d.p_deflect_ci95,
                    d.p_preempt_ci95,
                    d.p_block_ci95,
                ];
                let mut row = format!("| {m} | {lambda} | {len} | {} |", kept(d));
                for i in 0..4 {
                    let _ = write!(
                        row,
                        " {} | {} | {} |",
                        pm(q[i], ci[i]),
                        f4(mq[i]),
                        pct(err(mq[i], q[i]))
                    );
                }
                let _ = writeln!(md, "{row}");
                if d.collapsed > 0 {
                    disagree.push((
                        format!("Fig. 1, m = {m}, λ = {lambda}, L̄ = {len}"),
                        d.clone(),
                    ));
                }
            }
            for (i, slot) in pair.iter_mut().enumerate() {
                let (a, b) = (quantities(&sh)[i], quantities(&long)[i]);
                if let (Some(e5), Some(e100)) = (err(mq[i], a), err(mq[i], b)) {
                    *slot = Some((e5, e100));
                }
            }
            fig1_errs.push(pair);
        }
        // The model's curves, densely, up to its stability limit.
        let step = if m == 1 { 0.01 } else { 0.02 };
        let top = lambdas.last().copied().unwrap_or(0.0);
        let mut x = step;
        while x <= top + 1e-9 {
            if let Some(p) = model(&mut models, m, x) {
                e100.model.push((x, p.eta));
                p100.model.push((x, p.p_deflect));
            }
            x += step;
        }
        eta_fig.series.extend([e100, e5]);
        p_fig.series.extend([p100, p5]);
    }
    let med = |k: &str, l: &str| {
        errs.get(&(k, l))
            .cloned()
            .and_then(median)
            .map_or("—".into(), |e| format!("{:.1}%", 100.0 * e))
    };
    // How often each quantity's error changes sign between the two lengths, and where.
    let mut fig1_cross = Vec::new();
    for (i, q) in QUANTITIES.iter().enumerate() {
        let pairs: Vec<(f64, f64)> = fig1_errs.iter().filter_map(|p| p[i]).collect();
        let xs: Vec<f64> = pairs
            .iter()
            .filter_map(|&(e5, e100)| crossings(&[(short, e5), (100, e100)]).first().map(|c| c.2))
            .collect();
        let above5 = pairs.iter().filter(|p| p.0 > 0.0).count();
        let above100 = pairs.iter().filter(|p| p.1 > 0.0).count();
        fig1_cross.push(format!(
            "{q}: model above the emulation at {above5} of {n} points at L̄ = 5 and {above100} of {n} at L̄ = 100; \
             the sign changes between the two lengths at {} of them{}",
            xs.len(),
            if xs.is_empty() {
                String::new()
            } else {
                format!(
                    " (crossing at L̄ ≈ {:.0}…{:.0}, median {:.0})",
                    xs.iter().cloned().fold(f64::INFINITY, f64::min),
                    xs.iter().cloned().fold(0.0, f64::max),
                    median(xs.clone()).unwrap_or(0.0)
                )
            },
            n = pairs.len()
        ));
    }
    let _ = writeln!(
        md,
        "\nWhere the errors change sign along L̄/δ (interpolated in log L̄ between 5 and 100): {}.",
        fig1_cross.join("; ")
    );
    let _ = writeln!(
        md,
        "\nMedian |error| of η: {} at L̄ = 100, {} at L̄ = 5; of p: {} at L̄ = 100, {} at L̄ = 5. \
         B is the blocking of a message's first attempt (the paper's \"new worm\"); the \
         emulation's blocking over all attempts is higher (retries come back while the link \
         that blocked them is often still busy) and is in the JSON as `p_block_attempts`.\n",
        med("eta", "100"),
        med("eta", "5"),
        med("p", "100"),
        med("p", "5")
    );
    figures.push(("p003-fig1-eta".to_string(), eta_fig));
    figures.push(("p003-fig1-p".to_string(), p_fig));

    // ---- Sensitivity to the worm length in units of the per-hop delay.
    let lens: Vec<u32> = if quick {
        vec![5, 100]
    } else {
        vec![2, 5, 10, 20, 50, 100, 200, 500]
    };
    let _ = writeln!(
        md,
        "### What the model leaves out: a worm's length in units of its per-hop delay\n\n\
         The model treats every hop of a worm as an independent draw against a node in a \
         typical state, and the paper assumes no per-hop delay at all. The emulation shows \
         the worm length L̄ measured in per-hop delays δ (here δ = 1 cycle, so L̄/δ = L̄) \
         decides how well that holds. Half-way to the model's stability limit (m = 1, \
         λ = 0.07; m = 2, λ = 0.2), with everything else fixed:\n\n\
         ![p003-length](validation/p003-length.svg)\n\n\
         | m | L̄/δ | replications | η | model | err | p | model | err | E | model | err | B | model | err | repeated deflections | self-preemptions / preemptions | p99 path |\n\
         |---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
    );
    // (m, quantity) → signed errors by length.
    let mut len_errs: HashMap<(u32, usize), Vec<(u32, f64)>> = HashMap::new();
    let mut len_fig = Figure {
        log_y: false,
        log_x: false,
        join: false,
        title: "paper 003: η and p against the worm length (δ = 1 cycle per hop)".into(),
        x_label: "log10 of the mean worm length L in cycles (= per-hop delays)".into(),
        y_label: "η − 1 and p".into(),
        series: Vec::new(),
        ..Figure::default()
    };
    let mut len_table = Vec::new();
    let mut len_recursion = Vec::new();
    for (m, lambda) in [(1u32, 0.07), (2, 0.2)] {
        let pr = model(&mut models, m, lambda);
        let mut se = series(&format!("η − 1, m = {m}"));
        let mut sp = series(&format!("p, m = {m}"));
        for &len in &lens {
            let d = lab.get(Setup {
                len,
                ..Setup::new(m, lambda)
            })?;
            let x = (len as f64).log10();
            if let Some(e) = d.eta {
                se.measured.push((x, e - 1.0, d.eta_ci95));
            }
            if let Some(p) = d.p_deflect {
                sp.measured.push((x, p, d.p_deflect_ci95));
            }
            if let Some(p) = &pr {
                se.model.push((x, p.eta - 1.0));
                sp.model.push((x, p.p_deflect));
            }
            let (q, mq) = (quantities(&d), model_quantities(pr.as_ref()));
            let ci = [
                d.eta_ci95,
                d.p_deflect_ci95,
                d.p_preempt_ci95,
                d.p_block_ci95,
            ];
            let mut cells = String::new();
            for i in 0..4 {
                let e = err(mq[i], q[i]);
                if let Some(e) = e {
                    len_errs.entry((m, i)).or_default().push((len, e));
                }
                let _ = write!(cells, " {} | {} | {} |", pm(q[i], ci[i]), f4(mq[i]), pct(e));
            }
            if d.collapsed > 0 {
                disagree.push((
                    format!("length table, m = {m}, λ = {lambda}, L̄ = {len}"),
                    d.clone(),
                ));
            }
            if let (Some(p), Some(dm)) = (d.p_deflect, d.mean_path) {
                len_recursion.push((m, lambda, len, p, dm, mean_path(&ms, p)));
            }
            let _ = writeln!(
                md,
                "| {m} | {len} | {} |{cells} {} | {} | {} |",
                kept(&d),
                f4(d.repeat_deflections),
                if d.preemptions > 0 {
                    format!("{:.3}", d.self_preemptions as f64 / d.preemptions as f64)
                } else {
                    "—".into()
                },
                d.path_length.p99.map_or("—".into(), |v| v.to_string())
            );
            len_table.push((m, len, d));
        }
        len_fig.series.extend([se, sp]);
    }
    figures.push(("p003-length".to_string(), len_fig));
    // The crossings: where each quantity's model error changes sign along L̄/δ.
    let mut len_cross: Vec<String> = Vec::new();
    let _ = writeln!(
        md,
        "\nWhere each quantity's model error changes sign along L̄/δ (interpolated in log L̄ \
         between the neighbouring measured lengths):\n\n| m | λ | η | p | E | B |\n|---|---|---|---|---|---|"
    );
    for (m, lambda) in [(1u32, 0.07), (2, 0.2)] {
        let mut row = format!("| {m} | {lambda} |");
        for (i, q) in QUANTITIES.iter().enumerate() {
            let pts = len_errs.get(&(m, i)).cloned().unwrap_or_default();
            let t = crossing_text(&pts);
            let _ = write!(row, " {t} |");
            len_cross.push(format!("{q} (m = {m}): {t}"));
        }
        let _ = writeln!(md, "{row}");
    }
    // The length where the worst of the four errors is smallest.
    let mut best: Option<(f64, u32, u32)> = None;
    for m in [1u32, 2] {
        for &len in &lens {
            let worst = (0..4)
                .filter_map(|i| {
                    len_errs
                        .get(&(m, i))
                        .and_then(|v| v.iter().find(|x| x.0 == len))
                        .map(|x| x.1.abs())
                })
                .fold(0.0, f64::max);
            if best.is_none_or(|b| worst < b.0) {
                best = Some((worst, m, len));
            }
        }
    }
    let best_text = best.map_or(String::new(), |(w, m, len)| {
        format!(
            "the worst of the four errors is smallest at m = {m}, L̄ = {len}, and is {:.1}% there",
            100.0 * w
        )
    });
    let at = |m: u32, len: u32| {
        len_table
            .iter()
            .find(|(a, b, _)| *a == m && *b == len)
            .map(|(_, _, d)| d.clone())
    };
    if let (Some(a), Some(b)) = (at(2, short), at(2, 100)) {
        let _ = writeln!(
            md,
            "\nThe four errors change sign at different L̄/δ (the table above); {best_text}. \
             What changes along the axis: as worms get longer than the few hops a deflected header takes \
             to come back, the same header meets the same full link again: the share of \
             deflections that hit a header at the node of its previous deflection (*repeated \
             deflections*) grows from {} to {} (m = 2), and deflections stop being the \
             independent per-hop events of eqs. (1)–(3). The path-length tail (p99) and η grow \
             with it, E too (looping headers preempt their own source's worms: self-preemptions \
             are {:.3} and {:.3} of the preemptions at L̄ = {short} and 100). The paper's idealisation (no \
             per-hop delay, L̄/δ = ∞) is the far end of this table, where the model's \
             independence is weakest; the preset's L̄ = 100 (1% per hop, the spec's choice) is \
             close to it.\n",
            f4(a.repeat_deflections),
            f4(b.repeat_deflections),
            a.self_preemptions as f64 / a.preemptions.max(1) as f64,
            b.self_preemptions as f64 / b.preemptions.max(1) as f64,
        );
    }

    // ---- The path-length recursion fed with the measured p.
    let _ = writeln!(
        md,
        "### Eqs. (1)–(3) fed with the measured deflection probability\n\n\
         The recursion alone (no node chain): D from the emulated p, against the emulated \
         D (links per segment whose header arrived), at Fig. 1's points (L̄/δ = 5 and 100) \
         and along the length table's (m = 1, λ = 0.07; m = 2, λ = 0.2).\n\n\
         | m | λ | L̄/δ | measured p | D from eqs. (1)–(3) | measured D | error |\n|---|---|---|---|---|---|---|"
    );
    let mut rec_err: HashMap<&str, Vec<f64>> = HashMap::new();
    for (m, lambda, key, p, dm, dr) in &recursion_rows {
        let e = (dr - dm) / dm;
        rec_err.entry(key).or_default().push(e.abs());
        let _ = writeln!(
            md,
            "| {m} | {lambda} | {key} | {p:.4} | {dr:.4} | {dm:.4} | {:+.1}% |",
            100.0 * e
        );
    }
    let mut rec_cross = Vec::new();
    for (m, lambda) in [(1u32, 0.07), (2, 0.2)] {
        let mut pts = Vec::new();
        for (m2, l2, len, p, dm, dr) in &len_recursion {
            if *m2 == m && (*l2 - lambda).abs() < 1e-12 {
                let e = (dr - dm) / dm;
                pts.push((*len, e));
                let _ = writeln!(
                    md,
                    "| {m} | {lambda} | {len} | {p:.4} | {dr:.4} | {dm:.4} | {:+.1}% |",
                    100.0 * e
                );
            }
        }
        rec_cross.push(format!("m = {m}, λ = {lambda}: {}", crossing_text(&pts)));
    }
    let _ = writeln!(
        md,
        "\nWhere the recursion's error changes sign along L̄/δ: {}.",
        rec_cross.join("; ")
    );
    let med_rec = |k: &str| {
        rec_err
            .get(k)
            .cloned()
            .and_then(median)
            .map_or("—".into(), |e| format!("{:.1}%", 100.0 * e))
    };
    let _ = writeln!(
        md,
        "\nMedian |error| {} at Fig. 1's L̄ = 5 points and {} at its L̄ = 100 points. The \
         recursion assumes independent deflections; deflections that come in runs (a header \
         deflected once is likely deflected again on its way back, more so the longer the \
         worm) are what it leaves out.\n",
        med_rec("5"),
        med_rec("100")
    );

    // ---- Figs. 2 and 3: against λ/m, up to and past the knee.
    let ms_all: Vec<u32> = if quick {
        vec![1, 2, 4]
    } else {
        vec![1, 2, 3, 4, 10]
    };
    let per_lane: Vec<f64> = if quick {
        vec![0.1, 0.2, 0.5, 1.0]
    } else {
        vec![0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.5, 0.7, 1.0]
    };
    let mut f2e = Figure {
        log_y: false,
        log_x: false,
        join: false,
        title: "paper 003 Fig. 2: η against λ/m".into(),
        x_label: "λ/m (worms per node per time unit per lane)".into(),
        y_label: "η".into(),
        series: Vec::new(),
        ..Figure::default()
    };
    let mut f2p = Figure {
        log_y: false,
        log_x: false,
        join: false,
        title: "paper 003 Fig. 2: deflection probability p against λ/m".into(),
        x_label: "λ/m (worms per node per time unit per lane)".into(),
        y_label: "p".into(),
        series: Vec::new(),
        ..Figure::default()
    };
    let mut f3a = Figure {
        log_y: false,
        log_x: false,
        join: false,
        title: "paper 003 Fig. 3a: normalised throughput, no hop limit".into(),
        x_label: "λ/m (offered worms per node per time unit per lane)".into(),
        y_label: "completed worms per node per time unit per lane".into(),
        series: Vec::new(),
        ..Figure::default()
    };
    let mut f3b = Figure {
        log_y: false,
        log_x: false,
        join: false,
        title: "paper 003 Fig. 3b: normalised throughput with the hop limit h = 2".into(),
        x_label: "λ/m (offered worms per node per time unit per lane)".into(),
        y_label: "completed worms per node per time unit per lane".into(),
        series: Vec::new(),
        ..Figure::default()
    };
    let mut bound_line = series("bound 2μ/D(0)");
    bound_line.model = vec![(0.0, bound), (1.0, bound)];
    let mut eta_bound = series("bound 2mμ/(λD(0))");
    eta_bound.model = (10..=100)
        .map(|i| i as f64 / 100.0)
        .map(|x| (x, bound / x))
        .filter(|&(_, y)| y <= 3.0)
        .collect();
    f2e.series.push(eta_bound);
    let _ = writeln!(
        md,
        "### Figs. 2 and 3a: η, p and the normalised throughput against λ/m, no hop limit\n\n\
         ![p003-fig2-eta](validation/p003-fig2-eta.svg)\n\n![p003-fig2-p](validation/p003-fig2-p.svg)\n\n\
         ![p003-fig3a](validation/p003-fig3a.svg)\n\n\
         | m | λ/m | replications | η | p | E | B | throughput / lane | share of the bound | model η | model p | rejected |\n\
         |---|---|---|---|---|---|---|---|---|---|---|---|"
    );
    let mut max_thr: HashMap<(u32, bool), f64> = HashMap::new();
    let mut plateau: HashMap<u32, Vec<(f64, Deflection)>> = HashMap::new();
    for &m in &ms_all {
        let (mut se, mut sp, mut st) = (
            series(&format!("m = {m}")),
            series(&format!("m = {m}")),
            series(&format!("m = {m}")),
        );
        for &x in &per_lane {
            let lambda = x * m as f64;
            let d = lab.get(Setup::new(m, lambda))?;
            let pr = model(&mut models, m, lambda);
            if let Some(e) = d.eta {
                se.measured.push((x, e, d.eta_ci95));
            }
            if let Some(p) = d.p_deflect {
                sp.measured.push((x, p, d.p_deflect_ci95));
            }
            if let Some(p) = &pr {
                se.model.push((x, p.eta));
                sp.model.push((x, p.p_deflect));
            }
            st.measured
                .push((x, d.throughput_per_channel, d.throughput_per_channel_ci95));
            let e = max_thr.entry((m, false)).or_insert(0.0);
            *e = e.max(d.throughput_per_channel);
            if d.collapsed > 0 {
                disagree.push((format!("Figs. 2 and 3a, m = {m}, λ/m = {x}"), d.clone()));
            }
            let _ = writeln!(
                md,
                "| {m} | {x} | {} | {} | {} | {} | {} | {} | {:.3} | {} | {} | {} |",
                kept(&d),
                pm(d.eta, d.eta_ci95),
                pm(d.p_deflect, d.p_deflect_ci95),
                f4(d.p_preempt),
                f4(d.p_block),
                pm(
                    Some(d.throughput_per_channel),
                    d.throughput_per_channel_ci95
                ),
                d.fraction_of_bound,
                f4(pr.as_ref().map(|p| p.eta)),
                f4(pr.as_ref().map(|p| p.p_deflect)),
                d.rejected
            );
            plateau.entry(m).or_default().push((x, d));
        }
        f2e.series.push(se);
        f2p.series.push(sp);
        f3a.series.push(st);
    }
    f3a.series.push(bound_line.clone());
    figures.push(("p003-fig2-eta".to_string(), f2e));
    figures.push(("p003-fig2-p".to_string(), f2p));
    figures.push(("p003-fig3a".to_string(), f3a));

    // ---- Fig. 3b: the hop limit.
    let ms_h: Vec<u32> = if quick { vec![2] } else { vec![1, 2, 3, 4, 10] };
    // The idealised drop (`abort: Free`) where Q5 needs it: m = 2 against m = 4.
    let ms_free: Vec<u32> = if quick { vec![2] } else { vec![1, 2, 4] };
    let mut max_free: HashMap<u32, f64> = HashMap::new();
    let _ = writeln!(
        md,
        "\n### Fig. 3b: normalised throughput with the hop limit h = 2\n\n\
         A header that has taken ⌊2 × shortest distance⌋ hops without arriving is dropped; \
         the source learns it by a signal travelling back one link latency per hop \
         (`abort: Signal`) and sends the dropped flits again after a retry delay. With \
         `abort: Free` (the paper's idealised drop, m = {}) the dropped worm leaves every lane \
         it holds in the cycle after the drop and its source stops then; what it still wastes \
         is the lane time its header's hops took.\n\n\
         ![p003-fig3b](validation/p003-fig3b.svg)\n\n\
         | m | abort | λ/m | replications | throughput / lane | share of the bound | η | drops per accepted worm | lane time spent on dropped flits |\n\
         |---|---|---|---|---|---|---|---|---|",
        ms_free
            .iter()
            .map(|m| m.to_string())
            .collect::<Vec<_>>()
            .join(", ")
    );
    let mut runs_3b: Vec<(u32, bool)> = ms_h.iter().map(|&m| (m, false)).collect();
    runs_3b.extend(ms_free.iter().map(|&m| (m, true)));
    for (m, free) in runs_3b {
        let mut st = series(&format!(
            "m = {m}, h = 2{}",
            if free { ", Free" } else { "" }
        ));
        for &x in &per_lane {
            let setup = Setup {
                hop_limit: Some(2.0),
                free,
                ..Setup::new(m, x * m as f64)
            };
            let d = lab.get(setup)?;
            st.measured
                .push((x, d.throughput_per_channel, d.throughput_per_channel_ci95));
            let e = if free {
                max_free.entry(m).or_insert(0.0)
            } else {
                max_thr.entry((m, true)).or_insert(0.0)
            };
            *e = e.max(d.throughput_per_channel);
            if d.collapsed > 0 {
                disagree.push((
                    format!("Fig. 3b, m = {m}, {}, λ/m = {x}", setup.abort()),
                    d.clone(),
                ));
            }
            let _ = writeln!(
                md,
                "| {m} | {} | {x} | {} | {} | {:.3} | {} | {} | {} |",
                setup.abort(),
                kept(&d),
                pm(
                    Some(d.throughput_per_channel),
                    d.throughput_per_channel_ci95
                ),
                d.fraction_of_bound,
                pm(d.eta, d.eta_ci95),
                f4(d.p_drop),
                f4(d.dropped_lane_fraction)
            );
        }
        f3b.series.push(st);
    }
    for &m in ms_h.iter().filter(|&&m| m == 2 || m == 4) {
        let mut st = series(&format!("m = {m}, no limit"));
        for (x, d) in plateau.get(&m).into_iter().flatten() {
            st.measured
                .push((*x, d.throughput_per_channel, d.throughput_per_channel_ci95));
        }
        f3b.series.push(st);
    }
    f3b.series.push(bound_line);
    figures.push(("p003-fig3b".to_string(), f3b));

    // ---- The plateau against the orbit cap, the worm length and the hop limit.
    let _ = writeln!(
        md,
        "\n### The plateau against the sources' memory, the worm length and the cost of a drop\n\n\
         Past the knee every source holds `max_pending` messages, each retrying about once \
         per time unit, so a lane freed at a source is taken again at once. The plateau \
         (λ/m = 1) against that cap, against L̄ (the worm length in per-hop delays), against \
         the resume policy (`AfterDelay`: after a retry delay; `OnPreemptorTail`: when the \
         preemptor's end frees the lane) and, with the hop limit h = 2, against how a drop \
         ends (`Signal`: the abort back over the path, one link latency per hop; `Instant`: \
         the abort in the next cycle; `Free`: the idealised drop). A replication is \
         *collapsed* when it falls short of its load and its lanes are busy with worms that \
         do not arrive (less than 80% of the lane time delivered); past the knee every \
         replication falls short of its load, so only that second test tells a livelock \
         from a saturated network.\n\n\
         | m | L̄/δ | max_pending | hop limit | abort | resume | replications | throughput / lane | share of the bound | η | E | lane time on dropped flits |\n\
         |---|---|---|---|---|---|---|---|---|---|---|---|"
    );
    let plateau_point = |m: u32, len: u32| Setup {
        len,
        ..Setup::new(m, m as f64)
    };
    let rows: Vec<Setup> = if quick {
        vec![
            Setup {
                cap: 200,
                ..plateau_point(2, 100)
            },
            plateau_point(2, 100),
        ]
    } else {
        let mut v = Vec::new();
        for m in [1, 2] {
            for cap in [200, 1000, 5000] {
                v.push(Setup {
                    cap,
                    ..plateau_point(m, 100)
                });
            }
        }
        for (m, len) in [
            (1, 20),
            (1, 200),
            (1, 500),
            (2, 20),
            (2, 500),
            (2, 2000),
            (10, 500),
        ] {
            v.push(plateau_point(m, len));
        }
        for len in [20, 100, 200, 500] {
            v.push(Setup {
                tail: true,
                ..plateau_point(1, len)
            });
        }
        for len in [100, 500, 2000] {
            for (instant, free) in [(false, false), (true, false), (false, true)] {
                v.push(Setup {
                    hop_limit: Some(2.0),
                    instant,
                    free,
                    ..plateau_point(2, len)
                });
            }
        }
        v
    };
    let mut plateau_rows: Vec<(Setup, Deflection)> = Vec::new();
    for s in rows {
        let d = lab.get(s)?;
        let _ = writeln!(
            md,
            "| {} | {} | {} | {} | {} | {} | {} | {} | {:.3} | {} | {} | {} |",
            s.m,
            s.len,
            s.cap,
            s.hop_limit.map_or("none".into(), |h| format!("{h}")),
            s.abort(),
            if s.tail {
                "OnPreemptorTail"
            } else {
                "AfterDelay"
            },
            kept(&d),
            pm(
                Some(d.throughput_per_channel),
                d.throughput_per_channel_ci95
            ),
            d.fraction_of_bound,
            pm(d.eta, d.eta_ci95),
            f4(d.p_preempt),
            f4(d.dropped_lane_fraction)
        );
        if d.collapsed > 0 {
            disagree.push((
                format!(
                    "plateau, m = {}, L̄ = {}, cap {}, {}{}",
                    s.m,
                    s.len,
                    s.cap,
                    s.abort(),
                    if s.tail { ", OnPreemptorTail" } else { "" }
                ),
                d.clone(),
            ));
        }
        plateau_rows.push((s, d));
    }
    let find = |s: Setup| {
        plateau_rows
            .iter()
            .find(|(x, _)| *x == s)
            .map(|(_, d)| d.clone())
    };
    let row = |m: u32, len: u32, h: Option<f64>, instant: bool| {
        find(Setup {
            hop_limit: h,
            instant,
            ..plateau_point(m, len)
        })
        .map(|d| d.fraction_of_bound)
    };
    // The m = 1 plateau from the replications that did not collapse, per L̄ and resume
    // policy: the mean of their own throughputs.
    let stable_share = |d: &Deflection| {
        let v: Vec<f64> = d
            .per_replication
            .iter()
            .filter(|r| !r.collapsed)
            .map(|r| r.throughput_per_channel / bound)
            .collect();
        (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
    };
    let mut m1 = Vec::new();
    for tail in [false, true] {
        for len in [20u32, 100, 200, 500] {
            if let Some(d) = find(Setup {
                tail,
                ..plateau_point(1, len)
            }) {
                m1.push((
                    len,
                    tail,
                    stable_share(&d),
                    d.collapsed,
                    d.per_replication.len(),
                ));
            }
        }
    }
    let stable: Vec<f64> = m1.iter().filter_map(|x| x.2).collect();
    if !stable.is_empty() {
        let lo = stable.iter().cloned().fold(f64::INFINITY, f64::min);
        let hi = stable.iter().cloned().fold(0.0, f64::max);
        let _ = writeln!(
            md,
            "\nThe m = 1 plateau (λ/m = 1) from the replications that did not collapse only, \
             per L̄/δ and resume policy: {}. Over both policies and L̄ = 20…500 it is \
             {:.1}–{:.1}% of the bound, against the paper's 35%. Neither the worm length \
             (the per-hop delay the paper does not give), nor the resume policy, nor the \
             sources' memory (the cap rows: 200 to 5000 messages) brings it down to 35%, and \
             the collapsed replications are not what lifts or lowers it: they are out of these \
             means. What remains unexplained is a gap of {:.1}–{:.1} points of the bound \
             between the paper's m = 1 maximum and every stable emulated one; the paper does \
             not describe its simulator beyond the model's assumptions, so the cause cannot \
             be placed from it.\n",
            m1.iter()
                .map(|(len, tail, s, c, n)| format!(
                    "L̄ = {len}, {}: {}{}",
                    if *tail {
                        "OnPreemptorTail"
                    } else {
                        "AfterDelay"
                    },
                    s.map_or("none stable".into(), |s| format!("{:.1}%", 100.0 * s)),
                    if *c > 0 {
                        format!(" ({c} of {n} collapsed, left out)")
                    } else {
                        String::new()
                    }
                ))
                .collect::<Vec<_>>()
                .join("; "),
            100.0 * lo,
            100.0 * hi,
            100.0 * (lo - 0.35),
            100.0 * (hi - 0.35)
        );
    }
    let m1_plateau = (!stable.is_empty()).then(|| {
        (
            stable.iter().cloned().fold(f64::INFINITY, f64::min),
            stable.iter().cloned().fold(0.0, f64::max),
        )
    });
    {
        let _ = writeln!(
            md,
            "At L̄ = 500 single replications from other seeds (one replication each):\n\n\
             | seed | throughput / lane | share of the bound | p | lanes busy | lane time delivered | preemptions | η | collapsed |\n|---|---|---|---|---|---|---|---|---|"
        );
        let seeds: Vec<u64> = if quick { vec![1, 2] } else { vec![1, 2, 3, 4] };
        let mut worst: Option<Deflection> = None;
        for seed in seeds {
            let d = lab.cached(plateau_point(1, 500), seed, 1)?;
            let r = d.per_replication.first();
            let _ = writeln!(
                md,
                "| {seed} | {:.4} | {:.3} | {} | {:.3} | {} | {} | {} | {} |",
                d.throughput_per_channel,
                d.fraction_of_bound,
                f4(d.p_deflect),
                d.lane_utilization,
                r.and_then(|r| r.delivered_lane_share)
                    .map_or("—".into(), |x| format!("{x:.3}")),
                d.preemptions,
                f4(d.eta),
                if d.collapsed > 0 { "yes" } else { "no" }
            );
            if worst
                .as_ref()
                .is_none_or(|w| d.fraction_of_bound < w.fraction_of_bound)
            {
                worst = Some(d);
            }
        }
        match worst.filter(|w| w.collapsed > 0) {
            Some(w) => {
                let _ = writeln!(
                    md,
                    "\nThe collapsed replication ({:.1}% of the bound) has its lanes {:.1}% \
                     busy, {} preemptions (no worm gets to originate) and a deflection \
                     probability of {}: the lanes are held by transit worms, each one's body \
                     spanning up to 500 hops behind a header that keeps being deflected by the \
                     others and by itself, so sources cannot inject and headers rarely arrive \
                     — the livelock of §2. With one lane and worms far longer than the \
                     network's cycles, nothing but the hop limit breaks it.\n",
                    100.0 * w.fraction_of_bound,
                    100.0 * w.lane_utilization,
                    w.preemptions,
                    f4(w.p_deflect)
                );
            }
            None => {
                let _ = writeln!(md, "\nNone of these replications collapsed.\n");
            }
        }
    }
    let mut q5_plateau = String::new();
    // Free at the plateau, m = 2: (L̄, gain over no limit, dropped lane fraction).
    let mut free_gains: Vec<(u32, f64, f64)> = Vec::new();
    if let (Some(n100), Some(h100), Some(n2000), Some(h2000), Some(i2000)) = (
        row(2, 100, None, false),
        row(2, 100, Some(2.0), false),
        row(2, 2000, None, false),
        row(2, 2000, Some(2.0), false),
        row(2, 2000, Some(2.0), true),
    ) {
        let verdict = |a: f64, b: f64| if b > a { "gains" } else { "loses" };
        let limited = |len: u32, instant: bool, free: bool| {
            find(Setup {
                hop_limit: Some(2.0),
                instant,
                free,
                ..plateau_point(2, len)
            })
        };
        let wasted = limited(100, false, false)
            .and_then(|d| d.dropped_lane_fraction)
            .unwrap_or(0.0);
        let i100 = row(2, 100, Some(2.0), true);
        let free = |len: u32| limited(len, false, true);
        let _ = write!(
            md,
            "The hop limit is not free with a real abort. A dropped segment has streamed flits \
             over every link up to the drop, and goes on streaming until the abort is back at \
             its source: with m = 2 the limit {} at L̄ = 100 ({:.1}% → {:.1}% of the bound, \
             {:.0}% of the lane time carrying flits that are then dropped) and {} at \
             L̄ = 2000 ({:.1}% → {:.1}%; {:.1}% with an instant abort, which removes only \
             the return trip).",
            verdict(n100, h100),
            100.0 * n100,
            100.0 * h100,
            100.0 * wasted,
            verdict(n2000, h2000),
            100.0 * n2000,
            100.0 * h2000,
            100.0 * i2000
        );
        let mut free_rows = Vec::new();
        for (len, n) in [
            (100, Some(n100)),
            (500, row(2, 500, None, false)),
            (2000, Some(n2000)),
        ] {
            if let (Some(f), Some(n)) = (free(len), n) {
                free_gains.push((
                    len,
                    f.fraction_of_bound / n - 1.0,
                    f.dropped_lane_fraction.unwrap_or(0.0),
                ));
                free_rows.push(format!(
                    "L̄ = {len}: {:.1}% → {:.1}% ({:+.1}%; {:.1}% of the lane time still on dropped flits)",
                    100.0 * n,
                    100.0 * f.fraction_of_bound,
                    100.0 * (f.fraction_of_bound / n - 1.0),
                    100.0 * f.dropped_lane_fraction.unwrap_or(0.0)
                ));
            }
        }
        if !free_rows.is_empty() {
            let _ = writeln!(
                md,
                " With the idealised drop (`abort: Free`: the dropped worm leaves its lanes at \
                 once, only its header's hops are wasted) the plateau with h = 2 against none, \
                 m = 2: {}.\n",
                free_rows.join("; ")
            );
        } else {
            let _ = writeln!(md);
        }
        q5_plateau = format!(
            "at the plateau (λ/m = 1, L̄ = 100) Signal {:.1}%, Instant {}, Free {} against {:.1}% without a limit",
            100.0 * h100,
            i100.map_or("—".into(), |x| format!("{:.1}%", 100.0 * x)),
            free(100).map_or("—".into(), |d| format!("{:.1}%", 100.0 * d.fraction_of_bound)),
            100.0 * n100
        );
    }

    // ---- Replications that disagree, one table per point.
    if !disagree.is_empty() {
        let _ = writeln!(
            md,
            "\n### Replications that collapsed\n\n\
             Every point above where some replication collapsed, each replication on its own \
             (`lane time delivered`: the share of the lanes' busy time, less dropped flits', \
             that carried worms which arrived; a collapse is short of the load *and* below \
             0.8 here). Where only some collapsed, the row's means are over the others."
        );
        let mut seen = Vec::new();
        for (label, d) in &disagree {
            if seen.contains(label) {
                continue;
            }
            seen.push(label.clone());
            replication_rows(&mut md, label, d);
        }
        let _ = writeln!(md);
    }

    // ---- The paper's findings, one by one.
    let share = |m: u32, h: bool| max_thr.get(&(m, h)).map(|t| t / bound);
    let all_points = lab.done.iter().map(|(_, d)| d.fraction_of_bound);
    let top = all_points.fold(0.0, f64::max);
    checks.push(format!(
        "**Q1** the normalised throughput never exceeds 2μ/D(0): largest share of the bound \
         over every emulated point {top:.3} — {}.",
        if top <= 1.0 { "holds" } else { "VIOLATED" }
    ));
    if let Some(s1) = share(1, false) {
        checks.push(format!(
            "**Q2** m = 1 peaks at \"only 35%\" of the bound: emulated maximum {:.1}%{} — {}.",
            100.0 * s1,
            m1_plateau.map_or(String::new(), |(lo, hi)| format!(
                "; the plateau from non-collapsed replications {:.1}–{:.1}% over L̄ = 20…500 and both resume policies",
                100.0 * lo,
                100.0 * hi
            )),
            if (s1 - 0.35).abs() <= 0.04 {
                "reproduced"
            } else {
                "higher than the paper's, with collapses left out, at every worm length, resume \
                 policy and memory cap tried; the gap is unexplained (see the plateau section)"
            }
        ));
    }
    if let Some(s10) = share(10, false) {
        checks.push(format!(
            "**Q3** m = 10 reaches \"nearly 80%\": emulated maximum {:.1}% — {}.",
            100.0 * s10,
            if (0.75..=0.82).contains(&s10) {
                "reproduced"
            } else {
                "above the paper's 80% (the same causes as Q2)"
            }
        ));
    }
    let shares: Vec<(u32, f64)> = ms_all
        .iter()
        .filter_map(|&m| share(m, false).map(|s| (m, s)))
        .collect();
    let increasing = shares.windows(2).all(|w| w[1].1 > w[0].1);
    checks.push(format!(
        "**Q4** better than linear in m (the maximum per lane grows with m): {} — {}.",
        shares
            .iter()
            .map(|(m, s)| format!("m = {m}: {:.1}%", 100.0 * s))
            .collect::<Vec<_>>()
            .join(", "),
        if increasing {
            "reproduced"
        } else {
            "NOT reproduced"
        }
    ));
    if let (Some(h2), Some(n2), Some(n4)) = (share(2, true), share(2, false), share(4, false)) {
        let f2 = max_free.get(&2).map(|t| t / bound);
        let f4_ = max_free.get(&4).map(|t| t / bound);
        let gain = |h: f64| h / n2 - 1.0;
        let paper = |h: f64| h > n4 && (0.25..=0.45).contains(&gain(h));
        // The paper's m = 1 maximum is 35% of the bound, ours higher: were our m = 2
        // baseline lower in the same ratio, what would the idealised drop gain on it?
        let scaled = share(1, false).map(|s1| n2 * 0.35 / s1);
        let verdict = match f2 {
            Some(f) if paper(h2) && paper(f) => "reproduced".to_string(),
            Some(f) if paper(f) => "reproduced with the idealised drop (Free) only; with a \
                                    real abort (Signal) the drops' streamed flits eat the gain"
                .to_string(),
            Some(f) => format!(
                "NOT reproduced at the preset's L̄/δ = 100 with any abort: the idealised drop \
                 (Free) {} m = 2 by {:+.1}%{}, but even it still spends {} of the lane time on \
                 dropped worms' headers on their way to the drop, which the paper (no per-hop \
                 delay) does not, and its gain grows with L̄/δ at the plateau ({}); {}",
                if f > n2 { "raises" } else { "lowers" },
                100.0 * gain(f),
                if f > n4 {
                    ", above m = 4 without a limit"
                } else {
                    ", below m = 4 without a limit"
                },
                free_gains
                    .iter()
                    .find(|x| x.0 == 100)
                    .map_or("—".into(), |x| format!("{:.1}%", 100.0 * x.2)),
                free_gains
                    .iter()
                    .map(|(l, g, _)| format!("{:+.1}% at L̄ = {l}", 100.0 * g))
                    .collect::<Vec<_>>()
                    .join(", "),
                match scaled {
                    Some(sc) if f / sc - 1.0 >= 0.25 => format!(
                        "against a baseline lowered to the paper's level (m = 2 without a limit \
                         × 35% / our m = 1 maximum = {:.1}%) it would gain {:+.1}%: the \
                         emulator's higher no-limit baseline is what the paper's gain rests on",
                        100.0 * sc,
                        100.0 * (f / sc - 1.0)
                    ),
                    Some(sc) => format!(
                        "even against a baseline lowered to the paper's level (m = 2 without a \
                         limit × 35% / our m = 1 maximum = {:.1}%) it would gain {:+.1}%, so a \
                         higher baseline alone does not explain it",
                        100.0 * sc,
                        100.0 * (f / sc - 1.0)
                    ),
                    None => String::new(),
                }
            ),
            None if paper(h2) => "reproduced".to_string(),
            None => "NOT reproduced with the real abort (Signal); the idealised drop was not \
                     emulated in this run"
                .to_string(),
        };
        checks.push(format!(
            "**Q5** h = 2 with m = 2 gains about 35% and beats m = 4 without a limit: maxima \
             over λ/m, m = 2: no limit {:.1}% of the bound; h = 2 with Signal {:.1}% \
             ({:+.1}%), with Free {}; m = 4 without a limit {:.1}%{}{} — {}.",
            100.0 * n2,
            100.0 * h2,
            100.0 * gain(h2),
            f2.map_or("not emulated".into(), |f| format!(
                "{:.1}% ({:+.1}%)",
                100.0 * f,
                100.0 * gain(f)
            )),
            100.0 * n4,
            f4_.map_or(String::new(), |f| format!(
                ", with h = 2 and Free {:.1}%",
                100.0 * f
            )),
            if q5_plateau.is_empty() {
                String::new()
            } else {
                format!("; {q5_plateau} (Instant only emulated there)")
            },
            verdict
        ));
    }
    // Q7/Q8 on the plateau: beyond the knee η, p, throughput level off; E is first to 1.
    let mut q7 = Vec::new();
    let mut q8 = Vec::new();
    for (m, pts) in &plateau {
        if let (Some((_, a)), Some((_, b))) = (
            pts.iter().find(|(x, _)| (*x - 0.5).abs() < 1e-9),
            pts.iter().find(|(x, _)| (*x - 1.0).abs() < 1e-9),
        ) {
            let ch = |u: Option<f64>, v: Option<f64>| match (u, v) {
                (Some(u), Some(v)) if u > 0.0 => Some((v - u).abs() / u),
                _ => None,
            };
            let worst = [
                ch(a.eta, b.eta),
                ch(a.p_deflect, b.p_deflect),
                ch(
                    Some(a.throughput_per_channel),
                    Some(b.throughput_per_channel),
                ),
            ]
            .into_iter()
            .flatten()
            .fold(0.0, f64::max);
            q7.push((*m, worst, b.p_preempt.unwrap_or(0.0)));
        }
        // The load at which E first comes near one: are B and p still below it?
        if let Some((x, d)) = pts.iter().find(|(_, d)| d.p_preempt.unwrap_or(0.0) >= 0.9) {
            q8.push((
                *m,
                *x,
                d.p_preempt.unwrap_or(0.0),
                d.p_block.unwrap_or(0.0),
                d.p_deflect.unwrap_or(0.0),
            ));
        }
    }
    q7.sort_by_key(|x| x.0);
    q8.sort_by_key(|x| x.0);
    checks.push(format!(
        "**Q7** η, p and the throughput reach a plateau where E reaches one: from λ/m = 0.5 \
         to 1.0 (a doubling) the largest change is {}; E at λ/m = 1: {} — {}.",
        q7.iter()
            .map(|(m, w, _)| format!("m = {m}: {:.1}%", 100.0 * w))
            .collect::<Vec<_>>()
            .join(", "),
        q7.iter()
            .map(|(m, _, e)| format!("m = {m}: {e:.3}"))
            .collect::<Vec<_>>()
            .join(", "),
        if q7.is_empty() {
            "not measured in this run"
        } else if q7.iter().all(|(_, w, e)| *w < 0.05 && *e > 0.9) {
            "reproduced"
        } else {
            "partly (see the table)"
        }
    ));
    checks.push(format!(
        "**Q8** E is the first of E, B, p to approach one: at the first λ/m where E ≥ 0.9, {} — {}.",
        q8.iter()
            .map(|(m, x, e, b, p)| format!("m = {m} (λ/m = {x}): E {e:.3}, B {b:.3}, p {p:.3}"))
            .collect::<Vec<_>>()
            .join("; "),
        if q8.is_empty() {
            "not measured in this run"
        } else if q8.iter().all(|(_, _, e, b, p)| e > b && e > p) {
            "reproduced (B follows: once every source is full, new worms are blocked too)"
        } else {
            "NOT reproduced"
        }
    ));
    let count = |stable: bool| {
        lab.done
            .iter()
            .filter(|(s, d)| {
                s.len == 100
                    && !s.tail
                    && s.hop_limit.is_none()
                    && (d.p_preempt.unwrap_or(1.0) < 0.5) == stable
            })
            .fold((0u64, 0u64), |(a, b), (_, d)| {
                (a + d.self_preemptions, b + d.preemptions)
            })
    };
    let ((ss, sp), (us, up)) = (count(true), count(false));
    let frac = |a: u64, b: u64| 100.0 * a as f64 / b.max(1) as f64;
    checks.push(format!(
        "**Q9** self-preemptions are infrequent: at the L̄ = 100 points without a hop limit, \
         {ss} of {sp} preemptions ({:.2}%) below the knee (E < 0.5), {us} of {up} ({:.2}%) \
         beyond it — {}.",
        frac(ss, sp),
        frac(us, up),
        if frac(ss, sp) < 1.0 && frac(us, up) < 1.0 {
            "reproduced (< 1%)"
        } else {
            "infrequent past the knee, but not below it: there a deflected header often \
             loops back through its own source while that source still sends it (more so \
             the longer the worm: see the length table)"
        }
    ));
    checks.push(format!(
        "**Q11** the model \"in close agreement\" with the simulation (Fig. 1, m = 1, 2): \
         median |error| of η {} and of p {} at the preset's L̄/δ = 100; {} and {} at L̄/δ = 5 — \
         the model's error depends on the worm length in hop delays L̄/δ and \
         changes sign along it at a different length for each quantity ({best_text}); \
         crossings along the length table: {}; of the path-length \
         recursion fed with the measured p: {}.",
        med("eta", "100"),
        med("p", "100"),
        med("eta", "5"),
        med("p", "5"),
        len_cross.join("; "),
        rec_cross.join("; ")
    ));
    let mut head = String::from("### The paper's findings, checked on the emulation\n\n");
    for c in &checks {
        let _ = writeln!(head, "- {c}");
    }
    let _ = writeln!(
        head,
        "\n(Q6, lane utilisation = λD/(2mμ) ≤ 1, is an identity the tests check on every run: \
         Σ lane-cycles = Σ flits × links of every segment.) This section took {:.0} s, \
         emulating {} runs and taking {} from the previous run's cache (all of them \
         emulated take about 50 minutes on the 2-core development machine).\n",
        started.elapsed().as_secs_f64(),
        lab.cache.runs,
        lab.cache.hits
    );
    head.push_str(&crate::claims::comments(&summary_claims(&checks)));
    head.push('\n');
    // Findings first, then the figures.
    let intro_end = md.find("### Fig. 1").unwrap_or(md.len());
    md.insert_str(intro_end, &head);
    md.push_str("<!-- paper 003: end -->\n");
    Ok(Section {
        markdown: md,
        figures,
    })
}

/// The findings as claims for the page's summary: "**Qn** claim: numbers — verdict." with
/// the verdict phrase mapped (reproduced, holds: agrees; NOT, VIOLATED: no; anything
/// qualified: partly; not measured: left out).
fn summary_claims(checks: &[String]) -> Vec<crate::claims::Claim> {
    use crate::claims::{Claim, Verdict};
    checks
        .iter()
        .filter_map(|c| {
            let rest = c.strip_prefix("**")?;
            let (id, rest) = rest.split_once("** ")?;
            let (claim, rest) = rest.split_once(": ")?;
            let (numbers, phrase) = rest.rsplit_once(" — ")?;
            let phrase = phrase.trim_end_matches('.');
            let v_is_pointer = false;
            let verdict = if phrase.starts_with("not measured") {
                return None;
            } else if phrase.starts_with("NOT") || phrase.starts_with("VIOLATED") {
                Verdict::No
            } else if phrase == "reproduced"
                || phrase == "holds"
                || phrase.starts_with("reproduced (")
            {
                Verdict::Agrees
            } else {
                Verdict::Partly
            };
            let reason = if verdict == Verdict::Agrees || v_is_pointer {
                crate::claims::short(numbers, 160)
            } else {
                phrase.to_string()
            };
            Some(Claim::new(
                "003",
                id,
                claim,
                verdict,
                &reason,
                "paper 003: deflection wormhole with virtual channels (WDVC), 6×6 Manhattan Street",
            ))
        })
        .collect()
}
