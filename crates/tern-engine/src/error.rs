use tern_index::IndexError;

/// Why a query failed. Messages are meant for the person who wrote the query.
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    #[error("{0}")]
    Parse(String),
    #[error("not supported yet: {0}")]
    Unsupported(String),
    #[error("query timed out after {0:.1} s")]
    Timeout(f64),
    #[error("memory budget of {budget} bytes exceeded")]
    MemoryBudget { budget: u64 },
    #[error(transparent)]
    Index(#[from] IndexError),
}
