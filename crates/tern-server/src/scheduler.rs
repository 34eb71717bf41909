//! Query workers that share their time (DESIGN.md, "Preemption").
//!
//! A fixed pool of worker threads serves a run queue of tasks round-robin:
//! a worker takes the task at the front, runs it for one time quantum and,
//! if the task is not finished, puts it at the back. A long query therefore
//! costs every other query at most one quantum per turn instead of holding
//! a worker until it ends. Tasks in their first [`FRESH_TURNS`] turns are
//! served before the others (which still get every [`AGED_EVERY`]-th turn,
//! so they never starve, and turns of [`AGED_QUANTA`] quanta): a short query
//! that arrives behind many long ones waits for other new queries, not for a
//! quantum of every long one.
//! Without a quantum (`--quantum 0`) each task runs to its end: first come,
//! first served.
//!
//! Suspending a task between quanta keeps its operators alive in memory; it
//! costs nothing but a queue push. (A client that asks for pages gets its
//! query's state in a continuation token instead, see `paging`.)
//!
//! Admission is bounded: the tasks in the system (running or waiting) never
//! exceed the workers plus `max_queued`; beyond that requests get 503.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};
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

/// A unit of work that can be run a slice at a time.
pub trait Task: Send {
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

/// Turns a task gets ahead of the tasks that had more.
pub const FRESH_TURNS: u32 = 2;
/// While new tasks wait, one turn in this many still goes to an older one.
pub const AGED_EVERY: u32 = 3;
/// Quanta in a turn of an older task.
pub const AGED_QUANTA: u32 = 4;

/// A task in the run queue, and how many turns it has had.
struct Entry {
    task: Box<dyn Task>,
    turns: u32,
}

/// Tasks waiting for a turn: new ones first, the others round-robin.
#[derive(Default)]
struct RunQueue {
    fresh: VecDeque<Entry>,
    aged: VecDeque<Entry>,
    picks: u32,
}

impl RunQueue {
    fn push(&mut self, entry: Entry) {
        if entry.turns < FRESH_TURNS {
            self.fresh.push_back(entry);
        } else {
            self.aged.push_back(entry);
        }
    }

    fn pop(&mut self) -> Option<Entry> {
        self.picks = self.picks.wrapping_add(1);
        if self.fresh.is_empty() || self.picks.is_multiple_of(AGED_EVERY) {
            if let Some(entry) = self.aged.pop_front() {
                return Some(entry);
            }
        }
        self.fresh.pop_front().or_else(|| self.aged.pop_front())
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
    /// Tasks that had a turn and are not done (running or suspended).
    active: AtomicUsize,
    /// Tasks being run by a worker right now.
    running: AtomicUsize,
    /// Quanta that ended with the task put back (suspensions).
    yields: AtomicU64,
}

/// The server is full.
#[derive(Debug)]
pub struct Full(pub usize);

impl Scheduler {
    pub fn new(workers: usize, max_queued: usize, quantum: Option<Duration>) -> Scheduler {
        let workers = workers.max(1);
        let shared = Arc::new(Shared {
            queue: Mutex::new(RunQueue::default()),
            ready: Condvar::new(),
            quantum: quantum.filter(|q| !q.is_zero()),
            in_system: AtomicUsize::new(0),
            active: AtomicUsize::new(0),
            running: AtomicUsize::new(0),
            yields: AtomicU64::new(0),
        });
        for i in 0..workers {
            let shared = shared.clone();
            std::thread::Builder::new()
                .name(format!("tern-query-{i}"))
                .spawn(move || worker(&shared))
                .expect("spawn a query worker");
        }
        Scheduler {
            shared,
            max_in_system: workers + max_queued,
            max_queued,
        }
    }

    /// Admits a task to the back of the run queue.
    pub fn submit(&self, task: Box<dyn Task>) -> Result<(), Full> {
        let shared = &self.shared;
        let admitted = shared
            .in_system
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| {
                (n < self.max_in_system).then_some(n + 1)
            });
        if admitted.is_err() {
            return Err(Full(self.max_queued));
        }
        lock(&shared.queue).push(Entry { task, turns: 0 });
        shared.ready.notify_one();
        Ok(())
    }

    /// Tasks admitted that have not had a turn yet.
    pub fn queued(&self) -> usize {
        let in_system = self.shared.in_system.load(Ordering::SeqCst);
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

fn worker(shared: &Shared) {
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
        if entry.turns == 0 {
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
        let until = shared.quantum.map(|q| Instant::now() + turn(q));
        // A panicking query must not take its worker with it.
        let step = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| entry.task.run(until)))
            .unwrap_or(Step::Done);
        shared.running.fetch_sub(1, Ordering::SeqCst);
        entry.turns = entry.turns.saturating_add(1);
        match step {
            Step::Done => {
                drop(entry);
                shared.active.fetch_sub(1, Ordering::SeqCst);
                shared.in_system.fetch_sub(1, Ordering::SeqCst);
                blocked_turns = 0;
            }
            Step::Yielded | Step::Blocked => {
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
        name: &'static str,
        done: mpsc::Sender<&'static str>,
    }

    impl Task for Counter {
        fn run(&mut self, until: Option<Instant>) -> Step {
            while self.left > 0 {
                if until.is_some_and(|u| Instant::now() >= u) {
                    return Step::Yielded;
                }
                std::thread::sleep(Duration::from_millis(1));
                self.left -= 1;
            }
            let _ = self.done.send(self.name);
            Step::Done
        }
    }

    #[test]
    fn a_short_task_passes_a_long_one_with_quanta_and_not_without() {
        for (quantum, expected_first) in [(Some(Duration::from_millis(5)), "short"), (None, "long")]
        {
            let scheduler = Scheduler::new(1, 8, quantum);
            let (tx, rx) = mpsc::channel();
            let task = |left, name| {
                Box::new(Counter {
                    left,
                    name,
                    done: tx.clone(),
                })
            };
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
    fn new_tasks_go_before_old_ones_which_still_get_turns() {
        let mut queue = RunQueue::default();
        let entry = |turns| Entry {
            task: Box::new(Counter {
                left: 0,
                name: "",
                done: mpsc::channel().0,
            }),
            turns,
        };
        for _ in 0..3 {
            queue.push(entry(FRESH_TURNS + 5));
        }
        for _ in 0..6 {
            queue.push(entry(0));
        }
        let order: Vec<bool> = std::iter::from_fn(|| queue.pop())
            .map(|e| e.turns == 0)
            .collect();
        // Picks 3 and 6 go to old tasks while new ones wait.
        assert_eq!(
            order,
            [true, true, false, true, true, false, true, true, false]
        );
    }

    #[test]
    fn admission_is_bounded() {
        let scheduler = Scheduler::new(1, 1, None);
        let (tx, rx) = mpsc::channel();
        let long = || {
            Box::new(Counter {
                left: 200,
                name: "x",
                done: tx.clone(),
            })
        };
        scheduler.submit(long()).unwrap();
        scheduler.submit(long()).unwrap();
        assert!(scheduler.submit(long()).is_err(), "one worker + one queued");
        rx.recv_timeout(Duration::from_secs(10)).unwrap();
        // The finished task's place is free again.
        std::thread::sleep(Duration::from_millis(5));
        scheduler.submit(long()).unwrap();
    }
}
