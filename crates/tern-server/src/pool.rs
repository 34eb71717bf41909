//! A fixed pool of query worker threads fed by a bounded queue. Admission
//! is a `try_send`: a full queue is answered at once with 503 instead of
//! letting waiting work (and memory) grow without bound.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender, TrySendError};
use std::sync::{Arc, Mutex};

pub type Job = Box<dyn FnOnce() + Send>;

pub struct Pool {
    queue: SyncSender<Job>,
    queued: Arc<AtomicUsize>,
    active: Arc<AtomicUsize>,
    max_queued: usize,
}

/// The queue is full.
#[derive(Debug)]
pub struct Full(pub usize);

impl Pool {
    pub fn new(workers: usize, max_queued: usize) -> Pool {
        let (queue, jobs) = sync_channel::<Job>(max_queued);
        let jobs = Arc::new(Mutex::new(jobs));
        let queued = Arc::new(AtomicUsize::new(0));
        let active = Arc::new(AtomicUsize::new(0));
        for i in 0..workers.max(1) {
            let jobs = jobs.clone();
            let queued = queued.clone();
            let active = active.clone();
            std::thread::Builder::new()
                .name(format!("tern-query-{i}"))
                .spawn(move || worker(&jobs, &queued, &active))
                .expect("spawn a query worker");
        }
        Pool {
            queue,
            queued,
            active,
            max_queued,
        }
    }

    pub fn submit(&self, job: Job) -> Result<(), Full> {
        // Counted before sending so a worker's decrement never comes first.
        self.queued.fetch_add(1, Ordering::SeqCst);
        match self.queue.try_send(job) {
            Ok(()) => Ok(()),
            Err(TrySendError::Full(_) | TrySendError::Disconnected(_)) => {
                self.queued.fetch_sub(1, Ordering::SeqCst);
                Err(Full(self.max_queued))
            }
        }
    }

    pub fn queued(&self) -> usize {
        self.queued.load(Ordering::SeqCst)
    }

    pub fn active(&self) -> usize {
        self.active.load(Ordering::SeqCst)
    }
}

fn worker(jobs: &Mutex<Receiver<Job>>, queued: &AtomicUsize, active: &AtomicUsize) {
    loop {
        // The lock is held only while waiting for the next job.
        let job = match jobs.lock() {
            Ok(jobs) => jobs.recv(),
            Err(_) => return,
        };
        let Ok(job) = job else { return };
        queued.fetch_sub(1, Ordering::SeqCst);
        active.fetch_add(1, Ordering::SeqCst);
        // A panicking query must not take its worker with it.
        let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(job));
        active.fetch_sub(1, Ordering::SeqCst);
    }
}
