//! Compaction: the current state written as a new base index while queries
//! and updates go on.
//!
//! 1. Under the write lock (briefly): take the head snapshot, sync the log,
//!    start a new log file after it.
//! 2. Without any lock: write the snapshot's quads out as N-Quads
//!    (zstd-compressed, blank nodes under the labels their IDs give) and
//!    build a base from them with the bulk builder (bounded memory; blank
//!    nodes keep their numbers).
//! 3. Under the write lock again: open the new base, replay the updates
//!    that came meanwhile from the new log file onto it, write
//!    `store.json`, and make it the head and what new queries read.
//! 4. Remove the log files and the base the new one replaced. Snapshots
//!    that still read the old base keep it (open files and mappings stay
//!    valid after removal) until the last of them is dropped.

use super::layout::{self, Layout};
use super::{fresh, replay, wal, Store};
use crate::builder::{self, Input, LoadOptions};
use crate::error::{IndexError, IoContext, Result};
use crate::index::ScanRange;
use crate::permutation::Permutation;
use crate::snapshot::Snapshot;
use crate::Id;
use std::io::Write;
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

#[derive(Default)]
pub(crate) struct State {
    pub running: bool,
    pub done: u64,
    pub last: Option<CompactionReport>,
    /// Builds of the bases compactions replaced (to tell a token of an
    /// older snapshot from one of another store).
    pub earlier_bases: Vec<String>,
}

/// What a compaction did.
#[derive(Debug, Clone, PartialEq)]
pub struct CompactionReport {
    /// The last update the new base holds.
    pub version: u64,
    pub quads: u64,
    /// Changes the delta held when it started.
    pub delta_changes: usize,
    /// Updates committed while it ran, replayed onto the new base.
    pub replayed: usize,
    pub dump_seconds: f64,
    pub build_seconds: f64,
    pub seconds: f64,
    /// Seconds the write lock was held to swap the bases in.
    pub swap_seconds: f64,
}

impl Store {
    /// Compacts now (see the module comment); returns when the new base
    /// is in use. `None` when the delta is empty or a compaction is running.
    pub fn compact(&self) -> Result<Option<CompactionReport>> {
        self.rebuild(&[])
    }

    /// Adds the quads of `inputs` (files the bulk builder reads) to the
    /// store by building them into the new base along with the current
    /// data: a bulk append that neither goes through the delta (its memory)
    /// nor re-reads the files the store was first built from.
    pub fn append(&self, inputs: Vec<Input>) -> Result<Option<CompactionReport>> {
        if inputs.is_empty() {
            return Ok(None);
        }
        self.rebuild(&inputs)
    }

    fn rebuild(&self, extra: &[Input]) -> Result<Option<CompactionReport>> {
        let Some(dir) = self.dir.clone() else {
            return Ok(None);
        };
        {
            let mut state = self.compaction.lock().unwrap();
            if state.running {
                return Ok(None);
            }
            state.running = true;
        }
        let result = self.compact_in(&dir, extra);
        let mut state = self.compaction.lock().unwrap();
        state.running = false;
        if let Ok(Some(report)) = &result {
            state.done += 1;
            state.last = Some(report.clone());
        }
        result
    }

    /// Starts a compaction on a thread of its own when the delta is past
    /// [`StoreOptions::compact_after`](super::StoreOptions).
    pub(super) fn maybe_compact(&self) {
        let threshold = self.options.compact_after;
        if threshold == 0 || self.dir.is_none() || self.snapshot().delta_changes() < threshold {
            return;
        }
        if self.compaction.lock().unwrap().running {
            return;
        }
        let Some(store) = self.me.upgrade() else {
            return;
        };
        std::thread::Builder::new()
            .name("tern-compaction".into())
            .spawn(move || {
                if let Err(e) = store.compact() {
                    // Not eprintln!: it panics when stderr cannot be written
                    // (a full disk under the log).
                    let _ = writeln!(
                        std::io::stderr(),
                        "tern: compaction failed, the delta stays as it is: {e}"
                    );
                }
            })
            .ok();
    }

    fn compact_in(&self, dir: &Path, extra: &[Input]) -> Result<Option<CompactionReport>> {
        let started = Instant::now();
        let wal = self.wal.as_ref().ok_or(IndexError::ReadOnly)?;
        let snapshot = {
            let head = self.head.lock().unwrap();
            let snapshot = head.snapshot.clone();
            if extra.is_empty() && snapshot.delta_changes() == 0 && snapshot.delta_terms() == 0 {
                return Ok(None);
            }
            wal.rotate(snapshot.version() + 1)?;
            snapshot
        };
        let work = dir.join(layout::WORK_DIR);
        std::fs::create_dir_all(&work).at(&work)?;
        let dump = work.join("dump.nq.zst");
        let quads = write_dump(&snapshot, &dump)?;
        let dumped = Instant::now();
        // Unique even when two rebuilds start from the same version.
        let relative = format!(
            "{}/{}-{:08x}",
            layout::BASES_DIR,
            snapshot.version(),
            rand_suffix()
        );
        let target = dir.join(&relative);
        std::fs::create_dir_all(dir.join(layout::BASES_DIR)).at(dir)?;
        let options = LoadOptions {
            memory: self.options.compaction_memory,
            force: true,
            ..LoadOptions::default()
        };
        let mut dumped_input = Input::file(&dump, None, None).map_err(build_failed)?;
        // First, so the appended files' blank nodes are numbered after its.
        dumped_input.index_blank_labels = true;
        let mut inputs = vec![dumped_input];
        inputs.extend(extra.iter().cloned());
        builder::build(&target, &inputs, &options).map_err(build_failed)?;
        wal::sync_dir(&dir.join(layout::BASES_DIR))?;
        let built = Instant::now();
        let base = Arc::new(super::open_base(&target, &self.options)?);

        let swap_started = Instant::now();
        let mut head = self.head.lock().unwrap();
        // Everything logged so far on disk: the new head is durable.
        wal.wait_durable(wal.written())?;
        let records = wal::read_from(&dir.join(layout::WAL_DIR), snapshot.version() + 1)?;
        let replayed = records.len();
        // Snapshots are named by base build and version: after an append the
        // version stays and the build changes, so no token of the snapshot
        // before is taken for the one after.
        let version = snapshot.version();
        let next = fresh(base, version).with_blank_nodes(snapshot.delta().blank_nodes);
        let next = replay(next, &records)?;
        let next = next.with_blank_nodes(head.snapshot.delta().blank_nodes);
        let layout = Layout {
            base: relative,
            seq: version,
        };
        layout.write(dir)?;
        let replaced = head.snapshot.meta().index_id.clone();
        head.snapshot = next.clone();
        *self.visible.write().unwrap() = next;
        drop(head);
        self.compaction.lock().unwrap().earlier_bases.push(replaced);
        let swap_seconds = swap_started.elapsed().as_secs_f64();

        wal.remove_before(snapshot.version() + 1)?;
        layout.remove_leftovers(dir)?;
        Ok(Some(CompactionReport {
            version: snapshot.version(),
            quads,
            delta_changes: snapshot.delta_changes(),
            replayed,
            dump_seconds: (dumped - started).as_secs_f64(),
            build_seconds: (built - dumped).as_secs_f64(),
            seconds: started.elapsed().as_secs_f64(),
            swap_seconds,
        }))
    }
}

/// A few random bits from the clock and the process (no dependency for it).
fn rand_suffix() -> u32 {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    nanos ^ std::process::id().rotate_left(16)
}

fn build_failed(e: impl std::fmt::Display) -> IndexError {
    IndexError::Rebuild(format!("the new base could not be built: {e}"))
}

/// Writes every quad of `snapshot` as N-Quads; returns how many.
fn write_dump(snapshot: &Snapshot, path: &Path) -> Result<u64> {
    let file = std::fs::File::create(path).at(path)?;
    let mut out =
        zstd::Encoder::new(std::io::BufWriter::with_capacity(1 << 20, file), 1).at(path)?;
    let mut quads = 0;
    let mut line = String::new();
    for batch in snapshot.scan(Permutation::Spo, &[], ScanRange::ALL) {
        let batch = batch?;
        let columns: Vec<_> = (0..4)
            .map(|c| snapshot.term_refs(&batch.columns[c]))
            .collect::<Result<_>>()?;
        for i in 0..batch.len() {
            line.clear();
            for (c, column) in columns.iter().enumerate() {
                if c == 3 && batch.columns[3][i] == Id::DEFAULT_GRAPH {
                    continue;
                }
                let term = column.get(i).ok_or_else(|| IndexError::Corrupt {
                    path: snapshot.dir().to_owned(),
                    reason: format!("no term for {:?}", batch.columns[c][i]),
                })?;
                use std::fmt::Write as _;
                let _ = write!(line, "{term} ");
            }
            line.push_str(".\n");
            out.write_all(line.as_bytes()).at(path)?;
            quads += 1;
        }
    }
    out.finish().and_then(|mut w| w.flush()).at(path)?;
    Ok(quads)
}
