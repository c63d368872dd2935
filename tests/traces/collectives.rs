//! MPI collectives as point-to-point schedules (`routemu::mpi_semantics::collectives`), checked
//! over every communicator size 1..=40, several roots and sizes (zero-byte blocks among
//! them), for every algorithm:
//!
//! - global consistency: every send is received by its peer, from that sender, with the
//!   same bytes and blocks, in the same order per (sender, receiver) pair, and nothing is
//!   left unreceived;
//! - no deadlock: with the step-barrier semantics (a rank enters step k+1 when its
//!   receives of step k are matched by sends already posted) every rank finishes;
//! - the message counts and bytes of each algorithm's closed form;
//! - what the collective computes: the simulation carries, for every rank and block, the
//!   set of ranks whose contribution it holds; a sender must hold what it sends; a
//!   reduction that counts a contribution twice, or (non-commutative operations) combines
//!   ranges of ranks that are not adjacent, poisons the block — harmless in a block that
//!   is never used again (MPICH's general reduce-scatter computes such blocks), fatal in a
//!   result; at the end every rank holds, unpoisoned, what the collective promises it.
//!
//! Communicators are exhaustive rather than random (no proptest): 1..=40 covers every
//! remainder of a power of two up to 32, deterministically.

use routemu::mpi_semantics::collectives::*;
use std::collections::VecDeque;

/// One call to check.
#[derive(Clone, Copy, Debug)]
struct Call<'a> {
    c: Collective,
    alg: Algorithm,
    p: u32,
    sizes: Sizes<'a>,
    op: Op,
}

/// What the simulation saw.
#[derive(Debug, Default)]
struct Seen {
    messages: u64,
    sent: Vec<u64>,
    received: Vec<u64>,
}

fn pof2(p: u64) -> u64 {
    1 << (63 - p.leading_zeros())
}

fn clog2(p: u64) -> u64 {
    u64::from(p.next_power_of_two().trailing_zeros())
}

fn bit(r: u64) -> u64 {
    1 << r
}

/// Marks a contribution set computed wrongly (p ≤ 40 leaves this bit free).
const POISON: u64 = 1 << 63;

fn all(p: u64) -> u64 {
    if p == 64 {
        u64::MAX
    } else {
        (1 << p) - 1
    }
}

/// Ranks a..b as a set.
fn ranks(a: u64, b: u64) -> u64 {
    all(b) & !all(a)
}

/// A contiguous range of ranks (what a non-commutative reduction may combine).
fn contiguous(x: u64) -> bool {
    let y = x >> x.trailing_zeros();
    x != 0 && y & (y + 1) == 0
}

/// Deterministic pseudo-random numbers (splitmix64).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Sizes with some zeros among them.
    fn sizes(&mut self, p: u32) -> Vec<u64> {
        (0..p)
            .map(|_| match self.next() % 4 {
                0 => 0,
                _ => 1 + self.next() % 100,
            })
            .collect()
    }
}

fn uniform(s: &Sizes) -> u64 {
    match s {
        Sizes::Uniform(n) => *n,
        _ => panic!("uniform sizes expected"),
    }
}

/// Bytes from src to dst in an alltoall(v).
fn pair(s: &Sizes, src: u32, dst: u32) -> u64 {
    match s {
        Sizes::Uniform(b) => *b,
        Sizes::Matrix(f) => f(src, dst),
        Sizes::PerRank(_) => panic!("alltoall has no per-rank sizes"),
    }
}

/// The collective's blocks and their bytes, as the documentation numbers them; empty for
/// Barrier and Alltoall(v), which have their own models.
fn block_sizes(k: &Call) -> Vec<u64> {
    let p = u64::from(k.p);
    let elem = k.op.elem_bytes;
    match k.c {
        Collective::Barrier | Collective::Alltoall | Collective::Alltoallv => vec![],
        Collective::Bcast { .. } => {
            let n = uniform(&k.sizes);
            let ss = n.div_ceil(p);
            (0..p).map(|j| n.saturating_sub(j * ss).min(ss)).collect()
        }
        Collective::Reduce { .. } | Collective::Allreduce => {
            let n = uniform(&k.sizes);
            let count = n / elem;
            match k.alg {
                Algorithm::Rabenseifner => {
                    let q = pof2(p);
                    (0..q)
                        .map(|i| (count / q + u64::from(i < count % q)) * elem)
                        .collect()
                }
                Algorithm::Ring => {
                    let c = count.div_ceil(p);
                    (0..p)
                        .map(|i| count.saturating_sub(i * c).min(c) * elem)
                        .collect()
                }
                _ => vec![n],
            }
        }
        Collective::Scan | Collective::Exscan => vec![uniform(&k.sizes)],
        _ => match k.sizes {
            Sizes::Uniform(b) => vec![b; k.p as usize],
            Sizes::PerRank(v) => v.to_vec(),
            Sizes::Matrix(_) => unreachable!(),
        },
    }
}

/// The blocks a descriptor selects out of `nb`.
fn selected(b: &Blocks, nb: usize) -> Vec<usize> {
    match *b {
        Blocks::None => vec![],
        Blocks::Range { first, count } => {
            assert!(count as usize <= nb, "{b:?} selects more than {nb} blocks");
            (0..count as usize)
                .map(|i| (first as usize + i) % nb)
                .collect()
        }
        Blocks::Masked { mask, value } => (0..nb).filter(|&i| i as u32 & mask == value).collect(),
    }
}

enum Payload {
    /// (block, contribution set) of the sender.
    Sets(Vec<(usize, u64)>),
    /// The sender's knowledge of who has entered the barrier.
    Know(u64),
    /// Bruck alltoall: (position, (origin, destination)) of the sender's buffer.
    Positions(Vec<(usize, (u32, u32))>),
    /// A direct alltoall block from src to dst.
    Pair(u32, u32),
}

struct Msg {
    t: Transfer,
    payload: Payload,
}

/// Every rank's data as the simulation tracks it.
struct State {
    /// Per rank, per block: the ranks whose contribution the rank holds (for data that
    /// is only moved: the origin's bit, 0 when not held).
    acc: Vec<Vec<u64>>,
    /// What was last received into each block (what a forwarding send carries).
    last: Vec<Vec<u64>>,
    /// Scan, Exscan: the rank's result.
    result: Vec<u64>,
    know: Vec<u64>,
    positions: Vec<Vec<(u32, u32)>>,
    got: Vec<Vec<bool>>,
    /// How each poisoned block was poisoned, for the failure message.
    poisons: Vec<String>,
}

fn moves_only(c: &Collective) -> bool {
    matches!(
        c,
        Collective::Bcast { .. }
            | Collective::Gather { .. }
            | Collective::Gatherv { .. }
            | Collective::Scatter { .. }
            | Collective::Scatterv { .. }
            | Collective::Allgather
            | Collective::Allgatherv
    )
}

fn initial(k: &Call, sizes: &[u64]) -> State {
    let p = k.p as usize;
    let nb = sizes.len();
    let mut acc = vec![vec![0u64; nb]; p];
    for (r, row) in acc.iter_mut().enumerate() {
        for (j, a) in row.iter_mut().enumerate() {
            let empty = sizes[j] == 0;
            *a = match k.c {
                Collective::Bcast { root }
                | Collective::Scatter { root }
                | Collective::Scatterv { root } => {
                    if r == root as usize || empty {
                        bit(u64::from(root))
                    } else {
                        0
                    }
                }
                Collective::Gather { .. }
                | Collective::Gatherv { .. }
                | Collective::Allgather
                | Collective::Allgatherv => {
                    if r == j || empty {
                        bit(j as u64)
                    } else {
                        0
                    }
                }
                _ => bit(r as u64),
            };
        }
    }
    let result = (0..p)
        .map(|r| match k.c {
            Collective::Scan => bit(r as u64),
            _ => 0,
        })
        .collect();
    State {
        last: vec![vec![0; nb]; p],
        acc,
        result,
        know: (0..p).map(|r| bit(r as u64)).collect(),
        positions: (0..p)
            .map(|r| (0..p).map(|i| (r as u32, ((r + i) % p) as u32)).collect())
            .collect(),
        got: (0..p).map(|r| (0..p).map(|s| s == r).collect()).collect(),
        poisons: Vec::new(),
    }
}

fn label(k: &Call) -> String {
    format!("{} {} p={} {:?} {:?}", k.c, k.alg, k.p, k.sizes, k.op)
}

/// Runs every rank's schedule under the step-barrier semantics, checking each transfer;
/// panics with the call and the rank on the first violation.
fn simulate(k: &Call) -> Seen {
    let name = label(k);
    let plan = Plan::new(&k.c, k.alg, k.p, k.sizes, k.op).unwrap_or_else(|e| panic!("{name}: {e}"));
    assert_eq!(plan.algorithm(), k.alg, "{name}");
    let p = k.p as usize;
    let steps: Vec<Vec<Step>> = (0..k.p).map(|r| plan.rank(r).unwrap().collect()).collect();
    let sizes = block_sizes(k);
    let nb = sizes.len();
    let mut st = initial(k, &sizes);
    let mut queues: Vec<VecDeque<Msg>> = (0..p * p).map(|_| VecDeque::new()).collect();
    let mut seen = Seen {
        sent: vec![0; p],
        received: vec![0; p],
        ..Seen::default()
    };
    let mut cur = vec![0usize; p];

    let post =
        |r: usize, s: usize, st: &State, queues: &mut Vec<VecDeque<Msg>>, seen: &mut Seen| {
            for t in &steps[r][s].sends {
                let d = t.peer as usize;
                assert!(d < p && d != r, "{name}: rank {r} sends to {d}");
                let payload = match k.c {
                    Collective::Barrier => {
                        assert_eq!(t.blocks, Blocks::None, "{name}");
                        assert_eq!(t.bytes, 0, "{name}: a barrier message carries bytes");
                        Payload::Know(st.know[r])
                    }
                    Collective::Alltoall if matches!(t.blocks, Blocks::Masked { .. }) => {
                        let pos = selected(&t.blocks, p);
                        assert_eq!(
                            t.bytes,
                            pos.len() as u64 * uniform(&k.sizes),
                            "{name}: rank {r}"
                        );
                        Payload::Positions(pos.iter().map(|&i| (i, st.positions[r][i])).collect())
                    }
                    Collective::Alltoall | Collective::Alltoallv => {
                        assert_eq!(
                            t.blocks,
                            Blocks::Range {
                                first: d as u32,
                                count: 1
                            },
                            "{name}"
                        );
                        assert_eq!(t.bytes, pair(&k.sizes, r as u32, d as u32), "{name}");
                        Payload::Pair(r as u32, d as u32)
                    }
                    _ => {
                        let blocks = selected(&t.blocks, nb);
                        let bytes: u64 = blocks.iter().map(|&b| sizes[b]).sum();
                        assert_eq!(
                            t.bytes, bytes,
                            "{name}: rank {r} to {d}: bytes of {:?}",
                            t.blocks
                        );
                        let from = if t.forwarded { &st.last[r] } else { &st.acc[r] };
                        if moves_only(&k.c) {
                            for &b in &blocks {
                                assert!(
                                    sizes[b] == 0 || from[b] != 0,
                                    "{name}: rank {r} sends block {b} it does not hold"
                                );
                            }
                        }
                        Payload::Sets(blocks.iter().map(|&b| (b, from[b])).collect())
                    }
                };
                seen.messages += 1;
                seen.sent[r] += t.bytes;
                queues[r * p + d].push_back(Msg { t: *t, payload });
            }
        };

    for (r, own) in steps.iter().enumerate() {
        if !own.is_empty() {
            post(r, 0, &st, &mut queues, &mut seen);
        }
    }
    loop {
        let mut progress = false;
        for r in 0..p {
            while cur[r] < steps[r].len() {
                let step = &steps[r][cur[r]];
                // Every receive of the step must find its message already posted.
                let mut want = vec![0usize; p];
                for t in &step.recvs {
                    let s = t.peer as usize;
                    assert!(s < p && s != r, "{name}: rank {r} receives from {s}");
                    want[s] += 1;
                }
                if (0..p).any(|s| queues[s * p + r].len() < want[s]) {
                    break;
                }
                let mut arrived = Vec::with_capacity(step.recvs.len());
                for t in &step.recvs {
                    let s = t.peer as usize;
                    let m = queues[s * p + r].pop_front().unwrap();
                    assert_eq!(
                        (m.t.bytes, m.t.blocks, m.t.reduce, m.t.forwarded),
                        (t.bytes, t.blocks, t.reduce, t.forwarded),
                        "{name}: rank {r} step {} receives from {s} other than what was sent",
                        cur[r]
                    );
                    seen.received[r] += t.bytes;
                    arrived.push((s, m));
                }
                for (s, m) in arrived {
                    apply(k, &name, &sizes, &mut st, r, s, &m);
                }
                cur[r] += 1;
                if cur[r] < steps[r].len() {
                    post(r, cur[r], &st, &mut queues, &mut seen);
                }
                progress = true;
            }
        }
        if !progress {
            break;
        }
    }
    let stuck: Vec<(usize, usize)> = (0..p)
        .filter(|&r| cur[r] < steps[r].len())
        .map(|r| (r, cur[r]))
        .collect();
    assert!(
        stuck.is_empty(),
        "{name}: deadlock; (rank, step) stuck: {stuck:?}"
    );
    for (i, q) in queues.iter().enumerate() {
        assert!(
            q.is_empty(),
            "{name}: {} unreceived from {} to {}",
            q.len(),
            i / p,
            i % p
        );
    }
    postcondition(k, &name, &sizes, &st);
    seen
}

fn apply(k: &Call, name: &str, sizes: &[u64], st: &mut State, r: usize, s: usize, m: &Msg) {
    match &m.payload {
        Payload::Know(x) => st.know[r] |= x,
        Payload::Pair(src, dst) => {
            assert_eq!(
                *dst as usize, r,
                "{name}: {src}'s block for {dst} reached {r}"
            );
            assert!(!st.got[r][s], "{name}: rank {r} got {s}'s block twice");
            st.got[r][s] = true;
        }
        Payload::Positions(v) => {
            for &(i, blk) in v {
                st.positions[r][i] = blk;
            }
        }
        Payload::Sets(v) => {
            for &(b, set) in v {
                let acc = st.acc[r][b];
                if m.t.reduce {
                    let mut new = acc | set;
                    if sizes[b] > 0 && (acc | set) & POISON == 0 {
                        let twice = acc & set != 0;
                        let apart = !k.op.commutative && !contiguous(acc | set);
                        if twice || apart {
                            let why = if twice {
                                "counts ranks twice"
                            } else {
                                "combines ranks that are not adjacent"
                            };
                            st.poisons.push(format!(
                                "rank {r} block {b}: {set:#b} from {s} reduced into {acc:#b} {why}"
                            ));
                            new |= POISON;
                        }
                    }
                    st.acc[r][b] = new;
                } else {
                    st.acc[r][b] = set;
                }
                st.last[r][b] = set;
                if matches!(k.c, Collective::Scan | Collective::Exscan) && s < r {
                    let res = st.result[r];
                    assert_eq!(res & set, 0, "{name}: rank {r}'s scan counts ranks twice");
                    assert!(
                        k.op.commutative || contiguous(res | set) || res == 0,
                        "{name}: rank {r}'s scan combines non-adjacent ranks"
                    );
                    st.result[r] = res | set;
                }
            }
        }
    }
}

fn postcondition(k: &Call, name: &str, sizes: &[u64], st: &State) {
    let name = &format!("{name} (poisoned: {:?})", st.poisons);
    let p = u64::from(k.p);
    let full = all(p);
    let nonzero = |b: usize| sizes[b] > 0;
    for r in 0..p as usize {
        let acc = &st.acc[r];
        match k.c {
            Collective::Barrier => {
                assert_eq!(
                    st.know[r], full,
                    "{name}: rank {r} leaves the barrier early"
                )
            }
            Collective::Bcast { root } => {
                for b in (0..sizes.len()).filter(|&b| nonzero(b)) {
                    assert_eq!(acc[b], bit(root.into()), "{name}: rank {r} lacks chunk {b}");
                }
            }
            Collective::Scatter { root } | Collective::Scatterv { root } => {
                if nonzero(r) {
                    assert_eq!(acc[r], bit(root.into()), "{name}: rank {r} lacks its block");
                }
            }
            Collective::Gather { root } | Collective::Gatherv { root } => {
                if r == root as usize {
                    for b in (0..sizes.len()).filter(|&b| nonzero(b)) {
                        assert_eq!(acc[b], bit(b as u64), "{name}: root lacks block {b}");
                    }
                }
            }
            Collective::Allgather | Collective::Allgatherv => {
                for b in (0..sizes.len()).filter(|&b| nonzero(b)) {
                    assert_eq!(acc[b], bit(b as u64), "{name}: rank {r} lacks block {b}");
                }
            }
            Collective::Reduce { root } => {
                if r == root as usize {
                    for b in (0..sizes.len()).filter(|&b| nonzero(b)) {
                        assert_eq!(acc[b], full, "{name}: root's block {b} is {:#b}", acc[b]);
                    }
                }
            }
            Collective::Allreduce => {
                for b in (0..sizes.len()).filter(|&b| nonzero(b)) {
                    assert_eq!(acc[b], full, "{name}: rank {r} block {b} is {:#b}", acc[b]);
                }
            }
            Collective::ReduceScatter | Collective::ReduceScatterBlock => {
                if nonzero(r) {
                    assert_eq!(acc[r], full, "{name}: rank {r}'s block is {:#b}", acc[r]);
                }
            }
            Collective::Scan => {
                assert_eq!(st.result[r], ranks(0, r as u64 + 1), "{name}: rank {r}")
            }
            Collective::Exscan => {
                if r > 0 {
                    assert_eq!(st.result[r], ranks(0, r as u64), "{name}: rank {r}")
                }
            }
            Collective::Alltoall if k.alg == Algorithm::Bruck => {
                for i in 0..p {
                    let want = (((r as u64 + p - i) % p) as u32, r as u32);
                    assert_eq!(
                        st.positions[r][i as usize], want,
                        "{name}: rank {r} position {i}"
                    );
                }
            }
            Collective::Alltoall | Collective::Alltoallv => {
                for s in 0..k.p {
                    let want = s as usize == r || pair(&k.sizes, s, r as u32) > 0;
                    assert_eq!(st.got[r][s as usize], want, "{name}: rank {r} from {s}");
                }
            }
        }
    }
}

/// The message count of each algorithm's closed form, when the sizes have no empty block
/// (`None` where the count depends on which blocks are empty, and is not checked).
fn closed_form(k: &Call) -> Option<u64> {
    let p = u64::from(k.p);
    let (q, l) = (pof2(p), u64::from(pof2(p).trailing_zeros()));
    let rem = p - q;
    let sizes = block_sizes(k);
    let nonzero = sizes.iter().filter(|&&b| b > 0).count() as u64;
    if p == 1 {
        return Some(0);
    }
    use Algorithm as A;
    use Collective as C;
    Some(match (k.c, k.alg) {
        (C::Barrier, _) => p * clog2(p),
        (C::Bcast { .. }, A::Binomial | A::Linear) => p - 1,
        (C::Bcast { .. }, A::ScatterRecursiveDoubling) => (nonzero - 1) + p * l,
        (C::Bcast { .. }, A::ScatterRing) => (nonzero - 1) + p * (p - 1),
        (C::Reduce { root }, A::Binomial) => p - 1 + u64::from(!k.op.commutative && root != 0),
        (C::Reduce { root }, A::Rabenseifner) => {
            let root = u64::from(root);
            rem + q * l + (q - 1) + u64::from(root < 2 * rem && root % 2 == 1)
        }
        (C::Allreduce, A::RecursiveDoubling) => 2 * rem + q * l,
        (C::Allreduce, A::Rabenseifner) => 2 * rem + 2 * q * l,
        (C::Allreduce, A::Ring) => p * (p - 1) + nonzero * (p - 1),
        (C::Gather { .. } | C::Scatter { .. }, _) => p - 1,
        (C::Gatherv { root } | C::Scatterv { root }, _) => {
            nonzero - u64::from(sizes[root as usize] > 0)
        }
        (C::Allgather | C::Allgatherv, A::RecursiveDoubling) => p * l,
        (C::Allgather | C::Allgatherv, A::Bruck) => p * clog2(p),
        (C::Allgather | C::Allgatherv, _) => nonzero * (p - 1),
        (C::Alltoall, A::Bruck) => p * clog2(p),
        (C::Alltoall, _) => p * (p - 1),
        (C::Alltoallv, _) => (0..k.p)
            .flat_map(|s| (0..k.p).map(move |d| (s, d)))
            .filter(|&(s, d)| s != d && pair(&k.sizes, s, d) > 0)
            .count() as u64,
        (C::ReduceScatter | C::ReduceScatterBlock, _) if nonzero < p => return None,
        (C::ReduceScatter | C::ReduceScatterBlock, A::RecursiveHalving) => 2 * rem + q * l,
        (C::ReduceScatter | C::ReduceScatterBlock, A::Pairwise) => p * (p - 1),
        (C::ReduceScatter | C::ReduceScatterBlock, A::NonCommutative) => p * l,
        (C::ReduceScatter | C::ReduceScatterBlock, _) if rem == 0 => p * l,
        (C::ReduceScatter | C::ReduceScatterBlock, _) => return None,
        (C::Scan | C::Exscan, _) => (0..clog2(p))
            .map(|j| (0..p).filter(|r| r ^ (1 << j) < p).count() as u64)
            .sum(),
        (c, a) => panic!("no closed form for {c} {a}"),
    })
}

/// Simulates and checks the closed-form message count.
fn check(k: &Call) -> Seen {
    let seen = simulate(k);
    if let Some(n) = closed_form(k) {
        assert_eq!(seen.messages, n, "{}: messages", label(k));
    }
    seen
}

/// The call of `alg` for `c` on `p` ranks, checked (`check`), with what the simulation
/// saw; `None` where the algorithm cannot run it (the caller asserts why).
fn check_if_it_runs(
    c: Collective,
    alg: Algorithm,
    p: u32,
    sizes: Sizes,
    op: Op,
) -> Option<(Call, Seen)> {
    if !runs(&c, alg, p, sizes, op) {
        return None;
    }
    let k = Call {
        c,
        alg,
        p,
        sizes,
        op,
    };
    let seen = check(&k);
    Some((k, seen))
}

/// Roots worth trying on p ranks.
fn roots(p: u32) -> Vec<u32> {
    let mut v = vec![0, 1 % p, p / 2, p - 1, (p / 2 + 1) % p];
    v.sort_unstable();
    v.dedup();
    v
}

/// Whether `alg` can run `c` here (the rest is refused, and tested so elsewhere).
fn runs(c: &Collective, alg: Algorithm, p: u32, sizes: Sizes, op: Op) -> bool {
    Plan::new(c, alg, p, sizes, op).is_ok()
}

const P_MAX: u32 = 40;

/// What `Auto` resolves to.
fn auto(c: &Collective, p: u32, sizes: Sizes) -> Algorithm {
    resolve(c, Algorithm::Auto, p, sizes, Op::default()).unwrap()
}

#[test]
fn barrier_disseminates_empty_messages_and_nobody_leaves_before_everyone_entered() {
    for p in 1..=P_MAX {
        check(&Call {
            c: Collective::Barrier,
            alg: auto(&Collective::Barrier, p, Sizes::Uniform(0)),
            p,
            sizes: Sizes::Uniform(0),
            op: Op::default(),
        });
    }
}

#[test]
fn bcast_brings_the_roots_data_to_every_rank_by_every_algorithm() {
    for p in 1..=P_MAX {
        for root in roots(p) {
            let c = Collective::Bcast { root };
            for n in [1, 7, 1000, 4099] {
                for &alg in c.algorithms() {
                    let sizes = Sizes::Uniform(n);
                    let Some((_, seen)) = check_if_it_runs(c, alg, p, sizes, Op::default()) else {
                        assert!(alg == Algorithm::ScatterRecursiveDoubling && !p.is_power_of_two());
                        continue;
                    };
                    if alg == Algorithm::Binomial {
                        assert_eq!(seen.sent.iter().sum::<u64>(), u64::from(p - 1) * n);
                    }
                }
            }
        }
    }
}

/// Operations to reduce with: predefined on doubles, and user-defined non-commutative
/// (for the algorithms that accept it).
const OPS: [Op; 2] = [Op::builtin(8), Op::user(false, 8)];

#[test]
fn reduce_brings_every_contribution_to_the_root_exactly_once() {
    for p in 1..=P_MAX {
        for root in roots(p) {
            let c = Collective::Reduce { root };
            for count in [1u64, 3, 40, 77] {
                for op in OPS {
                    for &alg in c.algorithms() {
                        let sizes = Sizes::Uniform(count * 8);
                        if check_if_it_runs(c, alg, p, sizes, op).is_none() {
                            assert_eq!(alg, Algorithm::Rabenseifner);
                            assert!(!op.commutative || count < pof2(p.into()));
                        }
                    }
                }
            }
        }
    }
}

#[test]
fn allreduce_gives_every_rank_every_contribution_exactly_once() {
    let c = Collective::Allreduce;
    for p in 1..=P_MAX {
        for count in [1u64, 3, 40, 77, 120] {
            for op in OPS {
                for &alg in c.algorithms() {
                    let sizes = Sizes::Uniform(count * 8);
                    let Some((_, seen)) = check_if_it_runs(c, alg, p, sizes, op) else {
                        assert_ne!(alg, Algorithm::RecursiveDoubling);
                        continue;
                    };
                    // Ring, and Rabenseifner on a power of two, send 2(p−1)/p of the data
                    // per rank when the segments are equal.
                    let p64 = u64::from(p);
                    let even = match alg {
                        Algorithm::Ring => count % p64 == 0,
                        Algorithm::Rabenseifner => p.is_power_of_two() && count % p64 == 0,
                        _ => false,
                    };
                    if even {
                        for (r, &s) in seen.sent.iter().enumerate() {
                            assert_eq!(s * p64, 2 * (p64 - 1) * count * 8, "{alg} p={p} rank {r}");
                        }
                    }
                }
            }
        }
    }
}

#[test]
fn gather_and_scatter_move_each_block_between_the_root_and_its_owner() {
    let mut rng = Rng(7);
    for p in 1..=P_MAX {
        let v = rng.sizes(p);
        for root in roots(p) {
            let fixed = [Collective::Gather { root }, Collective::Scatter { root }];
            let varied = [Collective::Gatherv { root }, Collective::Scatterv { root }];
            for c in fixed {
                for b in [1u64, 24] {
                    for &alg in c.algorithms() {
                        let k = Call {
                            c,
                            alg,
                            p,
                            sizes: Sizes::Uniform(b),
                            op: Op::default(),
                        };
                        let seen = check(&k);
                        let at_root = match c {
                            Collective::Gather { .. } => seen.received[root as usize],
                            _ => seen.sent[root as usize],
                        };
                        assert_eq!(at_root, u64::from(p - 1) * b, "{}", label(&k));
                    }
                }
            }
            for c in varied {
                for sizes in [Sizes::PerRank(&v), Sizes::Uniform(5)] {
                    check(&Call {
                        c,
                        alg: auto(&c, p, sizes),
                        p,
                        sizes,
                        op: Op::default(),
                    });
                }
            }
        }
    }
}

#[test]
fn allgather_gives_every_rank_every_block_by_every_algorithm() {
    let mut rng = Rng(11);
    for p in 1..=P_MAX {
        let v = rng.sizes(p);
        let positive: Vec<u64> = v.iter().map(|b| b + 1).collect();
        let cases = [
            (Collective::Allgather, Sizes::Uniform(1)),
            (Collective::Allgather, Sizes::Uniform(300)),
            (Collective::Allgatherv, Sizes::PerRank(&v)),
            (Collective::Allgatherv, Sizes::PerRank(&positive)),
        ];
        for (c, sizes) in cases {
            let blocks = match sizes {
                Sizes::PerRank(v) => v.to_vec(),
                _ => vec![uniform(&sizes); p as usize],
            };
            let total: u64 = blocks.iter().sum();
            for &alg in c.algorithms() {
                let Some((k, seen)) = check_if_it_runs(c, alg, p, sizes, Op::default()) else {
                    assert!(alg == Algorithm::RecursiveDoubling && !p.is_power_of_two());
                    continue;
                };
                for (r, b) in blocks.iter().enumerate() {
                    assert_eq!(seen.received[r], total - b, "{} rank {r}", label(&k));
                }
            }
        }
    }
}

#[test]
fn alltoall_gives_every_rank_its_block_from_every_rank_by_every_algorithm() {
    for p in 1..=P_MAX {
        let m = move |s: u32, d: u32| -> u64 {
            let x = (u64::from(s) * 31 + u64::from(d) * 17 + u64::from(p)) % 7;
            if x < 2 {
                0
            } else {
                x * 10
            }
        };
        let cases = [
            (Collective::Alltoall, Sizes::Uniform(1)),
            (Collective::Alltoall, Sizes::Uniform(300)),
            (Collective::Alltoallv, Sizes::Matrix(&m)),
            (Collective::Alltoallv, Sizes::Uniform(9)),
        ];
        for (c, sizes) in cases {
            for &alg in c.algorithms() {
                let k = Call {
                    c,
                    alg,
                    p,
                    sizes,
                    op: Op::default(),
                };
                let seen = check(&k);
                let p64 = u64::from(p);
                for r in 0..p {
                    let expect: u64 = if alg == Algorithm::Bruck {
                        (0..clog2(p64))
                            .map(|j| (1..p64).filter(|i| i & (1 << j) != 0).count() as u64)
                            .sum::<u64>()
                            * uniform(&sizes)
                    } else {
                        (0..p).filter(|&d| d != r).map(|d| pair(&sizes, r, d)).sum()
                    };
                    assert_eq!(seen.sent[r as usize], expect, "{} rank {r}", label(&k));
                }
            }
        }
    }
}

#[test]
fn reduce_scatter_leaves_each_rank_its_block_reduced_over_every_rank_once() {
    let mut rng = Rng(13);
    for p in 1..=P_MAX {
        let v = rng.sizes(p);
        let positive: Vec<u64> = v.iter().map(|b| (b + 1) * 8).collect();
        let zeros: Vec<u64> = v.iter().map(|b| b * 8).collect();
        let cases = [
            (Collective::ReduceScatter, Sizes::PerRank(&zeros)),
            (Collective::ReduceScatter, Sizes::PerRank(&positive)),
            (Collective::ReduceScatter, Sizes::Uniform(16)),
            (Collective::ReduceScatterBlock, Sizes::Uniform(8)),
            (Collective::ReduceScatterBlock, Sizes::Uniform(40)),
        ];
        for (c, sizes) in cases {
            for op in OPS {
                for &alg in c.algorithms() {
                    let Some((k, seen)) = check_if_it_runs(c, alg, p, sizes, op) else {
                        assert!(!op.commutative || alg == Algorithm::NonCommutative);
                        continue;
                    };
                    if alg == Algorithm::Pairwise {
                        let blocks = block_sizes(&k);
                        for (r, b) in blocks.iter().enumerate() {
                            assert_eq!(seen.received[r], u64::from(p - 1) * b);
                        }
                    }
                }
            }
        }
    }
}

#[test]
fn scan_and_exscan_give_each_rank_the_reduction_of_the_ranks_before_it_in_order() {
    for p in 1..=P_MAX {
        for c in [Collective::Scan, Collective::Exscan] {
            for op in OPS {
                for n in [8u64, 800] {
                    check(&Call {
                        c,
                        alg: Algorithm::RecursiveDoubling,
                        p,
                        sizes: Sizes::Uniform(n),
                        op,
                    });
                }
            }
        }
    }
}

/// One call of each collective, with the sizes it takes.
fn one_of_each<'a>(
    p: u32,
    per_rank: &'a [u64],
    m: &'a (dyn Fn(u32, u32) -> u64 + Sync),
) -> Vec<(Collective, Sizes<'a>)> {
    let r = p - 1;
    vec![
        (Collective::Barrier, Sizes::Uniform(0)),
        (Collective::Bcast { root: r }, Sizes::Uniform(64)),
        (Collective::Reduce { root: r }, Sizes::Uniform(64)),
        (Collective::Allreduce, Sizes::Uniform(64)),
        (Collective::Gather { root: r }, Sizes::Uniform(64)),
        (Collective::Gatherv { root: r }, Sizes::PerRank(per_rank)),
        (Collective::Scatter { root: r }, Sizes::Uniform(64)),
        (Collective::Scatterv { root: r }, Sizes::PerRank(per_rank)),
        (Collective::Allgather, Sizes::Uniform(64)),
        (Collective::Allgatherv, Sizes::PerRank(per_rank)),
        (Collective::Alltoall, Sizes::Uniform(64)),
        (Collective::Alltoallv, Sizes::Matrix(m)),
        (Collective::ReduceScatter, Sizes::PerRank(per_rank)),
        (Collective::ReduceScatterBlock, Sizes::Uniform(64)),
        (Collective::Scan, Sizes::Uniform(64)),
        (Collective::Exscan, Sizes::Uniform(64)),
    ]
}

#[test]
fn a_single_rank_sends_nothing() {
    let m = |_: u32, _: u32| 64;
    for (c, sizes) in one_of_each(1, &[64], &m) {
        for &alg in c.algorithms().iter().chain(&[Algorithm::Auto]) {
            let plan = Plan::new(&c, alg, 1, sizes, Op::builtin(8)).unwrap();
            assert_eq!(plan.rank(0).unwrap().count(), 0, "{c} {alg}");
        }
    }
}

#[test]
fn a_collective_without_data_sends_nothing_but_a_barrier_sends_empty_messages() {
    let zeros = [0u64; 12];
    let m = |_: u32, _: u32| 0;
    for (c, sizes) in one_of_each(12, &zeros, &m) {
        let sizes = match sizes {
            Sizes::Uniform(_) => Sizes::Uniform(0),
            other => other,
        };
        for &alg in c.algorithms() {
            let Ok(plan) = Plan::new(&c, alg, 12, sizes, Op::builtin(8)) else {
                continue;
            };
            let steps: Vec<Step> = (0..12).flat_map(|r| plan.rank(r).unwrap()).collect();
            if c == Collective::Barrier {
                let msgs: Vec<&Transfer> = steps.iter().flat_map(|s| &s.sends).collect();
                assert_eq!(msgs.len(), 12 * 4);
                assert!(msgs.iter().all(|t| t.bytes == 0));
            } else {
                assert!(steps.is_empty(), "{c} {alg} with no data");
            }
        }
    }
}

#[test]
fn next_into_reuses_the_step_and_yields_what_the_iterator_yields() {
    let plan = Plan::new(
        &Collective::Allreduce,
        Algorithm::Rabenseifner,
        13,
        Sizes::Uniform(8 * 100),
        Op::builtin(8),
    )
    .unwrap();
    for r in 0..13 {
        let collected: Vec<Step> = plan.rank(r).unwrap().collect();
        let mut s = plan.rank(r).unwrap();
        let mut step = Step::default();
        let mut again = Vec::new();
        while s.next_into(&mut step) {
            again.push(step.clone());
        }
        assert_eq!(again, collected);
        assert!(!s.next_into(&mut step) && step.is_empty());
    }
}

#[test]
fn a_million_ranks_stream_a_logarithmic_schedule_per_rank() {
    let p = 1_000_000u32;
    let op = Op::builtin(8);
    let cases = [
        (Collective::Barrier, Algorithm::Dissemination, 0),
        (Collective::Bcast { root: 17 }, Algorithm::Binomial, 1 << 20),
        (Collective::Allreduce, Algorithm::RecursiveDoubling, 8),
        (Collective::Allreduce, Algorithm::Rabenseifner, 8 << 20),
        (
            Collective::Reduce { root: 999_999 },
            Algorithm::Rabenseifner,
            8 << 20,
        ),
        (Collective::Allgather, Algorithm::Bruck, 8),
        (Collective::Alltoall, Algorithm::Bruck, 8),
        (Collective::Scan, Algorithm::RecursiveDoubling, 8),
    ];
    for (c, alg, n) in cases {
        let plan = Plan::new(&c, alg, p, Sizes::Uniform(n), op).unwrap();
        for r in [0, 1, 2, 17, 524_287, 524_288, 999_998, 999_999] {
            let steps: Vec<Step> = plan.rank(r).unwrap().collect();
            let transfers: usize = steps.iter().map(|s| s.sends.len() + s.recvs.len()).sum();
            // log2(10^6) < 20: a handful of transfers per round.
            assert!(
                steps.len() <= 2 * 20 + 3,
                "{c} {alg} rank {r}: {} steps",
                steps.len()
            );
            assert!(
                transfers <= 4 * 20 + 6,
                "{c} {alg} rank {r}: {transfers} transfers"
            );
        }
    }
}

#[test]
fn bad_input_is_refused_with_a_reason() {
    let op = Op::builtin(8);
    let refused = |c: Collective, alg: Algorithm, p: u32, sizes: Sizes, op: Op, why: &str| {
        let e = Plan::new(&c, alg, p, sizes, op)
            .err()
            .unwrap_or_else(|| panic!("{c} {alg} p={p} accepted"));
        let msg = e.to_string();
        assert!(msg.contains(why), "{c} {alg}: {msg:?} does not say {why:?}");
        assert!(matches!(e, routemu::Error::Trace(_)));
    };
    refused(
        Collective::Bcast { root: 8 },
        Algorithm::Auto,
        8,
        Sizes::Uniform(1),
        op,
        "root 8",
    );
    refused(
        Collective::Barrier,
        Algorithm::Auto,
        0,
        Sizes::Uniform(0),
        op,
        "0 ranks",
    );
    refused(
        Collective::Gatherv { root: 0 },
        Algorithm::Auto,
        4,
        Sizes::PerRank(&[1, 2, 3]),
        op,
        "3 per-rank sizes",
    );
    refused(
        Collective::Bcast { root: 0 },
        Algorithm::Auto,
        4,
        Sizes::PerRank(&[1; 4]),
        op,
        "takes Uniform",
    );
    refused(
        Collective::ReduceScatter,
        Algorithm::RecursiveHalving,
        4,
        Sizes::Uniform(8),
        Op::user(false, 8),
        "commutative",
    );
    refused(
        Collective::Allgather,
        Algorithm::RecursiveDoubling,
        6,
        Sizes::Uniform(8),
        op,
        "power-of-two",
    );
    refused(
        Collective::Bcast { root: 0 },
        Algorithm::ScatterRecursiveDoubling,
        12,
        Sizes::Uniform(8),
        op,
        "power-of-two",
    );
    refused(
        Collective::Allreduce,
        Algorithm::Rabenseifner,
        16,
        Sizes::Uniform(8 * 15),
        op,
        "at least 16 elements",
    );
    refused(
        Collective::Allreduce,
        Algorithm::Rabenseifner,
        16,
        Sizes::Uniform(8 * 16 + 3),
        op,
        "whole 8-byte elements",
    );
    refused(
        Collective::Allreduce,
        Algorithm::Bruck,
        16,
        Sizes::Uniform(8),
        op,
        "not an algorithm for allreduce",
    );
    refused(
        Collective::Allreduce,
        Algorithm::Auto,
        16,
        Sizes::Uniform(8),
        Op::builtin(0),
        "0 bytes",
    );
    refused(
        Collective::ReduceScatterBlock,
        Algorithm::NonCommutative,
        6,
        Sizes::Uniform(8),
        op,
        "power-of-two",
    );
    refused(
        Collective::ReduceScatter,
        Algorithm::NonCommutative,
        4,
        Sizes::PerRank(&[8, 8, 8, 16]),
        op,
        "equal blocks",
    );
    refused(
        Collective::Alltoall,
        Algorithm::Auto,
        1 << 20,
        Sizes::Uniform(u64::MAX / 1000),
        op,
        "exceed 2^64",
    );
    refused(
        Collective::Gatherv { root: 0 },
        Algorithm::Auto,
        2,
        Sizes::PerRank(&[u64::MAX, 1]),
        op,
        "exceed 2^64",
    );
    let plan = Plan::new(
        &Collective::Allreduce,
        Algorithm::Auto,
        4,
        Sizes::Uniform(8),
        op,
    )
    .unwrap();
    assert!(plan.rank(4).is_err());
    assert!(schedule(
        &Collective::Scan,
        Algorithm::Auto,
        4,
        9,
        Sizes::Uniform(8),
        op
    )
    .is_err());
}

#[test]
fn auto_follows_mpich3_thresholds() {
    use Algorithm::*;
    let op = Op::builtin(8);
    let pick = |c: Collective, p: u32, n: u64| resolve(&c, Auto, p, Sizes::Uniform(n), op).unwrap();
    let bcast = Collective::Bcast { root: 0 };
    assert_eq!(pick(bcast, 16, 12287), Binomial);
    assert_eq!(pick(bcast, 16, 12288), ScatterRecursiveDoubling);
    assert_eq!(pick(bcast, 7, 1 << 20), Binomial);
    assert_eq!(pick(bcast, 16, 524287), ScatterRecursiveDoubling);
    assert_eq!(pick(bcast, 16, 524288), ScatterRing);
    assert_eq!(pick(bcast, 12, 12288), ScatterRing);
    assert_eq!(pick(Collective::Allreduce, 16, 2048), RecursiveDoubling);
    assert_eq!(pick(Collective::Allreduce, 16, 2056), Rabenseifner);
    // count < pof2: 2056 B of 8-byte elements is 257 elements, fewer than 512.
    assert_eq!(pick(Collective::Allreduce, 600, 2056), RecursiveDoubling);
    assert_eq!(
        resolve(
            &Collective::Allreduce,
            Auto,
            16,
            Sizes::Uniform(1 << 20),
            Op::user(true, 8)
        )
        .unwrap(),
        RecursiveDoubling
    );
    let reduce = Collective::Reduce { root: 3 };
    assert_eq!(pick(reduce, 16, 2048), Binomial);
    assert_eq!(pick(reduce, 16, 2056), Rabenseifner);
    assert_eq!(
        pick(Collective::Allgather, 16, 524287 / 16),
        RecursiveDoubling
    );
    assert_eq!(pick(Collective::Allgather, 16, 524288 / 16), Ring);
    assert_eq!(pick(Collective::Allgather, 10, 8191), Bruck);
    assert_eq!(pick(Collective::Allgather, 10, 8192), Ring);
    assert_eq!(pick(Collective::Alltoall, 8, 256), Bruck);
    assert_eq!(pick(Collective::Alltoall, 7, 256), Scattered);
    assert_eq!(pick(Collective::Alltoall, 8, 257), Scattered);
    assert_eq!(pick(Collective::Alltoall, 8, 32768), Scattered);
    assert_eq!(pick(Collective::Alltoall, 8, 32769), Pairwise);
    assert_eq!(pick(Collective::Gather { root: 0 }, 8, 1 << 20), Binomial);
    assert_eq!(pick(Collective::Scatter { root: 0 }, 8, 1), Binomial);
    assert_eq!(pick(Collective::Barrier, 8, 0), Dissemination);
    assert_eq!(pick(Collective::Scan, 8, 8), RecursiveDoubling);
    assert_eq!(pick(Collective::Exscan, 8, 8), RecursiveDoubling);
    assert_eq!(
        pick(Collective::ReduceScatterBlock, 16, 524287 / 16),
        RecursiveHalving
    );
    assert_eq!(
        pick(Collective::ReduceScatterBlock, 16, 524288 / 16),
        Pairwise
    );
    let nc = Op::user(false, 8);
    let rs =
        |p: u32, sizes: Sizes| resolve(&Collective::ReduceScatter, Auto, p, sizes, nc).unwrap();
    assert_eq!(rs(8, Sizes::PerRank(&[8; 8])), NonCommutative);
    assert_eq!(
        rs(8, Sizes::PerRank(&[8, 8, 8, 8, 8, 8, 8, 16])),
        RecursiveDoubling
    );
    assert_eq!(rs(6, Sizes::PerRank(&[8; 6])), RecursiveDoubling);
    let v = [8u64; 4];
    for c in [
        Collective::Gatherv { root: 0 },
        Collective::Scatterv { root: 0 },
    ] {
        assert_eq!(
            resolve(&c, Auto, 4, Sizes::PerRank(&v), op).unwrap(),
            Linear
        );
    }
    assert_eq!(
        resolve(&Collective::Alltoallv, Auto, 4, Sizes::Uniform(8), op).unwrap(),
        Scattered
    );
}

#[test]
fn auto_follows_mpich4_where_it_differs() {
    use Algorithm::*;
    let t = Tuning::MPICH4;
    let op = Op::builtin(8);
    let pick =
        |c: Collective, p: u32, n: u64| t.resolve(&c, Auto, p, Sizes::Uniform(n), op).unwrap();
    let bcast = Collective::Bcast { root: 0 };
    assert_eq!(pick(bcast, 16, 12288), Binomial);
    assert_eq!(pick(bcast, 16, 524288), ScatterRecursiveDoubling);
    assert_eq!(pick(Collective::Allreduce, 16, 8), RecursiveDoubling);
    assert_eq!(pick(Collective::Allreduce, 2, 16), Rabenseifner);
    assert_eq!(pick(Collective::Allreduce, 16, 2048), Rabenseifner);
}

#[test]
fn the_scattered_alltoall_posts_its_batches_one_step_each() {
    let p = 100;
    let plan = Plan::new(
        &Collective::Alltoall,
        Algorithm::Scattered,
        p,
        Sizes::Uniform(1000),
        Op::default(),
    )
    .unwrap();
    let steps: Vec<Step> = plan.rank(5).unwrap().collect();
    // MPICH's throttle of 32: batches of 32, 32, 32, 4 peers, the first one counting the
    // rank itself.
    let sizes: Vec<usize> = steps.iter().map(|s| s.sends.len()).collect();
    assert_eq!(sizes, [31, 32, 32, 4]);
    let linear = Plan::new(
        &Collective::Alltoall,
        Algorithm::Linear,
        p,
        Sizes::Uniform(1000),
        Op::default(),
    )
    .unwrap();
    let steps: Vec<Step> = linear.rank(5).unwrap().collect();
    assert_eq!(steps.len(), 1);
    assert_eq!((steps[0].sends.len(), steps[0].recvs.len()), (99, 99));
    let unthrottled = Tuning {
        alltoall_throttle: 0,
        ..Tuning::MPICH3
    };
    let plan = Plan::with_tuning(
        &unthrottled,
        &Collective::Alltoall,
        Algorithm::Scattered,
        p,
        Sizes::Uniform(1000),
        Op::default(),
    )
    .unwrap();
    assert_eq!(plan.rank(5).unwrap().count(), 1);
}
