//! Running queries: the [`Engine`] parses a query (`spargebra`, cached),
//! builds its [`QueryContext`](crate::context::QueryContext), has the
//! planner make its operator tree and hands back its results as streams:
//! solutions in ID batches decoded by whoever writes them, and the triples
//! of CONSTRUCT and DESCRIBE. Suspending and resuming a query as a whole
//! happens here too, on top of the operators' own saved state.
//!
//! Uses the planner (`plan`), the operators (`exec`) and the preemption
//! contract (`suspend`); nothing below uses it.

mod engine;
pub(crate) mod guard;
pub(crate) mod parsed;
pub(crate) mod results;
mod retire;
mod row_batch;
mod select_star;
mod solution_stream;
pub(crate) mod syntax_error;
mod triple_stream;

pub use engine::{Engine, EngineOptions, Execution, QueryMemory, QueryRequest, Timings};
pub use guard::{
    init_thread_pool, MAX_ALGEBRA_DEPTH, MAX_PARSE_WORK, MAX_QUERY_BYTES, MAX_TEXT_NESTING,
    QUERY_STACK_BYTES,
};
pub use results::{QueryOutcome, SolutionRow};
pub use row_batch::{RowBatch, TermBatch};
pub use solution_stream::{Polled, SolutionStream};
pub use triple_stream::TripleStream;
