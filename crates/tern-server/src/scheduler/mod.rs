//! Query workers that share their time (DESIGN.md, "Preemption").
//!
//! A fixed pool of worker threads serves a run queue of tasks in time
//! quanta. A task not finished at the end of its turn goes back to the queue.
//! Tasks in their first [`FRESH_TURNS`] turns ("fresh": every short query
//! ends there) go first, first come, first served. The older ("aged") tasks
//! get the workers the fresh ones leave, in turns of [`AGED_QUANTA`] quanta,
//! by the service they have had ([`service_level`]: one level per doubling)
//! and oldest first within a level: the oldest long query runs on until it
//! ends unless new queries arrive, rather than all long queries taking turns
//! and all finishing late, while a query that needed a few quanta more than
//! the fresh turns does not wait behind queries that have run for seconds.
//! Among long queries whose sizes are unknown, that is close to shortest
//! first (`bench/scheduler_sim.py` compares the policies on the fairness
//! workload; the soak test is where a light query aged behind 10-second
//! ones showed in the 99th percentile). So that a flood of short queries
//! cannot starve the long ones, aged tasks are owed a quarter of the
//! workers' time while both kinds wait ([`AGED_SHARE`]).
//! Without a quantum (`--quantum 0`) each task runs to its end: first come,
//! first served.
//!
//! Suspending a task between quanta keeps its operators alive in memory; it
//! costs nothing but a queue push. (A client that asks for pages gets its
//! query's state in a continuation token instead, see `paging`.)
//!
//! Admission is bounded: the tasks in the system (running or waiting) never
//! exceed the workers plus `max_queued`; beyond that requests get 503.
//! A task blocked because its client does not read what it produced is
//! parked off the run queue until the client makes room ([`Task::room`]):
//! it holds no worker and no admission slot, only its bounded buffers. At
//! most `max_stalled` tasks are parked (beyond, blocked tasks wait in the
//! queue as before), and one parked longer than `stall_timeout` is dropped,
//! which ends its response unfinished.

mod run_queue;
#[cfg(test)]
mod tests;
mod worker;

use crate::config::IdleHook;
use crate::paging::now_ms;
use run_queue::{Entry, RunQueue};
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, OnceLock};
use std::time::{Duration, Instant};
use worker::{after_turn, lock, take_turn};

/// What a task did with its turn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// Finished (or abandoned): drop it.
    Done,
    /// Used up its quantum: back of the queue.
    Yielded,
    /// Cannot go on until its client reads what it already produced.
    Blocked,
}

/// Resolves when a blocked task's client has made room (or is gone).
pub type RoomWaiter = Pin<Box<dyn Future<Output = ()> + Send>>;

/// A unit of work that can be run a slice at a time.
pub trait Task: Send {
    /// When the task's time is up: a task waiting past it gets the next
    /// turn, which ends it with its timeout (rather than when its rank
    /// would have come up, maybe much later).
    fn deadline(&self) -> Option<Instant> {
        None
    }

    /// After a turn that ended [`Step::Blocked`]: what resolves when the
    /// task can go on, for it to wait off the run queue. `None`: it waits
    /// in the queue.
    fn room(&self) -> Option<RoomWaiter> {
        None
    }

    /// Runs until done, or until `until` has passed (checked between rows,
    /// so one row's work may overrun it), or until blocked by its client.
    /// `None`: no time limit, and block on the client instead of returning.
    fn run(&mut self, until: Option<Instant>) -> Step;
}

pub struct Scheduler {
    shared: Arc<Shared>,
    workers: usize,
    max_in_system: usize,
    max_queued: usize,
}

/// Where tasks blocked on their clients wait, and for how long.
#[derive(Debug, Clone)]
pub struct Parking {
    /// The async runtime the waits run on.
    pub runtime: tokio::runtime::Handle,
    /// Most tasks parked at once.
    pub max_stalled: usize,
    /// A task parked this long is dropped.
    pub stall_timeout: Duration,
}

/// Turns a task gets ahead of the tasks that had more.
pub const FRESH_TURNS: u32 = 2;
/// Quanta in a turn of an older task.
pub const AGED_QUANTA: u32 = 4;
/// The share of the workers' time aged tasks are owed while fresh ones wait:
/// each fresh turn owes them 1 / `AGED_SHARE` of its length.
pub const AGED_SHARE: u32 = 3;

struct Shared {
    queue: Mutex<RunQueue>,
    ready: Condvar,
    quantum: Option<Duration>,
    /// Tasks admitted and not yet done.
    in_system: AtomicUsize,
    /// Tasks ever admitted: the next one's admission number.
    admitted: AtomicU64,
    /// Tasks that had a turn and are not done (running or suspended).
    active: AtomicUsize,
    /// Tasks being run by a worker right now.
    running: AtomicUsize,
    /// Quanta that ended with the task put back (suspensions).
    yields: AtomicU64,
    /// Called when the last task in the system is done.
    on_idle: OnceLock<IdleHook>,
    parking: OnceLock<Parking>,
    /// Tasks parked until their clients make room.
    stalled: AtomicUsize,
    /// Parked tasks dropped because their clients read nothing in time.
    stall_drops: AtomicU64,
    /// Times a task was parked.
    parks: AtomicU64,
    /// First turns run on the thread that received the task.
    turns_here: AtomicU64,
}

/// The server is full.
#[derive(Debug)]
pub struct Full(pub usize);

impl Scheduler {
    pub fn new(workers: usize, max_queued: usize, quantum: Option<Duration>) -> Scheduler {
        let workers = workers.max(1);
        let shared = Arc::new(Shared {
            queue: Mutex::new(RunQueue::new(quantum.filter(|q| !q.is_zero()))),
            ready: Condvar::new(),
            quantum: quantum.filter(|q| !q.is_zero()),
            in_system: AtomicUsize::new(0),
            admitted: AtomicU64::new(0),
            active: AtomicUsize::new(0),
            running: AtomicUsize::new(0),
            yields: AtomicU64::new(0),
            on_idle: OnceLock::new(),
            parking: OnceLock::new(),
            stalled: AtomicUsize::new(0),
            stall_drops: AtomicU64::new(0),
            parks: AtomicU64::new(0),
            turns_here: AtomicU64::new(0),
        });
        for i in 0..workers {
            let shared = shared.clone();
            std::thread::Builder::new()
                .name(format!("tern-query-{i}"))
                // Parsing, planning and running recurse on the query's
                // structure, bounded by the engine's nesting limits.
                .stack_size(tern_engine::QUERY_STACK_BYTES)
                .spawn(move || worker::worker(&shared))
                .expect("spawn a query worker");
        }
        Scheduler {
            shared,
            workers,
            max_in_system: workers + max_queued,
            max_queued,
        }
    }

    /// Parks tasks blocked on their clients off the run queue (see the
    /// module comment); without it they wait in the queue.
    pub fn park_blocked(&self, parking: Parking) {
        let _ = self.shared.parking.set(parking);
    }

    /// Tasks parked until their clients read.
    pub fn stalled(&self) -> usize {
        self.shared.stalled.load(Ordering::SeqCst)
    }

    /// Parked tasks dropped after the stall timeout.
    pub fn stall_drops(&self) -> u64 {
        self.shared.stall_drops.load(Ordering::Relaxed)
    }

    /// Times a task was parked because its client did not read.
    pub fn parks(&self) -> u64 {
        self.shared.parks.load(Ordering::Relaxed)
    }

    /// First turns run on the thread that received the task
    /// ([`Scheduler::submit_here`]).
    pub fn turns_here(&self) -> u64 {
        self.shared.turns_here.load(Ordering::Relaxed)
    }

    /// Calls `hook` on a worker whenever the last task in the system ends.
    pub fn on_idle(&self, hook: IdleHook) {
        let _ = self.shared.on_idle.set(hook);
    }

    /// Admits a task to the back of the run queue.
    pub fn submit(&self, task: Box<dyn Task>) -> Result<(), Full> {
        self.admit(task, 0, now_ms())
    }

    /// Admits the next page of a paged query whose first page was asked
    /// for at `started_at_ms` (ms since the Unix epoch): a query that already
    /// had its turns, so it waits with the older tasks, not with the new ones
    /// (a paging client's long query would otherwise pass as new on every
    /// page), and by its age, as if it had stayed on the server.
    pub fn submit_continuation(&self, task: Box<dyn Task>, started_at_ms: u64) -> Result<(), Full> {
        self.admit(task, FRESH_TURNS, started_at_ms)
    }

    fn admit(&self, task: Box<dyn Task>, turns: u32, since_ms: u64) -> Result<(), Full> {
        let entry = self.enter(task, turns, since_ms)?;
        self.enqueue(lock(&self.shared.queue), entry);
        Ok(())
    }

    /// Puts an admitted task in the queue (whose lock is `queue`) and wakes
    /// a worker.
    fn enqueue(&self, mut queue: MutexGuard<'_, RunQueue>, entry: Entry) {
        queue.push(entry);
        drop(queue);
        self.shared.ready.notify_one();
    }

    /// Admits a new task and gives it its first turn on the calling thread
    /// when a worker is free and no task waits, for at most `turn` (then it
    /// waits in the queue as if a worker had run it); otherwise, and always
    /// without a quantum, queues it.
    ///
    /// Why: a short query on an idle server otherwise crosses threads twice
    /// (to a worker, and its answer back), and waking a parked thread costs
    /// more than such a query (q14 of the inference benchmark: 0.29 ms on
    /// the server when idle between requests, 0.13 ms back to back). Nobody
    /// is passed, since nothing waits, and no more queries run at once than
    /// workers plus the threads that call this. The caller's thread needs a
    /// query thread's stack (`tern_engine::QUERY_STACK_BYTES`), and runs the
    /// idle hook when the task ends the server's work (the server's hook
    /// looks at the process at most twice a second).
    pub fn submit_here(&self, task: Box<dyn Task>, turn: Duration) -> Result<(), Full> {
        let mut entry = self.enter(task, 0, now_ms())?;
        let shared = &self.shared;
        let queue = lock(&shared.queue);
        // Without a quantum a task runs to its end on a worker, waiting
        // for its client there (first come, first served).
        let quantum = shared
            .quantum
            .filter(|_| queue.len() == 0 && shared.running.load(Ordering::SeqCst) < self.workers);
        let Some(quantum) = quantum else {
            self.enqueue(queue, entry);
            return Ok(());
        };
        drop(queue);
        // Always a deadline: a turn without one may wait for its client,
        // which the caller (an async thread) must never do.
        let until = Instant::now() + quantum.min(turn);
        shared.turns_here.fetch_add(1, Ordering::Relaxed);
        let step = take_turn(shared, &mut entry, Some(until));
        after_turn(shared, entry, step);
        Ok(())
    }

    /// Counts a task into the system (bounded by `max_in_system`).
    fn enter(&self, task: Box<dyn Task>, turns: u32, since_ms: u64) -> Result<Entry, Full> {
        let shared = &self.shared;
        let admitted = shared
            .in_system
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| {
                (n < self.max_in_system).then_some(n + 1)
            });
        if admitted.is_err() {
            return Err(Full(self.max_queued));
        }
        Ok(Entry {
            task,
            turns,
            started: false,
            since_ms,
            admitted: shared.admitted.fetch_add(1, Ordering::Relaxed),
            attained: Duration::ZERO,
            blocked: false,
            deadline: None,
        })
    }

    /// Tasks admitted that have not had a turn yet.
    pub fn queued(&self) -> usize {
        // Parked tasks left the system's count but are still active.
        let in_system = self.shared.in_system.load(Ordering::SeqCst) + self.stalled();
        in_system.saturating_sub(self.active())
    }

    /// Tasks started and not finished: on a worker, or suspended between
    /// their quanta.
    pub fn active(&self) -> usize {
        self.shared.active.load(Ordering::SeqCst)
    }

    /// Tasks on a worker right now.
    pub fn running(&self) -> usize {
        self.shared.running.load(Ordering::SeqCst)
    }

    /// Times a task was suspended at the end of its quantum.
    pub fn yields(&self) -> u64 {
        self.shared.yields.load(Ordering::Relaxed)
    }
}
