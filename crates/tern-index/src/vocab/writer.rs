use super::{block, BLOCKS_FILE, DICTIONARY_FILE, FIRSTS_FILE, INDEX_FILE, MAGIC};
use crate::error::{IoContext, Result};
use rayon::prelude::*;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

/// Blocks compressed together in parallel before being written in order.
const PARALLEL_BLOCKS: usize = 64;

/// Writes a vocabulary from keys given in strictly increasing order.
pub struct VocabWriter {
    dir: PathBuf,
    blocks: BufWriter<File>,
    index: BufWriter<File>,
    firsts: BufWriter<File>,
    encoder: block::BlockEncoder,
    current: Vec<Vec<u8>>,
    current_bytes: usize,
    pending: Vec<Vec<Vec<u8>>>,
    entries: u64,
    written_entries: u64,
    /// Last key of the previous block, for the next block's separator.
    previous_last: Vec<u8>,
    blocks_offset: u64,
    firsts_offset: u64,
    block_count: u64,
}

impl VocabWriter {
    /// `dictionary` is shared by all blocks; make it with [`block::dictionary`]
    /// from a sample of the sorted keys.
    pub fn create(dir: &Path, dictionary: &[u8]) -> Result<VocabWriter> {
        let dictionary_path = dir.join(DICTIONARY_FILE);
        std::fs::write(&dictionary_path, dictionary).at(&dictionary_path)?;
        let open = |name: &str| {
            let path = dir.join(name);
            File::create(&path).map(BufWriter::new).at(path)
        };
        let mut index = open(INDEX_FILE)?;
        // Header with placeholder counts, rewritten by `finish`.
        index
            .write_all(&[MAGIC.as_slice(), &[0; 16]].concat())
            .at(dir.join(INDEX_FILE))?;
        Ok(VocabWriter {
            dir: dir.to_owned(),
            encoder: block::BlockEncoder::new(dictionary),
            blocks: open(BLOCKS_FILE)?,
            index,
            firsts: open(FIRSTS_FILE)?,
            current: Vec::new(),
            current_bytes: 0,
            pending: Vec::new(),
            entries: 0,
            written_entries: 0,
            previous_last: Vec::new(),
            blocks_offset: 0,
            firsts_offset: 0,
            block_count: 0,
        })
    }

    /// Appends the next key; its vocabulary index is the number of keys before it.
    pub fn push(&mut self, key: Vec<u8>) -> Result<u64> {
        debug_assert!(self.current.last().is_none_or(|last| *last < key));
        self.current_bytes += key.len();
        self.current.push(key);
        if self.current_bytes >= block::TARGET_RAW_BYTES || self.current.len() >= block::MAX_ENTRIES
        {
            self.seal_block()?;
        }
        self.entries += 1;
        Ok(self.entries - 1)
    }

    fn seal_block(&mut self) -> Result<()> {
        if !self.current.is_empty() {
            self.pending.push(std::mem::take(&mut self.current));
            self.current_bytes = 0;
        }
        if self.pending.len() >= PARALLEL_BLOCKS {
            self.write_pending()?;
        }
        Ok(())
    }

    fn write_pending(&mut self) -> Result<()> {
        let per_thread = self
            .pending
            .len()
            .div_ceil(rayon::current_num_threads())
            .max(1);
        let compressed: Vec<Vec<u8>> = self
            .pending
            .par_chunks(per_thread)
            .flat_map_iter(|blocks| self.encoder.encode_all(blocks))
            .collect();
        for (keys, bytes) in self.pending.drain(..).zip(compressed) {
            self.index
                .write_all(&record(
                    self.written_entries,
                    self.blocks_offset,
                    self.firsts_offset,
                ))
                .at(self.dir.join(INDEX_FILE))?;
            self.blocks
                .write_all(&bytes)
                .at(self.dir.join(BLOCKS_FILE))?;
            let separator = separator(&self.previous_last, &keys[0]);
            self.firsts
                .write_all(separator)
                .at(self.dir.join(FIRSTS_FILE))?;
            self.blocks_offset += bytes.len() as u64;
            self.firsts_offset += separator.len() as u64;
            self.previous_last = keys.last().cloned().unwrap_or_default();
            self.written_entries += keys.len() as u64;
            self.block_count += 1;
        }
        Ok(())
    }

    /// Writes the remaining blocks and the directory; returns the number of entries.
    pub fn finish(mut self) -> Result<u64> {
        self.seal_block()?;
        self.write_pending()?;
        let index_path = self.dir.join(INDEX_FILE);
        self.index
            .write_all(&record(
                self.entries,
                self.blocks_offset,
                self.firsts_offset,
            ))
            .at(&index_path)?;
        for (file, name) in [
            (&mut self.blocks, BLOCKS_FILE),
            (&mut self.firsts, FIRSTS_FILE),
            (&mut self.index, INDEX_FILE),
        ] {
            file.flush().at(self.dir.join(name))?;
        }
        let mut index = self
            .index
            .into_inner()
            .map_err(|e| e.into_error())
            .at(&index_path)?;
        use std::io::{Seek, SeekFrom};
        index
            .seek(SeekFrom::Start(MAGIC.len() as u64))
            .at(&index_path)?;
        index
            .write_all(&[self.entries.to_le_bytes(), self.block_count.to_le_bytes()].concat())
            .at(&index_path)?;
        Ok(self.entries)
    }
}

/// The shortest prefix of `first` that sorts after `previous_last`: binary search
/// over separators finds the same block as over first keys, for less space.
fn separator<'a>(previous_last: &[u8], first: &'a [u8]) -> &'a [u8] {
    if previous_last.is_empty() {
        return &first[..0];
    }
    let shared = previous_last
        .iter()
        .zip(first)
        .take_while(|(a, b)| a == b)
        .count();
    &first[..(shared + 1).min(first.len())]
}

fn record(first_entry: u64, block_offset: u64, first_key_offset: u64) -> [u8; 24] {
    let mut r = [0u8; 24];
    r[..8].copy_from_slice(&first_entry.to_le_bytes());
    r[8..16].copy_from_slice(&block_offset.to_le_bytes());
    r[16..].copy_from_slice(&first_key_offset.to_le_bytes());
    r
}
