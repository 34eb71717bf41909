//! Tern's SPARQL engine: queries parsed by `spargebra` are planned into a tree
//! of operators that exchange batches of ID columns and read the index.
//!
//! Entry point: [`Engine::query`].

mod construct;
mod context;
mod describe;
mod engine;
mod error;
mod exec;
pub mod expr;
mod expr_eval;
mod plan;
mod results;

pub use engine::{Engine, EngineOptions};
pub use error::EngineError;
pub use results::{QueryOutcome, SolutionRow};
