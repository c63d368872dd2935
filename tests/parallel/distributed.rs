//! Partitions in several ranks change nothing: every preset gives, on every rank, the
//! report one process gives, whatever the number of ranks and of threads per rank and
//! whatever the links' lookahead; a deadlock is reported alike. Ranks are threads here
//! (`engine::distributed::local`); tests/mpi.rs runs the same comparison under `mpirun`
//! when the `mpi` feature is built.

use crate::common;

use routemu::config::{HwConfig, Measure};
use routemu::engine::distributed::local::LocalRanks;
use routemu::experiments::experiment::run_experiment;
use serde_json::Value;

fn report(cfg: &HwConfig) -> Value {
    common::without_split(
        serde_json::to_value(run_experiment(cfg, &mut |_, _| {}).unwrap()).unwrap(),
    )
}

/// The report of `cfg` run over `ranks` ranks (every rank must hold the same one), the
/// partitions it ran on and the exchanges the ranks made.
fn ranked_with(cfg: &HwConfig, ranks: usize) -> (Value, u64, u64) {
    let (reports, ts) = common::on_local_ranks(ranks, || {
        serde_json::to_value(run_experiment(cfg, &mut |_, _| {}).unwrap()).unwrap()
    });
    let parts = reports[0]["threads"].as_u64().unwrap();
    let split = &reports[0]["partitioning"];
    assert_eq!(split["ranks"].as_u64(), Some(ranks as u64), "{split}");
    assert_eq!(split["partitions"].as_u64(), Some(parts), "{split}");
    assert!(
        split["rank_cut_links"].as_u64().unwrap() > 0
            && split["rank_cut_links"].as_u64() <= split["cut_links"].as_u64(),
        "ranks exchange over some of the cut links: {split}"
    );
    let reports: Vec<Value> = reports.into_iter().map(common::without_split).collect();
    for (r, v) in reports.iter().enumerate().skip(1) {
        assert_eq!(&reports[0], v, "rank {r} holds another report than rank 0");
    }
    (
        reports.into_iter().next().unwrap(),
        parts,
        ts[0].exchanges(),
    )
}

fn ranked(cfg: &HwConfig, ranks: usize) -> Value {
    ranked_with(cfg, ranks).0
}

/// Preset `name` cut short: windows as long as it takes for each mode's events to cross
/// the ranks' boundaries in both replications (`common::split_events`); ranks exchange
/// once a cycle on links of one cycle, most of it in the drain after the window.
fn short(name: &str, cfg: HwConfig) -> HwConfig {
    common::cut_short(name, cfg, [(2_000, 6_000), (1_000, 2_000), (500, 1_000)])
}

#[test]
fn every_preset_gives_one_process_report_on_2_and_3_ranks() {
    let mut seen = std::collections::BTreeSet::new();
    for (name, cfg) in common::all_presets() {
        let cfg = short(&name, cfg);
        let one = report(&cfg);
        seen.extend(common::split_events(&one));
        assert_eq!(one, ranked(&cfg, 2), "{name} on 2 ranks");
        // One replication on 3 ranks of 2 threads: what the ranks do between replications
        // (gather the results, start the next alike) does not depend on the threads, and
        // is compared on 2 ranks above.
        let mut c = cfg.clone();
        c.experiment.replications = 1;
        let one = report(&c);
        c.experiment.threads = 2;
        assert_eq!(one, ranked(&c, 3), "{name} on 3 ranks of 2 threads");
    }
    // Hold timeouts need circuit-torus-hold's long window, which only partitions.rs pays.
    common::assert_split_events(&seen, &["hold timeouts"]);
}

#[test]
fn ranks_really_split_the_network_into_ranks_times_threads_partitions() {
    let mut cfg = short("w", common::preset("wormhole-torus-dor.ron"));
    cfg.experiment.replications = 1;
    assert_eq!(ranked_with(&cfg, 2).1, 2);
    cfg.experiment.threads = 2;
    assert_eq!(ranked_with(&cfg, 3).1, 6);
}

#[test]
fn long_links_let_ranks_exchange_less_often_with_the_same_result() {
    // A window of 2,000 cycles: after it the ranks exchange once a cycle until the last
    // measured message is delivered, whatever the links, and a shorter window would leave
    // the stretches too few cycles to show.
    let mut base = common::cut_short(
        "w",
        common::preset("wormhole-torus-dor.ron"),
        [(0, 0), (0, 0), (1_000, 2_000)],
    );
    base.experiment.replications = 1;
    let (_, _, every_cycle) = ranked_with(&base, 2);
    base.links.latency = 20;
    base.links.credit_latency = None;
    let (_, _, stretched) = ranked_with(&base, 2);
    // Stretches of 20 cycles or more (the crossbar traversal adds to the link), cut at
    // check points and the window's end, up to the window's end; then one cycle each
    // until the last measured message is delivered (the stop can come in any cycle).
    assert!(
        stretched * 4 < every_cycle,
        "latency 20: {stretched} exchanges, latency 1: {every_cycle}"
    );
    for latency in [4, 20] {
        let mut cfg = base.clone();
        cfg.links.latency = latency;
        cfg.links.credit_latency = None;
        let one = report(&cfg);
        assert_eq!(one, ranked(&cfg, 2), "latency {latency} on 2 ranks");
        cfg.experiment.threads = 2;
        assert_eq!(
            one,
            ranked(&cfg, 3),
            "latency {latency} on 3 ranks of 2 threads"
        );
    }
}

#[test]
fn timeout_and_deflection_presets_with_long_links_give_one_process_report_on_ranks() {
    for (name, cfg) in common::timeout_presets()
        .into_iter()
        .chain(common::deflection_presets())
    {
        let mut cfg = short(&name, cfg);
        cfg.experiment.replications = 1;
        cfg.links.latency = 6;
        let one = report(&cfg);
        assert_eq!(
            one,
            ranked(&cfg, 2),
            "{name}, links of 6 cycles, on 2 ranks"
        );
    }
}

#[test]
fn a_window_counted_in_messages_closes_alike_on_ranks() {
    let mut cfg = short("w", common::preset("wormhole-torus-adaptive.ron"));
    cfg.links.latency = 4;
    cfg.experiment.measure = Measure::Messages(3_000);
    assert_eq!(report(&cfg), ranked(&cfg, 3));
}

#[test]
fn a_rank_that_panics_ends_the_others_instead_of_leaving_them_waiting() {
    use routemu::engine::transport::Transport;
    let panicked = std::thread::scope(|s| {
        let handles: Vec<_> = LocalRanks::new(3)
            .into_iter()
            .map(|t| {
                s.spawn(move || {
                    let _fail_others = t.guard();
                    if t.rank() == 1 {
                        panic!("rank 1 fails");
                    }
                    t.all_gather(b"x");
                })
            })
            .collect();
        handles.into_iter().filter_map(|h| h.join().err()).count()
    });
    assert_eq!(panicked, 3);
}

#[test]
fn a_network_smaller_than_the_ranks_is_refused() {
    let mut cfg = short("w", common::preset("wormhole-torus-dor.ron"));
    cfg.topology = ron::from_str("Torus(k: 2, n: 1)").unwrap();
    let (errors, _) = common::on_local_ranks(3, || {
        run_experiment(&cfg, &mut |_, _| {})
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default()
    });
    for e in errors {
        assert!(e.contains("cannot be split over 3 MPI ranks"), "{e}");
    }
}

#[test]
fn a_dragonfly_on_ranks_is_split_by_group_and_gives_one_process_report() {
    // dragonfly-booksim: 9 groups; 2 ranks hold 5 and 4 of them, and exchange over the
    // global links between those only (one between every pair of groups, each way).
    let mut cfg = short(
        "dragonfly-booksim.ron",
        common::preset("dragonfly-booksim.ron"),
    );
    cfg.experiment.replications = 1;
    let one = report(&cfg);
    let (reports, _) = common::on_local_ranks(2, || {
        serde_json::to_value(run_experiment(&cfg, &mut |_, _| {}).unwrap()).unwrap()
    });
    let p = &reports[0]["partitioning"];
    assert_eq!(p["partitioner"], "Blocks", "{p}");
    assert_eq!(p["rank_cut_links"], 2 * 5 * 4, "{p}");
    assert_eq!(one, ranked(&cfg, 2));
}

#[test]
fn ugal_global_on_ranks_gives_one_process_report_and_every_rank_refuses_a_split_group() {
    // The small dragonfly past saturation under GroupShift, 40-cycle global links so that
    // UGAL-G takes both routes.
    let mut cfg = crate::partitions::ugal_global();
    assert_eq!(report(&cfg), ranked(&cfg, 2));
    // 2 ranks × 2 threads: 4 partitions would split the 9 groups; every rank says so.
    cfg.experiment.threads = 2;
    let (errors, _) = common::on_local_ranks(2, || {
        run_experiment(&cfg, &mut |_, _| {})
            .unwrap_err()
            .to_string()
    });
    for e in errors {
        assert!(e.contains("run on 3 threads"), "{e}");
    }
}
