//! Tern's SPARQL engine: queries parsed by `spargebra` are planned into a tree
//! of operators that exchange batches of ID columns and read the index.
//!
//! Entry point: [`Engine::query`].

mod construct;
mod context;
mod correlated;
mod describe;
mod engine;
mod error;
mod exec;
mod exists;
pub mod expr;
mod expr_eval;
mod join_order;
mod parsed;
mod per_graph;
mod plan;
mod profile;
mod results;
mod stream;
pub mod suspend;
pub mod token;
mod value_range;

pub use engine::{
    CancelFlag, Engine, EngineOptions, Execution, OptionalJoins, QueryRequest, Timings,
};
pub use error::EngineError;
pub use profile::{PlanProfile, Profile};
pub use results::{QueryOutcome, SolutionRow};
pub use stream::{Polled, RowBatch, SavedQuery, SolutionStream, TermBatch, TripleStream};
