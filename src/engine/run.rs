//! Running one replication where its partitions are: on this process's threads
//! (`engine::parallel`), or over the ranks of the current transport
//! (`engine::distributed`) — the same result either way.

use crate::config::HwConfig;
use crate::engine::machine::validate;
use crate::engine::network::Network;
use crate::engine::parallel::{partitions_for, run_partitioned};
use crate::engine::replication::{reduce, Replication};
use crate::foundation::error::Result;
use crate::foundation::types::Cycle;

/// Runs one replication of a machine on the routers of switching mode `N` to its end,
/// on as many partitions as `experiment.threads` asks for (and the network can use).
pub fn run_replication<N: Network + Send>(
    cfg: &HwConfig,
    rep: u32,
    progress: &mut dyn FnMut(Cycle),
) -> Result<Replication<N>> {
    if let Some(t) = crate::engine::transport::current() {
        return crate::engine::distributed::run_replication::<N>(cfg, rep, &*t, progress);
    }
    let nodes = validate(cfg)?.topology.nodes();
    let e = &cfg.experiment;
    let parts = partitions_for::<N>(
        nodes,
        e.threads as usize,
        e.partition_min_nodes.map(|m| m as usize),
    );
    let (mut sims, stop) = run_partitioned::<N>(cfg, rep, parts, progress)?;
    Ok(reduce(&mut sims, stop))
}
