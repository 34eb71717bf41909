//! A piece of a query's work run on a thread pool, its outcome waited for
//! by the query's own thread (see `batch_pipeline` and `decode_ahead`).
//! A panic in a job spawned on a pool would abort the process: it is caught
//! in the job and raised again where the outcome is awaited, on the query's
//! thread, where the scheduler catches a query's panics.

use rayon::ThreadPool;
use std::sync::mpsc;

/// The outcome of a job, once it is done.
pub struct PoolJob<T>(mpsc::Receiver<std::thread::Result<T>>);

impl<T: Send + 'static> PoolJob<T> {
    /// Runs `work` on `pool` (the shared pool if none).
    pub fn spawn(pool: Option<&ThreadPool>, work: impl FnOnce() -> T + Send + 'static) -> Self {
        let (tx, rx) = mpsc::sync_channel(1);
        let job = move || {
            let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(work));
            // The query may be gone (its client left): nobody waits then.
            let _ = tx.send(outcome);
        };
        match pool {
            Some(pool) => pool.spawn(job),
            None => rayon::spawn(job),
        }
        PoolJob(rx)
    }

    /// The job's outcome, once it is done.
    pub fn wait(self) -> T {
        match self.0.recv() {
            Ok(Ok(outcome)) => outcome,
            Ok(Err(panic)) => std::panic::resume_unwind(panic),
            Err(mpsc::RecvError) => panic!("a job on the pool was dropped unanswered"),
        }
    }
}
