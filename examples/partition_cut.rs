//! The links a split of a network cuts, by partitioner, without running anything: for
//! sizing an MPI run (docs/mpi.md, "Partitioning"). For each `R×T` split (R ranks of T
//! threads) it prints the partitions, then, for contiguous ranges and for blocks, the
//! links whose ends lie in different partitions and on different ranks, and the
//! largest partition in nodes.
//!
//! Run: `cargo run --release --example partition_cut -- TOPOLOGY SPLIT...`, TOPOLOGY a
//! RON topology (`"Torus(k: 64, n: 2)"`, `"Mesh(k: 64, n: 2)"`, `"Hypercube(dim: 16)"`,
//! `"ManhattanStreet(k: 32)"`), SPLIT like `4x1` or `2x8`.

use routemu::config::{Partitioner, TopologyConfig};
use routemu::engine::distributed::owners;
use routemu::engine::partitioner::{cut, place, ranges};
use routemu::topology::Topology;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let usage = "usage: partition_cut TOPOLOGY RxT...  (e.g. \"Torus(k: 64, n: 2)\" 4x1 2x8)";
    let (topo, splits) = args.split_first().ok_or(usage)?;
    let cfg: TopologyConfig = ron::from_str(topo)?;
    let t = Topology::from_config(&cfg)?;
    println!("{}: {} nodes", t.describe(), t.nodes());
    println!("| split (ranks × threads) | partitions | contiguous: cut, across ranks, largest | blocks: cut, across ranks, largest |");
    println!("|---|---|---|---|");
    for s in splits {
        let (r, th) = s
            .split_once('x')
            .and_then(|(a, b)| Some((a.parse::<usize>().ok()?, b.parse::<usize>().ok()?)))
            .ok_or(usage)?;
        let parts = ranges(t.nodes(), r * th).len();
        let owned = owners(parts, r);
        let mut row = format!("| {r} × {th} | {parts} |");
        for how in [Partitioner::Contiguous, Partitioner::Blocks] {
            let (views, used) = place(&t, &owned, how)?;
            let (c, rc) = cut(&t, &views, &owned);
            let largest = views.iter().map(|v| v.len()).max().unwrap_or(0);
            let note = if used != how { " (same ranges)" } else { "" };
            row.push_str(&format!(" {c}, {rc}, {largest}{note} |"));
        }
        println!("{row}");
    }
    Ok(())
}
