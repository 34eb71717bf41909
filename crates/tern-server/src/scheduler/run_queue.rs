//! The run queue: which waiting task has the next turn (see the module
//! comment of `scheduler`).

use super::{Task, AGED_QUANTA, AGED_SHARE, FRESH_TURNS};
use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::time::{Duration, Instant};

/// A task in the run queue, and how many turns it has had.
pub(super) struct Entry {
    pub(super) task: Box<dyn Task>,
    pub(super) turns: u32,
    /// Whether it had a turn yet (it is then counted as active).
    pub(super) started: bool,
    /// When its query first came, in ms since the Unix epoch (a page that
    /// continues a query carries its first page's): aged tasks are served
    /// oldest first.
    pub(super) since_ms: u64,
    /// Order of admission, which breaks ties of age.
    pub(super) admitted: u64,
    /// Time it ran on workers so far (in this request).
    pub(super) attained: Duration,
    /// Set when its last turn found it waiting for its client: it then
    /// waits behind the aged tasks that can run.
    pub(super) blocked: bool,
    /// Its deadline while it waits in the queue (see [`Task::deadline`]).
    pub(super) deadline: Option<Instant>,
}

/// The rank of a task that ran `attained` among the aged ones: 0 below one
/// aged turn, then one level more per doubling (1 up to two turns, 2 up to
/// four, ...). Coarse on purpose: within a level the oldest goes first.
pub(super) fn service_level(attained: Duration, aged_turn: Duration) -> u64 {
    if aged_turn.is_zero() || attained < aged_turn {
        return 0;
    }
    let turns = (attained.as_nanos() / aged_turn.as_nanos()).max(1);
    1 + u64::from(turns.ilog2())
}

/// Tasks waiting for a turn: fresh ones first come, first served; aged ones
/// by [`service_level`], then oldest first; those blocked on their client
/// last.
pub(super) struct RunQueue {
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
    pub(super) deadlines: BTreeSet<(Instant, u64)>,
}

impl RunQueue {
    pub(super) fn new(quantum: Option<Duration>) -> RunQueue {
        RunQueue {
            fresh: VecDeque::new(),
            aged: BTreeMap::new(),
            blocked_count: 0,
            credit: Duration::ZERO,
            aged_turn: quantum.map_or(Duration::ZERO, |q| q * AGED_QUANTA),
            deadlines: BTreeSet::new(),
        }
    }

    pub(super) fn push(&mut self, mut entry: Entry) {
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

    pub(super) fn pop(&mut self) -> Option<Entry> {
        let entry = self.pop_expired().or_else(|| self.pop_by_rank())?;
        if let Some(deadline) = entry.deadline {
            self.deadlines.remove(&(deadline, entry.admitted));
        }
        Some(entry)
    }

    /// A waiting task whose deadline has passed, if any.
    pub(super) fn pop_expired(&mut self) -> Option<Entry> {
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

    pub(super) fn pop_by_rank(&mut self) -> Option<Entry> {
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
    pub(super) fn account(&mut self, was_fresh: bool, spent: Duration) {
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

    pub(super) fn len(&self) -> usize {
        self.fresh.len() + self.aged.len()
    }
}
