//! A generator of SST DUMPI traces of MPI application skeletons (issue 16, item 4), for
//! replaying with `routemu replay` where no recorded trace of a real application can be
//! shipped. It writes `PREFIX-NNNN.bin` (one per rank) and `PREFIX.meta` as sst-dumpi
//! writes them (`routemu::trace::dumpi_write`); docs/dumpi-gen.md describes the
//! applications, the timing model and what the traces are not.
//!
//!     cargo run --release --example dumpi_gen -- APP --ranks P [--iters I] [--bytes B] \
//!         [--seed S] [--compute-ns NS] [--exact] --out DIR/PREFIX
//!
//! The applications (all messages MPI_DOUBLE on MPI_COMM_WORLD unless said):
//!
//! - `halo2d`: a 2-D Jacobi/CG-like stencil on a periodic px × py process grid (the most
//!   nearly square factorisation of P, both extents at least 2). Per iteration: Irecv
//!   from the 4 neighbours, Isend of B bytes to each, Waitall, a compute phase, then an
//!   Allreduce of one double (the residual). Barrier before the loop, Reduce of the run
//!   time (one double, MAX, root 0) after it.
//! - `halo3d26`: a LULESH-like 3-D exchange on a c × c × c process grid (P = c³, c ≥ 2),
//!   not periodic (as LULESH): each rank exchanges with its up to 26 neighbours, faces
//!   B bytes (m = B/8 doubles), edges ⌈√m⌉ doubles, corners 1 double. Per iteration:
//!   the Irecvs, the Isends, Waitall, a compute phase, an Allreduce of one double (MIN:
//!   the time step). Barrier before, Reduce of the run time after.
//! - `fft`: a 2-D FFT on a pr × pc process grid (most nearly square, both ≥ 2): Bcast of
//!   the problem size (4 ints from rank 0), then Comm_split into row and column
//!   communicators (and Comm_rank/Comm_size on each). Per iteration: compute, Alltoall
//!   in the row communicator (blocks of B/pc bytes), compute, Alltoall in the column
//!   communicator (B/pr), compute, and the global transpose, an Alltoall on
//!   MPI_COMM_WORLD (B/P). B is each rank's share of the array. An Allgather of one
//!   double (each rank's time) at the end.
//! - `pingpong`: pairs (2k, 2k + 1) of an even P ≥ 2. Per iteration the even rank
//!   computes, then a blocking Send of B bytes (default 8) to its partner and a blocking
//!   Recv of B bytes from it; the odd rank a blocking Recv, a compute phase and a
//!   blocking Send back (tag 0). No collectives.
//!
//! Timing: every rank has a clock; calls take a fixed cost plus up to 5% seeded jitter,
//! messages arrive 1.5 µs plus 0.1 ns per byte after their (I)send is entered, a Waitall
//! or blocking Recv returns after the last message it waits for has arrived, a
//! collective returns on every member after the last member entered plus its cost, and
//! compute phases scale with the local problem (B) unless `--compute-ns` gives them.
//! The same command gives the same bytes (the jitter comes from `--seed`). `--exact`
//! takes the randomness out: no jitter, every rank starts at 0 and calls follow one
//! another without a gap, so the only time between calls is the compute phases
//! (docs/dumpi-gen.md, "Exact timing").
//!
//! Bad parameters (ranks that do not fit the grid or, for pingpong, are odd or fewer
//! than 2, zero iterations, sizes that are not whole doubles, a compute phase over
//! 1,000 s, an output path without a file prefix) are refused with exit status 1
//! and nothing written; the files are written under temporary names and renamed only
//! when all are complete.

use clap::{Parser, ValueEnum};
use routemu::foundation::rng::{below, stream, NodeRng};
use routemu::trace::dumpi::{Args, Call, Stamp, Status};
use routemu::trace::dumpi_write::{meta, Header, RankWriter, X86_64_TYPE_SIZES};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// MPI_COMM_WORLD's DUMPI handle.
const WORLD: i16 = 2;
/// The first communicator handle DUMPI gives a user communicator.
const FIRST_USER_COMM: i16 = 4;
/// DUMPI datatype indices.
const INT: i16 = 9;
const DOUBLE: i16 = 14;
/// DUMPI operation codes.
const OP_MAX: u8 = 1;
const OP_MIN: u8 = 2;
const OP_SUM: u8 = 3;
/// The first request handle DUMPI gives.
const FIRST_REQUEST: i32 = 2;
/// Start of every trace: 2024-01-01 00:00:00 UTC (also the wall-clock bias).
const EPOCH: u64 = 1_704_067_200;
/// Ranks per node, for the host names in the headers.
const RANKS_PER_NODE: usize = 8;

/// Latency of a message and cost of a byte, ns (about 10 GB/s).
const LATENCY_NS: u64 = 1_500;
const fn wire_ns(bytes: u64) -> u64 {
    bytes / 10
}
/// Time between a call's return and the rank's next call (plus jitter; 0 with --exact).
const GAP_NS: u64 = 100;
/// A blocking Send's cost (eager: it returns without waiting for the receiver).
const SEND_NS: u64 = 400;
/// A blocking Recv returns this long after the later of its entry and its message's
/// arrival.
const RECV_NS: u64 = 200;
/// Compute phase of pingpong, ns.
const PINGPONG_COMPUTE_NS: u64 = 1_000;
/// The largest `--compute-ns` (1,000 s).
const MAX_COMPUTE_NS: u64 = 1_000_000_000_000;

/// The application skeletons.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum App {
    /// 2-D periodic 4-neighbour halo exchange and an Allreduce per iteration.
    Halo2d,
    /// LULESH-like 3-D 26-neighbour exchange and an Allreduce per iteration.
    Halo3d26,
    /// 2-D FFT transposes: Alltoalls in row, column and world communicators.
    Fft,
    /// Pairs (2k, 2k+1) exchanging blocking Send/Recv ping-pongs.
    Pingpong,
}

/// The command line.
#[derive(Parser, Debug)]
#[command(
    name = "dumpi_gen",
    about = "Writes a DUMPI trace (PREFIX-NNNN.bin, PREFIX.meta) of an MPI application skeleton"
)]
pub struct Cli {
    /// The application.
    #[arg(value_enum)]
    pub app: App,
    /// MPI ranks (halo2d, fft: at least 4, a grid of extents ≥ 2; halo3d26: a cube ≥ 8;
    /// pingpong: even, at least 2).
    #[arg(long)]
    pub ranks: u32,
    /// Iterations of the main loop.
    #[arg(long, default_value_t = 10)]
    pub iters: u32,
    /// Bytes: halo2d and halo3d26 a face message, fft a rank's share of the array,
    /// pingpong a message (default 4096, 8192, 4096, 8; whole doubles, fft a multiple of
    /// 8 × ranks).
    #[arg(long)]
    pub bytes: Option<u64>,
    /// Seed of the timing jitter.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Every compute phase takes NS ns (before jitter) instead of the application's
    /// model (pingpong: 1000).
    #[arg(long, value_name = "NS")]
    pub compute_ns: Option<u64>,
    /// Exact timing: no jitter, every rank starts at 0, no gap between a call's return
    /// and the next call (only the compute phases lie between calls).
    #[arg(long)]
    pub exact: bool,
    /// Output: DIR/PREFIX (DIR is created if missing).
    #[arg(long)]
    pub out: PathBuf,
}

/// A generated trace, in memory.
pub struct Trace {
    /// The file prefix.
    pub prefix: String,
    /// `PREFIX.meta`'s text.
    pub meta: String,
    /// Each rank's file.
    pub ranks: Vec<Vec<u8>>,
}

/// A point-to-point message of one iteration: peer, doubles, tag.
#[derive(Clone, Copy)]
struct P2p {
    peer: usize,
    count: i32,
    tag: i32,
}

/// The arguments of a send of `count` doubles to `dest` on the world communicator
/// (`request`: a nonblocking one's request).
fn send_args(count: i32, dest: usize, tag: i32, request: Option<i32>) -> Args {
    Args::Send {
        count,
        datatype: DOUBLE,
        dest: dest as i32,
        tag,
        comm: WORLD,
        request,
    }
}

/// The arguments of a receive of `count` doubles from `source` on the world
/// communicator (`request`: a nonblocking one's request).
fn recv_args(count: i32, source: usize, tag: i32, request: Option<i32>) -> Args {
    Args::Recv {
        count,
        datatype: DOUBLE,
        source: source as i32,
        tag,
        comm: WORLD,
        request,
    }
}

/// The ranks' clocks and files.
struct Sim {
    clock: Vec<u64>,
    /// Each rank's start (ns after EPOCH) and the CPU time it had used by then.
    start: Vec<u64>,
    cpu0: Vec<u64>,
    rng: Vec<NodeRng>,
    files: Vec<RankWriter>,
    /// `--exact`: no jitter, no start skew, no gap between calls.
    exact: bool,
}

fn stamp(ns: u64, base: u64) -> Stamp {
    Stamp {
        sec: base + ns / 1_000_000_000,
        nsec: (ns % 1_000_000_000) as u32,
    }
}

impl Sim {
    fn new(p: usize, seed: u64, exact: bool) -> Result<Sim, String> {
        let mut s = Sim {
            clock: Vec::with_capacity(p),
            start: Vec::with_capacity(p),
            cpu0: Vec::with_capacity(p),
            rng: (0..p).map(|r| stream(seed, 0, r as u32, 7)).collect(),
            files: Vec::with_capacity(p),
            exact,
        };
        for r in 0..p {
            // Ranks start within 200 µs of each other, having used 5-10 ms of CPU time
            // (with --exact: all at 0, having used 5 ms, whatever the seed).
            let (start, cpu) = if exact {
                (0, 5_000_000)
            } else {
                let start = below(&mut s.rng[r], 200_000);
                (start, 5_000_000 + below(&mut s.rng[r], 5_000_000))
            };
            s.clock.push(start);
            s.start.push(start);
            s.cpu0.push(cpu);
            let header = Header {
                version: (13, 0, 0),
                start_time: EPOCH,
                hostname: format!("node{:03}", r / RANKS_PER_NODE),
                username: "routemu".into(),
                mesh_coords: Vec::new(),
                mesh_size: Vec::new(),
            };
            s.files.push(
                RankWriter::new(header, &X86_64_TYPE_SIZES, 0, EPOCH as u32)
                    .map_err(|e| e.to_string())?,
            );
        }
        Ok(s)
    }

    fn ranks(&self) -> usize {
        self.clock.len()
    }

    /// `ns` plus up to 5% jitter (`ns` itself with --exact).
    fn jitter(&mut self, r: usize, ns: u64) -> u64 {
        if self.exact {
            return ns;
        }
        ns + below(&mut self.rng[r], ns / 20 + 1)
    }

    /// Records a call of rank r entering at `enter` and returning at `leave`; the
    /// rank's next call comes 100-105 ns later (at `leave` with --exact).
    fn record(
        &mut self,
        r: usize,
        label: u16,
        enter: u64,
        leave: u64,
        args: Args,
    ) -> Result<(), String> {
        self.record_with(r, label, enter, leave, args, Vec::new())
    }

    /// [`Sim::record`] with the call's statuses.
    fn record_with(
        &mut self,
        r: usize,
        label: u16,
        enter: u64,
        leave: u64,
        args: Args,
        statuses: Vec<Status>,
    ) -> Result<(), String> {
        // CPU time runs with the wall clock from the rank's start (MPI libraries poll
        // while they wait).
        let (cpu0, start) = (self.cpu0[r], self.start[r]);
        let cpu = |t: u64| stamp(t + cpu0 - start, 0);
        let call = Call {
            label,
            offset: 0,
            thread: Some(0),
            cpu: Some((cpu(enter), cpu(leave))),
            wall: Some((stamp(enter, EPOCH), stamp(leave, EPOCH))),
            counters: Vec::new(),
            statuses,
            args,
        };
        self.files[r]
            .write(&call)
            .map_err(|e| format!("rank {r}: {e}"))?;
        let gap = if self.exact {
            0
        } else {
            self.jitter(r, GAP_NS)
        };
        self.clock[r] = leave + gap;
        Ok(())
    }

    /// A local call of rank r taking about `ns`.
    fn call(&mut self, r: usize, label: u16, ns: u64, args: Args) -> Result<(), String> {
        let enter = self.clock[r];
        let leave = enter + self.jitter(r, ns);
        self.record(r, label, enter, leave, args)
    }

    /// Every rank computes for about `ns`.
    fn compute(&mut self, ns: u64) {
        for r in 0..self.ranks() {
            self.compute_on(r, ns);
        }
    }

    /// Rank r computes for about `ns`.
    fn compute_on(&mut self, r: usize, ns: u64) {
        self.clock[r] += self.jitter(r, ns);
    }

    /// A blocking MPI_Send of `count` doubles from rank r to `dest` (tag 0, world),
    /// returning after its cost; gives the message's arrival at `dest`.
    fn send(&mut self, r: usize, dest: usize, count: i32) -> Result<u64, String> {
        let arrival = self.clock[r] + LATENCY_NS + wire_ns(8 * count as u64);
        self.call(r, 0, SEND_NS, send_args(count, dest, 0, None))?;
        Ok(arrival)
    }

    /// A blocking MPI_Recv of `count` doubles by rank r from `source` (tag 0, world) of
    /// a message arriving at `arrival`: it returns a fixed cost after the later of its
    /// entry and the arrival, with the message's status.
    fn recv(&mut self, r: usize, source: usize, count: i32, arrival: u64) -> Result<(), String> {
        let enter = self.clock[r];
        let leave = enter.max(arrival) + self.jitter(r, RECV_NS);
        let args = recv_args(count, source, 0, None);
        let status = (8 * count, source as i32, 0, 0, 0);
        self.record_with(r, 1, enter, leave, args, vec![status])
    }

    /// One neighbour exchange: every rank posts its Irecvs, then its Isends, then waits
    /// for all of them with Waitall (MPI_STATUSES_IGNORE).
    fn exchange(&mut self, recvs: &[Vec<P2p>], sends: &[Vec<P2p>]) -> Result<(), String> {
        let p = self.ranks();
        let mut last_in = vec![0u64; p];
        let mut requests = vec![Vec::new(); p];
        for r in 0..p {
            let mut req = FIRST_REQUEST;
            for m in &recvs[r] {
                self.call(r, 12, 300, recv_args(m.count, m.peer, m.tag, Some(req)))?;
                requests[r].push(req);
                req += 1;
            }
            for m in &sends[r] {
                let bytes = 8 * m.count as u64;
                let arrival = self.clock[r] + LATENCY_NS + wire_ns(bytes);
                last_in[m.peer] = last_in[m.peer].max(arrival);
                self.call(r, 8, 400, send_args(m.count, m.peer, m.tag, Some(req)))?;
                requests[r].push(req);
                req += 1;
            }
        }
        for (r, requests) in requests.into_iter().enumerate() {
            let enter = self.clock[r];
            let leave = enter.max(last_in[r]) + self.jitter(r, 200);
            self.record(r, 18, enter, leave, Args::Wait { requests })?;
        }
        Ok(())
    }

    /// A collective over `members` (world ranks in communicator order): each enters at
    /// its clock, and all return `cost` ns after the last one entered. `args` gives a
    /// member's arguments from its rank in the communicator.
    fn collective(
        &mut self,
        members: &[usize],
        label: u16,
        cost: u64,
        args: impl Fn(usize) -> Args,
    ) -> Result<(), String> {
        let done = members.iter().map(|&r| self.clock[r]).max().unwrap_or(0) + cost;
        for (i, &r) in members.iter().enumerate() {
            let enter = self.clock[r];
            let leave = done + self.jitter(r, 200);
            self.record(r, label, enter, leave, args(i))?;
        }
        Ok(())
    }

    /// MPI_Init, then Comm_rank and Comm_size on MPI_COMM_WORLD, on every rank.
    fn init(&mut self, argv: &[String]) -> Result<(), String> {
        let p = self.ranks();
        for r in 0..p {
            self.call(
                r,
                124,
                60_000,
                Args::Init {
                    argv: argv.to_vec(),
                },
            )?;
            self.call(
                r,
                82,
                300,
                Args::CommQuery {
                    comm: WORLD,
                    value: r as i32,
                },
            )?;
            self.call(
                r,
                81,
                200,
                Args::CommQuery {
                    comm: WORLD,
                    value: p as i32,
                },
            )?;
        }
        Ok(())
    }

    /// MPI_Finalize on every rank, and the finished files.
    fn finish(mut self) -> Result<Vec<Vec<u8>>, String> {
        for r in 0..self.ranks() {
            self.call(r, 125, 150_000, Args::None)?;
        }
        Ok(self.files.into_iter().map(RankWriter::finish).collect())
    }
}

/// ⌈log₂ p⌉.
fn log2_ceil(p: usize) -> u64 {
    u64::from(p.next_power_of_two().trailing_zeros())
}

/// Cost of a log-p collective moving `bytes` per step.
fn tree_cost(p: usize, bytes: u64) -> u64 {
    log2_ceil(p) * (LATENCY_NS + wire_ns(bytes))
}

/// Cost of an all-to-all style collective of `block` bytes per pair.
fn all_cost(p: usize, block: u64) -> u64 {
    log2_ceil(p) * LATENCY_NS + (p as u64 - 1) * wire_ns(block)
}

/// The most nearly square a × b = p with a ≤ b.
fn grid2(p: u32) -> (u32, u32) {
    let mut a = (p as f64).sqrt() as u32;
    while a > 1 && !p.is_multiple_of(a) {
        a -= 1;
    }
    (a.max(1), p / a.max(1))
}

/// Whole doubles in `bytes`, or why not.
fn doubles(bytes: u64, what: &str) -> Result<i32, String> {
    if bytes == 0 || !bytes.is_multiple_of(8) || bytes / 8 > i32::MAX as u64 {
        return Err(format!(
            "--bytes {bytes}: {what} must be a positive whole number of doubles (a multiple of 8, at most {} bytes)",
            8 * i32::MAX as u64
        ));
    }
    Ok((bytes / 8) as i32)
}

/// Checks the parameters and generates the trace in memory.
pub fn generate(cli: &Cli) -> Result<Trace, String> {
    let p = cli.ranks;
    if cli.iters == 0 {
        return Err("--iters 0: the main loop needs at least one iteration".into());
    }
    if p > 4096 {
        return Err(format!("--ranks {p}: at most 4096 ranks"));
    }
    if let Some(ns) = cli.compute_ns.filter(|&ns| ns > MAX_COMPUTE_NS) {
        return Err(format!(
            "--compute-ns {ns}: at most {MAX_COMPUTE_NS} ns (1,000 s) a compute phase"
        ));
    }
    // Files grow with ranks × iterations; keep a generated trace under about 1 GB.
    if u64::from(p) * u64::from(cli.iters) > 1 << 20 {
        return Err(format!(
            "--ranks {p} × --iters {}: at most 1,048,576 rank-iterations",
            cli.iters
        ));
    }
    let prefix = cli
        .out
        .file_name()
        .and_then(|n| n.to_str())
        .filter(|n| !n.is_empty() && !n.starts_with('.'))
        .ok_or_else(|| {
            format!(
                "--out {}: give DIR/PREFIX (a file prefix)",
                cli.out.display()
            )
        })?
        .to_string();
    let name = match cli.app {
        App::Halo2d => "halo2d",
        App::Halo3d26 => "halo3d26",
        App::Fft => "fft",
        App::Pingpong => "pingpong",
    };
    let argv: Vec<String> = [format!("./{name}"), "-i".into(), cli.iters.to_string()]
        .into_iter()
        .collect();
    let ranks = match cli.app {
        App::Halo2d => halo2d(cli, &argv)?,
        App::Halo3d26 => halo3d26(cli, &argv)?,
        App::Fft => fft(cli, &argv)?,
        App::Pingpong => pingpong(cli, &argv)?,
    };
    let header = Header {
        version: (13, 0, 0),
        start_time: EPOCH,
        hostname: "node000".into(),
        username: "routemu".into(),
        mesh_coords: Vec::new(),
        mesh_size: Vec::new(),
    };
    Ok(Trace {
        meta: meta(&header, p, &prefix),
        prefix,
        ranks,
    })
}

/// The Barrier before a main loop.
fn barrier(sim: &mut Sim, world: &[usize]) -> Result<(), String> {
    sim.collective(world, 52, tree_cost(world.len(), 0), |_| Args::Barrier {
        comm: WORLD,
    })
}

/// An Allreduce of one double on MPI_COMM_WORLD.
fn allreduce1(sim: &mut Sim, world: &[usize], op: u8) -> Result<(), String> {
    sim.collective(world, 65, tree_cost(world.len(), 8), |_| Args::Allreduce {
        count: 1,
        datatype: DOUBLE,
        op,
        comm: WORLD,
    })
}

/// The run time reduced to rank 0 after a main loop.
fn reduce_time(sim: &mut Sim, world: &[usize]) -> Result<(), String> {
    sim.collective(world, 62, tree_cost(world.len(), 8), |_| Args::Reduce {
        count: 1,
        datatype: DOUBLE,
        op: OP_MAX,
        root: 0,
        comm: WORLD,
    })
}

fn halo2d(cli: &Cli, argv: &[String]) -> Result<Vec<Vec<u8>>, String> {
    let (px, py) = grid2(cli.ranks);
    if px < 2 {
        return Err(format!(
            "halo2d --ranks {}: needs px × py ranks with px, py ≥ 2 (4, 6, 8, 9, …); {} is not",
            cli.ranks, cli.ranks
        ));
    }
    let n = doubles(cli.bytes.unwrap_or(4096), "a face message")?;
    let (px, py) = (px as usize, py as usize);
    let p = px * py;
    let at = |x: usize, y: usize| (x % px) + px * (y % py);
    // Directions east, west, north, south; a message travelling in direction d has tag d.
    let step = |r: usize, d: usize| {
        let (x, y) = (r % px, r / px);
        match d {
            0 => at(x + 1, y),
            1 => at(x + px - 1, y),
            2 => at(x, y + 1),
            _ => at(x, y + py - 1),
        }
    };
    let opposite = [1, 0, 3, 2];
    let sends: Vec<Vec<P2p>> = (0..p)
        .map(|r| {
            (0..4)
                .map(|d| P2p {
                    peer: step(r, d),
                    count: n,
                    tag: d as i32,
                })
                .collect()
        })
        .collect();
    // Receive from the neighbour in direction d what it sent the opposite way.
    let recvs: Vec<Vec<P2p>> = (0..p)
        .map(|r| {
            (0..4)
                .map(|d| P2p {
                    peer: step(r, d),
                    count: n,
                    tag: opposite[d],
                })
                .collect()
        })
        .collect();
    // A 5-point sweep over n × n points, 2 ns a point.
    let compute = cli.compute_ns.unwrap_or(2 * (n as u64) * (n as u64));
    halo(cli, argv, p, (&recvs, &sends), compute, OP_SUM)
}

/// A halo program on `p` ranks: MPI_Init and a barrier, then `cli.iters` times the
/// neighbour exchange of `recvs` and `sends`, about `compute` ns of computing and an
/// allreduce of one double with `op`; last, the reduce of the timings.
fn halo(
    cli: &Cli,
    argv: &[String],
    p: usize,
    (recvs, sends): (&[Vec<P2p>], &[Vec<P2p>]),
    compute: u64,
    op: u8,
) -> Result<Vec<Vec<u8>>, String> {
    let world: Vec<usize> = (0..p).collect();
    let mut sim = Sim::new(p, cli.seed, cli.exact)?;
    sim.init(argv)?;
    barrier(&mut sim, &world)?;
    for _ in 0..cli.iters {
        sim.exchange(recvs, sends)?;
        sim.compute(compute);
        allreduce1(&mut sim, &world, op)?;
    }
    reduce_time(&mut sim, &world)?;
    sim.finish()
}

/// The 26 directions of a 3-D neighbourhood, in a fixed order.
fn directions() -> Vec<[i64; 3]> {
    let mut v = Vec::with_capacity(26);
    for dz in -1..=1 {
        for dy in -1..=1 {
            for dx in -1..=1 {
                if (dx, dy, dz) != (0, 0, 0) {
                    v.push([dx, dy, dz]);
                }
            }
        }
    }
    v
}

fn halo3d26(cli: &Cli, argv: &[String]) -> Result<Vec<Vec<u8>>, String> {
    let c = (1..=16u32).find(|c| c * c * c >= cli.ranks).unwrap_or(17);
    if c * c * c != cli.ranks || c < 2 {
        return Err(format!(
            "halo3d26 --ranks {}: needs a cube of at least 2 × 2 × 2 ranks (8, 27, 64, …, 4096)",
            cli.ranks
        ));
    }
    let face = doubles(cli.bytes.unwrap_or(8192), "a face message")?;
    let side = (f64::from(face).sqrt().ceil() as i32).max(1);
    let c = c as i64;
    let p = (c * c * c) as usize;
    let dirs = directions();
    let size_of = |d: &[i64; 3]| match d.iter().filter(|&&x| x != 0).count() {
        1 => face,
        2 => side,
        _ => 1,
    };
    let neighbour = |r: usize, d: &[i64; 3]| {
        let r = r as i64;
        let (x, y, z) = (r % c + d[0], (r / c) % c + d[1], r / (c * c) + d[2]);
        ((0..c).contains(&x) && (0..c).contains(&y) && (0..c).contains(&z))
            .then(|| (x + c * (y + c * z)) as usize)
    };
    let mut sends = vec![Vec::new(); p];
    let mut recvs = vec![Vec::new(); p];
    for r in 0..p {
        for (i, d) in dirs.iter().enumerate() {
            if let Some(q) = neighbour(r, d) {
                let count = size_of(d);
                // The tag is the direction the message travels in: this rank's message
                // to q goes in d, q's message to this rank in −d (index 25 − i).
                sends[r].push(P2p {
                    peer: q,
                    count,
                    tag: i as i32,
                });
                recvs[r].push(P2p {
                    peer: q,
                    count,
                    tag: (25 - i) as i32,
                });
            }
        }
    }
    // Hydrodynamics on side³ elements, 25 ns an element.
    let compute = cli.compute_ns.unwrap_or(25 * (side as u64).pow(3));
    halo(cli, argv, p, (&recvs, &sends), compute, OP_MIN)
}

fn fft(cli: &Cli, argv: &[String]) -> Result<Vec<Vec<u8>>, String> {
    let (pr, pc) = grid2(cli.ranks);
    if pr < 2 {
        return Err(format!(
            "fft --ranks {}: needs pr × pc ranks with pr, pc ≥ 2 (4, 6, 8, 9, …)",
            cli.ranks
        ));
    }
    let (pr, pc) = (pr as usize, pc as usize);
    let p = pr * pc;
    let bytes = cli.bytes.unwrap_or(4096);
    let share = doubles(bytes, "a rank's share")?;
    if !(share as usize).is_multiple_of(p) {
        return Err(format!(
            "fft --bytes {bytes}: a rank's share must split into {p} blocks of whole doubles (a multiple of {})",
            8 * p
        ));
    }
    let (world_block, row_block, col_block) =
        (share / p as i32, share / pc as i32, share / pr as i32);
    // Rank r = x + pc·y: row y holds pc ranks ordered by x, column x holds pr ranks.
    let rows: Vec<Vec<usize>> = (0..pr)
        .map(|y| (0..pc).map(|x| x + pc * y).collect())
        .collect();
    let cols: Vec<Vec<usize>> = (0..pc)
        .map(|x| (0..pr).map(|y| x + pc * y).collect())
        .collect();
    let (row_comm, col_comm) = (FIRST_USER_COMM, FIRST_USER_COMM + 1);
    let world: Vec<usize> = (0..p).collect();
    let mut sim = Sim::new(p, cli.seed, cli.exact)?;
    sim.init(argv)?;
    sim.collective(&world, 53, tree_cost(p, 16), |_| Args::Bcast {
        count: 4,
        datatype: INT,
        root: 0,
        comm: WORLD,
    })?;
    sim.collective(&world, 86, tree_cost(p, 8), |r| Args::CommSplit {
        comm: WORLD,
        color: (r / pc) as i32,
        key: (r % pc) as i32,
        newcomm: row_comm,
    })?;
    sim.collective(&world, 86, tree_cost(p, 8), |r| Args::CommSplit {
        comm: WORLD,
        color: (r % pc) as i32,
        key: (r / pc) as i32,
        newcomm: col_comm,
    })?;
    for r in 0..p {
        let (x, y) = (r % pc, r / pc);
        sim.call(
            r,
            82,
            300,
            Args::CommQuery {
                comm: row_comm,
                value: x as i32,
            },
        )?;
        sim.call(
            r,
            81,
            200,
            Args::CommQuery {
                comm: row_comm,
                value: pc as i32,
            },
        )?;
        sim.call(
            r,
            82,
            300,
            Args::CommQuery {
                comm: col_comm,
                value: y as i32,
            },
        )?;
        sim.call(
            r,
            81,
            200,
            Args::CommQuery {
                comm: col_comm,
                value: pr as i32,
            },
        )?;
    }
    let alltoall = |block: i32, comm: i16| {
        move |_| Args::Alltoall {
            sendcount: block,
            sendtype: DOUBLE,
            recvcount: block,
            recvtype: DOUBLE,
            comm,
        }
    };
    // 1-D FFTs over a rank's share: 5 n log₂ n flops at about 1 flop a ns.
    let n = share as u64 / 2;
    let compute = cli
        .compute_ns
        .unwrap_or(5 * n * u64::from(n.max(2).ilog2()) / 3);
    // Each iteration: a compute phase before each of the three transposes (within the
    // rows, within the columns, over the world), each an alltoall in every group.
    let transposes = [
        (&rows[..], pc, row_block, row_comm),
        (&cols[..], pr, col_block, col_comm),
        (std::slice::from_ref(&world), p, world_block, WORLD),
    ];
    for _ in 0..cli.iters {
        for &(groups, size, block, comm) in &transposes {
            sim.compute(compute);
            for group in groups {
                sim.collective(
                    group,
                    60,
                    all_cost(size, 8 * block as u64),
                    alltoall(block, comm),
                )?;
            }
        }
    }
    sim.collective(&world, 58, all_cost(p, 8), |_| Args::Allgather {
        sendcount: 1,
        sendtype: DOUBLE,
        recvcount: 1,
        recvtype: DOUBLE,
        comm: WORLD,
    })?;
    sim.finish()
}

fn pingpong(cli: &Cli, argv: &[String]) -> Result<Vec<Vec<u8>>, String> {
    let p = cli.ranks;
    if p < 2 || !p.is_multiple_of(2) {
        return Err(format!(
            "pingpong --ranks {p}: needs an even number of ranks, at least 2 (pairs 2k, 2k + 1)"
        ));
    }
    let bytes = cli.bytes.unwrap_or(8);
    let n = doubles(bytes, "a message")?;
    // The status of a Recv gives the bytes as an int.
    if bytes > i32::MAX as u64 {
        return Err(format!(
            "pingpong --bytes {bytes}: a message must be at most {} bytes",
            i32::MAX as u64 / 8 * 8
        ));
    }
    let compute = cli.compute_ns.unwrap_or(PINGPONG_COMPUTE_NS);
    let p = p as usize;
    let mut sim = Sim::new(p, cli.seed, cli.exact)?;
    sim.init(argv)?;
    for _ in 0..cli.iters {
        for even in (0..p).step_by(2) {
            let odd = even + 1;
            sim.compute_on(even, compute);
            let ping = sim.send(even, odd, n)?;
            sim.recv(odd, even, n, ping)?;
            sim.compute_on(odd, compute);
            let pong = sim.send(odd, even, n)?;
            sim.recv(even, odd, n, pong)?;
        }
    }
    sim.finish()
}

/// Writes the trace as `dir/PREFIX-NNNN.bin` and `dir/PREFIX.meta`: each under a
/// temporary name first, renamed only when every file is complete.
pub fn write(trace: &Trace, dir: &Path) -> Result<(), String> {
    let io = |path: &Path, e: std::io::Error| format!("{}: {e}", path.display());
    std::fs::create_dir_all(dir).map_err(|e| io(dir, e))?;
    let mut files: Vec<(PathBuf, &[u8])> = trace
        .ranks
        .iter()
        .enumerate()
        .map(|(r, b)| {
            (
                dir.join(format!("{}-{r:04}.bin", trace.prefix)),
                b.as_slice(),
            )
        })
        .collect();
    files.push((
        dir.join(format!("{}.meta", trace.prefix)),
        trace.meta.as_bytes(),
    ));
    let tmp = |f: &Path| {
        let mut name = std::ffi::OsString::from(".");
        name.push(f.file_name().unwrap_or_default());
        name.push(".tmp");
        f.with_file_name(name)
    };
    let mut written = Vec::new();
    let mut result = Ok(());
    for (f, bytes) in &files {
        let t = tmp(f);
        match std::fs::write(&t, bytes) {
            Ok(()) => written.push(t),
            Err(e) => {
                result = Err(io(&t, e));
                break;
            }
        }
    }
    if result.is_ok() {
        for (f, _) in &files {
            if let Err(e) = std::fs::rename(tmp(f), f) {
                result = Err(io(f, e));
                break;
            }
        }
    }
    if result.is_err() {
        for t in written {
            let _ = std::fs::remove_file(t);
        }
    }
    result
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let dir = match cli.out.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    match generate(&cli).and_then(|t| write(&t, &dir).map(|()| t)) {
        Ok(t) => {
            let bytes: usize = t.ranks.iter().map(Vec::len).sum();
            println!(
                "wrote {}/{}.meta and {} rank files ({bytes} bytes)",
                dir.display(),
                t.prefix,
                t.ranks.len()
            );
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("dumpi_gen: {e}");
            ExitCode::from(1)
        }
    }
}
