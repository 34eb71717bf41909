//! Atomic builds: an index is written into a hidden sibling directory and renamed
//! into place only when complete. A failed or interrupted build never leaves a
//! half index, and an existing index stays untouched until the new one is done.

use super::error::{LoadError, LoadIo};
use crate::meta::META_FILE;
use std::fs;
use std::path::{Path, PathBuf};

pub struct BuildDir {
    target: PathBuf,
    building: PathBuf,
    committed: bool,
}

fn sibling(target: &Path, tag: &str, pid: u32) -> PathBuf {
    let name = target
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    target.with_file_name(format!(".{name}.{tag}-{pid}"))
}

impl BuildDir {
    /// Checks that `target` may be written and creates the build directory.
    pub fn prepare(target: &Path, force: bool) -> Result<BuildDir, LoadError> {
        if target.exists() {
            let is_empty_dir = fs::read_dir(target)
                .map(|mut d| d.next().is_none())
                .unwrap_or(false);
            if !is_empty_dir {
                // A store whose base a compaction replaced has its base in
                // bases/ and `store.json` on top.
                let is_store =
                    target.join(META_FILE).exists() || target.join("store.json").exists();
                if !is_store {
                    return Err(LoadError::NotAnIndex {
                        path: target.to_owned(),
                    });
                }
                if !force {
                    return Err(LoadError::AlreadyExists {
                        path: target.to_owned(),
                    });
                }
            }
        }
        let parent = match target.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_owned(),
            _ => PathBuf::from("."),
        };
        fs::create_dir_all(&parent).at(&parent)?;
        remove_stale_builds(target);
        let building = sibling(target, "building", std::process::id());
        if building.exists() {
            fs::remove_dir_all(&building).at(&building)?;
        }
        fs::create_dir_all(building.join("work")).at(&building)?;
        Ok(BuildDir {
            target: target.to_owned(),
            building,
            committed: false,
        })
    }

    /// Where index files are written.
    pub fn path(&self) -> &Path {
        &self.building
    }

    /// Scratch space for runs and sort chunks, removed before the rename.
    pub fn work_dir(&self) -> PathBuf {
        self.building.join("work")
    }

    /// Makes the files durable, then swaps the new index into place.
    pub fn commit(mut self) -> Result<(), LoadError> {
        let work = self.work_dir();
        fs::remove_dir_all(&work).at(&work)?;
        for entry in fs::read_dir(&self.building).at(&self.building)? {
            let path = entry.at(&self.building)?.path();
            fs::File::open(&path).and_then(|f| f.sync_all()).at(&path)?;
        }
        let old = sibling(&self.target, "replaced", std::process::id());
        let had_old = self.target.exists();
        if had_old {
            fs::rename(&self.target, &old).at(&self.target)?;
        }
        if let Err(e) = fs::rename(&self.building, &self.target) {
            if had_old {
                // Put the previous index back before reporting.
                let _ = fs::rename(&old, &self.target);
            }
            return Err(LoadError::Io {
                path: self.target.clone(),
                source: e,
            });
        }
        self.committed = true;
        if let Some(parent) = self.target.parent() {
            let _ = fs::File::open(parent).and_then(|d| d.sync_all());
        }
        if had_old {
            fs::remove_dir_all(&old).at(&old)?;
        }
        Ok(())
    }
}

impl Drop for BuildDir {
    fn drop(&mut self) {
        if !self.committed {
            let _ = fs::remove_dir_all(&self.building);
        }
    }
}

/// Removes build directories left by killed loads of the same target.
fn remove_stale_builds(target: &Path) {
    let Some(name) = target.file_name().map(|n| n.to_string_lossy().into_owned()) else {
        return;
    };
    let parent = target
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let Ok(entries) = fs::read_dir(parent) else {
        return;
    };
    for entry in entries.flatten() {
        let file_name = entry.file_name().to_string_lossy().into_owned();
        let Some(rest) = file_name.strip_prefix(&format!(".{name}.building-")) else {
            continue;
        };
        let alive = rest
            .parse::<u32>()
            .is_ok_and(|pid| Path::new(&format!("/proc/{pid}")).exists());
        if !alive {
            let _ = fs::remove_dir_all(entry.path());
        }
    }
}
