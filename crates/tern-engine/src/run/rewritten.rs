//! Query patterns as the inference rewriting made them, kept per snapshot:
//! a query asked again on the same data is rewritten the same way (the
//! rewriting reads only the snapshot's schema and its stored triples), and
//! for a query about one node (`<x> ?p ?o`: 48 patterns after asking the
//! data which of 366 can match) the rewriting is a third of its time.
//!
//! An entry is found by the parsed query itself (the parse cache hands out
//! the same `Arc` for the same text; the entry holds it, so its address is
//! never another query's), the snapshot's name and the inference mode.

use crate::infer::InferenceMode;
use spargebra::algebra::GraphPattern;
use spargebra::Query;
use std::sync::{Arc, Mutex};

/// Most rewritten queries kept.
const KEPT: usize = 64;

#[derive(Default)]
pub(crate) struct RewrittenQueries {
    entries: Mutex<Vec<Entry>>,
}

struct Entry {
    query: Arc<Query>,
    snapshot: String,
    mode: InferenceMode,
    pattern: Arc<GraphPattern>,
}

impl RewrittenQueries {
    /// The pattern of `query` as rewritten on `snapshot` under `mode`, if kept.
    pub fn get(
        &self,
        query: &Arc<Query>,
        snapshot: &str,
        mode: InferenceMode,
    ) -> Option<Arc<GraphPattern>> {
        let mut entries = self.lock();
        let at = entries.iter().position(|e| {
            Arc::ptr_eq(&e.query, query) && e.snapshot == snapshot && e.mode == mode
        })?;
        let entry = entries.remove(at);
        let pattern = entry.pattern.clone();
        entries.insert(0, entry);
        Some(pattern)
    }

    pub fn keep(
        &self,
        query: Arc<Query>,
        snapshot: String,
        mode: InferenceMode,
        pattern: Arc<GraphPattern>,
    ) {
        let mut entries = self.lock();
        entries.insert(
            0,
            Entry {
                query,
                snapshot,
                mode,
                pattern,
            },
        );
        entries.truncate(KEPT);
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Entry>> {
        self.entries.lock().unwrap_or_else(|e| e.into_inner())
    }
}
