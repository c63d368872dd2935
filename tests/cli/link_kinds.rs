//! Per-link measurements by kind on the dragonfly and the flattened butterfly
//! (docs/dragonfly.md, "Heat maps and per-link measurements"): every link row names its
//! kind, `link_totals.by_kind` totals each kind as the rows do, minimal routing under
//! `GroupShift` saturates one global link per group pair while the rest idle, and the
//! heat maps of both presets are drawn with their legends.

use crate::common::{read_json, routemu_ok};
use serde_json::Value;

/// A short run of `hw` with `extra` flags (one replication, short window).
fn short(hw: &str, extra: &[&str]) -> Vec<String> {
    let mut v: Vec<String> = [
        "run",
        hw,
        "--warmup",
        "2000",
        "--cycles",
        "3000",
        "--replications",
        "1",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    v.extend(extra.iter().map(|s| s.to_string()));
    v
}

fn run_json(hw: &str, extra: &[&str]) -> Value {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    let mut args = short(hw, extra);
    args.extend([
        "--per-link".into(),
        "--json".into(),
        json.display().to_string(),
    ]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    routemu_ok(&args);
    read_json(&json)
}

/// `link_totals.by_kind`'s entry for `kind`.
fn kind<'a>(r: &'a Value, kind: &str) -> &'a Value {
    r["link_totals"]["by_kind"]
        .as_array()
        .unwrap()
        .iter()
        .find(|k| k["kind"] == kind)
        .unwrap_or_else(|| panic!("no {kind} links in {}", r["link_totals"]))
}

#[test]
fn minimal_routing_under_group_shift_saturates_one_global_link_per_group_pair() {
    // Past GroupShift's minimal bound 1/(a·p) = 1/8 flit per terminal per cycle: every
    // group's traffic to the next crosses its one global link to it.
    let r = run_json(
        "hw/dragonfly-booksim.ron",
        &["--pattern", "groupshift", "--rate", "0.02"],
    );
    let groups = 9; // a·h + 1, a = 4, h = 2
    let global = kind(&r, "global");
    let (mean, max) = (
        global["utilization_mean"].as_f64().unwrap(),
        global["utilization_max"].as_f64().unwrap(),
    );
    assert!(max > 0.85, "a global link saturates: {global}");
    // One hot link in the a·h = 8 of a group: the mean is about max / 8.
    assert!(mean < 0.25 * max, "the other global links idle: {global}");
    let hot: Vec<&Value> = r["links"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|l| l["kind"] == "global" && l["utilization"].as_f64().unwrap() > 0.5)
        .collect();
    assert_eq!(hot.len(), groups, "one per group: {hot:?}");
    // Minimal routing never takes another group pair's global link.
    assert_eq!(global["count"].as_u64().unwrap(), 72);
    let idle = r["links"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|l| l["kind"] == "global" && l["flits"] == 0)
        .count();
    assert_eq!(idle, 72 - groups, "the rest idle");
    // Each leads from group i's gateway to group i + 1's (routers a·i .. a·i + a).
    for l in hot {
        let (from, to) = (l["from"].as_u64().unwrap(), l["to"].as_u64().unwrap());
        assert_eq!((from / 4 + 1) % groups as u64, to / 4, "{l}");
    }
}

#[test]
fn link_rows_name_their_kind_and_the_kinds_add_up_to_the_totals() {
    for (hw, kinds) in [
        (
            "hw/dragonfly-booksim.ron",
            &[
                ("local", 4 * 3 * 9),
                ("global", 4 * 2 * 9),
                ("terminal", 2 * 2 * 4 * 9),
            ][..],
        ),
        (
            "hw/flatfly-booksim.ron",
            &[("dim0", 16 * 3), ("dim1", 16 * 3), ("terminal", 2 * 4 * 16)][..],
        ),
    ] {
        let r = run_json(hw, &[]);
        let totals = &r["link_totals"];
        let by_kind = totals["by_kind"].as_array().unwrap();
        let names: Vec<&str> = by_kind
            .iter()
            .map(|k| k["kind"].as_str().unwrap())
            .collect();
        let expected: Vec<&str> = kinds.iter().map(|k| k.0).collect();
        assert_eq!(names, expected, "{hw}: kinds in the report's order");
        let links = r["links"].as_array().unwrap();
        for &(name, count) in kinds {
            let rows: Vec<&Value> = links.iter().filter(|l| l["kind"] == name).collect();
            assert_eq!(rows.len(), count, "{hw} {name}");
            let k = kind(&r, name);
            assert_eq!(k["count"].as_u64().unwrap() as usize, count);
            let flits: u64 = rows.iter().map(|l| l["flits"].as_u64().unwrap()).sum();
            assert_eq!(k["flits"].as_u64().unwrap(), flits, "{hw} {name}");
            let util: Vec<f64> = rows
                .iter()
                .map(|l| l["utilization"].as_f64().unwrap())
                .collect();
            let mean = util.iter().sum::<f64>() / util.len() as f64;
            let max = util.iter().copied().fold(0.0, f64::max);
            assert!((k["utilization_mean"].as_f64().unwrap() - mean).abs() < 1e-9);
            assert_eq!(k["utilization_max"].as_f64().unwrap(), max);
        }
        assert_eq!(
            by_kind
                .iter()
                .map(|k| k["busy"].as_u64().unwrap())
                .sum::<u64>(),
            totals["busy"].as_u64().unwrap(),
            "{hw}: the kinds share every link"
        );
    }
}

#[test]
fn the_papers_networks_keep_their_link_columns() {
    let r = run_json("hw/wormhole-torus-dor.ron", &["--set", "topology.k=4"]);
    assert!(r["link_totals"].get("by_kind").is_none());
    for l in r["links"].as_array().unwrap() {
        assert!(l.get("kind").is_none(), "{l}");
    }
}

#[test]
fn heat_maps_of_the_dragonfly_and_flatfly_presets_have_their_link_kinds_legends() {
    let dir = tempfile::tempdir().unwrap();
    for (hw, entries) in [
        (
            "hw/dragonfly-booksim.ron",
            &[
                "local links (inside a group)",
                "global links (between groups)",
                "terminal links: not drawn",
                ">g8<",
            ][..],
        ),
        (
            "hw/flatfly-booksim.ron",
            &[
                "dim0 links (along a row)",
                "dim1 links (along a column)",
                "terminal links: not drawn",
            ][..],
        ),
    ] {
        let svg = dir.path().join("h.svg");
        let mut args = short(hw, &["--rate", "0.005"]);
        args.extend(["--heatmap".into(), svg.display().to_string()]);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = routemu_ok(&args);
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(stdout.contains("link utilisation by kind: "), "{stdout}");
        let text = std::fs::read_to_string(&svg).unwrap();
        assert!(text.contains("link kinds (utilisation)"), "{hw}");
        for e in entries {
            assert!(text.contains(e), "{hw}: {e}");
        }
        // Routers only: 36 and 16 of them.
        let routers = if hw.contains("dragonfly") { 36 } else { 16 };
        assert_eq!(text.matches("<circle ").count(), routers, "{hw}");
    }
}
