//! The threads that run writes (updates and Graph Store writes): started
//! once, with a query thread's stack (an update's WHERE clause is a query),
//! so a write does not pay for starting a thread; a fifth of a small
//! update's time went to that.

use crate::error::RequestError;
use std::sync::{mpsc, Arc, Mutex};
use tern_engine::QUERY_STACK_BYTES;

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
