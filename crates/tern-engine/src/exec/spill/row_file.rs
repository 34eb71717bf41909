//! A temporary file of rows of one width.
//!
//! Rows are written in blocks of about [`BLOCK_BYTES`], each compressed with
//! LZ4 (IDs of sorted or partitioned rows repeat their high bytes, and the
//! disk is slower than the compression), and grouped in segments (a sorted
//! run, a partition) that are read back a block at a time, in the order
//! written. The file has no name: it goes when it is dropped, also when the
//! process is killed.

use crate::context::{QueryContext, SharedMemory};
use crate::suspend::StashSize;
use crate::EngineError;
use std::fs::File;
use std::io::Write;
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use tern_index::Id;

/// Uncompressed bytes of a block (the last of a segment may be smaller).
const BLOCK_BYTES: usize = 256 * 1024;
/// Rows of a block at most (rows of no columns take no bytes).
const MAX_BLOCK_ROWS: usize = 1 << 20;
/// A block's header: compressed length and rows, both u32 little endian.
const HEADER: usize = 8;

pub struct RowFile {
    file: File,
    width: usize,
    /// Bytes written so far.
    end: u64,
    /// Where the segment being written starts, and its rows so far.
    segment_start: u64,
    segment_rows: u64,
    /// Rows not written yet, one after the other.
    pending: Vec<Id>,
    pending_rows: usize,
    /// Scratch space for a block as bytes.
    bytes: Vec<u8>,
    /// Where the engine counts spill files and bytes.
    counters: Option<Arc<SharedMemory>>,
}

/// A part of a [`RowFile`] written at once (a sorted run, a partition).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Segment {
    start: u64,
    end: u64,
    pub rows: u64,
}

/// Where a reader of a segment is.
#[derive(Debug, Clone, Copy)]
pub struct SegmentReader {
    next: u64,
    end: u64,
}

impl Segment {
    pub fn reader(&self) -> SegmentReader {
        SegmentReader {
            next: self.start,
            end: self.end,
        }
    }
}

fn spill_error(e: std::io::Error) -> EngineError {
    EngineError::Spill(e)
}

impl RowFile {
    /// A new file for rows of `width` columns of a query, in its spill
    /// directory and counted by its engine.
    pub fn for_query(ctx: &QueryContext, width: usize) -> Result<RowFile, EngineError> {
        RowFile::create(ctx.spill_dir(), width, ctx.engine_memory())
    }

    /// A new file in `dir` for rows of `width` columns, counted in
    /// `counters`.
    pub fn create(
        dir: &Path,
        width: usize,
        counters: Option<Arc<SharedMemory>>,
    ) -> Result<RowFile, EngineError> {
        let file = tempfile::tempfile_in(dir).map_err(|e| {
            EngineError::Spill(std::io::Error::new(
                e.kind(),
                format!("cannot create a temporary file in {}: {e}", dir.display()),
            ))
        })?;
        if let Some(c) = &counters {
            c.spilled.files.fetch_add(1, Ordering::Relaxed);
        }
        Ok(RowFile {
            file,
            width,
            end: 0,
            segment_start: 0,
            segment_rows: 0,
            pending: Vec::new(),
            pending_rows: 0,
            bytes: Vec::new(),
            counters,
        })
    }

    /// Appends a row to the segment being written.
    pub fn push(&mut self, row: &[Id]) -> Result<(), EngineError> {
        debug_assert_eq!(row.len(), self.width);
        self.pending.extend_from_slice(row);
        self.pending_rows += 1;
        if self.pending.len() * 8 >= BLOCK_BYTES || self.pending_rows >= MAX_BLOCK_ROWS {
            self.write_block()?;
        }
        Ok(())
    }

    /// Ends the segment being written (possibly empty) and says where it is.
    pub fn finish_segment(&mut self) -> Result<Segment, EngineError> {
        self.write_block()?;
        let segment = Segment {
            start: self.segment_start,
            end: self.end,
            rows: self.segment_rows,
        };
        self.segment_start = self.end;
        self.segment_rows = 0;
        Ok(segment)
    }

    fn write_block(&mut self) -> Result<(), EngineError> {
        if self.pending_rows == 0 {
            return Ok(());
        }
        self.bytes.clear();
        self.bytes
            .extend(self.pending.iter().flat_map(|id| id.0.to_le_bytes()));
        let compressed = lz4_flex::block::compress(&self.bytes);
        let mut block = Vec::with_capacity(HEADER + compressed.len());
        block.extend_from_slice(&(compressed.len() as u32).to_le_bytes());
        block.extend_from_slice(&(self.pending_rows as u32).to_le_bytes());
        block.extend_from_slice(&compressed);
        (&self.file).write_all(&block).map_err(spill_error)?;
        self.end += block.len() as u64;
        if let Some(c) = &self.counters {
            c.spilled
                .bytes
                .fetch_add(block.len() as u64, Ordering::Relaxed);
        }
        self.segment_rows += self.pending_rows as u64;
        self.pending.clear();
        self.pending_rows = 0;
        Ok(())
    }

    /// The next block of a segment into `rows` (replacing what it held, one
    /// row after the other); its number of rows, 0 at the segment's end.
    pub fn read_block(
        &self,
        reader: &mut SegmentReader,
        rows: &mut Vec<Id>,
    ) -> Result<usize, EngineError> {
        rows.clear();
        if reader.next >= reader.end {
            return Ok(0);
        }
        let mut header = [0u8; HEADER];
        self.file
            .read_exact_at(&mut header, reader.next)
            .map_err(spill_error)?;
        let compressed_len = u32::from_le_bytes(header[..4].try_into().unwrap()) as usize;
        let count = u32::from_le_bytes(header[4..].try_into().unwrap()) as usize;
        let mut compressed = vec![0u8; compressed_len];
        self.file
            .read_exact_at(&mut compressed, reader.next + HEADER as u64)
            .map_err(spill_error)?;
        let bytes = lz4_flex::block::decompress(&compressed, count * self.width * 8)
            .map_err(|e| spill_error(std::io::Error::new(std::io::ErrorKind::InvalidData, e)))?;
        rows.extend(
            bytes
                .chunks_exact(8)
                .map(|b| Id(u64::from_le_bytes(b.try_into().unwrap()))),
        );
        reader.next += (HEADER + compressed_len) as u64;
        Ok(count)
    }
}

impl RowFile {
    /// Reads a whole segment, handing each block (its rows one after the
    /// other, and their number) to `each`.
    pub fn read_segment(
        &self,
        segment: &Segment,
        mut each: impl FnMut(&[Id], usize) -> Result<(), EngineError>,
    ) -> Result<(), EngineError> {
        let mut reader = segment.reader();
        let mut block = Vec::new();
        loop {
            let count = self.read_block(&mut reader, &mut block)?;
            if count == 0 {
                return Ok(());
            }
            each(&block, count)?;
        }
    }
}

impl StashSize for RowFile {
    /// Only what it holds in memory: the rows not written yet.
    fn stash_bytes(&self) -> usize {
        self.pending.capacity() * 8 + self.bytes.capacity()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn segments_read_back_the_rows_written_in_order() {
        let dir = tempfile::tempdir().unwrap();
        for width in [0, 1, 3] {
            let mut file = RowFile::create(dir.path(), width, None).unwrap();
            let counts = [0usize, 1, 5, 40_000, 12_345];
            let mut segments = Vec::new();
            let mut next = 0u64;
            for &count in &counts {
                for _ in 0..count {
                    let row: Vec<Id> = (0..width as u64).map(|c| Id(next * 7 + c)).collect();
                    file.push(&row).unwrap();
                    next += 1;
                }
                segments.push(file.finish_segment().unwrap());
            }
            let mut expected = 0u64;
            for (segment, &count) in segments.iter().zip(&counts) {
                assert_eq!(segment.rows, count as u64);
                let mut reader = segment.reader();
                let mut rows = Vec::new();
                let mut seen = 0;
                loop {
                    let n = file.read_block(&mut reader, &mut rows).unwrap();
                    if n == 0 {
                        break;
                    }
                    assert_eq!(rows.len(), n * width);
                    for row in rows.chunks(width.max(1)).take(n) {
                        if width > 0 {
                            let want: Vec<Id> =
                                (0..width as u64).map(|c| Id(expected * 7 + c)).collect();
                            assert_eq!(row, want.as_slice());
                        }
                        expected += 1;
                    }
                    seen += n;
                }
                assert_eq!(seen, count, "width {width}");
            }
        }
    }
}
