//! MPI collectives expanded into point-to-point transfers, by the algorithms MPICH runs
//! (docs/collectives.md has the formulas, the thresholds and where they were read).
//!
//! A [`Plan`] is one collective call on a communicator of `p` ranks: which [`Collective`],
//! how many bytes ([`Sizes`]), which [`Algorithm`] (`Auto` resolves to MPICH's default
//! choice, see [`Tuning`]). [`Plan::rank`] streams one rank's schedule as [`Step`]s without
//! materialising the other ranks' schedules: a log-p algorithm holds O(1) state per rank
//! and yields O(log p) transfers, whatever `p` is (10⁶ ranks are fine).
//!
//! **Dependency semantics (MPICH's blocking algorithms, one step per blocking call):** the
//! sends and receives of a step are posted together; a rank starts step k+1 only when all
//! its receives of steps ≤ k are complete. A send of step k therefore waits for every
//! receive of the rank's earlier steps, and for nothing else: sends never wait for their
//! own delivery (eager protocol; MPICH's `MPIC_Send` returns once the buffer is reusable).
//! Reductions take no time. Transfers between a rank and itself (local copies) are not
//! listed. A step is never empty.
//!
//! **Zero bytes:** a collective with no data (count 0) has no transfers, as MPICH returns
//! at once; a Barrier's transfers carry 0 bytes, and so do individual transfers that MPICH
//! posts with a zero count (e.g. a ring step carrying an empty chunk). The caller maps a
//! 0-byte transfer to the smallest message it can inject (one flit).
//!
//! **What a transfer carries** ([`Transfer::blocks`]) is given so that the schedules can
//! be checked for what they compute, not only for who talks to whom: see [`Blocks`] for
//! each collective's block numbering. The caller needs only `peer` and `bytes`.
//!
//! Not here: decoding DUMPI records ([`crate::trace::dumpi`]), matching MPI calls and building
//! message dependencies ([`crate::mpi_semantics::matching`]), replaying (`experiments::replay`). Communicators are
//! given by their size only; mapping communicator ranks to nodes is the caller's job.

use crate::foundation::error::{Error, Result};
use std::fmt;
use std::str::FromStr;
use std::sync::Arc;

fn invalid(msg: impl Into<String>) -> Error {
    Error::Trace(msg.into())
}

// ---------------------------------------------------------------------------------------
// What is called

/// An MPI collective, with its root where the call has one (a communicator-local rank).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Collective {
    /// MPI_Barrier.
    Barrier,
    /// MPI_Bcast.
    Bcast {
        /// The rank that has the data.
        root: u32,
    },
    /// MPI_Reduce.
    Reduce {
        /// The rank that gets the result.
        root: u32,
    },
    /// MPI_Allreduce.
    Allreduce,
    /// MPI_Gather.
    Gather {
        /// The rank that gathers.
        root: u32,
    },
    /// MPI_Gatherv.
    Gatherv {
        /// The rank that gathers.
        root: u32,
    },
    /// MPI_Scatter.
    Scatter {
        /// The rank that scatters.
        root: u32,
    },
    /// MPI_Scatterv.
    Scatterv {
        /// The rank that scatters.
        root: u32,
    },
    /// MPI_Allgather.
    Allgather,
    /// MPI_Allgatherv.
    Allgatherv,
    /// MPI_Alltoall.
    Alltoall,
    /// MPI_Alltoallv.
    Alltoallv,
    /// MPI_Reduce_scatter (per-rank result sizes).
    ReduceScatter,
    /// MPI_Reduce_scatter_block (equal result sizes).
    ReduceScatterBlock,
    /// MPI_Scan (inclusive prefix reduction).
    Scan,
    /// MPI_Exscan (exclusive prefix reduction).
    Exscan,
}

/// The collectives' names, in [`Collective::index`] order.
const NAMES: [&str; Collective::COUNT] = [
    "barrier",
    "bcast",
    "reduce",
    "allreduce",
    "gather",
    "gatherv",
    "scatter",
    "scatterv",
    "allgather",
    "allgatherv",
    "alltoall",
    "alltoallv",
    "reduce-scatter",
    "reduce-scatter-block",
    "scan",
    "exscan",
];

/// The algorithms offered for each collective, in [`Collective::index`] order; the first
/// is the one a reader of MPICH would call the usual one.
const OFFERED: [&[Algorithm]; Collective::COUNT] = {
    use Algorithm::*;
    [
        &[Dissemination],
        &[Binomial, ScatterRecursiveDoubling, ScatterRing, Linear],
        &[Binomial, Rabenseifner],
        &[RecursiveDoubling, Rabenseifner, Ring],
        &[Binomial, Linear],
        &[Linear],
        &[Binomial, Linear],
        &[Linear],
        &[RecursiveDoubling, Bruck, Ring],
        &[RecursiveDoubling, Bruck, Ring],
        &[Bruck, Scattered, Pairwise, Linear],
        &[Scattered, Pairwise, Linear],
        &[
            RecursiveHalving,
            Pairwise,
            RecursiveDoubling,
            NonCommutative,
        ],
        &[
            RecursiveHalving,
            Pairwise,
            RecursiveDoubling,
            NonCommutative,
        ],
        &[RecursiveDoubling],
        &[RecursiveDoubling],
    ]
};

impl Collective {
    /// How many kinds of collective there are.
    pub const COUNT: usize = 16;

    /// A dense index (0..[`Collective::COUNT`]) of the kind, root ignored.
    pub fn index(&self) -> usize {
        match self {
            Collective::Barrier => 0,
            Collective::Bcast { .. } => 1,
            Collective::Reduce { .. } => 2,
            Collective::Allreduce => 3,
            Collective::Gather { .. } => 4,
            Collective::Gatherv { .. } => 5,
            Collective::Scatter { .. } => 6,
            Collective::Scatterv { .. } => 7,
            Collective::Allgather => 8,
            Collective::Allgatherv => 9,
            Collective::Alltoall => 10,
            Collective::Alltoallv => 11,
            Collective::ReduceScatter => 12,
            Collective::ReduceScatterBlock => 13,
            Collective::Scan => 14,
            Collective::Exscan => 15,
        }
    }

    /// The kind's name as flags spell it (`bcast`, `reduce-scatter`, ...).
    pub fn name(&self) -> &'static str {
        NAMES[self.index()]
    }

    /// The root, for the collectives that have one.
    pub fn root(&self) -> Option<u32> {
        match *self {
            Collective::Bcast { root }
            | Collective::Reduce { root }
            | Collective::Gather { root }
            | Collective::Gatherv { root }
            | Collective::Scatter { root }
            | Collective::Scatterv { root } => Some(root),
            _ => None,
        }
    }

    /// The algorithms this module offers for the collective (never `Auto`).
    pub fn algorithms(&self) -> &'static [Algorithm] {
        OFFERED[self.index()]
    }

    /// Whether the collective combines data with an operation (its [`Op`] matters).
    pub fn reduces(&self) -> bool {
        matches!(
            self,
            Collective::Reduce { .. }
                | Collective::Allreduce
                | Collective::ReduceScatter
                | Collective::ReduceScatterBlock
                | Collective::Scan
                | Collective::Exscan
        )
    }
}

impl fmt::Display for Collective {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.root() {
            Some(root) => write!(f, "{} (root {root})", self.name()),
            None => f.write_str(self.name()),
        }
    }
}

/// How a collective is carried out.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Algorithm {
    /// MPICH's default choice by message size and communicator size ([`Tuning`]).
    Auto,
    /// The root talks to every rank directly (MPICH's gatherv/scatterv); for alltoall,
    /// every transfer posted at once (MPICH's scattered algorithm without throttling).
    Linear,
    /// Binomial tree (bcast, reduce, gather, scatter).
    Binomial,
    /// Recursive doubling: exchange with rank ⊕ 2^k (allreduce, allgather, scan, exscan,
    /// and MPICH's general reduce-scatter).
    RecursiveDoubling,
    /// Recursive halving (reduce-scatter, commutative operations).
    RecursiveHalving,
    /// Ring: p−1 steps to the right neighbour (allgather, allreduce).
    Ring,
    /// Pairwise exchange: p−1 steps, one peer each (alltoall, reduce-scatter).
    Pairwise,
    /// Bruck's algorithm: ⌈log₂ p⌉ steps at distance 2^k (allgather, alltoall).
    Bruck,
    /// Dissemination barrier: ⌈log₂ p⌉ rounds at distance 2^k.
    Dissemination,
    /// Bcast as a binomial scatter of the buffer then a recursive-doubling allgather
    /// (p a power of two).
    ScatterRecursiveDoubling,
    /// Bcast as a binomial scatter of the buffer then a ring allgather.
    ScatterRing,
    /// Rabenseifner: reduce-scatter by recursive halving, then allgather (allreduce) or
    /// gather (reduce) by recursive doubling; commutative operations.
    Rabenseifner,
    /// Alltoall(v) as nonblocking sends and receives posted in batches of
    /// [`Tuning::alltoall_throttle`] peers.
    Scattered,
    /// MPICH's reduce-scatter for non-commutative operations: recursive halving over
    /// blocks in bit-reversed order (p a power of two, equal blocks).
    NonCommutative,
}

impl Algorithm {
    /// Every algorithm, `Auto` first.
    pub const ALL: [Algorithm; 14] = [
        Algorithm::Auto,
        Algorithm::Linear,
        Algorithm::Binomial,
        Algorithm::RecursiveDoubling,
        Algorithm::RecursiveHalving,
        Algorithm::Ring,
        Algorithm::Pairwise,
        Algorithm::Bruck,
        Algorithm::Dissemination,
        Algorithm::ScatterRecursiveDoubling,
        Algorithm::ScatterRing,
        Algorithm::Rabenseifner,
        Algorithm::Scattered,
        Algorithm::NonCommutative,
    ];

    /// The name flags use (`recursive-doubling`, ...).
    pub fn name(self) -> &'static str {
        match self {
            Algorithm::Auto => "auto",
            Algorithm::Linear => "linear",
            Algorithm::Binomial => "binomial",
            Algorithm::RecursiveDoubling => "recursive-doubling",
            Algorithm::RecursiveHalving => "recursive-halving",
            Algorithm::Ring => "ring",
            Algorithm::Pairwise => "pairwise",
            Algorithm::Bruck => "bruck",
            Algorithm::Dissemination => "dissemination",
            Algorithm::ScatterRecursiveDoubling => "scatter-recursive-doubling-allgather",
            Algorithm::ScatterRing => "scatter-ring-allgather",
            Algorithm::Rabenseifner => "rabenseifner",
            Algorithm::Scattered => "scattered",
            Algorithm::NonCommutative => "noncommutative",
        }
    }
}

impl fmt::Display for Algorithm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Lower case, `_` read as `-`, so that MPICH's cvar spellings are accepted too.
fn normalise(s: &str) -> String {
    s.trim().to_ascii_lowercase().replace('_', "-")
}

impl FromStr for Algorithm {
    type Err = Error;

    /// The names of [`Algorithm::name`], and MPICH's names for the same algorithms
    /// (`binomial-tree`, `brucks`, `scatter-rd-allgather`, `reduce-scatter-allgather`, ...).
    fn from_str(s: &str) -> Result<Self> {
        let n = normalise(s);
        if let Some(a) = Algorithm::ALL.iter().find(|a| a.name() == n) {
            return Ok(*a);
        }
        Ok(match n.as_str() {
            "binomial-tree" | "tree" => Algorithm::Binomial,
            "rd" => Algorithm::RecursiveDoubling,
            "brucks" => Algorithm::Bruck,
            "scatter-rd-allgather" | "scatter-rd" => Algorithm::ScatterRecursiveDoubling,
            "scatter-ring" => Algorithm::ScatterRing,
            "reduce-scatter-allgather" | "reduce-scatter-gather" => Algorithm::Rabenseifner,
            "non-commutative" => Algorithm::NonCommutative,
            _ => {
                let names: Vec<&str> = Algorithm::ALL.iter().map(|a| a.name()).collect();
                return Err(Error::Arg(format!(
                    "unknown collective algorithm {s:?}; known: {}",
                    names.join(", ")
                )));
            }
        })
    }
}

/// An algorithm per kind of collective, as a flag gives them:
/// `bcast=binomial,allreduce=ring` (unnamed collectives stay `auto`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Choices([Algorithm; Collective::COUNT]);

impl Default for Choices {
    fn default() -> Self {
        Choices([Algorithm::Auto; Collective::COUNT])
    }
}

impl Choices {
    /// The algorithm chosen for `c`'s kind.
    pub fn get(&self, c: &Collective) -> Algorithm {
        self.0[c.index()]
    }

    /// Chooses `alg` for the collective named `kind` (see [`Collective::name`]); refuses an
    /// unknown name and an algorithm the collective does not offer.
    pub fn set(&mut self, kind: &str, alg: Algorithm) -> Result<()> {
        let k = normalise(kind);
        let Some(i) = NAMES.iter().position(|n| *n == k) else {
            return Err(Error::Arg(format!(
                "unknown collective {kind:?}; known: {}",
                NAMES.join(", ")
            )));
        };
        if alg != Algorithm::Auto && !OFFERED[i].contains(&alg) {
            let names: Vec<&str> = OFFERED[i].iter().map(|a| a.name()).collect();
            return Err(Error::Arg(format!(
                "{alg} is not an algorithm for {}; it offers auto, {}",
                NAMES[i],
                names.join(", ")
            )));
        }
        self.0[i] = alg;
        Ok(())
    }
}

impl FromStr for Choices {
    type Err = Error;

    fn from_str(s: &str) -> Result<Self> {
        let mut c = Choices::default();
        for item in s.split(',').map(str::trim).filter(|i| !i.is_empty()) {
            let Some((kind, alg)) = item.split_once('=') else {
                return Err(Error::Arg(format!(
                    "collective algorithm {item:?} is not COLLECTIVE=ALGORITHM (e.g. bcast=binomial)"
                )));
            };
            c.set(kind, alg.parse()?)?;
        }
        Ok(c)
    }
}

impl fmt::Display for Choices {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut first = true;
        for (i, a) in self.0.iter().enumerate() {
            if *a != Algorithm::Auto {
                if !first {
                    f.write_str(",")?;
                }
                write!(f, "{}={a}", NAMES[i])?;
                first = false;
            }
        }
        if first {
            f.write_str("auto")?;
        }
        Ok(())
    }
}

/// How many bytes a collective moves, as the call records them (count × datatype size).
///
/// | collective | sizes |
/// |---|---|
/// | Barrier | ignored |
/// | Bcast, Reduce, Allreduce, Scan, Exscan | `Uniform(bytes of the buffer)` |
/// | Gather, Scatter, Allgather, Alltoall | `Uniform(bytes of one rank's block)` |
/// | ReduceScatterBlock | `Uniform(bytes of each rank's result)` |
/// | Gatherv, Scatterv, Allgatherv, ReduceScatter | `PerRank(bytes of rank i's block)`, or `Uniform` |
/// | Alltoallv | `Matrix(bytes rank src sends to rank dst)`, or `Uniform` |
///
/// The sizes describe the whole call as all ranks agree on it (e.g. the root's recvcounts
/// of a gatherv), so that every rank's schedule is built from the same numbers.
#[derive(Clone, Copy)]
pub enum Sizes<'a> {
    /// The same number of bytes everywhere.
    Uniform(u64),
    /// Bytes of each rank's block (length p).
    PerRank(&'a [u64]),
    /// Bytes sent from `src` to `dst`, asked lazily (alltoallv: the p² table need not
    /// exist).
    Matrix(&'a (dyn Fn(u32, u32) -> u64 + Sync)),
}

impl fmt::Debug for Sizes<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Sizes::Uniform(b) => write!(f, "Uniform({b})"),
            Sizes::PerRank(v) => write!(f, "PerRank({} ranks)", v.len()),
            Sizes::Matrix(_) => f.write_str("Matrix(..)"),
        }
    }
}

impl Sizes<'_> {
    fn kind(&self) -> &'static str {
        match self {
            Sizes::Uniform(_) => "Uniform",
            Sizes::PerRank(_) => "PerRank",
            Sizes::Matrix(_) => "Matrix",
        }
    }
}

/// The reduction operation, as far as the algorithms care (ignored by collectives that do
/// not reduce).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Op {
    /// Commutative (every predefined MPI operation is).
    pub commutative: bool,
    /// A predefined operation (MPI_SUM, ...) rather than one from MPI_Op_create: MPICH
    /// uses Rabenseifner's algorithms only for these.
    pub builtin: bool,
    /// Bytes of one element of the datatype: the algorithms that split the buffer split
    /// it between elements, and MPICH's choice compares the element count with p.
    pub elem_bytes: u64,
}

impl Op {
    /// A predefined operation on elements of `elem_bytes` bytes.
    pub const fn builtin(elem_bytes: u64) -> Op {
        Op {
            commutative: true,
            builtin: true,
            elem_bytes,
        }
    }

    /// A user-defined operation on elements of `elem_bytes` bytes.
    pub const fn user(commutative: bool, elem_bytes: u64) -> Op {
        Op {
            commutative,
            builtin: false,
            elem_bytes,
        }
    }
}

impl Default for Op {
    /// A predefined operation on bytes (elements of 1 byte).
    fn default() -> Self {
        Op::builtin(1)
    }
}

// ---------------------------------------------------------------------------------------
// MPICH's default choice

/// The thresholds of MPICH's default algorithm choice (`Auto`). Every size is an
/// inclusive maximum in bytes ("up to"), so MPICH's strict `<` thresholds appear as the
/// cvar's value minus one. docs/collectives.md gives the rules they enter.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Tuning {
    /// Bcast: binomial tree up to this many bytes.
    pub bcast_short_max: u64,
    /// Bcast: scatter + recursive-doubling allgather up to this many bytes when p is a
    /// power of two; scatter + ring above.
    pub bcast_long_max: u64,
    /// Bcast: binomial tree whatever the size below this many ranks.
    pub bcast_min_procs: u32,
    /// Allreduce: recursive doubling up to this many bytes.
    pub allreduce_short_max: u64,
    /// Reduce: binomial tree up to this many bytes.
    pub reduce_short_max: u64,
    /// Allgather(v): recursive doubling up to this many bytes in all (p a power of two).
    pub allgather_long_max: u64,
    /// Allgather(v): Bruck up to this many bytes in all (otherwise ring).
    pub allgather_short_max: u64,
    /// Alltoall: Bruck up to this many bytes per block (with p ≥ `alltoall_bruck_min_procs`).
    pub alltoall_short_max: u64,
    /// Alltoall: scattered up to this many bytes per block (otherwise pairwise).
    pub alltoall_medium_max: u64,
    /// Alltoall: Bruck only from this many ranks on.
    pub alltoall_bruck_min_procs: u32,
    /// Scattered alltoall(v): peers per batch (MPIR_CVAR_ALLTOALL_THROTTLE; 0 = all).
    pub alltoall_throttle: u32,
    /// Reduce-scatter(-block), commutative: recursive halving up to this many bytes in
    /// all (otherwise pairwise).
    pub reduce_scatter_long_max: u64,
}

impl Tuning {
    /// MPICH 3's cvar defaults, as its `MPIR_*_intra_auto` functions apply them
    /// (src/mpi/coll/*/*.c of v3.3; the same numbers in v3.2's single-file collectives).
    pub const MPICH3: Tuning = Tuning {
        bcast_short_max: 12288 - 1,
        bcast_long_max: 524288 - 1,
        bcast_min_procs: 8,
        allreduce_short_max: 2048,
        reduce_short_max: 2048,
        allgather_long_max: 524288 - 1,
        allgather_short_max: 81920 - 1,
        alltoall_short_max: 256,
        alltoall_medium_max: 32768,
        alltoall_bruck_min_procs: 8,
        alltoall_throttle: 32,
        reduce_scatter_long_max: 524288 - 1,
    };

    /// MPICH 3.4 to 5's selection file (maint/tuning/coll/mpir/generic.json, flat
    /// communicators): bcast's thresholds become inclusive and allreduce's short limit is
    /// 8 bytes.
    pub const MPICH4: Tuning = Tuning {
        bcast_short_max: 12288,
        bcast_long_max: 524288,
        allreduce_short_max: 8,
        ..Tuning::MPICH3
    };

    /// The algorithm `alg` stands for: `Auto` resolved by these thresholds, any other
    /// checked to apply (an error says why not).
    pub fn resolve(
        &self,
        c: &Collective,
        alg: Algorithm,
        p: u32,
        sizes: Sizes,
        op: Op,
    ) -> Result<Algorithm> {
        let shape = Shape::new(c, p, sizes, op)?;
        self.resolve_shape(c, alg, &shape, op)
    }

    fn resolve_shape(
        &self,
        c: &Collective,
        alg: Algorithm,
        s: &Shape,
        op: Op,
    ) -> Result<Algorithm> {
        let alg = if alg == Algorithm::Auto {
            self.auto(c, s, op)
        } else {
            alg
        };
        applies(c, alg, s, op)?;
        Ok(alg)
    }

    fn auto(&self, c: &Collective, s: &Shape, op: Op) -> Algorithm {
        use Algorithm::*;
        let p = s.p;
        let pof2 = p.is_power_of_two();
        let fits_rabenseifner = op.builtin && op.commutative && s.count >= floor_pof2(p);
        match c {
            Collective::Barrier => Dissemination,
            Collective::Bcast { .. } => {
                if s.n <= self.bcast_short_max || p < u64::from(self.bcast_min_procs) {
                    Binomial
                } else if s.n <= self.bcast_long_max && pof2 {
                    ScatterRecursiveDoubling
                } else {
                    ScatterRing
                }
            }
            Collective::Reduce { .. } => {
                if s.n > self.reduce_short_max && fits_rabenseifner {
                    Rabenseifner
                } else {
                    Binomial
                }
            }
            Collective::Allreduce => {
                if s.n > self.allreduce_short_max && fits_rabenseifner {
                    Rabenseifner
                } else {
                    RecursiveDoubling
                }
            }
            Collective::Gather { .. } | Collective::Scatter { .. } => Binomial,
            Collective::Gatherv { .. } | Collective::Scatterv { .. } => Linear,
            Collective::Allgather | Collective::Allgatherv => {
                if s.total <= self.allgather_long_max && pof2 {
                    RecursiveDoubling
                } else if s.total <= self.allgather_short_max {
                    Bruck
                } else {
                    Ring
                }
            }
            Collective::Alltoall => {
                if s.n <= self.alltoall_short_max && p >= u64::from(self.alltoall_bruck_min_procs) {
                    Bruck
                } else if s.n <= self.alltoall_medium_max {
                    Scattered
                } else {
                    Pairwise
                }
            }
            Collective::Alltoallv => Scattered,
            Collective::ReduceScatter | Collective::ReduceScatterBlock => {
                if op.commutative {
                    if s.total <= self.reduce_scatter_long_max {
                        RecursiveHalving
                    } else {
                        Pairwise
                    }
                } else if pof2 && s.regular {
                    NonCommutative
                } else {
                    RecursiveDoubling
                }
            }
            Collective::Scan | Collective::Exscan => RecursiveDoubling,
        }
    }
}

impl Default for Tuning {
    /// [`Tuning::MPICH3`].
    fn default() -> Self {
        Tuning::MPICH3
    }
}

/// What `Auto` picks for this call under MPICH 3's defaults ([`Tuning::MPICH3`]), or the
/// given algorithm checked to apply.
pub fn resolve(c: &Collective, alg: Algorithm, p: u32, sizes: Sizes, op: Op) -> Result<Algorithm> {
    Tuning::default().resolve(c, alg, p, sizes, op)
}

/// Refuses an algorithm that does not carry out `c` on this communicator, saying why.
fn applies(c: &Collective, alg: Algorithm, s: &Shape, op: Op) -> Result<()> {
    use Algorithm::*;
    if !c.algorithms().contains(&alg) {
        let names: Vec<&str> = c.algorithms().iter().map(|a| a.name()).collect();
        return Err(invalid(format!(
            "{alg} is not an algorithm for {}; it offers auto, {}",
            c.name(),
            names.join(", ")
        )));
    }
    let no = |why: &str| {
        Err(invalid(format!(
            "{alg} {} on {} ranks: {why}",
            c.name(),
            s.p
        )))
    };
    let pof2 = s.p.is_power_of_two();
    let splits = matches!(
        (c, alg),
        (
            Collective::Reduce { .. } | Collective::Allreduce,
            Rabenseifner
        ) | (Collective::Allreduce, Ring)
    );
    if splits && !s.empty && !s.n.is_multiple_of(op.elem_bytes) {
        return no(&format!(
            "{} bytes are not whole {}-byte elements, and the algorithm splits the buffer between elements",
            s.n, op.elem_bytes
        ));
    }
    match (c, alg) {
        (Collective::Allgather | Collective::Allgatherv, RecursiveDoubling)
        | (Collective::Bcast { .. }, ScatterRecursiveDoubling)
            if !pof2 =>
        {
            no("needs a power-of-two number of ranks (MPICH asserts it)")
        }
        (_, Rabenseifner) if !op.commutative => no("needs a commutative operation"),
        (_, Rabenseifner) if !s.empty && s.count < floor_pof2(s.p) => no(&format!(
            "needs at least {} elements (the largest power of two ≤ p), the buffer has {}",
            floor_pof2(s.p),
            s.count
        )),
        (Collective::Allreduce, Ring) if !op.commutative => {
            no("needs a commutative operation (ring order is not rank order)")
        }
        (
            Collective::ReduceScatter | Collective::ReduceScatterBlock,
            RecursiveHalving | Pairwise,
        ) if !op.commutative => no("needs a commutative operation"),
        (Collective::ReduceScatter | Collective::ReduceScatterBlock, NonCommutative)
            if !pof2 || !s.regular =>
        {
            no("needs a power-of-two number of ranks and equal blocks")
        }
        _ => Ok(()),
    }
}

/// The validated facts about a call that the choice and the schedules need.
#[derive(Clone, Debug)]
struct Shape {
    p: u64,
    /// Bytes of the buffer (buffer collectives) or of one block (uniform sizes).
    n: u64,
    /// Bytes of all blocks together (= n for buffer collectives).
    total: u64,
    /// Elements in the buffer (reductions over one buffer).
    count: u64,
    /// Prefix sums of per-rank sizes, p + 1 of them.
    prefix: Option<Arc<[u64]>>,
    /// All blocks equal.
    regular: bool,
    /// No data: no transfers (except for Barrier).
    empty: bool,
}

impl Shape {
    fn new(c: &Collective, p: u32, sizes: Sizes, op: Op) -> Result<Shape> {
        if p == 0 {
            return Err(invalid(format!("{}: a communicator of 0 ranks", c.name())));
        }
        if let Some(root) = c.root() {
            if root >= p {
                return Err(invalid(format!(
                    "{}: root {root} is not a rank of a communicator of {p}",
                    c.name()
                )));
            }
        }
        if c.reduces() && op.elem_bytes == 0 {
            return Err(invalid(format!("{}: elements of 0 bytes", c.name())));
        }
        let p64 = u64::from(p);
        let wrong = |takes: &str| {
            Err(invalid(format!(
                "{} takes {takes} sizes, not {}",
                c.name(),
                sizes.kind()
            )))
        };
        let mut s = Shape {
            p: p64,
            n: 0,
            total: 0,
            count: 0,
            prefix: None,
            regular: true,
            empty: false,
        };
        match c {
            Collective::Barrier => {}
            Collective::Bcast { .. }
            | Collective::Reduce { .. }
            | Collective::Allreduce
            | Collective::Scan
            | Collective::Exscan => match sizes {
                Sizes::Uniform(n) => {
                    s.n = n;
                    s.total = n;
                    s.count = n / op.elem_bytes.max(1);
                }
                _ => return wrong("Uniform"),
            },
            Collective::Gather { .. }
            | Collective::Scatter { .. }
            | Collective::Allgather
            | Collective::Alltoall
            | Collective::ReduceScatterBlock
            | Collective::Gatherv { .. }
            | Collective::Scatterv { .. }
            | Collective::Allgatherv
            | Collective::ReduceScatter
            | Collective::Alltoallv => match sizes {
                Sizes::Uniform(b) => {
                    s.n = b;
                    s.total = b.checked_mul(p64).ok_or_else(|| {
                        invalid(format!(
                            "{}: {p} blocks of {b} bytes exceed 2^64 bytes",
                            c.name()
                        ))
                    })?;
                }
                Sizes::PerRank(v)
                    if matches!(
                        c,
                        Collective::Gatherv { .. }
                            | Collective::Scatterv { .. }
                            | Collective::Allgatherv
                            | Collective::ReduceScatter
                    ) =>
                {
                    if v.len() != p as usize {
                        return Err(invalid(format!(
                            "{}: {} per-rank sizes for a communicator of {p} ranks",
                            c.name(),
                            v.len()
                        )));
                    }
                    let mut prefix = Vec::with_capacity(v.len() + 1);
                    let mut sum = 0u64;
                    prefix.push(0);
                    for &b in v {
                        sum = sum.checked_add(b).ok_or_else(|| {
                            invalid(format!("{}: the blocks exceed 2^64 bytes", c.name()))
                        })?;
                        prefix.push(sum);
                    }
                    s.total = sum;
                    s.regular = v.windows(2).all(|w| w[0] == w[1]);
                    s.n = v[0];
                    s.prefix = Some(prefix.into());
                }
                Sizes::Matrix(_) if matches!(c, Collective::Alltoallv) => {
                    // Unknown without asking p² entries; the schedules skip empty pairs.
                    s.total = u64::MAX;
                    s.regular = false;
                }
                _ => {
                    return wrong(match c {
                        Collective::Alltoallv => "Uniform or Matrix",
                        Collective::Gatherv { .. }
                        | Collective::Scatterv { .. }
                        | Collective::Allgatherv
                        | Collective::ReduceScatter => "Uniform or PerRank",
                        _ => "Uniform",
                    })
                }
            },
        }
        s.empty = p == 1 || (!matches!(c, Collective::Barrier) && s.total == 0);
        Ok(s)
    }
}

// ---------------------------------------------------------------------------------------
// Schedules

/// Which data a transfer carries, in the collective's numbering of blocks:
///
/// | collective, algorithm | blocks |
/// |---|---|
/// | Barrier | `None` (the receiver learns what the sender knew) |
/// | Bcast | p chunks of ⌈n/p⌉ bytes (the last ones shorter or empty), numbered from the root: chunk j goes to rank root+j in the scatter algorithms; binomial and linear send all p |
/// | Reduce, Allreduce (binomial, recursive doubling), Scan, Exscan | 1 block, the buffer |
/// | Reduce, Allreduce (Rabenseifner) | p′ segments (p′ the largest power of two ≤ p), MPICH's split: the first count mod p′ get one element more |
/// | Allreduce (ring) | p segments of ⌈count/p⌉ elements (the last ones shorter or empty) |
/// | Gather(v), Scatter(v), Allgather(v), Reduce-scatter(-block) | p blocks, block i being rank i's |
/// | Alltoall(v), direct algorithms | `Range { first: receiver, count: 1 }`: the sender's block for the receiver |
/// | Alltoall (Bruck) | `Masked`: positions of Bruck's rotated buffer (position i of rank r starts as r's block for r+i) |
/// | Reduce-scatter (noncommutative) | `Masked` over the p blocks |
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Blocks {
    /// No data.
    None,
    /// Blocks first, first+1, … first+count−1, modulo the number of blocks.
    Range {
        /// The first block.
        first: u32,
        /// How many.
        count: u32,
    },
    /// The blocks i with `i & mask == value`.
    Masked {
        /// Bits that select.
        mask: u32,
        /// Their value.
        value: u32,
    },
}

/// One send or receive.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Transfer {
    /// The other rank (communicator-local).
    pub peer: u32,
    /// Bytes carried (0 for Barrier and for MPICH's zero-count sends).
    pub bytes: u64,
    /// Which data (see [`Blocks`]); the same on both sides of a transfer.
    pub blocks: Blocks,
    /// The receiver reduces the blocks into what it holds (otherwise it stores them).
    pub reduce: bool,
    /// The sender forwards what it last received into these blocks rather than what it
    /// has accumulated (MPICH's general reduce-scatter on non-power-of-two ranks).
    pub forwarded: bool,
}

/// One step of one rank's schedule: its sends (in the order posted) and receives, posted
/// together. The rank's next step starts when every receive of this and earlier steps is
/// complete.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Step {
    /// Sends, in the order MPICH posts them.
    pub sends: Vec<Transfer>,
    /// Receives.
    pub recvs: Vec<Transfer>,
}

impl Step {
    /// Empties the step, keeping its buffers.
    pub fn clear(&mut self) {
        self.sends.clear();
        self.recvs.clear();
    }

    /// No transfer.
    pub fn is_empty(&self) -> bool {
        self.sends.is_empty() && self.recvs.is_empty()
    }
}

/// One collective call, validated and with its algorithm resolved, ready to give each
/// rank's schedule. Building it costs O(p) only for per-rank sizes (their prefix sums,
/// shared by every rank's schedule); cloning it is cheap.
#[derive(Clone, Debug)]
pub struct Plan<'a> {
    coll: Collective,
    alg: Algorithm,
    sizes: Sizes<'a>,
    op: Op,
    shape: Shape,
    throttle: u64,
}

impl<'a> Plan<'a> {
    /// Plans `c` on `p` ranks with MPICH 3's defaults for `Auto` ([`Tuning::MPICH3`]).
    pub fn new(c: &Collective, alg: Algorithm, p: u32, sizes: Sizes<'a>, op: Op) -> Result<Self> {
        Plan::with_tuning(&Tuning::default(), c, alg, p, sizes, op)
    }

    /// Plans `c` on `p` ranks; `Auto` resolves by `t`, whose throttle also sets the batch
    /// of the scattered alltoall.
    pub fn with_tuning(
        t: &Tuning,
        c: &Collective,
        alg: Algorithm,
        p: u32,
        sizes: Sizes<'a>,
        op: Op,
    ) -> Result<Self> {
        let shape = Shape::new(c, p, sizes, op)?;
        let alg = t.resolve_shape(c, alg, &shape, op)?;
        let throttle = match (alg, t.alltoall_throttle) {
            (Algorithm::Linear, _) | (_, 0) => shape.p,
            (_, b) => u64::from(b),
        };
        Ok(Plan {
            coll: *c,
            alg,
            sizes,
            op,
            shape,
            throttle,
        })
    }

    /// The algorithm the plan runs (never `Auto`).
    pub fn algorithm(&self) -> Algorithm {
        self.alg
    }

    /// The collective.
    pub fn collective(&self) -> Collective {
        self.coll
    }

    /// Ranks in the communicator.
    pub fn ranks(&self) -> u32 {
        self.shape.p as u32
    }

    /// The schedule of `rank`, streamed.
    pub fn rank(&self, rank: u32) -> Result<RankSchedule<'a>> {
        if u64::from(rank) >= self.shape.p {
            return Err(invalid(format!(
                "{}: rank {rank} is not in a communicator of {}",
                self.coll.name(),
                self.shape.p
            )));
        }
        Ok(RankSchedule {
            plan: self.clone(),
            r: u64::from(rank),
            phase: 0,
            i: 0,
            nr: 0,
            newroot: 0,
            sidx: 0,
            ridx: 0,
            lidx: 0,
            tmask: 0,
            k: 0,
            done: self.shape.empty,
        })
    }

    fn p(&self) -> u64 {
        self.shape.p
    }

    /// Bytes of block i of a p-block collective.
    fn blk(&self, i: u64) -> u64 {
        match &self.shape.prefix {
            Some(pre) => pre[i as usize + 1] - pre[i as usize],
            None => self.shape.n,
        }
    }

    /// Bytes of the p-block collective's blocks first..first+count (cyclic).
    fn span(&self, first: u64, count: u64) -> u64 {
        let p = self.p();
        match &self.shape.prefix {
            None => count * self.shape.n, // ≤ p·n, checked when planned
            Some(pre) => {
                let a = first as usize;
                let e = first + count;
                if e <= p {
                    pre[e as usize] - pre[a]
                } else {
                    (pre[p as usize] - pre[a]) + pre[(e - p) as usize]
                }
            }
        }
    }

    /// Bytes of bcast chunks a..b (root-relative, not wrapping).
    fn chunks(&self, a: u64, b: u64) -> u64 {
        let n = self.shape.n;
        let ss = n.div_ceil(self.p());
        n.min(b.saturating_mul(ss)) - n.min(a.saturating_mul(ss))
    }

    /// Bytes of Rabenseifner's segments a..b out of `pof2`.
    fn segments(&self, a: u64, b: u64, pof2: u64) -> u64 {
        let count = self.shape.count;
        let (q, rm) = (count / pof2, count % pof2);
        ((b - a) * q + (b.min(rm) - a.min(rm))) * self.op.elem_bytes
    }

    /// Bytes of the ring allreduce's segment i.
    fn ring_segment(&self, i: u64) -> u64 {
        let count = self.shape.count;
        let c = count.div_ceil(self.p());
        c.min(count - count.min(i.saturating_mul(c))) * self.op.elem_bytes
    }

    /// Bytes sent from `src` to `dst` in an alltoall(v).
    fn pair(&self, src: u64, dst: u64) -> u64 {
        match self.sizes {
            Sizes::Matrix(f) => f(src as u32, dst as u32),
            _ => self.shape.n,
        }
    }
}

/// Streams one rank's [`Step`]s; O(1) state. [`RankSchedule::next_into`] refills a
/// caller's `Step` (no allocation once its vectors have grown); the `Iterator` allocates
/// a new `Step` per item.
#[derive(Clone, Debug)]
pub struct RankSchedule<'a> {
    plan: Plan<'a>,
    r: u64,
    phase: u8,
    /// Loop counter of the phase.
    i: u64,
    /// Rank among the power of two that remain after folding (−1: folded out).
    nr: i64,
    /// Rabenseifner's reduce: the root's rank among those.
    newroot: u64,
    /// MPICH's send_idx, recv_idx, last_idx (segment indices).
    sidx: u64,
    ridx: u64,
    lidx: u64,
    /// General reduce-scatter: the tmp_mask of the forwarding rounds (0: none pending),
    /// and their tree level.
    tmask: u64,
    k: u64,
    done: bool,
}

fn tx(peer: u64, bytes: u64, blocks: Blocks, reduce: bool) -> Transfer {
    Transfer {
        peer: peer as u32,
        bytes,
        blocks,
        reduce,
        forwarded: false,
    }
}

/// Blocks first..first+count modulo `nb`.
fn range(first: u64, count: u64, nb: u64) -> Blocks {
    Blocks::Range {
        first: (first % nb) as u32,
        count: count as u32,
    }
}

fn lowbit(x: u64) -> u64 {
    x & x.wrapping_neg()
}

/// The masks `m` of the children `rel + m` of relative rank `rel` in MPICH's binomial tree
/// of `p` ranks (rooted at 0), farthest subtree first: the order MPICH sends down the tree
/// in (bcast, scatter). A child's subtree is `m` ranks wide (fewer at the end).
fn children_far_first(rel: u64, p: u64) -> impl Iterator<Item = u64> {
    let top = if rel == 0 {
        p.next_power_of_two()
    } else {
        lowbit(rel)
    };
    std::iter::successors(Some(top >> 1), |m| Some(m >> 1))
        .take_while(|&m| m > 0)
        .filter(move |&m| rel + m < p)
}

/// The same children nearest first: the order MPICH receives up the tree in (gather,
/// reduce).
fn children_near_first(rel: u64, p: u64) -> impl Iterator<Item = u64> {
    std::iter::successors(Some(1u64), |m| Some(m << 1))
        .take_while(move |&m| m < p && rel & m == 0)
        .filter(move |&m| rel + m < p)
}

/// The largest power of two ≤ p (p ≥ 1).
fn floor_pof2(p: u64) -> u64 {
    1 << (63 - p.leading_zeros())
}

fn log2(pof2: u64) -> u64 {
    u64::from(pof2.trailing_zeros())
}

/// Blocks i in 0..p with `i & bit != 0` (bit a power of two).
fn with_bit(p: u64, bit: u64) -> u64 {
    (p / (2 * bit)) * bit + (p % (2 * bit)).saturating_sub(bit)
}

impl Iterator for RankSchedule<'_> {
    type Item = Step;

    fn next(&mut self) -> Option<Step> {
        let mut s = Step::default();
        self.next_into(&mut s).then_some(s)
    }
}

impl RankSchedule<'_> {
    /// Writes the next non-empty step into `out` (cleared first); false at the end.
    pub fn next_into(&mut self, out: &mut Step) -> bool {
        out.clear();
        while !self.done {
            self.advance(out);
            if !out.is_empty() {
                return true;
            }
        }
        false
    }

    /// The rank whose schedule this is.
    pub fn rank(&self) -> u32 {
        self.r as u32
    }

    fn p(&self) -> u64 {
        self.plan.p()
    }

    /// Rank relative to `root`.
    fn rel(&self, root: u64) -> u64 {
        (self.r + self.p() - root) % self.p()
    }

    /// One iteration of the algorithm's current phase (it may add nothing).
    fn advance(&mut self, out: &mut Step) {
        use Algorithm as A;
        use Collective as C;
        match (self.plan.coll, self.plan.alg) {
            (C::Barrier, _) => self.dissemination(out),
            (C::Bcast { root }, A::Binomial) => self.bcast_binomial(out, u64::from(root)),
            (C::Bcast { root }, A::Linear) => self.bcast_linear(out, u64::from(root)),
            (C::Bcast { root }, _) => self.bcast_scatter(out, u64::from(root)),
            (C::Reduce { root }, A::Binomial) => self.reduce_binomial(out, u64::from(root)),
            (C::Reduce { root }, _) => self.reduce_rabenseifner(out, u64::from(root)),
            (C::Allreduce, A::RecursiveDoubling) => self.allreduce_rd(out),
            (C::Allreduce, A::Rabenseifner) => self.allreduce_rabenseifner(out),
            (C::Allreduce, _) => self.allreduce_ring(out),
            (C::Gather { root }, A::Binomial) => self.gather_binomial(out, u64::from(root)),
            (C::Scatter { root }, A::Binomial) => self.scatter_binomial(out, u64::from(root)),
            (C::Gather { root } | C::Gatherv { root }, _) => {
                self.linear(out, u64::from(root), true)
            }
            (C::Scatter { root } | C::Scatterv { root }, _) => {
                self.linear(out, u64::from(root), false)
            }
            (C::Allgather | C::Allgatherv, A::RecursiveDoubling) => self.allgather_rd(out),
            (C::Allgather | C::Allgatherv, A::Bruck) => self.allgather_bruck(out),
            (C::Allgather | C::Allgatherv, _) => self.allgather_ring(out),
            (C::Alltoall, A::Bruck) => self.alltoall_bruck(out),
            (C::Alltoall | C::Alltoallv, A::Pairwise) => self.alltoall_pairwise(out),
            (C::Alltoall | C::Alltoallv, _) => self.alltoall_scattered(out),
            (C::ReduceScatter | C::ReduceScatterBlock, A::RecursiveHalving) => self.rs_halving(out),
            (C::ReduceScatter | C::ReduceScatterBlock, A::Pairwise) => self.rs_pairwise(out),
            (C::ReduceScatter | C::ReduceScatterBlock, A::NonCommutative) => {
                self.rs_noncommutative(out)
            }
            (C::ReduceScatter | C::ReduceScatterBlock, _) => self.rs_doubling(out),
            (C::Scan | C::Exscan, _) => self.scan_rd(out),
        }
    }

    // -- barrier --------------------------------------------------------------------

    fn dissemination(&mut self, out: &mut Step) {
        let (p, r) = (self.p(), self.r);
        let Some(mask) = self.next_mask_up(p) else {
            self.done = true;
            return;
        };
        out.sends.push(tx((r + mask) % p, 0, Blocks::None, false));
        out.recvs
            .push(tx((r + p - mask) % p, 0, Blocks::None, false));
    }

    // -- bcast ----------------------------------------------------------------------

    fn bcast_binomial(&mut self, out: &mut Step, root: u64) {
        let p = self.p();
        let n = self.plan.shape.n;
        let rel = self.rel(root);
        let abs = |x: u64| (x + root) % p;
        let all = range(0, p, p);
        if self.phase == 0 {
            self.phase = 1;
            if rel != 0 {
                out.recvs.push(tx(abs(rel - lowbit(rel)), n, all, false));
            }
            return;
        }
        self.done = true;
        // Farthest subtree first, as MPICH sends.
        for mask in children_far_first(rel, p) {
            out.sends.push(tx(abs(rel + mask), n, all, false));
        }
    }

    fn bcast_linear(&mut self, out: &mut Step, root: u64) {
        let p = self.p();
        let n = self.plan.shape.n;
        let all = range(0, p, p);
        self.done = true;
        if self.r == root {
            for rel in 1..p {
                out.sends.push(tx((rel + root) % p, n, all, false));
            }
        } else {
            out.recvs.push(tx(root, n, all, false));
        }
    }

    /// MPICH's scatter of the buffer into p chunks down the binomial tree (chunks and
    /// subtrees with no bytes are skipped by both sides), then the allgather of the chunks
    /// by recursive doubling or ring.
    fn bcast_scatter(&mut self, out: &mut Step, root: u64) {
        let p = self.p();
        let r = self.r;
        let rel = self.rel(root);
        let abs = |x: u64| (x + root) % p;
        match self.phase {
            0 => {
                self.phase = 1;
                if rel != 0 {
                    let m = lowbit(rel);
                    let e = (rel + m).min(p);
                    let bytes = self.plan.chunks(rel, e);
                    if bytes > 0 {
                        out.recvs
                            .push(tx(abs(rel - m), bytes, range(rel, e - rel, p), false));
                    }
                }
            }
            1 => {
                self.phase = 2;
                self.i = if self.plan.alg == Algorithm::ScatterRing {
                    1
                } else {
                    0
                };
                for mask in children_far_first(rel, p) {
                    let c = rel + mask;
                    let e = (c + mask).min(p);
                    let bytes = self.plan.chunks(c, e);
                    if bytes > 0 {
                        out.sends.push(tx(abs(c), bytes, range(c, e - c, p), false));
                    }
                }
            }
            _ if self.plan.alg == Algorithm::ScatterRecursiveDoubling => {
                let Some(mask) = self.next_mask_up(p) else {
                    self.done = true;
                    return;
                };
                let rdst = rel ^ mask;
                let mine = rel & !(mask - 1);
                let theirs = rdst & !(mask - 1);
                let sb = self.plan.chunks(mine, mine + mask);
                let rb = self.plan.chunks(theirs, theirs + mask);
                out.sends
                    .push(tx(abs(rdst), sb, range(mine, mask, p), false));
                out.recvs
                    .push(tx(abs(rdst), rb, range(theirs, mask, p), false));
            }
            _ => {
                let i = self.i;
                if i >= p {
                    self.done = true;
                    return;
                }
                self.i += 1;
                let j = (r + p - (i - 1)) % p;
                let jnext = (r + p - i) % p;
                let (rj, rn) = ((j + p - root) % p, (jnext + p - root) % p);
                let sb = self.plan.chunks(rj, rj + 1);
                let rb = self.plan.chunks(rn, rn + 1);
                out.sends.push(tx((r + 1) % p, sb, range(rj, 1, p), false));
                out.recvs
                    .push(tx((r + p - 1) % p, rb, range(rn, 1, p), false));
            }
        }
    }

    // -- reduce ---------------------------------------------------------------------

    /// MPICH reduces non-commutative operations to rank 0 (so that the tree combines in
    /// rank order) and then sends the result to the root.
    fn reduce_binomial(&mut self, out: &mut Step, root: u64) {
        let p = self.p();
        let n = self.plan.shape.n;
        let commutative = self.plan.op.commutative;
        let lroot = if commutative { root } else { 0 };
        let rel = self.rel(lroot);
        let abs = |x: u64| (x + lroot) % p;
        let one = range(0, 1, 1);
        match self.phase {
            0 => {
                self.phase = 1;
                for mask in children_near_first(rel, p) {
                    out.recvs.push(tx(abs(rel + mask), n, one, true));
                }
            }
            1 => {
                self.phase = 2;
                if rel != 0 {
                    out.sends.push(tx(abs(rel - lowbit(rel)), n, one, true));
                }
            }
            _ => {
                self.done = true;
                if !commutative && root != 0 {
                    if self.r == 0 {
                        out.sends.push(tx(root, n, one, false));
                    } else if self.r == root {
                        out.recvs.push(tx(0, n, one, false));
                    }
                }
            }
        }
    }

    /// Folds a non-power-of-two communicator onto its largest power of two p′: the first
    /// 2·(p − p′) ranks pair up and one of each pair hands its whole buffer to the other.
    /// `even_stays`: reduce keeps the even rank of a pair, allreduce and reduce-scatter
    /// the odd one (MPICH's choice, so that root 0 takes part).
    fn fold(&mut self, out: &mut Step, bytes: u64, blocks: Blocks, even_stays: bool) {
        let p = self.p();
        let r = self.r;
        let pof2 = floor_pof2(p);
        let rem = p - pof2;
        self.sidx = 0;
        self.ridx = 0;
        self.lidx = pof2;
        if r < 2 * rem {
            let leaves = r.is_multiple_of(2) != even_stays;
            if leaves {
                let to = if even_stays { r - 1 } else { r + 1 };
                out.sends.push(tx(to, bytes, blocks, true));
                self.nr = -1;
            } else {
                let from = if even_stays { r + 1 } else { r - 1 };
                out.recvs.push(tx(from, bytes, blocks, true));
                self.nr = (r / 2) as i64;
            }
        } else {
            self.nr = (r - rem) as i64;
        }
    }

    /// The real rank of folded rank `x`.
    fn unfold_rank(&self, x: u64, even_stays: bool) -> u64 {
        let rem = self.p() - floor_pof2(self.p());
        if x < rem {
            2 * x + u64::from(!even_stays)
        } else {
            x + rem
        }
    }

    /// One recursive-halving step of Rabenseifner's reduce-scatter (MPICH's index
    /// arithmetic); false when the phase is over.
    fn rabenseifner_rs(&mut self, out: &mut Step, even_stays: bool) -> bool {
        let pof2 = floor_pof2(self.p());
        if self.nr < 0 {
            return false;
        }
        let Some(mask) = self.next_mask_up(pof2) else {
            return false;
        };
        let nr = self.nr as u64;
        let newdst = nr ^ mask;
        let dst = self.unfold_rank(newdst, even_stays);
        let half = pof2 / (2 * mask);
        let (send, recv) = if nr < newdst {
            self.sidx = self.ridx + half;
            ((self.sidx, self.lidx), (self.ridx, self.sidx))
        } else {
            self.ridx = self.sidx + half;
            ((self.sidx, self.ridx), (self.ridx, self.lidx))
        };
        self.segments_xfer(out, dst, send, recv, true, true);
        self.sidx = self.ridx;
        if (mask << 1) < pof2 {
            self.lidx = self.ridx + pof2 / (mask << 1);
        }
        true
    }

    /// Walks a phase's masks up from bit `i`: the next mask, while below `end`.
    fn next_mask_up(&mut self, end: u64) -> Option<u64> {
        let mask = 1u64 << self.i;
        if mask >= end {
            return None;
        }
        self.i += 1;
        Some(mask)
    }

    /// Walks a phase's masks down from bit `i` (recursive halving, or the doubling that
    /// undoes a halving): the next mask and the partner's rank in the folded
    /// communicator; None once the masks are done or this rank was folded out.
    fn next_mask_down(&mut self) -> Option<(u64, u64)> {
        if self.nr < 0 || self.i == 0 {
            return None;
        }
        self.i -= 1;
        let mask = 1u64 << self.i;
        Some((mask, self.nr as u64 ^ mask))
    }

    /// One step of Rabenseifner's gather phase (recursive doubling, the reduce-scatter
    /// undone) with partner `newdst` at distance `mask`: the segment ranges this rank
    /// sends and receives, the window (`sidx`, `ridx`, `lidx`) doubled towards the
    /// partner's half.
    fn doubling_window(&mut self, newdst: u64, mask: u64, pof2: u64) -> ((u64, u64), (u64, u64)) {
        let half = pof2 / (2 * mask);
        if (self.nr as u64) < newdst {
            if mask != pof2 / 2 {
                self.lidx += half;
            }
            self.ridx = self.sidx + half;
            ((self.sidx, self.ridx), (self.ridx, self.lidx))
        } else {
            self.ridx = self.sidx - half;
            ((self.sidx, self.lidx), (self.ridx, self.sidx))
        }
    }

    fn segments_xfer(
        &self,
        out: &mut Step,
        peer: u64,
        send: (u64, u64),
        recv: (u64, u64),
        reduce: bool,
        both: bool,
    ) {
        let pof2 = floor_pof2(self.p());
        let seg = |(a, b): (u64, u64)| (self.plan.segments(a, b, pof2), range(a, b - a, pof2));
        let (sb, sblk) = seg(send);
        out.sends.push(tx(peer, sb, sblk, reduce));
        if both {
            let (rb, rblk) = seg(recv);
            out.recvs.push(tx(peer, rb, rblk, reduce));
        }
    }

    fn reduce_rabenseifner(&mut self, out: &mut Step, root: u64) {
        let p = self.p();
        let r = self.r;
        let n = self.plan.shape.n;
        let pof2 = floor_pof2(p);
        let rem = p - pof2;
        let odd_root_out = root < 2 * rem && root % 2 == 1;
        match self.phase {
            0 => {
                self.phase = 1;
                self.fold(out, n, range(0, pof2, pof2), true);
            }
            1 => {
                if !self.rabenseifner_rs(out, true) {
                    self.phase = 2;
                }
            }
            2 => {
                self.phase = 3;
                self.i = log2(pof2);
                // An odd root was folded out: newrank 0 hands it its segment and the root
                // takes newrank 0's place in the gather.
                if odd_root_out {
                    let seg0 = self.plan.segments(0, 1, pof2);
                    if r == root {
                        out.recvs.push(tx(0, seg0, range(0, 1, pof2), false));
                        self.nr = 0;
                        self.sidx = 0;
                        self.lidx = 2;
                    } else if self.nr == 0 {
                        out.sends.push(tx(root, seg0, range(0, 1, pof2), false));
                        self.nr = -1;
                    }
                    self.newroot = 0;
                } else if root < 2 * rem {
                    self.newroot = root / 2;
                } else {
                    self.newroot = root - rem;
                }
            }
            _ => {
                let Some((mask, newdst)) = self.next_mask_down() else {
                    self.done = true;
                    return;
                };
                let (j, nr) = (self.i, self.nr as u64);
                let dst = if newdst == 0 && odd_root_out {
                    root
                } else {
                    self.unfold_rank(newdst, true)
                };
                let (send, recv) = self.doubling_window(newdst, mask, pof2);
                if (newdst >> j) == (self.newroot >> j) {
                    self.segments_xfer(out, dst, send, recv, false, false);
                    self.done = true;
                } else {
                    let (a, b) = recv;
                    let bytes = self.plan.segments(a, b, pof2);
                    out.recvs.push(tx(dst, bytes, range(a, b - a, pof2), false));
                }
                if nr > newdst {
                    self.sidx = self.ridx;
                }
            }
        }
    }

    // -- allreduce ------------------------------------------------------------------

    fn allreduce_rd(&mut self, out: &mut Step) {
        let p = self.p();
        let r = self.r;
        let n = self.plan.shape.n;
        let pof2 = floor_pof2(p);
        let rem = p - pof2;
        let one = range(0, 1, 1);
        match self.phase {
            0 => {
                self.phase = 1;
                self.fold(out, n, one, false);
            }
            1 => {
                // A rank folded out (nr < 0) waits for the unfold.
                let next = (self.nr >= 0).then(|| self.next_mask_up(pof2));
                let Some(mask) = next.flatten() else {
                    self.phase = 2;
                    return;
                };
                let dst = self.unfold_rank(self.nr as u64 ^ mask, false);
                out.sends.push(tx(dst, n, one, true));
                out.recvs.push(tx(dst, n, one, true));
            }
            _ => {
                self.done = true;
                self.unfold(out, r, rem, n, one);
            }
        }
    }

    /// The odd rank of a folded pair sends the result back to the even one.
    fn unfold(&self, out: &mut Step, r: u64, rem: u64, bytes: u64, blocks: Blocks) {
        if r < 2 * rem {
            if r % 2 == 1 {
                out.sends.push(tx(r - 1, bytes, blocks, false));
            } else {
                out.recvs.push(tx(r + 1, bytes, blocks, false));
            }
        }
    }

    fn allreduce_rabenseifner(&mut self, out: &mut Step) {
        let p = self.p();
        let r = self.r;
        let n = self.plan.shape.n;
        let pof2 = floor_pof2(p);
        let rem = p - pof2;
        let all = range(0, pof2, pof2);
        match self.phase {
            0 => {
                self.phase = 1;
                self.fold(out, n, all, false);
            }
            1 => {
                if !self.rabenseifner_rs(out, false) {
                    self.phase = 2;
                    self.i = log2(pof2);
                }
            }
            2 => {
                let Some((mask, newdst)) = self.next_mask_down() else {
                    self.phase = 3;
                    return;
                };
                let nr = self.nr as u64;
                let dst = self.unfold_rank(newdst, false);
                let (send, recv) = self.doubling_window(newdst, mask, pof2);
                self.segments_xfer(out, dst, send, recv, false, true);
                if nr > newdst {
                    self.sidx = self.ridx;
                }
            }
            _ => {
                self.done = true;
                self.unfold(out, r, rem, n, all);
            }
        }
    }

    /// MPICH 4's ring allreduce: a ring reduce-scatter of p segments, then the ring
    /// allgatherv of the segments (empty segments are not sent in the second half).
    fn allreduce_ring(&mut self, out: &mut Step) {
        let p = self.p();
        let r = self.r;
        if self.i + 1 >= p {
            if self.phase == 1 {
                self.done = true;
                return;
            }
            self.phase = 1;
            self.i = 0;
        }
        let i = self.i;
        self.i += 1;
        let (right, left) = ((r + 1) % p, (r + p - 1) % p);
        if self.phase == 0 {
            let s = (r + 2 * p - 1 - i) % p;
            let v = (r + 2 * p - 2 - i) % p;
            let (sb, rb) = (self.plan.ring_segment(s), self.plan.ring_segment(v));
            out.sends.push(tx(right, sb, range(s, 1, p), true));
            out.recvs.push(tx(left, rb, range(v, 1, p), true));
        } else {
            let s = (r + p - i) % p;
            let v = (r + 2 * p - 1 - i) % p;
            let (sb, rb) = (self.plan.ring_segment(s), self.plan.ring_segment(v));
            if sb > 0 {
                out.sends.push(tx(right, sb, range(s, 1, p), false));
            }
            if rb > 0 {
                out.recvs.push(tx(left, rb, range(v, 1, p), false));
            }
        }
    }

    // -- gather, scatter ------------------------------------------------------------

    /// Binomial gather and scatter: the transfer with relative rank `peer` of the blocks
    /// of the subtree that relative rank `head` heads, `width` ranks wide (fewer at the
    /// end of the communicator). Gather sends up what scatter receives, and receives from
    /// a child what scatter sends it.
    fn subtree(&self, root: u64, peer: u64, head: u64, width: u64) -> Transfer {
        let p = self.p();
        let abs = |x: u64| (x + root) % p;
        let k = width.min(p - head);
        tx(
            abs(peer),
            k * self.plan.shape.n,
            range(abs(head), k, p),
            false,
        )
    }

    fn gather_binomial(&mut self, out: &mut Step, root: u64) {
        let p = self.p();
        let rel = self.rel(root);
        if self.phase == 0 {
            self.phase = 1;
            for mask in children_near_first(rel, p) {
                let c = rel + mask;
                out.recvs.push(self.subtree(root, c, c, mask));
            }
            return;
        }
        self.done = true;
        if rel != 0 {
            let m = lowbit(rel);
            out.sends.push(self.subtree(root, rel - m, rel, m));
        }
    }

    fn scatter_binomial(&mut self, out: &mut Step, root: u64) {
        let p = self.p();
        let rel = self.rel(root);
        if self.phase == 0 {
            self.phase = 1;
            if rel != 0 {
                let m = lowbit(rel);
                out.recvs.push(self.subtree(root, rel - m, rel, m));
            }
            return;
        }
        self.done = true;
        for mask in children_far_first(rel, p) {
            let c = rel + mask;
            out.sends.push(self.subtree(root, c, c, mask));
        }
    }

    /// The root receives from (gather) or sends to (scatter) every rank with a non-empty
    /// block, all posted at once.
    fn linear(&mut self, out: &mut Step, root: u64, gather: bool) {
        let p = self.p();
        let r = self.r;
        self.done = true;
        if r == root {
            let list = if gather {
                &mut out.recvs
            } else {
                &mut out.sends
            };
            for i in (0..p).filter(|&i| i != root) {
                let b = self.plan.blk(i);
                if b > 0 {
                    list.push(tx(i, b, range(i, 1, p), false));
                }
            }
        } else {
            let b = self.plan.blk(r);
            if b > 0 {
                let list = if gather {
                    &mut out.sends
                } else {
                    &mut out.recvs
                };
                list.push(tx(root, b, range(r, 1, p), false));
            }
        }
    }

    // -- allgather ------------------------------------------------------------------

    fn allgather_rd(&mut self, out: &mut Step) {
        let p = self.p();
        let r = self.r;
        let Some(mask) = self.next_mask_up(p) else {
            self.done = true;
            return;
        };
        let dst = r ^ mask;
        let mine = r & !(mask - 1);
        let theirs = dst & !(mask - 1);
        let (sb, rb) = (self.plan.span(mine, mask), self.plan.span(theirs, mask));
        out.sends.push(tx(dst, sb, range(mine, mask, p), false));
        out.recvs.push(tx(dst, rb, range(theirs, mask, p), false));
    }

    fn allgather_bruck(&mut self, out: &mut Step) {
        let p = self.p();
        let r = self.r;
        let dist = 1u64 << self.i;
        let count = if dist <= p / 2 {
            self.i += 1;
            dist
        } else {
            self.done = true;
            p - dist
        };
        if count == 0 {
            return;
        }
        let src = (r + dist) % p;
        let dst = (r + p - dist) % p;
        let (sb, rb) = (self.plan.span(r, count), self.plan.span(src, count));
        out.sends.push(tx(dst, sb, range(r, count, p), false));
        out.recvs.push(tx(src, rb, range(src, count, p), false));
    }

    /// Block r−i+1 to the right, block r−i from the left; empty blocks are not sent (MPICH's
    /// allgatherv ring skips them; allgather has none).
    fn allgather_ring(&mut self, out: &mut Step) {
        let p = self.p();
        let r = self.r;
        self.i += 1;
        let i = self.i;
        if i >= p {
            self.done = true;
            return;
        }
        let j = (r + p - (i - 1)) % p;
        let jnext = (r + p - i) % p;
        let (sb, rb) = (self.plan.blk(j), self.plan.blk(jnext));
        if sb > 0 {
            out.sends.push(tx((r + 1) % p, sb, range(j, 1, p), false));
        }
        if rb > 0 {
            out.recvs
                .push(tx((r + p - 1) % p, rb, range(jnext, 1, p), false));
        }
    }

    // -- alltoall -------------------------------------------------------------------

    fn alltoall_bruck(&mut self, out: &mut Step) {
        let p = self.p();
        let r = self.r;
        let Some(bit) = self.next_mask_up(p) else {
            self.done = true;
            return;
        };
        let bytes = with_bit(p, bit) * self.plan.shape.n;
        let blocks = Blocks::Masked {
            mask: bit as u32,
            value: bit as u32,
        };
        out.sends.push(tx((r + bit) % p, bytes, blocks, false));
        out.recvs.push(tx((r + p - bit) % p, bytes, blocks, false));
    }

    /// A batch of `throttle` peers per step: receives from r+k, sends to r−k (MPICH's
    /// order; the rank itself, k = 0, is a local copy). Empty pairs are skipped.
    fn alltoall_scattered(&mut self, out: &mut Step) {
        let p = self.p();
        let r = self.r;
        let t = self.plan.throttle;
        let ii = self.i * t;
        if ii >= p {
            self.done = true;
            return;
        }
        self.i += 1;
        let ss = t.min(p - ii);
        for k in ii..ii + ss {
            let src = (r + k) % p;
            let b = self.plan.pair(src, r);
            if src != r && b > 0 {
                out.recvs.push(tx(src, b, range(r, 1, p), false));
            }
        }
        for k in ii..ii + ss {
            let dst = (r + p - k) % p;
            let b = self.plan.pair(r, dst);
            if dst != r && b > 0 {
                out.sends.push(tx(dst, b, range(dst, 1, p), false));
            }
        }
    }

    fn alltoall_pairwise(&mut self, out: &mut Step) {
        let p = self.p();
        let r = self.r;
        self.i += 1;
        let i = self.i;
        if i >= p {
            self.done = true;
            return;
        }
        let (src, dst) = if p.is_power_of_two() {
            (r ^ i, r ^ i)
        } else {
            ((r + p - i) % p, (r + i) % p)
        };
        let (sb, rb) = (self.plan.pair(r, dst), self.plan.pair(src, r));
        // Alltoall sends every block; alltoallv skips the empty ones.
        let every = self.plan.coll == Collective::Alltoall;
        if every || sb > 0 {
            out.sends.push(tx(dst, sb, range(dst, 1, p), false));
        }
        if every || rb > 0 {
            out.recvs.push(tx(src, rb, range(r, 1, p), false));
        }
    }

    // -- reduce-scatter -------------------------------------------------------------

    /// MPICH's recursive halving: fold to p′, halve the blocks of the remaining ranks (a
    /// kept rank does the work of its folded partner too), then hand the partner its
    /// block. Sides with no bytes are skipped.
    fn rs_halving(&mut self, out: &mut Step) {
        let p = self.p();
        let r = self.r;
        let pof2 = floor_pof2(p);
        let rem = p - pof2;
        // Folded block index → first real block.
        let real = |i: u64| if i <= rem { 2 * i } else { i + rem };
        match self.phase {
            0 => {
                self.phase = 1;
                self.i = log2(pof2);
                let total = self.plan.shape.total;
                self.fold(out, total, range(0, p, p), false);
            }
            1 => {
                let Some((mask, newdst)) = self.next_mask_down() else {
                    self.phase = 2;
                    return;
                };
                let nr = self.nr as u64;
                let dst = self.unfold_rank(newdst, false);
                let (send, recv) = if nr < newdst {
                    self.sidx = self.ridx + mask;
                    ((self.sidx, self.lidx), (self.ridx, self.sidx))
                } else {
                    self.ridx = self.sidx + mask;
                    ((self.sidx, self.ridx), (self.ridx, self.lidx))
                };
                for ((a, b), list) in [(send, &mut out.sends), (recv, &mut out.recvs)] {
                    let (a, b) = (real(a), real(b));
                    let bytes = self.plan.span(a, b - a);
                    if bytes > 0 {
                        list.push(tx(dst, bytes, range(a, b - a, p), true));
                    }
                }
                self.sidx = self.ridx;
                self.lidx = self.ridx + mask;
            }
            _ => {
                self.done = true;
                if r < 2 * rem {
                    if r % 2 == 1 {
                        let b = self.plan.blk(r - 1);
                        if b > 0 {
                            out.sends.push(tx(r - 1, b, range(r - 1, 1, p), false));
                        }
                    } else {
                        let b = self.plan.blk(r);
                        if b > 0 {
                            out.recvs.push(tx(r + 1, b, range(r, 1, p), false));
                        }
                    }
                }
            }
        }
    }

    /// Step i: my contribution to rank r+i's block goes to it, rank r−i's to mine comes.
    fn rs_pairwise(&mut self, out: &mut Step) {
        let p = self.p();
        let r = self.r;
        self.i += 1;
        let i = self.i;
        if i >= p {
            self.done = true;
            return;
        }
        let (dst, src) = ((r + i) % p, (r + p - i) % p);
        out.sends
            .push(tx(dst, self.plan.blk(dst), range(dst, 1, p), true));
        out.recvs
            .push(tx(src, self.plan.blk(r), range(r, 1, p), true));
    }

    /// Step k: exchange with r ⊕ 2^k the half of the remaining blocks that the peer keeps;
    /// the remaining blocks are those whose low k bits are r's (MPICH lays them out in
    /// bit-reversed order so that this half is contiguous in its buffer).
    fn rs_noncommutative(&mut self, out: &mut Step) {
        let p = self.p();
        let r = self.r;
        let Some(bit) = self.next_mask_up(p) else {
            self.done = true;
            return;
        };
        let peer = r ^ bit;
        let mask = 2 * bit - 1;
        let bytes = (p / (2 * bit)) * self.plan.shape.n;
        let give = (r & (bit - 1)) | (peer & bit);
        let keep = r & mask;
        let m = |value: u64| Blocks::Masked {
            mask: mask as u32,
            value: value as u32,
        };
        out.sends.push(tx(peer, bytes, m(give), true));
        out.recvs.push(tx(peer, bytes, m(keep), true));
    }

    /// The blocks outside the subtree [root, root+mask), and their bytes.
    fn outside(&self, root: u64, mask: u64) -> (u64, Blocks) {
        let p = self.p();
        let e = (root + mask).min(p);
        let bytes = self.plan.shape.total - self.plan.span(root, e - root);
        (bytes, range(e % p, p - (e - root), p))
    }

    /// MPICH's general reduce-scatter: recursive doubling where each rank sends all the
    /// blocks outside its subtree; on a non-power of two, the ranks whose partner does not
    /// exist get the partner subtree's data from a rank of their subtree that has it,
    /// down a binomial tree (forwarded, one step per round).
    fn rs_doubling(&mut self, out: &mut Step) {
        let p = self.p();
        let r = self.r;
        let mask = 1u64 << self.i;
        if self.tmask == 0 {
            if mask >= p {
                self.done = true;
                return;
            }
            let dst = r ^ mask;
            let mine = r & !(mask - 1);
            let theirs = dst & !(mask - 1);
            if dst < p {
                let (sb, sblk) = self.outside(mine, mask);
                let (rb, rblk) = self.outside(theirs, mask);
                out.sends.push(tx(dst, sb, sblk, true));
                out.recvs.push(tx(dst, rb, rblk, true));
            }
            if theirs + mask > p {
                self.tmask = mask >> 1;
                self.k = self.i;
            }
            if self.tmask == 0 {
                self.i += 1;
            }
            return;
        }
        let tm = self.tmask;
        let theirs = (r ^ mask) & !(mask - 1);
        let mine = r & !(mask - 1);
        // Ranks [mine, mine + completed) had a partner; signed, as it is negative when the
        // whole subtree lacks one.
        let completed = p as i64 - mine as i64 - mask as i64;
        let tree_root = (r >> self.k) << self.k;
        let lim = tree_root as i64 + completed;
        let dst = r ^ tm;
        let (ri, di) = (r as i64, dst as i64);
        if dst > r && ri < lim && di >= lim {
            let (b, blk) = self.outside(theirs, mask);
            let mut t = tx(dst, b, blk, true);
            t.forwarded = true;
            out.sends.push(t);
        } else if dst < r && di < lim && ri >= lim {
            let (b, blk) = self.outside(theirs, mask);
            let mut t = tx(dst, b, blk, true);
            t.forwarded = true;
            out.recvs.push(t);
        }
        self.tmask >>= 1;
        self.k = self.k.saturating_sub(1);
        if self.tmask == 0 {
            self.i += 1;
        }
    }

    // -- scan -----------------------------------------------------------------------

    /// Exchange the partial reduction with r ⊕ 2^k when it exists; the receiver keeps
    /// what comes from lower ranks in its result too (the transfers do not say so: it is
    /// the scan's rule).
    fn scan_rd(&mut self, out: &mut Step) {
        let p = self.p();
        let r = self.r;
        let n = self.plan.shape.n;
        let Some(mask) = self.next_mask_up(p) else {
            self.done = true;
            return;
        };
        let dst = r ^ mask;
        if dst < p {
            let one = range(0, 1, 1);
            out.sends.push(tx(dst, n, one, true));
            out.recvs.push(tx(dst, n, one, true));
        }
    }
}

/// The schedule of one rank of `c` on `p` ranks: [`Plan::new`] then [`Plan::rank`]. When
/// every rank's schedule is wanted, build the plan once (per-rank sizes cost O(p) to
/// plan).
pub fn schedule<'a>(
    c: &Collective,
    alg: Algorithm,
    p: u32,
    rank: u32,
    sizes: Sizes<'a>,
    op: Op,
) -> Result<RankSchedule<'a>> {
    Plan::new(c, alg, p, sizes, op)?.rank(rank)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn steps(c: Collective, alg: Algorithm, p: u32, rank: u32, n: u64) -> Vec<Step> {
        schedule(&c, alg, p, rank, Sizes::Uniform(n), Op::builtin(8))
            .unwrap()
            .collect()
    }

    #[test]
    fn binomial_bcast_root_sends_farthest_subtree_first() {
        let s = steps(Collective::Bcast { root: 0 }, Algorithm::Binomial, 8, 0, 64);
        assert_eq!(s.len(), 1);
        let peers: Vec<u32> = s[0].sends.iter().map(|t| t.peer).collect();
        assert_eq!(peers, [4, 2, 1]);
        let leaf = steps(Collective::Bcast { root: 3 }, Algorithm::Binomial, 8, 4, 64);
        assert_eq!(leaf.len(), 1);
        assert_eq!(leaf[0].recvs[0].peer, 3);
        assert!(leaf[0].sends.is_empty());
    }

    #[test]
    fn allreduce_recursive_doubling_folds_even_ranks_into_odd_ones() {
        // p = 6: pof2 = 4, rem = 2; ranks 0 and 2 hand their data to 1 and 3.
        let s0 = steps(Collective::Allreduce, Algorithm::RecursiveDoubling, 6, 0, 8);
        assert_eq!(s0.len(), 2);
        assert_eq!((s0[0].sends[0].peer, s0[1].recvs[0].peer), (1, 1));
        let s1 = steps(Collective::Allreduce, Algorithm::RecursiveDoubling, 6, 1, 8);
        // fold in, two exchanges (newrank 0 with 1 = rank 3, with 2 = rank 4), fold out.
        let peers: Vec<u32> = s1
            .iter()
            .flat_map(|s| s.sends.iter().chain(&s.recvs).map(|t| t.peer))
            .collect();
        assert_eq!(peers, [0, 3, 3, 4, 4, 0]);
    }

    #[test]
    fn a_step_is_never_empty() {
        for c in [
            Collective::Reduce { root: 5 },
            Collective::Gather { root: 2 },
            Collective::Scan,
        ] {
            for alg in c.algorithms() {
                for r in 0..7 {
                    for s in steps(c, *alg, 7, r, 64) {
                        assert!(!s.is_empty(), "{c} {alg} rank {r}");
                    }
                }
            }
        }
    }

    #[test]
    fn algorithm_names_round_trip_and_mpich_spellings_parse() {
        for a in Algorithm::ALL {
            assert_eq!(a.name().parse::<Algorithm>().unwrap(), a);
        }
        assert_eq!(
            "scatter_recursive_doubling_allgather"
                .parse::<Algorithm>()
                .unwrap(),
            Algorithm::ScatterRecursiveDoubling
        );
        assert_eq!("Brucks".parse::<Algorithm>().unwrap(), Algorithm::Bruck);
        assert!("fastest".parse::<Algorithm>().is_err());
    }

    #[test]
    fn choices_parse_and_refuse_what_a_collective_does_not_offer() {
        let c: Choices = "bcast=binomial, allreduce=ring,reduce_scatter=pairwise"
            .parse()
            .unwrap();
        assert_eq!(c.get(&Collective::Bcast { root: 3 }), Algorithm::Binomial);
        assert_eq!(c.get(&Collective::Allreduce), Algorithm::Ring);
        assert_eq!(c.get(&Collective::ReduceScatter), Algorithm::Pairwise);
        assert_eq!(c.get(&Collective::Alltoall), Algorithm::Auto);
        assert_eq!(
            c.to_string(),
            "bcast=binomial,allreduce=ring,reduce-scatter=pairwise"
        );
        assert_eq!(c.to_string().parse::<Choices>().unwrap(), c);
        assert!("bcast=ring".parse::<Choices>().is_err());
        assert!("broadcast=binomial".parse::<Choices>().is_err());
        assert!("bcast".parse::<Choices>().is_err());
        assert_eq!(Choices::default().to_string(), "auto");
    }

    #[test]
    fn the_offered_table_matches_every_dispatch() {
        // Every offered algorithm plans on a friendly communicator.
        for (i, name) in NAMES.iter().enumerate() {
            for alg in OFFERED[i] {
                let c = match i {
                    1 => Collective::Bcast { root: 1 },
                    2 => Collective::Reduce { root: 1 },
                    4 => Collective::Gather { root: 1 },
                    5 => Collective::Gatherv { root: 1 },
                    6 => Collective::Scatter { root: 1 },
                    7 => Collective::Scatterv { root: 1 },
                    _ => [
                        Collective::Barrier,
                        Collective::Barrier,
                        Collective::Barrier,
                        Collective::Allreduce,
                        Collective::Barrier,
                        Collective::Barrier,
                        Collective::Barrier,
                        Collective::Barrier,
                        Collective::Allgather,
                        Collective::Allgatherv,
                        Collective::Alltoall,
                        Collective::Alltoallv,
                        Collective::ReduceScatter,
                        Collective::ReduceScatterBlock,
                        Collective::Scan,
                        Collective::Exscan,
                    ][i],
                };
                assert_eq!(c.name(), *name);
                let plan = Plan::new(&c, *alg, 8, Sizes::Uniform(64), Op::builtin(8)).unwrap();
                assert_eq!(plan.algorithm(), *alg);
            }
        }
    }
}
