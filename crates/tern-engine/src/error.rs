use tern_index::IndexError;

/// Why a query failed. Messages are meant for the person who wrote the query.
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    #[error("{0}")]
    Parse(String),
    /// Longer, deeper or costlier to parse than the engine's documented
    /// limits (see `run::guard`).
    #[error("{0}")]
    TooComplex(String),
    #[error("not supported yet: {0}")]
    Unsupported(String),
    #[error("query timed out after {0:.1} s")]
    Timeout(f64),
    #[error("query cancelled")]
    Cancelled,
    #[error("memory budget of {budget} bytes exceeded")]
    MemoryBudget { budget: u64 },
    #[error("the server's memory for queries ({budget} bytes) is in use; try again later")]
    ServerMemory { budget: u64 },
    /// A sort, group or join too large for memory could not use the disk.
    #[error("could not spill the query's state to disk: {0}")]
    Spill(#[source] std::io::Error),
    #[error("the saved state of this query is gone (expired or already resumed)")]
    StateGone,
    #[error("invalid saved query state: {0}")]
    BadState(String),
    /// An update that cannot be applied as asked (nothing was changed).
    #[error("{0}")]
    Update(String),
    /// Something the server's configuration does not allow.
    #[error("{0}")]
    Forbidden(String),
    #[error(transparent)]
    Index(#[from] IndexError),
}
