//! Materialized state of suspended queries (hash tables, sorted runs,
//! groups, parked operators), kept on the server by handle until a resumed
//! operator takes it back, within a byte quota and a time to live.

use super::bad_state;
use crate::EngineError;
use oxrdf::Term;
use rustc_hash::{FxHashMap, FxHashSet};
use std::any::Any;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};
use tern_index::Id;

/// Materialized state of suspended queries, kept in memory by handle until a
/// resumed operator takes it back.
///
/// A server keeps one stash for all the queries it suspended, so it is
/// bounded: entries older than the time to live are dropped, and when the
/// approximate bytes held exceed the quota the oldest entries go first. A
/// resume that finds its state gone fails with [`EngineError::StateGone`].
pub struct Stash {
    next: AtomicU64,
    inner: Mutex<StashInner>,
    quota_bytes: u64,
    time_to_live: Duration,
}

struct StashInner {
    items: FxHashMap<u64, StashEntry>,
    /// Handles in the order they were put, for eviction (taken handles are
    /// skipped when they come up).
    order: VecDeque<(u64, Instant)>,
    bytes: u64,
    evicted: u64,
}

struct StashEntry {
    value: Box<dyn Any + Send>,
    bytes: u64,
}

/// What a stash holds, for metrics.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct StashUsage {
    pub entries: usize,
    pub bytes: u64,
    /// Entries dropped before being taken back (expired or over quota).
    pub evicted: u64,
}

/// Approximate heap bytes of stashed state, for the stash's quota.
pub trait StashSize {
    fn stash_bytes(&self) -> usize;
}

impl Default for Stash {
    /// No quota and no expiry: for a single process that resumes what it
    /// suspended (tests, the command line).
    fn default() -> Stash {
        Stash::with_limits(u64::MAX, Duration::MAX)
    }
}

impl Stash {
    pub fn with_limits(quota_bytes: u64, time_to_live: Duration) -> Stash {
        Stash {
            next: AtomicU64::new(0),
            inner: Mutex::new(StashInner {
                items: FxHashMap::default(),
                order: VecDeque::new(),
                bytes: 0,
                evicted: 0,
            }),
            quota_bytes,
            time_to_live,
        }
    }

    pub fn put<T: Any + Send + StashSize>(&self, value: T) -> u64 {
        let handle = self.next.fetch_add(1, Ordering::Relaxed);
        let bytes = value.stash_bytes() as u64 + 64;
        let mut inner = self.lock();
        inner.items.insert(
            handle,
            StashEntry {
                value: Box::new(value),
                bytes,
            },
        );
        inner.order.push_back((handle, Instant::now()));
        inner.bytes += bytes;
        self.evict(&mut inner);
        handle
    }

    /// Takes back what [`put`](Self::put) left; an error if it is gone (expired,
    /// evicted or taken by an earlier resume) or of another type.
    pub fn take<T: Any>(&self, handle: u64) -> Result<T, EngineError> {
        let entry = {
            let mut inner = self.lock();
            self.evict(&mut inner);
            let entry = inner.items.remove(&handle).ok_or(EngineError::StateGone)?;
            inner.bytes -= entry.bytes;
            entry
        };
        entry
            .value
            .downcast::<T>()
            .map(|b| *b)
            .map_err(|_| bad_state("stashed state of another operator"))
    }

    /// Drops stashed state (an abandoned query).
    pub fn discard(&self, handle: u64) {
        let mut inner = self.lock();
        if let Some(entry) = inner.items.remove(&handle) {
            inner.bytes -= entry.bytes;
        }
    }

    /// Drops what has outlived its time to live (also done on every put and
    /// take; a server calls this now and then when idle).
    pub fn expire(&self) {
        let mut inner = self.lock();
        self.evict(&mut inner);
    }

    pub fn usage(&self) -> StashUsage {
        let inner = self.lock();
        StashUsage {
            entries: inner.items.len(),
            bytes: inner.bytes,
            evicted: inner.evicted,
        }
    }

    pub fn len(&self) -> usize {
        self.lock().items.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, StashInner> {
        // The data stays consistent even if a holder panicked.
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Oldest first: expired entries, then entries while over the quota.
    fn evict(&self, inner: &mut StashInner) {
        let now = Instant::now();
        while let Some(&(handle, put_at)) = inner.order.front() {
            let Some(entry_bytes) = inner.items.get(&handle).map(|e| e.bytes) else {
                inner.order.pop_front();
                continue;
            };
            let expired = now.saturating_duration_since(put_at) > self.time_to_live;
            if !expired && inner.bytes <= self.quota_bytes {
                break;
            }
            inner.order.pop_front();
            inner.items.remove(&handle);
            inner.bytes -= entry_bytes;
            inner.evicted += 1;
        }
        // Taken handles accumulate at the front only until passed; keep the
        // queue from growing with them when nothing is ever evicted.
        if inner.order.len() > 2 * inner.items.len() + 1024 {
            let items = &inner.items;
            let kept: VecDeque<_> = inner
                .order
                .iter()
                .copied()
                .filter(|(h, _)| items.contains_key(h))
                .collect();
            inner.order = kept;
        }
    }
}

impl StashSize for Vec<u64> {
    fn stash_bytes(&self) -> usize {
        self.capacity() * 8
    }
}

impl StashSize for Vec<Id> {
    fn stash_bytes(&self) -> usize {
        self.capacity() * 8
    }
}

/// Rows of IDs: estimated from the first row, so that stashing a table of
/// millions of rows does not walk it.
pub fn rows_bytes<'a>(len: usize, mut rows: impl Iterator<Item = &'a Vec<Id>>) -> usize {
    rows.next().map_or(0, |row| len * (row.len() * 8 + 24))
}

impl StashSize for Vec<Vec<Id>> {
    fn stash_bytes(&self) -> usize {
        rows_bytes(self.len(), self.iter())
    }
}

impl StashSize for std::vec::IntoIter<Vec<Id>> {
    fn stash_bytes(&self) -> usize {
        rows_bytes(self.len(), self.as_slice().iter())
    }
}

impl StashSize for FxHashSet<Vec<Id>> {
    fn stash_bytes(&self) -> usize {
        rows_bytes(self.len(), self.iter()) + self.len() * 8
    }
}

impl StashSize for Vec<Term> {
    fn stash_bytes(&self) -> usize {
        self.iter().map(term_bytes).sum()
    }
}

fn term_bytes(term: &Term) -> usize {
    40 + match term {
        Term::NamedNode(n) => n.as_str().len(),
        Term::BlankNode(b) => b.as_str().len(),
        Term::Literal(l) => l.value().len() + l.datatype().as_str().len(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stashed_state_is_taken_once() {
        let stash = Stash::default();
        let handle = stash.put(vec![1u64, 2]);
        assert!(stash.take::<String>(handle).is_err(), "wrong type");
        let handle = stash.put(vec![1u64, 2]);
        assert_eq!(stash.take::<Vec<u64>>(handle).unwrap(), vec![1, 2]);
        assert!(matches!(
            stash.take::<Vec<u64>>(handle),
            Err(EngineError::StateGone)
        ));
    }

    #[test]
    fn oldest_state_goes_first_over_the_quota_and_after_its_time() {
        // Each entry: 100 u64s = 800 bytes + 64 of overhead.
        let stash = Stash::with_limits(2_000, Duration::from_secs(3600));
        let first = stash.put(vec![0u64; 100]);
        let second = stash.put(vec![0u64; 100]);
        assert_eq!(stash.usage().entries, 2);
        let third = stash.put(vec![0u64; 100]);
        let usage = stash.usage();
        assert_eq!((usage.entries, usage.evicted), (2, 1));
        assert!(usage.bytes <= 2_000);
        assert!(matches!(
            stash.take::<Vec<u64>>(first),
            Err(EngineError::StateGone)
        ));
        assert_eq!(stash.take::<Vec<u64>>(second).unwrap().len(), 100);
        assert_eq!(stash.take::<Vec<u64>>(third).unwrap().len(), 100);
        assert_eq!(stash.usage().bytes, 0);

        let stash = Stash::with_limits(u64::MAX, Duration::from_millis(20));
        let handle = stash.put(vec![1u64]);
        std::thread::sleep(Duration::from_millis(40));
        stash.expire();
        assert!(stash.is_empty());
        assert!(matches!(
            stash.take::<Vec<u64>>(handle),
            Err(EngineError::StateGone)
        ));
    }
}
