//! The rows of large unions that query-time inference read whole, kept per
//! snapshot: the instances of `ub:Person` under RDFS are 18 M index rows
//! (every subclass, domain and range) deduplicated to 0.9 M, the same for
//! every query on the same snapshot. A snapshot never changes, so the rows
//! stay right for as long as a query may read it; a write makes a new
//! snapshot, whose queries derive them again. The entailed extent is
//! computed on demand and kept only while it is asked for: materialization
//! that costs nothing until a query needs it and is dropped under a
//! byte budget.
//!
//! Keyed by the snapshot's name and a description of the union that holds
//! everything its rows depend on (its patterns as IDs, the graphs, the
//! sameAs table in use); see `plan::union_leaf`.

use std::sync::{Arc, Mutex};
use tern_index::Id;

/// Rows of a union, column by column, distinct and sorted.
#[derive(Debug)]
pub struct Extent {
    pub columns: Vec<Vec<Id>>,
    /// Rows (a union whose variables are all bound has no column).
    pub len: usize,
}

impl Extent {
    fn bytes(&self) -> u64 {
        (self.columns.len().max(1) * self.len * std::mem::size_of::<Id>()) as u64
    }
}

/// Most recently used first, at most `budget` bytes of rows.
pub struct DerivedExtents {
    budget: u64,
    entries: Mutex<Vec<(String, Arc<Extent>)>>,
}

/// The share of the budget one extent may take: one class's instances must
/// not push out every other.
const LARGEST_SHARE: u64 = 4;

impl DerivedExtents {
    pub fn new(budget: u64) -> DerivedExtents {
        DerivedExtents {
            budget,
            entries: Mutex::default(),
        }
    }

    /// The rows kept under `key`, now the most recently used.
    pub fn get(&self, key: &str) -> Option<Arc<Extent>> {
        let mut entries = self.lock();
        let at = entries.iter().position(|(k, _)| k == key)?;
        let entry = entries.remove(at);
        let rows = entry.1.clone();
        entries.insert(0, entry);
        Some(rows)
    }

    /// Whether some kept rows have a key that starts with `prefix`: a cheap
    /// look before the whole key is written out.
    pub fn may_hold(&self, prefix: &str) -> bool {
        self.lock().iter().any(|(k, _)| k.starts_with(prefix))
    }

    /// Keeps `rows` under `key` if they fit a share of the budget, dropping
    /// the least recently used extents to make room.
    pub fn offer(&self, key: String, rows: Arc<Extent>) {
        let bytes = rows.bytes();
        if bytes > self.budget / LARGEST_SHARE {
            return;
        }
        let mut entries = self.lock();
        entries.retain(|(k, _)| *k != key);
        entries.insert(0, (key, rows));
        let mut used = 0;
        entries.retain(|(_, e)| {
            used += e.bytes();
            used <= self.budget
        });
    }

    /// Bytes of rows kept now, and how many extents.
    pub fn usage(&self) -> (u64, usize) {
        let entries = self.lock();
        (entries.iter().map(|(_, e)| e.bytes()).sum(), entries.len())
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<(String, Arc<Extent>)>> {
        self.entries.lock().unwrap_or_else(|e| e.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn extent(rows: u64) -> Arc<Extent> {
        Arc::new(Extent {
            columns: vec![(0..rows).map(Id).collect()],
            len: rows as usize,
        })
    }

    #[test]
    fn a_prefix_tells_whether_a_key_may_be_held() {
        let cache = DerivedExtents::new(8 * 100);
        cache.offer("s1\n00ab\nrest".into(), extent(2));
        assert!(cache.may_hold("s1\n00ab\n"));
        assert!(!cache.may_hold("s1\n00ac\n"));
        assert!(!cache.may_hold("s2\n00ab\n"));
    }

    #[test]
    fn the_least_recently_used_extent_makes_room() {
        // Four extents of a quarter of the budget each fill it.
        let cache = DerivedExtents::new(8 * 100);
        for key in ["a", "b", "c", "d"] {
            cache.offer(key.into(), extent(25));
        }
        assert_eq!(cache.usage(), (8 * 100, 4));
        assert!(cache.get("a").is_some());
        cache.offer("e".into(), extent(25));
        assert!(cache.get("b").is_none(), "the least recently used");
        for key in ["a", "c", "d", "e"] {
            assert_eq!(cache.get(key).map(|e| e.len), Some(25), "{key}");
        }
        assert_eq!(cache.usage(), (8 * 100, 4));
    }

    #[test]
    fn an_extent_larger_than_its_share_is_not_kept() {
        let cache = DerivedExtents::new(8 * 100);
        cache.offer("big".into(), extent(26));
        assert!(cache.get("big").is_none());
        cache.offer("fits".into(), extent(25));
        assert!(cache.get("fits").is_some());
    }
}
