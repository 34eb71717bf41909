use super::{codec, Permutation, Row, BLOCK_ROWS};
use crate::error::{IoContext, Result};
use rayon::prelude::*;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

/// Blocks encoded together in parallel before being written in order.
const PARALLEL_BLOCKS: usize = 8;

/// Metadata of one block, kept in memory by readers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BlockMeta {
    pub first: Row,
    pub last: Row,
    pub rows: u64,
    pub offset: u64,
    pub column_bytes: [u32; 4],
}

pub const META_RECORD: usize = 96;

impl BlockMeta {
    pub fn to_bytes(self) -> [u8; META_RECORD] {
        let mut out = [0u8; META_RECORD];
        let words = self
            .first
            .iter()
            .chain(&self.last)
            .chain([&self.rows, &self.offset]);
        for (i, w) in words.enumerate() {
            out[i * 8..i * 8 + 8].copy_from_slice(&w.to_le_bytes());
        }
        for (i, len) in self.column_bytes.iter().enumerate() {
            out[80 + i * 4..84 + i * 4].copy_from_slice(&len.to_le_bytes());
        }
        out
    }

    pub fn from_bytes(b: &[u8]) -> BlockMeta {
        let word = |i: usize| u64::from_le_bytes(b[i * 8..i * 8 + 8].try_into().unwrap());
        let len = |i: usize| u32::from_le_bytes(b[80 + i * 4..84 + i * 4].try_into().unwrap());
        BlockMeta {
            first: [word(0), word(1), word(2), word(3)],
            last: [word(4), word(5), word(6), word(7)],
            rows: word(8),
            offset: word(9),
            column_bytes: [len(0), len(1), len(2), len(3)],
        }
    }

    pub fn byte_len(&self) -> u64 {
        self.column_bytes.iter().map(|&l| u64::from(l)).sum()
    }
}

pub fn data_file(perm: Permutation) -> String {
    format!("{}.data", perm.name())
}

pub fn meta_file(perm: Permutation) -> String {
    format!("{}.blocks", perm.name())
}

/// Writes one permutation from rows given in strictly increasing order.
pub struct PermutationWriter {
    data_path: PathBuf,
    meta_path: PathBuf,
    data: BufWriter<File>,
    meta: BufWriter<File>,
    current: Vec<Row>,
    pending: Vec<Vec<Row>>,
    offset: u64,
    rows: u64,
}

impl PermutationWriter {
    pub fn create(dir: &Path, perm: Permutation) -> Result<PermutationWriter> {
        let data_path = dir.join(data_file(perm));
        let meta_path = dir.join(meta_file(perm));
        Ok(PermutationWriter {
            data: BufWriter::with_capacity(1 << 20, File::create(&data_path).at(&data_path)?),
            meta: BufWriter::new(File::create(&meta_path).at(&meta_path)?),
            data_path,
            meta_path,
            current: Vec::with_capacity(BLOCK_ROWS),
            pending: Vec::new(),
            offset: 0,
            rows: 0,
        })
    }

    #[inline]
    pub fn push(&mut self, row: Row) -> Result<()> {
        debug_assert!(self.current.last().is_none_or(|last| *last < row));
        self.current.push(row);
        self.rows += 1;
        if self.current.len() == BLOCK_ROWS {
            self.pending.push(std::mem::replace(
                &mut self.current,
                Vec::with_capacity(BLOCK_ROWS),
            ));
            if self.pending.len() == PARALLEL_BLOCKS {
                self.write_pending()?;
            }
        }
        Ok(())
    }

    /// Appends many sorted rows, encoding blocks in parallel.
    pub fn push_all(&mut self, rows: &[Row]) -> Result<()> {
        rows.iter().try_for_each(|&r| self.push(r))
    }

    fn write_pending(&mut self) -> Result<()> {
        let encoded: Vec<[Vec<u8>; 4]> = self
            .pending
            .par_iter()
            .map(|rows| codec::encode(rows))
            .collect();
        for (rows, columns) in self.pending.drain(..).zip(encoded) {
            let meta = BlockMeta {
                first: rows[0],
                last: *rows.last().unwrap(),
                rows: rows.len() as u64,
                offset: self.offset,
                column_bytes: columns.each_ref().map(|c| c.len() as u32),
            };
            for column in &columns {
                self.data.write_all(column).at(&self.data_path)?;
            }
            self.offset += meta.byte_len();
            self.meta.write_all(&meta.to_bytes()).at(&self.meta_path)?;
        }
        Ok(())
    }

    /// Writes the last blocks; returns the number of rows written.
    pub fn finish(mut self) -> Result<u64> {
        if !self.current.is_empty() {
            self.pending.push(std::mem::take(&mut self.current));
        }
        self.write_pending()?;
        self.data.flush().at(&self.data_path)?;
        self.meta.flush().at(&self.meta_path)?;
        Ok(self.rows)
    }
}
