//! A run split any way gives the one-partition result: partitions on threads (contiguous
//! and block partitioners), ranks (as threads of this process; tests/mpi.rs runs them
//! under `mpirun`), and replays split over ranks.
//!
//! One test binary for these files (tests/parallel/*.rs); docs/testing.md lists the
//! binaries.

mod common;

#[path = "parallel/block_partitions.rs"]
mod block_partitions;
#[path = "parallel/distributed.rs"]
mod distributed;
#[path = "parallel/distributed_replay.rs"]
mod distributed_replay;
#[path = "parallel/partitions.rs"]
mod partitions;
