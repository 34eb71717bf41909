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

use crate::config::IdleHook;
use crate::paging::now_ms;
use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, OnceLock};
use std::time::{Duration, Instant};

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

/// A task in the run queue, and how many turns it has had.
struct Entry {
    task: Box<dyn Task>,
    turns: u32,
    /// Whether it had a turn yet (it is then counted as active).
    started: bool,
    /// When its query first came, in ms since the Unix epoch (a page that
    /// continues a query carries its first page's): aged tasks are served
    /// oldest first.
    since_ms: u64,
    /// Order of admission, which breaks ties of age.
    admitted: u64,
    /// Time it ran on workers so far (in this request).
    attained: Duration,
    /// Set when its last turn found it waiting for its client: it then
    /// waits behind the aged tasks that can run.
    blocked: bool,
    /// Its deadline while it waits in the queue (see [`Task::deadline`]).
    deadline: Option<Instant>,
}

/// The rank of a task that ran `attained` among the aged ones: 0 below one
/// aged turn, then one level more per doubling (1 up to two turns, 2 up to
/// four, ...). Coarse on purpose: within a level the oldest goes first.
fn service_level(attained: Duration, aged_turn: Duration) -> u64 {
    if aged_turn.is_zero() || attained < aged_turn {
        return 0;
    }
    let turns = (attained.as_nanos() / aged_turn.as_nanos()).max(1);
    1 + u64::from(turns.ilog2())
}

/// Tasks waiting for a turn: fresh ones first come, first served; aged ones
/// by [`service_level`], then oldest first; those blocked on their client
/// last.
struct RunQueue {
    fresh: VecDeque<Entry>,
    /// By (blocked order, service level, first came, admission).
    aged: BTreeMap<(u64, u64, u64, u64), Entry>,
    /// Orders blocked aged tasks after the others, in the order they blocked.
    blocked_count: u64,
    /// Worker time owed to the aged tasks.
    credit: Duration,
    /// The length of an aged task's turn.
    aged_turn: Duration,
    /// The deadlines of the waiting tasks that have one, with their
    /// admission numbers.
    deadlines: BTreeSet<(Instant, u64)>,
}

impl RunQueue {
    fn new(quantum: Option<Duration>) -> RunQueue {
        RunQueue {
            fresh: VecDeque::new(),
            aged: BTreeMap::new(),
            blocked_count: 0,
            credit: Duration::ZERO,
            aged_turn: quantum.map_or(Duration::ZERO, |q| q * AGED_QUANTA),
            deadlines: BTreeSet::new(),
        }
    }

    fn push(&mut self, mut entry: Entry) {
        // Not a task blocked on its client: its turn would not end it, it
        // would only come straight back.
        entry.deadline = entry.task.deadline().filter(|_| !entry.blocked);
        if let Some(deadline) = entry.deadline {
            self.deadlines.insert((deadline, entry.admitted));
        }
        if entry.turns < FRESH_TURNS {
            self.fresh.push_back(entry);
        } else {
            let rank = if entry.blocked {
                self.blocked_count += 1;
                self.blocked_count
            } else {
                0
            };
            let level = service_level(entry.attained, self.aged_turn);
            self.aged
                .insert((rank, level, entry.since_ms, entry.admitted), entry);
        }
    }

    fn pop(&mut self) -> Option<Entry> {
        let entry = self.pop_expired().or_else(|| self.pop_by_rank())?;
        if let Some(deadline) = entry.deadline {
            self.deadlines.remove(&(deadline, entry.admitted));
        }
        Some(entry)
    }

    /// A waiting task whose deadline has passed, if any.
    fn pop_expired(&mut self) -> Option<Entry> {
        let &(deadline, admitted) = self.deadlines.first()?;
        if deadline > Instant::now() {
            return None;
        }
        if let Some(at) = self.fresh.iter().position(|e| e.admitted == admitted) {
            return self.fresh.remove(at);
        }
        let key = *self.aged.iter().find(|(_, e)| e.admitted == admitted)?.0;
        self.aged.remove(&key)
    }

    fn pop_by_rank(&mut self) -> Option<Entry> {
        let aged_due = self.fresh.is_empty() || self.credit >= self.aged_turn;
        if aged_due {
            if let Some((_, entry)) = self.aged.pop_first() {
                return Some(entry);
            }
        }
        self.fresh
            .pop_front()
            .or_else(|| self.aged.pop_first().map(|(_, e)| e))
    }

    /// Books a turn that took `spent`: a fresh turn while aged tasks wait
    /// owes them part of it, an aged turn is paid from what they are owed.
    fn account(&mut self, was_fresh: bool, spent: Duration) {
        if self.aged.is_empty() {
            self.credit = Duration::ZERO;
        } else if was_fresh {
            // Capped, so that a long stretch of short queries is not paid
            // back by a long stretch without them.
            self.credit = (self.credit + spent / AGED_SHARE).min(self.aged_turn * 2);
        } else {
            self.credit = self.credit.saturating_sub(spent);
        }
    }

    fn len(&self) -> usize {
        self.fresh.len() + self.aged.len()
    }
}

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
        });
        for i in 0..workers {
            let shared = shared.clone();
            std::thread::Builder::new()
                .name(format!("tern-query-{i}"))
                // Parsing, planning and running recurse on the query's
                // structure, bounded by the engine's nesting limits.
                .stack_size(tern_engine::QUERY_STACK_BYTES)
                .spawn(move || worker(&shared))
                .expect("spawn a query worker");
        }
        Scheduler {
            shared,
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
        let shared = &self.shared;
        let admitted = shared
            .in_system
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| {
                (n < self.max_in_system).then_some(n + 1)
            });
        if admitted.is_err() {
            return Err(Full(self.max_queued));
        }
        let admitted = shared.admitted.fetch_add(1, Ordering::Relaxed);
        lock(&shared.queue).push(Entry {
            task,
            turns,
            started: false,
            since_ms,
            admitted,
            attained: Duration::ZERO,
            blocked: false,
            deadline: None,
        });
        shared.ready.notify_one();
        Ok(())
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

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// The last task in the system ended.
fn went_idle(shared: &Shared) {
    if let Some(hook) = shared.on_idle.get() {
        (hook.0)();
    }
}

/// Parks a task whose client does not read until it makes room: the task
/// leaves the system's count (it holds no worker and no admission slot)
/// and comes back to the queue when `room` resolves, or is dropped after
/// the stall timeout. Gives the entry back when it cannot be parked.
fn park(shared: &Arc<Shared>, entry: Entry) -> Option<Entry> {
    let Some(parking) = shared.parking.get() else {
        return Some(entry);
    };
    let parked = shared
        .stalled
        .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| {
            (n < parking.max_stalled).then_some(n + 1)
        });
    if parked.is_err() {
        return Some(entry);
    }
    let Some(room) = entry.task.room() else {
        shared.stalled.fetch_sub(1, Ordering::SeqCst);
        return Some(entry);
    };
    if shared.in_system.fetch_sub(1, Ordering::SeqCst) == 1 {
        went_idle(shared);
    }
    let shared = shared.clone();
    let timeout = parking.stall_timeout;
    parking.runtime.spawn(async move {
        let mut entry = entry;
        let woke = tokio::time::timeout(timeout, room).await.is_ok();
        shared.stalled.fetch_sub(1, Ordering::SeqCst);
        if woke {
            // Admitted before: it comes back whatever the queue holds, and
            // no longer behind the tasks that can run.
            entry.blocked = false;
            shared.in_system.fetch_add(1, Ordering::SeqCst);
            lock(&shared.queue).push(entry);
            shared.ready.notify_one();
        } else {
            shared.stall_drops.fetch_add(1, Ordering::Relaxed);
            shared.active.fetch_sub(1, Ordering::SeqCst);
            tracing::info!(
                target: "tern::access",
                "client read nothing for {timeout:?}: its query is dropped"
            );
            // Dropping a query frees its tables: not on the async threads.
            tokio::task::spawn_blocking(move || drop(entry));
        }
    });
    None
}

fn worker(shared: &Arc<Shared>) {
    // Turns in a row that found their task blocked on its client: when they
    // outnumber the queue, every task is waiting for the network, so pause
    // instead of spinning.
    let mut blocked_turns = 0usize;
    loop {
        let mut entry = {
            let mut queue = lock(&shared.queue);
            loop {
                if let Some(entry) = queue.pop() {
                    break entry;
                }
                queue = shared.ready.wait(queue).unwrap_or_else(|e| e.into_inner());
            }
        };
        if !entry.started {
            entry.started = true;
            shared.active.fetch_add(1, Ordering::SeqCst);
        }
        shared.running.fetch_add(1, Ordering::SeqCst);
        // Older tasks get longer turns: fewer switches between the large
        // working sets of long queries, while new ones still go first.
        let turn = |q: Duration| {
            if entry.turns < FRESH_TURNS {
                q
            } else {
                q * AGED_QUANTA
            }
        };
        let started = Instant::now();
        let until = shared.quantum.map(|q| started + turn(q));
        // A panicking query must not take its worker with it.
        let step = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| entry.task.run(until)))
            .unwrap_or(Step::Done);
        shared.running.fetch_sub(1, Ordering::SeqCst);
        let spent = started.elapsed();
        entry.attained += spent;
        lock(&shared.queue).account(entry.turns < FRESH_TURNS, spent);
        entry.turns = entry.turns.saturating_add(1);
        entry.blocked = step == Step::Blocked;
        match step {
            Step::Done => {
                drop(entry);
                shared.active.fetch_sub(1, Ordering::SeqCst);
                let left = shared.in_system.fetch_sub(1, Ordering::SeqCst) - 1;
                blocked_turns = 0;
                if left == 0 {
                    went_idle(shared);
                }
            }
            Step::Yielded | Step::Blocked => {
                let entry = match step {
                    Step::Blocked => match park(shared, entry) {
                        Some(entry) => entry,
                        None => continue, // parked
                    },
                    _ => entry,
                };
                if step == Step::Yielded {
                    shared.yields.fetch_add(1, Ordering::Relaxed);
                    blocked_turns = 0;
                } else {
                    blocked_turns += 1;
                }
                let waiting = {
                    let mut queue = lock(&shared.queue);
                    queue.push(entry);
                    queue.len()
                };
                shared.ready.notify_one();
                if blocked_turns > waiting {
                    std::thread::sleep(Duration::from_millis(1));
                    blocked_turns = 0;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc;

    /// Counts to `total` in steps of one per millisecond, reporting when
    /// it finishes.
    struct Counter {
        left: u32,
        /// Steps after which a turn ends, whatever the time (so that a
        /// test's turns do not depend on how loaded the machine is).
        per_turn: u32,
        deadline: Option<Instant>,
        name: &'static str,
        done: mpsc::Sender<&'static str>,
    }

    impl Task for Counter {
        fn deadline(&self) -> Option<Instant> {
            self.deadline
        }

        fn run(&mut self, until: Option<Instant>) -> Step {
            let mut steps = 0;
            while self.left > 0 {
                if until.is_some_and(|u| Instant::now() >= u) || steps == self.per_turn {
                    return Step::Yielded;
                }
                std::thread::sleep(Duration::from_millis(1));
                self.left -= 1;
                steps += 1;
            }
            let _ = self.done.send(self.name);
            Step::Done
        }
    }

    /// A task counting `left` milliseconds that reports `name` on `done`.
    fn counter(left: u32, name: &'static str, done: &mpsc::Sender<&'static str>) -> Box<Counter> {
        Box::new(Counter {
            left,
            per_turn: u32::MAX,
            deadline: None,
            name,
            done: done.clone(),
        })
    }

    /// A queue entry for a task that does nothing.
    fn idle_entry(turns: u32, admitted: u64, blocked: bool) -> Entry {
        Entry {
            task: counter(0, "", &mpsc::channel().0),
            turns,
            started: false,
            since_ms: admitted,
            admitted,
            attained: Duration::ZERO,
            blocked,
            deadline: None,
        }
    }

    #[test]
    fn a_short_task_passes_a_long_one_with_quanta_and_not_without() {
        for (quantum, expected_first) in [(Some(Duration::from_millis(5)), "short"), (None, "long")]
        {
            let scheduler = Scheduler::new(1, 8, quantum);
            let (tx, rx) = mpsc::channel();
            let task = |left, name| counter(left, name, &tx);
            scheduler.submit(task(300, "long")).unwrap();
            std::thread::sleep(Duration::from_millis(20));
            scheduler.submit(task(5, "short")).unwrap();
            assert_eq!(
                rx.recv_timeout(Duration::from_secs(10)).unwrap(),
                expected_first
            );
            rx.recv_timeout(Duration::from_secs(10)).unwrap();
            if quantum.is_some() {
                assert!(scheduler.yields() > 0);
            }
        }
    }

    #[test]
    fn new_tasks_go_first_then_the_oldest_and_old_ones_are_owed_time() {
        // A third of a turn is a whole number of milliseconds.
        let quantum = Duration::from_millis(9);
        let mut queue = RunQueue::new(Some(quantum));
        let entry = |turns, admitted| idle_entry(turns, admitted, false);
        // Old tasks arrive in the order 2, 0, 1; then new ones.
        for admitted in [2, 0, 1] {
            queue.push(entry(FRESH_TURNS + 5, admitted));
        }
        for admitted in 10..20 {
            queue.push(entry(0, admitted));
        }
        let mut order = Vec::new();
        while let Some(e) = queue.pop() {
            order.push(e.admitted);
            // Every turn takes a quantum.
            queue.account(e.turns < FRESH_TURNS, quantum);
        }
        // Old tasks are owed a third of each new one's turn: one old turn
        // (4 quanta) after twelve new turns' worth, so here only once the
        // new ones are gone; then the oldest first.
        assert_eq!(order, [10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 0, 1, 2]);

        let mut queue = RunQueue::new(Some(quantum));
        queue.push(entry(FRESH_TURNS, 0));
        for admitted in 10..40 {
            queue.push(entry(0, admitted));
        }
        let mut old_at = Vec::new();
        for pick in 0.. {
            let Some(e) = queue.pop() else { break };
            if e.admitted == 0 {
                old_at.push(pick);
                if old_at.len() == 2 {
                    break;
                }
                queue.account(false, quantum * AGED_QUANTA);
                queue.push(entry(FRESH_TURNS + 1, 0));
            } else {
                queue.account(true, quantum);
            }
        }
        // While new tasks keep coming, the old one still gets a turn after
        // every twelve new turns.
        assert_eq!(old_at, [12, 25]);
    }

    #[test]
    fn old_tasks_that_ran_less_go_first_then_the_oldest() {
        // An aged turn is 40 ms: levels 0 below 40 ms, 1 below 80 ms, and
        // 7 from 2.56 s to 5.12 s.
        let mut queue = RunQueue::new(Some(Duration::from_millis(10)));
        let entry = |admitted, ran_ms| Entry {
            attained: Duration::from_millis(ran_ms),
            ..idle_entry(FRESH_TURNS, admitted, false)
        };
        for (admitted, ran_ms) in [(0, 5_000), (1, 50), (2, 30), (3, 60), (4, 3_000)] {
            queue.push(entry(admitted, ran_ms));
        }
        let order: Vec<u64> = std::iter::from_fn(|| queue.pop())
            .map(|e| e.admitted)
            .collect();
        assert_eq!(order, [2, 1, 3, 0, 4]);
        assert_eq!(service_level(Duration::from_secs(1), Duration::ZERO), 0);
    }

    #[test]
    fn tasks_past_their_deadline_go_first_unless_blocked_on_their_client() {
        let mut queue = RunQueue::new(Some(Duration::from_millis(10)));
        let past = Instant::now() - Duration::from_millis(1);
        let later = Instant::now() + Duration::from_secs(60);
        let entry = |turns, admitted, blocked, deadline| Entry {
            task: Box::new(Counter {
                deadline,
                ..*counter(0, "", &mpsc::channel().0)
            }),
            attained: Duration::from_secs(u64::from(turns)),
            ..idle_entry(turns, admitted, blocked)
        };
        queue.push(entry(0, 0, false, None));
        queue.push(entry(0, 1, false, Some(later)));
        queue.push(entry(FRESH_TURNS + 9, 2, false, Some(past)));
        queue.push(entry(FRESH_TURNS + 9, 3, true, Some(past)));
        queue.push(entry(0, 4, false, Some(past)));
        let order: Vec<u64> = std::iter::from_fn(|| queue.pop())
            .map(|e| e.admitted)
            .collect();
        // The two expired ones by deadline (the same: then by admission),
        // then the fresh ones and the old ones as usual.
        assert_eq!(order, [2, 4, 0, 1, 3]);
        assert!(queue.deadlines.is_empty());
    }

    #[test]
    fn blocked_old_tasks_wait_behind_the_others() {
        let mut queue = RunQueue::new(Some(Duration::from_millis(10)));
        let entry = |admitted, blocked| idle_entry(FRESH_TURNS, admitted, blocked);
        queue.push(entry(0, true));
        queue.push(entry(1, false));
        queue.push(entry(2, true));
        queue.push(entry(3, false));
        let order: Vec<u64> = std::iter::from_fn(|| queue.pop())
            .map(|e| e.admitted)
            .collect();
        assert_eq!(order, [1, 3, 0, 2]);
    }

    #[test]
    fn a_continued_query_waits_with_the_old_ones_by_its_age() {
        // The continued query started just now, or a minute ago: it waits
        // behind the older query, or ahead of it.
        for (started_ago_ms, expected) in [
            (0, ["new", "first", "next page"]),
            (60_000, ["new", "next page", "first"]),
        ] {
            // Turns end after 10 steps, well before the quantum: "first"
            // has two fresh turns and ends in its first aged one, below
            // one aged turn of service (level 0, a continued query's).
            let scheduler = Scheduler::new(1, 8, Some(Duration::from_secs(1)));
            let (tx, rx) = mpsc::channel();
            let task = |left, name| {
                Box::new(Counter {
                    per_turn: 10,
                    ..*counter(left, name, &tx)
                })
            };
            // Occupies the worker while the others queue up.
            scheduler.submit(task(25, "first")).unwrap();
            std::thread::sleep(Duration::from_millis(2));
            let started_at_ms = now_ms() - started_ago_ms;
            scheduler
                .submit_continuation(task(3, "next page"), started_at_ms)
                .unwrap();
            scheduler.submit(task(3, "new")).unwrap();
            let order: Vec<&str> = (0..3)
                .map(|_| rx.recv_timeout(Duration::from_secs(10)).unwrap())
                .collect();
            // The new task first; then the old ones, oldest first.
            assert_eq!(
                order, expected,
                "continued query started {started_ago_ms} ms ago"
            );
            // Every task is counted out again.
            std::thread::sleep(Duration::from_millis(20));
            assert_eq!((scheduler.active(), scheduler.queued()), (0, 0));
        }
    }

    #[test]
    fn admission_is_bounded() {
        let scheduler = Scheduler::new(1, 1, None);
        let (tx, rx) = mpsc::channel();
        let long = || counter(200, "x", &tx);
        scheduler.submit(long()).unwrap();
        scheduler.submit(long()).unwrap();
        assert!(scheduler.submit(long()).is_err(), "one worker + one queued");
        rx.recv_timeout(Duration::from_secs(10)).unwrap();
        // The finished task's place is free again.
        std::thread::sleep(Duration::from_millis(5));
        scheduler.submit(long()).unwrap();
    }
}
