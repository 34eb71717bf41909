//! The threads that run writes (updates and Graph Store writes): started
//! once, with a query thread's stack (an update's WHERE clause is a query),
//! so a write does not pay for starting a thread; a fifth of a small
//! update's time went to that.

use crate::error::RequestError;
use crate::server::AppState;
use std::sync::{mpsc, Arc, Mutex};
use tern_engine::QUERY_STACK_BYTES;
use tokio::sync::{oneshot, OwnedSemaphorePermit};

/// Most writes running or waiting for a write thread at once; requests
/// beyond wait for a place (each client is limited by `--max-per-client`).
pub const WRITE_PLACES: usize = 64;

/// A place for a write, held by the write until it ends (even if its
/// client has gone).
pub async fn write_place(state: &AppState) -> Result<OwnedSemaphorePermit, RequestError> {
    state
        .writers
        .clone()
        .acquire_owned()
        .await
        .map_err(|_| RequestError::Internal("the server is shutting down".into()))
}

/// Runs a write (an update or a Graph Store write) on a write thread, in
/// one of the write places, and waits for what it returns.
pub async fn run_write<T: Send + 'static>(
    state: &AppState,
    work: impl FnOnce() -> T + Send + 'static,
) -> Result<T, RequestError> {
    let place = write_place(state).await?;
    let (done, result) = oneshot::channel();
    state.write_pool.run(move || {
        let _ = done.send(work());
        drop(place);
    })?;
    result
        .await
        .map_err(|_| RequestError::Internal("the write ended without an answer".into()))
}

type Job = Box<dyn FnOnce() + Send>;

pub struct WritePool {
    jobs: Mutex<mpsc::Sender<Job>>,
}

impl WritePool {
    /// Enough threads for the log's group commit to gather many writers
    /// per sync; writers take the store one at a time anyway.
    pub const THREADS: usize = 16;

    pub fn new(threads: usize) -> std::io::Result<WritePool> {
        let (sender, receiver) = mpsc::channel::<Job>();
        let receiver = Arc::new(Mutex::new(receiver));
        for i in 0..threads.max(1) {
            let receiver = receiver.clone();
            std::thread::Builder::new()
                .name(format!("tern-write-{i}"))
                .stack_size(QUERY_STACK_BYTES)
                .spawn(move || loop {
                    let job = receiver.lock().unwrap_or_else(|e| e.into_inner()).recv();
                    match job {
                        // A job that panics loses its answer (the client
                        // gets a 500), not the thread.
                        Ok(job) => {
                            let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(job));
                        }
                        Err(_) => return, // the server is gone
                    }
                })?;
        }
        Ok(WritePool {
            jobs: Mutex::new(sender),
        })
    }

    /// Runs `job` on a write thread (queued while all are busy).
    pub fn run(&self, job: impl FnOnce() + Send + 'static) -> Result<(), RequestError> {
        self.jobs
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .send(Box::new(job))
            .map_err(|_| RequestError::Internal("the write threads are gone".into()))
    }
}
