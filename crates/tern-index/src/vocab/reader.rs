use super::block::{BlockDecoder, DecodedBlock};
use super::{BLOCKS_FILE, DICTIONARY_FILE, FIRSTS_FILE, INDEX_FILE, MAGIC, RECORD};
use crate::error::{IndexError, IoContext, Result};
use memmap2::Mmap;
use std::collections::HashMap;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// Decoded blocks kept for repeated lookups (about 24 KiB of text each).
const CACHED_BLOCKS: usize = 512;

/// Read access to a vocabulary: index → key and key → index.
pub struct Vocabulary {
    dir: PathBuf,
    blocks: Mmap,
    decoder: BlockDecoder,
    dictionary_bytes: u64,
    index: Mmap,
    firsts: Mmap,
    entries: u64,
    block_count: usize,
    cache: Mutex<HashMap<usize, Arc<DecodedBlock>>>,
}

fn map(path: &Path) -> Result<Mmap> {
    let file = File::open(path).at(path)?;
    // SAFETY: index files are written once, renamed into place and never modified.
    unsafe { Mmap::map(&file) }.at(path)
}

impl Vocabulary {
    pub fn open(dir: &Path) -> Result<Vocabulary> {
        let index = map(&dir.join(INDEX_FILE))?;
        let corrupt = |reason: &str| IndexError::Corrupt {
            path: dir.join(INDEX_FILE),
            reason: reason.to_owned(),
        };
        if index.len() < 24 || &index[..8] != MAGIC {
            return Err(corrupt("bad header"));
        }
        let entries = u64::from_le_bytes(index[8..16].try_into().unwrap());
        let block_count = u64::from_le_bytes(index[16..24].try_into().unwrap()) as usize;
        if index.len() != 24 + (block_count + 1) * RECORD {
            return Err(corrupt("truncated block directory"));
        }
        let dictionary_path = dir.join(DICTIONARY_FILE);
        let dictionary = std::fs::read(&dictionary_path).at(&dictionary_path)?;
        Ok(Vocabulary {
            decoder: BlockDecoder::new(&dictionary),
            dictionary_bytes: dictionary.len() as u64,
            dir: dir.to_owned(),
            blocks: map(&dir.join(BLOCKS_FILE))?,
            firsts: map(&dir.join(FIRSTS_FILE))?,
            index,
            entries,
            block_count,
            cache: Mutex::new(HashMap::new()),
        })
    }

    pub fn len(&self) -> u64 {
        self.entries
    }

    pub fn is_empty(&self) -> bool {
        self.entries == 0
    }

    /// Bytes on disk.
    pub fn disk_bytes(&self) -> u64 {
        (self.blocks.len() + self.index.len() + self.firsts.len()) as u64 + self.dictionary_bytes
    }

    fn record(&self, block: usize) -> (u64, u64, u64) {
        let at = 24 + block * RECORD;
        let r = &self.index[at..at + RECORD];
        let field = |i: usize| u64::from_le_bytes(r[i * 8..i * 8 + 8].try_into().unwrap());
        (field(0), field(1), field(2))
    }

    /// A key that sorts after every key of the previous block and at or before
    /// this block's first key.
    fn separator(&self, block: usize) -> &[u8] {
        let (_, _, start) = self.record(block);
        let (_, _, end) = self.record(block + 1);
        &self.firsts[start as usize..end as usize]
    }

    /// The block holding entry `index`.
    fn block_of(&self, index: u64) -> usize {
        let (mut lo, mut hi) = (0, self.block_count);
        while lo + 1 < hi {
            let mid = (lo + hi) / 2;
            if self.record(mid).0 <= index {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        lo
    }

    fn decoded(&self, block: usize) -> Result<Arc<DecodedBlock>> {
        if let Some(hit) = self.cache.lock().unwrap().get(&block) {
            return Ok(hit.clone());
        }
        let (first, offset, _) = self.record(block);
        let (next_first, next_offset, _) = self.record(block + 1);
        let decoded = self
            .blocks
            .get(offset as usize..next_offset as usize)
            .and_then(|bytes| self.decoder.decode(bytes, (next_first - first) as usize))
            .ok_or_else(|| IndexError::Corrupt {
                path: self.dir.join(BLOCKS_FILE),
                reason: format!("block {block} does not decode"),
            })?;
        let decoded = Arc::new(decoded);
        let mut cache = self.cache.lock().unwrap();
        if cache.len() >= CACHED_BLOCKS {
            cache.clear();
        }
        cache.insert(block, decoded.clone());
        Ok(decoded)
    }

    /// The key of entry `index` (`index < len()`).
    pub fn key(&self, index: u64) -> Result<Vec<u8>> {
        if index >= self.entries {
            return Err(IndexError::Corrupt {
                path: self.dir.join(INDEX_FILE),
                reason: format!("vocabulary index {index} out of range"),
            });
        }
        let block = self.block_of(index);
        let decoded = self.decoded(block)?;
        Ok(decoded
            .key((index - self.record(block).0) as usize)
            .to_vec())
    }

    /// Keys of many entries at once: each block is decoded once, in order.
    pub fn keys(&self, indexes: &[u64]) -> Result<Vec<Vec<u8>>> {
        let mut order: Vec<usize> = (0..indexes.len()).collect();
        order.sort_unstable_by_key(|&i| indexes[i]);
        let mut out = vec![Vec::new(); indexes.len()];
        let mut current: Option<(usize, u64, u64, Arc<DecodedBlock>)> = None;
        for i in order {
            let index = indexes[i];
            let hit =
                matches!(&current, Some((_, first, end, _)) if (*first..*end).contains(&index));
            if !hit {
                if index >= self.entries {
                    return self.key(index).map(|_| Vec::new());
                }
                let block = self.block_of(index);
                let (first, _, _) = self.record(block);
                let (end, _, _) = self.record(block + 1);
                current = Some((block, first, end, self.decoded(block)?));
            }
            let (_, first, _, decoded) = current.as_ref().unwrap();
            out[i] = decoded.key((index - first) as usize).to_vec();
        }
        Ok(out)
    }

    /// The index of the first entry whose key is >= `key` (`len()` if none).
    pub fn lower_bound(&self, key: &[u8]) -> Result<u64> {
        if self.block_count == 0 {
            return Ok(0);
        }
        // Last block whose separator <= key.
        let (mut lo, mut hi) = (0, self.block_count);
        while lo < hi {
            let mid = (lo + hi) / 2;
            if self.separator(mid) <= key {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        if lo == 0 {
            return Ok(0);
        }
        let block = lo - 1;
        let decoded = self.decoded(block)?;
        Ok(self.record(block).0 + decoded.lower_bound(key) as u64)
    }

    /// The index of `key`, if it is in the vocabulary.
    pub fn find(&self, key: &[u8]) -> Result<Option<u64>> {
        let index = self.lower_bound(key)?;
        if index < self.entries && self.key(index)? == key {
            Ok(Some(index))
        } else {
            Ok(None)
        }
    }
}
