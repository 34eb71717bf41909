//! The large index files (permutation data, vocabulary blocks), read by
//! positioned reads of one block at a time.
//!
//! They are not memory-mapped: every page of a mapping that a scan touches
//! stays in the process's resident set, so exporting a whole index would
//! grow the server's RSS by the size of the index. A positioned read copies a
//! block (tens of KiB) out of the page cache into a reused buffer, which costs
//! little next to decompressing it, and leaves the file's pages to the kernel.

use crate::error::{IndexError, IoContext, Result};
use std::cell::Cell;
use std::fs::File;
use std::ops::Range;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

/// Buffers larger than this are not kept for the next read.
const KEPT_BUFFER_BYTES: usize = 4 << 20;

thread_local! {
    /// One read buffer per thread, taken while in use (so a read nested in
    /// another's callback gets a fresh one instead of a borrow conflict).
    static BUFFER: Cell<Vec<u8>> = const { Cell::new(Vec::new()) };
}

/// An index file read block by block.
pub(crate) struct BlockFile {
    file: File,
    len: u64,
    path: PathBuf,
}

impl BlockFile {
    pub fn open(path: &Path) -> Result<BlockFile> {
        let file = File::open(path).at(path)?;
        let len = file.metadata().at(path)?.len();
        Ok(BlockFile {
            file,
            len,
            path: path.to_owned(),
        })
    }

    pub fn len(&self) -> u64 {
        self.len
    }

    /// Calls `with` on the bytes of `range`.
    pub fn read<R>(&self, range: Range<u64>, with: impl FnOnce(&[u8]) -> R) -> Result<R> {
        if range.start > range.end || range.end > self.len {
            return Err(IndexError::Corrupt {
                path: self.path.clone(),
                reason: format!(
                    "block at bytes {}..{} lies outside the file ({} bytes)",
                    range.start, range.end, self.len
                ),
            });
        }
        let mut buffer = BUFFER.take();
        buffer.resize((range.end - range.start) as usize, 0);
        let read = self.file.read_exact_at(&mut buffer, range.start);
        let result = read.at(&self.path).map(|()| with(&buffer));
        if buffer.capacity() <= KEPT_BUFFER_BYTES {
            BUFFER.set(buffer);
        }
        result
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_ranges_and_rejects_ranges_past_the_end() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        std::fs::write(&path, b"0123456789").unwrap();
        let file = BlockFile::open(&path).unwrap();
        assert_eq!(file.len(), 10);
        assert_eq!(file.read(2..5, |b| b.to_vec()).unwrap(), b"234");
        let nested = file
            .read(0..2, |outer| {
                let inner = file.read(8..10, |b| b.to_vec()).unwrap();
                [outer, &inner[..]].concat()
            })
            .unwrap();
        assert_eq!(nested, b"0189");
        let err = file.read(5..11, |b| b.len()).unwrap_err().to_string();
        assert!(err.contains("outside the file"), "{err}");
    }
}
