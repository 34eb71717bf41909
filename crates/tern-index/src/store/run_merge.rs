//! The run merger: merges the delta's large runs on a thread of its own.
//!
//! A commit adds its changes as a new run on top of the delta and merges
//! runs of similar size while the result stays small
//! ([`COMMIT_MERGE_LIMIT`](crate::delta::COMMIT_MERGE_LIMIT)). Larger merges
//! happen here, without any lock: the two runs are read from the head
//! snapshot, merged, and swapped in under the write lock for a moment, if
//! they are still there side by side. The data does not change, only how
//! it is held: the snapshot keeps its version, and queries already running
//! keep the runs they read.

use super::Store;
use crate::delta::Run;
use std::sync::atomic::Ordering;

impl Store {
    /// Starts the run merger on a thread of its own when the head has
    /// runs waiting to be merged and it is not running already.
    pub(super) fn maybe_merge_runs(&self) {
        if self.head_snapshot().delta().runs.pending_merge().is_none()
            || self.merging_runs.swap(true, Ordering::AcqRel)
        {
            return;
        }
        let Some(store) = self.me.upgrade() else {
            self.merging_runs.store(false, Ordering::Release);
            return;
        };
        let started = std::thread::Builder::new()
            .name("tern-run-merge".into())
            .spawn(move || {
                store.merge_pending_runs();
                store.merging_runs.store(false, Ordering::Release);
                // Commits during the last merge may have left more.
                store.maybe_merge_runs();
            });
        if started.is_err() {
            // The next commit tries again.
            self.merging_runs.store(false, Ordering::Release);
        }
    }

    /// Merges waiting runs until none waits.
    fn merge_pending_runs(&self) {
        while let Some((older, newer)) = self.head_snapshot().delta().runs.pending_merge() {
            let merged = Run::merge(&older, &newer);
            let mut head = self.head.lock().unwrap();
            let Some(runs) = head.snapshot.delta().runs.replaced(&older, &newer, merged) else {
                // A commit merged one of them meanwhile: look again.
                continue;
            };
            let snapshot = head.snapshot.with_runs(runs);
            head.snapshot = snapshot.clone();
            // Publish the new layout only if new queries read this very
            // version (it may not be durable yet, then a later commit
            // publishes a snapshot made from it).
            let mut visible = self.visible.write().unwrap();
            if visible.version() == snapshot.version()
                && std::sync::Arc::ptr_eq(visible.base(), snapshot.base())
            {
                *visible = snapshot;
            }
        }
    }

    fn head_snapshot(&self) -> crate::snapshot::Snapshot {
        self.head.lock().unwrap().snapshot.clone()
    }
}
