//! `store.json`: which base is current and the last update it holds.
//! Written to a temporary file, synced and renamed over the old one, so a
//! crash leaves either the old or the new one.

use super::wal::sync_dir;
use crate::error::{IndexError, IoContext, Result};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

pub const WAL_DIR: &str = "wal";
pub const BASES_DIR: &str = "bases";
pub const WORK_DIR: &str = "compaction";
const LAYOUT_FILE: &str = "store.json";
const LOCK_FILE: &str = "store.lock";

/// Takes the store's write lock (released when the file is closed, also
/// when the process dies): a second writer gets a clear error instead of
/// two logs interleaving.
pub fn lock(dir: &Path) -> Result<std::fs::File> {
    let path = dir.join(LOCK_FILE);
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .at(&path)?;
    match file.try_lock() {
        Ok(()) => Ok(file),
        Err(std::fs::TryLockError::WouldBlock) => Err(IndexError::Locked { path }),
        Err(std::fs::TryLockError::Error(e)) => Err(e).at(path),
    }
}

/// Whether `dir` holds a store: a layout written by a compaction, or the
/// index `tern load` wrote.
pub fn is_store(dir: &Path) -> bool {
    dir.join(LAYOUT_FILE).is_file() || dir.join(crate::meta::META_FILE).is_file()
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Layout {
    /// The current base's directory relative to the store's ("": the store's
    /// own directory, where `tern load` wrote it).
    pub base: String,
    /// Updates up to this number are in the base; the log replays the rest.
    pub seq: u64,
}

impl Layout {
    pub fn read(dir: &Path) -> Result<Layout> {
        let path = dir.join(LAYOUT_FILE);
        match std::fs::read(&path) {
            Ok(bytes) => serde_json::from_slice(&bytes).map_err(|e| IndexError::Corrupt {
                path,
                reason: e.to_string(),
            }),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Layout::default()),
            Err(e) => Err(e).at(path),
        }
    }

    pub fn write(&self, dir: &Path) -> Result<()> {
        let path = dir.join(LAYOUT_FILE);
        let temporary = dir.join(format!("{LAYOUT_FILE}.new"));
        let bytes = serde_json::to_vec_pretty(self).expect("a layout serializes");
        std::fs::write(&temporary, bytes).at(&temporary)?;
        std::fs::File::open(&temporary)
            .and_then(|f| f.sync_all())
            .at(&temporary)?;
        std::fs::rename(&temporary, &path).at(&path)?;
        sync_dir(dir)
    }

    pub fn base_dir(&self, dir: &Path) -> PathBuf {
        if self.base.is_empty() {
            dir.to_owned()
        } else {
            dir.join(&self.base)
        }
    }

    /// Removes what a crash or a finished compaction left: the work
    /// directory, bases other than the current one, and the files of the
    /// top-level base once a compacted base replaced it.
    pub fn remove_leftovers(&self, dir: &Path) -> Result<()> {
        let work = dir.join(WORK_DIR);
        if work.exists() {
            std::fs::remove_dir_all(&work).at(&work)?;
        }
        let bases = dir.join(BASES_DIR);
        if bases.exists() {
            let current = self.base_dir(dir);
            for entry in std::fs::read_dir(&bases).at(&bases)? {
                let path = entry.at(&bases)?.path();
                if path != current {
                    std::fs::remove_dir_all(&path).at(&path)?;
                }
            }
        }
        if !self.base.is_empty() {
            remove_top_level_base(dir, &self.base_dir(dir))?;
        }
        Ok(())
    }
}

/// Removes the files of the base `tern load` wrote at the top of `dir`:
/// those named like the files of `current` (a base has the same files).
pub fn remove_top_level_base(dir: &Path, current: &Path) -> Result<()> {
    for entry in std::fs::read_dir(current).at(current)? {
        let entry = entry.at(current)?;
        let top = dir.join(entry.file_name());
        if entry.file_type().at(current)?.is_file() && top.is_file() {
            std::fs::remove_file(&top).at(&top)?;
        }
    }
    Ok(())
}
