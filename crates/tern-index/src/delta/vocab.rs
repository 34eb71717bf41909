//! Terms that updates brought and the base vocabulary does not have.
//!
//! Appended to, never changed: a term's delta ID is its position, and a
//! snapshot sees the first `len` terms. Only one writer appends at a time
//! (see `store`) and a transaction that does not commit takes its terms back,
//! so terms get the same IDs when the write-ahead log is replayed in the same
//! order, on this server or another.

use rustc_hash::FxHashMap;
use std::sync::{Arc, RwLock};

/// The store's delta vocabulary: keys (see `term_key`) in the order they came.
#[derive(Debug, Default)]
pub struct DeltaVocab {
    inner: RwLock<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    keys: Vec<Arc<str>>,
    positions: FxHashMap<Arc<str>, u64>,
    bytes: usize,
}

impl DeltaVocab {
    /// Appends keys (new to the vocabulary) in order.
    pub fn append(&self, keys: impl IntoIterator<Item = Arc<str>>) {
        let mut inner = self.inner.write().unwrap();
        for key in keys {
            let at = inner.keys.len() as u64;
            inner.bytes += key.len() * 2 + 48;
            inner.positions.insert(key.clone(), at);
            inner.keys.push(key);
        }
    }

    /// Drops the keys from position `len` on: what a transaction that did
    /// not commit had appended (no snapshot sees them: snapshots see
    /// committed keys only).
    pub fn truncate(&self, len: u64) {
        let mut inner = self.inner.write().unwrap();
        while inner.keys.len() as u64 > len {
            let key = inner.keys.pop().expect("longer than len");
            inner.bytes -= key.len() * 2 + 48;
            inner.positions.remove(&key);
        }
    }

    pub fn len(&self) -> u64 {
        self.inner.read().unwrap().keys.len() as u64
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn bytes(&self) -> usize {
        self.inner.read().unwrap().bytes
    }
}

/// What one snapshot sees of the delta vocabulary: its first `len` keys.
#[derive(Debug, Clone, Default)]
pub struct VocabView {
    vocab: Arc<DeltaVocab>,
    len: u64,
}

impl VocabView {
    pub fn new(vocab: Arc<DeltaVocab>, len: u64) -> VocabView {
        VocabView { vocab, len }
    }

    /// The view of everything appended so far.
    pub fn latest(vocab: Arc<DeltaVocab>) -> VocabView {
        let len = vocab.len();
        VocabView { vocab, len }
    }

    pub fn len(&self) -> u64 {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub fn shared(&self) -> &Arc<DeltaVocab> {
        &self.vocab
    }

    /// The position of `key`, if this view has it.
    pub fn find(&self, key: &str) -> Option<u64> {
        let inner = self.vocab.inner.read().unwrap();
        inner.positions.get(key).copied().filter(|&p| p < self.len)
    }

    /// The key at `position`, if this view has it.
    pub fn key(&self, position: u64) -> Option<Arc<str>> {
        if position >= self.len {
            return None;
        }
        let inner = self.vocab.inner.read().unwrap();
        inner.keys.get(position as usize).cloned()
    }

    /// Positions of the first `max` keys of this view that start with
    /// `key_prefix`, in the order they were added (a scan: the delta's
    /// keys are not sorted).
    pub fn positions_with_prefix(&self, key_prefix: &str, max: usize) -> Vec<u64> {
        let inner = self.vocab.inner.read().unwrap();
        inner.keys[..(self.len as usize).min(inner.keys.len())]
            .iter()
            .enumerate()
            .filter(|(_, key)| key.starts_with(key_prefix))
            .take(max)
            .map(|(at, _)| at as u64)
            .collect()
    }

    /// Keys of many positions (`None` for those the view lacks).
    pub fn keys(&self, positions: impl Iterator<Item = u64>) -> Vec<Option<Arc<str>>> {
        let inner = self.vocab.inner.read().unwrap();
        positions
            .map(|p| {
                (p < self.len)
                    .then(|| inner.keys.get(p as usize).cloned())
                    .flatten()
            })
            .collect()
    }
}
