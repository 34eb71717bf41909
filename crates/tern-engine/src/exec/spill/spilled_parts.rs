//! The parts of an input written to disk by hash (a GROUP BY larger than
//! memory): the parts being written, the parts waiting, and the one being
//! read back.
//!
//! An operator reads a source (its input, then each part in turn); while it
//! reads one, rows it cannot keep in memory go to [`Partitions`] seeded by
//! the source's level, and when the source ends those become parts of the
//! next level, split by another hash if they are still too large.

use super::{Partitions, RowFile, SegmentReader};
use crate::context::QueryContext;
use crate::suspend::StashSize;
use crate::EngineError;
use tern_index::Id;

/// Levels of splitting at most: past this many, a part that still does not
/// fit holds a key too large for the budget.
const MAX_LEVEL: u64 = 24;

pub struct SpilledParts {
    width: usize,
    key_columns: Vec<usize>,
    /// Rows of the source being read that go to disk, once any do.
    writing: Option<Partitions>,
    /// Level of the source being read (its input: 0).
    level: u64,
    waiting: Vec<Part>,
    reading: Option<Part>,
}

struct Part {
    file: RowFile,
    reader: SegmentReader,
    level: u64,
}

impl SpilledParts {
    /// For an input of `width` columns split by the values of
    /// `key_columns`.
    pub fn new(width: usize, key_columns: Vec<usize>) -> SpilledParts {
        SpilledParts {
            width,
            key_columns,
            writing: None,
            level: 0,
            waiting: Vec::new(),
            reading: None,
        }
    }

    /// Whether rows of the source being read go to disk now.
    pub fn spilling(&self) -> bool {
        self.writing.is_some()
    }

    /// From now on, rows of the source being read that the caller cannot
    /// keep go to disk.
    pub fn start(&mut self, ctx: &QueryContext) -> Result<(), EngineError> {
        if self.level >= MAX_LEVEL {
            return Err(EngineError::MemoryBudget {
                budget: ctx.memory_budget().unwrap_or(0),
            });
        }
        if self.writing.is_none() {
            self.writing = Some(Partitions::new(
                ctx,
                self.width,
                self.key_columns.clone(),
                self.level,
            )?);
        }
        Ok(())
    }

    /// Writes a row the caller does not keep (after [`start`](Self::start)).
    pub fn push(&mut self, row: &[Id]) -> Result<(), EngineError> {
        self.writing
            .as_mut()
            .expect("spilling has started")
            .push(row)
    }

    /// The source being read has ended: what it wrote waits as parts of
    /// the next level.
    pub fn end_source(&mut self) -> Result<(), EngineError> {
        self.reading = None;
        if let Some(parts) = self.writing.take() {
            for (file, segment) in parts.finish()? {
                if segment.rows > 0 {
                    self.waiting.push(Part {
                        file,
                        reader: segment.reader(),
                        level: self.level + 1,
                    });
                }
            }
        }
        Ok(())
    }

    /// Starts reading the next waiting part; false when none is left.
    pub fn next_part(&mut self) -> bool {
        debug_assert!(self.writing.is_none() && self.reading.is_none());
        match self.waiting.pop() {
            Some(part) => {
                self.level = part.level;
                self.reading = Some(part);
                true
            }
            None => false,
        }
    }

    /// Whether a part is being read.
    pub fn reading(&self) -> bool {
        self.reading.is_some()
    }

    /// The next block of rows of the part being read, one after the other
    /// in `rows`; its number of rows, 0 when the part is done.
    pub fn read_block(&mut self, rows: &mut Vec<Id>) -> Result<usize, EngineError> {
        match self.reading.as_mut() {
            Some(part) => part.file.read_block(&mut part.reader, rows),
            None => Ok(0),
        }
    }
}

impl StashSize for SpilledParts {
    fn stash_bytes(&self) -> usize {
        self.writing.as_ref().map_or(0, StashSize::stash_bytes) + (self.waiting.len() + 1) * 64
    }
}
