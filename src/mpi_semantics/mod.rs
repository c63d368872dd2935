//! MPI semantics: what an MPI trace's calls mean on a network. Communicators and groups
//! resolved to world ranks ([`comm`]), receives matched to sends as MPI matches them and
//! every rank's calls turned into messages with dependencies ([`matching`]) or into
//! programs for elastic replay (`trace::program`), collectives expanded into point-to-point
//! transfers by MPICH's algorithms ([`collectives`]). Decoding DUMPI's records is
//! `trace::dumpi`'s; replaying is `experiments::replay`'s.

pub mod collectives;
pub mod comm;
pub mod matching;
