//! What every part of a running query shares: the [`QueryContext`] (index,
//! dataset, local vocabulary, turn clock, limits, memory account) that the
//! planner, the operators and the expression evaluator all read.
//!
//! Uses only the preemption contract (`suspend`), to save and restore the
//! query's `NOW()` and local vocabulary.

mod derived_extents;
mod limits;
mod memory;
mod query_context;
mod synonyms;

pub use derived_extents::{DerivedExtents, Extent};
pub use limits::{CancelFlag, Limits};
pub use memory::{row_vec_bytes, MemoryAccount, MemoryCharge, SharedMemory};
pub use query_context::{GraphSet, QueryContext};
pub use synonyms::SynonymTable;
