//! Tern's index: 64-bit term IDs, the sorted vocabulary, the five compressed
//! permutations, per-predicate statistics, and the bulk builder that makes them.
//!
//! Reading starts at [`Index::open`]; building at [`builder::build`].

mod block_file;
pub mod builder;
pub mod delta;
mod error;
mod id;
pub mod index;
pub mod inline;
pub mod memo;
mod meta;
pub mod namespaces;
pub mod permutation;
mod snapshot;
pub mod stats;
pub mod store;
pub mod term_key;
mod term_refs;
mod thread_zstd;
mod varint;
pub mod vocab;

pub use delta::{MergedLookup, MergedScan};
pub use error::{IndexError, Result};
pub use id::{Id, Tag};
pub use index::{Index, ScanRange};
pub use meta::{IndexMeta, FORMAT_VERSION};
pub use permutation::{Batch, Permutation, Row};
pub use snapshot::Snapshot;
pub use stats::{PredicateStats, Statistics};
pub use store::{Store, StoreOptions, SyncPolicy};
pub use term_refs::TermRefs;
