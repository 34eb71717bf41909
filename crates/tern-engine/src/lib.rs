//! Tern's SPARQL engine: queries parsed by `spargebra` are planned into a tree
//! of operators that exchange batches of ID columns and read the index.
//!
//! The stages, each a folder, depend on each other one way (a folder uses
//! only those listed after it):
//!
//! - `update`: SPARQL Update, each operation applied to one store
//!   transaction (WHERE clauses evaluated by `run`);
//! - `run`: starting queries ([`Engine`]), their result streams, CONSTRUCT
//!   and DESCRIBE, suspending and resuming whole queries;
//! - `infer`: inference at query time (the schema compiled per snapshot,
//!   triple patterns rewritten into what entails them);
//! - `plan`: algebra → operator tree (join order, cardinality, FILTER,
//!   EXISTS, OPTIONAL and GRAPH handling);
//! - `exec`: the physical operators, one per file, and their runtime
//!   information;
//! - `expr`: SPARQL expressions, on terms and on rows of IDs;
//! - `context`: what every part of one running query shares;
//! - `suspend`: the preemption contract (operator state, stash, saved
//!   queries, continuation tokens);
//! - `error`: [`EngineError`].
//!
//! Entry points: [`Engine::query`], [`Engine::update`].

mod context;
mod error;
mod exec;
mod expr;
mod infer;
mod plan;
mod run;
mod suspend;
mod update;

// The public API: what `tern-server`, `tern-cli` and the tests use.
pub use context::CancelFlag; // stops a running query from another thread
pub use error::EngineError; // every failure of the engine
pub use exec::{PlanProfile, Profile}; // runtime information per operator (EXPLAIN)
pub use infer::{Inference, InferenceMode, SameAsAnswers}; // query-time inference settings
pub use plan::OptionalJoins; // how OPTIONAL is evaluated (an engine option)
pub use run::init_thread_pool; // sizes rayon's threads for queries
pub use run::Engine; // parses, plans, starts and resumes queries
pub use run::EngineOptions; // the engine's defaults: timeout, memory, default graph
pub use run::Execution; // a started query: outcome, timings, profile
pub use run::Polled; // what a time-sliced stream gives within a turn
pub use run::QueryMemory; // what a query's operators held at most (EXPLAIN)
pub use run::QueryOutcome; // solutions, a boolean or a graph
pub use run::QueryRequest; // one query's dataset, limits and cancellation flag
pub use run::RowBatch; // solutions as IDs, decoded slice by slice by writers
pub use run::SolutionRow; // one solution as terms
pub use run::SolutionStream; // the lazy solutions of a query
pub use run::TermBatch; // a decoded slice of a RowBatch
pub use run::Timings; // parse and plan times
pub use run::TripleStream; // the lazy triples of CONSTRUCT and DESCRIBE
pub use run::QUERY_STACK_BYTES; // the stack a thread that runs queries needs
pub use run::{MAX_ALGEBRA_DEPTH, MAX_PARSE_WORK, MAX_QUERY_BYTES, MAX_TEXT_NESTING}; // query size limits
pub use suspend::ContinuationToken; // a suspended query, sealed for a client
pub use suspend::SavedQuery; // where a suspended query stopped
pub use suspend::Stash; // materialized state of suspended queries, by handle
pub use suspend::StashUsage; // what a stash holds (for metrics)
pub use suspend::TokenError; // why a continuation token was refused
pub use suspend::TokenKey; // the key that signs continuation tokens
pub use update::{graph_exists, GraphWrite}; // the Graph Store Protocol's writes
pub use update::{parse as parse_update, HttpLoad, LoadPolicy, UpdateReport, UpdateRequest}; // SPARQL Update
