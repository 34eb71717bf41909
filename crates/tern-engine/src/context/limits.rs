//! What stops a query: a deadline, a memory budget and a cancellation flag
//! that another thread can raise.

use super::SharedMemory;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// What stops a query: a deadline, a memory budget and a cancellation flag.
#[derive(Debug, Clone, Default)]
pub struct Limits {
    pub timeout: Option<Duration>,
    pub memory_budget: Option<u64>,
    pub cancel: CancelFlag,
    /// The memory of all queries of the engine, and its budget.
    pub shared_memory: Option<Arc<SharedMemory>>,
    /// Where sorts, groups and joins whose state would not fit in the
    /// memory budget write it (default: the system's temporary directory).
    pub spill_dir: Option<std::path::PathBuf>,
    /// Most cores one query's operators use at once (`None`: all of the
    /// query pool's).
    pub cores: Option<usize>,
    /// Rows a pipeline is expected to pass before it is run as copies on
    /// several cores (`None`: the planner's default).
    pub parallel_from_rows: Option<u64>,
}

/// Stops a running query from another thread (a client went away, an
/// operator pressed stop). Operators look at it once per batch.
#[derive(Debug, Clone, Default)]
pub struct CancelFlag(Arc<AtomicBool>);

impl CancelFlag {
    pub fn cancel(&self) {
        self.0.store(true, Ordering::Relaxed);
    }

    pub fn is_cancelled(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }
}
