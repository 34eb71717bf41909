//! The preemption contract (DESIGN.md, "Preemption"): what a suspended query
//! is made of and how it travels.
//!
//! A suspended operator tree becomes an [`OperatorState`] tree: small numbers
//! (scan positions, counters) that can travel in a continuation token, plus
//! references into a [`Stash`] for materialized state (hash tables, sorted
//! runs, groups) that stays on the server. The plan itself is not saved:
//! planning is deterministic for a query and an index, so resuming plans the
//! query again and hands each operator its state. A whole query's state is a
//! [`SavedQuery`]; a [`ContinuationToken`] seals one for a client.
//!
//! Uses nothing of the engine but its error type: operators (`exec`) and the
//! query runtime (`run`) build on it.

mod saved_query;
mod stash;
mod state;
mod token;

pub use saved_query::SavedQuery;
pub use stash::{Stash, StashSize, StashUsage};
pub use state::{bad_state, OperatorState};
pub use token::{ContinuationToken, TokenError, TokenKey};
