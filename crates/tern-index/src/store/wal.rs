//! The write-ahead log: every committed update as one checksummed record,
//! fsynced before the update is acknowledged.
//!
//! Group commit: a writer appends its record (one `write`, under the log's
//! lock) and then waits until the log is synced at least up to its record's
//! end. Whoever finds the log unsynced syncs everything written so far, so
//! writers that append while a sync runs share the next one.
//!
//! Files: `wal/<first sequence number>.log`, a new one after each
//! compaction (older ones are removed once the base holds their updates).
//! Record: payload length (u32), CRC-32 of sequence number and payload
//! (u32), sequence number (u64), payload; little-endian. A torn record at
//! the end of the last file is an update that was never acknowledged: it is
//! cut off on open.

use crate::error::{IndexError, IoContext, Result};
use std::fs::{File, OpenOptions};
use std::io::{IoSlice, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex};

const HEADER: usize = 16;
/// Larger payloads are refused (an update of that size is a bulk load).
pub const MAX_RECORD: usize = 1 << 30;

/// One record read back from the log.
pub struct Record {
    pub seq: u64,
    pub payload: Vec<u8>,
}

pub struct Wal {
    dir: PathBuf,
    segment: Mutex<Segment>,
    sync: Mutex<Synced>,
    synced_changed: Condvar,
}

struct Segment {
    file: Arc<File>,
    path: PathBuf,
    /// Bytes ever written to the log, over all its files: positions that
    /// writers wait for.
    written: u64,
    /// Bytes in this file.
    len: u64,
}

struct Synced {
    /// Log position known to be on disk.
    upto: u64,
    /// A sync is running.
    busy: bool,
    /// A sync failed: nothing more can be acknowledged.
    failed: Option<String>,
}

impl Wal {
    /// Reads every record in `dir` (creating it if needed), cutting off a
    /// torn record at the end; then opens the log for appending, in a new
    /// file when `next_seq` starts one.
    pub fn open(dir: &Path) -> Result<(Wal, Vec<Record>)> {
        std::fs::create_dir_all(dir).at(dir)?;
        let segments = segments(dir)?;
        let mut records = Vec::new();
        let last = segments.len().checked_sub(1);
        for (i, (_, path)) in segments.iter().enumerate() {
            let valid = read_segment(path, &mut records)?;
            let len = std::fs::metadata(path).at(path)?.len();
            if valid < len {
                if Some(i) != last {
                    return Err(IndexError::Corrupt {
                        path: path.clone(),
                        reason: format!(
                            "bad log record at byte {valid}, and more log files follow"
                        ),
                    });
                }
                let file = OpenOptions::new().write(true).open(path).at(path)?;
                file.set_len(valid).at(path)?;
                file.sync_all().at(path)?;
            }
        }
        let next_seq = records.last().map_or(1, |r| r.seq + 1);
        let path = match segments.last() {
            Some((_, path)) => path.clone(),
            None => segment_path(dir, next_seq),
        };
        let wal = Wal {
            dir: dir.to_owned(),
            segment: Mutex::new(open_segment(&path)?),
            sync: Mutex::new(Synced {
                upto: 0,
                busy: false,
                failed: None,
            }),
            synced_changed: Condvar::new(),
        };
        sync_dir(dir)?;
        Ok((wal, records))
    }

    /// Appends a record whose payload is `parts` one after the other;
    /// returns the log position a writer waits for with
    /// [`wait_durable`](Self::wait_durable). The parts are written as they
    /// are (a large update's payload is not copied into one buffer).
    pub fn append(&self, seq: u64, parts: &[&[u8]]) -> Result<u64> {
        let len: usize = parts.iter().map(|p| p.len()).sum();
        if len > MAX_RECORD {
            return Err(IndexError::Corrupt {
                path: self.dir.clone(),
                reason: format!("an update of {len} bytes is over the log's limit"),
            });
        }
        let mut header = [0u8; HEADER];
        header[..4].copy_from_slice(&(len as u32).to_le_bytes());
        header[4..8].copy_from_slice(&checksum(seq, parts).to_le_bytes());
        header[8..].copy_from_slice(&seq.to_le_bytes());
        let mut segment = self.segment.lock().unwrap();
        let path = segment.path.clone();
        let mut file = &*segment.file;
        let mut slices: Vec<IoSlice<'_>> = std::iter::once(&header[..])
            .chain(parts.iter().copied())
            .filter(|part| !part.is_empty())
            .map(IoSlice::new)
            .collect();
        let written = write_all_vectored(&mut file, &mut slices);
        if let Err(e) = written {
            // Take back what part of it was written: the next record must
            // follow the last whole one.
            let len = segment.len;
            segment.file.set_len(len).at(&path)?;
            return Err(e).at(&path);
        }
        let record_len = (HEADER + len) as u64;
        segment.len += record_len;
        segment.written += record_len;
        Ok(segment.written)
    }

    /// Returns once the log is on disk up to `position`, syncing it if no
    /// one else is.
    pub fn wait_durable(&self, position: u64) -> Result<()> {
        let mut sync = self.sync.lock().unwrap();
        loop {
            if let Some(reason) = &sync.failed {
                return Err(self.failed(reason));
            }
            if sync.upto >= position {
                return Ok(());
            }
            if !sync.busy {
                break;
            }
            sync = self.synced_changed.wait(sync).unwrap();
        }
        sync.busy = true;
        drop(sync);
        let (file, path, written) = {
            let segment = self.segment.lock().unwrap();
            (segment.file.clone(), segment.path.clone(), segment.written)
        };
        let result = file.sync_data();
        let mut sync = self.sync.lock().unwrap();
        sync.busy = false;
        match result {
            Ok(()) => sync.upto = sync.upto.max(written),
            Err(e) => sync.failed = Some(format!("{}: {e}", path.display())),
        }
        self.synced_changed.notify_all();
        match &sync.failed {
            Some(reason) => Err(self.failed(reason)),
            None => Ok(()),
        }
    }

    /// Fails if an earlier sync failed (nothing can be acknowledged then).
    pub fn check_healthy(&self) -> Result<()> {
        match &self.sync.lock().unwrap().failed {
            Some(reason) => Err(self.failed(reason)),
            None => Ok(()),
        }
    }

    /// Continues the log in a new file whose first record is `next_seq`
    /// (everything written so far is synced first).
    pub fn rotate(&self, next_seq: u64) -> Result<()> {
        let mut segment = self.segment.lock().unwrap();
        segment.file.sync_data().at(&segment.path)?;
        let written = segment.written;
        let path = segment_path(&self.dir, next_seq);
        let mut fresh = open_segment(&path)?;
        fresh.written = written;
        *segment = fresh;
        sync_dir(&self.dir)?;
        let mut sync = self.sync.lock().unwrap();
        sync.upto = sync.upto.max(written);
        Ok(())
    }

    /// Removes the files whose records all have sequence numbers below
    /// `seq` (the base holds them now).
    pub fn remove_before(&self, seq: u64) -> Result<()> {
        let segments = segments(&self.dir)?;
        for (i, (first, path)) in segments.iter().enumerate() {
            let next_first = segments.get(i + 1).map(|s| s.0);
            if next_first.is_some_and(|n| n <= seq) && *first < seq {
                std::fs::remove_file(path).at(path)?;
            }
        }
        sync_dir(&self.dir)
    }

    /// Log position after the last record appended.
    pub fn written(&self) -> u64 {
        self.segment.lock().unwrap().written
    }

    fn failed(&self, reason: &str) -> IndexError {
        IndexError::Io {
            path: self.dir.clone(),
            source: std::io::Error::other(format!(
                "an earlier sync of the write-ahead log failed ({reason}); \
                 restart the server to recover from the log"
            )),
        }
    }
}

/// Bytes in the log's files in `dir`.
pub fn bytes_in(dir: &Path) -> u64 {
    segments(dir)
        .unwrap_or_default()
        .iter()
        .filter_map(|(_, p)| std::fs::metadata(p).ok())
        .map(|m| m.len())
        .sum()
}

/// The records of the log in `dir` as they are (nothing is cut off or
/// created): for a reader that does not write.
pub fn read_only(dir: &Path) -> Result<Vec<Record>> {
    read_from(dir, 0)
}

/// The records of the log files that start at `first_seq` or later.
pub fn read_from(dir: &Path, first_seq: u64) -> Result<Vec<Record>> {
    let mut records = Vec::new();
    if !dir.exists() {
        return Ok(records);
    }
    let segments = segments(dir)?;
    // The file holding `first_seq` may start before it.
    let start = segments
        .partition_point(|(first, _)| *first <= first_seq)
        .saturating_sub(1);
    for (_, path) in &segments[start..] {
        read_segment(path, &mut records)?;
    }
    records.retain(|r| r.seq >= first_seq);
    Ok(records)
}

/// CRC-32 of a record's sequence number and payload (given in parts).
fn checksum(seq: u64, payload: &[&[u8]]) -> u32 {
    let mut hasher = crc32fast::Hasher::new();
    hasher.update(&seq.to_le_bytes());
    payload.iter().for_each(|part| hasher.update(part));
    hasher.finalize()
}

fn segment_path(dir: &Path, first_seq: u64) -> PathBuf {
    dir.join(format!("{first_seq:020}.log"))
}

/// The log's files with their first sequence numbers, in order.
fn segments(dir: &Path) -> Result<Vec<(u64, PathBuf)>> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).at(dir)? {
        let path = entry.at(dir)?.path();
        let first = path
            .file_name()
            .and_then(|n| n.to_str())
            .and_then(|n| n.strip_suffix(".log"))
            .and_then(|n| n.parse::<u64>().ok());
        if let Some(first) = first {
            out.push((first, path));
        }
    }
    out.sort();
    Ok(out)
}

fn open_segment(path: &Path) -> Result<Segment> {
    let file = OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .at(path)?;
    let len = file.metadata().at(path)?.len();
    Ok(Segment {
        file: Arc::new(file),
        path: path.to_owned(),
        written: len,
        len,
    })
}

/// Appends the whole records of one file to `records`; returns the bytes
/// they take (where a torn or damaged record starts, or the file's end).
fn read_segment(path: &Path, records: &mut Vec<Record>) -> Result<u64> {
    let mut bytes = Vec::new();
    File::open(path)
        .at(path)?
        .read_to_end(&mut bytes)
        .at(path)?;
    let mut at = 0usize;
    while bytes.len() - at >= HEADER {
        let word = |i: usize| u32::from_le_bytes(bytes[at + i..at + i + 4].try_into().unwrap());
        let len = word(0) as usize;
        let crc = word(4);
        let seq = u64::from_le_bytes(bytes[at + 8..at + 16].try_into().unwrap());
        let end = at + HEADER + len;
        if len > MAX_RECORD || end > bytes.len() {
            break;
        }
        let payload = &bytes[at + HEADER..end];
        if checksum(seq, &[payload]) != crc {
            break;
        }
        if records.last().is_some_and(|r| r.seq >= seq) {
            break;
        }
        records.push(Record {
            seq,
            payload: payload.to_vec(),
        });
        at = end;
    }
    Ok(at as u64)
}

/// Makes a directory's entries (a new or renamed file) durable.
pub fn sync_dir(dir: &Path) -> Result<()> {
    File::open(dir).at(dir)?.sync_all().at(dir)
}

/// Writes all of `slices`, in one system call when the kernel takes them
/// all (a small update's record is a header and a few short parts: one
/// `write` each cost more than the update).
fn write_all_vectored(
    file: &mut impl Write,
    mut slices: &mut [IoSlice<'_>],
) -> std::io::Result<()> {
    while !slices.is_empty() {
        match file.write_vectored(slices) {
            Ok(0) => return Err(std::io::ErrorKind::WriteZero.into()),
            Ok(n) => IoSlice::advance_slices(&mut slices, n),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_come_back_and_a_torn_tail_is_cut() {
        let dir = tempfile::tempdir().unwrap();
        let wal_dir = dir.path().join("wal");
        {
            let (wal, records) = Wal::open(&wal_dir).unwrap();
            assert!(records.is_empty());
            let p1 = wal.append(1, &[b"fir", b"st"]).unwrap();
            let p2 = wal.append(2, &[b"second"]).unwrap();
            wal.wait_durable(p1).unwrap();
            wal.wait_durable(p2).unwrap();
        }
        let file = segments(&wal_dir).unwrap()[0].1.clone();
        // A torn third record.
        let mut f = OpenOptions::new().append(true).open(&file).unwrap();
        f.write_all(&[9, 0, 0, 0, 1, 2]).unwrap();
        drop(f);
        let (wal, records) = Wal::open(&wal_dir).unwrap();
        let seqs: Vec<u64> = records.iter().map(|r| r.seq).collect();
        assert_eq!(seqs, vec![1, 2]);
        assert_eq!(records[1].payload, b"second");
        wal.rotate(3).unwrap();
        let p = wal.append(3, &[b"third"]).unwrap();
        wal.wait_durable(p).unwrap();
        wal.remove_before(3).unwrap();
        drop(wal);
        let (_, records) = Wal::open(&wal_dir).unwrap();
        let seqs: Vec<u64> = records.iter().map(|r| r.seq).collect();
        assert_eq!(seqs, vec![3]);
    }
}
