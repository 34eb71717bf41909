//! A bounded map from inputs to results that never change: the index is
//! read-only, so what a lookup found once stays true. Planning a query looks
//! up its constants and counts its patterns, and a suspended query is planned
//! again on every page it resumes for; these lookups decode index blocks.

use rustc_hash::FxHashMap;
use std::borrow::Borrow;
use std::hash::Hash;
use std::sync::Mutex;

pub struct Memo<K, V> {
    entries: Mutex<FxHashMap<K, V>>,
    capacity: usize,
}

impl<K: Hash + Eq, V: Clone> Memo<K, V> {
    /// Holds at most `capacity` entries; it starts over when full, which
    /// costs less than tracking use and is rare at the sizes used.
    pub fn new(capacity: usize) -> Memo<K, V> {
        Memo {
            entries: Mutex::new(FxHashMap::default()),
            capacity,
        }
    }

    pub fn get<Q>(&self, key: &Q) -> Option<V>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        self.entries.lock().unwrap().get(key).cloned()
    }

    pub fn insert(&self, key: K, value: V) {
        let mut entries = self.entries.lock().unwrap();
        if entries.len() >= self.capacity {
            entries.clear();
        }
        entries.insert(key, value);
    }

    /// The remembered value of `key`, or `compute`'s (remembered when it
    /// succeeds). `compute` runs without the lock held.
    pub fn get_or_try<E>(&self, key: K, compute: impl FnOnce() -> Result<V, E>) -> Result<V, E> {
        if let Some(value) = self.get(&key) {
            return Ok(value);
        }
        let value = compute()?;
        self.insert(key, value.clone());
        Ok(value)
    }

    pub fn len(&self) -> usize {
        self.entries.lock().unwrap().len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn remembers_successes_only_and_starts_over_when_full() {
        let memo: Memo<u32, u32> = Memo::new(2);
        let mut calls = 0;
        let mut square = |k: u32| {
            memo.get_or_try(k, || {
                calls += 1;
                Ok::<_, ()>(k * k)
            })
        };
        assert_eq!(square(3), Ok(9));
        assert_eq!(square(3), Ok(9));
        assert_eq!(calls, 1);
        assert_eq!(
            memo.get_or_try(4, || Err::<u32, _>("failed")),
            Err("failed")
        );
        assert_eq!(memo.len(), 1);
        memo.insert(4, 16);
        memo.insert(5, 25);
        assert_eq!(memo.len(), 1, "full: started over");
        assert_eq!(memo.get(&5), Some(25));
        assert_eq!(memo.get(&3), None);
    }
}
