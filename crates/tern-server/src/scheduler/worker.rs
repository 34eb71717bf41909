//! What a query worker does: take the next task, run its turn, and drop,
//! park or queue it again. `Scheduler::submit_here` runs a first turn the
//! same way on the thread that received the query.

use super::run_queue::Entry;
use super::{Shared, Step, AGED_QUANTA, FRESH_TURNS};
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

pub(super) fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// The last task in the system ended.
pub(super) fn went_idle(shared: &Shared) {
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
    shared.parks.fetch_add(1, Ordering::Relaxed);
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

pub(super) fn worker(shared: &Arc<Shared>) {
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
        let step = take_turn(shared, &mut entry, until);
        match after_turn(shared, entry, step) {
            AfterTurn::Done => blocked_turns = 0,
            AfterTurn::Parked => {}
            AfterTurn::Requeued { waiting } => {
                if step == Step::Yielded {
                    blocked_turns = 0;
                } else {
                    blocked_turns += 1;
                }
                if blocked_turns > waiting {
                    std::thread::sleep(Duration::from_millis(1));
                    blocked_turns = 0;
                }
            }
        }
    }
}

/// Runs one turn of a task on the calling thread, booking it as running.
pub(super) fn take_turn(shared: &Shared, entry: &mut Entry, until: Option<Instant>) -> Step {
    if !entry.started {
        entry.started = true;
        shared.active.fetch_add(1, Ordering::SeqCst);
    }
    shared.running.fetch_add(1, Ordering::SeqCst);
    let started = Instant::now();
    // A panicking query must not take its thread with it.
    let step = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| entry.task.run(until)))
        .unwrap_or(Step::Done);
    shared.running.fetch_sub(1, Ordering::SeqCst);
    let spent = started.elapsed();
    entry.attained += spent;
    lock(&shared.queue).account(entry.turns < FRESH_TURNS, spent);
    entry.turns = entry.turns.saturating_add(1);
    entry.blocked = step == Step::Blocked;
    step
}

/// Where a task went after its turn.
pub(super) enum AfterTurn {
    Done,
    /// Off the queue until its client reads.
    Parked,
    /// Back in the queue, which now holds `waiting` tasks.
    Requeued {
        waiting: usize,
    },
}

/// Drops a finished task, or parks or queues one that is not.
pub(super) fn after_turn(shared: &Arc<Shared>, entry: Entry, step: Step) -> AfterTurn {
    let entry = match step {
        Step::Done => {
            drop(entry);
            shared.active.fetch_sub(1, Ordering::SeqCst);
            if shared.in_system.fetch_sub(1, Ordering::SeqCst) == 1 {
                went_idle(shared);
            }
            return AfterTurn::Done;
        }
        Step::Blocked => match park(shared, entry) {
            Some(entry) => entry,
            None => return AfterTurn::Parked,
        },
        Step::Yielded => {
            shared.yields.fetch_add(1, Ordering::Relaxed);
            entry
        }
    };
    let waiting = {
        let mut queue = lock(&shared.queue);
        queue.push(entry);
        queue.len()
    };
    shared.ready.notify_one();
    AfterTurn::Requeued { waiting }
}
