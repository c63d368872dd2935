//! Communicators and groups of a DUMPI trace, resolved into world ranks: for each rank,
//! each communicator handle and each point of the rank's call sequence, which world
//! ranks the communicator holds, in communicator-rank order (docs/dumpi.md, "Communicators
//! and groups").
//!
//! Handles are per-rank values and may be reused after a free, so a handle means a
//! communicator only between the call that returned it and the call that freed it. A
//! communicator is made collectively over a parent communicator: the k-th constructor
//! (Comm_dup, Comm_create, Comm_split, Cart_create, Cart_sub, Graph_create) each member
//! calls on the same parent is one collective operation, so MPI_Comm_split is resolved
//! by gathering the members' colours and keys of that k-th call. Groups are local
//! values: a group handle stands for a list of world ranks.
//!
//! [`CommBuilder`] is fed each rank's calls in order (ranks in any interleaving) and
//! checks at once, with the file and byte offset, that every communicator and group a
//! call names exists on that rank at that point; [`CommBuilder::finish`] then plays the
//! ranks' constructors against each other and returns a [`CommTable`]. The values the
//! trace records (Comm_size, Comm_rank, Group_size, Group_rank, Group_translate_ranks,
//! the comparisons, and MPI_COMM_NULL results) are checked against the resolution.
//!
//! Not resolved (asking for their ranks is an error naming the call that made them):
//! intercommunicators and what is made from them, groups of windows, files and remote
//! groups, and communicators whose constructor some member never calls (a partial
//! trace). Cart_create and Graph_create are taken not to renumber ranks.
//!
//! Not here: decoding records ([`crate::trace::dumpi`]), matching messages ([`crate::mpi_semantics::matching`]).

use crate::foundation::error::{Error, Result};
use crate::trace::dumpi::{Args, Call, DumpiFile, SetOp};
use std::collections::HashMap;
use std::path::Path;

/// DUMPI's MPI_COMM_NULL.
pub const COMM_NULL: i16 = 1;
/// DUMPI's MPI_COMM_WORLD.
pub const COMM_WORLD: i16 = 2;
/// DUMPI's MPI_COMM_SELF.
pub const COMM_SELF: i16 = 3;
/// DUMPI's MPI_GROUP_NULL.
pub const GROUP_NULL: i16 = 1;
/// DUMPI's MPI_GROUP_EMPTY.
pub const GROUP_EMPTY: i16 = 2;

/// DUMPI's comparison results (MPI_IDENT, MPI_CONGRUENT, MPI_SIMILAR, MPI_UNEQUAL).
const IDENT: u8 = 1;
const CONGRUENT: u8 = 2;
const SIMILAR: u8 = 3;
const UNEQUAL: u8 = 4;

/// A communicator's identity in a [`CommTable`]: the same on every member, whatever
/// handle each member knows it by. 0 is MPI_COMM_WORLD, 1 + r rank r's MPI_COMM_SELF.
pub type CommId = usize;

/// A rank-local communicator or group: the n-th one the rank made (handles are
/// rank-local names for these, valid between their making and their freeing).
type Slot = usize;

/// How a collective constructor makes its communicator.
#[derive(Clone, Debug)]
enum Make {
    Dup,
    Split { color: i32, key: i32 },
    Create { group: Slot },
    Cart { dims: Vec<i32> },
    CartSub { remain: Vec<i32> },
    Graph { nodes: i32 },
}

/// How a group is made from others.
#[derive(Clone, Debug)]
enum GroupMake {
    OfComm(Slot),
    Incl(Slot, Vec<i32>),
    Excl(Slot, Vec<i32>),
    RangeIncl(Slot, Vec<[i32; 3]>),
    RangeExcl(Slot, Vec<[i32; 3]>),
    Algebra(SetOp, Slot, Slot),
    Foreign(&'static str),
}

/// A recorded result to hold the resolution against.
#[derive(Clone, Debug)]
enum Check {
    CommSize(Slot, i32),
    CommRank(Slot, i32),
    CommCompare(Slot, Slot, u8),
    GroupSize(Slot, i32),
    GroupRank(Slot, i32),
    GroupCompare(Slot, Slot, u8),
    Translate(Slot, Vec<i32>, Slot, Vec<i32>),
}

#[derive(Clone, Debug)]
enum Ev {
    /// A collective constructor over `parent`; `new` is None when the rank recorded
    /// MPI_COMM_NULL.
    Make {
        parent: Slot,
        new: Option<Slot>,
        how: Make,
    },
    /// An intercommunicator (or a communicator made from one): not resolved.
    Opaque {
        new: Slot,
    },
    Group {
        new: Slot,
        how: GroupMake,
    },
    Check(Check),
}

/// One event of a rank: a call that makes communicators or groups, or a checkable one.
#[derive(Clone, Debug)]
struct Event {
    offset: u64,
    name: &'static str,
    ev: Ev,
}

/// Per communicator handle, from which call on it names which slot (None: freed), in
/// call order.
type Timeline = HashMap<i16, Vec<(usize, Option<Slot>)>>;

/// A live handle: its slot and how many times the library returned it unfreed (MPI
/// libraries hand out the same group handle again for the same group, e.g.
/// MPI_Comm_group twice on one communicator, and each needs its MPI_Group_free).
#[derive(Clone, Copy, Debug)]
struct Live {
    slot: Slot,
    refs: u32,
}

/// What the builder knows of one rank as its calls are pushed.
#[derive(Debug, Default)]
struct RankLog {
    name: String,
    /// Byte offset of each call pushed.
    offsets: Vec<u64>,
    comms: HashMap<i16, Live>,
    groups: HashMap<i16, Live>,
    /// Handles freed: where (for errors about using them afterwards).
    comm_freed: HashMap<i16, u64>,
    group_freed: HashMap<i16, u64>,
    comm_slots: usize,
    group_slots: usize,
    timeline: Timeline,
    events: Vec<Event>,
}

/// Feeds ranks' calls, in order within each rank, into a [`CommTable`].
#[derive(Debug)]
pub struct CommBuilder {
    ranks: Vec<RankLog>,
}

impl CommBuilder {
    /// A builder for `names.len()` ranks; `names[r]` stands for rank r in errors (its
    /// file).
    pub fn new(names: Vec<String>) -> Self {
        CommBuilder {
            ranks: names
                .into_iter()
                .map(|name| RankLog {
                    name,
                    // World and self are slots 0 and 1, the empty group slot 0.
                    comm_slots: 2,
                    group_slots: 1,
                    ..RankLog::default()
                })
                .collect(),
        }
    }

    /// Takes rank `rank`'s next call: checks that the communicators and groups it names
    /// exist on the rank (an error names the rank's file and the call's byte offset)
    /// and notes what it makes or frees.
    pub fn push(&mut self, rank: u32, call: &Call) -> Result<()> {
        let n = self.ranks.len();
        let log = self.ranks.get_mut(rank as usize).ok_or_else(|| {
            Error::Trace(format!("call pushed for rank {rank} of a {n}-rank trace"))
        })?;
        let index = log.offsets.len();
        log.offsets.push(call.offset);
        log.call(index, call)
    }

    /// Resolves every communicator and group across the ranks.
    pub fn finish(self) -> Result<CommTable> {
        Resolver::run(self.ranks)
    }
}

impl RankLog {
    fn err(&self, offset: u64, what: String) -> Error {
        Error::Trace(format!("{}: byte {offset}: {what}", self.name))
    }

    /// The slot a communicator handle names now.
    fn comm(&self, call: &Call, h: i16) -> Result<Slot> {
        match h {
            COMM_WORLD => return Ok(0),
            COMM_SELF => return Ok(1),
            _ => {}
        }
        if let Some(l) = self.comms.get(&h) {
            return Ok(l.slot);
        }
        let why = if h == COMM_NULL {
            "MPI_COMM_NULL".to_string()
        } else if let Some(at) = self.comm_freed.get(&h) {
            format!("communicator handle {h}, freed at byte {at}")
        } else {
            format!("communicator handle {h}, which this rank never created")
        };
        Err(self.err(call.offset, format!("{} on {why}", call.name())))
    }

    /// The slot a group handle names now.
    fn group(&self, call: &Call, h: i16) -> Result<Slot> {
        if h == GROUP_EMPTY {
            return Ok(0);
        }
        if let Some(l) = self.groups.get(&h) {
            return Ok(l.slot);
        }
        let why = if h == GROUP_NULL {
            "MPI_GROUP_NULL".to_string()
        } else if let Some(at) = self.group_freed.get(&h) {
            format!("group handle {h}, freed at byte {at}")
        } else {
            format!("group handle {h}, which this rank never created")
        };
        Err(self.err(call.offset, format!("{} on {why}", call.name())))
    }

    /// A communicator handle returned by the call at `index`: a new slot, or the same
    /// handle again (one more reference).
    fn bind_comm(&mut self, index: usize, h: i16) -> Slot {
        let slot = self.comm_slots;
        self.comm_slots += 1;
        let refs = self.comms.get(&h).map_or(0, |l| l.refs);
        self.comms.insert(
            h,
            Live {
                slot,
                refs: refs + 1,
            },
        );
        self.comm_freed.remove(&h);
        self.timeline
            .entry(h)
            .or_default()
            .push((index + 1, Some(slot)));
        slot
    }

    fn bind_group(&mut self, h: i16) -> Slot {
        let slot = self.group_slots;
        self.group_slots += 1;
        let refs = self.groups.get(&h).map_or(0, |l| l.refs);
        self.groups.insert(
            h,
            Live {
                slot,
                refs: refs + 1,
            },
        );
        self.group_freed.remove(&h);
        slot
    }

    fn free_comm(&mut self, index: usize, call: &Call, h: i16) -> Result<()> {
        if h == COMM_WORLD || h == COMM_SELF {
            return Err(self.err(
                call.offset,
                format!("{} frees a predefined communicator ({h})", call.name()),
            ));
        }
        self.comm(call, h)?;
        let l = self.comms.get_mut(&h).expect("checked above");
        l.refs -= 1;
        if l.refs == 0 {
            self.comms.remove(&h);
            self.comm_freed.insert(h, call.offset);
            self.timeline.entry(h).or_default().push((index + 1, None));
        }
        Ok(())
    }

    fn free_group(&mut self, call: &Call, h: i16) -> Result<()> {
        if h == GROUP_EMPTY {
            return Ok(());
        }
        self.group(call, h)?;
        let l = self.groups.get_mut(&h).expect("checked above");
        l.refs -= 1;
        if l.refs == 0 {
            self.groups.remove(&h);
            self.group_freed.insert(h, call.offset);
        }
        Ok(())
    }

    fn event(&mut self, call: &Call, ev: Ev) {
        self.events.push(Event {
            offset: call.offset,
            name: call.name(),
            ev,
        });
    }

    /// A collective constructor: the parent checked, the new handle bound.
    fn make(&mut self, index: usize, call: &Call, parent: i16, new: i16, how: Make) -> Result<()> {
        let parent = self.comm(call, parent)?;
        let new = (new != COMM_NULL).then(|| self.bind_comm(index, new));
        self.event(call, Ev::Make { parent, new, how });
        Ok(())
    }

    fn new_group(&mut self, call: &Call, h: i16, how: GroupMake) {
        // MPI_GROUP_EMPTY returned is the predefined empty group; MPI_GROUP_NULL
        // (nothing) is not a group.
        if h != GROUP_EMPTY && h != GROUP_NULL {
            let new = self.bind_group(h);
            self.event(call, Ev::Group { new, how });
        }
    }

    fn call(&mut self, index: usize, call: &Call) -> Result<()> {
        match call.args {
            Args::CommDup { comm, newcomm } => self.make(index, call, comm, newcomm, Make::Dup)?,
            Args::CommSplit {
                comm,
                color,
                key,
                newcomm,
            } => self.make(index, call, comm, newcomm, Make::Split { color, key })?,
            Args::CommCreate {
                comm,
                group,
                newcomm,
            } => {
                let group = self.group(call, group)?;
                self.make(index, call, comm, newcomm, Make::Create { group })?
            }
            Args::CartCreate {
                comm,
                ref dims,
                newcomm,
                ..
            } => self.make(
                index,
                call,
                comm,
                newcomm,
                Make::Cart { dims: dims.clone() },
            )?,
            Args::CartSub {
                comm,
                ref remain_dims,
                newcomm,
            } => {
                let remain = remain_dims.clone();
                self.make(index, call, comm, newcomm, Make::CartSub { remain })?
            }
            Args::GraphCreate {
                comm,
                nodes,
                newcomm,
                ..
            } => self.make(index, call, comm, newcomm, Make::Graph { nodes })?,
            Args::Intercomm { comm, newcomm } => {
                if let Some(c) = comm {
                    self.comm(call, c)?;
                }
                if newcomm != COMM_NULL {
                    let new = self.bind_comm(index, newcomm);
                    self.event(call, Ev::Opaque { new });
                }
            }
            Args::CommFree { comm } => self.free_comm(index, call, comm)?,
            Args::CommGroup { comm, group } => {
                let c = self.comm(call, comm)?;
                self.new_group(call, group, GroupMake::OfComm(c));
            }
            Args::ForeignGroup { group, .. } => {
                let why = match call.label {
                    90 => "the remote group of an intercommunicator",
                    148 => "a window's group",
                    _ => "a file's group",
                };
                self.new_group(call, group, GroupMake::Foreign(why));
            }
            Args::GroupIncl {
                group,
                ref ranks,
                newgroup,
            } => {
                let g = self.group(call, group)?;
                self.new_group(call, newgroup, GroupMake::Incl(g, ranks.clone()));
            }
            Args::GroupExcl {
                group,
                ref ranks,
                newgroup,
            } => {
                let g = self.group(call, group)?;
                self.new_group(call, newgroup, GroupMake::Excl(g, ranks.clone()));
            }
            Args::GroupRangeIncl {
                group,
                ref ranges,
                newgroup,
            } => {
                let g = self.group(call, group)?;
                self.new_group(call, newgroup, GroupMake::RangeIncl(g, ranges.clone()));
            }
            Args::GroupRangeExcl {
                group,
                ref ranges,
                newgroup,
            } => {
                let g = self.group(call, group)?;
                self.new_group(call, newgroup, GroupMake::RangeExcl(g, ranges.clone()));
            }
            Args::GroupAlgebra {
                op,
                group1,
                group2,
                newgroup,
            } => {
                let (a, b) = (self.group(call, group1)?, self.group(call, group2)?);
                self.new_group(call, newgroup, GroupMake::Algebra(op, a, b));
            }
            Args::GroupFree { group } => self.free_group(call, group)?,
            Args::CommQuery { comm, value } => {
                let c = self.comm(call, comm)?;
                let check = if call.label == 81 {
                    Check::CommSize(c, value)
                } else {
                    Check::CommRank(c, value)
                };
                self.event(call, Ev::Check(check));
            }
            Args::CommCompare {
                comm1,
                comm2,
                result,
            } => {
                let (a, b) = (self.comm(call, comm1)?, self.comm(call, comm2)?);
                self.event(call, Ev::Check(Check::CommCompare(a, b, result)));
            }
            Args::GroupQuery { group, value } => {
                let g = self.group(call, group)?;
                let check = if call.label == 68 {
                    Check::GroupSize(g, value)
                } else {
                    Check::GroupRank(g, value)
                };
                self.event(call, Ev::Check(check));
            }
            Args::GroupCompare {
                group1,
                group2,
                result,
            } => {
                let (a, b) = (self.group(call, group1)?, self.group(call, group2)?);
                self.event(call, Ev::Check(Check::GroupCompare(a, b, result)));
            }
            Args::GroupTranslateRanks {
                group1,
                ref ranks1,
                group2,
                ref ranks2,
            } => {
                let (a, b) = (self.group(call, group1)?, self.group(call, group2)?);
                let check = Check::Translate(a, ranks1.clone(), b, ranks2.clone());
                self.event(call, Ev::Check(check));
            }
            // MPI_Comm_disconnect frees its communicator like MPI_Comm_free.
            Args::NoTraffic { ref fields, .. } if call.label == 132 => {
                if let [crate::trace::dumpi::Field::Handle(h)] = fields[..] {
                    self.free_comm(index, call, h)?;
                }
            }
            ref a => {
                if let Some(c) = a.comm() {
                    self.comm(call, c)?;
                }
            }
        }
        Ok(())
    }
}

/// A resolved communicator.
#[derive(Clone, Debug)]
struct CommObj {
    /// World ranks in communicator-rank order.
    members: Vec<u32>,
    /// Communicator rank of each member.
    index: HashMap<u32, u32>,
    /// Cartesian dimensions (Cart_create, Cart_sub, and their duplicates).
    dims: Option<Vec<i32>>,
    /// Why its members are unknown, when they are.
    unknown: Option<String>,
}

impl CommObj {
    fn new(members: Vec<u32>, dims: Option<Vec<i32>>) -> Self {
        let index = members
            .iter()
            .enumerate()
            .map(|(i, &m)| (m, i as u32))
            .collect();
        CommObj {
            members,
            index,
            dims,
            unknown: None,
        }
    }
    fn unknown(why: String) -> Self {
        CommObj {
            members: Vec::new(),
            index: HashMap::new(),
            dims: None,
            unknown: Some(why),
        }
    }
}

/// Every communicator of a trace, and which one each rank's handles name when.
#[derive(Debug)]
pub struct CommTable {
    names: Vec<String>,
    offsets: Vec<Vec<u64>>,
    timelines: Vec<Timeline>,
    /// Per rank, the communicator of each slot.
    slots: Vec<Vec<CommId>>,
    comms: Vec<CommObj>,
}

impl CommTable {
    /// Resolves the communicators of ranks' calls (`per_rank_calls[r]`: rank r's calls in
    /// order); errors name rank r "rank r".
    pub fn build(per_rank_calls: &[Vec<Call>]) -> Result<Self> {
        let names = (0..per_rank_calls.len())
            .map(|r| format!("rank {r}"))
            .collect();
        let mut b = CommBuilder::new(names);
        for (r, calls) in per_rank_calls.iter().enumerate() {
            for c in calls {
                b.push(r as u32, c)?;
            }
        }
        b.finish()
    }

    /// Reads the DUMPI trace `path` names (its `.meta` or a rank file, as
    /// [`crate::trace::dumpi::rank_files`]) and resolves its communicators.
    pub fn load(path: &Path) -> Result<Self> {
        let (_, files) = crate::trace::dumpi::rank_files(path)?;
        let mut b = CommBuilder::new(files.iter().map(|f| f.display().to_string()).collect());
        for (r, f) in files.iter().enumerate() {
            let mut file = DumpiFile::open(f)?;
            while let Some(c) = file.next_call()? {
                b.push(r as u32, &c)?;
            }
        }
        b.finish()
    }

    /// Ranks in the trace.
    pub fn ranks(&self) -> u32 {
        self.names.len() as u32
    }

    /// Communicators made in all (world and every rank's self included).
    pub fn communicators(&self) -> usize {
        self.comms.len()
    }

    /// The communicator rank `rank`'s handle `comm` names when the rank makes its call
    /// number `at` (0-based, every call counted; the state before that call acts, so a
    /// constructor's new handle is valid from the next call and MPI_Comm_free's handle
    /// still at the free).
    pub fn comm_id(&self, rank: u32, comm: i16, at: usize) -> Result<CommId> {
        let r = rank as usize;
        let names = self.names.get(r).ok_or_else(|| {
            Error::Trace(format!("no rank {rank} in a {}-rank trace", self.ranks()))
        })?;
        let here = || match self.offsets[r].get(at) {
            Some(o) => format!("{names}: byte {o}"),
            None => format!("{names}: call #{at}"),
        };
        let slot = match comm {
            COMM_WORLD => Some(0),
            COMM_SELF => Some(1),
            _ => self.timelines[r].get(&comm).and_then(|t| {
                let i = t.partition_point(|&(from, _)| from <= at);
                if i == 0 {
                    None
                } else {
                    t[i - 1].1
                }
            }),
        };
        let slot = slot.ok_or_else(|| {
            Error::Trace(format!(
                "{}: communicator handle {comm} does not name a communicator there",
                here()
            ))
        })?;
        let id = *self.slots[r].get(slot).ok_or_else(|| {
            Error::Trace(format!(
                "{}: communicator handle {comm} was never resolved",
                here()
            ))
        })?;
        if let Some(why) = &self.comms[id].unknown {
            return Err(Error::Trace(format!(
                "{}: communicator handle {comm}: {why}",
                here()
            )));
        }
        Ok(id)
    }

    /// The world ranks of the communicator rank `rank`'s handle `comm` names at its call
    /// number `at` (see [`CommTable::comm_id`]), in communicator-rank order.
    pub fn world_ranks(&self, rank: u32, comm: i16, at: usize) -> Result<&[u32]> {
        let id = self.comm_id(rank, comm, at)?;
        Ok(&self.comms[id].members)
    }

    /// Rank `rank`'s rank in that communicator.
    pub fn comm_rank(&self, rank: u32, comm: i16, at: usize) -> Result<u32> {
        let id = self.comm_id(rank, comm, at)?;
        self.comms[id].index.get(&rank).copied().ok_or_else(|| {
            Error::Trace(format!(
                "{}: call #{at}: rank {rank} is not in communicator {comm}",
                self.names[rank as usize]
            ))
        })
    }

    /// The world ranks of communicator `id`, in communicator-rank order; None when it is
    /// not resolved (an intercommunicator, or a partial trace).
    pub fn members(&self, id: CommId) -> Option<&[u32]> {
        let c = self.comms.get(id)?;
        c.unknown.is_none().then_some(c.members.as_slice())
    }

    /// Why communicator `id`'s members are unknown, when they are.
    pub fn unresolved(&self, id: CommId) -> Option<&str> {
        self.comms.get(id)?.unknown.as_deref()
    }
}

/// A rank's group, as world ranks; or why it is not known.
#[derive(Clone, Debug)]
enum Grp {
    Known(Vec<u32>),
    Unknown(String),
}

/// What one member brings to a collective constructor.
#[derive(Clone, Debug)]
struct Part {
    rank: u32,
    offset: u64,
    name: &'static str,
    how: Make,
    /// Comm_create's group, as this member holds it.
    group: Option<Grp>,
}

/// One collective constructor being gathered: what each member of the parent brought.
#[derive(Debug)]
struct Gathering {
    parts: Vec<Option<Part>>,
    missing: usize,
}

/// The result of a collective constructor for each member of the parent: a
/// communicator or MPI_COMM_NULL; or, for all, one unresolved communicator.
#[derive(Clone, Debug)]
enum Outcome {
    Each(Vec<Option<CommId>>),
    Unresolved(CommId),
}

/// Where a rank stands in the resolution.
#[derive(Debug, Default)]
struct Cursor {
    next: usize,
    /// Communicator of each of the rank's slots.
    comms: Vec<CommId>,
    groups: Vec<Grp>,
    /// Constructors called so far on each parent.
    made: HashMap<CommId, usize>,
    /// The constructor (parent, k) the rank waits in.
    waiting: Option<(CommId, usize)>,
}

struct Resolver {
    logs: Vec<RankLog>,
    comms: Vec<CommObj>,
    cursors: Vec<Cursor>,
    gathering: HashMap<(CommId, usize), Gathering>,
    done: HashMap<(CommId, usize), Outcome>,
}

impl Resolver {
    fn run(logs: Vec<RankLog>) -> Result<CommTable> {
        let n = logs.len() as u32;
        let mut comms = vec![CommObj::new((0..n).collect(), None)];
        comms.extend((0..n).map(|r| CommObj::new(vec![r], None)));
        let cursors = (0..n as usize)
            .map(|r| Cursor {
                comms: vec![0, 1 + r],
                groups: vec![Grp::Known(Vec::new())],
                ..Cursor::default()
            })
            .collect();
        let mut s = Resolver {
            logs,
            comms,
            cursors,
            gathering: HashMap::new(),
            done: HashMap::new(),
        };
        loop {
            let mut moved = false;
            for r in 0..s.logs.len() {
                moved |= s.advance(r)?;
            }
            if (0..s.logs.len()).all(|r| s.cursors[r].next == s.logs[r].events.len()) {
                break;
            }
            if !moved && !s.give_up() {
                return Err(Error::Trace(
                    "communicator resolution made no progress (an internal error)".into(),
                ));
            }
        }
        Ok(CommTable {
            names: s.logs.iter().map(|l| l.name.clone()).collect(),
            offsets: s
                .logs
                .iter_mut()
                .map(|l| std::mem::take(&mut l.offsets))
                .collect(),
            timelines: s
                .logs
                .iter_mut()
                .map(|l| std::mem::take(&mut l.timeline))
                .collect(),
            slots: s.cursors.into_iter().map(|c| c.comms).collect(),
            comms: s.comms,
        })
    }

    /// Every rank is waiting in a constructor some member never reaches (a partial
    /// trace, or an inconsistent one): those constructors make unresolved communicators.
    fn give_up(&mut self) -> bool {
        let mut keys: Vec<_> = self.gathering.keys().copied().collect();
        if keys.is_empty() {
            return false;
        }
        keys.sort_unstable();
        for key in keys {
            let g = self.gathering.remove(&key).expect("listed");
            let first = g.parts.iter().flatten().next().expect("someone waits");
            let absent: Vec<String> = self.comms[key.0]
                .members
                .iter()
                .zip(&g.parts)
                .filter(|(_, p)| p.is_none())
                .map(|(m, _)| m.to_string())
                .collect();
            let why = format!(
                "made by {} at byte {} of {}, which world rank(s) {} of its parent never \
                 call (a partial trace?)",
                first.name,
                first.offset,
                self.logs[first.rank as usize].name,
                absent.join(", ")
            );
            self.comms.push(CommObj::unknown(why));
            self.done
                .insert(key, Outcome::Unresolved(self.comms.len() - 1));
        }
        true
    }

    fn err(&self, r: usize, offset: u64, what: String) -> Error {
        self.logs[r].err(offset, what)
    }

    /// Plays rank `r`'s events until it waits in a constructor or ends; true if it
    /// moved.
    fn advance(&mut self, r: usize) -> Result<bool> {
        let mut moved = false;
        while self.cursors[r].next < self.logs[r].events.len() {
            let e = self.logs[r].events[self.cursors[r].next].clone();
            match e.ev {
                Ev::Make {
                    parent,
                    new,
                    ref how,
                } => {
                    let p = self.cursors[r].comms[parent];
                    if let Some(why) = &self.comms[p].unknown {
                        // Nothing to gather over: what is made is unknown too.
                        if let Some(new) = new {
                            let why = format!(
                                "made by {} (byte {} of {}) from an unresolved \
                                 communicator: {why}",
                                e.name, e.offset, self.logs[r].name
                            );
                            self.comms.push(CommObj::unknown(why));
                            self.set_comm(r, new, self.comms.len() - 1);
                        }
                    } else {
                        let key = match self.cursors[r].waiting {
                            Some(key) => key,
                            None => {
                                let k = self.cursors[r].made.entry(p).or_insert(0);
                                let key = (p, *k);
                                *k += 1;
                                self.join(r, key, &e, how.clone())?;
                                key
                            }
                        };
                        let Some(out) = self.done.get(&key) else {
                            self.cursors[r].waiting = Some(key);
                            return Ok(moved);
                        };
                        self.cursors[r].waiting = None;
                        let got = match out {
                            Outcome::Unresolved(id) => new.map(|_| *id),
                            Outcome::Each(v) => v[self.comms[p].index[&(r as u32)] as usize],
                        };
                        match (new, got) {
                            (Some(new), Some(id)) => self.set_comm(r, new, id),
                            (None, None) => {}
                            (Some(_), None) => {
                                return Err(self.err(
                                    r,
                                    e.offset,
                                    format!(
                                        "{} returned a communicator, but by the other \
                                         ranks' calls this rank is in none",
                                        e.name
                                    ),
                                ))
                            }
                            (None, Some(id)) => {
                                return Err(self.err(
                                    r,
                                    e.offset,
                                    format!(
                                        "{} returned MPI_COMM_NULL, but by the other ranks' \
                                         calls this rank is in a communicator of world \
                                         ranks {:?}",
                                        e.name, self.comms[id].members
                                    ),
                                ))
                            }
                        }
                    }
                }
                Ev::Opaque { new } => {
                    let why = format!(
                        "an intercommunicator or made from one ({} at byte {} of {}), which \
                         routemu does not resolve",
                        e.name, e.offset, self.logs[r].name
                    );
                    self.comms.push(CommObj::unknown(why));
                    self.set_comm(r, new, self.comms.len() - 1);
                }
                Ev::Group { new, ref how } => {
                    let g = self.group(r, &e, how)?;
                    let groups = &mut self.cursors[r].groups;
                    if groups.len() <= new {
                        groups.resize(new + 1, Grp::Unknown(String::new()));
                    }
                    groups[new] = g;
                }
                Ev::Check(ref c) => self.check(r, &e, c)?,
            }
            self.cursors[r].next += 1;
            moved = true;
        }
        Ok(moved)
    }

    fn set_comm(&mut self, r: usize, slot: Slot, id: CommId) {
        let comms = &mut self.cursors[r].comms;
        if comms.len() <= slot {
            comms.resize(slot + 1, 0);
        }
        comms[slot] = id;
    }

    /// Rank `r` joins the constructor `key`; the last member to join makes the
    /// communicators.
    fn join(&mut self, r: usize, key: (CommId, usize), e: &Event, how: Make) -> Result<()> {
        if let Some(Outcome::Unresolved(_)) = self.done.get(&key) {
            return Ok(());
        }
        let p = key.0;
        let group = match how {
            Make::Create { group } => Some(self.cursors[r].groups[group].clone()),
            _ => None,
        };
        let size = self.comms[p].members.len();
        let pos = self.comms[p].index[&(r as u32)] as usize;
        let g = self.gathering.entry(key).or_insert_with(|| Gathering {
            parts: vec![None; size],
            missing: size,
        });
        g.parts[pos] = Some(Part {
            rank: r as u32,
            offset: e.offset,
            name: e.name,
            how,
            group,
        });
        g.missing -= 1;
        if g.missing == 0 {
            let g = self.gathering.remove(&key).expect("just filled");
            let parts: Vec<Part> = g.parts.into_iter().map(|p| p.expect("all")).collect();
            let out = self.make(p, &parts)?;
            self.done.insert(key, out);
        }
        Ok(())
    }

    /// The communicators a constructor makes, from every member's part (in parent-rank
    /// order).
    fn make(&mut self, p: CommId, parts: &[Part]) -> Result<Outcome> {
        let first = &parts[0];
        let bad = |s: &Self, part: &Part, what: String| {
            s.err(
                part.rank as usize,
                part.offset,
                format!("{} {what}", part.name),
            )
        };
        for part in parts {
            if part.name != first.name {
                return Err(bad(
                    self,
                    part,
                    format!(
                        "is this rank's call of a collective constructor over a \
                         communicator where rank {} of it calls {} (byte {} of {})",
                        first.rank, first.name, first.offset, self.logs[first.rank as usize].name
                    ),
                ));
            }
        }
        let parent = self.comms[p].clone();
        let n = parent.members.len();
        let mut each: Vec<Option<CommId>> = vec![None; n];
        match &first.how {
            Make::Dup => {
                self.comms
                    .push(CommObj::new(parent.members.clone(), parent.dims.clone()));
                each.fill(Some(self.comms.len() - 1));
            }
            Make::Split { .. } => {
                let mut by_color: HashMap<i32, Vec<(i32, usize)>> = HashMap::new();
                for (i, part) in parts.iter().enumerate() {
                    if let Make::Split { color, key } = part.how {
                        if color >= 0 {
                            by_color.entry(color).or_default().push((key, i));
                        }
                    }
                }
                let mut colors: Vec<_> = by_color.into_iter().collect();
                colors.sort_unstable_by_key(|(c, _)| *c);
                for (_, mut v) in colors {
                    v.sort_unstable();
                    let members = v.iter().map(|&(_, i)| parent.members[i]).collect();
                    self.comms.push(CommObj::new(members, None));
                    for (_, i) in v {
                        each[i] = Some(self.comms.len() - 1);
                    }
                }
            }
            Make::Create { .. } => {
                let mut made: HashMap<Vec<u32>, CommId> = HashMap::new();
                for (i, part) in parts.iter().enumerate() {
                    let members = match &part.group {
                        Some(Grp::Known(m)) => m,
                        Some(Grp::Unknown(why)) => {
                            self.comms.push(CommObj::unknown(format!(
                                "made by {} (byte {} of {}) from an unknown group: {why}",
                                part.name, part.offset, self.logs[part.rank as usize].name
                            )));
                            return Ok(Outcome::Unresolved(self.comms.len() - 1));
                        }
                        None => unreachable!("Comm_create parts carry their group"),
                    };
                    if let Some(m) = members.iter().find(|m| !parent.index.contains_key(m)) {
                        return Err(bad(
                            self,
                            part,
                            format!("names a group with world rank {m}, not in its communicator"),
                        ));
                    }
                    if !members.contains(&part.rank) {
                        continue;
                    }
                    // Every member of the group must have given the same group.
                    for m in members {
                        let other = &parts[parent.index[m] as usize];
                        if !matches!(&other.group, Some(Grp::Known(o)) if o == members) {
                            return Err(bad(
                                self,
                                part,
                                format!(
                                    "makes a communicator of world ranks {members:?}, but \
                                     world rank {m} gives another group (byte {} of {})",
                                    other.offset, self.logs[*m as usize].name
                                ),
                            ));
                        }
                    }
                    let id = *made.entry(members.clone()).or_insert_with(|| {
                        self.comms.push(CommObj::new(members.clone(), None));
                        self.comms.len() - 1
                    });
                    each[i] = Some(id);
                }
            }
            Make::Cart { dims } => {
                let size =
                    self.grid(parts, |h| matches!(h, Make::Cart { dims: d } if d == dims))?;
                let cells = dims.iter().try_fold(1usize, |a, &d| {
                    usize::try_from(d).ok().and_then(|d| a.checked_mul(d))
                });
                let cells = match cells {
                    Some(c) if c <= n => c,
                    _ => {
                        return Err(bad(
                            self,
                            first,
                            format!("asks for a grid of {dims:?} over {size} ranks"),
                        ))
                    }
                };
                self.comms.push(CommObj::new(
                    parent.members[..cells].to_vec(),
                    Some(dims.clone()),
                ));
                each[..cells].fill(Some(self.comms.len() - 1));
            }
            Make::Graph { nodes } => {
                self.grid(
                    parts,
                    |h| matches!(h, Make::Graph { nodes: m } if m == nodes),
                )?;
                let cells = match usize::try_from(*nodes) {
                    Ok(c) if c <= n => c,
                    _ => {
                        return Err(bad(
                            self,
                            first,
                            format!("asks for a graph of {nodes} nodes over {n} ranks"),
                        ))
                    }
                };
                self.comms
                    .push(CommObj::new(parent.members[..cells].to_vec(), None));
                each[..cells].fill(Some(self.comms.len() - 1));
            }
            Make::CartSub { remain } => {
                self.grid(
                    parts,
                    |h| matches!(h, Make::CartSub { remain: m } if m == remain),
                )?;
                let Some(dims) = parent.dims.clone() else {
                    return Err(bad(
                        self,
                        first,
                        "on a communicator without a Cartesian topology".into(),
                    ));
                };
                let cells = dims.iter().map(|&d| d.max(0) as usize).product::<usize>();
                if dims.len() != remain.len() || dims.iter().any(|&d| d <= 0) || cells != n {
                    return Err(bad(
                        self,
                        first,
                        format!("keeps dimensions {remain:?} of a {dims:?} grid"),
                    ));
                }
                // Ranks sharing their coordinates in the dropped dimensions form one
                // communicator, in the order of their Cartesian (row-major) ranks.
                let mut by_rest: HashMap<Vec<i32>, Vec<usize>> = HashMap::new();
                for i in 0..n {
                    let mut rest = Vec::new();
                    let mut x = i;
                    for (k, &d) in dims.iter().enumerate().rev() {
                        let c = (x % d as usize) as i32;
                        x /= d as usize;
                        if remain[k] == 0 {
                            rest.push(c);
                        }
                    }
                    by_rest.entry(rest).or_default().push(i);
                }
                let kept: Vec<i32> = dims
                    .iter()
                    .zip(remain)
                    .filter(|(_, &k)| k != 0)
                    .map(|(&d, _)| d)
                    .collect();
                let mut subs: Vec<_> = by_rest.into_values().collect();
                subs.sort_unstable();
                for v in subs {
                    let members = v.iter().map(|&i| parent.members[i]).collect();
                    self.comms.push(CommObj::new(members, Some(kept.clone())));
                    for i in v {
                        each[i] = Some(self.comms.len() - 1);
                    }
                }
            }
        }
        Ok(Outcome::Each(each))
    }

    /// Checks that every member gave the same topology arguments; the parent's size.
    fn grid(&self, parts: &[Part], same: impl Fn(&Make) -> bool) -> Result<usize> {
        let first = &parts[0];
        if let Some(part) = parts.iter().find(|p| !same(&p.how)) {
            return Err(self.err(
                part.rank as usize,
                part.offset,
                format!(
                    "{} with {:?}, but world rank {} gives {:?} (byte {} of {})",
                    part.name,
                    part.how,
                    first.rank,
                    first.how,
                    first.offset,
                    self.logs[first.rank as usize].name
                ),
            ));
        }
        Ok(parts.len())
    }

    /// The members of a group being made.
    fn group(&self, r: usize, e: &Event, how: &GroupMake) -> Result<Grp> {
        let groups = &self.cursors[r].groups;
        let known = |s: Slot| -> std::result::Result<&Vec<u32>, String> {
            match &groups[s] {
                Grp::Known(m) => Ok(m),
                Grp::Unknown(why) => Err(why.clone()),
            }
        };
        let bad = |what: String| self.err(r, e.offset, format!("{} {what}", e.name));
        // Ranks of a group, each valid and none twice.
        let pick = |g: &Vec<u32>, ranks: &mut dyn Iterator<Item = i64>| -> Result<Vec<usize>> {
            let mut seen = vec![false; g.len()];
            let mut v = Vec::new();
            for x in ranks {
                let i = usize::try_from(x)
                    .ok()
                    .filter(|&i| i < g.len())
                    .ok_or_else(|| bad(format!("names rank {x} of a group of {}", g.len())))?;
                if std::mem::replace(&mut seen[i], true) {
                    return Err(bad(format!("names rank {x} twice")));
                }
                v.push(i);
            }
            Ok(v)
        };
        let ranged = |ranges: &[[i32; 3]]| -> Result<Vec<i64>> {
            let mut v = Vec::new();
            for &[first, last, stride] in ranges {
                if stride == 0 {
                    return Err(bad(format!("has a range ({first}, {last}, 0)")));
                }
                let (mut x, last, stride) = (first as i64, last as i64, stride as i64);
                while (stride > 0 && x <= last) || (stride < 0 && x >= last) {
                    v.push(x);
                    if v.len() > 1 << 24 {
                        return Err(bad("has ranges of more than 2^24 ranks".into()));
                    }
                    x += stride;
                }
            }
            Ok(v)
        };
        // Incl and RangeIncl keep the ranks named, in that order; Excl and RangeExcl
        // keep the others, in the group's order.
        let select = |g: Slot, ranks: Vec<i64>, incl: bool| -> Result<Grp> {
            let g = match known(g) {
                Ok(g) => g,
                Err(why) => return Ok(Grp::Unknown(why)),
            };
            let picked = pick(g, &mut ranks.into_iter())?;
            Ok(Grp::Known(if incl {
                picked.into_iter().map(|i| g[i]).collect()
            } else {
                let mut keep = vec![true; g.len()];
                for i in picked {
                    keep[i] = false;
                }
                g.iter()
                    .zip(keep)
                    .filter(|(_, k)| *k)
                    .map(|(&m, _)| m)
                    .collect()
            }))
        };
        Ok(match how {
            GroupMake::OfComm(c) => {
                let c = &self.comms[self.cursors[r].comms[*c]];
                match &c.unknown {
                    None => Grp::Known(c.members.clone()),
                    Some(why) => {
                        Grp::Unknown(format!("the group of an unresolved communicator: {why}"))
                    }
                }
            }
            GroupMake::Foreign(why) => Grp::Unknown(format!(
                "{why} ({} at byte {} of {}), which the trace does not tell",
                e.name, e.offset, self.logs[r].name
            )),
            GroupMake::Incl(g, ranks) => select(*g, ranks_of(ranks), true)?,
            GroupMake::Excl(g, ranks) => select(*g, ranks_of(ranks), false)?,
            GroupMake::RangeIncl(g, rs) => select(*g, ranged(rs)?, true)?,
            GroupMake::RangeExcl(g, rs) => select(*g, ranged(rs)?, false)?,
            GroupMake::Algebra(op, a, b) => {
                let (a, b) = match (known(*a), known(*b)) {
                    (Ok(a), Ok(b)) => (a, b),
                    (Err(why), _) | (_, Err(why)) => return Ok(Grp::Unknown(why)),
                };
                Grp::Known(match op {
                    SetOp::Union => a
                        .iter()
                        .chain(b.iter().filter(|m| !a.contains(m)))
                        .copied()
                        .collect(),
                    SetOp::Intersection => a.iter().filter(|m| b.contains(m)).copied().collect(),
                    SetOp::Difference => a.iter().filter(|m| !b.contains(m)).copied().collect(),
                })
            }
        })
    }

    /// Holds a recorded result against the resolution (unknown communicators and groups
    /// are not checked).
    fn check(&self, r: usize, e: &Event, c: &Check) -> Result<()> {
        let cur = &self.cursors[r];
        let comm = |s: Slot| {
            let c = &self.comms[cur.comms[s]];
            c.unknown.is_none().then_some(c)
        };
        let group = |s: Slot| match &cur.groups[s] {
            Grp::Known(m) => Some(m),
            Grp::Unknown(_) => None,
        };
        let me = r as u32;
        let position = |m: &[u32], x: u32| m.iter().position(|&y| y == x).map(|p| p as i32);
        let compare = |a: &[u32], b: &[u32]| {
            if a == b {
                IDENT
            } else {
                let (mut x, mut y) = (a.to_vec(), b.to_vec());
                x.sort_unstable();
                y.sort_unstable();
                if x == y {
                    SIMILAR
                } else {
                    UNEQUAL
                }
            }
        };
        let mismatch = |what: String| {
            Err(self.err(
                r,
                e.offset,
                format!(
                    "{} {what} (the communicators resolved disagree with the trace)",
                    e.name
                ),
            ))
        };
        match c {
            Check::CommSize(s, v) => {
                if let Some(c) = comm(*s) {
                    if c.members.len() as i64 != *v as i64 {
                        return mismatch(format!(
                            "recorded size {v}, but the communicator holds world ranks {:?}",
                            c.members
                        ));
                    }
                }
            }
            Check::CommRank(s, v) => {
                if let Some(c) = comm(*s) {
                    if c.index.get(&me).map(|&i| i as i32) != Some(*v) {
                        return mismatch(format!(
                            "recorded rank {v}, but the communicator holds world ranks {:?}",
                            c.members
                        ));
                    }
                }
            }
            Check::CommCompare(a, b, v) => {
                if let (Some(x), Some(y)) = (comm(*a), comm(*b)) {
                    let want = if cur.comms[*a] == cur.comms[*b] {
                        IDENT
                    } else {
                        match compare(&x.members, &y.members) {
                            IDENT => CONGRUENT,
                            other => other,
                        }
                    };
                    if want != *v {
                        return mismatch(format!(
                            "recorded result {v}, but world ranks {:?} and {:?} give {want}",
                            x.members, y.members
                        ));
                    }
                }
            }
            Check::GroupSize(s, v) => {
                if let Some(g) = group(*s) {
                    if g.len() as i64 != *v as i64 {
                        return mismatch(format!("recorded size {v} of world ranks {g:?}"));
                    }
                }
            }
            Check::GroupRank(s, v) => {
                if let Some(g) = group(*s) {
                    let ok = match position(g, me) {
                        Some(p) => p == *v,
                        None => *v < 0,
                    };
                    if !ok {
                        return mismatch(format!("recorded rank {v} in world ranks {g:?}"));
                    }
                }
            }
            Check::GroupCompare(a, b, v) => {
                if let (Some(x), Some(y)) = (group(*a), group(*b)) {
                    let want = compare(x, y);
                    if want != *v {
                        return mismatch(format!(
                            "recorded result {v}, but world ranks {x:?} and {y:?} give {want}"
                        ));
                    }
                }
            }
            Check::Translate(a, ranks1, b, ranks2) => {
                if let (Some(x), Some(y)) = (group(*a), group(*b)) {
                    for (&r1, &r2) in ranks1.iter().zip(ranks2) {
                        if r1 < 0 {
                            continue; // MPI_PROC_NULL translates to itself
                        }
                        let Some(&w) = x.get(r1 as usize) else {
                            return mismatch(format!("names rank {r1} of world ranks {x:?}"));
                        };
                        let ok = match position(y, w) {
                            Some(p) => p == r2,
                            None => r2 < 0,
                        };
                        if !ok {
                            return mismatch(format!(
                                "recorded rank {r1} of {x:?} as {r2} of {y:?}"
                            ));
                        }
                    }
                }
            }
        }
        Ok(())
    }
}

fn ranks_of(ranks: &[i32]) -> Vec<i64> {
    ranks.iter().map(|&r| r as i64).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(name: &str, offset: u64, args: Args) -> Call {
        Call {
            label: crate::trace::dumpi::label_of(name).unwrap(),
            offset,
            thread: None,
            cpu: None,
            wall: None,
            counters: Vec::new(),
            statuses: Vec::new(),
            args,
        }
    }

    /// The members of the communicator MPI_Comm_create makes, in an 8-rank world, from
    /// the group `how` derives from the world group; `members` are the ranks that record
    /// a communicator (the others MPI_COMM_NULL).
    fn created(how: Args, members: &[u32]) -> Result<Vec<u32>> {
        let mut calls: Vec<Vec<Call>> = (0..8).map(|_| Vec::new()).collect();
        for (r, v) in calls.iter_mut().enumerate() {
            v.push(call(
                "MPI_Comm_group",
                0,
                Args::CommGroup { comm: 2, group: 3 },
            ));
            v.push(call("MPI_Group_incl", 10, how.clone()));
            let member = members.contains(&(r as u32));
            v.push(call(
                "MPI_Comm_create",
                20,
                Args::CommCreate {
                    comm: 2,
                    group: 4,
                    newcomm: if member { 5 } else { COMM_NULL },
                },
            ));
        }
        let t = CommTable::build(&calls)?;
        Ok(t.world_ranks(members[0], 5, 3)?.to_vec())
    }

    #[test]
    fn rank_ranges_count_down_with_negative_strides_and_can_be_empty() {
        let incl = |ranges: Vec<[i32; 3]>| Args::GroupRangeIncl {
            group: 3,
            ranges,
            newgroup: 4,
        };
        // (7, 5, -1) is 7, 6, 5; (3, 1, 1) is nothing; (0, 4, 3) is 0, 3.
        let want = [7, 6, 5, 0, 3];
        let got = created(incl(vec![[7, 5, -1], [3, 1, 1], [0, 4, 3]]), &want).unwrap();
        assert_eq!(got, want);
        let excl = Args::GroupRangeExcl {
            group: 3,
            ranges: vec![[0, 7, 2]],
            newgroup: 4,
        };
        assert_eq!(created(excl, &[1, 3, 5, 7]).unwrap(), [1, 3, 5, 7]);
        // A zero stride, and a range reaching past the group, are refused.
        let e = created(incl(vec![[0, 3, 0]]), &[0])
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("rank 0: byte 10: MPI_Group_incl has a range (0, 3, 0)"),
            "{e}"
        );
        let e = created(incl(vec![[6, 9, 1]]), &[6])
            .unwrap_err()
            .to_string();
        assert!(e.contains("names rank 8 of a group of 8"), "{e}");
    }
}
