use super::block::{self, BlockEncoder, Dictionaries, FrontCoder};
use super::kinds::{KindRunsWriter, TermKind};
use super::{
    BLOCKS_FILE, DICTIONARY_FILE, FIRSTS_FILE, HEADER, INDEX_FILE, LONG_BLOCKS_FILE,
    LONG_INDEX_FILE, LONG_RECORD, MAGIC, RECORD,
};
use crate::error::{IoContext, Result};
use rayon::prelude::*;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

/// Key bytes of sealed blocks compressed together in parallel before being
/// written in order (64 main blocks; many more long blocks of one key).
const PARALLEL_RAW_BYTES: usize = 64 * block::MAIN_TARGET_RAW_BYTES;

/// A sealed block waiting for compression.
struct Pending {
    raw: Vec<u8>,
    entries: usize,
    /// Main blocks: the separator and the number of long keys before the block.
    separator: Vec<u8>,
    first_long: u64,
}

/// One section's blocks file and directory, written in order.
struct Section {
    encoder: BlockEncoder,
    blocks: BufWriter<File>,
    blocks_name: &'static str,
    index: BufWriter<File>,
    index_name: &'static str,
    coder: FrontCoder,
    /// Key bytes after which a block is sealed.
    target_raw_bytes: usize,
    pending: Vec<Pending>,
    pending_bytes: usize,
    /// Entries written and bytes of blocks written.
    written: u64,
    offset: u64,
    block_count: u64,
}

impl Section {
    fn write_pending(
        &mut self,
        dir: &Path,
        mut firsts: Option<(&mut BufWriter<File>, &mut u64)>,
    ) -> Result<()> {
        let per_thread = self
            .pending
            .len()
            .div_ceil(rayon::current_num_threads())
            .max(1);
        let encoder = &self.encoder;
        let compressed: Vec<Vec<u8>> = self
            .pending
            .par_chunks(per_thread)
            .flat_map_iter(|blocks| encoder.encode_all(blocks.iter().map(|b| b.raw.as_slice())))
            .collect();
        self.pending_bytes = 0;
        for (block, bytes) in self.pending.drain(..).zip(compressed) {
            let mut record = Vec::with_capacity(RECORD);
            record.extend_from_slice(&self.written.to_le_bytes());
            record.extend_from_slice(&self.offset.to_le_bytes());
            if let Some((firsts, firsts_offset)) = firsts.as_mut() {
                record.extend_from_slice(&firsts_offset.to_le_bytes());
                record.extend_from_slice(&block.first_long.to_le_bytes());
                firsts
                    .write_all(&block.separator)
                    .at(dir.join(FIRSTS_FILE))?;
                **firsts_offset += block.separator.len() as u64;
            }
            self.index
                .write_all(&record)
                .at(dir.join(self.index_name))?;
            self.blocks
                .write_all(&bytes)
                .at(dir.join(self.blocks_name))?;
            self.offset += bytes.len() as u64;
            self.written += block.entries as u64;
            self.block_count += 1;
        }
        Ok(())
    }
}

/// Writes a vocabulary from keys given in strictly increasing order.
pub struct VocabWriter {
    dir: PathBuf,
    main: Section,
    long: Section,
    firsts: BufWriter<File>,
    firsts_offset: u64,
    entries: u64,
    long_entries: u64,
    /// The last key pushed, for the next block's separator.
    previous: Vec<u8>,
    /// Separator and first long key of the main block being filled.
    separator: Vec<u8>,
    first_long: u64,
    /// The terms' kinds, for sorting by ID (`kinds`).
    kinds: KindRunsWriter,
}

impl VocabWriter {
    /// `dictionaries` are shared by all blocks; make them with
    /// [`block::dictionaries`] from a sample of the sorted keys.
    pub fn create(dir: &Path, dictionaries: &Dictionaries) -> Result<VocabWriter> {
        let dictionary_path = dir.join(DICTIONARY_FILE);
        std::fs::write(&dictionary_path, dictionaries.to_bytes()).at(&dictionary_path)?;
        let open = |name: &str| {
            let path = dir.join(name);
            File::create(&path).map(BufWriter::new).at(path)
        };
        let mut index = open(INDEX_FILE)?;
        // Header with placeholder counts, rewritten by `finish`.
        index
            .write_all(&[MAGIC.as_slice(), &[0; HEADER - 8]].concat())
            .at(dir.join(INDEX_FILE))?;
        let section =
            |encoder, target_raw_bytes, blocks_name, index, index_name| -> Result<Section> {
                Ok(Section {
                    target_raw_bytes,
                    pending_bytes: 0,
                    encoder,
                    blocks: open(blocks_name)?,
                    blocks_name,
                    index,
                    index_name,
                    coder: FrontCoder::default(),
                    pending: Vec::new(),
                    written: 0,
                    offset: 0,
                    block_count: 0,
                })
            };
        Ok(VocabWriter {
            dir: dir.to_owned(),
            main: section(
                BlockEncoder::main(&dictionaries.main),
                block::MAIN_TARGET_RAW_BYTES,
                BLOCKS_FILE,
                index,
                INDEX_FILE,
            )?,
            long: {
                let (encoder, target_raw_bytes) = match dictionaries.long_code() {
                    Some(code) => (
                        BlockEncoder::Tokens(code),
                        block::TOKEN_LONG_TARGET_RAW_BYTES,
                    ),
                    None => (
                        BlockEncoder::long(&dictionaries.long),
                        block::LONG_TARGET_RAW_BYTES,
                    ),
                };
                section(
                    encoder,
                    target_raw_bytes,
                    LONG_BLOCKS_FILE,
                    open(LONG_INDEX_FILE)?,
                    LONG_INDEX_FILE,
                )?
            },
            firsts: open(FIRSTS_FILE)?,
            firsts_offset: 0,
            entries: 0,
            long_entries: 0,
            previous: Vec::new(),
            separator: Vec::new(),
            first_long: 0,
            kinds: KindRunsWriter::create(dir)?,
        })
    }

    /// Appends the next key; its vocabulary index is the number of keys before it.
    pub fn push(&mut self, key: Vec<u8>) -> Result<u64> {
        debug_assert!(self.entries == 0 || self.previous < key);
        if self.main.coder.entries() == 0 {
            self.separator = separator(&self.previous, &key, self.entries == 0).to_vec();
            self.first_long = self.long_entries;
        }
        self.kinds.push(self.entries, TermKind::of_key(&key))?;
        let (stored, long) = block::stored(&key);
        self.main.coder.push(stored, long);
        if long {
            self.long.coder.push(&key, false);
            self.long_entries += 1;
            if self.long.coder.key_bytes() >= self.long.target_raw_bytes {
                self.seal_long()?;
            }
        }
        if self.main.coder.key_bytes() >= self.main.target_raw_bytes
            || self.main.coder.entries() >= block::MAX_ENTRIES
        {
            self.seal_main()?;
        }
        self.previous = key;
        self.entries += 1;
        Ok(self.entries - 1)
    }

    fn seal_main(&mut self) -> Result<()> {
        if self.main.coder.entries() > 0 {
            let entries = self.main.coder.entries();
            self.main.pending_bytes += self.main.coder.key_bytes();
            self.main.pending.push(Pending {
                raw: self.main.coder.take(),
                entries,
                separator: std::mem::take(&mut self.separator),
                first_long: self.first_long,
            });
        }
        if self.main.pending_bytes >= PARALLEL_RAW_BYTES {
            self.main
                .write_pending(&self.dir, Some((&mut self.firsts, &mut self.firsts_offset)))?;
        }
        Ok(())
    }

    fn seal_long(&mut self) -> Result<()> {
        if self.long.coder.entries() > 0 {
            let entries = self.long.coder.entries();
            self.long.pending_bytes += self.long.coder.key_bytes();
            self.long.pending.push(Pending {
                raw: self.long.coder.take(),
                entries,
                separator: Vec::new(),
                first_long: 0,
            });
        }
        if self.long.pending_bytes >= PARALLEL_RAW_BYTES {
            self.long.write_pending(&self.dir, None)?;
        }
        Ok(())
    }

    /// Writes the remaining blocks and the directories; returns the number of entries.
    pub fn finish(mut self) -> Result<u64> {
        self.seal_main()?;
        self.seal_long()?;
        self.main
            .write_pending(&self.dir, Some((&mut self.firsts, &mut self.firsts_offset)))?;
        self.long.write_pending(&self.dir, None)?;
        let sentinel = [
            self.entries,
            self.main.offset,
            self.firsts_offset,
            self.long_entries,
        ];
        self.main
            .index
            .write_all(&sentinel.map(u64::to_le_bytes).concat())
            .at(self.dir.join(INDEX_FILE))?;
        debug_assert_eq!(self.long.written, self.long_entries);
        let long_sentinel = [self.long_entries, self.long.offset];
        self.long
            .index
            .write_all(&long_sentinel.map(u64::to_le_bytes).concat())
            .at(self.dir.join(LONG_INDEX_FILE))?;
        for (file, name) in [
            (&mut self.main.blocks, BLOCKS_FILE),
            (&mut self.long.blocks, LONG_BLOCKS_FILE),
            (&mut self.long.index, LONG_INDEX_FILE),
            (&mut self.firsts, FIRSTS_FILE),
            (&mut self.main.index, INDEX_FILE),
        ] {
            file.flush().at(self.dir.join(name))?;
        }
        let index_path = self.dir.join(INDEX_FILE);
        let mut index = self
            .main
            .index
            .into_inner()
            .map_err(|e| e.into_error())
            .at(&index_path)?;
        use std::io::{Seek, SeekFrom};
        index
            .seek(SeekFrom::Start(MAGIC.len() as u64))
            .at(&index_path)?;
        let counts = [
            self.entries,
            self.main.block_count,
            self.long_entries,
            self.long.block_count,
        ];
        index
            .write_all(&counts.map(u64::to_le_bytes).concat())
            .at(&index_path)?;
        debug_assert_eq!(RECORD, 32);
        debug_assert_eq!(LONG_RECORD, 16);
        self.kinds.finish()?;
        Ok(self.entries)
    }
}

/// The shortest prefix of `first` that sorts after `previous_last`: binary search
/// over separators finds the same block as over first keys, for less space.
fn separator<'a>(previous_last: &[u8], first: &'a [u8], is_first_block: bool) -> &'a [u8] {
    if is_first_block {
        return &first[..0];
    }
    let shared = previous_last
        .iter()
        .zip(first)
        .take_while(|(a, b)| a == b)
        .count();
    &first[..(shared + 1).min(first.len())]
}
