//! Writing a vocabulary from sorted keys.
//!
//! Keys are front-coded into blocks on the caller's thread (during a load, the
//! thread merging the sorted runs); sealed blocks go in batches to one thread
//! per section that compresses them on all cores and writes them in order. The
//! merge goes on meanwhile: at 100M triples, compressing the main section at
//! zstd level 9 and the long one with the token code is as much work as the
//! merge itself.

use super::block::{self, BlockEncoder, Dictionaries, FrontCoder};
use super::{
    BLOCKS_FILE, DICTIONARY_FILE, FIRSTS_FILE, HEADER, INDEX_FILE, LONG_BLOCKS_FILE,
    LONG_INDEX_FILE, LONG_RECORD, MAGIC, RECORD,
};
use crate::error::{IoContext, Result};
use rayon::prelude::*;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::mpsc::{sync_channel, SyncSender};
use std::thread::JoinHandle;

/// Blocks compressed together in parallel before being written in order.
const PARALLEL_BLOCKS: usize = 64;
/// Batches of sealed blocks waiting for a section's thread.
const QUEUED_BATCHES: usize = 2;

/// A sealed block waiting for compression.
struct Pending {
    raw: Vec<u8>,
    entries: usize,
    /// Main blocks: the separator and the number of long keys before the block.
    separator: Vec<u8>,
    first_long: u64,
}

/// One section's blocks file and directory, written in order by its thread.
struct Section {
    encoder: BlockEncoder,
    blocks: BufWriter<File>,
    blocks_name: &'static str,
    index: BufWriter<File>,
    index_name: &'static str,
    /// The main section's separators (`vocab.firsts`) and bytes written there.
    firsts: Option<(BufWriter<File>, u64)>,
    /// Entries written and bytes of blocks written.
    written: u64,
    offset: u64,
    block_count: u64,
}

impl Section {
    fn write(&mut self, dir: &Path, pending: Vec<Pending>) -> Result<()> {
        let per_thread = pending.len().div_ceil(rayon::current_num_threads()).max(1);
        let encoder = &self.encoder;
        let compressed: Vec<Vec<u8>> = pending
            .par_chunks(per_thread)
            .flat_map_iter(|blocks| encoder.encode_all(blocks.iter().map(|b| b.raw.as_slice())))
            .collect();
        for (block, bytes) in pending.into_iter().zip(compressed) {
            let mut record = Vec::with_capacity(RECORD);
            record.extend_from_slice(&self.written.to_le_bytes());
            record.extend_from_slice(&self.offset.to_le_bytes());
            if let Some((firsts, firsts_offset)) = self.firsts.as_mut() {
                record.extend_from_slice(&firsts_offset.to_le_bytes());
                record.extend_from_slice(&block.first_long.to_le_bytes());
                firsts
                    .write_all(&block.separator)
                    .at(dir.join(FIRSTS_FILE))?;
                *firsts_offset += block.separator.len() as u64;
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

/// A section's blocks being filled on the caller's thread, and the thread
/// that compresses and writes them.
struct SectionFeed {
    coder: FrontCoder,
    pending: Vec<Pending>,
    sender: Option<SyncSender<Vec<Pending>>>,
    thread: Option<JoinHandle<Result<Section>>>,
}

impl SectionFeed {
    fn spawn(mut section: Section, dir: &Path) -> SectionFeed {
        let (sender, receiver) = sync_channel::<Vec<Pending>>(QUEUED_BATCHES);
        let dir = dir.to_owned();
        let thread = std::thread::spawn(move || {
            for batch in receiver {
                section.write(&dir, batch)?;
            }
            Ok(section)
        });
        SectionFeed {
            coder: FrontCoder::default(),
            pending: Vec::new(),
            sender: Some(sender),
            thread: Some(thread),
        }
    }

    fn seal(&mut self, separator: Vec<u8>, first_long: u64) -> Result<()> {
        if self.coder.entries() > 0 {
            let entries = self.coder.entries();
            self.pending.push(Pending {
                raw: self.coder.take(),
                entries,
                separator,
                first_long,
            });
        }
        if self.pending.len() >= PARALLEL_BLOCKS {
            self.send()?;
        }
        Ok(())
    }

    fn send(&mut self) -> Result<()> {
        let batch = std::mem::take(&mut self.pending);
        let sent = self.sender.as_ref().is_some_and(|s| s.send(batch).is_ok());
        if sent {
            Ok(())
        } else {
            // The thread stopped on an error: that error.
            self.join().map(|_| ())
        }
    }

    fn join(&mut self) -> Result<Section> {
        self.sender = None;
        match self.thread.take().map(JoinHandle::join) {
            Some(Ok(result)) => result,
            Some(Err(panic)) => std::panic::resume_unwind(panic),
            None => Err(std::io::Error::other(
                "vocabulary section writer already stopped",
            ))
            .at(PathBuf::new()),
        }
    }

    fn finish(mut self) -> Result<Section> {
        if !self.pending.is_empty() {
            self.send()?;
        }
        self.join()
    }
}

/// Writes a vocabulary from keys given in strictly increasing order.
pub struct VocabWriter {
    dir: PathBuf,
    main: SectionFeed,
    long: SectionFeed,
    entries: u64,
    long_entries: u64,
    /// The last key pushed, for the next block's separator.
    previous: Vec<u8>,
    /// Separator and first long key of the main block being filled.
    separator: Vec<u8>,
    first_long: u64,
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
        let section = |encoder, blocks_name, index, index_name, firsts| -> Result<Section> {
            Ok(Section {
                encoder,
                blocks: open(blocks_name)?,
                blocks_name,
                index,
                index_name,
                firsts,
                written: 0,
                offset: 0,
                block_count: 0,
            })
        };
        let main = section(
            BlockEncoder::new(&dictionaries.main, block::MAIN_LEVEL),
            BLOCKS_FILE,
            index,
            INDEX_FILE,
            Some((open(FIRSTS_FILE)?, 0)),
        )?;
        let long = section(
            match dictionaries.long_code() {
                Some(code) => BlockEncoder::Tokens(code),
                None => BlockEncoder::new(&dictionaries.long, block::LONG_LEVEL),
            },
            LONG_BLOCKS_FILE,
            open(LONG_INDEX_FILE)?,
            LONG_INDEX_FILE,
            None,
        )?;
        Ok(VocabWriter {
            dir: dir.to_owned(),
            main: SectionFeed::spawn(main, dir),
            long: SectionFeed::spawn(long, dir),
            entries: 0,
            long_entries: 0,
            previous: Vec::new(),
            separator: Vec::new(),
            first_long: 0,
        })
    }

    /// Appends the next key; its vocabulary index is the number of keys before it.
    pub fn push(&mut self, key: Vec<u8>) -> Result<u64> {
        debug_assert!(self.entries == 0 || self.previous < key);
        if self.main.coder.entries() == 0 {
            self.separator = separator(&self.previous, &key, self.entries == 0).to_vec();
            self.first_long = self.long_entries;
        }
        let (stored, long) = block::stored(&key);
        self.main.coder.push(stored, long);
        if long {
            self.long.coder.push(&key, false);
            self.long_entries += 1;
            if self.long.coder.key_bytes() >= block::LONG_TARGET_RAW_BYTES {
                self.long.seal(Vec::new(), 0)?;
            }
        }
        if self.main.coder.key_bytes() >= block::MAIN_TARGET_RAW_BYTES
            || self.main.coder.entries() >= block::MAX_ENTRIES
        {
            self.seal_main()?;
        }
        self.previous = key;
        self.entries += 1;
        Ok(self.entries - 1)
    }

    fn seal_main(&mut self) -> Result<()> {
        let separator = std::mem::take(&mut self.separator);
        self.main.seal(separator, self.first_long)
    }

    /// Writes the remaining blocks and the directories; returns the number of entries.
    pub fn finish(mut self) -> Result<u64> {
        self.seal_main()?;
        self.long.seal(Vec::new(), 0)?;
        let mut main = self.main.finish()?;
        let mut long = self.long.finish()?;
        let (mut firsts, firsts_offset) = main.firsts.take().expect("the main section's firsts");
        let sentinel = [self.entries, main.offset, firsts_offset, self.long_entries];
        main.index
            .write_all(&sentinel.map(u64::to_le_bytes).concat())
            .at(self.dir.join(INDEX_FILE))?;
        debug_assert_eq!(long.written, self.long_entries);
        let long_sentinel = [self.long_entries, long.offset];
        long.index
            .write_all(&long_sentinel.map(u64::to_le_bytes).concat())
            .at(self.dir.join(LONG_INDEX_FILE))?;
        for (file, name) in [
            (&mut main.blocks, BLOCKS_FILE),
            (&mut long.blocks, LONG_BLOCKS_FILE),
            (&mut long.index, LONG_INDEX_FILE),
            (&mut firsts, FIRSTS_FILE),
            (&mut main.index, INDEX_FILE),
        ] {
            file.flush().at(self.dir.join(name))?;
        }
        let index_path = self.dir.join(INDEX_FILE);
        let mut index = main
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
            main.block_count,
            self.long_entries,
            long.block_count,
        ];
        index
            .write_all(&counts.map(u64::to_le_bytes).concat())
            .at(&index_path)?;
        debug_assert_eq!(RECORD, 32);
        debug_assert_eq!(LONG_RECORD, 16);
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
