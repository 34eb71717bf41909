//! The [`Store`]: an index that takes writes while it serves.
//!
//! It owns the base index (as built by `tern load` or by the last
//! compaction), the delta of changes since (see `delta`), the write-ahead
//! log that makes each change durable before it is acknowledged (`wal`),
//! the snapshots that continuation tokens name (kept for a while), and
//! compaction, which writes the current state as a new base while queries
//! and updates go on (`compaction`).
//!
//! Readers take [`Store::snapshot`] and never wait for writers; writers take
//! [`Store::begin`] one at a time and never wait for readers.
//!
//! Files in the store's directory: the base built by `tern load` (at the
//! top level) or by a compaction (`bases/<id>/`), `store.json` naming the
//! current base and the last update it holds, and `wal/`.

mod compaction;
mod layout;
mod record;
mod run_merge;
mod transaction;
mod wal;

pub use compaction::CompactionReport;
pub use layout::lock;
pub use transaction::{Committed, Transaction};

use crate::delta::{DeltaVocab, Runs, VocabView};
use crate::error::{IndexError, Result};
use crate::snapshot::{DeltaState, Snapshot};
use crate::Index;
use layout::Layout;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};
use transaction::Staged;
use wal::Wal;

/// How a store keeps snapshots and when it compacts.
#[derive(Debug, Clone)]
pub struct StoreOptions {
    /// Start a background compaction when the delta holds this many
    /// changes (0: only when asked).
    pub compact_after: usize,
    /// Memory for a compaction's build.
    pub compaction_memory: u64,
    /// How long a snapshot named by a continuation token is kept after
    /// the token was last issued or used.
    pub token_ttl: Duration,
    /// At most this many such snapshots are kept (the oldest go first).
    pub max_kept_snapshots: usize,
    /// Cache budgets (vocabulary, permutations) of every base opened,
    /// compacted ones included; `None`: the index's defaults.
    pub cache_budget: Option<(usize, usize)>,
    /// When the log is synced to disk.
    pub sync: SyncPolicy,
}

/// When an update's log record is made durable.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SyncPolicy {
    /// Synced (fdatasync, shared by concurrent commits) before the update
    /// is acknowledged: an acknowledged update survives a crash of the
    /// machine.
    EveryCommit,
    /// Written to the operating system before the acknowledgement and
    /// synced by a background thread at this interval: an acknowledged
    /// update survives the server's crash (kill -9), but a power loss or a
    /// crash of the machine may lose up to the interval's updates (what
    /// most databases' "asynchronous commit" gives).
    Interval(Duration),
}

impl Default for StoreOptions {
    fn default() -> Self {
        StoreOptions {
            compact_after: 1_000_000,
            compaction_memory: 1 << 30,
            token_ttl: Duration::from_secs(3600),
            max_kept_snapshots: 256,
            cache_budget: None,
            sync: SyncPolicy::EveryCommit,
        }
    }
}

/// The writer's state: the latest committed (maybe not yet durable)
/// snapshot and the delta vocabulary of its base.
pub(crate) struct Head {
    snapshot: Snapshot,
}

/// The store's figures for `/metrics` and `tern stats`.
#[derive(Debug, Clone, Default)]
pub struct StoreStatus {
    pub version: u64,
    pub snapshot: String,
    pub delta_changes: usize,
    pub delta_runs: usize,
    pub delta_terms: u64,
    pub delta_bytes: usize,
    pub wal_bytes: u64,
    pub kept_snapshots: usize,
    pub compacting: bool,
    pub compactions: u64,
    pub last_compaction: Option<CompactionReport>,
    pub writable: bool,
}

pub struct Store {
    /// The store itself, for the thread a background compaction runs on.
    me: std::sync::Weak<Store>,
    /// `None`: a store in memory (its updates are lost on exit).
    dir: Option<PathBuf>,
    wal: Option<Wal>,
    options: StoreOptions,
    /// What new queries read: the latest durable snapshot.
    visible: RwLock<Snapshot>,
    head: Mutex<Head>,
    kept: Mutex<HashMap<String, (Snapshot, Instant)>>,
    compaction: Mutex<compaction::State>,
    /// The run merger is running (see `run_merge`).
    merging_runs: std::sync::atomic::AtomicBool,
    /// Held while the store is open for writing: one writer process only.
    lock: Mutex<Option<std::fs::File>>,
}

impl Store {
    /// A store over an index, in memory: updates are not logged.
    pub fn in_memory(index: Arc<Index>) -> Arc<Store> {
        Store::with_snapshot(None, None, fresh(index, 0), StoreOptions::default())
    }

    /// Opens the store in `dir` (an index built by `tern load`, maybe
    /// changed by updates since), replaying its log. With `writable`, the
    /// log is opened for appending (a torn last record is cut off); without,
    /// the store is read as it is and updates are refused.
    pub fn open(dir: &Path, writable: bool, options: StoreOptions) -> Result<Arc<Store>> {
        if !layout::is_store(dir) {
            // Before the lock, which would leave a file behind.
            return Err(crate::index::not_an_index(dir));
        }
        let lock = if writable {
            Some(layout::lock(dir)?)
        } else {
            None
        };
        let layout = Layout::read(dir)?;
        if writable {
            layout.remove_leftovers(dir)?;
        }
        let base = Arc::new(open_base(&layout.base_dir(dir), &options)?);
        let (wal, records) = if writable {
            let (wal, records) = Wal::open(&dir.join(layout::WAL_DIR))?;
            (Some(wal), records)
        } else {
            (None, wal::read_only(&dir.join(layout::WAL_DIR))?)
        };
        let records: Vec<_> = records.into_iter().filter(|r| r.seq > layout.seq).collect();
        let snapshot = replay(fresh(base, layout.seq), &records)?;
        let store = Store::with_snapshot(Some(dir.to_owned()), wal, snapshot, options);
        *store.lock.lock().unwrap() = lock;
        if let (Some(_), SyncPolicy::Interval(every)) = (&store.wal, store.options.sync) {
            start_syncer(&store, every)?;
        }
        Ok(store)
    }

    fn with_snapshot(
        dir: Option<PathBuf>,
        wal: Option<Wal>,
        snapshot: Snapshot,
        options: StoreOptions,
    ) -> Arc<Store> {
        Arc::new_cyclic(|me| Store {
            me: me.clone(),
            dir,
            wal,
            options,
            visible: RwLock::new(snapshot.clone()),
            head: Mutex::new(Head { snapshot }),
            kept: Mutex::default(),
            compaction: Mutex::default(),
            merging_runs: Default::default(),
            lock: Mutex::default(),
        })
    }

    /// The latest acknowledged state, for a new query.
    pub fn snapshot(&self) -> Snapshot {
        self.visible.read().unwrap().clone()
    }

    /// Whether updates are accepted (a read-only store refuses them).
    pub fn writable(&self) -> bool {
        self.dir.is_none() || self.wal.is_some()
    }

    /// Starts an update; waits while another one runs.
    pub fn begin(&self) -> Result<Transaction<'_>> {
        if !self.writable() {
            return Err(IndexError::ReadOnly);
        }
        Ok(self.transaction(self.head.lock().unwrap()))
    }

    /// Starts an update if no other one runs; `None` if one does.
    pub fn try_begin(&self) -> Result<Option<Transaction<'_>>> {
        if !self.writable() {
            return Err(IndexError::ReadOnly);
        }
        Ok(self.head.try_lock().ok().map(|head| self.transaction(head)))
    }

    fn transaction<'s>(&'s self, head: std::sync::MutexGuard<'s, Head>) -> Transaction<'s> {
        let staged = Staged::new(head.snapshot.clone());
        Transaction {
            store: self,
            head: Some(head),
            staged,
            committed: false,
        }
    }

    /// Whether a commit returns without waiting for a sync of the log (no
    /// log, or [`SyncPolicy::Interval`]).
    pub fn commits_without_sync(&self) -> bool {
        self.wal.is_none() || matches!(self.options.sync, SyncPolicy::Interval(_))
    }

    /// Logs and publishes a transaction's changes (see
    /// [`Transaction::commit`]). Returns whether the head moved on (the
    /// transaction's terms are then in use) with the outcome.
    fn commit(
        &self,
        mut head: std::sync::MutexGuard<'_, Head>,
        staged: &Staged,
    ) -> (bool, Result<Committed>) {
        let (inserted, deleted) =
            staged.changes.iter().fold(
                (0, 0),
                |(i, d), c| {
                    if c.insert {
                        (i + 1, d)
                    } else {
                        (i, d + 1)
                    }
                },
            );
        if staged.changes.is_empty() && staged.blank_nodes == head.snapshot.delta().blank_nodes {
            let version = head.snapshot.version();
            return (
                false,
                Ok(Committed {
                    version,
                    inserted,
                    deleted,
                }),
            );
        }
        let version = head.snapshot.version() + 1;
        let position = match &self.wal {
            Some(wal) => match wal.append(version, &staged.record.parts()) {
                Ok(position) => Some(position),
                Err(e) => return (false, Err(e)),
            },
            None => None,
        };
        let snapshot = staged.committed(version);
        head.snapshot = snapshot.clone();
        drop(head);
        if let (Some(wal), Some(position)) = (&self.wal, position) {
            let durable = match self.options.sync {
                SyncPolicy::EveryCommit => wal.wait_durable(position),
                // The background syncer makes it durable; a sync that
                // failed there stops acknowledgements here.
                SyncPolicy::Interval(_) => wal.check_healthy(),
            };
            if let Err(e) = durable {
                return (true, Err(e));
            }
        }
        self.publish(snapshot);
        self.maybe_merge_runs();
        self.maybe_compact();
        (
            true,
            Ok(Committed {
                version,
                inserted,
                deleted,
            }),
        )
    }

    /// Makes `snapshot` what new queries read, unless a later one is already.
    fn publish(&self, snapshot: Snapshot) {
        let mut visible = self.visible.write().unwrap();
        let same_base = Arc::ptr_eq(visible.base(), snapshot.base());
        if !same_base || snapshot.version() > visible.version() {
            *visible = snapshot;
        }
    }

    /// Keeps `snapshot` for [`StoreOptions::token_ttl`] from now, so that a
    /// continuation token naming it can be resumed after updates.
    pub fn keep(&self, snapshot: &Snapshot) {
        let now = Instant::now();
        let mut kept = self.kept.lock().unwrap();
        kept.retain(|_, (_, until)| *until > now);
        kept.insert(
            snapshot.name(),
            (snapshot.clone(), now + self.options.token_ttl),
        );
        while kept.len() > self.options.max_kept_snapshots.max(1) {
            let oldest = kept
                .iter()
                .min_by_key(|(_, (_, until))| *until)
                .map(|(name, _)| name.clone())
                .expect("not empty");
            kept.remove(&oldest);
        }
    }

    /// The snapshot a continuation token names: the current one or one
    /// kept for tokens; `None` when it is gone.
    pub fn snapshot_named(&self, name: &str) -> Option<Snapshot> {
        let current = self.snapshot();
        if current.name() == name {
            return Some(current);
        }
        let now = Instant::now();
        let mut kept = self.kept.lock().unwrap();
        kept.retain(|_, (_, until)| *until > now);
        kept.get(name).map(|(s, _)| s.clone())
    }

    /// Whether `index_id` is the build of this store's base, or of a base
    /// it had before a compaction (in this process).
    pub fn knows_base(&self, index_id: &str) -> bool {
        self.snapshot().meta().index_id == index_id
            || self
                .compaction
                .lock()
                .unwrap()
                .earlier_bases
                .iter()
                .any(|b| b == index_id)
    }

    pub fn options(&self) -> &StoreOptions {
        &self.options
    }

    pub fn dir(&self) -> Option<&Path> {
        self.dir.as_deref()
    }

    pub fn status(&self) -> StoreStatus {
        let snapshot = self.snapshot();
        let compaction = self.compaction.lock().unwrap();
        StoreStatus {
            version: snapshot.version(),
            snapshot: snapshot.name(),
            delta_changes: snapshot.delta_changes(),
            delta_runs: snapshot.delta_runs(),
            delta_terms: snapshot.delta_terms(),
            delta_bytes: snapshot.delta().runs.bytes() + snapshot.delta().vocab.shared().bytes(),
            wal_bytes: self
                .dir
                .as_ref()
                .map_or(0, |d| wal::bytes_in(&d.join(layout::WAL_DIR))),
            kept_snapshots: self.kept.lock().unwrap().len(),
            compacting: compaction.running,
            compactions: compaction.done,
            last_compaction: compaction.last.clone(),
            writable: self.writable(),
        }
    }
}

/// Opens a base index with the store's cache budgets.
/// Syncs the log every `every` while the store is open (for
/// [`SyncPolicy::Interval`]).
fn start_syncer(store: &Arc<Store>, every: Duration) -> Result<()> {
    let store = Arc::downgrade(store);
    std::thread::Builder::new()
        .name("tern-wal-sync".into())
        .spawn(move || loop {
            std::thread::sleep(every);
            let Some(store) = store.upgrade() else {
                return;
            };
            if let Some(wal) = &store.wal {
                // A failure is kept by the log: every later commit
                // reports it to its client.
                if wal.wait_durable(wal.written()).is_err() {
                    return;
                }
            }
        })
        .map(drop)
        .map_err(|e| IndexError::Io {
            path: PathBuf::from("tern-wal-sync"),
            source: e,
        })
}

fn open_base(dir: &Path, options: &StoreOptions) -> Result<Index> {
    let index = Index::open(dir)?;
    if let Some((vocabulary, permutations)) = options.cache_budget {
        index.set_cache_budget(vocabulary, permutations);
    }
    Ok(index)
}

/// A snapshot of `base` alone, holding the updates up to `seq`.
fn fresh(base: Arc<Index>, seq: u64) -> Snapshot {
    let blank_nodes = base.meta().blank_nodes;
    Snapshot::new(
        base,
        DeltaState::new(
            seq,
            Runs::default(),
            VocabView::latest(Arc::new(DeltaVocab::default())),
            blank_nodes,
        ),
    )
}

/// `snapshot` with logged updates applied, in order, as one run: the
/// snapshots in between are of no use after a restart, and one run is
/// built once where a run per update would be merged again and again.
fn replay(snapshot: Snapshot, records: &[wal::Record]) -> Result<Snapshot> {
    let Some(last) = records.last() else {
        return Ok(snapshot);
    };
    let mut staged = Staged::replaying(snapshot.clone());
    for record in records {
        let corrupt = |reason: String| IndexError::Corrupt {
            path: snapshot.dir().join(layout::WAL_DIR),
            reason: format!("log record {}: {reason}", record.seq),
        };
        record::decode_each(&record.payload, |quad, insert| {
            staged.apply(quad, insert).map_err(|e| e.to_string())?;
            Ok(())
        })
        .map_err(corrupt)?;
    }
    Ok(staged.committed(last.seq))
}
